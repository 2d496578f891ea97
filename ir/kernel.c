/* Kernels' layout arithmetic: a tensor seen as a view over a kernel's
 * iteration space. fuse uses it to describe buffers, canonicalize-axes to
 * decide which dims can merge, the backends to index buffers. */
#include <string.h>

#include "ir/ir.h"

const dmlc_kernel_buffer *dmlc_kernel_reads(const dmlc_ir_graph *g, const dmlc_kernel *k) {
  return g->kernel_buffers + k->first_buffer;
}

const dmlc_kernel_buffer *dmlc_kernel_writes(const dmlc_ir_graph *g, const dmlc_kernel *k) {
  return g->kernel_buffers + k->first_buffer + k->num_reads;
}

/* Drops the dims of size 1; returns how many are left. */
static uint32_t squeeze(const uint32_t *dims, uint32_t rank, const uint64_t *strides,
                        uint32_t *out_dims, uint64_t *out_strides) {
  uint32_t n = 0;
  for (uint32_t i = 0; i < rank; i++) {
    if (dims[i] == 1)
      continue;
    out_dims[n] = dims[i];
    if (out_strides)
      out_strides[n] = strides[i];
    n++;
  }
  return n;
}

bool dmlc_view_strides(const uint32_t *dims, uint32_t rank, const uint64_t *strides,
                       const uint32_t *to_dims, uint32_t to_rank, uint64_t *to_strides) {
  uint32_t od[DMLC_MAX_RANK], nd[DMLC_MAX_RANK], where[DMLC_MAX_RANK];
  uint64_t os[DMLC_MAX_RANK], ns[DMLC_MAX_RANK];
  const uint32_t on = squeeze(dims, rank, strides, od, os);
  uint32_t nn = 0;
  for (uint32_t j = 0; j < to_rank; j++) {
    to_strides[j] = 0;
    if (to_dims[j] != 1) {
      where[nn] = j;
      nd[nn++] = to_dims[j];
    }
  }
  /* Walk both lists in groups of equal element count: old dims oi..oj-1
   * hold the same elements as new dims ni..nj-1. */
  uint32_t oi = 0, ni = 0;
  while (oi < on && ni < nn) {
    uint32_t oj = oi + 1, nj = ni + 1;
    uint64_t op = od[oi], np = nd[ni];
    while (op != np) {
      if (op < np) {
        if (oj == on)
          return false;
        op *= od[oj++];
      } else {
        if (nj == nn)
          return false;
        np *= nd[nj++];
      }
    }
    for (uint32_t k = oi; k + 1 < oj; k++) /* the old group must be contiguous */
      if (os[k] != os[k + 1] * od[k + 1])
        return false;
    ns[nj - 1] = os[oj - 1];
    for (uint32_t k = nj - 1; k > ni; k--)
      ns[k - 1] = ns[k] * nd[k];
    oi = oj;
    ni = nj;
  }
  if (oi != on || ni != nn)
    return false;
  for (uint32_t j = 0; j < nn; j++)
    to_strides[where[j]] = ns[j];
  return true;
}

void dmlc_kernel_set_space(dmlc_kernel *k, const dmlc_type *t, uint32_t axes_mask) {
  k->rank = 0;
  k->reduced_mask = 0;
  memset(k->dims, 0, sizeof k->dims);
  for (uint32_t i = 0; i < t->rank; i++) {
    if (t->dims[i] == 1)
      continue;
    if (dmlc_mask_has_axis(axes_mask, i))
      k->reduced_mask |= 1u << k->rank;
    k->dims[k->rank++] = t->dims[i];
  }
  if (k->rank == 0)
    k->dims[k->rank++] = 1;
}

uint64_t dmlc_kernel_num_points(const dmlc_kernel *k) {
  uint64_t n = 1;
  for (uint32_t d = 0; d < k->rank; d++)
    n *= k->dims[d];
  return n;
}

uint64_t dmlc_kernel_num_kept_points(const dmlc_kernel *k) {
  uint64_t n = 1;
  for (uint32_t d = 0; d < k->rank; d++)
    n *= dmlc_mask_has_axis(k->reduced_mask, d) ? 1 : k->dims[d];
  return n;
}

/* Row-major strides over the dims selected by want_reduced, 0 elsewhere and
 * on dims of size 1. */
static void packed_over(const dmlc_kernel *k, bool want_reduced, bool all, uint64_t *strides) {
  uint64_t s = 1;
  for (uint32_t d = k->rank; d-- > 0;) {
    const bool take = all || dmlc_mask_has_axis(k->reduced_mask, d) == want_reduced;
    strides[d] = take && k->dims[d] > 1 ? s : 0;
    if (take)
      s *= k->dims[d];
  }
}

void dmlc_kernel_dense_strides(const dmlc_kernel *k, bool reduced, uint64_t *strides) {
  packed_over(k, false, !reduced, strides);
}

void dmlc_kernel_reduced_index_strides(const dmlc_kernel *k, uint64_t *strides) {
  packed_over(k, true, false, strides);
}

bool dmlc_kernel_view(const dmlc_kernel *k, bool reduced, const uint32_t *dims, uint32_t rank,
                      const uint64_t *strides, uint64_t *out) {
  if (!reduced)
    return dmlc_view_strides(dims, rank, strides, k->dims, k->rank, out);
  uint32_t kept[DMLC_MAX_RANK], where[DMLC_MAX_RANK], n = 0;
  for (uint32_t d = 0; d < k->rank; d++)
    if (!dmlc_mask_has_axis(k->reduced_mask, d)) {
      where[n] = d;
      kept[n++] = k->dims[d];
    }
  uint64_t kept_strides[DMLC_MAX_RANK];
  const uint32_t one = 1;
  if (!dmlc_view_strides(dims, rank, strides, n ? kept : &one, n ? n : 1, kept_strides))
    return false;
  for (uint32_t d = 0; d < k->rank; d++)
    out[d] = 0;
  for (uint32_t j = 0; j < n; j++)
    out[where[j]] = kept_strides[j];
  return true;
}
