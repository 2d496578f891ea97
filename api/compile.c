/* Compiling graphs for a device, and what an executable tells about itself.
 * The kernel plan is built here, once, for every device that generates
 * code; the device only turns it into its own executable. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/api_internal.h"
#include "ir/strbuf.h"
#include "passes/passes.h"

/* The kernel plan of ir after the default pipeline (on a copy: the
 * executable keeps the graph as given, for bindings and infos). */
dmlc_status dmlc_api_build_plan(dmlc_context *ctx, const dmlc_ir_graph *ir, dmlc_kernel_plan *plan,
                                dmlc_ir_graph **fused_out) {
  if (fused_out)
    *fused_out = NULL;
  dmlc_ir_graph *fused = dmlc_ir_graph_clone(ir);
  if (!fused)
    return dmlc_diag_set(dmlc_ctx_diag(ctx), DMLC_ERROR_OUT_OF_MEMORY, "out of memory compiling");
  const dmlc_pipeline_options options = {0};
  dmlc_status status =
      dmlc_run_pipeline(&fused, DMLC_DEFAULT_PIPELINE, &options, dmlc_ctx_diag(ctx));
  if (status == DMLC_OK)
    status = dmlc_kernel_plan_build(fused, plan, dmlc_ctx_diag(ctx));
  if (status == DMLC_OK && fused_out) {
    *fused_out = fused;
    return DMLC_OK;
  }
  dmlc_ir_graph_destroy(fused);
  return status;
}

static void format_strides(const uint64_t *strides, uint32_t rank, char *buf, size_t size) {
  size_t used = (size_t)snprintf(buf, size, "[");
  for (uint32_t d = 0; d < rank && used < size; d++)
    used += (size_t)snprintf(buf + used, size - used, "%s%llu", d ? ", " : "",
                             (unsigned long long)strides[d]);
  if (used < size)
    snprintf(buf + used, size - used, "]");
}

/* How written kernel k differs from derived kernel d, into why (empty when
 * they agree). Values are compared by what they are to the kernel (the
 * space, each buffer's strides and output), not by number: fuse may number
 * a graph's values differently when it runs again. */
static void kernel_difference(const dmlc_ir_graph *g, const dmlc_kernel *k, const dmlc_ir_graph *dg,
                              const dmlc_kernel *d, char *why, size_t size) {
  why[0] = '\0';
  if (k->rank != d->rank || k->reduced_mask != d->reduced_mask ||
      memcmp(k->dims, d->dims, k->rank * sizeof k->dims[0]) != 0) {
    snprintf(why, size, "its space differs from the one fuse derives");
    return;
  }
  if (k->num_reads != d->num_reads || k->num_writes != d->num_writes) {
    snprintf(why, size, "it has %u read%s and %u write%s; fuse derives %u and %u", k->num_reads,
             DMLC_PLURAL(k->num_reads), k->num_writes, DMLC_PLURAL(k->num_writes), d->num_reads,
             d->num_writes);
    return;
  }
  for (uint32_t j = 0; j < k->num_reads + k->num_writes; j++) {
    const bool read = j < k->num_reads;
    const uint32_t at = read ? j : j - k->num_reads;
    const dmlc_kernel_buffer *a =
        read ? &dmlc_kernel_reads(g, k)[at] : &dmlc_kernel_writes(g, k)[at];
    const dmlc_kernel_buffer *b =
        read ? &dmlc_kernel_reads(dg, d)[at] : &dmlc_kernel_writes(dg, d)[at];
    const bool input_read = read && g->values[a->value].producer < 0;
    if (a->output != b->output ||
        memcmp(a->strides, b->strides, k->rank * sizeof a->strides[0]) != 0 ||
        (input_read && a->value != b->value)) {
      char got[160], want[160];
      format_strides(a->strides, k->rank, got, sizeof got);
      format_strides(b->strides, k->rank, want, sizeof want);
      snprintf(why, size, "%s(...) entry %u has strides %s; fuse derives %s for it",
               read ? "reads" : "writes", at, got, want);
      return;
    }
  }
}

