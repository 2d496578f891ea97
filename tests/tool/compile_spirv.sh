#!/usr/bin/env bash
# dmlc compile --emit=spirv,spirv-asm,metadata: every module of every
# example (and of a two-kernel graph, a graph dispatched in two chunks and
# sub-word and 64-bit dtypes) accepted by spirv-val, its disassembly
# reassembled by spirv-as into a valid module, the metadata's "spirv"
# section consistent with the kernels and the files, and enough to run
# them: tests/tool/spirv_driver.c binds and dispatches the modules on the
# Vulkan device (lavapipe here) from nothing but the metadata and gives the
# reference device's bytes. Also: file naming, reproducibility across
# directories, the library's spirv:I kinds, bad input.
set -euo pipefail
# shellcheck source=common.bash
source "$(dirname "$0")/common.bash" compile_spirv "$@"

ex=$SRC/examples/hardmax_argmax.dmlir

# A dmlc built without the Vulkan backend says so, and nothing else applies.
rc=0
"$DMLC" compile "$ex" -o "$TMP/probe.spv" 2>"$TMP/probe.err" || rc=$?
if [ "$rc" -ne 0 ] && grep -q "built without" "$TMP/probe.err"; then
  expect_run "spirv without the Vulkan backend" 1 --err "needs the Vulkan backend" -- \
    "$DMLC" compile "$ex" -o "$TMP/x.spv"
  expect_run "metadata without the Vulkan backend" 0 -- "$DMLC" compile "$ex" -o "$TMP/x.json"
  check "\"spirv\": null" "$PY" -c \
    'import json, sys; assert json.load(open(sys.argv[1]))["spirv"] is None' "$TMP/x.json"
  finish
  exit
fi

if ! cc -std=c11 -O1 -Wall -Wextra -Werror "$SRC/tests/tool/spirv_driver.c" -lvulkan \
  -o "$TMP/spirv_driver" 2>"$TMP/err"; then
  fail "building spirv_driver.c against -lvulkan: $(head -5 "$TMP/err")"
fi

# The driver runs under the validation layer (synchronization included)
# where it is installed.
VALIDATE=(env)
for d in /usr/share/vulkan/explicit_layer.d /etc/vulkan/explicit_layer.d; do
  if [ -f "$d/VkLayer_khronos_validation.json" ]; then
    VALIDATE=(env VK_INSTANCE_LAYERS=VK_LAYER_KHRONOS_validation
      VK_LAYER_ENABLES=VK_VALIDATION_FEATURE_ENABLE_SYNCHRONIZATION_VALIDATION_EXT)
  fi
done

