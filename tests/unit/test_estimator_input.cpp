// Hostile input for the estimator's readers: config.json and safetensors headers. Errors must
// name the field and the file; nothing may crash (a deterministic mutation fuzz runs in CI).
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <random>

#include "core/estimator/estimate.hpp"
#include "core/estimator/model_config.hpp"
#include "core/estimator/safetensors.hpp"
#include "test_files.hpp"

using namespace vramdoc::estimator;

namespace {

const char* kLlama =
    R"({"model_type":"llama","hidden_size":768,"num_hidden_layers":12,"num_attention_heads":12,)"
    R"("num_key_value_heads":12,"intermediate_size":2048,"vocab_size":32000})";

std::string with(const std::string& field, const std::string& value) {
  std::string s = kLlama;
  const std::string key = "\"" + field + "\":";
  auto at = s.find(key);
  auto end = s.find_first_of(",}", at + key.size());
  return s.substr(0, at + key.size()) + value + s.substr(end);
}

std::string error_of(const std::string& text) {
  auto r = parse_config_json(text, "cfg.json");
  return r.ok() ? "" : r.error();
}

std::string header(const std::string& json, std::uint64_t announced) {  // 8-byte LE length + json
  std::string out(8, '\0');
  for (int i = 0; i < 8; ++i) out[static_cast<std::size_t>(i)] = static_cast<char>((announced >> (8 * i)) & 0xff);
  return out + json;
}

std::string header(const std::string& json) { return header(json, json.size()); }

}  // namespace

TEST(EstimatorConfig, ReadsAValidConfig) {
  auto m = parse_config_json(kLlama, "cfg.json");
  ASSERT_TRUE(m.ok()) << m.error();
  EXPECT_EQ(m->family, Family::Llama);
  EXPECT_EQ(m->head_dim, 64U);
  EXPECT_TRUE(m->warnings.empty());
}

TEST(EstimatorConfig, BadValuesNameTheFieldAndTheFile) {
  const std::pair<std::string, std::string> bad[] = {
      {with("hidden_size", "\"768\""), "field 'hidden_size' in cfg.json is not a number"},
      {with("hidden_size", "-768"), "field 'hidden_size' in cfg.json must be positive"},
      {with("num_hidden_layers", "0"), "field 'num_hidden_layers' in cfg.json must be positive"},
      {with("vocab_size", "3.5"), "field 'vocab_size' in cfg.json is not an integer"},
      {with("vocab_size", "1e300"), "field 'vocab_size' in cfg.json is absurdly large"},
      {R"({"hidden_size":768,"num_hidden_layers":2,"num_attention_heads":7,"intermediate_size":8,"vocab_size":9})",
       "'num_attention_heads' in cfg.json (7) does not divide hidden_size (768)"},
      {with("num_key_value_heads", "5"), "'num_key_value_heads' in cfg.json (5) does not divide"},
      {with("intermediate_size", "null"), "missing field 'intermediate_size' in cfg.json"},
      {R"({"model_type":"llama"})", "missing field 'hidden_size' in cfg.json"},
      {"{\"hidden_size\": 7", "cfg.json is not valid JSON"},
      {"[1, 2]", "cfg.json is not a JSON object"},
      {"", "cfg.json is not valid JSON"},
      {std::string("\x00\xff\xfe{", 4), "cfg.json is not valid JSON"},
  };
  for (const auto& [text, want] : bad) {
    EXPECT_NE(error_of(text).find(want), std::string::npos) << "input: " << text << "\nerror: " << error_of(text);
  }
}

TEST(EstimatorConfig, UnknownModelTypeIsAGenericDecoderWithAWarning) {
  auto m = parse_config_json(with("model_type", "\"frobnet\""), "cfg.json");
  ASSERT_TRUE(m.ok());
  EXPECT_EQ(m->family, Family::Generic);
  ASSERT_EQ(m->warnings.size(), 1U);
  EXPECT_NE(m->warnings[0].find("frobnet"), std::string::npos);
}

TEST(EstimatorConfig, ExplicitHeadDimNeedNotDivideHidden) {  // Gemma 7B: 16 heads x 256 != 3072
  auto m = parse_config_json(R"({"model_type":"gemma","hidden_size":3072,"num_hidden_layers":28,)"
                             R"("num_attention_heads":16,"head_dim":256,"intermediate_size":24576,"vocab_size":256000})",
                             "gemma.json");
  ASSERT_TRUE(m.ok()) << m.error();
  EXPECT_EQ(m->head_dim, 256U);
  EXPECT_TRUE(m->tie_word_embeddings);
}

