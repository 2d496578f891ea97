#include "tools/npy.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NPY_TRY(expr)                                                                              \
  do {                                                                                             \
    const dmlc_status npy_status_ = (expr);                                                        \
    if (npy_status_ != DMLC_OK)                                                                    \
      return npy_status_;                                                                          \
  } while (0)

static const char npy_magic[6] = {'\x93', 'N', 'U', 'M', 'P', 'Y'};

/* The one table of .npy data types, indexed by npy_dtype. */
static const struct npy_dtype_info {
  char kind; /* the descr's type character */
  uint32_t size;
  const char *descr;
  const char *name;
  DML_TENSOR_DATA_TYPE dml;
} npy_dtypes[NPY_DTYPE_COUNT] = {
    [NPY_DTYPE_BOOL] = {'b', 1, "|b1", "bool", DML_TENSOR_DATA_TYPE_UNKNOWN},
    [NPY_DTYPE_I8] = {'i', 1, "|i1", "i8", DML_TENSOR_DATA_TYPE_INT8},
    [NPY_DTYPE_U8] = {'u', 1, "|u1", "u8", DML_TENSOR_DATA_TYPE_UINT8},
    [NPY_DTYPE_I16] = {'i', 2, "<i2", "i16", DML_TENSOR_DATA_TYPE_INT16},
    [NPY_DTYPE_U16] = {'u', 2, "<u2", "u16", DML_TENSOR_DATA_TYPE_UINT16},
    [NPY_DTYPE_I32] = {'i', 4, "<i4", "i32", DML_TENSOR_DATA_TYPE_INT32},
    [NPY_DTYPE_U32] = {'u', 4, "<u4", "u32", DML_TENSOR_DATA_TYPE_UINT32},
    [NPY_DTYPE_I64] = {'i', 8, "<i8", "i64", DML_TENSOR_DATA_TYPE_INT64},
    [NPY_DTYPE_U64] = {'u', 8, "<u8", "u64", DML_TENSOR_DATA_TYPE_UINT64},
    [NPY_DTYPE_F16] = {'f', 2, "<f2", "f16", DML_TENSOR_DATA_TYPE_FLOAT16},
    [NPY_DTYPE_F32] = {'f', 4, "<f4", "f32", DML_TENSOR_DATA_TYPE_FLOAT32},
    [NPY_DTYPE_F64] = {'f', 8, "<f8", "f64", DML_TENSOR_DATA_TYPE_FLOAT64},
};

uint32_t npy_dtype_size(npy_dtype dtype) { return npy_dtypes[dtype].size; }
const char *npy_dtype_descr(npy_dtype dtype) { return npy_dtypes[dtype].descr; }
const char *npy_dtype_name(npy_dtype dtype) { return npy_dtypes[dtype].name; }
DML_TENSOR_DATA_TYPE npy_dtype_to_dml(npy_dtype dtype) { return npy_dtypes[dtype].dml; }

int npy_dtype_from_dml(DML_TENSOR_DATA_TYPE type, npy_dtype *out) {
  for (int i = 0; i < NPY_DTYPE_COUNT; i++) {
    if (type != DML_TENSOR_DATA_TYPE_UNKNOWN && npy_dtypes[i].dml == type) {
      *out = (npy_dtype)i;
      return 0;
    }
  }
  return -1;
}

static int host_is_little_endian(void) {
  const uint16_t one = 1;
  unsigned char first;
  memcpy(&first, &one, 1);
  return first == 1;
}

static dmlc_status fail(char *err, size_t err_size, const char *name, dmlc_status status,
                        const char *fmt, ...) __attribute__((format(printf, 5, 6)));

static dmlc_status fail(char *err, size_t err_size, const char *name, dmlc_status status,
                        const char *fmt, ...) {
  if (err && err_size > 0) {
    int n = snprintf(err, err_size, "%s: ", name);
    if (n < 0)
      n = 0;
    if ((size_t)n < err_size) {
      va_list ap;
      va_start(ap, fmt);
      vsnprintf(err + n, err_size - (size_t)n, fmt, ap);
      va_end(ap);
    }
  }
  return status;
}

