/* The public API's Vulkan device: the glue between api.c and the Vulkan
 * runtime (runtime/vulkan). The context opens its device on the first Vulkan
 * compile; without DMLC_HAVE_VULKAN (cmake -DDMLC_VULKAN=OFF) every entry
 * answers DMLC_ERROR_UNSUPPORTED. */
#include <stdlib.h>
#include <string.h>

#include "api/api_internal.h"

#ifdef DMLC_HAVE_VULKAN

#include "codegen/kernel_desc.h"
#include "passes/passes.h"
#include "runtime/vulkan/vk_device.h"

static dmlc_status context_device(dmlc_context *ctx, dmlc_vk_device **out) {
  if (!ctx->vulkan)
    DMLC_RETURN_IF_ERROR(dmlc_vk_device_open(&ctx->vulkan, &ctx->diag));
  *out = ctx->vulkan;
  return DMLC_OK;
}

/* The plan of exe->ir after the default pipeline, on a copy of the graph. */
static dmlc_status build_plan(dmlc_executable *exe, dmlc_kernel_plan *plan) {
  dmlc_ir_graph *fused;
  DMLC_RETURN_IF_ERROR(dmlc_api_fused_copy(exe, &fused));
  const dmlc_status status = dmlc_kernel_plan_build(fused, plan, &exe->ctx->diag);
  dmlc_ir_graph_destroy(fused);
  return status;
}

dmlc_status dmlc_api_vulkan_compile(dmlc_executable *exe) {
  dmlc_context *ctx = exe->ctx;
  const dmlc_ir_graph *ir = exe->ir;
  /* The graph first: a graph no device could run says so even where
   * there is no Vulkan. */
  dmlc_kernel_plan plan = {0};
  DMLC_RETURN_IF_ERROR(build_plan(exe, &plan));
  dmlc_vk_device *dev = NULL;
  dmlc_status status = context_device(ctx, &dev);
  uint64_t *bytes = NULL;
  if (status == DMLC_OK) {
    const uint32_t n = ir->num_inputs + ir->num_outputs;
    bytes = calloc(n ? n : 1, sizeof *bytes);
    if (!bytes)
      status = dmlc_diag_set(&ctx->diag, DMLC_ERROR_OUT_OF_MEMORY, "out of memory compiling");
  }
  if (status == DMLC_OK) {
    for (uint32_t i = 0; i < ir->num_inputs; i++)
      bytes[i] = ir->inputs[i].layout.size_bytes;
    for (uint32_t i = 0; i < ir->num_outputs; i++)
      bytes[ir->num_inputs + i] = ir->outputs[i].layout.size_bytes;
    status = dmlc_vk_executable_create(dev, &plan, bytes, ir->num_inputs, bytes + ir->num_inputs,
                                       ir->num_outputs, &exe->vulkan, &ctx->diag);
  }
  free(bytes);
  dmlc_kernel_plan_free(&plan);
  return status;
}

dmlc_status dmlc_api_vulkan_execute(dmlc_executable *exe, const dmlc_buffer *inputs,
                                    const dmlc_buffer *outputs) {
  return dmlc_vk_execute(exe->vulkan, inputs, outputs, &exe->ctx->diag);
}

dmlc_status dmlc_api_vulkan_dump(const dmlc_executable *exe, const char *what, char **out_text) {
  return dmlc_vk_executable_dump(exe->vulkan, what, out_text, &exe->ctx->diag);
}

size_t dmlc_api_vulkan_kernel_times(const dmlc_executable *exe, double *ns, size_t max) {
  return dmlc_vk_kernel_times(exe->vulkan, ns, max > UINT32_MAX ? UINT32_MAX : (uint32_t)max);
}

dmlc_status dmlc_api_vulkan_describe(dmlc_context *ctx, char **out_text) {
  return dmlc_vk_describe_devices(out_text, &ctx->diag);
}

void dmlc_api_vulkan_executable_destroy(dmlc_executable *exe) {
  dmlc_vk_executable_destroy(exe->vulkan);
  exe->vulkan = NULL;
}

void dmlc_api_vulkan_context_destroy(dmlc_context *ctx) {
  dmlc_vk_device_close(ctx->vulkan);
  ctx->vulkan = NULL;
}

#else /* !DMLC_HAVE_VULKAN */

static dmlc_status not_built(dmlc_context *ctx) {
  return dmlc_diag_set(&ctx->diag, DMLC_ERROR_UNSUPPORTED,
                       "device 'vulkan' is not built into this dmlc (it was configured with "
                       "-DDMLC_VULKAN=OFF); use the cpu or reference device");
}

dmlc_status dmlc_api_vulkan_compile(dmlc_executable *exe) { return not_built(exe->ctx); }

dmlc_status dmlc_api_vulkan_execute(dmlc_executable *exe, const dmlc_buffer *inputs,
                                    const dmlc_buffer *outputs) {
  (void)inputs;
  (void)outputs;
  return not_built(exe->ctx);
}

dmlc_status dmlc_api_vulkan_dump(const dmlc_executable *exe, const char *what, char **out_text) {
  (void)what;
  (void)out_text;
  return not_built(exe->ctx);
}

size_t dmlc_api_vulkan_kernel_times(const dmlc_executable *exe, double *ns, size_t max) {
  (void)exe;
  (void)ns;
  (void)max;
  return 0;
}

dmlc_status dmlc_api_vulkan_describe(dmlc_context *ctx, char **out_text) {
  (void)out_text;
  return not_built(ctx);
}

void dmlc_api_vulkan_executable_destroy(dmlc_executable *exe) { (void)exe; }
void dmlc_api_vulkan_context_destroy(dmlc_context *ctx) { (void)ctx; }

#endif
