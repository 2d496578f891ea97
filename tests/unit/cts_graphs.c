/* The conformance suite's graphs (cts.h): graphs parsed from IR text and
 * built from DML descriptors, compiled for the device under test and for
 * the reference device, executed with host buffers of the same seeded
 * contents, and compared byte for byte, whole buffers: the gaps of strided
 * and padded outputs must keep the sentinel they were filled with, as the
 * reference leaves them. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cts.h"

/* Small enough for lavapipe under the validation layer, large enough to
 * reach every code path: multiple outputs, padded and permuted strides,
 * broadcast (zero-stride) inputs, every input and index type, rank 8, long
 * reductions, a shared reduction with lowered ops after it. The inputs
 * (cts_fill) are full of ties, NaN, +-0 and integer extremes. */
static const char *const graphs[] = {
    /* several operators on one input */
    "graph @multi(%x: f32[4,6]) -> (%idx: u32[4,1], %lo: i64[1,6], %hard: f32[4,6]) {\n"
    "  %0 = argmax %x {axes = [1]} : u32[4,1]\n"
    "  %1 = argmin %x {axes = [0], direction = decreasing} : i64[1,6]\n"
    "  %2 = hardmax %x {axes = [1]} : f32[4,6]\n"
    "  return %0, %1, %2\n"
    "}\n",
    /* a padded input; outputs with gaps, permuted, and a buffer larger than
     * its elements need */
    "graph @padded(%x: f16[3,4,5]{strides = [48, 12, 2]}) -> (%idx: u64[1,4,1]{strides = [16, "
    "3, 1]}, %hard: f16[3,4,5]{strides = [1, 16, 3]}, %lo: i32[3,4,1]{strides = [10, 2, 1], "
    "size = 128}) {\n"
    "  %0 = argmax %x {axes = [2, 0]} : u64[1,4,1]\n"
    "  %1 = hardmax %x {axes = [2]} : f16[3,4,5]\n"
    "  %2 = argmin %x {axes = [2]} : i32[3,4,1]\n"
    "  return %0, %1, %2\n"
    "}\n",
    /* broadcast inputs: every element of a zero-stride axis ties */
    "graph @broadcast(%x: i8[4,5]{strides = [0, 1]}, %y: u16[3,2,4]{strides = [0, 0, 1]}, %z: "
    "f32[3,3]{strides = [0, 0]}) -> (%a: u32[4,1], %b: i64[1,5], %c: u32[3,2,1], %d: f32[3,3], "
    "%e: i32[1,1,1]) {\n"
    "  %0 = argmax %x {axes = [1]} : u32[4,1]\n"
    "  %1 = argmin %x {axes = [0], direction = decreasing} : i64[1,5]\n"
    "  %2 = argmax %y {axes = [2], direction = decreasing} : u32[3,2,1]\n"
    "  %3 = hardmax %z {axes = [0, 1]} : f32[3,3]\n"
    "  %4 = argmin %y {axes = [0, 1, 2]} : i32[1,1,1]\n"
    "  return %0, %1, %2, %3, %4\n"
    "}\n",
    /* broadcast dims the plan takes apart (kernel_desc.c): kept ones
     * computed once and copied out (index and one-hot outputs of one
     * reduction), every reduced one broadcast (a constant, both
     * directions), outer reduced ones dropped (increasing) or kept
     * (decreasing) */
    "graph @broadcast_plan(%x: f32[6,5,7,9]{strides = [63, 0, 9, 1]}, %y: f16[4,3,5]{strides = "
    "[0, 5, 1]}, %z: i8[3,4,6]{strides = [6, 0, 0]}, %w: u16[5,6,7]{strides = [0, 7, 1]}) -> "
    "(%a: f32[6,5,7,9], %b: u32[1,5,7,1], %c: i64[4,3,1]{strides = [1, 4, 1]}, %d: u32[1,1,5], "
    "%e: i64[3,1,1], %f: u32[3,1,1], %g: u32[1,1,7], %h: u32[1,1,7]) {\n"
    "  %0 = hardmax %x {axes = [0, 3]} : f32[6,5,7,9]\n"
    "  %1 = argmax %x {axes = [0, 3]} : u32[1,5,7,1]\n"
    "  %2 = argmin %y {axes = [2], direction = decreasing} : i64[4,3,1]\n"
    "  %3 = argmax %y {axes = [0, 1]} : u32[1,1,5]\n"
    "  %4 = argmax %z {axes = [1, 2], direction = decreasing} : i64[3,1,1]\n"
    "  %5 = argmin %z {axes = [1, 2]} : u32[3,1,1]\n"
    "  %6 = argmax %w {axes = [0, 1]} : u32[1,1,7]\n"
    "  %7 = argmin %w {axes = [0, 1], direction = decreasing} : u32[1,1,7]\n"
    "  return %0, %1, %2, %3, %4, %5, %6, %7\n"
    "}\n",
    /* ties and NaN in both directions, f32 and f16 */
    "graph @ties(%x: f32[6,16], %h: f16[16,6]) -> (u32[6,1], u32[6,1], u64[6,1], u64[6,1], "
    "f32[6,16], f16[16,6], i32[1,6]) {\n"
    "  %0 = argmax %x {axes = [1]} : u32[6,1]\n"
    "  %1 = argmax %x {axes = [1], direction = decreasing} : u32[6,1]\n"
    "  %2 = argmin %x {axes = [1]} : u64[6,1]\n"
    "  %3 = argmin %x {axes = [1], direction = decreasing} : u64[6,1]\n"
    "  %4 = hardmax %x {axes = [0]} : f32[6,16]\n"
    "  %5 = hardmax %h {axes = [0]} : f16[16,6]\n"
    "  %6 = argmax %h {axes = [0], direction = decreasing} : i32[1,6]\n"
    "  return %0, %1, %2, %3, %4, %5, %6\n"
    "}\n",
    /* every integer input type, every index type */
    "graph @ints(%a: i64[5,7], %b: u64[5,7], %c: i16[2,3,4], %d: u8[9], %e: i32[2,5], %f: "
    "u32[4], %g: i8[3,3], %k: u16[2,8]) -> (u32[5,1], i64[1,7], u64[2,1,4], i32[1], u32[1,1], "
    "i64[1], u64[3,1], i32[2,1]) {\n"
    "  %0 = argmax %a {axes = [1]} : u32[5,1]\n"
    "  %1 = argmin %b {axes = [0]} : i64[1,7]\n"
    "  %2 = argmax %c {axes = [1], direction = decreasing} : u64[2,1,4]\n"
    "  %3 = argmin %d {axes = [0], direction = decreasing} : i32[1]\n"
    "  %4 = argmax %e {axes = [0, 1]} : u32[1,1]\n"
    "  %5 = argmin %f {axes = [0]} : i64[1]\n"
    "  %6 = argmax %g {axes = [1]} : u64[3,1]\n"
    "  %7 = argmin %k {axes = [1]} : i32[2,1]\n"
    "  return %0, %1, %2, %3, %4, %5, %6, %7\n"
    "}\n",
    /* rank 8, axes out of order */
    "graph @rank8(%x: f32[2,3,1,2,2,1,3,2]) -> (u32[2,1,1,1,2,1,1,2], f32[2,3,1,2,2,1,3,2]) {\n"
    "  %0 = argmax %x {axes = [6, 1, 3]} : u32[2,1,1,1,2,1,1,2]\n"
    "  %1 = hardmax %x {axes = [7, 2, 5]} : f32[2,3,1,2,2,1,3,2]\n"
    "  return %0, %1\n"
    "}\n",
    /* long reductions, along rows and down columns */
    "graph @long(%x: f32[4,1000], %y: f32[600,3], %h: f16[2,700]) -> (u32[4,1], i64[1,3], "
    "f16[2,700]) {\n"
    "  %0 = argmax %x {axes = [1]} : u32[4,1]\n"
    "  %1 = argmin %y {axes = [0]} : i64[1,3]\n"
    "  %2 = hardmax %h {axes = [1]} : f16[2,700]\n"
    "  return %0, %1, %2\n"
    "}\n",
    /* issue 12's layouts: non-adjacent reduced axes (the innermost kept,
     * then the innermost reduced), channel argmax over NCHW (u8, f16) and
     * NHWC (u8: short packed rows), narrow types over several axes, short
     * rows down columns, a column-major input (read in storage order) */
    "graph @layouts(%a: f32[4,8,5,12], %b: u8[2,3,16,20], %c: f16[2,5,9,33]) -> "
    "(u32[1,8,1,12], i64[4,1,5,1], u32[2,1,16,20], i64[2,1,9,33], f16[2,5,9,33]) {\n"
    "  %0 = argmin %a {axes = [0, 2]} : u32[1,8,1,12]\n"
    "  %1 = argmax %a {axes = [1, 3], direction = decreasing} : i64[4,1,5,1]\n"
    "  %2 = argmax %b {axes = [1]} : u32[2,1,16,20]\n"
    "  %3 = argmin %c {axes = [1]} : i64[2,1,9,33]\n"
    "  %4 = hardmax %c {axes = [1]} : f16[2,5,9,33]\n"
    "  return %0, %1, %2, %3, %4\n"
    "}\n",
    "graph @layouts2(%d: u8[4,7,3], %e: i8[5,4,6], %f: u16[3,40,3], "
    "%g: f32[12,8]{strides = [1, 12]}) -> (u32[4,7,1], u32[1,4,1], u32[3,1,3], u32[12,1]) {\n"
    "  %0 = argmax %d {axes = [2]} : u32[4,7,1]\n"
    "  %1 = argmax %e {axes = [0, 2]} : u32[1,4,1]\n"
    "  %2 = argmin %f {axes = [1]} : u32[3,1,3]\n"
    "  %3 = argmax %g {axes = [1]} : u32[12,1]\n"
    "  return %0, %1, %2, %3\n"
    "}\n",
    /* a hardmax and an argmax sharing one reduction, the index reshaped
     * and widened after it */
    "graph @shared(%x: f32[3,8]) -> (%hard: f32[3,8], %idx: u32[3,1], %wide: i64[3]) {\n"
    "  %0 = hardmax %x {axes = [1]} : f32[3,8]\n"
    "  %1 = argmax %x {axes = [1]} : u32[3,1]\n"
    "  %2 = reshape %1 : u32[3]\n"
    "  %3 = cast %2 : i64[3]\n"
    "  return %0, %1, %3\n"
    "}\n",
};

