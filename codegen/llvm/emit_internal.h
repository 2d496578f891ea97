/* Shared state and building blocks of the LLVM kernel emitter (emit_*.c). */
#ifndef DMLC_CODEGEN_LLVM_EMIT_INTERNAL_H
#define DMLC_CODEGEN_LLVM_EMIT_INTERNAL_H

#include <llvm-c/Core.h>

#include "codegen/llvm/emit.h"

/* The longest vector (in elements) built from constant lanes (ec_splat of
 * a constant, ec_iota, the shuffles of ec_merge_halves): the wide loads of
 * emit_small.c and emit_column.c's super rows stay within it. */
enum { EC_MAX_LANES = 1024 };
/* Columns past a block's whole vectors go in vectors of half, a quarter
 * ... the lanes down to this many bytes of compared values, then scalars
 * (emit_column.c's for_columns_from, emit_merge.c's mcol_merge_all). */
enum { EC_TAIL_MIN_BYTES = 8 };
/* With far_row_prefetch, how far ahead rows from DRAM are prefetched: the
 * rows' stream prefetches (ec_prefetch_stream, emit.c) and each row of a
 * row group (emit_row.c's emit_row_groups). */
enum { EC_FAR_AHEAD_BYTES = 1u << 14 };

typedef struct emit_ctx {
  LLVMContextRef c;
  LLVMModuleRef m;
  LLVMBuilderRef b;       /* the code */
  LLVMBuilderRef entry_b; /* allocas and buffer pointers, in the entry block */
  const dmlc_kdesc *k;
  uint32_t vector_bytes;
  uint32_t target_vector_bytes; /* the target's, before a kernel narrows vector_bytes */
  uint64_t nt_min_bytes;        /* dmlc_llvm_target.nontemporal_min_bytes */
  uint64_t split_min_bytes;     /* dmlc_llvm_target.split_min_bytes */
  uint32_t row_narrow_bytes;    /* dmlc_llvm_target.row_narrow_bytes */
  uint64_t l2_bytes;            /* dmlc_llvm_target.l2_bytes */
  bool long_column_runs;        /* dmlc_llvm_target.long_column_runs */
  bool short_row_blocks;        /* dmlc_llvm_target.short_row_blocks */
  bool far_row_prefetch;        /* dmlc_llvm_target.far_row_prefetch */
  bool no_column_run_prefetch;  /* dmlc_llvm_target.no_column_run_prefetch */
  bool byte_permutes;           /* dmlc_llvm_target.byte_permutes */
  bool lane_rows;               /* dmlc_llvm_target.lane_rows */
  /* Software prefetch distance in bytes for streamed reads; 0: none (the
   * target's prefetch_bytes when the kernel reads enough). */
  uint32_t prefetch_bytes;
  /* The read comes from DRAM: past dmlc_llvm_target.stream_prefetch_max_bytes */
  bool from_dram;
  /* ec_prefetch_stream prefetches: prefetch_bytes, not from_dram, and
   * within dmlc_llvm_target.row_prefetch_max_bytes */
  bool row_prefetch;
  uint32_t psign_bytes; /* dmlc_llvm_target.psign_bytes */
  /* Emitted as for a 32-byte target on a 64-byte one (ec_narrow_rows):
   * vector_bytes and target_vector_bytes both 32 then. */
  bool narrowed_rows;
  /* column_vector_bytes narrowed the target's vectors (a few columns,
   * their rows close together) */
  bool narrowed_columns;
  /* A step along reduced dim d adds index_weights[d] to the index (row-major
   * over the reduced dims, unless reordered); reordered: the reduced dims are
   * not in the order the index counts them (emit.c's storage_order; merged
   * rows and merged columns only). */
  bool reordered;
  uint64_t index_weights[DMLC_MAX_RANK];
  /* The read's strides in the kernel description are the buffer's divided
   * by this (emit.c: every non-zero stride a multiple of the least, which
   * becomes 1): its offsets are scaled, its vectors strided (ec_load). */
  uint64_t read_scale;
  bool soft_half; /* dmlc_llvm_target.soft_half */
  LLVMValueRef fn;
  LLVMBasicBlockRef entry;
  /* Buffer pointers loaded in the entry block: read, outputs, scratch. */
  LLVMValueRef read;
  LLVMValueRef out[DMLC_KDESC_MAX_OUTPUTS];
  LLVMValueRef scratch;
  /* ec_store_run_nt prefetches the read from this element offset (NULL:
   * none), one vector's worth of read elements per vector stored. */
  LLVMValueRef run_prefetch;
  bool use_scratch; /* set before ec_function_begin to load the scratch pointer */
  bool nt_used;     /* the function has non-temporal stores (ec_nt_fence) */
  LLVMTypeRef i1, i8, i16, i32, i64, f16, f32, f64, ptr, void_t;
  LLVMTypeRef dtype_types[DMLC_DTYPE_COUNT]; /* ec_init_dtype_types */
} emit_ctx;

