/* Names in an ONNX graph: a hash table from value names to indices (a model
 * may have many thousands of values; looking each up by a scan would make
 * import quadratic), and ONNX names made into valid dmlc names. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "frontend/onnx/onnx_internal.h"

static size_t hash_name(const char *name) {
  uint64_t h = 14695981039346656037u; /* FNV-1a */
  for (const unsigned char *p = (const unsigned char *)name; *p; p++)
    h = (h ^ *p) * 1099511628211u;
  return (size_t)h;
}

static struct onnx_name_slot *slot_of(const onnx_name_table *t, const char *name) {
  for (size_t i = hash_name(name) & (t->cap - 1);; i = (i + 1) & (t->cap - 1)) {
    struct onnx_name_slot *s = &t->slots[i];
    if (!s->name || strcmp(s->name, name) == 0)
      return s;
  }
}

uint32_t onnx_names_find(const onnx_name_table *t, const char *name) {
  if (t->cap == 0)
    return UINT32_MAX;
  const struct onnx_name_slot *s = slot_of(t, name);
  return s->name ? s->index : UINT32_MAX;
}

bool onnx_names_put(onnx_name_table *t, const char *name, uint32_t index) {
  if ((t->count + 1) * 2 > t->cap) {
    const size_t cap = t->cap ? t->cap * 2 : 64;
    onnx_name_table grown = {calloc(cap, sizeof *grown.slots), cap, t->count};
    if (!grown.slots)
      return false;
    for (size_t i = 0; i < t->cap; i++)
      if (t->slots[i].name)
        *slot_of(&grown, t->slots[i].name) = t->slots[i];
    free(t->slots);
    *t = grown;
  }
  struct onnx_name_slot *s = slot_of(t, name);
  if (!s->name)
    t->count++;
  s->name = name;
  s->index = index;
  return true;
}

void onnx_names_free(onnx_name_table *t) {
  free(t->slots);
  *t = (onnx_name_table){0};
}

static bool is_alpha(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}
static bool is_digit(char c) { return c >= '0' && c <= '9'; }

void onnx_valid_name(const char *name, const char *fallback, bool c_name,
                     bool (*taken)(const char *candidate, void *user), void *user,
                     uint32_t *next_suffix, char *buf) {
  /* Room for a "_NNNNNNNNNN" suffix within DMLC_NAME_MAX - 1 bytes. */
  enum { STEM_MAX = DMLC_NAME_MAX - 1 - 11 };
  char stem[DMLC_NAME_MAX];
  size_t n = 0;
  if (!name || !*name)
    name = fallback;
  if (!is_alpha(name[0]))
    stem[n++] = '_';
  for (const char *p = name; *p && n < DMLC_NAME_MAX - 1; p++) {
    const bool ok = is_alpha(*p) || is_digit(*p) || (*p == '.' && !c_name);
    stem[n++] = ok ? *p : '_';
  }
  stem[n] = '\0';
  if (!taken || !taken(stem, user)) {
    memcpy(buf, stem, n + 1);
    return;
  }
  for (;;) {
    snprintf(buf, DMLC_NAME_MAX, "%.*s_%u", (int)STEM_MAX, stem, (unsigned)++*next_suffix);
    if (!taken(buf, user))
      return;
  }
}
