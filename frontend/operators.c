/* DirectML operator descriptors -> IR nodes, with the operator rules of
 * spec/OPERATORS.md: ARGMAX, ARGMIN, ACTIVATION_HARDMAX1, ACTIVATION_HARDMAX
 * (over the last axis) and REDUCE with ARGMAX or ARGMIN. */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "frontend/frontend.h"
#include "frontend/messages.h"

#define INVALID(diag, ...) dmlc_diag_set(diag, DMLC_ERROR_INVALID_ARGUMENT, __VA_ARGS__)
#define ARRAY_COUNT(a) (uint32_t)(sizeof(a) / sizeof((a)[0]))

static const DML_TENSOR_DATA_TYPE index_input_types[] = {
    DML_TENSOR_DATA_TYPE_FLOAT32, DML_TENSOR_DATA_TYPE_FLOAT16, DML_TENSOR_DATA_TYPE_INT32,
    DML_TENSOR_DATA_TYPE_INT16,   DML_TENSOR_DATA_TYPE_INT8,    DML_TENSOR_DATA_TYPE_UINT32,
    DML_TENSOR_DATA_TYPE_UINT16,  DML_TENSOR_DATA_TYPE_UINT8,   DML_TENSOR_DATA_TYPE_INT64,
    DML_TENSOR_DATA_TYPE_UINT64,
};
static const DML_TENSOR_DATA_TYPE index_output_types[] = {
    DML_TENSOR_DATA_TYPE_INT32,
    DML_TENSOR_DATA_TYPE_INT64,
    DML_TENSOR_DATA_TYPE_UINT32,
    DML_TENSOR_DATA_TYPE_UINT64,
};
static const DML_TENSOR_DATA_TYPE hardmax_types[] = {
    DML_TENSOR_DATA_TYPE_FLOAT32,
    DML_TENSOR_DATA_TYPE_FLOAT16,
};

/* One operator descriptor, whichever struct it came in. */
typedef struct op_view {
  const char *name; /* for messages: "ARGMAX", "REDUCE ARGMIN", ... */
  dmlc_op op;
  const DML_TENSOR_DESC *input, *output;
  bool has_axes; /* false: ACTIVATION_HARDMAX, over the last axis */
  uint32_t axis_count;
  const UINT *axes;
  bool has_direction; /* false: DML_AXIS_DIRECTION_INCREASING */
  DML_AXIS_DIRECTION direction;
} op_view;

static void view_index(op_view *v, const char *name, dmlc_op op, const DML_TENSOR_DESC *input,
                       const DML_TENSOR_DESC *output, uint32_t axis_count, const UINT *axes) {
  v->name = name;
  v->op = op;
  v->input = input;
  v->output = output;
  v->has_axes = true;
  v->axis_count = axis_count;
  v->axes = axes;
}

static dmlc_status view_reduce(const DML_REDUCE_OPERATOR_DESC *d, op_view *v, dmlc_diag *diag) {
  const char *name = dmlc_dml_reduce_function_name(d->Function);
  if (d->Function == DML_REDUCE_FUNCTION_ARGMAX || d->Function == DML_REDUCE_FUNCTION_ARGMIN) {
    const bool is_max = d->Function == DML_REDUCE_FUNCTION_ARGMAX;
    view_index(v, is_max ? "REDUCE ARGMAX" : "REDUCE ARGMIN",
               is_max ? DMLC_OP_ARGMAX : DMLC_OP_ARGMIN, d->InputTensor, d->OutputTensor,
               d->AxisCount, d->Axes);
    return DMLC_OK;
  }
  if (!name)
    return INVALID(diag, "Function is %u; not a DML_REDUCE_FUNCTION", (unsigned)d->Function);
  return dmlc_diag_set(diag, DMLC_ERROR_UNSUPPORTED,
                       "Function is %u (%s); not supported: dmlc implements REDUCE with "
                       "DML_REDUCE_FUNCTION_ARGMAX and DML_REDUCE_FUNCTION_ARGMIN only",
                       (unsigned)d->Function, name);
}

