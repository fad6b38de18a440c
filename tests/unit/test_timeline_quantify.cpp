// The remedies quantified with the estimator: on the recorded insufficient timeline (an H200,
// batch 1024 x seq 4096 of a small Llama) and on hand-made diagnoses (leak, unknown capacity).
#include <gtest/gtest.h>

#include <cmath>

#include "core/estimator/fit.hpp"
#include "core/estimator/remedies.hpp"
#include "core/timeline/classify.hpp"
#include "core/timeline/quantify.hpp"
#include "core/timeline/reader.hpp"
#include "core/units.hpp"
#include "test_files.hpp"

namespace vramdoc::timeline {
namespace {

namespace est = vramdoc::estimator;

est::ModelConfig small_llama() {
  const std::string path = std::string(VRAMDOC_SOURCE_DIR) + "/tests/cli/data/llama_h1024_l8.json";
  auto m = est::parse_config_json(vramdoc::test::file_text(path), path);
  EXPECT_TRUE(m.ok()) << (m.ok() ? "" : m.error());
  return m.ok() ? *m : est::ModelConfig{};
}

est::Options job_1024x4096() {
  est::Options o;  // train, bf16 weights/grads, AdamW: the recorded job
  o.batch = 1024, o.seq = 4096;
  return o;
}

const QuantifiedRemedy* find(const Quantified& q, const std::string& name) {
  for (const auto& r : q.remedies)
    if (r.name == name) return &r;
  return nullptr;
}

struct RecordedInsufficient : ::testing::Test {
  void SetUp() override {
    const std::string path = std::string(VRAMDOC_TEST_DATA_DIR) + "/timelines/oom_insufficient.json";
    auto read = read_timeline(vramdoc::test::file_text(path), path);
    ASSERT_TRUE(read.ok()) << read.error();
    tl = *read;
    d = classify(tl);
    ASSERT_EQ(d.verdict, Verdict::Insufficient);
    auto r = quantify(tl, d, small_llama(), job_1024x4096());
    ASSERT_TRUE(r.ok()) << r.error();
    q = *r;
  }
  Timeline tl;
  Diagnosis d;
  Quantified q;
};

TEST_F(RecordedInsufficient, TheJobNeedsMoreThanTheCard) {
  ASSERT_TRUE(q.capacity_bytes.has_value());
  EXPECT_EQ(*q.capacity_bytes, *tl.total_bytes);
  EXPECT_EQ(q.capacity_source, "timeline");
  EXPECT_GT(q.estimated_bytes, *q.capacity_bytes);
  EXPECT_EQ(q.fits, std::optional<bool>(false));
  EXPECT_EQ(q.measured_bytes, std::optional<std::uint64_t>(d.evidence.peak_bytes));
}

// Reserved memory comes from the allocator replay: at 4M tokens a step the 8-bit optimizer's
// smaller state fits into the activations' holes either way, so its row may save nothing (and is
// then left out: core/estimator/remedies.cpp lists only what saves memory).
TEST_F(RecordedInsufficient, EveryRemedySavesMemory) {
  for (const char* name : {"gradient checkpointing", "smaller micro-batch, same effective batch", "LoRA adapters", "shorter sequence"}) {
    const auto* r = find(q, name);
    ASSERT_NE(r, nullptr) << name;
    EXPECT_GT(r->saving_bytes, 0) << name;
  }
  for (const auto& r : q.remedies)  // a remedy that saves nothing is not listed (the 8-bit optimizer's state may hide in the holes)
    EXPECT_EQ(static_cast<std::int64_t>(q.estimated_bytes) - r.saving_bytes, static_cast<std::int64_t>(r.process_bytes)) << r.name;
  EXPECT_EQ(find(q, "bf16 mixed precision"), nullptr);  // already bf16: nothing to change
}

TEST_F(RecordedInsufficient, CheckpointingSavesTheActivations) {
  auto base = est::estimate(small_llama(), job_1024x4096());
  ASSERT_TRUE(base.ok());
  ASSERT_NE(find(q, "gradient checkpointing"), nullptr);
  // The row runs at the micro-batch that fits (the job does not fit even checkpointed); the
  // estimator's own remedy keeps the job's batch: its saving is checkpointing's alone.
  auto list = est::remedies(small_llama(), job_1024x4096(), {q.capacity_bytes, false, true});
  ASSERT_TRUE(list.ok());
  const est::Remedy* r = nullptr;
  for (const auto& x : *list)
    if (x.option == "--grad-checkpointing") r = &x;
  ASSERT_NE(r, nullptr);
  EXPECT_GT(base->checkpointing_saves_bytes, 0u);
  // The row's saving (whole process) follows the estimator's own figure for the activations
  // checkpointing drops (allocated), give or take the allocator's share (the replay's cache can
  // grow or shrink); at 4M tokens a step the saved activations are a large share of the process.
  const auto saving = static_cast<std::uint64_t>(r->saving_bytes);
  EXPECT_GE(saving, base->checkpointing_saves_bytes / 5 * 4);
  EXPECT_LE(saving, base->checkpointing_saves_bytes / 4 * 5);
  EXPECT_GT(saving, q.estimated_bytes / 4);
}

TEST_F(RecordedInsufficient, LoraNeedsLessThanFullTraining) {
  const auto* lora = find(q, "LoRA adapters");
  ASSERT_NE(lora, nullptr);
  EXPECT_LT(lora->process_bytes, q.estimated_bytes);
}

TEST_F(RecordedInsufficient, FitsFlagsAgreeWithTheCapacity) {
  const std::uint64_t cap = *q.capacity_bytes;
  for (const auto& r : q.remedies) {
    ASSERT_TRUE(r.fits.has_value()) << r.name;
    const std::uint64_t with_margin = r.process_bytes + r.process_bytes / 100 * est::kFitMarginPercent;
    EXPECT_EQ(*r.fits, with_margin <= cap) << r.name;
    if (*r.fits) {
      EXPECT_LT(r.process_bytes, cap) << r.name;
    }
  }
}

TEST_F(RecordedInsufficient, LargestBatchFitsAndOneMoreDoesNot) {
  ASSERT_TRUE(q.max_batch.has_value());
  ASSERT_GT(*q.max_batch, 0u);
  EXPECT_LT(*q.max_batch, 1024u);
  auto o = job_1024x4096();
  o.batch = *q.max_batch;
  auto at = est::estimate(small_llama(), o);
  o.batch += 1;
  auto above = est::estimate(small_llama(), o);
  ASSERT_TRUE(at.ok() && above.ok());
  EXPECT_TRUE(est::fits(*at, *q.capacity_bytes));
  EXPECT_FALSE(est::fits(*above, *q.capacity_bytes));
}

TEST_F(RecordedInsufficient, RenderedInTextAndJson) {
  d.quantified = q;
  const std::string text = render_quantified_text(q);
  EXPECT_NE(text.find("estimated "), std::string::npos);
  EXPECT_NE(text.find(", measured "), std::string::npos);
  EXPECT_NE(text.find("largest batch that fits: " + std::to_string(*q.max_batch)), std::string::npos);
  auto j = remedies_quantified_json(q);
  ASSERT_EQ(j.size(), q.remedies.size());
  for (const auto& r : j) {
    EXPECT_TRUE(r.contains("name") && r.contains("process_bytes") && r.contains("saving_bytes") && r.contains("fits"));
  }
}

TEST(Quantify, LeakGivesTheStepsLeftAndNoSizeRemedies) {
  Timeline tl;
  tl.total_bytes = 80 * GiB;
  Diagnosis d;
  d.verdict = Verdict::Leak;
  d.evidence.growth_bytes_per_step = double(64 * MiB);
  est::Options o;
  o.batch = 4, o.seq = 1024;
  auto q = quantify(tl, d, small_llama(), o);
  ASSERT_TRUE(q.ok()) << q.error();
  EXPECT_TRUE(q->remedies.empty());
  ASSERT_TRUE(q->leak_steps_left.has_value());
  const double want = std::floor((double(80 * GiB) - double(q->estimated_bytes)) / double(64 * MiB));
  EXPECT_DOUBLE_EQ(*q->leak_steps_left, want);
}

TEST(Quantify, UnknownCapacityIsNotAFit) {
  Timeline tl;  // no total, no device
  Diagnosis d;
  d.verdict = Verdict::Stable;
  auto q = quantify(tl, d, small_llama(), job_1024x4096());
  ASSERT_TRUE(q.ok()) << q.error();
  EXPECT_FALSE(q->capacity_bytes.has_value());
  EXPECT_FALSE(q->fits.has_value());
  EXPECT_FALSE(q->measured_bytes.has_value());  // nothing sampled: unknown, not 0
  for (const auto& r : q->remedies) EXPECT_FALSE(r.fits.has_value()) << r.name;
  EXPECT_NE(render_quantified_text(*q).find("n/a"), std::string::npos);
}

TEST(Quantify, CapacityFromTheCardTableWhenTheTimelineHasNone) {
  Timeline tl;
  tl.device = "NVIDIA H200";
  Diagnosis d;
  std::string source;
  auto cap = capacity_for(tl, d, source);
  ASSERT_TRUE(cap.has_value());
  EXPECT_EQ(*cap, est::find_gpu("H200")->usable_bytes);
  EXPECT_EQ(source, "card table: H200");
}

TEST(Quantify, Fp32JobGetsMixedPrecisionAndItSaves) {
  Timeline tl;
  tl.total_bytes = 80 * GiB;
  Diagnosis d;
  d.verdict = Verdict::Plateau;
  est::Options o;
  o.precision = est::Precision::Fp32, o.batch = 8, o.seq = 2048;
  auto q = quantify(tl, d, small_llama(), o);
  ASSERT_TRUE(q.ok()) << q.error();
  const auto* r = find(*q, "bf16 mixed precision");
  ASSERT_NE(r, nullptr);
  EXPECT_GT(r->saving_bytes, 0);
}

}  // namespace
}  // namespace vramdoc::timeline
