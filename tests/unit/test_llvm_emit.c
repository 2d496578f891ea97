/* The LLVM kernel emitter: kernel descriptions built by hand for every path
 * (rows, split rows, columns, generic, elementwise), emitted, verified,
 * optimized (the JIT's pipeline; a quarter at default<O3>), JIT-compiled and
 * run with random task splits, then compared bit for bit with a scalar
 * evaluation of the kdesc written here over runtime/reference's element
 * rules (load, compare, store). */
#include <check.h>
#include <llvm-c/Analysis.h>
#include <llvm-c/Core.h>
#include <llvm-c/Error.h>
#include <llvm-c/LLJIT.h>
#include <llvm-c/Orc.h>
#include <llvm-c/Target.h>
#include <llvm-c/TargetMachine.h>
#include <llvm-c/Transforms/PassBuilder.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "codegen/llvm/emit.h"
#include "codegen/llvm/emit_internal.h"
#include "codegen/llvm/jit.h"
#include "runtime/reference/scalar.h"
#include "testutil.h"

#define SENTINEL 0xab

/* host_tm runs the passes (the JIT's, or O3 as ahead-of-time objects get);
 * code_tm, as the JIT's optimizing target machine (jit.c), generates the
 * code of every kernel, once, not a target machine for each kernel. */
static LLVMTargetMachineRef host_tm, code_tm;
static char *host_triple;
/* dmlc_llvm_target.nontemporal_min_bytes for the kernels compiled, and the
 * byte offset of every output buffer from a 64-byte boundary. */
static uint64_t nt_min_bytes;
/* dmlc_llvm_target.psign_bytes for the kernels compiled (0 or the host's:
 * 32 on x86 with AVX2) */
static uint32_t psign_bytes, host_psign_bytes;
/* dmlc_llvm_target.soft_half: f16 widened in integer operations */
static bool soft_half;
static uint32_t out_shift;
/* dmlc_llvm_target.stream_prefetch_max_bytes for the kernels compiled */
static uint64_t stream_prefetch_max = UINT64_MAX;
/* dmlc_llvm_target.vector_bytes for the kernels compiled */
static uint32_t vec_bytes = 32;
/* dmlc_llvm_target.row_narrow_bytes (0: every row at vec_bytes) */
static uint32_t row_narrow;
/* dmlc_llvm_target.l2_bytes (0: unknown) */
static uint64_t l2_bytes;
/* dmlc_llvm_target.short_row_blocks */
static bool short_row_blocks;
/* dmlc_llvm_target.far_row_prefetch */
static bool far_row_prefetch;
/* dmlc_llvm_target.row_prefetch_max_bytes (0: no further limit) */
static uint64_t row_prefetch_max;
/* dmlc_llvm_target.long_column_runs */
static bool long_column_runs;
/* dmlc_llvm_target.no_column_run_prefetch */
static bool no_column_run_prefetch;
/* dmlc_llvm_target.byte_permutes */
static bool byte_permutes;
/* dmlc_llvm_target.lane_rows */
static bool lane_rows;
/* dmlc_llvm_target.split_min_bytes (0: split whenever tasks are few) */
static uint64_t split_min;
static uint64_t rng = 0x9e3779b97f4a7c15ull;
/* what test_random_kernels adds to its kernels' descriptions (its knobs) */
static char random_note[192];

static uint64_t rnd(void) {
  rng ^= rng << 13;
  rng ^= rng >> 7;
  rng ^= rng << 17;
  return rng;
}

static const dmlc_dtype reduce_types[] = {
    DMLC_DTYPE_F32, DMLC_DTYPE_F16, DMLC_DTYPE_F64, DMLC_DTYPE_I8,  DMLC_DTYPE_I16, DMLC_DTYPE_I32,
    DMLC_DTYPE_I64, DMLC_DTYPE_U8,  DMLC_DTYPE_U16, DMLC_DTYPE_U32, DMLC_DTYPE_U64};
#define NUM_REDUCE_TYPES (int)(sizeof reduce_types / sizeof reduce_types[0])
static const dmlc_dtype index_types[] = {DMLC_DTYPE_U32, DMLC_DTYPE_I32, DMLC_DTYPE_U64,
                                         DMLC_DTYPE_I64};
static const dmlc_dtype onehot_types[] = {DMLC_DTYPE_F32, DMLC_DTYPE_F16,  DMLC_DTYPE_U8,
                                          DMLC_DTYPE_I64, DMLC_DTYPE_BOOL, DMLC_DTYPE_F64};

/* ---- kernel descriptions ---- */

static uint64_t num_points(const dmlc_kdesc *k, bool kept_only) {
  uint64_t n = 1;
  for (uint32_t d = 0; d < k->rank; d++)
    if (!kept_only || !((k->reduced_mask >> d) & 1u))
      n *= k->dims[d];
  return n;
}

/* Dense row-major strides over the space (kept_only: over the kept dims,
 * 0 on the reduced ones), each times scale. */
static void dense_strides(const dmlc_kdesc *k, bool kept_only, uint64_t scale, uint64_t *out) {
  uint64_t s = scale;
  for (uint32_t d = k->rank; d-- > 0;) {
    if (kept_only && ((k->reduced_mask >> d) & 1u)) {
      out[d] = 0;
      continue;
    }
    out[d] = s;
    s *= k->dims[d];
  }
}

static dmlc_kdesc kd_make(uint32_t rank, const uint32_t *dims, uint32_t mask) {
  dmlc_kdesc k;
  memset(&k, 0, sizeof k);
  k.rank = rank;
  memcpy(k.dims, dims, rank * sizeof *dims);
  k.reduced_mask = mask;
  k.has_read = true;
  k.read_dtype = DMLC_DTYPE_F32;
  dense_strides(&k, false, 1, k.read_strides);
  return k;
}

static void kd_reduce(dmlc_kdesc *k, dmlc_dtype dt, dmlc_op op, dmlc_direction dir) {
  k->read_dtype = dt;
  k->has_reduction = true;
  k->reduction = op;
  k->direction = dir;
}

static dmlc_kout *kd_out(dmlc_kdesc *k, dmlc_kout_kind kind, dmlc_dtype dt, uint64_t scale) {
  dmlc_kout *o = &k->outputs[k->num_outputs];
  memset(o, 0, sizeof *o);
  o->kind = kind;
  o->dtype = dt;
  o->binding.kind = DMLC_BINDING_OUTPUT;
  o->binding.index = k->num_outputs++;
  dense_strides(k, kind == DMLC_KOUT_INDEX, scale, o->strides);
  return o;
}

static uint64_t span(const dmlc_kdesc *k, const uint64_t *strides) {
  uint64_t s = 1;
  for (uint32_t d = 0; d < k->rank; d++)
    s += (uint64_t)(k->dims[d] - 1) * strides[d];
  return s;
}

static void kd_describe(const dmlc_kdesc *k, char *buf, size_t size) {
  int n = snprintf(buf, size, "space [");
  for (uint32_t d = 0; d < k->rank; d++)
    n += snprintf(buf + n, size - n, "%s%u%s", d ? "," : "", k->dims[d],
                  (k->reduced_mask >> d) & 1u ? "r" : "");
  n += snprintf(buf + n, size - n, "] read %s strides [", dmlc_dtype_name(k->read_dtype));
  for (uint32_t d = 0; d < k->rank; d++)
    n +=
        snprintf(buf + n, size - n, "%s%llu", d ? "," : "", (unsigned long long)k->read_strides[d]);
  n += snprintf(buf + n, size - n, "] %s %s ->",
                k->has_reduction ? (k->reduction == DMLC_OP_ARGMAX ? "argmax" : "argmin") : "-",
                k->direction == DMLC_DIRECTION_INCREASING ? "inc" : "dec");
  for (uint32_t i = 0; i < k->num_outputs; i++)
    n += snprintf(buf + n, size - n, " %d:%s", (int)k->outputs[i].kind,
                  dmlc_dtype_name(k->outputs[i].dtype));
  if (random_note[0] && (size_t)n < size)
    snprintf(buf + n, size - n, "%s", random_note);
}

/* ---- data ---- */

typedef enum data_mode {
  DATA_RANDOM,
  DATA_TIES,     /* few distinct values, -0 and +0 mixed */
  DATA_SPECIALS, /* NaN, inf, zeros, ... */
  DATA_ALL_NAN,  /* floats: all NaN; integers: all equal */
  DATA_ALL_NEG_INF,
  DATA_HALF_TIES,     /* doubles next to binary16 rounding ties */
  DATA_SPARSE,        /* integers: 1..3, rarely the type's maximum or minimum */
  DATA_F16_BITS,      /* f16: raw bit patterns, most of them NaNs of both signs, +-0,
                       * +-inf, subnormals and a few normals */
  DATA_ASCENDING,     /* floats: i / 3 at position i (each value three times) */
  DATA_INFS,          /* floats: +inf, -inf, -0, +0, 1 (no NaN) */
  DATA_NEGATIVE,      /* floats: -1..-3 and -0, rarely a lone extreme (no NaN) */
  DATA_POSITIVE,      /* floats: 1..3 and +0, rarely a lone extreme (no NaN) */
  DATA_RARE_NAN,      /* floats: as DATA_SPARSE, rarely a NaN of either sign */
  DATA_LONE_NAN,      /* floats: as DATA_SPARSE, a NaN at each element lone_nan_at names */
  DATA_INFS_LONE_NAN, /* floats: as DATA_INFS, a NaN at each element lone_nan_at names */
  DATA_DIAGONAL,      /* 1 at flat index i where (i / diag_len) % diag_len == i % diag_len,
                       * else 0: rows of diag_len with their maximum at every position */
  DATA_MODES
} data_mode;

static double special_value(void) {
  static const double v[] = {NAN, -NAN, INFINITY, -INFINITY, 0.0, -0.0, 1.0, -1.0, 65504.0, 1e-7};
  return v[rnd() % (sizeof v / sizeof v[0])];
}

static double float_value(data_mode mode) {
  switch (mode) {
  case DATA_TIES: {
    const int v = (int)(rnd() % 3);
    return v == 0 ? (rnd() & 1 ? -0.0 : 0.0) : v;
  }
  case DATA_SPECIALS:
    return rnd() % 3 ? special_value() : (double)((int64_t)(rnd() % 200) - 100);
  case DATA_ALL_NAN:
    return rnd() & 1 ? NAN : -NAN;
  case DATA_ALL_NEG_INF:
    return -INFINITY;
  case DATA_SPARSE: { /* 1..3 (ties, -0 and +0 among them), rarely a lone extreme */
    const uint64_t r = rnd() % 701;
    return r == 0 ? 1e30 : r == 1 ? -1e30 : r == 2 ? (rnd() & 1 ? -0.0 : 0.0) : (double)(1 + r % 3);
  }
  case DATA_NEGATIVE:
  case DATA_POSITIVE: { /* f16: 1e30 is inf, 1e-30 a zero */
    const uint64_t r = rnd() % 701;
    const double v = r == 0 ? 1e30 : r == 1 ? 1e-30 : r == 2 ? 0.0 : (double)(1 + r % 3);
    return mode == DATA_NEGATIVE ? -v : v;
  }
  case DATA_RARE_NAN:
    return rnd() % 1009 == 0 ? (rnd() & 1 ? NAN : -NAN) : float_value(DATA_SPARSE);
  case DATA_LONE_NAN:
    return float_value(DATA_SPARSE);
  case DATA_HALF_TIES: {                    /* m * 2^e + (half an f16 ulp) +- tiny */
    const int exp = (int)(rnd() % 30) - 24; /* binary16 normals */
    const double h = ldexp((double)(1024 + rnd() % 1024), exp);
    const double ulp = ldexp(1.0, exp);
    const double tiny = ldexp(ulp, -(int)(20 + rnd() % 20));
    return (rnd() & 1 ? -1 : 1) * (h + ulp / 2 + (double)((int)(rnd() % 3) - 1) * tiny);
  }
  default:
    if (rnd() % 20 == 0)
      return special_value();
    return ((double)(int64_t)(rnd() % 2000000) - 1000000.0) / 1024.0;
  }
}

static void store_raw(dmlc_dtype dt, uint8_t *p, uint64_t bits) {
  memcpy(p, &bits, dmlc_dtype_size(dt)); /* little-endian */
}

/* DATA_LONE_NAN: the elements (flat indices) that are NaN, in order. */
enum { LONE_NANS = 8 };
static uint64_t lone_nan_at[LONE_NANS];
static unsigned lone_nans;

/* DATA_DIAGONAL's row length */
static uint64_t diag_len = 1;

static void fill_data(dmlc_dtype dt, uint8_t *p, uint64_t n, data_mode mode) {
  const uint32_t size = dmlc_dtype_size(dt);
  unsigned next_nan = 0;
  for (uint64_t i = 0; i < n; i++, p += size) {
    if (mode == DATA_DIAGONAL) {
      dmlc_scalar_store(dt, p, dmlc_scalar_from_u64(i / diag_len % diag_len == i % diag_len));
    } else if (dt == DMLC_DTYPE_BOOL) {
      static const uint8_t b[] = {0, 1, 1, 7, 0};
      *p = b[rnd() % 5];
    } else if (dt == DMLC_DTYPE_F16 && mode == DATA_F16_BITS) {
      static const uint16_t v[] = {0x7C01, 0x7E00, 0x7FFF, 0xFC01, 0xFE00, 0xFFFF,
                                   0x0000, 0x8000, 0x7C00, 0xFC00, 0x0001, 0x8001,
                                   0x03FF, 0x83FF, 0x7BFF, 0xFBFF, 0x3C00, 0xBC00};
      const uint64_t r = rnd();
      const uint16_t h = r % 4 == 0 ? (uint16_t)(r >> 8) : v[(r >> 2) % (sizeof v / sizeof v[0])];
      memcpy(p, &h, 2);
    } else if (dmlc_dtype_is_float(dt)) {
      static const double infs[] = {INFINITY, -INFINITY, -0.0, 0.0, 1.0};
      double v = mode == DATA_ASCENDING                            ? (double)(i / 3)
                 : mode == DATA_INFS || mode == DATA_INFS_LONE_NAN ? infs[rnd() % 5]
                                                                   : float_value(mode);
      if ((mode == DATA_LONE_NAN || mode == DATA_INFS_LONE_NAN) && next_nan < lone_nans &&
          lone_nan_at[next_nan] == i)
        v = next_nan++ % 2 ? -NAN : NAN;
      if (dt == DMLC_DTYPE_F64) {
        memcpy(p, &v, 8);
      } else if (dt == DMLC_DTYPE_F32) {
        const float f = (float)v;
        memcpy(p, &f, 4);
      } else {
        const uint16_t h = dmlc_f32_to_f16((float)v);
        memcpy(p, &h, 2);
      }
    } else if (mode == DATA_ALL_NAN) {
      store_raw(dt, p, 5);
    } else if (mode == DATA_ALL_NEG_INF) { /* the type's minimum */
      store_raw(dt, p, dmlc_dtype_get(dt)->kind == DMLC_KIND_SIGNED ? 1ull << (size * 8 - 1) : 0);
    } else if (mode == DATA_TIES) {
      store_raw(dt, p, rnd() % 3);
    } else if (mode == DATA_SPARSE) {
      const bool sgn = dmlc_dtype_get(dt)->kind == DMLC_KIND_SIGNED;
      const uint64_t top = size == 8 ? ~0ull : (1ull << (size * 8)) - 1;
      const uint64_t r = rnd() % 701;
      store_raw(dt, p,
                r == 0   ? (sgn ? top >> 1 : top)
                : r == 1 ? (sgn ? (top >> 1) + 1 : 0)
                         : 1 + r % 3);
    } else if (mode == DATA_SPECIALS) { /* extremes */
      static const uint64_t v[] = {0, 1, ~0ull, 0x7fffffffffffffffull, 0x8000000000000000ull};
      uint64_t x = v[rnd() % 5];
      if (size < 8 && (x >> 63)) /* keep the sign bit where the type has it */
        x = x == ~0ull ? x : (x >> (64 - size * 8));
      store_raw(dt, p, x);
    } else {
      store_raw(dt, p, rnd());
    }
  }
}

/* ---- the expected result ---- */

static void expect(const dmlc_kdesc *k, const uint8_t *read, uint8_t *const *outs) {
  const uint64_t n = num_points(k, false), nk = num_points(k, true);
  dmlc_scalar *best = calloc(nk, sizeof *best);
  uint64_t *best_idx = calloc(nk, sizeof *best_idx);
  bool *seen = calloc(nk, sizeof *seen);
  const uint32_t rsize = dmlc_dtype_size(k->read_dtype);
  const bool argmax = k->reduction == DMLC_OP_ARGMAX;
  /* Each dim's step in the kept points' and the reduced points' row-major
   * flat indices (0 in the other), the read's and each output's elements:
   * the walk below moves every offset by its steps as the coordinates
   * count, as an odometer, rather than recomputing them a point. */
  uint64_t kstep[DMLC_MAX_RANK], rstep[DMLC_MAX_RANK];
  uint64_t kmul = 1, rmul = 1;
  for (uint32_t d = k->rank; d-- > 0;) {
    const bool reduced = (k->reduced_mask >> d) & 1u;
    kstep[d] = reduced ? 0 : kmul;
    rstep[d] = reduced ? rmul : 0;
    *(reduced ? &rmul : &kmul) *= k->dims[d];
  }
  bool has_copy = false;
  uint32_t osize[DMLC_KDESC_MAX_OUTPUTS];
  for (uint32_t i = 0; i < k->num_outputs; i++) {
    has_copy |= k->outputs[i].kind == DMLC_KOUT_COPY;
    osize[i] = dmlc_dtype_size(k->outputs[i].dtype);
  }
  for (int pass = 0; pass < 2; pass++) {
    uint32_t c[DMLC_MAX_RANK] = {0};
    uint64_t kf = 0, rf = 0, roff = 0, ooff[DMLC_KDESC_MAX_OUTPUTS] = {0};
    const bool load = k->has_read && (pass == 0 || has_copy);
    for (uint64_t p = 0; p < n; p++) {
      dmlc_scalar x = dmlc_scalar_from_u64(0);
      if (load)
        x = dmlc_scalar_load(k->read_dtype, read + roff * rsize);
      if (pass == 0 && k->has_reduction) {
        if (!seen[kf]) {
          seen[kf] = true;
          best[kf] = x;
          best_idx[kf] = rf;
        } else {
          int cmp = dmlc_scalar_compare(x, best[kf], argmax);
          cmp = argmax ? cmp : -cmp; /* > 0: x is better */
          if (k->direction == DMLC_DIRECTION_INCREASING ? cmp > 0 : cmp >= 0) {
            best[kf] = x;
            best_idx[kf] = rf;
          }
        }
      }
      for (uint32_t i = 0; pass == 1 && i < k->num_outputs; i++) {
        const dmlc_kout *o = &k->outputs[i];
        uint8_t *dst = outs[i] + ooff[i] * osize[i];
        switch (o->kind) {
        case DMLC_KOUT_INDEX:
          dmlc_scalar_store(o->dtype, dst, dmlc_scalar_from_u64(best_idx[kf]));
          break;
        case DMLC_KOUT_ONEHOT:
          dmlc_scalar_store(o->dtype, dst, dmlc_scalar_from_u64(best_idx[kf] == rf));
          break;
        case DMLC_KOUT_CONSTANT:
          dmlc_scalar_store(o->dtype, dst, dmlc_scalar_from_i64(o->constant));
          break;
        case DMLC_KOUT_COPY:
          dmlc_scalar_store(o->dtype, dst, x);
          break;
        }
      }
      for (uint32_t d = k->rank; d-- > 0;) { /* (unsigned: a wrap back is exact) */
        const bool carry = ++c[d] == k->dims[d];
        const uint64_t back = carry ? k->dims[d] : 0; /* steps taken back at a carry */
        kf += kstep[d] - back * kstep[d];
        rf += rstep[d] - back * rstep[d];
        roff += k->read_strides[d] - back * k->read_strides[d];
        for (uint32_t i = 0; i < k->num_outputs; i++)
          ooff[i] += k->outputs[i].strides[d] - back * k->outputs[i].strides[d];
        if (!carry)
          break;
        c[d] = 0;
      }
    }
  }
  free(best);
  free(best_idx);
  free(seen);
}

/* ---- emit, optimize, JIT ---- */

typedef struct jitted {
  LLVMOrcLLJITRef jit;
  dmlc_cpu_kernel_fn fn;
  dmlc_cpu_finish_fn finish;
  dmlc_cpu_kernel_info info;
} jitted;

static void check_error(LLVMErrorRef err, const char *what) {
  if (err) {
    char *msg = LLVMGetErrorMessage(err);
    ck_abort_msg("%s: %s", what, msg);
  }
}

/* FNV-1a of a kernel's description: which kernels take O3, and which
 * run under DMLC_TEST_RUN_SHARE. */
static uint32_t desc_hash(const char *desc) {
  uint32_t h = 2166136261u; /* FNV-1a */
  for (const char *c = desc; *c; c++)
    h = (h ^ (unsigned char)*c) * 16777619u;
  return h;
}

/* The pipeline a kernel is optimized with: the JIT's own
 * (dmlc_llvm_jit_passes, what the CPU device runs), and for a quarter of
 * the kernels, picked by a hash of their description, default<O3>, as
 * ahead-of-time objects are. O3 on every kernel took 1.7 times as long
 * (348 s against 202 s on a Zen 3) for code the JIT never runs. */
static const char *pipeline_for(const char *desc) {
  return desc_hash(desc) % 4 == 0 ? "default<O3>" : dmlc_llvm_jit_passes;
}

/* *t: the target the kernels are emitted for, from the settings above;
 * its padding zero (compile's cache compares the bytes). */
static void current_target(dmlc_llvm_target *t) {
  memset(t, 0, sizeof *t);
  t->vector_bytes = vec_bytes;
  t->nontemporal_min_bytes = nt_min_bytes;
  t->prefetch_bytes = 1024; /* prefetches in every kernel, however small */
  t->prefetch_min_bytes = 0;
  t->stream_prefetch_max_bytes = stream_prefetch_max;
  t->psign_bytes = psign_bytes;
  t->soft_half = soft_half;
  t->split_min_bytes = split_min;
  t->row_narrow_bytes = row_narrow;
  t->l2_bytes = l2_bytes;
  t->row_prefetch_max_bytes = row_prefetch_max;
  t->long_column_runs = long_column_runs;
  t->short_row_blocks = short_row_blocks;
  t->far_row_prefetch = far_row_prefetch;
  t->no_column_run_prefetch = no_column_run_prefetch;
  t->byte_permutes = byte_permutes;
  t->lane_rows = lane_rows;
}

/* Emits k as "kernel" into a new module in a new context (*out_tsc) and
 * verifies it; desc receives k's description. */
static LLVMModuleRef emit_module(const dmlc_kdesc *k, LLVMOrcThreadSafeContextRef *out_tsc,
                                 dmlc_cpu_kernel_info *info, char desc[512]) {
  LLVMOrcThreadSafeContextRef tsc = LLVMOrcCreateNewThreadSafeContext();
  *out_tsc = tsc;
  LLVMContextRef ctx = LLVMOrcThreadSafeContextGetContext(tsc);
  LLVMModuleRef mod = LLVMModuleCreateWithNameInContext("kernels", ctx);
  char *triple = LLVMGetTargetMachineTriple(host_tm);
  LLVMSetTarget(mod, triple);
  LLVMDisposeMessage(triple);
  LLVMTargetDataRef td = LLVMCreateTargetDataLayout(host_tm);
  LLVMSetModuleDataLayout(mod, td);
  LLVMDisposeTargetData(td);

  dmlc_llvm_target target;
  current_target(&target);
  dmlc_diag diag;
  dmlc_diag_clear(&diag);
  kd_describe(k, desc, 512);
  const dmlc_status st = dmlc_llvm_emit_kernel(mod, k, "kernel", &target, info, &diag);
  ck_assert_msg(st == DMLC_OK, "%s: %s", desc, diag.message);
  char *msg = NULL;
  if (LLVMVerifyModule(mod, LLVMReturnStatusAction, &msg)) {
    char *text = LLVMPrintModuleToString(mod);
    fprintf(stderr, "%s\n", text);
    ck_abort_msg("%s: invalid module: %s", desc, msg);
  }
  LLVMDisposeMessage(msg);
  return mod;
}

/* Emits k as "kernel", verifies, optimizes (pipeline_for); *ir (if
 * non-NULL) receives the optimized IR (LLVMDisposeMessage it). */
static void compile_new(const dmlc_kdesc *k, jitted *out, char **ir) {
  LLVMOrcThreadSafeContextRef tsc;
  char desc[512];
  LLVMModuleRef mod = emit_module(k, &tsc, &out->info, desc);
  LLVMPassBuilderOptionsRef opts = LLVMCreatePassBuilderOptions();
  check_error(LLVMRunPasses(mod, pipeline_for(desc), host_tm, opts), "passes");
  LLVMDisposePassBuilderOptions(opts);
  if (ir)
    *ir = LLVMPrintModuleToString(mod);

  /* Machine code as the JIT makes it (jit.c): one target machine for
   * every kernel, an object added to an LLJIT that only links. */
  char *message = NULL;
  LLVMMemoryBufferRef obj = NULL;
  if (LLVMTargetMachineEmitToMemoryBuffer(code_tm, mod, LLVMObjectFile, &message, &obj))
    ck_abort_msg("%s: code generation: %s", desc, message ? message : "");
  LLVMDisposeModule(mod);
  LLVMOrcDisposeThreadSafeContext(tsc);
  LLVMOrcLLJITBuilderRef builder = LLVMOrcCreateLLJITBuilder();
  LLVMOrcLLJITBuilderSetJITTargetMachineBuilder(
      builder, LLVMOrcJITTargetMachineBuilderCreateFromTargetMachine(LLVMCreateTargetMachine(
                   LLVMGetTargetMachineTarget(code_tm), host_triple, "", "",
                   LLVMCodeGenLevelDefault, LLVMRelocPIC, LLVMCodeModelJITDefault)));
  check_error(LLVMOrcCreateLLJIT(&out->jit, builder), "lljit");
  LLVMOrcJITDylibRef jd = LLVMOrcLLJITGetMainJITDylib(out->jit);
  LLVMOrcDefinitionGeneratorRef gen;
  check_error(LLVMOrcCreateDynamicLibrarySearchGeneratorForProcess(
                  &gen, LLVMOrcLLJITGetGlobalPrefix(out->jit), NULL, NULL),
              "generator");
  LLVMOrcJITDylibAddGenerator(jd, gen);
  check_error(LLVMOrcLLJITAddObjectFile(out->jit, jd, obj), "add object");
  LLVMOrcExecutorAddress addr;
  check_error(LLVMOrcLLJITLookup(out->jit, &addr, "kernel"), "lookup");
  out->fn = (dmlc_cpu_kernel_fn)(uintptr_t)addr;
  out->finish = NULL;
  if (out->info.has_finish) {
    check_error(LLVMOrcLLJITLookup(out->jit, &addr, "kernel_finish"), "lookup finish");
    out->finish = (dmlc_cpu_finish_fn)(uintptr_t)addr;
  }
  ck_assert_msg(out->info.num_tasks > 0, "%s: no tasks", desc);
}

/* The kernels compiled in this test's process (Check forks one a test),
 * by everything their code depends on: the description's canonical bytes
 * (dmlc_kdesc_canonical, as the CPU device's kernel cache keys them), the
 * target's settings, the target machines and the pass pipeline. A test
 * that runs one kernel on several data sets (lone NaNs at each of several
 * places, an IR check and then the data) compiles it once: LLVM's passes
 * and code generation were two thirds of this test's time, and 6 in 10 of
 * the fast_keys case's compiles were repeats. The code is the same bytes
 * either way; each run still gets fresh data, outputs and scratch. */
typedef struct cached_kernel {
  bool valid;
  dmlc_kdesc k;
  dmlc_llvm_target target;
  LLVMTargetMachineRef host, code;
  const char *pipeline;
  jitted j;
  char *ir; /* the optimized IR, where a compile asked for it */
  unsigned users;
  uint64_t used; /* the compile that last took it (the least recent goes) */
} cached_kernel;
enum { KERNEL_CACHE_SIZE = 8 };
static cached_kernel kernel_cache[KERNEL_CACHE_SIZE];
static uint64_t kernel_cache_clock;

