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
 * DMLC_TEST_AOT=1 checks ahead-of-time code instead of a device: each case's
 * graph is compiled with dmlc_graph_emit(..., "obj"), linked into a shared
 * library by the C compiler ($CC, default cc), dlopen'ed and run through
 * NAME_run and NAME_run_parallel (tasks in reverse order), over the first
 * AOT_CHUNKS chunks of the sweep (400 cases). */
#include <dlfcn.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdarg.h>
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
enum { AOT_CHUNKS = 4 };

static bool aot_mode(void) {
  const char *s = getenv("DMLC_TEST_AOT");
  return s && strcmp(s, "1") == 0;
}
#define MAX_IO 4
#define CHUNKS 30
#define CASES_PER_CHUNK 90
#define GRAPHS_PER_CHUNK 10
#define MAX_REPORTS 3

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
          "  rerun alone: DMLC_TEST_DEVICE=%s DMLC_TEST_SEED=0x%" PRIx64
          " DMLC_TEST_ONLY=%u.%u test_conformance\n",
          getenv("DMLC_TEST_DEVICE") ? getenv("DMLC_TEST_DEVICE") : "reference", base_seed(),
          p->chunk, p->index);
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

/* Compiles g for the device under test (through dmlc_operator_compile when
 * op is given) and for the reference, runs both on the same generated
 * inputs and compares all output bytes. Returns false (after printing the
 * case) on any difference. */
/* ---- ahead-of-time code (DMLC_TEST_AOT=1) ---- */

typedef int (*aot_run_fn)(const void *const *, void *const *);
typedef void (*aot_task_fn)(void *, uint32_t);
typedef void (*aot_pfor_fn)(void *, uint32_t, aot_task_fn, void *);
typedef int (*aot_run_parallel_fn)(const void *const *, void *const *, aot_pfor_fn, void *);
typedef int (*aot_run_workspace_fn)(const void *const *, void *const *, void *, aot_pfor_fn,
                                    void *);

typedef struct aot_lib {
  char dir[64];
  void *handle;
  aot_run_fn run;
  aot_run_parallel_fn run_parallel;
  aot_run_workspace_fn run_workspace;
  uint64_t workspace_bytes;
} aot_lib;

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
}

static void *aot_symbol(void *handle, const char *name) { return dlsym(handle, name); }

/* g as a loaded shared library; false with why filled when any step fails. */
static bool aot_open(dmlc_context *ctx, dmlc_graph *g, aot_lib *lib, char *why, size_t cap) {
  memset(lib, 0, sizeof *lib);
  snprintf(lib->dir, sizeof lib->dir, "/tmp/dmlc-aot-XXXXXX");
  if (!mkdtemp(lib->dir)) {
    lib->dir[0] = '\0';
    snprintf(why, cap, "mkdtemp failed");
    return false;
  }
  const dmlc_aot_options o = {"g", NULL, NULL, NULL, 2};
  void *obj = NULL, *header = NULL;
  size_t obj_size = 0, header_size = 0;
  dmlc_status st = dmlc_graph_emit(g, "obj", &o, &obj, &obj_size);
  if (st == DMLC_OK)
    st = dmlc_graph_emit(g, "header", &o, &header, &header_size);
  if (st != DMLC_OK) {
    snprintf(why, cap, "emit: %s: %s", dmlc_status_string(st), dmlc_context_error(ctx));
    dmlc_free(obj);
    return false;
  }
  const char *ws = strstr(header, "#define g_WORKSPACE_BYTES ");
  lib->workspace_bytes = ws ? strtoull(ws + strlen("#define g_WORKSPACE_BYTES "), NULL, 10) : 0;
  dmlc_free(header);
  char obj_path[128], so_path[128];
  snprintf(obj_path, sizeof obj_path, "%s/g.o", lib->dir);
  snprintf(so_path, sizeof so_path, "%s/g.so", lib->dir);
  const bool written = write_bytes(obj_path, obj, obj_size);
  dmlc_free(obj);
  if (!written) {
    snprintf(why, cap, "cannot write %s", obj_path);
    return false;
  }
  const char *cc = getenv("CC");
  cc = cc && *cc ? cc : "cc";
  const pid_t pid = fork();
  if (pid == 0) {
    execlp(cc, cc, "-shared", "-o", so_path, obj_path, (char *)NULL);
    _exit(127);
  }
  int status = 0;
  if (pid < 0 || waitpid(pid, &status, 0) != pid || !WIFEXITED(status) ||
      WEXITSTATUS(status) != 0) {
    snprintf(why, cap, "linking the object with %s failed (status %d)", cc, status);
    return false;
  }
  lib->handle = dlopen(so_path, RTLD_NOW | RTLD_LOCAL);
  if (!lib->handle) {
    snprintf(why, cap, "dlopen: %s", dlerror());
    return false;
  }
  void *run = aot_symbol(lib->handle, "g_run"), *par = aot_symbol(lib->handle, "g_run_parallel"),
       *wsp = aot_symbol(lib->handle, "g_run_workspace");
  if (!run || !par || !wsp) {
    snprintf(why, cap, "the library lacks an entry point");
    return false;
  }
  memcpy(&lib->run, &run, sizeof run);
  memcpy(&lib->run_parallel, &par, sizeof par);
  memcpy(&lib->run_workspace, &wsp, sizeof wsp);
  return true;
}

