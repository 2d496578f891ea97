/* Columns: space [R, I] or [O, R, I] with the read contiguous along I, or
 * [R, K, X] reduced over R and X with a contiguous (K, X) plane, whose
 * points are then the columns (plane_matches). A
 * task is (o, block of I columns), or, when that gives too few tasks, (o,
 * block, chunk of R rows): blocks stay wide (up to 32 KiB of each row, so
 * rows up to that size are read whole and in storage order, one sequential
 * stream; shorter runs left the hardware prefetcher restarting at every
 * row and held a core to 60% of a sequential read; 32 KiB runs gave
 * 80-88% of the best plain loop on 2 threads, 8 KiB runs 65-70%) and the chunks' partial
 * (value, index) go to scratch for the finish function to merge in chunk
 * order. The block's best values and indices live in two aligned stack
 * arrays (L1 or L2); rows are visited in order, four (32- and 64-bit
 * types) or eight (narrower) per load/store of the accumulators, each row
 * a contiguous run of the block, so the sequential rule stays exact and
 * the reads stream. */
#include <stdio.h>
#include <string.h>

#include "codegen/llvm/emit_internal.h"

enum {
  COLUMN_RUN_BYTES = 32768, /* bytes of each row one block reads, at most */
  /* ... but from DRAM, this many rows this long are read in runs this
   * short (below) */
  COLUMN_SHORT_RUN_ROWS = 32,
  COLUMN_LONG_ROW_BYTES = 512 * 1024,
  COLUMN_SHORT_RUN_BYTES = 4096,
  COLUMN_MIN_TASKS = 4,          /* shrink blocks (down to 256 columns) to get this many */
  COLUMN_ACC_BYTES = 65536,      /* the block's values and indices (on the stack): in L2 */
  COLUMN_SPLIT_TASKS = 16,       /* split rows into chunks to get this many tasks */
  COLUMN_CHUNK_ROWS = 256,       /* ... of at least this many rows each */
  COLUMN_DIRECT_ROWS = 24,       /* rows up to this many: one select chain in registers */
  COLUMN_DIRECT_ROWS_16 = 12,    /* ... under 16-byte vectors (direct_rows) */
  DIRECT_SUM_ROWS = 8,           /* direct floats on 16-, 32-byte vectors: NaN by a sum */
  COLUMN_MAX_STEP_ROWS = 8,      /* rows a group (column.step_rows), at most */
  COLUMN_RUN_AHEAD_BYTES = 2048, /* column.run_ahead: how far ahead in each row's run */
  NAN_EXACT_BLOCKS = 64,         /* f16 fast keys: blocks to skip the fast pass after a NaN */
};

/* [R, K, X] reduced over R and X (argmin over {0, 2}) whose (K, X) plane
 * is contiguous, with INDEX outputs: the plane's points are the columns, R
 * the rows; a block holds whole K points (x columns each, so x is bounded
 * by the accumulators' size) and merges each one's columns by value, then
 * flat index r * x + column (u32). Against a vector row reduction per
 * row of X and a merge per K point (emit_merge), this reads the same bytes
 * with no per-row merge across lanes: f32 [256,512,256] over {0,2}, 0.85-0.88
 * of the time (Zen 3, rows of 1 KiB; 0.87-0.92 with rows of 4 and 16 KiB). */
static bool plane_matches(const dmlc_kdesc *k) {
  if (k->rank != 3 || k->reduced_mask != 5u || k->read_strides[2] != 1 ||
      k->read_strides[1] != k->dims[2])
    return false;
  const uint64_t x = k->dims[2];
  if (x * (dmlc_dtype_size(k->read_dtype) + 4) > COLUMN_ACC_BYTES ||
      (uint64_t)k->dims[0] * x > UINT32_MAX)
    return false;
  for (uint32_t i = 0; i < k->num_outputs; i++)
    if (k->outputs[i].kind != DMLC_KOUT_INDEX)
      return false;
  return true;
}

bool ec_column_matches(const dmlc_kdesc *k) {
  if (!k->has_reduction || k->read_strides[k->rank - 1] != 1)
    return false;
  if (plane_matches(k))
    return true;
  if (!((k->rank == 2 && k->reduced_mask == 1u) || (k->rank == 3 && k->reduced_mask == 2u)))
    return false;
  for (uint32_t i = 0; i < k->num_outputs; i++)
    if (k->outputs[i].kind != DMLC_KOUT_INDEX && k->outputs[i].kind != DMLC_KOUT_ONEHOT)
      return false;
  return true;
}

enum {
  SUPER_MAX_VECS = 4,   /* columns of under this many vectors take super rows */
  SUPER_ROW_VECS = 8,   /* ... of up to this many vectors */
  SUPER_MAX_ROWS = 64,  /* rows a super row, at most */
  SUPER_CHAIN_ROWS = 4, /* super rows of up to this many rows: store_super_chain */
};
/* store_super holds a super row as one vector */
_Static_assert(2 * SUPER_ROW_VECS * 64 <= EC_MAX_LANES,
               "a super row of 8-bit values fits EC_MAX_LANES");

/* Whether u rows of bytes each make a super row of at most max bytes, the
 * rows a multiple of u and at least two super rows. */
static bool super_fits(uint64_t rows, uint64_t bytes, uint32_t u, uint64_t max) {
  return u * bytes <= max && rows % u == 0 && rows >= 2 * u;
}

uint32_t ec_column_super_rows(const dmlc_kdesc *k, uint32_t vector_bytes) {
  if (!ec_column_matches(k) || plane_matches(k) || k->rank < 2 ||
      k->reduced_mask != 1u << (k->rank - 2))
    return 1;
  for (uint32_t i = 0; i < k->num_outputs; i++)
    if (k->outputs[i].kind != DMLC_KOUT_INDEX)
      return 1;
  const uint64_t rows = k->dims[k->rank - 2], cols = k->dims[k->rank - 1];
  const uint64_t bytes = cols * dmlc_dtype_size(k->read_dtype);
  /* Rows of up to two vectors, or of under four with a partial last
   * vector (its columns went element by element). Alternated against
   * plain columns on a Zen 5: f32 [524288,8] over axis 0 0.09 of the time
   * (AVX-512: 8 columns filled half a vector) and 0.40 (AVX2), 0.70 under
   * SSE4.2 (two whole vectors); [131072,40] 0.26-0.44, [131072,60]
   * 0.22; but [262144,24] under AVX2 (three whole vectors) 1.2-1.3 */
  if (k->read_strides[k->rank - 2] != cols || rows * cols > UINT32_MAX ||
      (bytes > 2 * vector_bytes &&
       (bytes >= SUPER_MAX_VECS * vector_bytes || bytes % vector_bytes == 0)))
    return 1;
  uint32_t u = SUPER_MAX_ROWS;
  while (u > 1 && !super_fits(rows, bytes, u, SUPER_ROW_VECS * vector_bytes))
    u /= 2;
  /* a super row of whole vectors where twice or four times as many rows
   * (up to twice the vectors) make one: no scalar tail a super row */
  for (uint32_t w = 2 * u; u > 1 && bytes * u % vector_bytes && w <= 4 * u; w *= 2)
    if (w <= SUPER_MAX_ROWS && bytes * w % vector_bytes == 0 &&
        super_fits(rows, bytes, w, 2 * SUPER_ROW_VECS * vector_bytes))
      return w;
  return u;
}

typedef struct column {
  emit_ctx *e;
  uint64_t rows, cols, outer, block;
  uint64_t rs; /* elements from a row to the next */
  /* Plane ([R, K, X] reduced over R and X, the (K, X) plane contiguous):
   * the columns are the plane's points, a block whole K points (a multiple
   * of x columns), and a K point's result is its x columns' merged by
   * value, then flat index r * x + column (store_plane). */
  bool plane;
  uint64_t x;
  /* Super rows (ec_column_super_rows): a packed [R, K] of few columns read
   * as [R / x, x * K], x rows a super row, so a block's vectors hold
   * several rows (independent chains, full lanes); kept column p's x
   * candidates (super columns j * K + p, row r * x + j) are merged by value,
   * then row, at the store (store_super). super_kept is K; 0: off. */
  uint64_t super_kept;
  uint64_t chunks, chunk_rows; /* row chunks (1: none) of chunk_rows rows, the last one shorter */
  uint32_t lanes;
  uint32_t step_rows; /* rows per accumulator load/store, at most (rows_loops) */
  /* A group's rows merged pairwise, then into the accumulator (rows_body),
   * instead of one select chain through them all. */
  bool tree_rows;
  LLVMTypeRef ct; /* the accumulated values: ec_cmp_type, or i16 keys for f16 */
  uint32_t ct_size;
  bool keys;      /* f16 as i16 keys (f16_key) */
  LLVMTypeRef it; /* the row indices: i32, or i16 (unsigned) for narrow values when rows <= 65536 */
  uint32_t it_size;
  LLVMValueRef acc, acc_idx; /* [block] of ct, [block] of it */
  /* Split: the partials in scratch, values then indices, each
   * [outer][chunks][cols]; part_idx is a byte offset. */
  uint64_t part_idx;
  /* Prefetch the next group of rows' runs (rows_body). */
  bool prefetch_rows;
  /* Prefetch each row's run COLUMN_RUN_AHEAD_BYTES ahead instead
   * (rows_body), where the runs from DRAM prefetch no next group. */
  bool run_ahead;
  /* Values taken fast (a first pass: keyed_block_rows, emit_direct): f16
   * keys without their NaN fix, and in emit_direct floats by ordered
   * compares; the magnitudes' running maximum kept in nan_mag (a var of
   * lanes integers as wide as the keys or floats; emit_direct's few rows of
   * floats on 16- and 32-byte vectors: a var of lanes floats, their sum)
   * instead, for a second, exact pass when it saw a NaN (saw_nan). */
  bool fast_keys;
  /* Floats under 16-byte vectors take that fast pass too, in rows_body
   * (fast_keys set, keys not): a row by one ordered compare, and nan_mag
   * a var of lanes floats, the rows' running sum (keep_sum), which a NaN
   * leaves NaN (as do +inf and -inf in one column, or sums past the
   * largest float of both signs: a second pass that was not needed). */
  bool fast_floats;
  LLVMValueRef nan_mag;
  /* The kernel's internal i32: blocks left to take the exact pass alone,
   * NAN_EXACT_BLOCKS after a block that saw a NaN (relaxed atomics: the
   * threads' blocks share it, and a lost update only costs time). */
  LLVMValueRef nan_exact;
  /* Unsigned integer values, first index on ties, under 16- and 32-byte
   * vectors: rows_body takes a row where umax (umin) moved the accumulator. */
  bool unsigned_extreme;
} column;

/* umax(v, x) for argmax, umin(v, x) for argmin. */
static LLVMValueRef unsigned_extreme(column *c, LLVMValueRef v, LLVMValueRef x) {
  emit_ctx *e = c->e;
  LLVMTypeRef t = LLVMTypeOf(v);
  LLVMValueRef args[2] = {v, x};
  return ec_intrinsic(e, e->k->reduction == DMLC_OP_ARGMAX ? "llvm.umax" : "llvm.umin", &t, 1, args,
                      2);
}

/* A fast pass (fast_keys): the magnitude bits m (sign cleared, lanes of
 * c->lanes) folded into the running maximum in c->nan_mag. */
static void keep_magnitude(column *c, LLVMValueRef m) {
  emit_ctx *e = c->e;
  LLVMTypeRef t = LLVMTypeOf(m);
  LLVMValueRef args[2] = {LLVMBuildLoad2(e->b, t, c->nan_mag, ""), m};
  LLVMBuildStore(e->b, ec_intrinsic(e, "llvm.smax", &t, 1, args, 2), c->nan_mag);
}

