#!/usr/bin/env bash
# The dmlc command line: help, version, usage errors, devices, compile.
set -euo pipefail
# shellcheck source=common.bash
source "$(dirname "$0")/common.bash" cli "$@"

expect_run "dmlc --help" 0 --out '^usage: dmlc <command>' --out '^  run ' -- "$DMLC" --help
expect_run "dmlc -h" 0 --out '^usage: dmlc <command>' -- "$DMLC" -h
expect_run "dmlc --version" 0 --out '^dmlc [0-9]+\.[0-9]+\.[0-9]+$' -- "$DMLC" --version
for cmd in opt run devices compile; do
  expect_run "dmlc $cmd --help" 0 --out "^usage: dmlc $cmd" -- "$DMLC" $cmd --help
  check "dmlc $cmd --help: stderr empty" [ ! -s "$TMP/err" ]
done
expect_run "dmlc run -h" 0 --out '--device=DEVICE' --out '--repeat N' -- "$DMLC" run -h

expect_run "no command" 2 --err '^dmlc: error: no command' --err '^usage: dmlc' -- "$DMLC"
expect_run "unknown command" 2 --err "unknown command 'frobnicate'" -- "$DMLC" frobnicate
expect_run "unknown top-level flag" 2 --err "unknown command '--frob'" -- "$DMLC" --frob
expect_run "run: no file" 2 --err 'no input file' -- "$DMLC" run
expect_run "run: unknown flag" 2 --err "unknown option '--bogus'" --err '^usage: dmlc run' -- \
  "$DMLC" run "$SRC/examples/argmax.dmlir" --bogus
expect_run "run: bad device" 2 --err "unknown device 'gpu'" -- \
  "$DMLC" run "$SRC/examples/argmax.dmlir" --device=gpu
expect_run "run: --device without value" 2 --err "needs a value" -- \
  "$DMLC" run "$SRC/examples/argmax.dmlir" --device
for n in 0 -1 x 1x ""; do
  expect_run "run: --repeat '$n'" 2 --err "--repeat needs a number" -- \
    "$DMLC" run "$SRC/examples/argmax.dmlir" --repeat "$n"
done
expect_run "run: --input without value" 2 --err "'--input' needs a value" -- \
  "$DMLC" run "$SRC/examples/argmax.dmlir" --input
expect_run "devices: extra argument" 2 --err "unexpected argument 'x'" -- "$DMLC" devices x

expect_run "devices" 0 --out '^reference +available$' --out '^cpu +(available|not built|not available)' \
  --out '^vulkan +(available|not built|not available)' --out '^default +(reference|cpu|vulkan)$' -- \
  "$DMLC" devices

expect_run "compile: .spv picks spirv" 0 -- "$DMLC" compile "$SRC/examples/hardmax.dmlir" -o "$TMP/x.spv"
check "compile: x.spv is SPIR-V" bash -c "od -An -tx4 -N4 '$TMP/x.spv' | grep -q 07230203"

finish
