/* The DirectML frontend, through the public API: every descriptor rule of
 * spec/OPERATORS.md (status and message), valid descriptors of every
 * operator and the layouts they give, index-overflow boundaries, graphs with
 * intermediate values and their binding rules, and dmlc_execute's buffer
 * checks. */
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "dmlc/dmlc.h"
#include "testutil.h"

/* ---- fixtures ---- */

/* A DML_TENSOR_DESC with its arrays. TotalTensorSizeInBytes is recomputed
 * before each compile unless manual_total is set. */
typedef struct test_tensor {
  UINT sizes[DMLC_MAX_RANK + 1];
  UINT strides[DMLC_MAX_RANK + 1];
  DML_BUFFER_TENSOR_DESC buffer;
  DML_TENSOR_DESC desc;
  bool manual_total;
} test_tensor;

static dmlc_context *ctx;
static test_tensor in_t, out_t;
static UINT axes[DMLC_MAX_RANK + 1];
static DML_ARGMAX_OPERATOR_DESC argmax_desc;
static DML_ARGMIN_OPERATOR_DESC argmin_desc;
static DML_ACTIVATION_HARDMAX1_OPERATOR_DESC hardmax1_desc;
static DML_ACTIVATION_HARDMAX_OPERATOR_DESC hardmax_desc;
static DML_REDUCE_OPERATOR_DESC reduce_desc;
static DML_OPERATOR_DESC op;

static uint64_t expected_total(const test_tensor *t) {
  const DML_BUFFER_TENSOR_DESC *b = &t->buffer;
  uint64_t last = 0, stride = 1;
  for (uint32_t i = b->DimensionCount; i-- > 0;) {
    const uint64_t s = b->Strides ? b->Strides[i] : stride;
    last += (uint64_t)(b->Sizes[i] - 1) * s;
    stride *= b->Sizes[i];
  }
  return ((last + 1) * dmlc_data_type_size(b->DataType) + 3) & ~UINT64_C(3);
}

static void tensor_set(test_tensor *t, DML_TENSOR_DATA_TYPE type, uint32_t rank, const UINT *sizes,
                       const UINT *strides) {
  memset(t, 0, sizeof *t);
  memcpy(t->sizes, sizes, rank * sizeof *sizes);
  if (strides)
    memcpy(t->strides, strides, rank * sizeof *strides);
  t->buffer.DataType = type;
  t->buffer.Flags = DML_TENSOR_FLAG_NONE;
  t->buffer.DimensionCount = rank;
  t->buffer.Sizes = t->sizes;
  t->buffer.Strides = strides ? t->strides : NULL;
  t->desc.Type = DML_TENSOR_TYPE_BUFFER;
  t->desc.Desc = &t->buffer;
}

static void tensor_refresh(test_tensor *t) {
  if (!t->manual_total && t->buffer.DimensionCount >= 1 &&
      t->buffer.DimensionCount <= DMLC_MAX_RANK)
    t->buffer.TotalTensorSizeInBytes = expected_total(t);
}

static void set_total(test_tensor *t, uint64_t total) {
  t->buffer.TotalTensorSizeInBytes = total;
  t->manual_total = true;
}

/* ARGMAX or ARGMIN (or REDUCE with them) of in_t into out_t over axes. */
static void set_index_op(DML_OPERATOR_TYPE type, uint32_t axis_count, const UINT *axis_list,
                         DML_AXIS_DIRECTION direction) {
  memcpy(axes, axis_list, axis_count * sizeof *axis_list);
  op.Type = type;
  if (type == DML_OPERATOR_ARGMIN) {
    argmin_desc = (DML_ARGMIN_OPERATOR_DESC){&in_t.desc, &out_t.desc, axis_count, axes, direction};
    op.Desc = &argmin_desc;
  } else if (type == DML_OPERATOR_ARGMAX) {
    argmax_desc = (DML_ARGMAX_OPERATOR_DESC){&in_t.desc, &out_t.desc, axis_count, axes, direction};
    op.Desc = &argmax_desc;
  } else {
    reduce_desc = (DML_REDUCE_OPERATOR_DESC){DML_REDUCE_FUNCTION_ARGMAX, &in_t.desc, &out_t.desc,
                                             axis_count, axes};
    op.Desc = &reduce_desc;
  }
}

static void set_hardmax1(uint32_t axis_count, const UINT *axis_list) {
  memcpy(axes, axis_list, axis_count * sizeof *axis_list);
  hardmax1_desc =
      (DML_ACTIVATION_HARDMAX1_OPERATOR_DESC){&in_t.desc, &out_t.desc, axis_count, axes};
  op.Type = DML_OPERATOR_ACTIVATION_HARDMAX1;
  op.Desc = &hardmax1_desc;
}

static void set_hardmax(void) {
  hardmax_desc = (DML_ACTIVATION_HARDMAX_OPERATOR_DESC){&in_t.desc, &out_t.desc};
  op.Type = DML_OPERATOR_ACTIVATION_HARDMAX;
  op.Desc = &hardmax_desc;
}

/* The standard argmax: f32[2,3,4] over axis 1 into u32[2,1,4]. */
static void set_standard_argmax(void) {
  tensor_set(&in_t, DML_TENSOR_DATA_TYPE_FLOAT32, 3, (const UINT[]){2, 3, 4}, NULL);
  tensor_set(&out_t, DML_TENSOR_DATA_TYPE_UINT32, 3, (const UINT[]){2, 1, 4}, NULL);
  set_index_op(DML_OPERATOR_ARGMAX, 1, (const UINT[]){1}, DML_AXIS_DIRECTION_INCREASING);
}

/* The standard hardmax: f32[2,4,5] over axes {2} into f32[2,4,5]. */
static void set_standard_hardmax1(void) {
  tensor_set(&in_t, DML_TENSOR_DATA_TYPE_FLOAT32, 3, (const UINT[]){2, 4, 5}, NULL);
  tensor_set(&out_t, DML_TENSOR_DATA_TYPE_FLOAT32, 3, (const UINT[]){2, 4, 5}, NULL);
  set_hardmax1(1, (const UINT[]){2});
}

static void setup(void) {
  ck_assert_int_eq(dmlc_context_create(&ctx), DMLC_OK);
  memset(&op, 0, sizeof op);
  set_standard_argmax();
}

static void teardown(void) {
  dmlc_context_destroy(ctx);
  ctx = NULL;
}

static dmlc_status compile_op(dmlc_executable **exe) {
  tensor_refresh(&in_t);
  tensor_refresh(&out_t);
  return dmlc_operator_compile(ctx, &op, DMLC_DEVICE_REFERENCE, exe);
}

#define ck_assert_message_has(substring)                                                           \
  ck_assert_msg(strstr(dmlc_context_error(ctx), (substring)) != NULL,                              \
                "message \"%s\" lacks \"%s\"", dmlc_context_error(ctx), (substring))

/* Compiling the current op fails with status and a message holding
 * substring. */
#define expect_error(status, substring)                                                            \
  do {                                                                                             \
    dmlc_executable *exe_ = (dmlc_executable *)&exe_;                                              \
    ck_assert_int_eq(compile_op(&exe_), (status));                                                 \
    ck_assert_ptr_null(exe_);                                                                      \
    ck_assert_message_has(substring);                                                              \
  } while (0)

static dmlc_executable *expect_compiles(void) {
  dmlc_executable *exe = NULL;
  const dmlc_status status = compile_op(&exe);
  ck_assert_msg(status == DMLC_OK, "compile failed (%d): %s", status, dmlc_context_error(ctx));
  ck_assert_ptr_nonnull(exe);
  return exe;
}

static void expect_ok(void) { dmlc_executable_destroy(expect_compiles()); }

