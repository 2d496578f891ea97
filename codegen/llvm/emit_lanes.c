/* Short packed rows in 16-byte lanes: space [K, R] of u8 or i8 (R from 8
 * to 32), i16 or u16 (8 to 16) or f16 (8), rows packed one after another,
 * index outputs only, on x86 with 32-byte vectors or wider
 * (dmlc_llvm_target.lane_rows; AVX2, and AVX-512: on CPUs with VBMI,
 * whose permutes take 8-bit rows of 9-25 and 16-bit ones of 9-16 from the
 * caches (emit_bytes.c), 8-bit rows of 16-25 only from DRAM, 26-32, and
 * 16-bit rows of 8). The channel argmax of NHWC images with tens of
 * classes (u8 [*,21]).
 *
 * A group of 32 rows is one pass over its 32 * R bytes, no compare and
 * blend:
 *
 * 1. Each row in a 16-byte lane, row i and row i + 16 in the two lanes of
 *    a 32-byte vector: its first 16 bytes and its last 16 (the windows
 *    overlap, which an extreme does not mind), two loads a lane; rows
 *    under 16 two a lane, their first 8 bytes and their last 8. Each
 *    byte goes into a 16-bit key beside its position (one unpack of the
 *    loaded vector with the lane's constant positions: the value in the
 *    high byte, so the keys' order is the values' order, ties broken by
 *    the position byte, stored reversed where the first of equals must
 *    win: 255 - j), and a row's half-lanes of keys merged by one integer
 *    max or min each (VPMAXUW; VPMAXSW for i8): 8 keys a row.
 * 2. The 16 vectors merged pairwise within their 128-bit lanes (the
 *    unpacks of 16-, 32- and 64-bit elements, and a max or min), 8 into 4
 *    into 2: each key of the last two vectors one row's extreme, in row
 *    order half by half. The position bytes are the indices.
 *
 * 16-bit rows go the same way with 32-bit keys (the value above a 16-bit
 * position; f16 as ec_f16_key's keys, whose signed order is the argmax
 * order with NaNs tied above or below everything): each row in a lane as
 * windows of 8 elements, as many as cover it, the last ending where the
 * row does, 4 keys a row merged 4 into 2 into 1 vectors' worth.
 *
 * Every shuffle stays within a 128-bit lane. The row groups these rows
 * took before (emit_row.c) unpack all 32 bytes of a row's vector and
 * merge the rows' 16-key vectors across lanes: about 5 shuffles a row
 * against 3 here (a Zen 5 runs two a cycle). Rows after the last whole
 * group go one at a time (ec_group_tasks).
 *
 * Alternated in one process on a Zen 5, old time over new (above 1:
 * faster now). AVX2 (the row groups or short rows before): two threads
 * from DRAM (88 MB) u8 [*,8] 1.52-1.66, [*,9] 1.21-1.27, [*,12] 1.23,
 * [*,15] 1.30-1.36, [*,16] 1.04-1.21, [*,17] 1.23-1.47, [*,21]
 * 1.13-1.42, [*,24] 1.05-1.45, [*,28] 1.09-1.37, [*,32] 1.22-1.30, i8
 * argmin [*,21] 1.12; in the L3 (4 MB) u8 [*,8] 1.68-1.80, [*,9..15]
 * 1.25-1.32, [*,16] 1.48-1.56, [*,21] 1.36-1.38, [*,28] 1.25-1.31, [*,32]
 * 1.11; one thread in the L2 u8 [*,8] 1.86, [*,9..15] 1.34-1.41, i8
 * [*,16] 1.70, [*,21] 1.52, [*,28] 1.46, [*,32] 1.31. AVX-512 without
 * VBMI (the row groups narrowed to 32 bytes): from DRAM u8 [*,8] 2.4-2.8,
 * [*,12] 1.50-1.61, [*,16..32] 1.23-1.58; in the L3 [*,8] 3.4-3.6,
 * [*,12] 1.48-1.53, [*,16..32] 1.09-1.77. With VBMI, rows of 26-32
 * (outside the permutes' span): from DRAM 1.32-1.41, in the L3
 * 1.15-1.43; against the permutes (their time over this path's) from
 * DRAM u8 [*,16] 1.07-1.15, [*,21] 1.10-1.15, [*,24] 1.08-1.15, [*,25]
 * 1.44, but in the caches u8 [*,16] 0.94-0.98, [*,21] 0.95-0.99 (L3) and
 * i8 [*,16..25] 0.72-0.91 (L2, one thread), and from DRAM u8 [*,9]
 * 0.68-0.74, [*,12] 0.68-0.80, [*,15] 0.90: there the permutes keep them
 * (and u8 [*,8], 0.79-0.85 of the short rows' time in the L3). On
 * 16-byte vectors (SSE4.2: a group of 16 rows, one a vector, twice the
 * merges a row) u8 [*,21] took 1.2 times the row groups' time: not
 * taken.
 *
 * 16-bit rows, the same way: AVX2 from DRAM (44 MB, two threads) u16
 * [*,8] 1.17-1.19, [*,12] 1.39-1.44, i16 [*,16] 1.28, f16 [*,8]
 * 0.99-1.12; in the L3 (2 MB) u16 [*,8] 1.26-1.36, [*,9] 1.41-1.45,
 * [*,12] 1.14-1.18, i16 [*,12] 1.16-1.20, [*,16] 1.0-1.06, f16 [*,8]
 * 1.25-1.31; one thread in the L2 u16 [*,8..9] 1.47-1.52, i16 [*,12..16]
 * 1.16-1.25, f16 [*,8] 1.32-1.37, but f16 [*,10..32] 0.78-1.02 and u16
 * [*,17] 0.88-0.96, [*,32] 0.93 (not taken; u16 [*,24], whose three
 * windows do not overlap, 1.28-1.59). AVX-512 without VBMI u16
 * [*,12] from DRAM 1.32-1.41, in the L3 1.57-1.68; with VBMI u16 [*,8]
 * 1.08-1.28 and 1.11-1.15; f16 [*,8] on 64-byte vectors lost in the L3
 * (0.72-0.75: not taken).
 *
 * From DRAM a group prefetches its lines LANES_AHEAD ahead: against 8
 * KiB, 2 KiB took 1.09-1.18 of the time, 4 KiB 1.07-1.09, 16 KiB
 * 1.05-1.12; none took 1.46 of 2 KiB's for [*,32]. */
