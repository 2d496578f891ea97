/* The Vulkan runtime: device selection, the caps it reports, the error when
 * there is no device, and real plans executed on the device and compared
 * byte for byte with the reference evaluator. Registered with the Khronos
 * validation layer enabled: any message it reports fails the call that
 * caused it, and so the test. */
#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "codegen/kernel_desc.h"
#include "dmlc/dmlc.h"
#include "passes/passes.h"
#include "runtime/reference/reference.h"
#include "runtime/vulkan/vk_device.h"
#include "testutil.h"

static dmlc_vk_device *open_device(void) {
  dmlc_diag diag = {0};
  dmlc_vk_device *dev = NULL;
  const dmlc_status status = dmlc_vk_device_open(&dev, &diag);
  ck_assert_msg(status == DMLC_OK, "%s", diag.message);
  return dev;
}

/* A device opened unsplit, with DMLC_VULKAN_STORAGE_RANGE set to range
 * (NULL: the device's own) and, if portable, DMLC_VULKAN_PORTABLE=1; the
 * variables are cleared again once it is open. */
static dmlc_vk_device *open_device_with(const char *range, bool portable) {
  unsetenv("DMLC_VULKAN_FORCE_SPLIT");
  if (range)
    setenv("DMLC_VULKAN_STORAGE_RANGE", range, 1);
  if (portable)
    setenv("DMLC_VULKAN_PORTABLE", "1", 1);
  dmlc_vk_device *dev = open_device();
  unsetenv("DMLC_VULKAN_STORAGE_RANGE");
  unsetenv("DMLC_VULKAN_PORTABLE");
  return dev;
}

/* open_device_with, planning as for a CPU device (DMLC_VULKAN_CPU_PLANS=1;
 * lavapipe is one anyway), so the CPU device's lone paths run on a GPU too. */
static dmlc_vk_device *open_cpu_plans_with(const char *range, bool portable) {
  setenv("DMLC_VULKAN_CPU_PLANS", "1", 1);
  dmlc_vk_device *dev = open_device_with(range, portable);
  unsetenv("DMLC_VULKAN_CPU_PLANS");
  const dmlc_spirv_caps *c = dmlc_vk_device_caps(dev);
  ck_assert(c->cpu_device);
  return dev;
}

/* ---- devices ---- */

START_TEST(device_opens_with_sane_caps) {
  dmlc_vk_device *dev = open_device();
  ck_assert_str_ne(dmlc_vk_device_name(dev), "");
  const dmlc_spirv_caps *c = dmlc_vk_device_caps(dev);
  /* Vulkan's required minimums. */
  ck_assert_uint_ge(c->max_workgroup_size, 128);
  ck_assert_uint_ge(c->max_workgroup_count, 65535);
  ck_assert_uint_ge(c->max_shared_bytes, 16384);
  if (c->subgroup_size) {
    ck_assert_uint_eq(c->subgroup_size & (c->subgroup_size - 1), 0);
    ck_assert_uint_le(c->subgroup_size, c->max_workgroup_size);
  } else {
    ck_assert(!c->subgroup_arithmetic && !c->subgroup_shuffle);
  }
  dmlc_vk_device_close(dev);
}
END_TEST

START_TEST(describe_lists_the_device) {
  dmlc_vk_device *dev = open_device();
  char *text = NULL;
  dmlc_diag diag = {0};
  ck_assert_msg(dmlc_vk_describe_devices(&text, &diag) == DMLC_OK, "%s", diag.message);
  ck_assert_ptr_nonnull(strstr(text, dmlc_vk_device_name(dev)));
  ck_assert_ptr_nonnull(strstr(text, "[selected]"));
  ck_assert_ptr_nonnull(strstr(text, "workgroup size"));
  free(text);
  dmlc_vk_device_close(dev);
}
END_TEST

START_TEST(env_selects_by_index_and_name) {
  dmlc_vk_device *dev = open_device();
  char name[256];
  snprintf(name, sizeof name, "%s", dmlc_vk_device_name(dev));
  dmlc_vk_device_close(dev);

  /* Which index the default is, from the listing. */
  char *text = NULL;
  dmlc_diag diag = {0};
  ck_assert_msg(dmlc_vk_describe_devices(&text, &diag) == DMLC_OK, "%s", diag.message);
  const char *line = strstr(text, "[selected]");
  while (line > text && line[-1] != '\n')
    line--;
  unsigned index = 0;
  ck_assert_int_eq(sscanf(line, "vulkan %u:", &index), 1);
  free(text);

  char value[32];
  snprintf(value, sizeof value, "%u", index);
  setenv("DMLC_VULKAN_DEVICE", value, 1);
  dev = open_device();
  ck_assert_str_eq(dmlc_vk_device_name(dev), name);
  dmlc_vk_device_close(dev);

  /* A substring of the name, case-insensitively. */
  char sub[8] = {0};
  for (int i = 0; i < 4 && name[i + 1]; i++)
    sub[i] =
        (char)(i % 2 ? tolower((unsigned char)name[i + 1]) : toupper((unsigned char)name[i + 1]));
  setenv("DMLC_VULKAN_DEVICE", sub, 1);
  dev = open_device();
  ck_assert_str_eq(dmlc_vk_device_name(dev), name);
  dmlc_vk_device_close(dev);

  setenv("DMLC_VULKAN_DEVICE", "no-such-vulkan-device", 1);
  dev = NULL;
  ck_assert_int_eq(dmlc_vk_device_open(&dev, &diag), DMLC_ERROR_DEVICE);
  ck_assert_ptr_null(dev);
  ck_assert_ptr_nonnull(strstr(diag.message, "DMLC_VULKAN_DEVICE=no-such-vulkan-device"));
  ck_assert_ptr_nonnull(strstr(diag.message, name));

  setenv("DMLC_VULKAN_DEVICE", "4096", 1);
  ck_assert_int_eq(dmlc_vk_device_open(&dev, &diag), DMLC_ERROR_DEVICE);
  ck_assert_ptr_nonnull(strstr(diag.message, "no such device"));
  /* The listing still works, and says why nothing is selected. */
  ck_assert_msg(dmlc_vk_describe_devices(&text, &diag) == DMLC_OK, "%s", diag.message);
  ck_assert_ptr_null(strstr(text, "[selected]"));
  ck_assert_ptr_nonnull(strstr(text, "no device selected"));
  free(text);
  unsetenv("DMLC_VULKAN_DEVICE");
}
END_TEST

/* In a child process, so the loader sees the environment fresh: no driver
 * at all is an error with a message, never a crash. */
START_TEST(no_driver_is_a_clear_error) {
  const pid_t pid = fork();
  ck_assert_int_ge(pid, 0);
  if (pid == 0) {
    setenv("VK_ICD_FILENAMES", "/nonexistent/icd.json", 1);
    setenv("VK_DRIVER_FILES", "/nonexistent/icd.json", 1);
    dmlc_vk_device *dev = NULL;
    dmlc_diag diag = {0};
    int code = 0;
    if (dmlc_vk_device_open(&dev, &diag) != DMLC_ERROR_DEVICE || dev || !diag.message[0])
      code |= 1;
    fprintf(stderr, "open without a driver: %s\n", diag.message);
    char *text = NULL;
    dmlc_diag diag2 = {0};
    if (dmlc_vk_describe_devices(&text, &diag2) != DMLC_ERROR_DEVICE || text || !diag2.message[0])
      code |= 2;
    _exit(code);
  }
  int status = 0;
  ck_assert_int_eq(waitpid(pid, &status, 0), pid);
  ck_assert_msg(WIFEXITED(status), "the child crashed (signal %d)",
                WIFSIGNALED(status) ? WTERMSIG(status) : 0);
  ck_assert_msg(WEXITSTATUS(status) == 0, "child check %d failed", WEXITSTATUS(status));
}
END_TEST

/* ---- execution against the reference ---- */

/* A deterministic generator (xorshift64*). */
static uint64_t next(uint64_t *s) {
  *s ^= *s >> 12;
  *s ^= *s << 25;
  *s ^= *s >> 27;
  return *s * UINT64_C(0x2545f4914f6cdd1d);
}

/* What fill writes: random values, or a pattern whose answer a split
 * reduction's merge gets wrong if it merges parts out of index order. */
typedef enum fill_pattern {
  FILL_RANDOM,       /* small values, NaNs, infinities, signed zeros */
  FILL_TIES,         /* every element equal: the answer is the first or last index */
  FILL_PERIODIC_MAX, /* the maximum every 7th element, in every part */
  FILL_NANS,         /* small values with a NaN every 11th and a -NaN every 13th element */
  FILL_LEAST,        /* every element the type's least value (0, INT_MIN, -inf, false) */
  FILL_GREATEST,     /* every element the type's greatest value (all ones, INT_MAX, +inf) */
} fill_pattern;
static fill_pattern pattern = FILL_RANDOM;
/* check_against_reference: every reduction kernel must be split. */
static bool expect_split = false;
/* With expect_split, a split of rows (not column parts): its finish fused
 * into the parts exactly when the kernel writes index outputs only. */
static bool expect_fused_finish = false;
/* When set, every reducing kernel's dump has this line among the comment
 * lines under its first. */
static const char *expect_kernel_line = NULL;

/* Small values, so ties are common, with NaNs, infinities and signed zeros
 * among the floats (FILL_RANDOM; the other patterns as they say). */
