/* The conformance suite's known answers (cts.h): the operator semantics of
 * spec/OPERATORS.md and the seed pages, through the public API only (DML
 * descriptors via dmlc_operator_compile, IR text via dmlc_graph_parse), on
 * the device under test. Expected values come from the spec or from a
 * brute-force argmax written here, independently of every device.
 *
 * The "primitives" cases (lone broadcast, reduced_index, eq and double
 * casts: combinations fuse never produces and the code generators reject)
 * are the reference evaluator's own semantics: only the reference device's
 * suite has them. */
#include <float.h>
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cts.h"
#include "dmlc/dmlc.h"

#define SENTINEL CTS_SENTINEL

/* ---- values ---- */

static float f32_bits(uint32_t bits) {
  float f;
  memcpy(&f, &bits, sizeof f);
  return f;
}

static uint32_t f32_to_bits(float f) {
  uint32_t bits;
  memcpy(&bits, &f, sizeof bits);
  return bits;
}

/* ---- tensors described as DirectML does ---- */

typedef struct tensor {
  DML_BUFFER_TENSOR_DESC buf;
  DML_TENSOR_DESC desc;
  uint32_t sizes[DMLC_MAX_RANK];
  uint32_t strides[DMLC_MAX_RANK];
  uint64_t span; /* elements from the first to the last one reached, inclusive */
} tensor;

/* strides NULL: packed. t must not move afterwards (desc points into it). */
static void tensor_init(tensor *t, DML_TENSOR_DATA_TYPE type, uint32_t rank, const uint32_t *sizes,
                        const uint32_t *strides) {
  memset(t, 0, sizeof *t);
  memcpy(t->sizes, sizes, rank * sizeof *sizes);
  uint64_t packed = 1;
  for (uint32_t d = rank; d-- > 0;) {
    t->strides[d] = strides ? strides[d] : (uint32_t)packed;
    packed *= sizes[d];
  }
  t->span = 1;
  for (uint32_t d = 0; d < rank; d++)
    t->span += (uint64_t)(sizes[d] - 1) * t->strides[d];
  t->buf.DataType = type;
  t->buf.DimensionCount = rank;
  t->buf.Sizes = t->sizes;
  t->buf.Strides = strides ? t->strides : NULL;
  t->buf.TotalTensorSizeInBytes = (t->span * dmlc_data_type_size(type) + 3) & ~(uint64_t)3;
  t->desc.Type = DML_TENSOR_TYPE_BUFFER;
  t->desc.Desc = &t->buf;
}

static uint64_t tensor_offset(const tensor *t, const uint32_t *c) {
  uint64_t off = 0;
  for (uint32_t d = 0; d < t->buf.DimensionCount; d++)
    off += (uint64_t)c[d] * t->strides[d];
  return off;
}

static uint64_t tensor_count(const tensor *t) {
  uint64_t n = 1;
  for (uint32_t d = 0; d < t->buf.DimensionCount; d++)
    n *= t->sizes[d];
  return n;
}

/* Flat row-major index -> coordinate. */
static void unflatten(uint32_t rank, const uint32_t *sizes, uint64_t flat, uint32_t *c) {
  for (uint32_t d = rank; d-- > 0;) {
    c[d] = (uint32_t)(flat % sizes[d]);
    flat /= sizes[d];
  }
}

/* A buffer of t's TotalTensorSizeInBytes, filled with the sentinel, at an
 * address misaligned by `skew` bytes from malloc's. */
typedef struct buffer {
  unsigned char *base;
  unsigned char *data;
  uint64_t size;
} buffer;

static buffer buffer_make(const tensor *t, uint32_t skew) {
  buffer b;
  b.size = t->buf.TotalTensorSizeInBytes;
  b.base = malloc(b.size + skew);
  ck_assert_ptr_nonnull(b.base);
  b.data = b.base + skew;
  memset(b.data, SENTINEL, b.size);
  return b;
}

static void buffer_free(buffer *b) { free(b->base); }

/* Marks the bytes of every element of t in mask; checks every other byte of
 * b still holds the sentinel. */
static void check_gaps(const tensor *t, const buffer *b) {
  const uint32_t esize = dmlc_data_type_size(t->buf.DataType);
  unsigned char *mask = calloc(b->size, 1);
  ck_assert_ptr_nonnull(mask);
  uint32_t c[DMLC_MAX_RANK] = {0};
  for (uint64_t k = 0; k < tensor_count(t); k++) {
    unflatten(t->buf.DimensionCount, t->sizes, k, c);
    memset(mask + tensor_offset(t, c) * esize, 1, esize);
  }
  for (uint64_t i = 0; i < b->size; i++)
    if (!mask[i])
      ck_assert_msg(b->data[i] == SENTINEL, "byte %llu of the output, in a gap, was written",
                    (unsigned long long)i);
  free(mask);
}

/* ---- running ---- */

static dmlc_context *context(void) { return cts_context(); }

static void run_operator(const DML_OPERATOR_DESC *desc, const buffer *in, const buffer *out) {
  dmlc_context *ctx = context();
  dmlc_executable *exe = NULL;
  dmlc_status st = dmlc_operator_compile(ctx, desc, cts_device(), &exe);
  ck_assert_msg(st == DMLC_OK, "compile on %s: %s", dmlc_device_name(cts_device()),
                dmlc_context_error(ctx));
  ck_assert_int_eq(dmlc_executable_device(exe), cts_device());
  const dmlc_buffer ib = {in->data, in->size}, ob = {out->data, out->size};
  st = dmlc_execute(exe, &ib, 1, &ob, 1);
  ck_assert_msg(st == DMLC_OK, "execute: %s", dmlc_context_error(ctx));
  dmlc_executable_destroy(exe);
}

/* Parses and runs IR text on the device under test. */
static void run_ir(const char *text, const dmlc_buffer *inputs, size_t num_inputs,
                   const dmlc_buffer *outputs, size_t num_outputs) {
  dmlc_context *ctx = context();
  dmlc_graph *g = NULL;
  dmlc_status st = dmlc_graph_parse(ctx, text, strlen(text), "t.dmlir", &g);
  ck_assert_msg(st == DMLC_OK, "parse: %s\n%s", dmlc_context_error(ctx), text);
  dmlc_executable *exe = NULL;
  st = dmlc_graph_compile(g, cts_device(), &exe);
  ck_assert_msg(st == DMLC_OK, "compile on %s: %s\n%s", dmlc_device_name(cts_device()),
                dmlc_context_error(ctx), text);
  st = dmlc_execute(exe, inputs, num_inputs, outputs, num_outputs);
  ck_assert_msg(st == DMLC_OK, "execute: %s\n%s", dmlc_context_error(ctx), text);
  dmlc_executable_destroy(exe);
  dmlc_graph_destroy(g);
}

/* ---- argmax / argmin through descriptors ---- */

typedef enum arg_kind { ARG_MAX, ARG_MIN, ARG_REDUCE_MAX, ARG_REDUCE_MIN } arg_kind;

typedef struct arg_case {
  arg_kind kind;
  DML_AXIS_DIRECTION direction;
  DML_TENSOR_DATA_TYPE in_type, out_type;
  uint32_t rank;
  const uint32_t *sizes;
  const uint32_t *in_strides;  /* NULL: packed */
  const uint32_t *out_strides; /* NULL: packed */
  const uint32_t *axes;
  uint32_t num_axes;
  uint32_t skew; /* misalign both buffers by this many bytes */
} arg_case;

static uint64_t read_index(DML_TENSOR_DATA_TYPE type, const unsigned char *p) {
  switch (type) {
  case DML_TENSOR_DATA_TYPE_UINT32: {
    uint32_t x;
    memcpy(&x, p, sizeof x);
    return x;
  }
  case DML_TENSOR_DATA_TYPE_INT32: {
    int32_t x;
    memcpy(&x, p, sizeof x);
    ck_assert_int_ge(x, 0);
    return (uint64_t)x;
  }
  case DML_TENSOR_DATA_TYPE_INT64: {
    int64_t x;
    memcpy(&x, p, sizeof x);
    ck_assert_int_ge(x, 0);
    return (uint64_t)x;
  }
  default: {
    uint64_t x;
    memcpy(&x, p, sizeof x);
    return x;
  }
  }
}

/* Runs c on `in` (the contents of the input's buffer, span elements, laid
 * out per in_strides). result[k] receives the index at the k-th output
 * coordinate in row-major order. */
static void arg_run(const arg_case *c, const void *in, uint64_t *result) {
  uint32_t out_sizes[DMLC_MAX_RANK];
  memcpy(out_sizes, c->sizes, c->rank * sizeof *out_sizes);
  for (uint32_t k = 0; k < c->num_axes; k++)
    out_sizes[c->axes[k]] = 1;
  tensor ti, to;
  tensor_init(&ti, c->in_type, c->rank, c->sizes, c->in_strides);
  tensor_init(&to, c->out_type, c->rank, out_sizes, c->out_strides);
  buffer bi = buffer_make(&ti, c->skew), bo = buffer_make(&to, c->skew);
  memcpy(bi.data, in, ti.span * dmlc_data_type_size(c->in_type));

  DML_ARGMAX_OPERATOR_DESC arg = {&ti.desc, &to.desc, c->num_axes, c->axes, c->direction};
  DML_REDUCE_OPERATOR_DESC reduce = {DML_REDUCE_FUNCTION_ARGMAX, &ti.desc, &to.desc, c->num_axes,
                                     c->axes};
  DML_OPERATOR_DESC op = {DML_OPERATOR_ARGMAX, &arg};
  if (c->kind == ARG_MIN) {
    op.Type = DML_OPERATOR_ARGMIN; /* DML_ARGMIN_OPERATOR_DESC has the same fields */
  } else if (c->kind == ARG_REDUCE_MAX || c->kind == ARG_REDUCE_MIN) {
    op.Type = DML_OPERATOR_REDUCE;
    op.Desc = &reduce;
    reduce.Function =
        c->kind == ARG_REDUCE_MAX ? DML_REDUCE_FUNCTION_ARGMAX : DML_REDUCE_FUNCTION_ARGMIN;
  }
  DML_ARGMIN_OPERATOR_DESC argmin = {&ti.desc, &to.desc, c->num_axes, c->axes, c->direction};
  if (c->kind == ARG_MIN)
    op.Desc = &argmin;
  run_operator(&op, &bi, &bo);

  const uint32_t esize = dmlc_data_type_size(c->out_type);
  uint32_t coord[DMLC_MAX_RANK];
  for (uint64_t k = 0; k < tensor_count(&to); k++) {
    unflatten(c->rank, out_sizes, k, coord);
    result[k] = read_index(c->out_type, bo.data + tensor_offset(&to, coord) * esize);
  }
  check_gaps(&to, &bo);
  buffer_free(&bi);
  buffer_free(&bo);
}

