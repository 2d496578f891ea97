/* dmlc_spirv_compile: choosing how a kernel maps onto workgroups, emitting
 * its shader, validating it (a failure is an internal compiler error that
 * carries the validator's message) and running the optimizer's performance
 * passes over it (keeping the unoptimized module if they fail). */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "codegen/spirv/emit_internal.h"

dmlc_spirv_caps dmlc_spirv_caps_minimal(void) {
  dmlc_spirv_caps c;
  memset(&c, 0, sizeof c);
  c.max_workgroup_size = 128;    /* maxComputeWorkGroupInvocations' minimum */
  c.max_workgroup_count = 65535; /* maxComputeWorkGroupCount[0]'s minimum */
  c.max_shared_bytes = 16384;    /* maxComputeSharedMemorySize's minimum */
  return c;
}

static uint32_t pow2_floor(uint64_t v) {
  uint32_t p = 1;
  while ((uint64_t)p * 2 <= v && p < (1u << 30))
    p *= 2;
  return p;
}

/* Reduced extents below this always take the small path: a workgroup would
 * mostly idle. */
#define LARGE_MIN_REDUCED 32
/* A column reduction (kept dim innermost) keeps one invocation per kept
 * point, which reads coalesced, unless there are too few kept points to
 * fill the device and many reduced points to split among a group. */
#define COLUMN_MIN_KEPT 4096
#define COLUMN_LARGE_MIN_REDUCED 256
#define MAX_LOCAL 256
/* Windowed vector columns: a loop per window, for at most this many. */
#define COLUMN_WINDOW_LOOPS 16
#define SMALL_LOCAL 128

static uint64_t max_offset(const dmlc_kdesc *k, const uint64_t *strides) {
  uint64_t off = 0;
  for (uint32_t d = 0; d < k->rank; d++)
    if (k->dims[d] > 1)
      off += (uint64_t)(k->dims[d] - 1) * strides[d];
  return off;
}

/* The bytes of a buffer the kernel can touch, from offset 0, rounded up to
 * a word. */
static uint64_t extent_bytes(const dmlc_kdesc *k, const uint64_t *strides, dmlc_dtype dtype) {
  const uint64_t bytes = (max_offset(k, strides) + 1) * dmlc_dtype_size(dtype);
  return (bytes + 3) & ~(uint64_t)3;
}

/* Windows never span more than this: window sizes in elements of a view
 * stay 32-bit. */
#define MAX_WINDOW_BYTES (UINT64_C(1) << 31)
/* Windows per buffer at most: 2^34 bytes (the most 32-bit word offsets
 * reach) in windows of 2^27 (lavapipe's range) is 128; a switch over the
 * windows (without non-uniform indexing) stays small. */
#define MAX_WINDOWS 256u

static uint64_t pow2_floor64(uint64_t v) {
  uint64_t p = 1;
  while (p * 2 <= v)
    p *= 2;
  return p;
}

/* How a buffer of extent bytes is bound: whole, or as windows when it
 * exceeds the device's range. */
static dmlc_status plan_binding(const dmlc_spirv_caps *caps, uint64_t extent, const char *what,
                                dmlc_spirv_binding *out, dmlc_diag *diag) {
  out->count = 1;
  out->window_bytes = 0;
  if (!caps->max_storage_range || extent <= caps->max_storage_range)
    return DMLC_OK;
  /* The largest power of two within the range: at least 256 bytes on any
   * device whose range is, so window offsets are multiples of every
   * minStorageBufferOffsetAlignment (at most 256 in Vulkan). */
  uint64_t window = pow2_floor64(caps->max_storage_range);
  if (window > MAX_WINDOW_BYTES)
    window = MAX_WINDOW_BYTES;
  if (window < 8) /* one element of every width, and word-aligned */
    return dmlc_diag_set(diag, DMLC_ERROR_UNSUPPORTED,
                         "SPIR-V kernel: maxStorageBufferRange %" PRIu64 " is below 8 bytes",
                         caps->max_storage_range);
  const uint64_t count = (extent + window - 1) / window;
  if (count > MAX_WINDOWS)
    return dmlc_diag_set(diag, DMLC_ERROR_UNSUPPORTED,
                         "SPIR-V kernel: %s spans %" PRIu64
                         " bytes, more than %u windows of %" PRIu64
                         " bytes (the device's maxStorageBufferRange)",
                         what, extent, MAX_WINDOWS, window);
  out->count = (uint32_t)count;
  out->window_bytes = window;
  return DMLC_OK;
}