static void fill(dmlc_dtype dtype, uint8_t *buf, uint64_t bytes, uint64_t seed) {
  uint64_t s = seed * 2654435761u + 1;
  const uint32_t size = dmlc_dtype_size(dtype);
  if (pattern == FILL_LEAST || pattern == FILL_GREATEST) {
    const bool great = pattern == FILL_GREATEST;
    const dmlc_dtype_info *info = dmlc_dtype_get(dtype);
    const float f = great ? INFINITY : -INFINITY;
    const double d = f;
    const uint16_t h = dmlc_f32_to_f16(f);
    for (uint64_t off = 0; off + size <= bytes; off += size) {
      if (dtype == DMLC_DTYPE_F32)
        memcpy(buf + off, &f, 4);
      else if (dtype == DMLC_DTYPE_F64)
        memcpy(buf + off, &d, 8);
      else if (dtype == DMLC_DTYPE_F16)
        memcpy(buf + off, &h, 2);
      else if (dtype == DMLC_DTYPE_BOOL)
        buf[off] = great;
      else /* little-endian: all ones, or the sign bit alone / all but it */
        for (uint32_t b = 0; b < size; b++)
          buf[off + b] = info->order == DMLC_ORDER_SIGNED && b == size - 1 ? (great ? 0x7f : 0x80)
                                                                           : (great ? 0xff : 0x00);
    }
    return;
  }
  for (uint64_t off = 0; off + size <= bytes; off += size) {
    const uint64_t r = next(&s), elem = off / size;
    int v = (int)(r % 7) - 3;
    uint32_t special = 4 + (uint32_t)(r >> 32) % 12; /* 0-3 below: NaN, -NaN, inf, -0 */
    if (pattern == FILL_RANDOM)
      special = (uint32_t)(r >> 32) % 16;
    else if (pattern == FILL_TIES)
      v = 1;
    else if (pattern == FILL_PERIODIC_MAX)
      v = elem % 7 == 3 ? 3 : -1;
    else if (elem % 11 == 5)
      special = 0;
    else if (elem % 13 == 7)
      special = 1;
    float f = (float)v;
    if (special == 0)
      f = NAN;
    else if (special == 1)
      f = -NAN;
    else if (special == 2)
      f = (r >> 40) & 1 ? INFINITY : -INFINITY;
    else if (special == 3)
      f = -0.0f;
    switch (dtype) {
    case DMLC_DTYPE_F32:
      memcpy(buf + off, &f, 4);
      break;
    case DMLC_DTYPE_F64: {
      const double d = f;
      memcpy(buf + off, &d, 8);
      break;
    }
    case DMLC_DTYPE_F16: {
      const uint16_t h = dmlc_f32_to_f16(f);
      memcpy(buf + off, &h, 2);
      break;
    }
    case DMLC_DTYPE_BOOL:
      buf[off] = (uint8_t)(r & 1);
      break;
    default: { /* integers: small values, sign-extended */
      const int64_t w = v;
      memcpy(buf + off, &w, size);
      break;
    }
    }
  }
}

typedef struct io_buffers {
  dmlc_buffer in[8], ref[8], dev[8];
  uint64_t in_bytes[8], out_bytes[8];
} io_buffers;

static void io_alloc(const dmlc_ir_graph *g, io_buffers *io, uint64_t seed) {
  memset(io, 0, sizeof *io);
  ck_assert_uint_le(g->num_inputs, 8);
  ck_assert_uint_le(g->num_outputs, 8);
  for (uint32_t i = 0; i < g->num_inputs; i++) {
    const uint64_t bytes = g->inputs[i].layout.size_bytes;
    io->in_bytes[i] = bytes;
    io->in[i] = (dmlc_buffer){malloc(bytes), bytes};
    fill(g->values[g->inputs[i].value].type.dtype, io->in[i].data, bytes, seed + i);
  }
  for (uint32_t o = 0; o < g->num_outputs; o++) {
    const uint64_t bytes = g->outputs[o].layout.size_bytes;
    io->out_bytes[o] = bytes;
    io->ref[o] = (dmlc_buffer){malloc(bytes), bytes};
    io->dev[o] = (dmlc_buffer){malloc(bytes), bytes};
    /* The same sentinel in both: gaps of strided outputs must survive. */
    memset(io->ref[o].data, 0xab, bytes);
    memset(io->dev[o].data, 0xab, bytes);
  }
}

static void io_free(const dmlc_ir_graph *g, io_buffers *io) {
  for (uint32_t i = 0; i < g->num_inputs; i++)
    free(io->in[i].data);
  for (uint32_t o = 0; o < g->num_outputs; o++) {
    free(io->ref[o].data);
    free(io->dev[o].data);
  }
}

/* Parses text, runs it on the reference and on the device (twice, to check
 * that re-running reuploads everything), and compares every output byte. */
static void check_against_reference(dmlc_vk_device *dev, const char *text, uint64_t seed) {
  dmlc_diag diag = {0};
  dmlc_ir_graph *g = NULL;
  ck_assert_msg(dmlc_ir_parse(text, strlen(text), "t.dmlir", &g, &diag) == DMLC_OK, "%s",
                diag.message);
  ck_assert_msg(dmlc_ir_verify(g, &diag) == DMLC_OK, "%s", diag.message);
  dmlc_ir_graph *fused = dmlc_ir_graph_clone(g);
  ck_assert_msg(dmlc_run_pipeline(&fused, DMLC_DEFAULT_PIPELINE, NULL, &diag) == DMLC_OK, "%s",
                diag.message);
  dmlc_kernel_plan plan;
  ck_assert_msg(dmlc_kernel_plan_build(fused, &plan, &diag) == DMLC_OK, "%s", diag.message);

  io_buffers io;
  io_alloc(g, &io, seed);
  ck_assert_msg(dmlc_reference_execute(g, io.in, io.ref, &diag) == DMLC_OK, "%s", diag.message);
  dmlc_vk_executable *exe = NULL;
  ck_assert_msg(dmlc_vk_executable_create(dev, &plan, io.in_bytes, g->num_inputs, io.out_bytes,
                                          g->num_outputs, &exe, &diag) == DMLC_OK,
                "%s", diag.message);
  dmlc_rt_binding in[16], out[16];
  ck_assert(g->num_inputs <= 16 && g->num_outputs <= 16);
  for (uint32_t i = 0; i < g->num_inputs; i++)
    in[i] = (dmlc_rt_binding){io.in[i].data, NULL, io.in[i].size_bytes};
  for (uint32_t o = 0; o < g->num_outputs; o++)
    out[o] = (dmlc_rt_binding){io.dev[o].data, NULL, io.dev[o].size_bytes};
  for (int run = 0; run < 2; run++) {
    /* the second run writes every output again (a fused finish whose
     * counters were not reset would write nothing) */
    for (uint32_t o = 0; o < g->num_outputs; o++)
      memset(io.dev[o].data, 0xab, io.out_bytes[o]);
    ck_assert_msg(dmlc_vk_execute(exe, in, out, &diag) == DMLC_OK, "%s", diag.message);
    for (uint32_t o = 0; o < g->num_outputs; o++) {
      const uint8_t *want = io.ref[o].data, *got = io.dev[o].data;
      /* memcmp first: a check per byte is a write to Check's pipe. */
      if (memcmp(want, got, io.out_bytes[o]) == 0)
        continue;
      uint64_t b = 0;
      while (want[b] == got[b])
        b++;
      ck_abort_msg("run %d, output %u, byte %llu: want 0x%02x, got 0x%02x\n%s", run, o,
                   (unsigned long long)b, want[b], got[b], text);
    }
  }
  const char *want_line = expect_split ? "// split: " : expect_kernel_line;
  if (want_line) {
    char *kernels = NULL;
    ck_assert_msg(dmlc_vk_executable_dump(exe, "kernels", &kernels, &diag) == DMLC_OK, "%s",
                  diag.message);
    for (uint32_t k = 0; k < plan.num_kernels; k++) {
      const char *at = strstr(kernels, "// kernel ");
      for (uint32_t j = 0; at && j < k; j++)
        at = strstr(at + 1, "// kernel ");
      ck_assert_ptr_nonnull(at);
      /* among the comment lines under the kernel's first */
      bool found = false;
      for (const char *line = strchr(at, '\n');
           line && strncmp(line + 1, "// ", 3) == 0 && strncmp(line + 1, "// kernel ", 10) != 0;
           line = strchr(line + 1, '\n')) {
        if (strncmp(line + 1, want_line, strlen(want_line)) != 0)
          continue;
        found = true;
        if (!expect_split || !expect_fused_finish)
          continue;
        /* index outputs only: the finish fused into the parts; one-hot or
         * constant outputs: a finish dispatch of its own */
        bool group_outputs = false;
        for (uint32_t o = 0; o < plan.kernels[k].num_outputs; o++)
          group_outputs |= plan.kernels[k].outputs[o].kind != DMLC_KOUT_INDEX;
        const char *end = strchr(line + 1, '\n');
        const char *fused = strstr(line + 1, "the last part of each to finish merges them");
        ck_assert_msg(group_outputs == !(fused && fused < end), "kernel %u: %.*s", k,
                      (int)(end - line - 1), line + 1);
      }
      ck_assert_msg(!plan.kernels[k].has_reduction || found, "kernel %u has no '%s' line:\n%s", k,
                    want_line, kernels);
    }
    free(kernels);
  }
  double ns[16];
  ck_assert_uint_eq(dmlc_vk_kernel_times(exe, ns, 16), plan.num_kernels);
  for (uint32_t k = 0; k < plan.num_kernels && k < 16; k++)
    ck_assert(ns[k] >= 0);
  char *asm_text = NULL;
  ck_assert_msg(dmlc_vk_disassemble(exe, &asm_text, &diag) == DMLC_OK, "%s", diag.message);
  if (plan.num_kernels)
    ck_assert_ptr_nonnull(strstr(asm_text, "OpEntryPoint"));
  free(asm_text);
  dmlc_vk_executable_destroy(exe);
  io_free(g, &io);
  dmlc_kernel_plan_free(&plan);
  dmlc_ir_graph_destroy(fused);
  dmlc_ir_graph_destroy(g);
}

