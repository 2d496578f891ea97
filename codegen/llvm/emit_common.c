/* Building blocks of the kernel emitter: types, memory, loops, the
 * argmax/argmin order and the cast op's conversions, on scalars and vectors
 * alike (every builder call here is lane-polymorphic). */
#include <string.h>

#include "codegen/llvm/emit_internal.h"

/* ---- types and constants ---- */

/* The LLVM type spelled `spelling`: the integer of the element's width or
 * one of LLVM's float types, matched by its printed name. */
static LLVMTypeRef type_spelled(emit_ctx *e, const char *spelling, uint32_t size) {
  LLVMTypeRef candidates[] = {LLVMIntTypeInContext(e->c, size * 8), e->f16, e->f32, e->f64};
  for (size_t i = 0; i < sizeof candidates / sizeof candidates[0]; i++) {
    char *name = LLVMPrintTypeToString(candidates[i]);
    const bool match = strcmp(name, spelling) == 0;
    LLVMDisposeMessage(name);
    if (match)
      return candidates[i];
  }
  return NULL;
}

bool ec_init_dtype_types(emit_ctx *e) {
  for (int d = 0; d < DMLC_DTYPE_COUNT; d++) {
    const dmlc_dtype_info *info = dmlc_dtype_get((dmlc_dtype)d);
    e->dtype_types[d] = type_spelled(e, info->llvm, info->size);
    if (!e->dtype_types[d])
      return false;
  }
  return true;
}

LLVMTypeRef ec_store_type(emit_ctx *e, dmlc_dtype dt) { return e->dtype_types[dt]; }

LLVMTypeRef ec_cmp_type(emit_ctx *e, dmlc_dtype dt) {
  return dt == DMLC_DTYPE_F16 ? e->f32 : ec_store_type(e, dt);
}

LLVMTypeRef ec_lanes(LLVMTypeRef t, uint32_t lanes) {
  return lanes == 1 ? t : LLVMVectorType(t, lanes);
}

LLVMValueRef ec_i32(emit_ctx *e, uint64_t v) { return LLVMConstInt(e->i32, v, false); }
LLVMValueRef ec_i64(emit_ctx *e, uint64_t v) { return LLVMConstInt(e->i64, v, false); }

LLVMValueRef ec_shuffle(emit_ctx *e, LLVMValueRef a, LLVMValueRef b, const uint32_t *idx,
                        uint32_t n) {
  LLVMValueRef m[EC_MAX_LANES];
  for (uint32_t i = 0; i < n; i++)
    m[i] = ec_i32(e, idx[i]);
  return LLVMBuildShuffleVector(e->b, a, b ? b : LLVMGetPoison(LLVMTypeOf(a)),
                                LLVMConstVector(m, n), "");
}

LLVMValueRef ec_splat(emit_ctx *e, LLVMValueRef scalar, uint32_t lanes) {
  if (lanes == 1)
    return scalar;
  if (LLVMIsConstant(scalar) && lanes <= EC_MAX_LANES) {
    LLVMValueRef elems[EC_MAX_LANES];
    for (uint32_t i = 0; i < lanes; i++)
      elems[i] = scalar;
    return LLVMConstVector(elems, lanes);
  }
  LLVMTypeRef vt = LLVMVectorType(LLVMTypeOf(scalar), lanes);
  LLVMValueRef v = LLVMBuildInsertElement(e->b, LLVMGetPoison(vt), scalar, ec_i32(e, 0), "");
  LLVMValueRef zeros = LLVMConstNull(LLVMVectorType(e->i32, lanes));
  return LLVMBuildShuffleVector(e->b, v, LLVMGetPoison(vt), zeros, "splat");
}

LLVMValueRef ec_iota_of(LLVMTypeRef t, uint32_t lanes) {
  LLVMValueRef elems[EC_MAX_LANES];
  if (lanes > EC_MAX_LANES)
    lanes = EC_MAX_LANES; /* never: no path builds vectors this long */
  for (uint32_t i = 0; i < lanes; i++)
    elems[i] = LLVMConstInt(t, i, false);
  return lanes == 1 ? elems[0] : LLVMConstVector(elems, lanes);
}

LLVMValueRef ec_iota(emit_ctx *e, uint32_t lanes) { return ec_iota_of(e->i32, lanes); }

LLVMValueRef ec_const_elem(emit_ctx *e, dmlc_dtype dt, int64_t value) {
  /* The element's bits, as an integer of its width, seen as its type. */
  LLVMTypeRef bits_type = LLVMIntTypeInContext(e->c, dmlc_dtype_size(dt) * 8);
  LLVMValueRef bits = LLVMConstInt(bits_type, dmlc_dtype_bits_from_i64(dt, value), false);
  LLVMTypeRef t = ec_store_type(e, dt);
  return t == bits_type ? bits : LLVMConstBitCast(bits, t);
}

uint32_t ec_vector_lanes(const emit_ctx *e, dmlc_dtype dt) {
  const uint32_t lanes = e->vector_bytes / dmlc_dtype_size(dt);
  return lanes < 2 ? 2 : lanes > 64 ? 64 : lanes;
}

/* ---- memory ---- */

LLVMValueRef ec_var(emit_ctx *e, LLVMTypeRef t, const char *name) {
  LLVMValueRef a = LLVMBuildAlloca(e->entry_b, t, name);
  LLVMSetAlignment(a, 64);
  return a;
}

LLVMValueRef ec_array(emit_ctx *e, LLVMTypeRef t, uint64_t count, uint32_t align) {
  LLVMValueRef a = LLVMBuildAlloca(e->entry_b, LLVMArrayType2(t, count), "acc");
  LLVMSetAlignment(a, align);
  return a;
}

/* The element at off of base; the read's offsets count read_scale
 * elements apart (emit.c's scaled read). */
static LLVMValueRef elem_ptr(emit_ctx *e, LLVMTypeRef elem, LLVMValueRef base, LLVMValueRef off) {
  if (base == e->read && e->read_scale > 1)
    off = ec_mul(e, off, e->read_scale);
  return LLVMBuildGEP2(e->b, elem, base, &off, 1, "");
}

