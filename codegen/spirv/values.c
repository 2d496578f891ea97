/* Element-level code for the SPIR-V kernels: scalar helpers, unpacking
 * loads from 32-bit words, the integer-mapped order keys of argmax/argmin,
 * stores in every data type, and the exact COPY conversions. Keys and
 * conversions work on bit patterns with integer instructions only, so no
 * result depends on the device's float controls (denormal flushing, signed
 * zero, NaN handling) or on its optional 8/16/64-bit arithmetic. */
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

static uint32_t word_ptr(spv_em *e, uint32_t var, uint32_t word) {
  return SPV(&e->b, SpvOpAccessChain, e->p_sb_u32, var, spv_u32(e, 0), word);
}

/* ---- loads ---- */

spv_bits spv_load_read(spv_em *e, uint32_t off) {
  const uint32_t size = dmlc_dtype_size(e->k->read_dtype);
  spv_bits r = {0, spv_u32(e, 0), 0};
  if (e->read_elem_type) { /* a native 8/16/64-bit view */
    const uint32_t p =
        SPV(&e->b, SpvOpAccessChain, e->read_elem_ptr, e->read_var, spv_u32(e, 0), off);
    const uint32_t v = SPV(&e->b, SpvOpLoad, e->read_elem_type, p);
    if (size == 8) {
      r.wide = v;
      spv_split64(e, v, &r.lo, &r.hi);
    } else {
      r.lo = SPV(&e->b, SpvOpUConvert, e->t_u32, v);
    }
    return r;
  }
  if (size == 8) {
    const uint32_t w = shl_c(e, off, 1);
    r.lo = spv_load(e, word_ptr(e, e->read_var, w));
    r.hi = spv_load(e, word_ptr(e, e->read_var, or_(e, w, spv_u32(e, 1))));
    return r;
  }
  if (size == 4) {
    r.lo = spv_load(e, word_ptr(e, e->read_var, off));
    return r;
  }
  const uint32_t per_word_log2 = size == 1 ? 2 : 1;
  const uint32_t word = spv_load(e, word_ptr(e, e->read_var, shr_c(e, off, per_word_log2)));
  const uint32_t shift = shl_c(e, and_c(e, off, (1u << per_word_log2) - 1), size == 1 ? 3 : 4);
  r.lo = SPV(&e->b, SpvOpBitFieldUExtract, e->t_u32, word, shift, spv_u32(e, size * 8));
  return r;
}

/* ---- keys ---- */

/* IEEE bits b of a float whose sign is bit (bits-1): NaN -> nan_key; -0 ->
 * +0; otherwise the sign-magnitude order mapped onto unsigned order. */
static uint32_t float_key32(spv_em *e, uint32_t b, uint32_t bits, bool complement) {
  const uint32_t sign = 1u << (bits - 1), all = bits == 32 ? ~0u : (1u << bits) - 1;
  const uint32_t inf = bits == 32 ? 0x7f800000u : 0x7c00u;
  const uint32_t is_nan = spv_cmp(e, SpvOpUGreaterThan, and_c(e, b, all ^ sign), spv_u32(e, inf));
  b = spv_select(e, eq_c(e, b, sign), spv_u32(e, 0), b);
  const uint32_t neg = spv_cmp(e, SpvOpUGreaterThanEqual, b, spv_u32(e, sign));
  uint32_t key = spv_select(e, neg, spv_op(e, SpvOpBitwiseXor, b, spv_u32(e, all)),
                            or_(e, b, spv_u32(e, sign)));
  if (complement)
    key = spv_not(e, key);
  return spv_select(e, is_nan, spv_u32(e, ~0u), key);
}

