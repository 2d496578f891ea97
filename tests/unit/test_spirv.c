/* The SPIR-V kernel compiler: every kernel shape, data-type pair, direction
 * and device capability set yields a module that passes the validator and
 * the optimizer; validation failures carry the validator's message.
 * (Executing the modules is the Vulkan runtime's and the conformance
 * sweep's business.) */
#include <stdlib.h>
#include <string.h>

#include "codegen/spirv/spirv.h"
#include "passes/passes.h"
#include "testutil.h"

static dmlc_spirv_caps caps_full(void) {
  dmlc_spirv_caps c = dmlc_spirv_caps_minimal();
  c.max_workgroup_size = 1024;
  c.max_workgroup_count = 65535;
  c.max_shared_bytes = 32768;
  c.subgroup_size = 32;
  c.subgroup_arithmetic = c.subgroup_shuffle = true;
  c.shader_int64 = c.shader_int16 = c.shader_int8 = c.shader_float16 = true;
  c.storage_8bit = c.storage_16bit = true;
  return c;
}

/* Shuffles but no narrow storage; a tiny workgroup limit. */
static dmlc_spirv_caps caps_odd(void) {
  dmlc_spirv_caps c = dmlc_spirv_caps_minimal();
  c.max_workgroup_size = 64;
  c.subgroup_size = 64;
  c.subgroup_shuffle = true;
  return c;
}

static const dmlc_dtype read_dtypes[] = {DMLC_DTYPE_F16, DMLC_DTYPE_F32, DMLC_DTYPE_F64,
                                         DMLC_DTYPE_I8,  DMLC_DTYPE_I16, DMLC_DTYPE_I32,
                                         DMLC_DTYPE_I64, DMLC_DTYPE_U8,  DMLC_DTYPE_U16,
                                         DMLC_DTYPE_U32, DMLC_DTYPE_U64, DMLC_DTYPE_BOOL};
#define NUM_READ_DTYPES (sizeof read_dtypes / sizeof read_dtypes[0])

/* A reduction kernel over dims (reduced where mask says), packed row-major
 * read, outputs: index (idx_dtype) and one-hot (hot_dtype). */
static dmlc_kdesc reduction(uint32_t rank, const uint32_t *dims, uint32_t mask, dmlc_dtype rd,
                            dmlc_op op, dmlc_direction dir, dmlc_dtype idx_dtype,
                            dmlc_dtype hot_dtype) {
  dmlc_kdesc k;
  memset(&k, 0, sizeof k);
  k.rank = rank;
  memcpy(k.dims, dims, rank * sizeof *dims);
  k.reduced_mask = mask;
  k.has_read = true;
  k.read_dtype = rd;
  k.has_reduction = true;
  k.reduction = op;
  k.direction = dir;
  uint64_t s = 1, kept_s = 1;
  for (uint32_t d = rank; d-- > 0;) {
    k.read_strides[d] = s;
    k.outputs[1].strides[d] = s;
    s *= dims[d];
    if (!((mask >> d) & 1)) {
      k.outputs[0].strides[d] = kept_s;
      kept_s *= dims[d];
    }
  }
  k.num_outputs = 2;
  k.outputs[0].kind = DMLC_KOUT_INDEX;
  k.outputs[0].dtype = idx_dtype;
  k.outputs[0].binding = (dmlc_binding){DMLC_BINDING_OUTPUT, 0};
  k.outputs[1].kind = DMLC_KOUT_ONEHOT;
  k.outputs[1].dtype = hot_dtype;
  k.outputs[1].binding = (dmlc_binding){DMLC_BINDING_OUTPUT, 1};
  return k;
}

static void compile_ok(const dmlc_kdesc *k, const dmlc_spirv_caps *caps, dmlc_spirv_module *m) {
  dmlc_diag diag = {0};
  const dmlc_status s = dmlc_spirv_compile(k, caps, m, &diag);
  if (s != DMLC_OK) {
    char *text = dmlc_kdesc_print(k);
    ck_abort_msg("%s: %s", text, diag.message);
    free(text);
  }
  ck_assert_ptr_nonnull(m->words);
  ck_assert_uint_gt(m->num_words, 5);
  ck_assert_uint_eq(m->words[0], 0x07230203u);
  ck_assert_uint_eq(m->num_bindings, 1 + k->num_outputs);
  ck_assert_uint_gt(m->local_size, 0);
  ck_assert_uint_le(m->local_size, caps->max_workgroup_size);
  ck_assert_uint_gt(m->num_groups, 0);
}

