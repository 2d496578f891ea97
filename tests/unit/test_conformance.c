/* The conformance sweep: the same generated cases on the device under test
 * and on the reference evaluator, compared byte for byte.
 *
 * The device comes from DMLC_TEST_DEVICE (reference, cpu or vulkan;
 * reference when unset). A device that answers DMLC_ERROR_UNSUPPORTED fails
 * the test: a sweep that skips is a sweep that passes without checking.
 *
 * Every case is generated from a fixed seed (DMLC_TEST_SEED overrides it)
 * and its own number, so a failure prints everything needed to reproduce
 * it: the case number (DMLC_TEST_ONLY=chunk.case reruns that case alone),
 * the layouts of every buffer and the graph as IR text. Outputs are
 * compared over their whole buffers, so a gap of a strided output written
 * by the device (or left unwritten where the reference writes) is a
 * mismatch too. The cases of a chunk run on DMLC_TEST_JOBS threads (the
 * online cores by default).
 *
 * DMLC_TEST_AOT=1 checks ahead-of-time code instead of a device: each
 * case's graph is compiled with dmlc_graph_emit(..., "obj") (symbols
 * g<chunk>_<case>, mostly -O2, some -O0, -O1 and -O3), linked into a shared
 * library by the C compiler ($CC, default cc; a missing or failing one
 * fails the case), dlopen'ed and run through NAME_run, NAME_run_parallel
 * (each parallel_for's tasks in a scrambled order on two threads) and
 * NAME_run_workspace (a caller's workspace full of garbage), each against
 * the reference, byte for byte, gaps included; NAME_run and
 * NAME_run_parallel must return NAME_ERROR_WORKSPACE exactly when the
 * header's workspace exceeds 1 MiB, and then NAME_run_workspace runs. It
 * covers the sweep's first AOT_CHUNKS chunks (AOT_CASES cases, asserted, as
 * is their coverage: every data-type pair, ranks 1-8, strided, padded,
 * permuted and broadcast inputs, strided and padded outputs), the known
 * answers, every .dmlir file in examples/, the thread-count graphs and
 * graphs whose workspace does not fit on the stack. */
#include <dirent.h>
#include <dlfcn.h>
#include <inttypes.h>
#include <pthread.h>
#include <spawn.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "dmlc/dmlc.h"
#include "testutil.h"

#define SENTINEL 0xab

/* DMLC_TEST_AOT=1: ahead-of-time code instead of a device (below). */
enum { AOT_CHUNKS = 4, AOT_CASES = 400 };

static bool aot_mode(void) {
  const char *s = getenv("DMLC_TEST_AOT");
  return s && strcmp(s, "1") == 0;
}
#define MAX_IO 4
#define CHUNKS 30
#define CASES_PER_CHUNK 90
#define GRAPHS_PER_CHUNK 10
#define MAX_REPORTS 3
_Static_assert(AOT_CASES == AOT_CHUNKS * (CASES_PER_CHUNK + GRAPHS_PER_CHUNK),
               "AOT_CASES is the AOT sweep's case count");

/* ---- the device under test ---- */

static uint64_t base_seed(void) {
  const char *s = getenv("DMLC_TEST_SEED");
  return s && *s ? strtoull(s, NULL, 0) : UINT64_C(0x5eed0fd41c0ffee5);
}

/* ---- a deterministic generator (splitmix64 seeding, xorshift64*) ---- */

typedef struct rng {
  uint64_t state;
} rng;