/* Whether the fast pass saw a NaN: in c->nan_mag, a magnitude (lanes of
 * integers as wide as the values) past infinity's bits, or, for
 * fast_floats' sum (lanes of floats), a NaN. */
static LLVMValueRef saw_nan(column *c) {
  emit_ctx *e = c->e;
  LLVMTypeRef t = LLVMGetAllocatedType(c->nan_mag);
  LLVMValueRef top = LLVMBuildLoad2(e->b, t, c->nan_mag, "");
  if (LLVMGetTypeKind(LLVMGetElementType(t)) != LLVMIntegerTypeKind)
    return ec_any_lane(e, LLVMBuildFCmp(e->b, LLVMRealUNO, top, top, ""));
  const unsigned bits = LLVMGetIntTypeWidth(LLVMGetElementType(t));
  top = ec_intrinsic(e, "llvm.vector.reduce.smax", &t, 1, &top, 1);
  const uint64_t inf = bits == 16 ? 0x7c00u : bits == 32 ? 0x7f800000u : 0x7ff0000000000000u;
  return LLVMBuildICmp(e->b, LLVMIntSGT, top, LLVMConstInt(LLVMTypeOf(top), inf, false), "nan");
}

/* A fast pass over floats (fast_floats): the rows xs[0..n) (vectors of
 * c->lanes) added pairwise into the running sum in c->nan_mag; xs is
 * clobbered. One ADDPS a row, off the select chain; a running maximum of
 * the magnitudes (PAND and PMAXSD a row) left the fast pass 0.90-0.97 as
 * fast. */
static void keep_sum(column *c, LLVMValueRef *xs, uint32_t n) {
  emit_ctx *e = c->e;
  for (; n > 1; n = (n + 1) / 2) {
    for (uint32_t u = 0; u < n / 2; u++)
      xs[u] = LLVMBuildFAdd(e->b, xs[2 * u], xs[2 * u + 1], "");
    if (n % 2)
      xs[n / 2] = xs[n - 1];
  }
  LLVMTypeRef t = LLVMTypeOf(xs[0]);
  LLVMBuildStore(e->b, LLVMBuildFAdd(e->b, LLVMBuildLoad2(e->b, t, c->nan_mag, ""), xs[0], ""),
                 c->nan_mag);
}

/* Whether a row of lanes floats goes by the fast pass's ordered compare
 * (and into its sum); the columns past the vectors take the exact rule in
 * either pass. */
static bool fast_float_row(const column *c, uint32_t lanes) {
  return c->fast_keys && c->fast_floats && lanes == c->lanes;
}

/* f16 values v as i16 keys (ec_f16_key); a fast pass (fast_keys) keeps
 * the NaN bits as they are and their magnitudes in c->nan_mag instead. */
static LLVMValueRef f16_key(column *c, LLVMValueRef v, uint32_t lanes) {
  if (!c->fast_keys)
    return ec_f16_key(c->e, v, lanes);
  LLVMValueRef mag;
  LLVMValueRef k = ec_f16_twos(c->e, v, lanes, &mag);
  if (lanes > 1 && lanes < c->lanes) { /* a narrower vector of the tail */
    LLVMTypeRef t = LLVMTypeOf(mag);
    mag = ec_intrinsic(c->e, "llvm.vector.reduce.smax", &t, 1, &mag, 1);
  }
  keep_magnitude(c, lanes == c->lanes ? mag : ec_splat(c->e, mag, c->lanes));
  return k;
}

/* The next row's values (keys) of lanes columns at read offset off. */
static LLVMValueRef load_cmp(column *c, LLVMValueRef off, uint32_t lanes) {
  if (c->keys)
    return f16_key(c, ec_load(c->e, DMLC_DTYPE_F16, c->e->read, off, lanes), lanes);
  return ec_load_read_cmp(c->e, off, lanes);
}

/* The row index r (i64) as lanes of it. */
static LLVMValueRef row_index(column *c, LLVMValueRef r, uint32_t lanes) {
  return ec_splat(c->e, LLVMBuildTrunc(c->e->b, r, c->it, ""), lanes);
}

static LLVMValueRef acc_ptr(column *c, LLVMValueRef arr, LLVMTypeRef t, LLVMValueRef i) {
  return LLVMBuildGEP2(c->e->b, t, arr, &i, 1, "");
}

/* Vectors at multiples of lanes of an array aligned to 64. */
static uint32_t acc_align(column *c, LLVMTypeRef t, uint32_t lanes) {
  const uint32_t bytes = lanes * (t == c->it ? c->it_size : c->ct_size);
  return bytes < 64 ? bytes : 64;
}

static LLVMValueRef acc_load(column *c, LLVMValueRef arr, LLVMTypeRef t, LLVMValueRef i,
                             uint32_t lanes) {
  LLVMValueRef l = LLVMBuildLoad2(c->e->b, ec_lanes(t, lanes), acc_ptr(c, arr, t, i), "");
  LLVMSetAlignment(l, acc_align(c, t, lanes));
  return l;
}

static void acc_store(column *c, LLVMValueRef arr, LLVMTypeRef t, LLVMValueRef i, LLVMValueRef v,
                      uint32_t lanes) {
  LLVMValueRef s = LLVMBuildStore(c->e->b, v, acc_ptr(c, arr, t, i));
  LLVMSetAlignment(s, acc_align(c, t, lanes));
}

/* Loops cc over the block's columns [start, width) in vectors, then the
 * rest in vectors of half, a quarter ... the lanes (at most one of each,
 * down to EC_TAIL_MIN_BYTES of compared values), then in scalars (or all
 * in scalars when !vector); body gets (cc, lanes). The narrower vectors
 * start at multiples of their lanes past a whole vector's multiple, so
 * they are as aligned as their size. */
typedef void (*column_body)(column *c, LLVMValueRef cc, uint32_t lanes, void *arg);

static void for_columns_from(column *c, uint64_t start, uint64_t width, bool vector,
                             column_body body, void *arg) {
  emit_ctx *e = c->e;
  uint64_t vend = vector ? start + (width - start) / c->lanes * c->lanes : start;
  if (vend > start) {
    ec_loop l;
    LLVMValueRef cc = ec_loop_begin(e, &l, ec_i64(e, start), ec_i64(e, vend), c->lanes);
    body(c, cc, c->lanes, arg);
    ec_loop_end(e, &l);
  }
  /* Packed columns of 4 vectors and more with a partial last one (f32
   * [65536,120] over axis 0: 8 of 120 columns) went element by element
   * every row; alternated on a Zen 5 (AVX-512), new over old as time: f32
   * [65536,120] 0.53-0.58, u8 [65536,300] 0.35-0.43, i8 [65536,77] 0.22,
   * u16 [65536,210] 0.55-0.67; AVX2 i8 0.33-0.41, f16 [65536,300] 0.68 */
  for (uint32_t w = c->lanes / 2; vector && w >= 2 && w * c->ct_size >= EC_TAIL_MIN_BYTES; w /= 2)
    if (width - vend >= w) {
      body(c, ec_i64(e, vend), w, arg);
      vend += w;
    }
  if (vend < width) {
    ec_loop l;
    LLVMValueRef cc = ec_loop_begin(e, &l, ec_i64(e, vend), ec_i64(e, width), 1);
    body(c, cc, 1, arg);
    ec_loop_end(e, &l);
  }
}

static void for_columns(column *c, uint64_t width, bool vector, column_body body, void *arg) {
  for_columns_from(c, 0, width, vector, body, arg);
}

typedef struct out_arg {
  uint32_t out;
  LLVMValueRef base; /* output offset of column c0 (and of the row, for 0s) */
  bool nt;           /* vectors are aligned: non-temporal stores */
} out_arg;

/* The 0s of a ONEHOT row: base is the output offset of (row, column c0). */
static void zero_body(column *c, LLVMValueRef cc, uint32_t lanes, void *arg) {
  const out_arg *a = arg;
  emit_ctx *e = c->e;
  const dmlc_kout *o = &e->k->outputs[a->out];
  LLVMValueRef off = ec_madd(e, a->base, cc, o->strides[e->k->rank - 1]);
  if (a->nt && lanes > 1) {
    /* non-temporal 0s as integers: a vector of half keeps no !nontemporal
     * (ec_store_nt). f16 hardmax over axis 0 of [8192,8192] 0.74-0.80 of
     * the time, of [21,2097152] 0.93-0.96, [64,1048576] 0.93-0.94
     * (AVX-512; AVX2 and SSE4.2 0.99-1.0), alternated in one process. */
    LLVMTypeRef it = LLVMIntTypeInContext(e->c, 8 * dmlc_dtype_size(o->dtype));
    ec_store_nt(e, o->dtype, e->out[a->out], off, LLVMConstNull(LLVMVectorType(it, lanes)));
  } else {
    ec_store(e, o->dtype, e->out[a->out], off, ec_splat(e, ec_const_elem(e, o->dtype, 0), lanes));
  }
}

typedef struct rows_arg {
  LLVMValueRef base; /* read offset of row 0, column c0 */
  LLVMValueRef r;    /* first row */
  uint32_t count;    /* rows */
  /* ONEHOT outputs whose 0s rows_body stores (non-temporal vectors) as it
   * reads, each at output offset obase[i] of (row 0, column c0); NULL:
   * zero_rows writes them. */
  LLVMValueRef obase[DMLC_KDESC_MAX_OUTPUTS];
  /* In the block's last group: the rows of the next block (the next
   * task's) that rows_body prefetches instead of rows past the last; 0
   * otherwise. */
  uint32_t next_rows;
  /* The vector's line was prefetched by the line's first vector
   * (for_row_columns): rows_body prefetches nothing. */
  bool line_prefetched;
} rows_arg;

static void init_body(column *c, LLVMValueRef cc, uint32_t lanes, void *arg) {
  const rows_arg *a = arg;
  emit_ctx *e = c->e;
  LLVMValueRef x = load_cmp(c, ec_madd(e, ec_add(e, a->base, cc), a->r, c->rs), lanes);
  if (fast_float_row(c, lanes)) {
    LLVMValueRef xs[1] = {x};
    keep_sum(c, xs, 1);
  }
  acc_store(c, c->acc, c->ct, cc, x, lanes);
  acc_store(c, c->acc_idx, c->it, cc, row_index(c, a->r, lanes), lanes);
}

/* (*v, *vi) then (x, xi), lanes columns, x's rows after v's: *v and *vi
 * become the merged best and its row; pair (or NULL) names the take mask. */
static void merge_next(column *c, LLVMValueRef *v, LLVMValueRef *vi, LLVMValueRef x,
                       LLVMValueRef xi, uint32_t lanes, const char *pair) {
  emit_ctx *e = c->e;
  LLVMValueRef take;
  if (fast_float_row(c, lanes)) {
    take = ec_take_ordered(e, x, *v);
    *v = ec_select_unpredictable(e, take, x, *v);
  } else if (c->unsigned_extreme) {
    /* the row taken where the extreme moved: PMAXUW and PCMPEQW, where
     * x > v would be lowered as PMINUW and PCMPEQW beside the PMAXUW */
    LLVMValueRef m = unsigned_extreme(c, *v, x);
    take = LLVMBuildICmp(e->b, LLVMIntNE, m, *v, pair ? pair : "take");
    *v = m;
  } else {
    take = ec_take_next(e, x, *v);
    if (pair)
      LLVMSetValueName2(take, pair, strlen(pair));
    *v = ec_select_unpredictable(e, take, x, *v);
  }
  *vi = ec_select_unpredictable(e, take, xi, *vi);
}

