/* The reference evaluator. Each graph input is gathered through its layout
 * into a dense row-major temporary, each node is evaluated in order into a
 * dense temporary, each graph output is scattered through its layout.
 * Nothing here is clever: every op is computed from its definition in
 * spec/OPERATORS.md, one element at a time, through scalar.h. */
#include "runtime/reference/reference.h"

#include <stdlib.h>
#include <string.h>

#include "runtime/reference/scalar.h"

typedef struct ref_eval {
  const dmlc_ir_graph *g;
  unsigned char **data; /* per value id: its dense contents, or NULL */
  dmlc_diag *diag;
} ref_eval;

/* ---- coordinates ---- */

/* Advances c to the next coordinate of t in row-major order; false after the
 * last one (c is then all zeros again). */
static bool coord_next(const dmlc_type *t, uint32_t *c) {
  for (uint32_t i = t->rank; i-- > 0;) {
    if (++c[i] < t->dims[i])
      return true;
    c[i] = 0;
  }
  return false;
}

static uint64_t coord_offset(const dmlc_type *t, const uint32_t *c, const uint64_t *strides) {
  uint64_t off = 0;
  for (uint32_t i = 0; i < t->rank; i++)
    off += (uint64_t)c[i] * strides[i];
  return off;
}

/* Strides that map a coordinate of t to its index within the reduced axes:
 * row-major over the reduced dims in ascending dimension order, 0 on the
 * kept dims. */
static void reduced_index_strides(const dmlc_type *t, uint32_t reduced, uint64_t *strides) {
  uint64_t s = 1;
  /* rank <= DMLC_MAX_RANK by the verifier; bounded here for the compiler. */
  const uint32_t rank = t->rank < DMLC_MAX_RANK ? t->rank : DMLC_MAX_RANK;
  for (uint32_t d = rank; d-- > 0;) {
    strides[d] = dmlc_mask_has_axis(reduced, d) ? s : 0;
    if (dmlc_mask_has_axis(reduced, d))
      s *= t->dims[d];
  }
}

/* Strides that map a coordinate of t to the dense row-major offset of its
 * group (t with the reduced dims set to 1): 0 on the reduced dims. */
static void kept_strides(const dmlc_type *t, uint32_t reduced, uint64_t *strides) {
  uint64_t s = 1;
  /* rank <= DMLC_MAX_RANK by the verifier; bounded here for the compiler. */
  const uint32_t rank = t->rank < DMLC_MAX_RANK ? t->rank : DMLC_MAX_RANK;
  for (uint32_t d = rank; d-- > 0;) {
    strides[d] = dmlc_mask_has_axis(reduced, d) ? 0 : s;
    if (!dmlc_mask_has_axis(reduced, d))
      s *= t->dims[d];
  }
}

/* ---- temporaries ---- */

static dmlc_status alloc_bytes(ref_eval *ev, uint64_t count, uint32_t size, void **out) {
  if (count > SIZE_MAX / size)
    return dmlc_diag_set(ev->diag, DMLC_ERROR_OUT_OF_MEMORY,
                         "reference: %llu elements do not fit in memory",
                         (unsigned long long)count);
  *out = malloc((size_t)(count ? count : 1) * size);
  if (!*out)
    return dmlc_diag_set(ev->diag, DMLC_ERROR_OUT_OF_MEMORY,
                         "reference: out of memory allocating %llu bytes",
                         (unsigned long long)count * size);
  return DMLC_OK;
}

static const dmlc_type *value_type(const ref_eval *ev, uint32_t v) {
  return &ev->g->values[v].type;
}

static dmlc_status alloc_value(ref_eval *ev, uint32_t v) {
  const dmlc_type *t = value_type(ev, v);
  void *p;
  DMLC_RETURN_IF_ERROR(alloc_bytes(ev, dmlc_type_num_elements(t), dmlc_dtype_size(t->dtype), &p));
  ev->data[v] = p;
  return DMLC_OK;
}

