/* Concurrency (docs/reliability.md, include/dmlc/dmlc.h): one executable
 * executed from many threads at once, one context compiling from many
 * threads while others execute, one graph compiled from many threads at
 * once, several contexts side by side, the CPU's
 * thread pool shared by concurrent executes, Vulkan's serialized queue, and
 * each thread's own error messages. Every output is checked against the
 * reference device's, computed before the threads start. Run as is by ctest
 * and under ThreadSanitizer by scripts/tsan.sh; DMLC_THREADS_ITERATIONS
 * sets the executes per thread (default 200). Worker threads record
 * failures (Check's asserts belong to the main thread). */
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"

enum { THREADS = 8, MAX_DEVICES = 3 };

/* Small and large graphs: the large ones split across the CPU's pool. */
static const char *const graph_texts[] = {
    "graph @small(%x: f32[4,7]) -> (u32[4,1]) {\n"
    "  %0 = argmax %x {axes = [1]} : u32[4,1]\n  return %0\n}\n",
    "graph @hard(%x: f32[6,33]) -> (f32[6,33]) {\n"
    "  %0 = hardmax %x {axes = [1]} : f32[6,33]\n  return %0\n}\n",
    "graph @two(%x: f16[5,3,8]) -> (i64[1,3,8], u32[5,1,1]) {\n"
    "  %0 = argmin %x {axes = [0]} : i64[1,3,8]\n"
    "  %1 = argmax %x {axes = [1, 2], direction = decreasing} : u32[5,1,1]\n"
    "  return %0, %1\n}\n",
    "graph @large(%x: f32[832,1024]) -> (u32[832,1], u32[1,1024]) {\n"
    "  %0 = argmax %x {axes = [1]} : u32[832,1]\n"
    "  %1 = argmin %x {axes = [0]} : u32[1,1024]\n"
    "  return %0, %1\n}\n",
};
enum { NUM_GRAPHS = sizeof graph_texts / sizeof graph_texts[0], LARGE = NUM_GRAPHS - 1 };

typedef struct io {
  size_t num_in, num_out;
  dmlc_buffer in[2], expected[2];
  uint64_t out_size[2];
} io;

static io cases[NUM_GRAPHS];
static dmlc_device devices[MAX_DEVICES];
static size_t num_devices;
static int iterations;

static atomic_int failures;
static char first_failure[512];
static pthread_mutex_t failure_lock = PTHREAD_MUTEX_INITIALIZER;

static void record_failure(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void record_failure(const char *fmt, ...) {
  pthread_mutex_lock(&failure_lock);
  if (atomic_fetch_add(&failures, 1) == 0) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(first_failure, sizeof first_failure, fmt, ap);
    va_end(ap);
  }
  pthread_mutex_unlock(&failure_lock);
}

static dmlc_graph *parse(dmlc_context *ctx, size_t g) {
  dmlc_graph *graph = NULL;
  if (dmlc_graph_parse(ctx, graph_texts[g], strlen(graph_texts[g]), "threads.dmlir", &graph) !=
      DMLC_OK)
    record_failure("parse %s: %s (%d)", graph_texts[g], dmlc_context_error(ctx), 0);
  return graph;
}

static dmlc_executable *compile(dmlc_context *ctx, size_t g, dmlc_device d) {
  dmlc_graph *graph = parse(ctx, g);
  dmlc_executable *exe = NULL;
  if (graph && dmlc_graph_compile(graph, d, &exe) != DMLC_OK)
    record_failure("compile graph %zu for %s: %s", g, dmlc_device_name(d), dmlc_context_error(ctx));
  dmlc_graph_destroy(graph);
  return exe;
}