static void rows_body(column *c, LLVMValueRef cc, uint32_t lanes, void *arg) {
  const rows_arg *a = arg;
  emit_ctx *e = c->e;
  const uint64_t rs = c->rs;
  LLVMValueRef v = acc_load(c, c->acc, c->ct, cc, lanes);
  LLVMValueRef vi = acc_load(c, c->acc_idx, c->it, cc, lanes);
  LLVMValueRef col = ec_add(e, a->base, cc);
  /* Each row of the group further on in its run, into L1 (run_ahead;
   * past the block, the next block's or the next row's first bytes) */
  if (lanes > 1 && c->run_ahead)
    for (uint32_t q = 0; q < a->count; q++)
      ec_prefetch_read(e, ec_madd(e, col, ec_add(e, a->r, ec_i64(e, q)), rs),
                       COLUMN_RUN_AHEAD_BYTES, true);
  /* The same columns of the next group of rows, into L2: each row's run
   * starts a new stream the hardware prefetcher would first have to find.
   * In the block's last group, the next block's first row and first group
   * (the next task's, as a thread runs consecutive tasks; past the end of
   * the rows or the buffer a prefetch only costs the slot). */
  if (lanes > 1 && c->prefetch_rows && !a->line_prefetched) {
    LLVMValueRef at = a->next_rows ? ec_add(e, col, ec_i64(e, c->block))
                                   : ec_madd(e, col, ec_add(e, a->r, ec_i64(e, a->count)), rs);
    const uint32_t n = a->next_rows ? a->next_rows : a->count;
    for (uint32_t q = 0; q < n; q++)
      ec_prefetch_read(e, ec_add(e, at, ec_i64(e, q * rs)), 0, false);
  }
  if (c->tree_rows && a->count > 1) {
    /* the group's rows merged pairwise (adjacent runs of rows, the later
     * taken as the next row would be), then into the accumulator */
    LLVMValueRef tv[COLUMN_MAX_STEP_ROWS], ti[COLUMN_MAX_STEP_ROWS]; /* as xs below */
    for (uint32_t q = 0; q < a->count; q++) {
      LLVMValueRef r = ec_add(e, a->r, ec_i64(e, q));
      tv[q] = load_cmp(c, ec_madd(e, col, r, rs), lanes);
      ti[q] = row_index(c, r, lanes);
    }
    for (uint32_t n = a->count; n > 1; n = (n + 1) / 2) {
      for (uint32_t u = 0; u < n / 2; u++) {
        tv[u] = tv[2 * u];
        ti[u] = ti[2 * u];
        merge_next(c, &tv[u], &ti[u], tv[2 * u + 1], ti[2 * u + 1], lanes, "pair");
      }
      if (n % 2) {
        tv[n / 2] = tv[n - 1];
        ti[n / 2] = ti[n - 1];
      }
    }
    merge_next(c, &v, &vi, tv[0], ti[0], lanes, NULL);
  } else {
    LLVMValueRef xs[COLUMN_MAX_STEP_ROWS];
    for (uint32_t q = 0; q < a->count; q++) {
      LLVMValueRef r = ec_add(e, a->r, ec_i64(e, q));
      LLVMValueRef x = load_cmp(c, ec_madd(e, col, r, rs), lanes);
      xs[q] = x; /* a->count <= step_rows <= COLUMN_MAX_STEP_ROWS */
      merge_next(c, &v, &vi, x, row_index(c, r, lanes), lanes, NULL);
    }
    if (fast_float_row(c, lanes))
      keep_sum(c, xs, a->count);
  }
  for (uint32_t i = 0; i < e->k->num_outputs; i++) {
    if (!a->obase[i])
      continue;
    const uint64_t ors = e->k->outputs[i].strides[e->k->rank - 2];
    for (uint32_t q = 0; q < a->count; q++) {
      out_arg oa = {i, ec_madd(e, a->obase[i], ec_add(e, a->r, ec_i64(e, q)), ors), true};
      zero_body(c, cc, lanes, &oa);
    }
  }
  acc_store(c, c->acc, c->ct, cc, v, lanes);
  acc_store(c, c->acc_idx, c->it, cc, vi, lanes);
}

/* lanes indices of the accumulator as i32. */
static LLVMValueRef load_index32(column *c, LLVMValueRef cc, uint32_t lanes) {
  LLVMValueRef vi = acc_load(c, c->acc_idx, c->it, cc, lanes);
  if (c->it != c->e->i32)
    vi = LLVMBuildZExt(c->e->b, vi, ec_lanes(c->e->i32, lanes), "");
  return vi;
}

static void index_body(column *c, LLVMValueRef cc, uint32_t lanes, void *arg) {
  const out_arg *a = arg;
  emit_ctx *e = c->e;
  const dmlc_kout *o = &e->k->outputs[a->out];
  LLVMValueRef vi = load_index32(c, cc, lanes);
  LLVMValueRef off = ec_madd(e, a->base, cc, o->strides[e->k->rank - 1]);
  ec_store(e, o->dtype, e->out[a->out], off, ec_convert(e, vi, DMLC_DTYPE_U32, o->dtype));
}

/* ec_store_run_nt's values of INDEX output `out`: the accumulator's
 * indices from column i of the block, loaded at any alignment (the run's
 * vectors start where the output is aligned). */
typedef struct index_run {
  column *c;
  dmlc_dtype dt;
} index_run;

static LLVMValueRef index_run_value(emit_ctx *e, LLVMValueRef i, uint32_t lanes, void *arg) {
  const index_run *r = arg;
  column *c = r->c;
  LLVMValueRef l =
      LLVMBuildLoad2(e->b, ec_lanes(c->it, lanes), acc_ptr(c, c->acc_idx, c->it, i), "");
  LLVMSetAlignment(l, c->it_size);
  LLVMValueRef vi = c->it == e->i32 ? l : LLVMBuildZExt(e->b, l, ec_lanes(e->i32, lanes), "");
  return ec_convert(e, vi, DMLC_DTYPE_U32, r->dt);
}

/* The 1 of each column: base is the output offset of (row 0, column c0). */
static void one_body(column *c, LLVMValueRef cc, uint32_t lanes, void *arg) {
  const out_arg *a = arg;
  emit_ctx *e = c->e;
  const dmlc_kout *o = &e->k->outputs[a->out];
  const uint32_t rank = e->k->rank;
  (void)lanes;
  LLVMValueRef r = LLVMBuildZExt(e->b, acc_load(c, c->acc_idx, c->it, cc, 1), e->i64, "");
  LLVMValueRef off =
      ec_madd(e, ec_madd(e, a->base, cc, o->strides[rank - 1]), r, o->strides[rank - 2]);
  ec_store(e, o->dtype, e->out[a->out], off, ec_const_elem(e, o->dtype, 1));
}

/* Output offset of (outer o, row 0, column c0) of output i. */
static LLVMValueRef out_base(column *c, uint32_t i, LLVMValueRef o, LLVMValueRef c0) {
  emit_ctx *e = c->e;
  const dmlc_kout *out = &e->k->outputs[i];
  LLVMValueRef base = ec_mul(e, c0, out->strides[e->k->rank - 1]);
  return e->k->rank == 3 ? ec_madd(e, base, o, out->strides[0]) : base;
}

/* Whether ONEHOT output i can take non-temporal vector stores in a block
 * of width columns wherever the block's first vector is aligned: contiguous
 * along the columns, large, rows a multiple of the vector size apart. */
static bool nt_ok(column *c, uint32_t i, uint64_t width) {
  emit_ctx *e = c->e;
  const dmlc_kout *out = &e->k->outputs[i];
  const uint64_t vbytes = (uint64_t)c->lanes * dmlc_dtype_size(out->dtype);
  return out->kind == DMLC_KOUT_ONEHOT && out->strides[e->k->rank - 1] == 1 && ec_output_nt(e, i) &&
         width >= c->lanes &&
         out->strides[e->k->rank - 2] * dmlc_dtype_size(out->dtype) % vbytes == 0;
}

/* Writes the 0s of ONEHOT outputs for rows [r, r + count) of the block, right
 * after the block reads them, so the block's reads and writes stream side
 * by side (the 1s go in after the last row): non-temporal vector stores
 * where nt_ok and the row's first vector is aligned. Skips the outputs
 * rows_body writes (ra->obase). */
static void zero_rows(column *c, const rows_arg *ra, LLVMValueRef o, LLVMValueRef c0,
                      LLVMValueRef r, uint32_t count, uint64_t width) {
  emit_ctx *e = c->e;
  const dmlc_kdesc *k = e->k;
  for (uint32_t i = 0; i < k->num_outputs; i++) {
    const dmlc_kout *out = &k->outputs[i];
    if (out->kind != DMLC_KOUT_ONEHOT || ra->obase[i])
      continue;
    const uint64_t si = out->strides[k->rank - 1], rs = out->strides[k->rank - 2];
    const uint64_t vbytes = (uint64_t)c->lanes * dmlc_dtype_size(out->dtype);
    LLVMValueRef base = out_base(c, i, o, c0);
    for (uint32_t q = 0; q < count; q++) {
      out_arg oa = {i, ec_madd(e, base, ec_add(e, r, ec_i64(e, q)), rs), false};
      if (nt_ok(c, i, width)) {
        ec_if f;
        ec_if_begin(e, &f, ec_is_aligned(e, out->dtype, e->out[i], oa.base, vbytes));
        oa.nt = true;
        for_columns(c, width, true, zero_body, &oa);
        ec_if_else(e, &f);
        oa.nt = false;
        for_columns(c, width, true, zero_body, &oa);
        ec_if_end(e, &f);
        e->nt_used = true;
      } else {
        for_columns(c, width, si == 1, zero_body, &oa);
      }
    }
  }
}

/* The scratch address of partial (o, chunk ch, column col): values (idx
 * false) or indices. */
static LLVMValueRef part_ptr(column *c, LLVMValueRef o, LLVMValueRef ch, LLVMValueRef col,
                             bool idx) {
  emit_ctx *e = c->e;
  LLVMValueRef n = ec_add(e, ec_mul(e, ec_madd(e, ch, o, c->chunks), c->cols), col);
  LLVMValueRef byte =
      idx ? ec_madd(e, ec_i64(e, c->part_idx), n, c->it_size) : ec_mul(e, n, c->ct_size);
  return LLVMBuildGEP2(e->b, e->i8, e->scratch, &byte, 1, "");
}

typedef struct part_arg {
  LLVMValueRef o, ch, c0;
} part_arg;

/* A chunk's accumulators to its partials. */
static void save_body(column *c, LLVMValueRef cc, uint32_t lanes, void *arg) {
  const part_arg *a = arg;
  emit_ctx *e = c->e;
  LLVMValueRef col = ec_add(e, a->c0, cc);
  LLVMValueRef s = LLVMBuildStore(e->b, acc_load(c, c->acc, c->ct, cc, lanes),
                                  part_ptr(c, a->o, a->ch, col, false));
  LLVMSetAlignment(s, 1);
  s = LLVMBuildStore(e->b, acc_load(c, c->acc_idx, c->it, cc, lanes),
                     part_ptr(c, a->o, a->ch, col, true));
  LLVMSetAlignment(s, 1);
}

/* Merges the partials of every chunk, in order, into the accumulators
 * (later chunks hold later rows: take_next keeps the sequential rule). */
