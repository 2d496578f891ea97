/* IR kernels -> kernel descriptions. Each value written by a kernel is
 * traced back through the kernel's nodes to one of the forms codegen knows:
 * the reduction's index, the one-hot mask comparing it with the reduced
 * index, a constant, or the read converted once. Anything else is
 * DMLC_ERROR_UNSUPPORTED, never a guess. */
#include "codegen/kernel_desc.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ir/array.h"
#include "ir/strbuf.h"

typedef enum trace_kind {
  TRACE_READ,   /* the read, converted at most once (to dtype) */
  TRACE_INDEX,  /* the reduction's index, as dtype */
  TRACE_BINDEX, /* the index broadcast over the full space */
  TRACE_RINDEX, /* the reduced index of each point */
  TRACE_MASK,   /* BINDEX == RINDEX, as dtype (bool until cast) */
  TRACE_CONST,  /* a constant, as dtype */
} trace_kind;

typedef struct trace {
  trace_kind kind;
  dmlc_dtype dtype;
  uint32_t casts; /* conversions applied since the source */
  int64_t constant;
} trace;

typedef struct kernel_view {
  const dmlc_ir_graph *g;
  const dmlc_kernel *k;
  uint32_t read_value; /* UINT32_MAX: none */
  int32_t reduction;   /* node index, or -1 */
  trace *traces;       /* per value id; valid for values defined in k */
} kernel_view;

static dmlc_status unsupported(dmlc_diag *diag, uint32_t kernel, const char *what, uint32_t v) {
  return dmlc_diag_set(diag, DMLC_ERROR_UNSUPPORTED,
                       "kernel @k%u: %s (value %%%u) has no code-generation pattern yet", kernel,
                       what, v);
}

/* A constant is held as an int64 (dmlc_kout.constant): for an integer or
 * bool dtype the integer its element holds, for a float dtype the integer
 * the element is dmlc_dtype_bits_from_i64 of (every emitter converts it with
 * that one function). convert_constant gives the int64 of the integer
 * constant c converted to dtype `to`, by that same function. */
static int64_t convert_constant(int64_t c, dmlc_dtype to) {
  if (dmlc_dtype_is_float(to))
    return c;
  return dmlc_dtype_i64_from_bits(to, dmlc_dtype_bits_from_i64(to, c));
}

/* The constant c of dtype `from` cast to `to`, as the cast op converts.
 * A float constant's value is c rounded to its dtype: an integer too (every
 * float with a fraction is below 2^24, where int64s convert exactly), so
 * the cast starts from that integer; false when it is no int64 (an f16's
 * inf, 2^63). (The verifier allows float sources to be cast to floats only.) */
static bool cast_constant(int64_t c, dmlc_dtype from, dmlc_dtype to, int64_t *out) {
  if (dmlc_dtype_is_float(from)) {
    const double d = dmlc_dtype_f64_from_bits(from, dmlc_dtype_bits_from_i64(from, c));
    if (!(d >= -0x1p63 && d < 0x1p63))
      return false;
    c = (int64_t)d;
  }
  *out = convert_constant(c, to);
  return true;
}

/* Two constants of one dtype are equal when their elements are (no NaN or
 * -0.0 comes from an integer, so equal bits are equal values). */
static bool constants_equal(int64_t a, int64_t b, dmlc_dtype dtype) {
  return dmlc_dtype_bits_from_i64(dtype, a) == dmlc_dtype_bits_from_i64(dtype, b);
}

