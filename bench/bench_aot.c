/* Ahead-of-time objects against the JIT, on bench_cpu's workloads.
 *
 * Each workload is compiled twice: for DMLC_DEVICE_CPU (the JIT, on the
 * context's thread pool) and with dmlc_graph_emit(..., "obj") into an
 * object, linked into a shared library by the C compiler ($CC, default cc)
 * and dlopen'ed. The object runs through NAME_run_parallel with a small
 * thread pool here (the same number of threads as the JIT's). Rounds
 * interleave one JIT call and one AOT call on the same buffers; the table
 * gives each side's median and fastest call and AOT / JIT of the medians.
 * It also reports the object's size and checks that both sides wrote the
 * same bytes. Not a test: run it by hand (bench/run.sh runs it).
 *
 *   bench_aot [--quick] [--runs N] [--threads N] */
#include <dlfcn.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "dmlc/dmlc.h"

#include "bench_common.h"

/* ---- a parallel_for over a persistent pool ----
 * Workers poll for the next generation for a while before sleeping, and
 * the caller polls for their end: a call costs no wake-up when calls come
 * back to back (as the JIT's pool does not either). */

typedef void (*task_fn)(void *arg, uint32_t i);

enum { SPIN = 200000 };

typedef struct pool {
  pthread_mutex_t mu;
  pthread_cond_t start;
  atomic_uint_fast64_t generation;
  task_fn task;
  void *arg;
  uint32_t count;
  atomic_uint next;
  atomic_uint running; /* workers still in the current generation */
  uint32_t threads;    /* workers, besides the caller */
  atomic_bool quit;
  pthread_t *ids;
} pool;

static void drain(pool *p) {
  for (uint32_t i; (i = atomic_fetch_add(&p->next, 1)) < p->count;)
    p->task(p->arg, i);
}

static void *worker(void *arg) {
  pool *p = arg;
  uint64_t seen = 0;
  for (;;) {
    uint64_t g = atomic_load(&p->generation);
    for (int spin = 0; g == seen && spin < SPIN && !atomic_load(&p->quit); spin++)
      g = atomic_load(&p->generation);
    if (g == seen) {
      pthread_mutex_lock(&p->mu);
      while (!atomic_load(&p->quit) && (g = atomic_load(&p->generation)) == seen)
        pthread_cond_wait(&p->start, &p->mu);
      pthread_mutex_unlock(&p->mu);
    }
    if (atomic_load(&p->quit))
      break;
    seen = g;
    drain(p);
    atomic_fetch_sub(&p->running, 1);
  }
  return NULL;
}

static void parallel_for(void *user, uint32_t count, task_fn task, void *arg) {
  pool *p = user;
  p->task = task;
  p->arg = arg;
  p->count = count;
  atomic_store(&p->next, 0);
  atomic_store(&p->running, p->threads);
  pthread_mutex_lock(&p->mu);
  atomic_fetch_add(&p->generation, 1);
  pthread_cond_broadcast(&p->start);
  pthread_mutex_unlock(&p->mu);
  drain(p);
  while (atomic_load(&p->running))
    sched_yield();
}

static void pool_start(pool *p, uint32_t threads) {
  memset(p, 0, sizeof *p);
  pthread_mutex_init(&p->mu, NULL);
  pthread_cond_init(&p->start, NULL);
  p->threads = threads > 1 ? threads - 1 : 0;
  p->ids = calloc(p->threads + 1, sizeof *p->ids);
  for (uint32_t i = 0; i < p->threads; i++)
    pthread_create(&p->ids[i], NULL, worker, p);
}

static void pool_stop(pool *p) {
  pthread_mutex_lock(&p->mu);
  atomic_store(&p->quit, true);
  pthread_cond_broadcast(&p->start);
  pthread_mutex_unlock(&p->mu);
  for (uint32_t i = 0; i < p->threads; i++)
    pthread_join(p->ids[i], NULL);
  free(p->ids);
}

/* ---- the AOT side ---- */

typedef int (*run_parallel_fn)(const void *const *, void *const *,
                               void (*)(void *, uint32_t, task_fn, void *), void *);

typedef struct aot_lib {
  void *handle;
  run_parallel_fn run;
  size_t object_bytes;
} aot_lib;

