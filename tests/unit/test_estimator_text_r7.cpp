// Issue 28, round 7 (text encoders and encoder-decoders): round 6's cases (tests/data/estimator/
// pytorch-h200-kinds-e.*, one H200, a fresh process per case; dev now) against the mechanisms read from
// transformers 5.17's modelling code since: a stand-in's eager attention by default, LongT5's local blocks,
// BigBird-Pegasus' block-sparse encoder, RemBERT's decoupled embeddings, FSMT's source embeddings.
#include <gtest/gtest.h>

#include <cmath>
#include <nlohmann/json.hpp>

#include "core/estimator/estimate.hpp"
#include "core/estimator/fit.hpp"
#include "core/units.hpp"
#include "test_accuracy.hpp"
#include "kinds_records.hpp"
#include "test_files.hpp"

using namespace vramdoc::estimator;

namespace {

const std::string kSet = "pytorch-h200-kinds-e";

nlohmann::json record(const std::string& case_id) { return vramdoc::test::kinds_record(kSet, case_id); }
ModelConfig model_of(const nlohmann::json& r) { return vramdoc::test::kinds_model(kSet, r); }

}  // namespace

// An unknown encoder read as a BERT-style stand-in runs transformers' eager attention unless --attention says
// otherwise: Megatron-BERT's class has no SDPA path (its records say attn_implementation eager). Read with SDPA,
// --max-batch said 32 for seq-cls amp-bf16 at seq 512 on a 16384 MiB card, where 20 was the largest batch that
// ran (round 6's max-batch scenario 1); the user's --attention sdpa still wins.
TEST(EstimatorTextRound7, StandInsRunEagerAttentionByDefault) {
  const auto r = record("047-megatron-bert-seq-cls-train-bf16");
  ASSERT_TRUE(r.contains("model"));
  const ModelConfig m = model_of(r);
  ASSERT_TRUE(m.stand_in);
  Options o;
  o.mode = Mode::Train, o.precision = Precision::AmpBf16, o.task = Task::SeqCls, o.seq = 512;
  EXPECT_EQ(attention_of(m, o), Attention::Eager);
  const auto found = max_batch(m, o, 16384 * vramdoc::MiB);
  ASSERT_TRUE(found.ok());
  EXPECT_GE(found->value, 1U);
  EXPECT_LE(found->value, 20U);  // the largest batch that ran
  o.attention_given = true;  // --attention sdpa
  EXPECT_EQ(attention_of(m, o), Attention::Sdpa);
  // a known family keeps SDPA by default
  const auto bert = record("000-deberta-s-seq-cls-infer-bf16");
  ASSERT_TRUE(bert.contains("model"));
  Options plain;
  EXPECT_EQ(attention_of(model_of(bert), plain), Attention::Sdpa);
  ASSERT_FALSE(m.warnings.empty());
  EXPECT_NE(m.warnings[0].find("with eager attention"), std::string::npos);
}

// LongT5's encoder (modeling_longt5.py LongT5LocalAttention / LongT5TransientGlobalAttention, config fields
// local_radius, encoder_attention_type, global_block_size) attends in blocks of local_radius + 1 tokens to three
// blocks (and seq / global_block_size aggregates), never seq x seq: read as T5's dense attention it was +118 to
// +144 % allocated. The transient-global layers' global bias and norms make the parameters transformers'.
TEST(EstimatorTextRound7, LongT5AttendsInLocalBlocks) {
  vramdoc::test::expect_cases_within(kSet,
                                     {{"064-longt5-tg-seq2seq-train-bf16", {0.06, 0.11}},
                                      {"065-longt5-tg-seq2seq-infer-bf16", {0.09, 0.10}},
                                      {"066-longt5-local-seq2seq-train-bf16", {0.06, 0.05}}},
                                     true);
}

// BigBird-Pegasus' encoder runs BigBird's block-sparse attention (attention_type "block_sparse", read by field for
// an encoder-decoder's encoder too; its decoder attends densely): read dense it was +69 / +71 %.
TEST(EstimatorTextRound7, BigBirdPegasusEncoderIsBlockSparse) {
  vramdoc::test::expect_cases_within(kSet, {{"067-bigbird-pegasus-seq2seq-train-bf16", {0.11, 0.11}},
                                            {"068-bigbird-pegasus-seq2seq-infer-bf16", {0.08, 0.04}}});
}

// RemBERT's decoupled embeddings (input_embedding_size, output_embedding_size: modeling_rembert.py) and a
// stand-in's hand-written eager attention (softmax in the scores' dtype, RemBertSelfAttention): +70 / +3 % before,
// 224M and 96M parameters too many.
TEST(EstimatorTextRound7, RemBertDecoupledEmbeddings) {
  vramdoc::test::expect_cases_within(
      kSet, {{"050-rembert-8-seq-cls-train-bf16", {0.04, 0.05}}, {"051-rembert-8-mlm-infer-bf16", {0.01, 0.01}}}, true);
}

// The stand-ins' hand-written eager attention (a class with no SDPA support has no attention-interface path):
// Megatron-BERT training +8.4 %, MVP +24.1 %, ConvBERT +21.5 / -19.2 % before.
TEST(EstimatorTextRound7, StandInsOwnEagerAttention) {
  vramdoc::test::expect_cases_within(kSet, {{"047-megatron-bert-seq-cls-train-bf16", {0.02, 0.02}},
                                            {"072-mvp-seq2seq-train-bf16", {0.04, 0.05}},
                                            {"054-convbert-b-seq-cls-train-bf16", {0.12, 0.07}},
                                            {"055-convbert-b-token-cls-train-fp32", {0.10, 0.06}}});
}

// FSMT (modeling_fsmt.py FSMTModel): src_vocab_size and tgt_vocab_size, the encoder's embeddings its own table;
// read with one shared table the parameters were 43.0M short. (4096 over: the BART-style stand-in's
// layernorm_embedding, which FSMT has not.)
TEST(EstimatorTextRound7, FsmtEncoderHasItsOwnEmbeddings) {
  const auto r = record("070-fsmt-wmt-seq2seq-infer-bf16");
  ASSERT_TRUE(r.contains("model"));
  const auto e = estimate(model_of(r), vramdoc::test::kinds_options(r));
  ASSERT_TRUE(e.ok());
  const double want = r["n_params"].get<double>();
  EXPECT_LE(std::abs(static_cast<double>(e->n_params) - want), 4096.0);
}