static rng rng_seeded(uint64_t seed) {
  uint64_t z = seed + UINT64_C(0x9e3779b97f4a7c15);
  z = (z ^ (z >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
  z = (z ^ (z >> 27)) * UINT64_C(0x94d049bb133111eb);
  z ^= z >> 31;
  return (rng){z ? z : 1};
}

static uint64_t rng_next(rng *r) {
  r->state ^= r->state >> 12;
  r->state ^= r->state << 25;
  r->state ^= r->state >> 27;
  return r->state * UINT64_C(0x2545f4914f6cdd1d);
}

/* Uniform in [0, n). */
static uint32_t rng_below(rng *r, uint32_t n) { return (uint32_t)((rng_next(r) >> 32) % n); }

static uint32_t rng_range(rng *r, uint32_t lo, uint32_t hi) {
  return lo + rng_below(r, hi - lo + 1);
}

/* ---- data types ---- */

static const DML_TENSOR_DATA_TYPE input_types[] = {
    DML_TENSOR_DATA_TYPE_FLOAT32, DML_TENSOR_DATA_TYPE_FLOAT16, DML_TENSOR_DATA_TYPE_INT64,
    DML_TENSOR_DATA_TYPE_INT32,   DML_TENSOR_DATA_TYPE_INT16,   DML_TENSOR_DATA_TYPE_INT8,
    DML_TENSOR_DATA_TYPE_UINT64,  DML_TENSOR_DATA_TYPE_UINT32,  DML_TENSOR_DATA_TYPE_UINT16,
    DML_TENSOR_DATA_TYPE_UINT8,
};
#define NUM_INPUT_TYPES (sizeof input_types / sizeof input_types[0])
static const DML_TENSOR_DATA_TYPE index_types[] = {
    DML_TENSOR_DATA_TYPE_INT64, DML_TENSOR_DATA_TYPE_INT32, DML_TENSOR_DATA_TYPE_UINT64,
    DML_TENSOR_DATA_TYPE_UINT32};
#define NUM_INDEX_TYPES (sizeof index_types / sizeof index_types[0])

static bool is_float(DML_TENSOR_DATA_TYPE t) {
  return t == DML_TENSOR_DATA_TYPE_FLOAT32 || t == DML_TENSOR_DATA_TYPE_FLOAT16;
}

/* ---- input values ---- */

typedef enum value_dist {
  DIST_RANDOM_BITS, /* every bit pattern: NaN payloads, denormals, extremes */
  DIST_TIES,        /* two or three distinct values: ties everywhere */
  DIST_SPECIAL,     /* NaN, +-inf, +-0, denormals; integer MIN/MAX and neighbours */
  DIST_CONSTANT,    /* one special value everywhere: all-NaN, all -inf slices */
  DIST_RARE_NAN,    /* ordinary values with a rare NaN or infinity */
  DIST_RAMP_UP,     /* increasing with the buffer offset: the maximum is last */
  DIST_RAMP_DOWN,   /* decreasing: the maximum is first */
  DIST_SMALL_INTS,  /* -8..8 */
  DIST_COUNT
} value_dist;

static const char *const dist_names[DIST_COUNT] = {
    "random-bits", "ties", "special", "constant", "rare-nan", "ramp-up", "ramp-down", "small-ints"};

static const uint32_t f32_special[] = {
    0x7fc00000u, 0xffc00001u, 0x7f800001u, 0x7fffffffu, /* NaNs */
    0x7f800000u, 0xff800000u, 0x00000000u, 0x80000000u, /* +-inf, +-0 */
    0x00000001u, 0x80000001u, 0x7f7fffffu, 0xff7fffffu, /* denormals, +-max */
    0x3f800000u, 0xbf800000u, 0x00800000u, 0x807fffffu};
static const uint16_t f16_special[] = {0x7e00, 0xfe01, 0x7c01, 0x7fff, 0x7c00, 0xfc00,
                                       0x0000, 0x8000, 0x0001, 0x8001, 0x7bff, 0xfbff,
                                       0x3c00, 0xbc00, 0x0400, 0x83ff};
#define NUM_SPECIAL 16
/* The non-NaN ones: f32_special[4..15]. */
#define FIRST_NUMBER 4

/* Integer bit patterns that are extremes for both signednesses. */
static uint64_t int_special(uint32_t bits, uint32_t k) {
  const uint64_t mask = bits == 64 ? ~UINT64_C(0) : (UINT64_C(1) << bits) - 1;
  const uint64_t smin = UINT64_C(1) << (bits - 1);
  const uint64_t v[8] = {smin, smin + 1, smin - 1, smin - 2, 0, 1, mask, mask - 1};
  return v[k % 8] & mask;
}

static void store_float(DML_TENSOR_DATA_TYPE t, unsigned char *p, float f) {
  if (t == DML_TENSOR_DATA_TYPE_FLOAT32) {
    memcpy(p, &f, 4);
  } else {
    const uint16_t h = dmlc_float_to_half(f);
    memcpy(p, &h, 2);
  }
}

static void store_special(DML_TENSOR_DATA_TYPE t, unsigned char *p, uint32_t k) {
  if (t == DML_TENSOR_DATA_TYPE_FLOAT32)
    memcpy(p, &f32_special[k % NUM_SPECIAL], 4);
  else
    memcpy(p, &f16_special[k % NUM_SPECIAL], 2);
}

/* One element of type t at buffer element offset pos. `constant` is the
 * per-tensor choice of DIST_CONSTANT and DIST_TIES. Little-endian host:
 * the low bytes of an integer are its narrower truncation. */
static void gen_element(rng *r, DML_TENSOR_DATA_TYPE t, value_dist dist, uint32_t constant,
                        uint64_t pos, unsigned char *p) {
  const uint32_t esize = dmlc_data_type_size(t);
  if (is_float(t)) {
    switch (dist) {
    case DIST_RANDOM_BITS: {
      const uint64_t bits = rng_next(r);
      memcpy(p, &bits, esize);
      return;
    }
    case DIST_TIES: {
      static const float sets[3][3] = {{-1, 0, 1}, {-0.0f, 0.0f, -0.0f}, {2, 2, -3}};
      store_float(t, p, sets[constant % 3][rng_below(r, 3)]);
      return;
    }
    case DIST_SPECIAL:
      store_special(t, p, rng_below(r, NUM_SPECIAL));
      return;
    case DIST_CONSTANT: /* NaN, -inf, +inf, then the numbers */
      store_special(t, p, constant % NUM_SPECIAL);
      return;
    case DIST_RARE_NAN:
      if (rng_below(r, 300) == 0)
        store_special(t, p, rng_below(r, 6));
      else
        store_float(t, p, (float)rng_below(r, 20001) * 0.1f - 1000.0f);
      return;
    case DIST_RAMP_UP:
      store_float(t, p, (float)pos * 0.25f - 100.0f);
      return;
    case DIST_RAMP_DOWN:
      store_float(t, p, 100.0f - (float)pos * 0.25f);
      return;
    default:
      store_float(t, p, (float)rng_below(r, 17) - 8.0f);
      return;
    }
  }
  const uint32_t bits = 8 * esize;
  const uint64_t mask = bits == 64 ? ~UINT64_C(0) : (UINT64_C(1) << bits) - 1;
  uint64_t v;
  switch (dist) {
  case DIST_RANDOM_BITS:
    v = rng_next(r);
    break;
  case DIST_TIES:
    v = int_special(bits, (constant + 4 * rng_below(r, 2)) % 8);
    break;
  case DIST_SPECIAL:
  case DIST_RARE_NAN:
    v = int_special(bits, rng_below(r, 8));
    break;
  case DIST_CONSTANT:
    v = int_special(bits, constant);
    break;
  case DIST_RAMP_UP:
    v = pos;
    break;
  case DIST_RAMP_DOWN:
    v = ~pos;
    break;
  default:
    v = (uint64_t)((int64_t)rng_below(r, 17) - 8);
    break;
  }
  v &= mask;
  memcpy(p, &v, esize);
}

/* ---- buffers ---- */

/* size bytes at `skew` bytes past a 64-byte aligned address. */
typedef struct io_buffer {
  unsigned char *base;
  unsigned char *data;
  uint64_t size;
} io_buffer;

static io_buffer io_alloc(uint64_t size, uint32_t skew) {
  io_buffer b;
  b.size = size;
  b.base = aligned_alloc(64, (size + skew + 63) / 64 * 64);
  ck_assert_ptr_nonnull(b.base);
  b.data = b.base + skew;
  return b;
}

static void io_free(io_buffer *b) {
  free(b->base);
  b->base = b->data = NULL;
}

static uint64_t info_count(const dmlc_tensor_info *t) {
  uint64_t n = 1;
  for (uint32_t d = 0; d < t->dimension_count; d++)
    n *= t->sizes[d];
  return n;
}

/* Byte offset of the row-major k-th element of t. */
static uint64_t info_offset(const dmlc_tensor_info *t, uint64_t k) {
  uint64_t off = 0;
  for (uint32_t d = t->dimension_count; d-- > 0;) {
    off += (k % t->sizes[d]) * t->strides[d];
    k /= t->sizes[d];
  }
  return off * dmlc_data_type_size(t->data_type);
}

static void print_info(const char *role, size_t index, const dmlc_tensor_info *t, uint32_t skew) {
  fprintf(stderr, "  %s %zu '%s': %s sizes [", role, index, t->name ? t->name : "",
          dmlc_data_type_name(t->data_type));
  for (uint32_t d = 0; d < t->dimension_count; d++)
    fprintf(stderr, "%s%u", d ? "," : "", t->sizes[d]);
  fprintf(stderr, "] strides [");
  for (uint32_t d = 0; d < t->dimension_count; d++)
    fprintf(stderr, "%s%" PRIu64, d ? "," : "", t->strides[d]);
  fprintf(stderr, "] bytes %" PRIu64 " alignment %u skew %u\n", t->total_size_bytes, t->alignment,
          skew);
}

static void print_graph(dmlc_graph *g) {
  char *text = NULL;
  if (dmlc_graph_print(g, &text) == DMLC_OK) {
    fprintf(stderr, "%s", text);
    dmlc_free(text);
  }
}

/* Prints the first few differing elements of one output. */
static void print_diff(const dmlc_tensor_info *t, const unsigned char *got,
                       const unsigned char *want) {
  const uint32_t esize = dmlc_data_type_size(t->data_type);
  int shown = 0;
  for (uint64_t i = 0; i < t->total_size_bytes && shown < 8; i++) {
    if (got[i] == want[i])
      continue;
    const uint64_t elem = i / esize;
    fprintf(stderr, "    byte %" PRIu64 " (element offset %" PRIu64 "): got", i, elem);
    for (uint32_t b = esize; b-- > 0;)
      fprintf(stderr, "%02x", got[elem * esize + b]);
    fprintf(stderr, " want ");
    for (uint32_t b = esize; b-- > 0;)
      fprintf(stderr, "%02x", want[elem * esize + b]);
    fprintf(stderr, "\n");
    i = (elem + 1) * esize - 1;
    shown++;
  }
}

/* Every byte of the buffer outside t's elements must still hold the
 * sentinel. Returns the first offending byte, or UINT64_MAX. */
static uint64_t find_written_gap(const dmlc_tensor_info *t, const unsigned char *data) {
  const uint32_t esize = dmlc_data_type_size(t->data_type);
  unsigned char *mask = calloc(t->total_size_bytes, 1);
  ck_assert_ptr_nonnull(mask);
  const uint64_t n = info_count(t);
  for (uint64_t k = 0; k < n; k++)
    memset(mask + info_offset(t, k), 1, esize);
  uint64_t bad = UINT64_MAX;
  for (uint64_t i = 0; i < t->total_size_bytes && bad == UINT64_MAX; i++)
    if (!mask[i] && data[i] != SENTINEL)
      bad = i;
  free(mask);
  return bad;
}

/* ---- one case: the device against the reference ---- */

typedef struct case_params {
  rng *r;
  value_dist dist;
  uint32_t constant;
  uint32_t in_skew[MAX_IO], out_skew[MAX_IO];
  const char *what; /* printed on mismatch */
  unsigned chunk, index;
} case_params;

static void fill_input(case_params *p, const dmlc_tensor_info *t, io_buffer *b) {
  const uint32_t esize = dmlc_data_type_size(t->data_type);
  const uint64_t n = t->total_size_bytes / esize;
  for (uint64_t i = 0; i < n; i++)
    gen_element(p->r, t->data_type, p->dist, p->constant, i, b->data + i * esize);
  memset(b->data + n * esize, SENTINEL, t->total_size_bytes - n * esize);
}

/* Prints the case; with t, also the first differing elements of that
 * output. One report at a time: the sweep's workers share stderr. */
static void report(const case_params *p, dmlc_graph *g, const dmlc_executable *ref, const char *why,
                   const dmlc_tensor_info *t, const unsigned char *got, const unsigned char *want) {
  flockfile(stderr);
  fprintf(stderr, "\nconformance failure on %s, case %u.%u (seed 0x%" PRIx64 "): %s\n",
          aot_mode() ? "aot" : dmlc_device_name(dmlc_test_device()), p->chunk, p->index,
          base_seed(), why);
  fprintf(stderr,
          "  rerun alone: DMLC_TEST_DEVICE=%s%s DMLC_TEST_SEED=0x%" PRIx64
          " DMLC_TEST_ONLY=%u.%u test_conformance\n",
          getenv("DMLC_TEST_DEVICE") ? getenv("DMLC_TEST_DEVICE") : "reference",
          aot_mode() ? " DMLC_TEST_AOT=1" : "", base_seed(), p->chunk, p->index);
  fprintf(stderr, "  case: %s, values %s (constant %u)\n", p->what, dist_names[p->dist],
          p->constant);
  dmlc_tensor_info info;
  for (size_t i = 0; i < dmlc_executable_input_count(ref); i++)
    if (dmlc_executable_input_info(ref, i, &info) == DMLC_OK)
      print_info("input", i, &info, p->in_skew[i]);
  for (size_t i = 0; i < dmlc_executable_output_count(ref); i++)
    if (dmlc_executable_output_info(ref, i, &info) == DMLC_OK)
      print_info("output", i, &info, p->out_skew[i]);
  print_graph(g);
  if (t)
    print_diff(t, got, want);
  funlockfile(stderr);
}

/* ---- ahead-of-time code (DMLC_TEST_AOT=1) ---- */

/* docs/aot.md: NAME_run and NAME_run_parallel keep a workspace of at most
 * this many bytes on their stack, and return NAME_ERROR_WORKSPACE (2)
 * without running beyond it. */
enum { AOT_STACK_WORKSPACE = 1 << 20, AOT_ERROR_WORKSPACE = 2 };

typedef int (*aot_run_fn)(const void *const *, void *const *);
typedef void (*aot_task_fn)(void *, uint32_t);
typedef void (*aot_pfor_fn)(void *, uint32_t, aot_task_fn, void *);
typedef int (*aot_run_parallel_fn)(const void *const *, void *const *, aot_pfor_fn, void *);
typedef int (*aot_run_workspace_fn)(const void *const *, void *const *, void *, aot_pfor_fn,
                                    void *);

typedef struct aot_lib {
  char dir[64];
  char name[32]; /* the symbol prefix */
  int opt_level;
  void *handle;
  aot_run_fn run;
  aot_run_parallel_fn run_parallel;
  aot_run_workspace_fn run_workspace;
  uint64_t workspace_bytes; /* NAME_WORKSPACE_BYTES */
} aot_lib;

/* The entry points, in the order check_case runs them. */
enum { AOT_RUN, AOT_RUN_PARALLEL, AOT_RUN_WORKSPACE, AOT_MODES };
static const char *const aot_mode_names[AOT_MODES] = {"run", "run_parallel", "run_workspace"};

/* What the AOT runs of one test saw (a test runs in its own process): the
 * sweep asserts its coverage from the graphs' own layouts. */
typedef struct aot_tally {
  pthread_mutex_t lock;
  unsigned cases;
  unsigned parallel_cases;  /* NAME_run_parallel called parallel_for */
  unsigned workspace_cases; /* NAME_run returned NAME_ERROR_WORKSPACE */
  uint32_t max_tasks;       /* the largest count parallel_for was given */
  unsigned opt_levels[4];
  bool pair[16][16]; /* [input 0's data type][an output's data type] */
  bool rank[DMLC_MAX_RANK + 1];
  unsigned in_strided, in_padded, in_permuted, in_broadcast, out_strided, out_padded;
} aot_tally;

static aot_tally tally = {.lock = PTHREAD_MUTEX_INITIALIZER};

static bool write_bytes(const char *path, const void *data, size_t size) {
  FILE *f = fopen(path, "wb");
  bool ok = f && fwrite(data, 1, size, f) == size;
  if (f)
    ok &= fclose(f) == 0;
  return ok;
}

static void aot_close(aot_lib *lib) {
  if (lib->handle)
    dlclose(lib->handle);
  if (lib->dir[0]) {
    char path[128];
    snprintf(path, sizeof path, "%s/g.o", lib->dir);
    remove(path);
    snprintf(path, sizeof path, "%s/g.so", lib->dir);
    remove(path);
    rmdir(lib->dir);
  }
  lib->handle = NULL;
  lib->dir[0] = '\0';
}

/* The entry point NAME_suffix of lib, as a function pointer (NULL when
 * absent). */
static void *aot_symbol(const aot_lib *lib, const char *suffix) {
  char symbol[64];
  snprintf(symbol, sizeof symbol, "%s_%s", lib->name, suffix);
  return dlsym(lib->handle, symbol);
}

/* g compiled ahead of time at opt_level with symbol prefix name, linked
 * into a shared library by $CC (default cc) and loaded; false with why
 * filled when any step fails (a missing C compiler included). */
static bool aot_open(dmlc_context *ctx, dmlc_graph *g, const char *name, int opt_level,
                     aot_lib *lib, char *why, size_t cap) {
  memset(lib, 0, sizeof *lib);
  snprintf(lib->name, sizeof lib->name, "%s", name);
  lib->opt_level = opt_level;
  snprintf(lib->dir, sizeof lib->dir, "/tmp/dmlc-aot-XXXXXX");
  if (!mkdtemp(lib->dir)) {
    lib->dir[0] = '\0';
    snprintf(why, cap, "mkdtemp failed");
    return false;
  }
  const dmlc_aot_options o = {lib->name, NULL, NULL, NULL, opt_level};
  void *obj = NULL, *header = NULL;
  size_t obj_size = 0, header_size = 0;
  dmlc_status st = dmlc_graph_emit(g, "obj", &o, &obj, &obj_size);
  if (st == DMLC_OK)
    st = dmlc_graph_emit(g, "header", &o, &header, &header_size);
  if (st != DMLC_OK) {
    snprintf(why, cap, "emit (-O%d): %s: %s", opt_level, dmlc_status_string(st),
             dmlc_context_error(ctx));
    dmlc_free(obj);
    return false;
  }
  char macro[64];
  snprintf(macro, sizeof macro, "#define %s_WORKSPACE_BYTES ", lib->name);
  const char *ws = strstr(header, macro);
  const bool has_ws = ws != NULL;
  if (has_ws)
    lib->workspace_bytes = strtoull(ws + strlen(macro), NULL, 10);
  dmlc_free(header);
  if (!has_ws) {
    snprintf(why, cap, "the header lacks %s_WORKSPACE_BYTES", lib->name);
    dmlc_free(obj);
    return false;
  }
  char obj_path[128], so_path[128];
  snprintf(obj_path, sizeof obj_path, "%s/g.o", lib->dir);
  snprintf(so_path, sizeof so_path, "%s/g.so", lib->dir);
  const bool written = write_bytes(obj_path, obj, obj_size);
  dmlc_free(obj);
  if (!written) {
    snprintf(why, cap, "cannot write %s", obj_path);
    return false;
  }
  /* $CC as dmlc compile takes it: one program. */
  const char *cc = getenv("CC");
  cc = cc && *cc ? cc : "cc";
  /* posix_spawnp, not fork: a fork copies the page tables of this large,
   * threaded process (under ASan: its shadow and quarantine), and then
   * every page either writes faults once; it was most of the AOT sweep's
   * time under the sanitizers. */
  char *argv[] = {(char *)cc, "-shared", "-o", so_path, obj_path, NULL};
  pid_t pid;
  int status = 0;
  const int spawn_err = posix_spawnp(&pid, cc, NULL, NULL, argv, environ);
  if (spawn_err != 0) {
    snprintf(why, cap, "cannot run '%s' to link the object: %s (set CC)", cc, strerror(spawn_err));
    return false;
  }
  if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    const bool exited = WIFEXITED(status);
    snprintf(why, cap, "linking the object with '%s' (-shared) failed: %s %d (set CC)", cc,
             exited ? "exit status" : "wait status", exited ? WEXITSTATUS(status) : status);
    return false;
  }
  lib->handle = dlopen(so_path, RTLD_NOW | RTLD_LOCAL);
  if (!lib->handle) {
    snprintf(why, cap, "dlopen: %s", dlerror());
    return false;
  }
  void *run = aot_symbol(lib, "run"), *par = aot_symbol(lib, "run_parallel"),
       *wsp = aot_symbol(lib, "run_workspace");
  if (!run || !par || !wsp) {
    snprintf(why, cap, "the library lacks %s_run, %s_run_parallel or %s_run_workspace", lib->name,
             lib->name, lib->name);
    return false;
  }
  memcpy(&lib->run, &run, sizeof run);
  memcpy(&lib->run_parallel, &par, sizeof par);
  memcpy(&lib->run_workspace, &wsp, sizeof wsp);
  return true;
}

/* The caller's side of parallel_for: each call runs its count tasks in a
 * scrambled order on two threads (this one and a helper), so a task that
 * depends on another's order or shares its bytes shows. */
typedef struct aot_pfor {
  uint64_t seed;
  uint32_t calls, max_count;
} aot_pfor;

typedef struct aot_batch {
  const uint32_t *order;
  uint32_t count;
  atomic_uint next;
  aot_task_fn task;
  void *arg;
} aot_batch;

static void aot_batch_drain(aot_batch *b) {
  for (unsigned k; (k = atomic_fetch_add(&b->next, 1u)) < b->count;)
    b->task(b->arg, b->order[k]);
}

static void *aot_helper(void *arg) {
  aot_batch_drain(arg);
  return NULL;
}

static void scrambled_for(void *user, uint32_t count, aot_task_fn task, void *arg) {
  aot_pfor *s = user;
  s->calls++;
  if (count > s->max_count)
    s->max_count = count;
  uint32_t *order = malloc((count ? count : 1) * sizeof *order);
  ck_assert_ptr_nonnull(order);
  for (uint32_t i = 0; i < count; i++)
    order[i] = i;
  rng r = rng_seeded(s->seed + s->calls);
  for (uint32_t i = count; i-- > 1;) {
    const uint32_t j = rng_below(&r, i + 1), t = order[i];
    order[i] = order[j];
    order[j] = t;
  }
  aot_batch b = {.order = order, .count = count, .task = task, .arg = arg};
  atomic_init(&b.next, 0u);
  pthread_t helper;
  const bool threaded = count > 1 && pthread_create(&helper, NULL, aot_helper, &b) == 0;
  aot_batch_drain(&b);
  if (threaded)
    pthread_join(helper, NULL);
  free(order);
}

/* Runs lib through entry point mode. NAME_run and NAME_run_parallel go on
 * to NAME_run_workspace (sequential, or with the same parallel_for) when
 * they return NAME_ERROR_WORKSPACE; *first_rc is what the entry point
 * itself returned. The workspace starts as garbage. */
static int aot_execute(const aot_lib *lib, int mode, const void *const *ins, void *const *outs,
                       aot_pfor *pf, int *first_rc) {
  int rc = mode == AOT_RUN            ? lib->run(ins, outs)
           : mode == AOT_RUN_PARALLEL ? lib->run_parallel(ins, outs, scrambled_for, pf)
                                      : AOT_ERROR_WORKSPACE;
  *first_rc = mode == AOT_RUN_WORKSPACE ? 0 : rc;
  if (rc == AOT_ERROR_WORKSPACE) {
    const size_t bytes = (lib->workspace_bytes + 63) / 64 * 64 + 64;
    void *ws = aligned_alloc(64, bytes);
    ck_assert_ptr_nonnull(ws);
    memset(ws, 0xcd, bytes);
    rc = lib->run_workspace(ins, outs, ws, mode == AOT_RUN ? NULL : scrambled_for, pf);
    free(ws);
  }
  return rc;
}

/* t's strides are row-major over its sizes (dims of one element aside). */
static bool info_packed(const dmlc_tensor_info *t) {
  uint64_t expect = 1;
  for (uint32_t d = t->dimension_count; d-- > 0;) {
    if (t->sizes[d] > 1 && t->strides[d] != expect)
      return false;
    expect *= t->sizes[d];
  }
  return true;
}

static bool info_broadcast(const dmlc_tensor_info *t) {
  for (uint32_t d = 0; d < t->dimension_count; d++)
    if (t->sizes[d] > 1 && t->strides[d] == 0)
      return true;
  return false;
}

/* Elements the layout spans beyond the tensor's: gaps (no broadcast). */
static bool info_padded(const dmlc_tensor_info *t) {
  uint64_t span = 1;
  for (uint32_t d = 0; d < t->dimension_count; d++)
    span += (uint64_t)(t->sizes[d] - 1) * t->strides[d];
  return !info_broadcast(t) && span > info_count(t);
}

/* The dims of more than one element are not outermost-first in memory. */
static bool info_permuted(const dmlc_tensor_info *t) {
  uint64_t prev = UINT64_MAX;
  for (uint32_t d = 0; d < t->dimension_count; d++) {
    if (t->sizes[d] <= 1 || t->strides[d] == 0)
      continue;
    if (t->strides[d] > prev)
      return true;
    prev = t->strides[d];
  }
  return false;
}

/* One passing AOT case into tally: input 0's and the outputs' data types,
 * input 0's rank, every buffer's layout, and how the entry points ran. */
static void tally_case(const dmlc_tensor_info *in, size_t nin, const dmlc_tensor_info *out,
                       size_t nout, int opt_level, bool parallel, bool workspace,
                       uint32_t max_tasks) {
  pthread_mutex_lock(&tally.lock);
  tally.cases++;
  tally.parallel_cases += parallel;
  tally.workspace_cases += workspace;
  if (max_tasks > tally.max_tasks)
    tally.max_tasks = max_tasks;
  tally.opt_levels[opt_level]++;
  if (nin > 0) {
    tally.rank[in[0].dimension_count] = true;
    for (size_t i = 0; i < nout; i++)
      tally.pair[in[0].data_type & 15][out[i].data_type & 15] = true;
  }
  for (size_t i = 0; i < nin; i++) {
    tally.in_strided += !info_packed(&in[i]);
    tally.in_padded += info_padded(&in[i]);
    tally.in_permuted += info_permuted(&in[i]);
    tally.in_broadcast += info_broadcast(&in[i]);
  }
  for (size_t i = 0; i < nout; i++) {
    tally.out_strided += !info_packed(&out[i]);
    tally.out_padded += info_padded(&out[i]);
  }
  pthread_mutex_unlock(&tally.lock);
}

/* The optimization level of a sweep case's object: mostly dmlc compile's
 * default (-O2), a spread of the others. */
static int case_opt_level(const case_params *p) {
  static const int levels[8] = {2, 2, 2, 2, 0, 1, 3, 3};
  return levels[((p->chunk * 1000u + p->index) * 2654435761u >> 13) % 8];
}

/* Compiles g for the device under test (through dmlc_operator_compile when
 * op is given) and for the reference, runs both on the same generated
 * inputs and compares all output bytes. Returns false (after printing the
 * case) on any difference. In AOT mode "the device" is g's object, run
 * through NAME_run, NAME_run_parallel and NAME_run_workspace in turn, each
 * on fresh sentinel bytes. */
static bool check_case(dmlc_context *ctx, dmlc_graph *g, const DML_OPERATOR_DESC *op,
                       case_params *p) {
  const dmlc_device dev = dmlc_test_device();
  dmlc_executable *ref = NULL, *exe = NULL;
  dmlc_status st = dmlc_graph_compile(g, DMLC_DEVICE_REFERENCE, &ref);
  if (st != DMLC_OK) {
    fprintf(stderr, "reference compile: %s\n", dmlc_context_error(ctx));
    print_graph(g);
    ck_abort_msg("the generator made a graph the reference rejects (case %u.%u)", p->chunk,
                 p->index);
  }
  const bool aot = aot_mode();
  aot_lib lib = {0};
  if (aot) {
    char why[512], name[32];
    snprintf(name, sizeof name, "g%u_%u", p->chunk, p->index);
    if (!aot_open(ctx, g, name, case_opt_level(p), &lib, why, sizeof why)) {
      report(p, g, ref, why, NULL, NULL, NULL);
      aot_close(&lib);
      dmlc_executable_destroy(ref);
      return false;
    }
  } else {
    st = op ? dmlc_operator_compile(ctx, op, dev, &exe) : dmlc_graph_compile(g, dev, &exe);
    if (st != DMLC_OK) {
      char why[512];
      snprintf(why, sizeof why, "compile: %s: %s", dmlc_status_string(st), dmlc_context_error(ctx));
      report(p, g, ref, why, NULL, NULL, NULL);
      dmlc_executable_destroy(ref);
      return false;
    }
  }

  const size_t nin = dmlc_executable_input_count(ref), nout = dmlc_executable_output_count(ref);
  ck_assert(nin <= MAX_IO && nout <= MAX_IO);
  ck_assert_uint_eq(aot ? nin : dmlc_executable_input_count(exe), nin);
  ck_assert_uint_eq(aot ? nout : dmlc_executable_output_count(exe), nout);
  io_buffer in[MAX_IO], saved[MAX_IO], got[MAX_IO], want[MAX_IO];
  dmlc_tensor_info in_info[MAX_IO], out_info[MAX_IO];
  dmlc_buffer in_bufs[MAX_IO], got_bufs[MAX_IO], want_bufs[MAX_IO];
  for (size_t i = 0; i < nin; i++) {
    ck_assert_int_eq(dmlc_executable_input_info(ref, i, &in_info[i]), DMLC_OK);
    in[i] = io_alloc(in_info[i].total_size_bytes, p->in_skew[i]);
    fill_input(p, &in_info[i], &in[i]);
    saved[i] = io_alloc(in[i].size, 0);
    memcpy(saved[i].data, in[i].data, in[i].size);
    in_bufs[i] = (dmlc_buffer){in[i].data, in[i].size};
  }
  bool ok = true;
  char why[512] = "";
  for (size_t i = 0; i < nout; i++) {
    dmlc_tensor_info dev_info;
    ck_assert_int_eq(dmlc_executable_output_info(ref, i, &out_info[i]), DMLC_OK);
    ck_assert_int_eq(dmlc_executable_output_info(aot ? ref : exe, i, &dev_info), DMLC_OK);
    if (ok && (dev_info.total_size_bytes != out_info[i].total_size_bytes ||
               dev_info.data_type != out_info[i].data_type)) {
      ok = false;
      snprintf(why, sizeof why, "output %zu: the device expects %s of %" PRIu64 " bytes", i,
               dmlc_data_type_name(dev_info.data_type), dev_info.total_size_bytes);
    }
    got[i] = io_alloc(out_info[i].total_size_bytes, p->out_skew[i]);
    want[i] = io_alloc(out_info[i].total_size_bytes, p->out_skew[i]);
    memset(got[i].data, SENTINEL, got[i].size);
    memset(want[i].data, SENTINEL, want[i].size);
    got_bufs[i] = (dmlc_buffer){got[i].data, got[i].size};
    want_bufs[i] = (dmlc_buffer){want[i].data, want[i].size};
  }
  st = dmlc_execute(ref, in_bufs, nin, want_bufs, nout);
  ck_assert_msg(st == DMLC_OK, "reference execute: %s", dmlc_context_error(ctx));
  const void *aot_ins[MAX_IO];
  void *aot_outs[MAX_IO];
  for (size_t i = 0; i < nin; i++)
    aot_ins[i] = in[i].data;
  for (size_t i = 0; i < nout; i++)
    aot_outs[i] = got[i].data;
  aot_pfor pf = {.seed = base_seed() ^ ((uint64_t)p->chunk << 32 | p->index)};
  bool needed_workspace = false;
  char entry[64] = ""; /* AOT: the entry point, for messages */
  for (int mode = 0; mode < (aot ? AOT_MODES : 1) && ok; mode++) {
    for (size_t i = 0; i < nout; i++)
      memset(got[i].data, SENTINEL, got[i].size);
    if (aot) {
      snprintf(entry, sizeof entry, " (%s_%s, -O%d)", lib.name, aot_mode_names[mode],
               lib.opt_level);
      int first_rc = 0;
      const int rc = aot_execute(&lib, mode, aot_ins, aot_outs, &pf, &first_rc);
      /* NAME_run and NAME_run_parallel return NAME_ERROR_WORKSPACE exactly
       * when the header's workspace exceeds the stack's share. */
      const int expect = mode != AOT_RUN_WORKSPACE && lib.workspace_bytes > AOT_STACK_WORKSPACE
                             ? AOT_ERROR_WORKSPACE
                             : 0;
      if (mode == AOT_RUN)
        needed_workspace = first_rc == AOT_ERROR_WORKSPACE;
      if (first_rc != expect) {
        ok = false;
        snprintf(why, sizeof why, "%s returned %d with a workspace of %" PRIu64 " bytes%s",
                 aot_mode_names[mode], first_rc, lib.workspace_bytes, entry);
      } else if (rc != 0) {
        ok = false;
        snprintf(why, sizeof why, "run_workspace returned %d after %s returned %d%s", rc,
                 aot_mode_names[mode], first_rc, entry);
      }
    } else {
      st = dmlc_execute(exe, in_bufs, nin, got_bufs, nout);
      if (st != DMLC_OK) {
        ok = false;
        snprintf(why, sizeof why, "execute: %s: %s", dmlc_status_string(st),
                 dmlc_context_error(ctx));
      }
    }
    for (size_t i = 0; ok && i < nin; i++)
      if (memcmp(saved[i].data, in[i].data, in[i].size) != 0) {
        ok = false;
        snprintf(why, sizeof why, "input %zu was written%s", i, entry);
      }
    for (size_t i = 0; ok && i < nout; i++) {
      if (memcmp(got[i].data, want[i].data, got[i].size) != 0) {
        ok = false;
        snprintf(why, sizeof why, "output %zu differs from the reference%s", i, entry);
        report(p, g, ref, why, &out_info[i], got[i].data, want[i].data);
        why[0] = '\0';
        break;
      }
      const uint64_t gap = find_written_gap(&out_info[i], got[i].data);
      if (gap != UINT64_MAX) {
        ok = false;
        snprintf(why, sizeof why, "output %zu: byte %" PRIu64 ", in a gap, was written%s", i, gap,
                 entry);
      }
    }
  }
  if (!ok && why[0])
    report(p, g, ref, why, NULL, NULL, NULL);
  if (aot && ok)
    tally_case(in_info, nin, out_info, nout, lib.opt_level, pf.calls > 0, needed_workspace,
               pf.max_count);
  for (size_t i = 0; i < nin; i++) {
    io_free(&in[i]);
    io_free(&saved[i]);
  }
  for (size_t i = 0; i < nout; i++) {
    io_free(&got[i]);
    io_free(&want[i]);
  }
  aot_close(&lib);
  dmlc_executable_destroy(exe);
  dmlc_executable_destroy(ref);
  return ok;
}

/* ---- shapes, axes, layouts ---- */

static uint32_t random_dim(rng *r) {
  static const uint32_t near_multiples[] = {7, 8, 9, 15, 16, 17, 31, 32, 33, 63, 64, 65};
  const uint32_t k = rng_below(r, 100);
  if (k < 22)
    return 1;
  if (k < 55)
    return rng_range(r, 2, 4);
  if (k < 70)
    return rng_range(r, 5, 13);
  if (k < 94)
    return near_multiples[rng_below(r, sizeof near_multiples / sizeof near_multiples[0])];
  return rng_range(r, 66, 300);
}

static uint64_t product(uint32_t rank, const uint32_t *sizes) {
  uint64_t n = 1;
  for (uint32_t d = 0; d < rank; d++)
    n *= sizes[d];
  return n;
}

/* Random sizes of rank `rank`: mostly small, sometimes one long dim of
 * 1000-5000 (vector bodies and tails) with small others. */
static void random_sizes(rng *r, uint32_t rank, uint32_t *sizes) {
  for (uint32_t d = 0; d < rank; d++)
    sizes[d] = random_dim(r);
  const uint64_t limit = 12000;
  while (product(rank, sizes) > limit) {
    uint32_t big = 0;
    for (uint32_t d = 1; d < rank; d++)
      if (sizes[d] > sizes[big])
        big = d;
    sizes[big] = 1 + sizes[big] / 3;
  }
  if (rng_below(r, 100) < 16) {
    const uint32_t d = rng_below(r, rank);
    sizes[d] = rng_range(r, 1000, 5000);
    uint32_t others = 1 + rng_below(r, 6);
    for (uint32_t e = 0; e < rank; e++)
      if (e != d) {
        const uint32_t s = others > 1 && rng_below(r, 2) ? rng_range(r, 2, others) : 1;
        sizes[e] = s;
        others /= s;
        if (others == 0)
          others = 1;
      }
  }
}

/* A random non-empty subset of [0, rank) in random order. */
static uint32_t random_axes(rng *r, uint32_t rank, uint32_t *axes) {
  uint32_t perm[DMLC_MAX_RANK];
  for (uint32_t d = 0; d < rank; d++)
    perm[d] = d;
  for (uint32_t d = rank; d-- > 1;) {
    const uint32_t j = rng_below(r, d + 1), t = perm[d];
    perm[d] = perm[j];
    perm[j] = t;
  }
  const uint32_t n = rng_below(r, 3) == 0 ? 1 : 1 + rng_below(r, rank);
  memcpy(axes, perm, n * sizeof *axes);
  return n;
}

/* A tensor as DirectML describes it; must not move once desc is taken. */
typedef struct tensor {
  UINT sizes[DMLC_MAX_RANK];
  UINT strides[DMLC_MAX_RANK];
  DML_BUFFER_TENSOR_DESC buf;
  DML_TENSOR_DESC desc;
  char layout[16]; /* for messages */
} tensor;

typedef enum layout_kind {
  LAYOUT_PACKED,    /* Strides NULL */
  LAYOUT_EXPLICIT,  /* packed strides, spelled out */
  LAYOUT_PADDED,    /* row-major over padded sizes */
  LAYOUT_PERMUTED,  /* padded, dims in a random memory order (a transpose) */
  LAYOUT_BROADCAST, /* padded or permuted, some strides zero (inputs only) */
  LAYOUT_COUNT
} layout_kind;

static const char *const layout_names[LAYOUT_COUNT] = {"packed", "explicit", "padded", "permuted",
                                                       "broadcast"};

static void random_strides(rng *r, uint32_t rank, const UINT *sizes, layout_kind kind,
                           UINT *strides) {
  uint32_t order[DMLC_MAX_RANK]; /* order[k]: the dim k-th from the outermost */
  for (uint32_t d = 0; d < rank; d++)
    order[d] = d;
  const bool permute = kind == LAYOUT_PERMUTED || (kind == LAYOUT_BROADCAST && rng_below(r, 2));
  for (uint32_t d = rank; permute && d-- > 1;) {
    const uint32_t j = rng_below(r, d + 1), t = order[d];
    order[d] = order[j];
    order[j] = t;
  }
  const bool pad = kind >= LAYOUT_PADDED;
  uint64_t s = pad ? 1 + rng_below(r, 2) : 1;
  for (uint32_t k = rank; k-- > 0;) {
    const uint32_t d = order[k];
    strides[d] = (UINT)s;
    s *= sizes[d] + (pad && rng_below(r, 2) ? rng_range(r, 1, 3) : 0);
  }
  if (kind == LAYOUT_BROADCAST) {
    bool any = false;
    for (uint32_t d = 0; d < rank; d++)
      if (rng_below(r, 3) == 0) {
        strides[d] = 0;
        any = true;
      }
    if (!any)
      strides[rng_below(r, rank)] = 0;
  }
}

static void tensor_init(rng *r, tensor *t, DML_TENSOR_DATA_TYPE type, uint32_t rank,
                        const UINT *sizes, bool is_output) {
  memset(t, 0, sizeof *t);
  memcpy(t->sizes, sizes, rank * sizeof *sizes);
  const uint32_t k = rng_below(r, 100);
  layout_kind kind = k < 40   ? LAYOUT_PACKED
                     : k < 48 ? LAYOUT_EXPLICIT
                     : k < 70 ? LAYOUT_PADDED
                     : k < 85 ? LAYOUT_PERMUTED
                              : LAYOUT_BROADCAST;
  if (is_output && kind == LAYOUT_BROADCAST)
    kind = LAYOUT_PADDED;
  random_strides(r, rank, sizes, kind, t->strides);
  snprintf(t->layout, sizeof t->layout, "%s", layout_names[kind]);
  const uint32_t esize = dmlc_data_type_size(type);
  uint64_t span = 1;
  for (uint32_t d = 0; d < rank; d++)
    span += (uint64_t)(sizes[d] - 1) * t->strides[d];
  uint64_t bytes = (span * esize + 3) & ~(uint64_t)3;
  if (rng_below(r, 8) == 0)
    bytes += 4 * rng_range(r, 1, 16); /* a larger buffer than needed */
  t->buf.DataType = type;
  t->buf.Flags = DML_TENSOR_FLAG_NONE;
  t->buf.DimensionCount = rank;
  t->buf.Sizes = t->sizes;
  t->buf.Strides = kind == LAYOUT_PACKED ? NULL : t->strides;
  t->buf.TotalTensorSizeInBytes = bytes;
  t->buf.GuaranteedBaseOffsetAlignment = rng_below(r, 6) == 0 ? 64 : 0;
  t->desc.Type = DML_TENSOR_TYPE_BUFFER;
  t->desc.Desc = &t->buf;
}

/* With no alignment promised a buffer may start anywhere. */
static uint32_t random_skew(rng *r, const tensor *t) {
  return t->buf.GuaranteedBaseOffsetAlignment || rng_below(r, 3) ? 0 : rng_range(r, 1, 7);
}

/* ---- descriptor cases ---- */

typedef enum op_kind {
  OP_ARGMAX,
  OP_ARGMIN,
  OP_REDUCE_ARGMAX,
  OP_REDUCE_ARGMIN,
  OP_HARDMAX1,
  OP_HARDMAX, /* the legacy descriptor: the last axis */
  OP_COUNT
} op_kind;

static const char *const op_names[OP_COUNT] = {"argmax",        "argmin",   "reduce-argmax",
                                               "reduce-argmin", "hardmax1", "hardmax"};

static dmlc_graph *graph_of_operator(dmlc_context *ctx, const DML_OPERATOR_DESC *op,
                                     const DML_TENSOR_DESC *input) {
  dmlc_graph *g = NULL;
  dmlc_value x, y;
  ck_assert_int_eq(dmlc_graph_create(ctx, "conformance", &g), DMLC_OK);
  dmlc_status st = dmlc_graph_add_input(g, "x", input, &x);
  ck_assert_msg(st == DMLC_OK, "add_input: %s", dmlc_context_error(ctx));
  st = dmlc_graph_add_operator(g, op, &x, 1, &y, 1);
  ck_assert_msg(st == DMLC_OK, "add_operator: %s", dmlc_context_error(ctx));
  st = dmlc_graph_add_output(g, "y", y);
  ck_assert_msg(st == DMLC_OK, "add_output: %s", dmlc_context_error(ctx));
  return g;
}

/* Case `index` of a chunk: the operator kind and the input x index type
 * pair cycle, so every pair comes up in every chunk. */
static bool run_operator_case(dmlc_context *ctx, rng *r, unsigned chunk, unsigned index) {
  const op_kind kind = (op_kind)rng_below(r, OP_COUNT);
  const bool is_hardmax = kind == OP_HARDMAX1 || kind == OP_HARDMAX;
  const uint32_t pair = index % (NUM_INPUT_TYPES * NUM_INDEX_TYPES);
  DML_TENSOR_DATA_TYPE in_type = input_types[pair / NUM_INDEX_TYPES];
  const DML_TENSOR_DATA_TYPE index_type = index_types[pair % NUM_INDEX_TYPES];
  if (is_hardmax && !is_float(in_type))
    in_type = pair % 2 ? DML_TENSOR_DATA_TYPE_FLOAT16 : DML_TENSOR_DATA_TYPE_FLOAT32;
  const uint32_t rank = 1 + rng_below(r, DMLC_MAX_RANK);
  UINT sizes[DMLC_MAX_RANK], out_sizes[DMLC_MAX_RANK], axes[DMLC_MAX_RANK];
  random_sizes(r, rank, sizes);
  uint32_t num_axes = random_axes(r, rank, axes);
  if (kind == OP_HARDMAX) {
    num_axes = 1;
    axes[0] = rank - 1;
  }
  memcpy(out_sizes, sizes, sizeof sizes);
  if (!is_hardmax)
    for (uint32_t k = 0; k < num_axes; k++)
      out_sizes[axes[k]] = 1;
  const DML_AXIS_DIRECTION dir = kind == OP_ARGMAX || kind == OP_ARGMIN
                                     ? (DML_AXIS_DIRECTION)rng_below(r, 2)
                                     : DML_AXIS_DIRECTION_INCREASING;

  tensor ti, to;
  tensor_init(r, &ti, in_type, rank, sizes, false);
  tensor_init(r, &to, is_hardmax ? in_type : index_type, rank, out_sizes, true);
  DML_ARGMAX_OPERATOR_DESC arg = {&ti.desc, &to.desc, num_axes, axes, dir};
  DML_ARGMIN_OPERATOR_DESC argmin = {&ti.desc, &to.desc, num_axes, axes, dir};
  DML_REDUCE_OPERATOR_DESC reduce = {kind == OP_REDUCE_ARGMIN ? DML_REDUCE_FUNCTION_ARGMIN
                                                              : DML_REDUCE_FUNCTION_ARGMAX,
                                     &ti.desc, &to.desc, num_axes, axes};
  DML_ACTIVATION_HARDMAX1_OPERATOR_DESC hard1 = {&ti.desc, &to.desc, num_axes, axes};
  DML_ACTIVATION_HARDMAX_OPERATOR_DESC hard = {&ti.desc, &to.desc};
  DML_OPERATOR_DESC op;
  switch (kind) {
  case OP_ARGMAX:
    op = (DML_OPERATOR_DESC){DML_OPERATOR_ARGMAX, &arg};
    break;
  case OP_ARGMIN:
    op = (DML_OPERATOR_DESC){DML_OPERATOR_ARGMIN, &argmin};
    break;
  case OP_REDUCE_ARGMAX:
  case OP_REDUCE_ARGMIN:
    op = (DML_OPERATOR_DESC){DML_OPERATOR_REDUCE, &reduce};
    break;
  case OP_HARDMAX1:
    op = (DML_OPERATOR_DESC){DML_OPERATOR_ACTIVATION_HARDMAX1, &hard1};
    break;
  default:
    op = (DML_OPERATOR_DESC){DML_OPERATOR_ACTIVATION_HARDMAX, &hard};
    break;
  }

  char what[160];
  snprintf(what, sizeof what, "%s %s -> %s, %s, input %s, output %s", op_names[kind],
           dmlc_data_type_name(in_type), dmlc_data_type_name(to.buf.DataType),
           dir ? "decreasing" : "increasing", ti.layout, to.layout);
  case_params p = {.r = r,
                   .dist = (value_dist)rng_below(r, DIST_COUNT),
                   .constant = rng_below(r, 64),
                   .what = what,
                   .chunk = chunk,
                   .index = index};
  p.in_skew[0] = random_skew(r, &ti);
  p.out_skew[0] = random_skew(r, &to);
  dmlc_graph *g = graph_of_operator(ctx, &op, &ti.desc);
  const bool ok = check_case(ctx, g, rng_below(r, 4) == 0 ? &op : NULL, &p);
  dmlc_graph_destroy(g);
  return ok;
}

/* ---- multi-operator graphs as IR text ---- */

typedef dmlc_test_text text;

static void text_type(text *t, DML_TENSOR_DATA_TYPE type, uint32_t rank, const UINT *sizes,
                      const UINT *strides) {
  dmlc_test_text_add(t, "%s[", dmlc_data_type_name(type));
  for (uint32_t d = 0; d < rank; d++)
    dmlc_test_text_add(t, "%s%u", d ? "," : "", sizes[d]);
  dmlc_test_text_add(t, "]");
  if (!strides)
    return;
  dmlc_test_text_add(t, "{strides = [");
  for (uint32_t d = 0; d < rank; d++)
    dmlc_test_text_add(t, "%s%u", d ? ", " : "", strides[d]);
  dmlc_test_text_add(t, "]}");
}

static void text_axes(text *t, uint32_t n, const UINT *axes) {
  dmlc_test_text_add(t, "{axes = [");
  for (uint32_t k = 0; k < n; k++)
    dmlc_test_text_add(t, "%s%u", k ? ", " : "", axes[k]);
  dmlc_test_text_add(t, "]");
}

/* hardmax and argmax (and sometimes argmin) of one float input, each to
 * its own output; half the time the argmax shares the hardmax's axes, so
 * the backends' shared-reduction path runs. */
static bool run_graph_case(dmlc_context *ctx, rng *r, unsigned chunk, unsigned index) {
  const DML_TENSOR_DATA_TYPE type =
      rng_below(r, 2) ? DML_TENSOR_DATA_TYPE_FLOAT32 : DML_TENSOR_DATA_TYPE_FLOAT16;
  const uint32_t rank = 1 + rng_below(r, 5);
  UINT sizes[DMLC_MAX_RANK], hard_axes[DMLC_MAX_RANK], arg_axes[DMLC_MAX_RANK],
      min_axes[DMLC_MAX_RANK];
  random_sizes(r, rank, sizes);
  const uint32_t num_hard = random_axes(r, rank, hard_axes);
  uint32_t num_arg = num_hard;
  memcpy(arg_axes, hard_axes, sizeof hard_axes);
  if (rng_below(r, 2))
    num_arg = random_axes(r, rank, arg_axes);
  const uint32_t num_min = rng_below(r, 2) ? random_axes(r, rank, min_axes) : 0;
  UINT in_strides[DMLC_MAX_RANK], hard_strides[DMLC_MAX_RANK], arg_strides[DMLC_MAX_RANK];
  UINT arg_sizes[DMLC_MAX_RANK], min_sizes[DMLC_MAX_RANK];
  memcpy(arg_sizes, sizes, sizeof sizes);
  memcpy(min_sizes, sizes, sizeof sizes);
  for (uint32_t k = 0; k < num_arg; k++)
    arg_sizes[arg_axes[k]] = 1;
  for (uint32_t k = 0; k < num_min; k++)
    min_sizes[min_axes[k]] = 1;
  const layout_kind in_layout = (layout_kind)rng_below(r, LAYOUT_COUNT);
  const layout_kind hard_layout = (layout_kind)rng_below(r, LAYOUT_BROADCAST);
  const layout_kind arg_layout = (layout_kind)rng_below(r, LAYOUT_BROADCAST);
  random_strides(r, rank, sizes, in_layout, in_strides);
  random_strides(r, rank, sizes, hard_layout, hard_strides);
  random_strides(r, rank, arg_sizes, arg_layout, arg_strides);
  const DML_TENSOR_DATA_TYPE arg_type = index_types[rng_below(r, NUM_INDEX_TYPES)];
  const DML_TENSOR_DATA_TYPE min_type = index_types[rng_below(r, NUM_INDEX_TYPES)];

  text t = {.len = 0};
  dmlc_test_text_add(&t, "graph @conformance(%%x: ");
  text_type(&t, type, rank, sizes, in_layout == LAYOUT_PACKED ? NULL : in_strides);
  dmlc_test_text_add(&t, ") -> (");
  text_type(&t, type, rank, sizes, hard_layout == LAYOUT_PACKED ? NULL : hard_strides);
  dmlc_test_text_add(&t, ", ");
  text_type(&t, arg_type, rank, arg_sizes, arg_layout == LAYOUT_PACKED ? NULL : arg_strides);
  if (num_min) {
    dmlc_test_text_add(&t, ", ");
    text_type(&t, min_type, rank, min_sizes, NULL);
  }
  dmlc_test_text_add(&t, ") {\n  %%0 = hardmax %%x ");
  text_axes(&t, num_hard, hard_axes);
  dmlc_test_text_add(&t, "} : ");
  text_type(&t, type, rank, sizes, NULL);
  dmlc_test_text_add(&t, "\n  %%1 = argmax %%x ");
  text_axes(&t, num_arg, arg_axes);
  dmlc_test_text_add(&t, ", direction = %s} : ", rng_below(r, 2) ? "decreasing" : "increasing");
  text_type(&t, arg_type, rank, arg_sizes, NULL);
  if (num_min) {
    dmlc_test_text_add(&t, "\n  %%2 = argmin %%x ");
    text_axes(&t, num_min, min_axes);
    dmlc_test_text_add(&t, ", direction = %s} : ", rng_below(r, 2) ? "decreasing" : "increasing");
    text_type(&t, min_type, rank, min_sizes, NULL);
  }
  dmlc_test_text_add(&t, "\n  return %%0, %%1%s\n}\n", num_min ? ", %2" : "");

  dmlc_graph *g = NULL;
  const dmlc_status st = dmlc_graph_parse(ctx, t.buf, t.len, "conformance.dmlir", &g);
  ck_assert_msg(st == DMLC_OK, "parse: %s\n%s", dmlc_context_error(ctx), t.buf);
  char what[96];
  snprintf(what, sizeof what, "IR graph, input %s, outputs %s and %s", layout_names[in_layout],
           layout_names[hard_layout], layout_names[arg_layout]);
  case_params p = {.r = r,
                   .dist = (value_dist)rng_below(r, DIST_COUNT),
                   .constant = rng_below(r, 64),
                   .what = what,
                   .chunk = chunk,
                   .index = index};
  p.in_skew[0] = rng_below(r, 2) ? 0 : rng_range(r, 1, 3);
  for (int i = 0; i < MAX_IO; i++)
    p.out_skew[i] = rng_below(r, 2) ? 0 : rng_range(r, 1, 3);
  const bool ok = check_case(ctx, g, NULL, &p);
  dmlc_graph_destroy(g);
  return ok;
}

/* ---- the sweep ---- */

/* Every case has its own generator, so it is the same case however the
 * sweep is split across threads, and DMLC_TEST_ONLY=chunk.case reruns it
 * alone. */
static rng case_rng(unsigned chunk, unsigned index) {
  return rng_seeded(base_seed() ^ ((uint64_t)chunk << 32 | index) * UINT64_C(0x100000001b3));
}

static bool case_selected(unsigned chunk, unsigned index) {
  const char *only = getenv("DMLC_TEST_ONLY");
  unsigned c, i;
  if (!only || !*only)
    return true;
  ck_assert_msg(sscanf(only, "%u.%u", &c, &i) == 2, "DMLC_TEST_ONLY=%s: expected chunk.case", only);
  return c == chunk && i == index;
}

/* JIT compiles dominate the sweep's time; they run on one thread each, so
 * the cases are shared among one worker per core (DMLC_TEST_JOBS), each
 * with its own context, as dmlc.h asks of threads. */
static unsigned sweep_jobs(void) {
  const char *s = getenv("DMLC_TEST_JOBS");
  long n = s && *s ? strtol(s, NULL, 10) : sysconf(_SC_NPROCESSORS_ONLN);
  return n < 1 ? 1 : n > 16 ? 16 : (unsigned)n;
}

typedef struct sweep_worker {
  pthread_t thread;
  unsigned chunk, first, stride;
  unsigned cases, failures;
} sweep_worker;

static void *sweep_run(void *arg) {
  sweep_worker *w = arg;
  dmlc_context *ctx;
  ck_assert_int_eq(dmlc_context_create(&ctx), DMLC_OK);
  for (unsigned i = w->first; i < CASES_PER_CHUNK + GRAPHS_PER_CHUNK && w->failures < MAX_REPORTS;
       i += w->stride) {
    if (!case_selected(w->chunk, i))
      continue;
    rng r = case_rng(w->chunk, i);
    const bool ok = i < CASES_PER_CHUNK ? run_operator_case(ctx, &r, w->chunk, i)
                                        : run_graph_case(ctx, &r, w->chunk, i);
    w->cases++;
    w->failures += !ok;
  }
  dmlc_context_destroy(ctx);
  return NULL;
}

/* Runs chunk's cases on sweep_jobs() workers, adding to *cases and
 * *failures. */
static void sweep_chunk(unsigned chunk, unsigned *cases, unsigned *failures) {
  const unsigned jobs = sweep_jobs();
  sweep_worker workers[16];
  for (unsigned k = 0; k < jobs; k++) {
    workers[k] = (sweep_worker){.chunk = chunk, .first = k, .stride = jobs};
    if (k > 0)
      ck_assert_int_eq(pthread_create(&workers[k].thread, NULL, sweep_run, &workers[k]), 0);
  }
  sweep_run(&workers[0]);
  *cases += workers[0].cases;
  *failures += workers[0].failures;
  for (unsigned k = 1; k < jobs; k++) {
    pthread_join(workers[k].thread, NULL);
    *cases += workers[k].cases;
    *failures += workers[k].failures;
  }
}

/* How many of the sweep's CHUNKS chunks run (the first ones):
 * DMLC_TEST_SWEEP_CHUNKS when set to 1..CHUNKS (scripts/sanitize.sh runs a
 * fifth under the sanitizers: the plain run covers the rest), else all. */
static int sweep_chunks(void) {
  const char *s = getenv("DMLC_TEST_SWEEP_CHUNKS");
  const long n = s && *s ? strtol(s, NULL, 10) : CHUNKS;
  return n >= 1 && n <= CHUNKS ? (int)n : CHUNKS;
}

static bool running_one_case(void) {
  const char *only = getenv("DMLC_TEST_ONLY");
  return only && *only;
}

START_TEST(test_sweep) {
  unsigned cases = 0, failures = 0;
  sweep_chunk((unsigned)_i, &cases, &failures);
  ck_assert_msg(failures == 0, "%u of %u cases of chunk %d differ on %s (details above)", failures,
                cases, _i, dmlc_device_name(dmlc_test_device()));
  if (!running_one_case())
    ck_assert_uint_eq(cases, CASES_PER_CHUNK + GRAPHS_PER_CHUNK);
}
END_TEST

/* The AOT sweep: the first AOT_CHUNKS chunks in one test, so the tally
 * covers them all: the case count and the coverage the issue asks for. */
START_TEST(test_aot_sweep) {
  unsigned cases = 0, failures = 0;
  for (unsigned chunk = 0; chunk < AOT_CHUNKS; chunk++)
    sweep_chunk(chunk, &cases, &failures);
  ck_assert_msg(failures == 0, "%u of %u generated cases differ as AOT code (details above)",
                failures, cases);
  printf("conformance.aot: %u generated cases, each through NAME_run, NAME_run_parallel and "
         "NAME_run_workspace; -O0/-O1/-O2/-O3: %u/%u/%u/%u; parallel_for called in %u (at most "
         "%u tasks); inputs: %u strided, %u padded, %u permuted, %u broadcast; outputs: %u "
         "strided, %u padded\n",
         cases, tally.opt_levels[0], tally.opt_levels[1], tally.opt_levels[2], tally.opt_levels[3],
         tally.parallel_cases, tally.max_tasks, tally.in_strided, tally.in_padded,
         tally.in_permuted, tally.in_broadcast, tally.out_strided, tally.out_padded);
  if (running_one_case())
    return;
  ck_assert_uint_eq(cases, AOT_CASES);
  ck_assert_uint_eq(tally.cases, AOT_CASES);
  for (size_t a = 0; a < NUM_INPUT_TYPES; a++)
    for (size_t b = 0; b < NUM_INDEX_TYPES; b++)
      ck_assert_msg(tally.pair[input_types[a]][index_types[b]], "no %s -> %s case",
                    dmlc_data_type_name(input_types[a]), dmlc_data_type_name(index_types[b]));
  ck_assert(tally.pair[DML_TENSOR_DATA_TYPE_FLOAT32][DML_TENSOR_DATA_TYPE_FLOAT32]);
  ck_assert(tally.pair[DML_TENSOR_DATA_TYPE_FLOAT16][DML_TENSOR_DATA_TYPE_FLOAT16]);
  for (uint32_t rank = 1; rank <= DMLC_MAX_RANK; rank++)
    ck_assert_msg(tally.rank[rank], "no case of rank %u", rank);
  ck_assert(tally.in_strided > 0 && tally.in_padded > 0 && tally.in_permuted > 0 &&
            tally.in_broadcast > 0);
  ck_assert(tally.out_strided > 0 && tally.out_padded > 0);
  for (int level = 0; level < 4; level++)
    ck_assert_msg(tally.opt_levels[level] > 0, "no case at -O%d", level);
  ck_assert_msg(tally.parallel_cases > 0, "no case called parallel_for");
}
END_TEST

/* ---- known answers on the device ---- */

/* op (whose input is described by input) as AOT code: every entry point
 * must give the same bytes; those land in out. */
static void run_known_aot(dmlc_context *ctx, const DML_OPERATOR_DESC *op,
                          const DML_TENSOR_DESC *input, const void *in, void *out,
                          uint64_t out_bytes) {
  dmlc_graph *g = graph_of_operator(ctx, op, input);
  aot_lib lib;
  char why[512] = "";
  bool ok = aot_open(ctx, g, "known", 2, &lib, why, sizeof why);
  unsigned char *bytes[AOT_MODES] = {NULL};
  aot_pfor pf = {.seed = base_seed()};
  for (int mode = 0; ok && mode < AOT_MODES; mode++) {
    bytes[mode] = malloc(out_bytes);
    ck_assert_ptr_nonnull(bytes[mode]);
    memset(bytes[mode], SENTINEL, out_bytes);
    const void *ins[1] = {in};
    void *outs[1] = {bytes[mode]};
    int first_rc = 0;
    const int rc = aot_execute(&lib, mode, ins, outs, &pf, &first_rc);
    if (rc != 0 || first_rc != 0) {
      ok = false;
      snprintf(why, sizeof why, "known_%s returned %d", aot_mode_names[mode],
               first_rc ? first_rc : rc);
    } else if (memcmp(bytes[mode], bytes[0], out_bytes) != 0) {
      ok = false;
      snprintf(why, sizeof why, "known_%s differs from known_run", aot_mode_names[mode]);
    }
  }
  if (ok)
    memcpy(out, bytes[0], out_bytes);
  for (int mode = 0; mode < AOT_MODES; mode++)
    free(bytes[mode]);
  aot_close(&lib);
  dmlc_graph_destroy(g);
  ck_assert_msg(ok, "%s", why);
}

/* Runs op on the device under test (AOT: as AOT code) with input bytes
 * `in`, described by input; the packed output lands in out. */
static void run_known(const DML_OPERATOR_DESC *op, const DML_TENSOR_DESC *input, const void *in,
                      uint64_t in_bytes, void *out, uint64_t out_bytes) {
  dmlc_context *ctx;
  ck_assert_int_eq(dmlc_context_create(&ctx), DMLC_OK);
  if (aot_mode()) {
    run_known_aot(ctx, op, input, in, out, out_bytes);
    dmlc_context_destroy(ctx);
    return;
  }
  dmlc_executable *exe = NULL;
  const dmlc_status st = dmlc_operator_compile(ctx, op, dmlc_test_device(), &exe);
  ck_assert_msg(st == DMLC_OK, "compile on %s: %s: %s", dmlc_device_name(dmlc_test_device()),
                dmlc_status_string(st), dmlc_context_error(ctx));
  const dmlc_buffer ib = {(void *)in, in_bytes}, ob = {out, out_bytes};
  ck_assert_msg(dmlc_execute(exe, &ib, 1, &ob, 1) == DMLC_OK, "execute: %s",
                dmlc_context_error(ctx));
  dmlc_executable_destroy(exe);
  dmlc_context_destroy(ctx);
}

static void packed_desc(DML_BUFFER_TENSOR_DESC *b, DML_TENSOR_DESC *d, DML_TENSOR_DATA_TYPE type,
                        uint32_t rank, const UINT *sizes) {
  const uint64_t bytes = product(rank, sizes) * dmlc_data_type_size(type);
  *b =
      (DML_BUFFER_TENSOR_DESC){type, DML_TENSOR_FLAG_NONE, rank, sizes, NULL, (bytes + 3) & ~3u, 0};
  *d = (DML_TENSOR_DESC){DML_TENSOR_TYPE_BUFFER, b};
}

typedef struct known_arg {
  DML_OPERATOR_TYPE type;
  DML_REDUCE_FUNCTION function; /* for DML_OPERATOR_REDUCE */
  DML_AXIS_DIRECTION dir;
  uint32_t num_axes;
  UINT axes[2];
  uint32_t count;
  uint32_t want[3];
} known_arg;

/* u32 results of an argmax-like operator over a packed f32 input. */
static void run_known_arg(const known_arg *k, uint32_t rank, const UINT *sizes, const float *in,
                          uint32_t *out) {
  UINT out_sizes[DMLC_MAX_RANK];
  memcpy(out_sizes, sizes, rank * sizeof *sizes);
  for (uint32_t a = 0; a < k->num_axes; a++)
    out_sizes[k->axes[a]] = 1;
  DML_BUFFER_TENSOR_DESC ib, ob;
  DML_TENSOR_DESC id, od;
  packed_desc(&ib, &id, DML_TENSOR_DATA_TYPE_FLOAT32, rank, sizes);
  packed_desc(&ob, &od, DML_TENSOR_DATA_TYPE_UINT32, rank, out_sizes);
  DML_ARGMAX_OPERATOR_DESC arg = {&id, &od, k->num_axes, k->axes, k->dir};
  DML_REDUCE_OPERATOR_DESC reduce = {k->function, &id, &od, k->num_axes, k->axes};
  const DML_OPERATOR_DESC op = {k->type, k->type == DML_OPERATOR_REDUCE ? (const void *)&reduce
                                                                        : (const void *)&arg};
  run_known(&op, &id, in, ib.TotalTensorSizeInBytes, out, ob.TotalTensorSizeInBytes);
}

static const known_arg seed_examples[] = {
    {DML_OPERATOR_ARGMAX, 0, 0, 1, {0}, 3, {1, 2, 1}},
    {DML_OPERATOR_ARGMAX, 0, 0, 1, {1}, 3, {2, 2, 1}},
    {DML_OPERATOR_ARGMAX, 0, 0, 2, {0, 1}, 1, {7}},
    {DML_OPERATOR_ARGMAX, 0, 0, 2, {1, 0}, 1, {7}},
    {DML_OPERATOR_ARGMIN, 0, 0, 1, {0}, 3, {0, 1, 2}},
    {DML_OPERATOR_ARGMIN, 0, 0, 1, {1}, 3, {0, 1, 0}},
    {DML_OPERATOR_ARGMIN, 0, 0, 2, {0, 1}, 1, {4}},
    {DML_OPERATOR_ARGMIN, 0, 0, 2, {1, 0}, 1, {4}},
    {DML_OPERATOR_REDUCE, DML_REDUCE_FUNCTION_ARGMAX, 0, 1, {0}, 3, {1, 2, 1}},
    {DML_OPERATOR_REDUCE, DML_REDUCE_FUNCTION_ARGMAX, 0, 2, {0, 1}, 1, {7}},
    {DML_OPERATOR_REDUCE, DML_REDUCE_FUNCTION_ARGMIN, 0, 1, {1}, 3, {0, 1, 0}},
    {DML_OPERATOR_REDUCE, DML_REDUCE_FUNCTION_ARGMIN, 0, 2, {1, 0}, 1, {4}},
};

START_TEST(test_seed_examples) {
  static const UINT sizes[] = {3, 3};
  static const float x[] = {1, 2, 3, 3, 0, 4, 2, 5, 2};
  const known_arg *k = &seed_examples[_i];
  uint32_t got[3];
  run_known_arg(k, 2, sizes, x, got);
  for (uint32_t i = 0; i < k->count; i++)
    ck_assert_msg(got[i] == k->want[i], "seed example %d, element %u: got %u, expected %u", _i, i,
                  got[i], k->want[i]);
}
END_TEST

START_TEST(test_tie_examples) {
  static const UINT n5[] = {5};
  static const float a[] = {3, 2, 1, 2, 3}, b[] = {1, 2, 3, 2, 1};
  static const struct {
    known_arg k;
    const float *x;
  } cases[] = {
      {{DML_OPERATOR_ARGMAX, 0, DML_AXIS_DIRECTION_INCREASING, 1, {0}, 1, {0}}, a},
      {{DML_OPERATOR_ARGMAX, 0, DML_AXIS_DIRECTION_DECREASING, 1, {0}, 1, {4}}, a},
      {{DML_OPERATOR_ARGMIN, 0, DML_AXIS_DIRECTION_INCREASING, 1, {0}, 1, {0}}, b},
      {{DML_OPERATOR_ARGMIN, 0, DML_AXIS_DIRECTION_DECREASING, 1, {0}, 1, {4}}, b},
      {{DML_OPERATOR_ARGMIN, 0, DML_AXIS_DIRECTION_INCREASING, 1, {0}, 1, {2}}, a},
      {{DML_OPERATOR_ARGMIN, 0, DML_AXIS_DIRECTION_DECREASING, 1, {0}, 1, {2}}, a},
      {{DML_OPERATOR_ARGMAX, 0, DML_AXIS_DIRECTION_INCREASING, 1, {0}, 1, {2}}, b},
      {{DML_OPERATOR_ARGMAX, 0, DML_AXIS_DIRECTION_DECREASING, 1, {0}, 1, {2}}, b},
      {{DML_OPERATOR_REDUCE, DML_REDUCE_FUNCTION_ARGMAX, 0, 1, {0}, 1, {0}}, a},
      {{DML_OPERATOR_REDUCE, DML_REDUCE_FUNCTION_ARGMIN, 0, 1, {0}, 1, {0}}, b},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    uint32_t got;
    run_known_arg(&cases[i].k, 1, n5, cases[i].x, &got);
    ck_assert_msg(got == cases[i].k.want[0], "tie case %zu: got %u, expected %u", i, got,
                  cases[i].k.want[0]);
  }
}
END_TEST

/* The HARDMAX1 page's examples, and the legacy descriptor (the last axis). */
START_TEST(test_hardmax_examples) {
  static const UINT sizes[] = {2, 2, 2};
  static const float x[] = {12, 0, -101, 11, 3, 234, 0, -101};
  static const struct {
    uint32_t num_axes;
    UINT axes[2];
    float want[8];
  } cases[] = {
      {1, {1}, {1, 0, 0, 1, 1, 1, 0, 0}},    {1, {0}, {1, 0, 0, 1, 0, 1, 1, 0}},
      {2, {0, 2}, {0, 0, 0, 1, 0, 1, 0, 0}}, {2, {2, 0}, {0, 0, 0, 1, 0, 1, 0, 0}},
      {0, {0}, {1, 0, 0, 1, 0, 1, 1, 0}}, /* legacy: axis 2 */
  };
  DML_BUFFER_TENSOR_DESC b;
  DML_TENSOR_DESC d;
  packed_desc(&b, &d, DML_TENSOR_DATA_TYPE_FLOAT32, 3, sizes);
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    DML_ACTIVATION_HARDMAX1_OPERATOR_DESC h1 = {&d, &d, cases[i].num_axes, cases[i].axes};
    DML_ACTIVATION_HARDMAX_OPERATOR_DESC h = {&d, &d};
    const DML_OPERATOR_DESC op = cases[i].num_axes
                                     ? (DML_OPERATOR_DESC){DML_OPERATOR_ACTIVATION_HARDMAX1, &h1}
                                     : (DML_OPERATOR_DESC){DML_OPERATOR_ACTIVATION_HARDMAX, &h};
    float got[8];
    run_known(&op, &d, x, sizeof x, got, sizeof got);
    for (int e = 0; e < 8; e++)
      ck_assert_msg(got[e] == cases[i].want[e], "hardmax case %zu, element %d: got %g, want %g", i,
                    e, (double)got[e], (double)cases[i].want[e]);
  }
}
END_TEST

