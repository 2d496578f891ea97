#!/usr/bin/env bash
# Sets everything up and runs the whole test suite: once on the build of
# scripts/setup.sh, then again under AddressSanitizer and UBSan
# (scripts/sanitize.sh; DMLC_TEST_SANITIZE=0 skips that second run).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
ctest --test-dir "${DMLC_BUILD:-build}" --output-on-failure -j "$(nproc)"
if [ "${DMLC_TEST_SANITIZE:-1}" != 0 ]; then
  bash scripts/sanitize.sh
fi