/* ---- functions (emit.c) ---- */
/* Starts `name` as void(ptr buffers, i64 begin, i64 end) (ranged) or
 * void(ptr buffers); *begin / *end receive the range arguments. */
void ec_function_begin(emit_ctx *e, const char *name, bool ranged, LLVMValueRef *begin,
                       LLVMValueRef *end);
void ec_function_end(emit_ctx *e);

/* ---- types and constants (emit_common.c) ---- */
/* Fills e->dtype_types from ir/dtypes.def's LLVM spelling of each dtype;
 * false when LLVM has no type of that spelling (a wrong table row). */
bool ec_init_dtype_types(emit_ctx *e);
LLVMTypeRef ec_store_type(emit_ctx *e, dmlc_dtype dt); /* bool is i8, f16 is half */
LLVMTypeRef ec_cmp_type(emit_ctx *e, dmlc_dtype dt);   /* f16 compares as float */
LLVMTypeRef ec_lanes(LLVMTypeRef t, uint32_t lanes);   /* t itself when lanes == 1 */
LLVMValueRef ec_i32(emit_ctx *e, uint64_t v);
LLVMValueRef ec_i64(emit_ctx *e, uint64_t v);
LLVMValueRef ec_splat(emit_ctx *e, LLVMValueRef scalar, uint32_t lanes);
/* The n lanes idx picks from a, then b (NULL: a alone), as constants. */
LLVMValueRef ec_shuffle(emit_ctx *e, LLVMValueRef a, LLVMValueRef b, const uint32_t *idx,
                        uint32_t n);
/* <0, 1, ..., lanes-1> as i32 (ec_iota) or integers of type t (a scalar 0
 * when lanes is 1). */
LLVMValueRef ec_iota(emit_ctx *e, uint32_t lanes);
LLVMValueRef ec_iota_of(LLVMTypeRef t, uint32_t lanes);
/* value (an int64 as the constant op holds it) as a dtype element. */
LLVMValueRef ec_const_elem(emit_ctx *e, dmlc_dtype dt, int64_t value);
/* Elements per vector for dtype dt: vector_bytes / size. */
uint32_t ec_vector_lanes(const emit_ctx *e, dmlc_dtype dt);

/* ---- memory ---- */
LLVMValueRef ec_var(emit_ctx *e, LLVMTypeRef t, const char *name); /* entry alloca */
LLVMValueRef ec_array(emit_ctx *e, LLVMTypeRef t, uint64_t count, uint32_t align);
/* lanes elements of dt at base + off (in elements), unaligned. */
LLVMValueRef ec_load(emit_ctx *e, dmlc_dtype dt, LLVMValueRef base, LLVMValueRef off,
                     uint32_t lanes);
void ec_store(emit_ctx *e, dmlc_dtype dt, LLVMValueRef base, LLVMValueRef off, LLVMValueRef v);
/* lanes elements of the read at off, widened to ec_cmp_type. */
/* f16 values (lanes of them) widened to f32, exactly. */
LLVMValueRef ec_f16_to_f32(emit_ctx *e, LLVMValueRef v, uint32_t lanes);
LLVMValueRef ec_load_read_cmp(emit_ctx *e, LLVMValueRef off, uint32_t lanes);
/* f16 values v (lanes of them) as i16 keys whose signed order is the
 * argmax / argmin order: sign-magnitude to two's complement (-0 and +0
 * both 0, the infinities +-0x7C00), every NaN one key above (argmax) or
 * below (argmin) everything else, so NaNs tie with each other. */
