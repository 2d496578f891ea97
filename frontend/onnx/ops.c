/* The ONNX ops dmlc maps, one function each, and the table that finds them
 * (spec/OPERATORS.md, "ONNX mapping"; docs/onnx.md). The op versions are
 * those of ONNX's operator_sets.h: a model's opset selects the newest
 * version at or below it. */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "frontend/onnx/import.h"

#define INVALID DMLC_ERROR_INVALID_ARGUMENT
#define UNSUPPORTED DMLC_ERROR_UNSUPPORTED

#define ATTR_INT ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INT
#define ATTR_INTS ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INTS
#define ATTR_FLOAT ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__FLOAT
#define ATTR_FLOATS ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__FLOATS
#define ATTR_STRING ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__STRING
#define ATTR_STRINGS ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__STRINGS
#define ATTR_TENSOR ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__TENSOR
#define ATTR_SPARSE ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__SPARSE_TENSOR

#define COUNT(a) (sizeof(a) / sizeof((a)[0]))

/* The node must have at most max outputs (ONNX's ops here have one). */
static dmlc_status check_outputs(onnx_import *im, uint32_t max) {
  if (im->node->n_output == 0)
    return onnx_node_fail(im, INVALID, "the node has no output");
  if (im->node->n_output > max)
    return onnx_node_fail(im, INVALID, "the node has %zu output%s; %s has %u", im->node->n_output,
                          DMLC_PLURAL(im->node->n_output), im->node->op_type, max);
  return DMLC_OK;
}

static dmlc_status check_inputs(onnx_import *im, uint32_t max) {
  if (im->node->n_input > max)
    return onnx_node_fail(im, INVALID, "the node has %zu input%s; %s-%d takes at most %u",
                          im->node->n_input, DMLC_PLURAL(im->node->n_input), im->node->op_type,
                          im->op_version, max);
  return DMLC_OK;
}

static const char *type_name(dmlc_dtype dtype) {
  return dmlc_onnx_data_type_name(dmlc_onnx_data_type_from_dml(dmlc_dtype_get(dtype)->dml));
}

/* ---- ArgMax, ArgMin ---- */

static const onnx_attr_spec arg_attrs[] = {
    {"axis", ATTR_INT, 1, 0},
    {"keepdims", ATTR_INT, 1, 0},
    {"select_last_index", ATTR_INT, 12, 0},
};

static dmlc_status map_arg_reduce(onnx_import *im) {
  DMLC_RETURN_IF_ERROR(onnx_check_attributes(im, arg_attrs, COUNT(arg_attrs)));
  DMLC_RETURN_IF_ERROR(check_inputs(im, 1));
  DMLC_RETURN_IF_ERROR(check_outputs(im, 1));
  const onnx_value *x;
  DMLC_RETURN_IF_ERROR(onnx_node_input(im, 0, true, false, &x));
  switch (x->dtype) {
  case DMLC_DTYPE_F32:
  case DMLC_DTYPE_F16:
  case DMLC_DTYPE_I8:
  case DMLC_DTYPE_I16:
  case DMLC_DTYPE_I32:
  case DMLC_DTYPE_I64:
  case DMLC_DTYPE_U8:
  case DMLC_DTYPE_U16:
  case DMLC_DTYPE_U32:
  case DMLC_DTYPE_U64:
    break;
  default:
    return onnx_node_fail(im, UNSUPPORTED,
                          "input '%.*s' is %s; dmlc's %s takes FLOAT, FLOAT16 and 8- to 64-bit "
                          "integers",
                          ONNX_QUOTE_MAX, x->name, type_name(x->dtype), im->node->op_type);
  }
  if (x->rank == 0)
    return onnx_node_fail(im, INVALID, "input '%.*s' is a scalar; %s needs rank 1 or more",
                          ONNX_QUOTE_MAX, x->name, im->node->op_type);
  uint32_t axis;
  bool keepdims, last;
  DMLC_RETURN_IF_ERROR(
      onnx_axis(im, onnx_attr_int(im, "axis", 0), x->rank, 0, im->op_version >= 11, "axis", &axis));
  DMLC_RETURN_IF_ERROR(onnx_attr_flag(im, "keepdims", 1, &keepdims));
  DMLC_RETURN_IF_ERROR(onnx_attr_flag(im, "select_last_index", 0, &last));
  dmlc_node n =
      dmlc_node_make(strcmp(im->node->op_type, "ArgMax") == 0 ? DMLC_OP_ARGMAX : DMLC_OP_ARGMIN);
  n.num_operands = 1;
  n.operands[0] = x->ir;
  n.num_axes = 1;
  n.axes[0] = axis;
  n.direction = last ? DMLC_DIRECTION_DECREASING : DMLC_DIRECTION_INCREASING;
  uint32_t dims[DMLC_MAX_RANK];
  memcpy(dims, x->dims, sizeof dims);
  dims[axis] = 1;
  onnx_value kept;
  DMLC_RETURN_IF_ERROR(onnx_emit(im, &n, DMLC_DTYPE_I64, x->rank, dims, &kept));
  if (keepdims)
    return onnx_node_define(im, 0, &kept);
  /* keepdims = 0 drops the axis: a view (a rank-1 input gives a scalar). */
  memmove(dims + axis, dims + axis + 1, (x->rank - 1 - axis) * sizeof dims[0]);
  onnx_value dropped;
  DMLC_RETURN_IF_ERROR(onnx_view(im, &kept, x->rank - 1, dims, &dropped));
  return onnx_node_define(im, 0, &dropped);
}

