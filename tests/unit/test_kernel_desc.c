/* Kernel descriptions of fused graphs: what both backends generate code from. */
#include <stdlib.h>
#include <string.h>

#include "codegen/kernel_desc.h"
#include "passes/passes.h"
#include "testutil.h"

/* Parses text, runs the default pipeline and builds the kernel plan. */
static dmlc_status plan_of(const char *text, dmlc_kernel_plan *plan, dmlc_diag *diag) {
  dmlc_ir_graph *g = NULL;
  dmlc_status status = dmlc_ir_parse(text, strlen(text), "t.dmlir", &g, diag);
  if (status == DMLC_OK)
    status = dmlc_run_pipeline(&g, DMLC_DEFAULT_PIPELINE, NULL, diag);
  if (status == DMLC_OK)
    status = dmlc_kernel_plan_build(g, plan, diag);
  dmlc_ir_graph_destroy(g);
  return status;
}

/* plan_of, every kernel described; returns the descriptions joined by
 * newlines (malloc'ed), or NULL with diag set. */
static char *describe(const char *text, dmlc_status *status, dmlc_diag *diag) {
  dmlc_kernel_plan plan;
  char *joined = NULL;
  if ((*status = plan_of(text, &plan, diag)) == DMLC_OK) {
    joined = calloc(1, 8192);
    for (uint32_t i = 0; i < plan.num_kernels; i++) {
      char *k = dmlc_kdesc_print(&plan.kernels[i]);
      strcat(joined, k);
      strcat(joined, "\n");
      free(k);
    }
    dmlc_kernel_plan_free(&plan);
  }
  return joined;
}

static void expect(const char *text, const char *expected) {
  dmlc_diag diag = {0};
  dmlc_status status;
  char *got = describe(text, &status, &diag);
  ck_assert_msg(status == DMLC_OK, "%s", diag.message);
  ck_assert_str_eq(got, expected);
  free(got);
}

START_TEST(hardmax_is_one_onehot_kernel) {
  expect("graph @h(%x: f32[2,2,2]) -> (f32[2,2,2]) {\n"
         "  %0 = hardmax %x {axes = [0, 2]} : f32[2,2,2]\n  return %0\n}\n",
         "space [r2, 2, r2] read f32[4,2,1] argmax increasing out0 onehot f32[4,2,1]\n");
}
END_TEST

START_TEST(argmax_and_hardmax_share_a_kernel) {
  expect("graph @h(%x: f32[64,100]) -> (f32[64,100], i64[64,1]) {\n"
         "  %0 = hardmax %x {axes = [1]} : f32[64,100]\n"
         "  %1 = argmax %x {axes = [1]} : i64[64,1]\n  return %0, %1\n}\n",
         "space [64, r100] read f32[100,1] argmax increasing out0 onehot f32[100,1] "
         "out1 index i64[1,0]\n");
}
END_TEST

START_TEST(column_reduction_after_merging) {
  expect("graph @c(%x: u8[4,6,5]) -> (u32[1,6,5]) {\n"
         "  %0 = argmin %x {axes = [0], direction = decreasing} : u32[1,6,5]\n"
         "  return %0\n}\n",
         "space [r4, 30] read u8[30,1] argmin decreasing out0 index u32[0,1]\n");
}
END_TEST

START_TEST(folded_reductions_become_constants) {
  expect("graph @f(%x: f32[3,1], %y: f16[3,1]) -> (i32[3,1], f16[3,1]) {\n"
         "  %0 = argmax %x {axes = [1]} : i32[3,1]\n"
         "  %1 = hardmax %y {axes = [1]} : f16[3,1]\n  return %0, %1\n}\n",
         "space [3] out0 constant i32[1] = 0\nspace [3] out0 constant f16[1] = 1\n");
}
END_TEST