static dmlc_status plan_bindings(const dmlc_kdesc *k, const dmlc_spirv_caps *caps, spv_plan *p,
                                 dmlc_diag *diag) {
  if (k->has_read)
    DMLC_RETURN_IF_ERROR(plan_binding(caps, extent_bytes(k, k->read_strides, k->read_dtype),
                                      "the read", &p->bindings[0], diag));
  else
    p->bindings[0] = (dmlc_spirv_binding){1, 0};
  for (uint32_t i = 0; i < k->num_outputs; i++)
    DMLC_RETURN_IF_ERROR(plan_binding(caps,
                                      extent_bytes(k, k->outputs[i].strides, k->outputs[i].dtype),
                                      "an output", &p->bindings[1 + i], diag));
  uint64_t descriptors = 0;
  for (uint32_t b = 0; b < 1 + k->num_outputs; b++)
    descriptors += p->bindings[b].count;
  if (caps->max_storage_buffers && descriptors > caps->max_storage_buffers)
    return dmlc_diag_set(diag, DMLC_ERROR_UNSUPPORTED,
                         "SPIR-V kernel: %" PRIu64
                         " storage-buffer descriptors exceed the device's limit of %" PRIu32,
                         descriptors, caps->max_storage_buffers);
  return DMLC_OK;
}

static dmlc_status check_buffer(const dmlc_kdesc *k, const uint64_t *strides, dmlc_dtype dtype,
                                const char *what, dmlc_diag *diag) {
  const uint64_t words_per_elem = dmlc_dtype_size(dtype) == 8 ? 2 : 1;
  for (uint32_t d = 0; d < k->rank; d++)
    if (k->dims[d] > 1 && strides[d] > UINT32_MAX)
      return dmlc_diag_set(diag, DMLC_ERROR_UNSUPPORTED,
                           "SPIR-V kernel: %s stride %" PRIu64 " exceeds 32 bits", what,
                           strides[d]);
  const uint64_t off = max_offset(k, strides);
  if (off > UINT32_MAX || (off + 1) * words_per_elem > UINT32_MAX)
    return dmlc_diag_set(diag, DMLC_ERROR_UNSUPPORTED,
                         "SPIR-V kernel: %s spans %" PRIu64
                         " elements, beyond 32-bit word addressing",
                         what, off + 1);
  return DMLC_OK;
}

static dmlc_status check_kdesc(const dmlc_kdesc *k, dmlc_diag *diag) {
  if (k->rank < 1 || k->rank > DMLC_MAX_RANK || k->num_outputs < 1 ||
      k->num_outputs > DMLC_KDESC_MAX_OUTPUTS || (k->reduced_mask >> k->rank) != 0 ||
      (k->has_reduction != (k->reduced_mask != 0)) || (k->has_reduction && !k->has_read))
    return dmlc_diag_set(diag, DMLC_ERROR_INTERNAL, "SPIR-V kernel: malformed kernel description");
  if (k->has_reduction && k->reduction != DMLC_OP_ARGMAX && k->reduction != DMLC_OP_ARGMIN)
    return dmlc_diag_set(diag, DMLC_ERROR_INTERNAL, "SPIR-V kernel: unknown reduction");
  if (k->has_read)
    DMLC_RETURN_IF_ERROR(check_buffer(k, k->read_strides, k->read_dtype, "the read", diag));
  for (uint32_t i = 0; i < k->num_outputs; i++) {
    const dmlc_kout *o = &k->outputs[i];
    DMLC_RETURN_IF_ERROR(check_buffer(k, o->strides, o->dtype, "an output", diag));
    const bool needs_reduction = o->kind == DMLC_KOUT_INDEX || o->kind == DMLC_KOUT_ONEHOT;
    if ((needs_reduction && !k->has_reduction) ||
        (o->kind == DMLC_KOUT_COPY && (k->has_reduction || !k->has_read)))
      return dmlc_diag_set(diag, DMLC_ERROR_INTERNAL,
                           "SPIR-V kernel: output %u does not fit the kernel", i);
    if (o->kind == DMLC_KOUT_INDEX && !dmlc_dtype_is_integer(o->dtype))
      return dmlc_diag_set(diag, DMLC_ERROR_UNSUPPORTED, "SPIR-V kernel: an index written as %s",
                           dmlc_dtype_name(o->dtype));
    if (o->kind == DMLC_KOUT_COPY && !spv_copy_supported(k->read_dtype, o->dtype))
      return dmlc_diag_set(diag, DMLC_ERROR_UNSUPPORTED,
                           "SPIR-V kernel: no exact %s -> %s conversion yet",
                           dmlc_dtype_name(k->read_dtype), dmlc_dtype_name(o->dtype));
  }
  return DMLC_OK;
}

/* Points an invocation takes at least, where the span allows: a split's
 * parts (few kept points: the device is filled by parts) and a workgroup
 * per kept point (many: by the kept points; a group's merge, its barriers
 * and its launch cost as much as many points each: lavapipe, f32 rows of
 * 8192 at 8 points an invocation ran at 0.56 of the probe, at 128 0.64,
 * i8 rows 0.29 -> 0.45, [4096,1000] rows 0.47 -> 0.71). */
