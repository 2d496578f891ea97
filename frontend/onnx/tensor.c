/* TensorProto <-> dmlc_onnx_tensor: the .pb files of ONNX's test data, and
 * the initializers and Constant values of a model. */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "frontend/messages.h"
#include "frontend/onnx/onnx_internal.h"

#define MAX_ELEMENTS UINT64_C(4294967295)
#define DATA_ALIGN 64

#define INVALID(diag, ...) dmlc_diag_set(diag, DMLC_ERROR_INVALID_ARGUMENT, __VA_ARGS__)
#define UNSUPPORTED(diag, ...) dmlc_diag_set(diag, DMLC_ERROR_UNSUPPORTED, __VA_ARGS__)

static bool host_is_little_endian(void) { return __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__; }

/* Copies count elements of size bytes, reversing each element's bytes on a
 * big-endian host (ONNX's raw_data is little-endian). */
static void copy_little_endian(void *dst, const void *src, uint64_t count, uint32_t size) {
  if (host_is_little_endian() || size == 1) {
    memcpy(dst, src, (size_t)(count * size));
    return;
  }
  const unsigned char *s = src;
  unsigned char *d = dst;
  for (uint64_t i = 0; i < count; i++)
    for (uint32_t b = 0; b < size; b++)
      d[i * size + b] = s[i * size + size - 1 - b];
}

/* ---- decoding ---- */

static const char *const field_names[] = {
    [ONNX_FIELD_NONE] = "raw_data",      [ONNX_FIELD_FLOAT] = "float_data",
    [ONNX_FIELD_INT32] = "int32_data",   [ONNX_FIELD_INT64] = "int64_data",
    [ONNX_FIELD_DOUBLE] = "double_data", [ONNX_FIELD_UINT64] = "uint64_data",
};

/* How many values tp holds in the typed field f. */
static size_t field_count(const Onnx__TensorProto *tp, onnx_data_field f) {
  switch (f) {
  case ONNX_FIELD_FLOAT:
    return tp->n_float_data;
  case ONNX_FIELD_INT32:
    return tp->n_int32_data;
  case ONNX_FIELD_INT64:
    return tp->n_int64_data;
  case ONNX_FIELD_DOUBLE:
    return tp->n_double_data;
  case ONNX_FIELD_UINT64:
    return tp->n_uint64_data;
  case ONNX_FIELD_NONE:
    break;
  }
  return 0;
}

static dmlc_status check_type(const Onnx__TensorProto *tp, const char *what,
                              DML_TENSOR_DATA_TYPE *dml, dmlc_diag *diag) {
  if (!tp->has_data_type || tp->data_type == 0)
    return INVALID(diag, "%s: data_type is missing (or UNDEFINED)", what);
  if (!dmlc_onnx_data_type_to_dml(tp->data_type, dml)) {
    char type[96];
    dmlc_onnx_describe_lacking_type(tp->data_type, type, sizeof type);
    return dmlc_diag_set(diag,
                         dmlc_onnx_data_type_name(tp->data_type) ? DMLC_ERROR_UNSUPPORTED
                                                                 : DMLC_ERROR_INVALID_ARGUMENT,
                         "%s: %s", what, type);
  }
  return DMLC_OK;
}

static dmlc_status check_storage(const Onnx__TensorProto *tp, const char *what, dmlc_diag *diag) {
  const bool external =
      tp->n_external_data > 0 ||
      (tp->has_data_location && tp->data_location == ONNX__TENSOR_PROTO__DATA_LOCATION__EXTERNAL);
  if (external) {
    const char *location = "";
    for (size_t i = 0; i < tp->n_external_data; i++)
      if (tp->external_data[i]->key && strcmp(tp->external_data[i]->key, "location") == 0)
        location = tp->external_data[i]->value ? tp->external_data[i]->value : "";
    return UNSUPPORTED(diag,
                       "%s: its data is in an external file ('%.*s'), which dmlc does not read "
                       "(external data)",
                       what, ONNX_QUOTE_MAX, location);
  }
  if (tp->segment)
    return UNSUPPORTED(diag, "%s: a segment of a larger tensor, which dmlc does not read", what);
  return DMLC_OK;
}

