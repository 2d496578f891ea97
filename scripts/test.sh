#!/usr/bin/env bash
# Sets everything up and runs the whole test suite: once on the build of
# scripts/setup.sh, then again under AddressSanitizer and UBSan
# (scripts/sanitize.sh; DMLC_TEST_SANITIZE=0 skips that second run), then
# every libFuzzer target for DMLC_FUZZ_SECONDS (default 60) each under ASan
# and UBSan (scripts/fuzz.sh; DMLC_TEST_FUZZ=0 skips it), after the
# concurrency suite under ThreadSanitizer (scripts/tsan.sh;
# DMLC_TEST_TSAN=0 skips it) and the allocation-failure test (scripts/oom.sh;
# DMLC_TEST_OOM=0 skips it). Each stage's time
# is printed at the end (docs/reliability.md lists them).
set -euo pipefail
cd "$(dirname "$0")/.."
times=()
stage() {
  local name=$1 start
  shift
  start=$(date +%s)
  "$@"
  times+=("$name: $(($(date +%s) - start)) s")
}
stage setup bash scripts/setup.sh
stage ctest ctest --test-dir "${DMLC_BUILD:-build}" --output-on-failure -j "$(nproc)"
if [ "${DMLC_TEST_SANITIZE:-1}" != 0 ]; then
  stage sanitize bash scripts/sanitize.sh
fi
if [ "${DMLC_TEST_TSAN:-1}" != 0 ]; then
  stage tsan bash scripts/tsan.sh
fi
if [ "${DMLC_TEST_OOM:-1}" != 0 ]; then
  stage oom bash scripts/oom.sh
fi
if [ "${DMLC_TEST_FUZZ:-1}" != 0 ]; then
  stage fuzz bash scripts/fuzz.sh "${DMLC_FUZZ_SECONDS:-60}"
fi
printf 'test.sh: %s\n' "${times[@]}"