#define SPLIT_GROUP_MIN_PER_INVOCATION 8
/* LARGE on a CPU device (lavapipe) whose kept points give every workgroup
 * that fills it LONE_ROWS_LOCAL of them: an invocation per kept point,
 * workgroups of LONE_ROWS_LOCAL. lavapipe runs a workgroup's invocations
 * as SIMD lanes of one thread, its barriers and subgroup shuffles in
 * software, and every storage load lane by lane, so lanes reading rows of
 * their own lose nothing to coalescing and skip the merge: argmax i64
 * [4096,4096] over the rows 31.7 -> 16 ms (0.59 -> 1.15 of the read
 * probe), hardmax f32 [8192,8192] 185 -> 137 ms. A GPU keeps a workgroup
 * per kept point (coalesced reads). */
#define LONE_ROWS_LOCAL 64
/* A split into lone parts (a CPU device, few kept points: an invocation
 * per part) gives each part at least this many points. */
#define LONE_SPLIT_MIN_POINTS 256
/* A CPU device splits no read under this: below it the split's parts
 * gain less than they cost (lavapipe on a Zen 3, 2 cores, with the fused
 * finish, argmax f32 [1,N]: 64 KiB 200 us in one workgroup, 170-210 us
 * split; 128 KiB 340-400 -> 215 us; [1,128256] f32 1.1 -> 0.62 ms, f16
 * 0.63 -> 0.39 ms). It was 1 MiB with a finish of its own dispatch, on a
 * machine where one lavapipe core read 3 GB/s. */
#define CPU_SPLIT_MIN_BYTES (UINT64_C(128) << 10)
#define ROW_GROUP_MIN_PER_INVOCATION 128
#define LANE_WIDTH_DEFAULT 32

/* Whether a workgroup's merge (reduce_group) can shuffle within subgroups:
 * the device's subgroups shuffle, and their size is a power of two
 * dividing the workgroup. */
static bool merges_in_subgroups(const dmlc_spirv_caps *caps, uint32_t local_size) {
  const uint32_t sg = caps->subgroup_size;
  return caps->subgroup_shuffle && sg > 0 && (sg & (sg - 1)) == 0 && local_size % sg == 0;
}

/* The workgroup of a reduction whose groups each cover up to span reduced
 * points: as large as the device, MAX_LOCAL and shared memory allow, with
 * at least min_per points an invocation. */
static void group_local_size(const dmlc_spirv_caps *caps, uint64_t span, uint32_t min_per,
                             spv_plan *p) {
  const uint32_t max_local = caps->max_workgroup_size ? caps->max_workgroup_size : 1;
  uint64_t l = max_local < MAX_LOCAL ? max_local : MAX_LOCAL;
  /* Each invocation takes at least min_per points where the span allows,
   * but a group is never smaller than a subgroup. */
  uint64_t want = span / min_per;
  if (want < caps->subgroup_size)
    want = caps->subgroup_size;
  if (l > want)
    l = want;
  if (l > span)
    l = span;
  /* Shared memory: up to three words per invocation, plus the result. */
  const uint64_t shared_per = 12;
  if (caps->max_shared_bytes && l * shared_per + 16 > caps->max_shared_bytes)
    l = (caps->max_shared_bytes - 16) / shared_per;
  p->local_size = pow2_floor(l ? l : 1);
  const uint32_t sg = caps->subgroup_size;
  /* Lane groups of a subgroup where the device says its size (a power of
   * two), else of LANE_WIDTH_DEFAULT: a guess only costs coalescing. */
  const uint32_t w = sg && (sg & (sg - 1)) == 0 ? sg : LANE_WIDTH_DEFAULT;
  p->lane_width = w < p->local_size ? w : p->local_size;
  p->subgroups = merges_in_subgroups(caps, p->local_size);
}

/* Whether plans take a CPU device's lone paths (rows or parts by single
 * invocations): not under DMLC_VULKAN_FORCE_SPLIT, which splits as a GPU. */
static bool lone_device(const dmlc_spirv_caps *caps) {
  return caps->cpu_device && !caps->force_split && caps->fill_groups;
}

/* Kept points from which a lone device reduces rows an invocation each
 * (fewer: lone parts, when split). */
static uint64_t lone_rows_min(const dmlc_spirv_caps *caps) {
  return (uint64_t)caps->fill_groups * LONE_ROWS_LOCAL;
}

/* The workgroup of lone rows or parts. */
static uint32_t lone_local_size(const dmlc_spirv_caps *caps) {
  const uint32_t max_local = caps->max_workgroup_size ? caps->max_workgroup_size : 1;
  return pow2_floor(max_local < LONE_ROWS_LOCAL ? max_local : LONE_ROWS_LOCAL);
}