/* Python's spelling of a shape tuple: "()", "(3,)", "(2, 3)". */
static void format_shape(const uint64_t *shape, uint32_t ndim, char *buf, size_t size) {
  size_t used = 0;
  int n = snprintf(buf, size, "(");
  for (uint32_t i = 0; i < ndim && n >= 0 && (used += (size_t)n) < size; i++)
    n = snprintf(buf + used, size - used, i == 0 ? "%llu" : ", %llu", (unsigned long long)shape[i]);
  if (n >= 0 && (used += (size_t)n) < size)
    snprintf(buf + used, size - used, ndim == 1 ? ",)" : ")");
}

/* Multiplies the dims and the element size; -1 on overflow of uint64 or of
 * size_t (the data must fit in memory). */
static int shape_sizes(const uint64_t *shape, uint32_t ndim, uint32_t element_size, uint64_t *count,
                       uint64_t *bytes) {
  uint64_t c = 1;
  for (uint32_t i = 0; i < ndim; i++) {
    if (shape[i] != 0 && c > UINT64_MAX / shape[i])
      return -1;
    c *= shape[i];
  }
  if (c > UINT64_MAX / element_size || c * element_size > (uint64_t)SIZE_MAX / 2)
    return -1;
  *count = c;
  *bytes = c * element_size;
  return 0;
}

dmlc_status npy_array_init(npy_array *a, npy_dtype dtype, uint32_t ndim, const uint64_t *shape) {
  memset(a, 0, sizeof *a);
  if ((int)dtype < 0 || dtype >= NPY_DTYPE_COUNT || ndim > NPY_MAX_DIMS)
    return DMLC_ERROR_INVALID_ARGUMENT;
  a->dtype = dtype;
  a->ndim = ndim;
  for (uint32_t i = 0; i < ndim; i++)
    a->shape[i] = shape[i];
  if (shape_sizes(a->shape, ndim, npy_dtype_size(dtype), &a->count, &a->size_bytes) != 0)
    return DMLC_ERROR_INVALID_ARGUMENT;
  a->data = calloc(1, a->size_bytes ? (size_t)a->size_bytes : 1);
  return a->data ? DMLC_OK : DMLC_ERROR_OUT_OF_MEMORY;
}

void npy_array_free(npy_array *a) {
  if (!a)
    return;
  free(a->data);
  a->data = NULL;
  a->count = a->size_bytes = 0;
}

void npy_array_strides(const npy_array *a, uint64_t *strides) {
  uint64_t step = 1;
  for (uint32_t k = 0; k < a->ndim; k++) {
    const uint32_t i = a->fortran_order ? k : a->ndim - 1 - k;
    strides[i] = step;
    step *= a->shape[i];
  }
}

/* ---- the header: a Python dict literal ---- */

typedef struct header_parser {
  const char *p, *end;
  const char *file; /* the first byte of the file, for offsets */
  const char *name; /* the file, for messages */
  char *err;
  size_t err_size;
} header_parser;

static void skip_space(header_parser *h) {
  while (h->p < h->end && (*h->p == ' ' || *h->p == '\t' || *h->p == '\n' || *h->p == '\r'))
    h->p++;
}

/* Describes the character at the cursor for a message. */
static const char *describe_next(const header_parser *h, char *buf, size_t size) {
  if (h->p >= h->end)
    return "the end of the header";
  const unsigned char c = (unsigned char)*h->p;
  if (c >= 0x20 && c < 0x7f)
    snprintf(buf, size, "'%c'", c);
  else
    snprintf(buf, size, "byte 0x%02x", c);
  return buf;
}

static dmlc_status header_error(header_parser *h, const char *expected) {
  char what[16];
  return fail(h->err, h->err_size, h->name, DMLC_ERROR_INVALID_ARGUMENT,
              "malformed header: expected %s at byte %td, found %s", expected, h->p - h->file,
              describe_next(h, what, sizeof what));
}

static int accept_char(header_parser *h, char c) {
  skip_space(h);
  if (h->p < h->end && *h->p == c) {
    h->p++;
    return 1;
  }
  return 0;
}

