/* tools/npy.c: round trips of every data type and format version, and every
 * kind of malformed file rejected with a message naming the file. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"
#include "tools/npy.h"

/* A .npy file from its parts: magic, version, header length, header, data.
 * The result is malloc'ed at exactly its size, so a read past its end is
 * seen by AddressSanitizer or valgrind. */
static unsigned char *make_file(int major, int minor, const char *header, const void *data,
                                size_t data_len, size_t *length) {
  const size_t hlen = strlen(header), prefix = major == 1 ? 10 : 12;
  *length = prefix + hlen + data_len;
  unsigned char *b = malloc(*length);
  ck_assert_ptr_nonnull(b);
  memcpy(b, "\x93NUMPY", 6);
  b[6] = (unsigned char)major;
  b[7] = (unsigned char)minor;
  for (size_t i = 0; i < prefix - 8; i++)
    b[8 + i] = (unsigned char)(hlen >> (8 * i));
  memcpy(b + prefix, header, hlen);
  if (data_len)
    memcpy(b + prefix + hlen, data, data_len);
  return b;
}

/* Parses bytes (copied to an exactly sized buffer) expecting failure with a
 * message "name: ..." that contains expect. */
static void expect_error(const void *bytes, size_t length, const char *expect) {
  void *copy = malloc(length ? length : 1);
  ck_assert_ptr_nonnull(copy);
  if (length)
    memcpy(copy, bytes, length);
  npy_array a;
  char err[NPY_ERROR_MAX] = "";
  const dmlc_status status = npy_parse(copy, length, "bad.npy", &a, err, sizeof err);
  free(copy);
  ck_assert_msg(status != DMLC_OK, "accepted a malformed file (expected '%s')", expect);
  ck_assert_ptr_null(a.data);
  ck_assert_msg(strncmp(err, "bad.npy: ", 9) == 0, "message does not name the file: '%s'", err);
  ck_assert_msg(strstr(err, expect) != NULL, "message '%s' lacks '%s'", err, expect);
}

static void expect_header_error(int major, const char *header, size_t data_len,
                                const char *expect) {
  unsigned char data[64] = {0};
  ck_assert_uint_le(data_len, sizeof data);
  size_t length;
  unsigned char *b = make_file(major, 0, header, data, data_len, &length);
  expect_error(b, length, expect);
  free(b);
}

/* Fills a with distinct bit patterns, so a swapped or misplaced byte shows. */
static void fill_pattern(npy_array *a) {
  unsigned char *p = a->data;
  for (uint64_t i = 0; i < a->size_bytes; i++)
    p[i] = (unsigned char)(i * 37 + 11);
  if (a->dtype == NPY_DTYPE_BOOL)
    for (uint64_t i = 0; i < a->size_bytes; i++)
      p[i] &= 1;
}

START_TEST(round_trip_every_dtype_version_order_shape) {
  static const uint64_t shapes[][4] = {{0}, {1}, {7}, {2, 3}, {2, 3, 4}, {1, 1, 1, 5}};
  static const uint32_t ranks[] = {0, 1, 1, 2, 3, 4};
  for (int dtype = 0; dtype < NPY_DTYPE_COUNT; dtype++)
    for (int version = 1; version <= 3; version++)
      for (int fortran = 0; fortran <= 1; fortran++)
        for (size_t s = 0; s < sizeof ranks / sizeof ranks[0]; s++) {
          npy_array a, b;
          ck_assert_int_eq(npy_array_init(&a, (npy_dtype)dtype, ranks[s], shapes[s]), DMLC_OK);
          a.fortran_order = fortran;
          fill_pattern(&a);
          unsigned char *bytes;
          size_t length;
          char err[NPY_ERROR_MAX];
          ck_assert_int_eq(npy_encode(&a, version, &bytes, &length, err, sizeof err), DMLC_OK);
          ck_assert_int_eq(bytes[6], version);
          const size_t prefix = version == 1 ? 10 : 12;
          const size_t hlen = version == 1 ? (size_t)(bytes[8] | bytes[9] << 8)
                                           : (size_t)(bytes[8] | bytes[9] << 8 | bytes[10] << 16);
          ck_assert_uint_eq((prefix + hlen) % 64, 0);
          ck_assert_int_eq(bytes[prefix + hlen - 1], '\n');
          ck_assert_int_eq(npy_parse(bytes, length, "rt.npy", &b, err, sizeof err), DMLC_OK);
          ck_assert_int_eq(b.dtype, dtype);
          ck_assert_int_eq(b.fortran_order, fortran);
          ck_assert_uint_eq(b.ndim, ranks[s]);
          for (uint32_t i = 0; i < b.ndim; i++)
            ck_assert_uint_eq(b.shape[i], shapes[s][i]);
          ck_assert_uint_eq(b.count, a.count);
          ck_assert_uint_eq(b.size_bytes, a.size_bytes);
          ck_assert_int_eq(memcmp(a.data, b.data, a.size_bytes), 0);
          free(bytes);
          npy_array_free(&a);
          npy_array_free(&b);
        }
}
END_TEST

