/* See aot.h. The kernels come from the JIT's emitter unchanged
 * (dmlc_llvm_emit_kernel), made internal; the entry points are built here
 * around them: each kernel gets its buffer table (read, outputs, scratch:
 * cpu_kernel.h) from the inputs, the outputs and the workspace, runs its
 * whole task space (or hands it to the caller's parallel_for) and then its
 * finish function. */
#include "codegen/llvm/aot.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <llvm-c/Analysis.h>
#include <llvm-c/BitWriter.h>
#include <llvm-c/Core.h>
#include <llvm-c/Target.h>
#include <llvm-c/TargetMachine.h>
#include <llvm-c/Transforms/PassBuilder.h>

#include "codegen/llvm/emit.h"
#include "codegen/llvm/jit.h"
#include "codegen/llvm/target_info.h"
#include "ir/strbuf.h"

/* Temporaries and scratch start at multiples of this (as on the JIT). A
 * kernel's task space goes to parallel_for in at most MAX_CHUNKS chunks of
 * at least MIN_CHUNK_BYTES of memory traffic each (the JIT's threshold):
 * a smaller kernel runs on the calling thread. */
enum {
  WORKSPACE_ALIGNMENT = 64,
  MAX_NAME = 200,
  MIN_CHUNK_BYTES = 32 * 1024,
  MAX_CHUNKS = 64,
  MAX_VARIANTS = 16
};

/* One CPU the code is built for: a module holds one, or (--mcpu=a,b,c)
 * several, each with its own kernels and a dispatcher picking one. */
typedef struct variant {
  char *cpu;                   /* malloc'ed */
  char *enabled;               /* every feature it enables, as +a,+b; malloc'ed */
  char *checked;               /* what the CPU check confirms, a,b; malloc'ed */
  dmlc_cpu_kernel_info *infos; /* per kernel */
} variant;

struct dmlc_llvm_aot {
  LLVMContextRef ctx;
  LLVMModuleRef module;
  LLVMTargetMachineRef tm;
  char *triple, *cpu, *features; /* LLVM-allocated; cpu as given ("a,b,c") */
  char *codegen_features;        /* dmlc_llvm_features_avoiding(features): LLVM's */
  /* The host's triple, CPU and features by default: the kernels are tuned
   * for this machine's caches too (dmlc_llvm_host_tuning), as the JIT's. */
  bool host_tuned;
  uint64_t workspace_bytes, scratch_offset;
  uint32_t num_variants;
  variant *variants;      /* in the order given */
  uint32_t *order;        /* variant indices, best first (the dispatcher's order) */
  uint64_t *temp_offsets; /* per temporary */
};

static pthread_once_t targets_once = PTHREAD_ONCE_INIT;

static void init_targets(void) {
  LLVMInitializeAllTargetInfos();
  LLVMInitializeAllTargets();
  LLVMInitializeAllTargetMCs();
  LLVMInitializeAllAsmPrinters();
  LLVMInitializeAllAsmParsers(); /* the CPU check is inline assembly */
}

void dmlc_llvm_aot_destroy(dmlc_llvm_aot *aot) {
  if (!aot)
    return;
  if (aot->module)
    LLVMDisposeModule(aot->module);
  if (aot->tm)
    LLVMDisposeTargetMachine(aot->tm);
  if (aot->ctx)
    LLVMContextDispose(aot->ctx);
  LLVMDisposeMessage(aot->triple);
  LLVMDisposeMessage(aot->cpu);
  LLVMDisposeMessage(aot->features);
  LLVMDisposeMessage(aot->codegen_features);
  for (uint32_t v = 0; aot->variants && v < aot->num_variants; v++) {
    free(aot->variants[v].cpu);
    free(aot->variants[v].enabled);
    free(aot->variants[v].checked);
    free(aot->variants[v].infos);
  }
  free(aot->variants);
  free(aot->order);
  free(aot->temp_offsets);
  free(aot);
}

uint64_t dmlc_llvm_aot_workspace_bytes(const dmlc_llvm_aot *aot) { return aot->workspace_bytes; }
const dmlc_cpu_kernel_info *dmlc_llvm_aot_kernel_info(const dmlc_llvm_aot *aot, uint32_t i) {
  return &aot->variants[0].infos[i];
}
uint64_t dmlc_llvm_aot_temp_offset(const dmlc_llvm_aot *aot, uint32_t temp) {
  return aot->temp_offsets[temp];
}
uint64_t dmlc_llvm_aot_scratch_offset(const dmlc_llvm_aot *aot) { return aot->scratch_offset; }
const char *dmlc_llvm_aot_triple(const dmlc_llvm_aot *aot) { return aot->triple; }
const char *dmlc_llvm_aot_cpu(const dmlc_llvm_aot *aot) { return aot->cpu; }
const char *dmlc_llvm_aot_features(const dmlc_llvm_aot *aot) { return aot->features; }
const char *dmlc_llvm_aot_checked_features(const dmlc_llvm_aot *aot) {
  return aot->num_variants == 1 ? aot->variants[0].checked : "";
}
uint32_t dmlc_llvm_aot_num_variants(const dmlc_llvm_aot *aot) { return aot->num_variants; }
const char *dmlc_llvm_aot_variant_cpu(const dmlc_llvm_aot *aot, uint32_t v) {
  return aot->variants[v].cpu;
}
const char *dmlc_llvm_aot_variant_checked(const dmlc_llvm_aot *aot, uint32_t v) {
  return aot->variants[v].checked;
}
uint32_t dmlc_llvm_aot_variant_rank(const dmlc_llvm_aot *aot, uint32_t v) {
  for (uint32_t r = 0; r < aot->num_variants; r++)
    if (aot->order[r] == v)
      return r;
  return 0;
}

static char *llvm_string(const char *s) { return LLVMCreateMessage(s); }

/* ---- the x86-64 CPU check ---- */

/* Where CPUID reports an LLVM feature: leaf, subleaf, register (0 EAX, 1
 * EBX, 2 ECX, 3 EDX), bit; and the XCR0 state the OS must enable for it
 * (AVX: SSE and AVX state; AVX-512: those and the opmask and ZMM state). */
typedef struct cpuid_bit {
  const char *name;
  uint32_t leaf, subleaf, reg, bit, xcr0;
} cpuid_bit;

enum { XCR0_AVX = 0x6, XCR0_AVX512 = 0xe6 };