static void check_info(const dmlc_tensor_info *info, const char *name, DML_TENSOR_DATA_TYPE type,
                       uint32_t rank, const UINT *sizes, const uint64_t *strides, uint64_t total,
                       uint32_t alignment) {
  ck_assert_str_eq(info->name, name);
  ck_assert_int_eq(info->data_type, type);
  ck_assert_uint_eq(info->dimension_count, rank);
  for (uint32_t i = 0; i < rank; i++) {
    ck_assert_uint_eq(info->sizes[i], sizes[i]);
    ck_assert_uint_eq(info->strides[i], strides[i]);
  }
  ck_assert_uint_eq(info->total_size_bytes, total);
  ck_assert_uint_eq(info->alignment, alignment);
}

static void check_io(dmlc_executable *exe, size_t index, bool output, const char *name,
                     DML_TENSOR_DATA_TYPE type, uint32_t rank, const UINT *sizes,
                     const uint64_t *strides, uint64_t total) {
  dmlc_tensor_info info;
  const dmlc_status status = output ? dmlc_executable_output_info(exe, index, &info)
                                    : dmlc_executable_input_info(exe, index, &info);
  ck_assert_int_eq(status, DMLC_OK);
  check_info(&info, name, type, rank, sizes, strides, total, 0);
}

/* ---- null pointers and unknown operators ---- */

START_TEST(test_null_operator_desc) {
  dmlc_executable *exe = NULL;
  ck_assert_int_eq(dmlc_operator_compile(ctx, NULL, DMLC_DEVICE_REFERENCE, &exe),
                   DMLC_ERROR_INVALID_ARGUMENT);
  ck_assert_ptr_null(exe);
  ck_assert_message_has("operator descriptor is NULL");
}
END_TEST

START_TEST(test_null_desc_pointer) {
  op.Desc = NULL;
  expect_error(DMLC_ERROR_INVALID_ARGUMENT, "Desc of operator type 138 (ARGMAX) is NULL");
}
END_TEST

START_TEST(test_null_input_tensor) {
  argmax_desc.InputTensor = NULL;
  expect_error(DMLC_ERROR_INVALID_ARGUMENT, "InputTensor is NULL");
}
END_TEST

START_TEST(test_null_output_tensor) {
  argmax_desc.OutputTensor = NULL;
  expect_error(DMLC_ERROR_INVALID_ARGUMENT, "OutputTensor is NULL");
}
END_TEST

START_TEST(test_null_buffer_desc) {
  in_t.desc.Desc = NULL;
  expect_error(DMLC_ERROR_INVALID_ARGUMENT, "InputTensor.Desc is NULL");
}
END_TEST

START_TEST(test_null_axes) {
  argmax_desc.Axes = NULL;
  expect_error(DMLC_ERROR_INVALID_ARGUMENT, "Axes is NULL but AxisCount is 1");
}
END_TEST

START_TEST(test_null_sizes) {
  in_t.buffer.Sizes = NULL;
  in_t.manual_total = true;
  expect_error(DMLC_ERROR_INVALID_ARGUMENT, "InputTensor.Sizes is NULL");
}
END_TEST

START_TEST(test_unsupported_operator) {
  op.Type = DML_OPERATOR_ACTIVATION_SOFTMAX;
  expect_error(DMLC_ERROR_UNSUPPORTED, "operator type 48 (ACTIVATION_SOFTMAX) is not supported");
  op.Type = (DML_OPERATOR_TYPE)9999;
  expect_error(DMLC_ERROR_UNSUPPORTED, "operator type 9999 is not supported");
}
END_TEST

START_TEST(test_invalid_operator_type) {
  op.Type = DML_OPERATOR_INVALID;
  expect_error(DMLC_ERROR_INVALID_ARGUMENT, "operator type 0 (DML_OPERATOR_INVALID)");
}
END_TEST

START_TEST(test_reduce_unsupported_function) {
  set_index_op(DML_OPERATOR_REDUCE, 1, (const UINT[]){1}, DML_AXIS_DIRECTION_INCREASING);
  reduce_desc.Function = DML_REDUCE_FUNCTION_SUM;
  expect_error(DMLC_ERROR_UNSUPPORTED, "Function is 10 (SUM); not supported");
  reduce_desc.Function = DML_REDUCE_FUNCTION_MAX;
  expect_error(DMLC_ERROR_UNSUPPORTED, "Function is 7 (MAX); not supported");
}
END_TEST

START_TEST(test_reduce_unknown_function) {
  set_index_op(DML_OPERATOR_REDUCE, 1, (const UINT[]){1}, DML_AXIS_DIRECTION_INCREASING);
  reduce_desc.Function = (DML_REDUCE_FUNCTION)99;
  expect_error(DMLC_ERROR_INVALID_ARGUMENT, "Function is 99; not a DML_REDUCE_FUNCTION");
}
END_TEST

/* ---- tensor rules ---- */

START_TEST(test_tensor_type_not_buffer) {
  in_t.desc.Type = DML_TENSOR_TYPE_INVALID;
  expect_error(DMLC_ERROR_INVALID_ARGUMENT,
               "InputTensor.Type is 0; must be DML_TENSOR_TYPE_BUFFER");
}
END_TEST

START_TEST(test_data_type_uint4) {
  in_t.buffer.DataType = DML_TENSOR_DATA_TYPE_UINT4;
  expect_error(DMLC_ERROR_INVALID_ARGUMENT, "InputTensor.DataType is 12 (UINT4); not supported");
}
END_TEST

START_TEST(test_data_type_unknown) {
  out_t.buffer.DataType = DML_TENSOR_DATA_TYPE_UNKNOWN;
  expect_error(DMLC_ERROR_INVALID_ARGUMENT, "OutputTensor.DataType is 0 (UNKNOWN); not supported");
  out_t.buffer.DataType = (DML_TENSOR_DATA_TYPE)77;
  expect_error(DMLC_ERROR_INVALID_ARGUMENT, "OutputTensor.DataType is 77; not a");
}
END_TEST

START_TEST(test_flags) {
  in_t.buffer.Flags = DML_TENSOR_FLAG_OWNED_BY_DML;
  out_t.buffer.Flags = DML_TENSOR_FLAG_OWNED_BY_DML;
  expect_ok();
  in_t.buffer.Flags = (DML_TENSOR_FLAGS)0x2;
  expect_error(DMLC_ERROR_INVALID_ARGUMENT, "InputTensor.Flags is 0x2; must be");
  in_t.buffer.Flags = (DML_TENSOR_FLAGS)0x3;
  expect_error(DMLC_ERROR_INVALID_ARGUMENT, "InputTensor.Flags is 0x3");
}
END_TEST

START_TEST(test_rank_nine) {
  tensor_set(&in_t, DML_TENSOR_DATA_TYPE_FLOAT32, 9, (const UINT[]){1, 1, 1, 1, 1, 1, 1, 1, 2},
             NULL);
  set_total(&in_t, 8);
  expect_error(DMLC_ERROR_INVALID_ARGUMENT, "InputTensor.DimensionCount is 9; must be 1 to 8");
}
END_TEST

START_TEST(test_rank_zero) {
  out_t.buffer.DimensionCount = 0;
  set_total(&out_t, 4);
  expect_error(DMLC_ERROR_INVALID_ARGUMENT, "OutputTensor.DimensionCount is 0; must be 1 to 8");
}
END_TEST

START_TEST(test_size_zero) {
  in_t.sizes[0] = 0;
  set_total(&in_t, 96);
  expect_error(DMLC_ERROR_INVALID_ARGUMENT, "InputTensor.Sizes[0] is 0; sizes must be at least 1");
  in_t.sizes[0] = 2;
  out_t.sizes[2] = 0;
  set_total(&out_t, 32);
  expect_error(DMLC_ERROR_INVALID_ARGUMENT, "OutputTensor.Sizes[2] is 0; sizes must be");
}
END_TEST

