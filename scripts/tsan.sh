#!/usr/bin/env bash
# Builds dmlc with ThreadSanitizer (-DDMLC_SANITIZE=thread, in build-tsan/
# or $DMLC_TSAN_BUILD) and runs the concurrency suite (tests/unit/
# test_threads.c: 8 threads, every device, compiling while executing, every
# output checked) there. Any data race or lock-order report fails it.
# DMLC_THREADS_ITERATIONS sets the executes per thread (default 200).
set -euo pipefail
cd "$(dirname "$0")/.."
build=${DMLC_TSAN_BUILD:-build-tsan}
cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DDMLC_SANITIZE=thread >/dev/null
cmake --build "$build" -j"$(nproc)" --target test_threads >/dev/null || {
  cmake --build "$build" -j1 --target test_threads
  exit 1
}
# halt_on_error: the first report fails the run. Lavapipe and LLVM are not
# instrumented; what they do inside is not checked (docs/reliability.md).
export TSAN_OPTIONS="halt_on_error=1 exitcode=66 second_deadlock_stack=1 suppressions=$PWD/tests/tsan.supp ${TSAN_OPTIONS:-}"
export CK_DEFAULT_TIMEOUT=1200 CK_FORK=no
"$build/bin/test_threads"
