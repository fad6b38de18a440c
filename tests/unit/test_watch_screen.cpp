#include <gtest/gtest.h>

#include <algorithm>
#include <sstream>

#include "core/table.hpp"
#include "core/watch/screen.hpp"
#include "watch_fixture.hpp"
#include "golden.hpp"

using namespace vramdoc;
using namespace vramdoc::watch;

namespace {

std::vector<std::string> split_lines(const std::string& frame) {
  std::vector<std::string> out;
  std::istringstream in(frame);
  for (std::string l; std::getline(in, l);) out.push_back(l);
  return out;
}

// Both GPUs busy (the second with its own processes), for the process list and the GPU label.
Snapshot busy_pair() {
  auto snap = fixture::two_gpus(false);
  auto second = fixture::busy_sample();
  second.index = 1;
  second.processes = {GpuProcess{4321, 1, 50 * GiB, std::nullopt, std::nullopt}};
  std::map<std::uint32_t, ProcessDetails> details;
  details[4321] = ProcessDetails{"carol", "torchrun --nproc 2 finetune.py", std::nullopt, std::nullopt, "torchrun", std::nullopt, std::nullopt};
  std::map<std::uint32_t, ProcessUsage> usage;
  usage[4321] = ProcessUsage{12.0, 3 * GiB, 200000.0, 70000};
  snap.gpus[1] = make_gpu_view(fixture::h200_static(1), second, std::nullopt, details, usage);
  return snap;
}

ScreenState press(ScreenState state, const std::string& keys, const Snapshot& snap) {
  for (const auto& key : parse_keys(keys)) state = apply(state, key, snap);
  return state;
}

}  // namespace

TEST(WatchScreen, KeysDecodeIncludingArrowsAndIgnoreNoise) {
  auto keys = parse_keys("s\x1b[Cx3\x1b[Dq\x1b[Z\x1b[A\x1b[BjkTKIy");
  ASSERT_EQ(keys.size(), 15U);
  EXPECT_EQ(keys[0].action, Action::CycleSort);
  EXPECT_EQ(keys[1].action, Action::NextGpu);
  EXPECT_EQ(keys[2].action, Action::Other);
  EXPECT_EQ(keys[3].action, Action::PickGpu);
  EXPECT_EQ(keys[3].gpu_position, 3U);
  EXPECT_EQ(keys[4].action, Action::PrevGpu);
  EXPECT_EQ(keys[5].action, Action::Quit);
  EXPECT_EQ(keys[6].action, Action::Other);  // an unknown escape sequence
  EXPECT_EQ(keys[7].action, Action::ProcessUp);
  EXPECT_EQ(keys[8].action, Action::ProcessDown);
  EXPECT_EQ(keys[9].action, Action::ProcessDown);
  EXPECT_EQ(keys[10].action, Action::ProcessUp);
  EXPECT_EQ(keys[11].signal, ProcessSignal::Terminate);
  EXPECT_EQ(keys[12].signal, ProcessSignal::Kill);
  EXPECT_EQ(keys[13].signal, ProcessSignal::Interrupt);
  EXPECT_EQ(keys[14].action, Action::Yes);
  EXPECT_EQ(parse_keys("y")[0].action, Action::Yes);
}

TEST(WatchScreen, GpuSelectionWrapsAndIgnoresDigitsPastTheLastGpu) {
  const auto snap = fixture::two_gpus();
  ScreenState s;
  s = apply(s, {Action::PrevGpu}, snap);
  EXPECT_EQ(s.selected, 1U);
  s = apply(s, {Action::NextGpu}, snap);
  EXPECT_EQ(s.selected, 0U);
  s = apply(s, {Action::PickGpu, 7}, snap);
  EXPECT_EQ(s.selected, 0U);
  s = apply(s, {Action::PickGpu, 1}, snap);
  EXPECT_EQ(s.selected, 1U);
  EXPECT_EQ(apply(s, {Action::NextGpu}, Snapshot{}).selected, 1U);  // no GPU: no crash
  EXPECT_FALSE(apply(s, {Action::CycleSort}, snap).quit);
  EXPECT_TRUE(apply(s, {Action::Quit}, snap).quit);
}

