/* Tensors: memory on one device of one context. The API checks every range;
 * the device moves the bytes. */
#include <stdlib.h>

#include "api/api_internal.h"

dmlc_status dmlc_tensor_create(dmlc_context *ctx, dmlc_device device, uint64_t size_bytes,
                               dmlc_tensor **out) {
  if (!ctx)
    return DMLC_ERROR_INVALID_ARGUMENT;
  CHECK_ARG(ctx, out, "dmlc_tensor_create: out is NULL");
  *out = NULL;
  CHECK_ARG(ctx, size_bytes > 0, "dmlc_tensor_create: size_bytes is 0");
  const dmlc_device_entry *entry;
  DMLC_RETURN_IF_ERROR(dmlc_api_resolve_device(ctx, device, &entry));
  if (entry->vtable->tensor_map)
    DMLC_RETURN_IF_ERROR(
        dmlc_api_check_memory(ctx, size_bytes, "dmlc_tensor_create: a host tensor"));
  dmlc_rt_device *dev = NULL;
  DMLC_RETURN_IF_ERROR(dmlc_context_device(ctx, entry, &dev));
  dmlc_tensor *t = calloc(1, sizeof *t);
  if (!t)
    return dmlc_diag_set(dmlc_ctx_diag(ctx), DMLC_ERROR_OUT_OF_MEMORY,
                         "out of memory creating a tensor");
  dmlc_ctx_lock(ctx);
  const dmlc_status status =
      entry->vtable->tensor_create(dev, size_bytes, &t->rt, dmlc_ctx_diag(ctx));
  dmlc_ctx_unlock(ctx);
  if (status != DMLC_OK) {
    free(t);
    return status;
  }
  t->ctx = ctx;
  t->device = entry;
  t->size_bytes = size_bytes;
  *out = t;
  return DMLC_OK;
}

static dmlc_status check_range(const dmlc_tensor *t, const char *fn, uint64_t offset,
                               const void *host, uint64_t size) {
  CHECK_ARG(t->ctx, host || size == 0, "%s: the host pointer is NULL", fn);
  CHECK_ARG(t->ctx, offset <= t->size_bytes && size <= t->size_bytes - offset,
            "%s: bytes [%llu, %llu + %llu) are outside the tensor's %llu bytes", fn,
            (unsigned long long)offset, (unsigned long long)offset, (unsigned long long)size,
            (unsigned long long)t->size_bytes);
  return DMLC_OK;
}

dmlc_status dmlc_tensor_write(dmlc_tensor *t, uint64_t offset, const void *src, uint64_t size) {
  if (!t)
    return DMLC_ERROR_INVALID_ARGUMENT;
  DMLC_RETURN_IF_ERROR(check_range(t, "dmlc_tensor_write", offset, src, size));
  if (size == 0)
    return DMLC_OK;
  const dmlc_device_vtable *vt = t->device->vtable;
  dmlc_ctx_lock_serial(t->ctx, vt);
  const dmlc_status status = vt->tensor_write(t->rt, offset, src, size, dmlc_ctx_diag(t->ctx));
  dmlc_ctx_unlock_serial(t->ctx, vt);
  return status;
}

dmlc_status dmlc_tensor_read(const dmlc_tensor *t, uint64_t offset, void *dst, uint64_t size) {
  if (!t)
    return DMLC_ERROR_INVALID_ARGUMENT;
  DMLC_RETURN_IF_ERROR(check_range(t, "dmlc_tensor_read", offset, dst, size));
  if (size == 0)
    return DMLC_OK;
  const dmlc_device_vtable *vt = t->device->vtable;
  dmlc_ctx_lock_serial(t->ctx, vt);
  const dmlc_status status = vt->tensor_read(t->rt, offset, dst, size, dmlc_ctx_diag(t->ctx));
  dmlc_ctx_unlock_serial(t->ctx, vt);
  return status;
}

void *dmlc_tensor_map(dmlc_tensor *t) {
  if (!t || !t->device->vtable->tensor_map)
    return NULL;
  return t->device->vtable->tensor_map(t->rt);
}

uint64_t dmlc_tensor_size(const dmlc_tensor *t) { return t ? t->size_bytes : 0; }

dmlc_device dmlc_tensor_device(const dmlc_tensor *t) {
  return t ? t->device->id : DMLC_DEVICE_DEFAULT;
}

void dmlc_tensor_destroy(dmlc_tensor *t) {
  if (!t)
    return;
  dmlc_ctx_lock(t->ctx);
  t->device->vtable->tensor_destroy(t->rt);
  dmlc_ctx_unlock(t->ctx);
  free(t);
}
