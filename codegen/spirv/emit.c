/* Kernel descriptions -> SPIR-V compute shaders: the module's interface
 * (buffers, push constant, built-ins) and the three kernel shapes.
 *
 *  - elementwise: one invocation per point of the space (COPY, CONSTANT);
 *  - small:  one invocation per kept point, looping over the reduced points
 *            (consecutive invocations take consecutive kept points, so
 *            column reductions read coalesced);
 *  - large:  one workgroup per kept point; its invocations stride over the
 *            reduced points (coalesced when the reduced dim is innermost),
 *            then merge (key, index) pairs within subgroups by shuffles and
 *            across them, or across the whole group, in shared memory.
 *
 * Buffers are runtime arrays (binding 0 the read, 1 + i output i) of their
 * elements' own width where the caps allow it (8/16-bit storage,
 * shaderInt64: the native path) and of 32-bit words otherwise (the portable
 * path: loads unpack, narrow stores use atomic and/or, 64-bit values are
 * word pairs). A buffer larger than the device's maxStorageBufferRange is
 * an array of such blocks, one per window of the buffer (spirv.h); element
 * i is element i mod w of window i / w, w a power of two. Offsets stay
 * 32-bit: compile.c refuses buffers beyond 2^32 words. */
#include <stdlib.h>
#include <string.h>

#include "codegen/spirv/emit_internal.h"

#define BARRIER_SEMANTICS                                                                          \
  (SpvMemorySemanticsAcquireReleaseMask | SpvMemorySemanticsWorkgroupMemoryMask)

/* ---- module interface ---- */

static uint32_t log2_u64(uint64_t v) {
  uint32_t n = 0;
  while (v > 1) {
    v >>= 1;
    n++;
  }
  return n;
}

/* A storage buffer of elem_type (stride bytes) at binding: a Block struct
 * holding a runtime array, or an array of such structs, one per window, as
 * the plan binds it. */
static spv_buf block_buffer(spv_em *e, uint32_t elem_type, uint32_t stride, uint32_t binding,
                            bool read_only, uint32_t *elem_ptr) {
  spvb *b = &e->b;
  const dmlc_spirv_binding *bind = &e->plan.bindings[binding];
  const uint32_t rta = SPV_TYPE(b, SpvOpTypeRuntimeArray, elem_type);
  /* Deduplicated: decorate a runtime array type once. */
  bool decorated = false;
  for (size_t i = 0; i < b->annots.n;) {
    const uint32_t len = b->annots.w[i] >> SpvWordCountShift;
    if ((b->annots.w[i] & SpvOpCodeMask) == SpvOpDecorate && b->annots.w[i + 1] == rta)
      decorated = true;
    i += len;
  }
  if (!decorated)
    spvb_decorate(b, rta, SpvDecorationArrayStride, &stride, 1);
  const uint32_t st = SPV_TYPE(b, SpvOpTypeStruct, rta);
  spvb_decorate(b, st, SpvDecorationBlock, NULL, 0);
  const uint32_t zero = 0, set = 0;
  spvb_member_decorate(b, st, 0, SpvDecorationOffset, &zero, 1);
  spv_buf buf = {0, bind->count, 0};
  uint32_t var_type = st;
  if (buf.windows > 1) {
    var_type = SPV_TYPE(b, SpvOpTypeArray, st, spv_u32(e, buf.windows));
    buf.window_log2 = log2_u64(bind->window_bytes / stride);
    if (e->caps->storage_buffer_array_nonuniform) {
      spvb_capability(b, SpvCapabilityShaderNonUniform);
      spvb_capability(b, SpvCapabilityStorageBufferArrayNonUniformIndexing);
    }
  }
  const uint32_t ptr = SPV_TYPE(b, SpvOpTypePointer, SpvStorageClassStorageBuffer, var_type);
  buf.var = spvb_global_var(b, ptr, SpvStorageClassStorageBuffer);
  spvb_decorate(b, buf.var, SpvDecorationDescriptorSet, &set, 1);
  spvb_decorate(b, buf.var, SpvDecorationBinding, &binding, 1);
  if (read_only)
    spvb_decorate(b, buf.var, SpvDecorationNonWritable, NULL, 0);
  *elem_ptr = SPV_TYPE(b, SpvOpTypePointer, SpvStorageClassStorageBuffer, elem_type);
  return buf;
}

static uint32_t builtin_input(spv_em *e, uint32_t type, SpvBuiltIn builtin) {
  const uint32_t ptr = SPV_TYPE(&e->b, SpvOpTypePointer, SpvStorageClassInput, type);
  const uint32_t var = spvb_global_var(&e->b, ptr, SpvStorageClassInput);
  const uint32_t bi = (uint32_t)builtin;
  spvb_decorate(&e->b, var, SpvDecorationBuiltIn, &bi, 1);
  return var;
}

static uint32_t load_builtin_x(spv_em *e, SpvBuiltIn builtin) {
  const uint32_t var = builtin_input(e, e->t_v3, builtin);
  const uint32_t v = SPV(&e->b, SpvOpLoad, e->t_v3, var);
  return SPV(&e->b, SpvOpCompositeExtract, e->t_u32, v, 0);
}

static uint32_t load_builtin_u32(spv_em *e, SpvBuiltIn builtin) {
  return SPV(&e->b, SpvOpLoad, e->t_u32, builtin_input(e, e->t_u32, builtin));
}

/* The workgroup's index: WorkgroupId.x plus the chunk offset pushed by the
 * runtime. */
static uint32_t group_index(spv_em *e) {
  spvb *b = &e->b;
  const uint32_t st = SPV_TYPE(b, SpvOpTypeStruct, e->t_u32);
  const uint32_t zero = 0;
  spvb_decorate(b, st, SpvDecorationBlock, NULL, 0);
  spvb_member_decorate(b, st, 0, SpvDecorationOffset, &zero, 1);
  const uint32_t ptr = SPV_TYPE(b, SpvOpTypePointer, SpvStorageClassPushConstant, st);
  const uint32_t var = spvb_global_var(b, ptr, SpvStorageClassPushConstant);
  const uint32_t p_u32 = SPV_TYPE(b, SpvOpTypePointer, SpvStorageClassPushConstant, e->t_u32);
  const uint32_t off = spv_load(e, SPV(b, SpvOpAccessChain, p_u32, var, spv_u32(e, 0)));
  return spv_op(e, SpvOpIAdd, load_builtin_x(e, SpvBuiltInWorkgroupId), off);
}

static void use_narrow_storage(spvb *b, uint32_t size) {
  if (size == 1) {
    spvb_capability(b, SpvCapabilityStorageBuffer8BitAccess);
    spvb_extension(b, "SPV_KHR_8bit_storage");
  } else {
    spvb_capability(b, SpvCapabilityStorageBuffer16BitAccess);
    spvb_extension(b, "SPV_KHR_16bit_storage");
  }
}

static void uses_int64(spvb *b) { spvb_capability(b, SpvCapabilityInt64); }