// The bug report: the title said "GPU 1 of 2" while GPU 0 was shown. The title names the GPU
// shown in detail by its NVML index, then its place in the list.
TEST(WatchScreen, GpuLabelNamesTheSelectedGpu) {
  auto snap = busy_pair();
  ScreenState s;
  auto frame = render_screen(snap, MemoryHistory{}, s, 30, 140);
  EXPECT_NE(split_lines(frame)[0].find("GPU 0 (1 of 2)"), std::string::npos) << split_lines(frame)[0];
  EXPECT_NE(frame.find("\nGPU 0  NVIDIA H200"), std::string::npos);
  s = press(s, "\x1b[C", snap);
  frame = render_screen(snap, MemoryHistory{}, s, 30, 140);
  EXPECT_NE(split_lines(frame)[0].find("GPU 1 (2 of 2)"), std::string::npos);
  EXPECT_NE(frame.find("\nGPU 1  NVIDIA H200"), std::string::npos);
  snap.gpus.erase(snap.gpus.begin());  // `watch --device 1`: the only GPU is number 1
  frame = render_screen(snap, MemoryHistory{}, {}, 30, 140);
  EXPECT_NE(split_lines(frame)[0].find("GPU 1 (1 of 1)"), std::string::npos);
}

TEST(WatchScreen, OneProcessListForAllGpusInEachSortOrder) {
  const auto snap = busy_pair();
  auto pids = [&](SortKey key) {
    std::vector<std::uint32_t> out;
    for (const auto& row : process_rows(snap, key)) out.push_back(row.process.gpu.pid);
    return out;
  };
  EXPECT_EQ(pids(SortKey::Memory), (std::vector<std::uint32_t>{4321, 1234, 77}));
  EXPECT_EQ(pids(SortKey::Gpu), (std::vector<std::uint32_t>{77, 1234, 4321}));
  EXPECT_EQ(pids(SortKey::Pid), (std::vector<std::uint32_t>{77, 1234, 4321}));
  EXPECT_EQ(pids(SortKey::Cpu), (std::vector<std::uint32_t>{1234, 4321, 77}));  // unknown CPU last
  EXPECT_EQ(pids(SortKey::Time), (std::vector<std::uint32_t>{4321, 1234, 77}));
  SortKey key = SortKey::Memory;
  std::vector<std::string> names;
  for (int i = 0; i < 6; ++i, key = next_sort_key(key)) names.push_back(sort_key_name(key));
  EXPECT_EQ(names, (std::vector<std::string>{"memory", "gpu", "pid", "cpu", "time", "util"}));
  EXPECT_EQ(key, SortKey::Memory);
}

TEST(WatchScreen, ProcessSelectionFollowsTheProcessAcrossSortsAndStopsAtTheEnds) {
  const auto snap = busy_pair();
  ScreenState s = press({}, "j", snap);  // the first row
  ASSERT_TRUE(s.process.has_value());
  EXPECT_EQ(s.process->pid, 4321U);
  s = press(s, "jjjj", snap);  // stops at the last row
  EXPECT_EQ(s.process->pid, 77U);
  s = press(s, "s", snap);  // by GPU: 77 is now first, still selected
  EXPECT_EQ(s.process->pid, 77U);
  s = press(s, "k", snap);
  EXPECT_EQ(s.process->pid, 77U);
  s = press(s, "\x1b[B", snap);
  EXPECT_EQ(s.process, (ProcessKey{0, 1234}));
  EXPECT_EQ(press({}, "\x1b[A", snap).process->pid, 77U);  // up first: the last row
}

TEST(WatchScreen, SignalIsAskedThenSentOnlyAfterYes) {
  const auto snap = busy_pair();
  ScreenState s = press({}, "T", snap);  // nothing selected: a hint, no prompt
  EXPECT_FALSE(s.prompt.has_value());
  EXPECT_NE(s.status.find("select a process first"), std::string::npos);
  s = press({}, "jK", snap);
  ASSERT_TRUE(s.prompt.has_value());
  EXPECT_EQ(s.prompt->signal, ProcessSignal::Kill);
  EXPECT_EQ(s.prompt->process, (ProcessKey{1, 4321}));
  EXPECT_EQ(s.prompt->start_ticks, 70000U);
  EXPECT_EQ(s.prompt->command, "torchrun --nproc 2 finetune.py");
  EXPECT_FALSE(s.request.has_value());
  auto cancelled = press(s, "q", snap);  // any key but y cancels, q too (it does not quit)
  EXPECT_FALSE(cancelled.prompt || cancelled.request || cancelled.quit);
  EXPECT_EQ(cancelled.status, "cancelled: no signal sent");
  auto confirmed = press(s, "y", snap);
  ASSERT_TRUE(confirmed.request.has_value());
  EXPECT_EQ(confirmed.request->process.pid, 4321U);
  EXPECT_FALSE(confirmed.prompt.has_value());
  EXPECT_EQ(signal_outcome(*confirmed.request, std::nullopt), "SIGKILL sent to PID 4321 (torchrun --nproc 2 finetune.py)");
  EXPECT_EQ(signal_outcome(*confirmed.request, "PID 4321: operation not permitted (EPERM)"),
            "SIGKILL not sent: PID 4321: operation not permitted (EPERM)");
}

