#include "cts.h"

void cts_add_tensor_cases(Suite *s, dmlc_device device) {
  (void)s;
  (void)device;
}
