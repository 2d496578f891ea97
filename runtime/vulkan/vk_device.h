/* dmlc's Vulkan runtime: device selection, buffers, pipelines, dispatch,
 * timestamps. One device per context, opened on first use. */
#ifndef DMLC_RUNTIME_VULKAN_VK_DEVICE_H
#define DMLC_RUNTIME_VULKAN_VK_DEVICE_H

#include "codegen/kernel_desc.h"
#include "codegen/spirv/spirv.h"
#include "runtime/device.h"

typedef struct dmlc_vk_device dmlc_vk_device;
typedef struct dmlc_vk_executable dmlc_vk_executable;
typedef struct dmlc_vk_tensor dmlc_vk_tensor;

/* Opens the best device: discrete GPU, then integrated, then virtual, then
 * CPU (lavapipe); DMLC_VULKAN_DEVICE=<index or name substring> overrides.
 * No Vulkan loader or device: DMLC_ERROR_DEVICE with a clear message. */
dmlc_status dmlc_vk_device_open(dmlc_vk_device **out, dmlc_diag *diag);
void dmlc_vk_device_close(dmlc_vk_device *dev);
const dmlc_spirv_caps *dmlc_vk_device_caps(const dmlc_vk_device *dev);
const char *dmlc_vk_device_name(const dmlc_vk_device *dev);

/* A text listing of every physical device with the features dmlc uses (for
 * `dmlc devices`); malloc'ed. DMLC_ERROR_DEVICE when there is no Vulkan. */
dmlc_status dmlc_vk_describe_devices(char **out_text, dmlc_diag *diag);

/* Compiles every kernel of plan into a pipeline and allocates the buffers
 * of the graph's inputs (input_bytes[i]), outputs (output_bytes[i]) and the
 * plan's temporaries. */
dmlc_status dmlc_vk_executable_create(dmlc_vk_device *dev, const dmlc_kernel_plan *plan,
                                      const uint64_t *input_bytes, uint32_t num_inputs,
                                      const uint64_t *output_bytes, uint32_t num_outputs,
                                      dmlc_vk_executable **out, dmlc_diag *diag);
void dmlc_vk_executable_destroy(dmlc_vk_executable *exe);
/* Runs every kernel in order and waits. With host buffers (every binding's
 * host set) it uploads the inputs (and the outputs' current bytes, so
 * padding the kernels do not write stays as it was) to the executable's own
 * buffers first and downloads the outputs after. With tensors (every
 * binding's tensor a dmlc_vk_tensor of this device) it binds them in place:
 * nothing is copied. The bindings are checked by the API. */
dmlc_status dmlc_vk_execute(dmlc_vk_executable *exe, const dmlc_rt_binding *inputs,
                            const dmlc_rt_binding *outputs, dmlc_diag *diag);
/* The memory an executable owns (its buffers' and their staging
 * buffers'), one entry per allocation: where the host maps it (NULL: not
 * mapped), its bytes, and whether the compile touched every page of it
 * (written from the host where mapped, else filled on the device), so that
 * the first execute does not pay for faulting it in. Returns how many
 * there are and fills at most max of them. For tests. */
typedef struct dmlc_vk_memory_info {
  const void *host;
  uint64_t bytes;
  bool touched;
} dmlc_vk_memory_info;
uint32_t dmlc_vk_executable_memory(const dmlc_vk_executable *exe, dmlc_vk_memory_info *out,
                                   uint32_t max);
/* How many kernels the device has compiled (its cache's misses). */
uint64_t dmlc_vk_device_compile_count(const dmlc_vk_device *dev);

/* A tensor: device-local memory (host-visible where the device has no
 * other), zeroed. Write and read map it where the host can, else copy
 * through a staging buffer and wait. */
dmlc_status dmlc_vk_tensor_create(dmlc_vk_device *dev, uint64_t bytes, dmlc_vk_tensor **out,
                                  dmlc_diag *diag);
dmlc_status dmlc_vk_tensor_write(dmlc_vk_tensor *t, uint64_t offset, const void *src, uint64_t size,
                                 dmlc_diag *diag);
dmlc_status dmlc_vk_tensor_read(const dmlc_vk_tensor *t, uint64_t offset, void *dst, uint64_t size,
                                dmlc_diag *diag);
void dmlc_vk_tensor_destroy(dmlc_vk_tensor *t);
/* GPU time of each kernel in the last execute, from timestamp queries, in
 * nanoseconds (0 where the device has no timestamps, or the execute ran
 * with profiling off). */
uint32_t dmlc_vk_kernel_times(const dmlc_vk_executable *exe, double *ns, uint32_t max);
/* Whether later executes write timestamps (on at creation). */
void dmlc_vk_set_profiling(dmlc_vk_executable *exe, bool on);
/* A module built outside the compiler (bench_vulkan's bandwidth probe):
 * binding 0 a read-only storage buffer, bound window by window, binding 1
 * a storage buffer bound whole, a push constant of one uint32. Its
 * pipeline and descriptor sets are made by create; run records, submits
 * and waits. */
typedef struct dmlc_vk_program dmlc_vk_program;
dmlc_status dmlc_vk_program_create(dmlc_vk_device *dev, const uint32_t *words, size_t num_words,
                                   uint32_t local_size, uint32_t max_windows, dmlc_vk_program **out,
                                   dmlc_diag *diag);
/* windows dispatches of groups workgroups each, timed together by two
 * timestamps (*ns, 0 without timestamps): dispatch w binds binding 0 to
 * bytes [w * window_bytes, (w + 1) * window_bytes) of in (the last window
 * cut at in's end), binding 1 to out, and pushes w * groups. */
dmlc_status dmlc_vk_program_run(dmlc_vk_program *p, const dmlc_vk_tensor *in, uint64_t window_bytes,
                                uint32_t windows, const dmlc_vk_tensor *out, uint32_t groups,
                                double *ns, dmlc_diag *diag);
void dmlc_vk_program_destroy(dmlc_vk_program *p);
/* The tensor's size in bytes (rounded up to a word), and its device. */
uint64_t dmlc_vk_tensor_size(const dmlc_vk_tensor *t);
dmlc_vk_device *dmlc_vk_tensor_device(const dmlc_vk_tensor *t);

/* The disassembly of every kernel's SPIR-V; malloc'ed. */
dmlc_status dmlc_vk_disassemble(const dmlc_vk_executable *exe, char **out_text, dmlc_diag *diag);
/* what: "kernels" (each kernel's description, workgroup size and count) or
 * "spirv" (dmlc_vk_disassemble); malloc'ed. */
dmlc_status dmlc_vk_executable_dump(const dmlc_vk_executable *exe, const char *what,
                                    char **out_text, dmlc_diag *diag);

#endif
