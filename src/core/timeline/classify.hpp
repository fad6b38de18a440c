// The classifier: leak / insufficient / fragmentation / plateau / stable / inconclusive.
// Method and thresholds: docs/run-analyze.md.
#pragma once
#include "core/timeline/diagnosis.hpp"
#include "core/timeline/series.hpp"
#include "core/timeline/timeline.hpp"

namespace vramdoc::timeline {

// Diagnoses a timeline (one job's, or one process's series of it). Never fails: input too poor
// to judge gives Inconclusive with the reason. `trace`: what an allocation trace of the same run
// says (trace_evidence.hpp); the verdict then agrees with it. `grid_points`: the most points of
// the regular grid a recording that left out unchanged ticks is judged on (series.hpp).
Diagnosis classify(const Timeline& tl, const std::optional<TraceEvidence>& trace = std::nullopt, std::size_t grid_points = kMaxGridPoints);

// One sentence: the verdict and its main figure.
std::string summary_for(const Diagnosis& d);

// Remedies from the articles for a verdict (plain sentences, most effective first).
std::vector<std::string> remedies_for(const Diagnosis& d);

// True for the verdicts that name a problem (leak, insufficient, fragmentation): analyze exits 1.
bool is_problem(Verdict verdict);

// A run that sampled no GPU memory cannot judge: an inconclusive verdict says the missing
// sampling (the start of `why`, e.g. "libnvidia-ml.so.1 not found: no NVIDIA driver") is the
// reason, instead of asking to record longer. Other verdicts (from an OOM message) stay.
void explain_unsampled(Diagnosis& d, const std::string& why);

}  // namespace vramdoc::timeline
