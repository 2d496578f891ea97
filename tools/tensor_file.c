/* See tensor_file.h. */
#include "tools/tensor_file.h"

#include <stdio.h>
#include <string.h>

bool tensor_file_is_pb(const char *path) {
  const size_t n = strlen(path);
  return n >= 3 && strcmp(path + n - 3, ".pb") == 0;
}

static void context_message(const dmlc_context *ctx, dmlc_status status, const char *path,
                            char *err, size_t err_size) {
  const char *message = dmlc_context_error(ctx);
  if (message && message[0])
    snprintf(err, err_size, "%s", message);
  else
    snprintf(err, err_size, "%s: %s", path, dmlc_status_string(status));
}

dmlc_status tensor_file_read(dmlc_context *ctx, const char *path, npy_array *out, char *err,
                             size_t err_size) {
  memset(out, 0, sizeof *out);
  if (!tensor_file_is_pb(path))
    return npy_read_file(path, out, err, err_size);
  dmlc_onnx_tensor *t = NULL;
  dmlc_status status = dmlc_onnx_tensor_read_file(ctx, path, &t);
  if (status != DMLC_OK) {
    context_message(ctx, status, path, err, err_size);
    return status;
  }
  npy_dtype dtype;
  if (npy_dtype_from_dml(t->data_type, &dtype) != 0) {
    /* The library reads only types .npy has too; guard anyway. */
    snprintf(err, err_size, "%s: data type %d has no .npy counterpart", path, (int)t->data_type);
    dmlc_free(t);
    return DMLC_ERROR_UNSUPPORTED;
  }
  status = npy_array_init(out, dtype, t->rank, t->dims);
  if (status == DMLC_OK && out->size_bytes != t->size_bytes)
    status = DMLC_ERROR_INVALID_ARGUMENT;
  if (status != DMLC_OK) {
    snprintf(err, err_size, "%s: %s", path,
             status == DMLC_ERROR_OUT_OF_MEMORY ? "out of memory" : "inconsistent tensor");
    npy_array_free(out);
    memset(out, 0, sizeof *out);
  } else {
    memcpy(out->data, t->data, (size_t)t->size_bytes);
  }
  dmlc_free(t);
  return status;
}

dmlc_status tensor_file_write(dmlc_context *ctx, const char *path, const npy_array *a,
                              const char *name, char *err, size_t err_size) {
  if (!tensor_file_is_pb(path))
    return npy_write_file(path, a, err, err_size);
  dmlc_onnx_tensor t;
  memset(&t, 0, sizeof t);
  t.name = name;
  t.data_type = npy_dtype_to_dml(a->dtype);
  if (a->ndim > DMLC_MAX_RANK || a->fortran_order || t.data_type == DML_TENSOR_DATA_TYPE_UNKNOWN) {
    snprintf(err, err_size, "%s: a TensorProto cannot hold %s with %u dims%s", path,
             npy_dtype_name(a->dtype), a->ndim, a->fortran_order ? " in Fortran order" : "");
    return DMLC_ERROR_INVALID_ARGUMENT;
  }
  t.rank = a->ndim;
  for (uint32_t i = 0; i < a->ndim; i++)
    t.dims[i] = a->shape[i];
  t.element_count = a->count;
  t.size_bytes = a->size_bytes;
  t.data = a->data;
  const dmlc_status status = dmlc_onnx_tensor_write_file(ctx, path, &t);
  if (status != DMLC_OK)
    context_message(ctx, status, path, err, err_size);
  return status;
}
