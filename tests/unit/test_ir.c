/* The IR's printer, parser and verifier: exact text, round trips, every
 * parser error with its position, every verifier rule, and a robustness run
 * of mutated texts. */
#include <glob.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ir/ir.h"
#include "testutil.h"

/* ---- helpers ---- */

/* A malloc'ed copy of text without its NUL, so reading past the end is an
 * error valgrind and the sanitizers see. */
static char *exact_copy(const char *text, size_t len) {
  char *copy = malloc(len ? len : 1);
  ck_assert_ptr_nonnull(copy);
  memcpy(copy, text, len);
  return copy;
}

static dmlc_status parse_len(const char *text, size_t len, dmlc_ir_graph **g, dmlc_diag *diag) {
  char *copy = exact_copy(text, len);
  dmlc_diag_clear(diag);
  const dmlc_status status = dmlc_ir_parse(copy, len, "t.dmlir", g, diag);
  free(copy);
  return status;
}

static dmlc_ir_graph *parse_ok(const char *text) {
  dmlc_ir_graph *g = NULL;
  dmlc_diag diag;
  const dmlc_status status = parse_len(text, strlen(text), &g, &diag);
  ck_assert_msg(status == DMLC_OK, "parse failed: %s\n%s", diag.message, text);
  ck_assert_ptr_nonnull(g);
  return g;
}

static char *print_ok(const dmlc_ir_graph *g) {
  char *text = dmlc_ir_print(g);
  ck_assert_ptr_nonnull(text);
  return text;
}

static void check_prints_as(const char *text, const char *expected) {
  dmlc_ir_graph *g = parse_ok(text);
  char *printed = print_ok(g);
  ck_assert_str_eq(printed, expected);
  free(printed);
  dmlc_ir_graph_destroy(g);
}

/* print(parse(print(parse(text)))) == print(parse(text)); returns the print. */
static char *check_roundtrip(const char *text) {
  dmlc_ir_graph *g = parse_ok(text);
  char *first = print_ok(g);
  dmlc_ir_graph *again = parse_ok(first);
  char *second = print_ok(again);
  ck_assert_str_eq(first, second);
  free(second);
  dmlc_ir_graph_destroy(again);
  dmlc_ir_graph_destroy(g);
  return first;
}

static void check_graph_roundtrip(const dmlc_ir_graph *g) {
  char *first = print_ok(g);
  free(check_roundtrip(first));
  dmlc_ir_graph *again = parse_ok(first);
  char *second = print_ok(again);
  ck_assert_str_eq(first, second);
  free(first);
  free(second);
  dmlc_ir_graph_destroy(again);
}

/* marked_text holds one '^' before the offending token; the parse must fail
 * with "t.dmlir:LINE:COL: message" at that position. */
static void check_parse_error(const char *marked_text, const char *message) {
  const char *mark = strchr(marked_text, '^');
  ck_assert_msg(mark != NULL, "no '^' in %s", marked_text);
  size_t line = 1, col = 1;
  for (const char *c = marked_text; c < mark; c++) {
    if (*c == '\n') {
      line++;
      col = 1;
    } else {
      col++;
    }
  }
  const size_t len = strlen(marked_text) - 1;
  char *text = malloc(len + 1);
  ck_assert_ptr_nonnull(text);
  memcpy(text, marked_text, (size_t)(mark - marked_text));
  memcpy(text + (mark - marked_text), mark + 1, len - (size_t)(mark - marked_text));
  text[len] = '\0';
  char expected[DMLC_DIAG_MAX];
  snprintf(expected, sizeof expected, "t.dmlir:%zu:%zu: %s", line, col, message);
  dmlc_ir_graph *g = (dmlc_ir_graph *)1;
  dmlc_diag diag;
  const dmlc_status status = parse_len(text, len, &g, &diag);
  ck_assert_msg(status == DMLC_ERROR_INVALID_ARGUMENT, "parsed, expected '%s':\n%s", expected,
                text);
  ck_assert_ptr_null(g);
  ck_assert_str_eq(diag.message, expected);
  free(text);
}

static void check_verify_ok(const char *text) {
  dmlc_ir_graph *g = parse_ok(text);
  dmlc_diag diag;
  dmlc_diag_clear(&diag);
  const dmlc_status status = dmlc_ir_verify(g, &diag);
  ck_assert_msg(status == DMLC_OK, "verify failed: %s\n%s", diag.message, text);
  dmlc_ir_graph_destroy(g);
}

static void check_graph_verify_error(const dmlc_ir_graph *g, const char *substring) {
  dmlc_diag diag;
  dmlc_diag_clear(&diag);
  const dmlc_status status = dmlc_ir_verify(g, &diag);
  ck_assert_msg(status == DMLC_ERROR_INVALID_ARGUMENT, "verified, expected '%s'", substring);
  ck_assert_msg(strstr(diag.message, substring) != NULL, "message '%s' lacks '%s'", diag.message,
                substring);
}

/* text parses (it is syntactically valid) but breaks a verifier rule. */
static void check_verify_error(const char *text, const char *substring) {
  dmlc_ir_graph *g = parse_ok(text);
  check_graph_verify_error(g, substring);
  dmlc_ir_graph_destroy(g);
}

static dmlc_type make_type(dmlc_dtype dtype, uint32_t rank, const uint32_t *dims) {
  dmlc_type t;
  memset(&t, 0, sizeof t);
  t.dtype = dtype;
  t.rank = rank;
  memcpy(t.dims, dims, rank * sizeof *dims);
  return t;
}

/* ---- texts used by several tests ---- */
static const char hardmax_text[] = "graph @hardmax_example(%x: f32[2,2,2]) -> (f32[2,2,2]) {\n"
                                   "  %0 = hardmax %x {axes = [0, 2]} : f32[2,2,2]\n"
                                   "  return %0\n"
                                   "}\n";

static const char lowered_text[] =
    "graph @hardmax_example(%x: f32[2,2,2]) -> (f32[2,2,2]) {\n"
    "  %0 = argmax %x {axes = [0, 2], direction = increasing} : u32[1,2,1]\n"
    "  %1 = broadcast %0 : u32[2,2,2]\n"
    "  %2 = reduced_index {axes = [0, 2]} : u32[2,2,2]\n"
    "  %3 = eq %1, %2 : bool[2,2,2]\n"
    "  %4 = cast %3 : f32[2,2,2]\n"
    "  return %4\n"
    "}\n";

static const char layout_text[] =
    "graph @g(%x: f32[3,3]{strides = [4, 1]}, %y: f32[3,3]{size = 64}) -> (%idx: "
    "u32[1,3]{strides = [1, 1]}, f32[3,3]) {\n"
    "  %0 = argmax %x {axes = [0], direction = decreasing} : u32[1,3]\n"
    "  %1 = constant {value = 0} : u32[1,3]\n"
    "  return %0, %y\n"
    "}\n";

static const char odd_text[] =
    "// leading comment\r\n"
    "\n"
    "\tgraph   @w(  %a:i64[1,2,3]{align=64,size=4096,strides=[6,3,1]} ,%b : u8 [ 7 ] )"
    "->(  %r.x : u32[1,2,1] , %out1: u8[7] {align = 1} ){ // c\n"
    " %v.1=argmin %a{direction=decreasing,axes=[2,0]}:u32[1,2,1]\n"
    "  %9 = constant {value=-3}: i8[2]   // unused\n"
    " return %v.1 ,%b}// trailing";

static const char odd_printed[] =
    "graph @w(%a: i64[1,2,3]{size = 4096, align = 64}, %b: u8[7]) -> (%r.x: u32[1,2,1], "
    "u8[7]{align = 1}) {\n"
    "  %0 = argmin %a {axes = [2, 0], direction = decreasing} : u32[1,2,1]\n"
    "  %1 = constant {value = -3} : i8[2]\n"
    "  return %0, %b\n"
    "}\n";

/* The lowered hardmax fused, its index also an output, and a copy kernel. */
static const char kernel_text[] =
    "graph @fused(%x: f32[4,6]{strides = [8, 1]}) -> (%h: f32[4,6]{strides = [1, 4]}, %i: "
    "u32[4,1], f32[4,6]) {\n"
    "  kernel @k0 [4, r6] reads(%x [8, 1]) writes(%0 [1, 0], %0 -> %i [1, 0], %4 -> %h [1, 4]) "
    "{\n"
    "    %0 = argmax %x {axes = [1], direction = increasing} : u32[4,1]\n"
    "    %1 = broadcast %0 : u32[4,6]\n"
    "    %2 = reduced_index {axes = [1]} : u32[4,6]\n"
    "    %3 = eq %1, %2 : bool[4,6]\n"
    "    %4 = cast %3 : f32[4,6]\n"
    "  }\n"
    "  %5 = cast %0 : f32[4,1]\n"
    "  kernel @k1 [4, 6] reads(%5 [1, 0]) writes(%6 -> %out2 [6, 1]) {\n"
    "    %6 = broadcast %5 : f32[4,6]\n"
    "  }\n"
    "  return %4, %0, %6\n"
    "}\n";

/* ---- printer ---- */
START_TEST(test_print_built_hardmax) {
  dmlc_ir_graph *g = dmlc_ir_graph_create("hardmax_example");
  ck_assert_ptr_nonnull(g);
  const uint32_t dims[] = {2, 2, 2};
  const dmlc_type t = make_type(DMLC_DTYPE_F32, 3, dims);
  uint32_t x, h;
  ck_assert_int_eq(dmlc_ir_add_input(g, "x", &t, NULL, &x, NULL), DMLC_OK);
  dmlc_node node = dmlc_node_make(DMLC_OP_HARDMAX);
  node.num_operands = 1;
  node.operands[0] = x;
  node.num_axes = 2;
  node.axes[0] = 0;
  node.axes[1] = 2;
  ck_assert_int_eq(dmlc_ir_add_node(g, &node, &t, &h, NULL), DMLC_OK);
  ck_assert_int_eq(dmlc_ir_add_output(g, NULL, h, NULL, NULL), DMLC_OK);
  char *text = print_ok(g);
  ck_assert_str_eq(text, hardmax_text);
  free(text);
  ck_assert_int_eq(dmlc_ir_verify(g, NULL), DMLC_OK);
  check_graph_roundtrip(g);
  dmlc_ir_graph_destroy(g);
}
END_TEST

