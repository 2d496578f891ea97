/* Kernel descriptions -> SPIR-V compute modules, emitted by dmlc itself;
 * validation, optimization and disassembly through SPIRV-Tools. */
#ifndef DMLC_CODEGEN_SPIRV_SPIRV_H
#define DMLC_CODEGEN_SPIRV_SPIRV_H

#include "codegen/kernel_desc.h"

/* What the device offers that code generation may use. */
typedef struct dmlc_spirv_caps {
  uint32_t max_workgroup_size; /* min(maxComputeWorkGroupSize[0], maxComputeWorkGroupInvocations) */
  uint32_t max_workgroup_count; /* maxComputeWorkGroupCount[0] */
  uint32_t max_shared_bytes;    /* maxComputeSharedMemorySize */
  uint32_t subgroup_size;       /* 0: no subgroup operations in compute */
  bool subgroup_arithmetic;     /* VK_SUBGROUP_FEATURE_ARITHMETIC_BIT */
  bool subgroup_shuffle;        /* VK_SUBGROUP_FEATURE_SHUFFLE_BIT */
  bool shader_int64, shader_int16, shader_int8, shader_float16;
  bool storage_8bit;  /* storageBuffer8BitAccess */
  bool storage_16bit; /* storageBuffer16BitAccess */
  /* maxStorageBufferRange; 0: unlimited. A buffer whose extent exceeds it is
   * bound as several windows (dmlc_spirv_binding). */
  uint64_t max_storage_range;
  /* shaderStorageBufferArrayDynamicIndexing and
   * shaderStorageBufferArrayNonUniformIndexing, both: windows are indexed
   * per invocation. Without them each access to a windowed buffer switches
   * over constant window indices (no feature needed; a branch per access). */
  bool storage_buffer_array_nonuniform;
  /* min(maxPerStageDescriptorStorageBuffers, maxDescriptorSetStorageBuffers);
   * 0: not checked. A module needing more descriptors is
   * DMLC_ERROR_UNSUPPORTED. */
  uint32_t max_storage_buffers;
  /* Workgroups that keep the whole device busy (vk_device.c derives it from
   * the compute units the device reports, the subgroup size and
   * maxComputeWorkGroupCount); 0: never split. A reduction with fewer kept
   * points than this splits each reduced range across workgroups
   * (dmlc_spirv_module.split). */
  uint32_t fill_groups;
  /* Split every reduction of two or more reduced points into a few parts
   * (DMLC_VULKAN_FORCE_SPLIT=1): tests run the split's code on small
   * inputs. */
  bool force_split;
  /* VK_PHYSICAL_DEVICE_TYPE_CPU (lavapipe): invocations are a CPU core's
   * SIMD lanes, and a workgroup's barriers and subgroup operations cost
   * more than the lanes reading rows of their own. */
  bool cpu_device;
  /* The runtime zero-fills the outputs a module lists in zero_fill before
   * its first dispatch (dmlc's Vulkan runtime: vkCmdFillBuffer). Without it
   * (modules for other drivers: dmlc compile) every module writes every
   * output element itself. */
  bool fill_zeros;
} dmlc_spirv_caps;

/* Caps every Vulkan 1.2 compute device has: the portable fallback paths. */
dmlc_spirv_caps dmlc_spirv_caps_minimal(void);

/* How one binding's buffer is bound. A buffer whose extent (the bytes the
 * kernel can touch, from offset 0, rounded up to 4) fits the device's
 * max_storage_range is one descriptor (count 1, window_bytes 0) covering
 * the buffer (or its first max_storage_range bytes: nothing beyond the
 * extent is touched). A larger one is an array of count descriptors
 * (VkDescriptorSetLayoutBinding.descriptorCount = count), descriptor j
 * bound at offset j * window_bytes with range min(window_bytes, buffer size
 * - j * window_bytes). window_bytes is a power of two <= max_storage_range
 * (and >= 256 unless the range is smaller, so any offset alignment a real
 * device asks for divides it); count * window_bytes may exceed the buffer:
 * then the last window is shorter, or (padding of the extent to words
 * aside) never shorter than what the kernel touches. */
typedef struct dmlc_spirv_binding {
  uint32_t count;
  uint64_t window_bytes;
} dmlc_spirv_binding;

