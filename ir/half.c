/* IEEE binary16 <-> binary32, exact in the widening direction and
 * round-to-nearest-even in the narrowing one; NaN payloads keep their top
 * bits and stay NaN. */
#include <string.h>

#include "ir/ir.h"

float dmlc_f16_to_f32(uint16_t h) {
  const uint32_t sign = (uint32_t)(h & 0x8000u) << 16;
  const uint32_t exp = (h >> 10) & 0x1fu;
  uint32_t mant = h & 0x3ffu;
  uint32_t bits;
  if (exp == 0x1f) {
    bits = sign | 0x7f800000u | (mant << 13);
  } else if (exp != 0) {
    bits = sign | ((exp + 112) << 23) | (mant << 13);
  } else if (mant == 0) {
    bits = sign;
  } else { /* subnormal: normalize */
    uint32_t e = 113;
    while (!(mant & 0x400u)) {
      mant <<= 1;
      e--;
    }
    bits = sign | (e << 23) | ((mant & 0x3ffu) << 13);
  }
  float f;
  memcpy(&f, &bits, sizeof f);
  return f;
}

uint16_t dmlc_f32_to_f16(float f) {
  uint32_t bits;
  memcpy(&bits, &f, sizeof bits);
  const uint16_t sign = (uint16_t)((bits >> 16) & 0x8000u);
  const uint32_t exp = (bits >> 23) & 0xffu;
  const uint32_t mant = bits & 0x7fffffu;
  if (exp == 0xff) /* inf or NaN (keep it a NaN) */
    return sign | 0x7c00u | (mant ? (0x200u | (mant >> 13)) : 0);
  const int32_t e = (int32_t)exp - 112; /* rebias to binary16 */
  if (e >= 0x1f)
    return sign | 0x7c00u;
  if (e <= 0) { /* subnormal or zero in binary16 */
    if (e < -10)
      return sign;
    const uint32_t m = mant | 0x800000u;
    const uint32_t shift = (uint32_t)(14 - e);
    uint32_t r = m >> shift;
    const uint32_t rem = m & ((1u << shift) - 1), half = 1u << (shift - 1);
    if (rem > half || (rem == half && (r & 1)))
      r++;
    return sign | (uint16_t)r;
  }
  uint32_t r = ((uint32_t)e << 10) | (mant >> 13);
  const uint32_t rem = mant & 0x1fffu;
  if (rem > 0x1000u || (rem == 0x1000u && (r & 1)))
    r++; /* may carry into the exponent, up to inf: correct */
  return sign | (uint16_t)r;
}
