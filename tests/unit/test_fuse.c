/* fuse: random graphs (ranks 1 to 8, every dtype, strided, padded and
 * broadcast inputs, strided outputs, several operators sharing inputs) run
 * through pipelines ending in fuse and compared bit for bit, on the
 * reference device, with the graph before any pass. The fused graph is also
 * run by a small kernel interpreter written here that uses only what a
 * backend uses: each kernel's space, its buffers' strides, and its nodes
 * evaluated per point of the space (never a node's dims). */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/api_internal.h"
#include "dmlc/dmlc.h"
#include "runtime/reference/scalar.h"
#include "testutil.h"

#define SENTINEL 0xab

static uint64_t rng_state;

static uint32_t rnd(uint32_t n) { /* xorshift64, in [0, n) */
  rng_state ^= rng_state << 13;
  rng_state ^= rng_state >> 7;
  rng_state ^= rng_state << 17;
  return (uint32_t)(rng_state % n);
}

/* ---- text building ---- */
typedef dmlc_test_text text;

static void put_list(text *t, const uint64_t *items, uint32_t n) {
  dmlc_test_text_add(t, "[");
  for (uint32_t i = 0; i < n; i++)
    dmlc_test_text_add(t, "%s%llu", i ? ", " : "", (unsigned long long)items[i]);
  dmlc_test_text_add(t, "]");
}

static void put_dims(text *t, const uint32_t *dims, uint32_t n) {
  dmlc_test_text_add(t, "[");
  for (uint32_t i = 0; i < n; i++)
    dmlc_test_text_add(t, "%s%u", i ? "," : "", dims[i]);
  dmlc_test_text_add(t, "]");
}

/* ---- random tensors ---- */
typedef struct tensor {
  uint32_t rank, dims[DMLC_MAX_RANK];
  const char *dtype;
} tensor;

static const char *const value_dtypes[] = {"f32", "f16", "i32", "i16", "i8",
                                           "u32", "u16", "u8",  "i64", "u64"};
static const char *const index_dtypes[] = {"u32", "i32", "u64", "i64"};

static uint64_t count_of(const tensor *t) {
  uint64_t n = 1;
  for (uint32_t i = 0; i < t->rank; i++)
    n *= t->dims[i];
  return n;
}

static void random_tensor(tensor *t, bool is_float) {
  t->rank = 1 + rnd(DMLC_MAX_RANK);
  do {
    for (uint32_t i = 0; i < t->rank; i++)
      t->dims[i] = 1 + rnd(t->rank <= 2 ? 9 : t->rank <= 4 ? 5 : 3);
  } while (count_of(t) > 400);
  t->dtype = is_float ? value_dtypes[rnd(2)] : value_dtypes[rnd(10)];
}

/* Strides for a layout: packed, padded, permuted, and (inputs) broadcast. */
static void random_strides(const tensor *t, bool is_input, uint64_t *strides) {
  uint32_t order[DMLC_MAX_RANK];
  for (uint32_t i = 0; i < t->rank; i++)
    order[i] = i;
  if (rnd(2))
    for (uint32_t i = t->rank; i > 1; i--) {
      const uint32_t j = rnd(i), tmp = order[i - 1];
      order[i - 1] = order[j];
      order[j] = tmp;
    }
  uint64_t s = 1 + (rnd(4) == 0 ? rnd(3) : 0);
  for (uint32_t k = t->rank; k-- > 0;) {
    const uint32_t d = order[k];
    strides[d] = s;
    s = s * t->dims[d] + (rnd(3) == 0 ? rnd(4) : 0);
  }
  if (is_input && rnd(3) == 0)
    strides[rnd(t->rank)] = 0;
}

/* ---- the graph: inputs, operators, outputs ---- */
typedef struct gen {
  text t;
  tensor in[2];
  uint32_t num_inputs;
  uint32_t next; /* next result name */
  tensor out[8];
  uint32_t out_value[8]; /* result number, or 1000 + input index */
  uint32_t num_outputs;
} gen;

