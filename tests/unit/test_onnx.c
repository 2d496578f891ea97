/* ONNX models in (frontend/onnx, api/onnx.c; docs/onnx.md).
 *
 * tensor       TensorProto files: every data type and rank 0 to 8 written and
 *              read back, ONNX's own files read and re-encoded byte for
 *              byte, the typed fields, and every broken tensor rejected
 *              with a message naming the file and the field.
 * import       the IR an import makes, the signature (ONNX names, rank-0
 *              outputs), symbolic dims bound by the options, the API's
 *              arguments.
 * errors       every model of tests/onnx/errors: the message (its "# error:"
 *              lines) and the status ("# status:").
 * malformed    broken bytes: truncated, wrong wire types, lengths past the
 *              end, deep nesting, and thousands of mutants of real models:
 *              an error with a message or a graph that verifies, never a
 *              crash (run under ASan+UBSan by scripts/sanitize.sh).
 * conformance  ONNX's ArgMax, ArgMin and Hardmax node tests (Debian
 *              libonnx-testdata, $DMLC_ONNX_TESTDATA) and the cases of
 *              tests/onnx/models (expected outputs from NumPy,
 *              make_case.py), on every registered device: output_K.pb
 *              bit for bit, its shape (ONNX's () for scalars) from the
 *              signature. DMLC_TEST_DEVICE=name runs one device. */
#include <dirent.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <protobuf-c/protobuf-c.h>

#include "onnx/onnx.pb-c.h"
#include "testutil.h"

#define CASES_DIR DMLC_BINARY_DIR "/tests/onnx/cases"
#define ERRORS_BIN DMLC_BINARY_DIR "/tests/onnx/errors"
#define ERRORS_SRC DMLC_SOURCE_DIR "/tests/onnx/errors"
#define OFFICIAL_DEFAULT "/usr/share/libonnx-testdata/data/node"
/* ONNX 1.12's node tests: 16 ArgMax, 16 ArgMin, 7 Hardmax. */
#define OFFICIAL_MIN 39
#define MAX_CASES 512
#define MAX_IO 8

#define COUNT(a) (sizeof(a) / sizeof((a)[0]))

/* lavapipe leaks 128 bytes from a module it unloads, which LeakSanitizer
 * can neither name nor suppress (scripts/sanitize.sh, test_device.c): a
 * forked case that ran on Vulkan skips the leak check at its exit. */
static bool ran_vulkan;
int __lsan_is_turned_off(void);
int __lsan_is_turned_off(void) { return ran_vulkan; }

/* ---- files ---- */

static const char *official_dir(void) {
  const char *dir = getenv("DMLC_ONNX_TESTDATA");
  return dir && *dir ? dir : OFFICIAL_DEFAULT;
}

/* The whole file in a buffer of exactly its size, so that a read past its
 * end is seen by AddressSanitizer. */
static unsigned char *load(const char *path, size_t *size) {
  char *text = dmlc_test_read_file(path, size);
  ck_assert_msg(text, "cannot read %s", path);
  unsigned char *exact = malloc(*size ? *size : 1);
  ck_assert_ptr_nonnull(exact);
  memcpy(exact, text, *size);
  free(text);
  return exact;
}

static bool file_exists(const char *path) { return access(path, R_OK) == 0; }

