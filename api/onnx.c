/* The public ONNX entry points (include/dmlc/dmlc.h, docs/onnx.md) over
 * frontend/onnx: models in as graphs, TensorProto files in and out. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/api_internal.h"
#include "frontend/onnx/onnx.h"

/* A graph around an imported IR graph (as api.c's graph_wrap). */
static dmlc_status wrap_graph(dmlc_context *ctx, dmlc_ir_graph *ir, dmlc_graph **out) {
  dmlc_graph *g = calloc(1, sizeof *g);
  if (!g) {
    dmlc_ir_graph_destroy(ir);
    return dmlc_diag_set(dmlc_ctx_diag(ctx), DMLC_ERROR_OUT_OF_MEMORY,
                         "out of memory creating a graph");
  }
  g->ctx = ctx;
  g->ir = ir;
  *out = g;
  return DMLC_OK;
}

dmlc_status dmlc_graph_import_onnx_with_options(dmlc_context *ctx, const void *bytes, size_t size,
                                                const char *filename,
                                                const dmlc_onnx_options *options, dmlc_graph **out,
                                                dmlc_onnx_signature **out_signature) {
  if (!ctx)
    return DMLC_ERROR_INVALID_ARGUMENT;
  CHECK_ARG(ctx, out || out_signature, "dmlc_graph_import_onnx: out and out_signature are NULL");
  if (out)
    *out = NULL;
  if (out_signature)
    *out_signature = NULL;
  CHECK_ARG(ctx, bytes || size == 0, "dmlc_graph_import_onnx: bytes is NULL");
  dmlc_ir_graph *ir = NULL;
  DMLC_RETURN_IF_ERROR(dmlc_onnx_import(bytes ? bytes : "", size, filename ? filename : "<model>",
                                        options, out ? &ir : NULL, out_signature,
                                        dmlc_ctx_diag(ctx)));
  if (!out)
    return DMLC_OK;
  const dmlc_status st = wrap_graph(ctx, ir, out);
  if (st != DMLC_OK && out_signature) {
    free(*out_signature);
    *out_signature = NULL;
  }
  return st;
}

dmlc_status dmlc_graph_import_onnx(dmlc_context *ctx, const void *bytes, size_t size,
                                   const char *filename, dmlc_graph **out) {
  if (!ctx)
    return DMLC_ERROR_INVALID_ARGUMENT;
  CHECK_ARG(ctx, out, "dmlc_graph_import_onnx: out is NULL");
  return dmlc_graph_import_onnx_with_options(ctx, bytes, size, filename, NULL, out, NULL);
}

/* ---- tensors ---- */

dmlc_status dmlc_onnx_tensor_parse(dmlc_context *ctx, const void *bytes, size_t size,
                                   const char *filename, dmlc_onnx_tensor **out) {
  if (!ctx)
    return DMLC_ERROR_INVALID_ARGUMENT;
  CHECK_ARG(ctx, out, "dmlc_onnx_tensor_parse: out is NULL");
  *out = NULL;
  CHECK_ARG(ctx, bytes || size == 0, "dmlc_onnx_tensor_parse: bytes is NULL");
  return dmlc_onnx_decode_tensor(bytes ? bytes : "", size, filename ? filename : "<tensor>", out,
                                 dmlc_ctx_diag(ctx));
}

/* The whole file at path, malloc'ed. */
static dmlc_status read_file(dmlc_context *ctx, const char *path, unsigned char **out,
                             size_t *size) {
  *out = NULL;
  *size = 0;
  FILE *f = fopen(path, "rb");
  if (!f)
    return dmlc_diag_set(dmlc_ctx_diag(ctx), DMLC_ERROR_IO, "%s: cannot open: %s", path,
                         strerror(errno));
  size_t cap = 0, len = 0;
  unsigned char *buf = NULL;
  for (;;) {
    if (len == cap) {
      cap = cap ? cap * 2 : 65536;
      unsigned char *grown = cap > len ? realloc(buf, cap) : NULL;
      if (!grown) {
        free(buf);
        fclose(f);
        return dmlc_diag_set(dmlc_ctx_diag(ctx), DMLC_ERROR_OUT_OF_MEMORY,
                             "%s: out of memory reading it", path);
      }
      buf = grown;
    }
    const size_t n = fread(buf + len, 1, cap - len, f);
    len += n;
    if (n == 0)
      break;
  }
  const bool failed = ferror(f) != 0;
  fclose(f);
  if (failed) {
    free(buf);
    return dmlc_diag_set(dmlc_ctx_diag(ctx), DMLC_ERROR_IO, "%s: read error", path);
  }
  *out = buf;
  *size = len;
  return DMLC_OK;
}

dmlc_status dmlc_onnx_tensor_read_file(dmlc_context *ctx, const char *path,
                                       dmlc_onnx_tensor **out) {
  if (!ctx)
    return DMLC_ERROR_INVALID_ARGUMENT;
  CHECK_ARG(ctx, out, "dmlc_onnx_tensor_read_file: out is NULL");
  *out = NULL;
  CHECK_ARG(ctx, path, "dmlc_onnx_tensor_read_file: path is NULL");
  unsigned char *bytes;
  size_t size;
  DMLC_RETURN_IF_ERROR(read_file(ctx, path, &bytes, &size));
  const dmlc_status st = dmlc_onnx_decode_tensor(bytes, size, path, out, dmlc_ctx_diag(ctx));
  free(bytes);
  return st;
}

dmlc_status dmlc_onnx_tensor_encode(dmlc_context *ctx, const dmlc_onnx_tensor *tensor,
                                    void **out_bytes, size_t *out_size) {
  if (!ctx)
    return DMLC_ERROR_INVALID_ARGUMENT;
  CHECK_ARG(ctx, out_bytes && out_size, "dmlc_onnx_tensor_encode: out_bytes or out_size is NULL");
  *out_bytes = NULL;
  *out_size = 0;
  CHECK_ARG(ctx, tensor, "dmlc_onnx_tensor_encode: tensor is NULL");
  return dmlc_onnx_encode_tensor(tensor, out_bytes, out_size, dmlc_ctx_diag(ctx));
}

dmlc_status dmlc_onnx_tensor_write_file(dmlc_context *ctx, const char *path,
                                        const dmlc_onnx_tensor *tensor) {
  if (!ctx)
    return DMLC_ERROR_INVALID_ARGUMENT;
  CHECK_ARG(ctx, path, "dmlc_onnx_tensor_write_file: path is NULL");
  void *bytes;
  size_t size;
  DMLC_RETURN_IF_ERROR(dmlc_onnx_tensor_encode(ctx, tensor, &bytes, &size));
  FILE *f = fopen(path, "wb");
  if (!f) {
    free(bytes);
    return dmlc_diag_set(dmlc_ctx_diag(ctx), DMLC_ERROR_IO, "%s: cannot create: %s", path,
                         strerror(errno));
  }
  const bool written = fwrite(bytes, 1, size, f) == size;
  const bool closed = fclose(f) == 0;
  free(bytes);
  if (!written || !closed)
    return dmlc_diag_set(dmlc_ctx_diag(ctx), DMLC_ERROR_IO, "%s: write error: %s", path,
                         strerror(errno));
  return DMLC_OK;
}
