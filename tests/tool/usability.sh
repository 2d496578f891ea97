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

# ---- 9. a directory as FILE ----
expect_run "dmlc run DIR says why" 1 \
  --err "^dmlc: error: .*examples: is a directory; FILE is an IR text file \(.dmlir\) or an ONNX model \(.onnx\)" -- \
  "$DMLC" run "$EX"

finish
