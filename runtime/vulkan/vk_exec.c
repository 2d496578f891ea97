/* See vk_device.h. Executables: the device's kernel cache (SPIR-V, shader
 * module and pipeline per kernel description), buffers, descriptor sets and
 * one command buffer recorded at creation and submitted by each execute. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "ir/array.h"
#include "ir/strbuf.h"
#include "runtime/kernel_cache.h"
#include "runtime/vulkan/vk_internal.h"

static void barrier(const dmlc_vk_fns *fn, VkCommandBuffer cmd, VkPipelineStageFlags src_stage,
                    VkAccessFlags src, VkPipelineStageFlags dst_stage, VkAccessFlags dst) {
  const VkMemoryBarrier b = {
      .sType = VK_STRUCTURE_TYPE_MEMORY_BARRIER,
      .srcAccessMask = src,
      .dstAccessMask = dst,
  };
  fn->vkCmdPipelineBarrier(cmd, src_stage, dst_stage, 0, 1, &b, 0, NULL, 0, NULL);
}

/* A descriptor pool for max_sets sets of storage-buffer descriptors in all. */
static dmlc_status pool_create(dmlc_vk_device *dev, uint32_t max_sets, uint32_t descriptors,
                               VkDescriptorPool *out, dmlc_diag *diag) {
  const VkDescriptorPoolSize size = {VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, descriptors};
  const VkDescriptorPoolCreateInfo pool = {
      .sType = VK_STRUCTURE_TYPE_DESCRIPTOR_POOL_CREATE_INFO,
      .maxSets = max_sets,
      .poolSizeCount = 1,
      .pPoolSizes = &size,
  };
  DMLC_VK_CHECK(diag, dev->inst.fn.vkCreateDescriptorPool(dev->device, &pool, NULL, out),
                "vkCreateDescriptorPool");
  return DMLC_OK;
}

static dmlc_status set_alloc(dmlc_vk_device *dev, VkDescriptorPool pool,
                             VkDescriptorSetLayout layout, VkDescriptorSet *out, dmlc_diag *diag) {
  const VkDescriptorSetAllocateInfo alloc = {
      .sType = VK_STRUCTURE_TYPE_DESCRIPTOR_SET_ALLOCATE_INFO,
      .descriptorPool = pool,
      .descriptorSetCount = 1,
      .pSetLayouts = &layout,
  };
  DMLC_VK_CHECK(diag, dev->inst.fn.vkAllocateDescriptorSets(dev->device, &alloc, out),
                "vkAllocateDescriptorSets");
  return DMLC_OK;
}

static dmlc_status command_alloc(dmlc_vk_device *dev, VkCommandBuffer *out, dmlc_diag *diag) {
  const VkCommandBufferAllocateInfo alloc = {
      .sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO,
      .commandPool = dev->command_pool,
      .level = VK_COMMAND_BUFFER_LEVEL_PRIMARY,
      .commandBufferCount = 1,
  };
  DMLC_VK_CHECK(diag, dev->inst.fn.vkAllocateCommandBuffers(dev->device, &alloc, out),
                "vkAllocateCommandBuffers");
  return DMLC_OK;
}

/* Nanoseconds between two timestamps the device wrote. */
static double timestamp_ns(const dmlc_vk_device *dev, uint64_t t0, uint64_t t1) {
  const uint64_t mask =
      dev->timestamp_valid_bits >= 64 ? UINT64_MAX : ((uint64_t)1 << dev->timestamp_valid_bits) - 1;
  return (double)((t1 - t0) & mask) * (double)dev->props.limits.timestampPeriod;
}

/* Commands recorded into a one-time command buffer. */
typedef void (*record_fn)(const dmlc_vk_fns *fn, VkCommandBuffer cmd, const void *arg);

/* Records (record) into cmd, submits it with fence and waits for it. */
static dmlc_status record_submit_wait(dmlc_vk_device *dev, VkCommandBuffer cmd, VkFence fence,
                                      record_fn record, const void *arg, dmlc_diag *diag) {
  const dmlc_vk_fns *fn = &dev->inst.fn;
  const VkCommandBufferBeginInfo begin = {
      .sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO,
      .flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT,
  };
  DMLC_VK_CHECK(diag, fn->vkBeginCommandBuffer(cmd, &begin), "vkBeginCommandBuffer");
  record(fn, cmd, arg);
  DMLC_VK_CHECK(diag, fn->vkEndCommandBuffer(cmd), "vkEndCommandBuffer");
  const VkSubmitInfo submit = {
      .sType = VK_STRUCTURE_TYPE_SUBMIT_INFO,
      .commandBufferCount = 1,
      .pCommandBuffers = &cmd,
  };
  DMLC_VK_CHECK(diag, fn->vkQueueSubmit(dev->queue, 1, &submit, fence), "vkQueueSubmit");
  DMLC_VK_CHECK(diag, fn->vkWaitForFences(dev->device, 1, &fence, VK_TRUE, UINT64_MAX),
                "vkWaitForFences");
  return DMLC_OK;
}

/* Records (record), submits and waits for one command buffer outside any
 * executable: tensor copies through staging, a kernel's warm-up, programs. */
static dmlc_status submit_once(dmlc_vk_device *dev, record_fn record, const void *arg,
                               dmlc_diag *diag) {
  const dmlc_vk_fns *fn = &dev->inst.fn;
  VkCommandBuffer cmd = VK_NULL_HANDLE;
  VkFence fence = VK_NULL_HANDLE;
  const VkFenceCreateInfo info = {.sType = VK_STRUCTURE_TYPE_FENCE_CREATE_INFO};
  dmlc_status st = command_alloc(dev, &cmd, diag);
  if (st == DMLC_OK) {
    const VkResult r = fn->vkCreateFence(dev->device, &info, NULL, &fence);
    if (r != VK_SUCCESS)
      st = dmlc_vk_fail(diag, r, "vkCreateFence");
  }
  if (st == DMLC_OK)
    st = record_submit_wait(dev, cmd, fence, record, arg, diag);
  if (fence)
    fn->vkDestroyFence(dev->device, fence, NULL);
  if (cmd)
    fn->vkFreeCommandBuffers(dev->device, dev->command_pool, 1, &cmd);
  return st;
}

/* ---- buffers ---- */

/* One device buffer. Graph inputs and outputs are reached from the host
 * either by mapping the buffer itself (host-visible memory: lavapipe,
 * integrated GPUs) or through a staging buffer copied on the device. */
typedef struct vk_buffer {
  VkBuffer buffer;
  VkDeviceMemory memory;
  void *mapped; /* the buffer's own memory, when host-visible */
  VkBuffer staging;
  VkDeviceMemory staging_memory;
  void *staging_mapped;
  VkDeviceSize bytes; /* what the host exchanges */
  VkDeviceSize size;  /* the buffer's size: bytes rounded up to a word */
  /* Whether buffer_prefault touched the buffer's memory and the staging's
   * (dmlc_vk_executable_memory). */
  bool touched, staging_touched;
} vk_buffer;

static uint32_t memory_type(const dmlc_vk_device *dev, uint32_t allowed,
                            VkMemoryPropertyFlags required, VkMemoryPropertyFlags preferred) {
  uint32_t fallback = UINT32_MAX;
  for (uint32_t i = 0; i < dev->memory.memoryTypeCount; i++) {
    const VkMemoryPropertyFlags flags = dev->memory.memoryTypes[i].propertyFlags;
    if (!(allowed & (1u << i)) || (flags & required) != required)
      continue;
    if ((flags & preferred) == preferred)
      return i;
    if (fallback == UINT32_MAX)
      fallback = i;
  }
  return fallback;
}

static dmlc_status buffer_bind(dmlc_vk_device *dev, VkDeviceSize size, VkBufferUsageFlags usage,
                               bool device_local, VkBuffer *buffer, VkDeviceMemory *memory,
                               void **mapped, dmlc_diag *diag) {
  const dmlc_vk_fns *fn = &dev->inst.fn;
  const VkBufferCreateInfo info = {
      .sType = VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO,
      .size = size,
      .usage = usage,
      .sharingMode = VK_SHARING_MODE_EXCLUSIVE,
  };
  DMLC_VK_CHECK(diag, fn->vkCreateBuffer(dev->device, &info, NULL, buffer), "vkCreateBuffer");
  VkMemoryRequirements req;
  fn->vkGetBufferMemoryRequirements(dev->device, *buffer, &req);
  const VkMemoryPropertyFlags host =
      VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT;
  /* Device buffers: the first device-local type (drivers list the fastest
   * first), else any host-visible one. Staging: host-visible, cached for
   * fast downloads where possible. */
  uint32_t type =
      device_local ? memory_type(dev, req.memoryTypeBits, VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT, 0)
                   : memory_type(dev, req.memoryTypeBits, host, VK_MEMORY_PROPERTY_HOST_CACHED_BIT);
  if (type == UINT32_MAX)
    type = memory_type(dev, req.memoryTypeBits, host, 0);
  if (type == UINT32_MAX)
    return dmlc_diag_set(diag, DMLC_ERROR_DEVICE,
                         "Vulkan: no memory type for a buffer of %" PRIu64 " bytes",
                         (uint64_t)size);
  const VkMemoryAllocateInfo alloc = {
      .sType = VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO,
      .allocationSize = req.size,
      .memoryTypeIndex = type,
  };
  DMLC_VK_CHECK(diag, fn->vkAllocateMemory(dev->device, &alloc, NULL, memory), "vkAllocateMemory");
  DMLC_VK_CHECK(diag, fn->vkBindBufferMemory(dev->device, *buffer, *memory, 0),
                "vkBindBufferMemory");
  *mapped = NULL;
  const VkMemoryPropertyFlags flags = dev->memory.memoryTypes[type].propertyFlags;
  if ((flags & host) == host && !(device_local && dev->unmapped))
    DMLC_VK_CHECK(diag, fn->vkMapMemory(dev->device, *memory, 0, VK_WHOLE_SIZE, 0, mapped),
                  "vkMapMemory");
  return DMLC_OK;
}

/* host_io: the host uploads to or downloads from it (graph inputs and
 * outputs); then it is mapped, or gets a staging buffer. */