static void merge_body(column *c, LLVMValueRef cc, uint32_t lanes, void *arg) {
  const part_arg *a = arg;
  emit_ctx *e = c->e;
  LLVMTypeRef vt = ec_lanes(c->ct, lanes), it = ec_lanes(c->it, lanes);
  LLVMValueRef col = ec_add(e, a->c0, cc), v = NULL, vi = NULL;
  for (uint64_t ch = 0; ch < c->chunks; ch++) {
    LLVMValueRef x = LLVMBuildLoad2(e->b, vt, part_ptr(c, a->o, ec_i64(e, ch), col, false), "");
    LLVMValueRef xi = LLVMBuildLoad2(e->b, it, part_ptr(c, a->o, ec_i64(e, ch), col, true), "");
    LLVMSetAlignment(x, 1);
    LLVMSetAlignment(xi, 1);
    if (ch == 0) {
      v = x;
      vi = xi;
      continue;
    }
    LLVMValueRef take = ec_take_next(e, x, v);
    v = LLVMBuildSelect(e->b, take, x, v, "");
    vi = LLVMBuildSelect(e->b, take, xi, vi, "");
  }
  acc_store(c, c->acc, c->ct, cc, v, lanes);
  acc_store(c, c->acc_idx, c->it, cc, vi, lanes);
}

/* Plane and super rows (store_super_chain): lanes accumulators from
 * column col, candidate j of its kept point: *v their values, *vi their
 * flat indices r * x + j (i32), + lane for a plane (whose lanes are a
 * point's next candidates; super rows' lanes are the next kept points). */
static void candidate_load(column *c, LLVMValueRef col, LLVMValueRef j, uint32_t lanes,
                           LLVMValueRef *v, LLVMValueRef *vi) {
  emit_ctx *e = c->e;
  /* K points start at multiples of x: aligned vectors when x is a multiple
   * of the lanes */
  const bool aligned = c->plane && c->x % c->lanes == 0;
  LLVMValueRef l = LLVMBuildLoad2(e->b, ec_lanes(c->ct, lanes), acc_ptr(c, c->acc, c->ct, col), "");
  LLVMSetAlignment(l, aligned ? acc_align(c, c->ct, lanes) : c->ct_size);
  LLVMValueRef r =
      LLVMBuildLoad2(e->b, ec_lanes(c->it, lanes), acc_ptr(c, c->acc_idx, c->it, col), "");
  LLVMSetAlignment(r, aligned ? acc_align(c, c->it, lanes) : c->it_size);
  if (c->it != e->i32)
    r = LLVMBuildZExt(e->b, r, ec_lanes(e->i32, lanes), "");
  LLVMValueRef first = ec_splat(e, LLVMBuildTrunc(e->b, j, e->i32, ""), lanes);
  if (lanes > 1 && c->plane)
    first = ec_add(e, first, ec_iota(e, lanes));
  *v = l;
  *vi = ec_add(e, LLVMBuildMul(e->b, r, ec_splat(e, ec_i32(e, c->x), lanes), ""), first);
}

/* Plane and super rows: (v, vi) into the candidate held in the variables
 * bv, bi. */
static void candidate_take(column *c, LLVMValueRef bv, LLVMValueRef bi, LLVMValueRef v,
                           LLVMValueRef vi, uint32_t lanes) {
  emit_ctx *e = c->e;
  LLVMValueRef a = LLVMBuildLoad2(e->b, ec_lanes(c->ct, lanes), bv, "");
  LLVMValueRef ai = LLVMBuildLoad2(e->b, ec_lanes(e->i32, lanes), bi, "");
  ec_merge_pair(e, false, &a, &ai, v, vi);
  LLVMBuildStore(e->b, a, bv);
  LLVMBuildStore(e->b, ai, bi);
}

/* Plane: the INDEX outputs of the block's K points (width / x of them, the
 * first one c0 / x): each point's x columns merged by value, then flat
 * index, in vectors (the last one ending at the point's last column,
 * overlapping: a column seen twice is the same candidate), then across the
 * lanes. */
static void store_plane(column *c, LLVMValueRef c0, uint64_t width) {
  emit_ctx *e = c->e;
  const dmlc_kdesc *k = e->k;
  const uint64_t x = c->x;
  const uint32_t L = x >= c->lanes ? c->lanes : 1;
  const uint64_t vend = x / L * L;
  LLVMValueRef bv = ec_var(e, ec_lanes(c->ct, L), "plane_best");
  LLVMValueRef bi = ec_var(e, ec_lanes(e->i32, L), "plane_best_idx");
  ec_loop lp;
  LLVMValueRef p = ec_loop_begin(e, &lp, ec_i64(e, 0), ec_i64(e, width / x), 1);
  LLVMValueRef col = ec_mul(e, p, x), v, vi;
  candidate_load(c, col, ec_i64(e, 0), L, &v, &vi);
  LLVMBuildStore(e->b, v, bv);
  LLVMBuildStore(e->b, vi, bi);
  if (vend > L) {
    ec_loop lx;
    LLVMValueRef j = ec_loop_begin(e, &lx, ec_i64(e, L), ec_i64(e, vend), L);
    candidate_load(c, ec_add(e, col, j), j, L, &v, &vi);
    candidate_take(c, bv, bi, v, vi, L);
    ec_loop_end(e, &lx);
  }
  if (vend < x) {
    LLVMValueRef j = ec_i64(e, x - L);
    candidate_load(c, ec_add(e, col, j), j, L, &v, &vi);
    candidate_take(c, bv, bi, v, vi, L);
  }
  LLVMValueRef a = LLVMBuildLoad2(e->b, ec_lanes(c->ct, L), bv, "");
  LLVMValueRef idx = LLVMBuildLoad2(e->b, ec_lanes(e->i32, L), bi, "");
  ec_merge_lanes(e, a, idx, L, &a, &idx);
  LLVMValueRef y = ec_add(e, LLVMBuildUDiv(e->b, c0, ec_i64(e, x), ""), p);
  for (uint32_t i = 0; i < k->num_outputs; i++) {
    const dmlc_kout *o = &k->outputs[i];
    ec_store(e, o->dtype, e->out[i], ec_mul(e, y, o->strides[1]),
             ec_convert(e, idx, DMLC_DTYPE_U32, o->dtype));
  }
  ec_loop_end(e, &lp);
}

/* Super rows of up to SUPER_CHAIN_ROWS rows: store_super's job, each
 * kept column's x candidates (super columns j * K + p, flat row r * x + j)
 * in one chain of merges by value, then index, L kept columns a vector
 * (the last vector overlapping: a column seen twice is the same
 * candidate). */
static void store_super_chain(column *c, LLVMValueRef o) {
  emit_ctx *e = c->e;
  const dmlc_kdesc *k = e->k;
  const uint64_t kept = c->super_kept, x = c->x;
  uint32_t L = 1;
  while (2 * L <= kept && 2 * L <= c->lanes)
    L *= 2;
  LLVMValueRef bv = ec_var(e, ec_lanes(c->ct, L), "super_best");
  LLVMValueRef bi = ec_var(e, ec_lanes(e->i32, L), "super_best_idx");
  const uint64_t groups = kept / L + (kept % L != 0);
  ec_loop lp;
  LLVMValueRef g = ec_loop_begin(e, &lp, ec_i64(e, 0), ec_i64(e, groups), 1);
  /* the group's first column: g * L, the last group ending at kept */
  LLVMValueRef p = ec_mul(e, g, L);
  LLVMValueRef past = LLVMBuildICmp(e->b, LLVMIntUGT, p, ec_i64(e, kept - L), "");
  p = LLVMBuildSelect(e->b, past, ec_i64(e, kept - L), p, "");
  LLVMValueRef v, vi;
  candidate_load(c, p, ec_i64(e, 0), L, &v, &vi);
  LLVMBuildStore(e->b, v, bv);
  LLVMBuildStore(e->b, vi, bi);
  ec_loop lj;
  LLVMValueRef j = ec_loop_begin(e, &lj, ec_i64(e, 1), ec_i64(e, x), 1);
  candidate_load(c, ec_madd(e, p, j, kept), j, L, &v, &vi);
  candidate_take(c, bv, bi, v, vi, L);
  ec_loop_end(e, &lj);
  LLVMValueRef idx = LLVMBuildLoad2(e->b, ec_lanes(e->i32, L), bi, "");
  for (uint32_t i = 0; i < k->num_outputs; i++) {
    const dmlc_kout *out = &k->outputs[i];
    LLVMValueRef base = out_base(c, i, o, ec_i64(e, 0));
    for (uint32_t l = 0; l < L; l++) {
      LLVMValueRef y = L > 1 ? LLVMBuildExtractElement(e->b, idx, ec_i32(e, l), "") : idx;
      ec_store(e, out->dtype, e->out[i],
               ec_madd(e, base, ec_add(e, p, ec_i64(e, l)), out->strides[k->rank - 1]),
               ec_convert(e, y, DMLC_DTYPE_U32, out->dtype));
    }
  }
  ec_loop_end(e, &lp);
}

/* Super rows: the INDEX outputs of kept columns [0, super_kept) of outer
 * o, each the best of its x candidates (super columns j * K + p, row
 * r * x + j) by value, then position (row * K + p: ordered as the rows
 * within a kept column, with no division until the store). The super row
 * (up to 16 vectors) is one value in registers: its first half merged
 * with its second (the same kept columns, later candidates) column by
 * column, then the quarters, ..., down to K columns (ec_merge_halves), the
 * merges of a level independent; up to SUPER_CHAIN_ROWS rows a chain per
 * kept column instead (store_super_chain). Alternated on a Zen 5
 * (AVX-512), as time: against the chain f32 [4096,64,3] over axis 1 0.19,
 * u8 0.16, u16 [8192,64,7] 0.24, f16 [2048,128,5] 0.37-0.54, f32
 * [4096,16,5] (8 rows) 0.42; u8 [2048,128,5] (320 columns) 0.16-0.23;
 * but with 4 rows i32 [4096,12,7] 1.01-1.29, i64 [4096,12,3] 1.0-1.2.
 * Halving through the accumulators instead (each level stored, then
 * loaded at another offset, where store forwarding fails) took f32
 * [4096,64,3] 1.1-2.2 times as long, u8 1.2, and at 320 to 1024 columns
 * tied or took longer (u8 [4096,128,12] 1.4-1.5). */
static void store_super(column *c, LLVMValueRef o) {
  if (c->x <= SUPER_CHAIN_ROWS) {
    store_super_chain(c, o);
    return;
  }
  emit_ctx *e = c->e;
  const dmlc_kdesc *k = e->k;
  const uint32_t kept = (uint32_t)c->super_kept, n = (uint32_t)c->cols;
  LLVMValueRef v = LLVMBuildLoad2(e->b, LLVMVectorType(c->ct, n), c->acc, "");
  LLVMSetAlignment(v, 64);
  LLVMValueRef r = LLVMBuildLoad2(e->b, LLVMVectorType(c->it, n), c->acc_idx, "");
  LLVMSetAlignment(r, 64);
  if (c->it != e->i32)
    r = LLVMBuildZExt(e->b, r, LLVMVectorType(e->i32, n), "");
  LLVMValueRef vi =
      ec_add(e, LLVMBuildMul(e->b, r, ec_splat(e, ec_i32(e, n), n), ""), ec_iota(e, n));
  ec_merge_halves(e, v, vi, n, kept, &v, &vi);
  vi = LLVMBuildUDiv(e->b, vi, ec_splat(e, ec_i32(e, kept), kept), "row");
  for (uint32_t i = 0; i < k->num_outputs; i++) {
    const dmlc_kout *out = &k->outputs[i];
    LLVMValueRef base = out_base(c, i, o, ec_i64(e, 0));
    for (uint32_t l = 0; l < kept; l++) {
      LLVMValueRef y = kept > 1 ? LLVMBuildExtractElement(e->b, vi, ec_i32(e, l), "") : vi;
      ec_store(e, out->dtype, e->out[i], ec_madd(e, base, ec_i64(e, l), out->strides[k->rank - 1]),
               ec_convert(e, y, DMLC_DTYPE_U32, out->dtype));
    }
  }
}

