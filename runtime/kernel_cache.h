/* The one kernel cache of every code-generating device: compiled kernels
 * keyed by the whole kernel description (its canonical bytes,
 * dmlc_kdesc_canonical: equal exactly when the printed descriptions are),
 * so a kernel is compiled once per device however many graphs contain it. What a compiled kernel is
 * belongs to the device: it passes the compile and destroy functions. Not thread-safe. */
#ifndef DMLC_RUNTIME_KERNEL_CACHE_H
#define DMLC_RUNTIME_KERNEL_CACHE_H

#include "codegen/kernel_desc.h"

typedef struct dmlc_kernel_cache dmlc_kernel_cache;

typedef struct dmlc_kernel_cache_ops {
  /* Compiles k (whose printed description is key) into *out. */
  dmlc_status (*compile)(void *user, const dmlc_kdesc *k, const char *key, void **out,
                         dmlc_diag *diag);
  void (*destroy)(void *user, void *kernel);
  void *user;
} dmlc_kernel_cache_ops;

/* NULL when out of memory. */
dmlc_kernel_cache *dmlc_kernel_cache_create(const dmlc_kernel_cache_ops *ops);
/* Destroys every kernel. */
void dmlc_kernel_cache_destroy(dmlc_kernel_cache *cache);
/* The compiled kernel of k, compiled on a miss. *out_key (may be NULL) is
 * the cache's copy of the key, valid while the cache lives. */
dmlc_status dmlc_kernel_cache_get(dmlc_kernel_cache *cache, const dmlc_kdesc *k, void **out,
                                  const char **out_key, dmlc_diag *diag);
/* How many kernels were compiled (misses). */
uint64_t dmlc_kernel_cache_misses(const dmlc_kernel_cache *cache);

#endif