static dmlc_status buffer_create(dmlc_vk_device *dev, uint64_t bytes, bool host_io, vk_buffer *b,
                                 dmlc_diag *diag) {
  b->bytes = bytes;
  b->size = bytes < 4 ? 4 : (bytes + 3) & ~(uint64_t)3;
  if (b->size < bytes)
    return dmlc_diag_set(diag, DMLC_ERROR_OUT_OF_MEMORY, "Vulkan: a buffer of %" PRIu64 " bytes",
                         bytes);
  const VkBufferUsageFlags usage = VK_BUFFER_USAGE_STORAGE_BUFFER_BIT |
                                   VK_BUFFER_USAGE_TRANSFER_SRC_BIT |
                                   VK_BUFFER_USAGE_TRANSFER_DST_BIT;
  DMLC_RETURN_IF_ERROR(
      buffer_bind(dev, b->size, usage, true, &b->buffer, &b->memory, &b->mapped, diag));
  if (!host_io || b->mapped)
    return DMLC_OK;
  return buffer_bind(dev, b->size,
                     VK_BUFFER_USAGE_TRANSFER_SRC_BIT | VK_BUFFER_USAGE_TRANSFER_DST_BIT, false,
                     &b->staging, &b->staging_memory, &b->staging_mapped, diag);
}

static void buffer_destroy(dmlc_vk_device *dev, vk_buffer *b) {
  const dmlc_vk_fns *fn = &dev->inst.fn;
  if (b->staging)
    fn->vkDestroyBuffer(dev->device, b->staging, NULL);
  if (b->staging_memory)
    fn->vkFreeMemory(dev->device, b->staging_memory, NULL); /* unmaps */
  if (b->buffer)
    fn->vkDestroyBuffer(dev->device, b->buffer, NULL);
  if (b->memory)
    fn->vkFreeMemory(dev->device, b->memory, NULL);
}

/* Where the host reads and writes b. */
static void *buffer_host(const vk_buffer *b) { return b->mapped ? b->mapped : b->staging_mapped; }

/* Writes a zero into every page of [p, p + size), mapped memory whose
 * content nothing relies on yet: the OS maps fresh memory in on its first
 * write, page by page (a 256 MiB buffer: 65536 faults, about 100 ms on
 * lavapipe), and this makes that happen now rather than in the first
 * execute. */
static void host_touch(void *p, VkDeviceSize size) {
  const long page_size = sysconf(_SC_PAGESIZE);
  const VkDeviceSize page = page_size > 0 ? (VkDeviceSize)page_size : 4096;
  unsigned char *c = p;
  if (!c || size == 0)
    return;
  for (VkDeviceSize off = 0; off < size; off += page)
    c[off] = 0;
  c[size - 1] = 0;
}

/* Touches the memory of b that the host maps (its own, else its
 * staging's); returns whether its own memory needs a fill on the device
 * instead. */
static bool buffer_prefault(vk_buffer *b) {
  if (b->mapped) {
    host_touch(b->mapped, b->size);
    b->touched = true;
  }
  if (b->staging_mapped) {
    host_touch(b->staging_mapped, b->size);
    b->staging_touched = true;
  }
  return b->buffer && !b->mapped;
}

/* ---- the kernel cache ---- */

typedef struct vk_kernel {
  dmlc_vk_device *dev;
  const char *key; /* the cache's */
  dmlc_spirv_module module;
  VkShaderModule shader;
  VkDescriptorSetLayout set_layout;
  VkPipelineLayout layout;
  VkPipeline pipeline;
  /* A split reduction's finish (module.split_parts > 1), after pipeline. */
  VkShaderModule finish_shader;
  VkPipeline finish_pipeline;
} vk_kernel;

/* Descriptors of a kernel's set: its bindings', and the split's partials. */
static uint32_t kernel_bindings(const vk_kernel *k) {
  return k->module.num_bindings + (k->module.split_parts > 1);
}

/* k's Vulkan objects and module (not k). */
static void kernel_release(vk_kernel *k) {
  dmlc_vk_device *dev = k->dev;
  const dmlc_vk_fns *fn = &dev->inst.fn;
  if (k->pipeline)
    fn->vkDestroyPipeline(dev->device, k->pipeline, NULL);
  if (k->finish_pipeline)
    fn->vkDestroyPipeline(dev->device, k->finish_pipeline, NULL);
  if (k->finish_shader)
    fn->vkDestroyShaderModule(dev->device, k->finish_shader, NULL);
  if (k->layout)
    fn->vkDestroyPipelineLayout(dev->device, k->layout, NULL);
  if (k->set_layout)
    fn->vkDestroyDescriptorSetLayout(dev->device, k->set_layout, NULL);
  if (k->shader)
    fn->vkDestroyShaderModule(dev->device, k->shader, NULL);
  dmlc_spirv_module_free(&k->module);
}

static void kernel_free(vk_kernel *k) {
  if (!k)
    return;
  kernel_release(k);
  free(k);
}

void dmlc_vk_kernel_cache_destroy(dmlc_vk_device *dev) {
  dmlc_kernel_cache_destroy(dev->kernels);
  dev->kernels = NULL;
}

uint64_t dmlc_vk_device_compile_count(const dmlc_vk_device *dev) {
  return dev->kernels ? dmlc_kernel_cache_misses(dev->kernels) : 0;
}

/* A shader module and its compute pipeline on k's layout. */
static dmlc_status stage_pipeline(dmlc_vk_device *dev, const vk_kernel *k, const uint32_t *words,
                                  size_t num_words, VkShaderModule *shader, VkPipeline *out,
                                  dmlc_diag *diag) {
  const dmlc_vk_fns *fn = &dev->inst.fn;
  const VkShaderModuleCreateInfo info = {
      .sType = VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO,
      .codeSize = num_words * sizeof(uint32_t),
      .pCode = words,
  };
  DMLC_VK_CHECK(diag, fn->vkCreateShaderModule(dev->device, &info, NULL, shader),
                "vkCreateShaderModule");
  /* The code was generated for caps.subgroup_size; require it where the
   * device could otherwise pick another. */
  const VkPipelineShaderStageRequiredSubgroupSizeCreateInfo subgroup = {
      .sType = VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_REQUIRED_SUBGROUP_SIZE_CREATE_INFO,
      .requiredSubgroupSize = dev->caps.subgroup_size,
  };
  const bool pin =
      dev->pin_subgroup_size && dev->caps.subgroup_size &&
      k->module.local_size <= (uint64_t)dev->max_subgroups_per_workgroup * dev->caps.subgroup_size;
  const VkComputePipelineCreateInfo pipeline = {
      .sType = VK_STRUCTURE_TYPE_COMPUTE_PIPELINE_CREATE_INFO,
      .stage =
          {
              .sType = VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO,
              .pNext = pin ? &subgroup : NULL,
              .stage = VK_SHADER_STAGE_COMPUTE_BIT,
              .module = *shader,
              .pName = "main",
          },
      .layout = k->layout,
  };
  DMLC_VK_CHECK(
      diag, fn->vkCreateComputePipelines(dev->device, dev->pipeline_cache, 1, &pipeline, NULL, out),
      "vkCreateComputePipelines");
  return DMLC_OK;
}

static dmlc_status kernel_pipeline(dmlc_vk_device *dev, vk_kernel *k, dmlc_diag *diag) {
  const dmlc_vk_fns *fn = &dev->inst.fn;
  VkDescriptorSetLayoutBinding bindings[2 + DMLC_KDESC_MAX_OUTPUTS];
  const uint32_t n = kernel_bindings(k);
  for (uint32_t i = 0; i < n; i++)
    bindings[i] = (VkDescriptorSetLayoutBinding){
        .binding = i,
        .descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER,
        .descriptorCount = i < k->module.num_bindings ? k->module.bindings[i].count : 1,
        .stageFlags = VK_SHADER_STAGE_COMPUTE_BIT,
    };
  const VkDescriptorSetLayoutCreateInfo set = {
      .sType = VK_STRUCTURE_TYPE_DESCRIPTOR_SET_LAYOUT_CREATE_INFO,
      .bindingCount = n,
      .pBindings = bindings,
  };
  DMLC_VK_CHECK(diag, fn->vkCreateDescriptorSetLayout(dev->device, &set, NULL, &k->set_layout),
                "vkCreateDescriptorSetLayout");
  const VkPushConstantRange push = {
      .stageFlags = VK_SHADER_STAGE_COMPUTE_BIT,
      .size = sizeof(uint32_t),
  };
  const VkPipelineLayoutCreateInfo layout = {
      .sType = VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO,
      .setLayoutCount = 1,
      .pSetLayouts = &k->set_layout,
      .pushConstantRangeCount = 1,
      .pPushConstantRanges = &push,
  };
  DMLC_VK_CHECK(diag, fn->vkCreatePipelineLayout(dev->device, &layout, NULL, &k->layout),
                "vkCreatePipelineLayout");
  DMLC_RETURN_IF_ERROR(
      stage_pipeline(dev, k, k->module.words, k->module.num_words, &k->shader, &k->pipeline, diag));
  if (k->module.split_parts > 1 && k->module.finish_words)
    DMLC_RETURN_IF_ERROR(stage_pipeline(dev, k, k->module.finish_words, k->module.finish_num_words,
                                        &k->finish_shader, &k->finish_pipeline, diag));
  return DMLC_OK;
}

typedef struct warm_arg {
  const vk_kernel *k;
  VkDescriptorSet set;
} warm_arg;

static void record_warm(const dmlc_vk_fns *fn, VkCommandBuffer cmd, const void *arg) {
  const warm_arg *w = arg;
  const uint32_t past = UINT32_MAX;
  fn->vkCmdBindDescriptorSets(cmd, VK_PIPELINE_BIND_POINT_COMPUTE, w->k->layout, 0, 1, &w->set, 0,
                              NULL);
  fn->vkCmdPushConstants(cmd, w->k->layout, VK_SHADER_STAGE_COMPUTE_BIT, 0, sizeof past, &past);
  fn->vkCmdBindPipeline(cmd, VK_PIPELINE_BIND_POINT_COMPUTE, w->k->pipeline);
  fn->vkCmdDispatch(cmd, 1, 1, 1);
  if (w->k->finish_pipeline) {
    /* Nothing is written, but validation cannot know. */
    barrier(fn, cmd, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, VK_ACCESS_SHADER_WRITE_BIT,
            VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT,
            VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT);
    fn->vkCmdBindPipeline(cmd, VK_PIPELINE_BIND_POINT_COMPUTE, w->k->finish_pipeline);
    fn->vkCmdDispatch(cmd, 1, 1, 1);
  }
}