/* Whether INDEX output i goes around the caches (ec_store_run_nt: its
 * aligned vectors): a read the size of the last-level cache or more streams
 * through it and evicts the index lines written before anything reads
 * them, so ordinary stores only add their read for ownership. From a
 * thirty-second of the read (an index plane beside a channel argmax): f32
 * NCHW21 ([4,21,512,512], 4 MiB of u32 beside 84 MiB) 0.92-0.96 of the
 * time with AVX-512, 0.97-0.99 with AVX2 and SSE4.2, alternated in one
 * process; u8 NCHW64 (4 MiB beside 64 MiB) 0.95-1.05, the noise. Smaller
 * outputs (a row of f32 [8192,8192]'s column indices) stay ordinary. */
static bool index_nt(const column *c, uint32_t i) {
  const emit_ctx *e = c->e;
  const dmlc_kdesc *k = e->k;
  uint64_t bytes = dmlc_dtype_size(k->outputs[i].dtype);
  for (uint32_t d = 0; d < k->rank; d++)
    bytes *= (k->reduced_mask >> d) & 1 ? 1 : k->dims[d];
  const uint64_t read = ec_read_bytes(k);
  return e->nt_min_bytes && read >= e->nt_min_bytes && bytes >= read / 32;
}

/* The INDEX outputs and the 1s of ONEHOT outputs of a block from its
 * accumulators. */
static void store_outputs(column *c, LLVMValueRef o, LLVMValueRef c0, uint64_t width) {
  emit_ctx *e = c->e;
  const dmlc_kdesc *k = e->k;
  if (c->plane) {
    store_plane(c, c0, width);
    return;
  }
  if (c->super_kept) {
    store_super(c, o);
    return;
  }
  for (uint32_t i = 0; i < k->num_outputs; i++) {
    const dmlc_kout *out = &k->outputs[i];
    out_arg oa = {i, out_base(c, i, o, c0), false};
    const bool packed = out->strides[k->rank - 1] == 1;
    if (out->kind == DMLC_KOUT_INDEX && packed && index_nt(c, i)) {
      index_run r = {c, out->dtype};
      ec_store_run_nt(e, out->dtype, e->out[i], oa.base, ec_i64(e, width), index_run_value, &r);
    } else if (out->kind == DMLC_KOUT_INDEX)
      for_columns(c, width, packed, index_body, &oa);
    else
      for_columns(c, width, false, one_body, &oa);
  }
}

/* The vectors a prefetch of the next group's rows serves (rows_body):
 * those of a 64-byte line (for_row_columns: the line's vectors in one loop
 * trip, the first one prefetching) rather than each vector: in the caches, and
 * from DRAM for values of one or two bytes on 16-byte vectors (otherwise
 * four prefetches a line). Alternated in one process on a Zen 5 against
 * the prefetch a vector, new time over old, argmax over axis 0 of
 * [8192,8192] from DRAM (two threads), [1024,4096] in the L3 (two) and
 * [256,2048] in the L2 (one):
 *
 *   SSE4.2  f16 0.93 / 0.88-0.90 / 0.90, u16 0.88 / 0.86 / 0.90,
 *           u8 0.93-0.95 / 0.96-0.99 / 0.89-0.98, f32 - / 0.83-0.85 / 0.92-0.97
 *   AVX2    f16 - / 0.95 / 0.93, u16 - / 0.89-0.94 / 0.96, u8 - / 1.01 / 0.94,
 *           f32 - / 0.99 / 0.99-1.0
 *
 * and channel argmax in the L3 0.86-0.99 (SSE4.2), 0.91-1.02 (AVX2). From
 * DRAM the longer loop trip lost elsewhere: AVX2 f16 1.04-1.12, u16
 * 1.04-1.12, SSE4.2 f32 1.02-1.03 ("-" above: as before). */
static uint32_t line_vectors(const column *c) {
  const emit_ctx *e = c->e;
  const uint32_t size = dmlc_dtype_size(e->k->read_dtype), vbytes = c->lanes * size;
  if (!c->prefetch_rows || vbytes >= 64 || 64 % vbytes ||
      (e->from_dram && (vbytes != 16 || size > 2)))
    return 1;
  return 64 / vbytes;
}

/* for_columns over rows_body, the vectors of a 64-byte line in one trip
 * where they are narrower than a line and its one prefetch of the next
 * group's rows pays (line_vectors). */
static void for_row_columns(column *c, uint64_t width, rows_arg *ra) {
  emit_ctx *e = c->e;
  const uint32_t per_line = line_vectors(c);
  const uint64_t step = (uint64_t)c->lanes * per_line;
  const uint64_t lend = per_line > 1 ? width / step * step : 0;
  if (lend > 0) {
    ec_loop l;
    LLVMValueRef cc = ec_loop_begin(e, &l, ec_i64(e, 0), ec_i64(e, lend), step);
    for (uint32_t v = 0; v < per_line; v++) {
      ra->line_prefetched = v > 0;
      rows_body(c, ec_add(e, cc, ec_i64(e, (uint64_t)v * c->lanes)), c->lanes, ra);
    }
    ra->line_prefetched = false;
    ec_loop_end(e, &l);
  }
  for_columns_from(c, lend, width, true, rows_body, ra);
}

/* Rows [r0 + 1, r0 + nrows) of a block: groups of step_rows, then single
 * rows, each followed by its 0s. */
static void rows_loops(column *c, rows_arg *ra, LLVMValueRef o, LLVMValueRef c0, LLVMValueRef r0,
                       uint64_t nrows, uint64_t width) {
  emit_ctx *e = c->e;
  /* Groups as even as step_rows allows: 20 rows in 7, 7 and 6, not 8, 8
   * and 4, whose short last pass costs a whole pass's accumulator loads
   * and stores (f32 NCHW21, AVX-512: 0.90-0.93 of the time, alternated in
   * one process). */
  const uint64_t passes = (nrows - 1 + c->step_rows - 1) / c->step_rows;
  const uint32_t step = passes ? (uint32_t)((nrows - 1 + passes - 1) / passes) : c->step_rows;
  const uint64_t groups = (nrows - 1) / step, grouped_end = 1 + groups * step;
  /* Unsplit, the last group (the rest, or else the last whole one, out of
   * the loop) prefetches the next block's first rows. */
  const bool peel = c->chunks == 1 && groups > 0 && grouped_end == nrows;
  const uint64_t looped = peel ? groups - 1 : groups;
  if (looped > 0) {
    ec_loop l;
    ra->r = ec_loop_begin(e, &l, ec_add(e, r0, ec_i64(e, 1)),
                          ec_add(e, r0, ec_i64(e, 1 + looped * step)), step);
    ra->count = step;
    for_row_columns(c, width, ra);
    zero_rows(c, ra, o, c0, ra->r, step, width);
    ec_loop_end(e, &l);
  }
  if (1 + looped * step < nrows) { /* the last group: the rest, or a whole one */
    ra->r = ec_add(e, r0, ec_i64(e, 1 + looped * step));
    ra->count = (uint32_t)(nrows - 1 - looped * step);
    ra->next_rows = c->chunks == 1 ? 1 + step : 0; /* its first row and first group */
    for_row_columns(c, width, ra);
    ra->next_rows = 0;
    zero_rows(c, ra, o, c0, ra->r, ra->count, width);
  }
}

/* A few rows (a channel argmax over NCHW): each vector of columns reads
 * every row, in order, into one select chain in registers, and stores its
 * outputs at once (ONEHOT: a row of 1s and 0s per row, from the index); no
 * accumulator arrays. Indices are integers as wide as the compared values
 * (rows <= COLUMN_DIRECT_ROWS fit any: direct_rows). */
typedef struct direct_arg {
  LLVMValueRef base;                          /* read offset of (o, row 0, column c0) */
  LLVMValueRef obase[DMLC_KDESC_MAX_OUTPUTS]; /* output offsets of the same */
  bool nt[DMLC_KDESC_MAX_OUTPUTS];            /* vectors by non-temporal stores */
} direct_arg;

/* v (lanes lanes of element type et; a scalar for one) as c->lanes lanes,
 * the lanes past it 0s. */
static LLVMValueRef pad_lanes(column *c, LLVMValueRef v, LLVMTypeRef et, uint32_t lanes) {
  emit_ctx *e = c->e;
  if (lanes == c->lanes)
    return v;
  LLVMValueRef wide = LLVMConstNull(LLVMVectorType(et, c->lanes));
  if (lanes == 1)
    return LLVMBuildInsertElement(e->b, wide, v, ec_i32(e, 0), "");
  uint32_t idx[64];
  for (uint32_t i = 0; i < c->lanes; i++)
    idx[i] = i < lanes ? i : lanes; /* lane `lanes` of the shuffle: the second operand's 0 */
  return ec_shuffle(e, v, LLVMConstNull(LLVMTypeOf(v)), idx, c->lanes);
}

/* The magnitude bits of x, lanes of c->ct floats (its bits, sign cleared),
 * as c->lanes lanes (a narrower tail's padded with 0s). */
static LLVMValueRef magnitude_bits(column *c, LLVMValueRef x, uint32_t lanes) {
  emit_ctx *e = c->e;
  const unsigned bits = 8 * c->ct_size;
  LLVMTypeRef et = LLVMIntTypeInContext(e->c, bits);
  LLVMValueRef m = ec_splat(e, LLVMConstInt(et, ~0ull >> (65 - bits), false), lanes);
  LLVMValueRef v = LLVMBuildAnd(e->b, LLVMBuildBitCast(e->b, x, ec_lanes(et, lanes), ""), m, "");
  return pad_lanes(c, v, et, lanes);
}

/* Whether emit_direct's fast pass over floats keeps the rows' sum (a var
 * of floats in nan_mag, keep_sum) rather than their magnitudes' maximum:
 * f32 and f64 (not f16 keys) under 16- and 32-byte vectors, up to
 * DIRECT_SUM_ROWS rows. One ADDPS a row, which a NaN leaves NaN (as do
 * +inf and -inf, or sums past the largest float of both signs: a second
 * pass not needed), against a PAND and a PMAXSD. Alternated in one
 * process, f32 [16,3,512,512] over axis 1 against Halide 14 on the same
 * target (bench_halide --runs 61): SSE4.2 0.95-1.05 of its time against
 * 1.17-1.22, AVX2 0.93-1.05 against 1.00-1.08; from the L2, one thread: 3
 * and 4 rows 0.80-0.85 of the time, 8 and 12 alike, 21 (AVX2, AVX-512)
 * 1.03-1.15; AVX-512 alike at 3 rows. */
static bool direct_sum(const column *c) {
  return !c->keys && c->e->vector_bytes < 64 && c->rows <= DIRECT_SUM_ROWS;
}

