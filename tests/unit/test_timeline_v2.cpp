// Timeline format version 2 (docs/timeline-format.md): the tick writer (series lines, samples
// left out while nothing changes), the reader (version 2 beside version 1), marker lines, and
// bad input of every kind -> an error naming the input, never a crash.
#include <gtest/gtest.h>

#include <random>

#include "core/report/job_report.hpp"
#include "core/timeline/classify.hpp"
#include "core/timeline/job.hpp"
#include "core/timeline/marker.hpp"
#include "core/timeline/reader.hpp"
#include "core/timeline/render.hpp"
#include "core/timeline/ticks.hpp"
#include "core/timeline/writer.hpp"
#include "mutate_text.hpp"

namespace vramdoc::timeline {
namespace {

constexpr std::uint64_t MiB = 1048576;

Header two_gpus() {
  Header h;
  h.name = "torchrun";
  h.host = "node1";
  h.start_unix_seconds = 1764500000.25;
  h.interval_seconds = 0.02;
  h.gpus = {{0, "GPU-aaaa", "00000000:19:00.0", "NVIDIA H200", 150754820096}, {1, "GPU-bbbb", "00000000:3B:00.0", "NVIDIA H200", 150754820096}};
  return h;
}

ProcessInfo rank_of(std::uint32_t pid, unsigned gpu) {
  ProcessInfo p;
  p.pid = pid;
  p.gpu = gpu;
  p.rank = pid - 100;
  p.local_rank = pid - 100;
  p.command = "python3";
  return p;
}

Tick tick(double t, std::uint64_t a, std::uint64_t b) {
  Tick k;
  k.t_seconds = t;
  k.process_used_bytes = a + b;
  k.device_used_bytes = a + b + 1000;
  if (a) k.processes.push_back({100, 0, a});
  if (b) k.processes.push_back({101, 1, b});
  k.gpu_used_bytes = {a + 500, b + 500};
  return k;
}

TEST(TimelineV2, TickWriterLeavesOutUnchangedTicksButKeepsEachLevelsEnds) {
  TickWriter w(1.0);
  std::string text = header_line(two_gpus());
  std::size_t lines = 0;
  auto add = [&](const Tick& k) {
    const auto out = w.add(k, rank_of);
    text += out;
    lines += static_cast<std::size_t>(std::count(out.begin(), out.end(), '\n'));
  };
  add(tick(0.00, 10 * MiB, 0));           // series 0 declared, then the sample
  for (int i = 1; i <= 20; ++i) add(tick(0.02 * i, 10 * MiB, 0));  // unchanged for 0.4 s: left out
  EXPECT_EQ(lines, 2u);
  add(tick(0.42, 10 * MiB, 20 * MiB));    // the held tick, series 1, the new sample
  EXPECT_EQ(lines, 5u);
  for (int i = 1; i <= 60; ++i) add(tick(0.42 + 0.02 * i, 10 * MiB, 20 * MiB));  // 1.2 s: one heartbeat
  EXPECT_EQ(lines, 6u);
  text += w.finish();  // the last reading
  auto tl = read_timeline(text, "t.jsonl");
  ASSERT_TRUE(tl.ok()) << tl.error();
  ASSERT_EQ(tl->processes.size(), 2u);
  EXPECT_EQ(tl->processes[1].who.pid, 101u);
  EXPECT_EQ(*tl->processes[1].who.rank, 1);
  EXPECT_EQ(*tl->processes[1].who.gpu, 1u);
  EXPECT_EQ(tl->processes[1].who.host, "node1");
  EXPECT_EQ(tl->host, "node1");
  EXPECT_DOUBLE_EQ(*tl->start_unix_seconds, 1764500000.25);
  ASSERT_EQ(tl->gpus.size(), 2u);
  EXPECT_EQ(*tl->gpus[1].uuid, "GPU-bbbb");
  // The level of series 0 ends at 0.40 s (its last unchanged reading), not at the next change.
  ASSERT_GE(tl->samples.size(), 3u);
  EXPECT_DOUBLE_EQ(tl->samples[1].t_seconds, 0.40);
  EXPECT_DOUBLE_EQ(tl->samples.back().t_seconds, 1.62);
  EXPECT_EQ(tl->processes[1].samples.front().process_used_bytes, 20 * MiB);
  EXPECT_EQ(*tl->processes[1].samples.front().device_used_bytes, 20 * MiB + 500);  // GPU 1's used memory
  EXPECT_EQ(tl->processes[0].samples.size(), tl->samples.size());
}

// An hour of 8 ranks sampled every 20 ms: 180,000 ticks. Unchanged, the file holds one line a
// second; a staircase adds two lines a step of the staircase, never one per tick.
TEST(TimelineV2, AnHourOfEightRanksStaysSmall) {
  TickWriter w(1.0);
  std::size_t bytes = 0, lines = 0;
  for (int i = 0; i < 180000; ++i) {
    Tick k;
    k.t_seconds = 0.02 * i;
    for (std::uint32_t r = 0; r < 8; ++r) k.processes.push_back({4000 + r, r, (20000 + (r == 1 ? std::uint64_t(i / 3000) * 64 : 0)) * MiB});
    for (const auto& p : k.processes) k.process_used_bytes += p.bytes;
    for (std::uint32_t r = 0; r < 8; ++r) k.gpu_used_bytes.push_back(k.processes[r].bytes + 600 * MiB);
    const auto out = w.add(k, [](std::uint32_t pid, unsigned gpu) { return rank_of(pid, gpu); });
    bytes += out.size();
    lines += static_cast<std::size_t>(std::count(out.begin(), out.end(), '\n'));
  }
  EXPECT_LE(lines, 3600u + 8u + 2u * 60u + 1u);  // heartbeats, series lines, the 59 rises' two lines
  EXPECT_LT(bytes, 3'000'000u);
}

TEST(TimelineV2, MarksCarryTheProcessAndItsAllocatorFigures) {
  std::string text = header_line(two_gpus());
  TickWriter w;
  text += w.add(tick(0, 10 * MiB, 20 * MiB), rank_of);
  Mark m{0.5, "step 3", 7 * MiB, 8 * MiB, 101};
  text += mark_line(m);
  auto tl = read_timeline(text, "m.jsonl");
  ASSERT_TRUE(tl.ok()) << tl.error();
  ASSERT_EQ(tl->marks.size(), 1u);
  EXPECT_EQ(*tl->marks[0].pid, 101u);
  EXPECT_EQ(*tl->marks[0].allocated_bytes, 7 * MiB);
  EXPECT_EQ(*tl->marks[0].reserved_bytes, 8 * MiB);
}

TEST(TimelineV2, MarkerLines) {
  auto m = parse_marker_line("step 12 allocated=1048576 reserved=2097152 pid=4242 rank=1");
  ASSERT_TRUE(m);
  EXPECT_EQ(m->label, "step 12");
  EXPECT_EQ(*m->allocated_bytes, 1048576u);
  EXPECT_EQ(*m->reserved_bytes, 2097152u);
  EXPECT_EQ(*m->pid, 4242u);
  EXPECT_FALSE(m->allocated_peak_bytes) << "a line without peak= (an older hook) has no allocator peak";
  // issue 30, probe II: the step hook's allocator peak (memory_stats()'s allocated_bytes.all.peak)
  auto p = parse_marker_line("step 12 allocated=1048576 reserved=2097152 peak=1572864 pid=4242");
  ASSERT_TRUE(p);
  EXPECT_EQ(p->label, "step 12");
  EXPECT_EQ(*p->allocated_peak_bytes, 1572864u);
  EXPECT_EQ(*p->reserved_bytes, 2097152u);
  // Older lines, and lines with other key=value text, read as before: the whole line is the label.
  EXPECT_EQ(parse_marker_line("step 7")->label, "step 7");
  EXPECT_EQ(parse_marker_line("epoch 3  lr=0.1")->label, "epoch 3  lr=0.1");
  EXPECT_FALSE(parse_marker_line("epoch 3 lr=0.1")->pid);
  // Bad fields are left empty, never guessed; a line of fields only is no mark.
  auto bad = parse_marker_line("step 1 allocated=-5 reserved=1e9 pid=0");
  ASSERT_TRUE(bad);
  EXPECT_FALSE(bad->allocated_bytes);
  EXPECT_FALSE(bad->reserved_bytes);
  EXPECT_FALSE(bad->pid);
  EXPECT_FALSE(parse_marker_line("  "));
  EXPECT_FALSE(parse_marker_line("pid=5 allocated=1"));
  EXPECT_FALSE(parse_marker_line("step 1 allocated=99999999999999999999999")->allocated_bytes);
}

// The lines python/vramdoc/_marks.py's mark_step() and mark() write (tests/python/test_marks.py
// pins them): the step hook's fields, peak= included, then pid= and rank=.
TEST(TimelineV2, MarkStepsLinesCarryTheAllocatorPeak) {
  auto step = parse_marker_line("step 10 allocated=1048576 reserved=2097152 peak=3145728 pid=4242 rank=3");
  ASSERT_TRUE(step);
  EXPECT_EQ(step->label, "step 10");
  EXPECT_EQ(*step->allocated_bytes, 1048576u);
  EXPECT_EQ(*step->reserved_bytes, 2097152u);
  EXPECT_EQ(*step->allocated_peak_bytes, 3145728u);
  EXPECT_EQ(*step->pid, 4242u);
  auto label = parse_marker_line("eval begin allocated=1048576 reserved=2097152 peak=3145728 pid=4242 rank=3");
  ASSERT_TRUE(label);
  EXPECT_EQ(label->label, "eval begin");
  EXPECT_EQ(*label->allocated_peak_bytes, 3145728u);
  // A torch whose stats lack the peak: the line has no peak=, and none is guessed.
  auto no_peak = parse_marker_line("step 2 allocated=1048576 reserved=2097152 pid=4242");
  ASSERT_TRUE(no_peak);
  EXPECT_FALSE(no_peak->allocated_peak_bytes);
}

TEST(TimelineV2, BadInputGivesErrorsNamingTheLine) {
  const std::string h = header_line(two_gpus());
  const std::string s0 = "{\"series\":{\"id\":0,\"pid\":100,\"gpu\":0,\"rank\":0,\"local_rank\":0,\"command\":\"python3\"}}\n";
  const std::pair<std::string, std::string> cases[] = {
      {h + "[0,1,2,[5],[1,2]]\n", "series is not a list of 0 values"},
      {h + s0 + "[0,1,2,[5,6],[1,2]]\n", "series is not a list of 1 values"},
      {h + s0 + "[0,1,2,[5],[1]]\n", "gpu_used is not a list of 2 values"},
      {h + s0 + "[0,1,2,[-5],[1,2]]\n", "out of range"},
      {h + "{\"series\":{\"id\":1,\"pid\":100}}\n", "series id 1 where 0 was next"},
      {h + "{\"series\":{\"id\":0,\"pid\":0}}\n", "is not a process id"},
      {h + "{\"series\":{\"id\":0,\"pid\":5,\"rank\":-1}}\n", "is not a rank"},
      {h + "{\"series\":7}\n", "is not a series"},
      {h + "{\"t\":1,\"mark\":\"step 1\",\"pid\":\"x\"}\n", "is not a process id"},
      {"{\"vramdoc_timeline\":2,\"columns\":[\"t\",\"process_used\",\"series\"]}\n", "both \"series\" and \"gpu_used\""},
      {"{\"vramdoc_timeline\":2,\"gpus\":[{\"uuid\":\"x\"}],\"columns\":[\"t\",\"process_used\"]}\n", "has no \"index\""},
      {"{\"vramdoc_timeline\":2,\"start_unix_s\":-4,\"columns\":[\"t\",\"process_used\"]}\n", "start_unix_s"},
      {"{\"vramdoc_timeline\":3,\"columns\":[\"t\",\"process_used\"]}\n", "version 3"},
      {"{\"vramdoc_timeline\":1,\"columns\":[\"t\",\"process_used\"]}\n" + s0, "neither a sample, a series"},  // series are version 2
  };
  for (const auto& [text, expected] : cases) {
    auto r = read_timeline(text, "in.jsonl");
    ASSERT_FALSE(r.ok()) << text;
    EXPECT_NE(r.error().find("in.jsonl"), std::string::npos) << r.error();
    EXPECT_NE(r.error().find(expected), std::string::npos) << r.error() << " / wanted: " << expected;
  }
}

TEST(TimelineV2, MoreSeriesThanAnyJobHasIsRejected) {
  std::string text = header_line(two_gpus());
  for (int i = 0; i <= 4096; ++i) text += series_line(std::size_t(i), rank_of(std::uint32_t(100 + i), 0));
  auto r = read_timeline(text, "many.jsonl");
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().find("more than 4096 series"), std::string::npos) << r.error();
}

// Mutations of a valid two-rank recording: an error or a timeline every step of the per-process
// diagnosis and the renderers get through.
// A process's name is its own choice (prctl, setproctitle): a secret in it does not survive reading.
TEST(TimelineV2, SeriesCommandIsRedactedWhenRead) {
  ProcessInfo who = rank_of(100, 0);
  who.command = "hf_5URYX45jqRO25g3uK5kbAAegiuE8LCAnmu";
  std::string text = header_line(two_gpus()) + series_line(0, who);
  auto tl = read_timeline(text, "secret.jsonl");
  ASSERT_TRUE(tl) << tl.error();
  ASSERT_EQ(tl->processes.size(), 1U);
  EXPECT_EQ(tl->processes[0].who.command, "***");
}

TEST(TimelineV2, MutationFuzz) {
  std::string seed = header_line(two_gpus());
  TickWriter w;
  for (int i = 0; i < 40; ++i) {
    seed += w.add(tick(0.02 * i, (10 + std::uint64_t(i / 4)) * MiB, (i > 5 ? 20 : 0) * MiB), rank_of);
    if (i % 5 == 4) seed += mark_line({0.02 * i, "step " + std::to_string(i / 5), (5 + std::uint64_t(i)) * MiB, 9 * MiB, 100});
  }
  seed += w.finish() + oom_message_line(0.8, "CUDA out of memory. Tried to allocate 20.00 MiB.") + end_line(0.8, Outcome::Oom, 1);
  std::mt19937 rng(7);
  const char alphabet[] = "0123456789-.,:[]{}\"e\n nullidpgurs";
  int accepted = 0, rejected = 0;
  for (int round = 0; round < 6000; ++round) {
    const std::string text = fuzz::mutate_text(seed, rng, alphabet);
    auto r = read_timeline(text, "fuzz");
    if (!r.ok()) {
      ++rejected;
      EXPECT_FALSE(r.error().empty());
      continue;
    }
    ++accepted;
    auto j = judge_job({*r});
    report::JobReport rep;
    rep.timeline = std::move(j.headline);
    rep.diagnosis = std::move(j.diagnosis);
    rep.processes = std::move(j.processes);
    EXPECT_FALSE(report::render_text(rep).empty());
    EXPECT_FALSE(report::render_json(rep).empty());
    EXPECT_FALSE(report::render_html(rep).empty());
  }
  EXPECT_GT(accepted, 0);
  EXPECT_GT(rejected, 0);
}

// Regression (issue 25): a 250-character program name made the default timeline name longer than
// a file name may be (255 bytes), and run refused the job. The program's part is cut and tamed.
TEST(TimelineV2, DefaultFileNameIsShortAndPlainWhateverTheProgram) {
  const std::string name = default_file_name("/opt/bin/" + std::string(250, 'p'), "20261201-120000");
  EXPECT_EQ(name, "vramdoc-" + std::string(kMaxProgramNameInFileName, 'p') + "-20261201-120000.jsonl");
  EXPECT_EQ(default_file_name("python3", "S"), "vramdoc-python3-S.jsonl");
  EXPECT_EQ(default_file_name("my job\n\x1b[2J*?", "S"), "vramdoc-my_job_n_x1b_2J__-S.jsonl");
  EXPECT_EQ(default_file_name("训练", "S"), "vramdoc-训练-S.jsonl");
  EXPECT_EQ(default_file_name("", "S"), "vramdoc-job-S.jsonl");
  const std::string wide = default_file_name(std::string(100, '\xe4') + "", "S");  // invalid UTF-8
  EXPECT_LE(wide.size(), 8 + kMaxProgramNameInFileName + 9);
  // A marker line after a byte-order mark (PowerShell writes one) is still a step.
  auto m = parse_marker_line("\xef\xbb\xbfstep 3");
  ASSERT_TRUE(m);
  EXPECT_EQ(m->label, "step 3");
}

}  // namespace
}  // namespace vramdoc::timeline
