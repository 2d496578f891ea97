/* What vk_device.c and vk_exec.c share: the Vulkan entry points (loaded at
 * run time from the loader, so a machine without one gets an error, not a
 * binary that fails to start), the validation-message record, and the open
 * device. */
#ifndef DMLC_RUNTIME_VULKAN_VK_INTERNAL_H
#define DMLC_RUNTIME_VULKAN_VK_INTERNAL_H

#define VK_NO_PROTOTYPES
#include <vulkan/vulkan.h>

#include "runtime/vulkan/vk_device.h"

/* The entry points dmlc calls, by the level they are loaded at. */
#define DMLC_VK_GLOBAL_FUNCTIONS(X)                                                                \
  X(vkCreateInstance)                                                                              \
  X(vkEnumerateInstanceExtensionProperties)                                                        \
  X(vkEnumerateInstanceVersion)

#define DMLC_VK_INSTANCE_FUNCTIONS(X)                                                              \
  X(vkDestroyInstance)                                                                             \
  X(vkEnumeratePhysicalDevices)                                                                    \
  X(vkEnumerateDeviceExtensionProperties)                                                          \
  X(vkGetPhysicalDeviceProperties)                                                                 \
  X(vkGetPhysicalDeviceProperties2)                                                                \
  X(vkGetPhysicalDeviceFeatures2)                                                                  \
  X(vkGetPhysicalDeviceQueueFamilyProperties)                                                      \
  X(vkGetPhysicalDeviceMemoryProperties)                                                           \
  X(vkCreateDevice)                                                                                \
  X(vkGetDeviceProcAddr)

#define DMLC_VK_DEVICE_FUNCTIONS(X)                                                                \
  X(vkDestroyDevice)                                                                               \
  X(vkGetDeviceQueue)                                                                              \
  X(vkCreateCommandPool)                                                                           \
  X(vkDestroyCommandPool)                                                                          \
  X(vkCreatePipelineCache)                                                                         \
  X(vkDestroyPipelineCache)                                                                        \
  X(vkCreateBuffer)                                                                                \
  X(vkDestroyBuffer)                                                                               \
  X(vkGetBufferMemoryRequirements)                                                                 \
  X(vkAllocateMemory)                                                                              \
  X(vkFreeMemory)                                                                                  \
  X(vkBindBufferMemory)                                                                            \
  X(vkMapMemory)                                                                                   \
  X(vkUnmapMemory)                                                                                 \
  X(vkCreateShaderModule)                                                                          \
  X(vkDestroyShaderModule)                                                                         \
  X(vkCreateDescriptorSetLayout)                                                                   \
  X(vkDestroyDescriptorSetLayout)                                                                  \
  X(vkCreatePipelineLayout)                                                                        \
  X(vkDestroyPipelineLayout)                                                                       \
  X(vkCreateComputePipelines)                                                                      \
  X(vkDestroyPipeline)                                                                             \
  X(vkCreateDescriptorPool)                                                                        \
  X(vkDestroyDescriptorPool)                                                                       \
  X(vkAllocateDescriptorSets)                                                                      \
  X(vkUpdateDescriptorSets)                                                                        \
  X(vkAllocateCommandBuffers)                                                                      \
  X(vkFreeCommandBuffers)                                                                          \
  X(vkBeginCommandBuffer)                                                                          \
  X(vkEndCommandBuffer)                                                                            \
  X(vkCmdBindPipeline)                                                                             \
  X(vkCmdBindDescriptorSets)                                                                       \
  X(vkCmdPushConstants)                                                                            \
  X(vkCmdDispatch)                                                                                 \
  X(vkCmdPipelineBarrier)                                                                          \
  X(vkCmdCopyBuffer)                                                                               \
  X(vkCmdFillBuffer)                                                                               \
  X(vkCmdWriteTimestamp)                                                                           \
  X(vkCmdResetQueryPool)                                                                           \
  X(vkCreateQueryPool)                                                                             \
  X(vkDestroyQueryPool)                                                                            \
  X(vkGetQueryPoolResults)                                                                         \
  X(vkCreateFence)                                                                                 \
  X(vkDestroyFence)                                                                                \
  X(vkResetFences)                                                                                 \
  X(vkWaitForFences)                                                                               \
  X(vkGetFenceStatus)                                                                              \
  X(vkQueueSubmit)

