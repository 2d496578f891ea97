/* Element-level code for the SPIR-V kernels: scalar helpers, unpacking
 * loads from 32-bit words, the integer-mapped order keys of argmax/argmin,
 * stores in every data type, and the exact COPY conversions. Keys and
 * conversions work on bit patterns with integer instructions only, so no
 * result depends on the device's float controls (denormal flushing, signed
 * zero, NaN handling) or on its optional 8/16/64-bit arithmetic. */
#include <stdlib.h>
#include <string.h>

#include <spirv/unified1/GLSL.std.450.h>

#include "codegen/spirv/emit_internal.h"

/* ---- scalar helpers ---- */

uint32_t spv_u32(spv_em *e, uint32_t v) {
  return spvb_constant(&e->b, SpvOpConstant, e->t_u32, &v, 1);
}

uint32_t spv_bool(spv_em *e, bool v) {
  return spvb_constant(&e->b, v ? SpvOpConstantTrue : SpvOpConstantFalse, e->t_bool, NULL, 0);
}

uint32_t spv_op(spv_em *e, SpvOp op, uint32_t a, uint32_t b) {
  return SPV(&e->b, op, e->t_u32, a, b);
}

uint32_t spv_cmp(spv_em *e, SpvOp op, uint32_t a, uint32_t b) {
  return SPV(&e->b, op, e->t_bool, a, b);
}

uint32_t spv_select(spv_em *e, uint32_t cond, uint32_t a, uint32_t b) {
  return SPV(&e->b, SpvOpSelect, e->t_u32, cond, a, b);
}

uint32_t spv_not(spv_em *e, uint32_t a) { return SPV(&e->b, SpvOpNot, e->t_u32, a); }

uint32_t spv_var(spv_em *e) { return spvb_local_var(&e->b, e->p_fn_u32); }

uint32_t spv_load(spv_em *e, uint32_t var) { return SPV(&e->b, SpvOpLoad, e->t_u32, var); }

void spv_store(spv_em *e, uint32_t var, uint32_t v) { SPV(&e->b, SpvOpStore, 0, var, v); }

uint32_t spv_key_var(spv_em *e) { return spvb_local_var(&e->b, e->p_fn_key); }

uint32_t spv_key_load(spv_em *e, uint32_t var) { return SPV(&e->b, SpvOpLoad, e->t_key, var); }

uint32_t spv_key_select(spv_em *e, uint32_t cond, uint32_t a, uint32_t b) {
  return SPV(&e->b, SpvOpSelect, e->t_key, cond, a, b);
}

static uint32_t u64_c(spv_em *e, uint64_t v) {
  const uint32_t w[2] = {(uint32_t)v, (uint32_t)(v >> 32)};
  return spvb_constant(&e->b, SpvOpConstant, e->t_u64, w, 2);
}

uint32_t spv_key_zero(spv_em *e) { return e->key_u64 ? u64_c(e, 0) : spv_u32(e, 0); }

void spv_split64(spv_em *e, uint32_t w, uint32_t *lo, uint32_t *hi) {
  *lo = SPV(&e->b, SpvOpUConvert, e->t_u32, w);
  *hi = SPV(&e->b, SpvOpUConvert, e->t_u32,
            SPV(&e->b, SpvOpShiftRightLogical, e->t_u64, w, spv_u32(e, 32)));
}

uint32_t spv_join64(spv_em *e, uint32_t lo, uint32_t hi) {
  const uint32_t l = SPV(&e->b, SpvOpUConvert, e->t_u64, lo);
  if (hi == spv_u32(e, 0))
    return l;
  const uint32_t h = SPV(&e->b, SpvOpShiftLeftLogical, e->t_u64,
                         SPV(&e->b, SpvOpUConvert, e->t_u64, hi), spv_u32(e, 32));
  return SPV(&e->b, SpvOpBitwiseOr, e->t_u64, l, h);
}

static uint32_t op64(spv_em *e, SpvOp op, uint32_t a, uint32_t b) {
  return SPV(&e->b, op, e->t_u64, a, b);
}

