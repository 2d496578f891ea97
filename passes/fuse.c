/* fuse: groups every node into a kernel (docs/ir.md, "Kernels").
 *
 * Each argmax/argmin starts a kernel whose space is its operand's dims
 * (size-1 dims dropped), reduced where it reduces. The kernel takes a copy of
 * the reshape producing its operand when that reshape is a view of what it
 * reads, then grows with the reshape, broadcast, eq and cast nodes that
 * consume its values and need nothing else but constant and reduced_index
 * nodes, which every kernel that uses them gets its own copy of. Each value
 * of the kernel is "full" (one element per space point, in row-major order)
 * or "reduced" (one per kept point); a broadcast joins only when it repeats a
 * reduced value over exactly the reduced dims, a reduced_index only when it
 * indexes exactly the reduced dims. So the lowered hardmax is one kernel and
 * its index tensor stays in registers. Nodes left over start elementwise
 * kernels that grow the same way.
 *
 * Kernels are emitted in the order of their first node, which keeps the
 * graph topologically ordered: a kernel reads only values defined before its
 * first node. Then every buffer gets strides over its kernel's space. A value
 * used outside its kernel is written densely; a graph output is written
 * through its layout seen as a view over the space, and where the layout is
 * not such a view (or the output is a graph input), a copy kernel of one
 * identity reshape writes it instead. */
#include <stdlib.h>
#include <string.h>

#include "ir/array.h"
#include "passes/passes.h"
#include "passes/rewrite.h"

typedef enum value_class { CLASS_NONE, CLASS_FULL, CLASS_REDUCED } value_class;

typedef struct member {
  uint32_t node; /* an old node index */
  bool copy;     /* a copy of a source or view reshape, private to the kernel */
} member;

typedef struct plan {
  dmlc_kernel k; /* the space; the rest is filled in at the end */
  bool has_reduction;
  uint32_t anchor; /* the node that started it */
  member *members;
  uint32_t num_members, cap_members;
} plan;

typedef struct fuser {
  const dmlc_ir_graph *g;
  dmlc_diag *diag;
  uint32_t *use_start, *uses; /* consumers of value v: uses[use_start[v] .. use_start[v+1]) */
  uint32_t *output_count;     /* per value */
  int32_t *kernel_of;         /* per node: its plan, or -1 */
  bool *skip;                 /* per node: a view reshape that every consumer copies */
  plan *plans;
  uint32_t num_plans, cap_plans;
} fuser;

static dmlc_status oom(dmlc_diag *diag) {
  return dmlc_diag_set(diag, DMLC_ERROR_OUT_OF_MEMORY, "out of memory in fuse");
}

/* ---- facts about the old graph ---- */
static const dmlc_type *type_of(const dmlc_ir_graph *g, uint32_t v) { return &g->values[v].type; }

static const dmlc_node *producer_of(const dmlc_ir_graph *g, uint32_t v) {
  const int32_t p = g->values[v].producer;
  return p >= 0 ? &g->nodes[p] : NULL;
}

static bool is_source(const dmlc_node *n) {
  return n && dmlc_op_get(n->op)->kind == DMLC_OPKIND_SOURCE;
}

static bool is_reduction(const dmlc_node *n) {
  return dmlc_op_get(n->op)->kind == DMLC_OPKIND_REDUCTION;
}

static uint32_t axes_mask(const dmlc_node *n) { return dmlc_axes_mask(n->axes, n->num_axes); }

/* A value's strides: a graph input's layout, dense row-major otherwise. */
static void strides_of(const dmlc_ir_graph *g, uint32_t v, uint64_t *strides) {
  for (uint32_t i = 0; i < g->num_inputs; i++)
    if (g->inputs[i].value == v) {
      memcpy(strides, g->inputs[i].layout.strides, sizeof g->inputs[i].layout.strides);
      return;
    }
  dmlc_packed_strides(type_of(g, v), strides);
}

static value_class class_in(const plan *p, const dmlc_type *t) {
  const uint64_t count = dmlc_type_num_elements(t);
  if (count == dmlc_kernel_num_points(&p->k))
    return CLASS_FULL;
  if (p->has_reduction && count == dmlc_kernel_num_kept_points(&p->k))
    return CLASS_REDUCED;
  return CLASS_NONE;
}

