/* What the files of frontend/onnx share: ONNX's data types, the protobuf
 * structure check that runs before protobuf-c decodes anything, decoding a
 * TensorProto, and a table of names. */
#ifndef DMLC_FRONTEND_ONNX_INTERNAL_H
#define DMLC_FRONTEND_ONNX_INTERNAL_H

#include <protobuf-c/protobuf-c.h>

#include "frontend/onnx/onnx.h"
#include "onnx/onnx.pb-c.h"

/* Names are quoted in messages up to this many bytes. */
#define ONNX_QUOTE_MAX 128

/* ---- data types (TensorProto.DataType) ---- */

/* Where a TensorProto keeps elements of a type when not in raw_data. */
typedef enum onnx_data_field {
  ONNX_FIELD_NONE, /* only raw_data (or a type dmlc lacks) */
  ONNX_FIELD_FLOAT,
  ONNX_FIELD_INT32,
  ONNX_FIELD_INT64,
  ONNX_FIELD_DOUBLE,
  ONNX_FIELD_UINT64,
} onnx_data_field;

/* ONNX's name of a data type ("FLOAT", "BFLOAT16"); NULL for a value ONNX
 * does not define. */
const char *dmlc_onnx_data_type_name(int32_t type);
/* The DML type of an ONNX data type; false for one dmlc lacks (bool,
 * strings, bfloat16, complex, 8- and 4-bit floats, 2- and 4-bit integers). */
bool dmlc_onnx_data_type_to_dml(int32_t type, DML_TENSOR_DATA_TYPE *out);
/* The ONNX data type of a DML type dmlc knows; 0 (UNDEFINED) otherwise. */
int32_t dmlc_onnx_data_type_from_dml(DML_TENSOR_DATA_TYPE type);
onnx_data_field dmlc_onnx_data_type_field(int32_t type);
/* "data type BFLOAT16 (16), which dmlc lacks" or "data type 99, which ONNX
 * does not define", into buf: for messages about a type the caller could
 * not map. */
const char *dmlc_onnx_describe_lacking_type(int32_t type, char *buf, size_t size);

/* ---- the protobuf structure check (wire.c) ----
 * Walks the encoding of a message of type desc as protobuf-c will, without
 * decoding anything: tags, wire types against the schema, lengths against
 * the bytes left, packed arrays, and nesting at most ONNX_WIRE_MAX_DEPTH
 * messages deep (protobuf-c recurses once per nested message with no limit,
 * so a small file of deeply nested messages would exhaust the stack). A
 * problem is reported as "FILE: byte N, in onnx.TYPE.FIELD: problem". */
#define ONNX_WIRE_MAX_DEPTH 64
dmlc_status dmlc_onnx_wire_check(const ProtobufCMessageDescriptor *desc, const void *bytes,
                                 size_t size, const char *filename, dmlc_diag *diag);
/* Checks the bytes (dmlc_onnx_wire_check), then decodes them with
 * protobuf-c; free the result with protobuf_c_message_free_unpacked. */
dmlc_status dmlc_onnx_unpack(const ProtobufCMessageDescriptor *desc, const void *bytes, size_t size,
                             const char *filename, ProtobufCMessage **out, dmlc_diag *diag);

/* ---- tensors (tensor.c) ---- */
/* Decodes a TensorProto into one malloc'ed dmlc_onnx_tensor. Messages read
 * "WHAT: problem", where what says where the tensor is ("x.pb", or
 * "model.onnx: node 'r' (Reshape, opset 13): initializer 'shape'").
 * allow_empty admits dims of 0 (no elements): a model's constants may be
 * empty (the shape [] of a reshape to a scalar), dmlc's tensors not. */
dmlc_status dmlc_onnx_tensor_from_proto(const Onnx__TensorProto *tp, const char *what,
                                        bool allow_empty, dmlc_onnx_tensor **out, dmlc_diag *diag);

/* ---- a table of names (names.c) ----
 * An open-addressing hash table from NUL-terminated names (not copied: they
 * must outlive the table) to indices. */
typedef struct onnx_name_table {
  struct onnx_name_slot {
    const char *name; /* NULL: an empty slot */
    uint32_t index;
  } * slots;
  size_t cap, count; /* cap is 0 or a power of two */
} onnx_name_table;

/* The index of name, or UINT32_MAX when absent. */
uint32_t onnx_names_find(const onnx_name_table *t, const char *name);
/* Adds or replaces name's index; false when out of memory. */
bool onnx_names_put(onnx_name_table *t, const char *name, uint32_t index);
void onnx_names_free(onnx_name_table *t);
/* name made a valid dmlc name ([A-Za-z_][A-Za-z0-9_.]*, at most
 * DMLC_NAME_MAX-1 bytes: other bytes become '_', a name that does not start
 * with a letter or '_' gets a '_' before it, NULL or "" becomes fallback),
 * into buf (DMLC_NAME_MAX bytes). When taken (may be NULL) says the name is
 * taken, "_N" is appended with N = ++*next_suffix until it is not (one
 * counter per namespace, so that many colliding names cost one try each).
 * C names also map '.' to '_' (the graph's name, which ahead-of-time code
 * uses as a symbol prefix). */
void onnx_valid_name(const char *name, const char *fallback, bool c_name,
                     bool (*taken)(const char *candidate, void *user), void *user,
                     uint32_t *next_suffix, char *buf);

#endif
