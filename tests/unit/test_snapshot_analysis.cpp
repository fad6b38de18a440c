// Reading and analysing PyTorch memory snapshots (src/core/snapshot/): synthetic snapshots with
// known answers (tests/data/snapshots/make_synthetic.py: PyTorch's layout and sharing).
#include <gtest/gtest.h>

#include <random>
#include <sstream>

#include "core/snapshot/analysis.hpp"
#include "core/snapshot/model.hpp"
#include "core/snapshot/render.hpp"
#include "core/units.hpp"
#include "mutate_text.hpp"
#include "test_files.hpp"

using namespace vramdoc;
using namespace vramdoc::snapshot;

namespace {

std::string data(const std::string& name) { return std::string(VRAMDOC_TEST_DATA_DIR) + "/snapshots/" + name; }

Snapshot load(const std::string& name) {
  auto s = read_snapshot_file(data(name));
  EXPECT_TRUE(s) << s.error();
  return s ? std::move(*s) : Snapshot{};
}

}  // namespace

TEST(SnapshotRead, KeepsSegmentsBlocksTracesAndSharesFrames) {
  const Snapshot s = load("synthetic_leak.pickle");
  ASSERT_EQ(s.traces.size(), 2u);
  EXPECT_TRUE(s.traces[0].empty());  // device 0 idle: an empty list before device 1's
  // 1 weights + 200 steps x (3 temps: alloc, free_requested, free_completed; 1 kept) + segment allocs
  std::size_t allocs = 0;
  for (std::size_t i = 0; i < s.traces[1].size(); ++i) allocs += s.traces[1][i].action == Action::Alloc;
  EXPECT_EQ(allocs, 1u + 200 * 4);
  EXPECT_EQ(s.frames.frames(), 8u);  // the distinct frames of the generator's stacks it used
  EXPECT_FALSE(s.segments.empty());
  for (const auto& seg : s.segments) EXPECT_EQ(seg.device, 1);
  EXPECT_EQ(s.unknown_keys, std::vector<std::string>{"some_future_key"});
  bool saw_settings = false;
  for (const auto& [k, v] : s.allocator_settings) saw_settings |= k == "roundup_power2_divisions.2" && v == "0";
  EXPECT_TRUE(saw_settings);
}

TEST(SnapshotAnalysis, LeakNamesTheLineThatKeepsMemory) {
  const auto r = analyze_snapshot(load("synthetic_leak.pickle"), "leak");
  EXPECT_EQ(r.device, 1);
  ASSERT_FALSE(r.alive.empty());
  EXPECT_EQ(r.alive[0].where, "train.py:21 keep");
  EXPECT_EQ(r.alive[0].bytes, 200u * 256 * 1024);
  EXPECT_EQ(r.alive[0].count, 200u);
  ASSERT_EQ(r.growing.size(), 1u);
  EXPECT_EQ(r.growing[0].where, "train.py:21 keep");
  EXPECT_EQ(r.growing[0].count, 200u);
  ASSERT_TRUE(r.diagnosis);
  EXPECT_EQ(r.diagnosis->verdict, timeline::Verdict::Leak) << r.diagnosis->summary;
  // The stack marks the user's frames: the torch frame of the temporaries is a library frame.
  ASSERT_FALSE(r.alive[0].stack.empty());
  EXPECT_FALSE(r.alive[0].stack[0].library);
  // The series end where the dump is: allocated = the live blocks.
  EXPECT_EQ(r.timeline->samples.back().allocated_bytes.value(), r.alive_bytes);
  EXPECT_EQ(r.timeline->samples.back().reserved_bytes.value(), r.fragmentation.reserved_bytes);
}

TEST(SnapshotAnalysis, StableLoopIsStableAndGrowsNothing) {
  const auto r = analyze_snapshot(load("synthetic_stable.pickle"), "stable");
  ASSERT_TRUE(r.diagnosis);
  EXPECT_EQ(r.diagnosis->verdict, timeline::Verdict::Stable) << r.diagnosis->summary;
  EXPECT_TRUE(r.growing.empty());
  ASSERT_EQ(r.alive.size(), 1u);
  EXPECT_EQ(r.alive[0].where, "model.py:3 __init__");
}