size_t cts_graph_count(void) { return sizeof graphs / sizeof graphs[0]; }

const char *cts_graph_text(size_t index) {
  ck_assert_uint_lt(index, cts_graph_count());
  return graphs[index];
}

/* The device describes every binding as the reference does. */
static void expect_same_info(const dmlc_tensor_info *got, const dmlc_tensor_info *want,
                             const char *kind, size_t index) {
  ck_assert_msg(strcmp(got->name, want->name) == 0, "%s %zu is named '%s', expected '%s'", kind,
                index, got->name, want->name);
  ck_assert_int_eq(got->data_type, want->data_type);
  ck_assert_uint_eq(got->dimension_count, want->dimension_count);
  for (uint32_t d = 0; d < want->dimension_count; d++) {
    ck_assert_uint_eq(got->sizes[d], want->sizes[d]);
    ck_assert_uint_eq(got->strides[d], want->strides[d]);
  }
  ck_assert_uint_eq(got->total_size_bytes, want->total_size_bytes);
  ck_assert_uint_eq(got->alignment, want->alignment);
}

static void expect_same_bindings(const dmlc_executable *exe, const dmlc_executable *ref) {
  ck_assert_uint_eq(dmlc_executable_input_count(exe), dmlc_executable_input_count(ref));
  ck_assert_uint_eq(dmlc_executable_output_count(exe), dmlc_executable_output_count(ref));
  dmlc_tensor_info got, want;
  for (size_t i = 0; i < dmlc_executable_input_count(ref); i++) {
    ck_assert_int_eq(dmlc_executable_input_info(exe, i, &got), DMLC_OK);
    ck_assert_int_eq(dmlc_executable_input_info(ref, i, &want), DMLC_OK);
    expect_same_info(&got, &want, "input", i);
  }
  for (size_t i = 0; i < dmlc_executable_output_count(ref); i++) {
    ck_assert_int_eq(dmlc_executable_output_info(exe, i, &got), DMLC_OK);
    ck_assert_int_eq(dmlc_executable_output_info(ref, i, &want), DMLC_OK);
    expect_same_info(&got, &want, "output", i);
  }
}

