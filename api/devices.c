/* The public API's view of devices: names, the registry, describing, and
 * each context's open devices. Nothing here knows one device from another:
 * runtime/registry.c does. */
#include <stdlib.h>

#include <unistd.h>

#include "api/api_internal.h"

const char *dmlc_device_name(dmlc_device device) {
  if (device == DMLC_DEVICE_DEFAULT)
    return "default";
  const dmlc_device_entry *e = dmlc_device_registry_find(device);
  return e ? e->name : "unknown";
}

size_t dmlc_device_count(void) {
  size_t n = 0;
  for (size_t i = 0; i < dmlc_device_registry_size(); i++)
    n += dmlc_device_registry_entry(i)->vtable != NULL;
  return n;
}

dmlc_device dmlc_device_at(size_t index) {
  for (size_t i = 0; i < dmlc_device_registry_size(); i++) {
    const dmlc_device_entry *e = dmlc_device_registry_entry(i);
    if (e->vtable && index-- == 0)
      return e->id;
  }
  return DMLC_DEVICE_DEFAULT;
}

static size_t registry_index(const dmlc_device_entry *entry) {
  for (size_t i = 0; i < dmlc_device_registry_size(); i++)
    if (dmlc_device_registry_entry(i) == entry)
      return i;
  return DMLC_API_MAX_DEVICES;
}

dmlc_status dmlc_api_resolve_device(dmlc_context *ctx, dmlc_device device,
                                    const dmlc_device_entry **out) {
  const dmlc_device_entry *e = dmlc_device_registry_find(device);
  if (!e)
    return dmlc_diag_set(dmlc_ctx_diag(ctx), DMLC_ERROR_INVALID_ARGUMENT, "unknown device %d",
                         (int)device);
  if (!e->vtable)
    return dmlc_diag_set(dmlc_ctx_diag(ctx), DMLC_ERROR_UNSUPPORTED,
                         "device '%s' is not built into this dmlc (%s); use the cpu or reference "
                         "device",
                         e->name, e->not_built);
  *out = e;
  return DMLC_OK;
}

dmlc_status dmlc_context_device(dmlc_context *ctx, const dmlc_device_entry *entry,
                                dmlc_rt_device **out) {
  const size_t i = registry_index(entry);
  if (i >= DMLC_API_MAX_DEVICES)
    return dmlc_diag_set(dmlc_ctx_diag(ctx), DMLC_ERROR_INTERNAL,
                         "device '%s' has no slot in a context", entry->name);
  dmlc_status status = DMLC_OK;
  dmlc_ctx_lock(ctx);
  if (!ctx->devices[i]) {
    const dmlc_rt_options options = {ctx->num_threads};
    status = entry->vtable->create(&options, &ctx->devices[i], dmlc_ctx_diag(ctx));
  }
  *out = ctx->devices[i];
  dmlc_ctx_unlock(ctx);
  DMLC_RETURN_IF_ERROR(status);
  return DMLC_OK;
}

void dmlc_context_close_devices(dmlc_context *ctx) {
  for (size_t i = 0; i < dmlc_device_registry_size() && i < DMLC_API_MAX_DEVICES; i++)
    if (ctx->devices[i]) {
      dmlc_device_registry_entry(i)->vtable->destroy(ctx->devices[i]);
      ctx->devices[i] = NULL;
    }
}

uint64_t dmlc_api_compile_count(dmlc_context *ctx, dmlc_device device) {
  const dmlc_device_entry *e = dmlc_device_registry_find(device);
  const size_t i = e ? registry_index(e) : DMLC_API_MAX_DEVICES;
  if (i >= DMLC_API_MAX_DEVICES || !ctx->devices[i] || !e->vtable->compile_count)
    return 0;
  return e->vtable->compile_count(ctx->devices[i]);
}

bool dmlc_api_device_is_open(const dmlc_context *ctx, dmlc_device device) {
  const dmlc_device_entry *e = dmlc_device_registry_find(device);
  const size_t i = e ? registry_index(e) : DMLC_API_MAX_DEVICES;
  return i < DMLC_API_MAX_DEVICES && ctx->devices[i] != NULL;
}

dmlc_status dmlc_device_describe(dmlc_context *ctx, dmlc_device device, char **out_text) {
  if (!ctx)
    return DMLC_ERROR_INVALID_ARGUMENT;
  CHECK_ARG(ctx, out_text, "dmlc_device_describe: out_text is NULL");
  *out_text = NULL;
  const dmlc_device_entry *e = NULL;
  DMLC_RETURN_IF_ERROR(dmlc_api_resolve_device(ctx, device, &e));
  dmlc_rt_device *dev = NULL;
  DMLC_RETURN_IF_ERROR(dmlc_context_device(ctx, e, &dev));
  dmlc_ctx_lock(ctx);
  const dmlc_status status = e->vtable->describe(dev, out_text, dmlc_ctx_diag(ctx));
  dmlc_ctx_unlock(ctx);
  return status;
}

dmlc_status dmlc_context_set_memory_limit(dmlc_context *ctx, uint64_t bytes) {
  if (!ctx)
    return DMLC_ERROR_INVALID_ARGUMENT;
  ctx->memory_limit = bytes;
  return DMLC_OK;
}

uint64_t dmlc_api_memory_limit(const dmlc_context *ctx) {
  if (ctx->memory_limit)
    return ctx->memory_limit;
  const long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
  if (pages <= 0 || page <= 0)
    return UINT64_MAX;
  return (uint64_t)pages > UINT64_MAX / (uint64_t)page ? UINT64_MAX
                                                       : (uint64_t)pages * (uint64_t)page;
}

dmlc_status dmlc_api_check_memory(dmlc_context *ctx, uint64_t bytes, const char *what) {
  const uint64_t limit = dmlc_api_memory_limit(ctx);
  if (bytes <= limit)
    return DMLC_OK;
  return dmlc_diag_set(dmlc_ctx_diag(ctx), DMLC_ERROR_OUT_OF_MEMORY,
                       "%s needs %llu bytes of host memory; the limit is %llu bytes (%s)", what,
                       (unsigned long long)bytes, (unsigned long long)limit,
                       ctx->memory_limit ? "dmlc_context_set_memory_limit"
                                         : "the machine's physical memory");
}

/* More threads than this is a mistake, not a machine. */
enum { MAX_THREADS = 4096 };

dmlc_status dmlc_context_set_num_threads(dmlc_context *ctx, uint32_t n) {
  if (!ctx)
    return DMLC_ERROR_INVALID_ARGUMENT;
  CHECK_ARG(ctx, n <= MAX_THREADS, "dmlc_context_set_num_threads: %u threads (at most %d)", n,
            MAX_THREADS);
  dmlc_status status = DMLC_OK;
  dmlc_ctx_lock(ctx);
  ctx->num_threads = n;
  for (size_t i = 0;
       status == DMLC_OK && i < dmlc_device_registry_size() && i < DMLC_API_MAX_DEVICES; i++) {
    const dmlc_device_vtable *vt = dmlc_device_registry_entry(i)->vtable;
    if (ctx->devices[i] && vt->set_num_threads)
      status = vt->set_num_threads(ctx->devices[i], n, dmlc_ctx_diag(ctx));
  }
  dmlc_ctx_unlock(ctx);
  return status;
}
