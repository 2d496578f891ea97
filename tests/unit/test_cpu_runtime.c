/* The CPU runtime: the thread pool, the JIT on hand-written LLVM IR, the
 * kernel cache, thread counts, the default device, dumps, and contexts
 * destroyed with live JIT code (run under valgrind:
 * CK_FORK=no valgrind --leak-check=full --suppressions=tests/valgrind.supp). */
#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#endif
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "api/api_internal.h"
#include "codegen/llvm/jit.h"
#include "dmlc/dmlc.h"
#include "runtime/cpu/thread_pool.h"
#include "testutil.h"

/* ---- the thread pool ---- */

typedef struct pool_record {
  _Atomic uint64_t sum;
  _Atomic uint32_t *hits; /* one per task */
} pool_record;

static void record_tasks(void *const *buffers, uint64_t begin, uint64_t end) {
  pool_record *r = buffers[0];
  for (uint64_t t = begin; t < end; t++) {
    atomic_fetch_add(&r->sum, t);
    atomic_fetch_add(&r->hits[t], 1);
  }
}

/* The CPU device's description names the caches its kernels are tuned for
 * (those the host reports: Linux's sysfs, else the C library). On an AMD
 * CPU the last level is one core complex's L3 (at most 96 MiB, with 3D
 * V-Cache), never every complex's that CPUID or the C library may add up
 * (508 MiB on a Zen 5 VM). */
static void check_described_caches(const char *text) {
  uint64_t l2, llc;
  dmlc_llvm_host_caches(&l2, &llc);
  char want[64];
  snprintf(want, sizeof want, ", L2 %llu KiB", (unsigned long long)(l2 >> 10));
  ck_assert_msg(!l2 == !strstr(text, want), "%s: %s", text, want);
  snprintf(want, sizeof want, ", last level %llu KiB", (unsigned long long)(llc >> 10));
  ck_assert_msg(!llc == !strstr(text, want), "%s: %s", text, want);
  ck_assert_msg(!l2 || !llc || llc >= l2, "%s", text);
#if defined(__x86_64__) || defined(__i386__)
  unsigned a, b, c, d;
  const bool amd =
      __get_cpuid(0, &a, &b, &c, &d) && b == 0x68747541u && d == 0x69746e65u && c == 0x444d4163u;
  if (amd)
    ck_assert_msg(llc && llc <= 96ull << 20, "%s", text);
#endif
}

START_TEST(pool_runs_every_task_once) {
  static const uint32_t thread_counts[] = {1, 2, 3, 8};
  static const uint64_t task_counts[] = {0, 1, 2, 7, 64, 1000, 4099};
  static const uint64_t chunks[] = {0, 1, 3, 64, 5000};
  for (size_t t = 0; t < sizeof thread_counts / sizeof thread_counts[0]; t++) {
    dmlc_thread_pool *pool;
    ck_assert_int_eq(dmlc_thread_pool_create(thread_counts[t], &pool), DMLC_OK);
    ck_assert_uint_eq(dmlc_thread_pool_num_threads(pool), thread_counts[t]);
    for (int repeat = 0; repeat < 5; repeat++)
      for (size_t n = 0; n < sizeof task_counts / sizeof task_counts[0]; n++)
        for (size_t c = 0; c < sizeof chunks / sizeof chunks[0]; c++) {
          const uint64_t num_tasks = task_counts[n];
          pool_record r = {0};
          r.hits = calloc(num_tasks + 1, sizeof *r.hits);
          void *buffers[1] = {&r};
          dmlc_thread_pool_run(pool, num_tasks, chunks[c], record_tasks, buffers);
          ck_assert_uint_eq(atomic_load(&r.sum), num_tasks * (num_tasks ? num_tasks - 1 : 0) / 2);
          for (uint64_t i = 0; i < num_tasks; i++)
            ck_assert_uint_eq(atomic_load(&r.hits[i]), 1);
          free(r.hits);
        }
    dmlc_thread_pool_destroy(pool);
  }
}
END_TEST