START_TEST(test_too_many_elements) {
  tensor_set(&in_t, DML_TENSOR_DATA_TYPE_INT8, 3, (const UINT[]){65536, 65536, 2}, NULL);
  tensor_set(&out_t, DML_TENSOR_DATA_TYPE_UINT32, 3, (const UINT[]){65536, 1, 2}, NULL);
  expect_error(DMLC_ERROR_INVALID_ARGUMENT,
               "InputTensor has 8589934592 elements; at most 4294967295 are allowed");
}
END_TEST

START_TEST(test_elements_overflow_64_bits) {
  const UINT big = 4294967295u;
  tensor_set(&in_t, DML_TENSOR_DATA_TYPE_INT8, 3, (const UINT[]){big, big, big}, NULL);
  set_total(&in_t, UINT64_MAX);
  expect_error(DMLC_ERROR_INVALID_ARGUMENT, "InputTensor has more than 18446744073709551615");
}
END_TEST

START_TEST(test_max_elements_accepted) {
  /* 2^32-1 elements is the most allowed (compile only; nothing is allocated). */
  tensor_set(&in_t, DML_TENSOR_DATA_TYPE_UINT8, 2, (const UINT[]){65535, 65537}, NULL);
  tensor_set(&out_t, DML_TENSOR_DATA_TYPE_UINT32, 2, (const UINT[]){65535, 1}, NULL);
  set_index_op(DML_OPERATOR_ARGMAX, 1, (const UINT[]){1}, DML_AXIS_DIRECTION_INCREASING);
  expect_ok();
}
END_TEST

START_TEST(test_total_size_too_small) {
  tensor_set(&in_t, DML_TENSOR_DATA_TYPE_FLOAT32, 2, (const UINT[]){3, 3}, NULL);
  tensor_set(&out_t, DML_TENSOR_DATA_TYPE_UINT32, 2, (const UINT[]){1, 3}, NULL);
  set_index_op(DML_OPERATOR_ARGMAX, 1, (const UINT[]){0}, DML_AXIS_DIRECTION_INCREASING);
  set_total(&in_t, 30);
  expect_error(DMLC_ERROR_INVALID_ARGUMENT,
               "InputTensor.TotalTensorSizeInBytes is 30; must be at least 36");
  set_total(&in_t, 36);
  expect_ok();
}
END_TEST

START_TEST(test_total_size_with_strides) {
  /* (2*4 + 2*1 + 1) * 4 = 44 */
  tensor_set(&in_t, DML_TENSOR_DATA_TYPE_FLOAT32, 2, (const UINT[]){3, 3}, (const UINT[]){4, 1});
  tensor_set(&out_t, DML_TENSOR_DATA_TYPE_UINT32, 2, (const UINT[]){1, 3}, NULL);
  set_index_op(DML_OPERATOR_ARGMAX, 1, (const UINT[]){0}, DML_AXIS_DIRECTION_INCREASING);
  set_total(&in_t, 43);
  expect_error(DMLC_ERROR_INVALID_ARGUMENT,
               "InputTensor.TotalTensorSizeInBytes is 43; must be at least 44");
}
END_TEST

START_TEST(test_total_size_rounds_up_to_4) {
  /* 3 bytes of u8 need a 4-byte buffer. */
  tensor_set(&in_t, DML_TENSOR_DATA_TYPE_UINT8, 1, (const UINT[]){3}, NULL);
  tensor_set(&out_t, DML_TENSOR_DATA_TYPE_UINT32, 1, (const UINT[]){1}, NULL);
  set_index_op(DML_OPERATOR_ARGMAX, 1, (const UINT[]){0}, DML_AXIS_DIRECTION_INCREASING);
  set_total(&in_t, 3);
  expect_error(DMLC_ERROR_INVALID_ARGUMENT,
               "InputTensor.TotalTensorSizeInBytes is 3; must be at least 4");
  set_total(&out_t, 3);
  set_total(&in_t, 4);
  expect_error(DMLC_ERROR_INVALID_ARGUMENT,
               "OutputTensor.TotalTensorSizeInBytes is 3; must be at least 4");
}
END_TEST

START_TEST(test_alignment) {
  in_t.buffer.GuaranteedBaseOffsetAlignment = 3;
  expect_error(DMLC_ERROR_INVALID_ARGUMENT,
               "InputTensor.GuaranteedBaseOffsetAlignment is 3; must be 0 or a power of two no "
               "smaller than the element size (4)");
  in_t.buffer.GuaranteedBaseOffsetAlignment = 2;
  expect_error(DMLC_ERROR_INVALID_ARGUMENT, "GuaranteedBaseOffsetAlignment is 2; must be 0 or");
  in_t.buffer.GuaranteedBaseOffsetAlignment = 4;
  out_t.buffer.GuaranteedBaseOffsetAlignment = 16;
  dmlc_executable *exe = expect_compiles();
  dmlc_tensor_info info;
  ck_assert_int_eq(dmlc_executable_input_info(exe, 0, &info), DMLC_OK);
  ck_assert_uint_eq(info.alignment, 4);
  ck_assert_int_eq(dmlc_executable_output_info(exe, 0, &info), DMLC_OK);
  ck_assert_uint_eq(info.alignment, 16);
  dmlc_executable_destroy(exe);
}
END_TEST

START_TEST(test_output_zero_stride) {
  tensor_set(&out_t, DML_TENSOR_DATA_TYPE_UINT32, 3, (const UINT[]){2, 1, 4},
             (const UINT[]){0, 4, 1});
  expect_error(DMLC_ERROR_INVALID_ARGUMENT,
               "OutputTensor.Strides[0] is 0; outputs cannot broadcast");
}
END_TEST

START_TEST(test_output_overlapping_strides) {
  tensor_set(&out_t, DML_TENSOR_DATA_TYPE_UINT32, 3, (const UINT[]){2, 1, 4},
             (const UINT[]){2, 4, 1});
  expect_error(DMLC_ERROR_INVALID_ARGUMENT, "OutputTensor.Strides overlap: strides [2, 4, 1]");
}
END_TEST

START_TEST(test_input_broadcast_and_padding_accepted) {
  /* A zero stride broadcasts an input; padded strides on an output are fine. */
  tensor_set(&in_t, DML_TENSOR_DATA_TYPE_FLOAT32, 3, (const UINT[]){2, 3, 4},
             (const UINT[]){0, 4, 1});
  tensor_set(&out_t, DML_TENSOR_DATA_TYPE_UINT32, 3, (const UINT[]){2, 1, 4},
             (const UINT[]){8, 8, 1}); /* dim 1 has size 1: its stride addresses nothing */
  dmlc_executable *exe = expect_compiles();
  check_io(exe, 0, false, "input", DML_TENSOR_DATA_TYPE_FLOAT32, 3, (const UINT[]){2, 3, 4},
           (const uint64_t[]){0, 4, 1}, 48);
  check_io(exe, 0, true, "output", DML_TENSOR_DATA_TYPE_UINT32, 3, (const UINT[]){2, 1, 4},
           (const uint64_t[]){8, 8, 1}, 48);
  dmlc_executable_destroy(exe);
}
END_TEST

/* ---- argmax / argmin rules ---- */

START_TEST(test_axis_count_zero) {
  argmax_desc.AxisCount = 0;
  expect_error(DMLC_ERROR_INVALID_ARGUMENT, "AxisCount is 0; must be at least 1");
}
END_TEST

START_TEST(test_axis_count_above_rank) {
  set_index_op(DML_OPERATOR_ARGMAX, 4, (const UINT[]){0, 1, 2, 0}, DML_AXIS_DIRECTION_INCREASING);
  expect_error(DMLC_ERROR_INVALID_ARGUMENT,
               "AxisCount is 4; must be at most InputTensor.DimensionCount (3)");
}
END_TEST

START_TEST(test_axis_out_of_range) {
  set_index_op(DML_OPERATOR_ARGMAX, 2, (const UINT[]){1, 3}, DML_AXIS_DIRECTION_INCREASING);
  expect_error(DMLC_ERROR_INVALID_ARGUMENT,
               "Axes[1] is 3; must be less than InputTensor.DimensionCount (3)");
}
END_TEST

