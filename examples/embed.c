/* A complete embedding program: argmax over the columns of the seed page's
 * 3x3 matrix, through DirectML's descriptor structs. Prints "1 2 1". */
#include <stdio.h>

#include <dmlc/dmlc.h>

int main(void) {
  UINT sizes[2] = {3, 3}, out_sizes[2] = {1, 3}, axes[1] = {0};
  DML_BUFFER_TENSOR_DESC in = {
      DML_TENSOR_DATA_TYPE_FLOAT32, DML_TENSOR_FLAG_NONE, 2, sizes, NULL, 36, 0};
  DML_BUFFER_TENSOR_DESC out = {
      DML_TENSOR_DATA_TYPE_UINT32, DML_TENSOR_FLAG_NONE, 2, out_sizes, NULL, 12, 0};
  DML_TENSOR_DESC in_t = {DML_TENSOR_TYPE_BUFFER, &in}, out_t = {DML_TENSOR_TYPE_BUFFER, &out};
  DML_ARGMAX_OPERATOR_DESC argmax = {&in_t, &out_t, 1, axes, DML_AXIS_DIRECTION_INCREASING};
  DML_OPERATOR_DESC op = {DML_OPERATOR_ARGMAX, &argmax};

  dmlc_context *ctx;
  if (dmlc_context_create(&ctx) != DMLC_OK)
    return 1;
  dmlc_executable *exe;
  if (dmlc_operator_compile(ctx, &op, DMLC_DEVICE_DEFAULT, &exe) != DMLC_OK) {
    fprintf(stderr, "compile: %s\n", dmlc_context_error(ctx));
    dmlc_context_destroy(ctx);
    return 1;
  }
  float x[9] = {1, 2, 3, 3, 0, 4, 2, 5, 2};
  uint32_t y[3];
  dmlc_buffer ins[1] = {{x, sizeof x}}, outs[1] = {{y, sizeof y}};
  const dmlc_status status = dmlc_execute(exe, ins, 1, outs, 1);
  if (status != DMLC_OK)
    fprintf(stderr, "execute: %s\n", dmlc_context_error(ctx));
  else
    printf("%u %u %u\n", y[0], y[1], y[2]);
  dmlc_executable_destroy(exe);
  dmlc_context_destroy(ctx);
  return status == DMLC_OK ? 0 : 1;
}
