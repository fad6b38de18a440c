// Issue 28, after round 9's evaluation: round 9's held-out decoder misses (tests/data/estimator/pytorch-h200-kinds-h.*),
// one H200, a fresh process per case, dev now, against the mechanisms read from their modelling code (transformers
// 5.17). Each case within its bound: its measured error rounded up, parameter counts exact; without the mechanism each
// bound fails (the error before is in each test's comment).
#include <gtest/gtest.h>

#include <map>
#include <string>

#include "kinds_records.hpp"

namespace {

void expect_within(const std::string& set, const std::map<std::string, vramdoc::test::CaseBound>& cases) {
  vramdoc::test::expect_cases_within(set, cases, /*exact_params=*/true);
}

}  // namespace

// Regression: Falcon-H1 read as a llama-style decoder (no Mamba2 mixer: parameters 174,074,880 for 194,132,256):
// -66.7 % allocated, -58.9 % process in training. Without attn_layer_indices or a layer list, the branch multipliers
// (ssm_out_multiplier, attention_out_multiplier) mark FalconH1DecoderLayer's parallel layer: FalconH1Mixer (Mamba2's
// torch path, mamba_d_ssm wide, no gated norm with mamba_rms_norm false, the ssm_in / mup_vector products) beside
// the attention in every layer (hybrid_config.cpp, forward_hybrid.cpp).
TEST(EstimatorAfterRound9, FalconH1ParallelMamba2AndAttention) {
  expect_within("pytorch-h200-kinds-h", {{"011-falconh1-s-causal-lm-train-bf16", {1.5, 0.1}}});
}

// Regression: OLMo 3 read as a llama-style decoder (no q_norm / k_norm over the whole q and k, norms before the
// sublayers, no window: parameters 16,384 short): -7.7 / -6.3 % in training, +0.0 / -5.4 % in inference.
// Olmo3DecoderLayer is Olmo2DecoderLayer (modular_olmo3.py); layer_types "sliding_attention" with sliding_window
// give the windowed layers their mask (families.cpp).
TEST(EstimatorAfterRound9, Olmo3IsOlmo2WithWindowedLayers) {
  expect_within("pytorch-h200-kinds-h", {{"000-olmo3-s-causal-lm-train-bf16", {0.1, 0.1}},
                                         {"001-olmo3-s-causal-lm-infer-bf16", {0.8, 0.6}}});
}

// Regression: ERNIE-4.5-MoE's experts not read (moe_num_experts, moe_k, moe_num_shared_experts: a dense decoder of
// 154,149,888 parameters for 210,822,192): -8.0 / +15.5 % in training, -31.6 / -25.3 % in inference. Its experts in
// the layers moe_layer_start_index..moe_layer_end_index every moe_layer_interval, the shared experts
// moe_num_shared_experts x moe_intermediate_size wide, moe_statics' gradless correction bias (families.cpp).
// Inference now over-predicts (+18.3 / +15.8 %): how 5.17 runs its experts is not traced (docs).
TEST(EstimatorAfterRound9, Ernie45MoeExpertsByLayerRange) {
  expect_within("pytorch-h200-kinds-h", {{"004-ernie45moe-s-causal-lm-train-bf16", {0.8, 0.3}},
                                         {"005-ernie45moe-s-causal-lm-infer-bf16", {18.3, 15.9}}});
}

// Regression: GraniteMoeShared read as a generic decoder (no Granite multipliers, no shared_mlp: 12,582,912
// parameters short): -5.0 / -7.4 % in training. GraniteMoe's layer plus shared_intermediate_size's shared MLP
// (GraniteMoeSharedMLP, added to the experts' output); GraniteMoeHybrid's shared_mlp is read the same way.
TEST(EstimatorAfterRound9, GraniteMoeSharedMlp) {
  expect_within("pytorch-h200-kinds-h", {{"009-granitemoeshared-s-causal-lm-train-bf16", {0.1, 0.2}},
                                         {"010-granitehybrid-s-causal-lm-train-bf16", {1.0, 0.1}}});
}
