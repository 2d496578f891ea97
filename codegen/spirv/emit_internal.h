/* Shared by the SPIR-V kernel emitter's files: the emission context, the
 * launch plan, and the value-level helpers (values.c) that the kernel
 * shapes (emit.c) are built from. Every value the shaders compute is a
 * 32-bit uint; 64-bit elements travel as (lo, hi) pairs. */
#ifndef DMLC_CODEGEN_SPIRV_EMIT_INTERNAL_H
#define DMLC_CODEGEN_SPIRV_EMIT_INTERNAL_H

#include "codegen/spirv/builder.h"
#include "codegen/spirv/spirv.h"

typedef enum spv_path {
  SPV_PATH_ELEMENTWISE,   /* no reduction: one invocation per point */
  SPV_PATH_SMALL,         /* one invocation per kept point, looping over the reduced points */
  SPV_PATH_LARGE,         /* one workgroup per kept point, subgroup / shared-memory merge */
  SPV_PATH_SPLIT,         /* one workgroup per part of a kept point's range: partials */
  SPV_PATH_FINISH,        /* the split's finish: merges each kept point's partials */
  SPV_PATH_COLUMN_PARTS,  /* vector columns, the reduced range in parts: partials [part][kept] */
  SPV_PATH_COLUMN_FINISH, /* their finish: an invocation per kept point merges its parts */
} spv_path;

/* Short packed rows: 16-byte vectors an invocation loads at most. */
#define SPV_SHORT_ROWS_MAX_VECS 4

/* The read, the outputs, and a split's partials. */
#define SPV_MAX_BINDINGS (2 + DMLC_KDESC_MAX_OUTPUTS)

/* Kept points an invocation of lone runs takes (plan_lone_runs). */
#define SPV_LONE_RUNS 4

typedef struct spv_plan {
  spv_path path;
  uint32_t local_size;
  uint64_t num_groups;
  bool subgroups; /* LARGE: merge within subgroups with OpGroupNonUniformShuffleXor */
  uint64_t kept, reduced, points;
  /* binding 0 the read, 1 + i output i, 1 + num_outputs a split's partials */
  dmlc_spirv_binding bindings[SPV_MAX_BINDINGS];
  /* SPLIT and FINISH: parts per kept point, points per part, and the
   * finish's workgroups per kept point (parts when it writes one-hot or
   * constant outputs over the reduced points, else 1). */
  uint32_t split_parts, split_len, finish_per_kept;
  /* SPLIT: the finish fused into it (a kept point's last part to arrive
   * merges them; only index outputs, finish_per_kept 1). */
  bool fused_finish;
  /* COLUMN_PARTS: workgroups per part (those of the SMALL columns). */
  uint64_t column_groups;
  /* SMALL over short packed rows ([K, R], R small): rows per invocation,
   * whose elements make whole 16-byte vectors (at most
   * SPV_SHORT_ROWS_MAX_VECS, with vec_elems), else 0. */
  uint32_t short_rows;
  /* LARGE with vec_elems over several reduced dims (the innermost one a
   * whole number of vectors): each vector's offset from its index. */
  bool vec_offsets;
  /* LARGE and SPLIT over 16-byte-aligned rows (the innermost dim, the only
   * one reduced, packed): elements per 16-byte load (the read bound again
   * as 4-word vectors), else 0. */
  uint32_t vec_elems;
  /* LARGE and SPLIT: invocations per lane group (a power of two dividing
   * local_size), each lane group reading one contiguous span (reduce_row). */
  uint32_t lane_width;
  /* LARGE on a CPU device with many kept points: an invocation per kept
   * point reads the whole range itself (lane_width 1, no group merge);
   * SPLIT there with few: an invocation per part. */
  bool lone_rows;
  /* Lone rows with vec_offsets whose kept points' runs of the innermost
   * dim lie next to each other ([r, k, r]): an invocation reduces this many
   * consecutive kept points, run after run (one stream of lone_runs runs a
   * lane, not one of a run), else 0. */
  uint32_t lone_runs;
  /* COLUMN_PARTS: ONEHOT outputs the runtime fills with 0 (bit i: output
   * i; the parts skip their 0s), and their bytes. */
  uint32_t zero_fill;
  uint64_t zero_fill_bytes[DMLC_KDESC_MAX_OUTPUTS];
} spv_plan;

