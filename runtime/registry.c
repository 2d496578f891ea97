/* The device registry: one line per device. The first built line marked
 * default is what DMLC_DEVICE_DEFAULT means. */
#include <stddef.h>

#include "runtime/device.h"

typedef struct registry_line {
  dmlc_device_entry entry;
  bool is_default;
} registry_line;

static const registry_line registry[] = {
    {{DMLC_DEVICE_REFERENCE, "reference", &dmlc_reference_device_vtable, NULL}, false},
    {{DMLC_DEVICE_CPU, "cpu", &dmlc_cpu_device_vtable, NULL}, true},
#ifdef DMLC_HAVE_VULKAN
    {{DMLC_DEVICE_VULKAN, "vulkan", &dmlc_vulkan_device_vtable, NULL}, false},
#else
    {{DMLC_DEVICE_VULKAN, "vulkan", NULL, "it was configured with -DDMLC_VULKAN=OFF"}, false},
#endif
};

size_t dmlc_device_registry_size(void) { return sizeof registry / sizeof registry[0]; }

const dmlc_device_entry *dmlc_device_registry_entry(size_t index) {
  return index < dmlc_device_registry_size() ? &registry[index].entry : NULL;
}

const dmlc_device_entry *dmlc_device_registry_find(dmlc_device device) {
  for (size_t i = 0; i < dmlc_device_registry_size(); i++) {
    const registry_line *line = &registry[i];
    if (line->entry.id == device || (device == DMLC_DEVICE_DEFAULT && line->is_default))
      return &line->entry;
  }
  return NULL;
}
