/* The reference evaluator as a device: it evaluates the graph as given (no
 * passes, no kernels), one thread, over host memory. */
#include <stdlib.h>
#include <string.h>

#include "runtime/host_tensor.h"
#include "runtime/reference/reference.h"

/* The device holds nothing; the handle only has to be non-NULL. */
static char reference_device_token;

struct dmlc_rt_executable {
  dmlc_ir_graph *graph; /* owned copy */
  dmlc_buffer *buffers; /* inputs then outputs, filled per execute */
};

static dmlc_status ref_create(const dmlc_rt_options *options, dmlc_rt_device **out,
                              dmlc_diag *diag) {
  (void)options;
  (void)diag;
  *out = (dmlc_rt_device *)&reference_device_token;
  return DMLC_OK;
}

static void ref_destroy(dmlc_rt_device *dev) { (void)dev; }

static dmlc_status ref_describe(dmlc_rt_device *dev, char **out_text, dmlc_diag *diag) {
  (void)dev;
  *out_text = strdup("the reference evaluator (unoptimized graph, one thread)");
  return *out_text ? DMLC_OK : dmlc_diag_set(diag, DMLC_ERROR_OUT_OF_MEMORY, "out of memory");
}

static void ref_executable_destroy(dmlc_rt_executable *exe) {
  if (!exe)
    return;
  dmlc_ir_graph_destroy(exe->graph);
  free(exe->buffers);
  free(exe);
}

static dmlc_status ref_compile(dmlc_rt_device *dev, const dmlc_rt_program *program,
                               dmlc_rt_executable **out, dmlc_diag *diag) {
  (void)dev;
  *out = NULL;
  dmlc_rt_executable *exe = calloc(1, sizeof *exe);
  const uint32_t io = program->graph->num_inputs + program->graph->num_outputs;
  if (exe) {
    exe->graph = dmlc_ir_graph_clone(program->graph);
    exe->buffers = calloc(io ? io : 1, sizeof *exe->buffers);
  }
  if (!exe || !exe->graph || !exe->buffers) {
    ref_executable_destroy(exe);
    return dmlc_diag_set(diag, DMLC_ERROR_OUT_OF_MEMORY, "out of memory compiling");
  }
  *out = exe;
  return DMLC_OK;
}

static dmlc_status ref_execute(dmlc_rt_executable *exe, const dmlc_rt_binding *inputs,
                               const dmlc_rt_binding *outputs, dmlc_diag *diag) {
  /* The buffers of this call: an executable may run on many threads at
   * once. */
  const dmlc_ir_graph *g = exe->graph;
  const uint32_t io = g->num_inputs + g->num_outputs;
  dmlc_buffer local[16];
  dmlc_buffer *in = io <= 16 ? local : malloc(io * sizeof *in);
  if (!in)
    return dmlc_diag_set(diag, DMLC_ERROR_OUT_OF_MEMORY, "reference: out of memory executing");
  dmlc_buffer *out = in + g->num_inputs;
  for (uint32_t i = 0; i < g->num_inputs; i++)
    in[i] = (dmlc_buffer){dmlc_host_binding_data(&inputs[i]), inputs[i].size_bytes};
  for (uint32_t i = 0; i < g->num_outputs; i++)
    out[i] = (dmlc_buffer){dmlc_host_binding_data(&outputs[i]), outputs[i].size_bytes};
  const dmlc_status status = dmlc_reference_execute(g, in, out, diag);
  if (in != local)
    free(in);
  return status;
}

static const dmlc_dump_kind ref_dump_kinds[] = {{NULL, NULL}};

const dmlc_device_vtable dmlc_reference_device_vtable = {
    .compiles_plan = false,
    .concurrent_execute = true,
    .create = ref_create,
    .destroy = ref_destroy,
    .describe = ref_describe,
    .compile = ref_compile,
    .executable_destroy = ref_executable_destroy,
    .execute = ref_execute,
    .dump_kinds = ref_dump_kinds,
    .tensor_create = dmlc_host_tensor_create,
    .tensor_write = dmlc_host_tensor_write,
    .tensor_read = dmlc_host_tensor_read,
    .tensor_map = dmlc_host_tensor_map,
    .tensor_destroy = dmlc_host_tensor_destroy,
};
