/* Target facts the LLVM C API lacks (target_info.cpp). */
#ifndef DMLC_CODEGEN_LLVM_TARGET_INFO_H
#define DMLC_CODEGEN_LLVM_TARGET_INFO_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Checks that cpu ("" or "generic": the triple's baseline) and every
 * +name/-name of features exist for triple, and returns in *out_enabled
 * (malloc'ed) every feature the combination enables, comma-separated
 * without signs. 0 on success; -1 with a message in error otherwise. The
 * triple's target must be initialized. */
int dmlc_llvm_target_features(const char *triple, const char *cpu, const char *features,
                              char **out_enabled, char *error, size_t error_size);

#ifdef __cplusplus
}
#endif

#endif