static const cpuid_bit cpuid_bits[] = {
    {"cmov", 1, 0, 3, 15, 0},
    {"mmx", 1, 0, 3, 23, 0},
    {"fxsr", 1, 0, 3, 24, 0},
    {"sse", 1, 0, 3, 25, 0},
    {"sse2", 1, 0, 3, 26, 0},
    {"sse3", 1, 0, 2, 0, 0},
    {"pclmul", 1, 0, 2, 1, 0},
    {"ssse3", 1, 0, 2, 9, 0},
    {"fma", 1, 0, 2, 12, XCR0_AVX},
    {"cx16", 1, 0, 2, 13, 0},
    {"sse4.1", 1, 0, 2, 19, 0},
    {"sse4.2", 1, 0, 2, 20, 0},
    {"crc32", 1, 0, 2, 20, 0},
    {"movbe", 1, 0, 2, 22, 0},
    {"popcnt", 1, 0, 2, 23, 0},
    {"aes", 1, 0, 2, 25, 0},
    {"xsave", 1, 0, 2, 26, 0},
    {"avx", 1, 0, 2, 28, XCR0_AVX},
    {"f16c", 1, 0, 2, 29, XCR0_AVX},
    {"rdrnd", 1, 0, 2, 30, 0},
    {"bmi", 7, 0, 1, 3, 0},
    {"avx2", 7, 0, 1, 5, XCR0_AVX},
    {"bmi2", 7, 0, 1, 8, 0},
    {"avx512f", 7, 0, 1, 16, XCR0_AVX512},
    {"avx512dq", 7, 0, 1, 17, XCR0_AVX512},
    {"rdseed", 7, 0, 1, 18, 0},
    {"adx", 7, 0, 1, 19, 0},
    {"avx512ifma", 7, 0, 1, 21, XCR0_AVX512},
    {"avx512pf", 7, 0, 1, 26, XCR0_AVX512},
    {"avx512er", 7, 0, 1, 27, XCR0_AVX512},
    {"avx512cd", 7, 0, 1, 28, XCR0_AVX512},
    {"sha", 7, 0, 1, 29, 0},
    {"avx512bw", 7, 0, 1, 30, XCR0_AVX512},
    {"avx512vl", 7, 0, 1, 31, XCR0_AVX512},
    {"avx512vbmi", 7, 0, 2, 1, XCR0_AVX512},
    {"avx512vbmi2", 7, 0, 2, 6, XCR0_AVX512},
    {"gfni", 7, 0, 2, 8, 0},
    {"vaes", 7, 0, 2, 9, XCR0_AVX},
    {"vpclmulqdq", 7, 0, 2, 10, XCR0_AVX},
    {"avx512vnni", 7, 0, 2, 11, XCR0_AVX512},
    {"avx512bitalg", 7, 0, 2, 12, XCR0_AVX512},
    {"avx512vpopcntdq", 7, 0, 2, 14, XCR0_AVX512},
    {"avx512fp16", 7, 0, 3, 23, XCR0_AVX512},
    {"avxvnni", 7, 1, 0, 4, XCR0_AVX},
    {"avx512bf16", 7, 1, 0, 5, XCR0_AVX512},
    {"sahf", 0x80000001, 0, 2, 0, 0},
    {"lzcnt", 0x80000001, 0, 2, 5, 0},
    {"sse4a", 0x80000001, 0, 2, 6, 0},
    {"prfchw", 0x80000001, 0, 2, 8, 0},
    {"xop", 0x80000001, 0, 2, 11, XCR0_AVX},
    {"fma4", 0x80000001, 0, 2, 16, XCR0_AVX},
    {"tbm", 0x80000001, 0, 2, 21, 0},
};
enum { NUM_CPUID_BITS = sizeof cpuid_bits / sizeof *cpuid_bits };

static bool is_x86_64(const char *triple) { return strncmp(triple, "x86_64", 6) == 0; }

static const cpuid_bit *cpuid_bit_named(const char *name, size_t len) {
  for (size_t i = 0; i < NUM_CPUID_BITS; i++)
    if (strlen(cpuid_bits[i].name) == len && strncmp(cpuid_bits[i].name, name, len) == 0)
      return &cpuid_bits[i];
  return NULL;
}

char *dmlc_llvm_cpuid_features(const char *triple, const char *enabled) {
  dmlc_strbuf sb = {0};
  dmlc_strbuf_append(&sb, "");
  for (const char *p = enabled; is_x86_64(triple) && p && *p;) {
    const char *comma = strchr(p, ',');
    const size_t len = comma ? (size_t)(comma - p) : strlen(p);
    if (cpuid_bit_named(p, len))
      dmlc_strbuf_printf(&sb, "%s%.*s", sb.len ? "," : "", (int)len, p);
    p = comma ? comma + 1 : NULL;
  }
  return dmlc_strbuf_finish(&sb);
}

char *dmlc_llvm_plus_list(const char *list) {
  dmlc_strbuf sb = {0};
  dmlc_strbuf_append(&sb, "");
  for (const char *p = list; p && *p;) {
    const char *comma = strchr(p, ',');
    const size_t len = comma ? (size_t)(comma - p) : strlen(p);
    dmlc_strbuf_printf(&sb, "%s+%.*s", sb.len ? "," : "", (int)len, p);
    p = comma ? comma + 1 : NULL;
  }
  return dmlc_strbuf_finish(&sb);
}

static uint32_t count_checked(const char *checked) {
  uint32_t n = *checked ? 1 : 0;
  for (const char *p = checked; *p; p++)
    n += *p == ',';
  return n;
}

static uint64_t variant_score(const dmlc_llvm_aot *aot, uint32_t v) {
  dmlc_llvm_target target;
  dmlc_llvm_target_for(aot->triple, aot->variants[v].enabled, &target);
  return (uint64_t)target.vector_bytes << 32 | count_checked(aot->variants[v].checked);
}

/* Variant v: its CPU (len bytes at cpu) with features, checked on LLVM's
 * tables. */
static dmlc_status make_variant(dmlc_llvm_aot *aot, uint32_t v, const char *cpu, size_t len,
                                const char *features, dmlc_diag *diag) {
  variant *var = &aot->variants[v];
  var->cpu = malloc(len + 1);
  if (!var->cpu)
    return dmlc_diag_set(diag, DMLC_ERROR_OUT_OF_MEMORY, "out of memory compiling");
  memcpy(var->cpu, cpu, len);
  var->cpu[len] = '\0';
  if (aot->num_variants > 1 && (!*var->cpu || strcmp(var->cpu, "native") == 0))
    return dmlc_diag_set(diag, DMLC_ERROR_INVALID_ARGUMENT,
                         "--mcpu=%s: every CPU of a multi-variant object is named (no empty "
                         "name, no 'native')",
                         aot->cpu);
  char *enabled = NULL, message[512];
  if (dmlc_llvm_target_features(aot->triple, var->cpu, features, &enabled, message,
                                sizeof message) != 0)
    return dmlc_diag_set(diag, DMLC_ERROR_INVALID_ARGUMENT, "%s", message);
  var->checked = dmlc_llvm_cpuid_features(aot->triple, enabled);
  var->enabled = dmlc_llvm_plus_list(enabled);
  free(enabled);
  if (!var->checked || !var->enabled)
    return dmlc_diag_set(diag, DMLC_ERROR_OUT_OF_MEMORY, "out of memory compiling");
  for (uint32_t w = 0; w < v; w++)
    if (strcmp(aot->variants[w].cpu, var->cpu) == 0)
      return dmlc_diag_set(diag, DMLC_ERROR_INVALID_ARGUMENT, "--mcpu=%s names CPU '%s' twice",
                           aot->cpu, var->cpu);
  return DMLC_OK;
}

/* The triple, CPU(s) and features as aot.h's defaults say; the variants,
 * best first; the target machine (for several variants the triple's
 * baseline: the variants' code carries its CPU in function attributes). */
