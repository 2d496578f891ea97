/* dmlc's CPU device against the machine's limits.
 *
 * In one run, for each workload: rounds of a plain SIMD loop on all cores
 * over the very buffers the workload uses (read-only, or read + write for
 * hardmax), each followed by one call through the public API; the fastest
 * call set against the fastest pass of the loop (and the medians against
 * each other). Then the JIT's compile times. Prints a markdown table (and, with --tsv FILE, the
 * raw times for bench/numpy_bench.py). Not a test: run it by hand through
 * bench/run.sh on an otherwise idle machine.
 *
 *   bench_cpu [--quick] [--device cpu|reference] [--threads N] [--tsv FILE]
 *             [--only ID]
 *
 * --only runs the workloads whose id (argmax_rows, hardmax_cols, ...)
 * contains ID.
 * --quick shrinks every dimension of 1024 or more 16 times (a smoke run). */
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#if defined(__AVX__)
#include <immintrin.h>
#endif

#include "dmlc/dmlc.h"

#include "bench_common.h"

#ifndef DMLC_SOURCE_DIR
#define DMLC_SOURCE_DIR "."
#endif

/* ---- time ---- */

static double minimum(const double *v, size_t n) {
  double m = v[0];
  for (size_t i = 1; i < n; i++)
    m = v[i] < m ? v[i] : m;
  return m;
}

/* ---- the machine's bandwidth ---- */

/* 32-byte vectors of integers: one AVX2 register with -march=native, and
 * integer adds never meet a denormal or a NaN slowdown. */
typedef uint32_t vec_u32 __attribute__((vector_size(32)));

typedef enum bw_kind { BW_READ, BW_COPY, BW_COPY_STREAM } bw_kind;

typedef struct bw_slice {
  bw_kind kind;
  const unsigned char *src;
  unsigned char *dst;
  size_t begin, end; /* in vectors */
  vec_u32 sum;
} bw_slice;

static void *bw_run_slice(void *arg) {
  bw_slice *s = arg;
  const vec_u32 *src = (const vec_u32 *)s->src;
  vec_u32 *dst = (vec_u32 *)s->dst;
  vec_u32 a = {0}, b = {0}, c = {0}, d = {0};
  size_t i = s->begin;
  if (s->kind == BW_READ) {
    for (; i + 4 <= s->end; i += 4) {
      a += src[i];
      b += src[i + 1];
      c += src[i + 2];
      d += src[i + 3];
    }
  } else if (s->kind == BW_COPY) {
    const vec_u32 k = {1, 1, 1, 1, 1, 1, 1, 1};
    for (; i + 4 <= s->end; i += 4) {
      dst[i] = src[i] ^ k;
      dst[i + 1] = src[i + 1] ^ k;
      dst[i + 2] = src[i + 2] ^ k;
      dst[i + 3] = src[i + 3] ^ k;
    }
  } else {
#if defined(__AVX__)
    const __m256i k = _mm256_set1_epi32(1);
    for (; i + 4 <= s->end; i += 4)
      for (size_t j = 0; j < 4; j++)
        _mm256_stream_si256((__m256i *)&dst[i + j],
                            _mm256_xor_si256(_mm256_load_si256((const __m256i *)&src[i + j]), k));
    _mm_sfence();
#endif
  }
  for (; i < s->end; i++) {
    a += src[i];
    if (s->kind != BW_READ)
      dst[i] = src[i];
  }
  s->sum = a + b + c + d;
  return NULL;
}

/* Seconds for one pass of `kind` over `bytes` of src (and dst) on `threads`
 * threads, the calling one included. */
static double bw_pass(bw_kind kind, const void *src, void *dst, size_t bytes, unsigned threads) {
  bw_slice slices[256];
  pthread_t tids[256];
  const size_t n = bytes / sizeof(vec_u32);
  for (unsigned t = 0; t < threads; t++)
    slices[t] =
        (bw_slice){kind, src, dst, n * t / threads / 4 * 4, n * (t + 1) / threads / 4 * 4, {0}};
  slices[threads - 1].end = n;
  const double t0 = bench_now_s();
  for (unsigned t = 1; t < threads; t++)
    pthread_create(&tids[t], NULL, bw_run_slice, &slices[t]);
  bw_run_slice(&slices[0]);
  for (unsigned t = 1; t < threads; t++)
    pthread_join(tids[t], NULL);
  const double elapsed = bench_now_s() - t0;
  volatile uint32_t sink = 0;
  for (unsigned t = 0; t < threads; t++)
    sink += slices[t].sum[0];
  (void)sink;
  return elapsed;
}

