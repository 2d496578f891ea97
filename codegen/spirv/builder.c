/* The SPIR-V word builder (builder.h). */
#include "codegen/spirv/builder.h"

#include <stdlib.h>
#include <string.h>

#include "ir/array.h"

static void words_push(spvb *b, spvb_words *s, const uint32_t *w, size_t n) {
  if (b->failed)
    return;
  if (n > UINT32_MAX - s->n || !DMLC_ARRAY_RESERVE(&s->w, &s->cap, (uint32_t)(s->n + n), 256)) {
    b->failed = true;
    return;
  }
  if (n) /* w may be NULL when n is 0 (an instruction without operands) */
    memcpy(s->w + s->n, w, n * sizeof *w);
  s->n += (uint32_t)n;
}

/* One instruction: opcode word, then head[0..nh), then tail[0..nt). */
static void inst(spvb *b, spvb_words *s, SpvOp op, const uint32_t *head, uint32_t nh,
                 const uint32_t *tail, uint32_t nt) {
  const uint32_t first = ((1u + nh + nt) << SpvWordCountShift) | (uint32_t)op;
  words_push(b, s, &first, 1);
  words_push(b, s, head, nh);
  words_push(b, s, tail, nt);
}

/* A literal string as words: NUL-terminated, zero-padded. */
static uint32_t string_words(const char *str, uint32_t *out, uint32_t max) {
  const size_t len = strlen(str);
  const uint32_t n = (uint32_t)(len / 4 + 1);
  if (n > max)
    return 0;
  memset(out, 0, n * sizeof *out);
  memcpy(out, str, len);
  return n;
}

void spvb_init(spvb *b) {
  memset(b, 0, sizeof *b);
  b->next_id = 1;
}

void spvb_free(spvb *b) {
  free(b->caps.w);
  free(b->exts.w);
  free(b->imports.w);
  free(b->annots.w);
  free(b->globals.w);
  free(b->fvars.w);
  free(b->code.w);
  memset(b, 0, sizeof *b);
}

uint32_t spvb_id(spvb *b) { return b->next_id++; }

void spvb_capability(spvb *b, SpvCapability cap) {
  for (size_t i = 0; i + 1 < b->caps.n; i += 2)
    if (b->caps.w[i + 1] == (uint32_t)cap)
      return;
  const uint32_t c = (uint32_t)cap;
  inst(b, &b->caps, SpvOpCapability, &c, 1, NULL, 0);
}

void spvb_extension(spvb *b, const char *name) {
  uint32_t w[16];
  const uint32_t n = string_words(name, w, 16);
  if (!n) {
    b->failed = true;
    return;
  }
  /* Deduplicate: same length and same words. */
  for (size_t i = 0; i < b->exts.n;) {
    const uint32_t len = b->exts.w[i] >> SpvWordCountShift;
    if (len == n + 1 && !memcmp(&b->exts.w[i + 1], w, n * sizeof *w))
      return;
    i += len;
  }
  inst(b, &b->exts, SpvOpExtension, w, n, NULL, 0);
}

uint32_t spvb_import(spvb *b, const char *name) {
  uint32_t w[17];
  const uint32_t n = string_words(name, w + 1, 16);
  if (!n) {
    b->failed = true;
    return 0;
  }
  for (size_t i = 0; i < b->imports.n;) {
    const uint32_t len = b->imports.w[i] >> SpvWordCountShift;
    if (len == n + 2 && !memcmp(&b->imports.w[i + 2], w + 1, n * sizeof *w))
      return b->imports.w[i + 1];
    i += len;
  }
  w[0] = spvb_id(b);
  inst(b, &b->imports, SpvOpExtInstImport, w, n + 1, NULL, 0);
  return w[0];
}

void spvb_decorate(spvb *b, uint32_t target, SpvDecoration d, const uint32_t *args, uint32_t n) {
  const uint32_t head[2] = {target, (uint32_t)d};
  inst(b, &b->annots, SpvOpDecorate, head, 2, args, n);
}

void spvb_member_decorate(spvb *b, uint32_t type, uint32_t member, SpvDecoration d,
                          const uint32_t *args, uint32_t n) {
  const uint32_t head[3] = {type, member, (uint32_t)d};
  inst(b, &b->annots, SpvOpMemberDecorate, head, 3, args, n);
}

/* Finds a global instruction with opcode op whose words, apart from the
 * result id at result_pos, equal ops; returns its result id or 0. */
static uint32_t find_global(const spvb *b, SpvOp op, uint32_t result_pos, const uint32_t *ops,
                            uint32_t n) {
  const spvb_words *g = &b->globals;
  for (size_t i = 0; i < g->n;) {
    const uint32_t len = g->w[i] >> SpvWordCountShift;
    if ((g->w[i] & SpvOpCodeMask) == (uint32_t)op && len == n + 2) {
      const uint32_t *w = &g->w[i + 1];
      bool same = true;
      for (uint32_t j = 0, o = 0; j < n + 1 && same; j++) {
        if (j == result_pos)
          continue;
        same = w[j] == ops[o++];
      }
      if (same)
        return w[result_pos];
    }
    i += len;
  }
  return 0;
}

