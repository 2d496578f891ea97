#!/usr/bin/env bash
# What a new user trips over (issue 15), through the dmlc command: notes for
# generated inputs and --no-generate, outputs checked before running, the
# float64 hint, verifier messages at the user's names and places, clang's
# error format with a caret and spelling suggestions, opt's dump flags,
# hand-edited kernels, and the conventions (negative axes, device names in
# any case, dmlc help, exit codes, plurals, time units, directories).
set -euo pipefail
# shellcheck source=common.bash
source "$(dirname "$0")/common.bash" usability "$@"
EX=$SRC/examples
D=$EX/data

# ---- 2. inputs filled silently ----
expect_run "generated input: a note on stderr, also with -q" 0 \
  --err "^dmlc: note: input 'x' \(f32\[2,2,2\]\) has no --input; using generated data" \
  --out "^time: " -- "$DMLC" run "$EX/hardmax.dmlir" -q
if grep -q . "$TMP/out" && [ "$(wc -l <"$TMP/out")" -eq 1 ]; then pass; else fail "-q prints only the time"; fi
expect_run "a bound input: no note" 0 -- "$DMLC" run "$EX/hardmax.dmlir" -q --input "x=$D/hardmax_x.npy"
if grep -q note "$TMP/err"; then fail "a bound input gets no note"; else pass; fi
expect_run "--no-generate: an unbound input is an error" 1 \
  --err "^dmlc: error: --no-generate: input 'x' has no --input" -- \
  "$DMLC" run "$EX/hardmax.dmlir" --no-generate
if grep -q '^time' "$TMP/out"; then fail "--no-generate ran"; else pass; fi
expect_run "--no-generate: two unbound inputs named" 1 \
  --err "inputs 'a', 'b' have no --input" -- \
  "$DMLC" run "$SRC/tests/tool/data/two_inputs.dmlir" --no-generate
expect_run "--no-generate with every input bound runs" 0 --out "^time: " -- \
  "$DMLC" run "$EX/hardmax.dmlir" --no-generate --input "x=$D/hardmax_x.npy"

# ---- 3. outputs checked before running ----
expect_run "one --output file for two outputs" 1 \
  --err "^dmlc: error: --output '.*h.npy' is given to outputs 'first' and 'last'" -- \
  "$DMLC" run "$EX/argmax_ties.dmlir" --output "$TMP/h.npy" --output "$TMP/h.npy"
if [ -e "$TMP/h.npy" ] || grep -q '^time' "$TMP/out"; then fail "two outputs, one file: it ran"; else pass; fi
touch "$TMP/h.npy"
ln -s "$TMP/h.npy" "$TMP/alias.npy"
expect_run "one --output file for two outputs, through a link" 1 --err "is given to outputs" -- \
  "$DMLC" run "$EX/argmax_ties.dmlir" --output "$TMP/h.npy" --output "$TMP/alias.npy"
cp "$D/hardmax_x.npy" "$TMP/x.npy"
cp "$TMP/x.npy" "$TMP/x.before"
expect_run "--output onto the --input file" 1 \
  --err "^dmlc: error: --output '.*x.npy' \(output 'out0'\) is the file given to --input 'x'" -- \
  "$DMLC" run "$EX/hardmax.dmlir" --input "x=$TMP/x.npy" --output "$TMP/x.npy"
check "the input file is unchanged" cmp -s "$TMP/x.npy" "$TMP/x.before"
expect_run "--output onto the --expect file" 1 --err "is the file given to --expect" -- \
  "$DMLC" run "$EX/hardmax.dmlir" --input "x=$TMP/x.npy" --output "$TMP/x.before" --expect "$TMP/x.before"
cp "$EX/hardmax.dmlir" "$TMP/g.dmlir"
expect_run "--output onto the graph's file" 1 --err "is the graph's file" -- \
  "$DMLC" run "$TMP/g.dmlir" --output "$TMP/g.dmlir"
check "the graph file is unchanged" cmp -s "$TMP/g.dmlir" "$EX/hardmax.dmlir"
expect_run "an --output in a missing directory: refused before running" 1 \
  --err "^dmlc: error: --output '.*/nodir/y.npy' cannot be created: directory '.*/nodir': No such file or directory \(checked before running\)" -- \
  "$DMLC" run "$EX/hardmax.dmlir" --output "$TMP/nodir/y.npy"
if grep -q '^time' "$TMP/out"; then fail "an unwritable output: it ran"; else pass; fi
mkdir "$TMP/adir"
expect_run "an --output that is a directory" 1 --err "'.*adir' is a directory \(checked before running\)" -- \
  "$DMLC" run "$EX/hardmax.dmlir" --output "$TMP/adir"