LLVMValueRef ec_f16_key(emit_ctx *e, LLVMValueRef v, uint32_t lanes);
/* The same without the NaN rule (a NaN's key is its bits' two's
 * complement); *mag gets the magnitude bits (sign cleared). */
LLVMValueRef ec_f16_twos(emit_ctx *e, LLVMValueRef v, uint32_t lanes, LLVMValueRef *mag);
/* lanes f16 elements of the read at off as ec_f16_key's keys. */
LLVMValueRef ec_load_read_key(emit_ctx *e, LLVMValueRef off, uint32_t lanes);
/* The coordinates (i64) of the row-major position t over the dims in list:
 * coords[i] along list[i]. */
void ec_coords(emit_ctx *e, const uint32_t *list, uint32_t n, LLVMValueRef t, LLVMValueRef *coords);
LLVMValueRef ec_add(emit_ctx *e, LLVMValueRef a, LLVMValueRef b);
LLVMValueRef ec_mul(emit_ctx *e, LLVMValueRef a, uint64_t c);
/* a + b * c, with c a constant. */
LLVMValueRef ec_madd(emit_ctx *e, LLVMValueRef a, LLVMValueRef b, uint64_t c);

/* ---- loops: for (iv = start; iv < end; iv += step), i64 ---- */
typedef struct ec_loop {
  LLVMBasicBlockRef head, body, exit;
  LLVMValueRef iv;
  uint64_t step;
} ec_loop;
LLVMValueRef ec_loop_begin(emit_ctx *e, ec_loop *l, LLVMValueRef start, LLVMValueRef end,
                           uint64_t step);
void ec_loop_end(emit_ctx *e, ec_loop *l);
/* if (cond) {then} else {otherwise}: ec_if_begin positions at then;
 * ec_if_else moves to otherwise; ec_if_end joins. */
typedef struct ec_if {
  LLVMBasicBlockRef then, otherwise, join;
} ec_if;
void ec_if_begin(emit_ctx *e, ec_if *f, LLVMValueRef cond);
void ec_if_else(emit_ctx *e, ec_if *f);
void ec_if_end(emit_ctx *e, ec_if *f);

/* ---- the argmax / argmin order (scalars or vectors of ec_cmp_type, or of
 * i16 keys for f16: ec_f16_key) ---- */
/* x comes after best in index order: true where x replaces best. */
LLVMValueRef ec_take_next(emit_ctx *e, LLVMValueRef x, LLVMValueRef best);
/* ec_take_next for floats by one ordered compare: exact when neither x
 * nor v is NaN (a fast pass that checks for NaN apart). */
LLVMValueRef ec_take_ordered(emit_ctx *e, LLVMValueRef x, LLVMValueRef v);
/* Two candidates with any indices (unsigned ai, bi): true where b wins. */
LLVMValueRef ec_take_merge(emit_ctx *e, LLVMValueRef a, LLVMValueRef ai, LLVMValueRef b,
                           LLVMValueRef bi);
/* A select of a row's value or index by its take mask, take ? x : v,
 * marked !unpredictable (a CMOV or masked move), but for reads of 64-bit
 * integers: LLVM's CodeGenPrepare turns a scalar select whose compare
 * reads a load into a branch, which data of no pattern mispredicts.
 * Alternated on a Zen 5 (AVX-512), columns' direct path (each row a
 * 16-byte vector and scalars), random data, as time: f32 [4096,12,7] over
 * axis 1 0.40, i16 [8192,21,5] 0.29, f16 0.30, i32 [4096,12,7] 0.75-1.21,
 * but i64 [4096,12,3] 1.5-1.6 (left to branch). */
LLVMValueRef ec_select_unpredictable(emit_ctx *e, LLVMValueRef take, LLVMValueRef x,
                                     LLVMValueRef v);
