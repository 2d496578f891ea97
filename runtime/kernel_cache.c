/* See kernel_cache.h. Open addressing with linear probing; the capacity is a
 * power of two and the table at most half full. Entries are found by the
 * description's canonical bytes (dmlc_kdesc_canonical: the same bytes
 * exactly when the printed texts are the same), so a hit prints nothing;
 * the text is made once, on the miss. */
#include "runtime/kernel_cache.h"

#include <stdlib.h>
#include <string.h>

typedef struct cache_entry {
  uint64_t hash;
  dmlc_kdesc *canon; /* NULL: an empty slot */
  char *key;         /* the printed description */
  void *kernel;
} cache_entry;

struct dmlc_kernel_cache {
  dmlc_kernel_cache_ops ops;
  cache_entry *slots;
  uint32_t capacity, count;
  uint64_t misses;
};

dmlc_kernel_cache *dmlc_kernel_cache_create(const dmlc_kernel_cache_ops *ops) {
  dmlc_kernel_cache *c = calloc(1, sizeof *c);
  if (c)
    c->ops = *ops;
  return c;
}

void dmlc_kernel_cache_destroy(dmlc_kernel_cache *c) {
  if (!c)
    return;
  for (uint32_t i = 0; i < c->capacity; i++)
    if (c->slots[i].canon) {
      c->ops.destroy(c->ops.user, c->slots[i].kernel);
      free(c->slots[i].key);
      free(c->slots[i].canon);
    }
  free(c->slots);
  free(c);
}

uint64_t dmlc_kernel_cache_misses(const dmlc_kernel_cache *c) { return c->misses; }

/* FNV-1a over 64-bit words (a canonical description is a whole number of
 * them), with a final mix. */
static uint64_t hash_of(const dmlc_kdesc *canon) {
  _Static_assert(sizeof(dmlc_kdesc) % sizeof(uint64_t) == 0, "dmlc_kdesc: whole words");
  uint64_t w[sizeof(dmlc_kdesc) / sizeof(uint64_t)];
  memcpy(w, canon, sizeof w);
  uint64_t h = 0xcbf29ce484222325ull;
  for (size_t i = 0; i < sizeof w / sizeof w[0]; i++)
    h = (h ^ w[i]) * 0x100000001b3ull;
  return h ^ (h >> 29);
}

static cache_entry *slot_of(cache_entry *slots, uint32_t capacity, uint64_t hash,
                            const dmlc_kdesc *canon) {
  const uint32_t mask = capacity - 1;
  for (uint32_t i = (uint32_t)hash & mask;; i = (i + 1) & mask) {
    cache_entry *e = &slots[i];
    if (!e->canon || (e->hash == hash && memcmp(e->canon, canon, sizeof *canon) == 0))
      return e;
  }
}

static bool grow(dmlc_kernel_cache *c) {
  if (2 * ((uint64_t)c->count + 1) <= c->capacity)
    return true;
  if (c->capacity >= UINT32_MAX / 2)
    return false;
  const uint32_t capacity = c->capacity ? 2 * c->capacity : 64;
  cache_entry *slots = calloc(capacity, sizeof *slots);
  if (!slots)
    return false;
  for (uint32_t i = 0; i < c->capacity; i++)
    if (c->slots[i].canon)
      *slot_of(slots, capacity, c->slots[i].hash, c->slots[i].canon) = c->slots[i];
  free(c->slots);
  c->slots = slots;
  c->capacity = capacity;
  return true;
}

dmlc_status dmlc_kernel_cache_get(dmlc_kernel_cache *c, const dmlc_kdesc *k, void **out,
                                  const char **out_key, dmlc_diag *diag) {
  dmlc_kdesc canon;
  dmlc_kdesc_canonical(k, &canon);
  const uint64_t hash = hash_of(&canon);
  cache_entry *e = c->capacity ? slot_of(c->slots, c->capacity, hash, &canon) : NULL;
  if (!e || !e->canon) {
    /* a miss: room first (growing moves the slots), then the kernel */
    dmlc_kdesc *copy = malloc(sizeof *copy);
    char *key = dmlc_kdesc_print(k);
    if (!copy || !key || !grow(c)) {
      free(copy);
      free(key);
      return dmlc_diag_set(diag, DMLC_ERROR_OUT_OF_MEMORY, "out of memory caching a kernel");
    }
    memcpy(copy, &canon, sizeof canon);
    void *kernel = NULL;
    const dmlc_status status = c->ops.compile(c->ops.user, k, key, &kernel, diag);
    if (status != DMLC_OK) {
      free(copy);
      free(key);
      return status;
    }
    c->misses++;
    e = slot_of(c->slots, c->capacity, hash, &canon);
    *e = (cache_entry){hash, copy, key, kernel};
    c->count++;
  }
  *out = e->kernel;
  if (out_key)
    *out_key = e->key;
  return DMLC_OK;
}
