/* The protobuf structure check that runs before protobuf-c decodes a file.
 *
 * protobuf-c decodes well-formed bytes and refuses malformed ones, but says
 * only that it failed, and it recurses once per nested message with no
 * limit: a file of a few hundred kilobytes of nested AttributeProto ->
 * GraphProto -> NodeProto messages would exhaust the stack. This walk
 * follows the same rules protobuf-c's unpacker applies (tags, wire types
 * against the generated schema, lengths, packed arrays), decodes no value,
 * bounds the nesting, and names the byte and the field of the first
 * problem. It is driven by protobuf-c's generated descriptors, so it knows
 * no more of the schema than protobuf-c does. */
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>

#include "frontend/onnx/onnx_internal.h"

enum {
  WIRE_VARINT = 0,
  WIRE_64BIT = 1,
  WIRE_LENGTH = 2,
  WIRE_START_GROUP = 3,
  WIRE_END_GROUP = 4,
  WIRE_32BIT = 5,
};

static const char *const wire_names[8] = {
    "0 (varint)",    "1 (64-bit)", "2 (length-delimited)", "3 (group start)",
    "4 (group end)", "5 (32-bit)", "6 (undefined)",        "7 (undefined)",
};

typedef struct wire_walk {
  const uint8_t *base; /* the file's first byte, for offsets in messages */
  const char *filename;
  dmlc_diag *diag;
} wire_walk;

/* Where a message is: "byte N, in onnx.NodeProto" (and ".attribute" when
 * the field is known). */
static dmlc_status wire_fail(const wire_walk *w, const uint8_t *at,
                             const ProtobufCMessageDescriptor *desc,
                             const ProtobufCFieldDescriptor *field, const char *problem) {
  return dmlc_diag_set(w->diag, DMLC_ERROR_INVALID_ARGUMENT, "%s: byte %zu, in %s%s%s: %s",
                       w->filename, (size_t)(at - w->base), desc->name, field ? "." : "",
                       field ? field->name : "", problem);
}

/* A varint of at most max bytes within [p, end); false when it runs past
 * end or over max bytes. protobuf-c reads values of up to 10 bytes, and
 * keys and lengths of up to 5. */
static bool read_varint(const uint8_t *p, const uint8_t *end, size_t max, uint64_t *value,
                        size_t *used) {
  uint64_t v = 0;
  for (size_t i = 0; i < max && p + i < end; i++) {
    v |= (uint64_t)(p[i] & 0x7f) << (7 * i);
    if (!(p[i] & 0x80)) {
      *value = v;
      *used = i + 1;
      return true;
    }
  }
  return false;
}

/* The wire type a single (unpacked) value of field takes. */
static int scalar_wire_type(ProtobufCType type) {
  switch (type) {
  case PROTOBUF_C_TYPE_INT32:
  case PROTOBUF_C_TYPE_SINT32:
  case PROTOBUF_C_TYPE_UINT32:
  case PROTOBUF_C_TYPE_INT64:
  case PROTOBUF_C_TYPE_SINT64:
  case PROTOBUF_C_TYPE_UINT64:
  case PROTOBUF_C_TYPE_BOOL:
  case PROTOBUF_C_TYPE_ENUM:
    return WIRE_VARINT;
  case PROTOBUF_C_TYPE_SFIXED32:
  case PROTOBUF_C_TYPE_FIXED32:
  case PROTOBUF_C_TYPE_FLOAT:
    return WIRE_32BIT;
  case PROTOBUF_C_TYPE_SFIXED64:
  case PROTOBUF_C_TYPE_FIXED64:
  case PROTOBUF_C_TYPE_DOUBLE:
    return WIRE_64BIT;
  case PROTOBUF_C_TYPE_STRING:
  case PROTOBUF_C_TYPE_BYTES:
  case PROTOBUF_C_TYPE_MESSAGE:
    return WIRE_LENGTH;
  }
  return -1;
}

/* A packed array of field's scalar type filling [p, end) exactly. */
static dmlc_status check_packed(const wire_walk *w, const uint8_t *p, const uint8_t *end,
                                const ProtobufCMessageDescriptor *desc,
                                const ProtobufCFieldDescriptor *field) {
  const int wt = scalar_wire_type(field->type);
  const size_t len = (size_t)(end - p);
  if (wt == WIRE_32BIT || wt == WIRE_64BIT) {
    const size_t width = wt == WIRE_32BIT ? 4 : 8;
    if (len % width != 0) {
      char problem[128];
      snprintf(problem, sizeof problem,
               "a packed array of %zu bytes, not a whole number of %zu-byte values", len, width);
      return wire_fail(w, p, desc, field, problem);
    }
    return DMLC_OK;
  }
  while (p < end) {
    uint64_t v;
    size_t used;
    if (!read_varint(p, end, 10, &v, &used))
      return wire_fail(w, p, desc, field,
                       "a packed array ends inside a varint, or holds one over 10 bytes");
    p += used;
  }
  return DMLC_OK;
}

static dmlc_status check_message(const wire_walk *w, const ProtobufCMessageDescriptor *desc,
                                 const uint8_t *p, const uint8_t *end, int depth);

/* One field whose key has been read; *p is past the key, advanced past the
 * value. */