static char *disassemble(const dmlc_spirv_module *m) {
  char *text = NULL;
  dmlc_diag diag = {0};
  ck_assert_int_eq(dmlc_spirv_disassemble(m->words, m->num_words, &text, &diag), DMLC_OK);
  return text;
}

static const uint32_t shapes[][3] = {
    {64, 10, 0},    /* rows, small reduced extent: one invocation per row */
    {8, 4096, 0},   /* rows, large: a workgroup per row */
    {100, 4096, 1}, /* columns, many kept points: one invocation per column */
    {4096, 8, 1},   /* columns, few kept points: a workgroup per column */
};

START_TEST(every_read_dtype_shape_and_direction_validates) {
  const dmlc_spirv_caps caps[3] = {dmlc_spirv_caps_minimal(), caps_full(), caps_odd()};
  const dmlc_dtype hot[] = {DMLC_DTYPE_F32, DMLC_DTYPE_F16, DMLC_DTYPE_U8, DMLC_DTYPE_F64};
  const dmlc_dtype idx[] = {DMLC_DTYPE_U32, DMLC_DTYPE_I64, DMLC_DTYPE_U64, DMLC_DTYPE_I32};
  for (uint32_t t = 0; t < NUM_READ_DTYPES; t++)
    for (uint32_t sh = 0; sh < 4; sh++)
      for (uint32_t v = 0; v < 4; v++) {
        const uint32_t *shape = shapes[sh];
        const uint32_t dims[2] = {shape[0], shape[1]};
        const dmlc_op op = v & 1 ? DMLC_OP_ARGMIN : DMLC_OP_ARGMAX;
        const dmlc_direction dir = v & 2 ? DMLC_DIRECTION_DECREASING : DMLC_DIRECTION_INCREASING;
        const dmlc_kdesc k = reduction(2, dims, shape[2] ? 1u : 2u, read_dtypes[t], op, dir,
                                       idx[(t + v) % 4], hot[(t + sh + v) % 4]);
        for (uint32_t c = 0; c < 3; c++) {
          dmlc_spirv_module m;
          compile_ok(&k, &caps[c], &m);
          dmlc_spirv_module_free(&m);
        }
      }
}
END_TEST

START_TEST(every_output_dtype_validates) {
  const dmlc_spirv_caps caps[3] = {dmlc_spirv_caps_minimal(), caps_full(), caps_odd()};
  const dmlc_dtype idx[] = {DMLC_DTYPE_U32, DMLC_DTYPE_I32, DMLC_DTYPE_U64, DMLC_DTYPE_I64,
                            DMLC_DTYPE_U8,  DMLC_DTYPE_I16, DMLC_DTYPE_U16, DMLC_DTYPE_I8};
  const dmlc_dtype hot[] = {DMLC_DTYPE_BOOL, DMLC_DTYPE_F16, DMLC_DTYPE_F32, DMLC_DTYPE_F64,
                            DMLC_DTYPE_I8,   DMLC_DTYPE_I16, DMLC_DTYPE_U32, DMLC_DTYPE_U64};
  for (uint32_t i = 0; i < 8; i++)
    for (uint32_t sh = 0; sh < 4; sh++) {
      const uint32_t dims[2] = {shapes[sh][0], shapes[sh][1]};
      const dmlc_kdesc k = reduction(2, dims, shapes[sh][2] ? 1u : 2u, DMLC_DTYPE_F32,
                                     DMLC_OP_ARGMAX, DMLC_DIRECTION_INCREASING, idx[i], hot[i]);
      for (uint32_t c = 0; c < 3; c++) {
        dmlc_spirv_module m;
        compile_ok(&k, &caps[c], &m);
        dmlc_spirv_module_free(&m);
      }
    }
}
END_TEST

