#!/usr/bin/env bash
# dmlc run: the examples on the seed pages' data, layouts, generated data,
# printing, timing, bindings and devices.
set -euo pipefail
# shellcheck source=common.bash
source "$(dirname "$0")/common.bash" run "$@"
EX=$SRC/examples
D=$EX/data

# example | input binding(s) | output checks: NAME DTYPE EXPECTED ...
# On $DEVICE (the default device when unset, which is the cpu).
run_example() {
  local example=$1 inputs=$2
  shift 2
  local args=() checks=()
  local i
  for i in $inputs; do args+=(--input "$i"); done
  while [ $# -gt 0 ]; do
    args+=(--output "$1=$TMP/$1.npy")
    checks+=("$1" "$2" "$3")
    shift 3
  done
  local device=${DEVICE:-cpu}
  if [ -n "${DEVICE:-}" ]; then args+=(--device="$DEVICE"); fi
  local time_re="^time: [0-9.]+ (us|ms|s) \\(device $device"
  if [ "$device" = vulkan ]; then
    time_re="$time_re, 1 run, the first: includes first-use costs; kernels [0-9.]+ (us|ms|s) on the device\\)$"
  fi
  expect_run "$example ($device)" 0 --out "$time_re" -- \
    "$DMLC" run "$EX/$example" "${args[@]}"
  check "$example ($device): no validation message" no_validation_message
  for ((i = 0; i < ${#checks[@]}; i += 3)); do
    check "$example ($device): ${checks[i]}" npy_equal "$TMP/${checks[i]}.npy" "${checks[i + 1]}" "${checks[i + 2]}"
  done
}

# The Vulkan runtime fails a call on any validation message; one reported
# while closing the device only reaches stderr.
no_validation_message() {
  if grep -qi 'validation' "$TMP/err"; then
    sed 's/^/  stderr: /' "$TMP/err" | head -5
    return 1
  fi
}

run_examples() {
run_example hardmax.dmlir "x=$D/hardmax_x.npy" out0 float32 '[[[0,0],[0,1]],[[0,1],[0,0]]]'
run_example hardmax_axis0.dmlir "x=$D/hardmax_x.npy" out0 float32 '[[[1,0],[0,1]],[[0,1],[1,0]]]'
run_example hardmax_axis1.dmlir "x=$D/hardmax_x.npy" out0 float32 '[[[1,0],[0,1]],[[1,1],[0,0]]]'
run_example argmax.dmlir "$D/matrix3x3.npy" out0 uint32 '[[1,2,1]]'
run_example argmax_rows.dmlir "$D/matrix3x3.npy" out0 uint32 '[[2],[2],[1]]'
run_example argmax_all.dmlir "$D/matrix3x3.npy" out0 uint32 '[[7]]'
run_example argmin.dmlir "$D/matrix3x3.npy" out0 uint32 '[[0,1,2]]'
run_example argmin_rows.dmlir "$D/matrix3x3.npy" out0 uint32 '[[0],[1],[0]]'
run_example argmin_all.dmlir "$D/matrix3x3.npy" out0 int64 '[[4]]'
run_example argmax_ties.dmlir "$D/ties.npy" first uint32 '[0]' last uint32 '[4]'
run_example hardmax_argmax.dmlir "$D/matrix3x3.npy" \
  hard float32 '[[0,0,1],[0,0,1],[0,1,0]]' idx uint32 '[[2],[2],[1]]'
run_example layouts.dmlir "x=$D/matrix3x3.npy row=$D/row_broadcast.npy" \
  idx uint32 '[[2],[2],[1]]' hard float32 '[[0,1,0],[0,1,0],[0,1,0]]'
}
run_examples

# What run prints: inputs and outputs nested like NumPy, then the time.
expect_run "printing" 0 \
  --out '^x: f32\[2,2,2\] = \[\[\[12, 0\], \[-101, 11\]\], \[\[3, 234\], \[0, -101\]\]\]$' \
  --out '^out0: f32\[2,2,2\] = \[\[\[0, 0\], \[0, 1\]\], \[\[0, 1\], \[0, 0\]\]\]$' \
  --out '^time: [0-9]+\.[0-9] (us|ms|s) \(device cpu, 1 run, the first: includes first-use costs\)$' -- \
  "$DMLC" run "$EX/hardmax.dmlir" --input "x=$D/hardmax_x.npy"
check "printing: three lines" [ "$(wc -l <"$TMP/out")" -eq 3 ]

# Positional outputs, --output=, --device=reference, --repeat.
expect_run "positional outputs, repeat" 0 --out 'median of 3 runs' -- \
  "$DMLC" run "$EX/hardmax_argmax.dmlir" --device=reference --input "$D/matrix3x3.npy" \
  --output "$TMP/p0.npy" --output="$TMP/p1.npy" --repeat 3
check "positional output 0" npy_equal "$TMP/p0.npy" float32 '[[0,0,1],[0,0,1],[0,1,0]]'
check "positional output 1" npy_equal "$TMP/p1.npy" uint32 '[[2],[2],[1]]'
# By name, in the other order; a named binding leaves positional ones alone.
expect_run "named outputs" 0 -- "$DMLC" run "$EX/hardmax_argmax.dmlir" --input "$D/matrix3x3.npy" \
  --output "idx=$TMP/n1.npy" --output "$TMP/n0.npy"
check "named output idx" npy_equal "$TMP/n1.npy" uint32 '[[2],[2],[1]]'
check "positional after named" npy_equal "$TMP/n0.npy" float32 '[[0,0,1],[0,0,1],[0,1,0]]'

# --quiet prints only the time, and still writes outputs.
expect_run "quiet" 0 -- "$DMLC" run "$EX/argmax.dmlir" --input "$D/matrix3x3.npy" \
  --output "$TMP/q.npy" --quiet
check "quiet: one line" [ "$(wc -l <"$TMP/out")" -eq 1 ]
check "quiet: time only" grep -q '^time: ' "$TMP/out"
check "quiet: output written" npy_equal "$TMP/q.npy" uint32 '[[1,2,1]]'

# The graph from standard input.
expect_run "stdin graph" 0 --out '^out0: u32\[1,1\] = \[\[7\]\]$' -- \
  sh -c "'$DMLC' run - --input '$D/matrix3x3.npy' < '$EX/argmax_all.dmlir'"

# Inputs in Fortran order, big-endian, and format versions 2.0 and 3.0.
"$PY" - "$TMP" <<'PYEOF'
import sys
import numpy as np
from numpy.lib import format as fmt
tmp = sys.argv[1]
m = np.array([[1, 2, 3], [3, 0, 4], [2, 5, 2]], dtype=np.float32)
np.save(f"{tmp}/fortran.npy", np.asfortranarray(m))
np.save(f"{tmp}/big.npy", m.astype(">f4"))
for v in (2, 3):
    with open(f"{tmp}/v{v}.npy", "wb") as f:
        fmt.write_array(f, m, version=(v, 0))
PYEOF
for f in fortran big v2 v3; do
  expect_run "input $f.npy" 0 --out '^x: f32\[3,3\] = \[\[1, 2, 3\], \[3, 0, 4\], \[2, 5, 2\]\]$' -- \
    "$DMLC" run "$EX/argmax.dmlir" --input "x=$TMP/$f.npy" --output "$TMP/$f.out.npy"
  check "input $f.npy: result" npy_equal "$TMP/$f.out.npy" uint32 '[[1,2,1]]'
done

# Generated data: deterministic, integer-valued, in [-4, 4].
expect_run "generated data" 0 -- "$DMLC" run "$EX/hardmax_argmax.dmlir" --output "idx=$TMP/g1.npy"
cp "$TMP/out" "$TMP/gen1.txt"
expect_run "generated data again" 0 -- "$DMLC" run "$EX/hardmax_argmax.dmlir" --output "idx=$TMP/g2.npy"
check "generated data is deterministic" cmp -s <(grep -v '^time' "$TMP/gen1.txt") <(grep -v '^time' "$TMP/out")
check "generated data: same outputs" cmp -s "$TMP/g1.npy" "$TMP/g2.npy"
check "generated data in [-4, 4]" "$PY" -c '
import re, sys
line = [l for l in open(sys.argv[1]) if l.startswith("x: f32[3,3] = ")][0]
values = [int(v) for v in re.findall(r"-?\d+", line.split("=", 1)[1])]
sys.exit(not (len(values) == 9 and all(-4 <= v <= 4 for v in values) and len(set(values)) > 1))
' "$TMP/gen1.txt"
cat >"$TMP/u8.dmlir" <<'IREOF'
graph @u(%x: u8[64]) -> (u32[1]) {
  %0 = argmax %x {axes = [0]} : u32[1]
  return %0
}
IREOF
expect_run "generated unsigned data" 0 -- "$DMLC" run "$TMP/u8.dmlir"
check "generated unsigned data in [0, 4]" "$PY" -c '
import re, sys
text = open(sys.argv[1]).read().split("out0:")[0]
values = [int(v) for v in re.findall(r"-?\d+", text.split("=", 1)[1])]
sys.exit(not (len(values) == 64 and all(0 <= v <= 4 for v in values) and 0 in values and 4 in values))
' "$TMP/out"

# A generated broadcast input is consistent along the broadcast axis.
expect_run "generated broadcast input" 0 -- "$DMLC" run "$EX/layouts.dmlir"
check "broadcast rows equal" "$PY" -c '
import re, sys
line = [l for l in open(sys.argv[1]) if l.startswith("row: ")][0]
rows = re.findall(r"\[([^][]*)\]", line.split("=", 1)[1])
sys.exit(not (len(rows) == 3 and rows[0] == rows[1] == rows[2]))
' "$TMP/out"

# Big tensors are summarized with "...".
cat >"$TMP/big.dmlir" <<'IREOF'
graph @big(%x: f16[4,5,300]) -> (i64[4,5,1]) {
  %0 = argmax %x {axes = [2]} : i64[4,5,1]
  return %0
}
IREOF
expect_run "summarized printing" 0 --out '^\[\[\[ ?-?[0-9], +-?[0-9], +-?[0-9], \.\.\., ' \
  --out '^x: f16\[4,5,300\] =$' -- "$DMLC" run "$TMP/big.dmlir"
check "summarized: short" [ "$(wc -l <"$TMP/out")" -lt 80 ]

# Devices that are not built answer with the library's message.
"$DMLC" devices >"$TMP/devices"
for dev in cpu vulkan; do
  if grep -Eq "^$dev +not built" "$TMP/devices"; then
    expect_run "device $dev not built" 1 --err "dmlc: error: .*$dev.*not built" -- \
      "$DMLC" run "$EX/argmax.dmlir" --device=$dev --input "$D/matrix3x3.npy"
  elif grep -Eq "^$dev +available" "$TMP/devices"; then
    expect_run "device $dev" 0 --out "device $dev" -- \
      "$DMLC" run "$EX/argmax.dmlir" --device=$dev --input "$D/matrix3x3.npy" \
      --output "$TMP/$dev.npy"
    check "device $dev: result" npy_equal "$TMP/$dev.npy" uint32 '[[1,2,1]]'
  else
    pass # present in the build but not on this machine
  fi
done

# The Vulkan device, built and present (CI installs Mesa's lavapipe): every
# example again, with the Khronos validation layer enabled (any message it
# reports fails the run), the kernels' device time, and the SPIR-V dump.
if grep -Eq '^vulkan +available' "$TMP/devices"; then
  export VK_INSTANCE_LAYERS=VK_LAYER_KHRONOS_validation
  DEVICE=vulkan run_examples
  expect_run "vulkan: repeat" 0 \
    --out '^time: [0-9.]+ (us|ms|s) \(device vulkan, median of 3 runs; kernels [0-9.]+ (us|ms|s) on the device\)$' -- \
    "$DMLC" run "$EX/hardmax_argmax.dmlir" --device=vulkan --repeat 3 --quiet
  expect_run "vulkan: --dump=kernels,spirv" 0 --err '^// kernel 0: workgroups of [0-9]+' \
    --err '^; kernel 0: ' --err 'OpCapability Shader' --err 'OpEntryPoint GLCompute' -- \
    "$DMLC" run "$EX/hardmax_argmax.dmlir" --device=vulkan --dump=kernels,spirv --quiet
  check "vulkan: dump: no validation message" no_validation_message
  expect_run "vulkan: --dump=llvm" 1 --err "has no LLVM code" -- \
    "$DMLC" run "$EX/argmax.dmlir" --device=vulkan --dump=llvm --quiet
  expect_run "cpu: --dump=spirv" 1 --err "has no SPIR-V" -- \
    "$DMLC" run "$EX/argmax.dmlir" --device=cpu --dump=spirv --quiet
  expect_run "devices: vulkan listing" 0 --out '^vulkan +available$' \
    --out '^  vulkan 0: .*\[selected\]$' --out '^    subgroup' --out '^    shader types:' \
    --out '^    timestamps: ' -- "$DMLC" devices
  unset VK_INSTANCE_LAYERS
fi

# No Vulkan driver: compiling for vulkan is a clear error, never a crash;
# the other devices are unaffected.
if ! grep -Eq '^vulkan +not built' "$TMP/devices"; then
  expect_run "vulkan: no driver" 1 --err '^dmlc: error: .*Vulkan.*no Vulkan driver' -- \
    env VK_ICD_FILENAMES=/nonexistent VK_DRIVER_FILES=/nonexistent \
    "$DMLC" run "$EX/argmax.dmlir" --device=vulkan --input "$D/matrix3x3.npy"
  expect_run "devices: no driver" 0 --out '^vulkan +not available: .*no Vulkan driver' \
    --out '^cpu +available' -- \
    env VK_ICD_FILENAMES=/nonexistent VK_DRIVER_FILES=/nonexistent "$DMLC" devices
  expect_run "cpu: no Vulkan driver" 0 --out 'device cpu' -- \
    env VK_ICD_FILENAMES=/nonexistent VK_DRIVER_FILES=/nonexistent \
    "$DMLC" run "$EX/argmax.dmlir" --device=cpu --input "$D/matrix3x3.npy" --quiet
fi

finish