/* A split part gives each invocation at least this many points: with fewer,
 * the finish's merge and the partials' traffic cost more than the part's
 * parallelism gains. */
#define SPLIT_MIN_PER_INVOCATION 16
/* Parts per kept point at most: the finish merges them in one workgroup. */
#define SPLIT_MAX_PARTS 1024
/* DMLC_VULKAN_FORCE_SPLIT: parts per kept point (fewer when the range is
 * shorter), so boundaries fall inside small test inputs. */
#define FORCED_PARTS 4
/* Bytes of one part's partial: key words, index, padding. */
#define PARTIAL_BYTES 16

/* Short packed rows (the channel argmax of NHWC images): SMALL over
 * [K, R] with R at most SHORT_ROWS_MAX, each row right after the previous.
 * An invocation takes G rows, the fewest whose G * R elements make whole
 * 16-byte vectors (at most SPV_SHORT_ROWS_MAX_VECS of them), and reduces each
 * from registers; the rows after the last whole group go to one more
 * invocation, element by element. One invocation per 3-byte row read each
 * byte through its own load. */
#define SHORT_ROWS_MAX 16

static uint32_t gcd_u32(uint32_t a, uint32_t b) {
  while (b) {
    const uint32_t t = a % b;
    a = b;
    b = t;
  }
  return a;
}

static bool plan_short_rows(const dmlc_kdesc *k, spv_plan *p) {
  if (p->path != SPV_PATH_SMALL || k->rank != 2 || k->reduced_mask != 2u ||
      p->bindings[0].count != 1)
    return false;
  const uint32_t size = dmlc_dtype_size(k->read_dtype), len = k->dims[1];
  if (len < 2 || len > SHORT_ROWS_MAX || k->read_strides[1] != 1 || k->read_strides[0] != len)
    return false;
  const uint32_t row_bytes = len * size, g = 16 / gcd_u32(16, row_bytes);
  if (g * row_bytes / 16 > SPV_SHORT_ROWS_MAX_VECS || p->kept < g)
    return false;
  p->vec_elems = 16 / size;
  p->short_rows = g;
  const uint64_t invocations = p->kept / g + (p->kept % g != 0);
  p->num_groups = (invocations + p->local_size - 1) / p->local_size;
  return true;
}

/* A split's workgroups for its partials: one each, or (lone parts) one
 * per local_size. */
static uint64_t split_groups(const spv_plan *p, uint64_t partials) {
  return p->lone_rows ? (partials + p->local_size - 1) / p->local_size : partials;
}

/* Whether the read's reduction can take 16-byte loads, and sets
 * p->vec_elems (elements per 16 bytes) if so, else leaves it 0. The read
 * is taken as 4-word vectors (windows, when it is bound as windows, hold
 * whole vectors: they are powers of two of at least 256 bytes).
 *  - rows (LARGE, SPLIT): the innermost dim is the only one reduced and
 *    packed, and every row starts on 16 bytes; a split's parts do too.
 *  - columns (SMALL): the innermost dim is kept, packed, a multiple of E
 *    long, and every other dim steps by multiples of 16 bytes; each
 *    invocation then takes E kept points (emit_small_vec); the read is one
 *    descriptor, or windows when it has one reduced dim (a loop each). */
static void plan_vector(const dmlc_kdesc *k, spv_plan *p) {
  const uint32_t size = dmlc_dtype_size(k->read_dtype), last = k->rank - 1;
  const uint32_t elems = 16 / size;
  if (plan_short_rows(k, p))
    return;
  if (k->read_strides[last] != 1 || k->dims[last] < 2)
    return;
  for (uint32_t d = 0; d < last; d++)
    if (k->dims[d] > 1 && (k->read_strides[d] * size) % 16 != 0)
      return;
  if (p->path == SPV_PATH_SMALL) {
    /* Bound as windows: one reduced dim (its points' offsets grow, so a
     * column's points in each window are a contiguous range, a loop of
     * their own: emit_small_vec) and few enough windows for a loop each.
     * Otherwise every load would pass a switch: lavapipe then reads
     * [8192,8192] f32 columns slower with vectors than with words. */
    const uint32_t windows = p->bindings[0].count;
    uint32_t d = 0;
    while (!((k->reduced_mask >> d) & 1))
      d++;
    const bool one_reduced =
        (k->reduced_mask & (k->reduced_mask - 1)) == 0 && k->read_strides[d] > 0;
    if ((k->reduced_mask >> last) & 1 || k->dims[last] % elems != 0 ||
        (windows > 1 && (!one_reduced || windows > COLUMN_WINDOW_LOOPS)))
      return;
    p->vec_elems = elems;
    p->num_groups = (p->kept / elems + p->local_size - 1) / p->local_size;
    return;
  }
  if ((p->path != SPV_PATH_LARGE && p->path != SPV_PATH_SPLIT) || !((k->reduced_mask >> last) & 1))
    return;
  if (k->reduced_mask != 1u << last) {
    /* more reduced dims outside the innermost ([r, k, r]): a workgroup per
     * kept point takes whole vectors of the innermost dim, each at its own
     * offset (reduce_row) */
    if (p->path != SPV_PATH_LARGE || k->dims[last] % elems != 0)
      return;
    p->vec_offsets = true;
  }
  if (p->reduced < 2 * elems)
    return;
  if (p->path == SPV_PATH_SPLIT) {
    /* parts start on 16 bytes too */
    const uint64_t len = (p->split_len + elems - 1) / elems * elems;
    const uint64_t parts = (p->reduced + len - 1) / len;
    if (parts < 2)
      return;
    p->split_len = (uint32_t)len;
    p->split_parts = (uint32_t)parts;
    p->finish_per_kept = p->finish_per_kept > 1 ? (uint32_t)parts : 1;
    p->num_groups = split_groups(p, p->kept * parts);
  }
  p->vec_elems = elems;
}