/* ---- thread counts ---- */

/* Big cases whose outer loops split across threads: 1, 2 and 3 threads
 * give the same bytes as each other and as the reference. */
static const char *const thread_graphs[] = {
    "graph @t(%x: f32[1536,2053]) -> (u32[1536,1]) {\n"
    "  %0 = argmax %x {axes = [1]} : u32[1536,1]\n  return %0\n}\n",
    "graph @t(%x: f16[1031,2048]) -> (i64[1,2048]) {\n"
    "  %0 = argmin %x {axes = [0], direction = decreasing} : i64[1,2048]\n  return %0\n}\n",
    "graph @t(%x: f32[999,1001]) -> (f32[999,1001]) {\n"
    "  %0 = hardmax %x {axes = [0]} : f32[999,1001]\n  return %0\n}\n",
    "graph @t(%x: u8[1003,997]) -> (u64[1,1]) {\n"
    "  %0 = argmax %x {axes = [0, 1], direction = decreasing} : u64[1,1]\n  return %0\n}\n",
};
#define NUM_THREAD_GRAPHS (int)(sizeof thread_graphs / sizeof thread_graphs[0])

START_TEST(test_thread_counts) {
  const char *text = thread_graphs[_i];
  rng r = rng_seeded(base_seed() + 77 + (uint64_t)_i);
  io_buffer first[1] = {{NULL, NULL, 0}};
  dmlc_tensor_info out_info;
  for (int threads = 1; threads <= 3; threads++) {
    dmlc_context *ctx;
    ck_assert_int_eq(dmlc_context_create(&ctx), DMLC_OK);
    ck_assert_int_eq(dmlc_context_set_num_threads(ctx, (uint32_t)threads), DMLC_OK);
    dmlc_graph *g = NULL;
    ck_assert_int_eq(dmlc_graph_parse(ctx, text, strlen(text), "threads.dmlir", &g), DMLC_OK);
    /* against the reference, once */
    rng data_rng = r;
    case_params p = {.r = &data_rng,
                     .dist = DIST_SMALL_INTS,
                     .what = "thread counts",
                     .chunk = 0,
                     .index = (unsigned)threads};
    if (threads == 1)
      ck_assert_msg(check_case(ctx, g, NULL, &p), "%d threads differ from the reference", threads);
    /* and against the 1-thread bytes */
    dmlc_executable *exe = NULL;
    const dmlc_status st = dmlc_graph_compile(g, dmlc_test_device(), &exe);
    ck_assert_msg(st == DMLC_OK, "compile: %s", dmlc_context_error(ctx));
    dmlc_tensor_info in_info;
    ck_assert_int_eq(dmlc_executable_input_info(exe, 0, &in_info), DMLC_OK);
    ck_assert_int_eq(dmlc_executable_output_info(exe, 0, &out_info), DMLC_OK);
    io_buffer in = io_alloc(in_info.total_size_bytes, 0);
    data_rng = r;
    fill_input(&p, &in_info, &in);
    io_buffer out = io_alloc(out_info.total_size_bytes, 0);
    memset(out.data, SENTINEL, out.size);
    const dmlc_buffer ib = {in.data, in.size}, ob = {out.data, out.size};
    ck_assert_msg(dmlc_execute(exe, &ib, 1, &ob, 1) == DMLC_OK, "execute: %s",
                  dmlc_context_error(ctx));
    if (threads == 1) {
      first[0] = out;
    } else {
      ck_assert_msg(memcmp(out.data, first[0].data, out.size) == 0,
                    "%d threads differ from 1 thread on\n%s", threads, text);
      io_free(&out);
    }
    io_free(&in);
    dmlc_executable_destroy(exe);
    dmlc_graph_destroy(g);
    dmlc_context_destroy(ctx);
  }
  io_free(&first[0]);
}
END_TEST

