/* The conformance suite's bad bindings (cts.h): every call given a wrong
 * binding or range answers DMLC_ERROR_INVALID_ARGUMENT, with a message that
 * names the binding (or the function), and nothing runs: no byte of any
 * bound buffer or tensor changes. One valid set of bindings per case, with
 * one thing wrong in it. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "cts.h"

/* Names no message holds by chance. */
static const char *const bind_graph =
    "graph @bind(%logits: f32[3,4]{align = 16}, %labels: i32[2,3]) -> (%best: u32[3,1], "
    "%worst: i64[1,3]) {\n"
    "  %0 = argmax %logits {axes = [1]} : u32[3,1]\n"
    "  %1 = argmin %labels {axes = [0]} : i64[1,3]\n"
    "  return %0, %1\n"
    "}\n";

enum { LOGITS_SIZE = 48, LABELS_SIZE = 24, BEST_SIZE = 12, WORST_SIZE = 24 };

static void fill_pattern(unsigned char *p, uint64_t size, unsigned salt) {
  for (uint64_t i = 0; i < size; i++)
    p[i] = (unsigned char)(i * 7 + salt);
}

/* ---- host buffers ---- */

/* All four buffers live in one arena, 64 bytes apart, so that one snapshot
 * shows whether anything was written. */
enum { AT_LOGITS = 0, AT_LABELS = 64, AT_BEST = 128, AT_WORST = 192, ARENA = 256 };

typedef struct host_case {
  const char *what;
  const char *mention; /* what the message must name */
} host_case;

static const host_case host_cases[] = {
    {"one input bound of two", "inputs"},
    {"three inputs bound of two", "inputs"},
    {"one output bound of two", "outputs"},
    {"no outputs bound", "outputs"},
    {"inputs is NULL", "inputs"},
    {"outputs is NULL", "outputs"},
    {"an input's data is NULL", "labels"},
    {"an output's data is NULL", "best"},
    {"an input buffer too small", "logits"},
    {"an output buffer too small", "worst"},
    {"an input buffer misaligned", "logits"},
    {"an output that is an input's buffer", "best"},
    {"an output overlapping an input", "worst"},
    {"an output overlapping another output", "worst"},
    {"one buffer bound to two outputs", "worst"},
};

START_TEST(test_bad_host_buffers) {
  const host_case *c = &host_cases[_i];
  dmlc_context *ctx = cts_context();
  dmlc_executable *exe = cts_compile_ir(ctx, bind_graph, cts_device());
  unsigned char *arena = aligned_alloc(64, ARENA), snapshot[ARENA];
  ck_assert_ptr_nonnull(arena);
  cts_fill(DML_TENSOR_DATA_TYPE_FLOAT32, arena + AT_LOGITS, LOGITS_SIZE, 1);
  cts_fill(DML_TENSOR_DATA_TYPE_INT32, arena + AT_LABELS, LABELS_SIZE, 2);
  memset(arena + AT_LOGITS + LOGITS_SIZE, CTS_SENTINEL, AT_LABELS - AT_LOGITS - LOGITS_SIZE);
  memset(arena + AT_LABELS + LABELS_SIZE, CTS_SENTINEL, ARENA - AT_LABELS - LABELS_SIZE);
  memcpy(snapshot, arena, ARENA);
  dmlc_buffer in[3] = {{arena + AT_LOGITS, LOGITS_SIZE},
                       {arena + AT_LABELS, LABELS_SIZE},
                       {arena + AT_LABELS, LABELS_SIZE}};
  dmlc_buffer out[2] = {{arena + AT_BEST, BEST_SIZE}, {arena + AT_WORST, WORST_SIZE}};
  const dmlc_buffer *inputs = in, *outputs = out;
  size_t input_count = 2, output_count = 2;
  switch (_i) {
  case 0:
    input_count = 1;
    break;
  case 1:
    input_count = 3;
    break;
  case 2:
    output_count = 1;
    break;
  case 3:
    outputs = NULL, output_count = 0;
    break;
  case 4:
    inputs = NULL;
    break;
  case 5:
    outputs = NULL;
    break;
  case 6:
    in[1].data = NULL;
    break;
  case 7:
    out[0].data = NULL;
    break;
  case 8:
    in[0].size_bytes = LOGITS_SIZE - 1;
    break;
  case 9:
    out[1].size_bytes = WORST_SIZE - 1;
    break;
  case 10:
    in[0].data = arena + AT_LOGITS + 4;
    break; /* 4-aligned; align = 16 */
  case 11:
    out[0] = in[0];
    break;
  case 12:
    out[1].data = arena + AT_LABELS + 8;
    break;
  case 13:
    out[1].data = arena + AT_BEST + 4;
    break;
  case 14:
    out[1].data = out[0].data;
    break;
  default:
    ck_abort();
  }
  const dmlc_status st = dmlc_execute(exe, inputs, input_count, outputs, output_count);
  cts_expect_error(ctx, st, c->mention, c->what);
  cts_expect_bytes(arena, snapshot, ARENA, c->what); /* nothing ran */
  free(arena);
  dmlc_executable_destroy(exe);
}
END_TEST

