/* Executing: every binding is checked here, for every device alike, before
 * anything runs; the device then runs with host buffers or its own tensors. */
#include <stdint.h>
#include <stdlib.h>

#include "api/api_internal.h"

static bool ranges_overlap(const void *a, uint64_t a_size, const void *b, uint64_t b_size) {
  const uintptr_t a0 = (uintptr_t)a, b0 = (uintptr_t)b;
  return a_size && b_size && a0 < b0 + b_size && b0 < a0 + a_size;
}

static dmlc_status check_counts(const dmlc_executable *exe, const char *fn, const void *inputs,
                                size_t input_count, const void *outputs, size_t output_count) {
  dmlc_context *ctx = exe->ctx;
  const dmlc_ir_graph *ir = exe->ir;
  CHECK_ARG(ctx, input_count == ir->num_inputs, "%s: %zu input%s bound; the graph has %u input%s",
            fn, input_count, DMLC_PLURAL(input_count), ir->num_inputs, DMLC_PLURAL(ir->num_inputs));
  CHECK_ARG(ctx, output_count == ir->num_outputs,
            "%s: %zu output%s bound; the graph has %u output%s", fn, output_count,
            DMLC_PLURAL(output_count), ir->num_outputs, DMLC_PLURAL(ir->num_outputs));
  CHECK_ARG(ctx, inputs || input_count == 0, "%s: inputs is NULL", fn);
  CHECK_ARG(ctx, outputs || output_count == 0, "%s: outputs is NULL", fn);
  return DMLC_OK;
}

/* The bytes that input index (output index when output) of a run touches:
 * the size check's minimum, and the extent for overlap checks. */
static uint64_t touched_bytes(const dmlc_executable *exe, bool output, size_t index) {
  return exe->io_bytes[output ? exe->ir->num_inputs + index : index];
}

/* What messages call a binding: "inputs" or "outputs". */
static const char *binding_kind(bool output) { return output ? "outputs" : "inputs"; }

static const dmlc_graph_io *binding_io(const dmlc_executable *exe, bool output, size_t index) {
  return output ? &exe->ir->outputs[index] : &exe->ir->inputs[index];
}

/* Size and alignment: the same rules for a host buffer and a tensor. data
 * is the bytes' host address, or NULL when the host cannot see them (a
 * device tensor starts at its allocation, aligned for any binding up to
 * 4096 bytes; a host tensor is checked here like a host buffer). The size
 * rule (docs/api.md, "Buffer sizes"): a binding whose size the user declared
 * (a DML_BUFFER_TENSOR_DESC's TotalTensorSizeInBytes, "size = N" in IR
 * text) needs that many bytes, as DirectML does; any other (IR text, ONNX)
 * needs only to reach the end of its last element. */
static dmlc_status check_extent(const dmlc_executable *exe, bool output, size_t index,
                                const void *data, uint64_t size, const char *what) {
  dmlc_context *ctx = exe->ctx;
  const char *kind = binding_kind(output);
  const dmlc_graph_io *io = binding_io(exe, output, index);
  const uint64_t needed = touched_bytes(exe, output, index);
  if (size < needed) { /* the type's text only for the message: not on every call */
    char type[DMLC_TYPE_STR_MAX];
    dmlc_type_str(&exe->ir->values[io->value].type, type, sizeof type);
    CHECK_ARG(ctx, false,
              "%s[%zu] ('%s') is a %s of %llu bytes; its tensor %s needs at least %llu %s", kind,
              index, io->name, what, (unsigned long long)size, type, (unsigned long long)needed,
              io->layout.size_declared
                  ? "(its declared TotalTensorSizeInBytes, DirectML's rule for descriptors)"
                  : "(to the end of its last element; IR text and ONNX declare no "
                    "TotalTensorSizeInBytes)");
  }
  CHECK_ARG(ctx, !data || !io->layout.alignment || (uintptr_t)data % io->layout.alignment == 0,
            "%s[%zu] ('%s'): %s %p is not aligned to %u bytes (GuaranteedBaseOffsetAlignment)",
            kind, index, io->name, what, data, io->layout.alignment);
  return DMLC_OK;
}

