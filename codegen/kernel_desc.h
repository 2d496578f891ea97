/* The kernel description both backends generate code from: what a fused
 * kernel computes, in the terms of its iteration space. Derived from an IR
 * kernel by recognizing the patterns fuse produces; a kernel that matches
 * none is DMLC_ERROR_UNSUPPORTED for the code-generating devices. */
#ifndef DMLC_CODEGEN_KERNEL_DESC_H
#define DMLC_CODEGEN_KERNEL_DESC_H

#include "ir/ir.h"

/* Where a kernel buffer lives at run time. */
typedef enum dmlc_binding_kind {
  DMLC_BINDING_INPUT,  /* graph input #index */
  DMLC_BINDING_OUTPUT, /* graph output #index */
  DMLC_BINDING_TEMP,   /* dense intermediate #index (see dmlc_kernel_plan) */
} dmlc_binding_kind;

typedef struct dmlc_binding {
  dmlc_binding_kind kind;
  uint32_t index;
} dmlc_binding;

typedef enum dmlc_kout_kind {
  DMLC_KOUT_INDEX,    /* the reduction's index, converted to dtype (reduced points) */
  DMLC_KOUT_ONEHOT,   /* 1 where the reduced index equals the reduction's, else 0 (full points) */
  DMLC_KOUT_CONSTANT, /* every element = constant (full points) */
  DMLC_KOUT_COPY,     /* the read converted to dtype (full points; no reduction) */
} dmlc_kout_kind;

typedef struct dmlc_kout {
  dmlc_kout_kind kind;
  dmlc_dtype dtype;                /* element type stored */
  uint64_t strides[DMLC_MAX_RANK]; /* over the space; 0 on reduced dims for INDEX */
  dmlc_binding binding;
  int64_t constant; /* DMLC_KOUT_CONSTANT */
} dmlc_kout;

#define DMLC_KDESC_MAX_OUTPUTS 4

typedef struct dmlc_kdesc {
  /* Iteration space: dims in row-major order; bit i of reduced_mask marks
   * dim i reduced. No dim is 1 unless the space is [1]. */
  uint32_t rank;
  uint32_t dims[DMLC_MAX_RANK];
  uint32_t reduced_mask;
  /* The read: the reduction's input, or the COPY source. */
  bool has_read;
  dmlc_dtype read_dtype;
  uint64_t read_strides[DMLC_MAX_RANK]; /* over the space; 0 broadcasts */
  dmlc_binding read_binding;
  /* The reduction (reduced_mask != 0). */
  bool has_reduction;
  dmlc_op reduction; /* DMLC_OP_ARGMAX or DMLC_OP_ARGMIN */
  dmlc_direction direction;
  uint32_t num_outputs;
  dmlc_kout outputs[DMLC_KDESC_MAX_OUTPUTS];
} dmlc_kdesc;

/* A compiled graph's kernels in execution order, with the dense temporaries
 * between them. */
typedef struct dmlc_kernel_plan {
  uint32_t num_kernels;
  dmlc_kdesc *kernels;
  uint32_t num_temps;
  uint64_t *temp_bytes; /* size of each temporary */
} dmlc_kernel_plan;

/* Describes every kernel of a fused graph (after the default pipeline). */
dmlc_status dmlc_kernel_plan_build(const dmlc_ir_graph *g, dmlc_kernel_plan *plan, dmlc_diag *diag);
void dmlc_kernel_plan_free(dmlc_kernel_plan *plan);
/* A stable text form of one kernel description: the kernel cache's key and
 * a debugging aid. Returns a malloc'ed string, or NULL when out of memory. */
char *dmlc_kdesc_print(const dmlc_kdesc *k);

/* *out: what dmlc_kdesc_print shows of k and nothing else: every other
 * byte zero (bindings, padding, dims past the rank, outputs past
 * num_outputs, a constant that is not a CONSTANT output's), so two
 * descriptions print the same text exactly when their canonical forms are
 * the same bytes: the kernel cache compares these, not the text. */
void dmlc_kdesc_canonical(const dmlc_kdesc *k, dmlc_kdesc *out);

/* The number of elements of k's iteration space (at most 2^32: the
 * verifier bounds every tensor). */
uint64_t dmlc_kdesc_space_elements(const dmlc_kdesc *k);

#endif
