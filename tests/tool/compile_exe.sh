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
expect_run "compile --help says how exe links" 0 --out 'exe +\(none\) +a program' \
  --out 'sharedlib and exe link with the C compiler' -- "$DMLC" compile --help
if "$DMLC" compile --help | grep -q 'exe.*not built yet'; then fail "compile --help: exe is 'not built yet'"; else pass; fi
expect_run "an unwritable program" 1 --err "/nonexistent/dir/p" -- \
  "$DMLC" compile "$ex" -o /nonexistent/dir/p --emit=exe

finish