static void declare_interface(spv_em *e) {
  spvb *b = &e->b;
  spvb_capability(b, SpvCapabilityShader);
  e->t_void = spvb_type(b, SpvOpTypeVoid, NULL, 0);
  e->t_bool = spvb_type(b, SpvOpTypeBool, NULL, 0);
  e->t_u32 = SPV_TYPE(b, SpvOpTypeInt, 32, 0);
  e->t_v3 = SPV_TYPE(b, SpvOpTypeVector, e->t_u32, 3);
  e->t_fn = SPV_TYPE(b, SpvOpTypeFunction, e->t_void);
  e->p_fn_u32 = SPV_TYPE(b, SpvOpTypePointer, SpvStorageClassFunction, e->t_u32);
  e->p_sb_u32 = SPV_TYPE(b, SpvOpTypePointer, SpvStorageClassStorageBuffer, e->t_u32);
  const uint32_t rsize = e->k->has_read ? dmlc_dtype_size(e->k->read_dtype) : 4;
  bool need64 = rsize == 8;
  for (uint32_t i = 0; i < e->k->num_outputs; i++)
    need64 |= dmlc_dtype_size(e->k->outputs[i].dtype) == 8;
  if (e->caps->shader_int64 && need64) {
    e->t_u64 = SPV_TYPE(b, SpvOpTypeInt, 64, 0);
    e->p_sb_u64 = SPV_TYPE(b, SpvOpTypePointer, SpvStorageClassStorageBuffer, e->t_u64);
  }
  e->t_key = e->key_u64 ? e->t_u64 : e->t_u32;
  e->p_fn_key = SPV_TYPE(b, SpvOpTypePointer, SpvStorageClassFunction, e->t_key);
  /* The read: its own element width where the device can load it (8/16-bit
   * storage, shaderInt64), else 32-bit words unpacked. */
  if (rsize == 8 && e->t_u64) {
    e->read_elem_type = e->t_u64;
  } else if ((rsize == 1 && e->caps->storage_8bit) || (rsize == 2 && e->caps->storage_16bit)) {
    use_narrow_storage(b, rsize);
    e->read_elem_type = SPV_TYPE(b, SpvOpTypeInt, rsize * 8, 0);
  }
  if (e->read_elem_type)
    e->read = block_buffer(e, e->read_elem_type, rsize, 0, true, &e->read_elem_ptr);
  else
    e->read = block_buffer(e, e->t_u32, 4, 0, true, &e->p_sb_u32);
  if (e->t_u64)
    uses_int64(b);
  for (uint32_t i = 0; i < e->k->num_outputs; i++) {
    spv_out *o = &e->outs[i];
    const uint32_t size = dmlc_dtype_size(e->k->outputs[i].dtype);
    const bool typed =
        (size == 1 && e->caps->storage_8bit) || (size == 2 && e->caps->storage_16bit);
    if (size == 8 && e->t_u64) {
      o->mode = SPV_STORE_U64;
      o->elem_type = e->t_u64;
      o->buf = block_buffer(e, e->t_u64, 8, 1 + i, false, &o->elem_ptr);
      continue;
    }
    if (size >= 4 || !typed) {
      o->mode = size >= 4 ? SPV_STORE_WORDS : SPV_STORE_ATOMIC;
      o->elem_type = e->t_u32;
      o->buf = block_buffer(e, e->t_u32, 4, 1 + i, false, &o->elem_ptr);
      continue;
    }
    o->mode = SPV_STORE_TYPED;
    use_narrow_storage(b, size);
    o->elem_type = SPV_TYPE(b, SpvOpTypeInt, size * 8, 0);
    o->buf = block_buffer(e, o->elem_type, size, 1 + i, false, &o->elem_ptr);
  }
  const bool finish = e->plan.path == SPV_PATH_FINISH || e->plan.path == SPV_PATH_COLUMN_FINISH;
  if (e->plan.vec_elems && !finish) {
    /* binding 0 again (aliased), as 16-byte vectors */
    e->t_v4 = SPV_TYPE(b, SpvOpTypeVector, e->t_u32, 4);
    e->read_vec = block_buffer(e, e->t_v4, 16, 0, true, &e->p_sb_v4);
  }
  if (e->plan.path == SPV_PATH_SPLIT || e->plan.path == SPV_PATH_COLUMN_PARTS || finish) {
    uint32_t ptr;
    e->partials = block_buffer(e, e->t_u32, 4, 1 + e->k->num_outputs, finish, &ptr);
    /* a fused finish reads other workgroups' partials: past their caches */
    if (e->plan.fused_finish)
      spvb_decorate(b, e->partials.var, SpvDecorationCoherent, NULL, 0);
  }
}

/* ---- control flow ---- */

typedef struct spv_if {
  uint32_t merge;
} spv_if;

static void if_begin(spv_em *e, uint32_t cond, spv_if *f) {
  const uint32_t then = spvb_id(&e->b);
  f->merge = spvb_id(&e->b);
  SPV(&e->b, SpvOpSelectionMerge, 0, f->merge, SpvSelectionControlMaskNone);
  SPV(&e->b, SpvOpBranchConditional, 0, cond, then, f->merge);
  spvb_label(&e->b, then);
}

static void if_end(spv_em *e, const spv_if *f) {
  SPV(&e->b, SpvOpBranch, 0, f->merge);
  spvb_label(&e->b, f->merge);
}

typedef struct spv_loop {
  uint32_t var, cont, merge, header, step;
} spv_loop;

/* for (i = start; i < end; i += step): returns i in the body. */
static uint32_t loop_begin(spv_em *e, spv_loop *l, uint32_t start, uint32_t end, uint32_t step) {
  spvb *b = &e->b;
  l->var = spv_var(e);
  l->step = step;
  l->header = spvb_id(b);
  l->cont = spvb_id(b);
  l->merge = spvb_id(b);
  const uint32_t check = spvb_id(b), body = spvb_id(b);
  spv_store(e, l->var, start);
  SPV(b, SpvOpBranch, 0, l->header);
  spvb_label(b, l->header);
  SPV(b, SpvOpLoopMerge, 0, l->merge, l->cont, SpvLoopControlMaskNone);
  SPV(b, SpvOpBranch, 0, check);
  spvb_label(b, check);
  const uint32_t i = spv_load(e, l->var);
  SPV(b, SpvOpBranchConditional, 0, spv_cmp(e, SpvOpULessThan, i, end), body, l->merge);
  spvb_label(b, body);
  return i;
}

static void loop_end(spv_em *e, const spv_loop *l) {
  spvb *b = &e->b;
  SPV(b, SpvOpBranch, 0, l->cont);
  spvb_label(b, l->cont);
  spv_store(e, l->var, spv_op(e, SpvOpIAdd, spv_load(e, l->var), l->step));
  SPV(b, SpvOpBranch, 0, l->header);
  spvb_label(b, l->merge);
}

/* A workgroup barrier ordering the memory of semantics. */
static void barrier_with(spv_em *e, uint32_t semantics) {
  const uint32_t wg = spv_u32(e, SpvScopeWorkgroup);
  SPV(&e->b, SpvOpControlBarrier, 0, wg, wg, spv_u32(e, semantics));
}

static void barrier(spv_em *e) { barrier_with(e, BARRIER_SEMANTICS); }

/* ---- iteration space ---- */

#define MAX_BUFS (1 + DMLC_KDESC_MAX_OUTPUTS)

/* The element offsets, in nbuf buffers with strides[j], of the point whose
 * row-major position within the dims of mask is idx. */
static void offsets_of(spv_em *e, uint32_t idx, uint32_t mask, uint32_t nbuf,
                       const uint64_t *const *strides, uint32_t *out) {
  const dmlc_kdesc *k = e->k;
  uint32_t outer = 0; /* the outermost dim in mask */
  while (outer < k->rank && !((mask >> outer) & 1))
    outer++;
  for (uint32_t j = 0; j < nbuf; j++)
    out[j] = 0;
  uint64_t div = 1;
  for (uint32_t d = k->rank; d-- > 0;) {
    if (!((mask >> d) & 1))
      continue;
    bool used = false;
    for (uint32_t j = 0; j < nbuf; j++)
      used |= k->dims[d] > 1 && strides[j][d] != 0;
    if (used) {
      uint32_t c = div > 1 ? spv_op(e, SpvOpUDiv, idx, spv_u32(e, (uint32_t)div)) : idx;
      if (d != outer)
        c = spv_op(e, SpvOpUMod, c, spv_u32(e, k->dims[d]));
      for (uint32_t j = 0; j < nbuf; j++) {
        if (k->dims[d] <= 1 || strides[j][d] == 0)
          continue;
        const uint32_t t =
            strides[j][d] == 1 ? c : spv_op(e, SpvOpIMul, c, spv_u32(e, (uint32_t)strides[j][d]));
        out[j] = out[j] ? spv_op(e, SpvOpIAdd, out[j], t) : t;
      }
    }
    div *= k->dims[d];
  }
  for (uint32_t j = 0; j < nbuf; j++)
    if (!out[j])
      out[j] = spv_u32(e, 0);
}

static uint32_t add_or(spv_em *e, uint32_t a, uint32_t b) { return spv_op(e, SpvOpIAdd, a, b); }

/* Offsets of the read (out[0]) and every output (out[1 + i]). */
static void all_offsets(spv_em *e, uint32_t idx, uint32_t mask, uint32_t *out) {
  const uint64_t *strides[MAX_BUFS];
  strides[0] = e->k->read_strides;
  for (uint32_t i = 0; i < e->k->num_outputs; i++)
    strides[1 + i] = e->k->outputs[i].strides;
  offsets_of(e, idx, mask, 1 + e->k->num_outputs, strides, out);
}

/* ---- reductions ---- */

typedef struct spv_acc {
  uint32_t k0, k1, idx; /* Function variables */
} spv_acc;

static spv_acc acc_init(spv_em *e) {
  spv_acc a = {spv_key_var(e), e->key64 ? spv_var(e) : 0, spv_var(e)};
  spv_store(e, a.k0, spv_key_zero(e));
  if (a.k1)
    spv_store(e, a.k1, spv_u32(e, 0));
  /* The identity: the least key, with the index every tie prefers over it. */
  const bool inc = e->k->direction == DMLC_DIRECTION_INCREASING;
  spv_store(e, a.idx, spv_u32(e, inc ? ~0u : 0));
  return a;
}

static spv_key acc_key(spv_em *e, const spv_acc *a) {
  return (spv_key){spv_key_load(e, a->k0), a->k1 ? spv_load(e, a->k1) : spv_u32(e, 0)};
}

