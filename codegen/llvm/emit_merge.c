/* Reductions whose innermost dim is reduced and contiguous but which are
 * not one row per kept point: other reduced dims further out ([r, k, r]:
 * argmin over axes {0, 2}; [k, r, k, r]), rows padded apart ([k, r, r] with
 * a gap between rows), or several kept dims that do not merge ([k, k, r]).
 *
 * Every row (the innermost dim) is reduced by the vector row code
 * (ec_reduce_row), and its result merged into its kept point's accumulator.
 * A kept point's rows are visited in row-major order of the outer reduced
 * dims, so each row's indices are larger than those of every row merged
 * before: merging by the sequential rule (ec_take_next) gives the
 * sequential answer, ties and NaN included.
 *
 * Loop order follows the read's strides. When a kept dim lies inside the
 * outer reduced dims ([r, k, r]), a task is a block of consecutive kept
 * points whose accumulators stay in L1, and the loop runs over the outer
 * reduced coordinates, then the block's points: one block's rows are
 * adjacent in memory, read in storage order. Otherwise ([k, r, r]) a task
 * is one kept point and its rows are read in order. From DRAM, with long
 * enough rows, the blocks are wide (up to 512 points, whole stretches of
 * memory) and the outer reduced rows are split into chunks instead.
 *
 * ONEHOT outputs (hardmax) get each row's 0s as the row is read, and the
 * 1s when the task's points are done. */
#include <stdio.h>

#include "codegen/llvm/emit_internal.h"

enum {
  PARTIAL_BYTES = 16,       /* a split's partial: value (as compared) at 0, u64 index at 8 */
  BLOCK_MAX = 256,          /* kept points per task at most (accumulators on the stack) */
  BLOCK_RUN_BYTES = 65536,  /* aim: a block's rows make a contiguous run this long */
  MIN_TASKS = 16,           /* blocks shrink (to 1 point) until there are this many tasks */
  VACC_MAX = 4,             /* vector accumulators per point */
  VACC_BYTES = 65536,       /* a block's vector accumulators (on the stack) at most */
  WIDE_ROW_BYTES = 1024,    /* wide blocks: rows at least this long */
  WIDE_RUN_BYTES = 1 << 20, /* wide blocks: a block's rows make a run this long at most */
  WIDE_BLOCK_MAX = 512,     /* wide blocks: kept points per task at most */
};

bool ec_merged_rows_matches(const dmlc_kdesc *k) {
  const uint32_t last = k->rank - 1;
  if (!k->has_reduction || k->rank < 2 || k->read_strides[last] != 1 ||
      !dmlc_mask_has_axis(k->reduced_mask, last))
    return false;
  for (uint32_t i = 0; i < k->num_outputs; i++)
    if (k->outputs[i].kind != DMLC_KOUT_INDEX && k->outputs[i].kind != DMLC_KOUT_ONEHOT)
      return false;
  return true;
}

/* The sum over the dims in list of each one's coordinate at the row-major
 * position t over them, times per_dim[dim]. */
static LLVMValueRef decode_with(emit_ctx *e, const uint32_t *list, uint32_t n, LLVMValueRef t,
                                const uint64_t *per_dim) {
  LLVMValueRef c[DMLC_MAX_RANK], sum = ec_i64(e, 0);
  ec_coords(e, list, n, t, c);
  for (uint32_t i = 0; i < n; i++)
    sum = ec_madd(e, sum, c[i], per_dim[list[i]]);
  return sum;
}

/* Whether candidate x at index xi replaces (a, ai): by value, then index
 * where candidates do not come in the order of their indices (by_index),
 * else by the sequential rule. */
static LLVMValueRef take_candidate(emit_ctx *e, bool by_index, LLVMValueRef a, LLVMValueRef ai,
                                   LLVMValueRef x, LLVMValueRef xi) {
  return by_index ? ec_take_merge(e, a, ai, x, xi) : ec_take_next(e, x, a);
}

/* The element offset, in the read (out < 0) or output out, of the point
 * whose dims in list have the coordinates of the row-major position t over
 * them. */
static LLVMValueRef decode_offset(emit_ctx *e, const uint32_t *list, uint32_t n, LLVMValueRef t,
                                  int out) {
  return decode_with(e, list, n, t, out < 0 ? e->k->read_strides : e->k->outputs[out].strides);
}

/* The index of element 0 of the row at the row-major position r over the
 * reduced dims outer (all but the last): r times the last dim (merged
 * rows) or r (merged columns, whose last dim is kept), or, reordered, each
 * coordinate by its weight. */
static LLVMValueRef row_index_base(emit_ctx *e, const uint32_t *outer, uint32_t nouter,
                                   LLVMValueRef r) {
  const dmlc_kdesc *k = e->k;
  const uint32_t last = k->rank - 1;
  if (!e->reordered)
    return ec_mul(e, r, dmlc_mask_has_axis(k->reduced_mask, last) ? k->dims[last] : 1);
  return decode_with(e, outer, nouter, r, e->index_weights);
}

/* The offset in output out of the reduced coordinates of index idx, each
 * (idx / weight) % dim, over the dims in list. */
static LLVMValueRef weighted_offset(emit_ctx *e, const uint32_t *list, uint32_t n, LLVMValueRef idx,
                                    int out) {
  const dmlc_kdesc *k = e->k;
  LLVMValueRef off = ec_i64(e, 0);
  for (uint32_t j = 0; j < n; j++) {
    LLVMValueRef c = LLVMBuildUDiv(e->b, idx, ec_i64(e, e->index_weights[list[j]]), "");
    c = LLVMBuildURem(e->b, c, ec_i64(e, k->dims[list[j]]), "");
    off = ec_madd(e, off, c, k->outputs[out].strides[list[j]]);
  }
  return off;
}

/* Whether kept dims lie inside the outer reduced ones ([r, k, r]): the
 * innermost kept dim against the innermost outer reduced dim, by stride. */
static bool kept_inside(const dmlc_kdesc *k, const uint32_t *kept, uint32_t nkept,
                        const uint32_t *outer, uint32_t nouter) {
  return nkept > 0 && nouter > 0 &&
         k->read_strides[kept[nkept - 1]] <= k->read_strides[outer[nouter - 1]];
}

/* The block size: 1 unless kept_inside; wide blocks span more rows and
 * points, and do not shrink for tasks (the outer rows are split instead). */
static uint64_t block_size(const dmlc_kdesc *k, const uint32_t *kept, uint32_t nkept,
                           const uint32_t *outer, uint32_t nouter, uint64_t kept_points,
                           bool wide) {
  if (!kept_inside(k, kept, nkept, outer, nouter))
    return 1;
  const uint64_t row_bytes = (uint64_t)k->dims[k->rank - 1] * dmlc_dtype_size(k->read_dtype);
  const uint64_t most = wide ? WIDE_BLOCK_MAX : BLOCK_MAX;
  uint64_t b = (wide ? WIDE_RUN_BYTES : BLOCK_RUN_BYTES) / row_bytes;
  b = b < 1 ? 1 : b > most ? most : b;
  if (b > kept_points)
    b = kept_points;
  while (!wide && b > 1 && (kept_points + b - 1) / b < MIN_TASKS)
    b /= 2;
  return b;
}

/* The outputs of the kept point `point` (row-major over the kept dims),
 * whose reduction's index is idx: INDEX outputs, and the 1 of ONEHOT ones
 * (their 0s are written as the rows are read). */
static void store_point(emit_ctx *e, const uint32_t *kept, uint32_t nkept, const uint32_t *outer,
                        uint32_t nouter, LLVMValueRef point, LLVMValueRef idx) {
  const dmlc_kdesc *k = e->k;
  const uint32_t last = k->rank - 1;
  for (uint32_t i = 0; i < k->num_outputs; i++) {
    const dmlc_kout *o = &k->outputs[i];
    LLVMValueRef off = decode_offset(e, kept, nkept, point, (int)i);
    if (o->kind == DMLC_KOUT_ONEHOT) {
      /* the 1 at each reduced dim's coordinate (idx / weight) % dim */
      off = ec_add(e, off, weighted_offset(e, outer, nouter, idx, (int)i));
      off = ec_add(e, off, weighted_offset(e, &last, 1, idx, (int)i));
      ec_store(e, o->dtype, e->out[i], off, ec_const_elem(e, o->dtype, 1));
    } else {
      ec_store(e, o->dtype, e->out[i], off, ec_convert(e, idx, DMLC_DTYPE_U64, o->dtype));
    }
  }
}

/* A point's vector accumulators: n (value, index) vectors of lanes each,
 * in the block's arrays at [point * n + u]. Vector u of a row's main loop
 * and the rest's vectors in turn feed accumulator u; every lane of an
 * accumulator so sees strictly increasing indices (rows in order, positions
 * in a row in order; the last vector ends at the row's end, overlapping
 * elements seen in other lanes at their own indices), so the sequential
 * rule per lane, then a merge by value and index across accumulators and
 * lanes, gives the sequential answer. An index vector holds s, the
 * element's index being s + lane + u * lanes. Reordered (e->reordered:
 * rows not read in the order of their indices), the index vectors hold
 * each element's whole index (the row's base plus its position by the
 * weight wx) and every take compares value, then index (ec_take_merge),
 * which needs no order. */
typedef struct mrow {
  emit_ctx *e;
  bool on;
  /* Compact (wide blocks): a point keeps one (value, index) vector, the
   * indices whole; a row's n accumulators live in registers, start from
   * its first vectors and are merged into the point's at the row's end. */
  bool compact;
  uint32_t lanes, n;
  uint64_t next_row; /* elements from a row to the same point's next one (0: none) */
  uint64_t wx;       /* reordered: a row position's weight in the index (0: not reordered) */
  /* Reordered, but each lane sees its indices grow (rows of exactly n
   * vectors, each lane one position, rows in the order of their indices):
   * the sequential rule per lane still holds. */
  bool lanes_in_order;
  LLVMTypeRef vt, it, vals_t, idxs_t;
  LLVMValueRef vals, idxs;
} mrow;

/* The (value, index) vectors a point keeps. */
static uint32_t mrow_kept(const mrow *v) { return v->compact ? 1 : v->n; }

static LLVMValueRef mrow_ptr(mrow *v, bool idx, LLVMValueRef p, uint32_t u) {
  emit_ctx *e = v->e;
  LLVMValueRef at[2] = {ec_i64(e, 0), ec_madd(e, ec_i64(e, u), p, mrow_kept(v))};
  return LLVMBuildGEP2(e->b, idx ? v->idxs_t : v->vals_t, idx ? v->idxs : v->vals, at, 2, "");
}

/* Reordered: the whole indices of the vector at row position at (i64),
 * element 0 of the row at index base (i64). */
static LLVMValueRef mrow_whole(mrow *v, LLVMValueRef base, LLVMValueRef at) {
  emit_ctx *e = v->e;
  LLVMValueRef s = LLVMBuildTrunc(e->b, ec_madd(e, base, at, v->wx), e->i32, "");
  LLVMValueRef lane =
      LLVMBuildMul(e->b, ec_iota(e, v->lanes), ec_splat(e, ec_i32(e, v->wx), v->lanes), "");
  return ec_add(e, ec_splat(e, s, v->lanes), lane);
}

