// The estimator against the measured calibration set, and its properties on every preset.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <nlohmann/json.hpp>

#include "core/estimator/allocator.hpp"
#include "core/estimator/calibration.hpp"
#include "core/estimator/estimate.hpp"
#include "core/estimator/fit.hpp"
#include "core/estimator/presets.hpp"
#include "core/estimator/render.hpp"
#include "test_accuracy.hpp"
#include "test_files.hpp"

using namespace vramdoc::estimator;
using vramdoc::test::quantile;
using vramdoc::test::rel;

namespace {

std::string shared(const std::string& rel) { return std::string(VRAMDOC_TEST_DATA_DIR) + "/estimator/" + rel; }

ModelConfig config_file(const std::string& name) {
  auto m = parse_config_json(vramdoc::test::file_text(shared("configs/" + name + ".json")), name);
  EXPECT_TRUE(m.ok()) << (m.ok() ? "" : m.error());
  return m.ok() ? *m : ModelConfig{};
}

std::uint64_t peak(const ModelConfig& m, const Options& o) {
  auto e = estimate(m, o);
  EXPECT_TRUE(e.ok()) << (e.ok() ? "" : e.error());
  return e.ok() ? e->peak_allocated_bytes : 0;
}

TEST(Estimator, ParameterCountsMatchPyTorch) {  // n_params as the calibration run reported them
  EXPECT_EQ(estimate(config_file("gpt2-124m"), {})->n_params, 125226240U);
  EXPECT_EQ(estimate(config_file("llama-160m"), {})->n_params, 134105856U);
  EXPECT_EQ(estimate(config_file("qwen2.5-0.5b"), {})->n_params, 494032768U);
}

TEST(Estimator, PresetParameterCountsMatchPublishedSizes) {
  const std::pair<const char*, double> published[] = {
      {"llama-2-7b", 6.738e9}, {"llama-3-8b", 8.030e9}, {"mistral-7b", 7.242e9}, {"qwen2.5-7b", 7.616e9},
      {"gemma-7b", 8.538e9},   {"phi-3-mini", 3.821e9}, {"mixtral-8x7b", 46.70e9}, {"gpt2", 124.4e6}};
  for (auto [name, size] : published) {
    auto m = preset_config(name);
    ASSERT_TRUE(m.ok()) << name;
    EXPECT_NEAR(static_cast<double>(estimate(*m, {})->n_params) / size, 1.0, 0.01) << name;
  }
}

struct Measured {
  std::string line;
  double allocated, reserved, process;  // truth
  Estimate estimate;
};

// Every finished case of a measured JSONL (measure_pytorch.py's format) with its estimate;
// configs from `config_dir`/<model>.json.
std::vector<Measured> measured_cases(const std::string& jsonl, const std::string& config_dir) {
  std::ifstream in(jsonl);
  std::vector<Measured> out;
  std::uint64_t warm = 0;
  for (std::string line; std::getline(in, line);) {
    auto rec = nlohmann::json::parse(line);
    if (rec.value("kind", "") == "env") {
      warm = rec["warm_allocated"];
      continue;
    }
    if (rec.contains("error") || !rec.contains("peak_allocated")) continue;
    Options o;
    o.mode = *parse_mode(rec["mode"].get<std::string>());
    std::string precision = rec["precision"].get<std::string>();
    std::replace(precision.begin(), precision.end(), '_', '-');
    o.precision = *parse_precision(precision);
    o.attention = *parse_attention(rec.value("attention", "sdpa"));
    if (rec["optimizer"].is_string()) o.optimizer = *parse_optimizer(rec["optimizer"].get<std::string>());
    o.batch = rec["batch"], o.seq = rec["seq"], o.grad_checkpointing = rec["grad_checkpointing"];
    if (rec.contains("lora")) {
      o.lora_targets = rec["lora"]["targets"].get<std::vector<std::string>>();
      o.lora_rank = rec["lora"].value("r", 16);
    }
    o.logits_last_only = rec.value("logits", "") == "last";
    const std::string model = rec["model"];
    auto m = parse_config_json(vramdoc::test::file_text(config_dir + "/" + model + ".json"), model);
    EXPECT_TRUE(m.ok()) << model;
    auto e = estimate(m.ok() ? *m : ModelConfig{}, o);
    EXPECT_TRUE(e.ok()) << line.substr(0, 200);
    if (!m.ok() || !e.ok()) continue;
    out.push_back({line.substr(0, 200), rec["peak_allocated"].get<double>() + static_cast<double>(warm),
                   rec["peak_reserved"].get<double>(), rec["driver_process_used"].get<double>(), *e});
  }
  return out;
}

}  // namespace

