/* A Vulkan application around the modules of `dmlc compile --emit=spirv`,
 * for tests/tool/compile_spirv.sh: it binds and dispatches them the way
 * docs/aot.md ("SPIR-V") says, from what the metadata's "spirv" section
 * holds (the script turns the JSON into the plain description below), so
 * that its outputs matching the reference device proves the metadata is
 * enough. Built with cc against -lvulkan; runs on any Vulkan 1.2 device
 * (lavapipe here).
 *
 *   spirv_driver DESCRIPTION
 *
 * DESCRIPTION, whitespace-separated:
 *
 *   buffers N
 *   N times:  BYTES IN OUT      a buffer (the graph's inputs, outputs,
 *                               temporaries, then any others, in the order
 *                               the bindings below number them): BYTES as
 *                               the metadata says, filled from the file IN
 *                               (BYTES raw bytes; - for zeros) and written
 *                               to the file OUT after the run (- for not)
 *   kernels K
 *   K times:  SPV ENTRY WORKGROUPS PER_DISPATCH NBINDINGS
 *             NBINDINGS times:  BUFFER COUNT WINDOW_BYTES
 *
 * Every buffer is allocated at BYTES rounded up to a multiple of 4 (at
 * least 4); binding b of a kernel is descriptor set 0, binding b, COUNT
 * storage-buffer descriptors: one over the whole buffer when COUNT is 1
 * and WINDOW_BYTES 0, else descriptor j at offset j * WINDOW_BYTES with
 * range min(WINDOW_BYTES, size - offset) (a window past the end points at
 * the last window-aligned bytes). Kernels run in order with a barrier
 * between them; each dispatches WORKGROUPS groups in chunks of at most
 * PER_DISPATCH, pushing the chunk's first group as a uint32 at offset 0.
 * Exit 0 when everything worked. */
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <vulkan/vulkan.h>

#define MAX_BINDINGS 8
#define MAX_WINDOWS 256

static void die(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  fputs("spirv_driver: ", stderr);
  vfprintf(stderr, fmt, ap);
  fputc('\n', stderr);
  va_end(ap);
  exit(1);
}

