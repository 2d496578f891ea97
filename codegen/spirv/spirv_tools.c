/* Validation and disassembly through SPIRV-Tools' C API, for the Vulkan 1.2
 * target environment. The one C file that includes libspirv.h (it defines
 * a constant, so a second includer would clash at link time). */
#include <stdlib.h>
#include <string.h>

#include <spirv-tools/libspirv.h>

#include "codegen/spirv/spirv.h"

dmlc_status dmlc_spirv_validate(const uint32_t *words, size_t num_words, dmlc_diag *diag) {
  spv_context ctx = spvContextCreate(SPV_ENV_VULKAN_1_2);
  if (!ctx)
    return dmlc_diag_set(diag, DMLC_ERROR_OUT_OF_MEMORY, "out of memory creating a SPIR-V context");
  spv_const_binary_t binary = {words, num_words};
  spv_diagnostic d = NULL;
  const spv_result_t r = spvValidate(ctx, &binary, &d);
  dmlc_status s = DMLC_OK;
  if (r != SPV_SUCCESS)
    s = dmlc_diag_set(diag, DMLC_ERROR_INTERNAL, "generated SPIR-V is invalid: %s",
                      d && d->error ? d->error : "the validator gave no message");
  spvDiagnosticDestroy(d);
  spvContextDestroy(ctx);
  return s;
}

dmlc_status dmlc_spirv_disassemble(const uint32_t *words, size_t num_words, char **out_text,
                                   dmlc_diag *diag) {
  *out_text = NULL;
  spv_context ctx = spvContextCreate(SPV_ENV_VULKAN_1_2);
  if (!ctx)
    return dmlc_diag_set(diag, DMLC_ERROR_OUT_OF_MEMORY, "out of memory creating a SPIR-V context");
  spv_text text = NULL;
  spv_diagnostic d = NULL;
  const spv_result_t r = spvBinaryToText(
      ctx, words, num_words,
      SPV_BINARY_TO_TEXT_OPTION_FRIENDLY_NAMES | SPV_BINARY_TO_TEXT_OPTION_INDENT, &text, &d);
  dmlc_status s = DMLC_OK;
  if (r != SPV_SUCCESS) {
    s = dmlc_diag_set(diag, DMLC_ERROR_INTERNAL, "cannot disassemble SPIR-V: %s",
                      d && d->error ? d->error : "no message");
  } else {
    char *copy = malloc(text->length + 1);
    if (!copy) {
      s = dmlc_diag_set(diag, DMLC_ERROR_OUT_OF_MEMORY, "out of memory disassembling SPIR-V");
    } else {
      memcpy(copy, text->str, text->length);
      copy[text->length] = '\0';
      *out_text = copy;
    }
  }
  spvTextDestroy(text);
  spvDiagnosticDestroy(d);
  spvContextDestroy(ctx);
  return s;
}