/* Strides up to this: a scaled read's vector is one load spanning its
 * elements, then a shuffle; wider ones gather element by element. */
enum { SCALED_SPAN_MAX = 4 };

LLVMValueRef ec_load(emit_ctx *e, dmlc_dtype dt, LLVMValueRef base, LLVMValueRef off,
                     uint32_t lanes) {
  LLVMTypeRef elem = ec_store_type(e, dt);
  const uint64_t s = base == e->read ? e->read_scale : 1;
  if (lanes > 1 && s > 1) {
    /* lanes elements s apart: one load ending at the last of them (never
     * past it), every s-th element kept; or each element on its own */
    LLVMValueRef p = elem_ptr(e, elem, base, off);
    if (s > SCALED_SPAN_MAX || lanes > 64) {
      LLVMValueRef v = LLVMGetPoison(ec_lanes(elem, lanes));
      for (uint32_t i = 0; i < lanes; i++) {
        LLVMValueRef at = ec_i64(e, i * s);
        LLVMValueRef x = LLVMBuildLoad2(e->b, elem, LLVMBuildGEP2(e->b, elem, p, &at, 1, ""), "");
        LLVMSetAlignment(x, 1);
        v = LLVMBuildInsertElement(e->b, v, x, ec_i32(e, i), "");
      }
      return v;
    }
    /* whole vectors over the span, the last one ending at its end (an
     * odd-sized load was lowered element by element), concatenated, then
     * every s-th element picked */
    const uint32_t span = (uint32_t)((lanes - 1) * s + 1), m = (span + lanes - 1) / lanes;
    const uint32_t last_at = span - lanes;
    LLVMTypeRef vt = ec_lanes(elem, lanes);
    LLVMValueRef w = NULL, mask[256];
    for (uint32_t j = 0; j < m; j++) {
      LLVMValueRef at = ec_i64(e, j + 1 < m ? j * lanes : last_at);
      LLVMValueRef c = LLVMBuildLoad2(e->b, vt, LLVMBuildGEP2(e->b, elem, p, &at, 1, ""), "");
      LLVMSetAlignment(c, 1);
      if (!w) {
        w = c;
        continue;
      }
      /* c widened to w's length, then w and c side by side */
      for (uint32_t i = 0; i < j * lanes; i++)
        mask[i] = ec_i32(e, i < lanes ? i : 0);
      c = LLVMBuildShuffleVector(e->b, c, LLVMGetPoison(vt), LLVMConstVector(mask, j * lanes), "");
      for (uint32_t i = 0; i < (j + 1) * lanes; i++)
        mask[i] = ec_i32(e, i);
      w = LLVMBuildShuffleVector(e->b, w, c, LLVMConstVector(mask, (j + 1) * lanes), "");
    }
    for (uint32_t i = 0; i < lanes; i++) {
      const uint32_t at = i * s; /* in the span */
      mask[i] = ec_i32(e, at < (m - 1) * lanes ? at : (m - 1) * lanes + (at - last_at));
    }
    return LLVMBuildShuffleVector(e->b, w, LLVMGetPoison(LLVMTypeOf(w)),
                                  LLVMConstVector(mask, lanes), "");
  }
  LLVMValueRef l = LLVMBuildLoad2(e->b, ec_lanes(elem, lanes), elem_ptr(e, elem, base, off), "");
  LLVMSetAlignment(l, 1);
  return l;
}

void ec_store(emit_ctx *e, dmlc_dtype dt, LLVMValueRef base, LLVMValueRef off, LLVMValueRef v) {
  LLVMValueRef s = LLVMBuildStore(e->b, v, elem_ptr(e, ec_store_type(e, dt), base, off));
  LLVMSetAlignment(s, 1);
}

/* binary16 -> binary32, exactly, in integer operations: normal numbers
 * rebias the exponent, subnormals are their 10-bit significand times 2^-24
 * (exact in binary32), infinities and NaNs keep their payload. */
static LLVMValueRef soft_f16_to_f32(emit_ctx *e, LLVMValueRef h, uint32_t lanes) {
  LLVMTypeRef it = ec_lanes(e->i32, lanes), ft = ec_lanes(e->f32, lanes);
#define K(v) ec_splat(e, ec_i32(e, (v)), lanes)
  LLVMValueRef x =
      LLVMBuildZExt(e->b, LLVMBuildBitCast(e->b, h, ec_lanes(e->i16, lanes), ""), it, "");
  LLVMValueRef sign = LLVMBuildShl(e->b, LLVMBuildAnd(e->b, x, K(0x8000), ""), K(16), "");
  LLVMValueRef em = LLVMBuildAnd(e->b, x, K(0x7fff), "");
  LLVMValueRef normal = LLVMBuildAdd(e->b, LLVMBuildShl(e->b, em, K(13), ""), K(112 << 23), "");
  LLVMValueRef special = LLVMBuildOr(
      e->b, LLVMBuildShl(e->b, LLVMBuildAnd(e->b, em, K(0x3ff), ""), K(13), ""), K(0x7f800000), "");
  LLVMValueRef sub_f = LLVMBuildFMul(e->b, LLVMBuildUIToFP(e->b, em, ft, ""),
                                     ec_splat(e, LLVMConstReal(e->f32, 0x1p-24), lanes), "");
  LLVMValueRef sub = LLVMBuildBitCast(e->b, sub_f, it, "");
  LLVMValueRef bits = LLVMBuildSelect(
      e->b, LLVMBuildICmp(e->b, LLVMIntUGE, em, K(0x7c00), ""), special,
      LLVMBuildSelect(e->b, LLVMBuildICmp(e->b, LLVMIntUGE, em, K(0x400), ""), normal, sub, ""),
      "");
#undef K
  return LLVMBuildBitCast(e->b, LLVMBuildOr(e->b, bits, sign, ""), ft, "");
}

LLVMValueRef ec_f16_to_f32(emit_ctx *e, LLVMValueRef v, uint32_t lanes) {
  if (e->soft_half)
    return soft_f16_to_f32(e, v, lanes);
  return LLVMBuildFPExt(e->b, v, ec_lanes(e->f32, lanes), ""); /* exact */
}

