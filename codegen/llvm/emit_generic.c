/* Any space and strides: a task is one kept point (coordinates decoded with
 * constant divisions), scalar loops over the reduced dims in row-major order
 * with a running index. Kernels without a reduction (CONSTANT / COPY) are
 * tasks over chunks of the space, vectorized along the innermost dim when
 * every buffer is contiguous there. */
#include "codegen/llvm/emit_internal.h"

enum {
  ELEMENTWISE_CHUNK = 16384, /* innermost elements per task at most */
};

/* offs[0]: the read, offs[1 + i]: output i. */
#define NBUF (1 + DMLC_KDESC_MAX_OUTPUTS)

static uint64_t buffer_stride(const dmlc_kdesc *k, uint32_t buf, uint32_t d) {
  return buf == 0 ? k->read_strides[d] : k->outputs[buf - 1].strides[d];
}

typedef void (*nest_body)(emit_ctx *e, LLVMValueRef *offs, void *arg);

/* Loops over dims[list[level..n)] in row-major order, advancing offs. */
static void nest(emit_ctx *e, const uint32_t *list, uint32_t n, uint32_t level,
                 const LLVMValueRef *offs, nest_body body, void *arg) {
  LLVMValueRef inner[NBUF];
  const uint32_t nbuf = 1 + e->k->num_outputs;
  if (level == n) {
    for (uint32_t j = 0; j < nbuf; j++)
      inner[j] = offs[j];
    body(e, inner, arg);
    return;
  }
  const uint32_t d = list[level];
  ec_loop l;
  LLVMValueRef iv = ec_loop_begin(e, &l, ec_i64(e, 0), ec_i64(e, e->k->dims[d]), 1);
  for (uint32_t j = 0; j < nbuf; j++)
    inner[j] = ec_madd(e, offs[j], iv, buffer_stride(e->k, j, d));
  nest(e, list, n, level + 1, inner, body, arg);
  ec_loop_end(e, &l);
}

/* offs[] of the point whose dims in list have the coordinates of the flat
 * row-major position t over them. */
static void decode(emit_ctx *e, const uint32_t *list, uint32_t n, LLVMValueRef t,
                   LLVMValueRef *offs) {
  const uint32_t nbuf = 1 + e->k->num_outputs;
  LLVMValueRef c[DMLC_MAX_RANK];
  ec_coords(e, list, n, t, c);
  for (uint32_t j = 0; j < nbuf; j++) {
    offs[j] = ec_i64(e, 0);
    for (uint32_t i = 0; i < n; i++)
      offs[j] = ec_madd(e, offs[j], c[i], buffer_stride(e->k, j, list[i]));
  }
}

typedef struct reduce_vars {
  LLVMValueRef best, best_idx, ridx; /* allocas */
  LLVMTypeRef ct;
} reduce_vars;

static void reduce_body(emit_ctx *e, LLVMValueRef *offs, void *arg) {
  reduce_vars *v = arg;
  LLVMValueRef x = ec_load_read_cmp(e, offs[0], 1);
  LLVMValueRef b = LLVMBuildLoad2(e->b, v->ct, v->best, "");
  LLVMValueRef take = ec_take_next(e, x, b);
  LLVMBuildStore(e->b, LLVMBuildSelect(e->b, take, x, b, ""), v->best);
  LLVMValueRef r = LLVMBuildLoad2(e->b, e->i64, v->ridx, "");
  LLVMValueRef bi = LLVMBuildLoad2(e->b, e->i64, v->best_idx, "");
  LLVMBuildStore(e->b, LLVMBuildSelect(e->b, take, r, bi, ""), v->best_idx);
  LLVMBuildStore(e->b, ec_add(e, r, ec_i64(e, 1)), v->ridx);
}

