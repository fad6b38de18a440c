// The H200 recordings of issue 15 (tests/data/timelines/issue15_*, scripts/gpu/record_diagnosis.sh,
// recorded with `vramdoc run` of main on 2026-11-30): their verdicts pinned, whole, reduced to
// what `run` sees from outside (no marks), and with the step-end bytes the jobs wrote into their
// step marks ("step N allocated=BYTES reserved=BYTES").
#include <gtest/gtest.h>

#include <fstream>
#include <regex>

#include "core/timeline/classify.hpp"
#include "core/timeline/quantify.hpp"
#include "core/timeline/reader.hpp"
#include "core/trace/analysis.hpp"
#include "core/trace/overlay.hpp"
#include "core/trace/reader.hpp"
#include "test_timeline_synth.hpp"
#include "test_files.hpp"

namespace vramdoc::timeline {
namespace {

constexpr double GiB = 1073741824.0;

Timeline load(const std::string& name) {
  auto tl = read_timeline(vramdoc::test::file_text(std::string(VRAMDOC_SOURCE_DIR) + "/tests/data/timelines/issue15_" + name + ".jsonl"), name);
  EXPECT_TRUE(tl.ok()) << (tl.ok() ? "" : tl.error());
  return tl.ok() ? *tl : Timeline{};
}

// The jobs wrote torch.cuda.memory_allocated() (JAX: bytes_in_use) into each step mark's label.
Timeline with_step_end_bytes(Timeline tl) {
  static const std::regex kAllocated(R"(allocated=([0-9]+) reserved=([0-9]+))");
  for (auto& m : tl.marks) {
    std::smatch g;
    if (std::regex_search(m.label, g, kAllocated)) m.allocated_bytes = std::stoull(g[1]), m.reserved_bytes = std::stoull(g[2]);
  }
  return tl;
}

std::string verdict(const Timeline& tl) { return verdict_name(classify(tl).verdict); }

bool claims_new_shapes(const Diagnosis& d) {
  for (const auto& r : d.reasons)
    if (r.find("new, larger input shapes") != std::string::npos) return true;
  return false;
}

// Point 1: the periodic evaluation leak, recorded three times: the same verdict every time.
TEST(Recorded15, PeriodicEvalLeakIsALeakInAllThreeRecordings) {
  for (const char* name : {"periodic_eval_1", "periodic_eval_2", "periodic_eval_3"}) {
    const Timeline tl = load(name);
    for (const Timeline& view : {tl, test::reduce(tl), with_step_end_bytes(tl)}) {
      const auto d = classify(view);
      EXPECT_EQ(d.verdict, Verdict::Leak) << name;
      EXPECT_FALSE(claims_new_shapes(d)) << name;
    }
    const auto d = classify(test::reduce(tl));
    EXPECT_EQ(d.rule, "regular rises") << name;
    ASSERT_TRUE(d.evidence.spacing && d.evidence.spacing->period) << name;
    EXPECT_NEAR(*d.evidence.spacing->period, 0.38, 0.05) << name;  // an evaluation every 5 steps of 76 ms
  }
}

TEST(Recorded15, EvalSpikeAndSlowLeak) {
  const Timeline spike = load("eval_spike");
  EXPECT_NE(verdict(spike), "leak");
  EXPECT_NE(verdict(test::reduce(spike)), "leak");
  EXPECT_EQ(verdict(with_step_end_bytes(spike)), "plateau");
  const Timeline slow = load("slow_leak");  // 2 MiB a step inside the cache's slack: invisible from outside
  EXPECT_EQ(verdict(slow), "leak");  // issue 32: the marks' allocated= are read (it was "stable")
  EXPECT_EQ(verdict(test::reduce(slow)), "stable");
  EXPECT_EQ(verdict(with_step_end_bytes(slow)), "leak");
}

// Point 4: JAX's default pool hid a 64 MiB-a-step leak ("stable ... no leak" before).
TEST(Recorded15, JaxPreallocationIsNamed) {
  const Timeline pool = load("jax_prealloc");
  EXPECT_EQ(verdict(pool), "leak");  // issue 32: as read, its marks' bytes_in_use decide
  EXPECT_TRUE(classify(pool).evidence.preallocation.has_value());
  for (const Timeline& view : {test::reduce(pool)}) {  // from outside: the pool hides the job
    const auto d = classify(view);
    EXPECT_EQ(d.verdict, Verdict::Inconclusive);
    ASSERT_TRUE(d.evidence.preallocation);
    EXPECT_EQ(d.evidence.preallocation->framework, "JAX/XLA");
    EXPECT_NEAR(d.evidence.preallocation->fraction, 0.75, 0.01);
    EXPECT_NE(d.to_settle.find("XLA_PYTHON_CLIENT_PREALLOCATE=false"), std::string::npos);
  }
  EXPECT_EQ(verdict(with_step_end_bytes(pool)), "leak");
  // Without preallocation XLA's pool grows in doubling regions: no plateau is claimed from them.
  const Timeline growing = load("jax_noprealloc");
  EXPECT_EQ(classify(growing).rule, "step-end bytes grow");  // issue 32: as read, its marks' bytes_in_use decide
  EXPECT_EQ(classify(test::reduce(growing)).rule, "framework pool grows");
  EXPECT_EQ(verdict(with_step_end_bytes(growing)), "leak");
  EXPECT_EQ(verdict(load("jax_platform")), "leak");  // every buffer its own allocation: the driver sees the leak
  // With the platform allocator JAX's memory_stats() counts nothing (allocated=0 at every step end,
  // seen on the H200): zeros are no step-end bytes, so the driver's leak still decides.
  EXPECT_EQ(verdict(with_step_end_bytes(load("jax_platform"))), "leak");
}

// Point 3: the 0.4 s program leaking 40 allocations (70 MiB): inconclusive alone, a leak with its
// trace (the tracer's "alive at exit"), never "nothing leaks".
TEST(Recorded15, ShortLeakingProgramAgreesWithItsTrace) {
  EXPECT_EQ(classify(load("short_leak")).rule, "too short");
  const Timeline tl = load("short_leak_trace");
  EXPECT_EQ(verdict(tl), "inconclusive");
  auto t = trace::read_trace_file(std::string(VRAMDOC_SOURCE_DIR) + "/tests/data/traces/issue15_short_leak/trace.4100.vdt");
  ASSERT_TRUE(t.ok()) << t.error();
  trace::ProcessTrace p{"trace.vdt", t->pid, t->truncated, trace::uses_pytorch(*t), trace::analyze_trace(*t), {}, t->start_unix_ns, {}};
  const auto e = trace_evidence(trace::build_overlay({p}, tl));
  EXPECT_EQ(e.alive_at_exit_count, 40U);
  EXPECT_NEAR(double(e.alive_at_exit_bytes) / 1048576.0, 70.0, 0.01);
  const auto d = classify(tl, e);
  EXPECT_EQ(d.verdict, Verdict::Leak);
  EXPECT_EQ(d.summary.find("Nothing leaks"), std::string::npos);
}

// Point 6: a Llama job needing about 206 GiB on a 140 GiB card. Measured: its peak reserved bytes
// at batch 8..64 (tests/data/insufficient/h200_llama_need.jsonl), extrapolated to batch 128.
TEST(Recorded15, InsufficientJobIsToldWhatItNeeds) {
  const Timeline tl = load("insufficient");
  auto d = classify(tl);
  ASSERT_EQ(d.verdict, Verdict::Insufficient);
  ASSERT_TRUE(d.evidence.need);
  EXPECT_TRUE(d.evidence.need->at_least);
  EXPECT_GE(double(d.evidence.need->bytes), 139.0 * GiB);  // more than the card: all that is known without --config
  EXPECT_EQ(d.summary.find("1.40 GiB more"), std::string::npos);
  // The truth: a line through the measured peaks, at batch 128, plus the context.
  std::ifstream in(std::string(VRAMDOC_SOURCE_DIR) + "/tests/data/insufficient/h200_llama_need.jsonl");
  std::vector<std::pair<double, double>> peaks;
  for (std::string line; std::getline(in, line);) {
    static const std::regex kRow(R"("batch": ([0-9]+).*"max_reserved": ([0-9]+))");
    std::smatch g;
    if (std::regex_search(line, g, kRow)) peaks.emplace_back(std::stod(g[1]), std::stod(g[2]));
  }
  ASSERT_EQ(peaks.size(), 4U);
  const double slope = (peaks[3].second - peaks[0].second) / (peaks[3].first - peaks[0].first);
  const double truth = peaks[3].second + slope * (128 - peaks[3].first) + 0.5 * GiB;
  const auto model = estimator::parse_config_json(vramdoc::test::file_text(std::string(VRAMDOC_SOURCE_DIR) + "/tests/gpu/diagnosis_llama.json"), "llama");
  ASSERT_TRUE(model.ok()) << model.error();
  estimator::Options job;
  job.batch = 128, job.seq = 2048;
  auto q = quantify(tl, d, *model, job);
  ASSERT_TRUE(q.ok()) << q.error();
  d.quantified = *q;
  apply_quantified(d);
  ASSERT_TRUE(d.evidence.need);
  EXPECT_FALSE(d.evidence.need->at_least);
  EXPECT_NEAR(double(d.evidence.need->bytes) / truth, 1.0, 0.05) << double(d.evidence.need->bytes) / GiB << " GiB vs " << truth / GiB;
  EXPECT_FALSE(d.quantified->fitting_remedy.empty());
  EXPECT_NE(d.summary.find("Under the card: "), std::string::npos) << d.summary;
}

}  // namespace
}  // namespace vramdoc::timeline
