/* dmlc's Vulkan device on the CPU benchmark's workloads (bench_cpu.c).
 *
 * Each workload is parsed, compiled for DMLC_DEVICE_VULKAN and run through
 * the public API, three ways interleaved run by run: dmlc_execute with host
 * buffers (which uploads the inputs and downloads the outputs) and
 * dmlc_execute_tensors with tensors resident on the device (no copy), both
 * with profiling off (dmlc_executable_set_profiling), as a caller that
 * does not read kernel times runs them; and dmlc_execute_tensors of a
 * second executable of the same graph with profiling on, whose kernel
 * times from Vulkan timestamp queries (dmlc_executable_kernel_times) are
 * the kernel time. Every figure is the median over the runs. "overhead" is
 * the tensor call's time minus the kernel time: what a call costs beyond
 * the GPU's work ("profiled" gives the profiled call's time: timestamps
 * cost lavapipe about 60 us a call). Every
 * workload runs at its own size: buffers beyond the device's
 * maxStorageBufferRange (lavapipe: 128 MiB; an [8192,8192] f32 tensor is
 * 256 MiB) are bound as windows. A workload that fails is a row saying why.
 *
 * The device's own limit: a probe, a plain read kernel built here with
 * dmlc's SPIR-V builder (16-byte loads of the workload's input tensor, a
 * sum of words per invocation, one store per workgroup), run on the same
 * input tensor, interleaved run by run with dmlc's calls and timed by
 * timestamps the same way. Its workgroup count is the best of a few tried
 * at warm-up (the device's fill_groups and multiples). The first table
 * puts dmlc's kernel bandwidth beside the probe's (dmlc counts its reads
 * and writes, the probe its reads: a hardmax at the probe's rate scores
 * 2.0); the second gives each workload's first-use costs: the
 * compile, the first dmlc_execute and the first dmlc_execute_tensors
 * (their first recording), against the medians of later calls.
 *
 * Prints markdown tables. Not a test: run it by hand through bench/run.sh.
 *
 *   bench_vulkan [--quick] [--runs N] [--only ID,...]
 *
 * --quick shrinks every dimension of 1024 or more 16 times (a smoke run);
 * --only runs the workloads with these ids. */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "api/api_internal.h"
#include "codegen/spirv/builder.h"
#include "codegen/spirv/spirv.h"
#include "dmlc/dmlc.h"
#include "runtime/vulkan/vk_device.h"

#include "bench_common.h"

typedef struct result {
  char name[64];   /* as run */
  char error[160]; /* why it did not run */
  double kernel_s, wall_s, tensor_s, overhead_s, profiled_s, bytes;
  double probe_s, probe_bytes; /* the probe on the input tensor; 0: not run */
  uint32_t probe_groups;
  double compile_s, first_wall_s, first_tensor_s; /* first-use costs */
  uint32_t kernels;
  int runs; /* medians over this many calls each way */
  bool ok;
} result;

enum { MAX_RUNS = 1000 };

/* ---- the probe ---- */

enum { PROBE_LOCAL = 256, PROBE_MAX_WINDOWS = 64, PROBE_GROUPS_MAX = 65535 };

/* for (i = first; i < end; i += step) as a structured loop over a Function
 * variable. */
typedef struct probe_loop {
  uint32_t var, header, cont, merge;
} probe_loop;

typedef struct probe_em {
  spvb b;
  uint32_t t_void, t_bool, t_u32, t_v3, t_v4, t_fn, p_fn_u32;
} probe_em;

static uint32_t pc(probe_em *e, uint32_t v) {
  return spvb_constant(&e->b, SpvOpConstant, e->t_u32, &v, 1);
}

static uint32_t u32_op(probe_em *e, SpvOp op, uint32_t a, uint32_t b) {
  return SPV(&e->b, op, e->t_u32, a, b);
}