dmlc_status dmlc_api_verify(dmlc_context *ctx, const dmlc_ir_graph *ir) {
  DMLC_RETURN_IF_ERROR(dmlc_ir_verify(ir, dmlc_ctx_diag(ctx)));
  if (ir->num_kernels == 0)
    return DMLC_OK;
  dmlc_ir_graph *derived = dmlc_ir_graph_clone(ir);
  if (!derived)
    return dmlc_diag_set(dmlc_ctx_diag(ctx), DMLC_ERROR_OUT_OF_MEMORY,
                         "out of memory verifying kernels");
  const dmlc_pipeline_options options = {0};
  dmlc_status status = dmlc_run_pipeline(&derived, "fuse", &options, dmlc_ctx_diag(ctx));
  /* Every written kernel must be one fuse derives (fuse may order and
   * number them differently when it runs again on its own output). */
  char why[512] = "";
  uint32_t kernel = 0;
  for (; status == DMLC_OK && kernel < ir->num_kernels; kernel++) {
    char first_why[512] = "";
    bool found = false;
    for (uint32_t j = 0; j < derived->num_kernels && !found; j++) {
      char w[512];
      kernel_difference(ir, &ir->kernels[kernel], derived, &derived->kernels[j], w, sizeof w);
      found = !w[0];
      /* The explanation from the closest candidate: the same space. */
      if (!found && (!first_why[0] || strncmp(first_why, "its space", 9) == 0))
        snprintf(first_why, sizeof first_why, "%s", w);
    }
    if (!found) {
      snprintf(why, sizeof why, "%s",
               first_why[0] ? first_why : "fuse derives no kernel from the graph's nodes");
      break;
    }
  }
  dmlc_ir_graph_destroy(derived);
  if (status != DMLC_OK || !why[0])
    return status;
  char place[DMLC_SOURCE_MAX + 32] = "";
  const dmlc_kernel *k = &ir->kernels[kernel];
  if (k->src_line && ir->source[0])
    snprintf(place, sizeof place, "%.*s:%u:%u: ", (int)strnlen(ir->source, sizeof ir->source),
             ir->source, k->src_line, k->src_col);
  return dmlc_diag_set(dmlc_ctx_diag(ctx), DMLC_ERROR_INVALID_ARGUMENT,
                       "%skernel @k%u is not the kernel dmlc derives from the graph's nodes: %s. "
                       "dmlc compiles the nodes and derives every kernel itself, so an edited "
                       "kernel would have no effect: undo the edit, or delete the kernel blocks "
                       "(keeping their nodes) and edit the nodes",
                       place, kernel, why);
}

void dmlc_api_graph_changed(dmlc_graph *graph) {
  dmlc_kernel_plan *plan = atomic_exchange_explicit(&graph->plan, NULL, memory_order_acq_rel);
  if (plan) {
    dmlc_kernel_plan_free(plan);
    free(plan);
  }
}

/* graph's plan: the remembered one, or one built now into *local (and
 * remembered when there is memory for it; a compile of the same graph on
 * another thread may have remembered its own first, which is then used). */
static dmlc_status graph_plan(dmlc_graph *graph, dmlc_kernel_plan *local,
                              const dmlc_kernel_plan **out) {
  dmlc_kernel_plan *plan = atomic_load_explicit(&graph->plan, memory_order_acquire);
  if (plan) {
    *out = plan;
    return DMLC_OK;
  }
  DMLC_RETURN_IF_ERROR(dmlc_api_build_plan(graph->ctx, graph->ir, local, NULL));
  *out = local;
  dmlc_kernel_plan *kept = malloc(sizeof *kept);
  if (!kept)
    return DMLC_OK;
  *kept = *local;
  dmlc_kernel_plan *expected = NULL;
  if (atomic_compare_exchange_strong_explicit(&graph->plan, &expected, kept, memory_order_acq_rel,
                                              memory_order_acquire)) {
    *local = (dmlc_kernel_plan){0};
    *out = kept;
  } else {
    free(kept);
  }
  return DMLC_OK;
}

/* *out: an executable of a copy of ir on entry's device, not compiled yet
 * (destroyed with dmlc_executable_destroy). Out of memory, *out is NULL or
 * the part made, which the caller destroys. */
