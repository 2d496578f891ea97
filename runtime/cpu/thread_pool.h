/* A pool of threads that runs the tasks of one kernel at a time: N-1 worker
 * threads plus the calling thread, which takes chunks like the others. It
 * lives on a context (no global state); its workers start on the first run
 * that needs them and sleep on a condition variable between runs. One run at
 * a time uses the workers; a run from another thread meanwhile runs on its
 * calling thread alone (dmlc_thread_pool_run may be called from any number
 * of threads at once). Not reentrant from inside a kernel. */
#ifndef DMLC_RUNTIME_CPU_THREAD_POOL_H
#define DMLC_RUNTIME_CPU_THREAD_POOL_H

#include <stdbool.h>
#include <stdint.h>

#include "codegen/llvm/cpu_kernel.h"
#include "dmlc/dmlc.h"

typedef struct dmlc_thread_pool dmlc_thread_pool;

/* The number of online cores (at least 1). */
uint32_t dmlc_online_cores(void);

/* num_threads counts the calling thread; 0 means dmlc_online_cores(). */
dmlc_status dmlc_thread_pool_create(uint32_t num_threads, dmlc_thread_pool **out);
void dmlc_thread_pool_destroy(dmlc_thread_pool *pool);
uint32_t dmlc_thread_pool_num_threads(const dmlc_thread_pool *pool);

/* Calls fn(buffers, begin, end) over [0, num_tasks) in chunks of `chunk`
 * tasks (the last may be shorter), spread over the pool's threads, and
 * returns when every chunk has run. Where workers cannot be started, the
 * calling thread runs what they would have. */
void dmlc_thread_pool_run(dmlc_thread_pool *pool, uint64_t num_tasks, uint64_t chunk,
                          dmlc_cpu_kernel_fn fn, void *const *buffers);

/* Whether the workers are likely awake: one is polling for the next job
 * (they poll a while after each), or a run ended, or a job the caller ran
 * alone (dmlc_thread_pool_ran_alone), within the last
 * DMLC_THREAD_POOL_HOT_NS. Back-to-back kernels keep it so; a kernel after
 * a pause finds it false. */
#define DMLC_THREAD_POOL_HOT_NS 50000u
bool dmlc_thread_pool_hot(dmlc_thread_pool *pool);
void dmlc_thread_pool_ran_alone(dmlc_thread_pool *pool);

#endif
