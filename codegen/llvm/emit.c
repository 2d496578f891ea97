/* Kernel descriptions -> LLVM IR: picks one of the loop structures
 * (emit_row.c, emit_column.c, emit_merge.c, emit_generic.c) for a kdesc. */
#include "codegen/llvm/emit.h"

#include <string.h>

#include "codegen/llvm/emit_internal.h"

void ec_function_begin(emit_ctx *e, const char *name, bool ranged, LLVMValueRef *begin,
                       LLVMValueRef *end) {
  LLVMTypeRef params[3] = {e->ptr, e->i64, e->i64};
  LLVMTypeRef fty = LLVMFunctionType(e->void_t, params, ranged ? 3 : 1, false);
  e->fn = LLVMAddFunction(e->m, name, fty);
  const unsigned nounwind = LLVMGetEnumAttributeKindForName("nounwind", 8);
  LLVMAddAttributeAtIndex(e->fn, LLVMAttributeFunctionIndex,
                          LLVMCreateEnumAttribute(e->c, nounwind, 0));
  e->entry = LLVMAppendBasicBlockInContext(e->c, e->fn, "entry");
  LLVMBasicBlockRef start = LLVMAppendBasicBlockInContext(e->c, e->fn, "start");
  LLVMPositionBuilderAtEnd(e->entry_b, e->entry);
  LLVMPositionBuilderAtEnd(e->b, start);

  /* Buffer pointers: read, outputs, scratch (cpu_kernel.h). */
  LLVMValueRef buffers = LLVMGetParam(e->fn, 0);
  const uint32_t n = e->k->num_outputs;
  for (uint32_t i = 0; i < n + 2; i++) {
    if (i == n + 1 && !e->use_scratch)
      break;
    LLVMValueRef idx = ec_i64(e, i);
    LLVMValueRef slot = LLVMBuildGEP2(e->entry_b, e->ptr, buffers, &idx, 1, "");
    LLVMValueRef p = LLVMBuildLoad2(e->entry_b, e->ptr, slot, "buf");
    if (i == 0)
      e->read = p;
    else if (i <= n)
      e->out[i - 1] = p;
    else
      e->scratch = p;
  }
  if (ranged) {
    *begin = LLVMGetParam(e->fn, 1);
    *end = LLVMGetParam(e->fn, 2);
  }
}

void ec_function_end(emit_ctx *e) {
  ec_nt_fence(e);
  e->nt_used = false;
  LLVMBuildRetVoid(e->b);
  LLVMBuildBr(e->entry_b, LLVMGetNextBasicBlock(e->entry));
}

static dmlc_status check(const dmlc_kdesc *k, dmlc_diag *diag) {
  if (k->rank < 1 || k->rank > DMLC_MAX_RANK || k->num_outputs < 1 ||
      k->num_outputs > DMLC_KDESC_MAX_OUTPUTS)
    return dmlc_diag_set(diag, DMLC_ERROR_INTERNAL, "llvm emit: malformed kernel description");
  if (k->has_reduction && (k->reduced_mask == 0 || !k->has_read ||
                           (k->reduction != DMLC_OP_ARGMAX && k->reduction != DMLC_OP_ARGMIN)))
    return dmlc_diag_set(diag, DMLC_ERROR_INTERNAL, "llvm emit: malformed reduction");
  if (k->has_reduction && !dmlc_dtype_is_float(k->read_dtype) &&
      !dmlc_dtype_is_integer(k->read_dtype))
    return dmlc_diag_set(diag, DMLC_ERROR_UNSUPPORTED, "llvm emit: cannot reduce %s",
                         dmlc_dtype_name(k->read_dtype));
  for (uint32_t i = 0; i < k->num_outputs; i++) {
    const dmlc_kout *o = &k->outputs[i];
    if ((o->kind == DMLC_KOUT_INDEX || o->kind == DMLC_KOUT_ONEHOT) && !k->has_reduction)
      return dmlc_diag_set(diag, DMLC_ERROR_INTERNAL, "llvm emit: output needs a reduction");
    if (o->kind == DMLC_KOUT_COPY && !k->has_read)
      return dmlc_diag_set(diag, DMLC_ERROR_INTERNAL, "llvm emit: copy without a read");
  }
  return DMLC_OK;
}

/* The paths with vector code: rows, columns, merged rows, merged columns. */
static bool has_vector_path(const dmlc_kdesc *k) {
  return ec_small_rows_matches(k) || ec_row_matches(k) || ec_column_matches(k) ||
         ec_merged_rows_matches(k) || ec_merged_columns_matches(k);
}

/* The index's weight of each of k's reduced dims (0 on kept ones): the
 * index counts them row-major. False when the product overflows (w then
 * wraps). */
