#!/usr/bin/env bash
# dmlc compile: every kind built so far accepted by its consumer, AOT objects
# linked into a C program giving the reference device's bytes (sequential,
# parallel and caller-workspace entry points), no undefined symbols beyond
# memset/memcpy/memmove, reproducible output, and bad input.
set -euo pipefail
# shellcheck source=common.bash
source "$(dirname "$0")/common.bash" compile "$@"

# npy_same A B: the same dtype, shape and bytes.
npy_same() {
  "$PY" - "$1" "$2" <<'PYEOF'
import sys
import numpy as np
a, b = (np.load(p) for p in sys.argv[1:3])
if a.dtype != b.dtype or a.shape != b.shape or a.tobytes() != b.tobytes():
    print(f"  {sys.argv[1]}: {a.dtype}{list(a.shape)} {a.ravel()[:16].tolist()}")
    print(f"  {sys.argv[2]}: {b.dtype}{list(b.shape)} {b.ravel()[:16].tolist()}")
    sys.exit(1)
PYEOF
}

# aot_matches_reference FILE TAG: FILE compiled to an object and linked into
# the driver gives, through each entry point, the reference device's bytes.
aot_matches_reference() {
  local file=$1 tag=$2 dir=$TMP/$2
  mkdir -p "$dir"
  if ! "$DMLC" compile "$file" -o "$dir/m" --emit=obj,header --name m 2>"$dir/err"; then
    fail "$tag: compile: $(cat "$dir/err")"
    return
  fi
  if ! cc -O1 -DMODEL=m -include "$dir/m.h" "$SRC/tests/tool/aot_driver.c" "$dir/m.o" \
    -o "$dir/drv" 2>"$dir/err"; then
    fail "$tag: link: $(cat "$dir/err")"
    return
  fi
  local ni no i mode
  ni=$(sed -n 's/^#define m_NUM_INPUTS //p' "$dir/m.h")
  no=$(sed -n 's/^#define m_NUM_OUTPUTS //p' "$dir/m.h")
  for mode in seq par ws; do
    local ins=() outs=() refs=() args=()
    for ((i = 0; i < ni; i++)); do ins+=("$dir/in$i.npy"); args+=(--input "$dir/in$i.npy"); done
    for ((i = 0; i < no; i++)); do
      outs+=("$dir/$mode$i.npy")
      refs+=("$dir/ref$i.npy")
      args+=(--output "$dir/ref$i.npy")
    done
    if ! "$dir/drv" "$mode" 11 "${ins[@]}" "${outs[@]}" 2>"$dir/err"; then
      fail "$tag ($mode): the driver: $(cat "$dir/err")"
      continue
    fi
    if ! "$DMLC" run "$file" --device=reference --quiet "${args[@]}" >/dev/null 2>"$dir/err"; then
      fail "$tag: dmlc run --device=reference: $(cat "$dir/err")"
      continue
    fi
    for ((i = 0; i < no; i++)); do
      if npy_same "$dir/$mode$i.npy" "$dir/ref$i.npy"; then pass; else fail "$tag ($mode): output $i differs from the reference"; fi
    done
  done
}