static bool aot_build(dmlc_graph *g, const char *dir, int index, aot_lib *out, char *err,
                      size_t cap) {
  const dmlc_aot_options o = {"bench", NULL, NULL, NULL, 2};
  void *data = NULL;
  size_t size = 0;
  if (dmlc_graph_emit(g, "obj", &o, &data, &size) != DMLC_OK) {
    snprintf(err, cap, "emit failed");
    return false;
  }
  char obj[512], so[512];
  snprintf(obj, sizeof obj, "%s/w%d.o", dir, index);
  snprintf(so, sizeof so, "%s/w%d.so", dir, index);
  FILE *f = fopen(obj, "wb");
  const bool written = f && fwrite(data, 1, size, f) == size;
  if (f)
    fclose(f);
  dmlc_free(data);
  if (!written) {
    snprintf(err, cap, "cannot write %s", obj);
    return false;
  }
  out->object_bytes = size;
  const char *cc = getenv("CC");
  const pid_t pid = fork();
  if (pid == 0) {
    execlp(cc && *cc ? cc : "cc", cc && *cc ? cc : "cc", "-shared", "-o", so, obj, (char *)NULL);
    _exit(127);
  }
  int status = 0;
  if (pid < 0 || waitpid(pid, &status, 0) != pid || !WIFEXITED(status) ||
      WEXITSTATUS(status) != 0) {
    snprintf(err, cap, "linking %s with the C compiler failed", so);
    return false;
  }
  out->handle = dlopen(so, RTLD_NOW | RTLD_LOCAL);
  void *sym = out->handle ? dlsym(out->handle, "bench_run_parallel") : NULL;
  if (!sym) {
    snprintf(err, cap, "dlopen %s: %s", so, dlerror());
    return false;
  }
  memcpy(&out->run, &sym, sizeof sym);
  return true;
}

/* ---- one workload ---- */

enum { MAX_RUNS = 200 };

typedef struct result {
  char name[64], error[1200];
  double jit_med, jit_min, aot_med, aot_min;
  size_t object_bytes;
  bool ok, same;
} result;

static double minimum(const double *v, int n) {
  double m = v[0];
  for (int i = 1; i < n; i++)
    m = v[i] < m ? v[i] : m;
  return m;
}

static result run_workload(dmlc_context *ctx, pool *p, const workload *w, bool quick, int runs,
                           const char *dir, int index) {
  result r = {0};
  uint32_t sizes[4];
  for (uint32_t d = 0; d < w->rank; d++)
    sizes[d] = quick && w->sizes[d] >= 1024 ? w->sizes[d] / 16 : w->sizes[d];
  char ir[512];
  bench_workload_ir(w, sizes, ir, sizeof ir);
  bench_workload_name(w, sizes, r.name, sizeof r.name);
  dmlc_graph *g = NULL;
  dmlc_executable *exe = NULL;
  aot_lib lib = {0};
  if (dmlc_graph_parse(ctx, ir, strlen(ir), w->id, &g) != DMLC_OK ||
      dmlc_graph_compile(g, DMLC_DEVICE_CPU, &exe) != DMLC_OK) {
    snprintf(r.error, sizeof r.error, "%s", dmlc_context_error(ctx));
    dmlc_graph_destroy(g);
    return r;
  }
  if (!aot_build(g, dir, index, &lib, r.error, sizeof r.error)) {
    dmlc_executable_destroy(exe);
    dmlc_graph_destroy(g);
    return r;
  }
  r.object_bytes = lib.object_bytes;
  dmlc_tensor_info in_info, out_info;
  dmlc_executable_input_info(exe, 0, &in_info);
  dmlc_executable_output_info(exe, 0, &out_info);
  const size_t in_bytes = in_info.total_size_bytes, out_bytes = out_info.total_size_bytes;
  unsigned char *in = aligned_alloc(64, (in_bytes + 63) / 64 * 64);
  unsigned char *out_jit = aligned_alloc(64, (out_bytes + 63) / 64 * 64);
  unsigned char *out_aot = aligned_alloc(64, (out_bytes + 63) / 64 * 64);
  bench_fill_random(w->type, in, in_bytes);
  memset(out_jit, 0, out_bytes);
  memset(out_aot, 0xff, out_bytes);
  const dmlc_buffer ib = {in, in_bytes}, ob = {out_jit, out_bytes};
  const void *ins[1] = {in};
  void *outs[1] = {out_aot};
  double jit[MAX_RUNS], aot[MAX_RUNS];
  bool ok = dmlc_execute(exe, &ib, 1, &ob, 1) == DMLC_OK &&
            lib.run(ins, outs, parallel_for, p) == 0; /* warm-up, both */
  r.same = ok && memcmp(out_jit, out_aot, out_bytes) == 0;
  for (int i = 0; ok && i < runs; i++) {
    double t0 = bench_now_s();
    ok = dmlc_execute(exe, &ib, 1, &ob, 1) == DMLC_OK;
    jit[i] = bench_now_s() - t0;
    t0 = bench_now_s();
    ok = ok && lib.run(ins, outs, parallel_for, p) == 0;
    aot[i] = bench_now_s() - t0;
  }
  if (ok) {
    r.jit_min = minimum(jit, runs);
    r.aot_min = minimum(aot, runs);
    r.jit_med = bench_median(jit, (size_t)runs);
    r.aot_med = bench_median(aot, (size_t)runs);
    r.ok = true;
  } else {
    snprintf(r.error, sizeof r.error, "a run failed: %s", dmlc_context_error(ctx));
  }
  free(in);
  free(out_jit);
  free(out_aot);
  dlclose(lib.handle);
  dmlc_executable_destroy(exe);
  dmlc_graph_destroy(g);
  return r;
}

