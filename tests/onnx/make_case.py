#!/usr/bin/python3
"""Builds one ONNX test case from a .textproto model, the way ONNX's own
node tests are laid out:

    OUT/model.onnx                      the model, encoded by protoc
    OUT/test_data_set_0/input_K.pb      inputs (TensorProto, onnx.numpy_helper)
    OUT/test_data_set_0/output_K.pb     expected outputs
    OUT/shapes.txt                      NAME=DIMS lines to bind symbolic dims

The expected outputs come from an evaluator written here in NumPy, for
the ops dmlc maps, independent of dmlc. Where the ONNX spec leaves NaN
open, it follows docs/semantics.md: NaN wins (for argmax and argmin),
-0.0 and +0.0 tie, ties go to the first index (the last with
select_last_index); Hardmax marks the first maximum, or the first NaN.
NumPy's argmax and argmin agree with that, which check_numpy_semantics()
asserts before anything is computed.

Usage: make_case.py PROTOC ONNX_PROTO MODEL.textproto OUT
       make_case.py --encode PROTOC ONNX_PROTO MODEL.textproto OUT.onnx
(the second only encodes the model: the malformed models of tests/onnx/errors)
"""
import os
import subprocess
import sys
import zlib

import numpy as np
import onnx
from onnx import numpy_helper


def check_numpy_semantics():
    nan, inf = float("nan"), float("inf")
    x = np.array([1.0, nan, 3.0, nan], dtype=np.float32)
    assert np.argmax(x) == 1 and np.argmin(x) == 1, "NaN must win, first NaN first"
    assert argreduce(x, 0, True, True, True) == 3, "last NaN with select_last_index"
    z = np.array([-0.0, 0.0, -inf], dtype=np.float32)
    assert np.argmax(z) == 0 and argreduce(z, 0, True, True, True) == 1, "-0 and +0 tie"
    t = np.array([3, 2, 1, 2, 3], dtype=np.int8)
    assert np.argmax(t) == 0 and argreduce(t, 0, True, True, True) == 4


def argreduce(x, axis, is_max, keepdims, last):
    f = np.argmax if is_max else np.argmin
    if last:
        n = x.shape[axis]
        idx = n - 1 - f(np.flip(x, axis=axis), axis=axis)
    else:
        idx = f(x, axis=axis)
    idx = idx.astype(np.int64)
    return np.expand_dims(idx, axis) if keepdims else idx


def hardmax_rows(x2d):
    """One 1 per row, at the first maximum (or the first NaN)."""
    out = np.zeros_like(x2d)
    out[np.arange(x2d.shape[0]), np.argmax(x2d, axis=1)] = 1
    return out


def attrs(node):
    return {a.name: onnx.helper.get_attribute_value(a) for a in node.attribute}


def norm(axis, rank):
    return axis + rank if axis < 0 else axis


def opset_of(model):
    return next(o.version for o in model.opset_import if o.domain in ("", "ai.onnx"))


def evaluate(model, feeds):
    opset = opset_of(model)
    env = dict(feeds)
    for t in model.graph.initializer:
        env[t.name] = numpy_helper.to_array(t)
    for node in model.graph.node:
        a = attrs(node)
        ins = [env[n] if n else None for n in node.input]
        op = node.op_type
        if op in ("ArgMax", "ArgMin"):
            x = ins[0]
            y = argreduce(x, norm(a.get("axis", 0), x.ndim), op == "ArgMax",
                          a.get("keepdims", 1) == 1, a.get("select_last_index", 0) == 1)
        elif op == "Hardmax":
            x = ins[0]
            if opset >= 13:
                axis = norm(a.get("axis", -1), x.ndim)
                moved = np.moveaxis(x, axis, -1)
                y = np.moveaxis(hardmax_rows(moved.reshape(-1, x.shape[axis])).reshape(moved.shape),
                                -1, axis)
            else:
                k = norm(a.get("axis", 1), x.ndim)
                rows = int(np.prod(x.shape[:k], dtype=np.int64))
                y = hardmax_rows(x.reshape(rows, -1)).reshape(x.shape)
        elif op == "Identity":
            y = ins[0]
        elif op == "Constant":
            if "value" in a:
                y = numpy_helper.to_array(a["value"])
            elif "value_ints" in a:
                y = np.array(a["value_ints"], dtype=np.int64)
            elif "value_int" in a:
                y = np.array(a["value_int"], dtype=np.int64)
            else:
                raise ValueError("Constant attribute not handled here")
        elif op == "Reshape":
            x = ins[0]
            shape = list(a["shape"]) if opset < 5 else [int(s) for s in ins[1]]
            shape = [x.shape[i] if s == 0 else s for i, s in enumerate(shape)]
            y = x.reshape(shape)
        elif op == "Squeeze":
            x = ins[0]
            axes = a.get("axes") if opset < 13 else (ins[1] if len(ins) > 1 else None)
            if axes is None:
                y = np.squeeze(x)
            else:
                y = np.squeeze(x, axis=tuple(norm(int(i), x.ndim) for i in axes))
        elif op == "Unsqueeze":
            x = ins[0]
            axes = a["axes"] if opset < 13 else ins[1]
            rank = x.ndim + len(axes)
            y = np.expand_dims(x, axis=tuple(sorted(norm(int(i), rank) for i in axes)))
        elif op == "Flatten":
            x = ins[0]
            k = norm(a.get("axis", 1), x.ndim)
            y = x.reshape(int(np.prod(x.shape[:k], dtype=np.int64)), -1)
        else:
            raise ValueError("op %s not handled here" % op)
        env[node.output[0]] = np.asarray(y)
    return [env[o.name] for o in model.graph.output]