uint32_t spvb_type(spvb *b, SpvOp op, const uint32_t *ops, uint32_t n) {
  if (op != SpvOpTypeStruct) {
    const uint32_t found = find_global(b, op, 0, ops, n);
    if (found)
      return found;
  }
  const uint32_t id = spvb_id(b);
  inst(b, &b->globals, op, &id, 1, ops, n);
  return id;
}

uint32_t spvb_constant(spvb *b, SpvOp op, uint32_t type, const uint32_t *ops, uint32_t n) {
  uint32_t key[8];
  if (n + 1 > 8) {
    b->failed = true;
    return 0;
  }
  key[0] = type;
  if (n) /* ops may be NULL for a constant without operands (OpConstantNull) */
    memcpy(key + 1, ops, n * sizeof *ops);
  const uint32_t found = find_global(b, op, 1, key, n + 1);
  if (found)
    return found;
  const uint32_t head[2] = {type, spvb_id(b)};
  inst(b, &b->globals, op, head, 2, ops, n);
  return head[1];
}

uint32_t spvb_global_var(spvb *b, uint32_t ptr_type, SpvStorageClass sc) {
  const uint32_t w[3] = {ptr_type, spvb_id(b), (uint32_t)sc};
  inst(b, &b->globals, SpvOpVariable, w, 3, NULL, 0);
  if (b->num_interface == SPVB_MAX_INTERFACE)
    b->failed = true;
  else
    b->interface[b->num_interface++] = w[1];
  return w[1];
}

uint32_t spvb_local_var(spvb *b, uint32_t ptr_type) {
  const uint32_t w[3] = {ptr_type, spvb_id(b), (uint32_t)SpvStorageClassFunction};
  inst(b, &b->fvars, SpvOpVariable, w, 3, NULL, 0);
  return w[1];
}

uint32_t spvb_code(spvb *b, SpvOp op, uint32_t type, const uint32_t *ops, uint32_t n) {
  if (!type) {
    inst(b, &b->code, op, ops, n, NULL, 0);
    return 0;
  }
  const uint32_t head[2] = {type, spvb_id(b)};
  inst(b, &b->code, op, head, 2, ops, n);
  return head[1];
}

void spvb_label(spvb *b, uint32_t id) { inst(b, &b->code, SpvOpLabel, &id, 1, NULL, 0); }

uint32_t *spvb_finish(spvb *b, uint32_t main_fn, uint32_t void_type, uint32_t fn_type,
                      uint32_t local_size, size_t *num_words) {
  spvb_words m = {0};
  const uint32_t header[5] = {SpvMagicNumber, 0x00010500u, 0, b->next_id + 1, 0};
  words_push(b, &m, header, 5);
  words_push(b, &m, b->caps.w, b->caps.n);
  words_push(b, &m, b->exts.w, b->exts.n);
  words_push(b, &m, b->imports.w, b->imports.n);
  const uint32_t model[2] = {SpvAddressingModelLogical, SpvMemoryModelGLSL450};
  inst(b, &m, SpvOpMemoryModel, model, 2, NULL, 0);
  uint32_t ep[2 + 2 + SPVB_MAX_INTERFACE] = {SpvExecutionModelGLCompute, main_fn};
  const uint32_t name_n = string_words("main", ep + 2, 2);
  memcpy(ep + 2 + name_n, b->interface, b->num_interface * sizeof *ep);
  inst(b, &m, SpvOpEntryPoint, ep, 2 + name_n + b->num_interface, NULL, 0);
  const uint32_t mode[5] = {main_fn, SpvExecutionModeLocalSize, local_size, 1, 1};
  inst(b, &m, SpvOpExecutionMode, mode, 5, NULL, 0);
  words_push(b, &m, b->annots.w, b->annots.n);
  words_push(b, &m, b->globals.w, b->globals.n);
  const uint32_t fn[4] = {void_type, main_fn, SpvFunctionControlMaskNone, fn_type};
  inst(b, &m, SpvOpFunction, fn, 4, NULL, 0);
  const uint32_t entry = b->next_id; /* reserved by the header's bound */
  inst(b, &m, SpvOpLabel, &entry, 1, NULL, 0);
  words_push(b, &m, b->fvars.w, b->fvars.n);
  words_push(b, &m, b->code.w, b->code.n);
  inst(b, &m, SpvOpFunctionEnd, NULL, 0, NULL, 0);
  if (b->failed) {
    free(m.w);
    return NULL;
  }
  *num_words = m.n;
  return m.w;
}
