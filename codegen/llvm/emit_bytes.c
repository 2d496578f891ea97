/* Short packed rows by permutes: space [K, R] of 8-, 16- or 32-bit
 * integers, f16 or f32, R in the span len_span gives (from 6 to 10 up to
 * 16 or 25), rows packed one after another, index outputs only,
 * on targets whose 64-byte vectors permute any elements across the whole
 * vector in one instruction (dmlc_llvm_target.byte_permutes: x86 with
 * AVX-512 VBMI: VPERMB and VPERMT2B, and VPERMT2W, VPERMT2D). The channel
 * argmax of NHWC images with tens of classes (u8 [*,21]), classifier heads
 * of ten classes (f32 [*,10]).
 *
 * A group of G rows (G the elements of a vector: 64, 32, 16) is taken in
 * two passes over its G * R elements, R vectors (one read from memory: the
 * second finds them in L1):
 *
 * 1. The extremes. Each row is laid in a lane of W elements (W the
 *    largest power of 2 up to R, at most 16): the extreme of its first W
 *    elements and its last W (the two windows overlap; an extreme does
 *    not mind an element counted twice), G / W rows a vector, by two
 *    permutes of two loads. Pairs of such vectors merge into one of lanes
 *    half as wide (two permutes and a max or min), until one vector holds
 *    the G rows' extremes, row r in lane r: about 1 permute a row.
 * 2. The positions. The group's R vectors as stored are compared with the
 *    extremes spread over them by one permute each (each element gets its
 *    row's extreme): R masks of G bits, G * R bits in row order, row r's
 *    from bit r * R. Stored on the stack, each row's bits are then taken
 *    into a 32-bit lane by a permute of their bytes and a shift, 16 rows a
 *    vector, and the first set bit (the last, for DECREASING) is the row's
 *    index: a count of trailing (leading) zeros of the lane.
 *
 * f32 takes its extremes by ordered compares (MAXPS) and its positions by
 * ordered equals (so -0 and +0 tie, as the order has them); a group with
 * a NaN (one unordered compare a vector tells) has its masks rewritten
 * from the row code's answers (exact_masks). f16 goes as i16 keys
 * (ec_f16_key: -0 and +0 one key, every NaN one key past the rest), which
 * are exact. Otherwise no branch on the data, ties and all. Rows after the last whole group go one
 * at a time (ec_group_tasks).
 *
 * On a Zen 5 (AVX-512 VBMI; permutes 2 a cycle, unpacks and max 4),
 * alternated in one process with the path these rows took before (row
 * groups of 32-byte vectors from 12 elements (8-bit), 12 (16-bit) or 14
 * (32-bit), ec_narrow_rows; else the short rows' de-interleaving), old
 * time over new (above 1: faster now), random values: two threads from
 * DRAM (50 MB) u8 [*,9] 1.21, [*,10] 1.29-1.39, [*,12] 1.78-2.05, [*,16]
 * 1.45-1.58, [*,21] 1.12-1.21, [*,24] 1.0-1.17, [*,25] 0.92-1.06, f32
 * [*,9] 1.43-1.71, [*,10] 1.30-1.66, [*,14] 1.72-2.07, [*,21] 1.58-1.63,
 * [*,25] 1.31-1.42, i32 [*,10] 1.02-1.20, [*,16] 1.92-2.23, [*,25]
 * 1.16-1.36, i16 and u16 [*,9..14] 1.04-1.47, f16 [*,10..25]
 * 1.09-1.64, f32 [*,6..8] 1.22-1.56; two threads in the L3 (4
 * MB) u8 [*,9] 1.14, [*,10] 1.46, [*,12] 2.0-2.25, [*,16] 1.48-1.54,
 * [*,21] 1.40-1.45, [*,25] 1.2-1.35, f32 [*,9..25] 1.45-3.3, i32
 * 1.18-2.3, i16 and u16 [*,9..14] 1.13-2.25, [*,16] 1.11, f16
 * [*,10..25] 1.1-1.63, f32 [*,6..8] 1.14-1.38; one thread in
 * the L2 (0.5 MB) u8 [*,9] 1.15, [*,12] 2.4-2.6, [*,21] 1.72-1.76, f32
 * 1.6-3.2, i32 1.27-3.1, 16-bit [*,9..16] 1.3-2.9, f16 [*,10..25]
 * 1.07-1.75, f32 [*,6..8] 1.4-1.57. Outside the spans they lost or tied:
 * u8 [*,8] (in the L3 0.72-0.91: the de-interleaving reads it at 100
 * GB/s), 8-bit rows of 26 to 32 (28: 0.82-0.98 from DRAM), i16 and u16
 * rows of 18 to 25 (0.89-1.2 in the L3 and from DRAM), f16 [*,9]
 * (0.94-1.0), f32 [*,3..5] (L3 0.61-0.97), i32 [*,3..7] (L3 0.74-1.06).
 *
 * From DRAM a group prefetches its lines BYTES_AHEAD ahead (into L1):
 * against 4 KiB ahead, u8 [*,21] 0.84-1.0 of the time, [*,10] 0.83-0.86,
 * [*,25] 0.92-1.07; 16 KiB 1.22, 2 KiB 1.18-1.2, none 1.4-1.5, into L2
 * (PREFETCHT1) 4 KiB or 16 KiB ahead 1.34-1.54. */
