/* See fault_inject.h. Built into every library; it does something only
 * where the library's allocations are routed through it
 * (-DDMLC_FAULT_INJECTION=ON). */
#define DMLC_FAULT_INJECT_IMPL 1
#include "ir/fault_inject.h"

#include <stdatomic.h>

/* The build forces fault_inject.h into this file too, ahead of the define
 * above: the real allocator here. */
#undef malloc
#undef calloc
#undef realloc
#undef aligned_alloc
#undef strdup

static _Atomic uint64_t fault_count, fault_at;
static atomic_bool fault_fired;

void dmlc_fault_set(uint64_t fail_at) {
  atomic_store(&fault_count, 0);
  atomic_store(&fault_fired, false);
  atomic_store(&fault_at, fail_at);
}

uint64_t dmlc_fault_count(void) { return atomic_load(&fault_count); }
bool dmlc_fault_fired(void) { return atomic_load(&fault_fired); }

static bool fail_now(void) {
  const uint64_t n = atomic_fetch_add(&fault_count, 1) + 1;
  const uint64_t at = atomic_load(&fault_at);
  if (at == 0 || n != at)
    return false;
  atomic_store(&fault_fired, true);
  return true;
}

void *dmlc_fault_malloc(size_t size) { return fail_now() ? NULL : malloc(size); }
void *dmlc_fault_calloc(size_t count, size_t size) {
  return fail_now() ? NULL : calloc(count, size);
}
void *dmlc_fault_realloc(void *p, size_t size) { return fail_now() ? NULL : realloc(p, size); }
void *dmlc_fault_aligned_alloc(size_t alignment, size_t size) {
  return fail_now() ? NULL : aligned_alloc(alignment, size);
}
char *dmlc_fault_strdup(const char *s) { return fail_now() ? NULL : strdup(s); }