TEST(SnapshotAnalysis, FragmentedOomShowsStrandedBytesAndTheRequest) {
  const auto r = analyze_snapshot(load("synthetic_fragmented.pickle"), "frag");
  const auto& f = r.fragmentation;
  EXPECT_EQ(f.when, "at the OOM");
  EXPECT_EQ(f.reserved_bytes, 64 * GiB);
  EXPECT_EQ(f.allocated_bytes, 16 * GiB);
  EXPECT_EQ(f.stranded_bytes, 48 * GiB);
  EXPECT_EQ(f.largest_free_bytes, 24 * GiB);
  ASSERT_TRUE(r.oom);
  EXPECT_EQ(r.oom->requested_bytes, 32 * GiB);
  EXPECT_EQ(r.oom->device_free_bytes.value(), 10 * GiB);
  EXPECT_EQ(r.oom->alive_bytes, 16 * GiB);
  EXPECT_EQ(r.oom->largest_free_bytes.value(), 24 * GiB);
  ASSERT_TRUE(r.diagnosis);
  EXPECT_EQ(r.diagnosis->verdict, timeline::Verdict::Fragmentation) << r.diagnosis->summary;
}

TEST(SnapshotAnalysis, ChartBandsAddUpToTheAllocatedSeries) {
  const auto r = analyze_snapshot(load("synthetic_leak.pickle"), "leak");
  const auto& c = r.chart;
  ASSERT_EQ(c.bytes.size(), c.sites.size());
  ASSERT_EQ(c.t.size(), 600u);
  EXPECT_EQ(c.sites.back(), "other");
  // Each column is the moment of its bucket's highest total: the highest column is the peak.
  std::uint64_t highest = 0, peak = 0;
  for (std::size_t b = 0; b < c.t.size(); ++b) {
    std::uint64_t sum = 0;
    for (const auto& band : c.bytes) sum += band[b];
    highest = std::max(highest, sum);
  }
  for (const auto& s : r.timeline->samples) peak = std::max(peak, s.allocated_bytes.value_or(0));
  EXPECT_EQ(highest, peak);
  EXPECT_EQ(c.sites[0], "train.py:21 keep");  // the band of the largest call site comes first
}

TEST(SnapshotRender, JsonHasSchemaAndIntegerBytes) {
  const auto r = analyze_snapshot(load("synthetic_fragmented.pickle"), "frag");
  const auto j = snapshot_json(r);
  EXPECT_EQ(j["schema"], kSnapshotSchema);
  EXPECT_TRUE(j["alive_bytes"].is_number_unsigned());
  EXPECT_EQ(j["fragmentation"]["stranded_bytes"].get<std::uint64_t>(), 48 * GiB);
  EXPECT_TRUE(j["history"].get<bool>());
  EXPECT_EQ(j["oom"]["requested_bytes"].get<std::uint64_t>(), 32 * GiB);
  const std::string text = render_snapshot_text(r);
  EXPECT_NE(text.find("asked for 32.00 GiB"), std::string::npos) << text;
  const std::string html = render_snapshot_html(r);
  EXPECT_NE(html.find("<figure class=\"chart\" id=\"snapshot-stacked\">"), std::string::npos);
  EXPECT_NE(html.find("class='segments chart-wide'"), std::string::npos);
}

TEST(SnapshotRead, RefusesWhatIsNotASnapshot) {
  std::istringstream list(std::string("\x80\x04]\x94.", 5));  // []
  auto r = read_snapshot(list);
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().find("not a PyTorch memory snapshot"), std::string::npos);
  EXPECT_FALSE(read_snapshot_file(data("does-not-exist.pickle")));
  EXPECT_TRUE(looks_like_pickle(std::string("\x80\x04", 2)));
  EXPECT_FALSE(looks_like_pickle("{\"v\": 1}"));
}

TEST(SnapshotRead, TruncatedAtEveryByteIsAnError) {
  const std::string full = vramdoc::test::file_text(data("synthetic_fragmented.pickle"));
  for (std::size_t n = 0; n < full.size(); ++n) {
    std::istringstream in(full.substr(0, n));
    EXPECT_FALSE(read_snapshot(in)) << "cut at " << n;
  }
}

TEST(SnapshotRead, MutatedSnapshotsNeverCrashAndAnalyseWhenRead) {
  // Random edits (bytes replaced by opcodes and digits, runs cut or repeated): each either reads
  // and analyses, or gives an error. Run under the sanitizers in CI's debug build.
  const std::string full = vramdoc::test::file_text(data("synthetic_fragmented.pickle"));
  std::mt19937 rng(17);
  static const char kOpcodes[] = "()]}aeustKJM\x8a\x8c\x94hjqr\x85\x86\x87N\x88\x89.\x95\xff\x00" "0123456789";
  const std::string alphabet(kOpcodes, sizeof kOpcodes - 1);
  std::size_t read_ok = 0;
  for (int i = 0; i < 3000; ++i) {
    std::istringstream in(fuzz::mutate_text(full, rng, alphabet));
    auto s = read_snapshot(in);
    if (!s) {
      EXPECT_FALSE(s.error().empty());
      continue;
    }
    ++read_ok;
    const auto r = analyze_snapshot(*s, "mutant");
    EXPECT_FALSE(render_snapshot_text(r).empty());
  }
  EXPECT_GT(read_ok, 0u);
}
