// Issue 28, round 5: the decoder cases round 4's held-out set missed (tests/data/estimator/
// pytorch-h200-kinds-d.*, dev since it was evaluated once), each fixed by its mechanism in the modelling
// code. docs/estimator.md, "Round 5: decoders", has every term's source line.
#include <gtest/gtest.h>

#include <algorithm>
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

nlohmann::json model_file(const std::string& name) { return vramdoc::test::kinds_model_file(kSet, name, "causal-lm"); }
ModelConfig model(const std::string& name) { return vramdoc::test::kinds_model(kSet, name, "causal-lm"); }
nlohmann::json record(const std::string& case_id) { return vramdoc::test::kinds_record(kSet, case_id); }
Options options_of(const nlohmann::json& r) { return vramdoc::test::kinds_options(r); }

struct Errors {
  double allocated = 1, reserved = 1, process = 1;  // |relative errors|
};

Errors errors_of(const std::string& case_id) {
  const auto r = record(case_id);
  if (r.is_null()) return {};
  const auto e = estimate(model(r["model"]), options_of(r));
  EXPECT_TRUE(e.ok()) << case_id << ": " << (e.ok() ? "" : e.error());
  if (!e.ok()) return {};
  return {rel(e->peak_allocated_bytes, r["peak_allocated"].get<double>()),
          rel(e->peak_reserved_bytes, r["peak_reserved"].get<double>()),
          rel(e->process_bytes, r["driver_process_used"].get<double>())};
}

}  // namespace

// XGLM (modeling_xglm.py) is a family of its own: it was the generic decoder (a llama-style layer with eager
// attention's fp32 softmax: +90 % allocated in generate). Its parameters are transformers' count (the sinusoidal
// positions are a buffer), and both measured cases are within 1 % by XGLMAttention's own eager path: bmm's
// scores, + mask, torch.max, softmax in the scores' dtype, the softmax held to the layer's end.
TEST(EstimatorDecodersR5, XglmIsAFamilyWithItsOwnEagerAttention) {
  const ModelConfig m = model("xglm-564m");
  EXPECT_EQ(m.family, Family::Xglm);
  Options o;
  o.mode = Mode::Infer, o.batch = 1, o.seq = 128;
  const auto e = estimate(m, o);
  ASSERT_TRUE(e.ok());
  EXPECT_EQ(e->n_params, model_file("xglm-564m")["n_params"].get<std::uint64_t>());
  EXPECT_LE(e->uncertainty_percent, 5U);
  for (const char* id : {"020-xglm-564m-causal-lm-infer-bf16", "019-xglm-564m-causal-lm-train-bf16"}) {
    const Errors err = errors_of(id);
    EXPECT_LE(err.allocated, 0.01) << id << " allocated (was +89.8 % infer, +2.1 % train)";
    EXPECT_LE(err.process, 0.02) << id << " process (was +102.6 % infer, -14.4 % train)";
  }
}

// MPT's config says use_cache false (MptConfig's default), so generate() runs the whole sequence again for every
// further token: each step's scores outgrow every cached block and the allocator maps new segments (process was
// -73 %). MptAttention's attention_scores (the masked fp32 scores) live to its return, with attn_weights' 16-bit
// copy (allocated was -4 %, -14 % once the cache was gone). The same config with use_cache true keeps a cache.
TEST(EstimatorDecodersR5, MptGeneratesWithoutACacheAsItsConfigSays) {
  const ModelConfig m = model("mpt-1b");
  EXPECT_FALSE(m.generate_with_cache);
  auto cfg = model_file("mpt-1b")["config"];
  cfg["use_cache"] = true;
  const auto cached = parse_config_json(cfg.dump(), "mpt-cached");
  ASSERT_TRUE(cached.ok());
  EXPECT_TRUE(cached->generate_with_cache);
  const auto r = record("016-mpt-1b-causal-lm-infer-bf16");
  const auto a = estimate(m, options_of(r)), b = estimate(*cached, options_of(r));
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_GT(a->peak_reserved_bytes, 2 * b->peak_reserved_bytes);  // a fresh segment pair per step
  for (const char* id : {"016-mpt-1b-causal-lm-infer-bf16", "015-mpt-1b-causal-lm-train-bf16"}) {
    const Errors err = errors_of(id);
    EXPECT_LE(err.allocated, 0.01) << id << " allocated (was -4.0 % infer, +2.1 % train)";
    EXPECT_LE(err.process, 0.03) << id << " process (was -73.1 % infer, +1.3 % train)";
  }
}
