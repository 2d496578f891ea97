/* A model of a column reduction read from DRAM (argmax f32 [8192,8192] over
 * axis 0, as bench_cpu's "argmax f32 [8192,8192] axis 0"), to tell what
 * costs the column kernel its distance from a plain read: the order of the
 * reads, the compares, or the accumulators' trips through memory. Each form
 * reads the same 256 MiB on two threads (each half the rows), on huge pages;
 * the forms alternate round by round and each prints its best and median
 * time and the plain read's over its own (1.00: as fast as the plain read).
 *
 *   plain    one sequential stream a thread, four max accumulators
 *   loads    8 rows in lockstep, 32 KiB of each row a run (the kernel's
 *            reads), each row's max in a register of its own
 *   chain    the same reads through the kernel's compare-and-select chain
 *            (8 rows merged into a (value, index) pair of vectors in turn),
 *            the pairs of 4 column vectors kept in registers across the run
 *            (the work and the reads, without the accumulators' trips: not
 *            the columns' answer)
 *   kernel   the kernel's form: per group of 8 rows, each column vector's
 *            (value, index) accumulators loaded from the block's 64 KiB of
 *            stack arrays (L2), merged with the 8 rows, stored back
 *   loads_s  loads, each of a trip's 8 rows from a sequential stream of
 *            its own (the `8s` loops' reads)
 *   kmax     the kernel's form with the values alone (one MAXPS a row)
 *   kfast    the kernel's form, the value by MAXPS and the take by one
 *            ordered compare (exact without NaNs)
 *   kstream  the kernel's form over loads_s's streams, each trip merged
 *            into the accumulators by value, then index
 *   walk     every row in storage order, its vectors merged into the
 *            accumulators (one stream a thread; masked stores)
 *
 * Needs AVX-512 (prints so and exits 0 where the CPU lacks it). Not a test:
 * run by hand, `build-bench/bin/model_columns [rounds]`; docs/performance.md
 * (the thirty-ninth and forty-fifth sessions) has its figures. */
#include <immintrin.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

enum { ROWS = 8192, COLS = 8192, FORMS = 9, MAX_ROUNDS = 101 };

static float *x;
static float acc_v[2][COLS] __attribute__((aligned(64)));
static uint32_t acc_i[2][COLS] __attribute__((aligned(64)));
static volatile float sink[2];

#define AVX512 __attribute__((target("avx512f")))

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static const float *row_at(int r) { return x + (size_t)r * COLS; }

AVX512 static void plain(int t) {
  const float *p = row_at(t * (ROWS / 2));
  const size_t n = (size_t)(ROWS / 2) * COLS;
  __m512 a = _mm512_set1_ps(-1e30f), b = a, c = a, d = a;
  for (size_t i = 0; i < n; i += 64) {
    a = _mm512_max_ps(a, _mm512_load_ps(p + i));
    b = _mm512_max_ps(b, _mm512_load_ps(p + i + 16));
    c = _mm512_max_ps(c, _mm512_load_ps(p + i + 32));
    d = _mm512_max_ps(d, _mm512_load_ps(p + i + 48));
  }
  sink[t] = _mm512_reduce_max_ps(_mm512_max_ps(_mm512_max_ps(a, b), _mm512_max_ps(c, d)));
}

/* The 8 rows of a group, written out so every vector stays a register. */
#define EIGHT(X) X(0) X(1) X(2) X(3) X(4) X(5) X(6) X(7)

AVX512 static void loads(int t) {
  const int r0 = t * (ROWS / 2), r1 = r0 + ROWS / 2;
#define DECL(j) __m512 m##j = _mm512_set1_ps(-1e30f);
  EIGHT(DECL)
#undef DECL
  for (int r = r0; r + 8 <= r1; r += 8) {
    const float *q = row_at(r);
    for (int v = 0; v < COLS; v += 16) {
#define LOAD(j) m##j = _mm512_max_ps(m##j, _mm512_load_ps(q + (size_t)(j)*COLS + v));
      EIGHT(LOAD)
#undef LOAD
    }
  }
  __m512 s = _mm512_max_ps(_mm512_max_ps(_mm512_max_ps(m0, m1), _mm512_max_ps(m2, m3)),
                           _mm512_max_ps(_mm512_max_ps(m4, m5), _mm512_max_ps(m6, m7)));
  sink[t] = _mm512_reduce_max_ps(s);
}

