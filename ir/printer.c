/* The IR's text form (docs/ir.md). The printer also copes with graphs the
 * verifier would reject, so that a broken graph can still be dumped: ids out
 * of range print as "%<invalid N>" and ranks are clamped to DMLC_MAX_RANK. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ir/ir.h"
#include "ir/strbuf.h"

static const char *dtype_spelling(dmlc_dtype dtype) {
  return (unsigned)dtype < DMLC_DTYPE_COUNT ? dmlc_dtype_name(dtype) : "?";
}

static uint32_t clamped_rank(const dmlc_type *t) {
  return t->rank < DMLC_MAX_RANK ? t->rank : DMLC_MAX_RANK;
}

const char *dmlc_type_str(const dmlc_type *t, char *buf, size_t size) {
  if (size == 0)
    return buf;
  size_t len = (size_t)snprintf(buf, size, "%s[", dtype_spelling(t->dtype));
  for (uint32_t i = 0; i < clamped_rank(t) && len < size; i++)
    len += (size_t)snprintf(buf + len, size - len, "%s%" PRIu32, i ? "," : "", t->dims[i]);
  if (len < size)
    snprintf(buf + len, size - len, "]");
  return buf;
}

static void print_type(dmlc_strbuf *sb, const dmlc_type *t) {
  char buf[DMLC_TYPE_STR_MAX];
  dmlc_strbuf_printf(sb, "%s", dmlc_type_str(t, buf, sizeof buf));
}

/* "[a, b, c]": the spelling of attribute lists and strides. */
static void print_u64_list(dmlc_strbuf *sb, const uint64_t *items, uint32_t count) {
  dmlc_strbuf_append(sb, "[");
  for (uint32_t i = 0; i < count; i++)
    dmlc_strbuf_printf(sb, "%s%" PRIu64, i ? ", " : "", items[i]);
  dmlc_strbuf_append(sb, "]");
}

/* Only what differs from the defaults: packed strides, the minimum size for
 * those strides, no alignment. */
static void print_layout(dmlc_strbuf *sb, const dmlc_type *t, const dmlc_layout *l) {
  const uint32_t rank = clamped_rank(t);
  uint64_t packed[DMLC_MAX_RANK];
  dmlc_type clamped = *t;
  clamped.rank = rank;
  dmlc_packed_strides(&clamped, packed);
  const bool strides = memcmp(packed, l->strides, rank * sizeof *packed) != 0;
  const bool known = (unsigned)t->dtype < DMLC_DTYPE_COUNT;
  const bool size = !known || l->size_bytes != dmlc_min_size_bytes(&clamped, l->strides);
  const bool align = l->alignment != 0;
  if (!strides && !size && !align)
    return;
  const char *sep = "";
  dmlc_strbuf_append(sb, "{");
  if (strides) {
    dmlc_strbuf_append(sb, "strides = ");
    print_u64_list(sb, l->strides, rank);
    sep = ", ";
  }
  if (size) {
    dmlc_strbuf_printf(sb, "%ssize = %" PRIu64, sep, l->size_bytes);
    sep = ", ";
  }
  if (align)
    dmlc_strbuf_printf(sb, "%salign = %" PRIu32, sep, l->alignment);
  dmlc_strbuf_append(sb, "}");
}

static int name_len(const char *name) {
  const char *end = memchr(name, '\0', DMLC_NAME_MAX);
  return end ? (int)(end - name) : DMLC_NAME_MAX;
}

/* How each value is spelled: a graph input by its name, a node result by its
 * node's index. */
typedef struct value_names {
  int64_t *ref; /* per value: node index >= 0, -(input index) - 2, or -1 */
} value_names;

static bool value_names_init(value_names *vn, const dmlc_ir_graph *g) {
  vn->ref = malloc(((size_t)g->num_values + 1) * sizeof *vn->ref);
  if (!vn->ref)
    return false;
  for (uint32_t v = 0; v < g->num_values; v++)
    vn->ref[v] = -1;
  for (uint32_t i = 0; i < g->num_inputs; i++)
    if (g->inputs[i].value < g->num_values)
      vn->ref[g->inputs[i].value] = -(int64_t)i - 2;
  for (uint32_t n = 0; n < g->num_nodes; n++)
    if (g->nodes[n].result < g->num_values)
      vn->ref[g->nodes[n].result] = n;
  return true;
}

