#!/usr/bin/env bash
# Builds dmlc with AddressSanitizer and UBSan (-DDMLC_SANITIZE=ON, Debug,
# in build-asan/ or $DMLC_ASAN_BUILD) and runs the whole test suite there.
# Any sanitizer report fails the test that triggered it. Leaks are checked
# in every test that does not load a Vulkan driver; the tests that do (label
# vulkan, tool.cli's `dmlc devices`, tool.run's, tool.onnx's, tool.usability's and
# tool.docs's --device=vulkan, unit.test_threads's Vulkan threads) run with
# leak detection off, because lavapipe leaks 128 bytes from a module it
# unloads, which LeakSanitizer can neither name nor suppress.
set -euo pipefail
cd "$(dirname "$0")/.."
build=${DMLC_ASAN_BUILD:-build-asan}
# -O1, as ASan's own documentation advises for speed (asserts stay on):
# at -O0 the instrumented tests ran 1.3x longer.
cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=Debug -DCMAKE_C_FLAGS_DEBUG="-O1 -g" \
  -DCMAKE_CXX_FLAGS_DEBUG="-O1 -g" -DDMLC_SANITIZE=ON >/dev/null
cmake --build "$build" -j"$(nproc)" >/dev/null
# Check's per-test timeouts were set for the plain build. The conformance
# sweeps run their first 6 chunks of 30 (600 generated cases a device, with
# the known answers, the examples and the big graphs): the plain run has
# covered all 30, and on a slow machine (lavapipe on a Zen 3: the Vulkan
# sweeps alone took 12 minutes without sanitizers) the whole suite under
# ASan would not fit the 45 minutes the test command has.
# unit.test_llvm_emit runs 2 of each kernel's data modes (all of them over
# the suite; the plain run has run every mode of every kernel): the
# kernels and the emitter's code are the same, the reference's work on
# the data was most of its 15 minutes under ASan.
export CK_TIMEOUT_MULTIPLIER=10 UBSAN_OPTIONS=print_stacktrace=1 DMLC_TEST_SWEEP_CHUNKS=6
# unit.test_llvm_emit also optimizes, compiles and runs one kernel in 4
# (DMLC_TEST_RUN_SHARE, picked by a hash of the kernel's description) and
# only emits and verifies the others: the emitter, dmlc's code, runs under
# the sanitizers on every kernel. LLVM's passes and code generation are
# not dmlc's code and are not instrumented, but ASan's allocator serves
# their allocations: they were most of the test's 28 minutes on a Zen 5
# (21 at -O1). The plain run compiles and runs every kernel.
export DMLC_TEST_DATA_MODES=2 DMLC_TEST_RUN_SHARE=4
# The Vulkan variants of the device suite (unit.test_device.windows, .split,
# .vulkan_unmapped: the whole suite again with one Vulkan path forced) run
# each half of the loop cases' iterations (DMLC_TEST_CASE_PART in
# tests/CMakeLists.txt says which; every single case runs). Each case is a
# process that opens Vulkan afresh: 0.4 s of a light case under ASan. The
# plain run and unit.test_device run them all.
export DMLC_TEST_CASE_SHARE=2
# A 16 MiB quarantine instead of ASan's 256 MiB: each test process (Check
# forks one a test) otherwise freed through 256 MiB of fresh pages before
# reusing any, and page faults are dear in a VM (unit.test_llvm_emit's
# fast_keys case: 18% of its time). A use after free still faults while
# the freed block is among the last 16 MiB freed.
asan='quarantine_size_mb=16'
vulkan='vulkan|^tool\.cli$|^tool\.run$|^tool\.onnx$|^tool\.usability$|^tool\.docs$|^unit\.test_threads$'
ASAN_OPTIONS=$asan:detect_leaks=1 ctest --test-dir "$build" --output-on-failure -j"$(nproc)" -E "$vulkan"
ASAN_OPTIONS=$asan:detect_leaks=0 ctest --test-dir "$build" --output-on-failure -j"$(nproc)" -R "$vulkan"