static int compare_names(const void *a, const void *b) {
  return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Appends dir/NAME for each entry of dir that keep accepts, sorted. */
static void list_dir(const char *dir, bool (*keep)(const char *name), char **out, size_t *count,
                     size_t max) {
  DIR *d = opendir(dir);
  if (!d)
    return;
  const size_t first = *count;
  for (struct dirent *e; (e = readdir(d));) {
    if (!keep(e->d_name) || *count >= max)
      continue;
    const size_t len = strlen(dir) + strlen(e->d_name) + 2;
    out[*count] = malloc(len);
    snprintf(out[*count], len, "%s/%s", dir, e->d_name);
    (*count)++;
  }
  closedir(d);
  qsort(out + first, *count - first, sizeof *out, compare_names);
}

static bool is_official_case(const char *name) {
  return strncmp(name, "test_argmax_", 12) == 0 || strncmp(name, "test_argmin_", 12) == 0 ||
         strncmp(name, "test_hardmax_", 13) == 0;
}

static bool is_own_case(const char *name) { return name[0] != '.'; }

static bool is_textproto(const char *name) {
  const size_t n = strlen(name);
  return n > 10 && strcmp(name + n - 10, ".textproto") == 0;
}

/* The conformance cases: ONNX's, then ours. Listed in main, before Check
 * forks the cases. */
static char *cases[MAX_CASES];
static size_t num_cases, num_official;
static dmlc_device devices[8];
static size_t num_devices;

/* ---- helpers ---- */

static dmlc_context *context(void) {
  dmlc_context *ctx = NULL;
  ck_assert_int_eq(dmlc_context_create(&ctx), DMLC_OK);
  return ctx;
}

#define CHECK_OK(ctx, st, what)                                                                    \
  do {                                                                                             \
    const dmlc_status st_ = (st);                                                                  \
    ck_assert_msg(st_ == DMLC_OK, "%s: %s: %s", (what), dmlc_status_string(st_),                   \
                  dmlc_context_error(ctx));                                                        \
  } while (0)

/* The call failed with status, and the context's message names mention. */
static void expect_failure(dmlc_context *ctx, dmlc_status got, dmlc_status want,
                           const char *mention, const char *what) {
  const char *msg = dmlc_context_error(ctx);
  ck_assert_msg(got == want, "%s: status %s, expected %s (message: '%s')", what,
                dmlc_status_string(got), dmlc_status_string(want), msg);
  ck_assert_msg(strstr(msg, mention), "%s: the message '%s' does not name '%s'", what, msg,
                mention);
}

static const char *dtype_name(DML_TENSOR_DATA_TYPE t) {
  const char *name = dmlc_data_type_name(t);
  return name ? name : "?";
}

/* Reads DIR/shapes.txt (NAME=D,D,... lines: the symbolic dims make_case.py
 * bound) into shapes. */
typedef struct case_shapes {
  dmlc_onnx_shape shapes[MAX_IO];
  char names[MAX_IO][64];
  uint64_t dims[MAX_IO][DMLC_MAX_RANK];
  dmlc_onnx_options options;
} case_shapes;

static void read_shapes(const char *dir, case_shapes *s) {
  memset(s, 0, sizeof *s);
  s->options.shapes = s->shapes;
  char path[1024];
  snprintf(path, sizeof path, "%s/shapes.txt", dir);
  FILE *f = fopen(path, "r");
  if (!f)
    return;
  char line[256];
  while (fgets(line, sizeof line, f)) {
    char *eq = strchr(line, '=');
    if (!eq)
      continue;
    const size_t k = s->options.shape_count++;
    ck_assert_uint_lt(k, MAX_IO);
    *eq = '\0';
    snprintf(s->names[k], sizeof s->names[k], "%.63s", line);
    s->shapes[k].name = s->names[k];
    s->shapes[k].dims = s->dims[k];
    for (char *p = eq + 1; *p && *p != '\n'; p += *p == ',') {
      ck_assert_uint_lt(s->shapes[k].dim_count, DMLC_MAX_RANK);
      s->dims[k][s->shapes[k].dim_count++] = strtoull(p, &p, 10);
    }
  }
  fclose(f);
}

/* ---- conformance ---- */

static void expect_shape(const dmlc_onnx_tensor *t, const dmlc_onnx_io *io, const char *path) {
  ck_assert_msg(t->data_type == io->data_type, "%s holds %s; the signature says %s for '%s'", path,
                dtype_name(t->data_type), dtype_name(io->data_type), io->onnx_name);
  bool same = t->rank == io->rank;
  for (uint32_t d = 0; same && d < t->rank; d++)
    same = t->dims[d] == io->dims[d];
  ck_assert_msg(same,
                "%s has rank %u (dims[0] %" PRIu64 "); the signature gives '%s' rank %u "
                "(dims[0] %" PRIu64 ")",
                path, t->rank, t->dims[0], io->onnx_name, io->rank, io->dims[0]);
}

static void run_case(const char *dir, dmlc_device device) {
  ran_vulkan = ran_vulkan || device == DMLC_DEVICE_VULKAN;
  char path[1024];
  snprintf(path, sizeof path, "%s/model.onnx", dir);
  size_t size;
  unsigned char *model = load(path, &size);
  case_shapes shapes;
  read_shapes(dir, &shapes);
  dmlc_context *ctx = context();
  dmlc_graph *g = NULL;
  dmlc_onnx_signature *sig = NULL;
  CHECK_OK(ctx,
           dmlc_graph_import_onnx_with_options(ctx, model, size, path, &shapes.options, &g, &sig),
           path);
  free(model);
  CHECK_OK(ctx, dmlc_graph_verify(g), "verify");
  dmlc_executable *exe = NULL;
  CHECK_OK(ctx, dmlc_graph_compile(g, device, &exe), dmlc_device_name(device));
  const size_t n_in = dmlc_executable_input_count(exe), n_out = dmlc_executable_output_count(exe);
  ck_assert_uint_eq(n_in, sig->input_count);
  ck_assert_uint_eq(n_out, sig->output_count);
  ck_assert_uint_le(n_in, MAX_IO);
  ck_assert_uint_le(n_out, MAX_IO);
  dmlc_buffer in[MAX_IO], out[MAX_IO];
  dmlc_onnx_tensor *want[MAX_IO];
  for (size_t i = 0; i < n_in; i++) {
    snprintf(path, sizeof path, "%s/test_data_set_0/input_%zu.pb", dir, i);
    dmlc_onnx_tensor *t;
    CHECK_OK(ctx, dmlc_onnx_tensor_read_file(ctx, path, &t), path);
    expect_shape(t, &sig->inputs[i], path);
    dmlc_tensor_info info;
    CHECK_OK(ctx, dmlc_executable_input_info(exe, i, &info), "input info");
    ck_assert_str_eq(info.name, sig->inputs[i].name);
    ck_assert_uint_ge(info.total_size_bytes, t->size_bytes);
    in[i].data = calloc(1, info.total_size_bytes);
    in[i].size_bytes = info.total_size_bytes;
    memcpy(in[i].data, t->data, t->size_bytes);
    dmlc_free(t);
  }
  snprintf(path, sizeof path, "%s/test_data_set_0/input_%zu.pb", dir, n_in);
  ck_assert_msg(!file_exists(path), "%s: the graph has %zu inputs", path, n_in);
  for (size_t i = 0; i < n_out; i++) {
    snprintf(path, sizeof path, "%s/test_data_set_0/output_%zu.pb", dir, i);
    CHECK_OK(ctx, dmlc_onnx_tensor_read_file(ctx, path, &want[i]), path);
    expect_shape(want[i], &sig->outputs[i], path);
    dmlc_tensor_info info;
    CHECK_OK(ctx, dmlc_executable_output_info(exe, i, &info), "output info");
    ck_assert_str_eq(info.name, sig->outputs[i].name);
    ck_assert_uint_ge(info.total_size_bytes, want[i]->size_bytes);
    out[i].data = malloc(info.total_size_bytes);
    out[i].size_bytes = info.total_size_bytes;
    memset(out[i].data, 0xab, info.total_size_bytes);
  }
  snprintf(path, sizeof path, "%s/test_data_set_0/output_%zu.pb", dir, n_out);
  ck_assert_msg(!file_exists(path), "%s: the graph has %zu outputs", path, n_out);
  CHECK_OK(ctx, dmlc_execute(exe, in, n_in, out, n_out), "execute");
  for (size_t i = 0; i < n_out; i++) {
    const unsigned char *got = out[i].data, *expect = want[i]->data;
    for (uint64_t b = 0; b < want[i]->size_bytes; b++)
      ck_assert_msg(got[b] == expect[b],
                    "%s on %s: output %zu ('%s') differs from output_%zu.pb at byte %" PRIu64
                    " (element %" PRIu64 "): 0x%02x, expected 0x%02x",
                    dir, dmlc_device_name(device), i, sig->outputs[i].onnx_name, i, b,
                    b / dmlc_data_type_size(want[i]->data_type), got[b], expect[b]);
    dmlc_free(want[i]);
    free(out[i].data);
  }
  for (size_t i = 0; i < n_in; i++)
    free(in[i].data);
  dmlc_free(sig);
  dmlc_executable_destroy(exe);
  dmlc_graph_destroy(g);
  dmlc_context_destroy(ctx);
}

START_TEST(test_conformance_case) {
  const size_t device = (size_t)_i / num_cases, index = (size_t)_i % num_cases;
  run_case(cases[index], devices[device]);
}
END_TEST

/* The test data is where the tests expect it, all of it. */
START_TEST(test_conformance_coverage) {
  ck_assert_msg(num_official >= OFFICIAL_MIN,
                "%zu of ONNX's ArgMax/ArgMin/Hardmax node tests under %s; expected at least %d "
                "(install libonnx-testdata, or set DMLC_ONNX_TESTDATA)",
                num_official, official_dir(), OFFICIAL_MIN);
  ck_assert_msg(num_cases - num_official >= 20, "%zu cases under %s (not built?)",
                num_cases - num_official, CASES_DIR);
  ck_assert_uint_ge(num_devices, 1);
}
END_TEST

/* ---- tensor ---- */

static const DML_TENSOR_DATA_TYPE all_types[] = {
    DML_TENSOR_DATA_TYPE_FLOAT32, DML_TENSOR_DATA_TYPE_FLOAT16, DML_TENSOR_DATA_TYPE_FLOAT64,
    DML_TENSOR_DATA_TYPE_INT8,    DML_TENSOR_DATA_TYPE_UINT8,   DML_TENSOR_DATA_TYPE_INT16,
    DML_TENSOR_DATA_TYPE_UINT16,  DML_TENSOR_DATA_TYPE_INT32,   DML_TENSOR_DATA_TYPE_UINT32,
    DML_TENSOR_DATA_TYPE_INT64,   DML_TENSOR_DATA_TYPE_UINT64,
};

/* Every data type and rank 0 to 8 survives encode -> parse unchanged:
 * name, type, shape (rank 0 stays rank 0) and bytes. */
START_TEST(test_tensor_round_trip) {
  dmlc_context *ctx = context();
  for (size_t ti = 0; ti < COUNT(all_types); ti++) {
    for (uint32_t rank = 0; rank <= DMLC_MAX_RANK; rank++) {
      dmlc_onnx_tensor t = {
          .name = rank % 2 ? "tensor.name" : NULL, .data_type = all_types[ti], .rank = rank};
      uint64_t count = 1;
      for (uint32_t d = 0; d < rank; d++)
        count *= t.dims[d] = 1 + (d + ti) % 3;
      const uint32_t es = dmlc_data_type_size(t.data_type);
      unsigned char *data = malloc(count * es);
      for (uint64_t b = 0; b < count * es; b++)
        data[b] = (unsigned char)(b * 37 + 11 + ti);
      t.data = data;
      void *bytes;
      size_t size;
      CHECK_OK(ctx, dmlc_onnx_tensor_encode(ctx, &t, &bytes, &size), "encode");
      dmlc_onnx_tensor *back;
      CHECK_OK(ctx, dmlc_onnx_tensor_parse(ctx, bytes, size, "rt.pb", &back), "parse");
      ck_assert_str_eq(back->name, t.name ? t.name : "");
      ck_assert_int_eq(back->data_type, t.data_type);
      ck_assert_uint_eq(back->rank, rank);
      for (uint32_t d = 0; d < rank; d++)
        ck_assert_uint_eq(back->dims[d], t.dims[d]);
      ck_assert_uint_eq(back->element_count, count);
      ck_assert_uint_eq(back->size_bytes, count * es);
      ck_assert_uint_eq((uintptr_t)back->data % 64, 0);
      ck_assert_mem_eq(back->data, data, count * es);
      dmlc_free(back);
      dmlc_free(bytes);
      free(data);
    }
  }
  dmlc_context_destroy(ctx);
}
END_TEST

/* ONNX's own .pb files read, and written back byte for byte (the same
 * fields in the same order: dims, data_type, name, raw_data). */
START_TEST(test_tensor_official_files) {
  dmlc_context *ctx = context();
  size_t files = 0;
  for (size_t c = 0; c < num_official; c++) {
    for (int k = 0; k < 2; k++) {
      char path[1024];
      snprintf(path, sizeof path, "%s/test_data_set_0/%s_0.pb", cases[c], k ? "output" : "input");
      size_t size;
      unsigned char *bytes = load(path, &size);
      dmlc_onnx_tensor *t;
      CHECK_OK(ctx, dmlc_onnx_tensor_parse(ctx, bytes, size, path, &t), path);
      void *again;
      size_t again_size;
      CHECK_OK(ctx, dmlc_onnx_tensor_encode(ctx, t, &again, &again_size), "encode");
      ck_assert_msg(again_size == size && memcmp(again, bytes, size) == 0,
                    "%s: written back as %zu other bytes", path, again_size);
      dmlc_free(again);
      dmlc_free(t);
      free(bytes);
      files++;
    }
  }
  ck_assert_uint_ge(files, 2 * OFFICIAL_MIN);
  dmlc_context_destroy(ctx);
}
END_TEST

/* Packs tp (protobuf-c) into an exactly sized buffer. */
static unsigned char *pack(const Onnx__TensorProto *tp, size_t *size) {
  *size = protobuf_c_message_get_packed_size(&tp->base);
  unsigned char *buf = malloc(*size ? *size : 1);
  ck_assert_uint_eq(protobuf_c_message_pack(&tp->base, buf), *size);
  return buf;
}

static dmlc_onnx_tensor *parse_proto(dmlc_context *ctx, const Onnx__TensorProto *tp) {
  size_t size;
  unsigned char *buf = pack(tp, &size);
  dmlc_onnx_tensor *t = NULL;
  CHECK_OK(ctx, dmlc_onnx_tensor_parse(ctx, buf, size, "typed.pb", &t), "parse");
  free(buf);
  return t;
}

/* Elements in the typed fields (float_data, int32_data, ...) instead of
 * raw_data, converted to each type's element. */
START_TEST(test_tensor_typed_fields) {
  dmlc_context *ctx = context();
  int64_t dims[] = {3};
  Onnx__TensorProto tp = ONNX__TENSOR_PROTO__INIT;
  tp.n_dims = 1;
  tp.dims = dims;
  tp.has_data_type = 1;

  float floats[] = {1.5f, -0.0f, 3e38f};
  tp.data_type = ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT;
  tp.n_float_data = 3;
  tp.float_data = floats;
  dmlc_onnx_tensor *t = parse_proto(ctx, &tp);
  ck_assert_int_eq(t->data_type, DML_TENSOR_DATA_TYPE_FLOAT32);
  ck_assert_mem_eq(t->data, floats, sizeof floats);
  dmlc_free(t);
  tp.n_float_data = 0;

  static const struct {
    int32_t onnx;
    int32_t values[3];
    unsigned char bytes[6];
    uint32_t size;
  } narrow[] = {
      {ONNX__TENSOR_PROTO__DATA_TYPE__INT8, {-128, 0, 127}, {0x80, 0, 0x7f}, 1},
      {ONNX__TENSOR_PROTO__DATA_TYPE__UINT8, {0, 200, 255}, {0, 200, 255}, 1},
      {ONNX__TENSOR_PROTO__DATA_TYPE__INT16, {-32768, 1, 32767}, {0, 0x80, 1, 0, 0xff, 0x7f}, 2},
      {ONNX__TENSOR_PROTO__DATA_TYPE__UINT16, {65535, 2, 0}, {0xff, 0xff, 2, 0, 0, 0}, 2},
      /* float16 as its bit pattern: 1.0, -2.0, NaN */
      {ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT16,
       {0x3c00, 0xc000, 0x7e00},
       {0, 0x3c, 0, 0xc0, 0, 0x7e},
       2},
  };
  for (size_t i = 0; i < COUNT(narrow); i++) {
    tp.data_type = narrow[i].onnx;
    tp.n_int32_data = 3;
    tp.int32_data = (int32_t *)narrow[i].values;
    t = parse_proto(ctx, &tp);
    ck_assert_uint_eq(t->size_bytes, 3 * narrow[i].size);
    ck_assert_mem_eq(t->data, narrow[i].bytes, 3 * narrow[i].size);
    dmlc_free(t);
  }
  int32_t i32[] = {INT32_MIN, -1, INT32_MAX};
  tp.data_type = ONNX__TENSOR_PROTO__DATA_TYPE__INT32;
  tp.int32_data = i32;
  t = parse_proto(ctx, &tp);
  ck_assert_mem_eq(t->data, i32, sizeof i32);
  dmlc_free(t);
  tp.n_int32_data = 0;

  int64_t i64[] = {INT64_MIN, 0, INT64_MAX};
  tp.data_type = ONNX__TENSOR_PROTO__DATA_TYPE__INT64;
  tp.n_int64_data = 3;
  tp.int64_data = i64;
  t = parse_proto(ctx, &tp);
  ck_assert_mem_eq(t->data, i64, sizeof i64);
  dmlc_free(t);
  tp.n_int64_data = 0;

  double f64[] = {-1.25, 1e300, 0};
  tp.data_type = ONNX__TENSOR_PROTO__DATA_TYPE__DOUBLE;
  tp.n_double_data = 3;
  tp.double_data = f64;
  t = parse_proto(ctx, &tp);
  ck_assert_mem_eq(t->data, f64, sizeof f64);
  dmlc_free(t);
  tp.n_double_data = 0;

  uint64_t u64[] = {UINT64_MAX, 1, UINT32_MAX};
  tp.data_type = ONNX__TENSOR_PROTO__DATA_TYPE__UINT64;
  tp.n_uint64_data = 3;
  tp.uint64_data = u64;
  t = parse_proto(ctx, &tp);
  ck_assert_mem_eq(t->data, u64, sizeof u64);
  dmlc_free(t);
  u64[0] = 7;
  tp.data_type = ONNX__TENSOR_PROTO__DATA_TYPE__UINT32;
  t = parse_proto(ctx, &tp);
  const uint32_t u32[] = {7, 1, UINT32_MAX};
  ck_assert_mem_eq(t->data, u32, sizeof u32);
  dmlc_free(t);
  dmlc_context_destroy(ctx);
}
END_TEST

/* The base of the broken tensors below: FLOAT [2, 3] in raw_data. */
typedef struct tensor_parts {
  Onnx__TensorProto tp;
  int64_t dims[12];
  float values[6];
  Onnx__StringStringEntryProto entry, *entries[1];
} tensor_parts;

static void tensor_base(tensor_parts *p) {
  memset(p, 0, sizeof *p);
  p->tp = (Onnx__TensorProto)ONNX__TENSOR_PROTO__INIT;
  p->dims[0] = 2;
  p->dims[1] = 3;
  p->tp.n_dims = 2;
  p->tp.dims = p->dims;
  p->tp.has_data_type = 1;
  p->tp.data_type = ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT;
  p->tp.has_raw_data = 1;
  p->tp.raw_data.len = sizeof p->values;
  p->tp.raw_data.data = (uint8_t *)p->values;
}

static void expect_tensor_error(const tensor_parts *p, dmlc_status want, const char *mention) {
  dmlc_context *ctx = context();
  size_t size;
  unsigned char *buf = pack(&p->tp, &size);
  dmlc_onnx_tensor *t = (dmlc_onnx_tensor *)1;
  const dmlc_status st = dmlc_onnx_tensor_parse(ctx, buf, size, "bad.pb", &t);
  free(buf);
  ck_assert_ptr_null(t);
  expect_failure(ctx, st, want, mention, mention);
  ck_assert_msg(strncmp(dmlc_context_error(ctx), "bad.pb: ", 8) == 0,
                "the message '%s' does not start with the file's name", dmlc_context_error(ctx));
  dmlc_context_destroy(ctx);
}

START_TEST(test_tensor_errors) {
  const dmlc_status INV = DMLC_ERROR_INVALID_ARGUMENT, UNS = DMLC_ERROR_UNSUPPORTED;
  tensor_parts p;
  tensor_base(&p);
  p.tp.has_data_type = 0;
  expect_tensor_error(&p, INV, "data_type is missing");
  static const struct {
    int32_t type;
    dmlc_status status;
    const char *mention;
  } types[] = {
      {0, DMLC_ERROR_INVALID_ARGUMENT, "data_type is missing (or UNDEFINED)"},
      {99, DMLC_ERROR_INVALID_ARGUMENT, "data type 99, which ONNX does not define"},
      {-1, DMLC_ERROR_INVALID_ARGUMENT, "data type -1, which ONNX does not define"},
      {8, DMLC_ERROR_UNSUPPORTED, "data type STRING (8), which dmlc lacks"},
      {9, DMLC_ERROR_UNSUPPORTED, "data type BOOL (9), which dmlc lacks"},
      {14, DMLC_ERROR_UNSUPPORTED, "data type COMPLEX64 (14), which dmlc lacks"},
      {15, DMLC_ERROR_UNSUPPORTED, "data type COMPLEX128 (15), which dmlc lacks"},
      {16, DMLC_ERROR_UNSUPPORTED, "data type BFLOAT16 (16), which dmlc lacks"},
      {17, DMLC_ERROR_UNSUPPORTED, "data type FLOAT8E4M3FN (17), which dmlc lacks"},
      {22, DMLC_ERROR_UNSUPPORTED, "data type INT4 (22), which dmlc lacks"},
  };
  for (size_t i = 0; i < COUNT(types); i++) {
    tensor_base(&p);
    p.tp.data_type = types[i].type;
    expect_tensor_error(&p, types[i].status, types[i].mention);
  }

  tensor_base(&p);
  p.entry = (Onnx__StringStringEntryProto)ONNX__STRING_STRING_ENTRY_PROTO__INIT;
  p.entry.key = "location";
  p.entry.value = "weights.bin";
  p.entries[0] = &p.entry;
  p.tp.n_external_data = 1;
  p.tp.external_data = p.entries;
  p.tp.has_raw_data = 0;
  expect_tensor_error(&p, UNS, "its data is in an external file ('weights.bin')");
  tensor_base(&p);
  p.tp.has_data_location = 1;
  p.tp.data_location = ONNX__TENSOR_PROTO__DATA_LOCATION__EXTERNAL;
  expect_tensor_error(&p, UNS, "(external data)");
  tensor_base(&p);
  Onnx__TensorProto__Segment segment = ONNX__TENSOR_PROTO__SEGMENT__INIT;
  p.tp.segment = &segment;
  expect_tensor_error(&p, UNS, "a segment of a larger tensor");

  tensor_base(&p);
  p.tp.n_dims = 9;
  for (int d = 0; d < 9; d++)
    p.dims[d] = 1;
  expect_tensor_error(&p, UNS, "rank 9; dmlc's tensors have at most 8 dims");
  tensor_base(&p);
  p.dims[1] = -3;
  expect_tensor_error(&p, INV, "dims[1] is -3");
  tensor_base(&p);
  p.dims[0] = 0;
  expect_tensor_error(&p, UNS, "dims[0] is 0: an empty tensor");
  tensor_base(&p);
  p.dims[0] = INT64_C(1) << 62;
  p.dims[1] = INT64_C(1) << 62;
  expect_tensor_error(&p, UNS, "dims[0] is 4611686018427387904, which makes more than");
  tensor_base(&p);
  p.dims[0] = 65536;
  p.dims[1] = 65536;
  expect_tensor_error(&p, UNS, "dims[1] is 65536, which makes more than 4294967295 elements");

  tensor_base(&p);
  p.tp.raw_data.len = 20;
  expect_tensor_error(&p, INV, "raw_data holds 20 bytes; dims [2, 3] of FLOAT need 24");
  tensor_base(&p);
  p.tp.n_float_data = 6;
  p.tp.float_data = p.values;
  expect_tensor_error(&p, INV, "holds data in both raw_data and float_data");
  tensor_base(&p);
  p.tp.has_raw_data = 0;
  expect_tensor_error(&p, INV, "holds no data (neither raw_data nor float_data)");
  tensor_base(&p);
  p.tp.has_raw_data = 0;
  p.tp.n_float_data = 5;
  p.tp.float_data = p.values;
  expect_tensor_error(&p, INV, "float_data holds 5 values; dims [2, 3] need 6");
  tensor_base(&p);
  p.tp.has_raw_data = 0;
  int64_t longs[6] = {0};
  p.tp.n_int64_data = 6;
  p.tp.int64_data = longs;
  expect_tensor_error(&p, INV, "holds FLOAT elements in int64_data; they belong in float_data");
  tensor_base(&p);
  ProtobufCBinaryData strings[1] = {{1, (uint8_t *)"a"}};
  p.tp.n_string_data = 1;
  p.tp.string_data = strings;
  expect_tensor_error(&p, INV, "holds string_data, but its data type is FLOAT");

  static const struct {
    int32_t type;
    int32_t value;
    const char *mention;
  } ranges[] = {
      {ONNX__TENSOR_PROTO__DATA_TYPE__INT8, 300, "int32_data[5] is 300, outside INT8's range"},
      {ONNX__TENSOR_PROTO__DATA_TYPE__UINT8, -1, "int32_data[5] is -1, outside UINT8's range"},
      {ONNX__TENSOR_PROTO__DATA_TYPE__INT16, -40000, "is -40000, outside INT16's range"},
      {ONNX__TENSOR_PROTO__DATA_TYPE__UINT16, 65536, "is 65536, outside UINT16's range"},
      {ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT16, 70000, "is 70000, outside FLOAT16's range"},
  };
  for (size_t i = 0; i < COUNT(ranges); i++) {
    tensor_base(&p);
    int32_t ints[6] = {0, 0, 0, 0, 0, ranges[i].value};
    p.tp.data_type = ranges[i].type;
    p.tp.has_raw_data = 0;
    p.tp.n_int32_data = 6;
    p.tp.int32_data = ints;
    expect_tensor_error(&p, INV, ranges[i].mention);
  }
  tensor_base(&p);
  uint64_t big[6] = {0, 0, UINT64_C(1) << 32, 0, 0, 0};
  p.tp.data_type = ONNX__TENSOR_PROTO__DATA_TYPE__UINT32;
  p.tp.has_raw_data = 0;
  p.tp.n_uint64_data = 6;
  p.tp.uint64_data = big;
  expect_tensor_error(&p, INV, "uint64_data[2] is 4294967296, outside UINT32's range");
}
END_TEST

START_TEST(test_tensor_encode_errors) {
  dmlc_context *ctx = context();
  float x = 1;
  void *bytes = (void *)1;
  size_t size = 1;
  dmlc_onnx_tensor t = {
      .data_type = DML_TENSOR_DATA_TYPE_UINT4, .rank = 1, .dims = {1}, .data = &x};
  expect_failure(ctx, dmlc_onnx_tensor_encode(ctx, &t, &bytes, &size), DMLC_ERROR_INVALID_ARGUMENT,
                 "is not a data type dmlc knows", "UINT4");
  ck_assert_ptr_null(bytes);
  t.data_type = DML_TENSOR_DATA_TYPE_FLOAT32;
  t.rank = 9;
  expect_failure(ctx, dmlc_onnx_tensor_encode(ctx, &t, &bytes, &size), DMLC_ERROR_INVALID_ARGUMENT,
                 "rank 9", "rank 9");
  t.rank = 2;
  t.dims[1] = 0;
  expect_failure(ctx, dmlc_onnx_tensor_encode(ctx, &t, &bytes, &size), DMLC_ERROR_INVALID_ARGUMENT,
                 "dims[1] is 0", "dim 0");
  t.rank = 1;
  t.data = NULL;
  expect_failure(ctx, dmlc_onnx_tensor_encode(ctx, &t, &bytes, &size), DMLC_ERROR_INVALID_ARGUMENT,
                 "data is NULL", "NULL data");
  expect_failure(ctx, dmlc_onnx_tensor_encode(ctx, NULL, &bytes, &size),
                 DMLC_ERROR_INVALID_ARGUMENT, "tensor is NULL", "NULL tensor");
  expect_failure(ctx, dmlc_onnx_tensor_parse(ctx, NULL, 3, "x.pb", (dmlc_onnx_tensor **)&bytes),
                 DMLC_ERROR_INVALID_ARGUMENT, "bytes is NULL", "NULL bytes");
  ck_assert_int_eq(dmlc_onnx_tensor_parse(NULL, &x, 1, "x.pb", (dmlc_onnx_tensor **)&bytes),
                   DMLC_ERROR_INVALID_ARGUMENT);
  dmlc_context_destroy(ctx);
}
END_TEST

START_TEST(test_tensor_files) {
  dmlc_context *ctx = context();
  char path[] = "/tmp/dmlc_onnx_XXXXXX";
  const int fd = mkstemp(path);
  ck_assert_int_ge(fd, 0);
  close(fd);
  int64_t v = 42;
  const dmlc_onnx_tensor t = {
      .name = "scalar", .data_type = DML_TENSOR_DATA_TYPE_INT64, .data = &v};
  CHECK_OK(ctx, dmlc_onnx_tensor_write_file(ctx, path, &t), "write");
  dmlc_onnx_tensor *back;
  CHECK_OK(ctx, dmlc_onnx_tensor_read_file(ctx, path, &back), "read");
  ck_assert_uint_eq(back->rank, 0); /* ONNX's shape () */
  ck_assert_uint_eq(back->element_count, 1);
  ck_assert_str_eq(back->name, "scalar");
  ck_assert_int_eq(*(int64_t *)back->data, 42);
  dmlc_free(back);
  unlink(path);
  expect_failure(ctx, dmlc_onnx_tensor_read_file(ctx, path, &back), DMLC_ERROR_IO, path, "read");
  ck_assert_ptr_null(back);
  expect_failure(ctx, dmlc_onnx_tensor_write_file(ctx, "/nonexistent-dir/x.pb", &t), DMLC_ERROR_IO,
                 "/nonexistent-dir/x.pb: cannot create", "write");
  /* An empty file is no tensor. */
  FILE *f = fopen(path, "wb");
  fclose(f);
  expect_failure(ctx, dmlc_onnx_tensor_read_file(ctx, path, &back), DMLC_ERROR_INVALID_ARGUMENT,
                 "the file is empty, not an onnx.TensorProto", "empty");
  unlink(path);
  dmlc_context_destroy(ctx);
}
END_TEST

/* ---- import ---- */

static dmlc_graph *import_file(dmlc_context *ctx, const char *path,
                               const dmlc_onnx_options *options, dmlc_onnx_signature **sig) {
  size_t size;
  unsigned char *bytes = load(path, &size);
  dmlc_graph *g = NULL;
  CHECK_OK(ctx, dmlc_graph_import_onnx_with_options(ctx, bytes, size, path, options, &g, sig),
           path);
  free(bytes);
  CHECK_OK(ctx, dmlc_graph_verify(g), "verify");
  return g;
}

static void expect_ir(const char *path, const char *want) {
  dmlc_context *ctx = context();
  dmlc_graph *g = import_file(ctx, path, NULL, NULL);
  char *text;
  CHECK_OK(ctx, dmlc_graph_print(g, &text), "print");
  ck_assert_msg(strcmp(text, want) == 0, "%s imports as\n%s\nexpected\n%s", path, text, want);
  dmlc_free(text);
  dmlc_graph_destroy(g);
  dmlc_context_destroy(ctx);
}

/* What the mappings make, as IR: keepdims 0 is a reshape, Hardmax-1 and
 * -11 are a hardmax over the trailing axes, views become reshapes, and a
 * view that changes nothing is no node. */
START_TEST(test_import_ir) {
  char path[1024];
  snprintf(path, sizeof path, "%s/test_argmin_no_keepdims_example_select_last_index/model.onnx",
           official_dir());
  expect_ir(path, "graph @test_argmin_no_keepdims_example_select_last_index(%data: f32[2,2]) -> "
                  "(%result: i64[2]) {\n"
                  "  %0 = argmin %data {axes = [1], direction = decreasing} : i64[2,1]\n"
                  "  %1 = reshape %0 : i64[2]\n"
                  "  return %1\n"
                  "}\n");
  snprintf(path, sizeof path, "%s/test_hardmax_negative_axis/model.onnx", official_dir());
  expect_ir(path, "graph @test_hardmax_negative_axis(%x: f32[3,4,5]) -> (%y: f32[3,4,5]) {\n"
                  "  %0 = hardmax %x {axes = [2]} : f32[3,4,5]\n"
                  "  return %0\n"
                  "}\n");
  expect_ir(CASES_DIR "/hardmax_opset11_negative_axis/model.onnx",
            "graph @hardmax_opset11_negative_axis(%x: f32[2,3,4,5]) -> (%y: f32[2,3,4,5]) {\n"
            "  %0 = hardmax %x {axes = [2, 3]} : f32[2,3,4,5]\n"
            "  return %0\n"
            "}\n");
  expect_ir(CASES_DIR "/plumbing_reshape_initializer_opset11/model.onnx",
            "graph @plumbing_reshape_initializer_opset11(%x: f32[4,3,5]) -> (%y: i64[4]) {\n"
            "  %0 = reshape %x : f32[4,15]\n"
            "  %1 = argmax %0 {axes = [1], direction = increasing} : i64[4,1]\n"
            "  %2 = reshape %1 : i64[4]\n"
            "  return %2\n"
            "}\n");
  /* The Squeeze after keepdims 0 ... and a rank-1 keepdims 0 scalar is
   * held as [1]: no reshape at all. */
  expect_ir(CASES_DIR "/argmax_opset11_rank1_nokeepdims_scalar/model.onnx",
            "graph @argmax_opset11_rank1_nokeepdims_scalar(%x: f32[17]) -> (%y: i64[1]) {\n"
            "  %0 = argmax %x {axes = [0], direction = increasing} : i64[1]\n"
            "  return %0\n"
            "}\n");
}
END_TEST

/* The signature: ONNX's names beside the graph's (made valid, unique),
 * data types, and ONNX's shapes, () for a scalar. */
START_TEST(test_import_signature) {
  dmlc_context *ctx = context();
  dmlc_onnx_signature *sig = NULL;
  dmlc_graph *g = import_file(ctx, CASES_DIR "/names_made_valid/model.onnx", NULL, &sig);
  ck_assert_int_eq(sig->opset, 13);
  ck_assert_int_eq(sig->ir_version, 7);
  ck_assert_uint_eq(sig->input_count, 2);
  ck_assert_uint_eq(sig->output_count, 2);
  ck_assert_str_eq(sig->inputs[0].onnx_name, "input:0");
  ck_assert_str_eq(sig->inputs[0].name, "input_0");
  ck_assert_int_eq(sig->inputs[0].data_type, DML_TENSOR_DATA_TYPE_FLOAT32);
  ck_assert_uint_eq(sig->inputs[0].rank, 2);
  ck_assert_uint_eq(sig->inputs[0].dims[0], 4);
  ck_assert_uint_eq(sig->inputs[0].dims[1], 2);
  ck_assert_str_eq(sig->inputs[1].onnx_name, "1st");
  ck_assert_str_eq(sig->inputs[1].name, "_1st");
  ck_assert_int_eq(sig->inputs[1].data_type, DML_TENSOR_DATA_TYPE_INT32);
  ck_assert_str_eq(sig->outputs[0].onnx_name, "a/b");
  ck_assert_str_eq(sig->outputs[0].name, "a_b");
  ck_assert_str_eq(sig->outputs[1].onnx_name, "a:b");
  ck_assert_str_ne(sig->outputs[1].name, "a_b");
  ck_assert_int_eq(strncmp(sig->outputs[1].name, "a_b_", 4), 0);
  ck_assert_int_eq(sig->outputs[1].data_type, DML_TENSOR_DATA_TYPE_INT64);
  char *text;
  CHECK_OK(ctx, dmlc_graph_print(g, &text), "print");
  ck_assert_msg(strncmp(text, "graph @tf2onnx_graph(", 21) == 0, "graph name in %s", text);
  dmlc_free(text);
  dmlc_free(sig);
  dmlc_graph_destroy(g);

  /* A scalar output: rank 0 in the signature, [1] in the graph. */
  g = import_file(ctx, CASES_DIR "/plumbing_constant_nodes_opset11/model.onnx", NULL, &sig);
  ck_assert_uint_eq(sig->outputs[0].rank, 0);
  ck_assert_uint_eq(sig->inputs[0].rank, 3);
  dmlc_executable *exe;
  CHECK_OK(ctx, dmlc_graph_compile(g, DMLC_DEVICE_REFERENCE, &exe), "compile");
  dmlc_tensor_info info;
  CHECK_OK(ctx, dmlc_executable_output_info(exe, 0, &info), "info");
  ck_assert_uint_eq(info.dimension_count, 1);
  ck_assert_uint_eq(info.sizes[0], 1);
  dmlc_executable_destroy(exe);
  dmlc_free(sig);
  dmlc_graph_destroy(g);

  /* The signature alone. */
  size_t size;
  unsigned char *bytes = load(CASES_DIR "/argmax_opset13_types/model.onnx", &size);
  CHECK_OK(ctx, dmlc_graph_import_onnx_with_options(ctx, bytes, size, "m.onnx", NULL, NULL, &sig),
           "signature only");
  ck_assert_uint_eq(sig->input_count, 6);
  ck_assert_int_eq(sig->inputs[5].data_type, DML_TENSOR_DATA_TYPE_FLOAT64);
  ck_assert_uint_eq(sig->outputs[4].rank, 2);
  dmlc_free(sig);
  free(bytes);
  dmlc_context_destroy(ctx);
}
END_TEST

static dmlc_status import_symbolic(dmlc_context *ctx, const dmlc_onnx_shape *shapes, size_t count) {
  size_t size;
  unsigned char *bytes = load(CASES_DIR "/symbolic_dims_bound/model.onnx", &size);
  const dmlc_onnx_options options = {shapes, count};
  dmlc_graph *g = NULL;
  dmlc_onnx_signature *sig = NULL;
  const dmlc_status st =
      dmlc_graph_import_onnx_with_options(ctx, bytes, size, "sym.onnx", &options, &g, &sig);
  free(bytes);
  if (st == DMLC_OK) {
    CHECK_OK(ctx, dmlc_graph_verify(g), "verify");
    ck_assert_uint_eq(sig->inputs[0].dims[0], 3);
    ck_assert_uint_eq(sig->inputs[1].dims[1], 5);
    ck_assert_uint_eq(sig->outputs[1].dims[1], 5);
  } else {
    ck_assert_ptr_null(g);
    ck_assert_ptr_null(sig);
  }
  dmlc_free(sig);
  dmlc_graph_destroy(g);
  return st;
}

/* Symbolic dims bound by name (dim_param) or by the input's whole shape,
 * and every way to get the binding wrong. */
START_TEST(test_import_options) {
  const dmlc_status INV = DMLC_ERROR_INVALID_ARGUMENT;
  dmlc_context *ctx = context();
  const uint64_t three[] = {3}, z35[] = {3, 5}, z45[] = {4, 5}, z3[] = {3}, two[] = {3, 4},
                 zero[] = {0}, x34[] = {3, 4}, x35[] = {3, 5};
  const dmlc_onnx_shape good[] = {{"N", three, 1}, {"z", z35, 2}};
  CHECK_OK(ctx, import_symbolic(ctx, good, 2), "N and z");
  /* z's whole shape gives N too. */
  const dmlc_onnx_shape by_input[] = {{"z", z35, 2}};
  CHECK_OK(ctx, import_symbolic(ctx, by_input, 1), "z alone");
  const dmlc_onnx_shape both_inputs[] = {{"x", x34, 2}, {"z", z35, 2}};
  CHECK_OK(ctx, import_symbolic(ctx, both_inputs, 2), "x and z");

  expect_failure(ctx, import_symbolic(ctx, NULL, 0), INV,
                 "sym.onnx: input 'x': dim 0 is the symbolic 'N'", "none");
  const dmlc_onnx_shape n_only[] = {{"N", three, 1}};
  expect_failure(ctx, import_symbolic(ctx, n_only, 1), INV,
                 "input 'z': dim 1 has neither a value nor a name", "N only");
  const dmlc_onnx_shape conflict[] = {{"N", three, 1}, {"z", z45, 2}};
  expect_failure(ctx, import_symbolic(ctx, conflict, 2), INV,
                 "the symbolic dim 'N' is 3, but the shape given for input 'z' makes it 4",
                 "conflict");
  const dmlc_onnx_shape fixed[] = {{"x", x35, 2}, {"z", z35, 2}};
  expect_failure(ctx, import_symbolic(ctx, fixed, 2), INV,
                 "input 'x': dim 1 is 4 in the model, but the shape given for it says 5", "fixed");
  const dmlc_onnx_shape rank[] = {{"N", three, 1}, {"z", z3, 1}};
  expect_failure(ctx, import_symbolic(ctx, rank, 2), INV,
                 "input 'z' has rank 2, but the shape given for it has 1 dims", "rank");
  const dmlc_onnx_shape unknown[] = {{"Q", three, 1}};
  expect_failure(ctx, import_symbolic(ctx, unknown, 1), INV,
                 "shapes[0] names 'Q', which is neither an input nor a symbolic dim", "unknown");
  const dmlc_onnx_shape twice[] = {{"N", three, 1}, {"N", three, 1}};
  expect_failure(ctx, import_symbolic(ctx, twice, 2), INV, "shapes[0] and shapes[1] both name 'N'",
                 "twice");
  const dmlc_onnx_shape many[] = {{"N", two, 2}};
  expect_failure(ctx, import_symbolic(ctx, many, 1), INV,
                 "gives the symbolic dim 'N' 2 values; it takes one", "two values");
  const dmlc_onnx_shape zeros[] = {{"N", zero, 1}};
  expect_failure(ctx, import_symbolic(ctx, zeros, 1), INV, "dims[0] is 0; dims are 1 to", "zero");
  const dmlc_onnx_shape unnamed[] = {{NULL, three, 1}};
  expect_failure(ctx, import_symbolic(ctx, unnamed, 1), INV, "shapes[0] has no name", "no name");
  const dmlc_onnx_shape no_dims[] = {{"N", NULL, 1}};
  expect_failure(ctx, import_symbolic(ctx, no_dims, 1), INV, "shapes[0] ('N') has 1 dims",
                 "no dims");
  expect_failure(ctx, import_symbolic(ctx, NULL, 2), INV, "shapes is NULL, shape_count 2",
                 "NULL shapes");
  dmlc_context_destroy(ctx);
}
END_TEST

START_TEST(test_import_arguments) {
  dmlc_context *ctx = context();
  dmlc_graph *g = (dmlc_graph *)1;
  const unsigned char byte = 0;
  ck_assert_int_eq(dmlc_graph_import_onnx(NULL, &byte, 1, "m.onnx", &g),
                   DMLC_ERROR_INVALID_ARGUMENT);
  expect_failure(ctx, dmlc_graph_import_onnx(ctx, &byte, 1, "m.onnx", NULL),
                 DMLC_ERROR_INVALID_ARGUMENT, "out is NULL", "NULL out");
  expect_failure(ctx, dmlc_graph_import_onnx(ctx, NULL, 5, "m.onnx", &g),
                 DMLC_ERROR_INVALID_ARGUMENT, "bytes is NULL", "NULL bytes");
  ck_assert_ptr_null(g);
  expect_failure(ctx,
                 dmlc_graph_import_onnx_with_options(ctx, &byte, 1, "m.onnx", NULL, NULL, NULL),
                 DMLC_ERROR_INVALID_ARGUMENT, "out and out_signature are NULL", "no outputs");
  expect_failure(ctx, dmlc_graph_import_onnx(ctx, NULL, 0, "m.onnx", &g),
                 DMLC_ERROR_INVALID_ARGUMENT, "m.onnx: the file is empty, not an onnx.ModelProto",
                 "empty");
  expect_failure(ctx, dmlc_graph_import_onnx(ctx, &byte, 0, NULL, &g), DMLC_ERROR_INVALID_ARGUMENT,
                 "<model>: the file is empty", "no file name");
  dmlc_context_destroy(ctx);
}
END_TEST

/* ---- errors ---- */

static char *error_models[MAX_CASES];
static size_t num_error_models;

/* The "# error: TEXT" lines of a textproto (each must be in the message)
 * and its "# status: unsupported" line (default: invalid argument). */
static void expect_model_error(const char *textproto) {
  char *text = dmlc_test_read_file(textproto, NULL);
  ck_assert_ptr_nonnull(text);
  const char *base = strrchr(textproto, '/') + 1;
  char path[1024];
  snprintf(path, sizeof path, "%s/%.*s.onnx", ERRORS_BIN, (int)(strlen(base) - 10), base);
  size_t size;
  unsigned char *bytes = load(path, &size);
  dmlc_context *ctx = context();
  dmlc_graph *g = (dmlc_graph *)1;
  dmlc_onnx_signature *sig = (dmlc_onnx_signature *)1;
  const dmlc_status st =
      dmlc_graph_import_onnx_with_options(ctx, bytes, size, "bad.onnx", NULL, &g, &sig);
  free(bytes);
  ck_assert_ptr_null(g);
  ck_assert_ptr_null(sig);
  const dmlc_status want =
      strstr(text, "# status: unsupported") ? DMLC_ERROR_UNSUPPORTED : DMLC_ERROR_INVALID_ARGUMENT;
  const char *msg = dmlc_context_error(ctx);
  ck_assert_msg(st == want, "%s: status %s, expected %s (message: '%s')", base,
                dmlc_status_string(st), dmlc_status_string(want), msg);
  ck_assert_msg(strncmp(msg, "bad.onnx: ", 10) == 0, "%s: '%s' does not name the file", base, msg);
  int expectations = 0;
  for (char *line = strstr(text, "# error: "); line; line = strstr(line + 1, "# error: ")) {
    char *end = strchr(line, '\n');
    const char *want_text = line + 9;
    char saved = end ? *end : '\0';
    if (end)
      *end = '\0';
    ck_assert_msg(strstr(msg, want_text), "%s: the message\n  %s\ndoes not say\n  %s", base, msg,
                  want_text);
    if (end)
      *end = saved;
    expectations++;
  }
  ck_assert_msg(expectations > 0, "%s has no '# error:' line", textproto);
  free(text);
  dmlc_context_destroy(ctx);
}

START_TEST(test_error_model) { expect_model_error(error_models[_i]); }
END_TEST

START_TEST(test_error_models_found) { ck_assert_uint_ge(num_error_models, 60); }
END_TEST

/* ---- malformed bytes ---- */

static dmlc_status import_bytes(dmlc_context *ctx, const unsigned char *bytes, size_t size) {
  unsigned char *exact = malloc(size ? size : 1);
  memcpy(exact, bytes, size);
  dmlc_graph *g = NULL;
  dmlc_onnx_signature *sig = NULL;
  const dmlc_status st =
      dmlc_graph_import_onnx_with_options(ctx, exact, size, "bad.onnx", NULL, &g, &sig);
  free(exact);
  if (st == DMLC_OK) {
    CHECK_OK(ctx, dmlc_graph_verify(g), "a mutant imported, but does not verify");
    ck_assert_uint_eq(sig->input_count + sig->output_count > 0, 1);
  } else {
    /* Plain ifs, not ck_assert: this runs for every prefix and mutant (30 000
     * a run), and each passing ck_assert writes its place to Check's pipe. */
    const char *msg = dmlc_context_error(ctx);
    if (!(strncmp(msg, "bad.onnx: ", 10) == 0 && strlen(msg) > 12))
      ck_abort_msg("a failed import says '%s'", msg);
    /* What the wire check let through, protobuf-c decoded. */
    if (!(st == DMLC_ERROR_INVALID_ARGUMENT || st == DMLC_ERROR_UNSUPPORTED))
      ck_abort_msg("a failed import is %s: '%s'", dmlc_status_string(st), msg);
    if (g || sig)
      ck_abort_msg("a failed import returned a graph or a signature");
  }
  dmlc_free(sig);
  dmlc_graph_destroy(g);
  return st;
}

static void expect_bytes_error(const unsigned char *bytes, size_t size, const char *mention) {
  dmlc_context *ctx = context();
  expect_failure(ctx, import_bytes(ctx, bytes, size), DMLC_ERROR_INVALID_ARGUMENT, mention,
                 mention);
  dmlc_context_destroy(ctx);
}

/* Broken protobuf, named by byte and field. */
START_TEST(test_malformed_wire) {
  /* ModelProto field 1 (ir_version, varint) cut off. */
  expect_bytes_error((const unsigned char *)"\x08", 1,
                     "bad.onnx: byte 1, in onnx.ModelProto.ir_version: a varint cut off");
  expect_bytes_error((const unsigned char *)"\x08\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\x01", 12,
                     "a varint over 10 bytes");
  /* ir_version with wire type 2. */
  expect_bytes_error((const unsigned char *)"\x0a\x01\x00", 3,
                     "byte 0, in onnx.ModelProto.ir_version: field 1 has wire type 2 "
                     "(length-delimited); the schema wants 0 (varint)");
  /* graph (field 7) with wire type 0. */
  expect_bytes_error((const unsigned char *)"\x38\x01", 2,
                     "field 7 has wire type 0 (varint); the schema wants 2 (length-delimited)");
  /* graph: 16 bytes claimed, 1 there. */
  expect_bytes_error((const unsigned char *)"\x3a\x10\x00", 3,
                     "byte 1, in onnx.ModelProto.graph: a length of 16 bytes, but only 1 are left "
                     "in the file");
  /* a length inside the graph past the graph's end */
  expect_bytes_error((const unsigned char *)"\x3a\x02\x0a\x05\x00\x00\x00\x00\x00", 9,
                     "byte 3, in onnx.GraphProto.node: a length of 5 bytes, but only 0 are left "
                     "in the enclosing message");
  expect_bytes_error(
      (const unsigned char *)"\x0b", 1,
      "byte 0, in onnx.ModelProto.ir_version: wire type 3 (group start), which ONNX files "
      "never use");
  expect_bytes_error((const unsigned char *)"\x0f", 1, "wire type 7 (undefined)");
  expect_bytes_error((const unsigned char *)"\x00\x00", 2, "field number 0, outside 1 to");
  /* protobuf-c reads keys and lengths of at most 5 bytes, lengths up to
   * 2^31-1. */
  expect_bytes_error((const unsigned char *)"\x88\x80\x80\x80\x80\x00", 6,
                     "byte 0, in onnx.ModelProto: a field's key over 5 bytes");
  expect_bytes_error((const unsigned char *)"\x3a\x80\x80\x80\x80\x80\x00", 7,
                     "byte 1, in onnx.ModelProto.graph: a length over 5 bytes");
  expect_bytes_error((const unsigned char *)"\x3a\xff\xff\xff\xff\x0f", 6,
                     "a length of 4294967295 bytes; protobuf's limit is 2147483647");
  expect_bytes_error((const unsigned char *)"\x80\x80\x80\x80\x10", 5,
                     "field number 536870912, outside 1 to 536870911");
  /* an unknown field (99) of a fixed size, cut off */
  expect_bytes_error((const unsigned char *)"\x9d\x06\x00\x00", 4,
                     "byte 2, in onnx.ModelProto: a 4-byte value, but only 2 bytes are left");
  /* graph { initializer { float_data (packed, field 4): 3 bytes } } */
  expect_bytes_error((const unsigned char *)"\x3a\x07\x2a\x05\x22\x03\x00\x00\x00", 9,
                     "in onnx.TensorProto.float_data: a packed array of 3 bytes, not a whole "
                     "number of 4-byte values");
  /* graph { initializer { dims (packed varints): a varint cut off } } */
  expect_bytes_error((const unsigned char *)"\x3a\x05\x2a\x03\x0a\x01\x80", 7,
                     "in onnx.TensorProto.dims: a packed array ends inside a varint");
  /* well-formed, but no opset */
  expect_bytes_error((const unsigned char *)"\x08\x07", 2,
                     "the model imports no opset of ONNX's default domain");
  expect_bytes_error((const unsigned char *)"", 0, "the file is empty");
}
END_TEST

/* bytes of a message nested `levels` deep: the fields prefix[] once, then
 * cycle[] repeated, each a length-delimited submessage of the one before. */
static unsigned char *nest(const uint32_t *prefix, size_t n_prefix, const uint32_t *cycle,
                           size_t n_cycle, size_t levels, size_t *size) {
  size_t *inner = calloc(levels + 1, sizeof *inner);
  uint32_t *field = calloc(levels, sizeof *field);
  for (size_t j = 0; j < levels; j++)
    field[j] = j < n_prefix ? prefix[j] : cycle[(j - n_prefix) % n_cycle];
  for (size_t j = levels; j-- > 0;) {
    size_t len = inner[j + 1], varint = 1;
    while (len >= 128)
      len >>= 7, varint++;
    inner[j] = 1 + varint + inner[j + 1]; /* all the field numbers here are below 16 */
  }
  *size = inner[0];
  unsigned char *out = malloc(*size), *p = out;
  for (size_t j = 0; j < levels; j++) {
    *p++ = (unsigned char)(field[j] << 3 | 2);
    for (size_t len = inner[j + 1];; len >>= 7) {
      *p++ = (unsigned char)((len & 127) | (len >= 128 ? 128 : 0));
      if (len < 128)
        break;
    }
  }
  free(inner);
  free(field);
  return out;
}

/* protobuf-c recurses once per nested message: deep nesting is refused
 * before it runs, whatever the path (subgraphs, or types in types). */
START_TEST(test_malformed_deep_nesting) {
  /* ModelProto.graph, then GraphProto.node -> NodeProto.attribute ->
   * AttributeProto.g -> GraphProto ... */
  const uint32_t graph[] = {7}, graphs[] = {1, 5, 6};
  size_t size;
  unsigned char *bytes = nest(graph, 1, graphs, 3, 300000, &size);
  expect_bytes_error(bytes, size, "messages nested more than 64 deep");
  free(bytes);
  /* GraphProto.input -> ValueInfoProto.type -> TypeProto.sequence_type ->
   * Sequence.elem_type -> TypeProto ... */
  const uint32_t to_type[] = {7, 11, 2}, types[] = {4, 1};
  bytes = nest(to_type, 3, types, 2, 200000, &size);
  expect_bytes_error(bytes, size, "messages nested more than 64 deep");
  free(bytes);
  /* 60 deep is fine for the walk (the model is then refused for what it
   * says, not for how it is nested). */
  bytes = nest(graph, 1, graphs, 3, 60, &size);
  dmlc_context *ctx = context();
  ck_assert_int_ne(import_bytes(ctx, bytes, size), DMLC_OK);
  ck_assert_ptr_null(strstr(dmlc_context_error(ctx), "nested"));
  dmlc_context_destroy(ctx);
  free(bytes);
}
END_TEST

/* Every prefix of real models: an error with a message (or, cut at a field
 * boundary, possibly a model that imports and verifies). */
START_TEST(test_malformed_truncated) {
  dmlc_context *ctx = context();
  for (size_t c = 0; c < num_cases; c++) {
    char path[1024];
    snprintf(path, sizeof path, "%s/model.onnx", cases[c]);
    size_t size;
    unsigned char *bytes = load(path, &size);
    for (size_t n = 0; n < size; n++)
      import_bytes(ctx, bytes, n);
    free(bytes);
    for (int k = 0; k < 2; k++) {
      snprintf(path, sizeof path, "%s/test_data_set_0/%s_0.pb", cases[c], k ? "output" : "input");
      bytes = load(path, &size);
      for (size_t n = 0; n + 1 < size; n++) {
        dmlc_onnx_tensor *t = NULL;
        unsigned char *exact = malloc(n ? n : 1);
        memcpy(exact, bytes, n);
        /* A TensorProto cut anywhere before its data's end lacks data. (Plain
         * ifs, as in import_bytes: one cut a byte.) */
        if (dmlc_onnx_tensor_parse(ctx, exact, n, "cut.pb", &t) == DMLC_OK || t)
          ck_abort_msg("%s cut to %zu bytes parses", path, n);
        if (strncmp(dmlc_context_error(ctx), "cut.pb: ", 8) != 0)
          ck_abort_msg("%s cut to %zu bytes: the message '%s'", path, n, dmlc_context_error(ctx));
        free(exact);
      }
      free(bytes);
    }
  }
  dmlc_context_destroy(ctx);
}
END_TEST

static uint64_t next_random(uint64_t *state) {
  *state ^= *state << 13;
  *state ^= *state >> 7;
  *state ^= *state << 17;
  return *state;
}

/* Mutants of every model (bytes flipped, set, removed, repeated): each an
 * error with a message or a graph that verifies. The same for tensors. */
START_TEST(test_malformed_mutants) {
  dmlc_context *ctx = context();
  uint64_t state = 0x9e3779b97f4a7c15ull;
  size_t imported = 0, tried = 0;
  for (size_t c = 0; c < num_cases; c++) {
    char path[1024];
    snprintf(path, sizeof path, "%s/model.onnx", cases[c]);
    size_t size;
    unsigned char *bytes = load(path, &size);
    unsigned char *m = malloc(2 * size + 16);
    for (int round = 0; round < 400; round++) {
      size_t n = size;
      memcpy(m, bytes, size);
      const int edits = 1 + (int)(next_random(&state) % 3);
      for (int e = 0; e < edits && n > 0; e++) {
        const size_t at = next_random(&state) % n;
        switch (next_random(&state) % 5) {
        case 0:
          m[at] ^= (unsigned char)(1u << (next_random(&state) % 8));
          break;
        case 1:
          m[at] = (unsigned char)next_random(&state);
          break;
        case 2: { /* remove up to 4 bytes */
          size_t len = 1 + next_random(&state) % 4;
          if (len > n - at)
            len = n - at;
          memmove(m + at, m + at + len, n - at - len);
          n -= len;
          break;
        }
        case 3: { /* repeat up to 8 bytes */
          size_t len = 1 + next_random(&state) % 8;
          if (len > n - at)
            len = n - at;
          if (n + len <= 2 * size + 16) {
            memmove(m + at + len, m + at, n - at);
            n += len;
          }
          break;
        }
        default: /* a boundary value */
          m[at] = (const unsigned char[]){0x00, 0x7f, 0x80, 0xff}[next_random(&state) % 4];
          break;
        }
      }
      imported += import_bytes(ctx, m, n) == DMLC_OK;
      tried++;
    }
    free(m);
    free(bytes);
  }
  /* The mutants reach past the wire check: some still import. */
  ck_assert_uint_gt(imported, 0);
  ck_assert_uint_lt(imported, tried);
  dmlc_context_destroy(ctx);
}
END_TEST

START_TEST(test_malformed_tensor_mutants) {
  dmlc_context *ctx = context();
  uint64_t state = 0x2545f4914f6cdd1dull;
  for (size_t c = 0; c < num_cases; c++) {
    char path[1024];
    snprintf(path, sizeof path, "%s/test_data_set_0/input_0.pb", cases[c]);
    size_t size;
    unsigned char *bytes = load(path, &size);
    for (int round = 0; round < 200; round++) {
      unsigned char *m = malloc(size);
      memcpy(m, bytes, size);
      const size_t at = next_random(&state) % size;
      m[at] = (unsigned char)next_random(&state);
      const size_t n = next_random(&state) % 4 ? size : next_random(&state) % size;
      dmlc_onnx_tensor *t = NULL;
      if (dmlc_onnx_tensor_parse(ctx, m, n, "m.pb", &t) == DMLC_OK) {
        const uint32_t es = dmlc_data_type_size(t->data_type);
        ck_assert_uint_gt(es, 0);
        ck_assert_uint_eq(t->size_bytes, t->element_count * es);
        ck_assert_uint_le(t->size_bytes, n);
        dmlc_free(t);
      } else {
        ck_assert_int_eq(strncmp(dmlc_context_error(ctx), "m.pb: ", 6), 0);
      }
      free(m);
    }
    free(bytes);
  }
  dmlc_context_destroy(ctx);
}
END_TEST

/* Big graphs import in linear time: 40000 inputs whose names all become
 * "a___" (so each needs a suffix), 40000 chained Identity and Unsqueeze /
 * Squeeze nodes. */
START_TEST(test_malformed_big_graph) {
  enum { INPUTS = 40000, NODES = 40000 };
  Onnx__ModelProto model = ONNX__MODEL_PROTO__INIT;
  Onnx__OperatorSetIdProto opset = ONNX__OPERATOR_SET_ID_PROTO__INIT, *opsets[] = {&opset};
  opset.has_version = 1;
  opset.version = 11;
  model.n_opset_import = 1;
  model.opset_import = opsets;
  Onnx__GraphProto graph = ONNX__GRAPH_PROTO__INIT;
  model.graph = &graph;
  Onnx__TensorShapeProto__Dimension dim = ONNX__TENSOR_SHAPE_PROTO__DIMENSION__INIT,
                                    *dims[] = {&dim};
  dim.value_case = ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE;
  dim.dim_value = 3;
  Onnx__TensorShapeProto shape = ONNX__TENSOR_SHAPE_PROTO__INIT;
  shape.n_dim = 1;
  shape.dim = dims;
  Onnx__TypeProto__Tensor tensor_type = ONNX__TYPE_PROTO__TENSOR__INIT;
  tensor_type.has_elem_type = 1;
  tensor_type.elem_type = ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT;
  tensor_type.shape = &shape;
  Onnx__TypeProto type = ONNX__TYPE_PROTO__INIT;
  type.value_case = ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE;
  type.tensor_type = &tensor_type;
  Onnx__ValueInfoProto *inputs = calloc(INPUTS, sizeof *inputs);
  Onnx__ValueInfoProto **input_ptrs = calloc(INPUTS, sizeof *input_ptrs);
  char(*input_names)[8] = calloc(INPUTS, sizeof *input_names);
  for (int i = 0; i < INPUTS; i++) {
    inputs[i] = (Onnx__ValueInfoProto)ONNX__VALUE_INFO_PROTO__INIT;
    snprintf(input_names[i], sizeof input_names[i], "a%c%c%c", 0x80 + i % 120, 0x80 + i / 120 % 120,
             0x80 + i / 14400);
    inputs[i].name = input_names[i];
    inputs[i].type = &type;
    input_ptrs[i] = &inputs[i];
  }
  graph.n_input = INPUTS;
  graph.input = input_ptrs;
  Onnx__NodeProto *nodes = calloc(NODES, sizeof *nodes);
  Onnx__NodeProto **node_ptrs = calloc(NODES, sizeof *node_ptrs);
  char(*names)[16] = calloc(NODES + 1, sizeof *names);
  char **ins = calloc(NODES, sizeof *ins), **outs = calloc(NODES, sizeof *outs);
  Onnx__AttributeProto axes = ONNX__ATTRIBUTE_PROTO__INIT, *attrs[] = {&axes};
  int64_t zero = 0;
  axes.name = "axes";
  axes.has_type = 1;
  axes.type = ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INTS;
  axes.n_ints = 1;
  axes.ints = &zero;
  snprintf(names[0], sizeof names[0], "%s", input_names[0]);
  for (int i = 0; i < NODES; i++) {
    nodes[i] = (Onnx__NodeProto)ONNX__NODE_PROTO__INIT;
    snprintf(names[i + 1], sizeof names[i + 1], "v%d", i);
    ins[i] = names[i];
    outs[i] = names[i + 1];
    nodes[i].n_input = nodes[i].n_output = 1;
    nodes[i].input = &ins[i];
    nodes[i].output = &outs[i];
    nodes[i].op_type = i % 3 == 0 ? "Identity" : i % 3 == 1 ? "Unsqueeze" : "Squeeze";
    nodes[i].n_attribute = i % 3 != 0;
    nodes[i].attribute = attrs;
    node_ptrs[i] = &nodes[i];
  }
  graph.n_node = NODES;
  graph.node = node_ptrs;
  Onnx__ValueInfoProto output = ONNX__VALUE_INFO_PROTO__INIT, *output_ptrs[] = {&output};
  output.name = names[NODES];
  graph.n_output = 1;
  graph.output = output_ptrs;
  const size_t size = protobuf_c_message_get_packed_size(&model.base);
  unsigned char *bytes = malloc(size);
  protobuf_c_message_pack(&model.base, bytes);
  dmlc_context *ctx = context();
  dmlc_graph *g = NULL;
  dmlc_onnx_signature *sig = NULL;
  struct timespec t0, t1;
  clock_gettime(CLOCK_MONOTONIC, &t0);
  CHECK_OK(ctx, dmlc_graph_import_onnx_with_options(ctx, bytes, size, "big.onnx", NULL, &g, &sig),
           "big");
  clock_gettime(CLOCK_MONOTONIC, &t1);
  const double seconds = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) * 1e-9;
  ck_assert_msg(seconds < 5, "importing %zu bytes took %.1f s", size, seconds);
  ck_assert_uint_eq(sig->input_count, INPUTS);
  ck_assert_str_eq(sig->inputs[0].name, "a___");
  ck_assert_str_ne(sig->inputs[1].name, "a___");
  ck_assert_uint_eq(sig->outputs[0].rank, 1);
  dmlc_free(sig);
  dmlc_graph_destroy(g);
  dmlc_context_destroy(ctx);
  free(bytes);
  free(inputs);
  free(input_ptrs);
  free(input_names);
  free(nodes);
  free(node_ptrs);
  free(names);
  free(ins);
  free(outs);
}
END_TEST