/* kernel_warm's work; the caller frees *pool, *infos and *dummy. */
static dmlc_status warm_run(dmlc_vk_device *dev, const vk_kernel *k, vk_buffer *dummy,
                            VkDescriptorPool *pool, VkDescriptorBufferInfo **infos,
                            dmlc_diag *diag) {
  const uint32_t n = kernel_bindings(k);
  uint32_t descriptors = 0;
  for (uint32_t b = 0; b < n; b++)
    descriptors += b < k->module.num_bindings ? k->module.bindings[b].count : 1;
  DMLC_RETURN_IF_ERROR(buffer_create(dev, 16, false, dummy, diag));
  if (!(*infos = calloc(descriptors, sizeof **infos)))
    return dmlc_diag_set(diag, DMLC_ERROR_OUT_OF_MEMORY, "out of memory compiling a kernel");
  DMLC_RETURN_IF_ERROR(pool_create(dev, 1, descriptors, pool, diag));
  warm_arg w = {k, VK_NULL_HANDLE};
  DMLC_RETURN_IF_ERROR(set_alloc(dev, *pool, k->set_layout, &w.set, diag));
  VkWriteDescriptorSet writes[2 + DMLC_KDESC_MAX_OUTPUTS];
  uint32_t first = 0;
  for (uint32_t b = 0; b < n; b++) {
    const uint32_t count = b < k->module.num_bindings ? k->module.bindings[b].count : 1;
    for (uint32_t j = 0; j < count; j++)
      (*infos)[first + j] = (VkDescriptorBufferInfo){dummy->buffer, 0, VK_WHOLE_SIZE};
    writes[b] = (VkWriteDescriptorSet){
        .sType = VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET,
        .dstSet = w.set,
        .dstBinding = b,
        .descriptorCount = count,
        .descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER,
        .pBufferInfo = &(*infos)[first],
    };
    first += count;
  }
  dev->inst.fn.vkUpdateDescriptorSets(dev->device, n, writes, 0, NULL);
  return submit_once(dev, record_warm, &w, diag);
}

/* Runs each of k's pipelines once on one workgroup that does nothing (its
 * index, UINT32_MAX, is past the module's groups), every descriptor on a
 * small dummy buffer: drivers that compile a pipeline's code on its first
 * dispatch (lavapipe: 10-20 ms) do it now, at compile time, not in the
 * first execute. */
static dmlc_status kernel_warm(dmlc_vk_device *dev, const vk_kernel *k, dmlc_diag *diag) {
  if (k->module.num_groups > UINT32_MAX || k->module.finish_groups > UINT32_MAX)
    return DMLC_OK; /* UINT32_MAX would be a real group */
  vk_buffer dummy = {0};
  VkDescriptorPool pool = VK_NULL_HANDLE;
  VkDescriptorBufferInfo *infos = NULL;
  const dmlc_status st = warm_run(dev, k, &dummy, &pool, &infos, diag);
  if (pool)
    dev->inst.fn.vkDestroyDescriptorPool(dev->device, pool, NULL);
  free(infos);
  buffer_destroy(dev, &dummy);
  return st;
}

static dmlc_status kernel_compile(void *user, const dmlc_kdesc *desc, const char *key, void **out,
                                  dmlc_diag *diag) {
  dmlc_vk_device *dev = user;
  vk_kernel *k = calloc(1, sizeof *k);
  if (!k)
    return dmlc_diag_set(diag, DMLC_ERROR_OUT_OF_MEMORY, "out of memory compiling a kernel");
  k->dev = dev;
  k->key = key;
  dmlc_status status = dmlc_spirv_compile(desc, &dev->caps, &k->module, diag);
  if (status == DMLC_OK &&
      (k->module.num_bindings != 1 + desc->num_outputs || k->module.local_size == 0 ||
       k->module.local_size > dev->caps.max_workgroup_size ||
       k->module.num_groups > (uint64_t)UINT32_MAX + 1 ||
       k->module.finish_groups > (uint64_t)UINT32_MAX + 1))
    status =
        dmlc_diag_set(diag, DMLC_ERROR_INTERNAL,
                      "Vulkan: kernel '%s' compiled to %" PRIu32 " bindings, workgroups of %" PRIu32
                      " and %" PRIu64 " groups, which this device cannot run",
                      key, k->module.num_bindings, k->module.local_size, k->module.num_groups);
  if (status == DMLC_OK)
    status = kernel_pipeline(dev, k, diag);
  if (status == DMLC_OK)
    status = kernel_warm(dev, k, diag);
  if (status != DMLC_OK) {
    kernel_free(k);
    return status;
  }
  *out = k;
  return DMLC_OK;
}

static void kernel_destroy(void *user, void *kernel) {
  (void)user;
  kernel_free(kernel);
}

/* The device's compiled kernel for desc, compiling it on first use. */
static dmlc_status kernel_get(dmlc_vk_device *dev, const dmlc_kdesc *desc, vk_kernel **out,
                              dmlc_diag *diag) {
  if (!dev->kernels) {
    const dmlc_kernel_cache_ops ops = {kernel_compile, kernel_destroy, dev};
    if (!(dev->kernels = dmlc_kernel_cache_create(&ops)))
      return dmlc_diag_set(diag, DMLC_ERROR_OUT_OF_MEMORY, "out of memory compiling a kernel");
  }
  void *k;
  DMLC_RETURN_IF_ERROR(dmlc_kernel_cache_get(dev->kernels, desc, &k, NULL, diag));
  *out = k;
  return DMLC_OK;
}

/* The descriptors of one binding (dmlc_spirv_binding): one covering the
 * buffer up to the device's maxStorageBufferRange, or count windows of
 * window_bytes, the last one cut at the buffer's end. A window wholly past
 * the end (the kernel never reaches it: the buffer holds at least the
 * binding's extent) points at the buffer's last window-aligned bytes, so
 * that every descriptor is valid. */
static void binding_infos(const dmlc_vk_device *dev, const dmlc_spirv_binding *binding,
                          const vk_buffer *b, VkDescriptorBufferInfo *infos) {
  const VkDeviceSize reach = dev->caps.max_storage_range;
  if (binding->count <= 1 || !binding->window_bytes) {
    infos[0] = (VkDescriptorBufferInfo){b->buffer, 0, b->size <= reach ? VK_WHOLE_SIZE : reach};
    return;
  }
  const VkDeviceSize window = binding->window_bytes;
  for (uint32_t j = 0; j < binding->count; j++) {
    VkDeviceSize offset = (VkDeviceSize)j * window;
    if (offset >= b->size)
      offset = (b->size - 1) / window * window;
    const VkDeviceSize left = b->size - offset;
    infos[j] = (VkDescriptorBufferInfo){b->buffer, offset, left < window ? left : window};
  }
}

typedef struct copy_arg {
  VkBuffer src, dst;
  VkBufferCopy region;
} copy_arg;

static void record_copy(const dmlc_vk_fns *fn, VkCommandBuffer cmd, const void *arg) {
  const copy_arg *c = arg;
  /* After whatever ran before on the queue, before the host reads. */
  barrier(fn, cmd, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT | VK_PIPELINE_STAGE_TRANSFER_BIT,
          VK_ACCESS_SHADER_WRITE_BIT | VK_ACCESS_TRANSFER_WRITE_BIT, VK_PIPELINE_STAGE_TRANSFER_BIT,
          VK_ACCESS_TRANSFER_READ_BIT | VK_ACCESS_TRANSFER_WRITE_BIT);
  fn->vkCmdCopyBuffer(cmd, c->src, c->dst, 1, &c->region);
  barrier(fn, cmd, VK_PIPELINE_STAGE_TRANSFER_BIT, VK_ACCESS_TRANSFER_WRITE_BIT,
          VK_PIPELINE_STAGE_HOST_BIT, VK_ACCESS_HOST_READ_BIT);
}

/* One buffer copy on the device (tensor copies through staging). */
static dmlc_status submit_copy(dmlc_vk_device *dev, VkBuffer src, VkDeviceSize src_offset,
                               VkBuffer dst, VkDeviceSize dst_offset, VkDeviceSize size,
                               dmlc_diag *diag) {
  const copy_arg c = {src, dst, {src_offset, dst_offset, size}};
  DMLC_RETURN_IF_ERROR(submit_once(dev, record_copy, &c, diag));
  return dmlc_vk_check_messages(dev, diag);
}

/* ---- tensors ---- */

struct dmlc_vk_tensor {
  dmlc_vk_device *dev;
  vk_buffer buf; /* device-local; mapped when that memory is host-visible */
  uint64_t id;
};

void dmlc_vk_tensor_destroy(dmlc_vk_tensor *t) {
  if (!t)
    return;
  buffer_destroy(t->dev, &t->buf);
  free(t);
}

/* Copies between the host and [offset, offset + size) of a tensor whose
 * memory the host cannot map, through a staging buffer. */
static dmlc_status tensor_stage(dmlc_vk_tensor *t, uint64_t offset, void *host, uint64_t size,
                                bool upload, dmlc_diag *diag) {
  dmlc_vk_device *dev = t->dev;
  vk_buffer s = {0};
  void *mapped = NULL;
  dmlc_status status =
      buffer_bind(dev, size, VK_BUFFER_USAGE_TRANSFER_SRC_BIT | VK_BUFFER_USAGE_TRANSFER_DST_BIT,
                  false, &s.buffer, &s.memory, &mapped, diag);
  if (status == DMLC_OK && !mapped)
    status = dmlc_diag_set(diag, DMLC_ERROR_DEVICE, "Vulkan: no host-visible memory for staging");
  if (status == DMLC_OK && upload) {
    memcpy(mapped, host, (size_t)size);
    status = submit_copy(dev, s.buffer, 0, t->buf.buffer, offset, size, diag);
  } else if (status == DMLC_OK) {
    status = submit_copy(dev, t->buf.buffer, offset, s.buffer, 0, size, diag);
    if (status == DMLC_OK)
      memcpy(host, mapped, (size_t)size);
  }
  buffer_destroy(dev, &s);
  return status;
}