// Every calibration case within 5 % (the judged target is a 3 % median and 8 % p95).
TEST(Estimator, CalibrationCasesWithinFivePercent) {
  const auto cases = measured_cases(shared("pytorch-h200-calibration.jsonl"), shared("configs"));
  ASSERT_FALSE(cases.empty()) << "the calibration set is missing: " << shared("pytorch-h200-calibration.jsonl");
  for (const auto& c : cases) EXPECT_LT(rel(c.estimate.peak_allocated_bytes, c.allocated), 0.05) << c.line;
  EXPECT_GE(cases.size(), 40U);
}

// Reserved and process memory of the calibration cases from the allocator replay: medians within
// 2 %; every case within 30 % (the checkpointed batch-8 cases reach +27 %: docs/estimator.md).
TEST(Estimator, CalibrationReservedAndProcessWithinBounds) {
  const auto cases = measured_cases(shared("pytorch-h200-calibration.jsonl"), shared("configs"));
  ASSERT_FALSE(cases.empty()) << "the calibration set is missing: " << shared("pytorch-h200-calibration.jsonl");
  std::vector<double> reserved, process;
  for (const auto& c : cases) {
    reserved.push_back(rel(c.estimate.peak_reserved_bytes, c.reserved));
    process.push_back(rel(c.estimate.process_bytes, c.process));
    EXPECT_LT(reserved.back(), 0.30) << c.line;
    EXPECT_LT(process.back(), 0.30) << c.line;
  }
  EXPECT_LT(quantile(reserved, 0.5), 0.02);
  EXPECT_LT(quantile(process, 0.5), 0.02);
}

// The extra set (other architectures and modes; never fitted on). It was measured in one process
// after a cuBLAS warm-up, so its workspaces sat in their own segments before each case; the
// estimate is for a fresh process, whose workspaces land inside the step's segments (the traces
// of the families set show where): process median within 10 %, p95 within 25 %.
TEST(Estimator, ExtraSetProcessMeetsTheHeldOutTarget) {
  const std::string jsonl = std::string(VRAMDOC_SOURCE_DIR) + "/tests/data/estimator/pytorch-h200-extra.jsonl";
  const auto cases = measured_cases(jsonl, jsonl + ".configs");
  ASSERT_GE(cases.size(), 20U);
  std::vector<double> process;
  for (const auto& c : cases) process.push_back(rel(c.estimate.process_bytes, c.process));
  EXPECT_LT(quantile(process, 0.5), 0.10);
  EXPECT_LT(quantile(process, 0.95), 0.25);
}

// Reserved memory is the allocator replay's peak: never below the peak allocated; the difference
// is reported as the allocator's cache, in training too.
TEST(Estimator, ReservedIsTheAllocatorReplayAboveAllocated) {
  auto m = config_file("llama-160m");
  for (Mode mode : {Mode::Infer, Mode::Train, Mode::Lora}) {
    Options o;
    o.mode = mode;
    o.batch = 16, o.seq = 2048;
    const auto e = *estimate(m, o);
    EXPECT_GE(e.peak_reserved_bytes, e.peak_allocated_bytes);
    EXPECT_EQ(e.cached_bytes, e.peak_reserved_bytes - e.peak_allocated_bytes);
    EXPECT_EQ(e.peak_reserved_bytes % (2 * vramdoc::MiB), 0U);
  }
}

TEST(Estimator, SegmentSizesFollowTheCachingAllocator) {
  EXPECT_EQ(segment_bytes(512), 2 * vramdoc::MiB);
  EXPECT_EQ(segment_bytes(1 * vramdoc::MiB), 2 * vramdoc::MiB);
  EXPECT_EQ(segment_bytes(1 * vramdoc::MiB + 1), 20 * vramdoc::MiB);
  EXPECT_EQ(segment_bytes(10 * vramdoc::MiB), 10 * vramdoc::MiB);
  EXPECT_EQ(segment_bytes(10 * vramdoc::MiB + 1), 12 * vramdoc::MiB);
}

TEST(Estimator, MemoryNeverFallsAsBatchOrSequenceGrows) {
  for (const auto& p : presets()) {
    auto m = *preset_config(p.name);
    for (Mode mode : {Mode::Train, Mode::Lora, Mode::Infer}) {
      Options o;
      o.mode = mode;
      std::uint64_t last = 0;
      for (std::uint64_t b : {1, 2, 3, 8, 33}) {
        o.batch = b;
        const std::uint64_t now = peak(m, o);
        EXPECT_GE(now, last) << p.name << " batch " << b;
        last = now;
      }
      o.batch = 1, last = 0;
      for (std::uint64_t s : {16, 512, 1000, 4096, 9000}) {
        o.seq = s;
        const std::uint64_t now = peak(m, o);
        EXPECT_GE(now, last) << p.name << " seq " << s;
        last = now;
      }
    }
  }
}

