/* See jit.h. Two target machines with the same settings: `tm` runs the
 * optimization pipeline and prints assembly; ORC owns the other and
 * generates the loaded code. Modules live in one thread-safe context owned by
 * the JIT; each kernel gets symbol names no earlier kernel used. */
#include "codegen/llvm/jit.h"
#include "codegen/llvm/aot.h"
#include "codegen/llvm/emit.h"
#include "codegen/llvm/target_info.h"
#include "ir/strbuf.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#endif

#include <llvm-c/Analysis.h>
#include <llvm-c/Core.h>
#include <llvm-c/Error.h>
#include <llvm-c/IRReader.h>
#include <llvm-c/LLJIT.h>
#include <llvm-c/Orc.h>
#include <llvm-c/Target.h>
#include <llvm-c/TargetMachine.h>
#include <llvm-c/Transforms/PassBuilder.h>

struct dmlc_llvm_jit {
  char *triple, *cpu, *features; /* LLVM-allocated (LLVMDisposeMessage) */
  char *override;                /* "DMLC_CPU=... DMLC_CPU_FEATURES=...", or NULL; malloc'ed */
  LLVMTargetRef llvm_target;     /* the triple's: the target machines are made of it */
  /* The optimizing code generator's target machine, created on first use
   * (full_target_machine): a context that compiles only fast-tier kernels
   * never creates it. */
  LLVMTargetMachineRef tm;
  /* Kernels over at most fast_max_elements elements get the fast tier:
   * dmlc_llvm_jit_tiny_passes and fast_tm (CodeGenOpt None: FastISel and
   * the fast register allocator), created on first use. */
  LLVMTargetMachineRef fast_tm;
  uint64_t fast_max_elements;
  char *data_layout; /* LLVM-allocated */
  LLVMOrcThreadSafeContextRef tsc;
  LLVMOrcLLJITRef lljit;
  dmlc_llvm_target target;
  uint64_t next_id; /* for unique symbol names */
};

/* Outputs at least this large go around the caches: larger than the last
 * level cache of most machines, so ordinary stores would only evict the
 * input being streamed (and read each line for ownership first). So do
 * outputs this large together with the read, when at least an eighth of
 * it (ec_nt_bytes: hardmax f32 [2048,2048], 16 MiB each way, took half the
 * time on a Zen 3 with its 32 MiB L3). Reads of
 * PREFETCH_MIN_BYTES or more are prefetched: from 128 KiB, as data that
 * sits in L2 reaches L1 sooner ahead of the loads too; up to three quarters
 * of the last-level cache for streams (dmlc_llvm_target). */
enum { NONTEMPORAL_MIN_BYTES = 32u << 20, PREFETCH_BYTES = 1024, PREFETCH_MIN_BYTES = 1u << 17 };
/* Below this much read the runtime runs a kernel on one thread: splitting a
 * few points' rows into tasks would only add a finish function to compile
 * and run (DMLC_CPU_PARALLEL_MIN_BYTES is larger). */
enum { SPLIT_MIN_BYTES = 1u << 20 };
/* The most L3 one core complex of an AMD CPU has without 3D V-Cache (which
 * has 96 MiB: taken as 32, its reads of 24-72 MiB lose only prefetches). */
enum { AMD_COMPLEX_L3_BYTES = 32u << 20 };
/* dmlc_llvm_target.row_narrow_bytes (emit_row.c says where it was measured) */
enum { ROW_NARROW_BYTES = 32 };

/* The number at the start of file dir/name, and the character after it
 * into *unit when asked ("32768K"); 0 when there is none. */
static uint64_t sysfs_number(const char *dir, const char *name, char *unit) {
  char path[128];
  snprintf(path, sizeof path, "%s/%s", dir, name);
  FILE *f = fopen(path, "r");
  if (!f)
    return 0;
  unsigned long long n = 0;
  char after = 0;
  const int got = fscanf(f, "%llu%c", &n, &after);
  fclose(f);
  if (unit)
    *unit = after;
  return got >= 1 ? n : 0;
}

/* Whether the host's CPU is AMD's (CPUID's vendor string). */
static bool host_is_amd(void) {
#if defined(__x86_64__) || defined(__i386__)
  unsigned a, b, c, d;
  return __get_cpuid(0, &a, &b, &c, &d) && b == 0x68747541u && d == 0x69746e65u &&
         c == 0x444d4163u; /* "AuthenticAMD" */
#else
  return false;
#endif
}

/* The size in bytes of the host's cache at `level` (0: the last level) as
 * one core sees it; UINT64_MAX when unknown. Linux's sysfs gives the size
 * of the one instance a core uses (an AMD EPYC's L3 is 32 MiB per core
 * complex; the C library's sysconf adds up every complex, 256 MiB), the C
 * library the rest. Without sysfs's cache directories (a VM of the
 * twenty-second session: a Zen 5 whose CPUID reports 508 MiB of L3 and
 * hides the per-complex leaf), an AMD CPU's last level is taken as at most
 * AMD_COMPLEX_L3_BYTES: one thread's plain loop there read 112 GB/s up to
 * 8 MiB, 64-67 GB/s at 24-32 MiB and 51-53 GB/s (DRAM) from 48 MiB, so
 * with 508 MiB every read counted as cached (no read from DRAM, its rows
 * kept 64-byte loads and every prefetch). */
