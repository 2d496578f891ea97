#!/usr/bin/env bash
# dmlc run with malformed or mismatched .npy inputs: exit 1 and a message
# naming the file and the problem; never a crash.
set -euo pipefail
# shellcheck source=common.bash
source "$(dirname "$0")/common.bash" npy_errors "$@"
EX=$SRC/examples/argmax.dmlir # f32[3,3] -> u32[1,3]

"$PY" - "$TMP" <<'PYEOF'
import struct, sys
import numpy as np
tmp = sys.argv[1]
good = np.array([[1, 2, 3], [3, 0, 4], [2, 5, 2]], dtype=np.float32)

def raw(name, data):
    with open(f"{tmp}/{name}.npy", "wb") as f:
        f.write(data)

def v1(header, data=good.tobytes(), major=1, minor=0):
    h = header.encode("latin1")
    return b"\x93NUMPY" + bytes([major, minor]) + struct.pack("<H", len(h)) + h + data

def hdr(descr="'<f4'", fortran="False", shape="(3, 3)"):
    return "{'descr': %s, 'fortran_order': %s, 'shape': %s, }\n" % (descr, fortran, shape)

raw("empty", b"")
raw("bad_magic", b"PK\x03\x04" + b"\0" * 100)
raw("text", b"1 2 3\n3 0 4\n2 5 2\n")
raw("short_magic", b"\x93NUM")
raw("no_length", b"\x93NUMPY\x01\x00\x10")
raw("header_past_end", b"\x93NUMPY\x01\x00\xff\x00{'descr': '<f4'")
raw("version_9", v1(hdr(), major=9))
raw("not_a_dict", v1("['<f4', False, (3, 3)]\n"))
raw("unterminated", v1("{'descr': '<f4, 'fortran_order': False\n"))
raw("missing_shape", v1("{'descr': '<f4', 'fortran_order': False}\n"))
raw("unknown_key", v1("{'descr': '<f4', 'fortran_order': False, 'shape': (3, 3), 'x': 1}\n"))
raw("complex", v1(hdr("'<c8'"), good.astype(np.complex64).tobytes()))
raw("unicode", v1(hdr("'<U1'")))
raw("object", v1(hdr("'|O'")))
raw("structured", v1(hdr("[('a', '<f4')]")))
raw("negative", v1(hdr(shape="(3, -3)")))
raw("overflow", v1(hdr(shape="(99999999999999999999999, 3)")))
raw("huge", v1(hdr(shape="(4294967296, 4294967296)")))
raw("short_data", v1(hdr(), good.tobytes()[:-1]))
raw("no_data", v1(hdr(), b""))
raw("trailing", v1(hdr(), good.tobytes() + b"\0"))
raw("not_tuple", v1(hdr(shape="(9)"), good.tobytes()))
np.save(f"{tmp}/bool.npy", good > 2)
np.save(f"{tmp}/int32.npy", good.astype(np.int32))
np.save(f"{tmp}/f16.npy", good.astype(np.float16))
np.save(f"{tmp}/f64.npy", good.astype(np.float64))
np.save(f"{tmp}/shape9.npy", good.reshape(9))
np.save(f"{tmp}/shape33x1.npy", good.reshape(3, 3, 1))
np.save(f"{tmp}/shape_t.npy", np.zeros((3, 4), np.float32))
np.save(f"{tmp}/scalar.npy", np.float32(1))
np.save(f"{tmp}/row_bad.npy", np.array([[1, 5, 2], [1, 5, 2], [1, 6, 2]], np.float32))
PYEOF