START_TEST(inputs_returned_directly_are_copies) {
  expect("graph @p(%x: i16[2,3]{strides = [4, 1]}) -> (i16[2,3]) {\n  return %x\n}\n",
         "space [2, 3] read i16[4,1] out0 copy i16[3,1]\n");
}
END_TEST

/* Broadcast (zero-stride) dims of a reduction's read (kernel_desc.c). */
START_TEST(broadcast_kept_dims_are_computed_once) {
  /* dim 1 kept and broadcast: the reduction without it into two dense
   * temporaries (the index's 7 u32, the one-hot's 6*7*9 f32), then a copy
   * of each out along it */
  const char *text = "graph @b(%x: f32[6,5,7,9]{strides = [63, 0, 9, 1]}) -> (f32[6,5,7,9], "
                     "u32[1,5,7,1]) {\n"
                     "  %0 = hardmax %x {axes = [0, 3]} : f32[6,5,7,9]\n"
                     "  %1 = argmax %x {axes = [0, 3]} : u32[1,5,7,1]\n  return %0, %1\n}\n";
  expect(text, "space [r6, 7, r9] read f32[63,9,1] argmax increasing out0 index u32[0,1,0] "
               "out1 onehot f32[63,9,1]\n"
               "space [5, 7] read u32[0,1] out0 copy u32[7,1]\n"
               "space [6, 5, 63] read f32[63,0,1] out0 copy f32[315,63,1]\n");
  dmlc_diag diag = {0};
  dmlc_kernel_plan plan;
  ck_assert_int_eq(plan_of(text, &plan, &diag), DMLC_OK);
  ck_assert_uint_eq(plan.num_temps, 2);
  ck_assert_uint_eq(plan.temp_bytes[0], 7 * 4);
  ck_assert_uint_eq(plan.temp_bytes[1], 6 * 7 * 9 * 4);
  const dmlc_kdesc *k = plan.kernels;
  ck_assert_int_eq(k[0].outputs[0].binding.kind, DMLC_BINDING_TEMP);
  ck_assert_uint_eq(k[0].outputs[0].binding.index, 0);
  ck_assert_int_eq(k[1].read_binding.kind, DMLC_BINDING_TEMP);
  ck_assert_uint_eq(k[1].read_binding.index, 0);
  ck_assert_int_eq(k[1].outputs[0].binding.kind, DMLC_BINDING_OUTPUT);
  ck_assert_uint_eq(k[1].outputs[0].binding.index, 1); /* the graph's u32 output */
  ck_assert_uint_eq(k[2].read_binding.index, 1);
  ck_assert_uint_eq(k[2].outputs[0].binding.index, 0);
  dmlc_kernel_plan_free(&plan);
  /* a broadcast kept dim between kept ones: the copy reads the temporary
   * with a zero stride there */
  expect("graph @m(%x: f16[4,3,5]{strides = [0, 5, 1]}) -> (i64[4,3,1]) {\n"
         "  %0 = argmin %x {axes = [2], direction = decreasing} : i64[4,3,1]\n  return %0\n}\n",
         "space [3, r5] read f16[5,1] argmin decreasing out0 index i64[1,0]\n"
         "space [4, 3] read i64[0,1] out0 copy i64[3,1]\n");
}
END_TEST

