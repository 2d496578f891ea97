#!/usr/bin/env bash
# dmlc run / opt / compile on ONNX models: ONNX's own ArgMax, ArgMin and
# Hardmax node tests and dmlc's opset 1-13 cases through the command on
# every available device (--expect, bit for bit), .pb and .npy files both
# ways, --shape, --expect's report of a difference, and broken files.
set -uo pipefail
source "$(dirname "$0")/common.bash" onnx "$@"

BUILD=$(dirname "$(dirname "$DMLC")")
NODE=${DMLC_ONNX_TESTDATA:-/usr/share/libonnx-testdata/data/node}
CASES=$BUILD/tests/onnx/cases
ERRORS=$BUILD/tests/onnx/errors
if [ ! -d "$NODE" ]; then
  echo "tool.onnx: FAIL: no ONNX test data at $NODE (scripts/setup.sh installs libonnx-testdata)"
  exit 1
fi
if [ ! -f "$CASES/argmax_opset1_default/model.onnx" ]; then
  echo "tool.onnx: FAIL: no encoded cases under $CASES (the build's onnx_test_data target makes them)"
  exit 1
fi
if ! "$PY" -c 'import onnx' 2>/dev/null; then
  echo "tool.onnx: FAIL: $PY with onnx is required (scripts/setup.sh installs python3-onnx)"
  exit 1
fi

devices=(reference)
"$DMLC" devices | grep -Eq '^cpu +available' && devices+=(cpu)
"$DMLC" devices | grep -Eq '^vulkan +available' && devices+=(vulkan)

# run_case DIR DEVICE [--shape ...]: every input_K.pb in, every output_K.pb
# expected; each output must be reported as matching.
run_case() {
  local dir=$1 device=$2
  shift 2
  local args=() k n_out=0
  for k in $(seq 0 15); do
    [ -f "$dir/test_data_set_0/input_$k.pb" ] && args+=(--input "$dir/test_data_set_0/input_$k.pb")
    if [ -f "$dir/test_data_set_0/output_$k.pb" ]; then
      args+=(--expect "$dir/test_data_set_0/output_$k.pb")
      n_out=$((n_out + 1))
    fi
  done
  expect_run "$(basename "$dir") on $device" 0 --out '^expect: output .* matches' -- \
    "$DMLC" run "$dir/model.onnx" --device="$device" --quiet "$@" "${args[@]}"
  local got
  got=$(grep -c '^expect: output .* matches' "$TMP/out")
  check "$(basename "$dir") on $device: $n_out outputs match" [ "$got" -eq "$n_out" ]
}

# ---- ONNX's node tests, every device ----
official=0
for dir in "$NODE"/test_argmax_* "$NODE"/test_argmin_* "$NODE"/test_hardmax_*; do
  [ -f "$dir/model.onnx" ] || continue
  official=$((official + 1))
  for device in "${devices[@]}"; do
    run_case "$dir" "$device"
  done
done
check "ONNX's node tests: at least 39 found (found $official)" [ "$official" -ge 39 ]

