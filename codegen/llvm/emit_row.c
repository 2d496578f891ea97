/* Rows: space [R] or [O, R] with the read contiguous along R. A task is one
 * row, or, for long rows, one chunk of a row whose partial (value, index)
 * goes to scratch for the finish function to merge in chunk order.
 *
 * A row is reduced with U independent vector accumulators (value, index of
 * the vector's first element), merged lane-wise and then across lanes by
 * the (value, index) order, so the result is the sequential one; the scalar
 * tail continues sequentially (its indices are all larger). 1- and 2-byte
 * integer rows that fit in L2 take two passes instead (reduce_row_two_pass):
 * the best value, then the first or last position holding it. f32 rows of
 * two blocks or more take the block path (reduce_row_blocks): MAXPS and an
 * add per vector, the best block recorded lane by lane, then the position
 * in that block. f16 rows of two blocks or more take the same shape on
 * their bits (reduce_row_bit_blocks): a signed and an unsigned integer max
 * per vector, no conversion; so do integer rows, one max or min per
 * vector. Two-pass rows are then the shorter f16 and narrow integer rows. */
#include <stdio.h>
#include <string.h>

#include "codegen/llvm/emit_internal.h"

/* An f16's bits as an i16 constant. */
#define KS(v) LLVMConstInt(e->i16, (uint64_t)(v), false)

enum {
  ROW_SPLIT_MIN = 1u << 18,         /* rows longer than this are split into chunks */
  ROW_CHUNK = 1u << 16,             /* elements per chunk (a multiple of every U * lanes) */
  ROW_MAX_UNROLL = 8,               /* accumulators per row */
  PARTIAL_BYTES = 16,               /* value (as compared) at 0, u64 index at 8 */
  TWO_PASS_MAX_BYTES = 1u << 18,    /* two-pass rows: at most this many bytes (fit in L2) */
  TURN_VECS = 8,                    /* f32 block rows: vectors per turn (a NaN check each) */
  BLOCK_VECS = 32,                  /* block rows: vectors per block (row_block_vecs) */
  BLOCK_VECS_L2 = 24,               /* the same, short_row_blocks (row_block_vecs) */
  SHORT_BLOCK_BYTES = 256,          /* short f32 block rows: bytes per block (f32_block_vecs) */
  SHORT_BLOCK_ROW_BYTES = 4096,     /* f32 block rows shorter than this are short */
  ROW_NARROW_F32_BYTES = 1u << 14,  /* f32 rows shorter than this: narrow vectors (ec_emit_row) */
  ROW_AHEAD_MAX_BYTES = 1u << 13,   /* rows from DRAM shorter than this: prefetch_ahead */
  ROW_AHEAD_SHORT_MAX_BYTES = 3584, /* the same without far_row_prefetch */
  ROW_AHEAD_BYTES = 1u << 12,       /* how far ahead prefetch_ahead prefetches */
  GROUP_AHEAD_BYTES = 1u << 11,     /* groups of rows under a line: prefetch (emit_row_groups) */
  ROW_GROUP_AHEAD_BYTES = 1u << 10, /* other row groups: each row's prefetch (group_rows) */
};

bool ec_row_matches(const dmlc_kdesc *k) {
  if (!k->has_reduction || k->read_strides[k->rank - 1] != 1)
    return false;
  if (!((k->rank == 1 && k->reduced_mask == 1u) || (k->rank == 2 && k->reduced_mask == 2u)))
    return false;
  for (uint32_t i = 0; i < k->num_outputs; i++)
    if (k->outputs[i].kind != DMLC_KOUT_INDEX && k->outputs[i].kind != DMLC_KOUT_ONEHOT)
      return false;
  return true;
}

uint32_t ec_row_accumulators(const emit_ctx *e, uint32_t lanes, uint32_t most) {
  const uint32_t cmp_size =
      e->k->read_dtype == DMLC_DTYPE_F16 ? 4 : dmlc_dtype_size(e->k->read_dtype);
  const uint32_t vb = e->vector_bytes;
  const uint32_t regs = (lanes * cmp_size + vb - 1) / vb + (lanes * 4 + vb - 1) / vb;
  const uint32_t u = (vb >= 64 ? 24 : 12) / regs;
  return u < 1 ? 1 : u > most ? most : u;
}

/* Whether the read is compared on its bits as integers: 1- and 2-byte
 * integers (no NaN, the order is the integer one) and f16 (through its
 * signed and unsigned extremes). */
static bool bits_type(const emit_ctx *e) {
  const dmlc_dtype dt = e->k->read_dtype;
  const dmlc_kind kind = dmlc_dtype_get(dt)->kind;
  return dt == DMLC_DTYPE_F16 ||
         ((kind == DMLC_KIND_SIGNED || kind == DMLC_KIND_UNSIGNED) && dmlc_dtype_size(dt) <= 2);
}

/* Whether rows of len elements take the two-pass path: bits_type rows that
 * fit in L2, at least two vectors long. */
static bool two_pass(const emit_ctx *e, uint64_t len) {
  const dmlc_dtype dt = e->k->read_dtype;
  return bits_type(e) && len >= 2ull * ec_vector_lanes(e, dt) &&
         len * dmlc_dtype_size(dt) <= TWO_PASS_MAX_BYTES;
}

const char *ec_int_op(const emit_ctx *e) {
  const bool s = dmlc_dtype_get(e->k->read_dtype)->kind == DMLC_KIND_SIGNED;
  return e->k->reduction == DMLC_OP_ARGMAX ? (s ? "smax" : "umax") : (s ? "smin" : "umin");
}

/* The lanes of x that pass2 looks for, as an integer of `lanes` bits (bit
 * l: lane l): ((x & mask) - lo) <=u span, with mask, lo and span splats. */
static LLVMValueRef hit_mask(emit_ctx *e, LLVMValueRef x, const LLVMValueRef find[3],
                             uint32_t lanes) {
  LLVMValueRef d = LLVMBuildSub(e->b, LLVMBuildAnd(e->b, x, find[0], ""), find[1], "");
  LLVMValueRef in = LLVMBuildICmp(e->b, LLVMIntULE, d, find[2], "");
  return LLVMBuildBitCast(e->b, in, LLVMIntTypeInContext(e->c, lanes), "mask");
}

LLVMValueRef ec_minmax(emit_ctx *e, const char *op, LLVMValueRef a, LLVMValueRef b) {
  char name[32];
  snprintf(name, sizeof name, "llvm.%s", op);
  LLVMTypeRef t = LLVMTypeOf(a);
  LLVMValueRef args[2] = {a, b};
  return ec_intrinsic(e, name, &t, 1, args, 2);
}

/* llvm.vector.reduce.<op> of an integer vector. */
static LLVMValueRef reduce_minmax(emit_ctx *e, const char *op, LLVMValueRef v) {
  char name[48];
  snprintf(name, sizeof name, "llvm.vector.reduce.%s", op);
  LLVMTypeRef t = LLVMTypeOf(v);
  return ec_intrinsic(e, name, &t, 1, &v, 1);
}

/* Index (i64) of the first (last: ctlz) set lane of mask in the vector at
 * row position pos. */
static LLVMValueRef mask_index(emit_ctx *e, LLVMValueRef pos, LLVMValueRef mask, uint32_t lanes,
                               bool last) {
  LLVMTypeRef mt = LLVMIntTypeInContext(e->c, lanes);
  LLVMValueRef args[2] = {mask, LLVMConstInt(e->i1, 0, false)};
  LLVMValueRef n = ec_intrinsic(e, last ? "llvm.ctlz" : "llvm.cttz", &mt, 1, args, 2);
  n = LLVMBuildZExt(e->b, n, e->i64, "");
  if (last)
    n = LLVMBuildSub(e->b, ec_i64(e, lanes - 1), n, "");
  return ec_add(e, pos, n);
}

/* The lanes of the vector at row position pos that a search looks for, as
 * an integer of `lanes` bits (bit l: lane l). */
typedef LLVMValueRef (*row_hits_fn)(emit_ctx *e, LLVMValueRef pos, const void *arg);

/* Searches nvec vectors of `lanes`, from the one at row position from on
 * (backward when last), for one with a hit; at the first, stores the
 * position of its first (last) hit lane in where and branches to done.
 * The builder is left after the search, where none was found. */
static void find_hit(emit_ctx *e, LLVMValueRef from, uint64_t nvec, uint32_t lanes, bool last,
                     row_hits_fn hits, const void *arg, LLVMValueRef where,
                     LLVMBasicBlockRef done) {
  ec_loop l;
  LLVMValueRef q = ec_loop_begin(e, &l, ec_i64(e, 0), ec_i64(e, nvec), 1);
  LLVMValueRef step = ec_mul(e, q, lanes);
  LLVMValueRef pos = last ? LLVMBuildSub(e->b, from, step, "") : ec_add(e, from, step);
  LLVMValueRef mask = hits(e, pos, arg);
  LLVMBasicBlockRef found = LLVMAppendBasicBlockInContext(e->c, e->fn, "found");
  LLVMBasicBlockRef next = LLVMAppendBasicBlockInContext(e->c, e->fn, "next");
  LLVMValueRef hit = LLVMBuildICmp(e->b, LLVMIntNE, mask, LLVMConstNull(LLVMTypeOf(mask)), "");
  LLVMBuildCondBr(e->b, hit, found, next);
  LLVMPositionBuilderAtEnd(e->b, found);
  LLVMBuildStore(e->b, mask_index(e, pos, mask, lanes, last), where);
  LLVMBuildBr(e->b, done);
  LLVMPositionBuilderAtEnd(e->b, next);
  ec_loop_end(e, &l);
}

/* Two-pass and bit block rows: the row's elements as integers (vt), hit
 * where they are what a search looks for (find, hit_mask's). */
typedef struct bits_hits {
  LLVMValueRef off;
  const LLVMValueRef *find;
  LLVMTypeRef vt;
} bits_hits;

static LLVMValueRef bits_at(emit_ctx *e, const bits_hits *b, LLVMValueRef pos) {
  const uint32_t lanes = LLVMGetVectorSize(b->vt);
  return LLVMBuildBitCast(
      e->b, ec_load(e, e->k->read_dtype, e->read, ec_add(e, b->off, pos), lanes), b->vt, "");
}

static LLVMValueRef bits_hit(emit_ctx *e, LLVMValueRef pos, const void *arg) {
  const bits_hits *b = arg;
  return hit_mask(e, bits_at(e, b, pos), b->find, LLVMGetVectorSize(b->vt));
}

/* Whether search_row looks at every vector of a row of len elements:
 * 8-bit rows of up to FLAT_SEARCH_MAX_VECS 32-byte vectors. The early
 * exit's branch follows where the row's best is; for a best anywhere in
 * the row (random bytes) it was mispredicted about once a row. Alternated
 * on a Zen 3 (AVX2, two threads; new over old time), random bytes: u8
 * [16384,80] 0.36, [16384,96] 0.29, i8 [8192,128] 0.26, u8 [8192,160]
 * 0.42, [8192,192] 0.57, [8192,256] 0.52, from DRAM u8 [2097152,80] 0.46,
 * [1048576,128] 0.61; bytes in [-4, 4] (the best in the first vector, the
 * branch predicted): u8 [16384,80] 1.04-1.17, [16384,96] 1.0, i8
 * [8192,128] 1.35, u8 [8192,160] 1.52, [8192,192] 1.35-1.8, [8192,256]
 * 1.6-1.9, from DRAM 0.96-1.0. The slowest case (one flat search reads
 * 19-25 GB/s either way, the early exit 6-13 with its best anywhere)
 * decides. Not with 16-bit rows (from DRAM f16 [524288,160] 1.03 and 1.29
 * with ties; the groups take the shorter ones), nor with 16-byte vectors
 * (random bytes 0.46-0.82, ties 1.23-2.24), nor a first vector with an
 * early exit before a flat rest (u8 [16384,80], random bytes 1.75-1.9: the
 * first vector holds the best too often to predict).
 *
 * On a target of 64-byte vectors, rows from DRAM go 32 bytes a vector
 * (ec_emit_row), and those of up to FLAT_SEARCH_DRAM_MAX_VECS (rows past
 * ec_narrow_rows' span) search flat too. Alternated on a Zen 5 (AVX-512,
 * two threads, 50 MB), random bytes: u8 [*,300] 0.35-0.38, [*,400]
 * 0.54-0.57, [*,512] 0.62-0.65, i8 [*,300] 0.36-0.40 (the early exit read
 * 24-36 GB/s, the flat search 60-67); bytes in [0, 4]: 1.19-1.41 (the
 * early exit 86 GB/s); past 16 vectors the flat search gained less than
 * it lost (u8 [*,1000] 0.91 and 1.65-1.80). In the caches, where those
 * rows keep 64-byte vectors, and for 8-bit rows of 65-127 (32-byte
 * vectors there) it lost either way (u8 [*,100] one thread in the L2 1.37
 * and 1.66). */
enum { FLAT_SEARCH_MAX_VECS = 8, FLAT_SEARCH_DRAM_MAX_VECS = 16 };
static bool flat_search(const emit_ctx *e, uint64_t len) {
  if (dmlc_dtype_size(e->k->read_dtype) != 1)
    return false;
  const uint64_t lanes = ec_vector_lanes(e, e->k->read_dtype);
  if (e->target_vector_bytes == 32)
    return len <= FLAT_SEARCH_MAX_VECS * lanes;
  return e->target_vector_bytes == 64 && e->vector_bytes == 32 && e->from_dram &&
         len <= FLAT_SEARCH_DRAM_MAX_VECS * lanes;
}

/* search_row's flat form: every vector's hits, the first (last) vector
 * with one chosen by selects from the far end; no branch. */
static void search_row_flat(emit_ctx *e, const bits_hits *bh, uint64_t len, bool last,
                            LLVMValueRef where) {
  const uint32_t lanes = LLVMGetVectorSize(bh->vt);
  LLVMValueRef w = NULL;
  for (uint64_t q = (len + lanes - 1) / lanes; q-- > 0;) {
    /* the q-th vector from the start (last: from the end); the one left
     * over overlaps its neighbour */
    const bool whole = q * lanes + lanes <= len;
    const uint64_t at =
        last ? (whole ? len - lanes - q * lanes : 0) : (whole ? q * lanes : len - lanes);
    LLVMValueRef pos = ec_i64(e, at);
    LLVMValueRef mask = hit_mask(e, bits_at(e, bh, pos), bh->find, lanes);
    LLVMValueRef i = mask_index(e, pos, mask, lanes, last);
    w = w ? LLVMBuildSelect(
                e->b, LLVMBuildICmp(e->b, LLVMIntNE, mask, LLVMConstNull(LLVMTypeOf(mask)), ""), i,
                w, "")
          : i;
  }
  LLVMBuildStore(e->b, w, where);
}

/* Searches the whole row (bh's, len elements) for the first (last: from
 * the end) element that bh->find looks for, stores its position in where
 * and branches to done: full vectors, then the one vector left over, which
 * overlaps vectors already searched (without a match). The row holds one. */
static void search_row(emit_ctx *e, const bits_hits *bh, uint64_t len, bool last,
                       LLVMValueRef where, LLVMBasicBlockRef done) {
  const uint32_t lanes = LLVMGetVectorSize(bh->vt);
  if (flat_search(e, len)) {
    search_row_flat(e, bh, len, last, where);
    LLVMBuildBr(e->b, done);
    return;
  }
  find_hit(e, ec_i64(e, last ? len - lanes : 0), len / lanes, lanes, last, bits_hit, bh, where,
           done);
  /* not found in the full vectors (len is not a multiple of lanes) */
  LLVMValueRef rest = ec_i64(e, last ? 0 : len - lanes);
  LLVMValueRef mask = hit_mask(e, bits_at(e, bh, rest), bh->find, lanes);
  LLVMBuildStore(e->b, mask_index(e, rest, mask, lanes, last), where);
  LLVMBuildBr(e->b, done);
}

/* Whether an f16 row holds a NaN, from the signed greatest (a positive NaN
 * is above +inf) and unsigned greatest (a negative NaN is above -inf) of
 * its bits. */
static LLVMValueRef half_nan(emit_ctx *e, LLVMValueRef smax, LLVMValueRef umax) {
  return LLVMBuildOr(e->b, LLVMBuildICmp(e->b, LLVMIntSGT, smax, KS(0x7c00), ""),
                     LLVMBuildICmp(e->b, LLVMIntUGT, umax, KS(0xfc00), ""), "nan");
}

/* What a search of f16 bits looks for (hit_mask's mask, lo, span, as
 * vectors of lanes): any NaN when nan, either zero when best (the bits of
 * the row's best value) is a zero, else best's bits. Returns whether the
 * search looks at magnitudes only (NaN or zero): then the first (last) hit
 * may be anywhere in the row. */
static LLVMValueRef half_find(emit_ctx *e, LLVMValueRef nan, LLVMValueRef best, uint32_t lanes,
                              LLVMValueRef find[3]) {
  LLVMValueRef zero =
      LLVMBuildICmp(e->b, LLVMIntEQ, LLVMBuildAnd(e->b, best, KS(0x7fff), ""), KS(0), "");
  LLVMValueRef mag_only = LLVMBuildOr(e->b, nan, zero, "");
  find[0] = ec_splat(e, LLVMBuildSelect(e->b, mag_only, KS(0x7fff), KS(0xffff), ""), lanes);
  find[1] = ec_splat(
      e, LLVMBuildSelect(e->b, nan, KS(0x7c01), LLVMBuildSelect(e->b, zero, KS(0), best, ""), ""),
      lanes);
  find[2] = ec_splat(e, LLVMBuildSelect(e->b, nan, KS(0x7fff - 0x7c01), KS(0), ""), lanes);
  return mag_only;
}

/* Two passes over a row that stays in L2: the best value by vector max/min
 * (several accumulators, then across lanes), then the first (increasing) or
 * last (decreasing) position holding it, a vector compare per step with an
 * early exit.
 *
 * Integers: equal values are the same integer, so the result is the
 * sequential one. f16: the bits as int16, three of their extremes: the
 * signed greatest (the greatest non-negative value, or a positive NaN), the
 * signed least (the non-negative value nearest 0, or the negative one
 * nearest 0) and the unsigned greatest (the most negative value, or a
 * negative NaN). From these come NaN (either sign) and the best value's
 * bits; pass 2 then looks for the first (last) NaN, or those bits, or
 * either zero when the best value is a zero. Every f16 is 32 lanes of
 * integer work, no conversion to f32. */
