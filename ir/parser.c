/* The IR's text form, read back: a hand-written lexer and a recursive-descent
 * parser (grammar in docs/ir.md). It checks syntax, names and that `return`
 * agrees with the signature; every other rule is the verifier's. It never
 * reads past `length`, reports the first error as "file:line:col: message",
 * and frees everything it built when it fails. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ir/array.h"
#include "ir/ir.h"

/* ---- tokens ---- */
typedef enum tok_kind {
  TOK_EOF,
  TOK_IDENT,  /* graph, return, op, data type and attribute names */
  TOK_LOCAL,  /* %name */
  TOK_GLOBAL, /* @name */
  TOK_NUMBER, /* -?[0-9]+ */
  TOK_LPAREN,
  TOK_RPAREN,
  TOK_LBRACKET,
  TOK_RBRACKET,
  TOK_LBRACE,
  TOK_RBRACE,
  TOK_COMMA,
  TOK_COLON,
  TOK_EQUAL,
  TOK_ARROW,
} tok_kind;

typedef struct token {
  tok_kind kind;
  const char *text; /* a name without its sigil; a number with its sign */
  size_t len;
  size_t line, col; /* 1-based, of the token's first byte */
} token;

/* Names quoted in messages are cut to this many bytes. */
#define QUOTE_MAX 64
#define QUOTE(t) (int)((t)->len < QUOTE_MAX ? (t)->len : QUOTE_MAX), (t)->text

/* ---- value names in scope: an open-addressing hash table of text slices ---- */
typedef struct symbol {
  const char *name; /* NULL: an empty slot */
  size_t len;
  uint32_t value;
} symbol;

typedef struct symtab {
  symbol *slots;
  size_t cap, count; /* cap is 0 or a power of two */
} symtab;

static size_t hash_name(const char *name, size_t len) {
  uint64_t h = 14695981039346656037u; /* FNV-1a */
  for (size_t i = 0; i < len; i++)
    h = (h ^ (unsigned char)name[i]) * 1099511628211u;
  return (size_t)h;
}

static symbol *symtab_slot(const symtab *s, const char *name, size_t len) {
  for (size_t i = hash_name(name, len) & (s->cap - 1);; i = (i + 1) & (s->cap - 1)) {
    symbol *slot = &s->slots[i];
    if (!slot->name || (slot->len == len && memcmp(slot->name, name, len) == 0))
      return slot;
  }
}

static const symbol *symtab_find(const symtab *s, const char *name, size_t len) {
  if (s->cap == 0)
    return NULL;
  const symbol *slot = symtab_slot(s, name, len);
  return slot->name ? slot : NULL;
}

/* name must not be in the table yet. */
static bool symtab_insert(symtab *s, const char *name, size_t len, uint32_t value) {
  if ((s->count + 1) * 2 > s->cap) {
    symtab grown = {calloc(s->cap ? s->cap * 2 : 16, sizeof(symbol)), s->cap ? s->cap * 2 : 16, 0};
    if (!grown.slots)
      return false;
    for (size_t i = 0; i < s->cap; i++)
      if (s->slots[i].name)
        *symtab_slot(&grown, s->slots[i].name, s->slots[i].len) = s->slots[i];
    grown.count = s->count;
    free(s->slots);
    *s = grown;
  }
  *symtab_slot(s, name, len) = (symbol){name, len, value};
  s->count++;
  return true;
}

/* ---- the parser's state ---- */
typedef struct output_sig {
  char name[DMLC_NAME_MAX];
  dmlc_type type;
  dmlc_layout layout;
} output_sig;

typedef struct returned {
  uint32_t value;
  token tok;
} returned;

typedef struct parser {
  const char *text;
  size_t length, pos, line, col;
  const char *filename;
  dmlc_diag *diag;
  token tok; /* the current token, not yet consumed */
  dmlc_ir_graph *g;
  symtab values;
  symtab kernels; /* kernel names: unique, otherwise unused */
  output_sig *outs;
  size_t num_outs;
  uint32_t cap_outs;
  returned *rets;
  size_t num_rets;
  uint32_t cap_rets;
} parser;