/* The common case: a packed f32 input, u32 output. */
static void arg_f32(arg_kind kind, DML_AXIS_DIRECTION dir, uint32_t rank, const uint32_t *sizes,
                    const float *data, const uint32_t *axes, uint32_t num_axes, uint64_t *result) {
  const arg_case c = {kind,
                      dir,
                      DML_TENSOR_DATA_TYPE_FLOAT32,
                      DML_TENSOR_DATA_TYPE_UINT32,
                      rank,
                      sizes,
                      NULL,
                      NULL,
                      axes,
                      num_axes,
                      0};
  arg_run(&c, data, result);
}

static void expect_indices(const uint64_t *got, const uint64_t *want, uint32_t n,
                           const char *what) {
  for (uint32_t k = 0; k < n; k++)
    ck_assert_msg(got[k] == want[k], "%s: element %u is %llu, expected %llu", what, k,
                  (unsigned long long)got[k], (unsigned long long)want[k]);
}

/* ---- the seed pages' examples ---- */

static const uint32_t sizes_3x3[] = {3, 3};
static const float seed_3x3[] = {1, 2, 3, 3, 0, 4, 2, 5, 2};

typedef struct seed_example {
  arg_kind kind;
  uint32_t num_axes;
  uint32_t axes[2];
  uint32_t count;
  uint64_t want[3];
} seed_example;

static const seed_example seed_examples[] = {
    {ARG_MAX, 1, {0}, 3, {1, 2, 1}},        {ARG_MAX, 1, {1}, 3, {2, 2, 1}},
    {ARG_MAX, 2, {0, 1}, 1, {7}},           {ARG_MAX, 2, {1, 0}, 1, {7}},
    {ARG_MIN, 1, {0}, 3, {0, 1, 2}},        {ARG_MIN, 1, {1}, 3, {0, 1, 0}},
    {ARG_MIN, 2, {0, 1}, 1, {4}},           {ARG_MIN, 2, {1, 0}, 1, {4}},
    {ARG_REDUCE_MAX, 1, {0}, 3, {1, 2, 1}}, {ARG_REDUCE_MAX, 2, {0, 1}, 1, {7}},
    {ARG_REDUCE_MIN, 1, {1}, 3, {0, 1, 0}}, {ARG_REDUCE_MIN, 2, {1, 0}, 1, {4}},
};

START_TEST(test_seed_examples) {
  const seed_example *e = &seed_examples[_i];
  uint64_t got[3];
  arg_f32(e->kind, DML_AXIS_DIRECTION_INCREASING, 2, sizes_3x3, seed_3x3, e->axes, e->num_axes,
          got);
  expect_indices(got, e->want, e->count, "seed example");
}
END_TEST

START_TEST(test_tie_examples) {
  static const uint32_t n5[] = {5};
  static const uint32_t axis0[] = {0};
  static const float a[] = {3, 2, 1, 2, 3}, b[] = {1, 2, 3, 2, 1};
  struct {
    arg_kind kind;
    const float *data;
    DML_AXIS_DIRECTION dir;
    uint64_t want;
  } cases[] = {
      {ARG_MAX, a, DML_AXIS_DIRECTION_INCREASING, 0},
      {ARG_MAX, a, DML_AXIS_DIRECTION_DECREASING, 4},
      {ARG_MIN, b, DML_AXIS_DIRECTION_INCREASING, 0},
      {ARG_MIN, b, DML_AXIS_DIRECTION_DECREASING, 4},
      {ARG_MIN, a, DML_AXIS_DIRECTION_INCREASING, 2},
      {ARG_MIN, a, DML_AXIS_DIRECTION_DECREASING, 2},
      {ARG_MAX, b, DML_AXIS_DIRECTION_INCREASING, 2},
      {ARG_MAX, b, DML_AXIS_DIRECTION_DECREASING, 2},
      {ARG_REDUCE_MAX, a, DML_AXIS_DIRECTION_INCREASING, 0},
      {ARG_REDUCE_MIN, b, DML_AXIS_DIRECTION_INCREASING, 0},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    uint64_t got;
    arg_f32(cases[i].kind, cases[i].dir, 1, n5, cases[i].data, axis0, 1, &got);
    ck_assert_msg(got == cases[i].want, "tie case %zu: got %llu, expected %llu", i,
                  (unsigned long long)got, (unsigned long long)cases[i].want);
  }
}
END_TEST

/* ---- NaN, signed zero, infinities ---- */

typedef struct special_case {
  uint32_t n;
  uint32_t bits[6];                            /* f32 bit patterns */
  uint64_t max_inc, max_dec, min_inc, min_dec; /* expected indices */
} special_case;

#define B_QNAN 0x7fc00000u
#define B_NNAN 0xffc00001u /* a negative NaN with a payload */
#define B_SNAN 0x7f800001u
#define B_PINF 0x7f800000u
#define B_NINF 0xff800000u
#define B_PZERO 0x00000000u
#define B_NZERO 0x80000000u
#define B_ONE 0x3f800000u
#define B_TWO 0x40000000u
#define B_THREE 0x40400000u
#define B_MINUS_ONE 0xbf800000u
#define B_DENORM 0x00000001u

static const special_case special_cases[] = {
    {5, {B_ONE, B_QNAN, B_THREE, B_QNAN, B_TWO}, 1, 3, 1, 3},   /* first / last NaN wins */
    {3, {B_QNAN, B_QNAN, B_QNAN}, 0, 2, 0, 2},                  /* all NaN */
    {3, {B_PINF, B_QNAN, B_NINF}, 1, 1, 1, 1},                  /* NaN beats the infinities */
    {3, {B_ONE, B_NNAN, B_SNAN}, 1, 2, 1, 2},                   /* any NaN is a NaN */
    {4, {B_NZERO, B_PZERO, B_NZERO, B_MINUS_ONE}, 0, 2, 3, 3},  /* -0 == +0 */
    {4, {B_PZERO, B_NZERO, B_PZERO, B_ONE}, 3, 3, 0, 2},        /* -0 == +0 */
    {5, {B_ONE, B_PINF, B_NINF, B_PINF, B_NINF}, 1, 3, 2, 4},   /* infinities order normally */
    {3, {B_NINF, B_NINF, B_NINF}, 0, 2, 0, 2},                  /* all -inf */
    {2, {B_PINF, B_PINF}, 0, 1, 0, 1},                          /* all +inf */
    {3, {B_PZERO, B_DENORM, B_NZERO}, 1, 1, 0, 2},              /* denormals are not flushed */
    {5, {B_QNAN, B_NINF, B_PINF, B_NZERO, B_QNAN}, 0, 4, 0, 4}, /* NaN wins both ways */
};

static void check_special(const special_case *s, DML_TENSOR_DATA_TYPE type) {
  const uint32_t sizes[] = {s->n}, axes[] = {0};
  unsigned char data[6 * 4];
  for (uint32_t i = 0; i < s->n; i++) {
    if (type == DML_TENSOR_DATA_TYPE_FLOAT32) {
      memcpy(data + 4 * i, &s->bits[i], 4);
    } else {
      uint16_t h = dmlc_float_to_half(f32_bits(s->bits[i]));
      if (s->bits[i] == B_DENORM)
        h = 0x0001; /* binary32's denormal is 0 in binary16: use binary16's */
      memcpy(data + 2 * i, &h, 2);
    }
  }
  const uint64_t want[4] = {s->max_inc, s->max_dec, s->min_inc, s->min_dec};
  for (int k = 0; k < 4; k++) {
    const arg_case c = {k < 2 ? ARG_MAX : ARG_MIN,
                        k % 2 ? DML_AXIS_DIRECTION_DECREASING : DML_AXIS_DIRECTION_INCREASING,
                        type,
                        DML_TENSOR_DATA_TYPE_INT64,
                        1,
                        sizes,
                        NULL,
                        NULL,
                        axes,
                        1,
                        0};
    uint64_t got;
    arg_run(&c, data, &got);
    ck_assert_msg(got == want[k], "%s %s %s: got %llu, expected %llu", dmlc_data_type_name(type),
                  k < 2 ? "argmax" : "argmin", k % 2 ? "decreasing" : "increasing",
                  (unsigned long long)got, (unsigned long long)want[k]);
  }
}

START_TEST(test_special_values_f32) {
  check_special(&special_cases[_i], DML_TENSOR_DATA_TYPE_FLOAT32);
}
END_TEST

START_TEST(test_special_values_f16) {
  check_special(&special_cases[_i], DML_TENSOR_DATA_TYPE_FLOAT16);
}
END_TEST

/* f16 compares as its exact f32 value: subnormals, the largest finite,
 * NaN encodings. */
START_TEST(test_f16_bit_patterns) {
  static const uint32_t axes[] = {0};
  struct {
    uint32_t n;
    uint16_t h[8];
    uint64_t max_inc, max_dec, min_inc, min_dec;
  } cases[] = {
      {7, {0x0001, 0x0002, 0x03ff, 0x0400, 0x03ff, 0x8000, 0x0000}, 3, 3, 5, 6},
      {6, {0x8001, 0x83ff, 0x8400, 0x8001, 0x0001, 0x8400}, 4, 4, 2, 5},
      {5, {0x7bff, 0x7bfe, 0xfbff, 0x7bff, 0xfbfe}, 0, 3, 2, 2},
      {5, {0x3c00, 0x7e00, 0x7c01, 0x7c00, 0xfc00}, 1, 2, 1, 2},
      {4, {0xfe00, 0x3c00, 0x3c01, 0x3bff}, 0, 0, 0, 0},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    const uint32_t sizes[] = {cases[i].n};
    const uint64_t want[4] = {cases[i].max_inc, cases[i].max_dec, cases[i].min_inc,
                              cases[i].min_dec};
    for (int k = 0; k < 4; k++) {
      const arg_case c = {k < 2 ? ARG_MAX : ARG_MIN,
                          k % 2 ? DML_AXIS_DIRECTION_DECREASING : DML_AXIS_DIRECTION_INCREASING,
                          DML_TENSOR_DATA_TYPE_FLOAT16,
                          DML_TENSOR_DATA_TYPE_UINT32,
                          1,
                          sizes,
                          NULL,
                          NULL,
                          axes,
                          1,
                          0};
      uint64_t got;
      arg_run(&c, cases[i].h, &got);
      ck_assert_msg(got == want[k], "f16 case %zu, variant %d: got %llu, expected %llu", i, k,
                    (unsigned long long)got, (unsigned long long)want[k]);
    }
  }
}
END_TEST