typedef struct dmlc_vk_fns {
  PFN_vkGetInstanceProcAddr vkGetInstanceProcAddr;
#define X(name) PFN_##name name;
  DMLC_VK_GLOBAL_FUNCTIONS(X)
  DMLC_VK_INSTANCE_FUNCTIONS(X)
  DMLC_VK_DEVICE_FUNCTIONS(X)
#undef X
  /* VK_EXT_debug_utils; NULL when the instance lacks it. */
  PFN_vkCreateDebugUtilsMessengerEXT vkCreateDebugUtilsMessengerEXT;
  PFN_vkDestroyDebugUtilsMessengerEXT vkDestroyDebugUtilsMessengerEXT;
} dmlc_vk_fns;

/* Messages from the validation layers (and the loader's errors), recorded by
 * the debug-utils callback. Each fallible call fails with the first message
 * not yet reported, so a test "fails on any message" by checking statuses. */
typedef struct dmlc_vk_messages {
  uint32_t count, reported;
  char first[768]; /* the first message since the last report */
} dmlc_vk_messages;

/* A loaded loader and an instance (API 1.2+), with the messenger. */
typedef struct dmlc_vk_instance {
  void *library;
  dmlc_vk_fns fn;
  VkInstance instance;
  uint32_t api_version;
  VkDebugUtilsMessengerEXT messenger;
  dmlc_vk_messages *messages; /* not owned; must outlive the instance */
} dmlc_vk_instance;

struct dmlc_vk_device {
  dmlc_vk_instance inst;
  dmlc_vk_messages messages;
  VkPhysicalDevice physical;
  VkPhysicalDeviceProperties props;
  VkPhysicalDeviceMemoryProperties memory;
  VkDevice device;
  uint32_t queue_family;
  VkQueue queue;
  VkCommandPool command_pool;
  VkPipelineCache pipeline_cache;
  uint32_t timestamp_valid_bits; /* 0: no timestamps on the queue */
  /* Pin each pipeline's subgroup size to caps.subgroup_size (Vulkan 1.3
   * subgroupSizeControl), so code generated for that size gets it. */
  bool pin_subgroup_size;
  uint32_t max_subgroups_per_workgroup;
  /* Leave device-local memory unmapped even where the host can map it
   * (DMLC_VULKAN_UNMAPPED, for tests). */
  bool unmapped;
  dmlc_spirv_caps caps;
  char name[VK_MAX_PHYSICAL_DEVICE_NAME_SIZE];
  /* Compiled kernels (vk_exec.c), shared by the device's executables;
   * created by the first compile. */
  struct dmlc_kernel_cache *kernels;
  /* Tensors are numbered from 1 so an executable can tell whether the
   * tensors bound now are those its descriptor sets name. */
  uint64_t next_tensor_id;
};

/* Fails with the first unreported validation message, if any; else OK. */
dmlc_status dmlc_vk_check_messages(dmlc_vk_device *dev, dmlc_diag *diag);
/* DMLC_ERROR_DEVICE naming what failed and the VkResult (or
 * DMLC_ERROR_OUT_OF_MEMORY for the out-of-memory results). */
dmlc_status dmlc_vk_fail(dmlc_diag *diag, VkResult result, const char *what);
const char *dmlc_vk_result_name(VkResult result);
/* The kernel cache's teardown, called by dmlc_vk_device_close. */
void dmlc_vk_kernel_cache_destroy(dmlc_vk_device *dev);

#define DMLC_VK_CHECK(diag, call, what)                                                            \
  do {                                                                                             \
    VkResult dmlc_vk_result_ = (call);                                                             \
    if (dmlc_vk_result_ != VK_SUCCESS)                                                             \
      return dmlc_vk_fail((diag), dmlc_vk_result_, (what));                                        \
  } while (0)

#endif