dmlc_status dmlc_vk_tensor_create(dmlc_vk_device *dev, uint64_t bytes, dmlc_vk_tensor **out,
                                  dmlc_diag *diag) {
  *out = NULL;
  dmlc_vk_tensor *t = calloc(1, sizeof *t);
  if (!t)
    return dmlc_diag_set(diag, DMLC_ERROR_OUT_OF_MEMORY, "out of memory creating a tensor");
  t->dev = dev;
  t->id = ++dev->next_tensor_id;
  dmlc_status status = buffer_create(dev, bytes, false, &t->buf, diag);
  if (status == DMLC_OK && t->buf.mapped)
    memset(t->buf.mapped, 0, (size_t)t->buf.size);
  else if (status == DMLC_OK) {
    void *zeros = calloc(1, (size_t)t->buf.size);
    status = zeros
                 ? tensor_stage(t, 0, zeros, t->buf.size, true, diag)
                 : dmlc_diag_set(diag, DMLC_ERROR_OUT_OF_MEMORY, "out of memory zeroing a tensor");
    free(zeros);
  }
  if (status != DMLC_OK) {
    dmlc_vk_tensor_destroy(t);
    return status;
  }
  *out = t;
  return DMLC_OK;
}

dmlc_status dmlc_vk_tensor_write(dmlc_vk_tensor *t, uint64_t offset, const void *src, uint64_t size,
                                 dmlc_diag *diag) {
  if (t->buf.mapped) {
    memcpy((char *)t->buf.mapped + offset, src, (size_t)size);
    return DMLC_OK;
  }
  return tensor_stage(t, offset, (void *)src, size, true, diag);
}

dmlc_status dmlc_vk_tensor_read(const dmlc_vk_tensor *t, uint64_t offset, void *dst, uint64_t size,
                                dmlc_diag *diag) {
  if (t->buf.mapped) {
    memcpy(dst, (const char *)t->buf.mapped + offset, (size_t)size);
    return DMLC_OK;
  }
  return tensor_stage((dmlc_vk_tensor *)t, offset, dst, size, false, diag);
}

/* ---- executables ---- */

/* Descriptor sets and command buffers come in two kinds: OWN binds the
 * executable's own input and output buffers (dmlc_execute with host
 * buffers: recorded at creation, with the staging copies), TENSORS binds
 * the tensors of the last dmlc_execute_tensors (written and recorded again
 * only when those tensors change). */
enum { OWN = 0, TENSORS = 1, NUM_SET_KINDS = 2 };

/* The last submit's kernel times, read from the query pool when asked for
 * (dmlc_vk_kernel_times), not by every execute: reading them costs
 * lavapipe 10-40 us. Behind a pointer so a const executable can fill it. */
typedef struct vk_times {
  bool pending;    /* the pool holds a submit's stamps not read yet */
  bool stamped;    /* the last submit wrote stamps (else its times are 0) */
  uint64_t *ticks; /* 2 per kernel */
  double ns[];
} vk_times;

struct dmlc_vk_executable {
  dmlc_vk_device *dev;
  uint32_t num_inputs, num_outputs, num_temps, num_kernels;
  /* inputs, outputs, temporaries, then a dummy bound as the read of
   * kernels without one */
  vk_buffer *buffers;
  uint32_t num_buffers;
  vk_kernel **kernels;  /* the device's cache owns them */
  vk_buffer *partials;  /* per kernel: a split's partials (no buffer when not split) */
  dmlc_binding *reads;  /* per kernel: what binding 0 reads (dummy: a TEMP past the end) */
  dmlc_binding *writes; /* per kernel, DMLC_KDESC_MAX_OUTPUTS each */
  VkDescriptorPool descriptor_pool;
  VkDescriptorSet *sets[NUM_SET_KINDS];
  /* per kind, kernel i's output o at [i * DMLC_KDESC_MAX_OUTPUTS + o]: the
   * buffer its module's zero_fill has record_kernel fill (else NULL) */
  VkBuffer *fills[NUM_SET_KINDS];
  VkCommandBuffer commands[NUM_SET_KINDS];
  uint64_t *bound_ids;    /* per input and output: the tensor TENSORS names (0: none yet) */
  VkQueryPool timestamps; /* two per kernel; VK_NULL_HANDLE without */
  /* Whether executes write the timestamps (dmlc_vk_set_profiling; on at
   * creation), and whether each kind's commands were recorded that way. */
  bool profiling;
  bool recorded_profiling[NUM_SET_KINDS];
  VkFence fence;
  uint64_t last_wait_ns; /* how long the last submit took to finish */
  vk_times *times;
  bool staged; /* some own buffer goes through staging */
};

/* The buffer of binding b: io[] for the graph's inputs and outputs, the
 * executable's own for temporaries and the dummy. */
static const vk_buffer *binding_buffer(const dmlc_vk_executable *exe, const vk_buffer *const *io,
                                       dmlc_binding b) {
  switch (b.kind) {
  case DMLC_BINDING_INPUT:
    return b.index < exe->num_inputs ? io[b.index] : NULL;
  case DMLC_BINDING_OUTPUT:
    return b.index < exe->num_outputs ? io[exe->num_inputs + b.index] : NULL;
  case DMLC_BINDING_TEMP:
    return b.index <= exe->num_temps ? &exe->buffers[exe->num_inputs + exe->num_outputs + b.index]
                                     : NULL;
  }
  return NULL;
}

static dmlc_status buffers_create(dmlc_vk_executable *exe, const dmlc_kernel_plan *plan,
                                  const uint64_t *input_bytes, const uint64_t *output_bytes,
                                  dmlc_diag *diag) {
  exe->num_buffers = exe->num_inputs + exe->num_outputs + exe->num_temps + 1;
  exe->buffers = calloc(exe->num_buffers, sizeof *exe->buffers);
  if (!exe->buffers)
    return dmlc_diag_set(diag, DMLC_ERROR_OUT_OF_MEMORY, "out of memory creating buffers");
  for (uint32_t i = 0; i < exe->num_buffers; i++) {
    const uint32_t o = i - exe->num_inputs, t = o - exe->num_outputs;
    const bool host_io = i < exe->num_inputs + exe->num_outputs;
    const uint64_t bytes = i < exe->num_inputs    ? input_bytes[i]
                           : o < exe->num_outputs ? output_bytes[o]
                           : t < exe->num_temps   ? plan->temp_bytes[t]
                                                  : 4;
    DMLC_RETURN_IF_ERROR(buffer_create(exe->dev, bytes, host_io, &exe->buffers[i], diag));
    exe->staged |= exe->buffers[i].staging != VK_NULL_HANDLE;
  }
  return DMLC_OK;
}

/* The executable's own buffers, i < owned_count: inputs, outputs,
 * temporaries, the dummy, then the splits' partials (NULL for a kernel
 * without). */
static uint32_t owned_count(const dmlc_vk_executable *exe) {
  return exe->num_buffers + (exe->partials ? exe->num_kernels : 0);
}

static vk_buffer *owned(const dmlc_vk_executable *exe, uint32_t i) {
  vk_buffer *b = i < exe->num_buffers ? &exe->buffers[i] : &exe->partials[i - exe->num_buffers];
  return b->buffer ? b : NULL;
}

static void record_fills(const dmlc_vk_fns *fn, VkCommandBuffer cmd, const void *arg) {
  const dmlc_vk_executable *exe = arg;
  for (uint32_t i = 0; i < owned_count(exe); i++) {
    const vk_buffer *b = owned(exe, i);
    if (b && !b->mapped)
      fn->vkCmdFillBuffer(cmd, b->buffer, 0, VK_WHOLE_SIZE, 0);
  }
  barrier(fn, cmd, VK_PIPELINE_STAGE_TRANSFER_BIT, VK_ACCESS_TRANSFER_WRITE_BIT,
          VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT | VK_PIPELINE_STAGE_TRANSFER_BIT,
          VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT | VK_ACCESS_TRANSFER_READ_BIT |
              VK_ACCESS_TRANSFER_WRITE_BIT);
}

/* Touches every page of the memory the executable owns, at compile time,
 * so that the first execute costs what later ones do instead of faulting
 * fresh pages in: mapped memory from the host, the rest by one fill on the
 * device. Nothing has used the buffers yet, so no content is lost. */
static dmlc_status memory_prefault(dmlc_vk_executable *exe, dmlc_diag *diag) {
  bool fill = false;
  for (uint32_t i = 0; i < owned_count(exe); i++) {
    vk_buffer *b = owned(exe, i);
    if (b)
      fill |= buffer_prefault(b);
  }
  if (!fill)
    return DMLC_OK;
  DMLC_RETURN_IF_ERROR(submit_once(exe->dev, record_fills, exe, diag));
  for (uint32_t i = 0; i < owned_count(exe); i++) {
    vk_buffer *b = owned(exe, i);
    if (b && !b->mapped)
      b->touched = true;
  }
  return DMLC_OK;
}

uint32_t dmlc_vk_executable_memory(const dmlc_vk_executable *exe, dmlc_vk_memory_info *out,
                                   uint32_t max) {
  uint32_t n = 0;
  for (uint32_t i = 0; i < owned_count(exe); i++) {
    const vk_buffer *b = owned(exe, i);
    if (!b)
      continue;
    if (n < max)
      out[n] = (dmlc_vk_memory_info){b->mapped, b->size, b->touched};
    n++;
    if (!b->staging)
      continue;
    if (n < max)
      out[n] = (dmlc_vk_memory_info){b->staging_mapped, b->size, b->staging_touched};
    n++;
  }
  return n;
}

/* Points every kernel's descriptor set of one kind at io[] (and the
 * executable's temporaries). */
