/* The public API (include/dmlc/dmlc.h) over the layers below: frontend,
 * IR, passes and the runtimes. Every entry point validates its arguments and
 * records failures on the context. */
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "api/api_internal.h"
#include "ir/array.h"
#include "passes/passes.h"

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

/* Context ids: never reused, so a thread's slot for a destroyed context is
 * never taken for a new one at the same address. */
static _Atomic uint64_t next_context_id = 1;

dmlc_status dmlc_context_create(dmlc_context **out) {
  if (!out)
    return DMLC_ERROR_INVALID_ARGUMENT;
  *out = NULL;
  dmlc_context *ctx = calloc(1, sizeof *ctx);
  if (!ctx)
    return DMLC_ERROR_OUT_OF_MEMORY;
  pthread_mutexattr_t attr;
  bool locked = pthread_mutexattr_init(&attr) == 0;
  if (locked) {
    locked = pthread_mutexattr_settype(&attr, PTHREAD_MUTEX_RECURSIVE) == 0 &&
             pthread_mutex_init(&ctx->lock, &attr) == 0;
    pthread_mutexattr_destroy(&attr);
  }
  if (!locked) {
    free(ctx);
    return DMLC_ERROR_OUT_OF_MEMORY;
  }
  ctx->id = atomic_fetch_add(&next_context_id, 1);
  *out = ctx;
  return DMLC_OK;
}

void dmlc_context_destroy(dmlc_context *ctx) {
  if (!ctx)
    return;
  dmlc_context_close_devices(ctx);
  pthread_mutex_destroy(&ctx->lock);
  free(ctx);
}

void dmlc_ctx_lock(dmlc_context *ctx) { pthread_mutex_lock(&ctx->lock); }
void dmlc_ctx_unlock(dmlc_context *ctx) { pthread_mutex_unlock(&ctx->lock); }

void dmlc_ctx_lock_serial(dmlc_context *ctx, const dmlc_device_vtable *vt) {
  if (!vt->concurrent_execute)
    dmlc_ctx_lock(ctx);
}

void dmlc_ctx_unlock_serial(dmlc_context *ctx, const dmlc_device_vtable *vt) {
  if (!vt->concurrent_execute)
    dmlc_ctx_unlock(ctx);
}

/* Each thread's messages, for the last DIAG_SLOTS contexts it failed or
 * asked about (round robin). */
enum { DIAG_SLOTS = 4 };
typedef struct diag_slot {
  uint64_t ctx_id;
  dmlc_diag diag;
} diag_slot;
static _Thread_local diag_slot diag_slots[DIAG_SLOTS];
static _Thread_local unsigned diag_next;

static diag_slot *find_slot(uint64_t id) {
  for (unsigned i = 0; i < DIAG_SLOTS; i++)
    if (diag_slots[i].ctx_id == id)
      return &diag_slots[i];
  return NULL;
}

dmlc_diag *dmlc_ctx_diag(const dmlc_context *ctx) {
  diag_slot *s = find_slot(ctx->id);
  if (!s) {
    s = &diag_slots[diag_next++ % DIAG_SLOTS];
    s->ctx_id = ctx->id;
    dmlc_diag_clear(&s->diag);
  }
  return &s->diag;
}

const char *dmlc_context_error(const dmlc_context *ctx) {
  if (!ctx)
    return "dmlc_context_error: ctx is NULL";
  const diag_slot *s = find_slot(ctx->id);
  return s ? s->diag.message : "";
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
    return dmlc_diag_set(dmlc_ctx_diag(ctx), DMLC_ERROR_OUT_OF_MEMORY,
                         "out of memory creating a graph");
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
    return dmlc_diag_set(dmlc_ctx_diag(ctx), DMLC_ERROR_OUT_OF_MEMORY,
                         "out of memory creating a graph");
  return graph_wrap(ctx, ir, out);
}

void dmlc_graph_destroy(dmlc_graph *graph) {
  if (!graph)
    return;
  dmlc_api_graph_changed(graph);
  dmlc_ir_graph_destroy(graph->ir);
  free(graph->result_layouts);
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
  DMLC_RETURN_IF_ERROR(dmlc_frontend_tensor(desc, name, false, &type, &layout, dmlc_ctx_diag(ctx)));
  uint32_t v;
  dmlc_api_graph_changed(graph);
  DMLC_RETURN_IF_ERROR(dmlc_ir_add_input(graph->ir, name, &type, &layout, &v, dmlc_ctx_diag(ctx)));
  if (out)
    *out = v;
  return DMLC_OK;
}