/* ---- the suites ---- */

static void list_cases(void) {
  list_dir(official_dir(), is_official_case, cases, &num_cases, MAX_CASES);
  num_official = num_cases;
  list_dir(CASES_DIR, is_own_case, cases, &num_cases, MAX_CASES);
  list_dir(ERRORS_SRC, is_textproto, error_models, &num_error_models, MAX_CASES);
  const char *only = getenv("DMLC_TEST_DEVICE");
  for (size_t i = 0; i < dmlc_device_count() && num_devices < COUNT(devices); i++)
    if (!only || !*only || strcmp(only, dmlc_device_name(dmlc_device_at(i))) == 0)
      devices[num_devices++] = dmlc_device_at(i);
}

static Suite *suite(void) {
  Suite *s = suite_create("onnx");
  TCase *tc = tcase_create("tensor");
  tcase_add_test(tc, test_tensor_round_trip);
  tcase_add_test(tc, test_tensor_official_files);
  tcase_add_test(tc, test_tensor_typed_fields);
  tcase_add_test(tc, test_tensor_errors);
  tcase_add_test(tc, test_tensor_encode_errors);
  tcase_add_test(tc, test_tensor_files);
  suite_add_tcase(s, tc);
  tc = tcase_create("import");
  tcase_add_test(tc, test_import_ir);
  tcase_add_test(tc, test_import_signature);
  tcase_add_test(tc, test_import_options);
  tcase_add_test(tc, test_import_arguments);
  suite_add_tcase(s, tc);
  tc = tcase_create("errors");
  tcase_add_test(tc, test_error_models_found);
  tcase_add_loop_test(tc, test_error_model, 0, (int)num_error_models);
  suite_add_tcase(s, tc);
  tc = tcase_create("malformed");
  tcase_add_test(tc, test_malformed_wire);
  tcase_add_test(tc, test_malformed_deep_nesting);
  tcase_add_test(tc, test_malformed_truncated);
  tcase_add_test(tc, test_malformed_mutants);
  tcase_add_test(tc, test_malformed_tensor_mutants);
  tcase_add_test(tc, test_malformed_big_graph);
  suite_add_tcase(s, tc);
  tc = tcase_create("conformance");
  tcase_add_test(tc, test_conformance_coverage);
  tcase_add_loop_test(tc, test_conformance_case, 0, (int)(num_devices * num_cases));
  suite_add_tcase(s, tc);
  return s;
}

int main(void) {
  list_cases();
  printf("onnx: %zu of ONNX's node tests (%s) and %zu own cases, on %zu devices; %zu broken "
         "models\n",
         num_official, official_dir(), num_cases - num_official, num_devices, num_error_models);
  fflush(stdout);
  Suite *s = suite();
  const int rc = dmlc_test_run_suites(&s, 1);
  for (size_t i = 0; i < num_cases; i++)
    free(cases[i]);
  for (size_t i = 0; i < num_error_models; i++)
    free(error_models[i]);
  return rc;
}
