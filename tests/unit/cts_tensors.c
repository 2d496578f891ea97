/* The conformance suite's tensors (cts.h): memory on the device under
 * test — create, size, device, map, write and read (whole and in part, at
 * any offset) — and executes that bind tensors: the same bytes as the
 * host-buffer path for every graph of cts_graphs.c, gaps of strided outputs
 * keeping what they held, tensors reused across executes, and chains where
 * one executable's output tensor is the next one's input. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cts.h"

static dmlc_tensor *tensor_make(dmlc_context *ctx, uint64_t size) {
  dmlc_tensor *t = NULL;
  CTS_CHECK(ctx, dmlc_tensor_create(ctx, cts_device(), size, &t), "tensor create");
  ck_assert_ptr_nonnull(t);
  ck_assert_uint_eq(dmlc_tensor_size(t), size);
  ck_assert_int_eq(dmlc_tensor_device(t), cts_device());
  return t;
}

static void tensor_write_all(dmlc_context *ctx, dmlc_tensor *t, const void *src) {
  CTS_CHECK(ctx, dmlc_tensor_write(t, 0, src, dmlc_tensor_size(t)), "tensor write");
}

/* The tensor's bytes, malloc'ed. */
static unsigned char *tensor_read_all(dmlc_context *ctx, const dmlc_tensor *t) {
  unsigned char *p = malloc(dmlc_tensor_size(t));
  ck_assert_ptr_nonnull(p);
  CTS_CHECK(ctx, dmlc_tensor_read(t, 0, p, dmlc_tensor_size(t)), "tensor read");
  return p;
}

static void expect_tensor_bytes(dmlc_context *ctx, const dmlc_tensor *t, const void *want,
                                const char *what) {
  unsigned char *got = tensor_read_all(ctx, t);
  cts_expect_bytes(got, want, dmlc_tensor_size(t), what);
  free(got);
}

static void fill_pattern(unsigned char *p, uint64_t size, unsigned salt) {
  for (uint64_t i = 0; i < size; i++)
    p[i] = (unsigned char)(i * 13 + salt);
}

/* ---- tensors alone ---- */

/* Created zeroed, of the size asked; on a device whose tensors are host
 * memory (the reference and the CPU, by the header), map shows the same
 * bytes that write and read move, and a tensor of 4 MiB or more starts on
 * a 2 MiB boundary (where huge pages can back it). */
START_TEST(test_tensor_create_and_query) {
  static const uint64_t sizes[] = {
      1, 3, 100, 4096 + 5, UINT64_C(1) << 20, (UINT64_C(4) << 20) - 1, (UINT64_C(5) << 20) + 3};
  dmlc_context *ctx = cts_context();
  for (size_t k = 0; k < sizeof sizes / sizeof sizes[0]; k++) {
    dmlc_tensor *t = tensor_make(ctx, sizes[k]);
    unsigned char *zero = calloc(1, sizes[k]), *pattern = malloc(sizes[k]);
    ck_assert(zero && pattern);
    expect_tensor_bytes(ctx, t, zero, "a new tensor");
    unsigned char *mapped = dmlc_tensor_map(t);
    const bool host_memory =
        cts_device() == DMLC_DEVICE_REFERENCE || cts_device() == DMLC_DEVICE_CPU;
    ck_assert_msg(!host_memory || mapped, "map of a %s tensor is NULL",
                  dmlc_device_name(cts_device()));
    const uintptr_t want_align = sizes[k] >= (UINT64_C(4) << 20) ? 2u << 20 : 4096u;
    ck_assert_msg(!mapped || (uintptr_t)mapped % want_align == 0,
                  "a tensor of %llu bytes at %p, not a multiple of %lu",
                  (unsigned long long)sizes[k], (void *)mapped, (unsigned long)want_align);
    fill_pattern(pattern, sizes[k], (unsigned)k);
    tensor_write_all(ctx, t, pattern);
    expect_tensor_bytes(ctx, t, pattern, "a written tensor");
    if (mapped) {
      cts_expect_bytes(mapped, pattern, sizes[k], "the mapped bytes after a write");
      ck_assert_ptr_eq(dmlc_tensor_map(t), mapped);
      mapped[sizes[k] - 1] ^= 0xff;
      pattern[sizes[k] - 1] ^= 0xff;
      expect_tensor_bytes(ctx, t, pattern, "a read after a store through map");
    }
    dmlc_tensor_destroy(t);
    free(zero);
    free(pattern);
  }
  dmlc_tensor_destroy(NULL);
}
END_TEST