START_TEST(test_print_built_layouts) {
  dmlc_ir_graph *g = dmlc_ir_graph_create("g");
  const uint32_t dims33[] = {3, 3}, dims13[] = {1, 3};
  const dmlc_type f33 = make_type(DMLC_DTYPE_F32, 2, dims33);
  const dmlc_type u13 = make_type(DMLC_DTYPE_U32, 2, dims13);
  dmlc_layout lx = dmlc_layout_packed(&f33);
  lx.strides[0] = 4;
  lx.size_bytes = dmlc_min_size_bytes(&f33, lx.strides);
  dmlc_layout ly = dmlc_layout_packed(&f33);
  ly.size_bytes = 64;
  uint32_t x, y, idx, c;
  ck_assert_int_eq(dmlc_ir_add_input(g, "x", &f33, &lx, &x, NULL), DMLC_OK);
  ck_assert_int_eq(dmlc_ir_add_input(g, "y", &f33, &ly, &y, NULL), DMLC_OK);
  dmlc_node argmax = dmlc_node_make(DMLC_OP_ARGMAX);
  argmax.num_operands = 1;
  argmax.operands[0] = x;
  argmax.num_axes = 1;
  argmax.direction = DMLC_DIRECTION_DECREASING;
  ck_assert_int_eq(dmlc_ir_add_node(g, &argmax, &u13, &idx, NULL), DMLC_OK);
  const dmlc_node constant = dmlc_node_make(DMLC_OP_CONSTANT);
  ck_assert_int_eq(dmlc_ir_add_node(g, &constant, &u13, &c, NULL), DMLC_OK);
  dmlc_layout lidx = dmlc_layout_packed(&u13);
  lidx.strides[0] = 1;
  lidx.size_bytes = dmlc_min_size_bytes(&u13, lidx.strides);
  ck_assert_int_eq(dmlc_ir_add_output(g, "idx", idx, &lidx, NULL), DMLC_OK);
  ck_assert_int_eq(dmlc_ir_add_output(g, NULL, y, NULL, NULL), DMLC_OK);
  char *text = print_ok(g);
  ck_assert_str_eq(text, layout_text);
  free(text);
  ck_assert_int_eq(dmlc_ir_verify(g, NULL), DMLC_OK);
  check_graph_roundtrip(g);
  dmlc_ir_graph_destroy(g);
}
END_TEST

START_TEST(test_print_broken_graph) {
  /* The printer must cope with what the verifier rejects. */
  dmlc_ir_graph *g = dmlc_ir_graph_create("broken");
  const uint32_t dims[] = {2};
  const dmlc_type t = make_type(DMLC_DTYPE_F32, 1, dims);
  uint32_t x, r;
  ck_assert_int_eq(dmlc_ir_add_input(g, "x", &t, NULL, &x, NULL), DMLC_OK);
  dmlc_node node = dmlc_node_make(DMLC_OP_EQ);
  node.num_operands = 7; /* clamped */
  node.operands[0] = x;
  node.operands[1] = 99;
  ck_assert_int_eq(dmlc_ir_add_node(g, &node, &t, &r, NULL), DMLC_OK);
  g->values[r].type.rank = 12;
  ck_assert_int_eq(dmlc_ir_add_output(g, NULL, 1234, NULL, NULL), DMLC_OK);
  char *text = print_ok(g);
  ck_assert_ptr_nonnull(strstr(text, "%0 = eq %x, %<invalid 99> : f32[2,0,0,0,0,0,0,0]"));
  ck_assert_ptr_nonnull(strstr(text, "return %<invalid 1234>"));
  free(text);
  dmlc_ir_graph_destroy(g);
}
END_TEST

START_TEST(test_type_str) {
  const uint32_t dims[] = {1, 4294967295u, 3};
  const dmlc_type t = make_type(DMLC_DTYPE_BOOL, 3, dims);
  char buf[DMLC_TYPE_STR_MAX];
  ck_assert_str_eq(dmlc_type_str(&t, buf, sizeof buf), "bool[1,4294967295,3]");
  char small[6];
  ck_assert_str_eq(dmlc_type_str(&t, small, sizeof small), "bool[");
}
END_TEST

/* ---- parser: exact printing of parsed text ---- */
START_TEST(test_parse_print_exact) {
  check_prints_as(hardmax_text, hardmax_text);
  check_prints_as(lowered_text, lowered_text);
  check_prints_as(layout_text, layout_text);
  check_prints_as(odd_text, odd_printed);
  /* Defaults spelled out are not printed; attributes in any order; result
   * names renumbered. */
  check_prints_as("graph @d(%x: f32[2,3]{strides = [3, 1], size = 24, align = 0}) -> "
                  "(%out0: u64[2,1]{align = 8, strides = [1, 5]}) {\n"
                  "  %first = argmax %x {direction = increasing, axes = [1]} : u64[2,1]\n"
                  "  %second.x = argmin %x {axes = [1]} : u64[2,1]\n"
                  "  return %second.x\n"
                  "}",
                  "graph @d(%x: f32[2,3]) -> (u64[2,1]{strides = [1, 5], align = 8}) {\n"
                  "  %0 = argmax %x {axes = [1], direction = increasing} : u64[2,1]\n"
                  "  %1 = argmin %x {axes = [1], direction = increasing} : u64[2,1]\n"
                  "  return %1\n"
                  "}\n");
  /* A graph output may be a graph input; size-1 dims still compare strides. */
  check_prints_as("graph @io(%in: u16[1,4]{strides = [4, 1]}) -> (%o: u16[1,4], u16[1,4]) {\n"
                  "  return %in, %in\n}\n",
                  "graph @io(%in: u16[1,4]) -> (%o: u16[1,4], u16[1,4]) {\n"
                  "  return %in, %in\n}\n");
  check_prints_as("graph @io(%in: u16[1,4]{strides = [7, 1]}) -> (u16[1,4]) { return %in }",
                  "graph @io(%in: u16[1,4]{strides = [7, 1]}) -> (u16[1,4]) {\n"
                  "  return %in\n}\n");
  /* No inputs, no outputs: parses (the verifier rejects the latter). */
  check_prints_as("graph @empty() -> () { return }", "graph @empty() -> () {\n  return\n}\n");
  /* Extremes of every number. */
  check_prints_as("graph @n() -> (i64[4294967295]) {\n"
                  "  %0 = constant {value = -9223372036854775808} : i64[4294967295]\n"
                  "  return %0\n}\n",
                  "graph @n() -> (i64[4294967295]) {\n"
                  "  %0 = constant {value = -9223372036854775808} : i64[4294967295]\n"
                  "  return %0\n}\n");
  check_prints_as("graph @n(%x: u8[2]{strides = [18446744073709551615], size = "
                  "18446744073709551614, align = 4294967295}) -> (u8[2]) { return %x }",
                  "graph @n(%x: u8[2]{strides = [18446744073709551615], size = "
                  "18446744073709551614, align = 4294967295}) -> (u8[2]) {\n"
                  "  return %x\n}\n");
}
END_TEST

/* ---- round trips ---- */
START_TEST(test_roundtrip_texts) {
  static const char *const texts[] = {
      hardmax_text,
      lowered_text,
      layout_text,
      odd_text,
      "graph @a.b_c(%x_1: f16[8,1,2]{strides = [0, 0, 1]}, %Y: i8[8,1,2]{align = 2}) -> "
      "(%res: f16[8,1,2]{strides = [2, 99, 1], size = 1000}) {\n"
      "  %0 = hardmax %x_1 {axes = [2, 0]} : f16[8,1,2]\n"
      "  %1 = reshape %0 : f16[16]\n"
      "  %2 = reshape %1 : f16[8,1,2]\n"
      "  return %2\n}\n",
      "graph @r8(%x: u64[1,2,1,2,1,2,1,2]) -> (i64[1,1,1,1,1,1,1,1]) {\n"
      "  %0 = argmin %x {axes = [7, 6, 5, 4, 3, 2, 1, 0], direction = decreasing} : "
      "i64[1,1,1,1,1,1,1,1]\n"
      "  return %0\n}\n",
      "graph @c(%x: bool[3]) -> (bool[3], f64[3]) {\n"
      "  %0 = constant {value = 1} : bool[3]\n"
      "  %1 = eq %x, %0 : bool[3]\n"
      "  %2 = cast %1 : f64[3]\n"
      "  return %1, %2\n}\n",
      /* syntactically fine, semantically wrong: still round-trips */
      "graph @bad(%x: f32[]) -> (%x: f32[0], %x: f32[]) {\n"
      "  %0 = argmax %x {axes = [], direction = decreasing} : f32[0]\n"
      "  %1 = hardmax %0 {axes = [7, 7]} : f32[]\n"
      "  return %0, %x\n}\n",
  };
  for (size_t i = 0; i < sizeof texts / sizeof texts[0]; i++)
    free(check_roundtrip(texts[i]));
}
END_TEST

START_TEST(test_roundtrip_all_dtypes_and_ops) {
  char text[1024];
  for (int a = 0; a < DMLC_DTYPE_COUNT; a++) {
    const char *da = dmlc_dtype_name((dmlc_dtype)a);
    snprintf(text, sizeof text,
             "graph @t_%s(%%x: %s[2,3]{align = 16}) -> (%%y: %s[2,3], u32[2,1], %s[6], %s[4,3]) {\n"
             "  %%0 = constant {value = -1} : %s[2,3]\n"
             "  %%1 = argmax %%x {axes = [1]} : u32[2,1]\n"
             "  %%2 = reshape %%x : %s[6]\n"
             "  %%3 = broadcast %%x : %s[4,3]\n"
             "  %%4 = eq %%x, %%0 : bool[2,3]\n"
             "  %%5 = reduced_index {axes = [0, 1]} : %s[2,3]\n"
             "  return %%0, %%1, %%2, %%3\n}\n",
             da, da, da, da, da, da, da, da, da);
    free(check_roundtrip(text));
    for (int b = 0; b < DMLC_DTYPE_COUNT; b++) {
      snprintf(text, sizeof text,
               "graph @cast(%%x: %s[5]) -> (%s[5]) {\n  %%0 = cast %%x : %s[5]\n  return %%0\n}\n",
               da, dmlc_dtype_name((dmlc_dtype)b), dmlc_dtype_name((dmlc_dtype)b));
      char *printed = check_roundtrip(text);
      ck_assert_str_eq(printed, text);
      free(printed);
    }
  }
}
END_TEST

/* Every file matching pattern round-trips; example files also verify. Files
 * that are expected not to parse (lit tests with "RUN: not") are skipped.
 * Returns the number of files checked. */
static size_t roundtrip_files(const char *pattern, bool verify) {
  glob_t files;
  const int rc = glob(pattern, 0, NULL, &files);
  if (rc == GLOB_NOMATCH)
    return 0;
  ck_assert_int_eq(rc, 0);
  size_t checked = 0;
  for (size_t i = 0; i < files.gl_pathc; i++) {
    const char *path = files.gl_pathv[i];
    size_t len;
    char *text = dmlc_test_read_file(path, &len);
    ck_assert_msg(text != NULL, "cannot read %s", path);
    if (strstr(text, "RUN: not")) {
      free(text);
      continue;
    }
    dmlc_ir_graph *g = NULL;
    dmlc_diag diag;
    dmlc_diag_clear(&diag);
    ck_assert_msg(dmlc_ir_parse(text, len, path, &g, &diag) == DMLC_OK, "%s", diag.message);
    if (verify)
      ck_assert_msg(dmlc_ir_verify(g, &diag) == DMLC_OK, "%s: %s", path, diag.message);
    check_graph_roundtrip(g);
    dmlc_ir_graph_destroy(g);
    free(text);
    checked++;
  }
  globfree(&files);
  return checked;
}

START_TEST(test_roundtrip_example_files) {
  const size_t n = roundtrip_files(DMLC_SOURCE_DIR "/examples/*.dmlir", true);
  ck_assert_msg(n >= 3, "only %zu example .dmlir files found in %s/examples", n, DMLC_SOURCE_DIR);
}
END_TEST

START_TEST(test_roundtrip_ir_test_files) {
  roundtrip_files(DMLC_SOURCE_DIR "/tests/ir/*.dmlir", false);
}
END_TEST

