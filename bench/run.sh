#!/usr/bin/env bash
# Builds dmlc (Release) and runs the CPU benchmark; where /usr/bin/python3
# has NumPy, runs the same workloads through NumPy and prints dmlc's
# speed-up. Arguments go to bench_cpu (and --quick to NumPy too):
#   bash bench/run.sh [--quick] [--threads N] [--device cpu|reference]
# DMLC_BENCH_BUILD picks the build directory (default: build-bench).
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=${DMLC_BENCH_BUILD:-$root/build-bench}

cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build "$build" -j"$(nproc)" --target bench_cpu >/dev/null

tsv=$(mktemp)
trap 'rm -f "$tsv"' EXIT

echo "dmlc bench: $(uname -m), $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ //'), $(nproc) online cores"
"$build/bin/bench_cpu" --tsv "$tsv" "$@"

if /usr/bin/python3 -c 'import numpy' 2>/dev/null; then
  /usr/bin/python3 "$root/bench/numpy_bench.py" --dmlc "$tsv" "$@"
else
  echo "no NumPy for /usr/bin/python3: skipping the comparison"
fi
