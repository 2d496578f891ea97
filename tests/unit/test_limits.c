/* Limits (docs/reliability.md): a rank above 8, sizes whose product
 * overflows 64 bits, a .npy header claiming petabytes, and tensors larger
 * than the machine can hold are each a clear error, through every way in
 * (descriptors, IR text, ONNX models and tensors, .npy, the tensor API),
 * decided from the sizes before anything of that size is allocated. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"
#include "tools/npy.h"

static dmlc_context *ctx;

static void setup(void) { ck_assert_int_eq(dmlc_context_create(&ctx), DMLC_OK); }
static void teardown(void) { dmlc_context_destroy(ctx); }

#define ASSERT_ERROR(call, status, fragment)                                                       \
  do {                                                                                             \
    ck_assert_int_eq((call), (status));                                                            \
    ck_assert_msg(strstr(dmlc_context_error(ctx), (fragment)), "message '%s' lacks '%s'",          \
                  dmlc_context_error(ctx), (fragment));                                            \
  } while (0)

/* The context still works after a limit error. */
static void assert_context_usable(void) {
  static const char text[] = "graph @g(%x: f32[2,3]) -> (u32[2,1]) {\n"
                             "  %0 = argmax %x {axes = [1]} : u32[2,1]\n  return %0\n}\n";
  dmlc_graph *g;
  ck_assert_int_eq(dmlc_graph_parse(ctx, text, strlen(text), "ok.dmlir", &g), DMLC_OK);
  dmlc_executable *exe;
  ck_assert_int_eq(dmlc_graph_compile(g, DMLC_DEVICE_REFERENCE, &exe), DMLC_OK);
  const float x[6] = {1, 5, 2, 9, 0, 3};
  uint32_t y[2] = {7, 7};
  const dmlc_buffer in = {(void *)x, sizeof x}, out = {y, sizeof y};
  ck_assert_int_eq(dmlc_execute(exe, &in, 1, &out, 1), DMLC_OK);
  ck_assert_uint_eq(y[0], 1);
  ck_assert_uint_eq(y[1], 0);
  dmlc_executable_destroy(exe);
  dmlc_graph_destroy(g);
}

/* ---- rank above 8 ---- */

static DML_TENSOR_DESC tensor(DML_BUFFER_TENSOR_DESC *b, DML_TENSOR_DATA_TYPE type, UINT rank,
                              const UINT *sizes, const UINT *strides, UINT64 total) {
  *b = (DML_BUFFER_TENSOR_DESC){type, DML_TENSOR_FLAG_NONE, rank, sizes, strides, total, 0};
  return (DML_TENSOR_DESC){DML_TENSOR_TYPE_BUFFER, b};
}

START_TEST(test_descriptor_rank_9) {
  static const UINT sizes[9] = {1, 1, 1, 1, 1, 1, 1, 1, 2};
  DML_BUFFER_TENSOR_DESC bi, bo;
  const DML_TENSOR_DESC in = tensor(&bi, DML_TENSOR_DATA_TYPE_FLOAT32, 9, sizes, NULL, 8);
  const DML_TENSOR_DESC out = tensor(&bo, DML_TENSOR_DATA_TYPE_UINT32, 9, sizes, NULL, 8);
  static const UINT axes[1] = {8};
  const DML_ARGMAX_OPERATOR_DESC am = {&in, &out, 1, axes, DML_AXIS_DIRECTION_INCREASING};
  const DML_OPERATOR_DESC op = {DML_OPERATOR_ARGMAX, &am};
  dmlc_executable *exe = (dmlc_executable *)&exe;
  ASSERT_ERROR(dmlc_operator_compile(ctx, &op, DMLC_DEVICE_REFERENCE, &exe),
               DMLC_ERROR_INVALID_ARGUMENT, "InputTensor.DimensionCount is 9; must be 1 to 8");
  ck_assert_ptr_null(exe);
  assert_context_usable();
}
END_TEST

