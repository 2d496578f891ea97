/* The pass manager and the passes. A pass rewrites a graph in place (it may
 * replace *g with a new graph, destroying the old one). */
#ifndef DMLC_PASSES_PASSES_H
#define DMLC_PASSES_PASSES_H

#include "ir/ir.h"

typedef dmlc_status (*dmlc_pass_fn)(dmlc_ir_graph **g, dmlc_diag *diag);

typedef struct dmlc_pass_info {
  const char *name;
  const char *summary;
  dmlc_pass_fn run;
} dmlc_pass_info;

#define X(id, name, summary) dmlc_status dmlc_pass_##id(dmlc_ir_graph **g, dmlc_diag *diag);
#include "passes/passes.def"
#undef X

size_t dmlc_pass_registry_count(void);
const dmlc_pass_info *dmlc_pass_registry_get(size_t index);
const dmlc_pass_info *dmlc_pass_registry_find(const char *name, size_t len);

/* The pipeline compile uses for code-generating devices. */
#define DMLC_DEFAULT_PIPELINE "lower-hardmax,canonicalize-axes,cse,dce,fuse"

typedef struct dmlc_pipeline_options {
  const char *print_ir_before; /* comma list of pass names, "all", or NULL */
  const char *print_ir_after;
  bool verify_each;
  bool timing;
  void (*print)(void *user, const char *text); /* NULL: stderr */
  void *user;
} dmlc_pipeline_options;

/* Runs the comma-separated pipeline on *g. An unknown pass name is an error
 * before anything runs. The verifier runs before the first pass, and after
 * each pass with verify_each (always in builds without NDEBUG). */
dmlc_status dmlc_run_pipeline(dmlc_ir_graph **g, const char *pipeline,
                              const dmlc_pipeline_options *options, dmlc_diag *diag);

#endif