void cts_expect_matches_reference(dmlc_executable *exe, dmlc_executable *ref, uint64_t seed,
                                  const char *what) {
  dmlc_context *ctx = cts_context();
  cts_buffers got, want;
  cts_buffers_make(exe, seed, &got);
  cts_buffers_clone(&got, &want);
  CTS_CHECK(ctx, dmlc_execute(exe, got.inputs, got.num_inputs, got.outputs, got.num_outputs),
            "execute");
  CTS_CHECK(ctx, dmlc_execute(ref, want.inputs, want.num_inputs, want.outputs, want.num_outputs),
            "execute on the reference");
  char label[256];
  for (size_t i = 0; i < got.num_inputs; i++) {
    snprintf(label, sizeof label, "%s, seed %llu: input %zu (inputs are never written)", what,
             (unsigned long long)seed, i);
    cts_expect_bytes(got.inputs[i].data, want.inputs[i].data, got.inputs[i].size_bytes, label);
  }
  for (size_t i = 0; i < got.num_outputs; i++) {
    snprintf(label, sizeof label, "%s, seed %llu: output %zu", what, (unsigned long long)seed, i);
    cts_expect_bytes(got.outputs[i].data, want.outputs[i].data, got.outputs[i].size_bytes, label);
  }
  cts_buffers_free(&got);
  cts_buffers_free(&want);
}