# ---- every example with packed layouts, against the reference ----
for ex in "$SRC"/examples/*.dmlir; do
  base=$(basename "$ex" .dmlir)
  # layouts.dmlir has strided and broadcast bindings: the driver writes
  # packed .npy files only.
  [ "$base" = layouts ] && continue
  aot_matches_reference "$ex" "$base"
done

# ---- an f16 graph (reads widened in integer operations on baseline x86-64) ----
cat >"$TMP/f16.dmlir" <<'GRAPH'
graph @h(%x: f16[5,9]) -> (i64[5,1], f16[5,9]) {
  %0 = argmax %x {axes = [1]} : i64[5,1]
  %1 = hardmax %x {axes = [1]} : f16[5,9]
  return %0, %1
}
GRAPH
aot_matches_reference "$TMP/f16.dmlir" f16

# Large enough for parallel_for (kernels of 32 KiB or more), two kernels.
cat >"$TMP/big.dmlir" <<'GRAPH'
graph @big(%x: f32[96,1024]) -> (u32[1,1024], f32[96,1024]) {
  %0 = argmax %x {axes = [0]} : u32[1,1024]
  %1 = hardmax %x {axes = [1]} : f32[96,1024]
  return %0, %1
}
GRAPH
AOT_EXPECT_PARALLEL=1 aot_matches_reference "$TMP/big.dmlir" big
if [ "$(uname -m)" = x86_64 ]; then
  "$DMLC" compile "$TMP/f16.dmlir" -o "$TMP/f16_base.o" --mcpu=x86-64
  undefined=$(nm -u "$TMP/f16_base.o" | awk '{print $2}' | grep -Ev '^(memset|memcpy|memmove)$' || true)
  if [ -z "$undefined" ]; then pass; else fail "baseline x86-64 f16 object needs: $undefined"; fi
fi

# ---- aarch64: cross-compiled, run under qemu, the host's bytes ----
# (scripts/setup.sh installs gcc-aarch64-linux-gnu, libc6-dev-arm64-cross
# and qemu-user; without them this part fails.)
cross_matches_host() {
  local file=$1 tag=$2 dir=$TMP/$2
  if ! "$DMLC" compile "$file" -o "$dir/a64" --emit=obj,header --name m \
    --target=aarch64-linux-gnu 2>"$dir/err"; then
    fail "$tag (aarch64): compile: $(cat "$dir/err")"
    return
  fi
  local undefined
  undefined=$(nm -u "$dir/a64.o" | awk '{print $2}' | grep -Ev '^(memset|memcpy|memmove)$' || true)
  if [ -z "$undefined" ]; then pass; else fail "$tag (aarch64): undefined symbols $undefined"; fi
  if ! aarch64-linux-gnu-gcc -O1 -DMODEL=m -include "$dir/a64.h" "$SRC/tests/tool/aot_driver.c" \
    "$dir/a64.o" -o "$dir/drv_a64" 2>"$dir/err"; then
    fail "$tag (aarch64): link: $(cat "$dir/err")"
    return
  fi
  local ni no i ins=() outs=()
  ni=$(sed -n 's/^#define m_NUM_INPUTS //p' "$dir/a64.h")
  no=$(sed -n 's/^#define m_NUM_OUTPUTS //p' "$dir/a64.h")
  for ((i = 0; i < ni; i++)); do ins+=("$dir/a64in$i.npy"); done
  for ((i = 0; i < no; i++)); do outs+=("$dir/a64out$i.npy"); done
  if ! qemu-aarch64 -L /usr/aarch64-linux-gnu "$dir/drv_a64" par 11 "${ins[@]}" "${outs[@]}" \
    2>"$dir/err"; then
    fail "$tag (aarch64): qemu: $(cat "$dir/err")"
    return
  fi
  for ((i = 0; i < no; i++)); do
    # seq$i.npy: the host object's output on the same generated inputs.
    if cmp -s "$dir/a64out$i.npy" "$dir/seq$i.npy"; then pass; else fail "$tag (aarch64): output $i differs from the host's"; fi
  done
}
for ex in "$SRC"/examples/*.dmlir; do
  base=$(basename "$ex" .dmlir)
  [ "$base" = layouts ] && continue
  cross_matches_host "$ex" "$base"
done
cross_matches_host "$TMP/f16.dmlir" f16
# Non-adjacent reduced axes: merged rows ([r,k,r], hardmax too) and merged
# columns ([r,k,r,k]), on aarch64 as on the host.
cat >"$TMP/merged.dmlir" <<'GRAPH'
graph @merged(%x: f32[4,6,37], %y: i8[3,5,4,40]) -> (i64[1,6,1], f32[4,6,37], u32[1,5,1,40]) {
  %0 = argmin %x {axes = [0, 2]} : i64[1,6,1]
  %1 = hardmax %x {axes = [0, 2]} : f32[4,6,37]
  %2 = argmax %y {axes = [0, 2]} : u32[1,5,1,40]
  return %0, %1, %2
}
GRAPH
aot_matches_reference "$TMP/merged.dmlir" merged
cross_matches_host "$TMP/merged.dmlir" merged
# Short packed rows (groups of rows de-interleaved by shuffles).
cat >"$TMP/short.dmlir" <<'GRAPH'
graph @short(%x: f16[50,7], %y: u8[70,3]) -> (i64[50,1], u32[70,1]) {
  %0 = argmax %x {axes = [1]} : i64[50,1]
  %1 = argmin %y {axes = [1]} : u32[70,1]
  return %0, %1
}
GRAPH
aot_matches_reference "$TMP/short.dmlir" short
cross_matches_host "$TMP/short.dmlir" short

# ---- metadata and dot: every example, and the two-kernel graph ----
meta_check() {
  local file=$1 tag=$2 dir=$TMP/meta_$2
  mkdir -p "$dir"
  if ! "$DMLC" compile "$file" -o "$dir/m" --emit=metadata,dot,header --name m 2>"$dir/err"; then
    fail "$tag: metadata/dot: $(cat "$dir/err")"
    return
  fi
  if "$PY" - "$dir/m.json" "$dir/m.h" <<'PYEOF'; then pass; else fail "$tag: metadata disagrees with the header"; fi
import json, re, sys
meta = json.load(open(sys.argv[1]))
header = open(sys.argv[2]).read()
def macro(name):
    m = re.search(r"^#define m_%s (.*)$" % name, header, re.M)
    return m.group(1).strip()
assert meta["format"] == "dmlc-aot-metadata" and meta["name"] == "m"
assert [e["symbol"] for e in meta["entry_points"]] == ["m_run", "m_run_parallel", "m_run_workspace"]
assert len(meta["inputs"]) == int(macro("NUM_INPUTS")) and len(meta["outputs"]) == int(macro("NUM_OUTPUTS"))
for kind, items in (("INPUT", meta["inputs"]), ("OUTPUT", meta["outputs"])):
    for i, io in enumerate(items):
        assert '"%s"' % io["name"] == macro("%s%d_NAME" % (kind, i))
        assert "{%s}" % ", ".join("%du" % v for v in io["sizes"]) == macro("%s%d_SIZES" % (kind, i))
        assert "%du" % io["size_bytes"] == macro("%s%d_BYTES" % (kind, i))
assert "%du" % meta["workspace_bytes"] == macro("WORKSPACE_BYTES")
assert meta["kernels"] and all(k["tasks"] >= 1 for k in meta["kernels"])
PYEOF
  check "$tag: dot -Tsvg accepts the graph" dot -Tsvg "$dir/m.dot" -o "$dir/m.svg"
  kernels=$("$PY" -c "import json,sys; print(len(json.load(open(sys.argv[1]))['kernels']))" "$dir/m.json")
  clusters=$(grep -c 'subgraph cluster_k' "$dir/m.dot" || true)
  # a cluster per fused kernel; a fused kernel whose read broadcasts a kept
  # dim runs as several of the plan's (its reduction, then copies)
  if [ "$kernels" -ge "$clusters" ]; then pass; else fail "$tag: $kernels kernels but $clusters clusters"; fi
  dumped=$("$DMLC" run "$file" --quiet --dump=kernels 2>&1 >/dev/null | grep -c '^// kernel ' || true)
  if [ "$kernels" = "$dumped" ]; then pass; else fail "$tag: $kernels kernels, dmlc run dumps $dumped"; fi
}
for ex in "$SRC"/examples/*.dmlir; do
  meta_check "$ex" "$(basename "$ex" .dmlir)"
done
meta_check "$TMP/big.dmlir" big
check "the two-kernel graph has two clusters" grep -q cluster_k1 "$TMP/meta_big/m.dot"

# ---- kinds and their consumers ----
ex=$SRC/examples/hardmax_argmax.dmlir
expect_run "all kinds built so far" 0 -- \
  "$DMLC" compile "$ex" -o "$TMP/k" --emit=ir,llvm,bc,asm,obj,staticlib,header,metadata,dot --name k
check "ir parses back" "$DMLC" opt "$TMP/k.dmlir" -o /dev/null
check "llvm-as accepts the .ll" llvm-as-19 "$TMP/k.ll" -o /dev/null
check "llc accepts the .bc" llc-19 "$TMP/k.bc" -o /dev/null
check "the C compiler assembles the .s" cc -c "$TMP/k.s" -o "$TMP/k_from_s.o"
check "the header compiles alone" cc -std=c11 -Wall -Werror -fsyntax-only -x c "$TMP/k.h"
check "the header compiles as C++" c++ -fsyntax-only -x c++ "$TMP/k.h"
undefined=$(nm -u "$TMP/k.o" | awk '{print $2}' | grep -Ev '^(memset|memcpy|memmove)$' || true)
if [ -z "$undefined" ]; then pass; else fail "undefined symbols beyond memset/memcpy/memmove: $undefined"; fi
globals=$(nm -g --defined-only "$TMP/k.o" | awk '{print $3}' | grep -v '^k_' || true)
if [ -z "$globals" ]; then pass; else fail "global symbols without the k_ prefix: $globals"; fi
check "ar lists the archive" ar t "$TMP/k.a"
# The archive's object links by its symbol index alone.
check "a program links against the .a" \
  cc -O1 -DMODEL=k -include "$TMP/k.h" "$SRC/tests/tool/aot_driver.c" "$TMP/k.a" -o "$TMP/k_drv"
check "and runs" "$TMP/k_drv" seq 3 "$TMP/kin.npy" "$TMP/kout0.npy" "$TMP/kout1.npy"

# A shared library, linked by the C compiler, gives the object's bytes.
expect_run "sharedlib" 0 -- "$DMLC" compile "$ex" -o "$TMP/libk.so" --name k
exported=$(nm -D --defined-only "$TMP/libk.so" | awk '$2 == "T" {print $3}' | sort | tr '\n' ' ')
if [ "$exported" = "k_run k_run_parallel k_run_workspace " ]; then pass; else fail "the .so exports '$exported'"; fi
check "a program links against the .so" \
  cc -O1 -DMODEL=k -include "$TMP/k.h" "$SRC/tests/tool/aot_driver.c" -L"$TMP" -lk -o "$TMP/k_so_drv"
check "and runs" env LD_LIBRARY_PATH="$TMP" "$TMP/k_so_drv" seq 3 "$TMP/kin.npy" "$TMP/kso0.npy" "$TMP/kso1.npy"
check "with the .a's bytes (output 0)" cmp "$TMP/kout0.npy" "$TMP/kso0.npy"
check "with the .a's bytes (output 1)" cmp "$TMP/kout1.npy" "$TMP/kso1.npy"
expect_run "a linker that fails" 1 --err "linking the shared library with false failed" -- \
  env CC=false "$DMLC" compile "$ex" -o "$TMP/bad.so"

# Two models in one program.
"$DMLC" compile "$SRC/examples/argmax.dmlir" -o "$TMP/two" --emit=obj,header --name two
cat >"$TMP/both.c" <<'EOF'
#include "k.h"
#include "two.h"
int main(void) {
  float x[6] = {0}, kx[8] = {0};
  unsigned char ko[64], tout[64];
  const void *ti[1] = {x}, *ki[1] = {kx};
  void *to[1] = {tout}, *kout[2] = {ko, ko + 32};
  return two_run(ti, to) | k_run(ki, kout);
}
EOF
check "two models link into one program" cc -I"$TMP" "$TMP/both.c" "$TMP/k.o" "$TMP/two.o" -o "$TMP/both"
check "and both run" "$TMP/both"

# ---- reproducible: another directory, another path, another time ----
mkdir -p "$TMP/a" "$TMP/b/c"
cp "$ex" "$TMP/b/c/other_name.dmlir"
(cd "$TMP/a" && "$DMLC" compile "$ex" -o r --emit=obj,staticlib,sharedlib,header,llvm,asm,metadata,dot --name r)
sleep 1
(cd "$TMP/b" && "$DMLC" compile c/other_name.dmlir -o r --emit=obj,staticlib,sharedlib,header,llvm,asm,metadata,dot --name r)
for e in o a so h ll s json dot; do
  check "reproducible .$e" cmp "$TMP/a/r.$e" "$TMP/b/r.$e"
done

# ---- the host's defaults tune for its caches, as the JIT does ----
# A 256 MiB f32 row argmax. Named explicitly (--mcpu, the host's CPU), the
# target's caches are unknown: the rows are prefetched, at the CPU's widest
# vectors. With the defaults the host's last-level cache decides, as for
# the JIT (codegen/llvm/jit.c): a read past three quarters of it comes from
# DRAM, with no stream prefetches (on a Zen 5, whose tuning has
# far_row_prefetch, prefetches 16 KiB ahead instead of 1 KiB), and on AVX-512
# at 32 bytes a vector.
cat >"$TMP/big_rows.dmlir" <<'EOF'
graph @big_rows(%x: f32[8192,8192]) -> (u32[8192,1]) {
  %0 = argmax %x {axes = [1]} : u32[8192,1]
  return %0
}
EOF
host_cpu=$(llc-19 --version | sed -n 's/^ *Host CPU: *//p')
# the last-level cache the JIT assumes, as `dmlc devices` says (sysfs's, or
# the C library's, an AMD CPU's capped at one core complex's 32 MiB). The
# listing opens Vulkan too: under ASan (scripts/sanitize.sh) without leak
# checks, as the Vulkan tests run, since lavapipe on a Zen 3 leaked 128
# bytes from a module it had unloaded, and LeakSanitizer's exit dropped
# the buffered listing.
llc_kib=$(ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0 "$DMLC" devices |
  sed -n 's/^cpu .*, last level \([0-9]*\) KiB.*/\1/p')