LLVMValueRef ec_f16_twos(emit_ctx *e, LLVMValueRef v, uint32_t lanes, LLVMValueRef *mag) {
  LLVMTypeRef t = ec_lanes(e->i16, lanes);
  LLVMValueRef h = LLVMBuildBitCast(e->b, v, t, "");
  *mag = LLVMBuildAnd(e->b, h, ec_splat(e, LLVMConstInt(e->i16, 0x7FFF, 0), lanes), "");
  if ((lanes == 8 || lanes == 16) && lanes * 2 <= e->psign_bytes) {
    /* x86 PSIGNW: mag negated where h < 0, 0 where h == 0 (mag is 0 too);
     * SSSE3's 16 bytes where AVX2 has 32. AVX2 f16 rows of 4-7 (short
     * groups of 16-byte vectors), alternated on a Zen 3, with over without
     * as time: one thread in the L2 [*,4] 0.81, [*,5] 0.86, [*,7] 0.84;
     * two from DRAM [*,4] 0.94, [*,5] 0.90, [*,6] 0.95. */
    const char *name = lanes == 16 ? "llvm.x86.avx2.psign.w" : "llvm.x86.ssse3.psign.w.128";
    LLVMValueRef args[2] = {*mag, h};
    return ec_intrinsic(e, name, NULL, 0, args, 2);
  }
  LLVMValueRef s = LLVMBuildAShr(e->b, h, ec_splat(e, LLVMConstInt(e->i16, 15, 0), lanes), "");
  return LLVMBuildSub(e->b, LLVMBuildXor(e->b, *mag, s, ""), s, "");
}

LLVMValueRef ec_f16_key(emit_ctx *e, LLVMValueRef v, uint32_t lanes) {
  LLVMValueRef mag;
  LLVMValueRef k = ec_f16_twos(e, v, lanes, &mag);
  LLVMValueRef nan =
      LLVMBuildICmp(e->b, LLVMIntSGT, mag, ec_splat(e, LLVMConstInt(e->i16, 0x7C00, 0), lanes), "");
  const uint64_t nan_key = e->k->reduction == DMLC_OP_ARGMAX ? 0x7FFF : 0x8000;
  return LLVMBuildSelect(e->b, nan, ec_splat(e, LLVMConstInt(e->i16, nan_key, 0), lanes), k, "key");
}

LLVMValueRef ec_load_read_key(emit_ctx *e, LLVMValueRef off, uint32_t lanes) {
  return ec_f16_key(e, ec_load(e, DMLC_DTYPE_F16, e->read, off, lanes), lanes);
}

LLVMValueRef ec_load_read_cmp(emit_ctx *e, LLVMValueRef off, uint32_t lanes) {
  const dmlc_dtype dt = e->k->read_dtype;
  LLVMValueRef v = ec_load(e, dt, e->read, off, lanes);
  if (dt == DMLC_DTYPE_F16)
    v = ec_f16_to_f32(e, v, lanes);
  return v;
}

void ec_coords(emit_ctx *e, const uint32_t *list, uint32_t n, LLVMValueRef t,
               LLVMValueRef *coords) {
  for (uint32_t i = n; i-- > 0;) {
    LLVMValueRef dim = ec_i64(e, e->k->dims[list[i]]);
    coords[i] = i == 0 ? t : LLVMBuildURem(e->b, t, dim, "");
    if (i > 0)
      t = LLVMBuildUDiv(e->b, t, dim, "");
  }
}

LLVMValueRef ec_add(emit_ctx *e, LLVMValueRef a, LLVMValueRef b) {
  return LLVMBuildAdd(e->b, a, b, "");
}

LLVMValueRef ec_mul(emit_ctx *e, LLVMValueRef a, uint64_t c) {
  if (c == 1)
    return a;
  return LLVMBuildMul(e->b, a, LLVMConstInt(LLVMTypeOf(a), c, false), "");
}

LLVMValueRef ec_madd(emit_ctx *e, LLVMValueRef a, LLVMValueRef b, uint64_t c) {
  if (c == 0)
    return a;
  return ec_add(e, a, ec_mul(e, b, c));
}

/* ---- control flow ---- */

LLVMValueRef ec_loop_begin(emit_ctx *e, ec_loop *l, LLVMValueRef start, LLVMValueRef end,
                           uint64_t step) {
  LLVMBasicBlockRef pre = LLVMGetInsertBlock(e->b);
  l->head = LLVMAppendBasicBlockInContext(e->c, e->fn, "loop");
  l->body = LLVMAppendBasicBlockInContext(e->c, e->fn, "body");
  l->exit = LLVMAppendBasicBlockInContext(e->c, e->fn, "done");
  l->step = step;
  LLVMBuildBr(e->b, l->head);
  LLVMPositionBuilderAtEnd(e->b, l->head);
  l->iv = LLVMBuildPhi(e->b, e->i64, "i");
  LLVMAddIncoming(l->iv, &start, &pre, 1);
  LLVMBuildCondBr(e->b, LLVMBuildICmp(e->b, LLVMIntULT, l->iv, end, ""), l->body, l->exit);
  LLVMPositionBuilderAtEnd(e->b, l->body);
  return l->iv;
}

void ec_loop_end(emit_ctx *e, ec_loop *l) {
  LLVMValueRef next = LLVMBuildAdd(e->b, l->iv, ec_i64(e, l->step), "");
  LLVMBasicBlockRef latch = LLVMGetInsertBlock(e->b);
  LLVMAddIncoming(l->iv, &next, &latch, 1);
  LLVMBuildBr(e->b, l->head);
  LLVMPositionBuilderAtEnd(e->b, l->exit);
}

void ec_if_begin(emit_ctx *e, ec_if *f, LLVMValueRef cond) {
  f->then = LLVMAppendBasicBlockInContext(e->c, e->fn, "then");
  f->otherwise = LLVMAppendBasicBlockInContext(e->c, e->fn, "else");
  f->join = LLVMAppendBasicBlockInContext(e->c, e->fn, "join");
  LLVMBuildCondBr(e->b, cond, f->then, f->otherwise);
  LLVMPositionBuilderAtEnd(e->b, f->then);
}

