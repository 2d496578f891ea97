/* See cpu_device.h. */
#include "runtime/cpu/cpu_device.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "codegen/kernel_desc.h"
#include "codegen/llvm/jit.h"
#include "runtime/cpu/thread_pool.h"

/* Splits aim for this many chunks per thread (to even out uneven progress)
 * and at least this many bytes per chunk (to amortize claiming one). */
enum { CHUNKS_PER_THREAD = 4, MIN_CHUNK_BYTES = 32 * 1024, BUFFER_ALIGNMENT = 64 };

typedef struct cache_entry {
  uint64_t hash;
  char *key; /* dmlc_kdesc_print of the kernel */
  dmlc_llvm_kernel kernel;
  dmlc_llvm_text text; /* filled by the first dump that needs it */
} cache_entry;

struct dmlc_cpu_device {
  dmlc_llvm_jit *jit;
  dmlc_thread_pool *pool;
  /* Open addressing, linear probing; capacity a power of two, at most half
   * full. */
  cache_entry **slots;
  uint32_t capacity, count;
  uint64_t compile_count;
};

typedef struct cpu_kernel {
  dmlc_kdesc desc;
  cache_entry *entry; /* owned by the device's cache */
} cpu_kernel;

struct dmlc_cpu_executable {
  dmlc_cpu_device *dev;
  uint32_t num_inputs, num_outputs;
  uint32_t num_kernels;
  cpu_kernel *kernels;
  uint32_t num_temps;
  void **temps;  /* BUFFER_ALIGNMENT-aligned */
  void *scratch; /* the largest scratch any kernel needs, shared: they run in turn */
};

/* ---- the device ---- */

dmlc_status dmlc_cpu_device_create(uint32_t num_threads, dmlc_cpu_device **out, dmlc_diag *diag) {
  *out = NULL;
  dmlc_cpu_device *dev = calloc(1, sizeof *dev);
  if (!dev)
    return dmlc_diag_set(diag, DMLC_ERROR_OUT_OF_MEMORY, "out of memory creating the CPU device");
  dmlc_status status = dmlc_thread_pool_create(num_threads, &dev->pool);
  if (status != DMLC_OK)
    dmlc_diag_set(diag, status, "out of memory creating the thread pool");
  else
    status = dmlc_llvm_jit_create(&dev->jit, diag);
  if (status != DMLC_OK) {
    dmlc_cpu_device_destroy(dev);
    return status;
  }
  *out = dev;
  return DMLC_OK;
}

void dmlc_cpu_device_destroy(dmlc_cpu_device *dev) {
  if (!dev)
    return;
  for (uint32_t i = 0; i < dev->capacity; i++) {
    cache_entry *e = dev->slots[i];
    if (e) {
      free(e->key);
      dmlc_llvm_text_free(&e->text);
      free(e);
    }
  }
  free(dev->slots);
  dmlc_thread_pool_destroy(dev->pool);
  dmlc_llvm_jit_destroy(dev->jit);
  free(dev);
}

dmlc_status dmlc_cpu_device_set_num_threads(dmlc_cpu_device *dev, uint32_t num_threads,
                                            dmlc_diag *diag) {
  dmlc_thread_pool *pool;
  if (dmlc_thread_pool_create(num_threads, &pool) != DMLC_OK)
    return dmlc_diag_set(diag, DMLC_ERROR_OUT_OF_MEMORY, "out of memory creating the thread pool");
  dmlc_thread_pool_destroy(dev->pool);
  dev->pool = pool;
  return DMLC_OK;
}

uint32_t dmlc_cpu_device_num_threads(const dmlc_cpu_device *dev) {
  return dmlc_thread_pool_num_threads(dev->pool);
}

uint64_t dmlc_cpu_device_compile_count(const dmlc_cpu_device *dev) { return dev->compile_count; }

char *dmlc_cpu_device_describe(const dmlc_cpu_device *dev) {
  const uint32_t threads = dmlc_cpu_device_num_threads(dev);
  char line[256];
  snprintf(line, sizeof line, "%s, CPU %s, %u-bit vectors, %u thread%s",
           dmlc_llvm_jit_triple(dev->jit), dmlc_llvm_jit_cpu_name(dev->jit),
           dmlc_llvm_jit_vector_bytes(dev->jit) * 8, threads, threads == 1 ? "" : "s");
  return strdup(line);
}