static bool strides_equal(const plan *p, const uint64_t *a, const uint64_t *b) {
  return memcmp(a, b, p->k.rank * sizeof *a) == 0;
}

/* A reduced_index fits when it indexes exactly the space's reduced dims; a
 * constant whenever it has one element per point or per kept point. */
static bool source_fits(const fuser *f, const plan *p, const dmlc_node *n) {
  const dmlc_type *t = type_of(f->g, n->result);
  const value_class c = class_in(p, t);
  if (n->op == DMLC_OP_CONSTANT || c == CLASS_NONE)
    return c != CLASS_NONE;
  if (c != CLASS_FULL)
    return false;
  uint64_t index[DMLC_MAX_RANK], seen[DMLC_MAX_RANK], want[DMLC_MAX_RANK];
  const uint32_t mask = axes_mask(n);
  uint64_t s = 1;
  for (uint32_t d = t->rank; d-- > 0;) {
    const bool reduced = dmlc_mask_has_axis(mask, d);
    index[d] = reduced ? s : 0;
    s *= reduced ? t->dims[d] : 1;
  }
  dmlc_kernel_reduced_index_strides(&p->k, want);
  return dmlc_kernel_view(&p->k, false, t->dims, t->rank, index, seen) &&
         strides_equal(p, seen, want);
}

/* A broadcast fits when its result, seen over the space, reads its operand
 * exactly where the operand's own class puts each element. */
static bool broadcast_fits(const fuser *f, const plan *p, const dmlc_node *n) {
  const dmlc_type *in = type_of(f->g, n->operands[0]), *out = type_of(f->g, n->result);
  const value_class in_class = class_in(p, in), out_class = class_in(p, out);
  uint64_t strides[DMLC_MAX_RANK], seen[DMLC_MAX_RANK], want[DMLC_MAX_RANK];
  dmlc_packed_strides(in, strides);
  for (uint32_t d = 0; d < out->rank; d++)
    if (in->dims[d] == 1)
      strides[d] = 0;
  if (in_class == CLASS_NONE || out_class == CLASS_NONE)
    return false;
  dmlc_kernel_dense_strides(&p->k, in_class == CLASS_REDUCED, want);
  return dmlc_kernel_view(&p->k, out_class == CLASS_REDUCED, out->dims, out->rank, strides, seen) &&
         strides_equal(p, seen, want);
}

/* The space a reduction would get. */
static dmlc_kernel reduction_space(const fuser *f, const dmlc_node *n) {
  dmlc_kernel k;
  memset(&k, 0, sizeof k);
  dmlc_kernel_set_space(&k, type_of(f->g, n->operands[0]), axes_mask(n));
  return k;
}

/* The reshape producing reduction n's operand, when it reads a view of the
 * space (a graph input through its layout, or any dense value): NULL if not. */
static const dmlc_node *view_reshape(const fuser *f, const dmlc_node *n) {
  const dmlc_node *r = producer_of(f->g, n->operands[0]);
  if (!r || r->op != DMLC_OP_RESHAPE)
    return NULL;
  const dmlc_kernel k = reduction_space(f, n);
  const dmlc_type *t = type_of(f->g, r->operands[0]);
  uint64_t strides[DMLC_MAX_RANK], seen[DMLC_MAX_RANK];
  strides_of(f->g, r->operands[0], strides);
  return dmlc_kernel_view(&k, false, t->dims, t->rank, strides, seen) ? r : NULL;
}

/* ---- planning ---- */
static dmlc_status add_member(fuser *f, uint32_t pid, uint32_t node, bool copy) {
  plan *p = &f->plans[pid];
  for (uint32_t i = 0; i < p->num_members; i++)
    if (p->members[i].node == node && p->members[i].copy == copy)
      return DMLC_OK;
  if (!DMLC_ARRAY_RESERVE(&p->members, &p->cap_members, p->num_members + 1, 8))
    return oom(f->diag);
  p->members[p->num_members++] = (member){node, copy};
  if (!copy)
    f->kernel_of[node] = (int32_t)pid;
  return DMLC_OK;
}