static uint32_t and_c(spv_em *e, uint32_t a, uint32_t c) {
  return spv_op(e, SpvOpBitwiseAnd, a, spv_u32(e, c));
}
static uint32_t or_(spv_em *e, uint32_t a, uint32_t b) { return spv_op(e, SpvOpBitwiseOr, a, b); }
static uint32_t shl_c(spv_em *e, uint32_t a, uint32_t c) {
  return c ? spv_op(e, SpvOpShiftLeftLogical, a, spv_u32(e, c)) : a;
}
static uint32_t shr_c(spv_em *e, uint32_t a, uint32_t c) {
  return c ? spv_op(e, SpvOpShiftRightLogical, a, spv_u32(e, c)) : a;
}
static uint32_t eq_c(spv_em *e, uint32_t a, uint32_t c) {
  return spv_cmp(e, SpvOpIEqual, a, spv_u32(e, c));
}
static uint32_t land(spv_em *e, uint32_t a, uint32_t b) {
  return SPV(&e->b, SpvOpLogicalAnd, e->t_bool, a, b);
}
static uint32_t lor(spv_em *e, uint32_t a, uint32_t b) {
  return SPV(&e->b, SpvOpLogicalOr, e->t_bool, a, b);
}
static uint32_t find_umsb(spv_em *e, uint32_t a) {
  const uint32_t glsl = spvb_import(&e->b, "GLSL.std.450");
  return SPV(&e->b, SpvOpExtInst, e->t_u32, glsl, GLSLstd450FindUMsb, a);
}

/* log2 of a power of two. */
static uint32_t log2_u32(uint32_t v) {
  uint32_t n = 0;
  while (v > 1) {
    v >>= 1;
    n++;
  }
  return n;
}

/* A float type's layout, from the data-type table: its width, sign bit,
 * the bits of +infinity (every exponent bit set) and exponent bias. */
static uint32_t float_width(const dmlc_dtype_info *f) { return f->size * 8; }
static uint64_t float_sign(const dmlc_dtype_info *f) { return UINT64_C(1) << (float_width(f) - 1); }
static uint64_t float_inf(const dmlc_dtype_info *f) {
  return ((UINT64_C(1) << f->exponent_bits) - 1) << f->mantissa_bits;
}
static uint32_t float_bias(const dmlc_dtype_info *f) { return (1u << (f->exponent_bits - 1)) - 1; }

/* The access itself, on a pointer to one element. */
static uint32_t access_at(spv_em *e, spv_access kind, uint32_t elem_type, uint32_t ptr,
                          uint32_t value) {
  switch (kind) {
  case SPV_ACCESS_LOAD:
    return SPV(&e->b, SpvOpLoad, elem_type, ptr);
  case SPV_ACCESS_LOAD_U32:
    return SPV(&e->b, SpvOpUConvert, e->t_u32, SPV(&e->b, SpvOpLoad, elem_type, ptr));
  case SPV_ACCESS_STORE:
    SPV(&e->b, SpvOpStore, 0, ptr, value);
    return 0;
  case SPV_ACCESS_ATOMIC_AND:
  case SPV_ACCESS_ATOMIC_OR: {
    const uint32_t scope = spv_u32(e, SpvScopeDevice), relaxed = spv_u32(e, 0);
    const SpvOp op = kind == SPV_ACCESS_ATOMIC_AND ? SpvOpAtomicAnd : SpvOpAtomicOr;
    SPV(&e->b, op, e->t_u32, ptr, scope, relaxed, value);
    return 0;
  }
  case SPV_ACCESS_ATOMIC_ADD: {
    const uint32_t scope = spv_u32(e, SpvScopeDevice);
    const uint32_t sem =
        spv_u32(e, SpvMemorySemanticsAcquireReleaseMask | SpvMemorySemanticsUniformMemoryMask);
    return SPV(&e->b, SpvOpAtomicIAdd, e->t_u32, ptr, scope, sem, value);
  }
  }
  return 0;
}

/* A windowed access without non-uniform indexing: a switch on the window
 * whose every case indexes the array by a constant, which any Vulkan
 * device allows. Invocations of a workgroup mostly agree on the window
 * (windows are large), so the branch is cheap. A load's value comes out
 * of an OpPhi. */