// Deterministic mutation fuzz: flips, truncations, digit runs and splices of real configs.
// Whatever parses must estimate without crashing; whatever fails must say why.
TEST(EstimatorConfig, MutationFuzzNeverCrashes) {
  std::vector<std::string> seeds = {kLlama};
  for (const char* name : {"gpt2-124m", "llama-160m", "qwen2.5-0.5b"}) {
    const std::string s = vramdoc::test::file_text(std::string(VRAMDOC_TEST_DATA_DIR) + "/estimator/configs/" + name + ".json");
    if (!s.empty()) seeds.push_back(s);
  }
  // the new families' fields: latent attention, experts, soft-capping, layer types, quantization_config
  for (const char* name : {"dsv3-m", "qwen2moe-s", "gemma2-s", "gemma3-s", "falcon-m", "olmo2-s"}) {
    const std::string s = vramdoc::test::file_text(std::string(VRAMDOC_TEST_DATA_DIR) + "/estimator/pytorch-h200-families.models/" + name + ".json");
    auto j = nlohmann::json::parse(s, nullptr, false);
    if (j.is_discarded() || !j.contains("config")) continue;
    seeds.push_back(j["config"].dump());
    j["config"]["quantization_config"] = {{"quant_method", "gptq"}, {"bits", 4}, {"group_size", 128}};
    seeds.push_back(j["config"].dump());
  }
  std::mt19937 rng(12345);
  const std::string junk[] = {"9999999999999", "-1", "0", "1e309", "null", "\"x\"", "[]", "{}", "\xff", "3.7"};
  int parsed = 0;
  for (int i = 0; i < 3000; ++i) {
    std::string s = seeds[rng() % seeds.size()];
    for (int k = 0, n = 1 + static_cast<int>(rng() % 4); k < n && !s.empty(); ++k) {
      const std::size_t at = rng() % s.size();
      switch (rng() % 4) {
        case 0: s[at] = static_cast<char>(rng() & 0xff); break;
        case 1: s.resize(at); break;
        case 2: s.insert(at, junk[rng() % std::size(junk)]); break;
        default: s.erase(at, 1 + rng() % 8); break;
      }
    }
    auto m = parse_config_json(s, "fuzz.json");
    if (!m.ok()) {
      EXPECT_FALSE(m.error().empty());
      continue;
    }
    ++parsed;
    for (Mode mode : {Mode::Train, Mode::Lora, Mode::Qlora, Mode::Infer}) {
      Options o;
      o.mode = mode, o.batch = 1 + rng() % 64;
      auto e = estimate(*m, o);
      if (e.ok()) {
        EXPECT_GE(e->process_bytes, e->peak_reserved_bytes);
      }
    }
  }
  EXPECT_GT(parsed, 0);
}

TEST(EstimatorSafetensors, ReadsDtypesAndShapes) {
  const std::string json = R"({"__metadata__":{"format":"pt"},"w":{"dtype":"BF16","shape":[4,8],"data_offsets":[0,64]}})";
  auto t = parse_safetensors_header(header(json, json.size()), "m.safetensors");
  ASSERT_TRUE(t.ok()) << t.error();
  ASSERT_EQ(t->size(), 1U);
  EXPECT_EQ((*t)[0].bytes, 64U);
  EXPECT_EQ((*t)[0].shape, (std::vector<std::uint64_t>{4, 8}));
}

TEST(EstimatorSafetensors, HostileHeadersAreErrorsNamingTheFile) {
  const std::string ok = R"({"w":{"dtype":"F32","shape":[2]}})";
  const std::pair<std::string, std::string> bad[] = {
      {"abc", "truncated safetensors file"},
      {header(ok, ok.size() + 10), "truncated safetensors header"},
      {header(ok, 0), "not plausible"},
      {header(ok, 1ULL << 62), "not plausible"},
      {header("[1]"), "not a JSON object"},
      {header("{\"w\":{\"dtype\":\"F99\",\"shape\":[1]}}"), "unknown dtype 'F99'"},
      {header("{\"w\":{\"dtype\":\"F32\",\"shape\":[-1]}}"), "not a non-negative integer"},
      {header("{\"w\":{\"dtype\":\"F32\",\"shape\":[4294967296,4294967296]}}"), "overflows 64 bits"},
      {header("{\"w\":{\"shape\":[1]}}"), "lacks a dtype"},
  };
  for (const auto& [bytes, want] : bad) {
    auto t = parse_safetensors_header(bytes, "m.safetensors");
    ASSERT_FALSE(t.ok()) << want;
    EXPECT_NE(t.error().find("m.safetensors"), std::string::npos) << t.error();
    EXPECT_NE(t.error().find(want), std::string::npos) << t.error();
  }
}