/* Copies into the plan the source nodes among n's operands that fit it. */
static dmlc_status copy_sources(fuser *f, uint32_t pid, const dmlc_node *n) {
  for (uint32_t i = 0; i < n->num_operands; i++) {
    const dmlc_node *src = producer_of(f->g, n->operands[i]);
    if (is_source(src) && source_fits(f, &f->plans[pid], src))
      DMLC_RETURN_IF_ERROR(add_member(f, pid, (uint32_t)f->g->values[src->result].producer, true));
  }
  return DMLC_OK;
}

static dmlc_status new_plan(fuser *f, uint32_t seed, const dmlc_kernel *space, bool reduction,
                            uint32_t *out) {
  if (!DMLC_ARRAY_RESERVE(&f->plans, &f->cap_plans, f->num_plans + 1, 8))
    return oom(f->diag);
  plan *p = &f->plans[f->num_plans];
  memset(p, 0, sizeof *p);
  p->k = *space;
  p->has_reduction = reduction;
  p->anchor = seed;
  *out = f->num_plans++;
  return add_member(f, *out, seed, false);
}

/* Consumer c joins plan pid when every operand is in it or a source that
 * fits, and its result is full or reduced (and, for a broadcast, fits). */
static dmlc_status try_absorb(fuser *f, uint32_t pid, uint32_t c) {
  const dmlc_node *n = &f->g->nodes[c];
  const plan *p = &f->plans[pid];
  if (f->kernel_of[c] >= 0 || f->skip[c])
    return DMLC_OK;
  if (n->op != DMLC_OP_RESHAPE && n->op != DMLC_OP_BROADCAST && n->op != DMLC_OP_EQ &&
      n->op != DMLC_OP_CAST)
    return DMLC_OK;
  if (class_in(p, type_of(f->g, n->result)) == CLASS_NONE)
    return DMLC_OK;
  for (uint32_t i = 0; i < n->num_operands; i++) {
    const int32_t producer = f->g->values[n->operands[i]].producer;
    const dmlc_node *src = producer_of(f->g, n->operands[i]);
    const bool inside = producer >= 0 && f->kernel_of[producer] == (int32_t)pid;
    if (!inside && !(is_source(src) && source_fits(f, p, src)))
      return DMLC_OK;
  }
  if (n->op == DMLC_OP_BROADCAST && !broadcast_fits(f, p, n))
    return DMLC_OK;
  DMLC_RETURN_IF_ERROR(add_member(f, pid, c, false));
  return copy_sources(f, pid, n);
}

static dmlc_status grow(fuser *f, uint32_t pid) {
  for (uint32_t i = 0; i < f->plans[pid].num_members; i++) {
    const member m = f->plans[pid].members[i];
    if (m.copy)
      continue;
    const uint32_t v = f->g->nodes[m.node].result;
    for (uint32_t u = f->use_start[v]; u < f->use_start[v + 1]; u++)
      DMLC_RETURN_IF_ERROR(try_absorb(f, pid, f->uses[u]));
  }
  return DMLC_OK;
}

/* A kernel started by node seed (not a source). */
static dmlc_status plan_from(fuser *f, uint32_t seed) {
  const dmlc_node *n = &f->g->nodes[seed];
  dmlc_kernel space;
  memset(&space, 0, sizeof space);
  const bool reduction = is_reduction(n);
  if (reduction)
    space = reduction_space(f, n);
  else if (n->op == DMLC_OP_RESHAPE) /* its operand's dims: the read is then the identity */
    dmlc_kernel_set_space(&space, type_of(f->g, n->operands[0]), 0);
  else
    dmlc_kernel_set_space(&space, type_of(f->g, n->result), 0);
  uint32_t pid;
  DMLC_RETURN_IF_ERROR(new_plan(f, seed, &space, reduction, &pid));
  const dmlc_node *r = reduction ? view_reshape(f, n) : NULL;
  if (r) {
    DMLC_RETURN_IF_ERROR(add_member(f, pid, (uint32_t)f->g->values[r->result].producer, true));
    DMLC_RETURN_IF_ERROR(copy_sources(f, pid, r));
  } else {
    DMLC_RETURN_IF_ERROR(copy_sources(f, pid, n));
  }
  return grow(f, pid);
}

static bool has_copy(const plan *p, uint32_t node) {
  for (uint32_t i = 0; i < p->num_members; i++)
    if (p->members[i].node == node && p->members[i].copy)
      return true;
  return false;
}

/* A source node is kept (as a kernel of its own) when it is an output, is
 * unused, or some kernel reads it instead of copying it. */