#include "codegen/llvm/emit_internal.h"

#include <string.h>

enum {
  BYTES_MAX_LEN = 25, /* a row's bits and their offset in a byte fit 32 */
  BYTES_GROUPS_PER_TASK = 64,
  BYTES_MAX_LANE = 16, /* the widest lane (in elements) a row takes in the first pass */
  BYTES_LAG = 3,       /* groups between a group's masks and its indices (group_loop) */
  BYTES_AHEAD = 8192   /* how far ahead a group from DRAM prefetches its lines */
};

_Static_assert(BYTES_MAX_LEN + 7 <= 32, "a row's mask bits, shifted by under a byte, fit 32");

/* Elements a vector, and rows a group (one element each in the
 * extremes' vector). */
static uint32_t group_rows(const emit_ctx *e) { return 64 / dmlc_dtype_size(e->k->read_dtype); }

static bool is_f32(const emit_ctx *e) { return e->k->read_dtype == DMLC_DTYPE_F32; }

/* The row lengths this path takes, by type (the measured spans: the
 * figures above). */
static void len_span(dmlc_dtype dt, uint32_t *lo, uint32_t *hi) {
  const uint32_t size = dmlc_dtype_size(dt);
  *hi = BYTES_MAX_LEN;
  if (dt == DMLC_DTYPE_F32) {
    *lo = 6;
  } else if (dt == DMLC_DTYPE_F16) {
    *lo = 10;
  } else if (size == 4) {
    *lo = 8;
  } else {
    *lo = 9;
    if (size == 2)
      *hi = 16;
  }
}

bool ec_byte_rows_matches(const emit_ctx *e) {
  const dmlc_kdesc *k = e->k;
  /* not a scaled read (every s-th element: ec_load's strided vectors,
   * not measured here) */
  if (!e->byte_permutes || e->vector_bytes != 64 || !k->has_reduction || e->read_scale != 1 ||
      !ec_packed_index_rows(e))
    return false;
  const dmlc_kind kind = dmlc_dtype_get(k->read_dtype)->kind;
  const uint32_t size = dmlc_dtype_size(k->read_dtype);
  if (!((kind == DMLC_KIND_SIGNED || kind == DMLC_KIND_UNSIGNED) && size <= 4) &&
      k->read_dtype != DMLC_DTYPE_F32 && k->read_dtype != DMLC_DTYPE_F16)
    return false;
  uint32_t lo, hi;
  len_span(k->read_dtype, &lo, &hi);
  return k->dims[1] >= lo && k->dims[1] <= hi && k->dims[0] >= group_rows(e);
}

/* The lane width of the first pass: the largest power of 2 up to len, at
 * most BYTES_MAX_LANE. */
static uint32_t lane_width(uint64_t len) {
  uint32_t w = 1;
  while (2 * w <= len && 2 * w <= BYTES_MAX_LANE)
    w *= 2;
  return w;
}