void ec_if_else(emit_ctx *e, ec_if *f) {
  LLVMBuildBr(e->b, f->join);
  LLVMPositionBuilderAtEnd(e->b, f->otherwise);
}

void ec_if_end(emit_ctx *e, ec_if *f) {
  LLVMBuildBr(e->b, f->join);
  LLVMPositionBuilderAtEnd(e->b, f->join);
}

/* ---- the order ---- */

static bool is_argmax(const emit_ctx *e) { return e->k->reduction == DMLC_OP_ARGMAX; }

/* The kind of order of compared values v: the read's, except that f16
 * compared as i16 keys (emit_column's f16_key) order as signed integers. */
static dmlc_kind order_kind(emit_ctx *e, LLVMValueRef v) {
  const dmlc_kind kind = dmlc_dtype_get(e->k->read_dtype)->kind;
  LLVMTypeRef t = LLVMTypeOf(v);
  if (LLVMGetTypeKind(t) == LLVMVectorTypeKind)
    t = LLVMGetElementType(t);
  return kind == DMLC_KIND_FLOAT && LLVMGetTypeKind(t) == LLVMIntegerTypeKind ? DMLC_KIND_SIGNED
                                                                              : kind;
}

/* a strictly better than b (argmax: greater, NaN above all; argmin: less,
 * NaN below all). */
static LLVMValueRef better(emit_ctx *e, LLVMValueRef a, LLVMValueRef b) {
  const dmlc_kind kind = order_kind(e, a);
  if (kind == DMLC_KIND_FLOAT) {
    LLVMValueRef cmp = LLVMBuildFCmp(e->b, is_argmax(e) ? LLVMRealUGT : LLVMRealULT, a, b, "");
    return LLVMBuildAnd(e->b, cmp, LLVMBuildFCmp(e->b, LLVMRealORD, b, b, ""), "better");
  }
  const bool s = kind == DMLC_KIND_SIGNED;
  const LLVMIntPredicate p =
      is_argmax(e) ? (s ? LLVMIntSGT : LLVMIntUGT) : (s ? LLVMIntSLT : LLVMIntULT);
  return LLVMBuildICmp(e->b, p, a, b, "better");
}

LLVMValueRef ec_take_next(emit_ctx *e, LLVMValueRef x, LLVMValueRef best) {
  if (e->k->direction == DMLC_DIRECTION_INCREASING)
    return better(e, x, best);
  /* !better(best, x), fused. */
  const dmlc_kind kind = order_kind(e, x);
  if (kind == DMLC_KIND_FLOAT) {
    LLVMValueRef cmp = LLVMBuildFCmp(e->b, is_argmax(e) ? LLVMRealOLE : LLVMRealOGE, best, x, "");
    return LLVMBuildOr(e->b, cmp, LLVMBuildFCmp(e->b, LLVMRealUNO, x, x, ""), "take");
  }
  const bool s = kind == DMLC_KIND_SIGNED;
  const LLVMIntPredicate p =
      is_argmax(e) ? (s ? LLVMIntSGE : LLVMIntUGE) : (s ? LLVMIntSLE : LLVMIntULE);
  return LLVMBuildICmp(e->b, p, x, best, "take");
}

LLVMValueRef ec_take_ordered(emit_ctx *e, LLVMValueRef x, LLVMValueRef v) {
  const bool first = e->k->direction == DMLC_DIRECTION_INCREASING;
  const LLVMRealPredicate p =
      is_argmax(e) ? (first ? LLVMRealOGT : LLVMRealOGE) : (first ? LLVMRealOLT : LLVMRealOLE);
  return LLVMBuildFCmp(e->b, p, x, v, "take");
}

/* ec_take_merge; when ordered, floats by ordered compares (exact where
 * neither value is NaN: a fast pass that checks for NaN apart). */
static LLVMValueRef take_merge(emit_ctx *e, bool ordered, LLVMValueRef a, LLVMValueRef ai,
                               LLVMValueRef b, LLVMValueRef bi) {
  LLVMValueRef eq;
  const bool fl = order_kind(e, a) == DMLC_KIND_FLOAT;
  if (fl) {
    LLVMValueRef both_nan = ordered ? NULL
                                    : LLVMBuildAnd(e->b, LLVMBuildFCmp(e->b, LLVMRealUNO, a, a, ""),
                                                   LLVMBuildFCmp(e->b, LLVMRealUNO, b, b, ""), "");
    eq = LLVMBuildFCmp(e->b, LLVMRealOEQ, a, b, "tie");
    if (both_nan)
      eq = LLVMBuildOr(e->b, eq, both_nan, "tie");
  } else {
    eq = LLVMBuildICmp(e->b, LLVMIntEQ, a, b, "tie");
  }
  LLVMValueRef win =
      fl && ordered ? LLVMBuildFCmp(e->b, is_argmax(e) ? LLVMRealOGT : LLVMRealOLT, b, a, "better")
                    : better(e, b, a);
  const LLVMIntPredicate p = e->k->direction == DMLC_DIRECTION_INCREASING ? LLVMIntULT : LLVMIntUGT;
  LLVMValueRef by_index = LLVMBuildAnd(e->b, eq, LLVMBuildICmp(e->b, p, bi, ai, ""), "");
  return LLVMBuildOr(e->b, win, by_index, "take");
}

LLVMValueRef ec_take_merge(emit_ctx *e, LLVMValueRef a, LLVMValueRef ai, LLVMValueRef b,
                           LLVMValueRef bi) {
  return take_merge(e, false, a, ai, b, bi);
}

static LLVMValueRef half_of(emit_ctx *e, LLVMValueRef v, uint32_t lanes, uint32_t first) {
  LLVMValueRef mask[EC_MAX_LANES];
  for (uint32_t i = 0; i < lanes; i++)
    mask[i] = ec_i32(e, first + i);
  if (lanes == 1)
    return LLVMBuildExtractElement(e->b, v, mask[0], "");
  return LLVMBuildShuffleVector(e->b, v, LLVMGetPoison(LLVMTypeOf(v)), LLVMConstVector(mask, lanes),
                                "");
}

