// The peer: hand-scheduled Halide 14 pipelines for every workload of
// bench_workloads[] (bench_common.c: the ones bench_cpu runs), JIT-compiled
// in this process next to libdmlc (Halide brings LLVM 14, libdmlc LLVM 19;
// both run side by side), checked against dmlc's output and against a
// brute-force reference on tie-heavy data (bench_fill_random: integers below
// 1000, or every byte value; every long row holds its extreme several
// times), then timed in interleaved rounds: one dmlc call, one Halide call,
// on the same input, 2 threads each. The latency workload ([1,1000]) is
// timed in interleaved batches of calls on the calling thread, as bench_cpu
// does; Halide's figure there includes Halide 14's realize() overhead (no
// Callable before Halide 15).
//
// Ties: Halide's rfactor of an argmax merges partial results without
// looking at the index, so it returns the wrong index on ties. Every
// schedule here is two-stage instead, and tie-correct by construction
// (dmlc's rule: the first index, in row-major order over the reduced axes,
// of the max / min):
//
//  - along the contiguous dim (rows, the vocabulary, all axes flattened):
//    stage 1 keeps LANES partial (value, step) pairs per chunk of the row,
//    lane l of chunk k seeing the elements k*C + l, k*C + l + LANES, ... in
//    order with a strict comparison (so the first of equals in its lane;
//    the step r, index k*C + r*LANES + l, is kept as narrow as the values
//    where it fits: u8 for byte types, u16 for f16); stage 2 merges the
//    chunks lane by lane, then the lanes as a vectorized tree (halves
//    merged pairwise), always by value, then smaller index; a scalar tail
//    (indices above all others) runs last, in order, strict. Many rows:
//    rows in parallel, one chunk a row. One row (vocab B = 1, all axes): 8
//    chunks in parallel. LANES: 2 vectors (f32, f16), 4 (i8), 1 (i64);
//    tried 1, 2, 4 vectors each (2+ beat 1 for bytes by 2x; i64 and f32 in
//    the noise). A serial 32-lane merge (the first version) cost as much as
//    the row itself on rows of 1000 and of 8192 bytes; the tree fixed it.
//  - across an outer dim (columns, the first of three dims, NCHW f16 with
//    C = 64): the input seen as (inner i, reduced r, outer o); sequential
//    over r with a strict comparison (the sequential rule as is), U rows a
//    step as a select chain (the accumulator stays in registers between
//    them: U = 4 for 32/64-bit, 8 for 16-bit, 1 was up to 2x slower),
//    vectorized over i, blocks of 4 KiB of i (tried 1, 2, 8 KiB: noise) and
//    o in parallel, the block's accumulator in L1. A reduced extent up to 8
//    (NCHW u8, C = 3) is one select chain in registers; doing that for
//    C = 64 (64 read streams) made [64,1024,1024] axis 0 1.6x slower.
//  - a small innermost reduced dim (NHWC, C = 3): the kept positions
//    vectorized (stride-3 loads), the C values unrolled in order.
//  - two non-adjacent axes ({0,2} of [Z,Y,X]): stage 1 reduces z (outer)
//    in order, vectorized over the kept (x, y) plane; stage 2 merges the X
//    partials of each y by value, then smaller flat index z*X + x (dmlc's
//    flat index over the reduced axes, row-major; the reference agrees).
//
// f16 compares through an order-preserving int16 key of its bits (s >= 0 ?
// s : -(s & 0x7fff); -0 == +0; bench data has no NaN): 32 lanes a vector
// and no conversion; widening to f32 in the pipeline was 3-5x slower.
// Other types compare natively. Hardmax is the one-hot of the same index
// (rows: fused per row; columns: the index row first, then the one-hot
// written row by row); both are store-bound, and Halide 14 has no
// non-temporal stores, which is most of what they lose to dmlc.
//
// The schedule constants can be overridden for tuning: HB_LM (lanes, in
// vectors), HB_U, HB_BLOCK (elements), HB_CHAIN, HB_PY (rows a task).
// The i64 rows time is bimodal here (3.5 or 7.6 ms, alone or in the full
// run, whatever the schedule: an int64 step, 1 or 2 vectors of lanes).
//
//   build-bench/bin/bench_halide [--quick] [--calibrate] [--runs N] [--only ID,ID,...]
//
// Both sides on one narrower instruction set: Halide's target from
// HL_JIT_TARGET (e.g. x86-64-linux-avx-avx2-f16c-fma-sse41), dmlc's from
// DMLC_CPU_FEATURES=-avx512f or DMLC_CPU=x86-64-v2 (docs/performance.md).
#include <Halide.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