static dmlc_status view_operator(const DML_OPERATOR_DESC *desc, op_view *v, dmlc_diag *diag) {
  memset(v, 0, sizeof *v);
  if (!desc)
    return INVALID(diag, "the operator descriptor is NULL");
  const unsigned type = (unsigned)desc->Type;
  const char *type_name = dmlc_dml_operator_type_name(desc->Type);
  if (desc->Type == DML_OPERATOR_INVALID)
    return INVALID(diag, "operator type 0 (DML_OPERATOR_INVALID) is not an operator");
  if (desc->Type != DML_OPERATOR_ARGMAX && desc->Type != DML_OPERATOR_ARGMIN &&
      desc->Type != DML_OPERATOR_ACTIVATION_HARDMAX1 &&
      desc->Type != DML_OPERATOR_ACTIVATION_HARDMAX && desc->Type != DML_OPERATOR_REDUCE)
    return dmlc_diag_set(diag, DMLC_ERROR_UNSUPPORTED,
                         "operator type %u%s%s%s is not supported; dmlc implements ARGMAX, "
                         "ARGMIN, ACTIVATION_HARDMAX, ACTIVATION_HARDMAX1 and REDUCE (ARGMAX, "
                         "ARGMIN)",
                         type, type_name ? " (" : "", type_name ? type_name : "",
                         type_name ? ")" : "");
  if (!desc->Desc)
    return INVALID(diag, "the Desc of operator type %u (%s) is NULL", type, type_name);

  switch (desc->Type) {
  case DML_OPERATOR_ARGMAX: {
    const DML_ARGMAX_OPERATOR_DESC *d = desc->Desc;
    view_index(v, "ARGMAX", DMLC_OP_ARGMAX, d->InputTensor, d->OutputTensor, d->AxisCount, d->Axes);
    v->has_direction = true;
    v->direction = d->AxisDirection;
    break;
  }
  case DML_OPERATOR_ARGMIN: {
    const DML_ARGMIN_OPERATOR_DESC *d = desc->Desc;
    view_index(v, "ARGMIN", DMLC_OP_ARGMIN, d->InputTensor, d->OutputTensor, d->AxisCount, d->Axes);
    v->has_direction = true;
    v->direction = d->AxisDirection;
    break;
  }
  case DML_OPERATOR_ACTIVATION_HARDMAX1: {
    const DML_ACTIVATION_HARDMAX1_OPERATOR_DESC *d = desc->Desc;
    view_index(v, "ACTIVATION_HARDMAX1", DMLC_OP_HARDMAX, d->InputTensor, d->OutputTensor,
               d->AxisCount, d->Axes);
    break;
  }
  case DML_OPERATOR_ACTIVATION_HARDMAX: {
    const DML_ACTIVATION_HARDMAX_OPERATOR_DESC *d = desc->Desc;
    view_index(v, "ACTIVATION_HARDMAX", DMLC_OP_HARDMAX, d->InputTensor, d->OutputTensor, 0, NULL);
    v->has_axes = false;
    break;
  }
  default: /* DML_OPERATOR_REDUCE */
    DMLC_RETURN_IF_ERROR(view_reduce(desc->Desc, v, diag));
    break;
  }
  if (!v->input)
    return INVALID(diag, "InputTensor is NULL");
  if (!v->output)
    return INVALID(diag, "OutputTensor is NULL");
  return DMLC_OK;
}

dmlc_status dmlc_frontend_operator_tensors(const DML_OPERATOR_DESC *desc,
                                           dmlc_operator_tensors *out, dmlc_diag *diag) {
  op_view v;
  DMLC_RETURN_IF_ERROR(view_operator(desc, &v, diag));
  memset(out, 0, sizeof *out);
  out->num_inputs = 1;
  out->inputs[0] = v.input;
  out->input_fields[0] = "InputTensor";
  out->num_outputs = 1;
  out->outputs[0] = v.output;
  out->output_fields[0] = "OutputTensor";
  return DMLC_OK;
}

