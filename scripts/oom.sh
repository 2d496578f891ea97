#!/usr/bin/env bash
# The allocation-failure test (docs/reliability.md): builds dmlc with its
# allocations routed through ir/fault_inject.h, AddressSanitizer and UBSan
# (-DDMLC_FAULT_INJECTION=ON -DDMLC_SANITIZE=ON, in build-oom/ or
# $DMLC_OOM_BUILD) and runs tests/unit/test_alloc_failures.c there: every
# allocation N failed in turn across every example graph (reference, CPU)
# and the tensor API, LeakSanitizer on.
set -euo pipefail
cd "$(dirname "$0")/.."
build=${DMLC_OOM_BUILD:-build-oom}
cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=Debug -DDMLC_SANITIZE=ON -DDMLC_FAULT_INJECTION=ON \
  -DDMLC_VULKAN=OFF >/dev/null
cmake --build "$build" -j"$(nproc)" --target test_alloc_failures >/dev/null || {
  cmake --build "$build" -j1 --target test_alloc_failures
  exit 1
}
ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 CK_DEFAULT_TIMEOUT=1800 \
  "$build/bin/test_alloc_failures"
