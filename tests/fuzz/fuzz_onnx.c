/* The ONNX reader: bytes as a ModelProto (dmlc_graph_import_onnx_with_options,
 * with a symbolic dim bound) and as a TensorProto (dmlc_onnx_tensor_parse).
 * Any bytes import or fail with a status and a message; an imported graph
 * verifies and, when small, runs on the reference device and the CPU with
 * the same results; a parsed tensor encodes and parses back unchanged. */
#include <stdlib.h>
#include <string.h>

#include "fuzz_common.h"

static void check_tensor(dmlc_context *ctx, const uint8_t *data, size_t size) {
  dmlc_onnx_tensor *t = NULL;
  dmlc_status st = dmlc_onnx_tensor_parse(ctx, data, size, "fuzz.pb", &t);
  fuzz_check_status(ctx, st, "dmlc_onnx_tensor_parse");
  if (st != DMLC_OK)
    return;
  FUZZ_CHECK(t->rank <= DMLC_MAX_RANK, "rank %u", t->rank);
  FUZZ_CHECK(t->size_bytes == t->element_count * dmlc_data_type_size(t->data_type), "size_bytes");
  void *bytes = NULL;
  size_t n = 0;
  st = dmlc_onnx_tensor_encode(ctx, t, &bytes, &n);
  FUZZ_CHECK(st == DMLC_OK, "encode: %s", dmlc_context_error(ctx));
  dmlc_onnx_tensor *u = NULL;
  st = dmlc_onnx_tensor_parse(ctx, bytes, n, "again.pb", &u);
  FUZZ_CHECK(st == DMLC_OK, "the encoding does not parse: %s", dmlc_context_error(ctx));
  FUZZ_CHECK(u->data_type == t->data_type && u->rank == t->rank && u->size_bytes == t->size_bytes &&
                 strcmp(u->name, t->name) == 0,
             "round trip changed the tensor");
  FUZZ_CHECK(memcmp(u->dims, t->dims, t->rank * sizeof t->dims[0]) == 0, "dims changed");
  FUZZ_CHECK(memcmp(u->data, t->data, t->size_bytes) == 0, "data changed");
  dmlc_free(u);
  dmlc_free(bytes);
  dmlc_free(t);
}

static void check_model(dmlc_context *ctx, const uint8_t *data, size_t size) {
  /* Binds the dim_param most tests use, so symbolic models get as far as
   * compiling; an unknown name is itself a clean error. */
  const uint64_t n = 3;
  const dmlc_onnx_shape shape = {"N", &n, 1};
  const dmlc_onnx_options options = {&shape, 1};
  dmlc_graph *g = NULL;
  dmlc_onnx_signature *sig = NULL;
  dmlc_status st =
      dmlc_graph_import_onnx_with_options(ctx, data, size, "fuzz.onnx", &options, &g, &sig);
  if (st != DMLC_OK) {
    fuzz_check_status(ctx, st, "dmlc_graph_import_onnx");
    st = dmlc_graph_import_onnx(ctx, data, size, "fuzz.onnx", &g);
    fuzz_check_status(ctx, st, "dmlc_graph_import_onnx");
  }
  if (st != DMLC_OK)
    return;
  if (sig)
    for (size_t i = 0; i < sig->input_count; i++)
      FUZZ_CHECK(sig->inputs[i].rank <= DMLC_MAX_RANK, "input rank %u", sig->inputs[i].rank);
  st = dmlc_graph_verify(g);
  FUZZ_CHECK(st == DMLC_OK, "an imported graph does not verify: %s", dmlc_context_error(ctx));
  uint64_t seed = size;
  for (size_t i = 0; i < size; i++)
    seed = seed * 131 + data[i];
  fuzz_compare_devices(ctx, g, seed, 1u << 20);
  dmlc_free(sig);
  dmlc_graph_destroy(g);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  dmlc_context *ctx = fuzz_context();
  check_model(ctx, data, size);
  check_tensor(ctx, data, size);
  return 0;
}
