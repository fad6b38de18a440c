// Per-PID details from procfs for `vramdoc watch`: user, command line, container mapping.
// Anything /proc does not let us read stays empty (shown as n/a); nothing here throws. The
// command line is redacted here, as it is read (core/redact.hpp, docs/security.md).
#pragma once
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "core/watch/model.hpp"

namespace vramdoc::backends {

// The arguments of a /proc/PID/cmdline text (NUL-separated; a trailing NUL ends the last one).
std::vector<std::string> split_cmdline(const std::string& cmdline);

// Reads /proc/PID/{status,cmdline,cgroup} under `proc_root` (tests pass a fake tree); for a process
// in a Kubernetes pod also its namespace, from the pod's service-account file
// (/proc/PID/root/var/run/secrets/kubernetes.io/serviceaccount/namespace) or its environment.
watch::ProcessDetails read_process_details(std::uint32_t pid, const std::string& proc_root = "/proc");

// The container id in one /proc/PID/cgroup text (docker, containerd/CRI, podman, k8s pods): the
// first 12 hex digits of a 64-hex-digit id, or empty when the process is not in a container.
std::optional<std::string> container_id_from_cgroup(const std::string& cgroup_text);

// The Kubernetes pod UID in one /proc/PID/cgroup text, from the kubelet's cgroup names:
// ".../kubepods/burstable/pod<uid>/<container>" (cgroupfs driver) or
// ".../kubepods-burstable-pod<uid with _ for ->.slice/..." (systemd driver); lower case, with dashes.
std::optional<std::string> pod_uid_from_cgroup(const std::string& cgroup_text);

// A Kubernetes namespace name as the pod states it: the first line of the service-account
// namespace file, or POD_NAMESPACE in a NUL-separated /proc/PID/environ text (the Downward API's
// usual name). Empty unless it is a valid namespace name (RFC 1123 label: a-z, 0-9, '-', <= 63).
std::optional<std::string> namespace_from_file(const std::string& text);
std::optional<std::string> namespace_from_environ(const std::string& environ);

// The innermost PID from the NSpid line of /proc/PID/status, when it lists more than one level
// (the process lives in a child PID namespace, e.g. a container).
std::optional<std::uint32_t> container_pid_from_status(const std::string& status_text);

// Remembers details per PID so that a 10 Hz sampler reads /proc once per process, not once per
// sample. A PID that disappears from a sample is forgotten (its number may be reused).
class ProcessDetailsCache {
 public:
  explicit ProcessDetailsCache(std::string proc_root = "/proc") : proc_root_(std::move(proc_root)) {}
  // Details for every PID in `pids`, reading only those not seen in the previous call.
  std::map<std::uint32_t, watch::ProcessDetails> lookup(const std::vector<std::uint32_t>& pids);

 private:
  std::string proc_root_;
  std::map<std::uint32_t, watch::ProcessDetails> known_;
};

}  // namespace vramdoc::backends
