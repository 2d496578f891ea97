/* See cpu_device.h. */
#include "runtime/cpu/cpu_device.h"

#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "codegen/llvm/jit.h"
#include "ir/strbuf.h"
#include "runtime/cpu/thread_pool.h"
#include "runtime/host_alloc.h"
#include "runtime/host_tensor.h"
#include "runtime/kernel_cache.h"

/* Splits aim for this many chunks per thread (to even out uneven progress)
 * and at least this many bytes per chunk (to amortize claiming one). */
enum { CHUNKS_PER_THREAD = 4, MIN_CHUNK_BYTES = 32 * 1024, BUFFER_ALIGNMENT = 64 };

/* What the kernel cache holds for one kernel description. */
typedef struct cpu_cached_kernel {
  dmlc_llvm_kernel kernel;
  dmlc_llvm_text text; /* filled by the first dump that needs it */
} cpu_cached_kernel;

typedef struct cpu_device {
  dmlc_llvm_jit *jit;
  dmlc_thread_pool *pool;
  dmlc_kernel_cache *cache;
} cpu_device;

typedef struct cpu_kernel {
  dmlc_kdesc desc;
  cpu_cached_kernel *cached; /* owned by the device's cache */
  const char *key;           /* the cache's */
} cpu_kernel;

/* What one execute writes besides its outputs. */
typedef struct cpu_workspace {
  void **io;     /* the inputs' then the outputs' addresses */
  void **temps;  /* BUFFER_ALIGNMENT-aligned */
  void *scratch; /* the largest scratch any kernel needs, shared: they run in turn */
} cpu_workspace;

typedef struct cpu_executable {
  cpu_device *dev;
  uint32_t num_inputs, num_outputs;
  uint32_t num_kernels;
  cpu_kernel *kernels;
  uint32_t num_temps;
  uint64_t *temp_bytes;
  uint64_t scratch_bytes;
  /* The executable's own workspace, taken by whichever execute finds it
   * free; an execute that finds it taken (the same executable running on
   * another thread) makes one of its own for the call. */
  cpu_workspace own;
  atomic_flag own_busy;
} cpu_executable;

static cpu_device *device_of(dmlc_rt_device *d) { return (cpu_device *)d; }
static cpu_executable *executable_of(dmlc_rt_executable *e) { return (cpu_executable *)e; }

/* ---- the kernel cache's compile and destroy ---- */

static dmlc_status cache_compile(void *user, const dmlc_kdesc *k, const char *key, void **out,
                                 dmlc_diag *diag) {
  (void)key;
  cpu_device *dev = user;
  cpu_cached_kernel *c = calloc(1, sizeof *c);
  if (!c)
    return dmlc_diag_set(diag, DMLC_ERROR_OUT_OF_MEMORY, "out of memory compiling a kernel");
  const dmlc_status status = dmlc_llvm_jit_compile(dev->jit, k, &c->kernel, NULL, diag);
  if (status != DMLC_OK) {
    free(c);
    return status;
  }
  *out = c;
  return DMLC_OK;
}

static void cache_destroy(void *user, void *kernel) {
  (void)user;
  cpu_cached_kernel *c = kernel;
  dmlc_llvm_text_free(&c->text);
  free(c);
}

/* ---- the device ---- */

static void cpu_destroy(dmlc_rt_device *d) {
  cpu_device *dev = device_of(d);
  if (!dev)
    return;
  dmlc_kernel_cache_destroy(dev->cache);
  dmlc_thread_pool_destroy(dev->pool);
  dmlc_llvm_jit_destroy(dev->jit);
  free(dev);
}

