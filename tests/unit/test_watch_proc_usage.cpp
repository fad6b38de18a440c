// Per-process host usage for the watch view: /proc/PID/stat parsing (fuzzed), CPU share between
// readings, PID reuse, and the signal sender's checks.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <random>

#include "backends/launcher.hpp"
#include "backends/watch/proc_usage.hpp"
#include "backends/watch/signals.hpp"
#include "mutate_text.hpp"

using namespace vramdoc;
using namespace vramdoc::backends;

namespace {

// A stat line of proc(5): utime 14, stime 15, starttime 22, rss 24 (fields counted from 1).
std::string stat_line(const std::string& comm, unsigned long utime, unsigned long stime, unsigned long start,
                      unsigned long rss) {
  return "4242 (" + comm + ") S 1 4242 4242 0 -1 4194560 100 0 0 0 " + std::to_string(utime) + " " +
         std::to_string(stime) + " 0 0 20 0 8 0 " + std::to_string(start) + " 123456789 " + std::to_string(rss) +
         " 18446744073709551615 1 1 0 0 0 0 0 0 0 0 0 0 17 3 0 0 0 0 0\n";
}

void write(const std::filesystem::path& path, const std::string& text) {
  std::filesystem::create_directories(path.parent_path());
  std::ofstream(path, std::ios::binary) << text;
}

}  // namespace

TEST(WatchProcUsage, StatFieldsEvenWithSpacesAndParenthesesInTheCommand) {
  auto stat = parse_proc_stat(stat_line("python", 150, 50, 98765, 2048));
  ASSERT_TRUE(stat.has_value());
  EXPECT_EQ(stat->cpu_ticks, 200U);
  EXPECT_EQ(stat->start_ticks, 98765U);
  EXPECT_EQ(stat->rss_pages, 2048U);
  auto odd = parse_proc_stat(stat_line("a) S 1 (b c", 1, 2, 3, 4));  // comm = "a) S 1 (b c"
  ASSERT_TRUE(odd.has_value());
  EXPECT_EQ(odd->start_ticks, 3U);
  EXPECT_FALSE(parse_proc_stat("4242 (python) S 1 2 3").has_value());
  EXPECT_FALSE(parse_proc_stat("no parenthesis at all").has_value());
  std::string bad = stat_line("x", 1, 2, 3, 4);
  bad.replace(bad.find(" 1 2 0 0 20"), 3, " 1x");  // utime not a number
  EXPECT_FALSE(parse_proc_stat(bad).has_value());
  EXPECT_EQ(parse_uptime("12345.67 54321.00\n"), 12345.67);
  EXPECT_FALSE(parse_uptime("").has_value());
  EXPECT_FALSE(parse_uptime("-1 2").has_value());
}

TEST(WatchProcUsage, FuzzedStatAndUptimeNeverCrash) {
  std::mt19937 rng(19);
  const std::string stat = stat_line("python3 train.py", 150, 50, 98765, 2048);
  for (int i = 0; i < 3000; ++i) {
    const std::string text = fuzz::mutate_text(stat, rng, "0123456789 ()-\n");
    if (parse_proc_stat(text)) {
      EXPECT_NE(text.find(')'), std::string::npos) << text;  // fields are counted after the command
    }
    if (auto up = parse_uptime(fuzz::mutate_text("12345.67 54321.00\n", rng, "0123456789.e- "))) {
      EXPECT_GE(*up, 0.0);
    }
  }
}

TEST(WatchProcUsage, CpuShareBetweenReadingsAndForgottenOnPidReuse) {
  auto root = std::filesystem::temp_directory_path() / ("vramdoc-usage-" + std::to_string(getpid()));
  write(root / "uptime", "1000.00 1.00\n");
  write(root / "7/stat", stat_line("job", 100, 0, 50000, 1000));  // started at 500 s (100 ticks/s)
  ProcessUsageTracker tracker(root.string(), ProcUnits{100, 4096});
  auto first = tracker.sample({7, 8}, 10.0);
  EXPECT_FALSE(first[7].cpu_percent.has_value());  // one reading: no share yet
  EXPECT_EQ(first[7].host_memory_bytes, 1000U * 4096);
  EXPECT_DOUBLE_EQ(*first[7].running_seconds, 500.0);
  EXPECT_EQ(first[7].start_ticks, 50000U);
  EXPECT_FALSE(first[8].host_memory_bytes.has_value());  // no /proc entry: unknown, not 0
  write(root / "7/stat", stat_line("job", 250, 50, 50000, 1000));  // 2 s of CPU in 1 s: two cores
  EXPECT_DOUBLE_EQ(*tracker.sample({7}, 11.0)[7].cpu_percent, 200.0);
  write(root / "7/stat", stat_line("other", 10, 0, 90000, 1));  // PID 7 reused by a new process
  EXPECT_FALSE(tracker.sample({7}, 12.0)[7].cpu_percent.has_value());
  std::filesystem::remove_all(root);
}

TEST(WatchSignals, SendsOnlyToTheProcessShownAndNamesTheError) {
  int error = 0;
  auto child = Process::start({"sleep", "30"}, {}, error);
  ASSERT_TRUE(child) << error;
  const auto pid = static_cast<std::uint32_t>(child->pid());
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  std::string line;
  std::getline(in, line);
  auto stat = parse_proc_stat(line);
  ASSERT_TRUE(stat.has_value());
  auto reused = send_signal(pid, stat->start_ticks + 1, watch::ProcessSignal::Terminate);  // another start time
  ASSERT_TRUE(reused.has_value());
  EXPECT_NE(reused->find("now another process"), std::string::npos);
  EXPECT_FALSE(child->poll().has_value());  // nothing was sent
  EXPECT_EQ(send_signal(pid, stat->start_ticks, watch::ProcessSignal::Kill), std::nullopt);
  EXPECT_EQ(child->wait(), 128 + 9);
  auto gone = send_signal(pid, std::nullopt, watch::ProcessSignal::Terminate);
  ASSERT_TRUE(gone.has_value());
  EXPECT_NE(gone->find("ESRCH"), std::string::npos);
  EXPECT_NE(send_signal(0, std::nullopt, watch::ProcessSignal::Terminate)->find("not a process"), std::string::npos);
}
