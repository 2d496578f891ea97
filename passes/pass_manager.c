/* Runs named pipelines of passes, with IR dumps, verification and timing. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "passes/passes.h"

static const dmlc_pass_info registry[] = {
#define X(id, name, summary) {name, summary, dmlc_pass_##id},
#include "passes/passes.def"
#undef X
};
#define NUM_PASSES (sizeof registry / sizeof registry[0])
#define MAX_PIPELINE 64

size_t dmlc_pass_registry_count(void) { return NUM_PASSES; }

const dmlc_pass_info *dmlc_pass_registry_get(size_t index) {
  return index < NUM_PASSES ? &registry[index] : NULL;
}

const dmlc_pass_info *dmlc_pass_registry_find(const char *name, size_t len) {
  for (size_t i = 0; i < NUM_PASSES; i++)
    if (strlen(registry[i].name) == len && memcmp(registry[i].name, name, len) == 0)
      return &registry[i];
  return NULL;
}

static void print_to_stderr(void *user, const char *text) {
  (void)user;
  fputs(text, stderr);
}

/* True when name is in the comma list (or the list is "all"). */
static bool list_has(const char *list, const char *name) {
  if (!list)
    return false;
  if (strcmp(list, "all") == 0)
    return true;
  const size_t len = strlen(name);
  for (const char *p = list; *p;) {
    const char *end = strchr(p, ',');
    const size_t n = end ? (size_t)(end - p) : strlen(p);
    if (n == len && memcmp(p, name, n) == 0)
      return true;
    if (!end)
      break;
    p = end + 1;
  }
  return false;
}

static dmlc_status check_list(const char *list, const char *option, dmlc_diag *diag) {
  if (!list || strcmp(list, "all") == 0)
    return DMLC_OK;
  for (const char *p = list; *p;) {
    const char *end = strchr(p, ',');
    const size_t n = end ? (size_t)(end - p) : strlen(p);
    if (!dmlc_pass_registry_find(p, n))
      return dmlc_diag_set(diag, DMLC_ERROR_INVALID_ARGUMENT, "%s: unknown pass '%.*s'", option,
                           (int)n, p);
    if (!end)
      break;
    p = end + 1;
  }
  return DMLC_OK;
}

static dmlc_status dump(const dmlc_pipeline_options *o, const char *when, const char *pass,
                        const dmlc_ir_graph *g, dmlc_diag *diag) {
  char *text = dmlc_ir_print(g);
  if (!text)
    return dmlc_diag_set(diag, DMLC_ERROR_OUT_OF_MEMORY, "out of memory printing IR");
  char header[160];
  snprintf(header, sizeof header, "// -----// IR Dump %s %s //----- //\n", when, pass);
  o->print(o->user, header);
  o->print(o->user, text);
  free(text);
  return DMLC_OK;
}

static double now_seconds(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static void report_timing(const dmlc_pipeline_options *o, const dmlc_pass_info **passes,
                          const double *seconds, size_t count) {
  double total = 0;
  for (size_t i = 0; i < count; i++)
    total += seconds[i];
  char line[200];
  o->print(o->user, "===-------------------------------------------------------------===\n"
                    "                      dmlc pass timing report\n"
                    "===-------------------------------------------------------------===\n"
                    "   wall time (ms)   share  pass\n");
  for (size_t i = 0; i < count; i++) {
    snprintf(line, sizeof line, "  %15.4f  %5.1f%%  %s\n", seconds[i] * 1e3,
             total > 0 ? 100.0 * seconds[i] / total : 0.0, passes[i]->name);
    o->print(o->user, line);
  }
  snprintf(line, sizeof line, "  %15.4f  100.0%%  total\n", total * 1e3);
  o->print(o->user, line);
}

static dmlc_status parse_pipeline(const char *pipeline, const dmlc_pass_info **passes,
                                  size_t *count, dmlc_diag *diag) {
  *count = 0;
  for (const char *p = pipeline; *p;) {
    const char *end = strchr(p, ',');
    const size_t n = end ? (size_t)(end - p) : strlen(p);
    const dmlc_pass_info *info = dmlc_pass_registry_find(p, n);
    if (!info)
      return dmlc_diag_set(diag, DMLC_ERROR_INVALID_ARGUMENT,
                           "unknown pass '%.*s' in pipeline '%s' (dmlc opt --list-passes lists "
                           "them)",
                           (int)n, p, pipeline);
    if (*count == MAX_PIPELINE)
      return dmlc_diag_set(diag, DMLC_ERROR_INVALID_ARGUMENT, "pipeline has more than %d passes",
                           MAX_PIPELINE);
    passes[(*count)++] = info;
    if (!end)
      break;
    p = end + 1;
  }
  return DMLC_OK;
}

dmlc_status dmlc_run_pipeline(dmlc_ir_graph **g, const char *pipeline,
                              const dmlc_pipeline_options *options, dmlc_diag *diag) {
  dmlc_pipeline_options o = {0};
  if (options)
    o = *options;
  if (!o.print)
    o.print = print_to_stderr;
#ifndef NDEBUG
  o.verify_each = true;
#endif
  const dmlc_pass_info *passes[MAX_PIPELINE];
  double seconds[MAX_PIPELINE];
  size_t count;
  DMLC_RETURN_IF_ERROR(parse_pipeline(pipeline ? pipeline : "", passes, &count, diag));
  DMLC_RETURN_IF_ERROR(check_list(o.print_ir_before, "--print-ir-before", diag));
  DMLC_RETURN_IF_ERROR(check_list(o.print_ir_after, "--print-ir-after", diag));
  DMLC_RETURN_IF_ERROR(dmlc_ir_verify(*g, diag));
  for (size_t i = 0; i < count; i++) {
    if (list_has(o.print_ir_before, passes[i]->name))
      DMLC_RETURN_IF_ERROR(dump(&o, "Before", passes[i]->name, *g, diag));
    const double start = now_seconds();
    const dmlc_status status = passes[i]->run(g, diag);
    seconds[i] = now_seconds() - start;
    if (status != DMLC_OK)
      return status;
    if (list_has(o.print_ir_after, passes[i]->name))
      DMLC_RETURN_IF_ERROR(dump(&o, "After", passes[i]->name, *g, diag));
    const dmlc_status verified = o.verify_each ? dmlc_ir_verify(*g, diag) : DMLC_OK;
    /* Out of memory while verifying is that, not a broken pass. */
    if (verified == DMLC_ERROR_OUT_OF_MEMORY)
      return verified;
    if (verified != DMLC_OK) {
      /* The verifier's message, copied: formatting diag from itself
       * overlaps. */
      char why[DMLC_DIAG_MAX];
      snprintf(why, sizeof why, "%s", diag ? diag->message : "");
      return dmlc_diag_set(diag, DMLC_ERROR_INTERNAL, "verifier failed after pass '%s': %s",
                           passes[i]->name, why);
    }
  }
  if (o.timing)
    report_timing(&o, passes, seconds, count);
  return DMLC_OK;
}
