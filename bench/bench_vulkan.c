/* dmlc's Vulkan device on the CPU benchmark's workloads (bench_cpu.c).
 *
 * Each workload is parsed, compiled for DMLC_DEVICE_VULKAN and run through
 * the public API, two ways interleaved run by run: dmlc_execute with host
 * buffers (which uploads the inputs and downloads the outputs) and
 * dmlc_execute_tensors with tensors resident on the device (no copy). The
 * kernel time is the sum of the executable's kernel times from Vulkan
 * timestamp queries (dmlc_executable_kernel_times) in the tensor runs; every
 * figure is the median over the runs. "overhead" is the tensor call's time
 * minus its kernel time: what a call costs beyond the GPU's work. Every
 * workload runs at its own size: buffers beyond the device's
 * maxStorageBufferRange (lavapipe: 128 MiB; an [8192,8192] f32 tensor is
 * 256 MiB) are bound as windows. A workload that fails is a row saying why.
 * Prints a markdown table. Not a test: run it by hand through bench/run.sh.
 *
 *   bench_vulkan [--quick] [--runs N]
 *
 * --quick shrinks every dimension of 1024 or more 16 times (a smoke run). */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "dmlc/dmlc.h"

#include "bench_common.h"

static bool is_hardmax(const workload *w) { return w->kind == WORK_HARDMAX; }

typedef struct result {
  char name[64];   /* as run */
  char error[160]; /* why it did not run */
  double kernel_s, wall_s, tensor_s, overhead_s, bytes;
  uint32_t kernels;
  int runs; /* medians over this many calls each way */
  bool ok;
} result;

enum { MAX_RUNS = 1000 };

/* w at sizes, into r (r->ok, or r->error saying why not). */
static dmlc_status run_size(dmlc_context *ctx, const workload *w, const uint32_t *sizes, int runs,
                            result *r) {
  char ir[512];
  bench_workload_ir(w, sizes, ir, sizeof ir);
  bench_workload_name(w, sizes, r->name, sizeof r->name);
  dmlc_graph *g = NULL;
  dmlc_executable *exe = NULL;
  dmlc_status st = dmlc_graph_parse(ctx, ir, strlen(ir), w->id, &g);
  if (st == DMLC_OK)
    st = dmlc_graph_compile(g, DMLC_DEVICE_VULKAN, &exe);
  if (st != DMLC_OK) {
    snprintf(r->error, sizeof r->error, "%s", dmlc_context_error(ctx));
    dmlc_graph_destroy(g);
    return st;
  }
  dmlc_tensor_info in_info, out_info;
  dmlc_executable_input_info(exe, 0, &in_info);
  dmlc_executable_output_info(exe, 0, &out_info);
  const size_t in_bytes = in_info.total_size_bytes, out_bytes = out_info.total_size_bytes;
  unsigned char *in = malloc(in_bytes), *out = calloc(1, out_bytes);
  if (!in || !out) {
    fprintf(stderr, "out of memory\n");
    exit(1);
  }
  bench_fill_random(w->type, in, in_bytes);
  const dmlc_buffer ib = {in, in_bytes}, ob = {out, out_bytes};
  dmlc_tensor *ti = NULL, *to = NULL;
  st = dmlc_tensor_create(ctx, DMLC_DEVICE_VULKAN, in_bytes, &ti);
  if (st == DMLC_OK)
    st = dmlc_tensor_create(ctx, DMLC_DEVICE_VULKAN, out_bytes, &to);
  if (st == DMLC_OK)
    st = dmlc_tensor_write(ti, 0, in, in_bytes);
  double ns[8];
  const double warm = bench_now_s();
  if (st == DMLC_OK) /* warm-up, both ways */
    st = dmlc_execute(exe, &ib, 1, &ob, 1);
  if (st == DMLC_OK)
    st = dmlc_execute_tensors(exe, &ti, 1, &to, 1);
  /* Short calls get more runs (up to MAX_RUNS, about 0.2 s of them): a
   * median of 11 calls of 100 us says little on a shared machine. */
  const double pair_s = bench_now_s() - warm;
  if (pair_s > 0 && runs < MAX_RUNS && 0.2 / pair_s > runs)
    runs = 0.2 / pair_s > MAX_RUNS ? MAX_RUNS : (int)(0.2 / pair_s);
  r->runs = runs;
  double *wall = malloc(4 * MAX_RUNS * sizeof *wall);
  if (!wall) {
    fprintf(stderr, "out of memory\n");
    exit(1);
  }
  double *tens = wall + MAX_RUNS, *kern = tens + MAX_RUNS, *over = kern + MAX_RUNS;
  for (int i = 0; st == DMLC_OK && i < runs; i++) {
    double t0 = bench_now_s();
    st = dmlc_execute(exe, &ib, 1, &ob, 1);
    wall[i] = bench_now_s() - t0;
    t0 = bench_now_s();
    if (st == DMLC_OK)
      st = dmlc_execute_tensors(exe, &ti, 1, &to, 1);
    tens[i] = bench_now_s() - t0;
    size_t count = 0;
    dmlc_executable_kernel_times(exe, ns, 8, &count);
    kern[i] = 0;
    for (size_t k = 0; k < count && k < 8; k++)
      kern[i] += ns[k] * 1e-9;
    over[i] = tens[i] - kern[i];
    r->kernels = (uint32_t)count;
  }
  if (st == DMLC_OK) {
    r->wall_s = bench_median(wall, (size_t)runs);
    r->tensor_s = bench_median(tens, (size_t)runs);
    r->kernel_s = bench_median(kern, (size_t)runs);
    r->overhead_s = bench_median(over, (size_t)runs);
    r->bytes = (double)in_bytes + (is_hardmax(w) ? (double)out_bytes : 0);
    r->ok = true;
  } else {
    snprintf(r->error, sizeof r->error, "%s", dmlc_context_error(ctx));
  }
  free(wall);
  dmlc_tensor_destroy(ti);
  dmlc_tensor_destroy(to);
  free(in);
  free(out);
  dmlc_executable_destroy(exe);
  dmlc_graph_destroy(g);
  return st;
}