static dmlc_status cpu_create(const dmlc_rt_options *options, dmlc_rt_device **out,
                              dmlc_diag *diag) {
  *out = NULL;
  cpu_device *dev = calloc(1, sizeof *dev);
  if (!dev)
    return dmlc_diag_set(diag, DMLC_ERROR_OUT_OF_MEMORY, "out of memory creating the CPU device");
  const dmlc_kernel_cache_ops ops = {cache_compile, cache_destroy, dev};
  dmlc_status status = DMLC_OK;
  if (dmlc_thread_pool_create(options->num_threads, &dev->pool) != DMLC_OK ||
      !(dev->cache = dmlc_kernel_cache_create(&ops)))
    status = dmlc_diag_set(diag, DMLC_ERROR_OUT_OF_MEMORY, "out of memory creating the CPU device");
  if (status == DMLC_OK)
    status = dmlc_llvm_jit_create(&dev->jit, diag);
  if (status != DMLC_OK) {
    cpu_destroy((dmlc_rt_device *)dev);
    return status;
  }
  *out = (dmlc_rt_device *)dev;
  return DMLC_OK;
}

static dmlc_status cpu_set_num_threads(dmlc_rt_device *d, uint32_t num_threads, dmlc_diag *diag) {
  cpu_device *dev = device_of(d);
  dmlc_thread_pool *pool;
  if (dmlc_thread_pool_create(num_threads, &pool) != DMLC_OK)
    return dmlc_diag_set(diag, DMLC_ERROR_OUT_OF_MEMORY, "out of memory creating the thread pool");
  dmlc_thread_pool_destroy(dev->pool);
  dev->pool = pool;
  return DMLC_OK;
}

static uint64_t cpu_compile_count(const dmlc_rt_device *d) {
  return dmlc_kernel_cache_misses(((const cpu_device *)d)->cache);
}

static dmlc_status cpu_describe(dmlc_rt_device *d, char **out_text, dmlc_diag *diag) {
  const cpu_device *dev = device_of(d);
  const uint32_t threads = dmlc_thread_pool_num_threads(dev->pool);
  dmlc_strbuf sb = {0};
  dmlc_strbuf_printf(&sb, "%s, CPU %s, %u-bit vectors, %u thread%s", dmlc_llvm_jit_triple(dev->jit),
                     dmlc_llvm_jit_cpu_name(dev->jit), dmlc_llvm_jit_vector_bytes(dev->jit) * 8,
                     threads, threads == 1 ? "" : "s");
  uint64_t l2, llc;
  dmlc_llvm_host_caches(&l2, &llc);
  if (l2)
    dmlc_strbuf_printf(&sb, ", L2 %llu KiB", (unsigned long long)(l2 >> 10));
  if (llc)
    dmlc_strbuf_printf(&sb, ", last level %llu KiB", (unsigned long long)(llc >> 10));
  const char *override = dmlc_llvm_jit_override(dev->jit);
  if (override)
    dmlc_strbuf_printf(&sb, ", %s", override);
  *out_text = dmlc_strbuf_finish(&sb);
  return *out_text ? DMLC_OK : dmlc_diag_set(diag, DMLC_ERROR_OUT_OF_MEMORY, "out of memory");
}

/* ---- executables ---- */

static bool binding_valid(const cpu_executable *exe, dmlc_binding b) {
  switch (b.kind) {
  case DMLC_BINDING_INPUT:
    return b.index < exe->num_inputs;
  case DMLC_BINDING_OUTPUT:
    return b.index < exe->num_outputs;
  case DMLC_BINDING_TEMP:
    return b.index < exe->num_temps;
  }
  return false;
}

static dmlc_status check_kernel_bindings(const cpu_executable *exe, const dmlc_kdesc *k, uint32_t i,
                                         dmlc_diag *diag) {
  bool ok = k->num_outputs <= DMLC_KDESC_MAX_OUTPUTS &&
            (!k->has_read || binding_valid(exe, k->read_binding));
  for (uint32_t o = 0; ok && o < k->num_outputs; o++)
    ok = binding_valid(exe, k->outputs[o].binding);
  return ok ? DMLC_OK
            : dmlc_diag_set(diag, DMLC_ERROR_INTERNAL,
                            "kernel %u of the plan binds a buffer the graph does not have", i);
}

