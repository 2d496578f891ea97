/* Tensors in host memory, shared by the devices that run on the host
 * (reference, CPU): the tensor is its bytes, and binding it costs nothing. */
#ifndef DMLC_RUNTIME_HOST_TENSOR_H
#define DMLC_RUNTIME_HOST_TENSOR_H

#include "runtime/device.h"

/* A host tensor's bytes start at a multiple of this: a page, so that a
 * tensor meets any GuaranteedBaseOffsetAlignment up to 4096 (larger ones
 * are refused at execute with a message naming the binding). */
#define DMLC_HOST_TENSOR_ALIGNMENT 4096u

dmlc_status dmlc_host_tensor_create(dmlc_rt_device *dev, uint64_t size_bytes, dmlc_rt_tensor **out,
                                    dmlc_diag *diag);
dmlc_status dmlc_host_tensor_write(dmlc_rt_tensor *t, uint64_t offset, const void *src,
                                   uint64_t size, dmlc_diag *diag);
dmlc_status dmlc_host_tensor_read(const dmlc_rt_tensor *t, uint64_t offset, void *dst,
                                  uint64_t size, dmlc_diag *diag);
void *dmlc_host_tensor_map(dmlc_rt_tensor *t);
void dmlc_host_tensor_destroy(dmlc_rt_tensor *t);

/* The host address of a binding of a host device: the buffer, or the
 * tensor's bytes. */
void *dmlc_host_binding_data(const dmlc_rt_binding *b);

#endif
