#!/usr/bin/env bash
# Builds the libFuzzer targets of tests/fuzz with clang-19, AddressSanitizer
# and UBSan (in build-fuzz/ or $DMLC_FUZZ_BUILD) and runs each for SECONDS of
# one core (default 60) on a copy of its seed corpus (tests/fuzz/corpus/NAME; what a
# run adds stays in the build directory). Any crash, leak, timeout (an input
# running over 25 s), out-of-memory (over 2.5 GB) or sanitizer report fails
# the script; the input is saved as build-fuzz/artifacts/NAME/crash-... and
# belongs in tests/fuzz/corpus/NAME once fixed (docs/reliability.md).
# DMLC_FUZZ_TARGETS="npy onnx" runs a subset.
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-60}
build=${DMLC_FUZZ_BUILD:-build-fuzz}
targets=${DMLC_FUZZ_TARGETS:-ir_parse descriptor npy onnx execute}
CC=${DMLC_FUZZ_CC:-clang-19} CXX=${DMLC_FUZZ_CXX:-clang++-19} \
  cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DDMLC_SANITIZE=ON -DDMLC_FUZZ=ON \
  -DDMLC_VULKAN=OFF >/dev/null
cmake --build "$build" -j"$(nproc)" --target fuzz_all >/dev/null || {
  cmake --build "$build" -j1 --target fuzz_all
  exit 1
}
export ASAN_OPTIONS=detect_leaks=1:allocator_may_return_null=1 UBSAN_OPTIONS=print_stacktrace=1
# The targets run side by side, one a core ($(nproc) at a time), each for
# SECONDS of one core. A last round with fewer targets than cores splits
# them: each target there runs as several processes at once on its corpus
# (libFuzzer reloads what the others add), for SECONDS of cores in all, so
# five targets on 2 cores take two and a half rounds, not 3, with no
# core idle.
fuzz_one() {
  local t=$1 procs=$2 work="$build/corpus/$1" artifacts="$build/artifacts/$1" start p
  local secs=$((seconds / procs)) status=0 runs=0 n
  mkdir -p "$work" "$artifacts"
  start=$(date +%s)
  for ((p = 0; p < procs; p++)); do
    "$build/bin/fuzz_$t" -max_total_time="$secs" -timeout=25 -rss_limit_mb=2560 \
      -max_len=16384 -print_final_stats=1 -artifact_prefix="$artifacts/" \
      "$work" "tests/fuzz/corpus/$t" >"$build/fuzz_$t.$p.log" 2>&1 &
  done
  for ((p = 0; p < procs; p++)); do
    wait -n || status=1
  done
  for ((p = 0; p < procs; p++)); do
    n=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$build/fuzz_$t.$p.log" |
      grep -o '[0-9]*$' || true)
    runs=$((runs + ${n:-0}))
  done
  if [ "$status" -eq 0 ]; then
    echo "fuzz: $t: $runs runs in $(($(date +%s) - start)) s ($procs process(es)), no findings" \
      >"$build/fuzz_$t.result"
  else
    {
      for ((p = 0; p < procs; p++)); do
        echo "fuzz: $t FAILED; the end of $build/fuzz_$t.$p.log:"
        tail -n 60 "$build/fuzz_$t.$p.log"
      done
      ls "$artifacts"
    } >"$build/fuzz_$t.result"
    return 1
  fi
}
jobs_max=$(nproc)
read -ra list <<<"$targets"
count=${#list[@]}
last=$((count % jobs_max)) # targets in a last, short round
declare -A pids=()
failed=()
i=0
for t in $targets; do
  procs=1
  if [ "$last" -gt 0 ] && [ "$i" -ge $((count - last)) ]; then
    procs=$((jobs_max / last))
  fi
  while [ "$(jobs -rp | wc -l)" -gt $((jobs_max - procs)) ]; do
    wait -n || true
  done
  rm -f "$build/fuzz_$t.result"
  fuzz_one "$t" "$procs" &
  pids[$t]=$!
  i=$((i + 1))
done
for t in $targets; do
  wait "${pids[$t]}" || failed+=("$t")
  cat "$build/fuzz_$t.result"
done
if [ ${#failed[@]} -gt 0 ]; then
  echo "fuzz: findings in ${failed[*]}"
  exit 1
fi
