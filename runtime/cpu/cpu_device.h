/* The CPU device (dmlc_cpu_device_vtable): runs a kernel plan's kernels,
 * JIT-compiled for the host, on a thread pool. A device belongs to one
 * context and owns its JIT, its thread pool and its kernel cache
 * (runtime/kernel_cache.h), so a kernel is compiled once per context however
 * many graphs contain it. Tensors are host memory (runtime/host_tensor.h).
 * Not thread-safe; in particular two executables of one device must not run
 * at the same time (they share the pool). */
#ifndef DMLC_RUNTIME_CPU_CPU_DEVICE_H
#define DMLC_RUNTIME_CPU_CPU_DEVICE_H

#include "runtime/device.h"

/* A kernel touching fewer bytes than this runs on the calling thread: one
 * core reads that much from its L2 in about 40 us, while waking another
 * (a futex wake, an IPI: about 20 us in a VM) and its cold cache cost as
 * much as they save (f16 [8,128256], 2 MB: 37 us on one thread, 56 us on
 * two, Xeon VM). */
#define DMLC_CPU_PARALLEL_MIN_BYTES (3u * 1024u * 1024u)
/* ... or this many while the pool is hot (dmlc_thread_pool_hot: its workers
 * polling, back-to-back kernels): f16 [8,128256], 2 MB, on a Zen 5 VM in
 * a loop of calls 10.7 us on two threads against 20.4 on one; after a
 * pause of 1 ms 37.6 us on one, 60.7 on two (a cold wake). */
#define DMLC_CPU_PARALLEL_HOT_MIN_BYTES (1u * 1024u * 1024u)

#endif