START_TEST(test_ir_rank_9) {
  static const char text[] = "graph @g(%x: f32[1,1,1,1,1,1,1,1,2]) -> (f32[1,1,1,1,1,1,1,1,2]) {\n"
                             "  return %x\n}\n";
  dmlc_graph *g = (dmlc_graph *)&g;
  const dmlc_status st = dmlc_graph_parse(ctx, text, strlen(text), "rank9.dmlir", &g);
  ck_assert_int_eq(st, DMLC_ERROR_INVALID_ARGUMENT);
  ck_assert_ptr_null(g);
  ck_assert_msg(strstr(dmlc_context_error(ctx), "rank9.dmlir:1:") &&
                    strstr(dmlc_context_error(ctx), "8"),
                "%s", dmlc_context_error(ctx));
  assert_context_usable();
}
END_TEST

/* A TensorProto by hand: dims (field 1, varint), data_type (field 2). */
static size_t put_varint(uint8_t *p, uint64_t v) {
  size_t n = 0;
  do {
    p[n++] = (uint8_t)((v & 0x7f) | (v > 0x7f ? 0x80 : 0));
    v >>= 7;
  } while (v);
  return n;
}

static size_t tensor_proto(uint8_t *p, const uint64_t *dims, size_t rank, int data_type) {
  size_t n = 0;
  for (size_t i = 0; i < rank; i++) {
    p[n++] = 0x08;
    n += put_varint(p + n, dims[i]);
  }
  p[n++] = 0x10;
  n += put_varint(p + n, (uint64_t)data_type);
  return n;
}

START_TEST(test_onnx_tensor_rank_9) {
  static const uint64_t dims[9] = {1, 1, 1, 1, 1, 1, 1, 1, 1};
  uint8_t buf[128];
  const size_t n = tensor_proto(buf, dims, 9, 1 /* FLOAT */);
  dmlc_onnx_tensor *t = (dmlc_onnx_tensor *)&t;
  /* A valid TensorProto that dmlc cannot hold: UNSUPPORTED, as the header
   * says of ranks over 8. */
  ASSERT_ERROR(dmlc_onnx_tensor_parse(ctx, buf, n, "rank9.pb", &t), DMLC_ERROR_UNSUPPORTED,
               "rank9.pb: rank 9; dmlc's tensors have at most 8 dims");
  ck_assert_ptr_null(t);
}
END_TEST

/* ---- size products overflowing 64 bits ---- */

START_TEST(test_descriptor_sizes_overflow_64_bits) {
  static const UINT sizes[3] = {0xFFFFFFFFu, 0xFFFFFFFFu, 0xFFFFFFFFu};
  DML_BUFFER_TENSOR_DESC b;
  const DML_TENSOR_DESC in = tensor(&b, DML_TENSOR_DATA_TYPE_FLOAT32, 3, sizes, NULL, 16);
  dmlc_graph *g;
  ck_assert_int_eq(dmlc_graph_create(ctx, "g", &g), DMLC_OK);
  dmlc_value x;
  ASSERT_ERROR(dmlc_graph_add_input(g, "x", &in, &x), DMLC_ERROR_INVALID_ARGUMENT,
               "x has more than 18446744073709551615 elements; at most 4294967295");
  dmlc_graph_destroy(g);
}
END_TEST

START_TEST(test_descriptor_strides_overflow_64_bits) {
  /* 2 x 2 elements whose strides put the last one past 2^64 bytes. */
  static const UINT sizes[2] = {2, 0xFFFFFFFFu}, strides[2] = {0xFFFFFFFFu, 0xFFFFFFFFu};
  DML_BUFFER_TENSOR_DESC b;
  const DML_TENSOR_DESC in =
      tensor(&b, DML_TENSOR_DATA_TYPE_FLOAT64, 2, sizes, strides, UINT64_MAX);
  dmlc_graph *g;
  ck_assert_int_eq(dmlc_graph_create(ctx, "g", &g), DMLC_OK);
  dmlc_value x;
  const dmlc_status st = dmlc_graph_add_input(g, "x", &in, &x);
  ck_assert_int_eq(st, DMLC_ERROR_INVALID_ARGUMENT);
  ck_assert_str_ne(dmlc_context_error(ctx), "");
  dmlc_graph_destroy(g);
}
END_TEST

