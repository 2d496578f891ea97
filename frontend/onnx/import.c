/* ONNX ModelProto -> IR graph (docs/onnx.md).
 *
 * The model is decoded by protobuf-c (after the structure check of wire.c),
 * its default-domain opset found, symbolic dims bound from the options, its
 * graph inputs made IR inputs, its nodes mapped in order by the op table
 * (ops.c), and its outputs made IR outputs. Constants (initializers and
 * Constant nodes) never enter the IR: dmlc takes them only where ONNX wants
 * a shape or axes. Every failure names the file and the node, input or
 * output, with the node's op type and the model's opset. */
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "frontend/onnx/import.h"
#include "ir/array.h"

#define INVALID DMLC_ERROR_INVALID_ARGUMENT
#define UNSUPPORTED DMLC_ERROR_UNSUPPORTED
#define Q ONNX_QUOTE_MAX /* printf precision for quoted names */
#define MAX_ELEMENTS UINT64_C(4294967295)

static const char *str(const char *s) { return s ? s : ""; }

static bool is_default_domain(const char *domain) {
  return !domain || !*domain || strcmp(domain, "ai.onnx") == 0;
}

/* ---- messages ---- */

static dmlc_status vfail(onnx_import *im, dmlc_status status, const char *prefix, const char *fmt,
                         va_list ap) {
  char text[DMLC_DIAG_MAX];
  vsnprintf(text, sizeof text, fmt, ap);
  return dmlc_diag_set(im->diag, status, "%s: %s%s", im->filename, prefix, text);
}