/* ---- Hardmax ---- */

static const onnx_attr_spec hardmax_attrs[] = {{"axis", ATTR_INT, 1, 0}};

/* Hardmax-13 is HARDMAX1 over one axis (default -1). Hardmax-1 and -11
 * view the input as 2-D [d0*...*d(k-1), dk*...*d(n-1)] with k = axis
 * (default 1) and take the hardmax of each row: HARDMAX1 over axes k to
 * n-1, with no reshape needed. */
static dmlc_status map_hardmax(onnx_import *im) {
  DMLC_RETURN_IF_ERROR(onnx_check_attributes(im, hardmax_attrs, COUNT(hardmax_attrs)));
  DMLC_RETURN_IF_ERROR(check_inputs(im, 1));
  DMLC_RETURN_IF_ERROR(check_outputs(im, 1));
  const onnx_value *x;
  DMLC_RETURN_IF_ERROR(onnx_node_input(im, 0, true, false, &x));
  if (x->dtype != DMLC_DTYPE_F32 && x->dtype != DMLC_DTYPE_F16)
    return onnx_node_fail(im, UNSUPPORTED,
                          "input '%.*s' is %s; dmlc's Hardmax takes FLOAT and FLOAT16",
                          ONNX_QUOTE_MAX, x->name, type_name(x->dtype));
  if (x->rank == 0)
    return onnx_node_fail(im, INVALID, "input '%.*s' is a scalar; Hardmax needs rank 1 or more",
                          ONNX_QUOTE_MAX, x->name);
  const bool coerced = im->op_version < 13;
  uint32_t axis;
  DMLC_RETURN_IF_ERROR(onnx_axis(im, onnx_attr_int(im, "axis", coerced ? 1 : -1), x->rank, 0,
                                 im->op_version >= 11, "axis", &axis));
  dmlc_node n = dmlc_node_make(DMLC_OP_HARDMAX);
  n.num_operands = 1;
  n.operands[0] = x->ir;
  n.num_axes = coerced ? x->rank - axis : 1;
  for (uint32_t i = 0; i < n.num_axes; i++)
    n.axes[i] = axis + i;
  onnx_value r;
  DMLC_RETURN_IF_ERROR(onnx_emit(im, &n, x->dtype, x->rank, x->dims, &r));
  return onnx_node_define(im, 0, &r);
}

/* ---- Identity ---- */

static dmlc_status map_identity(onnx_import *im) {
  DMLC_RETURN_IF_ERROR(onnx_check_attributes(im, NULL, 0));
  DMLC_RETURN_IF_ERROR(check_inputs(im, 1));
  DMLC_RETURN_IF_ERROR(check_outputs(im, 1));
  const onnx_value *x;
  DMLC_RETURN_IF_ERROR(onnx_node_input(im, 0, true, true, &x));
  return onnx_node_define(im, 0, x);
}

