/* The ABI between generated CPU kernels and runtime/cpu. */
#ifndef DMLC_CODEGEN_LLVM_CPU_KERNEL_H
#define DMLC_CODEGEN_LLVM_CPU_KERNEL_H

#include <stdbool.h>
#include <stdint.h>

/* buffers[0]: the read buffer (unused when the kernel has no read);
 * buffers[1 + i]: output i; buffers[1 + num_outputs]: the scratch buffer
 * (scratch_bytes, 64-byte aligned) when scratch_bytes > 0.
 *
 * The main function runs tasks [begin, end) of the task space. Tasks are
 * independent: any split of [0, num_tasks) across threads writes the same
 * bytes. When has_finish, the runtime then calls the finish function once,
 * on one thread, after every task has completed (e.g. to merge the partial
 * results of a reduction split across tasks). */
typedef void (*dmlc_cpu_kernel_fn)(void *const *buffers, uint64_t begin, uint64_t end);
typedef void (*dmlc_cpu_finish_fn)(void *const *buffers);

typedef struct dmlc_cpu_kernel_info {
  uint64_t num_tasks;      /* the task space is [0, num_tasks) */
  uint64_t bytes_per_task; /* memory one task reads and writes, to size the splits */
  uint64_t scratch_bytes;  /* 0: no scratch buffer */
  bool has_finish;         /* the finish function exists and must run */
} dmlc_cpu_kernel_info;

#endif