static void check_all(const char *const *cases, size_t n) {
  dmlc_vk_device *dev = open_device();
  for (size_t i = 0; i < n; i++)
    check_against_reference(dev, cases[i], i + 1);
  dmlc_vk_device_close(dev);
}

START_TEST(argmax_argmin_hardmax_match_the_reference) {
  static const char *const cases[] = {
      "graph @h(%x: f32[2,2,2]) -> (f32[2,2,2]) {\n"
      "  %0 = hardmax %x {axes = [0, 2]} : f32[2,2,2]\n  return %0\n}\n",
      "graph @s(%x: f32[64,100]) -> (f32[64,100], i64[64,1]) {\n"
      "  %0 = hardmax %x {axes = [1]} : f32[64,100]\n"
      "  %1 = argmax %x {axes = [1]} : i64[64,1]\n  return %0, %1\n}\n",
      "graph @c(%x: u8[4,6,5]) -> (u32[1,6,5]) {\n"
      "  %0 = argmin %x {axes = [0], direction = decreasing} : u32[1,6,5]\n  return %0\n}\n",
      "graph @fuse(%x: f32[2,2,2], %y: f32[2,3,4,5]) -> (%mask: f32[2,2,2], %idx: i64[1,2,2], "
      "%first: i64[2,3,1,1], %onehot: f32[2,3,4,5]) {\n"
      "  %0 = hardmax %x {axes = [0, 2]} : f32[2,2,2]\n"
      "  %1 = argmax %x {axes = [0], direction = decreasing} : i64[1,2,2]\n"
      "  %2 = argmax %y {axes = [3, 2], direction = increasing} : i64[2,3,1,1]\n"
      "  %3 = hardmax %y {axes = [2, 3]} : f32[2,3,4,5]\n  return %0, %1, %2, %3\n}\n",
      "graph @f(%x: f32[3,1], %y: f16[3,1]) -> (i32[3,1], f16[3,1]) {\n"
      "  %0 = argmax %x {axes = [1]} : i32[3,1]\n"
      "  %1 = hardmax %y {axes = [1]} : f16[3,1]\n  return %0, %1\n}\n",
      "graph @types(%a: i8[5,7], %b: i16[5,7], %c: u16[5,7], %d: i64[5,7], %e: u8[5,7], "
      "%f: f16[5,7]) -> (u32[5,1], i32[1,7], u64[5,1], i32[1,7], u32[5,1], i64[5,1]) {\n"
      "  %0 = argmax %a {axes = [1]} : u32[5,1]\n"
      "  %1 = argmin %b {axes = [0]} : i32[1,7]\n"
      "  %2 = argmax %c {axes = [1], direction = decreasing} : u64[5,1]\n"
      "  %3 = argmin %d {axes = [0]} : i32[1,7]\n"
      "  %4 = argmax %e {axes = [1]} : u32[5,1]\n"
      "  %5 = argmin %f {axes = [1], direction = decreasing} : i64[5,1]\n"
      "  return %0, %1, %2, %3, %4, %5\n}\n",
  };
  check_all(cases, sizeof cases / sizeof *cases);
}
END_TEST

START_TEST(strided_and_broadcast_layouts_match_the_reference) {
  static const char *const cases[] = {
      "graph @layouts(%p: f32[4,6]{strides = [8, 1]}, %b: f16[4,6]{strides = [0, 1]}, "
      "%t: i8[4,6]{strides = [1, 4]}) -> (%strided: u32[4,1]{strides = [3, 1]}, "
      "%transposed: f16[4,6]{strides = [1, 4]}, %rows: u64[1,6]) {\n"
      "  %0 = argmax %p {axes = [1]} : u32[4,1]\n"
      "  %1 = hardmax %b {axes = [1]} : f16[4,6]\n"
      "  %2 = argmin %t {axes = [0], direction = decreasing} : u64[1,6]\n"
      "  return %0, %1, %2\n}\n",
      "graph @strided_outputs(%x: f32[2,3,4], %a: f32[5,6], %y: f32[2,3,5]) -> (%idx: "
      "u32[2,3,1]{strides = [4, 1, 1]}, %copy: f32[5,6]{strides = [8, 1]}, %red: "
      "u32[1,1,5]{strides = [100, 10, 1]}, u32[1,1]) {\n"
      "  %0 = argmax %x {axes = [2]} : u32[2,3,1]\n"
      "  %1 = argmin %y {axes = [1, 0]} : u32[1,1,5]\n"
      "  %2 = argmax %a {axes = [0, 1]} : u32[1,1]\n  return %0, %a, %1, %2\n}\n",
      "graph @broadcast(%x: f32[3,4]{strides = [0, 1]}, %y: f32[3,4]{strides = [1, 0]}, "
      "%z: f32[3,4]{strides = [0, 0]}, %w: f32[2,3,4]{strides = [4, 0, 1]}) -> (u32[1,1], "
      "u32[1,1], u32[1,1], u32[2,1,1]) {\n"
      "  %0 = argmax %x {axes = [0, 1]} : u32[1,1]\n"
      "  %1 = argmax %y {axes = [1, 0]} : u32[1,1]\n"
      "  %2 = argmin %z {axes = [0, 1], direction = decreasing} : u32[1,1]\n"
      "  %3 = argmax %w {axes = [1, 2]} : u32[2,1,1]\n  return %0, %1, %2, %3\n}\n",
      "graph @fallback(%x: f32[2,3,20], %y: i32[2,3,4]{strides = [100, 30, 1]}) -> (%a: "
      "u32[2,3,1]{strides = [1, 2, 1]}, %b: u32[2,1,1], %x: f32[2,3,20]) {\n"
      "  %0 = reshape %x : f32[6,20]\n  %1 = argmin %0 {axes = [1]} : u32[6,1]\n"
      "  %2 = reshape %1 : u32[2,3,1]\n  %3 = reshape %y : i32[2,12]\n"
      "  %4 = argmax %3 {axes = [1]} : u32[2,1]\n  %5 = reshape %4 : u32[2,1,1]\n"
      "  return %2, %5, %x\n}\n",
  };
  check_all(cases, sizeof cases / sizeof *cases);
}
END_TEST

/* Kernels reading what earlier ones wrote: temporaries and the barriers
 * between kernels. */
START_TEST(chained_kernels_match_the_reference) {
  static const char *const cases[] = {
      "graph @t(%x: f32[8,50]) -> (u32[1,50]) {\n"
      "  %0 = hardmax %x {axes = [1]} : f32[8,50]\n"
      "  %1 = argmax %0 {axes = [0]} : u32[1,50]\n  return %1\n}\n",
      "graph @t(%x: f16[8,50]) -> (f16[8,50], u32[8,1]) {\n"
      "  %0 = hardmax %x {axes = [1]} : f16[8,50]\n"
      "  %1 = hardmax %0 {axes = [0]} : f16[8,50]\n"
      "  %2 = argmin %1 {axes = [1], direction = decreasing} : u32[8,1]\n  return %1, %2\n}\n",
      "graph @t(%x: f32[300,2000]) -> (i64[300,1], f32[300,2000]) {\n"
      "  %0 = hardmax %x {axes = [0]} : f32[300,2000]\n"
      "  %1 = argmax %0 {axes = [1], direction = decreasing} : i64[300,1]\n"
      "  return %1, %0\n}\n",
  };
  check_all(cases, sizeof cases / sizeof *cases);
}
END_TEST

/* Reduced extents far beyond one invocation's share: the workgroup path. */
START_TEST(large_reductions_match_the_reference) {
  static const char *const cases[] = {
      "graph @rows(%x: f32[4,100000]) -> (u32[4,1], f32[4,100000]) {\n"
      "  %0 = argmax %x {axes = [1]} : u32[4,1]\n"
      "  %1 = hardmax %x {axes = [1]} : f32[4,100000]\n  return %0, %1\n}\n",
      "graph @half(%x: f16[3,70001]) -> (i64[3,1]) {\n"
      "  %0 = argmin %x {axes = [1], direction = decreasing} : i64[3,1]\n  return %0\n}\n",
      "graph @cols(%x: u8[50000,6]) -> (u32[1,6]) {\n"
      "  %0 = argmax %x {axes = [0]} : u32[1,6]\n  return %0\n}\n",
      "graph @all(%x: i32[300,700]) -> (u32[1,1]) {\n"
      "  %0 = argmin %x {axes = [0, 1]} : u32[1,1]\n  return %0\n}\n",
  };
  check_all(cases, sizeof cases / sizeof *cases);
}
END_TEST

/* More workgroups than one dispatch may have (65535 on most devices): the
 * runtime dispatches in chunks with a workgroup offset. */