START_TEST(several_reduced_dims_and_strides) {
  const uint32_t dims[4] = {3, 5, 7, 9};
  const dmlc_spirv_caps caps[2] = {dmlc_spirv_caps_minimal(), caps_full()};
  for (uint32_t mask = 1; mask < 16; mask++) {
    dmlc_kdesc k = reduction(4, dims, mask, DMLC_DTYPE_I16, DMLC_OP_ARGMIN,
                             DMLC_DIRECTION_DECREASING, DMLC_DTYPE_I64, DMLC_DTYPE_F16);
    k.read_strides[1] = 0; /* a broadcast read dim */
    k.read_strides[3] = 2; /* padded */
    for (uint32_t c = 0; c < 2; c++) {
      dmlc_spirv_module m;
      compile_ok(&k, &caps[c], &m);
      dmlc_spirv_module_free(&m);
    }
  }
}
END_TEST

START_TEST(paths_and_launch_sizes) {
  const dmlc_spirv_caps full = caps_full(), minimal = dmlc_spirv_caps_minimal();
  dmlc_spirv_module m;
  /* Small: one invocation per kept point. */
  dmlc_kdesc k = reduction(2, (const uint32_t[]){1000, 10}, 2, DMLC_DTYPE_F32, DMLC_OP_ARGMAX,
                           DMLC_DIRECTION_INCREASING, DMLC_DTYPE_U32, DMLC_DTYPE_F32);
  compile_ok(&k, &minimal, &m);
  ck_assert_uint_eq(m.num_groups, (1000 + m.local_size - 1) / m.local_size);
  dmlc_spirv_module_free(&m);
  /* Large rows: a workgroup per kept point, shuffles where the device has them. */
  k = reduction(2, (const uint32_t[]){7, 100000}, 2, DMLC_DTYPE_F32, DMLC_OP_ARGMAX,
                DMLC_DIRECTION_INCREASING, DMLC_DTYPE_U32, DMLC_DTYPE_U8);
  compile_ok(&k, &full, &m);
  ck_assert_uint_eq(m.num_groups, 7);
  char *text = disassemble(&m);
  ck_assert_ptr_nonnull(strstr(text, "OpEntryPoint GLCompute"));
  ck_assert_ptr_nonnull(strstr(text, "OpGroupNonUniformShuffleXor"));
  ck_assert_ptr_nonnull(strstr(text, "StorageBuffer8BitAccess"));
  ck_assert_ptr_null(strstr(text, "OpAtomic"));
  free(text);
  dmlc_spirv_module_free(&m);
  compile_ok(&k, &minimal, &m);
  ck_assert_uint_eq(m.num_groups, 7);
  text = disassemble(&m);
  ck_assert_ptr_null(strstr(text, "OpGroupNonUniform"));
  ck_assert_ptr_nonnull(strstr(text, "OpControlBarrier"));
  ck_assert_ptr_nonnull(strstr(text, "OpAtomicOr")); /* no 8-bit storage: the last resort */
  free(text);
  dmlc_spirv_module_free(&m);
}
END_TEST

static dmlc_kdesc elementwise(dmlc_dtype from, dmlc_dtype to) {
  dmlc_kdesc k;
  memset(&k, 0, sizeof k);
  k.rank = 2;
  k.dims[0] = 33;
  k.dims[1] = 17;
  k.has_read = true;
  k.read_dtype = from;
  k.read_strides[0] = 20;
  k.read_strides[1] = 1;
  k.num_outputs = 2;
  k.outputs[0].kind = DMLC_KOUT_COPY;
  k.outputs[0].dtype = to;
  k.outputs[0].strides[0] = 17;
  k.outputs[0].strides[1] = 1;
  k.outputs[1].kind = DMLC_KOUT_CONSTANT;
  k.outputs[1].dtype = to;
  k.outputs[1].constant = -3;
  k.outputs[1].strides[0] = 1;
  k.outputs[1].strides[1] = 33;
  return k;
}

