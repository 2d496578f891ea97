/* Short packed rows: space [K, R] with R from 2 to SMALL_MAX_LEN and rows
 * packed one after another (the read's strides [R, 1]): the channel argmax
 * of NHWC images (R = 3 or 4), small classifiers. One row is too short for
 * a vector; instead a group of G rows is loaded as one vector of G * R
 * elements and de-interleaved by shuffles into R vectors, vector c holding
 * element c of each of the G rows (LLVM lowers strided shuffles of a wide
 * load to its interleaved-access sequences). The R vectors are then merged
 * in order, lane by lane, as a column reduction is: each lane is one row,
 * so the sequential rule is exact. Rows left over after the last whole
 * group are reduced one at a time by the row code. With vectors under 64
 * bytes and index outputs only, the longer of these rows go to the row
 * groups instead (ec_rows_as_groups: 8- and 16-bit rows of 8 bytes or
 * more, 32- and 64-bit rows over 16), whose cost a row does not grow with
 * the row as the de-interleaving's does. */
#include "codegen/llvm/emit_internal.h"

enum {
  SMALL_MAX_LEN = 32,         /* rows up to this long */
  SMALL_MAX_ELEMS = 256,      /* elements one group loads at most (G * R) */
  SMALL_GROUPS_PER_TASK = 64, /* groups a task runs */
  SMALL_AHEAD_BYTES = 2048    /* how far ahead groups from DRAM prefetch (group_loop) */
};

_Static_assert((int)SMALL_MAX_ELEMS <= (int)EC_MAX_LANES, "a group's load is within EC_MAX_LANES");

bool ec_small_rows_matches(const dmlc_kdesc *k) {
  if (!k->has_reduction || k->rank != 2 || k->reduced_mask != 2u)
    return false;
  const uint32_t len = k->dims[1];
  if (len < 2 || len > SMALL_MAX_LEN || k->read_strides[1] != 1 || k->read_strides[0] != len)
    return false;
  for (uint32_t i = 0; i < k->num_outputs; i++) {
    const dmlc_kout *o = &k->outputs[i];
    /* ONEHOT (hardmax) when packed like the read: written group by group */
    if (o->kind != DMLC_KOUT_INDEX &&
        !(o->kind == DMLC_KOUT_ONEHOT && o->strides[0] == len && o->strides[1] == 1))
      return false;
  }
  return true;
}

/* Whether f16 rows are compared as i16 keys (ec_f16_key, i8 indices,
 * twice the rows a group) rather than widened to f32: without F16C
 * (soft_half: the widening is integer work), with 64-byte vectors, and
 * for rows over 16 elements. Alternated on a Zen 5, one thread, keys over
 * widened as time: SSE4.2 (soft_half) [*,3..32] 0.29-0.46; AVX-512
 * [*,3] 0.79-0.82, [*,4..32] 0.55-0.72, [*,2] a tie; AVX2 [*,24] and
 * [*,32] 0.59-0.65, [*,21] a tie, [*,2..16] 1.0-1.37 (the 16-bit
 * de-interleaving shuffles of 32-byte vectors cost more than the f32
 * ones). */
static bool small_keys(const emit_ctx *e) {
  return e->k->read_dtype == DMLC_DTYPE_F16 &&
         (e->soft_half || e->vector_bytes >= 64 || e->k->dims[1] > 16);
}

/* Rows per group: the compare type's vector lanes, fewer (a power of 2,
 * at least 4) when the group would load more than SMALL_MAX_ELEMS. */
static uint32_t group_rows(const emit_ctx *e, uint32_t len) {
  const dmlc_dtype dt = e->k->read_dtype;
  const uint32_t cmp = dt == DMLC_DTYPE_F16 && !small_keys(e) ? 4 : dmlc_dtype_size(dt);
  uint32_t g = e->vector_bytes / cmp;
  while (g > 4 && g * len > SMALL_MAX_ELEMS)
    g /= 2;
  return g;
}