START_TEST(test_ir_sizes_overflow_64_bits) {
  static const char text[] = "graph @g(%x: f32[4294967295,4294967295,4294967295]) -> "
                             "(f32[4294967295,4294967295,4294967295]) {\n  return %x\n}\n";
  /* The text is well formed; the verifier (run by every compile) rejects
   * the type. */
  dmlc_graph *g = NULL;
  ck_assert_int_eq(dmlc_graph_parse(ctx, text, strlen(text), "big.dmlir", &g), DMLC_OK);
  ASSERT_ERROR(dmlc_graph_verify(g), DMLC_ERROR_INVALID_ARGUMENT,
               "type f32[4294967295,4294967295,4294967295] has more than 4294967295 elements");
  dmlc_executable *exe = (dmlc_executable *)&exe;
  ASSERT_ERROR(dmlc_graph_compile(g, DMLC_DEVICE_CPU, &exe), DMLC_ERROR_INVALID_ARGUMENT,
               "more than 4294967295 elements");
  ck_assert_ptr_null(exe);
  dmlc_graph_destroy(g);
  assert_context_usable();
}
END_TEST

/* A TensorProto declaring dims (and no data) is refused, naming the file
 * and the element limit, before anything is allocated. */
static void check_tensor_refused(const uint64_t *dims, size_t rank, const char *file) {
  uint8_t buf[128];
  const size_t n = tensor_proto(buf, dims, rank, 1 /* FLOAT */);
  dmlc_onnx_tensor *t = NULL;
  const dmlc_status st = dmlc_onnx_tensor_parse(ctx, buf, n, file, &t);
  ck_assert_msg(st == DMLC_ERROR_INVALID_ARGUMENT || st == DMLC_ERROR_UNSUPPORTED, "%d: %s", st,
                dmlc_context_error(ctx));
  ck_assert_msg(strstr(dmlc_context_error(ctx), "which makes more than 4294967295 elements"), "%s",
                dmlc_context_error(ctx));
  ck_assert_ptr_null(t);
  ck_assert_msg(strstr(dmlc_context_error(ctx), file), "%s", dmlc_context_error(ctx));
}

START_TEST(test_onnx_tensor_dims_overflow_64_bits) {
  static const uint64_t dims[3] = {1ull << 40, 1ull << 40, 1ull << 40};
  check_tensor_refused(dims, 3, "big.pb");
}
END_TEST

START_TEST(test_onnx_tensor_claims_petabytes) {
  /* 2^50 floats (4 PiB) declared, no data given. */
  static const uint64_t dims[2] = {1ull << 25, 1ull << 25};
  check_tensor_refused(dims, 2, "peta.pb");
}
END_TEST

/* ---- .npy headers ---- */

static size_t npy_file(uint8_t *buf, const char *header_dict, size_t data_bytes) {
  char header[256];
  int len = snprintf(header, sizeof header, "%s", header_dict);
  while ((10 + len + 1) % 64 != 0)
    header[len++] = ' ';
  header[len++] = '\n';
  memcpy(buf, "\x93NUMPY\x01\x00", 8);
  buf[8] = (uint8_t)(len & 0xff);
  buf[9] = (uint8_t)(len >> 8);
  memcpy(buf + 10, header, (size_t)len);
  memset(buf + 10 + len, 0, data_bytes);
  return 10 + (size_t)len + data_bytes;
}

