/* dmlc's IR: data types, tensor types, layouts, values, nodes and graphs.
 * A graph is a list of nodes in topological order; each node has one result.
 * Values are numbered densely; graph inputs and outputs carry a layout,
 * intermediate values are dense row-major. */
#ifndef DMLC_IR_IR_H
#define DMLC_IR_IR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "dmlc/directml.h"
#include "dmlc/dmlc.h"
#include "ir/diag.h"

/* ---- data types ---- */
typedef enum dmlc_kind {
  DMLC_KIND_FLOAT,
  DMLC_KIND_SIGNED,
  DMLC_KIND_UNSIGNED,
  DMLC_KIND_BOOL,
} dmlc_kind;

/* How a dtype's bits map to an unsigned key ordered as argmax orders values
 * (ir/dtypes.def). */
typedef enum dmlc_order {
  DMLC_ORDER_FLOAT,
  DMLC_ORDER_SIGNED,
  DMLC_ORDER_UNSIGNED,
} dmlc_order;

typedef enum dmlc_dtype {
#define X(id, name, size, kind, dml, ebits, mbits, order, llvm, spirv) DMLC_DTYPE_##id,
#include "ir/dtypes.def"
#undef X
  DMLC_DTYPE_COUNT
} dmlc_dtype;

typedef struct dmlc_dtype_info {
  const char *name;
  uint32_t size;
  dmlc_kind kind;
  DML_TENSOR_DATA_TYPE dml;
  uint32_t exponent_bits, mantissa_bits; /* floats; 0 otherwise */
  dmlc_order order;
  const char *llvm;  /* LLVM IR storage type: "half", "i8", ... */
  const char *spirv; /* SPIR-V storage type: "OpTypeFloat 16", "OpTypeInt 8 1", ... */
} dmlc_dtype_info;

const dmlc_dtype_info *dmlc_dtype_get(dmlc_dtype dtype);
const char *dmlc_dtype_name(dmlc_dtype dtype);
uint32_t dmlc_dtype_size(dmlc_dtype dtype);
bool dmlc_dtype_is_float(dmlc_dtype dtype);
bool dmlc_dtype_is_integer(dmlc_dtype dtype); /* signed or unsigned, not bool */
/* The bit pattern (zero-extended to 64 bits) of the integer constant value
 * converted to dtype exactly as the IR's `cast` op converts an i64: bool
 * 0/1, integers wrap modulo 2^bits, floats round once to nearest even. The
 * one int64 -> dtype conversion: constant folding, kernel descriptions, both
 * emitters and the reference evaluator all use it. */
uint64_t dmlc_dtype_bits_from_i64(dmlc_dtype dtype, int64_t value);
/* The integer the bits of an integer or bool element hold: sign-extended
 * for a signed dtype, zero-extended otherwise (a u64 above INT64_MAX wraps). */
int64_t dmlc_dtype_i64_from_bits(dmlc_dtype dtype, uint64_t bits);
/* The value of a float element's bits, widened exactly to double from the
 * table's float layout. A NaN keeps its sign and the top of its payload and
 * comes out quiet, as every hardware float conversion makes it. */
double dmlc_dtype_f64_from_bits(dmlc_dtype dtype, uint64_t bits);
/* Largest value of an integer dtype, as uint64 (UINT64_MAX for u64). */
uint64_t dmlc_dtype_max_index(dmlc_dtype dtype);
/* Name -> dtype; false if unknown. len is the name's length. */
bool dmlc_dtype_from_name(const char *name, size_t len, dmlc_dtype *out);
/* DML enum <-> dtype; false if DirectML has no such type or dmlc lacks it. */
bool dmlc_dtype_from_dml(DML_TENSOR_DATA_TYPE dml, dmlc_dtype *out);

/* IEEE binary16 conversions (exact widening; round-to-nearest-even). */
float dmlc_f16_to_f32(uint16_t h);
uint16_t dmlc_f32_to_f16(float f);

/* ---- ops ---- */
enum {
  DMLC_ATTR_AXES = 1u << 0,
  DMLC_ATTR_DIRECTION = 1u << 1,
  DMLC_ATTR_VALUE = 1u << 2,
};

