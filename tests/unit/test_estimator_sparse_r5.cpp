// Issue 28, round 5 (sparse and block attention encoders): round 4's measured cases of Pegasus-X, BigBird and
// Longformer (tests/data/estimator/pytorch-h200-kinds-d.*, one H200, a fresh process per case; held out in round
// 4, dev now) against the mechanisms read from their modelling code (transformers 5.17): Pegasus-X's block-local
// attention with global tokens and staggered blocks, BigBird's block-sparse attention, Longformer's global first
// token (sequence classification) and attention dropout in training. Each case within its
// bound (docs/estimator.md, "Round 5: sparse and block attention"): its measured error rounded up.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <sstream>
#include <nlohmann/json.hpp>

#include "core/estimator/estimate.hpp"
#include "test_accuracy.hpp"
#include "kinds_records.hpp"
#include "test_files.hpp"

using namespace vramdoc::estimator;
using vramdoc::test::rel;

namespace {

const std::string kSet = "pytorch-h200-kinds-d";

nlohmann::json record(const std::string& case_id) { return vramdoc::test::kinds_record(kSet, case_id); }
ModelConfig model_of(const nlohmann::json& r) { return vramdoc::test::kinds_model(kSet, r); }
Options options_of(const nlohmann::json& r) { return vramdoc::test::kinds_options(r); }

void expect_within(const std::map<std::string, vramdoc::test::CaseBound>& cases) {
  vramdoc::test::expect_cases_within(kSet, cases);
}

}  // namespace

// Regression (round 4's held-out misses): Pegasus-X +172 % training / +338 % inference allocated, its encoder's
// PegasusXGlobalLocalAttention read as dense seq x seq attention.
TEST(EstimatorSparseRound5, PegasusXBlockLocalAttention) {
  // training's process under by 7.0 % (the reserved pool); inference over by 5.2 % allocated, 12.1 % process (not
  // traced further: the stand-in's post-norm layers, the global tokens' own MLP rows)
  expect_within({{"052-pegasusx-b-seq2seq-train-bf16", {0.04, 0.08}}, {"053-pegasusx-b-seq2seq-infer-bf16", {0.06, 0.13}}});
}

// Pegasus-X's parameters: its sinusoidal positions are computed per call (PegasusXSinusoidalPositionalEmbedding:
// no table of max_position_embeddings rows, 2 x 12.6M parameters too many before), its encoder has embed_global.
TEST(EstimatorSparseRound5, PegasusXParameters) {
  const auto r = record("052-pegasusx-b-seq2seq-train-bf16");
  ASSERT_FALSE(r.is_null());
  const auto e = estimate(model_of(r), options_of(r));
  ASSERT_TRUE(e.ok());
  EXPECT_LE(rel(e->n_params, r["n_params"].get<double>()), 1e-3);  // the attention's bias-free Linears: not modelled
}

// Regression (round 4's held-out misses): BigBird +33 % training / +25 % inference allocated, its block_sparse
// attention read as BERT's dense attention; inference's peak is its dense attention_probs (batch, heads, seq,
// seq), returned by every layer, with the block products still alive.
TEST(EstimatorSparseRound5, BigBirdBlockSparseAttention) {
  expect_within({{"038-bigbird-b-seq-cls-train-bf16", {0.05, 0.06}}, {"039-bigbird-b-seq-cls-infer-bf16", {0.04, 0.06}}});
}

// BigBirdModel falls back to original_full when the sequence has (5 + 2 num_random_blocks) blocks or fewer:
// there the block-sparse config estimates as the dense one.
TEST(EstimatorSparseRound5, BigBirdShortSequencesAreDense) {
  const std::string base = R"({"model_type":"big-bird-like","hidden_size":256,"num_hidden_layers":2,"num_attention_heads":4,
      "intermediate_size":1024,"vocab_size":1000,"type_vocab_size":2,"max_position_embeddings":4096,"block_size":64,
      "num_random_blocks":3,"attention_type":)";
  const auto sparse = parse_config_json(base + R"("block_sparse"})", "config.json");
  const auto full = parse_config_json(base + R"("original_full"})", "config.json");
  ASSERT_TRUE(sparse.ok() && full.ok());
  Options o;
  o.mode = Mode::Infer, o.task = Task::SeqCls, o.batch = 4, o.seq = 704;  // 11 blocks: original_full
  const auto a = estimate(*sparse, o), b = estimate(*full, o);
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_EQ(a->peak_allocated_bytes, b->peak_allocated_bytes);
  o.seq = 2048;  // 32 blocks: block_sparse
  const auto c = estimate(*sparse, o), dense = estimate(*full, o);
  ASSERT_TRUE(c.ok() && dense.ok());
  EXPECT_NE(c->peak_allocated_bytes, dense->peak_allocated_bytes);
}

// Regression (round 4's held-out miss): Longformer seq-cls training -16.4 % allocated, its first token's global
// attention (LongformerForSequenceClassification) and the band's attention dropout not counted; -9.4 % now (the
// rest: not traced further, the backward's fp32 band temporaries). Its MLM inference (no global token) stays.
TEST(EstimatorSparseRound5, LongformerGlobalFirstTokenAndDropout) {
  expect_within({{"040-longformer-b-seq-cls-train-bf16", {0.10, 0.10}}, {"041-longformer-b-mlm-infer-bf16", {0.04, 0.06}}});
}