static void acc_merge(spv_em *e, const spv_acc *a, spv_key k, uint32_t idx) {
  const spv_key ak = acc_key(e, a);
  const uint32_t ai = spv_load(e, a->idx);
  const uint32_t better = spv_better(e, ak, ai, k, idx);
  spv_store(e, a->k0, spv_key_select(e, better, k.k0, ak.k0));
  if (a->k1)
    spv_store(e, a->k1, spv_select(e, better, k.k1, ak.k1));
  spv_store(e, a->idx, spv_select(e, better, idx, ai));
}

/* acc_merge in a scan: idx is greater than every index acc has merged. */
static void acc_scan(spv_em *e, const spv_acc *a, spv_key k, uint32_t idx) {
  if (!spv_scan_ok(e)) {
    acc_merge(e, a, k, idx);
    return;
  }
  const spv_key ak = acc_key(e, a);
  const uint32_t better = spv_scan_better(e, ak, k);
  spv_store(e, a->k0, spv_key_select(e, better, k.k0, ak.k0));
  spv_store(e, a->idx, spv_select(e, better, idx, spv_load(e, a->idx)));
}

/* acc <- the best of the reduced points start, start + step, ... below end
 * of the kept point whose read offset is base. */
static void reduce_points(spv_em *e, const spv_acc *a, uint32_t base, uint32_t start, uint32_t end,
                          uint32_t step) {
  spv_loop l;
  const uint32_t r = loop_begin(e, &l, start, end, step);
  uint32_t off;
  const uint64_t *strides[1] = {e->k->read_strides};
  offsets_of(e, r, e->k->reduced_mask, 1, strides, &off);
  const spv_bits raw = spv_load_read(e, add_or(e, base, off));
  acc_scan(e, a, spv_key_of(e, raw), r);
  loop_end(e, &l);
}

static uint32_t umin(spv_em *e, uint32_t a, uint32_t b) {
  return spv_select(e, spv_cmp(e, SpvOpULessThan, a, b), a, b);
}

static uint32_t umax(spv_em *e, uint32_t a, uint32_t b) {
  return spv_select(e, spv_cmp(e, SpvOpULessThan, a, b), b, a);
}

/* log2 of vec_elems. */
static uint32_t vec_shift(const spv_em *e) {
  return 31 - (uint32_t)__builtin_clz(e->plan.vec_elems);
}

/* The read's 16-byte vector c (of the read as 4-word vectors; a window
 * never splits one: windows are powers of two of at least 256 bytes). */
static uint32_t load_vec(spv_em *e, uint32_t c) {
  return spv_buf_access(e, &e->read_vec, e->p_sb_v4, e->t_v4, c, SPV_ACCESS_LOAD, 0);
}

/* Element j of a loaded vector v: a word, two words (8-byte elements), or
 * a field of a word (1- and 2-byte elements, little-endian). */
static spv_bits vec_elem(spv_em *e, uint32_t v, uint32_t j) {
  spvb *b = &e->b;
  const uint32_t E = e->plan.vec_elems;
  spv_bits raw = {0, spv_u32(e, 0), 0};
  if (E == 2) {
    raw.lo = SPV(b, SpvOpCompositeExtract, e->t_u32, v, 2 * j);
    raw.hi = SPV(b, SpvOpCompositeExtract, e->t_u32, v, 2 * j + 1);
    return raw;
  }
  const uint32_t per_word = E / 4, bits = 32 / per_word;
  const uint32_t word = SPV(b, SpvOpCompositeExtract, e->t_u32, v, j / per_word);
  raw.lo = bits < 32 ? SPV(b, SpvOpBitFieldUExtract, e->t_u32, word,
                           spv_u32(e, (j % per_word) * bits), spv_u32(e, bits))
                     : word;
  return raw;
}

/* The share [lo, hi) of [0, n) that lane group g of L / W takes: n split
 * into L / W contiguous spans, each a multiple of W long but the last. */
static void lane_share(spv_em *e, uint32_t n, uint32_t g, uint32_t L, uint32_t W, uint32_t *lo,
                       uint32_t *hi) {
  const uint32_t groups = L / W;
  uint32_t span =
      spv_op(e, SpvOpUDiv, spv_op(e, SpvOpIAdd, n, spv_u32(e, groups - 1)), spv_u32(e, groups));
  span = spv_op(e, SpvOpBitwiseAnd, spv_op(e, SpvOpIAdd, span, spv_u32(e, W - 1)),
                spv_u32(e, ~(W - 1)));
  *lo = umin(e, spv_op(e, SpvOpIMul, g, span), n);
  *hi = umin(e, spv_op(e, SpvOpIAdd, *lo, span), n);
}

/* acc <- the best of the reduced points [start, end) of the row whose read
 * offset is base, invocation lid of the group's L taking its share. The
 * invocations form lane groups of W (plan.lane_width: the subgroup where
 * known) and each lane group walks a contiguous span of the range, its
 * lanes on consecutive addresses: a GPU's subgroup reads coalesced, and a
 * CPU device (which runs one subgroup's whole loop before the next
 * subgroup's) streams one contiguous span at a time rather than every
 * subgroup striding over the whole range. With vec_elems: 16-byte loads of
 * whole vectors in range (vector c holds points start + c * E, ...),
 * unpacked, then the points past the last whole vector one at a time.
 * start and base are multiples of E (plan_vector). */
static void reduce_row(spv_em *e, const spv_acc *a, uint32_t base, uint32_t start, uint32_t end,
                       uint32_t lid, uint32_t L) {
  const uint32_t E = e->plan.vec_elems, W = e->plan.lane_width;
  /* lone rows: the invocation is the whole group */
  const uint32_t Lc = e->plan.lone_rows ? 1 : e->plan.local_size;
  const uint32_t wlog = W == 1 ? 0 : 31 - (uint32_t)__builtin_clz(W);
  const uint32_t g = spv_op(e, SpvOpShiftRightLogical, lid, spv_u32(e, wlog));
  const uint32_t lane = spv_op(e, SpvOpBitwiseAnd, lid, spv_u32(e, W - 1));
  if (!E) {
    uint32_t lo, hi;
    lane_share(e, spv_op(e, SpvOpISub, end, start), g, Lc, W, &lo, &hi);
    reduce_points(e, a, base, spv_op(e, SpvOpIAdd, spv_op(e, SpvOpIAdd, start, lo), lane),
                  spv_op(e, SpvOpIAdd, start, hi), spv_u32(e, W));
    return;
  }
  const uint32_t shift = vec_shift(e);
  const uint32_t vecs =
      spv_op(e, SpvOpShiftRightLogical, spv_op(e, SpvOpISub, end, start), spv_u32(e, shift));
  const uint32_t first =
      spv_op(e, SpvOpShiftRightLogical, spv_op(e, SpvOpIAdd, base, start), spv_u32(e, shift));
  uint32_t lo, hi;
  lane_share(e, vecs, g, Lc, W, &lo, &hi);
  spv_loop l;
  const uint32_t c = loop_begin(e, &l, spv_op(e, SpvOpIAdd, lo, lane), hi, spv_u32(e, W));
  const uint32_t idx0 =
      spv_op(e, SpvOpIAdd, start, spv_op(e, SpvOpShiftLeftLogical, c, spv_u32(e, shift)));
  uint32_t at = spv_op(e, SpvOpIAdd, first, c);
  if (e->plan.vec_offsets) {
    /* the vector of points idx0 .. idx0 + E - 1: one run of the innermost
     * dim, at idx0's offset */
    uint32_t off;
    const uint64_t *strides[1] = {e->k->read_strides};
    offsets_of(e, idx0, e->k->reduced_mask, 1, strides, &off);
    at = spv_op(e, SpvOpShiftRightLogical, spv_op(e, SpvOpIAdd, base, off), spv_u32(e, shift));
  }
  const uint32_t v = load_vec(e, at);
  for (uint32_t j = 0; j < E; j++)
    acc_scan(e, a, spv_key_of(e, vec_elem(e, v, j)),
             j ? spv_op(e, SpvOpIAdd, idx0, spv_u32(e, j)) : idx0);
  loop_end(e, &l);
  const uint32_t tail =
      spv_op(e, SpvOpIAdd, start, spv_op(e, SpvOpShiftLeftLogical, vecs, spv_u32(e, shift)));
  reduce_points(e, a, base, spv_op(e, SpvOpIAdd, tail, lid), end, L);
}

typedef struct spv_shared {
  uint32_t k0, k1, idx, ptr, kptr; /* kptr: to one element of k0 (t_key) */
} spv_shared;

static uint32_t shared_array(spv_em *e, uint32_t type, uint32_t len) {
  const uint32_t arr = SPV_TYPE(&e->b, SpvOpTypeArray, type, spv_u32(e, len));
  const uint32_t ptr = SPV_TYPE(&e->b, SpvOpTypePointer, SpvStorageClassWorkgroup, arr);
  return spvb_global_var(&e->b, ptr, SpvStorageClassWorkgroup);
}