/* (*a, *ai) becomes the better of itself and (b, bi) by value, then index;
 * when ordered, floats are compared as ec_take_ordered does (exact where
 * neither is NaN). */
void ec_merge_pair(emit_ctx *e, bool ordered, LLVMValueRef *a, LLVMValueRef *ai, LLVMValueRef b,
                   LLVMValueRef bi);
/* Merges n candidates (val[u], idx[u]) pairwise as a tree into val[0],
 * idx[0] (the merge is by value, then index: the order does not matter). */
void ec_merge_tree(emit_ctx *e, bool ordered, LLVMValueRef *val, LLVMValueRef *idx, uint32_t n);
/* Reduces a vector of candidates (val, idx) to lane 0; returns scalars. */
void ec_merge_lanes(emit_ctx *e, LLVMValueRef val, LLVMValueRef idx, uint32_t lanes,
                    LLVMValueRef *out_val, LLVMValueRef *out_idx);
/* ec_merge_lanes down to keep lanes (lanes a power of two times keep):
 * the first half merged with the second lane by lane, then the quarters,
 * ...; lane l of the result is the best of lanes l, l + keep, l + 2 keep... */
void ec_merge_halves(emit_ctx *e, LLVMValueRef val, LLVMValueRef idx, uint32_t lanes, uint32_t keep,
                     LLVMValueRef *out_val, LLVMValueRef *out_idx);

/* ---- intrinsics ---- */
/* The integer extreme (llvm.<op>: "smax", "umin", ...) an argmax or argmin
 * of the read's integer type keeps (emit_row.c). */
const char *ec_int_op(const emit_ctx *e);
/* llvm.<op> (smax, umin, ...) of two integer vectors (emit_row.c). */
LLVMValueRef ec_minmax(emit_ctx *e, const char *op, LLVMValueRef a, LLVMValueRef b);
/* A call of the overloaded intrinsic `name` (types: its overload types). */
LLVMValueRef ec_intrinsic(emit_ctx *e, const char *name, LLVMTypeRef *types, size_t ntypes,
                          LLVMValueRef *args, unsigned nargs);

/* ---- conversions ---- */
/* v (elements of from, as loaded: ec_store_type) converted to `to` with the
 * cast op's semantics. */
LLVMValueRef ec_convert(emit_ctx *e, LLVMValueRef v, dmlc_dtype from, dmlc_dtype to);

/* ---- outputs ---- */
/* Writes value (a dtype constant) to count elements at base + off + i * stride. */
void ec_fill(emit_ctx *e, dmlc_dtype dt, LLVMValueRef base, LLVMValueRef off, LLVMValueRef count,
             uint64_t stride, LLVMValueRef value);
/* Non-temporal stores (outputs written once and not read back soon):
 * a vector store of v at element off of base that skips the caches; the
 * address must be aligned to the vector's size, or to the machine's vector
 * size (e->vector_bytes) for a wider one. */
void ec_store_nt(emit_ctx *e, dmlc_dtype dt, LLVMValueRef base, LLVMValueRef off, LLVMValueRef v);
/* Whether base + off (in elements of dt) is aligned to bytes (a power of 2). */
LLVMValueRef ec_is_aligned(emit_ctx *e, dmlc_dtype dt, LLVMValueRef base, LLVMValueRef off,
                           uint64_t bytes);
/* The values of `lanes` consecutive elements of a run from element i. */
typedef LLVMValueRef (*ec_run_value)(emit_ctx *e, LLVMValueRef i, uint32_t lanes, void *arg);
/* Writes count contiguous elements of dt at base + off (in elements), the
 * values from fn: scalar stores up to the first vector-aligned element (all
 * of them when the run is not element-aligned), aligned non-temporal vector
 * stores, scalar stores for the rest. Sets e->nt_used: the function must end
 * with ec_nt_fence. */
void ec_store_run_nt(emit_ctx *e, dmlc_dtype dt, LLVMValueRef base, LLVMValueRef off,
                     LLVMValueRef count, ec_run_value fn, void *arg);