static uint32_t access_by_switch(spv_em *e, const spv_buf *buf, uint32_t ptr_type,
                                 uint32_t elem_type, uint32_t window, uint32_t within,
                                 spv_access kind, uint32_t value) {
  spvb *b = &e->b;
  const uint32_t n = buf->windows;
  uint32_t *labels = calloc(n, sizeof *labels);
  uint32_t *ops = calloc(2 * (size_t)n, sizeof *ops);
  if (!labels || !ops) {
    free(labels);
    free(ops);
    b->failed = true;
    return 0;
  }
  for (uint32_t j = 0; j < n; j++)
    labels[j] = spvb_id(b);
  const uint32_t merge = spvb_id(b);
  SPV(b, SpvOpSelectionMerge, 0, merge, SpvSelectionControlMaskNone);
  /* OpSwitch window, default: the last window; case j: window j. */
  ops[0] = window;
  ops[1] = labels[n - 1];
  for (uint32_t j = 0; j + 1 < n; j++) {
    ops[2 + 2 * j] = j;
    ops[3 + 2 * j] = labels[j];
  }
  spvb_code(b, SpvOpSwitch, 0, ops, 2 * n);
  for (uint32_t j = 0; j < n; j++) {
    spvb_label(b, labels[j]);
    const uint32_t p =
        SPV(b, SpvOpAccessChain, ptr_type, buf->var, spv_u32(e, j), spv_u32(e, 0), within);
    ops[2 * j] = access_at(e, kind, elem_type, p, value);
    ops[2 * j + 1] = labels[j];
    SPV(b, SpvOpBranch, 0, merge);
  }
  spvb_label(b, merge);
  uint32_t result = 0;
  if (kind == SPV_ACCESS_LOAD || kind == SPV_ACCESS_LOAD_U32)
    result = spvb_code(b, SpvOpPhi, kind == SPV_ACCESS_LOAD ? elem_type : e->t_u32, ops, 2 * n);
  free(labels);
  free(ops);
  return result;
}

uint32_t spv_buf_access(spv_em *e, const spv_buf *buf, uint32_t ptr_type, uint32_t elem_type,
                        uint32_t index, spv_access kind, uint32_t value) {
  if (buf->windows <= 1) {
    const uint32_t p = SPV(&e->b, SpvOpAccessChain, ptr_type, buf->var, spv_u32(e, 0), index);
    return access_at(e, kind, elem_type, p, value);
  }
  /* Always a fresh instruction (even for a shift by 0): it may carry a
   * decoration. */
  const uint32_t window = spv_op(e, SpvOpShiftRightLogical, index, spv_u32(e, buf->window_log2));
  const uint32_t within = and_c(e, index, (uint32_t)((UINT64_C(1) << buf->window_log2) - 1));
  if (!e->caps->storage_buffer_array_nonuniform)
    return access_by_switch(e, buf, ptr_type, elem_type, window, within, kind, value);
  const uint32_t p =
      SPV(&e->b, SpvOpAccessChain, ptr_type, buf->var, window, spv_u32(e, 0), within);
  /* Neighbouring invocations may touch different windows: the descriptor
   * index is not dynamically uniform. */
  spvb_decorate(&e->b, window, SpvDecorationNonUniform, NULL, 0);
  spvb_decorate(&e->b, p, SpvDecorationNonUniform, NULL, 0);
  return access_at(e, kind, elem_type, p, value);
}

uint32_t spv_buf_load_window(spv_em *e, const spv_buf *buf, uint32_t ptr_type, uint32_t elem_type,
                             uint32_t window, uint32_t within) {
  const uint32_t p =
      SPV(&e->b, SpvOpAccessChain, ptr_type, buf->var, spv_u32(e, window), spv_u32(e, 0), within);
  return access_at(e, SPV_ACCESS_LOAD, elem_type, p, 0);
}

static uint32_t load_word(spv_em *e, const spv_buf *buf, uint32_t word) {
  return spv_buf_access(e, buf, e->p_sb_u32, e->t_u32, word, SPV_ACCESS_LOAD, 0);
}

static void store_word(spv_em *e, const spv_buf *buf, uint32_t word, uint32_t value) {
  spv_buf_access(e, buf, e->p_sb_u32, e->t_u32, word, SPV_ACCESS_STORE, value);
}

/* ---- loads ---- */

spv_bits spv_load_read(spv_em *e, uint32_t off) {
  const uint32_t size = dmlc_dtype_size(e->k->read_dtype);
  spv_bits r = {0, spv_u32(e, 0), 0};
  if (e->read_elem_type) { /* a native 8/16/64-bit view */
    /* 8/16-bit values are widened where they are loaded: nothing else
     * may take them without shaderInt8/16 (an OpPhi of a switch included). */
    const spv_access kind = size == 8 ? SPV_ACCESS_LOAD : SPV_ACCESS_LOAD_U32;
    const uint32_t v =
        spv_buf_access(e, &e->read, e->read_elem_ptr, e->read_elem_type, off, kind, 0);
    if (size == 8) {
      r.wide = v;
      spv_split64(e, v, &r.lo, &r.hi);
    } else {
      r.lo = v;
    }
    return r;
  }
  if (size == 8) {
    const uint32_t w = shl_c(e, off, 1);
    r.lo = load_word(e, &e->read, w);
    r.hi = load_word(e, &e->read, or_(e, w, spv_u32(e, 1)));
    return r;
  }
  if (size == 4) {
    r.lo = load_word(e, &e->read, off);
    return r;
  }
  const uint32_t per_word_log2 = log2_u32(4 / size);
  const uint32_t word = load_word(e, &e->read, shr_c(e, off, per_word_log2));
  const uint32_t shift = shl_c(e, and_c(e, off, (1u << per_word_log2) - 1), log2_u32(size * 8));
  r.lo = SPV(&e->b, SpvOpBitFieldUExtract, e->t_u32, word, shift, spv_u32(e, size * 8));
  return r;
}