static void compile(const dmlc_kdesc *k, jitted *out, char **ir) {
  cached_kernel key;
  memset(&key, 0, sizeof key);
  dmlc_kdesc_canonical(k, &key.k);
  current_target(&key.target);
  key.host = host_tm;
  key.code = code_tm;
  char desc[512];
  kd_describe(k, desc, sizeof desc);
  key.pipeline = pipeline_for(desc);
  cached_kernel *slot = NULL;
  for (int i = 0; i < KERNEL_CACHE_SIZE; i++) {
    cached_kernel *c = &kernel_cache[i];
    if (c->valid && memcmp(&c->k, &key.k, sizeof key.k) == 0 &&
        memcmp(&c->target, &key.target, sizeof key.target) == 0 && c->host == key.host &&
        c->code == key.code && strcmp(c->pipeline, key.pipeline) == 0 && (!ir || c->ir)) {
      c->users++;
      c->used = ++kernel_cache_clock;
      *out = c->j;
      if (ir)
        *ir = LLVMCreateMessage(c->ir);
      return;
    }
    if (!c->users && (!slot || c->used < slot->used))
      slot = c; /* the least recently taken that no one holds (a free entry's used: 0) */
  }
  char *text = NULL;
  compile_new(k, out, ir ? &text : NULL);
  if (ir)
    *ir = text;
  if (!slot)
    return; /* every entry held: this kernel goes uncached */
  if (slot->valid) {
    LLVMOrcDisposeLLJIT(slot->j.jit);
    LLVMDisposeMessage(slot->ir);
  }
  *slot = key;
  slot->valid = true;
  slot->j = *out;
  slot->ir = ir ? LLVMCreateMessage(text) : NULL;
  slot->users = 1;
  slot->used = ++kernel_cache_clock;
}

/* Gives back a kernel compile returned (kept in the cache, or disposed). */
static void release(jitted *j) {
  for (int i = 0; i < KERNEL_CACHE_SIZE; i++)
    if (kernel_cache[i].valid && kernel_cache[i].j.jit == j->jit) {
      ck_assert_uint_gt(kernel_cache[i].users, 0);
      kernel_cache[i].users--;
      return;
    }
  LLVMOrcDisposeLLJIT(j->jit);
}

/* Whether k's optimized IR holds needle. */
static bool ir_has(const dmlc_kdesc *k, const char *needle) {
  jitted j;
  char *ir = NULL;
  compile(k, &j, &ir);
  const bool has = strstr(ir, needle) != NULL;
  LLVMDisposeMessage(ir);
  release(&j);
  return has;
}

/* How many times needle occurs in text; with line_end, only those on
 * lines that end with it. */
static unsigned count_in(const char *text, const char *needle, const char *line_end) {
  unsigned n = 0;
  const size_t el = line_end ? strlen(line_end) : 0;
  for (const char *p = strstr(text, needle); p; p = strstr(p + 1, needle)) {
    const char *end = strchr(p, '\n');
    if (!end)
      end = p + strlen(p);
    n += (size_t)(end - p) >= el && memcmp(end - el, line_end ? line_end : "", el) == 0;
  }
  return n;
}

/* Runs the kernel as [0,a), [a,b), [b,n) and the finish. */
static void run_split(const jitted *j, void **buffers) {
  const uint64_t n = j->info.num_tasks;
  const uint64_t a = rnd() % (n + 1), b = a + rnd() % (n - a + 1);
  j->fn(buffers, 0, a);
  j->fn(buffers, b, n);
  j->fn(buffers, a, b);
  if (j->finish)
    j->finish(buffers);
}

/* DMLC_TEST_DATA_MODES=N (scripts/sanitize.sh): each kernel runs at most
 * N of its data modes, in turn from kernel to kernel, so the suite still
 * sees every mode. The compiled kernels are the same; what the limit saves
 * is the reference's work on the data (most of the time under ASan, which
 * instruments the reference and not the JIT's code). */
static int mode_limit(int nmodes) {
  const char *env = getenv("DMLC_TEST_DATA_MODES");
  const int n = env ? atoi(env) : 0;
  return n > 0 && n < nmodes ? n : nmodes;
}

/* Compiles k once and compares with expect() for each data mode given
 * (mode_limit of them). */
/* len bytes that end where a PROT_NONE page begins: a kernel that reads
 * past the read's last element faults. *map and *map_len: what to unmap. */
static uint8_t *guarded_alloc(uint64_t len, void **map, size_t *map_len) {
  const size_t page = (size_t)sysconf(_SC_PAGESIZE);
  *map_len = (len + page - 1) / page * page + page;
  *map = mmap(NULL, *map_len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  ck_assert_ptr_ne(*map, MAP_FAILED);
  ck_assert_int_eq(mprotect((uint8_t *)*map + *map_len - page, page, PROT_NONE), 0);
  return (uint8_t *)*map + *map_len - page - len;
}

/* DMLC_TEST_RUN_SHARE=N (scripts/sanitize.sh): one kernel in N, picked by
 * a hash of its description, is optimized, compiled and run on its data;
 * the others are emitted and verified only. Under ASan the emitter, dmlc's
 * code, still runs on every kernel; what the share saves is LLVM's passes
 * and code generation (not dmlc's code, and not instrumented), which with
 * ASan's allocator were most of this test's 28 minutes. The plain run
 * compiles and runs every kernel. */
static bool runs_kernel(const dmlc_kdesc *k) {
  const char *env = getenv("DMLC_TEST_RUN_SHARE");
  const int n = env ? atoi(env) : 0;
  if (n <= 1)
    return true;
  char desc[512];
  kd_describe(k, desc, sizeof desc);
  return desc_hash(desc) / 4 % (uint32_t)n == 0; /* bits pipeline_for leaves */
}

static void check_kernel_modes(const dmlc_kdesc *k, const data_mode *all_modes, int all) {
  static unsigned turn;
  if (!runs_kernel(k)) {
    LLVMOrcThreadSafeContextRef tsc;
    dmlc_cpu_kernel_info info;
    char desc[512];
    LLVMDisposeModule(emit_module(k, &tsc, &info, desc));
    LLVMOrcDisposeThreadSafeContext(tsc);
    return;
  }
  const int nmodes = mode_limit(all < 16 ? all : 16);
  const unsigned first = nmodes < all ? turn : 0; /* every mode in order when not limited */
  data_mode modes[16];
  for (int m = 0; m < nmodes; m++)
    modes[m] = all_modes[(first + (unsigned)m) % (unsigned)all];
  turn += (unsigned)nmodes;
  jitted j;
  compile(k, &j, NULL);
  const uint64_t rlen = span(k, k->read_strides) * dmlc_dtype_size(k->read_dtype);
  void *read_map;
  size_t read_map_len;
  uint8_t *read = guarded_alloc(rlen, &read_map, &read_map_len);
  uint8_t *got[DMLC_KDESC_MAX_OUTPUTS], *want[DMLC_KDESC_MAX_OUTPUTS];
  uint64_t olen[DMLC_KDESC_MAX_OUTPUTS];
  void *buffers[DMLC_KDESC_MAX_OUTPUTS + 2] = {read};
  for (uint32_t i = 0; i < k->num_outputs; i++) {
    olen[i] = span(k, k->outputs[i].strides) * dmlc_dtype_size(k->outputs[i].dtype);
    got[i] = (uint8_t *)aligned_alloc(64, (olen[i] + 64 + 63) / 64 * 64) + out_shift;
    want[i] = malloc(olen[i]);
    buffers[1 + i] = got[i];
  }
  void *scratch = NULL;
  if (j.info.scratch_bytes) {
    scratch = aligned_alloc(64, (j.info.scratch_bytes + 63) / 64 * 64);
    buffers[1 + k->num_outputs] = scratch;
  }
  char desc[512];
  kd_describe(k, desc, sizeof desc);
  for (int m = 0; m < nmodes; m++) {
    fill_data(k->read_dtype, read, rlen / dmlc_dtype_size(k->read_dtype), modes[m]);
    for (uint32_t i = 0; i < k->num_outputs; i++) {
      memset(got[i], SENTINEL, olen[i]);
      memset(want[i], SENTINEL, olen[i]);
    }
    if (scratch)
      memset(scratch, SENTINEL, j.info.scratch_bytes);
    expect(k, read, want);
    run_split(&j, buffers);
    for (uint32_t i = 0; i < k->num_outputs; i++) {
      if (memcmp(got[i], want[i], olen[i]) == 0)
        continue;
      uint64_t at = 0;
      while (got[i][at] == want[i][at])
        at++;
      ck_abort_msg("%s (data %d): output %u differs at byte %llu: got 0x%02x, want 0x%02x", desc,
                   modes[m], i, (unsigned long long)at, got[i][at], want[i][at]);
    }
  }
  for (uint32_t i = 0; i < k->num_outputs; i++) {
    free(got[i] - out_shift);
    free(want[i]);
  }
  munmap(read_map, read_map_len);
  free(scratch);
  release(&j);
}

/* The data modes every kernel is checked on. */
static const data_mode default_modes[] = {DATA_RANDOM, DATA_TIES, DATA_SPECIALS, DATA_ALL_NAN,
                                          DATA_ALL_NEG_INF};
#define NUM_DEFAULT_MODES (int)(sizeof default_modes / sizeof default_modes[0])

static void check_kernel(const dmlc_kdesc *k) {
  check_kernel_modes(k, default_modes, NUM_DEFAULT_MODES);
}

/* All four (op, direction) pairs of a reduction kernel template, on the
 * data modes given. */
static void check_reductions_modes(dmlc_kdesc k, dmlc_dtype dt, const data_mode *modes,
                                   int nmodes) {
  for (int v = 0; v < 4; v++) {
    kd_reduce(&k, dt, v & 1 ? DMLC_OP_ARGMIN : DMLC_OP_ARGMAX,
              v & 2 ? DMLC_DIRECTION_DECREASING : DMLC_DIRECTION_INCREASING);
    check_kernel_modes(&k, modes, nmodes);
  }
}

static void check_reductions(dmlc_kdesc k, dmlc_dtype dt) {
  check_reductions_modes(k, dt, default_modes, NUM_DEFAULT_MODES);
}

/* check_reductions, and for f16 (compared as i16 keys on some paths) raw
 * bit patterns too: NaNs of both signs, +-0, subnormals. */
static void check_reductions_keys(dmlc_kdesc k, dmlc_dtype dt) {
  static const data_mode modes[] = {DATA_RANDOM,  DATA_TIES,        DATA_SPECIALS,
                                    DATA_ALL_NAN, DATA_ALL_NEG_INF, DATA_F16_BITS};
  _Static_assert(sizeof modes / sizeof modes[0] == NUM_DEFAULT_MODES + 1,
                 "the default modes and DATA_F16_BITS");
  check_reductions_modes(k, dt, modes,
                         dt == DMLC_DTYPE_F16 ? NUM_DEFAULT_MODES + 1 : NUM_DEFAULT_MODES);
}

/* ---- rows ---- */

START_TEST(test_row_1d) {
  const dmlc_dtype dt = reduce_types[_i];
  static const uint32_t sizes[] = {2,  3,  5,  7,  15, 16, 17,  31,  32,   33,
                                   47, 48, 49, 63, 64, 65, 127, 129, 1000, 4099};
  for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++) {
    dmlc_kdesc k = kd_make(1, &sizes[s], 1);
    kd_out(&k, DMLC_KOUT_INDEX, index_types[s % 4], 1);
    if (s % 2)
      kd_out(&k, DMLC_KOUT_ONEHOT, onehot_types[s % 6], 1 + s % 3);
    check_reductions(k, dt);
  }
}
END_TEST

START_TEST(test_row_2d) {
  const dmlc_dtype dt = reduce_types[_i];
  static const uint32_t rows[] = {3, 5, 2}, lens[] = {9, 40, 100};
  for (int s = 0; s < 3; s++) {
    const uint32_t dims[2] = {rows[s], lens[s]};
    dmlc_kdesc k = kd_make(2, dims, 2);
    k.read_strides[0] = s == 0 ? lens[s] : s == 1 ? lens[s] + 3 : 0; /* packed, padded, broadcast */
    kd_out(&k, DMLC_KOUT_ONEHOT, onehot_types[s], s == 1 ? 2 : 1);
    kd_out(&k, DMLC_KOUT_INDEX, index_types[s], s == 2 ? 3 : 1);
    kd_out(&k, DMLC_KOUT_INDEX, index_types[s + 1], 1);
    check_reductions(k, dt);
  }
}
END_TEST

START_TEST(test_row_split) {
  static const dmlc_dtype types[] = {DMLC_DTYPE_F32, DMLC_DTYPE_F16, DMLC_DTYPE_I8, DMLC_DTYPE_U64};
  const dmlc_dtype dt = types[_i];
  const uint32_t dims[2][2] = {{300001, 0}, {3, 262144 + 7}};
  for (int s = 0; s < 2; s++) {
    dmlc_kdesc k = kd_make(s + 1, dims[s], s == 0 ? 1 : 2);
    kd_out(&k, DMLC_KOUT_INDEX, index_types[_i], 1);
    kd_out(&k, DMLC_KOUT_ONEHOT, onehot_types[_i], 1 + (uint64_t)s);
    for (int v = 0; v < 4; v++) {
      kd_reduce(&k, dt, v & 1 ? DMLC_OP_ARGMIN : DMLC_OP_ARGMAX,
                v & 2 ? DMLC_DIRECTION_DECREASING : DMLC_DIRECTION_INCREASING);
      const data_mode modes[] = {DATA_TIES, DATA_ALL_NAN, DATA_SPECIALS};
      jitted j;
      compile(&k, &j, NULL);
      ck_assert(j.info.has_finish && j.info.scratch_bytes > 0 && j.info.num_tasks > 2);
      release(&j);
      check_kernel_modes(&k, modes, 3);
    }
  }
}
END_TEST

/* The block rows' cases: vectors of 16, 32 and 64 bytes (wider than the
 * host is still correct), then 64 bytes over a read that fits in four
 * L2s (an L2 of 1 MiB) with short_row_blocks, whose blocks are 24 vectors,
 * not 32 (emit_row.c's row_block_vecs). Sets vec_bytes, l2_bytes and
 * short_row_blocks (block_case_end resets them); returns the vectors a block. */
static uint32_t block_case(int c) {
  static const uint32_t widths[] = {16, 32, 64, 64};
  vec_bytes = widths[c];
  l2_bytes = c == 3 ? 1u << 20 : 0;
  short_row_blocks = c == 3;
  return c == 3 ? 24 : 32;
}

static void block_case_end(void) {
  vec_bytes = 32;
  l2_bytes = 0;
  short_row_blocks = false;
}

/* Block rows of dt, be elements a block: the path (whose IR holds needle)
 * is taken at two blocks, not below; then lengths just below, at and
 * above whole blocks (the last block overlaps the one before), with and
 * without a ONEHOT output, all four (op, direction) pairs, each data mode
 * given. */
static void check_block_rows(dmlc_dtype dt, uint32_t be, const char *needle, const data_mode *modes,
                             int nmodes) {
  for (int below = 0; below < 2; below++) {
    const uint32_t dims[2] = {3, 2 * be - (uint32_t)below};
    dmlc_kdesc k = kd_make(2, dims, 2);
    kd_out(&k, DMLC_KOUT_INDEX, DMLC_DTYPE_I64, 1);
    kd_reduce(&k, dt, DMLC_OP_ARGMAX, DMLC_DIRECTION_INCREASING);
    ck_assert_msg(ir_has(&k, needle) == !below, "len %u: the block path is %s taken", dims[1],
                  below ? "" : "not");
  }
  /* f32 rows under 4 KiB on 16- and 32-byte vectors: blocks of 256 bytes
   * (f32_block_vecs), the last length not */
  const uint32_t lens[] = {2 * be - 1,      2 * be,     2 * be + 1, 3 * be - 1,
                           3 * be + be / 2, 5 * be + 7, 8 * be + 3};
  for (size_t s = 0; s < sizeof lens / sizeof lens[0]; s++) {
    const uint32_t dims[2] = {s >= 5 ? 2 : 5, lens[s]};
    dmlc_kdesc k = kd_make(2, dims, 2);
    kd_out(&k, DMLC_KOUT_INDEX, index_types[s % 4], 1);
    if (s % 2)
      kd_out(&k, DMLC_KOUT_ONEHOT, onehot_types[s % 6], 1);
    for (int v = 0; v < 4; v++) {
      kd_reduce(&k, dt, v & 1 ? DMLC_OP_ARGMIN : DMLC_OP_ARGMAX,
                v & 2 ? DMLC_DIRECTION_DECREASING : DMLC_DIRECTION_INCREASING);
      check_kernel_modes(&k, modes, nmodes);
    }
  }
}

/* f32 rows of two blocks or more (32 vectors each, or 24: block_case): per
 * block the extreme by MAXPS/MINPS, the best block, then its first (last)
 * equal element; a NaN sends the row through the one-pass path.
 * block_case's vectors;
 * lengths just below, at and above whole blocks (the last block overlaps
 * the one before); no NaN with ties of -0 and +0, lone extremes anywhere,
 * ascending rows (every block becomes the best), all -inf, and rows with
 * NaN or with infinities beside zeros (whose products, 0 x inf, look like
 * a NaN to the turns' check until the row is looked at again). */
START_TEST(test_row_blocks) {
  const uint32_t vecs = block_case(_i);
  const data_mode modes[] = {DATA_TIES, DATA_SPARSE,   DATA_ASCENDING, DATA_ALL_NEG_INF,
                             DATA_INFS, DATA_SPECIALS, DATA_RANDOM};
  check_block_rows(DMLC_DTYPE_F32, vecs * (vec_bytes / 4), "llvm.vector.reduce.fmax", modes,
                   (int)(sizeof modes / sizeof modes[0]));
  block_case_end();
}
END_TEST

/* f32 block rows with one NaN, of either sign, in each row, at each place
 * the NaN check treats apart: each end of a turn's product tree, the
 * first turn of a block (before the loop) and a later one, a block's
 * last element, the first element of the next block, and the elements
 * that only the last block, overlapping the one before, reads again.
 * Around the NaN, ordinary values (no other product is NaN) and then
 * infinities and zeros (the turns' check flags every row, and the second
 * look tells the rows with a NaN from those without: the last rows have
 * none). block_case's vectors and blocks; every (op, direction) pair. */
START_TEST(test_row_blocks_lone_nan) {
  const uint32_t vecs = block_case(_i % 4);
  const uint32_t lanes = vec_bytes / 4, turn = 8, be = vecs * lanes;
  /* the last block starts at len - be; from _i 4 on, rows of 4 KiB or
   * more (under it, 16- and 32-byte vectors take blocks of 256 bytes:
   * f32_block_vecs) */
  const uint32_t rows = 5;
  uint32_t len = 2 * be + be / 2;
  while (_i >= 4 && len * 4 < 4096)
    len += be;
  const uint32_t at[] = {0,
                         1,
                         lanes,
                         turn * lanes - 1,
                         turn * lanes,
                         turn * lanes + lanes + 1,
                         be - 1,
                         be,
                         be + 3 * lanes + 2,
                         len - be + 1,
                         len - lanes,
                         len - 1,
                         2 * be - 1,
                         2 * be};
  const uint32_t nat = sizeof at / sizeof at[0];
  const uint32_t dims[2] = {rows, len};
  dmlc_kdesc k = kd_make(2, dims, 2);
  kd_out(&k, DMLC_KOUT_INDEX, DMLC_DTYPE_U32, 1);
  kd_reduce(&k, DMLC_DTYPE_F32, DMLC_OP_ARGMAX, DMLC_DIRECTION_INCREASING);
  ck_assert(ir_has(&k, "llvm.vector.reduce.fmax"));
  const data_mode modes[] = {DATA_LONE_NAN, DATA_INFS_LONE_NAN};
  for (uint32_t first = 0; first < nat; first += rows) {
    /* row r's NaN at at[first + r]; rows past the list have none */
    lone_nans = 0;
    for (uint32_t r = 0; r < rows && first + r < nat; r++)
      lone_nan_at[lone_nans++] = (uint64_t)r * len + at[first + r];
    for (int v = 0; v < 4; v++) {
      kd_reduce(&k, DMLC_DTYPE_F32, v & 1 ? DMLC_OP_ARGMIN : DMLC_OP_ARGMAX,
                v & 2 ? DMLC_DIRECTION_DECREASING : DMLC_DIRECTION_INCREASING);
      check_kernel_modes(&k, modes, 2);
    }
  }
  lone_nans = 0;
  block_case_end();
}
END_TEST

/* Rows of two blocks or more (32 vectors each, or 24: block_case) on their
 * bits. Integers: their max or min by block. f16: the signed and the
 * unsigned greatest of the bits per vector, the kept one by block; a
 * second pass of blocks when every element has the other sign; NaN and
 * zeros searched for over the row. block_case's vectors; lengths
 * around whole blocks; f16 rows with no NaN (ties of -0 and +0, all
 * negative, all non-negative, lone extremes, ascending, infinities), with a
 * rare NaN and with many (raw bit patterns); integers of every width: ties,
 * extremes, all equal and lone extremes. */
START_TEST(test_row_bit_blocks) {
  static const dmlc_dtype types[] = {DMLC_DTYPE_F16, DMLC_DTYPE_I8,  DMLC_DTYPE_U8,
                                     DMLC_DTYPE_I16, DMLC_DTYPE_U16, DMLC_DTYPE_I32,
                                     DMLC_DTYPE_U32, DMLC_DTYPE_I64, DMLC_DTYPE_U64};
  const uint32_t vecs = block_case(_i % 4);
  const dmlc_dtype dt = types[_i / 4];
  const uint32_t lanes = vec_bytes / dmlc_dtype_size(dt);
  const data_mode half_modes[] = {DATA_TIES,     DATA_SPARSE,   DATA_ASCENDING, DATA_ALL_NEG_INF,
                                  DATA_INFS,     DATA_NEGATIVE, DATA_POSITIVE,  DATA_RARE_NAN,
                                  DATA_F16_BITS, DATA_SPECIALS, DATA_ALL_NAN,   DATA_RANDOM};
  const data_mode int_modes[] = {DATA_TIES,    DATA_SPARSE,      DATA_SPECIALS,
                                 DATA_ALL_NAN, DATA_ALL_NEG_INF, DATA_RANDOM};
  const bool half = dt == DMLC_DTYPE_F16;
  /* the path's mark: the blocks' starts (i32 lanes) reduced */
  char needle[64];
  snprintf(needle, sizeof needle, "llvm.vector.reduce.umin.v%ui32", lanes);
  check_block_rows(dt, vecs * lanes, needle, half ? half_modes : int_modes,
                   half ? (int)(sizeof half_modes / sizeof half_modes[0])
                        : (int)(sizeof int_modes / sizeof int_modes[0]));
  block_case_end();
}
END_TEST

/* 1- and 2-byte integer rows that fit in L2 (two passes: max/min, then
 * find the first or last position of it; rows of two blocks or more take
 * the block path): lengths around multiples of the vector, rows just below
 * and above the size limit, and chunks of split rows; ties, all-equal rows, the type's extremes, a
 * lone extreme anywhere (in the overlapping last vector too). */
START_TEST(test_row_two_pass) {
  static const dmlc_dtype types[] = {DMLC_DTYPE_I8, DMLC_DTYPE_U8, DMLC_DTYPE_I16, DMLC_DTYPE_U16};
  const dmlc_dtype dt = types[_i];
  const uint32_t size = dmlc_dtype_size(dt);
  static const uint32_t lens[] = {15, 16,  17,  31,  32,  33,  47,  63,  64,  65,   95,  96,
                                  97, 127, 128, 129, 159, 191, 255, 256, 257, 1000, 4099};
  const data_mode modes[] = {DATA_RANDOM,  DATA_TIES,        DATA_SPECIALS,
                             DATA_ALL_NAN, DATA_ALL_NEG_INF, DATA_SPARSE};
  { /* the path is taken: a vector max/min reduced across lanes */
    const uint32_t dims[2] = {9, 1000};
    dmlc_kdesc k = kd_make(2, dims, 2);
    kd_out(&k, DMLC_KOUT_INDEX, DMLC_DTYPE_I64, 1);
    kd_reduce(&k, dt, DMLC_OP_ARGMIN, DMLC_DIRECTION_DECREASING);
    ck_assert_msg(ir_has(&k, "llvm.vector.reduce."), "no vector reduce in the IR");
  }
  for (size_t s = 0; s < sizeof lens / sizeof lens[0]; s++) {
    const uint32_t dims[2] = {9, lens[s]};
    dmlc_kdesc k = kd_make(2, dims, 2);
    kd_out(&k, DMLC_KOUT_INDEX, index_types[s % 4], 1);
    if (s % 3 == 0)
      kd_out(&k, DMLC_KOUT_ONEHOT, onehot_types[s % 6], 1);
    for (int v = 0; v < 4; v++) {
      kd_reduce(&k, dt, v & 1 ? DMLC_OP_ARGMIN : DMLC_OP_ARGMAX,
                v & 2 ? DMLC_DIRECTION_DECREASING : DMLC_DIRECTION_INCREASING);
      check_kernel_modes(&k, modes, 6);
    }
  }
  /* around the 256 KiB limit (i8: 262144 is also the longest unsplit row;
   * longer rows are split into chunks that take two passes) */
  const uint32_t big[] = {(1u << 18) / size - 1, (1u << 18) / size, (1u << 18) / size + 1,
                          (1u << 18) + 3};
  const data_mode big_modes[] = {DATA_SPARSE, DATA_TIES, DATA_SPECIALS};
  for (size_t s = 0; s < sizeof big / sizeof big[0]; s++) {
    dmlc_kdesc k = kd_make(1, &big[s], 1);
    kd_out(&k, DMLC_KOUT_INDEX, DMLC_DTYPE_I64, 1);
    if (s == 1)
      kd_out(&k, DMLC_KOUT_ONEHOT, DMLC_DTYPE_U8, 1);
    for (int v = 0; v < 4; v++) {
      kd_reduce(&k, dt, v & 1 ? DMLC_OP_ARGMIN : DMLC_OP_ARGMAX,
                v & 2 ? DMLC_DIRECTION_DECREASING : DMLC_DIRECTION_INCREASING);
      check_kernel_modes(&k, big_modes, 3);
    }
  }
}
END_TEST

/* ---- non-temporal ONEHOT stores ---- */

/* Rows (whole and split) and columns with ONEHOT outputs written by
 * non-temporal stores: output buffers at offsets from a 32-byte boundary
 * the element size allows (and some it does not: those take the ordinary
 * path), row lengths around the vector size, ties, NaNs, both directions. */