/* Point p's accumulators from the row at read offset off, whose element 0
 * has index base (i64). */
static void mrow_init(mrow *v, LLVMValueRef p, LLVMValueRef off, LLVMValueRef base) {
  emit_ctx *e = v->e;
  LLVMValueRef s = ec_splat(e, LLVMBuildTrunc(e->b, base, e->i32, ""), v->lanes);
  if (v->compact) {
    LLVMBuildStore(e->b, ec_load_read_cmp(e, off, v->lanes), mrow_ptr(v, false, p, 0));
    LLVMBuildStore(e->b, ec_add(e, s, ec_iota(e, v->lanes)), mrow_ptr(v, true, p, 0));
    return;
  }
  for (uint32_t u = 0; u < v->n; u++) {
    LLVMBuildStore(e->b, ec_load_read_cmp(e, ec_add(e, off, ec_i64(e, u * v->lanes)), v->lanes),
                   mrow_ptr(v, false, p, u));
    LLVMBuildStore(e->b, v->wx ? mrow_whole(v, base, ec_i64(e, u * v->lanes)) : s,
                   mrow_ptr(v, true, p, u));
  }
}

/* x (at index s + lane + u * lanes) into accumulator (a[u], ai[u]). */
static void mrow_take(mrow *v, LLVMValueRef *a, LLVMValueRef *ai, uint32_t u, LLVMValueRef x,
                      LLVMValueRef s) {
  emit_ctx *e = v->e;
  LLVMValueRef take = take_candidate(e, v->wx && !v->lanes_in_order, a[u], ai[u], x, s);
  a[u] = LLVMBuildSelect(e->b, take, x, a[u], "");
  ai[u] = LLVMBuildSelect(e->b, take, s, ai[u], "");
}

/* The row of len elements at read offset off, element 0 at index base
 * (i64), into point p's accumulators. */
static void mrow_row(mrow *v, LLVMValueRef p, LLVMValueRef off, LLVMValueRef base, uint64_t len) {
  emit_ctx *e = v->e;
  const uint32_t L = v->lanes, n = v->n;
  const uint64_t step = (uint64_t)n * L, vend = len / step * step;
  LLVMValueRef avar[VACC_MAX], ivar[VACC_MAX], a[VACC_MAX], ai[VACC_MAX];
  LLVMValueRef base32 = LLVMBuildTrunc(e->b, base, e->i32, "");
  for (uint32_t u = 0; u < n; u++) {
    avar[u] = ec_var(e, v->vt, "vacc");
    ivar[u] = ec_var(e, v->it, "vacc_idx");
    LLVMValueRef x = v->compact ? ec_load_read_cmp(e, ec_add(e, off, ec_i64(e, u * L)), L)
                                : LLVMBuildLoad2(e->b, v->vt, mrow_ptr(v, false, p, u), "");
    LLVMValueRef xi = v->compact ? ec_splat(e, base32, L)
                                 : LLVMBuildLoad2(e->b, v->it, mrow_ptr(v, true, p, u), "");
    LLVMBuildStore(e->b, x, avar[u]);
    LLVMBuildStore(e->b, xi, ivar[u]);
  }
  ec_loop l;
  LLVMValueRef j = ec_loop_begin(e, &l, ec_i64(e, v->compact ? step : 0), ec_i64(e, vend), step);
  LLVMValueRef s =
      ec_splat(e, LLVMBuildAdd(e->b, base32, LLVMBuildTrunc(e->b, j, e->i32, ""), ""), L);
  /* In a block, the same point's row at the next outer coordinate, into
   * L2: a block's run of rows ends in a jump (by the outer stride) that
   * the hardware prefetchers do not follow, and the run's length is the
   * lead ([256,512,256] over {0,2}: 65% -> 85% of the read bandwidth,
   * Xeon). Otherwise ahead in storage order. */
  const uint64_t step_bytes = step * dmlc_dtype_size(e->k->read_dtype);
  if (v->next_row && e->prefetch_bytes)
    for (uint64_t b = 0; b < step_bytes; b += 64)
      ec_prefetch_read(e, ec_add(e, off, ec_add(e, j, ec_i64(e, v->next_row))), (int64_t)b, false);
  else
    ec_prefetch_stream(e, ec_add(e, off, j), step_bytes);
  for (uint32_t u = 0; u < n; u++) {
    a[u] = LLVMBuildLoad2(e->b, v->vt, avar[u], "");
    ai[u] = LLVMBuildLoad2(e->b, v->it, ivar[u], "");
    LLVMValueRef at = ec_add(e, j, ec_i64(e, u * L));
    mrow_take(v, a, ai, u, ec_load_read_cmp(e, ec_add(e, off, at), L),
              v->wx ? mrow_whole(v, base, at) : s);
    LLVMBuildStore(e->b, a[u], avar[u]);
    LLVMBuildStore(e->b, ai[u], ivar[u]);
  }
  ec_loop_end(e, &l);
  for (uint32_t u = 0; u < n; u++) {
    a[u] = LLVMBuildLoad2(e->b, v->vt, avar[u], "");
    ai[u] = LLVMBuildLoad2(e->b, v->it, ivar[u], "");
  }
  uint32_t t = 0;
  for (uint64_t q = vend; q < len; q += L, t = (t + 1) % n) {
    const uint64_t at = q + L <= len ? q : len - L;
    LLVMValueRef x = ec_load_read_cmp(e, ec_add(e, off, ec_i64(e, at)), L);
    LLVMValueRef st =
        v->wx ? mrow_whole(v, base, ec_i64(e, at))
              : ec_splat(e, LLVMBuildAdd(e->b, base32, ec_i32(e, at - (uint64_t)t * L), ""), L);
    mrow_take(v, a, ai, t, x, st);
  }
  if (v->compact) {
    /* the row's accumulators, indices made whole, merged; then into the
     * point's, whose indices are all smaller */
    LLVMValueRef iota = ec_iota(e, L);
    for (uint32_t u = 0; u < n; u++)
      ai[u] = ec_add(e, ai[u], ec_add(e, iota, ec_splat(e, ec_i32(e, u * L), L)));
    ec_merge_tree(e, false, a, ai, n);
    LLVMValueRef pa = mrow_ptr(v, false, p, 0), pi = mrow_ptr(v, true, p, 0);
    LLVMValueRef best = LLVMBuildLoad2(e->b, v->vt, pa, "");
    LLVMValueRef take = ec_take_next(e, a[0], best);
    LLVMBuildStore(e->b, LLVMBuildSelect(e->b, take, a[0], best, ""), pa);
    LLVMBuildStore(e->b,
                   LLVMBuildSelect(e->b, take, ai[0], LLVMBuildLoad2(e->b, v->it, pi, ""), ""), pi);
    return;
  }
  for (uint32_t u = 0; u < n; u++) {
    LLVMBuildStore(e->b, a[u], mrow_ptr(v, false, p, u));
    LLVMBuildStore(e->b, ai[u], mrow_ptr(v, true, p, u));
  }
}

/* Point p's result: its accumulators merged as a tree, then across lanes,
 * by value and index; *val the value (compare type), *idx the index (i64). */
static void mrow_fold(mrow *v, LLVMValueRef p, LLVMValueRef *val, LLVMValueRef *idx) {
  emit_ctx *e = v->e;
  const uint32_t L = v->lanes;
  const uint32_t n = mrow_kept(v);
  LLVMValueRef a[VACC_MAX], ai[VACC_MAX];
  LLVMValueRef iota = ec_iota(e, L);
  for (uint32_t u = 0; u < n; u++) {
    a[u] = LLVMBuildLoad2(e->b, v->vt, mrow_ptr(v, false, p, u), "");
    ai[u] = LLVMBuildLoad2(e->b, v->it, mrow_ptr(v, true, p, u), "");
    if (!v->compact && !v->wx) /* the index of lane 0 of vector u: whole */
      ai[u] = ec_add(e, ai[u], ec_add(e, iota, ec_splat(e, ec_i32(e, u * L), L)));
  }
  ec_merge_tree(e, false, a, ai, n);
  LLVMValueRef si;
  ec_merge_lanes(e, a[0], ai[0], L, val, &si);
  *idx = LLVMBuildZExt(e->b, si, e->i64, "");
}