static dmlc_status make_target(dmlc_llvm_aot *aot, const dmlc_llvm_aot_options *o,
                               dmlc_diag *diag) {
  char *host = LLVMGetDefaultTargetTriple();
  char *host_normal = LLVMNormalizeTargetTriple(host);
  LLVMDisposeMessage(host);
  aot->triple = o->triple ? LLVMNormalizeTargetTriple(o->triple) : llvm_string(host_normal);
  const bool is_host = strcmp(aot->triple, host_normal) == 0;
  LLVMDisposeMessage(host_normal);
  aot->host_tuned = is_host && !o->cpu && !o->features;
  if (o->cpu)
    aot->cpu = llvm_string(o->cpu);
  else
    aot->cpu = is_host ? LLVMGetHostCPUName() : llvm_string("generic");
  if (o->features)
    aot->features = llvm_string(o->features);
  else
    aot->features = is_host && !o->cpu ? LLVMGetHostCPUFeatures() : llvm_string("");
  LLVMTargetRef target;
  char *message = NULL;
  if (LLVMGetTargetFromTriple(aot->triple, &target, &message)) {
    dmlc_diag_set(diag, DMLC_ERROR_INVALID_ARGUMENT, "unknown target '%s': %s", aot->triple,
                  message ? message : "");
    LLVMDisposeMessage(message);
    return DMLC_ERROR_INVALID_ARGUMENT;
  }
  uint32_t n = 1;
  for (const char *p = aot->cpu; *p; p++)
    n += *p == ',';
  if (n > MAX_VARIANTS)
    return dmlc_diag_set(diag, DMLC_ERROR_INVALID_ARGUMENT,
                         "--mcpu names %u CPUs; a multi-variant object has at most %d", n,
                         MAX_VARIANTS);
  if (n > 1 && !is_x86_64(aot->triple))
    return dmlc_diag_set(diag, DMLC_ERROR_UNSUPPORTED,
                         "a multi-variant object (--mcpu=%s) needs a run-time CPU check, which "
                         "dmlc builds for x86-64 only, not %s",
                         aot->cpu, aot->triple);
  aot->variants = calloc(n, sizeof *aot->variants);
  aot->order = calloc(n, sizeof *aot->order);
  if (!aot->variants || !aot->order)
    return dmlc_diag_set(diag, DMLC_ERROR_OUT_OF_MEMORY, "out of memory compiling");
  aot->num_variants = n;
  const char *p = aot->cpu;
  for (uint32_t v = 0; v < n; v++) {
    const char *comma = strchr(p, ',');
    const size_t len = comma ? (size_t)(comma - p) : strlen(p);
    DMLC_RETURN_IF_ERROR(make_variant(aot, v, p, len, aot->features, diag));
    p = comma ? comma + 1 : p + len;
  }
  /* Best first: the widest vectors (what the kernels' speed follows), then
   * the most checked features; on a tie, the one named first. */
  for (uint32_t v = 0; v < n; v++) {
    uint32_t r = v;
    const uint64_t score = variant_score(aot, v);
    while (r > 0 && variant_score(aot, aot->order[r - 1]) < score) {
      aot->order[r] = aot->order[r - 1];
      r--;
    }
    aot->order[r] = v;
  }
  static const LLVMCodeGenOptLevel levels[4] = {LLVMCodeGenLevelNone, LLVMCodeGenLevelLess,
                                                LLVMCodeGenLevelDefault,
                                                LLVMCodeGenLevelAggressive};
  aot->codegen_features = dmlc_llvm_features_avoiding(aot->triple, aot->features);
  if (!aot->codegen_features)
    return dmlc_diag_set(diag, DMLC_ERROR_OUT_OF_MEMORY, "out of memory compiling");
  aot->tm = LLVMCreateTargetMachine(target, aot->triple, n > 1 ? "generic" : aot->cpu,
                                    n > 1 ? "" : aot->codegen_features, levels[o->opt_level],
                                    LLVMRelocPIC, LLVMCodeModelDefault);
  if (!aot->tm)
    return dmlc_diag_set(diag, DMLC_ERROR_INVALID_ARGUMENT,
                         "cannot create a target machine for '%s' (CPU '%s', features '%s')",
                         aot->triple, aot->cpu, aot->features);
  return DMLC_OK;
}

typedef struct builder {
  LLVMContextRef c;
  LLVMModuleRef m;
  LLVMBuilderRef b;
  LLVMTypeRef ptr, i32, i64, void_t;
  LLVMTypeRef kernel_ty, finish_ty, task_ty, pfor_ty;
} builder;

static LLVMValueRef i64c(const builder *b, uint64_t v) { return LLVMConstInt(b->i64, v, false); }

static void add_attribute(const builder *b, LLVMValueRef fn, const char *name) {
  const unsigned kind = LLVMGetEnumAttributeKindForName(name, strlen(name));
  LLVMAddAttributeAtIndex(fn, LLVMAttributeFunctionIndex, LLVMCreateEnumAttribute(b->c, kind, 0));
}

/* How many chunks a kernel's tasks go to parallel_for in; 1: none. */
static uint64_t chunks_of(const dmlc_cpu_kernel_info *info) {
  const uint64_t per_task = info->bytes_per_task ? info->bytes_per_task : 1;
  const uint64_t total =
      info->num_tasks > UINT64_MAX / per_task ? UINT64_MAX : info->num_tasks * per_task;
  uint64_t chunks = total / MIN_CHUNK_BYTES;
  chunks = chunks > MAX_CHUNKS ? MAX_CHUNKS : chunks;
  chunks = chunks > info->num_tasks ? info->num_tasks : chunks;
  return chunks ? chunks : 1;
}

/* void NAME_task<i>(void *buffers, uint32_t c): chunk c of the kernel's
 * tasks, [c * tasks / chunks, (c + 1) * tasks / chunks). */
static LLVMValueRef task_function(const builder *b, const char *name, LLVMValueRef kernel,
                                  uint64_t tasks, uint64_t chunks) {
  LLVMValueRef fn = LLVMAddFunction(b->m, name, b->task_ty);
  LLVMSetLinkage(fn, LLVMInternalLinkage);
  add_attribute(b, fn, "nounwind");
  LLVMPositionBuilderAtEnd(b->b, LLVMAppendBasicBlockInContext(b->c, fn, "entry"));
  LLVMValueRef c = LLVMBuildZExt(b->b, LLVMGetParam(fn, 1), b->i64, "chunk");
  LLVMValueRef next = LLVMBuildAdd(b->b, c, i64c(b, 1), "");
  LLVMValueRef first =
      LLVMBuildUDiv(b->b, LLVMBuildMul(b->b, c, i64c(b, tasks), ""), i64c(b, chunks), "first");
  LLVMValueRef end =
      LLVMBuildUDiv(b->b, LLVMBuildMul(b->b, next, i64c(b, tasks), ""), i64c(b, chunks), "end");
  LLVMValueRef args[3] = {LLVMGetParam(fn, 0), first, end};
  LLVMBuildCall2(b->b, b->kernel_ty, kernel, args, 3, "");
  LLVMBuildRetVoid(b->b);
  return fn;
}

/* The pointer a binding names, inside NAME_run_workspace. */
static LLVMValueRef bound(const builder *b, LLVMValueRef fn, dmlc_binding binding,
                          const uint64_t *temp_offsets) {
  LLVMValueRef base = binding.kind == DMLC_BINDING_INPUT    ? LLVMGetParam(fn, 0)
                      : binding.kind == DMLC_BINDING_OUTPUT ? LLVMGetParam(fn, 1)
                                                            : LLVMGetParam(fn, 2);
  if (binding.kind == DMLC_BINDING_TEMP) {
    LLVMValueRef off = i64c(b, temp_offsets[binding.index]);
    LLVMTypeRef i8 = LLVMInt8TypeInContext(b->c);
    return LLVMBuildGEP2(b->b, i8, base, &off, 1, "temp");
  }
  LLVMValueRef idx = i64c(b, binding.index);
  LLVMValueRef slot = LLVMBuildGEP2(b->b, b->ptr, base, &idx, 1, "");
  return LLVMBuildLoad2(b->b, b->ptr, slot, binding.kind == DMLC_BINDING_INPUT ? "in" : "out");
}

/* {eax, ebx, ecx, edx} of CPUID leaf/subleaf. */
static LLVMValueRef cpuid(const builder *b, LLVMBuilderRef ib, uint32_t leaf, uint32_t subleaf) {
  LLVMTypeRef regs[4] = {b->i32, b->i32, b->i32, b->i32}, params[2] = {b->i32, b->i32};
  LLVMTypeRef ret = LLVMStructTypeInContext(b->c, regs, 4, false);
  LLVMTypeRef fty = LLVMFunctionType(ret, params, 2, false);
  static const char text[] = "cpuid";
  static const char constraints[] = "={ax},={bx},={cx},={dx},{ax},{cx},~{dirflag},~{fpsr},~{flags}";
  LLVMValueRef fn =
      LLVMGetInlineAsm(fty, (char *)text, strlen(text), (char *)constraints, strlen(constraints),
                       false, false, LLVMInlineAsmDialectATT, false);
  LLVMValueRef args[2] = {LLVMConstInt(b->i32, leaf, false), LLVMConstInt(b->i32, subleaf, false)};
  return LLVMBuildCall2(ib, fty, fn, args, 2, "cpuid");
}

/* i32 PREFIX_cpu_check(): 1 when the running CPU has every feature in
 * checked (and the OS saves the vector state they need), 2 otherwise. */