/* ---- graph inputs and outputs ---- */

/* The byte just past the last element a layout reaches. */
static uint64_t layout_extent(const dmlc_type *t, const uint64_t *strides) {
  uint64_t last = 0;
  for (uint32_t i = 0; i < t->rank; i++)
    last += (uint64_t)(t->dims[i] - 1) * strides[i];
  return (last + 1) * dmlc_dtype_size(t->dtype);
}

static dmlc_status check_buffer(ref_eval *ev, const dmlc_graph_io *io, const dmlc_buffer *buf,
                                const char *what, uint32_t index) {
  const dmlc_type *t = value_type(ev, io->value);
  const uint64_t need = layout_extent(t, io->layout.strides);
  if (!buf->data || buf->size_bytes < need)
    return dmlc_diag_set(ev->diag, DMLC_ERROR_INVALID_ARGUMENT,
                         "reference: %s %u (%s) needs a buffer of %llu bytes, got %llu%s", what,
                         index, io->name, (unsigned long long)need,
                         (unsigned long long)buf->size_bytes, buf->data ? "" : " (NULL)");
  return DMLC_OK;
}

static dmlc_status gather_input(ref_eval *ev, uint32_t index, const dmlc_buffer *buf) {
  const dmlc_graph_io *io = &ev->g->inputs[index];
  DMLC_RETURN_IF_ERROR(check_buffer(ev, io, buf, "input", index));
  DMLC_RETURN_IF_ERROR(alloc_value(ev, io->value));
  const dmlc_type *t = value_type(ev, io->value);
  const uint32_t esize = dmlc_dtype_size(t->dtype);
  const unsigned char *src = buf->data;
  unsigned char *dst = ev->data[io->value];
  uint32_t c[DMLC_MAX_RANK] = {0};
  uint64_t k = 0;
  do {
    memcpy(dst + k++ * esize, src + coord_offset(t, c, io->layout.strides) * esize, esize);
  } while (coord_next(t, c));
  return DMLC_OK;
}

static dmlc_status scatter_output(ref_eval *ev, uint32_t index, const dmlc_buffer *buf) {
  const dmlc_graph_io *io = &ev->g->outputs[index];
  DMLC_RETURN_IF_ERROR(check_buffer(ev, io, buf, "output", index));
  const unsigned char *src = ev->data[io->value];
  if (!src)
    return dmlc_diag_set(ev->diag, DMLC_ERROR_INTERNAL, "reference: output %u (%s) has no value",
                         index, io->name);
  const dmlc_type *t = value_type(ev, io->value);
  const uint32_t esize = dmlc_dtype_size(t->dtype);
  unsigned char *dst = buf->data;
  uint32_t c[DMLC_MAX_RANK] = {0};
  uint64_t k = 0;
  do {
    memcpy(dst + coord_offset(t, c, io->layout.strides) * esize, src + k++ * esize, esize);
  } while (coord_next(t, c));
  return DMLC_OK;
}

/* ---- ops ---- */

/* For each group of in (the elements sharing the coordinates of the kept
 * dims), the index within the reduced axes of its maximum (is_max) or
 * minimum, ties and NaNs per spec/OPERATORS.md. index[] is dense row-major
 * over in's dims with the reduced ones set to 1.
 *
 * Walking in in row-major order visits the elements of each group in
 * increasing reduced index, starting at index 0. So: take the first element,
 * then replace on strictly better (increasing: the first of the ties wins)
 * or on not worse (decreasing: the last wins). */