llc_bytes=$((${llc_kib:-0} * 1024))
check "host tuning: default .ll" "$DMLC" compile "$TMP/big_rows.dmlir" -o "$TMP/tuned.ll"
check "host tuning: --mcpu=$host_cpu .ll" \
  "$DMLC" compile "$TMP/big_rows.dmlir" -o "$TMP/named.ll" --mcpu="$host_cpu"
named_pf=$(grep -c 'call void @llvm.prefetch' "$TMP/named.ll" || true)
tuned_pf=$(grep -c 'call void @llvm.prefetch' "$TMP/tuned.ll" || true)
check "host tuning: --mcpu prefetches the rows ($named_pf)" test "$named_pf" -gt 0
if [ "$llc_bytes" -gt 0 ] && [ "$llc_bytes" -lt $((256 * 1048576 * 4 / 3)) ]; then
  if [ "$host_cpu" = znver5 ]; then
    check "host tuning: from DRAM on a Zen 5, prefetches 16 KiB ahead ($tuned_pf)" \
      bash -c "grep -q 'i64 16384\$' '$TMP/tuned.ll' && ! grep -q 'i64 1024\$' '$TMP/tuned.ll'"
  else
    check "host tuning: from DRAM, no stream prefetches ($tuned_pf; LLC $llc_bytes)" \
      test "$tuned_pf" -eq 0
  fi
  if grep -qw avx512f /proc/cpuinfo; then
    check "host tuning: AVX-512, --mcpu keeps 64-byte rows" grep -q '<16 x float>' "$TMP/named.ll"
    check "host tuning: AVX-512, the default reads DRAM rows 32 bytes a vector" \
      bash -c "grep -q '<8 x float>' '$TMP/tuned.ll' && ! grep -q '<16 x float>' '$TMP/tuned.ll'"
  fi
