/* Kernel descriptions -> LLVM IR for the host CPU, with explicit vector code. */
#ifndef DMLC_CODEGEN_LLVM_EMIT_H
#define DMLC_CODEGEN_LLVM_EMIT_H

#include <llvm-c/Core.h>

#include "codegen/kernel_desc.h"
#include "codegen/llvm/cpu_kernel.h"

typedef struct dmlc_llvm_target {
  uint32_t vector_bytes; /* the widest vector register: 16 (SSE), 32 (AVX2), 64 (AVX-512) */
  /* Full-size outputs (ONEHOT), and the INDEX output of short packed rows
   * (more bytes than their read), of at least this many bytes are written
   * with non-temporal stores where aligned (they would only evict the input
   * from the caches); 0: never. */
  uint64_t nontemporal_min_bytes;
  /* Reads of at least prefetch_min_bytes (the kernel's whole read) are
   * prefetched in software prefetch_bytes ahead of the loads (rows) or a
   * group of rows ahead (columns); 0: never. */
  uint32_t prefetch_bytes;
  uint64_t prefetch_min_bytes;
  /* Rows are prefetched ahead of their loads (the streamed reads), and
   * columns of long runs a group of rows ahead, only when the kernel's
   * whole read is at most this: three quarters of the host's last-level
   * cache for the JIT, UINT64_MAX when unknown and for ahead-of-time code.
   * A larger read comes from DRAM, where the hardware prefetchers follow a
   * stream on their own and the prefetch instructions only take load
   * slots (Zen 3: argmax over the rows of f32 [8192,8192] at 81% of the
   * plain loop with them, 95% without); from the cache, the loads outrun
   * the hardware prefetchers (f16 [64,128256], 16 MB: 90% with, 71%
   * without). The prefetch of each next run of a merged row (a jump the
   * hardware prefetchers cannot guess) stays. */
  uint64_t stream_prefetch_max_bytes;
  /* ... and streamed rows (not the columns) only when it is at most this
   * as well; 0: no further limit. The JIT sets one core's L2 on CPUs whose
   * hardware prefetchers keep up with a stream from the L3 (jit.c). */
  uint64_t row_prefetch_max_bytes;
  /* x86: the widest vector PSIGNW takes (32 with AVX2, 16 with SSSE3);
   * 0: none (portable IR instead). */
  uint32_t psign_bytes;
  /* Widen f16 with integer operations instead of fpext: for targets whose
   * fpext from half is a library call (x86 without F16C), which
   * ahead-of-time code must not make. */
  bool soft_half;
  /* Reads (the kernel's whole read) smaller than this keep each kept point's
   * rows in one task: they are not split into chunks that a finish function
   * merges (merged rows with few kept points), since the runtime runs them
   * on one thread anyway; 0: split whenever the points are few. */
  uint64_t split_min_bytes;
  /* The widest vector, in bytes, of rows read from DRAM (past
   * stream_prefetch_max_bytes) and of f32 rows shorter than 16 KiB, where
   * vector_bytes is wider (ec_emit_row: 32 on x86, where 64-byte loads of
   * one stream read DRAM more slowly); 0: vector_bytes for every row. */
  uint32_t row_narrow_bytes;
  /* One core's L2 cache in bytes: from DRAM, columns of long runs are
   * prefetched a group of rows ahead when that group, the one being read
   * and the accumulators fit in three quarters of it (emit_column.c); 0
   * (unknown, and ahead-of-time code): never. */
  uint64_t l2_bytes;
  /* Columns from DRAM of many long rows are read in runs as long as other
   * columns' (COLUMN_RUN_BYTES), not a 4 KiB page at a time: the JIT sets
   * it on CPUs measured faster so (jit.c); false for ahead-of-time code. */
  bool long_column_runs;
  /* Block rows with 64-byte vectors over a read of at most four times
   * l2_bytes take blocks of 24 vectors, not 32 (emit_row.c's
   * row_block_vecs): the JIT sets it on CPUs measured faster so (jit.c). */
  bool short_row_blocks;
  /* Columns from DRAM read in runs of half COLUMN_RUN_BYTES or more, a
   * task a block (no row chunks), under 64-byte vectors, are read without
   * software prefetches of the next group of rows (emit_column.c): the JIT
   * sets it on CPUs measured faster so (jit.c). */
  bool no_column_run_prefetch;
  /* Whole rows from DRAM prefetch their span ahead (emit_row.c's
   * prefetch_ahead) up to 8 KiB a row, not 3.5 KiB; row groups from DRAM
   * prefetch each row 16 KiB ahead (not 1 KiB, and with 64-byte vectors
   * too: emit_row_groups); other rows from DRAM stream-prefetch 16 KiB
   * ahead (none otherwise: emit.c): the JIT sets it on CPUs measured
   * faster so (jit.c). */
  bool far_row_prefetch;
  /* The 64-byte vectors permute bytes (and words, dwords) across the
   * whole vector in one instruction (x86 with AVX-512 VBMI: VPERMB,
   * VPERMT2B): short packed rows of 8-, 16- and 32-bit integers and f32
   * then go by permutes (emit_bytes.c). */
  bool byte_permutes;
  /* Short 8- and 16-bit rows go in 16-byte lanes (emit_lanes.c: x86's
   * in-lane unpacks and integer max) where the permutes do not take them. */
  bool lane_rows;
} dmlc_llvm_target;

/* Adds to module a function `name` of type dmlc_cpu_kernel_fn computing k
 * (and `name`_finish of type dmlc_cpu_finish_fn when info->has_finish).
 * Shapes and strides are constants in the code. No fast-math flags. */
dmlc_status dmlc_llvm_emit_kernel(LLVMModuleRef module, const dmlc_kdesc *k, const char *name,
                                  const dmlc_llvm_target *target, dmlc_cpu_kernel_info *info,
                                  dmlc_diag *diag);

#endif