/* ---- Reshape ---- */

static const onnx_attr_spec reshape_attrs[] = {
    {"shape", ATTR_INTS, 1, 4},
    {"consumed_inputs", ATTR_INTS, 1, 4},
    {"allowzero", ATTR_INT, 14, 0},
};

/* Reshape-1 takes the shape as an attribute, Reshape-5 on as a constant
 * input. 0 copies the input's dim at that index (unless allowzero), one -1
 * takes what is left. */
static dmlc_status map_reshape(onnx_import *im) {
  DMLC_RETURN_IF_ERROR(onnx_check_attributes(im, reshape_attrs, COUNT(reshape_attrs)));
  const bool from_input = im->op_version >= 5;
  DMLC_RETURN_IF_ERROR(check_inputs(im, from_input ? 2 : 1));
  DMLC_RETURN_IF_ERROR(check_outputs(im, 1));
  const onnx_value *x;
  DMLC_RETURN_IF_ERROR(onnx_node_input(im, 0, true, false, &x));
  const int64_t *shape;
  uint32_t count;
  if (from_input) {
    DMLC_RETURN_IF_ERROR(onnx_node_const_ints(im, 1, "shape", &shape, &count));
  } else {
    const Onnx__AttributeProto *a = onnx_attr(im, "shape");
    if (!a)
      return onnx_node_fail(im, INVALID, "attribute 'shape' is missing");
    shape = a->ints;
    count = a->n_ints > UINT32_MAX ? UINT32_MAX : (uint32_t)a->n_ints;
  }
  bool allowzero;
  DMLC_RETURN_IF_ERROR(onnx_attr_flag(im, "allowzero", 0, &allowzero));
  if (count > DMLC_MAX_RANK)
    return onnx_node_fail(im, UNSUPPORTED, "the shape has %u dims; dmlc's tensors have at most %d",
                          count, DMLC_MAX_RANK);
  uint64_t in_count = 1, known = 1;
  for (uint32_t i = 0; i < x->rank; i++)
    in_count *= x->dims[i];
  uint32_t dims[DMLC_MAX_RANK];
  int infer = -1;
  for (uint32_t i = 0; i < count; i++) {
    const int64_t s = shape[i];
    if (s == 0 && allowzero)
      return onnx_node_fail(im, UNSUPPORTED,
                            "shape[%u] is 0 with allowzero = 1: an empty tensor, which dmlc does "
                            "not have",
                            i);
    if (s == 0 && i >= x->rank)
      return onnx_node_fail(im, INVALID,
                            "shape[%u] is 0, which copies the input's dim %u, but the input has "
                            "rank %u",
                            i, i, x->rank);
    if (s == -1) {
      if (infer >= 0)
        return onnx_node_fail(im, INVALID,
                              "shape[%d] and shape[%u] are both -1; at most one may be", infer, i);
      infer = (int)i;
      dims[i] = 1;
      continue;
    }
    if (s < -1 || s > (int64_t)UINT32_MAX)
      return onnx_node_fail(im, INVALID, "shape[%u] is %" PRId64 "; expected -1, 0 or a size", i,
                            s);
    dims[i] = s == 0 ? x->dims[i] : (uint32_t)s;
    known *= dims[i];
    if (known > in_count)
      break; /* the check below says so, before the product can overflow */
  }
  char text[DMLC_MAX_RANK * 22 + 4];
  uint64_t shown[DMLC_MAX_RANK];
  for (uint32_t i = 0; i < count; i++)
    shown[i] = (uint64_t)shape[i];
  if (infer >= 0 && in_count % known == 0) {
    dims[infer] = (uint32_t)(in_count / known);
    known = in_count;
  }
  if (known != in_count) {
    snprintf(text, sizeof text, "[");
    for (uint32_t i = 0; i < count; i++)
      snprintf(text + strlen(text), sizeof text - strlen(text), "%s%" PRId64, i ? ", " : "",
               (int64_t)shown[i]);
    snprintf(text + strlen(text), sizeof text - strlen(text), "]");
    return onnx_node_fail(im, INVALID, "shape %s does not fit the input's %" PRIu64 " elements",
                          text, in_count);
  }
  onnx_value r;
  DMLC_RETURN_IF_ERROR(onnx_view(im, x, count, dims, &r));
  return onnx_node_define(im, 0, &r);
}