#define VK(call)                                                                                   \
  do {                                                                                             \
    const VkResult r_ = (call);                                                                    \
    if (r_ != VK_SUCCESS)                                                                          \
      die("%s failed: %d", #call, (int)r_);                                                        \
  } while (0)

typedef struct buffer {
  uint64_t bytes, size;
  char in[4096], out[4096];
  VkBuffer buffer;
  VkDeviceMemory memory;
  void *mapped;
} buffer;

typedef struct binding {
  uint32_t buffer, count;
  uint64_t window;
} binding;

typedef struct kernel {
  char spv[4096], entry[256];
  uint64_t workgroups, per_dispatch;
  uint32_t num_bindings;
  binding bindings[MAX_BINDINGS];
  VkShaderModule shader;
  VkDescriptorSetLayout set_layout;
  VkPipelineLayout layout;
  VkPipeline pipeline;
  VkDescriptorSet set;
} kernel;

static void *read_file(const char *path, size_t *size) {
  FILE *f = fopen(path, "rb");
  if (!f)
    die("%s: cannot open", path);
  fseek(f, 0, SEEK_END);
  const long n = ftell(f);
  fseek(f, 0, SEEK_SET);
  void *data = malloc(n > 0 ? (size_t)n : 1);
  if (!data || fread(data, 1, (size_t)n, f) != (size_t)n)
    die("%s: cannot read", path);
  fclose(f);
  *size = (size_t)n;
  return data;
}

static void expect(FILE *f, const char *word) {
  char got[64];
  if (fscanf(f, "%63s", got) != 1 || strcmp(got, word) != 0)
    die("description: expected '%s'", word);
}

static uint32_t memory_type(const VkPhysicalDeviceMemoryProperties *props, uint32_t bits,
                            VkMemoryPropertyFlags want) {
  for (uint32_t i = 0; i < props->memoryTypeCount; i++)
    if ((bits >> i & 1) && (props->memoryTypes[i].propertyFlags & want) == want)
      return i;
  die("no host-visible, coherent memory for a storage buffer");
  return 0;
}

int main(int argc, char **argv) {
  if (argc != 2)
    die("usage: spirv_driver DESCRIPTION");
  FILE *f = fopen(argv[1], "r");
  if (!f)
    die("%s: cannot open", argv[1]);
  uint32_t num_buffers = 0, num_kernels = 0;
  expect(f, "buffers");
  if (fscanf(f, "%" SCNu32, &num_buffers) != 1 || num_buffers == 0 || num_buffers > 64)
    die("description: bad buffer count");
  buffer *buffers = calloc(num_buffers, sizeof *buffers);
  for (uint32_t i = 0; i < num_buffers; i++) {
    buffer *b = &buffers[i];
    if (fscanf(f, "%" SCNu64 " %4095s %4095s", &b->bytes, b->in, b->out) != 3)
      die("description: bad buffer %" PRIu32, i);
    b->size = b->bytes < 4 ? 4 : (b->bytes + 3) & ~(uint64_t)3;
  }
  expect(f, "kernels");
  if (fscanf(f, "%" SCNu32, &num_kernels) != 1 || num_kernels > 64)
    die("description: bad kernel count");
  kernel *kernels = calloc(num_kernels ? num_kernels : 1, sizeof *kernels);
  for (uint32_t k = 0; k < num_kernels; k++) {
    kernel *kn = &kernels[k];
    if (fscanf(f, "%4095s %255s %" SCNu64 " %" SCNu64 " %" SCNu32, kn->spv, kn->entry,
               &kn->workgroups, &kn->per_dispatch, &kn->num_bindings) != 5 ||
        kn->num_bindings == 0 || kn->num_bindings > MAX_BINDINGS || kn->per_dispatch == 0)
      die("description: bad kernel %" PRIu32, k);
    for (uint32_t b = 0; b < kn->num_bindings; b++) {
      binding *bd = &kn->bindings[b];
      if (fscanf(f, "%" SCNu32 " %" SCNu32 " %" SCNu64, &bd->buffer, &bd->count, &bd->window) !=
              3 ||
          bd->buffer >= num_buffers || bd->count == 0 || bd->count > MAX_WINDOWS ||
          (bd->count > 1 && bd->window == 0))
        die("description: bad binding %" PRIu32 " of kernel %" PRIu32, b, k);
    }
  }
  fclose(f);

  /* The instance and the first device with a compute queue. */
  const VkApplicationInfo app = {
      .sType = VK_STRUCTURE_TYPE_APPLICATION_INFO,
      .pApplicationName = "spirv_driver",
      .apiVersion = VK_API_VERSION_1_2,
  };
  const VkInstanceCreateInfo instance_info = {
      .sType = VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO,
      .pApplicationInfo = &app,
  };
  VkInstance instance;
  VK(vkCreateInstance(&instance_info, NULL, &instance));
  uint32_t num_devices = 0;
  VK(vkEnumeratePhysicalDevices(instance, &num_devices, NULL));
  VkPhysicalDevice devices[16];
  if (num_devices > 16)
    num_devices = 16;
  VK(vkEnumeratePhysicalDevices(instance, &num_devices, devices));
  VkPhysicalDevice phys = VK_NULL_HANDLE;
  uint32_t family = 0;
  for (uint32_t d = 0; d < num_devices && !phys; d++) {
    VkPhysicalDeviceProperties props;
    vkGetPhysicalDeviceProperties(devices[d], &props);
    if (props.apiVersion < VK_API_VERSION_1_2)
      continue;
    uint32_t n = 0;
    vkGetPhysicalDeviceQueueFamilyProperties(devices[d], &n, NULL);
    VkQueueFamilyProperties families[16];
    if (n > 16)
      n = 16;
    vkGetPhysicalDeviceQueueFamilyProperties(devices[d], &n, families);
    for (uint32_t q = 0; q < n && !phys; q++)
      if (families[q].queueFlags & VK_QUEUE_COMPUTE_BIT) {
        phys = devices[d];
        family = q;
      }
  }
  if (!phys)
    die("no Vulkan 1.2 device with a compute queue");
  VkPhysicalDeviceProperties props;
  vkGetPhysicalDeviceProperties(phys, &props);
  const float priority = 1.0f;
  const VkDeviceQueueCreateInfo queue_info = {
      .sType = VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO,
      .queueFamilyIndex = family,
      .queueCount = 1,
      .pQueuePriorities = &priority,
  };
  const VkDeviceCreateInfo device_info = {
      .sType = VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO,
      .queueCreateInfoCount = 1,
      .pQueueCreateInfos = &queue_info,
  };
  VkDevice device;
  VK(vkCreateDevice(phys, &device_info, NULL, &device));
  VkQueue queue;
  vkGetDeviceQueue(device, family, 0, &queue);
  VkPhysicalDeviceMemoryProperties memory_props;
  vkGetPhysicalDeviceMemoryProperties(phys, &memory_props);

  /* Buffers: host-visible and coherent, so no staging. */
  for (uint32_t i = 0; i < num_buffers; i++) {
    buffer *b = &buffers[i];
    const VkBufferCreateInfo info = {
        .sType = VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO,
        .size = b->size,
        .usage = VK_BUFFER_USAGE_STORAGE_BUFFER_BIT,
        .sharingMode = VK_SHARING_MODE_EXCLUSIVE,
    };
    VK(vkCreateBuffer(device, &info, NULL, &b->buffer));
    VkMemoryRequirements req;
    vkGetBufferMemoryRequirements(device, b->buffer, &req);
    const VkMemoryAllocateInfo alloc = {
        .sType = VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO,
        .allocationSize = req.size,
        .memoryTypeIndex =
            memory_type(&memory_props, req.memoryTypeBits,
                        VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT),
    };
    VK(vkAllocateMemory(device, &alloc, NULL, &b->memory));
    VK(vkBindBufferMemory(device, b->buffer, b->memory, 0));
    VK(vkMapMemory(device, b->memory, 0, VK_WHOLE_SIZE, 0, &b->mapped));
    memset(b->mapped, 0, (size_t)b->size);
    if (strcmp(b->in, "-") != 0) {
      size_t n = 0;
      void *data = read_file(b->in, &n);
      if (n != b->bytes)
        die("%s: %zu bytes, buffer %" PRIu32 " has %" PRIu64, b->in, n, i, b->bytes);
      memcpy(b->mapped, data, n);
      free(data);
    }
  }

  /* Pipelines and descriptor sets, one per kernel. */
  uint32_t descriptors = 0;
  for (uint32_t k = 0; k < num_kernels; k++)
    for (uint32_t b = 0; b < kernels[k].num_bindings; b++)
      descriptors += kernels[k].bindings[b].count;
  const VkDescriptorPoolSize pool_size = {VK_DESCRIPTOR_TYPE_STORAGE_BUFFER,
                                          descriptors ? descriptors : 1};
  const VkDescriptorPoolCreateInfo pool_info = {
      .sType = VK_STRUCTURE_TYPE_DESCRIPTOR_POOL_CREATE_INFO,
      .maxSets = num_kernels ? num_kernels : 1,
      .poolSizeCount = 1,
      .pPoolSizes = &pool_size,
  };
  VkDescriptorPool pool;
  VK(vkCreateDescriptorPool(device, &pool_info, NULL, &pool));
  for (uint32_t k = 0; k < num_kernels; k++) {
    kernel *kn = &kernels[k];
    size_t code_size = 0;
    void *code = read_file(kn->spv, &code_size);
    const VkShaderModuleCreateInfo shader = {
        .sType = VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO,
        .codeSize = code_size,
        .pCode = code,
    };
    VK(vkCreateShaderModule(device, &shader, NULL, &kn->shader));
    free(code);
    VkDescriptorSetLayoutBinding layout_bindings[MAX_BINDINGS];
    for (uint32_t b = 0; b < kn->num_bindings; b++)
      layout_bindings[b] = (VkDescriptorSetLayoutBinding){
          .binding = b,
          .descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER,
          .descriptorCount = kn->bindings[b].count,
          .stageFlags = VK_SHADER_STAGE_COMPUTE_BIT,
      };
    const VkDescriptorSetLayoutCreateInfo set_info = {
        .sType = VK_STRUCTURE_TYPE_DESCRIPTOR_SET_LAYOUT_CREATE_INFO,
        .bindingCount = kn->num_bindings,
        .pBindings = layout_bindings,
    };
    VK(vkCreateDescriptorSetLayout(device, &set_info, NULL, &kn->set_layout));
    const VkPushConstantRange push = {VK_SHADER_STAGE_COMPUTE_BIT, 0, sizeof(uint32_t)};
    const VkPipelineLayoutCreateInfo layout_info = {
        .sType = VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO,
        .setLayoutCount = 1,
        .pSetLayouts = &kn->set_layout,
        .pushConstantRangeCount = 1,
        .pPushConstantRanges = &push,
    };
    VK(vkCreatePipelineLayout(device, &layout_info, NULL, &kn->layout));
    const VkComputePipelineCreateInfo pipeline_info = {
        .sType = VK_STRUCTURE_TYPE_COMPUTE_PIPELINE_CREATE_INFO,
        .stage =
            {
                .sType = VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO,
                .stage = VK_SHADER_STAGE_COMPUTE_BIT,
                .module = kn->shader,
                .pName = kn->entry,
            },
        .layout = kn->layout,
    };
    VK(vkCreateComputePipelines(device, VK_NULL_HANDLE, 1, &pipeline_info, NULL, &kn->pipeline));
    const VkDescriptorSetAllocateInfo set_alloc = {
        .sType = VK_STRUCTURE_TYPE_DESCRIPTOR_SET_ALLOCATE_INFO,
        .descriptorPool = pool,
        .descriptorSetCount = 1,
        .pSetLayouts = &kn->set_layout,
    };
    VK(vkAllocateDescriptorSets(device, &set_alloc, &kn->set));
    VkDescriptorBufferInfo infos[MAX_BINDINGS][MAX_WINDOWS];
    VkWriteDescriptorSet writes[MAX_BINDINGS];
    for (uint32_t b = 0; b < kn->num_bindings; b++) {
      const binding *bd = &kn->bindings[b];
      const buffer *buf = &buffers[bd->buffer];
      const VkDeviceSize reach = props.limits.maxStorageBufferRange;
      if (bd->count == 1 && bd->window == 0) {
        infos[b][0] =
            (VkDescriptorBufferInfo){buf->buffer, 0, buf->size < reach ? buf->size : reach};
      } else {
        for (uint32_t j = 0; j < bd->count; j++) {
          VkDeviceSize offset = (VkDeviceSize)j * bd->window;
          if (offset >= buf->size)
            offset = (buf->size - 1) / bd->window * bd->window;
          const VkDeviceSize left = buf->size - offset;
          infos[b][j] =
              (VkDescriptorBufferInfo){buf->buffer, offset, left < bd->window ? left : bd->window};
        }
      }
      writes[b] = (VkWriteDescriptorSet){
          .sType = VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET,
          .dstSet = kn->set,
          .dstBinding = b,
          .descriptorCount = bd->count,
          .descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER,
          .pBufferInfo = infos[b],
      };
    }
    vkUpdateDescriptorSets(device, kn->num_bindings, writes, 0, NULL);
  }

  /* One command buffer: the kernels in order, a barrier between them and
   * one before the host reads. */
  const VkCommandPoolCreateInfo cmd_pool_info = {
      .sType = VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO,
      .queueFamilyIndex = family,
  };
  VkCommandPool cmd_pool;
  VK(vkCreateCommandPool(device, &cmd_pool_info, NULL, &cmd_pool));
  const VkCommandBufferAllocateInfo cmd_alloc = {
      .sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO,
      .commandPool = cmd_pool,
      .level = VK_COMMAND_BUFFER_LEVEL_PRIMARY,
      .commandBufferCount = 1,
  };
  VkCommandBuffer cmd;
  VK(vkAllocateCommandBuffers(device, &cmd_alloc, &cmd));
  const VkCommandBufferBeginInfo begin = {
      .sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO,
      .flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT,
  };
  VK(vkBeginCommandBuffer(cmd, &begin));
  for (uint32_t k = 0; k < num_kernels; k++) {
    const kernel *kn = &kernels[k];
    if (k > 0) {
      const VkMemoryBarrier barrier = {
          .sType = VK_STRUCTURE_TYPE_MEMORY_BARRIER,
          .srcAccessMask = VK_ACCESS_SHADER_WRITE_BIT,
          .dstAccessMask = VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT,
      };
      vkCmdPipelineBarrier(cmd, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT,
                           VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, 0, 1, &barrier, 0, NULL, 0, NULL);
    }
    vkCmdBindPipeline(cmd, VK_PIPELINE_BIND_POINT_COMPUTE, kn->pipeline);
    vkCmdBindDescriptorSets(cmd, VK_PIPELINE_BIND_POINT_COMPUTE, kn->layout, 0, 1, &kn->set, 0,
                            NULL);
    for (uint64_t first = 0; first < kn->workgroups; first += kn->per_dispatch) {
      const uint64_t left = kn->workgroups - first;
      const uint32_t offset = (uint32_t)first;
      vkCmdPushConstants(cmd, kn->layout, VK_SHADER_STAGE_COMPUTE_BIT, 0, sizeof offset, &offset);
      vkCmdDispatch(cmd, (uint32_t)(left < kn->per_dispatch ? left : kn->per_dispatch), 1, 1);
    }
  }
  const VkMemoryBarrier to_host = {
      .sType = VK_STRUCTURE_TYPE_MEMORY_BARRIER,
      .srcAccessMask = VK_ACCESS_SHADER_WRITE_BIT,
      .dstAccessMask = VK_ACCESS_HOST_READ_BIT,
  };
  vkCmdPipelineBarrier(cmd, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, VK_PIPELINE_STAGE_HOST_BIT, 0, 1,
                       &to_host, 0, NULL, 0, NULL);
  VK(vkEndCommandBuffer(cmd));
  const VkFenceCreateInfo fence_info = {.sType = VK_STRUCTURE_TYPE_FENCE_CREATE_INFO};
  VkFence fence;
  VK(vkCreateFence(device, &fence_info, NULL, &fence));
  const VkSubmitInfo submit = {
      .sType = VK_STRUCTURE_TYPE_SUBMIT_INFO,
      .commandBufferCount = 1,
      .pCommandBuffers = &cmd,
  };
  VK(vkQueueSubmit(queue, 1, &submit, fence));
  VK(vkWaitForFences(device, 1, &fence, VK_TRUE, UINT64_MAX));

  int rc = 0;
  for (uint32_t i = 0; i < num_buffers; i++) {
    const buffer *b = &buffers[i];
    if (strcmp(b->out, "-") == 0)
      continue;
    FILE *out = fopen(b->out, "wb");
    if (!out || fwrite(b->mapped, 1, (size_t)b->bytes, out) != b->bytes || fclose(out) != 0) {
      fprintf(stderr, "spirv_driver: %s: cannot write\n", b->out);
      rc = 1;
    }
  }

  vkDestroyFence(device, fence, NULL);
  vkDestroyCommandPool(device, cmd_pool, NULL);
  for (uint32_t k = 0; k < num_kernels; k++) {
    vkDestroyPipeline(device, kernels[k].pipeline, NULL);
    vkDestroyPipelineLayout(device, kernels[k].layout, NULL);
    vkDestroyDescriptorSetLayout(device, kernels[k].set_layout, NULL);
    vkDestroyShaderModule(device, kernels[k].shader, NULL);
  }
  vkDestroyDescriptorPool(device, pool, NULL);
  for (uint32_t i = 0; i < num_buffers; i++) {
    vkDestroyBuffer(device, buffers[i].buffer, NULL);
    vkFreeMemory(device, buffers[i].memory, NULL);
  }
  vkDestroyDevice(device, NULL);
  vkDestroyInstance(instance, NULL);
  free(kernels);
  free(buffers);
  return rc;
}