START_TEST(pool_defaults_to_online_cores) {
  dmlc_thread_pool *pool;
  ck_assert_int_eq(dmlc_thread_pool_create(0, &pool), DMLC_OK);
  ck_assert_uint_eq(dmlc_thread_pool_num_threads(pool), dmlc_online_cores());
  dmlc_thread_pool_destroy(pool); /* never ran: no threads to join */
}
END_TEST

/* Hot (dmlc_thread_pool_hot: kernels of 1-3 MiB split then) right after a
 * run or a job the caller ran alone, cold when it never ran and after a
 * pause long past the workers' polling. Each "right after" is tried a few
 * times: a thread preempted between the two calls may see 50 us go by. */
static bool hot_after(dmlc_thread_pool *pool, bool run) {
  for (int i = 0; i < 100; i++) {
    if (run) {
      pool_record r = {0};
      r.hits = calloc(65, sizeof *r.hits);
      void *buffers[1] = {&r};
      dmlc_thread_pool_run(pool, 64, 1, record_tasks, buffers);
      free(r.hits);
    } else {
      dmlc_thread_pool_ran_alone(pool);
    }
    if (dmlc_thread_pool_hot(pool))
      return true;
  }
  return false;
}

START_TEST(pool_hot_after_runs) {
  dmlc_thread_pool *pool;
  ck_assert_int_eq(dmlc_thread_pool_create(2, &pool), DMLC_OK);
  ck_assert(!dmlc_thread_pool_hot(pool));
  ck_assert(hot_after(pool, false));
  usleep(300000);
  ck_assert(!dmlc_thread_pool_hot(pool));
  ck_assert(hot_after(pool, true));
  usleep(300000); /* the worker has stopped polling too */
  ck_assert(!dmlc_thread_pool_hot(pool));
  dmlc_thread_pool_destroy(pool);
}
END_TEST

/* ---- the JIT on LLVM IR written by hand ---- */

/* buffers[0][i] = 2 * i for i in [begin, end). */
static const char twice_ir[] = "define void @twice(ptr %buffers, i64 %begin, i64 %end) {\n"
                               "entry:\n"
                               "  %out = load ptr, ptr %buffers\n"
                               "  %empty = icmp uge i64 %begin, %end\n"
                               "  br i1 %empty, label %done, label %loop\n"
                               "loop:\n"
                               "  %i = phi i64 [ %begin, %entry ], [ %next, %loop ]\n"
                               "  %v = shl i64 %i, 1\n"
                               "  %p = getelementptr i64, ptr %out, i64 %i\n"
                               "  store i64 %v, ptr %p\n"
                               "  %next = add i64 %i, 1\n"
                               "  %more = icmp ult i64 %next, %end\n"
                               "  br i1 %more, label %loop, label %done\n"
                               "done:\n"
                               "  ret void\n"
                               "}\n";

START_TEST(jit_compiles_ir) {
  dmlc_diag diag = {0};
  dmlc_llvm_jit *jit;
  ck_assert_int_eq(dmlc_llvm_jit_create(&jit, &diag), DMLC_OK);
  const uint32_t vb = dmlc_llvm_jit_vector_bytes(jit);
  ck_assert(vb == 16 || vb == 32 || vb == 64);
  dmlc_llvm_text text = {0};
  void *address = NULL, *again = NULL;
  ck_assert_int_eq(dmlc_llvm_jit_compile_ir(jit, twice_ir, "twice", &address, &text, &diag),
                   DMLC_OK);
  /* The same IR twice: fresh symbol names, no clash in the JITDylib. */
  ck_assert_int_eq(dmlc_llvm_jit_compile_ir(jit, twice_ir, "twice", &again, NULL, &diag), DMLC_OK);
  ck_assert_ptr_nonnull(address);
  ck_assert_ptr_ne(address, again);
  ck_assert_ptr_nonnull(strstr(text.llvm_ir, "define"));
  ck_assert_ptr_nonnull(strstr(text.assembly, "ret"));
  dmlc_cpu_kernel_fn fn;
  memcpy(&fn, &address, sizeof fn);
  uint64_t out[100];
  memset(out, 0xff, sizeof out);
  void *buffers[1] = {out};
  fn(buffers, 10, 90);
  for (uint64_t i = 0; i < 100; i++)
    ck_assert_uint_eq(out[i], i >= 10 && i < 90 ? 2 * i : UINT64_MAX);
  dmlc_llvm_text_free(&text);
  dmlc_llvm_jit_destroy(jit);
}
END_TEST