/* ---- tensors ---- */

typedef struct tensor_set {
  dmlc_tensor *logits, *labels, *best, *worst;
  dmlc_tensor *small_input, *small_output;   /* one byte short */
  dmlc_tensor *other_device, *other_context; /* large enough for any binding */
  dmlc_context *other_ctx;
} tensor_set;

static dmlc_tensor *tensor_patterned(dmlc_context *ctx, dmlc_device device, uint64_t size) {
  dmlc_tensor *t = NULL;
  CTS_CHECK(ctx, dmlc_tensor_create(ctx, device, size, &t), "tensor create");
  unsigned char bytes[64];
  ck_assert_uint_le(size, sizeof bytes);
  fill_pattern(bytes, size, (unsigned)size);
  CTS_CHECK(ctx, dmlc_tensor_write(t, 0, bytes, size), "tensor write");
  return t;
}

static void expect_pattern(dmlc_context *ctx, const dmlc_tensor *t, const char *what) {
  unsigned char got[64], want[64];
  const uint64_t size = dmlc_tensor_size(t);
  fill_pattern(want, size, (unsigned)size);
  CTS_CHECK(ctx, dmlc_tensor_read(t, 0, got, size), "tensor read");
  cts_expect_bytes(got, want, size, what);
}

static void tensor_set_make(dmlc_context *ctx, tensor_set *s) {
  const dmlc_device d = cts_device();
  s->logits = tensor_patterned(ctx, d, LOGITS_SIZE);
  s->labels = tensor_patterned(ctx, d, LABELS_SIZE);
  s->best = tensor_patterned(ctx, d, BEST_SIZE);
  s->worst = tensor_patterned(ctx, d, WORST_SIZE);
  s->small_input = tensor_patterned(ctx, d, LOGITS_SIZE - 1);
  s->small_output = tensor_patterned(ctx, d, WORST_SIZE - 1);
  s->other_device = tensor_patterned(ctx, cts_other_device(d), 64);
  ck_assert_int_eq(dmlc_context_create(&s->other_ctx), DMLC_OK);
  s->other_context = tensor_patterned(s->other_ctx, d, 64);
}

/* Nothing ran: every tensor holds its pattern. */
static void tensor_set_check_and_destroy(dmlc_context *ctx, tensor_set *s, const char *what) {
  dmlc_tensor *const mine[] = {s->logits,      s->labels,       s->best,        s->worst,
                               s->small_input, s->small_output, s->other_device};
  for (size_t k = 0; k < sizeof mine / sizeof mine[0]; k++) {
    expect_pattern(ctx, mine[k], what);
    dmlc_tensor_destroy(mine[k]);
  }
  expect_pattern(s->other_ctx, s->other_context, what);
  dmlc_tensor_destroy(s->other_context);
  dmlc_context_destroy(s->other_ctx);
}

static const host_case tensor_cases[] = {
    {"one input tensor bound of two", "inputs"},
    {"three output tensors bound of two", "outputs"},
    {"inputs is NULL", "inputs"},
    {"outputs is NULL", "outputs"},
    {"an input tensor is NULL", "labels"},
    {"an output tensor is NULL", "best"},
    {"an input tensor too small", "logits"},
    {"an output tensor too small", "worst"},
    {"an output that is an input's tensor", "best"},
    {"one tensor bound to two outputs", "worst"},
    {"an output tensor of another device", "best"},
    {"an input tensor of another device", "labels"},
    {"an input tensor of another context", "logits"},
    {"an output tensor of another context", "worst"},
};

