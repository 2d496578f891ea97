#!/usr/bin/env bash
# Installs the Debian packages dmlc needs (only those missing; silent when
# all are present), then configures and builds into build/ (or $DMLC_BUILD).
set -euo pipefail
cd "$(dirname "$0")/.."

packages=(
  build-essential cmake pkg-config git
  llvm-19-dev llvm-19-tools clang-19 libclang-rt-19-dev
  spirv-tools spirv-headers
  libvulkan-dev mesa-vulkan-drivers vulkan-validationlayers
  check libsubunit-dev
  libprotobuf-c-dev protobuf-c-compiler libonnx-testdata libonnx-dev protobuf-compiler python3-onnx
  python3 python3-numpy
  graphviz qemu-user gcc-aarch64-linux-gnu libc6-dev-arm64-cross
)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "setup: installing ${missing[*]}"
  sudo_cmd=()
  [ "$(id -u)" -eq 0 ] || sudo_cmd=(sudo)
  export DEBIAN_FRONTEND=noninteractive
  "${sudo_cmd[@]}" apt-get update -qq
  "${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

build=${DMLC_BUILD:-build}
cmake -S . -B "$build" -DCMAKE_BUILD_TYPE="${DMLC_BUILD_TYPE:-RelWithDebInfo}" ${DMLC_CMAKE_ARGS:-} >/dev/null
cmake --build "$build" -j "$(nproc)" -- --no-print-directory >/dev/null || {
  # Show the errors if the quiet build failed.
  cmake --build "$build" -j 1
  exit 1
}