/* Writes and reads of any part, at any offset, against a host model. */
START_TEST(test_tensor_partial_write_read) {
  enum { SIZE = 1000 };
  static const struct {
    uint64_t offset, size;
  } writes[] = {{0, SIZE}, {3, 13}, {999, 1}, {0, 1}, {500, 500}, {1, 998},
                {1000, 0}, {0, 0},  {7, 0},   {4, 8}, {333, 334}};
  dmlc_context *ctx = cts_context();
  dmlc_tensor *t = tensor_make(ctx, SIZE);
  unsigned char model[SIZE] = {0}, chunk[SIZE], got[SIZE + 2];
  for (size_t k = 0; k < sizeof writes / sizeof writes[0]; k++) {
    fill_pattern(chunk, writes[k].size, (unsigned)(k * 29 + 1));
    CTS_CHECK(ctx, dmlc_tensor_write(t, writes[k].offset, chunk, writes[k].size), "partial write");
    memcpy(model + writes[k].offset, chunk, writes[k].size);
    char what[96];
    snprintf(what, sizeof what, "after writing %llu bytes at %llu",
             (unsigned long long)writes[k].size, (unsigned long long)writes[k].offset);
    expect_tensor_bytes(ctx, t, model, what);
    /* and read back in parts: the written range, and around it */
    CTS_CHECK(ctx, dmlc_tensor_read(t, writes[k].offset, got, writes[k].size), "partial read");
    cts_expect_bytes(got, model + writes[k].offset, writes[k].size, what);
    const uint64_t from = writes[k].offset > 5 ? writes[k].offset - 5 : 0;
    const uint64_t to =
        writes[k].offset + writes[k].size + 5 < SIZE ? writes[k].offset + writes[k].size + 5 : SIZE;
    memset(got, 0x5a, sizeof got);
    CTS_CHECK(ctx, dmlc_tensor_read(t, from, got + 1, to - from), "partial read");
    cts_expect_bytes(got + 1, model + from, to - from, what);
    ck_assert_uint_eq(got[0], 0x5a);             /* nothing before dst ... */
    ck_assert_uint_eq(got[to - from + 1], 0x5a); /* ... or after it is written */
  }
  dmlc_tensor_destroy(t);
}
END_TEST

/* ---- executes with tensors ---- */

typedef struct bound_tensors {
  size_t num_inputs, num_outputs;
  dmlc_tensor *inputs[8], *outputs[8];
} bound_tensors;

/* One tensor per binding of b, holding b's bytes. */
static void tensors_from_buffers(dmlc_context *ctx, const cts_buffers *b, bound_tensors *t) {
  t->num_inputs = b->num_inputs;
  t->num_outputs = b->num_outputs;
  for (size_t i = 0; i < b->num_inputs; i++) {
    t->inputs[i] = tensor_make(ctx, b->inputs[i].size_bytes);
    tensor_write_all(ctx, t->inputs[i], b->inputs[i].data);
  }
  for (size_t i = 0; i < b->num_outputs; i++) {
    t->outputs[i] = tensor_make(ctx, b->outputs[i].size_bytes);
    tensor_write_all(ctx, t->outputs[i], b->outputs[i].data);
  }
}

static void bound_tensors_destroy(bound_tensors *t) {
  for (size_t i = 0; i < t->num_inputs; i++)
    dmlc_tensor_destroy(t->inputs[i]);
  for (size_t i = 0; i < t->num_outputs; i++)
    dmlc_tensor_destroy(t->outputs[i]);
}