/* ---- AOT: the examples, big graphs, workspaces ---- */

static int compare_names(const void *a, const void *b) { return strcmp(a, b); }

/* Every .dmlir file in examples/ (layouts.dmlir's strided and broadcast
 * bindings included) as AOT code against the reference, on two kinds of
 * values. */
START_TEST(test_aot_examples) {
  static char names[64][64];
  unsigned n = 0;
  DIR *dir = opendir(DMLC_SOURCE_DIR "/examples");
  ck_assert_ptr_nonnull(dir);
  for (struct dirent *e; (e = readdir(dir)) != NULL;) {
    const size_t len = strlen(e->d_name);
    if (len > 6 && len < sizeof names[0] && strcmp(e->d_name + len - 6, ".dmlir") == 0) {
      ck_assert_uint_lt(n, 64);
      memcpy(names[n++], e->d_name, len + 1);
    }
  }
  closedir(dir);
  qsort(names, n, sizeof names[0], compare_names);
  ck_assert_uint_ge(n, 12);
  dmlc_context *ctx;
  ck_assert_int_eq(dmlc_context_create(&ctx), DMLC_OK);
  static const value_dist dists[2] = {DIST_SMALL_INTS, DIST_SPECIAL};
  for (unsigned k = 0; k < n; k++) {
    char path[256];
    snprintf(path, sizeof path, "%s/examples/%s", DMLC_SOURCE_DIR, names[k]);
    size_t len = 0;
    char *text = dmlc_test_read_file(path, &len);
    ck_assert_ptr_nonnull(text);
    dmlc_graph *g = NULL;
    ck_assert_msg(dmlc_graph_parse(ctx, text, len, names[k], &g) == DMLC_OK, "%s: %s", path,
                  dmlc_context_error(ctx));
    free(text);
    for (unsigned j = 0; j < 2; j++) {
      rng r = rng_seeded(base_seed() + 31 * k + j);
      case_params p = {.r = &r, .dist = dists[j], .what = names[k], .index = 2 * k + j};
      ck_assert_msg(check_case(ctx, g, NULL, &p), "%s differs as AOT code (details above)",
                    names[k]);
    }
    dmlc_graph_destroy(g);
  }
  dmlc_context_destroy(ctx);
  printf("conformance.aot: %u examples, twice each\n", n);
}
END_TEST