/* ---- keys ---- */

/* Keys map a value's bits onto unsigned integers in the order argmax
 * prefers them (the table's order column); NaN maps to the greatest key,
 * -0 to +0's key. Argmin complements every non-NaN key. */

/* The key of a float at most 32 bits wide (bits b): sign-magnitude to two's
 * complement (-0 and +0 both 0), then the sign bit flipped (complemented
 * for argmin) for the unsigned order; every NaN the greatest key. */
static uint32_t float_key32(spv_em *e, uint32_t b, const dmlc_dtype_info *f, bool complement) {
  const uint32_t width = (uint32_t)float_width(f), sign = (uint32_t)float_sign(f);
  const uint32_t s = width == 32 ? spv_op(e, SpvOpShiftRightArithmetic, b, spv_u32(e, 31))
                                 : SPV(&e->b, SpvOpBitFieldSExtract, e->t_u32, b,
                                       spv_u32(e, width - 1), spv_u32(e, 1));
  const uint32_t mag = and_c(e, b, sign - 1);
  const uint32_t t = spv_op(e, SpvOpISub, spv_op(e, SpvOpBitwiseXor, mag, s), s);
  const uint32_t key =
      spv_op(e, SpvOpBitwiseXor, t, spv_u32(e, complement ? 0x7FFFFFFFu : 0x80000000u));
  const uint32_t is_nan = spv_cmp(e, SpvOpUGreaterThan, mag, spv_u32(e, (uint32_t)float_inf(f)));
  return spv_select(e, is_nan, spv_u32(e, ~0u), key);
}

/* The key of a 64-bit float as (hi, lo) words: the same mapping on pairs. */
static spv_key float_key_pair(spv_em *e, spv_bits raw, const dmlc_dtype_info *f, bool complement) {
  const uint32_t sign = (uint32_t)(float_sign(f) >> 32), inf = (uint32_t)(float_inf(f) >> 32);
  spv_key k;
  const uint32_t ahi = and_c(e, raw.hi, sign - 1);
  const uint32_t is_nan =
      lor(e, spv_cmp(e, SpvOpUGreaterThan, ahi, spv_u32(e, inf)),
          land(e, eq_c(e, ahi, inf), spv_cmp(e, SpvOpINotEqual, raw.lo, spv_u32(e, 0))));
  const uint32_t neg_zero = land(e, eq_c(e, raw.hi, sign), eq_c(e, raw.lo, 0));
  const uint32_t hi = spv_select(e, neg_zero, spv_u32(e, 0), raw.hi);
  const uint32_t neg = spv_cmp(e, SpvOpUGreaterThanEqual, hi, spv_u32(e, sign));
  k.k0 = spv_select(e, neg, spv_not(e, hi), or_(e, hi, spv_u32(e, sign)));
  k.k1 = spv_select(e, neg, spv_not(e, raw.lo), raw.lo);
  if (complement) {
    k.k0 = spv_not(e, k.k0);
    k.k1 = spv_not(e, k.k1);
  }
  k.k0 = spv_select(e, is_nan, spv_u32(e, ~0u), k.k0);
  k.k1 = spv_select(e, is_nan, spv_u32(e, ~0u), k.k1);
  return k;
}

