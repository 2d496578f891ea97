/* dmlc: a graph compiler and runtime for DirectML-style operators.
 *
 * Every fallible call returns a dmlc_status; on failure the context keeps a
 * human-readable message for the calling thread, returned by
 * dmlc_context_error(). No call aborts on bad input. Graphs and executables
 * belong to the context that created them and must be destroyed before it.
 *
 * Threads (docs/reliability.md):
 * - Contexts are independent: any number may be used side by side, one
 *   thread or many each.
 * - One context may be used from many threads at once: compiles
 *   (dmlc_graph_compile, dmlc_operator_compile, dmlc_graph_emit), executes,
 *   tensor calls, dumps and destroys of distinct objects. Compiles and other
 *   calls that change the context's devices take the context's lock and run
 *   one at a time; building the plan (the passes) runs outside it.
 * - One executable may be executed from many threads at once
 *   (dmlc_execute, dmlc_execute_tensors), each call with its own buffers.
 *   On the reference device and the CPU the calls run in parallel (a CPU
 *   call that finds the context's thread pool busy runs its kernels on its
 *   own thread: no waiting on another call, never more threads than the
 *   pool's); on Vulkan a context's executes and tensor reads and writes run
 *   one at a time under its lock (one queue, one command pool).
 *   dmlc_executable_kernel_times reports the last execute of any thread.
 * - A graph (dmlc_graph_*) is used by one thread at a time; calls that only
 *   read it (compile, verify, print, emit) may run on several at once.
 * - Not concurrently with anything else on the same object: destroying it
 *   (a context, graph, executable or tensor), dmlc_context_set_num_threads
 *   and dmlc_context_set_memory_limit (set them before sharing the context),
 *   and writing a tensor that another call reads or runs on.
 * - dmlc_context_error() returns the message of the calling thread's last
 *   failed call on ctx (kept for the last 4 contexts each thread used). */
#ifndef DMLC_DMLC_H
#define DMLC_DMLC_H

#include <stddef.h>
#include <stdint.h>

#include "dmlc/directml.h"

