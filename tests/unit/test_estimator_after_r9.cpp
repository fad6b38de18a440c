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

// Regression: Llama 4's text model read as a generic decoder (the experts as top-k routed, one MLP width for every
// layer: 1,272,268,800 parameters for 1,196,738,560): -8.6 / +5.3 % in training, -38.4 / -41.9 % in inference.
// Llama4TextMoe runs every expert over every token (the tokens repeated per expert times their sigmoid scores, two
// batched bmm), the shared expert beside; the dense layers are intermediate_size_mlp wide, the experts and the
// shared expert intermediate_size; moe_layers / interleave_moe_layer_step; L2 q / k norms without weight in the
// RoPE layers, the NoPE layers' fp32 temperature scaling (families.cpp read_llama4_layers, forward_mlp.cpp
// dense_experts, forward_attention.cpp llama4_query_key).
TEST(EstimatorAfterRound9, Llama4EveryExpertOverEveryToken) {
  expect_within("pytorch-h200-kinds-h", {{"002-llama4-s-causal-lm-train-bf16", {0.1, 0.6}},
                                         {"003-llama4-s-causal-lm-infer-bf16", {1.9, 2.1}}});
}

// Regression: HunYuan-MoE without its always-built shared MLP and per-head q / k norms (34,603,520 parameters
// short): -7.3 / -5.2 % in training. HunYuanMoEV1Moe builds shared_mlp = HunYuanMoEV1MLP(config) (intermediate_size)
// whatever the config says; query_layernorm / key_layernorm over head_dim; moe_topk read as the experts per token.
TEST(EstimatorAfterRound9, HunyuanMoeSharedMlpAndQkNorms) {
  expect_within("pytorch-h200-kinds-h", {{"r1-000-hunyuanmoe-s-causal-lm-train-bf16", {0.9, 0.9}}});
}

// Regression: OpenAI GPT read as a llama-style decoder with a KV cache (144,352,512 parameters for 116,534,784):
// +7.1 / +5.1 % in training, +76.3 / +3.2 % in generate(). GPT-2's layout (wte + wpe, Conv1D c_attn / c_fc / c_proj
// with biases, gelu_new) with post-norm blocks and no final norm, Attention._attn's own eager scores (w / sqrt(d),
// w * b + -1e4 * (1 - b): three score tensors at once, generate()'s mask added), and no past_key_values at all: each
// generated token reruns the whole sequence (families.cpp, forward_attention.cpp gpt2_eager).
TEST(EstimatorAfterRound9, OpenAiGptPostNormNoCache) {
  expect_within("pytorch-h200-kinds-h", {{"012-openai-gpt-causal-lm-train-bf16", {1.7, 1.1}},
                                         {"013-openai-gpt-causal-lm-infer-bf16", {0.9, 2.5}}});
}

// Regression: CNN inference's reserved bytes (ResNet-50 / -101 -15 % process with allocated within 2 %). From the
// ResNet-101 inference trace of 2026-12-03: max_pool2d makes its int64 indices on CUDA even under no_grad (freed at
// once); ResNetModel holds embedding_output to its return, each stage its input, each block its input and `residual`
// until its activation's output is made (cnn_graph.cpp resnet, forward_cnn.cpp). The estimate is a job of several
// batches: the records' single forward peaks 32 MiB lower (the cuBLAS workspace), hence the allocated bound.
TEST(EstimatorAfterRound9, ResnetInferenceReservedLayout) {
  vramdoc::test::expect_cases_within("pytorch-h200-kinds-h", {{"046-resnet-101-image-cls-infer-bf16", {3.8, 0.2}}}, false);
  vramdoc::test::expect_cases_within("pytorch-h200-kinds-d", {{"067-resnet-50-image-cls-infer-bf16", {4.0, 0.3}}}, false);
}

// Regression: BERT-style encoders' inference, allocated right and reserved under (process -5 to -9 %: BERT, RoBERTa,
// CamemBERT, XLM-R, DeBERTa). From the XLM-R inference trace of 2026-12-03: BertEmbeddings.forward holds
// inputs_embeds and each table's lookup to its return (five blocks at once before the LayerNorm); BertSelfAttention
// returns before BertSelfOutput's dense (q, k, v go first); BertAttention holds self_outputs, BertLayer
// attention_output and the intermediate activation, to their returns (forward_encoders.cpp encoder_prelude,
// forward_attention.cpp, forward_families.cpp post_norm_layer).
TEST(EstimatorAfterRound9, BertStyleInferenceLocals) {
  using vramdoc::test::expect_cases_within;
  expect_cases_within("pytorch-h200-kinds-h", {{"032-xlmr-l6-seq-cls-infer-bf16", {0.2, 0.2}}}, false);
  expect_cases_within("pytorch-h200-kinds-b", {{"030-bert-s-seq-cls-infer-bf16", {0.3, 0.2}}}, false);
  expect_cases_within("pytorch-h200-kinds", {{"118-roberta-l-seq-cls-infer-bf16", {0.3, 0.2}}}, false);
  expect_cases_within("pytorch-h200-kinds-e", {{"000-deberta-s-seq-cls-infer-bf16", {2.4, 1.2}},
                                               {"062-camembert-b-seq-cls-infer-bf16", {0.3, 0.2}}}, false);
}