START_TEST(test_axis_repeated) {
  set_index_op(DML_OPERATOR_ARGMIN, 3, (const UINT[]){0, 1, 0}, DML_AXIS_DIRECTION_INCREASING);
  expect_error(DMLC_ERROR_INVALID_ARGUMENT, "Axes[2] is 0, which repeats Axes[0]");
}
END_TEST

START_TEST(test_axis_direction_invalid) {
  argmax_desc.AxisDirection = (DML_AXIS_DIRECTION)2;
  expect_error(DMLC_ERROR_INVALID_ARGUMENT, "AxisDirection is 2; must be");
}
END_TEST

START_TEST(test_argmax_input_float64) {
  in_t.buffer.DataType = DML_TENSOR_DATA_TYPE_FLOAT64;
  expect_error(DMLC_ERROR_INVALID_ARGUMENT,
               "InputTensor.DataType is FLOAT64; ARGMAX accepts FLOAT32, FLOAT16, INT32, INT16, "
               "INT8, UINT32, UINT16, UINT8, INT64, UINT64 (FLOAT64 is not among them: convert "
               "the data to FLOAT32, e.g. x.astype(np.float32) in NumPy)");
}
END_TEST

START_TEST(test_argmin_input_float64) {
  set_index_op(DML_OPERATOR_ARGMIN, 1, (const UINT[]){1}, DML_AXIS_DIRECTION_INCREASING);
  in_t.buffer.DataType = DML_TENSOR_DATA_TYPE_FLOAT64;
  expect_error(DMLC_ERROR_INVALID_ARGUMENT, "InputTensor.DataType is FLOAT64; ARGMIN accepts");
}
END_TEST

START_TEST(test_argmax_all_input_types) {
  static const DML_TENSOR_DATA_TYPE types[] = {
      DML_TENSOR_DATA_TYPE_FLOAT32, DML_TENSOR_DATA_TYPE_FLOAT16, DML_TENSOR_DATA_TYPE_INT32,
      DML_TENSOR_DATA_TYPE_INT16,   DML_TENSOR_DATA_TYPE_INT8,    DML_TENSOR_DATA_TYPE_UINT32,
      DML_TENSOR_DATA_TYPE_UINT16,  DML_TENSOR_DATA_TYPE_UINT8,   DML_TENSOR_DATA_TYPE_INT64,
      DML_TENSOR_DATA_TYPE_UINT64};
  for (size_t i = 0; i < sizeof types / sizeof types[0]; i++) {
    in_t.buffer.DataType = types[i];
    expect_ok();
  }
}
END_TEST

START_TEST(test_output_type_float) {
  out_t.buffer.DataType = DML_TENSOR_DATA_TYPE_FLOAT32;
  expect_error(DMLC_ERROR_INVALID_ARGUMENT,
               "OutputTensor.DataType is FLOAT32; must be INT32, INT64, UINT32 or UINT64");
  out_t.buffer.DataType = DML_TENSOR_DATA_TYPE_INT16;
  expect_error(DMLC_ERROR_INVALID_ARGUMENT, "OutputTensor.DataType is INT16; must be");
}
END_TEST

START_TEST(test_output_all_index_types) {
  static const DML_TENSOR_DATA_TYPE types[] = {
      DML_TENSOR_DATA_TYPE_INT32, DML_TENSOR_DATA_TYPE_INT64, DML_TENSOR_DATA_TYPE_UINT32,
      DML_TENSOR_DATA_TYPE_UINT64};
  for (size_t i = 0; i < sizeof types / sizeof types[0]; i++) {
    out_t.buffer.DataType = types[i];
    expect_ok();
  }
}
END_TEST

START_TEST(test_output_rank_mismatch) {
  tensor_set(&out_t, DML_TENSOR_DATA_TYPE_UINT32, 2, (const UINT[]){2, 4}, NULL);
  expect_error(DMLC_ERROR_INVALID_ARGUMENT,
               "OutputTensor.DimensionCount is 2; must equal InputTensor.DimensionCount (3)");
}
END_TEST

START_TEST(test_output_size_not_one_on_reduced_axis) {
  out_t.sizes[1] = 3;
  expect_error(DMLC_ERROR_INVALID_ARGUMENT,
               "OutputTensor.Sizes[1] is 3; must be 1 on reduced axis 1");
}
END_TEST

START_TEST(test_output_size_wrong_on_kept_axis) {
  out_t.sizes[2] = 5;
  expect_error(DMLC_ERROR_INVALID_ARGUMENT,
               "OutputTensor.Sizes[2] is 5; must equal InputTensor.Sizes[2] (4)");
}
END_TEST

/* ---- index overflow ---- */

START_TEST(test_index_int32_boundary_accepted) {
  /* 2^31 reduced elements: the largest index, 2^31-1, fits INT32. */
  tensor_set(&in_t, DML_TENSOR_DATA_TYPE_INT8, 2, (const UINT[]){65536, 32768}, NULL);
  tensor_set(&out_t, DML_TENSOR_DATA_TYPE_INT32, 2, (const UINT[]){1, 1}, NULL);
  set_index_op(DML_OPERATOR_ARGMAX, 2, (const UINT[]){0, 1}, DML_AXIS_DIRECTION_INCREASING);
  expect_ok();
}
END_TEST

START_TEST(test_index_int32_overflow_rejected) {
  /* 2^31+1 reduced elements: the largest index, 2^31, does not fit INT32. */
  tensor_set(&in_t, DML_TENSOR_DATA_TYPE_INT8, 1, (const UINT[]){2147483649u}, NULL);
  tensor_set(&out_t, DML_TENSOR_DATA_TYPE_INT32, 1, (const UINT[]){1}, NULL);
  set_index_op(DML_OPERATOR_ARGMIN, 1, (const UINT[]){0}, DML_AXIS_DIRECTION_INCREASING);
  expect_error(DMLC_ERROR_INVALID_ARGUMENT,
               "OutputTensor.DataType is INT32 but the largest index over the reduced axes is "
               "2147483648");
  out_t.buffer.DataType = DML_TENSOR_DATA_TYPE_UINT32;
  expect_ok();
  out_t.buffer.DataType = DML_TENSOR_DATA_TYPE_INT64;
  expect_ok();
}
END_TEST

START_TEST(test_index_overflow_counts_reduced_axes_only) {
  /* 2^31 * 2 elements: over axis 0 alone the largest index is 65535. */
  tensor_set(&in_t, DML_TENSOR_DATA_TYPE_INT8, 3, (const UINT[]){65536, 32768, 2}, NULL);
  tensor_set(&out_t, DML_TENSOR_DATA_TYPE_INT32, 3, (const UINT[]){1, 32768, 2}, NULL);
  set_index_op(DML_OPERATOR_ARGMAX, 1, (const UINT[]){0}, DML_AXIS_DIRECTION_INCREASING);
  expect_error(DMLC_ERROR_INVALID_ARGUMENT, "InputTensor has 4294967296 elements");
  tensor_set(&in_t, DML_TENSOR_DATA_TYPE_INT8, 3, (const UINT[]){65536, 32767, 2}, NULL);
  tensor_set(&out_t, DML_TENSOR_DATA_TYPE_INT32, 3, (const UINT[]){65536, 1, 1}, NULL);
  set_index_op(DML_OPERATOR_ARGMAX, 2, (const UINT[]){2, 1}, DML_AXIS_DIRECTION_DECREASING);
  expect_ok();
}
END_TEST

