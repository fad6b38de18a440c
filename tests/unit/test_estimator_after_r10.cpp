// Issue 28, after round 10's one evaluation (tests/data/estimator/pytorch-h200-kinds-i.*, dev since then): the misses
// fixed from config fields and modelling code (transformers 5.17). Each case within its bound: its error now, rounded
// up; without the fix each bound fails (the error before is in each test's comment).
#include <gtest/gtest.h>

#include "kinds_records.hpp"

// Regression: Doge's config keeps num_experts = 16384 with is_moe false; read as 16384 experts the estimate was
// +57639 % (training) and +46212 % (generate). is_moe false keeps the dense MLP (families.cpp read_experts). Doge's
// dynamic mask attention is not modelled: the estimate stays under (the bound holds it, not the bar).
TEST(EstimatorAfterRound10, IsMoeFalseKeepsTheDenseMlp) {
  vramdoc::test::expect_cases_within("pytorch-h200-kinds-i", {{"004-doge-s-causal-lm-train-bf16", {26.5, 23.0}},
                                                              {"005-doge-s-causal-lm-infer-bf16", {60.7, 41.5}}}, false);
}

// Regression: DINOv2 with use_swiglu_ffn (DINOv2-g) read with the GELU MLP (4 x hidden, 117,725,160 parameters
// missed): -10.7 / -14.6 %. Dinov2SwiGLUFFN: weights_in to 2 x w (bias), silu(x1) * x2, weights_out, w =
// (int(int(hidden x mlp_ratio) x 2 / 3) + 7) // 8 x 8 (encoder_traits.cpp); parameters exact.
TEST(EstimatorAfterRound10, Dinov2SwigluFfn) {
  vramdoc::test::expect_cases_within("pytorch-h200-kinds-i", {{"056-dinov2-g4-image-cls-train-bf16", {3.2, 4.1}}}, true);
}

// Regression: VaultGemma read as a generic decoder (no Gemma embeddings scale, fp32-weight norms, soft-capping):
// -11.9 / -9.2 % in training, -2.3 / -0.1 % in generate(). VaultGemmaDecoderLayer is Gemma2DecoderLayer without
// post_attention_layernorm and post_feedforward_layernorm (modular_vaultgemma.py): Gemma 2's family without its
// sandwich norms (families.cpp).
TEST(EstimatorAfterRound10, VaultGemmaIsGemma2WithoutPostNorms) {
  vramdoc::test::expect_cases_within("pytorch-h200-kinds-i", {{"000-vaultgemma-s-causal-lm-train-bf16", {0.2, 0.2}},
                                                              {"001-vaultgemma-s-causal-lm-infer-bf16", {0.7, 0.2}}}, true);
}

// Regression: GPT-NeoX-Japanese read as a generic llama-style decoder (a gated MLP of intermediate_size it has not:
// 333,989,888 parameters for 266,901,504): +31.2 / +29.5 % in training. GPT-NeoX's layout (fused query_key_value,
// LayerNorms, ungated GELU MLP of int(hidden x intermediate_multiple_size)), sequential, no biases, RoPE over the whole
// head (families.cpp). Its own eager attention is not modelled: generate() stays over (+16.6 / +43.3 %, not bound here).
TEST(EstimatorAfterRound10, GptNeoxJapaneseLayout) {
  vramdoc::test::expect_cases_within("pytorch-h200-kinds-i", {{"017-gptneoxjp-s-causal-lm-train-bf16", {9.5, 9.7}}}, false);
}

// Regression: BitNet read as a generic decoder with an ungated ReLU^2 MLP (659,572,736 parameters for 705,740,800):
// -11.4 / -9.6 % in training, -16.8 / -19.0 % in generate(). BitNetMLP is GemmaMLP (gated, ReLU^2) with ffn_sub_norm
// on act(gate) * up before down_proj; BitNetAttention normalises its output (attn_sub_norm) before o_proj
// (modular_bitnet.py; families.cpp, forward_mlp.cpp gated, forward_attention.cpp); parameters exact.
TEST(EstimatorAfterRound10, BitnetGatedMlpAndSubNorms) {
  vramdoc::test::expect_cases_within("pytorch-h200-kinds-i", {{"020-bitnet-s-causal-lm-train-bf16", {0.1, 0.1}},
                                                              {"021-bitnet-s-causal-lm-infer-bf16", {0.3, 0.1}}}, true);
}

// Regression: TAPAS (no architectures, no type_vocab_size: its type_vocab_sizes lists seven tables) read as a
// decoder-style stand-in (pre-norm, RoPE, a gated MLP): +25.1 / +22.2 % in training. type_vocab_sizes marks a
// BERT-style encoder as type_vocab_size does (encoder_config.cpp unknown_kind).
TEST(EstimatorAfterRound10, TapasIsABertStyleEncoder) {
  vramdoc::test::expect_cases_within("pytorch-h200-kinds-i", {{"036-tapas-b6-seq-cls-train-bf16", {1.8, 1.9}}}, false);
}