static bool source_needed(const fuser *f, uint32_t node, uint32_t num_plans) {
  const uint32_t v = f->g->nodes[node].result;
  if (f->output_count[v] || f->use_start[v] == f->use_start[v + 1])
    return true;
  for (uint32_t pid = 0; pid < num_plans; pid++) {
    const plan *p = &f->plans[pid];
    for (uint32_t i = 0; i < p->num_members; i++) {
      const dmlc_node *m = &f->g->nodes[p->members[i].node];
      for (uint32_t j = 0; j < m->num_operands; j++)
        if (m->operands[j] == v && !has_copy(p, node))
          return true;
    }
  }
  return false;
}

/* A reshape is skipped when every consumer is a reduction that copies it. */
static bool reshape_skipped(const fuser *f, uint32_t node) {
  const uint32_t v = f->g->nodes[node].result;
  if (f->output_count[v] || f->use_start[v] == f->use_start[v + 1])
    return false;
  for (uint32_t u = f->use_start[v]; u < f->use_start[v + 1]; u++) {
    const dmlc_node *c = &f->g->nodes[f->uses[u]];
    if (!is_reduction(c) || view_reshape(f, c) == NULL)
      return false;
  }
  return true;
}

static dmlc_status plan_all(fuser *f) {
  const dmlc_ir_graph *g = f->g;
  for (uint32_t n = 0; n < g->num_nodes; n++)
    if (g->nodes[n].op == DMLC_OP_RESHAPE)
      f->skip[n] = reshape_skipped(f, n);
  for (uint32_t n = 0; n < g->num_nodes; n++)
    if (!is_source(&g->nodes[n]) && !f->skip[n] && f->kernel_of[n] < 0)
      DMLC_RETURN_IF_ERROR(plan_from(f, n));
  const uint32_t planned = f->num_plans;
  for (uint32_t n = 0; n < g->num_nodes; n++) {
    if (!is_source(&g->nodes[n]))
      continue;
    if (!source_needed(f, n, planned))
      continue;
    dmlc_kernel space;
    const dmlc_node *src = &g->nodes[n];
    dmlc_kernel_set_space(&space, type_of(g, src->result),
                          src->op == DMLC_OP_REDUCED_INDEX ? axes_mask(src) : 0);
    uint32_t pid;
    DMLC_RETURN_IF_ERROR(new_plan(f, n, &space, false, &pid));
  }
  return DMLC_OK;
}

static dmlc_status index_uses(fuser *f) {
  const dmlc_ir_graph *g = f->g;
  f->use_start = calloc((size_t)g->num_values + 1, sizeof *f->use_start);
  f->output_count = calloc((size_t)g->num_values + 1, sizeof *f->output_count);
  f->kernel_of = malloc(((size_t)g->num_nodes + 1) * sizeof *f->kernel_of);
  f->skip = calloc((size_t)g->num_nodes + 1, sizeof *f->skip);
  size_t total = 0;
  for (uint32_t n = 0; n < g->num_nodes; n++)
    total += g->nodes[n].num_operands;
  f->uses = malloc((total + 1) * sizeof *f->uses);
  if (!f->use_start || !f->output_count || !f->kernel_of || !f->skip || !f->uses)
    return oom(f->diag);
  for (uint32_t n = 0; n < g->num_nodes; n++) {
    f->kernel_of[n] = -1;
    for (uint32_t i = 0; i < g->nodes[n].num_operands; i++)
      f->use_start[g->nodes[n].operands[i] + 1]++;
  }
  for (uint32_t v = 0; v < g->num_values; v++)
    f->use_start[v + 1] += f->use_start[v];
  uint32_t *fill = calloc((size_t)g->num_values + 1, sizeof *fill);
  if (!fill)
    return oom(f->diag);
  for (uint32_t n = 0; n < g->num_nodes; n++)
    for (uint32_t i = 0; i < g->nodes[n].num_operands; i++) {
      const uint32_t v = g->nodes[n].operands[i];
      f->uses[f->use_start[v] + fill[v]++] = n; /* eq %a, %a: twice, harmlessly */
    }
  free(fill);
  for (uint32_t o = 0; o < g->num_outputs; o++)
    f->output_count[g->outputs[o].value]++;
  return DMLC_OK;
}