static uint64_t host_cache_bytes(uint64_t level) {
  uint64_t best = 0, best_level = 0;
  for (int i = 0; i < 8; i++) {
    char dir[64], unit = 0;
    snprintf(dir, sizeof dir, "/sys/devices/system/cpu/cpu0/cache/index%d", i);
    const uint64_t l = sysfs_number(dir, "level", NULL);
    if (level ? l != level : l < best_level)
      continue;
    uint64_t size = sysfs_number(dir, "size", &unit);
    size <<= unit == 'K' ? 10 : unit == 'M' ? 20 : unit == 'G' ? 30 : 0;
    if (size && (l > best_level || size > best)) {
      best = size;
      best_level = l;
    }
  }
  if (best)
    return best;
  long bytes = level == 2 ? sysconf(_SC_LEVEL2_CACHE_SIZE) : sysconf(_SC_LEVEL3_CACHE_SIZE);
  if (bytes <= 0 && !level)
    bytes = sysconf(_SC_LEVEL2_CACHE_SIZE);
  if (bytes <= 0)
    return UINT64_MAX;
  if (!level && (uint64_t)bytes > AMD_COMPLEX_L3_BYTES && host_is_amd())
    return AMD_COMPLEX_L3_BYTES;
  return (uint64_t)bytes;
}

static pthread_once_t native_once = PTHREAD_ONCE_INIT;
static LLVMBool native_failed;
/* dmlc_llvm_target.stream_prefetch_max_bytes of the JIT: three quarters of
 * the last-level cache, as a read the size of the cache does not stay in
 * it beside its outputs and everything else (Zen 3's 32 MiB L3 and channel
 * argmax over f16 [16,64,128,128], 32 MiB: 63% of the plain loop with the
 * prefetches, 100% without). Read once per process. */
static uint64_t stream_prefetch_max;
/* dmlc_llvm_target.l2_bytes of the JIT: one core's L2 (0 when unknown). */
static uint64_t host_l2;
/* host_cache_bytes(0): the last-level cache one core sees (0 when unknown). */
static uint64_t host_llc;
/* dmlc_llvm_target.row_prefetch_max_bytes of the JIT: one core's L2 on
 * CPUs whose tuning says no_l3_row_prefetch, 0 (no further limit) on the
 * others. On a Zen 4 streamed rows read from the L3 took 0.74-0.85 of the
 * time without their software prefetches (f16 [8,128256], 2 MB, on one
 * thread 0.74; f32 [8,128256] 0.78-0.80; f16 [64,128256], 16 MB, 0.77;
 * f32 [4096,1000] 0.85-0.91), rows from L2 1.04 (f32 [1,128256]), and the
 * plain loop without prefetches was the fastest; on a Zen 3 the same f16
 * [64,128256] read at 90% of the plain loop with them and 71% without. */
static uint64_t row_prefetch_max;
/* dmlc_llvm_target.long_column_runs of the JIT. On a Zen 4, columns from
 * DRAM of 32 rows or more of 512 KiB or more read in 32 KiB runs took
 * 0.87-0.93 of the time of 4 KiB runs on huge pages (argmin over axis 0 of
 * f32 [64,1024,1024]; 64 rows of 1 MiB 0.91, 32 of 2 MiB 0.95, 128 of 512
 * KiB 0.93) and 0.93-0.94 on 4 KiB pages; on a Zen 3 the 4 KiB runs were
 * the faster (emit_column.c). */
static bool long_column_runs;
/* dmlc_llvm_target.short_row_blocks of the JIT (emit_row.c's
 * row_block_vecs has the figures, from a Zen 5; on a Zen 4 blocks of 32
 * read f32 [1,128256] at 97-99% of the plain loop, the eighteenth
 * session's docs/performance.md). */
static bool short_row_blocks;
/* dmlc_llvm_target.no_column_run_prefetch of the JIT (emit_column.c has the
 * figures, from a Zen 5; a Zen 4 read f16 [16,64,128,128] over the
 * channels in 0.72-0.79 of the time with the prefetches). */
static bool no_column_run_prefetch;
/* dmlc_llvm_target.far_row_prefetch of the JIT (emit_row.c's prefetch_ahead
 * and emit_row_groups, and emit.c's stream prefetches from DRAM, have the
 * figures: rows up to 8 KiB gained on a Zen 5, f32 rows of 3.5 KiB and
 * more lost on a Zen 3; row groups and streams 16 KiB ahead gained on a
 * Zen 5, measured nowhere else). */
static bool far_row_prefetch;
/* Tuning keyed by the host's CPU (LLVM's name for it), as it is the
 * hardware's prefetchers that decide, whatever DMLC_CPU says; only CPUs
 * measured are listed. On a Zen 5 (twenty-second session, alternated in
 * one process) rows from the L3 without their prefetches took 1.00-1.17
 * of the time (f16 and f32 [8,128256] 1.02-1.11 and 1.17, f16
 * [64,128256] 1.00, [4096,1000] 0.99), and long column runs 1.00-1.04
 * (argmin over axis 0 of f32 [64,1024,1024], f32 and f16 [8192,8192]):
 * neither is set there. */