static uint32_t random_axes(const tensor *x, uint32_t *axes) {
  uint32_t n = 0;
  for (uint32_t d = 0; d < x->rank; d++)
    if (rnd(2))
      axes[n++] = d;
  if (n == 0)
    axes[n++] = rnd(x->rank);
  for (uint32_t i = n; i > 1; i--) { /* any order */
    const uint32_t j = rnd(i), tmp = axes[i - 1];
    axes[i - 1] = axes[j];
    axes[j] = tmp;
  }
  return n;
}

static void put_axes(text *t, const uint32_t *axes, uint32_t n) {
  uint64_t a[DMLC_MAX_RANK];
  for (uint32_t i = 0; i < n; i++)
    a[i] = axes[i];
  put_list(t, a, n);
}

static bool in_axes(const uint32_t *axes, uint32_t n, uint32_t d) {
  for (uint32_t i = 0; i < n; i++)
    if (axes[i] == d)
      return true;
  return false;
}

/* An argmax/argmin, sometimes in the form canonicalize-axes gives it:
 * adjacent kept or reduced dims merged by a reshape, the result reshaped
 * back (whether or not the layouts allow it: fuse must cope). */
static void gen_arg(gen *g, text *body, uint32_t x_index, const char *x_name) {
  const tensor *x = &g->in[x_index];
  uint32_t axes[DMLC_MAX_RANK];
  const uint32_t n = random_axes(x, axes);
  const char *op = rnd(2) ? "argmax" : "argmin";
  const char *dir = rnd(2) ? "increasing" : "decreasing";
  tensor r = *x;
  r.dtype = index_dtypes[rnd(4)];
  for (uint32_t i = 0; i < n; i++)
    r.dims[axes[i]] = 1;
  if (rnd(2)) {
    uint32_t merged[DMLC_MAX_RANK], red[DMLC_MAX_RANK], m = 0;
    for (uint32_t d = 0; d < x->rank; d++) {
      const bool is_red = in_axes(axes, n, d);
      if (m > 0 && red[m - 1] == is_red) {
        merged[m - 1] *= x->dims[d];
      } else {
        red[m] = is_red;
        merged[m++] = x->dims[d];
      }
    }
    dmlc_test_text_add(body, "  %%%u = reshape %%%s : %s", g->next, x_name, x->dtype);
    put_dims(body, merged, m);
    dmlc_test_text_add(body, "\n  %%%u = %s %%%u {axes = [", g->next + 1, op, g->next);
    uint32_t out_dims[DMLC_MAX_RANK];
    for (uint32_t i = 0, first = 1; i < m; i++) {
      out_dims[i] = red[i] ? 1 : merged[i];
      if (red[i]) {
        dmlc_test_text_add(body, "%s%u", first ? "" : ", ", i);
        first = 0;
      }
    }
    dmlc_test_text_add(body, "], direction = %s} : %s", dir, r.dtype);
    put_dims(body, out_dims, m);
    dmlc_test_text_add(body, "\n  %%%u = reshape %%%u : %s", g->next + 2, g->next + 1, r.dtype);
    put_dims(body, r.dims, r.rank);
    dmlc_test_text_add(body, "\n");
    g->next += 3;
  } else {
    dmlc_test_text_add(body, "  %%%u = %s %%%s {axes = ", g->next, op, x_name);
    put_axes(body, axes, n);
    dmlc_test_text_add(body, ", direction = %s} : %s", dir, r.dtype);
    put_dims(body, r.dims, r.rank);
    dmlc_test_text_add(body, "\n");
    g->next++;
  }
  g->out[g->num_outputs] = r;
  g->out_value[g->num_outputs++] = g->next - 1;
}

static void gen_hardmax(gen *g, text *body, uint32_t x_index, const char *x_name) {
  const tensor *x = &g->in[x_index];
  uint32_t axes[DMLC_MAX_RANK];
  const uint32_t n = random_axes(x, axes);
  dmlc_test_text_add(body, "  %%%u = hardmax %%%s {axes = ", g->next, x_name);
  put_axes(body, axes, n);
  dmlc_test_text_add(body, "} : %s", x->dtype);
  put_dims(body, x->dims, x->rank);
  dmlc_test_text_add(body, "\n");
  g->out[g->num_outputs] = *x;
  g->out_value[g->num_outputs++] = g->next++;
}