static void reduce_row_two_pass(emit_ctx *e, LLVMValueRef off, uint64_t len, LLVMValueRef *val,
                                LLVMValueRef *idx) {
  const dmlc_dtype dt = e->k->read_dtype;
  const bool half = dt == DMLC_DTYPE_F16;
  const uint32_t lanes = ec_vector_lanes(e, dt);
  const bool mx = e->k->reduction == DMLC_OP_ARGMAX;
  /* the extremes kept: f16's three, or the one an integer needs */
  static const char *const half_ops[3] = {"smax", "smin", "umax"};
  const char *const iop = ec_int_op(e);
  const char *const *ops = half ? half_ops : &iop;
  const uint32_t nacc = half ? 3 : 1;
  LLVMTypeRef et = half ? e->i16 : ec_store_type(e, dt), vt = LLVMVectorType(et, lanes);
#define KV(v) ec_splat(e, LLVMConstInt(et, (uint64_t)(v), false), lanes)
  /* the row's elements as integers; what pass 2 looks for, below */
  bits_hits bh = {off, NULL, vt};
  uint32_t unroll = 4;
  while (unroll > 1 && len < (uint64_t)unroll * lanes)
    unroll--;
  const uint64_t step = (uint64_t)unroll * lanes, vend = len / step * step;

  /* pass 1: the extremes */
  LLVMValueRef acc[3][4];
  for (uint32_t u = 0; u < unroll; u++) {
    LLVMValueRef x = bits_at(e, &bh, ec_i64(e, u * lanes));
    for (uint32_t a = 0; a < nacc; a++) {
      acc[a][u] = ec_var(e, vt, "acc");
      LLVMBuildStore(e->b, x, acc[a][u]);
    }
  }
  if (vend > step) {
    ec_loop l;
    LLVMValueRef j = ec_loop_begin(e, &l, ec_i64(e, step), ec_i64(e, vend), step);
    for (uint32_t u = 0; u < unroll; u++) {
      LLVMValueRef x = bits_at(e, &bh, ec_add(e, j, ec_i64(e, u * lanes)));
      for (uint32_t a = 0; a < nacc; a++)
        LLVMBuildStore(e->b, ec_minmax(e, ops[a], LLVMBuildLoad2(e->b, vt, acc[a][u], ""), x),
                       acc[a][u]);
    }
    ec_loop_end(e, &l);
  }
  LLVMValueRef v[3];
  for (uint32_t a = 0; a < nacc; a++) {
    v[a] = LLVMBuildLoad2(e->b, vt, acc[a][0], "");
    for (uint32_t u = 1; u < unroll; u++)
      v[a] = ec_minmax(e, ops[a], v[a], LLVMBuildLoad2(e->b, vt, acc[a][u], ""));
  }
  /* the rest: whole vectors, then one ending at the row's end (max and min
   * do not mind seeing an element twice) */
  for (uint64_t p = vend; p < len; p += lanes) {
    const uint64_t at = p + lanes <= len ? p : len - lanes;
    LLVMValueRef x = bits_at(e, &bh, ec_i64(e, at));
    for (uint32_t a = 0; a < nacc; a++)
      v[a] = ec_minmax(e, ops[a], v[a], x);
  }
  LLVMValueRef m[3];
  for (uint32_t a = 0; a < nacc; a++)
    m[a] = reduce_minmax(e, ops[a], v[a]);
  /* what pass 2 looks for: (mask, lo, span) */
  LLVMValueRef find[3] = {KV(-1), ec_splat(e, m[0], lanes), KV(0)};
  if (half) {
    LLVMValueRef smax = m[0], smin = m[1], umax = m[2];
    /* argmax: the greatest non-negative, else the negative nearest 0;
     * argmin: the most negative, else the non-negative nearest 0 */
    LLVMValueRef best =
        mx ? LLVMBuildSelect(e->b, LLVMBuildICmp(e->b, LLVMIntSGE, smax, KS(0), ""), smax, smin, "")
           : LLVMBuildSelect(e->b, LLVMBuildICmp(e->b, LLVMIntUGE, umax, KS(0x8000), ""), umax,
                             smin, "");
    half_find(e, half_nan(e, smax, umax), best, lanes, find);
  }

  /* pass 2: where it is */
  LLVMValueRef where = ec_var(e, e->i64, "where");
  LLVMBasicBlockRef done = LLVMAppendBasicBlockInContext(e->c, e->fn, "found_done");
  bh.find = find;
  search_row(e, &bh, len, e->k->direction == DMLC_DIRECTION_DECREASING, where, done);
  LLVMPositionBuilderAtEnd(e->b, done);
#undef KV
  *idx = LLVMBuildLoad2(e->b, e->i64, where, "");
  /* an f16's value is the element found's (NaN, or the zero found) */
  *val = half ? ec_load_read_cmp(e, ec_add(e, off, *idx), 1) : m[0];
}

/* Accumulators of a one-pass row of len elements, lanes wide. */
static uint32_t one_pass_unroll(const emit_ctx *e, uint32_t lanes, uint64_t len) {
  uint32_t unroll = ec_row_accumulators(e, lanes, ROW_MAX_UNROLL);
  /* more than 4 chains only for rows of at least 16 iterations: merging
   * them costs more than they save on short rows (a classifier head's
   * 1000) */
  while (unroll > 4 && len < (uint64_t)unroll * lanes * 16)
    unroll--;
  while (unroll > 1 && len < (uint64_t)unroll * lanes)
    unroll--;
  return unroll;
}

/* lanes of the read at off as a one-pass row compares them: f16 as i16
 * keys (ec_f16_key) when keys, else widened to ec_cmp_type. With nan (a
 * fast pass's check, a vector var): f16 keys without the NaN rule, their
 * magnitudes' maximum kept in nan; floats added to the sum in nan (a NaN
 * leaves it NaN). */
static LLVMValueRef row_load(emit_ctx *e, LLVMValueRef off, uint32_t lanes, bool keys,
                             LLVMValueRef nan) {
  if (keys && !nan)
    return ec_load_read_key(e, off, lanes);
  if (keys) {
    LLVMValueRef mag;
    LLVMValueRef k = ec_f16_twos(e, ec_load(e, DMLC_DTYPE_F16, e->read, off, lanes), lanes, &mag);
    LLVMBuildStore(e->b, ec_minmax(e, "smax", LLVMBuildLoad2(e->b, LLVMTypeOf(mag), nan, ""), mag),
                   nan);
    return k;
  }
  LLVMValueRef x = ec_load_read_cmp(e, off, lanes);
  if (nan) {
    LLVMTypeRef t = LLVMTypeOf(x);
    LLVMBuildStore(e->b, LLVMBuildFAdd(e->b, LLVMBuildLoad2(e->b, t, nan, ""), x, ""), nan);
  }
  return x;
}

/* Whether a fast pass's nan (row_load) saw a NaN. */
static LLVMValueRef saw_nan(emit_ctx *e, LLVMValueRef nan, bool keys) {
  LLVMTypeRef t = LLVMGetAllocatedType(nan);
  LLVMValueRef v = LLVMBuildLoad2(e->b, t, nan, "");
  if (keys)
    return LLVMBuildICmp(e->b, LLVMIntSGT, reduce_minmax(e, "smax", v), KS(0x7C00), "");
  return ec_any_lane(e, LLVMBuildFCmp(e->b, LLVMRealUNO, v, v, ""));
}

/* The positions' type of row_lanes beside compares of type ct (ec_cmp_type,
 * or i16 keys): the compare's width where it is 8 or
 * 16 bits and holds every position of a row of len (unsigned: ec_take_merge
 * compares positions so), i32 otherwise. The position vectors follow the
 * compare's mask lane for lane: with i32 positions a 16-bit compare's mask
 * was widened and two blends (four for 8-bit) kept the positions of each
 * vector of values. Alternated on a Zen 3 (AVX2, one thread; row groups,
 * new over old time): f16 [8192,80] 0.43, i16 [8192,40] 0.53, u16
 * [4096,160] 0.44, f16 [524288,80] from DRAM 0.69-0.81 (two threads),
 * u8 [16384,40] 0.33, i8 [16384,48] 0.32; SSE4.2 f16 [8192,80] 0.75, i16
 * [8192,40] 0.61. */
static LLVMTypeRef row_index_type(emit_ctx *e, LLVMTypeRef ct, uint64_t len) {
  if (LLVMGetTypeKind(ct) != LLVMIntegerTypeKind)
    return e->i32;
  const unsigned w = LLVMGetIntTypeWidth(ct);
  return (w == 8 || w == 16) && len <= (1ull << w) ? ct : e->i32;
}

/* row_lanes' chains: unroll accumulators of (value, position), with a
 * fast pass's NaN check each (nans, else NULLs). */
typedef struct lanes_acc {
  LLVMValueRef acc[ROW_MAX_UNROLL], idx[ROW_MAX_UNROLL], nans[ROW_MAX_UNROLL];
  LLVMTypeRef vt, it;
  uint32_t unroll, lanes;
  bool keys, ordered;
} lanes_acc;

/* One step of row_lanes: the unroll vectors from element j (i64) of the
 * row at off into the chains; jv holds the step's first position. */
static void lanes_step(emit_ctx *e, const lanes_acc *a, LLVMValueRef off, LLVMValueRef j,
                       LLVMValueRef jv) {
  for (uint32_t u = 0; u < a->unroll; u++) {
    LLVMValueRef pos = ec_add(e, j, ec_i64(e, u * a->lanes));
    LLVMValueRef x = row_load(e, ec_add(e, off, pos), a->lanes, a->keys, a->nans[u]);
    LLVMValueRef v = LLVMBuildLoad2(e->b, a->vt, a->acc[u], "");
    LLVMValueRef take = a->ordered ? ec_take_ordered(e, x, v) : ec_take_next(e, x, v);
    LLVMBuildStore(e->b, LLVMBuildSelect(e->b, take, x, v, ""), a->acc[u]);
    LLVMValueRef vi = LLVMBuildLoad2(e->b, a->it, a->idx[u], "");
    LLVMBuildStore(e->b, LLVMBuildSelect(e->b, take, jv, vi, ""), a->idx[u]);
  }
}

/* The vector part of a one-pass row at least lanes long: each lane's best
 * (value, position) over the row, in one vector of each (positions as
 * row_index_type; the row's result is their merge across lanes). A step
 * of the whole row wraps in narrow positions, but is never read then.
 * With nan (a fast pass, row_load), each accumulator keeps its own
 * check, added into nan at the row's end: one chain of FADDs (latency 3)
 * through every vector bounded f32 row groups, and floats merge by
 * ordered compares (ec_merge_pair; the group's merges too,
 * emit_row_groups). New over old time, one thread of a Zen 3 (AVX2), in
 * the caches: f32 [8192,33] 0.81, [4096,80] 0.83, [2048,160] 0.77,
 * [2048,200] 0.77, [640,512] 1.0, f16 [*,80] and [*,160] 0.97-0.99; from
 * DRAM (two threads) f32 [524288,80] 78-80% of the plain loop's speed
 * before, 87-89% after (bench_cpu). straight: the steps as straight-line
 * code, not a loop (emit_row_groups). */
static void row_lanes(emit_ctx *e, LLVMValueRef off, uint64_t len, uint32_t unroll, bool straight,
                      bool keys, LLVMValueRef nan, LLVMValueRef *out_val, LLVMValueRef *out_idx) {
  const uint32_t lanes = ec_vector_lanes(e, e->k->read_dtype);
  LLVMTypeRef ct = keys ? e->i16 : ec_cmp_type(e, e->k->read_dtype);
  const uint64_t step = (uint64_t)unroll * lanes, vend = len / step * step;
  LLVMTypeRef ix = row_index_type(e, ct, len);
  lanes_acc a = {.vt = LLVMVectorType(ct, lanes),
                 .it = LLVMVectorType(ix, lanes),
                 .unroll = unroll,
                 .lanes = lanes,
                 .keys = keys,
                 .ordered = nan && !keys};
  LLVMTypeRef vt = a.vt, it = a.it;
  for (uint32_t u = 0; nan && u < unroll; u++) {
    a.nans[u] = ec_var(e, LLVMGetAllocatedType(nan), "nan_acc");
    LLVMBuildStore(e->b, LLVMConstNull(LLVMGetAllocatedType(nan)), a.nans[u]);
  }
  for (uint32_t u = 0; u < unroll; u++) {
    a.acc[u] = ec_var(e, vt, "acc");
    a.idx[u] = ec_var(e, it, "acc_idx");
    LLVMBuildStore(e->b, row_load(e, ec_add(e, off, ec_i64(e, u * lanes)), lanes, keys, a.nans[u]),
                   a.acc[u]);
    LLVMBuildStore(e->b, LLVMConstNull(it), a.idx[u]);
  }
  /* acc_idx holds the position of the step's first element: one vector
   * add per step in a loop; lanes and accumulators are added after. */
  const uint64_t step_bytes = step * dmlc_dtype_size(e->k->read_dtype);
  if (straight) {
    for (uint64_t j = step; j < vend; j += step) {
      ec_prefetch_stream(e, ec_add(e, off, ec_i64(e, j)), step_bytes);
      lanes_step(e, &a, off, ec_i64(e, j), ec_splat(e, LLVMConstInt(ix, j, false), lanes));
    }
  } else {
    LLVMValueRef jvar = ec_var(e, it, "j");
    LLVMBuildStore(e->b, ec_splat(e, LLVMConstInt(ix, step, false), lanes), jvar);
    ec_loop l;
    LLVMValueRef j = ec_loop_begin(e, &l, ec_i64(e, step), ec_i64(e, vend), step);
    LLVMValueRef jv = LLVMBuildLoad2(e->b, it, jvar, "");
    ec_prefetch_stream(e, ec_add(e, off, j), step_bytes);
    lanes_step(e, &a, off, j, jv);
    LLVMBuildStore(e->b, ec_add(e, jv, ec_splat(e, LLVMConstInt(ix, step, false), lanes)), jvar);
    ec_loop_end(e, &l);
  }
  /* The accumulators with their absolute positions; then the rest: whole
   * vectors, then one that ends at the row's end (it overlaps elements
   * already seen, at their own indices), each merged into its own
   * accumulator; then the accumulators as a tree. The merge (by value,
   * then index) does not mind the order, and the tree's depth is the
   * log of what a serial merge's was. */
  LLVMValueRef iota = ec_iota_of(ix, lanes);
  LLVMValueRef v[ROW_MAX_UNROLL], vi[ROW_MAX_UNROLL];
  for (uint32_t u = 0; u < unroll; u++) {
    v[u] = LLVMBuildLoad2(e->b, vt, a.acc[u], "");
    LLVMValueRef lane = ec_add(e, iota, ec_splat(e, LLVMConstInt(ix, u * lanes, false), lanes));
    vi[u] = ec_add(e, LLVMBuildLoad2(e->b, it, a.idx[u], ""), lane);
  }
  uint32_t t = 0;
  for (uint64_t q = vend; q < len; q += lanes, t = (t + 1) % unroll) {
    const uint64_t at = q + lanes <= len ? q : len - lanes;
    LLVMValueRef w = row_load(e, ec_add(e, off, ec_i64(e, at)), lanes, keys, a.nans[t]);
    LLVMValueRef wi = ec_add(e, iota, ec_splat(e, LLVMConstInt(ix, at, false), lanes));
    ec_merge_pair(e, a.ordered, &v[t], &vi[t], w, wi);
  }
  ec_merge_tree(e, a.ordered, v, vi, unroll);
  if (nan) {
    LLVMTypeRef nt = LLVMGetAllocatedType(nan);
    LLVMValueRef sum = LLVMBuildLoad2(e->b, nt, nan, "");
    for (uint32_t u = 0; u < unroll; u++) {
      LLVMValueRef y = LLVMBuildLoad2(e->b, nt, a.nans[u], "");
      sum = keys ? ec_minmax(e, "smax", sum, y) : LLVMBuildFAdd(e->b, sum, y, "");
    }
    LLVMBuildStore(e->b, sum, nan);
  }
  *out_val = v[0];
  *out_idx = vi[0];
}

/* One pass, U (value, index) vector accumulators: any row. */
static void reduce_row_one_pass(emit_ctx *e, LLVMValueRef off, uint64_t len, LLVMValueRef *val,
                                LLVMValueRef *idx) {
  const uint32_t lanes = ec_vector_lanes(e, e->k->read_dtype);
  LLVMTypeRef ct = ec_cmp_type(e, e->k->read_dtype);
  LLVMValueRef best = ec_var(e, ct, "best"), best_idx = ec_var(e, e->i64, "best_idx");
  uint64_t tail = 1;
  if (len >= lanes) {
    LLVMValueRef v, vi, sv, si;
    row_lanes(e, off, len, one_pass_unroll(e, lanes, len), false, false, NULL, &v, &vi);
    ec_merge_lanes(e, v, vi, lanes, &sv, &si);
    LLVMBuildStore(e->b, sv, best);
    LLVMBuildStore(e->b, LLVMBuildZExt(e->b, si, e->i64, ""), best_idx);
    tail = len;
  } else {
    LLVMBuildStore(e->b, ec_load_read_cmp(e, off, 1), best);
    LLVMBuildStore(e->b, ec_i64(e, 0), best_idx);
  }
  if (tail < len) {
    ec_loop l;
    LLVMValueRef i = ec_loop_begin(e, &l, ec_i64(e, tail), ec_i64(e, len), 1);
    LLVMValueRef x = ec_load_read_cmp(e, ec_add(e, off, i), 1);
    LLVMValueRef b = LLVMBuildLoad2(e->b, ct, best, "");
    LLVMValueRef take = ec_take_next(e, x, b);
    LLVMBuildStore(e->b, LLVMBuildSelect(e->b, take, x, b, ""), best);
    LLVMValueRef bi = LLVMBuildLoad2(e->b, e->i64, best_idx, "");
    LLVMBuildStore(e->b, LLVMBuildSelect(e->b, take, i, bi, ""), best_idx);
    ec_loop_end(e, &l);
  }
  *val = LLVMBuildLoad2(e->b, ct, best, "");
  *idx = LLVMBuildLoad2(e->b, e->i64, best_idx, "");
}

