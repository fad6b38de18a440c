// Symbolisation out of process: binutils' addr2line names a module file's addresses
// (function, file:line), run by the one launcher (backends/launcher.hpp). addr2line missing or
// failing leaves the frames as module+offset.
#pragma once
#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

#include "core/trace/symbols.hpp"

namespace vramdoc::backends {

// The frames addr2line gives for `addresses` (file addresses) of the module file `path`; empty
// when the file is not a regular file or addr2line cannot be run. A trace::Symbolizer.
std::unordered_map<std::uint64_t, trace::SourceFrame> addr2line_symbolize(const std::string& path,
                                                                          const std::vector<std::uint64_t>& addresses);

}  // namespace vramdoc::backends
