/* The Vulkan runtime as a device (dmlc_vulkan_device_vtable). The Vulkan
 * device itself is opened by the first compile or tensor, so describing
 * needs only the loader, and a context that never runs anything on Vulkan
 * never opens a device. */
#include <stdlib.h>

#include "runtime/vulkan/vk_device.h"

typedef struct vk_rt_device {
  dmlc_vk_device *dev; /* NULL until first needed */
} vk_rt_device;

static vk_rt_device *device_of(dmlc_rt_device *d) { return (vk_rt_device *)d; }

static dmlc_status vk_rt_create(const dmlc_rt_options *options, dmlc_rt_device **out,
                                dmlc_diag *diag) {
  (void)options;
  vk_rt_device *d = calloc(1, sizeof *d);
  *out = (dmlc_rt_device *)d;
  return d ? DMLC_OK
           : dmlc_diag_set(diag, DMLC_ERROR_OUT_OF_MEMORY, "out of memory creating a device");
}

static void vk_rt_destroy(dmlc_rt_device *d) {
  if (!d)
    return;
  dmlc_vk_device_close(device_of(d)->dev);
  free(d);
}

static dmlc_status opened(dmlc_rt_device *d, dmlc_vk_device **out, dmlc_diag *diag) {
  vk_rt_device *rt = device_of(d);
  if (!rt->dev)
    DMLC_RETURN_IF_ERROR(dmlc_vk_device_open(&rt->dev, diag));
  *out = rt->dev;
  return DMLC_OK;
}

static dmlc_status vk_rt_describe(dmlc_rt_device *d, char **out_text, dmlc_diag *diag) {
  (void)d;
  return dmlc_vk_describe_devices(out_text, diag);
}

static uint64_t vk_rt_compile_count(const dmlc_rt_device *d) {
  const vk_rt_device *rt = (const vk_rt_device *)d;
  return rt->dev ? dmlc_vk_device_compile_count(rt->dev) : 0;
}

static dmlc_status vk_rt_compile(dmlc_rt_device *d, const dmlc_rt_program *program,
                                 dmlc_rt_executable **out, dmlc_diag *diag) {
  dmlc_vk_device *dev;
  DMLC_RETURN_IF_ERROR(opened(d, &dev, diag));
  const dmlc_ir_graph *g = program->graph;
  const uint32_t n = g->num_inputs + g->num_outputs;
  uint64_t *bytes = calloc(n ? n : 1, sizeof *bytes);
  if (!bytes)
    return dmlc_diag_set(diag, DMLC_ERROR_OUT_OF_MEMORY, "out of memory compiling");
  for (uint32_t i = 0; i < g->num_inputs; i++)
    bytes[i] = g->inputs[i].layout.size_bytes;
  for (uint32_t i = 0; i < g->num_outputs; i++)
    bytes[g->num_inputs + i] = g->outputs[i].layout.size_bytes;
  dmlc_vk_executable *exe = NULL;
  const dmlc_status status = dmlc_vk_executable_create(
      dev, program->plan, bytes, g->num_inputs, bytes + g->num_inputs, g->num_outputs, &exe, diag);
  free(bytes);
  *out = (dmlc_rt_executable *)exe;
  return status;
}

static void vk_rt_executable_destroy(dmlc_rt_executable *exe) {
  dmlc_vk_executable_destroy((dmlc_vk_executable *)exe);
}

static dmlc_status vk_rt_execute(dmlc_rt_executable *exe, const dmlc_rt_binding *inputs,
                                 const dmlc_rt_binding *outputs, dmlc_diag *diag) {
  return dmlc_vk_execute((dmlc_vk_executable *)exe, inputs, outputs, diag);
}

static dmlc_status vk_rt_dump(dmlc_rt_executable *exe, const char *what, char **out_text,
                              dmlc_diag *diag) {
  return dmlc_vk_executable_dump((const dmlc_vk_executable *)exe, what, out_text, diag);
}

static size_t vk_rt_kernel_times(const dmlc_rt_executable *exe, double *ns, size_t max) {
  return dmlc_vk_kernel_times((const dmlc_vk_executable *)exe, ns,
                              max > UINT32_MAX ? UINT32_MAX : (uint32_t)max);
}

static void vk_rt_set_profiling(dmlc_rt_executable *exe, bool on) {
  dmlc_vk_set_profiling((dmlc_vk_executable *)exe, on);
}

static dmlc_status vk_rt_tensor_create(dmlc_rt_device *d, uint64_t size_bytes, dmlc_rt_tensor **out,
                                       dmlc_diag *diag) {
  dmlc_vk_device *dev;
  DMLC_RETURN_IF_ERROR(opened(d, &dev, diag));
  dmlc_vk_tensor *t = NULL;
  const dmlc_status status = dmlc_vk_tensor_create(dev, size_bytes, &t, diag);
  *out = (dmlc_rt_tensor *)t;
  return status;
}

static dmlc_status vk_rt_tensor_write(dmlc_rt_tensor *t, uint64_t offset, const void *src,
                                      uint64_t size, dmlc_diag *diag) {
  return dmlc_vk_tensor_write((dmlc_vk_tensor *)t, offset, src, size, diag);
}

static dmlc_status vk_rt_tensor_read(const dmlc_rt_tensor *t, uint64_t offset, void *dst,
                                     uint64_t size, dmlc_diag *diag) {
  return dmlc_vk_tensor_read((const dmlc_vk_tensor *)t, offset, dst, size, diag);
}

static void vk_rt_tensor_destroy(dmlc_rt_tensor *t) { dmlc_vk_tensor_destroy((dmlc_vk_tensor *)t); }

static const dmlc_dump_kind vk_dump_kinds[] = {
    {"kernels", "kernels"}, {"spirv", "SPIR-V"}, {NULL, NULL}};

const dmlc_device_vtable dmlc_vulkan_device_vtable = {
    .compiles_plan = true,
    .create = vk_rt_create,
    .destroy = vk_rt_destroy,
    .describe = vk_rt_describe,
    .compile_count = vk_rt_compile_count,
    .compile = vk_rt_compile,
    .executable_destroy = vk_rt_executable_destroy,
    .execute = vk_rt_execute,
    .dump_kinds = vk_dump_kinds,
    .dump = vk_rt_dump,
    .kernel_times = vk_rt_kernel_times,
    .set_profiling = vk_rt_set_profiling,
    .tensor_create = vk_rt_tensor_create,
    .tensor_write = vk_rt_tensor_write,
    .tensor_read = vk_rt_tensor_read,
    .tensor_destroy = vk_rt_tensor_destroy,
};
