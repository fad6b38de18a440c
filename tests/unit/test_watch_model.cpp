#include <gtest/gtest.h>

#include <set>

#include "core/watch/format.hpp"
#include "watch_fixture.hpp"

using namespace vramdoc;
using namespace vramdoc::watch;

TEST(WatchHints, BandwidthBoundWhenControllerBusyAndSmsLow) {
  auto hints = compute_hints(fixture::busy_sample(), fixture::h200_static(0));
  ASSERT_EQ(hints.size(), 1U);
  EXPECT_EQ(hints[0].kind, HintKind::BandwidthBound);
  EXPECT_NE(hints[0].text.find("95%"), std::string::npos);
}

TEST(WatchHints, ComputeBoundJobGetsNoHint) {
  GpuSample s = fixture::busy_sample();
  s.sm_util_percent = 98;
  EXPECT_TRUE(compute_hints(s, fixture::h200_static(0)).empty());
}

TEST(WatchHints, UnknownUtilisationGivesNoHint) {
  GpuSample s = fixture::busy_sample();
  s.sm_util_percent.reset();
  s.pcie_rx_bytes_per_s = 60'000'000'000;
  EXPECT_TRUE(compute_hints(s, fixture::h200_static(0)).empty());
}

TEST(WatchHints, HostLinkBoundWhenPcieNearPeakAndGpuIdle) {
  GpuSample s = fixture::busy_sample();
  s.mem_util_percent = 10;
  s.sm_util_percent = 20;
  s.pcie_rx_bytes_per_s = 50'000'000'000;  // 79 % of 63 GB/s
  auto hints = compute_hints(s, fixture::h200_static(0));
  ASSERT_EQ(hints.size(), 1U);
  EXPECT_EQ(hints[0].kind, HintKind::HostLinkBound);
  GpuStatic no_peak = fixture::h200_static(0);
  no_peak.pcie_bandwidth_bytes_per_s.reset();
  EXPECT_TRUE(compute_hints(s, no_peak).empty());
}

TEST(WatchModel, ProcessesJoinDetailsByPidAndMissingOnesStayUnknown) {
  auto snap = fixture::two_gpus();
  const auto& procs = snap.gpus[0].processes;
  ASSERT_EQ(procs.size(), 2U);
  EXPECT_EQ(procs[1].details.user, "alice");
  GpuSample s = fixture::busy_sample();
  s.processes.push_back(GpuProcess{999, 0, GiB, std::nullopt, std::nullopt});
  auto view = make_gpu_view(fixture::h200_static(0), s, std::nullopt, {});
  EXPECT_FALSE(view.processes.back().details.user.has_value());
  EXPECT_EQ(fmt_container(view.processes.back().details), "n/a");
}

TEST(WatchModel, SortByMemoryPidUtilWithUnknownLast) {
  std::vector<ProcessView> p(3);
  p[0].gpu = {30, 0, 5 * GiB, 10, std::nullopt};
  p[1].gpu = {10, 0, std::nullopt, 90, std::nullopt};
  p[2].gpu = {20, 0, 9 * GiB, std::nullopt, std::nullopt};
  sort_processes(p, SortKey::Memory);
  EXPECT_EQ(p[0].gpu.pid, 20U);
  EXPECT_EQ(p[2].gpu.pid, 10U);
  sort_processes(p, SortKey::Pid);
  EXPECT_EQ(p[0].gpu.pid, 10U);
  sort_processes(p, SortKey::Util);
  EXPECT_EQ(p[0].gpu.pid, 10U);
  EXPECT_EQ(p[2].gpu.pid, 20U);
  for (auto& v : p) {  // by PID: 30 uses 5 % of a core, 20 two busy threads, 10 unknown
    if (v.gpu.pid == 30) v.usage = {5.0, std::nullopt, 60.0, std::nullopt};
    if (v.gpu.pid == 20) v.usage = {150.0, std::nullopt, std::nullopt, std::nullopt};
    if (v.gpu.pid == 10) v.usage = {std::nullopt, std::nullopt, 7200.0, std::nullopt};
  }
  sort_processes(p, SortKey::Cpu);
  EXPECT_EQ(p[0].gpu.pid, 20U);
  EXPECT_EQ(p[2].gpu.pid, 10U);  // unknown last
  sort_processes(p, SortKey::Time);
  EXPECT_EQ(p[0].gpu.pid, 10U);
  EXPECT_EQ(p[2].gpu.pid, 20U);
  // `s` visits every key once, then memory again.
  std::set<std::string> names;
  SortKey key = SortKey::Memory;
  for (int i = 0; i < 6; ++i, key = next_sort_key(key)) names.insert(sort_key_name(key));
  EXPECT_EQ(names.size(), 6U);
  EXPECT_EQ(key, SortKey::Memory);
}

TEST(WatchFormat, ThrottleReasonsNamedAndUnknownIsNotNone) {
  EXPECT_EQ(fmt_throttle(std::nullopt), "n/a");
  EXPECT_EQ(fmt_throttle(0), "none");
  EXPECT_EQ(fmt_throttle(0x4 | 0x40), "sw_power_cap,hw_thermal");
  EXPECT_EQ(fmt_throttle(1ULL << 40), "0x10000000000");
}

TEST(WatchFormat, UnknownIsNaNeverZero) {
  EXPECT_EQ(fmt_percent(std::nullopt), "n/a");
  EXPECT_EQ(fmt_percent(0U), "0%");
  EXPECT_EQ(fmt_bytes(std::nullopt), "n/a");
  EXPECT_EQ(fmt_watts(std::nullopt), "n/a");
  EXPECT_FALSE(used_fraction(GpuMemory{0, 0, std::nullopt, std::nullopt}).has_value());
}
