// What LLVM's C API does not say about a target: whether a CPU or feature
// name exists, and every feature a CPU plus a feature string enables. One
// C entry point (target_info.h); C++ only because MCSubtargetInfo is.
#include "codegen/llvm/target_info.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>

#include <llvm/ADT/StringRef.h>
#include <llvm/MC/MCSubtargetInfo.h>
#include <llvm/MC/TargetRegistry.h>
#include <llvm/TargetParser/Triple.h>

namespace {

char *copy(const std::string &s) {
  char *p = static_cast<char *>(std::malloc(s.size() + 1));
  if (p)
    std::memcpy(p, s.c_str(), s.size() + 1);
  return p;
}

bool known_feature(const llvm::MCSubtargetInfo &sti, llvm::StringRef name) {
  for (const llvm::SubtargetFeatureKV &kv : sti.getAllProcessorFeatures())
    if (name == kv.Key)
      return true;
  return false;
}

} // namespace

extern "C" int dmlc_llvm_target_features(const char *triple, const char *cpu, const char *features,
                                         char **out_enabled, char *error, size_t error_size) {
  *out_enabled = nullptr;
  std::string message;
  const llvm::Target *target = llvm::TargetRegistry::lookupTarget(triple, message);
  if (!target) {
    std::snprintf(error, error_size, "unknown target '%s': %s", triple, message.c_str());
    return -1;
  }
  // Names are checked on the baseline subtarget first: LLVM warns on
  // standard error about an unknown name when it builds a subtarget with it.
  std::unique_ptr<llvm::MCSubtargetInfo> base(target->createMCSubtargetInfo(triple, "", ""));
  if (!base) {
    std::snprintf(error, error_size, "no subtarget information for '%s'", triple);
    return -1;
  }
  if (*cpu && std::strcmp(cpu, "generic") != 0 && !base->isCPUStringValid(cpu)) {
    std::snprintf(error, error_size,
                  "unknown CPU '%s' for %s (llc -mtriple=%s -mcpu=help lists them)", cpu, triple,
                  triple);
    return -1;
  }
  llvm::StringRef rest(features);
  while (!rest.empty()) {
    auto [item, tail] = rest.split(',');
    rest = tail;
    item = item.trim();
    if (item.empty())
      continue;
    if (item[0] != '+' && item[0] != '-') {
      std::snprintf(error, error_size, "feature '%.*s' must start with + or -",
                    static_cast<int>(item.size()), item.data());
      return -1;
    }
    if (!known_feature(*base, item.drop_front())) {
      std::snprintf(error, error_size,
                    "unknown feature '%.*s' for %s (llc -mtriple=%s -mattr=help lists them)",
                    static_cast<int>(item.size() - 1), item.data() + 1, triple, triple);
      return -1;
    }
  }
  std::unique_ptr<llvm::MCSubtargetInfo> sti(target->createMCSubtargetInfo(triple, cpu, features));
  if (!sti) {
    std::snprintf(error, error_size, "no subtarget information for '%s'", triple);
    return -1;
  }
  std::string enabled;
  const llvm::FeatureBitset &bits = sti->getFeatureBits();
  for (const llvm::SubtargetFeatureKV &kv : sti->getAllProcessorFeatures())
    if (bits.test(kv.Value)) {
      if (!enabled.empty())
        enabled += ',';
      enabled += kv.Key;
    }
  *out_enabled = copy(enabled);
  if (!*out_enabled) {
    std::snprintf(error, error_size, "out of memory");
    return -1;
  }
  return 0;
}