/* A quoted string without escapes, copied into buf. */
static dmlc_status parse_string(header_parser *h, char *buf, size_t size) {
  skip_space(h);
  if (h->p >= h->end || (*h->p != '\'' && *h->p != '"'))
    return header_error(h, "a quoted string");
  const char quote = *h->p++;
  size_t n = 0;
  while (h->p < h->end && *h->p != quote) {
    if (*h->p == '\\' || *h->p == '\n')
      return header_error(h, "a simple string (no escapes or newlines)");
    if (n + 1 < size)
      buf[n] = *h->p;
    n++;
    h->p++;
  }
  if (h->p >= h->end)
    return header_error(h, "the closing quote of a string");
  h->p++;
  if (n + 1 > size)
    return fail(h->err, h->err_size, h->name, DMLC_ERROR_INVALID_ARGUMENT,
                "malformed header: string of %zu characters is too long", n);
  buf[n] = '\0';
  return DMLC_OK;
}

static int accept_word(header_parser *h, const char *word) {
  skip_space(h);
  const size_t n = strlen(word);
  if ((size_t)(h->end - h->p) < n || memcmp(h->p, word, n) != 0)
    return 0;
  const char *after = h->p + n;
  if (after < h->end && (*after == '_' || (*after >= 'a' && *after <= 'z') ||
                         (*after >= 'A' && *after <= 'Z') || (*after >= '0' && *after <= '9')))
    return 0;
  h->p = after;
  return 1;
}

static dmlc_status parse_bool(header_parser *h, int *out) {
  if (accept_word(h, "True"))
    *out = 1;
  else if (accept_word(h, "False"))
    *out = 0;
  else
    return header_error(h, "True or False for 'fortran_order'");
  return DMLC_OK;
}

static dmlc_status parse_dim(header_parser *h, uint64_t *out) {
  skip_space(h);
  if (h->p < h->end && *h->p == '-')
    return fail(h->err, h->err_size, h->name, DMLC_ERROR_INVALID_ARGUMENT,
                "malformed header: negative dimension in 'shape'");
  if (h->p < h->end && *h->p == '+')
    h->p++;
  if (h->p >= h->end || *h->p < '0' || *h->p > '9')
    return header_error(h, "a dimension (a non-negative integer) in 'shape'");
  uint64_t v = 0;
  while (h->p < h->end && *h->p >= '0' && *h->p <= '9') {
    const unsigned digit = (unsigned)(*h->p - '0');
    if (v > (UINT64_MAX - digit) / 10)
      return fail(h->err, h->err_size, h->name, DMLC_ERROR_INVALID_ARGUMENT,
                  "malformed header: dimension in 'shape' is too large");
    v = v * 10 + digit;
    h->p++;
  }
  if (h->p < h->end && (*h->p == 'L' || *h->p == 'l')) /* Python 2 long */
    h->p++;
  *out = v;
  return DMLC_OK;
}

static dmlc_status parse_shape(header_parser *h, npy_array *a) {
  if (!accept_char(h, '('))
    return header_error(h, "a tuple '(' for 'shape'");
  a->ndim = 0;
  int trailing_comma = 0;
  while (!accept_char(h, ')')) {
    if (a->ndim == NPY_MAX_DIMS)
      return fail(h->err, h->err_size, h->name, DMLC_ERROR_INVALID_ARGUMENT,
                  "shape has more than %d dimensions", NPY_MAX_DIMS);
    NPY_TRY(parse_dim(h, &a->shape[a->ndim++]));
    trailing_comma = accept_char(h, ',');
    if (!trailing_comma) {
      if (!accept_char(h, ')'))
        return header_error(h, "',' or ')' in 'shape'");
      break;
    }
  }
  if (a->ndim == 1 && !trailing_comma)
    return fail(h->err, h->err_size, h->name, DMLC_ERROR_INVALID_ARGUMENT,
                "malformed header: 'shape' (%llu) is not a tuple (one dimension is written "
                "(%llu,))",
                (unsigned long long)a->shape[0], (unsigned long long)a->shape[0]);
  return DMLC_OK;
}

