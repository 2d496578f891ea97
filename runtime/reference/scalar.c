/* Element load, store, conversion and comparison for the reference
 * evaluator. Buffers may be unaligned: every access goes through memcpy. */
#include "runtime/reference/scalar.h"

#include <math.h>
#include <string.h>

dmlc_scalar dmlc_scalar_from_i64(int64_t i) {
  dmlc_scalar s;
  s.kind = DMLC_KIND_SIGNED;
  s.v.i = i;
  return s;
}

dmlc_scalar dmlc_scalar_from_u64(uint64_t u) {
  dmlc_scalar s;
  s.kind = DMLC_KIND_UNSIGNED;
  s.v.u = u;
  return s;
}

static dmlc_scalar scalar_from_f64(double f) {
  dmlc_scalar s;
  s.kind = DMLC_KIND_FLOAT;
  s.v.f = f;
  return s;
}

uint64_t dmlc_element_load_bits(const void *p, uint32_t size) {
  if (size == 1) {
    uint8_t x;
    memcpy(&x, p, sizeof x);
    return x;
  }
  if (size == 2) {
    uint16_t x;
    memcpy(&x, p, sizeof x);
    return x;
  }
  if (size == 4) {
    uint32_t x;
    memcpy(&x, p, sizeof x);
    return x;
  }
  uint64_t x;
  memcpy(&x, p, sizeof x);
  return x;
}

void dmlc_element_store_bits(void *p, uint32_t size, uint64_t bits) {
  if (size == 1) {
    const uint8_t x = (uint8_t)bits;
    memcpy(p, &x, sizeof x);
  } else if (size == 2) {
    const uint16_t x = (uint16_t)bits;
    memcpy(p, &x, sizeof x);
  } else if (size == 4) {
    const uint32_t x = (uint32_t)bits;
    memcpy(p, &x, sizeof x);
  } else {
    memcpy(p, &bits, sizeof bits);
  }
}

/* The element's bits, read as the type table says its kind holds them. */
dmlc_scalar dmlc_scalar_load(dmlc_dtype dtype, const void *p) {
  const dmlc_dtype_info *info = dmlc_dtype_get(dtype);
  const uint64_t bits = dmlc_element_load_bits(p, info->size);
  dmlc_scalar s;
  switch (info->kind) {
  case DMLC_KIND_FLOAT:
    return scalar_from_f64(dmlc_dtype_f64_from_bits(dtype, bits));
  case DMLC_KIND_SIGNED:
    return dmlc_scalar_from_i64(dmlc_dtype_i64_from_bits(dtype, bits));
  case DMLC_KIND_BOOL:
    s = dmlc_scalar_from_u64(bits != 0);
    s.kind = DMLC_KIND_BOOL;
    return s;
  case DMLC_KIND_UNSIGNED:
  default:
    return dmlc_scalar_from_u64(bits);
  }
}

static bool scalar_is_nonzero(dmlc_scalar s) {
  switch (s.kind) {
  case DMLC_KIND_FLOAT:
    return s.v.f != 0.0; /* true for NaN */
  case DMLC_KIND_SIGNED:
    return s.v.i != 0;
  default:
    return s.v.u != 0;
  }
}

/* Truncates toward zero and saturates at the range of a bits-wide integer;
 * NaN gives 0. Returns the two's-complement bit pattern. */
static uint64_t float_to_int_bits(double f, uint32_t bits, bool is_signed) {
  if (isnan(f))
    return 0;
  if (is_signed) {
    const double limit = (double)(UINT64_C(1) << (bits - 1)); /* 2^(bits-1), exact */
    if (f <= -limit)
      return (uint64_t)0 - (UINT64_C(1) << (bits - 1));
    if (f >= limit)
      return (UINT64_C(1) << (bits - 1)) - 1;
    return (uint64_t)(int64_t)f;
  }
  const double limit = 2.0 * (double)(UINT64_C(1) << (bits - 1)); /* 2^bits, exact */
  if (f <= -1.0)
    return 0;
  if (f >= limit)
    return bits == 64 ? UINT64_MAX : (UINT64_C(1) << bits) - 1;
  return (uint64_t)f;
}