/* Every tensor holds the bytes of its buffer in b. */
static void expect_tensors_match(dmlc_context *ctx, const bound_tensors *t, const cts_buffers *b,
                                 const char *what) {
  char label[128];
  for (size_t i = 0; i < b->num_inputs; i++) {
    snprintf(label, sizeof label, "%s: input tensor %zu", what, i);
    expect_tensor_bytes(ctx, t->inputs[i], b->inputs[i].data, label);
  }
  for (size_t i = 0; i < b->num_outputs; i++) {
    snprintf(label, sizeof label, "%s: output tensor %zu", what, i);
    expect_tensor_bytes(ctx, t->outputs[i], b->outputs[i].data, label);
  }
}

/* Each graph, with tensors, as with host buffers; then again through the
 * same tensors, with new inputs written and the outputs' bytes (gaps
 * included) overwritten with a pattern that the gaps must keep. */
START_TEST(test_execute_tensors_matches_host) {
  dmlc_context *ctx = cts_context();
  dmlc_executable *exe = cts_compile_ir(ctx, cts_graph_text((size_t)_i), cts_device());
  cts_buffers host;
  cts_buffers_make(exe, 11, &host);
  bound_tensors t;
  tensors_from_buffers(ctx, &host, &t);
  CTS_CHECK(ctx, dmlc_execute(exe, host.inputs, host.num_inputs, host.outputs, host.num_outputs),
            "execute");
  CTS_CHECK(ctx, dmlc_execute_tensors(exe, t.inputs, t.num_inputs, t.outputs, t.num_outputs),
            "execute with tensors");
  expect_tensors_match(ctx, &t, &host, "first execute");

  cts_buffers again;
  cts_buffers_make(exe, 12, &again);
  for (size_t i = 0; i < again.num_inputs; i++)
    tensor_write_all(ctx, t.inputs[i], again.inputs[i].data);
  for (size_t i = 0; i < again.num_outputs; i++) {
    fill_pattern(again.outputs[i].data, again.outputs[i].size_bytes, (unsigned)i + 3);
    tensor_write_all(ctx, t.outputs[i], again.outputs[i].data);
  }
  CTS_CHECK(ctx, dmlc_execute_tensors(exe, t.inputs, t.num_inputs, t.outputs, t.num_outputs),
            "execute with tensors, again");
  CTS_CHECK(ctx,
            dmlc_execute(exe, again.inputs, again.num_inputs, again.outputs, again.num_outputs),
            "execute, again");
  expect_tensors_match(ctx, &t, &again, "second execute, patterned outputs");
  bound_tensors_destroy(&t);
  cts_buffers_free(&host);
  cts_buffers_free(&again);
  dmlc_executable_destroy(exe);
}
END_TEST

/* x -> hardmax -> (a padded intermediate) -> argmax -> reshape + cast:
 * each executable's output tensor is the next one's input, never read back
 * until the end; the same steps with host buffers on the reference give the
 * same bytes, and argmax(hardmax(x)) == argmax(x). */
static const char *const chain_hardmax =
    "graph @hard(%x: f32[4,6]) -> (f32[4,6]{strides = [8, 1]}) {\n"
    "  %0 = hardmax %x {axes = [1]} : f32[4,6]\n"
    "  return %0\n"
    "}\n";
static const char *const chain_argmax =
    "graph @index(%h: f32[4,6]{strides = [8, 1]}) -> (u32[4,1]) {\n"
    "  %0 = argmax %h {axes = [1]} : u32[4,1]\n"
    "  return %0\n"
    "}\n";
static const char *const chain_widen = "graph @widen(%i: u32[4,1]) -> (i64[4]) {\n"
                                       "  %0 = reshape %i : u32[4]\n"
                                       "  %1 = cast %0 : i64[4]\n"
                                       "  return %1\n"
                                       "}\n";
static const char *const chain_direct = "graph @direct(%x: f32[4,6]) -> (u32[4,1]) {\n"
                                        "  %0 = argmax %x {axes = [1]} : u32[4,1]\n"
                                        "  return %0\n"
                                        "}\n";