typedef enum dmlc_opkind {
  DMLC_OPKIND_REDUCTION,
  DMLC_OPKIND_COMPOSITE,
  DMLC_OPKIND_SHAPE,
  DMLC_OPKIND_ELEMENTWISE,
  DMLC_OPKIND_SOURCE,
} dmlc_opkind;

typedef enum dmlc_op {
#define X(id, name, nopnd, attrs, kind, rule) DMLC_OP_##id,
#include "ir/ops.def"
#undef X
  DMLC_OP_COUNT
} dmlc_op;

typedef struct dmlc_op_info {
  const char *name;
  uint32_t num_operands;
  uint32_t attrs; /* DMLC_ATTR_* mask */
  dmlc_opkind kind;
} dmlc_op_info;

const dmlc_op_info *dmlc_op_get(dmlc_op op);
bool dmlc_op_from_name(const char *name, size_t len, dmlc_op *out);

typedef enum dmlc_direction {
  DMLC_DIRECTION_INCREASING = 0, /* ties: the lowest index wins */
  DMLC_DIRECTION_DECREASING = 1, /* ties: the highest index wins */
} dmlc_direction;

const char *dmlc_direction_name(dmlc_direction d);

/* ---- types and layouts ---- */
#define DMLC_MAX_OPERANDS 2
#define DMLC_NAME_MAX 64

typedef struct dmlc_type {
  dmlc_dtype dtype;
  uint32_t rank; /* 1 to DMLC_MAX_RANK */
  uint32_t dims[DMLC_MAX_RANK];
} dmlc_type;

/* Where the elements of a graph input or output live in its buffer. */
typedef struct dmlc_layout {
  uint64_t strides[DMLC_MAX_RANK]; /* in elements; 0 broadcasts (inputs only) */
  uint64_t size_bytes;             /* the declared TotalTensorSizeInBytes */
  uint32_t alignment;              /* GuaranteedBaseOffsetAlignment, or 0 */
  /* Whether the user stated size_bytes (a DML_BUFFER_TENSOR_DESC's
   * TotalTensorSizeInBytes, or "size = N" in IR text). When not, size_bytes
   * is the rounded minimum, and a buffer need only reach the last element. */
  bool size_declared;
} dmlc_layout;

uint64_t dmlc_type_num_elements(const dmlc_type *t);
bool dmlc_type_equal(const dmlc_type *a, const dmlc_type *b);
/* Row-major packed strides of t. */
void dmlc_packed_strides(const dmlc_type *t, uint64_t *strides);
/* The smallest TotalTensorSizeInBytes of t laid out with strides:
 * roundup4((sum((dims[i]-1) * strides[i]) + 1) * elementSize). */
uint64_t dmlc_min_size_bytes(const dmlc_type *t, const uint64_t *strides);
/* The byte just past the last element that strides reach. */
uint64_t dmlc_layout_extent_bytes(const dmlc_type *t, const uint64_t *strides);
/* The smallest buffer execute accepts for l: its declared size when the user
 * declared one (DirectML's rule), else its extent. */
uint64_t dmlc_layout_needed_bytes(const dmlc_type *t, const dmlc_layout *l);
/* The packed layout of t with the minimum size and no alignment. */
dmlc_layout dmlc_layout_packed(const dmlc_type *t);
bool dmlc_layout_is_packed(const dmlc_type *t, const dmlc_layout *l);
/* True when no two coordinates of t map to one offset, by dmlc's rule: with
 * the dims of size > 1 sorted by stride, each stride is at least one more
 * than the span of the smaller ones (and none is 0). */
bool dmlc_strides_disjoint(const dmlc_type *t, const uint64_t *strides);

/* ---- axes ----
 * A set of axes (dims) as a mask: bit d set for axis d. Reductions name
 * their axes as a list in any order (the axes attribute); kernels and most
 * rules want the set. */
/* Axes at or above DMLC_MAX_RANK are left out (the verifier rejects them). */
uint32_t dmlc_axes_mask(const uint32_t *axes, uint32_t num_axes);
/* The axes of mask in increasing order, into axes (room for DMLC_MAX_RANK);
 * returns their count. */
uint32_t dmlc_mask_axes(uint32_t mask, uint32_t *axes);
/* Whether axis is in mask: "is dim d reduced" for a mask of reduced dims. */
static inline bool dmlc_mask_has_axis(uint32_t mask, uint32_t axis) {
  return axis < DMLC_MAX_RANK && ((mask >> axis) & 1u);
}

