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

cat >"$TMP/wide.dmlir" <<'EOF2'
graph @wide(%x: f32[64,1024]) -> (u32[64,1]) {
  %0 = argmax %x {axes = [1]} : u32[64,1]
  return %0
}
EOF2

# DMLC_CPU / DMLC_CPU_FEATURES narrow the JIT's target (x86-64 hosts).
if [ "$(uname -m)" = x86_64 ]; then
  expect_run "DMLC_CPU=x86-64-v2: 128-bit vectors" 0 \
    --out '^cpu +available \(x86_64[^,]*, CPU x86-64-v2, 128-bit vectors, .*DMLC_CPU=x86-64-v2\)' -- \
    env DMLC_CPU=x86-64-v2 "$DMLC" devices
  expect_run "DMLC_CPU_FEATURES=-avx512f: at most 256-bit vectors" 0 \
    --out '^cpu +available \(.*, (128|256)-bit vectors, .*DMLC_CPU_FEATURES=-avx512f\)' -- \
    env DMLC_CPU_FEATURES=-avx512f "$DMLC" devices
  expect_run "DMLC_CPU=x86-64-v2: the kernels use xmm only" 0 --err 'xmm' -- \
    env DMLC_CPU=x86-64-v2 "$DMLC" run "$TMP/wide.dmlir" --dump=asm -q
  check "DMLC_CPU=x86-64-v2: no ymm or zmm" bash -c "! grep -Eq '[yz]mm' '$TMP/err'"
  expect_run "DMLC_CPU: unknown CPU" 1 --err "DMLC_CPU=bogus: unknown CPU 'bogus'" -- \
    env DMLC_CPU=bogus "$DMLC" run "$SRC/examples/hardmax.dmlir" --device=cpu
  expect_run "DMLC_CPU_FEATURES: no sign" 1 --err "DMLC_CPU_FEATURES=avx: feature 'avx' must start with \+ or -" -- \
    env DMLC_CPU_FEATURES=avx "$DMLC" run "$SRC/examples/hardmax.dmlir" --device=cpu
  # A feature this CPU lacks: the first of these /proc/cpuinfo does not list.
  missing=
  for f in avx512fp16:avx512_fp16 xop:xop tbm:tbm avx512er:avx512er; do
    grep -qw "${f#*:}" /proc/cpuinfo || { missing=${f%%:*}; break; }
  done
  if [ -n "$missing" ]; then
    expect_run "DMLC_CPU_FEATURES: a feature the host lacks" 1 \
      --err "DMLC_CPU_FEATURES=\+$missing enables '$missing', which this CPU \(.*\) lacks" -- \
      env DMLC_CPU_FEATURES=+$missing "$DMLC" run "$SRC/examples/hardmax.dmlir" --device=cpu
  fi
fi

# The JIT's fast tier: kernels of at most 16 elements (DMLC_JIT_FAST_MAX_ELEMENTS).
hardmax_out0='^out0: f32\[2,2,2\] = \[\[\[0, 0\], \[0, 1\]\], \[\[0, 1\], \[0, 0\]\]\]$'
expect_run "fast tier: hardmax.dmlir's [2,2,2] kernel" 0 --out "$hardmax_out0" \
  --err '^// kernel 0: 2 tasks, 32 bytes per task, 0 scratch bytes, fast tier$' -- \
  "$DMLC" run "$SRC/examples/hardmax.dmlir" --device=cpu --dump=kernels \
  --input x="$SRC/examples/data/hardmax_x.npy"
expect_run "fast tier: not for 64 Ki elements" 0 --err '^// kernel 0: .*scratch bytes?$' -- \
  "$DMLC" run "$TMP/wide.dmlir" --device=cpu --dump=kernels -q
expect_run "fast tier: DMLC_JIT_FAST_MAX_ELEMENTS=0 turns it off" 0 --out "$hardmax_out0" \
  --err '^// kernel 0: 2 tasks, 32 bytes per task, 0 scratch bytes$' -- \
  env DMLC_JIT_FAST_MAX_ELEMENTS=0 "$DMLC" run "$SRC/examples/hardmax.dmlir" --device=cpu \
  --dump=kernels --input x="$SRC/examples/data/hardmax_x.npy"
expect_run "fast tier: DMLC_JIT_FAST_MAX_ELEMENTS=65536 takes 64 Ki elements" 0 \
  --err '^// kernel 0: .*, fast tier$' -- \
  env DMLC_JIT_FAST_MAX_ELEMENTS=65536 "$DMLC" run "$TMP/wide.dmlir" --device=cpu --dump=kernels -q
expect_run "fast tier: DMLC_JIT_FAST_MAX_ELEMENTS not a number" 1 \
  --err "DMLC_JIT_FAST_MAX_ELEMENTS=16k: not a number of elements" -- \
  env DMLC_JIT_FAST_MAX_ELEMENTS=16k "$DMLC" run "$SRC/examples/hardmax.dmlir" --device=cpu

expect_run "compile: .spv picks spirv" 0 -- "$DMLC" compile "$SRC/examples/hardmax.dmlir" -o "$TMP/x.spv"
check "compile: x.spv is SPIR-V" bash -c "od -An -tx4 -N4 '$TMP/x.spv' | grep -q 07230203"

finish
