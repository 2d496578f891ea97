#!/usr/bin/env bash
# dmlc compile --emit=exe: programs that read .npy inputs, run the graph and
# write .npy outputs. Every example (its own data and generated data, named
# and positional files, 1, 2 and 4 threads), every data type, strided,
# padded and broadcast layouts, a graph big enough for parallel_for and one
# whose workspace is over 1 MiB give dmlc run --device=reference's files
# byte for byte; aarch64 programs under qemu give the host's; the program is
# reproducible; every bad input is a message and exit status 1.
set -euo pipefail
# shellcheck source=common.bash
source "$(dirname "$0")/common.bash" compile_exe "$@"

# ---- the graphs besides the examples ----
G=$TMP/graphs
mkdir -p "$G"
# Big enough for parallel_for (kernels of 32 KiB or more), two kernels.
cat >"$G/big.dmlir" <<'GRAPH'
graph @big(%x: f32[96,1024]) -> (%idx: u32[1,1024], %hard: f32[96,1024]) {
  %0 = argmax %x {axes = [0]} : u32[1,1024]
  %1 = hardmax %x {axes = [1]} : f32[96,1024]
  return %0, %1
}
GRAPH
# A temporary between two kernels of just over 1 MiB: NAME_run returns
# NAME_ERROR_WORKSPACE and the program calls NAME_run_workspace.
cat >"$G/workspace.dmlir" <<'GRAPH'
graph @w(%x: f32[257,1024]) -> (u32[257,1]) {
  %0 = hardmax %x {axes = [0]} : f32[257,1024]
  %1 = argmax %0 {axes = [1]} : u32[257,1]
  return %1
}
GRAPH
cat >"$G/f16.dmlir" <<'GRAPH'
graph @h(%x: f16[5,9]) -> (i64[5,1], f16[5,9]) {
  %0 = argmax %x {axes = [1]} : i64[5,1]
  %1 = hardmax %x {axes = [1]} : f16[5,9]
  return %0, %1
}
GRAPH
# Every data type in (f64 passed through), every index type out; padded,
# permuted and broadcast inputs, strided and padded outputs.
cat >"$G/dtypes.dmlir" <<'GRAPH'
graph @dtypes(%a: f16[3,4]{strides = [1, 3]}, %b: i8[2,3,4]{strides = [16, 5, 1]},
              %c: i16[4,3], %d: i32[3,4]{strides = [0, 1]}, %e: i64[6], %f: u8[5,2],
              %g: u16[2,2,2]{strides = [1, 2, 4]}, %h: u32[7], %k: u64[3,3],
              %m: f32[4,1,3], %p: f64[2,3]{strides = [4, 1]}) ->
    (%ha: f16[3,4]{strides = [5, 1]}, %ib: u32[2,1,4], %ic: i64[1,3], %id: u64[1,4],
     %ie: i32[1], %if: u32[1,1], %ig: u64[2,1,1], %ih: i64[1], %ik: i64[3,1]{strides = [2, 1]},
     %hm: f32[4,1,3]{strides = [4, 4, 1]}, %p2: f64[2,3]{strides = [1, 2]}) {
  %0 = hardmax %a {axes = [1]} : f16[3,4]
  %1 = argmax %b {axes = [1]} : u32[2,1,4]
  %2 = argmin %c {axes = [0]} : i64[1,3]
  %3 = argmin %d {axes = [0]} : u64[1,4]
  %4 = argmax %e {axes = [0], direction = decreasing} : i32[1]
  %5 = argmax %f {axes = [0, 1]} : u32[1,1]
  %6 = argmin %g {axes = [1, 2], direction = decreasing} : u64[2,1,1]
  %7 = argmax %h {axes = [0]} : i64[1]
  %8 = argmax %k {axes = [1]} : i64[3,1]
  %9 = hardmax %m {axes = [2]} : f32[4,1,3]
  return %0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %p
}
GRAPH
# One element: the program also takes a .npy of shape ().
cat >"$G/one.dmlir" <<'GRAPH'
graph @one(%x: f32[1]) -> (%y: u32[1]) {
  %0 = argmax %x {axes = [0]} : u32[1]
  return %0
}
GRAPH

# gen_inputs GRAPH DIR SEED: DIR/in0.npy ... for every input of GRAPH (from
# the metadata): small integers (ties), and for floats NaN, infinities and
# -0; repeated along an axis the input broadcasts (stride 0).
gen_inputs() {
  "$DMLC" compile "$1" -o "$2/meta.json" --emit=metadata
  "$PY" - "$2/meta.json" "$2" "$3" <<'PYEOF'
import json, sys
import numpy as np
meta = json.load(open(sys.argv[1]))
rng = np.random.default_rng(int(sys.argv[3]))
names = {"f16": "<f2", "f32": "<f4", "f64": "<f8", "i8": "|i1", "i16": "<i2", "i32": "<i4",
         "i64": "<i8", "u8": "|u1", "u16": "<u2", "u32": "<u4", "u64": "<u8"}
for i, io in enumerate(meta["inputs"]):
    dt = np.dtype(names[io["dtype"]])
    shape = [1 if st == 0 else n for n, st in zip(io["sizes"], io["strides"])]
    lo = 0 if dt.kind == "u" else -4
    a = rng.integers(lo, 5, shape).astype(dt)
    if dt.kind == "f":
        special = np.array([np.nan, np.inf, -np.inf, -0.0], dtype=dt)
        mask = rng.random(shape) < 0.1
        a[mask] = rng.choice(special, int(mask.sum()))
    np.save(f"{sys.argv[2]}/in{i}.npy", np.ascontiguousarray(np.broadcast_to(a, io["sizes"])))
print(len(meta["inputs"]), len(meta["outputs"]),
      " ".join(io["name"] for io in meta["inputs"]), "|",
      " ".join(io["name"] for io in meta["outputs"]))
PYEOF
}

