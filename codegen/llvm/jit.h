/* A JIT for the host CPU, one per context: kernel descriptions -> LLVM IR
 * (codegen/llvm/emit.h) -> verified, optimized with a short function
 * pipeline (dmlc_llvm_jit_passes: the emitter writes the vector code, the
 * unrolling and the loop order itself) for the host's CPU and features ->
 * machine code loaded into one ORC LLJIT. Compiled code lives until the
 * JIT is destroyed. Not thread-safe (like its context). This header keeps
 * LLVM's types out of its users. */
#ifndef DMLC_CODEGEN_LLVM_JIT_H
#define DMLC_CODEGEN_LLVM_JIT_H

#include "codegen/kernel_desc.h"
#include "codegen/llvm/cpu_kernel.h"
#include "codegen/llvm/emit.h"

typedef struct dmlc_llvm_jit dmlc_llvm_jit;

/* A kernel loaded into the JIT. */
typedef struct dmlc_llvm_kernel {
  dmlc_cpu_kernel_fn fn;
  dmlc_cpu_finish_fn finish; /* NULL unless info.has_finish */
  bool fast_tier;            /* compiled by the fast tier (jit.c: FAST_MAX_ELEMENTS) */
  dmlc_cpu_kernel_info info;
} dmlc_llvm_kernel;

/* The optimized module as text: LLVM IR and the host's assembly. Both
 * malloc'ed; NULL when not asked for. */
typedef struct dmlc_llvm_text {
  char *llvm_ir;
  char *assembly;
} dmlc_llvm_text;

/* What the emitter is told for a target triple and its features (llc's
 * -mattr spelling, "+avx2,+fma,..."): vector width, PSIGN width, and the
 * non-temporal and prefetch thresholds the JIT uses too. */
void dmlc_llvm_target_for(const char *triple, const char *features, dmlc_llvm_target *out);

/* features (NULL: none) with what the code generator is kept from using
 * on triple after them ("-sse4a" on x86: jit.c says why), as an LLVM
 * string (LLVMDisposeMessage): every target machine's and function's
 * features but the "generic" CPU's, which has none of them. */
char *dmlc_llvm_features_avoiding(const char *triple, const char *features);

/* The caches the JIT's tuning assumes: one core's L2 and the last-level
 * cache one core sees, in bytes (0 when unknown). */
void dmlc_llvm_host_caches(uint64_t *l2_bytes, uint64_t *llc_bytes);

/* Sets t's thresholds that depend on this machine's caches and CPU model
 * (stream_prefetch_max_bytes, l2_bytes, row_prefetch_max_bytes,
 * long_column_runs, short_row_blocks, no_column_run_prefetch,
 * far_row_prefetch) as the JIT
 * sets them: for code that runs here (the JIT, and ahead-of-time code with
 * the host's defaults). Reads sysfs once per process. */
void dmlc_llvm_host_tuning(dmlc_llvm_target *t);

/* Initializes LLVM's native target once per process, then creates the host
 * target machine and the LLJIT. */
dmlc_status dmlc_llvm_jit_create(dmlc_llvm_jit **out, dmlc_diag *diag);
void dmlc_llvm_jit_destroy(dmlc_llvm_jit *jit);

/* The widest vector register, from the host's features (avx512f 64, avx or
 * avx2 32, else 16): what the emitter is told (dmlc_llvm_target). */
uint32_t dmlc_llvm_jit_vector_bytes(const dmlc_llvm_jit *jit);
const char *dmlc_llvm_jit_triple(const dmlc_llvm_jit *jit);
const char *dmlc_llvm_jit_cpu_name(const dmlc_llvm_jit *jit);
/* "DMLC_CPU=... DMLC_CPU_FEATURES=..." when the environment narrowed the
 * target (jit.c), else NULL. */
const char *dmlc_llvm_jit_override(const dmlc_llvm_jit *jit);

/* Compiles k. With out != NULL the code is loaded and out receives its
 * entry points; with text != NULL the optimized IR and assembly are kept
 * (text only, nothing loaded, when out is NULL). A module that fails LLVM's
 * verifier is DMLC_ERROR_INTERNAL with the verifier's message. */
dmlc_status dmlc_llvm_jit_compile(dmlc_llvm_jit *jit, const dmlc_kdesc *k, dmlc_llvm_kernel *out,
                                  dmlc_llvm_text *text, dmlc_diag *diag);

/* The same path for LLVM IR text that defines the function `symbol`
 * (tests, debugging): parsed, verified, optimized, loaded. */
dmlc_status dmlc_llvm_jit_compile_ir(dmlc_llvm_jit *jit, const char *ir, const char *symbol,
                                     void **out_address, dmlc_llvm_text *text, dmlc_diag *diag);

void dmlc_llvm_text_free(dmlc_llvm_text *text);

/* The new pass manager's pipeline the JIT runs on every kernel (jit.c says
 * why it is not O2); the emitter's unit test runs it too. */
extern const char *const dmlc_llvm_jit_passes;
/* The pipeline of the fast tier: kernels of a few elements, whose machine
 * code is generated at CodeGenOpt None (jit.c, FAST_MAX_ELEMENTS). */
extern const char *const dmlc_llvm_jit_tiny_passes;

#endif