/* ---- kernels ---- */
START_TEST(test_kernel_roundtrip) {
  check_prints_as(kernel_text, kernel_text);
  check_verify_ok(kernel_text);
  free(check_roundtrip(kernel_text));
  /* Any kernel name, spacing and comments; printed renumbered and canonical. */
  check_prints_as("graph @g(%x: f32[3]) -> (u32[1]) {\n"
                  "  kernel @first[r3]reads(%x[1])writes(%r->%out0[0]){ // one\n"
                  "    %r = argmax %x {axes = [0]} : u32[1]\n  }\n"
                  "  return %r\n}\n",
                  "graph @g(%x: f32[3]) -> (u32[1]) {\n"
                  "  kernel @k0 [r3] reads(%x [1]) writes(%0 -> %out0 [0]) {\n"
                  "    %0 = argmax %x {axes = [0], direction = increasing} : u32[1]\n  }\n"
                  "  return %0\n}\n");
  check_prints_as("graph @e() -> (u8[1]) {\n"
                  "  kernel @a [1, r2, 3, 4, 5, 6, 7, r8] reads() writes() {\n"
                  "    %0 = constant {value = 1} : u8[1]\n  }\n"
                  "  return %0\n}\n",
                  "graph @e() -> (u8[1]) {\n"
                  "  kernel @k0 [1, r2, 3, 4, 5, 6, 7, r8] reads() writes() {\n"
                  "    %0 = constant {value = 1} : u8[1]\n  }\n"
                  "  return %0\n}\n");
}
END_TEST

START_TEST(test_kernel_built) {
  dmlc_ir_graph *g = parse_ok(lowered_text);
  dmlc_kernel k;
  memset(&k, 0, sizeof k);
  k.first_node = 0;
  k.num_nodes = 5;
  k.rank = 3;
  k.dims[0] = k.dims[1] = k.dims[2] = 2;
  k.reduced_mask = 5;
  k.num_reads = k.num_writes = 1;
  dmlc_kernel_buffer read = {0, -1, {4, 2, 1}}, write = {g->nodes[4].result, 0, {4, 2, 1}};
  dmlc_diag diag;
  ck_assert_int_eq(dmlc_ir_add_kernel(g, &k, &read, &write, &diag), DMLC_OK);
  ck_assert_int_eq(dmlc_ir_verify(g, &diag), DMLC_OK);
  char *text = print_ok(g);
  ck_assert_ptr_nonnull(strstr(text, "  kernel @k0 [r2, 2, r2] reads(%x [4, 2, 1]) writes(%4 -> "
                                     "%out0 [4, 2, 1]) {\n    %0 = argmax"));
  dmlc_ir_graph *c = dmlc_ir_graph_clone(g);
  ck_assert_ptr_nonnull(c);
  char *cloned = print_ok(c);
  ck_assert_str_eq(text, cloned);
  check_graph_roundtrip(g);
  /* A broken range prints every node once and still parses. */
  g->kernels[0].first_node = 3;
  g->kernels[0].num_nodes = 9;
  char *broken = print_ok(g);
  ck_assert_ptr_nonnull(strstr(broken, "  %2 = reduced_index"));
  ck_assert_ptr_nonnull(strstr(broken, "    %3 = eq"));
  check_graph_verify_error(g, "kernel @k0: its nodes %3 to %11 are not all in the graph");
  free(broken);
  free(text);
  free(cloned);
  dmlc_ir_graph_destroy(c);
  dmlc_ir_graph_destroy(g);
}
END_TEST

#define KSIG "graph @g(%x: f32[3]) -> (u32[1]) {\n"
#define KBODY "{\n    %0 = argmax %x {axes = [0]} : u32[1]\n  }\n  return %0\n}\n"

START_TEST(test_error_kernel) {
  check_parse_error(KSIG "  kernel ^k0 [r3] reads() writes() " KBODY,
                    "expected a kernel name ('@name')");
  check_parse_error(KSIG "  kernel @k [r3] reads(%x [1]) writes() {\n"
                         "    %0 = argmax %x {axes = [0]} : u32[1]\n  }\n"
                         "  kernel ^@k [1] reads() writes() {\n"
                         "    %1 = constant {value = 0} : u32[1]\n  }\n  return %0\n}\n",
                    "redefinition of kernel '@k'");
  check_parse_error(KSIG "  kernel @k [r3, ^x] reads() writes() " KBODY,
                    "expected a space dimension ('N' or 'rN')");
  check_parse_error(KSIG "  kernel @k [^rx] reads() writes() " KBODY,
                    "expected a space dimension ('N' or 'rN')");
  check_parse_error(KSIG "  kernel @k [^r] reads() writes() " KBODY,
                    "expected a space dimension ('N' or 'rN')");
  check_parse_error(KSIG "  kernel @k [r3 ^reads() writes() " KBODY, "expected ']'");
  check_parse_error(KSIG "  kernel @k [1, 1, 1, 1, 1, 1, 1, 1, ^r1] reads() writes() " KBODY,
                    "rank 9 exceeds the maximum of 8");
  check_parse_error(KSIG "  kernel @k [^r4294967296] reads() writes() " KBODY,
                    "number out of range");
  check_parse_error(KSIG "  kernel @k [r3] ^writes() " KBODY, "expected 'reads'");
  check_parse_error(KSIG "  kernel @k [r3] reads() ^{", "expected 'writes'");
  check_parse_error(KSIG "  kernel @k [r3] reads(%x ^) writes() " KBODY, "expected '['");
  check_parse_error(KSIG "  kernel @k [r3] reads(^[1]) writes() " KBODY, "expected a value name");
  check_parse_error(KSIG "  kernel @k [r3] reads(^%y [1]) writes() " KBODY,
                    "use of undefined value '%y'");
  check_parse_error(KSIG "  kernel @k [r3, 2] reads(%x ^[1]) writes() " KBODY,
                    "expected 2 strides for the kernel's rank 2, got 1");
  check_parse_error(KSIG "  kernel @k [r3] reads(%x [1, ^1]) writes() " KBODY,
                    "more strides than the rank 1");
  check_parse_error(KSIG "  kernel @k [r3] reads(%x [1]) writes(%0 -> ^%zz [0]) " KBODY,
                    "unknown output '%zz'");
  check_parse_error(KSIG "  kernel @k [r3] reads(%x [1]) writes(%0 -> ^[0]) " KBODY,
                    "expected an output name ('%name')");
  check_parse_error(KSIG "  kernel @k [r3] reads(%x [1]) writes(^%9 [0]) " KBODY,
                    "use of undefined value '%9'");
  check_parse_error(KSIG "  kernel @k [r3] reads(%x [1]) writes() ^%0", "expected '{'");
  check_parse_error(KSIG "  kernel @k [r3] reads(%x [1]) writes() {\n  ^kernel",
                    "expected a node or '}'");
  check_parse_error(KSIG "  kernel @k [r3] reads(%x [1]) writes() {\n  ^return %x",
                    "expected a node or '}'");
}
END_TEST

static const char two_kernels[] = "graph @g(%x: f32[4,6], %y: f32[4,6]) -> (u32[4,1], u8[4,1]) {\n"
                                  "  kernel @k0 [4, r6] reads(%x [6, 1]) writes(%0 [1, 0], %0 -> "
                                  "%out0 [1, 0]) {\n"
                                  "    %0 = argmax %x {axes = [1]} : u32[4,1]\n"
                                  "  }\n"
                                  "  kernel @k1 [4] reads(%0 [1]) writes(%1 -> %out1 [1]) {\n"
                                  "    %1 = cast %0 : u8[4,1]\n"
                                  "  }\n"
                                  "  return %0, %1\n"
                                  "}\n";

/* Replaces the first occurrence of from in two_kernels with to. */
static char *edited(const char *from, const char *to) {
  const char *at = strstr(two_kernels, from);
  ck_assert_ptr_nonnull(at);
  char *out = malloc(sizeof two_kernels + strlen(to));
  ck_assert_ptr_nonnull(out);
  const size_t head = (size_t)(at - two_kernels);
  memcpy(out, two_kernels, head);
  strcpy(out + head, to);
  strcat(out, at + strlen(from));
  return out;
}

static void check_edit_verify_error(const char *from, const char *to, const char *message) {
  char *text = edited(from, to);
  check_verify_error(text, message);
  free(text);
}

START_TEST(test_verify_kernels) {
  check_verify_ok(two_kernels);
  /* Nodes outside kernels are allowed. */
  check_verify_ok("graph @g(%x: f32[4]) -> (u32[1], u8[1]) {\n"
                  "  kernel @k0 [r4] reads(%x [1]) writes(%0 [0], %0 -> %out0 [0]) {\n"
                  "    %0 = argmax %x {axes = [0]} : u32[1]\n  }\n"
                  "  %1 = cast %0 : u8[1]\n  return %0, %1\n}\n");
  check_verify_error("graph @g(%x: f32[4]) -> (f32[4]) {\n"
                     "  kernel @k0 [4] reads() writes() {\n  }\n  return %x\n}\n",
                     "kernel @k0: the kernel has no nodes");
  check_edit_verify_error("[4, r6] reads(%x [6, 1]) writes(%0 [1, 0], %0 -> %out0 [1, 0])",
                          "[4, r0] reads(%x [6, 1]) writes(%0 [1, 0], %0 -> %out0 [1, 0])",
                          "kernel @k0: space dimension 1 is 0");
  check_edit_verify_error("reads(%x [6, 1])", "reads(%x [6, 1], %y [6, 1])",
                          "kernel @k0: read %y is not used inside the kernel");
  check_edit_verify_error("reads(%x [6, 1])", "reads(%x [6, 1], %x [6, 1])",
                          "kernel @k0: %x is read twice");
  check_edit_verify_error("reads(%x [6, 1])", "reads()",
                          "kernel @k0: %0 uses %x, which is not in reads");
  check_edit_verify_error("writes(%0 [1, 0], ", "writes(%x [1, 0], ",
                          "kernel @k0: written value %x is not defined inside the kernel");
  check_edit_verify_error("writes(%0 [1, 0], ", "writes(%0 [1, 0], %0 [1, 0], ",
                          "kernel @k0: %0 is written twice to the same buffer");
  check_edit_verify_error("%0 -> %out0 [1, 0]", "%0 -> %out1 [1, 0]",
                          "kernel @k0: write of %0 names output 'out1', which returns another "
                          "value");
  check_edit_verify_error("writes(%0 [1, 0], ", "writes(",
                          "kernel @k0: %0 is used by %1 outside the kernel but not written");
  check_edit_verify_error(", %0 -> %out0 [1, 0]", "",
                          "kernel @k0: %0 is output 'out0' but not written to it");
  /* What the text cannot say: overlapping ranges, reads from later values,
   * buffers outside the pool, masks past the rank. */
  dmlc_ir_graph *g = parse_ok(two_kernels);
  g->kernels[1].first_node = 0;
  check_graph_verify_error(g, "kernel @k1: its nodes start at %0, inside the previous kernel");
  g->kernels[1].first_node = 1;
  g->kernels[0].rank = 0;
  check_graph_verify_error(g, "kernel @k0: the space has rank 0; ranks are 1 to 8");
  g->kernels[0].rank = 9;
  check_graph_verify_error(g, "kernel @k0: the space has rank 9; ranks are 1 to 8");
  g->kernels[0].rank = 2;
  g->kernels[0].reduced_mask = 4;
  check_graph_verify_error(g, "kernel @k0: the reduced mask 0x4 has dims beyond the rank 2");
  g->kernels[0].reduced_mask = 2;
  g->kernels[1].num_writes = 9;
  check_graph_verify_error(g, "kernel @k1: its buffers are not all in the graph's kernel buffers");
  g->kernels[1].num_writes = 1;
  g->kernel_buffers[g->kernels[1].first_buffer].value = g->nodes[1].result;
  check_graph_verify_error(g, "kernel @k1: read %1 is not defined before the kernel");
  g->kernel_buffers[g->kernels[1].first_buffer].value = 99;
  check_graph_verify_error(g, "kernel @k1: read 0 names value 99, which does not exist");
  g->kernel_buffers[g->kernels[1].first_buffer].value = g->nodes[0].result;
  g->kernel_buffers[g->kernels[1].first_buffer].output = 0;
  check_graph_verify_error(g, "kernel @k1: read %0 names an output");
  g->kernel_buffers[g->kernels[1].first_buffer].output = -1;
  g->kernel_buffers[g->kernels[1].first_buffer + 1].output = 7;
  check_graph_verify_error(g, "kernel @k1: write of %1 names output 7, which does not exist");
  dmlc_ir_graph_destroy(g);
}
END_TEST