/* The vector's worth of lanes idx picks from a, then b (NULL: a alone). */
static LLVMValueRef shuffle(emit_ctx *e, LLVMValueRef a, LLVMValueRef b, const uint32_t *idx) {
  return ec_shuffle(e, a, b, idx, LLVMGetVectorSize(LLVMTypeOf(a)));
}

/* The argmax's or argmin's extreme of two vectors; for f32 an ordered
 * compare and a select (MAXPS, MINPS), which a group with a NaN does not
 * use (group_masks). */
static LLVMValueRef extreme(emit_ctx *e, LLVMValueRef a, LLVMValueRef b) {
  const bool mx = e->k->reduction == DMLC_OP_ARGMAX;
  if (is_f32(e)) {
    LLVMValueRef gt = LLVMBuildFCmp(e->b, mx ? LLVMRealOGT : LLVMRealOLT, a, b, "");
    return LLVMBuildSelect(e->b, gt, a, b, "");
  }
  /* f16 keys are signed */
  const char *op = e->k->read_dtype == DMLC_DTYPE_F16 ? (mx ? "smax" : "smin") : ec_int_op(e);
  return ec_minmax(e, op, a, b);
}

/* A vector (64 bytes) of the read from element off + at. */
static LLVMValueRef load_vector(emit_ctx *e, LLVMValueRef off, uint64_t at) {
  LLVMValueRef i = ec_add(e, off, ec_i64(e, at));
  if (e->k->read_dtype == DMLC_DTYPE_F16)
    return ec_load_read_key(e, i, group_rows(e));
  return ec_load(e, e->k->read_dtype, e->read, i, group_rows(e));
}

/* The vector of rows r .. r + n - 1 (n = lanes / w) of the group at off,
 * row q in lane q (w elements): the extreme of its first w elements and
 * its last w. */
static LLVMValueRef lanes_of_rows(emit_ctx *e, LLVMValueRef off, uint32_t len, uint32_t w,
                                  uint32_t r) {
  const uint32_t lanes = group_rows(e), n = lanes / w, span = n * len;
  LLVMValueRef lo = load_vector(e, off, (uint64_t)r * len), hi = NULL;
  /* elements from `lanes` on come from a second load that ends where the
   * rows do (never past the group: the last group's rows end the read) */
  uint32_t first[64], last[64];
  for (uint32_t q = 0; q < n; q++)
    for (uint32_t j = 0; j < w; j++) {
      const uint32_t a = q * len + j, b = q * len + len - w + j;
      first[q * w + j] = a < lanes ? a : 2 * lanes + a - span;
      last[q * w + j] = b < lanes ? b : 2 * lanes + b - span;
    }
  if (span > lanes)
    hi = load_vector(e, off, (uint64_t)r * len + span - lanes);
  LLVMValueRef v = shuffle(e, lo, hi, first);
  return w == len ? v : extreme(e, v, shuffle(e, lo, hi, last));
}

/* The bytes of one group's masks on the stack (64 * R bits at most), with
 * 64 bytes past them that the last lanes' loads take in. */
static uint64_t mask_bytes(uint32_t len) { return 8ull * len + 64; }

/* A group of f32 rows with a NaN: the group's masks rewritten with one
 * bit a row, at the index the row code finds (ec_reduce_row). */
static void exact_masks(emit_ctx *e, LLVMValueRef off, LLVMValueRef masks) {
  const uint32_t len = (uint32_t)e->k->dims[1], g = group_rows(e);
  LLVMBuildMemSet(e->b, masks, LLVMConstInt(e->i8, 0, false), ec_i64(e, (uint64_t)g * len / 8), 1);
  ec_loop lr;
  LLVMValueRef r = ec_loop_begin(e, &lr, ec_i64(e, 0), ec_i64(e, g), 1);
  LLVMValueRef val, j;
  ec_reduce_row(e, ec_madd(e, off, r, len), len, &val, &j);
  (void)val;
  LLVMValueRef bit = ec_madd(e, j, r, len);
  LLVMValueRef at = LLVMBuildLShr(e->b, bit, ec_i64(e, 3), "");
  LLVMValueRef p = LLVMBuildGEP2(e->b, e->i8, masks, &at, 1, "");
  LLVMValueRef one =
      LLVMBuildShl(e->b, LLVMConstInt(e->i8, 1, false),
                   LLVMBuildTrunc(e->b, LLVMBuildAnd(e->b, bit, ec_i64(e, 7), ""), e->i8, ""), "");
  LLVMBuildStore(e->b, LLVMBuildOr(e->b, LLVMBuildLoad2(e->b, e->i8, p, ""), one, ""), p);
  ec_loop_end(e, &lr);
}

