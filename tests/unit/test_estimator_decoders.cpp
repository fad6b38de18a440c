// Issue 28, round 4: the decoder families round 3's held-out set missed (tests/data/estimator/
// pytorch-h200-kinds-c.*, dev since it was evaluated once), each fixed by its mechanism in the modelling
// code: Falcon's ALiBi mask, a tied embedding's gradient summed out of place, GPT-BigCode's multi-query
// attention, GraniteMoE's routed experts, the scaled logits of Cohere / Granite in the loss, BLOOM's
// attention locals. docs/estimator.md, "Round 4: decoders", has every term's source line.
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
using vramdoc::test::quantile;
using vramdoc::test::rel;

namespace {

const std::string kSet = std::string(VRAMDOC_SOURCE_DIR) + "/tests/data/estimator/pytorch-h200-kinds-c";

ModelConfig model(const std::string& name, const std::string& task = "causal-lm") {
  const auto j = nlohmann::json::parse(vramdoc::test::file_text(kSet + ".models/" + name + "." + task + ".json"));
  auto m = parse_config_json(j["config"].dump(), name);
  EXPECT_TRUE(m.ok()) << name << ": " << (m.ok() ? "" : m.error());
  return m.ok() ? *m : ModelConfig{};
}

std::uint64_t measured_params(const std::string& name) {
  return nlohmann::json::parse(vramdoc::test::file_text(kSet + ".models/" + name + ".causal-lm.json"))["n_params"];
}

// The decoder cases of round 3 (causal-lm, measured, not a max-batch trial).
std::vector<nlohmann::json> decoder_cases() {
  std::vector<nlohmann::json> out;
  std::stringstream in(vramdoc::test::file_text(kSet + ".jsonl"));
  for (std::string line; std::getline(in, line);) {
    if (line.empty()) continue;
    auto r = nlohmann::json::parse(line);
    if (!r.contains("case_id") || r.contains("error") || r.value("kind", "") == "maxbatch" ||
        r.value("kind", "") == "maxbatch-trial" || r.value("task", "") != "causal-lm") {
      continue;
    }
    out.push_back(std::move(r));
  }
  return out;
}

Options options_of(const nlohmann::json& r) { return vramdoc::test::kinds_options(r); }

struct Errors {
  double allocated = 0, process = 0;  // |relative errors|
};

Errors errors_of(const nlohmann::json& r) {
  const auto e = estimate(model(r["model"]), options_of(r));
  EXPECT_TRUE(e.ok()) << r["case_id"] << ": " << (e.ok() ? "" : e.error());
  if (!e.ok()) return {1, 1};
  return {rel(e->peak_allocated_bytes, r["peak_allocated"].get<double>()), rel(e->process_bytes, r["driver_process_used"].get<double>())};
}

const Phase* phase_named(const Estimate& e, const std::string& name) {
  for (const Phase& p : e.phases) {
    if (p.name == name) return &p;
  }
  return nullptr;
}

std::uint64_t term_bytes(const Phase& p, const std::string& key) {
  for (const Term& t : p.terms) {
    if (t.key == key) return t.bytes;
  }
  return 0;
}

}  // namespace

// Every decoder case of round 3 within issue 28's bar (allocated 4 %, process 6 %), and the set's medians
// and p95s within it; the one listed miss is GPT-Neo's reserved memory (read as the generic decoder,
// +-30 % announced).
TEST(EstimatorDecoders, Round3DecoderCasesWithinTheBarOrAListedMiss) {
  const std::map<std::string, std::pair<double, double>> misses = {
      {"030-gptneo-125m-causal-lm-train-bf16", {0.04, 0.08}},
  };
  std::vector<double> allocated, process;
  std::size_t listed = 0;
  for (const auto& r : decoder_cases()) {
    const Errors e = errors_of(r);
    const auto it = misses.find(r["case_id"]);
    const auto [a, p] = it != misses.end() ? it->second : std::pair<double, double>{0.04, 0.06};
    listed += it != misses.end();
    EXPECT_LE(e.allocated, a) << r["case_id"] << " allocated";
    EXPECT_LE(e.process, p) << r["case_id"] << " process";
    allocated.push_back(e.allocated), process.push_back(e.process);
  }
  EXPECT_EQ(listed, misses.size());
  EXPECT_GE(allocated.size(), 26U);
  EXPECT_LE(quantile(allocated, 0.5), 0.01);
  EXPECT_LE(quantile(allocated, 0.95), 0.04);
  EXPECT_LE(quantile(process, 0.5), 0.02);
  EXPECT_LE(quantile(process, 0.95), 0.06);
}