static void gen_graph(gen *g) {
  memset(g, 0, sizeof *g);
  g->num_inputs = 1 + rnd(2);
  text body = {.len = 0};
  dmlc_test_text_add(&g->t, "graph @random(");
  for (uint32_t i = 0; i < g->num_inputs; i++) {
    random_tensor(&g->in[i], rnd(2));
    uint64_t strides[DMLC_MAX_RANK];
    random_strides(&g->in[i], true, strides);
    dmlc_test_text_add(&g->t, "%s%%x%u: %s", i ? ", " : "", i, g->in[i].dtype);
    put_dims(&g->t, g->in[i].dims, g->in[i].rank);
    dmlc_test_text_add(&g->t, "{strides = ");
    put_list(&g->t, strides, g->in[i].rank);
    dmlc_test_text_add(&g->t, "}");
  }
  const uint32_t ops = 1 + rnd(4);
  for (uint32_t k = 0; k < ops; k++) {
    const uint32_t x = rnd(g->num_inputs);
    char name[16];
    snprintf(name, sizeof name, "x%u", x);
    const bool is_float = g->in[x].dtype[0] == 'f';
    if (is_float && rnd(2))
      gen_hardmax(g, &body, x, name);
    else
      gen_arg(g, &body, x, name);
  }
  if (rnd(4) == 0) { /* an input returned as it is */
    g->out[g->num_outputs] = g->in[0];
    g->out_value[g->num_outputs++] = 1000;
  }
  dmlc_test_text_add(&g->t, ") -> (");
  for (uint32_t o = 0; o < g->num_outputs; o++) {
    uint64_t strides[DMLC_MAX_RANK];
    random_strides(&g->out[o], false, strides);
    dmlc_test_text_add(&g->t, "%s%s", o ? ", " : "", g->out[o].dtype);
    put_dims(&g->t, g->out[o].dims, g->out[o].rank);
    dmlc_test_text_add(&g->t, "{strides = ");
    put_list(&g->t, strides, g->out[o].rank);
    dmlc_test_text_add(&g->t, "}");
  }
  dmlc_test_text_add(&g->t, ") {\n%s  return", body.buf);
  for (uint32_t o = 0; o < g->num_outputs; o++) {
    if (g->out_value[o] >= 1000)
      dmlc_test_text_add(&g->t, "%s %%x%u", o ? "," : "", g->out_value[o] - 1000);
    else
      dmlc_test_text_add(&g->t, "%s %%%u", o ? "," : "", g->out_value[o]);
  }
  dmlc_test_text_add(&g->t, "\n}\n");
}

/* ---- buffers ---- */
typedef struct buffers {
  dmlc_buffer in[2], out[8];
  uint32_t num_in, num_out;
} buffers;

static void buffers_init(buffers *b, const dmlc_ir_graph *g) {
  memset(b, 0, sizeof *b);
  b->num_in = g->num_inputs;
  b->num_out = g->num_outputs;
  for (uint32_t i = 0; i < g->num_inputs; i++) {
    const dmlc_graph_io *io = &g->inputs[i];
    b->in[i].size_bytes = io->layout.size_bytes;
    unsigned char *p = malloc(io->layout.size_bytes);
    ck_assert_ptr_nonnull(p);
    const dmlc_dtype dtype = g->values[io->value].type.dtype;
    for (uint64_t k = 0; k < io->layout.size_bytes; k++) {
      /* small values, so ties are common; now and then any bits (NaNs) */
      const uint32_t r = rnd(16);
      p[k] = r < 12 ? (unsigned char)rnd(3) : (unsigned char)rnd(256);
      if (dmlc_dtype_is_float(dtype) && r < 12)
        p[k] = (unsigned char)(0x3c + rnd(2) * 0x80); /* +-small floats */
    }
    b->in[i].data = p;
  }
  for (uint32_t o = 0; o < g->num_outputs; o++) {
    b->out[o].size_bytes = g->outputs[o].layout.size_bytes;
    b->out[o].data = malloc(b->out[o].size_bytes);
    ck_assert_ptr_nonnull(b->out[o].data);
    memset(b->out[o].data, SENTINEL, b->out[o].size_bytes);
  }
}

