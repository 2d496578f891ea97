/* ONNX's data types (TensorProto.DataType) and what dmlc makes of them: the
 * one table, indexed by ONNX's enum value. */
#include <stdio.h>

#include "frontend/onnx/onnx_internal.h"

static const struct onnx_type_info {
  const char *name;
  DML_TENSOR_DATA_TYPE dml; /* UNKNOWN: dmlc lacks it */
  onnx_data_field field;    /* where a TensorProto keeps it outside raw_data */
} onnx_types[] = {
    [0] = {"UNDEFINED", DML_TENSOR_DATA_TYPE_UNKNOWN, ONNX_FIELD_NONE},
    [1] = {"FLOAT", DML_TENSOR_DATA_TYPE_FLOAT32, ONNX_FIELD_FLOAT},
    [2] = {"UINT8", DML_TENSOR_DATA_TYPE_UINT8, ONNX_FIELD_INT32},
    [3] = {"INT8", DML_TENSOR_DATA_TYPE_INT8, ONNX_FIELD_INT32},
    [4] = {"UINT16", DML_TENSOR_DATA_TYPE_UINT16, ONNX_FIELD_INT32},
    [5] = {"INT16", DML_TENSOR_DATA_TYPE_INT16, ONNX_FIELD_INT32},
    [6] = {"INT32", DML_TENSOR_DATA_TYPE_INT32, ONNX_FIELD_INT32},
    [7] = {"INT64", DML_TENSOR_DATA_TYPE_INT64, ONNX_FIELD_INT64},
    [8] = {"STRING", DML_TENSOR_DATA_TYPE_UNKNOWN, ONNX_FIELD_NONE},
    [9] = {"BOOL", DML_TENSOR_DATA_TYPE_UNKNOWN, ONNX_FIELD_NONE},
    [10] = {"FLOAT16", DML_TENSOR_DATA_TYPE_FLOAT16, ONNX_FIELD_INT32},
    [11] = {"DOUBLE", DML_TENSOR_DATA_TYPE_FLOAT64, ONNX_FIELD_DOUBLE},
    [12] = {"UINT32", DML_TENSOR_DATA_TYPE_UINT32, ONNX_FIELD_UINT64},
    [13] = {"UINT64", DML_TENSOR_DATA_TYPE_UINT64, ONNX_FIELD_UINT64},
    [14] = {"COMPLEX64", DML_TENSOR_DATA_TYPE_UNKNOWN, ONNX_FIELD_NONE},
    [15] = {"COMPLEX128", DML_TENSOR_DATA_TYPE_UNKNOWN, ONNX_FIELD_NONE},
    [16] = {"BFLOAT16", DML_TENSOR_DATA_TYPE_UNKNOWN, ONNX_FIELD_NONE},
    [17] = {"FLOAT8E4M3FN", DML_TENSOR_DATA_TYPE_UNKNOWN, ONNX_FIELD_NONE},
    [18] = {"FLOAT8E4M3FNUZ", DML_TENSOR_DATA_TYPE_UNKNOWN, ONNX_FIELD_NONE},
    [19] = {"FLOAT8E5M2", DML_TENSOR_DATA_TYPE_UNKNOWN, ONNX_FIELD_NONE},
    [20] = {"FLOAT8E5M2FNUZ", DML_TENSOR_DATA_TYPE_UNKNOWN, ONNX_FIELD_NONE},
    [21] = {"UINT4", DML_TENSOR_DATA_TYPE_UNKNOWN, ONNX_FIELD_NONE},
    [22] = {"INT4", DML_TENSOR_DATA_TYPE_UNKNOWN, ONNX_FIELD_NONE},
    [23] = {"FLOAT4E2M1", DML_TENSOR_DATA_TYPE_UNKNOWN, ONNX_FIELD_NONE},
    [24] = {"FLOAT8E8M0", DML_TENSOR_DATA_TYPE_UNKNOWN, ONNX_FIELD_NONE},
    [25] = {"UINT2", DML_TENSOR_DATA_TYPE_UNKNOWN, ONNX_FIELD_NONE},
    [26] = {"INT2", DML_TENSOR_DATA_TYPE_UNKNOWN, ONNX_FIELD_NONE},
};

#define ONNX_TYPE_COUNT ((int32_t)(sizeof onnx_types / sizeof onnx_types[0]))

static const struct onnx_type_info *type_info(int32_t type) {
  return type >= 0 && type < ONNX_TYPE_COUNT ? &onnx_types[type] : NULL;
}

const char *dmlc_onnx_data_type_name(int32_t type) {
  const struct onnx_type_info *t = type_info(type);
  return t ? t->name : NULL;
}

bool dmlc_onnx_data_type_to_dml(int32_t type, DML_TENSOR_DATA_TYPE *out) {
  const struct onnx_type_info *t = type_info(type);
  if (!t || t->dml == DML_TENSOR_DATA_TYPE_UNKNOWN)
    return false;
  *out = t->dml;
  return true;
}

int32_t dmlc_onnx_data_type_from_dml(DML_TENSOR_DATA_TYPE type) {
  for (int32_t i = 1; i < ONNX_TYPE_COUNT; i++)
    if (type != DML_TENSOR_DATA_TYPE_UNKNOWN && onnx_types[i].dml == type)
      return i;
  return 0;
}

onnx_data_field dmlc_onnx_data_type_field(int32_t type) {
  const struct onnx_type_info *t = type_info(type);
  return t ? t->field : ONNX_FIELD_NONE;
}

const char *dmlc_onnx_describe_lacking_type(int32_t type, char *buf, size_t size) {
  const char *name = dmlc_onnx_data_type_name(type);
  if (type == 0)
    snprintf(buf, size, "data type UNDEFINED (0)");
  else if (name)
    snprintf(buf, size, "data type %s (%d), which dmlc lacks", name, (int)type);
  else
    snprintf(buf, size, "data type %d, which ONNX does not define", (int)type);
  return buf;
}