static bool index_weights(const dmlc_kdesc *k, uint64_t *w) {
  uint64_t acc = 1;
  bool ok = true;
  for (uint32_t d = k->rank; d-- > 0;) {
    w[d] = 0;
    if (dmlc_mask_has_axis(k->reduced_mask, d)) {
      w[d] = acc;
      ok &= !__builtin_mul_overflow(acc, (uint64_t)k->dims[d], &acc);
    }
  }
  return ok;
}

/* k with its dims in the read's storage order (largest stride outermost,
 * broadcast dims outside all), then adjacent dims of one kind merged where
 * the read and every output are contiguous across them: a transposed or
 * permuted read becomes a layout the vector paths take. The index counts
 * the reduced dims row-major in k's order: weights[d] is what a step along
 * out's dim d adds to it (reduced dims; two merge only when their weights
 * do too), and *reordered says whether out's reduced dims are in another
 * order than k's (the paths that count the index in their own order of
 * reading cannot take out then). No reordering at all: false. */
static bool storage_order(const dmlc_kdesc *k, dmlc_kdesc *out, uint64_t *weights,
                          bool *reordered) {
  uint32_t order[DMLC_MAX_RANK];
  for (uint32_t d = 0; d < k->rank; d++)
    order[d] = d;
  /* insertion sort, stable: outer first */
  for (uint32_t i = 1; i < k->rank; i++) {
    const uint32_t d = order[i];
    const uint64_t sd = k->read_strides[d] ? k->read_strides[d] : UINT64_MAX;
    uint32_t j = i;
    for (; j > 0; j--) {
      const uint32_t p = order[j - 1];
      const uint64_t sp = k->read_strides[p] ? k->read_strides[p] : UINT64_MAX;
      if (sp >= sd)
        break;
      order[j] = p;
    }
    order[j] = d;
  }
  uint64_t w[DMLC_MAX_RANK];
  if (!index_weights(k, w))
    return false;
  int32_t last_reduced = -1;
  bool moved = false;
  *reordered = false;
  for (uint32_t i = 0; i < k->rank; i++) {
    moved |= order[i] != i;
    if (dmlc_mask_has_axis(k->reduced_mask, order[i])) {
      *reordered |= (int32_t)order[i] < last_reduced;
      last_reduced = (int32_t)order[i];
    }
  }
  if (!moved)
    return false;
  *out = *k;
  out->reduced_mask = 0;
  uint32_t n = 0;
  for (uint32_t i = 0; i < k->rank; i++) {
    const uint32_t d = order[i];
    const bool red = dmlc_mask_has_axis(k->reduced_mask, d);
    if (n > 0) {
      /* merge into the previous dim p when same kind and contiguous */
      const uint32_t p = n - 1;
      bool ok = red == dmlc_mask_has_axis(out->reduced_mask, p) &&
                (uint64_t)out->dims[p] * k->dims[d] <= UINT32_MAX &&
                out->read_strides[p] == k->read_strides[d] * k->dims[d] &&
                (!red || weights[p] == w[d] * k->dims[d]);
      for (uint32_t o = 0; ok && o < k->num_outputs; o++)
        ok = out->outputs[o].strides[p] == k->outputs[o].strides[d] * k->dims[d];
      if (ok) {
        out->dims[p] *= k->dims[d];
        out->read_strides[p] = k->read_strides[d];
        weights[p] = w[d];
        for (uint32_t o = 0; o < k->num_outputs; o++)
          out->outputs[o].strides[p] = k->outputs[o].strides[d];
        continue;
      }
    }
    out->dims[n] = k->dims[d];
    out->read_strides[n] = k->read_strides[d];
    weights[n] = w[d];
    for (uint32_t o = 0; o < k->num_outputs; o++)
      out->outputs[o].strides[n] = k->outputs[o].strides[d];
    if (red)
      out->reduced_mask |= 1u << n;
    n++;
  }
  out->rank = n;
  return true;
}

/* The read's scale: the least non-zero stride when every non-zero stride
 * is a multiple of it, else 1 (a read with an inner stride, every other
 * element: the kernel then reads with that stride as 1, ec_load's strided
 * vectors). */
static uint64_t read_scale(const dmlc_kdesc *k) {
  uint64_t least = 0;
  for (uint32_t d = 0; d < k->rank; d++)
    if (k->read_strides[d] && (!least || k->read_strides[d] < least))
      least = k->read_strides[d];
  if (least < 2)
    return 1;
  for (uint32_t d = 0; d < k->rank; d++)
    if (k->read_strides[d] % least)
      return 1;
  return least;
}

