// The classifier on real recordings (shared/data/timelines, tests/data/timelines), whole and
// reduced to what `run` sees from outside (t + process_used, no marks), and on synthetic kinds.
#include <gtest/gtest.h>

#include <set>

#include "core/timeline/classify.hpp"
#include "core/timeline/reader.hpp"
#include "test_files.hpp"
#include "test_timeline_synth.hpp"

namespace vramdoc::timeline {
namespace {

using test::Kind;
using Verdicts = std::set<std::string>;

Timeline load(const std::string& path) {
  const std::string text = vramdoc::test::file_text(path);
  auto tl = read_timeline(text, path);
  EXPECT_TRUE(tl.ok()) << (tl.ok() ? "" : tl.error());
  return tl.ok() ? *tl : Timeline{};
}

// Without outcome, message and capacity either: only the two columns.
Timeline bare(const Timeline& tl) {
  Timeline r = test::reduce(tl);
  r.messages.clear();
  r.outcome = Outcome::Unknown;
  r.total_bytes.reset();
  return r;
}

std::string verdict(const Timeline& tl) { return verdict_name(classify(tl).verdict); }

struct Recorded {
  std::string path, whole, reduced;
};

TEST(TimelineVerdicts, RecordedTimelinesWholeAndReduced) {
  const std::string shared = std::string(VRAMDOC_TEST_DATA_DIR) + "/timelines/";
  const std::string ours = std::string(VRAMDOC_SOURCE_DIR) + "/tests/data/timelines/";
  const Recorded cases[] = {
      {shared + "stable.json", "stable", "stable"},
      {shared + "leak_tensor.json", "leak", "leak"},
      {shared + "oom_insufficient.json", "insufficient", "insufficient"},
      {ours + "trace_leak_to_oom.json", "leak", "leak"},
      {ours + "trace_leak_mid.json", "leak", "leak"},
      {ours + "trace_plateau_varseq_shared.json", "plateau", "plateau"},
      {ours + "trace_plateau_varseq.json", "plateau", "plateau"},
      {ours + "trace_batch_ramp_oom.json", "insufficient", "insufficient"},
      {ours + "trace_fragmentation.json", "fragmentation", "fragmentation"},
      {ours + "trace_leak_slow.json", "leak", "stable"},  // see SlowLeakInsideTheCache below
  };
  for (const auto& c : cases) {
    const Timeline tl = load(c.path);
    EXPECT_EQ(verdict(tl), c.whole) << c.path;
    EXPECT_EQ(verdict(test::reduce(tl)), c.reduced) << c.path << " reduced";
  }
}

// With no outcome, message or capacity the no-OOM recordings keep their verdicts, and the OOM
// ones are never called a leak they are not.
TEST(TimelineVerdicts, BareTwoColumnTimelines) {
  const std::string shared = std::string(VRAMDOC_TEST_DATA_DIR) + "/timelines/";
  const std::string ours = std::string(VRAMDOC_SOURCE_DIR) + "/tests/data/timelines/";
  EXPECT_EQ(verdict(bare(load(shared + "stable.json"))), "stable");
  EXPECT_EQ(verdict(bare(load(shared + "leak_tensor.json"))), "leak");
  EXPECT_EQ(verdict(bare(load(ours + "trace_plateau_varseq.json"))), "plateau");
  EXPECT_EQ(verdict(bare(load(ours + "trace_leak_to_oom.json"))), "leak");
  EXPECT_NE(verdict(bare(load(shared + "oom_insufficient.json"))), "leak");
  EXPECT_NE(verdict(bare(load(ours + "trace_batch_ramp_oom.json"))), "leak");
}

// A leak of 2 MiB per step that never outgrows the allocator's cache leaves the driver's number
// flat: from outside it is invisible and the honest verdict is "stable", with the caveat printed.
TEST(TimelineVerdicts, SlowLeakInsideTheCache) {
  const Timeline tl = load(std::string(VRAMDOC_SOURCE_DIR) + "/tests/data/timelines/trace_leak_slow.json");
  const auto d = classify(test::reduce(tl));
  EXPECT_EQ(d.verdict, Verdict::Stable);
  bool caveat = false;
  for (const auto& r : d.reasons) caveat |= r.find("hidden") != std::string::npos;
  EXPECT_TRUE(caveat);
}

TEST(TimelineVerdicts, OomEvidence) {
  const auto d = classify(load(std::string(VRAMDOC_TEST_DATA_DIR) + "/timelines/oom_insufficient.json"));
  ASSERT_TRUE(d.evidence.missing_bytes);
  EXPECT_NEAR(double(*d.evidence.missing_bytes) / 1073741824.0, 2.40, 0.01);
  ASSERT_TRUE(d.evidence.peak_fraction);
  EXPECT_GT(*d.evidence.peak_fraction, 0.9);
}

TEST(TimelineVerdicts, LeakRateAndProjection) {
  const auto d = classify(load(std::string(VRAMDOC_TEST_DATA_DIR) + "/timelines/leak_tensor.json"));
  ASSERT_TRUE(d.evidence.growth_bytes_per_step);
  EXPECT_NEAR(*d.evidence.growth_bytes_per_step / 1048576.0, 8.0, 0.5);  // the loop keeps 8 MiB per step
  ASSERT_TRUE(d.evidence.projected_oom_step);
  EXPECT_GT(*d.evidence.projected_oom_step, 120);
}

struct SynthCase {
  Kind kind;
  double leak_mib;
  Verdicts whole, reduced;
};

TEST(TimelineVerdicts, SyntheticKindsOverManySeeds) {
  const SynthCase cases[] = {
      {Kind::Stable, 0, {"stable"}, {"stable"}},
      {Kind::Plateau, 0, {"plateau", "stable"}, {"plateau", "stable"}},
      // 300 MiB in all: it stays inside the cache, or shows as one rise that alone cannot be told
      // from a new input shape. Whole (with the allocated bytes at step ends) it is always seen.
      {Kind::Leak, 2, {"leak"}, {"leak", "stable", "plateau"}},
      {Kind::Leak, 64, {"leak"}, {"leak"}},
      {Kind::Leak, 512, {"leak"}, {"leak"}},
      {Kind::LeakToOom, 1024, {"leak"}, {"leak"}},
      {Kind::Insufficient, 0, {"insufficient"}, {"insufficient"}},
      {Kind::BatchRamp, 0, {"insufficient"}, {"insufficient"}},
      {Kind::Fragmentation, 0, {"fragmentation"}, {"fragmentation"}},
  };
  for (const auto& c : cases) {
    for (unsigned seed = 1; seed <= 12; ++seed) {
      test::SynthParams p;
      p.kind = c.kind, p.seed = seed, p.leak_mib_per_step = c.leak_mib;
      const Timeline tl = test::synthesize(p);
      const std::string whole = verdict(tl), reduced = verdict(test::reduce(tl));
      EXPECT_TRUE(c.whole.count(whole)) << "kind " << int(c.kind) << " leak " << c.leak_mib << " seed " << seed << ": " << whole;
      EXPECT_TRUE(c.reduced.count(reduced)) << "kind " << int(c.kind) << " leak " << c.leak_mib << " seed " << seed << " reduced: " << reduced;
    }
  }
}

TEST(TimelineVerdicts, NoiseAloneIsNeverALeak) {
  for (unsigned seed = 1; seed <= 12; ++seed) {
    test::SynthParams p;
    p.kind = Kind::Stable, p.seed = seed, p.noise_mib = 20;
    EXPECT_NE(verdict(test::synthesize(p)), "leak") << seed;
    EXPECT_NE(verdict(test::reduce(test::synthesize(p))), "leak") << seed;
  }
}

TEST(TimelineVerdicts, TooShortIsInconclusive) {
  Timeline tl;
  tl.samples = {{0, 100, {}, {}, {}}, {0.02, 100, {}, {}, {}}};
  EXPECT_EQ(verdict(tl), "inconclusive");
  tl.samples.push_back({0.04, 5000000000, {}, {}, {}});
  EXPECT_EQ(verdict(tl), "inconclusive");
}

}  // namespace
}  // namespace vramdoc::timeline