else # no last-level cache known, or a huge one: both assume the read fits
  check "host tuning: no LLC (or a huge one), prefetched alike" test "$tuned_pf" -eq "$named_pf"
fi

# ---- the kind from the extension ----
expect_run ".o picks obj" 0 -- "$DMLC" compile "$ex" -o "$TMP/ext.o"
check ".o is an object" bash -c "file '$TMP/ext.o' 2>/dev/null | grep -q 'relocatable' || nm '$TMP/ext.o' | grep -q ' T hardmax_argmax_run'"

# ---- bad input ----
expect_run "unknown kind" 2 --err "unknown kind 'wat'" -- "$DMLC" compile "$ex" -o "$TMP/x" --emit=wat
expect_run "no kind from the extension" 2 --err "cannot tell the kind" -- "$DMLC" compile "$ex" -o "$TMP/x.zzz"
expect_run "unknown target" 1 --err "unknown target 'nonsense" -- \
  "$DMLC" compile "$ex" -o "$TMP/x.o" --target=nonsense-unknown-none
expect_run "unknown CPU" 1 --err "unknown CPU 'nonsense'" -- \
  "$DMLC" compile "$ex" -o "$TMP/x.o" --mcpu=nonsense
expect_run "unknown feature" 1 --err "unknown feature 'nonsense'" -- \
  "$DMLC" compile "$ex" -o "$TMP/x.o" --mattr=+nonsense
