#include "frontend/messages.h"

#include <inttypes.h>
#include <stdio.h>

#define ARRAY_COUNT(a) (sizeof(a) / sizeof((a)[0]))

/* Indexed by DML_TENSOR_DATA_TYPE. */
static const char *const data_type_names[] = {
    "UNKNOWN", "FLOAT32", "FLOAT16", "UINT32", "UINT16", "UINT8", "INT32",
    "INT16",   "INT8",    "FLOAT64", "UINT64", "INT64",  "UINT4", "INT4",
};

/* Indexed by DML_REDUCE_FUNCTION. */
static const char *const reduce_function_names[] = {
    "ARGMAX",      "ARGMIN", "AVERAGE", "L1",       "L2",  "LOG_SUM",
    "LOG_SUM_EXP", "MAX",    "MIN",     "MULTIPLY", "SUM", "SUM_SQUARE",
};

static const struct {
  DML_OPERATOR_TYPE type;
  const char *name;
} operator_type_names[] = {
    {DML_OPERATOR_INVALID, "INVALID"},
    {DML_OPERATOR_ELEMENT_WISE_IDENTITY, "ELEMENT_WISE_IDENTITY"},
    {DML_OPERATOR_ELEMENT_WISE_ADD, "ELEMENT_WISE_ADD"},
    {DML_OPERATOR_ELEMENT_WISE_LOGICAL_EQUALS, "ELEMENT_WISE_LOGICAL_EQUALS"},
    {DML_OPERATOR_ACTIVATION_HARDMAX, "ACTIVATION_HARDMAX"},
    {DML_OPERATOR_ACTIVATION_SOFTMAX, "ACTIVATION_SOFTMAX"},
    {DML_OPERATOR_REDUCE, "REDUCE"},
    {DML_OPERATOR_CAST, "CAST"},
    {DML_OPERATOR_ELEMENT_WISE_IF, "ELEMENT_WISE_IF"},
    {DML_OPERATOR_ONE_HOT, "ONE_HOT"},
    {DML_OPERATOR_ARGMIN, "ARGMIN"},
    {DML_OPERATOR_ARGMAX, "ARGMAX"},
    {DML_OPERATOR_ACTIVATION_SOFTMAX1, "ACTIVATION_SOFTMAX1"},
    {DML_OPERATOR_ACTIVATION_HARDMAX1, "ACTIVATION_HARDMAX1"},
};

const char *dmlc_dml_data_type_name(DML_TENSOR_DATA_TYPE type) {
  return (uint32_t)type < ARRAY_COUNT(data_type_names) ? data_type_names[type] : NULL;
}

const char *dmlc_dml_reduce_function_name(DML_REDUCE_FUNCTION function) {
  return (uint32_t)function < ARRAY_COUNT(reduce_function_names) ? reduce_function_names[function]
                                                                 : NULL;
}

const char *dmlc_dml_operator_type_name(DML_OPERATOR_TYPE type) {
  for (size_t i = 0; i < ARRAY_COUNT(operator_type_names); i++)
    if (operator_type_names[i].type == type)
      return operator_type_names[i].name;
  return NULL;
}

/* Appends to buf at *len without overflowing; *len keeps counting so the
 * caller can tell truncation, but writes stop at size - 1. */
static void append(char *buf, size_t size, size_t *len, const char *fmt, uint64_t value) {
  if (*len >= size)
    return;
  const int n = snprintf(buf + *len, size - *len, fmt, value);
  if (n > 0)
    *len += (size_t)n;
}

static void append_str(char *buf, size_t size, size_t *len, const char *s) {
  if (*len >= size)
    return;
  const int n = snprintf(buf + *len, size - *len, "%s", s);
  if (n > 0)
    *len += (size_t)n;
}

void dmlc_format_u64_list(const uint64_t *items, uint32_t count, char *buf, size_t size) {
  size_t len = 0;
  if (size == 0)
    return;
  buf[0] = '\0';
  append_str(buf, size, &len, "[");
  for (uint32_t i = 0; i < count; i++)
    append(buf, size, &len, i ? ", %" PRIu64 : "%" PRIu64, items[i]);
  append_str(buf, size, &len, "]");
}

void dmlc_format_u32_list(const uint32_t *items, uint32_t count, char *buf, size_t size) {
  uint64_t wide[DMLC_MAX_RANK];
  const uint32_t n = count < DMLC_MAX_RANK ? count : DMLC_MAX_RANK;
  for (uint32_t i = 0; i < n; i++)
    wide[i] = items[i];
  dmlc_format_u64_list(wide, n, buf, size);
}

void dmlc_format_data_types(const DML_TENSOR_DATA_TYPE *types, uint32_t count, const char *last_sep,
                            char *buf, size_t size) {
  size_t len = 0;
  if (size == 0)
    return;
  buf[0] = '\0';
  for (uint32_t i = 0; i < count; i++) {
    if (i > 0)
      append_str(buf, size, &len, i + 1 == count ? last_sep : ", ");
    const char *name = dmlc_dml_data_type_name(types[i]);
    append_str(buf, size, &len, name ? name : "?");
  }
}
