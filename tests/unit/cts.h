/* The device conformance suite (as IREE's HAL CTS, or ggml's
 * test-backend-ops): one source of test cases, instantiated by
 * test_device.c for every device in dmlc's registry, so that a new device
 * gets every case by being registered. Each area (a cts_*.c file) adds its
 * test cases to a device's suite; they run on cts_device() and compare
 * with the reference device byte for byte, or with known answers.
 *
 * A device that answers DMLC_ERROR_UNSUPPORTED or DMLC_ERROR_DEVICE fails
 * the case: a conformance case never skips itself into a pass. */
#ifndef DMLC_TESTS_CTS_H
#define DMLC_TESTS_CTS_H

#include <check.h>
#include <stdbool.h>
#include <stdint.h>

#include "dmlc/dmlc.h"

/* Bytes an output buffer or tensor is filled with before a run, so that a
 * byte the device should not write (a gap of a strided output, anything
 * when a call fails) is seen to keep it. */
#define CTS_SENTINEL 0xab

/* The device under test. test_device.c sets it before it runs that
 * device's suite; the cases, each in a forked process, inherit it. */
dmlc_device cts_device(void);
/* A registered device other than `device` (the reference, or the CPU for
 * the reference): to bind a tensor of the wrong device. */
dmlc_device cts_other_device(dmlc_device device);

/* One context per process (each case forks), destroyed as the case ends
 * (cts_tcase_create), so the CPU's JIT and the Vulkan device are created
 * once per case. */
dmlc_context *cts_context(void);
/* A test case whose cases destroy cts_context's context as they end. */
TCase *cts_tcase_create(const char *name);
/* Adds iterations [start, end) of a loop case, as tcase_add_loop_test; with
 * DMLC_TEST_CASE_SHARE=N and DMLC_TEST_CASE_PART=K both set, only those
 * whose number is K modulo N (scripts/sanitize.sh: N = 2 for the Vulkan
 * variants of the suite under ASan, K = 0, 1 and 2 for windows, split and
 * unmapped, so split runs the odd ones and the other two the even ones;
 * the plain run has run them all). */
void cts_add_loop(TCase *tc, const TTest *test, int start, int end);

/* Fails the case unless st is DMLC_OK, with what was being done and the
 * context's message. */
#define CTS_CHECK(ctx, st, what)                                                                   \
  do {                                                                                             \
    const dmlc_status cts_st_ = (st);                                                              \
    ck_assert_msg(cts_st_ == DMLC_OK, "%s on %s: %s: %s", (what), dmlc_device_name(cts_device()),  \
                  dmlc_status_string(cts_st_), dmlc_context_error(ctx));                           \
  } while (0)

/* Parses IR text and compiles it for device. */
dmlc_executable *cts_compile_ir(dmlc_context *ctx, const char *text, dmlc_device device);

/* Host buffers for every binding of an executable: inputs filled by
 * cts_fill (a seeded mix of ordinary and special values: ties, NaN, +-0,
 * infinities, integer extremes), outputs with CTS_SENTINEL. */
typedef struct cts_buffers {
  size_t num_inputs, num_outputs;
  dmlc_buffer inputs[8], outputs[8];
} cts_buffers;
void cts_buffers_make(const dmlc_executable *exe, uint64_t seed, cts_buffers *b);
/* A copy of b's inputs, and fresh sentinel-filled outputs of the same sizes. */
void cts_buffers_clone(const cts_buffers *from, cts_buffers *to);
void cts_buffers_free(cts_buffers *b);
/* Fills size bytes for elements of type with the seeded mix. */
void cts_fill(DML_TENSOR_DATA_TYPE type, void *data, uint64_t size, uint64_t seed);
/* Fails the case where two buffers differ, naming the first byte that does. */
void cts_expect_bytes(const void *got, const void *want, uint64_t size, const char *what);

/* The message of the last failed call on ctx must be non-empty and name
 * `mention` (a binding, a function, ...). */
void cts_expect_error(dmlc_context *ctx, dmlc_status st, const char *mention, const char *what);

/* The graphs (IR text) the areas run: every layout, type and operator,
 * small enough for lavapipe under the validation layer (cts_graphs.c). */
size_t cts_graph_count(void);
const char *cts_graph_text(size_t index);
/* Runs exe and ref (the same graph on the reference device) on buffers of
 * the same seeded contents and compares every output buffer, gaps
 * included, and every input (never written), byte for byte. */
void cts_expect_matches_reference(dmlc_executable *exe, dmlc_executable *ref, uint64_t seed,
                                  const char *what);

/* The areas. `device` is the device of the suite being built. */
void cts_add_graph_cases(Suite *s, dmlc_device device);
void cts_add_tensor_cases(Suite *s, dmlc_device device);
void cts_add_binding_cases(Suite *s, dmlc_device device);
void cts_add_semantics_cases(Suite *s, dmlc_device device);

#endif