static dmlc_status arg_reduce(ref_eval *ev, const dmlc_type *in_t, const unsigned char *in,
                              const uint32_t *axes, uint32_t num_axes, bool is_max,
                              dmlc_direction direction, uint64_t *index) {
  uint64_t rstrides[DMLC_MAX_RANK], kstrides[DMLC_MAX_RANK];
  const uint32_t reduced = dmlc_axes_mask(axes, num_axes);
  reduced_index_strides(in_t, reduced, rstrides);
  kept_strides(in_t, reduced, kstrides);

  uint64_t groups = 1;
  for (uint32_t d = 0; d < in_t->rank; d++)
    groups *= dmlc_mask_has_axis(reduced, d) ? 1 : in_t->dims[d];
  dmlc_scalar *best;
  DMLC_RETURN_IF_ERROR(alloc_bytes(ev, groups, sizeof *best, (void **)&best));

  const uint32_t esize = dmlc_dtype_size(in_t->dtype);
  uint32_t c[DMLC_MAX_RANK] = {0};
  uint64_t k = 0;
  do {
    const dmlc_scalar x = dmlc_scalar_load(in_t->dtype, in + k++ * esize);
    const uint64_t group = coord_offset(in_t, c, kstrides);
    const uint64_t r = coord_offset(in_t, c, rstrides);
    bool take = r == 0;
    if (!take) {
      const int cmp = dmlc_scalar_compare(x, best[group], is_max);
      const int better = is_max ? cmp : -cmp; /* > 0: x beats the best so far */
      take = direction == DMLC_DIRECTION_INCREASING ? better > 0 : better >= 0;
    }
    if (take) {
      best[group] = x;
      index[group] = r;
    }
  } while (coord_next(in_t, c));
  free(best);
  return DMLC_OK;
}

static dmlc_status eval_arg(ref_eval *ev, const dmlc_node *n, bool is_max) {
  const dmlc_type *in_t = value_type(ev, n->operands[0]);
  const dmlc_type *out_t = value_type(ev, n->result);
  const uint64_t count = dmlc_type_num_elements(out_t);
  uint64_t *index;
  DMLC_RETURN_IF_ERROR(alloc_bytes(ev, count, sizeof *index, (void **)&index));
  dmlc_status st = arg_reduce(ev, in_t, ev->data[n->operands[0]], n->axes, n->num_axes, is_max,
                              n->direction, index);
  if (st == DMLC_OK) {
    const uint32_t esize = dmlc_dtype_size(out_t->dtype);
    for (uint64_t k = 0; k < count; k++)
      dmlc_scalar_store(out_t->dtype, ev->data[n->result] + k * esize,
                        dmlc_scalar_from_u64(index[k]));
  }
  free(index);
  return st;
}

/* hardmax, by its definition: argmax (increasing), broadcast back, and 1
 * where it equals the coordinate's reduced index. */
static dmlc_status eval_hardmax(ref_eval *ev, const dmlc_node *n) {
  const dmlc_type *t = value_type(ev, n->operands[0]);
  const dmlc_type *out_t = value_type(ev, n->result);
  uint64_t rstrides[DMLC_MAX_RANK], kstrides[DMLC_MAX_RANK];
  const uint32_t reduced = dmlc_axes_mask(n->axes, n->num_axes);
  reduced_index_strides(t, reduced, rstrides);
  kept_strides(t, reduced, kstrides);

  uint64_t groups = 1;
  for (uint32_t d = 0; d < t->rank; d++)
    groups *= dmlc_mask_has_axis(reduced, d) ? 1 : t->dims[d];
  uint64_t *index;
  DMLC_RETURN_IF_ERROR(alloc_bytes(ev, groups, sizeof *index, (void **)&index));
  dmlc_status st = arg_reduce(ev, t, ev->data[n->operands[0]], n->axes, n->num_axes, true,
                              DMLC_DIRECTION_INCREASING, index);
  if (st == DMLC_OK) {
    const uint32_t esize = dmlc_dtype_size(out_t->dtype);
    uint32_t c[DMLC_MAX_RANK] = {0};
    uint64_t k = 0;
    do {
      const bool hit = index[coord_offset(t, c, kstrides)] == coord_offset(t, c, rstrides);
      dmlc_scalar_store(out_t->dtype, ev->data[n->result] + k++ * esize,
                        dmlc_scalar_from_u64(hit ? 1 : 0));
    } while (coord_next(t, c));
  }
  free(index);
  return st;
}