dmlc_status ec_emit_merged_rows(emit_ctx *e, const char *name, dmlc_cpu_kernel_info *info) {
  const dmlc_kdesc *k = e->k;
  const uint32_t last = k->rank - 1;
  const uint64_t len = k->dims[last];
  uint32_t kept[DMLC_MAX_RANK], outer[DMLC_MAX_RANK], nkept = 0, nouter = 0;
  uint64_t kept_points = 1, outer_points = 1;
  for (uint32_t d = 0; d < last; d++) {
    if (dmlc_mask_has_axis(k->reduced_mask, d)) {
      outer[nouter++] = d;
      outer_points *= k->dims[d];
    } else {
      kept[nkept++] = d;
      kept_points *= k->dims[d];
    }
  }
  /* Wide blocks: from DRAM (a read past stream_prefetch_max_bytes), with
   * rows of 1 KiB or more, a block spans its kept points' rows over up to
   * WIDE_RUN_BYTES of memory instead of 64 KiB, and the outer reduced rows
   * are split into chunks for the tasks, so that a task reads whole
   * stretches in storage order: a plain read that jumps every 32 KiB ran
   * at 84-87% of a sequential one on a Zen 3, every 256 KiB at 89-97%.
   * A point then keeps one compact (value, index) vector (mrow.compact):
   * the four vectors a point keeps otherwise, 256 bytes with AVX2, would
   * put a wide block's accumulators out of L1 (70-74%). The rows are read
   * with stream prefetches after all: the row code's work per element
   * leaves fewer of a core's own misses in flight than a plain loop's
   * (80-83% without them, 83-90% with). [256,512,256] over {0,2}: 74-79%
   * -> 82-95% of the plain loop, in alternate runs on the Zen 3. */
  const bool wide = !e->reordered && kept_inside(k, kept, nkept, outer, nouter) && e->from_dram &&
                    len * dmlc_dtype_size(k->read_dtype) >= WIDE_ROW_BYTES &&
                    ec_read_bytes(k) >= e->split_min_bytes;
  if (wide)
    e->row_prefetch = true;
  uint64_t block = block_size(k, kept, nkept, outer, nouter, kept_points, wide);
  /* Vector accumulators: each point keeps v.n (value, index) vectors, so a
   * row costs no merge across lanes (that is done once per point, at the
   * end); rows of at least a vector whose indices fit i32 lanes. */
  mrow v = {.e = e, .lanes = ec_vector_lanes(e, k->read_dtype)};
  if (block > 1 && !wide) /* wide: the next outer row follows in memory */
    v.next_row = k->read_strides[outer[nouter - 1]];
  v.on = len >= v.lanes && outer_points * len <= INT32_MAX;
  /* Reordered: whole indices in the lanes (under 2^31 as every index is),
   * taken by value and then index. */
  v.wx = e->reordered ? e->index_weights[last] : 0;
  if (v.on && v.wx && len % v.lanes == 0 && len / v.lanes <= VACC_MAX) {
    v.lanes_in_order = true;
    for (uint32_t i = 1; i < nouter; i++)
      v.lanes_in_order &= e->index_weights[outer[i - 1]] > e->index_weights[outer[i]];
  }
  v.compact = wide && v.on;
  if (v.on) {
    const uint32_t cmp_size = k->read_dtype == DMLC_DTYPE_F16 ? 4 : dmlc_dtype_size(k->read_dtype);
    v.n = v.lanes_in_order ? (uint32_t)(len / v.lanes) : ec_row_accumulators(e, v.lanes, VACC_MAX);
    while (v.n > 1 && len < (uint64_t)v.n * v.lanes)
      v.n--;
    const uint64_t point_bytes = (uint64_t)mrow_kept(&v) * v.lanes * (cmp_size + 4);
    const uint64_t most = VACC_BYTES / point_bytes;
    if (block > most)
      block = most < 1 ? 1 : most;
  }
  /* Few kept points (all axes of a padded matrix), or wide blocks, and a
   * large read: each point's rows are split into chunks, tasks of their
   * own, whose partial results a finish function merges in chunk order
   * (later chunks, later indices). */
  uint64_t chunks = 1, chunk_rows = outer_points;
  const uint64_t blocks = (kept_points + block - 1) / block;
  const bool split = (wide || (block == 1 && kept_points < MIN_TASKS)) && blocks < MIN_TASKS &&
                     outer_points > 1 && ec_read_bytes(k) >= e->split_min_bytes;
  if (split) {
    chunks = (MIN_TASKS + blocks - 1) / blocks;
    chunks = chunks < outer_points ? chunks : outer_points;
    chunk_rows = (outer_points + chunks - 1) / chunks;
    chunks = (outer_points + chunk_rows - 1) / chunk_rows;
  }
  const uint64_t tasks = blocks * chunks;
  LLVMTypeRef ct = ec_cmp_type(e, k->read_dtype);
  e->use_scratch = split;

  LLVMValueRef begin, end;
  ec_function_begin(e, name, true, &begin, &end);
  LLVMValueRef acc = ec_array(e, ct, block, 64), acc_idx = ec_array(e, e->i64, block, 64);
  if (v.on) {
    v.vt = LLVMVectorType(ct, v.lanes);
    v.it = LLVMVectorType(e->i32, v.lanes);
    const uint64_t vecs = block * mrow_kept(&v);
    v.vals = ec_array(e, v.vt, vecs, 64);
    v.idxs = ec_array(e, v.it, vecs, 64);
    v.vals_t = LLVMArrayType2(v.vt, vecs);
    v.idxs_t = LLVMArrayType2(v.it, vecs);
  }
  LLVMValueRef koff = ec_array(e, e->i64, block, 64);
  /* per ONEHOT output, each point's offset there */
  LLVMValueRef kout[DMLC_KDESC_MAX_OUTPUTS] = {NULL};
  for (uint32_t i = 0; i < k->num_outputs; i++)
    if (k->outputs[i].kind == DMLC_KOUT_ONEHOT)
      kout[i] = ec_array(e, e->i64, block, 64);
  LLVMTypeRef acc_t = LLVMArrayType2(ct, block), idx_t = LLVMArrayType2(e->i64, block);
  LLVMValueRef zero = ec_i64(e, 0);
  ec_loop lt;
  LLVMValueRef t = ec_loop_begin(e, &lt, begin, end, 1);
  LLVMValueRef first = ec_mul(e, split ? LLVMBuildUDiv(e->b, t, ec_i64(e, chunks), "") : t, block);
  LLVMValueRef r_start = zero, r_end = ec_i64(e, outer_points);
  if (split) {
    r_start = ec_mul(e, LLVMBuildURem(e->b, t, ec_i64(e, chunks), ""), chunk_rows);
    r_end = ec_add(e, r_start, ec_i64(e, chunk_rows));
    LLVMValueRef over = LLVMBuildICmp(e->b, LLVMIntUGT, r_end, ec_i64(e, outer_points), "");
    r_end = LLVMBuildSelect(e->b, over, ec_i64(e, outer_points), r_end, "");
  }
  /* points in this block: block, or what is left in the last one */
  LLVMValueRef left = LLVMBuildSub(e->b, ec_i64(e, kept_points), first, "");
  LLVMValueRef short_block = LLVMBuildICmp(e->b, LLVMIntULT, left, ec_i64(e, block), "");
  LLVMValueRef count = LLVMBuildSelect(e->b, short_block, left, ec_i64(e, block), "count");

  /* each point's read offset, and its accumulator: the first element of its
   * first row, at that element's index (exact: the first row's result then
   * replaces it or ties it at that index) */
  LLVMValueRef roff0 = decode_offset(e, outer, nouter, r_start, -1);
  ec_loop lp;
  LLVMValueRef p = ec_loop_begin(e, &lp, zero, count, 1);
  LLVMValueRef at[2] = {zero, p};
  LLVMValueRef off = decode_offset(e, kept, nkept, ec_add(e, first, p), -1);
  LLVMBuildStore(e->b, off, LLVMBuildGEP2(e->b, idx_t, koff, at, 2, ""));
  LLVMBuildStore(e->b, ec_load_read_cmp(e, ec_add(e, off, roff0), 1),
                 LLVMBuildGEP2(e->b, acc_t, acc, at, 2, ""));
  LLVMBuildStore(e->b, row_index_base(e, outer, nouter, r_start),
                 LLVMBuildGEP2(e->b, idx_t, acc_idx, at, 2, ""));
  if (v.on)
    mrow_init(&v, p, ec_add(e, off, roff0), row_index_base(e, outer, nouter, r_start));
  for (uint32_t i = 0; i < k->num_outputs; i++)
    if (kout[i])
      LLVMBuildStore(e->b, decode_offset(e, kept, nkept, ec_add(e, first, p), (int)i),
                     LLVMBuildGEP2(e->b, idx_t, kout[i], at, 2, ""));
  ec_loop_end(e, &lp);

  /* the rows: outer reduced coordinates in row-major order, then the points */
  ec_loop lr;
  LLVMValueRef r = ec_loop_begin(e, &lr, r_start, r_end, 1);
  LLVMValueRef roff = decode_offset(e, outer, nouter, r, -1);
  LLVMValueRef rbase = row_index_base(e, outer, nouter, r);
  LLVMValueRef rout[DMLC_KDESC_MAX_OUTPUTS] = {NULL};
  for (uint32_t i = 0; i < k->num_outputs; i++)
    if (kout[i])
      rout[i] = decode_offset(e, outer, nouter, r, (int)i);
  p = ec_loop_begin(e, &lp, zero, count, 1);
  at[1] = p;
  LLVMValueRef kp = LLVMBuildGEP2(e->b, idx_t, koff, at, 2, "");
  LLVMValueRef ap = LLVMBuildGEP2(e->b, acc_t, acc, at, 2, "");
  LLVMValueRef ip = LLVMBuildGEP2(e->b, idx_t, acc_idx, at, 2, "");
  if (v.on) {
    mrow_row(&v, p, ec_add(e, roff, LLVMBuildLoad2(e->b, e->i64, kp, "")), rbase, len);
  } else {
    LLVMValueRef val, j;
    ec_reduce_row(e, ec_add(e, roff, LLVMBuildLoad2(e->b, e->i64, kp, "")), len, &val, &j);
    LLVMValueRef a = LLVMBuildLoad2(e->b, ct, ap, "");
    LLVMValueRef ai = LLVMBuildLoad2(e->b, e->i64, ip, "");
    LLVMValueRef idx =
        e->reordered ? ec_madd(e, rbase, j, e->index_weights[last]) : ec_add(e, rbase, j);
    /* reordered: rows come in another order than their indices */
    LLVMValueRef take = take_candidate(e, e->reordered, a, ai, val, idx);
    LLVMBuildStore(e->b, LLVMBuildSelect(e->b, take, val, a, ""), ap);
    LLVMBuildStore(e->b, LLVMBuildSelect(e->b, take, idx, ai, ""), ip);
  }
  for (uint32_t i = 0; i < k->num_outputs; i++) {
    if (!kout[i])
      continue;
    const dmlc_kout *o = &k->outputs[i];
    LLVMValueRef row =
        ec_add(e, rout[i],
               LLVMBuildLoad2(e->b, e->i64, LLVMBuildGEP2(e->b, idx_t, kout[i], at, 2, ""), ""));
    ec_fill(e, o->dtype, e->out[i], row, ec_i64(e, len), o->strides[last],
            ec_const_elem(e, o->dtype, 0));
  }
  ec_loop_end(e, &lp);
  ec_loop_end(e, &lr);
  if (v.on) { /* each point's vectors to its scalar accumulator */
    p = ec_loop_begin(e, &lp, zero, count, 1);
    at[1] = p;
    LLVMValueRef val, idx;
    mrow_fold(&v, p, &val, &idx);
    LLVMBuildStore(e->b, val, LLVMBuildGEP2(e->b, acc_t, acc, at, 2, ""));
    LLVMBuildStore(e->b, idx, LLVMBuildGEP2(e->b, idx_t, acc_idx, at, 2, ""));
    ec_loop_end(e, &lp);
  }

  if (split) {
    /* each point's partial: value at 0, index at 8 of the slot (point,
     * chunk), point-major */
    LLVMValueRef chunk = LLVMBuildURem(e->b, t, ec_i64(e, chunks), "");
    p = ec_loop_begin(e, &lp, zero, count, 1);
    at[1] = p;
    LLVMValueRef byte = ec_mul(e, ec_madd(e, chunk, ec_add(e, first, p), chunks), PARTIAL_BYTES);
    LLVMValueRef slot = LLVMBuildGEP2(e->b, e->i8, e->scratch, &byte, 1, "");
    LLVMBuildStore(e->b, LLVMBuildLoad2(e->b, ct, LLVMBuildGEP2(e->b, acc_t, acc, at, 2, ""), ""),
                   slot);
    LLVMValueRef eight = ec_i64(e, 8);
    LLVMBuildStore(e->b,
                   LLVMBuildLoad2(e->b, e->i64, LLVMBuildGEP2(e->b, idx_t, acc_idx, at, 2, ""), ""),
                   LLVMBuildGEP2(e->b, e->i8, slot, &eight, 1, ""));
    ec_loop_end(e, &lp);
  } else {
    p = ec_loop_begin(e, &lp, zero, count, 1);
    at[1] = p;
    LLVMValueRef idx =
        LLVMBuildLoad2(e->b, e->i64, LLVMBuildGEP2(e->b, idx_t, acc_idx, at, 2, ""), "");
    store_point(e, kept, nkept, outer, nouter, ec_add(e, first, p), idx);
    ec_loop_end(e, &lp);
  }
  ec_loop_end(e, &lt);
  ec_function_end(e);

  if (split) {
    /* finish: each point's chunks merged in order, then its outputs */
    char finish[256];
    snprintf(finish, sizeof finish, "%s_finish", name);
    ec_function_begin(e, finish, false, NULL, NULL);
    LLVMValueRef best = ec_var(e, ct, "best"), best_idx = ec_var(e, e->i64, "best_idx");
    LLVMValueRef eight = ec_i64(e, 8);
    ec_loop lo;
    LLVMValueRef pt = ec_loop_begin(e, &lo, zero, ec_i64(e, kept_points), 1);
    ec_loop lc;
    LLVMValueRef ch = ec_loop_begin(e, &lc, zero, ec_i64(e, chunks), 1);
    LLVMValueRef byte = ec_mul(e, ec_madd(e, ch, pt, chunks), PARTIAL_BYTES);
    LLVMValueRef slot = LLVMBuildGEP2(e->b, e->i8, e->scratch, &byte, 1, "");
    LLVMValueRef x = LLVMBuildLoad2(e->b, ct, slot, "");
    LLVMValueRef xi =
        LLVMBuildLoad2(e->b, e->i64, LLVMBuildGEP2(e->b, e->i8, slot, &eight, 1, ""), "");
    LLVMValueRef is_first = LLVMBuildICmp(e->b, LLVMIntEQ, ch, zero, "");
    LLVMValueRef bv = LLVMBuildFreeze(e->b, LLVMBuildLoad2(e->b, ct, best, ""), "");
    LLVMValueRef bi = LLVMBuildFreeze(e->b, LLVMBuildLoad2(e->b, e->i64, best_idx, ""), "");
    /* chunk 0 is taken as it is (the select keeps the loads harmless);
     * reordered, later chunks need not hold later indices */
    LLVMValueRef tk =
        LLVMBuildOr(e->b, is_first, take_candidate(e, e->reordered, bv, bi, x, xi), "");
    LLVMBuildStore(e->b, LLVMBuildSelect(e->b, tk, x, bv, ""), best);
    LLVMBuildStore(e->b, LLVMBuildSelect(e->b, tk, xi, bi, ""), best_idx);
    ec_loop_end(e, &lc);
    store_point(e, kept, nkept, outer, nouter, pt, LLVMBuildLoad2(e->b, e->i64, best_idx, ""));
    ec_loop_end(e, &lo);
    ec_function_end(e);
    info->scratch_bytes = kept_points * chunks * PARTIAL_BYTES;
    info->has_finish = true;
  }

  uint64_t out_bytes = 0;
  for (uint32_t i = 0; i < k->num_outputs; i++)
    out_bytes += dmlc_dtype_size(k->outputs[i].dtype) *
                 (k->outputs[i].kind == DMLC_KOUT_ONEHOT ? chunk_rows * len : 1);
  info->num_tasks = tasks;
  info->bytes_per_task = block * (chunk_rows * len * dmlc_dtype_size(k->read_dtype) + out_bytes);
  return DMLC_OK;
}

