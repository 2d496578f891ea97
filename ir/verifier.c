/* The IR's invariants (docs/ir.md, "Verifier rules"). Messages name what
 * broke a rule as the printer spells it: "%2 = argmax: ...", "input 'x': ...",
 * "output 'out0': ...". Checks run in graph order, so every operand a node
 * rule looks at has already passed its own checks. */
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ir/ir.h"

typedef struct verifier {
  const dmlc_ir_graph *g;
  dmlc_diag *diag;
  char where[DMLC_NAME_MAX + 32]; /* what the next message is about */
  uint32_t line, col;             /* where it was written, or 0 */
} verifier;

static dmlc_status fail(const verifier *v, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

static dmlc_status fail(const verifier *v, const char *fmt, ...) {
  char msg[DMLC_DIAG_MAX];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  if (v->line && v->g->source[0])
    return dmlc_diag_set(v->diag, DMLC_ERROR_INVALID_ARGUMENT, "%.*s:%u:%u: %s: %s",
                         (int)strnlen(v->g->source, sizeof v->g->source), v->g->source, v->line,
                         v->col, v->where, msg);
  if (v->where[0])
    return dmlc_diag_set(v->diag, DMLC_ERROR_INVALID_ARGUMENT, "%s: %s", v->where, msg);
  return dmlc_diag_set(v->diag, DMLC_ERROR_INVALID_ARGUMENT, "%s", msg);
}

static int name_len(const char *name) {
  const char *end = memchr(name, '\0', DMLC_NAME_MAX);
  return end ? (int)(end - name) : DMLC_NAME_MAX;
}

static bool name_ok(const char *name) {
  return memchr(name, '\0', DMLC_NAME_MAX) && dmlc_name_is_valid(name);
}

#define TYPE_STR(t, buf) dmlc_type_str((t), (buf), sizeof(buf))
#define BIT(dtype) (1u << DMLC_DTYPE_##dtype)

static const uint32_t index_dtypes = BIT(I32) | BIT(I64) | BIT(U32) | BIT(U64);

/* ---- types and layouts ---- */
static dmlc_status check_type(const verifier *v, const dmlc_type *t, const char *what) {
  char buf[DMLC_TYPE_STR_MAX];
  if ((unsigned)t->dtype >= DMLC_DTYPE_COUNT)
    return fail(v, "%s has an invalid data type %d", what, (int)t->dtype);
  if (t->rank < 1 || t->rank > DMLC_MAX_RANK)
    return fail(v, "%s %s has rank %" PRIu32 "; ranks are 1 to %d", what, TYPE_STR(t, buf), t->rank,
                DMLC_MAX_RANK);
  uint64_t count = 1;
  for (uint32_t i = 0; i < t->rank; i++) {
    if (t->dims[i] == 0)
      return fail(v, "%s %s has a dimension of size 0", what, TYPE_STR(t, buf));
    if (count <= UINT32_MAX) /* each factor < 2^32: no overflow */
      count *= t->dims[i];
  }
  if (count > UINT32_MAX)
    return fail(v, "%s %s has more than 4294967295 elements", what, TYPE_STR(t, buf));
  return DMLC_OK;
}

static dmlc_status check_layout(const verifier *v, const dmlc_type *t, const dmlc_layout *l,
                                bool is_output) {
  for (uint32_t i = 0; i < t->rank; i++)
    if (l->strides[i] > UINT32_MAX)
      return fail(v, "strides[%" PRIu32 "] = %" PRIu64 " exceeds 4294967295", i, l->strides[i]);
  const uint64_t min_size = dmlc_min_size_bytes(t, l->strides);
  if (l->size_bytes < min_size)
    return fail(v,
                "size %" PRIu64 " is less than %" PRIu64 ", the minimum for its type and strides",
                l->size_bytes, min_size);
  const uint32_t esize = dmlc_dtype_size(t->dtype);
  if (l->alignment != 0 && ((l->alignment & (l->alignment - 1)) != 0 || l->alignment < esize))
    return fail(v, "alignment %" PRIu32 " is not 0 or a power of two >= the element size %" PRIu32,
                l->alignment, esize);
  if (is_output && !dmlc_strides_disjoint(t, l->strides))
    return fail(v, "strides that are zero or overlap are not allowed for an output");
  return DMLC_OK;
}

static dmlc_status check_boundary_type(const verifier *v, const dmlc_graph_io *io, bool is_output) {
  const dmlc_type *t = &v->g->values[io->value].type;
  DMLC_RETURN_IF_ERROR(check_type(v, t, "type"));
  if (t->dtype == DMLC_DTYPE_BOOL)
    return fail(v, "bool is not allowed for a graph %s", is_output ? "output" : "input");
  return check_layout(v, t, &io->layout, is_output);
}

/* ---- graph inputs and outputs ---- */
static void set_where_io(verifier *v, const char *kind, const dmlc_graph_io *io) {
  snprintf(v->where, sizeof v->where, "%s '%.*s'", kind, name_len(io->name), io->name);
}

static dmlc_status check_names(const verifier *v, const dmlc_graph_io *ios, uint32_t index) {
  if (!name_ok(ios[index].name))
    return fail(v, "invalid name");
  for (uint32_t j = 0; j < index; j++)
    if (strncmp(ios[j].name, ios[index].name, DMLC_NAME_MAX) == 0)
      return fail(v, "duplicate name");
  return DMLC_OK;
}

static dmlc_status check_input(verifier *v, uint32_t index) {
  const dmlc_ir_graph *g = v->g;
  const dmlc_graph_io *in = &g->inputs[index];
  set_where_io(v, "input", in);
  DMLC_RETURN_IF_ERROR(check_names(v, g->inputs, index));
  if (in->value >= g->num_values || g->values[in->value].producer != -1)
    return fail(v, "value %" PRIu32 " is not a graph input value", in->value);
  for (uint32_t j = 0; j < index; j++)
    if (g->inputs[j].value == in->value)
      return fail(v, "value %" PRIu32 " is also input %" PRIu32, in->value, j);
  return check_boundary_type(v, in, false);
}

static dmlc_status check_output(verifier *v, uint32_t index) {
  const dmlc_ir_graph *g = v->g;
  const dmlc_graph_io *out = &g->outputs[index];
  set_where_io(v, "output", out);
  DMLC_RETURN_IF_ERROR(check_names(v, g->outputs, index));
  if (out->value >= g->num_values)
    return fail(v, "value %" PRIu32 " does not exist", out->value);
  return check_boundary_type(v, out, true);
}

/* ---- shared op rules ---- */
static dmlc_status check_dtype_in(const verifier *v, dmlc_dtype dtype, uint32_t allowed,
                                  const char *what) {
  if (allowed & (1u << dtype))
    return DMLC_OK;
  char list[128] = "";
  size_t len = 0;
  for (int d = 0; d < DMLC_DTYPE_COUNT; d++)
    if (allowed & (1u << d))
      len += (size_t)snprintf(list + len, sizeof list - len, "%s%s", len ? " " : "",
                              dmlc_dtype_name((dmlc_dtype)d));
  /* f64 is NumPy's default; say what to do with it. */
  const char *hint = dtype == DMLC_DTYPE_F64 && (allowed & BIT(F32))
                         ? " (convert f64 data to f32, e.g. x.astype(np.float32) in NumPy)"
                         : "";
  return fail(v, "%s dtype %s is not one of %s%s", what, dmlc_dtype_name(dtype), list, hint);
}

static dmlc_status check_axes(const verifier *v, const dmlc_node *node, uint32_t rank) {
  if (node->num_axes == 0)
    return fail(v, "axes are empty");
  if (node->num_axes > DMLC_MAX_RANK)
    return fail(v, "%" PRIu32 " axes, more than %d", node->num_axes, DMLC_MAX_RANK);
  for (uint32_t i = 0; i < node->num_axes; i++) {
    if (node->axes[i] >= rank)
      return fail(v, "axes[%" PRIu32 "] = %" PRIu32 " is out of range for rank %" PRIu32, i,
                  node->axes[i], rank);
    for (uint32_t j = 0; j < i; j++)
      if (node->axes[j] == node->axes[i])
        return fail(v, "axes[%" PRIu32 "] = %" PRIu32 " repeats axes[%" PRIu32 "]", i,
                    node->axes[i], j);
  }
  return DMLC_OK;
}

/* The largest index over the axes of t (valid axes, valid t) fits dtype. */
static dmlc_status check_index_fits(const verifier *v, const dmlc_node *node, const dmlc_type *t,
                                    dmlc_dtype dtype) {
  uint64_t extent = 1;
  for (uint32_t i = 0; i < node->num_axes; i++)
    extent *= t->dims[node->axes[i]];
  if (extent - 1 > dmlc_dtype_max_index(dtype))
    return fail(v, "largest index %" PRIu64 " does not fit %s", extent - 1, dmlc_dtype_name(dtype));
  return DMLC_OK;
}

/* ---- per-op rules: in is the first operand's type (if any), out the result's ---- */
typedef dmlc_status (*op_rule)(const verifier *v, const dmlc_node *node, const dmlc_type *in,
                               const dmlc_type *out);

static dmlc_status check_arg_reduction(const verifier *v, const dmlc_node *node,
                                       const dmlc_type *in, const dmlc_type *out) {
  const uint32_t inputs = BIT(F32) | BIT(F16) | BIT(I32) | BIT(I16) | BIT(I8) | BIT(U32) |
                          BIT(U16) | BIT(U8) | BIT(I64) | BIT(U64);
  DMLC_RETURN_IF_ERROR(check_dtype_in(v, in->dtype, inputs, "input"));
  DMLC_RETURN_IF_ERROR(check_dtype_in(v, out->dtype, index_dtypes, "result"));
  if ((unsigned)node->direction > DMLC_DIRECTION_DECREASING)
    return fail(v, "invalid direction %d", (int)node->direction);
  DMLC_RETURN_IF_ERROR(check_axes(v, node, in->rank));
  if (out->rank != in->rank)
    return fail(v, "result rank %" PRIu32 " differs from the input rank %" PRIu32, out->rank,
                in->rank);
  const uint32_t reduced = dmlc_axes_mask(node->axes, node->num_axes);
  for (uint32_t i = 0; i < in->rank; i++) {
    const bool is_reduced = dmlc_mask_has_axis(reduced, i);
    const uint32_t want = is_reduced ? 1 : in->dims[i];
    if (out->dims[i] != want)
      return fail(v, "result dimension %" PRIu32 " is %" PRIu32 ", expected %" PRIu32 "%s", i,
                  out->dims[i], want, is_reduced ? " (a reduced axis)" : "");
  }
  return check_index_fits(v, node, in, out->dtype);
}

static dmlc_status check_hardmax(const verifier *v, const dmlc_node *node, const dmlc_type *in,
                                 const dmlc_type *out) {
  char a[DMLC_TYPE_STR_MAX], b[DMLC_TYPE_STR_MAX];
  DMLC_RETURN_IF_ERROR(check_dtype_in(v, in->dtype, BIT(F32) | BIT(F16), "input"));
  if (!dmlc_type_equal(in, out))
    return fail(v, "result type %s differs from the input type %s", TYPE_STR(out, a),
                TYPE_STR(in, b));
  return check_axes(v, node, in->rank);
}

static dmlc_status check_same_dtype(const verifier *v, const dmlc_type *in, const dmlc_type *out) {
  if (in->dtype != out->dtype)
    return fail(v, "result dtype %s differs from the input dtype %s", dmlc_dtype_name(out->dtype),
                dmlc_dtype_name(in->dtype));
  return DMLC_OK;
}

static dmlc_status check_reshape(const verifier *v, const dmlc_node *node, const dmlc_type *in,
                                 const dmlc_type *out) {
  (void)node;
  DMLC_RETURN_IF_ERROR(check_same_dtype(v, in, out));
  if (dmlc_type_num_elements(in) != dmlc_type_num_elements(out))
    return fail(v, "result has %" PRIu64 " elements, the input %" PRIu64,
                dmlc_type_num_elements(out), dmlc_type_num_elements(in));
  return DMLC_OK;
}

static dmlc_status check_broadcast(const verifier *v, const dmlc_node *node, const dmlc_type *in,
                                   const dmlc_type *out) {
  (void)node;
  DMLC_RETURN_IF_ERROR(check_same_dtype(v, in, out));
  if (out->rank != in->rank)
    return fail(v, "result rank %" PRIu32 " differs from the input rank %" PRIu32, out->rank,
                in->rank);
  for (uint32_t i = 0; i < in->rank; i++)
    if (in->dims[i] != out->dims[i] && in->dims[i] != 1)
      return fail(v,
                  "input dimension %" PRIu32 " is %" PRIu32 ", neither 1 nor the result's %" PRIu32,
                  i, in->dims[i], out->dims[i]);
  return DMLC_OK;
}

static dmlc_status check_reduced_index(const verifier *v, const dmlc_node *node,
                                       const dmlc_type *in, const dmlc_type *out) {
  (void)in;
  DMLC_RETURN_IF_ERROR(check_dtype_in(v, out->dtype, index_dtypes, "result"));
  DMLC_RETURN_IF_ERROR(check_axes(v, node, out->rank));
  return check_index_fits(v, node, out, out->dtype);
}

static dmlc_status check_eq(const verifier *v, const dmlc_node *node, const dmlc_type *in,
                            const dmlc_type *out) {
  char a[DMLC_TYPE_STR_MAX], b[DMLC_TYPE_STR_MAX];
  const dmlc_type *rhs = &v->g->values[node->operands[1]].type;
  if (!dmlc_type_equal(in, rhs))
    return fail(v, "operand types %s and %s differ", TYPE_STR(in, a), TYPE_STR(rhs, b));
  dmlc_type want = *in;
  want.dtype = DMLC_DTYPE_BOOL;
  if (!dmlc_type_equal(out, &want))
    return fail(v, "result type %s is not %s", TYPE_STR(out, a), TYPE_STR(&want, b));
  return DMLC_OK;
}

static dmlc_status check_cast(const verifier *v, const dmlc_node *node, const dmlc_type *in,
                              const dmlc_type *out) {
  (void)node;
  char a[DMLC_TYPE_STR_MAX], b[DMLC_TYPE_STR_MAX];
  dmlc_type want = *in;
  want.dtype = out->dtype;
  if (!dmlc_type_equal(out, &want))
    return fail(v, "result type %s does not have the dimensions of the input type %s",
                TYPE_STR(out, a), TYPE_STR(in, b));
  const bool from_float = dmlc_dtype_is_float(in->dtype);
  if (from_float && !dmlc_dtype_is_float(out->dtype))
    return fail(v, "cast from %s to %s is not supported", dmlc_dtype_name(in->dtype),
                dmlc_dtype_name(out->dtype));
  return DMLC_OK;
}

static dmlc_status check_constant(const verifier *v, const dmlc_node *node, const dmlc_type *in,
                                  const dmlc_type *out) {
  (void)in;
  const dmlc_dtype_info *info = dmlc_dtype_get(out->dtype);
  const int64_t value = node->value;
  bool fits = true;
  if (info->kind == DMLC_KIND_BOOL) {
    fits = value == 0 || value == 1;
  } else if (info->kind == DMLC_KIND_UNSIGNED) {
    fits = value >= 0 && (uint64_t)value <= dmlc_dtype_max_index(out->dtype);
  } else if (info->kind == DMLC_KIND_SIGNED) {
    const int64_t max = (int64_t)dmlc_dtype_max_index(out->dtype);
    fits = value <= max && value >= -max - 1;
  }
  if (!fits)
    return fail(v, "value %" PRId64 " does not fit %s", value, info->name);
  return DMLC_OK;
}

/* Each op's rule, in ops.def's order. */
static const op_rule op_rules[] = {
#define X(id, name, nopnd, attrs, kind, rule) check_##rule,
#include "ir/ops.def"
#undef X
};
_Static_assert(sizeof op_rules / sizeof op_rules[0] == DMLC_OP_COUNT,
               "op_rules: one rule per op of ir/ops.def");

/* ---- nodes ---- */
static dmlc_status check_node(verifier *v, uint32_t index) {
  const dmlc_ir_graph *g = v->g;
  const dmlc_node *node = &g->nodes[index];
  if ((unsigned)node->op >= DMLC_OP_COUNT) {
    snprintf(v->where, sizeof v->where, "%%%" PRIu32, index);
    return fail(v, "invalid op %d", (int)node->op);
  }
  const dmlc_op_info *info = dmlc_op_get(node->op);
  /* The user's name and place for a node that was written as text. */
  v->line = node->src_line;
  v->col = node->src_col;
  if (node->src_name[0] && memchr(node->src_name, '\0', sizeof node->src_name))
    snprintf(v->where, sizeof v->where, "%%%s = %s", node->src_name, info->name);
  else
    snprintf(v->where, sizeof v->where, "%%%" PRIu32 " = %s", index, info->name);
  if (node->num_operands != info->num_operands)
    return fail(v, "%" PRIu32 " operands, the op takes %" PRIu32, node->num_operands,
                info->num_operands);
  for (uint32_t i = 0; i < node->num_operands; i++) {
    const uint32_t operand = node->operands[i];
    if (operand >= g->num_values || g->values[operand].producer >= (int32_t)index)
      return fail(v, "operand %" PRIu32 " (value %" PRIu32 ") is not defined before the node", i,
                  operand);
  }
  if (node->result >= g->num_values || g->values[node->result].producer != (int32_t)index)
    return fail(v, "the producer of its result (value %" PRIu32 ") is not this node", node->result);
  const dmlc_type *out = &g->values[node->result].type;
  DMLC_RETURN_IF_ERROR(check_type(v, out, "result type"));
  const dmlc_type *in = node->num_operands ? &g->values[node->operands[0]].type : NULL;
  return op_rules[node->op](v, node, in, out); /* node->op < DMLC_OP_COUNT: checked above */
}

/* Every value is a graph input's or a node's result, and says which. */
static dmlc_status check_producers(verifier *v) {
  const dmlc_ir_graph *g = v->g;
  for (uint32_t val = 0; val < g->num_values; val++) {
    const int32_t producer = g->values[val].producer;
    bool ok = false;
    if (producer == -1) {
      for (uint32_t i = 0; i < g->num_inputs && !ok; i++)
        ok = g->inputs[i].value == val;
    } else if (producer >= 0 && (uint32_t)producer < g->num_nodes) {
      ok = g->nodes[producer].result == val;
    }
    if (!ok)
      return fail(
          v, "value %" PRIu32 " (producer %" PRId32 ") is neither a graph input nor a node result",
          val, producer);
  }
  return DMLC_OK;
}

/* ---- kernels ---- */
/* The value as the printer spells it: "%3" or "%x". */
static const char *value_str(const dmlc_ir_graph *g, uint32_t value, char *buf, size_t size) {
  const int32_t producer = g->values[value].producer;
  if (producer >= 0) {
    snprintf(buf, size, "%%%" PRId32, producer);
    return buf;
  }
  snprintf(buf, size, "%%<input>");
  for (uint32_t i = 0; i < g->num_inputs; i++)
    if (g->inputs[i].value == value)
      snprintf(buf, size, "%%%.*s", name_len(g->inputs[i].name), g->inputs[i].name);
  return buf;
}

#define VALUE_STR(value, buf) value_str(v->g, (value), (buf), sizeof(buf))

static bool defined_inside(const dmlc_ir_graph *g, const dmlc_kernel *k, uint32_t value) {
  const int32_t producer = g->values[value].producer;
  return producer >= (int32_t)k->first_node && (uint32_t)producer < k->first_node + k->num_nodes;
}

static bool used_inside(const dmlc_ir_graph *g, const dmlc_kernel *k, uint32_t value) {
  for (uint32_t n = k->first_node; n < k->first_node + k->num_nodes; n++)
    for (uint32_t i = 0; i < g->nodes[n].num_operands; i++)
      if (g->nodes[n].operands[i] == value)
        return true;
  return false;
}

static bool has_buffer(const dmlc_kernel_buffer *bufs, uint32_t count, uint32_t value,
                       int32_t output) {
  for (uint32_t i = 0; i < count; i++)
    if (bufs[i].value == value && bufs[i].output == output)
      return true;
  return false;
}

/* The range, the space and where the buffers live. */
static dmlc_status check_kernel_shape(const verifier *v, const dmlc_kernel *k, uint32_t prev_end) {
  const dmlc_ir_graph *g = v->g;
  if (k->num_nodes == 0)
    return fail(v, "the kernel has no nodes");
  if (k->first_node < prev_end)
    return fail(v, "its nodes start at %%%" PRIu32 ", inside the previous kernel", k->first_node);
  if (k->first_node >= g->num_nodes || k->num_nodes > g->num_nodes - k->first_node)
    return fail(v, "its nodes %%%" PRIu32 " to %%%" PRIu64 " are not all in the graph",
                k->first_node, (uint64_t)k->first_node + k->num_nodes - 1);
  if (k->rank < 1 || k->rank > DMLC_MAX_RANK)
    return fail(v, "the space has rank %" PRIu32 "; ranks are 1 to %d", k->rank, DMLC_MAX_RANK);
  for (uint32_t d = 0; d < k->rank; d++)
    if (k->dims[d] == 0)
      return fail(v, "space dimension %" PRIu32 " is 0", d);
  if (k->reduced_mask >> k->rank)
    return fail(v, "the reduced mask 0x%" PRIx32 " has dims beyond the rank %" PRIu32,
                k->reduced_mask, k->rank);
  if (k->first_buffer > g->num_kernel_buffers ||
      (uint64_t)k->num_reads + k->num_writes > g->num_kernel_buffers - k->first_buffer)
    return fail(v, "its buffers are not all in the graph's kernel buffers");
  return DMLC_OK;
}

static dmlc_status check_kernel_reads(const verifier *v, const dmlc_kernel *k) {
  const dmlc_ir_graph *g = v->g;
  const dmlc_kernel_buffer *reads = dmlc_kernel_reads(g, k);
  char a[DMLC_NAME_MAX + 16];
  for (uint32_t i = 0; i < k->num_reads; i++) {
    const dmlc_kernel_buffer *b = &reads[i];
    if (b->value >= g->num_values)
      return fail(v, "read %" PRIu32 " names value %" PRIu32 ", which does not exist", i, b->value);
    if (b->output != -1)
      return fail(v, "read %s names an output", VALUE_STR(b->value, a));
    if (g->values[b->value].producer >= (int32_t)k->first_node)
      return fail(v, "read %s is not defined before the kernel", VALUE_STR(b->value, a));
    if (!used_inside(g, k, b->value))
      return fail(v, "read %s is not used inside the kernel", VALUE_STR(b->value, a));
    if (has_buffer(reads, i, b->value, -1))
      return fail(v, "%s is read twice", VALUE_STR(b->value, a));
  }
  for (uint32_t n = k->first_node; n < k->first_node + k->num_nodes; n++)
    for (uint32_t i = 0; i < g->nodes[n].num_operands; i++) {
      const uint32_t operand = g->nodes[n].operands[i];
      if (!defined_inside(g, k, operand) && !has_buffer(reads, k->num_reads, operand, -1))
        return fail(v, "%%%" PRIu32 " uses %s, which is not in reads", n, VALUE_STR(operand, a));
    }
  return DMLC_OK;
}

static dmlc_status check_kernel_writes(const verifier *v, const dmlc_kernel *k) {
  const dmlc_ir_graph *g = v->g;
  const dmlc_kernel_buffer *writes = dmlc_kernel_writes(g, k);
  char a[DMLC_NAME_MAX + 16];
  for (uint32_t i = 0; i < k->num_writes; i++) {
    const dmlc_kernel_buffer *b = &writes[i];
    if (b->value >= g->num_values)
      return fail(v, "write %" PRIu32 " names value %" PRIu32 ", which does not exist", i,
                  b->value);
    if (!defined_inside(g, k, b->value))
      return fail(v, "written value %s is not defined inside the kernel", VALUE_STR(b->value, a));
    if (b->output < -1 || b->output >= (int64_t)g->num_outputs)
      return fail(v, "write of %s names output %" PRId32 ", which does not exist",
                  VALUE_STR(b->value, a), b->output);
    if (b->output >= 0 && g->outputs[b->output].value != b->value)
      return fail(v, "write of %s names output '%.*s', which returns another value",
                  VALUE_STR(b->value, a), name_len(g->outputs[b->output].name),
                  g->outputs[b->output].name);
    if (has_buffer(writes, i, b->value, b->output))
      return fail(v, "%s is written twice to the same buffer", VALUE_STR(b->value, a));
  }
  return DMLC_OK;
}

/* Each value defined in a kernel and used by a later node outside it has a
 * dense write; each graph output defined in a kernel has its write. */
static void set_where_kernel(verifier *v, const dmlc_kernel *k, uint32_t index) {
  snprintf(v->where, sizeof v->where, "kernel @k%" PRIu32, index);
  v->line = k->src_line;
  v->col = k->src_col;
}

static dmlc_status check_kernel_escapes(verifier *v, const int32_t *kernel_of) {
  const dmlc_ir_graph *g = v->g;
  char a[DMLC_NAME_MAX + 16];
  for (uint32_t n = 0; n < g->num_nodes; n++)
    for (uint32_t i = 0; i < g->nodes[n].num_operands; i++) {
      const uint32_t operand = g->nodes[n].operands[i];
      const int32_t producer = g->values[operand].producer;
      if (producer < 0 || kernel_of[producer] < 0 || kernel_of[producer] == kernel_of[n])
        continue;
      const dmlc_kernel *k = &g->kernels[kernel_of[producer]];
      set_where_kernel(v, k, (uint32_t)kernel_of[producer]);
      if (!has_buffer(dmlc_kernel_writes(g, k), k->num_writes, operand, -1))
        return fail(v, "%s is used by %%%" PRIu32 " outside the kernel but not written",
                    VALUE_STR(operand, a), n);
    }
  for (uint32_t o = 0; o < g->num_outputs; o++) {
    const uint32_t value = g->outputs[o].value;
    const int32_t producer = g->values[value].producer;
    if (producer < 0 || kernel_of[producer] < 0)
      continue;
    const dmlc_kernel *k = &g->kernels[kernel_of[producer]];
    set_where_kernel(v, k, (uint32_t)kernel_of[producer]);
    if (!has_buffer(dmlc_kernel_writes(g, k), k->num_writes, value, (int32_t)o))
      return fail(v, "%s is output '%.*s' but not written to it", VALUE_STR(value, a),
                  name_len(g->outputs[o].name), g->outputs[o].name);
  }
  return DMLC_OK;
}

static dmlc_status check_kernels(verifier *v) {
  const dmlc_ir_graph *g = v->g;
  if (g->num_kernels == 0)
    return DMLC_OK;
  int32_t *kernel_of = malloc((g->num_nodes ? g->num_nodes : 1) * sizeof *kernel_of);
  if (!kernel_of)
    return dmlc_diag_set(v->diag, DMLC_ERROR_OUT_OF_MEMORY, "out of memory verifying kernels");
  for (uint32_t n = 0; n < g->num_nodes; n++)
    kernel_of[n] = -1;
  dmlc_status st = DMLC_OK;
  uint32_t prev_end = 0;
  for (uint32_t i = 0; i < g->num_kernels && st == DMLC_OK; i++) {
    const dmlc_kernel *k = &g->kernels[i];
    set_where_kernel(v, k, i);
    st = check_kernel_shape(v, k, prev_end);
    if (st == DMLC_OK)
      st = check_kernel_reads(v, k);
    if (st == DMLC_OK)
      st = check_kernel_writes(v, k);
    if (st != DMLC_OK)
      break;
    for (uint32_t n = k->first_node; n < k->first_node + k->num_nodes; n++)
      kernel_of[n] = (int32_t)i;
    prev_end = k->first_node + k->num_nodes;
  }
  if (st == DMLC_OK)
    st = check_kernel_escapes(v, kernel_of);
  free(kernel_of);
  return st;
}

dmlc_status dmlc_ir_verify(const dmlc_ir_graph *g, dmlc_diag *diag) {
  verifier v = {g, diag, "", 0, 0};
  if (!name_ok(g->name))
    return fail(&v, "invalid graph name '%.*s'", name_len(g->name), g->name);
  if (g->num_outputs == 0)
    return fail(&v, "the graph has no outputs");
  DMLC_RETURN_IF_ERROR(check_producers(&v));
  for (uint32_t i = 0; i < g->num_inputs; i++)
    DMLC_RETURN_IF_ERROR(check_input(&v, i));
  for (uint32_t i = 0; i < g->num_nodes; i++)
    DMLC_RETURN_IF_ERROR(check_node(&v, i));
  v.line = v.col = 0;
  for (uint32_t i = 0; i < g->num_outputs; i++)
    DMLC_RETURN_IF_ERROR(check_output(&v, i));
  return check_kernels(&v);
}