START_TEST(test_nontemporal) {
  static const dmlc_dtype types[] = {DMLC_DTYPE_F32, DMLC_DTYPE_F16, DMLC_DTYPE_U8, DMLC_DTYPE_F64,
                                     DMLC_DTYPE_BOOL};
  const dmlc_dtype ot = types[_i % 5];
  const dmlc_dtype rt = _i < 5 ? DMLC_DTYPE_F32 : DMLC_DTYPE_F16;
  static const uint32_t shifts[] = {0, 1, 2, 4, 8, 12, 16, 24, 31, 32};
  static const uint32_t lens[] = {8, 10, 34, 101};
  const data_mode modes[] = {DATA_TIES, DATA_SPECIALS, DATA_ALL_NAN};
  nt_min_bytes = 1;
  for (int pass = 0; pass < 2; pass++) {
    const size_t sh = pass ? (size_t)(_i + 5) % 10 : (size_t)_i;
    out_shift = shifts[sh];
    for (size_t l = 0; l < sizeof lens / sizeof lens[0]; l++) {
      const uint32_t dims[2] = {3 + (uint32_t)l % 3, lens[l]};
      for (int v = (int)l % 2; v < 4; v += 2) {
        const dmlc_op op = v & 1 ? DMLC_OP_ARGMIN : DMLC_OP_ARGMAX;
        const dmlc_direction dir = v & 2 ? DMLC_DIRECTION_DECREASING : DMLC_DIRECTION_INCREASING;
        dmlc_kdesc k = kd_make(2, dims, 2); /* rows */
        kd_out(&k, DMLC_KOUT_ONEHOT, ot, 1);
        if (v == 1)
          kd_out(&k, DMLC_KOUT_INDEX, DMLC_DTYPE_U32, 1);
        kd_reduce(&k, rt, op, dir);
        check_kernel_modes(&k, modes, 3);
        k = kd_make(2, dims, 1); /* columns (a few rows: one select chain) */
        kd_out(&k, DMLC_KOUT_ONEHOT, ot, 1);
        if (v == 1)
          kd_out(&k, DMLC_KOUT_INDEX, DMLC_DTYPE_U32, 1);
        kd_reduce(&k, rt, op, dir);
        check_kernel_modes(&k, modes, 3);
      }
    }
    { /* short packed rows (NHWC channels): whole groups of rows, then the
         rest; INDEX outputs of every width, non-temporal where aligned */
      static const dmlc_dtype index_types[] = {DMLC_DTYPE_U32, DMLC_DTYPE_I64, DMLC_DTYPE_U8,
                                               DMLC_DTYPE_I16};
      const uint32_t sdims[2] = {64 * 5 + 3 + (uint32_t)pass, pass ? 5u : 3u};
      dmlc_kdesc k = kd_make(2, sdims, 2);
      kd_out(&k, DMLC_KOUT_INDEX, index_types[(_i + pass) % 4], 1);
      kd_reduce(&k, rt, _i % 2 ? DMLC_OP_ARGMIN : DMLC_OP_ARGMAX,
                pass ? DMLC_DIRECTION_DECREASING : DMLC_DIRECTION_INCREASING);
      check_kernel_modes(&k, modes, 3);
    }
    { /* short packed rows' one-hots (a hardmax over channels last), with
         an index beside them: whole groups, then the rest; non-temporal
         where aligned and a group's store is whole vectors */
      const uint32_t sdims[2] = {64 * 3 + 5 + (uint32_t)pass, pass ? 8u : 3u};
      dmlc_kdesc k = kd_make(2, sdims, 2);
      kd_out(&k, DMLC_KOUT_ONEHOT, ot, 1);
      if (_i % 2)
        kd_out(&k, DMLC_KOUT_INDEX, DMLC_DTYPE_U32, 1);
      kd_reduce(&k, rt, _i % 2 ? DMLC_OP_ARGMAX : DMLC_OP_ARGMIN,
                pass ? DMLC_DIRECTION_INCREASING : DMLC_DIRECTION_DECREASING);
      check_kernel_modes(&k, modes, 3);
    }
    { /* blocked columns: INDEX outputs of every width, non-temporal where
         a block's vectors are aligned; two blocks and a partial vector */
      static const dmlc_dtype index_types[] = {DMLC_DTYPE_I64, DMLC_DTYPE_U32, DMLC_DTYPE_I16,
                                               DMLC_DTYPE_U8};
      const uint32_t cdims[2] = {12 + (uint32_t)pass * 9, 2 * 16384 + 37};
      dmlc_kdesc k = kd_make(2, cdims, 1);
      kd_out(&k, DMLC_KOUT_INDEX, index_types[(_i + pass) % 4], 1);
      kd_reduce(&k, rt, _i % 2 ? DMLC_OP_ARGMAX : DMLC_OP_ARGMIN,
                pass ? DMLC_DIRECTION_INCREASING : DMLC_DIRECTION_DECREASING);
      check_kernel_modes(&k, modes, 3);
    }
    if (pass == 0 && _i % 3 == 0) { /* split rows: zeros by the tasks, the 1 by finish */
      const uint32_t dims[2] = {2, 262144 + 9};
      dmlc_kdesc k = kd_make(2, dims, 2);
      kd_out(&k, DMLC_KOUT_ONEHOT, ot, 1);
      kd_reduce(&k, rt, DMLC_OP_ARGMAX, DMLC_DIRECTION_INCREASING);
      check_kernel_modes(&k, modes, 2);
    }
  }
  nt_min_bytes = 0;
  out_shift = 0;
}
END_TEST

/* Rows' one-hot runs (ec_store_onehot_run_nt): the 1 at every position of
 * a row (row r's maximum at r % len), before, in and after the aligned
 * vectors, under 16-, 32- and 64-byte vectors, into every output type at
 * every offset from a 64-byte boundary the tests use; and the same data's
 * columns (emit_column's non-temporal 0s). */
START_TEST(test_onehot_run) {
  static const uint32_t widths[] = {16, 32, 64};
  static const dmlc_dtype types[] = {DMLC_DTYPE_F32, DMLC_DTYPE_F16, DMLC_DTYPE_U8, DMLC_DTYPE_F64,
                                     DMLC_DTYPE_BOOL};
  static const uint32_t shifts[] = {0, 1, 2, 4, 8, 12, 16, 24, 32, 40};
  static const uint32_t lens[] = {3, 17, 70, 201};
  static const data_mode modes[] = {DATA_DIAGONAL};
  vec_bytes = widths[_i % 3];
  nt_min_bytes = 1;
  for (size_t sh = 0; sh < sizeof shifts / sizeof shifts[0]; sh++) {
    out_shift = shifts[sh];
    for (size_t l = 0; l < sizeof lens / sizeof lens[0]; l++) {
      diag_len = lens[l];
      const uint32_t dims[2] = {lens[l] + 2, lens[l]};
      dmlc_kdesc k = kd_make(2, dims, 2);
      kd_out(&k, DMLC_KOUT_ONEHOT, types[_i / 3], 1);
      kd_reduce(&k, l % 2 ? DMLC_DTYPE_U8 : DMLC_DTYPE_F32, DMLC_OP_ARGMAX,
                sh % 2 ? DMLC_DIRECTION_DECREASING : DMLC_DIRECTION_INCREASING);
      check_kernel_modes(&k, modes, 1);
      if (sh != 0 && sh != 7)
        continue;
      /* columns (column c's first 1 in row c): their 0s non-temporal as
       * the rows are read where a row is whole vectors (f16 as i16
       * lanes), then the 1s */
      diag_len = 64u << (l % 2);
      const uint32_t cdims[2] = {(uint32_t)diag_len + 2 + (uint32_t)l, (uint32_t)diag_len};
      k = kd_make(2, cdims, 1);
      kd_out(&k, DMLC_KOUT_ONEHOT, types[_i / 3], 1);
      kd_reduce(&k, l % 2 ? DMLC_DTYPE_F16 : DMLC_DTYPE_F32, DMLC_OP_ARGMAX,
                DMLC_DIRECTION_INCREASING);
      check_kernel_modes(&k, modes, 1);
    }
  }
  diag_len = 1;
  nt_min_bytes = 0;
  out_shift = 0;
  vec_bytes = 32;
}
END_TEST

/* Whether k compiles, with nontemporal_min_bytes = min_bytes, to
 * non-temporal stores (a vector store with !nontemporal); a kernel that
 * makes them ends with a fence. */
static bool nontemporal_kernel(const dmlc_kdesc *k, uint64_t min_bytes) {
  nt_min_bytes = min_bytes;
  jitted j;
  char *ir = NULL;
  compile(k, &j, &ir);
  const bool nt = strstr(ir, "!nontemporal") != NULL;
  ck_assert_msg(!nt || strstr(ir, "fence seq_cst"), "no fence:\n%s", ir);
  LLVMDisposeMessage(ir);
  release(&j);
  nt_min_bytes = 0;
  return nt;
}

/* The non-temporal paths are there only when the output is large enough. */
START_TEST(test_nontemporal_ir) {
  const uint32_t dims[2] = {64, 1000};
  for (int mask = 1; mask <= 2; mask++) {
    for (int big = 0; big < 2; big++) {
      dmlc_kdesc k = kd_make(2, dims, (uint32_t)mask);
      kd_reduce(&k, DMLC_DTYPE_F32, DMLC_OP_ARGMAX, DMLC_DIRECTION_INCREASING);
      kd_out(&k, DMLC_KOUT_ONEHOT, DMLC_DTYPE_F32, 1);
      /* the output and the read (256000 bytes each) together */
      const bool nt = nontemporal_kernel(&k, 2 * 64 * 1000 * 4 + (big ? 0 : 1));
      ck_assert_msg(nt == (big != 0), "mask %d big %d: nontemporal %d", mask, big, nt);
    }
  }
  /* short packed rows: their INDEX output (u32, 4 bytes a row) */
  for (int big = 0; big < 2; big++) {
    const uint32_t sdims[2] = {4096, 3};
    dmlc_kdesc k = kd_make(2, sdims, 2);
    kd_reduce(&k, DMLC_DTYPE_U8, DMLC_OP_ARGMAX, DMLC_DIRECTION_INCREASING);
    kd_out(&k, DMLC_KOUT_INDEX, DMLC_DTYPE_U32, 1);
    const bool nt = nontemporal_kernel(&k, 4096 * 4 + 4096 * 3 + (big ? 0 : 1));
    ck_assert_msg(nt == (big != 0), "short rows, big %d: nontemporal %d", big, nt);
  }
  /* short packed rows' one-hots (a hardmax: as large as the read), where
   * a group's store is a whole number of vectors (8 f32 rows of 10 into
   * f32: 320 bytes; into f16, rows of 9: 144 bytes, not) */
  for (int c = 0; c < 3; c++) {
    const uint32_t sdims[2] = {4096, c == 2 ? 9 : 10};
    dmlc_kdesc k = kd_make(2, sdims, 2);
    kd_reduce(&k, DMLC_DTYPE_F32, DMLC_OP_ARGMAX, DMLC_DIRECTION_INCREASING);
    kd_out(&k, DMLC_KOUT_ONEHOT, c == 2 ? DMLC_DTYPE_F16 : DMLC_DTYPE_F32, 1);
    const uint64_t bytes = 4096ull * sdims[1] * (4 + (c == 2 ? 2 : 4));
    const bool nt = nontemporal_kernel(&k, bytes + (c == 1 ? 1 : 0));
    ck_assert_msg(nt == (c == 0), "short rows' one-hots, case %d: nontemporal %d", c, nt);
  }
  /* a channel argmax over 8 rows (NCHW): its index plane with the read
   * passes the size, alone it does not; it goes around the caches when it
   * is at least an eighth of the read (u8: half of it), not below (f64: a
   * sixteenth) */
  for (int wide = 0; wide < 2; wide++) {
    const uint32_t cdims[2] = {8, 4096};
    dmlc_kdesc k = kd_make(2, cdims, 1);
    kd_reduce(&k, wide ? DMLC_DTYPE_F64 : DMLC_DTYPE_U8, DMLC_OP_ARGMAX, DMLC_DIRECTION_INCREASING);
    kd_out(&k, DMLC_KOUT_INDEX, DMLC_DTYPE_U32, 1);
    const bool nt = nontemporal_kernel(&k, 4096 * 4 + 1);
    ck_assert_msg(nt == !wide, "8 rows, %s: nontemporal %d", wide ? "f64" : "u8", nt);
  }
  /* blocked columns (more rows than one select chain): the index goes
   * around the caches beside a read of the size or more, when it is at
   * least a thirty-second of the read (32 rows of f32 into u32), not below
   * (33 rows), nor beside a smaller read */
  for (int c = 0; c < 3; c++) {
    const uint32_t cdims[2] = {c == 1 ? 33 : 32, 4096};
    dmlc_kdesc k = kd_make(2, cdims, 1);
    kd_reduce(&k, DMLC_DTYPE_F32, DMLC_OP_ARGMAX, DMLC_DIRECTION_INCREASING);
    kd_out(&k, DMLC_KOUT_INDEX, DMLC_DTYPE_U32, 1);
    const uint64_t read = (uint64_t)cdims[0] * 4096 * 4;
    const bool nt = nontemporal_kernel(&k, c == 2 ? read + 1 : read);
    ck_assert_msg(nt == (c == 0), "%u rows, min %s: nontemporal %d", cdims[0],
                  c == 2 ? "past the read" : "the read", nt);
  }
}
END_TEST

/* Rows are prefetched ahead of their loads, and columns with long runs a
 * group of rows ahead, only when the whole read is at most
 * stream_prefetch_max_bytes (from DRAM the hardware prefetchers follow
 * them); the prefetch of each next run of a merged row is a jump and stays.
 * Either way the answers are the same. */
/* Asserts whether k, an argmax or argmin into a u32 index, prefetches
 * under stream_prefetch_max_bytes limit, and checks its answers. */
static void expect_prefetch(dmlc_kdesc k, dmlc_dtype dt, dmlc_op op, uint64_t limit, bool want,
                            const char *what) {
  kd_reduce(&k, dt, op, DMLC_DIRECTION_INCREASING);
  kd_out(&k, DMLC_KOUT_INDEX, DMLC_DTYPE_U32, 1);
  stream_prefetch_max = limit;
  const bool prefetch = ir_has(&k, "@llvm.prefetch");
  ck_assert_msg(prefetch == want, "%s, limit %llu: prefetch %d", what, (unsigned long long)limit,
                prefetch);
  check_kernel(&k);
  stream_prefetch_max = UINT64_MAX;
}

/* Rows from DRAM of 8 KiB or more (which otherwise prefetch nothing) with
 * a pitch longer than the row prefetch the gap up to the next row when it
 * is no longer than the row; a longer gap or none, nothing. Each kernel's
 * answers are checked too (the prefetches past the last row's end point
 * outside the buffers). */
START_TEST(test_row_gap_touch) {
  static const struct {
    uint32_t len, pitch;
    bool want;
  } cases[] = {
      {5000, 5000, false},  {5000, 5048, true},   {5000, 5049, true}, {5000, 10000, true},
      {5000, 10001, false}, {5000, 20000, false}, {3, 5, true},
  };
  for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
    const uint32_t dims[2] = {7, cases[c].len};
    dmlc_kdesc k = kd_make(2, dims, 2);
    k.read_strides[0] = cases[c].pitch;
    char what[64];
    snprintf(what, sizeof what, "rows of %u, pitch %u", cases[c].len, cases[c].pitch);
    expect_prefetch(k, c % 2 ? DMLC_DTYPE_F16 : DMLC_DTYPE_F32,
                    c % 3 ? DMLC_OP_ARGMIN : DMLC_OP_ARGMAX, 0, cases[c].want, what);
  }
}
END_TEST

/* Whole rows from DRAM under 8 KiB, packed or padded, prefetch the lines
 * 4 KiB ahead of each row (emit_row.c's prefetch_ahead); rows of 8 KiB,
 * rows from the caches, and rows in groups on 64-byte vectors (no branch
 * on the data) do not, but with far_row_prefetch (test_group_row_prefetch
 * has the distances). Each kernel's answers are checked
 * too (the last rows' prefetches point past the read). */
START_TEST(test_row_ahead) {
  static const struct {
    uint32_t rows, len, pitch;
    dmlc_dtype dt;
    uint64_t limit;  /* stream_prefetch_max_bytes: 0 from DRAM */
    bool long_ahead; /* far_row_prefetch: rows under 8 KiB, not 3.5 */
    bool want;
    uint32_t vec; /* vec_bytes */
  } cases[] = {
      {9, 1000, 1000, DMLC_DTYPE_F32, 0, true, true, 32},   /* block rows */
      {9, 1000, 1000, DMLC_DTYPE_F32, 0, false, false, 32}, /* 3.5 KiB or more */
      {9, 880, 880, DMLC_DTYPE_F32, 0, false, true, 32},    /* under 3.5 KiB */
      {9, 640, 3000, DMLC_DTYPE_F32, 0, false, true, 32},   /* padded, the gap too long to touch */
      {9, 1000, 1000, DMLC_DTYPE_F16, 0, false, true, 32},  /* two passes */
      {5, 3000, 3000, DMLC_DTYPE_U8, 0, false, true, 32},   /* bit blocks */
      {9, 2048, 2048, DMLC_DTYPE_F32, 0, false, false, 32}, /* 8 KiB (with far_row_prefetch:
                                                             * test_row_far_stream) */
      {9, 1000, 1000, DMLC_DTYPE_F32, UINT64_MAX, true, false, 32}, /* from the caches (no stream
                                                                     * prefetch either: below) */
      {40, 80, 80, DMLC_DTYPE_F32, 0, true, true, 32},              /* groups, 32-byte vectors */
      {70, 40, 40, DMLC_DTYPE_U8, 0, false, true, 32},              /* groups of 32 */
      {40, 80, 80, DMLC_DTYPE_F32, UINT64_MAX, false, false, 32},   /* groups from the caches */
      {40, 80, 80, DMLC_DTYPE_F16, 0, false, false, 64},            /* groups, 64-byte vectors */
  };
  for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
    const uint32_t dims[2] = {cases[c].rows, cases[c].len};
    dmlc_kdesc k = kd_make(2, dims, 2);
    k.read_strides[0] = cases[c].pitch;
    char what[64];
    snprintf(what, sizeof what, "%s rows of %u, pitch %u", dmlc_dtype_name(cases[c].dt),
             cases[c].len, cases[c].pitch);
    row_prefetch_max = 1; /* no rows' stream prefetches from the caches */
    far_row_prefetch = cases[c].long_ahead;
    vec_bytes = cases[c].vec;
    expect_prefetch(k, cases[c].dt, c % 2 ? DMLC_OP_ARGMIN : DMLC_OP_ARGMAX, cases[c].limit,
                    cases[c].want, what);
    row_prefetch_max = 0;
    far_row_prefetch = false;
    vec_bytes = 32;
  }
}
END_TEST

/* With far_row_prefetch, rows from DRAM that take the one-pass, block or
 * bit-block paths (long rows: no row groups, no prefetch_ahead)
 * stream-prefetch 16 KiB ahead of their loads; without it, or from the
 * caches, they prefetch nothing. Each kernel's answers are checked too
 * (the prefetches past the read's end point outside the buffers). */
START_TEST(test_row_far_stream) {
  static const struct {
    uint32_t rows, len;
    dmlc_dtype dt;
  } cases[] = {{9, 2048, DMLC_DTYPE_F32}, {5, 9000, DMLC_DTYPE_I8},  {5, 5000, DMLC_DTYPE_F16},
               {5, 3000, DMLC_DTYPE_I64}, {3, 20000, DMLC_DTYPE_U8}, {5, 4100, DMLC_DTYPE_F32}};
  for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++)
    for (int s = 0; s < 3; s++) {
      const uint32_t dims[2] = {cases[c].rows, cases[c].len};
      dmlc_kdesc k = kd_make(2, dims, 2);
      kd_reduce(&k, cases[c].dt, s == 1 ? DMLC_OP_ARGMIN : DMLC_OP_ARGMAX,
                DMLC_DIRECTION_INCREASING);
      kd_out(&k, DMLC_KOUT_INDEX, DMLC_DTYPE_U32, 1);
      far_row_prefetch = s != 1;
      stream_prefetch_max = s == 2 ? UINT64_MAX : 0; /* s 2: from the caches */
      row_prefetch_max = 1;                          /* no stream prefetches from the caches */
      jitted j;
      char *ir = NULL;
      compile(&k, &j, &ir);
      release(&j);
      const bool far = strstr(ir, "i64 16384\n") != NULL, any = strstr(ir, "@llvm.prefetch");
      LLVMDisposeMessage(ir);
      ck_assert_msg(s == 0 ? far && any : !any, "%s [%u,%u], case %d: prefetch %d, 16 KiB %d",
                    dmlc_dtype_name(cases[c].dt), cases[c].rows, cases[c].len, s, any, far);
      check_kernel(&k);
      far_row_prefetch = false;
      stream_prefetch_max = UINT64_MAX;
      row_prefetch_max = 0;
    }
}
END_TEST

/* From DRAM, row groups prefetch each row's lines 1 KiB ahead as the row
 * begins (one prefetch a 64 bytes of the row, in the row's loop, not a
 * burst of the group's lines), 16 KiB with far_row_prefetch (and then on
 * 64-byte vectors too); the short rows' de-interleaving (emit_small.c)
 * each group's lines 2 KiB ahead as it begins; groups of rows under a
 * line (or a vector) the group's lines 2 KiB ahead in a loop as it
 * begins, far_row_prefetch or not. Each kernel's answers are checked too. */
START_TEST(test_group_row_prefetch) {
  static const struct {
    uint32_t rows, len;
    dmlc_dtype dt;
    uint32_t vec;
    uint32_t ahead, unit; /* unit: bytes each run of prefetches covers (0: a loop) */
    bool far;             /* far_row_prefetch */
  } cases[] = {
      {40, 80, DMLC_DTYPE_F32, 32, 1024, 320, false},
      {40, 80, DMLC_DTYPE_F16, 32, 1024, 160, false},
      {70, 40, DMLC_DTYPE_U8, 32, 2048, 0, false},
      {20, 200, DMLC_DTYPE_F32, 16, 1024, 800, false},
      {40, 33, DMLC_DTYPE_I16, 16, 1024, 66, false},
      {100, 21, DMLC_DTYPE_U8, 32, 2048, 0, false},
      {64, 10, DMLC_DTYPE_F32, 32, 2048, 320, false},
      {100, 5, DMLC_DTYPE_U8, 32, 2048, 160, false},
      {64, 12, DMLC_DTYPE_F32, 16, 2048, 192, false},
      {48, 80, DMLC_DTYPE_F32, 64, 16384, 320, true}, /* (no rows past the groups: */
      {48, 80, DMLC_DTYPE_F16, 32, 16384, 160, true}, /* those stream-prefetch) */
      {20, 200, DMLC_DTYPE_F32, 16, 16384, 800, true},
      {70, 40, DMLC_DTYPE_U8, 32, 2048, 0, true},
  };
  for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
    const uint32_t dims[2] = {cases[c].rows, cases[c].len};
    dmlc_kdesc k = kd_make(2, dims, 2);
    kd_reduce(&k, cases[c].dt, c % 2 ? DMLC_OP_ARGMIN : DMLC_OP_ARGMAX,
              c % 3 ? DMLC_DIRECTION_DECREASING : DMLC_DIRECTION_INCREASING);
    kd_out(&k, DMLC_KOUT_INDEX, DMLC_DTYPE_U32, 1);
    stream_prefetch_max = 0;
    vec_bytes = cases[c].vec;
    row_narrow = vec_bytes == 64 ? 32 : 0; /* as the JIT with AVX-512 */
    far_row_prefetch = cases[c].far;
    jitted j;
    char *ir = NULL;
    compile(&k, &j, &ir);
    release(&j);
    const uint64_t unit = cases[c].unit;
    const uint64_t calls = count_in(ir, "call void @llvm.prefetch", NULL);
    /* the unit's last line's prefetch: an offset of that many bytes on the
     * line before a prefetch (a loop's offset is not a constant) */
    char needle[64];
    snprintf(needle, sizeof needle, ", i64 %llu\n",
             (unsigned long long)(cases[c].ahead + (unit ? (unit - 1) / 64 * 64 : 0)));
    bool has = !unit;
    for (const char *p = ir; !has && (p = strstr(p, needle)); p++) {
      const char *line = p + strlen(needle), *end = strchr(line, '\n');
      const char *call = strstr(line, "call void @llvm.prefetch");
      has = call && (!end || call < end);
    }
    LLVMDisposeMessage(ir);
    ck_assert_msg(has, "%s [%u,%u]: no prefetch at %s", dmlc_dtype_name(cases[c].dt), cases[c].rows,
                  cases[c].len, needle);
    /* a run a unit (the short rows' loop twice where outputs may be
     * stored non-temporally; with far_row_prefetch the code for rows past
     * the groups stream-prefetches as well: test_row_far_stream) */
    const uint64_t want = unit ? (unit + 63) / 64 : 1;
    ck_assert_msg(calls == want || (unit && cases[c].ahead == 2048 && calls == 2 * want) ||
                      (cases[c].far && calls > want),
                  "%s [%u,%u]: %llu prefetches, want %llu", dmlc_dtype_name(cases[c].dt),
                  cases[c].rows, cases[c].len, (unsigned long long)calls, (unsigned long long)want);
    static const data_mode modes[] = {DATA_RANDOM, DATA_TIES};
    check_kernel_modes(&k, modes, 2);
    /* from the caches: none (nor the rows' stream prefetches) */
    stream_prefetch_max = UINT64_MAX;
    row_prefetch_max = 1;
    ck_assert_msg(!ir_has(&k, "@llvm.prefetch"), "%s [%u,%u]: prefetches from the caches",
                  dmlc_dtype_name(cases[c].dt), cases[c].rows, cases[c].len);
    row_prefetch_max = 0;
    vec_bytes = 32;
    row_narrow = 0;
    far_row_prefetch = false;
  }
}
END_TEST

/* From DRAM (stream_prefetch_max_bytes 0), columns of 32 rows or more of
 * 512 KiB or more are read in runs of 4 KiB; 31 rows, a read the caches
 * hold, or a target with long_column_runs keep the long runs (32 KiB). The
 * run shows in bytes_per_task: rows * block + block * 4 (the u32 index). */
START_TEST(test_column_short_runs) {
  for (int s = 0; s < 4; s++) {
    const uint32_t dims[2] = {s == 1 ? 31u : 32u, 512u * 1024u};
    dmlc_kdesc k = kd_make(2, dims, 1);
    kd_reduce(&k, DMLC_DTYPE_U8, s == 1 ? DMLC_OP_ARGMIN : DMLC_OP_ARGMAX,
              DMLC_DIRECTION_INCREASING);
    kd_out(&k, DMLC_KOUT_INDEX, DMLC_DTYPE_U32, 1);
    stream_prefetch_max = s == 2 ? UINT64_MAX : 0;
    long_column_runs = s == 3;
    jitted j;
    compile(&k, &j, NULL);
    long_column_runs = false;
    const uint64_t block = j.info.bytes_per_task / (dims[0] + 4);
    release(&j);
    ck_assert_msg(block == (s == 0 ? 4096u : 32768u), "case %d: blocks of %llu columns", s,
                  (unsigned long long)block);
    static const data_mode modes[] = {DATA_RANDOM, DATA_TIES};
    if (s == 0 || s == 3) {
      long_column_runs = s == 3;
      check_kernel_modes(&k, modes, 2);
      long_column_runs = false;
    }
  }
  stream_prefetch_max = UINT64_MAX;
}
END_TEST

/* The kernel's answers on tie-heavy, special and random data. */
static void check_three_modes(const dmlc_kdesc *k) {
  static const data_mode modes[] = {DATA_TIES, DATA_SPECIALS, DATA_RANDOM};
  check_kernel_modes(k, modes, 3);
}

/* Columns prefetch the next group of rows once a 64-byte line where their
 * vectors are narrower (emit_column.c's line_vectors): in the caches, and
 * from DRAM for 1- and 2-byte values on 16-byte vectors; elsewhere once a
 * vector. Seen in the optimized IR as the read's vector loads (unaligned)
 * for each prefetch: about one a vector, 64 / vector bytes a line. */
START_TEST(test_column_line_prefetch) {
  static const struct {
    dmlc_dtype dt;
    uint32_t vec;
    bool dram;
    unsigned per_prefetch; /* loads a prefetch: 64 / vec, or 1 */
  } cases[] = {
      {DMLC_DTYPE_U16, 16, false, 4}, {DMLC_DTYPE_U16, 16, true, 4},
      {DMLC_DTYPE_F32, 16, false, 4}, {DMLC_DTYPE_F32, 16, true, 1},
      {DMLC_DTYPE_U16, 32, false, 2}, {DMLC_DTYPE_U16, 32, true, 1},
      {DMLC_DTYPE_U8, 16, true, 4},   {DMLC_DTYPE_U8, 64, false, 1},
  };
  for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
    const uint32_t dims[2] = {64, 4096};
    dmlc_kdesc k = kd_make(2, dims, 1);
    kd_reduce(&k, cases[c].dt, DMLC_OP_ARGMAX, DMLC_DIRECTION_INCREASING);
    kd_out(&k, DMLC_KOUT_INDEX, DMLC_DTYPE_U32, 1);
    vec_bytes = cases[c].vec;
    stream_prefetch_max = cases[c].dram ? 0 : UINT64_MAX;
    char *ir = NULL;
    jitted j;
    compile(&k, &j, &ir);
    release(&j);
    const uint32_t lanes = cases[c].vec / dmlc_dtype_size(cases[c].dt);
    char load[64];
    snprintf(load, sizeof load, "load <%u x %s>, ptr %%", lanes,
             cases[c].dt == DMLC_DTYPE_F32  ? "float"
             : cases[c].dt == DMLC_DTYPE_U8 ? "i8"
                                            : "i16");
    const unsigned loads = count_in(ir, load, ", align 1");
    const unsigned prefetches = count_in(ir, "call void @llvm.prefetch", NULL);
    LLVMDisposeMessage(ir);
    ck_assert_msg(prefetches > 0, "case %zu: no prefetch", c);
    const double ratio = (double)loads / prefetches;
    ck_assert_msg(ratio > 0.75 * cases[c].per_prefetch && ratio < 1.5 * cases[c].per_prefetch,
                  "case %zu: %u loads of the read for %u prefetches (want about %u each)", c, loads,
                  prefetches, cases[c].per_prefetch);
    check_three_modes(&k);
  }
  vec_bytes = 32;
  stream_prefetch_max = UINT64_MAX;
}
END_TEST

/* The target the tests compile for by default, after a test that set a
 * wide one: 32-byte vectors, no row narrowing, the caches, no L2. */
