/* The descriptor frontend: random DML_OPERATOR_DESCs (operator types known
 * and unknown, data types, ranks 0 to 10, sizes and strides from small to
 * 2^32-1, axes in and out of range, buffer sizes and alignments, NULL
 * pointers) through dmlc_operator_compile and through a graph of two
 * operators (the second consuming the first's output). Whatever validates
 * runs on the reference device and the CPU, compared byte for byte. */
#include <stdlib.h>
#include <string.h>

#include "fuzz_common.h"

typedef struct tensor_storage {
  DML_TENSOR_DESC desc;
  DML_BUFFER_TENSOR_DESC buffer;
  UINT sizes[10], strides[10];
} tensor_storage;

typedef struct op_storage {
  DML_OPERATOR_DESC desc;
  union {
    DML_ARGMAX_OPERATOR_DESC argmax; /* ARGMIN has the same layout */
    DML_ACTIVATION_HARDMAX_OPERATOR_DESC hardmax;
    DML_ACTIVATION_HARDMAX1_OPERATOR_DESC hardmax1;
    DML_REDUCE_OPERATOR_DESC reduce;
  } u;
  tensor_storage in, out;
  UINT axes[10];
} op_storage;

static UINT pick_dim(fuzz_reader *r) {
  const uint8_t b = fuzz_u8(r);
  switch (b >> 5) {
  case 0:
    return 1;
  case 1:
    return 0xFFFFFFFFu >> (b & 31); /* huge */
  case 2:
    return fuzz_u32(r);
  default:
    return 1 + (b & 7);
  }
}

static uint64_t packed_bytes(const tensor_storage *t) {
  uint64_t n = 1;
  for (UINT i = 0; i < t->buffer.DimensionCount && i < 10; i++) {
    if (t->sizes[i] && n > UINT64_MAX / t->sizes[i])
      return UINT64_MAX;
    n *= t->sizes[i];
  }
  const uint64_t elem = dmlc_data_type_size(t->buffer.DataType);
  if (elem && n > UINT64_MAX / elem - 4)
    return UINT64_MAX;
  return (n * (elem ? elem : 4) + 3) & ~(uint64_t)3;
}

/* A tensor: mostly plausible (packed strides, the exact size), with each
 * field sometimes replaced by an arbitrary value. like, when given, lends
 * its sizes (an output shaped after its input). */
static void make_tensor(fuzz_reader *r, tensor_storage *t, const tensor_storage *like,
                        const UINT *axes, UINT axis_count, int keep_reduced) {
  memset(t, 0, sizeof *t);
  const uint8_t flags = fuzz_u8(r);
  t->desc.Type = (flags & 0x80) ? (DML_TENSOR_TYPE)fuzz_u8(r) : DML_TENSOR_TYPE_BUFFER;
  t->desc.Desc = (flags & 0x40) && (fuzz_u8(r) & 1) ? NULL : &t->buffer;
  const uint8_t type = fuzz_u8(r);
  t->buffer.DataType = (DML_TENSOR_DATA_TYPE)(type < 240 ? 1 + type % 11 : type);
  t->buffer.Flags = (flags & 0x20) ? (DML_TENSOR_FLAGS)fuzz_u8(r) : DML_TENSOR_FLAG_NONE;
  const uint8_t rank = fuzz_u8(r);
  if (like) {
    t->buffer.DimensionCount = like->buffer.DimensionCount;
    memcpy(t->sizes, like->sizes, sizeof t->sizes);
    for (UINT i = 0; !keep_reduced && i < axis_count; i++)
      if (axes[i] < 10)
        t->sizes[axes[i]] = 1;
  } else {
    t->buffer.DimensionCount = rank < 250 ? 1 + rank % 5 : rank % 11;
  }
  for (UINT i = 0; i < t->buffer.DimensionCount && !like; i++)
    t->sizes[i] = pick_dim(r);
  if (flags & 0x10)
    t->sizes[fuzz_u8(r) % 10] = pick_dim(r);
  t->buffer.Sizes = (flags & 0x08) && (fuzz_u8(r) & 1) ? NULL : t->sizes;
  if (flags & 0x04) {
    for (UINT i = 0; i < 10; i++) {
      const uint8_t s = fuzz_u8(r);
      t->strides[i] = s < 200 ? s % 24 : s < 250 ? 0 : fuzz_u32(r);
    }
    t->buffer.Strides = t->strides;
  }
  const uint64_t packed = packed_bytes(t);
  uint64_t total = packed;
  if (t->buffer.Strides) {
    /* Strided: the size the strides reach, rounded up to 4. */
    uint64_t last = 0;
    for (UINT i = 0; i < t->buffer.DimensionCount && i < 10; i++)
      last += (uint64_t)(t->sizes[i] ? t->sizes[i] - 1 : 0) * t->strides[i];
    total = ((last + 1) * 8 + 3) & ~(uint64_t)3;
  }
  const uint8_t size_mode = fuzz_u8(r);
  t->buffer.TotalTensorSizeInBytes = size_mode < 200   ? total
                                     : size_mode < 220 ? total - (size_mode & 7)
                                     : size_mode < 240 ? total + (size_mode & 15)
                                                       : fuzz_u64(r);
  const uint8_t align = fuzz_u8(r);
  t->buffer.GuaranteedBaseOffsetAlignment = align < 200   ? 0
                                            : align < 250 ? 1u << (align % 13)
                                                          : align;
}