/* Opens the loop; returns i in the body. */
static uint32_t loop_open(probe_em *e, probe_loop *l, uint32_t first, uint32_t end) {
  spvb *b = &e->b;
  l->var = spvb_local_var(b, e->p_fn_u32);
  l->header = spvb_id(b);
  l->cont = spvb_id(b);
  l->merge = spvb_id(b);
  const uint32_t check = spvb_id(b), body = spvb_id(b);
  SPV(b, SpvOpStore, 0, l->var, first);
  SPV(b, SpvOpBranch, 0, l->header);
  spvb_label(b, l->header);
  SPV(b, SpvOpLoopMerge, 0, l->merge, l->cont, SpvLoopControlMaskNone);
  SPV(b, SpvOpBranch, 0, check);
  spvb_label(b, check);
  const uint32_t i = SPV(b, SpvOpLoad, e->t_u32, l->var);
  SPV(b, SpvOpBranchConditional, 0, SPV(b, SpvOpULessThan, e->t_bool, i, end), body, l->merge);
  spvb_label(b, body);
  return i;
}

static void loop_close(probe_em *e, const probe_loop *l, uint32_t step) {
  spvb *b = &e->b;
  SPV(b, SpvOpBranch, 0, l->cont);
  spvb_label(b, l->cont);
  SPV(b, SpvOpStore, 0, l->var, u32_op(e, SpvOpIAdd, SPV(b, SpvOpLoad, e->t_u32, l->var), step));
  SPV(b, SpvOpBranch, 0, l->header);
  spvb_label(b, l->merge);
}

/* A storage buffer at binding of a runtime array of elem (stride bytes). */
static uint32_t probe_buffer(probe_em *e, uint32_t elem, uint32_t stride, uint32_t binding) {
  spvb *b = &e->b;
  const uint32_t rta = SPV_TYPE(b, SpvOpTypeRuntimeArray, elem);
  spvb_decorate(b, rta, SpvDecorationArrayStride, &stride, 1);
  const uint32_t st = SPV_TYPE(b, SpvOpTypeStruct, rta), zero = 0;
  spvb_decorate(b, st, SpvDecorationBlock, NULL, 0);
  spvb_member_decorate(b, st, 0, SpvDecorationOffset, &zero, 1);
  const uint32_t var =
      spvb_global_var(b, SPV_TYPE(b, SpvOpTypePointer, SpvStorageClassStorageBuffer, st),
                      SpvStorageClassStorageBuffer);
  spvb_decorate(b, var, SpvDecorationDescriptorSet, &zero, 1);
  spvb_decorate(b, var, SpvDecorationBinding, &binding, 1);
  if (binding == 0)
    spvb_decorate(b, var, SpvDecorationNonWritable, NULL, 0);
  return var;
}

static uint32_t probe_builtin_x(probe_em *e, SpvBuiltIn builtin) {
  spvb *b = &e->b;
  const uint32_t var = spvb_global_var(
      b, SPV_TYPE(b, SpvOpTypePointer, SpvStorageClassInput, e->t_v3), SpvStorageClassInput);
  const uint32_t bi = (uint32_t)builtin;
  spvb_decorate(b, var, SpvDecorationBuiltIn, &bi, 1);
  return SPV(b, SpvOpCompositeExtract, e->t_u32, SPV(b, SpvOpLoad, e->t_v3, var), 0);
}

/* acc += the 16-byte word at index i of in. */
static void probe_add(probe_em *e, uint32_t acc, uint32_t in, uint32_t p_sb_v4, uint32_t i) {
  spvb *b = &e->b;
  const uint32_t v = SPV(b, SpvOpLoad, e->t_v4, SPV(b, SpvOpAccessChain, p_sb_v4, in, pc(e, 0), i));
  SPV(b, SpvOpStore, 0, acc, SPV(b, SpvOpIAdd, e->t_v4, SPV(b, SpvOpLoad, e->t_v4, acc), v));
}

/* The probe: invocation i of the dispatch's n sums the 16-byte words i,
 * i + n, ... of binding 0 (consecutive invocations on consecutive
 * addresses), four loads a step into independent sums while all four are
 * in range; the workgroup adds its invocations' sums in shared memory and
 * invocation 0 stores one word, at the push constant + the workgroup's
 * index, in binding 1. */