/* ---- every input type x every output type ---- */

static const DML_TENSOR_DATA_TYPE input_types[] = {
    DML_TENSOR_DATA_TYPE_FLOAT32, DML_TENSOR_DATA_TYPE_FLOAT16, DML_TENSOR_DATA_TYPE_INT64,
    DML_TENSOR_DATA_TYPE_INT32,   DML_TENSOR_DATA_TYPE_INT16,   DML_TENSOR_DATA_TYPE_INT8,
    DML_TENSOR_DATA_TYPE_UINT64,  DML_TENSOR_DATA_TYPE_UINT32,  DML_TENSOR_DATA_TYPE_UINT16,
    DML_TENSOR_DATA_TYPE_UINT8,
};
static const DML_TENSOR_DATA_TYPE output_types[] = {
    DML_TENSOR_DATA_TYPE_INT64, DML_TENSOR_DATA_TYPE_INT32, DML_TENSOR_DATA_TYPE_UINT64,
    DML_TENSOR_DATA_TYPE_UINT32};

/* Eight values of type t laid out so that the maximum sits at 2 and 4, the
 * minimum at 3 and 5, and the values at 0 and 1 are the neighbours of the
 * extremes (equal to them if compared through double: int64 and uint64
 * must compare natively). */
static void extremes(DML_TENSOR_DATA_TYPE t, unsigned char *out) {
  switch (t) {
  case DML_TENSOR_DATA_TYPE_FLOAT32: {
    const float v[8] = {FLT_MAX, -FLT_MAX, INFINITY, -INFINITY, INFINITY, -INFINITY, 0.0f, -0.0f};
    memcpy(out, v, sizeof v);
    return;
  }
  case DML_TENSOR_DATA_TYPE_FLOAT16: {
    const uint16_t v[8] = {0x7bff, 0xfbff, 0x7c00, 0xfc00, 0x7c00, 0xfc00, 0x0001, 0x8001};
    memcpy(out, v, sizeof v);
    return;
  }
  case DML_TENSOR_DATA_TYPE_INT64: {
    const int64_t v[8] = {INT64_MAX - 1, INT64_MIN + 1, INT64_MAX, INT64_MIN,
                          INT64_MAX,     INT64_MIN,     0,         -1};
    memcpy(out, v, sizeof v);
    return;
  }
  case DML_TENSOR_DATA_TYPE_INT32: {
    const int32_t v[8] = {INT32_MAX - 1, INT32_MIN + 1, INT32_MAX, INT32_MIN,
                          INT32_MAX,     INT32_MIN,     0,         -1};
    memcpy(out, v, sizeof v);
    return;
  }
  case DML_TENSOR_DATA_TYPE_INT16: {
    const int16_t v[8] = {INT16_MAX - 1, INT16_MIN + 1, INT16_MAX, INT16_MIN,
                          INT16_MAX,     INT16_MIN,     0,         -1};
    memcpy(out, v, sizeof v);
    return;
  }
  case DML_TENSOR_DATA_TYPE_INT8: {
    const uint8_t v[8] = {0x7e, 0x81, 0x7f, 0x80, 0x7f, 0x80, 0x00, 0xff};
    memcpy(out, v, sizeof v);
    return;
  }
  case DML_TENSOR_DATA_TYPE_UINT64: {
    const uint64_t v[8] = {UINT64_MAX - 1, 1, UINT64_MAX,        0,
                           UINT64_MAX,     0, UINT64_C(1) << 63, (UINT64_C(1) << 63) - 1};
    memcpy(out, v, sizeof v);
    return;
  }
  case DML_TENSOR_DATA_TYPE_UINT32: {
    const uint32_t v[8] = {UINT32_MAX - 1, 1, UINT32_MAX, 0,
                           UINT32_MAX,     0, 1u << 31,   (1u << 31) - 1};
    memcpy(out, v, sizeof v);
    return;
  }
  case DML_TENSOR_DATA_TYPE_UINT16: {
    const uint16_t v[8] = {UINT16_MAX - 1, 1, UINT16_MAX, 0, UINT16_MAX, 0, 0x8000, 0x7fff};
    memcpy(out, v, sizeof v);
    return;
  }
  default: {
    const uint8_t v[8] = {0xfe, 1, 0xff, 0, 0xff, 0, 0x80, 0x7f};
    memcpy(out, v, sizeof v);
    return;
  }
  }
}

START_TEST(test_type_matrix) {
  const DML_TENSOR_DATA_TYPE in_type = input_types[_i / 4];
  const DML_TENSOR_DATA_TYPE out_type = output_types[_i % 4];
  static const uint32_t sizes[] = {8}, axes[] = {0};
  unsigned char data[64];
  extremes(in_type, data);
  const uint64_t want[4] = {2, 4, 3, 5};
  for (int k = 0; k < 4; k++) {
    const arg_case c = {k < 2 ? ARG_MAX : ARG_MIN,
                        k % 2 ? DML_AXIS_DIRECTION_DECREASING : DML_AXIS_DIRECTION_INCREASING,
                        in_type,
                        out_type,
                        1,
                        sizes,
                        NULL,
                        NULL,
                        axes,
                        1,
                        0};
    uint64_t got;
    arg_run(&c, data, &got);
    ck_assert_msg(got == want[k], "%s -> %s, %s %s: got %llu, expected %llu",
                  dmlc_data_type_name(in_type), dmlc_data_type_name(out_type),
                  k < 2 ? "argmax" : "argmin", k % 2 ? "decreasing" : "increasing",
                  (unsigned long long)got, (unsigned long long)want[k]);
  }
}
END_TEST

/* The same types, over the middle axis of a 3x8x2 tensor whose columns
 * hold the extremes rotated by a different amount each: checks the index
 * arithmetic and the output layout for every output type. */
START_TEST(test_type_matrix_3d) {
  const DML_TENSOR_DATA_TYPE in_type = input_types[_i / 4];
  const DML_TENSOR_DATA_TYPE out_type = output_types[_i % 4];
  static const uint32_t sizes[] = {3, 8, 2}, axes[] = {1};
  const uint32_t esize = dmlc_data_type_size(in_type);
  unsigned char ext[64], data[3 * 8 * 2 * 8];
  extremes(in_type, ext);
  /* data[a][b][c] = ext[(b + a + c) % 8]: in column (a,c) the extreme
   * that ext holds at p sits at b = (p - a - c) mod 8. */
  for (uint32_t a = 0; a < 3; a++)
    for (uint32_t b = 0; b < 8; b++)
      for (uint32_t c = 0; c < 2; c++)
        memcpy(data + ((a * 8 + b) * 2 + c) * esize, ext + ((b + a + c) % 8) * esize, esize);
  for (int k = 0; k < 4; k++) {
    const arg_case ac = {k < 2 ? ARG_MAX : ARG_MIN,
                         k % 2 ? DML_AXIS_DIRECTION_DECREASING : DML_AXIS_DIRECTION_INCREASING,
                         in_type,
                         out_type,
                         3,
                         sizes,
                         NULL,
                         NULL,
                         axes,
                         1,
                         0};
    uint64_t got[6];
    arg_run(&ac, data, got);
    const uint32_t p = k < 2 ? 2 : 3, q = k < 2 ? 4 : 5; /* where ext has it */
    for (uint32_t a = 0; a < 3; a++)
      for (uint32_t c = 0; c < 2; c++) {
        const uint64_t bp = (p + 16 - a - c) % 8, bq = (q + 16 - a - c) % 8;
        const uint64_t want = (k % 2) ? (bp > bq ? bp : bq) : (bp < bq ? bp : bq);
        ck_assert_msg(got[a * 2 + c] == want, "%s -> %s variant %d at (%u,%u): got %llu, want %llu",
                      dmlc_data_type_name(in_type), dmlc_data_type_name(out_type), k, a, c,
                      (unsigned long long)got[a * 2 + c], (unsigned long long)want);
      }
  }
}
END_TEST

/* ---- brute force, independent of the evaluator ---- */

static bool brute_beats(float a, float b, bool is_max) {
  if (isnan(a))
    return !isnan(b);
  if (isnan(b))
    return false;
  return is_max ? a > b : a < b;
}

static bool brute_ties(float a, float b) { return (isnan(a) && isnan(b)) || a == b; }

/* For the output element at out_flat: first find the extreme value of its
 * group, then the smallest (increasing) or largest (decreasing) reduced
 * index among the elements equal to it. logical[] is dense row-major. */
static uint64_t brute_arg(bool is_max, bool decreasing, uint32_t rank, const uint32_t *sizes,
                          const bool *reduced, const float *logical, uint64_t out_flat) {
  uint32_t out_sizes[DMLC_MAX_RANK], oc[DMLC_MAX_RANK], c[DMLC_MAX_RANK];
  uint64_t total = 1;
  for (uint32_t d = 0; d < rank; d++) {
    out_sizes[d] = reduced[d] ? 1 : sizes[d];
    total *= sizes[d];
  }
  unflatten(rank, out_sizes, out_flat, oc);
  bool have = false;
  float extreme = 0;
  for (int pass = 0; pass < 2; pass++) {
    bool found = false;
    uint64_t chosen = 0;
    for (uint64_t i = 0; i < total; i++) {
      unflatten(rank, sizes, i, c);
      bool in_group = true;
      for (uint32_t d = 0; d < rank; d++)
        if (!reduced[d] && c[d] != oc[d])
          in_group = false;
      if (!in_group)
        continue;
      const float v = logical[i];
      if (pass == 0) {
        if (!have || brute_beats(v, extreme, is_max))
          extreme = v;
        have = true;
        continue;
      }
      if (!brute_ties(v, extreme))
        continue;
      uint64_t index = 0;
      for (uint32_t d = 0; d < rank; d++)
        if (reduced[d])
          index = index * sizes[d] + c[d];
      if (!found || (decreasing ? index > chosen : index < chosen))
        chosen = index;
      found = true;
    }
    if (pass == 1)
      return chosen;
  }
  return UINT64_MAX;
}

