/* Calls a graph compiled ahead of time (dmlc_add_library in CMakeLists.txt,
 * or dmlc compile in the Makefile): hardmax over axes {0, 2} of the seed
 * page's f32[2,2,2] tensor. Prints "0 0 0 1 0 1 0 0". The program needs no
 * libdmlc: hardmax.o depends on libc alone. */
#include <stdio.h>

#include "hardmax.h"

/* The header describes the compiled graph; this program was written for
 * one f32[2,2,2] input and output, packed. */
_Static_assert(hardmax_NUM_INPUTS == 1 && hardmax_NUM_OUTPUTS == 1, "one input, one output");
_Static_assert(hardmax_INPUT0_BYTES == 8 * sizeof(float), "input is f32[2,2,2], packed");
_Static_assert(hardmax_OUTPUT0_BYTES == 8 * sizeof(float), "output is f32[2,2,2], packed");

int main(void) {
  const float x[8] = {12, 0, -101, 11, 3, 234, 0, -101};
  float y[8];
  const void *const inputs[1] = {x};
  void *const outputs[1] = {y};
  const int status = hardmax_run(inputs, outputs);
  if (status != 0) {
    fprintf(stderr, "hardmax_run returned %d\n", status);
    return 1;
  }
  for (int i = 0; i < 8; i++)
    printf(i ? " %g" : "%g", y[i]);
  printf("\n");
  return 0;
}