/* Lone rows over [r, k, r] vectors (vec_offsets) whose innermost kept dim
 * steps by one run and holds whole groups of SPV_LONE_RUNS points: an
 * invocation takes SPV_LONE_RUNS of them (with one kept point's run each,
 * 1 KiB for argmin over {0, 2} of [256,512,256] f32, a lavapipe lane's
 * reads restarted every run and the eight lanes of a SIMD group read eight
 * short streams: 0.67 of the read probe, and the same for plain rows of 1
 * KiB; runs of 16 KiB read at 1.1), still one workgroup a host core
 * (lone rows take at least fill_groups workgroups, CPU_GROUPS_PER_CORE = 4
 * a core). */
static void plan_lone_runs(const dmlc_kdesc *k, spv_plan *p) {
  const uint32_t last = k->rank - 1;
  if (!p->vec_offsets || !p->vec_elems)
    return;
  uint32_t inner = last;
  for (uint32_t d = 0; d < last; d++)
    if (!((k->reduced_mask >> d) & 1) && k->dims[d] > 1)
      inner = d; /* the last kept dim: the smallest stride (row-major) */
  if (inner == last || k->read_strides[inner] != k->dims[last] || k->dims[inner] % SPV_LONE_RUNS)
    return;
  p->lone_runs = SPV_LONE_RUNS;
  p->num_groups = (p->kept / SPV_LONE_RUNS + p->local_size - 1) / p->local_size;
}

/* Whether a split's partials (bytes, one more descriptor) fit the device. */
static bool partials_fit(const dmlc_kdesc *k, const dmlc_spirv_caps *caps, const spv_plan *p,
                         uint64_t bytes) {
  if (caps->max_storage_range && bytes > caps->max_storage_range)
    return false;
  uint64_t descriptors = 1;
  for (uint32_t b = 0; b < 1 + k->num_outputs; b++)
    descriptors += p->bindings[b].count;
  return !caps->max_storage_buffers || descriptors <= caps->max_storage_buffers;
}

/* Vector columns whose reduced range is cut into parts of this many points
 * (when it is at least twice as long): a column of 8192 points read by one
 * invocation walks 8192 rows, one 16-byte load each, 32 KiB apart; with
 * parts, a workgroup's loads stay within a few hundred rows, which the
 * CPU's prefetchers follow (lavapipe: [8192,8192] f32 over axis 0 ran at
 * 0.38 of the probe in one part), and a GPU gets parts times the groups. */
#define COLUMN_PART_POINTS 64

/* Column parts' ONEHOT outputs that cover their buffer's first bytes
 * exactly (every dim stepping within a packed layout: the span is the
 * element count), a multiple of 4 bytes: filled with 0 by the runtime
 * (caps->fill_zeros), which writes them at memset speed; the parts then
 * only read, and the finish writes the 1s. Writing them from the parts,
 * a row of a few columns per invocation and row, ran lavapipe's hardmax
 * over [8192,8192] axis 0 at 0.40 of the read probe. */
static void plan_zero_fill(const dmlc_kdesc *k, const dmlc_spirv_caps *caps, spv_plan *p) {
  for (uint32_t i = 0; caps->fill_zeros && i < k->num_outputs; i++) {
    const dmlc_kout *o = &k->outputs[i];
    if (o->kind != DMLC_KOUT_ONEHOT)
      continue;
    const uint64_t bytes = p->points * dmlc_dtype_size(o->dtype);
    if (max_offset(k, o->strides) + 1 != p->points || bytes % 4 != 0)
      continue;
    p->zero_fill |= 1u << i;
    p->zero_fill_bytes[i] = bytes;
  }
}