/* A deterministic generator (xorshift64*), so failures reproduce. */
static uint64_t rng_state = 0x9e3779b97f4a7c15u;
static uint32_t rng(uint32_t n) {
  rng_state ^= rng_state >> 12;
  rng_state ^= rng_state << 25;
  rng_state ^= rng_state >> 27;
  return (uint32_t)((rng_state * 0x2545f4914f6cdd1du) >> 33) % n;
}

static float random_value(DML_TENSOR_DATA_TYPE type) {
  static const float floats[] = {-2, -1, -0.0f, 0, 1, 2, INFINITY, -INFINITY, NAN, 1, 2, 0.5f};
  static const float ints[] = {-3, -1, 0, 1, 2, 3};
  if (type == DML_TENSOR_DATA_TYPE_FLOAT32 || type == DML_TENSOR_DATA_TYPE_FLOAT16)
    return floats[rng(sizeof floats / sizeof floats[0])];
  if (type == DML_TENSOR_DATA_TYPE_UINT16 || type == DML_TENSOR_DATA_TYPE_UINT8)
    return (float)rng(4);
  return ints[rng(sizeof ints / sizeof ints[0])];
}

static void store_value(DML_TENSOR_DATA_TYPE type, unsigned char *p, float v) {
  switch (type) {
  case DML_TENSOR_DATA_TYPE_FLOAT32:
    memcpy(p, &v, 4);
    return;
  case DML_TENSOR_DATA_TYPE_FLOAT16: {
    const uint16_t h = dmlc_float_to_half(v);
    memcpy(p, &h, 2);
    return;
  }
  case DML_TENSOR_DATA_TYPE_INT32: {
    const int32_t x = (int32_t)v;
    memcpy(p, &x, 4);
    return;
  }
  case DML_TENSOR_DATA_TYPE_INT8: {
    const int8_t x = (int8_t)v;
    memcpy(p, &x, 1);
    return;
  }
  case DML_TENSOR_DATA_TYPE_UINT8: {
    const uint8_t x = (uint8_t)v;
    memcpy(p, &x, 1);
    return;
  }
  default: {
    const uint16_t x = (uint16_t)v;
    memcpy(p, &x, 2);
    return;
  }
  }
}

/* Strides over sizes padded by 0 to 2 per dim (row-major over the padded
 * sizes, so never overlapping); for an input, some dims get stride 0. */
static void random_strides(uint32_t rank, const uint32_t *sizes, bool allow_zero,
                           uint32_t *strides) {
  uint32_t s = 1 + rng(2);
  for (uint32_t d = rank; d-- > 0;) {
    strides[d] = s;
    s *= sizes[d] + rng(3);
    if (allow_zero && rng(4) == 0)
      strides[d] = 0;
  }
}

/* Checks one argmax/argmin case against the brute force: the input buffer
 * is random, its logical contents read back through the strides. */
static void check_against_brute(arg_kind kind, DML_AXIS_DIRECTION dir, DML_TENSOR_DATA_TYPE in_type,
                                DML_TENSOR_DATA_TYPE out_type, uint32_t rank, const uint32_t *sizes,
                                const uint32_t *in_strides, const uint32_t *out_strides,
                                const uint32_t *axes, uint32_t num_axes) {
  tensor ti;
  tensor_init(&ti, in_type, rank, sizes, in_strides);
  const uint32_t esize = dmlc_data_type_size(in_type);
  unsigned char *raw = malloc(ti.span * esize);
  float *raw_values = malloc(ti.span * sizeof *raw_values);
  const uint64_t count = tensor_count(&ti);
  float *logical = malloc(count * sizeof *logical);
  uint64_t *got = malloc(count * sizeof *got);
  ck_assert(raw && raw_values && logical && got);
  for (uint64_t i = 0; i < ti.span; i++) {
    raw_values[i] = random_value(in_type);
    store_value(in_type, raw + i * esize, raw_values[i]);
  }
  uint32_t c[DMLC_MAX_RANK] = {0};
  for (uint64_t i = 0; i < count; i++) {
    unflatten(rank, sizes, i, c);
    logical[i] = raw_values[tensor_offset(&ti, c)];
  }
  const arg_case ac = {kind,       dir,         in_type, out_type, rank,  sizes,
                       in_strides, out_strides, axes,    num_axes, rng(2)};
  arg_run(&ac, raw, got);
  bool reduced[DMLC_MAX_RANK] = {false};
  uint64_t out_count = 1;
  for (uint32_t k = 0; k < num_axes; k++)
    reduced[axes[k]] = true;
  for (uint32_t d = 0; d < rank; d++)
    out_count *= reduced[d] ? 1 : sizes[d];
  for (uint64_t o = 0; o < out_count; o++) {
    const uint64_t want =
        brute_arg(kind == ARG_MAX || kind == ARG_REDUCE_MAX, dir == DML_AXIS_DIRECTION_DECREASING,
                  rank, sizes, reduced, logical, o);
    ck_assert_msg(got[o] == want, "%s %s %s rank %u, output %llu: got %llu, brute force says %llu",
                  kind == ARG_MAX ? "argmax" : "argmin", dmlc_data_type_name(in_type),
                  dir ? "decreasing" : "increasing", rank, (unsigned long long)o,
                  (unsigned long long)got[o], (unsigned long long)want);
  }
  free(raw);
  free(raw_values);
  free(logical);
  free(got);
}

/* Random subset of [0, rank), non-empty, in random order. */
static uint32_t random_axes(uint32_t rank, uint32_t *axes) {
  uint32_t perm[DMLC_MAX_RANK];
  for (uint32_t d = 0; d < rank; d++)
    perm[d] = d;
  for (uint32_t d = rank; d-- > 1;) {
    const uint32_t j = rng(d + 1), t = perm[d];
    perm[d] = perm[j];
    perm[j] = t;
  }
  const uint32_t n = 1 + rng(rank);
  memcpy(axes, perm, n * sizeof *axes);
  return n;
}

START_TEST(test_random_against_brute_force) {
  static const DML_TENSOR_DATA_TYPE types[] = {
      DML_TENSOR_DATA_TYPE_FLOAT32, DML_TENSOR_DATA_TYPE_FLOAT16, DML_TENSOR_DATA_TYPE_INT32,
      DML_TENSOR_DATA_TYPE_INT8,    DML_TENSOR_DATA_TYPE_UINT8,   DML_TENSOR_DATA_TYPE_UINT16};
  for (int iter = 0; iter < 400; iter++) {
    const uint32_t rank = 1 + rng(4);
    uint32_t sizes[DMLC_MAX_RANK], in_strides[DMLC_MAX_RANK], out_strides[DMLC_MAX_RANK],
        out_sizes[DMLC_MAX_RANK], axes[DMLC_MAX_RANK];
    for (uint32_t d = 0; d < rank; d++)
      sizes[d] = 1 + rng(4);
    const uint32_t num_axes = random_axes(rank, axes);
    memcpy(out_sizes, sizes, sizeof sizes);
    for (uint32_t k = 0; k < num_axes; k++)
      out_sizes[axes[k]] = 1;
    random_strides(rank, sizes, true, in_strides);
    random_strides(rank, out_sizes, false, out_strides);
    const arg_kind kind = rng(2) ? ARG_MAX : ARG_MIN;
    const DML_AXIS_DIRECTION dir =
        rng(2) ? DML_AXIS_DIRECTION_DECREASING : DML_AXIS_DIRECTION_INCREASING;
    const DML_TENSOR_DATA_TYPE in_type = types[rng(6)], out_type = output_types[rng(4)];
    const bool strided_in = rng(2), strided_out = rng(2);
    check_against_brute(kind, dir, in_type, out_type, rank, sizes, strided_in ? in_strides : NULL,
                        strided_out ? out_strides : NULL, axes, num_axes);
  }
}
END_TEST

/* 8-D, several axes listed in non-ascending order. */
START_TEST(test_rank8) {
  static const uint32_t sizes[] = {2, 3, 1, 2, 2, 1, 3, 2};
  static const uint32_t axes_a[] = {6, 1, 3};
  static const uint32_t axes_b[] = {7, 0, 4, 2};
  static const uint32_t axes_c[] = {7, 6, 5, 4, 3, 2, 1, 0};
  static const uint32_t axes_d[] = {5, 2}; /* only size-1 axes: every index is 0 */
  const struct {
    const uint32_t *axes;
    uint32_t n;
  } sets[] = {{axes_a, 3}, {axes_b, 4}, {axes_c, 8}, {axes_d, 2}};
  for (size_t s = 0; s < sizeof sets / sizeof sets[0]; s++)
    for (int k = 0; k < 4; k++)
      check_against_brute(k < 2 ? ARG_MAX : ARG_MIN,
                          k % 2 ? DML_AXIS_DIRECTION_DECREASING : DML_AXIS_DIRECTION_INCREASING,
                          DML_TENSOR_DATA_TYPE_FLOAT32, DML_TENSOR_DATA_TYPE_UINT32, 8, sizes, NULL,
                          NULL, sets[s].axes, sets[s].n);
  /* and strided, on both sides */
  uint32_t in_strides[8], out_strides[8], out_sizes[8];
  memcpy(out_sizes, sizes, sizeof sizes);
  for (uint32_t k = 0; k < 3; k++)
    out_sizes[axes_a[k]] = 1;
  random_strides(8, sizes, true, in_strides);
  random_strides(8, out_sizes, false, out_strides);
  check_against_brute(ARG_MAX, DML_AXIS_DIRECTION_DECREASING, DML_TENSOR_DATA_TYPE_FLOAT16,
                      DML_TENSOR_DATA_TYPE_INT64, 8, sizes, in_strides, out_strides, axes_a, 3);
}
END_TEST

/* ---- layouts ---- */

/* The seed 3x3 tensor laid out in a padded, a transposed and an odd
 * buffer: the same answers. */
