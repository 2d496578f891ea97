/* The state of one model's import (import.c), and what the op mappings
 * (ops.c) use of it. */
#ifndef DMLC_FRONTEND_ONNX_IMPORT_H
#define DMLC_FRONTEND_ONNX_IMPORT_H

#include "frontend/onnx/onnx_internal.h"

/* A value of the ONNX graph: a tensor the IR computes (a graph input or a
 * node's result), or a constant (an initializer or a Constant's output),
 * which dmlc takes only where ONNX wants a shape or axes. */
typedef struct onnx_value {
  const char *name; /* the model's (owned by the unpacked model) */
  /* a constant: its index in the import's constants; ONNX_NOT_CONSTANT for
   * a tensor the IR computes */
  uint32_t constant;
  /* a tensor: its IR value, and ONNX's shape of it (rank 0: a scalar, held
   * by the IR as [1]) */
  uint32_t ir;
  dmlc_dtype dtype;
  uint32_t rank;
  uint32_t dims[DMLC_MAX_RANK];
} onnx_value;

#define ONNX_NOT_CONSTANT UINT32_MAX

/* An initializer (decoded on first use) or a Constant's value. */
typedef struct onnx_constant {
  const Onnx__TensorProto *proto; /* NULL once decoded, or for a Constant */
  dmlc_onnx_tensor *tensor;       /* owned */
} onnx_constant;

typedef struct onnx_import {
  const char *filename;
  dmlc_diag *diag;
  const Onnx__ModelProto *model;
  const Onnx__GraphProto *graph;
  int64_t opset; /* the default domain's */
  dmlc_ir_graph *ir;
  onnx_value *values;
  uint32_t num_values, cap_values;
  onnx_constant *constants;
  uint32_t num_constants, cap_constants;
  onnx_name_table names;     /* value name -> index in values, as defined so far */
  onnx_name_table producers; /* node output name -> node index, for messages */
  /* symbolic dims (dim_param) with a value: name -> index in dim_values */
  onnx_name_table dim_params;
  uint64_t *dim_values;
  uint32_t num_dim_values, cap_dim_values;
  /* the graph's inputs and outputs, as indices in values, in IR order */
  uint32_t *input_values, *output_values;
  /* their IR names: inputs', then outputs' (by graph output index) */
  char (*ir_names)[DMLC_NAME_MAX];
  onnx_name_table ir_input_names, ir_output_names;
  /* the node being mapped */
  const Onnx__NodeProto *node;
  uint32_t node_index;
  int op_version; /* the version of its op the opset selects (ArgMax-13) */
} onnx_import;

/* Fails the node being mapped: "FILE: node 'NAME' (OP, opset N): ...". */
dmlc_status onnx_node_fail(onnx_import *im, dmlc_status status, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* The node's input k, or NULL when it is absent (past the inputs, or "")
 * and optional; a required absent input, or one no earlier node defines,
 * fails the node. A constant fails the node unless constant_ok. */
dmlc_status onnx_node_input(onnx_import *im, uint32_t k, bool required, bool constant_ok,
                            const onnx_value **out);
/* The node's input k (present) as a 1-D INT64 constant: its values and
 * count. what names it in messages ("shape", "axes"). */
dmlc_status onnx_node_const_ints(onnx_import *im, uint32_t k, const char *what,
                                 const int64_t **values, uint32_t *count);
/* Adds a constant (proto to decode on first use, or a decoded tensor,
 * which the import then owns whatever happens) and sets *index. */
dmlc_status onnx_add_constant(onnx_import *im, const Onnx__TensorProto *proto,
                              dmlc_onnx_tensor *tensor, uint32_t *index);
/* Defines the node's output k as v (a copy; its name is set here). */
dmlc_status onnx_node_define(onnx_import *im, uint32_t k, const onnx_value *v);

/* The IR type of an ONNX shape (rank 0 -> [1]). */
dmlc_type onnx_ir_type(dmlc_dtype dtype, uint32_t rank, const uint32_t *dims);
/* Appends an IR node with a new result of ONNX shape (rank, dims); sets
 * out's IR value, dtype and shape. */
dmlc_status onnx_emit(onnx_import *im, const dmlc_node *node, dmlc_dtype dtype, uint32_t rank,
                      const uint32_t *dims, onnx_value *out);
/* in viewed under another ONNX shape of as many elements: a reshape, or in
 * itself when the IR types agree. */
dmlc_status onnx_view(onnx_import *im, const onnx_value *in, uint32_t rank, const uint32_t *dims,
                      onnx_value *out);

/* ---- attributes ---- */
/* Checks every attribute of the node against the op's list for its
 * version (known, right type, given once); ops.c calls it first. */
typedef struct onnx_attr_spec {
  const char *name;
  Onnx__AttributeProto__AttributeType type;
  int since, until; /* op versions; until 0: still current */
} onnx_attr_spec;
dmlc_status onnx_check_attributes(onnx_import *im, const onnx_attr_spec *specs, size_t count);
/* The node's attribute name, or NULL. */
const Onnx__AttributeProto *onnx_attr(const onnx_import *im, const char *name);
/* An INT attribute, or fallback when absent. */
int64_t onnx_attr_int(const onnx_import *im, const char *name, int64_t fallback);
/* A 0-or-1 INT attribute (keepdims, select_last_index, allowzero). */
dmlc_status onnx_attr_flag(onnx_import *im, const char *name, int64_t fallback, bool *out);

/* An axis in [-rank, rank-1+span] (negative only when from_end_ok: the op
 * versions of opset 11 on) normalized into [0, rank-1+span], or a failure
 * naming what ("axis", "axes[1]"). span is 1 for Flatten, whose axis may
 * be rank, 0 elsewhere. */
dmlc_status onnx_axis(onnx_import *im, int64_t axis, uint32_t rank, uint32_t span, bool from_end_ok,
                      const char *what, uint32_t *out);

/* ---- the op table (ops.c) ---- */
typedef dmlc_status (*onnx_map_fn)(onnx_import *im);
typedef struct onnx_op {
  const char *name;
  int versions[12]; /* the op's versions in ONNX's operator sets, ascending, 0-ended */
  onnx_map_fn map;
} onnx_op;
const onnx_op *onnx_op_find(const char *name);
/* "ArgMax, ArgMin, ..., Constant" into buf. */
void onnx_op_list(char *buf, size_t size);

#endif
