#!/usr/bin/env bash
# Builds dmlc (Release) and runs the CPU benchmark; where /usr/bin/python3
# has NumPy, runs the same workloads through NumPy and prints dmlc's
# speed-up; where a Vulkan device exists, runs the workloads on it too
# (bench_vulkan: kernel times from Vulkan timestamps). Arguments go to
# bench_cpu (and --quick to NumPy, bench_aot and bench_vulkan too); bench_aot
# compares ahead-of-time objects with the JIT:
#   bash bench/run.sh [--quick] [--threads N] [--device cpu|reference]
# DMLC_BENCH_BUILD picks the build directory (default: build-bench).
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=${DMLC_BENCH_BUILD:-$root/build-bench}

# The peer, hand-scheduled Halide 14 (bench/peers): installed here, never
# by scripts/setup.sh.
if ! dpkg -s libhalide14-0-dev >/dev/null 2>&1; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
    apt-get install -y libhalide14-0-dev >/dev/null 2>&1 ||
      { apt-get update >/dev/null 2>&1 && apt-get install -y libhalide14-0-dev >/dev/null 2>&1; } ||
      echo "could not install libhalide14-0-dev: no Halide peer"
  else
    echo "libhalide14-0-dev is not installed (run as root to install it): no Halide peer"
  fi
fi
cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=Release >/dev/null
# dmlc itself too: the Vulkan check below asks `dmlc devices`.
cmake --build "$build" -j"$(nproc)" --target bench_cpu bench_aot dmlc_tool >/dev/null
have_vulkan=0
if cmake --build "$build" -j"$(nproc)" --target bench_vulkan >/dev/null 2>&1; then
  have_vulkan=1
fi

tsv=$(mktemp)
trap 'rm -f "$tsv"' EXIT

echo "dmlc bench: $(uname -m), $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ //'), $(nproc) online cores"
"$build/bin/bench_cpu" --tsv "$tsv" "$@"

if /usr/bin/python3 -c 'import numpy' 2>/dev/null; then
  /usr/bin/python3 "$root/bench/numpy_bench.py" --dmlc "$tsv" "$@"
else
  echo "no NumPy for /usr/bin/python3: skipping the comparison"
fi

quick=()
for arg in "$@"; do
  if [ "$arg" = --quick ]; then quick=(--quick); fi
done

echo
echo "dmlc bench, ahead-of-time objects against the JIT:"
"$build/bin/bench_aot" "${quick[@]+"${quick[@]}"}"
start=$(date +%s%N)
"$build/bin/dmlc" compile "$root/examples/hardmax.dmlir" -o "$tsv.o"
end=$(date +%s%N)
echo "dmlc compile --emit=obj examples/hardmax.dmlir: $(((end - start) / 1000000)) ms for the whole process, $(stat -c %s "$tsv.o") bytes"
rm -f "$tsv.o"
if cmake --build "$build" -j"$(nproc)" --target bench_halide >/dev/null 2>&1; then
  echo
  echo "dmlc bench, against the Halide peer:"
  "$build/bin/bench_halide" "${quick[@]+"${quick[@]}"}"
else
  echo "no bench_halide (Halide 14 not found): skipping the peer"
fi
if [ $have_vulkan -eq 0 ]; then
  echo "no bench_vulkan (built with -DDMLC_VULKAN=OFF): skipping Vulkan"
elif ! "$build/bin/dmlc" devices | grep -Eq '^vulkan +available'; then
  echo "no Vulkan device: skipping Vulkan ($("$build/bin/dmlc" devices | grep '^vulkan'))"
else
  echo
  echo "dmlc bench, Vulkan:"
  "$build/bin/bench_vulkan" "${quick[@]+"${quick[@]}"}"
fi