static dmlc_status trace_node(kernel_view *kv, uint32_t kernel_id, const dmlc_node *n,
                              dmlc_diag *diag) {
  const dmlc_type *t = &kv->g->values[n->result].type;
  trace *out = &kv->traces[n->result];
  const trace *a = n->num_operands > 0 ? &kv->traces[n->operands[0]] : NULL;
  const trace *b = n->num_operands > 1 ? &kv->traces[n->operands[1]] : NULL;
  memset(out, 0, sizeof *out);
  out->dtype = t->dtype;
  switch (n->op) {
  case DMLC_OP_ARGMAX:
  case DMLC_OP_ARGMIN:
    if (a->kind != TRACE_READ || a->casts != 0)
      return unsupported(diag, kernel_id, "a reduction of a computed value", n->result);
    out->kind = TRACE_INDEX;
    return DMLC_OK;
  case DMLC_OP_RESHAPE:
    *out = *a; /* a view: the kernel's strides already say where elements are */
    return DMLC_OK;
  case DMLC_OP_BROADCAST:
    if (a->kind == TRACE_CONST) {
      *out = *a;
      return DMLC_OK;
    }
    if (a->kind != TRACE_INDEX)
      return unsupported(diag, kernel_id, "a broadcast of something other than the index",
                         n->result);
    out->kind = TRACE_BINDEX;
    return DMLC_OK;
  case DMLC_OP_REDUCED_INDEX:
    /* fuse checked its axes are the space's reduced dims; none: always 0. */
    out->kind = kv->k->reduced_mask ? TRACE_RINDEX : TRACE_CONST;
    return DMLC_OK;
  case DMLC_OP_CONSTANT:
    out->kind = TRACE_CONST;
    out->constant = convert_constant(n->value, t->dtype);
    return DMLC_OK;
  case DMLC_OP_EQ:
    if (a->kind == TRACE_CONST && b->kind == TRACE_CONST) {
      out->kind = TRACE_CONST;
      out->constant = constants_equal(a->constant, b->constant, a->dtype);
      return DMLC_OK;
    }
    if ((a->kind == TRACE_BINDEX && b->kind == TRACE_RINDEX) ||
        (a->kind == TRACE_RINDEX && b->kind == TRACE_BINDEX)) {
      out->kind = TRACE_MASK;
      return DMLC_OK;
    }
    return unsupported(diag, kernel_id, "a comparison other than index == reduced index",
                       n->result);
  case DMLC_OP_CAST:
    *out = *a;
    out->dtype = t->dtype;
    if (a->kind == TRACE_CONST) {
      if (!cast_constant(a->constant, a->dtype, t->dtype, &out->constant))
        return unsupported(diag, kernel_id, "a float constant beyond int64 converted again",
                           n->result);
      return DMLC_OK;
    }
    if (a->kind == TRACE_INDEX && !dmlc_dtype_is_integer(t->dtype))
      return unsupported(diag, kernel_id, "an index converted to a non-integer", n->result);
    out->casts = a->casts + 1;
    if (out->casts > 1)
      return unsupported(diag, kernel_id, "a value converted twice", n->result);
    return DMLC_OK;
  case DMLC_OP_HARDMAX:
    return unsupported(diag, kernel_id, "an unlowered hardmax", n->result);
  default:
    return dmlc_diag_set(diag, DMLC_ERROR_INTERNAL, "kernel @k%u: unknown op %d", kernel_id,
                         (int)n->op);
  }
}

static int32_t input_index(const dmlc_ir_graph *g, uint32_t value) {
  for (uint32_t i = 0; i < g->num_inputs; i++)
    if (g->inputs[i].value == value)
      return (int32_t)i;
  return -1;
}

typedef struct temp_map {
  uint32_t *value_temp; /* per value id: temp index + 1, or 0 */
  dmlc_kernel_plan *plan;
  uint32_t cap_temps;   /* plan->temp_bytes allocated */
  uint32_t cap_kernels; /* plan->kernels allocated */
} temp_map;

static dmlc_status bind_read(const dmlc_ir_graph *g, const temp_map *tm, uint32_t value,
                             uint32_t kernel_id, dmlc_binding *out, dmlc_diag *diag) {
  const int32_t in = input_index(g, value);
  if (in >= 0) {
    out->kind = DMLC_BINDING_INPUT;
    out->index = (uint32_t)in;
    return DMLC_OK;
  }
  if (!tm->value_temp[value])
    return dmlc_diag_set(diag, DMLC_ERROR_INTERNAL,
                         "kernel @k%u reads %%%u, which no earlier kernel wrote", kernel_id, value);
  out->kind = DMLC_BINDING_TEMP;
  out->index = tm->value_temp[value] - 1;
  return DMLC_OK;
}