/* ---- graphs ---- */
typedef struct dmlc_node {
  dmlc_op op;
  uint32_t num_operands;
  uint32_t operands[DMLC_MAX_OPERANDS]; /* value ids */
  uint32_t result;                      /* value id */
  uint32_t num_axes;                    /* DMLC_ATTR_AXES */
  uint32_t axes[DMLC_MAX_RANK];
  dmlc_direction direction; /* DMLC_ATTR_DIRECTION */
  int64_t value;            /* DMLC_ATTR_VALUE */
  /* Where the node was written (IR text): its result's name as the user
   * spelled it and its line and column, 1-based, for messages; line 0 and
   * an empty name when it was not parsed (descriptors, ONNX, new nodes). */
  uint32_t src_line, src_col;
  char src_name[DMLC_NAME_MAX];
} dmlc_node;

typedef struct dmlc_value_def {
  dmlc_type type;
  int32_t producer; /* node index, or -1 for a graph input */
} dmlc_value_def;

typedef struct dmlc_graph_io {
  uint32_t value;
  char name[DMLC_NAME_MAX];
  dmlc_layout layout;
} dmlc_graph_io;

/* ---- kernels ----
 * A kernel is a fused region: a contiguous range of nodes run as one loop
 * nest over a static iteration space of kept and reduced dims (docs/ir.md,
 * "Kernels"). Each buffer it reads or writes is described by element strides
 * over that space: the element for space point p is at sum(p[d] * strides[d]);
 * a value that varies only over the kept dims has 0 on the reduced ones. */
typedef struct dmlc_kernel_buffer {
  uint32_t value;
  /* writes: the graph output written, or -1 for the value's dense row-major
   * buffer (read by later kernels); reads: always -1 (a graph input's own
   * buffer, or the dense buffer an earlier kernel wrote). */
  int32_t output;
  uint64_t strides[DMLC_MAX_RANK]; /* one per space dim */
} dmlc_kernel_buffer;

typedef struct dmlc_kernel {
  uint32_t first_node, num_nodes;
  uint32_t rank; /* of the space, 1 to DMLC_MAX_RANK */
  uint32_t dims[DMLC_MAX_RANK];
  uint32_t reduced_mask; /* bit d set: space dim d is reduced */
  /* g->kernel_buffers[first_buffer...]: num_reads reads, then num_writes
   * writes (dmlc_kernel_reads / dmlc_kernel_writes). */
  uint32_t first_buffer, num_reads, num_writes;
  uint32_t src_line, src_col; /* where 'kernel' was written; 0 when not parsed */
} dmlc_kernel;

#define DMLC_SOURCE_MAX 256

typedef struct dmlc_ir_graph {
  char name[DMLC_NAME_MAX];
  /* The file the graph was parsed from, as messages name it ("" when it was
   * not parsed): the verifier reports "SOURCE:LINE:COL: ..." for a node with
   * a place. */
  char source[DMLC_SOURCE_MAX];
  dmlc_value_def *values;
  uint32_t num_values, cap_values;
  dmlc_node *nodes;
  uint32_t num_nodes, cap_nodes;
  dmlc_graph_io *inputs;
  uint32_t num_inputs, cap_inputs;
  dmlc_graph_io *outputs;
  uint32_t num_outputs, cap_outputs;
  dmlc_kernel *kernels; /* ordered, non-overlapping node ranges; may be none */
  uint32_t num_kernels, cap_kernels;
  dmlc_kernel_buffer *kernel_buffers;
  uint32_t num_kernel_buffers, cap_kernel_buffers;
} dmlc_ir_graph;

/* Returns NULL when out of memory. */
dmlc_ir_graph *dmlc_ir_graph_create(const char *name);
void dmlc_ir_graph_destroy(dmlc_ir_graph *g);
dmlc_ir_graph *dmlc_ir_graph_clone(const dmlc_ir_graph *g);

/* Builder. Each returns DMLC_OK or DMLC_ERROR_OUT_OF_MEMORY (and sets diag);
 * none checks semantics: that is the verifier's job. */
dmlc_status dmlc_ir_add_input(dmlc_ir_graph *g, const char *name, const dmlc_type *type,
                              const dmlc_layout *layout, uint32_t *out_value, dmlc_diag *diag);
