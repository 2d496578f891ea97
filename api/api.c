/* The public API (include/dmlc/dmlc.h) over the layers below: frontend,
 * IR, passes and the runtimes. Every entry point validates its arguments and
 * records failures on the context. */
#include <stdlib.h>
#include <string.h>

#include "api/api_internal.h"
#include "passes/passes.h"
#include "runtime/reference/reference.h"

#define CHECK_ARG(ctx, cond, ...)                                                                  \
  do {                                                                                             \
    if (!(cond))                                                                                   \
      return dmlc_diag_set(&(ctx)->diag, DMLC_ERROR_INVALID_ARGUMENT, __VA_ARGS__);                \
  } while (0)

const char *dmlc_status_string(dmlc_status status) {
  switch (status) {
  case DMLC_OK:
    return "ok";
  case DMLC_ERROR_INVALID_ARGUMENT:
    return "invalid argument";
  case DMLC_ERROR_UNSUPPORTED:
    return "unsupported";
  case DMLC_ERROR_OUT_OF_MEMORY:
    return "out of memory";
  case DMLC_ERROR_DEVICE:
    return "device error";
  case DMLC_ERROR_INTERNAL:
    return "internal error";
  case DMLC_ERROR_IO:
    return "i/o error";
  }
  return "unknown status";
}

const char *dmlc_device_name(dmlc_device device) {
  switch (device) {
  case DMLC_DEVICE_DEFAULT:
    return "default";
  case DMLC_DEVICE_REFERENCE:
    return "reference";
  case DMLC_DEVICE_CPU:
    return "cpu";
  case DMLC_DEVICE_VULKAN:
    return "vulkan";
  }
  return "unknown";
}

dmlc_status dmlc_context_create(dmlc_context **out) {
  if (!out)
    return DMLC_ERROR_INVALID_ARGUMENT;
  *out = calloc(1, sizeof **out);
  return *out ? DMLC_OK : DMLC_ERROR_OUT_OF_MEMORY;
}

void dmlc_context_destroy(dmlc_context *ctx) {
  if (!ctx)
    return;
  dmlc_cpu_device_destroy(ctx->cpu);
  dmlc_api_vulkan_context_destroy(ctx);
  free(ctx);
}

/* More threads than this is a mistake, not a machine. */
enum { MAX_THREADS = 4096 };

dmlc_status dmlc_context_set_num_threads(dmlc_context *ctx, uint32_t n) {
  if (!ctx)
    return DMLC_ERROR_INVALID_ARGUMENT;
  CHECK_ARG(ctx, n <= MAX_THREADS, "dmlc_context_set_num_threads: %u threads (at most %d)", n,
            MAX_THREADS);
  ctx->num_threads = n;
  return ctx->cpu ? dmlc_cpu_device_set_num_threads(ctx->cpu, n, &ctx->diag) : DMLC_OK;
}

dmlc_status dmlc_context_cpu_device(dmlc_context *ctx, dmlc_cpu_device **out) {
  if (!ctx->cpu)
    DMLC_RETURN_IF_ERROR(dmlc_cpu_device_create(ctx->num_threads, &ctx->cpu, &ctx->diag));
  *out = ctx->cpu;
  return DMLC_OK;
}

const char *dmlc_context_error(const dmlc_context *ctx) {
  return ctx ? ctx->diag.message : "dmlc_context_error: ctx is NULL";
}

void dmlc_free(void *p) { free(p); }

uint32_t dmlc_data_type_size(DML_TENSOR_DATA_TYPE type) {
  dmlc_dtype d;
  return dmlc_dtype_from_dml(type, &d) ? dmlc_dtype_size(d) : 0;
}

const char *dmlc_data_type_name(DML_TENSOR_DATA_TYPE type) {
  dmlc_dtype d;
  return dmlc_dtype_from_dml(type, &d) ? dmlc_dtype_name(d) : NULL;
}

float dmlc_half_to_float(uint16_t h) { return dmlc_f16_to_f32(h); }
uint16_t dmlc_float_to_half(float f) { return dmlc_f32_to_f16(f); }