/* Vectors per block of the block rows (f32, f16 and integers). With
 * 64-byte vectors over a read of at most four L2s, on CPUs measured faster
 * so (short_row_blocks: a Zen 5), blocks of 24 (1.5 KiB, three turns),
 * else 32. Alternated in one process on a Zen 5 (AVX-512),
 * blocks of 32 over 24 as time: rows in L2, f32 [1,128256] 1.59 (24 reads
 * at the plain loop's speed, 32 at 0.62-0.72 of it), f16 [1,128256] 1.26,
 * f32 [1,32768] 1.25, i32 [1,131072] 1.87, i64 [1,65536] 1.82; from the
 * L3, i32 [4,131072] 1.15, i64 [8,65536] 1.10, f16 [16,131072] 1.04, f32
 * and f16 [8,128256] 1.03 and 1.00; but 24 over 32 for f16 [64,128256]
 * (16 MB, two threads): 1.07. For f32 [1,128256] blocks of 8 were as
 * fast as 24 (0.63-0.67 of 32's time), of 16, 40, 56, 64, 96, 128 or 256
 * slower (0.74-0.96). Why 32 is slow there is not known (this VM has no
 * performance counters). With AVX2's 32-byte vectors 24 took 1.02 of
 * 32's time on f32 [1,128256]; DRAM rows, and f32 rows under
 * ROW_NARROW_F32_BYTES, read 32 bytes a vector anyway. */
static uint32_t row_block_vecs(const emit_ctx *e) {
  return e->short_row_blocks && e->vector_bytes >= 64 && e->l2_bytes &&
                 ec_read_bytes(e->k) <= 4 * e->l2_bytes
             ? BLOCK_VECS_L2
             : BLOCK_VECS;
}

/* Vectors per block of f32 block rows of len elements: rows under
 * SHORT_BLOCK_ROW_BYTES on vectors under 64 bytes in blocks of
 * SHORT_BLOCK_BYTES (fewer vectors for the last search, one block's
 * record more per 256 bytes), else row_block_vecs. Alternated on a Zen 3,
 * one thread, reads of 256 KiB, 256-byte blocks over 32 vectors as time:
 * AVX2 (8 vectors) f32 [1,600] 0.82, [109,600] 0.72, [1,1000] 0.81,
 * [65,1000] 0.88, but [1,2000] 1.06, [1,3000] 1.08-1.13 (with [32,2000]
 * 0.97, [16,4000] 0.95); SSE4.2 (16 vectors) [1,1000] 0.85, [65,1000]
 * 0.86-0.90, [109,600] 0.90; two threads, AVX2 [4096,1000] 0.91,
 * [32768,1000] 0.97, SSE4.2 [4096,1000] 0.97. Not measured with 64-byte
 * vectors. */
static uint32_t f32_block_vecs(const emit_ctx *e, uint64_t len) {
  if (e->target_vector_bytes < 64 && len * 4 < SHORT_BLOCK_ROW_BYTES)
    return SHORT_BLOCK_BYTES / e->vector_bytes;
  return row_block_vecs(e);
}

/* Whether rows of len elements take the block path: f32, at least two
 * blocks long (row_block_vecs, whatever f32_block_vecs says). */
static bool blocks(const emit_ctx *e, uint64_t len) {
  return e->k->read_dtype == DMLC_DTYPE_F32 && len <= INT32_MAX &&
         len >= 2ull * row_block_vecs(e) * ec_vector_lanes(e, DMLC_DTYPE_F32);
}

/* a when a > b (argmin: a < b), else b: x86's MAXPS (MINPS), one
 * instruction. Exact when neither is NaN; either zero for -0 and +0. */
static LLVMValueRef fext(emit_ctx *e, bool mx, LLVMValueRef a, LLVMValueRef b) {
  return LLVMBuildSelect(e->b, LLVMBuildFCmp(e->b, mx ? LLVMRealOGT : LLVMRealOLT, a, b, ""), a, b,
                         "");
}

typedef struct row_blocks {
  LLVMValueRef off;      /* the row's first element */
  LLVMValueRef best, at; /* vars, lane by lane: the best block extreme, that block's start */
  LLVMValueRef chain[8]; /* vars: a block's extreme by chain */
  LLVMValueRef nans;     /* var (it): all ones in a lane where a turn's products were unordered */
  LLVMTypeRef vt, it;
  uint32_t lanes, chains, vecs; /* vecs: vectors per block (f32_block_vecs) */
  bool mx, last;
} row_blocks;

/* One block's work, from element start (row_blocks or bit_blocks). */
typedef void (*block_fn)(emit_ctx *e, const void *arg, LLVMValueRef start);

/* The row (len elements, two blocks or more) in blocks of vecs vectors
 * of lanes, then, when it is no whole number of them, a block ending at
 * its end that overlaps the one before (an element seen twice cannot beat
 * itself). */
static void for_blocks(emit_ctx *e, uint64_t len, uint32_t lanes, uint32_t vecs, block_fn step,
                       const void *arg) {
  const uint64_t be = (uint64_t)vecs * lanes;
  ec_loop l;
  LLVMValueRef b = ec_loop_begin(e, &l, ec_i64(e, 0), ec_i64(e, len / be), 1);
  step(e, arg, ec_mul(e, b, be));
  ec_loop_end(e, &l);
  if (len % be)
    step(e, arg, ec_i64(e, len - be));
}

/* The first (last) block start (i64) that a lane holding the row's best
 * recorded: the least (greatest) of the vector of starts in at_var over
 * the lanes where holds. */
static LLVMValueRef held_block(emit_ctx *e, LLVMValueRef holds, LLVMValueRef at_var, LLVMTypeRef it,
                               bool last) {
  LLVMValueRef none = ec_splat(e, ec_i32(e, last ? 0 : UINT32_MAX), LLVMGetVectorSize(it));
  LLVMValueRef ats = LLVMBuildSelect(e->b, holds, LLVMBuildLoad2(e->b, it, at_var, ""), none, "");
  return LLVMBuildZExt(e->b, reduce_minmax(e, last ? "umax" : "umin", ats), e->i64, "");
}

/* find_hit over the block of vecs vectors of lanes from element start
 * (i64), from its end when last. */
static void find_in_block(emit_ctx *e, LLVMValueRef start, uint32_t lanes, uint32_t vecs, bool last,
                          row_hits_fn hits, const void *arg, LLVMValueRef where,
                          LLVMBasicBlockRef done) {
  find_hit(e, last ? ec_add(e, start, ec_i64(e, (uint64_t)vecs * lanes - lanes)) : start, vecs,
           lanes, last, hits, arg, where, done);
}

/* One turn of block_step: TURN_VECS vectors from element at into the
 * chains (vector v into chain v % chains; the block's first turn starts
 * them), and the turn's NaN check: the product of its vectors as a tree,
 * the last two products compared unordered. A NaN makes its product NaN;
 * so do 0 x inf, and an overflow met by an underflow, which
 * reduce_row_blocks then tells apart from a NaN by a second look. */
static void block_turn(emit_ctx *e, const row_blocks *rb, LLVMValueRef at, bool first) {
  ec_prefetch_stream(e, at, TURN_VECS * e->vector_bytes);
  LLVMValueRef x[TURN_VECS];
  for (uint32_t v = 0; v < TURN_VECS; v++) {
    const uint32_t c = v % rb->chains;
    x[v] = ec_load_read_cmp(e, ec_add(e, at, ec_i64(e, v * rb->lanes)), rb->lanes);
    LLVMValueRef m = first && v < rb->chains
                         ? x[v]
                         : fext(e, rb->mx, LLVMBuildLoad2(e->b, rb->vt, rb->chain[c], ""), x[v]);
    LLVMBuildStore(e->b, m, rb->chain[c]);
  }
  for (uint32_t n = TURN_VECS; n > 2; n /= 2)
    for (uint32_t v = 0; v < n / 2; v++)
      x[v] = LLVMBuildFMul(e->b, x[2 * v], x[2 * v + 1], "");
  LLVMValueRef u =
      LLVMBuildSExt(e->b, LLVMBuildFCmp(e->b, LLVMRealUNO, x[0], x[1], ""), rb->it, "");
  LLVMBuildStore(e->b, LLVMBuildOr(e->b, LLVMBuildLoad2(e->b, rb->it, rb->nans, ""), u, ""),
                 rb->nans);
}

/* All ones in each lane where the two vectors from element at are
 * unordered (it: the i32 lanes). */
static LLVMValueRef pair_unordered(emit_ctx *e, LLVMValueRef at, uint32_t lanes, LLVMTypeRef it) {
  LLVMValueRef u = LLVMBuildFCmp(e->b, LLVMRealUNO, ec_load_read_cmp(e, at, lanes),
                                 ec_load_read_cmp(e, ec_add(e, at, ec_i64(e, lanes)), lanes), "");
  return LLVMBuildSExt(e->b, u, it, "");
}

/* Whether the row (len elements, at least 2 vectors) holds a NaN: each
 * pair of vectors compared unordered, the last pair ending at its end. */
static LLVMValueRef row_has_nan(emit_ctx *e, LLVMValueRef off, uint64_t len, uint32_t lanes,
                                LLVMTypeRef it) {
  const uint64_t pair = 2ull * lanes;
  LLVMValueRef any = ec_var(e, it, "nan_any");
  LLVMBuildStore(e->b, LLVMConstNull(it), any);
  ec_loop l;
  LLVMValueRef i = ec_loop_begin(e, &l, ec_i64(e, 0), ec_i64(e, len / pair), 1);
  LLVMValueRef u = pair_unordered(e, ec_add(e, off, ec_mul(e, i, pair)), lanes, it);
  LLVMBuildStore(e->b, LLVMBuildOr(e->b, LLVMBuildLoad2(e->b, it, any, ""), u, ""), any);
  ec_loop_end(e, &l);
  LLVMValueRef r = LLVMBuildLoad2(e->b, it, any, "");
  if (len % pair)
    r = LLVMBuildOr(e->b, r, pair_unordered(e, ec_add(e, off, ec_i64(e, len - pair)), lanes, it),
                    "");
  return ec_any_lane(e, r);
}

/* The block of BLOCK_VECS vectors from element start, in turns of
 * TURN_VECS vectors: its extreme lane by lane by MAXPS (MINPS) in
 * rb->chains chains and a tree, each turn checked for NaN (block_turn);
 * each lane whose extreme beats the lane's best (argmax: is greater;
 * last: greater or equal) takes it, and start. The turns are a loop (as
 * bit_block_step's): unrolled over the block, LLVM gathered the checks
 * into one tree at the block's end and kept the block's vectors live
 * until then, spilling them with SSE's 16 registers.
 * The check's cost, f32 [1,128256] in L2 on a Zen 4: MAXPS, CMPPS and
 * ADDPS share two units there, MULPS has two others, OR any of four. A
 * sum of the elements (one ADDPS a vector, before the fifteenth session)
 * took 1.28 of the time of one CMPUNORDPS and one OR a pair of vectors
 * (SSE4.2), and that 1.14-1.19 of the product tree's (7.4 against 6.2-6.5
 * us; no check at all: 5.0 us); with AVX2 and AVX-512 the row reads from
 * L2 at the same speed with any of them. */
static void block_step(emit_ctx *e, const void *arg, LLVMValueRef start) {
  const row_blocks *rb = arg;
  const uint32_t lanes = rb->lanes, chains = rb->chains;
  const uint64_t turn = (uint64_t)TURN_VECS * lanes;
  LLVMValueRef first = ec_add(e, rb->off, start);
  block_turn(e, rb, first, true);
  ec_loop l;
  LLVMValueRef j =
      ec_loop_begin(e, &l, ec_i64(e, turn), ec_i64(e, (uint64_t)rb->vecs * lanes), turn);
  block_turn(e, rb, ec_add(e, first, j), false);
  ec_loop_end(e, &l);
  LLVMValueRef m[8];
  for (uint32_t c = 0; c < chains; c++)
    m[c] = LLVMBuildLoad2(e->b, rb->vt, rb->chain[c], "");
  for (uint32_t w = chains; w > 1; w /= 2)
    for (uint32_t i = 0; i < w / 2; i++)
      m[i] = fext(e, rb->mx, m[i], m[i + w / 2]);
  LLVMValueRef best = LLVMBuildLoad2(e->b, rb->vt, rb->best, "");
  const LLVMRealPredicate p =
      rb->mx ? (rb->last ? LLVMRealOGE : LLVMRealOGT) : (rb->last ? LLVMRealOLE : LLVMRealOLT);
  LLVMValueRef beats = LLVMBuildFCmp(e->b, p, m[0], best, "");
  LLVMBuildStore(e->b, LLVMBuildSelect(e->b, beats, m[0], best, ""), rb->best);
  LLVMValueRef at = LLVMBuildLoad2(e->b, rb->it, rb->at, "");
  LLVMValueRef here = ec_splat(e, LLVMBuildTrunc(e->b, start, e->i32, ""), lanes);
  LLVMBuildStore(e->b, LLVMBuildSelect(e->b, beats, here, at, ""), rb->at);
}

/* Block rows: the row's elements (as compared), hit where equal to the
 * best (a vector of it). */
typedef struct equal_hits {
  LLVMValueRef off, best;
} equal_hits;

static LLVMValueRef equal_hit(emit_ctx *e, LLVMValueRef pos, const void *arg) {
  const equal_hits *h = arg;
  const uint32_t lanes = LLVMGetVectorSize(LLVMTypeOf(h->best));
  LLVMValueRef x = ec_load_read_cmp(e, ec_add(e, h->off, pos), lanes);
  return LLVMBuildBitCast(e->b, LLVMBuildFCmp(e->b, LLVMRealOEQ, x, h->best, ""),
                          LLVMIntTypeInContext(e->c, lanes), "");
}

/* f32 rows in blocks of BLOCK_VECS vectors: per vector one MAXPS (MINPS)
 * and one MULPS of a NaN check, no index work. Per block, lane by lane, its extreme over
 * the block's vectors and whether that beats the lane's best so far,
 * which then records the block. At the end the row's best value is the
 * lanes' best, and the first (last) block holding it is the least
 * (greatest) block recorded by a lane holding it: a lane records a block
 * only for a value greater than any earlier in that lane (or not less,
 * for the last). That block's first (last) element equal to it is the
 * answer. A NaN, caught by the turns' products and found again by a
 * pass of unordered pairs (the products also flag 0 x inf), sends the
 * row through the one-pass path instead, which orders NaN. A row that is not a
 * whole number of blocks ends with a block ending at its end, overlapping
 * the one before: an element seen twice cannot beat itself. */
static void reduce_row_blocks(emit_ctx *e, LLVMValueRef off, uint64_t len, LLVMValueRef *val,
                              LLVMValueRef *idx) {
  const uint32_t lanes = ec_vector_lanes(e, DMLC_DTYPE_F32);
  row_blocks rb = {.off = off,
                   .lanes = lanes,
                   .chains = e->vector_bytes >= 64 ? 8 : 4,
                   .vecs = f32_block_vecs(e, len),
                   .mx = e->k->reduction == DMLC_OP_ARGMAX,
                   .last = e->k->direction == DMLC_DIRECTION_DECREASING};
  rb.vt = LLVMVectorType(e->f32, lanes);
  rb.it = LLVMVectorType(e->i32, lanes);
  /* every lane starts with element 0, in block 0 */
  rb.best = ec_var(e, rb.vt, "best");
  rb.at = ec_var(e, rb.it, "best_at");
  LLVMBuildStore(e->b, ec_splat(e, ec_load_read_cmp(e, off, 1), lanes), rb.best);
  LLVMBuildStore(e->b, LLVMConstNull(rb.it), rb.at);
  for (uint32_t c = 0; c < rb.chains; c++)
    rb.chain[c] = ec_var(e, rb.vt, "chain");
  rb.nans = ec_var(e, rb.it, "nans");
  LLVMBuildStore(e->b, LLVMConstNull(rb.it), rb.nans);
  for_blocks(e, len, lanes, rb.vecs, block_step, &rb);

  /* a turn whose products were unordered: the row looked at again, pair
   * by pair, for a NaN; none (0 x inf, say) keeps the blocks' answer */
  LLVMValueRef where = ec_var(e, e->i64, "where");
  LLVMBasicBlockRef look = LLVMAppendBasicBlockInContext(e->c, e->fn, "blocks_look");
  LLVMBasicBlockRef slow = LLVMAppendBasicBlockInContext(e->c, e->fn, "blocks_nan");
  LLVMBasicBlockRef fast = LLVMAppendBasicBlockInContext(e->c, e->fn, "blocks_find");
  LLVMBasicBlockRef done = LLVMAppendBasicBlockInContext(e->c, e->fn, "blocks_done");
  LLVMBuildCondBr(e->b, ec_any_lane(e, LLVMBuildLoad2(e->b, rb.it, rb.nans, "")), look, fast);
  LLVMPositionBuilderAtEnd(e->b, look);
  LLVMBuildCondBr(e->b, row_has_nan(e, off, len, lanes, rb.it), slow, fast);
  LLVMPositionBuilderAtEnd(e->b, slow);
  LLVMValueRef v1, i1;
  reduce_row_one_pass(e, off, len, &v1, &i1);
  LLVMBuildStore(e->b, i1, where);
  LLVMBuildBr(e->b, done);

  /* the best value, its first (last) block, that block's first (last)
   * element equal to it */
  LLVMPositionBuilderAtEnd(e->b, fast);
  LLVMValueRef bests = LLVMBuildLoad2(e->b, rb.vt, rb.best, "");
  LLVMTypeRef vt = rb.vt;
  LLVMValueRef top = ec_intrinsic(e, rb.mx ? "llvm.vector.reduce.fmax" : "llvm.vector.reduce.fmin",
                                  &vt, 1, &bests, 1);
  LLVMValueRef bv = ec_splat(e, top, lanes);
  LLVMValueRef holds = LLVMBuildFCmp(e->b, LLVMRealOEQ, bests, bv, "");
  LLVMValueRef start = held_block(e, holds, rb.at, rb.it, rb.last);
  LLVMBuildStore(e->b, start, where); /* not kept: the block holds the best */
  const equal_hits eh = {off, bv};
  find_in_block(e, start, lanes, rb.vecs, rb.last, equal_hit, &eh, where, done);
  LLVMBuildBr(e->b, done);

  LLVMPositionBuilderAtEnd(e->b, done);
  *idx = LLVMBuildLoad2(e->b, e->i64, where, "");
  *val = ec_load_read_cmp(e, ec_add(e, off, *idx), 1);
}