// Regression (issue 28, round 3's held-out misses and the dev reserved layouts): each case within 1 % where
// it missed by the error in the comment, each mechanism a term of the modelling code.
TEST(EstimatorDecoders, Round3MissesFixedByTheirMechanism) {
  struct Row {
    const char* case_id;
    bool allocated;  // the allocated peak (else the process total) is what missed
    const char* why;
  };
  const Row rows[] = {
      {"017-falcon-rw-causal-lm-infer-bf16", true, "-48 %: Falcon's ALiBi folded into a batch x heads x seq x seq mask"},
      {"015-falcon-rw-causal-lm-train-bf16", true, "-3.8 %: the ALiBi mask, saved by every layer's SDPA"},
      {"026-gemma-2b-causal-lm-train-fp32", true, "-28 %: the tied embedding's gradient summed out of place"},
      {"032-bigcode-1b-causal-lm-train-bf16", true, "+29 %: GPT-BigCode read as a llama-style generic decoder"},
      {"033-bigcode-1b-causal-lm-infer-bf16", true, "+19 %: GPT-BigCode's multi-query c_attn, its held embeddings"},
      {"037-granitemoe-1b-causal-lm-infer-bf16", true, "+24 %: GraniteMoE's routing weights in the hidden states' dtype"},
      {"009-cohere-s-causal-lm-train-bf16", false, "+11 %: logits * logit_scale, the loss's input, and its gradient"},
      {"010-granite-s-causal-lm-train-bf16", false, "+7 %: logits / logits_scaling, the loss's input, and its gradient"},
      {"007-bloom-m-causal-lm-infer-bf16", false, "-17 %: BLOOM's attention locals held to dropout_add; the eager mask"},
  };
  const auto cases = decoder_cases();
  for (const Row& row : rows) {
    const auto it = std::find_if(cases.begin(), cases.end(), [&](const nlohmann::json& r) { return r["case_id"] == row.case_id; });
    ASSERT_NE(it, cases.end()) << row.case_id;
    const Errors e = errors_of(*it);
    EXPECT_LE(row.allocated ? e.allocated : e.process, 0.01) << row.case_id << " (was " << row.why << ")";
  }
}

// A tied embedding's gradient meets lm_head's share in autograd's input buffer: without autocast the sum is
// out of place (three vocabulary x hidden tensors at once, the gemma-2b traces), under autocast in place
// into the cast's fp32 gradient; adapters train no embedding.
TEST(EstimatorDecoders, TiedEmbeddingGradientOutOfPlaceWithoutAutocast) {
  const ModelConfig m = model("gemma-2b");
  ASSERT_TRUE(m.tie_word_embeddings);
  const std::uint64_t vocab_by_hidden = m.vocab_size * m.hidden_size;
  Options o;
  o.mode = Mode::Train, o.batch = 1, o.seq = 1024, o.optimizer = Optimizer::Sgd;
  const char* phase = "backward (the tied embeddings' gradient)";
  for (const auto& [precision, bytes] : {std::pair{Precision::Fp32, 2 * 4 * vocab_by_hidden},
                                         std::pair{Precision::Bf16, 2 * 2 * vocab_by_hidden},
                                         std::pair{Precision::AmpBf16, 4 * vocab_by_hidden}}) {
    o.precision = precision;
    const auto e = estimate(m, o);
    ASSERT_TRUE(e.ok());
    const Phase* p = phase_named(*e, phase);
    ASSERT_NE(p, nullptr);
    EXPECT_EQ(term_bytes(*p, "embedding_gradient_bytes"), bytes);
  }
  o.mode = Mode::Lora, o.precision = Precision::Bf16;
  const auto lora = estimate(m, o);
  ASSERT_TRUE(lora.ok());
  EXPECT_EQ(phase_named(*lora, phase), nullptr);
}

// GPT-BigCode and GraniteMoE are families of their own (they were the generic decoder: +-30 %), with
// transformers' parameter counts; multi_query=false gives c_attn a key and a value head per query head.
TEST(EstimatorDecoders, GptBigcodeAndGraniteMoeAreFamilies) {
  Options o;
  o.mode = Mode::Infer, o.batch = 1, o.seq = 128;
  for (const char* name : {"bigcode-1b", "granitemoe-1b"}) {
    const ModelConfig m = model(name);
    EXPECT_NE(m.family, Family::Generic) << name;
    const auto e = estimate(m, o);
    ASSERT_TRUE(e.ok()) << name;
    EXPECT_EQ(e->n_params, measured_params(name)) << name;
    EXPECT_LE(e->uncertainty_percent, 5U) << name;
  }
  const auto j = nlohmann::json::parse(vramdoc::test::file_text(kSet + ".models/bigcode-1b.causal-lm.json"));
  auto cfg = j["config"];
  cfg["multi_query"] = false;
  const auto mha = parse_config_json(cfg.dump(), "bigcode-mha");
  ASSERT_TRUE(mha.ok());
  const ModelConfig mqa = model("bigcode-1b");
  EXPECT_EQ(mha->num_kv_heads, mha->num_heads);
  EXPECT_EQ(mqa.num_kv_heads, 1U);
  const auto a = estimate(*mha, o), b = estimate(mqa, o);
  ASSERT_TRUE(a.ok() && b.ok());
  const std::uint64_t h = mqa.hidden_size, kv_growth = 2 * (h - mqa.head_dim);  // c_attn's columns
  EXPECT_EQ(a->n_params - b->n_params, mqa.num_layers * kv_growth * (h + 1));   // weight and bias
}