static const DML_OPERATOR_TYPE op_types[] = {DML_OPERATOR_ARGMAX,
                                             DML_OPERATOR_ARGMIN,
                                             DML_OPERATOR_ACTIVATION_HARDMAX1,
                                             DML_OPERATOR_ACTIVATION_HARDMAX,
                                             DML_OPERATOR_REDUCE,
                                             DML_OPERATOR_INVALID,
                                             DML_OPERATOR_ELEMENT_WISE_ADD,
                                             DML_OPERATOR_ACTIVATION_SOFTMAX1};

static void make_operator(fuzz_reader *r, op_storage *op, const tensor_storage *input_like) {
  memset(op, 0, sizeof *op);
  const uint8_t which = fuzz_u8(r);
  op->desc.Type = which < 248   ? op_types[which % 5]
                  : which < 252 ? op_types[5 + which % 3]
                                : (DML_OPERATOR_TYPE)fuzz_u32(r);
  const uint8_t axis_count = fuzz_u8(r);
  const UINT n_axes = axis_count < 250 ? axis_count % 4 : axis_count % 11;
  for (UINT i = 0; i < 10; i++) {
    const uint8_t a = fuzz_u8(r);
    op->axes[i] = a < 240 ? a % 5 : a < 250 ? a % 12 : fuzz_u32(r);
  }
  const uint8_t flags = fuzz_u8(r);
  make_tensor(r, &op->in, input_like, NULL, 0, 1);
  const int index_output = op->desc.Type == DML_OPERATOR_ARGMAX ||
                           op->desc.Type == DML_OPERATOR_ARGMIN ||
                           op->desc.Type == DML_OPERATOR_REDUCE;
  make_tensor(r, &op->out, &op->in, op->axes, n_axes, !index_output);
  if (index_output && !(flags & 0x10))
    op->out.buffer.DataType =
        (flags & 0x20) ? DML_TENSOR_DATA_TYPE_UINT64 : DML_TENSOR_DATA_TYPE_UINT32;
  if (index_output && !(flags & 0x10) && !op->out.buffer.Strides)
    op->out.buffer.TotalTensorSizeInBytes = packed_bytes(&op->out);
  if (!index_output) {
    op->out.buffer.DataType = op->in.buffer.DataType;
    if (!op->out.buffer.Strides)
      op->out.buffer.TotalTensorSizeInBytes = packed_bytes(&op->out);
  }
  const DML_TENSOR_DESC *in = (flags & 1) ? NULL : &op->in.desc;
  const DML_TENSOR_DESC *out = (flags & 2) ? NULL : &op->out.desc;
  const UINT *axes = (flags & 4) && n_axes ? NULL : op->axes;
  const DML_AXIS_DIRECTION dir =
      (flags & 8) ? (DML_AXIS_DIRECTION)fuzz_u8(r) : (DML_AXIS_DIRECTION)(flags >> 7);
  switch (op->desc.Type) {
  case DML_OPERATOR_ARGMAX:
  case DML_OPERATOR_ARGMIN:
    op->u.argmax = (DML_ARGMAX_OPERATOR_DESC){in, out, n_axes, axes, dir};
    break;
  case DML_OPERATOR_ACTIVATION_HARDMAX:
    op->u.hardmax = (DML_ACTIVATION_HARDMAX_OPERATOR_DESC){in, out};
    break;
  case DML_OPERATOR_ACTIVATION_HARDMAX1:
    op->u.hardmax1 = (DML_ACTIVATION_HARDMAX1_OPERATOR_DESC){in, out, n_axes, axes};
    break;
  case DML_OPERATOR_REDUCE: {
    const uint8_t f = fuzz_u8(r);
    op->u.reduce = (DML_REDUCE_OPERATOR_DESC){
        f < 200 ? (f & 1 ? DML_REDUCE_FUNCTION_ARGMAX : DML_REDUCE_FUNCTION_ARGMIN)
                : (DML_REDUCE_FUNCTION)f,
        in, out, n_axes, axes};
    break;
  }
  default:
    break;
  }
  op->desc.Desc = (flags & 0x40) && (fuzz_u8(r) & 1) ? NULL : &op->u;
}