static const struct cpu_tuning {
  const char *cpu;
  bool no_l3_row_prefetch, long_column_runs, short_row_blocks, no_column_run_prefetch,
      far_row_prefetch;
} cpu_tunings[] = {{"znver4", true, true, false, false, false},
                   {"znver5", false, false, true, true, true}};

static void init_native(void) {
  native_failed = LLVMInitializeNativeTarget() || LLVMInitializeNativeAsmPrinter();
  const uint64_t llc = host_cache_bytes(0), l2 = host_cache_bytes(2);
  stream_prefetch_max = llc == UINT64_MAX ? llc : llc / 4 * 3;
  host_l2 = l2 == UINT64_MAX ? 0 : l2;
  host_llc = llc == UINT64_MAX ? 0 : llc;
  char *cpu = LLVMGetHostCPUName();
  for (size_t i = 0; cpu && i < sizeof cpu_tunings / sizeof cpu_tunings[0]; i++) {
    if (strcmp(cpu, cpu_tunings[i].cpu) != 0)
      continue;
    if (host_l2 && cpu_tunings[i].no_l3_row_prefetch)
      row_prefetch_max = host_l2;
    long_column_runs = cpu_tunings[i].long_column_runs;
    short_row_blocks = cpu_tunings[i].short_row_blocks;
    no_column_run_prefetch = cpu_tunings[i].no_column_run_prefetch;
    far_row_prefetch = cpu_tunings[i].far_row_prefetch;
  }
  LLVMDisposeMessage(cpu);
}

void dmlc_llvm_host_caches(uint64_t *l2_bytes, uint64_t *llc_bytes) {
  pthread_once(&native_once, init_native);
  *l2_bytes = host_l2;
  *llc_bytes = host_llc;
}

void dmlc_llvm_host_tuning(dmlc_llvm_target *t) {
  pthread_once(&native_once, init_native);
  t->stream_prefetch_max_bytes = stream_prefetch_max;
  t->l2_bytes = host_l2;
  t->row_prefetch_max_bytes = row_prefetch_max;
  t->long_column_runs = long_column_runs;
  t->short_row_blocks = short_row_blocks;
  t->no_column_run_prefetch = no_column_run_prefetch;
  t->far_row_prefetch = far_row_prefetch;
}

/* Records err's message (consuming err) and returns status. */
static dmlc_status llvm_error(dmlc_diag *diag, dmlc_status status, const char *what,
                              LLVMErrorRef err) {
  char *message = LLVMGetErrorMessage(err);
  dmlc_diag_set(diag, status, "%s: %s", what, message);
  LLVMDisposeErrorMessage(message);
  return status;
}

/* Whether the comma-separated list of +name/-name holds +name (n bytes). */
static bool has_feature_n(const char *features, const char *name, size_t n) {
  for (const char *p = features; p && *p;) {
    const char *comma = strchr(p, ',');
    const size_t len = comma ? (size_t)(comma - p) : strlen(p);
    if (len == n + 1 && p[0] == '+' && memcmp(p + 1, name, n) == 0)
      return true;
    p = comma ? comma + 1 : NULL;
  }
  return false;
}

static bool has_feature(const char *features, const char *name) {
  return has_feature_n(features, name, strlen(name));
}

static uint32_t vector_bytes(const char *features) {
  if (has_feature(features, "avx512f"))
    return 64;
  if (has_feature(features, "avx") || has_feature(features, "avx2"))
    return 32;
  return 16;
}

static uint32_t psign_bytes(const char *triple, const char *features) {
  const bool x86 = strncmp(triple, "x86_64", 6) == 0 ||
                   (triple[0] == 'i' && triple[1] && strncmp(triple + 2, "86", 2) == 0);
  if (!x86)
    return 0;
  return has_feature(features, "avx2") ? 32 : has_feature(features, "ssse3") ? 16 : 0;
}

static bool is_x86(const char *triple) {
  return strncmp(triple, "x86_64", 6) == 0 ||
         (triple[0] == 'i' && triple[1] && strncmp(triple + 2, "86", 2) == 0);
}

/* SSE4a's INSERTQ and EXTRQ, which LLVM picks for some byte shuffles on
 * AMD CPUs (u8 rows of 24 de-interleaved, emit_small.c), are legacy SSE
 * encodings: on a Zen 3 VM each took about 115 ns with the upper halves of
 * the YMM registers in use (5 ns without), and u8 [65536,24] ran 28.7 ms
 * with them, 0.39 ms without (one thread). */
static const char *avoided_features(const char *triple) { return is_x86(triple) ? "-sse4a" : ""; }

char *dmlc_llvm_features_avoiding(const char *triple, const char *features) {
  const char *avoid = avoided_features(triple);
  dmlc_strbuf b = {0};
  dmlc_strbuf_printf(&b, "%s%s%s", features ? features : "",
                     features && *features && *avoid ? "," : "", avoid);
  char *joined = dmlc_strbuf_finish(&b);
  if (!joined)
    return NULL;
  char *out = LLVMCreateMessage(joined);
  free(joined);
  return out;
}

