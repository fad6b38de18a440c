// Issue 28, round 8 (text encoders): round 6's and round 7's text-encoder misses (tests/data/estimator/
// pytorch-h200-kinds-e.* and -f.*, one H200, a fresh process per case; dev now) against the mechanisms read from
// transformers 5.17's modelling code since: FNet's Fourier mixing, Funnel's pooled blocks, Nystromformer's attention,
// LayoutLM's and MarkupLM's extra embeddings with eager_attention_forward's dropout, XLM's heads and cache.
#include <gtest/gtest.h>

#include "core/estimator/estimate.hpp"
#include "kinds_records.hpp"

using namespace vramdoc::estimator;

namespace {

const std::string kRound6 = "pytorch-h200-kinds-e", kRound7 = "pytorch-h200-kinds-f";

}  // namespace

// FNet (modeling_fnet.py FNetBasicFourierTransform): torch.fft.fftn(hidden, dim=(1, 2)).real mixes the tokens, no
// query / key / value / output projections (27.8M parameters too many before), a projection after the embeddings'
// LayerNorm, the pooler in every head. Read as attention it was +86.8 / +7.3 % allocated.
TEST(EstimatorTextRound8, FnetMixesTokensByFourierTransform) {
  vramdoc::test::expect_cases_within(kRound6,
                                     {{"058-fnet-b-seq-cls-train-fp32", {0.02, 0.02}}, {"059-fnet-b-mlm-infer-fp32", {0.01, 0.01}}},
                                     true);
}

// Funnel (modeling_funnel.py): sum(block_sizes) layers (the config has no num_hidden_layers: read as its
// num_decoder_layers, 2, the estimate was -68.0 / -60.8 %), the sequence pooled by 2 before each block after the
// first, FunnelRelMultiheadAttention's score-sized locals, FunnelDecoder's layers for MLM only.
TEST(EstimatorTextRound8, FunnelPoolsBetweenBlocks) {
  vramdoc::test::expect_cases_within(
      kRound6, {{"052-funnel-s-seq-cls-train-bf16", {0.03, 0.05}}, {"053-funnel-s-mlm-train-bf16", {0.03, 0.03}}}, true);
}

// Nystromformer with num_landmarks == segment_means_seq_len attends densely with softmax in the scores' dtype and no
// attention dropout (the module's dropout is never applied); read as the hand-written stand-in (dropout's mask and
// output saved) it was +37.3 %. Its conv over the values adds heads x conv_kernel_size weights per layer, its
// positions max_position_embeddings + 2 rows.
TEST(EstimatorTextRound8, NystromformerAttentionHasNoDropout) {
  vramdoc::test::expect_cases_within(kRound7, {{"023-nystromformer-seq-cls-train-bf16", {0.08, 0.07}}}, true);
}

// LayoutLM's x / y / h / w tables and MarkupLM's XPathEmbeddings (weights exact now), and both classes' attention:
// transformers' eager_attention_forward (fp32 softmax, cast back, attention dropout in training), which the eager
// path did not drop out: -19.7 / -22.1 % before.
TEST(EstimatorTextRound8, LayoutAndMarkupEmbeddingsAndInterfaceEager) {
  vramdoc::test::expect_cases_within(kRound7,
                                     {{"026-layoutlm-b-token-cls-train-bf16", {0.05, 0.01}},
                                      {"028-markuplm-b-token-cls-train-bf16", {0.05, 0.02}}},
                                     true);
}

// XLM (modeling_xlm.py): is_encoder makes it an encoder (it was a generic decoder-style stand-in: +14.9 % training),
// SequenceSummary's proj and XLMPredLayer's (no pooler, no transform), the cache XLMModel.forward always makes
// (each layer's keys and values held to the encoder's return).
TEST(EstimatorTextRound8, XlmIsAPostNormEncoderWithACache) {
  vramdoc::test::expect_cases_within(
      kRound7, {{"029-xlm-1024-seq-cls-train-bf16", {0.02, 0.02}}, {"030-xlm-1024-mlm-infer-bf16", {0.03, 0.03}}}, true);
}
