/* See kernel_cache.h. Open addressing with linear probing; the capacity is a
 * power of two and the table at most half full. */
#include "runtime/kernel_cache.h"

#include <stdlib.h>
#include <string.h>

typedef struct cache_entry {
  uint64_t hash;
  char *key;
  void *kernel;
} cache_entry;

struct dmlc_kernel_cache {
  dmlc_kernel_cache_ops ops;
  cache_entry *slots; /* key NULL: empty */
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
    if (c->slots[i].key) {
      c->ops.destroy(c->ops.user, c->slots[i].kernel);
      free(c->slots[i].key);
    }
  free(c->slots);
  free(c);
}

uint64_t dmlc_kernel_cache_misses(const dmlc_kernel_cache *c) { return c->misses; }

static uint64_t fnv1a(const char *s) {
  uint64_t h = 0xcbf29ce484222325ull;
  for (; *s; s++)
    h = (h ^ (unsigned char)*s) * 0x100000001b3ull;
  return h;
}

static cache_entry *slot_of(cache_entry *slots, uint32_t capacity, uint64_t hash, const char *key) {
  const uint32_t mask = capacity - 1;
  for (uint32_t i = (uint32_t)hash & mask;; i = (i + 1) & mask) {
    cache_entry *e = &slots[i];
    if (!e->key || (e->hash == hash && strcmp(e->key, key) == 0))
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
    if (c->slots[i].key)
      *slot_of(slots, capacity, c->slots[i].hash, c->slots[i].key) = c->slots[i];
  free(c->slots);
  c->slots = slots;
  c->capacity = capacity;
  return true;
}

dmlc_status dmlc_kernel_cache_get(dmlc_kernel_cache *c, const dmlc_kdesc *k, void **out,
                                  const char **out_key, dmlc_diag *diag) {
  char *key = dmlc_kdesc_print(k);
  if (!key || !grow(c)) {
    free(key);
    return dmlc_diag_set(diag, DMLC_ERROR_OUT_OF_MEMORY, "out of memory caching a kernel");
  }
  const uint64_t hash = fnv1a(key);
  cache_entry *e = slot_of(c->slots, c->capacity, hash, key);
  if (!e->key) {
    void *kernel = NULL;
    const dmlc_status status = c->ops.compile(c->ops.user, k, key, &kernel, diag);
    if (status != DMLC_OK) {
      free(key);
      return status;
    }
    c->misses++;
    *e = (cache_entry){hash, key, kernel};
    c->count++;
  } else {
    free(key);
  }
  *out = e->kernel;
  if (out_key)
    *out_key = e->key;
  return DMLC_OK;
}