void dmlc_llvm_target_for(const char *triple, const char *features, dmlc_llvm_target *out) {
  memset(out, 0, sizeof *out);
  out->vector_bytes = vector_bytes(features);
  out->nontemporal_min_bytes = NONTEMPORAL_MIN_BYTES;
  out->prefetch_bytes = PREFETCH_BYTES;
  out->stream_prefetch_max_bytes = UINT64_MAX;
  out->prefetch_min_bytes = PREFETCH_MIN_BYTES;
  out->psign_bytes = psign_bytes(triple, features);
  out->split_min_bytes = SPLIT_MIN_BYTES;
  const bool x86 = is_x86(triple);
  out->row_narrow_bytes = x86 ? ROW_NARROW_BYTES : 0;
  out->soft_half = x86 && !has_feature(features, "f16c");
  out->byte_permutes = x86 && out->vector_bytes == 64 && has_feature(features, "avx512vbmi");
  out->lane_rows = x86;
}

static LLVMTargetMachineRef create_target_machine_at(const dmlc_llvm_jit *jit, LLVMTargetRef target,
                                                     LLVMCodeGenOptLevel level) {
  return LLVMCreateTargetMachine(target, jit->triple, jit->cpu, jit->features, level, LLVMRelocPIC,
                                 LLVMCodeModelJITDefault);
}

/* CodeGenOpt Default: Aggressive took a third longer on small kernels and
 * made no measurable difference to the memory-bound ones. */
static LLVMTargetMachineRef create_target_machine(const dmlc_llvm_jit *jit, LLVMTargetRef target) {
  return create_target_machine_at(jit, target, LLVMCodeGenLevelDefault);
}

/* The JIT links the objects the target machines above write (it compiles
 * no IR itself), so its own target machine builder gets the triple alone:
 * with the host's CPU and its hundred-odd features, each of the three
 * target machines LLJIT makes from it (one for its data layout, one for the
 * IR compiler it never uses) set up those features' implications again,
 * 0.4-0.5 ms of a 3.3 ms compile on a fresh context (Zen 5). The data
 * layout, which the modules take from it, is the triple's. */
static dmlc_status create_lljit(dmlc_llvm_jit *jit, LLVMTargetRef target, dmlc_diag *diag) {
  LLVMTargetMachineRef orc_tm = LLVMCreateTargetMachine(
      target, jit->triple, "", "", LLVMCodeGenLevelDefault, LLVMRelocPIC, LLVMCodeModelJITDefault);
  if (!orc_tm) /* it has no CPU: the message names none */
    return dmlc_diag_set(diag, DMLC_ERROR_DEVICE, "cannot create a target machine for %s",
                         jit->triple);
  LLVMOrcLLJITBuilderRef builder = LLVMOrcCreateLLJITBuilder();
  LLVMOrcLLJITBuilderSetJITTargetMachineBuilder(
      builder, LLVMOrcJITTargetMachineBuilderCreateFromTargetMachine(orc_tm));
  LLVMErrorRef err = LLVMOrcCreateLLJIT(&jit->lljit, builder);
  if (err) {
    jit->lljit = NULL;
    return llvm_error(diag, DMLC_ERROR_DEVICE, "cannot create the LLVM JIT", err);
  }
  return DMLC_OK;
}

/* Whether the comma-separated list holds name (no signs). */
static bool in_list(const char *list, const char *name, size_t n) {
  for (const char *p = list; p && *p;) {
    const char *comma = strchr(p, ',');
    const size_t len = comma ? (size_t)(comma - p) : strlen(p);
    if (len == n && memcmp(p, name, n) == 0)
      return true;
    p = comma ? comma + 1 : NULL;
  }
  return false;
}

/* DMLC_CPU (a CPU as llc spells it, with that CPU's features instead of
 * the host's) and DMLC_CPU_FEATURES (+name/-name on top) make the JIT
 * target less than the host has: tests and benchmarks of narrower vector
 * code on a wide machine. Every feature CPUID can confirm that they enable
 * must be the host's too, since the code runs here. Sets jit->cpu,
 * jit->features (LLVM strings) and jit->target; with neither variable set,
 * the host's. */