static dmlc_status bind_write(const dmlc_ir_graph *g, temp_map *tm, const dmlc_kernel_buffer *w,
                              dmlc_binding *out, dmlc_diag *diag) {
  if (w->output >= 0) {
    out->kind = DMLC_BINDING_OUTPUT;
    out->index = (uint32_t)w->output;
    return DMLC_OK;
  }
  dmlc_kernel_plan *plan = tm->plan;
  if (!DMLC_ARRAY_RESERVE(&plan->temp_bytes, &tm->cap_temps, plan->num_temps + 1, 4))
    return dmlc_diag_set(diag, DMLC_ERROR_OUT_OF_MEMORY, "out of memory planning kernels");
  const dmlc_type *t = &g->values[w->value].type;
  plan->temp_bytes[plan->num_temps] = dmlc_type_num_elements(t) * dmlc_dtype_size(t->dtype);
  tm->value_temp[w->value] = ++plan->num_temps;
  out->kind = DMLC_BINDING_TEMP;
  out->index = plan->num_temps - 1;
  return DMLC_OK;
}

static dmlc_status describe_output(const kernel_view *kv, uint32_t kernel_id,
                                   const dmlc_kernel_buffer *w, dmlc_kout *out, dmlc_diag *diag) {
  const trace *t = &kv->traces[w->value];
  memset(out, 0, sizeof *out);
  out->dtype = kv->g->values[w->value].type.dtype;
  memcpy(out->strides, w->strides, sizeof out->strides);
  switch (t->kind) {
  case TRACE_INDEX:
    out->kind = DMLC_KOUT_INDEX;
    return DMLC_OK;
  case TRACE_MASK:
    out->kind = DMLC_KOUT_ONEHOT;
    return DMLC_OK;
  case TRACE_CONST:
    out->kind = DMLC_KOUT_CONSTANT;
    out->constant = t->constant;
    return DMLC_OK;
  case TRACE_READ:
    out->kind = DMLC_KOUT_COPY;
    return kv->reduction < 0 ? DMLC_OK
                             : unsupported(diag, kernel_id, "a copy beside a reduction", w->value);
  case TRACE_BINDEX:
  case TRACE_RINDEX:
    break;
  }
  return unsupported(diag, kernel_id, "an index tensor written over the full space", w->value);
}

static dmlc_status describe_kernel(const dmlc_ir_graph *g, uint32_t kernel_id, trace *traces,
                                   temp_map *tm, dmlc_kdesc *out, dmlc_diag *diag) {
  const dmlc_kernel *k = &g->kernels[kernel_id];
  const dmlc_kernel_buffer *reads = dmlc_kernel_reads(g, k);
  const dmlc_kernel_buffer *writes = dmlc_kernel_writes(g, k);
  memset(out, 0, sizeof *out);
  out->rank = k->rank;
  memcpy(out->dims, k->dims, sizeof out->dims);
  out->reduced_mask = k->reduced_mask;
  if (k->num_reads > 1)
    return unsupported(diag, kernel_id, "a kernel with several reads", reads[1].value);
  if (k->num_writes > DMLC_KDESC_MAX_OUTPUTS)
    return unsupported(diag, kernel_id, "a kernel with many writes", writes[0].value);
  kernel_view kv = {g, k, UINT32_MAX, -1, traces};
  if (k->num_reads == 1) {
    kv.read_value = reads[0].value;
    traces[kv.read_value] = (trace){TRACE_READ, g->values[kv.read_value].type.dtype, 0, 0};
    out->has_read = true;
    out->read_dtype = g->values[kv.read_value].type.dtype;
    memcpy(out->read_strides, reads[0].strides, sizeof out->read_strides);
    DMLC_RETURN_IF_ERROR(bind_read(g, tm, kv.read_value, kernel_id, &out->read_binding, diag));
  }
  for (uint32_t i = k->first_node; i < k->first_node + k->num_nodes; i++) {
    const dmlc_node *n = &g->nodes[i];
    if (dmlc_op_get(n->op)->kind == DMLC_OPKIND_REDUCTION) {
      if (kv.reduction >= 0)
        return unsupported(diag, kernel_id, "a second reduction", n->result);
      kv.reduction = (int32_t)i;
      out->has_reduction = true;
      out->reduction = n->op;
      out->direction = n->direction;
    }
    DMLC_RETURN_IF_ERROR(trace_node(&kv, kernel_id, n, diag));
  }
  if (out->has_reduction != (k->reduced_mask != 0))
    return unsupported(diag, kernel_id, "a space whose reduced dims do not match its reduction",
                       writes[0].value);
  out->num_outputs = k->num_writes;
  for (uint32_t i = 0; i < k->num_writes; i++) {
    DMLC_RETURN_IF_ERROR(describe_output(&kv, kernel_id, &writes[i], &out->outputs[i], diag));
    DMLC_RETURN_IF_ERROR(bind_write(g, tm, &writes[i], &out->outputs[i].binding, diag));
  }
  return DMLC_OK;
}