static uint32_t *probe_module(size_t *num_words) {
  probe_em em = {0};
  probe_em *e = &em;
  spvb *b = &e->b;
  spvb_init(b);
  spvb_capability(b, SpvCapabilityShader);
  e->t_void = spvb_type(b, SpvOpTypeVoid, NULL, 0);
  e->t_bool = spvb_type(b, SpvOpTypeBool, NULL, 0);
  e->t_u32 = SPV_TYPE(b, SpvOpTypeInt, 32, 0);
  e->t_v3 = SPV_TYPE(b, SpvOpTypeVector, e->t_u32, 3);
  e->t_v4 = SPV_TYPE(b, SpvOpTypeVector, e->t_u32, 4);
  e->t_fn = SPV_TYPE(b, SpvOpTypeFunction, e->t_void);
  e->p_fn_u32 = SPV_TYPE(b, SpvOpTypePointer, SpvStorageClassFunction, e->t_u32);
  const uint32_t p_fn_v4 = SPV_TYPE(b, SpvOpTypePointer, SpvStorageClassFunction, e->t_v4);
  const uint32_t p_sb_v4 = SPV_TYPE(b, SpvOpTypePointer, SpvStorageClassStorageBuffer, e->t_v4);
  const uint32_t p_sb_u32 = SPV_TYPE(b, SpvOpTypePointer, SpvStorageClassStorageBuffer, e->t_u32);
  const uint32_t in = probe_buffer(e, e->t_v4, 16, 0), out = probe_buffer(e, e->t_u32, 4, 1);
  const uint32_t pst = SPV_TYPE(b, SpvOpTypeStruct, e->t_u32), zero = 0;
  spvb_decorate(b, pst, SpvDecorationBlock, NULL, 0);
  spvb_member_decorate(b, pst, 0, SpvDecorationOffset, &zero, 1);
  const uint32_t push =
      spvb_global_var(b, SPV_TYPE(b, SpvOpTypePointer, SpvStorageClassPushConstant, pst),
                      SpvStorageClassPushConstant);
  const uint32_t arr = SPV_TYPE(b, SpvOpTypeArray, e->t_u32, pc(e, PROBE_LOCAL));
  const uint32_t shared = spvb_global_var(
      b, SPV_TYPE(b, SpvOpTypePointer, SpvStorageClassWorkgroup, arr), SpvStorageClassWorkgroup);
  const uint32_t p_wg_u32 = SPV_TYPE(b, SpvOpTypePointer, SpvStorageClassWorkgroup, e->t_u32);
  const uint32_t main_fn = spvb_id(b);

  const uint32_t wg = probe_builtin_x(e, SpvBuiltInWorkgroupId);
  const uint32_t lid = probe_builtin_x(e, SpvBuiltInLocalInvocationId);
  const uint32_t ng = probe_builtin_x(e, SpvBuiltInNumWorkgroups);
  const uint32_t n = u32_op(e, SpvOpIMul, ng, pc(e, PROBE_LOCAL));
  const uint32_t gid = u32_op(e, SpvOpIAdd, u32_op(e, SpvOpIMul, wg, pc(e, PROBE_LOCAL)), lid);
  const uint32_t len = SPV(b, SpvOpArrayLength, e->t_u32, in, 0);
  const uint32_t v4_zero = spvb_constant(b, SpvOpConstantNull, e->t_v4, NULL, 0);
  uint32_t acc[4];
  for (int j = 0; j < 4; j++) {
    acc[j] = spvb_local_var(b, p_fn_v4);
    SPV(b, SpvOpStore, 0, acc[j], v4_zero);
  }
  /* i + 3n < len, as i < len - 3n when len > 3n */
  const uint32_t three_n = u32_op(e, SpvOpIMul, n, pc(e, 3));
  const uint32_t room = SPV(b, SpvOpUGreaterThan, e->t_bool, len, three_n);
  const uint32_t limit =
      SPV(b, SpvOpSelect, e->t_u32, room, u32_op(e, SpvOpISub, len, three_n), pc(e, 0));
  probe_loop l4;
  const uint32_t i4 = loop_open(e, &l4, gid, limit);
  for (uint32_t j = 0; j < 4; j++)
    probe_add(e, acc[j], in, p_sb_v4,
              j ? u32_op(e, SpvOpIAdd, i4, u32_op(e, SpvOpIMul, n, pc(e, j))) : i4);
  loop_close(e, &l4, u32_op(e, SpvOpIMul, n, pc(e, 4)));
  probe_loop l1;
  const uint32_t i1 = loop_open(e, &l1, SPV(b, SpvOpLoad, e->t_u32, l4.var), len);
  probe_add(e, acc[0], in, p_sb_v4, i1);
  loop_close(e, &l1, n);
  uint32_t sum4 = SPV(b, SpvOpLoad, e->t_v4, acc[0]);
  for (int j = 1; j < 4; j++)
    sum4 = SPV(b, SpvOpIAdd, e->t_v4, sum4, SPV(b, SpvOpLoad, e->t_v4, acc[j]));
  uint32_t sum = SPV(b, SpvOpCompositeExtract, e->t_u32, sum4, 0);
  for (uint32_t c = 1; c < 4; c++)
    sum = u32_op(e, SpvOpIAdd, sum, SPV(b, SpvOpCompositeExtract, e->t_u32, sum4, c));
  SPV(b, SpvOpStore, 0, SPV(b, SpvOpAccessChain, p_wg_u32, shared, lid), sum);
  const uint32_t wgs = pc(e, SpvScopeWorkgroup);
  SPV(b, SpvOpControlBarrier, 0, wgs, wgs,
      pc(e, SpvMemorySemanticsAcquireReleaseMask | SpvMemorySemanticsWorkgroupMemoryMask));
  const uint32_t then = spvb_id(b), merge = spvb_id(b);
  const uint32_t is_first = SPV(b, SpvOpIEqual, e->t_bool, lid, pc(e, 0));
  SPV(b, SpvOpSelectionMerge, 0, merge, SpvSelectionControlMaskNone);
  SPV(b, SpvOpBranchConditional, 0, is_first, then, merge);
  spvb_label(b, then);
  const uint32_t total = spvb_local_var(b, e->p_fn_u32);
  SPV(b, SpvOpStore, 0, total, pc(e, 0));
  probe_loop ls;
  const uint32_t j = loop_open(e, &ls, pc(e, 0), pc(e, PROBE_LOCAL));
  SPV(b, SpvOpStore, 0, total,
      u32_op(e, SpvOpIAdd, SPV(b, SpvOpLoad, e->t_u32, total),
             SPV(b, SpvOpLoad, e->t_u32, SPV(b, SpvOpAccessChain, p_wg_u32, shared, j))));
  loop_close(e, &ls, pc(e, 1));
  const uint32_t p_pc_u32 = SPV_TYPE(b, SpvOpTypePointer, SpvStorageClassPushConstant, e->t_u32);
  const uint32_t first =
      SPV(b, SpvOpLoad, e->t_u32, SPV(b, SpvOpAccessChain, p_pc_u32, push, pc(e, 0)));
  SPV(b, SpvOpStore, 0,
      SPV(b, SpvOpAccessChain, p_sb_u32, out, pc(e, 0), u32_op(e, SpvOpIAdd, first, wg)),
      SPV(b, SpvOpLoad, e->t_u32, total));
  SPV(b, SpvOpBranch, 0, merge);
  spvb_label(b, merge);
  spvb_code(b, SpvOpReturn, 0, NULL, 0);
  uint32_t *words = spvb_finish(b, main_fn, e->t_void, e->t_fn, PROBE_LOCAL, num_words);
  spvb_free(b);
  return words;
}

