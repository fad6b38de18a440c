// Issue 15, point 1: a verdict must not flip between two recordings of the same job. Each job is
// recorded many times by the simulator (test_timeline_sim.hpp): the same steps, another sampling
// phase, step-time jitter and reading noise. The stability rate (recordings that get the job's
// most common verdict) is printed for docs/run-analyze.md.
#include <gtest/gtest.h>

#include <cstdio>
#include <map>
#include <string>

#include "core/timeline/classify.hpp"
#include "test_timeline_sim.hpp"

namespace vramdoc::timeline {
namespace {

constexpr double MiB = 1048576.0, GiB = 1073741824.0;

struct Tally {
  std::map<std::string, int> verdicts;
  int claims_new_shapes = 0;  // reasons that say "new, larger input shapes"
  int total = 0;
  std::string modal() const {
    std::string best;
    for (const auto& [v, n] : verdicts)
      if (best.empty() || n > verdicts.at(best)) best = v;
    return best;
  }
  double stability() const { return total ? double(verdicts.at(modal())) / total : 0; }
  std::string str() const {
    std::string s;
    for (const auto& [v, n] : verdicts) s += v + " " + std::to_string(n) + "  ";
    return s;
  }
};

Tally tally(const test::SimJob& job, int recordings, bool marks) {
  Tally t;
  for (int r = 1; r <= recordings; ++r) {
    test::SimRecording rec;
    rec.seed = static_cast<unsigned>(r);
    rec.marks = marks;
    const auto d = classify(test::record(job, rec));
    ++t.verdicts[verdict_name(d.verdict)];
    for (const auto& reason : d.reasons) t.claims_new_shapes += reason.find("new, larger input shapes") != std::string::npos;
    ++t.total;
  }
  return t;
}

void report(const char* name, const Tally& t) {
  std::printf("[stability] %-46s %5.1f %%  (%s)\n", name, 100 * t.stability(), t.str().c_str());
}

// The job of issue 15: evaluation every 5 steps without torch.no_grad(), outputs kept, fixed
// shapes; recorded from outside (no marks) as the user did, and with step marks. Variants: what an
// evaluation keeps against a step's activations, the interval, the step time.
TEST(VerdictStability, PeriodicEvalLeakIsALeakInEveryRecording) {
  struct Variant {
    int every;
    double act_mib, kept_mib, step_s;
  };
  for (const Variant v : {Variant{5, 288, 288, 0.065}, Variant{5, 1024, 64, 0.1}, Variant{3, 512, 512, 0.2}, Variant{10, 2048, 700, 0.05},
                          Variant{5, 4096, 300, 0.3}}) {
    const auto job = test::periodic_eval_leak(160, v.every, v.act_mib * MiB, v.kept_mib * MiB, v.step_s);
    for (const bool marks : {false, true}) {
      const Tally t = tally(job, 100, marks);
      char name[120];
      std::snprintf(name, sizeof name, "eval leak every %d, %g/%g MiB, %g s%s", v.every, v.kept_mib, v.act_mib, v.step_s, marks ? ", marks" : "");
      report(name, t);
      EXPECT_EQ(t.modal(), "leak") << name;
      EXPECT_GE(t.stability(), 0.99) << name << ": " << t.str();
      EXPECT_EQ(t.claims_new_shapes, 0) << name;
    }
  }
}

// Random input lengths fill the cache and level off: never a leak, never "regular".
TEST(VerdictStability, RandomShapesAreNeverALeak) {
  for (unsigned job_seed = 1; job_seed <= 10; ++job_seed) {
    const auto job = test::random_shapes(150, 6 * GiB, 0.1, job_seed);
    const Tally t = tally(job, 40, false);
    report(("random shapes, job " + std::to_string(job_seed)).c_str(), t);
    EXPECT_EQ(t.verdicts.count("leak"), 0U) << job_seed << ": " << t.str();
    EXPECT_GE(t.stability(), 0.95) << job_seed << ": " << t.str();
  }
}

// A stable loop whose evaluation needs 8x a step's memory: one rise at the first evaluation. Never
// a leak. From outside, whether that rise counts as warm-up (stable) or after it (plateau) turns on
// whether the 2 s of loading before the first step pass as a settled level (at least 2 s quiet):
// this job loads for 2 s exactly, and a few recordings fall on the other side (docs/run-analyze.md).
TEST(VerdictStability, EvalSpikeIsNotALeak) {
  const auto job = test::eval_spike(150, 10, 288 * MiB, 2304 * MiB, 0.065);
  for (const bool marks : {false, true}) {
    const Tally t = tally(job, 100, marks);
    report(marks ? "eval spike, marks" : "eval spike", t);
    EXPECT_EQ(t.verdicts.count("leak"), 0U) << t.str();
    EXPECT_GE(t.stability(), 0.95) << t.str();
  }
}

}  // namespace
}  // namespace vramdoc::timeline