#include "codegen/llvm/emit_internal.h"

enum {
  LANES_MIN_LEN = 8,
  LANES_WIDE_LEN = 16, /* rows from here on take 16-byte windows, shorter ones 8-byte */
  LANES_MAX_LEN = 32,
  LANES_MIN_LEN16 = 8, /* 16-bit rows: windows of 8 elements */
  LANES_MAX_LEN16 = 16,
  LANES_ROWS = 32, /* rows a group: one per byte of a 32-byte vector */
  LANES_GROUPS_PER_TASK = 64,
  LANES_AHEAD = 8192 /* how far ahead a group from DRAM prefetches its lines */
};

bool ec_lane_rows_matches(const emit_ctx *e) {
  const dmlc_kdesc *k = e->k;
  const uint32_t size = dmlc_dtype_size(k->read_dtype);
  if (!e->lane_rows || e->vector_bytes < 32 || !k->has_reduction || e->read_scale != 1 ||
      !ec_packed_index_rows(e) || size > 2)
    return false;
  const dmlc_kind kind = dmlc_dtype_get(k->read_dtype)->kind;
  if (kind != DMLC_KIND_SIGNED && kind != DMLC_KIND_UNSIGNED && k->read_dtype != DMLC_DTYPE_F16)
    return false;
  if (size == 2) {
    /* i16 and u16 rows of 8-16, f16 rows of 8 on 32-byte vectors (the
     * keys' work lost to the widened f32 rows from 10 on, and to the
     * 64-byte short rows in the caches); with VBMI the permutes take 9-16 */
    const bool f16 = k->read_dtype == DMLC_DTYPE_F16;
    if (f16 && e->vector_bytes != 32)
      return false;
    const uint64_t hi = f16 || e->byte_permutes ? LANES_MIN_LEN16 : LANES_MAX_LEN16;
    return k->dims[1] >= LANES_MIN_LEN16 && k->dims[1] <= hi && k->dims[0] >= LANES_ROWS;
  }
  /* with VBMI's permutes, rows of 16 or more (shorter ones lost to them
   * from DRAM too, and u8 [*,8] to the short rows in the caches), and of
   * those the permutes take only from DRAM (they won in the caches) */
  const uint64_t lo = e->byte_permutes ? LANES_WIDE_LEN : LANES_MIN_LEN;
  return k->dims[1] >= lo && k->dims[1] <= LANES_MAX_LEN && k->dims[0] >= LANES_ROWS &&
         (e->from_dram || !ec_byte_rows_matches(e));
}

