/* Placeholder until the pass lands: reports itself unsupported. */
#include "passes/passes.h"

dmlc_status dmlc_pass_fuse(dmlc_ir_graph **g, dmlc_diag *diag) {
  (void)g;
  return dmlc_diag_set(diag, DMLC_ERROR_UNSUPPORTED, "pass 'fuse' is not built yet");
}