static dmlc_status choose_cpu(dmlc_llvm_jit *jit, dmlc_diag *diag) {
  const char *env_cpu = getenv("DMLC_CPU"), *env_features = getenv("DMLC_CPU_FEATURES");
  if (env_cpu && !*env_cpu)
    env_cpu = NULL;
  if (env_features && !*env_features)
    env_features = NULL;
  char *host_cpu = LLVMGetHostCPUName(), *host_features = LLVMGetHostCPUFeatures();
  if (!env_cpu && !env_features) {
    jit->cpu = host_cpu;
    jit->features = dmlc_llvm_features_avoiding(jit->triple, host_features);
    LLVMDisposeMessage(host_features);
    if (!jit->features)
      return dmlc_diag_set(diag, DMLC_ERROR_OUT_OF_MEMORY, "out of memory creating the JIT");
    dmlc_llvm_target_for(jit->triple, jit->features, &jit->target);
    return DMLC_OK;
  }
  dmlc_strbuf what = {0}, features = {0};
  if (env_cpu)
    dmlc_strbuf_printf(&what, "DMLC_CPU=%s", env_cpu);
  if (env_features)
    dmlc_strbuf_printf(&what, "%sDMLC_CPU_FEATURES=%s", env_cpu ? " " : "", env_features);
  dmlc_strbuf_printf(&features, "%s%s%s", env_cpu ? "" : host_features,
                     !env_cpu && env_features ? "," : "", env_features ? env_features : "");
  char *override = dmlc_strbuf_finish(&what), *feature_string = dmlc_strbuf_finish(&features);
  char *host_enabled = NULL, *enabled = NULL, *checked = NULL, *plus = NULL, message[512];
  dmlc_status status = DMLC_OK;
  if (!override || !feature_string) {
    status = dmlc_diag_set(diag, DMLC_ERROR_OUT_OF_MEMORY, "out of memory creating the JIT");
  } else if (dmlc_llvm_target_features(jit->triple, host_cpu, host_features, &host_enabled, message,
                                       sizeof message) != 0 ||
             dmlc_llvm_target_features(jit->triple, env_cpu ? env_cpu : host_cpu, feature_string,
                                       &enabled, message, sizeof message) != 0) {
    status = dmlc_diag_set(diag, DMLC_ERROR_DEVICE, "%s: %s", override, message);
  } else if (!(checked = dmlc_llvm_cpuid_features(jit->triple, enabled)) ||
             !(plus = dmlc_llvm_plus_list(enabled))) {
    status = dmlc_diag_set(diag, DMLC_ERROR_OUT_OF_MEMORY, "out of memory creating the JIT");
  } else {
    /* A lacking feature the variable names itself first (+xop, not the
     * fma4 it implies), then any */
    for (int named = 1; named >= 0 && status == DMLC_OK; named--)
      for (const char *p = checked; *p && status == DMLC_OK;) {
        const char *comma = strchr(p, ',');
        const size_t len = comma ? (size_t)(comma - p) : strlen(p);
        if (!in_list(host_enabled, p, len) && (!named || has_feature_n(env_features, p, len)))
          status = dmlc_diag_set(diag, DMLC_ERROR_DEVICE,
                                 "%s enables '%.*s', which this CPU (%s) lacks: the JIT can only "
                                 "target less than the host has",
                                 override, (int)len, p, host_cpu);
        p = comma ? comma + 1 : p + len;
      }
  }
  if (status == DMLC_OK) {
    jit->cpu = LLVMCreateMessage(env_cpu ? env_cpu : host_cpu);
    jit->features = dmlc_llvm_features_avoiding(jit->triple, feature_string);
    if (!jit->features)
      status = dmlc_diag_set(diag, DMLC_ERROR_OUT_OF_MEMORY, "out of memory creating the JIT");
    dmlc_llvm_target_for(jit->triple, plus, &jit->target);
    jit->override = override;
    override = NULL;
  }
  free(override);
  free(feature_string);
  free(host_enabled);
  free(enabled);
  free(checked);
  free(plus);
  LLVMDisposeMessage(host_cpu);
  LLVMDisposeMessage(host_features);
  return status;
}

/* Kernels this small (the whole iteration space, in elements) take
 * nanoseconds to run, and most of their compile is LLVM's optimizing code
 * generator, which costs milliseconds however small the kernel (a
 * function of one add: 1.6 ms on a Zen 3): hardmax.dmlir's [2,2,2] kernel
 * spent 7-10 ms of a 12-17 ms compile there (instruction selection and
 * loop strength reduction). Their loops are unrolled fully in IR and the
 * code generator runs at CodeGenOpt None instead: that compile took
 * 4-8 ms, and its calls 0-12 ns more (hardmax.dmlir 52-56 -> 59-63 ns).
 * Beyond a few dozen elements the fast code generator's spills cost more
 * (hardmax [4,4,4]: 200 -> 400 ns) and the saving shrinks.
 * DMLC_JIT_FAST_MAX_ELEMENTS sets the limit (0: never): tests run every
 * kernel through the fast tier with it. */
enum { FAST_MAX_ELEMENTS = 16 };

static dmlc_status fast_tier_limit(uint64_t *out, dmlc_diag *diag) {
  *out = FAST_MAX_ELEMENTS;
  const char *env = getenv("DMLC_JIT_FAST_MAX_ELEMENTS");
  if (!env || !*env)
    return DMLC_OK;
  char *end = NULL;
  errno = 0;
  const unsigned long long n = strtoull(env, &end, 10);
  if (*env < '0' || *env > '9' || *end || errno)
    return dmlc_diag_set(diag, DMLC_ERROR_DEVICE,
                         "DMLC_JIT_FAST_MAX_ELEMENTS=%s: not a number of elements", env);
  *out = n;
  return DMLC_OK;
}