# spirv_check FILE TAG: compiles FILE to modules, disassembly and metadata;
# validates them; runs the modules from the metadata and compares with the
# reference device.
spirv_check() {
  local file=$1 tag=$2 dir=$TMP/$2
  mkdir -p "$dir"
  if ! "$DMLC" compile "$file" -o "$dir/m" --emit=spirv,spirv-asm,metadata 2>"$dir/err"; then
    fail "$tag: compile: $(cat "$dir/err")"
    return
  fi
  local n spv base
  n=$("$PY" -c "import json,sys; print(len(json.load(open(sys.argv[1]))['kernels']))" "$dir/m.json")
  local modules=()
  if [ "$n" = 1 ]; then
    modules=("$dir/m")
  else
    for ((k = 0; k < n; k++)); do modules+=("$dir/m.kernel$k"); done
  fi
  # Exactly the files the naming promises.
  local want got
  want=$(for m in "${modules[@]}"; do echo "$m.spv"; echo "$m.spvasm"; done | sort)
  got=$(find "$dir" -name 'm*.spv' -o -name 'm*.spvasm' | sort)
  if [ "$want" = "$got" ]; then pass; else fail "$tag: files $(echo "$got" | tr '\n' ' ') for $n kernels"; fi
  for base in "${modules[@]}"; do
    spv=$base.spv
    check "$tag: spirv-val $(basename "$spv")" spirv-val --target-env vulkan1.2 "$spv"
    if spirv-as --target-env vulkan1.2 "$base.spvasm" -o "$base.re.spv" 2>"$dir/err"; then
      check "$tag: spirv-val the reassembled $(basename "$base").spvasm" \
        spirv-val --target-env vulkan1.2 "$base.re.spv"
    else
      fail "$tag: spirv-as $(basename "$base").spvasm: $(cat "$dir/err")"
    fi
  done
  # The metadata: consistent with the kernels and the files; then the
  # driver's description, the inputs (as laid out, and as .npy for the
  # reference) and the reference's arguments.
  if ! "$PY" - "$dir" "${modules[@]}" <<'PYEOF' >"$dir/py.out" 2>&1; then
import json, os, sys
import numpy as np
d, modules = sys.argv[1], sys.argv[2:]
meta = json.load(open(os.path.join(d, "m.json")))
s = meta["spirv"]
assert s is not None and "error" not in s, s
assert s["target_env"] == "vulkan1.2" and s["descriptor_set"] == 0
assert s["device_features"] == [], "the portable modules need no feature"
lim = s["limits"]
assert lim["max_workgroup_size"] == 128 and lim["max_workgroup_count"] == 65535
assert s["push_constants"] == [{"offset": 0, "size": 4, "type": "uint32",
                                "meaning": "the first workgroup of the dispatch"}]
ks, sk = meta["kernels"], s["kernels"]
assert len(sk) == len(ks) == len(modules), (len(sk), len(ks), len(modules))
ni, no, nt = len(meta["inputs"]), len(meta["outputs"]), len(meta["temporaries"])
def buffer_index(b):
    return {"input": 0, "output": ni, "temporary": ni + no, "none": ni + no + nt}[b["kind"]] + b["index"]
for i, (k, m) in enumerate(zip(ks, sk)):
    assert m["kernel"] == k["index"] == i and m["entry_point"] == "main"
    assert os.path.getsize(modules[i] + ".spv") == m["module_bytes"], "module_bytes"
    ls = m["local_size"]
    assert ls[1:] == [1, 1] and 1 <= ls[0] <= lim["max_workgroup_size"] and ls[0] & (ls[0] - 1) == 0
    assert m["workgroups"] >= 1 and m["max_workgroups_per_dispatch"] == lim["max_workgroup_count"]
    assert m["dispatches"] == -(-m["workgroups"] // m["max_workgroups_per_dispatch"])
    b = m["bindings"]
    assert [x["binding"] for x in b] == list(range(1 + len(k["writes"])))
    assert b[0]["buffer"] == (k["reads"] or {"kind": "none", "index": 0}) and b[0]["readonly"]
    assert [x["buffer"] for x in b[1:]] == k["writes"] and not any(x["readonly"] for x in b[1:])
    assert all(x["descriptor_type"] == "storage_buffer" and x["count"] >= 1 for x in b)
    assert m["descriptors"] == sum(x["count"] for x in b) and not m["nonuniform_indexing"]

DT = {"bool": np.bool_, "f16": np.float16, "f32": np.float32, "f64": np.float64,
      "i8": np.int8, "i16": np.int16, "i32": np.int32, "i64": np.int64,
      "u8": np.uint8, "u16": np.uint16, "u32": np.uint32, "u64": np.uint64}
rng = np.random.default_rng(7)
def logical(raw, io):
    dt = np.dtype(DT[io["dtype"]])
    flat = np.frombuffer(raw, dtype=dt, count=len(raw) // dt.itemsize)
    return np.lib.stride_tricks.as_strided(
        flat, shape=io["sizes"], strides=[st * dt.itemsize for st in io["strides"]])
desc = ["buffers %d" % (ni + no + nt + 1)]
ref_args = []
for i, io in enumerate(meta["inputs"]):
    dt = np.dtype(DT[io["dtype"]])
    count = io["size_bytes"] // dt.itemsize
    if dt.kind == "b":
        vals = rng.integers(0, 2, count).astype(dt)
    elif dt.kind == "u":
        vals = rng.integers(0, 7, count).astype(dt)
    else:
        vals = rng.integers(-3, 4, count).astype(dt)
        if dt.kind == "f":
            specials = np.array([np.nan, np.inf, -np.inf, -0.0], dtype=dt)
            pick = rng.random(count) < 0.1
            vals[pick] = specials[rng.integers(0, 4, int(pick.sum()))]
    raw = bytearray(io["size_bytes"])
    raw[: vals.nbytes] = vals.tobytes()
    open(os.path.join(d, "in%d.bin" % i), "wb").write(raw)
    np.save(os.path.join(d, "in%d.npy" % i), np.ascontiguousarray(logical(bytes(raw), io)))
    desc.append("%d %s -" % (io["size_bytes"], os.path.join(d, "in%d.bin" % i)))
    ref_args += ["--input", "%s=%s" % (io["name"], os.path.join(d, "in%d.npy" % i))]
for o, io in enumerate(meta["outputs"]):
    desc.append("%d - %s" % (io["size_bytes"], os.path.join(d, "out%d.bin" % o)))
    ref_args += ["--output", "%s=%s" % (io["name"], os.path.join(d, "ref%d.npy" % o))]
for t in meta["temporaries"]:
    desc.append("%d - -" % t["bytes"])
desc.append("4 - -")  # bound where a kernel reads nothing
for suffix in ("spv", "re.spv"):
    lines = desc + ["kernels %d" % len(sk)]
    for i, m in enumerate(sk):
        lines.append("%s.%s %s %d %d %d" % (modules[i], suffix, m["entry_point"], m["workgroups"],
                                           m["max_workgroups_per_dispatch"], len(m["bindings"])))
        for x in m["bindings"]:
            lines.append("  %d %d %d" % (buffer_index(x["buffer"]), x["count"], x["window_bytes"]))
    open(os.path.join(d, "desc.%s.txt" % suffix), "w").write("\n".join(lines) + "\n")
open(os.path.join(d, "ref_args"), "w").write("\n".join(ref_args) + "\n")
PYEOF
    fail "$tag: metadata: $(tail -5 "$dir/py.out")"
    return
  fi
  pass
  local args=()
  mapfile -t args <"$dir/ref_args"
  if ! "$DMLC" run "$file" --device=reference --quiet "${args[@]}" >/dev/null 2>"$dir/err"; then
    fail "$tag: dmlc run --device=reference: $(cat "$dir/err")"
    return
  fi
  local suffix
  for suffix in spv re.spv; do
    if ! "${VALIDATE[@]}" "$TMP/spirv_driver" "$dir/desc.$suffix.txt" >"$dir/err" 2>&1; then
      fail "$tag: spirv_driver (.$suffix): $(cat "$dir/err")"
      continue
    fi
    if grep -q "Validation Error" "$dir/err"; then
      fail "$tag: the validation layer (.$suffix): $(head -c 2000 "$dir/err")"
    else
      pass
    fi
    if "$PY" - "$dir" <<'PYEOF'; then pass; else fail "$tag: outputs of the .$suffix modules differ from the reference"; fi
import json, os, sys
import numpy as np
d = sys.argv[1]
meta = json.load(open(os.path.join(d, "m.json")))
DT = {"bool": np.bool_, "f16": np.float16, "f32": np.float32, "f64": np.float64,
      "i8": np.int8, "i16": np.int16, "i32": np.int32, "i64": np.int64,
      "u8": np.uint8, "u16": np.uint16, "u32": np.uint32, "u64": np.uint64}
ok = True
for o, io in enumerate(meta["outputs"]):
    dt = np.dtype(DT[io["dtype"]])
    raw = open(os.path.join(d, "out%d.bin" % o), "rb").read()
    flat = np.frombuffer(raw, dtype=dt, count=len(raw) // dt.itemsize)
    got = np.lib.stride_tricks.as_strided(
        flat, shape=io["sizes"], strides=[st * dt.itemsize for st in io["strides"]])
    want = np.load(os.path.join(d, "ref%d.npy" % o))
    if got.dtype != want.dtype or got.shape != want.shape or \
            np.ascontiguousarray(got).tobytes() != want.tobytes():
        print("  output %d: got %s, want %s" % (o, got.ravel()[:16].tolist(), want.ravel()[:16].tolist()))
        ok = False
sys.exit(0 if ok else 1)
PYEOF
  done
}

for f in "$SRC"/examples/*.dmlir; do
  spirv_check "$f" "$(basename "$f" .dmlir)"
done

# Two kernels over one big input.
cat >"$TMP/two.dmlir" <<'GRAPH'
graph @two(%x: f32[96,1024]) -> (u32[1,1024], f32[96,1024]) {
  %0 = argmax %x {axes = [0]} : u32[1,1024]
  %1 = hardmax %x {axes = [1]} : f32[96,1024]
  return %0, %1
}
GRAPH
spirv_check "$TMP/two.dmlir" two
# Two kernels through a temporary (the second reads what the first wrote).
cat >"$TMP/chain.dmlir" <<'GRAPH'
graph @chain(%x: f32[8,16]) -> (u32[1,1]) {
  %0 = argmax %x {axes = [1]} : u32[8,1]
  %1 = argmax %0 {axes = [0]} : u32[1,1]
  return %1
}
GRAPH
spirv_check "$TMP/chain.dmlir" chain
"$PY" -c 'import json, sys; m = json.load(open(sys.argv[1])); assert m["temporaries"] and m["spirv"]["kernels"][1]["bindings"][0]["buffer"]["kind"] == "temporary"' \
  "$TMP/chain/m.json" && pass || fail "chain: no temporary between the kernels"
# More workgroups than one dispatch may have (65535): two dispatches.
cat >"$TMP/chunks.dmlir" <<'GRAPH'
graph @chunks(%x: u8[66000,32]) -> (i64[66000,1]) {
  %0 = argmin %x {axes = [1]} : i64[66000,1]
  return %0
}
GRAPH
spirv_check "$TMP/chunks.dmlir" chunks
"$PY" -c 'import json, sys; assert json.load(open(sys.argv[1]))["spirv"]["kernels"][0]["dispatches"] == 2' \
  "$TMP/chunks/m.json" && pass || fail "chunks: not two dispatches"
# An input over 2^27 bytes: bound as two windows.
cat >"$TMP/windows.dmlir" <<'GRAPH'
graph @windows(%x: u8[1048577,128]) -> (u32[1048577,1]) {
  %0 = argmax %x {axes = [1]} : u32[1048577,1]
  return %0
}
GRAPH
spirv_check "$TMP/windows.dmlir" windows
"$PY" -c 'import json, sys; b = json.load(open(sys.argv[1]))["spirv"]["kernels"][0]["bindings"][0]; assert b["count"] == 2 and b["window_bytes"] == 1 << 27, b' \
  "$TMP/windows/m.json" && pass || fail "windows: the input is not two windows"
# Sub-word and 64-bit element types, strided and broadcast.
cat >"$TMP/dtypes.dmlir" <<'GRAPH'
graph @dtypes(%a: f16[7,5], %b: i16[5,3]{strides = [1, 5]}, %c: i64[4,6]{strides = [0, 1]}, %d: u8[3,37], %e: i8[9]) -> (i32[7,1], %h: f16[7,5]{strides = [1, 7]}, u64[1,3], i64[1,6], u32[3,1], i32[1]) {
  %0 = argmax %a {axes = [1]} : i32[7,1]
  %1 = hardmax %a {axes = [1]} : f16[7,5]
  %2 = argmax %b {axes = [0]} : u64[1,3]
  %3 = argmin %c {axes = [0], direction = decreasing} : i64[1,6]
  %4 = argmax %d {axes = [1]} : u32[3,1]
  %5 = argmin %e {axes = [0]} : i32[1]
  return %0, %1, %2, %3, %4, %5
}
GRAPH
spirv_check "$TMP/dtypes.dmlir" dtypes

# ---- naming ----
expect_run "one kernel, one kind: OUT itself" 0 -- "$DMLC" compile "$ex" -o "$TMP/n1" --emit=spirv
check "OUT is the module" spirv-val "$TMP/n1"
expect_run "the kind from .spv, several kernels" 0 -- "$DMLC" compile "$TMP/two.dmlir" -o "$TMP/n2.spv"
check "STEM.kernel0.spv" spirv-val "$TMP/n2.kernel0.spv"
check "STEM.kernel1.spv" spirv-val "$TMP/n2.kernel1.spv"
check "no STEM.kernel2.spv" test ! -e "$TMP/n2.kernel2.spv"
check "no OUT" test ! -e "$TMP/n2.spv"
expect_run "the kind from .spvasm" 0 -- "$DMLC" compile "$ex" -o "$TMP/n3.spvasm"
check ".spvasm is text" grep -q 'OpEntryPoint GLCompute .* "main"' "$TMP/n3.spvasm"
if [ -s "$TMP/out" ]; then fail "compile printed on success: $(cat "$TMP/out")"; else pass; fi

# ---- reproducible: another directory, another path, another time ----
mkdir -p "$TMP/ra" "$TMP/rb/c"
cp "$TMP/two.dmlir" "$TMP/rb/c/other_name.dmlir"
(cd "$TMP/ra" && "$DMLC" compile "$TMP/two.dmlir" -o r --emit=spirv,spirv-asm,metadata)
sleep 1
(cd "$TMP/rb" && "$DMLC" compile c/other_name.dmlir -o r --emit=spirv,spirv-asm,metadata)
for f in r.kernel0.spv r.kernel1.spv r.kernel0.spvasm r.kernel1.spvasm r.json; do
  check "reproducible $f" cmp "$TMP/ra/$f" "$TMP/rb/$f"
done

# ---- the library: spirv:I, and what it refuses ----
BUILD=$(dirname "$(dirname "$DMLC")")
if [ -f "$BUILD/lib/libdmlc.so" ] && [ -f "$BUILD/CMakeCache.txt" ]; then
  san=()
  # DMLC_SANITIZE is ON (a BOOL before it also took "thread") or address.
  grep -Eq '^DMLC_SANITIZE:(BOOL|STRING)=(ON|address)$' "$BUILD/CMakeCache.txt" &&
    san=(-fsanitize=address,undefined)
  cat >"$TMP/api.c" <<'EOF'
#include <stdio.h>
#include <string.h>
#include "dmlc/dmlc.h"
/* api GRAPH KIND: emits KIND; prints the status and the message. */
int main(int argc, char **argv) {
  (void)argc;
  FILE *f = fopen(argv[1], "rb");
  static char text[1 << 16];
  const size_t n = f ? fread(text, 1, sizeof text - 1, f) : 0;
  if (f)
    fclose(f);
  text[n] = '\0';
  dmlc_context *ctx = NULL;
  dmlc_graph *g = NULL;
  if (dmlc_context_create(&ctx) != DMLC_OK || dmlc_graph_parse(ctx, text, n, argv[1], &g) != DMLC_OK)
    return 3;
  const dmlc_aot_options o = {NULL, NULL, NULL, NULL, 2};
  void *data = NULL;
  size_t size = 0;
  const dmlc_status s = dmlc_graph_emit(g, argv[2], &o, &data, &size);
  printf("status %d size %zu\n%s\n", (int)s, size, s == DMLC_OK ? "" : dmlc_context_error(ctx));
  if (s == DMLC_OK && strstr(argv[2], "asm") == NULL) {
    FILE *out = fopen(argv[3], "wb");
    fwrite(data, 1, size, out);
    fclose(out);
  }
  dmlc_free(data);
  dmlc_graph_destroy(g);
  dmlc_context_destroy(ctx);
  return 0;
}
EOF
  if cc -std=c11 "${san[@]}" -I"$SRC/include" "$TMP/api.c" -L"$BUILD/lib" -ldmlc \
    -Wl,-rpath,"$BUILD/lib" -o "$TMP/api" 2>"$TMP/err"; then
    expect_run "API spirv:1" 0 --out "status 0" -- "$TMP/api" "$TMP/two.dmlir" spirv:1 "$TMP/api1.spv"
    check "API spirv:1 is the tool's kernel 1" cmp "$TMP/api1.spv" "$TMP/n2.kernel1.spv"
    expect_run "API spirv-asm:0" 0 --out "status 0" -- "$TMP/api" "$TMP/two.dmlir" spirv-asm:0 -
    expect_run "API plain spirv on two kernels" 0 --out "status 1 " \
      --out "compiles to 2 kernels, one SPIR-V module each: ask for 'spirv:0' to 'spirv:1'" -- \
      "$TMP/api" "$TMP/two.dmlir" spirv -
    expect_run "API spirv:99" 0 --out "status 1 " --out "'spirv:99': the graph has no kernel 99" -- \
      "$TMP/api" "$TMP/two.dmlir" spirv:99 -
    expect_run "API spirv:x" 0 --out "status 1 " --out "'spirv:x': the kernel index" -- \
      "$TMP/api" "$TMP/two.dmlir" spirv:x -
    expect_run "API spirv-asm:" 0 --out "status 1 " --out "the kernel index" -- \
      "$TMP/api" "$TMP/two.dmlir" spirv-asm: -
    expect_run "API spirvx" 0 --out "status 1 " --out "unknown output kind 'spirvx'" -- \
      "$TMP/api" "$TMP/two.dmlir" spirvx -
  else
    fail "building a program against $BUILD/lib/libdmlc.so: $(head -5 "$TMP/err")"
  fi
fi

# ---- bad input ----
printf 'graph @bad(%%x: f32[3]) -> (u32[1]) {\n  %%0 = argmax %%x {axes = [5]} : u32[1]\n  return %%0\n}\n' \
  >"$TMP/bad.dmlir"
expect_run "an invalid graph" 1 --err "axes\\[0\\] = 5 is out of range" -- "$DMLC" compile "$TMP/bad.dmlir" -o "$TMP/x.spv"
check "writes nothing" test ! -e "$TMP/x.spv"
expect_run "a missing input" 1 --err "cannot open" -- "$DMLC" compile "$TMP/none.dmlir" -o "$TMP/x.spv"
expect_run "unwritable output" 1 --err "/nonexistent/dir/x.spv: cannot create" -- \
  "$DMLC" compile "$ex" -o /nonexistent/dir/x.spv
expect_run "unwritable output, several kernels" 1 --err "/nonexistent/dir/x.kernel0.spv: cannot create" -- \
  "$DMLC" compile "$TMP/two.dmlir" -o /nonexistent/dir/x.spv
# 65537 x 65535 points: more than the modules' 32-bit indexing reaches.
cat >"$TMP/huge.dmlir" <<'GRAPH'
graph @huge(%a: f32[3,3], %b: u8[65537,65535]) -> (u32[3,1], u32[65537,1]) {
  %0 = argmax %a {axes = [1]} : u32[3,1]
  %1 = argmax %b {axes = [1]} : u32[65537,1]
  return %0, %1
}
GRAPH
expect_run "a kernel SPIR-V cannot express" 1 \
  --err "kernel 1 of 2: SPIR-V kernel: 4294967295 points exceed 32-bit indexing" -- \
  "$DMLC" compile "$TMP/huge.dmlir" -o "$TMP/huge.spv"
check "leaves no module of the other kernel" test ! -e "$TMP/huge.kernel0.spv"
expect_run "its metadata" 0 -- "$DMLC" compile "$TMP/huge.dmlir" -o "$TMP/huge.json"
check "says why in \"spirv\"" "$PY" -c 'import json, sys; m = json.load(open(sys.argv[1])); assert len(m["kernels"]) == 2 and m["spirv"] == {"error": "kernel 1 of 2: SPIR-V kernel: 4294967295 points exceed 32-bit indexing"}, m["spirv"]' "$TMP/huge.json"
expect_run "spirv:I is the library's, not --emit's" 2 --err "unknown kind 'spirv:0'" -- \
  "$DMLC" compile "$ex" -o "$TMP/x" --emit=spirv:0

finish