START_TEST(test_chained_executes) {
  dmlc_context *ctx = cts_context();
  const char *const texts[] = {chain_hardmax, chain_argmax, chain_widen, chain_direct};
  dmlc_executable *exe[4], *ref[4];
  for (int k = 0; k < 4; k++) {
    exe[k] = cts_compile_ir(ctx, texts[k], cts_device());
    ref[k] = cts_compile_ir(ctx, texts[k], DMLC_DEVICE_REFERENCE);
  }
  /* Host buffers, on the reference: x, h (32 floats, padded), i, w, j. */
  cts_buffers b0;
  cts_buffers_make(ref[0], 21 + (uint64_t)_i, &b0);
  float x[24], h[32];
  uint32_t i[4], j[4];
  int64_t w[4];
  memcpy(x, b0.inputs[0].data, sizeof x);
  memset(h, CTS_SENTINEL, sizeof h);
  const dmlc_buffer bx = {x, sizeof x}, bh = {h, 4 * 30}, bi = {i, sizeof i}, bw = {w, sizeof w},
                    bj = {j, sizeof j};
  CTS_CHECK(ctx, dmlc_execute(ref[0], &bx, 1, &bh, 1), "hardmax on the reference");
  CTS_CHECK(ctx, dmlc_execute(ref[1], &bh, 1, &bi, 1), "argmax on the reference");
  CTS_CHECK(ctx, dmlc_execute(ref[2], &bi, 1, &bw, 1), "widen on the reference");
  CTS_CHECK(ctx, dmlc_execute(ref[3], &bx, 1, &bj, 1), "direct argmax on the reference");
  ck_assert_mem_eq(i, j, sizeof i);

  /* The same chain with tensors on the device under test. */
  dmlc_tensor *tx = tensor_make(ctx, sizeof x), *th = tensor_make(ctx, 4 * 30),
              *ti = tensor_make(ctx, sizeof i), *tw = tensor_make(ctx, sizeof w),
              *tj = tensor_make(ctx, sizeof j);
  unsigned char sentinel[4 * 30];
  memset(sentinel, CTS_SENTINEL, sizeof sentinel);
  tensor_write_all(ctx, tx, x);
  tensor_write_all(ctx, th, sentinel);
  CTS_CHECK(ctx, dmlc_execute_tensors(exe[0], &tx, 1, &th, 1), "hardmax");
  CTS_CHECK(ctx, dmlc_execute_tensors(exe[1], &th, 1, &ti, 1), "argmax of the hardmax");
  CTS_CHECK(ctx, dmlc_execute_tensors(exe[2], &ti, 1, &tw, 1), "widen the argmax");
  CTS_CHECK(ctx, dmlc_execute_tensors(exe[3], &tx, 1, &tj, 1), "argmax");
  expect_tensor_bytes(ctx, tw, w, "the end of the chain");
  expect_tensor_bytes(ctx, th, h, "the hardmax (gaps included)");
  expect_tensor_bytes(ctx, ti, i, "argmax of the hardmax");
  expect_tensor_bytes(ctx, tj, j, "argmax");
  expect_tensor_bytes(ctx, tx, x, "the input (never written)");
  for (int k = 0; k < 4; k++) {
    dmlc_executable_destroy(exe[k]);
    dmlc_executable_destroy(ref[k]);
  }
  dmlc_tensor_destroy(tx);
  dmlc_tensor_destroy(th);
  dmlc_tensor_destroy(ti);
  dmlc_tensor_destroy(tw);
  dmlc_tensor_destroy(tj);
  cts_buffers_free(&b0);
}
END_TEST

/* One tensor bound to two inputs (only outputs must not alias); tensors
 * larger than their bindings, whose extra bytes are left alone. */