/* Whether rows of len elements take the block path on their bits: f16 and
 * integers, at least two blocks long. */
static bool bit_blocks_row(const emit_ctx *e, uint64_t len) {
  const dmlc_kind kind = dmlc_dtype_get(e->k->read_dtype)->kind;
  return (e->k->read_dtype == DMLC_DTYPE_F16 || kind == DMLC_KIND_SIGNED ||
          kind == DMLC_KIND_UNSIGNED) &&
         len <= INT32_MAX && len >= 2ull * row_block_vecs(e) * ec_vector_lanes(e, e->k->read_dtype);
}

typedef struct bit_blocks {
  bits_hits bh;          /* the row's elements as integers */
  const char *op;        /* the extreme kept by block (llvm.<op>: smax, umax, smin) */
  const char *side_op;   /* another extreme over the whole row, or NULL */
  LLVMValueRef best, at; /* vars, lane by lane: the best block extreme, that block's start */
  LLVMValueRef side[4];  /* vars: the side extreme, lane by lane, by chain */
  LLVMValueRef chain[4]; /* vars: a block's op extreme by chain (with side_op) */
  LLVMTypeRef it;
  uint32_t lanes;
  bool last;
} bit_blocks;

enum {
  BIT_CHAINS = 4, /* chains of each extreme */
  BIT_TURN = 8,   /* vectors a turn of the side-extreme loop, two a chain */
};

/* Vector v of a turn, from element at, into chain v % BIT_CHAINS of both
 * extremes (starting the op chain when first). */
static void bit_turn_vector(emit_ctx *e, const bit_blocks *bb, LLVMValueRef at, uint32_t v,
                            bool first) {
  LLVMTypeRef vt = bb->bh.vt;
  const uint32_t c = v % BIT_CHAINS;
  LLVMValueRef x = bits_at(e, &bb->bh, at);
  LLVMBuildStore(e->b,
                 first ? x : ec_minmax(e, bb->op, LLVMBuildLoad2(e->b, vt, bb->chain[c], ""), x),
                 bb->chain[c]);
  LLVMBuildStore(e->b, ec_minmax(e, bb->side_op, LLVMBuildLoad2(e->b, vt, bb->side[c], ""), x),
                 bb->side[c]);
}

/* The block of BLOCK_VECS vectors from element start: its op extreme lane
 * by lane in BIT_CHAINS chains and a tree, the side extreme carried in its
 * chains; each lane whose block extreme beats the lane's best (is further
 * by op; last: or equal) takes it, and start. */
static void bit_block_step(emit_ctx *e, const void *arg, LLVMValueRef start) {
  const bit_blocks *bb = arg;
  const uint32_t lanes = bb->lanes;
  LLVMTypeRef vt = bb->bh.vt;
  LLVMValueRef m[BIT_CHAINS];
  if (bb->side_op) {
    /* Two extremes of each vector: a loop of BIT_TURN vectors a turn,
     * each consumed by both as it is loaded (BIT_CHAINS a turn took 1.12
     * of the time of BIT_TURN with SSE4.2, f16 [1,128256] in L2 on a Zen
     * 4, the same with AVX2 and AVX-512). Unrolled over the block, the
     * scheduler hoisted the loads and, with AVX2's 16 registers, spilled
     * them to the stack for the side extreme (f16 [1,128256] on Zen 3:
     * 58% of the plain loop unrolled). The stream prefetches go beside
     * the loads, a turn's lines each turn, rather than a block's 16 at
     * its start (as in block_step and the branch below): in a C model of this
     * loop over f16 [1,128256] in L2 (Zen 3), 84-91% of the plain loop
     * against 63-75% batched and 77-87% with none; the kernel itself
     * 1-7% faster (medians of calls alternated in one process), as f32
     * block rows of that length. */
    const uint64_t turn_bytes = (uint64_t)BIT_TURN * e->vector_bytes;
    ec_prefetch_stream(e, ec_add(e, bb->bh.off, start), turn_bytes);
    for (uint32_t v = 0; v < BIT_TURN; v++)
      bit_turn_vector(e, bb, ec_add(e, start, ec_i64(e, v * lanes)), v, v < BIT_CHAINS);
    ec_loop l;
    LLVMValueRef j =
        ec_loop_begin(e, &l, ec_i64(e, BIT_TURN * lanes),
                      ec_i64(e, (uint64_t)row_block_vecs(e) * lanes), BIT_TURN * lanes);
    ec_prefetch_stream(e, ec_add(e, bb->bh.off, ec_add(e, start, j)), turn_bytes);
    for (uint32_t v = 0; v < BIT_TURN; v++)
      bit_turn_vector(e, bb, ec_add(e, start, ec_add(e, j, ec_i64(e, v * lanes))), v, false);
    ec_loop_end(e, &l);
    for (uint32_t c = 0; c < BIT_CHAINS; c++)
      m[c] = LLVMBuildLoad2(e->b, vt, bb->chain[c], "");
  } else {
    for (uint32_t v = 0, n = row_block_vecs(e); v < n; v++) {
      if (v * e->vector_bytes % 64 == 0)
        ec_prefetch_stream(e, ec_add(e, bb->bh.off, ec_add(e, start, ec_i64(e, v * lanes))), 64);
      LLVMValueRef x = bits_at(e, &bb->bh, ec_add(e, start, ec_i64(e, v * lanes)));
      const uint32_t c = v % BIT_CHAINS;
      m[c] = v < BIT_CHAINS ? x : ec_minmax(e, bb->op, m[c], x);
    }
  }
  for (uint32_t w = BIT_CHAINS; w > 1; w /= 2)
    for (uint32_t i = 0; i < w / 2; i++)
      m[i] = ec_minmax(e, bb->op, m[i], m[i + w / 2]);
  const bool sgn = bb->op[0] == 's', up = strcmp(bb->op + 1, "max") == 0;
  const LLVMIntPredicate p =
      up ? (sgn ? (bb->last ? LLVMIntSGE : LLVMIntSGT) : (bb->last ? LLVMIntUGE : LLVMIntUGT))
         : (sgn ? (bb->last ? LLVMIntSLE : LLVMIntSLT) : (bb->last ? LLVMIntULE : LLVMIntULT));
  LLVMValueRef best = LLVMBuildLoad2(e->b, vt, bb->best, "");
  LLVMValueRef beats = LLVMBuildICmp(e->b, p, m[0], best, "");
  LLVMBuildStore(e->b, LLVMBuildSelect(e->b, beats, m[0], best, ""), bb->best);
  LLVMValueRef at = LLVMBuildLoad2(e->b, bb->it, bb->at, "");
  LLVMValueRef here = ec_splat(e, LLVMBuildTrunc(e->b, start, e->i32, ""), lanes);
  LLVMBuildStore(e->b, LLVMBuildSelect(e->b, beats, here, at, ""), bb->at);
}

/* One pass of blocks over the row (len elements, two blocks or more).
 * *top: the row's op extreme; *start: the first (last) block holding it;
 * *side (when side_op): the row's side_op extreme. */
static void bit_blocks_pass(emit_ctx *e, bit_blocks *bb, uint64_t len, LLVMValueRef *top,
                            LLVMValueRef *start, LLVMValueRef *side) {
  const uint32_t lanes = bb->lanes;
  LLVMTypeRef vt = bb->bh.vt, it = bb->it;
  /* every lane starts with element 0, in block 0 */
  LLVMValueRef first = bits_at(e, &bb->bh, ec_i64(e, 0));
  first = ec_splat(e, LLVMBuildExtractElement(e->b, first, ec_i32(e, 0), ""), lanes);
  LLVMBuildStore(e->b, first, bb->best);
  LLVMBuildStore(e->b, LLVMConstNull(it), bb->at);
  for (uint32_t c = 0; bb->side_op && c < BIT_CHAINS; c++)
    LLVMBuildStore(e->b, first, bb->side[c]);
  for_blocks(e, len, lanes, row_block_vecs(e), bit_block_step, bb);

  LLVMValueRef bests = LLVMBuildLoad2(e->b, vt, bb->best, "");
  *top = reduce_minmax(e, bb->op, bests);
  LLVMValueRef holds = LLVMBuildICmp(e->b, LLVMIntEQ, bests, ec_splat(e, *top, lanes), "");
  *start = held_block(e, holds, bb->at, it, bb->last);
  if (bb->side_op) {
    LLVMValueRef sv = LLVMBuildLoad2(e->b, vt, bb->side[0], "");
    for (uint32_t c = 1; c < BIT_CHAINS; c++)
      sv = ec_minmax(e, bb->side_op, sv, LLVMBuildLoad2(e->b, vt, bb->side[c], ""));
    *side = reduce_minmax(e, bb->side_op, sv);
  }
}

/* Rows in blocks of BLOCK_VECS vectors on their bits: integers keep their
 * extreme by block, one integer max or min per vector (i64 [4096,4096]
 * rows: 85-88% -> 91-100% of the plain loop, against a compare and two
 * blends per vector in one pass),
 * then the answer is the first (last) element with the same bits in the
 * first (last) block a lane recorded it in (as f32 block rows).
 *
 * f16, on the bits as int16, two integer max per vector, no conversion:
 * the signed greatest of the bits is the greatest non-negative value (or a
 * positive NaN); the unsigned greatest is the most negative value (or a
 * negative NaN). Argmax keeps the first by block and the second over the
 * row; argmin the other way round. Together they say whether the row holds
 * a NaN, and the kept one is the row's best value unless every element has
 * the other sign (argmax: all negative; argmin: none negative): then a
 * second pass of blocks keeps the signed least (the negative nearest 0, or
 * the non-negative nearest 0), which is then the best. A NaN or a best of
 * zero (-0 and +0 are equal, and one of them may come first anywhere) is
 * searched for over the whole row. */
static void reduce_row_bit_blocks(emit_ctx *e, LLVMValueRef off, uint64_t len, LLVMValueRef *val,
                                  LLVMValueRef *idx) {
  const dmlc_dtype dt = e->k->read_dtype;
  const bool half = dt == DMLC_DTYPE_F16;
  const uint32_t lanes = ec_vector_lanes(e, dt);
  const bool mx = e->k->reduction == DMLC_OP_ARGMAX;
  const bool last = e->k->direction == DMLC_DIRECTION_DECREASING;
  LLVMTypeRef et = half ? e->i16 : ec_store_type(e, dt);
  bit_blocks bb = {.bh = {off, NULL, LLVMVectorType(et, lanes)},
                   .op = half ? (mx ? "smax" : "umax") : ec_int_op(e),
                   .side_op = half ? (mx ? "umax" : "smax") : NULL,
                   .it = LLVMVectorType(e->i32, lanes),
                   .lanes = lanes,
                   .last = last};
  bb.best = ec_var(e, bb.bh.vt, "best");
  bb.at = ec_var(e, bb.it, "best_at");
  for (uint32_t c = 0; half && c < BIT_CHAINS; c++) {
    bb.side[c] = ec_var(e, bb.bh.vt, "side");
    bb.chain[c] = ec_var(e, bb.bh.vt, "chain");
  }
  LLVMValueRef top, start, side = NULL;
  bit_blocks_pass(e, &bb, len, &top, &start, &side);
  LLVMValueRef where = ec_var(e, e->i64, "where");
  LLVMBasicBlockRef done = LLVMAppendBasicBlockInContext(e->c, e->fn, "bits_done");
  LLVMValueRef find[3] = {ec_splat(e, LLVMConstAllOnes(et), lanes), ec_splat(e, top, lanes),
                          LLVMConstNull(bb.bh.vt)};
  bb.bh.find = find;
  if (half) {
    LLVMValueRef nan = mx ? half_nan(e, top, side) : half_nan(e, side, top);
    /* every element has the other sign */
    LLVMValueRef other = mx ? LLVMBuildICmp(e->b, LLVMIntSLT, top, KS(0), "")
                            : LLVMBuildICmp(e->b, LLVMIntULT, top, KS(0x8000), "");
    LLVMValueRef best = ec_var(e, e->i16, "best_bits"), from = ec_var(e, e->i64, "best_block");
    LLVMBuildStore(e->b, top, best);
    LLVMBuildStore(e->b, start, from);
    ec_if f;
    ec_if_begin(e, &f, LLVMBuildAnd(e->b, other, LLVMBuildNot(e->b, nan, ""), ""));
    bb.op = "smin";
    bb.side_op = NULL;
    bit_blocks_pass(e, &bb, len, &top, &start, NULL);
    LLVMBuildStore(e->b, top, best);
    LLVMBuildStore(e->b, start, from);
    ec_if_else(e, &f);
    ec_if_end(e, &f);
    LLVMValueRef whole = half_find(e, nan, LLVMBuildLoad2(e->b, e->i16, best, ""), lanes, find);
    LLVMBasicBlockRef row = LLVMAppendBasicBlockInContext(e->c, e->fn, "bits_row");
    LLVMBasicBlockRef block = LLVMAppendBasicBlockInContext(e->c, e->fn, "bits_block");
    LLVMBuildCondBr(e->b, whole, row, block);
    LLVMPositionBuilderAtEnd(e->b, row);
    search_row(e, &bb.bh, len, last, where, done);
    LLVMPositionBuilderAtEnd(e->b, block);
    start = LLVMBuildLoad2(e->b, e->i64, from, "");
  }
  LLVMBuildStore(e->b, start, where); /* not kept: the block holds the best */
  find_in_block(e, start, lanes, row_block_vecs(e), last, bits_hit, &bb.bh, where, done);
  LLVMBuildBr(e->b, done);
  LLVMPositionBuilderAtEnd(e->b, done);
  *idx = LLVMBuildLoad2(e->b, e->i64, where, "");
  /* an f16's value is the element found's (NaN, or the zero found) */
  *val = half ? ec_load_read_cmp(e, ec_add(e, off, *idx), 1) : top;
}

/* Reduces len elements of the read from element offset off; *val is the
 * best value (compare type) and *idx its position in the row (i64). */
void ec_reduce_row(emit_ctx *e, LLVMValueRef off, uint64_t len, LLVMValueRef *val,
                   LLVMValueRef *idx) {
  if (bit_blocks_row(e, len))
    reduce_row_bit_blocks(e, off, len, val, idx);
  else if (two_pass(e, len))
    reduce_row_two_pass(e, off, len, val, idx);
  else if (blocks(e, len))
    reduce_row_blocks(e, off, len, val, idx);
  else
    reduce_row_one_pass(e, off, len, val, idx);
}

/* Whether ec_reduce_row takes rows of len elements in one pass. */
static bool one_pass(const emit_ctx *e, uint64_t len) {
  return !bit_blocks_row(e, len) && !two_pass(e, len) && !blocks(e, len);
}

/* Output element offset of row o (0 for the space [R]). */
static LLVMValueRef row_base(emit_ctx *e, const uint64_t *strides, LLVMValueRef o) {
  return e->k->rank == 2 ? ec_mul(e, o, strides[0]) : ec_i64(e, 0);
}

/* Whether ONEHOT output out is contiguous along the row: written in one
 * pass of non-temporal stores. */
static bool onehot_run(const emit_ctx *e, uint32_t i) {
  return e->k->outputs[i].strides[e->k->rank - 1] == 1 && ec_output_nt(e, i);
}

typedef struct onehot_arg {
  dmlc_dtype dt;
  LLVMValueRef idx; /* the row's result (i64); NULL: all zeros */
} onehot_arg;

/* lanes elements from row position i: 1 at idx, else 0. */
static LLVMValueRef onehot_value(emit_ctx *e, LLVMValueRef i, uint32_t lanes, void *arg) {
  const onehot_arg *a = arg;
  LLVMValueRef one = ec_splat(e, ec_const_elem(e, a->dt, 1), lanes);
  LLVMValueRef zero = ec_splat(e, ec_const_elem(e, a->dt, 0), lanes);
  if (!a->idx)
    return zero;
  /* d = idx - i: the lane of the 1, when below lanes */
  LLVMValueRef d = LLVMBuildSub(e->b, a->idx, i, "");
  if (lanes == 1)
    return LLVMBuildSelect(e->b, LLVMBuildICmp(e->b, LLVMIntEQ, d, ec_i64(e, 0), ""), one, zero,
                           "");
  LLVMValueRef over = LLVMBuildICmp(e->b, LLVMIntUGE, d, ec_i64(e, lanes), "");
  d = LLVMBuildSelect(e->b, over, ec_i64(e, lanes), d, "");
  LLVMTypeRef it = LLVMIntTypeInContext(e->c, 8 * dmlc_dtype_size(a->dt));
  LLVMValueRef iota[64];
  for (uint32_t l = 0; l < lanes; l++)
    iota[l] = LLVMConstInt(it, l, false);
  LLVMValueRef dv = ec_splat(e, LLVMBuildTrunc(e->b, d, it, ""), lanes);
  LLVMValueRef hit = LLVMBuildICmp(e->b, LLVMIntEQ, LLVMConstVector(iota, lanes), dv, "");
  return LLVMBuildSelect(e->b, hit, one, zero, "");
}

/* count elements of ONEHOT output i from off, in one pass: 1 at element
 * idx of them (NULL: none), 0 elsewhere. Runs of 0-vectors around the one
 * holding the 1 (ec_store_onehot_run_nt), but f16 a select per vector
 * (ec_store_run_nt): its stores are ordinary ones (ec_store_nt), and
 * ordinary stores at the constant run's pace made f16 [8192,8192] hardmax
 * rows 1.16-1.25 times as slow, non-temporal ones 1.06-1.17 (Zen 5,
 * alternated in one process against the select per vector). f32
 * [8192,8192]: 0.79-0.81 of the time with SSE4.2, 0.79-0.87 with AVX2,
 * 0.85-0.98 with AVX-512. */
static void store_onehot(emit_ctx *e, uint32_t i, LLVMValueRef off, LLVMValueRef count,
                         LLVMValueRef idx) {
  const dmlc_dtype dt = e->k->outputs[i].dtype;
  if (dt == DMLC_DTYPE_F16) {
    onehot_arg a = {dt, idx};
    ec_store_run_nt(e, dt, e->out[i], off, count, onehot_value, &a);
  } else {
    ec_store_onehot_run_nt(e, dt, e->out[i], off, count, idx);
  }
}

/* INDEX outputs and the 1 of ONEHOT outputs for row o (all of a ONEHOT
 * output's row, when written in one pass: whole). */