/* ---- merged columns ----
 *
 * The innermost dim kept and contiguous, with reduced dims that the column
 * code does not take: non-adjacent ([r, k, r, k]: axes {0, 2} of NHWC),
 * rows padded apart ([r, r, k] with a gap), or kept dims that do not merge
 * ([k, k, r, k]). A task is (a point of the outer kept dims, a block of
 * columns), or, when those are too few for the threads and the rows many,
 * (point, block, chunk of rows), whose partials a finish merges in chunk
 * order; its rows (every reduced coordinate, row-major, an offset decoded
 * per row) are read one contiguous run of the block each, merged vector by
 * vector into accumulators on the stack by the sequential rule (reordered:
 * by value, then index). ONEHOT outputs get each row's 0s as it is read
 * and the 1s at the end.
 *
 * With the innermost reduced dim next to the kept one ([.., r, K]), not
 * reordered: that dim's rows are a run (mcol_run), reduced in registers
 * and then merged into the accumulators, so a row's offset is decoded once
 * a run, not once a row; and where K columns are under two vectors and
 * that dim packed, x of its rows make one super row of x * K columns
 * (ec_merged_columns_super_rows), whose whole vectors replace a row's half
 * vector and scalars. f32 [256,12,256,5] over {0, 2} (the walk): 2.69 ms
 * -> 0.19 ms; u8 1.23 -> 0.08 ms. ONEHOT outputs (hardmax) take them too,
 * their 0s written a run at a time (run_onehot_zeros; non-temporal where
 * large) and the 1s at the store: hardmax f32 [256,12,256,5] over {0, 2}
 * 2.9 -> 0.5 ms. */

enum {
  MCOL_WIDTH = 1024,   /* columns per block at most */
  MCOL_MIN_TASKS = 16, /* chunks of rows, or narrower blocks (down to a vector), to get this many */
  MCOL_CHUNK_ROWS = 256,          /* a chunk's rows at least */
  MCOL_WALK_BYTES = 32768,        /* every kept point's accumulators, at most, to walk (below) */
  MCOL_WALK_RUN_BYTES = 16384,    /* ... and from the caches, runs shorter than this */
  MCOL_SUPER_VECS = 8,            /* a super row's columns, at most this many vectors */
  MCOL_RUN_PREFETCH_BYTES = 4096, /* runs of a task this long or shorter: the next prefetched */
};

bool ec_merged_columns_matches(const dmlc_kdesc *k) {
  const uint32_t last = k->rank - 1;
  if (!k->has_reduction || k->rank < 2 || k->read_strides[last] != 1 ||
      dmlc_mask_has_axis(k->reduced_mask, last))
    return false;
  uint64_t reduced = 1;
  for (uint32_t d = 0; d < last; d++)
    if (dmlc_mask_has_axis(k->reduced_mask, d))
      reduced *= k->dims[d];
  if (reduced > INT32_MAX) /* indices are i32 lanes */
    return false;
  for (uint32_t i = 0; i < k->num_outputs; i++)
    if (k->outputs[i].kind != DMLC_KOUT_INDEX && k->outputs[i].kind != DMLC_KOUT_ONEHOT)
      return false;
  return true;
}

typedef struct mcol {
  emit_ctx *e;
  uint32_t lanes;
  LLVMTypeRef ct;
  LLVMValueRef acc, acc_idx; /* [width] of ct, [width] of i32 */
  LLVMTypeRef acc_t, idx_t;
  uint64_t ct_size; /* bytes of a value as compared */
  /* Super rows (ec_merged_columns_super_rows): x rows of the innermost reduced dim read
   * as one row of x * K columns, the candidates of kept column p at super
   * columns j * K + p, their indices r * x (r the super row's) plus j at
   * the store; x is 1 when off. */
  uint64_t x;
  /* Runs (mcol_runs): the innermost reduced dim's rows (run of them,
   * run_stride elements apart) reduced in registers, then merged into the
   * accumulators; 0 when off. */
  uint64_t run, run_stride;
  /* the runs' registers: lanes a vector, and their indices' integer type
   * (i16 beside 8- and 16-bit values where a task's rows fit, so twice
   * the lanes of the accumulators' i32) */
  uint32_t run_lanes;
  LLVMTypeRef run_it;
  LLVMValueRef base;                          /* read offset of the block's column 0 in row 0 */
  LLVMValueRef obase[DMLC_KDESC_MAX_OUTPUTS]; /* output offsets of the same */
} mcol;

static LLVMValueRef mcol_ptr(mcol *m, LLVMValueRef arr, LLVMTypeRef t, LLVMValueRef i) {
  LLVMValueRef at[2] = {ec_i64(m->e, 0), i};
  return LLVMBuildGEP2(m->e->b, t, arr, at, 2, "");
}

/* Candidates (x, xi: lanes of ct and i32) into the accumulators at column
 * cc: stored, or merged (merge) by the sequential rule (reordered: by
 * value, then index), their rows after the accumulators'. */
static void mcol_put(mcol *m, LLVMValueRef cc, uint32_t lanes, LLVMValueRef x, LLVMValueRef xi,
                     bool merge) {
  emit_ctx *e = m->e;
  LLVMValueRef ap = mcol_ptr(m, m->acc, m->acc_t, cc), ip = mcol_ptr(m, m->acc_idx, m->idx_t, cc);
  if (merge) {
    LLVMValueRef a = LLVMBuildLoad2(e->b, ec_lanes(m->ct, lanes), ap, "");
    LLVMSetAlignment(a, 1);
    LLVMValueRef ai = LLVMBuildLoad2(e->b, ec_lanes(e->i32, lanes), ip, "");
    LLVMSetAlignment(ai, 1);
    LLVMValueRef take = take_candidate(e, e->reordered, a, ai, x, xi);
    x = ec_select_unpredictable(e, take, x, a);
    xi = ec_select_unpredictable(e, take, xi, ai);
  }
  LLVMSetAlignment(LLVMBuildStore(e->b, x, ap), 1);
  LLVMSetAlignment(LLVMBuildStore(e->b, xi, ip), 1);
}

/* Columns [from, to) in steps of lanes (1 or m->lanes): init (r is NULL)
 * or merge row r at read offset roff; ridx is the row's index (i64: r, or,
 * reordered, its coordinates by their weights, taken by value and then
 * index). */
static void mcol_merge(mcol *m, LLVMValueRef from, LLVMValueRef to, uint32_t lanes, LLVMValueRef r,
                       LLVMValueRef ridx, LLVMValueRef roff) {
  emit_ctx *e = m->e;
  ec_loop l;
  LLVMValueRef cc = ec_loop_begin(e, &l, from, to, lanes);
  LLVMValueRef x = ec_load_read_cmp(e, ec_add(e, ec_add(e, m->base, roff), cc), lanes);
  LLVMValueRef ri = ec_splat(e, LLVMBuildTrunc(e->b, ridx, e->i32, ""), lanes);
  mcol_put(m, cc, lanes, x, ri, r != NULL);
  ec_loop_end(e, &l);
}
/* Columns [0, w) of a row (r NULL: the first) as mcol_merge takes them:
 * vend of them in whole vectors, the rest in at most one vector of half
 * the lanes, one of a quarter, ... down to EC_TAIL_MIN_BYTES of compared
 * values, then scalars (as emit_column.c's for_columns_from). */
static void mcol_merge_all(mcol *m, LLVMValueRef r, LLVMValueRef ridx, LLVMValueRef roff,
                           LLVMValueRef vend, LLVMValueRef w) {
  emit_ctx *e = m->e;
  mcol_merge(m, ec_i64(e, 0), vend, m->lanes, r, ridx, roff);
  LLVMValueRef at = vend;
  for (uint32_t n = m->lanes / 2; n >= 2 && n * m->ct_size >= EC_TAIL_MIN_BYTES; n /= 2) {
    LLVMValueRef fits =
        LLVMBuildICmp(e->b, LLVMIntUGE, LLVMBuildSub(e->b, w, at, ""), ec_i64(e, n), "");
    LLVMValueRef next = ec_add(e, at, LLVMBuildSelect(e->b, fits, ec_i64(e, n), ec_i64(e, 0), ""));
    mcol_merge(m, at, next, n, r, ridx, roff);
    at = next;
  }
  mcol_merge(m, at, w, 1, r, ridx, roff);
}

/* A run's columns: whole vectors, then at most one of half the lanes, a
 * quarter, ... down to EC_TAIL_MIN_BYTES, then scalars. */
typedef struct run_piece {
  uint64_t at;
  uint32_t lanes;
} run_piece;

enum { RUN_MAX_PIECES = 48 };