namespace vramdoc::timeline {
namespace {

// Regression: in a container NVML lists host PIDs, so the job's own number stays 0; the device's
// number is judged instead, and the report says so.
TEST(TimelineVerdicts, JobNeverListedFallsBackToTheDevice) {
  Timeline tl;
  for (int i = 0; i < 400; ++i)
    tl.samples.push_back({i * 0.02, 0, std::uint64_t(4000000000ULL + (i > 20 ? 64ULL << 20 : 0) * std::uint64_t(i)), {}, {}});
  const auto d = classify(tl);
  EXPECT_EQ(d.verdict, Verdict::Leak);
  ASSERT_FALSE(d.reasons.empty());
  EXPECT_NE(d.reasons.front().find("PID namespace"), std::string::npos);
}

}  // namespace
}  // namespace vramdoc::timeline

namespace vramdoc::timeline {
namespace {

// Regression: a leak that fills the card fails on a small request with a few MiB of holes in the
// cache; that is the leak, not fragmentation. Large holes (2% of the card or more) are.
TEST(TimelineVerdicts, SmallHolesAtTheEndOfALeakAreNotFragmentation) {
  const std::string text = vramdoc::test::file_text(std::string(VRAMDOC_SOURCE_DIR) + "/tests/data/timelines/trace_leak_to_oom.json");
  auto tl = read_timeline(text, "leak_to_oom");
  ASSERT_TRUE(tl.ok());
  tl->messages = {"CUDA out of memory. Tried to allocate 100.00 MiB. GPU 0 has a total capacity of 139.80 GiB of which 90.00 MiB is free. "
                  "Of the allocated memory 138.00 GiB is allocated by PyTorch, and 200.00 MiB is reserved by PyTorch but unallocated."};
  EXPECT_EQ(classify(*tl).verdict, Verdict::Leak);
  EXPECT_EQ(classify(test::reduce(*tl)).verdict, Verdict::Leak);
  tl->messages = {"CUDA out of memory. Tried to allocate 100.00 MiB. GPU 0 has a total capacity of 139.80 GiB of which 90.00 MiB is free. "
                  "Of the allocated memory 120.00 GiB is allocated by PyTorch, and 18.00 GiB is reserved by PyTorch but unallocated."};
  EXPECT_EQ(classify(*tl).verdict, Verdict::Fragmentation);
}

// Pins the H200 run of 2026-11-29: `vramdoc run` samples before the job's CUDA context exists and
// after it exits, so its timeline starts and ends at 0 B; "first / last" and the stable verdict's
// "stays level (0 B)" read those zeros instead of the job's memory.
TEST(Verdicts, FirstAndLastAreWhileTheJobHeldMemory) {
  Timeline tl;
  tl.name = "run";
  for (int i = 0; i < 400; ++i) {
    Sample s;
    s.t_seconds = 0.02 * i;
    s.process_used_bytes = i < 10 || i >= 390 ? 0 : (i < 30 ? 1000ULL << 20 : 2000ULL << 20);
    tl.samples.push_back(s);
  }
  const auto d = classify(tl);
  EXPECT_EQ(d.evidence.first_bytes, 1000ULL << 20);
  EXPECT_EQ(d.evidence.last_bytes, 2000ULL << 20);
  for (const auto& reason : d.reasons) EXPECT_EQ(reason.find("(0 B)"), std::string::npos) << reason;
}

}  // namespace
}  // namespace vramdoc::timeline
