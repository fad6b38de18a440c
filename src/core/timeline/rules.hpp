// The classifier's decision: a table of rules over the measured features (features.hpp), tried in
// order; the first that applies sets the verdict and says why. The table is in
// docs/run-analyze.md, "The rules".
#pragma once
#include <string>
#include <vector>

#include "core/timeline/features.hpp"

namespace vramdoc::timeline {

// Sets d.verdict, d.rule, d.reasons / d.to_settle from the first rule that applies, then keeps
// the verdict consistent with the trace: growth the tracer saw is never reported as "nothing leaks".
void decide(const Features& f, Diagnosis& d);

}  // namespace vramdoc::timeline