/* Cuts vector columns (SMALL with vec_elems) into parts of
 * COLUMN_PART_POINTS reduced points: COLUMN_PARTS, then COLUMN_FINISH.
 * Leaves the plan as it is when the range is short or the partials do not
 * fit. */
static void plan_column_parts(const dmlc_kdesc *k, const dmlc_spirv_caps *caps, spv_plan *p) {
  if (p->path != SPV_PATH_SMALL || !p->vec_elems || p->short_rows ||
      p->reduced < 2 * COLUMN_PART_POINTS)
    return;
  const uint64_t len = COLUMN_PART_POINTS, parts = (p->reduced + len - 1) / len;
  const uint64_t groups = p->num_groups * parts, bytes = parts * p->kept * PARTIAL_BYTES;
  if (groups > UINT32_MAX || bytes / PARTIAL_BYTES > UINT32_MAX / 4)
    return;
  if (!partials_fit(k, caps, p, bytes))
    return;
  p->path = SPV_PATH_COLUMN_PARTS;
  plan_zero_fill(k, caps, p);
  p->split_parts = (uint32_t)parts;
  p->split_len = (uint32_t)len;
  p->column_groups = p->num_groups;
  p->num_groups = groups;
  p->bindings[1 + k->num_outputs] = (dmlc_spirv_binding){1, 0};
}

static bool has_group_outputs(const dmlc_kdesc *k) {
  for (uint32_t i = 0; i < k->num_outputs; i++)
    if (k->outputs[i].kind == DMLC_KOUT_ONEHOT || k->outputs[i].kind == DMLC_KOUT_CONSTANT)
      return true;
  return false;
}

/* A fused finish's counters: a word per kept point, in 16-byte steps. */
static uint64_t counters_bytes(uint64_t kept) { return (kept * 4 + 15) / 16 * 16; }

/* Splits a reduction whose kept points are too few to fill the device
 * (caps->fill_groups) into parts of its reduced range, each a workgroup,
 * when the parts stay long enough; or every reduction, when forced. Leaves
 * the plan as it is when it does not split. */
static void plan_split(const dmlc_kdesc *k, const dmlc_spirv_caps *caps, spv_plan *p) {
  if (!k->has_reduction || p->reduced < 2)
    return;
  spv_plan s = *p;
  uint64_t parts;
  /* lone parts: an invocation each (a CPU device, fewer kept points than
   * lone rows take, outputs the finish writes in one group per kept
   * point): [64,128256] f16 rows 0.59 -> 0.86-0.97 of the probe, f32 0.83
   * -> 1.28, against a workgroup per row */
  if (lone_device(caps) && p->points * dmlc_dtype_size(k->read_dtype) < CPU_SPLIT_MIN_BYTES)
    return;
  const bool lone = lone_device(caps) && p->kept < lone_rows_min(caps) && !has_group_outputs(k);
  if (lone) {
    s.lone_rows = true;
    s.local_size = lone_local_size(caps);
    s.lane_width = 1;
    s.subgroups = merges_in_subgroups(caps, s.local_size); /* the finish's merge */
    const uint64_t want = ((uint64_t)caps->fill_groups * s.local_size + p->kept - 1) / p->kept;
    const uint64_t most = p->reduced / LONE_SPLIT_MIN_POINTS;
    parts = want < most ? want : most;
  } else if (caps->force_split) {
    parts = p->reduced < FORCED_PARTS ? p->reduced : FORCED_PARTS;
    group_local_size(caps, (p->reduced + parts - 1) / parts, SPLIT_GROUP_MIN_PER_INVOCATION, &s);
  } else {
    if (!caps->fill_groups || p->kept >= caps->fill_groups)
      return;
    group_local_size(caps, p->reduced, SPLIT_GROUP_MIN_PER_INVOCATION, &s);
    const uint64_t want = (caps->fill_groups + p->kept - 1) / p->kept;
    const uint64_t most = p->reduced / ((uint64_t)s.local_size * SPLIT_MIN_PER_INVOCATION);
    parts = want < most ? want : most;
  }
  if (parts > SPLIT_MAX_PARTS)
    parts = SPLIT_MAX_PARTS;
  if (parts < 2)
    return;
  const uint64_t len = (p->reduced + parts - 1) / parts;
  parts = (p->reduced + len - 1) / len; /* none empty */
  const uint64_t partials = p->kept * parts, bytes = partials * PARTIAL_BYTES;
  const uint64_t groups = split_groups(&s, partials);
  if (parts < 2 || partials > UINT32_MAX)
    return;
  if (!partials_fit(k, caps, p, bytes))
    return;
  s.path = SPV_PATH_SPLIT;
  s.split_parts = (uint32_t)parts;
  s.split_len = (uint32_t)len;
  s.finish_per_kept = has_group_outputs(k) ? (uint32_t)parts : 1;
  /* Index outputs only: the last part merges (no second dispatch, whose
   * launch and barrier cost lavapipe about 60 us); one-hot outputs keep
   * a finish of a workgroup per part, which writes them in parallel. The
   * counters' words follow the partials' (32-bit word indices). */
  s.fused_finish = !has_group_outputs(k) && partials * 4 + p->kept <= UINT32_MAX &&
                   partials_fit(k, caps, p, bytes + counters_bytes(p->kept));
  s.num_groups = groups;
  s.bindings[1 + k->num_outputs] = (dmlc_spirv_binding){1, 0};
  *p = s;
}

