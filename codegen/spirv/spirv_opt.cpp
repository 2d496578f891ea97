// The SPIRV-Tools optimizer's performance passes. Its API is C++ only; this
// file exposes the one C function spirv.h declares (declared again here so
// that no C header has to compile as C++).
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <vector>

#include <spirv-tools/optimizer.hpp>

extern "C" bool dmlc_spirv_optimize(const uint32_t *words, size_t num_words, uint32_t **out,
                                    size_t *out_num_words);

extern "C" bool dmlc_spirv_optimize(const uint32_t *words, size_t num_words, uint32_t **out,
                                    size_t *out_num_words) {
  try {
    spvtools::Optimizer opt(SPV_ENV_VULKAN_1_2);
    opt.SetMessageConsumer(
        [](spv_message_level_t, const char *, const spv_position_t &, const char *) {});
    opt.RegisterPerformancePasses();
    std::vector<uint32_t> result;
    spvtools::OptimizerOptions options;
    options.set_run_validator(false); // dmlc validates before and after
    if (!opt.Run(words, num_words, &result, options) || result.empty())
      return false;
    uint32_t *copy = static_cast<uint32_t *>(std::malloc(result.size() * sizeof(uint32_t)));
    if (!copy)
      return false;
    std::memcpy(copy, result.data(), result.size() * sizeof(uint32_t));
    *out = copy;
    *out_num_words = result.size();
    return true;
  } catch (...) {
    return false;
  }
}
