/* See vk_device.h. The loader, the instance and its validation messenger,
 * physical device selection and the caps it reports, the logical device. */
#include <ctype.h>
#include <dlfcn.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ir/strbuf.h"
#include "runtime/vulkan/vk_internal.h"

/* ---- results and errors ---- */

const char *dmlc_vk_result_name(VkResult result) {
  switch (result) {
#define R(name)                                                                                    \
  case name:                                                                                       \
    return #name;
    R(VK_SUCCESS)
    R(VK_NOT_READY)
    R(VK_TIMEOUT)
    R(VK_INCOMPLETE)
    R(VK_ERROR_OUT_OF_HOST_MEMORY)
    R(VK_ERROR_OUT_OF_DEVICE_MEMORY)
    R(VK_ERROR_INITIALIZATION_FAILED)
    R(VK_ERROR_DEVICE_LOST)
    R(VK_ERROR_MEMORY_MAP_FAILED)
    R(VK_ERROR_LAYER_NOT_PRESENT)
    R(VK_ERROR_EXTENSION_NOT_PRESENT)
    R(VK_ERROR_FEATURE_NOT_PRESENT)
    R(VK_ERROR_INCOMPATIBLE_DRIVER)
    R(VK_ERROR_TOO_MANY_OBJECTS)
    R(VK_ERROR_FORMAT_NOT_SUPPORTED)
    R(VK_ERROR_FRAGMENTED_POOL)
    R(VK_ERROR_UNKNOWN)
    R(VK_ERROR_OUT_OF_POOL_MEMORY)
    R(VK_ERROR_INVALID_EXTERNAL_HANDLE)
    R(VK_ERROR_FRAGMENTATION)
    R(VK_PIPELINE_COMPILE_REQUIRED)
#undef R
  default:
    return "an unknown VkResult";
  }
}

dmlc_status dmlc_vk_fail(dmlc_diag *diag, VkResult result, const char *what) {
  const bool oom = result == VK_ERROR_OUT_OF_HOST_MEMORY || result == VK_ERROR_OUT_OF_DEVICE_MEMORY;
  return dmlc_diag_set(diag, oom ? DMLC_ERROR_OUT_OF_MEMORY : DMLC_ERROR_DEVICE,
                       "Vulkan: %s failed: %s (%d)", what, dmlc_vk_result_name(result),
                       (int)result);
}

/* ---- validation messages ---- */

static VKAPI_ATTR VkBool32 VKAPI_CALL on_message(VkDebugUtilsMessageSeverityFlagBitsEXT severity,
                                                 VkDebugUtilsMessageTypeFlagsEXT types,
                                                 const VkDebugUtilsMessengerCallbackDataEXT *data,
                                                 void *user) {
  /* The loader's own warnings (VK_INSTANCE_LAYERS being honoured, drivers
   * without a device) are general ones; the layers' are not. */
  if (!(types & ~VK_DEBUG_UTILS_MESSAGE_TYPE_GENERAL_BIT_EXT) &&
      severity < VK_DEBUG_UTILS_MESSAGE_SEVERITY_ERROR_BIT_EXT)
    return VK_FALSE;
  dmlc_vk_messages *m = user;
  if (m->count++ == m->reported)
    snprintf(m->first, sizeof m->first, "%s: %s",
             severity >= VK_DEBUG_UTILS_MESSAGE_SEVERITY_ERROR_BIT_EXT ? "error" : "warning",
             data && data->pMessage ? data->pMessage : "(no text)");
  return VK_FALSE;
}

static VkDebugUtilsMessengerCreateInfoEXT messenger_info(dmlc_vk_messages *messages) {
  return (VkDebugUtilsMessengerCreateInfoEXT){
      .sType = VK_STRUCTURE_TYPE_DEBUG_UTILS_MESSENGER_CREATE_INFO_EXT,
      .messageSeverity = VK_DEBUG_UTILS_MESSAGE_SEVERITY_WARNING_BIT_EXT |
                         VK_DEBUG_UTILS_MESSAGE_SEVERITY_ERROR_BIT_EXT,
      .messageType = VK_DEBUG_UTILS_MESSAGE_TYPE_GENERAL_BIT_EXT |
                     VK_DEBUG_UTILS_MESSAGE_TYPE_VALIDATION_BIT_EXT |
                     VK_DEBUG_UTILS_MESSAGE_TYPE_PERFORMANCE_BIT_EXT,
      .pfnUserCallback = on_message,
      .pUserData = messages,
  };
}

static dmlc_status messages_check(dmlc_vk_messages *m, dmlc_diag *diag) {
  if (m->count == m->reported)
    return DMLC_OK;
  const uint32_t n = m->count - m->reported;
  m->reported = m->count;
  return dmlc_diag_set(diag, DMLC_ERROR_DEVICE,
                       "Vulkan validation reported %" PRIu32 " message%s; first: %s", n,
                       n == 1 ? "" : "s", m->first);
}

dmlc_status dmlc_vk_check_messages(dmlc_vk_device *dev, dmlc_diag *diag) {
  return messages_check(&dev->messages, diag);
}

/* ---- loader and instance ---- */