static LLVMValueRef cpu_check_function(const builder *b, const char *prefix, const char *checked) {
  char sym[MAX_NAME + 32];
  snprintf(sym, sizeof sym, "%s_cpu_check", prefix);
  LLVMValueRef fn = LLVMAddFunction(b->m, sym, LLVMFunctionType(b->i32, NULL, 0, false));
  LLVMSetLinkage(fn, LLVMInternalLinkage);
  add_attribute(b, fn, "nounwind");
  add_attribute(b, fn, "noinline");
  LLVMBuilderRef ib = LLVMCreateBuilderInContext(b->c);
  LLVMBasicBlockRef entry = LLVMAppendBasicBlockInContext(b->c, fn, "entry");
  LLVMPositionBuilderAtEnd(ib, entry);
  LLVMValueRef max_leaf = LLVMBuildExtractValue(ib, cpuid(b, ib, 0, 0), 0, "max_leaf");
  LLVMValueRef max_ext = LLVMBuildExtractValue(ib, cpuid(b, ib, 0x80000000u, 0), 0, "max_ext");
  LLVMValueRef leaf1 = cpuid(b, ib, 1, 0);
  LLVMValueRef ok = LLVMConstInt(LLVMInt1TypeInContext(b->c), 1, false);
  uint32_t xcr0 = 0;
  for (const char *p = checked; p && *p;) {
    const char *comma = strchr(p, ',');
    const size_t len = comma ? (size_t)(comma - p) : strlen(p);
    const cpuid_bit *bit = cpuid_bit_named(p, len);
    p = comma ? comma + 1 : NULL;
    if (!bit)
      continue;
    xcr0 |= bit->xcr0;
    /* An unsupported leaf returns another leaf's bits: they count only when
     * the leaf exists. */
    LLVMValueRef regs = bit->leaf == 1 ? leaf1 : cpuid(b, ib, bit->leaf, bit->subleaf);
    LLVMValueRef exists =
        LLVMBuildICmp(ib, LLVMIntUGE, bit->leaf >= 0x80000000u ? max_ext : max_leaf,
                      LLVMConstInt(b->i32, bit->leaf, false), "");
    LLVMValueRef reg = LLVMBuildExtractValue(ib, regs, bit->reg, "");
    LLVMValueRef set = LLVMBuildICmp(
        ib, LLVMIntNE, LLVMBuildAnd(ib, reg, LLVMConstInt(b->i32, 1u << bit->bit, false), ""),
        LLVMConstInt(b->i32, 0, false), "");
    ok = LLVMBuildAnd(ib, ok, LLVMBuildAnd(ib, exists, set, ""), "");
  }
  LLVMBasicBlockRef done = LLVMAppendBasicBlockInContext(b->c, fn, "done");
  LLVMValueRef yes = LLVMConstInt(b->i32, 1, false), no = LLVMConstInt(b->i32, 2, false);
  if (!xcr0) {
    LLVMBuildBr(ib, done);
    LLVMPositionBuilderAtEnd(ib, done);
    LLVMBuildRet(ib, LLVMBuildSelect(ib, ok, yes, no, ""));
    LLVMDisposeBuilder(ib);
    return fn;
  }
  /* XGETBV faults unless the OS set CR4.OSXSAVE (CPUID.1:ECX bit 27). */
  LLVMValueRef osxsave = LLVMBuildICmp(ib, LLVMIntNE,
                                       LLVMBuildAnd(ib, LLVMBuildExtractValue(ib, leaf1, 2, ""),
                                                    LLVMConstInt(b->i32, 1u << 27, false), ""),
                                       LLVMConstInt(b->i32, 0, false), "osxsave");
  LLVMBasicBlockRef xgetbv = LLVMAppendBasicBlockInContext(b->c, fn, "xgetbv");
  LLVMBuildCondBr(ib, LLVMBuildAnd(ib, ok, osxsave, ""), xgetbv, done);
  LLVMPositionBuilderAtEnd(ib, xgetbv);
  LLVMTypeRef regs[2] = {b->i32, b->i32}, param = b->i32;
  LLVMTypeRef fty =
      LLVMFunctionType(LLVMStructTypeInContext(b->c, regs, 2, false), &param, 1, false);
  static const char text[] = "xgetbv", constraints[] = "={ax},={dx},{cx}";
  LLVMValueRef asm_fn =
      LLVMGetInlineAsm(fty, (char *)text, strlen(text), (char *)constraints, strlen(constraints),
                       false, false, LLVMInlineAsmDialectATT, false);
  LLVMValueRef zero = LLVMConstInt(b->i32, 0, false);
  LLVMValueRef lo = LLVMBuildExtractValue(ib, LLVMBuildCall2(ib, fty, asm_fn, &zero, 1, ""), 0, "");
  LLVMValueRef mask = LLVMConstInt(b->i32, xcr0, false);
  LLVMValueRef saved = LLVMBuildICmp(ib, LLVMIntEQ, LLVMBuildAnd(ib, lo, mask, ""), mask, "");
  LLVMValueRef from_xgetbv = LLVMBuildSelect(ib, saved, yes, no, "");
  LLVMBuildBr(ib, done);
  LLVMPositionBuilderAtEnd(ib, done);
  LLVMValueRef phi = LLVMBuildPhi(ib, b->i32, "result");
  LLVMValueRef values[2] = {no, from_xgetbv};
  LLVMBasicBlockRef blocks[2] = {entry, xgetbv};
  LLVMAddIncoming(phi, values, blocks, 2);
  LLVMBuildRet(ib, phi);
  LLVMDisposeBuilder(ib);
  return fn;
}

/* At the top of NAME_run_workspace: returns DMLC_AOT_ERROR_CPU unless the
 * CPU check passed, running it once and keeping its answer in an internal
 * word (0 unknown, 1 yes, 2 no; relaxed atomics: any thread may store the
 * same answer). */
static void cpu_gate(builder *b, LLVMValueRef fn, const char *name, const char *checked) {
  char sym[MAX_NAME + 32];
  snprintf(sym, sizeof sym, "%s_cpu_state", name);
  LLVMValueRef state = LLVMAddGlobal(b->m, b->i32, sym);
  LLVMSetLinkage(state, LLVMInternalLinkage);
  LLVMSetInitializer(state, LLVMConstInt(b->i32, 0, false));
  LLVMValueRef check = cpu_check_function(b, name, checked);
  LLVMValueRef known = LLVMBuildLoad2(b->b, b->i32, state, "cpu_state");
  LLVMSetOrdering(known, LLVMAtomicOrderingMonotonic);
  LLVMSetAlignment(known, 4);
  LLVMBasicBlockRef run_check = LLVMAppendBasicBlockInContext(b->c, fn, "cpu_check");
  LLVMBasicBlockRef decide = LLVMAppendBasicBlockInContext(b->c, fn, "cpu_decide");
  LLVMBasicBlockRef fail = LLVMAppendBasicBlockInContext(b->c, fn, "cpu_missing");
  LLVMBasicBlockRef go = LLVMAppendBasicBlockInContext(b->c, fn, "cpu_ok");
  LLVMBasicBlockRef from = LLVMGetInsertBlock(b->b);
  LLVMBuildCondBr(b->b, LLVMBuildICmp(b->b, LLVMIntEQ, known, LLVMConstInt(b->i32, 0, false), ""),
                  run_check, decide);
  LLVMPositionBuilderAtEnd(b->b, run_check);
  LLVMValueRef fresh =
      LLVMBuildCall2(b->b, LLVMFunctionType(b->i32, NULL, 0, false), check, NULL, 0, "");
  LLVMValueRef store = LLVMBuildStore(b->b, fresh, state);
  LLVMSetOrdering(store, LLVMAtomicOrderingMonotonic);
  LLVMSetAlignment(store, 4);
  LLVMBuildBr(b->b, decide);
  LLVMPositionBuilderAtEnd(b->b, decide);
  LLVMValueRef answer = LLVMBuildPhi(b->b, b->i32, "cpu");
  LLVMValueRef values[2] = {known, fresh};
  LLVMBasicBlockRef blocks[2] = {from, run_check};
  LLVMAddIncoming(answer, values, blocks, 2);
  LLVMBuildCondBr(b->b, LLVMBuildICmp(b->b, LLVMIntEQ, answer, LLVMConstInt(b->i32, 1, false), ""),
                  go, fail);
  LLVMPositionBuilderAtEnd(b->b, fail);
  LLVMBuildRet(b->b, LLVMConstInt(b->i32, DMLC_AOT_ERROR_CPU, false));
  LLVMPositionBuilderAtEnd(b->b, go);
}

