/* Error reporting shared by every layer: a status plus a message, kept by
 * whoever owns the diag (the context, for API calls). */
#ifndef DMLC_IR_DIAG_H
#define DMLC_IR_DIAG_H

#include "dmlc/dmlc.h"

#define DMLC_DIAG_MAX 1024

/* "s" unless n is 1: "1 input", "2 inputs". */
#define DMLC_PLURAL(n) ((n) == 1 ? "" : "s")

typedef struct dmlc_diag {
  dmlc_status status;
  char message[DMLC_DIAG_MAX];
} dmlc_diag;

/* Records the error in diag (if non-NULL) and returns status. */
dmlc_status dmlc_diag_set(dmlc_diag *diag, dmlc_status status, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
void dmlc_diag_clear(dmlc_diag *diag);

#define DMLC_RETURN_IF_ERROR(expr)                                                                 \
  do {                                                                                             \
    dmlc_status dmlc_status_ = (expr);                                                             \
    if (dmlc_status_ != DMLC_OK)                                                                   \
      return dmlc_status_;                                                                         \
  } while (0)

#endif