# exe_matches_reference GRAPH TAG [--data NAME=FILE...]: GRAPH compiled to a
# program gives dmlc run --device=reference's output files, byte for byte,
# on 1, 2 and 4 threads, with the files named (--input/--output) and
# positional (and with the default output paths). Without --data the inputs
# are generated. Leaves the program in $TMP/TAG/prog.
exe_matches_reference() {
  local file=$1 tag=$2 dir=$TMP/$2
  shift 2
  mkdir -p "$dir"
  if ! "$DMLC" compile "$file" -o "$dir/prog" --emit=exe 2>"$dir/err"; then
    fail "$tag: compile: $(cat "$dir/err")"
    return
  fi
  local info ni no in_names out_names i
  info=$(gen_inputs "$file" "$dir" 7)
  read -r ni no _ <<<"$info"
  read -ra in_names <<<"$(cut -d'|' -f1 <<<"$info" | cut -d' ' -f3-)"
  read -ra out_names <<<"$(cut -d'|' -f2 <<<"$info")"
  # --data NAME=FILE replaces generated inputs.
  while [ $# -gt 0 ]; do
    [ "$1" = --data ] || { echo "exe_matches_reference: bad argument $1"; exit 2; }
    for ((i = 0; i < ni; i++)); do
      if [ "${in_names[i]}" = "${2%%=*}" ]; then cp "${2#*=}" "$dir/in$i.npy"; fi
    done
    shift 2
  done
  local ref_args=() named=() positional=()
  for ((i = 0; i < ni; i++)); do
    ref_args+=(--input "${in_names[i]}=$dir/in$i.npy")
    named+=(--input "${in_names[i]}=$dir/in$i.npy")
    positional+=("$dir/in$i.npy")
  done
  for ((i = 0; i < no; i++)); do ref_args+=(--output "${out_names[i]}=$dir/ref$i.npy"); done
  if ! "$DMLC" run "$file" --device=reference --quiet "${ref_args[@]}" >/dev/null 2>"$dir/err"; then
    fail "$tag: dmlc run --device=reference: $(cat "$dir/err")"
    return
  fi
  local threads form args
  for threads in 1 2 4; do
    for form in named positional default; do
      args=()
      case $form in
      named)
        args=("${named[@]}")
        for ((i = 0; i < no; i++)); do args+=(--output "${out_names[i]}=$dir/$form$threads-$i.npy"); done
        ;;
      positional)
        args=("${positional[@]}")
        for ((i = 0; i < no; i++)); do args+=("$dir/$form$threads-$i.npy"); done
        ;;
      default) # outputs to NAME.npy in the current directory
        [ "$threads" = 2 ] || continue
        args=("${named[@]}")
        ;;
      esac
      if ! (cd "$dir" && ./prog --threads "$threads" "${args[@]}") 2>"$dir/err"; then
        fail "$tag ($form, $threads threads): $(cat "$dir/err")"
        continue
      fi
      for ((i = 0; i < no; i++)); do
        local got=$dir/$form$threads-$i.npy
        [ "$form" = default ] && got=$dir/${out_names[i]}.npy
        if cmp -s "$got" "$dir/ref$i.npy"; then pass; else fail "$tag ($form, $threads threads): output ${out_names[i]} differs from the reference"; fi
      done
    done
  done
}