/* ---- graphs ---- */

static dmlc_status graph_wrap(dmlc_context *ctx, dmlc_ir_graph *ir, dmlc_graph **out) {
  dmlc_graph *g = calloc(1, sizeof *g);
  if (!g) {
    dmlc_ir_graph_destroy(ir);
    return dmlc_diag_set(&ctx->diag, DMLC_ERROR_OUT_OF_MEMORY, "out of memory creating a graph");
  }
  g->ctx = ctx;
  g->ir = ir;
  *out = g;
  return DMLC_OK;
}

dmlc_status dmlc_graph_create(dmlc_context *ctx, const char *name, dmlc_graph **out) {
  if (!ctx)
    return DMLC_ERROR_INVALID_ARGUMENT;
  CHECK_ARG(ctx, out, "dmlc_graph_create: out is NULL");
  *out = NULL;
  if (!name)
    name = "main";
  CHECK_ARG(ctx, dmlc_name_is_valid(name),
            "dmlc_graph_create: graph name '%.64s' is not [A-Za-z_][A-Za-z0-9_.]* (at most %d "
            "characters)",
            name, DMLC_NAME_MAX - 1);
  dmlc_ir_graph *ir = dmlc_ir_graph_create(name);
  if (!ir)
    return dmlc_diag_set(&ctx->diag, DMLC_ERROR_OUT_OF_MEMORY, "out of memory creating a graph");
  return graph_wrap(ctx, ir, out);
}

void dmlc_graph_destroy(dmlc_graph *graph) {
  if (!graph)
    return;
  dmlc_ir_graph_destroy(graph->ir);
  free(graph->result_layouts);
  free(graph->has_result_layout);
  free(graph);
}

static bool input_name_taken(const dmlc_ir_graph *ir, const char *name) {
  for (uint32_t i = 0; i < ir->num_inputs; i++)
    if (strcmp(ir->inputs[i].name, name) == 0)
      return true;
  return false;
}

static bool output_name_taken(const dmlc_ir_graph *ir, const char *name) {
  for (uint32_t i = 0; i < ir->num_outputs; i++)
    if (strcmp(ir->outputs[i].name, name) == 0)
      return true;
  return false;
}

dmlc_status dmlc_graph_add_input(dmlc_graph *graph, const char *name, const DML_TENSOR_DESC *desc,
                                 dmlc_value *out) {
  if (!graph)
    return DMLC_ERROR_INVALID_ARGUMENT;
  dmlc_context *ctx = graph->ctx;
  CHECK_ARG(ctx, name && dmlc_name_is_valid(name),
            "dmlc_graph_add_input: input name '%.64s' is not [A-Za-z_][A-Za-z0-9_.]* (at most %d "
            "characters)",
            name ? name : "(null)", DMLC_NAME_MAX - 1);
  CHECK_ARG(ctx, !input_name_taken(graph->ir, name),
            "dmlc_graph_add_input: the graph already has an input named '%s'", name);
  dmlc_type type;
  dmlc_layout layout;
  DMLC_RETURN_IF_ERROR(dmlc_frontend_tensor(desc, name, false, &type, &layout, &ctx->diag));
  uint32_t v;
  DMLC_RETURN_IF_ERROR(dmlc_ir_add_input(graph->ir, name, &type, &layout, &v, &ctx->diag));
  if (out)
    *out = v;
  return DMLC_OK;
}

static dmlc_status remember_layout(dmlc_graph *graph, uint32_t value, const dmlc_layout *layout) {
  if (value >= graph->cap_layouts) {
    uint32_t cap = graph->cap_layouts ? graph->cap_layouts : 16;
    while (cap <= value)
      cap *= 2;
    dmlc_layout *layouts = realloc(graph->result_layouts, cap * sizeof *layouts);
    if (layouts)
      graph->result_layouts = layouts;
    bool *has = realloc(graph->has_result_layout, cap * sizeof *has);
    if (has)
      graph->has_result_layout = has;
    if (!layouts || !has)
      return dmlc_diag_set(&graph->ctx->diag, DMLC_ERROR_OUT_OF_MEMORY, "out of memory");
    memset(has + graph->cap_layouts, 0, (cap - graph->cap_layouts) * sizeof *has);
    graph->cap_layouts = cap;
  }
  graph->result_layouts[value] = *layout;
  graph->has_result_layout[value] = true;
  return DMLC_OK;
}