/* Whether one-hot output i (packed as the read: ec_small_rows_matches) of
 * groups of g rows is stored non-temporally where aligned: large beside
 * the caches (ec_output_nt), each group's store a whole number of
 * vectors. A hardmax's one-hots are as large as its read. Alternated on a
 * Zen 3 (AVX2, two threads, 160 MB read and written), with over without
 * as time: f32 [*,3] 0.64-0.85, [*,10] 0.67-0.85, [*,21] 0.45-0.60. */
static bool onehot_nt(const emit_ctx *e, uint32_t i, uint32_t g) {
  const dmlc_kout *o = &e->k->outputs[i];
  const uint64_t len = e->k->dims[1], bytes = g * len * dmlc_dtype_size(o->dtype);
  return o->kind == DMLC_KOUT_ONEHOT && ec_output_nt(e, i) && bytes % e->vector_bytes == 0;
}

/* The AND of the alignment tests of the outputs stored non-temporally
 * (ec_index_nt_aligned's, onehot_nt's), or NULL where none is. */
static LLVMValueRef small_nt_aligned(emit_ctx *e, uint32_t g) {
  LLVMValueRef all = ec_index_nt_aligned(e, g);
  for (uint32_t i = 0; i < e->k->num_outputs; i++) {
    if (!onehot_nt(e, i, g))
      continue;
    LLVMValueRef al =
        ec_is_aligned(e, e->k->outputs[i].dtype, e->out[i], ec_i64(e, 0), e->vector_bytes);
    all = all ? LLVMBuildAnd(e->b, all, al, "") : al;
  }
  return all;
}

void ec_store_row_indices(emit_ctx *e, LLVMValueRef row, LLVMValueRef idx, uint32_t g, bool nt) {
  const dmlc_kdesc *k = e->k;
  const uint32_t len = k->dims[1];
  for (uint32_t i = 0; i < k->num_outputs; i++) {
    const dmlc_kout *o = &k->outputs[i];
    LLVMValueRef base = ec_mul(e, row, o->strides[0]);
    if (o->kind == DMLC_KOUT_ONEHOT) {
      const uint32_t n = g * len;
      LLVMValueRef spread[SMALL_MAX_ELEMS], pos[SMALL_MAX_ELEMS];
      for (uint32_t l = 0; l < g; l++)
        for (uint32_t c = 0; c < len; c++) {
          spread[l * len + c] = ec_i32(e, l);
          pos[l * len + c] = ec_i32(e, c);
        }
      LLVMValueRef wide = LLVMBuildShuffleVector(e->b, idx, LLVMGetPoison(LLVMTypeOf(idx)),
                                                 LLVMConstVector(spread, n), "");
      LLVMValueRef hit = LLVMBuildICmp(e->b, LLVMIntEQ, wide, LLVMConstVector(pos, n), "");
      LLVMValueRef v = LLVMBuildSelect(e->b, hit, ec_splat(e, ec_const_elem(e, o->dtype, 1), n),
                                       ec_splat(e, ec_const_elem(e, o->dtype, 0), n), "");
      if (nt && onehot_nt(e, i, g))
        ec_store_nt(e, o->dtype, e->out[i], base, v);
      else
        ec_store(e, o->dtype, e->out[i], base, v);
      continue;
    }
    if (o->strides[0] == 1) {
      LLVMValueRef v = ec_convert(e, idx, DMLC_DTYPE_U32, o->dtype);
      if (nt && ec_index_nt(e, i))
        ec_store_nt(e, o->dtype, e->out[i], base, v);
      else
        ec_store(e, o->dtype, e->out[i], base, v);
      continue;
    }
    for (uint32_t l = 0; l < g; l++) {
      LLVMValueRef x = LLVMBuildExtractElement(e->b, idx, ec_i32(e, l), "");
      ec_store(e, o->dtype, e->out[i], ec_add(e, base, ec_i64(e, (uint64_t)l * o->strides[0])),
               ec_convert(e, x, DMLC_DTYPE_U32, o->dtype));
    }
  }
}

/* The group's indices: i8 for 8- and 16-bit values (a row is at most
 * SMALL_MAX_LEN long), so a compare's mask selects them without being
 * widened to 32-bit lanes first, and they widen to u32 once, at the store
 * (u8 rows under AVX2: one VPBLENDVB and four VPMOVZXBD for 32 rows);
 * i32 for wider values, whose masks are that wide already. Alternated,
 * i8 over i32: u8 [4194304,3] 0.6-0.8 of the time under AVX2, 0.78 under
 * SSE4.2, u8 [*,21] 0.8, u16 [*,4] 0.83 under AVX2, the rest ties; i16
 * indices beside i16 values lost 1.5x under AVX2 (a register choice put
 * a false dependency across iterations). */