LLVMValueRef ec_select_unpredictable(emit_ctx *e, LLVMValueRef take, LLVMValueRef x,
                                     LLVMValueRef v) {
  LLVMValueRef s = LLVMBuildSelect(e->b, take, x, v, "");
  const dmlc_dtype dt = e->k->read_dtype;
  if (dmlc_dtype_size(dt) == 8 && dmlc_dtype_get(dt)->kind != DMLC_KIND_FLOAT)
    return s;
  LLVMMetadataRef none = LLVMMDNodeInContext2(e->c, NULL, 0);
  LLVMSetMetadata(s, LLVMGetMDKindIDInContext(e->c, "unpredictable", 13),
                  LLVMMetadataAsValue(e->c, none));
  return s;
}

void ec_merge_pair(emit_ctx *e, bool ordered, LLVMValueRef *a, LLVMValueRef *ai, LLVMValueRef b,
                   LLVMValueRef bi) {
  LLVMValueRef take = take_merge(e, ordered, *a, *ai, b, bi);
  *a = LLVMBuildSelect(e->b, take, b, *a, "");
  *ai = LLVMBuildSelect(e->b, take, bi, *ai, "");
}

void ec_merge_tree(emit_ctx *e, bool ordered, LLVMValueRef *val, LLVMValueRef *idx, uint32_t n) {
  for (; n > 1; n = (n + 1) / 2)
    for (uint32_t u = 0; u < n / 2; u++) {
      const uint32_t o = (n + 1) / 2 + u;
      ec_merge_pair(e, ordered, &val[u], &idx[u], val[o], idx[o]);
    }
}

void ec_merge_lanes(emit_ctx *e, LLVMValueRef val, LLVMValueRef idx, uint32_t lanes,
                    LLVMValueRef *out_val, LLVMValueRef *out_idx) {
  ec_merge_halves(e, val, idx, lanes, 1, out_val, out_idx);
}

void ec_merge_halves(emit_ctx *e, LLVMValueRef val, LLVMValueRef idx, uint32_t lanes, uint32_t keep,
                     LLVMValueRef *out_val, LLVMValueRef *out_idx) {
  while (lanes > keep) {
    const uint32_t h = lanes / 2;
    LLVMValueRef av = half_of(e, val, h, 0), ai = half_of(e, idx, h, 0);
    LLVMValueRef bv = half_of(e, val, h, h), bi = half_of(e, idx, h, h);
    ec_merge_pair(e, false, &av, &ai, bv, bi);
    val = av;
    idx = ai;
    lanes = h;
  }
  *out_val = val;
  *out_idx = idx;
}

/* ---- conversions ---- */

LLVMValueRef ec_intrinsic(emit_ctx *e, const char *name, LLVMTypeRef *types, size_t ntypes,
                          LLVMValueRef *args, unsigned nargs) {
  const unsigned id = LLVMLookupIntrinsicID(name, strlen(name));
  LLVMValueRef fn = LLVMGetIntrinsicDeclaration(e->m, id, types, ntypes);
  LLVMTypeRef fty = LLVMIntrinsicGetType(e->c, id, types, ntypes);
  return LLVMBuildCall2(e->b, fty, fn, args, nargs, "");
}

/* binary64 -> binary16 rounded once: round to odd into binary32 (which keeps
 * more than two extra bits), then to nearest even. */
static LLVMValueRef f64_to_f16(emit_ctx *e, LLVMValueRef d, uint32_t lanes) {
  LLVMTypeRef ft = ec_lanes(e->f32, lanes), it = ec_lanes(e->i32, lanes);
  LLVMTypeRef dt = ec_lanes(e->f64, lanes);
  LLVMValueRef f = LLVMBuildFPTrunc(e->b, d, ft, "");
  LLVMValueRef back = LLVMBuildFPExt(e->b, f, dt, "");
  LLVMValueRef inexact = LLVMBuildFCmp(e->b, LLVMRealONE, back, d, "");
  LLVMValueRef abs_back = ec_intrinsic(e, "llvm.fabs", &dt, 1, &back, 1);
  LLVMValueRef abs_d = ec_intrinsic(e, "llvm.fabs", &dt, 1, &d, 1);
  LLVMValueRef away = LLVMBuildFCmp(e->b, LLVMRealOGT, abs_back, abs_d, "");
  LLVMValueRef bits = LLVMBuildBitCast(e->b, f, it, "");
  LLVMValueRef odd =
      LLVMBuildOr(e->b, LLVMBuildSub(e->b, bits, LLVMBuildZExt(e->b, away, it, ""), ""),
                  ec_splat(e, ec_i32(e, 1), lanes), "");
  bits = LLVMBuildSelect(e->b, inexact, odd, bits, "");
  f = LLVMBuildBitCast(e->b, bits, ft, "");
  return LLVMBuildFPTrunc(e->b, f, ec_lanes(e->f16, lanes), "");
}

static uint32_t lanes_of(LLVMValueRef v) {
  LLVMTypeRef t = LLVMTypeOf(v);
  return LLVMGetTypeKind(t) == LLVMVectorTypeKind ? LLVMGetVectorSize(t) : 1;
}

