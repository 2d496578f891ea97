#!/usr/bin/env bash
# dmlc compile --mcpu=a,b,c: one object with a variant per CPU. Forced onto
# each variant this CPU can run, it gives the reference device's bytes
# (sequential, parallel and caller-workspace entry points); a variant the CPU
# cannot run is refused with NAME_ERROR_CPU; left to itself it picks the
# first variant in its order that the CPU runs; and the options are checked.
set -euo pipefail
# shellcheck source=common.bash
source "$(dirname "$0")/common.bash" compile_variants "$@"

if [ "$(uname -m)" != x86_64 ]; then
  # Multi-variant objects are built for x86-64 only (the CPU check is CPUID).
  expect_run "multi-variant off x86-64" 1 --err "x86-64 only" -- \
    "$DMLC" compile "$SRC/examples/hardmax.dmlir" -o "$TMP/x.o" --mcpu=generic,cortex-a72
  finish
fi

npy_same() {
  "$PY" - "$1" "$2" <<'PYEOF'
import sys
import numpy as np
a, b = (np.load(p) for p in sys.argv[1:3])
sys.exit(0 if a.dtype == b.dtype and a.shape == b.shape and a.tobytes() == b.tobytes() else 1)
PYEOF
}

# bdver4 (AMD Excavator) needs TBM and XOP, which no CPU since has: the
# variant this machine cannot run.
if grep -qw tbm /proc/cpuinfo; then
  fail "this CPU has TBM: pick another CPU it cannot run"
  finish
fi
CPUS=x86-64,x86-64-v2,haswell,skylake-avx512,znver4,bdver4

cat >"$TMP/big.dmlir" <<'GRAPH'
graph @big(%x: f32[96,1024]) -> (u32[1,1024], f32[96,1024]) {
  %0 = argmax %x {axes = [0]} : u32[1,1024]
  %1 = hardmax %x {axes = [1]} : f32[96,1024]
  return %0, %1
}
GRAPH
cat >"$TMP/f16.dmlir" <<'GRAPH'
graph @h(%x: f16[5,9]) -> (i64[5,1], f16[5,9]) {
  %0 = argmax %x {axes = [1]} : i64[5,1]
  %1 = hardmax %x {axes = [1]} : f16[5,9]
  return %0, %1
}
GRAPH

