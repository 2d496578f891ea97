/* The descriptive kinds of dmlc_graph_emit: metadata (JSON) and dot
 * (Graphviz). Both are deterministic: no pointers, times or paths. */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "api/aot_internal.h"
#include "ir/strbuf.h"

/* s as a JSON string (also a valid dot string: quotes and backslashes
 * escaped, control characters as \u00XX). */
static void quoted(dmlc_strbuf *sb, const char *s) {
  dmlc_strbuf_append(sb, "\"");
  for (; *s; s++) {
    const unsigned char c = (unsigned char)*s;
    if (c == '"' || c == '\\')
      dmlc_strbuf_printf(sb, "\\%c", c);
    else if (c < 0x20)
      dmlc_strbuf_printf(sb, "\\u%04x", c);
    else
      dmlc_strbuf_printf(sb, "%c", c);
  }
  dmlc_strbuf_append(sb, "\"");
}

static const char *binding_kind(dmlc_binding_kind k) {
  return k == DMLC_BINDING_INPUT ? "input" : k == DMLC_BINDING_OUTPUT ? "output" : "temporary";
}

static void binding_json(dmlc_strbuf *sb, dmlc_binding b) {
  dmlc_strbuf_printf(sb, "{\"kind\": \"%s\", \"index\": %" PRIu32 "}", binding_kind(b.kind),
                     b.index);
}

static void u64_list(dmlc_strbuf *sb, const uint64_t *v, uint32_t n) {
  dmlc_strbuf_append(sb, "[");
  for (uint32_t i = 0; i < n; i++)
    dmlc_strbuf_printf(sb, "%s%" PRIu64, i ? ", " : "", v[i]);
  dmlc_strbuf_append(sb, "]");
}

static void u32_list(dmlc_strbuf *sb, const uint32_t *v, uint32_t n) {
  dmlc_strbuf_append(sb, "[");
  for (uint32_t i = 0; i < n; i++)
    dmlc_strbuf_printf(sb, "%s%" PRIu32, i ? ", " : "", v[i]);
  dmlc_strbuf_append(sb, "]");
}

static void io_json(dmlc_strbuf *sb, const dmlc_ir_graph *g, const dmlc_graph_io *io) {
  const dmlc_type *t = &g->values[io->value].type;
  const dmlc_dtype_info *d = dmlc_dtype_get(t->dtype);
  dmlc_strbuf_append(sb, "    {\"name\": ");
  quoted(sb, io->name);
  dmlc_strbuf_printf(sb, ", \"dtype\": \"%s\", \"dml_data_type\": %d, \"element_bytes\": %" PRIu32,
                     d->name, (int)d->dml, d->size);
  dmlc_strbuf_append(sb, ", \"sizes\": ");
  u32_list(sb, t->dims, t->rank);
  dmlc_strbuf_append(sb, ", \"strides\": ");
  u64_list(sb, io->layout.strides, t->rank);
  dmlc_strbuf_printf(sb, ", \"size_bytes\": %" PRIu64 ", \"alignment\": %" PRIu32 "}",
                     io->layout.size_bytes, io->layout.alignment);
}

/* The Vulkan features a module needs beyond Vulkan 1.2's core. */
static void spirv_features(dmlc_strbuf *sb, bool nonuniform) {
  dmlc_strbuf_append(sb, nonuniform ? "[\"shaderStorageBufferArrayDynamicIndexing\", "
                                      "\"shaderStorageBufferArrayNonUniformIndexing\"]"
                                    : "[]");
}

/* The "spirv" section: null without the Vulkan backend, {"error"} when a
 * kernel has no module, else what an application needs to bind and
 * dispatch the modules itself (docs/aot.md, "SPIR-V"). */