START_TEST(jit_rejects_invalid_ir) {
  dmlc_diag diag = {0};
  dmlc_llvm_jit *jit;
  ck_assert_int_eq(dmlc_llvm_jit_create(&jit, &diag), DMLC_OK);
  /* Parses, but fails the verifier: a use before its definition. */
  static const char bad[] = "define i32 @bad() {\n"
                            "entry:\n"
                            "  %a = add i32 %b, 1\n"
                            "  %b = add i32 %a, 1\n"
                            "  ret i32 %a\n"
                            "}\n";
  void *address = NULL;
  ck_assert_int_eq(dmlc_llvm_jit_compile_ir(jit, bad, "bad", &address, NULL, &diag),
                   DMLC_ERROR_INTERNAL);
  ck_assert_ptr_nonnull(strstr(diag.message, "invalid"));
  ck_assert_int_eq(dmlc_llvm_jit_compile_ir(jit, "not IR", "x", &address, NULL, &diag),
                   DMLC_ERROR_INVALID_ARGUMENT);
  ck_assert_int_eq(dmlc_llvm_jit_compile_ir(jit, twice_ir, "thrice", &address, NULL, &diag),
                   DMLC_ERROR_INVALID_ARGUMENT);
  dmlc_llvm_jit_destroy(jit);
}
END_TEST

/* ---- through the API ---- */

static dmlc_graph *parse(dmlc_context *ctx, const char *text) {
  dmlc_graph *g = NULL;
  const dmlc_status status = dmlc_graph_parse(ctx, text, strlen(text), "test", &g);
  ck_assert_msg(status == DMLC_OK, "%s", dmlc_context_error(ctx));
  return g;
}

static dmlc_executable *compile(dmlc_graph *g, dmlc_device device) {
  dmlc_executable *exe = NULL;
  const dmlc_status status = dmlc_graph_compile(g, device, &exe);
  ck_assert_msg(status == DMLC_OK, "%s", dmlc_context_error(g->ctx));
  return exe;
}

static const char hardmax_text[] = "graph @hardmax_example(%x: f32[2,2,2]) -> (f32[2,2,2]) {\n"
                                   "  %0 = hardmax %x {axes = [0, 2]} : f32[2,2,2]\n"
                                   "  return %0\n"
                                   "}\n";

START_TEST(default_device_is_cpu) {
  dmlc_context *ctx;
  ck_assert_int_eq(dmlc_context_create(&ctx), DMLC_OK);
  ck_assert(
      !dmlc_api_device_is_open(ctx, DMLC_DEVICE_CPU)); /* nothing of LLVM before a CPU compile */
  dmlc_graph *g = parse(ctx, hardmax_text);
  dmlc_executable *ref = compile(g, DMLC_DEVICE_REFERENCE);
  ck_assert(!dmlc_api_device_is_open(ctx, DMLC_DEVICE_CPU));
  dmlc_executable *exe = compile(g, DMLC_DEVICE_DEFAULT);
  ck_assert_int_eq(dmlc_executable_device(exe), DMLC_DEVICE_CPU);
  ck_assert(dmlc_api_device_is_open(ctx, DMLC_DEVICE_CPU));
  const float x[8] = {12, 0, -101, 11, 3, 234, 0, -101};
  const float expected[8] = {0, 0, 0, 1, 0, 1, 0, 0};
  float y[8];
  const dmlc_buffer in = {(void *)x, sizeof x}, out = {y, sizeof y};
  ck_assert_int_eq(dmlc_execute(exe, &in, 1, &out, 1), DMLC_OK);
  ck_assert_mem_eq(y, expected, sizeof y);
  char *text = NULL;
  ck_assert_int_eq(dmlc_executable_dump(ref, "kernels", &text), DMLC_ERROR_UNSUPPORTED);
  ck_assert_int_eq(dmlc_executable_dump(exe, "bytes", &text), DMLC_ERROR_INVALID_ARGUMENT);
  ck_assert_ptr_null(text);
  ck_assert_int_eq(dmlc_device_describe(ctx, DMLC_DEVICE_CPU, &text), DMLC_OK);
  ck_assert_ptr_nonnull(strstr(text, "-bit vectors"));
  check_described_caches(text);
  dmlc_free(text);
  dmlc_executable_destroy(ref);
  dmlc_executable_destroy(exe);
  dmlc_graph_destroy(g);
  dmlc_context_destroy(ctx);
}
END_TEST