# ---- every example: its own data, then generated data ----
for ex in "$SRC"/examples/*.dmlir; do
  base=$(basename "$ex" .dmlir)
  data=()
  for binding in $(grep -o -- '--input [A-Za-z_]*=examples/data/[a-z0-9_]*\.npy' "$ex" | cut -d' ' -f2); do
    data+=(--data "${binding%%=*}=$SRC/${binding#*=}")
  done
  [ ${#data[@]} -gt 0 ] || fail "$base: no example data in its comment"
  exe_matches_reference "$ex" "$base" "${data[@]}"
  exe_matches_reference "$ex" "${base}_gen"
done
for g in big workspace f16 dtypes one; do
  exe_matches_reference "$G/$g.dmlir" "$g"
done

# The big graph's kernels split into tasks that run on the threads; the
# workspace graph's temporaries go to the heap.
expect_run "parallel_for splits the big graph" 0 \
  --err 'ran on 4 threads \(4 started\); parallel_for: [1-9][0-9]* calls, [0-9]*[02-9] tasks' -- \
  "$TMP/big/prog" --threads 4 --verbose "$TMP/big/in0.npy" "$TMP/big/o1.npy" "$TMP/big/o2.npy"
expect_run "--threads 0: the online CPUs" 0 --err "ran on $(nproc) thread" -- \
  "$TMP/big/prog" --threads 0 --verbose "$TMP/big/in0.npy" "$TMP/big/o1.npy" "$TMP/big/o2.npy"
expect_run "a workspace over 1 MiB" 0 --err 'workspace: [0-9]+ bytes, on the heap' -- \
  "$TMP/workspace/prog" --threads 2 --verbose "$TMP/workspace/in0.npy" "$TMP/workspace/o.npy"
expect_run "a workspace on the stack" 0 --err 'workspace: [0-9]+ bytes, on the stack' -- \
  "$TMP/big/prog" --verbose "$TMP/big/in0.npy" "$TMP/big/o1.npy" "$TMP/big/o2.npy"

# .npy format versions 2.0 and 3.0, a Fortran-order file whose bytes are C
# order's (one dimension above 1), and shape () for a one-element input.
"$PY" - "$TMP" <<'PYEOF'
import sys
import numpy as np
t = sys.argv[1]
x = np.load(f"{t}/hardmax/in0.npy")
for v in (2, 3):
    with open(f"{t}/v{v}.npy", "wb") as f:
        np.lib.format.write_array(f, x, version=(v, 0))
np.save(f"{t}/scalar.npy", np.float32(2.5))
a = np.load(f"{t}/f16/in0.npy")
np.save(f"{t}/fortran.npy", np.asfortranarray(a))
np.save(f"{t}/fortran_row.npy", np.asfortranarray(np.arange(9, dtype="<f4").reshape(1, 9, 1)))
open(f"{t}/col.dmlir", "w").write(
    "graph @col(%x: f32[1,9,1]) -> (u32[1,1,1]) {\n"
    "  %0 = argmax %x {axes = [1]} : u32[1,1,1]\n  return %0\n}\n")
PYEOF
for v in 2 3; do
  expect_run ".npy format $v.0" 0 -- "$TMP/hardmax/prog" "$TMP/v$v.npy" "$TMP/v$v-out.npy"
  check ".npy format $v.0 gives format 1.0's output" cmp "$TMP/v$v-out.npy" "$TMP/hardmax/ref0.npy"
done
expect_run "shape () for [1]" 0 -- "$TMP/one/prog" "$TMP/scalar.npy" "$TMP/scalar-out.npy"
check "shape () for [1]: the output" npy_equal "$TMP/scalar-out.npy" uint32 "[0]"
"$DMLC" compile "$TMP/col.dmlir" -o "$TMP/col" --emit=exe
expect_run "Fortran order with one dimension above 1" 0 -- \
  "$TMP/col" "$TMP/fortran_row.npy" "$TMP/col-out.npy"
check "Fortran order with one dimension above 1: the output" npy_equal "$TMP/col-out.npy" uint32 "[[[8]]]"

# ---- aarch64: cross-compiled, run under qemu, the host program's bytes ----
cross_matches_host() {
  local file=$1 tag=$2 dir=$TMP/$2 i ins=() outs=() ni
  if ! "$DMLC" compile "$file" -o "$dir/prog_a64" --emit=exe --target=aarch64-linux-gnu 2>"$dir/err"; then
    fail "$tag (aarch64): compile: $(cat "$dir/err")"
    return
  fi
  ni=$(find "$dir" -maxdepth 1 -name 'in*.npy' | wc -l)
  for ((i = 0; i < ni; i++)); do ins+=("$dir/in$i.npy"); done
  local n
  n=$(find "$dir" -maxdepth 1 -name 'ref*.npy' | wc -l)
  for ((i = 0; i < n; i++)); do outs+=("$dir/a64-$i.npy"); done
  if ! qemu-aarch64 -L /usr/aarch64-linux-gnu "$dir/prog_a64" --threads 3 "${ins[@]}" "${outs[@]}" \
    2>"$dir/err"; then
    fail "$tag (aarch64): qemu: $(cat "$dir/err")"
    return
  fi
  for ((i = 0; i < n; i++)); do
    if cmp -s "$dir/a64-$i.npy" "$dir/positional1-$i.npy"; then pass; else fail "$tag (aarch64): output $i differs from the host's"; fi
  done
}
for tag in hardmax_argmax_gen layouts_gen big workspace f16 dtypes; do
  case $tag in
  *_gen) cross_matches_host "$SRC/examples/${tag%_gen}.dmlir" "$tag" ;;
  *) cross_matches_host "$G/$tag.dmlir" "$tag" ;;
  esac
done
check "the aarch64 program is an AArch64 executable" \
  bash -c "file '$TMP/big/prog_a64' | grep -q 'ARM aarch64'"

# ---- reproducible: another directory, another path, another time ----
mkdir -p "$TMP/ra" "$TMP/rb/c"
cp "$G/big.dmlir" "$TMP/rb/c/other_name.dmlir"
(cd "$TMP/ra" && "$DMLC" compile "$G/big.dmlir" -o prog --emit=exe)
sleep 1
(cd "$TMP/rb" && TMPDIR="$TMP/rb" "$DMLC" compile c/other_name.dmlir -o prog --emit=exe)
check "reproducible program" cmp "$TMP/ra/prog" "$TMP/rb/prog"
check "reproducible program (aarch64)" cmp "$TMP/big/prog_a64" <(cd "$TMP/rb" &&
  "$DMLC" compile c/other_name.dmlir -o prog64 --emit=exe --target=aarch64-linux-gnu && cat prog64)
check "no temporary directory left behind" test -z "$(ls "$TMP/rb" | grep dmlc-exe || true)"
expect_run "exe and obj together" 0 -- "$DMLC" compile "$G/big.dmlir" -o "$TMP/both" --emit=obj,exe
check "exe and obj together: the program" test -x "$TMP/both"
check "exe and obj together: the object" test -f "$TMP/both.o"

# ---- the program's help ----
P=$TMP/layouts/prog
expect_run "--help" 0 --out 'usage: prog \[--input NAME=X.npy\]' --out 'input +x +float32 +\(3, 3\)' \
  --out 'output +hard +float32' --out 'default: NAME.npy' --out '--threads N' -- "$P" --help

# ---- bad input: a message naming the problem, exit status 1 ----
"$PY" - "$TMP" <<'PYEOF'
import sys
import numpy as np
t = sys.argv[1]
np.save(f"{t}/f8.npy", np.zeros((3, 3), "<f8"))
np.save(f"{t}/f4_34.npy", np.zeros((3, 4), "<f4"))
np.save(f"{t}/f4_33.npy", np.arange(9, dtype="<f4").reshape(3, 3))
np.save(f"{t}/be.npy", np.zeros((3, 3), ">f4"))
np.save(f"{t}/fortran33.npy", np.asfortranarray(np.arange(9, dtype="<f4").reshape(3, 3)))
np.save(f"{t}/row_bad.npy", np.arange(9, dtype="<f4").reshape(3, 3))
good = open(f"{t}/f4_33.npy", "rb").read()
open(f"{t}/short.npy", "wb").write(good[:-5])
open(f"{t}/long.npy", "wb").write(good + b"\0")
open(f"{t}/header_cut.npy", "wb").write(good[:40])
open(f"{t}/junk.npy", "wb").write(b"this is not numpy")
open(f"{t}/bad_dict.npy", "wb").write(good[:10] + b"{'descr': '<f4', 'shape': (3, 3}".ljust(len(good) - 10 - 36) + good[-36:])
open(f"{t}/v9.npy", "wb").write(good[:6] + b"\x09\x00" + good[8:])
PYEOF
X=$TMP/f4_33.npy
cp "$SRC/examples/data/row_broadcast.npy" "$TMP/row.npy"
cd "$TMP"
expect_run "unknown input name" 1 --err "prog: error: the graph has no input named 'nope' \(its inputs: 'x', 'row'\)" -- \
  "$P" --input nope=$X --input row=$TMP/row.npy
expect_run "unknown output name" 1 --err "no output named 'nope' \(its outputs: 'idx', 'hard'\)" -- \
  "$P" --input x=$X --input row=$TMP/row.npy --output nope=$TMP/o.npy
expect_run "a missing input" 1 --err "input 'row' is missing" -- "$P" --input x=$X
expect_run "an input given twice" 1 --err "input 'x' is given twice" -- "$P" $X --input x=$X
expect_run "too many files" 1 --err "too many files: the graph has 2 inputs and 2 outputs" -- \
  "$P" $X $TMP/row.npy a.npy b.npy c.npy
expect_run "the data type" 1 --err "f8.npy: input 'x': data type is <f8; the graph wants float32 \('<f4'\)" -- \
  "$P" $TMP/f8.npy $TMP/row.npy
expect_run "the shape" 1 --err "f4_34.npy: input 'x': shape is \(3, 4\); the graph wants \(3, 3\)" -- \
  "$P" $TMP/f4_34.npy $TMP/row.npy
expect_run "shape () for [3,3]" 1 --err "input 'x': shape is \(\); the graph wants \(3, 3\)" -- \
  "$P" $TMP/scalar.npy $TMP/row.npy
expect_run "big-endian data" 1 --err "be.npy: input 'x': big-endian data \(>f4\)" -- \
  "$P" $TMP/be.npy $TMP/row.npy
expect_run "Fortran order" 1 --err "fortran33.npy: input 'x': the data is in Fortran order" -- \
  "$P" $TMP/fortran33.npy $TMP/row.npy
expect_run "truncated data" 1 --err "short.npy: input 'x': truncated data: 31 bytes, but the shape and data type need 36" -- \
  "$P" $TMP/short.npy $TMP/row.npy
expect_run "data after the array" 1 --err "long.npy: input 'x': data after the 36 bytes" -- \
  "$P" $TMP/long.npy $TMP/row.npy
expect_run "truncated header" 1 --err "header_cut.npy: input 'x': truncated header" -- \
  "$P" $TMP/header_cut.npy $TMP/row.npy
expect_run "not a .npy file" 1 --err "junk.npy: input 'x': not a .npy file" -- \
  "$P" $TMP/junk.npy $TMP/row.npy
expect_run "a malformed header" 1 --err "bad_dict.npy: input 'x': malformed header" -- \
  "$P" $TMP/bad_dict.npy $TMP/row.npy
expect_run "format version 9.0" 1 --err "v9.npy: input 'x': .npy format version 9.0" -- \
  "$P" $TMP/v9.npy $TMP/row.npy
expect_run "a missing file" 1 --err "none.npy: input 'x': cannot open: No such file" -- \
  "$P" $TMP/none.npy $TMP/row.npy
expect_run "a directory" 1 --err "input 'x': read error" -- "$P" "$TMP" $TMP/row.npy
expect_run "a broadcast input that does not repeat" 1 \
  --err "row_bad.npy: input 'row': element \(1, 0\) shares its storage with an earlier element" -- \
  "$P" $X $TMP/row_bad.npy
rm -f idx.npy hard.npy
expect_run "an unwritable output" 1 --err "/nonexistent/dir/h.npy: output 'hard': cannot create" -- \
  "$P" $X $TMP/row.npy --output hard=/nonexistent/dir/h.npy
check "no output left behind after an error" test ! -e idx.npy
expect_run "--threads not a number" 2 --err "--threads takes a number from 0 to 4096, not 'x'" -- \
  "$P" --threads x $X $TMP/row.npy
expect_run "--input without NAME=" 2 --err "--input takes NAME=FILE.npy, not 'a.npy'" -- "$P" --input a.npy
expect_run "an unknown option" 2 --err "unknown option '--frobnicate'" -- "$P" --frobnicate
expect_run "--output needs a value" 2 --err "--output needs NAME=FILE.npy" -- "$P" $X $TMP/row.npy --output
cd - >/dev/null

# ---- ONNX TensorProto (.pb) files wherever .npy files go ----
NODE=${DMLC_ONNX_TESTDATA:-/usr/share/libonnx-testdata/data/node}
if [ ! -d "$NODE/test_hardmax_example" ] || ! "$PY" -c 'import onnx' 2>/dev/null; then
  fail ".pb files: ONNX's test data at $NODE and python3-onnx are required (scripts/setup.sh installs them)"
else
  B=$TMP/pb
  mkdir -p "$B"
  # ONNX's node tests compiled from the .onnx model: the test set's input
  # gives its output_0.pb byte for byte, and dmlc run --output's bytes.
  for m in test_hardmax_example test_argmax_default_axis_example test_argmin_no_keepdims_example; do
    d=$NODE/$m/test_data_set_0
    mkdir -p "$B/$m"
    if ! "$DMLC" compile "$NODE/$m/model.onnx" -o "$B/$m/prog" --emit=exe 2>"$B/err"; then
      fail "$m: compile: $(cat "$B/err")"
      continue
    fi
    expect_run "$m: .pb in, .pb out" 0 -- "$B/$m/prog" --threads 2 "$d/input_0.pb" "$B/$m.pb"
    check "$m: the test set's output_0.pb" cmp "$B/$m.pb" "$d/output_0.pb"
    "$DMLC" run "$NODE/$m/model.onnx" --quiet --input "$d/input_0.pb" --output "$B/$m-run.pb" >/dev/null
    check "$m: dmlc run --output's bytes" cmp "$B/$m.pb" "$B/$m-run.pb"
  done
  P=$B/test_hardmax_example/prog
  X=$NODE/test_hardmax_example/test_data_set_0/input_0.pb
  Y=$NODE/test_hardmax_example/test_data_set_0/output_0.pb
  expect_run "named .pb files, .npy out" 0 -- "$P" --input x="$X" --output y="$B/hm.npy"
  check "named .pb files, .npy out: the values" "$PY" -c "
import sys, numpy as np, onnx
from onnx import numpy_helper
want = numpy_helper.to_array(onnx.load_tensor('$Y'))
got = np.load('$B/hm.npy')
sys.exit(not (got.dtype == want.dtype and got.shape == want.shape and (got == want).all()))"
  expect_run "--help says .pb" 0 --out 'on \.npy or ONNX' --out 'read input NAME from X\.npy or X\.pb' \
    --out 'ends in \.pb is an ONNX TensorProto' -- "$P" --help

  # Every data type, padded, permuted and broadcast inputs, strided outputs:
  # raw_data (numpy_helper.from_array), the typed fields as
  # onnx.helper.make_tensor writes them (packed numbers, one dims field
  # each) and by hand (one field per number, dims packed) give the .npy
  # inputs' outputs; .pb outputs are dmlc run --output's bytes and ONNX
  # reads them back.
  "$PY" - "$TMP/dtypes" "$B" <<'PYEOF'
import sys
import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper
src, out = sys.argv[1:]
names = "a b c d e f g h k m p".split()
types = {"<f2": TensorProto.FLOAT16, "<f4": TensorProto.FLOAT, "<f8": TensorProto.DOUBLE,
         "|i1": TensorProto.INT8, "<i2": TensorProto.INT16, "<i4": TensorProto.INT32,
         "<i8": TensorProto.INT64, "|u1": TensorProto.UINT8, "<u2": TensorProto.UINT16,
         "<u4": TensorProto.UINT32, "<u8": TensorProto.UINT64}

def varint(v):
    v &= (1 << 64) - 1
    b = b""
    while v >= 0x80:
        b += bytes([v & 0x7F | 0x80])
        v >>= 7
    return b + bytes([v])

def key(n, w):
    return varint(n << 3 | w)

for i, name in enumerate(names):
    a = np.load(f"{src}/in{i}.npy")
    t = types[a.dtype.str]
    raw = numpy_helper.from_array(a, name)
    open(f"{out}/raw{i}.pb", "wb").write(raw.SerializeToString())
    vals = a if t == TensorProto.FLOAT16 else a.flatten().tolist()
    typed = helper.make_tensor(name, t, a.shape, vals)
    assert not typed.HasField("raw_data")
    open(f"{out}/typed{i}.pb", "wb").write(typed.SerializeToString())
    # By hand: packed dims, then each number in a field of its own.
    field, wire = {TensorProto.FLOAT: (4, 5), TensorProto.DOUBLE: (10, 1),
                   TensorProto.INT64: (7, 0), TensorProto.UINT32: (11, 0),
                   TensorProto.UINT64: (11, 0)}.get(t, (5, 0))
    flat = a.flatten()
    if t == TensorProto.FLOAT16:
        flat = flat.view("<u2")
    b = key(1, 2) + varint(len(b"".join(varint(d) for d in a.shape)))
    b += b"".join(varint(d) for d in a.shape) + key(2, 0) + varint(t)
    for v in flat:
        b += key(field, wire)
        b += varint(int(v)) if wire == 0 else v.tobytes()
    b += key(8, 2) + varint(len(name)) + name.encode()
    open(f"{out}/hand{i}.pb", "wb").write(b)
    for kind in ("raw", "typed", "hand"):
        back = numpy_helper.to_array(onnx.load_tensor(f"{out}/{kind}{i}.pb"))
        assert back.dtype == a.dtype and back.shape == a.shape, (kind, i)
        assert back.tobytes() == a.tobytes(), (kind, i)
PYEOF
  D=$TMP/dtypes
  outs=(ha ib ic id ie if ig ih ik hm p2)
  for kind in raw typed hand; do
    args=() run_args=()
    i=0
    for name in a b c d e f g h k m p; do
      args+=("$B/$kind$i.pb")
      run_args+=(--input "$name=$B/$kind$i.pb")
      i=$((i + 1))
    done
    for ((i = 0; i < 11; i++)); do args+=("$B/$kind-out$i.npy"); done
    expect_run "every data type from $kind .pb files" 0 -- "$D/prog" --threads 2 "${args[@]}"
    for ((i = 0; i < 11; i++)); do
      if cmp -s "$B/$kind-out$i.npy" "$D/ref$i.npy"; then pass; else fail "$kind .pb inputs: output ${outs[i]} differs from the .npy inputs'"; fi
    done
  done
  args=() run_args=()
  for ((i = 0; i < 11; i++)); do
    args+=(--output "${outs[i]}=$B/out$i.pb")
    run_args+=(--output "${outs[i]}=$B/run$i.pb")
  done
  expect_run "every data type to .pb files" 0 -- "$D/prog" "${args[@]}" "$D"/in{0..10}.npy
  "$DMLC" run "$G/dtypes.dmlir" --device=reference --quiet "${run_args[@]}" \
    --input a="$D/in0.npy" --input b="$D/in1.npy" --input c="$D/in2.npy" --input d="$D/in3.npy" \
    --input e="$D/in4.npy" --input f="$D/in5.npy" --input g="$D/in6.npy" --input h="$D/in7.npy" \
    --input k="$D/in8.npy" --input m="$D/in9.npy" --input p="$D/in10.npy" >/dev/null
  for ((i = 0; i < 11; i++)); do
    if cmp -s "$B/out$i.pb" "$B/run$i.pb"; then pass; else fail "output ${outs[i]}: the .pb differs from dmlc run --output's"; fi
  done
  check "ONNX reads the .pb outputs: names, dims, data types, values" "$PY" - "$B" "$D" "${outs[@]}" <<'PYEOF'
import sys
import numpy as np
import onnx
from onnx import numpy_helper
b, d, *names = sys.argv[1:]
ok = True
for i, name in enumerate(names):
    t = onnx.load_tensor(f"{b}/out{i}.pb")
    got, want = numpy_helper.to_array(t), np.load(f"{d}/ref{i}.npy")
    if t.name != name or got.dtype != want.dtype or got.shape != want.shape or got.tobytes() != want.tobytes():
        print(f"  out{i}.pb: {t.name} {got.dtype}{got.shape}, want {name} {want.dtype}{want.shape}")
        ok = False
sys.exit(not ok)
PYEOF
  # The aarch64 program (under qemu) reads and writes the same bytes.
  if [ -x "$D/prog_a64" ]; then
    args=()
    for ((i = 0; i < 11; i++)); do args+=("$B/a64-out$i.pb"); done
    expect_run "aarch64: .pb in, .pb out" 0 -- \
      qemu-aarch64 -L /usr/aarch64-linux-gnu "$D/prog_a64" "$B"/raw{0..10}.pb "${args[@]}"
    for ((i = 0; i < 11; i++)); do
      if cmp -s "$B/a64-out$i.pb" "$B/out$i.pb"; then pass; else fail "aarch64: output ${outs[i]}: the .pb differs from the host's"; fi
    done
  fi

  # Shape () for a one-element input, as with .npy files.
  "$PY" -c "from onnx import numpy_helper; import numpy as np
open('$B/scalar.pb', 'wb').write(numpy_helper.from_array(np.array(2.5, np.float32), 'x').SerializeToString())"
  expect_run "shape () for [1] (.pb)" 0 -- "$TMP/one/prog" "$B/scalar.pb" "$B/scalar-out.npy"
  check "shape () for [1] (.pb): the output" npy_equal "$B/scalar-out.npy" uint32 "[0]"

  # Hand-made files for the hardmax model (x: FLOAT [4, 4]): accepted
  # forms, then malformed and unsupported ones.
  "$PY" - "$X" "$B" <<'PYEOF'
import struct
import sys
import numpy as np
import onnx
from onnx import TensorProto, numpy_helper
x_path, out = sys.argv[1:]
x = numpy_helper.to_array(onnx.load_tensor(x_path)).astype("<f4")
raw = x.tobytes()
flat = x.flatten().tolist()

def varint(v):
    v &= (1 << 64) - 1
    b = b""
    while v >= 0x80:
        b += bytes([v & 0x7F | 0x80])
        v >>= 7
    return b + bytes([v])

def key(n, w):
    return varint(n << 3 | w)

def vi(n, v):
    return key(n, 0) + varint(v)

def ld(n, b):
    return key(n, 2) + varint(len(b)) + b

def f32s(vals):
    return b"".join(struct.pack("<f", v) for v in vals)

dims = vi(1, 4) + vi(1, 4)
head = dims + vi(2, TensorProto.FLOAT)
files = {
    # accepted
    "ok_float_data": head + ld(4, f32s(flat)),
    "ok_float_unpacked": head + b"".join(key(4, 5) + f32s([v]) for v in flat),
    "ok_float_split": head + ld(4, f32s(flat[:5])) + key(4, 5) + f32s(flat[5:6])
    + ld(4, b"") + ld(4, f32s(flat[6:])),
    "ok_dims_packed": ld(1, varint(4) + varint(4)) + vi(2, 1) + ld(9, raw),
    "ok_dims_long_varint": key(1, 0) + b"\x84\x80\x80\x00" + vi(1, 4) + vi(2, 1) + ld(9, raw),
    "ok_unknown_fields": vi(100, 7) + key(101, 1) + bytes(8) + ld(102, b"junk") + key(103, 5)
    + bytes(4) + ld(12, b"a doc string") + head + ld(8, b"another name") + vi(14, 0)
    + ld(536870911, b"") + ld(9, raw),
    "ok_last_wins": dims + vi(2, TensorProto.DOUBLE) + vi(2, TensorProto.FLOAT)
    + ld(9, b"short") + ld(9, raw),
    # malformed
    "empty": b"",
    "wire_type_data_type": dims + ld(2, b"\x01") + ld(9, raw),
    "wire_type_dims": key(1, 5) + bytes(4) + vi(2, 1) + ld(9, raw),
    "wire_type_raw": head + key(9, 0) + varint(64),
    "group": head + key(9, 3) + ld(9, raw),
    "wire_type_7": key(20, 7) + head + ld(9, raw),
    "field_0": key(0, 0) + b"\x01" + head + ld(9, raw),
    "long_key": b"\x80\x80\x80\x80\x80\x01" + head + ld(9, raw),
    "long_varint": dims + key(2, 0) + b"\x81" + b"\x80" * 9 + b"\x00" + ld(9, raw),
    "length_past_end": head + key(9, 2) + varint(65) + raw,
    "huge_length": head + key(9, 2) + b"\xff\xff\xff\xff\x0f" + raw,
    "fixed_cut": head + ld(9, raw) + key(20, 1) + bytes(3),
    "packed_floats_cut": head + ld(4, f32s(flat)[:-1]),
    "packed_varint_cut": dims + vi(2, TensorProto.INT32) + ld(5, b"\x01" * 15 + b"\x81"),
    "nested_bad": head + ld(9, raw) + ld(13, key(1, 2) + varint(40) + b"location"),
    # unsupported or inconsistent
    "raw_size": head + ld(9, raw[:-4]),
    "bfloat16": dims + vi(2, TensorProto.BFLOAT16) + ld(9, bytes(32)),
    "type_99": dims + vi(2, 99) + ld(9, raw),
    "type_negative": dims + vi(2, -3) + ld(9, raw),
    "no_type": dims + ld(9, raw),
    "external": head + ld(13, ld(1, b"location") + ld(2, b"weights.bin")) + vi(14, 1),
    "external_location": head + vi(14, 1),
    "segment": head + ld(3, vi(1, 0) + vi(2, 16)) + ld(9, raw),
    "strings": head + ld(6, b"a"),
    "both": head + ld(9, raw) + ld(4, f32s(flat)),
    "wrong_field": head + ld(5, b"\x01" * 16),
    "too_few": head + ld(4, f32s(flat[:15])),
    "no_data": head + ld(8, b"x"),
    "double": dims + vi(2, TensorProto.DOUBLE) + ld(9, x.astype("<f8").tobytes()),
    "shape": vi(1, 2) + vi(1, 8) + vi(2, 1) + ld(9, raw),
    "rank_0": vi(2, 1) + ld(9, raw[:4]),
    "negative_dim": vi(1, -4) + vi(1, -4) + vi(2, 1) + ld(9, raw),
    "zero_dim": vi(1, 0) + vi(1, 4) + vi(2, 1),
}
for name, b in files.items():
    open(f"{out}/{name}.pb", "wb").write(b)
for name in [n for n in files if n.startswith("ok_")]:
    got = numpy_helper.to_array(onnx.load_tensor(f"{out}/{name}.pb"))
    assert got.tobytes() == raw, name
# Out of each narrow type's range: int32_data for INT8, UINT8, FLOAT16
# and UINT16 (the dtypes graph's b, f, a and g), uint64_data for UINT32 (h).
def typed(shape, t, field, bad, at):
    n = int(np.prod(shape))
    vals = [0] * n
    vals[at] = bad
    body = b"".join(varint(v) for v in vals)
    return b"".join(vi(1, d) for d in shape) + vi(2, t) + ld(field, body)
open(f"{out}/range_i8.pb", "wb").write(typed([2, 3, 4], TensorProto.INT8, 5, 300, 3))
open(f"{out}/range_u8.pb", "wb").write(typed([5, 2], TensorProto.UINT8, 5, -1, 0))
open(f"{out}/range_f16.pb", "wb").write(typed([3, 4], TensorProto.FLOAT16, 5, 70000, 11))
open(f"{out}/range_u32.pb", "wb").write(typed([7], TensorProto.UINT32, 11, 1 << 32, 6))
open(f"{out}/i8_min.pb", "wb").write(typed([2, 3, 4], TensorProto.INT8, 5, -128, 23))
PYEOF
  for f in ok_float_data ok_float_unpacked ok_float_split ok_dims_packed ok_dims_long_varint \
    ok_unknown_fields ok_last_wins; do
    expect_run "accepted: $f" 0 -- "$P" "$B/$f.pb" "$B/$f-out.pb"
    check "accepted: $f: the output" cmp "$B/$f-out.pb" "$Y"
  done
  mkdir -p "$B/dir.pb"
  bad_pb() { # bad_pb FILE MESSAGE-REGEX
    expect_run "$1.pb" 1 --err "^prog: error: $B/$1\.pb: input 'x': $2" -- "$P" "$B/$1.pb" "$B/bad-out.pb"
  }
  cd "$B"
  bad_pb empty "the file is empty, not an onnx\.TensorProto"
  bad_pb wire_type_data_type "byte 4, in onnx\.TensorProto\.data_type: field 2 has wire type 2 \(length-delimited\); the schema wants 0 \(varint\)"
  bad_pb wire_type_dims "byte 0, in onnx\.TensorProto\.dims: field 1 has wire type 5 \(32-bit\); the schema wants 0 \(varint\)"
  bad_pb wire_type_raw "byte 6, in onnx\.TensorProto\.raw_data: field 9 has wire type 0 \(varint\); the schema wants 2"
  bad_pb group "byte 6, in onnx\.TensorProto\.raw_data: wire type 3 \(group start\), which ONNX files never use"
  bad_pb wire_type_7 "byte 0, in onnx\.TensorProto: wire type 7 \(undefined\), which ONNX files never use"
  bad_pb field_0 "byte 0, in onnx\.TensorProto: field number 0, outside 1 to 536870911"
  bad_pb long_key "byte 0, in onnx\.TensorProto: a field's key over 5 bytes"
  bad_pb long_varint "byte 5, in onnx\.TensorProto\.data_type: a varint over 10 bytes"
  bad_pb length_past_end "byte 7, in onnx\.TensorProto\.raw_data: a length of 65 bytes, but only 64 are left in the file"
  bad_pb huge_length "byte 7, in onnx\.TensorProto\.raw_data: a length of 4294967295 bytes; protobuf's limit is 2147483647"
  bad_pb fixed_cut "byte 74, in onnx\.TensorProto: a 8-byte value, but only 3 bytes are left"
  bad_pb packed_floats_cut "byte 8, in onnx\.TensorProto\.float_data: a packed array of 63 bytes, not a whole number of 4-byte values"
  bad_pb packed_varint_cut "byte 23, in onnx\.TensorProto\.int32_data: a packed array ends inside a varint"
  bad_pb nested_bad "byte 75, in onnx\.StringStringEntryProto\.key: a length of 40 bytes, but only 8 are left in the enclosing message"
  bad_pb raw_size "raw_data holds 60 bytes; shape \(4, 4\) of FLOAT needs 64"
  bad_pb bfloat16 "data type BFLOAT16 \(16\), which this program does not read"
  bad_pb type_99 "data type 99, which ONNX does not define"
  bad_pb type_negative "data type -3, which ONNX does not define"
  bad_pb no_type "data_type is missing"
  bad_pb external "its data is in an external file \('weights\.bin'\), which this program does not read \(external data\)"
  bad_pb external_location "its data is in an external file \(''\).*\(external data\)"
  bad_pb segment "a segment of a larger tensor"
  bad_pb strings "holds string_data, but its data type is FLOAT"
  bad_pb both "holds data in both raw_data and float_data"
  bad_pb wrong_field "holds FLOAT elements in int32_data; they belong in float_data or raw_data"
  bad_pb too_few "float_data holds 15 numbers; shape \(4, 4\) needs 16"
  bad_pb no_data "holds no data \(neither raw_data nor float_data\) for its 16 elements"
  bad_pb double "data type is DOUBLE; the graph wants FLOAT \(float32\)"
  bad_pb shape "shape is \(2, 8\); the graph wants \(4, 4\)"
  bad_pb rank_0 "shape is \(\); the graph wants \(4, 4\)"
  bad_pb negative_dim "dims\[0\] is -4; dims are at least 0"
  bad_pb zero_dim "shape is \(0, 4\); the graph wants \(4, 4\)"
  ln -s /dev/zero "$B/zero.pb"
  bad_pb zero "over [0-9]+ bytes, too long for a TensorProto of the input's 16 elements"
  bad_pb none "cannot open: No such file"
  bad_pb dir "read error"
  check "no output left behind after a bad .pb" test ! -e "$B/bad-out.pb"
  # The typed fields' ranges, on the dtypes graph (the other inputs raw).
  range_pb() { # range_pb INDEX FILE MESSAGE-REGEX
    local args=() i
    for ((i = 0; i < 11; i++)); do
      if [ "$i" = "$1" ]; then args+=("$B/$2.pb"); else args+=("$B/raw$i.pb"); fi
    done
    expect_run "$2.pb" 1 --err "prog: error: $B/$2\.pb: input '[a-z]': $3" -- "$D/prog" "${args[@]}"
  }
  range_pb 1 range_i8 "int32_data\[3\] is 300, outside INT8's range"
  range_pb 5 range_u8 "int32_data\[0\] is -1, outside UINT8's range"
  range_pb 0 range_f16 "int32_data\[11\] is 70000, outside FLOAT16's range"
  range_pb 7 range_u32 "uint64_data\[6\] is 4294967296, outside UINT32's range"
  expect_run "INT8's -128 in int32_data" 0 -- "$D/prog" "$B/raw0.pb" "$B/i8_min.pb" "$B"/raw{2..10}.pb
  # Every truncation of a real file, and every file above, through a
  # program built with AddressSanitizer and UBSan: a message and exit
  # status 1, never a crash or a sanitizer's report.
  printf '#!/bin/sh\nexec cc -fsanitize=address,undefined -fno-sanitize-recover=all "$@"\n' >"$B/asan-cc"
  chmod +x "$B/asan-cc"
  if CC=$B/asan-cc "$DMLC" compile "$NODE/test_hardmax_example/model.onnx" -o "$B/asan" \
    --emit=exe 2>"$B/err"; then
    size=$(stat -c %s "$X")
    bad=""
    for ((n = 0; n < size; n++)); do
      head -c "$n" "$X" >"$B/cut.pb"
      rc=0
      "$B/asan" "$B/cut.pb" "$B/cut-out.pb" 2>"$B/err" || rc=$?
      if [ "$rc" != 1 ] || ! grep -q "^asan: error: $B/cut.pb: input 'x': " "$B/err" ||
        grep -q Sanitizer "$B/err"; then bad+=" $n (exit $rc: $(head -c 300 "$B/err"))"; fi
    done
    check "every truncation of input_0.pb ($size lengths): exit 1 with a message${bad:+; not at}$bad" test -z "$bad"
    bad=""
    for f in "$B"/*.pb; do
      case $(basename "$f") in ok_* | raw* | typed* | hand* | out* | run* | range* | i8_min* | scalar* | test_* | bad-out* | cut*) continue ;; esac
      rc=0
      "$B/asan" "$f" "$B/cut-out.pb" 2>"$B/err" || rc=$?
      if [ "$rc" != 1 ] || grep -q Sanitizer "$B/err"; then bad+=" $(basename "$f") (exit $rc)"; fi
    done
    check "the bad files under AddressSanitizer${bad:+:}$bad" test -z "$bad"
    expect_run "a .pb through the sanitized program" 0 -- "$B/asan" "$B/ok_float_split.pb" "$B/asan-out.pb"
    check "a .pb through the sanitized program: the output" cmp "$B/asan-out.pb" "$Y"
  else
    fail "compiling with AddressSanitizer: $(cat "$B/err")"
  fi
  cd - >/dev/null
fi

# The CPU check: a program built for a feature this CPU lacks says so.
if [ "$(uname -m)" = x86_64 ] && ! grep -qw tbm /proc/cpuinfo; then
  "$DMLC" compile "$SRC/examples/argmax.dmlir" -o "$TMP/tbm" --emit=exe --mattr=+tbm
  expect_run "a CPU without a feature the program needs" 1 \
    --err "this CPU lacks a feature the program was built for \(x86_64[^,]*, CPU [a-z0-9-]+: one of .*tbm" -- \
    "$TMP/tbm" "$SRC/examples/data/matrix3x3.npy" "$TMP/tbm-out.npy"
fi

# ---- dmlc compile: linking ----
ex=$SRC/examples/argmax.dmlir
expect_run "a C compiler that does not exist" 1 --err "cannot run /nonexistent/cc" \
  --err "compiling and linking the program with /nonexistent/cc failed \(set CC" -- \
  env CC=/nonexistent/cc "$DMLC" compile "$ex" -o "$TMP/nocc" --emit=exe
check "no program from a failed link" test ! -e "$TMP/nocc"
expect_run "CC picks the C compiler" 0 -- env CC=clang "$DMLC" compile "$ex" -o "$TMP/clang_prog"
expect_run "the kind from an OUT without an extension" 0 -- \
  "$TMP/clang_prog" "$SRC/examples/data/matrix3x3.npy" "$TMP/clang-out.npy"
check "the program built by clang" npy_equal "$TMP/clang-out.npy" uint32 "[[1, 2, 1]]"
# The driver dmlc's build compiled (no CC, no target) and the driver's
# source compiled by CC: the same program, as far as it can tell.
"$DMLC" compile "$ex" -o "$TMP/prebuilt_prog" --emit=exe
CC=cc "$DMLC" compile "$ex" -o "$TMP/source_prog" --emit=exe
check "the prebuilt driver's help is the source's" cmp <("$TMP/prebuilt_prog" --help) \
  <("$TMP/source_prog" --help | sed 's/source_prog/prebuilt_prog/')
expect_run "the prebuilt driver runs" 0 -- "$TMP/prebuilt_prog" --threads 2 \
  "$SRC/examples/data/matrix3x3.npy" "$TMP/prebuilt-out.npy"
expect_run "the driver from source runs" 0 -- "$TMP/source_prog" --threads 2 \
  "$SRC/examples/data/matrix3x3.npy" "$TMP/source-out.npy"
check "the prebuilt driver's output" cmp "$TMP/prebuilt-out.npy" "$TMP/source-out.npy"
expect_run "the prebuilt driver's errors" 1 \
  --err "prebuilt_prog: error: .*f4_34.npy: input 'x': shape is \(3, 4\); the graph wants \(3, 3\)" -- \
  "$TMP/prebuilt_prog" "$TMP/f4_34.npy" "$TMP/p2.npy"
expect_run "compile --help says how exe links" 0 --out 'exe +\(none\) +a program' \
  --out 'sharedlib and exe link with the C compiler' -- "$DMLC" compile --help
if "$DMLC" compile --help | grep -q 'exe.*not built yet'; then fail "compile --help: exe is 'not built yet'"; else pass; fi
expect_run "an unwritable program" 1 --err "/nonexistent/dir/p" -- \
  "$DMLC" compile "$ex" -o /nonexistent/dir/p --emit=exe

finish