static uint32_t run_pieces(const mcol *m, uint64_t w, run_piece *p) {
  const uint32_t lanes = m->run_lanes;
  uint32_t n = 0;
  uint64_t at = 0;
  for (; w - at >= lanes; at += lanes)
    p[n++] = (run_piece){at, lanes};
  for (uint32_t l = lanes / 2; l >= 2 && l * m->ct_size >= EC_TAIL_MIN_BYTES; l /= 2)
    if (w - at >= l) {
      p[n++] = (run_piece){at, l};
      at += l;
    }
  for (; at < w; at++)
    p[n++] = (run_piece){at, 1};
  return n;
}

/* The runs' index lanes for tasks of up to rows rows: i16 beside values
 * of up to 16 bits where they fit, else i32 (m->run_lanes, m->run_it). */
static void run_index_type(mcol *m, uint64_t rows) {
  emit_ctx *e = m->e;
  const bool narrow = m->ct_size <= 2 && rows <= 65536;
  m->run_it = narrow ? e->i16 : e->i32;
  m->run_lanes = narrow ? e->vector_bytes / 2 : m->lanes;
}

/* A run's accumulators in registers: the pieces of its columns and, for
 * each, the best values and their indices (m->run_it lanes, from the
 * registers' first row; base, an i32, is that row's index). */
typedef struct run_regs {
  uint32_t n;
  run_piece p[RUN_MAX_PIECES];
  LLVMValueRef val[RUN_MAX_PIECES], idx[RUN_MAX_PIECES], base;
} run_regs;

/* The registers over w columns, holding the row at read offset at (from
 * the block's base), index base (an i32). */
static void run_init(mcol *m, run_regs *rr, uint64_t w, LLVMValueRef at, LLVMValueRef base) {
  emit_ctx *e = m->e;
  rr->n = run_pieces(m, w, rr->p);
  rr->base = base;
  for (uint32_t i = 0; i < rr->n; i++) {
    const uint32_t lanes = rr->p[i].lanes;
    rr->val[i] = ec_var(e, ec_lanes(m->ct, lanes), "run_best");
    rr->idx[i] = ec_var(e, ec_lanes(m->run_it, lanes), "run_idx");
    LLVMValueRef off = ec_add(e, ec_add(e, m->base, at), ec_i64(e, rr->p[i].at));
    LLVMBuildStore(e->b, ec_load_read_cmp(e, off, lanes), rr->val[i]);
    LLVMBuildStore(e->b, LLVMConstNull(ec_lanes(m->run_it, lanes)), rr->idx[i]);
  }
}

/* Rows [from, to) of the run at read offset at into the registers by the
 * sequential rule, row r's index rel + r past the registers' base (i64). */
static void run_rows(mcol *m, run_regs *rr, LLVMValueRef at, LLVMValueRef from, LLVMValueRef to,
                     LLVMValueRef rel) {
  emit_ctx *e = m->e;
  ec_loop lr;
  LLVMValueRef r = ec_loop_begin(e, &lr, from, to, 1);
  LLVMValueRef row = ec_madd(e, ec_add(e, m->base, at), r, m->run_stride);
  LLVMValueRef ri = LLVMBuildTrunc(e->b, ec_add(e, rel, r), m->run_it, "");
  for (uint32_t i = 0; i < rr->n; i++) {
    const uint32_t lanes = rr->p[i].lanes;
    LLVMTypeRef vt = ec_lanes(m->ct, lanes), it = ec_lanes(m->run_it, lanes);
    LLVMValueRef x = ec_load_read_cmp(e, ec_add(e, row, ec_i64(e, rr->p[i].at)), lanes);
    LLVMValueRef a = LLVMBuildLoad2(e->b, vt, rr->val[i], "");
    LLVMValueRef take = ec_take_next(e, x, a);
    LLVMBuildStore(e->b, ec_select_unpredictable(e, take, x, a), rr->val[i]);
    LLVMValueRef ai = LLVMBuildLoad2(e->b, it, rr->idx[i], "");
    LLVMBuildStore(e->b, ec_select_unpredictable(e, take, ec_splat(e, ri, lanes), ai), rr->idx[i]);
  }
  ec_loop_end(e, &lr);
}

/* The registers into the accumulators: stored (merge false) or merged by
 * the sequential rule (their rows after the accumulators'). */
static void run_flush(mcol *m, run_regs *rr, bool merge) {
  emit_ctx *e = m->e;
  for (uint32_t i = 0; i < rr->n; i++) {
    const uint32_t lanes = rr->p[i].lanes;
    LLVMValueRef x = LLVMBuildLoad2(e->b, ec_lanes(m->ct, lanes), rr->val[i], "");
    LLVMValueRef xi = LLVMBuildLoad2(e->b, ec_lanes(m->run_it, lanes), rr->idx[i], "");
    if (m->run_it != e->i32)
      xi = LLVMBuildZExt(e->b, xi, ec_lanes(e->i32, lanes), "");
    xi = LLVMBuildAdd(e->b, xi, ec_splat(e, rr->base, lanes), "");
    mcol_put(m, ec_i64(e, rr->p[i].at), lanes, x, xi, merge);
  }
}
/* The run of rows at read offset roff (m->run of them, row i's index
 * rbase + i) over the w columns: reduced in registers (row by row, by the
 * sequential rule), then merged into the accumulators, which the first
 * run of a task (first, an i1) initializes (the walk: each run goes to
 * its own kept point's). */
static void mcol_run(mcol *m, LLVMValueRef first, LLVMValueRef rbase, LLVMValueRef roff,
                     uint64_t w) {
  emit_ctx *e = m->e;
  run_regs rr;
  run_init(m, &rr, w, roff, LLVMBuildTrunc(e->b, rbase, e->i32, ""));
  run_rows(m, &rr, roff, ec_i64(e, 1), ec_i64(e, m->run), ec_i64(e, 0));
  ec_if f;
  ec_if_begin(e, &f, first);
  run_flush(m, &rr, false);
  ec_if_else(e, &f);
  run_flush(m, &rr, true);
  ec_if_end(e, &f);
}

/* count 0s of ONEHOT output i from off, stride apart: non-temporal
 * vectors where the output is large (ec_output_nt) and contiguous. */
static void onehot_zeros(emit_ctx *e, uint32_t i, LLVMValueRef off, LLVMValueRef count,
                         uint64_t stride) {
  const dmlc_dtype dt = e->k->outputs[i].dtype;
  if (stride == 1 && ec_output_nt(e, i))
    ec_store_onehot_run_nt(e, dt, e->out[i], off, count, NULL);
  else
    ec_fill(e, dt, e->out[i], off, count, stride, ec_const_elem(e, dt, 0));
}

/* The 0s of ONEHOT outputs over run r (its rows, w columns each): one
 * run of them where the run's rows lie back to back there. */
static void run_onehot_zeros(mcol *m, const uint32_t *red, uint32_t nred, LLVMValueRef r,
                             uint64_t w) {
  emit_ctx *e = m->e;
  const dmlc_kdesc *k = e->k;
  const uint32_t last = k->rank - 1;
  for (uint32_t i = 0; i < k->num_outputs; i++) {
    const dmlc_kout *out = &k->outputs[i];
    if (out->kind != DMLC_KOUT_ONEHOT)
      continue;
    LLVMValueRef off = ec_add(e, m->obase[i], decode_offset(e, red, nred - 1, r, (int)i));
    if (out->strides[last] == 1 && out->strides[last - 1] == w) {
      onehot_zeros(e, i, off, ec_i64(e, m->run * w), 1);
      continue;
    }
    ec_loop l;
    LLVMValueRef j = ec_loop_begin(e, &l, ec_i64(e, 0), ec_i64(e, m->run), 1);
    onehot_zeros(e, i, ec_madd(e, off, j, out->strides[last - 1]), ec_i64(e, w),
                 out->strides[last]);
    ec_loop_end(e, &l);
  }
}

/* Every run of rows [r_start, r_end) (whole runs) of one kept point's
 * block into registers, in order, then into the accumulators. The first
 * row is read twice (it initializes the registers, then merges as a tie
 * with itself, which keeps its index). */
static void mcol_runs(mcol *m, const uint32_t *red, uint32_t nred, LLVMValueRef r_start,
                      LLVMValueRef r_end, uint64_t w) {
  emit_ctx *e = m->e;
  const uint64_t unit = m->run;
  LLVMValueRef u0 = LLVMBuildUDiv(e->b, r_start, ec_i64(e, unit), "");
  run_regs rr;
  run_init(m, &rr, w, decode_offset(e, red, nred - 1, u0, -1),
           LLVMBuildTrunc(e->b, r_start, e->i32, ""));
  ec_loop lr;
  LLVMValueRef r = ec_loop_begin(e, &lr, u0, LLVMBuildUDiv(e->b, r_end, ec_i64(e, unit), ""), 1);
  /* Short runs apart (each a few lines the hardware prefetchers do not
   * foresee): the next run's lines into L1 meanwhile. f32 [3,1000,7,96,6]
   * over {1, 3} (runs of 2304 bytes, 16128 apart; 48 MB) 0.66-0.77 of the
   * time, f16 0.58-0.70, u8 [64,96,64,24] over {0, 2} (1536 bytes)
   * 0.62-0.93; runs of 6 KiB (f32 [64,32,128,12]) 1.07-1.14: none there. */
  const uint64_t span = ((unit - 1) * m->run_stride + w) * dmlc_dtype_size(e->k->read_dtype);
  if (span <= MCOL_RUN_PREFETCH_BYTES) {
    LLVMValueRef next =
        ec_add(e, m->base, decode_offset(e, red, nred - 1, ec_add(e, r, ec_i64(e, 1)), -1));
    for (uint64_t b = 0; b < span; b += 64)
      ec_prefetch_read(e, next, (int64_t)b, true);
  }
  run_rows(m, &rr, decode_offset(e, red, nred - 1, r, -1), ec_i64(e, 0), ec_i64(e, unit),
           LLVMBuildSub(e->b, ec_mul(e, r, unit), r_start, ""));
  run_onehot_zeros(m, red, nred, r, w);
  ec_loop_end(e, &lr);
  run_flush(m, &rr, false);
}

/* Row r (index ridx, read offset roff) into the accumulators over w
 * columns (vend of them in whole vectors): the first of its task's rows
 * (first, an i1) initializes them, the others merge. */
static void mcol_row(mcol *m, LLVMValueRef first, LLVMValueRef r, LLVMValueRef ridx,
                     LLVMValueRef roff, LLVMValueRef vend, LLVMValueRef w) {
  emit_ctx *e = m->e;
  ec_if f;
  ec_if_begin(e, &f, first);
  mcol_merge_all(m, NULL, ridx, roff, vend, w);
  ec_if_else(e, &f);
  mcol_merge_all(m, r, ridx, roff, vend, w);
  ec_if_end(e, &f);
}

/* Rows [r_start, r_end) of the block at m's bases (w columns, vend of
 * them in whole vectors) into the accumulators, in order; each one's
 * ONEHOT 0s after it. */