/* One compute shader. Descriptor set 0: binding 0 the read buffer (always
 * declared; bound to a dummy when the kernel has no read), binding 1 + i
 * output i, all storage buffers, each as bindings[b] says. A push constant
 * block holds one uint32, the workgroup offset: the runtime dispatches
 * num_groups workgroups in chunks of at most max_workgroup_count, passing
 * each chunk's first group; groups whose index (offset + WorkgroupId.x)
 * is num_groups or more do nothing, so a runtime may dispatch one group
 * with offset UINT32_MAX to have the driver compile the pipeline before
 * its first real use. A module with nonuniform_indexing declares
 * ShaderNonUniform and StorageBufferArrayNonUniformIndexing: the device
 * must have been created with shaderStorageBufferArrayDynamicIndexing and
 * shaderStorageBufferArrayNonUniformIndexing enabled (it has windows and was
 * compiled with the caps' storage_buffer_array_nonuniform). Windows
 * otherwise need no feature. */
typedef struct dmlc_spirv_module {
  uint32_t *words;
  size_t num_words;
  uint32_t local_size; /* workgroup size (x) */
  uint64_t num_groups; /* workgroups to dispatch in all */
  bool lone_rows;      /* an invocation per kept point (a CPU device) */
  uint32_t lone_runs;  /* lone rows: kept points an invocation takes, run by run (0: 1) */
  uint32_t num_bindings;
  dmlc_spirv_binding bindings[1 + DMLC_KDESC_MAX_OUTPUTS];
  bool nonuniform_indexing; /* needs the non-uniform indexing features (above) */
  /* A split reduction (split_parts > 1): each kept point's reduced range is
   * cut into split_parts parts of split_len points (the last one shorter),
   * one workgroup each. words writes each part's winner, 16 bytes (key
   * words, index) per part, to a temporary of partial_bytes bytes at
   * binding num_bindings (one more descriptor, count 1, not in bindings[]);
   * then finish_words, dispatched after a compute-to-compute barrier with
   * the same descriptor set, local size and push constant, runs
   * finish_groups workgroups that merge each kept point's parts (the
   * (key, index) order makes the merge exact in any order) and write the
   * outputs. A fused finish (finish_words NULL, finish_groups 0) needs no
   * second dispatch: the last part of each kept point to finish, counted
   * by an atomic counter per kept point at byte counters_offset of the
   * partials (kept words, which the runtime zeroes once, before the first
   * dispatch; the last part sets its counter back to 0), merges the parts
   * and writes the outputs. */
  uint32_t split_parts;
  uint32_t split_len;
  uint64_t partial_bytes;
  uint64_t counters_offset; /* a fused finish's counters; 0 without */
  /* Outputs (bit i: output i, binding 1 + i) whose first
   * zero_fill_bytes[i] bytes (the whole output, a multiple of 4) the
   * runtime sets to 0 before words' dispatch (caps.fill_zeros only): vector
   * column parts leave hardmax's 0s to it and the finish writes the 1s. */
  uint32_t zero_fill;
  uint64_t zero_fill_bytes[DMLC_KDESC_MAX_OUTPUTS];
  uint32_t *finish_words;
  size_t finish_num_words;
  uint64_t finish_groups;
} dmlc_spirv_module;

/* Emits, validates (a failure is DMLC_ERROR_INTERNAL carrying the
 * validator's message) and optimizes (keeping the unoptimized module if the
 * optimizer fails) the shader for k. */
dmlc_status dmlc_spirv_compile(const dmlc_kdesc *k, const dmlc_spirv_caps *caps,
                               dmlc_spirv_module *out, dmlc_diag *diag);
void dmlc_spirv_module_free(dmlc_spirv_module *m);

/* SPIRV-Tools, target environment Vulkan 1.2 (spirv_tools.c: the one C file
 * that includes libspirv.h). */
dmlc_status dmlc_spirv_validate(const uint32_t *words, size_t num_words, dmlc_diag *diag);
dmlc_status dmlc_spirv_disassemble(const uint32_t *words, size_t num_words, char **out_text,
                                   dmlc_diag *diag);
/* spirv_opt.cpp: the optimizer's performance passes. False (and *out
 * untouched) when it fails; the caller then keeps the input. *out is
 * malloc'ed. */
bool dmlc_spirv_optimize(const uint32_t *words, size_t num_words, uint32_t **out,
                         size_t *out_num_words);

#endif
