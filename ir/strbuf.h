/* A growable text buffer: the one string builder every layer uses for dumps,
 * keys and printed IR. Appends never fail loudly: an allocation failure sets
 * `failed` and later appends do nothing, so a caller checks once at the end
 * (dmlc_strbuf_finish). */
#ifndef DMLC_IR_STRBUF_H
#define DMLC_IR_STRBUF_H

#include <stdbool.h>
#include <stddef.h>

typedef struct dmlc_strbuf {
  char *data; /* NUL-terminated once anything was appended */
  size_t len, cap;
  bool failed;
} dmlc_strbuf;

void dmlc_strbuf_printf(dmlc_strbuf *sb, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
void dmlc_strbuf_append(dmlc_strbuf *sb, const char *s);
/* Appends "\n" unless the text is empty or already ends with one. */
void dmlc_strbuf_end_line(dmlc_strbuf *sb);
/* The malloc'ed text ("" when nothing was appended), or NULL when an
 * allocation failed; sb is emptied either way. */
char *dmlc_strbuf_finish(dmlc_strbuf *sb);
/* Frees the text and empties sb. */
void dmlc_strbuf_free(dmlc_strbuf *sb);

#endif