START_TEST(test_strided_inputs) {
  static const uint32_t layouts[][2] = {{5, 1}, {1, 3}, {7, 2}, {1, 4}};
  for (size_t l = 0; l < sizeof layouts / sizeof layouts[0]; l++) {
    tensor t;
    tensor_init(&t, DML_TENSOR_DATA_TYPE_FLOAT32, 2, sizes_3x3, layouts[l]);
    float *raw = malloc(t.span * sizeof *raw);
    ck_assert_ptr_nonnull(raw);
    for (uint64_t i = 0; i < t.span; i++)
      raw[i] = 1000.0f; /* a gap value that would win if it were read */
    for (uint32_t r = 0; r < 3; r++)
      for (uint32_t c = 0; c < 3; c++)
        raw[r * layouts[l][0] + c * layouts[l][1]] = seed_3x3[r * 3 + c];
    for (size_t e = 0; e < sizeof seed_examples / sizeof seed_examples[0]; e++) {
      const seed_example *ex = &seed_examples[e];
      const arg_case c = {ex->kind,
                          DML_AXIS_DIRECTION_INCREASING,
                          DML_TENSOR_DATA_TYPE_FLOAT32,
                          DML_TENSOR_DATA_TYPE_UINT32,
                          2,
                          sizes_3x3,
                          layouts[l],
                          NULL,
                          ex->axes,
                          ex->num_axes,
                          (uint32_t)l};
      uint64_t got[3];
      arg_run(&c, raw, got);
      expect_indices(got, ex->want, ex->count, "strided input");
    }
    free(raw);
  }
}
END_TEST

/* Zero strides broadcast: every element of a broadcast axis is equal, so
 * increasing gives 0 and decreasing the last index. */
START_TEST(test_broadcast_inputs) {
  static const uint32_t sizes[] = {3, 4};
  static const uint32_t rows[] = {1, 0}, cols[] = {0, 1}, all[] = {0, 0};
  static const uint32_t axis0[] = {0}, axis1[] = {1}, both[] = {1, 0};
  static const float data[] = {5, -1, 7, 7};
  uint64_t got[4];
  /* rows: element (i, j) = data[i] */
  arg_case c = {ARG_MAX,
                DML_AXIS_DIRECTION_INCREASING,
                DML_TENSOR_DATA_TYPE_FLOAT32,
                DML_TENSOR_DATA_TYPE_UINT32,
                2,
                sizes,
                rows,
                NULL,
                axis1,
                1,
                0};
  arg_run(&c, data, got);
  expect_indices(got, (uint64_t[]){0, 0, 0}, 3, "broadcast rows, increasing");
  c.direction = DML_AXIS_DIRECTION_DECREASING;
  arg_run(&c, data, got);
  expect_indices(got, (uint64_t[]){3, 3, 3}, 3, "broadcast rows, decreasing");
  c.axes = axis0;
  arg_run(&c, data, got);
  expect_indices(got, (uint64_t[]){2, 2, 2, 2}, 4, "broadcast rows over axis 0");
  c.kind = ARG_MIN;
  arg_run(&c, data, got);
  expect_indices(got, (uint64_t[]){1, 1, 1, 1}, 4, "broadcast rows, argmin");
  /* columns: element (i, j) = data[j] */
  c.in_strides = cols;
  c.kind = ARG_MAX;
  c.axes = axis1;
  arg_run(&c, data, got);
  expect_indices(got, (uint64_t[]){3, 3, 3}, 3, "broadcast columns, decreasing");
  c.direction = DML_AXIS_DIRECTION_INCREASING;
  arg_run(&c, data, got);
  expect_indices(got, (uint64_t[]){2, 2, 2}, 3, "broadcast columns, increasing");
  /* one element everywhere */
  c.in_strides = all;
  c.axes = both;
  c.num_axes = 2;
  arg_run(&c, data, got);
  ck_assert_uint_eq(got[0], 0);
  c.direction = DML_AXIS_DIRECTION_DECREASING;
  arg_run(&c, data, got);
  ck_assert_uint_eq(got[0], 11);
}
END_TEST

/* Padded output strides: the gaps keep the sentinel (arg_run checks). */
START_TEST(test_strided_outputs) {
  static const uint32_t out_cols[] = {9, 3}, out_rows[] = {2, 5}, out_one[] = {3, 1};
  static const uint32_t axis0[] = {0}, axis1[] = {1}, both[] = {0, 1};
  for (size_t t = 0; t < 4; t++) {
    uint64_t got[3];
    arg_case c = {ARG_MAX,
                  DML_AXIS_DIRECTION_INCREASING,
                  DML_TENSOR_DATA_TYPE_FLOAT32,
                  output_types[t],
                  2,
                  sizes_3x3,
                  NULL,
                  out_cols,
                  axis0,
                  1,
                  (uint32_t)t};
    arg_run(&c, seed_3x3, got);
    expect_indices(got, (uint64_t[]){1, 2, 1}, 3, "padded output, axis 0");
    c.axes = axis1;
    c.out_strides = out_rows;
    arg_run(&c, seed_3x3, got);
    expect_indices(got, (uint64_t[]){2, 2, 1}, 3, "padded output, axis 1");
    c.axes = both;
    c.num_axes = 2;
    c.out_strides = out_one;
    c.kind = ARG_MIN;
    arg_run(&c, seed_3x3, got);
    expect_indices(got, (uint64_t[]){4}, 1, "one output");
  }
}
END_TEST

/* ---- hardmax ---- */

static const uint32_t sizes_222[] = {2, 2, 2};
static const float hardmax_input[] = {12, 0, -101, 11, 3, 234, 0, -101};

typedef struct hardmax_example {
  uint32_t num_axes;
  uint32_t axes[2];
  float want[8];
} hardmax_example;

static const hardmax_example hardmax_examples[] = {
    {1, {1}, {1, 0, 0, 1, 1, 1, 0, 0}},
    {1, {0}, {1, 0, 0, 1, 0, 1, 1, 0}},
    {2, {0, 2}, {0, 0, 0, 1, 0, 1, 0, 0}},
    {2, {2, 0}, {0, 0, 0, 1, 0, 1, 0, 0}},
};

/* Runs HARDMAX1 (or legacy HARDMAX when axes is NULL) on a float input
 * given as f32 values; returns the output as f32 values. */
static void hardmax_run(DML_TENSOR_DATA_TYPE type, uint32_t rank, const uint32_t *sizes,
                        const uint32_t *in_strides, const uint32_t *out_strides,
                        const float *in_values, const uint32_t *axes, uint32_t num_axes,
                        float *out_values) {
  tensor ti, to;
  tensor_init(&ti, type, rank, sizes, in_strides);
  tensor_init(&to, type, rank, sizes, out_strides);
  buffer bi = buffer_make(&ti, 0), bo = buffer_make(&to, 0);
  const uint32_t esize = dmlc_data_type_size(type);
  uint32_t c[DMLC_MAX_RANK] = {0};
  for (uint64_t k = 0; k < tensor_count(&ti); k++) {
    unflatten(rank, sizes, k, c);
    unsigned char *p = bi.data + tensor_offset(&ti, c) * esize;
    if (type == DML_TENSOR_DATA_TYPE_FLOAT32) {
      memcpy(p, &in_values[k], 4);
    } else {
      const uint16_t h = dmlc_float_to_half(in_values[k]);
      memcpy(p, &h, 2);
    }
  }
  DML_ACTIVATION_HARDMAX1_OPERATOR_DESC h1 = {&ti.desc, &to.desc, num_axes, axes};
  DML_ACTIVATION_HARDMAX_OPERATOR_DESC h0 = {&ti.desc, &to.desc};
  const DML_OPERATOR_DESC op = {axes ? DML_OPERATOR_ACTIVATION_HARDMAX1
                                     : DML_OPERATOR_ACTIVATION_HARDMAX,
                                axes ? (const void *)&h1 : (const void *)&h0};
  run_operator(&op, &bi, &bo);
  for (uint64_t k = 0; k < tensor_count(&to); k++) {
    unflatten(rank, sizes, k, c);
    const unsigned char *p = bo.data + tensor_offset(&to, c) * esize;
    if (type == DML_TENSOR_DATA_TYPE_FLOAT32) {
      memcpy(&out_values[k], p, 4);
    } else {
      uint16_t h;
      memcpy(&h, p, 2);
      ck_assert_msg(h == 0x3c00 || h == 0x0000, "f16 hardmax wrote 0x%04x", h);
      out_values[k] = dmlc_half_to_float(h);
    }
  }
  check_gaps(&to, &bo);
  buffer_free(&bi);
  buffer_free(&bo);
}

static void expect_floats(const float *got, const float *want, uint32_t n, const char *what) {
  for (uint32_t k = 0; k < n; k++)
    ck_assert_msg(f32_to_bits(got[k]) == f32_to_bits(want[k]), "%s: element %u is %g, expected %g",
                  what, k, (double)got[k], (double)want[k]);
}

START_TEST(test_hardmax_examples) {
  const hardmax_example *e = &hardmax_examples[_i];
  float got[8];
  hardmax_run(DML_TENSOR_DATA_TYPE_FLOAT32, 3, sizes_222, NULL, NULL, hardmax_input, e->axes,
              e->num_axes, got);
  expect_floats(got, e->want, 8, "hardmax f32");
  hardmax_run(DML_TENSOR_DATA_TYPE_FLOAT16, 3, sizes_222, NULL, NULL, hardmax_input, e->axes,
              e->num_axes, got);
  expect_floats(got, e->want, 8, "hardmax f16");
  /* strided and padded on both sides */
  static const uint32_t in_strides[] = {1, 0 + 2, 4}, out_strides[] = {9, 4, 1};
  hardmax_run(DML_TENSOR_DATA_TYPE_FLOAT32, 3, sizes_222, in_strides, out_strides, hardmax_input,
              e->axes, e->num_axes, got);
  expect_floats(got, e->want, 8, "hardmax strided");
}
END_TEST

/* The first maximum, NaN first, -0 == +0; legacy HARDMAX is over the last
 * dimension. */