/* A split's partials: one per group (SPLIT), or parts * kept (columns). */
static inline uint64_t spv_plan_partials(const spv_plan *p) {
  const bool columns = p->path == SPV_PATH_COLUMN_PARTS || p->path == SPV_PATH_COLUMN_FINISH;
  return columns || p->lone_rows ? (uint64_t)p->split_parts * p->kept : p->num_groups;
}

/* A finish's workgroups: per kept point (FINISH), or an invocation per kept
 * point (COLUMN_FINISH). */
static inline uint64_t spv_plan_finish_groups(const spv_plan *p) {
  if (p->path == SPV_PATH_COLUMN_FINISH || p->path == SPV_PATH_COLUMN_PARTS)
    return (p->kept + p->local_size - 1) / p->local_size;
  return p->kept * p->finish_per_kept;
}

/* A buffer as the shader declares it: one storage buffer, or an array of
 * windows of 2^window_log2 elements (of the buffer's view) each. */
typedef struct spv_buf {
  uint32_t var;
  uint32_t windows;
  uint32_t window_log2;
} spv_buf;

/* Element bits: lo, and hi for 64-bit elements (0 otherwise). */
typedef struct spv_bits {
  uint32_t lo, hi;
  uint32_t wide; /* the same bits as one 64-bit uint (native 64-bit loads), or 0 */
} spv_bits;

/* An order key: k0 primary, k1 the low word of 64-bit keys. Greater is
 * better (argmin keys are complemented); NaN maps to the maximum. With
 * key_u64, k0 is the whole 64-bit key (a 64-bit uint) and k1 is unused. */
typedef struct spv_key {
  uint32_t k0, k1;
} spv_key;

typedef enum spv_store_mode {
  SPV_STORE_WORDS,  /* 4- and 8-byte elements: whole words */
  SPV_STORE_TYPED,  /* 1- or 2-byte elements through an 8/16-bit storage view */
  SPV_STORE_ATOMIC, /* 1- or 2-byte elements without 8/16-bit storage: atomic and/or */
  SPV_STORE_U64     /* 8-byte elements as one 64-bit uint (shaderInt64) */
} spv_store_mode;

typedef struct spv_out {
  spv_buf buf;       /* the output's buffer (word or typed view) */
  uint32_t elem_ptr; /* StorageBuffer pointer to one element of the view */
  uint32_t elem_type;
  spv_store_mode mode;
} spv_out;

typedef struct spv_em {
  spvb b;
  const dmlc_kdesc *k;
  const dmlc_spirv_caps *caps;
  spv_plan plan;
  uint32_t t_void, t_bool, t_u32, t_v3, t_fn;
  uint32_t p_sb_u32, p_fn_u32, p_fn_bool;
  uint32_t t_u64, p_sb_u64; /* 0 unless shaderInt64 is used */
  spv_buf read;
  /* The read buffer's element: 0 for 32-bit words (unpacked), else the
   * 8/16/64-bit uint type of a native view and its pointer type. */
  uint32_t read_elem_type, read_elem_ptr;
  spv_out outs[DMLC_KDESC_MAX_OUTPUTS];
  spv_buf partials; /* SPLIT and FINISH: 32-bit words, 4 per part */
  spv_buf read_vec; /* vec_elems: the read as 4-word vectors */
  uint32_t t_v4, p_sb_v4;
  bool key64;               /* the read's key needs two words */
  bool key_u64;             /* the read's key is one 64-bit uint */
  uint32_t t_key, p_fn_key; /* the key word's type (t_u32 or t_u64) */
  /* reduce_group's shared arrays (made by its first call, then reused):
   * keys, high key words (key64), indices, and the winner's index */
  uint32_t sh_key, sh_key1, sh_idx, sh_result;
} spv_em;