static dmlc_status check_dims(const Onnx__TensorProto *tp, const char *what, bool allow_empty,
                              dmlc_onnx_tensor *t, dmlc_diag *diag) {
  if (tp->n_dims > DMLC_MAX_RANK)
    return UNSUPPORTED(diag, "%s: rank %zu; dmlc's tensors have at most %d dims", what, tp->n_dims,
                       DMLC_MAX_RANK);
  t->rank = (uint32_t)tp->n_dims;
  t->element_count = 1;
  for (uint32_t i = 0; i < t->rank; i++) {
    const int64_t d = tp->dims[i];
    if (d < 0)
      return INVALID(diag, "%s: dims[%u] is %" PRId64 "; dims are at least 0", what, i, d);
    if (d == 0 && !allow_empty)
      return UNSUPPORTED(diag, "%s: dims[%u] is 0: an empty tensor, which dmlc does not have", what,
                         i);
    if (t->element_count > 0 && (uint64_t)d > MAX_ELEMENTS / t->element_count)
      return UNSUPPORTED(diag,
                         "%s: dims[%u] is %" PRId64 ", which makes more than %" PRIu64
                         " elements, dmlc's most",
                         what, i, d, MAX_ELEMENTS);
    t->dims[i] = (uint64_t)d;
    t->element_count *= (uint64_t)d;
  }
  return DMLC_OK;
}

/* Exactly one place holds the data, the one the type allows, with one
 * value per element (or element-size bytes each, in raw_data). */
static dmlc_status check_data(const Onnx__TensorProto *tp, const char *what,
                              const dmlc_onnx_tensor *t, uint32_t esize, dmlc_diag *diag) {
  const onnx_data_field want = dmlc_onnx_data_type_field(tp->data_type);
  const char *type = dmlc_onnx_data_type_name(tp->data_type);
  const char *holder = tp->has_raw_data ? "raw_data" : NULL;
  for (onnx_data_field f = ONNX_FIELD_FLOAT; f <= ONNX_FIELD_UINT64; f++) {
    if (field_count(tp, f) == 0)
      continue;
    if (holder)
      return INVALID(diag, "%s: holds data in both %s and %s", what, holder, field_names[f]);
    holder = field_names[f];
    if (f != want)
      return INVALID(diag, "%s: holds %s elements in %s; they belong in %s or raw_data", what, type,
                     field_names[f], field_names[want]);
  }
  if (tp->n_string_data > 0)
    return INVALID(diag, "%s: holds string_data, but its data type is %s", what, type);
  char dims[DMLC_MAX_RANK * 22 + 4];
  dmlc_format_u64_list(t->dims, t->rank, dims, sizeof dims);
  if (!holder && t->element_count == 0)
    return DMLC_OK; /* an empty constant */
  if (!holder)
    return INVALID(diag, "%s: holds no data (neither raw_data nor %s) for its %" PRIu64 " elements",
                   what, field_names[want], t->element_count);
  if (tp->has_raw_data) {
    if ((uint64_t)tp->raw_data.len != t->element_count * esize)
      return INVALID(diag, "%s: raw_data holds %zu bytes; dims %s of %s need %" PRIu64, what,
                     tp->raw_data.len, dims, type, t->element_count * esize);
    return DMLC_OK;
  }
  if ((uint64_t)field_count(tp, want) != t->element_count)
    return INVALID(diag, "%s: %s holds %zu values; dims %s need %" PRIu64, what, field_names[want],
                   field_count(tp, want), dims, t->element_count);
  return DMLC_OK;
}

/* int32_data values of the narrow types, and uint64_data values of UINT32,
 * must fit the type (FLOAT16 as its 16-bit pattern). */