/* Whether the position byte is stored reversed (255 - j): where the
 * extreme's ties must go to the first position, a larger key (argmax) or
 * a smaller one (argmin) being the winner. */
static bool reversed_positions(const emit_ctx *e) {
  return (e->k->reduction == DMLC_OP_ARGMAX) == (e->k->direction == DMLC_DIRECTION_INCREASING);
}

/* The x86 unpack of a and b (n elements each, 128-bit lanes of per128):
 * the low (hi false) or high half of each lane's runs of w elements,
 * a's and b's alternating. */
static LLVMValueRef unpack(emit_ctx *e, LLVMValueRef a, LLVMValueRef b, uint32_t per128, uint32_t w,
                           bool hi) {
  const uint32_t n = LLVMGetVectorSize(LLVMTypeOf(a)), runs = per128 / w / 2;
  uint32_t idx[32], q = 0;
  for (uint32_t lane = 0; lane < n; lane += per128)
    for (uint32_t r = 0; r < runs; r++) {
      const uint32_t at = lane + (hi ? runs + r : r) * w;
      for (uint32_t j = 0; j < w; j++)
        idx[q++] = at + j;
      for (uint32_t j = 0; j < w; j++)
        idx[q++] = n + at + j;
    }
  return ec_shuffle(e, a, b, idx, n);
}

/* The keys' extreme: the argmax's or argmin's integer max or min, on
 * keys whose high half is the value. */
static LLVMValueRef extreme(emit_ctx *e, LLVMValueRef a, LLVMValueRef b) {
  if (e->k->read_dtype == DMLC_DTYPE_F16) /* ec_f16_key's keys are signed */
    return ec_minmax(e, e->k->reduction == DMLC_OP_ARGMAX ? "smax" : "smin", a, b);
  return ec_minmax(e, ec_int_op(e), a, b);
}

/* n elements of the read from element off + at (f16 as ec_f16_key's
 * keys). */
static LLVMValueRef load_elems(emit_ctx *e, LLVMValueRef off, uint64_t at, uint32_t n) {
  LLVMValueRef i = ec_add(e, off, ec_i64(e, at));
  if (e->k->read_dtype == DMLC_DTYPE_F16)
    return ec_load_read_key(e, i, n);
  return ec_load(e, e->k->read_dtype, e->read, i, n);
}

/* a and b (n elements each) one after the other. */
static LLVMValueRef concat(emit_ctx *e, LLVMValueRef a, LLVMValueRef b) {
  const uint32_t n = LLVMGetVectorSize(LLVMTypeOf(a));
  uint32_t idx[32];
  for (uint32_t j = 0; j < 2 * n; j++)
    idx[j] = j;
  return ec_shuffle(e, a, b, idx, 2 * n);
}

/* The keys (value above position, twice the elements' width) of the 32
 * bytes x, whose runs of w elements each start at position `first` of a
 * row: *lo those of the low half of each 128-bit lane, *hi of the high
 * half (x86's unpacks of x with the positions). */
static void window_keys(emit_ctx *e, LLVMValueRef x, uint32_t w, uint32_t first, LLVMValueRef *lo,
                        LLVMValueRef *hi) {
  LLVMTypeRef et = LLVMGetElementType(LLVMTypeOf(x));
  const uint32_t n = LLVMGetVectorSize(LLVMTypeOf(x)), bits = LLVMGetIntTypeWidth(et);
  const uint64_t top = (1ull << bits) - 1;
  const bool rev = reversed_positions(e);
  LLVMValueRef pos[32];
  for (uint32_t i = 0; i < n; i++) {
    const uint32_t j = first + i % w;
    pos[i] = LLVMConstInt(et, rev ? top - j : j, false);
  }
  LLVMValueRef p = LLVMConstVector(pos, n);
  LLVMTypeRef kt = LLVMVectorType(LLVMIntTypeInContext(e->c, 2 * bits), n / 2);
  *lo = LLVMBuildBitCast(e->b, unpack(e, p, x, n / 2, 1, false), kt, "");
  *hi = LLVMBuildBitCast(e->b, unpack(e, p, x, n / 2, 1, true), kt, "");
}