START_TEST(copies_validate_or_are_unsupported) {
  const dmlc_spirv_caps caps[2] = {dmlc_spirv_caps_minimal(), caps_full()};
  uint32_t supported = 0;
  for (uint32_t f = 0; f < NUM_READ_DTYPES; f++)
    for (uint32_t t = 0; t < NUM_READ_DTYPES; t++) {
      const dmlc_kdesc k = elementwise(read_dtypes[f], read_dtypes[t]);
      for (uint32_t c = 0; c < 2; c++) {
        dmlc_spirv_module m;
        dmlc_diag diag = {0};
        const dmlc_status s = dmlc_spirv_compile(&k, &caps[c], &m, &diag);
        ck_assert_msg(s == DMLC_OK || s == DMLC_ERROR_UNSUPPORTED, "%s -> %s: %s",
                      dmlc_dtype_name(read_dtypes[f]), dmlc_dtype_name(read_dtypes[t]),
                      diag.message);
        supported += s == DMLC_OK;
        dmlc_spirv_module_free(&m);
      }
    }
  ck_assert_uint_gt(supported, 150);
  /* A rounding conversion is refused, not approximated. */
  const dmlc_kdesc k = elementwise(DMLC_DTYPE_F32, DMLC_DTYPE_F16);
  dmlc_spirv_module m;
  dmlc_diag diag = {0};
  ck_assert_int_eq(dmlc_spirv_compile(&k, &caps[0], &m, &diag), DMLC_ERROR_UNSUPPORTED);
  ck_assert_ptr_nonnull(strstr(diag.message, "f32 -> f16"));
}
END_TEST

/* Native element widths where the caps allow them, and their capabilities
 * only then; 32-bit words with unpacking otherwise. */
START_TEST(native_widths_follow_the_caps) {
  const uint32_t dims[2] = {40, 300};
  const dmlc_spirv_caps minimal = dmlc_spirv_caps_minimal(), full = caps_full();
  for (uint32_t r = 0; r < NUM_READ_DTYPES; r++) {
    const dmlc_dtype rd = read_dtypes[r];
    const uint32_t size = dmlc_dtype_size(rd);
    for (uint32_t large = 0; large < 2; large++) {
      const dmlc_kdesc k = reduction(2, dims, large ? 2 : 1, rd, DMLC_OP_ARGMIN,
                                     DMLC_DIRECTION_INCREASING, DMLC_DTYPE_U64, rd);
      dmlc_spirv_module m;
      compile_ok(&k, &minimal, &m);
      char *text = disassemble(&m);
      ck_assert_msg(!strstr(text, "Int64") && !strstr(text, "BitAccess") &&
                        !strstr(text, "OpTypeInt 64") && !strstr(text, "OpTypeInt 8") &&
                        !strstr(text, "OpTypeInt 16"),
                    "%s (minimal caps):\n%s", dmlc_dtype_name(rd), text);
      free(text);
      dmlc_spirv_module_free(&m);
      compile_ok(&k, &full, &m);
      text = disassemble(&m);
      /* The u64 index is one 64-bit store. */
      ck_assert_ptr_nonnull(strstr(text, "OpCapability Int64"));
      ck_assert_ptr_nonnull(strstr(text, "ArrayStride 8"));
      if (size == 1) {
        ck_assert_ptr_nonnull(strstr(text, "OpCapability StorageBuffer8BitAccess"));
        ck_assert_ptr_nonnull(strstr(text, "SPV_KHR_8bit_storage"));
        ck_assert_ptr_nonnull(strstr(text, "ArrayStride 1"));
      }
      if (size == 2) {
        ck_assert_ptr_nonnull(strstr(text, "OpCapability StorageBuffer16BitAccess"));
        ck_assert_ptr_nonnull(strstr(text, "ArrayStride 2"));
      }
      if (size >= 4) {
        ck_assert_ptr_null(strstr(text, "BitAccess"));
        /* (ArrayStride 16 is the 16-byte vector view of rows) */
        ck_assert_ptr_null(strstr(text, "ArrayStride 1\n"));
        ck_assert_ptr_null(strstr(text, "ArrayStride 2\n"));
      }
      if (size == 8) /* the key: 64-bit compares */
        ck_assert_ptr_nonnull(strstr(text, "OpUGreaterThan %bool"));
      /* Rows of 300 elements start on 16 bytes only for 4- and 8-byte
       * elements (1200, 2400 bytes); then a workgroup's invocations read
       * 16-byte vectors. Columns: 300 kept points make whole vectors of 4-
       * and 8-byte elements only (300 % 8 != 0), and each invocation then
       * reads one vector of E columns per row. */
      const bool vec = size >= 4;
      ck_assert_msg((strstr(text, "ArrayStride 16") != NULL) == vec, "%s%s:\n%s",
                    dmlc_dtype_name(rd), large ? " rows" : " columns", text);
      free(text);
      dmlc_spirv_module_free(&m);
    }
  }
  /* Nothing 64-bit used: no Int64 even when the device has it. */
  const dmlc_kdesc k = reduction(2, dims, 2, DMLC_DTYPE_F32, DMLC_OP_ARGMAX,
                                 DMLC_DIRECTION_INCREASING, DMLC_DTYPE_U32, DMLC_DTYPE_F32);
  dmlc_spirv_module m;
  compile_ok(&k, &full, &m);
  char *text = disassemble(&m);
  ck_assert_ptr_null(strstr(text, "Int64"));
  ck_assert_ptr_null(strstr(text, "BitAccess"));
  free(text);
  dmlc_spirv_module_free(&m);
}
END_TEST