static void buffers_fresh_outputs(const buffers *src, buffers *dst) {
  *dst = *src;
  for (uint32_t o = 0; o < src->num_out; o++) {
    dst->out[o].data = malloc(src->out[o].size_bytes);
    ck_assert_ptr_nonnull(dst->out[o].data);
    memset(dst->out[o].data, SENTINEL, src->out[o].size_bytes);
  }
}

static void free_outputs(buffers *b) {
  for (uint32_t o = 0; o < b->num_out; o++)
    free(b->out[o].data);
}

static void run_reference(dmlc_graph *graph, const buffers *b) {
  dmlc_executable *exe = NULL;
  const dmlc_status cst = dmlc_graph_compile(graph, DMLC_DEVICE_REFERENCE, &exe);
  ck_assert_msg(cst == DMLC_OK, "compile: %s", dmlc_context_error(graph->ctx));
  ck_assert_int_eq(dmlc_execute(exe, b->in, b->num_in, b->out, b->num_out), DMLC_OK);
  dmlc_executable_destroy(exe);
}

/* ---- the kernel interpreter ---- */
typedef struct interp {
  const dmlc_ir_graph *g;
  const dmlc_kernel *k;
  const buffers *b;
  unsigned char **dense; /* per value: what a kernel wrote densely */
} interp;

static uint64_t dot(const interp *it, const uint32_t *p, const uint64_t *strides) {
  uint64_t off = 0;
  for (uint32_t d = 0; d < it->k->rank; d++)
    off += (uint64_t)p[d] * strides[d];
  return off;
}

/* An element as its bytes: reshape, broadcast and a cast to the same type
 * move bits (NaN payloads included), as the reference does. */
typedef struct element {
  dmlc_dtype dtype;
  unsigned char bytes[8];
} element;

static element from_scalar(dmlc_dtype dtype, dmlc_scalar s) {
  element e = {dtype, {0}};
  dmlc_scalar_store(dtype, e.bytes, s);
  return e;
}

static dmlc_scalar to_scalar(element e) { return dmlc_scalar_load(e.dtype, e.bytes); }

static uint64_t reduced_index(const interp *it, const uint32_t *p) {
  uint64_t strides[DMLC_MAX_RANK];
  dmlc_kernel_reduced_index_strides(it->k, strides);
  return dot(it, p, strides);
}

static element eval(const interp *it, uint32_t v, const uint32_t *p);

static uint64_t eval_arg(const interp *it, const dmlc_node *n, const uint32_t *p) {
  const dmlc_kernel *k = it->k;
  uint32_t q[DMLC_MAX_RANK];
  memcpy(q, p, sizeof q);
  for (uint32_t d = 0; d < k->rank; d++)
    if ((k->reduced_mask >> d) & 1u)
      q[d] = 0;
  const bool is_max = n->op == DMLC_OP_ARGMAX;
  dmlc_scalar best = to_scalar(eval(it, n->operands[0], q));
  uint64_t index = reduced_index(it, q);
  for (;;) { /* the next q over the reduced dims, row-major */
    uint32_t d = k->rank;
    while (d-- > 0) {
      if (!((k->reduced_mask >> d) & 1u))
        continue;
      if (++q[d] < k->dims[d])
        break;
      q[d] = 0;
    }
    if (d == UINT32_MAX)
      break;
    const dmlc_scalar x = to_scalar(eval(it, n->operands[0], q));
    const int cmp = dmlc_scalar_compare(x, best, is_max);
    const int better = is_max ? cmp : -cmp;
    if (n->direction == DMLC_DIRECTION_INCREASING ? better > 0 : better >= 0) {
      best = x;
      index = reduced_index(it, q);
    }
  }
  return index;
}

