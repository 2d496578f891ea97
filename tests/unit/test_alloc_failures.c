/* Allocation failures, as SQLite tests out-of-memory (docs/reliability.md):
 * in the build where the library's own allocations can be made to fail
 * (-DDMLC_FAULT_INJECTION=ON, ir/fault_inject.h), allocation N fails, for
 * every N, across parse, compile and execute of every example graph on the
 * reference device and the CPU, and across the tensor API. Each run ends
 * with DMLC_ERROR_OUT_OF_MEMORY and a message, or succeeds with the right
 * output; either way the same context then runs the same work correctly.
 * Leaks are LeakSanitizer's to find (scripts/oom.sh builds with ASan).
 * LLVM's allocations (the JIT's) are not dmlc's and are not failed. */
#include <glob.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ir/fault_inject.h"
#include "testutil.h"

enum { MAX_IO = 4 };

typedef struct work {
  const char *text;
  size_t length;
  dmlc_device device;
  size_t num_in, num_out;
  dmlc_buffer in[MAX_IO], out[MAX_IO], expected[MAX_IO];
} work;

/* The statuses one run may end with under injection. */
static void check_failure(dmlc_context *ctx, dmlc_status st, const char *what, uint64_t n) {
  ck_assert_msg(st == DMLC_ERROR_OUT_OF_MEMORY, "%s, allocation %llu failed: status %s (%s)", what,
                (unsigned long long)n, dmlc_status_string(st), dmlc_context_error(ctx));
  ck_assert_msg(dmlc_context_error(ctx)[0] != '\0', "%s, allocation %llu: OOM without a message",
                what, (unsigned long long)n);
}

/* parse -> compile -> execute -> destroy; returns the first failure. */
static dmlc_status run_graph(dmlc_context *ctx, work *w) {
  dmlc_graph *g = NULL;
  dmlc_status st = dmlc_graph_parse(ctx, w->text, w->length, "example.dmlir", &g);
  if (st != DMLC_OK)
    return st;
  dmlc_executable *exe = NULL;
  st = dmlc_graph_compile(g, w->device, &exe);
  dmlc_graph_destroy(g);
  if (st != DMLC_OK)
    return st;
  for (size_t o = 0; o < w->num_out; o++)
    memset(w->out[o].data, 0x5A, w->out[o].size_bytes);
  st = dmlc_execute(exe, w->in, w->num_in, w->out, w->num_out);
  dmlc_executable_destroy(exe);
  return st;
}

static void check_outputs(const work *w, const char *what, uint64_t n) {
  for (size_t o = 0; o < w->num_out; o++)
    ck_assert_msg(memcmp(w->out[o].data, w->expected[o].data, w->out[o].size_bytes) == 0,
                  "%s, allocation %llu: output %zu is wrong", what, (unsigned long long)n, o);
}

/* Buffers for the graph's inputs (small integers, ties included) and the
 * expected outputs, from the reference device without injection. */