static result run_workload(dmlc_context *ctx, const workload *w, bool quick, int runs) {
  result r = {0};
  uint32_t sizes[4];
  for (uint32_t d = 0; d < w->rank; d++)
    sizes[d] = quick && w->sizes[d] >= 1024 ? w->sizes[d] / 16 : w->sizes[d];
  run_size(ctx, w, sizes, runs, &r);
  return r;
}

int main(int argc, char **argv) {
  bool quick = false;
  int runs = 11;
  for (int i = 1; i < argc; i++) {
    if (strcmp(argv[i], "--quick") == 0) {
      quick = true;
    } else if (strcmp(argv[i], "--runs") == 0 && i + 1 < argc) {
      runs = atoi(argv[++i]);
      runs = runs < 1 ? 1 : runs > MAX_RUNS ? MAX_RUNS : runs;
    } else {
      fprintf(stderr, "usage: %s [--quick] [--runs N]\n", argv[0]);
      return 2;
    }
  }
  dmlc_context *ctx;
  if (dmlc_context_create(&ctx) != DMLC_OK)
    return 1;
  char *desc = NULL;
  if (dmlc_device_describe(ctx, DMLC_DEVICE_VULKAN, &desc) != DMLC_OK) {
    fprintf(stderr, "no Vulkan device: %s\n", dmlc_context_error(ctx));
    dmlc_context_destroy(ctx);
    return 1;
  }
  printf("vulkan devices:\n%s", desc);
  dmlc_free(desc);
  printf("runs: at least %d per workload (short calls: about 0.2 s of them), after one "
         "warm-up%s\n",
         runs, quick ? " (quick run: sizes / 16)" : "");

  enum { MAX_WORKLOADS = 64 };
  result res[MAX_WORKLOADS];
  const size_t n = bench_num_workloads < MAX_WORKLOADS ? bench_num_workloads : MAX_WORKLOADS;
  for (size_t i = 0; i < n; i++) {
    res[i] = run_workload(ctx, &bench_workloads[i], quick, runs);
    fprintf(stderr, "  %-44s %s\n", res[i].name, res[i].ok ? "done" : "failed");
  }
  dmlc_context_destroy(ctx);

  printf(
      "\n| workload | runs | kernels | kernel time | GB/s (kernel) | dmlc_execute (host buffers) | "
      "dmlc_execute_tensors | overhead (tensors - kernel) |\n");
  printf("|---|---:|---:|---:|---:|---:|---:|---:|\n");
  for (size_t i = 0; i < n; i++) {
    const result *r = &res[i];
    if (!r->ok)
      printf("| %s | ERROR: %s | | | | | | |\n", r->name, r->error);
    else
      printf("| %s | %d | %u | %.3f ms | %.2f | %.3f ms | %.3f ms | %.1f us |\n", r->name, r->runs,
             r->kernels, r->kernel_s * 1e3, r->kernel_s > 0 ? r->bytes / r->kernel_s / 1e9 : 0.0,
             r->wall_s * 1e3, r->tensor_s * 1e3, r->overhead_s * 1e6);
  }
  return 0;
}