/* Graphs whose kernels split into many tasks (the thread-count graphs),
 * and chains whose temporaries make a workspace of up to, just over and
 * well over the 1 MiB NAME_run keeps on its stack. */
static const struct {
  const char *text;
  bool parallel;  /* NAME_run_parallel must call parallel_for */
  bool workspace; /* NAME_run must return NAME_ERROR_WORKSPACE */
} aot_big_graphs[] = {
    {"graph @w(%x: f32[256,1024]) -> (u32[256,1]) {\n"
     "  %0 = hardmax %x {axes = [0]} : f32[256,1024]\n"
     "  %1 = argmax %0 {axes = [1]} : u32[256,1]\n  return %1\n}\n",
     true, false},
    {"graph @w(%x: f32[257,1024]) -> (u32[257,1]) {\n"
     "  %0 = hardmax %x {axes = [0]} : f32[257,1024]\n"
     "  %1 = argmax %0 {axes = [1]} : u32[257,1]\n  return %1\n}\n",
     true, true},
    {"graph @w(%x: f32[512,1024]) -> (u32[512,1], f32[512,1024]{strides = [1025, 1]}) {\n"
     "  %0 = hardmax %x {axes = [0]} : f32[512,1024]\n"
     "  %1 = argmax %0 {axes = [1], direction = decreasing} : u32[512,1]\n"
     "  %2 = hardmax %0 {axes = [1]} : f32[512,1024]\n  return %1, %2\n}\n",
     true, true},
    {"graph @w(%x: f16[3,5,7,300]) -> (i64[1,5,7,1], f16[3,5,7,300]) {\n"
     "  %0 = hardmax %x {axes = [3]} : f16[3,5,7,300]\n"
     "  %1 = hardmax %0 {axes = [0, 2]} : f16[3,5,7,300]\n"
     "  %2 = argmin %1 {axes = [0, 3], direction = decreasing} : i64[1,5,7,1]\n"
     "  return %2, %0\n}\n",
     true, false},
};
#define NUM_AOT_BIG_GRAPHS (int)(sizeof aot_big_graphs / sizeof aot_big_graphs[0])