static void default_target(void) {
  byte_permutes = false;
  lane_rows = false;
  nt_min_bytes = 0;
  out_shift = 0;
  l2_bytes = 0;
  row_narrow = 0;
  stream_prefetch_max = UINT64_MAX;
  vec_bytes = 32;
}

/* With row_narrow_bytes 32 and 64-byte vectors, rows read from DRAM
 * (stream_prefetch_max_bytes 0) and f32 rows shorter than 16 KiB go 32
 * bytes a vector; longer f32 rows from the caches and f16 rows keep 64,
 * as does every row with row_narrow_bytes 0. The answers are checked each
 * way. */
START_TEST(test_row_narrow_vectors) {
  static const struct {
    dmlc_dtype dt;
    uint32_t len, narrow;
    uint64_t limit;
    const char *wide, *narrow_vec;
    bool want_narrow;
  } cases[] = {
      {DMLC_DTYPE_F32, 8192, 32, 0, "<16 x float>", "<8 x float>", true},
      {DMLC_DTYPE_F32, 8192, 32, UINT64_MAX, "<16 x float>", "<8 x float>", false},
      {DMLC_DTYPE_F32, 4095, 32, UINT64_MAX, "<16 x float>", "<8 x float>", true},
      {DMLC_DTYPE_F32, 1000, 32, UINT64_MAX, "<16 x float>", "<8 x float>", true},
      {DMLC_DTYPE_F32, 1000, 0, UINT64_MAX, "<16 x float>", "<8 x float>", false},
      {DMLC_DTYPE_F32, 1000, 0, 0, "<16 x float>", "<8 x float>", false},
      {DMLC_DTYPE_F16, 1000, 32, UINT64_MAX, "<32 x i16>", "<16 x i16>", false},
      {DMLC_DTYPE_U8, 1u << 16, 32, 0, "<64 x i8>", "<32 x i8>", true},
      /* f16 rows under two wide vectors: not converted and compared as
       * halves (element by element), but on their bits, narrower */
      {DMLC_DTYPE_F16, 40, 32, UINT64_MAX, "<32 x half>", "<16 x i16>", true},
      /* 8-bit rows under two wide vectors: vector code at 32 lanes, not a
       * scalar loop (rows under 64) or one vector of 64 lanes a row */
      {DMLC_DTYPE_U8, 40, 32, UINT64_MAX, "<64 x i8>", "<32 x i8>", true},
      {DMLC_DTYPE_I8, 100, 32, UINT64_MAX, "<64 x i8>", "<32 x i8>", true},
      {DMLC_DTYPE_U8, 200, 32, UINT64_MAX, "<64 x i8>", "<32 x i8>", false},
  };
  vec_bytes = 64;
  for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
    const uint32_t dims[2] = {3, cases[c].len};
    dmlc_kdesc k = kd_make(2, dims, 2);
    kd_reduce(&k, cases[c].dt, c % 2 ? DMLC_OP_ARGMIN : DMLC_OP_ARGMAX, DMLC_DIRECTION_INCREASING);
    kd_out(&k, DMLC_KOUT_INDEX, DMLC_DTYPE_U32, 1);
    if (c == 3)
      kd_out(&k, DMLC_KOUT_ONEHOT, DMLC_DTYPE_F32, 1);
    row_narrow = cases[c].narrow;
    stream_prefetch_max = cases[c].limit;
    jitted j;
    char *ir = NULL;
    compile(&k, &j, &ir);
    const bool wide = strstr(ir, cases[c].wide) != NULL;
    const bool narrow = strstr(ir, cases[c].narrow_vec) != NULL;
    LLVMDisposeMessage(ir);
    release(&j);
    ck_assert_msg(wide != cases[c].want_narrow && (!cases[c].want_narrow || narrow),
                  "case %zu: %s %d, %s %d", c, cases[c].wide, wide, cases[c].narrow_vec, narrow);
    check_three_modes(&k);
  }
  default_target();
}
END_TEST

START_TEST(test_stream_prefetch_limit) {
  /* [240, r2100] rows (8400 bytes: longer than those prefetch_ahead
   * serves from DRAM); [r8, 64, r1000] with rows padded to 1008 (packed,
   * the column code would take it as a plane): blocks of points, each
   * point's next run 64512 elements on */
  const uint32_t rows_dims[2] = {240, 2100}, merged_dims[3] = {8, 64, 1000};
  dmlc_kdesc merged = kd_make(3, merged_dims, 5);
  merged.read_strides[1] = 1008;
  merged.read_strides[0] = 64 * 1008;
  /* columns [4, r64, cols]: runs of 16 KiB (f16, 8192-column blocks) and
   * of 4 KiB (f32, 1024 columns) */
  const uint32_t long_dims[3] = {4, 64, 16384}, short_dims[3] = {4, 64, 1024};
  for (int limited = 0; limited < 2; limited++) {
    const uint64_t limit = limited ? 1024 : UINT64_MAX;
    expect_prefetch(kd_make(2, rows_dims, 2), DMLC_DTYPE_F32, DMLC_OP_ARGMAX, limit, !limited,
                    "rows");
    expect_prefetch(merged, DMLC_DTYPE_F32, DMLC_OP_ARGMAX, limit, true, "merged rows");
    expect_prefetch(kd_make(3, long_dims, 2), DMLC_DTYPE_F16, DMLC_OP_ARGMIN, limit, !limited,
                    "columns, long runs");
    expect_prefetch(kd_make(3, short_dims, 2), DMLC_DTYPE_F32, DMLC_OP_ARGMIN, limit, true,
                    "columns, short runs");
  }
  /* From DRAM, the long runs' groups are prefetched where they fit in
   * three quarters of the L2 with 64-byte vectors, half with narrower
   * ones: 8 runs of 32 KiB, twice, and 64 KiB of accumulators (576 KiB)
   * with an L2 of 1 MiB and 64-byte vectors only; 8 runs of 16 KiB and
   * 32 KiB of accumulators (288 KiB) with 1 MiB and 32-byte vectors, not
   * 512 KiB */
  const uint32_t half_dims[3] = {4, 64, 8192};
  for (int big = 0; big < 2; big++) {
    l2_bytes = big ? 1u << 20 : 1u << 19;
    for (int wide = 0; wide < 2; wide++) {
      vec_bytes = wide ? 64 : 32;
      expect_prefetch(kd_make(3, long_dims, 2), DMLC_DTYPE_F16, DMLC_OP_ARGMAX, 0, big && wide,
                      big ? "columns, long runs, 1 MiB L2" : "columns, long runs, 512 KiB L2");
    }
    vec_bytes = 32;
    expect_prefetch(kd_make(3, half_dims, 2), DMLC_DTYPE_F16, DMLC_OP_ARGMAX, 0, big,
                    big ? "columns, 288 KiB, 1 MiB L2" : "columns, 288 KiB, 512 KiB L2");
  }
  /* With no_column_run_prefetch, the same long runs from DRAM are read
   * without the next group's prefetches under 64-byte vectors, or of
   * values of one or two bytes under any, each row's run prefetched 2 KiB
   * ahead instead (column.run_ahead); they keep the next group's for f32
   * under 32-byte vectors, from the caches, or split into row chunks (600
   * rows of one block: three tasks of rows, their partials merged by a
   * finish). The run's prefetches are the only ones at a constant 2048
   * bytes (a GEP of i8); the next group's are at row offsets. */
  no_column_run_prefetch = true;
  static const struct {
    uint32_t vec;
    dmlc_dtype dt;
    int mode; /* 0: from DRAM, 1: from the caches, 2: split */
    bool prefetch;
    const char *what;
  } nocases[] = {
      {64, DMLC_DTYPE_F16, 0, false, "f16, 64-byte vectors"},
      {32, DMLC_DTYPE_F16, 0, false, "f16, 32-byte vectors"},
      {16, DMLC_DTYPE_U8, 0, false, "u8, 16-byte vectors"},
      {64, DMLC_DTYPE_F32, 0, false, "f32, 64-byte vectors"},
      {32, DMLC_DTYPE_F32, 0, true, "f32, 32-byte vectors"},
      {64, DMLC_DTYPE_F16, 1, true, "from the caches"},
      {64, DMLC_DTYPE_F16, 2, true, "split"},
  };
  for (size_t c = 0; c < sizeof nocases / sizeof nocases[0]; c++) {
    vec_bytes = nocases[c].vec;
    const uint32_t split_dims[2] = {600, 16384};
    dmlc_kdesc k = nocases[c].mode == 2 ? kd_make(2, split_dims, 1) : kd_make(3, long_dims, 2);
    if (nocases[c].mode == 2) { /* its answers: test_column_split's */
      kd_reduce(&k, nocases[c].dt, DMLC_OP_ARGMAX, DMLC_DIRECTION_INCREASING);
      kd_out(&k, DMLC_KOUT_INDEX, DMLC_DTYPE_U32, 1);
      stream_prefetch_max = 0;
      jitted j;
      compile(&k, &j, NULL);
      ck_assert_msg(j.info.has_finish, "600 rows: not split");
      release(&j);
      ck_assert_msg(ir_has(&k, "@llvm.prefetch"), "%s: no prefetch", nocases[c].what);
      stream_prefetch_max = UINT64_MAX;
    } else {
      kd_reduce(&k, nocases[c].dt, DMLC_OP_ARGMAX, DMLC_DIRECTION_INCREASING);
      kd_out(&k, DMLC_KOUT_INDEX, DMLC_DTYPE_U32, 1);
      stream_prefetch_max = nocases[c].mode == 1 ? UINT64_MAX : 0;
      jitted j;
      char *ir = NULL;
      compile(&k, &j, &ir);
      release(&j);
      const bool any = strstr(ir, "@llvm.prefetch") != NULL;
      const bool run = count_in(ir, "getelementptr i8, ptr", ", i64 2048") > 0;
      LLVMDisposeMessage(ir);
      ck_assert_msg(any && run == !nocases[c].prefetch,
                    "%s: prefetch %d, 2 KiB ahead in the run %d", nocases[c].what, any, run);
      check_kernel(&k);
      stream_prefetch_max = UINT64_MAX;
    }
  }
  no_column_run_prefetch = false;
  vec_bytes = 32;
  l2_bytes = 0;
  /* row_prefetch_max_bytes below the read: the rows lose their prefetches
   * (the read, 1.9 MB, is still within stream_prefetch_max_bytes), the
   * columns of long runs keep theirs */
  row_prefetch_max = 1u << 20;
  expect_prefetch(kd_make(2, rows_dims, 2), DMLC_DTYPE_F32, DMLC_OP_ARGMAX, UINT64_MAX, false,
                  "rows, row prefetches limited");
  expect_prefetch(kd_make(3, long_dims, 2), DMLC_DTYPE_F16, DMLC_OP_ARGMIN, UINT64_MAX, true,
                  "columns, row prefetches limited");
  row_prefetch_max = 4u << 20;
  expect_prefetch(kd_make(2, rows_dims, 2), DMLC_DTYPE_F32, DMLC_OP_ARGMAX, UINT64_MAX, true,
                  "rows, within the row prefetch limit");
  row_prefetch_max = 0;
}
END_TEST

/* ---- columns ---- */

static void check_columns(dmlc_dtype dt) {
  /* the last five: blocks of every type's width and a narrow last one;
   * row counts at the 16-bit row index limit (16-bit values) and the
   * 8-bit one (8-bit values) */
  static const uint32_t rows[] = {2, 3, 6, 9, 5, 2, 11, 65536, 65537, 256, 257},
                        cols[] = {3, 8, 17, 100, 300, 2051, 16384 + 17, 3, 2, 40, 33};
  for (int s = 0; s < 11; s++) {
    const bool outer = s % 2 == 1;
    const uint32_t dims[3] = {2, rows[s], cols[s]};
    dmlc_kdesc k = outer ? kd_make(3, dims, 2) : kd_make(2, dims + 1, 1);
    if (s == 2) /* padded rows */
      k.read_strides[0] = cols[s] + 5;
    if (s == 3) /* broadcast over the outer dim */
      k.read_strides[0] = 0;
    if (s == 4) /* broadcast over the reduced dim */
      k.read_strides[1] = 0;
    kd_out(&k, DMLC_KOUT_INDEX, index_types[s % 4], s % 3 == 0 ? 2 : 1);
    kd_out(&k, DMLC_KOUT_ONEHOT, onehot_types[s % 6], s % 2 == 0 ? 1 : 3);
    check_reductions(k, dt);
  }
}

START_TEST(test_column) { check_columns(reduce_types[_i]); }
END_TEST

/* The same with 64-byte vectors: eight rows a step for every type (four
 * for 4- and 8-byte types with narrower vectors), the rows past the last
 * step (2 of 11, 7 of 256) as one group. */
START_TEST(test_column_wide) {
  vec_bytes = 64;
  check_columns(reduce_types[_i]);
  vec_bytes = 32;
}
END_TEST

/* Unsplit, a block's last group of rows (the rest past the last whole
 * step, or else the last whole step, taken out of the loop) prefetches the
 * next block's first rows, past the buffer's end for the last block: row
 * counts that end on a whole step and that do not, with 32- and 64-byte
 * vectors (4 or 8 rows a step), three blocks the last one narrow, and an
 * outer dim. The answers must be the reference's. */
START_TEST(test_column_last_group) {
  const dmlc_dtype dt = _i % 2 ? DMLC_DTYPE_U8 : DMLC_DTYPE_F32;
  vec_bytes = _i / 2 ? 64 : 32;
  const uint32_t step = dt == DMLC_DTYPE_F32 && vec_bytes < 64 ? 4 : 8;
  /* a block is 32 KiB of a row */
  const uint32_t cols = 2 * (32768 / dmlc_dtype_size(dt)) + 100;
  const uint32_t rows[] = {1 + step, 2 + step, 1 + 2 * step, step, 2 + 3 * step};
  for (int s = 0; s < 5; s++) {
    const uint32_t dims[3] = {2, rows[s], cols};
    dmlc_kdesc k = s % 2 ? kd_make(3, dims, 2) : kd_make(2, dims + 1, 1);
    kd_out(&k, DMLC_KOUT_INDEX, index_types[s % 4], 1);
    if (s == 2)
      kd_out(&k, DMLC_KOUT_ONEHOT, onehot_types[_i % 6], 1);
    kd_reduce(&k, dt, DMLC_OP_ARGMAX, DMLC_DIRECTION_INCREASING);
    jitted j;
    compile(&k, &j, NULL);
    ck_assert_msg(!j.info.has_finish && j.info.num_tasks >= 3, "rows %u: %llu tasks%s", rows[s],
                  (unsigned long long)j.info.num_tasks, j.info.has_finish ? ", split" : "");
    release(&j);
    check_reductions(k, dt);
  }
  vec_bytes = 32;
}
END_TEST

/* Columns with too few blocks for the threads and enough rows: the rows
 * are split into chunks whose partials the finish merges in order. */
START_TEST(test_column_split) {
  const dmlc_dtype dt = reduce_types[_i];
  static const uint32_t rows[] = {512, 777, 1100, 600, 2051}, cols[] = {3, 17, 40, 9, 1};
  for (int s = 0; s < 5; s++) {
    const bool outer = s % 2 == 1;
    const uint32_t dims[3] = {2, rows[s], cols[s]};
    dmlc_kdesc k = outer ? kd_make(3, dims, 2) : kd_make(2, dims + 1, 1);
    if (s == 2) /* padded rows */
      k.read_strides[0] = cols[s] + 3;
    if (s == 3) /* broadcast over the outer dim */
      k.read_strides[0] = 0;
    kd_out(&k, DMLC_KOUT_INDEX, index_types[s % 4], s == 2 ? 2 : 1);
    kd_out(&k, DMLC_KOUT_ONEHOT, onehot_types[(s + _i) % 6], s == 4 ? 2 : 1);
    kd_reduce(&k, dt, DMLC_OP_ARGMAX, DMLC_DIRECTION_INCREASING);
    jitted j;
    compile(&k, &j, NULL);
    ck_assert_msg(j.info.has_finish && j.info.scratch_bytes > 0, "rows %u cols %u not split",
                  rows[s], cols[s]);
    release(&j);
    check_reductions(k, dt);
  }
}
END_TEST

/* f16 columns on raw bit patterns (NaNs with any payload and sign, +-0,
 * +-inf, subnormals), all-NaN and all -inf columns, partial blocks and
 * vectors, and row counts around the 16-bit index limit. */
START_TEST(test_column_f16) {
  static const uint32_t rows[] = {2, 5, 67, 300, 65536, 65537}, cols[] = {17, 4100, 33, 2, 18, 3};
  const data_mode modes[] = {DATA_F16_BITS, DATA_SPECIALS, DATA_TIES, DATA_ALL_NAN,
                             DATA_ALL_NEG_INF};
  for (int s = 0; s < 6; s++) {
    const uint32_t dims[3] = {2, rows[s], cols[s]};
    const bool outer = s == 2;
    dmlc_kdesc k = outer ? kd_make(3, dims, 2) : kd_make(2, dims + 1, 1);
    kd_out(&k, DMLC_KOUT_INDEX, index_types[s % 4], 1);
    if (rows[s] < 1000)
      kd_out(&k, DMLC_KOUT_ONEHOT, onehot_types[s % 6], 1);
    for (int v = 0; v < 4; v++) {
      kd_reduce(&k, DMLC_DTYPE_F16, v & 1 ? DMLC_OP_ARGMIN : DMLC_OP_ARGMAX,
                v & 2 ? DMLC_DIRECTION_DECREASING : DMLC_DIRECTION_INCREASING);
      /* the keys in portable IR, and with PSIGNW where the host has it;
       * f16 widened by fpext and in integer operations (soft_half) */
      for (int p = 0; p < (host_psign_bytes ? 3 : 2); p++) {
        psign_bytes = p == 2 ? host_psign_bytes : 0;
        soft_half = p == 1;
        check_kernel_modes(&k, modes, rows[s] < 1000 ? 5 : 2);
      }
      soft_half = false;
    }
  }
  psign_bytes = 0;
}
END_TEST

/* A fast pass's kernel k over dt with each set of up to three lone NaNs
 * (at[a], 0 after the first ends a set), then none; all four (op,
 * direction) pairs, with and without infinities around; the IR holds
 * needle (the fast pass's var). */
static void check_lone_nan_sets(dmlc_kdesc *k, dmlc_dtype dt, const uint64_t (*at)[3], size_t sets,
                                const char *needle) {
  const data_mode modes[] = {DATA_LONE_NAN, DATA_INFS_LONE_NAN};
  for (size_t a = 0; a <= sets; a++) {
    lone_nans = 0; /* a == sets: no NaN */
    for (int n = 0; a < sets && n < 3 && (n == 0 || at[a][n]); n++)
      lone_nan_at[lone_nans++] = at[a][n];
    for (int v = 0; v < 4; v++) {
      kd_reduce(k, dt, v & 1 ? DMLC_OP_ARGMIN : DMLC_OP_ARGMAX,
                v & 2 ? DMLC_DIRECTION_DECREASING : DMLC_DIRECTION_INCREASING);
      if (a == 0 && needle)
        ck_assert_msg(ir_has(k, needle), "no fast pass (%s)", needle);
      check_kernel_modes(k, modes, 2);
    }
  }
  lone_nans = 0;
}

/* f16 columns under 16- and 32-byte vectors take a block's keys without
 * their NaN fix and keep the magnitudes' maximum instead; a block that saw
 * a NaN is taken again, exactly. Lone NaNs (either sign) in the block's
 * first row, in a later group, in the last block, in the columns past the
 * last whole vector; none (the fast pass alone); ties and +-inf. A block
 * not taken again would rank a negative NaN below everything. */
START_TEST(test_column_f16_lone_nan) {
  vec_bytes = _i / 3 ? 32 : 16;
  psign_bytes = _i % 3 == 2 ? host_psign_bytes : 0;
  soft_half = _i % 3 == 1;
  /* two blocks of 16384 columns (32 KiB runs) and a partial vector; rows
   * past the direct path's (direct_rows: 12 under 16-byte vectors, 24) */
  const uint32_t rows = vec_bytes == 16 ? 13 : 25, cols = 16384 + 16384 + 19;
  const uint32_t dims[2] = {rows, cols};
  dmlc_kdesc k = kd_make(2, dims, 1);
  kd_out(&k, DMLC_KOUT_INDEX, DMLC_DTYPE_U32, 1);
  kd_out(&k, DMLC_KOUT_ONEHOT, DMLC_DTYPE_U8, 1);
  const uint64_t at[][3] = {
      {5, 0, 0},                                                     /* block 0, row 0 */
      {(uint64_t)9 * cols + 700, 0, 0},                              /* block 0, a later group */
      {(uint64_t)(rows - 1) * cols + 16384 + 3, 0, 0},               /* block 1, the last row */
      {(uint64_t)3 * cols + cols - 1, (uint64_t)3 * cols + cols, 0}, /* the tail, then a row on */
      {(uint64_t)1 * cols + 16, (uint64_t)7 * cols + 16, (uint64_t)8 * cols + 16400},
  };
  check_lone_nan_sets(&k, DMLC_DTYPE_F16, at, sizeof at / sizeof at[0], "nan_mag");
  soft_half = false;
  psign_bytes = 0;
  vec_bytes = 32;
}
END_TEST

/* Columns of a few rows (a channel argmax: emit_column's direct path) of
 * floats take a block first by ordered compares (f16 keys without their
 * NaN fix), keeping the magnitudes' maximum (f32 and f64 on 16- and
 * 32-byte vectors, up to 8 rows: the rows' sum, which +inf and -inf also
 * leave NaN); a block that saw a NaN is taken again by the exact rule,
 * over the first pass's outputs. f32, f16 and f64 under 16-, 32- and
 * 64-byte vectors, 3 rows and 24 (11 under 16-byte vectors, whose direct
 * path ends at 12: direct_rows), and f32 and f64 at the sum's 8 rows;
 * lone NaNs (either sign) in the first row of the first block, in a
 * later row, in the second block's last row, in the columns past the
 * last whole vector, two in one column; none (the fast pass alone);
 * ties of -0 and +0 and infinities (a magnitude at infinity's is no
 * NaN). Unfixed, a NaN would rank as an ordered compare ranks it: never
 * taken. */
START_TEST(test_column_direct_nan) {
  static const dmlc_dtype types[] = {DMLC_DTYPE_F32, DMLC_DTYPE_F16, DMLC_DTYPE_F64};
  static const uint32_t widths[] = {16, 32, 64};
  /* _i 18-21: 8 rows, the sum's limit (f32, f64 on 16- and 32-byte vectors) */
  const dmlc_dtype dt = _i < 18 ? types[_i % 3] : _i % 2 ? DMLC_DTYPE_F64 : DMLC_DTYPE_F32;
  vec_bytes = _i < 18 ? widths[_i / 3 % 3] : _i < 20 ? 16 : 32;
  const uint32_t rows = _i >= 18 ? 8 : _i / 9 == 0 ? 3 : vec_bytes == 16 ? 11 : 24;
  const uint32_t cols = 16384 + 16384 + 19;
  const uint32_t dims[2] = {rows, cols};
  dmlc_kdesc k = kd_make(2, dims, 1);
  kd_out(&k, DMLC_KOUT_INDEX, DMLC_DTYPE_U32, 1);
  kd_out(&k, DMLC_KOUT_ONEHOT, DMLC_DTYPE_U8, 1);
  const uint64_t last = rows - 1;
  const uint64_t at[][3] = {
      {5, 0, 0},                                                 /* block 0, row 0 */
      {last * cols + 700, 0, 0},                                 /* a later row */
      {last * cols + 16384 + 3, 0, 0},                           /* the second block */
      {cols - 1, last * cols + cols - 2, 0},                     /* the columns past the vectors */
      {cols + 16, last * cols + 16, 2 * (uint64_t)cols + 40000}, /* two in one column */
  };
  const bool sum = dt != DMLC_DTYPE_F16 && vec_bytes < 64 && rows <= 8;
  check_lone_nan_sets(&k, dt, at, sizeof at / sizeof at[0], sum ? "nan_sum" : "magnitudes");
  vec_bytes = 32;
}
END_TEST

/* [O, R, K] with K under a vector: the direct path's fast pass covers the
 * columns past the whole vectors too (their magnitudes, or with 5 rows
 * their values in the sum, padded to a vector), and where the vectors
 * were narrowed for the columns (f32 K = 5: 16 bytes) it takes up to 24
 * rows, not 12. Lone NaNs in those columns and in the vectors: unfixed, a
 * tail's NaN ranks as an ordered compare ranks it. */
START_TEST(test_column_direct_tails) {
  static const uint32_t ks[] = {5, 3, 7};
  const dmlc_dtype dt = _i % 2 ? DMLC_DTYPE_F64 : DMLC_DTYPE_F32; /* f16 keys: vectors only */
  const uint32_t K = ks[_i / 2 % 3], R = _i / 12 ? 5 : 21, O = 2048;
  vec_bytes = _i / 6 == 1 ? 32 : 64; /* 5 rows (_i 12-17): narrowed from 64 bytes */
  const uint32_t dims[3] = {O, R, K};
  dmlc_kdesc k = kd_make(3, dims, 2);
  kd_out(&k, DMLC_KOUT_INDEX, DMLC_DTYPE_U32, 1);
  kd_out(&k, DMLC_KOUT_ONEHOT, DMLC_DTYPE_U8, 1);
  const uint64_t pt = (uint64_t)R * K, mid = R / 2; /* rows 10 and 2 */
  const uint64_t at[][3] = {
      {K - 1, 0, 0},                                 /* point 0, row 0, the last column */
      {pt + (R - 1) * K + K - 1, 0, 0},              /* point 1, the last row */
      {7 * pt + mid * K + K - 1, 7 * pt + 3 * K, 0}, /* a tail's and a vector's */
      {2047 * pt + 1 * K + K - 2, 2047 * pt + 4 * K + K - 1, 0}, /* two tail columns */
  };
  /* (no IR needle: the tails' magnitudes are promoted out of their name) */
  check_lone_nan_sets(&k, dt, at, sizeof at / sizeof at[0], NULL);
  vec_bytes = 32;
}
END_TEST

/* Floats under 64-byte vectors, from the caches, merge a group's rows
 * pairwise and then into the accumulator (emit_column's tree_rows): not
 * from DRAM, under 32-byte vectors, or for integers. Row counts past the
 * direct path's (24 rows) whose groups are whole (25, 65) or uneven (26:
 * 7, 7, 7 and 4; 37: 8, 8, 8, 8 and 4); lone NaNs of either sign at rows of the first group,
 * in the vectors and past them, up to three at once; ties of -0 and +0, infinities, NaNs at
 * random; all four (op, direction) pairs. A tree that took a later pair
 * over an earlier on a tie, or a NaN second, would differ. */
START_TEST(test_column_tree) {
  static const uint32_t rows[] = {25, 26, 37, 65};
  const dmlc_dtype dt = _i % 2 ? DMLC_DTYPE_F64 : DMLC_DTYPE_F32;
  const uint32_t r = rows[_i / 2], cols = 64 + 5;
  const uint32_t dims[2] = {r, cols};
  vec_bytes = 64;
  dmlc_kdesc k = kd_make(2, dims, 1);
  kd_out(&k, DMLC_KOUT_INDEX, DMLC_DTYPE_U32, 1);
  kd_out(&k, DMLC_KOUT_ONEHOT, DMLC_DTYPE_U8, 1);
  /* NaNs at rows of the first group (1, 4, 5 and 6, 8), the last row, and
   * three in one column at rows of different groups; columns in a vector
   * and past */
  const uint64_t last = r - 1;
  const uint64_t at[][3] = {
      {1 * (uint64_t)cols + 3, 0, 0},
      {4 * (uint64_t)cols + 64, 0, 0},
      {5 * (uint64_t)cols + 8, 6 * (uint64_t)cols + 8, 0},
      {8 * (uint64_t)cols + 66, last * (uint64_t)cols + 66, 0},
      {3 * (uint64_t)cols + 30, (r / 2) * (uint64_t)cols + 30, last * (uint64_t)cols + 30},
  };
  check_lone_nan_sets(&k, dt, at, sizeof at / sizeof at[0], "pair");
  static const data_mode modes[] = {DATA_TIES, DATA_SPECIALS, DATA_RARE_NAN,
                                    DATA_INFS, DATA_ALL_NAN,  DATA_NEGATIVE};
  check_reductions_modes(k, dt, modes, 6);
  /* the chain elsewhere */
  kd_reduce(&k, dt, DMLC_OP_ARGMAX, DMLC_DIRECTION_INCREASING);
  stream_prefetch_max = 0;
  ck_assert_msg(!ir_has(&k, "pair"), "rows %u: merged pairwise from DRAM", r);
  stream_prefetch_max = UINT64_MAX;
  kd_reduce(&k, DMLC_DTYPE_I32, DMLC_OP_ARGMAX, DMLC_DIRECTION_INCREASING);
  ck_assert_msg(!ir_has(&k, "pair"), "rows %u: i32 merged pairwise", r);
  vec_bytes = 32;
  kd_reduce(&k, dt, DMLC_OP_ARGMAX, DMLC_DIRECTION_INCREASING);
  ck_assert_msg(!ir_has(&k, "pair"), "rows %u: merged pairwise under 32-byte vectors", r);
}
END_TEST