START_TEST(cache_compiles_once) {
  dmlc_context *ctx;
  ck_assert_int_eq(dmlc_context_create(&ctx), DMLC_OK);
  dmlc_graph *g = parse(ctx, hardmax_text);
  dmlc_executable *a = compile(g, DMLC_DEVICE_CPU);
  const uint64_t compiled = dmlc_api_compile_count(ctx, DMLC_DEVICE_CPU);
  ck_assert_uint_gt(compiled, 0);
  dmlc_executable *b = compile(g, DMLC_DEVICE_CPU);
  ck_assert_uint_eq(dmlc_api_compile_count(ctx, DMLC_DEVICE_CPU), compiled);
  /* The same text parsed again is another graph with the same kernels. */
  dmlc_graph *g2 = parse(ctx, hardmax_text);
  dmlc_executable *c = compile(g2, DMLC_DEVICE_CPU);
  ck_assert_uint_eq(dmlc_api_compile_count(ctx, DMLC_DEVICE_CPU), compiled);
  const float x[8] = {12, 0, -101, 11, 3, 234, 0, -101};
  const float expected[8] = {0, 0, 0, 1, 0, 1, 0, 0};
  dmlc_executable *exes[3] = {a, b, c};
  for (int i = 0; i < 3; i++) {
    float y[8] = {0};
    const dmlc_buffer in = {(void *)x, sizeof x}, out = {y, sizeof y};
    ck_assert_int_eq(dmlc_execute(exes[i], &in, 1, &out, 1), DMLC_OK);
    ck_assert_mem_eq(y, expected, sizeof y);
  }
  /* Another context has its own cache. */
  dmlc_context *other;
  ck_assert_int_eq(dmlc_context_create(&other), DMLC_OK);
  dmlc_graph *g3 = parse(other, hardmax_text);
  dmlc_executable *d = compile(g3, DMLC_DEVICE_CPU);
  ck_assert_uint_eq(dmlc_api_compile_count(other, DMLC_DEVICE_CPU), compiled);
  dmlc_executable_destroy(d);
  dmlc_graph_destroy(g3);
  dmlc_context_destroy(other);
  for (int i = 0; i < 3; i++)
    dmlc_executable_destroy(exes[i]);
  dmlc_graph_destroy(g);
  dmlc_graph_destroy(g2);
  dmlc_context_destroy(ctx);
}
END_TEST

/* Big enough to be split across the pool (> DMLC_CPU_PARALLEL_MIN_BYTES);
 * the reductions over axis 0 have one block of columns and enough rows to
 * be split into row chunks merged by a finish function. */
static const char big_text[] =
    "graph @big(%x: f32[1031,1021]) -> (%hard: f32[1031,1021], %idx: u32[1031,1],\n"
    "                                  %cols: i64[1,1021], %hcols: f32[1031,1021]) {\n"
    "  %0 = hardmax %x {axes = [1]} : f32[1031,1021]\n"
    "  %1 = argmax %x {axes = [1]} : u32[1031,1]\n"
    "  %2 = argmin %x {axes = [0]} : i64[1,1021]\n"
    "  %3 = hardmax %x {axes = [0]} : f32[1031,1021]\n"
    "  return %0, %1, %2, %3\n"
    "}\n";

enum { BIG_ROWS = 1031, BIG_COLS = 1021 };

typedef struct big_result {
  float hard[BIG_ROWS * BIG_COLS];
  uint32_t idx[BIG_ROWS];
  int64_t cols[BIG_COLS];
  float hcols[BIG_ROWS * BIG_COLS];
} big_result;