spv_key spv_key_of(spv_em *e, spv_bits raw) {
  const dmlc_dtype dt = e->k->read_dtype;
  const dmlc_dtype_info *info = dmlc_dtype_get(dt);
  const bool complement = e->k->reduction == DMLC_OP_ARGMIN;
  spv_key k = {0, spv_u32(e, 0)};
  if (e->key_u64) {
    uint32_t x = raw.wide ? raw.wide : spv_join64(e, raw.lo, raw.hi);
    const uint64_t sign = UINT64_C(1) << 63;
    uint32_t is_nan = 0;
    if (dt == DMLC_DTYPE_F64) {
      const uint32_t abs = op64(e, SpvOpBitwiseAnd, x, u64_c(e, sign - 1));
      is_nan = spv_cmp(e, SpvOpUGreaterThan, abs, u64_c(e, UINT64_C(0x7ff0000000000000)));
      x = SPV(&e->b, SpvOpSelect, e->t_u64, spv_cmp(e, SpvOpIEqual, x, u64_c(e, sign)), u64_c(e, 0),
              x);
      const uint32_t neg = spv_cmp(e, SpvOpUGreaterThanEqual, x, u64_c(e, sign));
      k.k0 = SPV(&e->b, SpvOpSelect, e->t_u64, neg, SPV(&e->b, SpvOpNot, e->t_u64, x),
                 op64(e, SpvOpBitwiseOr, x, u64_c(e, sign)));
    } else if (info->kind == DMLC_KIND_SIGNED) {
      k.k0 = op64(e, SpvOpBitwiseXor, x, u64_c(e, sign));
    } else {
      k.k0 = x;
    }
    if (complement)
      k.k0 = SPV(&e->b, SpvOpNot, e->t_u64, k.k0);
    if (is_nan)
      k.k0 = SPV(&e->b, SpvOpSelect, e->t_u64, is_nan, u64_c(e, ~UINT64_C(0)), k.k0);
    return k;
  }
  if (dt == DMLC_DTYPE_F16 || dt == DMLC_DTYPE_F32)
    return (spv_key){float_key32(e, raw.lo, info->size * 8, complement), k.k1};
  if (dt == DMLC_DTYPE_F64) {
    const uint32_t ahi = and_c(e, raw.hi, 0x7fffffffu);
    const uint32_t is_nan =
        lor(e, spv_cmp(e, SpvOpUGreaterThan, ahi, spv_u32(e, 0x7ff00000u)),
            land(e, eq_c(e, ahi, 0x7ff00000u), spv_cmp(e, SpvOpINotEqual, raw.lo, spv_u32(e, 0))));
    const uint32_t neg_zero = land(e, eq_c(e, raw.hi, 0x80000000u), eq_c(e, raw.lo, 0));
    const uint32_t hi = spv_select(e, neg_zero, spv_u32(e, 0), raw.hi);
    const uint32_t neg = spv_cmp(e, SpvOpUGreaterThanEqual, hi, spv_u32(e, 0x80000000u));
    k.k0 = spv_select(e, neg, spv_not(e, hi), or_(e, hi, spv_u32(e, 0x80000000u)));
    k.k1 = spv_select(e, neg, spv_not(e, raw.lo), raw.lo);
    if (complement) {
      k.k0 = spv_not(e, k.k0);
      k.k1 = spv_not(e, k.k1);
    }
    k.k0 = spv_select(e, is_nan, spv_u32(e, ~0u), k.k0);
    k.k1 = spv_select(e, is_nan, spv_u32(e, ~0u), k.k1);
    return k;
  }
  if (info->kind == DMLC_KIND_BOOL) {
    k.k0 = spv_select(e, spv_cmp(e, SpvOpINotEqual, raw.lo, spv_u32(e, 0)), spv_u32(e, 1),
                      spv_u32(e, 0));
  } else if (info->size == 8) {
    k.k0 = info->kind == DMLC_KIND_SIGNED ? spv_op(e, SpvOpBitwiseXor, raw.hi, spv_u32(e, 1u << 31))
                                          : raw.hi;
    k.k1 = raw.lo;
  } else if (info->kind == DMLC_KIND_SIGNED) {
    uint32_t v = raw.lo;
    if (info->size < 4)
      v = SPV(&e->b, SpvOpBitFieldSExtract, e->t_u32, v, spv_u32(e, 0), spv_u32(e, info->size * 8));
    k.k0 = spv_op(e, SpvOpBitwiseXor, v, spv_u32(e, 1u << 31));
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

/* ---- stores ---- */

void spv_store_out(spv_em *e, uint32_t i, uint32_t off, spv_bits v) {
  const spv_out *o = &e->outs[i];
  const uint32_t size = dmlc_dtype_size(e->k->outputs[i].dtype);
  switch (o->mode) {
  case SPV_STORE_WORDS:
    if (size == 8) {
      const uint32_t w = shl_c(e, off, 1);
      spv_store(e, word_ptr(e, o->var, w), v.lo);
      spv_store(e, word_ptr(e, o->var, or_(e, w, spv_u32(e, 1))), v.hi);
    } else {
      spv_store(e, word_ptr(e, o->var, off), v.lo);
    }
    return;
  case SPV_STORE_U64: {
    const uint32_t p = SPV(&e->b, SpvOpAccessChain, o->elem_ptr, o->var, spv_u32(e, 0), off);
    spv_store(e, p, v.wide ? v.wide : spv_join64(e, v.lo, v.hi));
    return;
  }
  case SPV_STORE_TYPED: {
    const uint32_t p = SPV(&e->b, SpvOpAccessChain, o->elem_ptr, o->var, spv_u32(e, 0), off);
    SPV(&e->b, SpvOpStore, 0, p, SPV(&e->b, SpvOpUConvert, o->elem_type, v.lo));
    return;
  }
  case SPV_STORE_ATOMIC: {
    /* Each element has one writer, so clearing its bits and then setting
     * them leaves the word's other elements (and their writers) alone. */
    const uint32_t log2 = size == 1 ? 2 : 1, mask = size == 1 ? 0xffu : 0xffffu;
    const uint32_t p = word_ptr(e, o->var, shr_c(e, off, log2));
    const uint32_t shift = shl_c(e, and_c(e, off, (1u << log2) - 1), size == 1 ? 3 : 4);
    const uint32_t scope = spv_u32(e, SpvScopeDevice), relaxed = spv_u32(e, 0);
    const uint32_t clear = spv_not(e, spv_op(e, SpvOpShiftLeftLogical, spv_u32(e, mask), shift));
    SPV(&e->b, SpvOpAtomicAnd, e->t_u32, p, scope, relaxed, clear);
    const uint32_t set = spv_op(e, SpvOpShiftLeftLogical, and_c(e, v.lo, mask), shift);
    SPV(&e->b, SpvOpAtomicOr, e->t_u32, p, scope, relaxed, set);
    return;
  }
  }
}

static uint64_t const_bits64(dmlc_dtype dtype, int64_t value) {
  switch (dtype) {
  case DMLC_DTYPE_BOOL:
    return value != 0;
  case DMLC_DTYPE_F16:
    /* (float)value is exact below 2^24 and rounds to inf in f16 above it. */
    return dmlc_f32_to_f16((float)value);
  case DMLC_DTYPE_F32: {
    const float f = (float)value;
    uint32_t b;
    memcpy(&b, &f, sizeof b);
    return b;
  }
  case DMLC_DTYPE_F64: {
    const double d = (double)value;
    uint64_t b;
    memcpy(&b, &d, sizeof b);
    return b;
  }
  default: {
    const uint32_t size = dmlc_dtype_size(dtype);
    const uint64_t u = (uint64_t)value;
    return size == 8 ? u : u & ((UINT64_C(1) << (size * 8)) - 1);
  }
  }
}

spv_bits spv_const_bits(spv_em *e, dmlc_dtype dtype, int64_t value) {
  const uint64_t b = const_bits64(dtype, value);
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
  if (is_int(from) && tk == DMLC_KIND_FLOAT) { /* integers every value of which is exact */
    const uint32_t mant = to == DMLC_DTYPE_F16 ? 11 : to == DMLC_DTYPE_F32 ? 24 : 53;
    return fs * 8 <= mant;
  }
  return false; /* float -> integer and rounding conversions */
}

/* Whether the element (zero-extended bits) is not zero; NaN is not zero and
 * -0.0 is. */
static uint32_t nonzero(spv_em *e, spv_bits raw, dmlc_dtype from) {
  uint32_t lo = raw.lo;
  if (from == DMLC_DTYPE_F16)
    lo = and_c(e, lo, 0x7fffu);
  else if (from == DMLC_DTYPE_F32)
    lo = and_c(e, lo, 0x7fffffffu);
  uint32_t any = lo;
  if (from == DMLC_DTYPE_F64)
    any = or_(e, lo, and_c(e, raw.hi, 0x7fffffffu));
  else if (dmlc_dtype_size(from) == 8)
    any = or_(e, lo, raw.hi);
  return spv_cmp(e, SpvOpINotEqual, any, spv_u32(e, 0));
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

/* A float's (biased exponent, fraction) brought to binary32 terms, exact:
 * binary16 widens to binary32 (subnormals normalized). Returns bits. */
static uint32_t f16_to_f32(spv_em *e, uint32_t h) {
  const uint32_t s = shl_c(e, and_c(e, h, 0x8000u), 16);
  const uint32_t ex = and_c(e, shr_c(e, h, 10), 0x1fu), m = and_c(e, h, 0x3ffu);
  const uint32_t normal = or_(e, shl_c(e, add_c(e, ex, 112), 23), shl_c(e, m, 13));
  /* NaNs come out quiet, as the reference's (and the CPU's) conversions
   * make them. */
  const uint32_t quiet = spv_select(e, eq_c(e, m, 0), spv_u32(e, 0), spv_u32(e, 0x400000u));
  const uint32_t special = or_(e, spv_u32(e, 0x7f800000u), or_(e, shl_c(e, m, 13), quiet));
  const uint32_t msb = find_umsb(e, m);
  const uint32_t sub_frac = and_c(e, shl_v(e, m, sub_(e, spv_u32(e, 10), msb)), 0x3ffu);
  const uint32_t sub = or_(e, shl_c(e, add_c(e, msb, 103), 23), shl_c(e, sub_frac, 13));
  const uint32_t ex0 = eq_c(e, ex, 0);
  uint32_t r = spv_select(e, eq_c(e, ex, 31), special, normal);
  r = spv_select(e, ex0, spv_select(e, eq_c(e, m, 0), spv_u32(e, 0), sub), r);
  return or_(e, s, r);
}

static spv_bits f32_to_f64(spv_em *e, uint32_t f) {
  const uint32_t s = and_c(e, f, 0x80000000u);
  const uint32_t ex = and_c(e, shr_c(e, f, 23), 0xffu), m = and_c(e, f, 0x7fffffu);
  const uint32_t msb = find_umsb(e, m);
  const uint32_t ex0 = eq_c(e, ex, 0), m0 = eq_c(e, m, 0);
  uint32_t big_e = spv_select(e, eq_c(e, ex, 0xff), spv_u32(e, 0x7ff), add_c(e, ex, 896));
  big_e = spv_select(e, ex0, spv_select(e, m0, spv_u32(e, 0), add_c(e, msb, 874)), big_e);
  const uint32_t sub_frac = and_c(e, shl_v(e, m, sub_(e, spv_u32(e, 23), msb)), 0x7fffffu);
  const uint32_t is_nan = land(e, eq_c(e, ex, 0xff), spv_cmp(e, SpvOpINotEqual, m, spv_u32(e, 0)));
  uint32_t frac = spv_select(e, ex0, spv_select(e, m0, spv_u32(e, 0), sub_frac), m);
  frac = spv_select(e, is_nan, or_(e, frac, spv_u32(e, 0x400000u)), frac); /* quiet, as above */
  const uint32_t hi = or_(e, or_(e, s, shl_c(e, big_e, 20)), shr_c(e, frac, 3));
  return (spv_bits){shl_c(e, frac, 29), hi, 0};
}

/* An integer whose every value is exact in float type to (see
 * spv_copy_supported): sign and magnitude, then the fields built directly. */
static spv_bits int_to_float(spv_em *e, spv_bits raw, dmlc_dtype from, dmlc_dtype to) {
  const spv_bits v = int_extend(e, raw, from);
  const uint32_t neg = dmlc_dtype_get(from)->kind == DMLC_KIND_SIGNED
                           ? spv_cmp(e, SpvOpUGreaterThanEqual, v.hi, spv_u32(e, 0x80000000u))
                           : spv_bool(e, false);
  const uint32_t mag = spv_select(e, neg, SPV(&e->b, SpvOpSNegate, e->t_u32, v.lo), v.lo);
  const uint32_t is0 = eq_c(e, mag, 0);
  const uint32_t msb = find_umsb(e, mag);
  const uint32_t frac = spv_op(e, SpvOpBitwiseXor, mag, shl_v(e, spv_u32(e, 1), msb));
  if (to == DMLC_DTYPE_F64) {
    const uint32_t ge20 = spv_cmp(e, SpvOpUGreaterThanEqual, msb, spv_u32(e, 20));
    const uint32_t hi_frac =
        spv_select(e, ge20, spv_op(e, SpvOpShiftRightLogical, frac, add_c(e, msb, (uint32_t)-20)),
                   shl_v(e, frac, sub_(e, spv_u32(e, 20), msb)));
    const uint32_t gt20 = spv_cmp(e, SpvOpUGreaterThan, msb, spv_u32(e, 20));
    const uint32_t lo =
        spv_select(e, gt20, shl_v(e, frac, sub_(e, spv_u32(e, 52), msb)), spv_u32(e, 0));
    uint32_t hi = or_(e, shl_c(e, add_c(e, msb, 1023), 20), hi_frac);
    hi = or_(e, hi, spv_select(e, neg, spv_u32(e, 0x80000000u), spv_u32(e, 0)));
    return (spv_bits){spv_select(e, is0, spv_u32(e, 0), lo), spv_select(e, is0, spv_u32(e, 0), hi),
                      0};
  }
  const uint32_t mbits = to == DMLC_DTYPE_F16 ? 10 : 23, bias = to == DMLC_DTYPE_F16 ? 15 : 127;
  const uint32_t sign = to == DMLC_DTYPE_F16 ? 0x8000u : 0x80000000u;
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
  /* Float widenings. */
  const uint32_t f32 = from == DMLC_DTYPE_F16 ? f16_to_f32(e, raw.lo) : raw.lo;
  if (to == DMLC_DTYPE_F32)
    return (spv_bits){f32, spv_u32(e, 0), 0};
  return f32_to_f64(e, f32);
}