static void store_results(emit_ctx *e, LLVMValueRef o, LLVMValueRef idx, bool whole) {
  const dmlc_kdesc *k = e->k;
  for (uint32_t i = 0; i < k->num_outputs; i++) {
    const dmlc_kout *out = &k->outputs[i];
    LLVMValueRef off = row_base(e, out->strides, o);
    if (whole && onehot_run(e, i)) {
      store_onehot(e, i, off, ec_i64(e, k->dims[k->rank - 1]), idx);
    } else if (out->kind == DMLC_KOUT_INDEX) {
      ec_store(e, out->dtype, e->out[i], off, ec_convert(e, idx, DMLC_DTYPE_U64, out->dtype));
    } else {
      off = ec_madd(e, off, idx, out->strides[k->rank - 1]);
      ec_store(e, out->dtype, e->out[i], off, ec_const_elem(e, out->dtype, 1));
    }
  }
}

/* The 0s of ONEHOT outputs over count elements of row o from start (but
 * those written in one pass, unless all). */
static void fill_zeros(emit_ctx *e, LLVMValueRef o, LLVMValueRef start, LLVMValueRef count,
                       bool all) {
  const dmlc_kdesc *k = e->k;
  for (uint32_t i = 0; i < k->num_outputs; i++) {
    const dmlc_kout *out = &k->outputs[i];
    if (out->kind != DMLC_KOUT_ONEHOT || (!all && onehot_run(e, i)))
      continue;
    const uint64_t s = out->strides[k->rank - 1];
    LLVMValueRef off = ec_madd(e, row_base(e, out->strides, o), start, s);
    if (onehot_run(e, i)) {
      store_onehot(e, i, off, count, NULL);
    } else {
      ec_fill(e, out->dtype, e->out[i], off, count, s, ec_const_elem(e, out->dtype, 0));
    }
  }
}

static uint64_t output_bytes(const dmlc_kdesc *k, uint64_t elems) {
  uint64_t n = 0;
  for (uint32_t i = 0; i < k->num_outputs; i++)
    n +=
        dmlc_dtype_size(k->outputs[i].dtype) * (k->outputs[i].kind == DMLC_KOUT_ONEHOT ? elems : 1);
  return n;
}

/* The bytes from the end of a row to the next row's start, where the rows
 * come from DRAM with a pitch longer than the row and the gap is no longer
 * than the row; 0 otherwise. Rows that skip their padding break the one
 * stream the memory serves best: on a Zen 4 a plain loop reading 32000 of
 * each 32768 bytes (2 threads, 256 MiB) took 1.47-1.74 of the time of
 * reading them all, and 16384 of each 32768 1.33-1.44; touching the gap
 * as well took 0.96-0.98 and 0.95-0.97. Reading a quarter of each pitch
 * (8192 of 32768), skipping was the faster (0.75-0.81 against 0.97-1.01). */
static uint64_t row_gap_bytes(const emit_ctx *e, uint64_t len) {
  const dmlc_kdesc *k = e->k;
  if (!e->from_dram || k->rank != 2 || k->read_strides[0] <= len || k->read_strides[0] - len > len)
    return 0;
  return (k->read_strides[0] - len) * dmlc_dtype_size(k->read_dtype);
}

/* Prefetches (into L1) the lines of the bytes from read offset off,
 * `ahead` bytes further on. */
static void prefetch_lines(emit_ctx *e, LLVMValueRef off, uint64_t bytes, uint64_t ahead) {
  ec_loop l;
  LLVMValueRef line = ec_loop_begin(e, &l, ec_i64(e, 0), ec_i64(e, (bytes + 63) / 64), 1);
  ec_prefetch_read_at(e, off, ec_add(e, ec_mul(e, line, 64), ec_i64(e, ahead)), true);
  ec_loop_end(e, &l);
}

/* Whole rows read from DRAM, shorter than ROW_AHEAD_MAX_BYTES (with
 * far_row_prefetch; else ROW_AHEAD_SHORT_MAX_BYTES): the row at read offset
 * off first prefetches the lines of its own span ROW_AHEAD_BYTES further
 * on. A row's result waits on a branch on its data
 * (which block holds the best, where the two-pass search stops), and the
 * hardware prefetcher, trained by the loads that follow it, fell behind:
 * f32 rows of 640 from DRAM read 13.5 GB/s on one thread of a Zen 5.
 * Alternated there (two threads, 42 MB; new over old time): f32 [*,640]
 * 0.48-0.62, [*,1000] 0.50-0.76, [*,1536] 0.79, [*,2048] 0.81-1.08, [*,3072]
 * 1.13-1.15 (hence under 8 KiB); f16 [*,1000] 0.73-0.79, [*,4000] 0.83,
 * u8 [*,3000] 0.62-0.83, i8 [*,1000] 0.91-1.07; prefetched 2.5, 4, 8, 16
 * or 32 KiB ahead, 4-8 KiB was the fastest, and into L1 (prefetcht0) than
 * L2. Rows in the caches took 1.16-1.58 of the time with it, and the row
 * groups (no branch on the data) 1.0-1.27, so neither has it. On a Zen 3
 * (AVX2), without it over with it: f32 [*,640] 1.12, [*,768] 1.04, f16
 * [*,600] 1.2, [*,1000] 1.10, [*,1500] 1.14, u8 [*,2000] 1.06, [*,3000]
 * 1.05, but f32 [*,896] (3.5 KiB) 0.97, [*,1000] 0.86-0.91, [*,1536]
 * 0.84; a distance of 2, 8 or 16 KiB changed nothing. Hence rows under
 * 3.5 KiB, and under 8 KiB with far_row_prefetch (the Zen 5's tuning). */
static void prefetch_ahead(emit_ctx *e, LLVMValueRef off) {
  const dmlc_kdesc *k = e->k;
  const uint64_t row_bytes = k->dims[k->rank - 1] * dmlc_dtype_size(k->read_dtype);
  const uint64_t most = e->far_row_prefetch ? ROW_AHEAD_MAX_BYTES : ROW_AHEAD_SHORT_MAX_BYTES;
  if (!e->from_dram || !e->prefetch_bytes || k->rank != 2 || row_bytes >= most)
    return;
  prefetch_lines(e, off, row_bytes, ROW_AHEAD_BYTES);
}

static void emit_whole_rows(emit_ctx *e, const char *name, dmlc_cpu_kernel_info *info) {
  const dmlc_kdesc *k = e->k;
  const uint64_t len = k->dims[k->rank - 1];
  LLVMValueRef begin, end;
  ec_function_begin(e, name, true, &begin, &end);
  ec_loop l;
  LLVMValueRef o = ec_loop_begin(e, &l, begin, end, 1);
  LLVMValueRef val, idx, base = row_base(e, k->read_strides, o);
  const uint64_t gap = row_gap_bytes(e, len);
  if (!gap) /* (the gap's lines are prefetched below) */
    prefetch_ahead(e, base);
  ec_reduce_row(e, base, len, &val, &idx);
  if (gap) {
    /* every line from the row's end to the next row's first (prefetched,
     * so nothing faults past the tensor's last row) */
    LLVMValueRef end_of_row = ec_add(e, base, ec_i64(e, len));
    ec_loop lg;
    LLVMValueRef line = ec_loop_begin(e, &lg, ec_i64(e, 0), ec_i64(e, gap / 64 + 1), 1);
    ec_prefetch_read_at(e, end_of_row, ec_mul(e, line, 64), true);
    ec_loop_end(e, &lg);
  }
  fill_zeros(e, o, ec_i64(e, 0), ec_i64(e, len), false);
  /* While the row's output streams out, the next row (of this call) streams
   * in: the reads do not wait for the writes. */
  LLVMValueRef next = ec_add(e, o, ec_i64(e, 1));
  next = LLVMBuildSelect(e->b, LLVMBuildICmp(e->b, LLVMIntULT, next, end, ""), next, o, "");
  e->run_prefetch = row_base(e, k->read_strides, next);
  store_results(e, o, idx, true);
  e->run_prefetch = NULL;
  ec_loop_end(e, &l);
  ec_function_end(e);
  info->num_tasks = k->rank == 2 ? k->dims[0] : 1;
  info->bytes_per_task = len * dmlc_dtype_size(k->read_dtype) + output_bytes(k, len);
}

/* Row groups: rows of at most ROW_GROUP_MAX_LEN elements that take the
 * one-pass path (and some 16-bit rows that would take two passes:
 * group_bits), G of them at a time, G the vector's lanes (at most
 * ROW_GROUP_MAX_LANES). Each row's lanes are reduced as alone (row_lanes),
 * into G vectors of (value, position); then, instead of G merges across
 * lanes (log2 G dependent steps each, a shuffle and a (value, index)
 * merge a step, then a scalar tail), the G vectors are merged pairwise in
 * log2 G rounds of G / 2 merges: two vectors of k rows, each row's
 * partial m lanes wide, make one of 2k rows m / 2 lanes wide (the lower
 * halves of every row's lanes against the upper halves), until each lane
 * holds one row's result, rows in order. The merge is by (value, index),
 * which does not mind the order, so each row's result is the sequential
 * one. u8 rows of 48 (32 lanes): 0.46 of the time on one thread. */
enum {
  ROW_GROUP_MAX_LEN = 512,
  ROW_GROUP_MAX_LANES = 32,
  GROUP_BITS_MAX_VECS = 8,
  BYTE_GROUP_MAX_VECS = 13,  /* 8-bit rows in groups on 16-byte vectors (group_bits) */
  SMALL_GROUPS_MAX_LEN = 16, /* 32- and 64-bit packed rows this short: emit_small.c */
  PACKED_ROW_MAX_VECS = 4    /* rows packed as they load (packed_rows) */
};

/* Whether the groups compare f16 as i16 keys (ec_f16_key): 32 lanes of
 * integer work a 64-byte vector, and no compare of converted values, which
 * InstCombine would fold into half compares (see ec_emit_row). */
static bool group_keys(const emit_ctx *e) { return e->k->read_dtype == DMLC_DTYPE_F16; }

/* 16-bit rows (f16, i16, u16) of len elements that the two-pass path
 * would take and the groups take instead. The two-pass path ends each row
 * with a search whose exit is a branch on the data, and the rows' loads
 * wait for it: from beyond the L2 it read 9-15 GB/s on one thread of a
 * Zen 5, the groups (no branch on the data) 30-40; on a Zen 3 it read
 * 6-12 GB/s from the L2 as well.
 *
 * With 64-byte vectors (measured on a Zen 5, AVX-512): up to
 * GROUP_BITS_MAX_VECS vectors, f16 rows under four vectors always, the
 * others (and longer f16 rows) where the read is more than four L2s (or
 * the L2 unknown); from DRAM up to twice as many vectors (the rows
 * narrowed to 32-byte vectors, ec_emit_row). New over old time: f16
 * [*,40] and [*,48] 0.25-0.34 from anywhere, f16 [*,64] in L2 0.81-0.86,
 * [*,80] 0.84-1.0, [*,128] 1.14; 12 MB reads of f16 and u16 [*,100]
 * 0.39-0.51, [*,200] 0.53-0.90; from DRAM i16 [*,80] 0.37, f16 [*,100]
 * 0.36, f16 [*,160] 0.54, [*,200] 0.63, [*,256] 0.70-0.80, [*,300]
 * 0.88-0.96, i16 [*,160] and [*,200] 0.51-0.56; but reads within four L2s
 * (1-4 MB) of i16 [*,64..128] 1.6-2.0 (the two passes read 60-100 GB/s
 * from L2 there), 12 MB of f16 and u16 [*,400] 1.13-1.4, i16 [*,300] from
 * DRAM 1.03.
 *
 * With narrower vectors (measured on a Zen 3, the groups with i16
 * positions, row_index_type): any length in the caches, from DRAM up to
 * GROUP_BITS_MAX_VECS 32-byte vectors or any number of 16-byte ones.
 * AVX2, one thread: f16 [8192,80] 0.43, [8192,160] 0.52, [2048,512] 0.66,
 * i16 [8192,80] 0.41, u16 [8192,64] 0.30, f16 [16384,400] (13 MB, two
 * threads) 0.65; from DRAM (two threads) f16 [524288,80] 0.68-0.81, but
 * [524288,256] 1.10 and u16 [524288,160] 1.12. SSE4.2, one thread: f16
 * [8192,80] 0.31, u16 [4096,160] 0.87, f16 [2048,200] 0.79, i16
 * [2048,400] 1.0, from DRAM f16 [524288,160] 0.80. 8-bit rows lost in
 * groups (u8 [4096,256] 1.28, [4096,400] 3.2: i32 positions past 256);
 * on 32-byte vectors their search is flat (flat_search).
 *
 * 8-bit rows on 16-byte vectors (SSE4.2) up to BYTE_GROUP_MAX_VECS
 * vectors: there the search keeps its early exit (flat_search), which
 * random bytes mispredict about once a row (u8 [*,33] read 6 GB/s from
 * DRAM, [*,48] 7.5, [*,100] 11). Alternated on a Zen 3 (two threads), new
 * over old time, random bytes and bytes in [-4, 4] (the best in the first
 * vector): from DRAM u8 [*,33] 0.32 and 0.64, [*,48] 0.36 and 0.83,
 * [*,80] 0.45 and 0.86, [*,128] 0.57 and 1.10, [*,200] 0.93 and 1.0,
 * [*,256] 0.85 and 0.98; 12 MB in the L3 i8 [*,40] 0.17 and 0.60,
 * [*,100] 0.38 and 0.74, u8 [*,128] 0.49 and 0.85, [*,160] 0.49 and
 * 0.93, [*,200] 0.53 and 1.17, but i8 [*,256] 0.72 and 1.57; 0.6-1.5 MB
 * in the L2 u8 [*,100] 0.41-0.58 and 1.1-1.45, [*,200] 0.43-0.80 and 1.7.
 * The slowest case decides, as with flat_search: the groups read 14-17
 * GB/s from the L2 with either data, the early exit 6-14 with random
 * bytes. */
static bool group_bits(const emit_ctx *e, uint64_t len) {
  const uint32_t lanes = ec_vector_lanes(e, e->k->read_dtype);
  if (!two_pass(e, len))
    return false;
  if (dmlc_dtype_size(e->k->read_dtype) == 1) /* else 16-bit (two_pass: bits_type) */
    return e->target_vector_bytes == 16 && len <= BYTE_GROUP_MAX_VECS * lanes;
  if (e->target_vector_bytes < 64)
    return !e->from_dram || e->target_vector_bytes < 32 || len <= GROUP_BITS_MAX_VECS * lanes;
  if (len > GROUP_BITS_MAX_VECS * lanes)
    return e->from_dram && len <= 2ull * GROUP_BITS_MAX_VECS * lanes;
  if (e->k->read_dtype == DMLC_DTYPE_F16 && len < 4ull * lanes)
    return true;
  return !e->l2_bytes || ec_read_bytes(e->k) > 4 * e->l2_bytes;
}

/* The vector bytes short row groups of len elements of size bytes take:
 * vector_bytes, or 16 where the rows are under half a 32-byte vector but
 * at least half a 16-byte one (AVX2 u8 rows of 8-15, 16-bit rows of 4-7),
 * rather than the short rows' de-interleaving. Alternated on a Zen 3 (two
 * threads, 12 MB in the L3), groups of 16-byte vectors over
 * de-interleaving 32-byte ones as time: u8 [*,8] 0.45, [*,10] 0.79,
 * [*,12] 0.62, [*,14] 0.40, [*,15] 0.35, i16 [*,4] 0.60, [*,5] 0.86,
 * [*,7] 0.69, f16 [*,4] and [*,5] a tie, [*,7] 0.83; from DRAM u8 [*,8]
 * 0.54, [*,12] 0.63, i8 [*,14] 0.48, f16 [*,7] 0.90, u16 [*,4] 0.82. */
static uint32_t short_group_bytes(uint32_t vector_bytes, uint64_t len, uint32_t size) {
  return vector_bytes == 32 && 2 * len * size < 32 && 2 * len * size >= 16 ? 16 : vector_bytes;
}

/* Whether every output is an INDEX. */
static bool index_outputs(const emit_ctx *e) {
  for (uint32_t i = 0; i < e->k->num_outputs; i++)
    if (e->k->outputs[i].kind != DMLC_KOUT_INDEX)
      return false;
  return true;
}

bool ec_packed_index_rows(const emit_ctx *e) {
  const dmlc_kdesc *k = e->k;
  return k->rank == 2 && k->reduced_mask == 2u && k->read_strides[1] == 1 &&
         k->read_strides[0] == k->dims[1] && index_outputs(e);
}

/* Packed 8- and 16-bit rows of 16 bytes on 32-byte vectors, index
 * outputs: in row groups of 16-byte vectors, a row one vector (packed as
 * it loads, packed_rows), not short groups of 32-byte vectors whose every
 * load is half another row. Alternated on a Zen 3 (AVX2), new over old
 * time: one thread in the L2 u8 [16384,16] 0.63, i8 0.62, f16 [16384,8]
 * 0.53, u16 0.61; from DRAM u8 [6000000,16] 0.78, f16 [6000000,8] 0.64. */
static bool half_vector_rows(const emit_ctx *e) {
  const dmlc_kdesc *k = e->k;
  if (!ec_packed_index_rows(e) || !bits_type(e) || e->target_vector_bytes != 32 ||
      e->vector_bytes != 32)
    return false;
  const uint32_t size = dmlc_dtype_size(k->read_dtype);
  return k->dims[1] * size == 16 && k->dims[0] >= 16 / size;
}

/* Short row groups: rows shorter than a vector but at least half one
 * (short_group_bytes' vector), packed one after another, of a type whose
 * group merge packs (packs: 8- and 16-bit integers, f16 as keys; vectors
 * under 64 bytes). Each row is one vector loaded from its start, the lanes
 * past the row (the next rows' elements) left out of its merge
 * (short_group). The rows' vectors overlap, and the last row's would run
 * past the read: a group is whole only where a row follows it (a row at
 * least half a vector long holds the rest of the last row's vector); the
 * rest go row by row. They took these rows from ec_emit_small_rows, whose
 * de-interleaving costs more a row the longer the row. Alternated on a Zen
 * 3, two threads, 12 MB in the L3, groups over de-interleaving as time:
 * AVX2 u8 [*,16] 0.71, [*,17] 0.42, [*,24] 0.35, [*,31] 0.31, i8 [*,17]
 * 0.43, [*,24] 0.31, u16 [*,8] 0.59, [*,12] 0.40, f16 [*,8] 0.85-0.92,
 * [*,15] 0.43-0.49; SSE4.2 u8 [*,8] 0.58, [*,12] 0.34, i16 and f16 [*,4]
 * 0.74-0.83, [*,7] 0.63-0.78; from DRAM (AVX2) u8 [*,24] 0.29, i8 [*,17]
 * 0.46, f16 [*,12] 0.64, u16 [*,8] 0.66. Under half their vector they lost
 * (AVX2 u8 [*,6] 1.38, i16 and f16 [*,5] 1.32-1.57; SSE4.2 u8 [*,4] 1.17). */
