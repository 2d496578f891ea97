#include "passes/rewrite.h"

#include <stdlib.h>
#include <string.h>

dmlc_status dmlc_rewriter_begin(dmlc_rewriter *rw, const dmlc_ir_graph *old, dmlc_diag *diag) {
  memset(rw, 0, sizeof *rw);
  rw->old = old;
  rw->diag = diag;
  rw->out = dmlc_ir_graph_create(old->name);
  rw->map = malloc(sizeof *rw->map * (old->num_values ? old->num_values : 1));
  if (!rw->out || !rw->map) {
    dmlc_rewriter_abort(rw);
    return dmlc_diag_set(diag, DMLC_ERROR_OUT_OF_MEMORY, "out of memory rewriting a graph");
  }
  for (uint32_t v = 0; v < old->num_values; v++)
    rw->map[v] = DMLC_UNMAPPED;
  for (uint32_t i = 0; i < old->num_inputs; i++) {
    const dmlc_graph_io *io = &old->inputs[i];
    const dmlc_status s = dmlc_ir_add_input(rw->out, io->name, &old->values[io->value].type,
                                            &io->layout, &rw->map[io->value], diag);
    if (s != DMLC_OK) {
      dmlc_rewriter_abort(rw);
      return s;
    }
  }
  return DMLC_OK;
}

uint32_t dmlc_rewriter_lookup(const dmlc_rewriter *rw, uint32_t old_value) {
  return rw->map[old_value];
}

dmlc_status dmlc_rewriter_emit(dmlc_rewriter *rw, const dmlc_node *n, const dmlc_type *type,
                               uint32_t *out_value) {
  return dmlc_ir_add_node(rw->out, n, type, out_value, rw->diag);
}

dmlc_status dmlc_rewriter_copy(dmlc_rewriter *rw, const dmlc_node *n) {
  dmlc_node copy = *n;
  for (uint32_t i = 0; i < n->num_operands; i++)
    copy.operands[i] = rw->map[n->operands[i]];
  return dmlc_rewriter_emit(rw, &copy, &rw->old->values[n->result].type, &rw->map[n->result]);
}

dmlc_status dmlc_rewriter_emit1(dmlc_rewriter *rw, dmlc_op op, uint32_t a, const dmlc_type *type,
                                uint32_t *out_value) {
  dmlc_node n = dmlc_node_make(op);
  n.num_operands = 1;
  n.operands[0] = a;
  return dmlc_rewriter_emit(rw, &n, type, out_value);
}

dmlc_status dmlc_rewriter_emit2(dmlc_rewriter *rw, dmlc_op op, uint32_t a, uint32_t b,
                                const dmlc_type *type, uint32_t *out_value) {
  dmlc_node n = dmlc_node_make(op);
  n.num_operands = 2;
  n.operands[0] = a;
  n.operands[1] = b;
  return dmlc_rewriter_emit(rw, &n, type, out_value);
}

dmlc_status dmlc_rewriter_finish(dmlc_rewriter *rw, dmlc_ir_graph **g) {
  const dmlc_ir_graph *old = rw->old;
  for (uint32_t i = 0; i < old->num_outputs; i++) {
    const dmlc_graph_io *io = &old->outputs[i];
    const uint32_t v = rw->map[io->value];
    if (v == DMLC_UNMAPPED) {
      dmlc_rewriter_abort(rw);
      return dmlc_diag_set(rw->diag, DMLC_ERROR_INTERNAL, "rewrite lost the value of output '%s'",
                           io->name);
    }
    const dmlc_status s = dmlc_ir_add_output(rw->out, io->name, v, &io->layout, rw->diag);
    if (s != DMLC_OK) {
      dmlc_rewriter_abort(rw);
      return s;
    }
  }
  free(rw->map);
  rw->map = NULL;
  dmlc_ir_graph_destroy(*g);
  *g = rw->out;
  rw->out = NULL;
  return DMLC_OK;
}

void dmlc_rewriter_abort(dmlc_rewriter *rw) {
  dmlc_ir_graph_destroy(rw->out);
  free(rw->map);
  rw->out = NULL;
  rw->map = NULL;
}