/* Row j of the group at q merged into (a, ix) by the sequential rule. */
#define TAKE(a, ix, q, j, v, r)                                                                    \
  do {                                                                                             \
    const __m512 xv = _mm512_load_ps((q) + (size_t)(j)*COLS + (v));                                \
    const __mmask16 k = _mm512_cmp_ps_mask(xv, a, _CMP_GT_OQ);                                     \
    a = _mm512_mask_mov_ps(a, k, xv);                                                              \
    ix = _mm512_mask_mov_epi32(ix, k, _mm512_set1_epi32((r) + (j)));                               \
  } while (0)

AVX512 static void chain(int t) {
  const int r0 = t * (ROWS / 2), r1 = r0 + ROWS / 2;
  __m512 a0 = _mm512_set1_ps(-1e30f), a1 = a0, a2 = a0, a3 = a0;
  __m512i i0 = _mm512_setzero_si512(), i1 = i0, i2 = i0, i3 = i0;
  for (int r = r0; r + 8 <= r1; r += 8) {
    const float *q = row_at(r);
    for (int v = 0; v < COLS; v += 64) {
#define ROW4(j)                                                                                    \
  TAKE(a0, i0, q, j, v, r);                                                                        \
  TAKE(a1, i1, q, j, v + 16, r);                                                                   \
  TAKE(a2, i2, q, j, v + 32, r);                                                                   \
  TAKE(a3, i3, q, j, v + 48, r);
      EIGHT(ROW4)
#undef ROW4
    }
  }
  const __m512i is = _mm512_add_epi32(_mm512_add_epi32(i0, i1), _mm512_add_epi32(i2, i3));
  sink[t] = _mm512_reduce_max_ps(_mm512_max_ps(_mm512_max_ps(a0, a1), _mm512_max_ps(a2, a3))) +
            (float)_mm512_reduce_add_epi32(is);
}

/* Thread t's accumulators, emptied. */
AVX512 static void reset_accumulators(int t) {
  for (int v = 0; v < COLS; v += 16) {
    _mm512_store_ps(acc_v[t] + v, _mm512_set1_ps(-1e30f));
    _mm512_store_si512(acc_i[t] + v, _mm512_setzero_si512());
  }
}

/* The kernel's form: per group of 8 rows, each column vector's (value,
 * index) accumulators loaded, ROWSTEP(j) merging row j of the group (at q,
 * rows r..) into (a, ix), stored back. */
#define KERNEL_FORM(NAME, ROWSTEP)                                                                 \
  AVX512 static void NAME(int t) {                                                                 \
    float *av = acc_v[t];                                                                          \
    uint32_t *ai = acc_i[t];                                                                       \
    const int r0 = t * (ROWS / 2), r1 = r0 + ROWS / 2;                                             \
    reset_accumulators(t);                                                                         \
    for (int r = r0; r + 8 <= r1; r += 8) {                                                        \
      const float *q = row_at(r);                                                                  \
      for (int v = 0; v < COLS; v += 16) {                                                         \
        __m512 a = _mm512_load_ps(av + v);                                                         \
        __m512i ix = _mm512_load_si512(ai + v);                                                    \
        EIGHT(ROWSTEP)                                                                             \
        _mm512_store_ps(av + v, a);                                                                \
        _mm512_store_si512(ai + v, ix);                                                            \
      }                                                                                            \
    }                                                                                              \
  }

#define KERNEL_ROW(j) TAKE(a, ix, q, j, v, r);
KERNEL_FORM(kernel, KERNEL_ROW)

AVX512 static void walk(int t) {
  float *av = acc_v[t];
  uint32_t *ai = acc_i[t];
  const int r0 = t * (ROWS / 2), r1 = r0 + ROWS / 2;
  reset_accumulators(t);
  for (int r = r0; r < r1; r++) {
    const float *q = row_at(r);
    const __m512i rv = _mm512_set1_epi32(r);
    for (int v = 0; v < COLS; v += 16) {
      const __m512 xv = _mm512_load_ps(q + v);
      const __mmask16 k = _mm512_cmp_ps_mask(xv, _mm512_load_ps(av + v), _CMP_GT_OQ);
      _mm512_mask_store_ps(av + v, k, xv);
      _mm512_mask_store_epi32(ai + v, k, rv);
    }
  }
}

