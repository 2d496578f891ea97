#include "bench_common.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "dmlc/dmlc.h"
#include "runtime/host_alloc.h"

void bench_fill_random(const char *type, unsigned char *p, size_t bytes) {
  uint64_t s = 0x2545f4914f6cdd1dull;
  const bool f32 = strcmp(type, "f32") == 0, f16 = strcmp(type, "f16") == 0;
  const bool i64 = strcmp(type, "i64") == 0, u16 = strcmp(type, "u16") == 0;
  const size_t esize = f32 ? 4 : f16 || u16 ? 2 : i64 ? 8 : 1;
  for (size_t i = 0; i + esize <= bytes; i += esize) {
    s ^= s << 13;
    s ^= s >> 7;
    s ^= s << 17;
    const uint32_t r = (uint32_t)(s >> 20);
    if (f32) {
      const float f = (float)(r % 1000);
      memcpy(p + i, &f, 4);
    } else if (f16) {
      const uint16_t h = dmlc_float_to_half((float)(r % 1000));
      memcpy(p + i, &h, 2);
    } else if (u16) {
      const uint16_t v = (uint16_t)(r % 1000);
      memcpy(p + i, &v, 2);
    } else if (i64) {
      const int64_t v = (int64_t)(r % 1000);
      memcpy(p + i, &v, 8);
    } else {
      p[i] = (unsigned char)r;
    }
  }
}

void *bench_alloc(size_t bytes, int small_pages) {
  const size_t pages = bytes ? (bytes + 4095) / 4096 * 4096 : 4096;
  void *p = small_pages ? aligned_alloc(4096, pages) : dmlc_host_alloc(bytes, 4096);
  if (!p) {
    fprintf(stderr, "out of memory allocating %zu bytes\n", bytes);
    exit(1);
  }
  memset(p, 0, bytes);
  return p;
}

