/* Ahead-of-time CPU code: a kernel plan as one self-contained LLVM module
 * (docs/aot.md). Every global symbol starts with the module's name; the
 * code calls nothing but what LLVM itself may call (memset, memcpy,
 * memmove) and keeps no global state:
 *
 *   int NAME_run(const void *const *inputs, void *const *outputs);
 *   int NAME_run_parallel(const void *const *inputs, void *const *outputs,
 *                         void (*parallel_for)(void *user, uint32_t count,
 *                                              void (*task)(void *arg, uint32_t i),
 *                                              void *arg),
 *                         void *user);
 *   int NAME_run_workspace(const void *const *inputs, void *const *outputs,
 *                          void *workspace, <parallel_for or NULL>, void *user);
 *
 * The workspace holds the plan's temporaries and the kernels' scratch
 * (workspace_bytes, 64-byte aligned). NAME_run and NAME_run_parallel keep it
 * on their stack when it is at most DMLC_AOT_STACK_WORKSPACE bytes and
 * otherwise return DMLC_AOT_ERROR_WORKSPACE: call NAME_run_workspace. */
#ifndef DMLC_CODEGEN_LLVM_AOT_H
#define DMLC_CODEGEN_LLVM_AOT_H

#include <stddef.h>
#include <stdint.h>

#include "codegen/kernel_desc.h"
#include "codegen/llvm/cpu_kernel.h"

/* NAME_run* return DMLC_AOT_ERROR_CPU when the running CPU lacks a
 * feature the code was built for (x86-64: checked with CPUID and XGETBV on
 * the first call, the answer kept in one internal word). */
enum {
  DMLC_AOT_STACK_WORKSPACE = 1 << 20,
  DMLC_AOT_ERROR_WORKSPACE = 2,
  DMLC_AOT_ERROR_CPU = 3,
  DMLC_AOT_ERROR_VARIANT = 4 /* NAME_select_variant: no such variant */
};

typedef struct dmlc_llvm_aot_options {
  const char *name;     /* symbol prefix: a C identifier */
  const char *triple;   /* NULL: the host's */
  const char *cpu;      /* NULL: the host's for the host triple, "generic" otherwise */
  const char *features; /* llc -mattr; NULL: the host's when cpu is too, else none */
  int opt_level;        /* 0 to 3 */
} dmlc_llvm_aot_options;

typedef struct dmlc_llvm_aot dmlc_llvm_aot;

/* Builds, verifies and optimizes the module of plan for a graph of
 * num_inputs inputs and num_outputs outputs. */
/* Of enabled ("a,b,c", no signs), the features x86-64's CPUID can confirm
 * ("" on other targets); malloc'ed, NULL when out of memory. */
char *dmlc_llvm_cpuid_features(const char *triple, const char *enabled);
/* "+a,+b" for the list "a,b"; malloc'ed, NULL when out of memory. */
char *dmlc_llvm_plus_list(const char *list);

dmlc_status dmlc_llvm_aot_create(const dmlc_kernel_plan *plan, uint32_t num_inputs,
                                 uint32_t num_outputs, const dmlc_llvm_aot_options *options,
                                 dmlc_llvm_aot **out, dmlc_diag *diag);
void dmlc_llvm_aot_destroy(dmlc_llvm_aot *aot);

uint64_t dmlc_llvm_aot_workspace_bytes(const dmlc_llvm_aot *aot);
/* Kernel i's task space, scratch and finish (i < the plan's num_kernels),
 * and where its scratch and the plan's temporaries sit in the workspace. */
const dmlc_cpu_kernel_info *dmlc_llvm_aot_kernel_info(const dmlc_llvm_aot *aot, uint32_t i);
uint64_t dmlc_llvm_aot_temp_offset(const dmlc_llvm_aot *aot, uint32_t temp);
uint64_t dmlc_llvm_aot_scratch_offset(const dmlc_llvm_aot *aot);
const char *dmlc_llvm_aot_triple(const dmlc_llvm_aot *aot);
const char *dmlc_llvm_aot_cpu(const dmlc_llvm_aot *aot);
const char *dmlc_llvm_aot_features(const dmlc_llvm_aot *aot);
/* The features NAME_run checks for on the running CPU, comma-separated
 * ("" when none: not x86-64, or the baseline only; "" for a multi-variant
 * module, whose variants each have theirs). */
const char *dmlc_llvm_aot_checked_features(const dmlc_llvm_aot *aot);

/* A cpu option "a,b,c" (x86-64 only) builds a variant per CPU, each with
 * its own kernels (function attributes target-cpu and target-features),
 * and a dispatcher: NAME_run_workspace runs the best variant the running
 * CPU has the features of (the most checked features; on a tie the one
 * named first), chosen on the first call; it also exports
 *   int NAME_select_variant(int v): v in 0..n-1 forces variant v (0, or
 *       DMLC_AOT_ERROR_CPU when this CPU lacks its features, or
 *       DMLC_AOT_ERROR_VARIANT when there is no variant v); -1 chooses
 *       again (0, or DMLC_AOT_ERROR_CPU when none can run);
 *   int NAME_variant(void): the variant in use; -1 when none can run.
 * Variants are numbered in the order the option names them. A module of
 * one CPU has one variant and neither function. */
uint32_t dmlc_llvm_aot_num_variants(const dmlc_llvm_aot *aot);
const char *dmlc_llvm_aot_variant_cpu(const dmlc_llvm_aot *aot, uint32_t v);
const char *dmlc_llvm_aot_variant_checked(const dmlc_llvm_aot *aot, uint32_t v);
/* Where variant v comes in the dispatcher's order (0: tried first). */
uint32_t dmlc_llvm_aot_variant_rank(const dmlc_llvm_aot *aot, uint32_t v);

/* The module as kind: "llvm" (text), "bc" (bitcode), "asm" or "obj";
 * *out_data is malloc'ed. */
dmlc_status dmlc_llvm_aot_emit(dmlc_llvm_aot *aot, const char *kind, void **out_data,
                               size_t *out_size, dmlc_diag *diag);

#endif