/* ---- workloads ---- */

/* Interleaved rounds of (plain loop, one call) per workload. */
enum { ROUNDS = 15 };

typedef struct options {
  dmlc_device device;
  unsigned threads;
  bool quick;
  const char *tsv;
  const char *only; /* run only the workloads whose id contains this */
} options;

typedef struct result {
  const char *id;
  char name[64];  /* as run */
  double seconds; /* median per call */
  double best;    /* fastest call */
  double bytes;   /* moved per call */
  double machine; /* bytes per second of the matching plain loop's best pass; 0 for latency */
  double machine_median; /* ... of its median pass */
  double target;         /* minimum ratio, or maximum seconds for latency */
  bool is_latency;
  bool ok; /* the workload ran */
} result;

static void *alloc_buffer(size_t bytes) {
  void *p = aligned_alloc(4096, (bytes + 4095) / 4096 * 4096);
  if (!p) {
    fprintf(stderr, "out of memory allocating %zu bytes\n", bytes);
    exit(1);
  }
  return p;
}

static bool check(dmlc_context *ctx, dmlc_status st, const char *what) {
  if (st == DMLC_OK)
    return true;
  fprintf(stderr, "%s: %s: %s\n", what, dmlc_status_string(st), dmlc_context_error(ctx));
  return false;
}

static result run_workload(dmlc_context *ctx, const workload *w, const options *o) {
  result r = {w->id, "", 0, 0, 0, 0, 0, 0, w->kind == WORK_LATENCY, false};
  uint32_t sizes[4];
  for (uint32_t d = 0; d < w->rank; d++)
    sizes[d] = o->quick && w->sizes[d] >= 1024 ? w->sizes[d] / 16 : w->sizes[d];
  char ir[512];
  bench_workload_ir(w, sizes, ir, sizeof ir);
  bench_workload_name(w, sizes, r.name, sizeof r.name);
  dmlc_graph *g = NULL;
  dmlc_executable *exe = NULL;
  if (!check(ctx, dmlc_graph_parse(ctx, ir, strlen(ir), w->id, &g), r.name) ||
      !check(ctx, dmlc_graph_compile(g, o->device, &exe), r.name)) {
    dmlc_graph_destroy(g);
    return r;
  }
  dmlc_tensor_info in_info, out_info;
  dmlc_executable_input_info(exe, 0, &in_info);
  dmlc_executable_output_info(exe, 0, &out_info);
  const size_t in_bytes = in_info.total_size_bytes, out_bytes = out_info.total_size_bytes;
  unsigned char *in = alloc_buffer(in_bytes), *out = alloc_buffer(out_bytes);
  bench_fill_random(w->type, in, in_bytes);
  memset(out, 0, out_bytes);
  const dmlc_buffer ib = {in, in_bytes}, ob = {out, out_bytes};

  if (w->kind == WORK_LATENCY) {
    /* batches of calls on the calling thread; the median batch's mean */
    enum { BATCHES = 31, CALLS = 2000 };
    double per_call[BATCHES];
    for (int i = 0; i < CALLS; i++)
      dmlc_execute(exe, &ib, 1, &ob, 1);
    for (int b = 0; b < BATCHES; b++) {
      const double t0 = bench_now_s();
      for (int i = 0; i < CALLS; i++)
        dmlc_execute(exe, &ib, 1, &ob, 1);
      per_call[b] = (bench_now_s() - t0) / CALLS;
    }
    r.seconds = bench_median(per_call, BATCHES);
    r.bytes = (double)in_bytes;
    r.target = 0.5e-6;
    r.ok = check(ctx, dmlc_execute(exe, &ib, 1, &ob, 1), r.name);
  } else {
    /* Rounds of: the plain loop(s) on the same buffers, then one call. The
     * machine's state drifts on a shared host; interleaving puts both
     * sides of each ratio in the same moments. */
    const bool hard = w->kind == WORK_HARDMAX;
    const int rounds = o->device == DMLC_DEVICE_REFERENCE ? 3 : o->quick ? 5 : ROUNDS;
    const double moved = (double)in_bytes + (hard ? (double)out_bytes : 0);
    double tk[ROUNDS], tm[ROUNDS];
    bw_pass(hard ? BW_COPY : BW_READ, in, out, in_bytes, o->threads); /* faults pages in */
    r.ok = check(ctx, dmlc_execute(exe, &ib, 1, &ob, 1), r.name);     /* warm-up */
    for (int i = 0; r.ok && i < rounds; i++) {
      tm[i] = bw_pass(hard ? BW_COPY : BW_READ, in, out, in_bytes, o->threads);
      if (hard) {
        const double stream = bw_pass(BW_COPY_STREAM, in, out, in_bytes, o->threads);
        tm[i] = stream < tm[i] ? stream : tm[i];
      }
      const double t0 = bench_now_s();
      r.ok = check(ctx, dmlc_execute(exe, &ib, 1, &ob, 1), r.name);
      tk[i] = bench_now_s() - t0;
    }
    r.bytes = moved;
    r.target = hard ? 0.80 : 0.85;
    if (r.ok) {
      r.best = minimum(tk, (size_t)rounds);
      r.machine = moved / minimum(tm, (size_t)rounds);
      r.seconds = bench_median(tk, (size_t)rounds);
      r.machine_median = moved / bench_median(tm, (size_t)rounds);
    }
  }
  free(in);
  free(out);
  dmlc_executable_destroy(exe);
  dmlc_graph_destroy(g);
  return r;
}

