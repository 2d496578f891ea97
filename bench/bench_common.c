#include "bench_common.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "dmlc/dmlc.h"

void bench_fill_random(const char *type, unsigned char *p, size_t bytes) {
  uint64_t s = 0x2545f4914f6cdd1dull;
  const bool f32 = strcmp(type, "f32") == 0, f16 = strcmp(type, "f16") == 0;
  const size_t esize = f32 ? 4 : f16 ? 2 : 1;
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
    } else {
      p[i] = (unsigned char)r;
    }
  }
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