/* ---- Squeeze, Unsqueeze ---- */

static const onnx_attr_spec squeeze_attrs[] = {{"axes", ATTR_INTS, 1, 12}};

/* The node's axes: the attribute up to version 12, the constant input 1
 * from 13 (absent: *present false). */
static dmlc_status node_axes(onnx_import *im, const int64_t **axes, uint32_t *count,
                             bool *present) {
  *axes = NULL;
  *count = 0;
  *present = false;
  if (im->op_version < 13) {
    const Onnx__AttributeProto *a = onnx_attr(im, "axes");
    if (a) {
      *axes = a->ints;
      *count = a->n_ints > UINT32_MAX ? UINT32_MAX : (uint32_t)a->n_ints;
      *present = true;
    }
    return DMLC_OK;
  }
  const onnx_value *v;
  DMLC_RETURN_IF_ERROR(onnx_node_input(im, 1, false, true, &v));
  if (!v)
    return DMLC_OK;
  *present = true;
  return onnx_node_const_ints(im, 1, "axes", axes, count);
}

/* Normalizes axes against rank into a mask; repeats are errors. */
static dmlc_status axes_mask(onnx_import *im, const int64_t *axes, uint32_t count, uint32_t rank,
                             uint32_t *mask) {
  *mask = 0;
  for (uint32_t i = 0; i < count; i++) {
    char what[32];
    snprintf(what, sizeof what, "axes[%u]", i);
    uint32_t a;
    DMLC_RETURN_IF_ERROR(onnx_axis(im, axes[i], rank, 0, im->op_version >= 11, what, &a));
    if (*mask & (1u << a))
      return onnx_node_fail(im, INVALID, "axes[%u] names axis %u again", i, a);
    *mask |= 1u << a;
  }
  return DMLC_OK;
}

static dmlc_status map_squeeze(onnx_import *im) {
  DMLC_RETURN_IF_ERROR(onnx_check_attributes(im, squeeze_attrs, COUNT(squeeze_attrs)));
  DMLC_RETURN_IF_ERROR(check_inputs(im, im->op_version >= 13 ? 2 : 1));
  DMLC_RETURN_IF_ERROR(check_outputs(im, 1));
  const onnx_value *x;
  DMLC_RETURN_IF_ERROR(onnx_node_input(im, 0, true, false, &x));
  const int64_t *axes;
  uint32_t count, mask = 0;
  bool present;
  DMLC_RETURN_IF_ERROR(node_axes(im, &axes, &count, &present));
  if (present) {
    if (count > x->rank)
      return onnx_node_fail(im, INVALID, "%u axes for an input of rank %u", count, x->rank);
    DMLC_RETURN_IF_ERROR(axes_mask(im, axes, count, x->rank, &mask));
  } else {
    for (uint32_t i = 0; i < x->rank; i++)
      if (x->dims[i] == 1)
        mask |= 1u << i;
  }
  uint32_t dims[DMLC_MAX_RANK], rank = 0;
  for (uint32_t i = 0; i < x->rank; i++) {
    if (!(mask & (1u << i))) {
      dims[rank++] = x->dims[i];
    } else if (x->dims[i] != 1) {
      return onnx_node_fail(im, INVALID, "axis %u has size %u; only size-1 axes can be squeezed", i,
                            x->dims[i]);
    }
  }
  onnx_value r;
  DMLC_RETURN_IF_ERROR(onnx_view(im, x, rank, dims, &r));
  return onnx_node_define(im, 0, &r);
}