static dmlc_status eval_reshape(ref_eval *ev, const dmlc_node *n) {
  const dmlc_type *t = value_type(ev, n->result);
  memcpy(ev->data[n->result], ev->data[n->operands[0]],
         (size_t)dmlc_type_num_elements(t) * dmlc_dtype_size(t->dtype));
  return DMLC_OK;
}

/* Operand dims of size 1 repeat; dims align from the right, so an operand
 * of lower rank broadcasts over the leading dims. */
static dmlc_status eval_broadcast(ref_eval *ev, const dmlc_node *n) {
  const dmlc_type *in_t = value_type(ev, n->operands[0]);
  const dmlc_type *t = value_type(ev, n->result);
  uint64_t in_packed[DMLC_MAX_RANK], strides[DMLC_MAX_RANK];
  dmlc_packed_strides(in_t, in_packed);
  const uint32_t lead = t->rank - in_t->rank;
  for (uint32_t d = 0; d < t->rank; d++)
    strides[d] = d < lead || in_t->dims[d - lead] == 1 ? 0 : in_packed[d - lead];
  const uint32_t esize = dmlc_dtype_size(t->dtype);
  const unsigned char *src = ev->data[n->operands[0]];
  uint32_t c[DMLC_MAX_RANK] = {0};
  uint64_t k = 0;
  do {
    memcpy(ev->data[n->result] + k++ * esize, src + coord_offset(t, c, strides) * esize, esize);
  } while (coord_next(t, c));
  return DMLC_OK;
}

static dmlc_status eval_reduced_index(ref_eval *ev, const dmlc_node *n) {
  const dmlc_type *t = value_type(ev, n->result);
  uint64_t rstrides[DMLC_MAX_RANK];
  const uint32_t reduced = dmlc_axes_mask(n->axes, n->num_axes);
  reduced_index_strides(t, reduced, rstrides);
  const uint32_t esize = dmlc_dtype_size(t->dtype);
  uint32_t c[DMLC_MAX_RANK] = {0};
  uint64_t k = 0;
  do {
    dmlc_scalar_store(t->dtype, ev->data[n->result] + k++ * esize,
                      dmlc_scalar_from_u64(coord_offset(t, c, rstrides)));
  } while (coord_next(t, c));
  return DMLC_OK;
}

static dmlc_status eval_eq(ref_eval *ev, const dmlc_node *n) {
  const dmlc_type *a_t = value_type(ev, n->operands[0]);
  const dmlc_type *b_t = value_type(ev, n->operands[1]);
  const dmlc_type *t = value_type(ev, n->result);
  const uint32_t a_size = dmlc_dtype_size(a_t->dtype), b_size = dmlc_dtype_size(b_t->dtype);
  const uint32_t esize = dmlc_dtype_size(t->dtype);
  const uint64_t count = dmlc_type_num_elements(t);
  for (uint64_t k = 0; k < count; k++) {
    const dmlc_scalar a = dmlc_scalar_load(a_t->dtype, ev->data[n->operands[0]] + k * a_size);
    const dmlc_scalar b = dmlc_scalar_load(b_t->dtype, ev->data[n->operands[1]] + k * b_size);
    dmlc_scalar_store(t->dtype, ev->data[n->result] + k * esize,
                      dmlc_scalar_from_u64(dmlc_scalar_equal(a, b) ? 1 : 0));
  }
  return DMLC_OK;
}