static const char *data_type_name(dmlc_dtype dtype) {
  return dmlc_dml_data_type_name(dmlc_dtype_get(dtype)->dml);
}

static bool data_type_in(dmlc_dtype dtype, const DML_TENSOR_DATA_TYPE *types, uint32_t count) {
  for (uint32_t i = 0; i < count; i++)
    if (dmlc_dtype_get(dtype)->dml == types[i])
      return true;
  return false;
}

static dmlc_status check_input_data_type(const op_view *v, const dmlc_type *in, dmlc_diag *diag) {
  const bool hardmax = v->op == DMLC_OP_HARDMAX;
  const DML_TENSOR_DATA_TYPE *types = hardmax ? hardmax_types : index_input_types;
  const uint32_t count = hardmax ? ARRAY_COUNT(hardmax_types) : ARRAY_COUNT(index_input_types);
  if (data_type_in(in->dtype, types, count))
    return DMLC_OK;
  char list[256];
  dmlc_format_data_types(types, count, ", ", list, sizeof list);
  /* FLOAT64 is NumPy's default; say what to do with it. */
  const char *hint = in->dtype == DMLC_DTYPE_F64
                         ? " (FLOAT64 is not among them: convert the data to FLOAT32, e.g. "
                           "x.astype(np.float32) in NumPy)"
                         : "";
  return INVALID(diag, "InputTensor.DataType is %s; %s accepts %s%s", data_type_name(in->dtype),
                 v->name, list, hint);
}

/* The reduced axes, checked: at least one, each in range, none repeated. */
static dmlc_status collect_axes(const op_view *v, uint32_t rank, uint32_t *axes, uint32_t *count,
                                dmlc_diag *diag) {
  if (!v->has_axes) {
    axes[0] = rank - 1;
    *count = 1;
    return DMLC_OK;
  }
  if (v->axis_count == 0)
    return INVALID(diag, "AxisCount is 0; must be at least 1");
  if (!v->axes)
    return INVALID(diag, "Axes is NULL but AxisCount is %u", v->axis_count);
  if (v->axis_count > rank)
    return INVALID(diag, "AxisCount is %u; must be at most InputTensor.DimensionCount (%u)",
                   v->axis_count, rank);
  for (uint32_t i = 0; i < v->axis_count; i++) {
    if (v->axes[i] >= rank)
      return INVALID(diag, "Axes[%u] is %u; must be less than InputTensor.DimensionCount (%u)", i,
                     v->axes[i], rank);
    for (uint32_t j = 0; j < i; j++)
      if (v->axes[j] == v->axes[i])
        return INVALID(diag, "Axes[%u] is %u, which repeats Axes[%u]", i, v->axes[i], j);
    axes[i] = v->axes[i];
  }
  *count = v->axis_count;
  return DMLC_OK;
}

static dmlc_status check_output_rank(const dmlc_type *in, const dmlc_type *out, dmlc_diag *diag) {
  if (out->rank != in->rank)
    return INVALID(diag,
                   "OutputTensor.DimensionCount is %u; must equal InputTensor.DimensionCount "
                   "(%u)",
                   out->rank, in->rank);
  return DMLC_OK;
}

static dmlc_status check_index_output(const dmlc_type *in, const dmlc_type *out,
                                      const uint32_t *axes, uint32_t num_axes, dmlc_diag *diag) {
  if (!data_type_in(out->dtype, index_output_types, ARRAY_COUNT(index_output_types))) {
    char list[128];
    dmlc_format_data_types(index_output_types, ARRAY_COUNT(index_output_types), " or ", list,
                           sizeof list);
    return INVALID(diag, "OutputTensor.DataType is %s; must be %s", data_type_name(out->dtype),
                   list);
  }
  DMLC_RETURN_IF_ERROR(check_output_rank(in, out, diag));
  uint64_t reduced = 1; /* at most 2^32-1: the input's element count is */
  const uint32_t reduced_mask = dmlc_axes_mask(axes, num_axes);
  for (uint32_t i = 0; i < in->rank; i++) {
    if (dmlc_mask_has_axis(reduced_mask, i)) {
      reduced *= in->dims[i];
      if (out->dims[i] != 1)
        return INVALID(diag, "OutputTensor.Sizes[%u] is %u; must be 1 on reduced axis %u", i,
                       out->dims[i], i);
    } else if (out->dims[i] != in->dims[i]) {
      return INVALID(diag, "OutputTensor.Sizes[%u] is %u; must equal InputTensor.Sizes[%u] (%u)", i,
                     out->dims[i], i, in->dims[i]);
    }
  }
  if (reduced - 1 > dmlc_dtype_max_index(out->dtype))
    return INVALID(diag,
                   "OutputTensor.DataType is %s but the largest index over the reduced axes is "
                   "%" PRIu64,
                   data_type_name(out->dtype), reduced - 1);
  return DMLC_OK;
}