static void run_big(dmlc_executable *exe, const float *x, big_result *r) {
  memset(r, 0xab, sizeof *r);
  const dmlc_buffer in = {(void *)x, sizeof(float) * BIG_ROWS * BIG_COLS};
  const dmlc_buffer out[4] = {{r->hard, sizeof r->hard},
                              {r->idx, sizeof r->idx},
                              {r->cols, sizeof r->cols},
                              {r->hcols, sizeof r->hcols}};
  ck_assert_int_eq(dmlc_execute(exe, &in, 1, out, 4), DMLC_OK);
}

START_TEST(thread_counts_agree) {
  float *x = malloc(sizeof(float) * BIG_ROWS * BIG_COLS);
  uint64_t s = 88172645463325252ull;
  for (size_t i = 0; i < (size_t)BIG_ROWS * BIG_COLS; i++) {
    s ^= s << 13, s ^= s >> 7, s ^= s << 17;
    x[i] = (float)(s % 97) - 48; /* many ties */
  }
  big_result *ref = malloc(sizeof *ref), *one = malloc(sizeof *one), *many = malloc(sizeof *many);
  dmlc_context *ctx;
  ck_assert_int_eq(dmlc_context_create(&ctx), DMLC_OK);
  dmlc_graph *g = parse(ctx, big_text);
  dmlc_executable *r = compile(g, DMLC_DEVICE_REFERENCE);
  run_big(r, x, ref);
  dmlc_executable *exe = compile(g, DMLC_DEVICE_CPU);
  ck_assert_int_eq(dmlc_context_set_num_threads(ctx, 1), DMLC_OK);
  char *described = NULL;
  ck_assert_int_eq(dmlc_device_describe(ctx, DMLC_DEVICE_CPU, &described), DMLC_OK);
  ck_assert_msg(strstr(described, ", 1 thread") && !strstr(described, ", 1 threads"), "%s",
                described);
  dmlc_free(described);
  run_big(exe, x, one);
  static const uint32_t counts[] = {2, 3, 4, 7, 0};
  for (size_t i = 0; i < sizeof counts / sizeof counts[0]; i++) {
    ck_assert_int_eq(dmlc_context_set_num_threads(ctx, counts[i]), DMLC_OK);
    for (int repeat = 0; repeat < 3; repeat++) {
      run_big(exe, x, many);
      ck_assert(memcmp(one, many, sizeof *one) == 0);
    }
  }
  ck_assert(memcmp(one, ref, sizeof *one) == 0);
  ck_assert_int_eq(dmlc_context_set_num_threads(ctx, 100000), DMLC_ERROR_INVALID_ARGUMENT);
  dmlc_executable_destroy(r);
  dmlc_executable_destroy(exe);
  dmlc_graph_destroy(g);
  dmlc_context_destroy(ctx);
  free(x);
  free(ref);
  free(one);
  free(many);
}
END_TEST

/* Kernels of 1-3 MiB (DMLC_CPU_PARALLEL_HOT_MIN_BYTES to _MIN_BYTES) run on
 * the calling thread, or split over the pool when it is hot: back to back,
 * every call after the first. Each call's answers against the reference. */