START_TEST(test_shared_and_larger_tensors) {
  static const char *const text =
      "graph @two(%x: f32[3,5], %y: f32[3,5]) -> (u32[3,1], i64[1,5]) {\n"
      "  %0 = argmax %x {axes = [1]} : u32[3,1]\n"
      "  %1 = argmin %y {axes = [0], direction = decreasing} : i64[1,5]\n"
      "  return %0, %1\n"
      "}\n";
  dmlc_context *ctx = cts_context();
  dmlc_executable *exe = cts_compile_ir(ctx, text, cts_device());
  enum { EXTRA = 37 };
  float x[15 + EXTRA];
  cts_fill(DML_TENSOR_DATA_TYPE_FLOAT32, x, sizeof x, 5);
  unsigned char o0[12 + EXTRA], o1[40 + EXTRA];
  memset(o0, CTS_SENTINEL, sizeof o0);
  fill_pattern(o1, sizeof o1, 9);
  dmlc_tensor *tx = tensor_make(ctx, sizeof x), *t0 = tensor_make(ctx, sizeof o0),
              *t1 = tensor_make(ctx, sizeof o1);
  tensor_write_all(ctx, tx, x);
  tensor_write_all(ctx, t0, o0);
  tensor_write_all(ctx, t1, o1);
  dmlc_tensor *const in[2] = {tx, tx}, *const out[2] = {t0, t1};
  CTS_CHECK(ctx, dmlc_execute_tensors(exe, in, 2, out, 2), "execute with one tensor twice");
  const dmlc_buffer bin[2] = {{x, sizeof x}, {x, sizeof x}},
                    bout[2] = {{o0, sizeof o0}, {o1, sizeof o1}};
  CTS_CHECK(ctx, dmlc_execute(exe, bin, 2, bout, 2), "execute with one buffer twice");
  expect_tensor_bytes(ctx, t0, o0, "output 0");
  expect_tensor_bytes(ctx, t1, o1, "output 1");
  for (size_t k = 12; k < sizeof o0; k++)
    ck_assert_uint_eq(o0[k], CTS_SENTINEL);
  dmlc_tensor_destroy(tx);
  dmlc_tensor_destroy(t0);
  dmlc_tensor_destroy(t1);
  dmlc_executable_destroy(exe);
}
END_TEST

/* "A tensor starts at its allocation, aligned to at least 4096 bytes":
 * any GuaranteedBaseOffsetAlignment up to a page holds by construction. */
START_TEST(test_tensor_meets_any_alignment) {
  static const char *const text =
      "graph @aligned(%x: f32[16]{align = 4096}) -> (u32[1]{align = 1024}) {\n"
      "  %0 = argmax %x {axes = [0]} : u32[1]\n"
      "  return %0\n"
      "}\n";
  dmlc_context *ctx = cts_context();
  dmlc_executable *exe = cts_compile_ir(ctx, text, cts_device());
  float *x = aligned_alloc(4096, 4096);
  uint32_t *o = aligned_alloc(4096, 4096);
  ck_assert(x && o);
  cts_fill(DML_TENSOR_DATA_TYPE_FLOAT32, x, 64, 17);
  dmlc_tensor *tx = tensor_make(ctx, 64), *to = tensor_make(ctx, 4);
  tensor_write_all(ctx, tx, x);
  CTS_CHECK(ctx, dmlc_execute_tensors(exe, &tx, 1, &to, 1), "execute with tensors");
  const dmlc_buffer bx = {x, 64}, bo = {o, 4};
  CTS_CHECK(ctx, dmlc_execute(exe, &bx, 1, &bo, 1), "execute");
  expect_tensor_bytes(ctx, to, o, "output");
  dmlc_tensor_destroy(tx);
  dmlc_tensor_destroy(to);
  free(x);
  free(o);
  dmlc_executable_destroy(exe);
}
END_TEST

void cts_add_tensor_cases(Suite *s, dmlc_device device) {
  (void)device;
  TCase *tc = cts_tcase_create("tensors");
  tcase_add_test(tc, test_tensor_create_and_query);
  tcase_add_test(tc, test_tensor_partial_write_read);
  cts_add_loop(tc, test_execute_tensors_matches_host, 0, (int)cts_graph_count());
  cts_add_loop(tc, test_chained_executes, 0, 3);
  tcase_add_test(tc, test_shared_and_larger_tensors);
  tcase_add_test(tc, test_tensor_meets_any_alignment);
  suite_add_tcase(s, tc);
}
