/* Rebuilding a graph node by node: passes copy the nodes they keep and emit
 * replacements for the ones they rewrite; old value ids map to new ones. */
#ifndef DMLC_PASSES_REWRITE_H
#define DMLC_PASSES_REWRITE_H

#include "ir/ir.h"

typedef struct dmlc_rewriter {
  const dmlc_ir_graph *old;
  dmlc_ir_graph *out;
  uint32_t *map; /* old value id -> new value id */
  dmlc_diag *diag;
} dmlc_rewriter;

#define DMLC_UNMAPPED UINT32_MAX

/* Starts a new graph with old's name and inputs. */
dmlc_status dmlc_rewriter_begin(dmlc_rewriter *rw, const dmlc_ir_graph *old, dmlc_diag *diag);
/* Copies node n of the old graph, operands remapped. */
dmlc_status dmlc_rewriter_copy(dmlc_rewriter *rw, const dmlc_node *n);
/* Emits a new node whose operands are already new ids. */
dmlc_status dmlc_rewriter_emit(dmlc_rewriter *rw, const dmlc_node *n, const dmlc_type *type,
                               uint32_t *out_value);
/* The new id of an old value's operands. */
uint32_t dmlc_rewriter_lookup(const dmlc_rewriter *rw, uint32_t old_value);
/* Outputs remapped; *g is replaced by the new graph and the old destroyed. */
dmlc_status dmlc_rewriter_finish(dmlc_rewriter *rw, dmlc_ir_graph **g);
/* Discards the new graph (after an error). */
void dmlc_rewriter_abort(dmlc_rewriter *rw);

/* Convenience: emit a node of op with operands a (and b), no attributes. */
dmlc_status dmlc_rewriter_emit1(dmlc_rewriter *rw, dmlc_op op, uint32_t a, const dmlc_type *type,
                                uint32_t *out_value);
dmlc_status dmlc_rewriter_emit2(dmlc_rewriter *rw, dmlc_op op, uint32_t a, uint32_t b,
                                const dmlc_type *type, uint32_t *out_value);

#endif