START_TEST(many_workgroups_are_dispatched_in_chunks) {
  static const char *const cases[] = {
      /* A workgroup per row: 140000 groups. */
      "graph @rows(%x: f16[140000,300]) -> (u32[140000,1]) {\n"
      "  %0 = argmax %x {axes = [1]} : u32[140000,1]\n  return %0\n}\n",
      "graph @onehot(%x: f32[70000,40]) -> (f32[70000,40]) {\n"
      "  %0 = hardmax %x {axes = [1]} : f32[70000,40]\n  return %0\n}\n",
      /* An invocation per element: 16.8M / 256 > 65535 groups. */
      "graph @copy(%x: u8[16800000]) -> (u8[16800000]) {\n  return %x\n}\n",
  };
  check_all(cases, sizeof cases / sizeof *cases);
}
END_TEST

/* Buffers beyond one descriptor's reach (maxStorageBufferRange: 128 MiB on
 * lavapipe) are bound as windows: reads and writes across the window
 * boundaries, a last window cut short, row and column reductions. A device
 * that reaches further (a GPU's 4 GiB) is held to 128 MiB by
 * DMLC_VULKAN_STORAGE_RANGE, so the buffers are windowed on every device. */
START_TEST(buffers_beyond_the_storage_range_are_windowed) {
  dmlc_vk_device *dev = open_device_with("134217728", false);
  ck_assert_uint_le(dmlc_vk_device_caps(dev)->max_storage_range, UINT64_C(1) << 27);
  static const char *const cases[] = {
      "graph @rows(%x: f32[8192,8192]) -> (u32[8192,1]) {\n"
      "  %0 = argmax %x {axes = [1]} : u32[8192,1]\n  return %0\n}\n",
      "graph @cols(%x: f32[8200,8192]) -> (i64[1,8192]) {\n"
      "  %0 = argmin %x {axes = [0], direction = decreasing} : i64[1,8192]\n  return %0\n}\n",
      "graph @copy(%x: u8[300000000]) -> (u8[300000000]) {\n  return %x\n}\n",
  };
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++)
    check_against_reference(dev, cases[i], i + 1);
  dmlc_vk_device_close(dev);
}
END_TEST

/* Every input dtype with every index dtype (argmax/argmin, row and column,
 * small and workgroup reductions), hardmax and copies in the input's dtype,
 * on the native path (8/16/64-bit loads and stores where the device has
 * them) and on the portable one (DMLC_VULKAN_PORTABLE=1: 32-bit words). */
static void check_every_dtype_pair(bool portable) {
  if (portable)
    setenv("DMLC_VULKAN_PORTABLE", "1", 1);
  else
    unsetenv("DMLC_VULKAN_PORTABLE");
  dmlc_vk_device *dev = open_device();
  unsetenv("DMLC_VULKAN_PORTABLE");
  const dmlc_spirv_caps *c = dmlc_vk_device_caps(dev);
  if (portable)
    ck_assert(!c->shader_int64 && !c->shader_int16 && !c->shader_int8 && !c->shader_float16 &&
              !c->storage_8bit && !c->storage_16bit);
  static const char *const in_types[] = {"f16", "f32", "i8",  "i16", "i32",
                                         "i64", "u8",  "u16", "u32", "u64"};
  /* Each index dtype twice: a row and a column reduction. */
  static const char *const idx_types[] = {"i32", "i64", "u32", "u64", "u64", "u32", "i64", "i32"};
  char text[4096];
  uint64_t seed = portable ? 1000 : 1;
  for (size_t t = 0; t < sizeof in_types / sizeof *in_types; t++) {
    const char *d = in_types[t];
    /* Eight index outputs: rows of 40 (workgroups) and columns of 6. */
    int n = snprintf(text, sizeof text, "graph @idx(%%x: %s[6,40]) -> (", d);
    for (int i = 0; i < 8; i++)
      n += snprintf(text + n, sizeof text - (size_t)n, "%s%s[%s]", i ? ", " : "", idx_types[i],
                    i % 2 ? "1,40" : "6,1");
    n += snprintf(text + n, sizeof text - (size_t)n, ") {\n");
    for (int i = 0; i < 8; i++)
      n += snprintf(text + n, sizeof text - (size_t)n, "  %%%d = %s %%x {axes = [%d]%s} : %s[%s]\n",
                    i, i % 4 < 2 ? "argmax" : "argmin", i % 2 ? 0 : 1,
                    i % 3 ? ", direction = decreasing" : "", idx_types[i], i % 2 ? "1,40" : "6,1");
    n += snprintf(text + n, sizeof text - (size_t)n,
                  "  return %%0, %%1, %%2, %%3, %%4, %%5, %%6, %%7\n}\n");
    ck_assert_int_lt(n, (int)sizeof text);
    check_against_reference(dev, text, seed++);
    /* A copy, a strided read, and hardmax (one-hot in the input's dtype)
     * where the operator takes the dtype. */
    const bool fl = d[0] == 'f';
    n = snprintf(text, sizeof text,
                 "graph @hot(%%x: %s[5,300], %%y: %s[7,9]{strides = [1, 7]}) -> (%s[5,300], "
                 "u64[7,1], i64[1,9]%s%s%s%s%s) {\n"
                 "  %%0 = argmin %%y {axes = [1]} : u64[7,1]\n"
                 "  %%1 = argmax %%y {axes = [0], direction = decreasing} : i64[1,9]\n",
                 d, d, d, fl ? ", " : "", fl ? d : "", fl ? "[5,300], " : "", fl ? d : "",
                 fl ? "[7,9]" : "");
    if (fl)
      n += snprintf(text + n, sizeof text - (size_t)n,
                    "  %%2 = hardmax %%x {axes = [1]} : %s[5,300]\n"
                    "  %%3 = hardmax %%y {axes = [0]} : %s[7,9]\n"
                    "  return %%x, %%0, %%1, %%2, %%3\n}\n",
                    d, d);
    else
      n += snprintf(text + n, sizeof text - (size_t)n, "  return %%x, %%0, %%1\n}\n");
    ck_assert_int_lt(n, (int)sizeof text);
    check_against_reference(dev, text, seed++);
  }
  /* f64, which no operator reads, copied (strided, so a kernel moves it). */
  check_against_reference(
      dev, "graph @c(%x: f64[7,9]{strides = [1, 7]}) -> (f64[7,9]) {\n  return %x\n}\n", seed);
  dmlc_vk_device_close(dev);
}

START_TEST(every_dtype_pair_native_path) { check_every_dtype_pair(false); }
END_TEST

START_TEST(every_dtype_pair_portable_path) { check_every_dtype_pair(true); }
END_TEST

/* ---- split reductions ---- */

/* Graphs whose reductions, split into parts (DMLC_VULKAN_FORCE_SPLIT: 4 per
 * kept point), put ties, NaNs and maxima on both sides of part boundaries:
 * rows, columns, all axes, non-adjacent axes, both directions, every
 * width of key (8 to 64 bits, pairs of words on the portable path), parts
 * short enough for one-invocation groups and long enough for subgroups,
 * and hardmax, whose finish writes the one-hot outputs part by part. */
static const char *const split_cases[] = {
    "graph @rows(%x: f32[3,37]) -> (u32[3,1], i64[3,1], u32[3,1], i32[3,1]) {\n"
    "  %0 = argmax %x {axes = [1]} : u32[3,1]\n"
    "  %1 = argmax %x {axes = [1], direction = decreasing} : i64[3,1]\n"
    "  %2 = argmin %x {axes = [1]} : u32[3,1]\n"
    "  %3 = argmin %x {axes = [1], direction = decreasing} : i32[3,1]\n"
    "  return %0, %1, %2, %3\n}\n",
    "graph @cols(%x: f16[37,3]) -> (u32[1,3], u64[1,3]) {\n"
    "  %0 = argmax %x {axes = [0]} : u32[1,3]\n"
    "  %1 = argmin %x {axes = [0], direction = decreasing} : u64[1,3]\n"
    "  return %0, %1\n}\n",
    "graph @all(%x: f32[5,9,7]) -> (u32[1,1,1], u32[1,1,1]) {\n"
    "  %0 = argmax %x {axes = [0, 1, 2]} : u32[1,1,1]\n"
    "  %1 = argmin %x {axes = [0, 1, 2], direction = decreasing} : u32[1,1,1]\n"
    "  return %0, %1\n}\n",
    "graph @nonadj(%x: i8[6,5,7]) -> (i32[1,5,1], i32[1,5,1]) {\n"
    "  %0 = argmax %x {axes = [0, 2]} : i32[1,5,1]\n"
    "  %1 = argmin %x {axes = [0, 2], direction = decreasing} : i32[1,5,1]\n"
    "  return %0, %1\n}\n",
    "graph @wide(%x: i64[4,50], %y: u64[50,2]) -> (u32[4,1], u32[4,1], i64[1,2]) {\n"
    "  %0 = argmax %x {axes = [1], direction = decreasing} : u32[4,1]\n"
    "  %1 = argmin %x {axes = [1]} : u32[4,1]\n"
    "  %2 = argmax %y {axes = [0]} : i64[1,2]\n"
    "  return %0, %1, %2\n}\n",
    "graph @narrow(%x: u8[2,1000], %y: i16[3,301], %z: u16[301,2]) -> (u32[2,1], u32[3,1], "
    "u32[1,2]) {\n"
    "  %0 = argmax %x {axes = [1], direction = decreasing} : u32[2,1]\n"
    "  %1 = argmin %y {axes = [1]} : u32[3,1]\n"
    "  %2 = argmax %z {axes = [0]} : u32[1,2]\n"
    "  return %0, %1, %2\n}\n",
    "graph @hot(%x: f32[3,41], %y: f16[41,3]) -> (f32[3,41], f16[41,3]) {\n"
    "  %0 = hardmax %x {axes = [1]} : f32[3,41]\n"
    "  %1 = hardmax %y {axes = [0]} : f16[41,3]\n"
    "  return %0, %1\n}\n",
    "graph @two(%x: f32[2]) -> (u32[1], u32[1]) {\n"
    "  %0 = argmax %x {axes = [0]} : u32[1]\n"
    "  %1 = argmax %x {axes = [0], direction = decreasing} : u32[1]\n"
    "  return %0, %1\n}\n",
};