static element eval(const interp *it, uint32_t v, const uint32_t *p) {
  const dmlc_ir_graph *g = it->g;
  const dmlc_kernel *k = it->k;
  const dmlc_dtype dtype = g->values[v].type.dtype;
  const uint32_t esize = dmlc_dtype_size(dtype);
  const dmlc_kernel_buffer *reads = dmlc_kernel_reads(g, k);
  for (uint32_t i = 0; i < k->num_reads; i++) {
    if (reads[i].value != v)
      continue;
    const unsigned char *base = it->dense[v];
    for (uint32_t j = 0; j < g->num_inputs; j++)
      if (g->inputs[j].value == v)
        base = it->b->in[j].data;
    if (!base) /* (not ck_assert: each passing one writes to Check's pipe) */
      ck_abort_msg("value %%%u is read but neither an input nor written", v);
    element e = {dtype, {0}};
    memcpy(e.bytes, base + dot(it, p, reads[i].strides) * esize, esize);
    return e;
  }
  const int32_t producer = g->values[v].producer;
  if (!(producer >= (int32_t)k->first_node && (uint32_t)producer < k->first_node + k->num_nodes))
    ck_abort_msg("value %%%u is produced outside its kernel", v);
  const dmlc_node *n = &g->nodes[producer];
  switch (n->op) {
  case DMLC_OP_RESHAPE:
  case DMLC_OP_BROADCAST:
    return eval(it, n->operands[0], p);
  case DMLC_OP_CAST: {
    const element in = eval(it, n->operands[0], p);
    if (in.dtype == dtype && dtype != DMLC_DTYPE_BOOL)
      return in;
    return from_scalar(dtype, to_scalar(in));
  }
  case DMLC_OP_EQ:
    return from_scalar(
        dtype, dmlc_scalar_from_u64(dmlc_scalar_equal(to_scalar(eval(it, n->operands[0], p)),
                                                      to_scalar(eval(it, n->operands[1], p)))));
  case DMLC_OP_CONSTANT:
    return from_scalar(dtype, dmlc_scalar_from_i64(n->value));
  case DMLC_OP_REDUCED_INDEX:
    return from_scalar(dtype, dmlc_scalar_from_u64(reduced_index(it, p)));
  case DMLC_OP_ARGMAX:
  case DMLC_OP_ARGMIN:
    return from_scalar(dtype, dmlc_scalar_from_u64(eval_arg(it, n, p)));
  default:
    ck_abort_msg("op %s in a kernel", dmlc_op_get(n->op)->name);
  }
  return from_scalar(dtype, dmlc_scalar_from_u64(0));
}

static void interpret(const dmlc_ir_graph *g, const buffers *b) {
  unsigned char **dense = calloc(g->num_values, sizeof *dense);
  ck_assert_ptr_nonnull(dense);
  for (uint32_t ki = 0; ki < g->num_kernels; ki++) {
    const dmlc_kernel *k = &g->kernels[ki];
    const interp it = {g, k, b, dense};
    const dmlc_kernel_buffer *writes = dmlc_kernel_writes(g, k);
    for (uint32_t w = 0; w < k->num_writes; w++)
      if (writes[w].output < 0) {
        const dmlc_type *t = &g->values[writes[w].value].type;
        dense[writes[w].value] = calloc(dmlc_type_num_elements(t), dmlc_dtype_size(t->dtype));
        ck_assert_ptr_nonnull(dense[writes[w].value]);
      }
    uint32_t p[DMLC_MAX_RANK] = {0};
    do {
      for (uint32_t w = 0; w < k->num_writes; w++) {
        const uint32_t v = writes[w].value;
        const dmlc_dtype dtype = g->values[v].type.dtype;
        unsigned char *base =
            writes[w].output < 0 ? dense[v] : (unsigned char *)b->out[writes[w].output].data;
        const element e = eval(&it, v, p);
        memcpy(base + dot(&it, p, writes[w].strides) * dmlc_dtype_size(dtype), e.bytes,
               dmlc_dtype_size(dtype));
      }
      uint32_t d = k->rank;
      while (d-- > 0 && ++p[d] == k->dims[d])
        p[d] = 0;
      if (d == UINT32_MAX)
        break;
    } while (true);
  }
  for (uint32_t v = 0; v < g->num_values; v++)
    free(dense[v]);
  free(dense);
}