START_TEST(constant_only_kernel) {
  dmlc_kdesc k;
  memset(&k, 0, sizeof k);
  k.rank = 1;
  k.dims[0] = 1;
  k.num_outputs = 1;
  k.outputs[0].kind = DMLC_KOUT_CONSTANT;
  k.outputs[0].dtype = DMLC_DTYPE_F16;
  k.outputs[0].constant = 1;
  const dmlc_spirv_caps c = dmlc_spirv_caps_minimal();
  dmlc_spirv_module m;
  compile_ok(&k, &c, &m);
  ck_assert_uint_eq(m.num_groups, 1);
  dmlc_spirv_module_free(&m);
}
END_TEST

START_TEST(broken_module_fails_validation_with_message) {
  const dmlc_kdesc k = reduction(2, (const uint32_t[]){64, 10}, 2, DMLC_DTYPE_F32, DMLC_OP_ARGMAX,
                                 DMLC_DIRECTION_INCREASING, DMLC_DTYPE_U32, DMLC_DTYPE_F32);
  const dmlc_spirv_caps c = dmlc_spirv_caps_minimal();
  dmlc_spirv_module m;
  compile_ok(&k, &c, &m);
  dmlc_diag diag = {0};
  ck_assert_int_eq(dmlc_spirv_validate(m.words, m.num_words, &diag), DMLC_OK);
  ck_assert_int_eq(dmlc_spirv_validate(m.words, m.num_words / 2, &diag), DMLC_ERROR_INTERNAL);
  ck_assert_ptr_nonnull(strstr(diag.message, "invalid"));
  ck_assert_uint_gt(strlen(diag.message), strlen("generated SPIR-V is invalid: "));
  /* The optimizer runs on a valid module and its output validates. */
  uint32_t *opt = NULL;
  size_t n = 0;
  ck_assert(dmlc_spirv_optimize(m.words, m.num_words, &opt, &n));
  ck_assert_int_eq(dmlc_spirv_validate(opt, n, &diag), DMLC_OK);
  free(opt);
  dmlc_spirv_module_free(&m);
}
END_TEST