LLVMValueRef ec_convert(emit_ctx *e, LLVMValueRef v, dmlc_dtype from, dmlc_dtype to) {
  const uint32_t lanes = lanes_of(v);
  const dmlc_kind fk = dmlc_dtype_get(from)->kind, tk = dmlc_dtype_get(to)->kind;
  LLVMTypeRef tt = ec_lanes(ec_store_type(e, to), lanes);
  if (from == to && fk != DMLC_KIND_BOOL)
    return v;
  if (fk == DMLC_KIND_BOOL) { /* a byte that is not 0 reads as 1 */
    LLVMValueRef nz = LLVMBuildICmp(e->b, LLVMIntNE, v, LLVMConstNull(LLVMTypeOf(v)), "");
    v = LLVMBuildZExt(e->b, nz, ec_lanes(e->i8, lanes), "");
    if (tk == DMLC_KIND_BOOL)
      return v;
    return ec_convert(e, v, DMLC_DTYPE_U8, to);
  }
  if (tk == DMLC_KIND_BOOL) {
    LLVMValueRef nz = fk == DMLC_KIND_FLOAT
                          ? LLVMBuildFCmp(e->b, LLVMRealUNE, v, LLVMConstNull(LLVMTypeOf(v)), "")
                          : LLVMBuildICmp(e->b, LLVMIntNE, v, LLVMConstNull(LLVMTypeOf(v)), "");
    return LLVMBuildZExt(e->b, nz, tt, "");
  }
  if (fk != DMLC_KIND_FLOAT && tk != DMLC_KIND_FLOAT)
    return LLVMBuildIntCast2(e->b, v, tt, fk == DMLC_KIND_SIGNED, "");
  if (fk != DMLC_KIND_FLOAT) {
    if (to == DMLC_DTYPE_F16) {
      /* Exact in f32 below 2^24; at or above it, inf in f16 either way. */
      LLVMValueRef f = fk == DMLC_KIND_SIGNED
                           ? LLVMBuildSIToFP(e->b, v, ec_lanes(e->f32, lanes), "")
                           : LLVMBuildUIToFP(e->b, v, ec_lanes(e->f32, lanes), "");
      return LLVMBuildFPTrunc(e->b, f, tt, "");
    }
    return fk == DMLC_KIND_SIGNED ? LLVMBuildSIToFP(e->b, v, tt, "")
                                  : LLVMBuildUIToFP(e->b, v, tt, "");
  }
  if (from == DMLC_DTYPE_F16) { /* widen exactly first */
    v = ec_f16_to_f32(e, v, lanes);
    from = DMLC_DTYPE_F32;
    if (to == DMLC_DTYPE_F32)
      return v;
  }
  if (tk != DMLC_KIND_FLOAT) { /* truncate toward zero, saturate, NaN -> 0 */
    LLVMTypeRef types[2] = {tt, LLVMTypeOf(v)};
    return ec_intrinsic(e, tk == DMLC_KIND_SIGNED ? "llvm.fptosi.sat" : "llvm.fptoui.sat", types, 2,
                        &v, 1);
  }
  if (from == DMLC_DTYPE_F64 && to == DMLC_DTYPE_F16)
    return f64_to_f16(e, v, lanes);
  if (dmlc_dtype_size(to) > dmlc_dtype_size(from))
    return LLVMBuildFPExt(e->b, v, tt, "");
  return LLVMBuildFPTrunc(e->b, v, tt, "");
}

/* ---- outputs ---- */

void ec_fill(emit_ctx *e, dmlc_dtype dt, LLVMValueRef base, LLVMValueRef off, LLVMValueRef count,
             uint64_t stride, LLVMValueRef value) {
  LLVMValueRef start = ec_i64(e, 0);
  if (stride == 1) {
    const uint32_t lanes = ec_vector_lanes(e, dt);
    LLVMValueRef vec = ec_splat(e, value, lanes);
    LLVMValueRef vend = LLVMBuildAnd(e->b, count, ec_i64(e, ~(uint64_t)(lanes - 1)), "");
    ec_loop l;
    LLVMValueRef i = ec_loop_begin(e, &l, start, vend, lanes);
    ec_store(e, dt, base, ec_add(e, off, i), vec);
    ec_loop_end(e, &l);
    start = vend;
  }
  ec_loop l;
  LLVMValueRef i = ec_loop_begin(e, &l, start, count, 1);
  ec_store(e, dt, base, ec_madd(e, off, i, stride), value);
  ec_loop_end(e, &l);
}

/* ---- non-temporal stores ---- */

/* A vector of half (f16) keeps no !nontemporal through LLVM 19's x86
 * lowering without AVX512-FP16: those stores are ordinary ones. Stored as
 * i16 lanes they would go around the caches, which measured slower for
 * f16 hardmax rows (see ec_store_onehot_run_nt's caller in emit_row.c). */
void ec_store_nt(emit_ctx *e, dmlc_dtype dt, LLVMValueRef base, LLVMValueRef off, LLVMValueRef v) {
  LLVMValueRef s = LLVMBuildStore(e->b, v, elem_ptr(e, ec_store_type(e, dt), base, off));
  /* aligned to the vector, or to the machine's vector for wider ones (split
   * into those) */
  const uint32_t bytes = dmlc_dtype_size(dt) * lanes_of(v);
  LLVMSetAlignment(s, bytes < e->vector_bytes ? bytes : e->vector_bytes);
  LLVMMetadataRef one = LLVMValueAsMetadata(ec_i32(e, 1));
  LLVMValueRef node = LLVMMetadataAsValue(e->c, LLVMMDNodeInContext2(e->c, &one, 1));
  LLVMSetMetadata(s, LLVMGetMDKindIDInContext(e->c, "nontemporal", 11), node);
  e->nt_used = true;
}

LLVMValueRef ec_is_aligned(emit_ctx *e, dmlc_dtype dt, LLVMValueRef base, LLVMValueRef off,
                           uint64_t bytes) {
  LLVMValueRef p = elem_ptr(e, ec_store_type(e, dt), base, off);
  LLVMValueRef a = LLVMBuildPtrToInt(e->b, p, e->i64, "");
  LLVMValueRef low = LLVMBuildAnd(e->b, a, ec_i64(e, bytes - 1), "");
  return LLVMBuildICmp(e->b, LLVMIntEQ, low, ec_i64(e, 0), "aligned");
}

static LLVMValueRef umin64(emit_ctx *e, LLVMValueRef a, LLVMValueRef b) {
  return LLVMBuildSelect(e->b, LLVMBuildICmp(e->b, LLVMIntULT, a, b, ""), a, b, "");
}

/* A run of count elements of dt at base + off: *head elements before the
 * first vector-aligned one (all of them when the run is not
 * element-aligned), then aligned vectors up to *vend, then the rest. */