/* f32 and f64 columns under 16-byte vectors take a block first by ordered
 * compares, adding the rows into a running sum that a NaN leaves NaN; a
 * block whose sum is NaN is taken again, exactly. Lone NaNs (either sign)
 * as test_column_f16_lone_nan places them; none; +inf and -inf in one
 * column (a NaN sum with no NaN: taken again, the same answers); ties, NaN
 * at random, all NaN; split into row chunks; the plane path. Unfixed, a
 * NaN would never be taken. */
START_TEST(test_column_float_lone_nan) {
  const dmlc_dtype dt = _i ? DMLC_DTYPE_F64 : DMLC_DTYPE_F32;
  vec_bytes = 16;
  /* two blocks of 32 KiB runs and a partial vector */
  const uint32_t block = 32768 / dmlc_dtype_size(dt);
  const uint32_t rows = 13, cols = 2 * block + 3; /* rows past the direct path's */
  const uint32_t dims[2] = {rows, cols};
  dmlc_kdesc k = kd_make(2, dims, 1);
  kd_out(&k, DMLC_KOUT_INDEX, DMLC_DTYPE_U32, 1);
  kd_out(&k, DMLC_KOUT_ONEHOT, DMLC_DTYPE_U8, 1);
  const uint64_t at[][3] = {
      {5, 0, 0},                               /* block 0, row 0 */
      {(uint64_t)9 * cols + 700, 0, 0},        /* block 0, a later group */
      {(uint64_t)12 * cols + block + 3, 0, 0}, /* block 1, the last row */
      {(uint64_t)3 * cols + cols - 1, (uint64_t)3 * cols + 2 * block - 1, 0}, /* the tail */
      {(uint64_t)1 * cols + 16, (uint64_t)7 * cols + 16, (uint64_t)8 * cols + block + 40},
  };
  check_lone_nan_sets(&k, dt, at, sizeof at / sizeof at[0], "nan_mag");
  static const data_mode modes[] = {DATA_INFS, DATA_TIES, DATA_RARE_NAN, DATA_ALL_NAN,
                                    DATA_SPECIALS};
  const uint32_t split_dims[2] = {600, 37}, plane_dims[3] = {300, 6, 100};
  dmlc_kdesc split = kd_make(2, split_dims, 1), plane = kd_make(3, plane_dims, 5);
  kd_out(&split, DMLC_KOUT_INDEX, DMLC_DTYPE_U32, 1);
  kd_out(&plane, DMLC_KOUT_INDEX, DMLC_DTYPE_U32, 1);
  kd_reduce(&split, dt, DMLC_OP_ARGMAX, DMLC_DIRECTION_INCREASING);
  jitted j;
  compile(&split, &j, NULL);
  ck_assert_msg(j.info.has_finish, "600 rows: not split");
  release(&j);
  check_reductions_modes(k, dt, modes, 5);
  check_reductions_modes(split, dt, modes, 5);
  check_reductions_modes(plane, dt, modes, 5);
  vec_bytes = 32;
  kd_reduce(&k, dt, DMLC_OP_ARGMAX, DMLC_DIRECTION_INCREASING);
  ck_assert_msg(!ir_has(&k, "nan_mag"), "a fast pass under 32-byte vectors");
}
END_TEST

/* A block that saw a NaN makes the kernel's next NAN_EXACT_BLOCKS (64)
 * blocks skip the fast pass, in this call and the calls after it. One
 * compiled kernel of 9 blocks runs 16 times: NaNs, then data without, long
 * enough for the count to run out and the fast pass to come back, then
 * NaNs again, every block's result checked. */
START_TEST(test_column_f16_nan_decay) {
  vec_bytes = _i ? 32 : 16;
  const uint32_t rows = _i ? 25 : 13, cols = 8 * 16384 + 19; /* rows past the direct path's */
  const uint32_t dims[2] = {rows, cols};
  dmlc_kdesc k = kd_make(2, dims, 1);
  kd_out(&k, DMLC_KOUT_INDEX, DMLC_DTYPE_U32, 1);
  kd_reduce(&k, DMLC_DTYPE_F16, _i ? DMLC_OP_ARGMIN : DMLC_OP_ARGMAX, DMLC_DIRECTION_INCREASING);
  ck_assert_msg(ir_has(&k, "_nan_exact"), "no NaN count");
  lone_nans = 0;
  lone_nan_at[lone_nans++] = 7;                                      /* block 0 */
  lone_nan_at[lone_nans++] = (uint64_t)4 * cols + 5 * 16384 + 9;     /* block 5 */
  lone_nan_at[lone_nans++] = (uint64_t)(rows - 1) * cols + cols - 2; /* the last block */
  data_mode modes[16];
  for (int m = 0; m < 16; m++)
    modes[m] = m == 0 || m >= 13 ? DATA_LONE_NAN : DATA_TIES;
  check_kernel_modes(&k, modes, 16);
  lone_nans = 0;
  vec_bytes = 32;
}
END_TEST

/* [R, K, X] over R and X with a contiguous (K, X) plane and INDEX outputs:
 * the plane's points are the columns, a block whole K points, each K
 * point's columns merged by value, then flat index r * X + x. */
START_TEST(test_column_plane) {
  const dmlc_dtype dt = reduce_types[_i];
  static const struct {
    uint32_t dims[3];
    uint64_t stride0; /* when non-zero, read_strides[0] */
  } cases[] = {
      {{4, 5, 37}, 0},     /* few rows (no select chain), X not a multiple of the lanes */
      {{9, 70, 16}, 0},    /* X a multiple of the lanes of 4-byte types: aligned vectors */
      {{3, 40, 3}, 0},     /* X under a vector: scalar merges */
      {{300, 6, 100}, 0},  /* rows past the 8-bit index limit */
      {{256, 3, 40}, 0},   /* rows at the 8-bit index limit */
      {{600, 2, 9}, 0},    /* few columns, many rows: chunks whose partials a finish merges */
      {{2, 1100, 256}, 0}, /* a plane of 1 MiB of f32, in blocks of whole K points */
      {{5, 3, 1}, 0},      /* X of one */
      {{6, 10, 20}, 1},    /* broadcast over R (stride 0) */
      {{7, 9, 33}, 1000},  /* R rows padded apart */
  };
  for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
    dmlc_kdesc k = kd_make(3, cases[c].dims, 5);
    if (cases[c].stride0)
      k.read_strides[0] = cases[c].stride0 == 1 ? 0 : cases[c].stride0;
    kd_out(&k, DMLC_KOUT_INDEX, index_types[c % 4], 1 + c % 2);
    if (c % 3 == 0)
      kd_out(&k, DMLC_KOUT_INDEX, index_types[(c + 1) % 4], 1);
    kd_reduce(&k, dt, DMLC_OP_ARGMAX, DMLC_DIRECTION_INCREASING);
    ck_assert_msg(ec_column_matches(&k), "case %zu does not take the plane path", c);
    jitted j;
    compile(&k, &j, NULL);
    ck_assert_msg(j.info.has_finish == (c == 5), "case %zu: finish %d", c, (int)j.info.has_finish);
    release(&j);
    check_reductions(k, dt);
    /* f16 compares as integer keys: every bit pattern, both orders */
    static const data_mode f16_modes[] = {DATA_F16_BITS, DATA_TIES};
    if (dt == DMLC_DTYPE_F16)
      check_reductions_modes(k, dt, f16_modes, 2);
  }
  /* not the plane: a ONEHOT output, rows of X padded apart, X too long for
   * a block's accumulators */
  const uint32_t dims[3] = {4, 5, 37}, long_x[3] = {2, 3, 20000};
  dmlc_kdesc k = kd_make(3, dims, 5);
  kd_out(&k, DMLC_KOUT_INDEX, DMLC_DTYPE_U32, 1);
  kd_reduce(&k, dt, DMLC_OP_ARGMIN, DMLC_DIRECTION_INCREASING);
  dmlc_kdesc onehot = k, padded = k, wide = kd_make(3, long_x, 5);
  kd_out(&onehot, DMLC_KOUT_ONEHOT, DMLC_DTYPE_F32, 1);
  padded.read_strides[1] = 40;
  padded.read_strides[0] = 200;
  kd_out(&wide, DMLC_KOUT_INDEX, DMLC_DTYPE_U32, 1);
  kd_reduce(&wide, dt, DMLC_OP_ARGMIN, DMLC_DIRECTION_INCREASING);
  ck_assert(!ec_column_matches(&onehot) && ec_merged_rows_matches(&onehot));
  ck_assert(!ec_column_matches(&padded) && ec_merged_rows_matches(&padded));
  ck_assert(!ec_column_matches(&wide) && ec_merged_rows_matches(&wide));
}
END_TEST

/* ---- generic ---- */

START_TEST(test_generic) {
  const dmlc_dtype dt = reduce_types[_i];
  {
    const uint32_t dims[2] = {5, 37}; /* row with a strided read */
    dmlc_kdesc k = kd_make(2, dims, 2);
    k.read_strides[0] = 80;
    k.read_strides[1] = 2;
    kd_out(&k, DMLC_KOUT_INDEX, index_types[0], 1);
    kd_out(&k, DMLC_KOUT_ONEHOT, onehot_types[1], 1);
    check_reductions(k, dt);
  }
  {
    const uint32_t dims[3] = {4, 3, 5}; /* [R, K, R], transposed read */
    dmlc_kdesc k = kd_make(3, dims, 5);
    k.read_strides[0] = 1;
    k.read_strides[1] = 4;
    k.read_strides[2] = 12;
    kd_out(&k, DMLC_KOUT_INDEX, index_types[1], 2);
    kd_out(&k, DMLC_KOUT_ONEHOT, onehot_types[0], 1);
    kd_out(&k, DMLC_KOUT_CONSTANT, DMLC_DTYPE_I16, 1)->constant = -3;
    kd_out(&k, DMLC_KOUT_COPY, DMLC_DTYPE_F64, 1);
    check_reductions(k, dt);
  }
  {
    const uint32_t dims[4] = {3, 7, 2, 9}; /* [K, R, K, R] with broadcasts */
    dmlc_kdesc k = kd_make(4, dims, 10);
    k.read_strides[2] = 0;
    kd_out(&k, DMLC_KOUT_INDEX, index_types[2], 1);
    kd_out(&k, DMLC_KOUT_ONEHOT, onehot_types[2], 2);
    check_reductions(k, dt);
  }
  {
    const uint32_t dims[8] = {2, 3, 2, 3, 2, 3, 2, 2}; /* rank 8, alternating */
    dmlc_kdesc k = kd_make(8, dims, 0xaa);
    kd_out(&k, DMLC_KOUT_INDEX, index_types[3], 1);
    kd_out(&k, DMLC_KOUT_ONEHOT, onehot_types[3], 1);
    check_reductions(k, dt);
  }
  {
    const uint32_t dims[2] = {300, 7}; /* all reduced, column-major */
    dmlc_kdesc k = kd_make(2, dims, 3);
    k.read_strides[0] = 1;
    k.read_strides[1] = 300;
    kd_out(&k, DMLC_KOUT_INDEX, index_types[0], 1);
    check_reductions(k, dt);
  }
}
END_TEST

/* ---- short packed rows: groups of rows de-interleaved by shuffles ---- */

START_TEST(test_small_rows) {
  const dmlc_dtype dt = reduce_types[_i];
  static const uint32_t lens[] = {2, 3, 4, 5, 7, 8, 13, 16, 31, 32};
  for (size_t s = 0; s < sizeof lens / sizeof lens[0]; s++) {
    /* groups of 16-, 32- and 64-byte vectors (the index lanes' width
     * follows the values': emit_small.c's index_type) */
    vec_bytes = s % 3 == 0 ? 16 : s % 3 == 1 ? 32 : 64;
    /* whole groups, several tasks' worth for short rows, and rows left over */
    const uint32_t dims[2] = {s % 3 == 0 ? 5 : s == 8 ? 9001 : 37 + 97 * (uint32_t)s, lens[s]};
    dmlc_kdesc k = kd_make(2, dims, 2);
    kd_out(&k, DMLC_KOUT_INDEX, index_types[s % 4], 1 + s % 2);
    if (s % 4 == 1)
      kd_out(&k, DMLC_KOUT_INDEX, index_types[(s + 1) % 4], 1);
    if (s % 3 != 1) /* hardmax, packed */
      kd_out(&k, DMLC_KOUT_ONEHOT, onehot_types[s % 6], 1);
    kd_reduce(&k, dt, DMLC_OP_ARGMAX, DMLC_DIRECTION_INCREASING);
    ck_assert_msg(ec_small_rows_matches(&k), "length %u does not take the short-rows path",
                  lens[s]);
    /* f16 as i16 keys: 64-byte vectors, rows over 16, or soft_half */
    check_reductions_keys(k, dt);
    if (dt == DMLC_DTYPE_F16) { /* f16 widened in integer operations (no F16C) */
      soft_half = true;
      check_reductions_keys(k, dt);
      soft_half = false;
    }
  }
  if (dt == DMLC_DTYPE_F16) {
    /* keys take groups of 32 rows of 3 at 64-byte vectors (widened: 16),
     * a task 64 groups; at 32-byte vectors (widened) 8 */
    const uint32_t dims[2] = {10000, 3};
    for (int w = 0; w < 2; w++) {
      vec_bytes = w ? 32 : 64;
      dmlc_kdesc k = kd_make(2, dims, 2);
      kd_out(&k, DMLC_KOUT_INDEX, DMLC_DTYPE_U32, 1);
      kd_reduce(&k, dt, DMLC_OP_ARGMAX, DMLC_DIRECTION_INCREASING);
      jitted j;
      compile(&k, &j, NULL);
      const uint64_t want = (10000 + 64 * (w ? 8 : 32) - 1) / (64 * (w ? 8 : 32));
      ck_assert_msg(j.info.num_tasks == want,
                    "f16 [10000,3] at %u-byte vectors: %llu tasks, not %llu", vec_bytes,
                    (unsigned long long)j.info.num_tasks, (unsigned long long)want);
      release(&j);
    }
  }
  vec_bytes = 32;
}
END_TEST

/* 8-bit rows of two-pass lengths whose search looks at every vector
 * (emit_row.c's flat_search: up to 8 32-byte vectors), either side of the
 * limit, and the same rows with 16- and 64-byte vectors (an early exit);
 * from DRAM with 64-byte vectors (32 a load there) up to 16 vectors. */
START_TEST(test_row_flat_search) {
  static const dmlc_dtype types[2] = {DMLC_DTYPE_U8, DMLC_DTYPE_I8};
  static const uint32_t lens[] = {64, 65, 100, 255, 256, 257};
  static const uint32_t vecs[] = {32, 16, 64};
  for (size_t v = 0; v < sizeof vecs / sizeof vecs[0]; v++)
    for (size_t s = 0; s < sizeof lens / sizeof lens[0]; s++) {
      if (v && s % 2) /* the other widths: half the lengths */
        continue;
      vec_bytes = vecs[v];
      const uint32_t dims[2] = {5, lens[s]};
      dmlc_kdesc k = kd_make(2, dims, 2);
      kd_out(&k, DMLC_KOUT_INDEX, index_types[s % 4], 1);
      check_reductions(k, types[(v + s) % 2]);
    }
  /* 64-byte vectors narrowed to 32 (row_narrow_bytes) from DRAM: flat up
   * to 16 vectors (a cttz for each vector), an early exit past them */
  static const struct {
    uint32_t len;
    bool flat;
  } dram[] = {{300, true}, {512, true}, {513, false}, {600, false}};
  vec_bytes = 64;
  row_narrow = 32;
  stream_prefetch_max = 0;
  for (size_t c = 0; c < sizeof dram / sizeof dram[0]; c++) {
    const uint32_t dims[2] = {5, dram[c].len};
    dmlc_kdesc k = kd_make(2, dims, 2);
    kd_out(&k, DMLC_KOUT_INDEX, index_types[c % 4], 1);
    kd_reduce(&k, types[c % 2], c % 2 ? DMLC_OP_ARGMIN : DMLC_OP_ARGMAX, DMLC_DIRECTION_INCREASING);
    jitted j;
    char *ir = NULL;
    compile(&k, &j, &ir);
    release(&j);
    const unsigned cttz = count_in(ir, "@llvm.cttz.i32(", NULL);
    LLVMDisposeMessage(ir);
    ck_assert_msg((cttz >= dram[c].len / 32) == dram[c].flat, "u8 [5,%u] from DRAM: %u cttz",
                  dram[c].len, cttz);
    check_reductions(k, types[c % 2]);
  }
  default_target();
}
END_TEST

/* ---- row groups: short one-pass rows merged across lanes a group at a
 * time (emit_row.c's emit_row_groups) ---- */

/* Whether 16-bit rows of len (lanes a vector of vec bytes) go in groups:
 * under two vectors (one pass) always; of two-pass lengths with narrower
 * vectors from the caches, from DRAM up to 8 32-byte vectors or any
 * 16-byte ones; with 64-byte vectors past 8 vectors from DRAM up to 16,
 * else where the L2 is unknown or (f16 under four vectors) always. */
static bool groups_16bit(bool f16, uint32_t len, uint32_t lanes, uint32_t vec, uint64_t l2,
                         bool dram) {
  if (len < 2 * lanes)
    return true;
  if (vec < 64)
    return !dram || vec < 32 || len <= 8 * lanes;
  if (len > 8 * lanes)
    return dram && len <= 16 * lanes;
  return !l2 || (f16 && len < 4 * lanes);
}

START_TEST(test_row_groups) {
  const dmlc_dtype dt = reduce_types[_i];
  static const struct {
    uint32_t rows, len, vec;
    uint64_t l2; /* l2_bytes (0: unknown) */
    bool dram;   /* from DRAM (stream_prefetch_max_bytes 0) */
  } cases[] = {
      {37, 33, 32, 0, false},  /* four whole groups of 8 f32 rows, then 5 rows one at a time */
      {16, 48, 64, 0, false},  /* one group of 16 (64-byte vectors) */
      {19, 100, 16, 0, false}, /* groups of 4 (16-bit: 8, two-pass lengths at 16-byte vectors) */
      {24, 300, 32, 0, false}, /* longer rows: four chains a row */
      {9, 8, 16, 0, false},    /* rows of 8: short rows (emit_small.c), not groups */
      {70, 40, 32, 0, false},  /* 8-bit values: groups of 32 rows, then 6 */
      {40, 40, 64, 0, false},  /* 16-bit values: groups of 32 rows, then 8 */
      {50, 100, 32, 0, false}, /* 16-bit rows of two-pass length: groups of 16 (L2 unknown) */
      /* a read in the L2: f16 under four vectors in groups, i16 not */
      {40, 60, 32, 1 << 20, false},
      {21, 120, 32, 1 << 20, false}, /* the same, f16 of four vectors or more not either */
      {40, 300, 64, 1 << 20, true},  /* from DRAM with 64-byte vectors: up to 16 vectors */
      {40, 520, 64, 1 << 20, true},  /* past ROW_GROUP_MAX_LEN: not */
      /* narrower vectors: 16-bit rows of any length in the caches, from
       * DRAM up to 8 32-byte vectors (any 16-byte ones) */
      {40, 200, 32, 1 << 20, false},
      {40, 200, 32, 1 << 20, true},
      {40, 128, 32, 0, true},
      {40, 300, 16, 0, true},
      /* 8-bit rows of two-pass length on 16-byte vectors: up to 13 vectors */
      {40, 208, 16, 0, true},
      {40, 209, 16, 0, false},
      {33, 40, 16, 1 << 20, false},
  };
  for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
    vec_bytes = cases[c].vec;
    l2_bytes = cases[c].l2;
    stream_prefetch_max = cases[c].dram ? 0 : UINT64_MAX;
    const uint32_t rows = cases[c].rows, len = cases[c].len, vec = cases[c].vec;
    const uint32_t dims[2] = {rows, len};
    dmlc_kdesc k = kd_make(2, dims, 2);
    kd_out(&k, DMLC_KOUT_INDEX, index_types[c % 4], 1);
    if (c % 2) /* hardmax, packed */
      kd_out(&k, DMLC_KOUT_ONEHOT, onehot_types[c % 6], 1);
    kd_reduce(&k, dt, DMLC_OP_ARGMAX, DMLC_DIRECTION_INCREASING);
    const uint32_t size = dmlc_dtype_size(dt), lanes = vec / size;
    const bool bytes = size == 1;
    /* f32 rows (of 64 vectors or more: blocks), 8-bit rows under two
     * vectors, 16-bit rows as groups_16bit says: in groups; else a task a
     * row. No group is longer than 512 or wider than 32 rows. */
    const bool fits = len >= lanes && rows >= lanes && len <= 512 && lanes <= 32;
    bool grouped = dt == DMLC_DTYPE_F32 && len <= 512 && len < 64 * lanes;
    if (size == 2)
      grouped =
          fits && groups_16bit(dt == DMLC_DTYPE_F16, len, lanes, vec, cases[c].l2, cases[c].dram);
    if (bytes)
      grouped = fits && (len < 2 * lanes || (vec == 16 && len <= 13 * lanes));
    if (len > 32 && (grouped || size == 2 || dt == DMLC_DTYPE_F32 || (bytes && vec < 64))) {
      jitted j;
      compile(&k, &j, NULL);
      const uint64_t want = grouped ? (rows + lanes - 1) / lanes : rows;
      ck_assert_msg(j.info.num_tasks == want,
                    "%s [%u,%u], %u-byte vectors, L2 %llu: %llu tasks, not %llu",
                    dmlc_dtype_get(dt)->name, rows, len, vec, (unsigned long long)cases[c].l2,
                    (unsigned long long)j.info.num_tasks, (unsigned long long)want);
      release(&j);
    }
    check_reductions_keys(k, dt); /* f16 as keys */
  }
  vec_bytes = 32;
  l2_bytes = 0;
  stream_prefetch_max = UINT64_MAX;
}
END_TEST

/* Float row groups' fast pass (ordered compares and merges, the NaN check
 * per accumulator) on data without NaN, with one NaN or with infinities of
 * both signs, which take the exact pass again: f32 and f16 rows of one
 * straight-line chain to four, whole groups then single rows; results
 * stored as vectors (index outputs, contiguous) or row by row. */
START_TEST(test_row_groups_fast) {
  const dmlc_dtype dt = _i < 4 ? DMLC_DTYPE_F32 : DMLC_DTYPE_F16;
  static const uint32_t lens[] = {33, 80, 200, 500};
  static const data_mode modes[] = {DATA_TIES,      DATA_NEGATIVE, DATA_POSITIVE,
                                    DATA_ASCENDING, DATA_INFS,     DATA_RARE_NAN};
  const uint32_t dims[2] = {37, lens[_i % 4]};
  dmlc_kdesc k = kd_make(2, dims, 2);
  kd_out(&k, DMLC_KOUT_INDEX, index_types[_i % 4], 1);
  if (_i % 2) /* results stored row by row */
    kd_out(&k, DMLC_KOUT_ONEHOT, onehot_types[_i % 6], 1);
  else /* a second index: contiguous (a group's results stored as vectors) or every third element */
    kd_out(&k, DMLC_KOUT_INDEX, index_types[(_i + 1) % 4], _i % 4 == 2 ? 3 : 1);
  kd_reduce(&k, dt, DMLC_OP_ARGMAX, DMLC_DIRECTION_INCREASING);
  jitted j;
  compile(&k, &j, NULL);
  const uint32_t lanes = vec_bytes / dmlc_dtype_size(dt);
  ck_assert_msg(j.info.num_tasks == (37 + lanes - 1) / lanes, "%s [37,%u]: %llu tasks, not groups",
                dmlc_dtype_get(dt)->name, dims[1], (unsigned long long)j.info.num_tasks);
  release(&j);
  check_reductions_modes(k, dt, modes, sizeof modes / sizeof modes[0]);
}
END_TEST

/* The vector selects of a module's IR, other than f16 keys' (%key). */
static unsigned vector_selects(const char *ir) {
  unsigned n = 0;
  for (const char *p = ir; (p = strstr(p, " = select <")); p++) {
    const char *line = p;
    while (line > ir && line[-1] != '\n')
      line--;
    n += strncmp(line, "  %key", 6) != 0;
  }
  return n;
}

/* Row groups whose rows are packed as they load (packed_row: each vector
 * beside its positions, one integer max or min, no compare and blend)
 * where their merge packs: rows of up to four vectors (f16 two), 8-bit
 * rows of any length on 16-byte vectors (a loop of rows past four
 * vectors); longer 16-bit rows compare and blend. Whole
 * groups only (no row after them, so no single rows' code); answers on
 * every op, direction and data; f16 also with the host's PSIGNW (16 bytes
 * of it on 16-byte vectors). Rows of 16 bytes on 32-byte vectors go in
 * groups of 16-byte vectors (half_vector_rows). */
START_TEST(test_packed_rows) {
  static const struct {
    uint32_t len;
    dmlc_dtype dt;
    uint32_t vec, g; /* g: rows a group */
    bool packed;
  } cases[] = {
      {21, DMLC_DTYPE_U8, 16, 16, true},
      {200, DMLC_DTYPE_I8, 16, 16, true},
      {40, DMLC_DTYPE_U8, 32, 32, true},
      {32, DMLC_DTYPE_F16, 32, 16, true},
      {32, DMLC_DTYPE_I16, 16, 8, true},
      {17, DMLC_DTYPE_U16, 16, 8, true},
      {80, DMLC_DTYPE_U16, 32, 16, false},
      {40, DMLC_DTYPE_F16, 16, 8, false},
      {48, DMLC_DTYPE_F16, 32, 16, false}, /* f16: two vectors at most */
      {5, DMLC_DTYPE_F16, 16, 8, true},    /* short rows' groups: packed too */
      /* rows of 16 bytes on 32-byte vectors: groups of 16-byte ones */
      {16, DMLC_DTYPE_U8, 32, 16, true},
      {8, DMLC_DTYPE_F16, 32, 8, true},
  };
  for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
    vec_bytes = cases[c].vec;
    const uint32_t dims[2] = {2 * cases[c].g, cases[c].len};
    dmlc_kdesc k = kd_make(2, dims, 2);
    kd_out(&k, DMLC_KOUT_INDEX, c % 2 ? DMLC_DTYPE_U32 : DMLC_DTYPE_I64, 1);
    kd_reduce(&k, cases[c].dt, c % 3 ? DMLC_OP_ARGMIN : DMLC_OP_ARGMAX,
              c % 4 < 2 ? DMLC_DIRECTION_INCREASING : DMLC_DIRECTION_DECREASING);
    jitted j;
    char *ir = NULL;
    compile(&k, &j, &ir);
    const unsigned selects = vector_selects(ir);
    LLVMDisposeMessage(ir);
    ck_assert_msg(j.info.num_tasks == 2, "%s [%u,%u]: %llu tasks, not two groups",
                  dmlc_dtype_name(cases[c].dt), dims[0], dims[1],
                  (unsigned long long)j.info.num_tasks);
    release(&j);
    ck_assert_msg((selects == 0) == cases[c].packed, "%s [%u,%u], %u-byte vectors: %u selects",
                  dmlc_dtype_name(cases[c].dt), dims[0], dims[1], cases[c].vec, selects);
    check_reductions_keys(k, cases[c].dt);
    if (cases[c].dt == DMLC_DTYPE_F16 && host_psign_bytes) {
      /* f16 keys by PSIGNW, 16 bytes of it where the host has 32 */
      psign_bytes = host_psign_bytes;
      ck_assert_msg(cases[c].g * 2 != 16 || ir_has(&k, "llvm.x86.ssse3.psign.w.128"),
                    "f16 [%u,%u]: no 16-byte PSIGNW", dims[0], dims[1]);
      check_reductions_keys(k, cases[c].dt);
      psign_bytes = 0;
    }
  }
  vec_bytes = 32;
}
END_TEST

/* On a target of 64-byte vectors with row_narrow_bytes 32 (x86 with
 * AVX-512), packed rows of the spans ec_narrow_rows names, with index
 * outputs only, are emitted as for a 32-byte target: the same IR, byte for
 * byte, as vec_bytes 32 gives. Others (too short, too long for where the
 * read is, a one-hot output) keep 64-byte code, which differs. The
 * narrowed answers are checked. */
