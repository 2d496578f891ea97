# shellcheck shell=bash disable=SC2034  # the variables are for the sourcing script
# Shared by the tool tests (sourced, not run: ctest runs tests/tool/*.sh).
# Usage in a script: source "$(dirname "$0")/common.bash" NAME "$@"
# Sets DMLC (the binary), SRC (the source dir), PY (python with numpy),
# TMP (a scratch dir removed on exit), and the check helpers below.
TEST_NAME=$1
if [ $# -ne 3 ]; then
  echo "usage: bash tests/tool/$TEST_NAME.sh PATH-TO-DMLC SOURCE-DIR"
  exit 2
fi
DMLC=$(realpath -m "$2")
SRC=$(realpath -m "$3")
PY=/usr/bin/python3
if [ ! -x "$DMLC" ] || [ ! -f "$SRC/examples/hardmax.dmlir" ]; then
  echo "tool.$TEST_NAME: FAIL: no dmlc binary at $2 or no dmlc source tree at $3"
  exit 1
fi
if ! "$PY" -c 'import numpy' 2>/dev/null; then
  echo "tool.$TEST_NAME: FAIL: $PY with numpy is required (scripts/setup.sh installs python3-numpy)"
  exit 1
fi
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
passed=0
failed=0

pass() { passed=$((passed + 1)); }
fail() {
  failed=$((failed + 1))
  echo "FAIL: $*"
}

# expect_run DESC WANT_RC [--out REGEX] [--err REGEX] -- CMD...
# Runs CMD; checks its exit code and that stdout / stderr match each REGEX
# (grep -E). Leaves the output in $TMP/out and $TMP/err.
expect_run() {
  local desc=$1 want=$2
  shift 2
  local out_re=() err_re=()
  while [ "$1" != "--" ]; do
    case $1 in
    --out) out_re+=("$2") ;;
    --err) err_re+=("$2") ;;
    *) echo "expect_run: bad argument $1" && exit 2 ;;
    esac
    shift 2
  done
  shift
  local rc=0
  "$@" >"$TMP/out" 2>"$TMP/err" || rc=$?
  local ok=1
  if [ "$rc" -ne "$want" ]; then
    ok=0
    echo "  exit code $rc, expected $want"
  fi
  local re
  for re in "${out_re[@]+"${out_re[@]}"}"; do
    grep -Eq -- "$re" "$TMP/out" || { ok=0; echo "  stdout lacks /$re/"; }
  done
  for re in "${err_re[@]+"${err_re[@]}"}"; do
    grep -Eq -- "$re" "$TMP/err" || { ok=0; echo "  stderr lacks /$re/"; }
  done
  if [ $ok -eq 1 ]; then
    pass
  else
    fail "$desc: $*"
    sed 's/^/  stdout: /' "$TMP/out" | head -20
    sed 's/^/  stderr: /' "$TMP/err" | head -20
  fi
}

# check DESC CMD...: passes when CMD succeeds.
check() {
  local desc=$1
  shift
  if "$@"; then pass; else fail "$desc"; fi
}

# npy_equal FILE DTYPE PYTHON-EXPR: FILE holds exactly that array and dtype.
npy_equal() {
  "$PY" - "$1" "$2" "$3" <<'PYEOF'
import sys
import numpy as np
path, dtype, expr = sys.argv[1:]
got = np.load(path)
want = np.array(eval(expr), dtype=dtype)
if got.dtype != want.dtype or got.shape != want.shape or not np.array_equal(got, want):
    print(f"  {path}: got {got.dtype}{list(got.shape)} {got.tolist()}, "
          f"want {want.dtype}{list(want.shape)} {want.tolist()}")
    sys.exit(1)
PYEOF
}

finish() {
  echo "tool.$TEST_NAME: $passed passed, $failed failed"
  [ "$failed" -eq 0 ]
}