/* Each graph, on two inputs in turn through the same executable. */
START_TEST(test_ir_graph_matches_reference) {
  dmlc_context *ctx = cts_context();
  const char *text = cts_graph_text((size_t)_i);
  dmlc_executable *exe = cts_compile_ir(ctx, text, cts_device());
  dmlc_executable *ref = cts_compile_ir(ctx, text, DMLC_DEVICE_REFERENCE);
  expect_same_bindings(exe, ref);
  char what[64];
  snprintf(what, sizeof what, "graph %d", _i);
  for (uint64_t seed = 1; seed <= 2; seed++)
    cts_expect_matches_reference(exe, ref, seed, what);
  /* Kernel times answer on every device (how many is the device's own
   * business). */
  double ns[16];
  size_t count = 99;
  CTS_CHECK(ctx, dmlc_executable_kernel_times(exe, ns, 16, &count), "kernel times");
  ck_assert_uint_ne(count, 99);
  dmlc_executable_destroy(exe);
  dmlc_executable_destroy(ref);
}
END_TEST

/* ---- graphs built from DML descriptors ---- */

typedef struct desc_tensor {
  DML_BUFFER_TENSOR_DESC buf;
  DML_TENSOR_DESC desc;
  uint32_t sizes[DMLC_MAX_RANK], strides[DMLC_MAX_RANK];
} desc_tensor;

/* strides NULL: packed. t must not move afterwards. */
static void desc_tensor_init(desc_tensor *t, DML_TENSOR_DATA_TYPE type, uint32_t rank,
                             const uint32_t *sizes, const uint32_t *strides) {
  memset(t, 0, sizeof *t);
  memcpy(t->sizes, sizes, rank * sizeof *sizes);
  uint64_t last = 0, packed = 1;
  for (uint32_t d = rank; d-- > 0;) {
    t->strides[d] = strides ? strides[d] : (uint32_t)packed;
    packed *= sizes[d];
    last += (uint64_t)(sizes[d] - 1) * t->strides[d];
  }
  t->buf.DataType = type;
  t->buf.DimensionCount = rank;
  t->buf.Sizes = t->sizes;
  t->buf.Strides = strides ? t->strides : NULL;
  t->buf.TotalTensorSizeInBytes = ((last + 1) * dmlc_data_type_size(type) + 3) & ~(uint64_t)3;
  t->desc.Type = DML_TENSOR_TYPE_BUFFER;
  t->desc.Desc = &t->buf;
}