static dmlc_status sets_write(dmlc_vk_executable *exe, int kind, const vk_buffer *const *io,
                              dmlc_diag *diag) {
  dmlc_status st = DMLC_OK;
  VkDescriptorBufferInfo *infos = NULL;
  uint32_t infos_cap = 0;
  for (uint32_t i = 0; i < exe->num_kernels && st == DMLC_OK; i++) {
    const vk_kernel *k = exe->kernels[i];
    uint32_t descriptors = 0;
    for (uint32_t b = 0; b < k->module.num_bindings; b++)
      descriptors += k->module.bindings[b].count;
    descriptors += kernel_bindings(k) - k->module.num_bindings;
    if (!DMLC_ARRAY_RESERVE(&infos, &infos_cap, descriptors, 8)) {
      st = dmlc_diag_set(diag, DMLC_ERROR_OUT_OF_MEMORY, "out of memory writing descriptors");
      break;
    }
    VkWriteDescriptorSet writes[2 + DMLC_KDESC_MAX_OUTPUTS];
    uint32_t first = 0;
    for (uint32_t b = 0; b < k->module.num_bindings; b++) {
      const dmlc_binding binding =
          b == 0 ? exe->reads[i] : exe->writes[i * DMLC_KDESC_MAX_OUTPUTS + b - 1];
      const vk_buffer *buf = binding_buffer(exe, io, binding);
      if (!buf) {
        st = dmlc_diag_set(diag, DMLC_ERROR_INTERNAL,
                           "Vulkan: kernel %" PRIu32 " binds a buffer the plan does not have", i);
        break;
      }
      binding_infos(exe->dev, &k->module.bindings[b], buf, &infos[first]);
      if (b > 0 && (k->module.zero_fill >> (b - 1)) & 1)
        exe->fills[kind][i * DMLC_KDESC_MAX_OUTPUTS + b - 1] = buf->buffer;
      writes[b] = (VkWriteDescriptorSet){
          .sType = VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET,
          .dstSet = exe->sets[kind][i],
          .dstBinding = b,
          .descriptorCount = k->module.bindings[b].count,
          .descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER,
          .pBufferInfo = &infos[first],
      };
      first += k->module.bindings[b].count;
    }
    if (st == DMLC_OK && kernel_bindings(k) > k->module.num_bindings) {
      infos[first] = (VkDescriptorBufferInfo){exe->partials[i].buffer, 0, VK_WHOLE_SIZE};
      writes[k->module.num_bindings] = (VkWriteDescriptorSet){
          .sType = VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET,
          .dstSet = exe->sets[kind][i],
          .dstBinding = k->module.num_bindings,
          .descriptorCount = 1,
          .descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER,
          .pBufferInfo = &infos[first],
      };
    }
    if (st == DMLC_OK)
      exe->dev->inst.fn.vkUpdateDescriptorSets(exe->dev->device, kernel_bindings(k), writes, 0,
                                               NULL);
  }
  free(infos);
  return st;
}

static dmlc_status descriptors_create(dmlc_vk_executable *exe, dmlc_diag *diag) {
  uint32_t descriptors = 0;
  for (uint32_t i = 0; i < exe->num_kernels; i++) {
    const vk_kernel *k = exe->kernels[i];
    for (uint32_t b = 0; b < k->module.num_bindings; b++)
      descriptors += k->module.bindings[b].count;
    descriptors += kernel_bindings(k) - k->module.num_bindings;
  }
  DMLC_RETURN_IF_ERROR(pool_create(exe->dev, NUM_SET_KINDS * exe->num_kernels,
                                   NUM_SET_KINDS * descriptors, &exe->descriptor_pool, diag));
  for (int kind = 0; kind < NUM_SET_KINDS; kind++) {
    exe->sets[kind] = calloc(exe->num_kernels, sizeof *exe->sets[kind]);
    exe->fills[kind] =
        calloc((size_t)exe->num_kernels * DMLC_KDESC_MAX_OUTPUTS, sizeof *exe->fills[kind]);
    if (!exe->sets[kind] || !exe->fills[kind])
      return dmlc_diag_set(diag, DMLC_ERROR_OUT_OF_MEMORY, "out of memory creating descriptors");
    for (uint32_t i = 0; i < exe->num_kernels; i++)
      DMLC_RETURN_IF_ERROR(set_alloc(exe->dev, exe->descriptor_pool, exe->kernels[i]->set_layout,
                                     &exe->sets[kind][i], diag));
  }
  return DMLC_OK;
}

/* Staging copies for the graph's inputs and outputs (the outputs' current
 * bytes go up too, so padding no kernel writes keeps its value). */
static void record_copies(const dmlc_vk_executable *exe, VkCommandBuffer cmd, bool upload) {
  const dmlc_vk_fns *fn = &exe->dev->inst.fn;
  const uint32_t first = upload ? 0 : exe->num_inputs;
  for (uint32_t i = first; i < exe->num_inputs + exe->num_outputs; i++) {
    const vk_buffer *b = &exe->buffers[i];
    if (!b->staging)
      continue;
    const VkBufferCopy region = {0, 0, b->size};
    if (upload)
      fn->vkCmdCopyBuffer(cmd, b->staging, b->buffer, 1, &region);
    else
      fn->vkCmdCopyBuffer(cmd, b->buffer, b->staging, 1, &region);
  }
}

/* groups workgroups of the bound pipeline, in chunks of at most
 * maxComputeWorkGroupCount[0], each told its first group. */
static void record_dispatches(const dmlc_vk_executable *exe, VkCommandBuffer cmd,
                              const vk_kernel *k, uint64_t groups) {
  const dmlc_vk_fns *fn = &exe->dev->inst.fn;
  const uint64_t chunk = exe->dev->caps.max_workgroup_count;
  for (uint64_t first = 0; first < groups; first += chunk) {
    const uint64_t left = groups - first;
    const uint32_t offset = (uint32_t)first;
    fn->vkCmdPushConstants(cmd, k->layout, VK_SHADER_STAGE_COMPUTE_BIT, 0, sizeof offset, &offset);
    fn->vkCmdDispatch(cmd, (uint32_t)(left < chunk ? left : chunk), 1, 1);
  }
}

static void record_kernel(const dmlc_vk_executable *exe, VkCommandBuffer cmd, int kind,
                          uint32_t i) {
  const dmlc_vk_fns *fn = &exe->dev->inst.fn;
  const vk_kernel *k = exe->kernels[i];
  const VkQueryPool stamps = exe->profiling ? exe->timestamps : VK_NULL_HANDLE;
  if (stamps)
    fn->vkCmdWriteTimestamp(cmd, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, stamps, 2 * i);
  if (k->module.zero_fill) {
    /* the outputs whose 0s the module leaves to the runtime (after the
     * shaders and copies before that use them) */
    const VkPipelineStageFlags compute = VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT;
    const VkPipelineStageFlags transfer = VK_PIPELINE_STAGE_TRANSFER_BIT;
    barrier(fn, cmd, compute | transfer,
            VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT | VK_ACCESS_TRANSFER_WRITE_BIT,
            transfer, VK_ACCESS_TRANSFER_WRITE_BIT);
    for (uint32_t o = 0; o < DMLC_KDESC_MAX_OUTPUTS; o++) {
      const VkBuffer b = exe->fills[kind][i * DMLC_KDESC_MAX_OUTPUTS + o];
      if ((k->module.zero_fill >> o) & 1 && b)
        fn->vkCmdFillBuffer(cmd, b, 0, k->module.zero_fill_bytes[o], 0);
    }
    barrier(fn, cmd, transfer, VK_ACCESS_TRANSFER_WRITE_BIT, compute,
            VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT);
  }
  fn->vkCmdBindPipeline(cmd, VK_PIPELINE_BIND_POINT_COMPUTE, k->pipeline);
  fn->vkCmdBindDescriptorSets(cmd, VK_PIPELINE_BIND_POINT_COMPUTE, k->layout, 0, 1,
                              &exe->sets[kind][i], 0, NULL);
  record_dispatches(exe, cmd, k, k->module.num_groups);
  if (k->finish_pipeline) {
    /* The finish reads every partial the first dispatch wrote. */
    barrier(fn, cmd, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, VK_ACCESS_SHADER_WRITE_BIT,
            VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, VK_ACCESS_SHADER_READ_BIT);
    fn->vkCmdBindPipeline(cmd, VK_PIPELINE_BIND_POINT_COMPUTE, k->finish_pipeline);
    record_dispatches(exe, cmd, k, k->module.finish_groups);
  }
  if (stamps)
    fn->vkCmdWriteTimestamp(cmd, VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT, stamps, 2 * i + 1);
}

/* Records the command buffer of one kind: every kernel in order, with the
 * staging copies of the executable's own buffers for OWN. */