START_TEST(test_aot_big) {
  const bool thread_graph = _i < NUM_THREAD_GRAPHS;
  const char *text = thread_graph ? thread_graphs[_i] : aot_big_graphs[_i - NUM_THREAD_GRAPHS].text;
  const bool parallel = thread_graph || aot_big_graphs[_i - NUM_THREAD_GRAPHS].parallel;
  const bool workspace = !thread_graph && aot_big_graphs[_i - NUM_THREAD_GRAPHS].workspace;
  dmlc_context *ctx;
  ck_assert_int_eq(dmlc_context_create(&ctx), DMLC_OK);
  dmlc_graph *g = NULL;
  ck_assert_msg(dmlc_graph_parse(ctx, text, strlen(text), "big.dmlir", &g) == DMLC_OK, "%s",
                dmlc_context_error(ctx));
  for (unsigned j = 0; j < 2; j++) {
    rng r = rng_seeded(base_seed() + 77 + (uint64_t)_i + 1000 * j);
    case_params p = {.r = &r,
                     .dist = j ? DIST_RARE_NAN : DIST_SMALL_INTS,
                     .what = "big AOT graph",
                     .index = (unsigned)_i};
    const unsigned parallel_before = tally.parallel_cases, workspace_before = tally.workspace_cases;
    ck_assert_msg(check_case(ctx, g, NULL, &p), "differs as AOT code (details above):\n%s", text);
    ck_assert_msg((tally.parallel_cases > parallel_before) == parallel,
                  "parallel_for %s called on\n%s", parallel ? "was not" : "was", text);
    ck_assert_msg((tally.workspace_cases > workspace_before) == workspace,
                  "NAME_run %s NAME_ERROR_WORKSPACE on\n%s",
                  workspace ? "did not return" : "returned", text);
  }
  printf("conformance.aot: big graph %d: parallel_for of up to %u tasks, %s\n", _i, tally.max_tasks,
         workspace ? "NAME_run_workspace" : "the workspace on the stack");
  dmlc_graph_destroy(g);
  dmlc_context_destroy(ctx);
}
END_TEST

