/* lower-hardmax: hardmax(x, axes) becomes exactly the HARDMAX1 definition,
 *   %a = argmax %x {axes, increasing} : u32[reduced]
 *   %b = broadcast %a : u32[full]
 *   %i = reduced_index {axes} : u32[full]
 *   %e = eq %b, %i : bool[full]
 *   %r = cast %e : <x's type>
 * u32 always holds the index: a tensor has at most 2^32-1 elements. */
#include "passes/passes.h"
#include "passes/rewrite.h"

static dmlc_status lower(dmlc_rewriter *rw, const dmlc_node *n) {
  const dmlc_type full = rw->old->values[n->operands[0]].type;
  dmlc_type index_full = full, reduced;
  index_full.dtype = DMLC_DTYPE_U32;
  reduced = index_full;
  for (uint32_t i = 0; i < n->num_axes; i++)
    reduced.dims[n->axes[i]] = 1;
  dmlc_type mask = full;
  mask.dtype = DMLC_DTYPE_BOOL;

  dmlc_node argmax = *n;
  argmax.op = DMLC_OP_ARGMAX;
  argmax.operands[0] = dmlc_rewriter_lookup(rw, n->operands[0]);
  argmax.direction = DMLC_DIRECTION_INCREASING;
  dmlc_node index = dmlc_node_make(DMLC_OP_REDUCED_INDEX);
  index.num_axes = n->num_axes;
  for (uint32_t i = 0; i < n->num_axes; i++)
    index.axes[i] = n->axes[i];

  uint32_t a, b, i, e;
  DMLC_RETURN_IF_ERROR(dmlc_rewriter_emit(rw, &argmax, &reduced, &a));
  DMLC_RETURN_IF_ERROR(dmlc_rewriter_emit1(rw, DMLC_OP_BROADCAST, a, &index_full, &b));
  DMLC_RETURN_IF_ERROR(dmlc_rewriter_emit(rw, &index, &index_full, &i));
  DMLC_RETURN_IF_ERROR(dmlc_rewriter_emit2(rw, DMLC_OP_EQ, b, i, &mask, &e));
  return dmlc_rewriter_emit1(rw, DMLC_OP_CAST, e, &full, &rw->map[n->result]);
}

dmlc_status dmlc_pass_lower_hardmax(dmlc_ir_graph **g, dmlc_diag *diag) {
  dmlc_rewriter rw;
  DMLC_RETURN_IF_ERROR(dmlc_rewriter_begin(&rw, *g, diag));
  for (uint32_t k = 0; k < (*g)->num_nodes; k++) {
    const dmlc_node *n = &(*g)->nodes[k];
    const dmlc_status s = n->op == DMLC_OP_HARDMAX ? lower(&rw, n) : dmlc_rewriter_copy(&rw, n);
    if (s != DMLC_OK) {
      dmlc_rewriter_abort(&rw);
      return s;
    }
  }
  return dmlc_rewriter_finish(&rw, g);
}