START_TEST(broadcast_reduced_dims_tie) {
  /* every reduced dim broadcast: the first or last position, as integers */
  expect("graph @c(%x: i8[3,4,6]{strides = [6, 0, 0]}) -> (i64[3,1,1], u32[3,1,1]) {\n"
         "  %0 = argmax %x {axes = [1, 2], direction = decreasing} : i64[3,1,1]\n"
         "  %1 = argmin %x {axes = [1, 2]} : u32[3,1,1]\n  return %0, %1\n}\n",
         "space [3] out0 constant i64[1] = 23\nspace [3] out0 constant u32[1] = 0\n");
  expect("graph @c(%x: f32[40,50]{strides = [0, 0]}) -> (u32[1,1]) {\n"
         "  %0 = argmax %x {axes = [0, 1]} : u32[1,1]\n  return %0\n}\n",
         "space [1] out0 constant u32[0] = 0\n");
  /* a one-hot stays a reduction */
  expect("graph @f(%x: f32[40,50]{strides = [1, 0]}) -> (f32[40,50]) {\n"
         "  %0 = hardmax %x {axes = [1]} : f32[40,50]\n  return %0\n}\n",
         "space [40, r50] read f32[1,0] argmax increasing out0 onehot f32[50,1]\n");
  /* broadcast reduced dims outside the others: dropped when increasing
   * (they add 0 to the index), kept when decreasing */
  expect("graph @o(%w: u16[5,6,7]{strides = [0, 7, 1]}) -> (u32[1,1,7], u32[1,1,7]) {\n"
         "  %0 = argmax %w {axes = [0, 1]} : u32[1,1,7]\n"
         "  %1 = argmin %w {axes = [0, 1], direction = decreasing} : u32[1,1,7]\n"
         "  return %0, %1\n}\n",
         "space [r6, 7] read u16[7,1] argmax increasing out0 index u32[0,1]\n"
         "space [r5, r6, 7] read u16[0,7,1] argmin decreasing out0 index u32[0,0,1]\n");
}
END_TEST

START_TEST(unsupported_kernels_say_so) {
  /* An index broadcast back over the full space and written is not a
   * pattern codegen knows: the plan must refuse, not guess. */
  dmlc_diag diag = {0};
  dmlc_status status;
  char *got = describe("graph @u(%x: f32[4,5]) -> (u32[4,5]) {\n"
                       "  %0 = argmax %x {axes = [1]} : u32[4,1]\n"
                       "  %1 = broadcast %0 : u32[4,5]\n  return %1\n}\n",
                       &status, &diag);
  ck_assert_ptr_null(got);
  ck_assert_int_eq(status, DMLC_ERROR_UNSUPPORTED);
  ck_assert_ptr_nonnull(strstr(diag.message, "no code-generation pattern"));
}
END_TEST

START_TEST(unfused_graphs_are_rejected) {
  dmlc_ir_graph *g = NULL;
  dmlc_diag diag = {0};
  const char *text = "graph @u(%x: f32[4,5]) -> (u32[4,1]) {\n"
                     "  %0 = argmax %x {axes = [1]} : u32[4,1]\n  return %0\n}\n";
  ck_assert_int_eq(dmlc_ir_parse(text, strlen(text), "t", &g, &diag), DMLC_OK);
  dmlc_kernel_plan plan;
  ck_assert_int_eq(dmlc_kernel_plan_build(g, &plan, &diag), DMLC_ERROR_INTERNAL);
  dmlc_ir_graph_destroy(g);
}
END_TEST

/* A float constant is held as the int64 it was converted from; a cast of it
 * starts from its value, rounded, not from that int64. */
START_TEST(constants_cast_from_their_value) {
  /* f32 16777217 is 16777216 */
  expect("graph @c() -> (f64[2]) {\n  %0 = constant {value = 16777217} : f32[2]\n"
         "  %1 = cast %0 : f64[2]\n  return %1\n}\n",
         "space [2] out0 constant f64[1] = 16777216\n");
  expect("graph @c() -> (i8[2]) {\n  %0 = constant {value = 200} : u8[2]\n"
         "  %1 = cast %0 : i8[2]\n  return %1\n}\n",
         "space [2] out0 constant i8[1] = -56\n");
  expect("graph @c() -> (f32[2]) {\n  %0 = constant {value = 16777217} : f32[2]\n"
         "  %1 = constant {value = 16777216} : f32[2]\n  %2 = eq %0, %1 : bool[2]\n"
         "  %3 = cast %2 : f32[2]\n  return %3\n}\n",
         "space [2] out0 constant f32[1] = 1\n");
  /* f16 70000 is inf: no int64 holds it */
  dmlc_diag diag = {0};
  dmlc_status status;
  char *got = describe("graph @c() -> (f32[2]) {\n  %0 = constant {value = 70000} : f16[2]\n"
                       "  %1 = cast %0 : f32[2]\n  return %1\n}\n",
                       &status, &diag);
  ck_assert_ptr_null(got);
  ck_assert_int_eq(status, DMLC_ERROR_UNSUPPORTED);
  ck_assert_ptr_nonnull(strstr(diag.message, "float constant beyond int64"));
}
END_TEST