dmlc_status dmlc_llvm_jit_create(dmlc_llvm_jit **out, dmlc_diag *diag) {
  *out = NULL;
  pthread_once(&native_once, init_native);
  if (native_failed)
    return dmlc_diag_set(diag, DMLC_ERROR_DEVICE, "LLVM has no native target for this host");
  dmlc_llvm_jit *jit = calloc(1, sizeof *jit);
  if (!jit)
    return dmlc_diag_set(diag, DMLC_ERROR_OUT_OF_MEMORY, "out of memory creating the JIT");
  jit->triple = LLVMGetDefaultTargetTriple();
  LLVMTargetRef target;
  char *message = NULL;
  dmlc_status status = choose_cpu(jit, diag);
  if (status == DMLC_OK)
    status = fast_tier_limit(&jit->fast_max_elements, diag);
  dmlc_llvm_host_tuning(&jit->target);
  if (status == DMLC_OK && LLVMGetTargetFromTriple(jit->triple, &target, &message)) {
    status = dmlc_diag_set(diag, DMLC_ERROR_DEVICE, "no LLVM target for %s: %s", jit->triple,
                           message ? message : "");
    LLVMDisposeMessage(message);
  } else if (status == DMLC_OK) {
    jit->llvm_target = target;
    jit->tsc = LLVMOrcCreateNewThreadSafeContext();
    status = create_lljit(jit, target, diag);
    if (status == DMLC_OK &&
        !(jit->data_layout = LLVMCreateMessage(LLVMOrcLLJITGetDataLayoutStr(jit->lljit))))
      status = dmlc_diag_set(diag, DMLC_ERROR_OUT_OF_MEMORY, "out of memory creating the JIT");
  }
  if (status != DMLC_OK) {
    dmlc_llvm_jit_destroy(jit);
    return status;
  }
  *out = jit;
  return DMLC_OK;
}

void dmlc_llvm_jit_destroy(dmlc_llvm_jit *jit) {
  if (!jit)
    return;
  if (jit->lljit) {
    LLVMErrorRef err = LLVMOrcDisposeLLJIT(jit->lljit);
    if (err)
      LLVMConsumeError(err);
  }
  if (jit->tsc)
    LLVMOrcDisposeThreadSafeContext(jit->tsc);
  if (jit->tm)
    LLVMDisposeTargetMachine(jit->tm);
  if (jit->fast_tm)
    LLVMDisposeTargetMachine(jit->fast_tm);
  LLVMDisposeMessage(jit->data_layout);
  LLVMDisposeMessage(jit->triple);
  LLVMDisposeMessage(jit->cpu);
  LLVMDisposeMessage(jit->features);
  free(jit->override);
  free(jit);
}

uint32_t dmlc_llvm_jit_vector_bytes(const dmlc_llvm_jit *jit) { return jit->target.vector_bytes; }
const char *dmlc_llvm_jit_triple(const dmlc_llvm_jit *jit) { return jit->triple; }
const char *dmlc_llvm_jit_cpu_name(const dmlc_llvm_jit *jit) { return jit->cpu; }
const char *dmlc_llvm_jit_override(const dmlc_llvm_jit *jit) { return jit->override; }

void dmlc_llvm_text_free(dmlc_llvm_text *text) {
  if (!text)
    return;
  free(text->llvm_ir);
  free(text->assembly);
  text->llvm_ir = text->assembly = NULL;
}

/* ---- the pipeline of one module ---- */

static LLVMModuleRef module_create(dmlc_llvm_jit *jit, const char *name) {
  LLVMModuleRef m =
      LLVMModuleCreateWithNameInContext(name, LLVMOrcThreadSafeContextGetContext(jit->tsc));
  LLVMSetTarget(m, jit->triple);
  LLVMSetDataLayout(m, jit->data_layout);
  return m;
}

static dmlc_status verify(LLVMModuleRef m, dmlc_diag *diag) {
  char *message = NULL;
  if (!LLVMVerifyModule(m, LLVMReturnStatusAction, &message)) {
    LLVMDisposeMessage(message);
    return DMLC_OK;
  }
  dmlc_diag_set(diag, DMLC_ERROR_INTERNAL, "the generated LLVM IR is invalid: %s",
                message ? message : "");
  LLVMDisposeMessage(message);
  return DMLC_ERROR_INTERNAL;
}

/* The emitter writes the vector code, the unrolling and the loop order
 * itself, so the JIT runs a short function pipeline instead of O2: SROA
 * (the emitter's variables to registers), CSE, InstCombine and SimplifyCFG
 * to clean up its address arithmetic and branches, loop rotation and LICM
 * (loop-invariant loads and splats out of the loops), GVN. O2 made the same
 * inner loops (compared instruction by instruction on every bench_cpu
 * workload, and within the noise in bench_cpu), and its inliner, loop
 * unswitching, idiom recognition, induction-variable passes and second
 * rounds took a quarter to a third of every compile: hardmax.dmlir 10.7 ->
 * 8.9 ms, an argmax over axis 0 of [1024,1024] 25.6 -> 18.0 ms. Ahead-of-time
 * compiles keep their -O level's default pipeline. InstCombine runs
 * without verify-fixpoint, as in LLVM's own pipelines: with it, a kernel
 * needing a second round aborts the process. */
const char *const dmlc_llvm_jit_passes =
    "function(sroa,early-cse<memssa>,instcombine<no-verify-fixpoint>,simplifycfg,loop(loop-rotate),"
    "loop-mssa(licm),gvn,instcombine<no-verify-fixpoint>,simplifycfg)";