START_TEST(dtype_table) {
  static const struct {
    npy_dtype dtype;
    const char *descr, *name;
    uint32_t size;
    DML_TENSOR_DATA_TYPE dml;
  } expected[] = {
      {NPY_DTYPE_BOOL, "|b1", "bool", 1, DML_TENSOR_DATA_TYPE_UNKNOWN},
      {NPY_DTYPE_I8, "|i1", "i8", 1, DML_TENSOR_DATA_TYPE_INT8},
      {NPY_DTYPE_U8, "|u1", "u8", 1, DML_TENSOR_DATA_TYPE_UINT8},
      {NPY_DTYPE_I16, "<i2", "i16", 2, DML_TENSOR_DATA_TYPE_INT16},
      {NPY_DTYPE_U16, "<u2", "u16", 2, DML_TENSOR_DATA_TYPE_UINT16},
      {NPY_DTYPE_I32, "<i4", "i32", 4, DML_TENSOR_DATA_TYPE_INT32},
      {NPY_DTYPE_U32, "<u4", "u32", 4, DML_TENSOR_DATA_TYPE_UINT32},
      {NPY_DTYPE_I64, "<i8", "i64", 8, DML_TENSOR_DATA_TYPE_INT64},
      {NPY_DTYPE_U64, "<u8", "u64", 8, DML_TENSOR_DATA_TYPE_UINT64},
      {NPY_DTYPE_F16, "<f2", "f16", 2, DML_TENSOR_DATA_TYPE_FLOAT16},
      {NPY_DTYPE_F32, "<f4", "f32", 4, DML_TENSOR_DATA_TYPE_FLOAT32},
      {NPY_DTYPE_F64, "<f8", "f64", 8, DML_TENSOR_DATA_TYPE_FLOAT64},
  };
  ck_assert_int_eq(sizeof expected / sizeof expected[0], NPY_DTYPE_COUNT);
  for (size_t i = 0; i < sizeof expected / sizeof expected[0]; i++) {
    const npy_dtype d = expected[i].dtype;
    ck_assert_str_eq(npy_dtype_descr(d), expected[i].descr);
    ck_assert_str_eq(npy_dtype_name(d), expected[i].name);
    ck_assert_uint_eq(npy_dtype_size(d), expected[i].size);
    ck_assert_int_eq(npy_dtype_to_dml(d), expected[i].dml);
    if (d != NPY_DTYPE_BOOL) {
      npy_dtype back;
      ck_assert_int_eq(npy_dtype_from_dml(expected[i].dml, &back), 0);
      ck_assert_int_eq(back, d);
      ck_assert_uint_eq(dmlc_data_type_size(expected[i].dml), expected[i].size);
      ck_assert_str_eq(dmlc_data_type_name(expected[i].dml), expected[i].name);
    }
  }
  npy_dtype unused;
  ck_assert_int_eq(npy_dtype_from_dml(DML_TENSOR_DATA_TYPE_UNKNOWN, &unused), -1);
  ck_assert_int_eq(npy_dtype_from_dml(DML_TENSOR_DATA_TYPE_UINT4, &unused), -1);
}
END_TEST

