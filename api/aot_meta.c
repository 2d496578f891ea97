/* The descriptive kinds of dmlc_graph_emit: metadata (JSON) and dot. */
#include "api/aot_internal.h"

dmlc_status dmlc_aot_metadata(const dmlc_aot_graph *g, char **out, dmlc_diag *diag) {
  (void)g;
  *out = NULL;
  return dmlc_diag_set(diag, DMLC_ERROR_UNSUPPORTED, "output kind 'metadata' is not built yet");
}

dmlc_status dmlc_aot_dot(const dmlc_aot_graph *g, char **out, dmlc_diag *diag) {
  (void)g;
  *out = NULL;
  return dmlc_diag_set(diag, DMLC_ERROR_UNSUPPORTED, "output kind 'dot' is not built yet");
}
