/* The dmlc command: a client of the public API (include/dmlc/dmlc.h) only.
 * See docs/cli.md. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "dmlc/dmlc.h"
#include "ir/strbuf.h"
#include "runtime/host_alloc.h"
#include "tools/compile_exe.h"
#include "tools/diagnostic.h"
#include "tools/npy.h"
#include "tools/suggest.h"
#include "tools/tensor_file.h"

#ifndef DMLC_VERSION_STRING
#define DMLC_VERSION_STRING "0.1.0"
#endif

enum { EXIT_OK = 0, EXIT_ERROR = 1, EXIT_USAGE = 2 };

/* Printing: a tensor is summarized (edge items on each side of "...") when it
 * has more than this many elements, or along any dim longer than
 * PRINT_MAX_DIM; lines wrap past PRINT_LINE_WIDTH. */
enum { PRINT_MAX_TOTAL = 1000, PRINT_MAX_DIM = 64, PRINT_EDGE = 3, PRINT_LINE_WIDTH = 100 };

/* ---- messages ---- */

static void error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void error(const char *fmt, ...) {
  fputs("dmlc: error: ", stderr);
  va_list ap;
  va_start(ap, fmt);
  vfprintf(stderr, fmt, ap);
  va_end(ap);
  fputc('\n', stderr);
}

/* The context's message for a failed call, or the status's name. */
static int api_error(const dmlc_context *ctx, dmlc_status status, const char *what) {
  const char *message = ctx ? dmlc_context_error(ctx) : "";
  if (message && message[0])
    error("%s", message);
  else
    error("%s: %s", what, dmlc_status_string(status));
  return EXIT_ERROR;
}

/* A parse or verifier error in file (text: its bytes, or NULL): at its
 * place, clang's way, when the message has one; else naming the file. */
static int source_error(const dmlc_context *ctx, dmlc_status status, const char *file,
                        const char *text, size_t length) {
  const char *message = dmlc_context_error(ctx);
  if (!message || !message[0]) {
    error("%s: %s", file, dmlc_status_string(status));
    return EXIT_ERROR;
  }
  const size_t n = strlen(file);
  if (strncmp(message, file, n) == 0 && message[n] == ':') {
    diagnostic_print(stderr, message, file, text, length);
    return EXIT_ERROR;
  }
  error("%s: %s", file, message);
  return EXIT_ERROR;
}

static const char main_usage[] =
    "usage: dmlc <command> [options]\n"
    "\n"
    "commands:\n"
    "  opt FILE [-o OUT]        parse (or import), verify and print a graph as IR text\n"
    "  run FILE [options]       compile a graph for a device and run it on .npy/.pb data\n"
    "  devices                  list the devices and whether each is available\n"
    "  compile FILE -o OUT      ahead-of-time compilation: objects, libraries, programs, SPIR-V\n"
    "  help [COMMAND]           show this help, or a command's\n"
    "\n"
    "options:\n"
    "  -h, --help               show this help (or a command's: dmlc run --help)\n"
    "  --version                show the version\n"
    "\n"
    "FILE is IR text (docs/ir.md) or an ONNX model (.onnx, docs/onnx.md); '-' reads\n"
    "standard input, either kind.\n"
    "\n"
    "exit status: 0 success; 1 an error (bad input, a failed run, an --expect\n"
    "mismatch); 2 a usage error (an unknown command, option, device or pass, a\n"
    "missing or malformed argument).\n";

static const char opt_usage[] =
    "usage: dmlc opt FILE [--passes=P1,P2,...] [options] [-o OUT]\n"
    "       dmlc opt --list-passes\n"
    "\n"
    "Parses the IR text in FILE ('-' reads standard input), or imports the ONNX model\n"
    "in it (a .onnx file, or bytes that start as one), verifies the graph, runs\n"
    "the passes named by --passes in order (none by default), and prints the result\n"
    "in canonical form to standard output, or to OUT with -o. IR dumps and the\n"
    "timing table go to standard error.\n"
    "\n"
    "options:\n"
    "  --passes=LIST            comma-separated passes to run; 'default' is the\n"
    "                           pipeline compile uses\n"
    "  --list-passes            list the passes and the default pipeline\n"
    "  --print-ir-after-all     dump the IR after every pass\n"
    "  --print-ir-before-all    dump the IR before every pass\n"
    "  --print-ir-after=NAMES   dump the IR after the named passes\n"
    "  --print-ir-before=NAMES  dump the IR before the named passes\n"
    "  --verify-each            run the verifier after every pass (always on in\n"
    "                           debug builds)\n"
    "  --pass-timing            print a per-pass time table\n"
    "  -o OUT, --output=OUT     write the printed IR to OUT\n"
    "  --shape NAME=DIMS        ONNX: size a symbolic dim (N=8) or an input's whole\n"
    "                           shape (x=8,1000); repeatable\n"
    "  -h, --help               show this help\n";

static const char run_usage[] =
    "usage: dmlc run FILE [--device=DEVICE] [--input [NAME=]X.npy]... [--output [NAME=]Y.npy]...\n"
    "                     [--expect [NAME=]Z.npy]... [--shape NAME=DIMS]... [--repeat N]\n"
    "                     [-q|--quiet] [--no-generate] [--threads=N] [--dump=WHAT,...]\n"
    "\n"
    "Compiles the graph in FILE (IR text or an ONNX model; '-' reads standard input)\n"
    "for DEVICE, binds inputs from files (generated data for inputs given none, noted\n"
    "on standard error), runs\n"
    "it, prints the inputs, the outputs and the execution time, writes outputs to\n"
    "files and compares them with --expect files. Every file is .npy, or an ONNX\n"
    "TensorProto when its name ends in .pb. NAME is the graph's name for a tensor or\n"
    "the ONNX model's; without NAME= files bind in the graph's order.\n"
    "\n"
    "options:\n"
    "  --device=DEVICE          default, reference, cpu or vulkan (default: default,\n"
    "                           which is cpu)\n"
    "  --threads=N              threads the cpu device runs kernels on (default: the\n"
    "                           online cores)\n"
    "  --dump=WHAT,...          print the compiled code to standard error: kernels\n"
    "                           (descriptions), llvm (optimized LLVM IR), asm (cpu);\n"
    "                           spirv (each kernel's SPIR-V disassembly, vulkan)\n"
    "  --input [NAME=]X.npy     bind input NAME (or the next unnamed input) to X.npy\n"
    "  --output [NAME=]Y.npy    write output NAME (or the next unnamed output) to Y.npy\n"
    "  --expect [NAME=]Z.npy    compare output NAME (or the next) with Z bit for bit;\n"
    "                           a difference prints the first differing index and\n"
    "                           exits 1\n"
    "  --shape NAME=DIMS        ONNX: size a symbolic dim (N=8) or an input's whole\n"
    "                           shape (x=8,1000); repeatable\n"
    "  --repeat N               run N times and report the median time (default 1);\n"
    "                           vulkan also reports the kernels' time on the device\n"
    "  -q, --quiet              do not print the tensors (the time is still printed)\n"
    "  --no-generate            an input given no --input is an error (by default it\n"
    "                           gets generated data, with a note on standard error)\n"
    "  -h, --help               show this help\n";

static const char devices_usage[] = "usage: dmlc devices\n"
                                    "\n"
                                    "Lists dmlc's devices and whether each is available here,\n"
                                    "and every Vulkan device with the features dmlc uses.\n";

static const char compile_usage[] =
    "usage: dmlc compile FILE -o OUT [--emit=KIND[,KIND...]] [--name=NAME]\n"
    "                    [--target=TRIPLE] [--mcpu=CPU] [--mattr=FEATURES] [-O0|-O1|-O2|-O3]\n"
    "\n"
    "Compiles the graph in FILE (IR text or an ONNX model, with --shape NAME=DIMS\n"
    "for its symbolic dims) ahead of time into code that needs no libdmlc\n"
    "(docs/aot.md). Every global symbol starts with NAME (default: the graph's\n"
    "name): NAME_run, NAME_run_parallel, NAME_run_workspace.\n"
    "\n"
    "kinds (without --emit, OUT's extension picks one):\n"
    "  ir         .dmlir  the graph after the default pipeline\n"
    "  llvm       .ll     LLVM IR\n"
    "  bc         .bc     LLVM bitcode\n"
    "  asm        .s      assembly\n"
    "  obj        .o      an object file\n"
    "  staticlib  .a      an archive of the object, with its symbol index\n"
    "  header     .h      the entry points and every input's and output's layout\n"
    "  sharedlib  .so     a shared library of the object, linked by the C compiler\n"
    "  metadata   .json   entry points, layouts, kernels, task splits, SPIR-V dispatch\n"
    "  dot        .dot    the graph for Graphviz, kernels as clusters\n"
    "  spirv      .spv    a Vulkan 1.2 compute module per kernel, validated\n"
    "  spirv-asm  .spvasm its disassembly (spirv-as reassembles it)\n"
    "  exe        (none)  a program that runs the graph on .npy files (run it with\n"
    "                     --help); it needs libc and pthreads, no libdmlc\n"
    "With several kinds OUT is a stem: each file is OUT plus the kind's extension.\n"
    "spirv and spirv-asm with several kernels write STEM.kernelI.spv (.spvasm)\n"
    "per kernel I, STEM being OUT less its extension (the stem with several kinds);\n"
    "the metadata's \"spirv\" section says how to bind and dispatch them.\n"
    "\n"
    "options:\n"
    "  -o, --output OUT         the output file (or stem)\n"
    "  --emit=KIND[,KIND...]    what to write (above)\n"
    "  --name=NAME              the symbol prefix, a C identifier\n"
    "  --target=TRIPLE          LLVM target triple (default: the host's)\n"
    "  --mcpu=CPU               target CPU, as llc spells it (default: the host's\n"
    "                           for the host triple, generic otherwise); a,b,c\n"
    "                           (x86-64): one object, a variant per CPU, the best\n"
    "                           the running CPU can run picked on the first call\n"
    "  --mattr=FEATURES         target features, as llc spells them (+avx2,-fma);\n"
    "                           default: the host's when the triple and CPU are\n"
    "  -O0, -O1, -O2, -O3       optimization level (default -O2)\n"
    "  --shape NAME=DIMS        ONNX: size a symbolic dim or an input's whole shape\n"
    "  -h, --help               show this help\n"
    "\n"
    "sharedlib and exe link with the C compiler: $CC (default cc) for the host;\n"
    "for --target=TRIPLE, $CC if set, else TRIPLE-gcc if found, else\n"
    "clang --target=TRIPLE. exe links the object with a C driver and a table of\n"
    "the graph: cc -pthread -o OUT driver.o table.c graph.o, the driver compiled\n"
    "when dmlc was built; with $CC set or a --target, from its source:\n"
    "$CC -O2 -pthread -o OUT main.c table.c graph.o.\n";