static uint32_t sh_at(spv_em *e, const spv_shared *s, uint32_t var, uint32_t i) {
  return SPV(&e->b, SpvOpAccessChain, s->ptr, var, i);
}

static void sh_put(spv_em *e, const spv_shared *s, uint32_t i, spv_key k, uint32_t idx) {
  spv_store(e, SPV(&e->b, SpvOpAccessChain, s->kptr, s->k0, i), k.k0);
  if (s->k1)
    spv_store(e, sh_at(e, s, s->k1, i), k.k1);
  spv_store(e, sh_at(e, s, s->idx, i), idx);
}

static spv_key sh_key(spv_em *e, const spv_shared *s, uint32_t i) {
  return (spv_key){spv_key_load(e, SPV(&e->b, SpvOpAccessChain, s->kptr, s->k0, i)),
                   s->k1 ? spv_load(e, sh_at(e, s, s->k1, i)) : spv_u32(e, 0)};
}

/* Merges the group's accumulators; returns the winning index, in every
 * invocation, and leaves the winner (key and index) in invocation 0's
 * accumulator. All invocations must reach this (uniform control flow). */
static uint32_t reduce_group(spv_em *e, const spv_acc *a, uint32_t lid) {
  spvb *b = &e->b;
  const uint32_t L = e->plan.local_size;
  if (!e->sh_idx) { /* one set for every call: a fused finish merges twice */
    e->sh_key = shared_array(e, e->t_key, L);
    e->sh_key1 = e->key64 ? shared_array(e, e->t_u32, L) : 0;
    e->sh_idx = shared_array(e, e->t_u32, L);
    e->sh_result = shared_array(e, e->t_u32, 1);
  }
  spv_shared s = {e->sh_key, e->sh_key1, e->sh_idx, 0, 0};
  s.ptr = SPV_TYPE(b, SpvOpTypePointer, SpvStorageClassWorkgroup, e->t_u32);
  s.kptr = SPV_TYPE(b, SpvOpTypePointer, SpvStorageClassWorkgroup, e->t_key);
  const uint32_t result = e->sh_result;
  if (e->plan.subgroups) {
    spvb_capability(b, SpvCapabilityGroupNonUniform);
    spvb_capability(b, SpvCapabilityGroupNonUniformShuffle);
    const uint32_t sg_size = load_builtin_u32(e, SpvBuiltInSubgroupSize);
    const uint32_t sg_lane = load_builtin_u32(e, SpvBuiltInSubgroupLocalInvocationId);
    const uint32_t sg_id = load_builtin_u32(e, SpvBuiltInSubgroupId);
    const uint32_t num_sg = load_builtin_u32(e, SpvBuiltInNumSubgroups);
    /* Butterfly: for (m = size / 2; m > 0; m /= 2) merge with lane ^ m. */
    const uint32_t m = spv_var(e);
    spv_store(e, m, spv_op(e, SpvOpShiftRightLogical, sg_size, spv_u32(e, 1)));
    const uint32_t header = spvb_id(b), check = spvb_id(b), body = spvb_id(b);
    const uint32_t cont = spvb_id(b), merge = spvb_id(b);
    SPV(b, SpvOpBranch, 0, header);
    spvb_label(b, header);
    SPV(b, SpvOpLoopMerge, 0, merge, cont, SpvLoopControlMaskNone);
    SPV(b, SpvOpBranch, 0, check);
    spvb_label(b, check);
    const uint32_t mv = spv_load(e, m);
    SPV(b, SpvOpBranchConditional, 0, spv_cmp(e, SpvOpUGreaterThan, mv, spv_u32(e, 0)), body,
        merge);
    spvb_label(b, body);
    const uint32_t scope = spv_u32(e, SpvScopeSubgroup);
    const spv_key mine = acc_key(e, a);
    spv_key other;
    if (e->key_u64) {
      /* Shuffled as two words: 64-bit shuffles would need
       * shaderSubgroupExtendedTypes. */
      uint32_t lo, hi;
      spv_split64(e, mine.k0, &lo, &hi);
      lo = SPV(b, SpvOpGroupNonUniformShuffleXor, e->t_u32, scope, lo, mv);
      hi = SPV(b, SpvOpGroupNonUniformShuffleXor, e->t_u32, scope, hi, mv);
      other.k0 = spv_join64(e, lo, hi);
    } else {
      other.k0 = SPV(b, SpvOpGroupNonUniformShuffleXor, e->t_u32, scope, mine.k0, mv);
    }
    other.k1 = a->k1 ? SPV(b, SpvOpGroupNonUniformShuffleXor, e->t_u32, scope, mine.k1, mv)
                     : spv_u32(e, 0);
    const uint32_t oi =
        SPV(b, SpvOpGroupNonUniformShuffleXor, e->t_u32, scope, spv_load(e, a->idx), mv);
    acc_merge(e, a, other, oi);
    SPV(b, SpvOpBranch, 0, cont);
    spvb_label(b, cont);
    spv_store(e, m, spv_op(e, SpvOpShiftRightLogical, spv_load(e, m), spv_u32(e, 1)));
    SPV(b, SpvOpBranch, 0, header);
    spvb_label(b, merge);
    spv_if f;
    if_begin(e, spv_cmp(e, SpvOpIEqual, sg_lane, spv_u32(e, 0)), &f);
    sh_put(e, &s, sg_id, acc_key(e, a), spv_load(e, a->idx));
    if_end(e, &f);
    barrier(e);
    /* Invocation 0 merges every subgroup's winner, its own included (merging
     * a pair twice changes nothing): Vulkan does not promise that it is
     * lane 0 of subgroup 0. */
    if_begin(e, spv_cmp(e, SpvOpIEqual, lid, spv_u32(e, 0)), &f);
    spv_loop l;
    const uint32_t j = loop_begin(e, &l, spv_u32(e, 0), num_sg, spv_u32(e, 1));
    acc_merge(e, a, sh_key(e, &s, j), spv_load(e, sh_at(e, &s, s.idx, j)));
    loop_end(e, &l);
    spv_store(e, sh_at(e, &s, result, spv_u32(e, 0)), spv_load(e, a->idx));
    if_end(e, &f);
  } else {
    sh_put(e, &s, lid, acc_key(e, a), spv_load(e, a->idx));
    barrier(e);
    for (uint32_t half = L / 2; half > 0; half /= 2) {
      spv_if f;
      if_begin(e, spv_cmp(e, SpvOpULessThan, lid, spv_u32(e, half)), &f);
      const uint32_t other = spv_op(e, SpvOpIAdd, lid, spv_u32(e, half));
      const spv_key ak = sh_key(e, &s, lid), bk = sh_key(e, &s, other);
      const uint32_t ai = spv_load(e, sh_at(e, &s, s.idx, lid));
      const uint32_t bi = spv_load(e, sh_at(e, &s, s.idx, other));
      const uint32_t better = spv_better(e, ak, ai, bk, bi);
      const spv_key w = {spv_key_select(e, better, bk.k0, ak.k0),
                         spv_select(e, better, bk.k1, ak.k1)};
      sh_put(e, &s, lid, w, spv_select(e, better, bi, ai));
      if_end(e, &f);
      barrier(e);
    }
    spv_if f;
    if_begin(e, spv_cmp(e, SpvOpIEqual, lid, spv_u32(e, 0)), &f);
    const spv_key wk = sh_key(e, &s, spv_u32(e, 0));
    const uint32_t wi = spv_load(e, sh_at(e, &s, s.idx, spv_u32(e, 0)));
    spv_store(e, a->k0, wk.k0);
    if (a->k1)
      spv_store(e, a->k1, wk.k1);
    spv_store(e, a->idx, wi);
    spv_store(e, sh_at(e, &s, result, spv_u32(e, 0)), wi);
    if_end(e, &f);
  }
  barrier(e);
  return spv_load(e, sh_at(e, &s, result, spv_u32(e, 0)));
}

/* ---- outputs ---- */

static bool is_group_output(const dmlc_kout *o) {
  return o->kind == DMLC_KOUT_ONEHOT || o->kind == DMLC_KOUT_CONSTANT;
}

/* INDEX outputs: the winning index at the kept point's offsets. */
static void write_indices(spv_em *e, const uint32_t *base, uint32_t best) {
  for (uint32_t i = 0; i < e->k->num_outputs; i++)
    if (e->k->outputs[i].kind == DMLC_KOUT_INDEX)
      spv_store_out(e, i, base[1 + i], spv_index_bits(e, best));
}

/* ONEHOT and CONSTANT outputs over the reduced points start, start + step,
 * ... below end of `cols` kept points along the innermost dim from base
 * (one row's elements written together), the 1s at reduced point best
 * (best 0, no id: 0s only, the 1s written elsewhere). */
