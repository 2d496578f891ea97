/* A program around one ahead-of-time compiled graph, for tests/tool/compile.sh.
 * Built with -DMODEL=<name> -include <name>.h and linked with the object:
 *
 *   aot_driver MODE SEED IN0.npy ... OUT0.npy ...
 *
 * fills each input with generated values (small numbers, ties, and for
 * floats NaN, infinities and -0) in its layout, writes each as a packed .npy
 * (the graph's inputs must be packed), runs the graph with MODEL_run (MODE
 * seq), MODEL_run_parallel (par: tasks run in reverse order on this thread;
 * with AOT_EXPECT_PARALLEL=1 it fails unless parallel_for was called)
 * or MODEL_run_workspace (ws), and writes each output as a packed .npy (the
 * outputs must be packed). With -DM_HAS_VARIANTS (a multi-variant object),
 * AOT_VARIANT=v forces variant v and AOT_PRINT_VARIANT=1 prints the one in
 * use. Exit 0 when everything worked. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CAT2(a, b) a##b
#define CAT(a, b) CAT2(a, b)
#define M(x) CAT(MODEL, x)

/* -DM_HAS_VARIANTS for a multi-variant object (dmlc compile --mcpu=a,b). */
static const uint64_t input_bytes[] = M(_INPUT_BYTES), output_bytes[] = M(_OUTPUT_BYTES);

typedef struct io_desc {
  const char *dtype;
  uint32_t rank;
  const uint32_t *sizes;
} io_desc;