/* '<f4', '>i2', '=u8', '|b1', 'f4': byte order, kind, size. */
static dmlc_status decode_descr(header_parser *h, const char *descr, npy_array *a, int *swap) {
  const char *s = descr;
  char order = '|';
  if (*s == '<' || *s == '>' || *s == '=' || *s == '|')
    order = *s++;
  const char kind = *s ? *s++ : '\0';
  char *digits_end = NULL;
  errno = 0;
  const unsigned long size = (*s >= '0' && *s <= '9') ? strtoul(s, &digits_end, 10) : 0;
  if (digits_end && *digits_end == '\0' && errno == 0) {
    for (int i = 0; i < NPY_DTYPE_COUNT; i++) {
      if (npy_dtypes[i].kind == kind && npy_dtypes[i].size == size) {
        a->dtype = (npy_dtype)i;
        const int file_little =
            order == '<' || ((order == '=' || order == '|') && host_is_little_endian());
        *swap = size > 1 && file_little != host_is_little_endian();
        return DMLC_OK;
      }
    }
  }
  return fail(h->err, h->err_size, h->name, DMLC_ERROR_INVALID_ARGUMENT,
              "unsupported data type '%s' (dmlc reads b1, i1, u1, i2, u2, i4, u4, i8, u8, f2, "
              "f4, f8)",
              descr);
}

enum { KEY_DESCR = 1, KEY_FORTRAN = 2, KEY_SHAPE = 4 };

static dmlc_status parse_entry(header_parser *h, npy_array *a, unsigned *seen, int *swap) {
  char key[32];
  NPY_TRY(parse_string(h, key, sizeof key));
  if (!accept_char(h, ':'))
    return header_error(h, "':' after a key");
  unsigned bit = 0;
  if (strcmp(key, "descr") == 0) {
    bit = KEY_DESCR;
    skip_space(h);
    if (h->p < h->end && (*h->p == '[' || *h->p == '('))
      return fail(h->err, h->err_size, h->name, DMLC_ERROR_INVALID_ARGUMENT,
                  "structured data types are not supported");
    char descr[32];
    NPY_TRY(parse_string(h, descr, sizeof descr));
    NPY_TRY(decode_descr(h, descr, a, swap));
  } else if (strcmp(key, "fortran_order") == 0) {
    bit = KEY_FORTRAN;
    NPY_TRY(parse_bool(h, &a->fortran_order));
  } else if (strcmp(key, "shape") == 0) {
    bit = KEY_SHAPE;
    NPY_TRY(parse_shape(h, a));
  } else {
    return fail(h->err, h->err_size, h->name, DMLC_ERROR_INVALID_ARGUMENT,
                "malformed header: unknown key '%s' (expected 'descr', 'fortran_order', "
                "'shape')",
                key);
  }
  if (*seen & bit)
    return fail(h->err, h->err_size, h->name, DMLC_ERROR_INVALID_ARGUMENT,
                "malformed header: key '%s' appears twice", key);
  *seen |= bit;
  return DMLC_OK;
}

static dmlc_status parse_header(header_parser *h, npy_array *a, int *swap) {
  if (!accept_char(h, '{'))
    return header_error(h, "'{' starting the header dict");
  unsigned seen = 0;
  while (!accept_char(h, '}')) {
    NPY_TRY(parse_entry(h, a, &seen, swap));
    if (!accept_char(h, ',')) {
      if (!accept_char(h, '}'))
        return header_error(h, "',' or '}' in the header dict");
      break;
    }
  }
  skip_space(h);
  if (h->p != h->end)
    return header_error(h, "nothing after the header dict");
  static const char *const names[] = {"descr", "fortran_order", "shape"};
  for (int i = 0; i < 3; i++)
    if (!(seen & (1u << i)))
      return fail(h->err, h->err_size, h->name, DMLC_ERROR_INVALID_ARGUMENT,
                  "malformed header: key '%s' is missing", names[i]);
  return DMLC_OK;
}

static void byteswap(unsigned char *data, uint64_t count, uint32_t size) {
  for (uint64_t i = 0; i < count; i++, data += size)
    for (uint32_t j = 0; j < size / 2; j++) {
      const unsigned char t = data[j];
      data[j] = data[size - 1 - j];
      data[size - 1 - j] = t;
    }
}

static uint32_t read_le(const unsigned char *p, int n) {
  uint32_t v = 0;
  for (int i = n - 1; i >= 0; i--)
    v = v << 8 | p[i];
  return v;
}

