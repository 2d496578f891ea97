/* The one device interface (as IREE's HAL drivers implement one vtable).
 * Every device — the reference evaluator, the CPU JIT, Vulkan — implements
 * dmlc_device_vtable; api/ finds a device in the registry (runtime/registry.c)
 * and calls it through the vtable, never by name. Adding a device is a folder
 * under runtime/ with one vtable and a line in the registry
 * (docs/architecture.md, "Adding a device").
 *
 * Lifetimes: a context opens each device it uses once (create), on the first
 * call that needs it, and destroys it last. Executables and tensors belong
 * to the device that made them and are destroyed before it. */
#ifndef DMLC_RUNTIME_DEVICE_H
#define DMLC_RUNTIME_DEVICE_H

#include "codegen/kernel_desc.h"
#include "ir/ir.h"

/* Each device defines these three for itself. */
typedef struct dmlc_rt_device dmlc_rt_device;
typedef struct dmlc_rt_executable dmlc_rt_executable;
typedef struct dmlc_rt_tensor dmlc_rt_tensor;

/* What a device compiles: the graph as the user gave it (its inputs and
 * outputs are the bindings, in order) and, for a device that generates code
 * (vtable.compiles_plan), the kernel plan of the graph after the default
 * pipeline, built once by the API for every such device. */
typedef struct dmlc_rt_program {
  const dmlc_ir_graph *graph;
  const dmlc_kernel_plan *plan; /* NULL unless compiles_plan */
} dmlc_rt_program;

/* One graph input or output at execute: a host buffer (dmlc_execute) or a
 * tensor of the executable's device (dmlc_execute_tensors), already checked
 * by the API (size, alignment, aliasing, device). */
typedef struct dmlc_rt_binding {
  void *host;             /* NULL when tensor is set */
  dmlc_rt_tensor *tensor; /* NULL when host is set */
  uint64_t size_bytes;    /* of the host buffer or the tensor */
} dmlc_rt_binding;

/* Context-wide settings a device may use. */
typedef struct dmlc_rt_options {
  uint32_t num_threads; /* 0: the online cores */
} dmlc_rt_options;

/* A kind of dmlc_executable_dump text: its name ("llvm") and how a message
 * names it ("LLVM code"). */
typedef struct dmlc_dump_kind {
  const char *name;
  const char *what;
} dmlc_dump_kind;

typedef struct dmlc_device_vtable {
  /* Compiles dmlc_rt_program.plan (code generation); false: evaluates the
   * graph as given. */
  bool compiles_plan;
  /* Whether executes (and tensor reads and writes) of one context may run
   * concurrently on this device; false: the API runs them one at a time
   * under the context's lock (Vulkan: one queue, one command pool). */
  bool concurrent_execute;
  /* Opens the device. Cheap where it can be: a device whose setup is costly
   * or may fail for lack of hardware (Vulkan) defers it to the first compile
   * or tensor, so describe works without it. */
  dmlc_status (*create)(const dmlc_rt_options *options, dmlc_rt_device **out, dmlc_diag *diag);
  void (*destroy)(dmlc_rt_device *dev);
  /* What the device is, as dmlc_device_describe documents; malloc'ed. */
  dmlc_status (*describe)(dmlc_rt_device *dev, char **out_text, dmlc_diag *diag);
  /* NULL for a device without threads of its own. */
  dmlc_status (*set_num_threads)(dmlc_rt_device *dev, uint32_t num_threads, dmlc_diag *diag);
  /* How many kernels the device has compiled (its kernel cache's misses);
   * NULL for a device without kernels. For tests. */
  uint64_t (*compile_count)(const dmlc_rt_device *dev);

  dmlc_status (*compile)(dmlc_rt_device *dev, const dmlc_rt_program *program,
                         dmlc_rt_executable **out, dmlc_diag *diag);
  void (*executable_destroy)(dmlc_rt_executable *exe);
  /* inputs[i] / outputs[i] bind the graph's input / output i. */
  dmlc_status (*execute)(dmlc_rt_executable *exe, const dmlc_rt_binding *inputs,
                         const dmlc_rt_binding *outputs, dmlc_diag *diag);
  /* The kinds dmlc_executable_dump accepts for this device; ends with a
   * {NULL, NULL} entry. */
  const dmlc_dump_kind *dump_kinds;
  /* what is one of dump_kinds; malloc'ed text. */
  dmlc_status (*dump)(dmlc_rt_executable *exe, const char *what, char **out_text, dmlc_diag *diag);
  /* Fills ns[0 .. min(max, n)) with the last execute's device time per
   * kernel and returns n, the kernel count; NULL: no device timestamps. */
  size_t (*kernel_times)(const dmlc_rt_executable *exe, double *ns, size_t max);
  /* Whether later executes measure kernel times; NULL with kernel_times. */
  void (*set_profiling)(dmlc_rt_executable *exe, bool on);

  /* Tensors: size_bytes > 0, zeroed. The API checks offsets and sizes. */
  dmlc_status (*tensor_create)(dmlc_rt_device *dev, uint64_t size_bytes, dmlc_rt_tensor **out,
                               dmlc_diag *diag);
  dmlc_status (*tensor_write)(dmlc_rt_tensor *t, uint64_t offset, const void *src, uint64_t size,
                              dmlc_diag *diag);
  dmlc_status (*tensor_read)(const dmlc_rt_tensor *t, uint64_t offset, void *dst, uint64_t size,
                             dmlc_diag *diag);
  /* The tensor's host address, or NULL where the host cannot address it. */
  void *(*tensor_map)(dmlc_rt_tensor *t);
  void (*tensor_destroy)(dmlc_rt_tensor *t);
} dmlc_device_vtable;

/* ---- the registry (runtime/registry.c) ---- */

typedef struct dmlc_device_entry {
  dmlc_device id;
  const char *name;
  /* NULL: a device of the public enum that this build leaves out. */
  const dmlc_device_vtable *vtable;
  /* Why it is left out, for the message. */
  const char *not_built;
} dmlc_device_entry;

/* Every device of the public enum, built or not, in the registry's order. */
size_t dmlc_device_registry_size(void);
const dmlc_device_entry *dmlc_device_registry_entry(size_t index);
/* The entry of device (DMLC_DEVICE_DEFAULT: the default device's); NULL for
 * a value that names no device. */
const dmlc_device_entry *dmlc_device_registry_find(dmlc_device device);

/* The vtables, each defined in its device's folder. */
extern const dmlc_device_vtable dmlc_reference_device_vtable;
extern const dmlc_device_vtable dmlc_cpu_device_vtable;
extern const dmlc_device_vtable dmlc_vulkan_device_vtable;

#endif