static void direct_body(column *c, LLVMValueRef cc, uint32_t lanes, void *arg) {
  const direct_arg *a = arg;
  emit_ctx *e = c->e;
  const dmlc_kdesc *k = e->k;
  const uint32_t rank = k->rank;
  const uint64_t rs = c->rs;
  LLVMTypeRef dt = LLVMIntTypeInContext(e->c, 8 * c->ct_size); /* index type */
  LLVMValueRef col = ec_add(e, a->base, cc);
  /* f16 keys keep their magnitudes in f16_key */
  const bool fast = c->fast_keys && !c->keys;
  const bool sum = fast && direct_sum(c);
  LLVMValueRef xs[DIRECT_SUM_ROWS];
  LLVMValueRef v = load_cmp(c, col, lanes);
  LLVMValueRef vi = ec_splat(e, LLVMConstInt(dt, 0, false), lanes);
  if (sum)
    xs[0] = v;
  else if (fast)
    keep_magnitude(c, magnitude_bits(c, v, lanes));
  for (uint64_t q = 1; q < c->rows; q++) {
    LLVMValueRef x = load_cmp(c, ec_add(e, col, ec_i64(e, q * rs)), lanes);
    if (sum)
      xs[q] = x;
    else if (fast)
      keep_magnitude(c, magnitude_bits(c, x, lanes));
    LLVMValueRef take = fast ? ec_take_ordered(e, x, v) : ec_take_next(e, x, v);
    v = ec_select_unpredictable(e, take, x, v);
    vi = ec_select_unpredictable(e, take, ec_splat(e, LLVMConstInt(dt, q, false), lanes), vi);
  }
  if (sum) {
    if (lanes < c->lanes)
      for (uint64_t q = 0; q < c->rows; q++)
        xs[q] = pad_lanes(c, xs[q], c->ct, lanes);
    keep_sum(c, xs, (uint32_t)c->rows);
  }
  for (uint32_t i = 0; i < k->num_outputs; i++) {
    const dmlc_kout *o = &k->outputs[i];
    LLVMValueRef off = ec_madd(e, a->obase[i], cc, o->strides[rank - 1]);
    if (o->kind == DMLC_KOUT_INDEX) {
      LLVMTypeRef t32 = ec_lanes(e->i32, lanes);
      LLVMValueRef i32 = c->ct_size > 4   ? LLVMBuildTrunc(e->b, vi, t32, "")
                         : c->ct_size < 4 ? LLVMBuildZExt(e->b, vi, t32, "")
                                          : vi;
      LLVMValueRef x = ec_convert(e, i32, DMLC_DTYPE_U32, o->dtype);
      if (a->nt[i] && lanes > 1)
        ec_store_nt(e, o->dtype, e->out[i], off, x);
      else
        ec_store(e, o->dtype, e->out[i], off, x);
      continue;
    }
    LLVMValueRef one = ec_splat(e, ec_const_elem(e, o->dtype, 1), lanes);
    LLVMValueRef zero = ec_splat(e, ec_const_elem(e, o->dtype, 0), lanes);
    for (uint64_t q = 0; q < c->rows; q++) {
      LLVMValueRef at =
          LLVMBuildICmp(e->b, LLVMIntEQ, vi, ec_splat(e, LLVMConstInt(dt, q, false), lanes), "");
      LLVMValueRef qoff = ec_add(e, off, ec_i64(e, q * o->strides[rank - 2]));
      LLVMValueRef x = LLVMBuildSelect(e->b, at, one, zero, "");
      if (a->nt[i] && lanes > 1)
        ec_store_nt(e, o->dtype, e->out[i], qoff, x);
      else
        ec_store(e, o->dtype, e->out[i], qoff, x);
    }
  }
}

/* One pass of direct_body over a block: non-temporal stores (a->nt) where
 * aligned is true (NULL: no such stores), ordinary ones otherwise. */
static void direct_pass(column *c, uint64_t width, bool vector, direct_arg *a,
                        LLVMValueRef aligned) {
  emit_ctx *e = c->e;
  if (!aligned) {
    for_columns(c, width, vector, direct_body, a);
    return;
  }
  direct_arg plain = *a;
  memset(plain.nt, 0, sizeof plain.nt);
  ec_if f;
  ec_if_begin(e, &f, aligned);
  for_columns(c, width, vector, direct_body, a);
  ec_if_else(e, &f);
  for_columns(c, width, vector, direct_body, &plain);
  ec_if_end(e, &f);
}

static void emit_direct(column *c, LLVMValueRef o, LLVMValueRef c0, uint64_t width) {
  emit_ctx *e = c->e;
  const dmlc_kdesc *k = e->k;
  direct_arg a = {
      ec_add(e, k->rank == 3 ? ec_mul(e, o, k->read_strides[0]) : ec_i64(e, 0), c0), {0}, {0}};
  bool vector = true;
  for (uint32_t i = 0; i < k->num_outputs; i++) {
    a.obase[i] = out_base(c, i, o, c0);
    vector &= k->outputs[i].strides[k->rank - 1] == 1;
  }
  /* Large outputs (an index plane as large as the input) bypass the caches
   * where every vector of the block is aligned. */
  LLVMValueRef aligned = NULL;
  for (uint32_t i = 0; vector && width >= c->lanes && i < k->num_outputs; i++) {
    const dmlc_kout *out = &k->outputs[i];
    const uint64_t size = dmlc_dtype_size(out->dtype);
    const uint64_t vbytes = (uint64_t)c->lanes * size;
    const uint64_t align = vbytes < e->vector_bytes ? vbytes : e->vector_bytes;
    uint64_t bytes = size;
    for (uint32_t d = 0; d < k->rank; d++)
      bytes *= out->kind == DMLC_KOUT_ONEHOT || d != k->rank - 2 ? k->dims[d] : 1;
    if (!ec_nt_bytes(e, bytes) ||
        (out->kind == DMLC_KOUT_ONEHOT && out->strides[k->rank - 2] * size % align != 0))
      continue;
    LLVMValueRef al = ec_is_aligned(e, out->dtype, e->out[i], a.obase[i], align);
    aligned = aligned ? LLVMBuildAnd(e->b, aligned, al, "") : al;
    a.nt[i] = true;
  }
  /* Floats, a vector wide or more: first by ordered compares (f16 keys:
   * without their NaN fix, as emit_block's fast keys), the magnitudes'
   * maximum kept; a NaN among them (a magnitude past infinity's) takes the
   * block again by ec_take_next's rule, over the first pass's outputs.
   * ec_take_next's NaN test sits on the select chain (is the value just
   * selected ordered?), a second mask compare there; on a Zen 5 (AVX-512)
   * the fast pass took 0.60-0.65 of the time of the exact one on one
   * thread (f32 [16,3,512,512] over axis 1), a C loop's time. */
  /* (the columns past the whole vectors too, their magnitudes padded to
   * a vector: f32 [65536,21,3] over axis 1, every column a scalar under
   * 64-byte vectors, 3.3 -> 0.83 ms; f16 keys lost, f16 [8192,21,5] 95-103
   * -> 121 us: whole vectors only there) */
  const bool floats = dmlc_dtype_get(k->read_dtype)->kind == DMLC_KIND_FLOAT;
  if (floats && vector && (width >= c->lanes || !c->keys)) {
    const unsigned bits = 8 * c->ct_size; /* f16 keys: 16 */
    LLVMValueRef kept = c->nan_mag;
    c->nan_mag =
        direct_sum(c)
            ? ec_var(e, LLVMVectorType(c->ct, c->lanes), "nan_sum")
            : ec_var(e, LLVMVectorType(LLVMIntTypeInContext(e->c, bits), c->lanes), "magnitudes");
    LLVMBuildStore(e->b, LLVMConstNull(LLVMGetAllocatedType(c->nan_mag)), c->nan_mag);
    c->fast_keys = true;
    direct_pass(c, width, vector, &a, aligned);
    c->fast_keys = false;
    LLVMValueRef nan = saw_nan(c);
    c->nan_mag = kept;
    ec_if f;
    ec_if_begin(e, &f, nan);
    ec_nt_fence(e); /* the exact pass stores over the first's */
    direct_pass(c, width, vector, &a, aligned);
    ec_if_else(e, &f);
    ec_if_end(e, &f);
  } else {
    direct_pass(c, width, vector, &a, aligned);
  }
  /* No fence after the block: every output element is stored once a pass,
   * and the function's end fences the non-temporal stores (an MFENCE a
   * block drained them a block at a time: NCHW3 f32 and f16 took
   * 0.90-0.97 of the time without it, alternated in one process). */
}

/* The accumulators of rows [r0, r0 + nrows) of a block of width columns
 * starting at column c0 of outer o (emit_block), and their ONEHOT 0s. */
static void block_rows(column *c, LLVMValueRef o, LLVMValueRef c0, LLVMValueRef r0, uint64_t nrows,
                       uint64_t width) {
  emit_ctx *e = c->e;
  const dmlc_kdesc *k = e->k;
  const uint32_t rank = k->rank;
  LLVMValueRef zero = ec_i64(e, 0);
  rows_arg ra = {
      ec_add(e, rank == 3 ? ec_mul(e, o, k->read_strides[0]) : zero, c0), r0, 1, {0}, 0, false};
  for_columns(c, width, true, init_body, &ra);
  zero_rows(c, &ra, o, c0, r0, 1, width);
  /* When every nt_ok output's block starts aligned, rows_body streams their
   * 0s out between its loads (finer-grained than a pass per row). */
  LLVMValueRef aligned = NULL;
  for (uint32_t i = 0; i < k->num_outputs; i++) {
    if (!nt_ok(c, i, width))
      continue;
    const uint64_t vbytes = (uint64_t)c->lanes * dmlc_dtype_size(k->outputs[i].dtype);
    LLVMValueRef a =
        ec_is_aligned(e, k->outputs[i].dtype, e->out[i], out_base(c, i, o, c0), vbytes);
    aligned = aligned ? LLVMBuildAnd(e->b, aligned, a, "") : a;
  }
  if (!aligned) {
    rows_loops(c, &ra, o, c0, r0, nrows, width);
  } else {
    ec_if f;
    ec_if_begin(e, &f, aligned);
    for (uint32_t i = 0; i < k->num_outputs; i++)
      if (nt_ok(c, i, width))
        ra.obase[i] = out_base(c, i, o, c0);
    e->nt_used = true;
    rows_loops(c, &ra, o, c0, r0, nrows, width);
    memset(ra.obase, 0, sizeof ra.obase);
    ec_if_else(e, &f);
    rows_loops(c, &ra, o, c0, r0, nrows, width);
    ec_if_end(e, &f);
  }
}

/* A monotonic (relaxed) store of v to the i32 at p. */
static void store_relaxed(emit_ctx *e, LLVMValueRef p, LLVMValueRef v) {
  LLVMValueRef st = LLVMBuildStore(e->b, v, p);
  LLVMSetOrdering(st, LLVMAtomicOrderingMonotonic);
  LLVMSetAlignment(st, 4);
}

/* block_rows for f16 keys under 16- and 32-byte vectors: a fast pass,
 * then, when it saw a NaN, an exact one. A block with a NaN takes twice the
 * time, so the next NAN_EXACT_BLOCKS blocks (any thread's, any call's) take
 * the exact pass alone: data with NaNs everywhere costs the exact pass, a
 * lone NaN a few blocks of it. */
static void keyed_block_rows(column *c, LLVMValueRef o, LLVMValueRef c0, LLVMValueRef r0,
                             uint64_t nrows, uint64_t width) {
  emit_ctx *e = c->e;
  LLVMTypeRef mt = LLVMGetAllocatedType(c->nan_mag);
  LLVMValueRef redo = ec_var(e, e->i1, "redo");
  LLVMValueRef left = LLVMBuildLoad2(e->b, e->i32, c->nan_exact, "");
  LLVMSetOrdering(left, LLVMAtomicOrderingMonotonic);
  LLVMSetAlignment(left, 4);
  LLVMValueRef fast = LLVMBuildICmp(e->b, LLVMIntEQ, left, LLVMConstInt(e->i32, 0, 0), "");
  ec_if f;
  ec_if_begin(e, &f, fast);
  LLVMBuildStore(e->b, LLVMConstNull(mt), c->nan_mag);
  c->fast_keys = true;
  block_rows(c, o, c0, r0, nrows, width);
  c->fast_keys = false;
  LLVMValueRef nan = saw_nan(c);
  LLVMBuildStore(e->b, nan, redo);
  ec_if g;
  ec_if_begin(e, &g, nan);
  store_relaxed(e, c->nan_exact, LLVMConstInt(e->i32, NAN_EXACT_BLOCKS, 0));
  ec_if_else(e, &g);
  ec_if_end(e, &g);
  ec_if_else(e, &f);
  store_relaxed(e, c->nan_exact, LLVMBuildSub(e->b, left, LLVMConstInt(e->i32, 1, 0), ""));
  LLVMBuildStore(e->b, LLVMConstInt(e->i1, 1, 0), redo);
  ec_if_end(e, &f);
  ec_if_begin(e, &f, LLVMBuildLoad2(e->b, e->i1, redo, ""));
  block_rows(c, o, c0, r0, nrows, width);
  ec_if_else(e, &f);
  ec_if_end(e, &f);
}