/* Appends node (its result field is ignored) with a new result of type
 * result_type; *out_value receives the result's id (may be NULL). */
dmlc_status dmlc_ir_add_node(dmlc_ir_graph *g, const dmlc_node *node, const dmlc_type *result_type,
                             uint32_t *out_value, dmlc_diag *diag);
dmlc_status dmlc_ir_add_output(dmlc_ir_graph *g, const char *name, uint32_t value,
                               const dmlc_layout *layout, dmlc_diag *diag);
/* Appends a kernel: *kernel with its first_buffer ignored, kernel->num_reads
 * reads and kernel->num_writes writes copied into g->kernel_buffers. */
dmlc_status dmlc_ir_add_kernel(dmlc_ir_graph *g, const dmlc_kernel *kernel,
                               const dmlc_kernel_buffer *reads, const dmlc_kernel_buffer *writes,
                               dmlc_diag *diag);
/* A node with op and no operands or attributes set. */
dmlc_node dmlc_node_make(dmlc_op op);

/* The default name of output i ("out0", "out1", ...). */
void dmlc_default_output_name(uint32_t index, char *buf, size_t size);
bool dmlc_name_is_valid(const char *name);

/* ---- kernel layout arithmetic (ir/kernel.c) ---- */
const dmlc_kernel_buffer *dmlc_kernel_reads(const dmlc_ir_graph *g, const dmlc_kernel *k);
const dmlc_kernel_buffer *dmlc_kernel_writes(const dmlc_ir_graph *g, const dmlc_kernel *k);
/* The strides of a tensor (dims, strides) reshaped to to_dims without
 * copying, NumPy's rule: splitting a dim always works, merging adjacent dims
 * needs stride[i] == stride[i+1] * dims[i+1]; dims of size 1 are ignored and
 * get stride 0 in to_strides. False when the element counts differ or the
 * reshape is not a view. */
bool dmlc_view_strides(const uint32_t *dims, uint32_t rank, const uint64_t *strides,
                       const uint32_t *to_dims, uint32_t to_rank, uint64_t *to_strides);
/* Sets k's space to t's dims of size > 1 (reduced where axes_mask has the
 * dim's bit), or to [1] when none is. */
void dmlc_kernel_set_space(dmlc_kernel *k, const dmlc_type *t, uint32_t axes_mask);
uint64_t dmlc_kernel_num_points(const dmlc_kernel *k);
uint64_t dmlc_kernel_num_kept_points(const dmlc_kernel *k);
/* The strides over k's space of a dense row-major buffer holding one element
 * per space point (reduced = false) or per kept point (reduced = true, 0 on
 * the reduced dims). Dims of size 1 get 0. */
void dmlc_kernel_dense_strides(const dmlc_kernel *k, bool reduced, uint64_t *strides);
/* The strides over k's space of a tensor (dims, strides) whose row-major
 * elements are the space's points (reduced = false) or its kept points
 * (reduced = true) in row-major order; false when that is not a view. */
bool dmlc_kernel_view(const dmlc_kernel *k, bool reduced, const uint32_t *dims, uint32_t rank,
                      const uint64_t *strides, uint64_t *out);
/* What reduced_index yields at each point: the row-major position within the
 * reduced dims, as strides over the space (0 on the kept dims). */
void dmlc_kernel_reduced_index_strides(const dmlc_kernel *k, uint64_t *strides);

/* Checks every invariant; on failure diag names the node and the rule. */
dmlc_status dmlc_ir_verify(const dmlc_ir_graph *g, dmlc_diag *diag);
/* The text form; returns a malloc'ed string or NULL when out of memory. */
char *dmlc_ir_print(const dmlc_ir_graph *g);
/* Writes t as the text form spells it ("f32[2,3]") into buf and returns buf;
 * DMLC_TYPE_STR_MAX bytes always suffice. */
#define DMLC_TYPE_STR_MAX 128
const char *dmlc_type_str(const dmlc_type *t, char *buf, size_t size);
/* Parses the text form; errors are "filename:line:col: message". The result
 * is parsed, not verified. */
dmlc_status dmlc_ir_parse(const char *text, size_t length, const char *filename,
                          dmlc_ir_graph **out, dmlc_diag *diag);

#endif