static void fuser_free(fuser *f) {
  for (uint32_t i = 0; i < f->num_plans; i++)
    free(f->plans[i].members);
  free(f->plans);
  free(f->use_start);
  free(f->uses);
  free(f->output_count);
  free(f->kernel_of);
  free(f->skip);
}

/* ---- emission ---- */
static int compare_anchor(const void *a, const void *b) {
  const plan *x = a, *y = b;
  return (x->anchor > y->anchor) - (x->anchor < y->anchor);
}

static int compare_member(const void *a, const void *b) {
  const member *x = a, *y = b;
  return (x->node > y->node) - (x->node < y->node);
}

/* Emits every plan's nodes, in plan order, each plan's in node order; the
 * copies' results are private to their plan (local[] stamped by plan). */
static dmlc_status emit_plans(fuser *f, dmlc_rewriter *rw) {
  const dmlc_ir_graph *g = f->g;
  uint32_t *local = malloc(((size_t)g->num_values + 1) * sizeof *local);
  int32_t *stamp = malloc(((size_t)g->num_values + 1) * sizeof *stamp);
  if (!local || !stamp) {
    free(local);
    free(stamp);
    return oom(f->diag);
  }
  for (uint32_t v = 0; v < g->num_values; v++)
    stamp[v] = -1;
  dmlc_status st = DMLC_OK;
  for (uint32_t pid = 0; pid < f->num_plans && st == DMLC_OK; pid++) {
    plan *p = &f->plans[pid];
    qsort(p->members, p->num_members, sizeof *p->members, compare_member);
    p->k.first_node = rw->out->num_nodes;
    for (uint32_t i = 0; i < p->num_members && st == DMLC_OK; i++) {
      const dmlc_node *n = &g->nodes[p->members[i].node];
      dmlc_node mapped = *n;
      for (uint32_t j = 0; j < n->num_operands; j++) {
        const uint32_t u = n->operands[j];
        mapped.operands[j] = stamp[u] == (int32_t)pid ? local[u] : rw->map[u];
        if (mapped.operands[j] == DMLC_UNMAPPED)
          st = dmlc_diag_set(f->diag, DMLC_ERROR_INTERNAL,
                             "fuse: a kernel uses value %u before it is computed", u);
      }
      uint32_t out = 0;
      if (st == DMLC_OK)
        st = dmlc_rewriter_emit(rw, &mapped, type_of(g, n->result), &out);
      if (p->members[i].copy) {
        local[n->result] = out;
        stamp[n->result] = (int32_t)pid;
      } else {
        rw->map[n->result] = out;
      }
    }
    p->k.num_nodes = rw->out->num_nodes - p->k.first_node;
  }
  free(local);
  free(stamp);
  return st;
}

/* ---- buffers, over the new graph ---- */
typedef struct placed {
  dmlc_ir_graph *g;
  dmlc_diag *diag;
  plan *plans; /* only k and has_reduction are used now */
  uint32_t num_plans, cap_plans;
  int32_t *kernel_of; /* per node */
  bool *escapes;      /* per value: used by a node of another kernel */
  dmlc_kernel_buffer *bufs;
  uint32_t num_bufs, cap_bufs;
} placed;

static dmlc_status push_buffer(placed *pl, uint32_t value, int32_t output,
                               const uint64_t *strides) {
  if (!DMLC_ARRAY_RESERVE(&pl->bufs, &pl->cap_bufs, pl->num_bufs + 1, 8))
    return oom(pl->diag);
  dmlc_kernel_buffer *b = &pl->bufs[pl->num_bufs++];
  memset(b, 0, sizeof *b);
  b->value = value;
  b->output = output;
  memcpy(b->strides, strides, sizeof b->strides);
  return DMLC_OK;
}