extern "C" {
#include "bench_common.h"
#include "dmlc/dmlc.h"
}

using namespace Halide;

namespace {

Expr better(bool max, Expr a, Expr b) { return max ? a > b : a < b; }

// The neutral start of a lane: every real value beats it, or equals it (then
// the lane's first index, its start index, is the answer).
Expr lowest(Type t, bool max) { return max ? t.min() : t.max(); }

Type ir_type(const char *t) {
  if (!strcmp(t, "f32"))
    return Float(32);
  if (!strcmp(t, "f16"))
    return Float(16);
  if (!strcmp(t, "i8"))
    return Int(8);
  if (!strcmp(t, "u8"))
    return UInt(8);
  if (!strcmp(t, "u16"))
    return UInt(16);
  return Int(64);
}

// Row reduction along x of v(x, y): n elements a row, m rows, k_chunks
// chunks a row, `lanes` partial results a chunk. Returns (value, int32
// index) over y, computed at the caller's y (rows in parallel there when
// parallel_rows; else the chunks in parallel when k_chunks > 1).
int knob(const char *name, int dflt) {
  const char *e = getenv(name);
  return e && *e ? atoi(e) : dflt;
}

// Merge two (value, index) pairs: by value, then smaller index.
Tuple merge2(bool max, Tuple a, Tuple b) {
  Expr t = better(max, b[0], a[0]) || (b[0] == a[0] && b[1] < a[1]);
  return Tuple(select(t, b[0], a[0]), select(t, b[1], a[1]));
}

Func reduce_rows(Func v, Type vt, int n, bool max, int k_chunks, int lanes, bool parallel_rows,
                 int vec) {
  Var l("l"), k("k"), y("y");
  int per = n / (k_chunks * lanes);
  if (per == 0) {
    k_chunks = 1;
    per = n / lanes;
  }
  if (per == 0) {
    lanes = 1;
    per = n;
  }
  const int cl = per * lanes, main_n = cl * k_chunks;
  // the step counter's type: as narrow as the values where it fits
  Type st = vt.bits() == 8 && per <= 256      ? UInt(8)
            : vt.bits() == 16 && per <= 65536 ? UInt(16)
                                              : Int(32);
  Func part("part");
  part(l, k, y) = Tuple(lowest(vt, max), cast(st, 0));
  RDom r(0, per, "r");
  Expr val = v(k * cl + r * lanes + l, y);
  Expr take = better(max, val, part(l, k, y)[0]);
  part(l, k, y) =
      Tuple(select(take, val, part(l, k, y)[0]), select(take, cast(st, r), part(l, k, y)[1]));
  // stage 2: chunks merged lane by lane (vectorized), then a tree over the
  // lanes (halves merged pairwise, vectorized): all by value, then index
  Func pk("pk");
  auto at = [&](Expr kk) {
    return Tuple(part(l, kk, y)[0], kk * cl + cast<int>(part(l, kk, y)[1]) * lanes + l);
  };
  pk(l, y) = at(0);
  RDom kr(1, std::max(k_chunks - 1, 1), "kr");
  if (k_chunks > 1)
    pk(l, y) = merge2(max, Tuple(pk(l, y)[0], pk(l, y)[1]), at(kr));
  std::vector<Func> tree = {pk};
  for (int w = lanes / 2; w >= 1; w /= 2) {
    Func lv("lv");
    const Func &p = tree.back();
    lv(l, y) = merge2(max, Tuple(p(l, y)[0], p(l, y)[1]), Tuple(p(l + w, y)[0], p(l + w, y)[1]));
    tree.push_back(lv);
  }
  Func merged("merged");
  merged(y) = Tuple(tree.back()(0, y)[0], tree.back()(0, y)[1]);
  if (main_n < n) {
    RDom t(main_n, n - main_n, "t");
    Expr tv = v(t, y);
    Expr t3 = better(max, tv, merged(y)[0]);
    merged(y) = Tuple(select(t3, tv, merged(y)[0]), select(t3, Expr(t), merged(y)[1]));
    merged.update(0).unscheduled();
  }
  const int vw = lanes >= vec ? vec : lanes;
  for (size_t d = 0; d < tree.size(); d++) {
    const int w = lanes >> d;
    tree[d].compute_at(merged, y).bound(l, 0, w).vectorize(l, std::min(w, vec));
  }
  if (k_chunks > 1)
    pk.update().vectorize(l, vw);
  if (k_chunks > 1 && !parallel_rows) {
    part.compute_root().bound(l, 0, lanes).bound(k, 0, k_chunks);
    part.reorder(l, k, y).vectorize(l, vw).parallel(k);
    part.update().reorder(l, r, k, y).vectorize(l, vw).parallel(k);
  } else {
    part.compute_at(merged, y).bound(l, 0, lanes).bound(k, 0, k_chunks);
    part.vectorize(l, vw);
    part.update().reorder(l, r, k, y).vectorize(l, vw);
  }
  return merged;
}

// Reduction over r of v(i, r, o), in order, vectorized over i. Returns
// (value, index of type it) over (i, o), to be scheduled by the caller
// (compute_at a consumer's block) unless `chain` (a pure select chain,
// inlined: small r).
Func reduce_outer(Func v, Type vt, Type it, int R, bool max, bool chain, Var i, Var o, RDom &r) {
  Func acc("acc");
  if (chain) {
    Expr bv = v(i, 0, o), bi = cast(it, 0);
    for (int c = 1; c < R; c++) {
      Expr cv = v(i, c, o);
      Expr take = better(max, cv, bv);
      bi = select(take, cast(it, c), bi);
      bv = select(take, cv, bv);
    }
    acc(i, o) = Tuple(bv, bi);
    return acc;
  }
  // U rows a step, in order (the accumulator stays in registers between them)
  int U = knob("HB_U", vt.bits() <= 16 ? 8 : 4);
  while (R % U)
    U /= 2;
  acc(i, o) = Tuple(lowest(vt, max), cast(it, 0));
  r = RDom(0, R / U, "r");
  Expr bv = acc(i, o)[0], bi = acc(i, o)[1];
  for (int u = 0; u < U; u++) {
    Expr cv = v(i, r * U + u, o);
    Expr take = better(max, cv, bv);
    bi = select(take, cast(it, r * U + u), bi);
    bv = select(take, cv, bv);
  }
  acc(i, o) = Tuple(bv, bi);
  return acc;
}

double median(std::vector<double> v) { return bench_median(v.data(), v.size()); }

// The median of each round's dmlc / peer ratio: the two calls of a round
// run back to back, so the machine's drift over the run cancels.
double paired(const std::vector<double> &td, const std::vector<double> &th) {
  std::vector<double> r(td.size());
  for (size_t i = 0; i < td.size(); i++)
    r[i] = td[i] / th[i];
  return median(r);
}

// The reference: dmlc's semantics by brute force over the IR's dims.
template <typename T> double as_double(const unsigned char *p) {
  T t;
  memcpy(&t, p, sizeof t);
  return (double)t;
}

std::vector<uint32_t> reference(const workload *w, const uint32_t *sizes, const uint64_t *strides,
                                const unsigned char *in) {
  const char *t = w->type;
  double (*get)(const unsigned char *);
  size_t es;
  if (!strcmp(t, "f32"))
    get = as_double<float>, es = 4;
  else if (!strcmp(t, "f16"))
    get =
        [](const unsigned char *p) {
          uint16_t h;
          memcpy(&h, p, 2);
          return (double)dmlc_half_to_float(h);
        },
    es = 2;
  else if (!strcmp(t, "i8"))
    get = as_double<int8_t>, es = 1;
  else if (!strcmp(t, "u8"))
    get = as_double<uint8_t>, es = 1;
  else if (!strcmp(t, "u16"))
    get = as_double<uint16_t>, es = 2;
  else
    get = as_double<int64_t>, es = 8;
  const bool max = strcmp(w->op, "argmin") != 0;
  bool red[4] = {false, false, false, false};
  for (uint32_t a = 0; a < w->num_axes; a++)
    red[w->axes[a]] = true;
  std::vector<uint32_t> kd, rd;
  for (uint32_t d = 0; d < w->rank; d++)
    (red[d] ? rd : kd).push_back(d);
  size_t kept = 1, rn = 1;
  for (uint32_t d : kd)
    kept *= sizes[d];
  for (uint32_t d : rd)
    rn *= sizes[d];
  std::vector<uint32_t> out(kept);
  std::vector<uint32_t> ki(kd.size(), 0), ri(rd.size());
  for (size_t o = 0; o < kept; o++) {
    uint64_t base = 0;
    for (size_t a = 0; a < kd.size(); a++)
      base += ki[a] * strides[kd[a]];
    std::fill(ri.begin(), ri.end(), 0);
    double best = 0;
    uint32_t bi = 0;
    for (size_t q = 0; q < rn; q++) {
      uint64_t off = base;
      for (size_t a = 0; a < rd.size(); a++)
        off += ri[a] * strides[rd[a]];
      const double v = get(in + off * es);
      if (q == 0 || (max ? v > best : v < best))
        best = v, bi = (uint32_t)q;
      for (size_t a = rd.size(); a-- > 0;) {
        if (++ri[a] < sizes[rd[a]])
          break;
        ri[a] = 0;
      }
    }
    out[o] = bi;
    for (size_t a = kd.size(); a-- > 0;) {
      if (++ki[a] < sizes[kd[a]])
        break;
      ki[a] = 0;
    }
  }
  return out;
}

} // namespace