/* Headers as NumPy and other writers spell them, all accepted. */
START_TEST(header_spellings) {
  static const struct {
    const char *header;
    npy_dtype dtype;
    int fortran;
    uint32_t ndim;
    uint64_t dims[2];
  } cases[] = {
      {"{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }    \n",
       NPY_DTYPE_F32,
       0,
       2,
       {2, 3}},
      {"{\"shape\": (6,), \"descr\": \"<i4\", \"fortran_order\": True}\n",
       NPY_DTYPE_I32,
       1,
       1,
       {6}},
      {"{'descr':'<u2','fortran_order':False,'shape':(3,2)}", NPY_DTYPE_U16, 0, 2, {3, 2}},
      {"{'descr': '|u1', 'fortran_order': False, 'shape': (6L,), }\n", NPY_DTYPE_U8, 0, 1, {6}},
      {"{'descr': '<i1', 'fortran_order': False, 'shape': (1, 6), }\n", NPY_DTYPE_I8, 0, 2, {1, 6}},
      {"{'descr': '|b1', 'fortran_order': False, 'shape': ( 6 , ) }\n", NPY_DTYPE_BOOL, 0, 1, {6}},
      {"{'descr': 'f8', 'fortran_order': False, 'shape': (6,), }\n", NPY_DTYPE_F64, 0, 1, {6}},
      {"{'descr': '<f2', 'fortran_order': False, 'shape': (+6,), }\n", NPY_DTYPE_F16, 0, 1, {6}},
      {"{'descr': '<u8', 'fortran_order': False, 'shape': (0,), }\n", NPY_DTYPE_U64, 0, 1, {0}},
  };
  unsigned char data[64];
  for (size_t i = 0; i < sizeof data; i++)
    data[i] = (unsigned char)i;
  for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
    size_t elements = 1;
    for (uint32_t i = 0; i < cases[c].ndim; i++)
      elements *= cases[c].dims[i];
    const size_t data_len = elements * npy_dtype_size(cases[c].dtype);
    for (int major = 1; major <= 3; major++) {
      size_t length;
      unsigned char *b = make_file(major, 0, cases[c].header, data, data_len, &length);
      npy_array a;
      char err[NPY_ERROR_MAX] = "";
      ck_assert_msg(npy_parse(b, length, "ok.npy", &a, err, sizeof err) == DMLC_OK, "%s: %s",
                    cases[c].header, err);
      ck_assert_int_eq(a.dtype, cases[c].dtype);
      ck_assert_int_eq(a.fortran_order, cases[c].fortran);
      ck_assert_uint_eq(a.ndim, cases[c].ndim);
      for (uint32_t i = 0; i < a.ndim; i++)
        ck_assert_uint_eq(a.shape[i], cases[c].dims[i]);
      ck_assert_int_eq(memcmp(a.data, data, data_len), 0);
      npy_array_free(&a);
      free(b);
    }
  }
}
END_TEST

START_TEST(byte_orders) {
  /* 0x0102 and 1.0f in big-endian, little-endian and native files. */
  const unsigned char be16[] = {0x01, 0x02}, le16[] = {0x02, 0x01};
  const unsigned char be32[] = {0x3f, 0x80, 0, 0}, le32[] = {0, 0, 0x80, 0x3f};
  const struct {
    const char *header;
    const unsigned char *data;
    size_t len;
  } cases[] = {
      {"{'descr': '>u2', 'fortran_order': False, 'shape': (1,), }", be16, 2},
      {"{'descr': '<u2', 'fortran_order': False, 'shape': (1,), }", le16, 2},
      {"{'descr': '>f4', 'fortran_order': False, 'shape': (1,), }", be32, 4},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': (1,), }", le32, 4},
  };
  for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
    size_t length;
    unsigned char *b = make_file(1, 0, cases[c].header, cases[c].data, cases[c].len, &length);
    npy_array a;
    char err[NPY_ERROR_MAX];
    ck_assert_int_eq(npy_parse(b, length, "o.npy", &a, err, sizeof err), DMLC_OK);
    if (a.dtype == NPY_DTYPE_U16) {
      uint16_t v;
      memcpy(&v, a.data, 2);
      ck_assert_uint_eq(v, 0x0102);
    } else {
      float v;
      memcpy(&v, a.data, 4);
      ck_assert(v == 1.0f);
    }
    npy_array_free(&a);
    free(b);
  }
  /* '=' is the host's order. */
  const uint32_t native = 0x01020304;
  size_t length;
  unsigned char *b = make_file(2, 0, "{'descr': '=u4', 'fortran_order': False, 'shape': (1,)}",
                               &native, 4, &length);
  npy_array a;
  char err[NPY_ERROR_MAX];
  ck_assert_int_eq(npy_parse(b, length, "o.npy", &a, err, sizeof err), DMLC_OK);
  ck_assert_int_eq(memcmp(a.data, &native, 4), 0);
  npy_array_free(&a);
  free(b);
}
END_TEST

