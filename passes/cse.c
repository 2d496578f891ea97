/* cse: a node identical to an earlier one (op, operands, attributes, result
 * type; axes compared as sets) reuses the earlier result. Two reductions that
 * differ only in their index type share one: the later becomes a cast of the
 * earlier, exact because the verifier proved every index fits both types. */
#include "passes/passes.h"
#include "passes/rewrite.h"

/* The axes as a set: the order they are listed in means nothing. */
static uint32_t axes_set(const dmlc_node *n) { return dmlc_axes_mask(n->axes, n->num_axes); }

static bool same_computation(const dmlc_node *a, const dmlc_node *b) {
  if (a->op != b->op || a->num_operands != b->num_operands)
    return false;
  for (uint32_t i = 0; i < a->num_operands; i++)
    if (a->operands[i] != b->operands[i])
      return false;
  const uint32_t attrs = dmlc_op_get(a->op)->attrs;
  if ((attrs & DMLC_ATTR_AXES) && axes_set(a) != axes_set(b))
    return false;
  if ((attrs & DMLC_ATTR_DIRECTION) && a->direction != b->direction)
    return false;
  if ((attrs & DMLC_ATTR_VALUE) && a->value != b->value)
    return false;
  return true;
}

static bool is_reduction(dmlc_op op) { return dmlc_op_get(op)->kind == DMLC_OPKIND_REDUCTION; }

/* Finds an earlier node of out computing the same thing as n (operands
 * already remapped). *needs_cast when only the index dtype differs. */
static int32_t find_equivalent(const dmlc_ir_graph *out, const dmlc_node *n, const dmlc_type *type,
                               bool *needs_cast) {
  for (uint32_t k = 0; k < out->num_nodes; k++) {
    const dmlc_node *m = &out->nodes[k];
    if (!same_computation(m, n))
      continue;
    const dmlc_type *mt = &out->values[m->result].type;
    if (dmlc_type_equal(mt, type)) {
      *needs_cast = false;
      return (int32_t)k;
    }
    dmlc_type retyped = *mt;
    retyped.dtype = type->dtype;
    if (is_reduction(n->op) && dmlc_type_equal(&retyped, type)) {
      *needs_cast = true;
      return (int32_t)k;
    }
  }
  return -1;
}

dmlc_status dmlc_pass_cse(dmlc_ir_graph **g, dmlc_diag *diag) {
  const dmlc_ir_graph *old = *g;
  dmlc_rewriter rw;
  DMLC_RETURN_IF_ERROR(dmlc_rewriter_begin(&rw, old, diag));
  for (uint32_t k = 0; k < old->num_nodes; k++) {
    const dmlc_node *n = &old->nodes[k];
    dmlc_node mapped = *n;
    for (uint32_t i = 0; i < n->num_operands; i++)
      mapped.operands[i] = dmlc_rewriter_lookup(&rw, n->operands[i]);
    const dmlc_type *type = &old->values[n->result].type;
    bool needs_cast = false;
    const int32_t found = find_equivalent(rw.out, &mapped, type, &needs_cast);
    dmlc_status s;
    if (found < 0)
      s = dmlc_rewriter_emit(&rw, &mapped, type, &rw.map[n->result]);
    else if (needs_cast)
      s = dmlc_rewriter_emit1(&rw, DMLC_OP_CAST, rw.out->nodes[found].result, type,
                              &rw.map[n->result]);
    else {
      rw.map[n->result] = rw.out->nodes[found].result;
      s = DMLC_OK;
    }
    if (s != DMLC_OK) {
      dmlc_rewriter_abort(&rw);
      return s;
    }
  }
  return dmlc_rewriter_finish(&rw, g);
}
