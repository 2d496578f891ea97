#!/usr/bin/env bash
# Every command and program of README.md and docs/*.md, run as the
# documents show them (tests/tool/check_docs.py says how blocks are marked).
set -euo pipefail
# shellcheck source=common.bash
source "$(dirname "$0")/common.bash" docs "$@"
BUILD=$(dirname "$(dirname "$DMLC")")
# The workspace each document's commands run in: the tree's layout, with
# the files the documents name.
cat >"$TMP/setup.sh" <<SETUP
set -eu
ws=\$1
ln -s "$SRC/include" "\$ws/include"
ln -s "$SRC/examples" "\$ws/examples"
ln -s "$SRC/scripts" "\$ws/scripts"
ln -s "$BUILD" "\$ws/build"
cp "$SRC/examples/hardmax.dmlir" "\$ws/model.dmlir"
cp "$BUILD/tests/onnx/cases/symbolic_dims_bound/model.onnx" "\$ws/model.onnx"
printf 'graph @g(%%x: f32[3,4]) -> (u32[3,1]) {\n  // the node below reduces an axis the input lacks\n  %%bad = argmin %%x {axes = [5]} : u32[3,1]\n  return %%bad\n}\n' >"\$ws/bad.dmlir"
printf 'graph @g(%%x: f32[3]) -> (u32[1]) {\n  %%0 = argmx %%x {axes = [0]} : u32[1]\n  return %%0\n}\n' >"\$ws/typo.dmlir"
SETUP
# A sanitized build's library needs its runtime linked into the programs
# the documents build with `cc` (as its .pc files add it): a cc that adds it.
path=$(dirname "$DMLC")
# (grep reads all of nm's output: with -q, nm could die of SIGPIPE and pipefail
# would call the library unsanitized)
if nm -D "$BUILD/lib/libdmlc.so" 2>/dev/null | grep __asan_init >/dev/null; then
  mkdir "$TMP/bin"
  printf '#!/bin/sh\nexec /usr/bin/cc -fsanitize=address,undefined "$@"\n' >"$TMP/bin/cc"
  chmod +x "$TMP/bin/cc"
  path=$TMP/bin:$path
  # The programs link libasan after libdmlc's own needs are resolved.
  export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0"
fi
PATH="$path:$PATH" "$PY" "$SRC/tests/tool/check_docs.py" "$TMP/setup.sh" \
  "$SRC/README.md" "$SRC"/docs/*.md