/* The printed description is the kernel cache's key: it is never cut, at
 * any length (the largest description dmlc_kdesc holds here). */
START_TEST(long_descriptions_print_whole) {
  dmlc_kdesc k;
  memset(&k, 0, sizeof k);
  k.rank = DMLC_MAX_RANK;
  k.reduced_mask = 0xAA;
  k.has_read = true;
  k.read_dtype = DMLC_DTYPE_BOOL;
  k.has_reduction = true;
  k.reduction = DMLC_OP_ARGMAX;
  k.direction = DMLC_DIRECTION_DECREASING;
  k.num_outputs = DMLC_KDESC_MAX_OUTPUTS;
  for (uint32_t d = 0; d < k.rank; d++) {
    k.dims[d] = UINT32_MAX;
    k.read_strides[d] = UINT64_MAX;
  }
  for (uint32_t i = 0; i < k.num_outputs; i++) {
    k.outputs[i].kind = DMLC_KOUT_CONSTANT;
    k.outputs[i].dtype = DMLC_DTYPE_BOOL;
    k.outputs[i].constant = INT64_MIN + i;
    for (uint32_t d = 0; d < k.rank; d++)
      k.outputs[i].strides[d] = UINT64_MAX - d;
  }
  char *text = dmlc_kdesc_print(&k);
  ck_assert_ptr_nonnull(text);
  /* 8 dims, 4 outputs of 8 strides of 20 digits each: longer than 1000 */
  ck_assert_uint_gt(strlen(text), 1000);
  ck_assert_ptr_nonnull(strstr(text, "space [4294967295, r4294967295, 4294967295,"));
  ck_assert_ptr_nonnull(strstr(text, " out3 constant bool[18446744073709551615,"));
  const char *tail = ",18446744073709551608] = -9223372036854775805";
  ck_assert_str_eq(text + strlen(text) - strlen(tail), tail);
  free(text);
}
END_TEST

/* A random description: every byte random, then the fields the print reads
 * made valid (rank, output count, enums). */
static void random_kdesc(uint64_t *seed, dmlc_kdesc *k) {
  unsigned char *b = (unsigned char *)k;
  for (size_t i = 0; i < sizeof *k; i++) {
    *seed = *seed * 6364136223846793005ull + 1442695040888963407ull;
    b[i] = (unsigned char)(*seed >> 56);
  }
  k->rank = 1 + k->rank % DMLC_MAX_RANK;
  k->has_read = k->dims[0] & 1;
  k->has_reduction = k->dims[0] & 2;
  k->read_dtype = (dmlc_dtype)(k->read_dtype % DMLC_DTYPE_COUNT);
  k->reduction = k->reduction % 2 ? DMLC_OP_ARGMAX : DMLC_OP_ARGMIN;
  k->direction = k->direction % 2 ? DMLC_DIRECTION_INCREASING : DMLC_DIRECTION_DECREASING;
  k->num_outputs = k->num_outputs % (DMLC_KDESC_MAX_OUTPUTS + 1);
  for (uint32_t i = 0; i < DMLC_KDESC_MAX_OUTPUTS; i++) {
    k->outputs[i].kind = (dmlc_kout_kind)(k->outputs[i].kind % (DMLC_KOUT_COPY + 1));
    k->outputs[i].dtype = (dmlc_dtype)(k->outputs[i].dtype % DMLC_DTYPE_COUNT);
  }
}