static void mcol_rows(mcol *m, const uint32_t *red, uint32_t nred, LLVMValueRef r_start,
                      LLVMValueRef r_end, LLVMValueRef vend, LLVMValueRef w) {
  emit_ctx *e = m->e;
  const dmlc_kdesc *k = e->k;
  const uint32_t last = k->rank - 1;
  ec_loop lr;
  LLVMValueRef r = ec_loop_begin(e, &lr, r_start, r_end, 1);
  LLVMValueRef roff = decode_offset(e, red, nred, r, -1);
  LLVMValueRef ridx = row_index_base(e, red, nred, r);
  mcol_row(m, LLVMBuildICmp(e->b, LLVMIntEQ, r, r_start, ""), r, ridx, roff, vend, w);
  for (uint32_t i = 0; i < k->num_outputs; i++) {
    const dmlc_kout *out = &k->outputs[i];
    if (out->kind == DMLC_KOUT_ONEHOT)
      ec_fill(e, out->dtype, e->out[i],
              ec_add(e, m->obase[i], decode_offset(e, red, nred, r, (int)i)), w, out->strides[last],
              ec_const_elem(e, out->dtype, 0));
  }
  ec_loop_end(e, &lr);
}

/* Super row j's candidates of the K kept columns (super columns j * K
 * on), a vector of K values; their indices (r * x + j, r the accumulator's,
 * as i32: the reduced dims' points fit INT32_MAX) into *vi. */
static LLVMValueRef super_candidates(mcol *m, LLVMValueRef j, LLVMValueRef *vi) {
  emit_ctx *e = m->e;
  const uint32_t kc = (uint32_t)(e->k->dims[e->k->rank - 1] / m->x); /* K */
  LLVMValueRef cc = ec_mul(e, j, kc);
  LLVMValueRef i =
      LLVMBuildLoad2(e->b, ec_lanes(e->i32, kc), mcol_ptr(m, m->acc_idx, m->idx_t, cc), "");
  LLVMSetAlignment(i, 4);
  LLVMValueRef j32 = ec_splat(e, LLVMBuildTrunc(e->b, j, e->i32, ""), kc);
  LLVMValueRef x = ec_splat(e, ec_i32(e, m->x), kc);
  *vi = LLVMBuildAdd(e->b, LLVMBuildMul(e->b, i, x, ""), j32, "");
  LLVMValueRef v = LLVMBuildLoad2(e->b, ec_lanes(m->ct, kc), mcol_ptr(m, m->acc, m->acc_t, cc), "");
  LLVMSetAlignment(v, (unsigned)m->ct_size);
  return v;
}

/* Super rows: the INDEX outputs of the K kept columns at m's bases, each
 * the best of its x candidates by value, then index: the super rows'
 * candidates merged a vector of K columns at a time. */
static void mcol_store_super(mcol *m, const uint32_t *red, uint32_t nred) {
  emit_ctx *e = m->e;
  const dmlc_kdesc *k = e->k;
  const uint32_t last = k->rank - 1, kc = (uint32_t)(k->dims[last] / m->x); /* K */
  LLVMValueRef bv = ec_var(e, ec_lanes(m->ct, kc), "super_best");
  LLVMValueRef bi = ec_var(e, ec_lanes(e->i32, kc), "super_best_idx");
  LLVMValueRef vi, v = super_candidates(m, ec_i64(e, 0), &vi);
  LLVMBuildStore(e->b, v, bv);
  LLVMBuildStore(e->b, vi, bi);
  ec_loop lj;
  LLVMValueRef j = ec_loop_begin(e, &lj, ec_i64(e, 1), ec_i64(e, m->x), 1);
  v = super_candidates(m, j, &vi);
  LLVMValueRef a = LLVMBuildLoad2(e->b, ec_lanes(m->ct, kc), bv, "");
  LLVMValueRef ai = LLVMBuildLoad2(e->b, ec_lanes(e->i32, kc), bi, "");
  LLVMValueRef take = ec_take_merge(e, a, ai, v, vi);
  LLVMBuildStore(e->b, LLVMBuildSelect(e->b, take, v, a, ""), bv);
  LLVMBuildStore(e->b, LLVMBuildSelect(e->b, take, vi, ai, ""), bi);
  ec_loop_end(e, &lj);
  LLVMValueRef best = LLVMBuildLoad2(e->b, ec_lanes(e->i32, kc), bi, "");
  for (uint32_t p = 0; p < kc; p++) {
    LLVMValueRef idx = kc == 1 ? best : LLVMBuildExtractElement(e->b, best, ec_i32(e, p), "");
    idx = LLVMBuildZExt(e->b, idx, e->i64, "");
    for (uint32_t i = 0; i < k->num_outputs; i++) {
      const dmlc_kout *out = &k->outputs[i];
      LLVMValueRef off = ec_add(e, m->obase[i], ec_i64(e, p * out->strides[last]));
      if (out->kind == DMLC_KOUT_INDEX) {
        ec_store(e, out->dtype, e->out[i], off, ec_convert(e, idx, DMLC_DTYPE_U64, out->dtype));
        continue;
      }
      /* the 1 at super row idx / x (its reduced coordinates), super column
       * (idx % x) * K + p */
      LLVMValueRef r = LLVMBuildUDiv(e->b, idx, ec_i64(e, m->x), "");
      LLVMValueRef j = LLVMBuildSub(e->b, idx, ec_mul(e, r, m->x), "");
      off = ec_madd(e, ec_add(e, off, decode_offset(e, red, nred, r, (int)i)), j,
                    kc * out->strides[last]);
      ec_store(e, out->dtype, e->out[i], off, ec_const_elem(e, out->dtype, 1));
    }
  }
}

/* The outputs of the block at m's bases (w columns) from its
 * accumulators: INDEX outputs, and the 1s of ONEHOT ones. */
static void mcol_store(mcol *m, const uint32_t *red, uint32_t nred, LLVMValueRef w) {
  emit_ctx *e = m->e;
  const dmlc_kdesc *k = e->k;
  const uint32_t last = k->rank - 1;
  if (m->x > 1) {
    mcol_store_super(m, red, nred);
    return;
  }
  ec_loop lc;
  LLVMValueRef cc = ec_loop_begin(e, &lc, ec_i64(e, 0), w, 1);
  LLVMValueRef ri = LLVMBuildLoad2(e->b, e->i32, mcol_ptr(m, m->acc_idx, m->idx_t, cc), "");
  LLVMValueRef idx = LLVMBuildZExt(e->b, ri, e->i64, "");
  for (uint32_t i = 0; i < k->num_outputs; i++) {
    const dmlc_kout *out = &k->outputs[i];
    LLVMValueRef off = ec_madd(e, m->obase[i], cc, out->strides[last]);
    if (out->kind == DMLC_KOUT_ONEHOT)
      ec_store(e, out->dtype, e->out[i], ec_add(e, off, weighted_offset(e, red, nred, idx, (int)i)),
               ec_const_elem(e, out->dtype, 1));
    else
      ec_store(e, out->dtype, e->out[i], off, ec_convert(e, idx, DMLC_DTYPE_U64, out->dtype));
  }
  ec_loop_end(e, &lc);
}

/* Block tb (outer point tb / blocks, block tb % blocks): m's bases, and
 * its width (the last block is narrower) into *w. */
static void mcol_block(mcol *m, const uint32_t *kept, uint32_t nkept, LLVMValueRef tb,
                       uint64_t blocks, uint64_t width, LLVMValueRef *w) {
  emit_ctx *e = m->e;
  const dmlc_kdesc *k = e->k;
  const uint32_t last = k->rank - 1;
  LLVMValueRef o = LLVMBuildUDiv(e->b, tb, ec_i64(e, blocks), "outer");
  LLVMValueRef c0 = ec_mul(e, LLVMBuildURem(e->b, tb, ec_i64(e, blocks), ""), width);
  LLVMValueRef left = LLVMBuildSub(e->b, ec_i64(e, k->dims[last]), c0, "");
  LLVMValueRef narrow = LLVMBuildICmp(e->b, LLVMIntULT, left, ec_i64(e, width), "");
  *w = LLVMBuildSelect(e->b, narrow, left, ec_i64(e, width), "width");
  m->base = ec_add(e, decode_offset(e, kept, nkept, o, -1), c0);
  for (uint32_t i = 0; i < k->num_outputs; i++)
    m->obase[i] =
        ec_madd(e, decode_offset(e, kept, nkept, o, (int)i), c0, k->outputs[i].strides[last]);
}

/* A split's partial of slot (block, chunk), column cc: its value, or its
 * index (idx, at byte idx_at of the scratch on). */
static LLVMValueRef mcol_part(mcol *m, LLVMValueRef slot, LLVMValueRef cc, uint64_t width,
                              uint64_t idx_at, bool idx) {
  emit_ctx *e = m->e;
  LLVMValueRef n = ec_add(e, ec_mul(e, slot, width), cc);
  LLVMValueRef byte = idx ? ec_madd(e, ec_i64(e, idx_at), n, 4) : ec_mul(e, n, m->ct_size);
  return LLVMBuildGEP2(e->b, e->i8, e->scratch, &byte, 1, "");
}

/* Columns [cc, cc + lanes) of slot's partial into the accumulators (mcol_put). */
static void mcol_put_part(mcol *m, LLVMValueRef slot, LLVMValueRef cc, uint32_t lanes,
                          uint64_t width, uint64_t idx_at, bool merge) {
  emit_ctx *e = m->e;
  LLVMValueRef x = LLVMBuildLoad2(e->b, ec_lanes(m->ct, lanes),
                                  mcol_part(m, slot, cc, width, idx_at, false), "");
  LLVMValueRef xi = LLVMBuildLoad2(e->b, ec_lanes(e->i32, lanes),
                                   mcol_part(m, slot, cc, width, idx_at, true), "");
  LLVMSetAlignment(x, 1);
  LLVMSetAlignment(xi, 1);
  mcol_put(m, cc, lanes, x, xi, merge);
}

/* Columns [from, to) in steps of lanes: the partials of slots slot0 on
 * (chunks of them) merged in chunk order into the accumulators. */
static void finish_columns(mcol *m, LLVMValueRef slot0, LLVMValueRef from, LLVMValueRef to,
                           uint32_t lanes, uint64_t chunks, uint64_t width, uint64_t idx_at) {
  emit_ctx *e = m->e;
  ec_loop lc;
  LLVMValueRef cc = ec_loop_begin(e, &lc, from, to, lanes);
  mcol_put_part(m, slot0, cc, lanes, width, idx_at, false);
  ec_loop lk;
  LLVMValueRef c = ec_loop_begin(e, &lk, ec_i64(e, 1), ec_i64(e, chunks), 1);
  mcol_put_part(m, ec_add(e, slot0, c), cc, lanes, width, idx_at, true);
  ec_loop_end(e, &lk);
  ec_loop_end(e, &lc);
}