/* The probe, ready to run on any tensor of the context's Vulkan device. */
typedef struct probe {
  dmlc_vk_program *program;
  const dmlc_spirv_caps *caps;
  uint64_t window_bytes;
  char error[160];
} probe;

static dmlc_vk_tensor *vk_tensor(dmlc_tensor *t) { return (dmlc_vk_tensor *)t->rt; }

static bool probe_init(probe *p, dmlc_tensor *any) {
  dmlc_vk_device *dev = dmlc_vk_tensor_device(vk_tensor(any));
  p->caps = dmlc_vk_device_caps(dev);
  p->window_bytes = UINT64_C(1) << 30;
  while (p->caps->max_storage_range && p->window_bytes > p->caps->max_storage_range)
    p->window_bytes /= 2;
  size_t n = 0;
  uint32_t *words = probe_module(&n);
  dmlc_diag diag = {0};
  dmlc_status st = words ? dmlc_spirv_validate(words, n, &diag) : DMLC_ERROR_OUT_OF_MEMORY;
  if (st == DMLC_OK)
    st = dmlc_vk_program_create(dev, words, n, PROBE_LOCAL, PROBE_MAX_WINDOWS, &p->program, &diag);
  free(words);
  if (st != DMLC_OK)
    snprintf(p->error, sizeof p->error, "probe: %.150s", diag.message);
  return st == DMLC_OK;
}

