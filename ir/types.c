/* The data-type and op tables, and the shape/stride arithmetic every layer
 * shares. */
#include <math.h>
#include <string.h>

#include "ir/ir.h"

static const dmlc_dtype_info dtype_table[] = {
#define X(id, name, size, kind, dml, ebits, mbits, order, llvm, spirv)                             \
  {name, size, kind, (DML_TENSOR_DATA_TYPE)(dml), ebits, mbits, order, llvm, spirv},
#include "ir/dtypes.def"
#undef X
};

static const dmlc_op_info op_table[] = {
#define X(id, name, nopnd, attrs, kind, rule) {name, nopnd, attrs, kind},
#include "ir/ops.def"
#undef X
};
_Static_assert(sizeof dtype_table / sizeof dtype_table[0] == DMLC_DTYPE_COUNT,
               "dtype_table: one row per dtype of ir/dtypes.def");
_Static_assert(sizeof op_table / sizeof op_table[0] == DMLC_OP_COUNT,
               "op_table: one row per op of ir/ops.def");

const dmlc_dtype_info *dmlc_dtype_get(dmlc_dtype dtype) { return &dtype_table[dtype]; }
const char *dmlc_dtype_name(dmlc_dtype dtype) { return dtype_table[dtype].name; }
uint32_t dmlc_dtype_size(dmlc_dtype dtype) { return dtype_table[dtype].size; }
bool dmlc_dtype_is_float(dmlc_dtype dtype) { return dtype_table[dtype].kind == DMLC_KIND_FLOAT; }

bool dmlc_dtype_is_integer(dmlc_dtype dtype) {
  return dtype_table[dtype].kind == DMLC_KIND_SIGNED ||
         dtype_table[dtype].kind == DMLC_KIND_UNSIGNED;
}

uint64_t dmlc_dtype_max_index(dmlc_dtype dtype) {
  const dmlc_dtype_info *info = &dtype_table[dtype];
  const uint32_t bits = info->size * 8 - (info->kind == DMLC_KIND_SIGNED ? 1 : 0);
  return bits >= 64 ? UINT64_MAX : (UINT64_C(1) << bits) - 1;
}

bool dmlc_dtype_from_name(const char *name, size_t len, dmlc_dtype *out) {
  for (int i = 0; i < DMLC_DTYPE_COUNT; i++) {
    if (strlen(dtype_table[i].name) == len && memcmp(dtype_table[i].name, name, len) == 0) {
      *out = (dmlc_dtype)i;
      return true;
    }
  }
  return false;
}

bool dmlc_dtype_from_dml(DML_TENSOR_DATA_TYPE dml, dmlc_dtype *out) {
  for (int i = 0; i < DMLC_DTYPE_COUNT; i++) {
    if (dtype_table[i].dml != 0 && dtype_table[i].dml == dml) {
      *out = (dmlc_dtype)i;
      return true;
    }
  }
  return false;
}

const dmlc_op_info *dmlc_op_get(dmlc_op op) { return &op_table[op]; }

bool dmlc_op_from_name(const char *name, size_t len, dmlc_op *out) {
  for (int i = 0; i < DMLC_OP_COUNT; i++) {
    if (strlen(op_table[i].name) == len && memcmp(op_table[i].name, name, len) == 0) {
      *out = (dmlc_op)i;
      return true;
    }
  }
  return false;
}

const char *dmlc_direction_name(dmlc_direction d) {
  return d == DMLC_DIRECTION_DECREASING ? "decreasing" : "increasing";
}

uint32_t dmlc_axes_mask(const uint32_t *axes, uint32_t num_axes) {
  uint32_t mask = 0;
  for (uint32_t i = 0; i < num_axes; i++)
    if (axes[i] < DMLC_MAX_RANK)
      mask |= 1u << axes[i];
  return mask;
}

uint32_t dmlc_mask_axes(uint32_t mask, uint32_t *axes) {
  uint32_t n = 0;
  for (uint32_t d = 0; d < DMLC_MAX_RANK; d++)
    if (dmlc_mask_has_axis(mask, d))
      axes[n++] = d;
  return n;
}

uint64_t dmlc_type_num_elements(const dmlc_type *t) {
  uint64_t n = 1;
  for (uint32_t i = 0; i < t->rank; i++)
    n *= t->dims[i];
  return n;
}

bool dmlc_type_equal(const dmlc_type *a, const dmlc_type *b) {
  if (a->dtype != b->dtype || a->rank != b->rank)
    return false;
  for (uint32_t i = 0; i < a->rank; i++)
    if (a->dims[i] != b->dims[i])
      return false;
  return true;
}

void dmlc_packed_strides(const dmlc_type *t, uint64_t *strides) {
  uint64_t s = 1;
  for (uint32_t i = t->rank; i-- > 0;) {
    strides[i] = s;
    s *= t->dims[i];
  }
}

uint64_t dmlc_min_size_bytes(const dmlc_type *t, const uint64_t *strides) {
  /* dims <= 2^32-1 and strides <= 2^32-1 (DirectML's UINT) keep each product
   * below 2^64; the sum of 8 of them saturates rather than wrapping. */
  uint64_t last = 0;
  for (uint32_t i = 0; i < t->rank; i++) {
    const uint64_t term = (uint64_t)(t->dims[i] - 1) * strides[i];
    last = (last > UINT64_MAX - term) ? UINT64_MAX : last + term;
  }
  const uint64_t esize = dmlc_dtype_size(t->dtype);
  if (last >= UINT64_MAX / esize - 4)
    return UINT64_MAX;
  return ((last + 1) * esize + 3) & ~UINT64_C(3);
}

