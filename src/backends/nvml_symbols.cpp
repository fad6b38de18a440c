#include "backends/nvml_symbols.hpp"

namespace vramdoc::backends::nvml_symbols {

std::optional<std::string> resolve(void* library, Symbols& symbols) {
  std::optional<std::string> missing;
  VRAMDOC_NVML_SYMBOLS(VRAMDOC_SYMBOL_RESOLVE)
  return missing;
}

std::vector<std::string> resolved_names(const Symbols& symbols) {
  std::vector<std::string> names;
  VRAMDOC_NVML_SYMBOLS(VRAMDOC_SYMBOL_NAME)
  return names;
}

}  // namespace vramdoc::backends::nvml_symbols