/* ---- structure ---- */
static void check_structure(const dmlc_ir_graph *g) {
  uint32_t next = 0;
  for (uint32_t ki = 0; ki < g->num_kernels; ki++) {
    const dmlc_kernel *k = &g->kernels[ki];
    ck_assert_uint_eq(k->first_node, next); /* every node in exactly one kernel */
    next += k->num_nodes;
    uint32_t reductions = 0;
    for (uint32_t n = k->first_node; n < next; n++)
      reductions += dmlc_op_get(g->nodes[n].op)->kind == DMLC_OPKIND_REDUCTION;
    ck_assert_uint_le(reductions, 1);
    /* a dense write is read by a later kernel: nothing is written for nothing */
    const dmlc_kernel_buffer *writes = dmlc_kernel_writes(g, k);
    for (uint32_t w = 0; w < k->num_writes; w++) {
      if (writes[w].output >= 0)
        continue;
      bool read = false;
      for (uint32_t kj = ki + 1; kj < g->num_kernels && !read; kj++)
        for (uint32_t r = 0; r < g->kernels[kj].num_reads; r++)
          read |= dmlc_kernel_reads(g, &g->kernels[kj])[r].value == writes[w].value;
      ck_assert_msg(read, "kernel @k%u writes a value no kernel reads", ki);
    }
  }
  ck_assert_uint_eq(next, g->num_nodes);
  for (uint32_t n = 0; n < g->num_nodes; n++) /* lowered hardmax: no index tensor in memory */
    if (g->nodes[n].op == DMLC_OP_BROADCAST || g->nodes[n].op == DMLC_OP_REDUCED_INDEX)
      for (uint32_t ki = 0; ki < g->num_kernels; ki++)
        for (uint32_t w = 0; w < g->kernels[ki].num_writes; w++)
          ck_assert_uint_ne(dmlc_kernel_writes(g, &g->kernels[ki])[w].value, g->nodes[n].result);
}

static void compare_outputs(const buffers *want, const buffers *got, const char *what,
                            const char *text) {
  for (uint32_t o = 0; o < want->num_out; o++)
    ck_assert_msg(memcmp(want->out[o].data, got->out[o].data, want->out[o].size_bytes) == 0,
                  "%s: output %u differs\n%s", what, o, text);
}

/* Runs pipeline on text and compares with the unpassed graph; false when a
 * pass is not built yet. */
static bool check_pipeline(dmlc_context *ctx, const char *text, const char *pipeline) {
  dmlc_graph *before = NULL, *after = NULL;
  ck_assert_int_eq(dmlc_graph_parse(ctx, text, strlen(text), "random", &before), DMLC_OK);
  ck_assert_int_eq(dmlc_graph_parse(ctx, text, strlen(text), "random", &after), DMLC_OK);
  dmlc_pass_options options = {.verify_each = 1};
  const dmlc_status st = dmlc_graph_run_passes(after, pipeline, &options);
  if (st == DMLC_ERROR_UNSUPPORTED) {
    dmlc_graph_destroy(before);
    dmlc_graph_destroy(after);
    return false;
  }
  ck_assert_msg(st == DMLC_OK, "%s: %s\n%s", pipeline, dmlc_context_error(ctx), text);
  check_structure(after->ir);
  buffers want, got, interpreted;
  buffers_init(&want, before->ir);
  buffers_fresh_outputs(&want, &got);
  buffers_fresh_outputs(&want, &interpreted);
  run_reference(before, &want);
  run_reference(after, &got);
  interpret(after->ir, &interpreted);
  char *printed = NULL;
  ck_assert_int_eq(dmlc_graph_print(after, &printed), DMLC_OK);
  char what[160];
  snprintf(what, sizeof what, "%s (reference)", pipeline);
  compare_outputs(&want, &got, what, printed);
  snprintf(what, sizeof what, "%s (kernel interpreter)", pipeline);
  compare_outputs(&want, &interpreted, what, printed);
  dmlc_free(printed);
  free_outputs(&got);
  free_outputs(&interpreted);
  free_outputs(&want);
  for (uint32_t i = 0; i < want.num_in; i++)
    free(want.in[i].data);
  dmlc_graph_destroy(before);
  dmlc_graph_destroy(after);
  return true;
}

static const char *const pipelines[] = {
    "lower-hardmax,cse,dce,fuse", "lower-hardmax,fuse",
    "lower-hardmax,canonicalize-axes,cse,dce,fuse", /* the default, once it is built */
};