/* One probe run over the whole of in, groups workgroups per window: its
 * kernel time in seconds, or -1. */
static double probe_run(probe *p, dmlc_tensor *in, dmlc_tensor *out, uint32_t groups) {
  const uint64_t bytes = dmlc_vk_tensor_size(vk_tensor(in));
  const uint64_t windows = (bytes + p->window_bytes - 1) / p->window_bytes;
  if (windows > PROBE_MAX_WINDOWS)
    return -1;
  double ns = 0;
  dmlc_diag diag = {0};
  if (dmlc_vk_program_run(p->program, vk_tensor(in), p->window_bytes, (uint32_t)windows,
                          vk_tensor(out), groups, &ns, &diag) != DMLC_OK) {
    snprintf(p->error, sizeof p->error, "probe: %.150s", diag.message);
    return -1;
  }
  return ns * 1e-9;
}

/* The probe's workgroup count for in: the fastest of the device's
 * fill_groups, 4 and 16 times that, and one group per 64 KiB (each
 * invocation then reads 256 bytes), each run twice. */
static uint32_t probe_groups(probe *p, dmlc_tensor *in, dmlc_tensor *out) {
  const uint64_t fill = p->caps->fill_groups ? p->caps->fill_groups : 64;
  const uint64_t bytes = dmlc_vk_tensor_size(vk_tensor(in));
  const uint64_t tries[4] = {fill, 4 * fill, 16 * fill, bytes / 65536};
  uint32_t best = 0;
  double best_s = 0;
  for (int i = 0; i < 4; i++) {
    uint64_t g = tries[i] < 1 ? 1 : tries[i];
    if (g > PROBE_GROUPS_MAX)
      g = PROBE_GROUPS_MAX;
    for (int rep = 0; rep < 2; rep++) {
      const double s = probe_run(p, in, out, (uint32_t)g);
      if (s > 0 && (best_s == 0 || s < best_s)) {
        best_s = s;
        best = (uint32_t)g;
      }
    }
  }
  return best;
}

