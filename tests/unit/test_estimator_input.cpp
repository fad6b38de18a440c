// Hostile input for the estimator's readers: config.json and safetensors headers. Errors must
// name the field and the file; nothing may crash (a deterministic mutation fuzz runs in CI).
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <chrono>
#include <optional>
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

// Regression (issue 25): a header whose offsets disagree with shape x dtype gave a 10 TiB answer
// silently. Offsets must span exactly the tensor's bytes and tile the data buffer; a file that
// holds part of that buffer is cut short; a copy of the header alone is read.
TEST(EstimatorSafetensors, OffsetsThatDisagreeWithTheShapeAreErrors) {
  const auto error = [](const std::string& json, std::optional<std::uint64_t> data = std::nullopt) {
    auto t = parse_safetensors_header(header(json), "m.safetensors", data);
    return t ? std::string() : t.error();
  };
  EXPECT_NE(error(R"({"w":{"dtype":"BF16","shape":[1048576,5242880],"data_offsets":[0,64]}})")
                .find("its data_offsets [0, 64] hold 64 bytes, but shape x BF16 is 10995116277760 bytes"),
            std::string::npos);
  EXPECT_NE(error(R"({"w":{"dtype":"F32","shape":[2]}})").find("lacks data_offsets"), std::string::npos);
  EXPECT_NE(error(R"({"w":{"dtype":"F32","shape":[2],"data_offsets":[8,0]}})").find("end before they begin"), std::string::npos);
  EXPECT_NE(error(R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},"b":{"dtype":"F32","shape":[2],"data_offsets":[16,24]}})")
                .find("leave a hole at byte 8"),
            std::string::npos);
  EXPECT_NE(error(R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},"b":{"dtype":"F32","shape":[2],"data_offsets":[4,12]}})")
                .find("overlap at byte 4"),
            std::string::npos);
  const std::string ok = R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},"b":{"dtype":"BF16","shape":[4],"data_offsets":[8,16]}})";
  EXPECT_EQ(error(ok), "");
  EXPECT_EQ(error(ok, 16), "");
  EXPECT_EQ(error(ok, 0), "");  // the header alone
  EXPECT_NE(error(ok, 10).find("describes 16 bytes of tensor data but the file holds 10"), std::string::npos);
}

// Regression (issue 25): num_hidden_layers 1e9 took 9 GB in 30 s and kept growing (every layer
// is simulated op by op). Refused at once, naming the field and the bound.
TEST(EstimatorLimits, AbsurdLayerCountsAreRefusedBeforeAnyWork) {
  auto m = parse_config_json(with("num_hidden_layers", "1000000000"), "cfg.json");
  ASSERT_FALSE(m);
  EXPECT_NE(m.error().find("field 'num_hidden_layers' in cfg.json is 1000000000: vramdoc estimates at most 1024 layers"),
            std::string::npos)
      << m.error();
  EXPECT_TRUE(parse_config_json(with("num_hidden_layers", "1024"), "cfg.json"));
  auto built = parse_config_json(kLlama, "cfg.json");
  ASSERT_TRUE(built);
  built->num_layers = 1ULL << 30;  // a model made in code is held to the same bound
  EXPECT_FALSE(estimate(*built, Options{}));
}

// Regression (issue 25): --new-tokens 16777216 (the old maximum) took 9.2 GB: each generated
// token runs every layer. The bound is on layers x tokens, and the error says this model's maximum.
TEST(EstimatorLimits, DecodingWorkIsBoundedWithTheModelsMaximum) {
  auto m = parse_config_json(kLlama, "cfg.json");  // 12 layers
  ASSERT_TRUE(m);
  Options o;
  o.mode = Mode::Infer;
  o.new_tokens = 16777216;
  auto e = estimate(*m, o);
  ASSERT_FALSE(e);
  EXPECT_NE(e.error().find("at most " + std::to_string(kMaxLayerPasses / 12 - 1) + " new tokens for this model"), std::string::npos)
      << e.error();
  o.new_tokens = kMaxLayerPasses / 12;  // one token over: 12 x (N + 1) > the bound
  EXPECT_FALSE(estimate(*m, o));
  o.new_tokens = 256;
  EXPECT_TRUE(estimate(*m, o));
}

// Fuzz of the bounds: any config field at an absurd size, any decoding length, is an answer or a
// clear error, never a hang or a runaway allocation (each estimate's work is bounded).
TEST(EstimatorLimits, FuzzedHugeFieldsAreAnswersOrErrorsInBoundedWork) {
  std::mt19937 rng(25);
  const char* fields[] = {"hidden_size", "num_hidden_layers", "num_attention_heads", "num_key_value_heads",
                          "intermediate_size", "vocab_size"};
  const std::string values[] = {"1", "7", "1024", "65536", "1073741824", "1099511627775", "1e12", "-1", "0.5"};
  const auto start = std::chrono::steady_clock::now();
  for (int i = 0; i < 60; ++i) {
    std::string text = kLlama;
    const std::string field = fields[rng() % 6];
    text = with(field, values[rng() % 9]);
    auto m = parse_config_json(text, "cfg.json");
    if (!m) continue;
    Options o;
    o.mode = rng() % 2 ? Mode::Infer : Mode::Train;
    if (o.mode == Mode::Infer) o.new_tokens = rng() % 3 == 0 ? 1ULL << (rng() % 40) : rng() % 64;
    o.batch = 1 + rng() % 8;
    o.seq = 1 + rng() % 4096;
    auto e = estimate(*m, o);
    if (!e) {
      EXPECT_FALSE(e.error().empty());
    }
  }
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_LT(seconds, 120.0);  // generous: the unbounded cases ran for hours
}