expect_run "a feature without its sign" 1 --err "feature 'avx2' must start with \\+ or -" -- \
  "$DMLC" compile "$ex" -o "$TMP/x.o" --mattr=avx2
if [ "$(uname -m)" = x86_64 ]; then
  # Built for a feature this CPU lacks (TBM: AMD Piledriver only): every entry
  # point returns NAME_ERROR_CPU (3) instead of dying on an illegal instruction.
  if grep -qw tbm /proc/cpuinfo; then
    fail "this CPU has TBM: pick another absent feature for the CPU check"
  else
    "$DMLC" compile "$ex" -o "$TMP/tbm" --emit=obj,header --name t --mattr=+tbm
    grep -q '^#define t_ERROR_CPU 3$' "$TMP/tbm.h" && pass || fail "no t_ERROR_CPU in the header"
    cc -O1 -DMODEL=t -include "$TMP/tbm.h" "$SRC/tests/tool/aot_driver.c" "$TMP/tbm.o" -o "$TMP/tbm_drv"
    for mode in seq par ws; do
      expect_run "CPU check ($mode)" 1 --err "run returned 3" -- \
        "$TMP/tbm_drv" "$mode" 1 "$TMP/tbm_in.npy" "$TMP/tbm_o0.npy" "$TMP/tbm_o1.npy"
    done
  fi
