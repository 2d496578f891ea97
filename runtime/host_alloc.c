/* See host_alloc.h. */
#include "runtime/host_alloc.h"

#include <stdbool.h>
#include <stdlib.h>
#if defined(__linux__)
#include <sys/mman.h>
#endif

enum { HUGE_PAGE_BYTES = 2u << 20 };

void *dmlc_host_alloc(uint64_t size_bytes, uint64_t alignment) {
  const bool huge = size_bytes >= DMLC_HOST_HUGE_PAGE_MIN;
  const uint64_t a = huge && alignment < HUGE_PAGE_BYTES ? HUGE_PAGE_BYTES : alignment;
  const uint64_t rounded = size_bytes ? (size_bytes + a - 1) / a * a : a;
  if (rounded < size_bytes || rounded > SIZE_MAX)
    return NULL;
  void *p = aligned_alloc((size_t)a, (size_t)rounded);
#if defined(__linux__) && defined(MADV_HUGEPAGE)
  if (p && huge)
    (void)madvise(p, (size_t)rounded, MADV_HUGEPAGE); /* advice: failure changes nothing */
#endif
  return p;
}