/* The kernel cache finds kernels by canonical bytes: two descriptions have
 * the same canonical bytes exactly when they print the same. b is a with
 * one field changed (some the print shows, some it does not: bindings,
 * dims past the rank, a non-constant output's constant). */
START_TEST(canonical_bytes_match_printed_text) {
  uint64_t seed = 0x5eedu;
  uint32_t same = 0, differ = 0;
  for (int n = 0; n < 4000; n++) {
    dmlc_kdesc a, b, ca, cb;
    random_kdesc(&seed, &a);
    b = a;
    const uint32_t r = (uint32_t)(seed >> 33), d = r % DMLC_MAX_RANK,
                   o = r % DMLC_KDESC_MAX_OUTPUTS;
    switch ((r >> 8) % 10) {
    case 0:
      b.read_binding.index ^= 1;
      break;
    case 1:
      b.outputs[o].binding.kind ^= 1;
      break;
    case 2:
      b.dims[d] ^= 1;
      break;
    case 3:
      b.read_strides[d] += 1;
      break;
    case 4:
      b.outputs[o].strides[d] += 1;
      break;
    case 5:
      b.outputs[o].constant += 1;
      break;
    case 6:
      b.reduced_mask ^= 1u << (r % 32);
      break;
    case 7:
      b.read_dtype = (dmlc_dtype)((b.read_dtype + 1) % DMLC_DTYPE_COUNT);
      break;
    case 8:
      b.direction = b.direction == DMLC_DIRECTION_INCREASING ? DMLC_DIRECTION_DECREASING
                                                             : DMLC_DIRECTION_INCREASING;
      break;
    default:
      b.outputs[o].dtype = (dmlc_dtype)((b.outputs[o].dtype + 1) % DMLC_DTYPE_COUNT);
      break;
    }
    char *ta = dmlc_kdesc_print(&a), *tb = dmlc_kdesc_print(&b);
    ck_assert_ptr_nonnull(ta);
    ck_assert_ptr_nonnull(tb);
    dmlc_kdesc_canonical(&a, &ca);
    dmlc_kdesc_canonical(&b, &cb);
    const bool text_same = strcmp(ta, tb) == 0;
    ck_assert_msg(text_same == (memcmp(&ca, &cb, sizeof ca) == 0), "%s\n%s", ta, tb);
    /* canonical is a fixed point, and prints as the original */
    dmlc_kdesc cca;
    dmlc_kdesc_canonical(&ca, &cca);
    ck_assert(memcmp(&ca, &cca, sizeof ca) == 0);
    char *tc = dmlc_kdesc_print(&ca);
    ck_assert_ptr_nonnull(tc);
    ck_assert_str_eq(ta, tc);
    same += text_same;
    differ += !text_same;
    free(ta);
    free(tb);
    free(tc);
  }
  /* both outcomes are exercised */
  ck_assert_uint_gt(same, 500);
  ck_assert_uint_gt(differ, 500);
}
END_TEST

int main(void) {
  Suite *s = suite_create("kernel_desc");
  TCase *tc = tcase_create("plans");
  tcase_add_test(tc, hardmax_is_one_onehot_kernel);
  tcase_add_test(tc, argmax_and_hardmax_share_a_kernel);
  tcase_add_test(tc, column_reduction_after_merging);
  tcase_add_test(tc, folded_reductions_become_constants);
  tcase_add_test(tc, inputs_returned_directly_are_copies);
  tcase_add_test(tc, broadcast_kept_dims_are_computed_once);
  tcase_add_test(tc, broadcast_reduced_dims_tie);
  tcase_add_test(tc, unsupported_kernels_say_so);
  tcase_add_test(tc, unfused_graphs_are_rejected);
  tcase_add_test(tc, constants_cast_from_their_value);
  tcase_add_test(tc, long_descriptions_print_whole);
  tcase_add_test(tc, canonical_bytes_match_printed_text);
  suite_add_tcase(s, tc);
  return dmlc_test_run_suites(&s, 1);
}
