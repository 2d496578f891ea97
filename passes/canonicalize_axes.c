/* canonicalize-axes: puts every argmax/argmin into its canonical form,
 *   %a = reshape %x : T[C]
 *   %b = argmax %a {axes = <the reduced runs of C>} : IDX[C, 1 on reduced]
 *   %r = reshape %b : <the original result type>
 * where C drops the size-1 dims of x and merges each maximal run of adjacent
 * dims of one kind (kept or reduced) into one dim, so that the kept and
 * reduced dims of C alternate. Reduced indices count row-major over the
 * reduced dims in ascending order, so neither dropping size-1 dims nor merging
 * adjacent reduced dims changes any index. A reduction with no reduced dim
 * above 1 is the constant 0. Axes of every node are sorted.
 *
 * A merge must stay a free view for the fused kernels that read x and write
 * the outputs in place: a pair of dims merges only where the strides of x
 * (when it is a graph input, possibly through reshapes) and of every graph
 * output shaped like x or like the result are contiguous across the pair.
 * Intermediate values are dense and never refuse. */
#include <string.h>

#include "passes/passes.h"
#include "passes/rewrite.h"

/* The canonical shape of a reduction's operand: groups of original dims. */
typedef struct canon_shape {
  uint32_t rank;
  uint32_t dims[DMLC_MAX_RANK];
  bool reduced[DMLC_MAX_RANK];
} canon_shape;

/* What a merge must respect: the operand's view strides (when it has a
 * layout) and the outputs shaped like the operand or the result. */
typedef struct merge_rules {
  const dmlc_ir_graph *g;
  const dmlc_type *operand;
  const dmlc_type *result;
  bool operand_strided;
  uint64_t operand_strides[DMLC_MAX_RANK];
} merge_rules;

/* The axes in increasing order (they are unique and in range: verified). */
static void sort_axes(dmlc_node *n) {
  n->num_axes = dmlc_mask_axes(dmlc_axes_mask(n->axes, n->num_axes), n->axes);
}

static bool same_dims(const dmlc_type *a, const dmlc_type *b) {
  return a->rank == b->rank && memcmp(a->dims, b->dims, a->rank * sizeof a->dims[0]) == 0;
}

/* Dim a (before b, every dim between them of size 1) and dim b merge into
 * one strided dim: padding and a broadcast beside a real dim both break it. */
static bool strides_contiguous(const uint64_t *strides, const dmlc_type *t, uint32_t a,
                               uint32_t b) {
  return strides[a] == strides[b] * t->dims[b];
}

/* The strides under which value v is read, when it is a graph input or a
 * free reshape of one; false when v is dense (computed or copied). */
static bool value_view_strides(const dmlc_ir_graph *g, uint32_t v, uint64_t *strides) {
  const int32_t producer = g->values[v].producer;
  if (producer < 0) {
    for (uint32_t i = 0; i < g->num_inputs; i++)
      if (g->inputs[i].value == v) {
        memcpy(strides, g->inputs[i].layout.strides, DMLC_MAX_RANK * sizeof *strides);
        return true;
      }
    return false;
  }
  const dmlc_node *n = &g->nodes[producer];
  uint64_t src[DMLC_MAX_RANK];
  if (n->op != DMLC_OP_RESHAPE || !value_view_strides(g, n->operands[0], src))
    return false;
  const dmlc_type *from = &g->values[n->operands[0]].type, *to = &g->values[v].type;
  return dmlc_view_strides(from->dims, from->rank, src, to->dims, to->rank, strides);
}

static bool outputs_allow_merge(const merge_rules *r, uint32_t a, uint32_t b, bool kept) {
  for (uint32_t i = 0; i < r->g->num_outputs; i++) {
    const dmlc_graph_io *io = &r->g->outputs[i];
    const dmlc_type *t = &r->g->values[io->value].type;
    const bool checked = same_dims(t, r->operand) || (kept && same_dims(t, r->result));
    if (checked && !strides_contiguous(io->layout.strides, t, a, b))
      return false;
  }
  return true;
}

static bool can_merge(const merge_rules *r, uint32_t a, uint32_t b, bool kept) {
  if (r->operand_strided && !strides_contiguous(r->operand_strides, r->operand, a, b))
    return false;
  return outputs_allow_merge(r, a, b, kept);
}

/* Groups the dims above 1 of n's operand into runs of one kind. Returns false
 * when no reduced dim above 1 is left (the reduction is the constant 0). */
