#!/usr/bin/env python3
"""NumPy on bench_cpu's workloads, and dmlc's speed-up over it.

Same shapes, dtypes, axes and data (integers below 1000 for floats, every
byte value for int8), timed with time.perf_counter; the median of several
calls. Hardmax is np.argmax followed by np.put_along_axis into zeros, which
is how a NumPy user writes it. With --dmlc FILE (bench_cpu --tsv FILE)
prints dmlc's speed-up per workload.

    python3 bench/numpy_bench.py [--quick] [--only ID] [--dmlc results.tsv]
                                 [--small-pages]
"""
import argparse
import csv
import statistics
import time

import numpy as np

# id -> (op, dtype, shape, axis); axis None reduces every axis, a tuple
# several (over_axes).
WORKLOADS = [
    ("argmax_rows", "argmax", np.float32, (8192, 8192), 1),
    ("argmax_cols", "argmax", np.float32, (8192, 8192), 0),
    ("argmin_mid", "argmin", np.float32, (64, 1024, 1024), 1),
    ("argmin_first", "argmin", np.float32, (64, 1024, 1024), 0),
    ("hardmax_rows", "hardmax", np.float32, (8192, 8192), 1),
    ("hardmax_cols", "hardmax", np.float32, (8192, 8192), 0),
    ("argmax_all", "argmax", np.float32, (4096, 4096), None),
    ("argmax_i8_rows", "argmax", np.int8, (8192, 8192), 1),
    ("argmax_f16_cols", "argmax", np.float16, (8192, 8192), 0),
    ("argmax_small", "argmax", np.float32, (1, 1000), 1),
    ("argmin_nonadj", "argmin", np.float32, (256, 512, 256), (0, 2)),
    ("argmax_nchw_u8", "argmax", np.uint8, (16, 3, 1024, 1024), 1),
    ("argmax_nchw_f16", "argmax", np.float16, (16, 64, 128, 128), 1),
    ("argmax_nchw3_f32", "argmax", np.float32, (16, 3, 512, 512), 1),
    ("argmax_nchw21_f32", "argmax", np.float32, (4, 21, 512, 512), 1),
    ("argmax_nchw3_f16", "argmax", np.float16, (16, 3, 1024, 1024), 1),
    ("argmax_nchw64_u8", "argmax", np.uint8, (16, 64, 256, 256), 1),
    ("argmax_nhwc_u8", "argmax", np.uint8, (16, 512, 1024, 3), 3),
    ("argmax_nhwc21_u8", "argmax", np.uint8, (16, 512, 512, 21), 3),
    ("argmax_head", "argmax", np.float32, (4096, 1000), 1),
    ("argmax_head_batch", "argmax", np.float32, (32768, 1000), 1),
    ("argmax_vocab_f32", "argmax", np.float32, (64, 128256), 1),
    ("argmax_vocab_f16", "argmax", np.float16, (64, 128256), 1),
    ("argmax_vocab8_f32", "argmax", np.float32, (8, 128256), 1),
    ("argmax_vocab8_f16", "argmax", np.float16, (8, 128256), 1),
    ("argmax_vocab1_f32", "argmax", np.float32, (1, 128256), 1),
    ("argmax_vocab1_f16", "argmax", np.float16, (1, 128256), 1),
    # rows of 8000 in a pitch of 8192: NumPy takes the strided view
    ("argmax_padded_rows", "argmax", np.float32, (8192, 8000), 1),
    ("argmax_i64_rows", "argmax", np.int64, (4096, 4096), 1),
    ("argmax_u16_cols", "argmax", np.uint16, (8192, 8192), 0),
    ("argmax_classes_f32", "argmax", np.float32, (524288, 80), 1),
    ("argmax_classes_f16", "argmax", np.float16, (524288, 80), 1),
]


def hardmax(x, axis):
    idx = np.expand_dims(np.argmax(x, axis=axis), axis)
    out = np.zeros_like(x)
    np.put_along_axis(out, idx, 1, axis=axis)
    return out