/* Executes exe on case g and compares every output byte. */
static void run_and_check(dmlc_context *ctx, dmlc_executable *exe, size_t g, const char *who) {
  const io *c = &cases[g];
  dmlc_buffer out[2];
  for (size_t o = 0; o < c->num_out; o++) {
    out[o].size_bytes = c->out_size[o];
    out[o].data = malloc(c->out_size[o]);
    memset(out[o].data, 0xA5, c->out_size[o]);
  }
  if (dmlc_execute(exe, c->in, c->num_in, out, c->num_out) != DMLC_OK)
    record_failure("%s: execute of graph %zu failed: %s", who, g, dmlc_context_error(ctx));
  else
    for (size_t o = 0; o < c->num_out; o++)
      if (memcmp(out[o].data, c->expected[o].data, c->out_size[o]) != 0)
        record_failure("%s: graph %zu output %zu differs from the reference", who, g, o);
  for (size_t o = 0; o < c->num_out; o++)
    free(out[o].data);
}

static uint64_t splitmix(uint64_t *s) {
  uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

/* Inputs with ties (small integers as floats and halves) and the expected
 * outputs from the reference device. */
static void make_cases(void) {
  dmlc_context *ctx;
  ck_assert_int_eq(dmlc_context_create(&ctx), DMLC_OK);
  uint64_t seed = 14;
  for (size_t g = 0; g < NUM_GRAPHS; g++) {
    dmlc_executable *exe = compile(ctx, g, DMLC_DEVICE_REFERENCE);
    ck_assert_ptr_nonnull(exe);
    io *c = &cases[g];
    c->num_in = dmlc_executable_input_count(exe);
    c->num_out = dmlc_executable_output_count(exe);
    for (size_t i = 0; i < c->num_in; i++) {
      dmlc_tensor_info info;
      ck_assert_int_eq(dmlc_executable_input_info(exe, i, &info), DMLC_OK);
      c->in[i].size_bytes = info.total_size_bytes;
      c->in[i].data = malloc(info.total_size_bytes);
      const uint32_t esize = dmlc_data_type_size(info.data_type);
      for (uint64_t e = 0; e < info.total_size_bytes / esize; e++) {
        const float v = (float)(splitmix(&seed) % 9);
        if (esize == 4)
          ((float *)c->in[i].data)[e] = v;
        else
          ((uint16_t *)c->in[i].data)[e] = dmlc_float_to_half(v);
      }
    }
    for (size_t o = 0; o < c->num_out; o++) {
      dmlc_tensor_info info;
      ck_assert_int_eq(dmlc_executable_output_info(exe, o, &info), DMLC_OK);
      c->out_size[o] = c->expected[o].size_bytes = info.total_size_bytes;
      c->expected[o].data = calloc(1, info.total_size_bytes);
      memset(c->expected[o].data, 0xA5, info.total_size_bytes);
    }
    ck_assert_int_eq(dmlc_execute(exe, c->in, c->num_in, c->expected, c->num_out), DMLC_OK);
    dmlc_executable_destroy(exe);
  }
  dmlc_context_destroy(ctx);
}

static void free_cases(void) {
  for (size_t g = 0; g < NUM_GRAPHS; g++) {
    for (size_t i = 0; i < cases[g].num_in; i++)
      free(cases[g].in[i].data);
    for (size_t o = 0; o < cases[g].num_out; o++)
      free(cases[g].expected[o].data);
  }
  memset(cases, 0, sizeof cases);
}

static void setup(void) {
  const char *n = getenv("DMLC_THREADS_ITERATIONS");
  iterations = n && atoi(n) > 0 ? atoi(n) : 200;
  num_devices = 0;
  devices[num_devices++] = DMLC_DEVICE_REFERENCE;
  devices[num_devices++] = DMLC_DEVICE_CPU;
#ifdef DMLC_HAVE_VULKAN
  /* Vulkan where a device is present (lavapipe in CI). */
  dmlc_context *ctx;
  ck_assert_int_eq(dmlc_context_create(&ctx), DMLC_OK);
  dmlc_executable *exe = NULL;
  dmlc_graph *g = NULL;
  if (getenv("DMLC_THREADS_NO_VULKAN") == NULL &&
      dmlc_graph_parse(ctx, graph_texts[0], strlen(graph_texts[0]), "probe", &g) == DMLC_OK &&
      dmlc_graph_compile(g, DMLC_DEVICE_VULKAN, &exe) == DMLC_OK)
    devices[num_devices++] = DMLC_DEVICE_VULKAN;
  dmlc_executable_destroy(exe);
  dmlc_graph_destroy(g);
  dmlc_context_destroy(ctx);
#endif
  atomic_store(&failures, 0);
  first_failure[0] = '\0';
  make_cases();
  static bool said;
  if (!said) {
    said = true;
    printf("threads: %d threads, %d iterations, devices:", THREADS, iterations);
    for (size_t d = 0; d < num_devices; d++)
      printf(" %s", dmlc_device_name(devices[d]));
    printf("\n");
  }
}

static void teardown(void) { free_cases(); }

#define ASSERT_NO_FAILURES()                                                                       \
  ck_assert_msg(atomic_load(&failures) == 0, "%d failures; the first: %s", atomic_load(&failures), \
                first_failure)

/* How many executes a thread does of (graph, device): the reference device
 * evaluates the large graph slowly, and sanitized builds more so. */
static int executes_for(size_t g, dmlc_device d) {
  if (g == LARGE && d == DMLC_DEVICE_REFERENCE)
    return 2;
  if (g == LARGE || d == DMLC_DEVICE_VULKAN)
    return iterations / 10 > 0 ? iterations / 10 : 1;
  return iterations;
}

/* ---- one executable, many threads ---- */

typedef struct shared_run {
  dmlc_context *ctx;
  dmlc_executable *exes[NUM_GRAPHS][MAX_DEVICES];
  int thread;
} shared_run;

static void *execute_shared(void *arg) {
  const shared_run *r = arg;
  char who[64];
  snprintf(who, sizeof who, "thread %d", r->thread);
  /* Interleaved: every thread has every executable in flight. */
  const int n = iterations;
  for (int i = 0; i < n; i++)
    for (size_t g = 0; g < NUM_GRAPHS; g++)
      for (size_t d = 0; d < num_devices; d++)
        if (i < executes_for(g, devices[d]))
          run_and_check(r->ctx, r->exes[g][d], g, who);
  return NULL;
}

START_TEST(test_one_executable_many_threads) {
  dmlc_context *ctx;
  ck_assert_int_eq(dmlc_context_create(&ctx), DMLC_OK);
  ck_assert_int_eq(dmlc_context_set_num_threads(ctx, 4), DMLC_OK);
  shared_run runs[THREADS];
  for (size_t g = 0; g < NUM_GRAPHS; g++)
    for (size_t d = 0; d < num_devices; d++) {
      runs[0].exes[g][d] = compile(ctx, g, devices[d]);
      ck_assert_ptr_nonnull(runs[0].exes[g][d]);
    }
  pthread_t threads[THREADS];
  for (int t = 0; t < THREADS; t++) {
    runs[t] = runs[0];
    runs[t].ctx = ctx;
    runs[t].thread = t;
    ck_assert_int_eq(pthread_create(&threads[t], NULL, execute_shared, &runs[t]), 0);
  }
  for (int t = 0; t < THREADS; t++)
    pthread_join(threads[t], NULL);
  ASSERT_NO_FAILURES();
  for (size_t g = 0; g < NUM_GRAPHS; g++)
    for (size_t d = 0; d < num_devices; d++)
      dmlc_executable_destroy(runs[0].exes[g][d]);
  dmlc_context_destroy(ctx);
}
END_TEST

/* ---- compiling while executing, in one context ---- */

typedef struct mixed_run {
  dmlc_context *ctx;
  dmlc_executable *const (*shared)[MAX_DEVICES];
  int thread;
} mixed_run;

static void *compile_and_execute(void *arg) {
  const mixed_run *r = arg;
  char who[64];
  snprintf(who, sizeof who, "thread %d", r->thread);
  const int rounds = iterations / 20 > 0 ? iterations / 20 : 1;
  for (int i = 0; i < rounds; i++) {
    const size_t g = (size_t)(r->thread + i) % NUM_GRAPHS;
    const dmlc_device d = devices[(size_t)(r->thread + i) % num_devices];
    if (r->thread % 2 == 0) {
      /* A compiler: a fresh executable, used a few times, destroyed. */
      dmlc_executable *exe = compile(r->ctx, g, d);
      for (int k = 0; exe && k < 3 && k < executes_for(g, d); k++)
        run_and_check(r->ctx, exe, g, who);
      dmlc_executable_destroy(exe);
    } else {
      /* An executor of the executables shared by all. */
      for (size_t k = 0; k < NUM_GRAPHS; k++)
        for (size_t dd = 0; dd < num_devices; dd++)
          if (i < executes_for(k, devices[dd]))
            run_and_check(r->ctx, r->shared[k][dd], k, who);
    }
    /* A failing call: the message is this thread's own. */
    char name[32];
    snprintf(name, sizeof name, "thread%d.dmlir", r->thread);
    dmlc_graph *bad = NULL;
    if (dmlc_graph_parse(r->ctx, "graph @", 7, name, &bad) == DMLC_OK)
      record_failure("%s: bad text parsed", who);
    else if (strncmp(dmlc_context_error(r->ctx), name, strlen(name)) != 0)
      record_failure("%s: message '%s' is not this thread's", who, dmlc_context_error(r->ctx));
  }
  return NULL;
}

START_TEST(test_compile_while_executing) {
  dmlc_context *ctx;
  ck_assert_int_eq(dmlc_context_create(&ctx), DMLC_OK);
  dmlc_executable *shared[NUM_GRAPHS][MAX_DEVICES];
  for (size_t g = 0; g < NUM_GRAPHS; g++)
    for (size_t d = 0; d < num_devices; d++) {
      shared[g][d] = compile(ctx, g, devices[d]);
      ck_assert_ptr_nonnull(shared[g][d]);
    }
  mixed_run runs[THREADS];
  pthread_t threads[THREADS];
  for (int t = 0; t < THREADS; t++) {
    runs[t] = (mixed_run){ctx, (dmlc_executable *const(*)[MAX_DEVICES])shared, t};
    ck_assert_int_eq(pthread_create(&threads[t], NULL, compile_and_execute, &runs[t]), 0);
  }
  for (int t = 0; t < THREADS; t++)
    pthread_join(threads[t], NULL);
  ASSERT_NO_FAILURES();
  for (size_t g = 0; g < NUM_GRAPHS; g++)
    for (size_t d = 0; d < num_devices; d++)
      dmlc_executable_destroy(shared[g][d]);
  dmlc_context_destroy(ctx);
}
END_TEST

/* ---- one graph compiled from many threads ---- */

typedef struct graph_run {
  dmlc_context *ctx;
  dmlc_graph *graph;
  size_t g;
  int thread;
} graph_run;

/* Compiles the shared graph for every device (the first compiles of all
 * threads race to remember its plan) and runs what it gets. */
static void *compile_shared_graph(void *arg) {
  const graph_run *r = arg;
  char who[64];
  snprintf(who, sizeof who, "thread %d compiling graph %zu", r->thread, r->g);
  for (int k = 0; k < 4; k++)
    for (size_t d = 0; d < num_devices; d++) {
      dmlc_executable *exe = NULL;
      if (dmlc_graph_compile(r->graph, devices[d], &exe) != DMLC_OK)
        record_failure("%s for %s: %s", who, dmlc_device_name(devices[d]),
                       dmlc_context_error(r->ctx));
      else
        run_and_check(r->ctx, exe, r->g, who);
      dmlc_executable_destroy(exe);
    }
  return NULL;
}

START_TEST(test_one_graph_many_compiles) {
  dmlc_context *ctx;
  ck_assert_int_eq(dmlc_context_create(&ctx), DMLC_OK);
  for (size_t g = 0; g < NUM_GRAPHS; g++) {
    dmlc_graph *graph = parse(ctx, g);
    ck_assert_ptr_nonnull(graph);
    graph_run runs[THREADS];
    pthread_t threads[THREADS];
    for (int t = 0; t < THREADS; t++) {
      runs[t] = (graph_run){ctx, graph, g, t};
      ck_assert_int_eq(pthread_create(&threads[t], NULL, compile_shared_graph, &runs[t]), 0);
    }
    for (int t = 0; t < THREADS; t++)
      pthread_join(threads[t], NULL);
    dmlc_graph_destroy(graph);
  }
  ASSERT_NO_FAILURES();
  dmlc_context_destroy(ctx);
}
END_TEST

/* ---- contexts side by side ---- */

static void *own_context(void *arg) {
  const int thread = *(const int *)arg;
  char who[64];
  snprintf(who, sizeof who, "context of thread %d", thread);
  dmlc_context *ctx;
  if (dmlc_context_create(&ctx) != DMLC_OK) {
    record_failure("%s: no context", who);
    return NULL;
  }
  dmlc_context_set_num_threads(ctx, 2);
  for (size_t g = 0; g < NUM_GRAPHS; g++)
    for (size_t d = 0; d < num_devices; d++) {
      dmlc_executable *exe = compile(ctx, g, devices[d]);
      const int n = executes_for(g, devices[d]) / 4 > 0 ? executes_for(g, devices[d]) / 4 : 1;
      for (int k = 0; exe && k < n; k++)
        run_and_check(ctx, exe, g, who);
      dmlc_executable_destroy(exe);
    }
  /* Tensors too: host and device memory made, written, run on, read. */
  for (size_t d = 0; d < num_devices; d++) {
    dmlc_executable *exe = compile(ctx, 0, devices[d]);
    dmlc_tensor *in = NULL, *out = NULL;
    const io *c = &cases[0];
    if (!exe || dmlc_tensor_create(ctx, devices[d], c->in[0].size_bytes, &in) != DMLC_OK ||
        dmlc_tensor_create(ctx, devices[d], c->out_size[0], &out) != DMLC_OK ||
        dmlc_tensor_write(in, 0, c->in[0].data, c->in[0].size_bytes) != DMLC_OK ||
        dmlc_execute_tensors(exe, &in, 1, &out, 1) != DMLC_OK) {
      record_failure("%s: tensors (device %zu): %s", who, d, dmlc_context_error(ctx));
    } else {
      uint8_t got[64];
      if (dmlc_tensor_read(out, 0, got, c->out_size[0]) != DMLC_OK ||
          memcmp(got, c->expected[0].data, c->out_size[0]) != 0)
        record_failure("%s: tensor output differs (device %zu)", who, d);
    }
    dmlc_tensor_destroy(in);
    dmlc_tensor_destroy(out);
    dmlc_executable_destroy(exe);
  }
  dmlc_context_destroy(ctx);
  return NULL;
}

START_TEST(test_contexts_side_by_side) {
  pthread_t threads[THREADS];
  int ids[THREADS];
  for (int t = 0; t < THREADS; t++) {
    ids[t] = t;
    ck_assert_int_eq(pthread_create(&threads[t], NULL, own_context, &ids[t]), 0);
  }
  for (int t = 0; t < THREADS; t++)
    pthread_join(threads[t], NULL);
  ASSERT_NO_FAILURES();
}
END_TEST

Suite *threads_suite(void) {
  Suite *s = suite_create("threads");
  TCase *tc = tcase_create("threads");
  tcase_add_checked_fixture(tc, setup, teardown);
  tcase_set_timeout(tc, 600);
  tcase_add_test(tc, test_one_executable_many_threads);
  tcase_add_test(tc, test_compile_while_executing);
  tcase_add_test(tc, test_one_graph_many_compiles);
  tcase_add_test(tc, test_contexts_side_by_side);
  suite_add_tcase(s, tc);
  return s;
}

int main(void) {
  Suite *suites[] = {threads_suite()};
  return dmlc_test_run_suites(suites, 1);
}
