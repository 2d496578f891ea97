/* See host_tensor.h. A host tensor is a pointer to its aligned bytes: the
 * handle is the allocation itself. */
#include "runtime/host_tensor.h"

#include <stdlib.h>
#include <string.h>

#include "runtime/host_alloc.h"

dmlc_status dmlc_host_tensor_create(dmlc_rt_device *dev, uint64_t size_bytes, dmlc_rt_tensor **out,
                                    dmlc_diag *diag) {
  (void)dev;
  *out = NULL;
  void *p = dmlc_host_alloc(size_bytes, DMLC_HOST_TENSOR_ALIGNMENT);
  if (!p)
    return dmlc_diag_set(diag, DMLC_ERROR_OUT_OF_MEMORY, "out of memory for a tensor of %llu bytes",
                         (unsigned long long)size_bytes);
  memset(p, 0, (size_t)size_bytes);
  *out = (dmlc_rt_tensor *)p;
  return DMLC_OK;
}

dmlc_status dmlc_host_tensor_write(dmlc_rt_tensor *t, uint64_t offset, const void *src,
                                   uint64_t size, dmlc_diag *diag) {
  (void)diag;
  memcpy((char *)t + offset, src, (size_t)size);
  return DMLC_OK;
}

dmlc_status dmlc_host_tensor_read(const dmlc_rt_tensor *t, uint64_t offset, void *dst,
                                  uint64_t size, dmlc_diag *diag) {
  (void)diag;
  memcpy(dst, (const char *)t + offset, (size_t)size);
  return DMLC_OK;
}

void *dmlc_host_tensor_map(dmlc_rt_tensor *t) { return t; }
void dmlc_host_tensor_destroy(dmlc_rt_tensor *t) { free(t); }

void *dmlc_host_binding_data(const dmlc_rt_binding *b) {
  return b->host ? b->host : (void *)b->tensor;
}