START_TEST(test_hardmax_special) {
  static const uint32_t sizes[] = {4, 3};
  const float in[] = {-0.0f,    0.0f, -1,       NAN,       1,         NAN,
                      INFINITY, 1,    INFINITY, -INFINITY, -INFINITY, -INFINITY};
  static const uint32_t axis1[] = {1}, axis0[] = {0};
  const float want1[] = {1, 0, 0, 1, 0, 0, 1, 0, 0, 1, 0, 0};
  const float want0[] = {0, 0, 0, 1, 1, 1, 0, 0, 0, 0, 0, 0};
  float got[12];
  for (int t = 0; t < 2; t++) {
    const DML_TENSOR_DATA_TYPE type =
        t ? DML_TENSOR_DATA_TYPE_FLOAT16 : DML_TENSOR_DATA_TYPE_FLOAT32;
    hardmax_run(type, 2, sizes, NULL, NULL, in, axis1, 1, got);
    expect_floats(got, want1, 12, "hardmax axis 1");
    hardmax_run(type, 2, sizes, NULL, NULL, in, NULL, 0, got);
    expect_floats(got, want1, 12, "legacy hardmax");
    hardmax_run(type, 2, sizes, NULL, NULL, in, axis0, 1, got);
    expect_floats(got, want0, 12, "hardmax axis 0");
  }
  /* legacy HARDMAX on the 2x2x2 example: the last axis */
  static const float want_last[] = {1, 0, 0, 1, 0, 1, 1, 0};
  hardmax_run(DML_TENSOR_DATA_TYPE_FLOAT32, 3, sizes_222, NULL, NULL, hardmax_input, NULL, 0, got);
  expect_floats(got, want_last, 8, "legacy hardmax 3-D");
}
END_TEST

/* Hardmax in 8-D against the brute-force argmax: 1 exactly where the first
 * maximum is. */
START_TEST(test_hardmax_rank8) {
  static const uint32_t sizes[] = {2, 1, 3, 2, 1, 2, 2, 2};
  static const uint32_t axes[] = {7, 2, 5};
  float in[96], got[96];
  for (int i = 0; i < 96; i++)
    in[i] = random_value(DML_TENSOR_DATA_TYPE_FLOAT32);
  hardmax_run(DML_TENSOR_DATA_TYPE_FLOAT32, 8, sizes, NULL, NULL, in, axes, 3, got);
  bool reduced[8] = {false};
  for (int k = 0; k < 3; k++)
    reduced[axes[k]] = true;
  uint32_t out_sizes[8], c[8];
  for (int d = 0; d < 8; d++)
    out_sizes[d] = reduced[d] ? 1 : sizes[d];
  for (uint64_t i = 0; i < 96; i++) {
    unflatten(8, sizes, i, c);
    uint64_t group = 0, index = 0;
    for (int d = 0; d < 8; d++) {
      group = group * out_sizes[d] + (reduced[d] ? 0 : c[d]);
      if (reduced[d])
        index = index * sizes[d] + c[d];
    }
    const uint64_t first = brute_arg(true, false, 8, sizes, reduced, in, group);
    ck_assert_msg(got[i] == (first == index ? 1.0f : 0.0f), "element %llu", (unsigned long long)i);
  }
}
END_TEST

/* ---- the primitive ops, through IR text ---- */

START_TEST(test_ir_reshape) {
  const char *text = "graph @t(%x: i16[2,3]) -> (i16[3,2]) {\n"
                     "  %0 = reshape %x : i16[3,2]\n"
                     "  return %0\n"
                     "}\n";
  int16_t in[6] = {1, -2, 3, INT16_MIN, 5, INT16_MAX}, out[6];
  const dmlc_buffer ib = {in, sizeof in}, ob = {out, sizeof out};
  run_ir(text, &ib, 1, &ob, 1);
  ck_assert_mem_eq(in, out, sizeof in);
}
END_TEST

START_TEST(test_ir_broadcast) {
  const char *text = "graph @t(%x: u32[1,3,1]) -> (u32[2,3,2]) {\n"
                     "  %0 = broadcast %x : u32[2,3,2]\n"
                     "  return %0\n"
                     "}\n";
  uint32_t in[3] = {7, 8, 9}, out[12];
  const uint32_t want[12] = {7, 7, 8, 8, 9, 9, 7, 7, 8, 8, 9, 9};
  const dmlc_buffer ib = {in, sizeof in}, ob = {out, sizeof out};
  run_ir(text, &ib, 1, &ob, 1);
  ck_assert_mem_eq(out, want, sizeof want);
}
END_TEST

START_TEST(test_ir_reduced_index) {
  /* axes listed out of order; index of (a,b,c) over {0,2} is a*4 + c */
  const char *text = "graph @t(%x: f32[1]) -> (u32[2,3,4], i64[2,3,4], %y: f32[1]) {\n"
                     "  %0 = reduced_index {axes = [2, 0]} : u32[2,3,4]\n"
                     "  %1 = reduced_index {axes = [1]} : i64[2,3,4]\n"
                     "  return %0, %1, %x\n"
                     "}\n";
  float x = 42.0f, y = 0;
  uint32_t out0[24];
  int64_t out1[24];
  const dmlc_buffer ib = {&x, sizeof x};
  const dmlc_buffer ob[3] = {{out0, sizeof out0}, {out1, sizeof out1}, {&y, sizeof y}};
  run_ir(text, &ib, 1, ob, 3);
  for (uint32_t a = 0; a < 2; a++)
    for (uint32_t b = 0; b < 3; b++)
      for (uint32_t c = 0; c < 4; c++) {
        ck_assert_uint_eq(out0[(a * 3 + b) * 4 + c], a * 4 + c);
        ck_assert_int_eq(out1[(a * 3 + b) * 4 + c], b);
      }
  ck_assert(y == 42.0f);
}
END_TEST

START_TEST(test_ir_eq) {
  /* bool never crosses the graph boundary: each result is cast to u8 */
  const char *text = "graph @t(%a: f32[6], %b: f32[6], %c: i64[4], %d: i64[4], %e: u64[3], "
                     "%f: u64[3], %g: f16[4], %h: f16[4]) -> (u8[6], u8[4], u8[3], u8[4]) {\n"
                     "  %0 = eq %a, %b : bool[6]\n"
                     "  %1 = eq %c, %d : bool[4]\n"
                     "  %2 = eq %e, %f : bool[3]\n"
                     "  %3 = eq %g, %h : bool[4]\n"
                     "  %4 = cast %0 : u8[6]\n"
                     "  %5 = cast %1 : u8[4]\n"
                     "  %6 = cast %2 : u8[3]\n"
                     "  %7 = cast %3 : u8[4]\n"
                     "  return %4, %5, %6, %7\n"
                     "}\n";
  const float a[6] = {NAN, -0.0f, 1, INFINITY, 1, -INFINITY};
  const float b[6] = {NAN, 0.0f, 1, INFINITY, 2, INFINITY};
  const int64_t c[4] = {INT64_MAX, INT64_MIN, INT64_MAX, -1};
  const int64_t d[4] = {INT64_MAX, INT64_MIN, INT64_MAX - 1, -1};
  const uint64_t e[3] = {UINT64_MAX, UINT64_MAX - 1, 0};
  const uint64_t f[3] = {UINT64_MAX, UINT64_MAX, 0};
  const uint16_t g[4] = {0x7e00, 0x8000, 0x0001, 0x3c00};
  const uint16_t h[4] = {0x7e00, 0x0000, 0x0002, 0x3c00};
  uint8_t o0[8], o1[4], o2[4], o3[4];
  const dmlc_buffer in[8] = {{(void *)a, sizeof a}, {(void *)b, sizeof b}, {(void *)c, sizeof c},
                             {(void *)d, sizeof d}, {(void *)e, sizeof e}, {(void *)f, sizeof f},
                             {(void *)g, sizeof g}, {(void *)h, sizeof h}};
  const dmlc_buffer out[4] = {{o0, 8}, {o1, 4}, {o2, 4}, {o3, 4}};
  run_ir(text, in, 8, out, 4);
  const uint8_t w0[6] = {0, 1, 1, 1, 0, 0}, w1[4] = {1, 1, 0, 1}, w2[3] = {1, 0, 1},
                w3[4] = {0, 1, 0, 1};
  ck_assert_mem_eq(o0, w0, 6);
  ck_assert_mem_eq(o1, w1, 4);
  ck_assert_mem_eq(o2, w2, 3);
  ck_assert_mem_eq(o3, w3, 4);
}
END_TEST

/* One cast: n elements of `from` (raw bytes) to `to`, compared bytewise;
 * with `via`, two casts: from -> via -> to. */
typedef struct cast_case {
  const char *from, *to;
  uint32_t n;
  const void *in;
  const void *want;
  const char *via;
} cast_case;

/* Whether a cast of from -> to rounds (a narrower float, or an integer
 * wider than the float's significand), which the SPIR-V code generator does
 * not do yet. */
static bool cast_rounds(const char *from, const char *to, uint32_t from_size, uint32_t to_size) {
  const uint32_t significand = to_size == 2 ? 11 : to_size == 4 ? 24 : 53;
  if (from[0] == 'f' && to[0] == 'f')
    return to_size < from_size;
  return from[0] != 'f' && to[0] == 'f' && from_size * 8 > significand;
}

/* Vulkan has no rounding casts yet: the compile says so, and nothing runs.
 * (When it gets them, this fails, and the case runs like the others.) */
static void check_cast_unsupported(const char *text) {
  dmlc_context *ctx = context();
  dmlc_graph *g = NULL;
  ck_assert_int_eq(dmlc_graph_parse(ctx, text, strlen(text), "t.dmlir", &g), DMLC_OK);
  dmlc_executable *exe = NULL;
  const dmlc_status st = dmlc_graph_compile(g, cts_device(), &exe);
  ck_assert_msg(st == DMLC_ERROR_UNSUPPORTED && strstr(dmlc_context_error(ctx), "conversion"),
                "vulkan compiled a rounding cast (status %s: %s): enable it in cts_semantics.c\n%s",
                dmlc_status_string(st), dmlc_context_error(ctx), text);
  ck_assert_ptr_null(exe);
  dmlc_graph_destroy(g);
}

static void check_cast(const cast_case *c, uint32_t from_size, uint32_t to_size) {
  char text[512];
  if (c->via)
    snprintf(text, sizeof text,
             "graph @t(%%x: %s[%u]) -> (%s[%u]) {\n  %%0 = cast %%x : %s[%u]\n"
             "  %%1 = cast %%0 : %s[%u]\n  return %%1\n}\n",
             c->from, c->n, c->to, c->n, c->via, c->n, c->to, c->n);
  else
    snprintf(text, sizeof text,
             "graph @t(%%x: %s[%u]) -> (%s[%u]) {\n  %%0 = cast %%x : %s[%u]\n  return %%0\n}\n",
             c->from, c->n, c->to, c->n, c->to, c->n);
  if (cts_device() == DMLC_DEVICE_VULKAN && !c->via &&
      cast_rounds(c->from, c->to, from_size, to_size)) {
    check_cast_unsupported(text);
    return;
  }
  const uint64_t in_size = ((uint64_t)from_size * c->n + 3) & ~(uint64_t)3;
  const uint64_t out_size = ((uint64_t)to_size * c->n + 3) & ~(uint64_t)3;
  unsigned char *in = calloc(1, in_size), *out = malloc(out_size);
  ck_assert(in && out);
  memcpy(in, c->in, (size_t)from_size * c->n);
  memset(out, SENTINEL, out_size);
  const dmlc_buffer ib = {in, in_size}, ob = {out, out_size};
  run_ir(text, &ib, 1, &ob, 1);
  for (uint32_t k = 0; k < c->n; k++)
    ck_assert_msg(
        memcmp(out + k * to_size, (const unsigned char *)c->want + k * to_size, to_size) == 0,
        "cast %s -> %s%s%s, element %u differs", c->from, c->via ? c->via : "",
        c->via ? " -> " : "", c->to, k);
  for (uint64_t i = (uint64_t)to_size * c->n; i < out_size; i++)
    ck_assert_uint_eq(out[i], SENTINEL);
  free(in);
  free(out);
}

