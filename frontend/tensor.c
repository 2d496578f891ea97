/* DML_TENSOR_DESC -> an IR type and layout, with the tensor rules of
 * spec/OPERATORS.md. */
#include <inttypes.h>
#include <string.h>

#include "frontend/frontend.h"
#include "frontend/messages.h"

#define MAX_ELEMENTS UINT64_C(4294967295)

#define INVALID(diag, ...) dmlc_diag_set(diag, DMLC_ERROR_INVALID_ARGUMENT, __VA_ARGS__)

static dmlc_status check_data_type(const DML_BUFFER_TENSOR_DESC *b, const char *field,
                                   dmlc_dtype *out, dmlc_diag *diag) {
  if (dmlc_dtype_from_dml(b->DataType, out))
    return DMLC_OK;
  const char *name = dmlc_dml_data_type_name(b->DataType);
  if (name)
    return INVALID(diag, "%s.DataType is %u (%s); not supported", field, (unsigned)b->DataType,
                   name);
  return INVALID(diag, "%s.DataType is %u; not a DML_TENSOR_DATA_TYPE", field,
                 (unsigned)b->DataType);
}

static dmlc_status check_sizes(const DML_BUFFER_TENSOR_DESC *b, const char *field, dmlc_type *t,
                               dmlc_diag *diag) {
  if (b->DimensionCount < 1 || b->DimensionCount > DMLC_MAX_RANK)
    return INVALID(diag, "%s.DimensionCount is %u; must be 1 to %d", field, b->DimensionCount,
                   DMLC_MAX_RANK);
  if (!b->Sizes)
    return INVALID(diag, "%s.Sizes is NULL", field);
  t->rank = b->DimensionCount;
  uint64_t elements = 1;
  bool saturated = false;
  for (uint32_t i = 0; i < t->rank; i++) {
    if (b->Sizes[i] == 0)
      return INVALID(diag, "%s.Sizes[%u] is 0; sizes must be at least 1", field, i);
    t->dims[i] = b->Sizes[i];
    if (elements > UINT64_MAX / b->Sizes[i])
      saturated = true;
    else
      elements *= b->Sizes[i];
  }
  if (saturated)
    return INVALID(diag, "%s has more than %" PRIu64 " elements; at most %" PRIu64 " are allowed",
                   field, UINT64_MAX, MAX_ELEMENTS);
  if (elements > MAX_ELEMENTS)
    return INVALID(diag, "%s has %" PRIu64 " elements; at most %" PRIu64 " are allowed", field,
                   elements, MAX_ELEMENTS);
  return DMLC_OK;
}

static dmlc_status check_strides(const DML_BUFFER_TENSOR_DESC *b, const char *field, bool is_output,
                                 const dmlc_type *t, dmlc_layout *l, dmlc_diag *diag) {
  if (!b->Strides) {
    dmlc_packed_strides(t, l->strides);
    return DMLC_OK;
  }
  for (uint32_t i = 0; i < t->rank; i++)
    l->strides[i] = b->Strides[i];
  if (!is_output)
    return DMLC_OK;
  for (uint32_t i = 0; i < t->rank; i++)
    if (b->Strides[i] == 0)
      return INVALID(diag, "%s.Strides[%u] is 0; outputs cannot broadcast", field, i);
  if (!dmlc_strides_disjoint(t, l->strides)) {
    char strides[128], sizes[128];
    dmlc_format_u32_list(b->Strides, t->rank, strides, sizeof strides);
    dmlc_format_u32_list(b->Sizes, t->rank, sizes, sizeof sizes);
    return INVALID(diag,
                   "%s.Strides overlap: strides %s with sizes %s map two coordinates to one "
                   "element; an output needs one element per coordinate",
                   field, strides, sizes);
  }
  return DMLC_OK;
}

static dmlc_status check_size_and_alignment(const DML_BUFFER_TENSOR_DESC *b, const char *field,
                                            const dmlc_type *t, dmlc_layout *l, dmlc_diag *diag) {
  const uint64_t min_size = dmlc_min_size_bytes(t, l->strides);
  if (b->TotalTensorSizeInBytes < min_size)
    return INVALID(diag, "%s.TotalTensorSizeInBytes is %" PRIu64 "; must be at least %" PRIu64,
                   field, (uint64_t)b->TotalTensorSizeInBytes, min_size);
  const uint32_t align = b->GuaranteedBaseOffsetAlignment;
  const uint32_t esize = dmlc_dtype_size(t->dtype);
  if (align != 0 && ((align & (align - 1)) != 0 || align < esize))
    return INVALID(diag,
                   "%s.GuaranteedBaseOffsetAlignment is %u; must be 0 or a power of two no "
                   "smaller than the element size (%u)",
                   field, align, esize);
  l->size_bytes = b->TotalTensorSizeInBytes;
  l->size_declared = true;
  l->alignment = align;
  return DMLC_OK;
}

dmlc_status dmlc_frontend_tensor(const DML_TENSOR_DESC *desc, const char *field, bool is_output,
                                 dmlc_type *type, dmlc_layout *layout, dmlc_diag *diag) {
  if (!field)
    field = is_output ? "OutputTensor" : "InputTensor";
  if (!desc)
    return INVALID(diag, "%s is NULL", field);
  if (desc->Type != DML_TENSOR_TYPE_BUFFER)
    return INVALID(diag, "%s.Type is %u; must be DML_TENSOR_TYPE_BUFFER", field,
                   (unsigned)desc->Type);
  const DML_BUFFER_TENSOR_DESC *b = desc->Desc;
  if (!b)
    return INVALID(diag, "%s.Desc is NULL", field);

  dmlc_type t;
  dmlc_layout l;
  memset(&t, 0, sizeof t);
  memset(&l, 0, sizeof l);
  DMLC_RETURN_IF_ERROR(check_data_type(b, field, &t.dtype, diag));
  if ((b->Flags & ~(uint32_t)DML_TENSOR_FLAG_OWNED_BY_DML) != 0)
    return INVALID(diag,
                   "%s.Flags is 0x%x; must be DML_TENSOR_FLAG_NONE or "
                   "DML_TENSOR_FLAG_OWNED_BY_DML",
                   field, (unsigned)b->Flags);
  DMLC_RETURN_IF_ERROR(check_sizes(b, field, &t, diag));
  DMLC_RETURN_IF_ERROR(check_strides(b, field, is_output, &t, &l, diag));
  DMLC_RETURN_IF_ERROR(check_size_and_alignment(b, field, &t, &l, diag));
  if (type)
    *type = t;
  if (layout)
    *layout = l;
  return DMLC_OK;
}