START_TEST(medium_kernels_back_to_back) {
  enum { ROWS = 512, COLS = 1021 };
  static const char text[] = "graph @medium(%x: f32[512,1021]) -> (u32[512,1], i64[1,1021]) {\n"
                             "  %0 = argmax %x {axes = [1]} : u32[512,1]\n"
                             "  %1 = argmin %x {axes = [0]} : i64[1,1021]\n"
                             "  return %0, %1\n"
                             "}\n";
  float *x = malloc(sizeof(float) * ROWS * COLS);
  uint64_t s = 88172645463325252ull;
  for (size_t i = 0; i < (size_t)ROWS * COLS; i++) {
    s ^= s << 13, s ^= s >> 7, s ^= s << 17;
    x[i] = (float)(s % 97) - 48; /* many ties */
  }
  dmlc_context *ctx;
  ck_assert_int_eq(dmlc_context_create(&ctx), DMLC_OK);
  ck_assert_int_eq(dmlc_context_set_num_threads(ctx, 2), DMLC_OK);
  dmlc_graph *g = parse(ctx, text);
  dmlc_executable *r = compile(g, DMLC_DEVICE_REFERENCE), *exe = compile(g, DMLC_DEVICE_CPU);
  uint32_t want_rows[ROWS], rows[ROWS];
  int64_t want_cols[COLS], cols[COLS];
  const dmlc_buffer in = {x, sizeof(float) * ROWS * COLS};
  dmlc_buffer want[2] = {{want_rows, sizeof want_rows}, {want_cols, sizeof want_cols}};
  dmlc_buffer out[2] = {{rows, sizeof rows}, {cols, sizeof cols}};
  ck_assert_int_eq(dmlc_execute(r, &in, 1, want, 2), DMLC_OK);
  for (int call = 0; call < 20; call++) {
    memset(rows, 0xab, sizeof rows);
    memset(cols, 0xab, sizeof cols);
    ck_assert_int_eq(dmlc_execute(exe, &in, 1, out, 2), DMLC_OK);
    ck_assert_msg(!memcmp(rows, want_rows, sizeof rows) && !memcmp(cols, want_cols, sizeof cols),
                  "call %d", call);
  }
  dmlc_executable_destroy(r);
  dmlc_executable_destroy(exe);
  dmlc_graph_destroy(g);
  dmlc_context_destroy(ctx);
  free(x);
}
END_TEST

START_TEST(dumps_show_code) {
  dmlc_context *ctx;
  ck_assert_int_eq(dmlc_context_create(&ctx), DMLC_OK);
  dmlc_graph *g = parse(ctx, hardmax_text);
  dmlc_executable *exe = compile(g, DMLC_DEVICE_CPU);
  const uint64_t compiled = dmlc_api_compile_count(ctx, DMLC_DEVICE_CPU);
  static const struct {
    const char *what, *contains;
  } dumps[] = {{"kernels", "kernel 0"}, {"llvm", "define"}, {"asm", "ret"}, {"llvm", "define"}};
  for (size_t i = 0; i < sizeof dumps / sizeof dumps[0]; i++) {
    char *text = NULL;
    ck_assert_int_eq(dmlc_executable_dump(exe, dumps[i].what, &text), DMLC_OK);
    ck_assert_msg(strstr(text, dumps[i].contains), "%s dump lacks '%s':\n%s", dumps[i].what,
                  dumps[i].contains, text);
    dmlc_free(text);
  }
  /* Dumping compiles for text only: nothing more is loaded or counted. */
  ck_assert_uint_eq(dmlc_api_compile_count(ctx, DMLC_DEVICE_CPU), compiled);
  dmlc_executable_destroy(exe);
  dmlc_graph_destroy(g);
  dmlc_context_destroy(ctx);
}
END_TEST

/* Under valgrind: everything the JIT, the pool (started) and the cache hold
 * is freed with the context, executables still holding kernels until just
 * before. */
START_TEST(context_destroy_frees_live_jit) {
  dmlc_context *ctx;
  ck_assert_int_eq(dmlc_context_create(&ctx), DMLC_OK);
  ck_assert_int_eq(dmlc_context_set_num_threads(ctx, 3), DMLC_OK);
  dmlc_graph *g = parse(ctx, big_text);
  dmlc_executable *exe = compile(g, DMLC_DEVICE_CPU);
  float *x = calloc((size_t)BIG_ROWS * BIG_COLS, sizeof *x);
  big_result *r = malloc(sizeof *r);
  run_big(exe, x, r); /* starts the workers */
  char *text = NULL;
  ck_assert_int_eq(dmlc_executable_dump(exe, "asm", &text), DMLC_OK);
  dmlc_free(text);
  dmlc_executable_destroy(exe);
  dmlc_graph_destroy(g);
  dmlc_context_destroy(ctx);
  free(x);
  free(r);
}
END_TEST

/* Issue 15: GPT-2's vocabulary, f16[1,50257], bound as the 100514 bytes its
 * logits take (not a multiple of 4): a graph from IR text declares no
 * TotalTensorSizeInBytes. The input ends where a PROT_NONE page begins, so
 * a kernel that read past its last element would fault; one byte less is
 * refused with the rule in the message. */