static dmlc_status loader_open(dmlc_vk_instance *inst, dmlc_diag *diag) {
  inst->library = dlopen("libvulkan.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!inst->library)
    inst->library = dlopen("libvulkan.so", RTLD_NOW | RTLD_LOCAL);
  if (!inst->library)
    return dmlc_diag_set(diag, DMLC_ERROR_DEVICE,
                         "Vulkan: no Vulkan loader (libvulkan.so.1) on this machine: install "
                         "libvulkan1 and a driver, e.g. Mesa's lavapipe (mesa-vulkan-drivers)");
  /* The ISO C cast from void * to a function pointer is not allowed; copy it. */
  void *sym = dlsym(inst->library, "vkGetInstanceProcAddr");
  if (!sym)
    return dmlc_diag_set(diag, DMLC_ERROR_DEVICE,
                         "Vulkan: the loader has no vkGetInstanceProcAddr");
  memcpy(&inst->fn.vkGetInstanceProcAddr, &sym, sizeof sym);
#define X(name) inst->fn.name = (PFN_##name)inst->fn.vkGetInstanceProcAddr(NULL, #name);
  DMLC_VK_GLOBAL_FUNCTIONS(X)
#undef X
  if (!inst->fn.vkCreateInstance || !inst->fn.vkEnumerateInstanceExtensionProperties)
    return dmlc_diag_set(diag, DMLC_ERROR_DEVICE, "Vulkan: the loader lacks vkCreateInstance");
  return DMLC_OK;
}

static bool instance_has_extension(const dmlc_vk_instance *inst, const char *name) {
  uint32_t n = 0;
  if (inst->fn.vkEnumerateInstanceExtensionProperties(NULL, &n, NULL) != VK_SUCCESS || n == 0)
    return false;
  VkExtensionProperties *props = calloc(n, sizeof *props);
  bool found = false;
  if (props && inst->fn.vkEnumerateInstanceExtensionProperties(NULL, &n, props) == VK_SUCCESS)
    for (uint32_t i = 0; i < n && !found; i++)
      found = strcmp(props[i].extensionName, name) == 0;
  free(props);
  return found;
}

static void instance_destroy(dmlc_vk_instance *inst) {
  if (inst->messenger)
    inst->fn.vkDestroyDebugUtilsMessengerEXT(inst->instance, inst->messenger, NULL);
  if (inst->instance)
    inst->fn.vkDestroyInstance(inst->instance, NULL);
  if (inst->library)
    dlclose(inst->library);
  memset(inst, 0, sizeof *inst);
}

static dmlc_status instance_create(dmlc_vk_instance *inst, dmlc_vk_messages *messages,
                                   dmlc_diag *diag) {
  memset(inst, 0, sizeof *inst);
  inst->messages = messages;
  DMLC_RETURN_IF_ERROR(loader_open(inst, diag));
  uint32_t version = VK_API_VERSION_1_0;
  if (inst->fn.vkEnumerateInstanceVersion)
    inst->fn.vkEnumerateInstanceVersion(&version);
  if (version < VK_API_VERSION_1_2)
    return dmlc_diag_set(diag, DMLC_ERROR_DEVICE,
                         "Vulkan: the loader offers Vulkan %u.%u; dmlc needs 1.2 or later",
                         VK_API_VERSION_MAJOR(version), VK_API_VERSION_MINOR(version));
  inst->api_version = version < VK_API_VERSION_1_3 ? version : VK_API_VERSION_1_3;

  const bool debug_utils = instance_has_extension(inst, VK_EXT_DEBUG_UTILS_EXTENSION_NAME);
  const char *extensions[] = {VK_EXT_DEBUG_UTILS_EXTENSION_NAME};
  /* Chained into the create info, the messenger also hears what happens
   * inside vkCreateInstance and vkDestroyInstance. */
  VkDebugUtilsMessengerCreateInfoEXT messenger = messenger_info(messages);
  const VkApplicationInfo app = {
      .sType = VK_STRUCTURE_TYPE_APPLICATION_INFO,
      .pApplicationName = "dmlc",
      .pEngineName = "dmlc",
      .apiVersion = inst->api_version,
  };
  const VkInstanceCreateInfo info = {
      .sType = VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO,
      .pNext = debug_utils ? &messenger : NULL,
      .pApplicationInfo = &app,
      .enabledExtensionCount = debug_utils ? 1 : 0,
      .ppEnabledExtensionNames = extensions,
  };
  const VkResult r = inst->fn.vkCreateInstance(&info, NULL, &inst->instance);
  if (r == VK_ERROR_INCOMPATIBLE_DRIVER) {
    inst->instance = VK_NULL_HANDLE;
    messages->reported = messages->count;
    return dmlc_diag_set(diag, DMLC_ERROR_DEVICE,
                         "Vulkan: no Vulkan driver found (vkCreateInstance: "
                         "VK_ERROR_INCOMPATIBLE_DRIVER); install one, e.g. Mesa's lavapipe "
                         "(mesa-vulkan-drivers), or check VK_ICD_FILENAMES / VK_DRIVER_FILES");
  }
  if (r != VK_SUCCESS) {
    inst->instance = VK_NULL_HANDLE;
    return dmlc_vk_fail(diag, r, "vkCreateInstance");
  }
#define X(name) inst->fn.name = (PFN_##name)inst->fn.vkGetInstanceProcAddr(inst->instance, #name);
  DMLC_VK_INSTANCE_FUNCTIONS(X)
#undef X
  if (debug_utils) {
    inst->fn.vkCreateDebugUtilsMessengerEXT =
        (PFN_vkCreateDebugUtilsMessengerEXT)inst->fn.vkGetInstanceProcAddr(
            inst->instance, "vkCreateDebugUtilsMessengerEXT");
    inst->fn.vkDestroyDebugUtilsMessengerEXT =
        (PFN_vkDestroyDebugUtilsMessengerEXT)inst->fn.vkGetInstanceProcAddr(
            inst->instance, "vkDestroyDebugUtilsMessengerEXT");
    if (inst->fn.vkCreateDebugUtilsMessengerEXT && inst->fn.vkDestroyDebugUtilsMessengerEXT)
      DMLC_VK_CHECK(diag,
                    inst->fn.vkCreateDebugUtilsMessengerEXT(inst->instance, &messenger, NULL,
                                                            &inst->messenger),
                    "vkCreateDebugUtilsMessengerEXT");
  }
  return messages_check(messages, diag);
}

/* ---- physical devices ---- */

/* What dmlc needs to know of one physical device. Queried in place: the
 * structs chain to each other. */
typedef struct vk_physical {
  VkPhysicalDevice handle;
  VkPhysicalDeviceProperties2 props;
  VkPhysicalDeviceSubgroupProperties subgroup;
  VkPhysicalDeviceSubgroupSizeControlProperties size_control;
  VkPhysicalDeviceDriverProperties driver;
  /* Compute units, where the device reports them (0 elsewhere). */
  VkPhysicalDeviceShaderSMBuiltinsPropertiesNV nv_sm;
  VkPhysicalDeviceShaderCorePropertiesAMD amd_core;
  VkPhysicalDeviceFeatures2 features;
  VkPhysicalDeviceVulkan11Features v11;
  VkPhysicalDeviceVulkan12Features v12;
  VkPhysicalDeviceVulkan13Features v13;
  bool is_13;
  uint32_t queue_family;
  uint32_t timestamp_valid_bits;
  const char *unsuitable; /* why dmlc cannot use it, or NULL */
  bool pin_subgroup_size;
  dmlc_spirv_caps caps;
} vk_physical;

static const char *device_type_name(VkPhysicalDeviceType type) {
  switch (type) {
  case VK_PHYSICAL_DEVICE_TYPE_DISCRETE_GPU:
    return "discrete GPU";
  case VK_PHYSICAL_DEVICE_TYPE_INTEGRATED_GPU:
    return "integrated GPU";
  case VK_PHYSICAL_DEVICE_TYPE_VIRTUAL_GPU:
    return "virtual GPU";
  case VK_PHYSICAL_DEVICE_TYPE_CPU:
    return "CPU";
  default:
    return "other";
  }
}

/* Lower is preferred: discrete, integrated, virtual, CPU, other. */
static int device_type_rank(VkPhysicalDeviceType type) {
  switch (type) {
  case VK_PHYSICAL_DEVICE_TYPE_DISCRETE_GPU:
    return 0;
  case VK_PHYSICAL_DEVICE_TYPE_INTEGRATED_GPU:
    return 1;
  case VK_PHYSICAL_DEVICE_TYPE_VIRTUAL_GPU:
    return 2;
  case VK_PHYSICAL_DEVICE_TYPE_CPU:
    return 3;
  default:
    return 4;
  }
}

/* A compute queue family, preferring one without graphics (a dedicated
 * compute queue); UINT32_MAX when there is none. */
static uint32_t find_compute_queue(const dmlc_vk_instance *inst, VkPhysicalDevice pd,
                                   uint32_t *timestamp_bits) {
  uint32_t n = 0;
  inst->fn.vkGetPhysicalDeviceQueueFamilyProperties(pd, &n, NULL);
  VkQueueFamilyProperties *families = calloc(n ? n : 1, sizeof *families);
  if (!families)
    return UINT32_MAX;
  inst->fn.vkGetPhysicalDeviceQueueFamilyProperties(pd, &n, families);
  uint32_t best = UINT32_MAX;
  for (uint32_t i = 0; i < n; i++) {
    const VkQueueFlags flags = families[i].queueFlags;
    if (!(flags & VK_QUEUE_COMPUTE_BIT) || families[i].queueCount == 0)
      continue;
    if (best == UINT32_MAX || !(flags & VK_QUEUE_GRAPHICS_BIT))
      best = i;
    if (!(flags & VK_QUEUE_GRAPHICS_BIT))
      break;
  }
  *timestamp_bits = best == UINT32_MAX ? 0 : families[best].timestampValidBits;
  free(families);
  return best;
}

/* Workgroups of up to 256 invocations (the largest dmlc's reductions use)
 * that keep the device busy: its compute units times the groups each holds
 * at once. Units come from the device where it reports them (NVIDIA's SM
 * count, AMD's compute units, a CPU device's host cores); a GPU that does
 * not report them is taken to have FALLBACK_UNITS. A unit holds what the
 * device says it keeps resident (warps per SM, wavefronts per SIMD), else
 * 32 subgroups; a CPU core takes CPU_GROUPS_PER_CORE groups, so that
 * cores finishing early find work. At most maxComputeWorkGroupCount[0]. */
enum { SPLIT_GROUP_INVOCATIONS = 256, FALLBACK_UNITS = 64, CPU_GROUPS_PER_CORE = 4 };

/* Whether the test switch `name` is set: any value but "" and "0". */
static bool env_flag(const char *name) {
  const char *v = getenv(name);
  return v && *v && strcmp(v, "0") != 0;
}

/* Whether plans are made as for a CPU device: a CPU device, or any device
 * under DMLC_VULKAN_CPU_PLANS=1, so that tests run the CPU device's lone
 * paths (docs/api.md) on a GPU too. */
static bool cpu_plans(const vk_physical *p) {
  return p->props.properties.deviceType == VK_PHYSICAL_DEVICE_TYPE_CPU ||
         env_flag("DMLC_VULKAN_CPU_PLANS");
}

static uint32_t fill_groups_of(const vk_physical *p) {
  const VkPhysicalDeviceLimits *limits = &p->props.properties.limits;
  const uint32_t sg = p->subgroup.subgroupSize ? p->subgroup.subgroupSize : 32;
  uint64_t units = 0, resident = 0, groups;
  if (p->nv_sm.shaderSMCount) {
    units = p->nv_sm.shaderSMCount;
    resident = (uint64_t)p->nv_sm.shaderWarpsPerSM * sg;
  } else if (p->amd_core.shaderEngineCount) {
    const VkPhysicalDeviceShaderCorePropertiesAMD *a = &p->amd_core;
    units = (uint64_t)a->shaderEngineCount * a->shaderArraysPerEngineCount *
            a->computeUnitsPerShaderArray;
    resident = (uint64_t)a->simdPerComputeUnit * a->wavefrontsPerSimd * a->wavefrontSize;
  }
  if (cpu_plans(p)) {
    const long cores = sysconf(_SC_NPROCESSORS_ONLN);
    groups = (uint64_t)(cores > 0 ? cores : 1) * CPU_GROUPS_PER_CORE;
  } else {
    if (!units)
      units = FALLBACK_UNITS;
    if (!resident)
      resident = 32 * (uint64_t)sg;
    const uint64_t per = resident / SPLIT_GROUP_INVOCATIONS;
    groups = units * (per ? per : 1);
  }
  if (groups > limits->maxComputeWorkGroupCount[0])
    groups = limits->maxComputeWorkGroupCount[0];
  return (uint32_t)groups;
}

/* Where fill_groups_of found the device's compute units. */
static const char *fill_source(const vk_physical *p) {
  if (cpu_plans(p))
    return "host cores";
  if (p->nv_sm.shaderSMCount)
    return "SM count";
  if (p->amd_core.shaderEngineCount)
    return "compute units";
  return "compute units not reported: a guess";
}

static dmlc_spirv_caps caps_of(const vk_physical *p) {
  const VkPhysicalDeviceLimits *limits = &p->props.properties.limits;
  dmlc_spirv_caps caps = {0};
  caps.max_workgroup_size =
      limits->maxComputeWorkGroupSize[0] < limits->maxComputeWorkGroupInvocations
          ? limits->maxComputeWorkGroupSize[0]
          : limits->maxComputeWorkGroupInvocations;
  caps.max_workgroup_count = limits->maxComputeWorkGroupCount[0];
  caps.max_shared_bytes = limits->maxComputeSharedMemorySize;
  const bool subgroups = (p->subgroup.supportedStages & VK_SHADER_STAGE_COMPUTE_BIT) &&
                         (p->subgroup.supportedOperations & VK_SUBGROUP_FEATURE_BASIC_BIT);
  /* Code may be generated for the one subgroup size reported: only claim
   * subgroups when that is the size compute shaders get, either because the
   * device has one size or because each pipeline can require it. */
  const bool one_size =
      !p->is_13 || p->size_control.minSubgroupSize == p->size_control.maxSubgroupSize;
  if (subgroups && (one_size || p->pin_subgroup_size)) {
    caps.subgroup_size = p->subgroup.subgroupSize;
    caps.subgroup_arithmetic =
        (p->subgroup.supportedOperations & VK_SUBGROUP_FEATURE_ARITHMETIC_BIT) != 0;
    caps.subgroup_shuffle =
        (p->subgroup.supportedOperations & VK_SUBGROUP_FEATURE_SHUFFLE_BIT) != 0;
  }
  caps.shader_int64 = p->features.features.shaderInt64;
  caps.shader_int16 = p->features.features.shaderInt16;
  caps.shader_int8 = p->v12.shaderInt8;
  caps.shader_float16 = p->v12.shaderFloat16;
  caps.storage_8bit = p->v12.storageBuffer8BitAccess;
  caps.storage_16bit = p->v11.storageBuffer16BitAccess;
  /* Buffers beyond one descriptor's reach are bound as windows; indexed per
   * invocation where the device can, else by a switch per access. */
  caps.max_storage_range = limits->maxStorageBufferRange;
  caps.max_storage_buffers =
      limits->maxPerStageDescriptorStorageBuffers < limits->maxDescriptorSetStorageBuffers
          ? limits->maxPerStageDescriptorStorageBuffers
          : limits->maxDescriptorSetStorageBuffers;
  caps.storage_buffer_array_nonuniform =
      p->features.features.shaderStorageBufferArrayDynamicIndexing &&
      p->v12.shaderStorageBufferArrayNonUniformIndexing;
  caps.fill_groups = fill_groups_of(p);
  caps.cpu_device = cpu_plans(p);
  caps.fill_zeros = true; /* record_kernel fills each module's zero_fill outputs */
  /* DMLC_VULKAN_FORCE_SPLIT=1 (any value but "" and "0"): split every
   * reduction into parts of a few points, so that tests run the split's
   * code (partials, the finish's merge) on small inputs. */
  caps.force_split = env_flag("DMLC_VULKAN_FORCE_SPLIT");
  /* DMLC_VULKAN_STORAGE_RANGE=bytes: use at most this much of one
   * descriptor's reach, so that tests run windowed buffers on any device. */
  const char *range = getenv("DMLC_VULKAN_STORAGE_RANGE");
  if (range && *range) {
    char *end = NULL;
    const unsigned long long r = strtoull(range, &end, 10);
    if (end && !*end && r >= 4 && r < caps.max_storage_range)
      caps.max_storage_range = r;
  }
  /* DMLC_VULKAN_PORTABLE=1 (any value but "" and "0"): generate the
   * portable code, as for a device without these features (32-bit words,
   * unpacked; 64-bit values as word pairs), and enable none of them. */
  if (env_flag("DMLC_VULKAN_PORTABLE")) {
    caps.shader_int64 = caps.shader_int16 = caps.shader_int8 = caps.shader_float16 = false;
    caps.storage_8bit = caps.storage_16bit = false;
  }
  return caps;
}

/* Whether the physical device offers the device extension name. */
static bool has_extension(const dmlc_vk_instance *inst, VkPhysicalDevice pd, const char *name) {
  uint32_t n = 0;
  if (inst->fn.vkEnumerateDeviceExtensionProperties(pd, NULL, &n, NULL) != VK_SUCCESS || !n)
    return false;
  VkExtensionProperties *ext = calloc(n, sizeof *ext);
  bool found = false;
  if (ext && inst->fn.vkEnumerateDeviceExtensionProperties(pd, NULL, &n, ext) == VK_SUCCESS)
    for (uint32_t i = 0; i < n && !found; i++)
      found = strcmp(ext[i].extensionName, name) == 0;
  free(ext);
  return found;
}

static void physical_query(const dmlc_vk_instance *inst, VkPhysicalDevice pd, vk_physical *p) {
  memset(p, 0, sizeof *p);
  p->handle = pd;
  inst->fn.vkGetPhysicalDeviceProperties(pd, &p->props.properties);
  p->is_13 = p->props.properties.apiVersion >= VK_API_VERSION_1_3 &&
             inst->api_version >= VK_API_VERSION_1_3;
  p->queue_family = find_compute_queue(inst, pd, &p->timestamp_valid_bits);
  if (p->props.properties.apiVersion < VK_API_VERSION_1_2) {
    p->unsuitable = "it supports Vulkan 1.1 at most; dmlc needs 1.2";
    return;
  }
  if (p->queue_family == UINT32_MAX) {
    p->unsuitable = "it has no compute queue";
    return;
  }
  p->props.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2;
  p->props.pNext = &p->subgroup;
  p->subgroup.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SUBGROUP_PROPERTIES;
  p->subgroup.pNext = &p->driver;
  p->driver.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_DRIVER_PROPERTIES;
  p->size_control.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SUBGROUP_SIZE_CONTROL_PROPERTIES;
  void **tail = &p->driver.pNext;
  if (p->is_13) {
    *tail = &p->size_control;
    tail = &p->size_control.pNext;
  }
  p->nv_sm.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_SM_BUILTINS_PROPERTIES_NV;
  p->amd_core.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_CORE_PROPERTIES_AMD;
  if (has_extension(inst, pd, VK_NV_SHADER_SM_BUILTINS_EXTENSION_NAME)) {
    *tail = &p->nv_sm;
    tail = &p->nv_sm.pNext;
  }
  if (has_extension(inst, pd, VK_AMD_SHADER_CORE_PROPERTIES_EXTENSION_NAME)) {
    *tail = &p->amd_core;
    tail = &p->amd_core.pNext;
  }
  inst->fn.vkGetPhysicalDeviceProperties2(pd, &p->props);

  p->features.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2;
  p->features.pNext = &p->v11;
  p->v11.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_1_FEATURES;
  p->v11.pNext = &p->v12;
  p->v12.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES;
  p->v13.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_3_FEATURES;
  if (p->is_13)
    p->v12.pNext = &p->v13;
  inst->fn.vkGetPhysicalDeviceFeatures2(pd, &p->features);
  /* The chains pointed into this struct; nothing may follow them once it
   * is copied. */
  p->props.pNext = p->subgroup.pNext = p->driver.pNext = p->size_control.pNext = NULL;
  p->nv_sm.pNext = p->amd_core.pNext = NULL;
  p->features.pNext = p->v11.pNext = p->v12.pNext = p->v13.pNext = NULL;

  const uint32_t size = p->subgroup.subgroupSize;
  p->pin_subgroup_size =
      p->is_13 && p->v13.subgroupSizeControl &&
      (p->size_control.requiredSubgroupSizeStages & VK_SHADER_STAGE_COMPUTE_BIT) &&
      size >= p->size_control.minSubgroupSize && size <= p->size_control.maxSubgroupSize;
  p->caps = caps_of(p);
}

/* Every physical device, in the loader's order (the order
 * DMLC_VULKAN_DEVICE indexes). */
static dmlc_status physical_list(const dmlc_vk_instance *inst, vk_physical **out, uint32_t *count,
                                 dmlc_diag *diag) {
  *out = NULL;
  *count = 0;
  uint32_t n = 0;
  DMLC_VK_CHECK(diag, inst->fn.vkEnumeratePhysicalDevices(inst->instance, &n, NULL),
                "vkEnumeratePhysicalDevices");
  if (n == 0)
    return dmlc_diag_set(diag, DMLC_ERROR_DEVICE,
                         "Vulkan: no Vulkan device found (the loader found no driver with a "
                         "device); install one, e.g. Mesa's lavapipe (mesa-vulkan-drivers)");
  VkPhysicalDevice *handles = calloc(n, sizeof *handles);
  vk_physical *list = calloc(n, sizeof *list);
  if (!handles || !list) {
    free(handles);
    free(list);
    return dmlc_diag_set(diag, DMLC_ERROR_OUT_OF_MEMORY, "out of memory listing Vulkan devices");
  }
  VkResult r = inst->fn.vkEnumeratePhysicalDevices(inst->instance, &n, handles);
  if (r != VK_SUCCESS && r != VK_INCOMPLETE) {
    free(handles);
    free(list);
    return dmlc_vk_fail(diag, r, "vkEnumeratePhysicalDevices");
  }
  for (uint32_t i = 0; i < n; i++)
    physical_query(inst, handles[i], &list[i]);
  free(handles);
  *out = list;
  *count = n;
  return DMLC_OK;
}

static bool is_index(const char *s) {
  if (!*s)
    return false;
  for (; *s; s++)
    if (!isdigit((unsigned char)*s))
      return false;
  return true;
}

/* "0: llvmpipe (...), 1: ..." into buf. */
static void list_names(const vk_physical *list, uint32_t n, char *buf, size_t size) {
  size_t len = 0;
  buf[0] = '\0';
  for (uint32_t i = 0; i < n && len < size; i++)
    len += (size_t)snprintf(buf + len, size - len, "%s%" PRIu32 ": %s", i ? ", " : "", i,
                            list[i].props.properties.deviceName);
}

/* The device DMLC_VULKAN_DEVICE names (want non-NULL and non-empty), or the
 * best suitable one: discrete, integrated, virtual, then CPU. */
static dmlc_status physical_choose(const vk_physical *list, uint32_t n, const char *want,
                                   uint32_t *out, dmlc_diag *diag) {
  char names[512];
  list_names(list, n, names, sizeof names);
  uint32_t chosen = UINT32_MAX;
  if (want && *want) {
    if (is_index(want)) {
      const unsigned long index = strtoul(want, NULL, 10);
      if (index >= n)
        return dmlc_diag_set(diag, DMLC_ERROR_DEVICE,
                             "Vulkan: DMLC_VULKAN_DEVICE=%s: no such device (devices: %s)", want,
                             names);
      chosen = (uint32_t)index;
    } else {
      for (uint32_t i = 0; i < n && chosen == UINT32_MAX; i++)
        if (strcasestr(list[i].props.properties.deviceName, want))
          chosen = i;
      if (chosen == UINT32_MAX)
        return dmlc_diag_set(diag, DMLC_ERROR_DEVICE,
                             "Vulkan: DMLC_VULKAN_DEVICE=%s matches no device name (devices: %s)",
                             want, names);
    }
    if (list[chosen].unsuitable)
      return dmlc_diag_set(
          diag, DMLC_ERROR_DEVICE,
          "Vulkan: DMLC_VULKAN_DEVICE=%s names device %" PRIu32 " (%s), which dmlc cannot use: %s",
          want, chosen, list[chosen].props.properties.deviceName, list[chosen].unsuitable);
    *out = chosen;
    return DMLC_OK;
  }
  for (uint32_t i = 0; i < n; i++) {
    if (list[i].unsuitable)
      continue;
    if (chosen == UINT32_MAX || device_type_rank(list[i].props.properties.deviceType) <
                                    device_type_rank(list[chosen].props.properties.deviceType))
      chosen = i;
  }
  if (chosen == UINT32_MAX)
    return dmlc_diag_set(diag, DMLC_ERROR_DEVICE,
                         "Vulkan: no Vulkan device dmlc can use (it needs Vulkan 1.2 and a "
                         "compute queue; devices: %s)",
                         names);
  *out = chosen;
  return DMLC_OK;
}

/* ---- the device ---- */

static dmlc_status device_create(dmlc_vk_device *dev, const vk_physical *p, dmlc_diag *diag) {
  const dmlc_vk_fns *fn = &dev->inst.fn;
  dev->physical = p->handle;
  dev->props = p->props.properties;
  dev->queue_family = p->queue_family;
  dev->timestamp_valid_bits = p->timestamp_valid_bits;
  dev->pin_subgroup_size = p->pin_subgroup_size;
  dev->max_subgroups_per_workgroup = p->size_control.maxComputeWorkgroupSubgroups;
  dev->caps = p->caps;
  /* DMLC_VULKAN_UNMAPPED=1 (any value but "" and "0"): map no
   * device-local memory, so that tests run a discrete GPU's path (staging
   * buffers, fills on the device) on a device whose memory the host sees. */
  dev->unmapped = env_flag("DMLC_VULKAN_UNMAPPED");
  snprintf(dev->name, sizeof dev->name, "%s", p->props.properties.deviceName);
  fn->vkGetPhysicalDeviceMemoryProperties(p->handle, &dev->memory);

  /* Enable exactly what the caps report (and f64 where present, which
   * costs nothing and serves f64 tensors). */
  VkPhysicalDeviceVulkan13Features v13 = {
      .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_3_FEATURES,
      .subgroupSizeControl = p->pin_subgroup_size,
  };
  VkPhysicalDeviceVulkan12Features v12 = {
      .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES,
      .pNext = p->is_13 ? &v13 : NULL,
      .storageBuffer8BitAccess = p->caps.storage_8bit,
      .shaderInt8 = p->caps.shader_int8,
      .shaderFloat16 = p->caps.shader_float16,
      .shaderStorageBufferArrayNonUniformIndexing = p->caps.storage_buffer_array_nonuniform,
  };
  VkPhysicalDeviceVulkan11Features v11 = {
      .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_1_FEATURES,
      .pNext = &v12,
      .storageBuffer16BitAccess = p->caps.storage_16bit,
  };
  VkPhysicalDeviceFeatures2 features = {
      .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2,
      .pNext = &v11,
      .features = {.shaderInt64 = p->caps.shader_int64,
                   .shaderInt16 = p->caps.shader_int16,
                   .shaderFloat64 = p->features.features.shaderFloat64,
                   .shaderStorageBufferArrayDynamicIndexing =
                       p->caps.storage_buffer_array_nonuniform},
  };
  const float priority = 1.0f;
  const VkDeviceQueueCreateInfo queue = {
      .sType = VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO,
      .queueFamilyIndex = p->queue_family,
      .queueCount = 1,
      .pQueuePriorities = &priority,
  };
  const VkDeviceCreateInfo info = {
      .sType = VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO,
      .pNext = &features,
      .queueCreateInfoCount = 1,
      .pQueueCreateInfos = &queue,
  };
  DMLC_VK_CHECK(diag, fn->vkCreateDevice(p->handle, &info, NULL, &dev->device), "vkCreateDevice");
#define X(name)                                                                                    \
  dev->inst.fn.name = (PFN_##name)fn->vkGetDeviceProcAddr(dev->device, #name);                     \
  if (!dev->inst.fn.name)                                                                          \
    return dmlc_diag_set(diag, DMLC_ERROR_DEVICE, "Vulkan: the device lacks %s", #name);
  DMLC_VK_DEVICE_FUNCTIONS(X)
#undef X
  fn->vkGetDeviceQueue(dev->device, p->queue_family, 0, &dev->queue);
  const VkCommandPoolCreateInfo pool = {
      .sType = VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO,
      /* Tensor-bound command buffers are recorded again when their tensors
       * change. */
      .flags = VK_COMMAND_POOL_CREATE_RESET_COMMAND_BUFFER_BIT,
      .queueFamilyIndex = p->queue_family,
  };
  DMLC_VK_CHECK(diag, fn->vkCreateCommandPool(dev->device, &pool, NULL, &dev->command_pool),
                "vkCreateCommandPool");
  const VkPipelineCacheCreateInfo cache = {.sType = VK_STRUCTURE_TYPE_PIPELINE_CACHE_CREATE_INFO};
  DMLC_VK_CHECK(diag, fn->vkCreatePipelineCache(dev->device, &cache, NULL, &dev->pipeline_cache),
                "vkCreatePipelineCache");
  return DMLC_OK;
}

dmlc_status dmlc_vk_device_open(dmlc_vk_device **out, dmlc_diag *diag) {
  *out = NULL;
  dmlc_vk_device *dev = calloc(1, sizeof *dev);
  if (!dev)
    return dmlc_diag_set(diag, DMLC_ERROR_OUT_OF_MEMORY, "out of memory opening Vulkan");
  vk_physical *list = NULL;
  uint32_t n = 0, chosen = 0;
  dmlc_status status = instance_create(&dev->inst, &dev->messages, diag);
  if (status == DMLC_OK)
    status = physical_list(&dev->inst, &list, &n, diag);
  if (status == DMLC_OK)
    status = physical_choose(list, n, getenv("DMLC_VULKAN_DEVICE"), &chosen, diag);
  if (status == DMLC_OK)
    status = device_create(dev, &list[chosen], diag);
  if (status == DMLC_OK)
    status = messages_check(&dev->messages, diag);
  free(list);
  if (status != DMLC_OK) {
    dmlc_vk_device_close(dev);
    return status;
  }
  *out = dev;
  return DMLC_OK;
}

void dmlc_vk_device_close(dmlc_vk_device *dev) {
  if (!dev)
    return;
  const dmlc_vk_fns *fn = &dev->inst.fn;
  if (dev->device) {
    dmlc_vk_kernel_cache_destroy(dev);
    if (dev->pipeline_cache)
      fn->vkDestroyPipelineCache(dev->device, dev->pipeline_cache, NULL);
    if (dev->command_pool)
      fn->vkDestroyCommandPool(dev->device, dev->command_pool, NULL);
    fn->vkDestroyDevice(dev->device, NULL);
  }
  instance_destroy(&dev->inst);
  /* Nothing is left to return these through; say them rather than lose
   * them. */
  if (dev->messages.count != dev->messages.reported)
    fprintf(stderr, "dmlc: Vulkan validation while closing the device: %s\n", dev->messages.first);
  free(dev);
}

const dmlc_spirv_caps *dmlc_vk_device_caps(const dmlc_vk_device *dev) { return &dev->caps; }

const char *dmlc_vk_device_name(const dmlc_vk_device *dev) { return dev->name; }

/* ---- describe ---- */

static void describe_one(dmlc_strbuf *t, const vk_physical *p, uint32_t index, bool selected) {
  const VkPhysicalDeviceProperties *pr = &p->props.properties;
  dmlc_strbuf_printf(t, "vulkan %" PRIu32 ": %s (%s, Vulkan %u.%u.%u", index, pr->deviceName,
                     device_type_name(pr->deviceType), VK_API_VERSION_MAJOR(pr->apiVersion),
                     VK_API_VERSION_MINOR(pr->apiVersion), VK_API_VERSION_PATCH(pr->apiVersion));
  if (p->driver.driverName[0])
    dmlc_strbuf_printf(t, ", %s %s", p->driver.driverName, p->driver.driverInfo);
  dmlc_strbuf_printf(t, ")%s\n", selected ? " [selected]" : "");
  if (p->unsuitable) {
    dmlc_strbuf_printf(t, "  not usable: %s\n", p->unsuitable);
    return;
  }
  const dmlc_spirv_caps *c = &p->caps;
  dmlc_strbuf_printf(t,
                     "  workgroup size %" PRIu32 ", count %" PRIu32 ", shared memory %" PRIu32
                     " bytes, storage range %" PRIu32 " bytes%s\n",
                     c->max_workgroup_size, c->max_workgroup_count, c->max_shared_bytes,
                     pr->limits.maxStorageBufferRange,
                     c->storage_buffer_array_nonuniform ? " (larger buffers: indexed windows)"
                                                        : " (larger buffers: switched windows)");
  if (c->subgroup_size)
    dmlc_strbuf_printf(t, "  subgroup size %" PRIu32 "%s%s%s\n", c->subgroup_size,
                       c->subgroup_arithmetic ? ", arithmetic" : "",
                       c->subgroup_shuffle ? ", shuffle" : "",
                       p->pin_subgroup_size ? ", pinned per pipeline" : "");
  else
    dmlc_strbuf_printf(t, "  subgroups: not used\n");
  dmlc_strbuf_printf(t, "  split reductions: %s%" PRIu32 " workgroups fill it (%s)\n",
                     c->force_split ? "forced (DMLC_VULKAN_FORCE_SPLIT); " : "", c->fill_groups,
                     fill_source(p));
  dmlc_strbuf_printf(
      t, "  shader types:%s%s%s%s%s; storage:%s%s\n", c->shader_int64 ? " int64" : "",
      c->shader_int16 ? " int16" : "", c->shader_int8 ? " int8" : "",
      c->shader_float16 ? " float16" : "", p->features.features.shaderFloat64 ? " float64" : "",
      c->storage_8bit ? " 8-bit" : " no 8-bit", c->storage_16bit ? " 16-bit" : " no 16-bit");
  if (p->timestamp_valid_bits)
    dmlc_strbuf_printf(t, "  timestamps: %" PRIu32 " bits, %.3g ns per tick\n",
                       p->timestamp_valid_bits, (double)pr->limits.timestampPeriod);
  else
    dmlc_strbuf_printf(t, "  timestamps: none\n");
}

dmlc_status dmlc_vk_describe_devices(char **out_text, dmlc_diag *diag) {
  *out_text = NULL;
  dmlc_vk_messages messages = {0};
  dmlc_vk_instance inst;
  vk_physical *list = NULL;
  uint32_t n = 0;
  dmlc_status status = instance_create(&inst, &messages, diag);
  if (status == DMLC_OK)
    status = physical_list(&inst, &list, &n, diag);
  if (status != DMLC_OK) {
    instance_destroy(&inst);
    return status;
  }
  const char *want = getenv("DMLC_VULKAN_DEVICE");
  dmlc_diag choice = {0};
  uint32_t chosen = UINT32_MAX;
  if (physical_choose(list, n, want, &chosen, &choice) != DMLC_OK)
    chosen = UINT32_MAX;
  dmlc_strbuf t = {0};
  for (uint32_t i = 0; i < n; i++)
    describe_one(&t, &list[i], i, i == chosen);
  if (chosen == UINT32_MAX)
    dmlc_strbuf_printf(&t, "no device selected: %s\n", choice.message);
  free(list);
  instance_destroy(&inst);
  status = messages_check(&messages, diag);
  if (status != DMLC_OK) {
    dmlc_strbuf_free(&t);
    return status;
  }
  *out_text = dmlc_strbuf_finish(&t);
  return *out_text
             ? DMLC_OK
             : dmlc_diag_set(diag, DMLC_ERROR_OUT_OF_MEMORY, "out of memory describing devices");
}
