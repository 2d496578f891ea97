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

/* Temporaries and scratch start at multiples of this (as on the JIT). A
 * kernel's task space goes to parallel_for in at most MAX_CHUNKS chunks of
 * at least MIN_CHUNK_BYTES of memory traffic each (the JIT's threshold):
 * a smaller kernel runs on the calling thread. */
enum { WORKSPACE_ALIGNMENT = 64, MAX_NAME = 200, MIN_CHUNK_BYTES = 32 * 1024, MAX_CHUNKS = 64 };

struct dmlc_llvm_aot {
  LLVMContextRef ctx;
  LLVMModuleRef module;
  LLVMTargetMachineRef tm;
  char *triple, *cpu, *features; /* LLVM-allocated */
  uint64_t workspace_bytes, scratch_offset;
  dmlc_cpu_kernel_info *infos; /* per kernel */
  uint64_t *temp_offsets;      /* per temporary */
};

static pthread_once_t targets_once = PTHREAD_ONCE_INIT;

static void init_targets(void) {
  LLVMInitializeAllTargetInfos();
  LLVMInitializeAllTargets();
  LLVMInitializeAllTargetMCs();
  LLVMInitializeAllAsmPrinters();
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
  free(aot->infos);
  free(aot->temp_offsets);
  free(aot);
}

uint64_t dmlc_llvm_aot_workspace_bytes(const dmlc_llvm_aot *aot) { return aot->workspace_bytes; }
const dmlc_cpu_kernel_info *dmlc_llvm_aot_kernel_info(const dmlc_llvm_aot *aot, uint32_t i) {
  return &aot->infos[i];
}
uint64_t dmlc_llvm_aot_temp_offset(const dmlc_llvm_aot *aot, uint32_t temp) {
  return aot->temp_offsets[temp];
}
uint64_t dmlc_llvm_aot_scratch_offset(const dmlc_llvm_aot *aot) { return aot->scratch_offset; }
const char *dmlc_llvm_aot_triple(const dmlc_llvm_aot *aot) { return aot->triple; }
const char *dmlc_llvm_aot_cpu(const dmlc_llvm_aot *aot) { return aot->cpu; }
const char *dmlc_llvm_aot_features(const dmlc_llvm_aot *aot) { return aot->features; }

static char *llvm_string(const char *s) { return LLVMCreateMessage(s); }

/* The triple, CPU and features as aot.h's defaults say; the target machine. */
static dmlc_status make_target(dmlc_llvm_aot *aot, const dmlc_llvm_aot_options *o,
                               dmlc_diag *diag) {
  char *host = LLVMGetDefaultTargetTriple();
  char *host_normal = LLVMNormalizeTargetTriple(host);
  LLVMDisposeMessage(host);
  aot->triple = o->triple ? LLVMNormalizeTargetTriple(o->triple) : llvm_string(host_normal);
  const bool is_host = strcmp(aot->triple, host_normal) == 0;
  LLVMDisposeMessage(host_normal);
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
  static const LLVMCodeGenOptLevel levels[4] = {LLVMCodeGenLevelNone, LLVMCodeGenLevelLess,
                                                LLVMCodeGenLevelDefault,
                                                LLVMCodeGenLevelAggressive};
  aot->tm = LLVMCreateTargetMachine(target, aot->triple, aot->cpu, aot->features,
                                    levels[o->opt_level], LLVMRelocPIC, LLVMCodeModelDefault);
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

/* int NAME_run_workspace(inputs, outputs, workspace, parallel_for, user). */
static void run_workspace(builder *b, const char *name, const dmlc_kernel_plan *plan,
                          LLVMValueRef *kernels, LLVMValueRef *finishes,
                          const dmlc_cpu_kernel_info *infos, const uint64_t *temp_offsets,
                          uint64_t scratch_offset) {
  char sym[MAX_NAME + 32];
  snprintf(sym, sizeof sym, "%s_run_workspace", name);
  LLVMTypeRef params[5] = {b->ptr, b->ptr, b->ptr, b->ptr, b->ptr};
  LLVMValueRef fn = LLVMAddFunction(b->m, sym, LLVMFunctionType(b->i32, params, 5, false));
  add_attribute(b, fn, "nounwind");
  /* Allocas in the entry block, the code from "body" on. */
  LLVMBasicBlockRef entry = LLVMAppendBasicBlockInContext(b->c, fn, "entry");
  LLVMBasicBlockRef body = LLVMAppendBasicBlockInContext(b->c, fn, "body");
  LLVMBuilderRef allocas = LLVMCreateBuilderInContext(b->c);
  LLVMPositionBuilderAtEnd(allocas, entry);
  LLVMPositionBuilderAtEnd(b->b, body);
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
    snprintf(task_name, sizeof task_name, "%s_task%u", name, i);
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

  dmlc_llvm_target target;
  dmlc_llvm_target_for(aot->triple, aot->features, &target);
  const uint32_t n = plan->num_kernels;
  LLVMValueRef *kernels = calloc(n ? n : 1, sizeof *kernels);
  LLVMValueRef *finishes = calloc(n ? n : 1, sizeof *finishes);
  dmlc_cpu_kernel_info *infos = aot->infos = calloc(n ? n : 1, sizeof *infos);
  uint64_t *temp_offsets = aot->temp_offsets =
      calloc(plan->num_temps ? plan->num_temps : 1, sizeof *temp_offsets);
  dmlc_status status = DMLC_OK;
  if (!kernels || !finishes || !infos || !temp_offsets)
    status = dmlc_diag_set(diag, DMLC_ERROR_OUT_OF_MEMORY, "out of memory compiling");
  /* Workspace: each temporary, then the largest scratch (kernels run in turn). */
  uint64_t offset = 0, scratch = 0;
  for (uint32_t t = 0; status == DMLC_OK && t < plan->num_temps; t++) {
    temp_offsets[t] = offset;
    offset = align_up(offset + plan->temp_bytes[t]);
  }
  for (uint32_t i = 0; status == DMLC_OK && i < n; i++) {
    char kname[MAX_NAME + 32], fname[MAX_NAME + 48];
    snprintf(kname, sizeof kname, "%s_kernel%u", o->name, i);
    snprintf(fname, sizeof fname, "%s_finish", kname);
    status = dmlc_llvm_emit_kernel(b.m, &plan->kernels[i], kname, &target, &infos[i], diag);
    if (status != DMLC_OK)
      break;
    kernels[i] = LLVMGetNamedFunction(b.m, kname);
    LLVMSetLinkage(kernels[i], LLVMInternalLinkage);
    if (infos[i].has_finish) {
      finishes[i] = LLVMGetNamedFunction(b.m, fname);
      LLVMSetLinkage(finishes[i], LLVMInternalLinkage);
    }
    if (infos[i].scratch_bytes > scratch)
      scratch = infos[i].scratch_bytes;
  }
  if (status == DMLC_OK) {
    aot->scratch_offset = offset;
    aot->workspace_bytes = align_up(offset + scratch);
    b.b = LLVMCreateBuilderInContext(b.c);
    run_workspace(&b, o->name, plan, kernels, finishes, infos, temp_offsets, offset);
    const bool probe =
        strncmp(aot->triple, "x86_64", 6) == 0 || strncmp(aot->triple, "aarch64", 7) == 0;
    run_on_stack(&b, o->name, "_run", false, aot->workspace_bytes, probe);
    run_on_stack(&b, o->name, "_run_parallel", true, aot->workspace_bytes, probe);
    LLVMDisposeBuilder(b.b);
  }
  free(kernels);
  free(finishes);
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