# ---- dmlc's own cases (opsets 1, 11, 12, 13, 17), symbolic dims bound by --shape ----
own=0
for dir in "$CASES"/*/; do
  dir=${dir%/}
  own=$((own + 1))
  shapes=()
  if [ -f "$dir/shapes.txt" ]; then
    while read -r line; do [ -n "$line" ] && shapes+=(--shape "$line"); done <"$dir/shapes.txt"
  fi
  for device in "${devices[@]}"; do
    run_case "$dir" "$device" "${shapes[@]+"${shapes[@]}"}"
  done
done
check "own cases: at least 22 found (found $own)" [ "$own" -ge 22 ]

# ---- .npy and .pb, both ways ----
C=$CASES/argmax_opset11_rank1_nokeepdims_scalar
# A scalar output has ONNX's shape (): written as .pb it is output_0.pb's bytes.
expect_run "scalar output to .pb and .npy" 0 -- "$DMLC" run "$C/model.onnx" --quiet \
  --input "$C/test_data_set_0/input_0.pb" --output "$TMP/s.pb"
check "scalar .pb is the expected file's bytes" cmp "$TMP/s.pb" "$C/test_data_set_0/output_0.pb"
expect_run "scalar output to .npy" 0 -- "$DMLC" run "$C/model.onnx" --quiet \
  --input "$C/test_data_set_0/input_0.pb" --output "$TMP/s.npy"
check "scalar .npy has shape ()" "$PY" -c "
import sys, numpy as np, onnx.numpy_helper as nh, onnx
got = np.load('$TMP/s.npy')
want = nh.to_array(onnx.load_tensor('$C/test_data_set_0/output_0.pb'))
sys.exit(not (got.shape == () and got.dtype == want.dtype and np.array_equal(got, want)))"

# Inputs as .npy (converted by ONNX's numpy_helper), outputs as .pb read back by it.
H=$NODE/test_hardmax_example
"$PY" -c "
import numpy as np, onnx, onnx.numpy_helper as nh
np.save('$TMP/h_in.npy', nh.to_array(onnx.load_tensor('$H/test_data_set_0/input_0.pb')))"
expect_run "hardmax: .npy in, .pb out" 0 -- "$DMLC" run "$H/model.onnx" --quiet \
  --input "$TMP/h_in.npy" --output "$TMP/h_out.pb" --expect "$H/test_data_set_0/output_0.pb"
check "hardmax: .pb output as ONNX reads it" "$PY" -c "
import sys, numpy as np, onnx, onnx.numpy_helper as nh
got = onnx.load_tensor('$TMP/h_out.pb'); want = onnx.load_tensor('$H/test_data_set_0/output_0.pb')
sys.exit(not (got.name == want.name and np.array_equal(nh.to_array(got), nh.to_array(want))))"
expect_run ".npy output written" 0 -- \
  "$DMLC" run "$H/model.onnx" --quiet --input "$TMP/h_in.npy" --output "$TMP/h_out.npy"
cp "$TMP/h_out.npy" "$TMP/h_want.npy"
expect_run ".npy output expected by a .npy file" 0 --out "^expect: output 'y' matches" -- \
  "$DMLC" run "$H/model.onnx" --quiet --input "$TMP/h_in.npy" --output "$TMP/h_out.npy" \
  --expect "y=$TMP/h_want.npy"

# ONNX names that are no dmlc names bind by either name.
N=$CASES/names_made_valid
expect_run "bind by ONNX names with ':' and '/'" 0 --out "^expect: output 'a/b' matches" \
  --out "^expect: output 'a:b' matches" -- "$DMLC" run "$N/model.onnx" --quiet \
  --input "input:0=$N/test_data_set_0/input_0.pb" --input "_1st=$N/test_data_set_0/input_1.pb" \
  --expect "a:b=$N/test_data_set_0/output_1.pb" --expect "a/b=$N/test_data_set_0/output_0.pb"

# ---- --expect reports the first difference ----
A=$NODE/test_argmax_keepdims_random
"$PY" -c "
import numpy as np, onnx, onnx.numpy_helper as nh
y = nh.to_array(onnx.load_tensor('$A/test_data_set_0/output_0.pb')).copy()
flat = y.reshape(-1)
flat[5] += 1; flat[7] += 2
np.save('$TMP/wrong.npy', y)
onnx.save_tensor(nh.from_array(y.astype(np.float32), 'result'), '$TMP/wrong_type.pb')
np.save('$TMP/wrong_shape.npy', y.reshape(-1))
print(list(y.shape))" >"$TMP/shape"
expect_run "--expect: a difference exits 1" 1 \
  --err "output 'result' differs from $TMP/wrong.npy at index 5 \[[0-9,]+\]: [0-9]+, expected [0-9]+ \(2 of [0-9]+ elements differ\)" -- \
  "$DMLC" run "$A/model.onnx" --quiet --input "$A/test_data_set_0/input_0.pb" --expect "$TMP/wrong.npy"
check "--expect: no 'matches' line on a difference" bash -c "! grep -q matches '$TMP/out'"
expect_run "--expect: a different data type" 1 \
  --err "output 'result' differs from $TMP/wrong_type.pb: it is i64\[[0-9,]+\], the file holds f32" -- \
  "$DMLC" run "$A/model.onnx" --quiet --input "$A/test_data_set_0/input_0.pb" --expect "$TMP/wrong_type.pb"
expect_run "--expect: a different shape" 1 --err "differs from $TMP/wrong_shape.npy: it is i64" -- \
  "$DMLC" run "$A/model.onnx" --quiet --input "$A/test_data_set_0/input_0.pb" --expect "$TMP/wrong_shape.npy"
expect_run "--expect on another device differs too" 1 --err "at index 5 " -- \
  "$DMLC" run "$A/model.onnx" --device=reference --quiet --input "$A/test_data_set_0/input_0.pb" \
  --expect "result=$TMP/wrong.npy"
expect_run "--expect: a missing file" 1 --err "$TMP/none.pb" -- \
  "$DMLC" run "$A/model.onnx" --quiet --expect "$TMP/none.pb"
expect_run "--expect: an unknown output" 1 --err "no output named 'nope' \(its outputs: 'result'\)" -- \
  "$DMLC" run "$A/model.onnx" --quiet --expect "nope=$TMP/wrong.npy"
expect_run "--expect: too many" 1 --err "too many --expect files: the graph has 1 output" -- \
  "$DMLC" run "$A/model.onnx" --quiet --expect "$TMP/wrong.npy" --expect "$TMP/wrong.npy"
# IR text takes --expect too.
"$PY" -c "import numpy as np; np.save('$TMP/ir_want.npy', np.array([[1, 2, 1]], np.uint32))"
expect_run "--expect with IR text (the example's documented result)" 0 \
  --out "^expect: output 'out0' matches $TMP/ir_want.npy \(u32\[1,3\], 3 elements\)" -- \
  "$DMLC" run "$SRC/examples/argmax.dmlir" --quiet --input "x=$SRC/examples/data/matrix3x3.npy" \
  --expect "out0=$TMP/ir_want.npy"

# ---- opt and compile ----
expect_run "opt prints the imported IR" 0 --out '^graph @test_argmax_keepdims_example\(%data: f32\[2,2\]\)' \
  --out 'argmax %data \{axes = \[1\], direction = increasing\} : i64\[2,1\]' -- \
  "$DMLC" opt "$NODE/test_argmax_keepdims_example/model.onnx"
expect_run "opt reads a model from standard input" 0 --out '^graph @' -- \
  bash -c "'$DMLC' opt - <'$NODE/test_hardmax_axis_0/model.onnx'"
S=$CASES/symbolic_dims_bound
expect_run "opt --shape" 0 --out '%x: f32\[3,4\], %z: f32\[3,5\]' -- \
  "$DMLC" opt "$S/model.onnx" --shape N=3 --shape z=3x5
expect_run "opt --shape for a dim_param alone leaves z's unnamed dim" 1 \
  --err "input 'z': dim 1 has neither a value nor a name; give the input's whole shape: --shape z=DIMS" -- \
  "$DMLC" opt "$S/model.onnx" --shape N=3
expect_run "run without --shape" 1 --err "dim 0 is the symbolic 'N'; give it a value: --shape N=SIZE" -- \
  "$DMLC" run "$S/model.onnx"
expect_run "--shape: a name the model lacks" 1 --err "'Q'" -- \
  "$DMLC" opt "$S/model.onnx" --shape N=3 --shape z=3,5 --shape Q=2
for bad in "N" "=3" "N=0" "N=3,,4" "N=3," "N=a" "N=-1" "N=4294967296" "N=1,2,3,4,5,6,7,8,9"; do
  expect_run "--shape '$bad' is a usage error" 2 --err "--shape" -- "$DMLC" opt "$S/model.onnx" --shape "$bad"
done
expect_run "--shape twice" 2 --err "--shape N is given twice" -- \
  "$DMLC" opt "$S/model.onnx" --shape N=3 --shape N=4
expect_run "--shape with IR text" 2 --err "--shape gives sizes to an ONNX model's symbolic dims" -- \
  "$DMLC" run "$SRC/examples/argmax.dmlir" --shape N=3

M=$NODE/test_argmin_no_keepdims_random
expect_run "compile a model to an object" 0 -- "$DMLC" compile "$M/model.onnx" -o "$TMP/m.o"
check "the object exports the graph's name" bash -c "nm '$TMP/m.o' | grep -q ' T test_argmin_no_keepdims_random_run$'"
expect_run "compile --shape" 0 -- "$DMLC" compile "$S/model.onnx" --shape N=3 --shape z=3,5 \
  -o "$TMP/sym.h"
check "the header has the bound shapes" grep -q 'symbolic_dims_bound_INPUT1_SIZES {3u, 5u}' "$TMP/sym.h"
expect_run "compile a model to a program" 0 -- "$DMLC" compile "$M/model.onnx" --emit=exe -o "$TMP/m"
"$PY" -c "
import numpy as np, onnx, onnx.numpy_helper as nh
np.save('$TMP/m_in.npy', nh.to_array(onnx.load_tensor('$M/test_data_set_0/input_0.pb')))"
expect_run "the program runs" 0 -- "$TMP/m" "$TMP/m_in.npy" "$TMP/m_out.npy"
expect_run "its output is the expected one" 0 --out "matches" -- \
  "$DMLC" run "$M/model.onnx" --quiet --input "$TMP/m_in.npy" --expect "$TMP/m_out.npy"

# ---- broken files: a message naming the file, never a crash ----
expect_run "a broken model" 1 --err "argmax_axis_out_of_range.onnx: node" -- \
  "$DMLC" run "$ERRORS/argmax_axis_out_of_range.onnx"
head -c 37 "$NODE/test_hardmax_example/model.onnx" >"$TMP/cut.onnx"
expect_run "a truncated model" 1 --err "^dmlc: error: $TMP/cut.onnx: byte [0-9]+" -- "$DMLC" opt "$TMP/cut.onnx"
printf 'graph' >"$TMP/junk.onnx"
expect_run "IR-looking junk named .onnx" 1 --err "$TMP/junk.onnx: " -- "$DMLC" opt "$TMP/junk.onnx"
head -c 20 "$H/test_data_set_0/input_0.pb" >"$TMP/cut.pb"
expect_run "a truncated .pb input" 1 --err "$TMP/cut.pb: " -- \
  "$DMLC" run "$H/model.onnx" --input "$TMP/cut.pb"
expect_run "a .pb input of another shape" 1 --err "$A/test_data_set_0/input_0.pb: holds f32\[2,3,4\], but input 'x' is f32\[" -- \
  "$DMLC" run "$H/model.onnx" --input "$A/test_data_set_0/input_0.pb"
expect_run "an unwritable .pb output" 1 --err "$TMP/no/o.pb" -- \
  "$DMLC" run "$H/model.onnx" --quiet --output "$TMP/no/o.pb"

finish