dmlc_status dmlc_graph_add_operator(dmlc_graph *graph, const DML_OPERATOR_DESC *desc,
                                    const dmlc_value *inputs, size_t input_count,
                                    dmlc_value *outputs, size_t output_count) {
  if (!graph)
    return DMLC_ERROR_INVALID_ARGUMENT;
  dmlc_context *ctx = graph->ctx;
  dmlc_operator_tensors tensors;
  DMLC_RETURN_IF_ERROR(dmlc_frontend_operator_tensors(desc, &tensors, &ctx->diag));
  CHECK_ARG(ctx, input_count == tensors.num_inputs,
            "dmlc_graph_add_operator: input_count is %zu; the operator has %u input tensors",
            input_count, tensors.num_inputs);
  CHECK_ARG(ctx, output_count == tensors.num_outputs,
            "dmlc_graph_add_operator: output_count is %zu; the operator has %u output tensors",
            output_count, tensors.num_outputs);
  CHECK_ARG(ctx, inputs || input_count == 0, "dmlc_graph_add_operator: inputs is NULL");
  CHECK_ARG(ctx, outputs || output_count == 0, "dmlc_graph_add_operator: outputs is NULL");
  for (size_t i = 0; i < input_count; i++)
    CHECK_ARG(ctx, inputs[i] < graph->ir->num_values,
              "dmlc_graph_add_operator: inputs[%zu] is %u, not a value of this graph", i,
              inputs[i]);
  uint32_t results[DMLC_FRONTEND_MAX_TENSORS];
  dmlc_layout layouts[DMLC_FRONTEND_MAX_TENSORS];
  DMLC_RETURN_IF_ERROR(
      dmlc_frontend_add_operator(graph->ir, desc, inputs, results, layouts, &ctx->diag));
  for (size_t i = 0; i < output_count; i++) {
    DMLC_RETURN_IF_ERROR(remember_layout(graph, results[i], &layouts[i]));
    outputs[i] = results[i];
  }
  return DMLC_OK;
}

dmlc_status dmlc_graph_add_output(dmlc_graph *graph, const char *name, dmlc_value value) {
  if (!graph)
    return DMLC_ERROR_INVALID_ARGUMENT;
  dmlc_context *ctx = graph->ctx;
  dmlc_ir_graph *ir = graph->ir;
  char default_name[DMLC_NAME_MAX];
  if (!name) {
    dmlc_default_output_name(ir->num_outputs, default_name, sizeof default_name);
    name = default_name;
  }
  CHECK_ARG(ctx, dmlc_name_is_valid(name),
            "dmlc_graph_add_output: output name '%.64s' is not [A-Za-z_][A-Za-z0-9_.]* (at most "
            "%d characters)",
            name, DMLC_NAME_MAX - 1);
  CHECK_ARG(ctx, !output_name_taken(ir, name),
            "dmlc_graph_add_output: the graph already has an output named '%s'", name);
  CHECK_ARG(ctx, value < ir->num_values,
            "dmlc_graph_add_output: value %u is not a value of this graph", value);
  const dmlc_layout *layout = NULL;
  if (value < graph->cap_layouts && graph->has_result_layout[value])
    layout = &graph->result_layouts[value];
  for (uint32_t i = 0; !layout && i < ir->num_inputs; i++)
    if (ir->inputs[i].value == value)
      layout = &ir->inputs[i].layout;
  if (layout && !dmlc_strides_disjoint(&ir->values[value].type, layout->strides))
    return dmlc_diag_set(&ctx->diag, DMLC_ERROR_INVALID_ARGUMENT,
                         "dmlc_graph_add_output: output '%s' would be laid out with zero or "
                         "overlapping strides (the layout of its value)",
                         name);
  return dmlc_ir_add_output(ir, name, value, layout, &ctx->diag);
}