/* How node n, inside plan p, sees operand u from outside. */
static dmlc_status read_strides(const placed *pl, const plan *p, const dmlc_node *n, uint32_t u,
                                uint64_t *out) {
  const dmlc_type *in = &pl->g->values[u].type, *res = &pl->g->values[n->result].type;
  uint64_t strides[DMLC_MAX_RANK];
  strides_of(pl->g, u, strides);
  const dmlc_type *seen_as = in;
  if (n->op == DMLC_OP_BROADCAST) {
    for (uint32_t d = 0; d < in->rank; d++)
      if (in->dims[d] == 1)
        strides[d] = 0;
    seen_as = res;
  }
  const bool reduced = !is_reduction(n) && class_in(p, res) == CLASS_REDUCED;
  memset(out, 0, DMLC_MAX_RANK * sizeof *out);
  if (!dmlc_kernel_view(&p->k, reduced, seen_as->dims, seen_as->rank, strides, out))
    return dmlc_diag_set(pl->diag, DMLC_ERROR_INTERNAL,
                         "fuse: value %u is not a view over its reader's space", u);
  return DMLC_OK;
}

static bool output_view(const placed *pl, const plan *p, uint32_t o, uint64_t *out) {
  const dmlc_graph_io *io = &pl->g->outputs[o];
  const dmlc_type *t = &pl->g->values[io->value].type;
  memset(out, 0, DMLC_MAX_RANK * sizeof *out);
  return dmlc_kernel_view(&p->k, class_in(p, t) == CLASS_REDUCED, t->dims, t->rank,
                          io->layout.strides, out);
}

/* Output o gets a kernel of its own: an identity reshape of its value. */
static dmlc_status add_copy(placed *pl, uint32_t o) {
  dmlc_ir_graph *g = pl->g;
  const uint32_t v = g->outputs[o].value;
  const dmlc_type t = g->values[v].type;
  dmlc_node n = dmlc_node_make(DMLC_OP_RESHAPE);
  n.num_operands = 1;
  n.operands[0] = v;
  uint32_t c;
  DMLC_RETURN_IF_ERROR(dmlc_ir_add_node(g, &n, &t, &c, pl->diag));
  g->outputs[o].value = c;
  if (!DMLC_ARRAY_RESERVE(&pl->plans, &pl->cap_plans, pl->num_plans + 1, 8))
    return oom(pl->diag);
  plan *p = &pl->plans[pl->num_plans++];
  memset(p, 0, sizeof *p);
  dmlc_kernel_set_space(&p->k, &t, 0);
  p->k.first_node = g->num_nodes - 1;
  p->k.num_nodes = 1;
  pl->kernel_of[p->k.first_node] = (int32_t)(pl->num_plans - 1);
  return DMLC_OK;
}

/* Outputs that no kernel can write through their layout get a copy. */
static dmlc_status place_copies(placed *pl) {
  dmlc_ir_graph *g = pl->g;
  for (uint32_t o = 0; o < g->num_outputs; o++) {
    const int32_t producer = g->values[g->outputs[o].value].producer;
    uint64_t strides[DMLC_MAX_RANK];
    if (producer >= 0 && output_view(pl, &pl->plans[pl->kernel_of[producer]], o, strides))
      continue;
    DMLC_RETURN_IF_ERROR(add_copy(pl, o));
  }
  return DMLC_OK;
}

static dmlc_status place_kernel(placed *pl, const plan *p) {
  dmlc_ir_graph *g = pl->g;
  const dmlc_kernel *k = &p->k;
  const uint32_t end = k->first_node + k->num_nodes;
  uint64_t strides[DMLC_MAX_RANK];
  pl->num_bufs = 0;
  for (uint32_t n = k->first_node; n < end; n++)
    for (uint32_t i = 0; i < g->nodes[n].num_operands; i++) {
      const uint32_t u = g->nodes[n].operands[i];
      const int32_t producer = g->values[u].producer;
      bool known = producer >= (int32_t)k->first_node;
      for (uint32_t b = 0; b < pl->num_bufs && !known; b++)
        known = pl->bufs[b].value == u;
      if (known)
        continue;
      DMLC_RETURN_IF_ERROR(read_strides(pl, p, &g->nodes[n], u, strides));
      DMLC_RETURN_IF_ERROR(push_buffer(pl, u, -1, strides));
    }
  const uint32_t num_reads = pl->num_bufs;
  for (uint32_t n = k->first_node; n < end; n++) {
    const uint32_t v = g->nodes[n].result;
    if (pl->escapes[v]) {
      dmlc_kernel_dense_strides(k, class_in(p, &g->values[v].type) == CLASS_REDUCED, strides);
      DMLC_RETURN_IF_ERROR(push_buffer(pl, v, -1, strides));
    }
    for (uint32_t o = 0; o < g->num_outputs; o++) {
      if (g->outputs[o].value != v)
        continue;
      if (!output_view(pl, p, o, strides))
        return dmlc_diag_set(pl->diag, DMLC_ERROR_INTERNAL,
                             "fuse: output %u is not a view over its kernel's space", o);
      DMLC_RETURN_IF_ERROR(push_buffer(pl, v, (int32_t)o, strides));
    }
  }
  dmlc_kernel kernel = *k;
  kernel.num_reads = num_reads;
  kernel.num_writes = pl->num_bufs - num_reads;
  return dmlc_ir_add_kernel(g, &kernel, pl->bufs, pl->bufs + num_reads, pl->diag);
}