/* Every case under every fill pattern, seeds from seed0. */
static void check_cases_all_fills(dmlc_vk_device *dev, const char *const *cases, size_t n,
                                  uint64_t seed0, uint64_t per_fill) {
  for (int p = FILL_RANDOM; p <= FILL_GREATEST; p++) {
    pattern = (fill_pattern)p;
    for (size_t i = 0; i < n; i++)
      check_against_reference(dev, cases[i], seed0 + per_fill * (uint64_t)p + i);
  }
  pattern = FILL_RANDOM;
}

static void check_forced_split(bool portable) {
  setenv("DMLC_VULKAN_FORCE_SPLIT", "1", 1);
  if (portable)
    setenv("DMLC_VULKAN_PORTABLE", "1", 1);
  dmlc_vk_device *dev = open_device();
  unsetenv("DMLC_VULKAN_FORCE_SPLIT");
  unsetenv("DMLC_VULKAN_PORTABLE");
  ck_assert(dmlc_vk_device_caps(dev)->force_split);
  expect_split = expect_fused_finish = true;
  check_cases_all_fills(dev, split_cases, sizeof split_cases / sizeof *split_cases, 0, 100);
  expect_split = expect_fused_finish = false;
  dmlc_vk_device_close(dev);
}

START_TEST(forced_split_merges_in_index_order_native_path) { check_forced_split(false); }
END_TEST

START_TEST(forced_split_merges_in_index_order_portable_path) { check_forced_split(true); }
END_TEST

/* Without forcing: a reduction with one kept point (greedy decoding at
 * batch 1, argmax over every axis) splits on any device that reports how
 * many workgroups fill it, and matches the reference. */
START_TEST(few_outputs_split_across_workgroups) {
  for (int portable = 0; portable < 2; portable++) {
    dmlc_vk_device *dev = open_device_with(NULL, portable);
    const dmlc_spirv_caps *c = dmlc_vk_device_caps(dev);
    ck_assert(!c->force_split);
    ck_assert_uint_gt(c->fill_groups, 1);
    ck_assert_uint_le(c->fill_groups, c->max_workgroup_count);
    /* 128 KiB or more: a CPU device (lavapipe) splits no smaller read,
     * and there the argmax and argmin parts are an invocation each */
    static const char *const cases[] = {
        "graph @vocab(%x: f32[1,300000]) -> (i64[1,1]) {\n"
        "  %0 = argmax %x {axes = [1]} : i64[1,1]\n  return %0\n}\n",
        "graph @mid(%x: f16[1,70000]) -> (u32[1,1]) {\n"
        "  %0 = argmin %x {axes = [1]} : u32[1,1]\n  return %0\n}\n",
        "graph @all(%x: f16[800,801]) -> (u32[1,1]) {\n"
        "  %0 = argmin %x {axes = [0, 1], direction = decreasing} : u32[1,1]\n  return %0\n}\n",
        "graph @hot(%x: f32[1,300001]) -> (f32[1,300001]) {\n"
        "  %0 = hardmax %x {axes = [1]} : f32[1,300001]\n  return %0\n}\n",
        "graph @rows(%x: f16[20,30000]) -> (u32[20,1]) {\n"
        "  %0 = argmax %x {axes = [1]} : u32[20,1]\n  return %0\n}\n",
        "graph @narrow(%x: i8[2,600001], %y: i64[3,50000]) -> (u32[2,1], u32[3,1]) {\n"
        "  %0 = argmax %x {axes = [1], direction = decreasing} : u32[2,1]\n"
        "  %1 = argmin %y {axes = [1]} : u32[3,1]\n  return %0, %1\n}\n",
    };
    expect_split = expect_fused_finish = true;
    check_cases_all_fills(dev, cases, sizeof cases / sizeof *cases, 7, 10);
    expect_split = expect_fused_finish = false;
    dmlc_vk_device_close(dev);
  }
}
END_TEST

/* 16-byte loads: columns whose innermost kept dim makes whole vectors
 * (16, 8, 4 and 2 columns per invocation for 1-, 2-, 4- and 8-byte
 * elements), non-adjacent and leading kept dims, hardmax's one-hot columns;
 * rows long enough that each lane group's span, the spans' uneven end and
 * the points past the last whole vector all matter. Ties, NaNs and random
 * values, native and portable paths, against the reference. */
static const char *const vector_cases[] = {
    "graph @c8(%x: u8[37,2048], %y: i8[5,3,2048]) -> (u32[1,2048], i32[5,1,2048]) {\n"
    "  %0 = argmax %x {axes = [0]} : u32[1,2048]\n"
    "  %1 = argmin %y {axes = [1], direction = decreasing} : i32[5,1,2048]\n"
    "  return %0, %1\n}\n",
    "graph @c16(%x: f16[29,2048], %y: u16[33,1024]) -> (u64[1,2048], u32[1,1024]) {\n"
    "  %0 = argmin %x {axes = [0]} : u64[1,2048]\n"
    "  %1 = argmax %y {axes = [0], direction = decreasing} : u32[1,1024]\n"
    "  return %0, %1\n}\n",
    "graph @c32(%x: f32[19,1024], %y: f32[6,7,1024]) -> (f32[19,1024], u32[1,7,1024]) {\n"
    "  %0 = hardmax %x {axes = [0]} : f32[19,1024]\n"
    "  %1 = argmax %y {axes = [0]} : u32[1,7,1024]\n"
    "  return %0, %1\n}\n",
    "graph @c64(%x: i64[21,1024], %y: u64[9,1024]) -> (u32[1,1024], u32[1,1024]) {\n"
    "  %0 = argmax %x {axes = [0]} : u32[1,1024]\n"
    "  %1 = argmin %y {axes = [0], direction = decreasing} : u32[1,1024]\n"
    "  return %0, %1\n}\n",
    /* reduced dims outside the innermost ([r, k, r]): whole vectors of
     * the innermost dim, each at its own offset */
    "graph @rkr(%x: f32[6,5,64], %y: u8[3,7,48], %z: f16[4,3,2,40]) -> (u32[1,5,1], "
    "f32[6,5,64], i64[1,1,2,1], u32[1,7,1]) {\n"
    "  %0 = argmin %x {axes = [0, 2]} : u32[1,5,1]\n"
    "  %1 = hardmax %x {axes = [0, 2]} : f32[6,5,64]\n"
    "  %2 = argmax %z {axes = [0, 1, 3], direction = decreasing} : i64[1,1,2,1]\n"
    "  %3 = argmax %y {axes = [0, 2]} : u32[1,7,1]\n"
    "  return %0, %1, %2, %3\n}\n",
    "graph @rkr64(%x: i64[6,3,8], %y: u16[5,2,64]) -> (u32[1,3,1], u32[1,2,1]) {\n"
    "  %0 = argmax %x {axes = [0, 2]} : u32[1,3,1]\n"
    "  %1 = argmin %y {axes = [0, 2], direction = decreasing} : u32[1,2,1]\n"
    "  return %0, %1\n}\n",
    "graph @rows(%x: f32[2,1000], %y: i64[3,998], %z: u8[2,4112]) -> (u32[2,1], u32[3,1], "
    "u32[2,1]) {\n"
    "  %0 = argmax %x {axes = [1], direction = decreasing} : u32[2,1]\n"
    "  %1 = argmin %y {axes = [1]} : u32[3,1]\n"
    "  %2 = argmax %z {axes = [1]} : u32[2,1]\n"
    "  return %0, %1, %2\n}\n",
};

static void check_vector_cases(bool portable) {
  dmlc_vk_device *dev = open_device_with(NULL, portable);
  check_cases_all_fills(dev, vector_cases, sizeof vector_cases / sizeof *vector_cases, 300, 10);
  dmlc_vk_device_close(dev);
}

START_TEST(vector_reads_match_the_reference_native_path) { check_vector_cases(false); }
END_TEST

START_TEST(vector_reads_match_the_reference_portable_path) { check_vector_cases(true); }
END_TEST

/* Vector columns of many reduced points run in parts (partials, then a
 * finish that merges each column's parts in order), here over reads bound
 * as windows of 256 KiB (DMLC_VULKAN_STORAGE_RANGE): window boundaries fall
 * inside parts and, for some columns of a row, between others; every part
 * after the first window skips the windows before it. Every fill, against
 * the reference; each reduction must run in parts. */