/* Broadcast reads (a zero stride on the read, DirectML's broadcast). Every
 * element along such a dim is the same one, so:
 *
 * - a reduced dim the read broadcasts holds ties only: the reduction's
 *   coordinate along it is 0 (increasing) or the last (decreasing). When
 *   every reduced dim is broadcast, INDEX outputs are that constant
 *   (const_reduction); when the broadcast reduced dims are outside every
 *   other reduced dim and the direction is increasing, they add 0 to the
 *   index and leave the inner dims' weights as they are: dropped
 *   (drop_outer_reduced);
 * - a kept dim the read broadcasts gives every point along it the same
 *   result: the kernel is computed without it into dense temporaries,
 *   then copied out along it (split_kept), instead of each point reducing
 *   the same elements again (f32 [4096,4096] over axis 0 with strides
 *   [4096, 0]: 4096 strided reductions of the same 4096 elements, 69 ms).
 *
 * Ties resolve by position alone, so the results are the same bits (NaN
 * included: a NaN broadcast along a dim ties with itself). */

static bool broadcast_dim(const dmlc_kdesc *k, uint32_t d) {
  return k->read_strides[d] == 0 && k->dims[d] > 1;
}

static bool index_outputs_only(const dmlc_kdesc *k) {
  for (uint32_t i = 0; i < k->num_outputs; i++)
    if (k->outputs[i].kind != DMLC_KOUT_INDEX)
      return false;
  return true;
}

/* Removes dim d from k's space and every stride list. */
static void drop_dim(dmlc_kdesc *k, uint32_t d) {
  for (uint32_t i = d; i + 1 < k->rank; i++) {
    k->dims[i] = k->dims[i + 1];
    k->read_strides[i] = k->read_strides[i + 1];
    for (uint32_t o = 0; o < k->num_outputs; o++)
      k->outputs[o].strides[i] = k->outputs[o].strides[i + 1];
  }
  const uint32_t below = k->reduced_mask & ((1u << d) - 1);
  k->reduced_mask = below | ((k->reduced_mask >> (d + 1)) << d);
  k->rank--;
  k->dims[k->rank] = 0;
  k->read_strides[k->rank] = 0;
  for (uint32_t o = 0; o < k->num_outputs; o++)
    k->outputs[o].strides[k->rank] = 0;
}

/* Merges adjacent dims of one kind (kept, or reduced: the row-major index
 * over the reduced dims stays the same) where the read and every output
 * are contiguous across them, as fuse leaves a kernel's space. */
static void merge_dims(dmlc_kdesc *k) {
  for (uint32_t d = 0; d + 1 < k->rank;) {
    const uint32_t n = k->dims[d + 1];
    bool ok =
        dmlc_mask_has_axis(k->reduced_mask, d) == dmlc_mask_has_axis(k->reduced_mask, d + 1) &&
        (uint64_t)k->dims[d] * n <= UINT32_MAX &&
        (!k->has_read || k->read_strides[d] == k->read_strides[d + 1] * n);
    for (uint32_t o = 0; ok && o < k->num_outputs; o++)
      ok = k->outputs[o].strides[d] == k->outputs[o].strides[d + 1] * n;
    if (!ok) {
      d++;
      continue;
    }
    const uint32_t outer = k->dims[d];
    k->reduced_mask &= ~(1u << d); /* d + 1's kind stays, at d after the drop */
    drop_dim(k, d);
    k->dims[d] *= outer;
  }
}