/* int PREFIX_run_workspace(inputs, outputs, workspace, parallel_for, user),
 * behind the CPU check of checked unless that is NULL. */
static LLVMValueRef run_workspace(builder *b, const char *prefix, const char *checked,
                                  const dmlc_kernel_plan *plan, LLVMValueRef *kernels,
                                  LLVMValueRef *finishes, const dmlc_cpu_kernel_info *infos,
                                  const uint64_t *temp_offsets, uint64_t scratch_offset) {
  char sym[MAX_NAME + 32];
  snprintf(sym, sizeof sym, "%s_run_workspace", prefix);
  LLVMTypeRef params[5] = {b->ptr, b->ptr, b->ptr, b->ptr, b->ptr};
  LLVMValueRef fn = LLVMAddFunction(b->m, sym, LLVMFunctionType(b->i32, params, 5, false));
  add_attribute(b, fn, "nounwind");
  /* Allocas in the entry block, the code from "body" on. */
  LLVMBasicBlockRef entry = LLVMAppendBasicBlockInContext(b->c, fn, "entry");
  LLVMBasicBlockRef body = LLVMAppendBasicBlockInContext(b->c, fn, "body");
  LLVMBuilderRef allocas = LLVMCreateBuilderInContext(b->c);
  LLVMPositionBuilderAtEnd(allocas, entry);
  LLVMPositionBuilderAtEnd(b->b, body);
  if (checked && *checked)
    cpu_gate(b, fn, prefix, checked);
  LLVMValueRef pfor = LLVMGetParam(fn, 3), user = LLVMGetParam(fn, 4);
  LLVMValueRef sequential = LLVMBuildIsNull(b->b, pfor, "sequential");
  for (uint32_t i = 0; i < plan->num_kernels; i++) {
    const dmlc_kdesc *k = &plan->kernels[i];
    LLVMTypeRef table_ty = LLVMArrayType2(b->ptr, 2 + k->num_outputs);
    LLVMValueRef table = LLVMBuildAlloca(allocas, table_ty, "buffers");
    LLVMValueRef slots[2 + DMLC_KDESC_MAX_OUTPUTS];
    slots[0] = k->has_read ? bound(b, fn, k->read_binding, temp_offsets) : LLVMConstNull(b->ptr);
    for (uint32_t o = 0; o < k->num_outputs; o++)
      slots[1 + o] = bound(b, fn, k->outputs[o].binding, temp_offsets);
    LLVMValueRef off = i64c(b, scratch_offset);
    slots[1 + k->num_outputs] =
        infos[i].scratch_bytes
            ? LLVMBuildGEP2(b->b, LLVMInt8TypeInContext(b->c), LLVMGetParam(fn, 2), &off, 1, "")
            : LLVMConstNull(b->ptr);
    for (uint32_t s = 0; s < 2 + k->num_outputs; s++) {
      LLVMValueRef idx = i64c(b, s);
      LLVMBuildStore(b->b, slots[s], LLVMBuildGEP2(b->b, b->ptr, table, &idx, 1, ""));
    }
    const uint64_t tasks = infos[i].num_tasks, chunks = chunks_of(&infos[i]);
    LLVMBasicBlockRef seq = LLVMAppendBasicBlockInContext(b->c, fn, "seq");
    LLVMBasicBlockRef par = LLVMAppendBasicBlockInContext(b->c, fn, "par");
    LLVMBasicBlockRef done = LLVMAppendBasicBlockInContext(b->c, fn, "done");
    LLVMBuildCondBr(b->b,
                    chunks <= 1 ? LLVMConstInt(LLVMInt1TypeInContext(b->c), 1, false) : sequential,
                    seq, par);
    LLVMPositionBuilderAtEnd(b->b, seq);
    LLVMValueRef args[3] = {table, i64c(b, 0), i64c(b, tasks)};
    LLVMBuildCall2(b->b, b->kernel_ty, kernels[i], args, 3, "");
    LLVMBuildBr(b->b, done);
    LLVMPositionBuilderAtEnd(b->b, par);
    char task_name[MAX_NAME + 32];
    snprintf(task_name, sizeof task_name, "%s_task%u", prefix, i);
    LLVMValueRef task = task_function(b, task_name, kernels[i], tasks, chunks);
    LLVMPositionBuilderAtEnd(b->b, par);
    LLVMValueRef pargs[4] = {user, LLVMConstInt(b->i32, chunks, false), task, table};
    LLVMBuildCall2(b->b, b->pfor_ty, pfor, pargs, 4, "");
    LLVMBuildBr(b->b, done);
    LLVMPositionBuilderAtEnd(b->b, done);
    if (finishes[i])
      LLVMBuildCall2(b->b, b->finish_ty, finishes[i], &table, 1, "");
  }
  LLVMBuildRet(b->b, LLVMConstInt(b->i32, 0, false));
  LLVMBuildBr(allocas, body);
  LLVMDisposeBuilder(allocas);
  return fn;
}

/* NAME_run and NAME_run_parallel: the workspace on the stack. */
static void run_on_stack(builder *b, const char *name, const char *suffix, bool parallel,
                         uint64_t workspace_bytes, bool probe_stack) {
  char sym[MAX_NAME + 32], target[MAX_NAME + 32];
  snprintf(sym, sizeof sym, "%s%s", name, suffix);
  snprintf(target, sizeof target, "%s_run_workspace", name);
  LLVMTypeRef params[4] = {b->ptr, b->ptr, b->ptr, b->ptr};
  LLVMValueRef fn =
      LLVMAddFunction(b->m, sym, LLVMFunctionType(b->i32, params, parallel ? 4 : 2, false));
  add_attribute(b, fn, "nounwind");
  if (probe_stack) {
    /* A workspace larger than a page must not skip the guard page. */
    LLVMAddAttributeAtIndex(fn, LLVMAttributeFunctionIndex,
                            LLVMCreateStringAttribute(b->c, "probe-stack", 11, "inline-asm", 10));
  }
  LLVMPositionBuilderAtEnd(b->b, LLVMAppendBasicBlockInContext(b->c, fn, "entry"));
  if (workspace_bytes > DMLC_AOT_STACK_WORKSPACE) {
    LLVMBuildRet(b->b, LLVMConstInt(b->i32, DMLC_AOT_ERROR_WORKSPACE, false));
    return;
  }
  LLVMTypeRef ws_ty =
      LLVMArrayType2(LLVMInt8TypeInContext(b->c), workspace_bytes ? workspace_bytes : 1);
  LLVMValueRef ws = LLVMBuildAlloca(b->b, ws_ty, "workspace");
  LLVMSetAlignment(ws, WORKSPACE_ALIGNMENT);
  LLVMValueRef callee = LLVMGetNamedFunction(b->m, target);
  LLVMTypeRef wparams[5] = {b->ptr, b->ptr, b->ptr, b->ptr, b->ptr};
  LLVMValueRef args[5] = {LLVMGetParam(fn, 0), LLVMGetParam(fn, 1), ws,
                          parallel ? LLVMGetParam(fn, 2) : LLVMConstNull(b->ptr),
                          parallel ? LLVMGetParam(fn, 3) : LLVMConstNull(b->ptr)};
  LLVMValueRef r =
      LLVMBuildCall2(b->b, LLVMFunctionType(b->i32, wparams, 5, false), callee, args, 5, "");
  LLVMBuildRet(b->b, r);
}

