#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "backends/procinfo.hpp"

using namespace vramdoc;
using namespace vramdoc::backends;

namespace {

const char* kDockerId = "4f6d1c3b2a19e8f7d6c5b4a39281706f5e4d3c2b1a0918f7e6d5c4b3a2918070";

void write(const std::filesystem::path& path, const std::string& text) {
  std::filesystem::create_directories(path.parent_path());
  std::ofstream(path, std::ios::binary) << text;
}

}  // namespace

TEST(WatchProcinfo, ContainerIdFromCgroupV1V2AndRuntimes) {
  EXPECT_EQ(container_id_from_cgroup(std::string("0::/system.slice/docker-") + kDockerId + ".scope\n"), "4f6d1c3b2a19");
  EXPECT_EQ(container_id_from_cgroup(std::string("12:memory:/docker/") + kDockerId + "\n"), "4f6d1c3b2a19");
  EXPECT_EQ(container_id_from_cgroup(std::string("0::/kubepods.slice/kubepods-pod1.slice/cri-containerd-") + kDockerId +
                                     ".scope\n"),
            "4f6d1c3b2a19");
  EXPECT_FALSE(container_id_from_cgroup("0::/user.slice/user-1000.slice/session-3.scope\n").has_value());
  EXPECT_FALSE(container_id_from_cgroup(std::string("0::/x/") + kDockerId + "ab\n").has_value());  // 66 hex
}

TEST(WatchProcinfo, ContainerPidOnlyWhenNSpidHasSeveralLevels) {
  EXPECT_EQ(container_pid_from_status("Name:\tpython\nNSpid:\t48213\t7\n"), 7U);
  EXPECT_FALSE(container_pid_from_status("NSpid:\t48213\n").has_value());
  EXPECT_FALSE(container_pid_from_status("Name:\told kernel without NSpid\n").has_value());
}

TEST(WatchProcinfo, ReadsAFakeProcTreeAndUnreadableIsUnknown) {
  auto root = std::filesystem::temp_directory_path() / ("vramdoc-proc-" + std::to_string(getpid()));
  write(root / "4242/status", "Name:\tpython\nUid:\t0\t0\t0\t0\nNSpid:\t4242\t12\n");
  write(root / "4242/cmdline", std::string("python\0train.py\0--lr\0" "0.1\0", 26));
  write(root / "4242/cgroup", std::string("0::/docker/") + kDockerId + "\n");
  auto d = read_process_details(4242, root.string());
  EXPECT_EQ(d.user, "root");
  EXPECT_EQ(d.command, "python train.py --lr 0.1");
  EXPECT_EQ(d.container_pid, 12U);
  EXPECT_EQ(d.container_id, "4f6d1c3b2a19");
  auto missing = read_process_details(4243, root.string());
  EXPECT_FALSE(missing.user || missing.command || missing.container_pid || missing.container_id);
  std::filesystem::remove_all(root);
}

TEST(WatchProcinfo, ReadsThisProcessFromRealProc) {
  auto d = read_process_details(static_cast<std::uint32_t>(getpid()));
  ASSERT_TRUE(d.command.has_value());
  EXPECT_NE(d.command->find("unit_tests"), std::string::npos);
  EXPECT_TRUE(d.user.has_value());
}

TEST(WatchProcinfo, CacheReadsOnceAndForgetsVanishedPids) {
  auto root = std::filesystem::temp_directory_path() / ("vramdoc-proc-cache-" + std::to_string(getpid()));
  write(root / "10/cmdline", std::string("first\0", 6));
  ProcessDetailsCache cache(root.string());
  EXPECT_EQ(cache.lookup({10})[10].command, "first");
  write(root / "10/cmdline", std::string("second\0", 7));
  EXPECT_EQ(cache.lookup({10})[10].command, "first");  // cached while the PID stays
  EXPECT_TRUE(cache.lookup({}).empty());
  EXPECT_EQ(cache.lookup({10})[10].command, "second");  // forgotten, read again
  std::filesystem::remove_all(root);
}

TEST(WatchProcinfo, CommandLineIsRedactedAsItIsRead) {
  auto root = std::filesystem::temp_directory_path() / ("vramdoc-proc-secret-" + std::to_string(getpid()));
  const std::string cmdline("/usr/bin/python3\0train.py\0--hf_token\0hf_5URYX45jqRO25g3uK5kbAAegiuE8LCAnmu\0--lr\0" "0.1\0", 84);
  write(root / "5/cmdline", cmdline);
  auto d = read_process_details(5, root.string());
  EXPECT_EQ(d.command, "/usr/bin/python3 train.py --hf_token *** --lr 0.1");
  EXPECT_EQ(d.executable, "python3");
  write(root / "6/comm", "kworker/0:1\n");
  auto kernel = read_process_details(6, root.string());
  EXPECT_EQ(kernel.command, "[kworker/0:1]");
  EXPECT_EQ(split_cmdline(std::string("a\0\0b\0", 5)), (std::vector<std::string>{"a", "", "b"}));
  std::filesystem::remove_all(root);
}