double bench_now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static int compare_doubles(const void *a, const void *b) {
  const double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

double bench_median(double *v, size_t n) {
  qsort(v, n, sizeof *v, compare_doubles);
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

const workload bench_workloads[] = {
    {"argmax_rows", WORK_REDUCE, "f32", "argmax", 2, {8192, 8192}, 1, {1}, 0},
    {"argmax_cols", WORK_REDUCE, "f32", "argmax", 2, {8192, 8192}, 1, {0}, 0},
    {"argmin_mid", WORK_REDUCE, "f32", "argmin", 3, {64, 1024, 1024}, 1, {1}, 0},
    {"argmin_first", WORK_REDUCE, "f32", "argmin", 3, {64, 1024, 1024}, 1, {0}, 0},
    {"hardmax_rows", WORK_HARDMAX, "f32", "hardmax", 2, {8192, 8192}, 1, {1}, 0},
    {"hardmax_cols", WORK_HARDMAX, "f32", "hardmax", 2, {8192, 8192}, 1, {0}, 0},
    {"argmax_all", WORK_REDUCE, "f32", "argmax", 2, {4096, 4096}, 2, {0, 1}, 0},
    {"argmax_i8_rows", WORK_REDUCE, "i8", "argmax", 2, {8192, 8192}, 1, {1}, 0},
    {"argmax_f16_cols", WORK_REDUCE, "f16", "argmax", 2, {8192, 8192}, 1, {0}, 0},
    {"argmax_small", WORK_LATENCY, "f32", "argmax", 2, {1, 1000}, 1, {1}, 0},
    /* issue 12's layouts: non-adjacent axes, channel argmax (NCHW and
     * NHWC), a classifier head, greedy decoding over a vocabulary, other
     * types */
    {"argmin_nonadj", WORK_REDUCE, "f32", "argmin", 3, {256, 512, 256}, 2, {0, 2}, 0},
    {"argmax_nchw_u8", WORK_REDUCE, "u8", "argmax", 4, {16, 3, 1024, 1024}, 1, {1}, 0},
    {"argmax_nchw_f16", WORK_REDUCE, "f16", "argmax", 4, {16, 64, 128, 128}, 1, {1}, 0},
    /* the other channel counts of each type: 3 (an image) and 21 or 64 (a
     * segmentation head's classes, a feature map) */
    {"argmax_nchw3_f32", WORK_REDUCE, "f32", "argmax", 4, {16, 3, 512, 512}, 1, {1}, 0},
    {"argmax_nchw21_f32", WORK_REDUCE, "f32", "argmax", 4, {4, 21, 512, 512}, 1, {1}, 0},
    {"argmax_nchw3_f16", WORK_REDUCE, "f16", "argmax", 4, {16, 3, 1024, 1024}, 1, {1}, 0},
    {"argmax_nchw64_u8", WORK_REDUCE, "u8", "argmax", 4, {16, 64, 256, 256}, 1, {1}, 0},
    {"argmax_nhwc_u8", WORK_REDUCE, "u8", "argmax", 4, {16, 512, 1024, 3}, 1, {3}, 0},
    /* a quantized segmentation head's 21 classes, channels last: rows of
     * 21 bytes (short row groups, emit_row.c) */
    {"argmax_nhwc21_u8", WORK_REDUCE, "u8", "argmax", 4, {16, 512, 512, 21}, 1, {3}, 0},
    {"argmax_head", WORK_REDUCE, "f32", "argmax", 2, {4096, 1000}, 1, {1}, 0},
    /* the same head over a batch read from DRAM (128 MiB) */
    {"argmax_head_batch", WORK_REDUCE, "f32", "argmax", 2, {32768, 1000}, 1, {1}, 0},
    {"argmax_vocab_f32", WORK_REDUCE, "f32", "argmax", 2, {64, 128256}, 1, {1}, 0},
    {"argmax_vocab_f16", WORK_REDUCE, "f16", "argmax", 2, {64, 128256}, 1, {1}, 0},
    {"argmax_vocab8_f32", WORK_REDUCE, "f32", "argmax", 2, {8, 128256}, 1, {1}, 0},
    {"argmax_vocab8_f16", WORK_REDUCE, "f16", "argmax", 2, {8, 128256}, 1, {1}, 0},
    {"argmax_vocab1_f32", WORK_REDUCE, "f32", "argmax", 2, {1, 128256}, 1, {1}, 0},
    {"argmax_vocab1_f16", WORK_REDUCE, "f16", "argmax", 2, {1, 128256}, 1, {1}, 0},
    /* rows of 8000 in rows of 8192 (a padded pitch) */
    {"argmax_padded_rows", WORK_REDUCE, "f32", "argmax", 2, {8192, 8000}, 1, {1}, 192},
    {"argmax_i64_rows", WORK_REDUCE, "i64", "argmax", 2, {4096, 4096}, 1, {1}, 0},
    {"argmax_u16_cols", WORK_REDUCE, "u16", "argmax", 2, {8192, 8192}, 1, {0}, 0},
    /* a detection head's 80 classes for 64 images of 8192 anchors: rows
     * of 80 (medium rows, in groups: emit_row.c) */
    {"argmax_classes_f32", WORK_REDUCE, "f32", "argmax", 2, {524288, 80}, 1, {1}, 0},
    {"argmax_classes_f16", WORK_REDUCE, "f16", "argmax", 2, {524288, 80}, 1, {1}, 0},
};
const size_t bench_num_workloads = sizeof bench_workloads / sizeof bench_workloads[0];

void bench_workload_ir(const workload *w, const uint32_t *sizes, char *out, size_t cap) {
  char shape[64] = "", out_shape[64] = "", axes[32] = "";
  size_t a = 0, b = 0, c = 0;
  for (uint32_t d = 0; d < w->rank; d++) {
    bool reduced = false;
    for (uint32_t k = 0; k < w->num_axes; k++)
      reduced |= w->axes[k] == d;
    a += (size_t)snprintf(shape + a, sizeof shape - a, "%s%u", d ? "," : "", sizes[d]);
    b += (size_t)snprintf(out_shape + b, sizeof out_shape - b, "%s%u", d ? "," : "",
                          reduced && strcmp(w->op, "hardmax") != 0 ? 1u : sizes[d]);
  }
  for (uint32_t k = 0; k < w->num_axes; k++)
    c += (size_t)snprintf(axes + c, sizeof axes - c, "%s%u", k ? ", " : "", w->axes[k]);
  const bool hard = strcmp(w->op, "hardmax") == 0;
  const char *out_type = hard ? w->type : "u32";
  char layout[128] = "";
  if (w->row_pad) {
    /* packed strides, but rows row_pad elements longer */
    uint64_t stride[4], s = 1;
    for (uint32_t d = w->rank; d-- > 0;) {
      stride[d] = s;
      s *= sizes[d] + (d == w->rank - 1 ? w->row_pad : 0);
    }
    size_t l = (size_t)snprintf(layout, sizeof layout, "{strides = [");
    for (uint32_t d = 0; d < w->rank; d++)
      l += (size_t)snprintf(layout + l, sizeof layout - l, "%s%llu", d ? ", " : "",
                            (unsigned long long)stride[d]);
    snprintf(layout + l, sizeof layout - l, "]}");
  }
  snprintf(out, cap,
           "graph @bench(%%x: %s[%s]%s) -> (%s[%s]) {\n"
           "  %%0 = %s %%x {axes = [%s]} : %s[%s]\n"
           "  return %%0\n"
           "}\n",
           w->type, shape, layout, out_type, out_shape, w->op, axes, out_type, out_shape);
}

void bench_workload_name(const workload *w, const uint32_t *sizes, char *out, size_t cap) {
  size_t n = (size_t)snprintf(out, cap, "%s %s [", w->op, w->type);
  for (uint32_t d = 0; d < w->rank && n < cap; d++)
    n += (size_t)snprintf(out + n, cap - n, "%s%u", d ? "," : "", sizes[d]);
  if (n < cap && w->num_axes == w->rank)
    n += (size_t)snprintf(out + n, cap - n, "] all axes");
  else if (n < cap && w->num_axes == 2)
    n += (size_t)snprintf(out + n, cap - n, "] axes %u,%u", w->axes[0], w->axes[1]);
  else if (n < cap)
    n += (size_t)snprintf(out + n, cap - n, "] axis %u", w->axes[0]);
  if (n < cap && w->row_pad)
    n += (size_t)snprintf(out + n, cap - n, ", rows padded to %u", sizes[w->rank - 1] + w->row_pad);
  if (n < cap && w->kind == WORK_LATENCY)
    snprintf(out + n, cap - n, " (latency)");
}
