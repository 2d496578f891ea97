/* clang's diagnostic format for the library's located messages. */
#include "tools/diagnostic.h"

#include <stdlib.h>
#include <string.h>

/* Reads "LINE:COL: " at *p; advances past it. */
static int parse_place(const char **p, unsigned long *line, unsigned long *col) {
  char *end;
  if (**p < '0' || **p > '9')
    return 0;
  *line = strtoul(*p, &end, 10);
  if (*end != ':' || end[1] < '0' || end[1] > '9')
    return 0;
  *col = strtoul(end + 1, &end, 10);
  if (end[0] != ':' || end[1] != ' ' || *line == 0 || *col == 0)
    return 0;
  *p = end + 2;
  return 1;
}

void diagnostic_print(FILE *out, const char *message, const char *file, const char *text,
                      size_t length) {
  const size_t n = file ? strlen(file) : 0;
  unsigned long line = 0, col = 0;
  const char *rest = message + n + 1;
  if (!file || strncmp(message, file, n) != 0 || message[n] != ':' ||
      !parse_place(&rest, &line, &col)) {
    fprintf(out, "dmlc: error: %s\n", message);
    return;
  }
  fprintf(out, "%s:%lu:%lu: error: %s\n", file, line, col, rest);
  if (!text)
    return;
  /* The line, then a caret under the column (tabs kept, so it lines up). */
  size_t start = 0;
  for (unsigned long l = 1; l < line && start < length; start++)
    if (text[start] == '\n')
      l++;
  if (start >= length && line > 1)
    return;
  size_t end = start;
  while (end < length && text[end] != '\n' && text[end] != '\r')
    end++;
  fprintf(out, "%.*s\n", (int)(end - start), text + start);
  for (size_t i = 0; i + 1 < col && start + i < end; i++)
    fputc(text[start + i] == '\t' ? '\t' : ' ', out);
  fputs("^\n", out);
}
