// The op-by-op forward (forward_ops.hpp) as the estimate shows it: generate()'s decoding steps,
// FSDP1 untying a tied lm_head, the inference phases' terms. Configs: the measured families'
// (tests/data/estimator/pytorch-h200-families.models).
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "core/estimator/estimate.hpp"
#include "test_files.hpp"

using namespace vramdoc::estimator;

namespace {

ModelConfig measured(const std::string& name) {
  const std::string s = vramdoc::test::file_text(std::string(VRAMDOC_SOURCE_DIR) + "/tests/data/estimator/pytorch-h200-families.models/" + name + ".json");
  auto m = parse_config_json(nlohmann::json::parse(s)["config"].dump(), name);
  EXPECT_TRUE(m.ok()) << name;
  return *m;
}

const Phase* phase(const Estimate& e, const std::string& name) {
  for (const auto& p : e.phases) {
    if (p.name == name) return &p;
  }
  return nullptr;
}

std::uint64_t term(const Phase& p, const std::string& key) {
  for (const auto& t : p.terms) {
    if (t.key == key) return t.bytes;
  }
  return 0;
}

}  // namespace

// Regression (issue 16): every layer's cache grew by the new tokens; DynamicSlidingWindowLayer
// keeps its window once a decoding step has run (gemma3-m: 7 sliding layers of 8, window 512), so
// after 512 new tokens the peak is still the prompt's cache (every layer, until its first update)
// plus one layer's copy, below the 8 x (prompt + 512) tokens a growing cache would hold.
TEST(EstimatorOps, DecodingKeepsOnlyTheWindowOfSlidingLayers) {
  const ModelConfig m = measured("gemma3-m");
  ASSERT_EQ(m.layer_sliding.size(), 8U);
  Options o;
  o.mode = Mode::Infer, o.batch = 8, o.seq = 2048, o.new_tokens = 512;
  auto e = estimate(m, o);
  ASSERT_TRUE(e.ok()) << e.error();
  const Phase* decoding = phase(*e, "decoding (KV cache growing)");
  ASSERT_NE(decoding, nullptr);
  const std::uint64_t per_token = m.num_kv_heads * m.head_dim * 2 * 2;  // keys and values, bf16
  const std::uint64_t prompt = o.batch * o.seq * per_token, grown = o.batch * (o.seq + o.new_tokens) * per_token;
  EXPECT_GE(term(*decoding, "kv_cache_bytes"), 8 * prompt);
  EXPECT_LE(term(*decoding, "kv_cache_bytes"), 8 * prompt + grown);
  EXPECT_LT(term(*decoding, "kv_cache_bytes"), 8 * grown);
}

// The inference phases' terms come from one op-by-op sequence: they add up, and the decoder
// layer's temporaries (the MLP's gate, act, up, product of 16k tokens) dominate a plain forward.
TEST(EstimatorOps, InferencePhasesAddUp) {
  const ModelConfig m = measured("llama3-m");
  Options o;
  o.mode = Mode::Infer, o.batch = 8, o.seq = 2048;
  auto e = estimate(m, o);
  ASSERT_TRUE(e.ok()) << e.error();
  for (const auto& p : e->phases) {
    std::uint64_t sum = 0;
    for (const auto& t : p.terms) sum += t.bytes;
    EXPECT_EQ(sum, p.allocated_bytes) << p.name;
  }
  const Phase* layer = phase(*e, "forward: a decoder layer");
  ASSERT_NE(layer, nullptr);
  EXPECT_GE(term(*layer, "layer_transient_bytes"), 3 * o.batch * o.seq * m.intermediate_size * 2);
  EXPECT_EQ(e->workspace_bytes, 32ULL << 20);  // inference makes one cuBLAS workspace
}

// Regression (issue 18): FSDP1 on a meta-device model materialises each module with
// to_empty(recurse=False), which gives a tied lm_head its own weight; FSDP2 keeps the tie.
TEST(EstimatorOps, FsdpOneUntiesATiedHead) {
  const ModelConfig m = measured("qwen2.5-0.5b");
  ASSERT_TRUE(m.tie_word_embeddings);
  Options o;
  o.precision = Precision::AmpBf16, o.batch = 2, o.seq = 1024, o.gpus = 2;
  o.parallel.data = DataParallel::Fsdp;
  auto fsdp2 = estimate(m, o);
  o.parallel.fsdp_version = 1;
  auto fsdp1 = estimate(m, o);
  ASSERT_TRUE(fsdp1.ok() && fsdp2.ok());
  EXPECT_EQ(fsdp1->n_params, fsdp2->n_params + m.vocab_size * m.hidden_size);
  EXPECT_GT(fsdp1->peak_allocated_bytes, fsdp2->peak_allocated_bytes);
  bool warned = false;
  for (const auto& w : fsdp1->warnings) warned = warned || w.find("unties lm_head") != std::string::npos;
  EXPECT_TRUE(warned);
}