static uint64_t align_up(uint64_t v) {
  return (v + WORKSPACE_ALIGNMENT - 1) / WORKSPACE_ALIGNMENT * WORKSPACE_ALIGNMENT;
}

/* Every function defined after `after` (NULL: all) compiles for cpu with
 * features, as clang's target attribute would have it. */
static void tag_functions(const builder *b, LLVMValueRef after, const char *cpu,
                          const char *features) {
  for (LLVMValueRef fn = after ? LLVMGetNextFunction(after) : LLVMGetFirstFunction(b->m); fn;
       fn = LLVMGetNextFunction(fn)) {
    if (LLVMIsDeclaration(fn))
      continue;
    LLVMAddAttributeAtIndex(
        fn, LLVMAttributeFunctionIndex,
        LLVMCreateStringAttribute(b->c, "target-cpu", 10, cpu, (unsigned)strlen(cpu)));
    if (*features)
      LLVMAddAttributeAtIndex(fn, LLVMAttributeFunctionIndex,
                              LLVMCreateStringAttribute(b->c, "target-features", 15, features,
                                                        (unsigned)strlen(features)));
  }
}

/* Variant v's kernels and its PREFIX_run_workspace (returned in *out);
 * *scratch grows to its largest scratch. */
static dmlc_status build_variant(dmlc_llvm_aot *aot, builder *b, const dmlc_kernel_plan *plan,
                                 const char *name, uint32_t v, uint64_t *scratch, LLVMValueRef *out,
                                 dmlc_diag *diag) {
  variant *var = &aot->variants[v];
  const bool multi = aot->num_variants > 1;
  char prefix[MAX_NAME + 16];
  if (multi)
    snprintf(prefix, sizeof prefix, "%s_v%u", name, v);
  else
    snprintf(prefix, sizeof prefix, "%s", name);
  dmlc_llvm_target target;
  dmlc_llvm_target_for(aot->triple, var->enabled, &target);
  if (aot->host_tuned)
    dmlc_llvm_host_tuning(&target);
  const uint32_t n = plan->num_kernels;
  LLVMValueRef *kernels = calloc(n ? n : 1, sizeof *kernels);
  LLVMValueRef *finishes = calloc(n ? n : 1, sizeof *finishes);
  dmlc_cpu_kernel_info *infos = var->infos = calloc(n ? n : 1, sizeof *infos);
  dmlc_status status = DMLC_OK;
  if (!kernels || !finishes || !infos)
    status = dmlc_diag_set(diag, DMLC_ERROR_OUT_OF_MEMORY, "out of memory compiling");
  LLVMValueRef last = LLVMGetLastFunction(b->m);
  for (uint32_t i = 0; status == DMLC_OK && i < n; i++) {
    char kname[MAX_NAME + 48], fname[MAX_NAME + 64];
    snprintf(kname, sizeof kname, "%s_kernel%u", prefix, i);
    snprintf(fname, sizeof fname, "%s_finish", kname);
    status = dmlc_llvm_emit_kernel(b->m, &plan->kernels[i], kname, &target, &infos[i], diag);
    if (status != DMLC_OK)
      break;
    kernels[i] = LLVMGetNamedFunction(b->m, kname);
    LLVMSetLinkage(kernels[i], LLVMInternalLinkage);
    if (infos[i].has_finish) {
      finishes[i] = LLVMGetNamedFunction(b->m, fname);
      LLVMSetLinkage(finishes[i], LLVMInternalLinkage);
    }
    if (infos[i].scratch_bytes > *scratch)
      *scratch = infos[i].scratch_bytes;
  }
  if (status == DMLC_OK) {
    *out = run_workspace(b, prefix, multi ? NULL : var->checked, plan, kernels, finishes, infos,
                         aot->temp_offsets, aot->scratch_offset);
    if (multi) {
      LLVMSetLinkage(*out, LLVMInternalLinkage);
      tag_functions(b, last, var->cpu, aot->codegen_features);
    }
  }
  free(kernels);
  free(finishes);
  return status;
}

/* In fn: the dispatcher's state, chosen on first use (relaxed atomics:
 * every thread that chooses stores the same answer). */
static LLVMValueRef current_state(const builder *b, LLVMValueRef fn, LLVMValueRef state,
                                  LLVMValueRef choose) {
  LLVMTypeRef check_ty = LLVMFunctionType(b->i32, NULL, 0, false);
  LLVMValueRef zero = LLVMConstInt(b->i32, 0, false);
  LLVMValueRef known = LLVMBuildLoad2(b->b, b->i32, state, "state");
  LLVMSetOrdering(known, LLVMAtomicOrderingMonotonic);
  LLVMSetAlignment(known, 4);
  LLVMBasicBlockRef from = LLVMGetInsertBlock(b->b);
  LLVMBasicBlockRef pick = LLVMAppendBasicBlockInContext(b->c, fn, "choose");
  LLVMBasicBlockRef have = LLVMAppendBasicBlockInContext(b->c, fn, "have");
  LLVMBuildCondBr(b->b, LLVMBuildICmp(b->b, LLVMIntEQ, known, zero, ""), pick, have);
  LLVMPositionBuilderAtEnd(b->b, pick);
  LLVMValueRef fresh = LLVMBuildCall2(b->b, check_ty, choose, NULL, 0, "");
  LLVMValueRef store = LLVMBuildStore(b->b, fresh, state);
  LLVMSetOrdering(store, LLVMAtomicOrderingMonotonic);
  LLVMSetAlignment(store, 4);
  LLVMBuildBr(b->b, have);
  LLVMPositionBuilderAtEnd(b->b, have);
  LLVMValueRef phi = LLVMBuildPhi(b->b, b->i32, "chosen");
  LLVMValueRef values[2] = {known, fresh};
  LLVMBasicBlockRef blocks[2] = {from, pick};
  LLVMAddIncoming(phi, values, blocks, 2);
  return phi;
}

/* The dispatcher of a multi-variant module. NAME_cpu_state holds 0 (not
 * chosen yet), v + 1 (variant v) or n + 1 (none runs here).
 *   i32 NAME_choose(): the best variant whose CPU check passes, as a state;
 *   i32 NAME_run_workspace(...): the chosen variant's, or ERROR_CPU;
 *   i32 NAME_select_variant(i32 v): -1 chooses again, else forces v when the
 *       CPU has what it needs (0; ERROR_CPU; ERROR_VARIANT out of range);
 *   i32 NAME_variant(): the variant in use, -1 when none can run. */