dmlc_status dmlc_graph_parse(dmlc_context *ctx, const char *text, size_t length,
                             const char *filename, dmlc_graph **out) {
  if (!ctx)
    return DMLC_ERROR_INVALID_ARGUMENT;
  CHECK_ARG(ctx, out, "dmlc_graph_parse: out is NULL");
  *out = NULL;
  CHECK_ARG(ctx, text || length == 0, "dmlc_graph_parse: text is NULL");
  dmlc_ir_graph *ir = NULL;
  DMLC_RETURN_IF_ERROR(
      dmlc_ir_parse(text ? text : "", length, filename ? filename : "<input>", &ir, &ctx->diag));
  return graph_wrap(ctx, ir, out);
}

dmlc_status dmlc_graph_verify(dmlc_graph *graph) {
  if (!graph)
    return DMLC_ERROR_INVALID_ARGUMENT;
  return dmlc_ir_verify(graph->ir, &graph->ctx->diag);
}

dmlc_status dmlc_graph_print(dmlc_graph *graph, char **out_text) {
  if (!graph)
    return DMLC_ERROR_INVALID_ARGUMENT;
  CHECK_ARG(graph->ctx, out_text, "dmlc_graph_print: out_text is NULL");
  *out_text = dmlc_ir_print(graph->ir);
  if (!*out_text)
    return dmlc_diag_set(&graph->ctx->diag, DMLC_ERROR_OUT_OF_MEMORY,
                         "out of memory printing a graph");
  return DMLC_OK;
}

/* ---- passes ---- */

dmlc_status dmlc_graph_run_passes(dmlc_graph *graph, const char *pipeline,
                                  const dmlc_pass_options *options) {
  if (!graph)
    return DMLC_ERROR_INVALID_ARGUMENT;
  CHECK_ARG(graph->ctx, pipeline, "dmlc_graph_run_passes: pipeline is NULL");
  dmlc_pipeline_options o = {0};
  if (options) {
    o.print_ir_before = options->print_ir_before;
    o.print_ir_after = options->print_ir_after;
    o.verify_each = options->verify_each != 0;
    o.timing = options->timing != 0;
    o.print = options->print;
    o.user = options->user;
  }
  /* Values of the old graph no longer exist: forget their layouts. */
  graph->cap_layouts = 0;
  free(graph->result_layouts);
  free(graph->has_result_layout);
  graph->result_layouts = NULL;
  graph->has_result_layout = NULL;
  return dmlc_run_pipeline(&graph->ir, pipeline, &o, &graph->ctx->diag);
}

const char *dmlc_default_pipeline(void) { return DMLC_DEFAULT_PIPELINE; }
size_t dmlc_pass_count(void) { return dmlc_pass_registry_count(); }

const char *dmlc_pass_name(size_t index) {
  const dmlc_pass_info *p = dmlc_pass_registry_get(index);
  return p ? p->name : NULL;
}

const char *dmlc_pass_summary(size_t index) {
  const dmlc_pass_info *p = dmlc_pass_registry_get(index);
  return p ? p->summary : NULL;
}

/* ---- compilation ---- */

static dmlc_status resolve_device(dmlc_context *ctx, dmlc_device requested, dmlc_device *out) {
  switch (requested) {
  case DMLC_DEVICE_REFERENCE:
    *out = DMLC_DEVICE_REFERENCE;
    return DMLC_OK;
  case DMLC_DEVICE_DEFAULT:
  case DMLC_DEVICE_CPU:
    *out = DMLC_DEVICE_CPU;
    return DMLC_OK;
  case DMLC_DEVICE_VULKAN:
#ifdef DMLC_HAVE_VULKAN
    *out = DMLC_DEVICE_VULKAN;
    return DMLC_OK;
#else
    return dmlc_diag_set(&ctx->diag, DMLC_ERROR_UNSUPPORTED,
                         "device '%s' is not built into this dmlc (it was configured with "
                         "-DDMLC_VULKAN=OFF); use the cpu or reference device",
                         dmlc_device_name(requested));
#endif
  }
  return dmlc_diag_set(&ctx->diag, DMLC_ERROR_INVALID_ARGUMENT, "unknown device %d",
                       (int)requested);
}