static int usage_error(const char *usage, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
static int usage_error(const char *usage, const char *fmt, ...) {
  fputs("dmlc: error: ", stderr);
  va_list ap;
  va_start(ap, fmt);
  vfprintf(stderr, fmt, ap);
  va_end(ap);
  fputc('\n', stderr);
  /* The synopsis: the usage text up to its first blank line. */
  const char *end = strstr(usage, "\n\n");
  fwrite(usage, 1, end ? (size_t)(end - usage) + 1 : strlen(usage), stderr);
  fputs("(--help shows more)\n", stderr);
  return EXIT_USAGE;
}

/* Each command's options, for "did you mean" (clang suggests the same way). */
static const char *const opt_options[] = {"--passes",
                                          "--list-passes",
                                          "--print-ir-after-all",
                                          "--print-ir-before-all",
                                          "--print-ir-after",
                                          "--print-ir-before",
                                          "--verify-each",
                                          "--pass-timing",
                                          "--output",
                                          "--shape",
                                          "--help",
                                          NULL};
static const char *const run_options_list[] = {"--device", "--input",       "--output",  "--expect",
                                               "--shape",  "--repeat",      "--threads", "--dump",
                                               "--quiet",  "--no-generate", "--help",    NULL};
static const char *const compile_options[] = {"--output", "--emit",  "--name", "--target", "--mcpu",
                                              "--mattr",  "--shape", "--help", NULL};
static const char *const command_names[] = {"opt", "run", "devices", "compile", "help", NULL};

/* The usage error for an unknown option arg, with the closest known
 * spelling: "unknown option '--devcie=cpu'; did you mean '--device=cpu'?". */
static int unknown_option(const char *usage, const char *arg, const char *const *known) {
  const char *eq = strchr(arg, '=');
  const size_t n = eq ? (size_t)(eq - arg) : strlen(arg);
  const char *best = suggest_closest(arg, n, known);
  if (best)
    return usage_error(usage, "unknown option '%s'; did you mean '%s%s'?", arg, best, eq ? eq : "");
  return usage_error(usage, "unknown option '%s'", arg);
}

static int is_help(const char *arg) { return strcmp(arg, "-h") == 0 || strcmp(arg, "--help") == 0; }

/* Matches argv[*i] against --name=VALUE or --name VALUE (or short, e.g.
 * "-o", with a separate VALUE). Returns 1 and sets *value on a match, 0 when
 * argv[*i] is another argument, -1 when the value is missing. */
static int option_value(int argc, char **argv, int *i, const char *name, const char *short_name,
                        const char **value) {
  const char *arg = argv[*i];
  const size_t n = strlen(name);
  if (strncmp(arg, name, n) == 0 && arg[n] == '=') {
    *value = arg + n + 1;
    return 1;
  }
  if (strcmp(arg, name) != 0 && !(short_name && strcmp(arg, short_name) == 0))
    return 0;
  if (*i + 1 >= argc)
    return -1;
  *value = argv[++*i];
  return 1;
}

/* ---- files ---- */

static char *read_text(const char *path, size_t *length) {
  struct stat st;
  if (strcmp(path, "-") != 0 && stat(path, &st) == 0 && S_ISDIR(st.st_mode)) {
    error("%s: is a directory; FILE is an IR text file (.dmlir) or an ONNX model (.onnx)", path);
    return NULL;
  }
  FILE *f = strcmp(path, "-") == 0 ? stdin : fopen(path, "rb");
  if (!f) {
    error("%s: cannot open: %s", path, strerror(errno));
    return NULL;
  }
  size_t cap = 4096, len = 0;
  char *buf = malloc(cap + 1);
  while (buf) {
    const size_t n = fread(buf + len, 1, cap - len, f);
    len += n;
    if (n == 0)
      break;
    if (len == cap) {
      char *grown = realloc(buf, cap * 2 + 1);
      if (!grown)
        free(buf);
      buf = grown;
      cap *= 2;
    }
  }
  const int failed = !buf || ferror(f);
  const int read_errno = errno;
  if (f != stdin)
    fclose(f);
  if (failed) {
    error("%s: %s", path, buf ? strerror(read_errno) : "out of memory");
    free(buf);
    return NULL;
  }
  buf[len] = '\0';
  *length = len;
  return buf;
}

/* Whether two paths name one file: the same text, or the same inode. */
static int same_file(const char *a, const char *b) {
  if (strcmp(a, b) == 0)
    return 1;
  struct stat sa, sb;
  return stat(a, &sa) == 0 && stat(b, &sb) == 0 && sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
}

static const char *display_name(const char *path) {
  return strcmp(path, "-") == 0 ? "<stdin>" : path;
}

/* ---- models: IR text or ONNX ---- */

/* What a command read from FILE: the graph and, for an ONNX model, its
 * signature (ONNX's names and shapes, rank 0 for scalars). */
typedef struct model {
  dmlc_graph *graph;
  dmlc_onnx_signature *signature; /* NULL for IR text */
  char *text;                     /* the file's bytes, for messages at a place */
  size_t length;
  const char *file; /* its name in messages */
} model;

static void model_free(model *m) {
  dmlc_graph_destroy(m->graph);
  dmlc_free(m->signature);
  free(m->text);
  m->graph = NULL;
  m->signature = NULL;
  m->text = NULL;
}

/* A failed call on m's graph: at its place in the file when the message
 * has one, else as api_error prints it. */
static int placed_error(const dmlc_context *ctx, dmlc_status status, const model *m,
                        const char *what) {
  const char *message = dmlc_context_error(ctx);
  const size_t n = strlen(m->file);
  if (message && strncmp(message, m->file, n) == 0 && message[n] == ':') {
    diagnostic_print(stderr, message, m->file, m->text, m->length);
    return EXIT_ERROR;
  }
  return api_error(ctx, status, what);
}

/* Verifies m's graph; a failure is printed at its place in the file. */
static int model_verify(const dmlc_context *ctx, const model *m) {
  const dmlc_status status = dmlc_graph_verify(m->graph);
  if (status == DMLC_OK)
    return EXIT_OK;
  return source_error(ctx, status, m->file, m->text, m->length);
}

/* --shape NAME=DIMS, collected by a command: NAME a graph input's ONNX name
 * or a dim_param, DIMS sizes separated by ',' or 'x' ("8,1000", "8x1000";
 * "" or "()" for a scalar input). */
typedef struct shape_args {
  dmlc_onnx_shape *shapes;
  uint64_t (*dims)[DMLC_MAX_RANK];
  size_t count;
} shape_args;

static int shape_args_init(shape_args *sa, int argc) {
  sa->count = 0;
  sa->shapes = calloc((size_t)argc + 1, sizeof *sa->shapes);
  sa->dims = calloc((size_t)argc + 1, sizeof *sa->dims);
  return sa->shapes && sa->dims ? 0 : -1;
}

static void shape_args_free(shape_args *sa) {
  free(sa->shapes);
  free(sa->dims);
}

/* Parses one --shape value into sa; returns 0, or -1 after a usage message. */
static int shape_arg_add(shape_args *sa, char *arg, const char *usage) {
  char *eq = strrchr(arg, '=');
  if (!eq || eq == arg)
    return usage_error(usage, "--shape needs NAME=DIMS (e.g. N=8 or x=8,1000), not '%s'", arg), -1;
  *eq = '\0';
  const char *p = eq + 1;
  uint64_t *dims = sa->dims[sa->count];
  uint32_t rank = 0;
  if (strcmp(p, "()") == 0)
    p = "";
  while (*p) {
    if (rank == DMLC_MAX_RANK)
      return usage_error(usage, "--shape %s: more than %d dims", arg, DMLC_MAX_RANK), -1;
    char *end;
    errno = 0;
    const unsigned long long v = strtoull(p, &end, 10);
    if (end == p || *p == '-' || *p == '+' || errno || v == 0 || v > 0xffffffffull)
      return usage_error(usage, "--shape %s: '%s' is not a size from 1 to 4294967295", arg, p), -1;
    dims[rank++] = v;
    if (*end && *end != ',' && *end != 'x')
      return usage_error(usage, "--shape %s: sizes are separated by ',' or 'x', not '%c'", arg,
                         *end),
             -1;
    p = *end ? end + 1 : end;
    if (*end && !*p)
      return usage_error(usage, "--shape %s: a size is missing after '%c'", arg, *end), -1;
  }
  for (size_t i = 0; i < sa->count; i++)
    if (strcmp(sa->shapes[i].name, arg) == 0)
      return usage_error(usage, "--shape %s is given twice", arg), -1;
  sa->shapes[sa->count].name = arg;
  sa->shapes[sa->count].dims = dims;
  sa->shapes[sa->count].dim_count = rank;
  sa->count++;
  return 0;
}

/* An ONNX model: a path ending in .onnx, or bytes that start as a
 * ModelProto does (field 1, ir_version, a varint: 0x08), which IR text
 * never does (so '-' reads either). */
static int is_onnx(const char *path, const char *bytes, size_t length) {
  const size_t n = strlen(path);
  return (n >= 5 && strcmp(path + n - 5, ".onnx") == 0) ||
         (length > 0 && (unsigned char)bytes[0] == 0x08);
}

/* Reads FILE as IR text or an ONNX model (docs/onnx.md) into *m; returns
 * EXIT_OK, or an exit code after printing the error. */
static int load_model(dmlc_context *ctx, const char *path, const shape_args *sa, model *m) {
  memset(m, 0, sizeof *m);
  m->file = display_name(path);
  size_t length;
  char *bytes = read_text(path, &length);
  if (!bytes)
    return EXIT_ERROR;
  m->text = bytes;
  m->length = length;
  dmlc_status status;
  if (is_onnx(path, bytes, length)) {
    const dmlc_onnx_options options = {sa ? sa->shapes : NULL, sa ? sa->count : 0};
    status = dmlc_graph_import_onnx_with_options(ctx, bytes, length, m->file, &options, &m->graph,
                                                 &m->signature);
    free(m->text); /* binary: no line to show */
    m->text = NULL;
  } else if (sa && sa->count) {
    model_free(m);
    error("%s: --shape gives sizes to an ONNX model's symbolic dims; this is IR text, whose "
          "shapes are all fixed",
          m->file);
    return EXIT_USAGE;
  } else {
    status = dmlc_graph_parse(ctx, bytes, length, m->file, &m->graph);
  }
  if (status != DMLC_OK) {
    const int rc = m->text ? source_error(ctx, status, m->file, m->text, m->length)
                           : api_error(ctx, status, m->file);
    model_free(m);
    return rc;
  }
  return EXIT_OK;
}

/* ---- dmlc opt ---- */

static int list_passes(void) {
  printf("passes:\n");
  for (size_t i = 0; i < dmlc_pass_count(); i++)
    printf("  %-20s %s\n", dmlc_pass_name(i), dmlc_pass_summary(i));
  printf("default pipeline: %s\n", dmlc_default_pipeline());
  return EXIT_OK;
}

/* Whether name (len bytes) is an item of the comma-separated list. */
static int list_has(const char *list, const char *name, size_t len) {
  for (const char *p = list;;) {
    const size_t n = strcspn(p, ",");
    if (n == len && strncmp(p, name, n) == 0)
      return 1;
    if (!p[n])
      return 0;
    p += n + 1;
  }
}

/* Every item of list names a pass (or list is "all" where all is allowed);
 * otherwise a usage error naming the item and the closest pass name. */
static int check_pass_list(const char *list, const char *option, int allow_all) {
  if (allow_all && strcmp(list, "all") == 0)
    return EXIT_OK;
  const char *names[64];
  size_t count = 0;
  for (size_t i = 0; i < dmlc_pass_count() && count + 1 < sizeof names / sizeof names[0]; i++)
    names[count++] = dmlc_pass_name(i);
  names[count] = NULL;
  for (const char *p = list;;) {
    const size_t n = strcspn(p, ",");
    int known = 0;
    for (size_t i = 0; i < count; i++)
      known |= strlen(names[i]) == n && strncmp(p, names[i], n) == 0;
    if (!known && n > 0) {
      const char *best = suggest_closest(p, n, names);
      char hint[80] = "";
      if (best)
        snprintf(hint, sizeof hint, "; did you mean '%s'?", best);
      if (strcmp(option, "--passes") == 0)
        return usage_error(opt_usage,
                           "unknown pass '%.*s' in pipeline '%s'%s (dmlc opt --list-passes lists "
                           "them)",
                           (int)n, p, list, hint);
      return usage_error(opt_usage, "%s: unknown pass '%.*s'%s (dmlc opt --list-passes lists them)",
                         option, (int)n, p, hint);
    }
    if (!p[n])
      return EXIT_OK;
    p += n + 1;
  }
}

/* A --print-ir-after/-before name the pipeline does not run prints nothing:
 * say so. */
static void note_unrun_passes(const char *list, const char *option, const char *pipeline) {
  if (!list || strcmp(list, "all") == 0)
    return;
  for (const char *p = list;;) {
    const size_t n = strcspn(p, ",");
    if (n && !list_has(pipeline, p, n))
      fprintf(stderr,
              "dmlc: note: %s names '%.*s', which the pipeline '%s' does not run; nothing is "
              "printed for it\n",
              option, (int)n, p, pipeline);
    if (!p[n])
      return;
    p += n + 1;
  }
}

static void print_to_stderr(void *user, const char *text) {
  (void)user;
  fputs(text, stderr);
}

static int opt_with_shapes(dmlc_context *ctx, int argc, char **argv, shape_args *sa);

static int cmd_opt(dmlc_context *ctx, int argc, char **argv) {
  shape_args sa;
  if (shape_args_init(&sa, argc) != 0) {
    shape_args_free(&sa);
    error("out of memory");
    return EXIT_ERROR;
  }
  const int rc = opt_with_shapes(ctx, argc, argv, &sa);
  shape_args_free(&sa);
  return rc;
}

static int opt_with_shapes(dmlc_context *ctx, int argc, char **argv, shape_args *sa) {
  const char *input = NULL, *output = NULL, *passes = NULL;
  dmlc_pass_options options = {0};
  options.print = print_to_stderr;
  for (int i = 0; i < argc; i++) {
    const char *value;
    int m;
    if (is_help(argv[i])) {
      fputs(opt_usage, stdout);
      return EXIT_OK;
    } else if (strcmp(argv[i], "--list-passes") == 0) {
      return list_passes();
    } else if (strcmp(argv[i], "--print-ir-after-all") == 0) {
      options.print_ir_after = "all";
    } else if (strcmp(argv[i], "--print-ir-before-all") == 0) {
      options.print_ir_before = "all";
    } else if (strcmp(argv[i], "--verify-each") == 0) {
      options.verify_each = 1;
    } else if (strcmp(argv[i], "--pass-timing") == 0) {
      options.timing = 1;
    } else if ((m = option_value(argc, argv, &i, "--passes", NULL, &value)) != 0) {
      if (m < 0)
        return usage_error(opt_usage, "option '%s' needs a value", argv[i]);
      passes = strcmp(value, "default") == 0 ? dmlc_default_pipeline() : value;
    } else if ((m = option_value(argc, argv, &i, "--print-ir-after", NULL, &value)) != 0) {
      if (m < 0)
        return usage_error(opt_usage, "option '%s' needs a value", argv[i]);
      options.print_ir_after = value;
    } else if ((m = option_value(argc, argv, &i, "--print-ir-before", NULL, &value)) != 0) {
      if (m < 0)
        return usage_error(opt_usage, "option '%s' needs a value", argv[i]);
      options.print_ir_before = value;
    } else if ((m = option_value(argc, argv, &i, "--output", "-o", &value)) != 0) {
      if (m < 0)
        return usage_error(opt_usage, "option '%s' needs a value", argv[i]);
      output = value;
    } else if ((m = option_value(argc, argv, &i, "--shape", NULL, &value)) != 0) {
      if (m < 0)
        return usage_error(opt_usage, "option '%s' needs a value", argv[i]);
      if (shape_arg_add(sa, (char *)value, opt_usage) != 0)
        return EXIT_USAGE;
    } else if (argv[i][0] == '-' && argv[i][1] != '\0') {
      return unknown_option(opt_usage, argv[i], opt_options);
    } else if (input) {
      return usage_error(opt_usage, "more than one input file ('%s' and '%s')", input, argv[i]);
    } else {
      input = argv[i];
    }
  }
  if (!input)
    return usage_error(opt_usage, "no input file");
  if ((passes && check_pass_list(passes, "--passes", 0) != EXIT_OK) ||
      (options.print_ir_after &&
       check_pass_list(options.print_ir_after, "--print-ir-after", 1) != EXIT_OK) ||
      (options.print_ir_before &&
       check_pass_list(options.print_ir_before, "--print-ir-before", 1) != EXIT_OK))
    return EXIT_USAGE;
  /* The pass manager's flags with no --passes would do nothing: run the
   * default pipeline, as compile does, and say so. */
  if (!passes && (options.print_ir_after || options.print_ir_before || options.verify_each ||
                  options.timing)) {
    passes = dmlc_default_pipeline();
    fprintf(stderr, "dmlc: note: no --passes given: running the default pipeline (%s)\n", passes);
  }
  if (passes) {
    note_unrun_passes(options.print_ir_after, "--print-ir-after", passes);
    note_unrun_passes(options.print_ir_before, "--print-ir-before", passes);
  }
  if (output && strcmp(input, "-") != 0 && same_file(output, input)) {
    /* The printer writes no comments: rewriting a commented file in place
     * would drop them. */
    size_t length;
    char *text = read_text(input, &length);
    if (!text)
      return EXIT_ERROR;
    const int commented = strstr(text, "//") != NULL;
    free(text);
    if (commented) {
      error("-o '%s' is the input file; its comments would be lost (dmlc opt prints the graph "
            "without them): write to another file",
            output);
      return EXIT_ERROR;
    }
  }

  model m;
  int rc = load_model(ctx, input, sa, &m);
  if (rc != EXIT_OK)
    return rc;
  dmlc_graph *graph = m.graph;
  char *text = NULL;
  dmlc_status status = DMLC_OK;
  rc = model_verify(ctx, &m);
  if (rc == EXIT_OK && passes &&
      (status = dmlc_graph_run_passes(graph, passes, &options)) != DMLC_OK)
    rc = api_error(ctx, status, display_name(input));
  if (rc == EXIT_OK && (status = dmlc_graph_print(graph, &text)) != DMLC_OK)
    rc = api_error(ctx, status, "print");
  if (rc == EXIT_OK) {
    FILE *f = output ? fopen(output, "w") : stdout;
    if (!f) {
      error("%s: cannot create: %s", output, strerror(errno));
      rc = EXIT_ERROR;
    } else {
      const int failed = fputs(text, f) < 0 || (f == stdout ? fflush(f) : fclose(f)) != 0;
      if (failed) {
        error("%s: write error", output ? output : "<stdout>");
        rc = EXIT_ERROR;
      }
    }
  }
  dmlc_free(text);
  model_free(&m);
  return rc;
}

/* ---- text ---- */

/* Text is built with the library's string builder (ir/strbuf.c, compiled
 * into the tool too: it is plain C with no other part of the library). */
static void sb_spaces(dmlc_strbuf *sb, size_t n) {
  for (size_t i = 0; i < n; i++)
    dmlc_strbuf_append(sb, " ");
}

/* s right-aligned in width columns. */
static void sb_pad(dmlc_strbuf *sb, const char *s, size_t width) {
  const size_t n = strlen(s);
  sb_spaces(sb, n < width ? width - n : 0);
  dmlc_strbuf_append(sb, s);
}

/* ---- formatting elements ---- */

static void format_float(double v, int max_precision,
                         int (*round_trips)(const char *, const void *), const void *original,
                         char *buf, size_t size) {
  if (v != v) {
    snprintf(buf, size, "nan");
    return;
  }
  if (v == 1.0 / 0.0 || v == -1.0 / 0.0) {
    snprintf(buf, size, v > 0 ? "inf" : "-inf");
    return;
  }
  for (int precision = 1; precision <= max_precision; precision++) {
    snprintf(buf, size, "%.*g", precision, v);
    if (round_trips(buf, original))
      return;
  }
}

static int f16_round_trips(const char *s, const void *p) {
  uint16_t h;
  memcpy(&h, p, 2);
  return dmlc_float_to_half(strtof(s, NULL)) == h;
}

static int f32_round_trips(const char *s, const void *p) {
  float f;
  memcpy(&f, p, 4);
  const float g = strtof(s, NULL);
  return memcmp(&f, &g, 4) == 0;
}

static int f64_round_trips(const char *s, const void *p) {
  double d;
  memcpy(&d, p, 8);
  const double e = strtod(s, NULL);
  return memcmp(&d, &e, 8) == 0;
}

static void format_element(npy_dtype dtype, const unsigned char *p, char *buf, size_t size) {
  union {
    int8_t i8;
    uint8_t u8;
    int16_t i16;
    uint16_t u16;
    int32_t i32;
    uint32_t u32;
    int64_t i64;
    uint64_t u64;
    float f32;
    double f64;
  } v;
  memcpy(&v, p, npy_dtype_size(dtype));
  switch (dtype) {
  case NPY_DTYPE_BOOL:
    snprintf(buf, size, "%s", v.u8 ? "True" : "False");
    break;
  case NPY_DTYPE_I8:
    snprintf(buf, size, "%d", v.i8);
    break;
  case NPY_DTYPE_U8:
    snprintf(buf, size, "%u", v.u8);
    break;
  case NPY_DTYPE_I16:
    snprintf(buf, size, "%d", v.i16);
    break;
  case NPY_DTYPE_U16:
    snprintf(buf, size, "%u", v.u16);
    break;
  case NPY_DTYPE_I32:
    snprintf(buf, size, "%d", v.i32);
    break;
  case NPY_DTYPE_U32:
    snprintf(buf, size, "%u", v.u32);
    break;
  case NPY_DTYPE_I64:
    snprintf(buf, size, "%lld", (long long)v.i64);
    break;
  case NPY_DTYPE_U64:
    snprintf(buf, size, "%llu", (unsigned long long)v.u64);
    break;
  case NPY_DTYPE_F16:
    format_float(dmlc_half_to_float(v.u16), 5, f16_round_trips, p, buf, size);
    break;
  case NPY_DTYPE_F32:
    format_float(v.f32, 9, f32_round_trips, p, buf, size);
    break;
  case NPY_DTYPE_F64:
    format_float(v.f64, 17, f64_round_trips, p, buf, size);
    break;
  default:
    snprintf(buf, size, "?");
  }
}

/* "[2,3]" (sep ",") or "[8, 1]" (sep ", "), cut to fit size. */
static void format_list(const uint64_t *values, uint32_t count, const char *sep, char *buf,
                        size_t size) {
  int n = snprintf(buf, size, "[");
  for (uint32_t i = 0; i < count && n > 0 && (size_t)n < size; i++)
    n += snprintf(buf + n, size - (size_t)n, "%s%llu", i ? sep : "", (unsigned long long)values[i]);
  if (n > 0 && (size_t)n < size)
    snprintf(buf + n, size - (size_t)n, "]");
}

/* ---- printing tensors, nested like NumPy ---- */

typedef struct tensor_printer {
  const npy_array *a; /* packed, C order */
  uint64_t strides[NPY_MAX_DIMS];
  int summarize[NPY_MAX_DIMS]; /* dim i shows PRINT_EDGE items each side of "..." */
  int multiline;
  size_t width; /* of the widest element, when multiline */
  dmlc_strbuf *sb;
  size_t line_start; /* where sb's current line starts */
} tensor_printer;

static void new_line(tensor_printer *tp, size_t indent) {
  dmlc_strbuf_append(tp->sb, "\n");
  tp->line_start = tp->sb->len;
  sb_spaces(tp->sb, indent);
}

/* How many items of dim are shown, the "..." counted as one. */
static uint64_t shown_count(const tensor_printer *tp, uint32_t dim) {
  return tp->summarize[dim] ? 2 * PRINT_EDGE + 1 : tp->a->shape[dim];
}

/* The index in dim of the k-th shown item; -1 for the "...". */
static int64_t shown_index(const tensor_printer *tp, uint32_t dim, uint64_t k) {
  if (!tp->summarize[dim])
    return (int64_t)k;
  if (k < PRINT_EDGE)
    return (int64_t)k;
  if (k == PRINT_EDGE)
    return -1;
  return (int64_t)(tp->a->shape[dim] - (2 * PRINT_EDGE + 1 - k));
}

static void measure(tensor_printer *tp, uint32_t dim, uint64_t offset) {
  for (uint64_t k = 0; k < shown_count(tp, dim); k++) {
    const int64_t idx = shown_index(tp, dim, k);
    if (idx < 0)
      continue;
    const uint64_t off = offset + (uint64_t)idx * tp->strides[dim];
    if (dim + 1 < tp->a->ndim) {
      measure(tp, dim + 1, off);
    } else {
      char buf[64];
      format_element(tp->a->dtype,
                     (const unsigned char *)tp->a->data + off * npy_dtype_size(tp->a->dtype), buf,
                     sizeof buf);
      if (strlen(buf) > tp->width)
        tp->width = strlen(buf);
    }
  }
}

static void emit(tensor_printer *tp, uint32_t dim, uint64_t offset) {
  dmlc_strbuf *sb = tp->sb;
  const uint32_t ndim = tp->a->ndim;
  const int innermost = dim + 1 == ndim;
  dmlc_strbuf_append(sb, "[");
  for (uint64_t k = 0; k < shown_count(tp, dim); k++) {
    const int64_t idx = shown_index(tp, dim, k);
    char buf[64] = "";
    if (idx < 0)
      snprintf(buf, sizeof buf, "...");
    else if (innermost)
      format_element(tp->a->dtype,
                     (const unsigned char *)tp->a->data +
                         (offset + (uint64_t)idx * tp->strides[dim]) * npy_dtype_size(tp->a->dtype),
                     buf, sizeof buf);
    if (k > 0) {
      dmlc_strbuf_append(sb, ",");
      if (!tp->multiline) {
        dmlc_strbuf_append(sb, " ");
      } else if (innermost) {
        if (sb->len - tp->line_start + 2 + tp->width + 1 > PRINT_LINE_WIDTH)
          new_line(tp, dim + 1);
        else
          dmlc_strbuf_append(sb, " ");
      } else {
        for (uint32_t n = 1; n < ndim - 1 - dim; n++)
          dmlc_strbuf_append(sb, "\n");
        new_line(tp, dim + 1);
      }
    }
    if (innermost || idx < 0)
      sb_pad(sb, buf, tp->multiline && innermost ? tp->width : 0);
    else
      emit(tp, dim + 1, offset + (uint64_t)idx * tp->strides[dim]);
  }
  dmlc_strbuf_append(sb, "]");
}

/* Prints "name: f32[2,3] = [[...]]" for a packed C-order array. */
static void print_tensor(const char *name, const npy_array *a) {
  dmlc_strbuf sb = {0};
  char dims[NPY_MAX_DIMS * 22 + 8], head[sizeof dims + 128];
  format_list(a->shape, a->ndim, ",", dims, sizeof dims);
  snprintf(head, sizeof head, "%s: %s%s =", name, npy_dtype_name(a->dtype), dims);
  if (a->ndim == 0) {
    char buf[64];
    format_element(a->dtype, a->data, buf, sizeof buf);
    printf("%s %s\n", head, buf);
    return;
  }
  tensor_printer tp = {.a = a, .sb = &sb};
  npy_array_strides(a, tp.strides);
  for (uint32_t i = 0; i < a->ndim; i++)
    tp.summarize[i] = a->shape[i] > 2 * PRINT_EDGE + 1 &&
                      (a->shape[i] > PRINT_MAX_DIM || a->count > PRINT_MAX_TOTAL);
  emit(&tp, 0, 0);
  if (!sb.failed && strlen(head) + 1 + sb.len > PRINT_LINE_WIDTH) {
    sb.len = tp.line_start = 0;
    tp.multiline = 1;
    measure(&tp, 0, 0);
    emit(&tp, 0, 0);
  }
  char *text = dmlc_strbuf_finish(&sb);
  printf("%s%s%s\n", head, tp.multiline ? "\n" : " ", text ? text : "(out of memory)");
  free(text);
}

/* ---- tensors in an executable's layout ---- */

static void format_dims(const dmlc_tensor_info *info, char *buf, size_t size) {
  uint64_t sizes[DMLC_MAX_RANK];
  for (uint32_t i = 0; i < info->dimension_count; i++)
    sizes[i] = info->sizes[i];
  format_list(sizes, info->dimension_count, ",", buf, size);
}

/* Advances a row-major coordinate; returns 0 after the last one. */
static int next_coord(uint64_t *coord, const uint32_t *sizes, uint32_t rank) {
  for (uint32_t i = rank; i-- > 0;) {
    if (++coord[i] < sizes[i])
      return 1;
    coord[i] = 0;
  }
  return 0;
}

static uint64_t dot(const uint64_t *coord, const uint64_t *strides, uint32_t rank) {
  uint64_t off = 0;
  for (uint32_t i = 0; i < rank; i++)
    off += coord[i] * strides[i];
  return off;
}

/* A zeroed buffer for a binding: from 4 MiB on, on huge pages, as dmlc's
 * CPU tensors and NumPy's arrays are, so that `run --repeat` times kernels
 * on the memory they would read there. */
static void *alloc_buffer(const dmlc_tensor_info *info) {
  void *p = dmlc_host_alloc(info->total_size_bytes, info->alignment > 64 ? info->alignment : 64);
  if (p)
    memset(p, 0, (size_t)info->total_size_bytes);
  return p;
}

/* Reads the tensor laid out as info in buf into a packed C-order array. */
static int unpack_tensor(const dmlc_tensor_info *info, const void *buf, npy_array *out) {
  npy_dtype dtype;
  if (npy_dtype_from_dml(info->data_type, &dtype) != 0) {
    error("'%s' has data type %d, which dmlc cannot print or save", info->name,
          (int)info->data_type);
    return -1;
  }
  uint64_t shape[DMLC_MAX_RANK];
  for (uint32_t i = 0; i < info->dimension_count; i++)
    shape[i] = info->sizes[i];
  if (npy_array_init(out, dtype, info->dimension_count, shape) != DMLC_OK) {
    error("out of memory for '%s'", info->name);
    return -1;
  }
  const uint32_t es = npy_dtype_size(dtype);
  uint64_t coord[DMLC_MAX_RANK] = {0};
  uint64_t k = 0;
  do {
    memcpy((unsigned char *)out->data + k++ * es,
           (const unsigned char *)buf + dot(coord, info->strides, info->dimension_count) * es, es);
  } while (next_coord(coord, info->sizes, info->dimension_count));
  return 0;
}

/* Checks a's data type and shape against info and lays a into buf. Elements
 * that share storage (broadcast strides) must hold equal values. */
static int pack_input(const dmlc_tensor_info *info, const npy_array *a, const char *path,
                      void *buf) {
  char want[128], have[NPY_MAX_DIMS * 22 + 8];
  format_dims(info, want, sizeof want);
  format_list(a->shape, a->ndim, ",", have, sizeof have);
  const char *want_type = dmlc_data_type_name(info->data_type);
  if (a->dtype == NPY_DTYPE_BOOL) {
    error("%s: holds bool%s, which has no DirectML data type; input '%s' is %s%s", path, have,
          info->name, want_type ? want_type : "?", want);
    return -1;
  }
  int same_shape = a->ndim == info->dimension_count;
  for (uint32_t i = 0; same_shape && i < a->ndim; i++)
    same_shape = a->shape[i] == info->sizes[i];
  if (npy_dtype_to_dml(a->dtype) != info->data_type || !same_shape) {
    /* f64 is NumPy's default float: say how to make the file dmlc wants. */
    static const char *const numpy_names[NPY_DTYPE_COUNT] = {
        [NPY_DTYPE_BOOL] = "bool_",  [NPY_DTYPE_I8] = "int8",     [NPY_DTYPE_U8] = "uint8",
        [NPY_DTYPE_I16] = "int16",   [NPY_DTYPE_U16] = "uint16",  [NPY_DTYPE_I32] = "int32",
        [NPY_DTYPE_U32] = "uint32",  [NPY_DTYPE_I64] = "int64",   [NPY_DTYPE_U64] = "uint64",
        [NPY_DTYPE_F16] = "float16", [NPY_DTYPE_F32] = "float32", [NPY_DTYPE_F64] = "float64"};
    npy_dtype wanted;
    char hint[128] = "";
    if (a->dtype == NPY_DTYPE_F64 && npy_dtype_from_dml(info->data_type, &wanted) == 0 &&
        wanted != a->dtype)
      snprintf(hint, sizeof hint, " (NumPy's default float64; convert it: x.astype(np.%s))",
               numpy_names[wanted]);
    error("%s: holds %s%s, but input '%s' is %s%s%s", path, npy_dtype_name(a->dtype), have,
          info->name, want_type ? want_type : "?", want, hint);
    return -1;
  }
  const uint32_t es = npy_dtype_size(a->dtype);
  const uint64_t slots = info->total_size_bytes / es + 1;
  unsigned char *written = calloc((size_t)(slots / 8 + 1), 1);
  if (!written) {
    error("out of memory for input '%s'", info->name);
    return -1;
  }
  uint64_t src_strides[NPY_MAX_DIMS];
  npy_array_strides(a, src_strides);
  uint64_t coord[DMLC_MAX_RANK] = {0};
  int rc = 0;
  do {
    const uint64_t dst = dot(coord, info->strides, info->dimension_count);
    const unsigned char *src =
        (const unsigned char *)a->data + dot(coord, src_strides, a->ndim) * es;
    unsigned char *p = (unsigned char *)buf + dst * es;
    if (written[dst / 8] & (1u << (dst % 8))) {
      if (memcmp(p, src, es) != 0) {
        char strides[256], at[128];
        format_list(info->strides, info->dimension_count, ", ", strides, sizeof strides);
        format_list(coord, info->dimension_count, ",", at, sizeof at);
        error("%s: input '%s' has strides %s, so element %s shares storage with an earlier "
              "element, but holds a different value",
              path, info->name, strides, at);
        rc = -1;
        break;
      }
    } else {
      memcpy(p, src, es);
      written[dst / 8] |= (unsigned char)(1u << (dst % 8));
    }
  } while (next_coord(coord, info->sizes, info->dimension_count));
  free(written);
  return rc;
}

static int is_unsigned_type(const dmlc_tensor_info *info) {
  const DML_TENSOR_DATA_TYPE t = info->data_type;
  return t == DML_TENSOR_DATA_TYPE_UINT8 || t == DML_TENSOR_DATA_TYPE_UINT16 ||
         t == DML_TENSOR_DATA_TYPE_UINT32 || t == DML_TENSOR_DATA_TYPE_UINT64;
}

/* Deterministic data: small integers in [-4, 4] ([0, 4] when unsigned), so
 * that ties happen. Every element of the buffer is filled, padding too. */
static void generate_input(const dmlc_tensor_info *info, size_t index, void *buf) {
  npy_dtype dtype;
  if (npy_dtype_from_dml(info->data_type, &dtype) != 0)
    return;
  const uint32_t es = npy_dtype_size(dtype);
  const int is_unsigned = is_unsigned_type(info);
  uint64_t state = 0x9e3779b97f4a7c15ull * (index + 1);
  for (uint64_t e = 0; e < info->total_size_bytes / es; e++) {
    /* splitmix64 */
    uint64_t z = (state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    z ^= z >> 31;
    const int v = is_unsigned ? (int)(z % 5) : (int)(z % 9) - 4;
    unsigned char *p = (unsigned char *)buf + e * es;
    union {
      int8_t i8;
      int16_t i16;
      int32_t i32;
      int64_t i64;
      uint16_t f16;
      float f32;
      double f64;
    } u;
    switch (dtype) {
    case NPY_DTYPE_F16:
      u.f16 = dmlc_float_to_half((float)v);
      break;
    case NPY_DTYPE_F32:
      u.f32 = (float)v;
      break;
    case NPY_DTYPE_F64:
      u.f64 = v;
      break;
    case NPY_DTYPE_I8:
    case NPY_DTYPE_U8:
      u.i8 = (int8_t)v;
      break;
    case NPY_DTYPE_I16:
    case NPY_DTYPE_U16:
      u.i16 = (int16_t)v;
      break;
    case NPY_DTYPE_I32:
    case NPY_DTYPE_U32:
      u.i32 = v;
      break;
    default:
      u.i64 = v;
    }
    memcpy(p, &u, es);
  }
}

/* ---- dmlc run ---- */

typedef struct binding {
  const char *name; /* NULL: positional */
  const char *path;
} binding;

/* The tensor a binding's NAME names: the graph's name, or the ONNX name
 * (ios, NULL for IR text); tensor_count when none. */
static size_t find_tensor(const char *name, size_t name_len, const dmlc_tensor_info *infos,
                          const dmlc_onnx_io *ios, size_t tensor_count) {
  for (size_t i = 0; i < tensor_count; i++)
    if ((strlen(infos[i].name) == name_len && strncmp(infos[i].name, name, name_len) == 0) ||
        (ios && strlen(ios[i].onnx_name) == name_len &&
         strncmp(ios[i].onnx_name, name, name_len) == 0))
      return i;
  return tensor_count;
}

/* "NAME=path" binds by name when NAME names a tensor (its graph name or
 * its ONNX name) or has the shape of a name; otherwise the whole argument
 * is a path. */
static binding parse_binding(char *arg, const dmlc_tensor_info *infos, const dmlc_onnx_io *ios,
                             size_t tensor_count) {
  binding b = {NULL, arg};
  char *eq = strchr(arg, '=');
  if (!eq || eq == arg)
    return b;
  int is_name = find_tensor(arg, (size_t)(eq - arg), infos, ios, tensor_count) < tensor_count;
  if (!is_name) {
    is_name = (arg[0] >= 'A' && arg[0] <= 'Z') || (arg[0] >= 'a' && arg[0] <= 'z') || arg[0] == '_';
    for (const char *p = arg; is_name && p < eq; p++)
      is_name = (*p >= 'A' && *p <= 'Z') || (*p >= 'a' && *p <= 'z') || (*p >= '0' && *p <= '9') ||
                *p == '_' || *p == '.';
  }
  if (!is_name)
    return b;
  *eq = '\0';
  b.name = arg;
  b.path = eq + 1;
  return b;
}

/* Resolves bindings (unparsed: NAME=path or path) to one path per tensor
 * (paths[i], NULL if unbound). option is the flag ("input", "output",
 * "expect"), noun what it binds ("input", "output"). */
static int resolve_bindings(binding *bindings, int count, const dmlc_tensor_info *infos,
                            const dmlc_onnx_io *ios, size_t tensor_count, const char *option,
                            const char *noun, const char **paths) {
  size_t next = 0;
  for (int b = 0; b < count; b++) {
    size_t index = tensor_count;
    bindings[b] = parse_binding((char *)bindings[b].path, infos, ios, tensor_count);
    if (bindings[b].name) {
      index = find_tensor(bindings[b].name, strlen(bindings[b].name), infos, ios, tensor_count);
      if (index == tensor_count) {
        char names[512] = "";
        for (size_t i = 0; i < tensor_count; i++) {
          const size_t used = strlen(names);
          snprintf(names + used, sizeof names - used, "%s'%s'", i ? ", " : "",
                   ios ? ios[i].onnx_name : infos[i].name);
        }
        error("the graph has no %s named '%s' (its %ss: %s)", noun, bindings[b].name, noun,
              tensor_count ? names : "none");
        return -1;
      }
    } else {
      while (next < tensor_count && paths[next])
        next++;
      if (next == tensor_count) {
        error("too many --%s files: the graph has %zu %s%s", option, tensor_count, noun,
              tensor_count == 1 ? "" : "s");
        return -1;
      }
      index = next;
    }
    if (paths[index]) {
      error("%s '%s' is bound twice (--%s '%s' and '%s')", noun,
            ios ? ios[index].onnx_name : infos[index].name, option, paths[index], bindings[b].path);
      return -1;
    }
    paths[index] = bindings[b].path;
  }
  return 0;
}

static double now_us(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec / 1e3;
}

static int compare_doubles(const void *a, const void *b) {
  const double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

/* The unit for a time of us microseconds: us below 10 ms, ms below 1 s. */
typedef struct time_unit {
  double per_us;
  const char *name;
} time_unit;

static time_unit unit_for(double us) {
  if (us >= 1e6)
    return (time_unit){1e6, "s"};
  if (us >= 1e4)
    return (time_unit){1e3, "ms"};
  return (time_unit){1, "us"};
}

/* "12.3 us", "45.6 ms", "0.012 s": in the given unit, so that the times of
 * one line share it; below 1 in that unit with three decimals. */
static void format_us(double us, time_unit u, char *out, size_t cap) {
  const double v = us / u.per_us;
  snprintf(out, cap, v < 1 && v > 0 && u.per_us > 1 ? "%.3f %s" : "%.1f %s", v, u.name);
}

/* The wall time of dmlc_execute; with kernel_us >= 0 also the kernels' time
 * on the device (Vulkan timestamps), in the wall time's unit. */
static void print_time(double us, double kernel_us, dmlc_device device, long runs) {
  char wall[32], kernels[64] = "";
  const time_unit u = unit_for(us);
  format_us(us, u, wall, sizeof wall);
  if (kernel_us >= 0) {
    char k[32];
    format_us(kernel_us, u, k, sizeof k);
    snprintf(kernels, sizeof kernels, "; kernels %s on the device", k);
  }
  /* A single run is the executable's first: whatever the device does on
   * first use (faulting in fresh buffers, waking its threads) is in it. */
  if (runs == 1)
    printf("time: %s (device %s, 1 run, the first: includes first-use costs%s)\n", wall,
           dmlc_device_name(device), kernels);
  else
    printf("time: %s (device %s, median of %ld runs%s)\n", wall, dmlc_device_name(device), runs,
           kernels);
}

typedef struct run_options {
  const char *file;
  dmlc_device device;
  long threads; /* -1: not given */
  const char *dump;
  binding *inputs, *outputs, *expects; /* unparsed until the graph is known */
  int input_count, output_count, expect_count;
  shape_args shapes;
  long repeat;
  int quiet;
  int no_generate;
} run_options;

static int parse_device(const char *s, dmlc_device *out) {
  static const struct {
    const char *name;
    dmlc_device device;
  } devices[] = {{"default", DMLC_DEVICE_DEFAULT},
                 {"reference", DMLC_DEVICE_REFERENCE},
                 {"cpu", DMLC_DEVICE_CPU},
                 {"vulkan", DMLC_DEVICE_VULKAN}};
  for (size_t i = 0; i < sizeof devices / sizeof devices[0]; i++)
    if (strcasecmp(s, devices[i].name) == 0) {
      *out = devices[i].device;
      return 0;
    }
  return -1;
}

static const char *const dump_kinds[] = {"kernels", "llvm", "asm", "spirv"};

/* 0 when every item of the comma-separated list is a dump kind. */
static int check_dump_list(const char *list) {
  for (const char *p = list;;) {
    const size_t n = strcspn(p, ",");
    int known = 0;
    for (size_t k = 0; k < sizeof dump_kinds / sizeof dump_kinds[0]; k++)
      known |= strlen(dump_kinds[k]) == n && strncmp(p, dump_kinds[k], n) == 0;
    if (!known)
      return -1;
    if (p[n] == '\0')
      return 0;
    p += n + 1;
  }
}

/* Prints the requested dumps to stderr, in the order given. */
static int dump_executable(dmlc_context *ctx, const dmlc_executable *exe, const char *list) {
  for (const char *p = list;;) {
    const size_t n = strcspn(p, ",");
    char what[16];
    snprintf(what, sizeof what, "%.*s", (int)n, p);
    char *text = NULL;
    const dmlc_status status = dmlc_executable_dump(exe, what, &text);
    if (status != DMLC_OK)
      return api_error(ctx, status, "dump");
    fputs(text, stderr);
    dmlc_free(text);
    if (p[n] == '\0')
      return 0;
    p += n + 1;
  }
}

/* Returns -1 to go on, or an exit code (help, usage error). */
static int parse_run_options(int argc, char **argv, run_options *o) {
  for (int i = 0; i < argc; i++) {
    const char *value;
    int m;
    if (is_help(argv[i])) {
      fputs(run_usage, stdout);
      return EXIT_OK;
    } else if ((m = option_value(argc, argv, &i, "--device", NULL, &value)) != 0) {
      if (m < 0)
        return usage_error(run_usage, "option '%s' needs a value", argv[i]);
      if (parse_device(value, &o->device) != 0) {
        static const char *const names[] = {"default", "reference", "cpu", "vulkan", NULL};
        const char *best = suggest_closest(value, strlen(value), names);
        char hint[64] = "";
        if (best)
          snprintf(hint, sizeof hint, "; did you mean '%s'?", best);
        return usage_error(run_usage, "unknown device '%s'%s (default, reference, cpu, vulkan)",
                           value, hint);
      }
    } else if ((m = option_value(argc, argv, &i, "--input", NULL, &value)) != 0) {
      if (m < 0)
        return usage_error(run_usage, "option '%s' needs a value", argv[i]);
      o->inputs[o->input_count++].path = value;
    } else if ((m = option_value(argc, argv, &i, "--output", NULL, &value)) != 0) {
      if (m < 0)
        return usage_error(run_usage, "option '%s' needs a value", argv[i]);
      o->outputs[o->output_count++].path = value;
    } else if ((m = option_value(argc, argv, &i, "--expect", NULL, &value)) != 0) {
      if (m < 0)
        return usage_error(run_usage, "option '%s' needs a value", argv[i]);
      o->expects[o->expect_count++].path = value;
    } else if ((m = option_value(argc, argv, &i, "--shape", NULL, &value)) != 0) {
      if (m < 0)
        return usage_error(run_usage, "option '%s' needs a value", argv[i]);
      if (shape_arg_add(&o->shapes, (char *)value, run_usage) != 0)
        return EXIT_USAGE;
    } else if ((m = option_value(argc, argv, &i, "--repeat", NULL, &value)) != 0) {
      if (m < 0)
        return usage_error(run_usage, "option '%s' needs a value", argv[i]);
      char *end;
      errno = 0;
      o->repeat = strtol(value, &end, 10);
      if (*value == '\0' || *end != '\0' || errno || o->repeat < 1 || o->repeat > 1000000)
        return usage_error(run_usage, "--repeat needs a number from 1 to 1000000, not '%s'", value);
    } else if ((m = option_value(argc, argv, &i, "--threads", NULL, &value)) != 0) {
      if (m < 0)
        return usage_error(run_usage, "option '%s' needs a value", argv[i]);
      char *end;
      errno = 0;
      o->threads = strtol(value, &end, 10);
      if (*value == '\0' || *end != '\0' || errno || o->threads < 1 || o->threads > 4096)
        return usage_error(run_usage, "--threads needs a number from 1 to 4096, not '%s'", value);
    } else if ((m = option_value(argc, argv, &i, "--dump", NULL, &value)) != 0) {
      if (m < 0)
        return usage_error(run_usage, "option '%s' needs a value", argv[i]);
      if (check_dump_list(value) != 0)
        return usage_error(run_usage,
                           "--dump takes kernels, llvm, asm and spirv, comma-separated, not '%s'",
                           value);
      o->dump = value;
    } else if (strcmp(argv[i], "--quiet") == 0 || strcmp(argv[i], "-q") == 0) {
      o->quiet = 1;
    } else if (strcmp(argv[i], "--no-generate") == 0) {
      o->no_generate = 1;
    } else if (argv[i][0] == '-' && argv[i][1] != '\0') {
      return unknown_option(run_usage, argv[i], run_options_list);
    } else if (o->file) {
      return usage_error(run_usage, "more than one input file ('%s' and '%s')", o->file, argv[i]);
    } else {
      o->file = argv[i];
    }
  }
  if (!o->file)
    return usage_error(run_usage, "no input file");
  return -1;
}

typedef struct run_state {
  dmlc_executable *exe;
  const dmlc_onnx_signature *signature; /* NULL for IR text */
  size_t n_in, n_out;
  dmlc_tensor_info *infos; /* inputs, then outputs */
  dmlc_buffer *buffers;    /* inputs, then outputs */
  const char **paths;      /* inputs, then outputs; NULL if unbound */
  const char **expects;    /* per output: --expect's file, or NULL */
} run_state;

/* What the user calls tensor i (inputs, then outputs): the ONNX name for an
 * ONNX model, else the graph's. */
static const char *tensor_name(const run_state *s, size_t i) {
  if (!s->signature)
    return s->infos[i].name;
  return i < s->n_in ? s->signature->inputs[i].onnx_name
                     : s->signature->outputs[i - s->n_in].onnx_name;
}

/* ONNX's rank of tensor i: 0 for a scalar (which the graph holds as [1]);
 * the graph's rank for IR text. */
static uint32_t tensor_rank(const run_state *s, size_t i) {
  if (!s->signature)
    return s->infos[i].dimension_count;
  return i < s->n_in ? s->signature->inputs[i].rank : s->signature->outputs[i - s->n_in].rank;
}

/* Whether path can be written (created, or replaced) without writing it:
 * checked before anything runs, so that a run's result is not lost at the
 * end. Returns 0, or -1 after the message. */
static int check_writable(const char *path, const char *option) {
  struct stat st;
  if (stat(path, &st) == 0) {
    if (S_ISDIR(st.st_mode)) {
      error("--%s '%s' is a directory (checked before running)", option, path);
      return -1;
    }
    if (access(path, W_OK) != 0) {
      error("--%s '%s' cannot be written: %s (checked before running)", option, path,
            strerror(errno));
      return -1;
    }
    return 0;
  }
  if (errno != ENOENT) {
    error("--%s '%s' cannot be written: %s (checked before running)", option, path,
          strerror(errno));
    return -1;
  }
  /* A new file: its directory must exist and take new files. */
  const char *slash = strrchr(path, '/');
  char dir[4096];
  if (!slash)
    snprintf(dir, sizeof dir, ".");
  else if (slash == path)
    snprintf(dir, sizeof dir, "/");
  else
    snprintf(dir, sizeof dir, "%.*s", (int)(slash - path), path);
  if (stat(dir, &st) != 0 || !S_ISDIR(st.st_mode)) {
    error("--%s '%s' cannot be created: directory '%s': %s (checked before running)", option, path,
          dir, stat(dir, &st) != 0 ? strerror(errno) : "is not a directory");
    return -1;
  }
  if (access(dir, W_OK | X_OK) != 0) {
    error("--%s '%s' cannot be created in '%s': %s (checked before running)", option, path, dir,
          strerror(errno));
    return -1;
  }
  return 0;
}

/* Before running: every --output goes to a file of its own that is not
 * the graph's file, an --input's or an --expect's (it would overwrite it,
 * or compare the output with itself), and can be written. */
static int check_output_paths(const run_state *s, const run_options *o) {
  for (size_t i = 0; i < s->n_out; i++) {
    const char *path = s->paths[s->n_in + i];
    if (!path)
      continue;
    const char *name = tensor_name(s, s->n_in + i);
    for (size_t j = 0; j < i; j++)
      if (s->paths[s->n_in + j] && same_file(path, s->paths[s->n_in + j])) {
        error("--output '%s' is given to outputs '%s' and '%s'; each output needs a file of its "
              "own (the second would overwrite the first)",
              path, tensor_name(s, s->n_in + j), name);
        return -1;
      }
    for (size_t j = 0; j < s->n_in; j++)
      if (s->paths[j] && same_file(path, s->paths[j])) {
        error("--output '%s' (output '%s') is the file given to --input '%s'; writing it would "
              "overwrite the input",
              path, name, tensor_name(s, j));
        return -1;
      }
    for (size_t j = 0; j < s->n_out; j++)
      if (s->expects[j] && same_file(path, s->expects[j])) {
        error("--output '%s' (output '%s') is the file given to --expect for output '%s'; "
              "writing it would overwrite what it is compared with",
              path, name, tensor_name(s, s->n_in + j));
        return -1;
      }
    if (strcmp(o->file, "-") != 0 && same_file(path, o->file)) {
      error("--output '%s' (output '%s') is the graph's file; writing it would overwrite the "
            "graph",
            path, name);
      return -1;
    }
    if (check_writable(path, "output") != 0)
      return -1;
  }
  return 0;
}

/* Inputs given no --input get generated data, and a note on standard error
 * naming each (with -q too); with --no-generate they are an error. */
static int check_unbound_inputs(const run_state *s, const run_options *o) {
  size_t unbound = 0;
  char names[512] = "";
  for (size_t i = 0; i < s->n_in; i++) {
    if (s->paths[i])
      continue;
    const size_t used = strlen(names);
    snprintf(names + used, sizeof names - used, "%s'%s'", unbound ? ", " : "", tensor_name(s, i));
    unbound++;
    if (!o->no_generate) {
      char dims[128];
      format_dims(&s->infos[i], dims, sizeof dims);
      const char *type = dmlc_data_type_name(s->infos[i].data_type);
      fprintf(stderr,
              "dmlc: note: input '%s' (%s%s) has no --input; using generated data (integers "
              "in [%d, 4]; --no-generate makes this an error)\n",
              tensor_name(s, i), type ? type : "?", dims, is_unsigned_type(&s->infos[i]) ? 0 : -4);
    }
  }
  if (unbound && o->no_generate) {
    error("--no-generate: %s %s %s no --input (bind %s with --input NAME=FILE.npy)",
          unbound == 1 ? "input" : "inputs", names, unbound == 1 ? "has" : "have",
          unbound == 1 ? "it" : "each");
    return -1;
  }
  return 0;
}

static int prepare_buffers(dmlc_context *ctx, run_state *s, const run_options *o) {
  const size_t n = s->n_in + s->n_out;
  s->infos = calloc(n ? n : 1, sizeof *s->infos);
  s->buffers = calloc(n ? n : 1, sizeof *s->buffers);
  s->paths = calloc(n ? n : 1, sizeof *s->paths);
  s->expects = calloc(s->n_out ? s->n_out : 1, sizeof *s->expects);
  if (!s->infos || !s->buffers || !s->paths || !s->expects) {
    error("out of memory");
    return -1;
  }
  for (size_t i = 0; i < n; i++) {
    const dmlc_status status = i < s->n_in
                                   ? dmlc_executable_input_info(s->exe, i, &s->infos[i])
                                   : dmlc_executable_output_info(s->exe, i - s->n_in, &s->infos[i]);
    if (status != DMLC_OK) {
      error("cannot get the layout of %s %zu: %s", i < s->n_in ? "input" : "output",
            i < s->n_in ? i : i - s->n_in, dmlc_status_string(status));
      return -1;
    }
    s->buffers[i].data = alloc_buffer(&s->infos[i]);
    s->buffers[i].size_bytes = s->infos[i].total_size_bytes;
    if (!s->buffers[i].data) {
      error("out of memory for '%s' (%llu bytes)", s->infos[i].name,
            (unsigned long long)s->infos[i].total_size_bytes);
      return -1;
    }
  }
  const dmlc_onnx_io *in_ios = s->signature ? s->signature->inputs : NULL;
  const dmlc_onnx_io *out_ios = s->signature ? s->signature->outputs : NULL;
  if (resolve_bindings(o->inputs, o->input_count, s->infos, in_ios, s->n_in, "input", "input",
                       s->paths) != 0 ||
      resolve_bindings(o->outputs, o->output_count, s->infos + s->n_in, out_ios, s->n_out, "output",
                       "output", s->paths + s->n_in) != 0 ||
      resolve_bindings(o->expects, o->expect_count, s->infos + s->n_in, out_ios, s->n_out, "expect",
                       "output", s->expects) != 0)
    return -1;
  if (check_output_paths(s, o) != 0 || check_unbound_inputs(s, o) != 0)
    return -1;
  for (size_t i = 0; i < s->n_in; i++) {
    if (!s->paths[i]) {
      generate_input(&s->infos[i], i, s->buffers[i].data);
      continue;
    }
    npy_array a;
    char err[NPY_ERROR_MAX];
    if (tensor_file_read(ctx, s->paths[i], &a, err, sizeof err) != DMLC_OK) {
      error("%s", err);
      return -1;
    }
    /* An ONNX scalar (shape ()) is the graph's [1]. */
    if (a.ndim == 0 && tensor_rank(s, i) == 0) {
      a.ndim = 1;
      a.shape[0] = 1;
    }
    const int rc = pack_input(&s->infos[i], &a, s->paths[i], s->buffers[i].data);
    npy_array_free(&a);
    if (rc != 0)
      return -1;
  }
  return 0;
}

static double median_of(double *v, long n) {
  qsort(v, (size_t)n, sizeof *v, compare_doubles);
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* The sum of the last execute's kernel times on the device, in us; -1 when
 * the device has none (CPU, reference). */
static double kernel_time_us(const dmlc_executable *exe) {
  size_t count = 0;
  if (dmlc_executable_kernel_times(exe, NULL, 0, &count) != DMLC_OK || count == 0)
    return -1;
  double *ns = malloc(count * sizeof *ns);
  double sum = 0;
  if (!ns || dmlc_executable_kernel_times(exe, ns, count, &count) != DMLC_OK)
    sum = -1e3;
  for (size_t i = 0; ns && i < count; i++)
    sum += ns[i];
  free(ns);
  return sum / 1e3;
}

/* Same shape: equal dims, or one element each with either of rank 0 (ONNX's
 * scalar against a [1] from IR, or the other way). */
static int same_shape(const npy_array *a, const npy_array *b) {
  if (a->count == 1 && b->count == 1 && (a->ndim == 0 || b->ndim == 0))
    return 1;
  if (a->ndim != b->ndim)
    return 0;
  for (uint32_t k = 0; k < a->ndim; k++)
    if (a->shape[k] != b->shape[k])
      return 0;
  return 1;
}

/* --expect: compares output got (packed, C order) with the file at path bit
 * for bit. Returns 0 when equal, 1 when they differ, -1 when the file
 * cannot be read; the verdict ("expect: ..." when equal, "dmlc: error: ..."
 * when not) goes into verdict. */
static int check_expect(dmlc_context *ctx, const char *name, const npy_array *got, const char *path,
                        char *verdict) {
  npy_array want;
  char err[NPY_ERROR_MAX];
  if (tensor_file_read(ctx, path, &want, err, sizeof err) != DMLC_OK) {
    error("%s", err);
    return -1;
  }
  char got_dims[NPY_MAX_DIMS * 22 + 8], want_dims[NPY_MAX_DIMS * 22 + 8];
  format_list(got->shape, got->ndim, ",", got_dims, sizeof got_dims);
  format_list(want.shape, want.ndim, ",", want_dims, sizeof want_dims);
  int rc = 0;
  if (got->dtype != want.dtype || !same_shape(got, &want)) {
    snprintf(
        verdict, NPY_ERROR_MAX,
        "dmlc: error: output '%.200s' differs from %.300s: it is %s%.100s, the file holds %s%.100s",
        name, path, npy_dtype_name(got->dtype), got_dims, npy_dtype_name(want.dtype), want_dims);
    rc = 1;
  } else {
    const uint32_t es = npy_dtype_size(got->dtype);
    uint64_t strides[NPY_MAX_DIMS], coord[NPY_MAX_DIMS] = {0}, first = 0, count = 0;
    npy_array_strides(&want, strides);
    uint64_t first_coord[NPY_MAX_DIMS] = {0};
    const uint32_t rank = want.ndim;
    for (uint64_t k = 0; k < got->count; k++) {
      const unsigned char *g = (const unsigned char *)got->data + k * es;
      const unsigned char *w = (const unsigned char *)want.data + dot(coord, strides, rank) * es;
      if (memcmp(g, w, es) != 0 && count++ == 0) {
        first = k;
        memcpy(first_coord, coord, sizeof coord);
      }
      for (uint32_t d = rank; d-- > 0;) { /* next row-major coordinate */
        if (++coord[d] < want.shape[d])
          break;
        coord[d] = 0;
      }
    }
    if (count == 0) {
      snprintf(verdict, NPY_ERROR_MAX,
               "expect: output '%.200s' matches %.300s (%s%.100s, %llu element%s)", name, path,
               npy_dtype_name(got->dtype), got_dims, (unsigned long long)got->count,
               got->count == 1 ? "" : "s");
    } else {
      char at[NPY_MAX_DIMS * 22 + 8], g[64], w[64];
      format_list(first_coord, rank, ",", at, sizeof at);
      format_element(got->dtype, (const unsigned char *)got->data + first * es, g, sizeof g);
      format_element(want.dtype,
                     (const unsigned char *)want.data + dot(first_coord, strides, rank) * es, w,
                     sizeof w);
      snprintf(
          verdict, NPY_ERROR_MAX,
          "dmlc: error: output '%.200s' differs from %.300s at index %llu%s%.100s: %s, expected %s "
          "(%llu of %llu elements differ)",
          name, path, (unsigned long long)first, rank ? " " : "", rank ? at : "", g, w,
          (unsigned long long)count, (unsigned long long)got->count);
      rc = 1;
    }
  }
  npy_array_free(&want);
  return rc;
}

static int execute(dmlc_context *ctx, run_state *s, const run_options *o) {
  double *times = malloc(2 * (size_t)o->repeat * sizeof *times);
  if (!times) {
    error("out of memory");
    return -1;
  }
  double *kernel_times = times + o->repeat;
  for (long r = 0; r < o->repeat; r++) {
    const double start = now_us();
    const dmlc_status status =
        dmlc_execute(s->exe, s->buffers, s->n_in, s->buffers + s->n_in, s->n_out);
    times[r] = now_us() - start;
    if (status != DMLC_OK) {
      free(times);
      api_error(ctx, status, "execute");
      return -1;
    }
    kernel_times[r] = kernel_time_us(s->exe);
  }
  const double median = median_of(times, o->repeat);
  const double kernel_median = median_of(kernel_times, o->repeat);
  free(times);
  int rc = 0;
  size_t differ = 0;
  char(*verdicts)[NPY_ERROR_MAX] = calloc(s->n_out ? s->n_out : 1, sizeof *verdicts);
  if (!verdicts) {
    error("out of memory");
    return -1;
  }
  for (size_t i = 0; i < s->n_in + s->n_out && rc == 0; i++) {
    const int is_output = i >= s->n_in;
    const char *expect = is_output ? s->expects[i - s->n_in] : NULL;
    if (o->quiet && !(is_output && (s->paths[i] || expect)))
      continue;
    npy_array a;
    if (unpack_tensor(&s->infos[i], s->buffers[i].data, &a) != 0) {
      rc = -1;
      break;
    }
    if (tensor_rank(s, i) == 0) /* ONNX's shape () */
      a.ndim = 0;
    if (!o->quiet)
      print_tensor(tensor_name(s, i), &a);
    char err[NPY_ERROR_MAX];
    if (is_output && s->paths[i] &&
        tensor_file_write(ctx, s->paths[i], &a, tensor_name(s, i), err, sizeof err) != DMLC_OK) {
      error("%s", err);
      rc = -1;
    }
    if (rc == 0 && expect) {
      const int c = check_expect(ctx, tensor_name(s, i), &a, expect, verdicts[i - s->n_in]);
      if (c < 0)
        rc = -1;
      differ += c > 0;
    }
    npy_array_free(&a);
  }
  if (rc == 0) {
    print_time(median, kernel_median, dmlc_executable_device(s->exe), o->repeat);
    for (size_t j = 0; j < s->n_out; j++)
      if (s->expects[j]) {
        FILE *f = strncmp(verdicts[j], "expect: ", 8) == 0 ? stdout : stderr;
        fprintf(f, "%s\n", verdicts[j]);
      }
    if (differ)
      rc = -1;
  }
  free(verdicts);
  return rc;
}

static int cmd_run(dmlc_context *ctx, int argc, char **argv) {
  run_options o = {.device = DMLC_DEVICE_DEFAULT, .repeat = 1, .threads = -1};
  o.inputs = calloc((size_t)argc + 1, sizeof *o.inputs);
  o.outputs = calloc((size_t)argc + 1, sizeof *o.outputs);
  o.expects = calloc((size_t)argc + 1, sizeof *o.expects);
  int rc = EXIT_ERROR;
  if (shape_args_init(&o.shapes, argc) != 0 || !o.inputs || !o.outputs || !o.expects)
    error("out of memory");
  else
    rc = parse_run_options(argc, argv, &o);
  run_state s = {0};
  model m = {0};
  /* rc >= 0: help or a usage error, done; -1: go on. */
  const int loaded = rc < 0 && (rc = load_model(ctx, o.file, &o.shapes, &m)) == EXIT_OK;
  if (!loaded) {
    free(o.inputs);
    free(o.outputs);
    free(o.expects);
    shape_args_free(&o.shapes);
    return rc;
  }
  rc = EXIT_ERROR;
  dmlc_graph *graph = m.graph;
  s.signature = m.signature;
  dmlc_status status = DMLC_OK;
  if (graph && model_verify(ctx, &m) != EXIT_OK)
    ;
  else if (graph && o.threads > 0 &&
           (status = dmlc_context_set_num_threads(ctx, (uint32_t)o.threads)) != DMLC_OK)
    api_error(ctx, status, "threads");
  else if (graph && (status = dmlc_graph_compile(graph, o.device, &s.exe)) != DMLC_OK)
    placed_error(ctx, status, &m, "compile");
  else if (graph) {
    s.n_in = dmlc_executable_input_count(s.exe);
    s.n_out = dmlc_executable_output_count(s.exe);
    if ((!o.dump || dump_executable(ctx, s.exe, o.dump) == 0) &&
        prepare_buffers(ctx, &s, &o) == 0 && execute(ctx, &s, &o) == 0)
      rc = EXIT_OK;
  }
  for (size_t i = 0; s.buffers && i < s.n_in + s.n_out; i++)
    free(s.buffers[i].data);
  free(s.buffers);
  free(s.infos);
  free(s.paths);
  free(s.expects);
  dmlc_executable_destroy(s.exe);
  model_free(&m);
  free(o.inputs);
  free(o.outputs);
  free(o.expects);
  shape_args_free(&o.shapes);
  return rc;
}

/* ---- dmlc devices ---- */

/* Builds argmax over a f32[2] through the descriptor API (no parser
 * involved). */
static dmlc_status build_probe(dmlc_context *ctx, dmlc_graph **out) {
  static const UINT in_sizes[1] = {2}, out_sizes[1] = {1}, axes[1] = {0};
  const DML_BUFFER_TENSOR_DESC in_buffer = {
      DML_TENSOR_DATA_TYPE_FLOAT32, DML_TENSOR_FLAG_NONE, 1, in_sizes, NULL, 8, 0};
  const DML_BUFFER_TENSOR_DESC out_buffer = {
      DML_TENSOR_DATA_TYPE_UINT32, DML_TENSOR_FLAG_NONE, 1, out_sizes, NULL, 4, 0};
  const DML_TENSOR_DESC in_desc = {DML_TENSOR_TYPE_BUFFER, &in_buffer};
  const DML_TENSOR_DESC out_desc = {DML_TENSOR_TYPE_BUFFER, &out_buffer};
  const DML_ARGMAX_OPERATOR_DESC argmax = {&in_desc, &out_desc, 1, axes,
                                           DML_AXIS_DIRECTION_INCREASING};
  const DML_OPERATOR_DESC op = {DML_OPERATOR_ARGMAX, &argmax};
  dmlc_graph *g = NULL;
  dmlc_value x, y;
  dmlc_status status = dmlc_graph_create(ctx, "probe", &g);
  if (status == DMLC_OK)
    status = dmlc_graph_add_input(g, "x", &in_desc, &x);
  if (status == DMLC_OK)
    status = dmlc_graph_add_operator(g, &op, &x, 1, &y, 1);
  if (status == DMLC_OK)
    status = dmlc_graph_add_output(g, "y", y);
  if (status != DMLC_OK) {
    dmlc_graph_destroy(g);
    g = NULL;
  }
  *out = g;
  return status;
}

static int cmd_devices(dmlc_context *ctx, int argc, char **argv) {
  for (int i = 0; i < argc; i++) {
    if (is_help(argv[i])) {
      fputs(devices_usage, stdout);
      return EXIT_OK;
    }
    return usage_error(devices_usage, "unexpected argument '%s'", argv[i]);
  }
  dmlc_graph *probe;
  const dmlc_status status = build_probe(ctx, &probe);
  if (status != DMLC_OK)
    return api_error(ctx, status, "building the probe graph");
  static const dmlc_device devices[] = {DMLC_DEVICE_REFERENCE, DMLC_DEVICE_CPU, DMLC_DEVICE_VULKAN};
  for (size_t i = 0; i < sizeof devices / sizeof devices[0]; i++) {
    dmlc_executable *exe = NULL;
    const dmlc_status s = dmlc_graph_compile(probe, devices[i], &exe);
    char *description = NULL;
    if (devices[i] == DMLC_DEVICE_VULKAN) {
      /* Vulkan: a status line, then every physical device (also when none
       * is usable, if the loader can list them), indented. */
      if (s == DMLC_OK)
        printf("%-10s available\n", dmlc_device_name(devices[i]));
      else if (s == DMLC_ERROR_UNSUPPORTED)
        printf("%-10s not built\n", dmlc_device_name(devices[i]));
      else
        printf("%-10s not available: %s\n", dmlc_device_name(devices[i]), dmlc_context_error(ctx));
      if (s != DMLC_ERROR_UNSUPPORTED &&
          dmlc_device_describe(ctx, devices[i], &description) == DMLC_OK)
        for (const char *line = description; *line;) {
          const size_t n = strcspn(line, "\n");
          printf("  %.*s\n", (int)n, line);
          line += n + (line[n] == '\n');
        }
    } else if (s == DMLC_OK && devices[i] != DMLC_DEVICE_REFERENCE &&
               dmlc_device_describe(ctx, devices[i], &description) == DMLC_OK)
      printf("%-10s available (%s)\n", dmlc_device_name(devices[i]), description);
    else if (s == DMLC_OK)
      printf("%-10s available\n", dmlc_device_name(devices[i]));
    else if (s == DMLC_ERROR_UNSUPPORTED)
      printf("%-10s not built\n", dmlc_device_name(devices[i]));
    else
      printf("%-10s not available: %s\n", dmlc_device_name(devices[i]), dmlc_context_error(ctx));
    dmlc_free(description);
    dmlc_executable_destroy(exe);
  }
  dmlc_executable *exe = NULL;
  if (dmlc_graph_compile(probe, DMLC_DEVICE_DEFAULT, &exe) == DMLC_OK)
    printf("%-10s %s\n", "default", dmlc_device_name(dmlc_executable_device(exe)));
  else
    printf("%-10s none\n", "default");
  dmlc_executable_destroy(exe);
  dmlc_graph_destroy(probe);
  return EXIT_OK;
}

/* ---- dmlc compile ---- */

typedef struct emit_kind {
  const char *name, *extension;
} emit_kind;

static const emit_kind emit_kinds[] = {
    {"ir", ".dmlir"},
    {"llvm", ".ll"},
    {"bc", ".bc"},
    {"asm", ".s"},
    {"obj", ".o"},
    {"staticlib", ".a"},
    {"sharedlib", ".so"},
    {"header", ".h"},
    {"exe", ""},
    {"spirv", ".spv"},
    {"spirv-asm", ".spvasm"},
    {"metadata", ".json"},
    {"dot", ".dot"},
};
enum { NUM_EMIT_KINDS = sizeof emit_kinds / sizeof *emit_kinds };

static const emit_kind *kind_named(const char *name, size_t len) {
  for (size_t i = 0; i < NUM_EMIT_KINDS; i++)
    if (strlen(emit_kinds[i].name) == len && strncmp(emit_kinds[i].name, name, len) == 0)
      return &emit_kinds[i];
  return NULL;
}

/* The kind OUT's extension names; NULL if none does. */
static const emit_kind *kind_of_path(const char *path) {
  const char *slash = strrchr(path, '/');
  const char *dot = strrchr(slash ? slash + 1 : path, '.');
  for (size_t i = 0; i < NUM_EMIT_KINDS; i++)
    if (dot ? strcmp(dot, emit_kinds[i].extension) == 0 : !*emit_kinds[i].extension)
      return &emit_kinds[i];
  return NULL;
}

static int write_file(const char *path, const void *data, size_t size) {
  FILE *f = fopen(path, "wb");
  if (!f) {
    error("%s: cannot create: %s", path, strerror(errno));
    return EXIT_ERROR;
  }
  const int failed = fwrite(data, 1, size, f) != size;
  if (fclose(f) != 0 || failed) {
    error("%s: write error", path);
    remove(path);
    return EXIT_ERROR;
  }
  return EXIT_OK;
}

/* Runs argv (argv[0] looked up in PATH) and waits; 0 when it exits 0. */
static int run_program(char *const *argv) {
  fflush(NULL);
  const pid_t pid = fork();
  if (pid < 0)
    return -1;
  if (pid == 0) {
    execvp(argv[0], argv);
    fprintf(stderr, "dmlc: error: cannot run %s: %s\n", argv[0], strerror(errno));
    _exit(127);
  }
  int status = 0;
  while (waitpid(pid, &status, 0) < 0)
    if (errno != EINTR)
      return -1;
  return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : -1;
}

static int on_path(const char *program) {
  const char *path = getenv("PATH");
  char candidate[4096];
  for (const char *p = path ? path : "/usr/bin:/bin"; p && *p;) {
    const char *colon = strchr(p, ':');
    const int len = colon ? (int)(colon - p) : (int)strlen(p);
    snprintf(candidate, sizeof candidate, "%.*s/%s", len, p, program);
    if (access(candidate, X_OK) == 0)
      return 1;
    p = colon ? colon + 1 : NULL;
  }
  return 0;
}

/* $CC, or NULL when it is unset or empty. */
static const char *env_cc(void) {
  const char *cc = getenv("CC");
  return cc && *cc ? cc : NULL;
}

/* The C compiler docs/aot.md names, as the first arguments of argv: $CC
 * (default cc); for a target, $CC if set, else TARGET-gcc when on PATH, else
 * clang --target=TARGET. buf holds one of them. Returns how many. */
static int c_compiler(const char *target, char **argv, char buf[256]) {
  const char *cc = env_cc();
  int n = 0;
  if (cc) {
    argv[n++] = (char *)cc;
  } else if (!target) {
    argv[n++] = "cc";
  } else if (snprintf(buf, 256, "%s-gcc", target) < 256 && on_path(buf)) {
    argv[n++] = buf;
  } else {
    snprintf(buf, 256, "--target=%s", target);
    argv[n++] = "clang";
    argv[n++] = buf;
  }
  return n;
}

/* Links the object (size bytes at data) into a shared library at path with
 * the C compiler docs/aot.md names. */
static int link_shared(const char *path, const void *data, size_t size, const char *target) {
  char obj[] = "/tmp/dmlc-compile-XXXXXX.o";
  const int fd = mkstemps(obj, 2);
  if (fd < 0) {
    error("cannot create a temporary object: %s", strerror(errno));
    return EXIT_ERROR;
  }
  const int written = write(fd, data, size) == (ssize_t)size;
  close(fd);
  if (!written) {
    error("%s: write error", obj);
    remove(obj);
    return EXIT_ERROR;
  }
  char gcc[256];
  char *argv[8];
  int n = c_compiler(target, argv, gcc);
  argv[n++] = "-shared";
  argv[n++] = "-o";
  argv[n++] = (char *)path;
  argv[n++] = obj;
  argv[n] = NULL;
  const int rc = run_program(argv);
  remove(obj);
  if (rc != 0) {
    error("%s: linking the shared library with %s failed (set CC to pick the C compiler)", path,
          argv[0]);
    return EXIT_ERROR;
  }
  return EXIT_OK;
}

/* The driver dmlc's build compiled for the host (cmake/embed_object.cmake). */
extern const unsigned char dmlc_exe_driver_object[];
extern const unsigned long dmlc_exe_driver_object_size;

/* The exe kind: the object (obj_size bytes at obj), the graph's header, the
 * table compile_exe_table_source writes from it and the driver, in a
 * private temporary directory, compiled and linked into path by the C
 * compiler docs/aot.md names. The driver is the object the build compiled
 * when neither $CC nor a target is given (the program's link then compiles
 * only the table: examples/argmax.dmlir in 0.2 s instead of 0.7 on a Zen
 * 5), else its source, compiled by that compiler (a sanitizer in $CC then
 * reaches the driver too). Only the files' base names reach the
 * executable, so it does not depend on the directory's name. */
static int link_exe(dmlc_context *ctx, dmlc_graph *graph, const dmlc_aot_options *options,
                    const char *path, const void *obj, size_t obj_size, const char *input) {
  void *header = NULL;
  size_t header_size = 0;
  const dmlc_status status = dmlc_graph_emit(graph, "header", options, &header, &header_size);
  if (status != DMLC_OK)
    return api_error(ctx, status, display_name(input));
  const bool prebuilt = !options->target && !env_cc() && dmlc_exe_driver_object_size;
  char why[256];
  char *table = compile_exe_table_source(header, "graph.h", why, sizeof why);
  char *driver = table && !prebuilt ? compile_exe_driver_source() : NULL;
  if (!table || (!prebuilt && !driver)) {
    error("%s: %s", path, table ? "out of memory" : why);
    free(table);
    dmlc_free(header);
    return EXIT_ERROR;
  }
  const char *tmp = getenv("TMPDIR");
  char dir[4096], d_file[4200], t_file[4200], h_file[4200], o_file[4200];
  snprintf(dir, sizeof dir, "%s/dmlc-exe-XXXXXX", tmp && *tmp ? tmp : "/tmp");
  int rc = EXIT_ERROR;
  if (!mkdtemp(dir)) {
    error("%s: cannot create a temporary directory: %s", dir, strerror(errno));
  } else {
    snprintf(d_file, sizeof d_file, "%s/%s", dir, prebuilt ? "driver.o" : "main.c");
    snprintf(t_file, sizeof t_file, "%s/table.c", dir);
    snprintf(h_file, sizeof h_file, "%s/graph.h", dir);
    snprintf(o_file, sizeof o_file, "%s/graph.o", dir);
    if (write_file(h_file, header, header_size) == EXIT_OK &&
        write_file(t_file, table, strlen(table)) == EXIT_OK &&
        (prebuilt ? write_file(d_file, dmlc_exe_driver_object, dmlc_exe_driver_object_size)
                  : write_file(d_file, driver, strlen(driver))) == EXIT_OK &&
        write_file(o_file, obj, obj_size) == EXIT_OK) {
      char buf[256];
      char *argv[12];
      int n = c_compiler(options->target, argv, buf);
      if (!prebuilt)
        argv[n++] = "-O2";
      argv[n++] = "-pthread";
      argv[n++] = "-o";
      argv[n++] = (char *)path;
      argv[n++] = d_file;
      argv[n++] = t_file;
      argv[n++] = o_file;
      argv[n] = NULL;
      if (run_program(argv) == 0)
        rc = EXIT_OK;
      else
        error("%s: compiling and linking the program with %s failed (set CC to pick the C "
              "compiler)",
              path, argv[0]);
    }
    remove(d_file);
    remove(t_file);
    remove(h_file);
    remove(o_file);
    rmdir(dir);
  }
  free(driver);
  free(table);
  dmlc_free(header);
  return rc;
}

/* The spirv and spirv-asm kinds: one module (or its disassembly) per
 * kernel. One kernel: OUT itself when it is the only kind, else OUT plus
 * the extension. Several: STEM.kernelI plus the extension for each kernel
 * I, STEM being OUT (less the extension when it is the only kind). The
 * library says how many kernels there are only by refusing: plain "spirv"
 * on several kernels, and then "spirv:I" past the last one (both
 * DMLC_ERROR_INVALID_ARGUMENT; nothing else differs between the calls, so
 * after kernel 0 compiled that refusal can only mean the end). */
static int emit_spirv_files(dmlc_context *ctx, dmlc_graph *graph, const emit_kind *kind,
                            const dmlc_aot_options *options, const char *output, bool only_kind,
                            const char *input) {
  const size_t ext_len = strlen(kind->extension), out_len = strlen(output);
  size_t stem_len = out_len;
  if (only_kind && out_len > ext_len && strcmp(output + out_len - ext_len, kind->extension) == 0)
    stem_len -= ext_len;
  void *data = NULL;
  size_t size = 0;
  dmlc_status status = dmlc_graph_emit(graph, kind->name, options, &data, &size);
  if (status == DMLC_OK) {
    char *path = malloc(out_len + ext_len + 1);
    if (!path) {
      dmlc_free(data);
      return (error("out of memory"), EXIT_ERROR);
    }
    snprintf(path, out_len + ext_len + 1, "%s%s", output, only_kind ? "" : kind->extension);
    const int rc = write_file(path, data, size);
    free(path);
    dmlc_free(data);
    return rc;
  }
  if (status != DMLC_ERROR_INVALID_ARGUMENT)
    return api_error(ctx, status, display_name(input));
  /* Every module first, so that a kernel that fails leaves no files. */
  struct module {
    void *data;
    size_t size;
  } *modules = NULL;
  unsigned n = 0;
  int rc = EXIT_OK;
  for (;; n++) {
    char which[32];
    snprintf(which, sizeof which, "%s:%u", kind->name, n);
    status = dmlc_graph_emit(graph, which, options, &data, &size);
    if (status == DMLC_ERROR_INVALID_ARGUMENT && n > 0)
      break; /* past the last kernel */
    struct module *grown = status == DMLC_OK ? realloc(modules, (n + 1) * sizeof *modules) : NULL;
    if (status != DMLC_OK)
      rc = api_error(ctx, status, display_name(input));
    else if (!grown)
      rc = (error("out of memory"), EXIT_ERROR);
    if (rc != EXIT_OK) {
      dmlc_free(data);
      break;
    }
    modules = grown;
    modules[n] = (struct module){data, size};
  }
  const size_t path_size = stem_len + 32 + ext_len;
  char *path = rc == EXIT_OK ? malloc(path_size) : NULL;
  if (rc == EXIT_OK && !path)
    rc = (error("out of memory"), EXIT_ERROR);
  for (unsigned k = 0; k < n && rc == EXIT_OK; k++) {
    snprintf(path, path_size, "%.*s.kernel%u%s", (int)stem_len, output, k, kind->extension);
    rc = write_file(path, modules[k].data, modules[k].size);
  }
  free(path);
  for (unsigned k = 0; k < n; k++)
    dmlc_free(modules[k].data);
  free(modules);
  return rc;
}

static int compile_with_shapes(dmlc_context *ctx, int argc, char **argv, shape_args *sa);

static int cmd_compile(dmlc_context *ctx, int argc, char **argv) {
  shape_args sa;
  if (shape_args_init(&sa, argc) != 0) {
    shape_args_free(&sa);
    error("out of memory");
    return EXIT_ERROR;
  }
  const int rc = compile_with_shapes(ctx, argc, argv, &sa);
  shape_args_free(&sa);
  return rc;
}

static int compile_with_shapes(dmlc_context *ctx, int argc, char **argv, shape_args *sa) {
  const char *input = NULL, *output = NULL, *emit = NULL;
  dmlc_aot_options options = {NULL, NULL, NULL, NULL, 2};
  for (int i = 0; i < argc; i++) {
    const char *value;
    int m = 0;
    if (is_help(argv[i])) {
      fputs(compile_usage, stdout);
      return EXIT_OK;
    } else if (argv[i][0] == '-' && argv[i][1] == 'O' && argv[i][2] >= '0' && argv[i][2] <= '3' &&
               !argv[i][3]) {
      options.opt_level = argv[i][2] - '0';
    } else if ((m = option_value(argc, argv, &i, "--output", "-o", &value)) > 0) {
      output = value;
    } else if (!m && (m = option_value(argc, argv, &i, "--emit", NULL, &value)) > 0) {
      emit = value;
    } else if (!m && (m = option_value(argc, argv, &i, "--name", NULL, &value)) > 0) {
      options.name = value;
    } else if (!m && (m = option_value(argc, argv, &i, "--target", NULL, &value)) > 0) {
      options.target = value;
    } else if (!m && (m = option_value(argc, argv, &i, "--mcpu", NULL, &value)) > 0) {
      options.cpu = value;
    } else if (!m && (m = option_value(argc, argv, &i, "--mattr", NULL, &value)) > 0) {
      options.features = value;
    } else if (!m && (m = option_value(argc, argv, &i, "--shape", NULL, &value)) > 0) {
      if (shape_arg_add(sa, (char *)value, compile_usage) != 0)
        return EXIT_USAGE;
    } else if (m < 0) {
      return usage_error(compile_usage, "option '%s' needs a value", argv[i]);
    } else if (argv[i][0] == '-' && argv[i][1] != '\0') {
      return unknown_option(compile_usage, argv[i], compile_options);
    } else if (input) {
      return usage_error(compile_usage, "more than one input file ('%s' and '%s')", input, argv[i]);
    } else {
      input = argv[i];
    }
  }
  if (!input)
    return usage_error(compile_usage, "no input file");
  if (!output)
    return usage_error(compile_usage, "no output file (-o OUT)");
  const emit_kind *kinds[NUM_EMIT_KINDS];
  size_t nkinds = 0;
  if (emit) {
    for (const char *p = emit;;) {
      const char *comma = strchr(p, ',');
      const size_t len = comma ? (size_t)(comma - p) : strlen(p);
      const emit_kind *k = kind_named(p, len);
      if (!k)
        return usage_error(compile_usage, "unknown kind '%.*s' in --emit", (int)len, p);
      bool seen = false;
      for (size_t j = 0; j < nkinds; j++)
        seen |= kinds[j] == k;
      if (!seen)
        kinds[nkinds++] = k;
      if (!comma)
        break;
      p = comma + 1;
    }
  } else if (!(kinds[nkinds++] = kind_of_path(output))) {
    return usage_error(compile_usage, "cannot tell the kind from '%s': name it with --emit=KIND",
                       output);
  }
  model mod;
  int rc = load_model(ctx, input, sa, &mod);
  if (rc != EXIT_OK)
    return rc;
  if ((rc = model_verify(ctx, &mod)) != EXIT_OK) {
    model_free(&mod);
    return rc;
  }
  dmlc_graph *graph = mod.graph;
  for (size_t j = 0; j < nkinds && rc == EXIT_OK; j++) {
    void *data = NULL;
    size_t size = 0;
    if (strcmp(kinds[j]->name, "spirv") == 0 || strcmp(kinds[j]->name, "spirv-asm") == 0) {
      rc = emit_spirv_files(ctx, graph, kinds[j], &options, output, nkinds == 1, input);
      continue;
    }
    const bool shared = strcmp(kinds[j]->name, "sharedlib") == 0;
    const bool exe = strcmp(kinds[j]->name, "exe") == 0;
    const dmlc_status status =
        dmlc_graph_emit(graph, shared || exe ? "obj" : kinds[j]->name, &options, &data, &size);
    if (status != DMLC_OK) {
      rc = api_error(ctx, status, display_name(input));
      break;
    }
    char *path = NULL;
    if (nkinds == 1) {
      path = strdup(output);
    } else if ((path = malloc(strlen(output) + strlen(kinds[j]->extension) + 1))) {
      strcpy(path, output);
      strcat(path, kinds[j]->extension);
    }
    if (!path)
      rc = (error("out of memory"), EXIT_ERROR);
    else if (shared)
      rc = link_shared(path, data, size, options.target);
    else if (exe)
      rc = link_exe(ctx, graph, &options, path, data, size, input);
    else
      rc = write_file(path, data, size);
    free(path);
    dmlc_free(data);
  }
  model_free(&mod);
  return rc;
}

static int unknown_command(const char *command) {
  const char *best = suggest_closest(command, strlen(command), command_names);
  if (best)
    return usage_error(main_usage, "unknown command '%s'; did you mean '%s'?", command, best);
  return usage_error(main_usage, "unknown command '%s'", command);
}

/* dmlc help [COMMAND]: the same text as dmlc [COMMAND] --help. */
static int cmd_help(int argc, char **argv) {
  if (argc > 1)
    return usage_error(main_usage, "help takes at most one command, not %d arguments", argc);
  if (argc == 0 || strcmp(argv[0], "help") == 0) {
    fputs(main_usage, stdout);
    return EXIT_OK;
  }
  static const struct {
    const char *name;
    const char *usage;
  } commands[] = {{"opt", opt_usage},
                  {"run", run_usage},
                  {"devices", devices_usage},
                  {"compile", compile_usage}};
  for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
    if (strcmp(argv[0], commands[i].name) == 0) {
      fputs(commands[i].usage, stdout);
      return EXIT_OK;
    }
  return unknown_command(argv[0]);
}

int main(int argc, char **argv) {
  if (argc < 2)
    return usage_error(main_usage, "no command");
  const char *command = argv[1];
  if (is_help(command)) {
    fputs(main_usage, stdout);
    return EXIT_OK;
  }
  if (strcmp(command, "--version") == 0) {
    printf("dmlc %s\n", DMLC_VERSION_STRING);
    return EXIT_OK;
  }
  if (strcmp(command, "help") == 0)
    return cmd_help(argc - 2, argv + 2);
  int (*run)(dmlc_context *, int, char **) = NULL;
  if (strcmp(command, "compile") == 0)
    run = cmd_compile;
  else if (strcmp(command, "opt") == 0)
    run = cmd_opt;
  else if (strcmp(command, "run") == 0)
    run = cmd_run;
  else if (strcmp(command, "devices") == 0)
    run = cmd_devices;
  else
    return unknown_command(command);
  dmlc_context *ctx = NULL;
  const dmlc_status status = dmlc_context_create(&ctx);
  if (status != DMLC_OK) {
    error("cannot create a context: %s", dmlc_status_string(status));
    return EXIT_ERROR;
  }
  const int rc = run(ctx, argc - 2, argv + 2);
  dmlc_context_destroy(ctx);
  return rc;
}