START_TEST(test_bad_tensors) {
  const host_case *c = &tensor_cases[_i];
  dmlc_context *ctx = cts_context();
  dmlc_executable *exe = cts_compile_ir(ctx, bind_graph, cts_device());
  tensor_set s;
  tensor_set_make(ctx, &s);
  dmlc_tensor *in[2] = {s.logits, s.labels}, *out[3] = {s.best, s.worst, s.worst};
  dmlc_tensor *const *inputs = in, *const *outputs = out;
  size_t input_count = 2, output_count = 2;
  switch (_i) {
  case 0:
    input_count = 1;
    break;
  case 1:
    output_count = 3;
    break;
  case 2:
    inputs = NULL;
    break;
  case 3:
    outputs = NULL;
    break;
  case 4:
    in[1] = NULL;
    break;
  case 5:
    out[0] = NULL;
    break;
  case 6:
    in[0] = s.small_input;
    break;
  case 7:
    out[1] = s.small_output;
    break;
  case 8:
    out[0] = s.logits;
    break;
  case 9:
    out[0] = s.worst;
    break; /* big enough for both */
  case 10:
    out[0] = s.other_device;
    break;
  case 11:
    in[1] = s.other_device;
    break;
  case 12:
    in[0] = s.other_context;
    break;
  case 13:
    out[1] = s.other_context;
    break;
  default:
    ck_abort();
  }
  const dmlc_status st = dmlc_execute_tensors(exe, inputs, input_count, outputs, output_count);
  cts_expect_error(ctx, st, c->mention, c->what);
  tensor_set_check_and_destroy(ctx, &s, c->what);
  dmlc_executable_destroy(exe);
}
END_TEST

/* The control: the valid sets of bindings above run. */
START_TEST(test_valid_bindings_run) {
  dmlc_context *ctx = cts_context();
  dmlc_executable *exe = cts_compile_ir(ctx, bind_graph, cts_device());
  unsigned char *arena = aligned_alloc(64, ARENA);
  ck_assert_ptr_nonnull(arena);
  cts_fill(DML_TENSOR_DATA_TYPE_FLOAT32, arena + AT_LOGITS, LOGITS_SIZE, 1);
  cts_fill(DML_TENSOR_DATA_TYPE_INT32, arena + AT_LABELS, LABELS_SIZE, 2);
  const dmlc_buffer in[2] = {{arena + AT_LOGITS, LOGITS_SIZE}, {arena + AT_LABELS, LABELS_SIZE}};
  const dmlc_buffer out[2] = {{arena + AT_BEST, BEST_SIZE}, {arena + AT_WORST, WORST_SIZE}};
  CTS_CHECK(ctx, dmlc_execute(exe, in, 2, out, 2), "execute with valid buffers");
  tensor_set s;
  tensor_set_make(ctx, &s);
  CTS_CHECK(ctx, dmlc_tensor_write(s.logits, 0, arena + AT_LOGITS, LOGITS_SIZE), "tensor write");
  CTS_CHECK(ctx, dmlc_tensor_write(s.labels, 0, arena + AT_LABELS, LABELS_SIZE), "tensor write");
  dmlc_tensor *const tin[2] = {s.logits, s.labels}, *const tout[2] = {s.best, s.worst};
  CTS_CHECK(ctx, dmlc_execute_tensors(exe, tin, 2, tout, 2), "execute with valid tensors");
  unsigned char got[WORST_SIZE];
  CTS_CHECK(ctx, dmlc_tensor_read(s.worst, 0, got, WORST_SIZE), "tensor read");
  ck_assert_mem_eq(got, arena + AT_WORST, WORST_SIZE);
  free(arena);
  dmlc_executable_destroy(exe);
  dmlc_tensor *const all[] = {s.logits,      s.labels,       s.best,        s.worst,
                              s.small_input, s.small_output, s.other_device};
  for (size_t k = 0; k < sizeof all / sizeof all[0]; k++)
    dmlc_tensor_destroy(all[k]);
  dmlc_tensor_destroy(s.other_context);
  dmlc_context_destroy(s.other_ctx);
}
END_TEST