static bool canonical_shape(const merge_rules *r, const dmlc_node *n, canon_shape *c) {
  c->rank = 0;
  bool any_reduced = false;
  uint32_t prev = 0;
  const uint32_t axes = dmlc_axes_mask(n->axes, n->num_axes);
  for (uint32_t d = 0; d < r->operand->rank; d++) {
    const uint32_t size = r->operand->dims[d];
    if (size == 1)
      continue;
    const bool reduced = dmlc_mask_has_axis(axes, d);
    any_reduced |= reduced;
    if (c->rank > 0 && c->reduced[c->rank - 1] == reduced && can_merge(r, prev, d, !reduced)) {
      c->dims[c->rank - 1] *= size;
    } else {
      c->dims[c->rank] = size;
      c->reduced[c->rank++] = reduced;
    }
    prev = d;
  }
  return any_reduced;
}

static dmlc_status emit_constant_zero(dmlc_rewriter *rw, const dmlc_node *n) {
  dmlc_node zero = dmlc_node_make(DMLC_OP_CONSTANT);
  zero.value = 0;
  return dmlc_rewriter_emit(rw, &zero, &rw->old->values[n->result].type, &rw->map[n->result]);
}

static dmlc_status emit_reshaped(dmlc_rewriter *rw, const dmlc_node *n, const canon_shape *c) {
  const dmlc_type *result = &rw->old->values[n->result].type;
  dmlc_type shape = {.dtype = rw->old->values[n->operands[0]].type.dtype, .rank = c->rank};
  dmlc_type reduced_shape = {.dtype = result->dtype, .rank = c->rank};
  dmlc_node reduction = *n;
  reduction.num_axes = 0;
  for (uint32_t i = 0; i < c->rank; i++) {
    shape.dims[i] = c->dims[i];
    reduced_shape.dims[i] = c->reduced[i] ? 1 : c->dims[i];
    if (c->reduced[i])
      reduction.axes[reduction.num_axes++] = i;
  }
  uint32_t viewed, reduced;
  DMLC_RETURN_IF_ERROR(dmlc_rewriter_emit1(
      rw, DMLC_OP_RESHAPE, dmlc_rewriter_lookup(rw, n->operands[0]), &shape, &viewed));
  reduction.operands[0] = viewed;
  DMLC_RETURN_IF_ERROR(dmlc_rewriter_emit(rw, &reduction, &reduced_shape, &reduced));
  return dmlc_rewriter_emit1(rw, DMLC_OP_RESHAPE, reduced, result, &rw->map[n->result]);
}

static dmlc_status canonicalize_reduction(dmlc_rewriter *rw, const dmlc_node *n) {
  const dmlc_ir_graph *g = rw->old;
  merge_rules rules = {
      .g = g, .operand = &g->values[n->operands[0]].type, .result = &g->values[n->result].type};
  rules.operand_strided = value_view_strides(g, n->operands[0], rules.operand_strides);
  canon_shape c;
  if (!canonical_shape(&rules, n, &c))
    return emit_constant_zero(rw, n);
  const bool unchanged = c.rank == rules.operand->rank &&
                         memcmp(c.dims, rules.operand->dims, c.rank * sizeof c.dims[0]) == 0;
  if (!unchanged)
    return emit_reshaped(rw, n, &c);
  dmlc_node sorted = *n;
  sort_axes(&sorted);
  return dmlc_rewriter_copy(rw, &sorted);
}

static dmlc_status canonicalize_node(dmlc_rewriter *rw, const dmlc_node *n) {
  if (dmlc_op_get(n->op)->kind == DMLC_OPKIND_REDUCTION)
    return canonicalize_reduction(rw, n);
  dmlc_node sorted = *n;
  sort_axes(&sorted);
  return dmlc_rewriter_copy(rw, &sorted);
}

dmlc_status dmlc_pass_canonicalize_axes(dmlc_ir_graph **g, dmlc_diag *diag) {
  dmlc_rewriter rw;
  DMLC_RETURN_IF_ERROR(dmlc_rewriter_begin(&rw, *g, diag));
  for (uint32_t k = 0; k < (*g)->num_nodes; k++) {
    const dmlc_status s = canonicalize_node(&rw, &(*g)->nodes[k]);
    if (s != DMLC_OK) {
      dmlc_rewriter_abort(&rw);
      return s;
    }
  }
  return dmlc_rewriter_finish(&rw, g);
}