/* The accumulators' w columns to the split's partials of slot. */
static void mcol_save(mcol *m, LLVMValueRef slot, LLVMValueRef w, uint64_t width, uint64_t idx_at) {
  emit_ctx *e = m->e;
  ec_loop lc;
  LLVMValueRef cc = ec_loop_begin(e, &lc, ec_i64(e, 0), w, 1);
  LLVMSetAlignment(
      LLVMBuildStore(e->b, LLVMBuildLoad2(e->b, m->ct, mcol_ptr(m, m->acc, m->acc_t, cc), ""),
                     mcol_part(m, slot, cc, width, idx_at, false)),
      1);
  LLVMSetAlignment(
      LLVMBuildStore(e->b, LLVMBuildLoad2(e->b, e->i32, mcol_ptr(m, m->acc_idx, m->idx_t, cc), ""),
                     mcol_part(m, slot, cc, width, idx_at, true)),
      1);
  ec_loop_end(e, &lc);
}

/* The finish of a split: each column's partials (slot (tb, chunk) at
 * tb * chunks + chunk, for tb over the outer points' blocks) merged in
 * chunk order (later chunks, later indices; reordered, by value and then
 * index), then the outputs. */
static dmlc_status mcol_finish(mcol *mp, const char *name, const uint32_t *kept, uint32_t nkept,
                               const uint32_t *red, uint32_t nred, uint64_t outer_points,
                               uint64_t blocks, uint64_t chunks, uint64_t width, uint64_t idx_at,
                               dmlc_cpu_kernel_info *info) {
  const uint64_t tbs = outer_points * blocks;
  mcol m = *mp;
  emit_ctx *e = m.e;
  LLVMValueRef zero = ec_i64(e, 0), w;
  char finish[256];
  snprintf(finish, sizeof finish, "%s_finish", name);
  ec_function_begin(e, finish, false, NULL, NULL);
  m.acc = ec_array(e, m.ct, width, 64);
  m.acc_idx = ec_array(e, e->i32, width, 64);
  m.acc_t = LLVMArrayType2(m.ct, width);
  m.idx_t = LLVMArrayType2(e->i32, width);
  ec_loop lb;
  LLVMValueRef tb = ec_loop_begin(e, &lb, zero, ec_i64(e, tbs), 1);
  mcol_block(&m, kept, nkept, tb, blocks, width, &w);
  /* whole vectors of columns, then one at a time */
  LLVMValueRef slot0 = ec_mul(e, tb, chunks);
  LLVMValueRef vend = LLVMBuildAnd(e->b, w, ec_i64(e, ~(uint64_t)(m.lanes - 1)), "");
  finish_columns(&m, slot0, zero, vend, m.lanes, chunks, width, idx_at);
  finish_columns(&m, slot0, vend, w, 1, chunks, width, idx_at);
  mcol_store(&m, red, nred, w);
  ec_loop_end(e, &lb);
  ec_function_end(e);
  info->scratch_bytes = idx_at + tbs * chunks * width * 4;
  info->has_finish = true;
  return DMLC_OK;
}

/* Merged columns read in storage order ("walk"): where kept dims lie
 * between reduced ones ([r, k, r, k]), a task per (kept point, block) reads
 * only its point's runs of each outer row, leaving gaps that other tasks
 * read at other times (f32 [2048,2,64,128] over {0, 2}: runs of 32 KiB
 * every 64 KiB, at 0.76-0.83 of a sequential read in a C model). With one
 * block of columns and every point's accumulators fitting MCOL_WALK_BYTES,
 * a task takes a chunk of dim 0 (reduced) and reads every row inside it in
 * storage order, each into its kept point's accumulators, so the reads are
 * one sequential stream. Each point's rows still come in the order of
 * their indices, so the sequential rule holds; a split's partials and
 * finish are the ones of the (point, chunk) tasks. Dim 0 reduced and kept
 * dims inside it, the dims in storage order, not reordered; INDEX outputs
 * (with runs, from DRAM only), and ONEHOT ones with runs. f32
 * [2048,2,64,128] over {0, 2}, 128 MiB: 0.59-0.73 of a plain read loop ->
 * 0.94-1.08; [512,8,16,64] over {0, 2}, 16 MiB (runs of 4 KiB every 32
 * KiB): 0.99 -> 0.30-0.36 ms. */
static bool walk_matches(const emit_ctx *e, const uint32_t *kept, uint32_t nkept,
                         const uint32_t *red, uint32_t nred, uint64_t outer_points, uint64_t cols,
                         uint64_t ct_size, bool runs) {
  const dmlc_kdesc *k = e->k;
  const uint32_t last = k->rank - 1;
  if (e->reordered || !nkept || !nred || red[0] != 0 || cols > MCOL_WIDTH ||
      outer_points * cols * (ct_size + 4) > MCOL_WALK_BYTES)
    return false;
  bool onehot = false;
  for (uint32_t i = 0; i < k->num_outputs; i++)
    onehot |= k->outputs[i].kind == DMLC_KOUT_ONEHOT;
  /* ONEHOT outputs' 0s a run at a time (mcol_run): where every row is in
   * runs. From the caches runs of INDEX outputs read as fast in the tasks'
   * order, whose registers hold every run of a task and merge into no
   * accumulators (argmax f32 / u8 [64,32,128,12] over {0, 2}: 0.61-0.68 /
   * 0.42-0.43 of the walk's time); the walk's storage order keeps a ONEHOT
   * output's 0s in one stream too (hardmax f32 [256,12,256,5]: 0.45-0.55 of
   * the time, but [64,32,128,12] 1.3-1.5 times it). */
  if (onehot ? !runs : runs && !e->from_dram)
    return false;
  /* From the caches, long runs read as fast with their gaps, and the walk's
   * decode of every row costs more (f32 [64,2,64,128], 4 MiB, runs of 32
   * KiB: 1.0-1.2 of the time) */
  if (!e->from_dram &&
      k->read_strides[kept[nkept - 1]] * dmlc_dtype_size(k->read_dtype) >= MCOL_WALK_RUN_BYTES)
    return false;
  for (uint32_t d = 0; d + 1 < last; d++)
    if (k->read_strides[d] < k->read_strides[d + 1] || !k->read_strides[d + 1])
      return false;
  return true;
}

/* m's accumulators: kept point o's width of the walk's arrays. */
static void walk_point(mcol *m, LLVMValueRef acc_all, LLVMValueRef idx_all, LLVMValueRef o,
                       uint64_t width) {
  emit_ctx *e = m->e;
  LLVMValueRef at = ec_mul(e, o, width);
  m->acc = LLVMBuildGEP2(e->b, m->ct, acc_all, &at, 1, "");
  m->acc_idx = LLVMBuildGEP2(e->b, e->i32, idx_all, &at, 1, "");
}

static dmlc_status emit_walk(emit_ctx *e, mcol *mp, const char *name, const uint32_t *kept,
                             uint32_t nkept, const uint32_t *red, uint32_t nred,
                             uint64_t outer_points, uint64_t rows, dmlc_cpu_kernel_info *info) {
  const dmlc_kdesc *k = e->k;
  const uint32_t last = k->rank - 1;
  mcol m = *mp;
  const uint64_t width = k->dims[last], d0 = k->dims[0];
  uint64_t chunks = 1, chunk_d0 = d0;
  if (ec_read_bytes(k) >= e->split_min_bytes) {
    chunks = d0 < MCOL_MIN_TASKS ? d0 : MCOL_MIN_TASKS;
    chunk_d0 = (d0 + chunks - 1) / chunks;
    chunks = (d0 + chunk_d0 - 1) / chunk_d0;
  }
  const uint64_t red_inner = rows / d0, all_inner = red_inner * outer_points;
  const uint64_t unit = m.run ? m.run : 1; /* rows a step */
  const uint64_t idx_at = (outer_points * chunks * width * m.ct_size + 63) / 64 * 64;
  e->use_scratch = chunks > 1;
  uint32_t space[DMLC_MAX_RANK];
  for (uint32_t d = 0; d < last; d++)
    space[d] = d;

  LLVMValueRef begin, end;
  ec_function_begin(e, name, true, &begin, &end);
  LLVMValueRef acc_all = ec_array(e, m.ct, outer_points * width, 64);
  LLVMValueRef idx_all = ec_array(e, e->i32, outer_points * width, 64);
  m.acc_t = LLVMArrayType2(m.ct, width);
  m.idx_t = LLVMArrayType2(e->i32, width);
  m.base = ec_i64(e, 0);
  LLVMValueRef zero = ec_i64(e, 0), w = ec_i64(e, width);
  LLVMValueRef vend = ec_i64(e, width / m.lanes * m.lanes);
  ec_loop lt;
  LLVMValueRef ch = ec_loop_begin(e, &lt, begin, end, 1);
  LLVMValueRef a0 = ec_mul(e, ch, chunk_d0);
  LLVMValueRef a1 = ec_add(e, a0, ec_i64(e, chunk_d0));
  LLVMValueRef over = LLVMBuildICmp(e->b, LLVMIntUGT, a1, ec_i64(e, d0), "");
  a1 = LLVMBuildSelect(e->b, over, ec_i64(e, d0), a1, "");
  LLVMValueRef r_start = ec_mul(e, a0, red_inner);

  /* every row of the chunk in storage order, into its point's accumulators */
  ec_loop lq;
  LLVMValueRef q =
      ec_loop_begin(e, &lq, ec_mul(e, a0, all_inner / unit), ec_mul(e, a1, all_inner / unit), 1);
  LLVMValueRef coords[DMLC_MAX_RANK];
  const uint32_t nspace = m.run ? last - 1 : last;
  ec_coords(e, space, nspace, q, coords);
  LLVMValueRef roff = zero, r = zero, o = zero;
  for (uint32_t d = 0; d < nspace; d++) {
    roff = ec_madd(e, roff, coords[d], k->read_strides[d]);
    if (dmlc_mask_has_axis(k->reduced_mask, d))
      r = ec_madd(e, ec_mul(e, r, k->dims[d]), coords[d], 1);
    else
      o = ec_madd(e, ec_mul(e, o, k->dims[d]), coords[d], 1);
  }
  walk_point(&m, acc_all, idx_all, o, width);
  if (m.run) {
    r = ec_mul(e, r, unit);
    mcol_run(&m, LLVMBuildICmp(e->b, LLVMIntEQ, r, r_start, "first"), r, roff, width);
    for (uint32_t i = 0; i < k->num_outputs; i++) /* the run's offsets in ONEHOT outputs */
      if (k->outputs[i].kind == DMLC_KOUT_ONEHOT)
        m.obase[i] = decode_offset(e, space, nspace, q, (int)i);
    run_onehot_zeros(&m, red, nred, zero, width);
  } else {
    mcol_row(&m, LLVMBuildICmp(e->b, LLVMIntEQ, r, r_start, "first"), r, r, roff, vend, w);
  }
  ec_loop_end(e, &lq);

  /* each point's accumulators to its partials (split) or its outputs */
  ec_loop lo;
  o = ec_loop_begin(e, &lo, zero, ec_i64(e, outer_points), 1);
  walk_point(&m, acc_all, idx_all, o, width);
  if (chunks > 1) {
    mcol_save(&m, ec_madd(e, ch, o, chunks), w, width, idx_at);
  } else {
    LLVMValueRef wo;
    mcol_block(&m, kept, nkept, o, 1, width, &wo);
    mcol_store(&m, red, nred, wo);
  }
  ec_loop_end(e, &lo);
  ec_loop_end(e, &lt);
  ec_function_end(e);

  info->num_tasks = chunks;
  info->bytes_per_task = chunk_d0 * all_inner * width * dmlc_dtype_size(k->read_dtype);
  for (uint32_t i = 0; i < k->num_outputs; i++)
    info->bytes_per_task +=
        (k->outputs[i].kind == DMLC_KOUT_ONEHOT ? chunk_d0 * all_inner : outer_points) * width *
        dmlc_dtype_size(k->outputs[i].dtype);
  if (chunks == 1)
    return DMLC_OK;
  return mcol_finish(&m, name, kept, nkept, red, nred, outer_points, 1, chunks, width, idx_at,
                     info);
}

