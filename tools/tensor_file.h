/* Tensor files for the dmlc command: NumPy .npy and ONNX TensorProto .pb,
 * both held as npy_array (packed, native byte order). A path ending in
 * ".pb" is a TensorProto (read and written by the library's
 * dmlc_onnx_tensor_* calls); any other path is a .npy file. */
#ifndef DMLC_TOOLS_TENSOR_FILE_H
#define DMLC_TOOLS_TENSOR_FILE_H

#include <stdbool.h>
#include <stddef.h>

#include "dmlc/dmlc.h"
#include "tools/npy.h"

bool tensor_file_is_pb(const char *path);

/* Reads path into *out (C order for .pb; the file's order for .npy). On
 * failure *out is empty and err holds "PATH: problem". */
dmlc_status tensor_file_read(dmlc_context *ctx, const char *path, npy_array *out, char *err,
                             size_t err_size);

/* Writes a (C order) to path; name is the TensorProto's name (.pb only; NULL
 * for none). */
dmlc_status tensor_file_write(dmlc_context *ctx, const char *path, const npy_array *a,
                              const char *name, char *err, size_t err_size);

#endif