static dmlc_status executable_create(dmlc_context *ctx, const dmlc_device_entry *entry,
                                     const dmlc_ir_graph *graph_ir, dmlc_executable **out) {
  dmlc_executable *exe = calloc(1, sizeof *exe);
  dmlc_ir_graph *ir = exe ? dmlc_ir_graph_clone(graph_ir) : NULL;
  if (!ir) {
    free(exe);
    return dmlc_diag_set(dmlc_ctx_diag(ctx), DMLC_ERROR_OUT_OF_MEMORY, "out of memory compiling");
  }
  exe->ctx = ctx;
  exe->device = entry;
  exe->ir = ir;
  *out = exe;
  exe->io_bytes = malloc(((size_t)ir->num_inputs + ir->num_outputs + 1) * sizeof *exe->io_bytes);
  if (!exe->io_bytes)
    return dmlc_diag_set(dmlc_ctx_diag(ctx), DMLC_ERROR_OUT_OF_MEMORY, "out of memory compiling");
  for (uint32_t i = 0; i < ir->num_inputs + ir->num_outputs; i++) {
    const dmlc_graph_io *io =
        i < ir->num_inputs ? &ir->inputs[i] : &ir->outputs[i - ir->num_inputs];
    exe->io_bytes[i] = dmlc_layout_needed_bytes(&ir->values[io->value].type, &io->layout);
  }
  return DMLC_OK;
}

/* The plan is the caller's (NULL for a device that evaluates the graph as
 * given); the device (its JIT, kernel cache, Vulkan objects) is the
 * context's: one compile at a time. */
static dmlc_status executable_compile(dmlc_executable *exe, const dmlc_kernel_plan *plan) {
  dmlc_context *ctx = exe->ctx;
  const dmlc_device_vtable *vt = exe->device->vtable;
  dmlc_ctx_lock(ctx);
  dmlc_status status = dmlc_context_device(ctx, exe->device, &exe->rt_device);
  if (status == DMLC_OK) {
    const dmlc_rt_program program = {exe->ir, plan};
    status = vt->compile(exe->rt_device, &program, &exe->rt, dmlc_ctx_diag(ctx));
  }
  dmlc_ctx_unlock(ctx);
  return status;
}

/* A device that evaluates the graph as given (the reference) holds every
 * value densely while it runs: all of them must fit, whatever the inputs'
 * buffers hold (a broadcast input of 8 bytes may stand for 32 GiB). */
static dmlc_status check_evaluator_memory(dmlc_context *ctx, const dmlc_ir_graph *ir) {
  uint64_t total = 0;
  for (uint32_t v = 0; v < ir->num_values; v++) {
    const dmlc_type *t = &ir->values[v].type;
    const uint64_t n = dmlc_type_num_elements(t), size = dmlc_dtype_size(t->dtype);
    const uint64_t bytes = n > UINT64_MAX / (size ? size : 1) ? UINT64_MAX : n * size;
    total = bytes > UINT64_MAX - total ? UINT64_MAX : total + bytes;
  }
  char what[DMLC_NAME_MAX + 64];
  snprintf(what, sizeof what, "graph '%s' on the reference device (all its values)", ir->name);
  return dmlc_api_check_memory(ctx, total, what);
}

dmlc_status dmlc_graph_compile(dmlc_graph *graph, dmlc_device device, dmlc_executable **out) {
  if (!graph)
    return DMLC_ERROR_INVALID_ARGUMENT;
  dmlc_context *ctx = graph->ctx;
  CHECK_ARG(ctx, out, "dmlc_graph_compile: out is NULL");
  *out = NULL;
  const dmlc_device_entry *entry;
  DMLC_RETURN_IF_ERROR(dmlc_api_resolve_device(ctx, device, &entry));
  /* A remembered plan means the graph verified and has not changed since. */
  if (!atomic_load_explicit(&graph->plan, memory_order_acquire))
    DMLC_RETURN_IF_ERROR(dmlc_api_verify(ctx, graph->ir));
  if (!entry->vtable->compiles_plan)
    DMLC_RETURN_IF_ERROR(check_evaluator_memory(ctx, graph->ir));
  /* The graph first: a graph no device could run says so even where the
   * device is missing. */
  dmlc_kernel_plan local = {0};
  const dmlc_kernel_plan *plan = NULL;
  if (entry->vtable->compiles_plan)
    DMLC_RETURN_IF_ERROR(graph_plan(graph, &local, &plan));
  dmlc_executable *exe = NULL;
  dmlc_status status = executable_create(ctx, entry, graph->ir, &exe);
  if (status == DMLC_OK)
    status = executable_compile(exe, plan);
  dmlc_kernel_plan_free(&local);
  if (status != DMLC_OK) {
    dmlc_executable_destroy(exe);
    return status;
  }
  *out = exe;
  return DMLC_OK;
}

