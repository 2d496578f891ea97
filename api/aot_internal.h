/* What api/aot.c hands the writers of the descriptive kinds (api/aot_meta.c). */
#ifndef DMLC_API_AOT_INTERNAL_H
#define DMLC_API_AOT_INTERNAL_H

#include "api/api_internal.h"
#include "codegen/llvm/aot.h"
#include "codegen/spirv/spirv.h"

/* The SPIR-V modules of a plan's kernels (the "spirv" and "spirv-asm"
 * kinds, compiled with the portable caps: api/aot.c), for the metadata. */
typedef struct dmlc_aot_spirv {
  bool built;        /* false: dmlc was built without the Vulkan backend */
  const char *error; /* why a kernel has no module: the section says only that */
  const dmlc_spirv_caps *caps;
  const dmlc_spirv_module *modules; /* one per kernel */
} dmlc_aot_spirv;

typedef struct dmlc_aot_graph {
  const dmlc_ir_graph *graph; /* as given (its inputs' and outputs' layouts) */
  const dmlc_ir_graph *fused; /* after the default pipeline */
  const dmlc_kernel_plan *plan;
  const char *name;            /* the symbol prefix */
  const dmlc_llvm_aot *aot;    /* the CPU module: task splits, workspace */
  const dmlc_aot_spirv *spirv; /* the metadata's "spirv" section; NULL for dot */
} dmlc_aot_graph;

/* "metadata": JSON (docs/aot.md); *out malloc'ed, NUL-terminated. */
dmlc_status dmlc_aot_metadata(const dmlc_aot_graph *g, char **out, dmlc_diag *diag);
/* "dot": Graphviz, the graph's nodes with its kernels as clusters. */
dmlc_status dmlc_aot_dot(const dmlc_aot_graph *g, char **out, dmlc_diag *diag);

#endif