static dmlc_status place_all(placed *pl) {
  dmlc_ir_graph *g = pl->g;
  /* room for a copy per output */
  pl->kernel_of = malloc(((size_t)g->num_nodes + g->num_outputs + 1) * sizeof *pl->kernel_of);
  if (!pl->kernel_of)
    return oom(pl->diag);
  for (uint32_t pid = 0; pid < pl->num_plans; pid++)
    for (uint32_t n = 0; n < pl->plans[pid].k.num_nodes; n++)
      pl->kernel_of[pl->plans[pid].k.first_node + n] = (int32_t)pid;
  DMLC_RETURN_IF_ERROR(place_copies(pl));
  pl->escapes = calloc((size_t)g->num_values + 1, sizeof *pl->escapes);
  if (!pl->escapes)
    return oom(pl->diag);
  for (uint32_t n = 0; n < g->num_nodes; n++)
    for (uint32_t i = 0; i < g->nodes[n].num_operands; i++) {
      const uint32_t u = g->nodes[n].operands[i];
      const int32_t producer = g->values[u].producer;
      if (producer >= 0 && pl->kernel_of[producer] != pl->kernel_of[n])
        pl->escapes[u] = true;
    }
  for (uint32_t pid = 0; pid < pl->num_plans; pid++)
    DMLC_RETURN_IF_ERROR(place_kernel(pl, &pl->plans[pid]));
  return DMLC_OK;
}

static dmlc_status check_lowered(const dmlc_ir_graph *g, dmlc_diag *diag) {
  for (uint32_t n = 0; n < g->num_nodes; n++)
    if (dmlc_op_get(g->nodes[n].op)->kind == DMLC_OPKIND_COMPOSITE)
      return dmlc_diag_set(diag, DMLC_ERROR_INVALID_ARGUMENT,
                           "fuse: %%%u = %s must be lowered first (lower-hardmax)", n,
                           dmlc_op_get(g->nodes[n].op)->name);
  return DMLC_OK;
}

dmlc_status dmlc_pass_fuse(dmlc_ir_graph **g, dmlc_diag *diag) {
  DMLC_RETURN_IF_ERROR(check_lowered(*g, diag));
  fuser f;
  memset(&f, 0, sizeof f);
  f.g = *g;
  f.diag = diag;
  dmlc_status st = index_uses(&f);
  if (st == DMLC_OK)
    st = plan_all(&f);
  if (st != DMLC_OK) {
    fuser_free(&f);
    return st;
  }
  if (f.num_plans) /* f.plans is NULL in a graph with no operators */
    qsort(f.plans, f.num_plans, sizeof *f.plans, compare_anchor);
  dmlc_rewriter rw;
  st = dmlc_rewriter_begin(&rw, *g, diag);
  if (st == DMLC_OK) {
    st = emit_plans(&f, &rw);
    if (st != DMLC_OK)
      dmlc_rewriter_abort(&rw);
  }
  placed pl = {.diag = diag, .plans = f.plans, .num_plans = f.num_plans, .cap_plans = f.cap_plans};
  for (uint32_t i = 0; i < f.num_plans; i++) { /* only the spaces and ranges go on */
    free(f.plans[i].members);
    f.plans[i].members = NULL;
  }
  f.plans = NULL;
  f.num_plans = 0;
  fuser_free(&f);
  if (st == DMLC_OK)
    st = dmlc_rewriter_finish(&rw, g);
  if (st == DMLC_OK) {
    pl.g = *g;
    st = place_all(&pl);
  }
  free(pl.plans);
  free(pl.kernel_of);
  free(pl.escapes);
  free(pl.bufs);
  return st;
}