static void prepare(work *w) {
  dmlc_context *ctx;
  ck_assert_int_eq(dmlc_context_create(&ctx), DMLC_OK);
  dmlc_graph *g;
  ck_assert_int_eq(dmlc_graph_parse(ctx, w->text, w->length, "example.dmlir", &g), DMLC_OK);
  dmlc_executable *exe;
  ck_assert_int_eq(dmlc_graph_compile(g, DMLC_DEVICE_REFERENCE, &exe), DMLC_OK);
  w->num_in = dmlc_executable_input_count(exe);
  w->num_out = dmlc_executable_output_count(exe);
  ck_assert_uint_le(w->num_in, MAX_IO);
  ck_assert_uint_le(w->num_out, MAX_IO);
  for (size_t i = 0; i < w->num_in; i++) {
    dmlc_tensor_info info;
    ck_assert_int_eq(dmlc_executable_input_info(exe, i, &info), DMLC_OK);
    w->in[i].size_bytes = info.total_size_bytes;
    w->in[i].data = aligned_alloc(64, (info.total_size_bytes + 63) & ~(uint64_t)63);
    for (uint64_t b = 0; b < info.total_size_bytes; b++)
      ((uint8_t *)w->in[i].data)[b] = (uint8_t)((b * 7 + i) % 3 ? 0 : 0x3f);
  }
  for (size_t o = 0; o < w->num_out; o++) {
    dmlc_tensor_info info;
    ck_assert_int_eq(dmlc_executable_output_info(exe, o, &info), DMLC_OK);
    const uint64_t size = (info.total_size_bytes + 63) & ~(uint64_t)63;
    w->out[o].size_bytes = w->expected[o].size_bytes = info.total_size_bytes;
    w->out[o].data = aligned_alloc(64, size);
    w->expected[o].data = aligned_alloc(64, size);
    memset(w->expected[o].data, 0x5A, info.total_size_bytes);
  }
  ck_assert_int_eq(dmlc_execute(exe, w->in, w->num_in, w->expected, w->num_out), DMLC_OK);
  dmlc_executable_destroy(exe);
  dmlc_graph_destroy(g);
  dmlc_context_destroy(ctx);
}

static void release(work *w) {
  for (size_t i = 0; i < w->num_in; i++)
    free(w->in[i].data);
  for (size_t o = 0; o < w->num_out; o++) {
    free(w->out[o].data);
    free(w->expected[o].data);
  }
}

/* Every N for one graph on one device. fresh: a new context for each N, so
 * the device is opened and every kernel compiled (the kernel cache misses)
 * under injection; otherwise one context throughout (its cache warm after
 * the first success). Returns how many failures were injected. */
static uint64_t every_allocation(work *w, const char *name, bool fresh) {
  char what[256];
  snprintf(what, sizeof what, "%s on %s%s", name, dmlc_device_name(w->device),
           fresh ? " (new context)" : "");
  dmlc_context *ctx = NULL;
  uint64_t injected = 0;
  for (uint64_t n = 1;; n++) {
    if (!ctx || fresh) {
      dmlc_context_destroy(ctx);
      ck_assert_int_eq(dmlc_context_create(&ctx), DMLC_OK);
      ck_assert_int_eq(dmlc_context_set_num_threads(ctx, 2), DMLC_OK);
    }
    dmlc_fault_set(n);
    const dmlc_status st = run_graph(ctx, w);
    const bool fired = dmlc_fault_fired();
    dmlc_fault_set(0);
    if (!fired) {
      ck_assert_msg(st == DMLC_OK, "%s without a failure: %s", what, dmlc_context_error(ctx));
      check_outputs(w, what, n);
      break;
    }
    injected++;
    if (st == DMLC_OK)
      check_outputs(w, what, n); /* the failure was absorbed: still right */
    else
      check_failure(ctx, st, what, n);
    /* The same context, no injection: works. */
    const dmlc_status again = run_graph(ctx, w);
    ck_assert_msg(again == DMLC_OK, "%s: after allocation %llu failed, the context fails: %s", what,
                  (unsigned long long)n, dmlc_context_error(ctx));
    check_outputs(w, what, n);
  }
  dmlc_context_destroy(ctx);
  return injected;
}

static size_t total_injected;

static void every_example(dmlc_device device, bool fresh) {
  glob_t files;
  ck_assert_int_eq(glob(DMLC_SOURCE_DIR "/examples/*.dmlir", 0, NULL, &files), 0);
  ck_assert_uint_ge(files.gl_pathc, 10);
  for (size_t f = 0; f < files.gl_pathc; f++) {
    work w = {0};
    char *text = dmlc_test_read_file(files.gl_pathv[f], &w.length);
    ck_assert_ptr_nonnull(text);
    w.text = text;
    w.device = device;
    prepare(&w);
    const char *name = strrchr(files.gl_pathv[f], '/') + 1;
    const uint64_t n = every_allocation(&w, name, fresh);
    ck_assert_msg(n > 10, "%s: only %llu allocations failed", name, (unsigned long long)n);
    total_injected += n;
    printf("alloc failures: %s on %s%s: %llu allocations failed in turn\n", name,
           dmlc_device_name(device), fresh ? " (new context each)" : "", (unsigned long long)n);
    release(&w);
    free(text);
  }
  globfree(&files);
}