static dmlc_status map_unsqueeze(onnx_import *im) {
  DMLC_RETURN_IF_ERROR(onnx_check_attributes(im, squeeze_attrs, COUNT(squeeze_attrs)));
  DMLC_RETURN_IF_ERROR(check_inputs(im, im->op_version >= 13 ? 2 : 1));
  DMLC_RETURN_IF_ERROR(check_outputs(im, 1));
  const onnx_value *x;
  DMLC_RETURN_IF_ERROR(onnx_node_input(im, 0, true, false, &x));
  const int64_t *axes;
  uint32_t count, mask;
  bool present;
  DMLC_RETURN_IF_ERROR(node_axes(im, &axes, &count, &present));
  if (!present)
    return onnx_node_fail(im, INVALID,
                          im->op_version >= 13 ? "input 1 (axes) is missing"
                                               : "attribute 'axes' is missing");
  if (count == 0)
    return onnx_node_fail(im, INVALID, "axes is empty");
  if (count > DMLC_MAX_RANK - x->rank)
    return onnx_node_fail(im, UNSUPPORTED, "%u axes on rank %u make more than %d dims, dmlc's most",
                          count, x->rank, DMLC_MAX_RANK);
  const uint32_t rank = x->rank + count;
  DMLC_RETURN_IF_ERROR(axes_mask(im, axes, count, rank, &mask));
  uint32_t dims[DMLC_MAX_RANK];
  for (uint32_t i = 0, k = 0; i < rank; i++)
    dims[i] = mask & (1u << i) ? 1 : x->dims[k++];
  onnx_value r;
  DMLC_RETURN_IF_ERROR(onnx_view(im, x, rank, dims, &r));
  return onnx_node_define(im, 0, &r);
}

/* ---- Flatten ---- */

static const onnx_attr_spec flatten_attrs[] = {{"axis", ATTR_INT, 1, 0}};

static dmlc_status map_flatten(onnx_import *im) {
  DMLC_RETURN_IF_ERROR(onnx_check_attributes(im, flatten_attrs, COUNT(flatten_attrs)));
  DMLC_RETURN_IF_ERROR(check_inputs(im, 1));
  DMLC_RETURN_IF_ERROR(check_outputs(im, 1));
  const onnx_value *x;
  DMLC_RETURN_IF_ERROR(onnx_node_input(im, 0, true, false, &x));
  /* axis is in [0, rank] (from Flatten-11 also [-rank, -1]). */
  uint32_t axis;
  DMLC_RETURN_IF_ERROR(
      onnx_axis(im, onnx_attr_int(im, "axis", 1), x->rank, 1, im->op_version >= 11, "axis", &axis));
  uint32_t dims[2] = {1, 1};
  for (uint32_t i = 0; i < x->rank; i++)
    dims[i >= axis] *= x->dims[i];
  onnx_value r;
  DMLC_RETURN_IF_ERROR(onnx_view(im, x, 2, dims, &r));
  return onnx_node_define(im, 0, &r);
}

/* ---- Constant ---- */

static const onnx_attr_spec constant_attrs[] = {
    {"value", ATTR_TENSOR, 1, 0},         {"sparse_value", ATTR_SPARSE, 11, 0},
    {"value_int", ATTR_INT, 12, 0},       {"value_ints", ATTR_INTS, 12, 0},
    {"value_float", ATTR_FLOAT, 12, 0},   {"value_floats", ATTR_FLOATS, 12, 0},
    {"value_string", ATTR_STRING, 12, 0}, {"value_strings", ATTR_STRINGS, 12, 0},
};

/* A Constant's output is a constant value: usable where dmlc takes
 * constants (shapes, axes), an error anywhere else. Its attribute becomes
 * a TensorProto, decoded as initializers are. */