/* "FILE: message", for what is not a node's. */
static dmlc_status fail(onnx_import *im, dmlc_status status, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static dmlc_status fail(onnx_import *im, dmlc_status status, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  const dmlc_status st = vfail(im, status, "", fmt, ap);
  va_end(ap);
  return st;
}

/* The opset a model imports for domain, or -1. */
static int64_t domain_opset(const onnx_import *im, const char *domain) {
  for (size_t i = 0; i < im->model->n_opset_import; i++) {
    const Onnx__OperatorSetIdProto *o = im->model->opset_import[i];
    if (strcmp(str(o->domain), str(domain)) == 0 && o->has_version)
      return o->version;
  }
  return -1;
}

/* "node 'NAME' (OP, opset N)", or "node #I (...)" for an unnamed node;
 * another domain is named with its own opset. */
static void describe_node(const onnx_import *im, uint32_t index, char *buf, size_t size) {
  const Onnx__NodeProto *node = im->graph->node[index];
  char who[Q + 32];
  if (node->name && *node->name)
    snprintf(who, sizeof who, "node '%.*s'", Q, node->name);
  else
    snprintf(who, sizeof who, "node #%u", index);
  const char *op = node->op_type && *node->op_type ? node->op_type : "no op_type";
  if (is_default_domain(node->domain)) {
    snprintf(buf, size, "%s (%.*s, opset %" PRId64 ")", who, Q, op, im->opset);
    return;
  }
  const int64_t v = domain_opset(im, node->domain);
  char opset[48];
  if (v < 0)
    snprintf(opset, sizeof opset, "not imported");
  else
    snprintf(opset, sizeof opset, "opset %" PRId64, v);
  snprintf(buf, size, "%s (%.*s, domain '%.*s', %s)", who, Q, op, Q, node->domain, opset);
}

dmlc_status onnx_node_fail(onnx_import *im, dmlc_status status, const char *fmt, ...) {
  char prefix[4 * Q + 128];
  describe_node(im, im->node_index, prefix, sizeof prefix - 2);
  strcat(prefix, ": ");
  va_list ap;
  va_start(ap, fmt);
  const dmlc_status st = vfail(im, status, prefix, fmt, ap);
  va_end(ap);
  return st;
}

/* ---- values and constants ---- */

static dmlc_status add_value(onnx_import *im, const onnx_value *v) {
  const onnx_value copy = *v; /* v may point into values, which may move */
  if (!DMLC_ARRAY_RESERVE(&im->values, &im->cap_values, im->num_values + 1, 64) ||
      !onnx_names_put(&im->names, copy.name, im->num_values))
    return fail(im, DMLC_ERROR_OUT_OF_MEMORY, "out of memory");
  im->values[im->num_values++] = copy;
  return DMLC_OK;
}

dmlc_status onnx_add_constant(onnx_import *im, const Onnx__TensorProto *proto,
                              dmlc_onnx_tensor *tensor, uint32_t *index) {
  if (!DMLC_ARRAY_RESERVE(&im->constants, &im->cap_constants, im->num_constants + 1, 16)) {
    free(tensor);
    return fail(im, DMLC_ERROR_OUT_OF_MEMORY, "out of memory");
  }
  im->constants[im->num_constants] = (onnx_constant){proto, tensor};
  *index = im->num_constants++;
  return DMLC_OK;
}

dmlc_status onnx_node_input(onnx_import *im, uint32_t k, bool required, bool constant_ok,
                            const onnx_value **out) {
  *out = NULL;
  const Onnx__NodeProto *node = im->node;
  const char *name = k < node->n_input ? str(node->input[k]) : "";
  if (!*name) {
    if (required)
      return onnx_node_fail(im, INVALID, "input %u is missing; %s-%d needs it", k, node->op_type,
                            im->op_version);
    return DMLC_OK;
  }
  const uint32_t i = onnx_names_find(&im->names, name);
  if (i == UINT32_MAX) {
    const uint32_t later = onnx_names_find(&im->producers, name);
    if (later == UINT32_MAX)
      return onnx_node_fail(im, INVALID,
                            "input '%.*s' is defined nowhere: no graph input, initializer or "
                            "node output has that name",
                            Q, name);
    char producer[4 * Q + 128];
    describe_node(im, later, producer, sizeof producer);
    return onnx_node_fail(im, INVALID,
                          "input '%.*s' comes from %s, which is not before this node: the nodes "
                          "are not in topological order, or form a cycle",
                          Q, name, producer);
  }
  const onnx_value *v = &im->values[i];
  if (v->constant != ONNX_NOT_CONSTANT && !constant_ok)
    return onnx_node_fail(im, UNSUPPORTED,
                          "input '%.*s' is a constant (an initializer or a Constant's output); "
                          "dmlc computes on graph inputs and takes constants only as shapes and "
                          "axes",
                          Q, name);
  *out = v;
  return DMLC_OK;
}

dmlc_status onnx_node_const_ints(onnx_import *im, uint32_t k, const char *what,
                                 const int64_t **values, uint32_t *count) {
  const onnx_value *v;
  DMLC_RETURN_IF_ERROR(onnx_node_input(im, k, true, true, &v));
  if (v->constant == ONNX_NOT_CONSTANT)
    return onnx_node_fail(im, UNSUPPORTED,
                          "input %u (%s) is '%.*s', which the graph computes; dmlc takes %s only "
                          "as a constant (an initializer or a Constant's output)",
                          k, what, Q, v->name, what);
  onnx_constant *c = &im->constants[v->constant];
  if (!c->tensor) {
    char where[DMLC_DIAG_MAX];
    describe_node(im, im->node_index, where, sizeof where);
    char who[DMLC_DIAG_MAX + 2 * Q];
    snprintf(who, sizeof who, "%s: %s: initializer '%.*s'", im->filename, where, Q, v->name);
    DMLC_RETURN_IF_ERROR(dmlc_onnx_tensor_from_proto(c->proto, who, true, &c->tensor, im->diag));
    c->proto = NULL;
  }
  const dmlc_onnx_tensor *t = c->tensor;
  if (t->data_type != DML_TENSOR_DATA_TYPE_INT64)
    return onnx_node_fail(im, INVALID, "input %u (%s) '%.*s' is %s; %s-%d wants INT64", k, what, Q,
                          v->name,
                          dmlc_onnx_data_type_name(dmlc_onnx_data_type_from_dml(t->data_type)),
                          im->node->op_type, im->op_version);
  if (t->rank != 1)
    return onnx_node_fail(im, INVALID, "input %u (%s) '%.*s' has rank %u; %s-%d wants rank 1", k,
                          what, Q, v->name, t->rank, im->node->op_type, im->op_version);
  *values = t->data;
  *count = (uint32_t)t->dims[0];
  return DMLC_OK;
}

dmlc_status onnx_node_define(onnx_import *im, uint32_t k, const onnx_value *v) {
  onnx_value copy = *v;
  const Onnx__NodeProto *node = im->node;
  const char *name = k < node->n_output ? str(node->output[k]) : "";
  if (!*name)
    return onnx_node_fail(im, INVALID, "output %u has no name", k);
  if (onnx_names_find(&im->names, name) != UINT32_MAX)
    return onnx_node_fail(im, INVALID,
                          "output '%.*s' is already defined (by a graph input, an initializer or "
                          "an earlier node): ONNX names each value once",
                          Q, name);
  copy.name = name;
  return add_value(im, &copy);
}

/* ---- IR nodes ---- */

dmlc_type onnx_ir_type(dmlc_dtype dtype, uint32_t rank, const uint32_t *dims) {
  dmlc_type t = {.dtype = dtype, .rank = rank ? rank : 1, .dims = {1}};
  for (uint32_t i = 0; i < rank; i++)
    t.dims[i] = dims[i];
  return t;
}

static void set_shape(onnx_value *v, dmlc_dtype dtype, uint32_t rank, const uint32_t *dims) {
  v->constant = ONNX_NOT_CONSTANT;
  v->dtype = dtype;
  v->rank = rank;
  memset(v->dims, 0, sizeof v->dims);
  memcpy(v->dims, dims, rank * sizeof dims[0]);
}

dmlc_status onnx_emit(onnx_import *im, const dmlc_node *node, dmlc_dtype dtype, uint32_t rank,
                      const uint32_t *dims, onnx_value *out) {
  const dmlc_type type = onnx_ir_type(dtype, rank, dims);
  *out = (onnx_value){0};
  DMLC_RETURN_IF_ERROR(dmlc_ir_add_node(im->ir, node, &type, &out->ir, im->diag));
  set_shape(out, dtype, rank, dims);
  return DMLC_OK;
}

dmlc_status onnx_view(onnx_import *im, const onnx_value *in, uint32_t rank, const uint32_t *dims,
                      onnx_value *out) {
  const dmlc_type to = onnx_ir_type(in->dtype, rank, dims);
  if (dmlc_type_equal(&to, &im->ir->values[in->ir].type)) {
    *out = *in;
    set_shape(out, in->dtype, rank, dims);
    return DMLC_OK;
  }
  dmlc_node n = dmlc_node_make(DMLC_OP_RESHAPE);
  n.num_operands = 1;
  n.operands[0] = in->ir;
  return onnx_emit(im, &n, in->dtype, rank, dims, out);
}

/* ---- attributes ---- */

static const char *const attr_type_names[] = {
    [ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__UNDEFINED] = "UNDEFINED",
    [ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__FLOAT] = "FLOAT",
    [ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INT] = "INT",
    [ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__STRING] = "STRING",
    [ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__TENSOR] = "TENSOR",
    [ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__GRAPH] = "GRAPH",
    [ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__FLOATS] = "FLOATS",
    [ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INTS] = "INTS",
    [ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__STRINGS] = "STRINGS",
    [ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__TENSORS] = "TENSORS",
    [ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__GRAPHS] = "GRAPHS",
    [ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__SPARSE_TENSOR] = "SPARSE_TENSOR",
    [ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__SPARSE_TENSORS] = "SPARSE_TENSORS",
    [ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__TYPE_PROTO] = "TYPE_PROTO",
    [ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__TYPE_PROTOS] = "TYPE_PROTOS",
};

static const char *attr_type_name(int type) {
  const size_t n = sizeof attr_type_names / sizeof attr_type_names[0];
  return type >= 0 && (size_t)type < n && attr_type_names[type] ? attr_type_names[type] : "unknown";
}

/* An attribute's type: its type field, or for files of IR version 1,
 * which have none, the field that holds a value. */
static int attr_type(const Onnx__AttributeProto *a) {
  if (a->has_type)
    return (int)a->type;
  static const struct {
    size_t offset;
    bool is_count;
    int type;
  } fields[] = {
      {offsetof(Onnx__AttributeProto, has_f), false, ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__FLOAT},
      {offsetof(Onnx__AttributeProto, has_i), false, ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INT},
      {offsetof(Onnx__AttributeProto, has_s), false, ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__STRING},
      {offsetof(Onnx__AttributeProto, n_floats), true,
       ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__FLOATS},
      {offsetof(Onnx__AttributeProto, n_ints), true, ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INTS},
      {offsetof(Onnx__AttributeProto, n_strings), true,
       ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__STRINGS},
  };
  for (size_t i = 0; i < sizeof fields / sizeof fields[0]; i++) {
    const char *p = (const char *)a + fields[i].offset;
    size_t count;
    protobuf_c_boolean has;
    if (fields[i].is_count ? (memcpy(&count, p, sizeof count), count > 0)
                           : (memcpy(&has, p, sizeof has), has != 0))
      return fields[i].type;
  }
  if (a->t)
    return ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__TENSOR;
  if (a->g)
    return ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__GRAPH;
  return ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__UNDEFINED;
}

dmlc_status onnx_check_attributes(onnx_import *im, const onnx_attr_spec *specs, size_t count) {
  const Onnx__NodeProto *node = im->node;
  const char *op = node->op_type;
  for (size_t i = 0; i < node->n_attribute; i++) {
    const Onnx__AttributeProto *a = node->attribute[i];
    const char *name = str(a->name);
    if (!*name)
      return onnx_node_fail(im, INVALID, "attribute %zu has no name", i);
    if (a->ref_attr_name && *a->ref_attr_name)
      return onnx_node_fail(im, INVALID,
                            "attribute '%.*s' refers to attribute '%.*s' of an enclosing function "
                            "(ref_attr_name), which only a function's body may do",
                            Q, name, Q, a->ref_attr_name);
    const onnx_attr_spec *spec = NULL;
    for (size_t s = 0; s < count && !spec; s++)
      if (strcmp(specs[s].name, name) == 0)
        spec = &specs[s];
    if (!spec)
      return onnx_node_fail(im, INVALID, "'%.*s' is not an attribute of %s", Q, name, op);
    if (im->op_version < spec->since || (spec->until && im->op_version > spec->until)) {
      char range[64];
      if (spec->until)
        snprintf(range, sizeof range, "versions %d to %d", spec->since, spec->until);
      else
        snprintf(range, sizeof range, "version %d on", spec->since);
      return onnx_node_fail(im, INVALID,
                            "'%s' is not an attribute of %s-%d, the version opset %" PRId64
                            " selects (%s has it in %s)",
                            name, op, im->op_version, im->opset, op, range);
    }
    /* Known names only get here, so this is at most count^2 steps. */
    for (size_t j = 0; j < i; j++)
      if (strcmp(str(node->attribute[j]->name), name) == 0)
        return onnx_node_fail(im, INVALID, "attribute '%s' is given twice", name);
    const int type = attr_type(a);
    if (type != (int)spec->type)
      return onnx_node_fail(im, INVALID, "attribute '%s' is %s; %s takes it as %s", name,
                            attr_type_name(type), op, attr_type_name((int)spec->type));
  }
  return DMLC_OK;
}

const Onnx__AttributeProto *onnx_attr(const onnx_import *im, const char *name) {
  for (size_t i = 0; i < im->node->n_attribute; i++)
    if (strcmp(str(im->node->attribute[i]->name), name) == 0)
      return im->node->attribute[i];
  return NULL;
}

int64_t onnx_attr_int(const onnx_import *im, const char *name, int64_t fallback) {
  const Onnx__AttributeProto *a = onnx_attr(im, name);
  return a ? a->i : fallback;
}

dmlc_status onnx_attr_flag(onnx_import *im, const char *name, int64_t fallback, bool *out) {
  const int64_t v = onnx_attr_int(im, name, fallback);
  if (v != 0 && v != 1)
    return onnx_node_fail(im, INVALID, "attribute '%s' is %" PRId64 "; it must be 0 or 1", name, v);
  *out = v == 1;
  return DMLC_OK;
}

dmlc_status onnx_axis(onnx_import *im, int64_t axis, uint32_t rank, uint32_t span, bool from_end_ok,
                      const char *what, uint32_t *out) {
  const int64_t hi = (int64_t)rank - 1 + span, lo = from_end_ok ? -(int64_t)rank : 0;
  if (axis < 0 && !from_end_ok && axis >= -(int64_t)rank)
    return onnx_node_fail(im, INVALID,
                          "%s is %" PRId64 ", but %s-%d takes no negative axes (they count from "
                          "the end from version 11); 0 to %" PRId64 " for rank %u",
                          what, axis, im->node->op_type, im->op_version, hi, rank);
  if (axis < lo || axis > hi)
    return onnx_node_fail(im, INVALID,
                          "%s is %" PRId64 ", out of range for rank %u: %s-%d takes %" PRId64
                          " to %" PRId64,
                          what, axis, rank, im->node->op_type, im->op_version, lo, hi);
  *out = (uint32_t)(axis < 0 ? axis + (int64_t)rank : axis);
  return DMLC_OK;
}

/* ---- the model ---- */

static dmlc_status find_opset(onnx_import *im) {
  bool found = false;
  for (size_t i = 0; i < im->model->n_opset_import; i++) {
    const Onnx__OperatorSetIdProto *o = im->model->opset_import[i];
    if (!is_default_domain(o->domain))
      continue;
    if (!o->has_version)
      return fail(im, INVALID, "opset_import[%zu] (domain '%s') has no version", i, str(o->domain));
    if (found && o->version != im->opset)
      return fail(im, INVALID,
                  "opset_import names ONNX's default domain twice, with opsets %" PRId64
                  " and %" PRId64,
                  im->opset, o->version);
    found = true;
    im->opset = o->version;
  }
  if (!found)
    return fail(im, INVALID,
                "the model imports no opset of ONNX's default domain ('' or 'ai.onnx') in "
                "opset_import");
  if (im->opset < 1)
    return fail(im, INVALID,
                "the model imports opset %" PRId64 " of the default domain; opsets "
                "start at 1",
                im->opset);
  if (im->opset > DMLC_ONNX_MAX_OPSET)
    return fail(im, UNSUPPORTED,
                "the model imports opset %" PRId64 " of the default domain; dmlc knows opsets 1 "
                "to %d",
                im->opset, DMLC_ONNX_MAX_OPSET);
  return DMLC_OK;
}

/* ---- symbolic dims and the options' shapes ---- */

static const Onnx__TensorShapeProto *declared_shape(const Onnx__ValueInfoProto *vi) {
  if (!vi->type || vi->type->value_case != ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE ||
      !vi->type->tensor_type)
    return NULL;
  return vi->type->tensor_type->shape;
}

static const char *dim_param(const Onnx__TensorShapeProto *shape, size_t d) {
  const Onnx__TensorShapeProto__Dimension *dim = shape->dim[d];
  if (dim->value_case != ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_PARAM)
    return NULL;
  return dim->dim_param && *dim->dim_param ? dim->dim_param : NULL;
}

/* Whether a graph input's declared shape uses the symbolic dim name. */
static bool model_has_dim_param(const onnx_import *im, const char *name) {
  for (size_t i = 0; i < im->graph->n_input; i++) {
    const Onnx__TensorShapeProto *shape = declared_shape(im->graph->input[i]);
    for (size_t d = 0; shape && d < shape->n_dim; d++)
      if (dim_param(shape, d) && strcmp(dim_param(shape, d), name) == 0)
        return true;
  }
  return false;
}

static uint32_t find_dim_param(const onnx_import *im, const char *name) {
  return onnx_names_find(&im->dim_params, name);
}

/* Gives the symbolic dim name the value; where it has one already, the two
 * must agree (what says who gives the new one). */
static dmlc_status set_dim_param(onnx_import *im, const char *name, uint64_t value,
                                 const char *what) {
  const uint32_t i = find_dim_param(im, name);
  if (i != UINT32_MAX) {
    if (im->dim_values[i] != value)
      return fail(im, INVALID, "the symbolic dim '%.*s' is %" PRIu64 ", but %s makes it %" PRIu64,
                  Q, name, im->dim_values[i], what, value);
    return DMLC_OK;
  }
  if (!DMLC_ARRAY_RESERVE(&im->dim_values, &im->cap_dim_values, im->num_dim_values + 1, 8) ||
      !onnx_names_put(&im->dim_params, name, im->num_dim_values))
    return fail(im, DMLC_ERROR_OUT_OF_MEMORY, "out of memory");
  im->dim_values[im->num_dim_values++] = value;
  return DMLC_OK;
}

/* The graph input named name (an initializer's name is no input), or
 * SIZE_MAX. */
static size_t find_graph_input(const onnx_import *im, const char *name) {
  for (size_t i = 0; i < im->graph->n_input; i++)
    if (strcmp(str(im->graph->input[i]->name), name) == 0)
      return i;
  return SIZE_MAX;
}

static bool is_initializer(const onnx_import *im, const char *name) {
  const uint32_t i = onnx_names_find(&im->names, name);
  return i != UINT32_MAX && im->values[i].constant != ONNX_NOT_CONSTANT;
}

/* Checks the options' shapes; records each input's shape in by_input (by
 * graph input index) and gives the symbolic dims their values, the named
 * ones first, then those an input's whole shape implies. */
static dmlc_status bind_shapes(onnx_import *im, const dmlc_onnx_options *options,
                               const dmlc_onnx_shape **by_input) {
  const size_t count = options ? options->shape_count : 0;
  if (count && !options->shapes)
    return fail(im, INVALID, "dmlc_onnx_options: shapes is NULL, shape_count %zu", count);
  for (size_t i = 0; i < count; i++) {
    const dmlc_onnx_shape *s = &options->shapes[i];
    if (!s->name || !*s->name)
      return fail(im, INVALID, "dmlc_onnx_options: shapes[%zu] has no name", i);
    if (s->dim_count > DMLC_MAX_RANK || (s->dim_count && !s->dims))
      return fail(im, INVALID, "dmlc_onnx_options: shapes[%zu] ('%.*s') has %u dims at %p", i, Q,
                  s->name, s->dim_count, (const void *)s->dims);
    for (uint32_t d = 0; d < s->dim_count; d++)
      if (s->dims[d] == 0 || s->dims[d] > UINT32_MAX)
        return fail(im, INVALID,
                    "dmlc_onnx_options: shapes[%zu] ('%.*s'): dims[%u] is %" PRIu64
                    "; dims are 1 to 4294967295",
                    i, Q, s->name, d, s->dims[d]);
    for (size_t j = 0; j < i; j++)
      if (strcmp(options->shapes[j].name, s->name) == 0)
        return fail(im, INVALID, "dmlc_onnx_options: shapes[%zu] and shapes[%zu] both name '%.*s'",
                    j, i, Q, s->name);
    const size_t input = find_graph_input(im, s->name);
    if (input != SIZE_MAX && !is_initializer(im, s->name)) {
      by_input[input] = s;
      continue;
    }
    if (!model_has_dim_param(im, s->name))
      return fail(im, INVALID,
                  "dmlc_onnx_options: shapes[%zu] names '%.*s', which is neither an input nor a "
                  "symbolic dim (dim_param) of the model's inputs",
                  i, Q, s->name);
    if (s->dim_count != 1)
      return fail(im, INVALID,
                  "dmlc_onnx_options: shapes[%zu] gives the symbolic dim '%.*s' %u values; it "
                  "takes one",
                  i, Q, s->name, s->dim_count);
    char what[Q + 64];
    snprintf(what, sizeof what, "dmlc_onnx_options' shapes[%zu]", i);
    DMLC_RETURN_IF_ERROR(set_dim_param(im, s->name, s->dims[0], what));
  }
  for (size_t i = 0; i < im->graph->n_input; i++) {
    const Onnx__TensorShapeProto *shape = declared_shape(im->graph->input[i]);
    if (!by_input[i] || !shape || shape->n_dim != by_input[i]->dim_count)
      continue; /* a rank mismatch is reported with the input */
    for (size_t d = 0; d < shape->n_dim; d++) {
      if (!dim_param(shape, d))
        continue;
      char what[Q + 64];
      snprintf(what, sizeof what, "the shape given for input '%.*s'", Q, by_input[i]->name);
      DMLC_RETURN_IF_ERROR(set_dim_param(im, dim_param(shape, d), by_input[i]->dims[d], what));
    }
  }
  return DMLC_OK;
}

/* ---- graph inputs ---- */

/* The data type of a declared tensor (input or output); what names it. */
static dmlc_status value_info_dtype(onnx_import *im, const Onnx__ValueInfoProto *vi,
                                    const char *what, dmlc_dtype *out) {
  static const char *const kinds[] = {
      [ONNX__TYPE_PROTO__VALUE_SEQUENCE_TYPE] = "a sequence",
      [ONNX__TYPE_PROTO__VALUE_MAP_TYPE] = "a map",
      [ONNX__TYPE_PROTO__VALUE_OPTIONAL_TYPE] = "an optional",
      [ONNX__TYPE_PROTO__VALUE_SPARSE_TENSOR_TYPE] = "a sparse tensor",
  };
  const char *name = str(vi->name);
  if (!vi->type || vi->type->value_case == ONNX__TYPE_PROTO__VALUE__NOT_SET)
    return fail(im, INVALID, "%s '%.*s' has no type", what, Q, name);
  const int kind = (int)vi->type->value_case;
  if (kind != ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE)
    return fail(im, UNSUPPORTED, "%s '%.*s' is %s, not a tensor", what, Q, name,
                kind >= 0 && (size_t)kind < sizeof kinds / sizeof kinds[0] && kinds[kind]
                    ? kinds[kind]
                    : "not a tensor");
  const Onnx__TypeProto__Tensor *tt = vi->type->tensor_type;
  if (!tt || !tt->has_elem_type || tt->elem_type == 0)
    return fail(im, INVALID, "%s '%.*s' has no elem_type", what, Q, name);
  DML_TENSOR_DATA_TYPE dml;
  if (!dmlc_onnx_data_type_to_dml(tt->elem_type, &dml)) {
    char type[96];
    dmlc_onnx_describe_lacking_type(tt->elem_type, type, sizeof type);
    return fail(im, dmlc_onnx_data_type_name(tt->elem_type) ? UNSUPPORTED : INVALID,
                "%s '%.*s' has %s", what, Q, name, type);
  }
  dmlc_dtype_from_dml(dml, out);
  return DMLC_OK;
}

/* One dim of a graph input: the model's value, a symbolic dim's value, or
 * the options' shape for the input (bound, may be NULL). */
static dmlc_status input_dim(onnx_import *im, const char *name, const Onnx__TensorShapeProto *shape,
                             const dmlc_onnx_shape *bound, uint32_t d, uint32_t *out) {
  const Onnx__TensorShapeProto__Dimension *dim = shape ? shape->dim[d] : NULL;
  if (dim && dim->value_case == ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE) {
    const int64_t v = dim->dim_value;
    if (v < 0)
      return fail(im, INVALID, "input '%.*s': dim %u is %" PRId64, Q, name, d, v);
    if (v == 0)
      return fail(im, UNSUPPORTED,
                  "input '%.*s': dim %u is 0: an empty tensor, which dmlc does "
                  "not have",
                  Q, name, d);
    if ((uint64_t)v > UINT32_MAX)
      return fail(im, UNSUPPORTED,
                  "input '%.*s': dim %u is %" PRId64 "; dmlc's dims are at most "
                  "4294967295",
                  Q, name, d, v);
    if (bound && bound->dims[d] != (uint64_t)v)
      return fail(im, INVALID,
                  "input '%.*s': dim %u is %" PRId64 " in the model, but the shape given for it "
                  "says %" PRIu64,
                  Q, name, d, v, bound->dims[d]);
    *out = (uint32_t)v;
    return DMLC_OK;
  }
  if (bound) {
    *out = (uint32_t)bound->dims[d];
    return DMLC_OK;
  }
  const char *param = shape ? dim_param(shape, d) : NULL;
  if (!param)
    return fail(im, INVALID,
                "input '%.*s': dim %u has neither a value nor a name; give the input's whole "
                "shape: --shape %.*s=DIMS (dmlc_onnx_options in the C API)",
                Q, name, d, Q, name);
  const uint32_t i = find_dim_param(im, param);
  if (i == UINT32_MAX)
    return fail(im, INVALID,
                "input '%.*s': dim %u is the symbolic '%.*s'; give it a value: --shape %.*s=SIZE "
                "(dmlc_onnx_options in the C API), or the input's whole shape",
                Q, name, d, Q, param, Q, param);
  *out = (uint32_t)im->dim_values[i];
  return DMLC_OK;
}

static bool name_taken(const char *candidate, void *user) {
  return onnx_names_find(user, candidate) != UINT32_MAX;
}

/* Makes the IR name of the k-th input or output from its ONNX name: valid,
 * and unique among the IR names so far (kept in names, their text in
 * storage[k], which does not move). */
static dmlc_status make_ir_name(onnx_import *im, const char *onnx_name, const char *fallback,
                                onnx_name_table *names, char (*storage)[DMLC_NAME_MAX], size_t k,
                                uint32_t *next_suffix) {
  onnx_valid_name(onnx_name, fallback, false, name_taken, names, next_suffix, storage[k]);
  if (!onnx_names_put(names, storage[k], (uint32_t)k))
    return fail(im, DMLC_ERROR_OUT_OF_MEMORY, "out of memory");
  return DMLC_OK;
}

static dmlc_status add_input(onnx_import *im, size_t index, const dmlc_onnx_shape *bound,
                             uint32_t *next_suffix) {
  const Onnx__ValueInfoProto *vi = im->graph->input[index];
  const char *name = vi->name;
  onnx_value v = {.name = name, .constant = ONNX_NOT_CONSTANT};
  DMLC_RETURN_IF_ERROR(value_info_dtype(im, vi, "input", &v.dtype));
  if (v.dtype == DMLC_DTYPE_BOOL)
    return fail(im, UNSUPPORTED, "input '%.*s' is BOOL; dmlc takes no bool tensors in or out", Q,
                name);
  const Onnx__TensorShapeProto *shape = declared_shape(vi);
  if (!shape && !bound)
    return fail(im, INVALID,
                "input '%.*s' has no shape; give it one: --shape %.*s=DIMS (dmlc_onnx_options in "
                "the C API)",
                Q, name, Q, name);
  if (shape && bound && shape->n_dim != bound->dim_count)
    return fail(im, INVALID, "input '%.*s' has rank %zu, but the shape given for it has %u dims", Q,
                name, shape->n_dim, bound->dim_count);
  const size_t rank = shape ? shape->n_dim : bound->dim_count;
  if (rank > DMLC_MAX_RANK)
    return fail(im, UNSUPPORTED, "input '%.*s' has rank %zu; dmlc's tensors have at most %d dims",
                Q, name, rank, DMLC_MAX_RANK);
  v.rank = (uint32_t)rank;
  uint64_t elements = 1;
  for (uint32_t d = 0; d < v.rank; d++) {
    DMLC_RETURN_IF_ERROR(input_dim(im, name, shape, bound, d, &v.dims[d]));
    elements *= v.dims[d];
    if (elements > MAX_ELEMENTS)
      return fail(im, UNSUPPORTED, "input '%.*s' has more than %" PRIu64 " elements, dmlc's most",
                  Q, name, MAX_ELEMENTS);
  }
  const uint32_t k = im->ir->num_inputs;
  DMLC_RETURN_IF_ERROR(
      make_ir_name(im, name, "input", &im->ir_input_names, im->ir_names, k, next_suffix));
  const dmlc_type type = onnx_ir_type(v.dtype, v.rank, v.dims);
  DMLC_RETURN_IF_ERROR(dmlc_ir_add_input(im->ir, im->ir_names[k], &type, NULL, &v.ir, im->diag));
  im->input_values[im->ir->num_inputs - 1] = im->num_values;
  return add_value(im, &v);
}

/* Initializers become constants; the graph inputs that are not
 * initializers (an input with an initializer is an optional input with a
 * default: dmlc takes the default) become the IR's inputs. */
static dmlc_status add_inputs(onnx_import *im, const dmlc_onnx_options *options) {
  const Onnx__GraphProto *g = im->graph;
  if (g->n_sparse_initializer > 0)
    return fail(im, UNSUPPORTED, "the graph has %zu sparse initializers, which dmlc does not read",
                g->n_sparse_initializer);
  for (size_t i = 0; i < g->n_initializer; i++) {
    const Onnx__TensorProto *t = g->initializer[i];
    const char *name = str(t->name);
    if (!*name)
      return fail(im, INVALID, "initializer %zu has no name", i);
    if (onnx_names_find(&im->names, name) != UINT32_MAX)
      return fail(im, INVALID, "two initializers are named '%.*s'", Q, name);
    onnx_value v = {.name = name};
    DMLC_RETURN_IF_ERROR(onnx_add_constant(im, t, NULL, &v.constant));
    DMLC_RETURN_IF_ERROR(add_value(im, &v));
  }
  im->input_values = calloc(g->n_input + 1, sizeof *im->input_values);
  im->ir_names = calloc(g->n_input + g->n_output + 1, sizeof *im->ir_names);
  const dmlc_onnx_shape **by_input = calloc(g->n_input + 1, sizeof *by_input);
  if (!im->input_values || !im->ir_names || !by_input) {
    free(by_input);
    return fail(im, DMLC_ERROR_OUT_OF_MEMORY, "out of memory");
  }
  dmlc_status st = bind_shapes(im, options, by_input);
  uint32_t next_suffix = 1;
  onnx_name_table seen = {0};
  for (size_t i = 0; st == DMLC_OK && i < g->n_input; i++) {
    const char *name = str(g->input[i]->name);
    if (!*name)
      st = fail(im, INVALID, "input %zu has no name", i);
    else if (onnx_names_find(&seen, name) != UINT32_MAX)
      st = fail(im, INVALID, "two graph inputs are named '%.*s'", Q, name);
    else if (!onnx_names_put(&seen, name, (uint32_t)i))
      st = fail(im, DMLC_ERROR_OUT_OF_MEMORY, "out of memory");
    else if (!is_initializer(im, name))
      st = add_input(im, i, by_input[i], &next_suffix);
  }
  onnx_names_free(&seen);
  free(by_input);
  return st;
}

/* ---- nodes ---- */

static dmlc_status map_node(onnx_import *im, uint32_t index) {
  const Onnx__NodeProto *node = im->graph->node[index];
  im->node = node;
  im->node_index = index;
  im->op_version = 0;
  if (!node->op_type || !*node->op_type)
    return onnx_node_fail(im, INVALID, "the node has no op_type");
  if (!is_default_domain(node->domain))
    return onnx_node_fail(im, UNSUPPORTED,
                          "dmlc maps only ops of ONNX's default domain ('' or 'ai.onnx')");
  const onnx_op *op = onnx_op_find(node->op_type);
  if (!op) {
    char ops[256];
    onnx_op_list(ops, sizeof ops);
    return onnx_node_fail(im, UNSUPPORTED, "dmlc does not map %.*s (it maps %s)", Q, node->op_type,
                          ops);
  }
  for (size_t i = 0; op->versions[i] && op->versions[i] <= im->opset; i++)
    im->op_version = op->versions[i];
  if (im->op_version == 0)
    return onnx_node_fail(im, UNSUPPORTED, "%s is not in opset %" PRId64, op->name, im->opset);
  return op->map(im);
}

static dmlc_status map_nodes(onnx_import *im) {
  const Onnx__GraphProto *g = im->graph;
  if (g->n_node >= UINT32_MAX)
    return fail(im, UNSUPPORTED, "the graph has %zu nodes", g->n_node);
  for (uint32_t i = 0; i < g->n_node; i++)
    for (size_t k = 0; k < g->node[i]->n_output; k++)
      if (g->node[i]->output[k] && *g->node[i]->output[k] &&
          !onnx_names_put(&im->producers, g->node[i]->output[k], i))
        return fail(im, DMLC_ERROR_OUT_OF_MEMORY, "out of memory");
  for (uint32_t i = 0; i < g->n_node; i++)
    DMLC_RETURN_IF_ERROR(map_node(im, i));
  return DMLC_OK;
}

/* ---- graph outputs ---- */

/* The output's declared type and shape, where the model declares them,
 * must be what the graph computes. */
static dmlc_status check_declared_output(onnx_import *im, const Onnx__ValueInfoProto *vi,
                                         const onnx_value *v) {
  const char *name = vi->name;
  if (!vi->type)
    return DMLC_OK;
  dmlc_dtype dtype;
  DMLC_RETURN_IF_ERROR(value_info_dtype(im, vi, "output", &dtype));
  if (dtype != v->dtype)
    return fail(
        im, INVALID, "output '%.*s' is declared %s, but the graph computes %s", Q, name,
        dmlc_onnx_data_type_name(vi->type->tensor_type->elem_type),
        dmlc_onnx_data_type_name(dmlc_onnx_data_type_from_dml(dmlc_dtype_get(v->dtype)->dml)));
  const Onnx__TensorShapeProto *shape = declared_shape(vi);
  if (!shape)
    return DMLC_OK;
  if (shape->n_dim != v->rank)
    return fail(im, INVALID,
                "output '%.*s' is declared with rank %zu, but the graph computes rank "
                "%u",
                Q, name, shape->n_dim, v->rank);
  for (uint32_t d = 0; d < v->rank; d++) {
    const Onnx__TensorShapeProto__Dimension *dim = shape->dim[d];
    uint64_t want = 0;
    if (dim->value_case == ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE)
      want = dim->dim_value < 0 ? UINT64_MAX : (uint64_t)dim->dim_value;
    else if (dim_param(shape, d) && find_dim_param(im, dim_param(shape, d)) != UINT32_MAX)
      want = im->dim_values[find_dim_param(im, dim_param(shape, d))];
    else
      continue;
    if (want != v->dims[d])
      return fail(im, INVALID,
                  "output '%.*s': dim %u is declared %" PRId64 ", but the graph "
                  "computes %u",
                  Q, name, d, (int64_t)want, v->dims[d]);
  }
  return DMLC_OK;
}

static dmlc_status add_outputs(onnx_import *im) {
  const Onnx__GraphProto *g = im->graph;
  if (g->n_output == 0)
    return fail(im, INVALID, "the graph has no outputs");
  im->output_values = calloc(g->n_output, sizeof *im->output_values);
  if (!im->output_values)
    return fail(im, DMLC_ERROR_OUT_OF_MEMORY, "out of memory");
  uint32_t next_suffix = 1;
  for (size_t i = 0; i < g->n_output; i++) {
    const Onnx__ValueInfoProto *vi = g->output[i];
    const char *name = str(vi->name);
    if (!*name)
      return fail(im, INVALID, "output %zu has no name", i);
    const uint32_t index = onnx_names_find(&im->names, name);
    if (index == UINT32_MAX)
      return fail(im, INVALID,
                  "output '%.*s' is defined nowhere: no graph input or node output "
                  "has that name",
                  Q, name);
    const onnx_value *v = &im->values[index];
    if (v->constant != ONNX_NOT_CONSTANT)
      return fail(im, UNSUPPORTED,
                  "output '%.*s' is a constant (an initializer or a Constant's "
                  "output); dmlc's graphs compute their outputs",
                  Q, name);
    DMLC_RETURN_IF_ERROR(check_declared_output(im, vi, v));
    const size_t k = g->n_input + i;
    DMLC_RETURN_IF_ERROR(
        make_ir_name(im, name, "output", &im->ir_output_names, im->ir_names, k, &next_suffix));
    DMLC_RETURN_IF_ERROR(dmlc_ir_add_output(im->ir, im->ir_names[k], v->ir, NULL, im->diag));
    im->output_values[i] = index;
  }
  return DMLC_OK;
}

/* ---- the signature ---- */

static void describe_io(const onnx_value *v, const char *ir_name, char **strings,
                        dmlc_onnx_io *io) {
  const size_t onnx_len = strlen(v->name) + 1, ir_len = strlen(ir_name) + 1;
  memcpy(*strings, v->name, onnx_len);
  io->onnx_name = *strings;
  memcpy(*strings + onnx_len, ir_name, ir_len);
  io->name = *strings + onnx_len;
  *strings += onnx_len + ir_len;
  io->data_type = dmlc_dtype_get(v->dtype)->dml;
  io->rank = v->rank;
  for (uint32_t d = 0; d < v->rank; d++)
    io->dims[d] = v->dims[d];
}

static dmlc_status make_signature(onnx_import *im, dmlc_onnx_signature **out) {
  const dmlc_ir_graph *ir = im->ir;
  size_t strings = 0;
  for (uint32_t i = 0; i < ir->num_inputs; i++)
    strings += strlen(im->values[im->input_values[i]].name) + strlen(ir->inputs[i].name) + 2;
  for (uint32_t i = 0; i < ir->num_outputs; i++)
    strings += strlen(im->values[im->output_values[i]].name) + strlen(ir->outputs[i].name) + 2;
  const size_t ios = (size_t)ir->num_inputs + ir->num_outputs;
  dmlc_onnx_signature *sig = calloc(1, sizeof *sig + ios * sizeof(dmlc_onnx_io) + strings);
  if (!sig)
    return fail(im, DMLC_ERROR_OUT_OF_MEMORY, "out of memory");
  dmlc_onnx_io *io = (dmlc_onnx_io *)(sig + 1);
  char *text = (char *)(io + ios);
  sig->ir_version = im->model->has_ir_version ? im->model->ir_version : 0;
  sig->opset = im->opset;
  sig->input_count = ir->num_inputs;
  sig->output_count = ir->num_outputs;
  sig->inputs = io;
  sig->outputs = io + ir->num_inputs;
  for (uint32_t i = 0; i < ir->num_inputs; i++)
    describe_io(&im->values[im->input_values[i]], ir->inputs[i].name, &text, io++);
  for (uint32_t i = 0; i < ir->num_outputs; i++) {
    onnx_value v = im->values[im->output_values[i]];
    v.name = im->graph->output[i]->name; /* an alias of another value keeps its own name */
    describe_io(&v, ir->outputs[i].name, &text, io++);
  }
  *out = sig;
  return DMLC_OK;
}

/* ---- the import ---- */

static dmlc_status import_graph(onnx_import *im, const dmlc_onnx_options *options) {
  DMLC_RETURN_IF_ERROR(find_opset(im));
  im->graph = im->model->graph;
  if (!im->graph)
    return fail(im, INVALID, "the model has no graph");
  char name[DMLC_NAME_MAX];
  onnx_valid_name(im->graph->name, "main", true, NULL, NULL, NULL, name);
  im->ir = dmlc_ir_graph_create(name);
  if (!im->ir)
    return fail(im, DMLC_ERROR_OUT_OF_MEMORY, "out of memory");
  DMLC_RETURN_IF_ERROR(add_inputs(im, options));
  DMLC_RETURN_IF_ERROR(map_nodes(im));
  /* Not verified here, as dmlc_ir_parse leaves its graphs (compiling
   * verifies); the tests verify every graph they import. */
  return add_outputs(im);
}

static void import_free(onnx_import *im) {
  for (uint32_t i = 0; i < im->num_constants; i++)
    free(im->constants[i].tensor);
  free(im->constants);
  free(im->values);
  free(im->dim_values);
  free(im->input_values);
  free(im->output_values);
  free(im->ir_names);
  onnx_names_free(&im->ir_input_names);
  onnx_names_free(&im->ir_output_names);
  onnx_names_free(&im->names);
  onnx_names_free(&im->producers);
  onnx_names_free(&im->dim_params);
}

dmlc_status dmlc_onnx_import(const void *bytes, size_t size, const char *filename,
                             const dmlc_onnx_options *options, dmlc_ir_graph **out_graph,
                             dmlc_onnx_signature **out_signature, dmlc_diag *diag) {
  if (out_graph)
    *out_graph = NULL;
  if (out_signature)
    *out_signature = NULL;
  ProtobufCMessage *msg;
  DMLC_RETURN_IF_ERROR(
      dmlc_onnx_unpack(&onnx__model_proto__descriptor, bytes, size, filename, &msg, diag));
  onnx_import im = {.filename = filename, .diag = diag, .model = (const Onnx__ModelProto *)msg};
  dmlc_status st = import_graph(&im, options);
  if (st == DMLC_OK && out_signature)
    st = make_signature(&im, out_signature);
  if (st == DMLC_OK && out_graph) {
    *out_graph = im.ir;
    im.ir = NULL;
  }
  dmlc_ir_graph_destroy(im.ir);
  import_free(&im);
  protobuf_c_message_free_unpacked(msg, NULL);
  return st;
}