printf '// my notes\n' >"$TMP/c.dmlir"
cat "$EX/hardmax.dmlir" >>"$TMP/c.dmlir"
cp "$TMP/c.dmlir" "$TMP/c.before"
expect_run "opt -o onto its commented input" 1 \
  --err "^dmlc: error: -o '.*c.dmlir' is the input file; its comments would be lost" -- \
  "$DMLC" opt "$TMP/c.dmlir" -o "$TMP/c.dmlir"
check "the commented input is unchanged" cmp -s "$TMP/c.dmlir" "$TMP/c.before"
grep -v '^//' "$EX/hardmax.dmlir" >"$TMP/nc.dmlir"
expect_run "opt -o onto an input without comments rewrites it" 0 -- \
  "$DMLC" opt "$TMP/nc.dmlir" -o "$TMP/nc.dmlir"
check "rewritten in canonical form" grep -q 'hardmax %x' "$TMP/nc.dmlir"

# ---- 4. float64 ----
"$PY" -c "import numpy as np; np.save('$TMP/x64.npy', np.zeros((2, 2, 2)))"
expect_run "an f64 file for an f32 input: the fix is in the message" 1 \
  --err "x64.npy: holds f64\[2,2,2\], but input 'x' is f32\[2,2,2\] \(NumPy's default float64; convert it: x.astype\(np.float32\)\)" -- \
  "$DMLC" run "$EX/hardmax.dmlir" --input "x=$TMP/x64.npy"
printf 'graph @g(%%x: f64[3]) -> (u32[1]) {\n  %%0 = argmax %%x {axes = [0]} : u32[1]\n  return %%0\n}\n' >"$TMP/f64.dmlir"
expect_run "an f64 graph input: the fix is in the message" 1 \
  --err "input dtype f64 is not one of .* \(convert f64 data to f32, e.g. x.astype\(np.float32\) in NumPy\)" -- \
  "$DMLC" run "$TMP/f64.dmlir"

# ---- 5, 6. messages at the user's names and places, clang's format ----
printf 'graph @g(%%x: f32[3,4]) -> (u32[3,1]) {\n  // a comment\n  %%bad = argmin %%x {axes = [5]} : u32[3,1]\n  return %%bad\n}\n' \
  >"$TMP/bad.dmlir"
for cmd in opt run; do
  expect_run "$cmd: a verifier error at the node's place, with its name" 1 \
    --err "^$TMP/bad.dmlir:3:3: error: %bad = argmin: axes\[0\] = 5 is out of range for rank 2\$" \
    --err '^  %bad = argmin %x \{axes = \[5\]\} : u32\[3,1\]$' --err '^  \^$' -- "$DMLC" $cmd "$TMP/bad.dmlir"
done
expect_run "compile: the same message" 1 --err "^$TMP/bad.dmlir:3:3: error: %bad = argmin" -- \
  "$DMLC" compile "$TMP/bad.dmlir" -o "$TMP/bad.o"
printf 'graph @g(%%x: f32[3]) -> (u32[1]) {\n\t%%0 = argmx %%x {axes = [0]} : u32[1]\n  return %%0\n}\n' \
  >"$TMP/tab.dmlir"
expect_run "a parse error: the caret follows a tab" 1 \
  --err "^$TMP/tab.dmlir:2:7: error: unknown op 'argmx'\$" --err $'^\t     \\^$' -- "$DMLC" opt "$TMP/tab.dmlir"
expect_run "an unknown option: the closest spelling" 2 \
  --err "^dmlc: error: unknown option '--devcie=cpu'; did you mean '--device=cpu'\?" -- \
  "$DMLC" run "$EX/hardmax.dmlir" --devcie=cpu
expect_run "an unknown opt option" 2 --err "unknown option '--print-ir-after-al'; did you mean '--print-ir-after-all'\?" -- \
  "$DMLC" opt "$EX/hardmax.dmlir" --print-ir-after-al
expect_run "an unknown compile option" 2 --err "unknown option '--emti=obj'; did you mean '--emit=obj'\?" -- \
  "$DMLC" compile "$EX/hardmax.dmlir" -o "$TMP/h.o" --emti=obj
expect_run "an unknown option far from any" 2 --err "unknown option '--zzzzzz'\$" -- \
  "$DMLC" run "$EX/hardmax.dmlir" --zzzzzz
