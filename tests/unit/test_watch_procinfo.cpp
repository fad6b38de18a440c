#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "backends/watch/procinfo.hpp"

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

// Kubernetes: the kubelet names a pod's cgroup after its UID (cgroupfs: pod<uid>, systemd:
// kubepods-<qos>-pod<uid with _>.slice), for every QoS class and cgroup version.
TEST(WatchProcinfo, PodUidFromKubepodsCgroupPaths) {
  const std::string uid = "5e1a7c3d-0b2f-4a6e-9d8c-1f2e3d4c5b6a";
  const std::string systemd_uid = "5e1a7c3d_0b2f_4a6e_9d8c_1f2e3d4c5b6a";
  const std::string cid = kDockerId;
  EXPECT_EQ(pod_uid_from_cgroup("12:memory:/kubepods/burstable/pod" + uid + "/" + cid + "\n"), uid);
  EXPECT_EQ(pod_uid_from_cgroup("11:cpu,cpuacct:/kubepods/besteffort/pod" + uid + "/" + cid + "\n"), uid);
  EXPECT_EQ(pod_uid_from_cgroup("0::/kubepods/pod" + uid + "/" + cid + "\n"), uid);  // guaranteed
  EXPECT_EQ(pod_uid_from_cgroup("0::/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod" + systemd_uid +
                                ".slice/cri-containerd-" + cid + ".scope\n"),
            uid);
  EXPECT_EQ(pod_uid_from_cgroup("0::/kubepods.slice/kubepods-pod" + systemd_uid + ".slice/crio-" + cid + ".scope\n"),
            uid);
  EXPECT_EQ(container_id_from_cgroup("0::/kubepods.slice/kubepods-pod" + systemd_uid + ".slice/crio-" + cid + ".scope\n"),
            "4f6d1c3b2a19");
  // Not a pod: docker alone, a "pod" outside the kubelet's tree, a truncated or longer UID, upper case.
  EXPECT_FALSE(pod_uid_from_cgroup("0::/system.slice/docker-" + cid + ".scope\n").has_value());
  EXPECT_FALSE(pod_uid_from_cgroup("0::/machine.slice/pod" + uid + "/x\n").has_value());
  EXPECT_FALSE(pod_uid_from_cgroup("1:name=x:/kubepods\n0::/user.slice/pod" + uid + "\n").has_value());
  EXPECT_FALSE(pod_uid_from_cgroup("0::/kubepods/pod" + uid.substr(0, 35) + "/x\n").has_value());
  EXPECT_FALSE(pod_uid_from_cgroup("0::/kubepods/pod" + uid + "0/x\n").has_value());
  EXPECT_FALSE(pod_uid_from_cgroup("0::/kubepods/pod5E1A7C3D-0B2F-4A6E-9D8C-1F2E3D4C5B6A/x\n").has_value());
  EXPECT_FALSE(pod_uid_from_cgroup("0::/\n").has_value());  // a private cgroup namespace shows nothing
}

TEST(WatchProcinfo, NamespaceOnlyWhenTheNameIsValid) {
  EXPECT_EQ(namespace_from_file("ml-team\n"), "ml-team");
  EXPECT_EQ(namespace_from_file("default"), "default");
  EXPECT_FALSE(namespace_from_file("").has_value());
  EXPECT_FALSE(namespace_from_file("Team_A\n").has_value());
  EXPECT_FALSE(namespace_from_file(std::string(64, 'a')).has_value());
  EXPECT_FALSE(namespace_from_file("-x\n").has_value());
  EXPECT_EQ(namespace_from_environ(std::string("PATH=/bin\0POD_NAMESPACE=research\0HOME=/\0", 39)), "research");
  EXPECT_FALSE(namespace_from_environ(std::string("MY_POD_NAMESPACE=x\0", 19)).has_value());
  EXPECT_FALSE(namespace_from_environ(std::string("POD_NAMESPACE=a b\0", 18)).has_value());
  EXPECT_FALSE(namespace_from_environ("POD_NAMESPACE").has_value());
}

TEST(WatchProcinfo, PodAndNamespaceFromAFakeProcTree) {
  auto root = std::filesystem::temp_directory_path() / ("vramdoc-proc-pod-" + std::to_string(getpid()));
  const std::string uid = "0a1b2c3d-4e5f-4a6b-8c7d-9e0f1a2b3c4d";
  const std::string cgroup = "0::/kubepods/burstable/pod" + uid + "/" + kDockerId + "\n";
  write(root / "30/cgroup", cgroup);  // the service-account file wins over the environment
  write(root / "30/root/var/run/secrets/kubernetes.io/serviceaccount/namespace", "training");
  write(root / "30/environ", std::string("POD_NAMESPACE=other\0", 20));
  write(root / "31/cgroup", cgroup);  // no service account mounted: the Downward API variable
  write(root / "31/environ", std::string("POD_NAMESPACE=serving\0", 22));
  write(root / "32/cgroup", cgroup);  // neither readable: the pod, namespace unknown
  write(root / "33/cgroup", std::string("0::/docker/") + kDockerId + "\n");  // not a pod: nothing read
  write(root / "33/environ", std::string("POD_NAMESPACE=lie\0", 18));
  auto d = read_process_details(30, root.string());
  EXPECT_EQ(d.pod_uid, uid);
  EXPECT_EQ(d.pod_namespace, "training");
  EXPECT_EQ(d.container_id, "4f6d1c3b2a19");
  EXPECT_EQ(read_process_details(31, root.string()).pod_namespace, "serving");
  auto unknown = read_process_details(32, root.string());
  EXPECT_EQ(unknown.pod_uid, uid);
  EXPECT_FALSE(unknown.pod_namespace.has_value());
  auto docker = read_process_details(33, root.string());
  EXPECT_FALSE(docker.pod_uid || docker.pod_namespace);
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