/* The CPU runs the default pipeline on its own copy of the graph; exe->ir
 * stays as given, for the bindings and the tensor infos. */
dmlc_status dmlc_api_fused_copy(const dmlc_executable *exe, dmlc_ir_graph **out) {
  dmlc_context *ctx = exe->ctx;
  *out = dmlc_ir_graph_clone(exe->ir);
  if (!*out)
    return dmlc_diag_set(&ctx->diag, DMLC_ERROR_OUT_OF_MEMORY, "out of memory compiling");
  const dmlc_pipeline_options options = {0};
  const dmlc_status status = dmlc_run_pipeline(out, DMLC_DEFAULT_PIPELINE, &options, &ctx->diag);
  if (status != DMLC_OK) {
    dmlc_ir_graph_destroy(*out);
    *out = NULL;
  }
  return status;
}

static dmlc_status compile_cpu(dmlc_executable *exe) {
  dmlc_context *ctx = exe->ctx;
  dmlc_cpu_device *cpu;
  DMLC_RETURN_IF_ERROR(dmlc_context_cpu_device(ctx, &cpu));
  dmlc_ir_graph *fused;
  DMLC_RETURN_IF_ERROR(dmlc_api_fused_copy(exe, &fused));
  const dmlc_status status = dmlc_cpu_executable_create(cpu, fused, &exe->cpu, &ctx->diag);
  dmlc_ir_graph_destroy(fused);
  return status;
}

dmlc_status dmlc_graph_compile(dmlc_graph *graph, dmlc_device device, dmlc_executable **out) {
  if (!graph)
    return DMLC_ERROR_INVALID_ARGUMENT;
  dmlc_context *ctx = graph->ctx;
  CHECK_ARG(ctx, out, "dmlc_graph_compile: out is NULL");
  *out = NULL;
  dmlc_device resolved = DMLC_DEVICE_REFERENCE;
  DMLC_RETURN_IF_ERROR(resolve_device(ctx, device, &resolved));
  DMLC_RETURN_IF_ERROR(dmlc_ir_verify(graph->ir, &ctx->diag));
  dmlc_executable *exe = calloc(1, sizeof *exe);
  dmlc_ir_graph *ir = exe ? dmlc_ir_graph_clone(graph->ir) : NULL;
  if (!ir) {
    free(exe);
    return dmlc_diag_set(&ctx->diag, DMLC_ERROR_OUT_OF_MEMORY, "out of memory compiling");
  }
  exe->ctx = ctx;
  exe->device = resolved;
  exe->ir = ir;
  const dmlc_status status = resolved == DMLC_DEVICE_CPU      ? compile_cpu(exe)
                             : resolved == DMLC_DEVICE_VULKAN ? dmlc_api_vulkan_compile(exe)
                                                              : DMLC_OK;
  if (status != DMLC_OK) {
    dmlc_executable_destroy(exe);
    return status;
  }
  *out = exe;
  return DMLC_OK;
}

dmlc_status dmlc_device_describe(dmlc_context *ctx, dmlc_device device, char **out_text) {
  if (!ctx)
    return DMLC_ERROR_INVALID_ARGUMENT;
  CHECK_ARG(ctx, out_text, "dmlc_device_describe: out_text is NULL");
  *out_text = NULL;
  dmlc_device resolved = DMLC_DEVICE_REFERENCE;
  DMLC_RETURN_IF_ERROR(resolve_device(ctx, device, &resolved));
  if (resolved == DMLC_DEVICE_CPU) {
    dmlc_cpu_device *cpu;
    DMLC_RETURN_IF_ERROR(dmlc_context_cpu_device(ctx, &cpu));
    *out_text = dmlc_cpu_device_describe(cpu);
  } else if (resolved == DMLC_DEVICE_VULKAN) {
    return dmlc_api_vulkan_describe(ctx, out_text);
  } else {
    *out_text = strdup("the reference evaluator (unoptimized graph, one thread)");
  }
  return *out_text ? DMLC_OK : dmlc_diag_set(&ctx->diag, DMLC_ERROR_OUT_OF_MEMORY, "out of memory");
}