static void check_column_parts(bool portable) {
  dmlc_vk_device *dev = open_device_with("262144", portable);
  /* Enough columns to take an invocation each (not a workgroup); rows not
   * dividing the 256 KiB windows; partials (16 bytes a part of a column)
   * within one window. */
  static const char *const cases[] = {
      "graph @u8(%x: u8[192,4112]) -> (u32[1,4112]) {\n"
      "  %0 = argmax %x {axes = [0], direction = decreasing} : u32[1,4112]\n  return %0\n}\n",
      "graph @f16(%x: f16[160,4104]) -> (i64[1,4104]) {\n"
      "  %0 = argmin %x {axes = [0]} : i64[1,4104]\n  return %0\n}\n",
  };
  expect_split = true;
  check_cases_all_fills(dev, cases, sizeof cases / sizeof *cases, 500, 10);
  /* hardmax: the runtime fills the output with 0s, the finish writes the
   * 1s (f16 one-hots too; through windows) */
  static const char *const hot[] = {
      "graph @f32(%x: f32[130,4100]) -> (u32[1,4100], f32[130,4100]) {\n"
      "  %0 = argmax %x {axes = [0]} : u32[1,4100]\n"
      "  %1 = hardmax %x {axes = [0]} : f32[130,4100]\n  return %0, %1\n}\n",
      "graph @f16(%x: f16[160,4104]) -> (f16[160,4104]) {\n"
      "  %0 = hardmax %x {axes = [0]} : f16[160,4104]\n  return %0\n}\n",
  };
  expect_split = false;
  expect_kernel_line = "// one-hot 0s: the output filled with 0 first";
  check_cases_all_fills(dev, hot, sizeof hot / sizeof *hot, 550, 10);
  expect_kernel_line = NULL;
  expect_split = true;
  dmlc_vk_device_close(dev);
  /* 8-byte elements (key pairs on the portable path), in windows of 512
   * KiB: their rows are twice as long */
  dev = open_device_with("524288", portable);
  static const char *const wide[] = {
      "graph @i64(%x: i64[130,4098], %y: u64[140,4098]) -> (u32[1,4098], i64[1,4098]) {\n"
      "  %0 = argmax %x {axes = [0]} : u32[1,4098]\n"
      "  %1 = argmin %y {axes = [0], direction = decreasing} : i64[1,4098]\n"
      "  return %0, %1\n}\n",
  };
  check_cases_all_fills(dev, wide, 1, 600, 10);
  expect_split = false;
  dmlc_vk_device_close(dev);
}

/* Short packed rows ([K, R] over R, 2 <= R <= 16, the channel argmax of
 * NHWC images): an invocation reduces a group of rows from their 16-byte
 * vectors, one more the rows after the last whole group. Groups of 16, 4,
 * 2 and 1 rows, with and without rows left over, hardmax's one-hot, both
 * directions, every fill, native and portable paths. */
static void check_short_rows(bool portable) {
  dmlc_vk_device *dev = open_device_with(NULL, portable);
  static const char *const cases[] = {
      "graph @u8(%x: u8[1000,3]) -> (u32[1000,1]) {\n"
      "  %0 = argmax %x {axes = [1]} : u32[1000,1]\n  return %0\n}\n",
      "graph @f16(%x: f16[37,6]) -> (i64[37,1]) {\n"
      "  %0 = argmin %x {axes = [1], direction = decreasing} : i64[37,1]\n  return %0\n}\n",
      "graph @hot(%x: f32[29,3]) -> (f32[29,3]) {\n"
      "  %0 = hardmax %x {axes = [1]} : f32[29,3]\n  return %0\n}\n",
      "graph @i64(%x: i64[9,3], %y: u16[100,8]) -> (u32[9,1], i32[100,1]) {\n"
      "  %0 = argmax %x {axes = [1]} : u32[9,1]\n"
      "  %1 = argmin %y {axes = [1]} : i32[100,1]\n  return %0, %1\n}\n",
      "graph @i8(%x: i8[64,4]) -> (u64[64,1]) {\n"
      "  %0 = argmax %x {axes = [1], direction = decreasing} : u64[64,1]\n  return %0\n}\n",
  };
  check_cases_all_fills(dev, cases, sizeof cases / sizeof *cases, 700, 10);
  dmlc_vk_device_close(dev);
}

/* Lone rows (a CPU device, or any under DMLC_VULKAN_CPU_PLANS=1; kept
 * points enough for LONE_ROWS_LOCAL in every workgroup that fills it): an
 * invocation per kept point, the last workgroup part idle. 16-byte vector
 * rows, scalar rows (lengths no whole number of vectors, narrow and 8-byte
 * types), [r, k, r] vectors at their own offsets, hardmax's one-hot, both
 * directions, rows read through windows of 256 KiB; every fill, against the
 * reference, each kernel taking the path. */
static void check_lone_rows(bool portable) {
  dmlc_vk_device *dev = open_cpu_plans_with(NULL, portable);
  const dmlc_spirv_caps *c = dmlc_vk_device_caps(dev);
  const uint32_t K = c->fill_groups * 64 + 37;
  char cases[5][512];
  snprintf(cases[0], sizeof cases[0],
           "graph @f32(%%x: f32[%u,1000]) -> (u32[%u,1], f32[%u,1000]) {\n"
           "  %%0 = argmax %%x {axes = [1]} : u32[%u,1]\n"
           "  %%1 = hardmax %%x {axes = [1]} : f32[%u,1000]\n  return %%0, %%1\n}\n",
           K, K, K, K, K);
  snprintf(cases[1], sizeof cases[1],
           "graph @i8(%%x: i8[%u,67]) -> (u32[%u,1]) {\n"
           "  %%0 = argmax %%x {axes = [1], direction = decreasing} : u32[%u,1]\n"
           "  return %%0\n}\n",
           K, K, K);
  snprintf(cases[2], sizeof cases[2],
           "graph @f16(%%x: f16[%u,64], %%y: i64[%u,40]) -> (i64[%u,1], u32[%u,1]) {\n"
           "  %%0 = argmin %%x {axes = [1], direction = decreasing} : i64[%u,1]\n"
           "  %%1 = argmax %%y {axes = [1]} : u32[%u,1]\n  return %%0, %%1\n}\n",
           K, K, K, K, K, K);
  snprintf(cases[3], sizeof cases[3],
           "graph @rkr(%%x: f32[4,%u,16]) -> (u32[1,%u,1]) {\n"
           "  %%0 = argmin %%x {axes = [0, 2]} : u32[1,%u,1]\n  return %%0\n}\n",
           K, K, K);
  snprintf(cases[4], sizeof cases[4],
           "graph @u16(%%x: u16[%u,256]) -> (u32[%u,1]) {\n"
           "  %%0 = argmax %%x {axes = [1]} : u32[%u,1]\n  return %%0\n}\n",
           K, K, K);
  const char *const texts[5] = {cases[0], cases[1], cases[2], cases[3], cases[4]};
  expect_kernel_line = "// lone rows";
  check_cases_all_fills(dev, texts, 4, 800, 10);
  dmlc_vk_device_close(dev);
  /* rows read through windows: 256 KiB windows over K * 512 bytes */
  dev = open_cpu_plans_with("262144", portable);
  check_cases_all_fills(dev, texts + 4, 1, 850, 10);
  expect_kernel_line = NULL;
  dmlc_vk_device_close(dev);
  /* lone runs ([r, k, r] and [k, r, k, r] vectors whose kept points' runs
   * are adjacent): an invocation per 4 kept points, the runs of each outer
   * reduced point in storage order; 1-, 2-, 4- and 8-byte types, and a
   * hardmax's one-hot */
  dev = open_cpu_plans_with(NULL, portable);
  const uint32_t K4 = (K - 37 + 7) / 8 * 8; /* fill_groups * 64, rounded up to 8 */
  char runs[5][512];
  snprintf(runs[0], sizeof runs[0],
           "graph @f32(%%x: f32[3,%u,20], %%y: f16[2,%u,16]) -> (u32[1,%u,1], i64[1,%u,1]) {\n"
           "  %%0 = argmin %%x {axes = [0, 2]} : u32[1,%u,1]\n"
           "  %%1 = argmax %%y {axes = [0, 2], direction = decreasing} : i64[1,%u,1]\n"
           "  return %%0, %%1\n}\n",
           K4, K4, K4, K4, K4, K4);
  snprintf(runs[1], sizeof runs[1],
           "graph @i8(%%x: i8[5,%u,32]) -> (u32[1,%u,1]) {\n"
           "  %%0 = argmax %%x {axes = [0, 2]} : u32[1,%u,1]\n  return %%0\n}\n",
           K4, K4, K4);
  snprintf(runs[2], sizeof runs[2],
           "graph @i64(%%x: i64[3,%u,16]) -> (u32[1,%u,1]) {\n"
           "  %%0 = argmin %%x {axes = [0, 2], direction = decreasing} : u32[1,%u,1]\n"
           "  return %%0\n}\n",
           K4, K4, K4);
  snprintf(runs[3], sizeof runs[3],
           "graph @krkr(%%x: f32[2,3,%u,16]) -> (u32[2,1,%u,1]) {\n"
           "  %%0 = argmax %%x {axes = [1, 3]} : u32[2,1,%u,1]\n  return %%0\n}\n",
           K4 / 2, K4 / 2, K4 / 2);
  snprintf(runs[4], sizeof runs[4],
           "graph @hot(%%x: f32[3,%u,16]) -> (f32[3,%u,16]) {\n"
           "  %%0 = hardmax %%x {axes = [0, 2]} : f32[3,%u,16]\n  return %%0\n}\n",
           K4, K4, K4);
  const char *const run_texts[5] = {runs[0], runs[1], runs[2], runs[3], runs[4]};
  expect_kernel_line = "// lone rows: an invocation per 4 kept points";
  check_cases_all_fills(dev, run_texts, 5, 870, 10);
  expect_kernel_line = NULL;
  dmlc_vk_device_close(dev);
}