/* ---- the kernel cache ---- */

static uint64_t fnv1a(const char *s) {
  uint64_t h = 0xcbf29ce484222325ull;
  for (; *s; s++)
    h = (h ^ (unsigned char)*s) * 0x100000001b3ull;
  return h;
}

static cache_entry **cache_slot(const dmlc_cpu_device *dev, uint64_t hash, const char *key) {
  const uint32_t mask = dev->capacity - 1;
  for (uint32_t i = (uint32_t)hash & mask;; i = (i + 1) & mask) {
    cache_entry **slot = &dev->slots[i];
    if (!*slot || ((*slot)->hash == hash && strcmp((*slot)->key, key) == 0))
      return slot;
  }
}

static bool cache_grow(dmlc_cpu_device *dev) {
  if (2 * (dev->count + 1) <= dev->capacity)
    return true;
  const uint32_t capacity = dev->capacity ? 2 * dev->capacity : 64;
  cache_entry **old = dev->slots;
  const uint32_t old_capacity = dev->capacity;
  dev->slots = calloc(capacity, sizeof *dev->slots);
  if (!dev->slots) {
    dev->slots = old;
    return false;
  }
  dev->capacity = capacity;
  for (uint32_t i = 0; i < old_capacity; i++)
    if (old[i])
      *cache_slot(dev, old[i]->hash, old[i]->key) = old[i];
  free(old);
  return true;
}

/* The cached compilation of k, compiling it on a miss. */
static dmlc_status cache_get(dmlc_cpu_device *dev, const dmlc_kdesc *k, cache_entry **out,
                             dmlc_diag *diag) {
  char *key = dmlc_kdesc_print(k);
  if (!key || !cache_grow(dev)) {
    free(key);
    return dmlc_diag_set(diag, DMLC_ERROR_OUT_OF_MEMORY, "out of memory caching a kernel");
  }
  const uint64_t hash = fnv1a(key);
  cache_entry **slot = cache_slot(dev, hash, key);
  if (*slot) {
    free(key);
    *out = *slot;
    return DMLC_OK;
  }
  cache_entry *e = calloc(1, sizeof *e);
  if (!e) {
    free(key);
    return dmlc_diag_set(diag, DMLC_ERROR_OUT_OF_MEMORY, "out of memory caching a kernel");
  }
  const dmlc_status status = dmlc_llvm_jit_compile(dev->jit, k, &e->kernel, NULL, diag);
  if (status != DMLC_OK) {
    free(key);
    free(e);
    return status;
  }
  dev->compile_count++;
  e->hash = hash;
  e->key = key;
  *slot = e;
  dev->count++;
  *out = e;
  return DMLC_OK;
}

/* ---- executables ---- */

static void *aligned_buffer(uint64_t bytes) {
  const uint64_t size = bytes ? (bytes + BUFFER_ALIGNMENT - 1) / BUFFER_ALIGNMENT * BUFFER_ALIGNMENT
                              : BUFFER_ALIGNMENT;
  return size > SIZE_MAX ? NULL : aligned_alloc(BUFFER_ALIGNMENT, (size_t)size);
}

