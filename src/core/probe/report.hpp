// The probe's conclusion in the articles' words, and its text / JSON / SVG renderings.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/chart/svg.hpp"
#include "core/probe/fit.hpp"
#include "core/probe/search.hpp"
#include "core/style.hpp"

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
  int confirm_steps = 0;                  // the confirmation's length asked for (0: none)
  std::optional<std::uint64_t> confirmed;  // the value whose confirmation held
  // The trial cap ended the search before the neighbours were found: the values between the
  // largest that ran and the smallest that did not (or --max) that no trial tried, first and last.
  std::optional<std::pair<std::uint64_t, std::uint64_t>> untried;
  // The largest memory outside the allocator a trial measured (the CUDA context; settle.hpp).
  std::optional<std::uint64_t> outside_allocator_bytes;
};

// Where the answer's confirmation peaked above its own earlier trial (by more than 1 % of the card,
// or 64 MiB without one) and settled later: the job's shapes vary from step to step (random sequence
// lengths, padding to the longest sample), so its peak is set by the largest batch seen so far and
// the largest value is the edge of what ran, not a guarantee (H200 2026-12-02: a Qwen2 job on random
// lengths, 15.05 GiB in its 12-step trial, 15.82 in the 50-step confirmation, settled at step 27).
// The sentence for the report, empty otherwise.
std::string late_rise_note(const ProbeReport& report);

// Builds the report from a finished (or budget-stopped) search.
ProbeReport conclude(const Search& search, std::string parameter, std::optional<std::uint64_t> capacity_bytes,
                     double margin_fraction, bool budget_exhausted);

// One line: "too big even at batch 1", "leaks: ...", "fits up to batch 48", ...
std::string verdict_line(const ProbeReport& report);
// Machine-readable verdict: too_big, leak, other_failure, unmeasured, fits_up_to, fits_up_to_max,
// fits_at_least (the trial cap left values above the answer untried: `untried`), incomplete.
std::string verdict_code(const ProbeReport& report);

// The verdict line, the table of trials, the fit and the recommendation; with colour, the verdict
// is green when a value was found, red when none can be, yellow when the search stopped early.
std::string render_text(const ProbeReport& report, const Style& style = {});
// The report's members as JSON, and the whole JSON document vramdoc.probe/1.
nlohmann::json to_json(const ProbeReport& report);
std::string render_json(const ProbeReport& report);
// The chart of each trial's peak against its value, the fit, the card's memory, the recommendation.
chart::Chart probe_chart(const ProbeReport& report);
// That chart as one SVG drawing (the wide one).
std::string render_svg(const ProbeReport& report);
// `probe --html`: a self-contained page with the verdict, the chart and the text report.
std::string render_html(const ProbeReport& report);
// A one-line progress report of a trial, for stderr while probing.
std::string progress_line(const std::string& parameter, const Trial& trial);

}  // namespace vramdoc::probe