static void workspace_destroy(const cpu_executable *exe, cpu_workspace *ws) {
  for (uint32_t i = 0; ws->temps && i < exe->num_temps; i++)
    free(ws->temps[i]);
  free(ws->temps);
  free(ws->scratch);
  free(ws->io);
  memset(ws, 0, sizeof *ws);
}

static dmlc_status workspace_create(const cpu_executable *exe, cpu_workspace *ws, dmlc_diag *diag) {
  const uint32_t io = exe->num_inputs + exe->num_outputs;
  ws->io = calloc(io ? io : 1, sizeof *ws->io);
  ws->temps = calloc(exe->num_temps ? exe->num_temps : 1, sizeof *ws->temps);
  if (!ws->io || !ws->temps) {
    workspace_destroy(exe, ws);
    return dmlc_diag_set(diag, DMLC_ERROR_OUT_OF_MEMORY, "out of memory for an execute's bindings");
  }
  for (uint32_t i = 0; i < exe->num_temps; i++)
    if (!(ws->temps[i] = dmlc_host_alloc(exe->temp_bytes[i], BUFFER_ALIGNMENT))) {
      const uint64_t bytes = exe->temp_bytes[i];
      workspace_destroy(exe, ws);
      return dmlc_diag_set(diag, DMLC_ERROR_OUT_OF_MEMORY,
                           "out of memory for a temporary of %llu bytes",
                           (unsigned long long)bytes);
    }
  if (exe->scratch_bytes &&
      !(ws->scratch = dmlc_host_alloc(exe->scratch_bytes, BUFFER_ALIGNMENT))) {
    workspace_destroy(exe, ws);
    return dmlc_diag_set(diag, DMLC_ERROR_OUT_OF_MEMORY,
                         "out of memory for %llu bytes of kernel scratch",
                         (unsigned long long)exe->scratch_bytes);
  }
  return DMLC_OK;
}

static dmlc_status executable_fill(cpu_executable *exe, const dmlc_kernel_plan *plan,
                                   dmlc_diag *diag) {
  exe->kernels = calloc(plan->num_kernels ? plan->num_kernels : 1, sizeof *exe->kernels);
  exe->temp_bytes = calloc(plan->num_temps ? plan->num_temps : 1, sizeof *exe->temp_bytes);
  if (!exe->kernels || !exe->temp_bytes)
    return dmlc_diag_set(diag, DMLC_ERROR_OUT_OF_MEMORY, "out of memory compiling");
  exe->num_temps = plan->num_temps;
  for (uint32_t i = 0; i < plan->num_temps; i++)
    exe->temp_bytes[i] = plan->temp_bytes[i];
  uint64_t scratch_bytes = 0;
  for (; exe->num_kernels < plan->num_kernels; exe->num_kernels++) {
    cpu_kernel *k = &exe->kernels[exe->num_kernels];
    k->desc = plan->kernels[exe->num_kernels];
    DMLC_RETURN_IF_ERROR(check_kernel_bindings(exe, &k->desc, exe->num_kernels, diag));
    void *cached;
    DMLC_RETURN_IF_ERROR(dmlc_kernel_cache_get(exe->dev->cache, &k->desc, &cached, &k->key, diag));
    k->cached = cached;
    if (k->cached->kernel.info.scratch_bytes > scratch_bytes)
      scratch_bytes = k->cached->kernel.info.scratch_bytes;
  }
  exe->scratch_bytes = scratch_bytes;
  return workspace_create(exe, &exe->own, diag);
}

static void cpu_executable_destroy(dmlc_rt_executable *e) {
  cpu_executable *exe = executable_of(e);
  if (!exe)
    return;
  workspace_destroy(exe, &exe->own);
  free(exe->temp_bytes);
  free(exe->kernels);
  free(exe);
}