static bool binding_valid(const dmlc_cpu_executable *exe, dmlc_binding b) {
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

static dmlc_status check_bindings(const dmlc_cpu_executable *exe, const dmlc_kdesc *k, uint32_t i,
                                  dmlc_diag *diag) {
  bool ok = k->num_outputs <= DMLC_KDESC_MAX_OUTPUTS &&
            (!k->has_read || binding_valid(exe, k->read_binding));
  for (uint32_t o = 0; ok && o < k->num_outputs; o++)
    ok = binding_valid(exe, k->outputs[o].binding);
  return ok ? DMLC_OK
            : dmlc_diag_set(diag, DMLC_ERROR_INTERNAL,
                            "kernel %u of the plan binds a buffer the graph does not have", i);
}

static dmlc_status executable_fill(dmlc_cpu_executable *exe, const dmlc_kernel_plan *plan,
                                   dmlc_diag *diag) {
  exe->kernels = calloc(plan->num_kernels ? plan->num_kernels : 1, sizeof *exe->kernels);
  exe->temps = calloc(plan->num_temps ? plan->num_temps : 1, sizeof *exe->temps);
  if (!exe->kernels || !exe->temps)
    return dmlc_diag_set(diag, DMLC_ERROR_OUT_OF_MEMORY, "out of memory compiling");
  for (; exe->num_temps < plan->num_temps; exe->num_temps++)
    if (!(exe->temps[exe->num_temps] = aligned_buffer(plan->temp_bytes[exe->num_temps])))
      return dmlc_diag_set(diag, DMLC_ERROR_OUT_OF_MEMORY,
                           "out of memory for a temporary of %llu bytes",
                           (unsigned long long)plan->temp_bytes[exe->num_temps]);
  uint64_t scratch_bytes = 0;
  for (; exe->num_kernels < plan->num_kernels; exe->num_kernels++) {
    cpu_kernel *k = &exe->kernels[exe->num_kernels];
    k->desc = plan->kernels[exe->num_kernels];
    DMLC_RETURN_IF_ERROR(check_bindings(exe, &k->desc, exe->num_kernels, diag));
    DMLC_RETURN_IF_ERROR(cache_get(exe->dev, &k->desc, &k->entry, diag));
    if (k->entry->kernel.info.scratch_bytes > scratch_bytes)
      scratch_bytes = k->entry->kernel.info.scratch_bytes;
  }
  if (scratch_bytes && !(exe->scratch = aligned_buffer(scratch_bytes)))
    return dmlc_diag_set(diag, DMLC_ERROR_OUT_OF_MEMORY,
                         "out of memory for %llu bytes of kernel scratch",
                         (unsigned long long)scratch_bytes);
  return DMLC_OK;
}

dmlc_status dmlc_cpu_executable_create(dmlc_cpu_device *dev, const dmlc_ir_graph *fused,
                                       dmlc_cpu_executable **out, dmlc_diag *diag) {
  *out = NULL;
  dmlc_cpu_executable *exe = calloc(1, sizeof *exe);
  if (!exe)
    return dmlc_diag_set(diag, DMLC_ERROR_OUT_OF_MEMORY, "out of memory compiling");
  exe->dev = dev;
  exe->num_inputs = fused->num_inputs;
  exe->num_outputs = fused->num_outputs;
  dmlc_kernel_plan plan = {0};
  dmlc_status status = dmlc_kernel_plan_build(fused, &plan, diag);
  if (status == DMLC_OK)
    status = executable_fill(exe, &plan, diag);
  dmlc_kernel_plan_free(&plan);
  if (status != DMLC_OK) {
    dmlc_cpu_executable_destroy(exe);
    return status;
  }
  *out = exe;
  return DMLC_OK;
}

void dmlc_cpu_executable_destroy(dmlc_cpu_executable *exe) {
  if (!exe)
    return;
  for (uint32_t i = 0; i < exe->num_temps; i++)
    free(exe->temps[i]);
  free(exe->temps);
  free(exe->scratch);
  free(exe->kernels);
  free(exe);
}

static void *bound(const dmlc_cpu_executable *exe, dmlc_binding b, const dmlc_buffer *inputs,
                   const dmlc_buffer *outputs) {
  switch (b.kind) {
  case DMLC_BINDING_INPUT:
    return inputs[b.index].data;
  case DMLC_BINDING_OUTPUT:
    return outputs[b.index].data;
  case DMLC_BINDING_TEMP:
    return exe->temps[b.index];
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

static void run_kernel(dmlc_cpu_executable *exe, const cpu_kernel *k, const dmlc_buffer *inputs,
                       const dmlc_buffer *outputs) {
  void *buffers[2 + DMLC_KDESC_MAX_OUTPUTS] = {0};
  const dmlc_kdesc *d = &k->desc;
  if (d->has_read)
    buffers[0] = bound(exe, d->read_binding, inputs, outputs);
  for (uint32_t o = 0; o < d->num_outputs; o++)
    buffers[1 + o] = bound(exe, d->outputs[o].binding, inputs, outputs);
  buffers[1 + d->num_outputs] = exe->scratch;

  const dmlc_llvm_kernel *kernel = &k->entry->kernel;
  const dmlc_cpu_kernel_info *info = &kernel->info;
  uint64_t total_bytes;
  if (__builtin_mul_overflow(info->bytes_per_task, info->num_tasks, &total_bytes))
    total_bytes = UINT64_MAX;
  const uint32_t threads = dmlc_thread_pool_num_threads(exe->dev->pool);
  if (threads == 1 || info->num_tasks < 2 || total_bytes < DMLC_CPU_PARALLEL_MIN_BYTES)
    kernel->fn(buffers, 0, info->num_tasks);
  else
    dmlc_thread_pool_run(exe->dev->pool, info->num_tasks, chunk_tasks(info, threads), kernel->fn,
                         buffers);
  if (info->has_finish)
    kernel->finish(buffers);
}

void dmlc_cpu_executable_run(dmlc_cpu_executable *exe, const dmlc_buffer *inputs,
                             const dmlc_buffer *outputs) {
  for (uint32_t i = 0; i < exe->num_kernels; i++)
    run_kernel(exe, &exe->kernels[i], inputs, outputs);
}

/* ---- dumps ---- */

typedef struct strbuf {
  char *data;
  size_t length, capacity;
  bool failed;
} strbuf;

static void sb_append(strbuf *sb, const char *s) {
  const size_t n = strlen(s);
  if (sb->failed)
    return;
  if (sb->length + n + 1 > sb->capacity) {
    size_t capacity = sb->capacity ? sb->capacity : 1024;
    while (capacity < sb->length + n + 1)
      capacity *= 2;
    char *grown = realloc(sb->data, capacity);
    if (!grown) {
      sb->failed = true;
      return;
    }
    sb->data = grown;
    sb->capacity = capacity;
  }
  memcpy(sb->data + sb->length, s, n + 1);
  sb->length += n;
}

static void sb_line_end(strbuf *sb) {
  if (sb->length && sb->data[sb->length - 1] != '\n')
    sb_append(sb, "\n");
}

static dmlc_status ensure_text(dmlc_cpu_executable *exe, cache_entry *e, const dmlc_kdesc *k,
                               dmlc_diag *diag) {
  if (e->text.llvm_ir)
    return DMLC_OK;
  return dmlc_llvm_jit_compile(exe->dev->jit, k, NULL, &e->text, diag);
}

dmlc_status dmlc_cpu_executable_dump(dmlc_cpu_executable *exe, const char *what, char **out_text,
                                     dmlc_diag *diag) {
  *out_text = NULL;
  const bool kernels = strcmp(what, "kernels") == 0, llvm = strcmp(what, "llvm") == 0,
             assembly = strcmp(what, "asm") == 0;
  if (!kernels && !llvm && !assembly)
    return dmlc_diag_set(diag, DMLC_ERROR_INVALID_ARGUMENT,
                         "cannot dump '%s' (kernels, llvm or asm)", what);
  strbuf sb = {0};
  for (uint32_t i = 0; i < exe->num_kernels; i++) {
    cpu_kernel *k = &exe->kernels[i];
    const dmlc_cpu_kernel_info *info = &k->entry->kernel.info;
    char header[256];
    snprintf(header, sizeof header,
             "%s kernel %u: %llu tasks, %llu bytes per task, %llu scratch bytes%s\n",
             assembly ? "#"
             : llvm   ? ";"
                      : "//",
             i, (unsigned long long)info->num_tasks, (unsigned long long)info->bytes_per_task,
             (unsigned long long)info->scratch_bytes, info->has_finish ? ", finish" : "");
    sb_append(&sb, header);
    if (kernels) {
      sb_append(&sb, k->entry->key);
    } else {
      const dmlc_status status = ensure_text(exe, k->entry, &k->desc, diag);
      if (status != DMLC_OK) {
        free(sb.data);
        return status;
      }
      sb_append(&sb, llvm ? k->entry->text.llvm_ir : k->entry->text.assembly);
    }
    sb_line_end(&sb);
  }
  if (!sb.data)
    sb_append(&sb, "");
  if (sb.failed) {
    free(sb.data);
    return dmlc_diag_set(diag, DMLC_ERROR_OUT_OF_MEMORY, "out of memory dumping kernels");
  }
  *out_text = sb.data;
  return DMLC_OK;
}