/* One input (padded, transposed) and four operators on it, with outputs
 * (one of them padded). Initialized in place: it must not move. */
typedef struct descriptor_ops {
  desc_tensor x, idx, hard, lo, legacy;
  DML_ARGMAX_OPERATOR_DESC argmax;
  DML_ACTIVATION_HARDMAX1_OPERATOR_DESC hardmax;
  DML_REDUCE_OPERATOR_DESC argmin;
  DML_ACTIVATION_HARDMAX_OPERATOR_DESC hardmax_last;
  DML_OPERATOR_DESC ops[4];
} descriptor_ops;

enum { NUM_DESCRIPTOR_OPS = 4 };

static void descriptor_ops_init(descriptor_ops *d) {
  static const uint32_t sizes[] = {3, 4, 5}, in_strides[] = {1, 15, 3};
  static const uint32_t idx_sizes[] = {1, 4, 1}, idx_strides[] = {8, 2, 1};
  static const uint32_t lo_sizes[] = {3, 4, 1}, axes_20[] = {2, 0}, axes_1[] = {1}, axes_2[] = {2};
  desc_tensor_init(&d->x, DML_TENSOR_DATA_TYPE_FLOAT32, 3, sizes, in_strides);
  desc_tensor_init(&d->idx, DML_TENSOR_DATA_TYPE_UINT32, 3, idx_sizes, idx_strides);
  desc_tensor_init(&d->hard, DML_TENSOR_DATA_TYPE_FLOAT32, 3, sizes, NULL);
  desc_tensor_init(&d->lo, DML_TENSOR_DATA_TYPE_INT64, 3, lo_sizes, NULL);
  desc_tensor_init(&d->legacy, DML_TENSOR_DATA_TYPE_FLOAT32, 3, sizes, NULL);
  d->argmax = (DML_ARGMAX_OPERATOR_DESC){&d->x.desc, &d->idx.desc, 2, axes_20,
                                         DML_AXIS_DIRECTION_DECREASING};
  d->hardmax = (DML_ACTIVATION_HARDMAX1_OPERATOR_DESC){&d->x.desc, &d->hard.desc, 1, axes_1};
  d->argmin =
      (DML_REDUCE_OPERATOR_DESC){DML_REDUCE_FUNCTION_ARGMIN, &d->x.desc, &d->lo.desc, 1, axes_2};
  d->hardmax_last = (DML_ACTIVATION_HARDMAX_OPERATOR_DESC){&d->x.desc, &d->legacy.desc};
  d->ops[0] = (DML_OPERATOR_DESC){DML_OPERATOR_ARGMAX, &d->argmax};
  d->ops[1] = (DML_OPERATOR_DESC){DML_OPERATOR_ACTIVATION_HARDMAX1, &d->hardmax};
  d->ops[2] = (DML_OPERATOR_DESC){DML_OPERATOR_REDUCE, &d->argmin};
  d->ops[3] = (DML_OPERATOR_DESC){DML_OPERATOR_ACTIVATION_HARDMAX, &d->hardmax_last};
}

/* Adds operators [first, end) of d on input in, each with an output. */
static void add_descriptor_ops(dmlc_context *ctx, dmlc_graph *g, const descriptor_ops *d,
                               dmlc_value in, size_t first, size_t end) {
  static const char *const names[] = {"idx", "hard", "lo", "legacy"};
  for (size_t k = first; k < end; k++) {
    dmlc_value out;
    CTS_CHECK(ctx, dmlc_graph_add_operator(g, &d->ops[k], &in, 1, &out, 1), "add operator");
    CTS_CHECK(ctx, dmlc_graph_add_output(g, names[k], out), "add output");
  }
}