/* The key of an 8-byte element as one 64-bit uint (key_u64). */
static spv_key key_u64(spv_em *e, spv_bits raw, const dmlc_dtype_info *info, bool complement) {
  spv_key k = {0, spv_u32(e, 0)};
  uint32_t x = raw.wide ? raw.wide : spv_join64(e, raw.lo, raw.hi);
  const uint64_t sign = UINT64_C(1) << 63;
  uint32_t is_nan = 0;
  switch (info->order) {
  case DMLC_ORDER_FLOAT: {
    const uint32_t abs = op64(e, SpvOpBitwiseAnd, x, u64_c(e, sign - 1));
    is_nan = spv_cmp(e, SpvOpUGreaterThan, abs, u64_c(e, float_inf(info)));
    x = SPV(&e->b, SpvOpSelect, e->t_u64, spv_cmp(e, SpvOpIEqual, x, u64_c(e, sign)), u64_c(e, 0),
            x);
    const uint32_t neg = spv_cmp(e, SpvOpUGreaterThanEqual, x, u64_c(e, sign));
    k.k0 = SPV(&e->b, SpvOpSelect, e->t_u64, neg, SPV(&e->b, SpvOpNot, e->t_u64, x),
               op64(e, SpvOpBitwiseOr, x, u64_c(e, sign)));
    break;
  }
  case DMLC_ORDER_SIGNED:
    k.k0 = op64(e, SpvOpBitwiseXor, x, u64_c(e, sign));
    break;
  case DMLC_ORDER_UNSIGNED:
    k.k0 = x;
    break;
  }
  if (complement)
    k.k0 = SPV(&e->b, SpvOpNot, e->t_u64, k.k0);
  if (is_nan)
    k.k0 = SPV(&e->b, SpvOpSelect, e->t_u64, is_nan, u64_c(e, ~UINT64_C(0)), k.k0);
  return k;
}

/* The key of an integer or bool element, in one word or (hi, lo) words. */
static spv_key int_key(spv_em *e, spv_bits raw, const dmlc_dtype_info *info, bool complement) {
  spv_key k = {0, spv_u32(e, 0)};
  const bool is_signed = info->order == DMLC_ORDER_SIGNED;
  if (info->kind == DMLC_KIND_BOOL) { /* any nonzero byte is true; no key is 0 */
    k.k0 = spv_select(e, spv_cmp(e, SpvOpINotEqual, raw.lo, spv_u32(e, 0)), spv_u32(e, 2),
                      spv_u32(e, 1));
  } else if (info->size == 8) {
    k.k0 = is_signed ? spv_op(e, SpvOpBitwiseXor, raw.hi, spv_u32(e, 1u << 31)) : raw.hi;
    k.k1 = raw.lo;
  } else if (is_signed) {
    uint32_t v = raw.lo;
    if (info->size < 4)
      v = SPV(&e->b, SpvOpBitFieldSExtract, e->t_u32, v, spv_u32(e, 0), spv_u32(e, info->size * 8));
    k.k0 = spv_op(e, SpvOpBitwiseXor, v, spv_u32(e, 1u << 31));
  } else if (info->size < 4 && !complement) {
    /* a bit above the value's: no key is 0 (spv_scan_better) */
    k.k0 = or_(e, raw.lo, spv_u32(e, 1u << (info->size * 8)));
  } else {
    k.k0 = raw.lo;
  }
  if (complement) {
    k.k0 = spv_not(e, k.k0);
    if (info->size == 8)
      k.k1 = spv_not(e, k.k1);
  }
  return k;
}

spv_key spv_key_of(spv_em *e, spv_bits raw) {
  const dmlc_dtype_info *info = dmlc_dtype_get(e->k->read_dtype);
  const bool complement = e->k->reduction == DMLC_OP_ARGMIN;
  if (e->key_u64)
    return key_u64(e, raw, info, complement);
  if (info->order != DMLC_ORDER_FLOAT)
    return int_key(e, raw, info, complement);
  if (info->size == 8)
    return float_key_pair(e, raw, info, complement);
  return (spv_key){float_key32(e, raw.lo, info, complement), spv_u32(e, 0)};
}

uint32_t spv_better(spv_em *e, spv_key ak, uint32_t ai, spv_key bk, uint32_t bi) {
  /* 64-bit keys compare with 64-bit instructions when key_u64 (k0 is then
   * a 64-bit uint). */
  uint32_t gt = spv_cmp(e, SpvOpUGreaterThan, bk.k0, ak.k0);
  uint32_t eq = spv_cmp(e, SpvOpIEqual, bk.k0, ak.k0);
  if (e->key64) {
    gt = lor(e, gt, land(e, eq, spv_cmp(e, SpvOpUGreaterThan, bk.k1, ak.k1)));
    eq = land(e, eq, spv_cmp(e, SpvOpIEqual, bk.k1, ak.k1));
  }
  const SpvOp prefer =
      e->k->direction == DMLC_DIRECTION_INCREASING ? SpvOpULessThan : SpvOpUGreaterThan;
  return lor(e, gt, land(e, eq, spv_cmp(e, prefer, bi, ai)));
}

/* Whether no element's key is 0 (the identity's key): floats (every NaN
 * maps to the greatest key, -inf's key is above 0), and narrow integers
 * (their keys carry a bit above the value, or are complemented). */