static dmlc_status check_buffers(const dmlc_executable *exe, const dmlc_buffer *inputs,
                                 const dmlc_buffer *outputs) {
  dmlc_context *ctx = exe->ctx;
  const dmlc_ir_graph *ir = exe->ir;
  for (size_t i = 0; i < ir->num_inputs; i++) {
    CHECK_ARG(ctx, inputs[i].data, "inputs[%zu] ('%s'): data is NULL", i, ir->inputs[i].name);
    DMLC_RETURN_IF_ERROR(
        check_extent(exe, false, i, inputs[i].data, inputs[i].size_bytes, "buffer"));
  }
  for (size_t i = 0; i < ir->num_outputs; i++) {
    const uint64_t size = touched_bytes(exe, true, i);
    CHECK_ARG(ctx, outputs[i].data, "outputs[%zu] ('%s'): data is NULL", i, ir->outputs[i].name);
    DMLC_RETURN_IF_ERROR(
        check_extent(exe, true, i, outputs[i].data, outputs[i].size_bytes, "buffer"));
    for (size_t j = 0; j < ir->num_inputs; j++)
      CHECK_ARG(
          ctx, !ranges_overlap(outputs[i].data, size, inputs[j].data, touched_bytes(exe, false, j)),
          "outputs[%zu] ('%s') overlaps inputs[%zu] ('%s'); outputs must not alias inputs", i,
          ir->outputs[i].name, j, ir->inputs[j].name);
    for (size_t j = 0; j < i; j++)
      CHECK_ARG(
          ctx, !ranges_overlap(outputs[i].data, size, outputs[j].data, touched_bytes(exe, true, j)),
          "outputs[%zu] ('%s') overlaps outputs[%zu] ('%s')", i, ir->outputs[i].name, j,
          ir->outputs[j].name);
  }
  return DMLC_OK;
}

/* Runs the device's execute with this call's bindings (an executable may
 * run on many threads at once), under the context's lock on a device whose
 * executes are serial. */
static dmlc_status run(dmlc_executable *exe, const dmlc_rt_binding *in,
                       const dmlc_rt_binding *out) {
  const dmlc_device_vtable *vt = exe->device->vtable;
  dmlc_ctx_lock_serial(exe->ctx, vt);
  const dmlc_status status = vt->execute(exe->rt, in, out, dmlc_ctx_diag(exe->ctx));
  dmlc_ctx_unlock_serial(exe->ctx, vt);
  return status;
}

enum { LOCAL_BINDINGS = 16 };

static dmlc_rt_binding *bindings_for(dmlc_executable *exe, size_t count, dmlc_rt_binding *local) {
  if (count <= LOCAL_BINDINGS)
    return local;
  dmlc_rt_binding *b = malloc(count * sizeof *b);
  if (!b)
    dmlc_diag_set(dmlc_ctx_diag(exe->ctx), DMLC_ERROR_OUT_OF_MEMORY, "out of memory executing");
  return b;
}

dmlc_status dmlc_execute(dmlc_executable *exe, const dmlc_buffer *inputs, size_t input_count,
                         const dmlc_buffer *outputs, size_t output_count) {
  if (!exe)
    return DMLC_ERROR_INVALID_ARGUMENT;
  DMLC_RETURN_IF_ERROR(
      check_counts(exe, "dmlc_execute", inputs, input_count, outputs, output_count));
  DMLC_RETURN_IF_ERROR(check_buffers(exe, inputs, outputs));
  dmlc_rt_binding local[LOCAL_BINDINGS];
  dmlc_rt_binding *in = bindings_for(exe, input_count + output_count, local);
  if (!in)
    return DMLC_ERROR_OUT_OF_MEMORY;
  dmlc_rt_binding *out = in + input_count;
  for (size_t i = 0; i < input_count; i++)
    in[i] = (dmlc_rt_binding){inputs[i].data, NULL, inputs[i].size_bytes};
  for (size_t i = 0; i < output_count; i++)
    out[i] = (dmlc_rt_binding){outputs[i].data, NULL, outputs[i].size_bytes};
  const dmlc_status status = run(exe, in, out);
  if (in != local)
    free(in);
  return status;
}