static dmlc_status error_at(const parser *p, const token *t, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static dmlc_status error_at(const parser *p, const token *t, const char *fmt, ...) {
  char msg[DMLC_DIAG_MAX];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  return dmlc_diag_set(p->diag, DMLC_ERROR_INVALID_ARGUMENT, "%s:%zu:%zu: %s", p->filename, t->line,
                       t->col, msg);
}

static dmlc_status out_of_memory(const parser *p) {
  return dmlc_diag_set(p->diag, DMLC_ERROR_OUT_OF_MEMORY, "%s: out of memory", p->filename);
}

/* ---- the lexer ---- */
static int peek(const parser *p, size_t ahead) {
  return ahead < p->length - p->pos ? (unsigned char)p->text[p->pos + ahead] : -1;
}

static void advance(parser *p) {
  if (p->text[p->pos++] == '\n') {
    p->line++;
    p->col = 1;
  } else {
    p->col++;
  }
}

static bool is_digit(int c) { return c >= '0' && c <= '9'; }
static bool is_alpha(int c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; }
static bool is_name_char(int c) { return is_alpha(c) || is_digit(c) || c == '.'; }

static void skip_space_and_comments(parser *p) {
  for (;;) {
    const int c = peek(p, 0);
    if (c == ' ' || c == '\t' || c == '\r' || c == '\n') {
      advance(p);
    } else if (c == '/' && peek(p, 1) == '/') {
      while (peek(p, 0) >= 0 && peek(p, 0) != '\n')
        advance(p);
    } else {
      return;
    }
  }
}

static tok_kind punctuation(int c) {
  switch (c) {
  case '(':
    return TOK_LPAREN;
  case ')':
    return TOK_RPAREN;
  case '[':
    return TOK_LBRACKET;
  case ']':
    return TOK_RBRACKET;
  case '{':
    return TOK_LBRACE;
  case '}':
    return TOK_RBRACE;
  case ',':
    return TOK_COMMA;
  case ':':
    return TOK_COLON;
  case '=':
    return TOK_EQUAL;
  default:
    return TOK_EOF; /* not punctuation */
  }
}

/* Reads the next token into p->tok. */
static dmlc_status lex(parser *p) {
  skip_space_and_comments(p);
  token *t = &p->tok;
  *t = (token){TOK_EOF, p->text + p->pos, 0, p->line, p->col};
  const size_t start = p->pos;
  const int c = peek(p, 0);
  if (c < 0)
    return DMLC_OK;
  if (c == '%' || c == '@') {
    advance(p);
    while (is_name_char(peek(p, 0)))
      advance(p);
    if (p->pos == start + 1)
      return error_at(p, t, "expected a name after '%c'", c);
    *t = (token){c == '%' ? TOK_LOCAL : TOK_GLOBAL, p->text + start + 1, p->pos - start - 1,
                 t->line, t->col};
    return DMLC_OK;
  }
  if (is_digit(c) || (c == '-' && is_digit(peek(p, 1)))) {
    advance(p);
    while (is_digit(peek(p, 0)))
      advance(p);
    t->kind = TOK_NUMBER;
  } else if (c == '-' && peek(p, 1) == '>') {
    advance(p);
    advance(p);
    t->kind = TOK_ARROW;
  } else if (is_alpha(c)) {
    while (is_alpha(peek(p, 0)) || is_digit(peek(p, 0)))
      advance(p);
    t->kind = TOK_IDENT;
  } else if (punctuation(c) != TOK_EOF) {
    advance(p);
    t->kind = punctuation(c);
  } else if (c > ' ' && c < 0x7f) {
    return error_at(p, t, "unexpected character '%c'", c);
  } else {
    return error_at(p, t, "unexpected character '\\x%02x'", (unsigned)c);
  }
  t->len = p->pos - start;
  return DMLC_OK;
}

/* ---- helpers over tokens ---- */
static dmlc_status expected(const parser *p, const char *what) {
  if (p->tok.kind == TOK_EOF)
    return error_at(p, &p->tok, "unexpected end of input");
  return error_at(p, &p->tok, "expected %s", what);
}

static dmlc_status expect(parser *p, tok_kind kind, const char *what) {
  if (p->tok.kind != kind)
    return expected(p, what);
  return lex(p);
}

static bool at_keyword(const parser *p, const char *word) {
  return p->tok.kind == TOK_IDENT && p->tok.len == strlen(word) &&
         memcmp(p->tok.text, word, p->tok.len) == 0;
}

/* The number in the current token as an unsigned value (not consumed). */
static dmlc_status number_u64(const parser *p, uint64_t *out) {
  const token *t = &p->tok;
  if (t->kind != TOK_NUMBER)
    return expected(p, "a number");
  if (t->text[0] == '-')
    return error_at(p, t, "number out of range");
  uint64_t v = 0;
  for (size_t i = 0; i < t->len; i++) {
    const unsigned digit = (unsigned)(t->text[i] - '0');
    if (v > (UINT64_MAX - digit) / 10)
      return error_at(p, t, "number out of range");
    v = v * 10 + digit;
  }
  *out = v;
  return DMLC_OK;
}

/* The number in the current token as a signed value (not consumed). */
static dmlc_status number_i64(const parser *p, int64_t *out) {
  const token *t = &p->tok;
  if (t->kind != TOK_NUMBER)
    return expected(p, "a number");
  const bool negative = t->text[0] == '-';
  uint64_t magnitude = 0;
  for (size_t i = negative; i < t->len; i++) {
    const unsigned digit = (unsigned)(t->text[i] - '0');
    if (magnitude > (UINT64_MAX - digit) / 10)
      return error_at(p, t, "number out of range");
    magnitude = magnitude * 10 + digit;
  }
  const uint64_t limit = negative ? (uint64_t)INT64_MAX + 1 : (uint64_t)INT64_MAX;
  if (magnitude > limit)
    return error_at(p, t, "number out of range");
  *out = negative ? (int64_t)(0 - magnitude) : (int64_t)magnitude;
  return DMLC_OK;
}

/* Copies the current token's text into buf as a C string; false when it does
 * not fit a dmlc name, or is not one. */
static bool token_to_name(const token *t, char buf[DMLC_NAME_MAX]) {
  if (t->len >= DMLC_NAME_MAX)
    return false;
  memcpy(buf, t->text, t->len);
  buf[t->len] = '\0';
  return dmlc_name_is_valid(buf);
}

static dmlc_status lookup_value(const parser *p, uint32_t *value) {
  const symbol *s = symtab_find(&p->values, p->tok.text, p->tok.len);
  if (!s)
    return error_at(p, &p->tok, "use of undefined value '%%%.*s'", QUOTE(&p->tok));
  *value = s->value;
  return DMLC_OK;
}

/* Defines the name of token t, checked by check_new_value, as value. */
static dmlc_status define_value(parser *p, const token *t, uint32_t value) {
  if (!symtab_insert(&p->values, t->text, t->len, value))
    return out_of_memory(p);
  return DMLC_OK;
}

static dmlc_status check_new_value(const parser *p) {
  if (symtab_find(&p->values, p->tok.text, p->tok.len))
    return error_at(p, &p->tok, "redefinition of value '%%%.*s'", QUOTE(&p->tok));
  return DMLC_OK;
}

/* ---- lists, types and layouts ---- */
typedef enum list_kind { LIST_DIMS, LIST_STRIDES } list_kind;

/* "[n, n, ...]" with at most max_count items. */
static dmlc_status parse_list(parser *p, list_kind kind, uint32_t max_count, uint64_t *items,
                              uint32_t *count) {
  DMLC_RETURN_IF_ERROR(expect(p, TOK_LBRACKET, "'['"));
  *count = 0;
  if (p->tok.kind != TOK_RBRACKET) {
    for (;;) {
      uint64_t v = 0;
      DMLC_RETURN_IF_ERROR(number_u64(p, &v));
      if (*count == max_count) {
        if (kind == LIST_DIMS)
          return error_at(p, &p->tok, "rank %u exceeds the maximum of %u", max_count + 1,
                          DMLC_MAX_RANK);
        return error_at(p, &p->tok, "more strides than the rank %u", max_count);
      }
      if (kind == LIST_DIMS && v > UINT32_MAX)
        return error_at(p, &p->tok, "number out of range");
      items[(*count)++] = v;
      DMLC_RETURN_IF_ERROR(lex(p));
      if (p->tok.kind != TOK_COMMA)
        break;
      DMLC_RETURN_IF_ERROR(lex(p));
    }
  }
  return expect(p, TOK_RBRACKET, "']'");
}

/* DTYPE[D0,D1,...] */
static dmlc_status parse_type(parser *p, dmlc_type *type) {
  memset(type, 0, sizeof *type);
  if (p->tok.kind != TOK_IDENT)
    return expected(p, "a data type");
  if (!dmlc_dtype_from_name(p->tok.text, p->tok.len, &type->dtype))
    return error_at(p, &p->tok, "unknown data type '%.*s'", QUOTE(&p->tok));
  DMLC_RETURN_IF_ERROR(lex(p));
  uint64_t dims[DMLC_MAX_RANK];
  DMLC_RETURN_IF_ERROR(parse_list(p, LIST_DIMS, DMLC_MAX_RANK, dims, &type->rank));
  for (uint32_t i = 0; i < type->rank; i++)
    type->dims[i] = (uint32_t)dims[i];
  return DMLC_OK;
}

enum { LAYOUT_STRIDES = 1, LAYOUT_SIZE = 2, LAYOUT_ALIGN = 4 };

static const struct {
  unsigned bit;
  const char *name;
} layout_keys[] = {{LAYOUT_STRIDES, "strides"}, {LAYOUT_SIZE, "size"}, {LAYOUT_ALIGN, "align"}};

static dmlc_status parse_layout_entry(parser *p, const dmlc_type *type, dmlc_layout *layout,
                                      unsigned *seen) {
  if (p->tok.kind != TOK_IDENT)
    return expected(p, "a layout attribute");
  unsigned key = 0;
  for (size_t i = 0; i < sizeof layout_keys / sizeof layout_keys[0]; i++)
    if (at_keyword(p, layout_keys[i].name))
      key = layout_keys[i].bit;
  if (!key)
    return error_at(p, &p->tok, "unknown layout attribute '%.*s'", QUOTE(&p->tok));
  if (*seen & key)
    return error_at(p, &p->tok, "duplicate layout attribute '%.*s'", QUOTE(&p->tok));
  *seen |= key;
  const token key_tok = p->tok;
  DMLC_RETURN_IF_ERROR(lex(p));
  DMLC_RETURN_IF_ERROR(expect(p, TOK_EQUAL, "'='"));
  if (key == LAYOUT_STRIDES) {
    uint32_t count;
    DMLC_RETURN_IF_ERROR(parse_list(p, LIST_STRIDES, type->rank, layout->strides, &count));
    if (count != type->rank)
      return error_at(p, &key_tok, "expected %u strides for rank %u, got %u", type->rank,
                      type->rank, count);
    return DMLC_OK;
  }
  uint64_t v;
  DMLC_RETURN_IF_ERROR(number_u64(p, &v));
  if (key == LAYOUT_ALIGN && v > UINT32_MAX)
    return error_at(p, &p->tok, "number out of range");
  if (key == LAYOUT_SIZE) {
    layout->size_bytes = v;
    layout->size_declared = true;
  } else
    layout->alignment = (uint32_t)v;
  return lex(p);
}

/* An optional "{strides = [...], size = N, align = N}"; what it leaves out
 * takes the default: packed strides, the minimum size for the strides, no
 * alignment. */
static dmlc_status parse_layout(parser *p, const dmlc_type *type, dmlc_layout *layout) {
  memset(layout, 0, sizeof *layout);
  unsigned seen = 0;
  if (p->tok.kind == TOK_LBRACE) {
    DMLC_RETURN_IF_ERROR(lex(p));
    while (p->tok.kind != TOK_RBRACE) {
      DMLC_RETURN_IF_ERROR(parse_layout_entry(p, type, layout, &seen));
      if (p->tok.kind != TOK_COMMA)
        break;
      DMLC_RETURN_IF_ERROR(lex(p));
    }
    DMLC_RETURN_IF_ERROR(expect(p, TOK_RBRACE, "'}'"));
  }
  if (!(seen & LAYOUT_STRIDES))
    dmlc_packed_strides(type, layout->strides);
  if (!(seen & LAYOUT_SIZE))
    layout->size_bytes = dmlc_min_size_bytes(type, layout->strides);
  return DMLC_OK;
}

/* ---- the signature ---- */
/* %NAME: TYPE LAYOUT? */
static dmlc_status parse_input(parser *p) {
  if (p->tok.kind != TOK_LOCAL)
    return expected(p, "an input ('%name: type')");
  const token name_tok = p->tok;
  char name[DMLC_NAME_MAX];
  if (!token_to_name(&name_tok, name))
    return error_at(p, &name_tok, "invalid input name '%.*s'", QUOTE(&name_tok));
  DMLC_RETURN_IF_ERROR(check_new_value(p));
  DMLC_RETURN_IF_ERROR(lex(p));
  DMLC_RETURN_IF_ERROR(expect(p, TOK_COLON, "':'"));
  dmlc_type type;
  dmlc_layout layout;
  DMLC_RETURN_IF_ERROR(parse_type(p, &type));
  DMLC_RETURN_IF_ERROR(parse_layout(p, &type, &layout));
  uint32_t value;
  DMLC_RETURN_IF_ERROR(dmlc_ir_add_input(p->g, name, &type, &layout, &value, p->diag));
  return define_value(p, &name_tok, value);
}

/* (%NAME:)? TYPE LAYOUT? */
static dmlc_status parse_output_sig(parser *p) {
  if (!DMLC_ARRAY_RESERVE(&p->outs, &p->cap_outs, (uint32_t)p->num_outs + 1, 8))
    return out_of_memory(p);
  output_sig *out = &p->outs[p->num_outs];
  memset(out, 0, sizeof *out);
  if (p->tok.kind == TOK_LOCAL) {
    if (!token_to_name(&p->tok, out->name))
      return error_at(p, &p->tok, "invalid output name '%.*s'", QUOTE(&p->tok));
    DMLC_RETURN_IF_ERROR(lex(p));
    DMLC_RETURN_IF_ERROR(expect(p, TOK_COLON, "':'"));
  } else {
    dmlc_default_output_name((uint32_t)p->num_outs, out->name, sizeof out->name);
  }
  DMLC_RETURN_IF_ERROR(parse_type(p, &out->type));
  DMLC_RETURN_IF_ERROR(parse_layout(p, &out->type, &out->layout));
  p->num_outs++;
  return DMLC_OK;
}

/* ---- nodes ---- */
static const struct {
  uint32_t bit;
  const char *name;
} attr_keys[] = {
    {DMLC_ATTR_AXES, "axes"}, {DMLC_ATTR_DIRECTION, "direction"}, {DMLC_ATTR_VALUE, "value"}};

static dmlc_status parse_direction(parser *p, dmlc_direction *out) {
  if (p->tok.kind != TOK_IDENT)
    return expected(p, "'increasing' or 'decreasing'");
  if (at_keyword(p, dmlc_direction_name(DMLC_DIRECTION_INCREASING)))
    *out = DMLC_DIRECTION_INCREASING;
  else if (at_keyword(p, dmlc_direction_name(DMLC_DIRECTION_DECREASING)))
    *out = DMLC_DIRECTION_DECREASING;
  else
    return error_at(p, &p->tok, "unknown direction '%.*s'", QUOTE(&p->tok));
  return lex(p);
}

/* "[a, b, ...]": axes as NumPy takes them, a negative axis counting from the
 * end of the operand's rank (-1 is the last dim); stored non-negative. */
static dmlc_status parse_axes(parser *p, dmlc_node *node) {
  DMLC_RETURN_IF_ERROR(expect(p, TOK_LBRACKET, "'['"));
  node->num_axes = 0;
  const int64_t rank =
      node->num_operands > 0 ? (int64_t)p->g->values[node->operands[0]].type.rank : -1;
  while (p->tok.kind != TOK_RBRACKET) {
    int64_t v = 0;
    DMLC_RETURN_IF_ERROR(number_i64(p, &v));
    if (node->num_axes == DMLC_MAX_RANK)
      return error_at(p, &p->tok, "more than %u axes", DMLC_MAX_RANK);
    if (v < 0 && rank < 0)
      return error_at(p, &p->tok,
                      "axis %lld: a negative axis counts from the end of the operand's rank, "
                      "and '%s' has no operand; write it as 0 to %u",
                      (long long)v, dmlc_op_get(node->op)->name, DMLC_MAX_RANK - 1);
    if (v < 0 && v < -rank)
      return error_at(p, &p->tok,
                      "axis %lld is out of range for rank %lld (negative axes count from the end: "
                      "-%lld to -1)",
                      (long long)v, (long long)rank, (long long)rank);
    if (v < 0)
      v += rank;
    if (v >= DMLC_MAX_RANK)
      return error_at(p, &p->tok, "axis %lld exceeds the maximum of %u", (long long)v,
                      DMLC_MAX_RANK - 1);
    node->axes[node->num_axes++] = (uint32_t)v;
    DMLC_RETURN_IF_ERROR(lex(p));
    if (p->tok.kind != TOK_COMMA)
      break;
    DMLC_RETURN_IF_ERROR(lex(p));
  }
  return expect(p, TOK_RBRACKET, "']'");
}

static dmlc_status parse_attr(parser *p, dmlc_node *node, uint32_t *seen) {
  const dmlc_op_info *info = dmlc_op_get(node->op);
  if (p->tok.kind != TOK_IDENT)
    return expected(p, "an attribute name");
  uint32_t key = 0;
  for (size_t i = 0; i < sizeof attr_keys / sizeof attr_keys[0]; i++)
    if (at_keyword(p, attr_keys[i].name))
      key = attr_keys[i].bit;
  if (!(key & info->attrs))
    return error_at(p, &p->tok, "unknown attribute '%.*s' for '%s'", QUOTE(&p->tok), info->name);
  if (*seen & key)
    return error_at(p, &p->tok, "duplicate attribute '%.*s'", QUOTE(&p->tok));
  *seen |= key;
  DMLC_RETURN_IF_ERROR(lex(p));
  DMLC_RETURN_IF_ERROR(expect(p, TOK_EQUAL, "'='"));
  if (key == DMLC_ATTR_DIRECTION)
    return parse_direction(p, &node->direction);
  if (key == DMLC_ATTR_VALUE) {
    DMLC_RETURN_IF_ERROR(number_i64(p, &node->value));
    return lex(p);
  }
  return parse_axes(p, node);
}

/* An optional "{key = value, ...}"; axes and value are required where the op
 * has them, direction defaults to increasing. */
static dmlc_status parse_attrs(parser *p, dmlc_node *node, const token *op_tok) {
  uint32_t seen = 0;
  if (p->tok.kind == TOK_LBRACE) {
    DMLC_RETURN_IF_ERROR(lex(p));
    while (p->tok.kind != TOK_RBRACE) {
      DMLC_RETURN_IF_ERROR(parse_attr(p, node, &seen));
      if (p->tok.kind != TOK_COMMA)
        break;
      DMLC_RETURN_IF_ERROR(lex(p));
    }
    DMLC_RETURN_IF_ERROR(expect(p, TOK_RBRACE, "'}'"));
  }
  const dmlc_op_info *info = dmlc_op_get(node->op);
  const uint32_t missing = info->attrs & (DMLC_ATTR_AXES | DMLC_ATTR_VALUE) & ~seen;
  for (size_t i = 0; i < sizeof attr_keys / sizeof attr_keys[0]; i++)
    if (missing & attr_keys[i].bit)
      return error_at(p, op_tok, "missing attribute '%s' for '%s'", attr_keys[i].name, info->name);
  return DMLC_OK;
}

static dmlc_status parse_operands(parser *p, dmlc_node *node, const token *op_tok) {
  const dmlc_op_info *info = dmlc_op_get(node->op);
  size_t count = 0;
  while (p->tok.kind == TOK_LOCAL) {
    uint32_t value;
    DMLC_RETURN_IF_ERROR(lookup_value(p, &value));
    if (count < DMLC_MAX_OPERANDS)
      node->operands[count] = value;
    count++;
    DMLC_RETURN_IF_ERROR(lex(p));
    if (p->tok.kind != TOK_COMMA)
      break;
    DMLC_RETURN_IF_ERROR(lex(p));
    if (p->tok.kind != TOK_LOCAL)
      return expected(p, "a value name");
  }
  if (count != info->num_operands)
    return error_at(p, op_tok, "expected %u operand%s for '%s', got %zu", info->num_operands,
                    info->num_operands == 1 ? "" : "s", info->name, count);
  node->num_operands = (uint32_t)count;
  return DMLC_OK;
}

/* %R = OP OPERANDS? ATTRS? : TYPE */
static dmlc_status parse_node(parser *p) {
  const token result_tok = p->tok;
  DMLC_RETURN_IF_ERROR(check_new_value(p));
  DMLC_RETURN_IF_ERROR(lex(p));
  DMLC_RETURN_IF_ERROR(expect(p, TOK_EQUAL, "'='"));
  if (p->tok.kind != TOK_IDENT)
    return expected(p, "an op name");
  dmlc_op op;
  if (!dmlc_op_from_name(p->tok.text, p->tok.len, &op))
    return error_at(p, &p->tok, "unknown op '%.*s'", QUOTE(&p->tok));
  const token op_tok = p->tok;
  DMLC_RETURN_IF_ERROR(lex(p));
  dmlc_node node = dmlc_node_make(op);
  node.src_line = (uint32_t)result_tok.line;
  node.src_col = (uint32_t)result_tok.col;
  if (!token_to_name(&result_tok, node.src_name))
    node.src_name[0] = '\0';
  DMLC_RETURN_IF_ERROR(parse_operands(p, &node, &op_tok));
  DMLC_RETURN_IF_ERROR(parse_attrs(p, &node, &op_tok));
  DMLC_RETURN_IF_ERROR(expect(p, TOK_COLON, "':'"));
  dmlc_type type;
  DMLC_RETURN_IF_ERROR(parse_type(p, &type));
  uint32_t value;
  DMLC_RETURN_IF_ERROR(dmlc_ir_add_node(p->g, &node, &type, &value, p->diag));
  return define_value(p, &result_tok, value);
}

/* return %V, %W -- then the graph's outputs are the returned values, typed
 * and laid out as the signature says. */
static dmlc_status parse_return(parser *p) {
  const token return_tok = p->tok;
  DMLC_RETURN_IF_ERROR(lex(p));
  while (p->tok.kind == TOK_LOCAL) {
    if (!DMLC_ARRAY_RESERVE(&p->rets, &p->cap_rets, (uint32_t)p->num_rets + 1, 8))
      return out_of_memory(p);
    returned *r = &p->rets[p->num_rets++];
    r->tok = p->tok;
    DMLC_RETURN_IF_ERROR(lookup_value(p, &r->value));
    DMLC_RETURN_IF_ERROR(lex(p));
    if (p->tok.kind != TOK_COMMA)
      break;
    DMLC_RETURN_IF_ERROR(lex(p));
    if (p->tok.kind != TOK_LOCAL)
      return expected(p, "a value name");
  }
  if (p->num_rets != p->num_outs)
    return error_at(p, &return_tok,
                    "return has %zu value%s but the signature declares %zu output%s", p->num_rets,
                    DMLC_PLURAL(p->num_rets), p->num_outs, DMLC_PLURAL(p->num_outs));
  for (size_t i = 0; i < p->num_rets; i++) {
    const returned *r = &p->rets[i];
    const dmlc_type *type = &p->g->values[r->value].type;
    if (!dmlc_type_equal(type, &p->outs[i].type)) {
      char got[DMLC_TYPE_STR_MAX], want[DMLC_TYPE_STR_MAX];
      return error_at(p, &r->tok, "type of returned value %%%.*s is %s, the signature declares %s",
                      QUOTE(&r->tok), dmlc_type_str(type, got, sizeof got),
                      dmlc_type_str(&p->outs[i].type, want, sizeof want));
    }
  }
  for (size_t i = 0; i < p->num_rets; i++)
    DMLC_RETURN_IF_ERROR(
        dmlc_ir_add_output(p->g, p->outs[i].name, p->rets[i].value, &p->outs[i].layout, p->diag));
  return DMLC_OK;
}

/* ---- kernels ---- */
/* "[r2, 3, ...]": the space's dims, 'r' marking the reduced ones. */
static dmlc_status parse_space(parser *p, dmlc_kernel *k) {
  DMLC_RETURN_IF_ERROR(expect(p, TOK_LBRACKET, "'['"));
  k->rank = 0;
  while (p->tok.kind != TOK_RBRACKET) {
    const bool reduced = p->tok.kind == TOK_IDENT && p->tok.text[0] == 'r';
    token digits = p->tok;
    digits.kind = TOK_NUMBER;
    if (reduced) {
      digits.text++;
      digits.len--;
      for (size_t i = 0; i < digits.len; i++)
        if (!is_digit(digits.text[i]))
          digits.len = 0;
      if (digits.len == 0)
        return expected(p, "a space dimension ('N' or 'rN')");
    } else if (p->tok.kind != TOK_NUMBER) {
      return expected(p, "a space dimension ('N' or 'rN')");
    }
    if (k->rank == DMLC_MAX_RANK)
      return error_at(p, &p->tok, "rank %u exceeds the maximum of %u", DMLC_MAX_RANK + 1,
                      DMLC_MAX_RANK);
    const token saved = p->tok;
    p->tok = digits;
    uint64_t v;
    const dmlc_status st = number_u64(p, &v);
    p->tok = saved;
    DMLC_RETURN_IF_ERROR(st);
    if (v > UINT32_MAX)
      return error_at(p, &p->tok, "number out of range");
    if (reduced)
      k->reduced_mask |= 1u << k->rank;
    k->dims[k->rank++] = (uint32_t)v;
    DMLC_RETURN_IF_ERROR(lex(p));
    if (p->tok.kind != TOK_COMMA)
      break;
    DMLC_RETURN_IF_ERROR(lex(p));
  }
  return expect(p, TOK_RBRACKET, "']'");
}

/* A buffer entry of reads(...) or writes(...): "%V [strides]", a write to a
 * graph output "%V -> %OUT [strides]". A written value is defined inside
 * the kernel, after this header: value_tok keeps its name to look up then. */
typedef struct buffer_entry {
  dmlc_kernel_buffer buf;
  token value_tok;
} buffer_entry;

static dmlc_status parse_buffer(parser *p, const dmlc_kernel *k, bool is_write, buffer_entry *e) {
  memset(e, 0, sizeof *e);
  e->buf.output = -1;
  if (p->tok.kind != TOK_LOCAL)
    return expected(p, "a value name");
  e->value_tok = p->tok;
  if (!is_write)
    DMLC_RETURN_IF_ERROR(lookup_value(p, &e->buf.value));
  DMLC_RETURN_IF_ERROR(lex(p));
  if (is_write && p->tok.kind == TOK_ARROW) {
    DMLC_RETURN_IF_ERROR(lex(p));
    if (p->tok.kind != TOK_LOCAL)
      return expected(p, "an output name ('%name')");
    for (size_t i = 0; i < p->num_outs && e->buf.output < 0; i++)
      if (strlen(p->outs[i].name) == p->tok.len &&
          memcmp(p->outs[i].name, p->tok.text, p->tok.len) == 0)
        e->buf.output = (int32_t)i;
    if (e->buf.output < 0)
      return error_at(p, &p->tok, "unknown output '%%%.*s'", QUOTE(&p->tok));
    DMLC_RETURN_IF_ERROR(lex(p));
  }
  const token list_tok = p->tok;
  uint32_t count;
  DMLC_RETURN_IF_ERROR(parse_list(p, LIST_STRIDES, k->rank, e->buf.strides, &count));
  if (count != k->rank)
    return error_at(p, &list_tok, "expected %u strides for the kernel's rank %u, got %u", k->rank,
                    k->rank, count);
  return DMLC_OK;
}

typedef struct buffer_list {
  buffer_entry *items;
  uint32_t count, cap;
} buffer_list;

/* KEYWORD '(' (buffer (',' buffer)*)? ')' */
static dmlc_status parse_buffers(parser *p, const dmlc_kernel *k, const char *keyword,
                                 buffer_list *list) {
  if (!at_keyword(p, keyword)) {
    char what[32];
    snprintf(what, sizeof what, "'%s'", keyword);
    return expected(p, what);
  }
  DMLC_RETURN_IF_ERROR(lex(p));
  DMLC_RETURN_IF_ERROR(expect(p, TOK_LPAREN, "'('"));
  while (p->tok.kind != TOK_RPAREN) {
    if (!DMLC_ARRAY_RESERVE(&list->items, &list->cap, list->count + 1, 8))
      return out_of_memory(p);
    DMLC_RETURN_IF_ERROR(
        parse_buffer(p, k, strcmp(keyword, "writes") == 0, &list->items[list->count]));
    list->count++;
    if (p->tok.kind != TOK_COMMA)
      break;
    DMLC_RETURN_IF_ERROR(lex(p));
  }
  return expect(p, TOK_RPAREN, "')'");
}

static dmlc_status parse_kernel_rest(parser *p, buffer_list *reads, buffer_list *writes) {
  const token kernel_tok = p->tok;
  DMLC_RETURN_IF_ERROR(lex(p)); /* 'kernel' */
  if (p->tok.kind != TOK_GLOBAL)
    return expected(p, "a kernel name ('@name')");
  if (symtab_find(&p->kernels, p->tok.text, p->tok.len))
    return error_at(p, &p->tok, "redefinition of kernel '@%.*s'", QUOTE(&p->tok));
  if (!symtab_insert(&p->kernels, p->tok.text, p->tok.len, 0))
    return out_of_memory(p);
  DMLC_RETURN_IF_ERROR(lex(p));
  dmlc_kernel k;
  memset(&k, 0, sizeof k);
  k.src_line = (uint32_t)kernel_tok.line;
  k.src_col = (uint32_t)kernel_tok.col;
  DMLC_RETURN_IF_ERROR(parse_space(p, &k));
  DMLC_RETURN_IF_ERROR(parse_buffers(p, &k, "reads", reads));
  DMLC_RETURN_IF_ERROR(parse_buffers(p, &k, "writes", writes));
  DMLC_RETURN_IF_ERROR(expect(p, TOK_LBRACE, "'{'"));
  k.first_node = p->g->num_nodes;
  while (p->tok.kind != TOK_RBRACE) {
    if (p->tok.kind != TOK_LOCAL)
      return expected(p, "a node or '}'");
    DMLC_RETURN_IF_ERROR(parse_node(p));
  }
  DMLC_RETURN_IF_ERROR(lex(p));
  k.num_nodes = p->g->num_nodes - k.first_node;
  k.num_reads = (uint32_t)reads->count;
  k.num_writes = (uint32_t)writes->count;
  dmlc_kernel_buffer *bufs = malloc((reads->count + writes->count + 1) * sizeof *bufs);
  if (!bufs)
    return out_of_memory(p);
  for (size_t i = 0; i < reads->count; i++)
    bufs[i] = reads->items[i].buf;
  dmlc_status st = DMLC_OK;
  const token after = p->tok;
  for (size_t i = 0; i < writes->count && st == DMLC_OK; i++) {
    p->tok = writes->items[i].value_tok; /* for the message, if it is undefined */
    bufs[reads->count + i] = writes->items[i].buf;
    st = lookup_value(p, &bufs[reads->count + i].value);
  }
  p->tok = after;
  if (st == DMLC_OK)
    st = dmlc_ir_add_kernel(p->g, &k, bufs, bufs + reads->count, p->diag);
  free(bufs);
  return st;
}

/* kernel @NAME SPACE reads(...) writes(...) { node* } */
static dmlc_status parse_kernel(parser *p) {
  buffer_list reads = {0}, writes = {0};
  const dmlc_status st = parse_kernel_rest(p, &reads, &writes);
  free(reads.items);
  free(writes.items);
  return st;
}

/* ---- the graph ---- */
static dmlc_status parse_signature(parser *p) {
  if (!at_keyword(p, "graph"))
    return expected(p, "'graph'");
  DMLC_RETURN_IF_ERROR(lex(p));
  if (p->tok.kind != TOK_GLOBAL)
    return expected(p, "a graph name ('@name')");
  char name[DMLC_NAME_MAX];
  if (!token_to_name(&p->tok, name))
    return error_at(p, &p->tok, "invalid graph name '%.*s'", QUOTE(&p->tok));
  p->g = dmlc_ir_graph_create(name);
  if (!p->g)
    return out_of_memory(p);
  DMLC_RETURN_IF_ERROR(lex(p));
  DMLC_RETURN_IF_ERROR(expect(p, TOK_LPAREN, "'('"));
  while (p->tok.kind != TOK_RPAREN) {
    DMLC_RETURN_IF_ERROR(parse_input(p));
    if (p->tok.kind != TOK_COMMA)
      break;
    DMLC_RETURN_IF_ERROR(lex(p));
  }
  DMLC_RETURN_IF_ERROR(expect(p, TOK_RPAREN, "')'"));
  DMLC_RETURN_IF_ERROR(expect(p, TOK_ARROW, "'->'"));
  DMLC_RETURN_IF_ERROR(expect(p, TOK_LPAREN, "'('"));
  while (p->tok.kind != TOK_RPAREN) {
    DMLC_RETURN_IF_ERROR(parse_output_sig(p));
    if (p->tok.kind != TOK_COMMA)
      break;
    DMLC_RETURN_IF_ERROR(lex(p));
  }
  return expect(p, TOK_RPAREN, "')'");
}

static dmlc_status parse_graph(parser *p) {
  DMLC_RETURN_IF_ERROR(lex(p));
  DMLC_RETURN_IF_ERROR(parse_signature(p));
  DMLC_RETURN_IF_ERROR(expect(p, TOK_LBRACE, "'{'"));
  while (!at_keyword(p, "return")) {
    if (at_keyword(p, "kernel"))
      DMLC_RETURN_IF_ERROR(parse_kernel(p));
    else if (p->tok.kind == TOK_LOCAL)
      DMLC_RETURN_IF_ERROR(parse_node(p));
    else
      return expected(p, "a node, a kernel or 'return'");
  }
  DMLC_RETURN_IF_ERROR(parse_return(p));
  DMLC_RETURN_IF_ERROR(expect(p, TOK_RBRACE, "'}'"));
  if (p->tok.kind != TOK_EOF)
    return error_at(p, &p->tok, "expected end of input");
  return DMLC_OK;
}

dmlc_status dmlc_ir_parse(const char *text, size_t length, const char *filename,
                          dmlc_ir_graph **out, dmlc_diag *diag) {
  if (!out || (!text && length))
    return dmlc_diag_set(diag, DMLC_ERROR_INVALID_ARGUMENT, "dmlc_ir_parse: no text or no output");
  *out = NULL;
  parser p;
  memset(&p, 0, sizeof p);
  p.text = text ? text : "";
  p.length = length;
  p.line = p.col = 1;
  p.filename = filename ? filename : "<input>";
  p.diag = diag;
  const dmlc_status status = parse_graph(&p);
  free(p.values.slots);
  free(p.kernels.slots);
  free(p.outs);
  free(p.rets);
  if (status != DMLC_OK) {
    dmlc_ir_graph_destroy(p.g);
    return status;
  }
  snprintf(p.g->source, sizeof p.g->source, "%s", p.filename);
  *out = p.g;
  return DMLC_OK;
}