START_TEST(fortran_strides) {
  npy_array a;
  const uint64_t shape[3] = {2, 3, 4};
  ck_assert_int_eq(npy_array_init(&a, NPY_DTYPE_F32, 3, shape), DMLC_OK);
  uint64_t s[3];
  npy_array_strides(&a, s);
  ck_assert_uint_eq(s[0], 12);
  ck_assert_uint_eq(s[1], 4);
  ck_assert_uint_eq(s[2], 1);
  a.fortran_order = 1;
  npy_array_strides(&a, s);
  ck_assert_uint_eq(s[0], 1);
  ck_assert_uint_eq(s[1], 2);
  ck_assert_uint_eq(s[2], 6);
  npy_array_free(&a);
}
END_TEST

START_TEST(malformed_files) {
  static const char ok_tail[] = "{'descr': '<f4', 'fortran_order': False, 'shape': (1,), }";
  expect_error("", 0, "empty");
  expect_error("PK\x03\x04zip file....", 16, "bad magic");
  expect_error("\x93NUMPZ\x01\x00", 8, "bad magic");
  expect_error("\x93NUM", 4, "truncated header");
  expect_error("\x93NUMPY\x01", 7, "truncated header");
  expect_error("\x93NUMPY\x01\x00\x05", 9, "header length field");
  expect_error("\x93NUMPY\x02\x00\x05\x00\x00", 11, "header length field");
  expect_error("\x93NUMPY\x01\x00\xff\xff{}", 12, "runs past the end");
  expect_error("\x93NUMPY\x02\x00\xff\xff\xff\xff{}", 14, "runs past the end");
  expect_header_error(4, ok_tail, 4, "version 4.0");
  expect_header_error(0, ok_tail, 4, "version 0.0");
  {
    size_t length;
    unsigned char *b = make_file(1, 1, ok_tail, "\0\0\0\0", 4, &length);
    expect_error(b, length, "version 1.1");
    free(b);
  }
  static const struct {
    const char *header;
    size_t data_len;
    const char *expect;
  } cases[] = {
      {"", 0, "expected '{'"},
      {"   \n", 0, "expected '{'"},
      {"[1, 2]", 0, "expected '{'"},
      {"{", 0, "expected a quoted string"},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': (1,)", 4, "',' or '}'"},
      {"{'descr': '<f4', 'fortran_order': False}", 4, "'shape' is missing"},
      {"{'shape': (1,), 'fortran_order': False}", 4, "'descr' is missing"},
      {"{'descr': '<f4', 'shape': (1,)}", 4, "'fortran_order' is missing"},
      {"{}", 0, "is missing"},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': (1,), 'extra': 1}", 4,
       "unknown key 'extra'"},
      {"{'descr': '<f4', 'descr': '<f4', 'fortran_order': False, 'shape': (1,)}", 4,
       "appears twice"},
      {"{'descr' '<f4', 'fortran_order': False, 'shape': (1,)}", 4, "':' after a key"},
      {"{descr: '<f4', 'fortran_order': False, 'shape': (1,)}", 4, "quoted string"},
      {"{'descr': '<f4, 'fortran_order': False, 'shape': (1,)}", 4,
       "unsupported data type '<f4, '"},
      {"{'descr': '<f4\\n', 'fortran_order': False, 'shape': (1,)}", 4, "no escapes"},
      {"{'descr': '<f4", 0, "closing quote"},
      {"{'descr': '<c8', 'fortran_order': False, 'shape': (1,)}", 8, "unsupported data type '<c8'"},
      {"{'descr': '<U3', 'fortran_order': False, 'shape': (1,)}", 12, "unsupported data type"},
      {"{'descr': '|O', 'fortran_order': False, 'shape': (1,)}", 8, "unsupported data type '|O'"},
      {"{'descr': '<f16', 'fortran_order': False, 'shape': (1,)}", 16, "unsupported data type"},
      {"{'descr': '<f4x', 'fortran_order': False, 'shape': (1,)}", 4, "unsupported data type"},
      {"{'descr': '<M8[ns]', 'fortran_order': False, 'shape': (1,)}", 8, "unsupported"},
      {"{'descr': '', 'fortran_order': False, 'shape': (1,)}", 4, "unsupported data type ''"},
      {"{'descr': '<f99999999999999999999999', 'fortran_order': False, 'shape': (1,)}", 4,
       "unsupported data type"},
      {"{'descr': [('a', '<f4')], 'fortran_order': False, 'shape': (1,)}", 4, "structured"},
      {"{'descr': '<f4', 'fortran_order': 0, 'shape': (1,)}", 4, "True or False"},
      {"{'descr': '<f4', 'fortran_order': Falsey, 'shape': (1,)}", 4, "True or False"},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': 1}", 4, "a tuple"},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': [1]}", 4, "a tuple"},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': (1)}", 4, "is not a tuple"},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': (-1,)}", 4, "negative dimension"},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': (2, -3)}", 4, "negative dimension"},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': (1.5,)}", 4, "',' or ')'"},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': (a,)}", 4, "a dimension"},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': (,)}", 4, "a dimension"},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': (1,,)}", 4, "a dimension"},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': (1 2)}", 4, "',' or ')'"},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': (1,", 4, "a dimension"},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': (99999999999999999999999,)}", 4,
       "too large"},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': (18446744073709551615,)}", 4,
       "too large"},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': (4294967296, 4294967296)}", 4,
       "too large"},
      {"{'descr': '|u1', 'fortran_order': False, 'shape': (2147483648, 2147483648, 2)}", 4,
       "too large"},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': (1,)} x", 4, "nothing after"},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': (1,)}\x01", 4, "byte 0x01"},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3)}", 23,
       "needs 24 bytes of data, the file has 23"},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3)}", 0, "needs 24 bytes"},
      {"{'descr': '<f8', 'fortran_order': False, 'shape': ()}", 4, "needs 8 bytes"},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': (1,)}", 5, "1 bytes of trailing data"},
  };
  for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++)
    for (int major = 1; major <= 3; major++)
      expect_header_error(major, cases[c].header, cases[c].data_len, cases[c].expect);
  /* More dimensions than NumPy allows. */
  char header[512];
  int n = snprintf(header, sizeof header, "{'descr': '<f4', 'fortran_order': False, 'shape': (");
  for (int i = 0; i < NPY_MAX_DIMS + 1; i++)
    n += snprintf(header + n, sizeof header - (size_t)n, "1, ");
  snprintf(header + n, sizeof header - (size_t)n, ")}");
  expect_header_error(1, header, 4, "more than 64 dimensions");
}
END_TEST