START_TEST(test_null_executable) {
  dmlc_buffer b = {NULL, 0};
  dmlc_tensor *t = NULL;
  ck_assert_int_eq(dmlc_execute(NULL, &b, 1, &b, 1), DMLC_ERROR_INVALID_ARGUMENT);
  ck_assert_int_eq(dmlc_execute_tensors(NULL, &t, 1, &t, 1), DMLC_ERROR_INVALID_ARGUMENT);
}
END_TEST

/* ---- the tensor calls ---- */

START_TEST(test_bad_tensor_create) {
  dmlc_context *ctx = cts_context();
  dmlc_tensor *t = (dmlc_tensor *)&t; /* must come back NULL */
  cts_expect_error(ctx, dmlc_tensor_create(ctx, cts_device(), 0, &t), "size", "size 0");
  ck_assert_ptr_null(t);
  cts_expect_error(ctx, dmlc_tensor_create(ctx, cts_device(), 16, NULL), "dmlc_tensor_create",
                   "out NULL");
  ck_assert_int_eq(dmlc_tensor_create(NULL, cts_device(), 16, &t), DMLC_ERROR_INVALID_ARGUMENT);
  t = (dmlc_tensor *)&t;
  cts_expect_error(ctx, dmlc_tensor_create(ctx, (dmlc_device)77, 16, &t), NULL, "device 77");
  ck_assert_ptr_null(t);
  /* More than any device has: an error, not an abort. */
  t = (dmlc_tensor *)&t;
  const dmlc_status st = dmlc_tensor_create(ctx, cts_device(), UINT64_MAX, &t);
  ck_assert_msg(st != DMLC_OK, "a tensor of UINT64_MAX bytes was created");
  ck_assert_str_ne(dmlc_context_error(ctx), "");
  ck_assert_ptr_null(t);
}
END_TEST

/* Out of range, overflowing, NULL: the tensor keeps its bytes and dst is
 * not written. */
START_TEST(test_bad_tensor_ranges) {
  static const struct {
    uint64_t offset, size;
  } ranges[] = {{10, 55},
                {65, 0},
                {64, 1},
                {0, 65},
                {UINT64_MAX - 1, 4},
                {4, UINT64_MAX},
                {UINT64_MAX, UINT64_MAX}};
  dmlc_context *ctx = cts_context();
  dmlc_tensor *t = tensor_patterned(ctx, cts_device(), 64);
  unsigned char buf[128];
  for (size_t k = 0; k < sizeof ranges / sizeof ranges[0]; k++) {
    char what[96];
    snprintf(what, sizeof what, "%llu bytes at %llu of 64", (unsigned long long)ranges[k].size,
             (unsigned long long)ranges[k].offset);
    memset(buf, 0x11, sizeof buf);
    cts_expect_error(ctx, dmlc_tensor_write(t, ranges[k].offset, buf, ranges[k].size),
                     "dmlc_tensor_write", what);
    memset(buf, CTS_SENTINEL, sizeof buf);
    cts_expect_error(ctx, dmlc_tensor_read(t, ranges[k].offset, buf, ranges[k].size),
                     "dmlc_tensor_read", what);
    for (size_t i = 0; i < sizeof buf; i++)
      if (buf[i] != CTS_SENTINEL)
        ck_abort_msg("%s: a failed read wrote byte %zu of dst", what, i);
  }
  cts_expect_error(ctx, dmlc_tensor_write(t, 0, NULL, 4), "dmlc_tensor_write", "src NULL");
  cts_expect_error(ctx, dmlc_tensor_read(t, 0, NULL, 4), "dmlc_tensor_read", "dst NULL");
  ck_assert_int_eq(dmlc_tensor_write(NULL, 0, buf, 4), DMLC_ERROR_INVALID_ARGUMENT);
  ck_assert_int_eq(dmlc_tensor_read(NULL, 0, buf, 4), DMLC_ERROR_INVALID_ARGUMENT);
  expect_pattern(ctx, t, "a tensor after failed writes");
  dmlc_tensor_destroy(t);
}
END_TEST

/* ---- buffer sizes (issue 15) ---- */

/* Graphs from IR text declare no TotalTensorSizeInBytes, so a buffer that
 * ends with its last element is enough, whatever its size modulo 4: a u8[5],
 * a u16[3], an f16 vocabulary of 5003 logits (10006 bytes; GPT-2's 50257 is
 * in test_cpu_runtime: the windowed Vulkan run of this suite binds a buffer
 * that large as more descriptors than lavapipe allows). */