static void run_bounds(emit_ctx *e, dmlc_dtype dt, LLVMValueRef base, LLVMValueRef off,
                       LLVMValueRef count, LLVMValueRef *head, LLVMValueRef *vend) {
  const uint64_t size = dmlc_dtype_size(dt);
  const uint32_t lanes = ec_vector_lanes(e, dt);
  const uint64_t vbytes = size * lanes;
  LLVMValueRef p = elem_ptr(e, ec_store_type(e, dt), base, off);
  LLVMValueRef a = LLVMBuildPtrToInt(e->b, p, e->i64, "");
  LLVMValueRef mis = LLVMBuildAnd(e->b, a, ec_i64(e, vbytes - 1), "");
  LLVMValueRef h = LLVMBuildUDiv(
      e->b,
      LLVMBuildAnd(e->b, LLVMBuildSub(e->b, ec_i64(e, vbytes), mis, ""), ec_i64(e, vbytes - 1), ""),
      ec_i64(e, size), "");
  if (size > 1) {
    LLVMValueRef odd = LLVMBuildAnd(e->b, a, ec_i64(e, size - 1), "");
    h = LLVMBuildSelect(e->b, LLVMBuildICmp(e->b, LLVMIntNE, odd, ec_i64(e, 0), ""), count, h, "");
  }
  *head = umin64(e, h, count);
  *vend = ec_add(e, *head,
                 LLVMBuildAnd(e->b, LLVMBuildSub(e->b, count, *head, ""),
                              ec_i64(e, ~(uint64_t)(lanes - 1)), ""));
}

void ec_store_run_nt(emit_ctx *e, dmlc_dtype dt, LLVMValueRef base, LLVMValueRef off,
                     LLVMValueRef count, ec_run_value fn, void *arg) {
  const uint32_t lanes = ec_vector_lanes(e, dt);
  LLVMValueRef head, vend;
  run_bounds(e, dt, base, off, count, &head, &vend);
  ec_loop l;
  LLVMValueRef i = ec_loop_begin(e, &l, ec_i64(e, 0), head, 1);
  ec_store(e, dt, base, ec_add(e, off, i), fn(e, i, 1, arg));
  ec_loop_end(e, &l);
  i = ec_loop_begin(e, &l, head, vend, lanes);
  if (e->run_prefetch)
    ec_prefetch_read(e, ec_add(e, e->run_prefetch, i), 0, false);
  ec_store_nt(e, dt, base, ec_add(e, off, i), fn(e, i, lanes, arg));
  ec_loop_end(e, &l);
  i = ec_loop_begin(e, &l, vend, count, 1);
  ec_store(e, dt, base, ec_add(e, off, i), fn(e, i, 1, arg));
  ec_loop_end(e, &l);
}

/* Aligned vectors of 0s over elements [from, to) of a run (to - from a
 * multiple of the lanes): a loop trip stores 64 bytes where it can, and
 * prefetches (e->run_prefetch) the read's elements as many as it stores. */
static void zero_vectors_nt(emit_ctx *e, dmlc_dtype dt, LLVMValueRef base, LLVMValueRef off,
                            LLVMValueRef from, LLVMValueRef to) {
  const uint32_t lanes = ec_vector_lanes(e, dt);
  const uint64_t vbytes = (uint64_t)lanes * dmlc_dtype_size(dt);
  const uint32_t per = vbytes < 64 ? (uint32_t)(64 / vbytes) : 1; /* vectors a trip */
  const uint64_t read_bytes = (uint64_t)per * lanes * dmlc_dtype_size(e->k->read_dtype);
  LLVMValueRef zero = ec_splat(e, ec_const_elem(e, dt, 0), lanes);
  LLVMValueRef mid = ec_add(
      e, from,
      LLVMBuildAnd(e->b, LLVMBuildSub(e->b, to, from, ""), ec_i64(e, ~(per * lanes - 1ull)), ""));
  ec_loop l;
  LLVMValueRef i = ec_loop_begin(e, &l, from, mid, per * lanes);
  for (uint64_t b = 0; e->run_prefetch && b < read_bytes; b += 64)
    ec_prefetch_read(e, ec_add(e, e->run_prefetch, i), (int64_t)b, false);
  for (uint32_t v = 0; v < per; v++)
    ec_store_nt(e, dt, base, ec_add(e, off, ec_add(e, i, ec_i64(e, v * lanes))), zero);
  ec_loop_end(e, &l);
  i = ec_loop_begin(e, &l, mid, to, lanes);
  ec_store_nt(e, dt, base, ec_add(e, off, i), zero);
  ec_loop_end(e, &l);
}

/* Scalar elements [from, to) of a one-hot run: 1 at element one (NULL:
 * none), else 0. */
static void onehot_scalars(emit_ctx *e, dmlc_dtype dt, LLVMValueRef base, LLVMValueRef off,
                           LLVMValueRef from, LLVMValueRef to, LLVMValueRef one) {
  LLVMValueRef zero = ec_const_elem(e, dt, 0);
  ec_loop l;
  LLVMValueRef i = ec_loop_begin(e, &l, from, to, 1);
  LLVMValueRef x = one ? LLVMBuildSelect(e->b, LLVMBuildICmp(e->b, LLVMIntEQ, i, one, ""),
                                         ec_const_elem(e, dt, 1), zero, "")
                       : zero;
  ec_store(e, dt, base, ec_add(e, off, i), x);
  ec_loop_end(e, &l);
}

