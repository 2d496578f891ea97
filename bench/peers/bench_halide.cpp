// The peer: hand-scheduled Halide 14 pipelines for bench_cpu's workloads,
// JIT-compiled in this process next to libdmlc (Halide brings LLVM 14,
// libdmlc LLVM 19; both run side by side), checked against dmlc's output
// on tie-heavy data (integers below 1000: every long row holds its maximum
// several times), then timed in interleaved rounds: one dmlc call, one
// Halide call, on the same input, 2 threads each.
//
// Ties: Halide's rfactor of an argmax merges partial results without
// looking at the index, so it returns the wrong index on ties. Every
// schedule here is two-stage instead: reductions that run along the
// contiguous dim keep LANES partial (value, index) pairs, lane l seeing the
// elements l, l + LANES, ... in order with a strict comparison (so the first
// of equals in its lane), and a second stage merges the lanes by value, then
// smaller index. Reductions across rows run in row order with a strict
// comparison, vectorized over the kept dim: the sequential rule as is.
//
//   build-bench/bin/bench_halide [--quick] [--runs N]
#include <Halide.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

extern "C" {
#include "bench_common.h"
#include "dmlc/dmlc.h"
}

using namespace Halide;

namespace {

constexpr int LANES = 16;     // vector width of the column schedules
constexpr int ROW_LANES = 16; // partial results per row (64, four vectors, was slower)

Expr better(bool max, Expr a, Expr b) { return max ? a > b : a < b; }

// Reduction along x (the contiguous dim): stage 1 per lane, stage 2 merge.
Func reduce_x(Func in, int n, bool max, Var y, Var z, int rank) {
  Var l("l");
  const int chunks = n / ROW_LANES;
  RDom r(0, chunks, "r");
  Func part("part");
  std::vector<Expr> pure = {l, y};
  if (rank == 3)
    pure.push_back(z);
  auto at = [&](Expr x) { return rank == 3 ? in(x, y, z) : in(x, y); };
  part(pure) = Tuple(at(l), l);
  Expr x = r * ROW_LANES + l;
  Expr v = at(x);
  Expr take = better(max, v, part(pure)[0]);
  part(pure) = Tuple(select(take, v, part(pure)[0]), select(take, x, part(pure)[1]));
  Func merged("merged");
  RDom m(1, ROW_LANES - 1, "m");
  std::vector<Expr> kept = {y};
  if (rank == 3)
    kept.push_back(z);
  std::vector<Expr> p0 = {0, y}, pm = {m, y};
  if (rank == 3) {
    p0.push_back(z);
    pm.push_back(z);
  }
  merged(kept) = Tuple(part(p0)[0], part(p0)[1]);
  Expr pv = part(pm)[0], pi = part(pm)[1];
  Expr bv = merged(kept)[0], bi = merged(kept)[1];
  Expr t2 = better(max, pv, bv) || (pv == bv && pi < bi);
  merged(kept) = Tuple(select(t2, pv, bv), select(t2, pi, bi));
  // schedule: rows in parallel, lanes vectorized
  part.bound(l, 0, ROW_LANES).compute_at(merged, y).vectorize(l, LANES);
  part.update().vectorize(l, LANES);
  merged.parallel(y, 8);
  merged.update(0).unscheduled();
  return merged;
}

// Reduction across rows (the reduced dim is y, outer to x): sequential over
// y, vectorized over x.
Func reduce_y(Func in, int ny, int nx, bool max, Var x, Var z, int rank) {
  const int block = nx < 2048 ? nx : 2048;
  RDom r(1, ny - 1, "r");
  Func acc("acc");
  std::vector<Expr> kept = {x};
  if (rank == 3)
    kept.push_back(z);
  auto at = [&](Expr y) { return rank == 3 ? in(x, y, z) : in(x, y); };
  acc(kept) = Tuple(at(0), 0);
  Expr v = at(r);
  Expr take = better(max, v, acc(kept)[0]);
  acc(kept) = Tuple(select(take, v, acc(kept)[0]), select(take, Expr(r), acc(kept)[1]));
  Var xo("xo"), xi("xi");
  acc.split(x, xo, xi, block).vectorize(xi, LANES).parallel(rank == 3 ? z : xo);
  acc.update()
      .split(x, xo, xi, block)
      .reorder(xi, r, xo)
      .vectorize(xi, LANES)
      .parallel(rank == 3 ? z : xo);
  return acc;
}

struct Workload {
  const char *id; // bench_workloads id
  bool max, hard;
  int rank;
  int sizes[3]; // the IR's sizes (outer first)
  int axis;     // the IR's axis
};

const Workload workloads[] = {
    {"argmax_rows", true, false, 2, {8192, 8192}, 1},
    {"argmax_cols", true, false, 2, {8192, 8192}, 0},
    {"argmin_mid", false, false, 3, {64, 1024, 1024}, 1},
    {"hardmax_rows", true, true, 2, {8192, 8192}, 1},
    {"hardmax_cols", true, true, 2, {8192, 8192}, 0},
};

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

} // namespace

