#include "ir/diag.h"

#include <stdarg.h>
#include <stdio.h>

dmlc_status dmlc_diag_set(dmlc_diag *diag, dmlc_status status, const char *fmt, ...) {
  if (diag) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(diag->message, sizeof diag->message, fmt, ap);
    va_end(ap);
    diag->status = status;
  }
  return status;
}

void dmlc_diag_clear(dmlc_diag *diag) {
  diag->status = DMLC_OK;
  diag->message[0] = '\0';
}