/* Every proper prefix of a valid file is rejected, with a message. */
START_TEST(truncation_at_every_byte) {
  for (int version = 1; version <= 3; version++) {
    npy_array a;
    const uint64_t shape[2] = {3, 5};
    ck_assert_int_eq(npy_array_init(&a, NPY_DTYPE_I16, 2, shape), DMLC_OK);
    fill_pattern(&a);
    unsigned char *bytes;
    size_t length;
    char err[NPY_ERROR_MAX];
    ck_assert_int_eq(npy_encode(&a, version, &bytes, &length, err, sizeof err), DMLC_OK);
    const size_t data_start = length - (size_t)a.size_bytes;
    for (size_t cut = 0; cut < length; cut++) {
      const char *expect = cut < 6            ? (cut == 0 ? "empty" : "truncated header")
                           : cut < data_start ? "truncated header"
                                              : "truncated data";
      /* A cut inside the padding leaves a parsable dict whose length field
       * runs past the end: still "truncated header". */
      expect_error(bytes, cut, expect);
    }
    npy_array b;
    ck_assert_int_eq(npy_parse(bytes, length, "full.npy", &b, err, sizeof err), DMLC_OK);
    npy_array_free(&b);
    free(bytes);
    npy_array_free(&a);
  }
}
END_TEST

/* Every byte of a valid file replaced by a few values: accepted or rejected
 * with a message naming the file, never a crash. */
