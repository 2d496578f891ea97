/* The device conformance suite (cts.h): every case of every area, once for
 * each device in dmlc's registry (dmlc_device_count / dmlc_device_at), one
 * Check suite per device, named after it. DMLC_TEST_DEVICE=name runs one
 * device's suite alone (to rerun a failure); CK_RUN_CASE=area picks an area
 * as usual with Check.
 *
 * The cases of one device run before the next device's suite is built: the
 * device under test is a variable of this process that the forked cases
 * inherit. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cts.h"
#include "testutil.h"

static dmlc_device device_under_test = DMLC_DEVICE_DEFAULT;

dmlc_device cts_device(void) { return device_under_test; }

dmlc_device cts_other_device(dmlc_device device) {
  for (size_t i = 0; i < dmlc_device_count(); i++)
    if (dmlc_device_at(i) != device)
      return dmlc_device_at(i);
  ck_abort_msg("only one device is registered: no other device to bind");
  return DMLC_DEVICE_DEFAULT;
}

/* Whether this process loaded Vulkan for its cases (dmlc_test_pin_vulkan). */
static bool vulkan_pinned;

/* lavapipe leaks 128 bytes from a module it unloads, which LeakSanitizer
 * can neither name nor suppress (scripts/sanitize.sh): a process that ran a
 * case on Vulkan, or loaded Vulkan for its cases, skips the leak check at
 * its exit, the others keep it. LeakSanitizer calls this hook at exit, in
 * each forked case too; without the sanitizer it is never called. */
int __lsan_is_turned_off(void);
int __lsan_is_turned_off(void) { return device_under_test == DMLC_DEVICE_VULKAN || vulkan_pinned; }

/* ---- helpers shared by the areas ---- */

static dmlc_context *shared_context;

dmlc_context *cts_context(void) {
  if (!shared_context)
    ck_assert_int_eq(dmlc_context_create(&shared_context), DMLC_OK);
  return shared_context;
}

/* The case's context goes when the case ends (a checked fixture runs in the
 * case's own process), not from an atexit handler: one registered before
 * the context first opens the Vulkan device runs after the Vulkan driver's
 * own exit handlers, and NVIDIA's driver then crashes in vkDestroyDevice
 * (seen on an H200: every case that ran a kernel died of SIGSEGV). */
static void shared_context_destroy(void) {
  dmlc_context_destroy(shared_context);
  shared_context = NULL;
}

TCase *cts_tcase_create(const char *name) {
  TCase *tc = tcase_create(name);
  tcase_add_checked_fixture(tc, NULL, shared_context_destroy);
  return tc;
}

void cts_add_loop(TCase *tc, const TTest *test, int start, int end) {
  const char *share_env = getenv("DMLC_TEST_CASE_SHARE"), *part_env = getenv("DMLC_TEST_CASE_PART");
  const int share = share_env && *share_env ? atoi(share_env) : 1;
  const int part = part_env && *part_env ? atoi(part_env) : -1;
  if (share <= 1 || part < 0) {
    tcase_add_loop_test(tc, test, start, end);
    return;
  }
  for (int i = start; i < end; i++)
    if (i % share == part % share)
      tcase_add_loop_test(tc, test, i, i + 1);
}

dmlc_executable *cts_compile_ir(dmlc_context *ctx, const char *text, dmlc_device device) {
  dmlc_graph *g = NULL;
  const dmlc_status st = dmlc_graph_parse(ctx, text, strlen(text), "cts.dmlir", &g);
  ck_assert_msg(st == DMLC_OK, "parse: %s\n%s", dmlc_context_error(ctx), text);
  dmlc_executable *exe = NULL;
  CTS_CHECK(ctx, dmlc_graph_compile(g, device, &exe), "compile");
  ck_assert_int_eq(dmlc_executable_device(exe), device);
  dmlc_graph_destroy(g);
  return exe;
}