static LLVMTypeRef index_type(emit_ctx *e) {
  const dmlc_dtype dt = e->k->read_dtype;
  return (dt != DMLC_DTYPE_F16 || small_keys(e)) && dmlc_dtype_size(dt) <= 2
             ? LLVMInt8TypeInContext(e->c)
             : e->i32;
}

_Static_assert(SMALL_MAX_LEN <= 127, "a row's index fits an i8");

/* Groups [g0, g1) of G rows each. */
static void group_loop(emit_ctx *e, LLVMValueRef g0, LLVMValueRef g1, uint32_t g, bool nt) {
  const uint32_t len = e->k->dims[1];
  LLVMTypeRef et = index_type(e);
  LLVMTypeRef it = LLVMVectorType(et, g);
  ec_loop lg;
  LLVMValueRef gi = ec_loop_begin(e, &lg, g0, g1, 1);
  LLVMValueRef row = ec_mul(e, gi, g), off = ec_mul(e, row, len);
  /* From DRAM on vectors under 64 bytes (64 not measured), the group's
   * lines are prefetched SMALL_AHEAD_BYTES ahead as it begins. Alternated
   * on a Zen 3 (two threads), with over without as time: AVX2 f32
   * [*,10] 0.79-0.83, [*,12] 0.78, [*,16] 0.71, i32 [*,6] 0.81, f16
   * [*,3] 0.90, u8 [*,3] 0.84, [*,5] 0.95, i16 [*,2] 0.93, i64 [*,4]
   * 0.95; SSE4.2 f32 [*,10] 0.83, [*,12] 0.82, u8 [*,5] 0.95. 1 KiB ahead
   * gained less (f32 [*,10] 0.87, [*,16] 0.79), 4 KiB about as much. */
  if (e->from_dram && e->prefetch_bytes && e->target_vector_bytes < 64)
    ec_prefetch_span(e, off, (uint64_t)g * len * dmlc_dtype_size(e->k->read_dtype),
                     SMALL_AHEAD_BYTES);
  /* f16 widened as loaded: one conversion of contiguous elements */
  LLVMValueRef wide =
      small_keys(e) ? ec_load_read_key(e, off, g * len) : ec_load_read_cmp(e, off, g * len);
  LLVMValueRef best = NULL, idx = LLVMConstNull(it);
  for (uint32_t c = 0; c < len; c++) {
    LLVMValueRef mask[64];
    for (uint32_t l = 0; l < g; l++)
      mask[l] = ec_i32(e, c + l * len);
    LLVMValueRef v = LLVMBuildShuffleVector(e->b, wide, LLVMGetPoison(LLVMTypeOf(wide)),
                                            LLVMConstVector(mask, g), "");
    if (c == 0) {
      best = v;
      continue;
    }
    LLVMValueRef take = ec_take_next(e, v, best);
    best = LLVMBuildSelect(e->b, take, v, best, "");
    idx = LLVMBuildSelect(e->b, take, ec_splat(e, LLVMConstInt(et, c, false), g), idx, "");
  }
  if (et != e->i32)
    idx = LLVMBuildZExt(e->b, idx, LLVMVectorType(e->i32, g), "");
  ec_store_row_indices(e, row, idx, g, nt);
  ec_loop_end(e, &lg);
}

/* Reduces packed rows [first, rows) one at a time (ec_reduce_row) and
 * stores their outputs: the rows after a kernel's last whole group. */