/* ec_store_run_nt of a one-hot run: 0s but a 1 at element `one` of the run
 * (i64; NULL: none), the vectors of 0s as constant stores, 64 bytes a loop
 * trip, e->run_prefetch's read prefetched as many bytes a trip as stored. */
void ec_store_onehot_run_nt(emit_ctx *e, dmlc_dtype dt, LLVMValueRef base, LLVMValueRef off,
                            LLVMValueRef count, LLVMValueRef one);
/* Prefetches (for reading) the cache line at element off of the read, plus
 * bytes (may point past the buffer: prefetches never fault), into L1
 * (near) or L2 and up. */
void ec_prefetch_read(emit_ctx *e, LLVMValueRef off, int64_t bytes, bool near);
/* ec_prefetch_read, bytes (i64; NULL: 0) past read element off. */
void ec_prefetch_read_at(emit_ctx *e, LLVMValueRef off, LLVMValueRef bytes, bool near);
/* Prefetches (into L1) the lines of `bytes` bytes from read element off,
 * `ahead` bytes further on, as straight-line code: one prefetch per 64
 * bytes (one when bytes is smaller). */
void ec_prefetch_span(emit_ctx *e, LLVMValueRef off, uint64_t bytes, uint64_t ahead);
/* ec_prefetch_span of a streamed read, e->prefetch_bytes ahead, where
 * row_prefetch holds. Nothing when e->prefetch_bytes is 0. */
void ec_prefetch_stream(emit_ctx *e, LLVMValueRef off, uint64_t bytes);
/* Bytes the kernel reads in all (the read's dims, with broadcast ones). */
uint64_t ec_read_bytes(const dmlc_kdesc *k);
/* Whether any lane of v (a vector of integers, or of i1) is not zero (i1). */
LLVMValueRef ec_any_lane(emit_ctx *e, LLVMValueRef v);
/* A fence that orders the non-temporal stores before anything the caller
 * does after the kernel returns (the thread pool's hand-off); nothing when
 * the function made none. */
void ec_nt_fence(emit_ctx *e);
/* Whether an output of out_bytes is large enough for non-temporal stores:
 * at least the target's non-temporal size alone, or with the read and at
 * least an eighth of it (an index plane beside its input, which the
 * streaming input evicts from the last-level cache before anything reads
 * it back). */
bool ec_nt_bytes(const emit_ctx *e, uint64_t out_bytes);
/* Whether output i is a full-size output large enough for non-temporal
 * stores. */
bool ec_output_nt(const emit_ctx *e, uint32_t i);
/* Whether output i of a kernel of rows ([K, R]: short packed rows, row
 * groups) is stored with non-temporal stores where aligned: a contiguous
 * INDEX output large enough (ec_nt_bytes; the channel argmax of a large
 * NHWC image writes more than it reads). */
bool ec_index_nt(const emit_ctx *e, uint32_t i);
/* Whether every ec_index_nt output is aligned for a non-temporal store of
 * lanes indices (as ec_store_nt aligns it), an i1; NULL when none is. */
LLVMValueRef ec_index_nt_aligned(emit_ctx *e, uint32_t lanes);

/* ---- paths ---- */
/* (value, i32 index) vector accumulators of lanes that fit in 12 of the 16
 * vector registers (24 of AVX-512's 32), at most `most`: a compare-and-
 * select chain per accumulator takes several cycles, so data already in
 * cache runs as fast as there are independent chains. */
uint32_t ec_row_accumulators(const emit_ctx *e, uint32_t lanes, uint32_t most);
/* Reduces len contiguous elements of the read from element offset off
 * (emit_row.c): *val the best value (ec_cmp_type), *idx its position (i64),
 * the first (increasing) or last (decreasing) of equals, NaN first. */
void ec_reduce_row(emit_ctx *e, LLVMValueRef off, uint64_t len, LLVMValueRef *val,
                   LLVMValueRef *idx);
bool ec_row_matches(const dmlc_kdesc *k);
/* Whether the kernel reduces packed rows ([k, r], each row right after
 * the one before) into index outputs only. */