static void spirv_json(dmlc_strbuf *sb, const dmlc_aot_graph *in) {
  const dmlc_aot_spirv *s = in->spirv;
  const dmlc_kernel_plan *plan = in->plan;
  if (!s || !s->built) {
    dmlc_strbuf_append(sb, "null");
    return;
  }
  if (s->error) {
    dmlc_strbuf_append(sb, "{\"error\": ");
    quoted(sb, s->error);
    dmlc_strbuf_append(sb, "}");
    return;
  }
  const dmlc_spirv_caps *caps = s->caps;
  bool nonuniform = false;
  for (uint32_t k = 0; k < plan->num_kernels; k++)
    nonuniform |= s->modules[k].nonuniform_indexing;
  dmlc_strbuf_printf(sb,
                     "{\n    \"target_env\": \"vulkan1.2\", \"spirv_version\": \"1.5\",\n"
                     "    \"limits\": {\"max_workgroup_size\": %" PRIu32
                     ", \"max_workgroup_count\": %" PRIu32 ", \"max_shared_bytes\": %" PRIu32
                     ", \"max_storage_buffer_range\": %" PRIu64 "},\n    \"device_features\": ",
                     caps->max_workgroup_size, caps->max_workgroup_count, caps->max_shared_bytes,
                     caps->max_storage_range);
  spirv_features(sb, nonuniform);
  dmlc_strbuf_append(sb, ",\n    \"descriptor_set\": 0, \"buffer_size_multiple\": 4,\n"
                         "    \"push_constants\": [{\"offset\": 0, \"size\": 4, \"type\": "
                         "\"uint32\", \"meaning\": \"the first workgroup of the dispatch\"}],\n"
                         "    \"kernels\": [\n");
  for (uint32_t k = 0; k < plan->num_kernels; k++) {
    const dmlc_kdesc *d = &plan->kernels[k];
    const dmlc_spirv_module *m = &s->modules[k];
    const uint64_t per = caps->max_workgroup_count;
    uint64_t descriptors = 0;
    for (uint32_t b = 0; b < m->num_bindings; b++)
      descriptors += m->bindings[b].count;
    dmlc_strbuf_printf(sb,
                       "      {\"kernel\": %" PRIu32 ", \"entry_point\": \"main\", "
                       "\"module_bytes\": %zu, \"local_size\": [%" PRIu32 ", 1, 1], "
                       "\"workgroups\": %" PRIu64 ", \"max_workgroups_per_dispatch\": %" PRIu64
                       ", \"dispatches\": %" PRIu64 ", \"descriptors\": %" PRIu64
                       ", \"nonuniform_indexing\": %s, \"device_features\": ",
                       k, m->num_words * 4, m->local_size, m->num_groups, per,
                       (m->num_groups + per - 1) / per, descriptors,
                       m->nonuniform_indexing ? "true" : "false");
    spirv_features(sb, m->nonuniform_indexing);
    dmlc_strbuf_append(sb, ",\n       \"bindings\": [");
    for (uint32_t b = 0; b < m->num_bindings; b++) {
      dmlc_strbuf_printf(sb,
                         "%s\n         {\"binding\": %" PRIu32
                         ", \"descriptor_type\": \"storage_buffer\", \"count\": %" PRIu32
                         ", \"window_bytes\": %" PRIu64 ", \"buffer\": ",
                         b ? "," : "", b, m->bindings[b].count, m->bindings[b].window_bytes);
      if (b == 0 && !d->has_read)
        dmlc_strbuf_append(sb, "{\"kind\": \"none\", \"index\": 0}");
      else
        binding_json(sb, b == 0 ? d->read_binding : d->outputs[b - 1].binding);
      dmlc_strbuf_printf(sb, ", \"readonly\": %s}", b == 0 ? "true" : "false");
    }
    dmlc_strbuf_printf(sb, "]}%s\n", k + 1 < plan->num_kernels ? "," : "");
  }
  dmlc_strbuf_append(sb, "    ]\n  }");
}

static const char *const pfor_type =
    "void (*)(void *user, uint32_t count, void (*task)(void *arg, uint32_t i), void *arg)";