static void write_group(spv_em *e, const uint32_t *base, uint32_t best, uint32_t start,
                        uint32_t end, uint32_t step, uint32_t cols) {
  const dmlc_kdesc *k = e->k;
  const uint32_t last = k->rank - 1;
  bool any = false;
  for (uint32_t i = 0; i < k->num_outputs; i++)
    any |= is_group_output(&k->outputs[i]) && !((e->plan.zero_fill >> i) & 1);
  if (!any)
    return;
  spv_loop l;
  const uint32_t r = loop_begin(e, &l, start, end, step);
  uint32_t off[MAX_BUFS];
  all_offsets(e, r, k->reduced_mask, off);
  const uint32_t hit = best ? spv_cmp(e, SpvOpIEqual, r, best) : 0;
  for (uint32_t i = 0; i < k->num_outputs; i++) {
    const dmlc_kout *o = &k->outputs[i];
    if (!is_group_output(o) || (e->plan.zero_fill >> i) & 1) /* 0s the runtime's */
      continue;
    spv_bits v = spv_const_bits(e, o->dtype, o->kind == DMLC_KOUT_ONEHOT ? 0 : o->constant);
    if (o->kind == DMLC_KOUT_ONEHOT && hit) {
      const spv_bits one = spv_const_bits(e, o->dtype, 1);
      v.lo = spv_select(e, hit, one.lo, spv_u32(e, 0));
      v.hi = spv_select(e, hit, one.hi, spv_u32(e, 0));
    }
    const uint32_t at = add_or(e, base[1 + i], off[1 + i]);
    for (uint32_t j = 0; j < cols; j++)
      spv_store_out(e, i,
                    j && o->strides[last]
                        ? spv_op(e, SpvOpIAdd, at, spv_u32(e, (uint32_t)(j * o->strides[last])))
                        : at,
                    v);
  }
  loop_end(e, &l);
}

/* ---- kernel shapes ---- */

static uint32_t kept_mask(const dmlc_kdesc *k) {
  return ~k->reduced_mask & ((k->rank >= 32 ? 0 : (1u << k->rank)) - 1);
}

/* The invocation's index in the whole dispatch: group * local size + lid. */
static uint32_t invocation_index(spv_em *e, uint32_t group, uint32_t lid) {
  return spv_op(e, SpvOpIAdd, spv_op(e, SpvOpIMul, group, spv_u32(e, e->plan.local_size)), lid);
}

static void emit_elementwise(spv_em *e, uint32_t group, uint32_t lid) {
  const dmlc_kdesc *k = e->k;
  const uint32_t p = invocation_index(e, group, lid);
  spv_if f;
  if_begin(e, spv_cmp(e, SpvOpULessThan, p, spv_u32(e, (uint32_t)e->plan.points)), &f);
  uint32_t off[MAX_BUFS];
  all_offsets(e, p, (1u << k->rank) - 1, off);
  spv_bits raw = {0, 0, 0};
  bool loaded = false;
  for (uint32_t i = 0; i < k->num_outputs; i++) {
    const dmlc_kout *o = &k->outputs[i];
    spv_bits v;
    if (o->kind == DMLC_KOUT_COPY) {
      if (!loaded)
        raw = spv_load_read(e, off[0]);
      loaded = true;
      v = spv_convert(e, raw, k->read_dtype, o->dtype);
    } else {
      v = spv_const_bits(e, o->dtype, o->constant);
    }
    spv_store_out(e, i, off[1 + i], v);
  }
  if_end(e, &f);
}

/* Columns with vec_elems: invocation q owns kept points q * E .. q * E +
 * E - 1 (consecutive along the innermost dim, one 16-byte vector of every
 * reduced point's slice) and walks the reduced points, one vector load
 * each, keeping E accumulators. */
#define COLUMN_UNROLL 4

/* Merges into a[] the vectors of reduced points [lo, hi) (run-time
 * values), the vector of point r at vector index first + (its read offset
 * >> vec_shift): from window `window` of the read (whose vectors there all
 * are) when window >= 0, else through load_vec. */
static void column_vec_points(spv_em *e, spv_acc *a, uint32_t first, uint32_t lo, uint32_t hi,
                              int window) {
  const dmlc_kdesc *k = e->k;
  const uint32_t E = e->plan.vec_elems, U = COLUMN_UNROLL;
  const uint32_t whole =
      spv_op(e, SpvOpIAdd, lo,
             spv_op(e, SpvOpBitwiseAnd, spv_op(e, SpvOpISub, hi, lo), spv_u32(e, ~(U - 1))));
  const uint32_t wfirst = window > 0 ? (uint32_t)window << e->read_vec.window_log2 : 0;
  for (uint32_t pass = 0; pass < 2; pass++) {
    /* pass 0: U reduced points per iteration, their loads before their
     * merges (independent loads in flight); pass 1: the rest, one each */
    const uint32_t u = pass == 0 ? U : 1;
    spv_loop l;
    const uint32_t r0 =
        loop_begin(e, &l, pass == 0 ? lo : whole, pass == 0 ? whole : hi, spv_u32(e, u));
    uint32_t v[COLUMN_UNROLL], rs[COLUMN_UNROLL];
    for (uint32_t t = 0; t < u; t++) {
      rs[t] = t ? spv_op(e, SpvOpIAdd, r0, spv_u32(e, t)) : r0;
      uint32_t off;
      const uint64_t *strides[1] = {k->read_strides};
      offsets_of(e, rs[t], k->reduced_mask, 1, strides, &off);
      const uint32_t c = spv_op(e, SpvOpIAdd, first,
                                spv_op(e, SpvOpShiftRightLogical, off, spv_u32(e, vec_shift(e))));
      v[t] = window < 0
                 ? load_vec(e, c)
                 : spv_buf_load_window(e, &e->read_vec, e->p_sb_v4, e->t_v4, (uint32_t)window,
                                       wfirst ? spv_op(e, SpvOpISub, c, spv_u32(e, wfirst)) : c);
    }
    for (uint32_t t = 0; t < u; t++)
      for (uint32_t j = 0; j < E; j++)
        acc_scan(e, &a[j], spv_key_of(e, vec_elem(e, v[t], j)), rs[t]);
    loop_end(e, &l);
  }
}

/* Merges into a[] (E accumulators) the vectors of reduced points
 * [start, end) of the columns whose first vector index is first. */
static void column_vec_range(spv_em *e, spv_acc *a, uint32_t first, uint32_t start, uint32_t end) {
  const dmlc_kdesc *k = e->k;
  const uint32_t n = e->read_vec.windows;
  if (n <= 1) {
    column_vec_points(e, a, first, start, end, -1);
    return;
  }
  /* Windows (plan_vector: one reduced dim, whose points' offsets grow):
   * the points in window j are a contiguous range, each window a loop of
   * its own that loads from it directly (no switch per load). */
  uint32_t d = 0;
  while (!((k->reduced_mask >> d) & 1))
    d++;
  const uint32_t step = (uint32_t)(k->read_strides[d] >> vec_shift(e)); /* vectors a point */
  uint32_t lo = start;
  for (uint32_t j = 0; j < n; j++) {
    uint32_t hi = end;
    if (j + 1 < n) {
      /* the first point at or past window j + 1: ceil((bound - first) / step) */
      const uint32_t bound = spv_u32(e, (j + 1) << e->read_vec.window_log2);
      const uint32_t ahead =
          spv_op(e, SpvOpUDiv,
                 spv_op(e, SpvOpIAdd, spv_op(e, SpvOpISub, bound, first), spv_u32(e, step - 1)),
                 spv_u32(e, step));
      hi = umin(e, spv_select(e, spv_cmp(e, SpvOpULessThan, first, bound), ahead, spv_u32(e, 0)),
                end);
      hi = umax(e, hi, lo);
    }
    column_vec_points(e, a, first, lo, hi, (int)j);
    lo = hi;
  }
}

/* The first vector index of the columns of vector q, and their offsets. */
static uint32_t column_first(spv_em *e, uint32_t q, uint32_t *base) {
  all_offsets(e, spv_op(e, SpvOpShiftLeftLogical, q, spv_u32(e, vec_shift(e))), kept_mask(e->k),
              base);
  return spv_op(e, SpvOpShiftRightLogical, base[0], spv_u32(e, vec_shift(e)));
}