/* The kept and reduced dims but the last, in order; the kept points
 * (*outer_points) and the rows (*rows, every reduced coordinate). */
static void mcol_dims(const dmlc_kdesc *k, uint32_t *kept, uint32_t *nkept, uint32_t *red,
                      uint32_t *nred, uint64_t *outer_points, uint64_t *rows) {
  *nkept = *nred = 0;
  *outer_points = *rows = 1;
  for (uint32_t d = 0; d + 1 < k->rank; d++) {
    if (dmlc_mask_has_axis(k->reduced_mask, d)) {
      red[(*nred)++] = d;
      *rows *= k->dims[d];
    } else {
      kept[(*nkept)++] = d;
      *outer_points *= k->dims[d];
    }
  }
}

/* Lanes a vector (values compared as 32 bits or wider) and bytes a value
 * as compared (f16 as f32). */
static uint32_t mcol_lanes(const dmlc_kdesc *k, uint32_t vector_bytes) {
  const uint32_t size = dmlc_dtype_size(k->read_dtype);
  return vector_bytes / (size < 4 ? 4 : size);
}

static uint64_t mcol_ct_size(const dmlc_kdesc *k) {
  return k->read_dtype == DMLC_DTYPE_F16 ? 4 : dmlc_dtype_size(k->read_dtype);
}

static mcol mcol_new(emit_ctx *e) {
  const dmlc_kdesc *k = e->k;
  return (mcol){.e = e,
                .ct = ec_cmp_type(e, k->read_dtype),
                .lanes = mcol_lanes(k, e->vector_bytes),
                .ct_size = mcol_ct_size(k),
                .x = 1};
}

static dmlc_status emit_merged_columns(emit_ctx *e, mcol m, const char *name,
                                       dmlc_cpu_kernel_info *info);

/* A run's (and a super row's) columns at most: MCOL_SUPER_VECS vectors
 * with AVX-512's 32 registers, half that with 16. */
static uint64_t run_cols(uint32_t vector_bytes, uint32_t lanes) {
  return (vector_bytes >= 64 ? MCOL_SUPER_VECS : MCOL_SUPER_VECS / 2) * (uint64_t)lanes;
}

/* What runs and super rows both need: merged columns not reordered, the
 * innermost reduced dim next to the kept one. */
static bool runs_fit(const emit_ctx *e) {
  const dmlc_kdesc *k = e->k;
  return ec_merged_columns_matches(k) && !e->reordered && k->rank >= 2 &&
         dmlc_mask_has_axis(k->reduced_mask, k->rank - 2);
}

uint64_t ec_merged_columns_super_rows(const emit_ctx *e, uint32_t vector_bytes) {
  const dmlc_kdesc *k = e->k;
  const uint32_t last = k->rank - 1;
  if (!runs_fit(e) || k->read_strides[last - 1] != k->dims[last])
    return 1;
  for (uint32_t i = 0; i < k->num_outputs; i++) /* ONEHOT 0s a super row at a time */
    if (k->outputs[i].kind == DMLC_KOUT_ONEHOT &&
        k->outputs[i].strides[last - 1] != k->dims[last] * k->outputs[i].strides[last])
      return 1;
  const uint32_t lanes = mcol_lanes(k, vector_bytes);
  if (k->dims[last] >= 2 * lanes)
    return 1;
  uint32_t kept[DMLC_MAX_RANK], red[DMLC_MAX_RANK], nkept, nred;
  uint64_t outer_points, rows;
  mcol_dims(k, kept, &nkept, red, &nred, &outer_points, &rows);
  const uint64_t acc_bytes = outer_points * (mcol_ct_size(k) + 4); /* a walk's, a column */
  uint64_t most = run_cols(vector_bytes, lanes);
  if (walk_matches(e, kept, nkept, red, nred, outer_points, k->dims[last], mcol_ct_size(k), true) &&
      most * acc_bytes > MCOL_WALK_BYTES)
    most = MCOL_WALK_BYTES / acc_bytes;
  uint64_t x = most / k->dims[last];
  while (x >= 2 && k->dims[last - 1] % x)
    x--;
  return x < 2 ? 1 : x;
}

bool ec_merged_columns_runs(const emit_ctx *e, uint32_t vector_bytes) {
  const dmlc_kdesc *k = e->k;
  return runs_fit(e) &&
         (k->dims[k->rank - 1] <= run_cols(vector_bytes, mcol_lanes(k, vector_bytes)) ||
          ec_merged_columns_super_rows(e, vector_bytes) > 1);
}

dmlc_status ec_emit_merged_columns(emit_ctx *e, const char *name, dmlc_cpu_kernel_info *info) {
  const dmlc_kdesc *k = e->k;
  const uint32_t last = k->rank - 1;
  mcol m = mcol_new(e);
  const uint64_t x = ec_merged_columns_super_rows(e, e->vector_bytes);
  if (x < 2)
    return emit_merged_columns(e, m, name, info);
  dmlc_kdesc split = *k;
  split.dims[last - 1] /= (uint32_t)x;
  split.read_strides[last - 1] *= x;
  for (uint32_t i = 0; i < k->num_outputs; i++)
    split.outputs[i].strides[last - 1] *= x;
  split.dims[last] *= (uint32_t)x;
  m.x = x;
  e->k = &split;
  const dmlc_status st = emit_merged_columns(e, m, name, info);
  e->k = k;
  return st;
}

static dmlc_status emit_merged_columns(emit_ctx *e, mcol m, const char *name,
                                       dmlc_cpu_kernel_info *info) {
  const dmlc_kdesc *k = e->k;
  const uint32_t last = k->rank - 1;
  const uint64_t cols = k->dims[last];
  uint32_t kept[DMLC_MAX_RANK], red[DMLC_MAX_RANK], nkept, nred;
  uint64_t outer_points, rows;
  mcol_dims(k, kept, &nkept, red, &nred, &outer_points, &rows);
  if (ec_merged_columns_runs(e, e->vector_bytes)) {
    m.run = k->dims[last - 1];
    m.run_stride = k->read_strides[last - 1];
  }
  if (walk_matches(e, kept, nkept, red, nred, outer_points, cols, m.ct_size, m.run != 0)) {
    run_index_type(&m, m.run); /* a run's rows */
    return emit_walk(e, &m, name, kept, nkept, red, nred, outer_points, rows, info);
  }
  uint64_t width = cols < MCOL_WIDTH ? cols : MCOL_WIDTH;
  /* Too few blocks for the threads: chunks of rows (a finish merges their
   * partials), or else narrower blocks. Narrow blocks of short rows read a
   * slice of every row each (a transposed tensor's 64 columns over {1, 2}
   * in four tasks of 16: 11 GB/s). */
  uint64_t chunks = 1, chunk_rows = rows;
  const uint64_t wide_tasks = outer_points * ((cols + width - 1) / width);
  /* (in rows of the descriptor before super rows: x of them a row here) */
  if (wide_tasks < MCOL_MIN_TASKS && rows * m.x >= 2 * MCOL_CHUNK_ROWS &&
      ec_read_bytes(k) >= e->split_min_bytes) {
    chunks = (MCOL_MIN_TASKS + wide_tasks - 1) / wide_tasks;
    chunk_rows = (rows + chunks - 1) / chunks;
    if (chunk_rows * m.x < MCOL_CHUNK_ROWS)
      chunk_rows = (MCOL_CHUNK_ROWS + m.x - 1) / m.x;
    if (m.run) /* whole runs */
      chunk_rows = (chunk_rows + m.run - 1) / m.run * m.run;
    chunks = (rows + chunk_rows - 1) / chunk_rows;
  }
  while (chunks == 1 && width > m.lanes && !m.run &&
         outer_points * ((cols + width - 1) / width) < MCOL_MIN_TASKS)
    width = (width / 2 + m.lanes - 1) / m.lanes * m.lanes;
  run_index_type(&m, chunk_rows); /* a task's rows */
  const uint64_t blocks = (cols + width - 1) / width;
  const uint64_t idx_at = (outer_points * blocks * chunks * width * m.ct_size + 63) / 64 * 64;
  e->use_scratch = chunks > 1;

  LLVMValueRef begin, end;
  ec_function_begin(e, name, true, &begin, &end);
  m.acc = ec_array(e, m.ct, width, 64);
  m.acc_idx = ec_array(e, e->i32, width, 64);
  m.acc_t = LLVMArrayType2(m.ct, width);
  m.idx_t = LLVMArrayType2(e->i32, width);
  ec_loop lt;
  LLVMValueRef t = ec_loop_begin(e, &lt, begin, end, 1);
  LLVMValueRef tb = LLVMBuildUDiv(e->b, t, ec_i64(e, chunks), "");
  LLVMValueRef ch = LLVMBuildURem(e->b, t, ec_i64(e, chunks), "chunk");
  LLVMValueRef w;
  mcol_block(&m, kept, nkept, tb, blocks, width, &w);
  LLVMValueRef vend = LLVMBuildAnd(e->b, w, ec_i64(e, ~(uint64_t)(m.lanes - 1)), "");
  LLVMValueRef r_start = ec_mul(e, ch, chunk_rows);
  LLVMValueRef r_end = ec_add(e, r_start, ec_i64(e, chunk_rows));
  LLVMValueRef over = LLVMBuildICmp(e->b, LLVMIntUGT, r_end, ec_i64(e, rows), "");
  r_end = LLVMBuildSelect(e->b, over, ec_i64(e, rows), r_end, "");

  if (m.run) /* the runs, in order, in registers */
    mcol_runs(&m, red, nred, r_start, r_end, width);
  else
    mcol_rows(&m, red, nred, r_start, r_end, vend, w);

  if (chunks > 1) { /* the chunk's accumulators to its partials */
    mcol_save(&m, ec_madd(e, ch, tb, chunks), w, width, idx_at);
  } else {
    mcol_store(&m, red, nred, w);
  }
  ec_loop_end(e, &lt);
  ec_function_end(e);

  uint64_t bytes = chunk_rows * dmlc_dtype_size(k->read_dtype);
  for (uint32_t i = 0; i < k->num_outputs; i++)
    bytes += dmlc_dtype_size(k->outputs[i].dtype) *
             (k->outputs[i].kind == DMLC_KOUT_ONEHOT ? chunk_rows : 1);
  info->num_tasks = outer_points * blocks * chunks;
  info->bytes_per_task = bytes * width;
  if (chunks == 1)
    return DMLC_OK;

  return mcol_finish(&m, name, kept, nkept, red, nred, outer_points, blocks, chunks, width, idx_at,
                     info);
}
