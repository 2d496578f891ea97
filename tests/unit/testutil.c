#include "testutil.h"

#ifdef DMLC_HAVE_VULKAN
#include <dlfcn.h>
#include <link.h>
#include <vulkan/vulkan.h>
#endif
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int dmlc_test_run_suites(Suite **suites, int count) {
  SRunner *runner = srunner_create(suites[0]);
  for (int i = 1; i < count; i++)
    srunner_add_suite(runner, suites[i]);
  srunner_run_all(runner, CK_NORMAL);
  const int failed = srunner_ntests_failed(runner);
  srunner_free(runner);
  return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}

char *dmlc_test_read_file(const char *path, size_t *length) {
  FILE *f = fopen(path, "rb");
  if (!f)
    return NULL;
  size_t cap = 4096, len = 0;
  char *buf = malloc(cap + 1);
  size_t n;
  while (buf && (n = fread(buf + len, 1, cap - len, f)) > 0) {
    len += n;
    if (len == cap) {
      cap *= 2;
      char *grown = realloc(buf, cap + 1);
      if (!grown)
        free(buf);
      buf = grown;
    }
  }
  fclose(f);
  if (!buf)
    return NULL;
  buf[len] = '\0';
  if (length)
    *length = len;
  return buf;
}

void dmlc_test_text_add(dmlc_test_text *t, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  const int n = vsnprintf(t->buf + t->len, sizeof t->buf - t->len, fmt, ap);
  va_end(ap);
  ck_assert(n >= 0 && (size_t)n < sizeof t->buf - t->len);
  t->len += (size_t)n;
}

dmlc_device dmlc_test_device(void) {
  const char *name = getenv("DMLC_TEST_DEVICE");
  if (!name || !*name || strcmp(name, "reference") == 0)
    return DMLC_DEVICE_REFERENCE;
  if (strcmp(name, "cpu") == 0)
    return DMLC_DEVICE_CPU;
  if (strcmp(name, "vulkan") == 0)
    return DMLC_DEVICE_VULKAN;
  return DMLC_DEVICE_DEFAULT;
}

#ifdef DMLC_HAVE_VULKAN
static int pin_object(struct dl_phdr_info *info, size_t size, void *data) {
  (void)size;
  (void)data;
  if (info->dlpi_name && *info->dlpi_name)
    (void)dlopen(info->dlpi_name, RTLD_NOW | RTLD_NOLOAD); /* one more reference */
  return 0;
}
#endif

bool dmlc_test_pin_vulkan(void) {
#ifdef DMLC_HAVE_VULKAN
  const char *env = getenv("DMLC_TEST_PIN_VULKAN");
  if (env && strcmp(env, "0") == 0)
    return false;
  void *loader = dlopen("libvulkan.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!loader)
    return false;
  PFN_vkCreateInstance create = (PFN_vkCreateInstance)dlsym(loader, "vkCreateInstance");
  PFN_vkDestroyInstance destroy = (PFN_vkDestroyInstance)dlsym(loader, "vkDestroyInstance");
  PFN_vkEnumeratePhysicalDevices enumerate =
      (PFN_vkEnumeratePhysicalDevices)dlsym(loader, "vkEnumeratePhysicalDevices");
  const VkApplicationInfo app = {.sType = VK_STRUCTURE_TYPE_APPLICATION_INFO,
                                 .apiVersion = VK_API_VERSION_1_1};
  const VkInstanceCreateInfo info = {.sType = VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO,
                                     .pApplicationInfo = &app};
  VkInstance instance = VK_NULL_HANDLE;
  if (!create || !destroy || !enumerate || create(&info, NULL, &instance) != VK_SUCCESS)
    return false; /* (the loader stays: a case opens it again anyway) */
  uint32_t count = 0;
  (void)enumerate(instance, &count, NULL);
  dl_iterate_phdr(pin_object, NULL);
  destroy(instance, NULL);
  return true;
#else
  return false;
#endif
}