/* Columns (the innermost dim kept and contiguous: the column and merged
 * column paths) fewer than a vector's lanes: the vector bytes of the
 * widest vector they fill, down to 16, so the paths' vector code serves
 * them (every decision then as for that target) where the whole vector's
 * lanes left every column to the scalar tail: f32 [524288,8] over axis 0
 * 2.9 GB/s, [16,32,64,8] over {0, 2} 3 GB/s with 64-byte vectors. */
static uint32_t column_vector_bytes(const emit_ctx *e) {
  const dmlc_kdesc *k = e->k;
  const uint32_t last = k->rank - 1;
  uint32_t vb = e->vector_bytes;
  if (!k->has_reduction || dmlc_mask_has_axis(k->reduced_mask, last) || k->read_strides[last] != 1)
    return vb;
  const uint32_t size = dmlc_dtype_size(k->read_dtype);
  uint64_t unit; /* bytes of a column's lane */
  if (!e->reordered && !ec_row_matches(k) && ec_column_matches(k)) {
    if (ec_column_super_rows(k, vb) > 1)
      return vb; /* read as super rows of several vectors */
    unit = size; /* f16 as i16 keys */
  } else if (ec_merged_columns_matches(k)) {
    if (ec_merged_columns_super_rows(e, vb) > 1)
      return vb;                /* read as super rows of several vectors */
    unit = size < 4 ? 4 : size; /* compared as 32 bits or wider */
  } else
    return vb;
  if (k->dims[last] * unit < 16)
    return vb; /* not one 16-byte vector: no narrower vector helps */
  while (vb > 16 && vb > k->dims[last] * unit)
    vb /= 2;
  return vb;
}