static bool keys_above_zero(const spv_em *e) {
  const dmlc_dtype_info *info = dmlc_dtype_get(e->k->read_dtype);
  return info->order == DMLC_ORDER_FLOAT || info->kind == DMLC_KIND_BOOL || info->size < 4;
}

bool spv_scan_ok(const spv_em *e) {
  return !e->key64 && (e->k->direction != DMLC_DIRECTION_INCREASING || keys_above_zero(e));
}

uint32_t spv_scan_better(spv_em *e, spv_key ak, spv_key bk) {
  /* Lowest index on ties: only a greater key replaces (the identity's key
   * is below every element's); highest: an equal one does too. */
  return spv_cmp(
      e, e->k->direction == DMLC_DIRECTION_INCREASING ? SpvOpUGreaterThan : SpvOpUGreaterThanEqual,
      bk.k0, ak.k0);
}

/* ---- stores ---- */

void spv_store_out(spv_em *e, uint32_t i, uint32_t off, spv_bits v) {
  const spv_out *o = &e->outs[i];
  const uint32_t size = dmlc_dtype_size(e->k->outputs[i].dtype);
  switch (o->mode) {
  case SPV_STORE_WORDS:
    if (size == 8) {
      const uint32_t w = shl_c(e, off, 1);
      store_word(e, &o->buf, w, v.lo);
      store_word(e, &o->buf, or_(e, w, spv_u32(e, 1)), v.hi);
    } else {
      store_word(e, &o->buf, off, v.lo);
    }
    return;
  case SPV_STORE_U64: {
    const uint32_t x = v.wide ? v.wide : spv_join64(e, v.lo, v.hi);
    spv_buf_access(e, &o->buf, o->elem_ptr, o->elem_type, off, SPV_ACCESS_STORE, x);
    return;
  }
  case SPV_STORE_TYPED: {
    const uint32_t x = SPV(&e->b, SpvOpUConvert, o->elem_type, v.lo);
    spv_buf_access(e, &o->buf, o->elem_ptr, o->elem_type, off, SPV_ACCESS_STORE, x);
    return;
  }
  case SPV_STORE_ATOMIC: {
    /* Each element has one writer, so clearing its bits and then setting
     * them leaves the word's other elements (and their writers) alone. */
    const uint32_t log2 = log2_u32(4 / size), mask = (1u << (size * 8)) - 1;
    const uint32_t word = shr_c(e, off, log2);
    const uint32_t shift = shl_c(e, and_c(e, off, (1u << log2) - 1), log2_u32(size * 8));
    const uint32_t clear = spv_not(e, spv_op(e, SpvOpShiftLeftLogical, spv_u32(e, mask), shift));
    spv_buf_access(e, &o->buf, e->p_sb_u32, e->t_u32, word, SPV_ACCESS_ATOMIC_AND, clear);
    const uint32_t set = spv_op(e, SpvOpShiftLeftLogical, and_c(e, v.lo, mask), shift);
    spv_buf_access(e, &o->buf, e->p_sb_u32, e->t_u32, word, SPV_ACCESS_ATOMIC_OR, set);
    return;
  }
  }
}

spv_bits spv_const_bits(spv_em *e, dmlc_dtype dtype, int64_t value) {
  const uint64_t b = dmlc_dtype_bits_from_i64(dtype, value);
  return (spv_bits){spv_u32(e, (uint32_t)b), spv_u32(e, (uint32_t)(b >> 32)), 0};
}

spv_bits spv_index_bits(spv_em *e, uint32_t idx) { return (spv_bits){idx, spv_u32(e, 0), 0}; }

/* ---- COPY conversions ---- */

static bool is_int(dmlc_dtype d) { return dmlc_dtype_is_integer(d); }

bool spv_copy_supported(dmlc_dtype from, dmlc_dtype to) {
  const dmlc_kind fk = dmlc_dtype_get(from)->kind, tk = dmlc_dtype_get(to)->kind;
  const uint32_t fs = dmlc_dtype_size(from);
  if (from == to || fk == DMLC_KIND_BOOL || tk == DMLC_KIND_BOOL)
    return true;
  if (is_int(from) && is_int(to))
    return true;
  if (fk == DMLC_KIND_FLOAT && tk == DMLC_KIND_FLOAT) /* exact widenings only */
    return dmlc_dtype_size(to) > fs;
  if (is_int(from) && tk == DMLC_KIND_FLOAT) /* integers every value of which is exact */
    return fs * 8 <= dmlc_dtype_get(to)->mantissa_bits + 1;
  return false; /* float -> integer and rounding conversions */
}

/* Whether the element (zero-extended bits) is not zero; NaN is not zero and
 * -0.0 is. */