static dmlc_status check_range(const Onnx__TensorProto *tp, const char *what, dmlc_diag *diag) {
  int64_t lo = INT32_MIN, hi = INT32_MAX;
  switch (tp->data_type) {
  case ONNX__TENSOR_PROTO__DATA_TYPE__UINT8:
    lo = 0, hi = UINT8_MAX;
    break;
  case ONNX__TENSOR_PROTO__DATA_TYPE__INT8:
    lo = INT8_MIN, hi = INT8_MAX;
    break;
  case ONNX__TENSOR_PROTO__DATA_TYPE__UINT16:
  case ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT16:
    lo = 0, hi = UINT16_MAX;
    break;
  case ONNX__TENSOR_PROTO__DATA_TYPE__INT16:
    lo = INT16_MIN, hi = INT16_MAX;
    break;
  case ONNX__TENSOR_PROTO__DATA_TYPE__UINT32:
    for (size_t i = 0; i < tp->n_uint64_data; i++)
      if (tp->uint64_data[i] > UINT32_MAX)
        return INVALID(diag, "%s: uint64_data[%zu] is %" PRIu64 ", outside UINT32's range", what, i,
                       tp->uint64_data[i]);
    return DMLC_OK;
  default:
    return DMLC_OK;
  }
  for (size_t i = 0; i < tp->n_int32_data; i++)
    if (tp->int32_data[i] < lo || tp->int32_data[i] > hi)
      return INVALID(diag, "%s: int32_data[%zu] is %" PRId32 ", outside %s's range", what, i,
                     tp->int32_data[i], dmlc_onnx_data_type_name(tp->data_type));
  return DMLC_OK;
}

/* The typed field's values into data, converted to the element type (each
 * fits: check_range). */
static void copy_typed(const Onnx__TensorProto *tp, void *data, uint64_t count, uint32_t esize) {
  unsigned char *d = data;
  for (uint64_t i = 0; i < count; i++, d += esize) {
    switch (dmlc_onnx_data_type_field(tp->data_type)) {
    case ONNX_FIELD_FLOAT:
      memcpy(d, &tp->float_data[i], 4);
      break;
    case ONNX_FIELD_DOUBLE:
      memcpy(d, &tp->double_data[i], 8);
      break;
    case ONNX_FIELD_INT64:
      memcpy(d, &tp->int64_data[i], 8);
      break;
    case ONNX_FIELD_INT32: {
      const int32_t v = tp->int32_data[i];
      const int8_t v8 = (int8_t)v;
      const int16_t v16 = (int16_t)v;
      memcpy(d, esize == 1 ? (const void *)&v8 : esize == 2 ? (const void *)&v16 : &v, esize);
      break;
    }
    case ONNX_FIELD_UINT64: {
      const uint64_t v = tp->uint64_data[i];
      const uint32_t v32 = (uint32_t)v;
      memcpy(d, esize == 4 ? (const void *)&v32 : &v, esize);
      break;
    }
    case ONNX_FIELD_NONE:
      break;
    }
  }
}

static size_t round_up(size_t n, size_t to) { return (n + to - 1) / to * to; }

dmlc_status dmlc_onnx_tensor_from_proto(const Onnx__TensorProto *tp, const char *what,
                                        bool allow_empty, dmlc_onnx_tensor **out, dmlc_diag *diag) {
  *out = NULL;
  dmlc_onnx_tensor t = {0};
  DMLC_RETURN_IF_ERROR(check_type(tp, what, &t.data_type, diag));
  DMLC_RETURN_IF_ERROR(check_storage(tp, what, diag));
  DMLC_RETURN_IF_ERROR(check_dims(tp, what, allow_empty, &t, diag));
  const uint32_t esize = dmlc_data_type_size(t.data_type);
  DMLC_RETURN_IF_ERROR(check_data(tp, what, &t, esize, diag));
  DMLC_RETURN_IF_ERROR(check_range(tp, what, diag));
  t.size_bytes = t.element_count * esize;
  const char *name = tp->name ? tp->name : "";
  /* One block: the struct, the data (aligned), the name. Sizes are below
   * 2^32 elements of at most 8 bytes, so nothing here overflows. */
  const size_t head = round_up(sizeof t, DATA_ALIGN);
  const size_t total = round_up(head + (size_t)t.size_bytes + strlen(name) + 1, DATA_ALIGN);
  unsigned char *block = aligned_alloc(DATA_ALIGN, total);
  if (!block)
    return dmlc_diag_set(diag, DMLC_ERROR_OUT_OF_MEMORY, "%s: out of memory for %" PRIu64 " bytes",
                         what, t.size_bytes);
  t.data = block + head;
  char *name_copy = (char *)block + head + t.size_bytes;
  strcpy(name_copy, name);
  t.name = name_copy;
  if (tp->has_raw_data)
    copy_little_endian(t.data, tp->raw_data.data, t.element_count, esize);
  else
    copy_typed(tp, t.data, t.element_count, esize);
  memcpy(block, &t, sizeof t);
  *out = (dmlc_onnx_tensor *)block;
  return DMLC_OK;
}