/* w at sizes, into r (r->ok, or r->error saying why not). */
static dmlc_status run_size(dmlc_context *ctx, const workload *w, const uint32_t *sizes, int runs,
                            result *r) {
  char ir[512];
  bench_workload_ir(w, sizes, ir, sizeof ir);
  bench_workload_name(w, sizes, r->name, sizeof r->name);
  dmlc_graph *g = NULL;
  dmlc_executable *exe = NULL, *prof = NULL;
  dmlc_status st = dmlc_graph_parse(ctx, ir, strlen(ir), w->id, &g);
  const double compile0 = bench_now_s();
  if (st == DMLC_OK)
    st = dmlc_graph_compile(g, DMLC_DEVICE_VULKAN, &exe);
  r->compile_s = bench_now_s() - compile0;
  /* the profiled twin: the context's cached kernels, its own buffers */
  if (st == DMLC_OK)
    st = dmlc_graph_compile(g, DMLC_DEVICE_VULKAN, &prof);
  if (st == DMLC_OK)
    st = dmlc_executable_set_profiling(exe, 0);
  if (st != DMLC_OK) {
    snprintf(r->error, sizeof r->error, "%s", dmlc_context_error(ctx));
    dmlc_executable_destroy(exe);
    dmlc_executable_destroy(prof);
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
  /* the caller's output pages in memory before the first call: faulting
   * them in (calloc maps a large buffer untouched) is not dmlc's cost */
  memset(out, 0, out_bytes);
  const dmlc_buffer ib = {in, in_bytes}, ob = {out, out_bytes};
  dmlc_tensor *ti = NULL, *to = NULL;
  st = dmlc_tensor_create(ctx, DMLC_DEVICE_VULKAN, in_bytes, &ti);
  if (st == DMLC_OK)
    st = dmlc_tensor_create(ctx, DMLC_DEVICE_VULKAN, out_bytes, &to);
  if (st == DMLC_OK)
    st = dmlc_tensor_write(ti, 0, in, in_bytes);
  double ns[8];
  const double warm = bench_now_s();
  if (st == DMLC_OK) /* warm-up, both ways: the first calls */
    st = dmlc_execute(exe, &ib, 1, &ob, 1);
  const double warm_mid = bench_now_s();
  if (st == DMLC_OK)
    st = dmlc_execute_tensors(exe, &ti, 1, &to, 1);
  r->first_wall_s = warm_mid - warm;
  r->first_tensor_s = bench_now_s() - warm_mid;
  if (st == DMLC_OK)
    st = dmlc_execute_tensors(prof, &ti, 1, &to, 1);
  /* The probe, on the same input tensor; its sums go to a tensor of its
   * own (one word per workgroup and window). */
  probe pr = {0};
  dmlc_tensor *tp = NULL;
  if (st == DMLC_OK &&
      dmlc_tensor_create(ctx, DMLC_DEVICE_VULKAN, 4 * PROBE_GROUPS_MAX * PROBE_MAX_WINDOWS, &tp) ==
          DMLC_OK &&
      probe_init(&pr, ti)) {
    r->probe_groups = probe_groups(&pr, ti, tp);
    r->probe_bytes = (double)(dmlc_vk_tensor_size(vk_tensor(ti)) / 16 * 16);
  }
  /* Short calls get more runs (up to MAX_RUNS, about 0.2 s of them): a
   * median of 11 calls of 100 us says little on a shared machine. */
  const double pair_s = bench_now_s() - warm;
  if (pair_s > 0 && runs < MAX_RUNS && 0.2 / pair_s > runs)
    runs = 0.2 / pair_s > MAX_RUNS ? MAX_RUNS : (int)(0.2 / pair_s);
  r->runs = runs;
  double *wall = malloc(6 * MAX_RUNS * sizeof *wall);
  if (!wall) {
    fprintf(stderr, "out of memory\n");
    exit(1);
  }
  double *tens = wall + MAX_RUNS, *kern = tens + MAX_RUNS, *over = kern + MAX_RUNS;
  double *probe_s = over + MAX_RUNS, *profiled = probe_s + MAX_RUNS;
  int probe_runs = 0;
  for (int i = 0; st == DMLC_OK && i < runs; i++) {
    double t0 = bench_now_s();
    st = dmlc_execute(exe, &ib, 1, &ob, 1);
    wall[i] = bench_now_s() - t0;
    t0 = bench_now_s();
    if (st == DMLC_OK)
      st = dmlc_execute_tensors(exe, &ti, 1, &to, 1);
    tens[i] = bench_now_s() - t0;
    t0 = bench_now_s();
    if (st == DMLC_OK)
      st = dmlc_execute_tensors(prof, &ti, 1, &to, 1);
    profiled[i] = bench_now_s() - t0;
    size_t count = 0;
    dmlc_executable_kernel_times(prof, ns, 8, &count);
    kern[i] = 0;
    for (size_t k = 0; k < count && k < 8; k++)
      kern[i] += ns[k] * 1e-9;
    over[i] = tens[i] - kern[i];
    r->kernels = (uint32_t)count;
    if (r->probe_groups) {
      const double s = probe_run(&pr, ti, tp, r->probe_groups);
      if (s > 0)
        probe_s[probe_runs++] = s;
    }
  }
  if (probe_runs)
    r->probe_s = bench_median(probe_s, (size_t)probe_runs);
  if (pr.error[0])
    fprintf(stderr, "  %s: %s\n", r->name, pr.error);
  dmlc_vk_program_destroy(pr.program);
  dmlc_tensor_destroy(tp);
  if (st == DMLC_OK) {
    r->wall_s = bench_median(wall, (size_t)runs);
    r->tensor_s = bench_median(tens, (size_t)runs);
    r->kernel_s = bench_median(kern, (size_t)runs);
    r->overhead_s = bench_median(over, (size_t)runs);
    r->profiled_s = bench_median(profiled, (size_t)runs);
    /* the kernel's traffic: the read and every output byte written (an
     * index per kept point: the NHWC u8 [..,3] argmax writes more than it
     * reads) */
    r->bytes = (double)in_bytes + (double)out_bytes;
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
  dmlc_executable_destroy(prof);
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

/* Whether id is one of the comma-separated list (NULL: every id). */
static bool selected(const char *list, const char *id) {
  if (!list)
    return true;
  const size_t n = strlen(id);
  for (const char *p = list; *p;) {
    const char *comma = strchr(p, ',');
    const size_t len = comma ? (size_t)(comma - p) : strlen(p);
    if (len == n && strncmp(p, id, n) == 0)
      return true;
    p += len + (comma != NULL);
  }
  return false;
}

static double gbps(double bytes, double s) { return s > 0 ? bytes / s / 1e9 : 0.0; }

int main(int argc, char **argv) {
  bool quick = false;
  int runs = 11;
  const char *only = NULL;
  for (int i = 1; i < argc; i++) {
    if (strcmp(argv[i], "--quick") == 0) {
      quick = true;
    } else if (strcmp(argv[i], "--runs") == 0 && i + 1 < argc) {
      runs = atoi(argv[++i]);
      runs = runs < 1 ? 1 : runs > MAX_RUNS ? MAX_RUNS : runs;
    } else if (strcmp(argv[i], "--only") == 0 && i + 1 < argc) {
      only = argv[++i];
    } else {
      fprintf(stderr, "usage: %s [--quick] [--runs N] [--only ID,...]\n", argv[0]);
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
  const workload *ws[MAX_WORKLOADS];
  size_t n = 0;
  for (size_t i = 0; i < bench_num_workloads && n < MAX_WORKLOADS; i++) {
    if (!selected(only, bench_workloads[i].id))
      continue;
    ws[n] = &bench_workloads[i];
    res[n] = run_workload(ctx, ws[n], quick, runs);
    fprintf(stderr, "  %-44s %s\n", res[n].name, res[n].ok ? "done" : "failed");
    n++;
  }
  dmlc_context_destroy(ctx);

  /* The probe's table: throughput workloads only (a [1,1000] call is a
   * latency, not a bandwidth). */
  double best = 0;
  for (size_t i = 0; i < n; i++)
    if (res[i].ok && ws[i]->kind != WORK_LATENCY) {
      const double g = gbps(res[i].bytes, res[i].kernel_s);
      best = g > best ? g : best;
    }
  printf("\n| workload | kernels | kernel time | dmlc GB/s | probe GB/s (groups) | dmlc / probe | "
         "of the best dmlc GB/s |\n");
  printf("|---|---:|---:|---:|---:|---:|---:|\n");
  for (size_t i = 0; i < n; i++) {
    const result *r = &res[i];
    if (!r->ok) {
      printf("| %s | ERROR: %s | | | | | |\n", r->name, r->error);
      continue;
    }
    if (ws[i]->kind == WORK_LATENCY)
      continue;
    const double g = gbps(r->bytes, r->kernel_s), pg = gbps(r->probe_bytes, r->probe_s);
    printf("| %s | %u | %.3f ms | %.2f | %.2f (%u) | %.2f | %.2f |\n", r->name, r->kernels,
           r->kernel_s * 1e3, g, pg, r->probe_groups, pg > 0 ? g / pg : 0.0,
           best > 0 ? g / best : 0.0);
  }

  printf("\n| workload | runs | kernel time | dmlc_execute (host buffers) | dmlc_execute_tensors | "
         "overhead (tensors - kernel) | tensors, profiled | compile | first dmlc_execute | first "
         "dmlc_execute_tensors |\n");
  printf("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n");
  for (size_t i = 0; i < n; i++) {
    const result *r = &res[i];
    if (!r->ok)
      continue;
    printf("| %s | %d | %.3f ms | %.3f ms | %.3f ms | %.1f us | %.3f ms | %.1f ms | %.3f ms | "
           "%.3f ms |\n",
           r->name, r->runs, r->kernel_s * 1e3, r->wall_s * 1e3, r->tensor_s * 1e3,
           r->overhead_s * 1e6, r->profiled_s * 1e3, r->compile_s * 1e3, r->first_wall_s * 1e3,
           r->first_tensor_s * 1e3);
  }
  return 0;
}
