#include "fuzz_common.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void fuzz_fail(const char *file, int line, const char *cond, const char *fmt, ...) {
  fprintf(stderr, "%s:%d: fuzz check failed: %s: ", file, line, cond);
  va_list ap;
  va_start(ap, fmt);
  vfprintf(stderr, fmt, ap);
  va_end(ap);
  fputc('\n', stderr);
  abort();
}

uint8_t fuzz_u8(fuzz_reader *r) { return r->pos < r->size ? r->data[r->pos++] : 0; }

uint32_t fuzz_u32(fuzz_reader *r) {
  uint32_t v = 0;
  for (int i = 0; i < 4; i++)
    v |= (uint32_t)fuzz_u8(r) << (8 * i);
  return v;
}

uint64_t fuzz_u64(fuzz_reader *r) {
  const uint64_t lo = fuzz_u32(r);
  return lo | (uint64_t)fuzz_u32(r) << 32;
}

static dmlc_context *context;
static unsigned context_uses;

static void context_release(void) { dmlc_context_destroy(context); }

dmlc_context *fuzz_context(void) {
  if (!context || ++context_uses % 512 == 0) {
    if (!context)
      atexit(context_release);
    dmlc_context_destroy(context);
    context = NULL;
    FUZZ_CHECK(dmlc_context_create(&context) == DMLC_OK, "dmlc_context_create failed");
    /* Two threads: the pool's split and merge paths run, without
     * oversubscribing the machine the fuzzers share. */
    FUZZ_CHECK(dmlc_context_set_num_threads(context, 2) == DMLC_OK, "set_num_threads failed");
    /* A graph of broadcast inputs may stand for gigabytes; the limit makes
     * those clean errors rather than allocations over libFuzzer's. */
    FUZZ_CHECK(dmlc_context_set_memory_limit(context, 256u << 20) == DMLC_OK, "memory limit");
  }
  return context;
}

void fuzz_check_status(dmlc_context *ctx, dmlc_status status, const char *call) {
  if (status == DMLC_OK)
    return;
  FUZZ_CHECK(status != DMLC_ERROR_INTERNAL, "%s: internal error: %s", call,
             dmlc_context_error(ctx));
  FUZZ_CHECK(strcmp(dmlc_status_string(status), "unknown status") != 0, "%s: status %d", call,
             (int)status);
  FUZZ_CHECK(dmlc_context_error(ctx)[0] != '\0', "%s failed (%s) without a message", call,
             dmlc_status_string(status));
}