static dmlc_status check_hardmax_output(const dmlc_type *in, const dmlc_type *out,
                                        dmlc_diag *diag) {
  if (out->dtype != in->dtype)
    return INVALID(diag, "OutputTensor.DataType is %s; must equal InputTensor.DataType (%s)",
                   data_type_name(out->dtype), data_type_name(in->dtype));
  DMLC_RETURN_IF_ERROR(check_output_rank(in, out, diag));
  for (uint32_t i = 0; i < in->rank; i++)
    if (out->dims[i] != in->dims[i])
      return INVALID(diag, "OutputTensor.Sizes[%u] is %u; must equal InputTensor.Sizes[%u] (%u)", i,
                     out->dims[i], i, in->dims[i]);
  return DMLC_OK;
}

/* "%x" for a graph input, "%3" for the result of node 3 (as the printer
 * numbers them). */
static void format_value_name(const dmlc_ir_graph *g, uint32_t value, char *buf, size_t size) {
  const int32_t producer = g->values[value].producer;
  if (producer >= 0) {
    snprintf(buf, size, "%%%d", producer);
    return;
  }
  for (uint32_t i = 0; i < g->num_inputs; i++)
    if (g->inputs[i].value == value) {
      snprintf(buf, size, "%%%s", g->inputs[i].name);
      return;
    }
  snprintf(buf, size, "value %u", value);
}

static const dmlc_layout *input_layout(const dmlc_ir_graph *g, uint32_t value) {
  for (uint32_t i = 0; i < g->num_inputs; i++)
    if (g->inputs[i].value == value)
      return &g->inputs[i].layout;
  return NULL;
}

static dmlc_status check_bound_type(const dmlc_type *t, const dmlc_type *vt, const char *name,
                                    dmlc_diag *diag) {
  char vtype[DMLC_TYPE_STR_MAX];
  dmlc_type_str(vt, vtype, sizeof vtype);
  if (t->dtype != vt->dtype)
    return INVALID(diag, "InputTensor.DataType is %s but the bound value %s has %s",
                   data_type_name(t->dtype), name, vtype);
  if (t->rank != vt->rank)
    return INVALID(diag, "InputTensor.DimensionCount is %u but the bound value %s has %s", t->rank,
                   name, vtype);
  for (uint32_t i = 0; i < t->rank; i++)
    if (t->dims[i] != vt->dims[i])
      return INVALID(diag, "InputTensor.Sizes[%u] is %u but the bound value %s has %s", i,
                     t->dims[i], name, vtype);
  return DMLC_OK;
}

/* The descriptor's strides must address the bound value's elements where
 * they are: the graph input's strides, or packed ones for an operator
 * result. Strides of size-1 dims address nothing and are not compared. */