dmlc_status dmlc_onnx_decode_tensor(const void *bytes, size_t size, const char *filename,
                                    dmlc_onnx_tensor **out, dmlc_diag *diag) {
  *out = NULL;
  ProtobufCMessage *msg;
  DMLC_RETURN_IF_ERROR(
      dmlc_onnx_unpack(&onnx__tensor_proto__descriptor, bytes, size, filename, &msg, diag));
  const dmlc_status st =
      dmlc_onnx_tensor_from_proto((const Onnx__TensorProto *)msg, filename, false, out, diag);
  protobuf_c_message_free_unpacked(msg, NULL);
  return st;
}

/* ---- encoding ---- */

dmlc_status dmlc_onnx_encode_tensor(const dmlc_onnx_tensor *t, void **out_bytes, size_t *out_size,
                                    dmlc_diag *diag) {
  *out_bytes = NULL;
  *out_size = 0;
  const int32_t type = dmlc_onnx_data_type_from_dml(t->data_type);
  if (type == 0)
    return INVALID(diag, "dmlc_onnx_tensor_encode: data_type %d is not a data type dmlc knows",
                   (int)t->data_type);
  if (t->rank > DMLC_MAX_RANK)
    return INVALID(diag, "dmlc_onnx_tensor_encode: rank %u; at most %d", t->rank, DMLC_MAX_RANK);
  int64_t dims[DMLC_MAX_RANK];
  uint64_t count = 1;
  for (uint32_t i = 0; i < t->rank; i++) {
    if (t->dims[i] == 0 || t->dims[i] > MAX_ELEMENTS / count)
      return INVALID(diag,
                     "dmlc_onnx_tensor_encode: dims[%u] is %" PRIu64
                     "; dims are at least 1, with at most %" PRIu64 " elements in all",
                     i, t->dims[i], MAX_ELEMENTS);
    count *= t->dims[i];
    dims[i] = (int64_t)t->dims[i];
  }
  if (!t->data)
    return INVALID(diag, "dmlc_onnx_tensor_encode: data is NULL");
  const uint32_t esize = dmlc_data_type_size(t->data_type);
  const size_t bytes = (size_t)(count * esize);
  void *swapped = NULL;
  if (!host_is_little_endian() && esize > 1) {
    swapped = malloc(bytes);
    if (!swapped)
      return dmlc_diag_set(diag, DMLC_ERROR_OUT_OF_MEMORY, "out of memory encoding a tensor");
    copy_little_endian(swapped, t->data, count, esize);
  }
  Onnx__TensorProto tp = ONNX__TENSOR_PROTO__INIT;
  tp.n_dims = t->rank;
  tp.dims = dims;
  tp.has_data_type = 1;
  tp.data_type = type;
  if (t->name && *t->name)
    tp.name = (char *)t->name; /* protobuf-c's pack only reads it */
  tp.has_raw_data = 1;
  tp.raw_data.len = bytes;
  tp.raw_data.data = swapped ? swapped : t->data;
  const size_t size = protobuf_c_message_get_packed_size(&tp.base);
  unsigned char *buf = malloc(size + 1);
  if (!buf) {
    free(swapped);
    return dmlc_diag_set(diag, DMLC_ERROR_OUT_OF_MEMORY, "out of memory encoding a tensor");
  }
  protobuf_c_message_pack(&tp.base, buf);
  buf[size] = '\0';
  free(swapped);
  *out_bytes = buf;
  *out_size = size;
  return DMLC_OK;
}
