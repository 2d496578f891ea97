/* ONNX models -> IR, and ONNX TensorProto files <-> host tensors
 * (docs/onnx.md). The bytes are decoded by protobuf-c from ONNX's own
 * onnx.proto; nothing here reads outside the bytes given, and every
 * malformed file is an error whose message starts with the file's name.
 * The public types (dmlc_onnx_options, dmlc_onnx_signature,
 * dmlc_onnx_tensor) are include/dmlc/dmlc.h's. */
#ifndef DMLC_FRONTEND_ONNX_ONNX_H
#define DMLC_FRONTEND_ONNX_ONNX_H

#include "ir/ir.h"

/* The newest default-domain opset dmlc knows: every op it maps was checked
 * against ONNX's operator_sets.h up to this one (docs/onnx.md). */
#define DMLC_ONNX_MAX_OPSET 28

/* Imports an ONNX ModelProto. options may be NULL. *out_graph (unverified,
 * as the IR parser leaves its graphs) and *out_signature (one malloc'ed
 * block) are each set when non-NULL; on failure both are NULL. */
dmlc_status dmlc_onnx_import(const void *bytes, size_t size, const char *filename,
                             const dmlc_onnx_options *options, dmlc_ir_graph **out_graph,
                             dmlc_onnx_signature **out_signature, dmlc_diag *diag);

/* Decodes a TensorProto file into one malloc'ed block. */
dmlc_status dmlc_onnx_decode_tensor(const void *bytes, size_t size, const char *filename,
                                    dmlc_onnx_tensor **out, dmlc_diag *diag);
/* Encodes t as a TensorProto (raw_data, little-endian) into a malloc'ed
 * buffer of *out_size bytes (plus a NUL). */
dmlc_status dmlc_onnx_encode_tensor(const dmlc_onnx_tensor *t, void **out_bytes, size_t *out_size,
                                    dmlc_diag *diag);

#endif