static void emit_small_vec(spv_em *e, uint32_t q) {
  const dmlc_kdesc *k = e->k;
  const uint32_t E = e->plan.vec_elems, last = k->rank - 1, nb = 1 + k->num_outputs;
  uint32_t base[MAX_BUFS];
  const uint32_t first = column_first(e, q, base);
  spv_acc a[16];
  for (uint32_t j = 0; j < E; j++)
    a[j] = acc_init(e);
  const uint32_t reduced = spv_u32(e, (uint32_t)e->plan.reduced);
  column_vec_range(e, a, first, spv_u32(e, 0), reduced);
  for (uint32_t j = 0; j < E; j++) {
    uint32_t bj[MAX_BUFS];
    for (uint32_t i = 0; i < nb; i++) {
      const uint64_t st = i == 0 ? k->read_strides[last] : k->outputs[i - 1].strides[last];
      bj[i] = j && st ? spv_op(e, SpvOpIAdd, base[i], spv_u32(e, (uint32_t)(j * st))) : base[i];
    }
    const uint32_t best = spv_load(e, a[j].idx);
    write_indices(e, bj, best);
    write_group(e, bj, best, spv_u32(e, 0), reduced, spv_u32(e, 1), 1);
  }
}

/* Kept point q by one invocation: its reduction and all its outputs.
 * Every reduced point one load at a time, or, for lone rows, the row's
 * 16-byte vectors where the plan has them (reduce_row). */
static void reduce_kept_point(spv_em *e, uint32_t q) {
  uint32_t base[MAX_BUFS];
  all_offsets(e, q, kept_mask(e->k), base);
  const spv_acc a = acc_init(e);
  const uint32_t reduced = spv_u32(e, (uint32_t)e->plan.reduced);
  const uint32_t zero = spv_u32(e, 0), one = spv_u32(e, 1);
  if (e->plan.lone_rows)
    reduce_row(e, &a, base[0], zero, reduced, zero, one);
  else
    reduce_points(e, &a, base[0], zero, reduced, one);
  const uint32_t best = spv_load(e, a.idx);
  write_indices(e, base, best);
  write_group(e, base, best, spv_u32(e, 0), reduced, spv_u32(e, 1), 1);
}

/* Short packed rows (plan short_rows = G): invocation q < K / G reduces
 * rows q * G .. q * G + G - 1 from their V 16-byte vectors, loaded first;
 * invocation K / G the rows after the last whole group, element by
 * element. */
static void emit_short_rows(spv_em *e, uint32_t q) {
  const dmlc_kdesc *k = e->k;
  const uint32_t G = e->plan.short_rows, len = k->dims[1], E = e->plan.vec_elems;
  const uint32_t V = G * len / E, whole = (uint32_t)(e->plan.kept / G);
  const uint32_t n = spv_u32(e, len);
  spv_if f;
  if_begin(e, spv_cmp(e, SpvOpULessThan, q, spv_u32(e, whole)), &f);
  uint32_t v[SPV_SHORT_ROWS_MAX_VECS];
  const uint32_t first = spv_op(e, SpvOpIMul, q, spv_u32(e, V));
  for (uint32_t t = 0; t < V; t++)
    v[t] = load_vec(e, t ? spv_op(e, SpvOpIAdd, first, spv_u32(e, t)) : first);
  const uint32_t row0 = spv_op(e, SpvOpIMul, q, spv_u32(e, G));
  for (uint32_t g = 0; g < G; g++) {
    const spv_acc a = acc_init(e);
    for (uint32_t c = 0; c < len; c++) {
      const uint32_t el = g * len + c;
      acc_scan(e, &a, spv_key_of(e, vec_elem(e, v[el / E], el % E)), spv_u32(e, c));
    }
    uint32_t base[MAX_BUFS];
    all_offsets(e, g ? spv_op(e, SpvOpIAdd, row0, spv_u32(e, g)) : row0, kept_mask(k), base);
    const uint32_t best = spv_load(e, a.idx);
    write_indices(e, base, best);
    write_group(e, base, best, spv_u32(e, 0), n, spv_u32(e, 1), 1);
  }
  if_end(e, &f);
  if (e->plan.kept % G) {
    if_begin(e, spv_cmp(e, SpvOpIEqual, q, spv_u32(e, whole)), &f);
    spv_loop l;
    reduce_kept_point(e, loop_begin(e, &l, spv_u32(e, whole * G),
                                    spv_u32(e, (uint32_t)e->plan.kept), spv_u32(e, 1)));
    loop_end(e, &l);
    if_end(e, &f);
  }
}

static void emit_small(spv_em *e, uint32_t group, uint32_t lid) {
  const uint32_t q = invocation_index(e, group, lid);
  if (e->plan.short_rows) {
    emit_short_rows(e, q);
    return;
  }
  const uint32_t E = e->plan.vec_elems ? e->plan.vec_elems : 1;
  spv_if f;
  if_begin(e, spv_cmp(e, SpvOpULessThan, q, spv_u32(e, (uint32_t)(e->plan.kept / E))), &f);
  if (e->plan.vec_elems) {
    emit_small_vec(e, q);
    if_end(e, &f);
    return;
  }
  reduce_kept_point(e, q);
  if_end(e, &f);
}

/* Lone runs: kept points q * M .. q * M + M - 1 (M = lone_runs), their
 * runs of the innermost dim adjacent; for each outer reduced point, the M
 * runs in storage order, each into its point's accumulator (every
 * accumulator sees its indices in increasing order). */
static void reduce_kept_runs(spv_em *e, uint32_t q) {
  const dmlc_kdesc *k = e->k;
  const uint32_t M = e->plan.lone_runs, E = e->plan.vec_elems, shift = vec_shift(e);
  const uint32_t run = k->dims[k->rank - 1];
  uint32_t base[SPV_LONE_RUNS][MAX_BUFS];
  spv_acc a[SPV_LONE_RUNS];
  const uint32_t first = spv_op(e, SpvOpIMul, q, spv_u32(e, M));
  for (uint32_t j = 0; j < M; j++) {
    all_offsets(e, j ? spv_op(e, SpvOpIAdd, first, spv_u32(e, j)) : first, kept_mask(k), base[j]);
    a[j] = acc_init(e);
  }
  spv_loop lo;
  const uint32_t o = loop_begin(e, &lo, spv_u32(e, 0),
                                spv_u32(e, (uint32_t)(e->plan.reduced / run)), spv_u32(e, 1));
  const uint32_t idx0 = spv_op(e, SpvOpIMul, o, spv_u32(e, run));
  uint32_t off;
  const uint64_t *strides[1] = {k->read_strides};
  offsets_of(e, idx0, k->reduced_mask, 1, strides, &off);
  for (uint32_t j = 0; j < M; j++) {
    const uint32_t at =
        spv_op(e, SpvOpShiftRightLogical, spv_op(e, SpvOpIAdd, base[j][0], off), spv_u32(e, shift));
    spv_loop lc;
    const uint32_t c = loop_begin(e, &lc, spv_u32(e, 0), spv_u32(e, run / E), spv_u32(e, 1));
    const uint32_t v = load_vec(e, spv_op(e, SpvOpIAdd, at, c));
    const uint32_t idx =
        spv_op(e, SpvOpIAdd, idx0, spv_op(e, SpvOpShiftLeftLogical, c, spv_u32(e, shift)));
    for (uint32_t t = 0; t < E; t++)
      acc_scan(e, &a[j], spv_key_of(e, vec_elem(e, v, t)),
               t ? spv_op(e, SpvOpIAdd, idx, spv_u32(e, t)) : idx);
    loop_end(e, &lc);
  }
  loop_end(e, &lo);
  for (uint32_t j = 0; j < M; j++) {
    const uint32_t best = spv_load(e, a[j].idx);
    write_indices(e, base[j], best);
    write_group(e, base[j], best, spv_u32(e, 0), spv_u32(e, (uint32_t)e->plan.reduced),
                spv_u32(e, 1), 1);
  }
}

/* Lone rows: invocation q = group * L + lid reduces kept point q (below
 * kept) alone, reading its range in order, and writes its outputs; with
 * lone runs, kept points q * M .. q * M + M - 1. */
static void emit_lone_rows(spv_em *e, uint32_t group, uint32_t lid) {
  const uint32_t q = invocation_index(e, group, lid);
  const uint32_t M = e->plan.lone_runs ? e->plan.lone_runs : 1;
  spv_if f;
  if_begin(e, spv_cmp(e, SpvOpULessThan, q, spv_u32(e, (uint32_t)(e->plan.kept / M))), &f);
  if (e->plan.lone_runs)
    reduce_kept_runs(e, q);
  else
    reduce_kept_point(e, q);
  if_end(e, &f);
}

static void emit_large(spv_em *e, uint32_t group, uint32_t lid) {
  if (e->plan.lone_rows) {
    emit_lone_rows(e, group, lid);
    return;
  }
  const uint32_t L = spv_u32(e, e->plan.local_size);
  uint32_t base[MAX_BUFS];
  all_offsets(e, group, kept_mask(e->k), base);
  const spv_acc a = acc_init(e);
  const uint32_t reduced = spv_u32(e, (uint32_t)e->plan.reduced);
  reduce_row(e, &a, base[0], spv_u32(e, 0), reduced, lid, L);
  const uint32_t best = reduce_group(e, &a, lid);
  spv_if f;
  if_begin(e, spv_cmp(e, SpvOpIEqual, lid, spv_u32(e, 0)), &f);
  write_indices(e, base, best);
  if_end(e, &f);
  write_group(e, base, best, lid, reduced, L, 1);
}

