// Issue 28, round 8b (text encoders): round 8's held-out text-encoder misses (tests/data/estimator/
// pytorch-h200-kinds-g.*, one H200, a fresh process per case; dev now) against the mechanisms read from
// transformers 5.17's modelling code since: LUKE's entity tables and queries (built, never read by a batch of text:
// no gradients, no optimizer state), RoCBert's shape and pronunciation lookups concatenated to the word embeddings.
#include <gtest/gtest.h>

#include "core/estimator/estimate.hpp"
#include "kinds_records.hpp"

using namespace vramdoc::estimator;

namespace {

const std::string kRound8 = "pytorch-h200-kinds-g";

}  // namespace

// LUKE (modeling_luke.py LukeEntityEmbeddings, LukeSelfAttention): 139.2M parameters of entity tables and
// w2e / e2w / e2e queries were missing (-8.8 / -7.5 %); without entity_ids the forward never reads them, so they
// hold weights but no gradients and no AdamW state.
TEST(EstimatorTextRound8b, LukeEntityTablesHoldNoGradients) {
  vramdoc::test::expect_cases_within(kRound8, {{"021-luke-b-seq-cls-train-bf16", {0.02, 0.02}}}, true);
}

// RoCBert with concat_input (modeling_roc_bert.py RoCBertEmbeddings): shape_embed and pronunciation_embed (15.0M
// parameters missing before: -8.9 / -10.5 %), their lookups concatenated to the word embeddings, map_inputs_layer's
// 2048-wide input saved for the backward.
TEST(EstimatorTextRound8b, RocBertConcatenatesShapeAndPronunciation) {
  vramdoc::test::expect_cases_within(kRound8, {{"023-rocbert-b-seq-cls-train-bf16", {0.03, 0.05}}}, true);
}