static dmlc_status eval_cast(ref_eval *ev, const dmlc_node *n) {
  const dmlc_type *in_t = value_type(ev, n->operands[0]);
  const dmlc_type *t = value_type(ev, n->result);
  const uint32_t in_size = dmlc_dtype_size(in_t->dtype), esize = dmlc_dtype_size(t->dtype);
  const uint64_t count = dmlc_type_num_elements(t);
  if (in_t->dtype == t->dtype && in_t->dtype != DMLC_DTYPE_BOOL)
    return eval_reshape(ev, n); /* the identity, NaN payloads included */
  for (uint64_t k = 0; k < count; k++)
    dmlc_scalar_store(t->dtype, ev->data[n->result] + k * esize,
                      dmlc_scalar_load(in_t->dtype, ev->data[n->operands[0]] + k * in_size));
  return DMLC_OK;
}

static dmlc_status eval_constant(ref_eval *ev, const dmlc_node *n) {
  const dmlc_type *t = value_type(ev, n->result);
  const uint32_t esize = dmlc_dtype_size(t->dtype);
  const uint64_t count = dmlc_type_num_elements(t);
  const uint64_t bits = dmlc_dtype_bits_from_i64(t->dtype, n->value);
  for (uint64_t k = 0; k < count; k++)
    dmlc_element_store_bits(ev->data[n->result] + k * esize, esize, bits);
  return DMLC_OK;
}

/* The shape rules this file relies on to stay inside its temporaries. The
 * verifier checks them (and more); an unverified graph that breaks one gets
 * an error here rather than a wild read. */
static bool same_dims(const dmlc_type *a, const dmlc_type *b) {
  if (a->rank != b->rank)
    return false;
  for (uint32_t d = 0; d < a->rank; d++)
    if (a->dims[d] != b->dims[d])
      return false;
  return true;
}

static bool axes_ok(const dmlc_node *n, const dmlc_type *t) {
  for (uint32_t k = 0; k < n->num_axes; k++)
    if (n->axes[k] >= t->rank)
      return false;
  return n->num_axes <= DMLC_MAX_RANK;
}

static bool node_shapes_ok(const ref_eval *ev, const dmlc_node *n) {
  const dmlc_type *t = value_type(ev, n->result);
  const dmlc_type *a = n->num_operands > 0 ? value_type(ev, n->operands[0]) : NULL;
  const dmlc_type *b = n->num_operands > 1 ? value_type(ev, n->operands[1]) : NULL;
  if (n->num_operands != dmlc_op_get(n->op)->num_operands)
    return false;
  switch (n->op) {
  case DMLC_OP_ARGMAX:
  case DMLC_OP_ARGMIN: {
    if (!axes_ok(n, a) || t->rank != a->rank)
      return false;
    const uint32_t reduced = dmlc_axes_mask(n->axes, n->num_axes);
    for (uint32_t d = 0; d < a->rank; d++)
      if (t->dims[d] != (dmlc_mask_has_axis(reduced, d) ? 1 : a->dims[d]))
        return false;
    return true;
  }
  case DMLC_OP_HARDMAX:
    return axes_ok(n, a) && same_dims(a, t);
  case DMLC_OP_RESHAPE:
    return dmlc_type_num_elements(a) == dmlc_type_num_elements(t) &&
           dmlc_dtype_size(a->dtype) == dmlc_dtype_size(t->dtype);
  case DMLC_OP_BROADCAST:
    if (a->rank > t->rank || dmlc_dtype_size(a->dtype) != dmlc_dtype_size(t->dtype))
      return false;
    for (uint32_t d = 0; d < a->rank; d++) {
      const uint32_t ad = a->dims[d], td = t->dims[d + t->rank - a->rank];
      if (ad != 1 && ad != td)
        return false;
    }
    return true;
  case DMLC_OP_REDUCED_INDEX:
    return axes_ok(n, t);
  case DMLC_OP_EQ:
    return a->dtype == b->dtype && same_dims(a, t) && same_dims(b, t);
  case DMLC_OP_CAST:
    return same_dims(a, t);
  case DMLC_OP_CONSTANT:
    return true;
  default:
    return false;
  }
}