START_TEST(gpt2_vocab_exact_buffer) {
  static const char text[] = "graph @next_token(%logits: f16[1,50257]) -> (%next: u32[1,1]) {\n"
                             "  %0 = argmax %logits {axes = [-1]} : u32[1,1]\n"
                             "  return %0\n"
                             "}\n";
  dmlc_context *ctx = NULL;
  ck_assert_int_eq(dmlc_context_create(&ctx), DMLC_OK);
  dmlc_graph *g = NULL;
  ck_assert_int_eq(dmlc_graph_parse(ctx, text, sizeof text - 1, "gpt2.dmlir", &g), DMLC_OK);
  static const dmlc_device devices[] = {DMLC_DEVICE_CPU, DMLC_DEVICE_REFERENCE};
  const size_t page = (size_t)sysconf(_SC_PAGESIZE), bytes = 100514;
  const size_t map_size = (bytes + page - 1) / page * page + page;
  unsigned char *map =
      mmap(NULL, map_size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  ck_assert_ptr_ne(map, MAP_FAILED);
  ck_assert_int_eq(mprotect(map + map_size - page, page, PROT_NONE), 0);
  uint16_t *logits = (uint16_t *)(map + map_size - page - bytes);
  for (size_t i = 0; i < 50257; i++)
    logits[i] = (uint16_t)(i % 7 == 0 ? 0x3c00 : 0x0000); /* 1.0 ties: the first wins */
  logits[50256] = 0x4000;                                 /* 2.0, the maximum, last */
  for (size_t d = 0; d < 2; d++) {
    dmlc_executable *exe = NULL;
    ck_assert_int_eq(dmlc_graph_compile(g, devices[d], &exe), DMLC_OK);
    dmlc_tensor_info info;
    ck_assert_int_eq(dmlc_executable_input_info(exe, 0, &info), DMLC_OK);
    ck_assert_uint_eq(info.total_size_bytes, 100514);
    uint32_t next = 7;
    dmlc_buffer in = {logits, bytes - 1}, out = {&next, sizeof next};
    ck_assert_int_eq(dmlc_execute(exe, &in, 1, &out, 1), DMLC_ERROR_INVALID_ARGUMENT);
    ck_assert_str_eq(dmlc_context_error(ctx),
                     "inputs[0] ('logits') is a buffer of 100513 bytes; its tensor f16[1,50257] "
                     "needs at least 100514 (to the end of its last element; IR text and ONNX "
                     "declare no TotalTensorSizeInBytes)");
    ck_assert_uint_eq(next, 7);
    in.size_bytes = bytes;
    ck_assert_msg(dmlc_execute(exe, &in, 1, &out, 1) == DMLC_OK, "%s", dmlc_context_error(ctx));
    ck_assert_uint_eq(next, 50256);
    dmlc_executable_destroy(exe);
  }
  munmap(map, map_size);
  dmlc_graph_destroy(g);
  dmlc_context_destroy(ctx);
}
END_TEST

static Suite *cpu_runtime_suite(void) {
  Suite *s = suite_create("cpu_runtime");
  TCase *pool = tcase_create("pool");
  tcase_add_test(pool, pool_runs_every_task_once);
  tcase_add_test(pool, pool_defaults_to_online_cores);
  tcase_add_test(pool, pool_hot_after_runs);
  suite_add_tcase(s, pool);
  TCase *jit = tcase_create("jit");
  tcase_add_test(jit, jit_compiles_ir);
  tcase_add_test(jit, jit_rejects_invalid_ir);
  suite_add_tcase(s, jit);
  TCase *device = tcase_create("device");
  tcase_add_test(device, default_device_is_cpu);
  tcase_add_test(device, cache_compiles_once);
  tcase_add_test(device, thread_counts_agree);
  tcase_add_test(device, medium_kernels_back_to_back);
  tcase_add_test(device, dumps_show_code);
  tcase_add_test(device, context_destroy_frees_live_jit);
  tcase_add_test(device, gpt2_vocab_exact_buffer);
  suite_add_tcase(s, device);
  return s;
}

int main(void) {
  Suite *suites[] = {cpu_runtime_suite()};
  return dmlc_test_run_suites(suites, 1);
}