static const char *const exact_graphs[] = {
    "graph @bytes(%x: u8[5]) -> (%top: u32[1], %low: i64[1]) {\n"
    "  %0 = argmax %x {axes = [0]} : u32[1]\n"
    "  %1 = argmin %x {axes = [0]} : i64[1]\n"
    "  return %0, %1\n"
    "}\n",
    "graph @halves(%x: u16[3], %y: i8[7]) -> (%top: u32[1], %low: u32[1]) {\n"
    "  %0 = argmax %x {axes = [0]} : u32[1]\n"
    "  %1 = argmin %y {axes = [0]} : u32[1]\n"
    "  return %0, %1\n"
    "}\n",
    "graph @vocab(%logits: f16[1,5003]) -> (%next: u32[1,1], %onehot: f16[1,5003]) {\n"
    "  %0 = argmax %logits {axes = [1]} : u32[1,1]\n"
    "  %1 = hardmax %logits {axes = [1]} : f16[1,5003]\n"
    "  return %0, %1\n"
    "}\n",
};

/* size bytes that end where a PROT_NONE page begins, so that a device
 * reading or writing one byte past them faults (JIT code included, which
 * AddressSanitizer does not see). */
typedef struct guarded {
  unsigned char *map;
  size_t map_size;
  unsigned char *data;
} guarded;

