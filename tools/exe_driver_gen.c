/* Writes the driver of dmlc compile --emit=exe's programs (the part that is
 * the same for every graph: tools/compile_exe.h) to the file argv[1]. The
 * build compiles it once for the host, and dmlc carries the object
 * (cmake/embed_object.cmake), so that a program's link compiles only the
 * graph's table. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tools/compile_exe.h"

int main(int argc, char **argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: %s OUT.c\n", argc > 0 ? argv[0] : "exe_driver_gen");
    return 2;
  }
  char *text = compile_exe_driver_source();
  if (!text) {
    fprintf(stderr, "%s: out of memory\n", argv[0]);
    return 1;
  }
  FILE *f = fopen(argv[1], "wb");
  const size_t n = strlen(text);
  const int ok = f && fwrite(text, 1, n, f) == n;
  if (f && fclose(f) != 0) {
    free(text);
    fprintf(stderr, "%s: %s: write error\n", argv[0], argv[1]);
    return 1;
  }
  free(text);
  if (!ok) {
    fprintf(stderr, "%s: %s: cannot write\n", argv[0], argv[1]);
    return 1;
  }
  return 0;
}
