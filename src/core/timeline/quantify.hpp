// The remedies of a diagnosis quantified with the estimator (`--config` / `--model` on run and
// analyze): the job's estimated peak against the measured one, and what each remedy saves.
#pragma once
#include <nlohmann/json.hpp>
#include <string>

#include "core/estimator/estimate.hpp"
#include "core/estimator/model_config.hpp"
#include "core/result.hpp"
#include "core/timeline/diagnosis.hpp"
#include "core/timeline/timeline.hpp"

namespace vramdoc::timeline {

// Estimates `job` on `model` and every remedy of estimator::remedies (core/estimator/remedies.hpp:
// only those that apply to the job, cheapest first) against the card's capacity; for insufficient
// also the largest batch, for leak the steps left. Errors: the estimator's.
Result<Quantified> quantify(const Timeline& tl, const Diagnosis& d, const estimator::ModelConfig& model,
                            const estimator::Options& job);

// With d.quantified set: an insufficient job's need becomes the estimator's figure when that is
// larger (what was measured stopped at the failure), and the summary names what fits.
void apply_quantified(Diagnosis& d);

// The capacity the fits compare with: the timeline's total, the OOM message's, or the card table's
// entry for the timeline's device; empty when none is known. `source` says which.
std::optional<std::uint64_t> capacity_for(const Timeline& tl, const Diagnosis& d, std::string& source);

// The quantified block of the text report (a few lines and an aligned table), indented by 4.
std::string render_quantified_text(const Quantified& q);
// {"model", "job", "estimated_bytes", "measured_bytes", "capacity_bytes", "fits", "max_batch", ...}.
nlohmann::json quantified_json(const Quantified& q);
// `remedies_quantified`: [{"name", "change", "process_bytes", "saving_bytes", "fits"}, ...].
nlohmann::json remedies_quantified_json(const Quantified& q);
// An HTML fragment: the comparison sentence and a table of the remedies (escaped).
std::string render_quantified_html(const Quantified& q);

}  // namespace vramdoc::timeline
