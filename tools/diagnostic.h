/* Errors at a place in a file, printed as clang and LLVM print them (and as
 * editors parse them): "FILE:LINE:COL: error: MESSAGE", then the source
 * line and a caret under the column. */
#ifndef DMLC_TOOLS_DIAGNOSTIC_H
#define DMLC_TOOLS_DIAGNOSTIC_H

#include <stddef.h>
#include <stdio.h>

/* Prints message, one of the library's, to out. When it starts with
 * "FILE:LINE:COL: " for file (the name the library was given), it is
 * printed at that place, followed by that line of text (length bytes; NULL
 * when not at hand) and a caret; otherwise as "dmlc: error: MESSAGE". */
void diagnostic_print(FILE *out, const char *message, const char *file, const char *text,
                      size_t length);

#endif