static const char *const input_names[DMLC_FRONTEND_MAX_TENSORS] = {"input", "input1"};
static const char *const output_names[DMLC_FRONTEND_MAX_TENSORS] = {"output", "output1"};

static dmlc_status build_operator_graph(dmlc_graph *graph, const DML_OPERATOR_DESC *desc) {
  dmlc_context *ctx = graph->ctx;
  dmlc_operator_tensors tensors;
  DMLC_RETURN_IF_ERROR(dmlc_frontend_operator_tensors(desc, &tensors, &ctx->diag));
  uint32_t inputs[DMLC_FRONTEND_MAX_TENSORS], outputs[DMLC_FRONTEND_MAX_TENSORS];
  for (uint32_t i = 0; i < tensors.num_inputs; i++) {
    dmlc_type type;
    dmlc_layout layout;
    DMLC_RETURN_IF_ERROR(dmlc_frontend_tensor(tensors.inputs[i], tensors.input_fields[i], false,
                                              &type, &layout, &ctx->diag));
    DMLC_RETURN_IF_ERROR(
        dmlc_ir_add_input(graph->ir, input_names[i], &type, &layout, &inputs[i], &ctx->diag));
  }
  DMLC_RETURN_IF_ERROR(dmlc_graph_add_operator(graph, desc, inputs, tensors.num_inputs, outputs,
                                               tensors.num_outputs));
  for (uint32_t i = 0; i < tensors.num_outputs; i++)
    DMLC_RETURN_IF_ERROR(dmlc_graph_add_output(graph, output_names[i], outputs[i]));
  return DMLC_OK;
}

dmlc_status dmlc_operator_compile(dmlc_context *ctx, const DML_OPERATOR_DESC *desc,
                                  dmlc_device device, dmlc_executable **out) {
  if (!ctx)
    return DMLC_ERROR_INVALID_ARGUMENT;
  CHECK_ARG(ctx, out, "dmlc_operator_compile: out is NULL");
  *out = NULL;
  dmlc_graph *graph;
  DMLC_RETURN_IF_ERROR(dmlc_graph_create(ctx, "operator", &graph));
  dmlc_status status = build_operator_graph(graph, desc);
  if (status == DMLC_OK)
    status = dmlc_graph_compile(graph, device, out);
  dmlc_graph_destroy(graph);
  return status;
}

/* ---- execution ---- */

static bool ranges_overlap(const dmlc_buffer *a, uint64_t a_size, const dmlc_buffer *b,
                           uint64_t b_size) {
  const uintptr_t a0 = (uintptr_t)a->data, b0 = (uintptr_t)b->data;
  return a_size && b_size && a0 < b0 + b_size && b0 < a0 + a_size;
}

static dmlc_status check_buffer(dmlc_context *ctx, const char *kind, size_t index,
                                const dmlc_graph_io *io, const dmlc_buffer *buffer) {
  CHECK_ARG(ctx, buffer->data, "%s[%zu] ('%s'): data is NULL", kind, index, io->name);
  CHECK_ARG(ctx, buffer->size_bytes >= io->layout.size_bytes,
            "%s[%zu] ('%s') is %llu bytes; its tensor needs at least %llu "
            "(TotalTensorSizeInBytes)",
            kind, index, io->name, (unsigned long long)buffer->size_bytes,
            (unsigned long long)io->layout.size_bytes);
  CHECK_ARG(ctx, !io->layout.alignment || (uintptr_t)buffer->data % io->layout.alignment == 0,
            "%s[%zu] ('%s'): data %p is not aligned to %u bytes "
            "(GuaranteedBaseOffsetAlignment)",
            kind, index, io->name, buffer->data, io->layout.alignment);
  return DMLC_OK;
}