dmlc_status dmlc_llvm_emit_kernel(LLVMModuleRef module, const dmlc_kdesc *k, const char *name,
                                  const dmlc_llvm_target *target, dmlc_cpu_kernel_info *info,
                                  dmlc_diag *diag) {
  DMLC_RETURN_IF_ERROR(check(k, diag));
  /* A read with no contiguous dim: its strides over the least of them */
  dmlc_kdesc scaled;
  const uint64_t scale = k->has_reduction && k->has_read ? read_scale(k) : 1;
  if (scale > 1) {
    scaled = *k;
    for (uint32_t d = 0; d < k->rank; d++)
      scaled.read_strides[d] /= scale;
    k = &scaled;
  }
  dmlc_kdesc permuted;
  uint64_t weights[DMLC_MAX_RANK];
  bool reordered = false;
  /* Reduced dims read in another order than the index counts them (a
   * transposed matrix reduced over both axes): merged rows or merged
   * columns, which can merge candidates by value and then index (the
   * index weighed by dim, e.index_weights). */
  if (k->has_reduction && !has_vector_path(k) && storage_order(k, &permuted, weights, &reordered) &&
      (reordered ? ec_merged_rows_matches(&permuted) || ec_merged_columns_matches(&permuted)
                 : has_vector_path(&permuted)))
    k = &permuted;
  else
    reordered = false;
  emit_ctx e;
  memset(&e, 0, sizeof e);
  e.read_scale = scale;
  e.reordered = reordered;
  if (reordered)
    memcpy(e.index_weights, weights, sizeof weights);
  else
    index_weights(k, e.index_weights); /* k's own order: no overflow read has memory for */
  e.c = LLVMGetModuleContext(module);
  e.m = module;
  e.k = k;
  e.vector_bytes = target && target->vector_bytes >= 16 ? target->vector_bytes : 16;
  e.target_vector_bytes = e.vector_bytes;
  e.nt_min_bytes = target ? target->nontemporal_min_bytes : 0;
  e.split_min_bytes = target ? target->split_min_bytes : 0;
  e.row_narrow_bytes = target ? target->row_narrow_bytes : 0;
  e.l2_bytes = target ? target->l2_bytes : 0;
  e.long_column_runs = target && target->long_column_runs;
  e.short_row_blocks = target && target->short_row_blocks;
  e.far_row_prefetch = target && target->far_row_prefetch;
  e.no_column_run_prefetch = target && target->no_column_run_prefetch;
  e.byte_permutes = target && target->byte_permutes;
  e.lane_rows = target && target->lane_rows;
  e.psign_bytes = target ? target->psign_bytes : 0;
  e.soft_half = target && target->soft_half;
  e.from_dram = target && k->has_read && ec_read_bytes(k) > target->stream_prefetch_max_bytes;
  if (target && k->has_read && ec_read_bytes(k) >= target->prefetch_min_bytes) {
    e.prefetch_bytes = target->prefetch_bytes;
    e.row_prefetch = !e.from_dram && (!target->row_prefetch_max_bytes ||
                                      ec_read_bytes(k) <= target->row_prefetch_max_bytes);
    /* Rows from DRAM otherwise leave their streams to the hardware
     * prefetcher, which on a Zen 5 held a row kernel under the plain loop:
     * bench_cpu, rounds alternated (ratio of the best call to the fastest
     * loop), without and with stream prefetches 16 KiB ahead, AVX-512:
     * f32 [8192,8192] rows 89-92% -> 97-103%, i8 83-95% -> 116-118%,
     * padded rows 84-86% -> 98-99%, the all-axes argmax 80-99% -> 118-142%,
     * [32768,1000] 92-104% -> 104-109%; AVX2 i8 rows 90-95% -> 145-150%,
     * padded 84-93% -> 96-97%; SSE4.2 i8 rows 92-95% -> 167-174%, padded
     * 80% -> 90-99%; hardmax rows, argmin over {0,2}, i64 rows within the
     * noise. 4 KiB ahead gained less (dmlc run, alternated: f32 rows 1.02-1.06
     * of the time without, 16 KiB 0.92-1.07; i8 rows 0.80-0.90 and
     * 0.65-0.75). */
    if (e.from_dram && e.far_row_prefetch) {
      e.row_prefetch = true;
      e.prefetch_bytes = EC_FAR_AHEAD_BYTES;
    }
  }
  e.b = LLVMCreateBuilderInContext(e.c);
  e.entry_b = LLVMCreateBuilderInContext(e.c);
  e.i1 = LLVMInt1TypeInContext(e.c);
  e.i8 = LLVMInt8TypeInContext(e.c);
  e.i16 = LLVMInt16TypeInContext(e.c);
  e.i32 = LLVMInt32TypeInContext(e.c);
  e.i64 = LLVMInt64TypeInContext(e.c);
  e.f16 = LLVMHalfTypeInContext(e.c);
  e.f32 = LLVMFloatTypeInContext(e.c);
  e.f64 = LLVMDoubleTypeInContext(e.c);
  e.ptr = LLVMPointerTypeInContext(e.c, 0);
  e.void_t = LLVMVoidTypeInContext(e.c);
  if (!ec_init_dtype_types(&e)) {
    LLVMDisposeBuilder(e.b);
    LLVMDisposeBuilder(e.entry_b);
    return dmlc_diag_set(diag, DMLC_ERROR_INTERNAL,
                         "llvm emit: a dtype's LLVM spelling in ir/dtypes.def is no LLVM type");
  }
  memset(info, 0, sizeof *info);

  /* Short rows in 16-byte lanes (emit_lanes.c, which leaves the permutes
   * the rows they serve faster), else by permutes; then packed rows that
   * 64-byte vectors served worse than a 32-byte target's row groups:
   * emitted as for that target, which every decision below then sees
   * (target_vector_bytes included) */
  const bool lane_rows = ec_lane_rows_matches(&e);
  const bool byte_rows = !lane_rows && ec_byte_rows_matches(&e);
  if (!byte_rows && !lane_rows && ec_narrow_rows(&e)) {
    e.vector_bytes = e.target_vector_bytes = e.row_narrow_bytes;
    e.narrowed_rows = true;
  } else {
    const uint32_t vb = column_vector_bytes(&e);
    e.narrowed_columns = vb < e.vector_bytes;
    e.vector_bytes = e.target_vector_bytes = vb;
  }
  dmlc_status st;
  if (!k->has_reduction)
    st = ec_emit_elementwise(&e, name, info);
  else if (byte_rows)
    st = ec_emit_byte_rows(&e, name, info);
  else if (lane_rows)
    st = ec_emit_lane_rows(&e, name, info);
  else if (e.reordered)
    st = ec_merged_rows_matches(k) ? ec_emit_merged_rows(&e, name, info)
                                   : ec_emit_merged_columns(&e, name, info);
  else if (ec_small_rows_matches(k) && !ec_rows_as_groups(&e))
    st = ec_emit_small_rows(&e, name, info);
  else if (ec_row_matches(k))
    st = ec_emit_row(&e, name, info);
  else if (ec_column_matches(k))
    st = ec_emit_column(&e, name, info);
  else if (ec_merged_rows_matches(k))
    st = ec_emit_merged_rows(&e, name, info);
  else if (ec_merged_columns_matches(k))
    st = ec_emit_merged_columns(&e, name, info);
  else
    st = ec_emit_generic(&e, name, info);
  LLVMDisposeBuilder(e.b);
  LLVMDisposeBuilder(e.entry_b);
  if (st != DMLC_OK)
    return dmlc_diag_set(diag, st, "llvm emit: kernel %s is not supported", name);
  return DMLC_OK;
}