/* The fast tier's pipeline: the emitter's variables to registers, its
 * address arithmetic and branches cleaned up, and every loop with a known
 * short trip count unrolled fully, so that the fast register allocator,
 * which spills what lives across blocks, sees straight-line code. */
const char *const dmlc_llvm_jit_tiny_passes =
    "function(sroa,instcombine<no-verify-fixpoint>,simplifycfg,loop(loop-rotate,loop-unroll-full),"
    "instcombine<no-verify-fixpoint>,simplifycfg)";

/* Each tier's passes take the target machine its code generator uses: a
 * target machine makes a function's subtarget (X86's, with its lowering
 * tables) once, and the fast tier's passes on the optimizing machine made a
 * second one on every fresh context: hardmax.dmlir's first compile in a
 * process touched 600 new pages instead of 477 (about 11 us each on a
 * Zen 5 VM) and took 17-19 ms instead of 15-16; a fresh context's 8.5
 * instead of 6.7. The passes' output is the same. */
static dmlc_status optimize(dmlc_llvm_jit *jit, LLVMModuleRef m, bool fast, dmlc_diag *diag) {
  LLVMPassBuilderOptionsRef options = LLVMCreatePassBuilderOptions();
  LLVMErrorRef err = LLVMRunPasses(m, fast ? dmlc_llvm_jit_tiny_passes : dmlc_llvm_jit_passes,
                                   fast ? jit->fast_tm : jit->tm, options);
  LLVMDisposePassBuilderOptions(options);
  return err ? llvm_error(diag, DMLC_ERROR_INTERNAL, "optimizing a kernel", err) : DMLC_OK;
}

static char *copy_string(const char *s, size_t n) {
  char *copy = malloc(n + 1);
  if (copy) {
    memcpy(copy, s, n);
    copy[n] = '\0';
  }
  return copy;
}

/* Prints m and its assembly. The code generator rewrites the IR it runs on,
 * so the assembly comes from a clone and m stays as optimized. */
static dmlc_status render(LLVMTargetMachineRef tm, LLVMModuleRef m, dmlc_llvm_text *text,
                          dmlc_diag *diag) {
  char *ir = LLVMPrintModuleToString(m);
  text->llvm_ir = copy_string(ir, strlen(ir));
  LLVMDisposeMessage(ir);
  LLVMModuleRef clone = LLVMCloneModule(m);
  LLVMMemoryBufferRef buffer = NULL;
  char *message = NULL;
  const LLVMBool failed =
      LLVMTargetMachineEmitToMemoryBuffer(tm, clone, LLVMAssemblyFile, &message, &buffer);
  LLVMDisposeModule(clone);
  if (failed) {
    dmlc_diag_set(diag, DMLC_ERROR_INTERNAL, "cannot print a kernel's assembly: %s",
                  message ? message : "");
    LLVMDisposeMessage(message);
    dmlc_llvm_text_free(text);
    return DMLC_ERROR_INTERNAL;
  }
  text->assembly = copy_string(LLVMGetBufferStart(buffer), LLVMGetBufferSize(buffer));
  LLVMDisposeMemoryBuffer(buffer);
  if (!text->llvm_ir || !text->assembly) {
    dmlc_llvm_text_free(text);
    return dmlc_diag_set(diag, DMLC_ERROR_OUT_OF_MEMORY, "out of memory printing a kernel");
  }
  return DMLC_OK;
}

static dmlc_status lookup(dmlc_llvm_jit *jit, const char *symbol, void **out, dmlc_diag *diag) {
  LLVMOrcExecutorAddress address = 0;
  LLVMErrorRef err = LLVMOrcLLJITLookup(jit->lljit, &address, symbol);
  if (err)
    return llvm_error(diag, DMLC_ERROR_INTERNAL, "cannot find a compiled kernel", err);
  *out = (void *)(uintptr_t)address;
  return DMLC_OK;
}

/* The fast tier's target machine (see FAST_MAX_ELEMENTS), created on
 * first use; NULL when it cannot be created. */
static LLVMTargetMachineRef fast_target_machine(dmlc_llvm_jit *jit) {
  if (!jit->fast_tm)
    jit->fast_tm = create_target_machine_at(jit, jit->llvm_target, LLVMCodeGenLevelNone);
  return jit->fast_tm;
}

/* jit->tm, created on first use. */
static dmlc_status full_target_machine(dmlc_llvm_jit *jit, dmlc_diag *diag) {
  if (!jit->tm && !(jit->tm = create_target_machine(jit, jit->llvm_target)))
    return dmlc_diag_set(diag, DMLC_ERROR_DEVICE, "cannot create a target machine for %s (%s)",
                         jit->triple, jit->cpu);
  return DMLC_OK;
}

/* Verifies, optimizes, renders (text != NULL) and loads (load) m, taking
 * ownership of it; fast: by the fast tier (its fast_tm exists). */