static dmlc_status remember_layout(dmlc_graph *graph, uint32_t value, const dmlc_layout *layout) {
  if (value == UINT32_MAX ||
      !DMLC_ARRAY_RESERVE(&graph->result_layouts, &graph->cap_layouts, value + 1, 16))
    return dmlc_diag_set(dmlc_ctx_diag(graph->ctx), DMLC_ERROR_OUT_OF_MEMORY, "out of memory");
  graph->result_layouts[value].layout = *layout;
  graph->result_layouts[value].given = true;
  return DMLC_OK;
}

dmlc_status dmlc_graph_add_operator(dmlc_graph *graph, const DML_OPERATOR_DESC *desc,
                                    const dmlc_value *inputs, size_t input_count,
                                    dmlc_value *outputs, size_t output_count) {
  if (!graph)
    return DMLC_ERROR_INVALID_ARGUMENT;
  dmlc_context *ctx = graph->ctx;
  dmlc_operator_tensors tensors;
  DMLC_RETURN_IF_ERROR(dmlc_frontend_operator_tensors(desc, &tensors, dmlc_ctx_diag(ctx)));
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
  dmlc_api_graph_changed(graph);
  DMLC_RETURN_IF_ERROR(
      dmlc_frontend_add_operator(graph->ir, desc, inputs, results, layouts, dmlc_ctx_diag(ctx)));
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
  if (value < graph->cap_layouts && graph->result_layouts[value].given)
    layout = &graph->result_layouts[value].layout;
  for (uint32_t i = 0; !layout && i < ir->num_inputs; i++)
    if (ir->inputs[i].value == value)
      layout = &ir->inputs[i].layout;
  if (layout && !dmlc_strides_disjoint(&ir->values[value].type, layout->strides))
    return dmlc_diag_set(dmlc_ctx_diag(ctx), DMLC_ERROR_INVALID_ARGUMENT,
                         "dmlc_graph_add_output: output '%s' would be laid out with zero or "
                         "overlapping strides (the layout of its value)",
                         name);
  dmlc_api_graph_changed(graph);
  return dmlc_ir_add_output(ir, name, value, layout, dmlc_ctx_diag(ctx));
}

dmlc_status dmlc_graph_parse(dmlc_context *ctx, const char *text, size_t length,
                             const char *filename, dmlc_graph **out) {
  if (!ctx)
    return DMLC_ERROR_INVALID_ARGUMENT;
  CHECK_ARG(ctx, out, "dmlc_graph_parse: out is NULL");
  *out = NULL;
  CHECK_ARG(ctx, text || length == 0, "dmlc_graph_parse: text is NULL");
  dmlc_ir_graph *ir = NULL;
  DMLC_RETURN_IF_ERROR(dmlc_ir_parse(text ? text : "", length, filename ? filename : "<input>", &ir,
                                     dmlc_ctx_diag(ctx)));
  return graph_wrap(ctx, ir, out);
}

dmlc_status dmlc_graph_verify(dmlc_graph *graph) {
  if (!graph)
    return DMLC_ERROR_INVALID_ARGUMENT;
  return dmlc_api_verify(graph->ctx, graph->ir);
}

dmlc_status dmlc_graph_print(dmlc_graph *graph, char **out_text) {
  if (!graph)
    return DMLC_ERROR_INVALID_ARGUMENT;
  CHECK_ARG(graph->ctx, out_text, "dmlc_graph_print: out_text is NULL");
  *out_text = dmlc_ir_print(graph->ir);
  if (!*out_text)
    return dmlc_diag_set(dmlc_ctx_diag(graph->ctx), DMLC_ERROR_OUT_OF_MEMORY,
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
  dmlc_api_graph_changed(graph);
  graph->cap_layouts = 0;
  free(graph->result_layouts);
  graph->result_layouts = NULL;
  return dmlc_run_pipeline(&graph->ir, pipeline, &o, dmlc_ctx_diag(graph->ctx));
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