START_TEST(byte_mutations) {
  npy_array a;
  const uint64_t shape[2] = {2, 3};
  ck_assert_int_eq(npy_array_init(&a, NPY_DTYPE_F32, 2, shape), DMLC_OK);
  unsigned char *bytes;
  size_t length;
  char err[NPY_ERROR_MAX];
  ck_assert_int_eq(npy_encode(&a, 1, &bytes, &length, err, sizeof err), DMLC_OK);
  static const unsigned char values[] = {0,   '\'', '"', '(', ')',  ',',  ':', '{',
                                         '}', '-',  '9', ' ', '\n', 0x80, 0xff};
  for (size_t i = 0; i < length; i++)
    for (size_t v = 0; v < sizeof values; v++) {
      unsigned char *copy = malloc(length);
      ck_assert_ptr_nonnull(copy);
      memcpy(copy, bytes, length);
      copy[i] = values[v];
      npy_array b;
      err[0] = '\0';
      if (npy_parse(copy, length, "m.npy", &b, err, sizeof err) == DMLC_OK)
        npy_array_free(&b);
      else
        ck_assert_msg(strncmp(err, "m.npy: ", 7) == 0 && strlen(err) > 8, "'%s'", err);
      free(copy);
    }
  free(bytes);
  npy_array_free(&a);
}
END_TEST

START_TEST(files) {
  const char *path = DMLC_BINARY_DIR "/test_npy_tmp.npy";
  npy_array a, b;
  const uint64_t shape[3] = {2, 1, 3};
  ck_assert_int_eq(npy_array_init(&a, NPY_DTYPE_F16, 3, shape), DMLC_OK);
  fill_pattern(&a);
  char err[NPY_ERROR_MAX];
  ck_assert_int_eq(npy_write_file(path, &a, err, sizeof err), DMLC_OK);
  ck_assert_int_eq(npy_read_file(path, &b, err, sizeof err), DMLC_OK);
  ck_assert_int_eq(b.dtype, NPY_DTYPE_F16);
  ck_assert_uint_eq(b.ndim, 3);
  ck_assert_int_eq(memcmp(a.data, b.data, a.size_bytes), 0);
  npy_array_free(&b);
  remove(path);

  ck_assert_int_eq(npy_read_file(DMLC_BINARY_DIR "/no/such.npy", &b, err, sizeof err),
                   DMLC_ERROR_IO);
  ck_assert_ptr_nonnull(strstr(err, "no/such.npy: cannot open"));
  ck_assert_int_eq(npy_write_file(DMLC_BINARY_DIR "/no/such/dir.npy", &a, err, sizeof err),
                   DMLC_ERROR_IO);
  ck_assert_ptr_nonnull(strstr(err, "dir.npy: cannot create"));
  /* A directory is not a file. */
  ck_assert_int_ne(npy_read_file(DMLC_BINARY_DIR, &b, err, sizeof err), DMLC_OK);
  ck_assert_ptr_nonnull(strstr(err, DMLC_BINARY_DIR ": "));

  /* The examples' data files, written by NumPy. */
  ck_assert_int_eq(
      npy_read_file(DMLC_SOURCE_DIR "/examples/data/hardmax_x.npy", &b, err, sizeof err), DMLC_OK);
  ck_assert_int_eq(b.dtype, NPY_DTYPE_F32);
  ck_assert_uint_eq(b.count, 8);
  const float expected[8] = {12, 0, -101, 11, 3, 234, 0, -101};
  ck_assert_int_eq(memcmp(b.data, expected, sizeof expected), 0);
  npy_array_free(&b);
  npy_array_free(&a);
}
END_TEST

START_TEST(small_error_buffers) {
  /* Messages are cut to fit, never overflow. */
  char err[8];
  memset(err, 'x', sizeof err);
  npy_array a;
  ck_assert_int_ne(npy_parse("junk", 4, "a-long-file-name.npy", &a, err, sizeof err), DMLC_OK);
  ck_assert_uint_eq(strlen(err), sizeof err - 1);
  ck_assert_int_ne(npy_parse("junk", 4, "x.npy", &a, NULL, 0), DMLC_OK);
}
END_TEST

static Suite *npy_suite(void) {
  Suite *s = suite_create("npy");
  TCase *tc = tcase_create("npy");
  tcase_add_test(tc, round_trip_every_dtype_version_order_shape);
  tcase_add_test(tc, dtype_table);
  tcase_add_test(tc, header_spellings);
  tcase_add_test(tc, byte_orders);
  tcase_add_test(tc, fortran_strides);
  tcase_add_test(tc, malformed_files);
  tcase_add_test(tc, truncation_at_every_byte);
  tcase_add_test(tc, byte_mutations);
  tcase_add_test(tc, files);
  tcase_add_test(tc, small_error_buffers);
  suite_add_tcase(s, tc);
  return s;
}

int main(void) {
  Suite *suites[] = {npy_suite()};
  return dmlc_test_run_suites(suites, 1);
}