static uint64_t scalar_to_int_bits(dmlc_scalar s, uint32_t bits, bool is_signed) {
  switch (s.kind) {
  case DMLC_KIND_FLOAT:
    return float_to_int_bits(s.v.f, bits, is_signed);
  case DMLC_KIND_SIGNED:
    return (uint64_t)s.v.i; /* wraps modulo 2^64, then the store truncates */
  default:
    return s.v.u;
  }
}

uint16_t dmlc_scalar_f64_to_f16(double d) {
  if (isnan(d) || isinf(d))
    return dmlc_f32_to_f16((float)d);
  if (fabs(d) >= 65520.0) /* at or above the midpoint of 65504 and 2^16 */
    return signbit(d) ? 0xfc00u : 0x7c00u;
  /* Round to odd into binary32, then to nearest even into binary16. binary32
   * keeps more than two bits beyond binary16's precision, so the sticky
   * lowest bit tells the second rounding on which side of a tie d lies: the
   * result is d rounded once. (Values below binary32's normal range are far
   * below half of binary16's smallest subnormal and round to zero either
   * way.) */
  float f = (float)d;
  if ((double)f != d) {
    uint32_t bits;
    memcpy(&bits, &f, sizeof bits);
    if (fabs((double)f) > fabs(d))
      bits--; /* the magnitude toward zero: truncation */
    bits |= 1u;
    memcpy(&f, &bits, sizeof f);
  }
  return dmlc_f32_to_f16(f);
}

static void store_float(dmlc_dtype dtype, void *p, dmlc_scalar s) {
  if (dtype == DMLC_DTYPE_F32) {
    /* One C conversion from the exact source: a single rounding. */
    float x;
    if (s.kind == DMLC_KIND_FLOAT)
      x = (float)s.v.f;
    else if (s.kind == DMLC_KIND_SIGNED)
      x = (float)s.v.i;
    else
      x = (float)s.v.u;
    memcpy(p, &x, sizeof x);
    return;
  }
  double d;
  if (s.kind == DMLC_KIND_FLOAT)
    d = s.v.f;
  else if (s.kind == DMLC_KIND_SIGNED)
    d = (double)s.v.i;
  else
    d = (double)s.v.u;
  if (dtype == DMLC_DTYPE_F64) {
    memcpy(p, &d, sizeof d);
    return;
  }
  /* f16. An integer is inexact as a double only above 2^53, where its f16
   * value is +-inf whichever way the double rounded: still one rounding. */
  const uint16_t h = dmlc_scalar_f64_to_f16(d);
  memcpy(p, &h, sizeof h);
}

void dmlc_scalar_store(dmlc_dtype dtype, void *p, dmlc_scalar s) {
  const dmlc_dtype_info *info = dmlc_dtype_get(dtype);
  switch (info->kind) {
  case DMLC_KIND_BOOL: {
    const uint8_t x = scalar_is_nonzero(s) ? 1 : 0;
    memcpy(p, &x, sizeof x);
    return;
  }
  case DMLC_KIND_FLOAT:
    store_float(dtype, p, s);
    return;
  case DMLC_KIND_SIGNED:
  case DMLC_KIND_UNSIGNED:
  default:
    dmlc_element_store_bits(p, info->size,
                            scalar_to_int_bits(s, info->size * 8, info->kind == DMLC_KIND_SIGNED));
    return;
  }
}

int dmlc_scalar_compare(dmlc_scalar a, dmlc_scalar b, bool nan_high) {
  switch (a.kind) {
  case DMLC_KIND_FLOAT: {
    const bool a_nan = isnan(a.v.f), b_nan = isnan(b.v.f);
    if (a_nan || b_nan) {
      const int nan_side = nan_high ? 1 : -1;
      return a_nan && b_nan ? 0 : a_nan ? nan_side : -nan_side;
    }
    return (a.v.f > b.v.f) - (a.v.f < b.v.f); /* -0.0 and +0.0 give 0 */
  }
  case DMLC_KIND_SIGNED:
    return (a.v.i > b.v.i) - (a.v.i < b.v.i);
  default:
    return (a.v.u > b.v.u) - (a.v.u < b.v.u);
  }
}

bool dmlc_scalar_equal(dmlc_scalar a, dmlc_scalar b) {
  switch (a.kind) {
  case DMLC_KIND_FLOAT:
    return a.v.f == b.v.f;
  case DMLC_KIND_SIGNED:
    return a.v.i == b.v.i;
  default:
    return a.v.u == b.v.u;
  }
}