START_TEST(test_examples_reference) { every_example(DMLC_DEVICE_REFERENCE, false); }
END_TEST

START_TEST(test_examples_cpu_warm) { every_example(DMLC_DEVICE_CPU, false); }
END_TEST

START_TEST(test_examples_cpu_fresh) { every_example(DMLC_DEVICE_CPU, true); }
END_TEST

/* ---- the tensor API ---- */

static dmlc_status run_tensors(dmlc_context *ctx, dmlc_device device, const float *x, uint32_t *y) {
  static const char text[] = "graph @t(%x: f32[4,6]) -> (u32[4,1]) {\n"
                             "  %0 = argmax %x {axes = [1]} : u32[4,1]\n  return %0\n}\n";
  dmlc_graph *g = NULL;
  dmlc_executable *exe = NULL;
  dmlc_tensor *in = NULL, *out = NULL;
  dmlc_status st = dmlc_graph_parse(ctx, text, strlen(text), "t.dmlir", &g);
  if (st == DMLC_OK)
    st = dmlc_graph_compile(g, device, &exe);
  if (st == DMLC_OK)
    st = dmlc_tensor_create(ctx, device, 24 * sizeof(float), &in);
  if (st == DMLC_OK)
    st = dmlc_tensor_create(ctx, device, 4 * sizeof(uint32_t), &out);
  if (st == DMLC_OK)
    st = dmlc_tensor_write(in, 0, x, 24 * sizeof(float));
  if (st == DMLC_OK)
    st = dmlc_execute_tensors(exe, &in, 1, &out, 1);
  if (st == DMLC_OK)
    st = dmlc_tensor_read(out, 0, y, 4 * sizeof(uint32_t));
  dmlc_tensor_destroy(out);
  dmlc_tensor_destroy(in);
  dmlc_executable_destroy(exe);
  dmlc_graph_destroy(g);
  return st;
}

START_TEST(test_tensors) {
  static const dmlc_device devices[] = {DMLC_DEVICE_REFERENCE, DMLC_DEVICE_CPU};
  float x[24];
  for (int i = 0; i < 24; i++)
    x[i] = (float)((i * 5) % 7);
  uint32_t expected[4];
  for (int r = 0; r < 4; r++) {
    expected[r] = 0;
    for (uint32_t c = 1; c < 6; c++)
      if (x[r * 6 + c] > x[r * 6 + expected[r]])
        expected[r] = c;
  }
  for (size_t d = 0; d < 2; d++) {
    for (uint64_t n = 1;; n++) {
      dmlc_context *ctx;
      ck_assert_int_eq(dmlc_context_create(&ctx), DMLC_OK);
      uint32_t y[4] = {9, 9, 9, 9};
      dmlc_fault_set(n);
      const dmlc_status st = run_tensors(ctx, devices[d], x, y);
      const bool fired = dmlc_fault_fired();
      dmlc_fault_set(0);
      if (fired && st != DMLC_OK)
        check_failure(ctx, st, "tensors", n);
      else
        ck_assert_mem_eq(y, expected, sizeof y);
      memset(y, 9, sizeof y);
      ck_assert_int_eq(run_tensors(ctx, devices[d], x, y), DMLC_OK);
      ck_assert_mem_eq(y, expected, sizeof y);
      dmlc_context_destroy(ctx);
      if (!fired)
        break;
      total_injected++;
    }
  }
  printf("alloc failures: tensors: %zu allocations failed in turn\n", total_injected);
}
END_TEST

/* ---- ONNX models ---- */