/* Every reduced dim broadcast, INDEX outputs of integer dtypes: the
 * outputs are the first (or last) reduced position, a constant kernel over
 * the kept dims. */
static bool const_reduction(dmlc_kdesc *k) {
  if (!index_outputs_only(k))
    return false;
  uint64_t positions = 1;
  for (uint32_t d = 0; d < k->rank; d++)
    if (dmlc_mask_has_axis(k->reduced_mask, d)) {
      if (k->read_strides[d])
        return false;
      positions *= k->dims[d];
    }
  for (uint32_t i = 0; i < k->num_outputs; i++) {
    const dmlc_kind kind = dmlc_dtype_get(k->outputs[i].dtype)->kind;
    if (kind != DMLC_KIND_SIGNED && kind != DMLC_KIND_UNSIGNED)
      return false;
  }
  const int64_t at = k->direction == DMLC_DIRECTION_DECREASING ? (int64_t)positions - 1 : 0;
  for (uint32_t i = 0; i < k->num_outputs; i++) {
    k->outputs[i].kind = DMLC_KOUT_CONSTANT;
    k->outputs[i].constant = convert_constant(at, k->outputs[i].dtype);
  }
  for (uint32_t d = k->rank; d-- > 0;)
    if (dmlc_mask_has_axis(k->reduced_mask, d))
      drop_dim(k, d);
  if (k->rank == 0) { /* no kept dims: one point */
    k->rank = 1;
    k->dims[0] = 1;
  }
  k->has_read = false;
  memset(k->read_strides, 0, sizeof k->read_strides);
  memset(&k->read_binding, 0, sizeof k->read_binding);
  k->has_reduction = false;
  k->reduction = 0;
  k->direction = 0;
  merge_dims(k);
  return true;
}

/* Increasing INDEX reductions: the broadcast reduced dims outside every
 * reduced dim the read does not broadcast are dropped. */
static void drop_outer_reduced(dmlc_kdesc *k) {
  if (!index_outputs_only(k) || k->direction == DMLC_DIRECTION_DECREASING)
    return;
  bool changed = false;
  for (uint32_t d = 0; d < k->rank;) {
    if (!dmlc_mask_has_axis(k->reduced_mask, d)) {
      d++;
      continue;
    }
    if (!broadcast_dim(k, d) || !(k->reduced_mask >> (d + 1)))
      break; /* the outermost reduced dim read (or the last one): it and
                the ones inside it stay */
    drop_dim(k, d);
    changed = true;
  }
  if (changed)
    merge_dims(k);
}

static dmlc_kdesc *add_kernel(temp_map *pb) {
  dmlc_kernel_plan *plan = pb->plan;
  if (!DMLC_ARRAY_RESERVE(&plan->kernels, &pb->cap_kernels, plan->num_kernels + 1, 4))
    return NULL;
  return &plan->kernels[plan->num_kernels++];
}

static bool add_temp(temp_map *pb, uint64_t bytes, uint32_t *index) {
  dmlc_kernel_plan *plan = pb->plan;
  if (!DMLC_ARRAY_RESERVE(&plan->temp_bytes, &pb->cap_temps, plan->num_temps + 1, 4))
    return false;
  plan->temp_bytes[plan->num_temps] = bytes;
  *index = plan->num_temps++;
  return true;
}

/* k (a reduction that reads) has kept dims the read broadcasts: appends k
 * without them, writing each output to a dense temporary, then one COPY
 * kernel an output from its temporary to where k wrote it. */
