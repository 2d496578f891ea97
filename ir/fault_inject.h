/* Allocation-failure injection (docs/reliability.md), for the test build
 * -DDMLC_FAULT_INJECTION=ON only: every C file of the library is compiled
 * with this header forced in, so its malloc, calloc, realloc,
 * aligned_alloc and strdup go through counters that can make the Nth
 * allocation fail. Allocations inside LLVM, SPIRV-Tools, protobuf-c and
 * the Vulkan driver are not dmlc's and are not counted. */
#ifndef DMLC_IR_FAULT_INJECT_H
#define DMLC_IR_FAULT_INJECT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Makes the fail_at-th dmlc allocation from now on return NULL (1: the
 * next one); 0 turns injection off. Resets the count. */
void dmlc_fault_set(uint64_t fail_at);
/* dmlc allocations since the last dmlc_fault_set. */
uint64_t dmlc_fault_count(void);
/* Whether the armed failure has happened. */
bool dmlc_fault_fired(void);

void *dmlc_fault_malloc(size_t size);
void *dmlc_fault_calloc(size_t count, size_t size);
void *dmlc_fault_realloc(void *p, size_t size);
void *dmlc_fault_aligned_alloc(size_t alignment, size_t size);
char *dmlc_fault_strdup(const char *s);

#ifdef __cplusplus
}
#endif

#if defined(DMLC_FAULT_INJECTION) && !defined(DMLC_FAULT_INJECT_IMPL) && !defined(__cplusplus)
#define malloc(n) dmlc_fault_malloc(n)
#define calloc(n, s) dmlc_fault_calloc(n, s)
#define realloc(p, n) dmlc_fault_realloc(p, n)
#define aligned_alloc(a, n) dmlc_fault_aligned_alloc(a, n)
#define strdup(s) dmlc_fault_strdup(s)
#endif

#endif