dmlc_status dmlc_aot_metadata(const dmlc_aot_graph *in, char **out, dmlc_diag *diag) {
  *out = NULL;
  const dmlc_ir_graph *g = in->graph;
  const dmlc_kernel_plan *plan = in->plan;
  dmlc_strbuf sb = {0};
  dmlc_strbuf_append(&sb, "{\n  \"format\": \"dmlc-aot-metadata\",\n  \"version\": 1,\n");
  dmlc_strbuf_append(&sb, "  \"name\": ");
  quoted(&sb, in->name);
  dmlc_strbuf_append(&sb, ",\n  \"graph\": ");
  quoted(&sb, g->name);
  dmlc_strbuf_append(&sb, ",\n  \"target\": {\"triple\": ");
  quoted(&sb, dmlc_llvm_aot_triple(in->aot));
  dmlc_strbuf_append(&sb, ", \"cpu\": ");
  quoted(&sb, dmlc_llvm_aot_cpu(in->aot));
  dmlc_strbuf_append(&sb, ", \"features\": ");
  quoted(&sb, dmlc_llvm_aot_features(in->aot));
  dmlc_strbuf_append(&sb, ", \"checked_features\": ");
  quoted(&sb, dmlc_llvm_aot_checked_features(in->aot));
  /* Variants (one unless --mcpu named several): CPU, what its check
   * confirms, and where the dispatcher tries it. */
  dmlc_strbuf_append(&sb, ", \"variants\": [");
  for (uint32_t v = 0; v < dmlc_llvm_aot_num_variants(in->aot); v++) {
    dmlc_strbuf_append(&sb, v ? ", {\"cpu\": " : "{\"cpu\": ");
    quoted(&sb, dmlc_llvm_aot_variant_cpu(in->aot, v));
    dmlc_strbuf_append(&sb, ", \"checked_features\": ");
    quoted(&sb, dmlc_llvm_aot_variant_checked(in->aot, v));
    dmlc_strbuf_printf(&sb, ", \"rank\": %" PRIu32 "}", dmlc_llvm_aot_variant_rank(in->aot, v));
  }
  dmlc_strbuf_append(&sb, "]},\n  \"entry_points\": [\n");
  dmlc_strbuf_printf(&sb,
                     "    {\"symbol\": \"%s_run\", \"returns\": \"int\", \"parameters\": "
                     "[\"const void *const *inputs\", \"void *const *outputs\"]},\n",
                     in->name);
  dmlc_strbuf_printf(&sb,
                     "    {\"symbol\": \"%s_run_parallel\", \"returns\": \"int\", \"parameters\": "
                     "[\"const void *const *inputs\", \"void *const *outputs\", \"%s "
                     "parallel_for\", \"void *user\"]},\n",
                     in->name, pfor_type);
  dmlc_strbuf_printf(&sb,
                     "    {\"symbol\": \"%s_run_workspace\", \"returns\": \"int\", \"parameters\": "
                     "[\"const void *const *inputs\", \"void *const *outputs\", \"void "
                     "*workspace\", \"%s parallel_for\", \"void *user\"]}%s\n",
                     in->name, pfor_type, dmlc_llvm_aot_num_variants(in->aot) > 1 ? "," : "\n  ],");
  if (dmlc_llvm_aot_num_variants(in->aot) > 1)
    dmlc_strbuf_printf(&sb,
                       "    {\"symbol\": \"%s_select_variant\", \"returns\": \"int\", "
                       "\"parameters\": [\"int variant\"]},\n"
                       "    {\"symbol\": \"%s_variant\", \"returns\": \"int\", \"parameters\": "
                       "[]}\n  ],\n",
                       in->name, in->name);
  dmlc_strbuf_printf(&sb,
                     "  \"return_codes\": {\"ok\": 0, \"workspace\": %d, \"cpu\": %d, "
                     "\"variant\": %d},\n"
                     "  \"workspace_bytes\": %" PRIu64 ",\n  \"stack_workspace_max\": %d,\n",
                     DMLC_AOT_ERROR_WORKSPACE, DMLC_AOT_ERROR_CPU, DMLC_AOT_ERROR_VARIANT,
                     dmlc_llvm_aot_workspace_bytes(in->aot), DMLC_AOT_STACK_WORKSPACE);
  dmlc_strbuf_append(&sb, "  \"inputs\": [\n");
  for (uint32_t i = 0; i < g->num_inputs; i++) {
    io_json(&sb, g, &g->inputs[i]);
    dmlc_strbuf_append(&sb, i + 1 < g->num_inputs ? ",\n" : "\n");
  }
  dmlc_strbuf_append(&sb, "  ],\n  \"outputs\": [\n");
  for (uint32_t i = 0; i < g->num_outputs; i++) {
    io_json(&sb, g, &g->outputs[i]);
    dmlc_strbuf_append(&sb, i + 1 < g->num_outputs ? ",\n" : "\n");
  }
  dmlc_strbuf_append(&sb, "  ],\n  \"temporaries\": [");
  for (uint32_t t = 0; t < plan->num_temps; t++)
    dmlc_strbuf_printf(&sb, "%s{\"bytes\": %" PRIu64 ", \"workspace_offset\": %" PRIu64 "}",
                       t ? ", " : "", plan->temp_bytes[t], dmlc_llvm_aot_temp_offset(in->aot, t));
  dmlc_strbuf_printf(&sb, "],\n  \"scratch_offset\": %" PRIu64 ",\n  \"kernels\": [\n",
                     dmlc_llvm_aot_scratch_offset(in->aot));
  for (uint32_t k = 0; k < plan->num_kernels; k++) {
    const dmlc_kdesc *d = &plan->kernels[k];
    const dmlc_cpu_kernel_info *info = dmlc_llvm_aot_kernel_info(in->aot, k);
    char *text = dmlc_kdesc_print(d);
    dmlc_strbuf_printf(&sb, "    {\"index\": %" PRIu32 ", \"description\": ", k);
    quoted(&sb, text ? text : "");
    free(text);
    dmlc_strbuf_append(&sb, ", \"iteration_space\": ");
    u32_list(&sb, d->dims, d->rank);
    dmlc_strbuf_append(&sb, ", \"reduced_axes\": [");
    for (uint32_t a = 0, n = 0; a < d->rank; a++)
      if (d->reduced_mask & (1u << a))
        dmlc_strbuf_printf(&sb, "%s%" PRIu32, n++ ? ", " : "", a);
    dmlc_strbuf_append(&sb, "], \"reads\": ");
    if (d->has_read)
      binding_json(&sb, d->read_binding);
    else
      dmlc_strbuf_append(&sb, "null");
    dmlc_strbuf_append(&sb, ", \"writes\": [");
    for (uint32_t o = 0; o < d->num_outputs; o++) {
      dmlc_strbuf_append(&sb, o ? ", " : "");
      binding_json(&sb, d->outputs[o].binding);
    }
    dmlc_strbuf_printf(&sb,
                       "], \"tasks\": %" PRIu64 ", \"bytes_per_task\": %" PRIu64
                       ", \"scratch_bytes\": %" PRIu64 ", \"finish\": %s}%s\n",
                       info->num_tasks, info->bytes_per_task, info->scratch_bytes,
                       info->has_finish ? "true" : "false", k + 1 < plan->num_kernels ? "," : "");
  }
  dmlc_strbuf_append(&sb, "  ],\n  \"spirv\": ");
  spirv_json(&sb, in);
  dmlc_strbuf_append(&sb, "\n}\n");
  *out = dmlc_strbuf_finish(&sb);
  return *out ? DMLC_OK : dmlc_diag_set(diag, DMLC_ERROR_OUT_OF_MEMORY, "out of memory");
}