/* The permutes of a merge of two vectors whose rows each hold a run of
 * lw lanes (lw / 2 for the result): lo takes the lower half of each run,
 * hi the upper, of both vectors. Where a run is 16 bytes (one row a
 * 128-bit lane) they are the unpacks of the lanes' low and high 8 bytes
 * (PUNPCKLQDQ, PUNPCKHQDQ), where 8 bytes (two rows a 128-bit lane) the
 * picks of the lanes' even and odd 4 bytes (SHUFPS): in-lane shuffles,
 * four a cycle on a Zen 5 where the permutes across the vector run two
 * (u8 [*,21] 0.91-0.93 of the time in the L2, 0.94-1.0 in the L3). The
 * rows come out in another order; group_masks follows them. */
static void merge_masks(const emit_ctx *e, uint32_t lw, uint32_t *lo, uint32_t *hi) {
  const uint32_t lanes = group_rows(e), size = 64 / lanes, per128 = 16 / size;
  const uint32_t h = lw / 2, rows_in = lanes / lw;
  for (uint32_t q = 0; q < lanes; q++) {
    const uint32_t lane = q / per128 * per128, p = q % per128;
    if (lw * size == 16) {
      const uint32_t half = per128 / 2;
      lo[q] = p < half ? lane + p : lanes + lane + p - half;
      hi[q] = lo[q] + half;
    } else if (lw * size == 8) {
      const uint32_t dw = 4 / size, d = p / dw, b = p % dw;
      lo[q] = d < 2 ? lane + 2 * d * dw + b : lanes + lane + 2 * (d - 2) * dw + b;
      hi[q] = lo[q] + dw;
    } else {
      const uint32_t rr = q / h, j = q % h;
      lo[q] = (rr < rows_in ? 0 : lanes) + (rr % rows_in) * lw + j;
      hi[q] = lo[q] + h;
    }
  }
}

/* Passes 1 and 2 of the group of rows from row `row`: its masks stored
 * at masks. */
static void group_masks(emit_ctx *e, LLVMValueRef row, LLVMValueRef masks) {
  const dmlc_kdesc *k = e->k;
  const uint32_t len = (uint32_t)k->dims[1], w = lane_width(len), lanes = group_rows(e);
  LLVMValueRef off = ec_mul(e, row, len);
  if (e->from_dram && e->prefetch_bytes)
    ec_prefetch_span(e, off, 64ull * len, BYTES_AHEAD);
  else
    ec_prefetch_stream(e, off, 64ull * len);
  /* 1: the extremes, one a lane of v[0] (row where_is[r] for row r) */
  LLVMValueRef v[BYTES_MAX_LANE];
  uint8_t rows[BYTES_MAX_LANE][64]; /* the row of each lane of each vector */
  uint32_t nv = w;
  for (uint32_t i = 0; i < nv; i++) {
    v[i] = lanes_of_rows(e, off, len, w, i * (lanes / w));
    for (uint32_t q = 0; q < lanes; q++)
      rows[i][q] = (uint8_t)(i * (lanes / w) + q / w);
  }
  for (uint32_t lw = w; lw > 1; lw /= 2, nv /= 2) {
    uint32_t lo[64], hi[64];
    merge_masks(e, lw, lo, hi);
    for (uint32_t m = 0; m < nv / 2; m++) {
      v[m] = extreme(e, shuffle(e, v[2 * m], v[2 * m + 1], lo),
                     shuffle(e, v[2 * m], v[2 * m + 1], hi));
      uint8_t merged[64];
      for (uint32_t q = 0; q < lanes; q++)
        merged[q] = lo[q] < lanes ? rows[2 * m][lo[q]] : rows[2 * m + 1][lo[q] - lanes];
      memcpy(rows[m], merged, lanes);
    }
  }
  uint32_t where_is[64];
  for (uint32_t q = 0; q < lanes; q++)
    where_is[rows[0][q]] = q;
  /* 2: the R masks of elements equal to their row's extreme (f32: an
   * ordered equal, -0 equal to +0 as the order has them); f32 also notes
   * a NaN anywhere in the group */
  LLVMTypeRef mt = LLVMIntTypeInContext(e->c, lanes);
  LLVMValueRef nan = NULL;
  for (uint32_t c = 0; c < len; c++) {
    uint32_t spread[64];
    for (uint32_t j = 0; j < lanes; j++)
      spread[j] = where_is[(lanes * c + j) / len];
    LLVMValueRef x = load_vector(e, off, (uint64_t)lanes * c);
    LLVMValueRef at = shuffle(e, v[0], NULL, spread);
    LLVMValueRef eq = is_f32(e) ? LLVMBuildFCmp(e->b, LLVMRealOEQ, x, at, "")
                                : LLVMBuildICmp(e->b, LLVMIntEQ, x, at, "");
    if (is_f32(e)) {
      LLVMValueRef uno = LLVMBuildFCmp(e->b, LLVMRealUNO, x, x, "");
      nan = nan ? LLVMBuildOr(e->b, nan, uno, "") : uno;
    }
    LLVMValueRef i = ec_i64(e, c);
    LLVMBuildStore(e->b, LLVMBuildBitCast(e->b, eq, mt, ""),
                   LLVMBuildGEP2(e->b, mt, masks, &i, 1, ""));
  }
  if (nan) {
    ec_if f;
    ec_if_begin(e, &f, ec_any_lane(e, nan));
    exact_masks(e, off, masks);
    ec_if_else(e, &f);
    ec_if_end(e, &f);
  }
}