TEST(Estimator, CheaperConfigurationsCostLess) {
  auto m = *preset_config("llama-3-8b");
  Options full;
  full.batch = 4, full.seq = 2048;
  Options ck = full, lora = full, infer = full, zero3 = full, tp = full;
  ck.grad_checkpointing = true;
  lora.mode = Mode::Lora;
  infer.mode = Mode::Infer;
  zero3.gpus = 8, zero3.zero_stage = 3, zero3.batch = 1, zero3.seq = 256;  // states dominate here
  tp.gpus = tp.tensor_parallel = 4;
  const auto base = peak(m, full);
  EXPECT_LT(peak(m, ck), base);
  EXPECT_LT(peak(m, lora), base);
  EXPECT_LT(peak(m, infer), peak(m, lora));
  Options unsharded = zero3;
  unsharded.zero_stage = 0;
  EXPECT_LT(peak(m, zero3), peak(m, unsharded) / 3);  // DeepSpeed keeps fp32 master weights and state
  EXPECT_LT(peak(m, tp), base);
  EXPECT_GT(estimate(m, full)->checkpointing_saves_bytes, base - peak(m, ck) - 1);
}

TEST(Estimator, KvCacheFollowsGqaDtypeAndSlidingWindowPrefillKeepsAll) {
  auto m = *preset_config("mistral-7b");
  Options o;
  o.mode = Mode::Infer, o.batch = 1, o.seq = 4096, o.logits_last_only = true;
  auto kv = [&](const Options& opt) { return estimate(m, opt)->phases[0].terms[1].bytes; };
  // 32 layers x 4096 tokens x 8 kv heads x 128 x (k + v) x 2 bytes = 512 MiB
  EXPECT_EQ(kv(o), 32ULL * 4096 * 8 * 128 * 2 * 2);
  Options longer = o;
  longer.seq = 16384;  // beyond the 4096 window the prefill still holds every position (a view)
  EXPECT_EQ(kv(longer), 4 * kv(o));
  Options fp8 = o;
  fp8.kv_bytes_per_element = 1;
  EXPECT_EQ(kv(fp8) * 2, kv(o));
}

TEST(Estimator, AbsurdBatchIsAClearErrorNotAWrap) {
  auto m = *preset_config("llama-3-70b");
  Options o;
  o.batch = 1'000'000'000'000ULL, o.seq = 1'000'000;
  auto e = estimate(m, o);
  ASSERT_FALSE(e.ok());
  EXPECT_NE(e.error().find("absurdly large"), std::string::npos);
  o.batch = 1'000'000;  // large but representable: a correct, huge number
  o.seq = 1024;
  auto big = estimate(m, o);
  ASSERT_TRUE(big.ok());
  EXPECT_GT(big->peak_allocated_bytes, 1'000'000ULL * 1024 * 8192 * 2 * 80);
}

TEST(Estimator, MaxBatchFitsAndTheNextDoesNot) {
  auto m = *preset_config("llama-3-8b");
  Options o;
  o.mode = Mode::Lora, o.seq = 2048;
  const std::uint64_t usable = find_gpu("A100 80GB")->usable_bytes;
  auto r = max_batch(m, o, usable);
  ASSERT_TRUE(r.ok());
  ASSERT_GT(r->value, 0U);
  o.batch = r->value;
  EXPECT_TRUE(fits(*estimate(m, o), usable));
  o.batch = r->value + 1;
  EXPECT_FALSE(fits(*estimate(m, o), usable));
  EXPECT_EQ(max_batch(m, o, 1ULL << 30)->value, 0U);  // 1 GiB: nothing fits, and it says so
}

TEST(Estimator, JsonCarriesTheContractFieldsAndTheBreakdownAddsUp) {
  auto m = config_file("llama-160m");
  Options o;
  o.batch = 8;
  auto e = *estimate(m, o);
  auto j = nlohmann::json::parse(render_json(m, o, e, {}));
  for (const char* key : {"peak_allocated_bytes", "peak_reserved_bytes", "process_bytes"}) {
    ASSERT_TRUE(j[key].is_number_unsigned()) << key;
  }
  std::uint64_t sum = 0;
  for (const auto& [k, v] : j["breakdown"].items()) sum += v.get<std::uint64_t>();
  EXPECT_EQ(sum, j["process_bytes"].get<std::uint64_t>());
  EXPECT_EQ(j["peak_phase"], "backward start (loss gradient)");
}

TEST(Estimator, TextMarksTheBiggestTerm) {
  auto m = *preset_config("llama-2-7b");
  Options o;
  o.mode = Mode::Lora, o.batch = 8, o.seq = 4096;
  auto text = render_text(m, o, *estimate(m, o), {});
  EXPECT_NE(text.find("<- biggest"), std::string::npos);
  EXPECT_EQ(text.find("advice:"), std::string::npos);  // remedies are computed (test_estimator_remedies.cpp), not canned
}