/* The graph after the pipeline: inputs, nodes (in their kernel's cluster)
 * and outputs; an edge per operand. */
dmlc_status dmlc_aot_dot(const dmlc_aot_graph *in, char **out, dmlc_diag *diag) {
  *out = NULL;
  const dmlc_ir_graph *g = in->fused;
  dmlc_strbuf sb = {0};
  dmlc_strbuf_append(&sb, "digraph ");
  quoted(&sb, in->name);
  dmlc_strbuf_append(&sb, " {\n  rankdir=TB;\n  node [shape=box, fontname=\"monospace\"];\n");
  for (uint32_t i = 0; i < g->num_inputs; i++) {
    const dmlc_type *t = &g->values[g->inputs[i].value].type;
    dmlc_strbuf_printf(&sb, "  v%" PRIu32 " [shape=ellipse, label=\"input %" PRIu32 ": %s\\n%s[",
                       g->inputs[i].value, i, g->inputs[i].name, dmlc_dtype_name(t->dtype));
    for (uint32_t d = 0; d < t->rank; d++)
      dmlc_strbuf_printf(&sb, "%s%" PRIu32, d ? "," : "", t->dims[d]);
    dmlc_strbuf_append(&sb, "]\"];\n");
  }
  for (uint32_t k = 0, n = 0; n < g->num_nodes; k++) {
    const bool in_kernel = k < g->num_kernels;
    const uint32_t first = in_kernel ? g->kernels[k].first_node : n;
    const uint32_t last = in_kernel ? first + g->kernels[k].num_nodes : g->num_nodes;
    if (in_kernel)
      dmlc_strbuf_printf(&sb,
                         "  subgraph cluster_k%" PRIu32 " {\n    label=\"kernel %" PRIu32
                         "\";\n    style=rounded;\n",
                         k, k);
    for (uint32_t i = first; i < last; i++) {
      const dmlc_node *node = &g->nodes[i];
      const dmlc_type *t = &g->values[node->result].type;
      dmlc_strbuf_printf(&sb, "    v%" PRIu32 " [label=\"%%%" PRIu32 " = %s\\n%s[", node->result,
                         node->result, dmlc_op_get(node->op)->name, dmlc_dtype_name(t->dtype));
      for (uint32_t d = 0; d < t->rank; d++)
        dmlc_strbuf_printf(&sb, "%s%" PRIu32, d ? "," : "", t->dims[d]);
      dmlc_strbuf_append(&sb, "]\"];\n");
    }
    if (in_kernel)
      dmlc_strbuf_append(&sb, "  }\n");
    n = last;
  }
  for (uint32_t i = 0; i < g->num_nodes; i++)
    for (uint32_t o = 0; o < g->nodes[i].num_operands; o++)
      dmlc_strbuf_printf(&sb, "  v%" PRIu32 " -> v%" PRIu32 ";\n", g->nodes[i].operands[o],
                         g->nodes[i].result);
  for (uint32_t i = 0; i < g->num_outputs; i++) {
    dmlc_strbuf_printf(&sb, "  out%" PRIu32 " [shape=ellipse, label=\"output %" PRIu32 ": ", i, i);
    dmlc_strbuf_printf(&sb, "%s\"];\n  v%" PRIu32 " -> out%" PRIu32 ";\n", g->outputs[i].name,
                       g->outputs[i].value, i);
  }
  dmlc_strbuf_append(&sb, "}\n");
  *out = dmlc_strbuf_finish(&sb);
  return *out ? DMLC_OK : dmlc_diag_set(diag, DMLC_ERROR_OUT_OF_MEMORY, "out of memory");
}