static void print_value(dmlc_strbuf *sb, const dmlc_ir_graph *g, const value_names *vn,
                        uint32_t v) {
  const int64_t ref = v < g->num_values ? vn->ref[v] : -1;
  if (ref >= 0) {
    dmlc_strbuf_printf(sb, "%%%" PRId64, ref);
  } else if (ref < -1) {
    const char *name = g->inputs[-ref - 2].name;
    dmlc_strbuf_printf(sb, "%%%.*s", name_len(name), name);
  } else {
    dmlc_strbuf_printf(sb, "%%<invalid %" PRIu32 ">", v);
  }
}

static const dmlc_type *value_type(const dmlc_ir_graph *g, uint32_t v) {
  static const dmlc_type none = {DMLC_DTYPE_COUNT, 0, {0}};
  return v < g->num_values ? &g->values[v].type : &none;
}

static void print_attrs(dmlc_strbuf *sb, const dmlc_node *node, uint32_t attrs) {
  if (!attrs)
    return;
  const char *sep = "";
  dmlc_strbuf_append(sb, " {");
  if (attrs & DMLC_ATTR_AXES) {
    uint64_t axes[DMLC_MAX_RANK];
    const uint32_t count = node->num_axes < DMLC_MAX_RANK ? node->num_axes : DMLC_MAX_RANK;
    for (uint32_t i = 0; i < count; i++)
      axes[i] = node->axes[i];
    dmlc_strbuf_append(sb, "axes = ");
    print_u64_list(sb, axes, count);
    sep = ", ";
  }
  if (attrs & DMLC_ATTR_DIRECTION) {
    dmlc_strbuf_printf(sb, "%sdirection = %s", sep, dmlc_direction_name(node->direction));
    sep = ", ";
  }
  if (attrs & DMLC_ATTR_VALUE)
    dmlc_strbuf_printf(sb, "%svalue = %" PRId64, sep, node->value);
  dmlc_strbuf_append(sb, "}");
}

static void print_node(dmlc_strbuf *sb, const dmlc_ir_graph *g, const value_names *vn,
                       uint32_t index, const char *indent) {
  const dmlc_node *node = &g->nodes[index];
  const bool known = (unsigned)node->op < DMLC_OP_COUNT;
  dmlc_strbuf_printf(sb, "%s%%%" PRIu32 " = %s", indent, index,
                     known ? dmlc_op_get(node->op)->name : "?");
  const uint32_t count =
      node->num_operands < DMLC_MAX_OPERANDS ? node->num_operands : DMLC_MAX_OPERANDS;
  for (uint32_t i = 0; i < count; i++) {
    dmlc_strbuf_append(sb, i ? ", " : " ");
    print_value(sb, g, vn, node->operands[i]);
  }
  print_attrs(sb, node, known ? dmlc_op_get(node->op)->attrs : 0);
  dmlc_strbuf_append(sb, " : ");
  print_type(sb, value_type(g, node->result));
  dmlc_strbuf_append(sb, "\n");
}

static void print_signature(dmlc_strbuf *sb, const dmlc_ir_graph *g) {
  dmlc_strbuf_printf(sb, "graph @%.*s(", name_len(g->name), g->name);
  for (uint32_t i = 0; i < g->num_inputs; i++) {
    const dmlc_graph_io *in = &g->inputs[i];
    const dmlc_type *t = value_type(g, in->value);
    dmlc_strbuf_printf(sb, "%s%%%.*s: ", i ? ", " : "", name_len(in->name), in->name);
    print_type(sb, t);
    print_layout(sb, t, &in->layout);
  }
  dmlc_strbuf_append(sb, ") -> (");
  for (uint32_t i = 0; i < g->num_outputs; i++) {
    const dmlc_graph_io *out = &g->outputs[i];
    const dmlc_type *t = value_type(g, out->value);
    char default_name[DMLC_NAME_MAX];
    dmlc_default_output_name(i, default_name, sizeof default_name);
    dmlc_strbuf_printf(sb, "%s", i ? ", " : "");
    if (strncmp(out->name, default_name, DMLC_NAME_MAX) != 0)
      dmlc_strbuf_printf(sb, "%%%.*s: ", name_len(out->name), out->name);
    print_type(sb, t);
    print_layout(sb, t, &out->layout);
  }
  dmlc_strbuf_append(sb, ") {\n");
}