START_TEST(test_narrow_row_groups) {
  static const struct {
    dmlc_dtype dt;
    uint32_t len;
    bool dram, onehot, same;
    uint64_t l2; /* l2_bytes (0: unknown) */
  } cases[] = {
      {DMLC_DTYPE_U8, 21, false, false, true, 0},
      {DMLC_DTYPE_U8, 8, false, false, false, 0},
      {DMLC_DTYPE_U8, 200, true, false, true, 0},
      {DMLC_DTYPE_U8, 200, false, false, false, 0},
      {DMLC_DTYPE_F16, 24, false, false, true, 0},
      {DMLC_DTYPE_F16, 8, true, false, false, 0},
      {DMLC_DTYPE_I16, 100, true, false, true, 0},
      {DMLC_DTYPE_I16, 100, false, false, false, 0},
      {DMLC_DTYPE_F32, 24, false, false, true, 0},
      {DMLC_DTYPE_F32, 12, true, false, false, 0},
      {DMLC_DTYPE_F32, 48, false, false, true, 0},
      {DMLC_DTYPE_F32, 48, true, false, false, 0},
      {DMLC_DTYPE_I64, 16, true, false, true, 0},
      {DMLC_DTYPE_I64, 16, false, false, false, 0},
      {DMLC_DTYPE_U8, 21, false, true, false, 0},
      /* 8-bit rows past 64 by the read over the L2 (l2 bytes): past 127
       * beyond eight L2s, past 64 beyond two */
      {DMLC_DTYPE_U8, 100, false, false, true, 3000},
      {DMLC_DTYPE_I8, 100, false, false, false, 4000},
      {DMLC_DTYPE_U8, 200, false, false, true, 1500},
      {DMLC_DTYPE_U8, 200, false, false, false, 2000},
      {DMLC_DTYPE_U8, 127, false, false, true, 2000},
      {DMLC_DTYPE_U8, 128, false, false, false, 2000},
  };
  row_narrow = 32;
  for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
    const uint32_t dims[2] = {70, cases[c].len};
    dmlc_kdesc k = kd_make(2, dims, 2);
    kd_reduce(&k, cases[c].dt, c % 2 ? DMLC_OP_ARGMIN : DMLC_OP_ARGMAX,
              c % 4 < 2 ? DMLC_DIRECTION_INCREASING : DMLC_DIRECTION_DECREASING);
    kd_out(&k, DMLC_KOUT_INDEX, DMLC_DTYPE_U32, 1);
    if (cases[c].onehot)
      kd_out(&k, DMLC_KOUT_ONEHOT, DMLC_DTYPE_F32, 1);
    stream_prefetch_max = cases[c].dram ? 0 : UINT64_MAX;
    l2_bytes = cases[c].l2;
    char *ir[2] = {NULL, NULL};
    for (int w = 0; w < 2; w++) {
      vec_bytes = w ? 32 : 64;
      jitted j;
      compile(&k, &j, &ir[w]);
      release(&j);
    }
    const bool same = strcmp(ir[0], ir[1]) == 0;
    LLVMDisposeMessage(ir[0]);
    LLVMDisposeMessage(ir[1]);
    ck_assert_msg(same == cases[c].same, "%s [70,%u]%s%s: 64-byte IR %s the 32-byte one",
                  dmlc_dtype_name(cases[c].dt), cases[c].len, cases[c].dram ? " from DRAM" : "",
                  cases[c].onehot ? " with a one-hot" : "", same ? "is" : "is not");
    if (same) {
      vec_bytes = 64;
      check_three_modes(&k);
    }
  }
  default_target();
}
END_TEST

/* On a target of 64-byte vectors, f32 rows of 16 to 23 in the caches go
 * in row groups (emit_row.c's ec_rows_as_groups): 8 rows a task (32-byte
 * vectors, as every short f32 row there), where the de-interleaving (f32
 * [*,14], i32) takes other tasks. Rows of 16 from DRAM (narrowed to 32
 * bytes) go in groups too. The answers are checked. */
START_TEST(test_wide_f32_groups) {
  static const struct {
    dmlc_dtype dt;
    uint32_t len;
    bool dram, groups;
  } cases[] = {
      {DMLC_DTYPE_F32, 16, false, true},  {DMLC_DTYPE_F32, 20, false, true},
      {DMLC_DTYPE_F32, 23, false, true},  {DMLC_DTYPE_F32, 14, false, false},
      {DMLC_DTYPE_I32, 20, false, false}, {DMLC_DTYPE_F32, 16, true, true},
      {DMLC_DTYPE_F32, 20, true, true},   {DMLC_DTYPE_F32, 12, true, false},
  };
  vec_bytes = 64;
  row_narrow = 32;
  for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
    const uint32_t dims[2] = {800, cases[c].len};
    dmlc_kdesc k = kd_make(2, dims, 2);
    kd_reduce(&k, cases[c].dt, c % 2 ? DMLC_OP_ARGMIN : DMLC_OP_ARGMAX, DMLC_DIRECTION_INCREASING);
    kd_out(&k, DMLC_KOUT_INDEX, DMLC_DTYPE_U32, 1);
    stream_prefetch_max = cases[c].dram ? 0 : UINT64_MAX;
    jitted j;
    compile(&k, &j, NULL);
    const uint64_t tasks = j.info.num_tasks;
    release(&j);
    ck_assert_msg((tasks == 800 / 8) == cases[c].groups, "%s [800,%u]%s: %llu tasks",
                  dmlc_dtype_name(cases[c].dt), cases[c].len, cases[c].dram ? " from DRAM" : "",
                  (unsigned long long)tasks);
    check_three_modes(&k);
  }
  default_target();
}
END_TEST

/* The data modes of the short rows' tests (test_byte_rows,
 * test_lane_rows): f16 takes all seven (its raw bit patterns too), other
 * floats the first six, integers the first three. */
static const data_mode short_row_modes[] = {DATA_TIES,    DATA_SPECIALS, DATA_RANDOM,
                                            DATA_ALL_NAN, DATA_RARE_NAN, DATA_ALL_NEG_INF,
                                            DATA_F16_BITS};
static int short_row_mode_count(dmlc_dtype dt) {
  return dt == DMLC_DTYPE_F16 ? 7 : dmlc_dtype_is_float(dt) ? 6 : 3;
}

/* k ([rows, len], its outputs set) reducing dt in every (op, direction):
 * asserts that its optimized IR holds needle (dec_needle for DECREASING)
 * exactly when `taken` (the path named what), and checks its answers on
 * the short rows' data modes (once, for ARGMAX INCREASING, where not
 * taken). */
static void check_short_rows(dmlc_kdesc *k, dmlc_dtype dt, const char *needle,
                             const char *dec_needle, bool taken, const char *what) {
  for (int v = 0; v < 4; v++) {
    const bool dec = v & 2;
    kd_reduce(k, dt, v & 1 ? DMLC_OP_ARGMIN : DMLC_OP_ARGMAX,
              dec ? DMLC_DIRECTION_DECREASING : DMLC_DIRECTION_INCREASING);
    const bool has = ir_has(k, dec ? dec_needle : needle);
    ck_assert_msg(has == taken, "%s [%u,%u] %d: %s %d", dmlc_dtype_name(dt), (unsigned)k->dims[0],
                  (unsigned)k->dims[1], v, what, has);
    if (taken || v == 0)
      check_kernel_modes(k, short_row_modes, short_row_mode_count(dt));
  }
}

/* Packed rows by permutes (emit_bytes.c: 8-bit rows of 9 to 25, 16-bit of
 * 9 to 16, f16 of 10 to 25, 32-bit of 8 to 25, f32 of 6 to 25) on a
 * 64-byte target with byte_permutes: 8-, 16- and 32-bit integers, f16 and f32,
 * every (op, direction) on ties, extremes and random values (f32 also
 * with NaNs everywhere, rare NaNs and infinities: a group with a NaN
 * takes the row code's answers), rows a multiple of the group (64, 32,
 * 16) or not (the rest row by row, in the last task), one task or
 * several, the read ending at a PROT_NONE page (a group that loads past
 * its rows faults), u32, i32 and i64 indices, strided indices. The path
 * shows as its count of each row's trailing (leading) zeros, 16 rows a
 * vector; not taken for rows of 8, 26 (16-bit: 17, f16 9, f32 5, i32 7),
 * f64, fewer rows than a group, a scaled read, or without byte_permutes
 * or 64-byte vectors. */
START_TEST(test_byte_rows) {
  static const struct {
    dmlc_dtype dt, out;
    uint32_t rows, len, scale;
    bool bytes, permutes;
    uint32_t vec;
  } cases[] = {
      {DMLC_DTYPE_U8, DMLC_DTYPE_U32, 64, 9, 1, true, true, 64},
      {DMLC_DTYPE_I8, DMLC_DTYPE_I64, 4096 * 2 + 64 * 5 + 37, 10, 1, true, true, 64},
      {DMLC_DTYPE_U8, DMLC_DTYPE_U32, 200, 12, 1, true, true, 64},
      {DMLC_DTYPE_I8, DMLC_DTYPE_U32, 130, 15, 2, true, true, 64},
      {DMLC_DTYPE_U8, DMLC_DTYPE_U32, 4096 + 64 * 2, 16, 1, true, true, 64},
      {DMLC_DTYPE_U8, DMLC_DTYPE_I64, 321, 17, 1, true, true, 64},
      {DMLC_DTYPE_U8, DMLC_DTYPE_U32, 4096 * 3 + 1, 21, 1, true, true, 64},
      {DMLC_DTYPE_I8, DMLC_DTYPE_U32, 640, 24, 1, true, true, 64},
      {DMLC_DTYPE_U8, DMLC_DTYPE_I32, 4096 + 63, 25, 3, true, true, 64},
      {DMLC_DTYPE_I16, DMLC_DTYPE_U32, 32, 9, 1, true, true, 64},
      {DMLC_DTYPE_U16, DMLC_DTYPE_I64, 2048 * 2 + 32 * 3 + 5, 12, 1, true, true, 64},
      {DMLC_DTYPE_U16, DMLC_DTYPE_U32, 100, 16, 2, true, true, 64},
      {DMLC_DTYPE_I32, DMLC_DTYPE_U32, 1024 + 16 * 3 + 7, 10, 1, true, true, 64},
      {DMLC_DTYPE_U32, DMLC_DTYPE_I64, 50, 17, 1, true, true, 64},
      {DMLC_DTYPE_I32, DMLC_DTYPE_U32, 16, 25, 1, true, true, 64},
      {DMLC_DTYPE_F32, DMLC_DTYPE_U32, 1024 * 2 + 16 * 9 + 3, 10, 1, true, true, 64},
      {DMLC_DTYPE_F32, DMLC_DTYPE_I64, 97, 13, 2, true, true, 64},
      {DMLC_DTYPE_F32, DMLC_DTYPE_U32, 160, 16, 1, true, true, 64},
      {DMLC_DTYPE_F32, DMLC_DTYPE_U32, 48, 21, 1, true, true, 64},
      {DMLC_DTYPE_F32, DMLC_DTYPE_U32, 1024 + 16 * 2 + 9, 6, 1, true, true, 64},
      {DMLC_DTYPE_U32, DMLC_DTYPE_U32, 64, 8, 1, true, true, 64},
      {DMLC_DTYPE_F16, DMLC_DTYPE_U32, 2048 + 32 * 3 + 1, 10, 1, true, true, 64},
      {DMLC_DTYPE_F16, DMLC_DTYPE_I64, 70, 25, 2, true, true, 64},
      {DMLC_DTYPE_F16, DMLC_DTYPE_U32, 64, 9, 1, false, true, 64},
      {DMLC_DTYPE_F32, DMLC_DTYPE_U32, 640, 5, 1, false, true, 64},
      {DMLC_DTYPE_I32, DMLC_DTYPE_U32, 640, 7, 1, false, true, 64},
      {DMLC_DTYPE_U8, DMLC_DTYPE_U32, 640, 8, 1, false, true, 64},
      {DMLC_DTYPE_U8, DMLC_DTYPE_U32, 640, 26, 1, false, true, 64},
      {DMLC_DTYPE_U16, DMLC_DTYPE_U32, 640, 17, 1, false, true, 64},
      {DMLC_DTYPE_F64, DMLC_DTYPE_U32, 640, 12, 1, false, true, 64},
      {DMLC_DTYPE_U8, DMLC_DTYPE_U32, 63, 21, 1, false, true, 64},
      {DMLC_DTYPE_F32, DMLC_DTYPE_U32, 15, 12, 1, false, true, 64},
      {DMLC_DTYPE_U8, DMLC_DTYPE_U32, 640, 21, 1, false, false, 64},
      {DMLC_DTYPE_F32, DMLC_DTYPE_U32, 640, 12, 1, false, true, 32},
  };
  for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
    const uint32_t dims[2] = {cases[c].rows, cases[c].len};
    dmlc_kdesc k = kd_make(2, dims, 2);
    kd_out(&k, DMLC_KOUT_INDEX, cases[c].out, cases[c].scale);
    vec_bytes = cases[c].vec;
    byte_permutes = cases[c].permutes;
    row_narrow = 32;
    check_short_rows(&k, cases[c].dt, "@llvm.cttz.v16i32", "@llvm.ctlz.v16i32", cases[c].bytes,
                     "byte rows");
  }
  /* a scaled read (every other element) keeps the short rows' path */
  const uint32_t dims[2] = {640, 12};
  dmlc_kdesc k = kd_make(2, dims, 2);
  k.read_strides[0] = 24;
  k.read_strides[1] = 2;
  kd_out(&k, DMLC_KOUT_INDEX, DMLC_DTYPE_U32, 1);
  kd_reduce(&k, DMLC_DTYPE_F32, DMLC_OP_ARGMAX, DMLC_DIRECTION_INCREASING);
  vec_bytes = 64;
  byte_permutes = true;
  ck_assert_msg(!ir_has(&k, "@llvm.cttz.v16i32"), "a scaled read by permutes");
  check_three_modes(&k);
  default_target();
}
END_TEST

/* Short rows in 16-byte lanes (emit_lanes.c: u8 and i8 rows of 8 to 32,
 * 16-byte windows from 16, 8-byte ones below; i16 and u16 rows of 8 to
 * 16 and f16 rows of 8, windows of 8 elements; index outputs) on a target
 * with lane_rows and 32-byte vectors or wider: every (op, direction) on
 * ties, extremes and random values (f16 also NaNs everywhere, rare NaNs,
 * infinities and raw bit patterns), rows a multiple of the group (32) or
 * not (the rest row by row, in the last task), one task or several (2048
 * rows a task), the read ending at a PROT_NONE page (a group that loads
 * past its rows faults), u32, i32 and i64 indices, strided indices,
 * non-temporal stores at an aligned and an unaligned output. With byte_permutes (and 64-byte
 * vectors) 8-bit rows of 16 or more, up to 25 only from DRAM, and 16-bit rows of 8. The path shows
 * as its named key mask; not taken for 8-bit rows of 7 or 33, 16-bit rows of 17 (f16 9, and f16 on
 * 64-byte vectors), 32-bit rows, fewer than 32 rows, 16-byte vectors, a scaled read, or without
 * lane_rows. */
START_TEST(test_lane_rows) {
  static const struct {
    dmlc_dtype dt, out;
    uint32_t rows, len, scale, vec;
    bool permutes, dram, lanes;
  } cases[] = {
      {DMLC_DTYPE_U8, DMLC_DTYPE_U32, 32, 16, 1, 32, false, false, true},
      {DMLC_DTYPE_I8, DMLC_DTYPE_I64, 2048 * 2 + 32 * 5 + 7, 17, 1, 32, false, false, true},
      {DMLC_DTYPE_U8, DMLC_DTYPE_U32, 2048 + 31, 21, 1, 32, false, true, true},
      {DMLC_DTYPE_I8, DMLC_DTYPE_U32, 100, 24, 2, 32, false, false, true},
      {DMLC_DTYPE_U8, DMLC_DTYPE_I32, 2048 * 3, 25, 1, 32, false, false, true},
      {DMLC_DTYPE_U8, DMLC_DTYPE_U32, 333, 31, 3, 32, false, false, true},
      {DMLC_DTYPE_I8, DMLC_DTYPE_U32, 64, 32, 1, 32, false, true, true},
      {DMLC_DTYPE_U8, DMLC_DTYPE_U32, 2048 + 96, 21, 1, 64, false, false, true},
      {DMLC_DTYPE_U8, DMLC_DTYPE_U32, 200, 21, 1, 64, true, true, true},
      {DMLC_DTYPE_I8, DMLC_DTYPE_I64, 200, 28, 1, 64, true, false, true},
      {DMLC_DTYPE_U8, DMLC_DTYPE_U32, 200, 21, 1, 64, true, false, false},
      {DMLC_DTYPE_U8, DMLC_DTYPE_U32, 32 * 7 + 3, 8, 1, 32, false, false, true},
      {DMLC_DTYPE_I8, DMLC_DTYPE_I64, 2048 + 40, 9, 1, 32, false, true, true},
      {DMLC_DTYPE_U8, DMLC_DTYPE_U32, 100, 12, 2, 32, false, false, true},
      {DMLC_DTYPE_I8, DMLC_DTYPE_U32, 64, 15, 1, 32, false, true, true},
      {DMLC_DTYPE_U8, DMLC_DTYPE_I32, 2048 * 2, 11, 1, 64, false, false, true},
      {DMLC_DTYPE_U8, DMLC_DTYPE_U32, 200, 12, 1, 64, true, true, false},
      {DMLC_DTYPE_U8, DMLC_DTYPE_U32, 200, 7, 1, 32, false, false, false},
      {DMLC_DTYPE_U8, DMLC_DTYPE_U32, 200, 33, 1, 32, false, false, false},
      {DMLC_DTYPE_U16, DMLC_DTYPE_U32, 32 * 3 + 5, 8, 1, 32, false, false, true},
      {DMLC_DTYPE_I16, DMLC_DTYPE_I64, 2048 + 33, 12, 1, 32, false, true, true},
      {DMLC_DTYPE_U16, DMLC_DTYPE_U32, 100, 16, 2, 32, false, false, true},
      {DMLC_DTYPE_I16, DMLC_DTYPE_U32, 2048 * 2, 9, 1, 64, false, false, true},
      {DMLC_DTYPE_U16, DMLC_DTYPE_U32, 200, 8, 1, 64, true, true, true},
      {DMLC_DTYPE_F16, DMLC_DTYPE_U32, 2048 + 7, 8, 1, 32, false, true, true},
      {DMLC_DTYPE_F16, DMLC_DTYPE_I64, 64, 8, 3, 32, false, false, true},
      {DMLC_DTYPE_U16, DMLC_DTYPE_U32, 200, 12, 1, 64, true, true, false},
      {DMLC_DTYPE_U16, DMLC_DTYPE_U32, 200, 17, 1, 32, false, false, false},
      {DMLC_DTYPE_F16, DMLC_DTYPE_U32, 200, 9, 1, 32, false, false, false},
      {DMLC_DTYPE_F16, DMLC_DTYPE_U32, 200, 8, 1, 64, false, false, false},
      {DMLC_DTYPE_I32, DMLC_DTYPE_U32, 200, 8, 1, 32, false, false, false},
      {DMLC_DTYPE_U8, DMLC_DTYPE_U32, 31, 21, 1, 32, false, false, false},
      {DMLC_DTYPE_U8, DMLC_DTYPE_U32, 200, 21, 1, 16, false, false, false},
  };
  for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
    const uint32_t dims[2] = {cases[c].rows, cases[c].len};
    dmlc_kdesc k = kd_make(2, dims, 2);
    kd_out(&k, DMLC_KOUT_INDEX, cases[c].out, cases[c].scale);
    vec_bytes = cases[c].vec;
    byte_permutes = cases[c].permutes;
    lane_rows = true;
    row_narrow = 32;
    stream_prefetch_max = cases[c].dram ? 0 : UINT64_MAX;
    /* non-temporal index stores, at an aligned output and (every other
     * case) 4 bytes past one */
    nt_min_bytes = c % 3 == 0 ? 1 : 0;
    out_shift = c % 6 == 3 ? 4 : 0;
    check_short_rows(&k, cases[c].dt, "lane_keys", "lane_keys", cases[c].lanes, "lane rows");
  }
  /* without lane_rows, and a scaled read (every other element) */
  const uint32_t dims[2] = {640, 21};
  dmlc_kdesc k = kd_make(2, dims, 2);
  kd_out(&k, DMLC_KOUT_INDEX, DMLC_DTYPE_U32, 1);
  kd_reduce(&k, DMLC_DTYPE_U8, DMLC_OP_ARGMAX, DMLC_DIRECTION_INCREASING);
  default_target();
  ck_assert_msg(!ir_has(&k, "lane_keys"), "lane rows without lane_rows");
  lane_rows = true;
  k.read_strides[0] = 42;
  k.read_strides[1] = 2;
  ck_assert_msg(!ir_has(&k, "lane_keys"), "a scaled read in lanes");
  check_three_modes(&k);
  default_target();
}
END_TEST

/* Packed rows of up to 32 (which the short rows' path, emit_small.c, also
 * takes) in row groups: 8- and 16-bit rows from half a vector long (short
 * groups: each row one vector loaded from its start, over the next rows'
 * elements, left out of its merge; a group is whole only where a row
 * follows it, and the read ends at a PROT_NONE page, so a vector past it
 * faults), 32- and 64-bit rows over 16 elements, 8-bit rows of two
 * 16-byte vectors (two-pass rows, which go in groups on 16-byte vectors),
 * 8- and 16-bit rows of 16 bytes on 32-byte vectors in groups of 16-byte
 * ones; not 32- and 64-bit rows of 16. Results as vectors (index outputs,
 * contiguous) or row by row (a strided second index). */
START_TEST(test_short_row_groups) {
  static const data_mode modes[] = {DATA_RANDOM,   DATA_TIES,        DATA_SPECIALS, DATA_ALL_NAN,
                                    DATA_RARE_NAN, DATA_ALL_NEG_INF, DATA_F16_BITS};
  const dmlc_dtype dt = reduce_types[_i];
  const uint32_t size = dmlc_dtype_size(dt);
  const bool bits = size <= 2;
  const int nmodes = (int)(sizeof modes / sizeof modes[0]) - (dt != DMLC_DTYPE_F16);
  for (uint32_t c = 0; c < 12; c++) {
    vec_bytes = c < 6 ? 16 : 32;
    const uint32_t vec_lanes = vec_bytes / size;
    static const uint32_t wide[6] = {16, 17, 24, 32, 8, 20};
    /* a quarter vector: short groups of 16-byte vectors where the vectors
     * are 32 bytes, else the short rows' path */
    const uint32_t bit_lens[6] = {vec_lanes / 2, vec_lanes / 2 + 1, vec_lanes - 1, vec_lanes, 32,
                                  vec_lanes / 4};
    const uint32_t len = bits ? bit_lens[c % 6] : wide[c % 6];
    if (len < 2)
      continue;
    const bool grouped =
        bits ? 2 * len * size >= 16 && (len < 2 * vec_lanes || size == 2 || vec_bytes == 16)
             : len > 16;
    /* groups of 16-byte vectors for rows under half a 32-byte vector, or
     * of 16 bytes (half_vector_rows: a row a vector) */
    const bool narrow = 2 * len < vec_lanes || (vec_bytes == 32 && len * size == 16);
    const uint32_t lanes = bits && narrow ? 16 / size : vec_lanes;
    /* three groups' rows: for short rows the third row by row; or two more
     * rows */
    const uint32_t dims[2] = {3 * vec_lanes + (c % 2 ? 2 : 0), len};
    dmlc_kdesc k = kd_make(2, dims, 2);
    kd_out(&k, DMLC_KOUT_INDEX, index_types[c % 4], 1);
    if (c % 3 == 1)
      kd_out(&k, DMLC_KOUT_INDEX, index_types[(c + 1) % 4], 2);
    kd_reduce(&k, dt, DMLC_OP_ARGMAX, DMLC_DIRECTION_INCREASING);
    jitted j;
    compile(&k, &j, NULL);
    const uint64_t groups = (dims[0] - (len < lanes)) / lanes;
    const uint64_t want = groups + (groups * lanes < dims[0]);
    ck_assert_msg((j.info.num_tasks == want) == grouped,
                  "%s [%u,%u] at %u-byte vectors: %llu tasks (groups: %llu)",
                  dmlc_dtype_get(dt)->name, dims[0], len, vec_bytes,
                  (unsigned long long)j.info.num_tasks, (unsigned long long)want);
    release(&j);
    /* a group's index vectors of 64 bytes or more: non-temporal where the
     * output is aligned for them (out_shift 4: not) */
    const bool nt = c % 3 != 1 && lanes * dmlc_dtype_size(index_types[c % 4]) >= 64;
    ck_assert_msg(!grouped || nontemporal_kernel(&k, 1) == nt,
                  "%s [%u,%u] at %u-byte vectors: non-temporal %d", dmlc_dtype_get(dt)->name,
                  dims[0], len, vec_bytes, !nt);
    check_reductions_modes(k, dt, modes, nmodes);
    nt_min_bytes = 1;
    out_shift = c % 4 == 0 ? 4 : 0;
    check_reductions_modes(k, dt, modes, 2);
    nt_min_bytes = 0;
    out_shift = 0;
  }
  vec_bytes = 32;
}
END_TEST

/* ---- merged rows: the innermost dim reduced and contiguous, other
 * reduced dims further out, or rows that do not merge ---- */

START_TEST(test_merged_rows) {
  const dmlc_dtype dt = reduce_types[_i];
  static const struct {
    uint32_t rank, dims[8], mask;
    uint64_t stride0, stride1; /* when non-zero, read_strides[0] / [1] */
  } cases[] = {
      {3, {4, 5, 37}, 5, 0, 0},                  /* [R, K, R]: blocks of kept points */
      {3, {3, 70, 9}, 5, 0, 0},                  /* blocks of 4, the last one short */
      {3, {6, 10, 1000}, 5, 10100, 1010},        /* long rows: vector code, split tails */
      {4, {3, 7, 2, 9}, 10, 0, 0},               /* [K, R, K, R] */
      {3, {3, 5, 40}, 6, 0, 45},                 /* [K, R, R], rows padded apart */
      {3, {3, 4, 33}, 4, 160, 0},                /* [K, K, R], kept dims that do not merge */
      {2, {7, 50}, 3, 64, 0},                    /* [R, R] padded: every element, one point */
      {8, {2, 3, 2, 3, 2, 3, 2, 2}, 0xaa, 0, 0}, /* rank 8, alternating */
      {3, {5, 3, 17}, 5, 0, 0},                  /* broadcast kept dim (below) */
      {2, {40, 50}, 3, 64, 0},    /* one point, rows split in 14 chunks of 3 (a finish merges) */
      {3, {2, 30, 20}, 6, 0, 24}, /* two points, 8 chunks each, padded */
      {2, {40, 130}, 3, 136, 0},  /* one point split, rows of 2+ vectors of bytes and a tail */
      {3, {5, 9, 200}, 5, 0, 0},  /* [R, K, R], rows of several vectors of any type */
      {3, {4, 3, 64}, 6, 0, 70},  /* [K, R, R], rows of exactly a vector of bytes */
  };
  for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
    dmlc_kdesc k = kd_make(cases[c].rank, cases[c].dims, cases[c].mask);
    if (cases[c].stride0)
      k.read_strides[0] = cases[c].stride0;
    if (cases[c].stride1)
      k.read_strides[1] = cases[c].stride1;
    if (c == 8)
      k.read_strides[1] = 0;
    kd_out(&k, DMLC_KOUT_INDEX, index_types[c % 4], 1 + c % 2);
    if (c % 3 == 0)
      kd_out(&k, DMLC_KOUT_INDEX, index_types[(c + 1) % 4], 1);
    if (c % 3 != 2) /* hardmax: a full-size output, packed or strided */
      kd_out(&k, DMLC_KOUT_ONEHOT, onehot_types[c % 6], 1 + c % 2);
    kd_reduce(&k, dt, DMLC_OP_ARGMAX, DMLC_DIRECTION_INCREASING);
    ck_assert_msg(ec_merged_rows_matches(&k) && !ec_row_matches(&k) && !ec_column_matches(&k),
                  "case %zu does not take the merged-rows path", c);
    if (c >= 9 && c <= 11) {
      jitted j;
      compile(&k, &j, NULL);
      ck_assert_msg(j.info.has_finish && j.info.scratch_bytes > 0 && j.info.num_tasks >= 14,
                    "case %zu is not split", c);
      release(&j);
    }
    check_reductions(k, dt);
  }
}
END_TEST