/* The indices of the group of rows from row `row` from its masks,
 * stored. */
static void group_indices(emit_ctx *e, LLVMValueRef row, LLVMValueRef masks, bool nt) {
  const dmlc_kdesc *k = e->k;
  const uint32_t len = (uint32_t)k->dims[1];
  /* each row's bits into a lane of 32 bits, 16 rows a vector */
  LLVMTypeRef vt = LLVMVectorType(e->i32, 16), bt = LLVMVectorType(e->i8, 64);
  for (uint32_t g = 0; g < group_rows(e) / 16; g++) {
    const uint32_t base = g * 16 * len / 8;
    uint32_t pick[64];
    LLVMValueRef shift[16];
    for (uint32_t i = 0; i < 16; i++) {
      const uint32_t o = (g * 16 + i) * len;
      for (uint32_t b = 0; b < 4; b++)
        pick[i * 4 + b] = o / 8 - base + b;
      shift[i] = ec_i32(e, o % 8);
    }
    LLVMValueRef at = ec_i64(e, base);
    LLVMValueRef src = LLVMBuildLoad2(e->b, bt, LLVMBuildGEP2(e->b, e->i8, masks, &at, 1, ""), "");
    LLVMSetAlignment(src, 1);
    LLVMValueRef x = LLVMBuildBitCast(e->b, shuffle(e, src, NULL, pick), vt, "");
    x = LLVMBuildLShr(e->b, x, LLVMConstVector(shift, 16), "");
    /* the first set bit (at most 31 - 7: a row has one), or the last of
     * the row's len */
    LLVMValueRef args[2] = {x, LLVMConstInt(e->i1, 1, false)};
    LLVMValueRef idx;
    if (k->direction == DMLC_DIRECTION_INCREASING) {
      idx = ec_intrinsic(e, "llvm.cttz", &vt, 1, args, 2);
    } else {
      args[0] = LLVMBuildAnd(e->b, x, ec_splat(e, ec_i32(e, (1u << len) - 1), 16), "");
      idx = LLVMBuildSub(e->b, ec_splat(e, ec_i32(e, 31), 16),
                         ec_intrinsic(e, "llvm.ctlz", &vt, 1, args, 2), "");
    }
    ec_store_row_indices(e, ec_add(e, row, ec_i64(e, (uint64_t)g * 16)), idx, 16, nt);
  }
}