START_TEST(test_index_uint32_max_elements) {
  /* 2^32-1 reduced elements: the largest index 2^32-2 fits UINT32, not INT32. */
  tensor_set(&in_t, DML_TENSOR_DATA_TYPE_UINT8, 2, (const UINT[]){65535, 65537}, NULL);
  tensor_set(&out_t, DML_TENSOR_DATA_TYPE_UINT32, 2, (const UINT[]){1, 1}, NULL);
  set_index_op(DML_OPERATOR_ARGMAX, 2, (const UINT[]){1, 0}, DML_AXIS_DIRECTION_INCREASING);
  expect_ok();
  out_t.buffer.DataType = DML_TENSOR_DATA_TYPE_INT32;
  expect_error(DMLC_ERROR_INVALID_ARGUMENT,
               "the largest index over the reduced axes is 4294967294");
}
END_TEST

/* ---- hardmax rules ---- */

START_TEST(test_hardmax_input_type) {
  set_standard_hardmax1();
  in_t.buffer.DataType = DML_TENSOR_DATA_TYPE_INT32;
  out_t.buffer.DataType = DML_TENSOR_DATA_TYPE_INT32;
  expect_error(DMLC_ERROR_INVALID_ARGUMENT,
               "InputTensor.DataType is INT32; ACTIVATION_HARDMAX1 accepts FLOAT32, FLOAT16");
  set_hardmax();
  expect_error(DMLC_ERROR_INVALID_ARGUMENT,
               "InputTensor.DataType is INT32; ACTIVATION_HARDMAX accepts FLOAT32, FLOAT16");
}
END_TEST

START_TEST(test_hardmax_output_type) {
  set_standard_hardmax1();
  out_t.buffer.DataType = DML_TENSOR_DATA_TYPE_FLOAT16;
  expect_error(DMLC_ERROR_INVALID_ARGUMENT,
               "OutputTensor.DataType is FLOAT16; must equal InputTensor.DataType (FLOAT32)");
}
END_TEST

START_TEST(test_hardmax_output_sizes) {
  set_standard_hardmax1();
  out_t.sizes[2] = 4;
  expect_error(DMLC_ERROR_INVALID_ARGUMENT,
               "OutputTensor.Sizes[2] is 4; must equal InputTensor.Sizes[2] (5)");
}
END_TEST

START_TEST(test_hardmax_output_rank) {
  set_standard_hardmax1();
  out_t.buffer.DimensionCount = 2;
  expect_error(DMLC_ERROR_INVALID_ARGUMENT,
               "OutputTensor.DimensionCount is 2; must equal InputTensor.DimensionCount (3)");
}
END_TEST

START_TEST(test_hardmax_axes_rules) {
  set_standard_hardmax1();
  hardmax1_desc.AxisCount = 0;
  expect_error(DMLC_ERROR_INVALID_ARGUMENT, "AxisCount is 0; must be at least 1");
  set_hardmax1(2, (const UINT[]){2, 2});
  expect_error(DMLC_ERROR_INVALID_ARGUMENT, "Axes[1] is 2, which repeats Axes[0]");
  set_hardmax1(1, (const UINT[]){7});
  expect_error(DMLC_ERROR_INVALID_ARGUMENT, "Axes[0] is 7; must be less than");
  hardmax1_desc.Axes = NULL;
  expect_error(DMLC_ERROR_INVALID_ARGUMENT, "Axes is NULL");
}
END_TEST

START_TEST(test_hardmax_output_strides) {
  set_standard_hardmax1();
  tensor_set(&out_t, DML_TENSOR_DATA_TYPE_FLOAT32, 3, (const UINT[]){2, 4, 5},
             (const UINT[]){20, 4, 1});
  expect_error(DMLC_ERROR_INVALID_ARGUMENT, "OutputTensor.Strides overlap");
}
END_TEST

/* ---- valid descriptors of every operator ---- */

START_TEST(test_argmax_valid_info) {
  dmlc_executable *exe = expect_compiles();
  ck_assert_int_eq(dmlc_executable_device(exe), DMLC_DEVICE_REFERENCE);
  ck_assert_uint_eq(dmlc_executable_input_count(exe), 1);
  ck_assert_uint_eq(dmlc_executable_output_count(exe), 1);
  check_io(exe, 0, false, "input", DML_TENSOR_DATA_TYPE_FLOAT32, 3, (const UINT[]){2, 3, 4},
           (const uint64_t[]){12, 4, 1}, 96);
  check_io(exe, 0, true, "output", DML_TENSOR_DATA_TYPE_UINT32, 3, (const UINT[]){2, 1, 4},
           (const uint64_t[]){4, 4, 1}, 32);
  dmlc_executable_destroy(exe);
}
END_TEST

START_TEST(test_argmin_valid_info) {
  tensor_set(&in_t, DML_TENSOR_DATA_TYPE_INT16, 4, (const UINT[]){2, 3, 4, 5},
             (const UINT[]){64, 20, 5, 1});
  tensor_set(&out_t, DML_TENSOR_DATA_TYPE_INT64, 4, (const UINT[]){2, 1, 4, 1}, NULL);
  set_index_op(DML_OPERATOR_ARGMIN, 2, (const UINT[]){3, 1}, DML_AXIS_DIRECTION_DECREASING);
  set_total(&out_t, 128);
  out_t.buffer.GuaranteedBaseOffsetAlignment = 8;
  dmlc_executable *exe = expect_compiles();
  /* (64 + 40 + 15 + 4 + 1) * 2 = 248 */
  check_io(exe, 0, false, "input", DML_TENSOR_DATA_TYPE_INT16, 4, (const UINT[]){2, 3, 4, 5},
           (const uint64_t[]){64, 20, 5, 1}, 248);
  dmlc_tensor_info info;
  ck_assert_int_eq(dmlc_executable_output_info(exe, 0, &info), DMLC_OK);
  check_info(&info, "output", DML_TENSOR_DATA_TYPE_INT64, 4, (const UINT[]){2, 1, 4, 1},
             (const uint64_t[]){4, 4, 1, 1}, 128, 8);
  dmlc_executable_destroy(exe);
}
END_TEST

START_TEST(test_hardmax1_valid_info) {
  tensor_set(&in_t, DML_TENSOR_DATA_TYPE_FLOAT16, 3, (const UINT[]){2, 3, 5}, NULL);
  tensor_set(&out_t, DML_TENSOR_DATA_TYPE_FLOAT16, 3, (const UINT[]){2, 3, 5}, NULL);
  set_hardmax1(2, (const UINT[]){2, 0});
  dmlc_executable *exe = expect_compiles();
  check_io(exe, 0, false, "input", DML_TENSOR_DATA_TYPE_FLOAT16, 3, (const UINT[]){2, 3, 5},
           (const uint64_t[]){15, 5, 1}, 60);
  check_io(exe, 0, true, "output", DML_TENSOR_DATA_TYPE_FLOAT16, 3, (const UINT[]){2, 3, 5},
           (const uint64_t[]){15, 5, 1}, 60);
  dmlc_executable_destroy(exe);
}
END_TEST

START_TEST(test_hardmax_legacy_ranks) {
  tensor_set(&in_t, DML_TENSOR_DATA_TYPE_FLOAT32, 1, (const UINT[]){7}, NULL);
  tensor_set(&out_t, DML_TENSOR_DATA_TYPE_FLOAT32, 1, (const UINT[]){7}, NULL);
  set_hardmax();
  expect_ok();
  const UINT sizes8[] = {1, 2, 1, 2, 1, 2, 1, 3};
  tensor_set(&in_t, DML_TENSOR_DATA_TYPE_FLOAT16, 8, sizes8, NULL);
  tensor_set(&out_t, DML_TENSOR_DATA_TYPE_FLOAT16, 8, sizes8, NULL);
  dmlc_executable *exe = expect_compiles();
  check_io(exe, 0, true, "output", DML_TENSOR_DATA_TYPE_FLOAT16, 8, sizes8,
           (const uint64_t[]){24, 12, 12, 6, 6, 3, 3, 1}, 48);
  dmlc_executable_destroy(exe);
}
END_TEST