int main(int argc, char **argv) {
  bool quick = false, calibrate = false, small_pages = false;
  int runs = 21; // 21 calibrate at 0.95-1.03 paired on a Zen 3; 9 at 0.95-1.13
  const char *only = nullptr;
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "--quick"))
      quick = true;
    else if (!strcmp(argv[i], "--calibrate"))
      calibrate = true;
    else if (!strcmp(argv[i], "--runs") && i + 1 < argc)
      runs = atoi(argv[++i]);
    else if (!strcmp(argv[i], "--only") && i + 1 < argc)
      only = argv[++i];
    else if (!strcmp(argv[i], "--small-pages"))
      small_pages = true; // buffers on 4 KiB pages, not huge pages (bench_alloc)
  }
  setenv("HL_NUM_THREADS", "2", 0);
  dmlc_context *ctx = nullptr;
  if (dmlc_context_create(&ctx) != DMLC_OK)
    return 1;
  dmlc_context_set_num_threads(ctx, 2);
  // Halide 14 calls a Zen 4 (AVX512-BF16 and VNNI) a Sapphire Rapids, whose
  // LLVM CPU has instructions Zen 4 lacks (SIGILL on the f16 rows): drop it
  Target target = get_jit_target_from_environment().without_feature(Target::AVX512_SapphireRapids);
  const int vbytes = target.has_feature(Target::AVX512) ? 64
                     : target.has_feature(Target::AVX)  ? 32
                                                        : 16;
  printf("dmlc against hand-scheduled Halide 14 (%s), 2 threads each, %d interleaved runs (each "
         "side first in turn)%s%s\n\n",
         target.to_string().c_str(), runs, quick ? "; quick run: sizes / 16" : "",
         calibrate ? "; calibration: the Halide column times dmlc again" : "");
  printf("| workload | dmlc median | Halide median | dmlc / Halide | paired | same indices |\n");
  printf("|---|---:|---:|---:|---:|---|\n");
  fflush(stdout);
  bool all_same = true;
  for (size_t wi = 0; wi < bench_num_workloads; wi++) {
    const workload *w = &bench_workloads[wi];
    if (only) { // a comma-separated list of ids
      const std::string list = "," + std::string(only) + ",";
      if (list.find("," + std::string(w->id) + ",") == std::string::npos)
        continue;
    }
    const uint32_t rank = w->rank;
    uint32_t sizes[4];
    for (uint32_t d = 0; d < rank; d++)
      sizes[d] = quick && w->sizes[d] >= 1024 ? w->sizes[d] / 16 : w->sizes[d];
    char ir[512], name[128];
    bench_workload_ir(w, sizes, ir, sizeof ir);
    bench_workload_name(w, sizes, name, sizeof name);
    dmlc_graph *g = nullptr;
    dmlc_executable *exe = nullptr;
    if (dmlc_graph_parse(ctx, ir, strlen(ir), w->id, &g) != DMLC_OK ||
        dmlc_graph_compile(g, DMLC_DEVICE_CPU, &exe) != DMLC_OK) {
      printf("| %s | compile failed: %s | | | |\n", name, dmlc_context_error(ctx));
      dmlc_graph_destroy(g);
      continue;
    }
    dmlc_tensor_info in_info, out_info;
    dmlc_executable_input_info(exe, 0, &in_info);
    dmlc_executable_output_info(exe, 0, &out_info);
    const size_t in_bytes = in_info.total_size_bytes, out_bytes = out_info.total_size_bytes;
    auto alloc = [small_pages](size_t b) {
      return static_cast<unsigned char *>(bench_alloc(b, small_pages));
    };
    unsigned char *in = alloc(in_bytes), *dm_out = alloc(out_bytes), *hl_out = alloc(out_bytes);
    bench_fill_random(w->type, in, in_bytes);
    memset(dm_out, 0, out_bytes);
    memset(hl_out, 0xff, out_bytes);
    const dmlc_buffer ib = {in, in_bytes}, ob = {dm_out, out_bytes};

    const bool hard = !strcmp(w->op, "hardmax"), max = strcmp(w->op, "argmin") != 0;
    const Type t = ir_type(w->type);
    // f16 compared through an order-preserving int16 key (see widen)
    const Type vt = t.is_float() && t.bits() == 16 ? Int(16) : t;
    const int vec = vbytes * 8 / vt.bits(); // lanes of one vector of values
    // element strides of the IR's dims
    uint64_t strides[4], s = 1;
    for (uint32_t d = rank; d-- > 0;) {
      strides[d] = s;
      s *= sizes[d] + (d == rank - 1 ? w->row_pad : 0);
    }
    size_t total = 1;
    for (uint32_t d = 0; d < rank; d++)
      total *= sizes[d];
    const bool all_axes = w->num_axes == rank;
    auto input = [&](std::vector<halide_dimension_t> dims) {
      Buffer<> b(t, in, (int)dims.size(), dims.data());
      return b;
    };
    // f16: the bits as int16 s; key = s >= 0 ? s : -(s & 0x7fff) orders
    // like the floats (-0 == +0; no NaN in bench data), 32 lanes a vector
    auto widen = [&](Expr e) {
      if (!(t.is_float() && t.bits() == 16))
        return e;
      Expr b = reinterpret(Int(16), e);
      return select(b < 0, cast<int16_t>(0) - (b & cast<int16_t>(0x7fff)), b);
    };

    Func pipe("pipe"); // int32 index (or the one-hot) over the output's dims, Halide order
    Buffer<> hout;
    Var x("x"), y("y"), i("i"), o("o"), io("io"), ii("ii");
    Buffer<> hin;
    RDom rr;
    // rows of up to 128 go by the kept positions (below): f32 and f16
    // [524288,80] 7.3-7.8 ms that way, 45-55 ms along the rows
    if (all_axes || (w->num_axes == 1 && w->axes[0] == rank - 1 &&
                     sizes[rank - 1] > (uint32_t)knob("HB_SMALL_MAX", 128))) {
      // along the contiguous dim: rows (y) of n, kept dims flattened into y
      const int n = all_axes ? (int)total : (int)sizes[rank - 1];
      const int m = (int)(total / (size_t)n);
      const int row_stride = all_axes ? n : (int)strides[rank - 2];
      hin = input({{0, n, 1, 0}, {0, m, row_stride, 0}});
      Func v("v");
      v(x, y) = widen(hin(x, y));
      const bool latency = w->kind == WORK_LATENCY;
      const int lanes = knob("HB_LM", vt.bits() == 64 ? 1 : vt.bits() == 8 ? 4 : 2) * vec;
      const int k_chunks = latency || m >= 4 ? 1 : 8;
      Func red1 = reduce_rows(v, vt, n, max, k_chunks, lanes, !latency && m >= 2, vec);
      if (hard) {
        pipe(x, y) = select(x == red1(y)[1], cast(t, 1), cast(t, 0));
        pipe.vectorize(x, vec).parallel(y, knob("HB_PY", 1));
        red1.compute_at(pipe, y);
        hout = Buffer<>(t, hl_out, 2,
                        std::vector<halide_dimension_t>{{0, n, 1, 0}, {0, m, n, 0}}.data());
      } else {
        pipe(y) = red1(y)[1];
        red1.compute_at(pipe, y);
        if (!latency && m >= 2)
          pipe.parallel(y, knob("HB_PY", 1));
        hout = Buffer<>(Int(32), hl_out, 1, std::vector<halide_dimension_t>{{0, m, 1, 0}}.data());
      }
    } else if (w->num_axes == 1 && w->axes[0] == rank - 1) {
      // a short innermost reduced dim (up to 128): the kept positions
      // vectorized
      const int C = (int)sizes[rank - 1], P = (int)(total / (size_t)C);
      hin = input({{0, C, 1, 0}, {0, P, C, 0}});
      Func v("v");
      v(i, x, o) = widen(hin(x, i));
      Type it = vt.bits() == 8 ? UInt(8) : Int(32);
      Func acc = reduce_outer(v, vt, it, C, max, true, i, o, rr);
      pipe(i) = cast<int>(acc(i, 0)[1]);
      pipe.split(i, io, ii, 1 << 14).vectorize(ii, vec).parallel(io);
      hout = Buffer<>(Int(32), hl_out, 1, std::vector<halide_dimension_t>{{0, P, 1, 0}}.data());
    } else if (w->num_axes == 1) {
      // across an outer dim: (inner i, reduced r, outer o)
      const uint32_t a = w->axes[0];
      int I = 1, O = 1;
      for (uint32_t d = a + 1; d < rank; d++)
        I *= (int)sizes[d];
      for (uint32_t d = 0; d < a; d++)
        O *= (int)sizes[d];
      const int R = (int)sizes[a];
      hin = input({{0, I, 1, 0}, {0, R, I, 0}, {0, O, I * R, 0}});
      Func v("v");
      v(i, x, o) = widen(hin(i, x, o));
      Type it = vt.bits() == 8 && R <= 256      ? UInt(8)
                : vt.bits() == 16 && R <= 65536 ? UInt(16)
                                                : Int(32);
      const bool chain = R <= knob("HB_CHAIN", 8);
      Func acc = reduce_outer(v, vt, it, R, max, chain, i, o, rr);
      const int block = std::min(I, chain ? 1 << 14 : knob("HB_BLOCK", 4096 / vt.bytes()));
      if (hard) {
        Func idx("idx");
        idx(i, o) = cast<int>(acc(i, o)[1]);
        idx.compute_root().split(i, io, ii, block).vectorize(ii, vec).parallel(io);
        if (!chain) {
          acc.compute_at(idx, io).vectorize(i, vec);
          acc.update().reorder(i, rr).vectorize(i, vec);
        }
        // one-hot, written row by row: pipe(i, r, o)
        pipe(i, x, o) = select(x == idx(i, o), cast(t, 1), cast(t, 0));
        pipe.vectorize(i, vec).parallel(x);
        hout = Buffer<>(
            t, hl_out, 3,
            std::vector<halide_dimension_t>{{0, I, 1, 0}, {0, R, I, 0}, {0, O, I * R, 0}}.data());
      } else {
        pipe(i, o) = cast<int>(acc(i, o)[1]);
        pipe.split(i, io, ii, block).vectorize(ii, vec);
        if (O >= 2)
          pipe.parallel(o);
        else
          pipe.parallel(io);
        if (!chain) {
          acc.compute_at(pipe, io).vectorize(i, vec);
          acc.update().reorder(i, rr).vectorize(i, vec);
        }
        hout = Buffer<>(Int(32), hl_out, 2,
                        std::vector<halide_dimension_t>{{0, I, 1, 0}, {0, O, I, 0}}.data());
      }
    } else if (w->num_axes == 2 && w->axes[1] == rank - 1 && rank == 3 && w->axes[0] == 0) {
      // {0,2} of [Z,Y,X]: stage 1 over z in order on the (x, y) plane,
      // stage 2 merges the X partials of each y by value, then flat index
      const int X = (int)sizes[2], Y = (int)sizes[1], Z = (int)sizes[0];
      hin = input({{0, X * Y, 1, 0}, {0, Z, X * Y, 0}, {0, 1, X * Y * Z, 0}});
      Func v("v");
      v(i, x, o) = widen(hin(i, x, o));
      Func acc = reduce_outer(v, vt, Int(32), Z, max, false, i, o, rr);
      Func plane("plane");
      plane(i) = acc(i, 0);
      const int block = 1024;
      plane.compute_root().split(i, io, ii, block).vectorize(ii, vec).parallel(io);
      acc.compute_at(plane, io).vectorize(i, vec);
      acc.update().reorder(i, rr).vectorize(i, vec);
      Func merged("merged");
      merged(y) = Tuple(lowest(vt, max), 0);
      RDom q(0, X, "q");
      Expr pv = plane(y * X + q)[0], pi = plane(y * X + q)[1] * X + q;
      Expr bv = merged(y)[0], bi = merged(y)[1];
      Expr tk = better(max, pv, bv) || (pv == bv && pi < bi);
      merged(y) = Tuple(select(tk, pv, bv), select(tk, pi, bi));
      pipe(y) = merged(y)[1];
      pipe.parallel(y, 64);
      hout = Buffer<>(Int(32), hl_out, 1, std::vector<halide_dimension_t>{{0, Y, 1, 0}}.data());
    } else {
      printf("| %s | (no Halide schedule) | | | | |\n", name);
      continue;
    }
    pipe.compile_jit(target);
    auto run_hl = [&] { pipe.realize(hout); };
    auto run_dm = [&] { dmlc_execute(exe, &ib, 1, &ob, 1); };
    run_hl();
    run_dm();
    // compare: Halide with dmlc, and dmlc with the brute-force reference
    std::vector<uint32_t> ref = reference(w, sizes, strides, in);
    bool same = !memcmp(hl_out, dm_out, out_bytes), dm_ref = true;
    // --calibrate: after the checks, Halide's place in the timing goes to
    // dmlc again (into Halide's output buffer), so the ratio shows the
    // method's own error
    const dmlc_buffer ob_hl = {hl_out, out_bytes};
    auto run_peer = [&] { calibrate ? (void)dmlc_execute(exe, &ib, 1, &ob_hl, 1) : run_hl(); };
    if (hard) {
      // the one-hot of ref's index (rows or columns)
      const uint32_t a = w->axes[0];
      size_t I = 1;
      for (uint32_t d = a + 1; d < rank; d++)
        I *= sizes[d];
      const size_t esz = t.bytes();
      std::vector<unsigned char> one(esz), zero(esz, 0);
      if (t.is_float() && t.bits() == 32) {
        const float f = 1.0f;
        memcpy(one.data(), &f, 4);
      } else {
        one[0] = 1;
      }
      for (size_t e = 0; e < total && dm_ref; e++) {
        const size_t inner = e % I, r = e / I % sizes[a], outer = e / I / sizes[a];
        const bool hot = ref[outer * I + inner] == r;
        dm_ref = !memcmp(dm_out + e * esz, hot ? one.data() : zero.data(), esz);
      }
    } else {
      dm_ref = !memcmp(ref.data(), dm_out, out_bytes);
    }
    if (!dm_ref)
      fprintf(stderr, "%s: dmlc differs from the brute-force reference\n", w->id);
    if (!same) {
      size_t e = 0;
      const uint32_t *h = reinterpret_cast<uint32_t *>(hl_out),
                     *d = reinterpret_cast<uint32_t *>(dm_out);
      while (e < out_bytes / 4 && h[e] == d[e])
        e++;
      fprintf(stderr, "%s: Halide differs from dmlc at word %zu: %u vs %u (ref %u)\n", w->id, e,
              h[e], d[e], hard ? 0 : ref[e]);
    }
    all_same &= same;
    // Rounds of one timed batch a side (the latency call: 2000 calls a
    // batch, 31 rounds; else one call, `runs` rounds), in turn: dmlc first
    // in even rounds, the peer first in odd ones (a call that follows the
    // other's read of the same input can find part of it in the last-level
    // cache).
    const bool latency = w->kind == WORK_LATENCY;
    const int rounds = latency ? (quick ? 7 : 31) : runs, calls = latency ? 2000 : 1;
    for (int c = 0; latency && c < calls; c++)
      run_dm(), run_peer();
    std::vector<double> td, th;
    for (int r = 0; r < rounds; r++)
      for (int side = 0; side < 2; side++) {
        const bool dm = (side == 0) == (r % 2 == 0);
        const double t0 = bench_now_s();
        for (int c = 0; c < calls; c++)
          dm ? run_dm() : run_peer();
        (dm ? td : th).push_back((bench_now_s() - t0) / calls);
      }
    const double tdm = median(td), thl = median(th), scale = latency ? 1e6 : 1e3;
    const char *unit = latency ? "us" : "ms";
    const int digits = latency ? 2 : 3;
    printf("| %s | %.*f %s | %.*f %s | %.2f | %.2f | %s |\n", name, digits, tdm * scale, unit,
           digits, thl * scale, unit, tdm / thl, paired(td, th), same ? "yes" : "NO");
    fflush(stdout);
    free(in);
    free(dm_out);
    free(hl_out);
    dmlc_executable_destroy(exe);
    dmlc_graph_destroy(g);
  }
  dmlc_context_destroy(ctx);
  return all_same ? 0 : 1;
}