static dmlc_status check_bindings(const dmlc_executable *exe, const dmlc_buffer *inputs,
                                  size_t input_count, const dmlc_buffer *outputs,
                                  size_t output_count) {
  dmlc_context *ctx = exe->ctx;
  const dmlc_ir_graph *ir = exe->ir;
  CHECK_ARG(ctx, input_count == ir->num_inputs,
            "dmlc_execute: %zu input buffers; the graph has %u inputs", input_count,
            ir->num_inputs);
  CHECK_ARG(ctx, output_count == ir->num_outputs,
            "dmlc_execute: %zu output buffers; the graph has %u outputs", output_count,
            ir->num_outputs);
  CHECK_ARG(ctx, inputs || input_count == 0, "dmlc_execute: inputs is NULL");
  CHECK_ARG(ctx, outputs || output_count == 0, "dmlc_execute: outputs is NULL");
  for (size_t i = 0; i < input_count; i++)
    DMLC_RETURN_IF_ERROR(check_buffer(ctx, "inputs", i, &ir->inputs[i], &inputs[i]));
  for (size_t i = 0; i < output_count; i++) {
    const uint64_t size = ir->outputs[i].layout.size_bytes;
    DMLC_RETURN_IF_ERROR(check_buffer(ctx, "outputs", i, &ir->outputs[i], &outputs[i]));
    for (size_t j = 0; j < input_count; j++)
      CHECK_ARG(ctx,
                !ranges_overlap(&outputs[i], size, &inputs[j], ir->inputs[j].layout.size_bytes),
                "outputs[%zu] ('%s') overlaps inputs[%zu] ('%s'); outputs must not alias inputs", i,
                ir->outputs[i].name, j, ir->inputs[j].name);
    for (size_t j = 0; j < i; j++)
      CHECK_ARG(ctx,
                !ranges_overlap(&outputs[i], size, &outputs[j], ir->outputs[j].layout.size_bytes),
                "outputs[%zu] ('%s') overlaps outputs[%zu] ('%s')", i, ir->outputs[i].name, j,
                ir->outputs[j].name);
  }
  return DMLC_OK;
}

dmlc_status dmlc_execute(dmlc_executable *exe, const dmlc_buffer *inputs, size_t input_count,
                         const dmlc_buffer *outputs, size_t output_count) {
  if (!exe)
    return DMLC_ERROR_INVALID_ARGUMENT;
  DMLC_RETURN_IF_ERROR(check_bindings(exe, inputs, input_count, outputs, output_count));
  switch (exe->device) {
  case DMLC_DEVICE_REFERENCE:
    return dmlc_reference_execute(exe->ir, inputs, outputs, &exe->ctx->diag);
  case DMLC_DEVICE_CPU:
    dmlc_cpu_executable_run(exe->cpu, inputs, outputs);
    return DMLC_OK;
  case DMLC_DEVICE_VULKAN:
    return dmlc_api_vulkan_execute(exe, inputs, outputs);
  default:
    return dmlc_diag_set(&exe->ctx->diag, DMLC_ERROR_INTERNAL, "executable for device '%s'",
                         dmlc_device_name(exe->device));
  }
}

void dmlc_executable_destroy(dmlc_executable *exe) {
  if (!exe)
    return;
  dmlc_cpu_executable_destroy(exe->cpu);
  dmlc_api_vulkan_executable_destroy(exe);
  dmlc_ir_graph_destroy(exe->ir);
  free(exe);
}