static bool short_row_groups(const emit_ctx *e) {
  const dmlc_kdesc *k = e->k;
  if (!ec_packed_index_rows(e) || !bits_type(e) || e->target_vector_bytes >= 64 ||
      half_vector_rows(e))
    return false;
  const uint64_t len = k->dims[1];
  const uint32_t size = dmlc_dtype_size(k->read_dtype);
  const uint32_t lanes = short_group_bytes(e->vector_bytes, len, size) / size;
  return 2 * len >= lanes && len < lanes && lanes <= ROW_GROUP_MAX_LANES && k->dims[0] > lanes;
}

static bool row_groups(const emit_ctx *e, uint64_t len) {
  const dmlc_kdesc *k = e->k;
  const uint32_t lanes = ec_vector_lanes(e, k->read_dtype);
  return k->rank == 2 && len <= ROW_GROUP_MAX_LEN && len >= lanes && lanes <= ROW_GROUP_MAX_LANES &&
         k->dims[0] >= lanes && !row_gap_bytes(e, len) && (one_pass(e, len) || group_bits(e, len));
}

/* Packed rows that ec_small_rows_matches takes (up to 32 elements) with
 * only index outputs, on vectors under 64 bytes (a 64-byte target narrows
 * some to 32 first: ec_narrow_rows), that
 * go to the row groups instead: 8- and 16-bit rows of 8 bytes or more
 * (short_row_groups under a vector, row_groups from one), 32- and 64-bit
 * ones over SMALL_GROUPS_MAX_LEN. The short rows' de-interleaving costs
 * more a row the longer the row; the groups' about the same for any row
 * under a few vectors. Alternated on a Zen 3, two threads, 12 MB in the
 * L3, groups over de-interleaving as time: AVX2 f16 [*,16] 0.66, [*,21]
 * 0.53, [*,32] 0.43, u16 [*,16] 0.57, [*,32] 0.37, f32 [*,20] 0.77,
 * [*,24] 0.58, [*,32] 0.55, i32 [*,24] 0.81, [*,32] 0.64, i64 [*,24]
 * 0.91, [*,32] 0.93; SSE4.2 u8 [*,16] 0.77, [*,21] 0.48, [*,24] 0.39,
 * f16 [*,8] 0.88, [*,16] 0.52, [*,32] 0.47, f32 [*,20] 0.83, [*,28]
 * 0.77; from DRAM (AVX2) u8 [*,21] 0.43, i8 [*,28] 0.40, f16 [*,24] 0.59,
 * f32 [*,20] 0.60, [*,24] 0.68. Rows of 16 and under lost where they are
 * 32 or 64 bits: SSE4.2 f32 [*,8] 1.30, [*,12] 1.18, [*,16] 1.06, AVX2
 * i64 [*,8] 1.35, [*,16] 1.07 (but AVX2 f32 [*,16] 0.81).
 *
 * With 64-byte vectors (a Zen 5, AVX-512) the packed rows ec_narrow_rows
 * leaves at 64 bytes stay with the de-interleaving, except f32 rows of
 * WIDE_GROUPS_MIN_LEN to WIDE_GROUPS_MAX_LEN in the caches, in row groups
 * (of 32-byte vectors, as every f32 row under ROW_NARROW_F32_BYTES on such
 * a target: ec_emit_row): two threads in the L3 (4 MB) f32 [*,16] 0.66-0.74,
 * [*,18] 0.71, [*,20] 0.59-0.68, [*,23] 0.52-0.59; one thread in the L2
 * [*,16] 0.64-0.71, [*,20] 0.59-0.66, [*,23] 0.52-0.54 (the
 * de-interleaving of a 16-element f32 row spilled: 34 instructions a row).
 * Not f32 [*,14] (1.01), nor i32 (16: 1.0-1.18, 17: 1.05-1.09, 20:
 * 0.77-0.96). Narrowed f32 rows of 16 from DRAM (ec_narrow_rows) go in
 * groups too: 0.70-0.74 of the de-interleaving at 32 bytes. */
enum { WIDE_GROUPS_MIN_LEN = 16, WIDE_GROUPS_MAX_LEN = 23 };
bool ec_rows_as_groups(const emit_ctx *e) {
  const dmlc_kdesc *k = e->k;
  if (k->rank != 2)
    return false;
  const uint64_t len = k->dims[1];
  const bool f32 = k->read_dtype == DMLC_DTYPE_F32;
  if (e->target_vector_bytes >= 64)
    return f32 && !e->from_dram && len >= WIDE_GROUPS_MIN_LEN && len <= WIDE_GROUPS_MAX_LEN &&
           index_outputs(e) && row_groups(e, len);
  if (len < ec_vector_lanes(e, k->read_dtype))
    return short_row_groups(e) || half_vector_rows(e);
  return index_outputs(e) && row_groups(e, len) &&
         (bits_type(e) || len > SMALL_GROUPS_MAX_LEN ||
          (e->narrowed_rows && f32 && len == SMALL_GROUPS_MAX_LEN));
}

/* Packed rows (index outputs only) that a target with 64-byte vectors
 * and row_narrow_bytes 32 (x86 with AVX-512) emits as for a 32-byte target
 * (ec_narrow_rows): [*lo, *hi] elements a row, by the element size and
 * whether the read is from DRAM. There the row groups, short and
 * half-vector groups and packed rows (measured and tuned on AVX2) take
 * them; with 64-byte vectors they went to the short rows' de-interleaving
 * (up to 32) or whole rows. Alternated on a Zen 5 (AVX-512), new over old
 * time, two threads from DRAM (50 MB): u8 [*,12] 0.47, [*,21] 0.50,
 * [*,24] 0.22, [*,32] 0.32, [*,64] 0.19, [*,100] 0.20, [*,200] 0.30-0.35,
 * [*,256] 0.40, i8 [*,40] 0.59, f16 [*,12] 0.74, [*,24] 0.29, [*,80]
 * 0.80-0.92, [*,128] 0.82, i16 [*,16] 0.56, [*,100] 0.77, u16 [*,24]
 * 0.45, f32 [*,16] 0.75, [*,24] 0.51, [*,32] 0.28-0.32, i32 [*,12] 0.56,
 * i64 [*,8] 0.54-0.56, [*,32] 0.69; two threads in the L3 (4 MB): u8
 * [*,12] 0.41, [*,24] 0.18, [*,64] 0.31, [*,100] 0.38-0.66, f16 [*,32]
 * 0.35, [*,128] 0.67-0.73, i16 [*,30] 0.15-0.19, f32 [*,24] 0.42, [*,48]
 * 0.76, [*,80] 0.88, i32 [*,32] 0.52; one thread in the L2 (1 MB): u8
 * [*,24] 0.17, f16 [*,64] 0.86, f32 [*,24] 0.45, [*,80] 0.88. Outside
 * these spans they lost: rows of 10 or fewer elements (u8 [*,8] 1.5-2.3,
 * f16 [*,8] 1.25-1.8, f32 [*,8] 1.2-1.35: the de-interleaving at 64 bytes
 * is faster there), f32 [*,12] 1.1 from DRAM, f16 [*,12] 1.05 in the L2,
 * 8-bit rows of 65-256 within two L2s 1.15-1.8 and 16-bit (not f16) rows
 * of 100-200 1.1-1.4 (the two passes at 64 bytes), 16-bit rows of 200-256
 * from DRAM 1.7-2.2, f32 rows of 48-256 from DRAM 1.0-1.16; i64 rows in
 * the caches and u8 [*,400..512] tied. 8-bit rows past 64 elements and
 * two L2s ended each row on a branch on their data (the search's early
 * exit, mispredicted about once a row on random bytes), and the next rows'
 * loads waited for it: u8 [*,100] read 6 GB/s on one thread, 8-19 on two.
 * Narrowed (the search flat), two threads (the L2 1 MiB): u8 [*,80..120]
 * 0.21-0.29 at 2.5-3 MB, 0.29-0.55 at 4 MB, 0.17-0.21 at 8 MB (but 1.15-1.3
 * at 2 MB); u8 [*,128..256] 0.27-0.38 at 12 MB, one thread 0.24-0.27 (but
 * at 6 MB 1.27-1.6 by the best times, 0.68-1.24 by medians). */
static void narrow_row_span(const emit_ctx *e, uint64_t *lo, uint64_t *hi) {
  const uint32_t size = dmlc_dtype_size(e->k->read_dtype);
  const bool dram = e->from_dram;
  *lo = *hi = 0;
  if (size == 1) {
    const uint64_t read = ec_read_bytes(e->k), l2 = e->l2_bytes;
    *lo = 12;
    *hi = dram || (l2 && read > 8 * l2) ? 256 : l2 && read > 2 * l2 ? 127 : 64;
  } else if (size == 2) {
    *lo = dram ? 12 : 16;
    *hi = dram || e->k->read_dtype == DMLC_DTYPE_F16 ? 128 : 64;
  } else if (size == 4) {
    *lo = dram ? (e->k->read_dtype == DMLC_DTYPE_F32 ? 14 : 12) : 24;
    *hi = dram ? 32 : 80;
  } else if (dram) {
    *lo = 8;
    *hi = 32;
  }
}

bool ec_narrow_rows(const emit_ctx *e) {
  if (e->vector_bytes != 64 || e->row_narrow_bytes != 32 || !e->k->has_reduction ||
      !ec_packed_index_rows(e))
    return false;
  uint64_t lo, hi;
  narrow_row_span(e, &lo, &hi);
  return e->k->dims[1] >= lo && e->k->dims[1] <= hi;
}

/* The shuffles of a round of the group merge (merge_row_pairs) on
 * vectors of `lanes`, m lanes a row: lm takes the lower m / 2 lanes of
 * each row of x then of y, hm the upper. */
static void pair_masks(emit_ctx *e, uint32_t lanes, uint32_t m, LLVMValueRef *lm,
                       LLVMValueRef *hm) {
  LLVMValueRef lo[ROW_GROUP_MAX_LANES], hi[ROW_GROUP_MAX_LANES];
  const uint32_t h = m / 2;
  for (uint32_t q = 0; q < lanes; q++) {
    const uint32_t side = q < lanes / 2 ? 0 : lanes, qq = q % (lanes / 2);
    const uint32_t src = side + qq / h * m + qq % h;
    lo[q] = ec_i32(e, src);
    hi[q] = ec_i32(e, src + h);
  }
  *lm = LLVMConstVector(lo, lanes);
  *hm = LLVMConstVector(hi, lanes);
}

/* One round of the group merge: x and y hold k rows each, m lanes a row
 * (row j at lanes [j m, (j + 1) m)); the result holds x's rows then y's,
 * m / 2 lanes each. */
static void merge_row_pairs(emit_ctx *e, bool ordered, uint32_t lanes, uint32_t m, LLVMValueRef xv,
                            LLVMValueRef xi, LLVMValueRef yv, LLVMValueRef yi, LLVMValueRef *zv,
                            LLVMValueRef *zi) {
  LLVMValueRef lm, hm;
  pair_masks(e, lanes, m, &lm, &hm);
  LLVMValueRef av = LLVMBuildShuffleVector(e->b, xv, yv, lm, "");
  LLVMValueRef ai = LLVMBuildShuffleVector(e->b, xi, yi, lm, "");
  LLVMValueRef bv = LLVMBuildShuffleVector(e->b, xv, yv, hm, "");
  LLVMValueRef bi = LLVMBuildShuffleVector(e->b, xi, yi, hm, "");
  ec_merge_pair(e, ordered, &av, &ai, bv, bi);
  *zv = av;
  *zi = ai;
}

/* The outputs of row o whose result is idx (i64). */
static void row_outputs(emit_ctx *e, LLVMValueRef o, LLVMValueRef idx, uint64_t len) {
  fill_zeros(e, o, ec_i64(e, 0), ec_i64(e, len), false);
  store_results(e, o, idx, true);
}

/* The group of g rows from row r0: each row's lanes (row_lanes) into
 * vals[q], idxs[q]; a fast pass when nan (row_load); one chain (unroll 1)
 * as straight-line code. With ahead, each row's lines are first
 * prefetched that many bytes ahead, and row_lanes' stream prefetches
 * (rows from DRAM under far_row_prefetch: emit.c) are left out: they would
 * prefetch the same lines again, two a line with 32-byte steps. bench_cpu
 * on a Zen 5, rounds alternated, the span alone against both: f32
 * [524288,80] 93-102% against 88-93% of the fastest loop, f16 113-139%
 * against 100-119% (the stream alone 81-87% and 92-118%). */
static void group_rows(emit_ctx *e, LLVMValueRef r0, uint32_t g, uint64_t len, uint32_t unroll,
                       bool keys, LLVMValueRef nan, LLVMValueRef vals, LLVMValueRef idxs,
                       uint64_t ahead) {
  ec_loop lq;
  LLVMValueRef q = ec_loop_begin(e, &lq, ec_i64(e, 0), ec_i64(e, g), 1);
  LLVMValueRef off = row_base(e, e->k->read_strides, ec_add(e, r0, q));
  if (ahead)
    ec_prefetch_span(e, off, len * dmlc_dtype_size(e->k->read_dtype), ahead);
  const bool stream = e->row_prefetch;
  e->row_prefetch = stream && !ahead;
  LLVMValueRef v, vi;
  row_lanes(e, off, len, unroll, unroll == 1, keys, nan, &v, &vi);
  e->row_prefetch = stream;
  LLVMBuildStore(e->b, v, LLVMBuildGEP2(e->b, LLVMTypeOf(v), vals, &q, 1, ""));
  LLVMBuildStore(e->b, vi, LLVMBuildGEP2(e->b, LLVMTypeOf(vi), idxs, &q, 1, ""));
  ec_loop_end(e, &lq);
}

/* Whether a group's results are stored as vectors: every output an
 * index, one element a row (a group's rows' indices are then contiguous).
 * Else each row's outputs are stored one row at a time. Alternated on a
 * Zen 3 (AVX2, one thread, in L3), vectors over rows as time: f16
 * [8192,80] 0.86, f32 [4096,80] 0.93, u8 [16384,40] 0.72 (groups of 32),
 * f32 [8192,20] 1.0; from DRAM (two threads) f32 and f16 [524288,80]
 * 0.97-1.01. */
static bool vector_outputs(const emit_ctx *e) {
  for (uint32_t i = 0; i < e->k->num_outputs; i++)
    if (e->k->outputs[i].kind != DMLC_KOUT_INDEX || e->k->outputs[i].strides[0] != 1)
      return false;
  return true;
}

/* A group's rows' lanes (group_rows) and where their results go. */
typedef struct group_out {
  LLVMValueRef r0, vals, idxs; /* the group's first row; arrays of its rows' lanes */
  LLVMValueRef nt;             /* vector outputs stored non-temporal (group_nt), or NULL */
  uint64_t len;
  LLVMTypeRef vt, it; /* vals' and idxs' vector types */
} group_out;

/* Whether a group's vector outputs (vector_outputs) are stored around the
 * caches: where every output is large beside the read (ec_nt_bytes: short
 * rows), a group's store is a whole line or more, and the outputs are
 * aligned for it (an i1, computed once), else NULL. From DRAM on a Zen 3
 * (AVX2, two threads), with over without: u8 [*,8] 0.91, i8 [*,12] 0.97,
 * u8 [*,21] 0.92, u16 [*,12] a tie; stores of 32 bytes (f16 [*,7] in
 * groups of 8) 1.18. */
static LLVMValueRef group_nt(emit_ctx *e, uint32_t g) {
  if (!vector_outputs(e))
    return NULL;
  for (uint32_t i = 0; i < e->k->num_outputs; i++)
    if (!ec_index_nt(e, i) || (uint64_t)g * dmlc_dtype_size(e->k->outputs[i].dtype) < 64)
      return NULL;
  return ec_index_nt_aligned(e, g);
}

/* Whether a group's merge packs each candidate into one integer
 * (packed_results): 8- and 16-bit compares beside positions as wide, on
 * vectors under 64 bytes (not measured with 64). Packed over value and
 * position merged apart, as time, on a Zen 3 (AVX2, one thread, in L3):
 * f16 [8192,80] 0.91, [8192,160] 0.93, u16 [8192,80] 0.87, i16
 * [8192,48] 0.83, u8 [16384,40] 0.78, i8 [16384,48] 0.82; SSE4.2 f16
 * [8192,80] 0.95, u8 [16384,24] 0.98; from DRAM (two threads) f16
 * [524288,80] 0.96-0.99. */
static bool packs(const emit_ctx *e, const group_out *o) {
  LLVMTypeRef ct = LLVMGetElementType(o->vt);
  return e->target_vector_bytes < 64 && LLVMGetTypeKind(ct) == LLVMIntegerTypeKind &&
         LLVMGetIntTypeWidth(ct) <= 16 && ct == LLVMGetElementType(o->it);
}

/* How a group's merge packs each candidate (packs): one integer (wt) of
 * twice the positions' width, the value above the position, complemented
 * (invert) where the least position of equal values wins the extreme, so
 * that each merge is one integer op (max or min): no compare of positions
 * and no blend. lo and hi pack a row's g lanes of positions p and values v
 * into two vectors of g / 2 candidates: lo the lower half of each 16 bytes
 * of lanes, hi the upper (x86's unpacks stay within 16 bytes; a row's
 * merge does not mind the order of its lanes). */
typedef struct packing {
  LLVMTypeRef wt;
  const char *op;
  bool invert;
  uint64_t least; /* the candidate no other loses to (op's identity), as wt's bits */
  uint32_t chunk; /* lanes a 16 bytes: lane q is in hi where q % chunk >= chunk / 2 */
  LLVMValueRef lo, hi;
} packing;