TEST(WatchScreen, FrameIsExactlyRowsByColsAtEverySize) {
  auto snap = busy_pair();
  MemoryHistory history(4);
  for (int i = 0; i < 6; ++i) history.push(snap);
  ScreenState prompt = press({}, "jT", snap);
  for (const ScreenState& state : {ScreenState{}, prompt}) {
    for (std::size_t rows : {1U, 2U, 5U, 12U, 24U, 60U}) {
      for (std::size_t cols : {10U, 40U, 80U, 200U}) {
        auto lines = split_lines(render_screen(snap, history, state, rows, cols, "12:00:00"));
        ASSERT_EQ(lines.size(), rows) << rows << "x" << cols;
        for (const auto& l : lines) EXPECT_EQ(display_width(l), cols) << rows << "x" << cols << ": " << l;
      }
    }
  }
}

// Golden frames: a wide terminal with a process selected, and a short one where the list
// scrolls to keep the selection in view, with the confirmation prompt on the bottom line.
TEST(WatchScreen, GoldenFrames) {
  auto snap = busy_pair();
  MemoryHistory history;
  for (int i = 0; i < 3; ++i) history.push(snap);
  ScreenState selected = press({}, "jj", snap);
  vramdoc::test::expect_golden("watch/screen-132x24.txt", render_screen(snap, history, selected, 24, 132, "12:00:00") + "\n");
  for (std::uint32_t pid = 5000; pid < 5012; ++pid) {
    snap.gpus[1].processes.push_back({GpuProcess{pid, 1, GiB * (pid - 4990), std::nullopt, std::nullopt}, {}, {}});
  }
  ScreenState asking = press({}, "jjjjjjjjjjI", snap);
  vramdoc::test::expect_golden("watch/screen-100x20.txt", render_screen(snap, history, asking, 20, 100, "12:00:00") + "\n");
}

TEST(WatchScreen, ColourOnlyWhenAskedAndTheSelectedRowReversed) {
  auto snap = busy_pair();
  ScreenState s = press({}, "j", snap);
  const std::string plain = render_screen(snap, MemoryHistory{}, s, 30, 140);
  EXPECT_EQ(plain.find('\x1b'), std::string::npos);
  const std::string coloured = render_screen(snap, MemoryHistory{}, s, 30, 140, "", Style{true});
  EXPECT_NE(coloured.find("\x1b[7m"), std::string::npos);   // the selected row
  EXPECT_NE(coloured.find("\x1b[32m#"), std::string::npos);  // a bar's filled part
  EXPECT_NE(coloured.find("\x1b[33mbandwidth-bound"), std::string::npos);  // a hint
  for (const auto& l : split_lines(coloured)) EXPECT_EQ(display_width(l), 140U) << l;
}

TEST(WatchScreen, TooSmallTerminalSaysWhatIsHidden) {
  auto lines = split_lines(render_screen(fixture::two_gpus(), MemoryHistory{}, {}, 6, 80));
  EXPECT_EQ(lines.back().rfind("... ", 0), 0U);
}