/* ---- compile times ---- */

typedef struct compile_times {
  double first;     /* the first compile in this process, on a fresh context */
  double fresh;     /* median over fresh contexts */
  double cache_hit; /* median of compiling the same graph again on one context */
  bool ok;
} compile_times;

static double compile_fresh(const char *text, size_t len, const options *o, bool *ok) {
  dmlc_context *ctx;
  dmlc_context_create(&ctx);
  dmlc_context_set_num_threads(ctx, o->threads);
  dmlc_graph *g = NULL;
  dmlc_executable *exe = NULL;
  const double t0 = bench_now_s();
  *ok = check(ctx, dmlc_graph_parse(ctx, text, len, "hardmax.dmlir", &g), "parse") &&
        check(ctx, dmlc_graph_compile(g, o->device, &exe), "compile hardmax.dmlir");
  const double t = bench_now_s() - t0;
  dmlc_executable_destroy(exe);
  dmlc_graph_destroy(g);
  dmlc_context_destroy(ctx);
  return t;
}

static compile_times measure_compile(const options *o) {
  compile_times c = {0, 0, 0, false};
  const char *path = DMLC_SOURCE_DIR "/examples/hardmax.dmlir";
  FILE *f = fopen(path, "rb");
  if (!f) {
    fprintf(stderr, "cannot open %s\n", path);
    return c;
  }
  char text[4096];
  const size_t len = fread(text, 1, sizeof text - 1, f);
  fclose(f);
  text[len] = '\0';

  c.first = compile_fresh(text, len, o, &c.ok);
  if (!c.ok)
    return c;
  enum { FRESH = 9, HITS = 1001 };
  double t[HITS];
  for (int i = 0; i < FRESH && c.ok; i++)
    t[i] = compile_fresh(text, len, o, &c.ok);
  c.fresh = bench_median(t, FRESH);

  dmlc_context *ctx;
  dmlc_context_create(&ctx);
  dmlc_context_set_num_threads(ctx, o->threads);
  dmlc_graph *g = NULL;
  dmlc_executable *exe = NULL;
  c.ok = check(ctx, dmlc_graph_parse(ctx, text, len, "hardmax.dmlir", &g), "parse") &&
         check(ctx, dmlc_graph_compile(g, o->device, &exe), "compile");
  dmlc_executable_destroy(exe);
  for (int i = 0; i < HITS && c.ok; i++) {
    const double t0 = bench_now_s();
    c.ok = check(ctx, dmlc_graph_compile(g, o->device, &exe), "compile again");
    t[i] = bench_now_s() - t0;
    dmlc_executable_destroy(exe);
  }
  c.cache_hit = bench_median(t, HITS);
  dmlc_graph_destroy(g);
  dmlc_context_destroy(ctx);
  return c;
}

/* ---- report ---- */

static const char *verdict(bool pass) { return pass ? "PASS" : "FAIL"; }