/* A deterministic generator (splitmix64), so failures reproduce. */
static uint64_t mix(uint64_t *state) {
  uint64_t z = (*state += UINT64_C(0x9e3779b97f4a7c15));
  z = (z ^ (z >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
  z = (z ^ (z >> 27)) * UINT64_C(0x94d049bb133111eb);
  return z ^ (z >> 31);
}

/* Few distinct values, so that every reduction meets ties, and the special
 * ones of each kind of type. */
static const uint32_t f32_values[] = {0x7fc00000u, 0xffc00001u, 0x7f800000u, 0xff800000u,
                                      0x00000000u, 0x80000000u, 0x00000001u, 0x3f800000u,
                                      0xbf800000u, 0x40000000u, 0x3f800000u, 0x40000000u};
static const uint16_t f16_values[] = {0x7e00, 0xfe01, 0x7c00, 0xfc00, 0x0000, 0x8000,
                                      0x0001, 0x3c00, 0xbc00, 0x4000, 0x3c00, 0x4000};

void cts_fill(DML_TENSOR_DATA_TYPE type, void *data, uint64_t size, uint64_t seed) {
  const uint32_t esize = dmlc_data_type_size(type);
  ck_assert_uint_gt(esize, 0);
  unsigned char *p = data;
  uint64_t state = seed;
  for (uint64_t at = 0; at + esize <= size; at += esize) {
    const uint64_t r = mix(&state);
    const bool special = r % 5 == 0; /* NaN, infinities, zeros / integer extremes */
    if (type == DML_TENSOR_DATA_TYPE_FLOAT32) {
      const uint32_t v = f32_values[special ? (r >> 8) % 6 : 6 + (r >> 8) % 6];
      memcpy(p + at, &v, 4);
    } else if (type == DML_TENSOR_DATA_TYPE_FLOAT16) {
      const uint16_t v = f16_values[special ? (r >> 8) % 6 : 6 + (r >> 8) % 6];
      memcpy(p + at, &v, 2);
    } else if (type == DML_TENSOR_DATA_TYPE_FLOAT64) {
      const double v = special ? ((r >> 8) % 2 ? -1e300 : 1e300) : (double)((r >> 8) % 4);
      memcpy(p + at, &v, 8);
    } else {
      /* 0..3, or the extremes of both signednesses: all ones, 0x80.., 0x7f.. */
      uint64_t v = (r >> 8) % 4;
      if (special) {
        const uint64_t top = UINT64_C(1) << (8 * esize - 1);
        const uint64_t extremes[3] = {~UINT64_C(0), top, top - 1};
        v = extremes[(r >> 8) % 3];
      }
      memcpy(p + at, &v, esize); /* little-endian: the low bytes */
    }
  }
}

static void *alloc_filled(uint64_t size, int byte) {
  /* 64-byte aligned, so any alignment a binding asks for holds. */
  void *p = aligned_alloc(64, (size + 63) & ~(uint64_t)63);
  ck_assert_ptr_nonnull(p);
  memset(p, byte, size);
  return p;
}

void cts_buffers_make(const dmlc_executable *exe, uint64_t seed, cts_buffers *b) {
  memset(b, 0, sizeof *b);
  b->num_inputs = dmlc_executable_input_count(exe);
  b->num_outputs = dmlc_executable_output_count(exe);
  ck_assert(b->num_inputs <= 8 && b->num_outputs <= 8);
  for (size_t i = 0; i < b->num_inputs; i++) {
    dmlc_tensor_info info;
    ck_assert_int_eq(dmlc_executable_input_info(exe, i, &info), DMLC_OK);
    b->inputs[i].size_bytes = info.total_size_bytes;
    b->inputs[i].data = alloc_filled(info.total_size_bytes, 0);
    cts_fill(info.data_type, b->inputs[i].data, info.total_size_bytes, seed * 31 + i);
  }
  for (size_t i = 0; i < b->num_outputs; i++) {
    dmlc_tensor_info info;
    ck_assert_int_eq(dmlc_executable_output_info(exe, i, &info), DMLC_OK);
    b->outputs[i].size_bytes = info.total_size_bytes;
    b->outputs[i].data = alloc_filled(info.total_size_bytes, CTS_SENTINEL);
  }
}

void cts_buffers_clone(const cts_buffers *from, cts_buffers *to) {
  *to = *from;
  for (size_t i = 0; i < from->num_inputs; i++) {
    to->inputs[i].data = alloc_filled(from->inputs[i].size_bytes, 0);
    memcpy(to->inputs[i].data, from->inputs[i].data, from->inputs[i].size_bytes);
  }
  for (size_t i = 0; i < from->num_outputs; i++)
    to->outputs[i].data = alloc_filled(from->outputs[i].size_bytes, CTS_SENTINEL);
}

void cts_buffers_free(cts_buffers *b) {
  for (size_t i = 0; i < b->num_inputs; i++)
    free(b->inputs[i].data);
  for (size_t i = 0; i < b->num_outputs; i++)
    free(b->outputs[i].data);
  memset(b, 0, sizeof *b);
}

void cts_expect_bytes(const void *got, const void *want, uint64_t size, const char *what) {
  if (size == 0 || memcmp(got, want, size) == 0)
    return; /* (a check per byte would cost a write to Check's pipe each) */
  const unsigned char *g = got, *w = want;
  for (uint64_t i = 0; i < size; i++)
    ck_assert_msg(g[i] == w[i], "%s on %s: byte %llu of %llu is 0x%02x, expected 0x%02x", what,
                  dmlc_device_name(cts_device()), (unsigned long long)i, (unsigned long long)size,
                  g[i], w[i]);
}

void cts_expect_error(dmlc_context *ctx, dmlc_status st, const char *mention, const char *what) {
  const char *msg = dmlc_context_error(ctx);
  ck_assert_msg(st == DMLC_ERROR_INVALID_ARGUMENT,
                "%s on %s: expected DMLC_ERROR_INVALID_ARGUMENT, got %s (%s)", what,
                dmlc_device_name(cts_device()), dmlc_status_string(st), msg);
  ck_assert_msg(msg && *msg, "%s: the context has no message", what);
  ck_assert_msg(!mention || strstr(msg, mention), "%s: the message '%s' does not mention '%s'",
                what, msg, mention);
}

/* ---- the device itself ---- */

/* The registry lists the device once, under its name; past the end is
 * DMLC_DEVICE_DEFAULT; the device describes itself. */
START_TEST(test_device_is_registered_and_described) {
  const dmlc_device device = cts_device();
  size_t seen = 0;
  for (size_t i = 0; i < dmlc_device_count(); i++) {
    const dmlc_device d = dmlc_device_at(i);
    ck_assert_int_ne(d, DMLC_DEVICE_DEFAULT);
    seen += d == device;
    for (size_t j = 0; j < i; j++)
      ck_assert_str_ne(dmlc_device_name(dmlc_device_at(j)), dmlc_device_name(d));
  }
  ck_assert_uint_eq(seen, 1);
  ck_assert_int_eq(dmlc_device_at(dmlc_device_count()), DMLC_DEVICE_DEFAULT);
  ck_assert_int_eq(dmlc_device_at(SIZE_MAX), DMLC_DEVICE_DEFAULT);
  ck_assert_int_eq(dmlc_device_at(0), DMLC_DEVICE_REFERENCE); /* the registry's order */
  dmlc_context *ctx = cts_context();
  char *text = NULL;
  CTS_CHECK(ctx, dmlc_device_describe(ctx, device, &text), "describe");
  ck_assert_msg(text && *text, "%s describes itself as nothing", dmlc_device_name(device));
  dmlc_free(text);
}
END_TEST

/* ---- the suites ---- */

static Suite *device_suite(dmlc_device device) {
  Suite *s = suite_create(dmlc_device_name(device));
  TCase *tc = cts_tcase_create("device");
  tcase_add_test(tc, test_device_is_registered_and_described);
  suite_add_tcase(s, tc);
  cts_add_graph_cases(s, device);
  cts_add_tensor_cases(s, device);
  cts_add_binding_cases(s, device);
  cts_add_semantics_cases(s, device);
  return s;
}

static double seconds_now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

int main(void) {
  const char *only = getenv("DMLC_TEST_DEVICE");
  if (only && !*only)
    only = NULL;
  int ran = 0, failed = 0;
  for (size_t i = 0; i < dmlc_device_count(); i++) {
    const dmlc_device device = dmlc_device_at(i);
    if (only && strcmp(only, dmlc_device_name(device)) != 0)
      continue;
    device_under_test = device;
    if (device == DMLC_DEVICE_VULKAN)
      vulkan_pinned = dmlc_test_pin_vulkan(); /* (once: the registry lists it once) */
    const double start = seconds_now();
    SRunner *runner = srunner_create(device_suite(device));
    srunner_run_all(runner, CK_NORMAL);
    const int device_failed = srunner_ntests_failed(runner);
    printf("cts: %s: %d cases, %d failed, %.1f s\n", dmlc_device_name(device),
           srunner_ntests_run(runner), device_failed, seconds_now() - start);
    fflush(stdout);
    srunner_free(runner);
    failed += device_failed;
    ran++;
  }
  device_under_test = DMLC_DEVICE_DEFAULT;
  if (!ran) {
    fprintf(stderr, "DMLC_TEST_DEVICE=%s names no registered device; registered:", only);
    for (size_t i = 0; i < dmlc_device_count(); i++)
      fprintf(stderr, " %s", dmlc_device_name(dmlc_device_at(i)));
    fprintf(stderr, "\n");
    return EXIT_FAILURE;
  }
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