dmlc_status npy_parse(const void *bytes, size_t length, const char *name, npy_array *out, char *err,
                      size_t err_size) {
  const unsigned char *b = bytes;
  memset(out, 0, sizeof *out);
  if (length == 0)
    return fail(err, err_size, name, DMLC_ERROR_INVALID_ARGUMENT,
                "not a .npy file: the file is empty");
  const size_t magic_len = length < sizeof npy_magic ? length : sizeof npy_magic;
  if (memcmp(b, npy_magic, magic_len) != 0)
    return fail(err, err_size, name, DMLC_ERROR_INVALID_ARGUMENT,
                "not a .npy file: bad magic (expected \\x93NUMPY)");
  if (length < 8)
    return fail(err, err_size, name, DMLC_ERROR_INVALID_ARGUMENT,
                "truncated header: only %zu bytes, too short for the magic and version", length);
  const int major = b[6], minor = b[7];
  if (major < 1 || major > 3 || minor != 0)
    return fail(err, err_size, name, DMLC_ERROR_INVALID_ARGUMENT,
                "unsupported .npy format version %d.%d (dmlc reads 1.0, 2.0, 3.0)", major, minor);
  const int len_size = major == 1 ? 2 : 4;
  if (length < 8 + (size_t)len_size)
    return fail(err, err_size, name, DMLC_ERROR_INVALID_ARGUMENT,
                "truncated header: the file ends inside the header length field");
  const size_t header_start = 8 + (size_t)len_size;
  const uint32_t header_len = read_le(b + 8, len_size);
  if (header_len > length - header_start)
    return fail(err, err_size, name, DMLC_ERROR_INVALID_ARGUMENT,
                "truncated header: header length %u runs past the end of the file (%zu bytes)",
                header_len, length);
  header_parser h = {(const char *)b + header_start,
                     (const char *)b + header_start + header_len,
                     (const char *)b,
                     name,
                     err,
                     err_size};
  int swap = 0;
  npy_array a;
  memset(&a, 0, sizeof a);
  NPY_TRY(parse_header(&h, &a, &swap));
  char shape[256];
  format_shape(a.shape, a.ndim, shape, sizeof shape);
  if (shape_sizes(a.shape, a.ndim, npy_dtype_size(a.dtype), &a.count, &a.size_bytes) != 0)
    return fail(err, err_size, name, DMLC_ERROR_INVALID_ARGUMENT,
                "shape %s is too large (its size in bytes overflows)", shape);
  const size_t data_start = header_start + header_len;
  const size_t available = length - data_start;
  if (available < a.size_bytes)
    return fail(err, err_size, name, DMLC_ERROR_INVALID_ARGUMENT,
                "truncated data: a %s array of shape %s needs %llu bytes of data, the file has "
                "%zu",
                npy_dtype_descr(a.dtype), shape, (unsigned long long)a.size_bytes, available);
  if (available > a.size_bytes)
    return fail(err, err_size, name, DMLC_ERROR_INVALID_ARGUMENT,
                "%zu bytes of trailing data after the %llu bytes of a %s array of shape %s",
                available - (size_t)a.size_bytes, (unsigned long long)a.size_bytes,
                npy_dtype_descr(a.dtype), shape);
  a.data = malloc(a.size_bytes ? (size_t)a.size_bytes : 1);
  if (!a.data)
    return fail(err, err_size, name, DMLC_ERROR_OUT_OF_MEMORY, "out of memory for %llu bytes",
                (unsigned long long)a.size_bytes);
  memcpy(a.data, b + data_start, (size_t)a.size_bytes);
  if (swap)
    byteswap(a.data, a.count, npy_dtype_size(a.dtype));
  *out = a;
  return DMLC_OK;
}