/* A graph named name with d's input x (its value in *in), initializing d. */
static dmlc_graph *descriptor_graph_begin(dmlc_context *ctx, const char *name, descriptor_ops *d,
                                          dmlc_value *in) {
  descriptor_ops_init(d);
  dmlc_graph *g = NULL;
  CTS_CHECK(ctx, dmlc_graph_create(ctx, name, &g), "graph create");
  CTS_CHECK(ctx, dmlc_graph_add_input(g, "x", &d->x.desc, in), "add input");
  return g;
}

static dmlc_graph *build_descriptor_graph(dmlc_context *ctx) {
  descriptor_ops d;
  dmlc_value in;
  dmlc_graph *g = descriptor_graph_begin(ctx, "descriptors", &d, &in);
  add_descriptor_ops(ctx, g, &d, in, 0, NUM_DESCRIPTOR_OPS);
  CTS_CHECK(ctx, dmlc_graph_verify(g), "verify");
  return g;
}

/* Compiles g for the device and the reference (into *ref) and compares
 * them. */
static dmlc_executable *expect_graph_matches(dmlc_context *ctx, dmlc_graph *g, uint32_t outputs,
                                             const char *what, dmlc_executable **ref_out) {
  dmlc_executable *exe = NULL, *ref = NULL;
  CTS_CHECK(ctx, dmlc_graph_compile(g, cts_device(), &exe), "compile");
  CTS_CHECK(ctx, dmlc_graph_compile(g, DMLC_DEVICE_REFERENCE, &ref), "compile on the reference");
  ck_assert_uint_eq(dmlc_executable_output_count(exe), outputs);
  expect_same_bindings(exe, ref);
  cts_expect_matches_reference(exe, ref, 7, what);
  *ref_out = ref;
  return exe;
}

/* A compile remembers the graph's plan for the next one: every change to
 * the graph after a compile (an operator, an output, passes run on it)
 * must show in the next compile, and executables compiled before the
 * change keep what they had. */
START_TEST(test_graph_changed_after_compile) {
  dmlc_context *ctx = cts_context();
  descriptor_ops d;
  dmlc_value in;
  dmlc_graph *g = descriptor_graph_begin(ctx, "growing", &d, &in);
  static const char *const what[] = {"one operator", "one operator, compiled again",
                                     "three operators", "an output added",
                                     "after the default pipeline"};
  static const uint32_t outputs[] = {1, 1, 3, 4, 4};
  enum { STEPS = sizeof outputs / sizeof outputs[0] };
  dmlc_executable *exes[STEPS], *refs[STEPS];
  for (int step = 0; step < STEPS; step++) {
    if (step == 0)
      add_descriptor_ops(ctx, g, &d, in, 0, 1);
    else if (step == 2)
      add_descriptor_ops(ctx, g, &d, in, 1, 3);
    else if (step == 3) /* the first operator's value again, under a new name */
      CTS_CHECK(ctx, dmlc_graph_add_output(g, "idx_again", 1), "add output");
    else if (step == 4)
      CTS_CHECK(ctx, dmlc_graph_run_passes(g, dmlc_default_pipeline(), NULL), "passes");
    exes[step] = expect_graph_matches(ctx, g, outputs[step], what[step], &refs[step]);
  }
  dmlc_graph_destroy(g); /* executables outlive the graph and its plan */
  for (int step = 0; step < STEPS; step++) {
    ck_assert_uint_eq(dmlc_executable_output_count(exes[step]), outputs[step]);
    cts_expect_matches_reference(exes[step], refs[step], 11, what[step]);
    dmlc_executable_destroy(exes[step]);
    dmlc_executable_destroy(refs[step]);
  }
}
END_TEST