/* Stage 1 of the group at off (rows of len): v[i] holds 8 keys of row i
 * in lane 0 and of row i + 16 in lane 1, the extremes of the row's keys
 * (by position: two lanes' worth of 16-byte windows, or one of 8-byte). */
static void row_keys(emit_ctx *e, LLVMValueRef off, uint32_t len, LLVMValueRef v[16]) {
  const uint32_t w = len >= LANES_WIDE_LEN ? 16 : 8, sides = len == w ? 1 : 2;
  for (uint32_t i = 0; i < 16; i += w == 16 ? 1 : 2) {
    LLVMValueRef lo[2], hi[2];
    for (uint32_t side = 0; side < sides; side++) {
      const uint64_t at = side ? len - w : 0;
      LLVMValueRef x;
      if (w == 16) {
        /* row i's window in lane 0, row i + 16's in lane 1 */
        x = concat(e, load_elems(e, off, (uint64_t)i * len + at, 16),
                   load_elems(e, off, (uint64_t)(i + 16) * len + at, 16));
      } else {
        /* rows i and i + 1 in lane 0, i + 16 and i + 17 in lane 1 */
        LLVMValueRef q[4];
        static const uint32_t rows[4] = {0, 1, 16, 17};
        for (uint32_t r = 0; r < 4; r++)
          q[r] = load_elems(e, off, (uint64_t)(i + rows[r]) * len + at, 8);
        x = concat(e, concat(e, q[0], q[1]), concat(e, q[2], q[3]));
      }
      window_keys(e, x, w, (uint32_t)at, &lo[side], &hi[side]);
    }
    if (w == 16) {
      v[i] = extreme(e, lo[0], hi[0]);
      if (sides == 2)
        v[i] = extreme(e, v[i], extreme(e, lo[1], hi[1]));
    } else {
      v[i] = sides == 1 ? lo[0] : extreme(e, lo[0], lo[1]);
      v[i + 1] = sides == 1 ? hi[0] : extreme(e, hi[0], hi[1]);
    }
  }
}

/* Stage 1 of a group of 16-bit rows at off: v[i] holds 4 32-bit keys
 * (value above position) of row i in lane 0 and of row i + 16 in lane 1,
 * the extremes of the row's windows of 8 elements (as many as cover the
 * row, the last ending where it does). */
static void row_keys16(emit_ctx *e, LLVMValueRef off, uint32_t len, LLVMValueRef v[16]) {
  const uint32_t windows = (len + 7) / 8;
  for (uint32_t i = 0; i < 16; i++) {
    v[i] = NULL;
    for (uint32_t w = 0; w < windows; w++) {
      const uint32_t at = w + 1 < windows ? 8 * w : len - 8;
      LLVMValueRef lo, hi;
      window_keys(e,
                  concat(e, load_elems(e, off, (uint64_t)i * len + at, 8),
                         load_elems(e, off, (uint64_t)(i + 16) * len + at, 8)),
                  8, at, &lo, &hi);
      LLVMValueRef k = extreme(e, lo, hi);
      v[i] = v[i] ? extreme(e, v[i], k) : k;
    }
  }
}

/* Stage 2: the 16 vectors of stage 1, `keys` keys a row in each 128-bit
 * lane of per128 keys, merged pairwise within their lanes (the unpacks of
 * runs of 1, 2, ... keys) until one key a row is left, in v[0] to
 * v[16 / keys - 1]. */
static void merge_in_lanes(emit_ctx *e, LLVMValueRef v[16], uint32_t per128, uint32_t keys) {
  uint32_t nv = 16;
  for (uint32_t width = 1; width < keys; width *= 2, nv /= 2)
    for (uint32_t m = 0; m < nv / 2; m++)
      v[m] = extreme(e, unpack(e, v[2 * m], v[2 * m + 1], per128, width, false),
                     unpack(e, v[2 * m], v[2 * m + 1], per128, width, true));
}

/* The positions in keys (each the low half of its lane, complemented
 * where reversed_positions), in keys' lane type. */
static LLVMValueRef key_positions(emit_ctx *e, LLVMValueRef keys) {
  LLVMTypeRef kt = LLVMGetElementType(LLVMTypeOf(keys));
  LLVMValueRef low = ec_splat(e, LLVMConstInt(kt, (1ull << LLVMGetIntTypeWidth(kt) / 2) - 1, false),
                              LLVMGetVectorSize(LLVMTypeOf(keys)));
  keys = LLVMBuildAnd(e->b, keys, low, "lane_keys");
  return reversed_positions(e) ? LLVMBuildXor(e->b, keys, low, "") : keys;
}

