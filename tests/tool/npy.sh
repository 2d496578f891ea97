#!/usr/bin/env bash
# .npy round trips through dmlc run for every data type, and argmax, argmin
# and hardmax over every input type compared with NumPy.
set -euo pipefail
# shellcheck source=common.bash
source "$(dirname "$0")/common.bash" npy "$@"

cat >"$TMP/cases.py" <<'PYEOF'
import itertools, os, sys
import numpy as np

tmp = sys.argv[2]
DT = {"f16": np.float16, "f32": np.float32, "f64": np.float64, "i8": np.int8, "i16": np.int16,
      "i32": np.int32, "i64": np.int64, "u8": np.uint8, "u16": np.uint16, "u32": np.uint32,
      "u64": np.uint64}
rng = np.random.default_rng(1234)

def shape_text(shape):
    return "[" + ",".join(str(d) for d in shape) + "]"

def write_case(name, ir, inputs, wants):
    with open(f"{tmp}/{name}.dmlir", "w") as f:
        f.write(ir)
    with open(f"{tmp}/{name}.args", "w") as f:
        for k, (arr, writer) in enumerate(inputs):
            writer(f"{tmp}/{name}.in{k}.npy", arr)
            f.write(f"--input\n{tmp}/{name}.in{k}.npy\n")
        for k, want in enumerate(wants):
            np.save(f"{tmp}/{name}.want{k}.npy", want)
            f.write(f"--output\n{tmp}/{name}.got{k}.npy\n")
    print(name)

def save(path, arr):
    np.save(path, arr)

def save_fortran(path, arr):
    np.save(path, np.asfortranarray(arr))

def save_big_endian(path, arr):
    np.save(path, arr.astype(arr.dtype.newbyteorder(">")))

def save_v2(path, arr):
    with open(path, "wb") as f:
        np.lib.format.write_array(f, arr, version=(2, 0))

def special_values(t):
    dt = DT[t]
    if t.startswith("f"):
        fi = np.finfo(dt)
        return np.array([np.nan, np.inf, -np.inf, -0.0, 0.0, fi.max, fi.min, fi.tiny,
                         fi.smallest_subnormal, 1.5, -2.25, 1 / 3], dtype=dt)
    ii = np.iinfo(dt)
    return np.array([ii.min, ii.max, 0, 1, ii.max - 1, ii.min + 1, 7, 42, 3, 2, 5, 9], dtype=dt)

def random_data(t, shape, small):
    dt = DT[t]
    if small:  # ties
        lo = 0 if t.startswith("u") else -3
        return rng.integers(lo, lo + 4, size=shape).astype(dt)
    if t.startswith("f"):
        x = rng.standard_normal(size=shape) * 100
        x.flat[0] = -0.0
        if x.size > 1:
            x.flat[1] = 0.0
        return x.astype(dt)
    ii = np.iinfo(dt)
    return rng.integers(ii.min, ii.max, size=shape, dtype=dt, endpoint=True)

def reduce_index(x, axes, fn, decreasing):
    kept = [a for a in range(x.ndim) if a not in axes]
    moved = np.transpose(x, kept + sorted(axes))
    flat = moved.reshape(tuple(x.shape[a] for a in kept) + (-1,))
    n = flat.shape[-1]
    if decreasing:
        idx = n - 1 - fn(flat[..., ::-1], axis=-1)
    else:
        idx = fn(flat, axis=-1)
    return idx.reshape(tuple(1 if a in axes else x.shape[a] for a in range(x.ndim)))

def hardmax(x, axes):
    kept = [a for a in range(x.ndim) if a not in axes]
    perm = kept + sorted(axes)
    moved = np.transpose(x, perm)
    flat = moved.reshape(tuple(x.shape[a] for a in kept) + (-1,))
    idx = np.argmax(flat, axis=-1)
    onehot = (np.arange(flat.shape[-1]) == idx[..., None]).astype(x.dtype)
    return np.transpose(onehot.reshape(moved.shape), np.argsort(perm))

