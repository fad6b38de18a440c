// Renderers of a BenchReport: they return strings; only the CLI writes them.
#pragma once
#include <string>

#include "core/bench/result.hpp"

namespace vramdoc::bench {

// The readable table (level, measure, result, min-max, peak, % of peak, how) and the notes.
std::string render_text(const BenchReport& report);
// The whole report as JSON (schema "vramdoc.bench/1"), curves included.
std::string render_json(const BenchReport& report);
// One SVG page: the latency curve (cycles over footprint, log x) and bandwidth per level (bars).
std::string render_svg(const BenchReport& report);

}  // namespace vramdoc::bench