def over_axes(fn, x, axes):
    """fn (np.argmax / np.argmin) over several axes, as a NumPy user writes
    it: the reduced axes moved last and merged (a copy), then one call."""
    kept = [d for d in range(x.ndim) if d not in axes]
    y = np.transpose(x, kept + list(axes))
    y = y.reshape([x.shape[d] for d in kept] + [-1])
    return fn(y, axis=-1)


def make_input(dtype, shape, rng):
    if dtype == np.int8:
        return rng.integers(-128, 128, size=shape, dtype=np.int8)
    if dtype == np.uint8:
        return rng.integers(0, 256, size=shape, dtype=np.uint8)
    return rng.integers(0, 1000, size=shape, dtype=np.int32).astype(dtype)


def time_call(fn, runs):
    fn()  # warm-up
    times = []
    for _ in range(runs):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def time_latency(fn, batches=31, calls=2000):
    for _ in range(calls):
        fn()
    per_call = []
    for _ in range(batches):
        t0 = time.perf_counter()
        for _ in range(calls):
            fn()
        per_call.append((time.perf_counter() - t0) / calls)
    return statistics.median(per_call)


def run(quick, only=None):
    rng = np.random.default_rng(1)
    results = {}
    for wid, op, dtype, shape, axis in WORKLOADS:
        if only and only not in wid:
            continue
        if quick:
            shape = tuple(d // 16 if d >= 1024 else d for d in shape)
        x = make_input(dtype, shape, rng)
        if wid == "argmax_padded_rows":
            pitch = shape[-1] + 192
            x = make_input(dtype, shape[:-1] + (pitch,), rng)[..., : shape[-1]]
        if isinstance(axis, tuple):
            f = np.argmax if op == "argmax" else np.argmin
            fn = lambda x=x, axis=axis, f=f: over_axes(f, x, axis)
        elif op == "hardmax":
            fn = lambda x=x, axis=axis: hardmax(x, axis)
        elif op == "argmax":
            fn = lambda x=x, axis=axis: np.argmax(x, axis=axis)
        else:
            fn = lambda x=x, axis=axis: np.argmin(x, axis=axis)
        if wid == "argmax_small":
            results[wid] = time_latency(fn)
        else:
            results[wid] = time_call(fn, 5 if x.nbytes > (64 << 20) else 11)
        del x
    return results


def fmt(seconds):
    return f"{seconds * 1e6:.3f} us" if seconds < 1e-3 else f"{seconds * 1e3:.2f} ms"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--dmlc", help="bench_cpu --tsv output")
    ap.add_argument("--only", help="the workloads whose id contains this")
    ap.add_argument("--small-pages", action="store_true",
                    help="arrays on 4 KiB pages, as bench_cpu --small-pages "
                    "(NumPy asks for huge pages on arrays of 4 MiB or more)")
    args, _ = ap.parse_known_args()
    if args.small_pages:
        np.core.multiarray._set_madvise_hugepage(False)
    numpy_times = run(args.quick, args.only)
    dmlc = {}
    if args.dmlc:
        with open(args.dmlc, newline="") as f:
            for row in csv.DictReader(f, delimiter="\t"):
                dmlc[row["id"]] = (row["name"], float(row["seconds"]))
    print(f"\nNumPy {np.__version__}\n")
    print("| workload | dmlc | NumPy | dmlc speed-up |")
    print("|---|---:|---:|---:|")
    for wid, *_ in WORKLOADS:
        if wid not in numpy_times:
            continue
        name, t = dmlc.get(wid, (wid, None))
        n = numpy_times[wid]
        if t is None:
            print(f"| {name} | - | {fmt(n)} | - |")
        else:
            print(f"| {name} | {fmt(t)} | {fmt(n)} | {n / t:.1f}x |")


if __name__ == "__main__":
    main()
