/* parse -> verify -> compile -> execute: every graph that verifies is
 * compiled for the reference device and the CPU (the default pipeline, the
 * JIT, the thread pool) and, when its buffers are small, executed on both
 * with the same inputs; every output byte must match the reference. */
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
  }
  dmlc_graph_destroy(g);
  return 0;
}
