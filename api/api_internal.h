/* The objects behind the public handles. */
#ifndef DMLC_API_INTERNAL_H
#define DMLC_API_INTERNAL_H

#include "frontend/frontend.h"
#include "ir/ir.h"
#include "runtime/cpu/cpu_device.h"

/* The Vulkan runtime's objects (runtime/vulkan/vk_device.h; built when
 * DMLC_HAVE_VULKAN is defined, and then only reached through api/vulkan.c). */
struct dmlc_vk_device;
struct dmlc_vk_executable;

struct dmlc_context {
  dmlc_diag diag; /* the last failed call's message */
  /* Created by the first CPU compile (or query), so a context that never
   * uses the CPU never initializes LLVM. Owns the JIT, the thread pool and
   * the kernel cache. */
  dmlc_cpu_device *cpu;
  uint32_t num_threads; /* for the CPU device; 0 = the online cores */
  /* Opened by the first Vulkan compile, so a context that never uses Vulkan
   * never loads the Vulkan loader. Owns the instance, the device and its
   * kernel cache. */
  struct dmlc_vk_device *vulkan;
};

struct dmlc_graph {
  dmlc_context *ctx;
  dmlc_ir_graph *ir;
  /* For values produced by operators added through the descriptor API: the
   * layout their OutputTensor descriptor gave, used by dmlc_graph_add_output. */
  dmlc_layout *result_layouts;
  bool *has_result_layout;
  uint32_t cap_layouts;
};

struct dmlc_executable {
  dmlc_context *ctx;
  dmlc_device device;                /* the device it runs on (never DEFAULT) */
  dmlc_ir_graph *ir;                 /* the graph as compiled (before passes), owned */
  dmlc_cpu_executable *cpu;          /* DMLC_DEVICE_CPU */
  struct dmlc_vk_executable *vulkan; /* DMLC_DEVICE_VULKAN */
};

/* The context's CPU device, created on first use. */
dmlc_status dmlc_context_cpu_device(dmlc_context *ctx, dmlc_cpu_device **out);
/* A copy of exe's graph after the default pipeline (the code-generating
 * devices compile that; exe->ir stays as given for bindings and infos). */
dmlc_status dmlc_api_fused_copy(const dmlc_executable *exe, dmlc_ir_graph **out);

/* ---- the Vulkan device (api/vulkan.c) ----
 * Without DMLC_HAVE_VULKAN each answers DMLC_ERROR_UNSUPPORTED (or does
 * nothing). */
/* Compiles exe->ir (a copy of it, after the default pipeline) for the
 * context's Vulkan device, opening the device on first use. */
dmlc_status dmlc_api_vulkan_compile(dmlc_executable *exe);
/* Buffers already checked by the API. */
dmlc_status dmlc_api_vulkan_execute(dmlc_executable *exe, const dmlc_buffer *inputs,
                                    const dmlc_buffer *outputs);
dmlc_status dmlc_api_vulkan_dump(const dmlc_executable *exe, const char *what, char **out_text);
/* Kernel count; fills ns[0..max) with the last execute's GPU times. */
size_t dmlc_api_vulkan_kernel_times(const dmlc_executable *exe, double *ns, size_t max);
/* Every physical device with the features dmlc uses. */
dmlc_status dmlc_api_vulkan_describe(dmlc_context *ctx, char **out_text);
void dmlc_api_vulkan_executable_destroy(dmlc_executable *exe);
void dmlc_api_vulkan_context_destroy(dmlc_context *ctx);

#endif