static Suite *conformance_suite(void) {
  Suite *s = suite_create("conformance");
  TCase *tc = tcase_create("known");
  tcase_add_loop_test(tc, test_seed_examples, 0,
                      (int)(sizeof seed_examples / sizeof seed_examples[0]));
  tcase_add_test(tc, test_tie_examples);
  tcase_add_test(tc, test_hardmax_examples);
  suite_add_tcase(s, tc);

  if (aot_mode()) {
    /* AOT: the sweep's first AOT_CHUNKS chunks, the examples, and big
     * graphs (thread counts are the caller's: parallel_for). */
    tc = tcase_create("sweep");
    tcase_add_test(tc, test_aot_sweep);
    suite_add_tcase(s, tc);
    tc = tcase_create("examples");
    tcase_add_test(tc, test_aot_examples);
    tcase_add_loop_test(tc, test_aot_big, 0, NUM_THREAD_GRAPHS + NUM_AOT_BIG_GRAPHS);
    suite_add_tcase(s, tc);
    return s;
  }

  tc = tcase_create("sweep");
  tcase_add_loop_test(tc, test_sweep, 0, sweep_chunks());
  suite_add_tcase(s, tc);

  tc = tcase_create("threads");
  tcase_add_loop_test(tc, test_thread_counts, 0, NUM_THREAD_GRAPHS);
  suite_add_tcase(s, tc);
  return s;
}

int main(void) {
  const dmlc_device dev = dmlc_test_device();
  if (dev == DMLC_DEVICE_DEFAULT) {
    fprintf(stderr, "DMLC_TEST_DEVICE=%s: expected reference, cpu or vulkan\n",
            getenv("DMLC_TEST_DEVICE"));
    return EXIT_FAILURE;
  }
  if (aot_mode())
    printf("conformance: ahead-of-time objects (%d generated cases, the known answers, the "
           "examples, big graphs) against the reference, seed 0x%" PRIx64 "\n",
           AOT_CASES, base_seed());
  else
    printf("conformance: %s against the reference, seed 0x%" PRIx64 ", %d of %d sweep chunks\n",
           dmlc_device_name(dev), base_seed(), sweep_chunks(), CHUNKS);
  Suite *suites[] = {conformance_suite()};
  return dmlc_test_run_suites(suites, 1);
}
