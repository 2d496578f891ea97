/* The objects behind the public handles. */
#ifndef DMLC_API_INTERNAL_H
#define DMLC_API_INTERNAL_H

#include <pthread.h>
#include <stdatomic.h>

#include "codegen/kernel_desc.h"
#include "frontend/frontend.h"
#include "ir/ir.h"
#include "runtime/device.h"

/* One slot per registry entry (runtime/registry.c holds a handful). */
#define DMLC_API_MAX_DEVICES 8

struct dmlc_context {
  uint64_t id; /* unique in the process: keys each thread's messages for it */
  /* Held by whatever opens devices or compiles (recursive: an API call may
   * call another): compiles of one context run one at a time, executes do
   * not take it (docs/reliability.md). */
  pthread_mutex_t lock;
  /* Each device the context has used, by registry index, opened by the
   * first call that needs it (a context that never compiles for the CPU
   * never initializes LLVM; one that never uses Vulkan never loads the
   * loader). */
  dmlc_rt_device *devices[DMLC_API_MAX_DEVICES];
  uint32_t num_threads;  /* for devices with threads; 0 = the online cores */
  uint64_t memory_limit; /* dmlc_context_set_memory_limit; 0 = physical memory */
};

struct dmlc_graph {
  dmlc_context *ctx;
  dmlc_ir_graph *ir;
  /* For values produced by operators added through the descriptor API: the
   * layout their OutputTensor descriptor gave, used by dmlc_graph_add_output. */
  struct {
    dmlc_layout layout;
    bool given;       /* false: the value has no remembered layout */
  } * result_layouts; /* by value id; zeroed when grown */
  uint32_t cap_layouts;
  /* The default pipeline's kernel plan of ir, which also says ir passed
   * dmlc_api_verify: built by the first compile since ir last changed and
   * shared by the compiles after it (a recompile of an unchanged graph runs
   * no pass). Published once with a compare-and-swap, since compiles of one
   * graph may run at once; every call that changes ir drops it first
   * (dmlc_api_graph_changed). NULL until then. */
  _Atomic(dmlc_kernel_plan *) plan;
};

struct dmlc_executable {
  dmlc_context *ctx;
  const dmlc_device_entry *device; /* the registry's entry (never DEFAULT) */
  dmlc_rt_device *rt_device;       /* the context's */
  dmlc_ir_graph *ir;               /* the graph as compiled (before passes), owned */
  dmlc_rt_executable *rt;
  /* The bytes each binding's run touches (dmlc_layout_needed_bytes), the
   * inputs then the outputs: computed once, checked on every call. */
  uint64_t *io_bytes;
};

struct dmlc_tensor {
  dmlc_context *ctx;
  const dmlc_device_entry *device;
  dmlc_rt_tensor *rt;
  uint64_t size_bytes;
};

/* The calling thread's message slot for ctx: each thread keeps the last
 * failure of its own calls on each context (of the last few it used), so
 * concurrent calls never write one buffer. */
dmlc_diag *dmlc_ctx_diag(const dmlc_context *ctx);
/* ctx->lock, taken and released. */
void dmlc_ctx_lock(dmlc_context *ctx);
void dmlc_ctx_unlock(dmlc_context *ctx);
/* ctx->lock around a call into a device whose executes and tensor copies
 * are serial (!vt->concurrent_execute); nothing for the others. */
void dmlc_ctx_lock_serial(dmlc_context *ctx, const dmlc_device_vtable *vt);
void dmlc_ctx_unlock_serial(dmlc_context *ctx, const dmlc_device_vtable *vt);

/* Fails the call with DMLC_ERROR_INVALID_ARGUMENT and the message unless cond. */
#define CHECK_ARG(ctx, cond, ...)                                                                  \
  do {                                                                                             \
    if (!(cond))                                                                                   \
      return dmlc_diag_set(dmlc_ctx_diag(ctx), DMLC_ERROR_INVALID_ARGUMENT, __VA_ARGS__);          \
  } while (0)

/* The registry's entry of device (DEFAULT resolved); UNSUPPORTED for a
 * device this build leaves out, INVALID_ARGUMENT for an unknown value. */
dmlc_status dmlc_api_resolve_device(dmlc_context *ctx, dmlc_device device,
                                    const dmlc_device_entry **out);
/* The context's instance of a registered device, opened on first use. */
dmlc_status dmlc_context_device(dmlc_context *ctx, const dmlc_device_entry *entry,
                                dmlc_rt_device **out);
/* How many kernels the context's instance of device has compiled (0 when
 * it is not open or has no kernels): for tests of the kernel cache. */
uint64_t dmlc_api_compile_count(dmlc_context *ctx, dmlc_device device);
/* Whether ctx has opened device (for tests: what a context does lazily). */
bool dmlc_api_device_is_open(const dmlc_context *ctx, dmlc_device device);
/* The kernel plan of ir after the default pipeline (built once, for every
 * code-generating device and for ahead-of-time code); *fused_out, when
 * asked for, receives the pipeline's graph (the caller destroys it). */
dmlc_status dmlc_api_build_plan(dmlc_context *ctx, const dmlc_ir_graph *ir, dmlc_kernel_plan *plan,
                                dmlc_ir_graph **fused_out);
/* Drops graph's remembered plan: called before anything changes graph->ir. */
void dmlc_api_graph_changed(dmlc_graph *graph);
/* The verifier's rules, then the rule for kernels written in the graph (IR
 * text after `fuse`): every device re-derives kernels from the nodes, so a
 * kernel must be the one `fuse` derives; a hand-edited one, which would
 * silently have no effect, is refused with a message at its place. */
dmlc_status dmlc_api_verify(dmlc_context *ctx, const dmlc_ir_graph *ir);
/* The context's memory limit in bytes (the physical memory when unset). */
uint64_t dmlc_api_memory_limit(const dmlc_context *ctx);
/* DMLC_ERROR_OUT_OF_MEMORY, with a message naming what, unless bytes fit
 * under the context's memory limit. */
dmlc_status dmlc_api_check_memory(dmlc_context *ctx, uint64_t bytes, const char *what);
/* Closes every device of ctx (dmlc_context_destroy). */
void dmlc_context_close_devices(dmlc_context *ctx);

#endif