dmlc_status dmlc_executable_dump(const dmlc_executable *exe, const char *what, char **out_text) {
  if (!exe)
    return DMLC_ERROR_INVALID_ARGUMENT;
  dmlc_context *ctx = exe->ctx;
  CHECK_ARG(ctx, out_text, "dmlc_executable_dump: out_text is NULL");
  *out_text = NULL;
  CHECK_ARG(ctx, what, "dmlc_executable_dump: what is NULL");
  const bool cpu_only = strcmp(what, "llvm") == 0 || strcmp(what, "asm") == 0;
  const bool vulkan_only = strcmp(what, "spirv") == 0;
  CHECK_ARG(ctx, cpu_only || vulkan_only || strcmp(what, "kernels") == 0,
            "dmlc_executable_dump: cannot dump '%.32s' (kernels, llvm, asm or spirv)", what);
  if (exe->device == DMLC_DEVICE_REFERENCE || (cpu_only && exe->device != DMLC_DEVICE_CPU) ||
      (vulkan_only && exe->device != DMLC_DEVICE_VULKAN))
    return dmlc_diag_set(&ctx->diag, DMLC_ERROR_UNSUPPORTED,
                         "dmlc_executable_dump: an executable for device '%s' has no %s",
                         dmlc_device_name(exe->device),
                         exe->device == DMLC_DEVICE_REFERENCE ? "kernels"
                         : vulkan_only                        ? "SPIR-V"
                                                              : "LLVM code");
  if (exe->device == DMLC_DEVICE_VULKAN)
    return dmlc_api_vulkan_dump(exe, what, out_text);
  return dmlc_cpu_executable_dump(exe->cpu, what, out_text, &ctx->diag);
}

dmlc_status dmlc_executable_kernel_times(const dmlc_executable *exe, double *ns, size_t max,
                                         size_t *count) {
  if (!exe)
    return DMLC_ERROR_INVALID_ARGUMENT;
  CHECK_ARG(exe->ctx, count, "dmlc_executable_kernel_times: count is NULL");
  CHECK_ARG(exe->ctx, ns || max == 0, "dmlc_executable_kernel_times: ns is NULL");
  *count = exe->device == DMLC_DEVICE_VULKAN ? dmlc_api_vulkan_kernel_times(exe, ns, max) : 0;
  return DMLC_OK;
}

dmlc_device dmlc_executable_device(const dmlc_executable *exe) {
  return exe ? exe->device : DMLC_DEVICE_DEFAULT;
}

size_t dmlc_executable_input_count(const dmlc_executable *exe) {
  return exe ? exe->ir->num_inputs : 0;
}

size_t dmlc_executable_output_count(const dmlc_executable *exe) {
  return exe ? exe->ir->num_outputs : 0;
}

static void fill_info(const dmlc_ir_graph *ir, const dmlc_graph_io *io, dmlc_tensor_info *out) {
  const dmlc_type *t = &ir->values[io->value].type;
  memset(out, 0, sizeof *out);
  out->name = io->name;
  out->data_type = dmlc_dtype_get(t->dtype)->dml;
  out->dimension_count = t->rank;
  for (uint32_t i = 0; i < t->rank; i++) {
    out->sizes[i] = t->dims[i];
    out->strides[i] = io->layout.strides[i];
  }
  out->total_size_bytes = io->layout.size_bytes;
  out->alignment = io->layout.alignment;
}

dmlc_status dmlc_executable_input_info(const dmlc_executable *exe, size_t index,
                                       dmlc_tensor_info *out) {
  if (!exe)
    return DMLC_ERROR_INVALID_ARGUMENT;
  CHECK_ARG(exe->ctx, out, "dmlc_executable_input_info: out is NULL");
  CHECK_ARG(exe->ctx, index < exe->ir->num_inputs,
            "dmlc_executable_input_info: index %zu; the graph has %u inputs", index,
            exe->ir->num_inputs);
  fill_info(exe->ir, &exe->ir->inputs[index], out);
  return DMLC_OK;
}

dmlc_status dmlc_executable_output_info(const dmlc_executable *exe, size_t index,
                                        dmlc_tensor_info *out) {
  if (!exe)
    return DMLC_ERROR_INVALID_ARGUMENT;
  CHECK_ARG(exe->ctx, out, "dmlc_executable_output_info: out is NULL");
  CHECK_ARG(exe->ctx, index < exe->ir->num_outputs,
            "dmlc_executable_output_info: index %zu; the graph has %u outputs", index,
            exe->ir->num_outputs);
  fill_info(exe->ir, &exe->ir->outputs[index], out);
  return DMLC_OK;
}
