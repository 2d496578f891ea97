/* DirectML spellings of enum values and list formatting, for the
 * frontend's messages ("OutputTensor.DataType is FLOAT32; must be ..."). */
#ifndef DMLC_FRONTEND_MESSAGES_H
#define DMLC_FRONTEND_MESSAGES_H

#include <stddef.h>

#include "ir/ir.h"

/* "FLOAT32", "UINT4", ...; NULL for a value DirectML does not define. */
const char *dmlc_dml_data_type_name(DML_TENSOR_DATA_TYPE type);
/* "ARGMAX", "ACTIVATION_SOFTMAX", ...; NULL for one dmlc's header lacks. */
const char *dmlc_dml_operator_type_name(DML_OPERATOR_TYPE type);
/* "ARGMAX", "SUM", ...; NULL for a value DirectML does not define. */
const char *dmlc_dml_reduce_function_name(DML_REDUCE_FUNCTION function);

/* "[3, 5]" into buf (truncated to size). */
void dmlc_format_u32_list(const uint32_t *items, uint32_t count, char *buf, size_t size);
void dmlc_format_u64_list(const uint64_t *items, uint32_t count, char *buf, size_t size);
/* The DirectML names of types joined by ", ", the last one by last_sep
 * (", " or " or "): "INT32, INT64, UINT32 or UINT64". */
void dmlc_format_data_types(const DML_TENSOR_DATA_TYPE *types, uint32_t count, const char *last_sep,
                            char *buf, size_t size);

#endif