static const DML_TENSOR_DESC *input_tensor(const op_storage *op) {
  if (!op->desc.Desc)
    return NULL;
  switch (op->desc.Type) {
  case DML_OPERATOR_ARGMAX:
  case DML_OPERATOR_ARGMIN:
    return op->u.argmax.InputTensor;
  case DML_OPERATOR_ACTIVATION_HARDMAX:
    return op->u.hardmax.InputTensor;
  case DML_OPERATOR_ACTIVATION_HARDMAX1:
    return op->u.hardmax1.InputTensor;
  case DML_OPERATOR_REDUCE:
    return op->u.reduce.InputTensor;
  default:
    return &op->in.desc;
  }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  dmlc_context *ctx = fuzz_context();
  fuzz_reader r = {data, size, 0};
  op_storage *a = malloc(sizeof *a), *b = malloc(sizeof *b);
  FUZZ_CHECK(a && b, "malloc");
  make_operator(&r, a, NULL);
  const uint64_t seed = fuzz_u64(&r);

  /* One operator. */
  dmlc_executable *exe = NULL;
  dmlc_status st = dmlc_operator_compile(ctx, &a->desc, DMLC_DEVICE_REFERENCE, &exe);
  fuzz_check_status(ctx, st, "dmlc_operator_compile");
  FUZZ_CHECK((st == DMLC_OK) == (exe != NULL), "status and executable disagree");
  dmlc_executable_destroy(exe);

  /* A graph: input -> a -> b, both results outputs. */
  dmlc_graph *g = NULL;
  st = dmlc_graph_create(ctx, "fuzz", &g);
  FUZZ_CHECK(st == DMLC_OK, "graph_create");
  dmlc_value x = 0, ya[2] = {0}, yb[2] = {0};
  int ok = 1;
  st = dmlc_graph_add_input(g, "x", input_tensor(a), &x);
  fuzz_check_status(ctx, st, "dmlc_graph_add_input");
  ok = st == DMLC_OK;
  if (ok) {
    st = dmlc_graph_add_operator(g, &a->desc, &x, 1, ya, 1);
    fuzz_check_status(ctx, st, "dmlc_graph_add_operator");
    ok = st == DMLC_OK;
  }
  if (ok) {
    st = dmlc_graph_add_output(g, "a", ya[0]);
    fuzz_check_status(ctx, st, "dmlc_graph_add_output");
    ok = st == DMLC_OK;
  }
  if (ok && (fuzz_u8(&r) & 1)) {
    make_operator(&r, b, &a->out);
    st = dmlc_graph_add_operator(g, &b->desc, ya, 1, yb, 1);
    fuzz_check_status(ctx, st, "dmlc_graph_add_operator(second)");
    if (st == DMLC_OK) {
      st = dmlc_graph_add_output(g, "b", yb[0]);
      fuzz_check_status(ctx, st, "dmlc_graph_add_output(second)");
    }
  }
  if (ok) {
    st = dmlc_graph_verify(g);
    FUZZ_CHECK(st == DMLC_OK, "a graph the frontend built does not verify: %s",
               dmlc_context_error(ctx));
    fuzz_compare_devices(ctx, g, seed, 1u << 20);
  }
  dmlc_graph_destroy(g);
  free(a);
  free(b);
  return 0;
}