START_TEST(test_npy_header_claims_petabytes) {
  uint8_t buf[512];
  /* 2^50 bytes of u8 (a pebibyte) declared; 16 bytes present. */
  const size_t n =
      npy_file(buf, "{'descr': '|u1', 'fortran_order': False, 'shape': (1125899906842624,), }", 16);
  char err[NPY_ERROR_MAX];
  npy_array a;
  ck_assert_int_eq(npy_parse(buf, n, "peta.npy", &a, err, sizeof err), DMLC_ERROR_INVALID_ARGUMENT);
  ck_assert_msg(strstr(err, "peta.npy: truncated data") && strstr(err, "1125899906842624 bytes"),
                "%s", err);
  ck_assert_ptr_null(a.data);
}
END_TEST

START_TEST(test_npy_shape_overflows_64_bits) {
  uint8_t buf[512];
  const size_t n = npy_file(
      buf, "{'descr': '<f8', 'fortran_order': False, 'shape': (4294967296, 4294967296, 2), }", 8);
  char err[NPY_ERROR_MAX];
  npy_array a;
  ck_assert_int_eq(npy_parse(buf, n, "over.npy", &a, err, sizeof err), DMLC_ERROR_INVALID_ARGUMENT);
  ck_assert_msg(strstr(err, "over.npy: shape (4294967296, 4294967296, 2) is too large"), "%s", err);
  ck_assert_ptr_null(a.data);
}
END_TEST

/* ---- tensors larger than the machine ---- */

START_TEST(test_tensor_larger_than_memory) {
  dmlc_tensor *t = (dmlc_tensor *)&t;
  ASSERT_ERROR(dmlc_tensor_create(ctx, DMLC_DEVICE_CPU, UINT64_C(1) << 62, &t),
               DMLC_ERROR_OUT_OF_MEMORY, "needs 4611686018427387904 bytes of host memory");
  ck_assert_ptr_null(t);
  ASSERT_ERROR(dmlc_tensor_create(ctx, DMLC_DEVICE_REFERENCE, UINT64_MAX, &t),
               DMLC_ERROR_OUT_OF_MEMORY, "the machine's physical memory");
  ck_assert_ptr_null(t);
  ck_assert_int_eq(dmlc_context_set_memory_limit(ctx, 1 << 20), DMLC_OK);
  ASSERT_ERROR(dmlc_tensor_create(ctx, DMLC_DEVICE_CPU, (1 << 20) + 1, &t),
               DMLC_ERROR_OUT_OF_MEMORY,
               "the limit is 1048576 bytes (dmlc_context_set_memory_limit)");
  ck_assert_int_eq(dmlc_tensor_create(ctx, DMLC_DEVICE_CPU, 1 << 20, &t), DMLC_OK);
  dmlc_tensor_destroy(t);
  assert_context_usable();
}
END_TEST

/* A graph whose broadcast input is 8 bytes but stands for 16 GiB, through
 * 64 hardmaxes: 1 TiB of values the reference device would hold. */
static dmlc_graph *broadcast_chain(void) {
  dmlc_test_text t = {0};
  dmlc_test_text_add(
      &t, "graph @big(%%x: f32[65535,65535]{strides = [0, 0]}) -> (f32[65535,65535]) {\n");
  dmlc_test_text_add(&t, "  %%0 = hardmax %%x {axes = [1]} : f32[65535,65535]\n");
  for (int i = 1; i < 64; i++)
    dmlc_test_text_add(&t, "  %%%d = hardmax %%%d {axes = [1]} : f32[65535,65535]\n", i, i - 1);
  dmlc_test_text_add(&t, "  return %%63\n}\n");
  dmlc_graph *g;
  ck_assert_int_eq(dmlc_graph_parse(ctx, t.buf, t.len, "big.dmlir", &g), DMLC_OK);
  return g;
}

