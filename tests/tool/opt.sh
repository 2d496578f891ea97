#!/usr/bin/env bash
# dmlc opt: prints the canonical IR; errors name file:line:col.
set -euo pipefail
# shellcheck source=common.bash
source "$(dirname "$0")/common.bash" opt "$@"
EX=$SRC/examples

# The seed example prints exactly as written in DESIGN.md.
cat >"$TMP/want" <<'IREOF'
graph @hardmax_example(%x: f32[2,2,2]) -> (f32[2,2,2]) {
  %0 = hardmax %x {axes = [0, 2]} : f32[2,2,2]
  return %0
}
IREOF
expect_run "opt hardmax" 0 -- "$DMLC" opt "$EX/hardmax.dmlir"
check "opt hardmax: canonical text" cmp -s "$TMP/out" "$TMP/want"

# Every example: opt succeeds, and its output is a fixed point (the printed
# text parses back and prints identically), through -o and stdin alike.
for f in "$EX"/*.dmlir; do
  name=$(basename "$f" .dmlir)
  expect_run "opt $name" 0 -- "$DMLC" opt "$f" -o "$TMP/$name.1.dmlir"
  check "opt $name: -o wrote the graph" grep -q "^graph @$name" "$TMP/$name.1.dmlir"
  check "opt $name: -o writes nothing to stdout" [ ! -s "$TMP/out" ]
  expect_run "opt $name (stdin)" 0 -- sh -c "'$DMLC' opt - < '$TMP/$name.1.dmlir'"
  check "opt $name: fixed point" cmp -s "$TMP/out" "$TMP/$name.1.dmlir"
  expect_run "opt $name --output=" 0 -- "$DMLC" opt --output="$TMP/$name.2.dmlir" "$TMP/$name.1.dmlir"
  check "opt $name: --output= same text" cmp -s "$TMP/$name.1.dmlir" "$TMP/$name.2.dmlir"
done

# Parse errors print file:line:col: error: message (clang's format), the
# line and a caret, and exit 1.
printf 'graph @g(%%x: f32[3]) -> (u32[1]) {\n  %%0 = argmx %%x {axes = [0]} : u32[1]\n  return %%0\n}\n' \
  >"$TMP/bad_op.dmlir"
expect_run "unknown op" 1 --err "^$TMP/bad_op.dmlir:2:8: error: unknown op 'argmx'\$" \
  --err '^  %0 = argmx %x \{axes = \[0\]\} : u32\[1\]$' --err '^       \^$' -- \
  "$DMLC" opt "$TMP/bad_op.dmlir"
check "unknown op: nothing on stdout" [ ! -s "$TMP/out" ]
printf 'graph @g(%%x: f32[3]) -> (u32[1]) {\n  %%0 = argmax %%x {axes = [0]} : u32[1]\n' >"$TMP/eof.dmlir"
expect_run "unexpected end" 1 --err "$TMP/eof.dmlir:[0-9]+:[0-9]+: " -- "$DMLC" opt "$TMP/eof.dmlir"
expect_run "stdin parse error" 1 --err '^<stdin>:1:1: error: ' --err '^nonsense$' --err '^\^$' -- \
  sh -c "echo nonsense | '$DMLC' opt -"
expect_run "run: parse error" 1 --err "$TMP/bad_op.dmlir:2:[0-9]+: " -- \
  "$DMLC" run "$TMP/bad_op.dmlir"

# Verifier errors name the file, the node's place and its name as written.
printf 'graph @g(%%x: f32[3]) -> (u32[1]) {\n  %%0 = argmax %%x {axes = [3]} : u32[1]\n  return %%0\n}\n' \
  >"$TMP/bad_axis.dmlir"
expect_run "axis out of range" 1 \
  --err "^$TMP/bad_axis.dmlir:2:3: error: %0 = argmax: axes\[0\] = 3 is out of range for rank 1" -- \
  "$DMLC" opt "$TMP/bad_axis.dmlir"

# Files that cannot be read or written.
expect_run "missing file" 1 --err "^dmlc: error: $TMP/none.dmlir: cannot open" -- \
  "$DMLC" opt "$TMP/none.dmlir"
expect_run "unwritable output" 1 --err "^dmlc: error: $TMP/no/dir.dmlir: cannot create" -- \
  "$DMLC" opt "$EX/hardmax.dmlir" -o "$TMP/no/dir.dmlir"

# Usage errors exit 2.
expect_run "opt: no file" 2 --err 'no input file' --err '^usage: dmlc opt' -- "$DMLC" opt
expect_run "opt: unknown flag" 2 --err "unknown option '--no-such-flag'" -- \
  "$DMLC" opt "$EX/hardmax.dmlir" --no-such-flag
expect_run "opt: two files" 2 --err 'more than one input file' -- \
  "$DMLC" opt "$EX/hardmax.dmlir" "$EX/argmax.dmlir"
expect_run "opt: -o without value" 2 --err "'-o' needs a value" -- "$DMLC" opt "$EX/hardmax.dmlir" -o

finish