START_TEST(lone_rows_match_the_reference_native_path) { check_lone_rows(false); }
END_TEST

START_TEST(lone_rows_match_the_reference_portable_path) { check_lone_rows(true); }
END_TEST

START_TEST(short_rows_match_the_reference_native_path) { check_short_rows(false); }
END_TEST

START_TEST(short_rows_match_the_reference_portable_path) { check_short_rows(true); }
END_TEST

START_TEST(windowed_columns_run_in_parts_native_path) { check_column_parts(false); }
END_TEST

START_TEST(windowed_columns_run_in_parts_portable_path) { check_column_parts(true); }
END_TEST

/* ---- first-use costs ---- */

/* Whether every page of [p, p + bytes) is in memory (mincore): memory the
 * OS maps in on first touch is not until then. */
static bool resident(const void *p, uint64_t bytes) {
  const uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE);
  const uintptr_t start = (uintptr_t)p / page * page, end = (uintptr_t)p + bytes;
  const size_t pages = (end - start + page - 1) / page;
  unsigned char *vec = malloc(pages);
  ck_assert_ptr_nonnull(vec);
  ck_assert_int_eq(mincore((void *)start, end - start, vec), 0);
  size_t in = 0;
  for (size_t i = 0; i < pages; i++)
    in += vec[i] & 1;
  free(vec);
  return in == pages;
}

static const char *const touch_cases[] = {
    "graph @t(%x: f32[2048,4096]) -> (u32[2048,1]) {\n"
    "  %0 = argmax %x {axes = [1]} : u32[2048,1]\n  return %0\n}\n",
    "graph @t(%x: f32[8,50]) -> (u32[1,50]) {\n"
    "  %0 = hardmax %x {axes = [1]} : f32[8,50]\n"
    "  %1 = argmax %0 {axes = [0]} : u32[1,50]\n  return %1\n}\n",
};

/* Compiles each of touch_cases on dev and checks that the compile touched
 * every allocation the executable owns (inputs, outputs, temporaries, the
 * dummy, split partials; staging where there is some), and that where the
 * host maps one, every page of it is in memory right after the compile.
 * Returns how many allocations were not mapped. */
static uint32_t check_touched(dmlc_vk_device *dev) {
  uint32_t unmapped = 0;
  for (size_t c = 0; c < sizeof touch_cases / sizeof *touch_cases; c++) {
    const char *text = touch_cases[c];
    dmlc_diag diag = {0};
    dmlc_ir_graph *g = NULL;
    ck_assert_msg(dmlc_ir_parse(text, strlen(text), "t.dmlir", &g, &diag) == DMLC_OK, "%s",
                  diag.message);
    ck_assert_msg(dmlc_run_pipeline(&g, DMLC_DEFAULT_PIPELINE, NULL, &diag) == DMLC_OK, "%s",
                  diag.message);
    dmlc_kernel_plan plan;
    ck_assert_msg(dmlc_kernel_plan_build(g, &plan, &diag) == DMLC_OK, "%s", diag.message);
    const uint64_t in_bytes = g->inputs[0].layout.size_bytes;
    const uint64_t out_bytes = g->outputs[0].layout.size_bytes;
    dmlc_vk_executable *exe = NULL;
    ck_assert_msg(dmlc_vk_executable_create(dev, &plan, &in_bytes, 1, &out_bytes, 1, &exe, &diag) ==
                      DMLC_OK,
                  "%s", diag.message);
    dmlc_vk_memory_info info[32];
    const uint32_t n = dmlc_vk_executable_memory(exe, info, 32);
    /* input, output, temporaries, the dummy, a partials buffer per kernel */
    ck_assert_uint_ge(n, 2 + plan.num_temps + 1 + plan.num_kernels);
    ck_assert_uint_le(n, 32);
    bool input_seen = false;
    for (uint32_t i = 0; i < n; i++) {
      ck_assert_msg(info[i].touched, "case %zu: allocation %u of %u not touched", c, i, n);
      ck_assert_msg(!info[i].host || resident(info[i].host, info[i].bytes),
                    "case %zu: allocation %u (%llu bytes) not in memory after the compile", c, i,
                    (unsigned long long)info[i].bytes);
      input_seen |= info[i].bytes >= in_bytes;
      unmapped += !info[i].host;
    }
    ck_assert(input_seen);
    dmlc_vk_executable_destroy(exe);
    dmlc_kernel_plan_free(&plan);
    dmlc_ir_graph_destroy(g);
  }
  return unmapped;
}

/* So that the first execute does not fault fresh memory in. Not timed:
 * the 32 MiB input is fresh memory, no page of which is in memory until
 * something writes it. With forced splits, so that the reductions have
 * partials. */
START_TEST(compile_touches_every_owned_buffer) {
  setenv("DMLC_VULKAN_FORCE_SPLIT", "1", 1);
  dmlc_vk_device *dev = open_device();
  unsetenv("DMLC_VULKAN_FORCE_SPLIT");
  check_touched(dev);
  dmlc_vk_device_close(dev);
}
END_TEST

/* The same with device-local memory left unmapped (a discrete GPU's path):
 * the compile fills it on the device, and maps and touches the inputs' and
 * outputs' staging buffers; executes through staging still match the
 * reference, with the validation layer's synchronization checks on. */
START_TEST(compile_fills_unmapped_buffers_on_the_device) {
  setenv("DMLC_VULKAN_FORCE_SPLIT", "1", 1);
  setenv("DMLC_VULKAN_UNMAPPED", "1", 1);
  dmlc_vk_device *dev = open_device();
  unsetenv("DMLC_VULKAN_FORCE_SPLIT");
  unsetenv("DMLC_VULKAN_UNMAPPED");
  ck_assert_uint_gt(check_touched(dev), 0);
  for (size_t c = 0; c < sizeof touch_cases / sizeof *touch_cases; c++)
    check_against_reference(dev, touch_cases[c], c + 1);
  dmlc_vk_device_close(dev);
}
END_TEST

/* ---- through the public API ---- */

static const char api_graph[] = "graph @g(%x: f32[3,3]) -> (f32[3,3], u32[3,1]) {\n"
                                "  %0 = hardmax %x {axes = [1]} : f32[3,3]\n"
                                "  %1 = argmax %x {axes = [1]} : u32[3,1]\n"
                                "  return %0, %1\n}\n";

static bool vulkan_loaded(void) {
  FILE *f = fopen("/proc/self/maps", "r");
  ck_assert_ptr_nonnull(f);
  char line[512];
  bool found = false;
  while (fgets(line, sizeof line, f))
    found |= strstr(line, "libvulkan") != NULL;
  fclose(f);
  return found;
}