void ec_store_onehot_run_nt(emit_ctx *e, dmlc_dtype dt, LLVMValueRef base, LLVMValueRef off,
                            LLVMValueRef count, LLVMValueRef one) {
  const uint32_t lanes = ec_vector_lanes(e, dt);
  LLVMValueRef head, vend;
  run_bounds(e, dt, base, off, count, &head, &vend);
  onehot_scalars(e, dt, base, off, ec_i64(e, 0), head, one);
  if (!one) {
    zero_vectors_nt(e, dt, base, off, head, vend);
  } else {
    /* 0s up to the vector holding the 1 (at vone; vend when none does),
     * it, 0s after it */
    LLVMValueRef in = LLVMBuildAnd(e->b, LLVMBuildICmp(e->b, LLVMIntUGE, one, head, ""),
                                   LLVMBuildICmp(e->b, LLVMIntULT, one, vend, ""), "");
    LLVMValueRef at = ec_add(e, head,
                             LLVMBuildAnd(e->b, LLVMBuildSub(e->b, one, head, ""),
                                          ec_i64(e, ~(uint64_t)(lanes - 1)), ""));
    LLVMValueRef vone = LLVMBuildSelect(e->b, in, at, vend, "vone");
    zero_vectors_nt(e, dt, base, off, head, vone);
    ec_if f;
    ec_if_begin(e, &f, in);
    LLVMTypeRef it = LLVMIntTypeInContext(e->c, 8 * dmlc_dtype_size(dt));
    LLVMValueRef lane = LLVMBuildTrunc(e->b, LLVMBuildSub(e->b, one, vone, ""), it, "");
    LLVMValueRef hit =
        LLVMBuildICmp(e->b, LLVMIntEQ, ec_iota_of(it, lanes), ec_splat(e, lane, lanes), "");
    if (e->run_prefetch)
      ec_prefetch_read(e, ec_add(e, e->run_prefetch, vone), 0, false);
    ec_store_nt(e, dt, base, ec_add(e, off, vone),
                LLVMBuildSelect(e->b, hit, ec_splat(e, ec_const_elem(e, dt, 1), lanes),
                                ec_splat(e, ec_const_elem(e, dt, 0), lanes), ""));
    ec_if_else(e, &f);
    ec_if_end(e, &f);
    zero_vectors_nt(e, dt, base, off, umin64(e, ec_add(e, vone, ec_i64(e, lanes)), vend), vend);
  }
  onehot_scalars(e, dt, base, off, vend, count, one);
}

LLVMValueRef ec_any_lane(emit_ctx *e, LLVMValueRef v) {
  LLVMTypeRef t = LLVMTypeOf(v);
  const uint32_t lanes = LLVMGetVectorSize(t);
  if (LLVMGetIntTypeWidth(LLVMGetElementType(t)) != 1)
    v = LLVMBuildICmp(e->b, LLVMIntNE, v, LLVMConstNull(t), "");
  LLVMTypeRef bt = LLVMIntTypeInContext(e->c, lanes);
  return LLVMBuildICmp(e->b, LLVMIntNE, LLVMBuildBitCast(e->b, v, bt, ""), LLVMConstNull(bt), "");
}

void ec_nt_fence(emit_ctx *e) {
  if (e->nt_used)
    LLVMBuildFence(e->b, LLVMAtomicOrderingSequentiallyConsistent, false, "");
}

bool ec_nt_bytes(const emit_ctx *e, uint64_t out_bytes) {
  if (!e->nt_min_bytes)
    return false;
  const uint64_t read = e->k->has_read ? ec_read_bytes(e->k) : 0;
  return out_bytes >= e->nt_min_bytes ||
         (out_bytes >= read / 8 && read >= e->nt_min_bytes - out_bytes);
}

bool ec_index_nt(const emit_ctx *e, uint32_t i) {
  const dmlc_kout *o = &e->k->outputs[i];
  return o->kind == DMLC_KOUT_INDEX && o->strides[0] == 1 &&
         ec_nt_bytes(e, (uint64_t)e->k->dims[0] * dmlc_dtype_size(o->dtype));
}

LLVMValueRef ec_index_nt_aligned(emit_ctx *e, uint32_t lanes) {
  LLVMValueRef all = NULL;
  for (uint32_t i = 0; i < e->k->num_outputs; i++) {
    if (!ec_index_nt(e, i))
      continue;
    const dmlc_dtype dt = e->k->outputs[i].dtype;
    const uint64_t bytes = (uint64_t)lanes * dmlc_dtype_size(dt);
    LLVMValueRef al = ec_is_aligned(e, dt, e->out[i], ec_i64(e, 0),
                                    bytes < e->vector_bytes ? bytes : e->vector_bytes);
    all = all ? LLVMBuildAnd(e->b, all, al, "") : al;
  }
  return all;
}

bool ec_output_nt(const emit_ctx *e, uint32_t i) {
  const dmlc_kout *o = &e->k->outputs[i];
  if (o->kind == DMLC_KOUT_INDEX)
    return false;
  uint64_t bytes = dmlc_dtype_size(o->dtype);
  for (uint32_t d = 0; d < e->k->rank; d++)
    bytes *= e->k->dims[d];
  return ec_nt_bytes(e, bytes);
}

void ec_prefetch_read_at(emit_ctx *e, LLVMValueRef off, LLVMValueRef bytes, bool near) {
  LLVMValueRef p = elem_ptr(e, ec_store_type(e, e->k->read_dtype), e->read, off);
  if (bytes)
    p = LLVMBuildGEP2(e->b, e->i8, p, &bytes, 1, "");
  LLVMTypeRef pt = e->ptr;
  /* read, locality 3 (prefetcht0: L1 and up) or 2 (prefetcht1: L2 and
   * up), data */
  LLVMValueRef args[4] = {p, ec_i32(e, 0), ec_i32(e, near ? 3 : 2), ec_i32(e, 1)};
  ec_intrinsic(e, "llvm.prefetch", &pt, 1, args, 4);
}

void ec_prefetch_read(emit_ctx *e, LLVMValueRef off, int64_t bytes, bool near) {
  ec_prefetch_read_at(e, off, bytes ? ec_i64(e, (uint64_t)bytes) : NULL, near);
}

void ec_prefetch_span(emit_ctx *e, LLVMValueRef off, uint64_t bytes, uint64_t ahead) {
  for (uint64_t b = 0; b == 0 || b < bytes; b += 64)
    ec_prefetch_read(e, off, (int64_t)(ahead + b), true);
}

void ec_prefetch_stream(emit_ctx *e, LLVMValueRef off, uint64_t bytes) {
  if (e->prefetch_bytes && e->row_prefetch)
    ec_prefetch_span(e, off, bytes, e->prefetch_bytes);
}

uint64_t ec_read_bytes(const dmlc_kdesc *k) {
  return dmlc_dtype_size(k->read_dtype) * dmlc_kdesc_space_elements(k);
}