static bool split_kept(temp_map *pb, const dmlc_kdesc *k) {
  dmlc_kdesc k1 = *k;
  bool bcast[DMLC_MAX_RANK] = {false};
  for (uint32_t d = 0; d < k->rank; d++)
    bcast[d] = !dmlc_mask_has_axis(k->reduced_mask, d) && broadcast_dim(k, d);
  /* each output's temporary: dense over the dims k1 keeps (its kept dims
   * for an INDEX output, all for ONEHOT); tstride[o][d] over k's dims, 0
   * on the broadcast ones */
  uint64_t tstride[DMLC_KDESC_MAX_OUTPUTS][DMLC_MAX_RANK];
  for (uint32_t o = 0; o < k->num_outputs; o++) {
    const dmlc_kout *out = &k->outputs[o];
    const bool full = out->kind != DMLC_KOUT_INDEX;
    uint64_t n = 1;
    for (uint32_t d = k->rank; d-- > 0;) {
      const bool in = !bcast[d] && (full || !dmlc_mask_has_axis(k->reduced_mask, d));
      tstride[o][d] = in ? n : 0;
      n *= in ? k->dims[d] : 1;
    }
    uint32_t temp;
    if (!add_temp(pb, n * dmlc_dtype_size(out->dtype), &temp))
      return false;
    memcpy(k1.outputs[o].strides, tstride[o], sizeof tstride[o]);
    k1.outputs[o].binding = (dmlc_binding){DMLC_BINDING_TEMP, temp};
  }
  for (uint32_t d = k->rank; d-- > 0;)
    if (bcast[d])
      drop_dim(&k1, d);
  merge_dims(&k1);
  dmlc_kdesc *slot = add_kernel(pb);
  if (!slot)
    return false;
  *slot = k1;
  for (uint32_t o = 0; o < k->num_outputs; o++) {
    const dmlc_kout *out = &k->outputs[o];
    dmlc_kdesc c;
    memset(&c, 0, sizeof c);
    c.has_read = true;
    c.read_dtype = out->dtype;
    c.read_binding = k1.outputs[o].binding;
    c.num_outputs = 1;
    c.outputs[0].kind = DMLC_KOUT_COPY;
    c.outputs[0].dtype = out->dtype;
    c.outputs[0].binding = out->binding;
    for (uint32_t d = 0; d < k->rank; d++) {
      if (out->kind == DMLC_KOUT_INDEX && dmlc_mask_has_axis(k->reduced_mask, d))
        continue;
      c.dims[c.rank] = k->dims[d];
      c.read_strides[c.rank] = tstride[o][d];
      c.outputs[0].strides[c.rank] = out->strides[d];
      c.rank++;
    }
    merge_dims(&c);
    if (!(slot = add_kernel(pb)))
      return false;
    *slot = c;
  }
  return true;
}

/* Appends k to the plan as the forms above make it: one kernel, or k
 * without its broadcast kept dims and the copies. */
static bool add_planned(temp_map *pb, const dmlc_kdesc *k) {
  dmlc_kdesc d = *k;
  if (d.has_reduction && d.has_read && !const_reduction(&d)) {
    drop_outer_reduced(&d);
    for (uint32_t i = 0; i < d.rank; i++)
      if (!dmlc_mask_has_axis(d.reduced_mask, i) && broadcast_dim(&d, i))
        return split_kept(pb, &d);
  }
  dmlc_kdesc *slot = add_kernel(pb);
  if (slot)
    *slot = d;
  return slot != NULL;
}

dmlc_status dmlc_kernel_plan_build(const dmlc_ir_graph *g, dmlc_kernel_plan *plan,
                                   dmlc_diag *diag) {
  memset(plan, 0, sizeof *plan);
  uint32_t covered = 0;
  for (uint32_t i = 0; i < g->num_kernels; i++)
    covered += g->kernels[i].num_nodes;
  if (covered != g->num_nodes || (g->num_kernels == 0 && g->num_outputs > 0))
    return dmlc_diag_set(diag, DMLC_ERROR_INTERNAL,
                         "graph is not fused: %u of %u nodes are in kernels", covered,
                         g->num_nodes);
  const size_t nv = g->num_values ? g->num_values : 1;
  trace *traces = calloc(nv, sizeof *traces);
  temp_map tm = {calloc(nv, sizeof *tm.value_temp), plan, 0, 0};
  dmlc_status s = DMLC_OK;
  if (!traces || !tm.value_temp ||
      !DMLC_ARRAY_RESERVE(&plan->kernels, &tm.cap_kernels, g->num_kernels + 1, 4))
    s = dmlc_diag_set(diag, DMLC_ERROR_OUT_OF_MEMORY, "out of memory planning kernels");
  for (uint32_t i = 0; s == DMLC_OK && i < g->num_kernels; i++) {
    dmlc_kdesc k;
    s = describe_kernel(g, i, traces, &tm, &k, diag);
    if (s == DMLC_OK && !add_planned(&tm, &k))
      s = dmlc_diag_set(diag, DMLC_ERROR_OUT_OF_MEMORY, "out of memory planning kernels");
  }
  free(traces);
  free(tm.value_temp);
  if (s != DMLC_OK)
    dmlc_kernel_plan_free(plan);
  return s;
}