# variants_match FILE TAG
variants_match() {
  local file=$1 tag=$2 dir=$TMP/$2
  mkdir -p "$dir"
  if ! "$DMLC" compile "$file" -o "$dir/m" --emit=obj,header,asm,metadata --name m \
    --mcpu=$CPUS 2>"$dir/err"; then
    fail "$tag: compile: $(cat "$dir/err")"
    return
  fi
  local undefined
  undefined=$(nm -u "$dir/m.o" | awk '{print $2}' | grep -Ev '^(memset|memcpy|memmove)$' || true)
  [ -z "$undefined" ] && pass || fail "$tag: undefined symbols $undefined"
  local globals
  globals=$(nm -g --defined-only "$dir/m.o" | awk '{print $3}' | sort | tr '\n' ' ')
  [ "$globals" = "m_run m_run_parallel m_run_workspace m_select_variant m_variant " ] &&
    pass || fail "$tag: global symbols: $globals"
  grep -q '^#define m_NUM_VARIANTS 6$' "$dir/m.h" && pass || fail "$tag: m_NUM_VARIANTS"
  "$PY" -c 'import json, sys
d = json.load(open(sys.argv[1]))
v = d["target"]["variants"]
assert [x["cpu"] for x in v] == sys.argv[2].split(","), v
assert sorted(x["rank"] for x in v) == list(range(len(v))), v
assert {e["symbol"] for e in d["entry_points"]} >= {"m_select_variant", "m_variant"}
' "$dir/m.json" "$CPUS" && pass || fail "$tag: metadata variants"
  # The AVX-512 variants use 512-bit registers on a large graph.
  if [ "$tag" = big ]; then
    grep -q zmm "$dir/m.s" && pass || fail "$tag: no variant uses zmm registers"
  fi
  if ! cc -O1 -DMODEL=m -DM_HAS_VARIANTS -include "$dir/m.h" "$SRC/tests/tool/aot_driver.c" \
    "$dir/m.o" -o "$dir/drv" 2>"$dir/err"; then
    fail "$tag: link: $(cat "$dir/err")"
    return
  fi
  local ni no i v mode
  ni=$(sed -n 's/^#define m_NUM_INPUTS //p' "$dir/m.h")
  no=$(sed -n 's/^#define m_NUM_OUTPUTS //p' "$dir/m.h")
  local ins=() refs=() args=()
  for ((i = 0; i < ni; i++)); do ins+=("$dir/in$i.npy"); args+=(--input "$dir/in$i.npy"); done
  for ((i = 0; i < no; i++)); do refs+=("$dir/ref$i.npy"); args+=(--output "$dir/ref$i.npy"); done
  # Inputs written by a first run (any variant), then the reference on them.
  local runnable=()
  for ((v = 0; v < 6; v++)); do
    local outs=()
    for ((i = 0; i < no; i++)); do outs+=("$dir/v$v.$i.npy"); done
    if AOT_VARIANT=$v "$dir/drv" seq 11 "${ins[@]}" "${outs[@]}" 2>"$dir/err"; then
      runnable+=("$v")
    elif ! grep -q "select_variant($v) returned 3" "$dir/err"; then
      fail "$tag: variant $v: $(cat "$dir/err")"
    fi
  done
  # The baseline and x86-64-v2 run on every x86-64 CPU dmlc supports; bdver4 nowhere.
  case " ${runnable[*]} " in *" 0 1 "*) pass ;; *) fail "$tag: runnable variants: ${runnable[*]}" ;; esac
  case " ${runnable[*]} " in *" 5 "*) fail "$tag: bdver4 ran on a CPU without TBM" ;; *) pass ;; esac
  if ! "$DMLC" run "$file" --device=reference --quiet "${args[@]}" >/dev/null 2>"$dir/err"; then
    fail "$tag: dmlc run --device=reference: $(cat "$dir/err")"
    return
  fi
  for v in "${runnable[@]}"; do
    for mode in seq par ws; do
      local outs=()
      for ((i = 0; i < no; i++)); do outs+=("$dir/$mode$v.$i.npy"); done
      if ! AOT_VARIANT=$v "$dir/drv" "$mode" 11 "${ins[@]}" "${outs[@]}" 2>"$dir/err"; then
        fail "$tag: variant $v ($mode): $(cat "$dir/err")"
        continue
      fi
      for ((i = 0; i < no; i++)); do
        npy_same "${outs[$i]}" "${refs[$i]}" && pass ||
          fail "$tag: variant $v ($mode): output $i differs from the reference"
      done
    done
  done
  # Left to itself: the first variant in m_VARIANT_ORDER that this CPU runs.
  local order expected=""
  order=$(sed -n 's/^#define m_VARIANT_ORDER {\(.*\)}$/\1/p' "$dir/m.h" | tr -d ' ' | tr ',' ' ')
  for v in $order; do
    case " ${runnable[*]} " in *" $v "*) expected=$v && break ;; esac
  done
  local outs=()
  for ((i = 0; i < no; i++)); do outs+=("$dir/auto.$i.npy"); done
  expect_run "$tag: automatic choice" 0 --out "^variant $expected\$" -- \
    env AOT_PRINT_VARIANT=1 "$dir/drv" seq 11 "${ins[@]}" "${outs[@]}"
  expect_run "$tag: no such variant" 1 --err "select_variant\\(6\\) returned 4" -- \
    env AOT_VARIANT=6 "$dir/drv" seq 11 "${ins[@]}" "${outs[@]}"
  expect_run "$tag: choose again" 0 --out "^variant $expected\$" -- \
    env AOT_VARIANT=-1 AOT_PRINT_VARIANT=1 "$dir/drv" seq 11 "${ins[@]}" "${outs[@]}"
}

for ex in "$SRC"/examples/*.dmlir; do
  base=$(basename "$ex" .dmlir)
  [ "$base" = layouts ] && continue # strided bindings: the driver writes packed .npy only
  variants_match "$ex" "$base"
done
variants_match "$TMP/f16.dmlir" f16
AOT_EXPECT_PARALLEL=1 variants_match "$TMP/big.dmlir" big

# A static library of a multi-variant object indexes the variant functions.
"$DMLC" compile "$SRC/examples/hardmax.dmlir" -o "$TMP/v.a" --name v --mcpu=x86-64,haswell
nm -s "$TMP/v.a" >"$TMP/v.nm"
grep -q '^v_select_variant in' "$TMP/v.nm" && pass || fail "archive index lacks v_select_variant"
# Reproducible.
"$DMLC" compile "$SRC/examples/hardmax.dmlir" -o "$TMP/r1.o" --mcpu=x86-64,haswell,znver4
"$DMLC" compile "$SRC/examples/hardmax.dmlir" -o "$TMP/r2.o" --mcpu=x86-64,haswell,znver4
cmp -s "$TMP/r1.o" "$TMP/r2.o" && pass || fail "two compiles differ"

ex=$SRC/examples/hardmax.dmlir
expect_run "a CPU named twice" 1 --err "names CPU 'haswell' twice" -- \
  "$DMLC" compile "$ex" -o "$TMP/x.o" --mcpu=haswell,x86-64,haswell
expect_run "an empty CPU name" 1 --err "every CPU of a multi-variant object is named" -- \
  "$DMLC" compile "$ex" -o "$TMP/x.o" --mcpu=haswell,
expect_run "an unknown CPU among several" 1 --err "unknown CPU 'nonsense'" -- \
  "$DMLC" compile "$ex" -o "$TMP/x.o" --mcpu=haswell,nonsense
expect_run "multi-variant aarch64" 1 --err "x86-64 only" -- \
  "$DMLC" compile "$ex" -o "$TMP/x.o" --target=aarch64-linux-gnu --mcpu=generic,cortex-a72

finish