/* Real kernel plans, from IR through the default pipeline. */
START_TEST(kernel_plans_compile) {
  static const char *graphs[] = {
      "graph @h(%x: f32[2,2,2]) -> (f32[2,2,2]) {\n"
      "  %0 = hardmax %x {axes = [0, 2]} : f32[2,2,2]\n  return %0\n}\n",
      "graph @h(%x: f16[64,1000]) -> (f16[64,1000], i64[64,1]) {\n"
      "  %0 = hardmax %x {axes = [1]} : f16[64,1000]\n"
      "  %1 = argmax %x {axes = [1]} : i64[64,1]\n  return %0, %1\n}\n",
      "graph @c(%x: u8[4,6,5]) -> (u32[1,6,5]) {\n"
      "  %0 = argmin %x {axes = [0], direction = decreasing} : u32[1,6,5]\n  return %0\n}\n",
      "graph @c(%x: i64[3000,5]) -> (u64[1,5]) {\n"
      "  %0 = argmax %x {axes = [0]} : u64[1,5]\n  return %0\n}\n",
  };
  const dmlc_spirv_caps caps[2] = {dmlc_spirv_caps_minimal(), caps_full()};
  for (size_t i = 0; i < sizeof graphs / sizeof graphs[0]; i++) {
    dmlc_diag diag = {0};
    dmlc_ir_graph *g = NULL;
    ck_assert_int_eq(dmlc_ir_parse(graphs[i], strlen(graphs[i]), "t.dmlir", &g, &diag), DMLC_OK);
    ck_assert_msg(dmlc_run_pipeline(&g, DMLC_DEFAULT_PIPELINE, NULL, &diag) == DMLC_OK, "%s",
                  diag.message);
    dmlc_kernel_plan plan;
    ck_assert_msg(dmlc_kernel_plan_build(g, &plan, &diag) == DMLC_OK, "%s", diag.message);
    for (uint32_t j = 0; j < plan.num_kernels; j++)
      for (uint32_t c = 0; c < 2; c++) {
        dmlc_spirv_module m;
        compile_ok(&plan.kernels[j], &caps[c], &m);
        dmlc_spirv_module_free(&m);
      }
    dmlc_kernel_plan_free(&plan);
    dmlc_ir_graph_destroy(g);
  }
}
END_TEST

/* Buffers beyond the device's maxStorageBufferRange: bound as windows (an
 * array binding), indexed NonUniform where the device allows it and through
 * constant indices otherwise; buffers within the range stay one descriptor
 * and their modules do not change. */
