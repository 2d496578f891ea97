/* parse -> verify -> compile -> execute: every graph that verifies is
 * compiled for the reference device and the CPU (the default pipeline, the
 * JIT, the thread pool) and, when its buffers are small, executed on both
 * with the same inputs; every output byte must match the reference. It is
 * also compiled ahead of time (dmlc_graph_emit) into one of the text kinds,
 * picked by the input, which must succeed or fail with a status. */
#include <stdlib.h>
#include <string.h>

#include "fuzz_common.h"

/* Up to 1 MiB of buffers per graph: big enough that kernels split across
 * the pool's threads, small enough for thousands of runs a minute. */
#define FUZZ_MAX_BYTES (1u << 20)

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  dmlc_context *ctx = fuzz_context();
  dmlc_graph *g = NULL;
  dmlc_status st = dmlc_graph_parse(ctx, (const char *)data, size, "fuzz.dmlir", &g);
  fuzz_check_status(ctx, st, "dmlc_graph_parse");
  if (st != DMLC_OK)
    return 0;
  st = dmlc_graph_verify(g);
  fuzz_check_status(ctx, st, "dmlc_graph_verify");
  if (st == DMLC_OK) {
    uint64_t seed = size;
    for (size_t i = 0; i < size; i++)
      seed = seed * 131 + data[i];
    fuzz_compare_devices(ctx, g, seed, FUZZ_MAX_BYTES);
    static const char *const kinds[] = {"ir", "llvm", "header", "metadata", "dot", "spirv-asm"};
    const char *kind = kinds[seed % (sizeof kinds / sizeof kinds[0])];
    void *out = NULL;
    size_t out_size = 0;
    st = dmlc_graph_emit(g, kind, NULL, &out, &out_size);
    fuzz_check_status(ctx, st, "dmlc_graph_emit");
    FUZZ_CHECK(st != DMLC_OK || (out && ((const char *)out)[out_size] == '\0'),
               "emit %s: no NUL-terminated output", kind);
    dmlc_free(out);
  }
  dmlc_graph_destroy(g);
  return 0;
}