static dmlc_status eval_node(ref_eval *ev, uint32_t index) {
  const dmlc_node *n = &ev->g->nodes[index];
  if ((unsigned)n->op >= DMLC_OP_COUNT || n->num_operands > DMLC_MAX_OPERANDS)
    return dmlc_diag_set(ev->diag, DMLC_ERROR_INTERNAL, "reference: node %u is malformed", index);
  for (uint32_t i = 0; i < n->num_operands; i++)
    if (n->operands[i] >= ev->g->num_values || !ev->data[n->operands[i]])
      return dmlc_diag_set(ev->diag, DMLC_ERROR_INTERNAL,
                           "reference: node %u (%s) reads a value not computed before it", index,
                           dmlc_op_get(n->op)->name);
  if (n->result >= ev->g->num_values || ev->data[n->result])
    return dmlc_diag_set(ev->diag, DMLC_ERROR_INTERNAL, "reference: node %u has a bad result",
                         index);
  if (!node_shapes_ok(ev, n))
    return dmlc_diag_set(ev->diag, DMLC_ERROR_INTERNAL,
                         "reference: node %u (%s) has operand or result shapes it cannot have",
                         index, dmlc_op_get(n->op)->name);
  DMLC_RETURN_IF_ERROR(alloc_value(ev, n->result));
  switch (n->op) {
  case DMLC_OP_ARGMAX:
    return eval_arg(ev, n, true);
  case DMLC_OP_ARGMIN:
    return eval_arg(ev, n, false);
  case DMLC_OP_HARDMAX:
    return eval_hardmax(ev, n);
  case DMLC_OP_RESHAPE:
    return eval_reshape(ev, n);
  case DMLC_OP_BROADCAST:
    return eval_broadcast(ev, n);
  case DMLC_OP_REDUCED_INDEX:
    return eval_reduced_index(ev, n);
  case DMLC_OP_EQ:
    return eval_eq(ev, n);
  case DMLC_OP_CAST:
    return eval_cast(ev, n);
  case DMLC_OP_CONSTANT:
    return eval_constant(ev, n);
  default:
    return dmlc_diag_set(ev->diag, DMLC_ERROR_INTERNAL, "reference: node %u has op %s", index,
                         dmlc_op_get(n->op)->name);
  }
}

static dmlc_status evaluate(ref_eval *ev, const dmlc_buffer *inputs, const dmlc_buffer *outputs) {
  const dmlc_ir_graph *g = ev->g;
  for (uint32_t i = 0; i < g->num_inputs; i++)
    DMLC_RETURN_IF_ERROR(gather_input(ev, i, &inputs[i]));
  for (uint32_t i = 0; i < g->num_nodes; i++)
    DMLC_RETURN_IF_ERROR(eval_node(ev, i));
  /* Every output is checked before any is written: on error, nothing is. */
  for (uint32_t i = 0; i < g->num_outputs; i++)
    DMLC_RETURN_IF_ERROR(check_buffer(ev, &g->outputs[i], &outputs[i], "output", i));
  for (uint32_t i = 0; i < g->num_outputs; i++)
    DMLC_RETURN_IF_ERROR(scatter_output(ev, i, &outputs[i]));
  return DMLC_OK;
}

dmlc_status dmlc_reference_execute(const dmlc_ir_graph *g, const dmlc_buffer *inputs,
                                   const dmlc_buffer *outputs, dmlc_diag *diag) {
  if (!g || (g->num_inputs && !inputs) || (g->num_outputs && !outputs))
    return dmlc_diag_set(diag, DMLC_ERROR_INVALID_ARGUMENT, "reference: missing graph or buffers");
  ref_eval ev = {g, calloc(g->num_values ? g->num_values : 1, sizeof *ev.data), diag};
  if (!ev.data)
    return dmlc_diag_set(diag, DMLC_ERROR_OUT_OF_MEMORY, "reference: out of memory");
  const dmlc_status st = evaluate(&ev, inputs, outputs);
  for (uint32_t v = 0; v < g->num_values; v++)
    free(ev.data[v]);
  free(ev.data);
  return st;
}