START_TEST(test_fuse_random) {
  dmlc_context *ctx = NULL;
  ck_assert_int_eq(dmlc_context_create(&ctx), DMLC_OK);
  rng_state = 0x2545f4914f6cdd1dull + (uint64_t)_i * 7919;
  size_t ran[3] = {0};
  for (int iter = 0; iter < 150; iter++) {
    gen g;
    gen_graph(&g);
    for (size_t p = 0; p < 3; p++)
      ran[p] += check_pipeline(ctx, g.t.buf, pipelines[p]);
  }
  ck_assert_uint_eq(ran[0], 150);
  ck_assert_uint_eq(ran[1], 150);
  dmlc_context_destroy(ctx);
}
END_TEST

/* The lowered hardmax is one kernel reading x and writing the result only. */
START_TEST(test_fuse_hardmax_one_kernel) {
  dmlc_context *ctx = NULL;
  ck_assert_int_eq(dmlc_context_create(&ctx), DMLC_OK);
  const char text[] = "graph @h(%x: f32[3,4,5]) -> (f32[3,4,5]) {\n"
                      "  %0 = hardmax %x {axes = [2, 0]} : f32[3,4,5]\n  return %0\n}\n";
  dmlc_graph *graph = NULL;
  ck_assert_int_eq(dmlc_graph_parse(ctx, text, strlen(text), "h", &graph), DMLC_OK);
  ck_assert_int_eq(dmlc_graph_run_passes(graph, "lower-hardmax,cse,dce,fuse", NULL), DMLC_OK);
  const dmlc_ir_graph *g = graph->ir;
  ck_assert_uint_eq(g->num_kernels, 1);
  ck_assert_uint_eq(g->kernels[0].num_reads, 1);
  ck_assert_uint_eq(g->kernels[0].num_writes, 1);
  ck_assert_int_eq(dmlc_kernel_writes(g, &g->kernels[0])[0].output, 0);
  ck_assert_uint_eq(g->kernels[0].reduced_mask, 5);
  ck_assert(check_pipeline(ctx, text, "lower-hardmax,cse,dce,fuse"));
  dmlc_graph_destroy(graph);
  dmlc_context_destroy(ctx);
}
END_TEST

START_TEST(test_view_strides) {
  const uint32_t d234[] = {2, 3, 4}, d64[] = {6, 4}, d24[] = {24}, d2112[] = {2, 1, 12};
  uint64_t out[DMLC_MAX_RANK];
  const uint64_t packed[] = {12, 4, 1};
  ck_assert(dmlc_view_strides(d234, 3, packed, d64, 2, out));
  ck_assert_uint_eq(out[0], 4);
  ck_assert_uint_eq(out[1], 1);
  ck_assert(dmlc_view_strides(d234, 3, packed, d24, 1, out));
  ck_assert_uint_eq(out[0], 1);
  const uint64_t padded[] = {20, 4, 1}; /* dims 1 and 2 still merge, 0 and 1 do not */
  ck_assert(!dmlc_view_strides(d234, 3, padded, d64, 2, out));
  ck_assert(dmlc_view_strides(d234, 3, padded, d2112, 3, out));
  ck_assert_uint_eq(out[0], 20);
  ck_assert_uint_eq(out[1], 0);
  ck_assert_uint_eq(out[2], 1);
  const uint64_t bcast[] = {0, 0, 1};
  ck_assert(dmlc_view_strides(d234, 3, bcast, d64, 2, out));
  ck_assert_uint_eq(out[0], 0);
  const uint64_t split[] = {3};
  ck_assert(dmlc_view_strides(d24, 1, split, d234, 3, out));
  ck_assert_uint_eq(out[0], 36);
  ck_assert_uint_eq(out[1], 12);
  ck_assert_uint_eq(out[2], 3);
  const uint32_t d25[] = {25};
  ck_assert(!dmlc_view_strides(d234, 3, packed, d25, 1, out));
}
END_TEST

static Suite *fuse_suite(void) {
  Suite *s = suite_create("fuse");
  TCase *tc = tcase_create("fuse");
  tcase_set_timeout(tc, 600);
  tcase_add_test(tc, test_view_strides);
  tcase_add_test(tc, test_fuse_hardmax_one_kernel);
  tcase_add_loop_test(tc, test_fuse_random, 0, 4);
  suite_add_tcase(s, tc);
  return s;
}

int main(void) {
  Suite *suites[] = {fuse_suite()};
  return dmlc_test_run_suites(suites, 1);
}