static dmlc_status finish_module(dmlc_llvm_jit *jit, bool fast, LLVMModuleRef m, bool load,
                                 dmlc_llvm_text *text, dmlc_diag *diag) {
  LLVMTargetMachineRef tm = fast ? jit->fast_tm : jit->tm;
  dmlc_status status = verify(m, diag);
  if (status == DMLC_OK)
    status = optimize(jit, m, fast, diag);
  if (status == DMLC_OK && text)
    status = render(tm, m, text, diag);
  if (status != DMLC_OK || !load) {
    LLVMDisposeModule(m);
    return status;
  }
  /* Code generation with the JIT's one target machine: LLJIT's own IR
   * layer would create a target machine for every module (a few ms each). */
  char *message = NULL;
  LLVMMemoryBufferRef obj = NULL;
  const LLVMBool failed =
      LLVMTargetMachineEmitToMemoryBuffer(tm, m, LLVMObjectFile, &message, &obj);
  LLVMDisposeModule(m);
  if (failed) {
    dmlc_diag_set(diag, DMLC_ERROR_INTERNAL, "cannot compile a kernel: %s", message ? message : "");
    LLVMDisposeMessage(message);
    if (text)
      dmlc_llvm_text_free(text);
    return DMLC_ERROR_INTERNAL;
  }
  LLVMErrorRef err =
      LLVMOrcLLJITAddObjectFile(jit->lljit, LLVMOrcLLJITGetMainJITDylib(jit->lljit), obj);
  if (err) {
    if (text)
      dmlc_llvm_text_free(text);
    return llvm_error(diag, DMLC_ERROR_INTERNAL, "cannot add a kernel to the JIT", err);
  }
  return DMLC_OK;
}

dmlc_status dmlc_llvm_jit_compile(dmlc_llvm_jit *jit, const dmlc_kdesc *k, dmlc_llvm_kernel *out,
                                  dmlc_llvm_text *text, dmlc_diag *diag) {
  char name[48], finish[64];
  snprintf(name, sizeof name, "dmlc_kernel_%llu", (unsigned long long)jit->next_id++);
  snprintf(finish, sizeof finish, "%s_finish", name);
  LLVMModuleRef m = module_create(jit, name);
  dmlc_cpu_kernel_info info = {0};
  dmlc_status status = dmlc_llvm_emit_kernel(m, k, name, &jit->target, &info, diag);
  if (status != DMLC_OK) {
    LLVMDisposeModule(m);
    return status;
  }
  /* The fast tier (see FAST_MAX_ELEMENTS), unless its target machine
   * cannot be created. */
  const bool fast =
      dmlc_kdesc_space_elements(k) <= jit->fast_max_elements && fast_target_machine(jit);
  if (!fast && (status = full_target_machine(jit, diag)) != DMLC_OK) {
    LLVMDisposeModule(m);
    return status;
  }
  DMLC_RETURN_IF_ERROR(finish_module(jit, fast, m, out != NULL, text, diag));
  if (!out)
    return DMLC_OK;
  void *fn = NULL, *finish_fn = NULL;
  status = lookup(jit, name, &fn, diag);
  if (status == DMLC_OK && info.has_finish)
    status = lookup(jit, finish, &finish_fn, diag);
  if (status != DMLC_OK) {
    dmlc_llvm_text_free(text);
    return status;
  }
  /* Object pointers to function pointers: POSIX guarantees this works. */
  memcpy(&out->fn, &fn, sizeof fn);
  memcpy(&out->finish, &finish_fn, sizeof finish_fn);
  out->info = info;
  out->fast_tier = fast;
  return DMLC_OK;
}

dmlc_status dmlc_llvm_jit_compile_ir(dmlc_llvm_jit *jit, const char *ir, const char *symbol,
                                     void **out_address, dmlc_llvm_text *text, dmlc_diag *diag) {
  char name[48];
  snprintf(name, sizeof name, "dmlc_ir_%llu", (unsigned long long)jit->next_id++);
  LLVMMemoryBufferRef buffer =
      LLVMCreateMemoryBufferWithMemoryRangeCopy(ir, strlen(ir), "dmlc_llvm_jit_compile_ir");
  LLVMModuleRef m = NULL;
  char *message = NULL;
  if (LLVMParseIRInContext(LLVMOrcThreadSafeContextGetContext(jit->tsc), buffer, &m, &message)) {
    dmlc_diag_set(diag, DMLC_ERROR_INVALID_ARGUMENT, "LLVM IR: %s", message ? message : "");
    LLVMDisposeMessage(message);
    return DMLC_ERROR_INVALID_ARGUMENT;
  }
  LLVMValueRef fn = LLVMGetNamedFunction(m, symbol);
  if (!fn || LLVMIsDeclaration(fn)) {
    LLVMDisposeModule(m);
    return dmlc_diag_set(diag, DMLC_ERROR_INVALID_ARGUMENT, "LLVM IR: no function @%s defined",
                         symbol);
  }
  LLVMSetValueName2(fn, name, strlen(name));
  LLVMSetTarget(m, jit->triple);
  LLVMSetDataLayout(m, jit->data_layout);
  const dmlc_status status = full_target_machine(jit, diag);
  if (status != DMLC_OK) {
    LLVMDisposeModule(m);
    return status;
  }
  DMLC_RETURN_IF_ERROR(finish_module(jit, false, m, true, text, diag));
  return lookup(jit, name, out_address, diag);
}