static dmlc_status cpu_compile(dmlc_rt_device *d, const dmlc_rt_program *program,
                               dmlc_rt_executable **out, dmlc_diag *diag) {
  *out = NULL;
  cpu_executable *exe = calloc(1, sizeof *exe);
  if (!exe)
    return dmlc_diag_set(diag, DMLC_ERROR_OUT_OF_MEMORY, "out of memory compiling");
  exe->dev = device_of(d);
  atomic_flag_clear(&exe->own_busy);
  exe->num_inputs = program->graph->num_inputs;
  exe->num_outputs = program->graph->num_outputs;
  const dmlc_status status = executable_fill(exe, program->plan, diag);
  if (status != DMLC_OK) {
    cpu_executable_destroy((dmlc_rt_executable *)exe);
    return status;
  }
  *out = (dmlc_rt_executable *)exe;
  return DMLC_OK;
}

static void *bound(const cpu_executable *exe, const cpu_workspace *ws, dmlc_binding b) {
  switch (b.kind) {
  case DMLC_BINDING_INPUT:
    return ws->io[b.index];
  case DMLC_BINDING_OUTPUT:
    return ws->io[exe->num_inputs + b.index];
  case DMLC_BINDING_TEMP:
    return ws->temps[b.index];
  }
  return NULL;
}

/* Tasks per chunk: CHUNKS_PER_THREAD chunks per thread, but no chunk under
 * MIN_CHUNK_BYTES. */
static uint64_t chunk_tasks(const dmlc_cpu_kernel_info *info, uint32_t threads) {
  const uint64_t per_thread_split = (uint64_t)threads * CHUNKS_PER_THREAD;
  uint64_t chunk = (info->num_tasks + per_thread_split - 1) / per_thread_split;
  const uint64_t per_task = info->bytes_per_task ? info->bytes_per_task : 1;
  const uint64_t min_chunk = (MIN_CHUNK_BYTES + per_task - 1) / per_task;
  return chunk < min_chunk ? min_chunk : chunk;
}

static void run_kernel(cpu_executable *exe, const cpu_workspace *ws, const cpu_kernel *k) {
  void *buffers[2 + DMLC_KDESC_MAX_OUTPUTS] = {0};
  const dmlc_kdesc *d = &k->desc;
  if (d->has_read)
    buffers[0] = bound(exe, ws, d->read_binding);
  for (uint32_t o = 0; o < d->num_outputs; o++)
    buffers[1 + o] = bound(exe, ws, d->outputs[o].binding);
  buffers[1 + d->num_outputs] = ws->scratch;

  const dmlc_llvm_kernel *kernel = &k->cached->kernel;
  const dmlc_cpu_kernel_info *info = &kernel->info;
  uint64_t total_bytes;
  if (__builtin_mul_overflow(info->bytes_per_task, info->num_tasks, &total_bytes))
    total_bytes = UINT64_MAX;
  dmlc_thread_pool *pool = exe->dev->pool;
  const uint32_t threads = dmlc_thread_pool_num_threads(pool);
  const bool splits = threads > 1 && info->num_tasks > 1;
  const bool medium = splits && total_bytes >= DMLC_CPU_PARALLEL_HOT_MIN_BYTES &&
                      total_bytes < DMLC_CPU_PARALLEL_MIN_BYTES;
  if (splits &&
      (total_bytes >= DMLC_CPU_PARALLEL_MIN_BYTES || (medium && dmlc_thread_pool_hot(pool)))) {
    dmlc_thread_pool_run(pool, info->num_tasks, chunk_tasks(info, threads), kernel->fn, buffers);
  } else {
    kernel->fn(buffers, 0, info->num_tasks);
    if (medium)
      dmlc_thread_pool_ran_alone(pool); /* the next such kernel soon after splits */
  }
  if (info->has_finish)
    kernel->finish(buffers);
}

