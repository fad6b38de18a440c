// Who each process of a job is: the rank from the launcher's variables in /proc/PID/environ
// (torchrun, Slurm, Open MPI, PMI) and the command name, from a fake /proc and from a live child.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "backends/run/process_identity.hpp"
#include "backends/run/job.hpp"

namespace vramdoc::backends {
namespace {

namespace fs = std::filesystem;
using namespace std::string_literals;

TEST(ProcessIdentity, RanksFromTheEnvironment) {
  timeline::ProcessInfo who;
  read_ranks("PATH=/bin\0RANK=3\0LOCAL_RANK=1\0WORLD_SIZE=8\0"s, who);
  EXPECT_EQ(*who.rank, 3);
  EXPECT_EQ(*who.local_rank, 1);
  read_ranks("SLURM_PROCID=12\0SLURM_LOCALID=4\0"s, who);
  EXPECT_EQ(*who.rank, 12);
  EXPECT_EQ(*who.local_rank, 4);
  read_ranks("OMPI_COMM_WORLD_RANK=5\0OMPI_COMM_WORLD_LOCAL_RANK=0\0"s, who);
  EXPECT_EQ(*who.rank, 5);
  EXPECT_EQ(*who.local_rank, 0);
  read_ranks("RANK=7\0SLURM_PROCID=2\0"s, who);  // torchrun under srun: RANK is the job's rank
  EXPECT_EQ(*who.rank, 7);
  read_ranks("RANK=\0SLURM_PROCID=2\0"s, who);  // an empty RANK is skipped
  EXPECT_EQ(*who.rank, 2);
  read_ranks("RANK=x1\0LOCAL_RANK=-1\0HOME=/root"s, who);  // not numbers: unknown, never guessed
  EXPECT_FALSE(who.rank);
  EXPECT_FALSE(who.local_rank);
  read_ranks("", who);
  EXPECT_FALSE(who.rank);
}

TEST(ProcessIdentity, FromAFakeProc) {
  const fs::path root = fs::temp_directory_path() / ("vramdoc-ident-" + std::to_string(getpid()));
  fs::remove_all(root);
  fs::create_directories(root / "42");
  std::ofstream(root / "42" / "comm") << "python3\n";
  std::ofstream(root / "42" / "environ", std::ios::binary) << "A=1\0RANK=1\0LOCAL_RANK=1\0"s;
  const auto who = read_process_identity(42, 1, "node7", root.string());
  EXPECT_EQ(who.pid, 42u);
  EXPECT_EQ(*who.gpu, 1u);
  EXPECT_EQ(who.host, "node7");
  EXPECT_EQ(who.command, "python3");
  EXPECT_EQ(*who.rank, 1);
  const auto gone = read_process_identity(43, 0, "node7", root.string());  // exited: what is known
  EXPECT_EQ(gone.pid, 43u);
  EXPECT_TRUE(gone.command.empty());
  EXPECT_FALSE(gone.rank);
  fs::remove_all(root);
}

TEST(ProcessIdentity, OfALiveChild) {
  int error = 0;
  auto job = Job::start({"sh", "-c", "exec sleep 5"}, {{"RANK", "6"}, {"LOCAL_RANK", "2"}}, error);
  ASSERT_TRUE(job) << error;
  timeline::ProcessInfo who;
  for (int i = 0; i < 100 && who.command != "sleep"; ++i) {
    usleep(20000);
    who = read_process_identity(std::uint32_t(job->pid()), 0, host_name());
  }
  EXPECT_EQ(who.command, "sleep");
  EXPECT_EQ(*who.rank, 6);
  EXPECT_EQ(*who.local_rank, 2);
  EXPECT_FALSE(who.host.empty());
  job->signal(SIGTERM);
  job->pump_output([](const std::string&) {});
  job->wait();
}

}  // namespace
}  // namespace vramdoc::backends