fi
# No SSE4a (INSERTQ, EXTRQ: about 115 ns each on a Zen 3 VM with the YMM
# registers' upper halves in use) even for a CPU that has it: u8 rows of 24
# de-interleaved drew 86-129 of them, with one CPU or two.
printf 'graph @g(%%x: u8[4096,24]) -> (u32[4096,1]) { %%0 = argmax %%x {axes = [1]} : u32[4096,1] return %%0 }\n' \
  >"$TMP/u24.dmlir"
if [ "$(uname -m)" = x86_64 ]; then
  for cpus in znver3 znver3,x86-64-v2; do
    check "--mcpu=$cpus: compiles" "$DMLC" compile "$TMP/u24.dmlir" -o "$TMP/u24.s" --mcpu="$cpus"
    check "--mcpu=$cpus: no SSE4a instruction" bash -c "! grep -qE 'insertq|extrq' '$TMP/u24.s'"
  done
  # the JIT's code for this host (an AMD CPU's would have them)
  check "JIT: the kernel's assembly" bash -c "'$DMLC' run '$TMP/u24.dmlir' --dump=asm -q >'$TMP/u24_jit.s' 2>&1"
  check "JIT: no SSE4a instruction" bash -c "! grep -qE 'insertq|extrq' '$TMP/u24_jit.s'"
fi
expect_run "bad name" 1 --err "not a C identifier" -- "$DMLC" compile "$ex" -o "$TMP/x.o" --name=1abc
expect_run "unwritable output" 1 --err "/nonexistent/dir/x.o: cannot create" -- \
  "$DMLC" compile "$ex" -o /nonexistent/dir/x.o
expect_run "no output" 2 --err "no output file" -- "$DMLC" compile "$ex"
expect_run "bad -O" 2 --err "unknown option '-O7'" -- "$DMLC" compile "$ex" -o "$TMP/x.o" -O7
expect_run "missing input file" 1 --err "cannot open" -- "$DMLC" compile "$TMP/none.dmlir" -o "$TMP/x.o"

finish
