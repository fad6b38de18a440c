// Renderers: the estimate as JSON (for programs) or an aligned table (for people). They return
// the whole document; only the CLI writes.
#pragma once
#include <optional>
#include <string>
#include <vector>

#include "core/estimator/estimate.hpp"
#include "core/estimator/fit.hpp"
#include "core/estimator/remedies.hpp"
#include "core/style.hpp"

namespace vramdoc::estimator {

// What the user asked to fit into, and the answers.
struct FitReport {
  std::optional<std::string> target_name;      // "RTX 4090", "24.00 GiB", or empty
  std::optional<std::uint64_t> usable_bytes;   // memory of the target
  std::vector<std::string> fits_on;             // every card in the table it fits on
  std::optional<SearchResult> max_batch;
  std::optional<SearchResult> max_seq;
  RemedyRequest remedy_request;   // the target and the question the remedies answer
  std::vector<Remedy> remedies;   // evaluated for this job, cheapest first (remedies.hpp)
};

// Every card of the table the estimate fits on (with the safety margin).
std::vector<std::string> cards_that_fit(const Estimate& e);
// The JSON document vramdoc.estimate/1 (one line + "\n"): inputs, the three totals, breakdown, phases, fit.
std::string render_json(const ModelConfig& model, const Options& options, const Estimate& e, const FitReport& fit);
// The table a person reads: terms at the peak phase in GiB, the biggest marked, totals, fit, the remedies
// (the warnings are the caller's to print first, on stderr).
// With colour, FITS is green and DOES NOT FIT red.
std::string render_text(const ModelConfig& model, const Options& options, const Estimate& e, const FitReport& fit,
                        const Style& style = {});

}  // namespace vramdoc::estimator