static dmlc_status cpu_execute(dmlc_rt_executable *e, const dmlc_rt_binding *inputs,
                               const dmlc_rt_binding *outputs, dmlc_diag *diag) {
  cpu_executable *exe = executable_of(e);
  cpu_workspace mine = {0}, *ws = &exe->own;
  if (atomic_flag_test_and_set_explicit(&exe->own_busy, memory_order_acquire)) {
    DMLC_RETURN_IF_ERROR(workspace_create(exe, &mine, diag));
    ws = &mine;
  }
  for (uint32_t i = 0; i < exe->num_inputs; i++)
    ws->io[i] = dmlc_host_binding_data(&inputs[i]);
  for (uint32_t i = 0; i < exe->num_outputs; i++)
    ws->io[exe->num_inputs + i] = dmlc_host_binding_data(&outputs[i]);
  for (uint32_t i = 0; i < exe->num_kernels; i++)
    run_kernel(exe, ws, &exe->kernels[i]);
  if (ws == &mine)
    workspace_destroy(exe, &mine);
  else
    atomic_flag_clear_explicit(&exe->own_busy, memory_order_release);
  return DMLC_OK;
}

/* ---- dumps ---- */

static dmlc_status ensure_text(cpu_executable *exe, cpu_kernel *k, dmlc_diag *diag) {
  if (k->cached->text.llvm_ir)
    return DMLC_OK;
  return dmlc_llvm_jit_compile(exe->dev->jit, &k->desc, NULL, &k->cached->text, diag);
}

static dmlc_status cpu_dump(dmlc_rt_executable *e, const char *what, char **out_text,
                            dmlc_diag *diag) {
  cpu_executable *exe = executable_of(e);
  *out_text = NULL;
  const bool kernels = strcmp(what, "kernels") == 0, llvm = strcmp(what, "llvm") == 0;
  const char *comment = kernels ? "//" : llvm ? ";" : "#";
  dmlc_strbuf sb = {0};
  for (uint32_t i = 0; i < exe->num_kernels; i++) {
    cpu_kernel *k = &exe->kernels[i];
    const dmlc_cpu_kernel_info *info = &k->cached->kernel.info;
    dmlc_strbuf_printf(
        &sb, "%s kernel %u: %llu task%s, %llu byte%s per task, %llu scratch byte%s%s%s\n", comment,
        i, (unsigned long long)info->num_tasks, DMLC_PLURAL(info->num_tasks),
        (unsigned long long)info->bytes_per_task, DMLC_PLURAL(info->bytes_per_task),
        (unsigned long long)info->scratch_bytes, DMLC_PLURAL(info->scratch_bytes),
        info->has_finish ? ", finish" : "", k->cached->kernel.fast_tier ? ", fast tier" : "");
    if (kernels) {
      dmlc_strbuf_append(&sb, k->key);
    } else {
      const dmlc_status status = ensure_text(exe, k, diag);
      if (status != DMLC_OK) {
        dmlc_strbuf_free(&sb);
        return status;
      }
      dmlc_strbuf_append(&sb, llvm ? k->cached->text.llvm_ir : k->cached->text.assembly);
    }
    dmlc_strbuf_end_line(&sb);
  }
  *out_text = dmlc_strbuf_finish(&sb);
  return *out_text ? DMLC_OK
                   : dmlc_diag_set(diag, DMLC_ERROR_OUT_OF_MEMORY, "out of memory dumping kernels");
}

static const dmlc_dump_kind cpu_dump_kinds[] = {
    {"kernels", "kernels"}, {"llvm", "LLVM code"}, {"asm", "LLVM code"}, {NULL, NULL}};

const dmlc_device_vtable dmlc_cpu_device_vtable = {
    .compiles_plan = true,
    .concurrent_execute = true,
    .create = cpu_create,
    .destroy = cpu_destroy,
    .describe = cpu_describe,
    .set_num_threads = cpu_set_num_threads,
    .compile_count = cpu_compile_count,
    .compile = cpu_compile,
    .executable_destroy = cpu_executable_destroy,
    .execute = cpu_execute,
    .dump_kinds = cpu_dump_kinds,
    .dump = cpu_dump,
    .tensor_create = dmlc_host_tensor_create,
    .tensor_write = dmlc_host_tensor_write,
    .tensor_read = dmlc_host_tensor_read,
    .tensor_map = dmlc_host_tensor_map,
    .tensor_destroy = dmlc_host_tensor_destroy,
};
