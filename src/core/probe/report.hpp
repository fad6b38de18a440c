// The probe's conclusion in the articles' words, and its text / JSON / SVG renderings.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/chart/svg.hpp"
#include "core/probe/fit.hpp"
#include "core/probe/search.hpp"

namespace vramdoc::probe {

struct ProbeReport {
  std::string parameter = "batch";  // what was varied: batch or seq
  StopReason reason = StopReason::Running;
  std::vector<Trial> trials;
  std::optional<std::uint64_t> largest_ok;
  std::optional<std::uint64_t> smallest_oom;
  std::optional<PeakFit> fit;
  Recommendation recommendation;
  std::optional<std::uint64_t> capacity_bytes;
  bool budget_exhausted = false;
};

// Builds the report from a finished (or budget-stopped) search.
ProbeReport conclude(const Search& search, std::string parameter, std::optional<std::uint64_t> capacity_bytes,
                     double margin_fraction, bool budget_exhausted);

// One line: "too big even at batch 1", "leaks: ...", "fits up to batch 48", ...
std::string verdict_line(const ProbeReport& report);
// Machine-readable verdict: too_big, leak, other_failure, fits_up_to, fits_up_to_max, incomplete.
std::string verdict_code(const ProbeReport& report);

std::string render_text(const ProbeReport& report);
nlohmann::json to_json(const ProbeReport& report);
// The chart of each trial's peak against its value, the fit, the card's memory, the recommendation.
chart::Chart probe_chart(const ProbeReport& report);
// That chart as one SVG drawing (the wide one).
std::string render_svg(const ProbeReport& report);
// The page of `probe --html`: the verdict, the chart, the text report.
std::string render_html(const ProbeReport& report);
// A one-line progress report of a trial, for stderr while probing.
std::string progress_line(const std::string& parameter, const Trial& trial);

}  // namespace vramdoc::probe
