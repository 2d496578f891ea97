/* The objects behind the public handles. */
#ifndef DMLC_API_INTERNAL_H
#define DMLC_API_INTERNAL_H

#include "frontend/frontend.h"
#include "ir/ir.h"
#include "runtime/cpu/cpu_device.h"

struct dmlc_context {
  dmlc_diag diag; /* the last failed call's message */
  /* Created by the first CPU compile (or query), so a context that never
   * uses the CPU never initializes LLVM. Owns the JIT, the thread pool and
   * the kernel cache. */
  dmlc_cpu_device *cpu;
  uint32_t num_threads; /* for the CPU device; 0 = the online cores */
};

struct dmlc_graph {
  dmlc_context *ctx;
  dmlc_ir_graph *ir;
  /* For values produced by operators added through the descriptor API: the
   * layout their OutputTensor descriptor gave, used by dmlc_graph_add_output. */
  dmlc_layout *result_layouts;
  bool *has_result_layout;
  uint32_t cap_layouts;
};

struct dmlc_executable {
  dmlc_context *ctx;
  dmlc_device device;       /* the device it runs on (never DEFAULT) */
  dmlc_ir_graph *ir;        /* the graph as compiled (before passes), owned */
  dmlc_cpu_executable *cpu; /* DMLC_DEVICE_CPU */
};

/* The context's CPU device, created on first use. */
dmlc_status dmlc_context_cpu_device(dmlc_context *ctx, dmlc_cpu_device **out);

#endif
