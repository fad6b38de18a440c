// Issue 28, round 4 (encoders, encoder-decoders, vision transformers): round 3's measured cases
// (tests/data/estimator/pytorch-h200-kinds-c.*, one H200, a fresh process per case; its held-out rows are dev
// now) against the mechanisms read from the modelling code since: ModernBERT's decoder-style layers, ALBERT's
// shared layers, Longformer's sliding-chunk attention (LED), layer scale (DINOv2, BEiT), MPNet's own
// attention, Whisper's heads-major copies and the cross-attention cache saved by SDPA. Each case within the
// bar or a listed miss (its measured error rounded up); the parameter counts equal transformers'.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <sstream>
#include <nlohmann/json.hpp>

#include "core/estimator/architecture.hpp"
#include "core/estimator/estimate.hpp"
#include "test_accuracy.hpp"
#include "kinds_records.hpp"
#include "test_files.hpp"

using namespace vramdoc::estimator;
using vramdoc::test::rel;

namespace {

const std::string kSet = "pytorch-h200-kinds-c";

ModelConfig model_of(const nlohmann::json& r) { return vramdoc::test::kinds_model(kSet, r); }
Options options_of(const nlohmann::json& r) { return vramdoc::test::kinds_options(r); }

// Round 3's measured cases of models with an encoder (not causal-lm, not lost in transformers).
std::vector<nlohmann::json> encoder_cases() {
  std::vector<nlohmann::json> out;
  for (auto& r : vramdoc::test::kinds_records(kSet))
    if (vramdoc::test::kinds_measured(r) && r["task"] != "causal-lm") out.push_back(std::move(r));
  return out;
}

}  // namespace

// Regression (issue 28, round 3's held-out misses): ModernBERT -24..-37 % (read as BERT), ALBERT +10..+35 %
// (shared layers counted per layer), LED +12 / +21 % (full eager attention for Longformer's band), DINOv2
// -11 %, BEiT training -11 % (no layer scale), MPNet +5 / +8 % (SDPA for its own eager attention), Whisper
// large-v3 training -10.5 %, Whisper-s training -7.7 % (no heads-major copies; the cross-attention cache
// freed at the forward's end). Within 4 % allocated and 6 % process now, but for the listed cases.
TEST(EstimatorEncodersRound4, EveryCaseWithinTheBarOrAListedMiss) {
  // case: {allocated bound, process bound}: each a known miss (docs/estimator.md, "Round 4: encoders and vision")
  const std::map<std::string, std::pair<double, double>> misses = {
      {"001-whisper-b-speech-seq2seq-train-amp_bf16", {0.04, 0.14}},  // reserved: the caching allocator's layout
      {"006-mt5-s-seq2seq-infer-bf16", {0.04, 0.15}},                 // reserved (generate)
      {"051-umt5-s-seq2seq-infer-bf16", {0.04, 0.10}},                // reserved
      {"052-umt5-s-seq2seq-infer-bf16", {0.04, 0.15}},                // reserved (generate)
      {"053-m2m-418m-seq2seq-train-bf16", {0.06, 0.06}},              // over: not traced
      {"067-dinov2-s-image-cls-infer-bf16", {0.04, 0.08}},            // reserved
      {"070-vit-s16-image-cls-train-amp_bf16", {0.05, 0.08}},         // under: not traced
  };
  std::size_t seen = 0, listed = 0;
  for (const auto& r : encoder_cases()) {
    const auto e = estimate(model_of(r), options_of(r));
    ASSERT_TRUE(e.ok()) << r["case_id"] << ": " << (e.ok() ? "" : e.error());
    const auto it = misses.find(r["case_id"]);
    const auto [a, p] = it != misses.end() ? it->second : std::pair<double, double>{0.04, 0.06};
    listed += it != misses.end();
    EXPECT_LE(rel(e->peak_allocated_bytes, r["peak_allocated"].get<double>()), a) << r["case_id"] << " allocated";
    EXPECT_LE(rel(e->process_bytes, r["driver_process_used"].get<double>()), p) << r["case_id"] << " process";
    ++seen;
  }
  EXPECT_EQ(listed, misses.size());  // every listed miss is a measured case
  EXPECT_GE(seen, 39U);
}