int main(int argc, char **argv) {
  bool quick = false;
  int runs = 15;
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "--quick"))
      quick = true;
    else if (!strcmp(argv[i], "--runs") && i + 1 < argc)
      runs = atoi(argv[++i]);
  }
  dmlc_context *ctx = nullptr;
  if (dmlc_context_create(&ctx) != DMLC_OK)
    return 1;
  dmlc_context_set_num_threads(ctx, 2);
  Target target = get_jit_target_from_environment();
  printf("dmlc against hand-scheduled Halide 14 (%s), 2 threads each, %d interleaved runs\n\n",
         target.to_string().c_str(), runs);
  printf("| workload | dmlc median | Halide median | dmlc / Halide | same indices |\n");
  printf("|---|---:|---:|---:|---|\n");
  setenv("HL_NUM_THREADS", "2", 0);
  for (const Workload &w : workloads) {
    int sizes[3];
    for (int d = 0; d < w.rank; d++)
      sizes[d] = quick && w.sizes[d] >= 1024 ? w.sizes[d] / 16 : w.sizes[d];
    // dmlc
    const workload *bw = nullptr;
    for (size_t i = 0; i < bench_num_workloads; i++)
      if (!strcmp(bench_workloads[i].id, w.id))
        bw = &bench_workloads[i];
    if (!bw)
      continue;
    uint32_t usizes[4];
    for (int d = 0; d < w.rank; d++)
      usizes[d] = (uint32_t)sizes[d];
    char ir[512], name[128];
    bench_workload_ir(bw, usizes, ir, sizeof ir);
    bench_workload_name(bw, usizes, name, sizeof name);
    dmlc_graph *g = nullptr;
    dmlc_executable *exe = nullptr;
    if (dmlc_graph_parse(ctx, ir, strlen(ir), w.id, &g) != DMLC_OK ||
        dmlc_graph_compile(g, DMLC_DEVICE_CPU, &exe) != DMLC_OK) {
      printf("| %s | compile failed: %s | | | |\n", name, dmlc_context_error(ctx));
      continue;
    }
    size_t n = 1;
    for (int d = 0; d < w.rank; d++)
      n *= (size_t)sizes[d];
    const size_t kept_n = w.hard ? n : n / (size_t)sizes[w.axis];
    std::vector<float> in(n);
    bench_fill_random("f32", reinterpret_cast<unsigned char *>(in.data()), n * 4);
    std::vector<uint32_t> dm_idx(w.hard ? 0 : kept_n);
    std::vector<float> dm_hard(w.hard ? n : 0), hl_hard(w.hard ? n : 0);
    const dmlc_buffer ib = {in.data(), n * 4};
    const dmlc_buffer ob = {w.hard ? (void *)dm_hard.data() : (void *)dm_idx.data(),
                            w.hard ? n * 4 : kept_n * 4};

    // Halide: x is the IR's last dim
    Buffer<float> hin = w.rank == 3 ? Buffer<float>(in.data(), sizes[2], sizes[1], sizes[0])
                                    : Buffer<float>(in.data(), sizes[1], sizes[0]);
    Var x("x"), y("y"), z("z");
    Func src("src");
    if (w.rank == 3)
      src(x, y, z) = hin(x, y, z);
    else
      src(x, y) = hin(x, y);
    // Halide dim of the IR's axis: last IR dim is x (0)
    const int hdim = w.rank - 1 - w.axis;
    Func red;
    if (hdim > 1)
      continue; /* not scheduled here */
    if (hdim == 0) {
      red = reduce_x(src, sizes[w.rank - 1], w.max, y, z, w.rank);
    } else if (hdim == 1) {
      red = reduce_y(src, sizes[w.rank - 2], sizes[w.rank - 1], w.max, x, z, w.rank);
    }
    red.compute_root();
    Buffer<int32_t> hidx;
    Buffer<float> hhard;
    std::vector<int32_t> hl_idx(kept_n);
    if (w.hard) {
      // one-hot of the row's index: rows (hdim 0) or columns (hdim 1)
      Func h("h");
      if (hdim == 0) {
        h(x, y) = select(x == red(y)[1], 1.0f, 0.0f);
        Var xo("xo"), xi("xi");
        h.split(x, xo, xi, LANES).vectorize(xi).parallel(y, 8);
      } else {
        h(x, y) = select(y == red(x)[1], 1.0f, 0.0f);
        Var xo("xo"), xi("xi");
        h.vectorize(x, LANES).parallel(y, 64);
      }
      hhard = Buffer<float>(hl_hard.data(), sizes[1], sizes[0]);
      h.compile_jit(target);
      auto run = [&] { h.realize(hhard); };
      run();
      dmlc_execute(exe, &ib, 1, &ob, 1);
      const bool same = !memcmp(hl_hard.data(), dm_hard.data(), n * 4);
      std::vector<double> td, th;
      for (int i = 0; i < runs; i++) {
        double t0 = bench_now_s();
        dmlc_execute(exe, &ib, 1, &ob, 1);
        td.push_back(bench_now_s() - t0);
        t0 = bench_now_s();
        run();
        th.push_back(bench_now_s() - t0);
      }
      printf("| %s | %.3f ms | %.3f ms | %.2f | %s |\n", name, median(td) * 1e3, median(th) * 1e3,
             median(td) / median(th), same ? "yes" : "NO");
    } else {
      if (w.rank == 3 && hdim == 0)
        hidx = Buffer<int32_t>(hl_idx.data(), sizes[1], sizes[0]);
      else if (w.rank == 3 && hdim == 1)
        hidx = Buffer<int32_t>(hl_idx.data(), sizes[2], sizes[0]);
      else
        hidx = Buffer<int32_t>(hl_idx.data(), hdim == 0 ? sizes[0] : sizes[1]);
      // the index component only
      Func only("only");
      if (w.rank == 3) {
        only(y, z) = red(y, z)[1];
        only.parallel(z);
      } else {
        only(y) = red(y)[1];
      }
      only.compile_jit(target);
      auto run = [&] { only.realize(hidx); };
      run();
      dmlc_execute(exe, &ib, 1, &ob, 1);
      bool same = true;
      for (size_t i = 0; i < kept_n; i++)
        same &= (uint32_t)hl_idx[i] == dm_idx[i];
      std::vector<double> td, th;
      for (int i = 0; i < runs; i++) {
        double t0 = bench_now_s();
        dmlc_execute(exe, &ib, 1, &ob, 1);
        td.push_back(bench_now_s() - t0);
        t0 = bench_now_s();
        run();
        th.push_back(bench_now_s() - t0);
      }
      printf("| %s | %.3f ms | %.3f ms | %.2f | %s |\n", name, median(td) * 1e3, median(th) * 1e3,
             median(td) / median(th), same ? "yes" : "NO");
    }
    fflush(stdout);
    dmlc_executable_destroy(exe);
    dmlc_graph_destroy(g);
  }
  dmlc_context_destroy(ctx);
  return 0;
}