START_TEST(api_compiles_runs_dumps_and_times) {
  dmlc_context *ctx;
  ck_assert_int_eq(dmlc_context_create(&ctx), DMLC_OK);
  dmlc_graph *g = NULL;
  ck_assert_int_eq(dmlc_graph_parse(ctx, api_graph, strlen(api_graph), "g.dmlir", &g), DMLC_OK);
  dmlc_executable *exe = NULL;
  ck_assert_msg(dmlc_graph_compile(g, DMLC_DEVICE_VULKAN, &exe) == DMLC_OK, "%s",
                dmlc_context_error(ctx));
  ck_assert_int_eq(dmlc_executable_device(exe), DMLC_DEVICE_VULKAN);
  size_t count = 99;
  double ns[4] = {-1, -1, -1, -1};
  ck_assert_int_eq(dmlc_executable_kernel_times(exe, ns, 4, &count), DMLC_OK);
  ck_assert_uint_ge(count, 1);
  ck_assert_uint_le(count, 2);
  ck_assert(ns[0] == 0); /* nothing ran yet */
  const float x[9] = {1, 5, 5, -1, -2, -3, 0, 0, 7};
  float hard[9];
  uint32_t idx[3];
  memset(hard, 0xab, sizeof hard);
  const dmlc_buffer in = {(void *)x, sizeof x}, out[2] = {{hard, sizeof hard}, {idx, sizeof idx}};
  ck_assert_msg(dmlc_execute(exe, &in, 1, out, 2) == DMLC_OK, "%s", dmlc_context_error(ctx));
  const float want[9] = {0, 1, 0, 1, 0, 0, 0, 0, 1};
  ck_assert_mem_eq(hard, want, sizeof want);
  ck_assert(idx[0] == 1 && idx[1] == 0 && idx[2] == 2);
  ck_assert_int_eq(dmlc_executable_kernel_times(exe, ns, 4, &count), DMLC_OK);
  ck_assert_uint_ge(count, 1);
  for (size_t i = 0; i < count; i++)
    ck_assert_msg(ns[i] > 0, "kernel %zu took %g ns", i, ns[i]);
  ck_assert_int_eq(dmlc_executable_kernel_times(exe, NULL, 0, &count), DMLC_OK);
  /* Profiling off: the same results, kernel times of 0, with host buffers
   * and with tensors; on again: times again, both ways. */
  ck_assert_int_eq(dmlc_executable_set_profiling(NULL, 0), DMLC_ERROR_INVALID_ARGUMENT);
  dmlc_tensor *tx = NULL, *th = NULL, *ti = NULL;
  ck_assert_int_eq(dmlc_tensor_create(ctx, DMLC_DEVICE_VULKAN, sizeof x, &tx), DMLC_OK);
  ck_assert_int_eq(dmlc_tensor_create(ctx, DMLC_DEVICE_VULKAN, sizeof hard, &th), DMLC_OK);
  ck_assert_int_eq(dmlc_tensor_create(ctx, DMLC_DEVICE_VULKAN, sizeof idx, &ti), DMLC_OK);
  ck_assert_int_eq(dmlc_tensor_write(tx, 0, x, sizeof x), DMLC_OK);
  dmlc_tensor *const tin[1] = {tx}, *const tout[2] = {th, ti};
  ck_assert_int_eq(dmlc_execute_tensors(exe, tin, 1, tout, 2), DMLC_OK); /* recorded profiled */
  for (int round = 0; round < 4; round++) {
    const int on = round % 2;
    ck_assert_int_eq(dmlc_executable_set_profiling(exe, on), DMLC_OK);
    for (int tensors = 0; tensors < 2; tensors++) {
      memset(hard, 0xab, sizeof hard);
      memset(idx, 0xab, sizeof idx);
      if (tensors) {
        ck_assert_int_eq(dmlc_tensor_write(th, 0, hard, sizeof hard), DMLC_OK);
        ck_assert_int_eq(dmlc_execute_tensors(exe, tin, 1, tout, 2), DMLC_OK);
        ck_assert_int_eq(dmlc_tensor_read(th, 0, hard, sizeof hard), DMLC_OK);
        ck_assert_int_eq(dmlc_tensor_read(ti, 0, idx, sizeof idx), DMLC_OK);
      } else {
        ck_assert_int_eq(dmlc_execute(exe, &in, 1, out, 2), DMLC_OK);
      }
      ck_assert_mem_eq(hard, want, sizeof want);
      ck_assert(idx[0] == 1 && idx[1] == 0 && idx[2] == 2);
      for (size_t i = 0; i < 4; i++)
        ns[i] = -1;
      ck_assert_int_eq(dmlc_executable_kernel_times(exe, ns, 4, &count), DMLC_OK);
      ck_assert_uint_ge(count, 1);
      for (size_t i = 0; i < count; i++)
        ck_assert_msg(on ? ns[i] > 0 : ns[i] == 0, "round %d, tensors %d: kernel %zu took %g ns",
                      round, tensors, i, ns[i]);
    }
  }
  dmlc_tensor_destroy(tx);
  dmlc_tensor_destroy(th);
  dmlc_tensor_destroy(ti);
  /* The API's checks come first: a short buffer runs nothing. */
  const dmlc_buffer small[2] = {{hard, 8}, {idx, sizeof idx}};
  ck_assert_int_eq(dmlc_execute(exe, &in, 1, small, 2), DMLC_ERROR_INVALID_ARGUMENT);

  char *text = NULL;
  ck_assert_int_eq(dmlc_executable_dump(exe, "spirv", &text), DMLC_OK);
  ck_assert_ptr_nonnull(strstr(text, "OpEntryPoint GLCompute"));
  ck_assert_ptr_nonnull(strstr(text, "; kernel 0: "));
  dmlc_free(text);
  ck_assert_int_eq(dmlc_executable_dump(exe, "kernels", &text), DMLC_OK);
  ck_assert_ptr_nonnull(strstr(text, "// kernel 0: workgroups of "));
  dmlc_free(text);
  ck_assert_int_eq(dmlc_executable_dump(exe, "llvm", &text), DMLC_ERROR_UNSUPPORTED);
  ck_assert_ptr_null(text);
  ck_assert_int_eq(dmlc_executable_dump(exe, "nonsense", &text), DMLC_ERROR_INVALID_ARGUMENT);
  ck_assert_int_eq(dmlc_device_describe(ctx, DMLC_DEVICE_VULKAN, &text), DMLC_OK);
  ck_assert_ptr_nonnull(strstr(text, "[selected]"));
  ck_assert_ptr_nonnull(strstr(text, "subgroup"));
  dmlc_free(text);
  dmlc_executable_destroy(exe);

  /* The same graph on the reference device: no kernel times, no SPIR-V. */
  ck_assert_int_eq(dmlc_graph_compile(g, DMLC_DEVICE_REFERENCE, &exe), DMLC_OK);
  ck_assert_int_eq(dmlc_executable_kernel_times(exe, ns, 4, &count), DMLC_OK);
  ck_assert_uint_eq(count, 0);
  ck_assert_int_eq(dmlc_executable_dump(exe, "spirv", &text), DMLC_ERROR_UNSUPPORTED);
  dmlc_executable_destroy(exe);
  dmlc_graph_destroy(g);
  dmlc_context_destroy(ctx);
}
END_TEST

/* In a child, so the loader sees the environment fresh and the maps show
 * only the child's libraries. */
START_TEST(api_without_a_driver_is_a_clear_error) {
  const pid_t pid = fork();
  ck_assert_int_ge(pid, 0);
  if (pid == 0) {
    setenv("VK_ICD_FILENAMES", "/nonexistent/icd.json", 1);
    setenv("VK_DRIVER_FILES", "/nonexistent/icd.json", 1);
    int code = 0;
    dmlc_context *ctx = NULL;
    dmlc_graph *g = NULL;
    dmlc_executable *exe = NULL;
    if (dmlc_context_create(&ctx) != DMLC_OK ||
        dmlc_graph_parse(ctx, api_graph, strlen(api_graph), "g.dmlir", &g) != DMLC_OK)
      _exit(64);
    /* A context that never uses Vulkan never loads it (unless this process
     * had already: CK_FORK=no). */
    const bool loaded_before = vulkan_loaded();
    if (dmlc_graph_compile(g, DMLC_DEVICE_CPU, &exe) != DMLC_OK ||
        (!loaded_before && vulkan_loaded()))
      code |= 1;
    dmlc_executable_destroy(exe);
    exe = NULL;
    const dmlc_status st = dmlc_graph_compile(g, DMLC_DEVICE_VULKAN, &exe);
    fprintf(stderr, "compile without a driver: %s\n", dmlc_context_error(ctx));
    if (st != DMLC_ERROR_DEVICE || exe || !strstr(dmlc_context_error(ctx), "Vulkan"))
      code |= 2;
    /* again (nothing is cached from the failure), and describe */
    if (dmlc_graph_compile(g, DMLC_DEVICE_VULKAN, &exe) != DMLC_ERROR_DEVICE)
      code |= 4;
    char *text = NULL;
    if (dmlc_device_describe(ctx, DMLC_DEVICE_VULKAN, &text) != DMLC_ERROR_DEVICE || text)
      code |= 8;
    /* the CPU still works */
    if (dmlc_graph_compile(g, DMLC_DEVICE_CPU, &exe) != DMLC_OK)
      code |= 16;
    dmlc_executable_destroy(exe);
    dmlc_graph_destroy(g);
    dmlc_context_destroy(ctx);
    _exit(code);
  }
  int status = 0;
  ck_assert_int_eq(waitpid(pid, &status, 0), pid);
  ck_assert_msg(WIFEXITED(status), "the child crashed (signal %d)",
                WIFSIGNALED(status) ? WTERMSIG(status) : 0);
  ck_assert_msg(WEXITSTATUS(status) == 0, "child check %d failed", WEXITSTATUS(status));
}
END_TEST

int main(void) {
  Suite *s = suite_create("vulkan");
  TCase *devices = tcase_create("devices");
  tcase_add_test(devices, device_opens_with_sane_caps);
  tcase_add_test(devices, describe_lists_the_device);
  tcase_add_test(devices, env_selects_by_index_and_name);
  tcase_add_test(devices, no_driver_is_a_clear_error);
  suite_add_tcase(s, devices);
  TCase *exec = tcase_create("execute");
  tcase_set_timeout(exec, 600);
  tcase_add_test(exec, argmax_argmin_hardmax_match_the_reference);
  tcase_add_test(exec, strided_and_broadcast_layouts_match_the_reference);
  tcase_add_test(exec, chained_kernels_match_the_reference);
  tcase_add_test(exec, large_reductions_match_the_reference);
  tcase_add_test(exec, many_workgroups_are_dispatched_in_chunks);
  tcase_add_test(exec, buffers_beyond_the_storage_range_are_windowed);
  tcase_add_test(exec, every_dtype_pair_native_path);
  tcase_add_test(exec, every_dtype_pair_portable_path);
  tcase_add_test(exec, forced_split_merges_in_index_order_native_path);
  tcase_add_test(exec, forced_split_merges_in_index_order_portable_path);
  tcase_add_test(exec, few_outputs_split_across_workgroups);
  tcase_add_test(exec, vector_reads_match_the_reference_native_path);
  tcase_add_test(exec, vector_reads_match_the_reference_portable_path);
  tcase_add_test(exec, lone_rows_match_the_reference_native_path);
  tcase_add_test(exec, lone_rows_match_the_reference_portable_path);
  tcase_add_test(exec, short_rows_match_the_reference_native_path);
  tcase_add_test(exec, short_rows_match_the_reference_portable_path);
  tcase_add_test(exec, windowed_columns_run_in_parts_native_path);
  tcase_add_test(exec, windowed_columns_run_in_parts_portable_path);
  suite_add_tcase(s, exec);
  TCase *first_use = tcase_create("first_use");
  tcase_add_test(first_use, compile_touches_every_owned_buffer);
  tcase_add_test(first_use, compile_fills_unmapped_buffers_on_the_device);
  suite_add_tcase(s, first_use);
  TCase *api = tcase_create("api");
  tcase_add_test(api, api_compiles_runs_dumps_and_times);
  tcase_add_test(api, api_without_a_driver_is_a_clear_error);
  suite_add_tcase(s, api);
  return dmlc_test_run_suites(&s, 1);
}
