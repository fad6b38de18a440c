// Issue 28, after round 9's evaluation (text encoders): round 9's held-out misses (tests/data/estimator/
// pytorch-h200-kinds-h.*, one H200, a fresh process per case; dev now) against the mechanisms read from
// transformers 5.17's modelling code since.
#include <gtest/gtest.h>

#include "core/estimator/estimate.hpp"
#include "kinds_records.hpp"

using namespace vramdoc::estimator;

namespace {

const std::string kRound9 = "pytorch-h200-kinds-h";

}  // namespace

// DeBERTa v1 at its class defaults (modeling_deberta.py, configuration_deberta.py: relative_attention false,
// pos_att_type None): no relative embeddings, no pos_proj / pos_q_proj, no disentangled terms; one in_proj without
// bias (q_bias, v_bias), the scaled query and the biased value saved, `scores + 0`; DebertaLayerNorm op by op.
// Read as v2 with both terms before: +70.7 / +56.8 % (training), +0.8 / +33.9 % (inference).
TEST(EstimatorTextAfterRound9, DebertaV1WithoutRelativeAttention) {
  vramdoc::test::expect_cases_within(kRound9, {{"r1-000-deberta1-b-seq-cls-train-fp32", {0.04, 0.025}},
                                               {"r1-001-deberta1-b-mlm-infer-fp32", {0.005, 0.04}}},
                                     true);
}

// LayoutLMv3, text only (modeling_layoutlmv3.py, read by LayoutLMv3Config's coordinate_size / shape_size and its
// relative-bias fields): the x / y / h / w tables coordinate_size and shape_size wide, concatenated and added once;
// rel_pos_bias, rel_pos_x_bias, rel_pos_y_bias gathered under no_grad (no gradients) into batch x heads x seq x seq
// biases held through the layers; its own eager attention (the biases added, cogview_attention's scores / 32 saved
// by amax). Read as LayoutLM before (hidden-wide tables, a pooler, BERT's attention): -17.8 / -15.4 %.
TEST(EstimatorTextAfterRound9, LayoutLmV3BiasesAndCogviewAttention) {
  vramdoc::test::expect_cases_within(kRound9, {{"r1-004-layoutlmv3-b-token-cls-train-bf16", {0.005, 0.035}}}, true);
}