static uint32_t nonzero(spv_em *e, spv_bits raw, dmlc_dtype from) {
  const dmlc_dtype_info *info = dmlc_dtype_get(from);
  const bool is_float = info->kind == DMLC_KIND_FLOAT;
  if (info->size == 8) { /* a float's sign is the high word's top bit */
    const uint32_t hi = is_float ? and_c(e, raw.hi, 0x7fffffffu) : raw.hi;
    return spv_cmp(e, SpvOpINotEqual, or_(e, raw.lo, hi), spv_u32(e, 0));
  }
  const uint32_t lo = is_float ? and_c(e, raw.lo, (uint32_t)float_sign(info) - 1) : raw.lo;
  return spv_cmp(e, SpvOpINotEqual, lo, spv_u32(e, 0));
}

/* Sign-extends or zero-extends an integer element to 64 bits. */
static spv_bits int_extend(spv_em *e, spv_bits raw, dmlc_dtype from) {
  const uint32_t size = dmlc_dtype_size(from);
  if (size == 8)
    return raw;
  if (dmlc_dtype_get(from)->kind != DMLC_KIND_SIGNED)
    return (spv_bits){raw.lo, spv_u32(e, 0), 0};
  uint32_t lo = raw.lo;
  if (size < 4)
    lo = SPV(&e->b, SpvOpBitFieldSExtract, e->t_u32, lo, spv_u32(e, 0), spv_u32(e, size * 8));
  return (spv_bits){lo, SPV(&e->b, SpvOpShiftRightArithmetic, e->t_u32, lo, spv_u32(e, 31)), 0};
}

static uint32_t shl_v(spv_em *e, uint32_t a, uint32_t n) {
  return spv_op(e, SpvOpShiftLeftLogical, a, n);
}
static uint32_t sub_(spv_em *e, uint32_t a, uint32_t b) { return spv_op(e, SpvOpISub, a, b); }
static uint32_t add_c(spv_em *e, uint32_t a, uint32_t c) {
  return spv_op(e, SpvOpIAdd, a, spv_u32(e, c));
}

/* A float at most 32 bits wide (bits x) widened exactly to the wider float
 * type t: the exponent re-biased, subnormals normalized, the fraction
 * moved to t's top fraction bits. NaNs come out quiet, as the reference's
 * (and the CPU's) conversions make them. */
static spv_bits float_widen(spv_em *e, uint32_t x, const dmlc_dtype_info *f,
                            const dmlc_dtype_info *t) {
  const uint32_t fm = f->mantissa_bits, tm = t->mantissa_bits;
  const uint32_t f_emax = (1u << f->exponent_bits) - 1, t_emax = (1u << t->exponent_bits) - 1;
  const uint32_t rebias = float_bias(t) - float_bias(f), frac_mask = (1u << fm) - 1;
  const uint32_t s = and_c(e, x, (uint32_t)float_sign(f));
  const uint32_t ex = and_c(e, shr_c(e, x, fm), f_emax), m = and_c(e, x, frac_mask);
  const uint32_t msb = find_umsb(e, m);
  const uint32_t ex0 = eq_c(e, ex, 0), m0 = eq_c(e, m, 0);
  /* A subnormal m * 2^(1 - bias - fm) is 1.frac * 2^(msb + 1 - bias - fm). */
  uint32_t big_e = spv_select(e, eq_c(e, ex, f_emax), spv_u32(e, t_emax), add_c(e, ex, rebias));
  big_e =
      spv_select(e, ex0, spv_select(e, m0, spv_u32(e, 0), add_c(e, msb, rebias + 1 - fm)), big_e);
  const uint32_t sub_frac = and_c(e, shl_v(e, m, sub_(e, spv_u32(e, fm), msb)), frac_mask);
  const uint32_t is_nan =
      land(e, eq_c(e, ex, f_emax), spv_cmp(e, SpvOpINotEqual, m, spv_u32(e, 0)));
  uint32_t frac = spv_select(e, ex0, spv_select(e, m0, spv_u32(e, 0), sub_frac), m);
  frac = spv_select(e, is_nan, or_(e, frac, spv_u32(e, 1u << (fm - 1))), frac);
  /* t's bits: sign, then the exponent at bit tm, then frac << (tm - fm),
   * split into (hi, lo) words when t is 64 bits wide. */
  const uint32_t tw = float_width(t), fw = float_width(f), up = tm - fm;
  if (tw <= 32) {
    const uint32_t r =
        or_(e, or_(e, shl_c(e, s, tw - fw), shl_c(e, big_e, tm)), shl_c(e, frac, up));
    return (spv_bits){r, spv_u32(e, 0), 0};
  }
  const uint32_t hi = or_(e, or_(e, shl_c(e, s, tw - 32 - fw), shl_c(e, big_e, tm - 32)),
                          up >= 32 ? shl_c(e, frac, up - 32) : shr_c(e, frac, 32 - up));
  return (spv_bits){up >= 32 ? spv_u32(e, 0) : shl_c(e, frac, up), hi, 0};
}