static dmlc_status check_bound_strides(const dmlc_ir_graph *g, uint32_t value,
                                       const DML_BUFFER_TENSOR_DESC *b, const dmlc_type *t,
                                       const dmlc_layout *l, const char *name, dmlc_diag *diag) {
  const dmlc_layout *vl = input_layout(g, value);
  const bool is_result = g->values[value].producer >= 0 || !vl;
  dmlc_layout packed = dmlc_layout_packed(t);
  const uint64_t *want = is_result ? packed.strides : vl->strides;
  char want_list[192];
  dmlc_format_u64_list(want, t->rank, want_list, sizeof want_list);
  for (uint32_t i = 0; i < t->rank; i++) {
    if (t->dims[i] == 1 || l->strides[i] == want[i])
      continue;
    if (is_result) {
      char have[192];
      dmlc_format_u64_list(l->strides, t->rank, have, sizeof have);
      return INVALID(diag,
                     "InputTensor.Strides are %s but the bound value %s is an operator result, "
                     "laid out packed (%s)",
                     have, name, want_list);
    }
    if (!b->Strides)
      return INVALID(diag,
                     "InputTensor.Strides is NULL (packed) but the bound value %s has "
                     "strides %s",
                     name, want_list);
    return INVALID(diag, "InputTensor.Strides[%u] is %u but the bound value %s has strides %s", i,
                   b->Strides[i], name, want_list);
  }
  return DMLC_OK;
}

static dmlc_status check_binding(const dmlc_ir_graph *g, uint32_t value,
                                 const DML_TENSOR_DESC *desc, const dmlc_type *t,
                                 const dmlc_layout *l, dmlc_diag *diag) {
  if (value >= g->num_values)
    return INVALID(diag, "InputTensor is bound to value %u; the graph has %u values", value,
                   g->num_values);
  char name[DMLC_NAME_MAX + 16];
  format_value_name(g, value, name, sizeof name);
  DMLC_RETURN_IF_ERROR(check_bound_type(t, &g->values[value].type, name, diag));
  return check_bound_strides(g, value, desc->Desc, t, l, name, diag);
}

dmlc_status dmlc_frontend_add_operator(dmlc_ir_graph *g, const DML_OPERATOR_DESC *desc,
                                       const uint32_t *inputs, uint32_t *outputs,
                                       dmlc_layout *output_layouts, dmlc_diag *diag) {
  op_view v;
  DMLC_RETURN_IF_ERROR(view_operator(desc, &v, diag));
  dmlc_type in, out;
  dmlc_layout in_layout, out_layout;
  DMLC_RETURN_IF_ERROR(dmlc_frontend_tensor(v.input, "InputTensor", false, &in, &in_layout, diag));
  DMLC_RETURN_IF_ERROR(
      dmlc_frontend_tensor(v.output, "OutputTensor", true, &out, &out_layout, diag));
  DMLC_RETURN_IF_ERROR(check_input_data_type(&v, &in, diag));

  dmlc_node node = dmlc_node_make(v.op);
  DMLC_RETURN_IF_ERROR(collect_axes(&v, in.rank, node.axes, &node.num_axes, diag));
  if (v.has_direction && v.direction != DML_AXIS_DIRECTION_INCREASING &&
      v.direction != DML_AXIS_DIRECTION_DECREASING)
    return INVALID(diag,
                   "AxisDirection is %u; must be DML_AXIS_DIRECTION_INCREASING (0) or "
                   "DML_AXIS_DIRECTION_DECREASING (1)",
                   (unsigned)v.direction);
  if (v.op == DMLC_OP_HARDMAX)
    DMLC_RETURN_IF_ERROR(check_hardmax_output(&in, &out, diag));
  else
    DMLC_RETURN_IF_ERROR(check_index_output(&in, &out, node.axes, node.num_axes, diag));

  if (!g || !inputs || !outputs)
    return INVALID(diag, "dmlc_frontend_add_operator: graph, inputs or outputs is NULL");
  DMLC_RETURN_IF_ERROR(check_binding(g, inputs[0], v.input, &in, &in_layout, diag));

  node.num_operands = 1;
  node.operands[0] = inputs[0];
  node.direction = v.direction == DML_AXIS_DIRECTION_DECREASING ? DMLC_DIRECTION_DECREASING
                                                                : DMLC_DIRECTION_INCREASING;
  DMLC_RETURN_IF_ERROR(dmlc_ir_add_node(g, &node, &out, &outputs[0], diag));
  if (output_layouts)
    output_layouts[0] = out_layout;
  return DMLC_OK;
}
