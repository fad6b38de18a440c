#include "backends/nvml_symbols.hpp"

#include <dlfcn.h>

#include <initializer_list>

namespace vramdoc::backends::nvml_symbols {

namespace {

// Finds the first of `names` the library exports.
template <class Fn>
void find(void* library, Symbol<Fn>& symbol, std::initializer_list<const char*> names) {
  for (const char* name : names) {
    if (void* address = dlsym(library, name)) {
      symbol.fn = reinterpret_cast<Fn>(address);
      symbol.name = name;
      return;
    }
  }
}

}  // namespace

std::optional<std::string> resolve(void* library, Symbols& symbols) {
  std::optional<std::string> missing;
#define VRAMDOC_NVML_RESOLVE(member, need, type, ...)                      \
  find(library, symbols.member, {__VA_ARGS__});                            \
  if (need == kRequired && !symbols.member && !missing) {                  \
    missing = std::initializer_list<const char*>{__VA_ARGS__}.begin()[0];  \
  }
  VRAMDOC_NVML_SYMBOLS(VRAMDOC_NVML_RESOLVE)
#undef VRAMDOC_NVML_RESOLVE
  return missing;
}

std::vector<std::string> resolved_names(const Symbols& symbols) {
  std::vector<std::string> names;
#define VRAMDOC_NVML_NAME(member, need, type, ...) \
  if (symbols.member.name) names.emplace_back(symbols.member.name);
  VRAMDOC_NVML_SYMBOLS(VRAMDOC_NVML_NAME)
#undef VRAMDOC_NVML_NAME
  return names;
}

}  // namespace vramdoc::backends::nvml_symbols
