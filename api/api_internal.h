/* The objects behind the public handles. */
#ifndef DMLC_API_INTERNAL_H
#define DMLC_API_INTERNAL_H

#include "frontend/frontend.h"
#include "ir/ir.h"

struct dmlc_context {
  dmlc_diag diag; /* the last failed call's message */
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
  dmlc_device device; /* the device it runs on (never DEFAULT) */
  dmlc_ir_graph *ir;  /* the compiled graph, owned */
};

#endif