/* ---- parser errors, one test per message ---- */
#define SIG "graph @g(%x: f32[3]) -> (u32[1]) {\n"

START_TEST(test_error_unknown_op) {
  dmlc_ir_graph *g = NULL;
  dmlc_diag diag;
  const char text[] = SIG "  // pick one\n  %0 = argmaxx %x {axes = [0]} : u32[1]\n"
                          "  return %0\n}\n";
  ck_assert_int_eq(parse_len(text, strlen(text), &g, &diag), DMLC_ERROR_INVALID_ARGUMENT);
  ck_assert_str_eq(diag.message, "t.dmlir:3:8: unknown op 'argmaxx'");
  check_parse_error(SIG "  %result = ^argmaxx %x {axes = [0]} : u32[1]\n  return %0\n}\n",
                    "unknown op 'argmaxx'");
  check_parse_error(SIG "  %0 = ^graph %x : u32[1]\n", "unknown op 'graph'");
}
END_TEST

START_TEST(test_error_expected_bracket) {
  check_parse_error("graph @g(%x: f32[2,2 ^) -> () {}", "expected ']'");
  check_parse_error(SIG "  %0 = argmax %x {axes = [0 ^: u32[1]\n", "expected ']'");
  check_parse_error("graph @g(%x: f32^(2)) -> () {}", "expected '['");
  check_parse_error("graph @g(%x: f32[2,^]) -> () {}", "expected a number");
  check_parse_error("graph @g(%x: f32[2] ^%y: f32[2]) -> () {}", "expected ')'");
  check_parse_error("graph @g(%x ^f32[2]) -> () {}", "expected ':'");
  check_parse_error("graph @g(%x: f32[2]) ^(f32[2]) {}", "expected '->'");
  check_parse_error("graph @g(%x: f32[2]) -> (f32[2]) ^return %x }", "expected '{'");
  check_parse_error("graph @g(%x: f32[2]) -> (f32[2]) { return %x ^)", "expected '}'");
  check_parse_error(SIG "  %0 ^argmax %x\n", "expected '='");
  check_parse_error(SIG "  %0 = ^[\n", "expected an op name");
  check_parse_error(SIG "  %0 = argmax %x {axes = [0]} ^u32[1]\n", "expected ':'");
  check_parse_error(SIG "  %0 = argmax %x {axes = [0]} : ^[1]\n", "expected a data type");
  check_parse_error(SIG "  %0 = argmax %x {^= [0]} : u32[1]\n", "expected an attribute name");
  check_parse_error(SIG "  %0 = eq %x, ^: bool[3]\n", "expected a value name");
  check_parse_error(SIG "  return %x, ^}\n", "expected a value name");
  check_parse_error(SIG "  ^cast %x : f32[3]\n", "expected a node, a kernel or 'return'");
  check_parse_error("^grph @g() -> () {}", "expected 'graph'");
  check_parse_error("graph ^g() -> () {}", "expected a graph name ('@name')");
  check_parse_error("graph @g(^f32[2]) -> () {}", "expected an input ('%name: type')");
  check_parse_error("graph @g(%x: f32[2]{^1}) -> () {}", "expected a layout attribute");
  check_parse_error(SIG "  %0 = argmax %x {axes ^[0]} : u32[1]\n", "expected '='");
  check_parse_error(SIG "  %0 = argmax %x {axes = [0], direction = ^1} : u32[1]\n",
                    "expected 'increasing' or 'decreasing'");
  check_parse_error(SIG "  %0 = constant {value = ^x} : u32[1]\n", "expected a number");
  check_parse_error("graph @g(^% x: f32[2]) -> () {}", "expected a name after '%'");
  check_parse_error("graph ^@() -> () {}", "expected a name after '@'");
}
END_TEST

START_TEST(test_error_undefined_value) {
  check_parse_error("graph @g(%x: f32[2]) -> (bool[2]) {\n  %0 = eq %x, ^%y : bool[2]\n",
                    "use of undefined value '%y'");
  check_parse_error(SIG "  %0 = cast ^%0 : f32[3]\n", "use of undefined value '%0'");
  check_parse_error(SIG "  return ^%1\n}", "use of undefined value '%1'");
}
END_TEST

START_TEST(test_error_redefinition) {
  check_parse_error(SIG "  %0 = cast %x : f32[3]\n  ^%0 = cast %x : f32[3]\n",
                    "redefinition of value '%0'");
  check_parse_error("graph @g(%x: f32[2], ^%x: f32[2]) -> () {}", "redefinition of value '%x'");
  check_parse_error(SIG "  ^%x = cast %x : f32[3]\n", "redefinition of value '%x'");
}
END_TEST

START_TEST(test_error_unknown_dtype) {
  check_parse_error("graph @g(%x: ^f33[2]) -> () {}", "unknown data type 'f33'");
  check_parse_error(SIG "  %0 = argmax %x {axes = [0]} : ^U32[1]\n", "unknown data type 'U32'");
}
END_TEST

START_TEST(test_error_rank) {
  check_parse_error("graph @g(%x: f32[1,1,1,1,1,1,1,1,^1]) -> () {}",
                    "rank 9 exceeds the maximum of 8");
}
END_TEST

START_TEST(test_error_number_out_of_range) {
  check_parse_error("graph @g(%x: f32[^4294967296]) -> () {}", "number out of range");
  check_parse_error("graph @g(%x: f32[^-1]) -> () {}", "number out of range");
  check_parse_error("graph @g(%x: f32[^99999999999999999999999]) -> () {}", "number out of range");
  check_parse_error("graph @g(%x: u8[2]{strides = [^18446744073709551616]}) -> () {}",
                    "number out of range");
  check_parse_error("graph @g(%x: u8[2]{size = ^18446744073709551616}) -> () {}",
                    "number out of range");
  check_parse_error("graph @g(%x: u8[2]{align = ^4294967296}) -> () {}", "number out of range");
  check_parse_error(SIG "  %0 = constant {value = ^9223372036854775808} : i64[1]\n",
                    "number out of range");
  check_parse_error(SIG "  %0 = constant {value = ^-9223372036854775809} : i64[1]\n",
                    "number out of range");
  check_parse_error(SIG "  %0 = argmax %x {axes = [^-9223372036854775809]} : u32[1]\n",
                    "number out of range");
}
END_TEST

/* Negative axes count from the end of the operand's rank, as NumPy's do;
 * the graph holds (and prints) them non-negative. */
START_TEST(test_negative_axes) {
  dmlc_ir_graph *g = parse_ok("graph @g(%x: f32[2,3,4]) -> (u32[2,1,1], f32[2,3,4]) {\n"
                              "  %0 = argmax %x {axes = [-1, -2]} : u32[2,1,1]\n"
                              "  %1 = hardmax %x {axes = [-3]} : f32[2,3,4]\n"
                              "  return %0, %1\n"
                              "}\n");
  ck_assert_uint_eq(g->nodes[0].num_axes, 2);
  ck_assert_uint_eq(g->nodes[0].axes[0], 2);
  ck_assert_uint_eq(g->nodes[0].axes[1], 1);
  ck_assert_uint_eq(g->nodes[1].axes[0], 0);
  char *text = print_ok(g);
  ck_assert_ptr_nonnull(strstr(text, "axes = [2, 1]"));
  ck_assert_ptr_nonnull(strstr(text, "axes = [0]"));
  free(text);
  dmlc_ir_graph_destroy(g);
  check_parse_error(SIG "  %0 = argmax %x {axes = [^-2]} : u32[1]\n",
                    "axis -2 is out of range for rank 1 (negative axes count from the end: -1 to "
                    "-1)");
  check_parse_error("graph @g(%x: f32[2]) -> (u32[2]) {\n"
                    "  %0 = reduced_index {axes = [^-1]} : u32[2]\n",
                    "axis -1: a negative axis counts from the end of the operand's rank, and "
                    "'reduced_index' has no operand; write it as 0 to 7");
}
END_TEST

/* The verifier names a parsed node by the user's name and place. */
START_TEST(test_verify_source_names) {
  dmlc_ir_graph *g = parse_ok("graph @g(%x: f32[3,4]) -> (u32[3,1]) {\n"
                              "  // a comment line\n"
                              "    %bad = argmin %x {axes = [5]} : u32[3,1]\n"
                              "  return %bad\n"
                              "}\n");
  check_graph_verify_error(g, "t.dmlir:3:5: %bad = argmin: axes[0] = 5 is out of range for rank 2");
  dmlc_ir_graph_destroy(g);
}
END_TEST

START_TEST(test_error_axes) {
  check_parse_error(SIG "  %0 = argmax %x {axes = [^8]} : u32[1]\n",
                    "axis 8 exceeds the maximum of 7");
  check_parse_error(SIG "  %0 = argmax %x {axes = [0, 1, 2, 3, 4, 5, 6, 7, ^0]} : u32[1]\n",
                    "more than 8 axes");
}
END_TEST

START_TEST(test_error_operand_count) {
  check_parse_error("graph @g(%x: f32[2]) -> (bool[2]) {\n  %0 = ^eq %x : bool[2]\n",
                    "expected 2 operands for 'eq', got 1");
  check_parse_error("graph @g(%x: f32[2]) -> (bool[2]) {\n  %0 = ^eq %x, %x, %x : bool[2]\n",
                    "expected 2 operands for 'eq', got 3");
  check_parse_error(SIG "  %0 = ^argmax {axes = [0]} : u32[1]\n",
                    "expected 1 operand for 'argmax', got 0");
  check_parse_error(SIG "  %0 = ^constant %x {value = 0} : u32[1]\n",
                    "expected 0 operands for 'constant', got 1");
}
END_TEST

START_TEST(test_error_end_of_input) {
  check_parse_error("^", "unexpected end of input");
  check_parse_error("// only a comment\n^", "unexpected end of input");
  check_parse_error("graph @g(%x: f32[2^", "unexpected end of input");
  check_parse_error("graph @g(%x: f32[2]) -> (f32[2]) {\n  return %x\n^",
                    "unexpected end of input");
  check_parse_error(SIG "  %0 = argmax %x {axes = [0], direction = ^", "unexpected end of input");
}
END_TEST