static dmlc_status make_plan(const dmlc_kdesc *k, const dmlc_spirv_caps *caps, spv_plan *p,
                             dmlc_diag *diag) {
  memset(p, 0, sizeof *p);
  DMLC_RETURN_IF_ERROR(plan_bindings(k, caps, p, diag));
  p->kept = p->reduced = 1;
  for (uint32_t d = 0; d < k->rank; d++) {
    if ((k->reduced_mask >> d) & 1)
      p->reduced *= k->dims[d];
    else
      p->kept *= k->dims[d];
  }
  p->points = p->kept * p->reduced;
  /* Indices and loop counters are 32-bit; leave room for one group's step. */
  if (p->points > UINT32_MAX - 2 * MAX_LOCAL)
    return dmlc_diag_set(diag, DMLC_ERROR_UNSUPPORTED,
                         "SPIR-V kernel: %" PRIu64 " points exceed 32-bit indexing", p->points);
  const uint32_t max_local = caps->max_workgroup_size ? caps->max_workgroup_size : 1;
  if (!k->has_reduction) {
    p->path = SPV_PATH_ELEMENTWISE;
    p->local_size = pow2_floor(max_local < MAX_LOCAL ? max_local : MAX_LOCAL);
    p->num_groups = (p->points + p->local_size - 1) / p->local_size;
    return DMLC_OK;
  }
  const bool inner_reduced = (k->reduced_mask >> (k->rank - 1)) & 1;
  const bool large =
      p->reduced >= LARGE_MIN_REDUCED &&
      (inner_reduced || (p->kept < COLUMN_MIN_KEPT && p->reduced >= COLUMN_LARGE_MIN_REDUCED));
  if (!large) {
    p->path = SPV_PATH_SMALL;
    p->local_size = pow2_floor(max_local < SMALL_LOCAL ? max_local : SMALL_LOCAL);
    p->num_groups = (p->kept + p->local_size - 1) / p->local_size;
    plan_split(k, caps, p);
    plan_vector(k, p);
    plan_column_parts(k, caps, p);
    return DMLC_OK;
  }
  p->path = SPV_PATH_LARGE;
  if (lone_device(caps) && p->kept >= lone_rows_min(caps)) {
    p->lone_rows = true;
    p->local_size = lone_local_size(caps);
    p->lane_width = 1;
    p->num_groups = (p->kept + p->local_size - 1) / p->local_size;
    plan_vector(k, p);
    plan_lone_runs(k, p);
    return DMLC_OK;
  }
  group_local_size(caps, p->reduced, ROW_GROUP_MIN_PER_INVOCATION, p);
  p->num_groups = p->kept;
  plan_split(k, caps, p);
  plan_vector(k, p);
  return DMLC_OK;
}

void dmlc_spirv_module_free(dmlc_spirv_module *m) {
  if (!m)
    return;
  free(m->words);
  free(m->finish_words);
  memset(m, 0, sizeof *m);
}

/* Emits e's plan, validates it (a failure is an internal compiler error
 * that carries the validator's message) and optimizes it (keeping the
 * unoptimized module if the optimizer fails). */
static dmlc_status emit_checked(spv_em *e, uint32_t **out, size_t *out_n, dmlc_diag *diag) {
  spvb_init(&e->b);
  uint32_t *words = NULL;
  size_t n = 0;
  dmlc_status s = spv_emit_module(e, &words, &n, diag);
  spvb_free(&e->b);
  if (s != DMLC_OK)
    return s;
  s = dmlc_spirv_validate(words, n, diag);
  if (s != DMLC_OK) {
    free(words);
    return s;
  }
  uint32_t *opt = NULL;
  size_t opt_n = 0;
  if (dmlc_spirv_optimize(words, n, &opt, &opt_n)) {
    dmlc_diag scratch;
    if (dmlc_spirv_validate(opt, opt_n, &scratch) == DMLC_OK) {
      free(words);
      words = opt;
      n = opt_n;
    } else {
      free(opt);
    }
  }
  *out = words;
  *out_n = n;
  return DMLC_OK;
}

