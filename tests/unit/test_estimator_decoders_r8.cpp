// Issue 28, round 8 (decoders and the remaining encoder-decoders): round 7's held-out decoder misses
// (tests/data/estimator/pytorch-h200-kinds-f.*) and the encoder-decoder leftovers of round 6's set
// (pytorch-h200-kinds-e.*), one H200, a fresh process per case, dev now, against the mechanisms read from their
// modelling code (transformers 5.17). Each case within its bound (docs/estimator.md, "Round 8: decoders and the
// remaining encoder-decoders"): its measured error rounded up, parameter counts exact; without the mechanism each
// bound fails (the error before is in each test's comment).
#include <gtest/gtest.h>

#include <map>
#include <string>

#include "core/estimator/model_config.hpp"
#include "kinds_records.hpp"

namespace {

void expect_within(const std::string& set, const std::map<std::string, vramdoc::test::CaseBound>& cases) {
  vramdoc::test::expect_cases_within(set, cases, /*exact_params=*/true);
}

}  // namespace

// Regression: Jamba read as a llama-style decoder with experts in every layer: -30 % allocated, -26 % process in
// training (its Mamba layers attention, n_params wrong). attn_layer_period / offset give JambaMambaMixer's layers
// (hybrid_config.cpp), expert_layer_period / offset the experts'; the mixer op by op (forward_hybrid.cpp): the fp32
// discretised A, B and deltaB_u, the scan's states, the dt / B / C RMSNorms, the fp32 D skip and gate.
TEST(EstimatorDecodersRound8, JambaMambaLayersByPeriod) {
  expect_within("pytorch-h200-kinds-f", {{"004-jamba-s-causal-lm-train-bf16", {1.0, 1.0}}});
}

// Regression: LFM2's short-convolution layers read as attention: inference +40 % allocated (+23 % process), training
// +8 %. layer_types "conv" with conv_L_cache: Lfm2ShortConv (in_proj to 3 x hidden, B * x, the depthwise conv,
// C * conv_out, out_proj), Lfm2MLP's block_auto_adjust_ff_dim width, q/k layernorms.
TEST(EstimatorDecodersRound8, Lfm2ShortConvolutions) {
  expect_within("pytorch-h200-kinds-f", {{"012-lfm2-s-causal-lm-train-bf16", {1.0, 1.0}},
                                         {"013-lfm2-s-causal-lm-infer-bf16", {1.0, 1.0}}});
}

// Regression: Apertus read as a gated llama MLP: inference -15.5 % allocated, training's process +17 %. hidden_act
// xielu: ApertusMLP's up -> XIELUActivation (Python path, its piecewise tensors) -> down, alpha_p / alpha_n, q/k norms.
TEST(EstimatorDecodersRound8, ApertusXieluMlp) {
  expect_within("pytorch-h200-kinds-f", {{"010-apertus-s-causal-lm-train-bf16", {1.0, 1.0}},
                                         {"011-apertus-s-causal-lm-infer-bf16", {1.0, 5.0}}});
}

// Regression: NLLB-MoE read as a post-norm BART without its experts (n_params 57.8e6 for 104.6e6): -36 % allocated,
// -38 % process in training. NllbMoeSparseMLP every *_sparse_step layers (forward_nllb_moe.cpp): expert_0 runs on
// every pair the top-1 mask leaves out (one_hot of the 0/1 mask), expert_1 on the routed ones, capped by capacity.
TEST(EstimatorDecodersRound8, NllbMoeExpertsByTopOneMask) {
  expect_within("pytorch-h200-kinds-e", {{"073-nllb-moe-s-seq2seq-train-bf16", {4.0, 12.0}}});
}

// Regression: FSMT's generate() estimated greedy: -36 % allocated, -22 % process. Its config's num_beams (5) makes
// generate() beam search: the encoder's output repeated per beam, the decoder (and its cross-attention cache) on
// batch x beams.
TEST(EstimatorDecodersRound8, FsmtGenerateTakesTheConfigsBeams) {
  expect_within("pytorch-h200-kinds-e", {{"070-fsmt-wmt-seq2seq-infer-bf16", {1.0, 4.0}}});
}

// Regression: ProphetNet read as BART: -36.6 % allocated, -30.2 % process in training (3.1M parameters too few).
// ngram with num_buckets: the decoder runs on (1 + ngram) x target tokens (main + predicting streams), lm_head and
// _compute_loss's fp32 log_softmax on ngram x target after a transposed copy; relative_pos_embeddings and
// ngram_embeddings in the weights, no position offset; activation_dropout after the feed-forward's activation.
// Partial: the rest (-15.6 %) is not traced.
TEST(EstimatorDecodersRound8, ProphetNetPredictingStreams) {
  expect_within("pytorch-h200-kinds-e", {{"074-prophetnet-seq2seq-train-bf16", {16.0, 13.0}}});
}

// A hybrid's layers by their mixers: Jamba's defaults (attention every 8th layer from the 4th, experts every 2nd from
// the 1st), LFM2's layer_types.
TEST(EstimatorDecodersRound8, HybridLayersFromTheirFields) {
  auto jamba = vramdoc::estimator::parse_config_json(
      R"({"model_type": "jamba", "hidden_size": 256, "num_hidden_layers": 16, "num_attention_heads": 4,
          "num_key_value_heads": 2, "intermediate_size": 512, "vocab_size": 1000, "num_experts": 4,
          "attn_layer_period": 8, "attn_layer_offset": 4, "mamba_d_state": 16})", "jamba.json");
  ASSERT_TRUE(jamba.ok()) << jamba.error();
  ASSERT_EQ(jamba->layer_mixer.size(), 16U);
  for (std::size_t i = 0; i < 16; ++i) {
    EXPECT_EQ(jamba->layer_mixer[i] == vramdoc::estimator::Mixer::Attention, i % 8 == 4) << i;
    EXPECT_EQ(jamba->layer_moe[i], i % 2 == 1) << i;
  }
  EXPECT_EQ(jamba->ssm.inner, 512U);   // mamba_expand 2 x hidden
  EXPECT_EQ(jamba->ssm.dt_rank, 16U);  // "auto": ceil(256 / 16)
  EXPECT_EQ(jamba->rotary_dims, 0U);   // JambaAttention: no RoPE
  auto bad = vramdoc::estimator::parse_config_json(
      R"({"model_type": "jamba", "hidden_size": 256, "num_hidden_layers": 4, "num_attention_heads": 4,
          "intermediate_size": 512, "vocab_size": 1000, "attn_layer_period": 2, "attn_layer_offset": 2,
          "mamba_d_state": 16})", "bad.json");
  EXPECT_FALSE(bad.ok());
}