/* Group i's masks: buffer i % (BYTES_LAG + 1). */
static LLVMValueRef masks_of(emit_ctx *e, LLVMValueRef masks, LLVMValueRef i) {
  LLVMValueRef at = LLVMBuildMul(e->b, LLVMBuildURem(e->b, i, ec_i64(e, BYTES_LAG + 1), ""),
                                 ec_i64(e, mask_bytes((uint32_t)e->k->dims[1])), "");
  return LLVMBuildGEP2(e->b, e->i8, masks, &at, 1, "");
}

/* Groups [g0, g1), each group's indices taken BYTES_LAG groups after its
 * masks, from its own buffer. A group's loads of its stored masks
 * straddle several stores and wait until those reach the cache; taken
 * right after them, they held each group behind the one before it. One
 * thread in the L2, taken at once over BYTES_LAG later as time: u8
 * [*,10] 1.26-1.6, [*,12] 1.2-1.3, [*,21] 1.06; two threads in the L3
 * (4 MB) u8 [*,5] 1.3-1.6, [*,21] 1.03-1.08. A lag of 1 left u8 [*,10]
 * 1.15 slower, 2 about as fast as 3. */
static void bytes_group_loop(emit_ctx *e, LLVMValueRef g0, LLVMValueRef g1, bool nt, void *arg) {
  LLVMValueRef masks = arg;
  ec_loop lg;
  LLVMValueRef gi = ec_loop_begin(e, &lg, g0, g1, 1);
  group_masks(e, ec_mul(e, gi, group_rows(e)), masks_of(e, masks, gi));
  ec_if f;
  ec_if_begin(e, &f, LLVMBuildICmp(e->b, LLVMIntUGE, gi, ec_add(e, g0, ec_i64(e, BYTES_LAG)), ""));
  LLVMValueRef prev = LLVMBuildSub(e->b, gi, ec_i64(e, BYTES_LAG), "");
  group_indices(e, ec_mul(e, prev, group_rows(e)), masks_of(e, masks, prev), nt);
  ec_if_else(e, &f);
  ec_if_end(e, &f);
  ec_loop_end(e, &lg);
  /* the last BYTES_LAG groups' indices (fewer when the task has fewer) */
  LLVMValueRef from = LLVMBuildSub(e->b, g1, ec_i64(e, BYTES_LAG), "");
  from = LLVMBuildSelect(e->b, LLVMBuildICmp(e->b, LLVMIntSLT, from, g0, ""), g0, from, "");
  ec_loop ll;
  LLVMValueRef li = ec_loop_begin(e, &ll, from, g1, 1);
  group_indices(e, ec_mul(e, li, group_rows(e)), masks_of(e, masks, li), nt);
  ec_loop_end(e, &ll);
}

dmlc_status ec_emit_byte_rows(emit_ctx *e, const char *name, dmlc_cpu_kernel_info *info) {
  const dmlc_kdesc *k = e->k;
  const uint32_t len = (uint32_t)k->dims[1];
  const uint32_t g = group_rows(e);
  const uint64_t rows = k->dims[0];
  const uint64_t rows_per_task = (uint64_t)g * BYTES_GROUPS_PER_TASK;
  const uint64_t tasks = (rows + rows_per_task - 1) / rows_per_task;

  LLVMValueRef begin, end;
  ec_function_begin(e, name, true, &begin, &end);
  /* BYTES_LAG + 1 groups' masks (mask_bytes), zeroed once: the bytes
   * past a group's masks are loaded, never picked */
  LLVMValueRef masks = ec_array(e, e->i8, (BYTES_LAG + 1) * mask_bytes(len), 64);
  LLVMBuildMemSet(e->entry_b, masks, LLVMConstInt(e->i8, 0, false),
                  ec_i64(e, (BYTES_LAG + 1) * mask_bytes(len)), 64);
  ec_group_tasks(e, begin, end, BYTES_GROUPS_PER_TASK, g, ec_index_nt_aligned(e, 16),
                 bytes_group_loop, masks);
  ec_function_end(e);

  uint64_t out_bytes = 0;
  for (uint32_t i = 0; i < k->num_outputs; i++)
    out_bytes += dmlc_dtype_size(k->outputs[i].dtype);
  info->num_tasks = tasks;
  info->bytes_per_task = rows_per_task * (len * dmlc_dtype_size(k->read_dtype) + out_bytes);
  return DMLC_OK;
}