expect_run "an unknown device: the closest spelling" 2 --err "unknown device 'cpuu'; did you mean 'cpu'\?" -- \
  "$DMLC" run "$EX/hardmax.dmlir" --device=cpuu
expect_run "an unknown pass: the closest spelling, a usage error" 2 \
  --err "unknown pass 'fuze' in pipeline 'cse,fuze'; did you mean 'fuse'\?" -- \
  "$DMLC" opt "$EX/hardmax.dmlir" --passes=cse,fuze
expect_run "an unknown command: the closest spelling" 2 --err "unknown command 'rnu'; did you mean 'run'\?" -- \
  "$DMLC" rnu

# ---- 7. opt's dump flags ----
expect_run "--print-ir-after-all without --passes runs the default pipeline" 0 \
  --err "^dmlc: note: no --passes given: running the default pipeline \(lower-hardmax,canonicalize-axes,cse,dce,fuse\)" \
  --err "IR Dump After lower-hardmax" --err "IR Dump After fuse" --out "kernel @k0" -- \
  "$DMLC" opt "$EX/hardmax.dmlir" --print-ir-after-all
expect_run "--pass-timing without --passes times the default pipeline" 0 --err "fuse" --err "total" -- \
  "$DMLC" opt "$EX/hardmax.dmlir" --pass-timing
expect_run "--print-ir-after=UNKNOWN is rejected, also without --passes" 2 \
  --err "--print-ir-after: unknown pass 'fuze'; did you mean 'fuse'\?" -- \
  "$DMLC" opt "$EX/hardmax.dmlir" --print-ir-after=fuze
if grep -q graph "$TMP/out"; then fail "a rejected dump flag printed IR"; else pass; fi
expect_run "--print-ir-before=UNKNOWN is rejected" 2 --err "--print-ir-before: unknown pass 'dcee'; did you mean 'dce'\?" -- \
  "$DMLC" opt "$EX/hardmax.dmlir" --passes=dce --print-ir-before=dcee
expect_run "--print-ir-after a pass the pipeline does not run: a note" 0 \
  --err "^dmlc: note: --print-ir-after names 'fuse', which the pipeline 'cse' does not run; nothing is printed for it" -- \
  "$DMLC" opt "$EX/hardmax.dmlir" --passes=cse --print-ir-after=fuse
expect_run "opt without pass flags runs nothing" 0 --out "hardmax %x" -- "$DMLC" opt "$EX/hardmax.dmlir"
if grep -q . "$TMP/err"; then fail "plain opt printed to stderr"; else pass; fi

# ---- 8. hand-edited kernels are refused, not silently discarded ----
"$DMLC" opt "$EX/hardmax.dmlir" --passes=default -o "$TMP/fused.dmlir"
check "the fused file has a kernel" grep -q 'kernel @k0 \[r2, 2, r2\] reads(%x \[4, 2, 1\])' "$TMP/fused.dmlir"
expect_run "the fused file as dmlc wrote it verifies" 0 -- "$DMLC" opt "$TMP/fused.dmlir"
expect_run "the fused file as dmlc wrote it runs" 0 -- "$DMLC" run "$TMP/fused.dmlir" \
  --input "x=$D/hardmax_x.npy" --output "out0=$TMP/fused_out.npy"
check "and computes hardmax" npy_equal "$TMP/fused_out.npy" float32 \
  "[[[0, 0], [0, 1]], [[0, 1], [0, 0]]]"
sed 's/reads(%x \[4, 2, 1\])/reads(%x [4, 1, 2])/' "$TMP/fused.dmlir" >"$TMP/edited.dmlir"
for cmd in opt run; do
  expect_run "$cmd: an edited reads(...) stride is refused at the kernel" 1 \
    --err "^$TMP/edited.dmlir:2:3: error: kernel @k0 is not the kernel dmlc derives from the graph's nodes: reads\(...\) entry 0 has strides \[4, 1, 2\]; fuse derives \[4, 2, 1\] for it" \
    --err "an edited kernel would have no effect" -- "$DMLC" $cmd "$TMP/edited.dmlir"
done
expect_run "compile: the edit is refused too" 1 --err "edited.dmlir:2:3: error: kernel @k0 is not the kernel" -- \
  "$DMLC" compile "$TMP/edited.dmlir" -o "$TMP/edited.o"
check "compile wrote nothing" test ! -e "$TMP/edited.o"
sed 's/writes(%4 -> %out0 \[4, 2, 1\])/writes(%4 -> %out0 [1, 2, 4])/' "$TMP/fused.dmlir" >"$TMP/edited_w.dmlir"
expect_run "an edited writes(...) stride is refused" 1 --err "writes\(...\) entry 0 has strides \[1, 2, 4\]; fuse derives \[4, 2, 1\]" -- \
  "$DMLC" run "$TMP/edited_w.dmlir"