uint64_t dmlc_layout_extent_bytes(const dmlc_type *t, const uint64_t *strides) {
  const uint64_t rounded = dmlc_min_size_bytes(t, strides);
  if (rounded == UINT64_MAX)
    return UINT64_MAX;
  uint64_t last = 0;
  for (uint32_t i = 0; i < t->rank; i++)
    last += (uint64_t)(t->dims[i] - 1) * strides[i]; /* no overflow: rounded is finite */
  return (last + 1) * dmlc_dtype_size(t->dtype);
}

uint64_t dmlc_layout_needed_bytes(const dmlc_type *t, const dmlc_layout *l) {
  return l->size_declared ? l->size_bytes : dmlc_layout_extent_bytes(t, l->strides);
}

dmlc_layout dmlc_layout_packed(const dmlc_type *t) {
  dmlc_layout l;
  memset(&l, 0, sizeof l);
  dmlc_packed_strides(t, l.strides);
  l.size_bytes = dmlc_min_size_bytes(t, l.strides);
  return l;
}

bool dmlc_layout_is_packed(const dmlc_type *t, const dmlc_layout *l) {
  uint64_t packed[DMLC_MAX_RANK];
  dmlc_packed_strides(t, packed);
  for (uint32_t i = 0; i < t->rank; i++)
    if (t->dims[i] > 1 && l->strides[i] != packed[i])
      return false;
  return true;
}

bool dmlc_strides_disjoint(const dmlc_type *t, const uint64_t *strides) {
  uint32_t order[DMLC_MAX_RANK];
  uint32_t n = 0;
  for (uint32_t i = 0; i < t->rank; i++) {
    if (strides[i] == 0)
      return false;
    if (t->dims[i] > 1)
      order[n++] = i;
  }
  for (uint32_t i = 1; i < n; i++) /* insertion sort by stride */
    for (uint32_t j = i; j > 0 && strides[order[j]] < strides[order[j - 1]]; j--) {
      const uint32_t tmp = order[j];
      order[j] = order[j - 1];
      order[j - 1] = tmp;
    }
  uint64_t span = 0; /* largest offset reachable with the smaller strides */
  for (uint32_t k = 0; k < n; k++) {
    const uint32_t d = order[k];
    if (strides[d] <= span)
      return false;
    span += strides[d] * (t->dims[d] - 1);
  }
  return true;
}

uint64_t dmlc_dtype_bits_from_i64(dmlc_dtype dtype, int64_t value) {
  const dmlc_dtype_info *info = &dtype_table[dtype];
  if (info->kind == DMLC_KIND_BOOL)
    return value != 0;
  if (info->kind != DMLC_KIND_FLOAT) {
    const uint64_t u = (uint64_t)value;
    return info->size == 8 ? u : u & ((UINT64_C(1) << (info->size * 8)) - 1);
  }
  switch (info->size) {
  case 2:
    /* (float)value is exact below 2^24 and rounds to inf in f16 above it:
     * one rounding either way. */
    return dmlc_f32_to_f16((float)value);
  case 4: {
    const float f = (float)value;
    uint32_t b;
    memcpy(&b, &f, sizeof b);
    return b;
  }
  default: {
    const double d = (double)value;
    uint64_t b;
    memcpy(&b, &d, sizeof b);
    return b;
  }
  }
}

int64_t dmlc_dtype_i64_from_bits(dmlc_dtype dtype, uint64_t bits) {
  const dmlc_dtype_info *info = &dtype_table[dtype];
  const uint32_t width = info->size * 8;
  if (width >= 64)
    return (int64_t)bits;
  const uint64_t mask = (UINT64_C(1) << width) - 1;
  bits &= mask;
  if (info->kind == DMLC_KIND_SIGNED && (bits >> (width - 1)))
    bits |= ~mask;
  return (int64_t)bits;
}

double dmlc_dtype_f64_from_bits(dmlc_dtype dtype, uint64_t bits) {
  const dmlc_dtype_info *info = &dtype_table[dtype];
  const uint32_t mbits = info->mantissa_bits, ebits = info->exponent_bits;
  const int bias = (1 << (ebits - 1)) - 1;
  const uint64_t mant = bits & ((UINT64_C(1) << mbits) - 1);
  const uint32_t exp = (uint32_t)(bits >> mbits) & ((1u << ebits) - 1);
  const double sign = (bits >> (mbits + ebits)) & 1 ? -1.0 : 1.0;
  double mag;
  if (exp == (1u << ebits) - 1 && mant != 0) {
    const uint64_t nan = UINT64_C(0x7ff8000000000000) | (mant << (52 - mbits));
    memcpy(&mag, &nan, sizeof mag);
  } else if (exp == (1u << ebits) - 1) {
    mag = INFINITY;
  } else if (exp == 0) { /* zero or subnormal: exact in double */
    mag = ldexp((double)mant, 1 - bias - (int)mbits);
  } else {
    mag = ldexp((double)(mant | (UINT64_C(1) << mbits)), (int)exp - bias - (int)mbits);
  }
  return copysign(mag, sign);
}