START_TEST(test_error_unknown_attribute) {
  check_parse_error(SIG "  %0 = argmax %x {^foo = 1} : u32[1]\n",
                    "unknown attribute 'foo' for 'argmax'");
  check_parse_error(SIG "  %0 = argmax %x {axes = [0], ^value = 3} : u32[1]\n",
                    "unknown attribute 'value' for 'argmax'");
  check_parse_error(SIG "  %0 = reshape %x {^axes = [0]} : f32[3]\n",
                    "unknown attribute 'axes' for 'reshape'");
  check_parse_error(SIG "  %0 = hardmax %x {axes = [0], ^direction = increasing} : f32[3]\n",
                    "unknown attribute 'direction' for 'hardmax'");
}
END_TEST

START_TEST(test_error_attribute_rules) {
  check_parse_error(SIG "  %0 = ^argmax %x : u32[1]\n", "missing attribute 'axes' for 'argmax'");
  check_parse_error(SIG "  %0 = ^argmax %x {direction = decreasing} : u32[1]\n",
                    "missing attribute 'axes' for 'argmax'");
  check_parse_error(SIG "  %0 = ^constant {} : u32[1]\n",
                    "missing attribute 'value' for 'constant'");
  check_parse_error(SIG "  %0 = argmax %x {axes = [0], ^axes = [0]} : u32[1]\n",
                    "duplicate attribute 'axes'");
  check_parse_error(SIG "  %0 = argmax %x {axes = [0], direction = ^up} : u32[1]\n",
                    "unknown direction 'up'");
}
END_TEST

START_TEST(test_error_return_count) {
  check_parse_error(SIG "  ^return %x, %x\n}\n",
                    "return has 2 values but the signature declares 1 output");
  check_parse_error(SIG "  ^return\n}\n",
                    "return has 0 values but the signature declares 1 output");
}
END_TEST

START_TEST(test_error_return_type) {
  check_parse_error("graph @g(%x: f32[3,3]) -> (u32[3,1]) {\n"
                    "  %0 = argmax %x {axes = [0]} : u32[1,3]\n"
                    "  return ^%0\n}\n",
                    "type of returned value %0 is u32[1,3], the signature declares u32[3,1]");
  check_parse_error("graph @g(%x: f32[3]) -> (f32[3], f16[3]) {\n  return %x, ^%x\n}\n",
                    "type of returned value %x is f32[3], the signature declares f16[3]");
}
END_TEST

START_TEST(test_error_names) {
  check_parse_error("graph @g(^%1x: f32[2]) -> () {}", "invalid input name '1x'");
  check_parse_error("graph @g(^%.a: f32[2]) -> () {}", "invalid input name '.a'");
  check_parse_error("graph @g(%x: f32[2]) -> (^%0: f32[2]) {}", "invalid output name '0'");
  check_parse_error("graph ^@9g() -> () {}", "invalid graph name '9g'");
  char text[512], message[128];
  const char long_name[] =
      "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"; /* 64 */
  snprintf(text, sizeof text, "graph @g(^%%%s: f32[2]) -> () {}", long_name);
  snprintf(message, sizeof message, "invalid input name '%s'", long_name);
  check_parse_error(text, message);
  /* 63 characters is the longest valid name. */
  snprintf(text, sizeof text,
           "graph @%.63s(%%%.63s: f32[2]) -> (%%%.63s: f32[2]) { return %%%.63s }", long_name,
           long_name, long_name, long_name);
  free(check_roundtrip(text));
}
END_TEST

START_TEST(test_error_layout) {
  check_parse_error("graph @g(%x: f32[2,2]{^strides = [1]}) -> () {}",
                    "expected 2 strides for rank 2, got 1");
  check_parse_error("graph @g(%x: f32[2,2]{strides = [2, 1, ^1]}) -> () {}",
                    "more strides than the rank 2");
  check_parse_error("graph @g(%x: f32[2,2]{^foo = 1}) -> () {}", "unknown layout attribute 'foo'");
  check_parse_error("graph @g(%x: f32[2,2]{size = 16, ^size = 16}) -> () {}",
                    "duplicate layout attribute 'size'");
}
END_TEST

START_TEST(test_error_characters) {
  check_parse_error("graph @g() ^# -> () {}", "unexpected character '#'");
  check_parse_error("graph @g() ^- () {}", "unexpected character '-'");
  check_parse_error("graph @g() -> () { return }\n^graph", "expected end of input");
  check_parse_error("graph @g() -> () { return } ^/ x", "unexpected character '/'");
  check_parse_error("graph @g() -> () { return }\n^\xc3\xa9", "unexpected character '\\xc3'");
  /* A NUL inside the text is a character like any other. */
  const char text[] = "graph @g()\0 -> () { return }";
  dmlc_ir_graph *g = NULL;
  dmlc_diag diag;
  ck_assert_int_eq(parse_len(text, sizeof text - 1, &g, &diag), DMLC_ERROR_INVALID_ARGUMENT);
  ck_assert_str_eq(diag.message, "t.dmlir:1:11: unexpected character '\\x00'");
  /* length, not the NUL, ends the text. */
  ck_assert_int_eq(parse_len(text, 10, &g, &diag), DMLC_ERROR_INVALID_ARGUMENT);
  ck_assert_str_eq(diag.message, "t.dmlir:1:11: unexpected end of input");
}
END_TEST

START_TEST(test_error_bad_arguments) {
  dmlc_ir_graph *g = NULL;
  dmlc_diag diag;
  dmlc_diag_clear(&diag);
  ck_assert_int_eq(dmlc_ir_parse(NULL, 3, "x", &g, &diag), DMLC_ERROR_INVALID_ARGUMENT);
  ck_assert_int_eq(dmlc_ir_parse("graph", 5, "x", NULL, &diag), DMLC_ERROR_INVALID_ARGUMENT);
  ck_assert_int_eq(dmlc_ir_parse(NULL, 0, NULL, &g, &diag), DMLC_ERROR_INVALID_ARGUMENT);
  ck_assert_str_eq(diag.message, "<input>:1:1: unexpected end of input");
  /* A NULL diag is allowed. */
  ck_assert_int_eq(dmlc_ir_parse("graph", 5, "x", &g, NULL), DMLC_ERROR_INVALID_ARGUMENT);
  ck_assert_ptr_null(g);
}
END_TEST

/* ---- robustness ---- */
static size_t fuzz_parsed; /* how many mutants parsed */

static void fuzz_one(const char *data, size_t len) {
  char *copy = exact_copy(data, len);
  dmlc_ir_graph *g = NULL;
  dmlc_diag diag;
  dmlc_diag_clear(&diag);
  const dmlc_status status = dmlc_ir_parse(copy, len, "fuzz", &g, &diag);
  free(copy);
  if (status != DMLC_OK) {
    ck_assert_int_eq(status, DMLC_ERROR_INVALID_ARGUMENT);
    ck_assert_ptr_null(g);
    ck_assert_msg(strncmp(diag.message, "fuzz:", 5) == 0, "%s", diag.message);
    return;
  }
  fuzz_parsed++;
  const dmlc_status verified = dmlc_ir_verify(g, &diag);
  ck_assert(verified == DMLC_OK || verified == DMLC_ERROR_INVALID_ARGUMENT);
  check_graph_roundtrip(g);
  dmlc_ir_graph_destroy(g);
}

static uint64_t next_random(uint64_t *state) { /* xorshift64 */
  *state ^= *state << 13;
  *state ^= *state >> 7;
  *state ^= *state << 17;
  return *state;
}

START_TEST(test_robustness_mutations) {
  static const char *const seeds[] = {hardmax_text, lowered_text, layout_text, odd_text,
                                      kernel_text};
  static const char replacements[] = {'\0', '%', '@', '[', ']', '{', '}', '(',  ')', ',',   ':',
                                      '=',  '-', '>', '9', '0', 'x', ' ', '\n', '/', '\xff'};
  static const char *const insertions[] = {"99999999999999999999",
                                           "-",
                                           "[",
                                           "%",
                                           "//",
                                           ",",
                                           "{axes = [0]}",
                                           "%0",
                                           "f32[1,1,1,1,1,1,1,1,1]",
                                           "{strides = [0]}"};
  size_t mutants = 0;
  uint64_t state = 0x9e3779b97f4a7c15u;
  for (size_t s = 0; s < sizeof seeds / sizeof seeds[0]; s++) {
    const char *seed = seeds[s];
    const size_t len = strlen(seed);
    char *buf = malloc(len + 64);
    ck_assert_ptr_nonnull(buf);
    for (size_t i = 0; i <= len; i++, mutants++) /* truncations */
      fuzz_one(seed, i);
    for (size_t i = 0; i < len; i++) {
      for (size_t r = 0; r < sizeof replacements; r++, mutants++) { /* byte flips */
        memcpy(buf, seed, len);
        buf[i] = replacements[r];
        fuzz_one(buf, len);
      }
      memcpy(buf, seed, i); /* deletion */
      memcpy(buf + i, seed + i + 1, len - i - 1);
      fuzz_one(buf, len - 1);
      mutants++;
    }
    for (size_t i = 0; i <= len; i += 3) { /* inserted garbage */
      for (size_t k = 0; k < sizeof insertions / sizeof insertions[0]; k++, mutants++) {
        const size_t n = strlen(insertions[k]);
        memcpy(buf, seed, i);
        memcpy(buf + i, insertions[k], n);
        memcpy(buf + i + n, seed + i, len - i);
        fuzz_one(buf, len + n);
      }
    }
    for (int k = 0; k < 500; k++, mutants++) { /* several random edits at once */
      memcpy(buf, seed, len);
      const int edits = 1 + (int)(next_random(&state) % 4);
      for (int e = 0; e < edits; e++)
        buf[next_random(&state) % len] = (char)(next_random(&state) & 0xff);
      fuzz_one(buf, len);
    }
    free(buf);
  }
  ck_assert_uint_gt(mutants, 10000);
  ck_assert_uint_gt(fuzz_parsed, 100); /* some mutants are still graphs */
}
END_TEST

/* ---- verifier: valid graphs ---- */
START_TEST(test_verify_valid) {
  check_verify_ok(hardmax_text);
  check_verify_ok(lowered_text);
  check_verify_ok(layout_text);
  check_verify_ok("graph @io(%x: f16[2,2]{strides = [0, 1], align = 2}) -> (%y: f16[2,2]{strides "
                  "= [1, 2], size = 8, align = 8}, %x: f16[2,2]) {\n  return %x, %x\n}\n");
  check_verify_ok("graph @casts(%x: f16[2], %b: u8[2]) -> (i8[2], f64[2], u64[2], f32[2]) {\n"
                  "  %0 = cast %b : i8[2]\n"
                  "  %1 = cast %x : f64[2]\n"
                  "  %2 = eq %b, %b : bool[2]\n"
                  "  %3 = cast %2 : u64[2]\n"
                  "  %4 = cast %2 : f32[2]\n"
                  "  return %0, %1, %3, %4\n}\n");
  check_verify_ok("graph @consts() -> (i64[1], u64[1], i8[1], u8[1], f16[1]) {\n"
                  "  %0 = constant {value = -9223372036854775808} : i64[1]\n"
                  "  %1 = constant {value = 9223372036854775807} : u64[1]\n"
                  "  %2 = constant {value = -128} : i8[1]\n"
                  "  %3 = constant {value = 255} : u8[1]\n"
                  "  %4 = constant {value = -99999} : f16[1]\n"
                  "  %5 = constant {value = 1} : bool[1]\n"
                  "  return %0, %1, %2, %3, %4\n}\n");
  /* The largest index that still fits: 2^31 - 1 in i32. */
  check_verify_ok("graph @big(%x: u8[65536,32768]) -> (i32[1,1]) {\n"
                  "  %0 = argmax %x {axes = [1, 0]} : i32[1,1]\n  return %0\n}\n");
  check_verify_ok("graph @r(%x: i16[2,3,4]) -> (i16[4,6], i16[2,3,4]) {\n"
                  "  %0 = reshape %x : i16[4,6]\n"
                  "  %1 = argmin %x {axes = [1]} : u64[2,1,4]\n"
                  "  %2 = reduced_index {axes = [2, 0]} : i64[2,3,4]\n"
                  "  %3 = broadcast %1 : u64[2,3,4]\n"
                  "  return %0, %x\n}\n");
}
END_TEST

