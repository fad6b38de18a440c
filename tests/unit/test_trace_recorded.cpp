// Traces recorded by the tracer on an H200 (2026-11-29; tests/gpu/trace_*.sh), read without a GPU.
#include <gtest/gtest.h>

#include <fstream>
#include <iterator>

#include "core/trace/analysis.hpp"
#include "core/trace/symbols.hpp"

using namespace vramdoc::trace;

namespace {

constexpr std::uint64_t MiB = 1 << 20;

std::string path_of(const char* name) { return std::string(VRAMDOC_SOURCE_DIR) + "/tests/data/traces/" + name; }

Trace load(const char* name) {
  auto t = read_trace_file(path_of(name));
  EXPECT_TRUE(t.ok()) << t.error();
  return t.ok() ? *t : Trace{};
}

std::vector<std::uint64_t> leak_bytes(const TraceAnalysis& a) {
  std::vector<std::uint64_t> out;
  for (const auto& g : a.leaks) out.push_back(g.bytes);
  return out;
}

}  // namespace

TEST(TraceRecorded, PlantedLeakHasTheThreePlantedSites) {
  const Trace t = load("h200_planted_leak.vdt");
  std::ifstream in(path_of("h200_planted_leak.vdt"), std::ios::binary);
  EXPECT_EQ(encode_trace(t), std::string(std::istreambuf_iterator<char>(in), {}));  // byte-exact
  const auto a = analyze_trace(t);
  EXPECT_EQ(a.allocations, 18U);  // 10 freed, pitch, managed, async, 3 + 1 + 1 leaked
  EXPECT_EQ(a.live, 5U);
  EXPECT_EQ(a.allocations, a.releases + a.live);
  EXPECT_EQ(leak_bytes(a), (std::vector<std::uint64_t>{5 * MiB, 3 * MiB, 3 * MiB}));
  EXPECT_EQ(a.live_bytes, 11 * MiB);
}

TEST(TraceRecorded, KilledPlantedLeakKeptItsFlushedEvents) {
  const auto a = analyze_trace(load("h200_planted_leak_killed.vdt"));
  EXPECT_EQ(leak_bytes(a), (std::vector<std::uint64_t>{5 * MiB, 3 * MiB, 3 * MiB}));
}

// Regression: Python's teardown freed the 100 kept tensors, so "alive at exit" showed no leak.
TEST(TraceRecorded, PytorchLoopThatKeepsTensorsIsAccumulating) {
  const Trace t = load("h200_pytorch_leak.vdt");
  const auto a = analyze_trace(t);
  EXPECT_EQ(a.allocations, a.releases + a.live);
  ASSERT_EQ(a.accumulating.size(), 1U);
  EXPECT_EQ(a.accumulating[0].count, 99U);
  EXPECT_EQ(a.accumulating[0].bytes, 99 * MiB);
  const auto frames = resolve_frames(ModuleMap(t), StackTable(t).ips(a.accumulating[0].stack_id), {});
  ASSERT_FALSE(frames.empty());
  EXPECT_EQ(frames[call_site_index(frames)].module, "libtorch_python.so");
  EXPECT_EQ(frames[0].module, "libcuda.so.1");
}