/* Integers to bool (nonzero -> 1) and bool to every type (1 / 0; f16 1.0
 * is 0x3c00). bool stays inside the graph. */
START_TEST(test_ir_cast_bool) {
  const uint8_t u8[4] = {1, 0, 7, 0x80};
  const int8_t i8[4] = {0, -128, 1, -1};
  const uint64_t u64[4] = {0, UINT64_C(1) << 63, 1, UINT64_C(1) << 32};
  const int32_t i32[4] = {INT32_MIN, 0, 65536, -1};
  const float w_f32[4] = {1, 0, 1, 1};
  const uint16_t w_f16[4] = {0x3c00, 0, 0x3c00, 0x3c00};
  const double w_f64[4] = {1, 0, 1, 1};
  const int64_t w_i64[4] = {1, 0, 1, 1};
  const uint8_t w_u8[4] = {1, 0, 1, 1};
  const int32_t w_i32[4] = {1, 0, 1, 1};
  const uint16_t w_u16[4] = {1, 0, 1, 1};
  check_cast(&(cast_case){"u8", "f32", 4, u8, w_f32, "bool"}, 1, 4);
  check_cast(&(cast_case){"u8", "f16", 4, u8, w_f16, "bool"}, 1, 2);
  check_cast(&(cast_case){"u8", "f64", 4, u8, w_f64, "bool"}, 1, 8);
  check_cast(&(cast_case){"u8", "i64", 4, u8, w_i64, "bool"}, 1, 8);
  check_cast(&(cast_case){"u8", "u8", 4, u8, w_u8, "bool"}, 1, 1);
  check_cast(&(cast_case){"u8", "i32", 4, u8, w_i32, "bool"}, 1, 4);
  check_cast(&(cast_case){"u8", "u16", 4, u8, w_u16, "bool"}, 1, 2);
  const uint8_t w_i8[4] = {0, 1, 1, 1}, w_u64[4] = {0, 1, 1, 1}, w_i32b[4] = {1, 0, 1, 1};
  check_cast(&(cast_case){"i8", "u8", 4, i8, w_i8, "bool"}, 1, 1);
  check_cast(&(cast_case){"u64", "u8", 4, u64, w_u64, "bool"}, 8, 1);
  check_cast(&(cast_case){"i32", "u8", 4, i32, w_i32b, "bool"}, 4, 1);
}
END_TEST

START_TEST(test_ir_cast_int_to_int) {
  /* wraps modulo 2^bits */
  const uint32_t u32[4] = {0x12345678u, 0xffffffffu, 0x80u, 0x7fu};
  const int8_t w_i8[4] = {0x78, -1, -128, 127};
  const int64_t i64[3] = {INT64_MIN, -1, 0x1ffff};
  const uint16_t w_u16[3] = {0, 0xffff, 0xffff};
  const int32_t i32[3] = {-1, INT32_MIN, 5};
  const uint64_t w_u64[3] = {UINT64_MAX, UINT64_C(0xffffffff80000000), 5};
  const uint64_t u64[2] = {UINT64_MAX, UINT64_C(1) << 63};
  const int64_t w_i64[2] = {-1, INT64_MIN};
  const uint32_t w_u32_from_i64[3] = {0, 0xffffffffu, 0x1ffff};
  check_cast(&(cast_case){"u32", "i8", 4, u32, w_i8, NULL}, 4, 1);
  check_cast(&(cast_case){"i64", "u16", 3, i64, w_u16, NULL}, 8, 2);
  check_cast(&(cast_case){"i32", "u64", 3, i32, w_u64, NULL}, 4, 8);
  check_cast(&(cast_case){"u64", "i64", 2, u64, w_i64, NULL}, 8, 8);
  check_cast(&(cast_case){"i64", "u32", 3, i64, w_u32_from_i64, NULL}, 8, 4);
}
END_TEST

/* Integers to floats round once, to nearest even, from the exact value. */
START_TEST(test_ir_cast_int_to_float) {
  const int64_t i64[7] = {2049, 2051, 65519, 65520, INT64_MIN, -3, 0};
  const uint16_t w_f16[7] = {0x6800, 0x6802, 0x7bff, 0x7c00, 0xfc00, 0xc200, 0x0000};
  check_cast(&(cast_case){"i64", "f16", 7, i64, w_f16, NULL}, 8, 2);
  const uint64_t u64[4] = {UINT64_MAX, (UINT64_C(1) << 24) + 1, (UINT64_C(1) << 24) + 3,
                           (UINT64_C(1) << 53) + 1};
  const float w_f32[4] = {18446744073709551616.0f, 16777216.0f, 16777220.0f, 9007199254740992.0f};
  check_cast(&(cast_case){"u64", "f32", 4, u64, w_f32, NULL}, 8, 4);
  const int64_t i64b[3] = {(INT64_C(1) << 53) + 1, (INT64_C(1) << 53) + 3, INT64_MAX};
  const double w_f64[3] = {9007199254740992.0, 9007199254740996.0, 9223372036854775808.0};
  check_cast(&(cast_case){"i64", "f64", 3, i64b, w_f64, NULL}, 8, 8);
  /* near and at ties, where f16's spacing is 4 */
  const uint32_t u32[4] = {4097, 4099, 4098, 4102};
  const uint16_t w_f16b[4] = {0x6c00, 0x6c01, 0x6c00, 0x6c02};
  check_cast(&(cast_case){"u32", "f16", 4, u32, w_f16b, NULL}, 4, 2);
  const int8_t i8[2] = {-128, 127};
  const float w_i8f[2] = {-128, 127};
  check_cast(&(cast_case){"i8", "f32", 2, i8, w_i8f, NULL}, 1, 4);
}
END_TEST

/* Floats to floats round once, to nearest even; f64 -> f16 must not round
 * through f32. */
START_TEST(test_ir_cast_float_to_float) {
  const double f64[6] = {1.0 + 0x1p-11 + 0x1p-40, 1.0 + 0x1p-11, 65519.99, 65520.0, 0x1p-25,
                         0x1p-25 + 0x1p-60};
  const uint16_t w_f16[6] = {0x3c01, 0x3c00, 0x7bff, 0x7c00, 0x0000, 0x0001};
  check_cast(&(cast_case){"f64", "f16", 6, f64, w_f16, NULL}, 8, 2);
  const float f32[5] = {1.0f + 0x1p-11f, 1.0f + 0x1p-11f + 0x1p-23f, -65520.0f, 0x1p-24f, NAN};
  const uint16_t w_f16b[5] = {0x3c00, 0x3c01, 0xfc00, 0x0001, 0x7e00};
  check_cast(&(cast_case){"f32", "f16", 5, f32, w_f16b, NULL}, 4, 2);
  const uint16_t f16[4] = {0x0001, 0x7bff, 0xfc00, 0x8000};
  const float w_f32[4] = {0x1p-24f, 65504.0f, -INFINITY, -0.0f};
  check_cast(&(cast_case){"f16", "f32", 4, f16, w_f32, NULL}, 2, 4);
  const double w_f64[4] = {0x1p-24, 65504.0, -INFINITY, -0.0};
  check_cast(&(cast_case){"f16", "f64", 4, f16, w_f64, NULL}, 2, 8);
  const double f64b[3] = {1.0 + 0x1p-24, 1.0 + 0x1p-24 + 0x1p-50, 1e300};
  const float w_f32b[3] = {1.0f, 1.0f + 0x1p-23f, INFINITY};
  check_cast(&(cast_case){"f64", "f32", 3, f64b, w_f32b, NULL}, 8, 4);
  const float f32b[2] = {0.1f, -0.0f};
  const double w_f64b[2] = {(double)0.1f, -0.0};
  check_cast(&(cast_case){"f32", "f64", 2, f32b, w_f64b, NULL}, 4, 8);
}
END_TEST

START_TEST(test_ir_constant) {
  const char *text = "graph @t(%x: f32[1]) -> (i8[3], u8[2], f16[4], f32[1], u8[3], u64[1], "
                     "f64[1], i64[1]) {\n"
                     "  %0 = constant {value = -128} : i8[3]\n"
                     "  %1 = constant {value = 255} : u8[2]\n"
                     "  %2 = constant {value = 1} : f16[4]\n"
                     "  %3 = constant {value = 9223372036854775807} : f32[1]\n"
                     "  %4 = constant {value = 1} : bool[3]\n"
                     "  %5 = cast %4 : u8[3]\n"
                     "  %6 = constant {value = 9223372036854775807} : u64[1]\n"
                     "  %7 = constant {value = -9223372036854775807} : f64[1]\n"
                     "  %8 = constant {value = 2049} : f16[1]\n"
                     "  %9 = constant {value = -9223372036854775807} : i64[1]\n"
                     "  return %0, %1, %2, %3, %5, %6, %7, %9\n"
                     "}\n";
  float x = 0;
  int8_t o0[4];
  uint8_t o1[4], o5[4];
  uint16_t o2[4];
  float o3;
  uint64_t o6;
  double o7;
  int64_t o9;
  const dmlc_buffer ib = {&x, sizeof x};
  const dmlc_buffer ob[8] = {{o0, 4}, {o1, 4},  {o2, 8},  {&o3, 4},
                             {o5, 4}, {&o6, 8}, {&o7, 8}, {&o9, 8}};
  run_ir(text, &ib, 1, ob, 8);
  ck_assert(o0[0] == -128 && o0[1] == -128 && o0[2] == -128);
  ck_assert(o1[0] == 255 && o1[1] == 255);
  for (int i = 0; i < 4; i++)
    ck_assert_uint_eq(o2[i], 0x3c00);
  ck_assert(o3 == 9223372036854775808.0f);
  ck_assert(o5[0] == 1 && o5[1] == 1 && o5[2] == 1);
  ck_assert(o6 == (uint64_t)INT64_MAX);
  ck_assert(o7 == -9223372036854775808.0);
  ck_assert(o9 == -INT64_MAX);
}
END_TEST