static dmlc_status import_and_compile(dmlc_context *ctx, const char *bytes, size_t size,
                                      dmlc_device device) {
  dmlc_graph *g = NULL;
  dmlc_onnx_signature *sig = NULL;
  dmlc_status st =
      dmlc_graph_import_onnx_with_options(ctx, bytes, size, "model.onnx", NULL, &g, &sig);
  dmlc_executable *exe = NULL;
  if (st == DMLC_OK)
    st = dmlc_graph_compile(g, device, &exe);
  dmlc_executable_destroy(exe);
  dmlc_free(sig);
  dmlc_graph_destroy(g);
  return st;
}

/* Every N across importing ONNX models (dmlc's side of the reader: the
 * decoded protobuf is protobuf-c's, whose allocations are not counted) and
 * compiling them for the CPU. */
START_TEST(test_onnx_models) {
  static const char *const models[] = {"argmax_opset13_types.onnx",
                                       "plumbing_reshape_initializer_opset11.onnx",
                                       "hardmax_opset13_axis0_float16.onnx"};
  for (size_t m = 0; m < sizeof models / sizeof models[0]; m++) {
    char path[512];
    snprintf(path, sizeof path, "%s/tests/fuzz/corpus/onnx/%s", DMLC_SOURCE_DIR, models[m]);
    size_t size;
    char *bytes = dmlc_test_read_file(path, &size);
    ck_assert_msg(bytes, "cannot read %s", path);
    dmlc_context *ctx;
    ck_assert_int_eq(dmlc_context_create(&ctx), DMLC_OK);
    uint64_t n = 1;
    for (;; n++) {
      dmlc_fault_set(n);
      const dmlc_status st = import_and_compile(ctx, bytes, size, DMLC_DEVICE_CPU);
      const bool fired = dmlc_fault_fired();
      dmlc_fault_set(0);
      if (!fired) {
        ck_assert_msg(st == DMLC_OK, "%s: %s", models[m], dmlc_context_error(ctx));
        break;
      }
      if (st != DMLC_OK)
        check_failure(ctx, st, models[m], n);
      ck_assert_msg(import_and_compile(ctx, bytes, size, DMLC_DEVICE_CPU) == DMLC_OK,
                    "%s after allocation %llu failed: %s", models[m], (unsigned long long)n,
                    dmlc_context_error(ctx));
    }
    printf("alloc failures: %s on cpu: %llu allocations failed in turn\n", models[m],
           (unsigned long long)(n - 1));
    ck_assert_uint_gt(n, 10);
    dmlc_context_destroy(ctx);
    free(bytes);
  }
}
END_TEST

/* The harness itself: injection is on in this build and counts. */
START_TEST(test_injection_counts) {
  dmlc_context *ctx;
  ck_assert_int_eq(dmlc_context_create(&ctx), DMLC_OK);
  dmlc_fault_set(1);
  dmlc_graph *g = (dmlc_graph *)&g;
  ck_assert_int_eq(dmlc_graph_create(ctx, "g", &g), DMLC_ERROR_OUT_OF_MEMORY);
  ck_assert(dmlc_fault_fired());
  ck_assert_ptr_null(g);
  ck_assert_str_eq(dmlc_context_error(ctx), "out of memory creating a graph");
  dmlc_fault_set(0);
  ck_assert_int_eq(dmlc_graph_create(ctx, "g", &g), DMLC_OK);
  ck_assert_uint_gt(dmlc_fault_count(), 0);
  dmlc_graph_destroy(g);
  dmlc_context_destroy(ctx);
}
END_TEST

Suite *alloc_suite(void) {
  Suite *s = suite_create("alloc_failures");
  TCase *tc = tcase_create("alloc_failures");
  tcase_set_timeout(tc, 1800);
  tcase_add_test(tc, test_injection_counts);
  tcase_add_test(tc, test_tensors);
  tcase_add_test(tc, test_onnx_models);
  tcase_add_test(tc, test_examples_reference);
  tcase_add_test(tc, test_examples_cpu_warm);
  tcase_add_test(tc, test_examples_cpu_fresh);
  suite_add_tcase(s, tc);
  return s;
}

int main(void) {
  Suite *suites[] = {alloc_suite()};
  return dmlc_test_run_suites(suites, 1);
}
