/* The IR text parser: any bytes parse or fail with a located message; a
 * graph that parses prints, and its text parses back to the same text
 * (DESIGN.md: print(parse(print(g))) == print(g)); verifying it returns a
 * status. */
#include <stdlib.h>
#include <string.h>

#include "fuzz_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  dmlc_context *ctx = fuzz_context();
  dmlc_graph *g = NULL;
  dmlc_status st = dmlc_graph_parse(ctx, (const char *)data, size, "fuzz.dmlir", &g);
  fuzz_check_status(ctx, st, "dmlc_graph_parse");
  if (st != DMLC_OK) {
    FUZZ_CHECK(!g, "a failed parse returned a graph");
    FUZZ_CHECK(strncmp(dmlc_context_error(ctx), "fuzz.dmlir", 10) == 0,
               "the message does not name the file: %s", dmlc_context_error(ctx));
    return 0;
  }
  char *text = NULL;
  st = dmlc_graph_print(g, &text);
  FUZZ_CHECK(st == DMLC_OK, "print: %s", dmlc_context_error(ctx));
  dmlc_graph *again = NULL;
  st = dmlc_graph_parse(ctx, text, strlen(text), "printed.dmlir", &again);
  FUZZ_CHECK(st == DMLC_OK, "printed text does not parse: %s\n%s", dmlc_context_error(ctx), text);
  char *text2 = NULL;
  FUZZ_CHECK(dmlc_graph_print(again, &text2) == DMLC_OK, "print");
  FUZZ_CHECK(strcmp(text, text2) == 0, "print(parse(print(g))) != print(g):\n%s\n---\n%s", text,
             text2);
  st = dmlc_graph_verify(g);
  fuzz_check_status(ctx, st, "dmlc_graph_verify");
  dmlc_free(text2);
  dmlc_free(text);
  dmlc_graph_destroy(again);
  dmlc_graph_destroy(g);
  return 0;
}
