/* What the benchmark programs share. */
#ifndef DMLC_BENCH_COMMON_H
#define DMLC_BENCH_COMMON_H

#include <stddef.h>
#include <stdint.h>

/* ---- the workloads (bench_cpu, bench_vulkan; ids shared with
 * numpy_bench.py) ---- */

typedef enum work_kind {
  WORK_REDUCE,  /* reads its input; compared with the read bandwidth */
  WORK_HARDMAX, /* reads and writes as much; compared with read + write */
  WORK_LATENCY, /* one small call; compared with a time */
} work_kind;

typedef struct workload {
  const char *id;
  work_kind kind;
  const char *type; /* IR spelling of the input type */
  const char *op;
  uint32_t rank;
  uint32_t sizes[4];
  uint32_t num_axes;
  uint32_t axes[2];
  /* Elements of padding after each row (the last dim): the input's
   * second-to-last stride is sizes[rank - 1] + row_pad; 0: packed. */
  uint32_t row_pad;
} workload;

extern const workload bench_workloads[];
extern const size_t bench_num_workloads;

/* The IR text of w at sizes (as run: --quick and scaling shrink them). */
void bench_workload_ir(const workload *w, const uint32_t *sizes, char *out, size_t cap);
/* "argmax f32 [8192,8192] axis 1", with the sizes as run. */
void bench_workload_name(const workload *w, const uint32_t *sizes, char *out, size_t cap);

/* Random values with many ties: integers below 1000 (f32, f16, i64, u16)
 * or every byte value (i8, u8), so each long row holds its maximum several
 * times. */
void bench_fill_random(const char *type, unsigned char *p, size_t bytes);

/* A zeroed buffer of bytes (rounded up to a page) for a workload's input or
 * output; exits with a message when out of memory. From 4 MiB on it is on
 * huge pages as dmlc's CPU tensors are (dmlc_host_alloc) and NumPy's
 * arrays, unless small_pages: then on 4 KiB pages, as plain aligned_alloc
 * gives. */
void *bench_alloc(size_t bytes, int small_pages);

/* Seconds on the monotonic clock. */
double bench_now_s(void);
/* The median of v[0..n) (sorts v). */
double bench_median(double *v, size_t n);

#endif