static void rows_one_by_one(emit_ctx *e, uint64_t first, uint64_t rows) {
  const dmlc_kdesc *k = e->k;
  const uint32_t len = k->dims[1];
  ec_loop lr;
  LLVMValueRef r = ec_loop_begin(e, &lr, ec_i64(e, first), ec_i64(e, rows), 1);
  LLVMValueRef val, j;
  ec_reduce_row(e, ec_mul(e, r, len), len, &val, &j);
  (void)val;
  for (uint32_t i = 0; i < k->num_outputs; i++) {
    const dmlc_kout *o = &k->outputs[i];
    LLVMValueRef off = ec_mul(e, r, o->strides[0]);
    if (o->kind == DMLC_KOUT_ONEHOT) {
      ec_fill(e, o->dtype, e->out[i], off, ec_i64(e, len), 1, ec_const_elem(e, o->dtype, 0));
      ec_store(e, o->dtype, e->out[i], ec_add(e, off, j), ec_const_elem(e, o->dtype, 1));
    } else {
      ec_store(e, o->dtype, e->out[i], off, ec_convert(e, j, DMLC_DTYPE_U64, o->dtype));
    }
  }
  ec_loop_end(e, &lr);
}

void ec_group_tasks(emit_ctx *e, LLVMValueRef begin, LLVMValueRef end, uint32_t per_task,
                    uint32_t g, LLVMValueRef aligned, ec_group_fn fn, void *arg) {
  const uint64_t rows = e->k->dims[0], groups = rows / g;
  const uint64_t tasks = (rows + (uint64_t)g * per_task - 1) / ((uint64_t)g * per_task);
  ec_loop lt;
  LLVMValueRef t = ec_loop_begin(e, &lt, begin, end, 1);
  /* this task's whole groups, then (the last task) the rows after them */
  LLVMValueRef g0 = ec_mul(e, t, per_task);
  LLVMValueRef g1 = ec_add(e, g0, ec_i64(e, per_task));
  LLVMValueRef over = LLVMBuildICmp(e->b, LLVMIntUGT, g1, ec_i64(e, groups), "");
  g1 = LLVMBuildSelect(e->b, over, ec_i64(e, groups), g1, "");
  if (aligned) {
    ec_if fa;
    ec_if_begin(e, &fa, aligned);
    fn(e, g0, g1, true, arg);
    ec_if_else(e, &fa);
    fn(e, g0, g1, false, arg);
    ec_if_end(e, &fa);
  } else {
    fn(e, g0, g1, false, arg);
  }
  if (groups * g < rows) {
    LLVMValueRef is_last = LLVMBuildICmp(e->b, LLVMIntEQ, t, ec_i64(e, tasks - 1), "");
    ec_if f;
    ec_if_begin(e, &f, is_last);
    rows_one_by_one(e, groups * g, rows);
    ec_if_else(e, &f);
    ec_if_end(e, &f);
  }
  ec_loop_end(e, &lt);
}

/* group_loop for ec_group_tasks (arg: the rows a group). */
static void small_group_loop(emit_ctx *e, LLVMValueRef g0, LLVMValueRef g1, bool nt, void *arg) {
  group_loop(e, g0, g1, *(const uint32_t *)arg, nt);
}

dmlc_status ec_emit_small_rows(emit_ctx *e, const char *name, dmlc_cpu_kernel_info *info) {
  const dmlc_kdesc *k = e->k;
  const dmlc_dtype dt = k->read_dtype;
  const uint32_t len = k->dims[1];
  const uint64_t rows = k->dims[0];
  uint32_t g = group_rows(e, len);
  const uint64_t rows_per_task = (uint64_t)g * SMALL_GROUPS_PER_TASK;
  const uint64_t tasks = (rows + rows_per_task - 1) / rows_per_task;

  LLVMValueRef begin, end;
  ec_function_begin(e, name, true, &begin, &end);
  /* non-temporal stores when every such output is aligned for them */
  ec_group_tasks(e, begin, end, SMALL_GROUPS_PER_TASK, g, small_nt_aligned(e, g), small_group_loop,
                 &g);
  ec_function_end(e);

  uint64_t out_bytes = 0;
  for (uint32_t i = 0; i < k->num_outputs; i++)
    out_bytes +=
        dmlc_dtype_size(k->outputs[i].dtype) * (k->outputs[i].kind == DMLC_KOUT_ONEHOT ? len : 1);
  info->num_tasks = tasks;
  info->bytes_per_task = rows_per_task * (len * (uint64_t)dmlc_dtype_size(dt) + out_bytes);
  return DMLC_OK;
}