# ---- 9. conventions ----
printf 'graph @neg(%%x: f32[2,3]) -> (u32[2,1], f32[2,3]) {\n  %%0 = argmax %%x {axes = [-1]} : u32[2,1]\n  %%1 = hardmax %%x {axes = [-2]} : f32[2,3]\n  return %%0, %%1\n}\n' \
  >"$TMP/neg.dmlir"
"$PY" -c "import numpy as np; np.save('$TMP/neg_x.npy', np.array([[1, 5, 2], [7, 0, 3]], dtype=np.float32))"
expect_run "negative axes count from the end, as NumPy's" 0 --out "axes = \[1\]" --out "axes = \[0\]" -- \
  "$DMLC" opt "$TMP/neg.dmlir"
expect_run "negative axes run" 0 -- "$DMLC" run "$TMP/neg.dmlir" --input "x=$TMP/neg_x.npy" \
  --output "out0=$TMP/neg_a.npy" --output "out1=$TMP/neg_h.npy"
check "argmax axis=-1 as NumPy" npy_equal "$TMP/neg_a.npy" uint32 "[[1], [0]]"
check "hardmax axis=-2" npy_equal "$TMP/neg_h.npy" float32 "[[0, 1, 0], [1, 0, 1]]"
printf 'graph @neg(%%x: f32[2,3]) -> (u32[2,1]) {\n  %%0 = argmax %%x {axes = [-3]} : u32[2,1]\n  return %%0\n}\n' \
  >"$TMP/neg_bad.dmlir"
expect_run "a negative axis out of range" 1 \
  --err "^$TMP/neg_bad.dmlir:2:27: error: axis -3 is out of range for rank 2 \(negative axes count from the end: -2 to -1\)" -- \
  "$DMLC" opt "$TMP/neg_bad.dmlir"
for dev in CPU Cpu REFERENCE Default; do
  expect_run "device names in any case: $dev" 0 --out "device $(echo "$dev" | tr '[:upper:]' '[:lower:]' | sed 's/default/cpu/')" -- \
    "$DMLC" run "$EX/hardmax.dmlir" -q --device="$dev"
done
expect_run "dmlc help" 0 --out "^usage: dmlc <command>" --out "help \[COMMAND\]" --out "exit status" -- "$DMLC" help
for c in opt run devices compile; do
  "$DMLC" "$c" --help >"$TMP/want_help"
  expect_run "dmlc help $c" 0 --out "^usage: dmlc $c" -- "$DMLC" help "$c"
  check "dmlc help $c is dmlc $c --help" cmp -s "$TMP/out" "$TMP/want_help"
done
expect_run "dmlc help UNKNOWN" 2 --err "unknown command 'rum'; did you mean 'run'\?" -- "$DMLC" help rum
expect_run "run --help lists -q and --no-generate" 0 --out "-q, --quiet" --out "--no-generate" -- \
  "$DMLC" run --help
expect_run "exit 2: a usage error" 2 -- "$DMLC" run
expect_run "exit 1: any other error" 1 -- "$DMLC" run "$TMP/missing.dmlir"
expect_run "plurals: 1 task" 0 --err "^// kernel 0: 1 task, [0-9]+ bytes per task, 0 scratch bytes" -- \
  "$DMLC" run "$EX/argmax.dmlir" -q --dump=kernels
expect_run "plurals: 2 tasks" 0 --err "^// kernel 0: 2 tasks, 32 bytes per task" -- \
  "$DMLC" run "$EX/hardmax.dmlir" -q --dump=kernels
if "$DMLC" devices | grep -q '^vulkan *available'; then
  expect_run "plurals and units on vulkan: 1 workgroup, one unit per line" 0 \
    --err "^// kernel 0: workgroups of [0-9]+, 1 workgroup, 2 bindings" \
    --out "^time: [0-9.]+ (us|ms|s) \(device vulkan, 1 run, the first: includes first-use costs; kernels [0-9.]+ \1 on the device\)" -- \
    "$DMLC" run "$EX/argmax.dmlir" -q --device=vulkan --dump=kernels
fi

# ---- 9. a directory as FILE ----
expect_run "dmlc run DIR says why" 1 \
  --err "^dmlc: error: .*examples: is a directory; FILE is an IR text file \(.dmlir\) or an ONNX model \(.onnx\)" -- \
  "$DMLC" run "$EX"

finish