START_TEST(test_reduce_argmax_argmin_valid) {
  set_index_op(DML_OPERATOR_REDUCE, 1, (const UINT[]){1}, DML_AXIS_DIRECTION_INCREASING);
  dmlc_executable *exe = expect_compiles();
  check_io(exe, 0, true, "output", DML_TENSOR_DATA_TYPE_UINT32, 3, (const UINT[]){2, 1, 4},
           (const uint64_t[]){4, 4, 1}, 32);
  dmlc_executable_destroy(exe);
  reduce_desc.Function = DML_REDUCE_FUNCTION_ARGMIN;
  expect_ok();
  in_t.buffer.DataType = DML_TENSOR_DATA_TYPE_FLOAT64;
  expect_error(DMLC_ERROR_INVALID_ARGUMENT, "InputTensor.DataType is FLOAT64; REDUCE ARGMIN");
}
END_TEST

START_TEST(test_reduce_rules) {
  set_index_op(DML_OPERATOR_REDUCE, 2, (const UINT[]){1, 1}, DML_AXIS_DIRECTION_INCREASING);
  expect_error(DMLC_ERROR_INVALID_ARGUMENT, "Axes[1] is 1, which repeats Axes[0]");
  set_index_op(DML_OPERATOR_REDUCE, 1, (const UINT[]){2}, DML_AXIS_DIRECTION_INCREASING);
  expect_error(DMLC_ERROR_INVALID_ARGUMENT, "OutputTensor.Sizes[1] is 1; must equal");
}
END_TEST

/* ---- execution (the reference device) ---- */

static void run_3x3(DML_OPERATOR_TYPE type, DML_AXIS_DIRECTION direction, uint32_t expected) {
  tensor_set(&in_t, DML_TENSOR_DATA_TYPE_FLOAT32, 2, (const UINT[]){3, 3}, NULL);
  tensor_set(&out_t, DML_TENSOR_DATA_TYPE_UINT32, 2, (const UINT[]){1, 1}, NULL);
  set_index_op(type, 2, (const UINT[]){0, 1}, direction);
  dmlc_executable *exe = expect_compiles();
  float x[9] = {1, 2, 3, 3, 0, 4, 2, 5, 2};
  uint32_t y = 99;
  const dmlc_buffer in = {x, sizeof x}, out = {&y, sizeof y};
  ck_assert_msg(dmlc_execute(exe, &in, 1, &out, 1) == DMLC_OK, "%s", dmlc_context_error(ctx));
  ck_assert_uint_eq(y, expected);
  dmlc_executable_destroy(exe);
}

START_TEST(test_execute_spec_example) {
  run_3x3(DML_OPERATOR_ARGMAX, DML_AXIS_DIRECTION_INCREASING, 7);
  run_3x3(DML_OPERATOR_ARGMIN, DML_AXIS_DIRECTION_INCREASING, 4);
  run_3x3(DML_OPERATOR_REDUCE, DML_AXIS_DIRECTION_INCREASING, 7);
}
END_TEST

START_TEST(test_execute_hardmax_spec_example) {
  tensor_set(&in_t, DML_TENSOR_DATA_TYPE_FLOAT32, 3, (const UINT[]){2, 2, 2}, NULL);
  tensor_set(&out_t, DML_TENSOR_DATA_TYPE_FLOAT32, 3, (const UINT[]){2, 2, 2}, NULL);
  set_hardmax1(2, (const UINT[]){0, 2});
  dmlc_executable *exe = expect_compiles();
  float x[8] = {12, 0, -101, 11, 3, 234, 0, -101}, y[8];
  const float want[8] = {0, 0, 0, 1, 0, 1, 0, 0};
  const dmlc_buffer in = {x, sizeof x}, out = {y, sizeof y};
  ck_assert_msg(dmlc_execute(exe, &in, 1, &out, 1) == DMLC_OK, "%s", dmlc_context_error(ctx));
  for (int i = 0; i < 8; i++)
    ck_assert_float_eq(y[i], want[i]);
  dmlc_executable_destroy(exe);
}
END_TEST

START_TEST(test_execute_buffer_checks) {
  tensor_set(&in_t, DML_TENSOR_DATA_TYPE_FLOAT32, 2, (const UINT[]){3, 3}, NULL);
  tensor_set(&out_t, DML_TENSOR_DATA_TYPE_UINT32, 2, (const UINT[]){1, 1}, NULL);
  set_index_op(DML_OPERATOR_ARGMAX, 2, (const UINT[]){0, 1}, DML_AXIS_DIRECTION_INCREASING);
  in_t.buffer.GuaranteedBaseOffsetAlignment = 16;
  dmlc_executable *exe = expect_compiles();
  _Alignas(16) float x[16] = {0};
  uint32_t y = 0;
  dmlc_buffer in = {x, 36}, out = {&y, sizeof y};

  in.size_bytes = 32;
  ck_assert_int_eq(dmlc_execute(exe, &in, 1, &out, 1), DMLC_ERROR_INVALID_ARGUMENT);
  ck_assert_message_has("inputs[0]");
  ck_assert_message_has("36");
  in.size_bytes = 36;

  out.size_bytes = 3;
  ck_assert_int_eq(dmlc_execute(exe, &in, 1, &out, 1), DMLC_ERROR_INVALID_ARGUMENT);
  ck_assert_message_has("outputs[0]");
  out.size_bytes = 4;

  const dmlc_buffer two[2] = {in, in};
  ck_assert_int_eq(dmlc_execute(exe, two, 2, &out, 1), DMLC_ERROR_INVALID_ARGUMENT);
  ck_assert_message_has("input");
  ck_assert_int_eq(dmlc_execute(exe, &in, 1, &out, 0), DMLC_ERROR_INVALID_ARGUMENT);
  ck_assert_message_has("output");

  in.data = NULL;
  ck_assert_int_eq(dmlc_execute(exe, &in, 1, &out, 1), DMLC_ERROR_INVALID_ARGUMENT);
  ck_assert_message_has("NULL");

  in.data = x + 1; /* 4-byte aligned, not 16 */
  ck_assert_int_eq(dmlc_execute(exe, &in, 1, &out, 1), DMLC_ERROR_INVALID_ARGUMENT);
  ck_assert_message_has("aligned to 16");

  in.data = x;
  ck_assert_msg(dmlc_execute(exe, &in, 1, &out, 1) == DMLC_OK, "%s", dmlc_context_error(ctx));
  dmlc_executable_destroy(exe);
}
END_TEST

/* ---- graphs with intermediate values ---- */

static dmlc_graph *graph;
static dmlc_value x_value;
static test_tensor x_t, h_in_t, h_out_t, a_in_t, a_out_t;
static DML_ACTIVATION_HARDMAX1_OPERATOR_DESC g_hardmax;
static DML_ARGMAX_OPERATOR_DESC g_argmax;
static const UINT g_hardmax_axes[] = {2}, g_argmax_axes[] = {1};
static const DML_OPERATOR_DESC g_hardmax_op = {DML_OPERATOR_ACTIVATION_HARDMAX1, &g_hardmax};
static const DML_OPERATOR_DESC g_argmax_op = {DML_OPERATOR_ARGMAX, &g_argmax};

/* %x: f32[2,3,5] with padded strides [18, 6, 1]; hardmax over axis 2, then
 * argmax over axis 1 of its (packed) result. */