// The parameters transformers counts: ALBERT's shared layer once (it was counted per layer: 90M for 11.7M),
// LED's global projections and its encoder's own position table, MPNet's relative bias without token types,
// DINOv2's classifier over cat(cls, mean of the patches) and its mask token; BEiT's relative tables,
// ModernBERT's bias-free heads and UMT5's per-layer biases are within 0.1 % (not modelled).
TEST(EstimatorEncodersRound4, ParameterCountsEqualTransformers) {
  const std::map<std::string, double> approximate = {
      {"modernbert-b", 1e-4}, {"umt5-s", 1e-4}, {"beit-b", 1e-3}};
  for (const auto& r : encoder_cases()) {
    const auto e = estimate(model_of(r), options_of(r));
    ASSERT_TRUE(e.ok()) << r["case_id"];
    const auto it = approximate.find(r["model"]);
    if (it == approximate.end()) EXPECT_EQ(e->n_params, r["n_params"].get<std::uint64_t>()) << r["case_id"];
    else EXPECT_LE(rel(e->n_params, r["n_params"].get<double>()), it->second) << r["case_id"];
  }
}

// ALBERT: the layers applied num_hidden_layers x inner_group_num times share num_hidden_groups x inner_group_num
// layers' weights: more groups add weights, not activations; more applications add activations, not weights.
TEST(EstimatorEncodersRound4, AlbertSharesItsLayersWeights) {
  const std::string base = R"({"model_type":"albert","hidden_size":768,"embedding_size":128,"num_attention_heads":12,
      "intermediate_size":3072,"vocab_size":30000,"type_vocab_size":2,"max_position_embeddings":512,"hidden_act":"gelu_new",)";
  const auto parsed = [&](const char* rest) {
    auto m = parse_config_json(base + rest, "config.json");
    EXPECT_TRUE(m.ok()) << (m.ok() ? "" : m.error());
    return m.ok() ? *m : ModelConfig{};
  };
  Options o;
  o.mode = Mode::Train, o.task = Task::SeqCls, o.batch = 4, o.seq = 128;
  const auto one = estimate(parsed(R"("num_hidden_layers":12,"num_hidden_groups":1})"), o);
  const auto two = estimate(parsed(R"("num_hidden_layers":12,"num_hidden_groups":2})"), o);
  const auto deeper = estimate(parsed(R"("num_hidden_layers":24,"num_hidden_groups":1})"), o);
  ASSERT_TRUE(one.ok() && two.ok() && deeper.ok());
  const std::uint64_t layer = 4 * 768 * 768 + 2 * 768 * 3072 + 4 * 768 + 3072 + 768 + 4 * 768;  // q k v o, ffn, biases, norms
  EXPECT_EQ(two->n_params - one->n_params, layer);
  EXPECT_EQ(deeper->n_params, one->n_params);
  EXPECT_GT(deeper->peak_allocated_bytes, one->peak_allocated_bytes);
  const auto absurd = parse_config_json(base + R"("num_hidden_layers":1000,"inner_group_num":1000})", "config.json");
  EXPECT_FALSE(absurd.ok());  // 10^6 applications: refused with the layer limit, not simulated
}

// An unknown vision model with stages of windowed attention (a `depths` list and a window_size: Swin V2) is
// read as Swin with the generic margin, not as a ViT of its last stage's width (which Swin's +98..+160 % of
// round 1 showed is far off).
TEST(EstimatorEncodersRound4, SwinLikeUnknownIsReadAsSwin) {
  const auto m = parse_config_json(R"({"model_type":"swin-like","architectures":["SwinLikeForImageClassification"],
      "image_size":256,"patch_size":4,"embed_dim":96,"depths":[2,2,6,2],"num_heads":[3,6,12,24],"window_size":8,
      "hidden_size":768})", "config.json");
  ASSERT_TRUE(m.ok()) << (m.ok() ? "" : m.error());
  EXPECT_EQ(m->family, Family::Swin);
  EXPECT_TRUE(m->stand_in);
  Options o;
  o.task = Task::ImageCls, o.batch = 2;
  const auto e = estimate(*m, o);
  ASSERT_TRUE(e.ok()) << (e.ok() ? "" : e.error());
  EXPECT_EQ(e->uncertainty_percent, 30U);
  bool said = false;
  for (const auto& w : e->warnings) said = said || w.find("Swin-style") != std::string::npos;
  EXPECT_TRUE(said);
  EXPECT_GT(e->n_params, 27'000'000U);  // Swin V2-tiny's widths: 28.3M in transformers
  EXPECT_LT(e->n_params, 30'000'000U);
}