START_TEST(test_graph_larger_than_memory) {
  dmlc_graph *g = broadcast_chain();
  dmlc_executable *exe = (dmlc_executable *)&exe;
  ASSERT_ERROR(dmlc_graph_compile(g, DMLC_DEVICE_REFERENCE, &exe), DMLC_ERROR_OUT_OF_MEMORY,
               "graph 'big' on the reference device (all its values) needs 1116657418500 bytes");
  ck_assert_ptr_null(exe);
  dmlc_graph_destroy(g);
  assert_context_usable();
}
END_TEST

/* Vulkan: a buffer beyond the device's memory is VK_ERROR_OUT_OF_DEVICE_MEMORY
 * passed on as DMLC_ERROR_OUT_OF_MEMORY; a graph needing more storage
 * buffers than the device binds is UNSUPPORTED. Run as its own ctest
 * (unit.test_limits.vulkan, DMLC_TEST_LIMITS_VULKAN=1), which the sanitizer
 * run keeps out of leak checking, as it does every test loading lavapipe. */
START_TEST(test_vulkan_too_large) {
  dmlc_tensor *t = (dmlc_tensor *)&t;
  const dmlc_status st = dmlc_tensor_create(ctx, DMLC_DEVICE_VULKAN, UINT64_C(1) << 50, &t);
  ck_assert_ptr_null(t);
  if (st == DMLC_ERROR_DEVICE || st == DMLC_ERROR_UNSUPPORTED)
    return; /* no Vulkan here: nothing to check */
  ASSERT_ERROR(st, DMLC_ERROR_OUT_OF_MEMORY, "VK_ERROR_OUT_OF_DEVICE_MEMORY");
  dmlc_graph *g = broadcast_chain();
  dmlc_executable *exe = (dmlc_executable *)&exe;
  const dmlc_status cst = dmlc_graph_compile(g, DMLC_DEVICE_VULKAN, &exe);
  ck_assert_msg(cst == DMLC_ERROR_OUT_OF_MEMORY || cst == DMLC_ERROR_UNSUPPORTED, "%d: %s", cst,
                dmlc_context_error(ctx));
  ck_assert_str_ne(dmlc_context_error(ctx), "");
  ck_assert_ptr_null(exe);
  dmlc_graph_destroy(g);
  /* The device still works. */
  ck_assert_int_eq(dmlc_tensor_create(ctx, DMLC_DEVICE_VULKAN, 4096, &t), DMLC_OK);
  dmlc_tensor_destroy(t);
  assert_context_usable();
}
END_TEST

Suite *limits_suite(void) {
  Suite *s = suite_create("limits");
  TCase *tc = tcase_create("limits");
  tcase_add_checked_fixture(tc, setup, teardown);
  if (getenv("DMLC_TEST_LIMITS_VULKAN")) {
    tcase_add_test(tc, test_vulkan_too_large);
    suite_add_tcase(s, tc);
    return s;
  }
  tcase_add_test(tc, test_descriptor_rank_9);
  tcase_add_test(tc, test_ir_rank_9);
  tcase_add_test(tc, test_onnx_tensor_rank_9);
  tcase_add_test(tc, test_descriptor_sizes_overflow_64_bits);
  tcase_add_test(tc, test_descriptor_strides_overflow_64_bits);
  tcase_add_test(tc, test_ir_sizes_overflow_64_bits);
  tcase_add_test(tc, test_onnx_tensor_dims_overflow_64_bits);
  tcase_add_test(tc, test_onnx_tensor_claims_petabytes);
  tcase_add_test(tc, test_npy_header_claims_petabytes);
  tcase_add_test(tc, test_npy_shape_overflows_64_bits);
  tcase_add_test(tc, test_tensor_larger_than_memory);
  tcase_add_test(tc, test_graph_larger_than_memory);
  suite_add_tcase(s, tc);
  return s;
}

int main(void) {
  Suite *suites[] = {limits_suite()};
  return dmlc_test_run_suites(suites, 1);
}