/* ---- verifier: one test per rule ---- */
START_TEST(test_verify_graph_name) {
  dmlc_ir_graph *g = parse_ok("graph @g(%x: f32[2]) -> (f32[2]) { return %x }");
  strcpy(g->name, "0bad");
  check_graph_verify_error(g, "invalid graph name '0bad'");
  memset(g->name, 'a', sizeof g->name); /* no NUL */
  check_graph_verify_error(g, "invalid graph name");
  dmlc_ir_graph_destroy(g);
}
END_TEST

START_TEST(test_verify_has_outputs) {
  check_verify_error("graph @g(%x: f32[2]) -> () { return }", "the graph has no outputs");
}
END_TEST

START_TEST(test_verify_rank) {
  check_verify_error("graph @g(%x: f32[]) -> (f32[]) { return %x }",
                     "input 'x': type f32[] has rank 0; ranks are 1 to 8");
  dmlc_ir_graph *g = parse_ok("graph @g(%x: f32[2]) -> (f32[2]) { return %x }");
  g->values[0].type.rank = 9;
  check_graph_verify_error(g, "input 'x': type f32[2,0,0,0,0,0,0,0] has rank 9");
  dmlc_ir_graph_destroy(g);
}
END_TEST

START_TEST(test_verify_dims) {
  check_verify_error("graph @g(%x: f32[2,0]) -> (f32[2,0]) { return %x }",
                     "input 'x': type f32[2,0] has a dimension of size 0");
  check_verify_error("graph @g(%x: f32[2]) -> (f32[0]) {\n"
                     "  %0 = cast %x : f32[0]\n  return %0\n}",
                     "%0 = cast: result type f32[0] has a dimension of size 0");
}
END_TEST

START_TEST(test_verify_element_count) {
  check_verify_error("graph @g(%x: u8[65536,65536]) -> (u8[65536,65536]) { return %x }",
                     "type u8[65536,65536] has more than 4294967295 elements");
  check_verify_error(
      "graph @g() -> (u8[4294967295,4294967295,4294967295,4294967295,4294967295]) {\n"
      "  %0 = constant {value = 0} : u8[4294967295,4294967295,4294967295,"
      "4294967295,4294967295]\n  return %0\n}",
      "%0 = constant: result type");
}
END_TEST

START_TEST(test_verify_boundary_bool) {
  check_verify_error("graph @g(%x: bool[2]) -> (f32[2]) {\n"
                     "  %0 = cast %x : f32[2]\n  return %0\n}",
                     "input 'x': bool is not allowed for a graph input");
  check_verify_error("graph @g(%x: f32[2]) -> (%m: bool[2]) {\n"
                     "  %0 = eq %x, %x : bool[2]\n  return %0\n}",
                     "output 'm': bool is not allowed for a graph output");
}
END_TEST

START_TEST(test_verify_io_names) {
  dmlc_ir_graph *g = parse_ok("graph @g(%x: f32[2], %y: f32[2]) -> (f32[2]) { return %x }");
  strcpy(g->inputs[1].name, "x");
  check_graph_verify_error(g, "input 'x': duplicate name");
  strcpy(g->inputs[1].name, "1y");
  check_graph_verify_error(g, "input '1y': invalid name");
  strcpy(g->inputs[1].name, "y");
  strcpy(g->outputs[0].name, "a b");
  check_graph_verify_error(g, "output 'a b': invalid name");
  dmlc_ir_graph_destroy(g);
  check_verify_error("graph @g(%x: f32[2]) -> (%out1: f32[2], f32[2]) { return %x, %x }",
                     "output 'out1': duplicate name");
  /* An input and an output may share a name. */
  check_verify_ok("graph @g(%x: f32[2]) -> (%x: f32[2]) { return %x }");
}
END_TEST

START_TEST(test_verify_stride_limit) {
  check_verify_error("graph @g(%x: u8[2]{strides = [4294967296]}) -> (u8[2]) { return %x }",
                     "input 'x': strides[0] = 4294967296 exceeds 4294967295");
  check_verify_ok("graph @g(%x: u8[2]{strides = [4294967295]}) -> (u8[2]) { return %x }");
}
END_TEST

START_TEST(test_verify_size) {
  check_verify_error("graph @g(%x: f32[3]{size = 11}) -> (f32[3]) { return %x }",
                     "input 'x': size 11 is less than 12, the minimum for its type and strides");
  check_verify_error("graph @g(%x: f32[3]) -> (f32[3]{strides = [2], size = 12}) { return %x }",
                     "output 'out0': size 12 is less than 20");
}
END_TEST

START_TEST(test_verify_alignment) {
  check_verify_error("graph @g(%x: f32[3]{align = 3}) -> (f32[3]) { return %x }",
                     "input 'x': alignment 3 is not 0 or a power of two >= the element size 4");
  check_verify_error("graph @g(%x: f32[3]{align = 2}) -> (f32[3]) { return %x }",
                     "alignment 2 is not 0 or a power of two");
  check_verify_error("graph @g(%x: f32[3]) -> (f32[3]{align = 12}) { return %x }",
                     "output 'out0': alignment 12");
  check_verify_ok("graph @g(%x: u8[3]{align = 1}) -> (u8[3]{align = 4096}) { return %x }");
}
END_TEST

START_TEST(test_verify_output_strides) {
  check_verify_error("graph @g(%x: f32[2,2]) -> (f32[2,2]{strides = [0, 1]}) { return %x }",
                     "output 'out0': strides that are zero or overlap");
  check_verify_error("graph @g(%x: f32[2,2]) -> (f32[2,2]{strides = [1, 1]}) { return %x }",
                     "output 'out0': strides that are zero or overlap");
  check_verify_ok("graph @g(%x: f32[2,2]{strides = [1, 1]}) -> (f32[2,2]{strides = [1, 2]}) {\n"
                  "  return %x\n}");
}
END_TEST

START_TEST(test_verify_operands_defined) {
  dmlc_ir_graph *g = parse_ok("graph @g(%x: f32[2]) -> (f32[2]) {\n"
                              "  %0 = cast %x : f32[2]\n  %1 = cast %0 : f32[2]\n  return %1\n}");
  g->nodes[0].operands[0] = 2; /* the result of a later node */
  check_graph_verify_error(g, "%0 = cast: operand 0 (value 2) is not defined before the node");
  g->nodes[0].operands[0] = 1; /* its own result */
  check_graph_verify_error(g, "%0 = cast: operand 0 (value 1) is not defined before the node");
  g->nodes[0].operands[0] = 77;
  check_graph_verify_error(g, "%0 = cast: operand 0 (value 77) is not defined");
  dmlc_ir_graph_destroy(g);
  g = parse_ok("graph @g(%x: f32[2]) -> (f32[2]) { return %x }");
  g->outputs[0].value = 5;
  check_graph_verify_error(g, "output 'out0': value 5 does not exist");
  dmlc_ir_graph_destroy(g);
}
END_TEST

START_TEST(test_verify_operand_count) {
  dmlc_ir_graph *g = parse_ok("graph @g(%x: f32[2]) -> (f32[2]) {\n"
                              "  %0 = cast %x : f32[2]\n  return %0\n}");
  g->nodes[0].num_operands = 2;
  check_graph_verify_error(g, "%0 = cast: 2 operands, the op takes 1");
  g->nodes[0].num_operands = 0;
  check_graph_verify_error(g, "%0 = cast: 0 operands, the op takes 1");
  g->nodes[0].num_operands = 1;
  g->nodes[0].op = DMLC_OP_COUNT;
  check_graph_verify_error(g, "%0: invalid op");
  dmlc_ir_graph_destroy(g);
}
END_TEST

START_TEST(test_verify_producers) {
  dmlc_ir_graph *g = parse_ok("graph @g(%x: f32[2]) -> (f32[2]) {\n"
                              "  %0 = cast %x : f32[2]\n  %1 = cast %x : f32[2]\n  return %1\n}");
  g->nodes[1].result = 1; /* two nodes claim value 1, none value 2 */
  check_graph_verify_error(g, "value 2 (producer 1) is neither a graph input nor a node result");
  g->num_values = 2;
  check_graph_verify_error(g, "%1 = cast: the producer of its result (value 1) is not this node");
  g->num_values = 3;
  g->nodes[1].result = 2;
  g->values[2].producer = -1;
  check_graph_verify_error(g, "value 2 (producer -1) is neither");
  g->values[2].producer = 7;
  check_graph_verify_error(g, "value 2 (producer 7) is neither");
  g->values[2].producer = 1;
  g->values[0].producer = 1;
  check_graph_verify_error(g, "value 0 (producer 1) is neither");
  g->values[0].producer = -1;
  ck_assert_int_eq(dmlc_ir_verify(g, NULL), DMLC_OK);
  dmlc_ir_graph_destroy(g);
  /* Two inputs sharing one value. */
  g = parse_ok("graph @g(%x: f32[2], %y: f32[2]) -> (f32[2]) { return %x }");
  g->inputs[1].value = 0;
  check_graph_verify_error(g, "value 1 (producer -1) is neither");
  g->num_values = 1;
  check_graph_verify_error(g, "input 'y': value 0 is also input 0");
  dmlc_ir_graph_destroy(g);
}
END_TEST