def gen():
    # Identity graphs: every data type through every writer, bit for bit.
    for t, (wname, writer) in itertools.product(DT, [("c", save), ("f", save_fortran),
                                                      ("be", save_big_endian), ("v2", save_v2)]):
        x = special_values(t).reshape(3, 4)
        ir = (f"graph @id(%x: {t}[3,4]) -> ({t}[3,4]) {{\n  return %x\n}}\n")
        write_case(f"id_{t}_{wname}", ir, [(x, writer)], [x])
    for t in DT:
        x = special_values(t)[:5]
        write_case(f"id1d_{t}", f"graph @id(%x: {t}[5]) -> ({t}[5]) {{\n  return %x\n}}\n",
                   [(x, save)], [x])

    shape = (3, 4, 5)
    axes_list = [[0], [1], [2], [0, 2], [1, 2], [0, 1, 2]]
    outs = ["u32", "i64", "u64", "i32"]
    n = 0
    for t in ["f16", "f32", "i8", "i16", "i32", "i64", "u8", "u16", "u32", "u64"]:
        for axes in axes_list:
            for op, fn in (("argmax", np.argmax), ("argmin", np.argmin)):
                for direction in ("increasing", "decreasing"):
                    small = n % 2 == 1
                    out = outs[n % len(outs)]
                    n += 1
                    x = random_data(t, shape, small)
                    want = reduce_index(x, axes, fn, direction == "decreasing").astype(DT[out])
                    ir = (f"graph @g(%x: {t}{shape_text(shape)}) -> ({out}{shape_text(want.shape)}) {{\n"
                          f"  %0 = {op} %x {{axes = {axes}, direction = {direction}}} : "
                          f"{out}{shape_text(want.shape)}\n  return %0\n}}\n")
                    name = f"{op}_{t}_{''.join(map(str, axes))}_{direction[:3]}_{'small' if small else 'wide'}"
                    write_case(name, ir, [(x, save)], [want])

    # NaN wins, the first (increasing) or last (decreasing) among several.
    for t in ["f16", "f32"]:
        x = np.array([[1, np.nan, 3, np.nan, -np.inf], [np.inf, 2, np.inf, -1, 0]], dtype=DT[t])
        for op, fn in (("argmax", np.argmax), ("argmin", np.argmin)):
            for direction in ("increasing", "decreasing"):
                want = reduce_index(x, [1], fn, direction == "decreasing").astype(np.uint32)
                ir = (f"graph @g(%x: {t}[2,5]) -> (u32[2,1]) {{\n"
                      f"  %0 = {op} %x {{axes = [1], direction = {direction}}} : u32[2,1]\n"
                      f"  return %0\n}}\n")
                write_case(f"nan_{op}_{t}_{direction[:3]}", ir, [(x, save)], [want])

    # Hardmax over f16 and f32, several axes and ranks.
    for t in ["f16", "f32"]:
        for shape, axes in [((7,), [0]), ((3, 4), [0]), ((3, 4), [1]), ((2, 3, 4), [0, 2]),
                            ((2, 3, 4, 2), [1, 3]), ((2, 3, 4), [0, 1, 2])]:
            for small in (False, True):
                x = random_data(t, shape, small)
                ir = (f"graph @h(%x: {t}{shape_text(shape)}) -> ({t}{shape_text(shape)}) {{\n"
                      f"  %0 = hardmax %x {{axes = {axes}}} : {t}{shape_text(shape)}\n"
                      f"  return %0\n}}\n")
                name = f"hardmax_{t}_{len(shape)}d_{''.join(map(str, axes))}_{'small' if small else 'wide'}"
                write_case(name, ir, [(x, save)], [hardmax(x, axes)])

    # Strided, column-major and broadcast layouts, in and out.
    x = random_data("f32", (3, 4), True)
    for name, layout in [("padded", "{strides = [8, 2]}"), ("colmajor", "{strides = [1, 3]}"),
                         ("padded_size", "{strides = [5, 1], size = 128, align = 16}")]:
        ir = (f"graph @s(%x: f32[3,4]{layout}) -> (%i: u32[3,1], %h: f32[3,4]{{strides = [1, 3]}}) {{\n"
              f"  %0 = argmax %x {{axes = [1]}} : u32[3,1]\n"
              f"  %1 = hardmax %x {{axes = [1]}} : f32[3,4]\n  return %0, %1\n}}\n")
        write_case(f"layout_{name}", ir, [(x, save)],
                   [reduce_index(x, [1], np.argmax, False).astype(np.uint32), hardmax(x, [1])])
    row = np.broadcast_to(random_data("i16", (1, 6), True), (4, 6)).copy()
    ir = ("graph @b(%x: i16[4,6]{strides = [0, 1]}) -> (u64[4,1]) {\n"
          "  %0 = argmin %x {axes = [1], direction = decreasing} : u64[4,1]\n  return %0\n}\n")
    write_case("layout_broadcast", ir, [(row, save)],
               [reduce_index(row, [1], np.argmin, True).astype(np.uint64)])

def check(names):
    failed = 0
    for name in names:
        k = 0
        while os.path.exists(f"{tmp}/{name}.want{k}.npy"):
            want = np.load(f"{tmp}/{name}.want{k}.npy")
            path = f"{tmp}/{name}.got{k}.npy"
            ok = os.path.exists(path)
            if ok:
                got = np.load(path)
                # Bit for bit: NaN payloads and signed zeros included.
                ok = (got.dtype == want.dtype and got.shape == want.shape
                      and got.flags.c_contiguous
                      and got.tobytes() == np.ascontiguousarray(want).tobytes())
            if not ok:
                failed += 1
                print(f"FAIL: {name} output {k}: got "
                      f"{np.load(path).tolist() if os.path.exists(path) else 'nothing'}, "
                      f"want {want.tolist()}")
            else:
                print(f"ok {name}")
            k += 1
    return failed

if sys.argv[1] == "gen":
    gen()
else:
    check([l.strip() for l in open(f"{tmp}/cases.txt")])
PYEOF

"$PY" "$TMP/cases.py" gen "$TMP" >"$TMP/cases.txt"
while read -r name; do
  mapfile -t args <"$TMP/$name.args"
  expect_run "$name" 0 -- "$DMLC" run "$TMP/$name.dmlir" --quiet "${args[@]}"
done <"$TMP/cases.txt"
"$PY" "$TMP/cases.py" check "$TMP" >"$TMP/check.txt"
while read -r line; do
  case $line in
  ok\ *) pass ;;
  *) fail "${line#FAIL: }" ;;
  esac
done <"$TMP/check.txt"
check "every case checked" [ "$(grep -c . "$TMP/check.txt")" -ge "$(grep -c . "$TMP/cases.txt")" ]

finish