static dmlc_status commands_record(dmlc_vk_executable *exe, int kind, dmlc_diag *diag) {
  const dmlc_vk_fns *fn = &exe->dev->inst.fn;
  if (!exe->commands[kind])
    DMLC_RETURN_IF_ERROR(command_alloc(exe->dev, &exe->commands[kind], diag));
  const VkCommandBuffer cmd = exe->commands[kind];
  const VkCommandBufferBeginInfo begin = {.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
  DMLC_VK_CHECK(diag, fn->vkBeginCommandBuffer(cmd, &begin), "vkBeginCommandBuffer");
  const VkAccessFlags shader = VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT;
  const VkAccessFlags transfer = VK_ACCESS_TRANSFER_READ_BIT | VK_ACCESS_TRANSFER_WRITE_BIT;
  const VkPipelineStageFlags compute = VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT;
  const VkPipelineStageFlags transfer_stage = VK_PIPELINE_STAGE_TRANSFER_BIT;
  const bool staged = kind == OWN && exe->staged;
  exe->recorded_profiling[kind] = !exe->profiling; /* not valid until ended */
  if (exe->profiling && exe->timestamps)
    fn->vkCmdResetQueryPool(cmd, exe->timestamps, 0, 2 * exe->num_kernels);
  /* After the work submitted before: a tensor this call reads may have been
   * written by the last execute or by a tensor copy. */
  barrier(fn, cmd, compute | transfer_stage,
          VK_ACCESS_SHADER_WRITE_BIT | VK_ACCESS_TRANSFER_WRITE_BIT, compute | transfer_stage,
          shader | transfer);
  if (staged) {
    record_copies(exe, cmd, true);
    barrier(fn, cmd, transfer_stage, VK_ACCESS_TRANSFER_WRITE_BIT, compute, shader);
  }
  for (uint32_t i = 0; i < exe->num_kernels; i++) {
    if (i > 0)
      barrier(fn, cmd, compute, VK_ACCESS_SHADER_WRITE_BIT, compute, shader);
    record_kernel(exe, cmd, kind, i);
  }
  if (staged) {
    barrier(fn, cmd, compute, VK_ACCESS_SHADER_WRITE_BIT, transfer_stage,
            VK_ACCESS_TRANSFER_READ_BIT);
    record_copies(exe, cmd, false);
    barrier(fn, cmd, transfer_stage, VK_ACCESS_TRANSFER_WRITE_BIT, VK_PIPELINE_STAGE_HOST_BIT,
            VK_ACCESS_HOST_READ_BIT);
  }
  barrier(fn, cmd, compute, VK_ACCESS_SHADER_WRITE_BIT, VK_PIPELINE_STAGE_HOST_BIT,
          VK_ACCESS_HOST_READ_BIT);
  DMLC_VK_CHECK(diag, fn->vkEndCommandBuffer(cmd), "vkEndCommandBuffer");
  exe->recorded_profiling[kind] = exe->profiling;
  return DMLC_OK;
}

static dmlc_status sync_create(dmlc_vk_executable *exe, dmlc_diag *diag) {
  const dmlc_vk_fns *fn = &exe->dev->inst.fn;
  const VkFenceCreateInfo fence = {.sType = VK_STRUCTURE_TYPE_FENCE_CREATE_INFO};
  DMLC_VK_CHECK(diag, fn->vkCreateFence(exe->dev->device, &fence, NULL, &exe->fence),
                "vkCreateFence");
  exe->times = calloc(1, sizeof *exe->times + exe->num_kernels * sizeof(double));
  if (exe->times)
    exe->times->ticks = calloc(2 * (size_t)exe->num_kernels + 1, sizeof(uint64_t));
  if (!exe->times || !exe->times->ticks)
    return dmlc_diag_set(diag, DMLC_ERROR_OUT_OF_MEMORY, "out of memory creating timestamps");
  if (!exe->dev->timestamp_valid_bits || exe->num_kernels == 0)
    return DMLC_OK;
  const VkQueryPoolCreateInfo pool = {
      .sType = VK_STRUCTURE_TYPE_QUERY_POOL_CREATE_INFO,
      .queryType = VK_QUERY_TYPE_TIMESTAMP,
      .queryCount = 2 * exe->num_kernels,
  };
  DMLC_VK_CHECK(diag, fn->vkCreateQueryPool(exe->dev->device, &pool, NULL, &exe->timestamps),
                "vkCreateQueryPool");
  return DMLC_OK;
}

/* What each kernel binds, kept for writing the TENSORS sets later. */
static dmlc_status bindings_keep(dmlc_vk_executable *exe, const dmlc_kernel_plan *plan,
                                 dmlc_diag *diag) {
  const uint32_t n = exe->num_kernels ? exe->num_kernels : 1;
  const uint32_t io = exe->num_inputs + exe->num_outputs;
  exe->reads = calloc(n, sizeof *exe->reads);
  exe->writes = calloc((size_t)n * DMLC_KDESC_MAX_OUTPUTS, sizeof *exe->writes);
  exe->bound_ids = calloc(io ? io : 1, sizeof *exe->bound_ids);
  if (!exe->reads || !exe->writes || !exe->bound_ids)
    return dmlc_diag_set(diag, DMLC_ERROR_OUT_OF_MEMORY, "out of memory compiling kernels");
  for (uint32_t i = 0; i < exe->num_kernels; i++) {
    const dmlc_kdesc *k = &plan->kernels[i];
    if (k->num_outputs > DMLC_KDESC_MAX_OUTPUTS)
      return dmlc_diag_set(diag, DMLC_ERROR_INTERNAL,
                           "Vulkan: kernel %" PRIu32 " has %" PRIu32 " outputs", i, k->num_outputs);
    exe->reads[i] = k->has_read ? k->read_binding
                                : (dmlc_binding){DMLC_BINDING_TEMP, exe->num_temps}; /* the dummy */
    for (uint32_t o = 0; o < k->num_outputs; o++)
      exe->writes[i * DMLC_KDESC_MAX_OUTPUTS + o] = k->outputs[o].binding;
  }
  return DMLC_OK;
}

static dmlc_status executable_init(dmlc_vk_executable *exe, const dmlc_kernel_plan *plan,
                                   const uint64_t *input_bytes, const uint64_t *output_bytes,
                                   dmlc_diag *diag) {
  exe->kernels = calloc(exe->num_kernels ? exe->num_kernels : 1, sizeof *exe->kernels);
  if (!exe->kernels)
    return dmlc_diag_set(diag, DMLC_ERROR_OUT_OF_MEMORY, "out of memory compiling kernels");
  for (uint32_t i = 0; i < exe->num_kernels; i++)
    DMLC_RETURN_IF_ERROR(kernel_get(exe->dev, &plan->kernels[i], &exe->kernels[i], diag));
  DMLC_RETURN_IF_ERROR(bindings_keep(exe, plan, diag));
  DMLC_RETURN_IF_ERROR(buffers_create(exe, plan, input_bytes, output_bytes, diag));
  exe->partials = calloc(exe->num_kernels ? exe->num_kernels : 1, sizeof *exe->partials);
  if (!exe->partials)
    return dmlc_diag_set(diag, DMLC_ERROR_OUT_OF_MEMORY, "out of memory creating buffers");
  for (uint32_t i = 0; i < exe->num_kernels; i++)
    if (exe->kernels[i]->module.split_parts > 1)
      DMLC_RETURN_IF_ERROR(buffer_create(exe->dev, exe->kernels[i]->module.partial_bytes, false,
                                         &exe->partials[i], diag));
  DMLC_RETURN_IF_ERROR(memory_prefault(exe, diag));
  /* Fused finishes' counters start at 0 (each dispatch's last part sets
   * them back): the prefault filled unmapped partials with 0 on the
   * device; mapped ones are cleared here. */
  for (uint32_t i = 0; i < exe->num_kernels; i++) {
    const dmlc_spirv_module *m = &exe->kernels[i]->module;
    if (m->counters_offset && exe->partials[i].mapped)
      memset((unsigned char *)exe->partials[i].mapped + m->counters_offset, 0,
             m->partial_bytes - m->counters_offset);
  }
  DMLC_RETURN_IF_ERROR(sync_create(exe, diag));
  if (exe->num_kernels) {
    DMLC_RETURN_IF_ERROR(descriptors_create(exe, diag));
    const uint32_t io = exe->num_inputs + exe->num_outputs;
    const vk_buffer **own = calloc(io ? io : 1, sizeof *own);
    if (!own)
      return dmlc_diag_set(diag, DMLC_ERROR_OUT_OF_MEMORY, "out of memory compiling kernels");
    for (uint32_t i = 0; i < io; i++)
      own[i] = &exe->buffers[i];
    const dmlc_status status = sets_write(exe, OWN, own, diag);
    free(own);
    DMLC_RETURN_IF_ERROR(status);
  }
  DMLC_RETURN_IF_ERROR(commands_record(exe, OWN, diag));
  return dmlc_vk_check_messages(exe->dev, diag);
}

dmlc_status dmlc_vk_executable_create(dmlc_vk_device *dev, const dmlc_kernel_plan *plan,
                                      const uint64_t *input_bytes, uint32_t num_inputs,
                                      const uint64_t *output_bytes, uint32_t num_outputs,
                                      dmlc_vk_executable **out, dmlc_diag *diag) {
  *out = NULL;
  dmlc_vk_executable *exe = calloc(1, sizeof *exe);
  if (!exe)
    return dmlc_diag_set(diag, DMLC_ERROR_OUT_OF_MEMORY, "out of memory creating an executable");
  exe->dev = dev;
  exe->num_inputs = num_inputs;
  exe->num_outputs = num_outputs;
  exe->num_temps = plan->num_temps;
  exe->num_kernels = plan->num_kernels;
  exe->profiling = true;
  const dmlc_status status = executable_init(exe, plan, input_bytes, output_bytes, diag);
  if (status != DMLC_OK) {
    dmlc_vk_executable_destroy(exe);
    return status;
  }
  *out = exe;
  return DMLC_OK;
}

void dmlc_vk_executable_destroy(dmlc_vk_executable *exe) {
  if (!exe)
    return;
  const dmlc_vk_fns *fn = &exe->dev->inst.fn;
  VkDevice device = exe->dev->device;
  for (int kind = 0; kind < NUM_SET_KINDS; kind++) {
    if (exe->commands[kind])
      fn->vkFreeCommandBuffers(device, exe->dev->command_pool, 1, &exe->commands[kind]);
    free(exe->sets[kind]);
    free(exe->fills[kind]);
  }
  if (exe->fence)
    fn->vkDestroyFence(device, exe->fence, NULL);
  if (exe->timestamps)
    fn->vkDestroyQueryPool(device, exe->timestamps, NULL);
  if (exe->descriptor_pool)
    fn->vkDestroyDescriptorPool(device, exe->descriptor_pool, NULL);
  for (uint32_t i = 0; exe->buffers && i < exe->num_buffers; i++)
    buffer_destroy(exe->dev, &exe->buffers[i]);
  for (uint32_t i = 0; exe->partials && i < exe->num_kernels; i++)
    buffer_destroy(exe->dev, &exe->partials[i]);
  free(exe->partials);
  free(exe->buffers);
  free(exe->kernels);
  free(exe->reads);
  free(exe->writes);
  free(exe->bound_ids);
  if (exe->times)
    free(exe->times->ticks);
  free(exe->times);
  free(exe);
}

static void read_times(const dmlc_vk_executable *exe) {
  vk_times *t = exe->times;
  if (!exe->timestamps || !t->pending)
    return;
  t->pending = false;
  const dmlc_vk_device *dev = exe->dev;
  const uint32_t n = 2 * exe->num_kernels;
  if (dev->inst.fn.vkGetQueryPoolResults(
          dev->device, exe->timestamps, 0, n, n * sizeof *t->ticks, t->ticks, sizeof *t->ticks,
          VK_QUERY_RESULT_64_BIT | VK_QUERY_RESULT_WAIT_BIT) != VK_SUCCESS)
    return;
  for (uint32_t i = 0; i < exe->num_kernels; i++)
    t->ns[i] = timestamp_ns(dev, t->ticks[2 * i], t->ticks[2 * i + 1]);
}

static uint64_t now_ns(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

/* Waiting for a short submit: polling the fence before sleeping on it. A
 * sleeping waiter is woken by the driver's thread, which on a loaded or
 * small machine (lavapipe on 2 cores) costs tens of microseconds, as much
 * as a small kernel; polling costs a core, and the driver may need every
 * core for a long kernel. So poll only when the executable's last submit
 * finished within SPIN_MAX_NS, for at most twice that long, then sleep. */
enum { SPIN_MAX_NS = 200000 };

static dmlc_status wait_fence(dmlc_vk_executable *exe, uint64_t start, dmlc_diag *diag) {
  const dmlc_vk_fns *fn = &exe->dev->inst.fn;
  if (exe->last_wait_ns && exe->last_wait_ns <= SPIN_MAX_NS) {
    const uint64_t until = start + 2 * exe->last_wait_ns;
    for (;;) {
      const VkResult r = fn->vkGetFenceStatus(exe->dev->device, exe->fence);
      if (r == VK_SUCCESS) {
        exe->last_wait_ns = now_ns() - start;
        return DMLC_OK;
      }
      if (r != VK_NOT_READY)
        return dmlc_vk_fail(diag, r, "vkGetFenceStatus");
      if (now_ns() >= until)
        break;
    }
  }
  DMLC_VK_CHECK(diag, fn->vkWaitForFences(exe->dev->device, 1, &exe->fence, VK_TRUE, UINT64_MAX),
                "vkWaitForFences");
  exe->last_wait_ns = now_ns() - start;
  return DMLC_OK;
}

static dmlc_status submit_and_wait(dmlc_vk_executable *exe, int kind, dmlc_diag *diag) {
  const dmlc_vk_fns *fn = &exe->dev->inst.fn;
  DMLC_VK_CHECK(diag, fn->vkResetFences(exe->dev->device, 1, &exe->fence), "vkResetFences");
  const VkSubmitInfo submit = {
      .sType = VK_STRUCTURE_TYPE_SUBMIT_INFO,
      .commandBufferCount = 1,
      .pCommandBuffers = &exe->commands[kind],
  };
  const uint64_t start = now_ns();
  DMLC_VK_CHECK(diag, fn->vkQueueSubmit(exe->dev->queue, 1, &submit, exe->fence), "vkQueueSubmit");
  DMLC_RETURN_IF_ERROR(wait_fence(exe, start, diag));
  exe->times->pending = exe->times->stamped = exe->recorded_profiling[kind] && exe->timestamps;
  return DMLC_OK;
}

/* Host buffers: through the executable's own buffers. */
static dmlc_status execute_host(dmlc_vk_executable *exe, const dmlc_rt_binding *inputs,
                                const dmlc_rt_binding *outputs, dmlc_diag *diag) {
  const uint32_t io = exe->num_inputs + exe->num_outputs;
  for (uint32_t i = 0; i < io; i++) {
    const vk_buffer *b = &exe->buffers[i];
    const dmlc_rt_binding *host = i < exe->num_inputs ? &inputs[i] : &outputs[i - exe->num_inputs];
    memcpy(buffer_host(b), host->host, host->size_bytes < b->bytes ? host->size_bytes : b->bytes);
  }
  if (exe->recorded_profiling[OWN] != exe->profiling)
    DMLC_RETURN_IF_ERROR(commands_record(exe, OWN, diag));
  DMLC_RETURN_IF_ERROR(submit_and_wait(exe, OWN, diag));
  for (uint32_t o = 0; o < exe->num_outputs; o++) {
    const vk_buffer *b = &exe->buffers[exe->num_inputs + o];
    memcpy(outputs[o].host, buffer_host(b),
           outputs[o].size_bytes < b->bytes ? outputs[o].size_bytes : b->bytes);
  }
  return DMLC_OK;
}

/* Tensors: bound in place; the sets and commands are rewritten only when
 * the tensors differ from the last call's. */
static dmlc_status execute_tensors(dmlc_vk_executable *exe, const dmlc_rt_binding *inputs,
                                   const dmlc_rt_binding *outputs, dmlc_diag *diag) {
  const uint32_t io = exe->num_inputs + exe->num_outputs;
  bool same = exe->commands[TENSORS] != VK_NULL_HANDLE &&
              exe->recorded_profiling[TENSORS] == exe->profiling;
  for (uint32_t i = 0; i < io; i++) {
    const dmlc_rt_binding *b = i < exe->num_inputs ? &inputs[i] : &outputs[i - exe->num_inputs];
    if (!b->tensor)
      return dmlc_diag_set(diag, DMLC_ERROR_INTERNAL,
                           "Vulkan: an execute binds host buffers and tensors together");
    same = same && exe->bound_ids[i] == ((const dmlc_vk_tensor *)b->tensor)->id;
  }
  if (!same && exe->num_kernels) {
    const vk_buffer **bufs = calloc(io ? io : 1, sizeof *bufs);
    if (!bufs)
      return dmlc_diag_set(diag, DMLC_ERROR_OUT_OF_MEMORY, "out of memory binding tensors");
    for (uint32_t i = 0; i < io; i++) {
      const dmlc_rt_binding *b = i < exe->num_inputs ? &inputs[i] : &outputs[i - exe->num_inputs];
      bufs[i] = &((const dmlc_vk_tensor *)b->tensor)->buf;
    }
    const dmlc_status status = sets_write(exe, TENSORS, bufs, diag);
    free(bufs);
    DMLC_RETURN_IF_ERROR(status);
  }
  if (!same) {
    /* Forget the old binding until the new one is recorded. */
    memset(exe->bound_ids, 0, io * sizeof *exe->bound_ids);
    DMLC_RETURN_IF_ERROR(commands_record(exe, TENSORS, diag));
    for (uint32_t i = 0; i < io; i++) {
      const dmlc_rt_binding *b = i < exe->num_inputs ? &inputs[i] : &outputs[i - exe->num_inputs];
      exe->bound_ids[i] = ((const dmlc_vk_tensor *)b->tensor)->id;
    }
  }
  return submit_and_wait(exe, TENSORS, diag);
}

dmlc_status dmlc_vk_execute(dmlc_vk_executable *exe, const dmlc_rt_binding *inputs,
                            const dmlc_rt_binding *outputs, dmlc_diag *diag) {
  const bool host =
      exe->num_inputs ? inputs[0].host != NULL : exe->num_outputs == 0 || outputs[0].host != NULL;
  const dmlc_status status =
      host ? execute_host(exe, inputs, outputs, diag) : execute_tensors(exe, inputs, outputs, diag);
  DMLC_RETURN_IF_ERROR(status);
  return dmlc_vk_check_messages(exe->dev, diag);
}

/* Only a flag: each kind's commands are recorded again by its next execute
 * (one recording, a few microseconds), so this call cannot fail. */
void dmlc_vk_set_profiling(dmlc_vk_executable *exe, bool on) { exe->profiling = on; }

uint32_t dmlc_vk_kernel_times(const dmlc_vk_executable *exe, double *ns, uint32_t max) {
  read_times(exe);
  for (uint32_t i = 0; i < exe->num_kernels && i < max; i++)
    ns[i] = exe->times->stamped ? exe->times->ns[i] : 0;
  return exe->num_kernels;
}

dmlc_status dmlc_vk_disassemble(const dmlc_vk_executable *exe, char **out_text, dmlc_diag *diag) {
  *out_text = NULL;
  dmlc_strbuf sb = {0};
  for (uint32_t i = 0; i < exe->num_kernels; i++) {
    const vk_kernel *k = exe->kernels[i];
    char *body = NULL;
    const dmlc_status status =
        dmlc_spirv_disassemble(k->module.words, k->module.num_words, &body, diag);
    if (status != DMLC_OK) {
      dmlc_strbuf_free(&sb);
      return status;
    }
    dmlc_strbuf_printf(
        &sb, "; kernel %" PRIu32 ": %s\n; local size %" PRIu32 ", %" PRIu64 " workgroup%s\n", i,
        k->key, k->module.local_size, k->module.num_groups, DMLC_PLURAL(k->module.num_groups));
    dmlc_strbuf_append(&sb, body);
    free(body);
    if (k->module.finish_words) {
      const dmlc_status fs =
          dmlc_spirv_disassemble(k->module.finish_words, k->module.finish_num_words, &body, diag);
      if (fs != DMLC_OK) {
        dmlc_strbuf_free(&sb);
        return fs;
      }
      dmlc_strbuf_printf(&sb, "; kernel %" PRIu32 "'s finish: %" PRIu64 " workgroup%s\n", i,
                         k->module.finish_groups, DMLC_PLURAL(k->module.finish_groups));
      dmlc_strbuf_append(&sb, body);
      free(body);
    }
  }
  *out_text = dmlc_strbuf_finish(&sb);
  return *out_text ? DMLC_OK
                   : dmlc_diag_set(diag, DMLC_ERROR_OUT_OF_MEMORY, "out of memory disassembling");
}

dmlc_status dmlc_vk_executable_dump(const dmlc_vk_executable *exe, const char *what,
                                    char **out_text, dmlc_diag *diag) {
  *out_text = NULL;
  if (strcmp(what, "spirv") == 0)
    return dmlc_vk_disassemble(exe, out_text, diag);
  if (strcmp(what, "kernels") != 0)
    return dmlc_diag_set(diag, DMLC_ERROR_INVALID_ARGUMENT,
                         "cannot dump '%s' of a Vulkan executable (kernels or spirv)", what);
  dmlc_strbuf sb = {0};
  for (uint32_t i = 0; i < exe->num_kernels; i++) {
    const vk_kernel *k = exe->kernels[i];
    dmlc_strbuf_printf(&sb,
                       "// kernel %" PRIu32 ": workgroups of %" PRIu32 ", %" PRIu64
                       " workgroup%s, %" PRIu32 " binding%s\n",
                       i, k->module.local_size, k->module.num_groups,
                       DMLC_PLURAL(k->module.num_groups), k->module.num_bindings,
                       DMLC_PLURAL(k->module.num_bindings));
    if (k->module.lone_runs)
      dmlc_strbuf_printf(&sb,
                         "// lone rows: an invocation per %" PRIu32 " kept points, run by run\n",
                         k->module.lone_runs);
    else if (k->module.lone_rows)
      dmlc_strbuf_append(&sb, "// lone rows: an invocation per kept point\n");
    if (k->module.zero_fill)
      dmlc_strbuf_append(&sb, "// one-hot 0s: the output filled with 0 first, the 1s by the "
                              "finish\n");
    if (k->module.split_parts > 1 && !k->module.finish_words)
      dmlc_strbuf_printf(&sb,
                         "// split: %" PRIu32 " parts of %" PRIu32 " reduced points per kept "
                         "point; the last part of each to finish merges them\n",
                         k->module.split_parts, k->module.split_len);
    else if (k->module.split_parts > 1)
      dmlc_strbuf_printf(&sb,
                         "// split: %" PRIu32 " parts of %" PRIu32 " reduced points per kept "
                         "point, then a finish of %" PRIu64 " workgroup%s\n",
                         k->module.split_parts, k->module.split_len, k->module.finish_groups,
                         DMLC_PLURAL(k->module.finish_groups));
    dmlc_strbuf_append(&sb, k->key);
    dmlc_strbuf_end_line(&sb);
  }
  *out_text = dmlc_strbuf_finish(&sb);
  return *out_text ? DMLC_OK
                   : dmlc_diag_set(diag, DMLC_ERROR_OUT_OF_MEMORY, "out of memory dumping kernels");
}

/* ---- programs built outside the compiler ---- */

struct dmlc_vk_program {
  vk_kernel kernel; /* module (words borrowed at create, copied), layout, pipeline */
  uint32_t max_windows;
  VkDescriptorPool pool;
  VkDescriptorSet *sets; /* one per window */
  VkQueryPool timestamps;
};

uint64_t dmlc_vk_tensor_size(const dmlc_vk_tensor *t) { return t->buf.size; }

dmlc_vk_device *dmlc_vk_tensor_device(const dmlc_vk_tensor *t) { return t->dev; }

void dmlc_vk_program_destroy(dmlc_vk_program *p) {
  if (!p)
    return;
  dmlc_vk_device *dev = p->kernel.dev;
  const dmlc_vk_fns *fn = &dev->inst.fn;
  if (p->timestamps)
    fn->vkDestroyQueryPool(dev->device, p->timestamps, NULL);
  if (p->pool)
    fn->vkDestroyDescriptorPool(dev->device, p->pool, NULL);
  free(p->sets);
  kernel_release(&p->kernel);
  free(p);
}

static dmlc_status program_init(dmlc_vk_program *p, dmlc_diag *diag) {
  dmlc_vk_device *dev = p->kernel.dev;
  const dmlc_vk_fns *fn = &dev->inst.fn;
  DMLC_RETURN_IF_ERROR(kernel_pipeline(dev, &p->kernel, diag));
  DMLC_RETURN_IF_ERROR(pool_create(dev, p->max_windows, 2 * p->max_windows, &p->pool, diag));
  p->sets = calloc(p->max_windows, sizeof *p->sets);
  if (!p->sets)
    return dmlc_diag_set(diag, DMLC_ERROR_OUT_OF_MEMORY, "out of memory creating a program");
  for (uint32_t w = 0; w < p->max_windows; w++)
    DMLC_RETURN_IF_ERROR(set_alloc(dev, p->pool, p->kernel.set_layout, &p->sets[w], diag));
  if (dev->timestamp_valid_bits) {
    const VkQueryPoolCreateInfo q = {
        .sType = VK_STRUCTURE_TYPE_QUERY_POOL_CREATE_INFO,
        .queryType = VK_QUERY_TYPE_TIMESTAMP,
        .queryCount = 2,
    };
    DMLC_VK_CHECK(diag, fn->vkCreateQueryPool(dev->device, &q, NULL, &p->timestamps),
                  "vkCreateQueryPool");
  }
  return dmlc_vk_check_messages(dev, diag);
}

dmlc_status dmlc_vk_program_create(dmlc_vk_device *dev, const uint32_t *words, size_t num_words,
                                   uint32_t local_size, uint32_t max_windows, dmlc_vk_program **out,
                                   dmlc_diag *diag) {
  *out = NULL;
  if (!max_windows || !local_size || local_size > dev->caps.max_workgroup_size)
    return dmlc_diag_set(diag, DMLC_ERROR_INVALID_ARGUMENT,
                         "Vulkan: a program of %" PRIu32 " windows and workgroups of %" PRIu32,
                         max_windows, local_size);
  dmlc_vk_program *p = calloc(1, sizeof *p);
  uint32_t *copy = malloc(num_words * sizeof *copy);
  if (!p || !copy) {
    free(p);
    free(copy);
    return dmlc_diag_set(diag, DMLC_ERROR_OUT_OF_MEMORY, "out of memory creating a program");
  }
  memcpy(copy, words, num_words * sizeof *copy);
  p->kernel.dev = dev;
  p->kernel.module = (dmlc_spirv_module){.words = copy,
                                         .num_words = num_words,
                                         .local_size = local_size,
                                         .num_bindings = 2,
                                         .bindings = {{1, 0}, {1, 0}}};
  p->max_windows = max_windows;
  const dmlc_status status = program_init(p, diag);
  if (status != DMLC_OK) {
    dmlc_vk_program_destroy(p);
    return status;
  }
  *out = p;
  return DMLC_OK;
}

typedef struct program_arg {
  const dmlc_vk_program *p;
  uint32_t windows, groups;
} program_arg;

static void record_program(const dmlc_vk_fns *fn, VkCommandBuffer cmd, const void *arg) {
  const program_arg *a = arg;
  const dmlc_vk_program *p = a->p;
  const VkPipelineStageFlags compute = VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT;
  const VkAccessFlags rw = VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT;
  if (p->timestamps)
    fn->vkCmdResetQueryPool(cmd, p->timestamps, 0, 2);
  barrier(fn, cmd, compute | VK_PIPELINE_STAGE_TRANSFER_BIT,
          VK_ACCESS_SHADER_WRITE_BIT | VK_ACCESS_TRANSFER_WRITE_BIT, compute, rw);
  if (p->timestamps)
    fn->vkCmdWriteTimestamp(cmd, compute, p->timestamps, 0);
  fn->vkCmdBindPipeline(cmd, VK_PIPELINE_BIND_POINT_COMPUTE, p->kernel.pipeline);
  for (uint32_t w = 0; w < a->windows; w++) {
    fn->vkCmdBindDescriptorSets(cmd, VK_PIPELINE_BIND_POINT_COMPUTE, p->kernel.layout, 0, 1,
                                &p->sets[w], 0, NULL);
    const uint32_t first = w * a->groups;
    fn->vkCmdPushConstants(cmd, p->kernel.layout, VK_SHADER_STAGE_COMPUTE_BIT, 0, sizeof first,
                           &first);
    fn->vkCmdDispatch(cmd, a->groups, 1, 1);
  }
  if (p->timestamps)
    fn->vkCmdWriteTimestamp(cmd, VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT, p->timestamps, 1);
  barrier(fn, cmd, compute, VK_ACCESS_SHADER_WRITE_BIT, VK_PIPELINE_STAGE_HOST_BIT,
          VK_ACCESS_HOST_READ_BIT);
}

dmlc_status dmlc_vk_program_run(dmlc_vk_program *p, const dmlc_vk_tensor *in, uint64_t window_bytes,
                                uint32_t windows, const dmlc_vk_tensor *out, uint32_t groups,
                                double *ns, dmlc_diag *diag) {
  dmlc_vk_device *dev = p->kernel.dev;
  const dmlc_vk_fns *fn = &dev->inst.fn;
  *ns = 0;
  if (!windows || windows > p->max_windows || !window_bytes ||
      (windows - 1) * window_bytes >= in->buf.size || !groups ||
      (uint64_t)windows * groups > UINT32_MAX)
    return dmlc_diag_set(diag, DMLC_ERROR_INVALID_ARGUMENT,
                         "Vulkan: %" PRIu32 " windows of %" PRIu64 " bytes over %" PRIu64 " bytes",
                         windows, window_bytes, (uint64_t)in->buf.size);
  for (uint32_t w = 0; w < windows; w++) {
    const VkDeviceSize offset = w * window_bytes, left = in->buf.size - offset;
    const VkDescriptorBufferInfo infos[2] = {
        {in->buf.buffer, offset, left < window_bytes ? left : window_bytes},
        {out->buf.buffer, 0, VK_WHOLE_SIZE},
    };
    VkWriteDescriptorSet writes[2];
    for (uint32_t b = 0; b < 2; b++)
      writes[b] = (VkWriteDescriptorSet){
          .sType = VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET,
          .dstSet = p->sets[w],
          .dstBinding = b,
          .descriptorCount = 1,
          .descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER,
          .pBufferInfo = &infos[b],
      };
    fn->vkUpdateDescriptorSets(dev->device, 2, writes, 0, NULL);
  }
  const program_arg a = {p, windows, groups};
  DMLC_RETURN_IF_ERROR(submit_once(dev, record_program, &a, diag));
  if (p->timestamps) {
    uint64_t ticks[2];
    DMLC_VK_CHECK(diag,
                  fn->vkGetQueryPoolResults(dev->device, p->timestamps, 0, 2, sizeof ticks, ticks,
                                            sizeof *ticks,
                                            VK_QUERY_RESULT_64_BIT | VK_QUERY_RESULT_WAIT_BIT),
                  "vkGetQueryPoolResults");
    *ns = timestamp_ns(dev, ticks[0], ticks[1]);
  }
  return dmlc_vk_check_messages(dev, diag);
}