static void graph_setup(void) {
  setup();
  const UINT sizes[] = {2, 3, 5}, padded[] = {18, 6, 1};
  tensor_set(&x_t, DML_TENSOR_DATA_TYPE_FLOAT32, 3, sizes, padded);
  tensor_set(&h_in_t, DML_TENSOR_DATA_TYPE_FLOAT32, 3, sizes, padded);
  tensor_set(&h_out_t, DML_TENSOR_DATA_TYPE_FLOAT32, 3, sizes, NULL);
  tensor_set(&a_in_t, DML_TENSOR_DATA_TYPE_FLOAT32, 3, sizes, NULL);
  tensor_set(&a_out_t, DML_TENSOR_DATA_TYPE_UINT32, 3, (const UINT[]){2, 1, 5}, NULL);
  g_hardmax =
      (DML_ACTIVATION_HARDMAX1_OPERATOR_DESC){&h_in_t.desc, &h_out_t.desc, 1, g_hardmax_axes};
  g_argmax = (DML_ARGMAX_OPERATOR_DESC){&a_in_t.desc, &a_out_t.desc, 1, g_argmax_axes,
                                        DML_AXIS_DIRECTION_INCREASING};
  ck_assert_int_eq(dmlc_graph_create(ctx, "chain", &graph), DMLC_OK);
  tensor_refresh(&x_t);
  ck_assert_int_eq(dmlc_graph_add_input(graph, "x", &x_t.desc, &x_value), DMLC_OK);
}

static void graph_teardown(void) {
  dmlc_graph_destroy(graph);
  graph = NULL;
  teardown();
}

static dmlc_status add_op(const DML_OPERATOR_DESC *desc, dmlc_value input, dmlc_value *result) {
  tensor_refresh(&h_in_t);
  tensor_refresh(&h_out_t);
  tensor_refresh(&a_in_t);
  tensor_refresh(&a_out_t);
  return dmlc_graph_add_operator(graph, desc, &input, 1, result, 1);
}

static dmlc_value add_hardmax(void) {
  dmlc_value h;
  ck_assert_msg(add_op(&g_hardmax_op, x_value, &h) == DMLC_OK, "%s", dmlc_context_error(ctx));
  return h;
}

START_TEST(test_graph_chain) {
  const dmlc_value h = add_hardmax();
  dmlc_value idx;
  ck_assert_msg(add_op(&g_argmax_op, h, &idx) == DMLC_OK, "%s", dmlc_context_error(ctx));
  ck_assert_int_eq(dmlc_graph_add_output(graph, "idx", idx), DMLC_OK);
  ck_assert_int_eq(dmlc_graph_add_output(graph, "hm", h), DMLC_OK);
  dmlc_executable *exe = NULL;
  ck_assert_msg(dmlc_graph_compile(graph, DMLC_DEVICE_REFERENCE, &exe) == DMLC_OK, "%s",
                dmlc_context_error(ctx));
  /* (18 + 12 + 4 + 1) * 4 = 140 */
  check_io(exe, 0, false, "x", DML_TENSOR_DATA_TYPE_FLOAT32, 3, (const UINT[]){2, 3, 5},
           (const uint64_t[]){18, 6, 1}, 140);
  check_io(exe, 0, true, "idx", DML_TENSOR_DATA_TYPE_UINT32, 3, (const UINT[]){2, 1, 5},
           (const uint64_t[]){5, 5, 1}, 40);
  check_io(exe, 1, true, "hm", DML_TENSOR_DATA_TYPE_FLOAT32, 3, (const UINT[]){2, 3, 5},
           (const uint64_t[]){15, 5, 1}, 120);

  /* Row r of batch b has its maximum at column (b + r) % 5; the argmax over
   * rows of the hardmax is the first row whose one-hot has a 1 in column c. */
  float x[36] = {0};
  for (int b = 0; b < 2; b++)
    for (int r = 0; r < 3; r++)
      x[b * 18 + r * 6 + (b + r) % 5] = 1.0f;
  uint32_t idx_out[10];
  float hm[30];
  const dmlc_buffer in = {x, sizeof x};
  const dmlc_buffer outs[2] = {{idx_out, sizeof idx_out}, {hm, sizeof hm}};
  ck_assert_msg(dmlc_execute(exe, &in, 1, outs, 2) == DMLC_OK, "%s", dmlc_context_error(ctx));
  for (int b = 0; b < 2; b++)
    for (int c = 0; c < 5; c++) {
      uint32_t want = 0; /* all-zero column: every row ties, the first wins */
      for (int r = 2; r >= 0; r--)
        if ((b + r) % 5 == c)
          want = (uint32_t)r;
      ck_assert_uint_eq(idx_out[b * 5 + c], want);
      for (int r = 0; r < 3; r++)
        ck_assert_float_eq(hm[b * 15 + r * 5 + c], (b + r) % 5 == c ? 1.0f : 0.0f);
    }
  dmlc_executable_destroy(exe);
}
END_TEST

START_TEST(test_graph_bind_wrong_sizes) {
  const dmlc_value h = add_hardmax();
  a_in_t.sizes[1] = 4;
  a_out_t.sizes[1] = 1;
  dmlc_value idx;
  ck_assert_int_eq(add_op(&g_argmax_op, h, &idx), DMLC_ERROR_INVALID_ARGUMENT);
  ck_assert_message_has("InputTensor.Sizes[1] is 4 but the bound value %0 has f32[2,3,5]");
}
END_TEST

START_TEST(test_graph_bind_wrong_type) {
  const dmlc_value h = add_hardmax();
  a_in_t.buffer.DataType = DML_TENSOR_DATA_TYPE_FLOAT16;
  dmlc_value idx;
  ck_assert_int_eq(add_op(&g_argmax_op, h, &idx), DMLC_ERROR_INVALID_ARGUMENT);
  ck_assert_message_has("InputTensor.DataType is FLOAT16 but the bound value %0 has f32[2,3,5]");
  h_in_t.buffer.DataType = DML_TENSOR_DATA_TYPE_FLOAT16;
  h_out_t.buffer.DataType = DML_TENSOR_DATA_TYPE_FLOAT16;
  ck_assert_int_eq(add_op(&g_hardmax_op, x_value, &idx), DMLC_ERROR_INVALID_ARGUMENT);
  ck_assert_message_has("InputTensor.DataType is FLOAT16 but the bound value %x has f32[2,3,5]");
}
END_TEST

START_TEST(test_graph_bind_wrong_rank) {
  tensor_set(&h_in_t, DML_TENSOR_DATA_TYPE_FLOAT32, 2, (const UINT[]){6, 5}, NULL);
  tensor_set(&h_out_t, DML_TENSOR_DATA_TYPE_FLOAT32, 2, (const UINT[]){6, 5}, NULL);
  g_hardmax.Axes = (const UINT[]){1};
  dmlc_value h;
  ck_assert_int_eq(add_op(&g_hardmax_op, x_value, &h), DMLC_ERROR_INVALID_ARGUMENT);
  ck_assert_message_has("InputTensor.DimensionCount is 2 but the bound value %x has f32[2,3,5]");
}
END_TEST

START_TEST(test_graph_bind_input_strides) {
  dmlc_value h;
  h_in_t.buffer.Strides = NULL;
  ck_assert_int_eq(add_op(&g_hardmax_op, x_value, &h), DMLC_ERROR_INVALID_ARGUMENT);
  ck_assert_message_has(
      "InputTensor.Strides is NULL (packed) but the bound value %x has strides [18, 6, 1]");
  h_in_t.buffer.Strides = h_in_t.strides;
  h_in_t.strides[1] = 5;
  ck_assert_int_eq(add_op(&g_hardmax_op, x_value, &h), DMLC_ERROR_INVALID_ARGUMENT);
  ck_assert_message_has(
      "InputTensor.Strides[1] is 5 but the bound value %x has strides [18, 6, 1]");
}
END_TEST

START_TEST(test_graph_bind_result_strides) {
  const dmlc_value h = add_hardmax();
  dmlc_value idx;
  /* Packed strides spelled out are accepted. */
  a_in_t.buffer.Strides = a_in_t.strides;
  memcpy(a_in_t.strides, (const UINT[]){15, 5, 1}, sizeof(UINT[3]));
  ck_assert_msg(add_op(&g_argmax_op, h, &idx) == DMLC_OK, "%s", dmlc_context_error(ctx));
  /* Other strides are not: an operator result is packed. */
  memcpy(a_in_t.strides, (const UINT[]){18, 6, 1}, sizeof(UINT[3]));
  ck_assert_int_eq(add_op(&g_argmax_op, h, &idx), DMLC_ERROR_INVALID_ARGUMENT);
  ck_assert_message_has("InputTensor.Strides are [18, 6, 1] but the bound value %0 is an operator "
                        "result, laid out packed ([15, 5, 1])");
}
END_TEST