/* Wide blocks: [R, K, R] read from DRAM (stream_prefetch_max_bytes 0 here),
 * rows of 1 KiB or more; each kept point one compact accumulator, the
 * outer rows split into chunks that a finish merges. */
START_TEST(test_merged_rows_wide) {
  const dmlc_dtype dt = reduce_types[_i];
  static const struct {
    uint32_t rank, dims[4], mask;
  } cases[] = {
      {3, {6, 10, 1000}, 5},   /* every point in one block, 6 chunks of one row */
      {3, {7, 3, 1100}, 5},    /* rows of 1 KiB of bytes, and a tail (padded apart below) */
      {3, {5, 700, 260}, 5},   /* blocks of 512 and 188 points, 5 chunks each */
      {4, {3, 4, 6, 1030}, 9}, /* [R, K, K, R]: two kept dims */
  };
  stream_prefetch_max = 0;
  for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
    dmlc_kdesc k = kd_make(cases[c].rank, cases[c].dims, cases[c].mask | 1u << (cases[c].rank - 1));
    if (c == 1) { /* with no ONEHOT output, a contiguous plane would take the column code */
      k.read_strides[1] = 1104;
      k.read_strides[0] = 3 * 1104;
    }
    kd_out(&k, DMLC_KOUT_INDEX, index_types[c % 4], 1 + c % 2);
    if (c % 2 == 0) /* hardmax: a full-size output */
      kd_out(&k, DMLC_KOUT_ONEHOT, onehot_types[c % 6], 1);
    kd_reduce(&k, dt, DMLC_OP_ARGMAX, DMLC_DIRECTION_INCREASING);
    ck_assert_msg(ec_merged_rows_matches(&k) && !ec_row_matches(&k) && !ec_column_matches(&k),
                  "case %zu does not take the merged-rows path", c);
    const uint32_t last = cases[c].rank - 1;
    const uint64_t row_bytes = (uint64_t)cases[c].dims[last] * dmlc_dtype_size(k.read_dtype);
    uint64_t kept_points = 1, outer_points = 1;
    for (uint32_t d = 0; d < last; d++)
      *(cases[c].mask >> d & 1 ? &outer_points : &kept_points) *= cases[c].dims[d];
    jitted j;
    compile(&k, &j, NULL);
    /* wide (rows of 1 KiB or more): blocks of up to 512 points, their
     * outer rows split into chunks (at most one a row) that a finish
     * merges */
    const uint64_t most = (kept_points + 511) / 512 * outer_points;
    ck_assert_msg(row_bytes < 1024 || (j.info.has_finish && j.info.num_tasks <= most),
                  "case %zu: rows of %llu B, %llu tasks (wide: %llu at most), finish %d", c,
                  (unsigned long long)row_bytes, (unsigned long long)j.info.num_tasks,
                  (unsigned long long)most, (int)j.info.has_finish);
    release(&j);
    check_reductions(k, dt);
    /* f32 also on data with a lone extreme, ascending ties, all
     * negative, a rare NaN, infinities of both signs */
    static const data_mode more[] = {DATA_SPARSE, DATA_ASCENDING, DATA_NEGATIVE, DATA_RARE_NAN,
                                     DATA_INFS};
    if (dt == DMLC_DTYPE_F32)
      check_reductions_modes(k, dt, more, 5);
  }
  stream_prefetch_max = UINT64_MAX;
}
END_TEST

/* ---- merged columns: the innermost dim kept and contiguous, reduced dims
 * the column code does not take ---- */

/* Case c's k takes the merged-columns path (no other path matches). */
static void check_merged_columns_path(const dmlc_kdesc *k, size_t c) {
  ck_assert_msg(ec_merged_columns_matches(k) && !ec_row_matches(k) && !ec_column_matches(k) &&
                    !ec_merged_rows_matches(k),
                "case %zu does not take the merged-columns path", c);
}

START_TEST(test_merged_columns) {
  const dmlc_dtype dt = reduce_types[_i];
  static const struct {
    uint32_t rank, dims[8], mask;
    uint64_t stride0, stride1; /* when non-zero, read_strides[0] / [1] */
  } cases[] = {
      {4, {3, 4, 5, 37}, 5, 0, 0},               /* [R, K, R, K] (axes {0, 2} of NHWC) */
      {4, {2, 3, 7, 70}, 5, 0, 0},               /* wider rows: vectors and a tail */
      {3, {5, 4, 40}, 3, 0, 48},                 /* [R, R, K], rows padded apart */
      {4, {3, 2, 5, 19}, 4, 0, 100},             /* [K, K, R, K], kept dims that do not merge */
      {8, {2, 3, 2, 3, 2, 3, 2, 9}, 0x55, 0, 0}, /* rank 8, alternating */
      {4, {6, 2, 3, 2100}, 5, 0, 0},             /* blocks of columns, the last one short */
      {4, {3, 5, 4, 17}, 5, 0, 0},               /* broadcast reduced dim (below) */
      /* few blocks, many rows: chunks of rows, a finish merges (the last
       * chunk shorter) */
      {3, {40, 20, 24}, 3, 0, 0},
      {4, {2, 30, 20, 10}, 6, 0, 0},
  };
  for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
    dmlc_kdesc k = kd_make(cases[c].rank, cases[c].dims, cases[c].mask);
    if (cases[c].stride0)
      k.read_strides[0] = cases[c].stride0;
    if (cases[c].stride1)
      k.read_strides[1] = cases[c].stride1;
    if (c == 6)
      k.read_strides[2] = 0;
    kd_out(&k, DMLC_KOUT_INDEX, index_types[c % 4], 1 + c % 2);
    if (c % 3 != 2)
      kd_out(&k, DMLC_KOUT_ONEHOT, onehot_types[c % 6], 1 + c % 2);
    if (c % 3 == 0)
      kd_out(&k, DMLC_KOUT_INDEX, index_types[(c + 1) % 4], 1);
    kd_reduce(&k, dt, DMLC_OP_ARGMAX, DMLC_DIRECTION_INCREASING);
    check_merged_columns_path(&k, c);
    if (c >= 7) {
      jitted j;
      compile(&k, &j, NULL);
      ck_assert_msg(j.info.has_finish && j.info.scratch_bytes > 0 && j.info.num_tasks >= 3,
                    "case %zu is not split", c);
      release(&j);
    }
    check_reductions(k, dt);
  }
}
END_TEST

/* Merged columns whose kept dims lie between reduced ones, INDEX outputs
 * only: every row of a chunk of dim 0 read in storage order into its kept
 * point's accumulators (emit_merge.c's walk), split into min(dim 0, 16)
 * chunks (the last one shorter where they do not divide it) or, with a
 * split_min above the read, one task. Runs (columns within 4 vectors of
 * 32 bytes) walk from DRAM only. */
START_TEST(test_merged_columns_walk) {
  const dmlc_dtype dt = reduce_types[_i];
  static const struct {
    uint32_t rank, dims[5], mask;
    uint64_t tasks;
    bool no_split;
  } cases[] = {
      {4, {3, 4, 5, 37}, 5, 3, false},      /* [R, K, R, K] */
      {4, {17, 2, 6, 40}, 5, 9, false},     /* chunks of 2, the last of 1 */
      {4, {40, 3, 2, 70}, 5, 14, false},    /* vectors and a tail; chunks of 3 */
      {5, {5, 3, 4, 2, 33}, 5, 5, false},   /* two kept dims around a reduced one */
      {4, {6, 3, 7, 19}, 5, 1, true},       /* one task (runs: from DRAM) */
      {5, {4, 2, 3, 5, 24}, 0xb, 4, false}, /* [R, R, K, R, K] (runs: from DRAM) */
  };
  for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
    dmlc_kdesc k = kd_make(cases[c].rank, cases[c].dims, cases[c].mask);
    kd_out(&k, DMLC_KOUT_INDEX, index_types[c % 4], 1 + c % 2);
    if (c % 2 == 0)
      kd_out(&k, DMLC_KOUT_INDEX, index_types[(c + 1) % 4], 1);
    kd_reduce(&k, dt, DMLC_OP_ARGMAX, DMLC_DIRECTION_INCREASING);
    check_merged_columns_path(&k, c);
    split_min = cases[c].no_split ? UINT64_MAX : 0;
    stream_prefetch_max = cases[c].dims[cases[c].rank - 1] <= 32 ? 0 : UINT64_MAX;
    jitted j;
    compile(&k, &j, NULL);
    ck_assert_msg(j.info.num_tasks == cases[c].tasks && j.info.has_finish == (cases[c].tasks > 1),
                  "case %zu: %llu tasks, finish %d", c, (unsigned long long)j.info.num_tasks,
                  j.info.has_finish);
    release(&j);
    check_reductions(k, dt);
    split_min = 0;
  }
  stream_prefetch_max = UINT64_MAX;
}
END_TEST

/* ---- reads not in the space's order: the dims taken in storage order ---- */

/* A layout to check: dims, reduced dims and the read's strides. */
typedef struct layout_case {
  uint32_t rank, dims[4], mask;
  uint64_t strides[4];
} layout_case;

/* Each case with an INDEX output and, in every other case (from the
 * first when onehot_first), a ONEHOT one whose strides are scaled by
 * 1 + c % onehot_scales; on every reduction and data mode. */
static void check_layouts(const layout_case *cases, size_t n, dmlc_dtype dt, bool onehot_first,
                          uint32_t onehot_scales) {
  for (size_t c = 0; c < n; c++) {
    dmlc_kdesc k = kd_make(cases[c].rank, cases[c].dims, cases[c].mask);
    memcpy(k.read_strides, cases[c].strides, sizeof cases[c].strides);
    kd_out(&k, DMLC_KOUT_INDEX, index_types[c % 4], 1 + c % 2);
    if (c % 2 == (onehot_first ? 0u : 1u))
      kd_out(&k, DMLC_KOUT_ONEHOT, onehot_types[c % 6], 1 + c % onehot_scales);
    check_reductions(k, dt);
  }
}

START_TEST(test_storage_order) {
  static const layout_case cases[] = {
      {2, {37, 50}, 2, {1, 37}},        /* [K, R] column-major: columns */
      {2, {60, 9}, 1, {1, 60}},         /* [R, K] column-major: rows */
      {3, {5, 6, 7}, 2, {7, 35, 1}},    /* [K, R, K] permuted */
      {3, {4, 3, 33}, 5, {33, 132, 1}}, /* [R, K, R], kept dim outermost in memory */
      {3, {6, 4, 5}, 6, {1, 30, 6}},    /* [K, R, R] with the kept dim innermost */
      {3, {3, 8, 16}, 3, {0, 16, 1}},   /* broadcast reduced dim */
  };
  check_layouts(cases, sizeof cases / sizeof cases[0], reduce_types[_i], true, 1);
}
END_TEST

/* Reduced dims read in another order than the index counts them: merged
 * rows or merged columns, candidates merged by value, then index (weighed
 * by dim); a one-hot's 1 found from the index, dim by dim. */
START_TEST(test_storage_order_reordered) {
  static const layout_case cases[] = {
      {2, {37, 50}, 3, {1, 37}},            /* a transposed matrix, both axes: one point, split */
      {3, {6, 4, 40}, 5, {1, 240, 6}},      /* [R, K, R] read as [K, R, R] */
      {3, {5, 7, 9}, 7, {63, 1, 7}},        /* three reduced dims, the middle one innermost */
      {3, {4, 5, 6}, 7, {0, 1, 5}},         /* and a broadcast one: every value four times */
      {4, {3, 4, 5, 6}, 9, {1, 90, 18, 3}}, /* [R, K, K, R] read as [K, K, R, R] */
      {3, {9, 2, 17}, 5, {2, 1, 18}},       /* [R, K, R] read as [R, R, K]: merged columns */
      /* rows of whole vectors, a lane per position (lanes_in_order), or
       * more vectors than accumulators (by value, then index) */
      {3, {16, 3, 20}, 5, {1, 320, 16}},
      {3, {64, 2, 9}, 5, {1, 576, 64}},
      {4, {8, 3, 4, 5}, 13, {1, 160, 40, 8}}, /* [R, K, R, R] read as [K, R, R, R] */
      {3, {8, 4, 64}, 7, {1, 8, 32}}, /* the outer reduced dims swapped: by value, then index */
      /* the innermost stored dim kept: merged columns by value, then index */
      {3, {16, 4, 5}, 6, {1, 16, 64}},
      {4, {3, 6, 2, 5}, 11, {2, 30, 1, 6}},
      {3, {16, 24, 30}, 6, {1, 16, 384}}, /* and many rows: split, by value and then index */
  };
  const dmlc_dtype dt = reduce_types[_i];
  dmlc_kdesc k = kd_make(cases[0].rank, cases[0].dims, cases[0].mask);
  memcpy(k.read_strides, cases[0].strides, sizeof cases[0].strides);
  kd_out(&k, DMLC_KOUT_INDEX, index_types[0], 1);
  kd_reduce(&k, dt, DMLC_OP_ARGMAX, DMLC_DIRECTION_INCREASING);
  jitted j;
  compile(&k, &j, NULL);
  ck_assert_msg(j.info.has_finish && j.info.num_tasks > 1, "case 0 is not split");
  release(&j);
  check_layouts(cases, sizeof cases / sizeof cases[0], dt, true, 3);
}
END_TEST

/* Reads with no contiguous dim, every non-zero stride a multiple of the
 * least: the kernel reads with the least as 1, its vectors strided (whole
 * vectors over their span and a shuffle, or element by element past 4). */
START_TEST(test_scaled_read) {
  static const layout_case cases[] = {
      {2, {5, 100}, 2, {200, 2}},        /* rows, every other element */
      {2, {3, 700}, 2, {2100, 3}},       /* long rows (blocks), every third */
      {2, {60, 40}, 1, {80, 2}},         /* columns */
      {2, {9, 33}, 2, {330, 5}},         /* rows, every fifth: element by element */
      {3, {4, 3, 50}, 5, {300, 100, 2}}, /* [R, K, R] */
      {2, {64, 6}, 2, {12, 2}},          /* short rows */
      {3, {2, 8, 40}, 6, {0, 80, 2}},    /* a broadcast dim */
      {2, {30, 40}, 3, {2, 60}},         /* transposed too: reordered merged rows */
  };
  check_layouts(cases, sizeof cases / sizeof cases[0], reduce_types[_i], false, 1);
}
END_TEST

/* ---- no reduction ---- */

static const dmlc_dtype all_types[] = {DMLC_DTYPE_BOOL, DMLC_DTYPE_F16, DMLC_DTYPE_F32,
                                       DMLC_DTYPE_F64,  DMLC_DTYPE_I8,  DMLC_DTYPE_I16,
                                       DMLC_DTYPE_I32,  DMLC_DTYPE_I64, DMLC_DTYPE_U8,
                                       DMLC_DTYPE_U16,  DMLC_DTYPE_U32, DMLC_DTYPE_U64};

START_TEST(test_copy) {
  const dmlc_dtype from = all_types[_i];
  const data_mode modes[] = {DATA_RANDOM, DATA_SPECIALS, DATA_HALF_TIES, DATA_TIES};
  for (size_t t = 0; t < sizeof all_types / sizeof all_types[0]; t++) {
    const uint32_t d1[1] = {37}, d2[2] = {3, 13};
    dmlc_kdesc k = kd_make(1, d1, 0);
    k.read_dtype = from;
    kd_out(&k, DMLC_KOUT_COPY, all_types[t], 1);
    check_kernel_modes(&k, modes, 4);
    k = kd_make(2, d2, 0);
    k.read_dtype = from;
    k.read_strides[0] = 1; /* transposed */
    k.read_strides[1] = 3;
    kd_out(&k, DMLC_KOUT_COPY, all_types[t], 2);
    kd_out(&k, DMLC_KOUT_CONSTANT, all_types[t], 1)->constant = (int64_t)(t * 7) - 20;
    check_kernel_modes(&k, modes, 2);
  }
}
END_TEST

START_TEST(test_constant) {
  static const int64_t values[] = {0, 1, -1, 65519, 65520, 16777217, INT64_MIN, INT64_MAX};
  for (size_t t = 0; t < sizeof all_types / sizeof all_types[0]; t++) {
    for (size_t v = 0; v < sizeof values / sizeof values[0]; v++) {
      const uint32_t one = 1, big = 40000;
      dmlc_kdesc k = kd_make(1, v % 2 ? &big : &one, 0);
      k.has_read = false;
      kd_out(&k, DMLC_KOUT_CONSTANT, all_types[t], 1)->constant = values[v];
      const data_mode modes[] = {DATA_RANDOM};
      check_kernel_modes(&k, modes, 1);
    }
  }
}
END_TEST

/* ---- the hot loops are vector code ---- */

/* k's optimized IR holds vector (an LLVM vector type's spelling). */
static void check_vector_ir(const dmlc_kdesc *k, const char *vector) {
  jitted j;
  char *ir = NULL;
  compile(k, &j, &ir);
  ck_assert_msg(strstr(ir, vector) != NULL, "no %s in:\n%.3000s", vector, ir);
  LLVMDisposeMessage(ir);
  release(&j);
}

START_TEST(test_vector_code) {
  static const struct {
    uint32_t rank, dims[3], mask;
    uint64_t strides[3]; /* all zero: packed */
    dmlc_op op;
    dmlc_direction dir;
    dmlc_dtype index;
  } cases[] = {
      {1, {4096}, 1, {0}, DMLC_OP_ARGMAX, DMLC_DIRECTION_INCREASING, DMLC_DTYPE_I64}, /* a row */
      {2, {64, 1024}, 1, {0}, DMLC_OP_ARGMIN, DMLC_DIRECTION_DECREASING, DMLC_DTYPE_U32}, /* columns
                                                                                           */
      /* [K, R] read column-major: columns */
      {2, {64, 1024}, 2, {1, 64}, DMLC_OP_ARGMAX, DMLC_DIRECTION_INCREASING, DMLC_DTYPE_I64},
      /* a transposed matrix over both axes: merged rows, reordered */
      {2, {64, 1024}, 3, {1, 64}, DMLC_OP_ARGMAX, DMLC_DIRECTION_DECREASING, DMLC_DTYPE_U32},
      /* rows read every other element: scaled */
      {2, {64, 1024}, 2, {2048, 2}, DMLC_OP_ARGMIN, DMLC_DIRECTION_INCREASING, DMLC_DTYPE_U32},
      /* [R, K, R]: merged rows */
      {3, {8, 16, 256}, 5, {0}, DMLC_OP_ARGMIN, DMLC_DIRECTION_INCREASING, DMLC_DTYPE_I64},
  };
  for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
    dmlc_kdesc k = kd_make(cases[c].rank, cases[c].dims, cases[c].mask);
    if (cases[c].strides[0])
      memcpy(k.read_strides, cases[c].strides, sizeof cases[c].strides);
    kd_reduce(&k, DMLC_DTYPE_F32, cases[c].op, cases[c].dir);
    kd_out(&k, DMLC_KOUT_INDEX, cases[c].index, 1);
    check_vector_ir(&k, "<8 x float>");
  }
}
END_TEST

/* Columns fewer than a 64-byte vector's lanes (emit.c's
 * column_vector_bytes): emitted with the widest vector they fill, which the
 * IR shows, and exact on ties and NaN in every mode; columns under 16 bytes
 * keep the scalar code they had. */
START_TEST(test_narrow_columns) {
  static const struct {
    uint32_t rank, dims[4], mask;
    dmlc_dtype dt;
    const char *vector; /* in the IR */
  } cases[] = {
      {2, {300, 8}, 1, DMLC_DTYPE_F32, "<8 x float>"},      /* columns */
      {3, {5, 40, 12}, 2, DMLC_DTYPE_F32, "<8 x float>"},   /* 8 lanes and a tail of 4 */
      {2, {70, 16}, 1, DMLC_DTYPE_F16, "<16 x i16>"},       /* f16 keys */
      {2, {90, 20}, 1, DMLC_DTYPE_U8, "<16 x i8>"},         /* 16 of 20 */
      {4, {3, 4, 50, 8}, 5, DMLC_DTYPE_F32, "<8 x float>"}, /* merged columns */
      {4, {3, 4, 50, 8}, 5, DMLC_DTYPE_I16, "<8 x i32>"},   /* compared as i32 */
      {2, {33, 3}, 1, DMLC_DTYPE_F32, NULL},                /* under 16 bytes */
  };
  vec_bytes = 64;
  for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
    dmlc_kdesc k = kd_make(cases[c].rank, cases[c].dims, cases[c].mask);
    kd_out(&k, DMLC_KOUT_INDEX, index_types[c % 4], 1);
    if (c % 2)
      kd_out(&k, DMLC_KOUT_ONEHOT, onehot_types[c % 6], 1);
    if (cases[c].vector) {
      kd_reduce(&k, cases[c].dt, DMLC_OP_ARGMAX, DMLC_DIRECTION_INCREASING);
      check_vector_ir(&k, cases[c].vector);
    }
    check_reductions(k, cases[c].dt);
  }
  vec_bytes = 32;
}
END_TEST

/* Packed columns of up to two vectors (under four with a partial last one) read as super rows
 * (emit_column.c's ec_column_super_rows): x rows a super row, each kept column's x candidates
 * merged by value, then index, at the store (halving the super row); with row chunks (a finish
 * merges the super columns' partials first). Exact on ties and NaN in every mode, under 16-, 32-
 * and 64-byte vectors; what does not qualify says so. */
START_TEST(test_column_super_rows) {
  const dmlc_dtype dt = reduce_types[_i];
  static const struct {
    uint32_t rank, dims[3], mask;
    bool super, split;
  } cases[] = {
      {2, {256, 3}, 1, true, false},    {2, {512, 7}, 1, true, false},
      {3, {7, 64, 5}, 2, true, false},  /* [O, R, K] */
      {3, {5, 128, 3}, 2, true, false}, /* halvings of odd widths: 3 * x / 2, ..., 6, 3 */
      {2, {256, 5}, 1, true, false},    /* 8-bit: 64 rows of 5, 320 columns a super row */
      {2, {100, 6}, 1, true, false},    /* 4 rows a super row: the rows' largest power of 2 */
      {2, {65536, 4}, 1, true, true},   /* row chunks */
      {2, {33, 3}, 1, false, false},    /* odd rows */
      {2, {64, 600}, 1, false, false},  /* columns of two vectors or more */
  };
  static const uint32_t widths[] = {16, 32, 64};
  for (size_t w = 0; w < 3; w++) {
    vec_bytes = widths[w];
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
      dmlc_kdesc k = kd_make(cases[c].rank, cases[c].dims, cases[c].mask);
      kd_out(&k, DMLC_KOUT_INDEX, index_types[c % 4], 1);
      if (c % 3 == 1)
        kd_out(&k, DMLC_KOUT_INDEX, index_types[(c + 1) % 4], 2);
      kd_reduce(&k, dt, DMLC_OP_ARGMAX, DMLC_DIRECTION_INCREASING);
      const uint64_t row_bytes = (uint64_t)cases[c].dims[cases[c].rank - 1] * dmlc_dtype_size(dt);
      /* up to two vectors, or under four with a partial last one */
      const bool super = cases[c].super && (row_bytes <= 2 * vec_bytes ||
                                            (row_bytes < 4 * vec_bytes && row_bytes % vec_bytes));
      ck_assert_msg((ec_column_super_rows(&k, vec_bytes) > 1) == super,
                    "case %zu, %u-byte vectors: super rows %u", c, vec_bytes,
                    ec_column_super_rows(&k, vec_bytes));
      if (cases[c].split && super) {
        jitted j;
        compile(&k, &j, NULL);
        ck_assert_msg(j.info.has_finish, "case %zu is not split", c);
        release(&j);
      }
      check_reductions_keys(k, dt);
    }
    /* a one-hot output keeps the rows as they are */
    dmlc_kdesc k = kd_make(2, cases[1].dims, 1);
    kd_out(&k, DMLC_KOUT_ONEHOT, DMLC_DTYPE_F32, 1);
    kd_reduce(&k, dt, DMLC_OP_ARGMAX, DMLC_DIRECTION_INCREASING);
    ck_assert_uint_eq(ec_column_super_rows(&k, vec_bytes), 1);
  }
  vec_bytes = 32;
}
END_TEST

/* ---- random kernels ---- */

/* Target machines of the narrower ISAs the JIT serves (DMLC_CPU_FEATURES=
 * -avx512f, DMLC_CPU=x86-64-v2), NULL where the host lacks them or is not
 * x86; and whether the host has AVX-512 and VBMI. */
static LLVMTargetMachineRef avx2_tm, sse_tm;
static bool host_avx512, host_vbmi;

/* Every knob of the kernels compiled, saved and restored around each
 * random kernel. */
typedef struct knobs {
  LLVMTargetMachineRef pass_tm, code_tm;
  uint64_t nt_min_bytes, stream_prefetch_max, l2_bytes, row_prefetch_max, split_min;
  uint32_t psign_bytes, out_shift, vec_bytes, row_narrow;
  bool soft_half, short_row_blocks, far_row_prefetch, long_column_runs, no_column_run_prefetch,
      byte_permutes, lane_rows;
} knobs;

static knobs knobs_now(void) {
  return (knobs){host_tm,          code_tm,          nt_min_bytes,     stream_prefetch_max,
                 l2_bytes,         row_prefetch_max, split_min,        psign_bytes,
                 out_shift,        vec_bytes,        row_narrow,       soft_half,
                 short_row_blocks, far_row_prefetch, long_column_runs, no_column_run_prefetch,
                 byte_permutes,    lane_rows};
}

static void knobs_set(const knobs *s) {
  host_tm = s->pass_tm;
  code_tm = s->code_tm;
  nt_min_bytes = s->nt_min_bytes;
  stream_prefetch_max = s->stream_prefetch_max;
  l2_bytes = s->l2_bytes;
  row_prefetch_max = s->row_prefetch_max;
  split_min = s->split_min;
  psign_bytes = s->psign_bytes;
  out_shift = s->out_shift;
  vec_bytes = s->vec_bytes;
  row_narrow = s->row_narrow;
  soft_half = s->soft_half;
  short_row_blocks = s->short_row_blocks;
  far_row_prefetch = s->far_row_prefetch;
  long_column_runs = s->long_column_runs;
  no_column_run_prefetch = s->no_column_run_prefetch;
  byte_permutes = s->byte_permutes;
  lane_rows = s->lane_rows;
}

static uint32_t rnd_in(uint32_t lo, uint32_t hi) { return lo + (uint32_t)(rnd() % (hi - lo + 1)); }

/* A random ISA as the JIT would target it (jit.c's dmlc_llvm_target_for:
 * vector width, PSIGN, f16 in integers, VBMI's permutes, rows in lanes),
 * the host's tuning knobs at random, and reads taken as from DRAM at
 * random (stream_prefetch_max_bytes). k's read bytes: read_bytes. */
static void random_knobs(uint64_t read_bytes, const knobs *base) {
  knobs s = *base;
  const uint32_t isa = (uint32_t)(rnd() % 3); /* 0: the host, 1: AVX2, 2: SSE4.2 */
  if (isa == 1 && avx2_tm) {
    s.pass_tm = s.code_tm = avx2_tm;
    s.vec_bytes = 32;
    s.psign_bytes = 32;
  } else if (isa == 2 && sse_tm) {
    s.pass_tm = s.code_tm = sse_tm;
    s.vec_bytes = 16;
    s.psign_bytes = 16;
    s.soft_half = true;
  } else {
    s.vec_bytes = host_avx512 ? 64 : 32;
    s.psign_bytes = host_psign_bytes;
    s.soft_half = rnd() % 4 == 0;
    s.byte_permutes = host_vbmi && s.vec_bytes == 64 && rnd() % 4;
  }
  if (rnd() % 6 == 0)
    s.psign_bytes = 0;
  if (rnd() % 8 == 0 && s.vec_bytes > 16) /* narrower than the ISA allows */
    s.vec_bytes /= 2;
  s.lane_rows = rnd() % 5 != 0;
  s.row_narrow = s.vec_bytes == 64 && rnd() % 4 ? 32 : 0;
  static const uint64_t l2s[] = {0, 1u << 20, 64u << 10, 256u << 10};
  s.l2_bytes = l2s[rnd() % 4];
  s.row_prefetch_max = rnd() % 3 ? 0 : s.l2_bytes;
  s.short_row_blocks = rnd() & 1;
  s.far_row_prefetch = rnd() & 1;
  s.long_column_runs = rnd() & 1;
  s.no_column_run_prefetch = rnd() & 1;
  static const uint64_t splits[] = {0, 4096, 1u << 20, UINT64_MAX};
  s.split_min = splits[rnd() % 4];
  const uint64_t streams[] = {UINT64_MAX, 0, read_bytes / 2, read_bytes + 1};
  s.stream_prefetch_max = streams[rnd() % 4];
  static const uint64_t nts[] = {0, 1, 4096};
  s.nt_min_bytes = nts[rnd() % 3];
  static const uint32_t shifts[] = {0, 4, 12, 36};
  s.out_shift = shifts[rnd() % 4];
  knobs_set(&s);
  snprintf(random_note, sizeof random_note,
           " | isa %u vec %u psign %u soft_half %d permutes %d lanes %d narrow %u l2 %llu "
           "rowpf %llu blocks %d ahead %d runs %d nocolpf %d split %llu stream %llu nt %llu "
           "shift %u",
           isa, s.vec_bytes, s.psign_bytes, s.soft_half, s.byte_permutes, s.lane_rows, s.row_narrow,
           (unsigned long long)s.l2_bytes, (unsigned long long)s.row_prefetch_max,
           s.short_row_blocks, s.far_row_prefetch, s.long_column_runs, s.no_column_run_prefetch,
           (unsigned long long)s.split_min, (unsigned long long)s.stream_prefetch_max,
           (unsigned long long)s.nt_min_bytes, s.out_shift);
}