/* loads, each of the 8 rows of a trip from its own sequential stream: trip
 * j reads row s * R + j of stream s (R = a thread's rows / 8), as the
 * `8s` loops of bench_cpu read */
AVX512 static void loads_s(int t) {
  const int r0 = t * (ROWS / 2), R = ROWS / 2 / 8;
#define DECL(j) __m512 m##j = _mm512_set1_ps(-1e30f);
  EIGHT(DECL)
#undef DECL
  for (int j = 0; j < R; j++) {
    const float *q = row_at(r0 + j);
    for (int v = 0; v < COLS; v += 16) {
#define LOAD(s) m##s = _mm512_max_ps(m##s, _mm512_load_ps(q + (size_t)(s)*R * COLS + v));
      EIGHT(LOAD)
#undef LOAD
    }
  }
  __m512 s = _mm512_max_ps(_mm512_max_ps(_mm512_max_ps(m0, m1), _mm512_max_ps(m2, m3)),
                           _mm512_max_ps(_mm512_max_ps(m4, m5), _mm512_max_ps(m6, m7)));
  sink[t] = _mm512_reduce_max_ps(s);
}

/* kernel with the values alone: one MAXPS a row, no index */
AVX512 static void kmax(int t) {
  float *av = acc_v[t];
  const int r0 = t * (ROWS / 2), r1 = r0 + ROWS / 2;
  reset_accumulators(t);
  for (int r = r0; r + 8 <= r1; r += 8) {
    const float *q = row_at(r);
    for (int v = 0; v < COLS; v += 16) {
      __m512 a = _mm512_load_ps(av + v);
#define ROW1(j) a = _mm512_max_ps(a, _mm512_load_ps(q + (size_t)(j)*COLS + v));
      EIGHT(ROW1)
#undef ROW1
      _mm512_store_ps(av + v, a);
    }
  }
}

/* kernel over loads_s's streams: a trip's rows (in index order) by the
 * sequential rule, then into the accumulators by value, then index (they
 * may hold a later row) */
AVX512 static void kstream(int t) {
  float *av = acc_v[t];
  uint32_t *ai = acc_i[t];
  const int r0 = t * (ROWS / 2), R = ROWS / 2 / 8;
  reset_accumulators(t);
  for (int j = 0; j < R; j++) {
    const float *q = row_at(r0 + j);
    for (int v = 0; v < COLS; v += 16) {
      __m512 tv = _mm512_load_ps(q + v);
      __m512i ti = _mm512_set1_epi32(r0 + j);
#define TK(s)                                                                                      \
  do {                                                                                             \
    const __m512 xv = _mm512_load_ps(q + (size_t)(s)*R * COLS + v);                                \
    const __mmask16 k = _mm512_cmp_ps_mask(xv, tv, _CMP_GT_OQ);                                    \
    tv = _mm512_mask_mov_ps(tv, k, xv);                                                            \
    ti = _mm512_mask_mov_epi32(ti, k, _mm512_set1_epi32(r0 + (s)*R + j));                          \
  } while (0)
      TK(1);
      TK(2);
      TK(3);
      TK(4);
      TK(5);
      TK(6);
      TK(7);
#undef TK
      __m512 a = _mm512_load_ps(av + v);
      __m512i ix = _mm512_load_si512(ai + v);
      const __mmask16 gt = _mm512_cmp_ps_mask(tv, a, _CMP_GT_OQ);
      const __mmask16 eq = _mm512_cmp_ps_mask(tv, a, _CMP_EQ_OQ);
      const __mmask16 k = gt | _mm512_mask_cmplt_epu32_mask(eq, ti, ix);
      _mm512_store_ps(av + v, _mm512_mask_mov_ps(a, k, tv));
      _mm512_store_si512(ai + v, _mm512_mask_mov_epi32(ix, k, ti));
    }
  }
}

/* kernel with the value by MAXPS and the take by one ordered compare with
 * the value before it (exact without NaNs) */