static void print_time(double s) {
  if (s < 1e-3)
    printf(" %.2f us |", s * 1e6);
  else
    printf(" %.3f ms |", s * 1e3);
}

int main(int argc, char **argv) {
  bool quick = false;
  int runs = 21;
  long threads = sysconf(_SC_NPROCESSORS_ONLN);
  for (int i = 1; i < argc; i++) {
    if (strcmp(argv[i], "--quick") == 0) {
      quick = true;
    } else if (strcmp(argv[i], "--runs") == 0 && i + 1 < argc) {
      runs = atoi(argv[++i]);
      runs = runs < 1 ? 1 : runs > MAX_RUNS ? MAX_RUNS : runs;
    } else if (strcmp(argv[i], "--threads") == 0 && i + 1 < argc) {
      threads = atol(argv[++i]);
    } else {
      fprintf(stderr, "usage: %s [--quick] [--runs N] [--threads N]\n", argv[0]);
      return 2;
    }
  }
  if (threads < 1)
    threads = 1;
  char dir[] = "/tmp/dmlc-bench-aot-XXXXXX";
  if (!mkdtemp(dir)) {
    perror("mkdtemp");
    return 1;
  }
  dmlc_context *ctx;
  if (dmlc_context_create(&ctx) != DMLC_OK)
    return 1;
  dmlc_context_set_num_threads(ctx, (uint32_t)threads);
  pool p;
  pool_start(&p, (uint32_t)threads);
  printf("AOT (NAME_run_parallel, %ld threads of this program's pool) against the JIT (cpu "
         "device, %ld threads); %d interleaved runs after a warm-up%s\n\n",
         threads, threads, runs, quick ? " (quick run: sizes / 16)" : "");
  printf("| workload | JIT median | AOT median | AOT / JIT | JIT best | AOT best | object "
         "bytes | same bytes |\n|---|---:|---:|---:|---:|---:|---:|---|\n");
  for (size_t i = 0; i < bench_num_workloads; i++) {
    const result r = run_workload(ctx, &p, &bench_workloads[i], quick, runs, dir, (int)i);
    if (!r.ok) {
      printf("| %s | ERROR: %s | | | | | | |\n", r.name, r.error);
      continue;
    }
    printf("| %s |", r.name);
    print_time(r.jit_med);
    print_time(r.aot_med);
    printf(" %.3f |", r.aot_med / r.jit_med);
    print_time(r.jit_min);
    print_time(r.aot_min);
    printf(" %zu | %s |\n", r.object_bytes, r.same ? "yes" : "NO");
    fflush(stdout);
  }
  pool_stop(&p);
  dmlc_context_destroy(ctx);
  char cmd[600];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
  return system(cmd) == 0 ? 0 : 1;
}
