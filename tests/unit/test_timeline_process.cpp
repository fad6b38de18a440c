// `run`'s process side: the job's process tree from procfs (a fake /proc and a live one), and the
// step period found in a signal when a timeline has no marks.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>

#include "backends/run/job.hpp"
#include "core/timeline/classify.hpp"
#include "core/timeline/reader.hpp"
#include "test_files.hpp"

namespace vramdoc {
namespace {

namespace fs = std::filesystem;

void fake_proc(const fs::path& root, int pid, const std::string& comm, int ppid, int pgrp) {
  fs::create_directories(root / std::to_string(pid));
  std::ofstream(root / std::to_string(pid) / "stat") << pid << " (" << comm << ") S " << ppid << " " << pgrp << " 1 0 -1\n";
}

TEST(TimelineProcess, TreeFromAFakeProc) {
  const fs::path root = fs::temp_directory_path() / ("vramdoc-proc-" + std::to_string(getpid()));
  fs::remove_all(root);
  fake_proc(root, 100, "python3", 1, 100);           // the job
  fake_proc(root, 101, "pt_data_worker", 100, 100);  // a loader worker
  fake_proc(root, 102, "torchrun (rank 1)", 100, 100);
  fake_proc(root, 103, "a) b (c", 102, 100);          // parentheses in the name
  fake_proc(root, 200, "orphan", 1, 100);            // re-parented, still in the job's group
  fake_proc(root, 300, "bash", 1, 300);              // unrelated
  fs::create_directories(root / "self");
  auto pids = backends::job_processes(100, root.string());
  std::sort(pids.begin(), pids.end());
  EXPECT_EQ(pids, (std::vector<pid_t>{100, 101, 102, 103, 200}));
  fs::remove_all(root);
}

TEST(TimelineProcess, TreeOfALiveJob) {
  int error = 0;
  auto job = backends::Job::start({"sh", "-c", "sleep 2 & sleep 2 & echo up; wait"}, {}, error);
  ASSERT_TRUE(job) << error;
  std::vector<pid_t> pids;
  for (int i = 0; i < 100 && pids.size() < 3; ++i) {
    usleep(20000);
    pids = backends::job_processes(job->pid());
  }
  EXPECT_GE(pids.size(), 3u);  // sh and its two sleeps
  job->signal(SIGTERM);
  job->pump_output([](const std::string&) {});
  EXPECT_EQ(job->wait(), 128 + SIGTERM);
}

TEST(TimelineProcess, NoSuchCommand) {
  int error = 0;
  EXPECT_FALSE(backends::Job::start({"no-such-command-vramdoc"}, {}, error));
  EXPECT_EQ(error, ENOENT);
}

// Without marks the step time comes from the allocated column's period; it must agree with what
// the marks say (the shared leak recording: 120 steps).
TEST(TimelineProcess, StepPeriodFromTheSignal) {
  const std::string text = vramdoc::test::file_text(std::string(VRAMDOC_TEST_DATA_DIR) + "/timelines/leak_tensor.json");
  auto tl = timeline::read_timeline(text, "leak_tensor.json");
  ASSERT_TRUE(tl.ok());
  const auto with_marks = timeline::classify(*tl);
  ASSERT_TRUE(with_marks.evidence.step_seconds);
  tl->marks.clear();
  const auto without = timeline::classify(*tl);
  EXPECT_EQ(without.evidence.step_source, "period found in the signal");
  ASSERT_TRUE(without.evidence.step_seconds);
  EXPECT_NEAR(*without.evidence.step_seconds, *with_marks.evidence.step_seconds, 0.25 * *with_marks.evidence.step_seconds);
  EXPECT_EQ(without.verdict, timeline::Verdict::Leak);
}

}  // namespace
}  // namespace vramdoc