static void build_dispatcher(dmlc_llvm_aot *aot, builder *b, const char *name,
                             const LLVMValueRef *variant_runs) {
  const uint32_t n = aot->num_variants;
  char sym[MAX_NAME + 48];
  LLVMTypeRef check_ty = LLVMFunctionType(b->i32, NULL, 0, false);
  LLVMValueRef *checks = calloc(n, sizeof *checks);
  if (!checks)
    return; /* the module then fails verification: reported as out of memory below */
  for (uint32_t v = 0; v < n; v++) {
    snprintf(sym, sizeof sym, "%s_v%u", name, v);
    checks[v] = cpu_check_function(b, sym, aot->variants[v].checked);
  }
  LLVMValueRef zero = LLVMConstInt(b->i32, 0, false);
  LLVMValueRef none = LLVMConstInt(b->i32, n + 1, false);
  snprintf(sym, sizeof sym, "%s_cpu_state", name);
  LLVMValueRef state = LLVMAddGlobal(b->m, b->i32, sym);
  LLVMSetLinkage(state, LLVMInternalLinkage);
  LLVMSetInitializer(state, zero);

  /* NAME_choose */
  snprintf(sym, sizeof sym, "%s_choose", name);
  LLVMValueRef choose = LLVMAddFunction(b->m, sym, check_ty);
  LLVMSetLinkage(choose, LLVMInternalLinkage);
  add_attribute(b, choose, "nounwind");
  add_attribute(b, choose, "noinline");
  LLVMPositionBuilderAtEnd(b->b, LLVMAppendBasicBlockInContext(b->c, choose, "entry"));
  for (uint32_t r = 0; r < n; r++) {
    const uint32_t v = aot->order[r];
    LLVMValueRef ok =
        LLVMBuildICmp(b->b, LLVMIntEQ, LLVMBuildCall2(b->b, check_ty, checks[v], NULL, 0, ""),
                      LLVMConstInt(b->i32, 1, false), "");
    LLVMBasicBlockRef yes = LLVMAppendBasicBlockInContext(b->c, choose, "yes");
    LLVMBasicBlockRef next = LLVMAppendBasicBlockInContext(b->c, choose, "next");
    LLVMBuildCondBr(b->b, ok, yes, next);
    LLVMPositionBuilderAtEnd(b->b, yes);
    LLVMBuildRet(b->b, LLVMConstInt(b->i32, v + 1, false));
    LLVMPositionBuilderAtEnd(b->b, next);
  }
  LLVMBuildRet(b->b, none);

  /* NAME_run_workspace */
  snprintf(sym, sizeof sym, "%s_run_workspace", name);
  LLVMTypeRef params[5] = {b->ptr, b->ptr, b->ptr, b->ptr, b->ptr};
  LLVMTypeRef run_ty = LLVMFunctionType(b->i32, params, 5, false);
  LLVMValueRef run = LLVMAddFunction(b->m, sym, run_ty);
  add_attribute(b, run, "nounwind");
  LLVMPositionBuilderAtEnd(b->b, LLVMAppendBasicBlockInContext(b->c, run, "entry"));
  LLVMValueRef chosen = current_state(b, run, state, choose);
  LLVMBasicBlockRef fail = LLVMAppendBasicBlockInContext(b->c, run, "no_variant");
  LLVMValueRef sw = LLVMBuildSwitch(b->b, chosen, fail, n);
  LLVMValueRef args[5];
  for (uint32_t i = 0; i < 5; i++)
    args[i] = LLVMGetParam(run, i);
  for (uint32_t v = 0; v < n; v++) {
    LLVMBasicBlockRef bb = LLVMAppendBasicBlockInContext(b->c, run, "variant");
    LLVMAddCase(sw, LLVMConstInt(b->i32, v + 1, false), bb);
    LLVMPositionBuilderAtEnd(b->b, bb);
    LLVMBuildRet(b->b, LLVMBuildCall2(b->b, run_ty, variant_runs[v], args, 5, ""));
  }
  LLVMPositionBuilderAtEnd(b->b, fail);
  LLVMBuildRet(b->b, LLVMConstInt(b->i32, DMLC_AOT_ERROR_CPU, false));

  /* NAME_select_variant */
  snprintf(sym, sizeof sym, "%s_select_variant", name);
  LLVMTypeRef sel_ty = LLVMFunctionType(b->i32, &b->i32, 1, false);
  LLVMValueRef sel = LLVMAddFunction(b->m, sym, sel_ty);
  add_attribute(b, sel, "nounwind");
  LLVMPositionBuilderAtEnd(b->b, LLVMAppendBasicBlockInContext(b->c, sel, "entry"));
  LLVMBasicBlockRef automatic = LLVMAppendBasicBlockInContext(b->c, sel, "automatic");
  LLVMBasicBlockRef out_of_range = LLVMAppendBasicBlockInContext(b->c, sel, "out_of_range");
  LLVMBasicBlockRef missing = LLVMAppendBasicBlockInContext(b->c, sel, "missing");
  LLVMValueRef which = LLVMGetParam(sel, 0);
  sw = LLVMBuildSwitch(b->b, which, out_of_range, n + 1);
  LLVMAddCase(sw, LLVMConstInt(b->i32, (unsigned long long)-1, true), automatic);
  for (uint32_t v = 0; v < n; v++) {
    LLVMBasicBlockRef bb = LLVMAppendBasicBlockInContext(b->c, sel, "force");
    LLVMBasicBlockRef ok = LLVMAppendBasicBlockInContext(b->c, sel, "forced");
    LLVMAddCase(sw, LLVMConstInt(b->i32, v, false), bb);
    LLVMPositionBuilderAtEnd(b->b, bb);
    LLVMValueRef passed =
        LLVMBuildICmp(b->b, LLVMIntEQ, LLVMBuildCall2(b->b, check_ty, checks[v], NULL, 0, ""),
                      LLVMConstInt(b->i32, 1, false), "");
    LLVMBuildCondBr(b->b, passed, ok, missing);
    LLVMPositionBuilderAtEnd(b->b, ok);
    LLVMValueRef st = LLVMBuildStore(b->b, LLVMConstInt(b->i32, v + 1, false), state);
    LLVMSetOrdering(st, LLVMAtomicOrderingMonotonic);
    LLVMSetAlignment(st, 4);
    LLVMBuildRet(b->b, zero);
  }
  LLVMPositionBuilderAtEnd(b->b, automatic);
  LLVMValueRef fresh = LLVMBuildCall2(b->b, check_ty, choose, NULL, 0, "");
  LLVMValueRef st = LLVMBuildStore(b->b, fresh, state);
  LLVMSetOrdering(st, LLVMAtomicOrderingMonotonic);
  LLVMSetAlignment(st, 4);
  LLVMBuildRet(b->b, LLVMBuildSelect(b->b, LLVMBuildICmp(b->b, LLVMIntEQ, fresh, none, ""),
                                     LLVMConstInt(b->i32, DMLC_AOT_ERROR_CPU, false), zero, ""));
  LLVMPositionBuilderAtEnd(b->b, out_of_range);
  LLVMBuildRet(b->b, LLVMConstInt(b->i32, DMLC_AOT_ERROR_VARIANT, false));
  LLVMPositionBuilderAtEnd(b->b, missing);
  LLVMBuildRet(b->b, LLVMConstInt(b->i32, DMLC_AOT_ERROR_CPU, false));

  /* NAME_variant */
  snprintf(sym, sizeof sym, "%s_variant", name);
  LLVMValueRef cur = LLVMAddFunction(b->m, sym, check_ty);
  add_attribute(b, cur, "nounwind");
  LLVMPositionBuilderAtEnd(b->b, LLVMAppendBasicBlockInContext(b->c, cur, "entry"));
  chosen = current_state(b, cur, state, choose);
  LLVMBuildRet(b->b,
               LLVMBuildSelect(b->b, LLVMBuildICmp(b->b, LLVMIntEQ, chosen, none, ""),
                               LLVMConstInt(b->i32, (unsigned long long)-1, true),
                               LLVMBuildSub(b->b, chosen, LLVMConstInt(b->i32, 1, false), ""), ""));
  free(checks);
}