/* The value output i takes at a point (scalar). */
static LLVMValueRef point_value(emit_ctx *e, uint32_t i, LLVMValueRef read_off, LLVMValueRef hit,
                                uint32_t lanes) {
  const dmlc_kdesc *k = e->k;
  const dmlc_kout *o = &k->outputs[i];
  switch (o->kind) {
  case DMLC_KOUT_ONEHOT:
    return LLVMBuildSelect(e->b, hit, ec_const_elem(e, o->dtype, 1), ec_const_elem(e, o->dtype, 0),
                           "");
  case DMLC_KOUT_CONSTANT:
    return ec_splat(e, ec_const_elem(e, o->dtype, o->constant), lanes);
  default:
    return ec_convert(e, ec_load(e, k->read_dtype, e->read, read_off, lanes), k->read_dtype,
                      o->dtype);
  }
}

static void write_body(emit_ctx *e, LLVMValueRef *offs, void *arg) {
  reduce_vars *v = arg;
  LLVMValueRef r = LLVMBuildLoad2(e->b, e->i64, v->ridx, "");
  LLVMValueRef bi = LLVMBuildLoad2(e->b, e->i64, v->best_idx, "");
  LLVMValueRef hit = LLVMBuildICmp(e->b, LLVMIntEQ, r, bi, "");
  for (uint32_t i = 0; i < e->k->num_outputs; i++)
    if (e->k->outputs[i].kind != DMLC_KOUT_INDEX)
      ec_store(e, e->k->outputs[i].dtype, e->out[i], offs[1 + i],
               point_value(e, i, offs[0], hit, 1));
  LLVMBuildStore(e->b, ec_add(e, r, ec_i64(e, 1)), v->ridx);
}

dmlc_status ec_emit_generic(emit_ctx *e, const char *name, dmlc_cpu_kernel_info *info) {
  const dmlc_kdesc *k = e->k;
  uint32_t kept[DMLC_MAX_RANK], reduced[DMLC_MAX_RANK], nkept = 0, nred = 0;
  uint64_t kept_points = 1, reduced_points = 1;
  for (uint32_t d = 0; d < k->rank; d++) {
    if (dmlc_mask_has_axis(k->reduced_mask, d)) {
      reduced[nred++] = d;
      reduced_points *= k->dims[d];
    } else {
      kept[nkept++] = d;
      kept_points *= k->dims[d];
    }
  }
  bool full_outputs = false;
  uint64_t bytes = reduced_points * dmlc_dtype_size(k->read_dtype);
  for (uint32_t i = 0; i < k->num_outputs; i++) {
    const bool full = k->outputs[i].kind != DMLC_KOUT_INDEX;
    full_outputs |= full;
    bytes += dmlc_dtype_size(k->outputs[i].dtype) * (full ? reduced_points : 1);
  }

  LLVMValueRef begin, end;
  ec_function_begin(e, name, true, &begin, &end);
  reduce_vars v = {.ct = ec_cmp_type(e, k->read_dtype)};
  v.best = ec_var(e, v.ct, "best");
  v.best_idx = ec_var(e, e->i64, "best_idx");
  v.ridx = ec_var(e, e->i64, "ridx");
  ec_loop l;
  LLVMValueRef t = ec_loop_begin(e, &l, begin, end, 1);
  LLVMValueRef offs[NBUF];
  decode(e, kept, nkept, t, offs);
  LLVMBuildStore(e->b, ec_load_read_cmp(e, offs[0], 1), v.best);
  LLVMBuildStore(e->b, ec_i64(e, 0), v.best_idx);
  LLVMBuildStore(e->b, ec_i64(e, 0), v.ridx);
  nest(e, reduced, nred, 0, offs, reduce_body, &v);
  LLVMValueRef bi = LLVMBuildLoad2(e->b, e->i64, v.best_idx, "");
  for (uint32_t i = 0; i < k->num_outputs; i++)
    if (k->outputs[i].kind == DMLC_KOUT_INDEX)
      ec_store(e, k->outputs[i].dtype, e->out[i], offs[1 + i],
               ec_convert(e, bi, DMLC_DTYPE_U64, k->outputs[i].dtype));
  if (full_outputs) {
    LLVMBuildStore(e->b, ec_i64(e, 0), v.ridx);
    nest(e, reduced, nred, 0, offs, write_body, &v);
  }
  ec_loop_end(e, &l);
  ec_function_end(e);
  info->num_tasks = kept_points;
  info->bytes_per_task = bytes;
  return DMLC_OK;
}