def make_input(dtype, shape, rng):
    """Values with ties; floats also with NaN, -0.0, +0.0 and infinities."""
    count = int(np.prod(shape, dtype=np.int64))
    if np.issubdtype(dtype, np.integer):
        info = np.iinfo(dtype)
        pool = np.array([info.min, info.max, 0, 1, 2, info.max - 1, info.min + 1], dtype=dtype)
        small = rng.integers(max(info.min, -4), min(info.max, 4) + 1, size=count).astype(dtype)
        pick = rng.integers(0, len(pool), size=count)
        x = np.where(rng.random(count) < 0.2, pool[pick], small)
    else:
        x = rng.integers(-4, 5, size=count).astype(dtype)
        special = np.array([np.nan, -0.0, 0.0, np.inf, -np.inf, 0.5], dtype=dtype)
        pick = rng.integers(0, len(special), size=count)
        x = np.where(rng.random(count) < 0.15, special[pick], x)
        # Some rows without NaN, so the plain maximum decides too.
        if count > 4:
            x[: count // 2] = np.where(np.isnan(x[: count // 2]), dtype(1.5), x[: count // 2])
    return x.astype(dtype).reshape(shape)


def bound_shapes(text):
    shapes = {}
    for line in text.splitlines():
        if line.startswith("# shape:"):
            name, dims = line[len("# shape:"):].strip().split("=")
            shapes[name] = [int(d) for d in dims.split(",")]
    return shapes


def input_shape(vi, shapes):
    if vi.name in shapes:
        return shapes[vi.name]
    out = []
    for d in vi.type.tensor_type.shape.dim:
        out.append(d.dim_value if d.HasField("dim_value") else shapes[d.dim_param][0])
    return out


def encode(protoc, proto, text, path):
    encoded = subprocess.run(
        [protoc, "--encode=onnx.ModelProto", "-I" + os.path.dirname(proto), proto],
        input=text, stdout=subprocess.PIPE, check=True).stdout
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "wb") as f:
        f.write(encoded)
    return encoded


def main():
    if sys.argv[1] == "--encode":
        protoc, proto, textproto, out = sys.argv[2:6]
        with open(textproto, "rb") as f:
            encode(protoc, proto, f.read(), out)
        return
    protoc, proto, textproto, out = sys.argv[1:5]
    check_numpy_semantics()
    os.makedirs(os.path.join(out, "test_data_set_0"), exist_ok=True)
    with open(textproto, "rb") as f:
        text = f.read()
    encoded = encode(protoc, proto, text, os.path.join(out, "model.onnx"))
    model = onnx.load_from_string(encoded)
    shapes = bound_shapes(text.decode())
    with open(os.path.join(out, "shapes.txt"), "w") as f:
        for name, dims in shapes.items():
            f.write("%s=%s\n" % (name, ",".join(str(d) for d in dims)))
    rng = np.random.default_rng(zlib.crc32(os.path.basename(textproto).encode()))
    initializers = {t.name for t in model.graph.initializer}
    feeds = {}
    k = 0
    for vi in model.graph.input:
        if vi.name in initializers:
            continue
        dtype = onnx.helper.tensor_dtype_to_np_dtype(vi.type.tensor_type.elem_type) \
            if hasattr(onnx.helper, "tensor_dtype_to_np_dtype") \
            else onnx.mapping.TENSOR_TYPE_TO_NP_TYPE[vi.type.tensor_type.elem_type]
        x = make_input(np.dtype(dtype).type, input_shape(vi, shapes), rng)
        feeds[vi.name] = x
        tensor = numpy_helper.from_array(x, vi.name)
        with open(os.path.join(out, "test_data_set_0", "input_%d.pb" % k), "wb") as f:
            f.write(tensor.SerializeToString())
        k += 1
    for k, (vi, y) in enumerate(zip(model.graph.output, evaluate(model, feeds))):
        tensor = numpy_helper.from_array(np.array(y, order="C"), vi.name)
        with open(os.path.join(out, "test_data_set_0", "output_%d.pb" % k), "wb") as f:
            f.write(tensor.SerializeToString())


if __name__ == "__main__":
    main()