/* An integer whose every value is exact in float type to (see
 * spv_copy_supported): sign and magnitude, then the fields built directly. */
static spv_bits int_to_float(spv_em *e, spv_bits raw, dmlc_dtype from, dmlc_dtype to) {
  const dmlc_dtype_info *t = dmlc_dtype_get(to);
  const spv_bits v = int_extend(e, raw, from);
  const uint32_t neg = dmlc_dtype_get(from)->kind == DMLC_KIND_SIGNED
                           ? spv_cmp(e, SpvOpUGreaterThanEqual, v.hi, spv_u32(e, 0x80000000u))
                           : spv_bool(e, false);
  const uint32_t mag = spv_select(e, neg, SPV(&e->b, SpvOpSNegate, e->t_u32, v.lo), v.lo);
  const uint32_t is0 = eq_c(e, mag, 0);
  const uint32_t msb = find_umsb(e, mag);
  const uint32_t frac = spv_op(e, SpvOpBitwiseXor, mag, shl_v(e, spv_u32(e, 1), msb));
  const uint32_t mbits = t->mantissa_bits, bias = float_bias(t);
  if (t->size == 8) {
    /* The fraction's top (mbits - 32) bits go to the high word, the rest
     * (when msb exceeds them) to the low word. */
    const uint32_t hi_bits = mbits - 32;
    const uint32_t ge = spv_cmp(e, SpvOpUGreaterThanEqual, msb, spv_u32(e, hi_bits));
    const uint32_t hi_frac = spv_select(
        e, ge,
        spv_op(e, SpvOpShiftRightLogical, frac, add_c(e, msb, (uint32_t) - (int32_t)hi_bits)),
        shl_v(e, frac, sub_(e, spv_u32(e, hi_bits), msb)));
    const uint32_t gt = spv_cmp(e, SpvOpUGreaterThan, msb, spv_u32(e, hi_bits));
    const uint32_t lo =
        spv_select(e, gt, shl_v(e, frac, sub_(e, spv_u32(e, mbits), msb)), spv_u32(e, 0));
    uint32_t hi = or_(e, shl_c(e, add_c(e, msb, bias), hi_bits), hi_frac);
    hi = or_(e, hi, spv_select(e, neg, spv_u32(e, 0x80000000u), spv_u32(e, 0)));
    return (spv_bits){spv_select(e, is0, spv_u32(e, 0), lo), spv_select(e, is0, spv_u32(e, 0), hi),
                      0};
  }
  const uint32_t sign = (uint32_t)float_sign(t);
  uint32_t r =
      or_(e, shl_c(e, add_c(e, msb, bias), mbits), shl_v(e, frac, sub_(e, spv_u32(e, mbits), msb)));
  r = or_(e, r, spv_select(e, neg, spv_u32(e, sign), spv_u32(e, 0)));
  return (spv_bits){spv_select(e, is0, spv_u32(e, 0), r), spv_u32(e, 0), 0};
}

spv_bits spv_convert(spv_em *e, spv_bits raw, dmlc_dtype from, dmlc_dtype to) {
  const dmlc_kind fk = dmlc_dtype_get(from)->kind, tk = dmlc_dtype_get(to)->kind;
  if (from == to && fk != DMLC_KIND_BOOL)
    return raw;
  if (fk == DMLC_KIND_BOOL || tk == DMLC_KIND_BOOL) {
    const uint32_t nz = nonzero(e, raw, from);
    const spv_bits one = spv_const_bits(e, to, 1), zero = {spv_u32(e, 0), spv_u32(e, 0), 0};
    return (spv_bits){spv_select(e, nz, one.lo, zero.lo), spv_select(e, nz, one.hi, zero.hi), 0};
  }
  if (is_int(from) && is_int(to))
    return int_extend(e, raw, from); /* the store keeps the low bytes: wraps */
  if (is_int(from))
    return int_to_float(e, raw, from, to);
  /* The float widenings (spv_copy_supported admits no other float pair). */
  return float_widen(e, raw.lo, dmlc_dtype_get(from), dmlc_dtype_get(to));
}
