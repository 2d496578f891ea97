/* What the benchmark programs share. */
#ifndef DMLC_BENCH_COMMON_H
#define DMLC_BENCH_COMMON_H

#include <stddef.h>

/* Random values with many ties: integers below 1000 (f32, f16) or every
 * byte value (i8), so each long row holds its maximum several times. */
void bench_fill_random(const char *type, unsigned char *p, size_t bytes);

/* Seconds on the monotonic clock. */
double bench_now_s(void);
/* The median of v[0..n) (sorts v). */
double bench_median(double *v, size_t n);

#endif
