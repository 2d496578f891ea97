/* A small SPIR-V word builder: ids, deduplicated types and constants,
 * decorations, global variables (remembered for the entry point's
 * interface, as SPIR-V 1.4+ requires) and one function body. The module is
 * laid out in the order the specification demands only in spvb_finish, so
 * capabilities and globals may be added while the body is being emitted. */
#ifndef DMLC_CODEGEN_SPIRV_BUILDER_H
#define DMLC_CODEGEN_SPIRV_BUILDER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <spirv/unified1/spirv.h>

typedef struct spvb_words {
  uint32_t *w;
  uint32_t n, cap;
} spvb_words;

#define SPVB_MAX_INTERFACE 32

typedef struct spvb {
  spvb_words caps, exts, imports, annots, globals, fvars, code;
  uint32_t next_id;
  uint32_t interface[SPVB_MAX_INTERFACE];
  uint32_t num_interface;
  bool failed; /* out of memory or too many interface variables */
} spvb;

void spvb_init(spvb *b);
void spvb_free(spvb *b);
uint32_t spvb_id(spvb *b);

void spvb_capability(spvb *b, SpvCapability cap);
void spvb_extension(spvb *b, const char *name);
/* OpExtInstImport of an instruction set ("GLSL.std.450"); returns its id. */
uint32_t spvb_import(spvb *b, const char *name);
void spvb_decorate(spvb *b, uint32_t target, SpvDecoration d, const uint32_t *args, uint32_t n);
void spvb_member_decorate(spvb *b, uint32_t type, uint32_t member, SpvDecoration d,
                          const uint32_t *args, uint32_t n);

/* A type instruction (result id first), deduplicated unless it is a struct
 * (structs carry their own decorations). ops excludes the result id. */
uint32_t spvb_type(spvb *b, SpvOp op, const uint32_t *ops, uint32_t n);
/* A constant (type, result, ops...), deduplicated. */
uint32_t spvb_constant(spvb *b, SpvOp op, uint32_t type, const uint32_t *ops, uint32_t n);
/* A module-scope OpVariable, added to the entry point's interface. */
uint32_t spvb_global_var(spvb *b, uint32_t ptr_type, SpvStorageClass sc);
/* A function-scope OpVariable, placed at the top of the entry block. */
uint32_t spvb_local_var(spvb *b, uint32_t ptr_type);

/* An instruction of the function body. With type != 0 it has a result:
 * (type, result, ops...) and its id is returned; otherwise (ops...), 0. */
uint32_t spvb_code(spvb *b, SpvOp op, uint32_t type, const uint32_t *ops, uint32_t n);
void spvb_label(spvb *b, uint32_t id);

/* Lays the module out: header, capabilities, extensions, memory model, the
 * GLCompute entry point "main" (void function main_fn of type fn_type),
 * LocalSize, annotations, globals, the function. The body must end its last
 * block. Returns a malloc'ed word array, or NULL when out of memory. */
uint32_t *spvb_finish(spvb *b, uint32_t main_fn, uint32_t void_type, uint32_t fn_type,
                      uint32_t local_size, size_t *num_words);

#define SPVB_N(...) (sizeof((const uint32_t[]){__VA_ARGS__}) / sizeof(uint32_t))
/* spvb_code with a literal operand list: SPV(b, SpvOpIAdd, t_uint, x, y). */
#define SPV(b, op, type, ...)                                                                      \
  spvb_code((b), (op), (type), (const uint32_t[]){__VA_ARGS__}, (uint32_t)SPVB_N(__VA_ARGS__))
#define SPV_TYPE(b, op, ...)                                                                       \
  spvb_type((b), (op), (const uint32_t[]){__VA_ARGS__}, (uint32_t)SPVB_N(__VA_ARGS__))

#endif