static dmlc_status build_module(dmlc_llvm_aot *aot, const dmlc_kernel_plan *plan,
                                const dmlc_llvm_aot_options *o, dmlc_diag *diag) {
  builder b = {.c = aot->ctx};
  b.m = aot->module = LLVMModuleCreateWithNameInContext(o->name, aot->ctx);
  LLVMSetSourceFileName(b.m, o->name, strlen(o->name));
  LLVMSetTarget(b.m, aot->triple);
  LLVMTargetDataRef layout = LLVMCreateTargetDataLayout(aot->tm);
  char *layout_text = LLVMCopyStringRepOfTargetData(layout);
  LLVMSetDataLayout(b.m, layout_text);
  LLVMDisposeMessage(layout_text);
  LLVMDisposeTargetData(layout);
  b.ptr = LLVMPointerTypeInContext(b.c, 0);
  b.i32 = LLVMInt32TypeInContext(b.c);
  b.i64 = LLVMInt64TypeInContext(b.c);
  b.void_t = LLVMVoidTypeInContext(b.c);
  LLVMTypeRef kparams[3] = {b.ptr, b.i64, b.i64}, tparams[2] = {b.ptr, b.i32},
              pparams[4] = {b.ptr, b.i32, b.ptr, b.ptr};
  b.kernel_ty = LLVMFunctionType(b.void_t, kparams, 3, false);
  b.finish_ty = LLVMFunctionType(b.void_t, kparams, 1, false);
  b.task_ty = LLVMFunctionType(b.void_t, tparams, 2, false);
  b.pfor_ty = LLVMFunctionType(b.void_t, pparams, 4, false);

  uint64_t *temp_offsets = aot->temp_offsets =
      calloc(plan->num_temps ? plan->num_temps : 1, sizeof *temp_offsets);
  LLVMValueRef *runs = calloc(aot->num_variants, sizeof *runs);
  dmlc_status status = DMLC_OK;
  if (!temp_offsets || !runs)
    status = dmlc_diag_set(diag, DMLC_ERROR_OUT_OF_MEMORY, "out of memory compiling");
  /* Workspace: each temporary, then the largest scratch (kernels run in turn). */
  uint64_t offset = 0, scratch = 0;
  for (uint32_t t = 0; status == DMLC_OK && t < plan->num_temps; t++) {
    temp_offsets[t] = offset;
    offset = align_up(offset + plan->temp_bytes[t]);
  }
  aot->scratch_offset = offset;
  b.b = LLVMCreateBuilderInContext(b.c);
  for (uint32_t v = 0; status == DMLC_OK && v < aot->num_variants; v++)
    status = build_variant(aot, &b, plan, o->name, v, &scratch, &runs[v], diag);
  if (status == DMLC_OK) {
    aot->workspace_bytes = align_up(offset + scratch);
    if (aot->num_variants > 1)
      build_dispatcher(aot, &b, o->name, runs);
    const bool probe =
        strncmp(aot->triple, "x86_64", 6) == 0 || strncmp(aot->triple, "aarch64", 7) == 0;
    run_on_stack(&b, o->name, "_run", false, aot->workspace_bytes, probe);
    run_on_stack(&b, o->name, "_run_parallel", true, aot->workspace_bytes, probe);
  }
  LLVMDisposeBuilder(b.b);
  free(runs);
  return status;
}

static dmlc_status verify_and_optimize(dmlc_llvm_aot *aot, int opt_level, dmlc_diag *diag) {
  char *message = NULL;
  if (LLVMVerifyModule(aot->module, LLVMReturnStatusAction, &message)) {
    dmlc_diag_set(diag, DMLC_ERROR_INTERNAL, "the generated LLVM IR is invalid: %s",
                  message ? message : "");
    LLVMDisposeMessage(message);
    return DMLC_ERROR_INTERNAL;
  }
  LLVMDisposeMessage(message);
  /* As on the JIT: the emitter vectorizes and unrolls itself. */
  LLVMPassBuilderOptionsRef options = LLVMCreatePassBuilderOptions();
  LLVMPassBuilderOptionsSetLoopVectorization(options, 0);
  LLVMPassBuilderOptionsSetSLPVectorization(options, 0);
  LLVMPassBuilderOptionsSetLoopInterleaving(options, 0);
  LLVMPassBuilderOptionsSetLoopUnrolling(options, 0);
  char passes[32];
  snprintf(passes, sizeof passes, "default<O%d>", opt_level);
  LLVMErrorRef err = LLVMRunPasses(aot->module, passes, aot->tm, options);
  LLVMDisposePassBuilderOptions(options);
  if (err) {
    char *text = LLVMGetErrorMessage(err);
    dmlc_diag_set(diag, DMLC_ERROR_INTERNAL, "optimizing the module: %s", text);
    LLVMDisposeErrorMessage(text);
    return DMLC_ERROR_INTERNAL;
  }
  return DMLC_OK;
}

dmlc_status dmlc_llvm_aot_create(const dmlc_kernel_plan *plan, uint32_t num_inputs,
                                 uint32_t num_outputs, const dmlc_llvm_aot_options *options,
                                 dmlc_llvm_aot **out, dmlc_diag *diag) {
  (void)num_inputs;
  (void)num_outputs;
  *out = NULL;
  if (!options->name || !*options->name || strlen(options->name) > MAX_NAME)
    return dmlc_diag_set(diag, DMLC_ERROR_INVALID_ARGUMENT,
                         "the symbol prefix must be 1 to %d characters", MAX_NAME);
  if (options->opt_level < 0 || options->opt_level > 3)
    return dmlc_diag_set(diag, DMLC_ERROR_INVALID_ARGUMENT, "optimization level %d is not 0-3",
                         options->opt_level);
  pthread_once(&targets_once, init_targets);
  dmlc_llvm_aot *aot = calloc(1, sizeof *aot);
  if (!aot)
    return dmlc_diag_set(diag, DMLC_ERROR_OUT_OF_MEMORY, "out of memory compiling");
  aot->ctx = LLVMContextCreate();
  dmlc_status status = make_target(aot, options, diag);
  if (status == DMLC_OK)
    status = build_module(aot, plan, options, diag);
  if (status == DMLC_OK)
    status = verify_and_optimize(aot, options->opt_level, diag);
  if (status != DMLC_OK) {
    dmlc_llvm_aot_destroy(aot);
    return status;
  }
  *out = aot;
  return DMLC_OK;
}

static dmlc_status copy_out(const char *data, size_t size, void **out_data, size_t *out_size,
                            dmlc_diag *diag) {
  char *copy = malloc(size + 1);
  if (!copy)
    return dmlc_diag_set(diag, DMLC_ERROR_OUT_OF_MEMORY, "out of memory emitting code");
  memcpy(copy, data, size);
  copy[size] = '\0';
  *out_data = copy;
  *out_size = size;
  return DMLC_OK;
}

dmlc_status dmlc_llvm_aot_emit(dmlc_llvm_aot *aot, const char *kind, void **out_data,
                               size_t *out_size, dmlc_diag *diag) {
  *out_data = NULL;
  *out_size = 0;
  if (strcmp(kind, "llvm") == 0) {
    char *text = LLVMPrintModuleToString(aot->module);
    const dmlc_status status = copy_out(text, strlen(text), out_data, out_size, diag);
    LLVMDisposeMessage(text);
    return status;
  }
  LLVMMemoryBufferRef buffer = NULL;
  if (strcmp(kind, "bc") == 0) {
    buffer = LLVMWriteBitcodeToMemoryBuffer(aot->module);
  } else if (strcmp(kind, "asm") == 0 || strcmp(kind, "obj") == 0) {
    /* Code generation rewrites the IR it runs on: a clone, so the module
     * can be emitted again. */
    LLVMModuleRef clone = LLVMCloneModule(aot->module);
    char *message = NULL;
    const LLVMBool failed = LLVMTargetMachineEmitToMemoryBuffer(
        aot->tm, clone, strcmp(kind, "asm") == 0 ? LLVMAssemblyFile : LLVMObjectFile, &message,
        &buffer);
    LLVMDisposeModule(clone);
    if (failed) {
      dmlc_diag_set(diag, DMLC_ERROR_UNSUPPORTED, "%s cannot compile this graph: %s", aot->triple,
                    message ? message : "");
      LLVMDisposeMessage(message);
      return DMLC_ERROR_UNSUPPORTED;
    }
  } else {
    return dmlc_diag_set(diag, DMLC_ERROR_INVALID_ARGUMENT, "no LLVM output kind '%s'", kind);
  }
  if (!buffer)
    return dmlc_diag_set(diag, DMLC_ERROR_OUT_OF_MEMORY, "out of memory emitting code");
  const dmlc_status status =
      copy_out(LLVMGetBufferStart(buffer), LLVMGetBufferSize(buffer), out_data, out_size, diag);
  LLVMDisposeMemoryBuffer(buffer);
  return status;
}