static packing packing_of(emit_ctx *e, LLVMTypeRef ix, uint32_t g) {
  const dmlc_kdesc *k = e->k;
  const unsigned w = LLVMGetIntTypeWidth(ix);
  const bool mx = k->reduction == DMLC_OP_ARGMAX;
  const bool s = group_keys(e) || dmlc_dtype_get(k->read_dtype)->kind == DMLC_KIND_SIGNED;
  const uint64_t top = 1ull << (2 * w - 1);
  packing pk = {.wt = LLVMIntTypeInContext(e->c, 2 * w),
                .op = mx ? (s ? "smax" : "umax") : (s ? "smin" : "umin"),
                .invert = mx == (k->direction == DMLC_DIRECTION_INCREASING),
                .least = mx ? (s ? top : 0) : (s ? top - 1 : 2 * top - 1),
                .chunk = 128 / w < g ? 128 / w : g};
  const uint32_t chunk = pk.chunk;
  LLVMValueRef lo[ROW_GROUP_MAX_LANES], hi[ROW_GROUP_MAX_LANES];
  for (uint32_t q = 0, n = 0; q < g; q++) {
    if (q % chunk >= chunk / 2)
      continue;
    lo[2 * n] = ec_i32(e, q);             /* the position, low */
    lo[2 * n + 1] = ec_i32(e, g + q);     /* the value, high */
    hi[2 * n] = ec_i32(e, q + chunk / 2); /* the same, upper half */
    hi[2 * n + 1] = ec_i32(e, g + q + chunk / 2);
    n++;
  }
  pk.lo = LLVMConstVector(lo, g);
  pk.hi = LLVMConstVector(hi, g);
  return pk;
}

/* One half (mask: pk->lo or pk->hi) of the candidates of lanes' positions
 * p and values v: g / 2 lanes of pk->wt. */
static LLVMValueRef pack_half(emit_ctx *e, const packing *pk, LLVMValueRef p, LLVMValueRef v,
                              LLVMValueRef mask) {
  LLVMTypeRef ht = LLVMVectorType(pk->wt, LLVMGetVectorSize(LLVMTypeOf(v)) / 2);
  return LLVMBuildBitCast(e->b, LLVMBuildShuffleVector(e->b, p, v, mask, ""), ht, "");
}

/* A row's candidates packed (packing) from its lanes' positions p (already
 * complemented where pk->invert) and values v, halved by one merge: g / 2
 * lanes of pk->wt. */
static LLVMValueRef pack_row(emit_ctx *e, const packing *pk, LLVMValueRef p, LLVMValueRef v) {
  return ec_minmax(e, pk->op, pack_half(e, pk, p, v, pk->lo), pack_half(e, pk, p, v, pk->hi));
}

/* The constant positions (ix, complemented where pk->invert) of g lanes
 * from element at of a row of len; lanes past the row hold the position
 * bits of pk->least. */
static LLVMValueRef pack_positions(const packing *pk, LLVMTypeRef ix, uint64_t at, uint32_t g,
                                   uint64_t len) {
  const uint64_t half = (1ull << LLVMGetIntTypeWidth(ix)) - 1;
  LLVMValueRef p[ROW_GROUP_MAX_LANES];
  for (uint32_t l = 0; l < g; l++) {
    const uint64_t q = at + l, bits = q >= len ? pk->least : pk->invert ? ~q : q;
    p[l] = LLVMConstInt(ix, bits & half, false);
  }
  return LLVMConstVector(p, g);
}

/* A row's candidates packed (packing) straight from its loads: each
 * vector of g lanes from read offset off (f16 as exact keys when keys)
 * with its positions (constants), each half (pk->lo, pk->hi) that holds a
 * position not yet seen merged into one vector of g / 2 candidates. No
 * compare and blend a vector, and no pack at the row's end (packed_rows). */
static LLVMValueRef packed_row(emit_ctx *e, const packing *pk, LLVMValueRef off, uint64_t len,
                               uint32_t g, LLVMTypeRef ix, bool keys) {
  LLVMValueRef acc = NULL;
  for (uint64_t q = 0; q < len; q += g) {
    const uint64_t at = q + g <= len ? q : len - g;
    LLVMValueRef x = row_load(e, ec_add(e, off, ec_i64(e, at)), g, keys, NULL);
    LLVMValueRef pos = pack_positions(pk, ix, at, g, len);
    bool fresh[2] = {false, false}; /* whether lo, hi hold a position from q */
    for (uint32_t l = 0; l < g; l++)
      fresh[l % pk->chunk >= pk->chunk / 2] |= at + l >= q;
    const LLVMValueRef masks[2] = {pk->lo, pk->hi};
    for (int h = 0; h < 2; h++) {
      if (!fresh[h])
        continue;
      LLVMValueRef c = pack_half(e, pk, pos, x, masks[h]);
      acc = acc ? ec_minmax(e, pk->op, acc, c) : c;
    }
  }
  return acc;
}

/* A group's packed candidates (packing) merged across rows as they come,
 * rows in order, as a binary counter: each row's vector (h = g / 2
 * candidates) enters at level 0; two vectors of level k (2^k rows, h >> k
 * lanes a row) merge as merge_row_pairs does into one of level k + 1,
 * until two vectors of h rows (one lane each) are left. At most log2 g + 1
 * vectors live at once: nothing need be stored between rows. */
typedef struct row_merger {
  const packing *pk;
  uint32_t g, depth;
  LLVMValueRef v[8];
  uint32_t level[8];
} row_merger;

static void merger_add(emit_ctx *e, row_merger *m, LLVMValueRef v) {
  const uint32_t h = m->g / 2;
  uint32_t level = 0;
  while (m->depth && m->level[m->depth - 1] == level && (h >> level) > 1) {
    LLVMValueRef x = m->v[--m->depth], lo, hi;
    pair_masks(e, h, h >> level, &lo, &hi);
    v = ec_minmax(e, m->pk->op, LLVMBuildShuffleVector(e->b, x, v, lo, ""),
                  LLVMBuildShuffleVector(e->b, x, v, hi, ""));
    level++;
  }
  m->v[m->depth] = v;
  m->level[m->depth++] = level;
}

/* The merged rows' positions: g lanes of it, rows in order. */
static LLVMValueRef merger_positions(emit_ctx *e, const row_merger *m, LLVMTypeRef it) {
  LLVMValueRef all[ROW_GROUP_MAX_LANES];
  for (uint32_t q = 0; q < m->g; q++)
    all[q] = ec_i32(e, q);
  LLVMValueRef rows =
      LLVMBuildShuffleVector(e->b, m->v[0], m->v[1], LLVMConstVector(all, m->g), "");
  LLVMValueRef pos = LLVMBuildTrunc(e->b, rows, it, "");
  return m->pk->invert ? LLVMBuildNot(e->b, pos, "") : pos;
}

/* The group's rows' positions (g lanes of it, rows in order) from their
 * packed candidates gv (pack_row, g / 2 lanes each). */
static LLVMValueRef packed_rounds(emit_ctx *e, const packing *pk, LLVMValueRef *gv, uint32_t g,
                                  LLVMTypeRef it) {
  row_merger m = {.pk = pk, .g = g};
  for (uint32_t r = 0; r < g; r++)
    merger_add(e, &m, gv[r]);
  return merger_positions(e, &m, it);
}

/* The group's rows' positions (g lanes, rows in order) from their lanes'
 * values gv and positions gi, merged packed (packing). */
static LLVMValueRef packed_results(emit_ctx *e, const group_out *o, LLVMValueRef *gv,
                                   const LLVMValueRef *gi) {
  const uint32_t g = LLVMGetVectorSize(o->vt);
  const packing pk = packing_of(e, LLVMGetElementType(o->it), g);
  for (uint32_t r = 0; r < g; r++)
    gv[r] = pack_row(e, &pk, pk.invert ? LLVMBuildNot(e->b, gi[r], "") : gi[r], gv[r]);
  return packed_rounds(e, &pk, gv, g, o->it);
}

/* Each output's vector of the group's positions (wide: g lanes of i64),
 * non-temporal when nt. */
static void vector_stores(emit_ctx *e, const group_out *o, LLVMValueRef wide, bool nt) {
  for (uint32_t i = 0; i < e->k->num_outputs; i++) {
    const dmlc_kout *out = &e->k->outputs[i];
    LLVMValueRef at = row_base(e, out->strides, o->r0);
    LLVMValueRef v = ec_convert(e, wide, DMLC_DTYPE_U64, out->dtype);
    if (nt)
      ec_store_nt(e, out->dtype, e->out[i], at, v);
    else
      ec_store(e, out->dtype, e->out[i], at, v);
  }
}

/* The group's outputs from its rows' positions pos (g lanes, rows in
 * order): vectors (vector_outputs; non-temporal where o->nt holds), or
 * row by row through o->idxs. */
static void group_store(emit_ctx *e, const group_out *o, LLVMValueRef pos) {
  const uint32_t g = LLVMGetVectorSize(o->vt);
  if (vector_outputs(e)) {
    LLVMValueRef wide = LLVMBuildZExt(e->b, pos, LLVMVectorType(e->i64, g), "");
    if (o->nt) {
      ec_if f;
      ec_if_begin(e, &f, o->nt);
      vector_stores(e, o, wide, true);
      ec_if_else(e, &f);
      vector_stores(e, o, wide, false);
      ec_if_end(e, &f);
    } else {
      vector_stores(e, o, wide, false);
    }
    return;
  }
  LLVMTypeRef ix = LLVMGetElementType(o->it);
  LLVMValueRef zero = ec_i64(e, 0);
  LLVMBuildStore(e->b, pos, LLVMBuildGEP2(e->b, o->it, o->idxs, &zero, 1, ""));
  ec_loop lo;
  LLVMValueRef q = ec_loop_begin(e, &lo, ec_i64(e, 0), ec_i64(e, g), 1);
  LLVMValueRef at = LLVMBuildGEP2(e->b, ix, o->idxs, &q, 1, "");
  row_outputs(e, ec_add(e, o->r0, q),
              LLVMBuildZExt(e->b, LLVMBuildLoad2(e->b, ix, at, ""), e->i64, ""), o->len);
  ec_loop_end(e, &lo);
}

/* The group's rows' lanes merged (packed_results, or merge_row_pairs;
 * ordered: as ec_merge_pair) into each row's result, and its outputs. */
static void group_results(emit_ctx *e, const group_out *o, bool ordered) {
  const uint32_t g = LLVMGetVectorSize(o->vt);
  LLVMValueRef gv[ROW_GROUP_MAX_LANES] = {0}, gi[ROW_GROUP_MAX_LANES] = {0};
  for (uint32_t r = 0; r < g; r++) {
    LLVMValueRef at = ec_i64(e, r);
    gv[r] = LLVMBuildLoad2(e->b, o->vt, LLVMBuildGEP2(e->b, o->vt, o->vals, &at, 1, ""), "");
    gi[r] = LLVMBuildLoad2(e->b, o->it, LLVMBuildGEP2(e->b, o->it, o->idxs, &at, 1, ""), "");
  }
  if (packs(e, o)) {
    gi[0] = packed_results(e, o, gv, gi);
  } else {
    uint32_t n = g;
    for (uint32_t m = g; m > 1; m /= 2, n /= 2)
      for (uint32_t p = 0; p < n / 2; p++)
        merge_row_pairs(e, ordered, g, m, gv[2 * p], gi[2 * p], gv[2 * p + 1], gi[2 * p + 1],
                        &gv[p], &gi[p]);
  }
  group_store(e, o, gi[0]);
}

/* Whether a group's rows are packed as they load (packed_row): one chain
 * a row, a merge that packs, and rows of at most PACKED_ROW_MAX_VECS
 * vectors (f16 two: its exact keys, packed_group, cost more a vector; at
 * three and four AVX2 f16 [8192,48] and [8192,64] took 1.08 of the time),
 * or 8-bit rows of any length on 16-byte vectors. Each vector
 * then costs two shuffles and two integer max (or min), where the chain
 * cost a compare and two blends (8-bit unsigned: a min, an equality and a
 * max for the compare), and the row's pack at its end is gone. Alternated
 * on a Zen 3, new over old time: SSE4.2, one thread in the L2, u8 [*,21]
 * 0.77, [*,30] 0.83, [*,40] 0.74, [*,64] 0.89, [*,128] 0.84, [*,200]
 * 0.83, i8 [*,100] 0.91, i16 [*,16] 0.89, u16 [*,28] 0.74, [*,32] 0.84,
 * f16 [*,20] 0.90, [*,32] 0.92, but i16 [*,30] 1.02, and from five
 * vectors a near tie or a loss (f16 [*,40] 0.96, i16 [*,48] 1.12); two
 * threads from DRAM u8 [4194304,21] 0.75-0.80, [*,17] 0.79, [*,24] 0.78,
 * [*,31] 0.88, i16 [*,9] 0.85, f16 [*,12] 0.89-0.93, i16 [*,30]
 * 1.0-1.07. AVX2, in the L2: u8 [*,40] 0.81, [*,48] 0.89, f16 [*,20]
 * 0.81, [*,40] 0.92-0.96, [*,48] 0.92, [*,64] 0.89-0.94, u16 [*,24] 0.81,
 * [*,56] 0.85-0.92, i16 [*,32] 0.83, but 8-bit rows of three or four
 * vectors a tie (u8 [*,80] and [*,100], i8 [*,128]); from DRAM u8 [*,40]
 * 0.94, [*,60] 0.90, f16 [*,24] 0.95. */
static bool packed_rows(const emit_ctx *e, const group_out *o, uint32_t unroll) {
  const uint64_t lanes = LLVMGetVectorSize(o->vt);
  if (unroll != 1 || !packs(e, o))
    return false;
  if (group_keys(e))
    return o->len <= 2 * lanes;
  return o->len <= PACKED_ROW_MAX_VECS * lanes ||
         (dmlc_dtype_size(e->k->read_dtype) == 1 && e->target_vector_bytes == 16);
}

/* The positions of a group's packed rows (packed_rows), f16 by exact keys
 * (ec_f16_key; no fast pass to take again), each row's lines first
 * prefetched `ahead` bytes ahead where ahead. Rows of up to
 * PACKED_ROW_MAX_VECS vectors go as straight-line code, merged as they
 * come (row_merger): stored to the stack and merged after (a loop of
 * rows), one thread in the L2 took 13 us in some processes and 30 in
 * others for u8 [16384,16] on 16-byte vectors, where the stack and the
 * read were 4 KiB apart and a row's loads waited on the stores before
 * them. Longer rows (8-bit on 16-byte vectors) go as a loop: as
 * straight-line code LLVM hoisted their loads and spilled (i8 [2048,200]
 * 1.24x the time), as it did for f16 keys with a fast pass's NaN check
 * (one chain through every vector; f16 [8192,24] 1.4-1.6x the time; the
 * exact keys cost a compare and a blend a vector). */
static LLVMValueRef packed_group(emit_ctx *e, const group_out *o, uint64_t ahead) {
  const uint32_t g = LLVMGetVectorSize(o->vt);
  LLVMTypeRef ix = LLVMGetElementType(o->it);
  const packing pk = packing_of(e, ix, g);
  const bool keys = group_keys(e);
  const uint64_t row_bytes = o->len * dmlc_dtype_size(e->k->read_dtype);
  if (o->len <= (uint64_t)PACKED_ROW_MAX_VECS * g) {
    row_merger m = {.pk = &pk, .g = g};
    for (uint32_t r = 0; r < g; r++) {
      LLVMValueRef off = row_base(e, e->k->read_strides, ec_add(e, o->r0, ec_i64(e, r)));
      if (ahead)
        ec_prefetch_span(e, off, row_bytes, ahead);
      merger_add(e, &m, packed_row(e, &pk, off, o->len, g, ix, keys));
    }
    return merger_positions(e, &m, o->it);
  }
  LLVMTypeRef ht = LLVMVectorType(pk.wt, g / 2);
  ec_loop lq;
  LLVMValueRef q = ec_loop_begin(e, &lq, ec_i64(e, 0), ec_i64(e, g), 1);
  LLVMValueRef off = row_base(e, e->k->read_strides, ec_add(e, o->r0, q));
  if (ahead)
    ec_prefetch_span(e, off, row_bytes, ahead);
  LLVMBuildStore(e->b, packed_row(e, &pk, off, o->len, g, ix, keys),
                 LLVMBuildGEP2(e->b, ht, o->vals, &q, 1, ""));
  ec_loop_end(e, &lq);
  LLVMValueRef gv[ROW_GROUP_MAX_LANES];
  for (uint32_t r = 0; r < g; r++) {
    LLVMValueRef at = ec_i64(e, r);
    gv[r] = LLVMBuildLoad2(e->b, ht, LLVMBuildGEP2(e->b, ht, o->vals, &at, 1, ""), "");
  }
  return packed_rounds(e, &pk, gv, g, o->it);
}

/* A short row group (short_row_groups): each row one vector from its
 * start (row_load; a fast pass when nan), the lanes past the row made the
 * least candidate (packing's least): its value half by one blend, its
 * position half in the constant positions. No lane of the row loses to
 * it: equal, a lane's candidate is the least itself, whose position bits
 * are then the lane's own (0 or ~0: position 0). */
static void short_group(emit_ctx *e, const group_out *o, bool keys, LLVMValueRef nan) {
  const uint32_t g = LLVMGetVectorSize(o->vt);
  LLVMTypeRef ct = LLVMGetElementType(o->vt), ix = LLVMGetElementType(o->it);
  const packing pk = packing_of(e, ix, g);
  LLVMValueRef least = ec_splat(e, LLVMConstInt(ct, pk.least >> LLVMGetIntTypeWidth(ix), false), g);
  LLVMValueRef m[ROW_GROUP_MAX_LANES];
  for (uint32_t q = 0; q < g; q++)
    m[q] = LLVMConstInt(e->i1, q < o->len, false);
  LLVMValueRef in_row = LLVMConstVector(m, g), pos = pack_positions(&pk, ix, 0, g, o->len);
  row_merger rm = {.pk = &pk, .g = g};
  for (uint32_t r = 0; r < g; r++) {
    LLVMValueRef x =
        row_load(e, row_base(e, e->k->read_strides, ec_add(e, o->r0, ec_i64(e, r))), g, keys, nan);
    merger_add(e, &rm, pack_row(e, &pk, pos, LLVMBuildSelect(e->b, in_row, x, least, "")));
  }
  group_store(e, o, merger_positions(e, &rm, o->it));
}

/* A task is a group of G rows; the last task also the rows after the last
 * whole group, one at a time. */