TEST(WatchScreen, SparklineMeterAndFit) {
  std::deque<std::optional<double>> samples = {0.0, std::nullopt, 1.0};
  EXPECT_EQ(sparkline(samples, 4), " \u2581 \u2588");  // padding, lowest, unknown, full
  EXPECT_EQ(sparkline(samples, 1), "\u2588");
  EXPECT_EQ(meter(0.5, 6), "[##..]");
  EXPECT_EQ(meter(std::nullopt, 7), "[ n/a ]");
  EXPECT_EQ(fit("ab\u2588c", 3), "ab\u2588");
  EXPECT_EQ(fit("a", 3), "a  ");
  EXPECT_EQ(fit("\x1b[31mabc\x1b[0m", 2), "\x1b[31mab\x1b[0m");  // codes take no cell; a cut resets
  EXPECT_EQ(fit("\x1b[31ma\x1b[0m", 2), "\x1b[31ma\x1b[0m ");
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

// Issue 32, item 4: the monitor against nvitop / nvtop.

namespace {

// A history with some shape: memory rising, utilisation swinging, both GPUs and their processes.
MemoryHistory varied_history(Snapshot snap, int samples) {
  MemoryHistory history;
  for (int i = 0; i < samples; ++i) {
    auto& s = *snap.gpus[0].sample;
    s.memory.used_bytes = (20 + (i * 100) / samples) * GiB;
    s.sm_util_percent = static_cast<unsigned>((i * 37) % 101);
    for (auto& p : snap.gpus[0].processes) p.gpu.used_bytes = (5 + (i * 20) / samples) * GiB;
    history.push(snap);
  }
  return history;
}

// No process in a container.
Snapshot without_containers() {
  auto snap = busy_pair();
  for (auto& gpu : snap.gpus)
    for (auto& p : gpu.processes) p.details.container_id.reset(), p.details.container_pid.reset();
  return snap;
}

}  // namespace

// Whole frames at the two sizes of the issue: multi-line plots of the GPU and of the selected process.
TEST(WatchScreen, Issue32GoldenFramesAt80x24And160x45) {
  const auto snap = busy_pair();
  const auto history = varied_history(snap, 200);
  ScreenState selected = press({}, "jj", snap);  // alice's process on GPU 0
  vramdoc::test::expect_golden("watch/screen-80x24.txt", render_screen(snap, history, selected, 24, 80, "12:00:00") + "\n");
  vramdoc::test::expect_golden("watch/screen-160x45.txt", render_screen(snap, history, selected, 45, 160, "12:00:00") + "\n");
  vramdoc::test::expect_golden("watch/screen-help-80x24.txt", render_screen(snap, history, press({}, "h", snap), 24, 80) + "\n");
}

// At 80x24 the legend, the busy / power / temperature figures and the hint were cut and commands got
// 11 characters: every column shown is whole, and nothing is cut at the right edge.
TEST(WatchScreen, Issue32EveryColumnReadableAt80And160) {
  const auto snap = busy_pair();
  const auto history = varied_history(snap, 50);
  for (const auto& [rows, cols] : {std::pair{24U, 80U}, std::pair{45U, 160U}}) {
    SCOPED_TRACE(std::to_string(rows) + "x" + std::to_string(cols));
    const auto lines = split_lines(render_screen(snap, history, {}, rows, cols, "12:00:00"));
    EXPECT_NE(lines[0].find("h help  q quit"), std::string::npos) << lines[0];
    const std::string& gpu0 = lines[1];
    for (const char* figure : {"40.00", "140.00 GiB", "40%", "95%", "310 W", "45 C"})
      EXPECT_NE(gpu0.find(figure), std::string::npos) << figure << " in " << gpu0;
    std::string all;
    for (const auto& l : lines) all += l + "\n";
    for (const char* word : {"bandwidth-bound:", "controller", "95%", "busy", "while", "kernels", "only", "40%", "of", "time"})
      EXPECT_NE(all.find(word), std::string::npos) << "the hint's word " << word;
    EXPECT_NE(all.find("(peak 63.0 GB/s)"), std::string::npos);
    EXPECT_NE(all.find("python train.py --lr 0.1"), std::string::npos) << "a whole command";
    EXPECT_NE(all.find("torchrun --nproc 2 finetune.py"), std::string::npos);
    for (const auto& l : lines) EXPECT_EQ(display_width(l), cols) << l;
  }
}

TEST(WatchScreen, Issue32EmptyContainerColumnTakesNoWidthAndColumnsDropByPriority) {
  const auto rows = process_rows(without_containers(), SortKey::Memory);
  auto header = [&](std::size_t cols) { return process_table(rows, std::nullopt, cols)[0]; };
  EXPECT_EQ(header(200).find("CONTAINER"), std::string::npos);
  EXPECT_NE(header(200).find("HOST MEM"), std::string::npos);
  const auto with = process_rows(busy_pair(), SortKey::Memory);
  EXPECT_NE(process_table(with, std::nullopt, 200)[0].find("CONTAINER"), std::string::npos);
  // Narrower: CONTAINER, then HOST MEM, then TIME go before COMMAND is squeezed; PID and GPU MEM stay.
  const std::string narrow = process_table(with, std::nullopt, 60)[0];
  for (const char* gone : {"CONTAINER", "HOST MEM", "TIME"}) EXPECT_EQ(narrow.find(gone), std::string::npos) << gone;
  for (const char* kept : {"PID", "GPU MEM", "COMMAND"}) EXPECT_NE(narrow.find(kept), std::string::npos) << kept;
  for (const auto& l : process_table(with, std::nullopt, 60)) EXPECT_EQ(display_width(l), 60U) << l;
}

TEST(WatchScreen, Issue32HelpOpensWithHOrQuestionMarkAndAnyKeyClosesIt) {
  const auto snap = busy_pair();
  for (const char* key : {"h", "?"}) {
    ScreenState s = press({}, key, snap);
    EXPECT_TRUE(s.help) << key;
    const std::string frame = render_screen(snap, MemoryHistory{}, s, 24, 80);
    EXPECT_NE(frame.find("reverse the sort order"), std::string::npos);
    s = press(s, "q", snap);  // closes the help, does not quit
    EXPECT_FALSE(s.help);
    EXPECT_FALSE(s.quit);
  }
}

TEST(WatchScreen, Issue32ReverseSort) {
  const auto snap = busy_pair();
  std::vector<std::uint32_t> forward, backward;
  for (const auto& r : shown_processes(snap, {})) forward.push_back(r.process.gpu.pid);
  ScreenState s = press({}, "r", snap);
  EXPECT_TRUE(s.reverse);
  for (const auto& r : shown_processes(snap, s)) backward.push_back(r.process.gpu.pid);
  std::reverse(backward.begin(), backward.end());
  EXPECT_EQ(forward, backward);
  EXPECT_NE(split_lines(render_screen(snap, MemoryHistory{}, s, 24, 80))[0].find("sort: memory (reversed)"), std::string::npos);
  EXPECT_FALSE(press(s, "r", snap).reverse);
}

TEST(WatchScreen, Issue32FilterTypedAfterSlash) {
  const auto snap = busy_pair();
  ScreenState s = press({}, "/CaRq", snap);  // q is text while typing: no quit
  EXPECT_FALSE(s.quit);
  EXPECT_TRUE(s.typing_filter);
  EXPECT_EQ(s.filter, "CaRq");
  EXPECT_NE(render_screen(snap, MemoryHistory{}, s, 24, 80).find("filter: CaRq_"), std::string::npos);
  s = press(s, "\x7f\r", snap);  // Backspace, Enter
  EXPECT_FALSE(s.typing_filter);
  ASSERT_EQ(shown_processes(snap, s).size(), 1U);  // carol's, matched in any case
  EXPECT_EQ(shown_processes(snap, s)[0].process.gpu.pid, 4321U);
  EXPECT_NE(split_lines(render_screen(snap, MemoryHistory{}, s, 24, 80))[0].find("filter: CaR"), std::string::npos);
  EXPECT_EQ(shown_processes(snap, press(s, "/77\r", snap)).size(), 0U);  // appended: "CaR77" matches none
  const std::string none = render_screen(snap, MemoryHistory{}, press(s, "/77\r", snap), 24, 80);
  EXPECT_NE(none.find("No process matches the filter"), std::string::npos);
  s = press(s, "/\x1b", snap);  // a lone Esc clears it
  EXPECT_TRUE(s.filter.empty());
  EXPECT_EQ(shown_processes(snap, s).size(), 3U);
}

TEST(WatchScreen, Issue32PlotFillsFromTheBottomOneColumnPerSample) {
  const std::deque<std::optional<double>> samples = {0.0, 0.5, std::nullopt, 1.0, 0.75};
  const auto rows = plot(samples, 6, 2);
  ASSERT_EQ(rows.size(), 2U);
  EXPECT_EQ(rows[0], "    \u2588\u2584");             // top: padding, empty, empty, unknown, full, half
  EXPECT_EQ(rows[1], " \u2581\u2588 \u2588\u2588");   // bottom: padding, 0 shows a sliver, full, unknown, full, full
  for (const auto& r : rows) EXPECT_EQ(display_width(r), 6U);
}

TEST(WatchScreen, Issue32HistoryOfUtilisationAndOfEachProcess) {
  const auto snap = busy_pair();
  const auto history = varied_history(snap, 5);
  ASSERT_EQ(history.util_of(0).size(), 5U);
  EXPECT_NEAR(*history.util_of(0).back(), ((4 * 37) % 101) / 100.0, 1e-9);
  ASSERT_EQ(history.process_of(0, 1234).size(), 5U);
  EXPECT_NEAR(*history.process_of(0, 1234).back(), double((5 + 80 / 5) * GiB) / double(140 * GiB), 1e-9);
  EXPECT_TRUE(history.process_of(0, 99).empty());
  MemoryHistory idle;
  idle.push(fixture::two_gpus(false));
  EXPECT_FALSE(idle.util_of(1).back().has_value());  // GPU 1 reports no utilisation: unknown, not 0
}