START_TEST(test_verify_argmax) {
#define ARG(in, body, out)                                                                         \
  "graph @g(%x: " in ") -> (" out ") {\n  %0 = " body " : " out "\n  return %0\n}"
  check_verify_error(ARG("f64[3]", "argmax %x {axes = [0]}", "u32[1]"),
                     "%0 = argmax: input dtype f64 is not one of f16 f32 i8 i16 i32 i64 u8 u16 u32 "
                     "u64");
  check_verify_error(ARG("f32[3]", "argmax %x {axes = [0]}", "f32[1]"),
                     "%0 = argmax: result dtype f32 is not one of i32 i64 u32 u64");
  check_verify_error(ARG("f32[3]", "argmax %x {axes = [0]}", "u16[1]"),
                     "result dtype u16 is not one of");
  check_verify_error(ARG("f32[3]", "argmax %x {axes = []}", "u32[1]"),
                     "%0 = argmax: axes are empty");
  check_verify_error(ARG("f32[2,3,4]", "argmax %x {axes = [0, 5]}", "u32[1,3,1]"),
                     "%0 = argmax: axes[1] = 5 is out of range for rank 3");
  check_verify_error(ARG("f32[2,3,4]", "argmax %x {axes = [2, 0, 2]}", "u32[1,3,1]"),
                     "%0 = argmax: axes[2] = 2 repeats axes[0]");
  check_verify_error(ARG("f32[2,3]", "argmax %x {axes = [0]}", "u32[1,3,1]"),
                     "%0 = argmax: result rank 3 differs from the input rank 2");
  check_verify_error(ARG("f32[2,3]", "argmax %x {axes = [0]}", "u32[2,3]"),
                     "%0 = argmax: result dimension 0 is 2, expected 1 (a reduced axis)");
  check_verify_error(ARG("f32[2,3]", "argmax %x {axes = [0]}", "u32[1,1]"),
                     "%0 = argmax: result dimension 1 is 1, expected 3");
  check_verify_error(ARG("u8[65536,32769]", "argmax %x {axes = [0, 1]}", "i32[1,1]"),
                     "%0 = argmax: largest index 2147549183 does not fit i32");
  check_verify_ok(ARG("u8[65536,32769]", "argmax %x {axes = [0, 1]}", "u32[1,1]"));
  /* argmin shares the rules. */
  check_verify_error("graph @g(%x: f32[3]) -> (u32[1]) {\n  %0 = eq %x, %x : bool[3]\n"
                     "  %1 = argmin %0 {axes = [0]} : u32[1]\n  return %1\n}",
                     "%1 = argmin: input dtype bool is not one of");
  check_verify_error(ARG("i8[3]", "argmin %x {axes = [1]}", "u32[1]"),
                     "%0 = argmin: axes[0] = 1 is out of range for rank 1");
  dmlc_ir_graph *g = parse_ok(ARG("i8[3]", "argmin %x {axes = [0]}", "u32[1]"));
  g->nodes[0].direction = (dmlc_direction)2;
  check_graph_verify_error(g, "%0 = argmin: invalid direction 2");
  g->nodes[0].direction = DMLC_DIRECTION_DECREASING;
  g->nodes[0].num_axes = 9;
  check_graph_verify_error(g, "%0 = argmin: 9 axes, more than 8");
  dmlc_ir_graph_destroy(g);
}
END_TEST

START_TEST(test_verify_hardmax) {
  check_verify_error(ARG("i32[3]", "hardmax %x {axes = [0]}", "i32[3]"),
                     "%0 = hardmax: input dtype i32 is not one of f16 f32");
  check_verify_error(ARG("f32[3]", "hardmax %x {axes = [0]}", "f16[3]"),
                     "%0 = hardmax: result type f16[3] differs from the input type f32[3]");
  check_verify_error(ARG("f32[3]", "hardmax %x {axes = [0]}", "f32[1]"),
                     "result type f32[1] differs from the input type f32[3]");
  check_verify_error(ARG("f16[3,2]", "hardmax %x {axes = [1, 1]}", "f16[3,2]"),
                     "%0 = hardmax: axes[1] = 1 repeats axes[0]");
  check_verify_error(ARG("f16[3,2]", "hardmax %x {axes = []}", "f16[3,2]"), "axes are empty");
}
END_TEST

START_TEST(test_verify_reshape) {
  check_verify_error(ARG("f32[2,3]", "reshape %x", "i32[6]"),
                     "%0 = reshape: result dtype i32 differs from the input dtype f32");
  check_verify_error(ARG("f32[2,3]", "reshape %x", "f32[7]"),
                     "%0 = reshape: result has 7 elements, the input 6");
}
END_TEST

START_TEST(test_verify_broadcast) {
  check_verify_error(ARG("f32[1,3]", "broadcast %x", "u32[2,3]"),
                     "%0 = broadcast: result dtype u32 differs from the input dtype f32");
  check_verify_error(ARG("f32[1,3]", "broadcast %x", "f32[2,1,3]"),
                     "%0 = broadcast: result rank 3 differs from the input rank 2");
  check_verify_error(ARG("f32[2,3]", "broadcast %x", "f32[4,3]"),
                     "%0 = broadcast: input dimension 0 is 2, neither 1 nor the result's 4");
}
END_TEST

START_TEST(test_verify_reduced_index) {
  check_verify_error(ARG("f32[1]", "reduced_index {axes = [2]}", "u32[2,3]"),
                     "%0 = reduced_index: axes[0] = 2 is out of range for rank 2");
  check_verify_error(ARG("f32[1]", "reduced_index {axes = []}", "u32[2,3]"),
                     "%0 = reduced_index: axes are empty");
  check_verify_error(ARG("f32[1]", "reduced_index {axes = [0]}", "f32[2,3]"),
                     "%0 = reduced_index: result dtype f32 is not one of i32 i64 u32 u64");
  check_verify_error(ARG("f32[1]", "reduced_index {axes = [1, 0]}", "i32[65536,32769]"),
                     "%0 = reduced_index: largest index 2147549183 does not fit i32");
  check_verify_ok(ARG("f32[1]", "reduced_index {axes = [1]}", "i32[65536,32769]"));
}
END_TEST

START_TEST(test_verify_eq) {
  check_verify_error("graph @g(%x: f32[2], %y: f32[3]) -> (bool[2]) {\n"
                     "  %0 = eq %x, %y : bool[2]\n  return %0\n}",
                     "%0 = eq: operand types f32[2] and f32[3] differ");
  check_verify_error("graph @g(%x: f32[2], %y: i32[2]) -> (bool[2]) {\n"
                     "  %0 = eq %x, %y : bool[2]\n  return %0\n}",
                     "%0 = eq: operand types f32[2] and i32[2] differ");
  check_verify_error(ARG("f32[2]", "eq %x, %x", "u8[2]"),
                     "%0 = eq: result type u8[2] is not bool[2]");
  check_verify_error(ARG("f32[2]", "eq %x, %x", "bool[1,2]"),
                     "%0 = eq: result type bool[1,2] is not bool[2]");
}
END_TEST

START_TEST(test_verify_cast) {
  check_verify_error(
      ARG("i32[2,3]", "cast %x", "f32[3,2]"),
      "%0 = cast: result type f32[3,2] does not have the dimensions of the input type "
      "i32[2,3]");
  check_verify_error(ARG("f32[2]", "cast %x", "i32[2]"),
                     "%0 = cast: cast from f32 to i32 is not supported");
  check_verify_error(ARG("f16[2]", "cast %x", "bool[2]"), "cast from f16 to bool is not supported");
  check_verify_ok(ARG("i64[2]", "cast %x", "u8[2]"));
  check_verify_ok(ARG("u8[2]", "cast %x", "f16[2]"));
  check_verify_ok(ARG("f64[2]", "cast %x", "f16[2]"));
}
END_TEST

START_TEST(test_verify_constant) {
  check_verify_error(ARG("f32[1]", "constant {value = 300}", "u8[2]"),
                     "%0 = constant: value 300 does not fit u8");
  check_verify_error(ARG("f32[1]", "constant {value = -1}", "u64[2]"), "value -1 does not fit u64");
  check_verify_error(ARG("f32[1]", "constant {value = -129}", "i8[2]"),
                     "value -129 does not fit i8");
  check_verify_error(ARG("f32[1]", "constant {value = 32768}", "i16[2]"),
                     "value 32768 does not fit i16");
  check_verify_error(ARG("f32[1]", "constant {value = 4294967296}", "u32[2]"),
                     "value 4294967296 does not fit u32");
  check_verify_error("graph @g() -> (f32[2]) {\n  %0 = constant {value = 2} : bool[2]\n"
                     "  %1 = cast %0 : f32[2]\n  return %1\n}",
                     "%0 = constant: value 2 does not fit bool");
  check_verify_ok(ARG("f32[1]", "constant {value = -9223372036854775808}", "f64[2]"));
  check_verify_ok(ARG("f32[1]", "constant {value = 4294967295}", "u32[2]"));
#undef ARG
}
END_TEST

/* ---- the dtype table and the one int64 -> dtype conversion ---- */
START_TEST(test_dtype_table_facts) {
  for (int d = 0; d < DMLC_DTYPE_COUNT; d++) {
    const dmlc_dtype_info *info = dmlc_dtype_get((dmlc_dtype)d);
    const uint32_t bits = info->size * 8;
    char want[32];
    if (info->kind == DMLC_KIND_FLOAT) {
      /* sign + exponent + mantissa fill the element */
      ck_assert_uint_eq(1 + info->exponent_bits + info->mantissa_bits, bits);
      ck_assert_int_eq(info->order, DMLC_ORDER_FLOAT);
      const char *llvm = bits == 16 ? "half" : bits == 32 ? "float" : "double";
      ck_assert_str_eq(info->llvm, llvm);
      snprintf(want, sizeof want, "OpTypeFloat %u", bits);
    } else {
      ck_assert_uint_eq(info->exponent_bits, 0);
      ck_assert_uint_eq(info->mantissa_bits, 0);
      const bool is_signed = info->kind == DMLC_KIND_SIGNED;
      ck_assert_int_eq(info->order, is_signed ? DMLC_ORDER_SIGNED : DMLC_ORDER_UNSIGNED);
      snprintf(want, sizeof want, "i%u", bits);
      ck_assert_str_eq(info->llvm, want);
      snprintf(want, sizeof want, "OpTypeInt %u %d", bits, is_signed);
    }
    ck_assert_str_eq(info->spirv, want);
    dmlc_dtype back;
    ck_assert(dmlc_dtype_from_name(info->name, strlen(info->name), &back));
    ck_assert_int_eq(back, d);
  }
}
END_TEST

typedef struct bits_case {
  dmlc_dtype dtype;
  int64_t value;
  uint64_t bits;
} bits_case;