/* The most rows the direct path takes (emit_direct: every row into one
 * select chain a vector of columns, in registers, no accumulators) rather
 * than groups of rows merged into the block's accumulators, each group a
 * load and a store of them. Up to 8 rows until the thirty-ninth session;
 * alternated in one process (Zen 5), direct over groups as time:
 * AVX-512 from DRAM f32 [8,10,512,512] over the channels 0.68-0.70,
 * [8,12,512,512] 0.67-0.80, [8,14,512,512] 0.75-0.78, [4,16,512,512]
 * 0.85-0.99, [4,21,512,512] 0.81-0.93 (medians 0.93-1.03), [4,24,512,512]
 * 0.80-0.98; f16 [8,12,512,512] 0.64-0.68, [8,21,512,512] 0.91; u8
 * [16,12,512,512] 0.67-0.69, [16,21,512,512] 0.77-0.79; u16 12 rows 0.72;
 * in the caches f32 [1,12,128,128] 0.55-0.56, [1,21,128,128] 0.90, f16
 * [2,21,256,256] 0.73-0.75, u8 0.82-0.96; AVX2 0.74-0.92 (f32 12 and 21
 * rows 0.81-0.84, f16 0.74 and 0.91, u8 21 rows 0.87-0.91). Under 16-byte
 * vectors 12 rows gain (SSE4.2: f32 0.81-0.85, f16 0.75-0.77, u8
 * 0.73-0.76 from DRAM, 0.89-0.95 in the caches) but 16 and 21 lose
 * (1.04-1.67: more streams than 16-byte loads keep going): 12 there, but
 * 24 where the vectors were narrowed for a few columns (rows a few
 * elements apart, no streams: f32 [8192,21,5] over axis 1, with the fast
 * pass's tails, 241-246 -> 71-74 us). */
static uint64_t direct_rows(const emit_ctx *e) {
  return e->vector_bytes >= 32 || e->narrowed_columns ? COLUMN_DIRECT_ROWS : COLUMN_DIRECT_ROWS_16;
}

/* Rows [r0, r0 + nrows) (nrows a constant) of a block of width columns (a
 * constant) starting at column c0 of outer o; chunk ch's partials when
 * split, else the outputs. */
static void emit_block(column *c, LLVMValueRef o, LLVMValueRef c0, LLVMValueRef ch, LLVMValueRef r0,
                       uint64_t nrows, uint64_t width) {
  emit_ctx *e = c->e;
  if (c->rows <= direct_rows(e) && c->chunks == 1 && !c->plane && !c->super_kept) {
    emit_direct(c, o, c0, width);
    return;
  }
  (c->nan_mag ? keyed_block_rows : block_rows)(c, o, c0, r0, nrows, width);
  if (c->chunks > 1) {
    part_arg pa = {o, ch, c0};
    for_columns(c, width, true, save_body, &pa);
    return;
  }
  /* The 1s are ordinary stores into lines the non-temporal 0s may still be
   * writing: a fence first. */
  ec_nt_fence(e);
  store_outputs(c, o, c0, width);
}

/* emit_block for chunk ch: the last chunk has fewer rows. */
static void emit_chunk(column *c, LLVMValueRef o, LLVMValueRef c0, LLVMValueRef ch,
                       uint64_t width) {
  emit_ctx *e = c->e;
  const uint64_t last_rows = c->rows - (c->chunks - 1) * c->chunk_rows;
  LLVMValueRef r0 = ec_mul(e, ch, c->chunk_rows);
  if (last_rows == c->chunk_rows) {
    emit_block(c, o, c0, ch, r0, c->chunk_rows, width);
    return;
  }
  ec_if f;
  ec_if_begin(e, &f, LLVMBuildICmp(e->b, LLVMIntEQ, ch, ec_i64(e, c->chunks - 1), ""));
  emit_block(c, o, c0, ch, r0, last_rows, width);
  ec_if_else(e, &f);
  emit_block(c, o, c0, ch, r0, c->chunk_rows, width);
  ec_if_end(e, &f);
}

/* Calls fn(c, o, c0, width, arg) for block blk of outer o: the last block
 * is narrower. */
typedef void (*block_fn)(column *c, LLVMValueRef o, LLVMValueRef c0, uint64_t width, void *arg);

static void for_block(column *c, LLVMValueRef o, LLVMValueRef blk, block_fn fn, void *arg) {
  emit_ctx *e = c->e;
  const uint64_t blocks = (c->cols + c->block - 1) / c->block;
  const uint64_t last = c->cols - (blocks - 1) * c->block;
  LLVMValueRef c0 = ec_mul(e, blk, c->block);
  if (last == c->block) {
    fn(c, o, c0, c->block, arg);
    return;
  }
  ec_if f;
  ec_if_begin(e, &f, LLVMBuildICmp(e->b, LLVMIntEQ, blk, ec_i64(e, blocks - 1), ""));
  fn(c, o, c0, last, arg);
  ec_if_else(e, &f);
  if (blocks > 1)
    fn(c, o, c0, c->block, arg);
  ec_if_end(e, &f);
}

static void task_block(column *c, LLVMValueRef o, LLVMValueRef c0, uint64_t width, void *arg) {
  emit_chunk(c, o, c0, arg, width);
}

static void finish_block(column *c, LLVMValueRef o, LLVMValueRef c0, uint64_t width, void *arg) {
  (void)arg;
  part_arg pa = {o, NULL, c0};
  for_columns(c, width, true, merge_body, &pa);
  store_outputs(c, o, c0, width);
}

