/* Graph construction: growable arrays of values, nodes, inputs, outputs. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ir/array.h"
#include "ir/ir.h"

dmlc_ir_graph *dmlc_ir_graph_create(const char *name) {
  dmlc_ir_graph *g = calloc(1, sizeof *g);
  if (g)
    snprintf(g->name, sizeof g->name, "%s", name ? name : "main");
  return g;
}

void dmlc_ir_graph_destroy(dmlc_ir_graph *g) {
  if (!g)
    return;
  free(g->values);
  free(g->nodes);
  free(g->inputs);
  free(g->outputs);
  free(g->kernels);
  free(g->kernel_buffers);
  free(g);
}

static void *dup_array(const void *src, uint32_t count, size_t item_size, bool *ok) {
  if (count == 0)
    return NULL;
  void *p = malloc((size_t)count * item_size);
  if (!p) {
    *ok = false;
    return NULL;
  }
  memcpy(p, src, (size_t)count * item_size);
  return p;
}

dmlc_ir_graph *dmlc_ir_graph_clone(const dmlc_ir_graph *g) {
  dmlc_ir_graph *c = calloc(1, sizeof *c);
  if (!c)
    return NULL;
  bool ok = true;
  memcpy(c->name, g->name, sizeof c->name);
  c->values = dup_array(g->values, g->num_values, sizeof *g->values, &ok);
  c->nodes = dup_array(g->nodes, g->num_nodes, sizeof *g->nodes, &ok);
  c->inputs = dup_array(g->inputs, g->num_inputs, sizeof *g->inputs, &ok);
  c->outputs = dup_array(g->outputs, g->num_outputs, sizeof *g->outputs, &ok);
  c->num_values = c->cap_values = g->num_values;
  c->num_nodes = c->cap_nodes = g->num_nodes;
  c->num_inputs = c->cap_inputs = g->num_inputs;
  c->num_outputs = c->cap_outputs = g->num_outputs;
  c->kernels = dup_array(g->kernels, g->num_kernels, sizeof *g->kernels, &ok);
  c->kernel_buffers =
      dup_array(g->kernel_buffers, g->num_kernel_buffers, sizeof *g->kernel_buffers, &ok);
  c->num_kernels = c->cap_kernels = g->num_kernels;
  c->num_kernel_buffers = c->cap_kernel_buffers = g->num_kernel_buffers;
  if (!ok) {
    dmlc_ir_graph_destroy(c);
    return NULL;
  }
  return c;
}

static dmlc_status new_value(dmlc_ir_graph *g, const dmlc_type *type, int32_t producer,
                             uint32_t *out, dmlc_diag *diag) {
  if (!DMLC_ARRAY_RESERVE(&g->values, &g->cap_values, g->num_values + 1, 8))
    return dmlc_diag_set(diag, DMLC_ERROR_OUT_OF_MEMORY, "out of memory growing graph values");
  g->values[g->num_values].type = *type;
  g->values[g->num_values].producer = producer;
  *out = g->num_values++;
  return DMLC_OK;
}

dmlc_status dmlc_ir_add_input(dmlc_ir_graph *g, const char *name, const dmlc_type *type,
                              const dmlc_layout *layout, uint32_t *out_value, dmlc_diag *diag) {
  if (!DMLC_ARRAY_RESERVE(&g->inputs, &g->cap_inputs, g->num_inputs + 1, 8))
    return dmlc_diag_set(diag, DMLC_ERROR_OUT_OF_MEMORY, "out of memory growing graph inputs");
  uint32_t v = 0;
  DMLC_RETURN_IF_ERROR(new_value(g, type, -1, &v, diag));
  dmlc_graph_io *io = &g->inputs[g->num_inputs++];
  memset(io, 0, sizeof *io);
  io->value = v;
  snprintf(io->name, sizeof io->name, "%s", name);
  io->layout = layout ? *layout : dmlc_layout_packed(type);
  if (out_value)
    *out_value = v;
  return DMLC_OK;
}

dmlc_status dmlc_ir_add_node(dmlc_ir_graph *g, const dmlc_node *node, const dmlc_type *result_type,
                             uint32_t *out_value, dmlc_diag *diag) {
  if (!DMLC_ARRAY_RESERVE(&g->nodes, &g->cap_nodes, g->num_nodes + 1, 8))
    return dmlc_diag_set(diag, DMLC_ERROR_OUT_OF_MEMORY, "out of memory growing graph nodes");
  uint32_t v = 0;
  DMLC_RETURN_IF_ERROR(new_value(g, result_type, (int32_t)g->num_nodes, &v, diag));
  g->nodes[g->num_nodes] = *node;
  g->nodes[g->num_nodes].result = v;
  g->num_nodes++;
  if (out_value)
    *out_value = v;
  return DMLC_OK;
}

dmlc_status dmlc_ir_add_output(dmlc_ir_graph *g, const char *name, uint32_t value,
                               const dmlc_layout *layout, dmlc_diag *diag) {
  if (!DMLC_ARRAY_RESERVE(&g->outputs, &g->cap_outputs, g->num_outputs + 1, 8))
    return dmlc_diag_set(diag, DMLC_ERROR_OUT_OF_MEMORY, "out of memory growing graph outputs");
  dmlc_graph_io *io = &g->outputs[g->num_outputs];
  memset(io, 0, sizeof *io);
  io->value = value;
  if (name)
    snprintf(io->name, sizeof io->name, "%s", name);
  else
    dmlc_default_output_name(g->num_outputs, io->name, sizeof io->name);
  if (layout)
    io->layout = *layout;
  else if (value < g->num_values)
    io->layout = dmlc_layout_packed(&g->values[value].type);
  g->num_outputs++;
  return DMLC_OK;
}

dmlc_status dmlc_ir_add_kernel(dmlc_ir_graph *g, const dmlc_kernel *kernel,
                               const dmlc_kernel_buffer *reads, const dmlc_kernel_buffer *writes,
                               dmlc_diag *diag) {
  const uint32_t count = kernel->num_reads + kernel->num_writes;
  if (!DMLC_ARRAY_RESERVE(&g->kernels, &g->cap_kernels, g->num_kernels + 1, 8))
    return dmlc_diag_set(diag, DMLC_ERROR_OUT_OF_MEMORY, "out of memory growing graph kernels");
  if (count > UINT32_MAX - g->num_kernel_buffers ||
      !DMLC_ARRAY_RESERVE(&g->kernel_buffers, &g->cap_kernel_buffers, g->num_kernel_buffers + count,
                          8))
    return dmlc_diag_set(diag, DMLC_ERROR_OUT_OF_MEMORY, "out of memory growing kernel buffers");
  dmlc_kernel *k = &g->kernels[g->num_kernels++];
  *k = *kernel;
  k->first_buffer = g->num_kernel_buffers;
  if (kernel->num_reads)
    memcpy(g->kernel_buffers + g->num_kernel_buffers, reads, kernel->num_reads * sizeof *reads);
  if (kernel->num_writes)
    memcpy(g->kernel_buffers + g->num_kernel_buffers + kernel->num_reads, writes,
           kernel->num_writes * sizeof *writes);
  g->num_kernel_buffers += count;
  return DMLC_OK;
}

dmlc_node dmlc_node_make(dmlc_op op) {
  dmlc_node n;
  memset(&n, 0, sizeof n);
  n.op = op;
  return n;
}

void dmlc_default_output_name(uint32_t index, char *buf, size_t size) {
  snprintf(buf, size, "out%u", index);
}

bool dmlc_name_is_valid(const char *name) {
  const size_t len = strlen(name);
  if (len == 0 || len >= DMLC_NAME_MAX)
    return false;
  for (size_t i = 0; i < len; i++) {
    const char c = name[i];
    const bool alpha = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
    const bool digit = c >= '0' && c <= '9';
    if (!(alpha || (i > 0 && (digit || c == '.'))))
      return false;
  }
  return true;
}