static dmlc_status check_field(const wire_walk *w, const ProtobufCMessageDescriptor *desc,
                               const ProtobufCFieldDescriptor *field, int wire_type,
                               const uint8_t *key, const uint8_t **p, const uint8_t *end,
                               int depth) {
  char problem[192];
  if (wire_type == WIRE_START_GROUP || wire_type == WIRE_END_GROUP || wire_type > WIRE_32BIT) {
    snprintf(problem, sizeof problem, "wire type %s, which ONNX files never use",
             wire_names[wire_type]);
    return wire_fail(w, key, desc, field, problem);
  }
  const size_t left = (size_t)(end - *p);
  size_t length = 0;
  if (wire_type == WIRE_VARINT) {
    uint64_t v;
    if (!read_varint(*p, end, 10, &v, &length))
      return wire_fail(w, *p, desc, field,
                       left < 10 ? "a varint cut off by the end of its message"
                                 : "a varint over 10 bytes");
  } else if (wire_type == WIRE_64BIT || wire_type == WIRE_32BIT) {
    length = wire_type == WIRE_64BIT ? 8 : 4;
    if (left < length) {
      snprintf(problem, sizeof problem, "a %zu-byte value, but only %zu bytes are left", length,
               left);
      return wire_fail(w, *p, desc, field, problem);
    }
  } else {
    uint64_t n;
    size_t used;
    if (!read_varint(*p, end, 5, &n, &used))
      return wire_fail(w, *p, desc, field,
                       left < 5 ? "a length cut off by the end of its message"
                                : "a length over 5 bytes");
    if (n > INT_MAX) {
      snprintf(problem, sizeof problem, "a length of %" PRIu64 " bytes; protobuf's limit is %d", n,
               INT_MAX);
      return wire_fail(w, *p, desc, field, problem);
    }
    if (n > left - used) {
      snprintf(problem, sizeof problem,
               "a length of %" PRIu64 " bytes, but only %zu are left in %s", n, left - used,
               depth == 0 ? "the file" : "the enclosing message");
      return wire_fail(w, *p, desc, field, problem);
    }
    *p += used;
    length = (size_t)n;
  }
  const uint8_t *value = *p;
  *p += length;
  if (!field)
    return DMLC_OK; /* unknown to the schema: protobuf-c keeps it aside */
  const int want = scalar_wire_type(field->type);
  const bool packed =
      field->label == PROTOBUF_C_LABEL_REPEATED && want != WIRE_LENGTH && wire_type == WIRE_LENGTH;
  if (wire_type != want && !packed) {
    snprintf(problem, sizeof problem, "field %u has wire type %s; the schema wants %s", field->id,
             wire_names[wire_type], wire_names[want]);
    return wire_fail(w, key, desc, field, problem);
  }
  if (packed)
    return check_packed(w, value, *p, desc, field);
  if (field->type == PROTOBUF_C_TYPE_MESSAGE) {
    if (depth + 1 >= ONNX_WIRE_MAX_DEPTH) {
      snprintf(problem, sizeof problem, "messages nested more than %d deep", ONNX_WIRE_MAX_DEPTH);
      return wire_fail(w, key, desc, field, problem);
    }
    return check_message(w, field->descriptor, value, *p, depth + 1);
  }
  return DMLC_OK;
}

static dmlc_status check_message(const wire_walk *w, const ProtobufCMessageDescriptor *desc,
                                 const uint8_t *p, const uint8_t *end, int depth) {
  while (p < end) {
    const uint8_t *key = p;
    uint64_t tag;
    size_t used;
    if (!read_varint(p, end, 5, &tag, &used))
      return wire_fail(w, key, desc, NULL,
                       end - p < 5 ? "a field's key cut off by the end of its message"
                                   : "a field's key over 5 bytes");
    p += used;
    /* protobuf-c takes field numbers 1 to 2^29-1, as protobuf defines them. */
    const uint64_t number = tag >> 3;
    if (number == 0 || number > 0x1fffffff) {
      char problem[96];
      snprintf(problem, sizeof problem, "field number %" PRIu64 ", outside 1 to 536870911", number);
      return wire_fail(w, key, desc, NULL, problem);
    }
    const ProtobufCFieldDescriptor *field =
        protobuf_c_message_descriptor_get_field(desc, (unsigned)number);
    DMLC_RETURN_IF_ERROR(check_field(w, desc, field, (int)(tag & 7), key, &p, end, depth));
  }
  return DMLC_OK;
}

dmlc_status dmlc_onnx_wire_check(const ProtobufCMessageDescriptor *desc, const void *bytes,
                                 size_t size, const char *filename, dmlc_diag *diag) {
  const wire_walk w = {bytes, filename, diag};
  return check_message(&w, desc, bytes, (const uint8_t *)bytes + size, 0);
}

dmlc_status dmlc_onnx_unpack(const ProtobufCMessageDescriptor *desc, const void *bytes, size_t size,
                             const char *filename, ProtobufCMessage **out, dmlc_diag *diag) {
  *out = NULL;
  if (size == 0)
    return dmlc_diag_set(diag, DMLC_ERROR_INVALID_ARGUMENT, "%s: the file is empty, not an %s",
                         filename, desc->name);
  DMLC_RETURN_IF_ERROR(dmlc_onnx_wire_check(desc, bytes, size, filename, diag));
  *out = protobuf_c_message_unpack(desc, NULL, size, bytes);
  if (!*out)
    /* The walk accepts what protobuf-c's unpacker does, so what is left is
     * an allocation failure (or a disagreement, which would be a bug). */
    return dmlc_diag_set(diag, DMLC_ERROR_OUT_OF_MEMORY,
                         "%s: protobuf-c could not decode the %zu bytes as an %s (out of memory?)",
                         filename, size, desc->name);
  return DMLC_OK;
}