static void print_table(const result *res, size_t n, const compile_times *c) {
  printf("\n| workload | median | best | GB/s | machine GB/s | ratio | ratio of medians | target "
         "| result |\n");
  printf("|---|---:|---:|---:|---:|---:|---:|---:|---|\n");
  for (size_t i = 0; i < n; i++) {
    const result *r = &res[i];
    if (!r->ok) {
      printf("| %s | - | - | - | - | - | - | - | ERROR |\n", r->name);
    } else if (r->is_latency) {
      printf("| %s | %.3f us | | %.2f | - | - | - | <= %.1f us | %s |\n", r->name, r->seconds * 1e6,
             r->bytes / r->seconds / 1e9, r->target * 1e6, verdict(r->seconds <= r->target));
    } else {
      const double gbs = r->bytes / r->best / 1e9, ratio = gbs / (r->machine / 1e9);
      const double median_ratio = r->bytes / r->seconds / r->machine_median;
      printf("| %s | %.2f ms | %.2f ms | %.2f | %.2f %s | %.0f%% | %.0f%% | >= %.0f%% | %s |\n",
             r->name, r->seconds * 1e3, r->best * 1e3, gbs, r->machine / 1e9,
             strstr(r->name, "hardmax") ? "(r+w)" : "(r)", 100 * ratio, 100 * median_ratio,
             100 * r->target, verdict(ratio >= r->target));
    }
  }
  if (c->ok) {
    /* issue 12's targets */
    printf("| compile hardmax.dmlir, first in process | %.2f ms | | | | | | <= 20 ms | %s |\n",
           c->first * 1e3, verdict(c->first <= 20e-3));
    printf("| compile hardmax.dmlir, fresh context | %.2f ms | | | | | | <= 10 ms | %s |\n",
           c->fresh * 1e3, verdict(c->fresh <= 10e-3));
    printf("| compile hardmax.dmlir, cache hit | %.1f us | | | | | | <= 5 us | %s |\n",
           c->cache_hit * 1e6, verdict(c->cache_hit <= 5e-6));
  } else {
    printf("| compile hardmax.dmlir | - | | | | | | | ERROR |\n");
  }
}

static void write_tsv(const char *path, const result *res, size_t n) {
  FILE *f = fopen(path, "w");
  if (!f) {
    fprintf(stderr, "cannot write %s\n", path);
    return;
  }
  fprintf(f, "id\tname\tseconds\tbytes\n");
  for (size_t i = 0; i < n; i++)
    if (res[i].ok)
      fprintf(f, "%s\t%s\t%.9g\t%.0f\n", res[i].id, res[i].name, res[i].seconds, res[i].bytes);
  fclose(f);
}

static int parse_options(int argc, char **argv, options *o) {
  const long online = sysconf(_SC_NPROCESSORS_ONLN);
  *o = (options){DMLC_DEVICE_CPU, online > 0 ? (unsigned)online : 1u, false, NULL, NULL};
  for (int i = 1; i < argc; i++) {
    if (strcmp(argv[i], "--quick") == 0) {
      o->quick = true;
    } else if (strcmp(argv[i], "--device") == 0 && i + 1 < argc) {
      const char *d = argv[++i];
      o->device = strcmp(d, "reference") == 0 ? DMLC_DEVICE_REFERENCE : DMLC_DEVICE_CPU;
    } else if (strcmp(argv[i], "--threads") == 0 && i + 1 < argc) {
      o->threads = (unsigned)atoi(argv[++i]);
    } else if (strcmp(argv[i], "--tsv") == 0 && i + 1 < argc) {
      o->tsv = argv[++i];
    } else if (strcmp(argv[i], "--only") == 0 && i + 1 < argc) {
      o->only = argv[++i];
    } else {
      fprintf(
          stderr,
          "usage: %s [--quick] [--device cpu|reference] [--threads N] [--tsv FILE] [--only ID]\n",
          argv[0]);
      return 2;
    }
  }
  if (o->threads < 1 || o->threads > 256)
    o->threads = 1;
  return 0;
}

int main(int argc, char **argv) {
  options o;
  const int bad = parse_options(argc, argv, &o);
  if (bad)
    return bad;

  /* compile times first, while the JIT is still cold */
  const compile_times c = measure_compile(&o);

  dmlc_context *ctx;
  if (dmlc_context_create(&ctx) != DMLC_OK)
    return 1;
  dmlc_context_set_num_threads(ctx, o.threads);
  char *desc = NULL;
  if (dmlc_device_describe(ctx, o.device, &desc) == DMLC_OK) {
    printf("device: %s\n", desc);
    dmlc_free(desc);
  }
  printf("threads: %u%s\n", o.threads, o.quick ? " (quick run: sizes / 16)" : "");

  enum { MAX_WORKLOADS = 64 };
  result res[MAX_WORKLOADS];
  size_t n = 0;
  for (size_t i = 0; i < bench_num_workloads && n < MAX_WORKLOADS; i++) {
    if (o.only && !strstr(bench_workloads[i].id, o.only))
      continue;
    res[n] = run_workload(ctx, &bench_workloads[i], &o);
    fprintf(stderr, "  %-44s %s\n", res[n].name, res[n].ok ? "done" : "failed");
    n++;
  }
  dmlc_context_destroy(ctx);

  print_table(res, n, &c);
  if (o.tsv)
    write_tsv(o.tsv, res, n);
  return 0;
}
