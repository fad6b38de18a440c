// The remedies estimate, run and analyze show (issue 32, item 1): each one evaluated for the job
// with the estimator, checked here against the estimate it came from; ranked by what it costs the
// user; never one that does not apply to the job.
#include <gtest/gtest.h>

#include "core/estimator/answer.hpp"
#include "core/estimator/cards.hpp"
#include "core/estimator/fit.hpp"
#include "core/estimator/presets.hpp"
#include "core/estimator/remedies.hpp"

namespace vramdoc::estimator {
namespace {

struct Job {
  std::string preset;
  Options options;
  RemedyRequest request;
};

Options make(Mode mode, Precision precision, std::uint64_t batch, std::uint64_t seq) {
  Options o;
  o.mode = mode, o.precision = precision, o.batch = batch, o.seq = seq;
  return o;
}

std::uint64_t card(const char* name) { return find_gpu(name)->usable_bytes; }

// Jobs that do not fit (or ask for the largest batch), trained and run, at batch 1 and above.
std::vector<Job> jobs() {
  return {
      {"llama-3-8b", make(Mode::Lora, Precision::Bf16, 1, 1024), {card("RTX 4090"), true}},    // the README's example
      {"llama-2-7b", make(Mode::Train, Precision::Bf16, 1, 1024), {card("RTX 3060 12GB"), false}},
      {"llama-2-7b", make(Mode::Lora, Precision::Bf16, 8, 4096), {card("RTX 4090"), false}},
      {"llama-2-7b", make(Mode::Train, Precision::Fp32, 4, 2048), {card("A100 80GB"), false}},
      {"llama-2-7b", make(Mode::Infer, Precision::Bf16, 16, 4096), {card("RTX 4090"), false}},
      {"llama-2-13b", make(Mode::Infer, Precision::Fp32, 1, 2048), {card("RTX 4090"), false}},
      {"llama-2-7b", make(Mode::Lora, Precision::Bf16, 2, 2048), {std::nullopt, false}},
  };
}

std::vector<Remedy> remedies_of(const Job& job) {
  auto m = preset_config(job.preset);
  EXPECT_TRUE(m.ok());
  auto r = remedies(*m, job.options, job.request);
  EXPECT_TRUE(r.ok()) << (r.ok() ? "" : r.error());
  return r.ok() ? *r : std::vector<Remedy>{};
}

TEST(Remedies, EveryOneAgreesWithTheEstimateItCameFrom) {
  for (const auto& job : jobs()) {
    const ModelConfig m = *preset_config(job.preset);
    const Estimate base = *estimate(m, job.options);
    const auto list = remedies_of(job);
    EXPECT_FALSE(list.empty()) << job.preset;
    for (const auto& r : list) {
      SCOPED_TRACE(job.preset + ": " + r.option);
      const Estimate e = *estimate(m, r.options);
      EXPECT_EQ(r.process_bytes, e.process_bytes);
      EXPECT_EQ(r.saving_bytes, static_cast<std::int64_t>(base.process_bytes) - static_cast<std::int64_t>(e.process_bytes));
      const std::uint64_t usable = r.card.empty() ? job.request.usable_bytes.value_or(0) : r.card_bytes;
      if (!job.request.usable_bytes) {
        EXPECT_FALSE(r.fits.has_value());
        EXPECT_GT(r.saving_bytes, 0);
        continue;
      }
      ASSERT_TRUE(r.fits.has_value());
      if (!job.request.max_batch) { EXPECT_EQ(*r.fits, fits(e, usable)); }
      if (!r.batch) continue;
      Options at = r.options;
      at.batch = *r.batch;
      if (*r.batch > 0) {
        const Estimate e_at = *estimate(m, at);
        EXPECT_TRUE(fits(e_at, usable));
        EXPECT_EQ(r.batch_process_bytes, e_at.process_bytes);
      }
      if (job.request.max_batch) {  // the largest: one more does not fit
        at.batch = *r.batch + 1;
        EXPECT_FALSE(fits(*estimate(m, at), usable));
      } else {  // a micro-batch that keeps the effective batch
        EXPECT_EQ(*r.batch * r.accumulation_steps, job.options.batch);
      }
    }
  }
}

TEST(Remedies, RankedByWhatTheyCost) {
  for (const auto& job : jobs()) {
    const auto list = remedies_of(job);
    for (std::size_t i = 1; i < list.size(); ++i) EXPECT_LE(list[i - 1].cost, list[i].cost) << job.preset << ": " << list[i].option;
  }
}

TEST(Remedies, NoneThatDoesNotApply) {
  for (const auto& job : jobs()) {
    const Options& o = job.options;
    for (const auto& r : remedies_of(job)) {
      SCOPED_TRACE(job.preset + ": " + r.option);
      if (o.mode == Mode::Infer) {  // no ZeRO, no training remedies for inference
        EXPECT_EQ(r.options.gpus, o.gpus);
        EXPECT_EQ(r.options.zero_stage, 0);
        EXPECT_EQ(r.options.mode, Mode::Infer);
        EXPECT_FALSE(r.options.grad_checkpointing);
      }
      if (o.batch == 1) { EXPECT_EQ(r.options.batch, 1u); }          // no "halve the batch" at batch 1
      if (o.precision == Precision::Bf16) { EXPECT_EQ(r.options.precision, Precision::Bf16); }  // no bf16 advice to a bf16 job
      if (job.request.max_batch) { EXPECT_EQ(r.options.batch, o.batch); }  // the batch is the question
    }
  }
}

// The README's example: llama-3-8b LoRA on an RTX 4090 fits no batch, but checkpointing (batch 2) and QLoRA (batch 1) do.
TEST(Remedies, Issue32LoraOn4090NamesCheckpointingAndQlora) {
  const auto list = remedies_of(jobs()[0]);
  auto find = [&](const std::string& option) -> const Remedy* {
    for (const auto& r : list)
      if (r.option == option) return &r;
    return nullptr;
  };
  const Remedy* checkpointing = find("--grad-checkpointing");
  const Remedy* qlora = find("--mode qlora");
  ASSERT_NE(checkpointing, nullptr);
  ASSERT_NE(qlora, nullptr);
  EXPECT_GT(checkpointing->batch.value_or(0), 0u);
  EXPECT_GT(qlora->batch.value_or(0), 0u);
  EXPECT_LT(checkpointing->cost, qlora->cost);
}

TEST(Remedies, AJobThatFitsNeedsNone) {
  auto m = *preset_config("llama-2-7b");
  auto list = remedies(m, make(Mode::Lora, Precision::Bf16, 1, 1024), {card("H200"), false});
  ASSERT_TRUE(list.ok());
  EXPECT_TRUE(list->empty());
}

TEST(Remedies, TheMicroBatchIsADivisorThatFits) {
  auto m = *preset_config("llama-2-7b");
  const Options job = make(Mode::Lora, Precision::Bf16, 12, 4096);
  auto list = remedies(m, job, {card("RTX 4090"), false});
  ASSERT_TRUE(list.ok());
  ASSERT_FALSE(list->empty());
  const Remedy& first = list->front();
  ASSERT_EQ(first.cost, 1);
  EXPECT_EQ(job.batch % first.options.batch, 0u);
  EXPECT_EQ(first.options.batch * first.accumulation_steps, job.batch);
}

}  // namespace
}  // namespace vramdoc::estimator