dmlc_status ec_emit_column(emit_ctx *e, const char *name, dmlc_cpu_kernel_info *info) {
  const dmlc_kdesc *k = e->k;
  column c = {.e = e};
  c.plane = plane_matches(k);
  c.rows = k->dims[c.plane ? 0 : k->rank - 2];
  c.rs = k->read_strides[c.plane ? 0 : k->rank - 2];
  c.cols = c.plane ? (uint64_t)k->dims[1] * k->dims[2] : k->dims[k->rank - 1];
  c.x = k->dims[k->rank - 1];
  c.outer = k->rank == 3 && !c.plane ? k->dims[0] : 1;
  const uint32_t super = ec_column_super_rows(k, e->vector_bytes);
  if (super > 1) {
    c.super_kept = c.cols;
    c.x = super;
    c.rows /= super;
    c.rs *= super;
    c.cols *= super;
  }
  c.lanes = ec_vector_lanes(e, k->read_dtype);
  c.keys = k->read_dtype == DMLC_DTYPE_F16;
  c.ct = c.keys ? e->i16 : ec_cmp_type(e, k->read_dtype);
  c.ct_size = dmlc_dtype_size(k->read_dtype);
  /* Narrow types: more rows a step, as each row's vector holds more
   * columns per accumulator byte moved (8 was 10-15% faster than 4 for
   * 16-bit columns, and slower for f32 on a Zen 3's 16 AVX2 registers).
   * With AVX-512's 32 registers every type takes 8 (f32 on a Zen 4: 0.93-0.97
   * of the time over the middle axis, over axis 0 and hardmax over the
   * columns; 21 rows 1.00 once the rows past the last step went as one
   * group, rows_loops). */
  c.step_rows = c.ct_size >= 4 && e->vector_bytes < 64 ? 4 : COLUMN_MAX_STEP_ROWS;
  /* Floats under AVX-512 from the caches: a row's take is two mask
   * compares on the chain (x > v, v ordered) and a masked move, so eight
   * rows in one chain are latency-bound; merged pairwise the chain is four
   * merges deep. On a Zen 5, alternated in one process: f32 [64,2048] over
   * axis 0 0.75-0.82 of the time, [128,4096] 0.78-0.84, argmin over the
   * middle axis of [8,64,1024] 0.90, 21 channels of 64x64 0.95; one thread
   * in L2 52 -> 67 GB/s. Not from DRAM (1.02-1.11 there, with the rows'
   * prefetches), nor with AVX2 (0.93-1.01: BLENDVPS chains are shorter) or
   * integers (a PMAX* carries the value, off the compare). */
  c.tree_rows = e->vector_bytes >= 64 && !e->from_dram && !c.keys &&
                dmlc_dtype_get(k->read_dtype)->kind == DMLC_KIND_FLOAT;
  /* (below, with the f16 keys' fast pass) */
  c.fast_floats =
      e->vector_bytes == 16 && !c.keys && dmlc_dtype_get(k->read_dtype)->kind == DMLC_KIND_FLOAT;
  /* Unsigned columns: 3 vector operations a row instead of 4 (u16 and u32;
   * u8's compares were already lowered so, and AVX-512 compares into
   * masks). u16 [512,1024] over axis 0 in L2: 0.88-0.93 of the time. */
  c.unsigned_extreme = !c.keys && dmlc_dtype_get(k->read_dtype)->kind == DMLC_KIND_UNSIGNED &&
                       k->direction == DMLC_DIRECTION_INCREASING && e->vector_bytes < 64 &&
                       c.ct_size <= 4; /* u64: no PMAXUQ before AVX-512 */
  /* Row indices as narrow as the values where the rows fit: 16-bit ones
   * beside 16-bit values, 8-bit beside 8-bit (then a row's take mask
   * selects its index as it is, with no widening to the index lanes), so
   * fewer accumulator bytes and a wider block within COLUMN_ACC_BYTES. */
  c.it_size = c.ct_size == 1 && c.rows <= 256 ? 1 : c.ct_size <= 2 && c.rows <= 65536 ? 2 : 4;
  c.it = LLVMIntTypeInContext(e->c, 8 * c.it_size);
  /* Long contiguous row runs keep the hardware prefetcher streaming across
   * the rows' pages (a block as wide as the rows reads one sequential
   * stream); the accumulators then live in L1 or L2. From DRAM, 32 rows or
   * more of 512 KiB or more are read a page at a time instead, as Halide's
   * peer schedule does, the accumulators in L1: the block's runs are far
   * apart whatever their length. Against 32 KiB runs, alternated in one
   * process (Zen 3, f32 columns): 64 rows of 4 MiB 0.93-0.97 of the time
   * (dmlc / Halide 1.04-1.09 -> 0.93-1.04), 64 of 1 MiB 0.90-0.99, 32 of
   * 2 MiB 0.85-0.96, 128 of 512 KiB 0.84-0.97; but 21 rows of 1 or 4 MiB
   * 1.02-1.16 (the first group of a block's runs comes unprefetched, a
   * larger share of few rows), 32 rows of 512 KiB from L3 1.01-1.04, and
   * 64 rows of 64 KiB (u8 NCHW) 1.02-1.18 with 8 KiB runs. On a Zen 4 the
   * long runs are the faster (long_column_runs, jit.c). */
  c.block = 256;
  const uint64_t run = e->from_dram && !e->long_column_runs && c.rows >= COLUMN_SHORT_RUN_ROWS &&
                               c.cols * dmlc_dtype_size(k->read_dtype) >= COLUMN_LONG_ROW_BYTES
                           ? COLUMN_SHORT_RUN_BYTES
                           : COLUMN_RUN_BYTES;
  while (2 * c.block * dmlc_dtype_size(k->read_dtype) <= run &&
         2 * c.block * (c.ct_size + c.it_size) <= COLUMN_ACC_BYTES)
    c.block *= 2;
  if (c.super_kept) /* a super row's candidates span it: one block */
    c.block = c.cols;
  const uint64_t cols_rounded = (c.cols + c.lanes - 1) / c.lanes * c.lanes;
  /* Too few blocks for the threads: chunks of rows, or else narrower
   * blocks. */
  c.chunks = 1;
  c.chunk_rows = c.rows;
  const uint64_t wide = c.block < cols_rounded ? c.block : cols_rounded;
  const uint64_t wide_tasks = c.outer * ((c.cols + wide - 1) / wide);
  if (wide_tasks < COLUMN_SPLIT_TASKS && c.rows >= 2 * COLUMN_CHUNK_ROWS) {
    const uint64_t want = (COLUMN_SPLIT_TASKS + wide_tasks - 1) / wide_tasks;
    c.chunk_rows = (c.rows + want - 1) / want;
    if (c.chunk_rows < COLUMN_CHUNK_ROWS)
      c.chunk_rows = COLUMN_CHUNK_ROWS;
    c.chunks = (c.rows + c.chunk_rows - 1) / c.chunk_rows;
  }
  while (c.chunks == 1 && c.block > 256 && !c.super_kept &&
         c.outer * ((c.cols + c.block - 1) / c.block) < COLUMN_MIN_TASKS)
    c.block /= 2;
  if (c.block > cols_rounded)
    c.block = cols_rounded;
  if (c.plane) { /* whole K points */
    c.block = c.block < c.x ? c.x : c.block / c.x * c.x;
    if (c.block > c.cols)
      c.block = c.cols;
  }
  const uint64_t blocks = (c.cols + c.block - 1) / c.block;
  /* From DRAM, runs of half COLUMN_RUN_BYTES or more
   * are prefetched a group of rows ahead only when that group, the one
   * being read and the accumulators fit in three quarters of a core's L2
   * with 64-byte vectors, half with narrower ones: else the prefetched
   * lines evict the ones being read. Channel argmax over f16
   * [16,64,128,128] (groups of 8 runs of 32 KiB, 576 KiB in all): on a
   * Zen 3 (512 KiB L2) 63% of the plain loop with the prefetches and 100%
   * without; on a Zen 4 (1 MiB, AVX-512) 0.72-0.79 of the time with them,
   * and the other DRAM column kernels 0.96-1.00. Half, not three quarters,
   * under 64-byte vectors (a Zen 3, alternated in one process, without
   * over with): f16 [8192,8192] over axis 0 (288 KiB) 0.85 of the time
   * with AVX2, 0.57 with SSE4.2, u16 0.89 and 0.73, f32 [4,21,512,512]
   * over axis 1 (320 KiB) 0.83 and 0.98, f32 [8192,8192] over axis 0 a
   * tie. Shorter runs are prefetched
   * (argmin over the middle axis of f32 [64,1024,1024], 4 KiB runs, Zen 3:
   * 93% with, 84% without).
   * With no_column_run_prefetch (a Zen 5), those long runs are read
   * without the prefetches when the blocks are tasks of their own (no row
   * chunks), under 64-byte vectors, or for values of one or two bytes under
   * any. Alternated in one process, without over with, 64-byte vectors:
   * u8 [16,64,256,256] over the channels 0.82-0.93 of the time,
   * f16 [16,64,128,128] 0.86-1.03 (medians 0.93-0.99), f32
   * [4,21,512,512] 0.93-0.95, f32 [8,256,32768] over the middle axis
   * 0.89-0.91, f16 [32,128,16384] 0.85-0.88, u16 0.91, argmin of i32
   * [16,128,32768] 0.91-0.95. Split into row chunks they gain nothing (f32
   * [8192,8192] over axis 0 0.98-1.00) or lose (f16 1.19-1.34), and under
   * narrower vectors f32 loses (f32 [4,21,512,512] 1.03-1.14 with AVX2,
   * 1.29-1.34 with SSE4.2; [8,256,32768] 1.03-1.06 with AVX2, 1.24 with
   * SSE4.2) where narrow values gain (AVX2: u8 [16,64,256,256] 0.77-0.79,
   * f16 [16,64,128,128] 0.80-0.92, u16 [32,128,16384] 0.93-0.97, u8
   * [16,32,512,512] 0.94; SSE4.2: 0.87-0.99, medians 0.87-1.02). */
  const uint64_t group_bytes = (uint64_t)c.step_rows * c.block * dmlc_dtype_size(k->read_dtype);
  const uint64_t footprint = 2 * group_bytes + c.block * (c.ct_size + c.it_size);
  const bool long_runs = c.block * dmlc_dtype_size(k->read_dtype) >= COLUMN_RUN_BYTES / 2;
  c.prefetch_rows =
      e->prefetch_bytes &&
      (!e->from_dram || !long_runs ||
       (e->l2_bytes &&
        footprint <= (e->vector_bytes >= 64 ? e->l2_bytes / 4 * 3 : e->l2_bytes / 2) &&
        !(e->no_column_run_prefetch && c.chunks == 1 &&
          (e->vector_bytes >= 64 || dmlc_dtype_size(k->read_dtype) <= 2))));
  /* Those runs from DRAM then prefetch each row's run 2 KiB ahead into L1
   * (with no_column_run_prefetch: measured on a Zen 5 only). The hardware
   * prefetcher alone left them at 70-85% of the plain loop. bench_cpu,
   * rounds alternated, ratio to the fastest loop, without and with: f16
   * [16,64,128,128] over the channels 72-90% -> 99-118%, u8
   * [16,64,256,256] 68-86% -> 73-89% (times 0.87-0.96); with AVX2 84-101%
   * -> 98-118% and 76-79% -> 97-105%; with SSE4.2 u8 0.71-0.97 of the
   * time, f16 0.85-0.98. Alternated (dmlc run), new over old time: f32
   * [8,256,32768] over the middle axis 0.72-0.78, f16 [32,128,16384]
   * 0.60-0.66, u16 0.80-0.88, argmax of i32 [16,128,32768] 0.83-0.89, u8
   * [16,32,512,512] 0.83-0.98. 1 KiB ahead about as good, 4 KiB lost most
   * of the gain, 16 KiB lost (66-70%). In place of the next group's
   * prefetches where the kernel has them (row chunks, short runs) it lost
   * or tied: argmin over the middle axis of [64,1024,1024] 63-65% against
   * 80-87%, f32 and u16 [8192,8192] over axis 0 within the noise; nor did
   * the direct path gain by it (f32 [4,21,512,512] 77-81% either way). */
  c.run_ahead = e->from_dram && e->prefetch_bytes && e->no_column_run_prefetch && !c.prefetch_rows;
  const uint64_t part_bytes = c.outer * c.chunks * c.cols * c.ct_size;
  c.part_idx = (part_bytes + 63) / 64 * 64;
  e->use_scratch = c.chunks > 1;

  LLVMValueRef begin, end;
  ec_function_begin(e, name, true, &begin, &end);
  c.acc = ec_array(e, c.ct, c.block, 64);
  c.acc_idx = ec_array(e, c.it, c.block, 64);
  /* f16 keys under 16- and 32-byte vectors: a block's fast pass keeps one
   * PMAXUW of the magnitudes for the NaN fix's compare and blend (emit_block).
   * Alternated in one process against the exact pass alone, f16
   * [16,64,128,128] over the channels: 0.90 of the time with SSE4.2,
   * 0.94-0.97 with AVX2; f16 [8192,8192] over axis 0: 0.92 (SSE4.2), 1.00
   * (AVX2). AVX-512's mask compares gained nothing from no NaN fix at all.
   * After a block with a NaN the next NAN_EXACT_BLOCKS skip the fast pass:
   * with a NaN every 4096 or every million values, f16 NCHW64 and f16
   * [8192,8192] over axis 0 took 0.53-0.65 of the time of a fast pass and a
   * redo for every block (SSE4.2 and AVX2), and data without NaNs the same. */
  /* Floats under SSE4.2 the same way (fast_floats): a row's take is one
   * CMPPS (the value then a MAXPS), not two compares, an AND and a
   * BLENDVPS; the sum's ADDPS is off the chain. Alternated in one process
   * against the exact pass alone (SSE4.2, Zen 5), as time: f32 [64,2048]
   * over axis 0 0.86, [8192,8192] 0.93-0.97, argmin over the middle axis
   * of [64,1024,1024] 0.93-1.03, over axis 0 0.90-0.95; under AVX2 the
   * ordered compare alone gained nothing from DRAM (1.04-1.27). */
  if ((c.keys && e->vector_bytes < 64) || c.fast_floats) {
    c.nan_mag = ec_var(e, ec_lanes(c.fast_floats ? c.ct : e->i16, c.lanes), "nan_mag");
    char sym[256];
    snprintf(sym, sizeof sym, "%s_nan_exact", name);
    c.nan_exact = LLVMAddGlobal(e->m, e->i32, sym);
    LLVMSetLinkage(c.nan_exact, LLVMInternalLinkage);
    LLVMSetInitializer(c.nan_exact, LLVMConstInt(e->i32, 0, 0));
    LLVMSetAlignment(c.nan_exact, 4);
  }
  ec_loop l;
  LLVMValueRef t = ec_loop_begin(e, &l, begin, end, 1);
  LLVMValueRef ch = LLVMBuildURem(e->b, t, ec_i64(e, c.chunks), "chunk");
  t = LLVMBuildUDiv(e->b, t, ec_i64(e, c.chunks), "");
  LLVMValueRef o = LLVMBuildUDiv(e->b, t, ec_i64(e, blocks), "outer");
  LLVMValueRef blk = LLVMBuildURem(e->b, t, ec_i64(e, blocks), "block");
  for_block(&c, o, blk, task_block, ch);
  ec_loop_end(e, &l);
  ec_function_end(e);

  info->num_tasks = c.outer * blocks * c.chunks;
  uint64_t bytes = c.chunk_rows * c.block * dmlc_dtype_size(k->read_dtype);
  for (uint32_t i = 0; i < k->num_outputs; i++)
    bytes += c.block * dmlc_dtype_size(k->outputs[i].dtype) *
             (k->outputs[i].kind == DMLC_KOUT_ONEHOT ? c.chunk_rows : 1);
  info->bytes_per_task = bytes;
  if (c.chunks == 1)
    return DMLC_OK;

  /* finish: merge each column's partials, then the outputs */
  char finish[256];
  snprintf(finish, sizeof finish, "%s_finish", name);
  ec_function_begin(e, finish, false, NULL, NULL);
  c.acc = ec_array(e, c.ct, c.block, 64);
  c.acc_idx = ec_array(e, c.it, c.block, 64);
  c.nan_mag = NULL; /* the kernel's: the finish merges keys, reads none */
  ec_loop lf;
  t = ec_loop_begin(e, &lf, ec_i64(e, 0), ec_i64(e, c.outer * blocks), 1);
  o = LLVMBuildUDiv(e->b, t, ec_i64(e, blocks), "outer");
  blk = LLVMBuildURem(e->b, t, ec_i64(e, blocks), "block");
  for_block(&c, o, blk, finish_block, NULL);
  ec_loop_end(e, &lf);
  ec_function_end(e);
  info->scratch_bytes = c.part_idx + c.outer * c.chunks * c.cols * c.it_size;
  info->has_finish = true;
  return DMLC_OK;
}
