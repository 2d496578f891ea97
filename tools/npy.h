/* Reading and writing NumPy .npy files (format versions 1.0, 2.0, 3.0).
 *
 * Every malformed file is rejected with a message that names the file and
 * the problem; nothing is read outside the bytes given. Arrays are held in
 * native byte order, in the file's element order (C or Fortran). Writing
 * always produces little-endian files, in the array's element order. */
#ifndef DMLC_TOOLS_NPY_H
#define DMLC_TOOLS_NPY_H

#include <stddef.h>
#include <stdint.h>

#include "dmlc/dmlc.h"

/* NumPy allows 64 dimensions (NPY_MAXDIMS of NumPy 2). */
#define NPY_MAX_DIMS 64
/* Room for any message of this module (a long file name included). */
#define NPY_ERROR_MAX 1024

typedef enum npy_dtype {
  NPY_DTYPE_BOOL, /* '|b1': no DirectML counterpart */
  NPY_DTYPE_I8,
  NPY_DTYPE_U8,
  NPY_DTYPE_I16,
  NPY_DTYPE_U16,
  NPY_DTYPE_I32,
  NPY_DTYPE_U32,
  NPY_DTYPE_I64,
  NPY_DTYPE_U64,
  NPY_DTYPE_F16,
  NPY_DTYPE_F32,
  NPY_DTYPE_F64,
  NPY_DTYPE_COUNT
} npy_dtype;

typedef struct npy_array {
  npy_dtype dtype;
  int fortran_order;
  uint32_t ndim; /* 0 for a scalar (one element) */
  uint64_t shape[NPY_MAX_DIMS];
  uint64_t count;      /* product of shape */
  uint64_t size_bytes; /* count * element size */
  void *data;          /* malloc'ed; native byte order, file element order */
} npy_array;

/* ---- data types ---- */
uint32_t npy_dtype_size(npy_dtype dtype);
/* The canonical little-endian descr written to files: "<f4", "|u1", ... */
const char *npy_dtype_descr(npy_dtype dtype);
/* dmlc's short name: "f32", "bool", ... */
const char *npy_dtype_name(npy_dtype dtype);
/* DML_TENSOR_DATA_TYPE_UNKNOWN for bool. */
DML_TENSOR_DATA_TYPE npy_dtype_to_dml(npy_dtype dtype);
/* Returns 0 and sets *out, or -1 for a DML type .npy cannot hold. */
int npy_dtype_from_dml(DML_TENSOR_DATA_TYPE type, npy_dtype *out);

/* ---- arrays ---- */
/* Sets every field of a, allocates zeroed data (at least one byte). shape may
 * be NULL when ndim is 0. */
dmlc_status npy_array_init(npy_array *a, npy_dtype dtype, uint32_t ndim, const uint64_t *shape);
void npy_array_free(npy_array *a);
/* Element strides of a's data (row-major, or column-major if fortran_order). */
void npy_array_strides(const npy_array *a, uint64_t *strides);

/* ---- reading ---- */
/* Parses a whole .npy file held in memory. name is used in messages. On
 * failure *out is left empty (nothing to free) and err holds
 * "NAME: problem". */
dmlc_status npy_parse(const void *bytes, size_t length, const char *name, npy_array *out, char *err,
                      size_t err_size);
dmlc_status npy_read_file(const char *path, npy_array *out, char *err, size_t err_size);

/* ---- writing ---- */
/* Encodes a as a .npy file into a malloc'ed buffer. version is 1, 2 or 3,
 * or 0 for the lowest that can hold the header. */
dmlc_status npy_encode(const npy_array *a, int version, unsigned char **out, size_t *out_length,
                       char *err, size_t err_size);
dmlc_status npy_write_file(const char *path, const npy_array *a, char *err, size_t err_size);

#endif
