// Several processes, several GPUs (issue 15, point 2): each process judged on its own series
// against its own GPU's capacity, the job's verdict the worst of theirs, the leaking rank named;
// several files of one job aligned by their wall-clock starts. Recordings are made with the tick
// writer `run` uses, from the synthetic training loops of test_timeline_synth.
#include <gtest/gtest.h>

#include <algorithm>

#include "core/report/job_report.hpp"
#include "core/timeline/classify.hpp"
#include "core/timeline/job.hpp"
#include "core/timeline/reader.hpp"
#include "core/timeline/render.hpp"
#include "core/timeline/ticks.hpp"
#include "core/timeline/writer.hpp"
#include "test_timeline_synth.hpp"

namespace vramdoc::timeline {
namespace {

using test::Kind;
using test::SynthParams;
constexpr double MiB = 1048576.0;

// One machine's recording of `ranks` (rank r is pid 100 + r on GPU r, its first rank `first_rank`),
// sampled every 20 ms as `run` does: each rank's latest reading at every tick, the step hook's
// marks tagged with the pid, an untagged "oom" mark and message when a rank ran out.
std::string record(const std::vector<Timeline>& ranks, const std::string& host, double start_unix, long first_rank = 0) {
  Header h;
  h.name = "torchrun";
  h.host = host;
  h.start_unix_seconds = start_unix;
  h.interval_seconds = 0.02;
  for (unsigned g = 0; g < ranks.size(); ++g) h.gpus.push_back({g, "GPU-" + host + std::to_string(g), std::nullopt, "NVIDIA H100", *ranks[g].total_bytes});
  std::vector<std::pair<double, std::string>> chunks;
  TickWriter w;
  auto who = [&](std::uint32_t pid, unsigned gpu) {
    return ProcessInfo{host, pid, first_rank + long(pid - 100), long(pid - 100), gpu, "python3"};
  };
  double end = 0;
  for (const auto& r : ranks) end = std::max(end, r.samples.back().t_seconds);
  std::vector<std::size_t> at(ranks.size(), 0);
  for (int i = 0; 0.02 * i <= end; ++i) {
    Tick k;
    k.t_seconds = 0.02 * i;
    for (std::size_t r = 0; r < ranks.size(); ++r) {
      const auto& s = ranks[r].samples;
      while (at[r] + 1 < s.size() && s[at[r] + 1].t_seconds <= k.t_seconds + 1e-9) ++at[r];
      const bool gone = k.t_seconds > s.back().t_seconds + 0.05;  // a rank that ended holds nothing
      const std::uint64_t bytes = gone ? 0 : s[at[r]].process_used_bytes;
      k.processes.push_back({std::uint32_t(100 + r), unsigned(r), bytes});
      k.process_used_bytes += bytes;
      k.gpu_used_bytes.push_back(bytes + std::uint64_t(600 * MiB));
    }
    chunks.emplace_back(k.t_seconds, w.add(k, who));
  }
  chunks.emplace_back(end, w.finish());
  bool oom = false;
  for (std::size_t r = 0; r < ranks.size(); ++r) {
    for (auto m : ranks[r].marks) {
      if (m.label == "oom") continue;
      m.pid = std::uint32_t(100 + r);
      chunks.emplace_back(m.t_seconds, mark_line(m));
    }
    for (const auto& msg : ranks[r].messages) chunks.emplace_back(end, oom_message_line(end, msg)), oom = true;
  }
  if (oom) chunks.emplace_back(end, mark_line({end, "oom", std::nullopt, std::nullopt, std::nullopt}));
  std::stable_sort(chunks.begin(), chunks.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  std::string text = header_line(h);
  for (const auto& [t, c] : chunks) text += c;
  return text + end_line(end, oom ? Outcome::Oom : Outcome::Ok, oom ? 1 : 0);
}

Timeline read(const std::string& text) {
  auto tl = read_timeline(text, "job.jsonl");
  EXPECT_TRUE(tl.ok()) << tl.error();
  return tl.ok() ? *tl : Timeline{};
}

std::vector<Timeline> ranks(int n, int leaking, unsigned seed, Kind leak = Kind::Leak, double leak_mib = 62.5) {
  std::vector<Timeline> out;
  for (int r = 0; r < n; ++r) {
    SynthParams p;
    p.seed = seed * 31 + unsigned(r);
    p.kind = r == leaking ? leak : Kind::Stable;
    p.leak_mib_per_step = leak_mib;
    out.push_back(test::synthesize(p));
  }
  return out;
}

// The bug: under torchrun with one rank keeping 62.5 MiB a step, vramdoc judged the sum of both
// processes against the sum of both cards and did not say which process leaked.
TEST(JobProcesses, TwoRanksOneLeakingIsNamedNotSummed) {
  for (unsigned seed = 1; seed <= 8; ++seed) {
    const auto judged = judge_job({read(record(ranks(2, 1, seed), "node1", 1764500000))});
    ASSERT_TRUE(judged.processes) << seed;
    const auto& p = *judged.processes;
    ASSERT_EQ(p.processes.size(), 2u);
    EXPECT_EQ(p.verdict, Verdict::Leak) << seed;
    EXPECT_EQ(p.processes[0].diagnosis.verdict, Verdict::Stable) << seed << " " << p.processes[0].diagnosis.summary;
    EXPECT_EQ(p.processes[1].diagnosis.verdict, Verdict::Leak) << seed;
    EXPECT_NEAR(*p.processes[1].diagnosis.evidence.growth_bytes_per_step, 62.5 * MiB, 0.5 * MiB) << seed;
    for (const auto& v : p.processes) EXPECT_EQ(*v.diagnosis.evidence.capacity_bytes, 80ull << 30);  // its GPU's, not the sum
    EXPECT_EQ(*p.worst, 1u);
    EXPECT_EQ(p.summary, "rank 1 (pid 101, GPU 1) leaks 62.50 MiB per step; rank 0 stable") << seed;
    EXPECT_EQ(judged.diagnosis.summary, "leak: " + p.summary + ".");
    EXPECT_NE(judged.headline.name.find("rank 1 (pid 101, GPU 1)"), std::string::npos);
  }
}

TEST(JobProcesses, EightRanksTheStableOnesAsRanges) {
  const auto judged = judge_job({read(record(ranks(8, 1, 3), "node1", 1764500000))});
  ASSERT_TRUE(judged.processes);
  EXPECT_EQ(judged.processes->summary, "rank 1 (pid 101, GPU 1) leaks 62.50 MiB per step; ranks 0, 2-7 stable");
  // The job report holds the processes as a section: after the verdict in the text, "processes" in
  // the JSON, a section of the HTML page.
  report::JobReport r;
  r.timeline = judged.headline;
  r.diagnosis = judged.diagnosis;
  r.processes = judged.processes;
  const std::string text = report::render_text(r);
  EXPECT_NE(text.find("processes (8; the job's verdict is the worst of theirs)"), std::string::npos) << text;
  EXPECT_LT(text.find("verdict: leak: rank 1"), text.find("processes (8;"));
  EXPECT_NE(text.find("rank 7 (pid 107, GPU 7)"), std::string::npos);
  const auto json = nlohmann::json::parse(report::render_json(r));
  EXPECT_EQ(json["processes"]["processes"][1]["gpu_uuid"], "GPU-node11");
  EXPECT_EQ(json["processes"]["worst"], 1);
  EXPECT_EQ(json["verdict"], "leak");
  const std::string html = report::render_html(r);
  EXPECT_NE(html.find("<section id='processes'>"), std::string::npos);
  EXPECT_NE(html.find("<tr data-verdict='leak'><td>rank 1 (pid 101, GPU 1)</td>"), std::string::npos);
}

TEST(JobProcesses, AllStableIsStable) {
  const auto judged = judge_job({read(record(ranks(4, -1, 5), "node1", 1764500000))});
  ASSERT_TRUE(judged.processes);
  EXPECT_EQ(judged.processes->verdict, Verdict::Stable);
  EXPECT_EQ(judged.processes->summary, "ranks 0-3 stable");
}

TEST(JobProcesses, OneProcessIsTheJobsOwnReport) {
  const Timeline tl = read(record(ranks(1, 0, 2), "node1", 1764500000));
  const auto judged = judge_job({tl});
  EXPECT_FALSE(judged.processes);
  EXPECT_EQ(judged.diagnosis.verdict, Verdict::Leak);
  EXPECT_EQ(judged.headline.samples.size(), tl.samples.size());
}

// Two nodes' files: node2 started 3 s after node1; its rank 3 leaks. One job, one time axis.
TEST(JobProcesses, SeveralFilesAreOneJobAlignedByTheirWallClock) {
  const Timeline a = read(record(ranks(2, -1, 7), "node1", 1764500000.0, 0));
  const Timeline b = read(record(ranks(2, 1, 8), "node2", 1764500003.0, 2));
  const auto judged = judge_job({a, b});
  ASSERT_TRUE(judged.processes);
  const auto& p = *judged.processes;
  ASSERT_EQ(p.processes.size(), 4u);
  EXPECT_EQ(p.summary, "node2 rank 3 (pid 101, GPU 1) leaks 62.50 MiB per step; node1 ranks 0-1, node2 rank 2 stable");
  EXPECT_NEAR(judged.headline.samples.front().t_seconds, 3.0, 1e-9);
  EXPECT_NE(std::find(p.notes.begin(), p.notes.end(), "time axes aligned by each file's wall-clock start"), p.notes.end());
}

// One rank runs out of memory: the message and the "oom" mark are its own; the stable rank, killed
// with the job, is not called insufficient.
TEST(JobProcesses, TheOutOfMemoryIsTheProcessThatRanOut) {
  const auto judged = judge_job({read(record(ranks(2, 1, 4, Kind::LeakToOom, 1024), "node1", 1764500000))});
  ASSERT_TRUE(judged.processes);
  const auto& p = *judged.processes;
  EXPECT_EQ(p.processes[1].diagnosis.verdict, Verdict::Leak);
  EXPECT_TRUE(p.processes[1].diagnosis.evidence.oom_seconds);
  EXPECT_NE(p.processes[0].diagnosis.verdict, Verdict::Insufficient);
  EXPECT_FALSE(p.processes[0].diagnosis.evidence.oom_seconds);
  ASSERT_FALSE(p.notes.empty());
  EXPECT_NE(p.notes.back().find("given to rank 1 (pid 101, GPU 1)"), std::string::npos);
}

// A process with the step hook's own marks ignores the job's untagged step marks (a --step-regex
// on the mixed output of all ranks); one without gets them.
TEST(JobProcesses, OwnStepMarksWinOverTheJobs) {
  Timeline tl = read(record(ranks(2, 1, 6), "node1", 1764500000));
  const std::size_t own = std::count_if(tl.marks.begin(), tl.marks.end(), [](const Mark& m) { return m.pid == 100u; });
  for (auto& m : tl.marks)
    if (m.pid == 101u) m.pid.reset();  // rank 1's marks untagged: they are now the job's
  tl.marks.push_back({1.0, "step 999", std::nullopt, std::nullopt, std::nullopt});
  const auto parts = split_by_process(tl);
  EXPECT_EQ(parts[0].timeline.marks.size(), own);                 // rank 0: its own only
  EXPECT_EQ(parts[1].timeline.marks.size(), tl.marks.size() - own);  // rank 1: the untagged ones
}

TEST(JobProcesses, VersionOneFilesAreOneProcessEach) {
  SynthParams p;
  p.kind = Kind::Leak;
  Timeline a = test::synthesize(p);
  p.kind = Kind::Stable;
  Timeline b = test::synthesize(p);
  a.name = "a.jsonl", b.name = "b.jsonl";
  const auto judged = judge_job({a, b});
  ASSERT_TRUE(judged.processes);
  EXPECT_EQ(judged.processes->verdict, Verdict::Leak);
  EXPECT_NE(judged.processes->summary.find("the job (a.jsonl) leaks"), std::string::npos) << judged.processes->summary;
  EXPECT_EQ(judged.processes->notes.size(), 2u);  // neither has a wall-clock start
}

// Version 2 leaves out the ticks that changed nothing; the classifier reads them back on the
// recording's grid, so a staircase judged from every tick (version 1) and from the lines version 2
// kept gets the same verdict, step time and growth. Without marks (driver alone: periods, bins)
// and with them.
TEST(JobProcesses, LeftOutTicksAreJudgedAsEveryTick) {
  for (Kind kind : {Kind::Stable, Kind::Leak, Kind::Plateau}) {
    for (unsigned seed = 1; seed <= 6; ++seed) {
      SynthParams p;
      p.kind = kind;
      p.seed = seed;
      p.noise_mib = 0;  // a clean staircase: most ticks repeat the last one
      for (bool marks : {false, true}) {
        Timeline every = marks ? test::synthesize(p) : test::reduce(test::synthesize(p));
        every.interval_seconds = 0.02;
        Header h;
        h.name = "job";
        h.interval_seconds = 0.02;
        h.gpus = {{0, std::nullopt, std::nullopt, "NVIDIA H100", every.total_bytes}};
        std::string text = header_line(h);
        TickWriter w;
        for (const auto& s : every.samples) {
          Tick k;
          k.t_seconds = s.t_seconds;
          k.process_used_bytes = s.process_used_bytes;
          k.processes.push_back({100, 0, s.process_used_bytes});
          k.gpu_used_bytes = {s.process_used_bytes};
          text += w.add(k, [](std::uint32_t pid, unsigned gpu) { return ProcessInfo{"", pid, {}, {}, gpu, "python3"}; });
        }
        text += w.finish();
        for (const auto& m : every.marks) text += mark_line(m);
        const Timeline kept = read(text);
        ASSERT_LT(kept.samples.size() * 3, every.samples.size()) << "nothing was left out";
        const Diagnosis a = classify(every), b = classify(kept);
        const std::string what = std::to_string(int(kind)) + "/" + std::to_string(seed) + (marks ? " marks" : "");
        EXPECT_EQ(a.verdict, b.verdict) << what << ": " << a.summary << " / " << b.summary;
        EXPECT_EQ(a.evidence.steps.has_value(), b.evidence.steps.has_value()) << what;
        if (a.evidence.step_seconds && b.evidence.step_seconds) {
          EXPECT_NEAR(*a.evidence.step_seconds, *b.evidence.step_seconds, 0.1 * *a.evidence.step_seconds) << what;
        }
        if (a.evidence.growth_bytes_per_step && b.evidence.growth_bytes_per_step) {
          EXPECT_NEAR(*a.evidence.growth_bytes_per_step, *b.evidence.growth_bytes_per_step, 0.05 * std::abs(*a.evidence.growth_bytes_per_step) + 1.0 * MiB) << what;
        }
      }
    }
  }
}

TEST(JobProcesses, CompressedRanges) {
  EXPECT_EQ(compress_ranges({0, 2, 3, 4, 7}), "0, 2-4, 7");
  EXPECT_EQ(compress_ranges({5}), "5");
  EXPECT_EQ(compress_ranges({}), "");
  EXPECT_EQ(compress_ranges({3, 1, 2}), "1-3");
}

}  // namespace
}  // namespace vramdoc::timeline