START_TEST(test_graph_bind_counts_and_values) {
  dmlc_value h;
  ck_assert_int_eq(dmlc_graph_add_operator(graph, &g_hardmax_op, &x_value, 0, &h, 1),
                   DMLC_ERROR_INVALID_ARGUMENT);
  ck_assert_message_has("input");
  const dmlc_value bogus = 42;
  ck_assert_int_eq(add_op(&g_hardmax_op, bogus, &h), DMLC_ERROR_INVALID_ARGUMENT);
  ck_assert_message_has("42");
}
END_TEST

START_TEST(test_graph_error_leaves_graph_unchanged) {
  const dmlc_value h = add_hardmax();
  a_out_t.buffer.DataType = DML_TENSOR_DATA_TYPE_FLOAT32;
  dmlc_value idx;
  ck_assert_int_eq(add_op(&g_argmax_op, h, &idx), DMLC_ERROR_INVALID_ARGUMENT);
  ck_assert_message_has("OutputTensor.DataType is FLOAT32; must be");
  ck_assert_int_eq(dmlc_graph_add_output(graph, "hm", h), DMLC_OK);
  dmlc_executable *exe = NULL;
  ck_assert_msg(dmlc_graph_compile(graph, DMLC_DEVICE_REFERENCE, &exe) == DMLC_OK, "%s",
                dmlc_context_error(ctx));
  ck_assert_uint_eq(dmlc_executable_output_count(exe), 1);
  dmlc_executable_destroy(exe);
}
END_TEST

START_TEST(test_graph_input_tensor_errors) {
  test_tensor bad;
  tensor_set(&bad, DML_TENSOR_DATA_TYPE_UINT4, 1, (const UINT[]){4}, NULL);
  dmlc_value v;
  ck_assert_int_eq(dmlc_graph_add_input(graph, "y", &bad.desc, &v), DMLC_ERROR_INVALID_ARGUMENT);
  ck_assert_message_has("DataType is 12 (UINT4); not supported");
  tensor_set(&bad, DML_TENSOR_DATA_TYPE_FLOAT32, 2, (const UINT[]){4, 0}, NULL);
  ck_assert_int_eq(dmlc_graph_add_input(graph, "y", &bad.desc, &v), DMLC_ERROR_INVALID_ARGUMENT);
  ck_assert_message_has("Sizes[1] is 0; sizes must be at least 1");
  ck_assert_int_eq(dmlc_graph_add_input(graph, "y", NULL, &v), DMLC_ERROR_INVALID_ARGUMENT);
}
END_TEST

/* ---- suites ---- */

static Suite *frontend_suite(void) {
  Suite *s = suite_create("frontend");
  TCase *tc = tcase_create("descriptors");
  tcase_add_checked_fixture(tc, setup, teardown);
  tcase_add_test(tc, test_null_operator_desc);
  tcase_add_test(tc, test_null_desc_pointer);
  tcase_add_test(tc, test_null_input_tensor);
  tcase_add_test(tc, test_null_output_tensor);
  tcase_add_test(tc, test_null_buffer_desc);
  tcase_add_test(tc, test_null_axes);
  tcase_add_test(tc, test_null_sizes);
  tcase_add_test(tc, test_unsupported_operator);
  tcase_add_test(tc, test_invalid_operator_type);
  tcase_add_test(tc, test_reduce_unsupported_function);
  tcase_add_test(tc, test_reduce_unknown_function);
  tcase_add_test(tc, test_tensor_type_not_buffer);
  tcase_add_test(tc, test_data_type_uint4);
  tcase_add_test(tc, test_data_type_unknown);
  tcase_add_test(tc, test_flags);
  tcase_add_test(tc, test_rank_nine);
  tcase_add_test(tc, test_rank_zero);
  tcase_add_test(tc, test_size_zero);
  tcase_add_test(tc, test_too_many_elements);
  tcase_add_test(tc, test_elements_overflow_64_bits);
  tcase_add_test(tc, test_max_elements_accepted);
  tcase_add_test(tc, test_total_size_too_small);
  tcase_add_test(tc, test_total_size_with_strides);
  tcase_add_test(tc, test_total_size_rounds_up_to_4);
  tcase_add_test(tc, test_alignment);
  tcase_add_test(tc, test_output_zero_stride);
  tcase_add_test(tc, test_output_overlapping_strides);
  tcase_add_test(tc, test_input_broadcast_and_padding_accepted);
  tcase_add_test(tc, test_axis_count_zero);
  tcase_add_test(tc, test_axis_count_above_rank);
  tcase_add_test(tc, test_axis_out_of_range);
  tcase_add_test(tc, test_axis_repeated);
  tcase_add_test(tc, test_axis_direction_invalid);
  tcase_add_test(tc, test_argmax_input_float64);
  tcase_add_test(tc, test_argmin_input_float64);
  tcase_add_test(tc, test_argmax_all_input_types);
  tcase_add_test(tc, test_output_type_float);
  tcase_add_test(tc, test_output_all_index_types);
  tcase_add_test(tc, test_output_rank_mismatch);
  tcase_add_test(tc, test_output_size_not_one_on_reduced_axis);
  tcase_add_test(tc, test_output_size_wrong_on_kept_axis);
  tcase_add_test(tc, test_index_int32_boundary_accepted);
  tcase_add_test(tc, test_index_int32_overflow_rejected);
  tcase_add_test(tc, test_index_overflow_counts_reduced_axes_only);
  tcase_add_test(tc, test_index_uint32_max_elements);
  tcase_add_test(tc, test_hardmax_input_type);
  tcase_add_test(tc, test_hardmax_output_type);
  tcase_add_test(tc, test_hardmax_output_sizes);
  tcase_add_test(tc, test_hardmax_output_rank);
  tcase_add_test(tc, test_hardmax_axes_rules);
  tcase_add_test(tc, test_hardmax_output_strides);
  tcase_add_test(tc, test_argmax_valid_info);
  tcase_add_test(tc, test_argmin_valid_info);
  tcase_add_test(tc, test_hardmax1_valid_info);
  tcase_add_test(tc, test_hardmax_legacy_ranks);
  tcase_add_test(tc, test_reduce_argmax_argmin_valid);
  tcase_add_test(tc, test_reduce_rules);
  suite_add_tcase(s, tc);

  TCase *exec = tcase_create("execute");
  tcase_add_checked_fixture(exec, setup, teardown);
  tcase_add_test(exec, test_execute_spec_example);
  tcase_add_test(exec, test_execute_hardmax_spec_example);
  tcase_add_test(exec, test_execute_buffer_checks);
  suite_add_tcase(s, exec);

  TCase *g = tcase_create("graphs");
  tcase_add_checked_fixture(g, graph_setup, graph_teardown);
  tcase_add_test(g, test_graph_chain);
  tcase_add_test(g, test_graph_bind_wrong_sizes);
  tcase_add_test(g, test_graph_bind_wrong_type);
  tcase_add_test(g, test_graph_bind_wrong_rank);
  tcase_add_test(g, test_graph_bind_input_strides);
  tcase_add_test(g, test_graph_bind_result_strides);
  tcase_add_test(g, test_graph_bind_counts_and_values);
  tcase_add_test(g, test_graph_error_leaves_graph_unchanged);
  tcase_add_test(g, test_graph_input_tensor_errors);
  suite_add_tcase(s, g);
  return s;
}

int main(void) {
  Suite *suites[] = {frontend_suite()};
  return dmlc_test_run_suites(suites, 1);
}
