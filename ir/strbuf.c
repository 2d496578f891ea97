/* See strbuf.h. */
#include "ir/strbuf.h"

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static bool reserve(dmlc_strbuf *sb, size_t extra) {
  if (sb->failed)
    return false;
  if (sb->len + extra + 1 <= sb->cap)
    return true;
  size_t cap = sb->cap ? sb->cap : 256;
  while (cap < sb->len + extra + 1) {
    if (cap > SIZE_MAX / 2) {
      sb->failed = true;
      return false;
    }
    cap *= 2;
  }
  char *p = realloc(sb->data, cap);
  if (!p) {
    sb->failed = true;
    return false;
  }
  sb->data = p;
  sb->cap = cap;
  return true;
}

void dmlc_strbuf_printf(dmlc_strbuf *sb, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  const int n = vsnprintf(NULL, 0, fmt, ap);
  va_end(ap);
  if (n < 0) {
    sb->failed = true;
    return;
  }
  if (!reserve(sb, (size_t)n))
    return;
  va_start(ap, fmt);
  vsnprintf(sb->data + sb->len, sb->cap - sb->len, fmt, ap);
  va_end(ap);
  sb->len += (size_t)n;
}

void dmlc_strbuf_append(dmlc_strbuf *sb, const char *s) {
  const size_t n = strlen(s);
  if (!reserve(sb, n))
    return;
  memcpy(sb->data + sb->len, s, n + 1);
  sb->len += n;
}

void dmlc_strbuf_end_line(dmlc_strbuf *sb) {
  if (sb->len && sb->data[sb->len - 1] != '\n')
    dmlc_strbuf_append(sb, "\n");
}

char *dmlc_strbuf_finish(dmlc_strbuf *sb) {
  if (!sb->data && reserve(sb, 0))
    sb->data[0] = '\0';
  char *text = sb->failed ? NULL : sb->data;
  if (sb->failed)
    free(sb->data);
  *sb = (dmlc_strbuf){0};
  return text;
}

void dmlc_strbuf_free(dmlc_strbuf *sb) {
  free(sb->data);
  *sb = (dmlc_strbuf){0};
}