void dmlc_kernel_plan_free(dmlc_kernel_plan *plan) {
  free(plan->kernels);
  free(plan->temp_bytes);
  memset(plan, 0, sizeof *plan);
}

static void print_strides(dmlc_strbuf *sb, uint32_t rank, const uint64_t *strides) {
  dmlc_strbuf_append(sb, "[");
  for (uint32_t d = 0; d < rank; d++)
    dmlc_strbuf_printf(sb, "%s%" PRIu64, d ? "," : "", strides[d]);
  dmlc_strbuf_append(sb, "]");
}

static const char *const kout_names[] = {"index", "onehot", "constant", "copy"};
_Static_assert(sizeof kout_names / sizeof kout_names[0] == DMLC_KOUT_COPY + 1,
               "kout_names: one name per dmlc_kout_kind");

char *dmlc_kdesc_print(const dmlc_kdesc *k) {
  dmlc_strbuf sb = {0};
  dmlc_strbuf_append(&sb, "space [");
  for (uint32_t d = 0; d < k->rank; d++)
    dmlc_strbuf_printf(&sb, "%s%s%u", d ? ", " : "",
                       dmlc_mask_has_axis(k->reduced_mask, d) ? "r" : "", k->dims[d]);
  dmlc_strbuf_append(&sb, "]");
  if (k->has_read) {
    dmlc_strbuf_printf(&sb, " read %s", dmlc_dtype_name(k->read_dtype));
    print_strides(&sb, k->rank, k->read_strides);
  }
  if (k->has_reduction)
    dmlc_strbuf_printf(&sb, " %s %s", dmlc_op_get(k->reduction)->name,
                       dmlc_direction_name(k->direction));
  for (uint32_t i = 0; i < k->num_outputs; i++) {
    const dmlc_kout *o = &k->outputs[i];
    dmlc_strbuf_printf(&sb, " out%u %s %s", i, kout_names[o->kind], dmlc_dtype_name(o->dtype));
    print_strides(&sb, k->rank, o->strides);
    if (o->kind == DMLC_KOUT_CONSTANT)
      dmlc_strbuf_printf(&sb, " = %" PRId64, o->constant);
  }
  return dmlc_strbuf_finish(&sb);
}

void dmlc_kdesc_canonical(const dmlc_kdesc *k, dmlc_kdesc *out) {
  memset(out, 0, sizeof *out);
  out->rank = k->rank;
  for (uint32_t d = 0; d < k->rank; d++) {
    out->dims[d] = k->dims[d];
    if (dmlc_mask_has_axis(k->reduced_mask, d))
      out->reduced_mask |= 1u << d;
  }
  out->has_read = k->has_read;
  if (k->has_read) {
    out->read_dtype = k->read_dtype;
    memcpy(out->read_strides, k->read_strides, k->rank * sizeof k->read_strides[0]);
  }
  out->has_reduction = k->has_reduction;
  if (k->has_reduction) {
    out->reduction = k->reduction;
    out->direction = k->direction;
  }
  out->num_outputs = k->num_outputs;
  for (uint32_t i = 0; i < k->num_outputs; i++) {
    dmlc_kout *o = &out->outputs[i];
    o->kind = k->outputs[i].kind;
    o->dtype = k->outputs[i].dtype;
    memcpy(o->strides, k->outputs[i].strides, k->rank * sizeof o->strides[0]);
    if (o->kind == DMLC_KOUT_CONSTANT)
      o->constant = k->outputs[i].constant;
  }
}

uint64_t dmlc_kdesc_space_elements(const dmlc_kdesc *k) {
  uint64_t n = 1;
  for (uint32_t d = 0; d < k->rank; d++)
    n *= k->dims[d];
  return n;
}