/* parallel_for: every task, in reverse order, on this thread. */
static void reverse_for(void *user, uint32_t count, aot_task_fn task, void *arg) {
  (void)user;
  for (uint32_t i = count; i-- > 0;)
    task(arg, i);
}

/* Runs the library (mode 0: NAME_run, 1: NAME_run_parallel); a workspace
 * too large for the stack goes through NAME_run_workspace. */
static int aot_execute(const aot_lib *lib, int mode, const dmlc_buffer *in, size_t nin,
                       const dmlc_buffer *out, size_t nout) {
  const void *ins[MAX_IO];
  void *outs[MAX_IO];
  for (size_t i = 0; i < nin; i++)
    ins[i] = in[i].data;
  for (size_t i = 0; i < nout; i++)
    outs[i] = out[i].data;
  int rc = mode == 0 ? lib->run(ins, outs) : lib->run_parallel(ins, outs, reverse_for, NULL);
  if (rc == 2) {
    void *ws = aligned_alloc(64, (lib->workspace_bytes + 63) / 64 * 64 + 64);
    rc = ws ? lib->run_workspace(ins, outs, ws, mode ? reverse_for : NULL, NULL) : -1;
    free(ws);
  }
  return rc;
}

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
    char why[512];
    if (!aot_open(ctx, g, &lib, why, sizeof why)) {
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
  /* AOT: NAME_run, then NAME_run_parallel, each on fresh sentinel bytes. */
  for (int mode = 0; mode < (aot ? 2 : 1) && ok; mode++) {
    for (size_t i = 0; i < nout; i++)
      memset(got[i].data, SENTINEL, got[i].size);
    if (aot) {
      const int rc = aot_execute(&lib, mode, in_bufs, nin, got_bufs, nout);
      if (rc != 0) {
        ok = false;
        snprintf(why, sizeof why, "%s returned %d", mode ? "g_run_parallel" : "g_run", rc);
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
        snprintf(why, sizeof why, "input %zu was written", i);
      }
    for (size_t i = 0; ok && i < nout; i++) {
      if (memcmp(got[i].data, want[i].data, got[i].size) != 0) {
        ok = false;
        snprintf(why, sizeof why, "output %zu differs from the reference%s", i,
                 aot ? (mode ? " (g_run_parallel)" : " (g_run)") : "");
        report(p, g, ref, why, &out_info[i], got[i].data, want[i].data);
        why[0] = '\0';
        break;
      }
      const uint64_t gap = find_written_gap(&out_info[i], got[i].data);
      if (gap != UINT64_MAX) {
        ok = false;
        snprintf(why, sizeof why, "output %zu: byte %" PRIu64 ", in a gap, was written", i, gap);
      }
    }
  }
  if (!ok && why[0])
    report(p, g, ref, why, NULL, NULL, NULL);
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

START_TEST(test_sweep) {
  const unsigned jobs = sweep_jobs();
  sweep_worker workers[16];
  for (unsigned k = 0; k < jobs; k++) {
    workers[k] = (sweep_worker){.chunk = (unsigned)_i, .first = k, .stride = jobs};
    if (k > 0)
      ck_assert_int_eq(pthread_create(&workers[k].thread, NULL, sweep_run, &workers[k]), 0);
  }
  sweep_run(&workers[0]);
  unsigned cases = workers[0].cases, failures = workers[0].failures;
  for (unsigned k = 1; k < jobs; k++) {
    pthread_join(workers[k].thread, NULL);
    cases += workers[k].cases;
    failures += workers[k].failures;
  }
  ck_assert_msg(failures == 0, "%u of %u cases of chunk %d differ on %s (details above)", failures,
                cases, _i, aot_mode() ? "aot" : dmlc_device_name(dmlc_test_device()));
  const char *only = getenv("DMLC_TEST_ONLY");
  if (!only || !*only)
    ck_assert_uint_eq(cases, CASES_PER_CHUNK + GRAPHS_PER_CHUNK);
}
END_TEST

/* ---- known answers on the device ---- */

/* Runs op on the device under test with input bytes `in`; the packed
 * output lands in out. */
static void run_known(const DML_OPERATOR_DESC *op, const void *in, uint64_t in_bytes, void *out,
                      uint64_t out_bytes) {
  dmlc_context *ctx;
  ck_assert_int_eq(dmlc_context_create(&ctx), DMLC_OK);
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
  run_known(&op, in, ib.TotalTensorSizeInBytes, out, ob.TotalTensorSizeInBytes);
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
    run_known(&op, x, sizeof x, got, sizeof got);
    for (int e = 0; e < 8; e++)
      ck_assert_msg(got[e] == cases[i].want[e], "hardmax case %zu, element %d: got %g, want %g", i,
                    e, (double)got[e], (double)cases[i].want[e]);
  }
}
END_TEST

/* ---- thread counts ---- */

/* Big cases whose outer loops split across threads: 1, 2 and 3 threads
 * give the same bytes as each other and as the reference. */
START_TEST(test_thread_counts) {
  static const char *const graphs[] = {
      "graph @t(%x: f32[1536,2053]) -> (u32[1536,1]) {\n"
      "  %0 = argmax %x {axes = [1]} : u32[1536,1]\n  return %0\n}\n",
      "graph @t(%x: f16[1031,2048]) -> (i64[1,2048]) {\n"
      "  %0 = argmin %x {axes = [0], direction = decreasing} : i64[1,2048]\n  return %0\n}\n",
      "graph @t(%x: f32[999,1001]) -> (f32[999,1001]) {\n"
      "  %0 = hardmax %x {axes = [0]} : f32[999,1001]\n  return %0\n}\n",
      "graph @t(%x: u8[1003,997]) -> (u64[1,1]) {\n"
      "  %0 = argmax %x {axes = [0, 1], direction = decreasing} : u64[1,1]\n  return %0\n}\n",
  };
  const char *text = graphs[_i];
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

static Suite *conformance_suite(void) {
  Suite *s = suite_create("conformance");
  if (aot_mode()) {
    /* The known answers and thread counts test a device: AOT runs the
     * sweep's first AOT_CHUNKS chunks. */
    TCase *sweep = tcase_create("sweep");
    tcase_add_loop_test(sweep, test_sweep, 0, AOT_CHUNKS);
    suite_add_tcase(s, sweep);
    return s;
  }
  TCase *tc = tcase_create("known");
  tcase_add_loop_test(tc, test_seed_examples, 0,
                      (int)(sizeof seed_examples / sizeof seed_examples[0]));
  tcase_add_test(tc, test_tie_examples);
  tcase_add_test(tc, test_hardmax_examples);
  suite_add_tcase(s, tc);

  tc = tcase_create("sweep");
  tcase_add_loop_test(tc, test_sweep, 0, CHUNKS);
  suite_add_tcase(s, tc);

  tc = tcase_create("threads");
  tcase_add_loop_test(tc, test_thread_counts, 0, 4);
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
    printf("conformance: ahead-of-time objects (%d chunks of %d cases) against the reference, "
           "seed 0x%" PRIx64 "\n",
           AOT_CHUNKS, CASES_PER_CHUNK + GRAPHS_PER_CHUNK, base_seed());
  else
    printf("conformance: %s against the reference, seed 0x%" PRIx64 "\n", dmlc_device_name(dev),
           base_seed());
  Suite *suites[] = {conformance_suite()};
  return dmlc_test_run_suites(suites, 1);
}
