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
  std::optional<std::string> pod_uid;       // Kubernetes pod UID from a kubepods cgroup path
  std::optional<std::string> pod_namespace;  // the pod's namespace as the pod states it (docs/watch.md)
};

// What a process costs the host, read at every full sample; each field empty where unknown.
struct ProcessUsage {
  std::optional<double> cpu_percent;             // CPU time over wall time since the last reading, % of one core
  std::optional<std::uint64_t> host_memory_bytes;  // resident set size
  std::optional<double> running_seconds;         // since the process started
  std::optional<std::uint64_t> start_ticks;      // start after boot in clock ticks: with the PID, which process
};

// One process on one GPU: the driver's accounting plus the host's details.
struct ProcessView {
  GpuProcess gpu;
  ProcessDetails details;
  ProcessUsage usage;
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
  std::optional<std::string> driver_error;  // the driver could not be used: no GPU was read
};

// Whether the snapshot read the driver: no driver error, and some GPU read (or none to read).
bool driver_up(const Snapshot& snapshot);

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

// Builds a GpuView: joins the driver's processes with `details` and `usage` (by PID; missing PIDs
// get empty ones) and computes the hints.
GpuView make_gpu_view(GpuStatic info, std::optional<GpuSample> sample, std::optional<std::string> error,
                      const std::map<std::uint32_t, ProcessDetails>& details,
                      const std::map<std::uint32_t, ProcessUsage>& usage = {});

// Orders for the process list.
enum class SortKey { Memory, Gpu, Pid, Cpu, Time, Util };
// Next key in the cycle memory -> gpu -> pid -> cpu -> time -> util -> memory.
SortKey next_sort_key(SortKey key);
// "memory", "gpu", "pid", "cpu", "time", "util".
std::string sort_key_name(SortKey key);
// One process on one GPU, as the view lists them: all GPUs' processes in one list.
struct ProcessRow {
  unsigned gpu = 0;  // NVML index
  ProcessView process;
};
// Every process of every GPU whose sample succeeded, sorted by `key`: memory, CPU and SM
// utilisation descending, time longest-running first (unknown last for each), GPU and PID
// ascending; ties by GPU, then PID.
std::vector<ProcessRow> process_rows(const Snapshot& snapshot, SortKey key);
// Sorts one GPU's processes in place by the same rules.
void sort_processes(std::vector<ProcessView>& processes, SortKey key);

// "n/a" for an unknown value, else the value (from outside: a process, the driver) made safe
// for a terminal (core/terminal_safe.hpp).
std::string or_na(const std::optional<std::string>& value);

}  // namespace vramdoc::watch