/* ---- scalar helpers (values.c) ---- */
uint32_t spv_u32(spv_em *e, uint32_t v);
uint32_t spv_bool(spv_em *e, bool v);
uint32_t spv_op(spv_em *e, SpvOp op, uint32_t a, uint32_t b);  /* uint result */
uint32_t spv_cmp(spv_em *e, SpvOp op, uint32_t a, uint32_t b); /* bool result */
uint32_t spv_select(spv_em *e, uint32_t cond, uint32_t a, uint32_t b);
uint32_t spv_not(spv_em *e, uint32_t a);
uint32_t spv_var(spv_em *e);                         /* a Function uint variable */
uint32_t spv_load(spv_em *e, uint32_t var);          /* of a uint variable */
void spv_store(spv_em *e, uint32_t var, uint32_t v); /* to a uint pointer */

typedef enum spv_access {
  SPV_ACCESS_LOAD,
  SPV_ACCESS_LOAD_U32, /* a load of an 8/16-bit uint, zero-extended to 32 bits */
  SPV_ACCESS_STORE,
  SPV_ACCESS_ATOMIC_AND, /* of a 32-bit word, device scope, relaxed */
  SPV_ACCESS_ATOMIC_OR,
  SPV_ACCESS_ATOMIC_ADD, /* returns the old value; device scope, acquire-release */
} spv_access;
/* Loads (and returns: elem_type, or t_u32 for LOAD_U32), stores, or atomically and/or's value at
 * element index of buf's view (elements of elem_type, pointers of ptr_type). A windowed buffer's
 * element index is element index & (window size - 1) of window index >> log2(window size): indexed
 * NonUniform where the caps allow, else through a switch over constant window indices. */
uint32_t spv_buf_access(spv_em *e, const spv_buf *buf, uint32_t ptr_type, uint32_t elem_type,
                        uint32_t index, spv_access kind, uint32_t value);
/* A load of element `within` of window `window` (a constant: the index is
 * uniform, no switch) of a windowed buffer. */
uint32_t spv_buf_load_window(spv_em *e, const spv_buf *buf, uint32_t ptr_type, uint32_t elem_type,
                             uint32_t window, uint32_t within);

/* Keys' words (t_key): a Function variable, a load, a select, zero. */
uint32_t spv_key_var(spv_em *e);
uint32_t spv_key_load(spv_em *e, uint32_t var);
uint32_t spv_key_select(spv_em *e, uint32_t cond, uint32_t a, uint32_t b);
uint32_t spv_key_zero(spv_em *e);
/* A 64-bit uint's (lo, hi) words and back. */
void spv_split64(spv_em *e, uint32_t w, uint32_t *lo, uint32_t *hi);
uint32_t spv_join64(spv_em *e, uint32_t lo, uint32_t hi);

/* ---- elements (values.c) ---- */
/* The bits of the read element at element offset off (zero-extended). */
spv_bits spv_load_read(spv_em *e, uint32_t off);
spv_key spv_key_of(spv_em *e, spv_bits raw);
/* True when (bk, bi) beats (ak, ai): a greater key, or an equal key and the
 * index the direction prefers. Commutative in effect: the winner of a pair
 * does not depend on the order they come in. */
uint32_t spv_better(spv_em *e, spv_key ak, uint32_t ai, spv_key bk, uint32_t bi);
/* In a scan, where every index merged into an accumulator is greater than
 * those before it (the identity's aside), whether one compare of keys
 * decides (spv_scan_better), and that compare: true when bk replaces ak. */
bool spv_scan_ok(const spv_em *e);
uint32_t spv_scan_better(spv_em *e, spv_key ak, spv_key bk);
/* Stores bits (already in output i's dtype) at element offset off. */
void spv_store_out(spv_em *e, uint32_t i, uint32_t off, spv_bits v);
/* The bit pattern of an integer constant in dtype (as the IR's constant
 * folding converted it), of 1 in dtype, of index idx in dtype. */
spv_bits spv_const_bits(spv_em *e, dmlc_dtype dtype, int64_t value);
spv_bits spv_index_bits(spv_em *e, uint32_t idx);
/* Whether COPY from -> to can be emitted exactly, and its emission. */
bool spv_copy_supported(dmlc_dtype from, dmlc_dtype to);
spv_bits spv_convert(spv_em *e, spv_bits raw, dmlc_dtype from, dmlc_dtype to);

/* ---- kernels (emit.c) ---- */
/* Emits the whole module for e->k and e->plan into words. */
dmlc_status spv_emit_module(spv_em *e, uint32_t **words, size_t *num_words, dmlc_diag *diag);

#endif