/* ---- split reductions ---- */

/* Part s of a kept point covers its reduced points [s * len, end), end the
 * smaller of (s + 1) * len and the range's end. */
static void part_range(spv_em *e, uint32_t s, uint32_t *start, uint32_t *end) {
  const uint32_t len = spv_u32(e, e->plan.split_len);
  const uint32_t reduced = spv_u32(e, (uint32_t)e->plan.reduced);
  *start = spv_op(e, SpvOpIMul, s, len);
  const uint32_t stop = spv_op(e, SpvOpIAdd, *start, len);
  *end = spv_select(e, spv_cmp(e, SpvOpULessThan, stop, reduced), stop, reduced);
}

/* A partial: the key's words (a 64-bit key as its low and high words, a
 * key pair as k0, k1), the index, and one word of padding. */
static uint32_t partial_word(spv_em *e, uint32_t slot, uint32_t w) {
  return spv_op(e, SpvOpIAdd, spv_op(e, SpvOpShiftLeftLogical, slot, spv_u32(e, 2)), spv_u32(e, w));
}

static void partial_store(spv_em *e, uint32_t slot, spv_key k, uint32_t idx) {
  uint32_t w0 = k.k0, w1 = k.k1;
  if (e->key_u64)
    spv_split64(e, k.k0, &w0, &w1);
  const spv_buf *p = &e->partials;
  spv_buf_access(e, p, e->p_sb_u32, e->t_u32, partial_word(e, slot, 0), SPV_ACCESS_STORE, w0);
  if (e->key_u64 || e->key64)
    spv_buf_access(e, p, e->p_sb_u32, e->t_u32, partial_word(e, slot, 1), SPV_ACCESS_STORE, w1);
  spv_buf_access(e, p, e->p_sb_u32, e->t_u32, partial_word(e, slot, 2), SPV_ACCESS_STORE, idx);
}

static spv_key partial_load(spv_em *e, uint32_t slot, uint32_t *idx) {
  const spv_buf *p = &e->partials;
  spv_key k = {
      spv_buf_access(e, p, e->p_sb_u32, e->t_u32, partial_word(e, slot, 0), SPV_ACCESS_LOAD, 0),
      spv_u32(e, 0)};
  if (e->key_u64 || e->key64) {
    const uint32_t w1 =
        spv_buf_access(e, p, e->p_sb_u32, e->t_u32, partial_word(e, slot, 1), SPV_ACCESS_LOAD, 0);
    if (e->key_u64)
      k.k0 = spv_join64(e, k.k0, w1);
    else
      k.k1 = w1;
  }
  *idx = spv_buf_access(e, p, e->p_sb_u32, e->t_u32, partial_word(e, slot, 2), SPV_ACCESS_LOAD, 0);
  return k;
}

/* The output offsets of kept point q (into base) and an accumulator of its
 * parts start, start + step, ... (in the invocation's own order: pairs
 * compare by (key, index), so the order does not change the winner). */
static spv_acc merge_parts(spv_em *e, uint32_t q, uint32_t start, uint32_t step, uint32_t *base) {
  all_offsets(e, q, kept_mask(e->k), base);
  const spv_acc a = acc_init(e);
  const uint32_t parts = spv_u32(e, e->plan.split_parts);
  const uint32_t first = spv_op(e, SpvOpIMul, q, parts);
  spv_loop l;
  const uint32_t j = loop_begin(e, &l, start, parts, step);
  uint32_t idx;
  const spv_key k = partial_load(e, spv_op(e, SpvOpIAdd, first, j), &idx);
  acc_merge(e, &a, k, idx);
  loop_end(e, &l);
  return a;
}

/* Merges every partial of kept point q and writes its outputs: the index
 * (when s is 0), and the one-hot and constant outputs over part s of
 * finish_per_kept (all of them when it is 1). All invocations reach it. */
static void finish_point(spv_em *e, uint32_t q, uint32_t s, uint32_t lid) {
  const uint32_t L = spv_u32(e, e->plan.local_size);
  const uint32_t per = e->plan.finish_per_kept;
  uint32_t base[MAX_BUFS];
  const spv_acc a = merge_parts(e, q, lid, L, base);
  const uint32_t best = reduce_group(e, &a, lid);
  spv_if f;
  if_begin(e,
           SPV(&e->b, SpvOpLogicalAnd, e->t_bool, spv_cmp(e, SpvOpIEqual, lid, spv_u32(e, 0)),
               spv_cmp(e, SpvOpIEqual, s, spv_u32(e, 0))),
           &f);
  write_indices(e, base, best);
  if_end(e, &f);
  if (per > 1) {
    uint32_t start, end;
    part_range(e, s, &start, &end);
    write_group(e, base, best, spv_op(e, SpvOpIAdd, start, lid), end, L, 1);
  } else {
    write_group(e, base, best, lid, spv_u32(e, (uint32_t)e->plan.reduced), L, 1);
  }
}

/* Group g merges every partial of kept point g / per (per: finish_per_kept)
 * and writes its outputs: the index (from the point's first group), and
 * the one-hot and constant outputs over part g % per. The merge compares
 * (key, index) pairs, so its order does not change the winner. */
static void emit_finish(spv_em *e, uint32_t group, uint32_t lid) {
  const uint32_t per = e->plan.finish_per_kept;
  const uint32_t q = per > 1 ? spv_op(e, SpvOpUDiv, group, spv_u32(e, per)) : group;
  const uint32_t s = per > 1 ? spv_op(e, SpvOpUMod, group, spv_u32(e, per)) : spv_u32(e, 0);
  finish_point(e, q, s, lid);
}

/* ---- fused finish ---- */

/* Kept point q's arrival counter: a word after the partials. */
static uint32_t counter_word(spv_em *e, uint32_t q) {
  return spv_op(e, SpvOpIAdd, spv_u32(e, (uint32_t)(spv_plan_partials(&e->plan) * 4)), q);
}

/* Orders this invocation's storage accesses before and after it at device
 * scope: its partial stores become visible before its arrival is counted,
 * and the last arrival sees every other part's. */
static void device_fence(spv_em *e) {
  SPV(&e->b, SpvOpMemoryBarrier, 0, spv_u32(e, SpvScopeDevice),
      spv_u32(e, SpvMemorySemanticsAcquireReleaseMask | SpvMemorySemanticsUniformMemoryMask));
}

/* Counts one part of kept point q in, after a fence; a bool: the last. */
static uint32_t arrive(spv_em *e, uint32_t q) {
  device_fence(e);
  const uint32_t old = spv_buf_access(e, &e->partials, e->p_sb_u32, e->t_u32, counter_word(e, q),
                                      SPV_ACCESS_ATOMIC_ADD, spv_u32(e, 1));
  return spv_cmp(e, SpvOpIEqual, old, spv_u32(e, e->plan.split_parts - 1));
}

/* For the next dispatch: kept point q's counter back to 0 (nothing counts
 * it again in this one). */
static void counter_reset(spv_em *e, uint32_t q) {
  spv_buf_access(e, &e->partials, e->p_sb_u32, e->t_u32, counter_word(e, q), SPV_ACCESS_STORE,
                 spv_u32(e, 0));
}

/* Lone parts: the last part of kept point q to arrive merges its parts
 * alone, in order, and writes the index outputs (a CPU device: a few
 * hundred loads, in one lane). */
static void lone_fused_finish(spv_em *e, uint32_t q) {
  spv_if last;
  if_begin(e, arrive(e, q), &last);
  device_fence(e);
  uint32_t base[MAX_BUFS];
  const spv_acc a = merge_parts(e, q, spv_u32(e, 0), spv_u32(e, 1), base);
  write_indices(e, base, spv_load(e, a.idx));
  counter_reset(e, q);
  if_end(e, &last);
}

/* Lone parts: invocation q = group * L + lid (below kept * parts) reduces
 * part q % parts of kept point q / parts alone, into partial q. */
static void emit_lone_parts(spv_em *e, uint32_t group, uint32_t lid) {
  const uint32_t q = invocation_index(e, group, lid);
  const uint64_t partials = spv_plan_partials(&e->plan);
  spv_if f;
  if_begin(e, spv_cmp(e, SpvOpULessThan, q, spv_u32(e, (uint32_t)partials)), &f);
  const uint32_t parts = spv_u32(e, e->plan.split_parts);
  uint32_t base;
  const uint64_t *strides[1] = {e->k->read_strides};
  offsets_of(e, spv_op(e, SpvOpUDiv, q, parts), kept_mask(e->k), 1, strides, &base);
  uint32_t start, end;
  part_range(e, spv_op(e, SpvOpUMod, q, parts), &start, &end);
  const spv_acc a = acc_init(e);
  reduce_row(e, &a, base, start, end, spv_u32(e, 0), spv_u32(e, 1));
  partial_store(e, q, acc_key(e, &a), spv_load(e, a.idx));
  if (e->plan.fused_finish)
    lone_fused_finish(e, spv_op(e, SpvOpUDiv, q, parts));
  if_end(e, &f);
}