static dmlc_status check_tensor(const dmlc_executable *exe, bool output, size_t index,
                                dmlc_tensor *t) {
  const char *kind = binding_kind(output);
  const dmlc_graph_io *io = binding_io(exe, output, index);
  dmlc_context *ctx = exe->ctx;
  CHECK_ARG(ctx, t, "%s[%zu] ('%s'): the tensor is NULL", kind, index, io->name);
  CHECK_ARG(ctx, t->ctx == ctx, "%s[%zu] ('%s'): the tensor belongs to another context", kind,
            index, io->name);
  CHECK_ARG(ctx, t->device == exe->device,
            "%s[%zu] ('%s'): the tensor is on device '%s'; the executable runs on '%s'", kind,
            index, io->name, t->device->name, exe->device->name);
  const dmlc_device_vtable *vt = exe->device->vtable;
  const void *data = vt->tensor_map ? vt->tensor_map(t->rt) : NULL;
  return check_extent(exe, output, index, data, t->size_bytes, "tensor");
}

static dmlc_status check_tensors(const dmlc_executable *exe, dmlc_tensor *const *inputs,
                                 dmlc_tensor *const *outputs) {
  dmlc_context *ctx = exe->ctx;
  const dmlc_ir_graph *ir = exe->ir;
  for (size_t i = 0; i < ir->num_inputs; i++)
    DMLC_RETURN_IF_ERROR(check_tensor(exe, false, i, inputs[i]));
  for (size_t i = 0; i < ir->num_outputs; i++) {
    DMLC_RETURN_IF_ERROR(check_tensor(exe, true, i, outputs[i]));
    for (size_t j = 0; j < ir->num_inputs; j++)
      CHECK_ARG(ctx, outputs[i] != inputs[j],
                "outputs[%zu] ('%s') is the tensor of inputs[%zu] ('%s'); outputs must not alias "
                "inputs",
                i, ir->outputs[i].name, j, ir->inputs[j].name);
    for (size_t j = 0; j < i; j++)
      CHECK_ARG(ctx, outputs[i] != outputs[j],
                "outputs[%zu] ('%s') is the tensor of outputs[%zu] ('%s')", i, ir->outputs[i].name,
                j, ir->outputs[j].name);
  }
  return DMLC_OK;
}

dmlc_status dmlc_execute_tensors(dmlc_executable *exe, dmlc_tensor *const *inputs,
                                 size_t input_count, dmlc_tensor *const *outputs,
                                 size_t output_count) {
  if (!exe)
    return DMLC_ERROR_INVALID_ARGUMENT;
  DMLC_RETURN_IF_ERROR(
      check_counts(exe, "dmlc_execute_tensors", inputs, input_count, outputs, output_count));
  DMLC_RETURN_IF_ERROR(check_tensors(exe, inputs, outputs));
  dmlc_rt_binding local[LOCAL_BINDINGS];
  dmlc_rt_binding *in = bindings_for(exe, input_count + output_count, local);
  if (!in)
    return DMLC_ERROR_OUT_OF_MEMORY;
  dmlc_rt_binding *out = in + input_count;
  for (size_t i = 0; i < input_count; i++)
    in[i] = (dmlc_rt_binding){NULL, inputs[i]->rt, inputs[i]->size_bytes};
  for (size_t i = 0; i < output_count; i++)
    out[i] = (dmlc_rt_binding){NULL, outputs[i]->rt, outputs[i]->size_bytes};
  const dmlc_status status = run(exe, in, out);
  if (in != local)
    free(in);
  return status;
}