/* A dim of at most `most` elements, short ones likeliest. */
static uint32_t rnd_extent(uint32_t most) {
  static const uint32_t caps[] = {4, 40, 80, 600, 5000};
  uint32_t cap = caps[rnd() % 5];
  cap = cap < most ? cap : most;
  return rnd_in(1, cap < 1 ? 1 : cap);
}

/* Random strides for k's dims: dense; padded (each dim's extent rounded
 * up); permuted storage order; one dim broadcast; or every stride doubled
 * (a read of every other element). */
static void random_read_strides(dmlc_kdesc *k) {
  uint32_t order[DMLC_MAX_RANK]; /* order[0]: the innermost in storage */
  for (uint32_t d = 0; d < k->rank; d++)
    order[d] = k->rank - 1 - d;
  const uint32_t kind = (uint32_t)(rnd() % 10);
  if (kind == 6 || kind == 7)
    for (uint32_t d = k->rank; d > 1; d--) { /* Fisher-Yates */
      const uint32_t j = (uint32_t)(rnd() % d), t = order[d - 1];
      order[d - 1] = order[j];
      order[j] = t;
    }
  uint64_t s = kind == 9 ? 2 : 1;
  for (uint32_t i = 0; i < k->rank; i++) {
    const uint32_t d = order[i];
    k->read_strides[d] = s;
    const uint64_t extent = k->dims[d] + (kind == 4 || kind == 5 ? rnd() % 9 : 0);
    s *= extent;
  }
  if (kind == 8) /* a broadcast dim */
    k->read_strides[rnd() % k->rank] = 0;
}

/* A random kernel: rows, columns, channels (NCHW), [r, k, r] or any rank
 * and mask; index and one-hot outputs of random types; at most 2^19
 * elements. */
static dmlc_kdesc random_kdesc(void) {
  enum { BUDGET = 1u << 19 };
  uint32_t dims[DMLC_MAX_RANK], rank, mask;
  switch (rnd() % 6) {
  case 0: /* rows */
    rank = 2, mask = 2;
    dims[1] = rnd() % 10 ? rnd_extent(BUDGET) : rnd_in(2, 72);
    dims[0] = rnd_extent(BUDGET / dims[1]);
    break;
  case 1: /* one row */
    rank = 1, mask = 1;
    dims[0] = rnd_in(1, rnd() % 2 ? 300 : 40000);
    break;
  case 2: /* columns */
    rank = 2, mask = 1;
    dims[0] = rnd_extent(2000);
    dims[1] = rnd_extent(BUDGET / dims[0]);
    break;
  case 3: /* channels */
    rank = 3, mask = 2;
    dims[0] = rnd_in(1, 4);
    dims[1] = rnd_in(1, rnd() % 2 ? 24 : 80);
    dims[2] = rnd_extent(BUDGET / (dims[0] * dims[1]));
    break;
  case 4: /* [r, k, r] */
    rank = 3, mask = 5;
    dims[0] = rnd_in(1, 70);
    dims[1] = rnd_in(1, 9);
    dims[2] = rnd_extent(BUDGET / (dims[0] * dims[1]));
    break;
  default: { /* anything */
    rank = rnd_in(1, 5);
    mask = 0;
    while (!mask)
      mask = (uint32_t)(rnd() % (1u << rank));
    for (uint32_t d = 0; d < rank; d++)
      dims[d] = rnd_in(1, rnd() % 3 ? 12 : 40);
  }
  }
  dmlc_kdesc k = kd_make(rank, dims, mask);
  if (rnd() % 2)
    random_read_strides(&k);
  const uint32_t nout = rnd() % 3 ? 1 : 2;
  for (uint32_t i = 0; i < nout; i++) {
    const bool index = i == 0 ? rnd() % 4 != 0 : k.outputs[0].kind != DMLC_KOUT_INDEX;
    const uint64_t scale = rnd() % 8 ? 1 : 2;
    if (index)
      kd_out(&k, DMLC_KOUT_INDEX, index_types[rnd() % 4], scale);
    else
      kd_out(&k, DMLC_KOUT_ONEHOT, onehot_types[rnd() % 6], scale);
  }
  return k;
}

/* DMLC_TEST_RANDOM_KERNELS (default RANDOM_KERNELS) random kernels, each
 * with random target knobs (random_knobs), on three random data modes of
 * its type; DMLC_TEST_RANDOM_SEED picks another sequence. The random
 * number generator is seeded per kernel (from the seed and the kernel's
 * number, which a failure's message names), so DMLC_TEST_RANDOM_FIRST=N
 * starts the sequence at the kernel that failed. */
enum { RANDOM_KERNELS = 150 };

START_TEST(test_random_kernels) {
  const char *env_n = getenv("DMLC_TEST_RANDOM_KERNELS");
  const char *env_seed = getenv("DMLC_TEST_RANDOM_SEED");
  const char *env_first = getenv("DMLC_TEST_RANDOM_FIRST");
  const uint64_t n = env_n ? strtoull(env_n, NULL, 10) : RANDOM_KERNELS;
  const uint64_t seed = env_seed ? strtoull(env_seed, NULL, 10) : 1;
  const uint64_t first = env_first ? strtoull(env_first, NULL, 10) : 0;
  const knobs base = knobs_now();
  static const data_mode float_modes[] = {
      DATA_RANDOM,    DATA_TIES,     DATA_SPECIALS,  DATA_ALL_NAN, DATA_ALL_NEG_INF,
      DATA_HALF_TIES, DATA_SPARSE,   DATA_ASCENDING, DATA_INFS,    DATA_NEGATIVE,
      DATA_POSITIVE,  DATA_RARE_NAN, DATA_DIAGONAL};
  static const data_mode int_modes[] = {DATA_RANDOM,      DATA_TIES,   DATA_SPECIALS, DATA_ALL_NAN,
                                        DATA_ALL_NEG_INF, DATA_SPARSE, DATA_DIAGONAL};
  for (uint64_t i = first; i < first + n; i++) {
    rng = (seed * 0x9e3779b97f4a7c15ull) ^ (i * 0xbf58476d1ce4e5b9ull) ^ 0x94d049bb133111ebull;
    for (int w = 0; w < 4; w++)
      rnd();
    dmlc_kdesc k = random_kdesc();
    const dmlc_dtype dt = reduce_types[rnd() % NUM_REDUCE_TYPES];
    kd_reduce(&k, dt, rnd() & 1 ? DMLC_OP_ARGMIN : DMLC_OP_ARGMAX,
              rnd() & 1 ? DMLC_DIRECTION_DECREASING : DMLC_DIRECTION_INCREASING);
    random_knobs(span(&k, k.read_strides) * dmlc_dtype_size(dt), &base);
    const size_t note = strlen(random_note);
    snprintf(random_note + note, sizeof random_note - note, " | kernel %llu seed %llu",
             (unsigned long long)i, (unsigned long long)seed);
    diag_len = k.dims[k.rank - 1];
    const bool fl = dmlc_dtype_is_float(dt);
    const data_mode *all = fl ? float_modes : int_modes;
    const int nall = fl ? (int)(sizeof float_modes / sizeof float_modes[0])
                        : (int)(sizeof int_modes / sizeof int_modes[0]);
    data_mode modes[3];
    for (int m = 0; m < 3; m++)
      modes[m] = dt == DMLC_DTYPE_F16 && m == 2 && rnd() % 2 ? DATA_F16_BITS : all[rnd() % nall];
    check_kernel_modes(&k, modes, 3);
    knobs_set(&base);
    random_note[0] = '\0';
  }
  diag_len = 1;
}
END_TEST

/* Packed columns a whole vector and more with a partial last one: the
 * columns past the whole vectors go as one vector of half the lanes, one
 * of a quarter ... down to 8 bytes (emit_column.c's for_columns_from,
 * emit_merge.c's mcol_merge_all), then scalars: through the rows, the
 * direct path's select chain, the f16 keys' fast pass, row chunks'
 * partials, ONEHOT 0s and merged columns. The IR holds the narrower
 * vector; exact on ties and NaN in every mode. */
START_TEST(test_column_tail_vectors) {
  static const struct {
    uint32_t rank, dims[4], mask, vec;
    dmlc_dtype dt;
    const char *vector; /* in the IR */
  } cases[] = {
      {2, {70, 120}, 1, 64, DMLC_DTYPE_F32, "<8 x float>"}, /* 7 vectors and 8 */
      {2, {50, 300}, 1, 64, DMLC_DTYPE_U8, "<32 x i8>"},    /* 4 * 64 + 32 + 8, 4 scalars */
      {2, {40, 93}, 1, 32, DMLC_DTYPE_U8, "<8 x i8>"},      /* 2 * 32 + 16 + 8, 5 scalars */
      {2, {64, 90}, 1, 16, DMLC_DTYPE_U8, "<8 x i8>"},      /* 5 * 16 + 8, 2 scalars */
      {2, {300, 77}, 1, 32, DMLC_DTYPE_F16, "<4 x i16>"},   /* f16 keys: 4 * 16 + 8 + 4, 1 scalar */
      {3, {3, 12, 100}, 2, 64, DMLC_DTYPE_F32, "<4 x float>"}, /* direct: 6 * 16 + 4 */
      {3, {2, 9, 70}, 2, 64, DMLC_DTYPE_I64, "<4 x i64>"},     /* direct: 8 * 8 + 4 + 2 */
      {2, {16384, 72}, 1, 64, DMLC_DTYPE_F32, "<8 x float>"},  /* row chunks: 4 * 16 + 8 */
      {2, {200, 150}, 1, 32, DMLC_DTYPE_I16, "<4 x i16>"},     /* 9 * 16 + 4, 2 scalars */
      {2, {90, 46}, 1, 16, DMLC_DTYPE_F16, NULL},              /* keys: 5 * 8 + 4, 2 scalars */
      /* merged columns row by row (emit_merge.c's mcol_merge_all: columns
       * past the runs' 8 vectors, or 4 under 16 registers): 8 * 16 + 8 + 4 + 1 */
      {4, {3, 4, 20, 141}, 5, 64, DMLC_DTYPE_F32, "<8 x float>"},
      {4, {3, 4, 10, 39}, 5, 32, DMLC_DTYPE_I16, NULL}, /* compared as i32: 4 * 8 + 4 + 2 + 1 */
  };
  const size_t c = (size_t)_i;
  vec_bytes = cases[c].vec;
  dmlc_kdesc k = kd_make(cases[c].rank, cases[c].dims, cases[c].mask);
  if (c >= 10) /* merged columns: a ONEHOT output first, its 0s row by row */
    kd_out(&k, DMLC_KOUT_ONEHOT, onehot_types[c % 6], 1);
  kd_out(&k, DMLC_KOUT_INDEX, index_types[c % 4], 1);
  kd_reduce(&k, cases[c].dt, DMLC_OP_ARGMAX, DMLC_DIRECTION_INCREASING);
  if (c >= 10) {
    emit_ctx e = {.k = &k, .vector_bytes = vec_bytes};
    ck_assert_msg(!ec_merged_columns_runs(&e, vec_bytes), "case %zu takes the runs", c);
  }
  if (cases[c].vector)
    check_vector_ir(&k, cases[c].vector); /* before a ONEHOT output's stores */
  if (c % 2 && c < 10)
    kd_out(&k, DMLC_KOUT_ONEHOT, onehot_types[c % 6], 1);
  check_reductions_keys(k, cases[c].dt);
  vec_bytes = 32;
}
END_TEST

/* Merged columns' runs and super rows (emit_merge.c): with INDEX outputs
 * and the innermost reduced dim next to the kept one, that dim's rows are
 * reduced in registers a run at a time, and
 * where the kept dim is under two vectors and that dim packed, x of its
 * rows make one super row (x the largest divisor of the dim within the
 * super row's vectors, or within the walk's accumulators), each kept
 * column's x candidates merged by value, then index, at the store. Walk
 * and row paths, split with a finish, a padded and a broadcast run dim;
 * every data mode (ties, NaN, f16 bit patterns). */
START_TEST(test_merged_columns_super) {
  const dmlc_dtype dt = reduce_types[_i];
  static const struct {
    uint32_t rank, dims[5], mask, vec;
    uint64_t super;      /* for 32-bit values */
    uint64_t strides[5]; /* all zero: packed */
  } cases[] = {
      /* from DRAM (INDEX outputs walk from DRAM only; ONEHOT ones anywhere) */
      {4, {6, 5, 48, 5}, 5, 32, 6, {0}},       /* the walk: 30 columns, 3 * 8 + 4 + 2 */
      {4, {20, 3, 64, 7}, 5, 64, 16, {0}},     /* the walk split (10 chunks of 2), a finish */
      {5, {2, 160, 3, 16, 5}, 10, 32, 4, {0}}, /* rows in 3 chunks (the last shorter), a finish */
      {4, {5, 3, 45, 5}, 5, 32, 5, {0}},       /* 45 rows: 5 a super row, 3 * 8 + 1 */
      {4, {3, 4, 47, 13}, 5, 64, 1, {0}},      /* 47 rows: no divisor, runs of 13 columns */
      {4, {3, 4, 9, 40}, 5, 64, 1, {0}},       /* 40 columns: runs, no super rows */
      {4, {3, 4, 10, 6}, 5, 32, 1, {320, 80, 8, 1}}, /* rows padded apart: runs */
      {4, {3, 4, 5, 6}, 5, 32, 1, {24, 6, 0, 1}},    /* a broadcast run dim */
      {3, {7, 64, 3}, 3, 16, 4, {197, 3, 1}},        /* [R, R, K], the R padded apart */
  };
  split_min = 0;
  for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
    vec_bytes = cases[c].vec;
    dmlc_kdesc k = kd_make(cases[c].rank, cases[c].dims, cases[c].mask);
    if (cases[c].strides[0])
      memcpy(k.read_strides, cases[c].strides, cases[c].rank * sizeof k.read_strides[0]);
    kd_out(&k, DMLC_KOUT_INDEX, index_types[c % 4], 1 + c % 2);
    if (c % 3 == 0)
      kd_out(&k, DMLC_KOUT_INDEX, index_types[(c + 1) % 4], 1);
    kd_reduce(&k, dt, DMLC_OP_ARGMAX, DMLC_DIRECTION_INCREASING);
    check_merged_columns_path(&k, c);
    stream_prefetch_max = c < 2 ? 0 : UINT64_MAX;
    emit_ctx e = {.k = &k, .vector_bytes = vec_bytes, .from_dram = c < 2};
    if (c == 1) { /* 10 tasks walking chunks of dim 0; from the caches 15 (3 points, 5 chunks) */
      jitted j;
      compile(&k, &j, NULL);
      ck_assert_uint_eq(j.info.num_tasks, 10);
      release(&j);
      stream_prefetch_max = UINT64_MAX;
      compile(&k, &j, NULL);
      ck_assert_uint_eq(j.info.num_tasks, 15);
      release(&j);
      stream_prefetch_max = 0;
    }
    if (dmlc_dtype_size(dt) == 4)
      ck_assert_msg(ec_merged_columns_super_rows(&e, vec_bytes) == cases[c].super,
                    "case %zu: super rows of %llu rows, not %llu", c,
                    (unsigned long long)ec_merged_columns_super_rows(&e, vec_bytes),
                    (unsigned long long)cases[c].super);
    if (c == 1 || c == 2) {
      jitted j;
      compile(&k, &j, NULL);
      ck_assert_msg(j.info.has_finish && j.info.num_tasks >= 3, "case %zu is not split", c);
      release(&j);
    }
    ck_assert_msg(ec_merged_columns_runs(&e, vec_bytes), "case %zu: no runs", c);
    if (c == 0 && dt == DMLC_DTYPE_F32) /* without super rows: 4 + 1 */
      check_vector_ir(&k, "<2 x float>");
    check_reductions_keys(k, dt);
    if (dt == DMLC_DTYPE_F32) {
      static const data_mode more[] = {DATA_SPARSE, DATA_ASCENDING, DATA_NEGATIVE, DATA_RARE_NAN,
                                       DATA_INFS};
      check_reductions_modes(k, dt, more, 5);
    }
    /* A ONEHOT output (hardmax) takes the runs too, its 0s written a run
     * at a time, and the super rows where its rows lie back to back as the
     * read's (odd cases: each of its rows padded, runs alone). */
    const uint64_t x = ec_merged_columns_super_rows(&e, vec_bytes);
    dmlc_kout *o = kd_out(&k, DMLC_KOUT_ONEHOT, onehot_types[c % 6], 1 + c % 3 / 2);
    const uint32_t last = k.rank - 1;
    if (c % 2) {
      o->strides[last - 1] = o->strides[last] * k.dims[last] + 1;
      for (uint32_t d = last - 1; d-- > 0;)
        o->strides[d] = o->strides[d + 1] * k.dims[d + 1];
    }
    check_merged_columns_path(&k, c);
    ck_assert(ec_merged_columns_runs(&e, vec_bytes));
    ck_assert_uint_eq(ec_merged_columns_super_rows(&e, vec_bytes), c % 2 ? 1 : x);
    stream_prefetch_max = UINT64_MAX;
    if (c == 1) { /* the walk from the caches too */
      jitted j;
      compile(&k, &j, NULL);
      ck_assert_uint_eq(j.info.num_tasks, 10);
      release(&j);
    }
    check_reductions(k, dt);
  }
  vec_bytes = 32;
}
END_TEST

/* Merged columns' runs of 8- and 16-bit values hold i16 indices relative
 * to a task's first row where its rows fit them; past 65536 rows a task
 * (no split here) they are i32. */
START_TEST(test_merged_columns_runs_long) {
  static const dmlc_dtype types[] = {DMLC_DTYPE_U8, DMLC_DTYPE_I8, DMLC_DTYPE_I16, DMLC_DTYPE_U16};
  static const uint32_t dims[][5] = {{2, 260, 2, 256, 31}, {2, 250, 2, 256, 31}};
  const dmlc_dtype dt = types[_i < 4 ? _i : 2 * (_i - 4)]; /* 64000 rows: u8 and i16 */
  dmlc_kdesc k = kd_make(5, dims[_i / 4], 10);
  kd_out(&k, DMLC_KOUT_INDEX, DMLC_DTYPE_U32, 1);
  kd_reduce(&k, dt, DMLC_OP_ARGMAX, DMLC_DIRECTION_INCREASING);
  emit_ctx e = {.k = &k, .vector_bytes = vec_bytes};
  ck_assert(ec_merged_columns_runs(&e, vec_bytes));
  split_min = UINT64_MAX; /* one task a kept point: 66560 and 64000 rows */
  jitted j;
  compile(&k, &j, NULL);
  ck_assert_uint_eq(j.info.num_tasks, 4);
  release(&j);
  static const data_mode modes[] = {DATA_RANDOM, DATA_ASCENDING};
  check_reductions_modes(k, dt, modes, 2);
  split_min = 0;
}
END_TEST

static Suite *emit_suite(void) {
  Suite *s = suite_create("llvm_emit");
  TCase *tc = tcase_create("paths");
  tcase_set_timeout(tc, 300);
  tcase_add_test(tc, test_vector_code);
  tcase_add_test(tc, test_narrow_columns);
  tcase_add_loop_test(tc, test_row_1d, 0, NUM_REDUCE_TYPES);
  tcase_add_loop_test(tc, test_row_2d, 0, NUM_REDUCE_TYPES);
  tcase_add_loop_test(tc, test_row_split, 0, 4);
  tcase_add_loop_test(tc, test_row_two_pass, 0, 4);
  tcase_add_loop_test(tc, test_row_blocks, 0, 4);
  tcase_add_loop_test(tc, test_row_blocks_lone_nan, 0, 8);
  tcase_add_loop_test(tc, test_row_bit_blocks, 0, 36);
  tcase_add_loop_test(tc, test_column, 0, NUM_REDUCE_TYPES);
  tcase_add_loop_test(tc, test_column_split, 0, NUM_REDUCE_TYPES);
  tcase_add_test(tc, test_column_f16);
  tcase_add_loop_test(tc, test_column_plane, 0, NUM_REDUCE_TYPES);
  tcase_add_loop_test(tc, test_nontemporal, 0, 10);
  tcase_add_test(tc, test_nontemporal_ir);
  tcase_add_loop_test(tc, test_generic, 0, NUM_REDUCE_TYPES);
  tcase_add_loop_test(tc, test_small_rows, 0, NUM_REDUCE_TYPES);
  tcase_add_loop_test(tc, test_merged_rows, 0, NUM_REDUCE_TYPES);
  tcase_add_loop_test(tc, test_merged_columns, 0, NUM_REDUCE_TYPES);
  tcase_add_loop_test(tc, test_merged_columns_walk, 0, NUM_REDUCE_TYPES);
  tcase_add_loop_test(tc, test_storage_order, 0, NUM_REDUCE_TYPES);
  tcase_add_loop_test(tc, test_storage_order_reordered, 0, NUM_REDUCE_TYPES);
  tcase_add_loop_test(tc, test_scaled_read, 0, NUM_REDUCE_TYPES);
  tcase_add_loop_test(tc, test_copy, 0, (int)(sizeof all_types / sizeof all_types[0]));
  tcase_add_test(tc, test_constant);
  suite_add_tcase(s, tc);
  TCase *wide = tcase_create("wide");
  tcase_set_timeout(wide, 300);
  tcase_add_loop_test(wide, test_merged_rows_wide, 0, NUM_REDUCE_TYPES);
  tcase_add_loop_test(wide, test_column_wide, 0, NUM_REDUCE_TYPES);
  tcase_add_loop_test(wide, test_column_tree, 0, 8);
  suite_add_tcase(s, wide);
  TCase *fast_keys = tcase_create("fast_keys");
  tcase_set_timeout(fast_keys, 120);
  tcase_add_loop_test(fast_keys, test_column_f16_lone_nan, 0, 6);
  tcase_add_loop_test(fast_keys, test_column_f16_nan_decay, 0, 2);
  tcase_add_loop_test(fast_keys, test_column_float_lone_nan, 0, 2);
  tcase_add_loop_test(fast_keys, test_column_direct_nan, 0, 22);
  tcase_add_loop_test(fast_keys, test_column_direct_tails, 0, 18);
  suite_add_tcase(s, fast_keys);
  TCase *groups = tcase_create("row_groups");
  tcase_set_timeout(groups, 120);
  tcase_add_loop_test(groups, test_row_groups, 0, NUM_REDUCE_TYPES);
  tcase_add_test(groups, test_row_flat_search);
  tcase_add_loop_test(groups, test_row_groups_fast, 0, 8);
  tcase_add_loop_test(groups, test_short_row_groups, 0, NUM_REDUCE_TYPES);
  tcase_add_test(groups, test_packed_rows);
  tcase_add_test(groups, test_narrow_row_groups);
  tcase_add_test(groups, test_wide_f32_groups);
  tcase_add_test(groups, test_byte_rows);
  tcase_add_test(groups, test_lane_rows);
  suite_add_tcase(s, groups);
  TCase *prefetch = tcase_create("prefetch");
  tcase_add_test(prefetch, test_stream_prefetch_limit);
  tcase_add_test(prefetch, test_column_short_runs);
  tcase_add_test(prefetch, test_row_narrow_vectors);
  tcase_add_test(prefetch, test_row_gap_touch);
  tcase_add_test(prefetch, test_row_ahead);
  tcase_add_test(prefetch, test_group_row_prefetch);
  tcase_add_test(prefetch, test_row_far_stream);
  tcase_add_loop_test(prefetch, test_column_last_group, 0, 4);
  tcase_add_test(prefetch, test_column_line_prefetch);
  suite_add_tcase(s, prefetch);
  TCase *random = tcase_create("random");
  tcase_set_timeout(random, 600);
  tcase_add_test(random, test_random_kernels);
  suite_add_tcase(s, random);
  TCase *super_rows = tcase_create("super_rows");
  tcase_set_timeout(super_rows, 300);
  tcase_add_loop_test(super_rows, test_column_super_rows, 0, NUM_REDUCE_TYPES);
  tcase_add_loop_test(super_rows, test_column_tail_vectors, 0, 12);
  tcase_add_loop_test(super_rows, test_merged_columns_super, 0, NUM_REDUCE_TYPES);
  tcase_add_loop_test(super_rows, test_merged_columns_runs_long, 0, 6);
  suite_add_tcase(s, super_rows);
  TCase *onehot = tcase_create("onehot");
  tcase_set_timeout(onehot, 300);
  tcase_add_loop_test(onehot, test_onehot_run, 0, 15);
  suite_add_tcase(s, onehot);
  return s;
}

#if defined(__x86_64__)
/* Whether the comma-separated features hold name (with its sign). */
static bool has_host_feature(const char *features, const char *name) {
  const size_t n = strlen(name);
  for (const char *f = strstr(features, name); f; f = strstr(f + 1, name))
    if ((f == features || f[-1] == ',') && (f[n] == ',' || f[n] == '\0'))
      return true;
  return false;
}
#endif

int main(void) {
  LLVMInitializeNativeTarget();
  LLVMInitializeNativeAsmPrinter();
  char *triple = LLVMGetDefaultTargetTriple();
  char *cpu = LLVMGetHostCPUName();
  char *features = LLVMGetHostCPUFeatures();
  LLVMTargetRef target;
  char *err = NULL;
  if (LLVMGetTargetFromTriple(triple, &target, &err)) {
    fprintf(stderr, "%s\n", err);
    return EXIT_FAILURE;
  }
  host_tm = LLVMCreateTargetMachine(target, triple, cpu, features, LLVMCodeGenLevelAggressive,
                                    LLVMRelocDefault, LLVMCodeModelJITDefault);
  code_tm = LLVMCreateTargetMachine(target, triple, cpu, features, LLVMCodeGenLevelDefault,
                                    LLVMRelocPIC, LLVMCodeModelJITDefault);
  host_triple = triple;
#if defined(__x86_64__)
  host_psign_bytes = has_host_feature(features, "+avx2") ? 32 : 0;
  host_avx512 = has_host_feature(features, "+avx512f");
  host_vbmi = has_host_feature(features, "+avx512vbmi");
  /* the JIT's narrower targets: DMLC_CPU_FEATURES=-avx512f, DMLC_CPU=x86-64-v2 */
  if (host_psign_bytes) {
    char *narrow = malloc(strlen(features) + 16);
    sprintf(narrow, "%s,-avx512f", features);
    avx2_tm = LLVMCreateTargetMachine(target, triple, cpu, narrow, LLVMCodeGenLevelDefault,
                                      LLVMRelocPIC, LLVMCodeModelJITDefault);
    free(narrow);
  }
  sse_tm = LLVMCreateTargetMachine(target, triple, "x86-64-v2", "", LLVMCodeGenLevelDefault,
                                   LLVMRelocPIC, LLVMCodeModelJITDefault);
#endif
  LLVMDisposeMessage(cpu);
  LLVMDisposeMessage(features);
  Suite *suites[] = {emit_suite()};
  const int rc = dmlc_test_run_suites(suites, 1);
  LLVMDisposeTargetMachine(host_tm);
  LLVMDisposeTargetMachine(code_tm);
  if (avx2_tm)
    LLVMDisposeTargetMachine(avx2_tm);
  if (sse_tm)
    LLVMDisposeTargetMachine(sse_tm);
  LLVMDisposeMessage(triple);
  return rc;
}