static uint64_t splitmix(uint64_t *s) {
  uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

/* Bytes biased towards few distinct values, so ties (and equal NaNs) are
 * common, as argmax's interesting cases need. */
static void fill(uint8_t *p, uint64_t n, uint64_t *s) {
  for (uint64_t i = 0; i < n; i++) {
    const uint64_t r = splitmix(s);
    p[i] = (r & 3) == 0 ? (uint8_t)(r >> 8) : (uint8_t)((r >> 8) & 1);
  }
}

typedef struct io_buffers {
  size_t count;
  dmlc_buffer *buf;
} io_buffers;

static uint64_t saturating_add(uint64_t a, uint64_t b) {
  return b > UINT64_MAX - a ? UINT64_MAX : a + b;
}

/* The tensor's logical element count, saturating (a broadcast input of
 * stride 0 may name billions of elements in a few bytes). */
static uint64_t logical_elements(const dmlc_tensor_info *info) {
  uint64_t n = 1;
  for (uint32_t d = 0; d < info->dimension_count && d < DMLC_MAX_RANK; d++) {
    if (info->sizes[d] && n > UINT64_MAX / info->sizes[d])
      return UINT64_MAX;
    n *= info->sizes[d];
  }
  return n;
}

static int alloc_buffers(const dmlc_executable *exe, int outputs, io_buffers *b, uint64_t *total,
                         uint64_t *elements) {
  b->count = outputs ? dmlc_executable_output_count(exe) : dmlc_executable_input_count(exe);
  b->buf = calloc(b->count ? b->count : 1, sizeof *b->buf);
  FUZZ_CHECK(b->buf, "calloc");
  for (size_t i = 0; i < b->count; i++) {
    dmlc_tensor_info info;
    const dmlc_status st = outputs ? dmlc_executable_output_info(exe, i, &info)
                                   : dmlc_executable_input_info(exe, i, &info);
    FUZZ_CHECK(st == DMLC_OK, "tensor info");
    b->buf[i].size_bytes = info.total_size_bytes;
    /* Saturating: a descriptor may declare any TotalTensorSizeInBytes. */
    *total = saturating_add(*total, info.total_size_bytes);
    *elements = saturating_add(*elements, logical_elements(&info));
  }
  return 0;
}

static void free_buffers(io_buffers *b) {
  for (size_t i = 0; i < b->count; i++)
    free(b->buf[i].data);
  free(b->buf);
}

static void materialize(io_buffers *b, uint64_t seed) {
  for (size_t i = 0; i < b->count; i++) {
    /* At least one byte, aligned for any GuaranteedBaseOffsetAlignment a
     * descriptor may name (the API checks it). */
    b->buf[i].data = aligned_alloc(4096, (b->buf[i].size_bytes + 4096) & ~(uint64_t)4095);
    FUZZ_CHECK(b->buf[i].data, "aligned_alloc");
    uint64_t s = seed + i;
    fill(b->buf[i].data, b->buf[i].size_bytes, &s);
  }
}

int fuzz_compare_devices(dmlc_context *ctx, dmlc_graph *graph, uint64_t seed, uint64_t max_bytes) {
  dmlc_executable *ref = NULL, *cpu = NULL;
  dmlc_status st = dmlc_graph_compile(graph, DMLC_DEVICE_REFERENCE, &ref);
  fuzz_check_status(ctx, st, "dmlc_graph_compile(reference)");
  if (st != DMLC_OK)
    return 0;
  st = dmlc_graph_compile(graph, DMLC_DEVICE_CPU, &cpu);
  fuzz_check_status(ctx, st, "dmlc_graph_compile(cpu)");
  /* A graph the reference device accepts, the CPU compiles, unless it is
   * out of memory (a graph too big to hold). */
  FUZZ_CHECK(st == DMLC_OK || st == DMLC_ERROR_OUT_OF_MEMORY || st == DMLC_ERROR_UNSUPPORTED,
             "the reference compiled the graph, the CPU did not: %s", dmlc_context_error(ctx));
  int executed = 0;
  io_buffers in = {0}, out_ref = {0}, out_cpu = {0};
  uint64_t total = 0, elements = 0, ignored = 0;
  if (st == DMLC_OK) {
    alloc_buffers(ref, 0, &in, &total, &elements);
    alloc_buffers(ref, 1, &out_ref, &total, &elements);
    alloc_buffers(ref, 1, &out_cpu, &total, &ignored);
  }
  /* The work is bounded by the elements as well as the bytes: a stride-0
   * input of 2^26 elements in 4 bytes took the reference evaluator 25 s
   * under the fuzzers' instrumentation (libFuzzer's timeout). */
  if (st == DMLC_OK && total <= max_bytes && elements <= max_bytes) {
    materialize(&in, seed);
    materialize(&out_ref, ~seed);
    materialize(&out_cpu, ~seed);
    st = dmlc_execute(ref, in.buf, in.count, out_ref.buf, out_ref.count);
    FUZZ_CHECK(st == DMLC_OK, "reference execute: %s", dmlc_context_error(ctx));
    st = dmlc_execute(cpu, in.buf, in.count, out_cpu.buf, out_cpu.count);
    FUZZ_CHECK(st == DMLC_OK, "cpu execute: %s", dmlc_context_error(ctx));
    for (size_t i = 0; i < out_ref.count; i++) {
      const uint8_t *a = out_ref.buf[i].data, *b = out_cpu.buf[i].data;
      for (uint64_t j = 0; j < out_ref.buf[i].size_bytes; j++)
        FUZZ_CHECK(a[j] == b[j], "output %zu byte %llu: reference 0x%02x, cpu 0x%02x", i,
                   (unsigned long long)j, a[j], b[j]);
    }
    executed = 1;
  }
  free_buffers(&in);
  free_buffers(&out_ref);
  free_buffers(&out_cpu);
  dmlc_executable_destroy(cpu);
  dmlc_executable_destroy(ref);
  return executed;
}
