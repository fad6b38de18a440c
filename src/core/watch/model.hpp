// The watch view model: what `vramdoc watch` shows, built from plain GPU structs and process
// details. Pure: no GPU or OS types; every renderer in core/watch reads only these structs.
#pragma once
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/gpu.hpp"

namespace vramdoc::watch {

// What the host knows about a PID (from /proc); each field empty where /proc does not allow.
struct ProcessDetails {
  std::optional<std::string> user;          // login name, or the numeric uid if it has no name
  std::optional<std::string> command;       // /proc/PID/cmdline, redacted (core/redact.hpp), joined by spaces
  std::optional<std::uint32_t> container_pid;  // the PID inside its own PID namespace (NSpid)
  std::optional<std::string> container_id;  // docker / containerd / podman id from cgroup, 12 hex
  std::optional<std::string> executable;    // the program's name: argv[0] without its directory, redacted
};

// One process on one GPU: the driver's accounting plus the host's details.
struct ProcessView {
  GpuProcess gpu;
  ProcessDetails details;
};

// A pattern the numbers suggest, with the reason in words.
enum class HintKind { BandwidthBound, HostLinkBound };
struct Hint {
  HintKind kind;
  std::string text;  // one line: what it looks like and why
};

// One GPU at one moment. `sample` is empty when the driver call failed (`error` says why).
struct GpuView {
  GpuStatic info;
  std::optional<GpuSample> sample;
  std::optional<std::string> error;
  std::vector<ProcessView> processes;
  std::vector<Hint> hints;
};

// Every watched GPU at one moment.
struct Snapshot {
  double t_unix_seconds = 0;  // wall clock when the sample was taken
  std::vector<GpuView> gpus;
};

// Thresholds for the hints (percent, and the fraction of the link's theoretical peak).
struct HintThresholds {
  unsigned mem_util_high_percent = 80;  // memory controller busy at least this much...
  unsigned sm_util_low_percent = 50;    // ...while kernels run at most this much: bandwidth-bound
  double link_high_fraction = 0.7;      // PCIe at least this fraction of its peak per direction...
  unsigned gpu_idle_percent = 50;       // ...while the GPU is at most this busy: host-link-bound
};

// The hints the sample supports; none when a number they need is unknown.
std::vector<Hint> compute_hints(const GpuSample& sample, const GpuStatic& info,
                                const HintThresholds& thresholds = {});

// Builds a GpuView: joins the driver's processes with `details` (by PID; missing PIDs get empty
// details) and computes the hints.
GpuView make_gpu_view(GpuStatic info, std::optional<GpuSample> sample, std::optional<std::string> error,
                      const std::map<std::uint32_t, ProcessDetails>& details);

// Orders for the process list.
enum class SortKey { Memory, Pid, Util };
// Next key in the cycle memory -> pid -> util -> memory.
SortKey next_sort_key(SortKey key);
// "memory", "pid", "util".
std::string sort_key_name(SortKey key);
// Sorts in place: memory and util descending (unknown last), pid ascending; ties by pid.
void sort_processes(std::vector<ProcessView>& processes, SortKey key);

// "n/a" for an unknown value, else the formatted value.
std::string or_na(const std::optional<std::string>& value);

}  // namespace vramdoc::watch