/* Whether dims d and d + 1 of buffer strides s are one packed run: the
 * outer dim steps over the inner one's whole extent (0 and 0 included). */
static bool runs_on(const dmlc_kdesc *k, const uint64_t *s, uint32_t d) {
  return s[d] == s[d + 1] * k->dims[d + 1];
}

/* k with adjacent dims merged where both are reduced or both kept and every
 * buffer steps over them as one run: the same points, offsets and reduced
 * index order (a reduced index r counts the reduced dims row-major, which
 * merging keeps), with fewer divisions per offset and packed reads that the
 * 16-byte loads can take (an all-axes reduction becomes one row). */
static void coalesce_dims(const dmlc_kdesc *in, dmlc_kdesc *k) {
  *k = *in;
  uint32_t d = 0;
  while (d + 1 < k->rank) {
    bool merge = ((k->reduced_mask >> d) & 1) == ((k->reduced_mask >> (d + 1)) & 1) &&
                 (uint64_t)k->dims[d] * k->dims[d + 1] <= UINT32_MAX &&
                 (!k->has_read || runs_on(k, k->read_strides, d));
    for (uint32_t i = 0; merge && i < k->num_outputs; i++)
      merge = runs_on(k, k->outputs[i].strides, d);
    if (!merge) {
      d++;
      continue;
    }
    /* dim d becomes [d, d + 1]: dim d + 1's stride, the product's extent */
    k->dims[d] *= k->dims[d + 1];
    k->read_strides[d] = k->read_strides[d + 1];
    for (uint32_t i = 0; i < k->num_outputs; i++)
      k->outputs[i].strides[d] = k->outputs[i].strides[d + 1];
    for (uint32_t j = d + 1; j + 1 < k->rank; j++) {
      k->dims[j] = k->dims[j + 1];
      k->read_strides[j] = k->read_strides[j + 1];
      for (uint32_t i = 0; i < k->num_outputs; i++)
        k->outputs[i].strides[j] = k->outputs[i].strides[j + 1];
    }
    const uint32_t low = k->reduced_mask & ((1u << (d + 1)) - 1);
    k->reduced_mask = low | ((k->reduced_mask >> (d + 2)) << (d + 1));
    k->rank--;
  }
}

dmlc_status dmlc_spirv_compile(const dmlc_kdesc *desc, const dmlc_spirv_caps *caps,
                               dmlc_spirv_module *out, dmlc_diag *diag) {
  memset(out, 0, sizeof *out);
  DMLC_RETURN_IF_ERROR(check_kdesc(desc, diag));
  dmlc_kdesc merged;
  coalesce_dims(desc, &merged);
  const dmlc_kdesc *k = &merged;
  spv_em e;
  memset(&e, 0, sizeof e);
  e.k = k;
  e.caps = caps;
  DMLC_RETURN_IF_ERROR(make_plan(k, caps, &e.plan, diag));
  DMLC_RETURN_IF_ERROR(emit_checked(&e, &out->words, &out->num_words, diag));
  const bool columns = e.plan.path == SPV_PATH_COLUMN_PARTS;
  if (e.plan.path == SPV_PATH_SPLIT || columns) {
    if (!e.plan.fused_finish) {
      spv_em f;
      memset(&f, 0, sizeof f);
      f.k = k;
      f.caps = caps;
      f.plan = e.plan;
      f.plan.path = columns ? SPV_PATH_COLUMN_FINISH : SPV_PATH_FINISH;
      const dmlc_status s = emit_checked(&f, &out->finish_words, &out->finish_num_words, diag);
      if (s != DMLC_OK) {
        dmlc_spirv_module_free(out);
        return s;
      }
      out->finish_groups = spv_plan_finish_groups(&f.plan);
    }
    out->split_parts = e.plan.split_parts;
    out->split_len = e.plan.split_len;
    out->partial_bytes = spv_plan_partials(&e.plan) * PARTIAL_BYTES;
    if (e.plan.fused_finish) {
      out->counters_offset = out->partial_bytes;
      out->partial_bytes += counters_bytes(e.plan.kept);
    }
    out->zero_fill = e.plan.zero_fill;
    memcpy(out->zero_fill_bytes, e.plan.zero_fill_bytes, sizeof out->zero_fill_bytes);
  }
  out->local_size = e.plan.local_size;
  out->num_groups = e.plan.num_groups;
  out->lone_rows = e.plan.lone_rows;
  out->lone_runs = e.plan.lone_runs;
  out->num_bindings = 1 + k->num_outputs;
  for (uint32_t b = 0; b < out->num_bindings; b++) {
    out->bindings[b] = e.plan.bindings[b];
    out->nonuniform_indexing |=
        e.plan.bindings[b].count > 1 && caps->storage_buffer_array_nonuniform;
  }
  return DMLC_OK;
}
