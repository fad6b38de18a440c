// Files vramdoc reads while a job writes them (backends/watched_file.hpp), issue 25: the job
// replaced its mark file with a link to /dev/zero, and the recorder, reopening it by path each
// tick, read forever (SIGTERM could not end vramdoc). The descriptor vramdoc made is read, a
// bounded amount per tick.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <mutex>
#include <thread>
#include <vector>

#include "backends/run/recorder.hpp"
#include "backends/watched_file.hpp"

namespace vramdoc::backends {
namespace {

namespace fs = std::filesystem;

std::string temp_pattern() { return (fs::temp_directory_path() / "vramdoc-watched-XXXXXX").string(); }

TEST(WatchedFile, APathReplacedByDevZeroChangesNothingRead) {
  auto made = WatchedFile::create_temp(temp_pattern());
  ASSERT_TRUE(made) << made.error();
  WatchedFile& f = **made;
  std::ofstream(f.path(), std::ios::app) << "step 1\n";
  EXPECT_EQ(f.read_more(1024), "step 1\n");
  fs::remove(f.path());
  fs::create_symlink("/dev/zero", f.path());
  EXPECT_EQ(f.read_more(1024), "");  // the original file, not /dev/zero
  f.remove_path();
  EXPECT_FALSE(fs::exists(fs::symlink_status(f.path())));
}

TEST(WatchedFile, ReadsAreBounded) {
  auto made = WatchedFile::create_temp(temp_pattern());
  ASSERT_TRUE(made) << made.error();
  std::ofstream(( *made)->path()) << std::string(10000, 'x');
  EXPECT_EQ((*made)->read_more(4096).size(), 4096U);
  EXPECT_EQ((*made)->read_more(1 << 20).size(), 10000U - 4096U);
  EXPECT_EQ((*made)->tail(100), std::string(100, 'x'));
  (*made)->remove_path();
}

TEST(WatchedFile, OpenRefusesFifosDevicesAndLinks) {
  const fs::path dir = fs::temp_directory_path() / ("vramdoc-watched-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  ASSERT_EQ(::mkfifo((dir / "fifo").c_str(), 0600), 0);
  auto fifo = WatchedFile::open((dir / "fifo").string());  // would wait for a writer if opened plainly
  ASSERT_FALSE(fifo);
  EXPECT_NE(fifo.error().find("is a FIFO"), std::string::npos) << fifo.error();
  fs::create_symlink("/dev/zero", dir / "zero");
  EXPECT_FALSE(WatchedFile::open((dir / "zero").string()));
  auto device = WatchedFile::open("/dev/zero");
  ASSERT_FALSE(device);
  EXPECT_NE(device.error().find("character device"), std::string::npos) << device.error();
  std::ofstream(dir / "log") << "a\nlast line\n";
  auto log = WatchedFile::open((dir / "log").string());
  ASSERT_TRUE(log) << log.error();
  EXPECT_EQ((*log)->tail(64), "a\nlast line\n");
  fs::remove_all(dir);
}

// The recorder stops (a hang before: fread on /dev/zero never ends) with the marks written before.
TEST(TimelineRecorder, AMarkFileSwappedForDevZeroDoesNotHoldTheRecorder) {
  auto made = WatchedFile::create_temp(temp_pattern());
  ASSERT_TRUE(made) << made.error();
  std::mutex m;
  std::vector<std::string> lines;
  TimelineRecorder recorder(nullptr, 0.01, made->get(), "host", [&](const std::string& line) {
    std::lock_guard lock(m);
    lines.push_back(line);
  });
  recorder.start(::getpid());
  std::ofstream((*made)->path(), std::ios::app) << "step 1\n";
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  fs::remove((*made)->path());
  fs::create_symlink("/dev/zero", (*made)->path());
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  recorder.stop();
  (*made)->remove_path();
  std::lock_guard lock(m);
  ASSERT_EQ(lines.size(), 1U);
  EXPECT_NE(lines[0].find("\"mark\":\"step 1\""), std::string::npos) << lines[0];
}

}  // namespace
}  // namespace vramdoc::backends