#define KFAST_ROW(j)                                                                               \
  {                                                                                                \
    const __m512 xv = _mm512_load_ps(q + (size_t)(j)*COLS + v);                                    \
    const __mmask16 k = _mm512_cmp_ps_mask(xv, a, _CMP_GT_OQ);                                     \
    a = _mm512_max_ps(xv, a);                                                                      \
    ix = _mm512_mask_mov_epi32(ix, k, _mm512_set1_epi32(r + (j)));                                 \
  }
KERNEL_FORM(kfast, KFAST_ROW)

typedef void (*form_fn)(int t);
static const form_fn forms[FORMS] = {plain, loads, loads_s, chain, kernel,
                                     kmax,  kfast, kstream, walk};
static const char *const names[FORMS] = {"plain", "loads", "loads_s", "chain", "kernel",
                                         "kmax",  "kfast", "kstream", "walk"};

typedef struct job {
  form_fn fn;
  int t;
} job;

static void *run_job(void *arg) {
  const job *j = arg;
  j->fn(j->t);
  return NULL;
}

/* One pass of a form on two threads; its wall time (the threads' start
 * included, alike for every form). */
static double pass(form_fn fn) {
  pthread_t th[2];
  job jobs[2] = {{fn, 0}, {fn, 1}};
  const double t0 = now();
  for (int i = 0; i < 2; i++)
    if (pthread_create(&th[i], NULL, run_job, &jobs[i]) != 0)
      return -1;
  for (int i = 0; i < 2; i++)
    pthread_join(th[i], NULL);
  return now() - t0;
}

static int by_value(const void *a, const void *b) {
  const double x1 = *(const double *)a, x2 = *(const double *)b;
  return (x1 > x2) - (x1 < x2);
}

int main(int argc, char **argv) {
  __builtin_cpu_init();
  if (!__builtin_cpu_supports("avx512f")) {
    printf("model_columns: this CPU has no AVX-512; the model needs it\n");
    return 0;
  }
  int rounds = argc > 1 ? atoi(argv[1]) : 21;
  if (rounds < 1 || rounds > MAX_ROUNDS) {
    fprintf(stderr, "model_columns: rounds must be 1-%d\n", MAX_ROUNDS);
    return 2;
  }
  const size_t bytes = (size_t)ROWS * COLS * sizeof(float);
  x = aligned_alloc(1u << 21, bytes);
  if (!x) {
    fprintf(stderr, "model_columns: cannot allocate %zu bytes\n", bytes);
    return 1;
  }
  madvise(x, bytes, MADV_HUGEPAGE);
  uint32_t s = 1;
  for (size_t i = 0; i < (size_t)ROWS * COLS; i++) {
    s = s * 1664525u + 1013904223u;
    x[i] = (float)(s >> 22); /* integers below 1024, as bench_cpu's data: ties */
  }
  /* kfast and kstream give the kernel's indices (the data's ties
   * included) */
  static uint32_t want[2][COLS];
  pass(kernel);
  memcpy(want, acc_i, sizeof want);
  const form_fn checked[2] = {kfast, kstream};
  for (int f = 0; f < 2; f++) {
    pass(checked[f]);
    if (memcmp(want, acc_i, sizeof want) != 0) {
      fprintf(stderr, "model_columns: %s's indices differ from the kernel's\n",
              f ? "kstream" : "kfast");
      return 1;
    }
  }
  static double times[FORMS][MAX_ROUNDS];
  for (int i = 0; i < rounds; i++)
    for (int f = 0; f < FORMS; f++)
      if ((times[f][i] = pass(forms[f])) < 0) {
        fprintf(stderr, "model_columns: cannot start a thread\n");
        return 1;
      }
  for (int f = 0; f < FORMS; f++)
    qsort(times[f], (size_t)rounds, sizeof(double), by_value);
  printf("argmax f32 [%d,%d] over axis 0, 2 threads, %d rounds\n", ROWS, COLS, rounds);
  printf("| form | best | median | plain / form (best) | (medians) |\n|---|---:|---:|---:|---:|\n");
  for (int f = 0; f < FORMS; f++)
    printf("| %s | %.3f ms | %.3f ms | %.2f | %.2f |\n", names[f], times[f][0] * 1e3,
           times[f][rounds / 2] * 1e3, times[0][0] / times[f][0],
           times[0][rounds / 2] / times[f][rounds / 2]);
  free(x);
  return 0;
}
