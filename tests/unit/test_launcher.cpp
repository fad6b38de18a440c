// The one process launcher (backends/launcher): streams, environment, process groups, stopping
// with a grace period, exit status as a shell reports it.
#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include "backends/launcher.hpp"
#include "test_files.hpp"

using namespace vramdoc::backends;
namespace fs = std::filesystem;

namespace {

fs::path temp_dir(const std::string& name) {
  const auto dir = fs::temp_directory_path() / (name + "-" + std::to_string(getpid()));
  fs::create_directories(dir);
  return dir;
}

std::unique_ptr<Process> start(const std::vector<std::string>& argv, const LaunchOptions& options = {}) {
  int error = 0;
  auto p = Process::start(argv, options, error);
  EXPECT_TRUE(p) << "errno " << error;
  return p;
}

}  // namespace

TEST(Launcher, CaptureOutputReadsStdoutOnly) {
  auto out = capture_output({"sh", "-c", "echo to-stdout; echo to-stderr >&2"});
  ASSERT_TRUE(out.ok()) << out.error();
  EXPECT_EQ(*out, "to-stdout\n");
  auto missing = capture_output({"no-such-command-vramdoc"});
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.error().find("no-such-command-vramdoc"), std::string::npos) << missing.error();
}

// Issue 25: every read of a peer is bounded. A program that never stops writing (addr2line on a
// hostile file) is stopped past kMaxCapturedBytes, not read into memory without end.
TEST(Launcher, CaptureOutputOfAProgramThatNeverStopsIsBounded) {
  auto endless = capture_output({"cat", "/dev/zero"});
  ASSERT_FALSE(endless.ok());
  EXPECT_NE(endless.error().find("cat wrote more than 64 MiB: stopped"), std::string::npos) << endless.error();
}

// Issue 25: a job's background child that outlives it keeps its output: relay_output hands the
// pipe to a relay that passes the rest on (the child died of SIGPIPE once vramdoc stopped reading).
TEST(Launcher, RelayKeepsPassingOutputAfterUs) {
  LaunchOptions options;
  options.out = Stream::pipe();
  options.err = Stream::null();
  int error_number = 0;
  const std::string flag = ::testing::TempDir() + "vramdoc-relay-" + std::to_string(::getpid());
  auto p = Process::start({"sh", "-c", "(sleep 0.3; echo late; echo written >" + flag + ") & echo early"}, options, error_number);
  ASSERT_TRUE(p) << std::strerror(error_number);
  char buf[64];
  const ssize_t n = read(p->out_fd(), buf, sizeof buf);
  ASSERT_GT(n, 0);
  EXPECT_EQ(std::string(buf, static_cast<std::size_t>(n)), "early\n");
  EXPECT_EQ(p->wait(), 0);
  p->relay_output();  // the background subshell still holds the pipe
  EXPECT_EQ(p->out_fd(), -1);
  std::string written;
  for (int i = 0; i < 100 && written.empty(); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    std::ifstream in(flag);
    std::getline(in, written);
  }
  EXPECT_EQ(written, "written");  // its "echo late" before it did not die of SIGPIPE
  std::remove(flag.c_str());
}

TEST(Launcher, ExitStatusAsAShellReportsIt) {
  EXPECT_EQ(start({"sh", "-c", "exit 3"})->wait(), 3);
  EXPECT_EQ(start({"sh", "-c", "kill -TERM $$"})->wait(), 128 + SIGTERM);
  int error = 0;
  EXPECT_FALSE(Process::start({"no-such-command-vramdoc"}, {}, error));
  EXPECT_EQ(error, ENOENT);
}

TEST(Launcher, StdoutAndStderrIntoOneFileKeepTheirOrder) {
  const auto dir = temp_dir("vramdoc-launcher-file");
  LaunchOptions options;
  options.in = Stream::null();
  options.out = options.err = Stream::file((dir / "log").string());
  options.extra_env = {{"VRAMDOC_LAUNCHER_TEST", "set"}, {"HOME", "/overridden"}};
  // stdin is /dev/null: cat ends at once instead of waiting for the terminal.
  EXPECT_EQ(start({"sh", "-c", "cat; echo one; echo two >&2; echo \"$VRAMDOC_LAUNCHER_TEST $HOME\""}, options)->wait(), 0);
  EXPECT_EQ(vramdoc::test::file_text(dir / "log"), "one\ntwo\nset /overridden\n");
  options.out = Stream::file((dir / "missing" / "log").string());
  int error = 0;
  EXPECT_FALSE(Process::start({"true"}, options, error));
  EXPECT_EQ(error, ENOENT);
  fs::remove_all(dir);
}

TEST(Launcher, PipesAreOursToReadAndClose) {
  LaunchOptions options;
  options.out = Stream::pipe();
  options.err = Stream::null();
  auto p = start({"sh", "-c", "echo hello; echo lost >&2"}, options);
  ASSERT_GE(p->out_fd(), 0);
  EXPECT_EQ(p->err_fd(), -1);
  char buffer[64];
  const auto n = read(p->out_fd(), buffer, sizeof buffer);
  EXPECT_EQ(std::string(buffer, n > 0 ? static_cast<std::size_t>(n) : 0), "hello\n");
  p->close_pipe(p->out_fd());
  EXPECT_EQ(p->out_fd(), -1);
  EXPECT_EQ(p->wait(), 0);
}

TEST(Launcher, StopEndsTheWholeGroupAfterTheGrace) {
  const auto dir = temp_dir("vramdoc-launcher-stop");
  LaunchOptions options;
  options.own_group = true;
  // The shell ignores SIGTERM; its background child writes its pid and sleeps.
  auto p = start({"sh", "-c", "trap '' TERM; sleep 30 & echo $! > " + (dir / "child").string() + "; wait; wait"}, options);
  pid_t child = 0;
  for (int i = 0; i < 200 && !child; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
    std::istringstream(vramdoc::test::file_text(dir / "child")) >> child;
  }
  ASSERT_GT(child, 0);
  EXPECT_FALSE(p->poll());
  const auto t0 = std::chrono::steady_clock::now();
  EXPECT_EQ(p->stop(std::chrono::milliseconds(300)), 128 + SIGKILL);
  EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(5));
  for (int i = 0; i < 200 && kill(child, 0) == 0; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  EXPECT_NE(kill(child, 0), 0) << "the group's other member survived";
  // A process that takes SIGTERM ends within the grace period, with 128 + SIGTERM.
  auto q = start({"sleep", "30"}, options);
  EXPECT_EQ(q->stop(std::chrono::seconds(10)), 128 + SIGTERM);
  EXPECT_EQ(q->poll(), 128 + SIGTERM);
  fs::remove_all(dir);
}
