/* The .npy reader (tools/npy.c, behind `dmlc run`): any bytes parse or fail
 * with "NAME: problem"; an array that parses encodes again and the encoding
 * parses back to the same dtype, order, shape and bytes. */
#include <stdlib.h>
#include <string.h>

#include "fuzz_common.h"
#include "tools/npy.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  char err[NPY_ERROR_MAX];
  npy_array a;
  dmlc_status st = npy_parse(data, size, "fuzz.npy", &a, err, sizeof err);
  if (st != DMLC_OK) {
    FUZZ_CHECK(st != DMLC_ERROR_INTERNAL, "internal error: %s", err);
    FUZZ_CHECK(strncmp(err, "fuzz.npy: ", 10) == 0, "message: '%s'", err);
    FUZZ_CHECK(!a.data, "a failed parse left data");
    return 0;
  }
  FUZZ_CHECK(a.size_bytes == a.count * npy_dtype_size(a.dtype), "size_bytes");
  FUZZ_CHECK(a.size_bytes <= size, "%llu bytes of data from a %zu-byte file",
             (unsigned long long)a.size_bytes, size);
  unsigned char *bytes = NULL;
  size_t length = 0;
  st = npy_encode(&a, 0, &bytes, &length, err, sizeof err);
  FUZZ_CHECK(st == DMLC_OK, "encode: %s", err);
  npy_array b;
  st = npy_parse(bytes, length, "again.npy", &b, err, sizeof err);
  FUZZ_CHECK(st == DMLC_OK, "the encoding does not parse: %s", err);
  FUZZ_CHECK(a.dtype == b.dtype && a.fortran_order == b.fortran_order && a.ndim == b.ndim &&
                 a.count == b.count,
             "round trip changed the array");
  FUZZ_CHECK(memcmp(a.shape, b.shape, a.ndim * sizeof a.shape[0]) == 0, "shape changed");
  FUZZ_CHECK(memcmp(a.data, b.data, a.size_bytes) == 0, "data changed");
  npy_array_free(&b);
  free(bytes);
  npy_array_free(&a);
  return 0;
}
