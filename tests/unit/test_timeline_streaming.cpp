// Days-long recordings (issue 31) and caps that bound work (issue 25, item 4): a recording is read
// into a fixed size however long it is, the sample lines' fast path reads what the JSON reader
// reads, a window of a long job, and a job of many processes judged within a fixed budget.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>

#include "core/timeline/classify.hpp"
#include "core/timeline/job.hpp"
#include "core/timeline/reader.hpp"
#include "core/timeline/sample_row.hpp"
#include "core/timeline/series.hpp"
#include "core/timeline/thinning.hpp"

namespace vramdoc::timeline {
namespace {

constexpr std::uint64_t MiB = 1048576;

const char* kHeaderV2 =
    R"({"columns":["t","process_used","device_used","series","gpu_used"],"gpus":[{"index":0,"total":150000000000}],)"
    R"("host":"h","interval_s":0.02,"name":"long","start_unix_s":1796000000.0,"total":150000000000,"vramdoc_timeline":2})";

// A leaking loop of `samples` ticks, every tick's values different, a step mark every 50.
LineReader long_recording(std::size_t samples, Window window = {}) {
  LineReader r("long.jsonl", window);
  r.add(kHeaderV2);
  r.add(R"({"series":{"id":0,"pid":7,"gpu":0,"command":"python3"}})");
  for (std::size_t i = 0; i < samples; ++i) {
    const std::uint64_t step = i / 50, used = 20 * 1024 * MiB + step * MiB + (i % 50) * 64 * MiB + (i * 7919) % 4096;
    const std::string t = std::to_string(0.02 * double(i));
    r.add("[" + t + "," + std::to_string(used) + "," + std::to_string(used + 512 * MiB) + ",[" + std::to_string(used) + "],[" +
          std::to_string(used + 512 * MiB) + "]]");
    if (i % 50 == 49)
      r.add(R"({"mark":"step )" + std::to_string(step) + R"(","t":)" + t + R"(,"pid":7,"allocated":)" +
            std::to_string(18 * 1024 * MiB + step * MiB) + R"(,"reserved":)" + std::to_string(20 * 1024 * MiB + step * MiB) + "}");
  }
  r.add(R"({"end":{"outcome":"ok","exit_status":0}})");
  return r;
}

TEST(SampleKeeper, KeepsEverySampleUpToItsCap) {
  SampleKeeper k(1000);
  for (int i = 0; i < 1000; ++i) k.add({0.1 * i, std::uint64_t(i), {}, {}, {}});
  EXPECT_EQ(k.samples().size(), 1000u);
  EXPECT_FALSE(k.thinning());
}

TEST(SampleKeeper, BeyondItsCapKeepsTheFloorsPeaksFirstAndLast) {
  SampleKeeper k(1024);
  const std::size_t n = 1'000'000;
  for (std::size_t i = 0; i < n; ++i) {
    std::uint64_t y = 1000 + (i % 97) * 10;  // a sawtooth
    if (i == 654321) y = 999999;              // one spike
    if (i == 123457) y = 3;                   // one dip
    k.add({0.02 * double(i), y, {}, {}, {}});
  }
  const auto& kept = k.samples();
  EXPECT_LE(kept.size(), 1024u);
  ASSERT_TRUE(k.thinning());
  EXPECT_EQ(k.thinning()->samples_read, n);
  EXPECT_GT(k.thinning()->bin_seconds, 0.0);
  EXPECT_DOUBLE_EQ(kept.front().t_seconds, 0.0);
  EXPECT_DOUBLE_EQ(kept.back().t_seconds, 0.02 * double(n - 1));
  auto has = [&](std::uint64_t y) { return std::any_of(kept.begin(), kept.end(), [&](const Sample& s) { return s.process_used_bytes == y; }); };
  EXPECT_TRUE(has(999999));
  EXPECT_TRUE(has(3));
  EXPECT_TRUE(std::is_sorted(kept.begin(), kept.end(), [](const Sample& a, const Sample& b) { return a.t_seconds < b.t_seconds; }));
}

// Issue 31: 2,000,000 samples with a mark every 50 took 7.1 GB; the reader held every sample.
TEST(TimelineStreaming, Issue31ALongRecordingIsReadIntoAFixedSize) {
  auto tl = long_recording(2'000'000).finish();
  ASSERT_TRUE(tl.ok()) << tl.error();
  EXPECT_LE(tl->samples.size(), kMaxKeptSamples);
  ASSERT_EQ(tl->processes.size(), 1u);
  EXPECT_LE(tl->processes[0].samples.size() + tl->samples.size(), kMaxKeptSamples);
  ASSERT_TRUE(tl->thinned);
  EXPECT_EQ(tl->thinned->samples_read, 2'000'000u);
  EXPECT_EQ(tl->marks.size(), 40'000u);
  const Diagnosis d = judge_job({*tl}).diagnosis;
  EXPECT_EQ(d.verdict, Verdict::Leak) << d.summary;
  EXPECT_EQ(d.evidence.samples, 2'000'000u);
  ASSERT_TRUE(d.evidence.growth_bytes_per_step);
  EXPECT_NEAR(*d.evidence.growth_bytes_per_step, double(MiB), 0.05 * double(MiB));
  EXPECT_LE(d.evidence.trend_points, kMaxSeriesPoints);
}

TEST(TimelineStreaming, AShortRecordingIsKeptWhole) {
  auto tl = long_recording(5000).finish();
  ASSERT_TRUE(tl.ok()) << tl.error();
  EXPECT_EQ(tl->samples.size(), 5000u);
  EXPECT_EQ(tl->processes[0].samples.size(), 5000u);
  EXPECT_FALSE(tl->thinned);
  EXPECT_FALSE(tl->processes[0].thinned);
}

TEST(TimelineStreaming, AWindowReadsOnlyItsSamplesAndMarks) {
  auto tl = long_recording(5000, Window{10.0, 20.0}).finish();
  ASSERT_TRUE(tl.ok()) << tl.error();
  ASSERT_FALSE(tl->samples.empty());
  EXPECT_GE(tl->samples.front().t_seconds, 10.0);
  EXPECT_LE(tl->samples.back().t_seconds, 20.0);
  EXPECT_EQ(tl->samples.size(), 501u);
  for (const auto& m : tl->marks) EXPECT_TRUE(m.t_seconds >= 10.0 && m.t_seconds <= 20.0) << m.t_seconds;
  EXPECT_EQ(tl->marks.size(), 10u);
}

// The job's end is after the window: its OOM is not the window's to judge.
TEST(TimelineStreaming, AWindowBeforeTheEndLeavesTheOomOut) {
  const std::string text = std::string(kHeaderV2) + "\n" + R"({"series":{"id":0,"pid":7,"gpu":0}})" + "\n" +
                           "[0.0,100,200,[100],[200]]\n[1.0,100,200,[100],[200]]\n[2.0,900,999,[900],[999]]\n" +
                           R"({"oom_message":"torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB."})" + "\n" +
                           R"({"end":{"outcome":"oom","exit_status":1}})" + "\n";
  auto whole = read_timeline(text, "x");
  ASSERT_TRUE(whole.ok()) << whole.error();
  EXPECT_EQ(whole->outcome, Outcome::Oom);
  auto window = read_timeline(text, "x", Window{std::nullopt, 1.5});
  ASSERT_TRUE(window.ok()) << window.error();
  EXPECT_EQ(window->outcome, Outcome::Unknown);
  EXPECT_TRUE(window->messages.empty());
  EXPECT_EQ(window->samples.size(), 2u);
}

TEST(SampleRow, ReadsThePlainFormAndLeavesTheRestToTheJsonReader) {
  SampleRow row;
  ASSERT_TRUE(parse_sample_row("[0.02,1048576,null,[5,null],[7]]", row));
  ASSERT_EQ(row.cells.size(), 5u);
  EXPECT_DOUBLE_EQ(row.cells[0].number, 0.02);
  EXPECT_EQ(row.cells[1].number, 1048576.0);
  EXPECT_EQ(row.cells[2].kind, RowCell::Kind::Null);
  ASSERT_EQ(row.cells[3].kind, RowCell::Kind::List);
  EXPECT_EQ(row.cells[3].end - row.cells[3].begin, 2u);
  EXPECT_EQ(row.items[1].kind, RowCell::Kind::Null);
  EXPECT_TRUE(parse_sample_row(" [ 1e3 , 2.5E-1 , [ ] ] ", row));
  for (const char* other : {"[-1,5]", "[01,5]", "[1.,5]", "[.5,5]", "[1,5,]", "[1,\"x\"]", "[1,[[2]]]", "[1,5] x", "[1,NaN]",
                            "[1,Infinity]", "[1e400,5]", "{\"t\":1}", "[1,5", "[1,true]", "[+1,5]"})
    EXPECT_FALSE(parse_sample_row(other, row)) << other;
}

// Both paths give the same errors: a line the fast path does not take is the JSON reader's to word.
TEST(TimelineStreaming, BadSampleLinesGiveTheJsonReadersErrors) {
  const std::string head = std::string(kHeaderV2) + "\n" + R"({"series":{"id":0,"pid":7,"gpu":0}})" + "\n";
  auto error = [&](const std::string& line) {
    auto tl = read_timeline(head + line + "\n", "x");
    return tl.ok() ? std::string("ok") : tl.error();
  };
  EXPECT_EQ(error("[0.1,-5,0,[1],[2]]"), "x: line 3 process_used = -5 bytes is out of range");
  EXPECT_EQ(error("[1e12,5,0,[1],[2]]"), "x: line 3 t = 1000000000000.0 is out of range");
  EXPECT_EQ(error("[0.1,5,0,[1,2],[2]]"), "x: line 3 series is not a list of 1 values");
  EXPECT_EQ(error("[0.1,5,0,[1],[]]"), "x: line 3 gpu_used is not a list of 1 values");
  EXPECT_EQ(error("[0.1,5,0,[2e18],[2]]"), "x: line 3 series 0 = 2e+18 bytes is out of range");
  EXPECT_EQ(error("[0.1,5,0,[1],[2]]\n[0.05,5,0,[1],[2]]"), "x: sample 1 goes back in time");
}

// Issue 25, item 4: a 424 KB timeline of 4,096 processes would take ~4 h: each process's regular
// grid was 100,000 points and the period search quadratic in them. The job shares one budget.
TEST(TimelineStreaming, Issue25ManyProcessesShareOneBudgetOfGridPoints) {
  Timeline tl;
  tl.name = "many";
  tl.interval_seconds = 0.02;
  tl.host = "h";
  tl.gpus.push_back({0, "GPU-0", std::nullopt, "NVIDIA H200", 150000000000ULL});
  const std::size_t processes = 4096;
  for (std::size_t p = 0; p < processes; ++p) {
    ProcessSeries s;
    s.who = {"h", std::uint32_t(1000 + p), std::nullopt, std::nullopt, 0u, "worker"};
    for (int i = 0; i < 30; ++i) s.samples.push_back({100.0 * i, (1 + std::uint64_t(i % 3)) * 64 * MiB, {}, {}, {}});
    tl.processes.push_back(std::move(s));
  }
  for (int i = 0; i < 30; ++i) tl.samples.push_back({100.0 * i, processes * 64 * MiB, {}, {}, {}});
  // The job's step marks (every process gets them): without the budget each process's grid of
  // 100,000 points makes this take half a minute and fail the count, instead of hours.
  for (int i = 1; i < 30; ++i) tl.marks.push_back({100.0 * i - 1, "step " + std::to_string(i), {}, {}, {}});
  const JobJudgement j = judge_job({tl});
  ASSERT_TRUE(j.processes);
  ASSERT_EQ(j.processes->processes.size(), processes);
  std::size_t grid = 0;
  for (const auto& p : j.processes->processes) grid += p.diagnosis.evidence.samples;
  EXPECT_LE(grid, kJobGridPoints + processes);  // each grid may add the last reading
}

}  // namespace
}  // namespace vramdoc::timeline