static void emit_row_groups(emit_ctx *e, const char *name, dmlc_cpu_kernel_info *info) {
  const dmlc_kdesc *k = e->k;
  const uint64_t len = k->dims[1], rows = k->dims[0];
  const uint32_t g = ec_vector_lanes(e, k->read_dtype);
  const uint64_t groups = (len < g ? rows - 1 : rows) / g; /* short rows: short_row_groups */
  /* Rows under 16 vectors: one chain a row, its steps straight-line code
   * (the group's rows run side by side), or with 64-byte vectors two (one
   * is not measured there). Two chains over four, on a Zen 5: f32 [*,33]
   * 0.79-0.89 of the time, [*,80] 0.87-0.97, [*,128] a tie, [*,200] 1.1.
   * One straight-line chain over two in a loop, on a Zen 3 (AVX2, one
   * thread): in L2 f32 [768,80] 0.76-0.81, f16 [1536,80] 0.90-1.01; in
   * L3 f32 [4096,40] 0.91, [4096,80] 0.82, [2048,160] 1.0, f16 [8192,80]
   * 0.85-1.06 (with the machine's drift), [8192,160] 0.83, u16 [8192,80]
   * 0.92; from DRAM (two threads) f32 and f16 [524288,80] 0.99-1.01. One
   * chain as a loop lost (f16 [*,80] 1.43). */
  uint32_t unroll = one_pass_unroll(e, g, len);
  if (len < 16ull * g && unroll > 2)
    unroll = 2;
  if (len < 16ull * g && e->target_vector_bytes < 64)
    unroll = 1;
  const bool keys = group_keys(e);
  /* f32 first by ordered compares, every value added to a sum (one mask
   * compare on each accumulator's chain, not two), f16 by keys without
   * the NaN rule, their magnitudes' maximum kept (row_load); a group that
   * saw a NaN (for f32 also infinities of both signs) is taken again by
   * the exact rule (packed f16 rows, packed_group, take exact keys at
   * once). From DRAM f32 [*,80] 0.85-0.96 of the time, [*,48]
   * 0.95-0.97, [*,200] 0.95, f16 [*,80] 0.79-0.94 (one thread
   * 0.83-0.90); in the L3 f32 [*,80] 0.81-0.95, f16 [*,48] 0.86-1.0. */
  const bool fast = k->read_dtype == DMLC_DTYPE_F32 || keys;
  LLVMTypeRef ct = keys ? e->i16 : ec_cmp_type(e, k->read_dtype), vt = LLVMVectorType(ct, g);
  LLVMTypeRef ix = row_index_type(e, ct, len), it = LLVMVectorType(ix, g);
  LLVMValueRef begin, end;
  ec_function_begin(e, name, true, &begin, &end);
  LLVMValueRef vals = ec_array(e, vt, g, 64), idxs = ec_array(e, it, g, 64);
  LLVMValueRef nt = group_nt(e, g);
  ec_loop lt;
  LLVMValueRef t = ec_loop_begin(e, &lt, begin, end, 1);
  LLVMValueRef r0 = ec_mul(e, t, g);
  /* From DRAM on vectors under 64 bytes, the read is prefetched ahead.
   * Rows of a line or more prefetch their own lines ROW_GROUP_AHEAD_BYTES
   * ahead as each row begins (group_rows); groups of shorter rows (and
   * short rows' groups) prefetch the group's lines GROUP_AHEAD_BYTES ahead
   * as the group begins (prefetch_lines), where per row they would touch
   * each line several times.
   *
   * The group's prefetches were all at its start once: bench_cpu on a Zen
   * 3 (AVX2), rounds against the plain loop, with over without them: f32
   * [524288,80] 83-87% against 80-87%, f16 87-93% against 80-88%, u16
   * 87-99% against 82-90%, i8 [1048576,40] 80-98% against 68-73%. Such a
   * burst (40 lines for f32 [*,80]) left one thread reading from DRAM as
   * if it never computed meanwhile: its time was the plain loop's plus its
   * time from the L3, and 3-16 KiB ahead changed nothing. Alternated on
   * the Zen 3 (two threads), the burst over each row's lines as time: AVX2
   * f32 [524288,80] 1.19, f16 1.16, u16 1.08, u8 [1048576,48] 1.09, f32
   * [262144,200] 1.11, i8 [1048576,40] a tie; SSE4.2 f32, f16 and u16
   * [524288,80] a tie, f32 [262144,200] 1.28; bench_cpu's classes went
   * from 85-88% of the plain loop to 101-106%. 512 and 2048 bytes ahead
   * lost 1.0-1.06 against 1024. For rows under a line, the burst over each
   * row's prefetch: SSE4.2 u8 [4194304,21] 0.88, [*,40] 0.93, f16 [*,20]
   * 1.05; AVX2 u8 [*,33] and [*,48], f16 [*,20], f32 [*,17] 0.96-1.04. On
   * a Zen 5 (AVX-512) groups took 1.0-1.27 of the time with
   * prefetch_ahead.
   *
   * With far_row_prefetch (the Zen 5's tuning) rows of a line or more
   * prefetch their lines EC_FAR_AHEAD_BYTES ahead, with 64-byte vectors
   * too: the hardware prefetcher alone kept one stream a thread well under
   * the plain loop's speed there (a C model of f32 [524288,80], one row's
   * argmax after another: 56-58 GB/s, prefetched 2 KiB ahead the same, 4
   * KiB 65, 8 KiB 72, 16 KiB 77-81, 32-64 KiB 77-78, 128 KiB 73; the plain loop 93).
   * Alternated in one build, 3 rounds (two threads, 84-210 MB), 16 KiB
   * over none with AVX-512: f32 [524288,80] 0.68-0.90, f16 0.78-0.81, u16
   * 0.82-0.90, i16 0.84-0.95, f32 [1048576,40] 0.81-0.85, [262144,200]
   * 0.81-0.89, f16 [262144,200] 0.79-0.88; 8, 24 and 32 KiB within the
   * noise of 16. 16 KiB over 1 KiB with AVX2: f32 [524288,80] 0.70-0.79,
   * f16 0.53-0.72, u16 0.65-0.69, f32 [262144,200] 0.62-0.71; with
   * SSE4.2: 0.86-1.0, 0.88-0.93, 0.86-0.87. Groups of rows under a line
   * keep their 2 KiB burst under narrower vectors and none under 64-byte
   * ones (a burst 16 KiB ahead under AVX-512: u8 [*,48] and i8 [*,40]
   * 0.87-0.94 in one run, 0.87-1.0 in another, f16 [*,20] 0.95 and
   * 1.03-1.07; u8 [*,21], f32 [*,12] within the noise). */
  const bool dram = e->from_dram && e->prefetch_bytes, narrow = e->target_vector_bytes < 64;
  const uint64_t row_bytes = len * dmlc_dtype_size(k->read_dtype);
  const bool burst = len < g || row_bytes < 64;
  if (dram && narrow && burst)
    prefetch_lines(e, row_base(e, k->read_strides, r0), g * row_bytes, GROUP_AHEAD_BYTES);
  const uint64_t row_ahead = !dram || burst        ? 0
                             : e->far_row_prefetch ? EC_FAR_AHEAD_BYTES
                             : narrow              ? ROW_GROUP_AHEAD_BYTES
                                                   : 0;
  ec_if whole;
  ec_if_begin(e, &whole, LLVMBuildICmp(e->b, LLVMIntULT, t, ec_i64(e, groups), ""));
  {
    LLVMValueRef nan = NULL;
    if (fast) {
      nan = ec_var(e, vt, "nan");
      LLVMBuildStore(e->b, LLVMConstNull(vt), nan);
    }
    const group_out out = {
        .r0 = r0, .len = len, .vals = vals, .idxs = idxs, .nt = nt, .vt = vt, .it = it};
    if (len < g) {
      /* a NaN seen: the group again by the exact rule, its outputs over */
      short_group(e, &out, keys, nan);
      if (fast) {
        ec_if again;
        ec_if_begin(e, &again, saw_nan(e, nan, keys));
        short_group(e, &out, keys, NULL);
        ec_if_else(e, &again);
        ec_if_end(e, &again);
      }
    } else if (packed_rows(e, &out, unroll)) {
      group_store(e, &out, packed_group(e, &out, row_ahead));
    } else {
      group_rows(e, r0, g, len, unroll, keys, nan, vals, idxs, row_ahead);
      if (fast) {
        /* f32 merges by ordered compares where no NaN was seen */
        ec_if again;
        ec_if_begin(e, &again, saw_nan(e, nan, keys));
        group_rows(e, r0, g, len, unroll, keys, NULL, vals, idxs, 0);
        group_results(e, &out, false);
        ec_if_else(e, &again);
        group_results(e, &out, true);
        ec_if_end(e, &again);
      } else {
        group_results(e, &out, false);
      }
    }
  }
  ec_if_else(e, &whole);
  if (groups * g < rows) {
    ec_loop lr;
    LLVMValueRef o = ec_loop_begin(e, &lr, ec_i64(e, groups * g), ec_i64(e, rows), 1);
    LLVMValueRef val, idx;
    ec_reduce_row(e, row_base(e, k->read_strides, o), len, &val, &idx);
    (void)val;
    row_outputs(e, o, idx, len);
    ec_loop_end(e, &lr);
  }
  ec_if_end(e, &whole);
  ec_loop_end(e, &lt);
  ec_function_end(e);
  info->num_tasks = groups + (groups * g < rows);
  info->bytes_per_task = g * (len * dmlc_dtype_size(k->read_dtype) + output_bytes(k, len));
}

/* Tasks are (row, chunk); each writes its partial and its share of 0s. */
static void emit_split_rows(emit_ctx *e, const char *name, dmlc_cpu_kernel_info *info) {
  const dmlc_kdesc *k = e->k;
  const uint64_t len = k->dims[k->rank - 1], rows = k->rank == 2 ? k->dims[0] : 1;
  const uint64_t chunks = (len + ROW_CHUNK - 1) / ROW_CHUNK;
  const uint64_t last = len - (chunks - 1) * ROW_CHUNK;
  LLVMTypeRef ct = ec_cmp_type(e, k->read_dtype);
  e->use_scratch = true;

  LLVMValueRef begin, end;
  ec_function_begin(e, name, true, &begin, &end);
  LLVMValueRef val_var = ec_var(e, ct, "part"), idx_var = ec_var(e, e->i64, "part_idx");
  ec_loop l;
  LLVMValueRef t = ec_loop_begin(e, &l, begin, end, 1);
  LLVMValueRef o = LLVMBuildUDiv(e->b, t, ec_i64(e, chunks), "row");
  LLVMValueRef c = LLVMBuildURem(e->b, t, ec_i64(e, chunks), "chunk");
  LLVMValueRef start = ec_mul(e, c, ROW_CHUNK);
  LLVMValueRef off = ec_add(e, row_base(e, k->read_strides, o), start);
  LLVMValueRef is_last = LLVMBuildICmp(e->b, LLVMIntEQ, c, ec_i64(e, chunks - 1), "");
  LLVMValueRef val, idx;
  ec_if f;
  ec_if_begin(e, &f, is_last);
  ec_reduce_row(e, off, last, &val, &idx);
  LLVMBuildStore(e->b, val, val_var);
  LLVMBuildStore(e->b, idx, idx_var);
  ec_if_else(e, &f);
  if (chunks > 1) {
    ec_reduce_row(e, off, ROW_CHUNK, &val, &idx);
    LLVMBuildStore(e->b, val, val_var);
    LLVMBuildStore(e->b, idx, idx_var);
  }
  ec_if_end(e, &f);
  LLVMValueRef byte = ec_mul(e, t, PARTIAL_BYTES);
  LLVMValueRef slot = LLVMBuildGEP2(e->b, e->i8, e->scratch, &byte, 1, "");
  LLVMBuildStore(e->b, LLVMBuildLoad2(e->b, ct, val_var, ""), slot);
  LLVMValueRef eight = ec_i64(e, 8);
  LLVMValueRef islot = LLVMBuildGEP2(e->b, e->i8, slot, &eight, 1, "");
  LLVMBuildStore(e->b, ec_add(e, LLVMBuildLoad2(e->b, e->i64, idx_var, ""), start), islot);
  LLVMValueRef count =
      LLVMBuildSelect(e->b, is_last, ec_i64(e, last), ec_i64(e, ROW_CHUNK), "count");
  fill_zeros(e, o, start, count, true);
  ec_loop_end(e, &l);
  ec_function_end(e);

  /* finish: merge each row's partials in chunk order (later chunks have
   * larger indices, so the sequential rule is exact), then store. */
  char finish[256];
  snprintf(finish, sizeof finish, "%s_finish", name);
  ec_function_begin(e, finish, false, NULL, NULL);
  LLVMValueRef best = ec_var(e, ct, "best"), best_idx = ec_var(e, e->i64, "best_idx");
  ec_loop lo;
  o = ec_loop_begin(e, &lo, ec_i64(e, 0), ec_i64(e, rows), 1);
  LLVMValueRef first = ec_mul(e, o, chunks);
  for (int pass = 0; pass < 2; pass++) {
    ec_loop lc;
    LLVMValueRef ci = first;
    if (pass == 1)
      ci = ec_loop_begin(e, &lc, ec_i64(e, 1), ec_i64(e, chunks), 1);
    LLVMValueRef b = ec_mul(e, pass == 1 ? ec_add(e, first, ci) : first, PARTIAL_BYTES);
    LLVMValueRef p = LLVMBuildGEP2(e->b, e->i8, e->scratch, &b, 1, "");
    LLVMValueRef x = LLVMBuildLoad2(e->b, ct, p, "");
    LLVMValueRef xi =
        LLVMBuildLoad2(e->b, e->i64, LLVMBuildGEP2(e->b, e->i8, p, &eight, 1, ""), "");
    if (pass == 0) {
      LLVMBuildStore(e->b, x, best);
      LLVMBuildStore(e->b, xi, best_idx);
      continue;
    }
    LLVMValueRef bv = LLVMBuildLoad2(e->b, ct, best, "");
    LLVMValueRef take = ec_take_next(e, x, bv);
    LLVMBuildStore(e->b, LLVMBuildSelect(e->b, take, x, bv, ""), best);
    LLVMValueRef bi = LLVMBuildLoad2(e->b, e->i64, best_idx, "");
    LLVMBuildStore(e->b, LLVMBuildSelect(e->b, take, xi, bi, ""), best_idx);
    ec_loop_end(e, &lc);
  }
  store_results(e, o, LLVMBuildLoad2(e->b, e->i64, best_idx, ""), false);
  ec_loop_end(e, &lo);
  ec_function_end(e);

  info->num_tasks = rows * chunks;
  info->bytes_per_task =
      ROW_CHUNK * (uint64_t)dmlc_dtype_size(k->read_dtype) + output_bytes(k, ROW_CHUNK);
  info->scratch_bytes = info->num_tasks * PARTIAL_BYTES;
  info->has_finish = true;
}

dmlc_status ec_emit_row(emit_ctx *e, const char *name, dmlc_cpu_kernel_info *info) {
  /* Some rows go at most row_narrow_bytes a load (32 on x86) on a machine
   * with wider vectors (Zen 4, alternated in one process):
   * - A read from DRAM (past stream_prefetch_max_bytes) is one stream per
   *   thread, as in the plain loop, whose 64-byte loads read 0.87-0.90 as
   *   fast as its 32-byte ones (two threads, 256 MiB). These rows took
   *   0.69-0.93 of the time with 32-byte vectors (argmax f32 [8192,8192]
   *   0.88, its hardmax 0.69, over all axes 0.82, i64 rows 0.91), and a
   *   core reads a tenth from DRAM of what 32-byte loads can take.
   * - f32 rows shorter than ROW_NARROW_F32_BYTES pay less per row: half
   *   the block to search again, a shorter reduction across lanes, and from
   *   512 elements (not 1024) the block path. [4096,1000] in the L3 took
   *   0.80-0.87 of the time, [1,1000] 0.75, [8192,300] 0.93; rows of 8192
   *   and more 1.02-1.05, as did long f16 rows.
   * - f16 rows under two of the wide vectors, which would take the
   *   one-pass path (converted to f32): InstCombine folds the compare of
   *   two converted values into a compare of halves, which x86 without
   *   AVX512-FP16 lacks, and LLVM then converts and compares element by
   *   element (750 instructions a row of 40). Narrower, they take the
   *   two-pass path on their bits: f16 [40000,40] in the caches 4.1-5.6 ms
   *   -> 0.1-0.3 ms.
   * - 8-bit rows under two of the wide vectors: under 64 lanes (rows of 33
   *   to 63: longer than the short rows' 32) a row went element by element,
   *   and from 64 to 127 one vector a row. Narrower they take the row groups
   *   or two passes: in the caches (Zen 5, two threads, 4 MB) u8 [*,33..63]
   *   0.06-0.14 of the time (1.7-2.2 GB/s before), [*,64..127] 0.17-0.36,
   *   i8 [*,40] 0.11, [*,100] 0.20-0.22; from 128 the two passes at 64 lanes
   *   were as fast (u8 [*,128..400] 0.87-1.1).
   * Column and merged kernels read many streams at once and keep the
   * widest vectors (32 bytes: 1.00-1.05 of the time). */
  const uint64_t row_bytes =
      (uint64_t)e->k->dims[e->k->rank - 1] * dmlc_dtype_size(e->k->read_dtype);
  if (e->row_narrow_bytes && e->vector_bytes > e->row_narrow_bytes &&
      (e->from_dram || (e->k->read_dtype == DMLC_DTYPE_F32 && row_bytes < ROW_NARROW_F32_BYTES) ||
       ((e->k->read_dtype == DMLC_DTYPE_F16 || dmlc_dtype_size(e->k->read_dtype) == 1) &&
        row_bytes < 2ull * e->vector_bytes)))
    e->vector_bytes = e->row_narrow_bytes;
  const bool short_groups = short_row_groups(e);
  if (short_groups)
    e->vector_bytes =
        short_group_bytes(e->vector_bytes, e->k->dims[1], dmlc_dtype_size(e->k->read_dtype));
  else if (half_vector_rows(e))
    e->vector_bytes = 16;
  if (e->k->dims[e->k->rank - 1] > ROW_SPLIT_MIN)
    emit_split_rows(e, name, info);
  else if (short_groups || row_groups(e, e->k->dims[e->k->rank - 1]))
    emit_row_groups(e, name, info);
  else
    emit_whole_rows(e, name, info);
  return DMLC_OK;
}
