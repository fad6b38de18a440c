#include <gtest/gtest.h>

#include <sstream>

#include "core/table.hpp"
#include "core/watch/screen.hpp"
#include "watch_fixture.hpp"

using namespace vramdoc;
using namespace vramdoc::watch;

namespace {

std::vector<std::string> split_lines(const std::string& frame) {
  std::vector<std::string> out;
  std::istringstream in(frame);
  for (std::string l; std::getline(in, l);) out.push_back(l);
  return out;
}

}  // namespace

TEST(WatchScreen, KeysDecodeIncludingArrowsAndIgnoreNoise) {
  auto keys = parse_keys("s\x1b[Cx3\x1b[Dq\x1b[Z");
  ASSERT_EQ(keys.size(), 5U);
  EXPECT_EQ(keys[0].action, Action::CycleSort);
  EXPECT_EQ(keys[1].action, Action::NextGpu);
  EXPECT_EQ(keys[2].action, Action::PickGpu);
  EXPECT_EQ(keys[2].gpu_position, 3U);
  EXPECT_EQ(keys[3].action, Action::PrevGpu);
  EXPECT_EQ(keys[4].action, Action::Quit);
}

TEST(WatchScreen, SelectionWrapsAndIgnoresDigitsPastTheLastGpu) {
  ScreenState s;
  s = apply(s, {Action::PrevGpu}, 3);
  EXPECT_EQ(s.selected, 2U);
  s = apply(s, {Action::NextGpu}, 3);
  EXPECT_EQ(s.selected, 0U);
  s = apply(s, {Action::PickGpu, 7}, 3);
  EXPECT_EQ(s.selected, 0U);
  s = apply(s, {Action::PickGpu, 1}, 3);
  EXPECT_EQ(s.selected, 1U);
  s = apply(s, {Action::NextGpu}, 0);  // no GPU: no crash
  EXPECT_FALSE(apply(s, {Action::CycleSort}, 3).quit);
  EXPECT_TRUE(apply(s, {Action::Quit}, 3).quit);
}

TEST(WatchScreen, FrameIsExactlyRowsByColsAtEverySize) {
  auto snap = fixture::two_gpus();
  MemoryHistory history(4);
  for (int i = 0; i < 6; ++i) history.push(snap);
  for (std::size_t rows : {1U, 5U, 24U, 60U}) {
    for (std::size_t cols : {10U, 40U, 80U, 200U}) {
      auto lines = split_lines(render_screen(snap, history, {}, rows, cols, "12:00:00"));
      ASSERT_EQ(lines.size(), rows) << rows << "x" << cols;
      for (const auto& l : lines) EXPECT_EQ(display_width(l), cols) << rows << "x" << cols << ": " << l;
    }
  }
}

TEST(WatchScreen, ShowsSelectedGpuProcessesInSortOrderAndFailedGpuMessage) {
  auto snap = fixture::two_gpus();
  MemoryHistory history;
  history.push(snap);
  ScreenState state;
  std::string frame = render_screen(snap, history, state, 30, 120);
  EXPECT_NE(frame.find("sort: memory"), std::string::npos);
  EXPECT_LT(frame.find("python train.py"), frame.find("./infer"));  // 30 GiB before 10 GiB
  EXPECT_NE(frame.find("bandwidth-bound"), std::string::npos);
  EXPECT_NE(frame.find("1 NVIDIA H200"), std::string::npos);
  EXPECT_NE(frame.find("not read: NVML: GPU is lost"), std::string::npos);
  state.sort = SortKey::Pid;
  frame = render_screen(snap, history, state, 30, 120);
  EXPECT_GT(frame.find("python train.py"), frame.find("./infer"));  // pid 77 before 1234
  state.selected = 1;
  frame = render_screen(snap, history, state, 30, 120);
  EXPECT_EQ(frame.find("python train.py"), std::string::npos);
}

TEST(WatchScreen, TooSmallTerminalSaysWhatIsHidden) {
  auto lines = split_lines(render_screen(fixture::two_gpus(), MemoryHistory{}, {}, 6, 80));
  EXPECT_EQ(lines.back().rfind("... ", 0), 0U);
}

TEST(WatchScreen, SparklineAndMeter) {
  std::deque<std::optional<double>> samples = {0.0, std::nullopt, 1.0};
  EXPECT_EQ(sparkline(samples, 4), " \u2581 \u2588");  // padding, lowest, unknown, full
  EXPECT_EQ(sparkline(samples, 1), "\u2588");
  EXPECT_EQ(meter(0.5, 6), "[##..]");
  EXPECT_EQ(meter(std::nullopt, 7), "[ n/a ]");
  EXPECT_EQ(fit("ab\u2588c", 3), "ab\u2588");
  EXPECT_EQ(fit("a", 3), "a  ");
}

TEST(WatchScreen, HistoryKeepsCapacityPerGpuAndUnknownForFailedSamples) {
  MemoryHistory history(3);
  auto snap = fixture::two_gpus();
  for (int i = 0; i < 5; ++i) history.push(snap);
  EXPECT_EQ(history.of(0).size(), 3U);
  EXPECT_NEAR(*history.of(0).back(), 40.0 / 140.0, 1e-9);
  EXPECT_FALSE(history.of(1).back().has_value());
  EXPECT_TRUE(history.of(9).empty());
}