// Longformer's band is sized for the sequence padded to a multiple of attention_window (LEDEncoder /
// LongformerModel pad the input): a short sequence pays for the whole window (unpadded, a sequence between w and
// 2w had no chunks at all), and memory never falls as the sequence grows.
TEST(EstimatorEncodersRound4, LongformerShortSequencesArePaddedToTheWindow) {
  const auto m = parse_config_json(R"({"model_type":"longformer-like","architectures":["LongformerForMaskedLM"],
      "hidden_size":768,"num_hidden_layers":2,"num_attention_heads":12,"intermediate_size":3072,"vocab_size":50265,
      "max_position_embeddings":4098,"type_vocab_size":1,"attention_window":512})", "config.json");
  ASSERT_TRUE(m.ok()) << (m.ok() ? "" : m.error());
  EXPECT_EQ(m->enc.attention_window, 512U);
  Options o;
  o.task = Task::Mlm, o.mode = Mode::Infer, o.batch = 8;
  std::uint64_t last = 0;
  for (std::uint64_t seq : {100, 300, 512, 700, 1024}) {
    o.seq = seq;
    const auto e = estimate(*m, o);
    ASSERT_TRUE(e.ok()) << seq << ": " << (e.ok() ? "" : e.error());
    EXPECT_GE(e->peak_allocated_bytes, last) << seq;
    last = e->peak_allocated_bytes;
  }
  o.seq = 100;
  const auto short_seq = estimate(*m, o);
  ASSERT_TRUE(short_seq.ok());
  const std::uint64_t band_fp32 = 8ULL * 12 * 512 * 513 * 4;  // one fp32 band of the padded 512 tokens
  EXPECT_GT(short_seq->peak_allocated_bytes, short_seq->n_params * 2 + band_fp32);
}

// What an unknown config's fields say it is: an encoder-decoder with T5's per-head width and bucketed relative
// positions (Switch Transformers) is T5-style, not BART-style (BART's learned positions and LayerNorms); an
// encoder with position_embedding_type "rotary" (ESM) rotates q and k and has no absolute position table.
TEST(EstimatorEncodersRound4, UnknownConfigsReadByTheirFields) {
  const auto t5_like = parse_config_json(R"({"model_type":"t5-like","is_encoder_decoder":true,"d_model":512,"d_kv":64,
      "d_ff":2048,"num_layers":6,"num_decoder_layers":6,"num_heads":8,"relative_attention_num_buckets":32,"vocab_size":32128})",
                                         "config.json");
  ASSERT_TRUE(t5_like.ok()) << (t5_like.ok() ? "" : t5_like.error());
  EXPECT_EQ(t5_like->family, Family::T5);
  EXPECT_TRUE(t5_like->stand_in);
  Options o;
  o.task = Task::Seq2Seq, o.batch = 2, o.seq = 128;
  const auto e = estimate(*t5_like, o);
  ASSERT_TRUE(e.ok()) << (e.ok() ? "" : e.error());
  EXPECT_EQ(e->n_params, 60'506'624U);  // t5-small's widths: T5ForConditionalGeneration's count
  EXPECT_EQ(e->uncertainty_percent, 30U);

  const std::string esm = R"({"model_type":"esm-like","architectures":["EsmForMaskedLM"],"hidden_size":320,"num_hidden_layers":6,
      "num_attention_heads":20,"intermediate_size":1280,"vocab_size":33,"max_position_embeddings":1026,)";
  const auto rotary = parse_config_json(esm + R"("position_embedding_type":"rotary"})", "config.json");
  const auto absolute = parse_config_json(esm + R"("position_embedding_type":"absolute"})", "config.json");
  ASSERT_TRUE(rotary.ok() && absolute.ok());
  EXPECT_EQ(rotary->rotary_dims, 16U);
  EXPECT_EQ(absolute->rotary_dims, 0U);
  o.task = Task::Mlm;
  const auto er = estimate(*rotary, o), ea = estimate(*absolute, o);
  ASSERT_TRUE(er.ok() && ea.ok());
  EXPECT_EQ(ea->n_params - er->n_params, 1026U * 320);  // the absolute table only
}