dmlc_status npy_read_file(const char *path, npy_array *out, char *err, size_t err_size) {
  memset(out, 0, sizeof *out);
  FILE *f = fopen(path, "rb");
  if (!f)
    return fail(err, err_size, path, DMLC_ERROR_IO, "cannot open: %s", strerror(errno));
  size_t cap = 1 << 16, len = 0;
  unsigned char *buf = malloc(cap);
  dmlc_status status = buf ? DMLC_OK : DMLC_ERROR_OUT_OF_MEMORY;
  while (status == DMLC_OK) {
    if (len == cap) {
      unsigned char *grown = cap <= SIZE_MAX / 2 ? realloc(buf, cap * 2) : NULL;
      if (!grown) {
        status = DMLC_ERROR_OUT_OF_MEMORY;
        break;
      }
      buf = grown;
      cap *= 2;
    }
    const size_t n = fread(buf + len, 1, cap - len, f);
    len += n;
    if (n == 0)
      break;
  }
  if (status == DMLC_OK && ferror(f))
    status = fail(err, err_size, path, DMLC_ERROR_IO, "read error: %s", strerror(errno));
  else if (status == DMLC_ERROR_OUT_OF_MEMORY)
    fail(err, err_size, path, status, "out of memory reading the file");
  fclose(f);
  if (status == DMLC_OK)
    status = npy_parse(buf, len, path, out, err, err_size);
  free(buf);
  return status;
}

/* ---- writing ---- */

dmlc_status npy_encode(const npy_array *a, int version, unsigned char **out, size_t *out_length,
                       char *err, size_t err_size) {
  *out = NULL;
  *out_length = 0;
  char shape[NPY_MAX_DIMS * 22 + 8];
  format_shape(a->shape, a->ndim, shape, sizeof shape);
  char dict[sizeof shape + 96];
  const int dict_len =
      snprintf(dict, sizeof dict, "{'descr': '%s', 'fortran_order': %s, 'shape': %s, }",
               npy_dtype_descr(a->dtype), a->fortran_order ? "True" : "False", shape);
  if (dict_len < 0 || (size_t)dict_len >= sizeof dict)
    return fail(err, err_size, "npy", DMLC_ERROR_INTERNAL, "header too long");
  if (version == 0)
    version = dict_len + 1 + 10 <= 65535 ? 1 : 2;
  if (version < 1 || version > 3)
    return fail(err, err_size, "npy", DMLC_ERROR_INVALID_ARGUMENT, "cannot write version %d.0",
                version);
  const size_t prefix = version == 1 ? 10 : 12;
  /* Pad with spaces so the data starts 64-byte aligned; the header ends in
   * a newline. */
  const size_t header_len = ((prefix + (size_t)dict_len + 1 + 63) / 64) * 64 - prefix;
  if (version == 1 && header_len > 65535)
    return fail(err, err_size, "npy", DMLC_ERROR_INVALID_ARGUMENT,
                "header of %zu bytes does not fit format version 1.0", header_len);
  const size_t total = prefix + header_len + (size_t)a->size_bytes;
  unsigned char *buf = malloc(total);
  if (!buf)
    return fail(err, err_size, "npy", DMLC_ERROR_OUT_OF_MEMORY, "out of memory");
  memcpy(buf, npy_magic, sizeof npy_magic);
  buf[6] = (unsigned char)version;
  buf[7] = 0;
  for (size_t i = 0; i < prefix - 8; i++)
    buf[8 + i] = (unsigned char)(header_len >> (8 * i));
  memcpy(buf + prefix, dict, (size_t)dict_len);
  memset(buf + prefix + dict_len, ' ', header_len - (size_t)dict_len - 1);
  buf[prefix + header_len - 1] = '\n';
  if (a->size_bytes)
    memcpy(buf + prefix + header_len, a->data, (size_t)a->size_bytes);
  if (!host_is_little_endian())
    byteswap(buf + prefix + header_len, a->count, npy_dtype_size(a->dtype));
  *out = buf;
  *out_length = total;
  return DMLC_OK;
}

dmlc_status npy_write_file(const char *path, const npy_array *a, char *err, size_t err_size) {
  unsigned char *bytes;
  size_t length;
  NPY_TRY(npy_encode(a, 0, &bytes, &length, err, err_size));
  FILE *f = fopen(path, "wb");
  if (!f) {
    free(bytes);
    return fail(err, err_size, path, DMLC_ERROR_IO, "cannot create: %s", strerror(errno));
  }
  const size_t written = fwrite(bytes, 1, length, f);
  const int close_failed = fclose(f);
  free(bytes);
  if (written != length || close_failed)
    return fail(err, err_size, path, DMLC_ERROR_IO, "write error: %s", strerror(errno));
  return DMLC_OK;
}