/* A constant of f16 rounds once from the i64 value; one that does not
 * reach an output is still evaluated (and must not disturb the rest). */
START_TEST(test_ir_constant_f16) {
  const char *text = "graph @t(%x: f32[1]) -> (f16[4]) {\n"
                     "  %0 = constant {value = 2049} : f16[4]\n"
                     "  %1 = constant {value = 65520} : f16[4]\n"
                     "  return %0\n"
                     "}\n";
  const char *text2 = "graph @t(%x: f32[1]) -> (f16[2], f16[2]) {\n"
                      "  %0 = constant {value = 65520} : f16[2]\n"
                      "  %1 = constant {value = -2051} : f16[2]\n"
                      "  return %0, %1\n"
                      "}\n";
  float x = 0;
  uint16_t o[4], a[2], b[2];
  const dmlc_buffer ib = {&x, sizeof x}, ob = {o, sizeof o};
  run_ir(text, &ib, 1, &ob, 1);
  for (int i = 0; i < 4; i++)
    ck_assert_uint_eq(o[i], 0x6800);
  const dmlc_buffer ob2[2] = {{a, sizeof a}, {b, sizeof b}};
  run_ir(text2, &ib, 1, ob2, 2);
  ck_assert(a[0] == 0x7c00 && a[1] == 0x7c00);
  ck_assert(b[0] == 0xe802 && b[1] == 0xe802);
}
END_TEST

/* hardmax as a node equals its lowering, and both go through strided graph
 * inputs and outputs. */
START_TEST(test_ir_hardmax_lowered) {
  const char *text =
      "graph @t(%x: f32[2,2,2]{strides = [1, 8, 2]}) -> (f32[2,2,2]{strides = [4, 2, 1]}, "
      "f32[2,2,2]{strides = [16, 8, 1]}, u32[1,2,1]) {\n"
      "  %0 = hardmax %x {axes = [0, 2]} : f32[2,2,2]\n"
      "  %1 = argmax %x {axes = [2, 0], direction = increasing} : u32[1,2,1]\n"
      "  %2 = broadcast %1 : u32[2,2,2]\n"
      "  %3 = reduced_index {axes = [0, 2]} : u32[2,2,2]\n"
      "  %4 = eq %2, %3 : bool[2,2,2]\n"
      "  %5 = cast %4 : f32[2,2,2]\n"
      "  return %0, %5, %1\n"
      "}\n";
  /* logical x[a][b][c] = hardmax_input[a*4+b*2+c] at offset a + 8b + 2c */
  float in[12];
  for (int i = 0; i < 12; i++)
    in[i] = 1e9f; /* gaps would win */
  for (uint32_t a = 0; a < 2; a++)
    for (uint32_t b = 0; b < 2; b++)
      for (uint32_t c = 0; c < 2; c++)
        in[a + 8 * b + 2 * c] = hardmax_input[a * 4 + b * 2 + c];
  float o0[8], o1[26];
  uint32_t o2[2];
  for (int i = 0; i < 26; i++)
    o1[i] = -7.0f;
  const dmlc_buffer ib = {in, sizeof in};
  const dmlc_buffer ob[3] = {{o0, sizeof o0}, {o1, sizeof o1}, {o2, sizeof o2}};
  run_ir(text, &ib, 1, ob, 3);
  expect_floats(o0, hardmax_examples[2].want, 8, "hardmax node");
  for (uint32_t a = 0; a < 2; a++)
    for (uint32_t b = 0; b < 2; b++)
      for (uint32_t c = 0; c < 2; c++)
        ck_assert(o1[16 * a + 8 * b + c] == hardmax_examples[2].want[a * 4 + b * 2 + c]);
  for (uint32_t i = 0; i < 26; i++) /* elements sit at 16a + 8b + c */
    if (i % 8 > 1)
      ck_assert_msg(o1[i] == -7.0f, "gap %u of the strided output was written", i);
  ck_assert_uint_eq(o2[0], 3); /* 234 at (1,0,1): 1*2 + 1 */
  ck_assert_uint_eq(o2[1], 1); /* 11 at (0,1,1) */
}
END_TEST

/* argmax / argmin written as IR, on a broadcast input and into a padded
 * output. */
START_TEST(test_ir_argmax) {
  const char *text =
      "graph @t(%x: u64[3,4]{strides = [0, 1]}, %y: i8[2,3]) -> (u64[3,1]{strides = [2, 1]}, "
      "i32[1,1], u32[2,1]) {\n"
      "  %0 = argmax %x {axes = [1], direction = decreasing} : u64[3,1]\n"
      "  %1 = argmin %y {axes = [1, 0], direction = decreasing} : i32[1,1]\n"
      "  %2 = argmax %y {axes = [1]} : u32[2,1]\n"
      "  return %0, %1, %2\n"
      "}\n";
  const uint64_t x[4] = {UINT64_MAX, UINT64_MAX - 1, 1, UINT64_MAX};
  const int8_t y[8] = {-128, 127, -128, 127, 0, -1};
  uint64_t o0[5];
  int32_t o1;
  uint32_t o2[2];
  for (int i = 0; i < 5; i++)
    o0[i] = 77;
  const dmlc_buffer ib[2] = {{(void *)x, sizeof x}, {(void *)y, sizeof y}};
  const dmlc_buffer ob[3] = {{o0, sizeof o0}, {&o1, 4}, {o2, sizeof o2}};
  run_ir(text, ib, 2, ob, 3);
  ck_assert(o0[0] == 3 && o0[1] == 77 && o0[2] == 3 && o0[3] == 77 && o0[4] == 3);
  ck_assert_int_eq(o1, 2);
  ck_assert(o2[0] == 1 && o2[1] == 0);
}
END_TEST

/* ---- errors ---- */

START_TEST(test_small_buffer_rejected) {
  static const uint32_t axes[] = {0};
  tensor ti, to;
  tensor_init(&ti, DML_TENSOR_DATA_TYPE_FLOAT32, 2, sizes_3x3, NULL);
  const uint32_t out_sizes[] = {1, 3};
  tensor_init(&to, DML_TENSOR_DATA_TYPE_UINT32, 2, out_sizes, NULL);
  DML_ARGMAX_OPERATOR_DESC arg = {&ti.desc, &to.desc, 1, axes, DML_AXIS_DIRECTION_INCREASING};
  const DML_OPERATOR_DESC op = {DML_OPERATOR_ARGMAX, &arg};
  dmlc_context *ctx;
  ck_assert_int_eq(dmlc_context_create(&ctx), DMLC_OK);
  dmlc_executable *exe = NULL;
  ck_assert_int_eq(dmlc_operator_compile(ctx, &op, cts_device(), &exe), DMLC_OK);
  float in[9];
  uint32_t out[3] = {5, 5, 5};
  memcpy(in, seed_3x3, sizeof in);
  const dmlc_buffer ib = {in, sizeof in}, small = {out, 8};
  ck_assert_int_ne(dmlc_execute(exe, &ib, 1, &small, 1), DMLC_OK);
  ck_assert(out[0] == 5 && out[1] == 5 && out[2] == 5);
  ck_assert_str_ne(dmlc_context_error(ctx), "");
  dmlc_executable_destroy(exe);
  dmlc_context_destroy(ctx);
}
END_TEST

void cts_add_semantics_cases(Suite *s, dmlc_device device) {
  TCase *tc = cts_tcase_create("semantics_argmax");
  cts_add_loop(tc, test_seed_examples, 0, (int)(sizeof seed_examples / sizeof seed_examples[0]));
  tcase_add_test(tc, test_tie_examples);
  cts_add_loop(tc, test_special_values_f32, 0,
               (int)(sizeof special_cases / sizeof special_cases[0]));
  cts_add_loop(tc, test_special_values_f16, 0,
               (int)(sizeof special_cases / sizeof special_cases[0]));
  tcase_add_test(tc, test_f16_bit_patterns);
  cts_add_loop(tc, test_type_matrix, 0, 40);
  cts_add_loop(tc, test_type_matrix_3d, 0, 40);
  tcase_add_test(tc, test_rank8);
  tcase_add_test(tc, test_random_against_brute_force);
  suite_add_tcase(s, tc);

  tc = cts_tcase_create("semantics_layouts");
  tcase_add_test(tc, test_strided_inputs);
  tcase_add_test(tc, test_broadcast_inputs);
  tcase_add_test(tc, test_strided_outputs);
  tcase_add_test(tc, test_small_buffer_rejected);
  suite_add_tcase(s, tc);

  tc = cts_tcase_create("semantics_hardmax");
  cts_add_loop(tc, test_hardmax_examples, 0,
               (int)(sizeof hardmax_examples / sizeof hardmax_examples[0]));
  tcase_add_test(tc, test_hardmax_special);
  tcase_add_test(tc, test_hardmax_rank8);
  suite_add_tcase(s, tc);

  /* Lowered ops the code generators have patterns for. */
  tc = cts_tcase_create("semantics_lowered");
  tcase_add_test(tc, test_ir_reshape);
  tcase_add_test(tc, test_ir_cast_int_to_int);
  tcase_add_test(tc, test_ir_cast_int_to_float);
  tcase_add_test(tc, test_ir_cast_float_to_float);
  tcase_add_test(tc, test_ir_constant);
  tcase_add_test(tc, test_ir_constant_f16);
  tcase_add_test(tc, test_ir_hardmax_lowered);
  tcase_add_test(tc, test_ir_argmax);
  suite_add_tcase(s, tc);

  /* Primitives alone, in combinations fuse never produces: the reference
   * evaluator's own semantics (the code generators reject them). */
  if (device != DMLC_DEVICE_REFERENCE)
    return;
  tc = cts_tcase_create("semantics_primitives");
  tcase_add_test(tc, test_ir_broadcast);
  tcase_add_test(tc, test_ir_reduced_index);
  tcase_add_test(tc, test_ir_eq);
  tcase_add_test(tc, test_ir_cast_bool);
  suite_add_tcase(s, tc);
}