/* ---- no reduction ---- */

typedef struct elementwise {
  LLVMValueRef offs[NBUF]; /* of the row's first element */
  uint64_t inner_strides[NBUF];
} elementwise;

static void elementwise_run(emit_ctx *e, const elementwise *w, LLVMValueRef from, LLVMValueRef to,
                            uint32_t lanes) {
  ec_loop l;
  LLVMValueRef i = ec_loop_begin(e, &l, from, to, lanes);
  LLVMValueRef read_off = ec_madd(e, w->offs[0], i, w->inner_strides[0]);
  for (uint32_t o = 0; o < e->k->num_outputs; o++)
    ec_store(e, e->k->outputs[o].dtype, e->out[o],
             ec_madd(e, w->offs[1 + o], i, w->inner_strides[1 + o]),
             point_value(e, o, read_off, NULL, lanes));
  ec_loop_end(e, &l);
}

dmlc_status ec_emit_elementwise(emit_ctx *e, const char *name, dmlc_cpu_kernel_info *info) {
  const dmlc_kdesc *k = e->k;
  const uint32_t last = k->rank - 1;
  const uint64_t inner = k->dims[last];
  const uint64_t chunk = inner < ELEMENTWISE_CHUNK ? inner : ELEMENTWISE_CHUNK;
  const uint64_t chunks = (inner + chunk - 1) / chunk;
  uint64_t rows = 1;
  uint32_t outer[DMLC_MAX_RANK];
  for (uint32_t d = 0; d < last; d++) {
    outer[d] = d;
    rows *= k->dims[d];
  }
  bool uses_read = false, contiguous = true;
  uint64_t elem_bytes = 0;
  for (uint32_t i = 0; i < k->num_outputs; i++) {
    const bool copy = k->outputs[i].kind == DMLC_KOUT_COPY;
    uses_read |= copy;
    contiguous &= k->outputs[i].strides[last] == 1 || inner == 1;
    elem_bytes += dmlc_dtype_size(k->outputs[i].dtype);
    if (k->outputs[i].kind != DMLC_KOUT_CONSTANT && !copy)
      return DMLC_ERROR_INTERNAL;
  }
  if (uses_read) {
    contiguous &= k->read_strides[last] == 1 || inner == 1;
    elem_bytes += dmlc_dtype_size(k->read_dtype);
  }

  LLVMValueRef begin, end;
  ec_function_begin(e, name, true, &begin, &end);
  ec_loop l;
  LLVMValueRef t = ec_loop_begin(e, &l, begin, end, 1);
  LLVMValueRef row = LLVMBuildUDiv(e->b, t, ec_i64(e, chunks), "row");
  LLVMValueRef start = ec_mul(e, LLVMBuildURem(e->b, t, ec_i64(e, chunks), ""), chunk);
  elementwise w;
  decode(e, outer, last, row, w.offs);
  for (uint32_t j = 0; j < 1 + k->num_outputs; j++)
    w.inner_strides[j] = buffer_stride(k, j, last);
  LLVMValueRef stop = ec_add(e, start, ec_i64(e, chunk));
  LLVMValueRef over = LLVMBuildICmp(e->b, LLVMIntUGT, stop, ec_i64(e, inner), "");
  stop = LLVMBuildSelect(e->b, over, ec_i64(e, inner), stop, "stop");
  LLVMValueRef vend = start;
  if (contiguous && inner > 1) {
    const uint32_t lanes = e->vector_bytes / 4;
    LLVMValueRef n = LLVMBuildSub(e->b, stop, start, "");
    n = LLVMBuildAnd(e->b, n, ec_i64(e, ~(uint64_t)(lanes - 1)), "");
    vend = ec_add(e, start, n);
    elementwise_run(e, &w, start, vend, lanes);
  }
  elementwise_run(e, &w, vend, stop, 1);
  ec_loop_end(e, &l);
  ec_function_end(e);
  info->num_tasks = rows * chunks;
  info->bytes_per_task = chunk * elem_bytes;
  return DMLC_OK;
}