static guarded guarded_alloc(uint64_t size) {
  const size_t page = (size_t)sysconf(_SC_PAGESIZE);
  const size_t pages = ((size_t)size + page - 1) / page + 1;
  guarded g = {NULL, pages * page, NULL};
  g.map = mmap(NULL, g.map_size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  ck_assert_ptr_ne(g.map, MAP_FAILED);
  ck_assert_int_eq(mprotect(g.map + g.map_size - page, page, PROT_NONE), 0);
  g.data = g.map + g.map_size - page - size;
  return g;
}

START_TEST(test_exact_size_buffers) {
  dmlc_context *ctx = cts_context();
  dmlc_executable *exe = cts_compile_ir(ctx, exact_graphs[_i], cts_device());
  dmlc_executable *ref = cts_compile_ir(ctx, exact_graphs[_i], DMLC_DEVICE_REFERENCE);
  cts_buffers want;
  cts_buffers_make(ref, 15 + (uint64_t)_i, &want);
  CTS_CHECK(ctx, dmlc_execute(ref, want.inputs, want.num_inputs, want.outputs, want.num_outputs),
            "reference execute");
  dmlc_buffer in[8], out[8];
  guarded gin[8], gout[8];
  for (size_t i = 0; i < want.num_inputs + want.num_outputs; i++) {
    const int is_in = i < want.num_inputs;
    const size_t k = is_in ? i : i - want.num_inputs;
    dmlc_tensor_info info;
    CTS_CHECK(ctx,
              is_in ? dmlc_executable_input_info(exe, k, &info)
                    : dmlc_executable_output_info(exe, k, &info),
              "info");
    uint64_t elements = 1;
    for (uint32_t d = 0; d < info.dimension_count; d++)
      elements *= info.sizes[d];
    /* Packed layouts: the extent is the element count times the size. */
    const uint64_t exact = info.total_size_bytes;
    ck_assert_msg(exact % elements == 0 && exact / elements <= 8,
                  "%s: total_size_bytes %llu is not a whole number of elements", info.name,
                  (unsigned long long)exact);
    guarded g = guarded_alloc(exact);
    if (is_in) {
      memcpy(g.data, want.inputs[k].data, (size_t)exact);
      gin[k] = g;
      in[k] = (dmlc_buffer){g.data, exact};
    } else {
      memset(g.data, CTS_SENTINEL, (size_t)exact);
      gout[k] = g;
      out[k] = (dmlc_buffer){g.data, exact};
    }
  }
  /* One byte short is refused, naming the binding and the rule. */
  in[0].size_bytes--;
  cts_expect_error(ctx, dmlc_execute(exe, in, want.num_inputs, out, want.num_outputs),
                   "end of its last element", "an input one byte short");
  in[0].size_bytes++;
  out[want.num_outputs - 1].size_bytes--;
  cts_expect_error(ctx, dmlc_execute(exe, in, want.num_inputs, out, want.num_outputs),
                   "end of its last element", "an output one byte short");
  out[want.num_outputs - 1].size_bytes++;
  CTS_CHECK(ctx, dmlc_execute(exe, in, want.num_inputs, out, want.num_outputs),
            "execute with buffers that end at their last element");
  for (size_t k = 0; k < want.num_outputs; k++)
    cts_expect_bytes(out[k].data, want.outputs[k].data, out[k].size_bytes, exact_graphs[_i]);
  for (size_t k = 0; k < want.num_inputs; k++)
    munmap(gin[k].map, gin[k].map_size);
  for (size_t k = 0; k < want.num_outputs; k++)
    munmap(gout[k].map, gout[k].map_size);
  cts_buffers_free(&want);
  dmlc_executable_destroy(exe);
  dmlc_executable_destroy(ref);
}
END_TEST

/* A tensor described by DirectML's own descriptor keeps DirectML's rule:
 * TotalTensorSizeInBytes as declared (a multiple of 4), and the message says
 * so. */
START_TEST(test_descriptor_size_rule) {
  dmlc_context *ctx = cts_context();
  UINT sizes[2] = {1, 5003}, out_sizes[2] = {1, 1}, axes[1] = {1};
  DML_BUFFER_TENSOR_DESC in = {
      DML_TENSOR_DATA_TYPE_FLOAT16, DML_TENSOR_FLAG_NONE, 2, sizes, NULL, 10008, 0};
  DML_BUFFER_TENSOR_DESC ob = {
      DML_TENSOR_DATA_TYPE_UINT32, DML_TENSOR_FLAG_NONE, 2, out_sizes, NULL, 4, 0};
  DML_TENSOR_DESC in_t = {DML_TENSOR_TYPE_BUFFER, &in}, out_t = {DML_TENSOR_TYPE_BUFFER, &ob};
  DML_ARGMAX_OPERATOR_DESC argmax = {&in_t, &out_t, 1, axes, DML_AXIS_DIRECTION_INCREASING};
  DML_OPERATOR_DESC op = {DML_OPERATOR_ARGMAX, &argmax};
  dmlc_executable *exe = NULL;
  CTS_CHECK(ctx, dmlc_operator_compile(ctx, &op, cts_device(), &exe), "compile");
  dmlc_tensor_info info;
  CTS_CHECK(ctx, dmlc_executable_input_info(exe, 0, &info), "info");
  ck_assert_uint_eq(info.total_size_bytes, 10008);
  uint16_t *x = calloc(5004, sizeof *x);
  uint32_t y = 7;
  x[5002] = 0x3c00; /* 1.0: the maximum, at the last index */
  dmlc_buffer ins[1] = {{x, 10006}}, outs[1] = {{&y, sizeof y}};
  cts_expect_error(ctx, dmlc_execute(exe, ins, 1, outs, 1), "TotalTensorSizeInBytes",
                   "a descriptor's tensor given only its elements' bytes");
  ck_assert_uint_eq(y, 7);
  ins[0].size_bytes = 10008;
  CTS_CHECK(ctx, dmlc_execute(exe, ins, 1, outs, 1), "execute");
  ck_assert_uint_eq(y, 5002);
  free(x);
  dmlc_executable_destroy(exe);
}
END_TEST

void cts_add_binding_cases(Suite *s, dmlc_device device) {
  (void)device;
  TCase *tc = cts_tcase_create("bindings");
  tcase_add_test(tc, test_valid_bindings_run);
  cts_add_loop(tc, test_bad_host_buffers, 0, (int)(sizeof host_cases / sizeof host_cases[0]));
  cts_add_loop(tc, test_bad_tensors, 0, (int)(sizeof tensor_cases / sizeof tensor_cases[0]));
  tcase_add_test(tc, test_null_executable);
  tcase_add_test(tc, test_bad_tensor_create);
  tcase_add_test(tc, test_bad_tensor_ranges);
  cts_add_loop(tc, test_exact_size_buffers, 0, (int)(sizeof exact_graphs / sizeof exact_graphs[0]));
  tcase_add_test(tc, test_descriptor_size_rule);
  suite_add_tcase(s, tc);
}