malformed() { # name, regex of the problem
  expect_run "malformed $1" 1 --err "^dmlc: error: $TMP/$1.npy: $2" -- \
    "$DMLC" run "$EX" --input "x=$TMP/$1.npy"
  check "malformed $1: nothing printed" [ ! -s "$TMP/out" ]
}
malformed empty 'not a .npy file: the file is empty'
malformed bad_magic 'not a .npy file: bad magic'
malformed text 'not a .npy file: bad magic'
malformed short_magic 'truncated header'
malformed no_length 'truncated header: the file ends inside the header length field'
malformed header_past_end 'truncated header: header length 255 runs past the end'
malformed version_9 'unsupported .npy format version 9.0'
malformed not_a_dict "malformed header: expected '\{'"
malformed unterminated 'unsupported data type|malformed header'
malformed missing_shape "malformed header: key 'shape' is missing"
malformed unknown_key "malformed header: unknown key 'x'"
malformed complex "unsupported data type '<c8'"
malformed unicode "unsupported data type '<U1'"
malformed object "unsupported data type '\|O'"
malformed structured 'structured data types are not supported'
malformed negative 'malformed header: negative dimension'
malformed overflow 'malformed header: dimension in .shape. is too large'
malformed huge 'shape \(4294967296, 4294967296\) is too large'
malformed short_data 'truncated data: a <f4 array of shape \(3, 3\) needs 36 bytes of data, the file has 35'
malformed no_data 'truncated data'
malformed trailing '1 bytes of trailing data'
malformed not_tuple "malformed header: 'shape' \(9\) is not a tuple"

mismatch() { # name, regex
  expect_run "mismatch $1" 1 --err "^dmlc: error: $TMP/$1.npy: $2" -- \
    "$DMLC" run "$EX" --input "$TMP/$1.npy"
}
mismatch bool "holds bool\[3,3\], which has no DirectML data type; input 'x' is f32\[3,3\]"
mismatch int32 "holds i32\[3,3\], but input 'x' is f32\[3,3\]"
mismatch f16 "holds f16\[3,3\], but input 'x' is f32\[3,3\]"
mismatch f64 "holds f64\[3,3\], but input 'x' is f32\[3,3\]"
mismatch shape9 "holds f32\[9\], but input 'x' is f32\[3,3\]"
mismatch shape33x1 "holds f32\[3,3,1\], but input 'x' is f32\[3,3\]"
mismatch shape_t "holds f32\[3,4\], but input 'x' is f32\[3,3\]"
mismatch scalar "holds f32\[\], but input 'x' is f32\[3,3\]"

# A broadcast input's file must agree along the broadcast axis.
expect_run "broadcast mismatch" 1 \
  --err "^dmlc: error: $TMP/row_bad.npy: input 'row' has strides \[0, 1\], so element \[2,1\]" -- \
  "$DMLC" run "$SRC/examples/layouts.dmlir" --input "x=$SRC/examples/data/matrix3x3.npy" \
  --input "row=$TMP/row_bad.npy"

# Bindings.
expect_run "missing file" 1 --err "^dmlc: error: $TMP/none.npy: cannot open: No such file" -- \
  "$DMLC" run "$EX" --input "$TMP/none.npy"
expect_run "directory" 1 --err "^dmlc: error: $TMP: " -- "$DMLC" run "$EX" --input "$TMP"
expect_run "unknown input" 1 --err "no input named 'y' \(its inputs: 'x'\)" -- \
  "$DMLC" run "$EX" --input "y=$TMP/int32.npy"
expect_run "too many inputs" 1 --err "too many --input files: the graph has 1 input" -- \
  "$DMLC" run "$EX" --input "$TMP/int32.npy" --input "$TMP/int32.npy"
expect_run "bound twice" 1 --err "input 'x' is bound twice" -- \
  "$DMLC" run "$EX" --input "x=$TMP/int32.npy" --input "x=$TMP/int32.npy"
expect_run "unknown output" 1 --err "no output named 'idx' \(its outputs: 'out0'\)" -- \
  "$DMLC" run "$EX" --output "idx=$TMP/o.npy"
expect_run "unwritable output: refused before running" 1 \
  --err "^dmlc: error: --output '$TMP/no/o.npy' cannot be created: directory '$TMP/no': No such file or directory \(checked before running\)" -- \
  "$DMLC" run "$EX" --output "$TMP/no/o.npy"

finish