#ifdef __cplusplus
extern "C" {
#endif

#if defined(DMLC_BUILDING_LIBRARY)
#define DMLC_API __attribute__((visibility("default")))
#else
#define DMLC_API
#endif

typedef enum dmlc_status {
  DMLC_OK = 0,
  DMLC_ERROR_INVALID_ARGUMENT = 1, /* bad descriptor, IR text, buffer, ... */
  DMLC_ERROR_UNSUPPORTED = 2,      /* valid, but not built (yet) */
  DMLC_ERROR_OUT_OF_MEMORY = 3,
  DMLC_ERROR_DEVICE = 4,   /* the device failed or is not present */
  DMLC_ERROR_INTERNAL = 5, /* a bug in dmlc: please report it */
  DMLC_ERROR_IO = 6,       /* a file could not be read or written */
} dmlc_status;

typedef enum dmlc_device {
  DMLC_DEVICE_DEFAULT = 0, /* the fastest device built in: today the CPU */
  DMLC_DEVICE_REFERENCE = 1,
  DMLC_DEVICE_CPU = 2,    /* LLVM ORC JIT for the host CPU, with a thread pool */
  DMLC_DEVICE_VULKAN = 3, /* SPIR-V on dmlc's Vulkan runtime (any Vulkan 1.2 device) */
} dmlc_device;

typedef struct dmlc_context dmlc_context;
typedef struct dmlc_graph dmlc_graph;
typedef struct dmlc_executable dmlc_executable;
/* Memory on one device of one context (dmlc_tensor_create). */
typedef struct dmlc_tensor dmlc_tensor;

/* A host buffer bound to a graph input or output. */
typedef struct dmlc_buffer {
  void *data;
  uint64_t size_bytes;
} dmlc_buffer;

/* A value of a graph under construction (a graph input or an operator
 * result). */
typedef uint32_t dmlc_value;

#define DMLC_MAX_RANK 8

/* What an executable expects bound to one of its inputs or outputs. */
typedef struct dmlc_tensor_info {
  const char *name; /* valid while the executable lives */
  DML_TENSOR_DATA_TYPE data_type;
  uint32_t dimension_count;
  uint32_t sizes[DMLC_MAX_RANK];
  uint64_t strides[DMLC_MAX_RANK]; /* in elements */
  /* The smallest buffer accepted: the declared TotalTensorSizeInBytes for
   * a tensor described by a DML_BUFFER_TENSOR_DESC (or "size = N" in IR
   * text), as DirectML requires; otherwise (IR text, ONNX) the end of the
   * last element, any multiple of the element size (f16[3] takes 6 bytes). */
  uint64_t total_size_bytes;
  uint32_t alignment; /* GuaranteedBaseOffsetAlignment, or 0 */
} dmlc_tensor_info;

/* ---- status and context ---- */
DMLC_API const char *dmlc_status_string(dmlc_status status);
DMLC_API dmlc_status dmlc_context_create(dmlc_context **out);
DMLC_API void dmlc_context_destroy(dmlc_context *ctx);
/* The message of the calling thread's last failed call on ctx (or on a
 * graph, executable or tensor of ctx); "" if none failed. Valid until the
 * thread's next call on ctx. */
DMLC_API const char *dmlc_context_error(const dmlc_context *ctx);
DMLC_API const char *dmlc_device_name(dmlc_device device);
/* The devices built into this dmlc, in the registry's order (reference,
 * cpu, then vulkan when built): index < dmlc_device_count(). Past the end,
 * DMLC_DEVICE_DEFAULT. Whether a built device is present on this machine is
 * another question: dmlc_device_describe answers it. */
DMLC_API size_t dmlc_device_count(void);
DMLC_API dmlc_device dmlc_device_at(size_t index);
/* Text saying what device is on this machine; free it with dmlc_free. For
 * the CPU, one line: the target triple, CPU name, vector width and thread
 * count. For Vulkan, a few lines per physical device (name, type, driver,
 * workgroup and buffer limits, subgroup size, int64 / int16 / int8 /
 * float16 / float64 in shaders, 8- and 16-bit storage, timestamps), the one
 * dmlc compiles for marked "[selected]"; DMLC_ERROR_DEVICE (with the
 * runtime's message) when there is no Vulkan loader or device. Describing
 * Vulkan loads the loader but opens no device. */
DMLC_API dmlc_status dmlc_device_describe(dmlc_context *ctx, dmlc_device device, char **out_text);
/* The threads the CPU device of ctx runs kernels on, the calling thread
 * included; 0 = the online cores (the default). Takes effect at the next
 * dmlc_execute. The CPU device (its JIT, thread pool and kernel cache) is
 * created by the context's first CPU compile and lives as long as ctx; its
 * workers start on the first kernel big enough to split. */
DMLC_API dmlc_status dmlc_context_set_num_threads(dmlc_context *ctx, uint32_t n);

/* The most host memory dmlc allocates for the tensors of one graph or one
 * dmlc_tensor_create (the reference device's values, a host tensor), in
 * bytes; 0 (the default) = the machine's physical memory. A graph or a
 * tensor that needs more is DMLC_ERROR_OUT_OF_MEMORY, with a message giving
 * both sizes, before anything is allocated (docs/reliability.md). */
DMLC_API dmlc_status dmlc_context_set_memory_limit(dmlc_context *ctx, uint64_t bytes);

/* ---- one operator ---- */
/* Validates desc, builds a graph of that one operator (inputs named "input",
 * outputs "output") and compiles it for device. */
DMLC_API dmlc_status dmlc_operator_compile(dmlc_context *ctx, const DML_OPERATOR_DESC *desc,
                                           dmlc_device device, dmlc_executable **out);

/* ---- graphs ---- */
DMLC_API dmlc_status dmlc_graph_create(dmlc_context *ctx, const char *name, dmlc_graph **out);
DMLC_API void dmlc_graph_destroy(dmlc_graph *graph);
/* Adds a graph input with the layout of desc (a DML_TENSOR_DESC of type
 * DML_TENSOR_TYPE_BUFFER). name: [A-Za-z_][A-Za-z0-9_.]*, unique. */
DMLC_API dmlc_status dmlc_graph_add_input(dmlc_graph *graph, const char *name,
                                          const DML_TENSOR_DESC *desc, dmlc_value *out);
/* Adds an operator. inputs[i] is bound to the operator's i-th input tensor
 * (its InputTensor); the descriptor's tensor must have the value's data type
 * and sizes, and the value's strides (graph input) or none / packed ones
 * (operator result). outputs[i] receives the value of its i-th output. */
DMLC_API dmlc_status dmlc_graph_add_operator(dmlc_graph *graph, const DML_OPERATOR_DESC *desc,
                                             const dmlc_value *inputs, size_t input_count,
                                             dmlc_value *outputs, size_t output_count);
/* Makes value a graph output, laid out as the OutputTensor descriptor of the
 * operator that produced it (or as the input, for a graph input). */
DMLC_API dmlc_status dmlc_graph_add_output(dmlc_graph *graph, const char *name, dmlc_value value);
/* Parses IR text. filename is used in messages (file:line:col: message). */
DMLC_API dmlc_status dmlc_graph_parse(dmlc_context *ctx, const char *text, size_t length,
                                      const char *filename, dmlc_graph **out);
DMLC_API dmlc_status dmlc_graph_verify(dmlc_graph *graph);
/* Prints graph as IR text into a malloc'ed string; free it with dmlc_free. */
DMLC_API dmlc_status dmlc_graph_print(dmlc_graph *graph, char **out_text);
DMLC_API void dmlc_free(void *p);
/* ---- passes ---- */
typedef struct dmlc_pass_options {
  const char *print_ir_before; /* comma-separated pass names, "all", or NULL */
  const char *print_ir_after;  /* comma-separated pass names, "all", or NULL */
  int verify_each;             /* run the verifier after every pass */
  int timing;                  /* print a per-pass time table at the end */
  /* Where IR dumps and the timing table go; NULL: stderr. */
  void (*print)(void *user, const char *text);
  void *user;
} dmlc_pass_options;

/* Runs a comma-separated pipeline of passes on graph, in place. options may
 * be NULL. An unknown pass name is an error before anything runs. */
DMLC_API dmlc_status dmlc_graph_run_passes(dmlc_graph *graph, const char *pipeline,
                                           const dmlc_pass_options *options);
/* The pipeline dmlc_graph_compile runs for code-generating devices. */
DMLC_API const char *dmlc_default_pipeline(void);
DMLC_API size_t dmlc_pass_count(void);
DMLC_API const char *dmlc_pass_name(size_t index);    /* NULL past the end */
DMLC_API const char *dmlc_pass_summary(size_t index); /* NULL past the end */

/* Compiles a copy of graph (the graph stays usable). The reference device
 * evaluates the graph as given; the others run the default pipeline first.
 * The CPU and Vulkan devices compile each kernel once per context: a kernel
 * already compiled (in this or another graph) is found in the context's
 * cache. The first Vulkan compile of a context opens its Vulkan device (the
 * loader is dlopen'ed then, never before): with no Vulkan loader or device
 * it fails with DMLC_ERROR_DEVICE and the runtime's message. A Vulkan
 * executable owns device buffers for the graph's inputs, outputs and
 * temporaries; a tensor larger than the device's maxStorageBufferRange is
 * bound as windows (docs/api.md). A dmlc built with -DDMLC_VULKAN=OFF answers
 * DMLC_ERROR_UNSUPPORTED for DMLC_DEVICE_VULKAN. */
DMLC_API dmlc_status dmlc_graph_compile(dmlc_graph *graph, dmlc_device device,
                                        dmlc_executable **out);

/* ---- ahead-of-time compilation (docs/aot.md) ---- */

typedef struct dmlc_aot_options {
  const char *name;     /* prefix of every symbol (a C identifier); NULL: the graph's name */
  const char *target;   /* LLVM target triple; NULL: the host's */
  const char *cpu;      /* NULL: the host's CPU for the host triple, "generic" otherwise */
  const char *features; /* llc -mattr spelling; NULL: the host's when target and cpu are */
  int opt_level;        /* 0 to 3 (dmlc compile's default: 2) */
} dmlc_aot_options;

/* Compiles graph ahead of time into one output of kind: "ir" (the graph
 * after the default pipeline, as text), "llvm" (LLVM IR text), "bc"
 * (bitcode), "asm", "obj" (an ELF object exporting NAME_run,
 * NAME_run_parallel and NAME_run_workspace, needing no libdmlc), "header"
 * (their prototypes and the inputs' and outputs' layouts as constants) or
 * "staticlib" (an ar archive of the object, with its symbol index),
 * "metadata" (JSON) or "dot" (Graphviz). "spirv" is the SPIR-V module of
 * a graph of one kernel (little-endian words; a Vulkan 1.2 compute shader,
 * validated, needing no optional device feature: docs/aot.md), "spirv:I"
 * that of kernel I of any graph; "spirv-asm" and "spirv-asm:I" their
 * disassembly. Plain "spirv" on a graph of several kernels, and "spirv:I"
 * past the last kernel, are DMLC_ERROR_INVALID_ARGUMENT (the message says
 * how many there are); the metadata's "spirv" section says how to bind and
 * dispatch each module. Without the Vulkan backend (-DDMLC_VULKAN=OFF) the
 * SPIR-V kinds are DMLC_ERROR_UNSUPPORTED. "sharedlib" and "exe" are
 * DMLC_ERROR_UNSUPPORTED (the library runs no linker: `dmlc compile` links
 * the object with the C compiler).
 * *out_data (free with dmlc_free) holds *out_size bytes, plus a NUL. The
 * same graph and options give the same bytes. */
DMLC_API dmlc_status dmlc_graph_emit(dmlc_graph *graph, const char *kind,
                                     const dmlc_aot_options *options, void **out_data,
                                     size_t *out_size);

/* ---- executables ---- */
/* Buffers are bound in order: the graph's inputs, then its outputs. Each must
 * be at least its tensor's total_size_bytes (see dmlc_tensor_info: a
 * descriptor's TotalTensorSizeInBytes, else the end of the last element),
 * and aligned to its alignment;
 * otherwise nothing runs. Inputs are never written. Any executable may be
 * executed from many threads at once (see the top of this file: on the CPU
 * the calls share the context's thread pool, on Vulkan they take turns on
 * its device and queue). On Vulkan a call uploads the
 * inputs (and the outputs' bytes, so gaps of strided outputs keep what they
 * held), runs every kernel, waits for them and downloads the outputs. */
DMLC_API dmlc_status dmlc_execute(dmlc_executable *exe, const dmlc_buffer *inputs,
                                  size_t input_count, const dmlc_buffer *outputs,
                                  size_t output_count);
DMLC_API void dmlc_executable_destroy(dmlc_executable *exe);

/* ---- tensors: memory that stays on a device ----
 * A tensor is size_bytes of memory on one device of ctx, created zeroed:
 * host memory for the reference and CPU devices, device-local memory on
 * Vulkan (host-visible where the device has no other kind). Write and read
 * copy between it and the host; dmlc_execute_tensors binds tensors to an
 * executable of the same device and context with no copy, so one execute's
 * output tensor can be the next one's input without leaving the device.
 * On the host devices a tensor of 4 MiB or more starts on a 2 MiB boundary
 * and asks Linux for transparent huge pages (as NumPy does for its arrays),
 * so a kernel streaming through it takes far fewer TLB misses.
 * Creating a tensor opens the device, as a compile does. A tensor must be
 * destroyed before its context. */
DMLC_API dmlc_status dmlc_tensor_create(dmlc_context *ctx, dmlc_device device, uint64_t size_bytes,
                                        dmlc_tensor **out);
/* Copies size bytes from src to the tensor at offset; offset + size must be
 * within the tensor. */
DMLC_API dmlc_status dmlc_tensor_write(dmlc_tensor *t, uint64_t offset, const void *src,
                                       uint64_t size);
/* Copies size bytes at offset of the tensor to dst. */
DMLC_API dmlc_status dmlc_tensor_read(const dmlc_tensor *t, uint64_t offset, void *dst,
                                      uint64_t size);
DMLC_API void dmlc_tensor_destroy(dmlc_tensor *t);
/* The tensor's bytes in host memory, for a device whose tensors are host
 * memory (reference, CPU): valid while the tensor lives. NULL for a device
 * whose tensors the host cannot address (Vulkan: use write and read). */
DMLC_API void *dmlc_tensor_map(dmlc_tensor *t);
DMLC_API uint64_t dmlc_tensor_size(const dmlc_tensor *t);
DMLC_API dmlc_device dmlc_tensor_device(const dmlc_tensor *t);
/* dmlc_execute with tensors: inputs[i] bound to the graph's input i,
 * outputs[i] to its output i. Each tensor must belong to exe's device and
 * context and hold at least its binding's total_size_bytes (a tensor starts
 * at its allocation, aligned to at least 4096 bytes, so any binding
 * alignment up to 4096 holds by construction); an output must be no
 * input and no other output. Checked before anything runs. Bytes of a
 * strided output that no element covers keep what they held. On Vulkan the
 * call submits the kernels and waits for them: nothing is copied through
 * the host. */
DMLC_API dmlc_status dmlc_execute_tensors(dmlc_executable *exe, dmlc_tensor *const *inputs,
                                          size_t input_count, dmlc_tensor *const *outputs,
                                          size_t output_count);

/* Text of the compiled code, malloc'ed (free with dmlc_free). what:
 * "kernels" (CPU and Vulkan: each kernel's description, and its task split
 * or workgroups), "llvm" (CPU: each kernel's optimized LLVM IR), "asm" (CPU:
 * its assembly for the host), "spirv" (Vulkan: each kernel's SPIR-V module,
 * disassembled, as optimized and run). A kind the executable's device does
 * not have, and every kind for the reference device, is
 * DMLC_ERROR_UNSUPPORTED. LLVM IR and assembly are produced on the first
 * request for a kernel (it is compiled again, the same way, without loading
 * it) and then kept with the context's cached kernel: compiling never pays
 * for them. */
DMLC_API dmlc_status dmlc_executable_dump(const dmlc_executable *exe, const char *what,
                                          char **out_text);
/* The device time of each kernel in the last dmlc_execute of exe, in
 * nanoseconds, in execution order: *count = the number of kernels, and
 * ns[0 .. min(max, *count)) is filled. Vulkan measures it with timestamp
 * queries around each dispatch (0 before the first execute, after one run
 * with profiling off, and on a device without timestamps). CPU and
 * reference executables have no device timestamps: *count = 0 (and
 * DMLC_OK). */
DMLC_API dmlc_status dmlc_executable_kernel_times(const dmlc_executable *exe, double *ns,
                                                  size_t max, size_t *count);
/* Whether later executes of exe measure kernel times: on (nonzero) when an
 * executable is created. Timestamps are not free: on lavapipe they add
 * about 60 us to every call (llvmpipe writes them from its rasterizer
 * threads); a caller that does not read kernel times turns them off. The
 * next execute after a change records its commands again. Not concurrently
 * with an execute of exe. Devices without timestamps: DMLC_OK, nothing
 * changes. */
DMLC_API dmlc_status dmlc_executable_set_profiling(dmlc_executable *exe, int enable);
DMLC_API dmlc_device dmlc_executable_device(const dmlc_executable *exe);
DMLC_API size_t dmlc_executable_input_count(const dmlc_executable *exe);
DMLC_API size_t dmlc_executable_output_count(const dmlc_executable *exe);
DMLC_API dmlc_status dmlc_executable_input_info(const dmlc_executable *exe, size_t index,
                                                dmlc_tensor_info *out);
DMLC_API dmlc_status dmlc_executable_output_info(const dmlc_executable *exe, size_t index,
                                                 dmlc_tensor_info *out);

/* ---- ONNX models and tensors (docs/onnx.md) ----
 * A model's graph (ArgMax, ArgMin, Hardmax and the views around them:
 * Identity, Reshape, Squeeze, Unsqueeze, Flatten, Constant) becomes a
 * dmlc_graph; TensorProto files (.pb) are read and written as host tensors.
 * Malformed files are errors naming the file and the problem, never reads
 * outside the bytes given. */

/* Gives a shape to what a model leaves symbolic. name is either a graph
 * input's ONNX name (dims: that input's whole shape, dim_count its rank) or
 * a symbolic dimension's name, an ONNX dim_param (dim_count 1: its value).
 * Where a name is both, the input wins. Every dim is 1 to 2^32-1. */
typedef struct dmlc_onnx_shape {
  const char *name;
  const uint64_t *dims;
  uint32_t dim_count;
} dmlc_onnx_shape;

typedef struct dmlc_onnx_options {
  const dmlc_onnx_shape *shapes; /* each must name an input or a dim_param of the model */
  size_t shape_count;
} dmlc_onnx_options;

/* One input or output of an imported model, as ONNX declares it. */
typedef struct dmlc_onnx_io {
  const char *onnx_name; /* the model's name */
  const char *name;      /* the graph's: onnx_name, made a valid dmlc name where it is not */
  DML_TENSOR_DATA_TYPE data_type;
  uint32_t rank; /* ONNX's: 0 for a scalar (shape ()), which the graph holds as [1] */
  uint64_t dims[DMLC_MAX_RANK];
} dmlc_onnx_io;

/* What dmlc_graph_import_onnx_with_options saw of a model: one malloc'ed
 * block (free it with dmlc_free). inputs and outputs are in the graph's
 * order, so inputs[i] describes the executable's input i. */
typedef struct dmlc_onnx_signature {
  int64_t ir_version;
  int64_t opset; /* of the default domain ("" or "ai.onnx") */
  size_t input_count, output_count;
  const dmlc_onnx_io *inputs, *outputs;
} dmlc_onnx_signature;

/* Imports an ONNX model (a ModelProto: the bytes of a .onnx file) as a new
 * graph, the way dmlc_graph_parse reads IR text. filename is used in
 * messages ("model.onnx: node 'am' (ArgMax, opset 13): ..."). An op, opset,
 * data type or domain dmlc does not map is DMLC_ERROR_UNSUPPORTED; a
 * malformed file or graph, and a symbolic dim left unbound, are
 * DMLC_ERROR_INVALID_ARGUMENT. */
DMLC_API dmlc_status dmlc_graph_import_onnx(dmlc_context *ctx, const void *bytes, size_t size,
                                            const char *filename, dmlc_graph **out);
/* dmlc_graph_import_onnx with symbolic dims bound by options (may be NULL).
 * out and out_signature may each be NULL (not both); *out_signature
 * receives the model's inputs and outputs with their ONNX names and
 * shapes. */
DMLC_API dmlc_status dmlc_graph_import_onnx_with_options(dmlc_context *ctx, const void *bytes,
                                                         size_t size, const char *filename,
                                                         const dmlc_onnx_options *options,
                                                         dmlc_graph **out,
                                                         dmlc_onnx_signature **out_signature);

/* A tensor in host memory, as a TensorProto holds it. */
typedef struct dmlc_onnx_tensor {
  const char *name; /* "" when the file names none */
  DML_TENSOR_DATA_TYPE data_type;
  uint32_t rank; /* 0: a scalar, ONNX's shape () (one element) */
  uint64_t dims[DMLC_MAX_RANK];
  uint64_t element_count; /* the product of dims (1 for a scalar) */
  uint64_t size_bytes;    /* element_count * dmlc_data_type_size(data_type) */
  void *data;             /* row-major, packed, in the host's byte order */
} dmlc_onnx_tensor;

/* Decodes a TensorProto (the bytes of a .pb file, as ONNX's test data
 * holds inputs and outputs) from raw_data or the typed field of its data
 * type. *out is one malloc'ed block, data 64-byte aligned: free it with
 * dmlc_free. Data types dmlc lacks (bool, strings, bfloat16, complex, ...),
 * external data, empty tensors and ranks over 8 are errors. */
DMLC_API dmlc_status dmlc_onnx_tensor_parse(dmlc_context *ctx, const void *bytes, size_t size,
                                            const char *filename, dmlc_onnx_tensor **out);
/* dmlc_onnx_tensor_parse of a whole file; DMLC_ERROR_IO when it cannot be
 * read. */
DMLC_API dmlc_status dmlc_onnx_tensor_read_file(dmlc_context *ctx, const char *path,
                                                dmlc_onnx_tensor **out);
/* Encodes tensor as a TensorProto: name (NULL or "": none), data_type,
 * dims (rank 0: shape ()) and raw_data, little-endian. Reads name,
 * data_type, rank, dims and data (the product of dims times the element
 * size, in bytes); element_count and size_bytes are not read. *out_bytes
 * (free with dmlc_free) holds *out_size bytes. */
DMLC_API dmlc_status dmlc_onnx_tensor_encode(dmlc_context *ctx, const dmlc_onnx_tensor *tensor,
                                             void **out_bytes, size_t *out_size);
/* dmlc_onnx_tensor_encode into a file (replaced); DMLC_ERROR_IO when it
 * cannot be written. */
DMLC_API dmlc_status dmlc_onnx_tensor_write_file(dmlc_context *ctx, const char *path,
                                                 const dmlc_onnx_tensor *tensor);

/* ---- data types ---- */
/* Bytes per element of a DML data type; 0 for one dmlc does not know. */
DMLC_API uint32_t dmlc_data_type_size(DML_TENSOR_DATA_TYPE type);
/* "f32", "u8", ...; NULL for one dmlc does not know. */
DMLC_API const char *dmlc_data_type_name(DML_TENSOR_DATA_TYPE type);
/* IEEE binary16 <-> binary32: exact widening, round-to-nearest-even narrowing. */
DMLC_API float dmlc_half_to_float(uint16_t h);
DMLC_API uint16_t dmlc_float_to_half(float f);

#ifdef __cplusplus
}
#endif

#endif /* DMLC_DMLC_H */