/* "[r2, 3]": the space, reduced dims marked with 'r'. */
static void print_space(dmlc_strbuf *sb, const dmlc_kernel *k) {
  const uint32_t rank = k->rank < DMLC_MAX_RANK ? k->rank : DMLC_MAX_RANK;
  dmlc_strbuf_append(sb, "[");
  for (uint32_t d = 0; d < rank; d++)
    dmlc_strbuf_printf(sb, "%s%s%" PRIu32, d ? ", " : "",
                       dmlc_mask_has_axis(k->reduced_mask, d) ? "r" : "", k->dims[d]);
  dmlc_strbuf_append(sb, "]");
}

static void print_buffers(dmlc_strbuf *sb, const dmlc_ir_graph *g, const value_names *vn,
                          const dmlc_kernel *k, const dmlc_kernel_buffer *bufs, uint32_t count) {
  const uint32_t rank = k->rank < DMLC_MAX_RANK ? k->rank : DMLC_MAX_RANK;
  for (uint32_t i = 0; i < count; i++) {
    const dmlc_kernel_buffer *b = &bufs[i];
    dmlc_strbuf_append(sb, i ? ", " : "");
    print_value(sb, g, vn, b->value);
    if (b->output >= 0 && (uint32_t)b->output < g->num_outputs) {
      const char *name = g->outputs[b->output].name;
      dmlc_strbuf_printf(sb, " -> %%%.*s", name_len(name), name);
    } else if (b->output >= 0) {
      dmlc_strbuf_printf(sb, " -> %%<invalid output %" PRId32 ">", b->output);
    }
    dmlc_strbuf_append(sb, " ");
    print_u64_list(sb, b->strides, rank);
  }
}

/* kernel @kN SPACE reads(...) writes(...) { nodes } */
static void print_kernel(dmlc_strbuf *sb, const dmlc_ir_graph *g, const value_names *vn,
                         uint32_t index, uint32_t first, uint32_t end) {
  const dmlc_kernel *k = &g->kernels[index];
  const bool bufs_ok =
      k->first_buffer <= g->num_kernel_buffers &&
      k->num_reads + (uint64_t)k->num_writes <= g->num_kernel_buffers - k->first_buffer;
  dmlc_strbuf_printf(sb, "  kernel @k%" PRIu32 " ", index);
  print_space(sb, k);
  dmlc_strbuf_append(sb, " reads(");
  if (bufs_ok)
    print_buffers(sb, g, vn, k, dmlc_kernel_reads(g, k), k->num_reads);
  dmlc_strbuf_append(sb, ") writes(");
  if (bufs_ok)
    print_buffers(sb, g, vn, k, dmlc_kernel_writes(g, k), k->num_writes);
  dmlc_strbuf_append(sb, ") {\n");
  for (uint32_t n = first; n < end; n++)
    print_node(sb, g, vn, n, "    ");
  dmlc_strbuf_append(sb, "  }\n");
}

/* Nodes in order, those of each kernel inside its block. Kernels whose
 * ranges are broken print what they can: never a node twice. */
static void print_body(dmlc_strbuf *sb, const dmlc_ir_graph *g, const value_names *vn) {
  uint32_t n = 0, k = 0;
  while (n < g->num_nodes || k < g->num_kernels) {
    if (k < g->num_kernels && (n == g->num_nodes || g->kernels[k].first_node <= n)) {
      const uint64_t end64 = (uint64_t)g->kernels[k].first_node + g->kernels[k].num_nodes;
      const uint32_t end = end64 < g->num_nodes ? (uint32_t)end64 : g->num_nodes;
      print_kernel(sb, g, vn, k, n, end > n ? end : n);
      n = end > n ? end : n;
      k++;
    } else {
      print_node(sb, g, vn, n++, "  ");
    }
  }
}

char *dmlc_ir_print(const dmlc_ir_graph *g) {
  dmlc_strbuf sb = {0};
  value_names vn;
  if (!value_names_init(&vn, g))
    return NULL;
  print_signature(&sb, g);
  print_body(&sb, g, &vn);
  dmlc_strbuf_append(&sb, "  return");
  for (uint32_t i = 0; i < g->num_outputs; i++) {
    dmlc_strbuf_append(&sb, i ? ", " : " ");
    print_value(&sb, g, &vn, g->outputs[i].value);
  }
  dmlc_strbuf_append(&sb, "\n}\n");
  free(vn.ref);
  return dmlc_strbuf_finish(&sb);
}