START_TEST(test_descriptor_graph_matches_reference) {
  dmlc_context *ctx = cts_context();
  dmlc_graph *g = build_descriptor_graph(ctx);
  dmlc_executable *exe = NULL, *ref = NULL;
  CTS_CHECK(ctx, dmlc_graph_compile(g, cts_device(), &exe), "compile");
  CTS_CHECK(ctx, dmlc_graph_compile(g, DMLC_DEVICE_REFERENCE, &ref), "compile on the reference");
  dmlc_graph_destroy(g); /* executables outlive their graph */
  expect_same_bindings(exe, ref);
  for (uint64_t seed = 3; seed <= 5; seed++)
    cts_expect_matches_reference(exe, ref, seed, "descriptor graph");
  dmlc_executable_destroy(exe);
  dmlc_executable_destroy(ref);
}
END_TEST

/* dmlc_operator_compile of each operator kind, with a broadcast input. */
START_TEST(test_operators_match_reference) {
  static const uint32_t sizes[] = {5, 6}, bcast[] = {1, 0}, out_sizes[] = {5, 1}, axes[] = {1};
  desc_tensor x, idx, hard;
  desc_tensor_init(&x, DML_TENSOR_DATA_TYPE_FLOAT16, 2, sizes, _i == 0 ? NULL : bcast);
  desc_tensor_init(&idx, DML_TENSOR_DATA_TYPE_INT32, 2, out_sizes, NULL);
  desc_tensor_init(&hard, DML_TENSOR_DATA_TYPE_FLOAT16, 2, sizes, NULL);
  const DML_ARGMAX_OPERATOR_DESC argmax = {&x.desc, &idx.desc, 1, axes,
                                           DML_AXIS_DIRECTION_INCREASING};
  const DML_ARGMIN_OPERATOR_DESC argmin = {&x.desc, &idx.desc, 1, axes,
                                           DML_AXIS_DIRECTION_DECREASING};
  const DML_REDUCE_OPERATOR_DESC reduce = {DML_REDUCE_FUNCTION_ARGMAX, &x.desc, &idx.desc, 1, axes};
  const DML_ACTIVATION_HARDMAX1_OPERATOR_DESC hardmax = {&x.desc, &hard.desc, 1, axes};
  const DML_ACTIVATION_HARDMAX_OPERATOR_DESC legacy = {&x.desc, &hard.desc};
  const DML_OPERATOR_DESC ops[] = {{DML_OPERATOR_ARGMAX, &argmax},
                                   {DML_OPERATOR_ARGMIN, &argmin},
                                   {DML_OPERATOR_REDUCE, &reduce},
                                   {DML_OPERATOR_ACTIVATION_HARDMAX1, &hardmax},
                                   {DML_OPERATOR_ACTIVATION_HARDMAX, &legacy}};
  dmlc_context *ctx = cts_context();
  for (size_t k = 0; k < sizeof ops / sizeof ops[0]; k++) {
    dmlc_executable *exe = NULL, *ref = NULL;
    CTS_CHECK(ctx, dmlc_operator_compile(ctx, &ops[k], cts_device(), &exe), "operator compile");
    CTS_CHECK(ctx, dmlc_operator_compile(ctx, &ops[k], DMLC_DEVICE_REFERENCE, &ref),
              "operator compile on the reference");
    expect_same_bindings(exe, ref);
    char what[64];
    snprintf(what, sizeof what, "operator %zu", k);
    cts_expect_matches_reference(exe, ref, 7 + k, what);
    dmlc_executable_destroy(exe);
    dmlc_executable_destroy(ref);
  }
}
END_TEST

void cts_add_graph_cases(Suite *s, dmlc_device device) {
  (void)device;
  TCase *tc = cts_tcase_create("graphs");
  cts_add_loop(tc, test_ir_graph_matches_reference, 0, (int)cts_graph_count());
  tcase_add_test(tc, test_descriptor_graph_matches_reference);
  tcase_add_test(tc, test_graph_changed_after_compile);
  cts_add_loop(tc, test_operators_match_reference, 0, 2);
  suite_add_tcase(s, tc);
}
