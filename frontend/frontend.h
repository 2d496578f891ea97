/* DirectML descriptors -> IR, with every rule of spec/OPERATORS.md checked.
 * Messages name the field and the value, e.g.
 * "OutputTensor.Sizes[1] is 3; must be 1 on reduced axis 1". */
#ifndef DMLC_FRONTEND_FRONTEND_H
#define DMLC_FRONTEND_FRONTEND_H

#include "ir/ir.h"

#define DMLC_FRONTEND_MAX_TENSORS 2

/* The tensors of an operator descriptor, in binding order. */
typedef struct dmlc_operator_tensors {
  uint32_t num_inputs, num_outputs;
  const DML_TENSOR_DESC *inputs[DMLC_FRONTEND_MAX_TENSORS];
  const char *input_fields[DMLC_FRONTEND_MAX_TENSORS]; /* "InputTensor" */
  const DML_TENSOR_DESC *outputs[DMLC_FRONTEND_MAX_TENSORS];
  const char *output_fields[DMLC_FRONTEND_MAX_TENSORS]; /* "OutputTensor" */
} dmlc_operator_tensors;

/* Checks desc and desc->Desc are non-NULL and the operator type (and reduce
 * function) is one dmlc knows, and lists its tensors. Unknown operator types
 * are DMLC_ERROR_UNSUPPORTED. */
dmlc_status dmlc_frontend_operator_tensors(const DML_OPERATOR_DESC *desc,
                                           dmlc_operator_tensors *out, dmlc_diag *diag);

/* Validates one tensor descriptor: type BUFFER, a known data type, rank 1 to
 * 8, sizes >= 1, at most 2^32-1 elements, TotalTensorSizeInBytes large
 * enough, alignment 0 or a power of two >= the element size, and for an
 * output no zero or overlapping strides. field names it in messages
 * ("InputTensor"). */
dmlc_status dmlc_frontend_tensor(const DML_TENSOR_DESC *desc, const char *field, bool is_output,
                                 dmlc_type *type, dmlc_layout *layout, dmlc_diag *diag);

/* Validates desc and appends its node(s) to g. inputs[i] is the value bound
 * to the i-th input tensor: the tensor's type must equal the value's, and its
 * layout must equal the value's layout when the value is a graph input, or be
 * packed when it is an intermediate. outputs[i] receives the i-th output's
 * value and output_layouts[i] its layout (from the OutputTensor
 * descriptor). */
dmlc_status dmlc_frontend_add_operator(dmlc_ir_graph *g, const DML_OPERATOR_DESC *desc,
                                       const uint32_t *inputs, uint32_t *outputs,
                                       dmlc_layout *output_layouts, dmlc_diag *diag);

#endif
