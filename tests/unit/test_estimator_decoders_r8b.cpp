// Issue 28, round 8b (decoders whose mechanism was missing): round 8's held-out decoder misses
// (tests/data/estimator/pytorch-h200-kinds-g.*), one H200, a fresh process per case, dev now, against the mechanisms
// read from their modelling code (transformers 5.17). Each case within its bound: its measured error rounded up,
// parameter counts exact; without the mechanism each bound fails (the error before is in each test's comment).
#include <gtest/gtest.h>

#include <map>
#include <string>

#include "kinds_records.hpp"

namespace {

void expect_within(const std::string& set, const std::map<std::string, vramdoc::test::CaseBound>& cases) {
  vramdoc::test::expect_cases_within(set, cases, /*exact_params=*/true);
}

}  // namespace

// Regression: Bamba read as a llama-style decoder (its Mamba2 layers attention, n_params wrong): -73.6 % allocated,
// -72.4 % process in training. attn_layer_indices with mamba_n_heads (hybrid_config.cpp) give BambaMixer's layers,
// sized by the mamba_* fields; the mixer is round 7's Mamba2Mixer.torch_forward (forward_ssm2.cpp: the chunked SSD's
// fp32 broadcast products and their backward) inside the hybrid's decoder layer.
TEST(EstimatorDecodersRound8b, BambaMamba2LayersByIndex) {
  expect_within("pytorch-h200-kinds-g", {{"010-bamba-s-causal-lm-train-bf16", {0.011, 0.005}}});
}
