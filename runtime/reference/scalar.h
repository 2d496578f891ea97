/* One element of any dmlc data type, held exactly: floats as double (f16 and
 * f32 widen exactly), signed integers as int64, unsigned integers and bool
 * as uint64. The reference evaluator loads, compares and converts elements
 * through this and nothing else, so every rule about values lives here. */
#ifndef DMLC_RUNTIME_REFERENCE_SCALAR_H
#define DMLC_RUNTIME_REFERENCE_SCALAR_H

#include <stdbool.h>
#include <stdint.h>

#include "ir/ir.h"

typedef struct dmlc_scalar {
  dmlc_kind kind; /* DMLC_KIND_BOOL is held in u, as 0 or 1 */
  union {
    double f;
    int64_t i;
    uint64_t u;
  } v;
} dmlc_scalar;

dmlc_scalar dmlc_scalar_from_i64(int64_t i);
dmlc_scalar dmlc_scalar_from_u64(uint64_t u);

/* The size-byte element at p (any alignment), zero-extended; and its
 * inverse, which writes the low size bytes of bits. Elements are in the
 * host's byte order. */
uint64_t dmlc_element_load_bits(const void *p, uint32_t size);
void dmlc_element_store_bits(void *p, uint32_t size, uint64_t bits);

/* Reads one element of dtype at p (any alignment). A bool byte that is not 0
 * reads as 1. */
dmlc_scalar dmlc_scalar_load(dmlc_dtype dtype, const void *p);

/* Writes s at p (any alignment) converted to dtype, the semantics of the
 * `cast` op:
 *  - to bool: 1 when s is not zero (NaN is not zero; -0.0 is zero);
 *  - integer to integer: wraps modulo 2^bits;
 *  - float to integer: truncates toward zero, saturates at the type's range,
 *    NaN gives 0;
 *  - to a float type: one rounding, to nearest, ties to even, from the exact
 *    value (no double rounding, f16 included). */
void dmlc_scalar_store(dmlc_dtype dtype, void *p, dmlc_scalar s);

/* Orders two elements of one dtype for argmax / argmin: -1, 0 or 1. NaN
 * is above every number when nan_high, below every number otherwise; NaNs
 * are equal to each other; -0.0 equals +0.0; integers compare natively. */
int dmlc_scalar_compare(dmlc_scalar a, dmlc_scalar b, bool nan_high);

/* IEEE equality of two elements of one dtype (NaN != NaN, -0.0 == +0.0). */
bool dmlc_scalar_equal(dmlc_scalar a, dmlc_scalar b);

/* binary64 -> binary16, rounded once to nearest even. */
uint16_t dmlc_scalar_f64_to_f16(double d);

#endif