bool ec_packed_index_rows(const emit_ctx *e);
/* Whether ec_emit_row takes packed rows that ec_small_rows_matches also
 * matches (as row groups). */
bool ec_rows_as_groups(const emit_ctx *e);
/* Whether packed rows on a target with 64-byte vectors are emitted as for
 * a 32-byte one (its row groups; emit_row.c says where it was measured). */
bool ec_narrow_rows(const emit_ctx *e);
bool ec_merged_rows_matches(const dmlc_kdesc *k);
dmlc_status ec_emit_merged_rows(emit_ctx *e, const char *name, dmlc_cpu_kernel_info *info);
bool ec_merged_columns_matches(const dmlc_kdesc *k);
/* Merged columns' super rows (emit_merge.c): how many rows of the
 * innermost reduced dim make one with vectors of vector_bytes; 1: none. */
uint64_t ec_merged_columns_super_rows(const emit_ctx *e, uint32_t vector_bytes);
/* ... and whether the innermost reduced dim's rows go as runs in registers */
bool ec_merged_columns_runs(const emit_ctx *e, uint32_t vector_bytes);
bool ec_small_rows_matches(const dmlc_kdesc *k);
/* Short packed rows by permutes (emit_bytes.c). */
bool ec_byte_rows_matches(const emit_ctx *e);
dmlc_status ec_emit_byte_rows(emit_ctx *e, const char *name, dmlc_cpu_kernel_info *info);
/* Short 8- and 16-bit rows in 16-byte lanes (emit_lanes.c). */
bool ec_lane_rows_matches(const emit_ctx *e);
dmlc_status ec_emit_lane_rows(emit_ctx *e, const char *name, dmlc_cpu_kernel_info *info);
dmlc_status ec_emit_small_rows(emit_ctx *e, const char *name, dmlc_cpu_kernel_info *info);
/* Stores the outputs of the g packed rows from row (ec_small_rows_matches'
 * kernels), from their indices (i32 lanes): INDEX outputs, and ONEHOT ones
 * as one vector of the rows' g * R elements (each row's index spread over
 * its R positions by a shuffle, compared with the position in the row).
 * nt: the ec_index_nt outputs, and the large ONEHOT ones whose stores are
 * whole vectors, are aligned for non-temporal stores. */
void ec_store_row_indices(emit_ctx *e, LLVMValueRef row, LLVMValueRef idx, uint32_t g, bool nt);
/* The groups [g0, g1) of a task of packed rows; nt: outputs aligned for
 * non-temporal stores. */
typedef void (*ec_group_fn)(emit_ctx *e, LLVMValueRef g0, LLVMValueRef g1, bool nt, void *arg);
/* The loop over tasks [begin, end) of a kernel of packed rows ([K, R],
 * ec_small_rows_matches) in groups of g rows: task t runs groups
 * [t * per_task, (t + 1) * per_task) up to the last whole one by fn, twice behind a
 * test of `aligned` (nt where it holds) unless it is NULL, and the last
 * task also the rows after the last whole group, one at a time. */
void ec_group_tasks(emit_ctx *e, LLVMValueRef begin, LLVMValueRef end, uint32_t per_task,
                    uint32_t g, LLVMValueRef aligned, ec_group_fn fn, void *arg);
dmlc_status ec_emit_merged_columns(emit_ctx *e, const char *name, dmlc_cpu_kernel_info *info);
bool ec_column_matches(const dmlc_kdesc *k);
/* Rows a super row of a column kernel of few packed columns under vectors
 * of vector_bytes (emit_column.c): 1 when it reads its rows as they are. */
uint32_t ec_column_super_rows(const dmlc_kdesc *k, uint32_t vector_bytes);
dmlc_status ec_emit_row(emit_ctx *e, const char *name, dmlc_cpu_kernel_info *info);
dmlc_status ec_emit_column(emit_ctx *e, const char *name, dmlc_cpu_kernel_info *info);
dmlc_status ec_emit_generic(emit_ctx *e, const char *name, dmlc_cpu_kernel_info *info);
dmlc_status ec_emit_elementwise(emit_ctx *e, const char *name, dmlc_cpu_kernel_info *info);

#endif