static dmlc_status map_constant(onnx_import *im) {
  DMLC_RETURN_IF_ERROR(onnx_check_attributes(im, constant_attrs, COUNT(constant_attrs)));
  DMLC_RETURN_IF_ERROR(check_inputs(im, 0));
  DMLC_RETURN_IF_ERROR(check_outputs(im, 1));
  if (im->node->n_attribute != 1)
    return onnx_node_fail(im, INVALID, "the node has %zu attributes; Constant takes exactly one",
                          im->node->n_attribute);
  const Onnx__AttributeProto *a = im->node->attribute[0];
  const char *name = a->name;
  if (strcmp(name, "sparse_value") == 0 || strcmp(name, "value_string") == 0 ||
      strcmp(name, "value_strings") == 0)
    return onnx_node_fail(im, UNSUPPORTED, "attribute '%s': dmlc takes no %s constants", name,
                          name[0] == 's' ? "sparse" : "string");
  Onnx__TensorProto tp = ONNX__TENSOR_PROTO__INIT;
  int64_t dim = 0;
  const Onnx__TensorProto *proto = &tp;
  if (strcmp(name, "value") == 0) {
    if (!a->t)
      return onnx_node_fail(im, INVALID, "attribute 'value' holds no tensor");
    proto = a->t;
  } else if (strcmp(name, "value_int") == 0 || strcmp(name, "value_ints") == 0) {
    tp.has_data_type = 1;
    tp.data_type = ONNX__TENSOR_PROTO__DATA_TYPE__INT64;
    const bool list = strcmp(name, "value_ints") == 0;
    tp.int64_data = list ? a->ints : (int64_t *)&a->i;
    tp.n_int64_data = list ? a->n_ints : 1;
  } else {
    tp.has_data_type = 1;
    tp.data_type = ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT;
    const bool list = strcmp(name, "value_floats") == 0;
    tp.float_data = list ? a->floats : (float *)&a->f;
    tp.n_float_data = list ? a->n_floats : 1;
  }
  if (proto == &tp && (strcmp(name, "value_ints") == 0 || strcmp(name, "value_floats") == 0)) {
    dim = (int64_t)(tp.n_int64_data + tp.n_float_data);
    tp.n_dims = 1;
    tp.dims = &dim;
  }
  char what[DMLC_DIAG_MAX];
  snprintf(what, sizeof what, "%s: node '%.*s' (Constant, opset %" PRId64 "): attribute '%s'",
           im->filename, ONNX_QUOTE_MAX, im->node->name ? im->node->name : "", im->opset, name);
  dmlc_onnx_tensor *t;
  DMLC_RETURN_IF_ERROR(dmlc_onnx_tensor_from_proto(proto, what, true, &t, im->diag));
  onnx_value v = {0};
  DMLC_RETURN_IF_ERROR(onnx_add_constant(im, NULL, t, &v.constant));
  return onnx_node_define(im, 0, &v);
}

/* ---- the table ---- */

static const onnx_op onnx_ops[] = {
    {"ArgMax", {1, 11, 12, 13}, map_arg_reduce},
    {"ArgMin", {1, 11, 12, 13}, map_arg_reduce},
    {"Hardmax", {1, 11, 13}, map_hardmax},
    {"Identity", {1, 13, 14, 16, 19, 21, 23, 24, 25}, map_identity},
    {"Reshape", {1, 5, 13, 14, 19, 21, 23, 24, 25}, map_reshape},
    {"Squeeze", {1, 11, 13, 21, 23, 24, 25}, map_squeeze},
    {"Unsqueeze", {1, 11, 13, 21, 23, 24, 25}, map_unsqueeze},
    {"Flatten", {1, 9, 11, 13, 21, 23, 24, 25}, map_flatten},
    {"Constant", {1, 9, 11, 12, 13, 19, 21, 23, 24, 25}, map_constant},
};

const onnx_op *onnx_op_find(const char *name) {
  for (size_t i = 0; i < COUNT(onnx_ops); i++)
    if (strcmp(onnx_ops[i].name, name) == 0)
      return &onnx_ops[i];
  return NULL;
}

void onnx_op_list(char *buf, size_t size) {
  size_t len = 0;
  buf[0] = '\0';
  for (size_t i = 0; i < COUNT(onnx_ops) && len < size; i++) {
    const char *sep = i == 0 ? "" : i + 1 == COUNT(onnx_ops) ? " and " : ", ";
    const int n = snprintf(buf + len, size - len, "%s%s", sep, onnx_ops[i].name);
    if (n < 0)
      break;
    len += (size_t)n;
  }
}