#define IO_DECL(kind, i) static const uint32_t kind##_sizes_##i[] = M(_##kind##i##_SIZES);
#define INPUT_DESC(i)                                                                              \
  { M(_INPUT##i##_DTYPE), M(_INPUT##i##_RANK), INPUT_sizes_##i }
#define OUTPUT_DESC(i)                                                                             \
  { M(_OUTPUT##i##_DTYPE), M(_OUTPUT##i##_RANK), OUTPUT_sizes_##i }

/* Up to two inputs and three outputs: what the tests' graphs have. */
_Static_assert(M(_NUM_INPUTS) <= 2 && M(_NUM_OUTPUTS) <= 3,
               "aot_driver.c handles up to two inputs and three outputs");
IO_DECL(INPUT, 0)
#if M(_NUM_INPUTS) > 1
IO_DECL(INPUT, 1)
#endif
IO_DECL(OUTPUT, 0)
#if M(_NUM_OUTPUTS) > 1
IO_DECL(OUTPUT, 1)
#endif
#if M(_NUM_OUTPUTS) > 2
IO_DECL(OUTPUT, 2)
#endif
static const io_desc inputs_desc[] = {INPUT_DESC(0)
#if M(_NUM_INPUTS) > 1
                                          ,
                                      INPUT_DESC(1)
#endif
};
static const io_desc outputs_desc[] = {OUTPUT_DESC(0)
#if M(_NUM_OUTPUTS) > 1
                                           ,
                                       OUTPUT_DESC(1)
#endif
#if M(_NUM_OUTPUTS) > 2
                                           ,
                                       OUTPUT_DESC(2)
#endif
};

static const char *npy_descr(const char *dtype) {
  static const char *const table[][2] = {{"bool", "|b1"}, {"f16", "<f2"}, {"f32", "<f4"},
                                         {"f64", "<f8"},  {"i8", "|i1"},  {"i16", "<i2"},
                                         {"i32", "<i4"},  {"i64", "<i8"}, {"u8", "|u1"},
                                         {"u16", "<u2"},  {"u32", "<u4"}, {"u64", "<u8"}};
  for (size_t i = 0; i < sizeof table / sizeof *table; i++)
    if (strcmp(table[i][0], dtype) == 0)
      return table[i][1];
  return NULL;
}

static uint64_t elements(const io_desc *d) {
  uint64_t n = 1;
  for (uint32_t i = 0; i < d->rank; i++)
    n *= d->sizes[i];
  return n;
}

static int write_npy(const char *path, const io_desc *d, const void *data) {
  const char *descr = npy_descr(d->dtype);
  if (!descr)
    return 1;
  char shape[256] = "";
  size_t len = 0;
  for (uint32_t i = 0; i < d->rank; i++)
    len += (size_t)snprintf(shape + len, sizeof shape - len, "%" PRIu32 ",%s", d->sizes[i],
                            i + 1 < d->rank ? " " : "");
  if (d->rank > 1)
    shape[len - 1] = '\0'; /* (2, 3) has no trailing comma; (2,) does */
  char header[512];
  int n = snprintf(header, sizeof header,
                   "{'descr': '%s', 'fortran_order': False, 'shape': (%s), }", descr, shape);
  while ((10 + n + 1) % 64)
    header[n++] = ' ';
  header[n++] = '\n';
  FILE *f = fopen(path, "wb");
  if (!f)
    return 1;
  const unsigned char magic[10] = {
      0x93, 'N', 'U', 'M', 'P', 'Y', 1, 0, (unsigned char)(n & 0xff), (unsigned char)(n >> 8)};
  const uint64_t bytes = elements(d) * (uint64_t)(descr[2] - '0');
  int failed = fwrite(magic, 1, 10, f) != 10 || fwrite(header, 1, (size_t)n, f) != (size_t)n ||
               fwrite(data, 1, bytes, f) != bytes;
  failed |= fclose(f) != 0;
  return failed;
}

static uint64_t next(uint64_t *s) {
  *s ^= *s >> 12;
  *s ^= *s << 25;
  *s ^= *s >> 27;
  return *s * UINT64_C(0x2545f4914f6cdd1d);
}

static void fill(const io_desc *d, unsigned char *p, uint64_t seed) {
  const int size = npy_descr(d->dtype)[2] - '0';
  const int is_float = d->dtype[0] == 'f';
  uint64_t s = seed * 2654435761u + 1;
  for (uint64_t i = 0; i < elements(d); i++, p += size) {
    const uint64_t r = next(&s);
    const int v = (int)(r % 5) - 2;
    const unsigned special = (unsigned)(r >> 40) % 12;
    if (!strcmp(d->dtype, "bool")) {
      *p = (unsigned char)(r & 1);
    } else if (is_float && size == 4) {
      float f = special == 0   ? __builtin_nanf("")
                : special == 1 ? -__builtin_inff()
                : special == 2 ? -0.0f
                               : (float)v;
      memcpy(p, &f, 4);
    } else if (is_float && size == 8) {
      double f = special == 0   ? __builtin_nan("")
                 : special == 1 ? __builtin_inf()
                 : special == 2 ? -0.0
                                : (double)v;
      memcpy(p, &f, 8);
    } else if (is_float) { /* f16: 0x7e00 NaN, 0xfc00 -inf, 0x8000 -0 */
      static const uint16_t small[5] = {0xc000, 0xbc00, 0x0000, 0x3c00, 0x4000};
      const uint16_t h = special == 0   ? 0x7e00
                         : special == 1 ? 0xfc00
                         : special == 2 ? 0x8000
                                        : small[v + 2];
      memcpy(p, &h, 2);
    } else {
      const int64_t w = v;
      memcpy(p, &w, (size_t)size); /* little-endian: the low bytes */
    }
  }
}

/* parallel_for: every task, in reverse order, on this thread. */
static void reverse_for(void *user, uint32_t count, void (*task)(void *arg, uint32_t i),
                        void *arg) {
  (*(uint32_t *)user)++;
  for (uint32_t i = count; i-- > 0;)
    task(arg, i);
}

int main(int argc, char **argv) {
  enum { NI = M(_NUM_INPUTS), NO = M(_NUM_OUTPUTS) };
  if (argc != 3 + NI + NO) {
    fprintf(stderr, "usage: %s seq|par|ws SEED IN.npy x%d OUT.npy x%d\n", argv[0], NI, NO);
    return 2;
  }
  const uint64_t seed = strtoull(argv[2], NULL, 10);
  const void *in[NI];
  void *out[NO];
  for (int i = 0; i < NI; i++) {
    unsigned char *b = calloc(1, input_bytes[i] + 64);
    fill(&inputs_desc[i], b, seed + (uint64_t)i);
    if (write_npy(argv[3 + i], &inputs_desc[i], b))
      return 1;
    in[i] = b;
  }
  for (int i = 0; i < NO; i++)
    out[i] = calloc(1, output_bytes[i] + 64);
  int rc;
  uint32_t calls = 0;
#ifdef M_HAS_VARIANTS
  /* AOT_VARIANT=v forces variant v of a multi-variant object. */
  const char *variant = getenv("AOT_VARIANT");
  if (variant && (rc = M(_select_variant)(atoi(variant))) != 0) {
    fprintf(stderr, "select_variant(%s) returned %d\n", variant, rc);
    return 1;
  }
  if (getenv("AOT_PRINT_VARIANT"))
    printf("variant %d\n", M(_variant)());
#endif
  if (!strcmp(argv[1], "seq")) {
    rc = M(_run)(in, out);
  } else if (!strcmp(argv[1], "par")) {
    rc = M(_run_parallel)(in, out, reverse_for, &calls);
    /* Kernels under 32 KiB of traffic run on the calling thread. */
    const char *expect = getenv("AOT_EXPECT_PARALLEL");
    if (rc == 0 && expect && *expect == '1' && calls == 0) {
      fprintf(stderr, "run_parallel never called parallel_for\n");
      return 1;
    }
  } else {
    void *ws = aligned_alloc(64, M(_WORKSPACE_BYTES) + 64);
    rc = M(_run_workspace)(in, out, ws, NULL, NULL);
    free(ws);
  }
  if (rc != 0) {
    fprintf(stderr, "run returned %d\n", rc);
    return 1;
  }
  for (int i = 0; i < NO; i++)
    if (write_npy(argv[3 + NI + i], &outputs_desc[i], out[i]))
      return 1;
  for (int i = 0; i < NI; i++)
    free((void *)in[i]);
  for (int i = 0; i < NO; i++)
    free(out[i]);
  return 0;
}
