/* The CPU device: runs a fused graph's kernels, JIT-compiled for the host.
 * A device belongs to one context and owns its JIT, its thread pool and its
 * cache of compiled kernels, keyed by each kernel description's printed text
 * (dmlc_kdesc_print), so a kernel is compiled once per context however many
 * graphs contain it. Not thread-safe; in particular two executables of one
 * device must not run at the same time (they share the pool). */
#ifndef DMLC_RUNTIME_CPU_CPU_DEVICE_H
#define DMLC_RUNTIME_CPU_CPU_DEVICE_H

#include "ir/ir.h"

typedef struct dmlc_cpu_device dmlc_cpu_device;
typedef struct dmlc_cpu_executable dmlc_cpu_executable;

/* num_threads: 0 = the online cores. Creates the JIT (LLVM's first use in
 * the process initializes its native target); threads start on first need. */
dmlc_status dmlc_cpu_device_create(uint32_t num_threads, dmlc_cpu_device **out, dmlc_diag *diag);
void dmlc_cpu_device_destroy(dmlc_cpu_device *dev);
/* Takes effect at the next run; 0 = the online cores. */
dmlc_status dmlc_cpu_device_set_num_threads(dmlc_cpu_device *dev, uint32_t num_threads,
                                            dmlc_diag *diag);
uint32_t dmlc_cpu_device_num_threads(const dmlc_cpu_device *dev);
/* One line: triple, CPU, vector width, threads. Malloc'ed; NULL on OOM. */
char *dmlc_cpu_device_describe(const dmlc_cpu_device *dev);
/* How many kernels were JIT-compiled (cache misses), for tests. */
uint64_t dmlc_cpu_device_compile_count(const dmlc_cpu_device *dev);

/* Builds the kernel plan of fused (a graph after DMLC_DEFAULT_PIPELINE),
 * compiles (or finds in the cache) each kernel, and allocates the
 * temporaries and scratch once. fused is not kept. */
dmlc_status dmlc_cpu_executable_create(dmlc_cpu_device *dev, const dmlc_ir_graph *fused,
                                       dmlc_cpu_executable **out, dmlc_diag *diag);
void dmlc_cpu_executable_destroy(dmlc_cpu_executable *exe);
/* Runs every kernel in order. Buffers are the graph's, in order, already
 * checked (count, size, alignment, overlap). Allocates nothing; work below
 * DMLC_CPU_PARALLEL_MIN_BYTES runs on the calling thread. */
void dmlc_cpu_executable_run(dmlc_cpu_executable *exe, const dmlc_buffer *inputs,
                             const dmlc_buffer *outputs);
/* what: "kernels" (descriptions and task split), "llvm" (optimized LLVM IR),
 * "asm" (host assembly). LLVM text is produced on the first request (the
 * kernel is compiled again without loading it) and then kept in the cache. */
dmlc_status dmlc_cpu_executable_dump(dmlc_cpu_executable *exe, const char *what, char **out_text,
                                     dmlc_diag *diag);

/* A kernel touching fewer bytes than this runs on the calling thread. */
#define DMLC_CPU_PARALLEL_MIN_BYTES (256u * 1024u)

#endif