static const char *const input_names[DMLC_FRONTEND_MAX_TENSORS] = {"input", "input1"};
static const char *const output_names[DMLC_FRONTEND_MAX_TENSORS] = {"output", "output1"};

static dmlc_status build_operator_graph(dmlc_graph *graph, const DML_OPERATOR_DESC *desc) {
  dmlc_context *ctx = graph->ctx;
  dmlc_operator_tensors tensors;
  DMLC_RETURN_IF_ERROR(dmlc_frontend_operator_tensors(desc, &tensors, dmlc_ctx_diag(ctx)));
  uint32_t inputs[DMLC_FRONTEND_MAX_TENSORS], outputs[DMLC_FRONTEND_MAX_TENSORS];
  for (uint32_t i = 0; i < tensors.num_inputs; i++) {
    dmlc_type type;
    dmlc_layout layout;
    DMLC_RETURN_IF_ERROR(dmlc_frontend_tensor(tensors.inputs[i], tensors.input_fields[i], false,
                                              &type, &layout, dmlc_ctx_diag(ctx)));
    DMLC_RETURN_IF_ERROR(dmlc_ir_add_input(graph->ir, input_names[i], &type, &layout, &inputs[i],
                                           dmlc_ctx_diag(ctx)));
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

void dmlc_executable_destroy(dmlc_executable *exe) {
  if (!exe)
    return;
  if (exe->rt) {
    dmlc_ctx_lock(exe->ctx);
    exe->device->vtable->executable_destroy(exe->rt);
    dmlc_ctx_unlock(exe->ctx);
  }
  dmlc_ir_graph_destroy(exe->ir);
  free(exe->io_bytes);
  free(exe);
}

/* ---- dumps ---- */

static const dmlc_dump_kind *find_dump_kind(const dmlc_dump_kind *kinds, const char *what) {
  for (; kinds && kinds->name; kinds++)
    if (strcmp(kinds->name, what) == 0)
      return kinds;
  return NULL;
}

/* what as some registered device knows it; NULL if none does. */
static const dmlc_dump_kind *any_dump_kind(const char *what) {
  for (size_t i = 0; i < dmlc_device_registry_size(); i++) {
    const dmlc_device_vtable *vt = dmlc_device_registry_entry(i)->vtable;
    const dmlc_dump_kind *k = vt ? find_dump_kind(vt->dump_kinds, what) : NULL;
    if (k)
      return k;
  }
  return NULL;
}

/* Every dump kind of the registered devices, once each: "kernels, llvm,
 * asm or spirv". */
static void dump_kind_list(dmlc_strbuf *sb) {
  const char *names[32];
  size_t n = 0;
  for (size_t i = 0; i < dmlc_device_registry_size(); i++) {
    const dmlc_device_vtable *vt = dmlc_device_registry_entry(i)->vtable;
    for (const dmlc_dump_kind *k = vt ? vt->dump_kinds : NULL; k && k->name; k++) {
      bool seen = false;
      for (size_t j = 0; j < n; j++)
        seen |= strcmp(names[j], k->name) == 0;
      if (!seen && n < sizeof names / sizeof *names)
        names[n++] = k->name;
    }
  }
  for (size_t j = 0; j < n; j++)
    dmlc_strbuf_printf(sb, "%s%s", j == 0 ? "" : j + 1 == n ? " or " : ", ", names[j]);
}

dmlc_status dmlc_executable_dump(const dmlc_executable *exe, const char *what, char **out_text) {
  if (!exe)
    return DMLC_ERROR_INVALID_ARGUMENT;
  dmlc_context *ctx = exe->ctx;
  CHECK_ARG(ctx, out_text, "dmlc_executable_dump: out_text is NULL");
  *out_text = NULL;
  CHECK_ARG(ctx, what, "dmlc_executable_dump: what is NULL");
  const dmlc_dump_kind *known = any_dump_kind(what);
  if (!known) {
    dmlc_strbuf kinds = {0};
    dump_kind_list(&kinds);
    dmlc_diag_set(dmlc_ctx_diag(ctx), DMLC_ERROR_INVALID_ARGUMENT,
                  "dmlc_executable_dump: cannot dump '%.32s' (%s)", what,
                  kinds.data ? kinds.data : "no device dumps anything");
    dmlc_strbuf_free(&kinds);
    return DMLC_ERROR_INVALID_ARGUMENT;
  }
  const dmlc_device_vtable *vt = exe->device->vtable;
  if (!find_dump_kind(vt->dump_kinds, what))
    return dmlc_diag_set(dmlc_ctx_diag(ctx), DMLC_ERROR_UNSUPPORTED,
                         "dmlc_executable_dump: an executable for device '%s' has no %s",
                         exe->device->name, known->what);
  /* Text is made on first request and kept in the context's kernel cache. */
  dmlc_ctx_lock(ctx);
  const dmlc_status status = vt->dump(exe->rt, what, out_text, dmlc_ctx_diag(ctx));
  dmlc_ctx_unlock(ctx);
  return status;
}

dmlc_status dmlc_executable_kernel_times(const dmlc_executable *exe, double *ns, size_t max,
                                         size_t *count) {
  if (!exe)
    return DMLC_ERROR_INVALID_ARGUMENT;
  CHECK_ARG(exe->ctx, count, "dmlc_executable_kernel_times: count is NULL");
  CHECK_ARG(exe->ctx, ns || max == 0, "dmlc_executable_kernel_times: ns is NULL");
  const dmlc_device_vtable *vt = exe->device->vtable;
  if (!vt->kernel_times) {
    *count = 0;
    return DMLC_OK;
  }
  /* Vulkan's timestamps are written by executes, which hold the lock. */
  dmlc_ctx_lock(exe->ctx);
  *count = vt->kernel_times(exe->rt, ns, max);
  dmlc_ctx_unlock(exe->ctx);
  return DMLC_OK;
}

dmlc_status dmlc_executable_set_profiling(dmlc_executable *exe, int enable) {
  if (!exe)
    return DMLC_ERROR_INVALID_ARGUMENT;
  const dmlc_device_vtable *vt = exe->device->vtable;
  if (vt->set_profiling) {
    dmlc_ctx_lock(exe->ctx);
    vt->set_profiling(exe->rt, enable != 0);
    dmlc_ctx_unlock(exe->ctx);
  }
  return DMLC_OK;
}

/* ---- what the executable binds ---- */

dmlc_device dmlc_executable_device(const dmlc_executable *exe) {
  return exe ? exe->device->id : DMLC_DEVICE_DEFAULT;
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
  out->total_size_bytes = dmlc_layout_needed_bytes(t, &io->layout);
  out->alignment = io->layout.alignment;
}

dmlc_status dmlc_executable_input_info(const dmlc_executable *exe, size_t index,
                                       dmlc_tensor_info *out) {
  if (!exe)
    return DMLC_ERROR_INVALID_ARGUMENT;
  CHECK_ARG(exe->ctx, out, "dmlc_executable_input_info: out is NULL");
  CHECK_ARG(exe->ctx, index < exe->ir->num_inputs,
            "dmlc_executable_input_info: index %zu; the graph has %u input%s", index,
            exe->ir->num_inputs, DMLC_PLURAL(exe->ir->num_inputs));
  fill_info(exe->ir, &exe->ir->inputs[index], out);
  return DMLC_OK;
}

dmlc_status dmlc_executable_output_info(const dmlc_executable *exe, size_t index,
                                        dmlc_tensor_info *out) {
  if (!exe)
    return DMLC_ERROR_INVALID_ARGUMENT;
  CHECK_ARG(exe->ctx, out, "dmlc_executable_output_info: out is NULL");
  CHECK_ARG(exe->ctx, index < exe->ir->num_outputs,
            "dmlc_executable_output_info: index %zu; the graph has %u output%s", index,
            exe->ir->num_outputs, DMLC_PLURAL(exe->ir->num_outputs));
  fill_info(exe->ir, &exe->ir->outputs[index], out);
  return DMLC_OK;
}