/* The indices of a group of 16-bit rows from their stage 1 (row_keys16),
 * as 32 i32 lanes. */
static LLVMValueRef indices16(emit_ctx *e, LLVMValueRef v[16]) {
  merge_in_lanes(e, v, 4, 4);
  /* v[m] holds rows 4m to 4m + 3 in lane 0, 16 + 4m to 16 + 4m + 3 in
   * lane 1: row r's key to lane r */
  uint32_t order[LANES_ROWS];
  for (uint32_t r = 0; r < LANES_ROWS; r++) {
    const uint32_t m = r % 16 / 4;
    order[r] = m * 8 + r / 16 * 4 + r % 4;
  }
  return key_positions(
      e, ec_shuffle(e, concat(e, v[0], v[1]), concat(e, v[2], v[3]), order, LANES_ROWS));
}

/* The indices of a group of 8-bit rows from their stage 1 (row_keys), as
 * 32 i32 lanes. */
static LLVMValueRef indices8(emit_ctx *e, LLVMValueRef v[16]) {
  merge_in_lanes(e, v, 8, 8);
  /* v[0] holds rows 0-7 in lane 0 and 16-23 in lane 1, v[1] rows 8-15 and
   * 24-31: row r's key to lane r */
  uint32_t order[LANES_ROWS];
  for (uint32_t r = 0; r < LANES_ROWS; r++)
    order[r] = r / 16 * 8 + (r % 16 < 8 ? 0 : 16) + r % 8;
  LLVMValueRef pos = key_positions(e, ec_shuffle(e, v[0], v[1], order, LANES_ROWS));
  return LLVMBuildZExt(e->b, pos, LLVMVectorType(e->i32, LANES_ROWS), "");
}

/* The group of rows from row `row`: its indices stored. */
static void lane_group(emit_ctx *e, LLVMValueRef row, bool nt) {
  const uint32_t len = (uint32_t)e->k->dims[1];
  LLVMValueRef off = ec_mul(e, row, len);
  const uint64_t bytes = (uint64_t)LANES_ROWS * len * dmlc_dtype_size(e->k->read_dtype);
  if (e->from_dram && e->prefetch_bytes)
    ec_prefetch_span(e, off, bytes, LANES_AHEAD);
  else
    ec_prefetch_stream(e, off, bytes);
  /* 1: row i in lane 0 of v[i], row i + 16 in lane 1 */
  LLVMValueRef v[16];
  LLVMValueRef idx;
  if (dmlc_dtype_size(e->k->read_dtype) == 2) {
    row_keys16(e, off, len, v);
    idx = indices16(e, v);
  } else {
    row_keys(e, off, len, v);
    idx = indices8(e, v);
  }
  ec_store_row_indices(e, row, idx, LANES_ROWS, nt);
}

static void lane_group_loop(emit_ctx *e, LLVMValueRef g0, LLVMValueRef g1, bool nt, void *arg) {
  (void)arg;
  ec_loop lg;
  LLVMValueRef gi = ec_loop_begin(e, &lg, g0, g1, 1);
  lane_group(e, ec_mul(e, gi, LANES_ROWS), nt);
  ec_loop_end(e, &lg);
}

dmlc_status ec_emit_lane_rows(emit_ctx *e, const char *name, dmlc_cpu_kernel_info *info) {
  const dmlc_kdesc *k = e->k;
  const uint32_t len = (uint32_t)k->dims[1];
  const uint64_t rows_per_task = (uint64_t)LANES_ROWS * LANES_GROUPS_PER_TASK;
  LLVMValueRef begin, end;
  ec_function_begin(e, name, true, &begin, &end);
  ec_group_tasks(e, begin, end, LANES_GROUPS_PER_TASK, LANES_ROWS,
                 ec_index_nt_aligned(e, LANES_ROWS), lane_group_loop, NULL);
  ec_function_end(e);

  uint64_t out_bytes = 0;
  for (uint32_t i = 0; i < k->num_outputs; i++)
    out_bytes += dmlc_dtype_size(k->outputs[i].dtype);
  info->num_tasks = (k->dims[0] + rows_per_task - 1) / rows_per_task;
  info->bytes_per_task = rows_per_task * (len * dmlc_dtype_size(k->read_dtype) + out_bytes);
  return DMLC_OK;
}