/* Group g reduces part g % parts of kept point g / parts and writes its
 * winner to partial g (lone parts: emit_lone_parts). */
static void emit_split(spv_em *e, uint32_t group, uint32_t lid) {
  if (e->plan.lone_rows) {
    emit_lone_parts(e, group, lid);
    return;
  }
  const uint32_t parts = spv_u32(e, e->plan.split_parts);
  const uint32_t q = spv_op(e, SpvOpUDiv, group, parts);
  uint32_t base;
  const uint64_t *strides[1] = {e->k->read_strides};
  offsets_of(e, q, kept_mask(e->k), 1, strides, &base);
  uint32_t start, end;
  part_range(e, spv_op(e, SpvOpUMod, group, parts), &start, &end);
  const spv_acc a = acc_init(e);
  reduce_row(e, &a, base, start, end, lid, spv_u32(e, e->plan.local_size));
  reduce_group(e, &a, lid);
  uint32_t last = 0;
  if (e->plan.fused_finish) {
    const uint32_t p_wg = SPV_TYPE(&e->b, SpvOpTypePointer, SpvStorageClassWorkgroup, e->t_u32);
    last = SPV(&e->b, SpvOpAccessChain, p_wg, shared_array(e, e->t_u32, 1), spv_u32(e, 0));
  }
  spv_if f;
  if_begin(e, spv_cmp(e, SpvOpIEqual, lid, spv_u32(e, 0)), &f);
  partial_store(e, group, acc_key(e, &a), spv_load(e, a.idx));
  if (last)
    spv_store(e, last, spv_select(e, arrive(e, q), spv_u32(e, 1), spv_u32(e, 0)));
  if_end(e, &f);
  if (!last)
    return;
  /* The group whose part of kept point q came last (uniform: all read
   * the flag after the barrier) merges q's parts with every invocation.
   * The barrier also orders storage memory, so what invocation 0 acquired
   * with its atomic reaches the others (with their own fence after it). */
  barrier_with(e, BARRIER_SEMANTICS | SpvMemorySemanticsUniformMemoryMask);
  spv_if g;
  if_begin(e, spv_cmp(e, SpvOpIEqual, spv_load(e, last), spv_u32(e, 1)), &g);
  device_fence(e);
  finish_point(e, q, spv_u32(e, 0), lid);
  if_begin(e, spv_cmp(e, SpvOpIEqual, lid, spv_u32(e, 0)), &f);
  counter_reset(e, q);
  if_end(e, &f);
  if_end(e, &g);
}

/* ---- columns in parts ---- */

/* Group g runs the SMALL vector columns of workgroup g % column_groups
 * over part g / column_groups of the reduced range, and writes each of its
 * E columns' winners to partial part * kept + column (consecutive
 * invocations, consecutive partials). */
static void emit_column_parts(spv_em *e, uint32_t group, uint32_t lid) {
  const uint32_t E = e->plan.vec_elems, L = e->plan.local_size;
  const uint32_t cg = spv_u32(e, (uint32_t)e->plan.column_groups);
  const uint32_t s = spv_op(e, SpvOpUDiv, group, cg);
  const uint32_t q = spv_op(
      e, SpvOpIAdd, spv_op(e, SpvOpIMul, spv_op(e, SpvOpUMod, group, cg), spv_u32(e, L)), lid);
  spv_if f;
  if_begin(e, spv_cmp(e, SpvOpULessThan, q, spv_u32(e, (uint32_t)(e->plan.kept / E))), &f);
  uint32_t base[MAX_BUFS];
  const uint32_t first = column_first(e, q, base);
  spv_acc a[16];
  for (uint32_t j = 0; j < E; j++)
    a[j] = acc_init(e);
  uint32_t start, end;
  part_range(e, s, &start, &end);
  column_vec_range(e, a, first, start, end);
  const uint32_t slot0 =
      spv_op(e, SpvOpIAdd, spv_op(e, SpvOpIMul, s, spv_u32(e, (uint32_t)e->plan.kept)),
             spv_op(e, SpvOpShiftLeftLogical, q, spv_u32(e, vec_shift(e))));
  for (uint32_t j = 0; j < E; j++)
    partial_store(e, j ? spv_op(e, SpvOpIAdd, slot0, spv_u32(e, j)) : slot0, acc_key(e, &a[j]),
                  spv_load(e, a[j].idx));
  /* hardmax's 0s, row by row as read (the finish writes the 1s: writing
   * whole columns there would stride down them) */
  write_group(e, base, 0, start, end, spv_u32(e, 1), E);
  if_end(e, &f);
}

/* Invocation p (of all groups) merges kept point p's parts in order and
 * writes its outputs. */
static void emit_column_finish(spv_em *e, uint32_t group, uint32_t lid) {
  const uint32_t p = invocation_index(e, group, lid);
  spv_if f;
  if_begin(e, spv_cmp(e, SpvOpULessThan, p, spv_u32(e, (uint32_t)e->plan.kept)), &f);
  uint32_t base[MAX_BUFS];
  all_offsets(e, p, kept_mask(e->k), base);
  const spv_acc a = acc_init(e);
  spv_loop l;
  const uint32_t s =
      loop_begin(e, &l, spv_u32(e, 0), spv_u32(e, e->plan.split_parts), spv_u32(e, 1));
  uint32_t idx;
  const spv_key k = partial_load(
      e, spv_op(e, SpvOpIAdd, spv_op(e, SpvOpIMul, s, spv_u32(e, (uint32_t)e->plan.kept)), p),
      &idx);
  acc_merge(e, &a, k, idx);
  loop_end(e, &l);
  const uint32_t best = spv_load(e, a.idx);
  write_indices(e, base, best);
  /* the parts wrote the 0s (and constants): the 1s */
  uint32_t off[MAX_BUFS];
  all_offsets(e, best, e->k->reduced_mask, off);
  for (uint32_t i = 0; i < e->k->num_outputs; i++)
    if (e->k->outputs[i].kind == DMLC_KOUT_ONEHOT)
      spv_store_out(e, i, add_or(e, base[1 + i], off[1 + i]),
                    spv_const_bits(e, e->k->outputs[i].dtype, 1));
  if_end(e, &f);
}

dmlc_status spv_emit_module(spv_em *e, uint32_t **words, size_t *num_words, dmlc_diag *diag) {
  const dmlc_dtype_info *ri = dmlc_dtype_get(e->k->read_dtype);
  e->key_u64 = e->k->has_reduction && ri->size == 8 && e->caps->shader_int64;
  e->key64 = e->k->has_reduction && ri->size == 8 && !e->key_u64;
  declare_interface(e);
  const uint32_t main_fn = spvb_id(&e->b);
  const uint32_t group = group_index(e);
  const uint32_t lid = load_builtin_x(e, SpvBuiltInLocalInvocationId);
  /* Groups past the dispatch's (a runtime's warm-up dispatch pushes an
   * offset beyond them) do nothing: the branch is uniform per group. */
  const uint64_t groups = e->plan.path == SPV_PATH_FINISH || e->plan.path == SPV_PATH_COLUMN_FINISH
                              ? spv_plan_finish_groups(&e->plan)
                              : e->plan.num_groups;
  spv_if in_range = {0};
  if (groups <= UINT32_MAX)
    if_begin(e, spv_cmp(e, SpvOpULessThan, group, spv_u32(e, (uint32_t)groups)), &in_range);
  switch (e->plan.path) {
  case SPV_PATH_ELEMENTWISE:
    emit_elementwise(e, group, lid);
    break;
  case SPV_PATH_SMALL:
    emit_small(e, group, lid);
    break;
  case SPV_PATH_LARGE:
    emit_large(e, group, lid);
    break;
  case SPV_PATH_SPLIT:
    emit_split(e, group, lid);
    break;
  case SPV_PATH_FINISH:
    emit_finish(e, group, lid);
    break;
  case SPV_PATH_COLUMN_PARTS:
    emit_column_parts(e, group, lid);
    break;
  case SPV_PATH_COLUMN_FINISH:
    emit_column_finish(e, group, lid);
    break;
  }
  if (in_range.merge)
    if_end(e, &in_range);
  spvb_code(&e->b, SpvOpReturn, 0, NULL, 0);
  *words = spvb_finish(&e->b, main_fn, e->t_void, e->t_fn, e->plan.local_size, num_words);
  if (!*words)
    return dmlc_diag_set(diag, DMLC_ERROR_OUT_OF_MEMORY, "out of memory emitting SPIR-V");
  return DMLC_OK;
}
