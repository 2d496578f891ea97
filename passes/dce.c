/* dce: removes every node no graph output depends on. */
#include <stdlib.h>

#include "passes/passes.h"
#include "passes/rewrite.h"

dmlc_status dmlc_pass_dce(dmlc_ir_graph **g, dmlc_diag *diag) {
  const dmlc_ir_graph *old = *g;
  bool *live = calloc(old->num_values ? old->num_values : 1, sizeof *live);
  if (!live)
    return dmlc_diag_set(diag, DMLC_ERROR_OUT_OF_MEMORY, "out of memory in dce");
  for (uint32_t i = 0; i < old->num_outputs; i++)
    live[old->outputs[i].value] = true;
  for (uint32_t k = old->num_nodes; k-- > 0;) /* nodes are in topological order */
    if (live[old->nodes[k].result])
      for (uint32_t j = 0; j < old->nodes[k].num_operands; j++)
        live[old->nodes[k].operands[j]] = true;
  dmlc_rewriter rw;
  dmlc_status s = dmlc_rewriter_begin(&rw, old, diag);
  for (uint32_t k = 0; s == DMLC_OK && k < old->num_nodes; k++)
    if (live[old->nodes[k].result])
      s = dmlc_rewriter_copy(&rw, &old->nodes[k]);
  free(live);
  if (s != DMLC_OK) {
    dmlc_rewriter_abort(&rw);
    return s;
  }
  return dmlc_rewriter_finish(&rw, g);
}