START_TEST(test_dtype_bits_from_i64) {
  static const bits_case cases[] = {
      {DMLC_DTYPE_BOOL, 0, 0},
      {DMLC_DTYPE_BOOL, 5, 1},
      {DMLC_DTYPE_BOOL, -1, 1},
      {DMLC_DTYPE_BOOL, INT64_MIN, 1},
      {DMLC_DTYPE_I8, 127, 0x7f},
      {DMLC_DTYPE_I8, 128, 0x80}, /* wraps */
      {DMLC_DTYPE_I8, -1, 0xff},
      {DMLC_DTYPE_I8, 256, 0},
      {DMLC_DTYPE_U8, 300, 44},
      {DMLC_DTYPE_U8, -1, 0xff},
      {DMLC_DTYPE_I16, -2, 0xfffe},
      {DMLC_DTYPE_U16, 65536, 0},
      {DMLC_DTYPE_I32, -1, 0xffffffffu},
      {DMLC_DTYPE_I32, INT64_C(0x180000000), 0x80000000u},
      {DMLC_DTYPE_U32, INT64_C(0x100000007), 7},
      {DMLC_DTYPE_I64, -1, UINT64_MAX},
      {DMLC_DTYPE_I64, INT64_MIN, UINT64_C(0x8000000000000000)},
      {DMLC_DTYPE_U64, -1, UINT64_MAX},
      {DMLC_DTYPE_F16, 0, 0},
      {DMLC_DTYPE_F16, 1, 0x3c00},
      {DMLC_DTYPE_F16, -2, 0xc000},
      {DMLC_DTYPE_F16, 2049, 0x6800}, /* a tie: to even, 2048 */
      {DMLC_DTYPE_F16, 2051, 0x6802}, /* a tie: to even, 2052 */
      {DMLC_DTYPE_F16, 2053, 0x6802}, /* a tie: to even, 2052 */
      {DMLC_DTYPE_F16, 65504, 0x7bff},
      {DMLC_DTYPE_F16, 65519, 0x7bff},  /* below the midpoint to 2^16 */
      {DMLC_DTYPE_F16, 65520, 0x7c00},  /* the midpoint: inf */
      {DMLC_DTYPE_F16, -65520, 0xfc00}, /* -inf */
      {DMLC_DTYPE_F16, INT64_C(1) << 40, 0x7c00},
      {DMLC_DTYPE_F16, INT64_MIN, 0xfc00},
      {DMLC_DTYPE_F32, 1, 0x3f800000},
      {DMLC_DTYPE_F32, -1, 0xbf800000},
      {DMLC_DTYPE_F32, 16777217, 0x4b800000},  /* a tie: to even, 2^24 */
      {DMLC_DTYPE_F32, 16777219, 0x4b800002},  /* a tie: to even, 2^24 + 4 */
      {DMLC_DTYPE_F32, INT64_MAX, 0x5f000000}, /* 2^63 */
      {DMLC_DTYPE_F64, 3, UINT64_C(0x4008000000000000)},
      {DMLC_DTYPE_F64, (INT64_C(1) << 53) + 1, UINT64_C(0x4340000000000000)}, /* 2^53 */
      {DMLC_DTYPE_F64, INT64_MIN, UINT64_C(0xc3e0000000000000)},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    const bits_case *c = &cases[i];
    const uint64_t got = dmlc_dtype_bits_from_i64(c->dtype, c->value);
    ck_assert_msg(got == c->bits, "%s %lld: 0x%llx, expected 0x%llx", dmlc_dtype_name(c->dtype),
                  (long long)c->value, (unsigned long long)got, (unsigned long long)c->bits);
  }
  /* Every dtype: the bits fit the element and read back as the value where
   * the dtype holds it. */
  static const int64_t values[] = {0, 1, -1, 42, 255, -128, 65535, INT64_MAX, INT64_MIN};
  for (int d = 0; d < DMLC_DTYPE_COUNT; d++) {
    const dmlc_dtype dt = (dmlc_dtype)d;
    const uint32_t width = dmlc_dtype_size(dt) * 8;
    for (size_t i = 0; i < sizeof values / sizeof values[0]; i++) {
      const uint64_t bits = dmlc_dtype_bits_from_i64(dt, values[i]);
      if (width < 64)
        ck_assert_uint_eq(bits >> width, 0);
      if (dmlc_dtype_is_integer(dt)) {
        const int64_t back = dmlc_dtype_i64_from_bits(dt, bits);
        const uint64_t mask = width < 64 ? (UINT64_C(1) << width) - 1 : UINT64_MAX;
        ck_assert_uint_eq((uint64_t)back & mask, (uint64_t)values[i] & mask);
      }
    }
  }
}
END_TEST

START_TEST(test_dtype_i64_from_bits) {
  ck_assert_int_eq(dmlc_dtype_i64_from_bits(DMLC_DTYPE_I8, 0x80), -128);
  ck_assert_int_eq(dmlc_dtype_i64_from_bits(DMLC_DTYPE_U8, 0x80), 128);
  ck_assert_int_eq(dmlc_dtype_i64_from_bits(DMLC_DTYPE_I16, 0xffff), -1);
  ck_assert_int_eq(dmlc_dtype_i64_from_bits(DMLC_DTYPE_U32, 0xffffffffu), 4294967295);
  ck_assert_int_eq(dmlc_dtype_i64_from_bits(DMLC_DTYPE_I32, 0x1ffffffffu), -1);
  ck_assert_int_eq(dmlc_dtype_i64_from_bits(DMLC_DTYPE_U64, UINT64_MAX), -1);
  ck_assert_int_eq(dmlc_dtype_i64_from_bits(DMLC_DTYPE_BOOL, 1), 1);
}
END_TEST

static uint64_t f64_bits(double d) {
  uint64_t b;
  memcpy(&b, &d, sizeof b);
  return b;
}

/* The table's float layouts decode exactly as the C and binary16 widenings
 * do: every f16, and f32s of every class (NaNs come out quiet). */
START_TEST(test_dtype_f64_from_bits) {
  for (uint32_t h = 0; h < 65536; h++) {
    const double want = (double)dmlc_f16_to_f32((uint16_t)h);
    const double got = dmlc_dtype_f64_from_bits(DMLC_DTYPE_F16, h);
    ck_assert_msg(f64_bits(got) == f64_bits(want), "f16 0x%04x", h);
  }
  static const uint32_t f32s[] = {0,          0x80000000u, 1,           0x807fffffu, 0x00800000u,
                                  0x3f800000, 0xc2f6e979u, 0x7f7fffffu, 0x7f800000u, 0xff800000u,
                                  0x7fc00000, 0x7f800001u, 0xffbfffffu, 0x7fffffffu};
  for (size_t i = 0; i < sizeof f32s / sizeof f32s[0]; i++) {
    float f;
    memcpy(&f, &f32s[i], sizeof f);
    const volatile float vf = f; /* widened at run time, as the evaluator's old load did */
    const double want = (double)vf;
    const double got = dmlc_dtype_f64_from_bits(DMLC_DTYPE_F32, f32s[i]);
    ck_assert_msg(f64_bits(got) == f64_bits(want), "f32 0x%08x", f32s[i]);
  }
  static const uint64_t f64s[] = {0, UINT64_C(0x8000000000000001), UINT64_C(0x3ff0000000000001),
                                  UINT64_C(0xfff0000000000000)};
  for (size_t i = 0; i < sizeof f64s / sizeof f64s[0]; i++)
    ck_assert_uint_eq(f64_bits(dmlc_dtype_f64_from_bits(DMLC_DTYPE_F64, f64s[i])), f64s[i]);
  /* a signaling NaN comes out quiet, sign and payload kept */
  ck_assert_uint_eq(
      f64_bits(dmlc_dtype_f64_from_bits(DMLC_DTYPE_F64, UINT64_C(0xfff0000000000123))),
      UINT64_C(0xfff8000000000123));
}
END_TEST

/* ---- axes and masks ---- */
START_TEST(test_axes_mask) {
  const uint32_t axes[] = {5, 0, 2};
  ck_assert_uint_eq(dmlc_axes_mask(axes, 3), 0x25);
  ck_assert_uint_eq(dmlc_axes_mask(axes, 0), 0);
  const uint32_t wild[] = {1, DMLC_MAX_RANK, 40};
  ck_assert_uint_eq(dmlc_axes_mask(wild, 3), 0x2);
  uint32_t back[DMLC_MAX_RANK];
  ck_assert_uint_eq(dmlc_mask_axes(0x25, back), 3);
  ck_assert_uint_eq(back[0], 0);
  ck_assert_uint_eq(back[1], 2);
  ck_assert_uint_eq(back[2], 5);
  ck_assert_uint_eq(dmlc_mask_axes(0, back), 0);
  ck_assert(dmlc_mask_has_axis(0x25, 5));
  ck_assert(!dmlc_mask_has_axis(0x25, 1));
  ck_assert(!dmlc_mask_has_axis(UINT32_MAX, 40));
}
END_TEST

static Suite *ir_suite(void) {
  Suite *s = suite_create("ir");
  TCase *print = tcase_create("printer");
  tcase_add_test(print, test_print_built_hardmax);
  tcase_add_test(print, test_print_built_layouts);
  tcase_add_test(print, test_print_broken_graph);
  tcase_add_test(print, test_type_str);
  suite_add_tcase(s, print);

  TCase *tables = tcase_create("tables");
  tcase_add_test(tables, test_dtype_table_facts);
  tcase_add_test(tables, test_dtype_bits_from_i64);
  tcase_add_test(tables, test_dtype_i64_from_bits);
  tcase_add_test(tables, test_dtype_f64_from_bits);
  tcase_add_test(tables, test_axes_mask);
  suite_add_tcase(s, tables);

  TCase *parse = tcase_create("parser");
  tcase_add_test(parse, test_parse_print_exact);
  tcase_add_test(parse, test_roundtrip_texts);
  tcase_add_test(parse, test_roundtrip_all_dtypes_and_ops);
  tcase_add_test(parse, test_roundtrip_example_files);
  tcase_add_test(parse, test_roundtrip_ir_test_files);
  tcase_add_test(parse, test_kernel_roundtrip);
  tcase_add_test(parse, test_kernel_built);
  suite_add_tcase(s, parse);

  TCase *errors = tcase_create("parser_errors");
  tcase_add_test(errors, test_error_unknown_op);
  tcase_add_test(errors, test_error_expected_bracket);
  tcase_add_test(errors, test_error_undefined_value);
  tcase_add_test(errors, test_error_redefinition);
  tcase_add_test(errors, test_error_unknown_dtype);
  tcase_add_test(errors, test_error_rank);
  tcase_add_test(errors, test_error_number_out_of_range);
  tcase_add_test(errors, test_error_axes);
  tcase_add_test(errors, test_negative_axes);
  tcase_add_test(errors, test_verify_source_names);
  tcase_add_test(errors, test_error_operand_count);
  tcase_add_test(errors, test_error_end_of_input);
  tcase_add_test(errors, test_error_unknown_attribute);
  tcase_add_test(errors, test_error_attribute_rules);
  tcase_add_test(errors, test_error_return_count);
  tcase_add_test(errors, test_error_return_type);
  tcase_add_test(errors, test_error_names);
  tcase_add_test(errors, test_error_layout);
  tcase_add_test(errors, test_error_characters);
  tcase_add_test(errors, test_error_bad_arguments);
  tcase_add_test(errors, test_error_kernel);
  suite_add_tcase(s, errors);

  TCase *robust = tcase_create("robustness");
  tcase_set_timeout(robust, 600);
  tcase_add_test(robust, test_robustness_mutations);
  suite_add_tcase(s, robust);

  TCase *verify = tcase_create("verifier");
  tcase_add_test(verify, test_verify_valid);
  tcase_add_test(verify, test_verify_graph_name);
  tcase_add_test(verify, test_verify_has_outputs);
  tcase_add_test(verify, test_verify_rank);
  tcase_add_test(verify, test_verify_dims);
  tcase_add_test(verify, test_verify_element_count);
  tcase_add_test(verify, test_verify_boundary_bool);
  tcase_add_test(verify, test_verify_io_names);
  tcase_add_test(verify, test_verify_stride_limit);
  tcase_add_test(verify, test_verify_size);
  tcase_add_test(verify, test_verify_alignment);
  tcase_add_test(verify, test_verify_output_strides);
  tcase_add_test(verify, test_verify_operands_defined);
  tcase_add_test(verify, test_verify_operand_count);
  tcase_add_test(verify, test_verify_producers);
  tcase_add_test(verify, test_verify_argmax);
  tcase_add_test(verify, test_verify_hardmax);
  tcase_add_test(verify, test_verify_reshape);
  tcase_add_test(verify, test_verify_broadcast);
  tcase_add_test(verify, test_verify_reduced_index);
  tcase_add_test(verify, test_verify_eq);
  tcase_add_test(verify, test_verify_cast);
  tcase_add_test(verify, test_verify_constant);
  tcase_add_test(verify, test_verify_kernels);
  suite_add_tcase(s, verify);
  return s;
}

int main(void) {
  Suite *suites[] = {ir_suite()};
  return dmlc_test_run_suites(suites, 1);
}
