// The symbolisation plan of one traced process: which addresses of which module files the
// report needs named, which files may name them (the GNU build-id the trace recorded must be
// the file's), and the stacks resolved from the answers. Running addr2line is the backends'
// (backends/trace/addr2line.hpp): it comes in as a function.
#pragma once
#include <cstdint>
#include <functional>
#include <string>
#include <unordered_map>
#include <vector>

#include "core/trace/reader.hpp"
#include "core/trace/report.hpp"

namespace vramdoc::trace {

// Names the file addresses of one module file; an address it cannot name is left out.
using Symbolizer =
    std::function<std::unordered_map<std::uint64_t, SourceFrame>(const std::string& path, const std::vector<std::uint64_t>& addresses)>;

// `trace` (read from `file`) analysed, with the stacks its groups name symbolised by `symbolize`.
// A module file rebuilt or replaced since the trace would name the wrong lines: its frames stay
// module+offset, with a warning; a file that is not here is not symbolised.
ProcessTrace symbolized_process(const std::string& file, const Trace& trace, const Symbolizer& symbolize);

}  // namespace vramdoc::trace