START_TEST(buffers_beyond_the_storage_range_are_windows) {
  /* Read f32 [8, 300] = 9600 bytes; index u32 [8] = 32 bytes; one-hot f16
   * [8, 300] = 4800 bytes. */
  const dmlc_kdesc k = reduction(2, (const uint32_t[]){8, 300}, 2, DMLC_DTYPE_F32, DMLC_OP_ARGMAX,
                                 DMLC_DIRECTION_INCREASING, DMLC_DTYPE_U32, DMLC_DTYPE_F16);
  const dmlc_spirv_caps base[2] = {dmlc_spirv_caps_minimal(), caps_full()};
  for (uint32_t c = 0; c < 2; c++)
    for (uint32_t nonuniform = 0; nonuniform < 2; nonuniform++) {
      dmlc_spirv_caps caps = base[c];
      caps.max_storage_range = 1000; /* windows of 512 bytes */
      caps.storage_buffer_array_nonuniform = nonuniform;
      dmlc_spirv_module m;
      compile_ok(&k, &caps, &m);
      ck_assert_uint_eq(m.bindings[0].count, 19); /* ceil(9600 / 512) */
      ck_assert_uint_eq(m.bindings[0].window_bytes, 512);
      ck_assert_uint_eq(m.bindings[1].count, 1);
      ck_assert_uint_eq(m.bindings[1].window_bytes, 0);
      ck_assert_uint_eq(m.bindings[2].count, 10); /* ceil(4800 / 512) */
      ck_assert_int_eq(m.nonuniform_indexing, nonuniform);
      char *text = disassemble(&m);
      ck_assert_ptr_nonnull(strstr(text, "OpTypeArray %_struct_"));
      ck_assert_ptr_nonnull(strstr(text, "%uint_19"));
      if (nonuniform) {
        ck_assert_ptr_nonnull(strstr(text, "OpCapability StorageBufferArrayNonUniformIndexing"));
        ck_assert_ptr_nonnull(strstr(text, "NonUniform\n"));
        ck_assert_ptr_null(strstr(text, "OpSwitch"));
      } else {
        ck_assert_ptr_null(strstr(text, "NonUniformIndexing"));
        ck_assert_ptr_nonnull(strstr(text, "OpSwitch"));
      }
      free(text);
      dmlc_spirv_module_free(&m);
    }
  /* Every dtype, both reduction paths and every store path with tiny
   * windows validates: [16, 40] reducing the rows (a workgroup per row)
   * and [40, 16] reducing the columns (an invocation per column). */
  const dmlc_dtype hot[] = {DMLC_DTYPE_F32, DMLC_DTYPE_F16, DMLC_DTYPE_U8, DMLC_DTYPE_F64};
  for (uint32_t t = 0; t < NUM_READ_DTYPES; t++)
    for (uint32_t rows = 0; rows < 2; rows++)
      for (uint32_t c = 0; c < 4; c++) {
        dmlc_spirv_caps caps = base[c & 1];
        caps.max_storage_range = 256;
        caps.storage_buffer_array_nonuniform = c >= 2;
        const uint32_t dims[2] = {rows ? 16 : 40, rows ? 40 : 16};
        const dmlc_kdesc r = reduction(2, dims, rows ? 2u : 1u, read_dtypes[t], DMLC_OP_ARGMIN,
                                       DMLC_DIRECTION_DECREASING, DMLC_DTYPE_I64, hot[(t + c) % 4]);
        dmlc_spirv_module m;
        compile_ok(&r, &caps, &m);
        ck_assert_uint_gt(m.bindings[0].count, 1);
        ck_assert_uint_gt(m.bindings[2].count, 1);
        dmlc_spirv_module_free(&m);
      }
  /* Copies through windows too. */
  for (uint32_t f = 0; f < NUM_READ_DTYPES; f++) {
    const dmlc_kdesc e = elementwise(read_dtypes[f], DMLC_DTYPE_F64);
    dmlc_spirv_caps caps = base[f & 1];
    caps.max_storage_range = 256;
    dmlc_spirv_module m;
    dmlc_diag diag = {0};
    const dmlc_status s = dmlc_spirv_compile(&e, &caps, &m, &diag);
    ck_assert_msg(s == DMLC_OK || s == DMLC_ERROR_UNSUPPORTED, "%s", diag.message);
    if (s == DMLC_OK)
      ck_assert_uint_gt(m.bindings[1].count, 1);
    dmlc_spirv_module_free(&m);
  }
  /* Within the range: one descriptor and the very module of an unlimited
   * device. */
  dmlc_spirv_caps unlimited = caps_full(), ranged = caps_full();
  ranged.max_storage_range = 9600;
  dmlc_spirv_module a, b;
  compile_ok(&k, &unlimited, &a);
  compile_ok(&k, &ranged, &b);
  ck_assert_uint_eq(b.bindings[0].count, 1);
  ck_assert_uint_eq(a.num_words, b.num_words);
  ck_assert(!memcmp(a.words, b.words, a.num_words * sizeof *a.words));
  dmlc_spirv_module_free(&a);
  dmlc_spirv_module_free(&b);
  /* Too many windows, or too many descriptors: refused, not miscompiled. */
  dmlc_diag diag = {0};
  ranged.max_storage_range = 16; /* 600 windows */
  ck_assert_int_eq(dmlc_spirv_compile(&k, &ranged, &a, &diag), DMLC_ERROR_UNSUPPORTED);
  ck_assert_ptr_nonnull(strstr(diag.message, "windows"));
  ranged.max_storage_range = 1000;
  ranged.max_storage_buffers = 16; /* needs 19 + 1 + 10 */
  ck_assert_int_eq(dmlc_spirv_compile(&k, &ranged, &a, &diag), DMLC_ERROR_UNSUPPORTED);
  ck_assert_ptr_nonnull(strstr(diag.message, "descriptors"));
}
END_TEST

static Suite *spirv_suite(void) {
  Suite *s = suite_create("spirv");
  TCase *tc = tcase_create("compile");
  tcase_set_timeout(tc, 300);
  tcase_add_test(tc, every_read_dtype_shape_and_direction_validates);
  tcase_add_test(tc, every_output_dtype_validates);
  tcase_add_test(tc, several_reduced_dims_and_strides);
  tcase_add_test(tc, paths_and_launch_sizes);
  tcase_add_test(tc, copies_validate_or_are_unsupported);
  tcase_add_test(tc, native_widths_follow_the_caps);
  tcase_add_test(tc, constant_only_kernel);
  tcase_add_test(tc, broken_module_fails_validation_with_message);
  tcase_add_test(tc, kernel_plans_compile);
  tcase_add_test(tc, buffers_beyond_the_storage_range_are_windows);
  suite_add_tcase(s, tc);
  return s;
}

int main(void) {
  Suite *suites[] = {spirv_suite()};
  return dmlc_test_run_suites(suites, 1);
}