// Round 4's decoder families read from their modelling code (transformers 5.17; not measured yet): CodeGen as
// GPT-J's layout with one qkv_proj, MPT with its own ALiBi attention, PhiMoE as Mixtral with LayerNorms and biases, BioGPT as OPT's
// pre-norm layer with gelu and scaled embeddings. Their parameter counts follow the modules the
// code builds, PEFT's default targets are theirs, and MPT's eager scores make the layers' temporaries grow with the
// square of the sequence (the generic decoder's fused SDPA made them linear).
TEST(EstimatorDecoders, Round4FamiliesFromTheirCode) {
  const auto codegen = parse_config_json(R"({"model_type":"codegen","vocab_size":51200,"n_positions":2048,"n_ctx":2048,
      "n_embd":1024,"n_layer":20,"n_head":16,"rotary_dim":32,"n_inner":null,"activation_function":"gelu_new"})", "codegen");
  const auto mpt = parse_config_json(R"({"model_type":"mpt","d_model":1024,"n_heads":16,"n_layers":8,"expansion_ratio":4,
      "max_seq_len":2048,"vocab_size":50432,"attn_config":{"alibi":true},"no_bias":true})", "mpt");
  ASSERT_TRUE(codegen.ok() && mpt.ok());
  EXPECT_EQ(codegen->family, Family::Codegen);
  EXPECT_EQ(mpt->family, Family::Mpt);
  Options o;
  o.mode = Mode::Infer, o.batch = 1, o.seq = 1024;
  const std::uint64_t h = 1024, V = 51200;
  // wte; per layer ln_1 (weight, bias), qkv_proj (no bias), out_proj, fc_in and fc_out (biases); ln_f; lm_head + bias
  const std::uint64_t codegen_params = V * h + 20 * (2 * h + 3 * h * h + h * h + (h * 4 * h + 4 * h) + (4 * h * h + h)) +
                                       2 * h + (h * V + V);
  const auto c = estimate(*codegen, o);
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(c->n_params, codegen_params);
  // wte (lm_head tied); per layer norm_1, Wqkv, out_proj, norm_2, up_proj, down_proj, no biases; norm_f
  const std::uint64_t mpt_params = 50432 * h + 8 * (h + 3 * h * h + h * h + h + 4 * h * h + 4 * h * h) + h;
  const auto m1 = estimate(*mpt, o);
  ASSERT_TRUE(m1.ok());
  EXPECT_EQ(m1->n_params, mpt_params);
  EXPECT_EQ(default_lora_targets(*codegen), std::vector<std::string>{"qkv_proj"});
  EXPECT_EQ(default_lora_targets(*mpt), std::vector<std::string>{"Wqkv"});
  // PhiMoE: Mixtral's layer with LayerNorms (weight and bias), q / k / v / o and lm_head biases as configured
  const auto phimoe = parse_config_json(R"({"model_type":"phimoe","vocab_size":32064,"hidden_size":512,"intermediate_size":768,
      "num_hidden_layers":4,"num_attention_heads":8,"num_key_value_heads":2,"num_local_experts":4,"num_experts_per_tok":2,
      "attention_bias":true,"lm_head_bias":true,"tie_word_embeddings":false})", "phimoe");
  ASSERT_TRUE(phimoe.ok());
  EXPECT_EQ(phimoe->family, Family::Phimoe);
  const std::uint64_t ph = 512, kv = 2 * 64, pv = 32064;
  const std::uint64_t phimoe_params = pv * ph + 4 * ((ph * ph + ph) + 2 * (ph * kv + kv) + (ph * ph + ph) + 2 * 2 * ph + ph * 4 +
                                                     4 * (ph * 2 * 768 + 768 * ph)) + 2 * ph + (ph * pv + pv);
  const auto pm = estimate(*phimoe, o);
  ASSERT_TRUE(pm.ok());
  EXPECT_EQ(pm->n_params, phimoe_params);
  // BioGPT: OPT's pre-norm layer (learned positions offset by 2, biases everywhere) with gelu, lm_head tied
  const auto biogpt = parse_config_json(R"({"model_type":"biogpt","vocab_size":42384,"hidden_size":1024,"num_hidden_layers":24,
      "num_attention_heads":16,"intermediate_size":4096,"max_position_embeddings":1024})", "biogpt");
  ASSERT_TRUE(biogpt.ok());
  EXPECT_EQ(biogpt->family, Family::Biogpt);
  const std::uint64_t biogpt_params = 42384 * h + (1024 + 2) * h + 24 * (4 * (h * h + h) + (h * 4096 + 4096) + (4096 * h + h) + 2 * 2 * h) + 2 * h;
  const auto bg = estimate(*biogpt, o);
  ASSERT_TRUE(bg.ok());
  EXPECT_EQ(bg->n_params, biogpt_params);  // microsoft/biogpt: 346,763,264
  o.seq = 2048;
  const auto m2 = estimate(*mpt, o);
  ASSERT_TRUE(m2.ok());
  const std::uint64_t fp32_scores_growth = 16 * (2048ULL * 2048 - 1024ULL * 1024) * 4;  // one heads x seq x seq fp32 tensor
  EXPECT_GE(m2->peak_allocated_bytes - m1->peak_allocated_bytes, 2 * fp32_scores_growth);
}
