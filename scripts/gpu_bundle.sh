#!/usr/bin/env bash
# Packs what scripts/gpu_check.sh runs on a lent GPU machine (the `device`
# tool's `run`: a bare Ubuntu image with NVIDIA's driver, no Debian
# packages, nothing to download): the Vulkan test binaries, dmlc,
# bench_vulkan, libdmlc, libLLVM 19, the Debian libraries such a machine may
# lack (gpu_check.sh drops those it has), the Khronos validation layer, and
# Debian's Vulkan loader and GL dispatch packages. Writes .dev/bundle.tar.xz
# (about 53 MB: the device tool carries 64 MiB at most) and .gl/*.deb; add
# both to .git/info/exclude, then from the device tool:
#   run: bash scripts/gpu_check.sh        carry: [".dev", ".gl"]
# DMLC_GPU_BUILD picks the (Release) build directory, default build-bench.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=${DMLC_GPU_BUILD:-$root/build-bench}
cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build "$build" -j"$(nproc)" --target test_conformance test_vulkan test_device \
  bench_vulkan dmlc_tool >/dev/null
stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
mkdir -p "$stage"/{bin,lib,sys,layer} "$root/.dev" "$root/.gl"
for b in test_conformance test_vulkan test_device bench_vulkan dmlc; do
  cp "$build/bin/$b" "$stage/bin/"
done
strip --strip-unneeded "$stage"/bin/*
cp -L "$build/lib/libdmlc.so.0" "$stage/lib/"
# Every library the binaries need but glibc's own and libdmlc; libLLVM to
# lib/ (always carried), the rest to sys/ (carried where missing).
ldd "$stage"/bin/* "$stage/lib/libdmlc.so.0" | awk '/=> \//{print $3}' | sort -u |
  while read -r l; do
    case $(basename "$l") in
      libc.so.* | libm.so.* | libdmlc.so.* | ld-linux*) ;;
      libLLVM*) cp -L "$l" "$stage/lib/" ;;
      *) cp -L "$l" "$stage/sys/" ;;
    esac
  done
cp -L /usr/lib/x86_64-linux-gnu/libvulkan.so.1 "$stage/sys/"
cp /usr/lib/x86_64-linux-gnu/libVkLayer_khronos_validation.so "$stage/layer/"
sed 's#"library_path": *"[^"]*"#"library_path": "./libVkLayer_khronos_validation.so"#' \
  /usr/share/vulkan/explicit_layer.d/VkLayer_khronos_validation.json \
  >"$stage/layer/VkLayer_khronos_validation.json"
(cd "$stage" && tar -cf - . | xz -T"$(nproc)" -6 >"$root/.dev/bundle.tar.xz")
o='-oAPT::Architecture=amd64 -oAPT::Architectures=amd64 -oDir::State::Lists=/tmp/amd64'
mkdir -p /tmp/amd64/partial
# shellcheck disable=SC2086
apt-get $o update >/dev/null 2>&1
# shellcheck disable=SC2086
(cd "$root/.gl" && apt-get $o download libvulkan1 libegl1 libglvnd0 libopengl0 libgl1 libglx0 \
  libgles2 >/dev/null 2>&1)
ls -la "$root/.dev/bundle.tar.xz"
