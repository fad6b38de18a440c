// A GPU-memory timeline of one job: samples of the driver's numbers, step marks, the outcome.
// Plain data, filled by the readers (our JSON Lines format, the shared timeline JSON) or by `run`.
#pragma once
#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/timeline/oom_message.hpp"

namespace vramdoc::timeline {

// One reading. Only t and process_used are sure to exist; anything else may be unknown.
struct Sample {
  double t_seconds = 0;                            // since the recording began
  std::uint64_t process_used_bytes = 0;            // the driver's charge to the job (sum over its processes)
  std::optional<std::uint64_t> device_used_bytes;  // the whole device
  std::optional<std::uint64_t> allocated_bytes;    // framework allocator: live tensors (torch_allocated)
  std::optional<std::uint64_t> reserved_bytes;     // framework allocator: cached segments (torch_reserved)
};

// An event: "step N" (end of step N), "epoch N", "batch N", "oom", or free text.
struct Mark {
  double t_seconds = 0;
  std::string label;
  std::optional<std::uint64_t> allocated_bytes;  // framework figures at the mark, when recorded
  std::optional<std::uint64_t> reserved_bytes;
  std::optional<std::uint32_t> pid;              // the process that marked it (the step hook); empty: the job
  // The allocator's own peak of live tensors (torch.cuda.memory_stats()'s allocated_bytes.all.peak:
  // since the process started or the job last reset it), when the step hook wrote `peak=`.
  std::optional<std::uint64_t> allocated_peak_bytes;
};

// One GPU of the machine that recorded (version 2 header).
struct GpuInfo {
  unsigned index = 0;                      // NVML's index on that machine
  std::optional<std::string> uuid;
  std::optional<std::string> pci_bus_id;
  std::optional<std::string> name;
  std::optional<std::uint64_t> total_bytes;  // its capacity
};

// Who a process series belongs to: one process on one GPU.
struct ProcessInfo {
  std::string host;                  // the machine (empty when the file does not say)
  std::uint32_t pid = 0;
  std::optional<long> rank;          // RANK, SLURM_PROCID, OMPI_COMM_WORLD_RANK or PMI_RANK in its environment
  std::optional<long> local_rank;    // LOCAL_RANK, SLURM_LOCALID or OMPI_COMM_WORLD_LOCAL_RANK
  std::optional<unsigned> gpu;       // GPU index on its host; empty for a whole-job series (version 1)
  std::string command;               // its command name (/proc/PID/comm)
};

// How a long recording's samples were thinned to a fixed size (thinning.hpp): how many were read,
// and the width of the time bins that kept each one's lowest and highest reading.
struct Thinning {
  std::size_t samples_read = 0;
  double bin_seconds = 0;
};

// The driver's number for one process on one GPU: process_used is that process's bytes there,
// device_used that GPU's used memory.
struct ProcessSeries {
  ProcessInfo who;
  std::vector<Sample> samples;  // in time order
  std::optional<Thinning> thinned;  // empty: every sample read is here
};

// How the job ended, when known.
// Detached: the recording stopped while the job went on (vramdoc run was sent SIGTERM).
enum class Outcome { Unknown, Ok, Oom, Failed, Detached };

struct Timeline {
  std::string name;
  std::optional<std::string> device;
  std::optional<std::uint64_t> total_bytes;  // device memory capacity
  std::vector<std::string> command;          // what ran, when the recording says (our header's "command")
  // The job's allocator settings when recorded (our header's optional "env"): the variables that
  // change what the driver sees, e.g. XLA_PYTHON_CLIENT_PREALLOCATE, TF_FORCE_GPU_ALLOW_GROWTH.
  std::map<std::string, std::string> environment;
  Outcome outcome = Outcome::Unknown;
  std::optional<int> exit_status;            // as a shell reports it: 128+N when killed by signal N
  std::vector<std::string> messages;         // out-of-memory messages seen in the job's output
  std::optional<OomMessage> oom;             // an OOM known with its numbers (a PyTorch snapshot's oom entry)
  std::vector<Sample> samples;               // in time order
  std::vector<Mark> marks;                   // in time order
  std::optional<double> interval_seconds;    // the sampling interval, when the file says (interval_s)
  std::string host;                          // version 2: the machine that recorded
  std::optional<double> start_unix_seconds;  // version 2: the wall clock at t = 0
  std::vector<GpuInfo> gpus;                 // version 2: the machine's GPUs
  std::vector<ProcessSeries> processes;      // version 2: per process and GPU; `samples` sum them
  std::optional<Thinning> thinned;           // a long recording read in a fixed size; empty: every sample is here
};

// The step number of a "step N" mark (also "iter N", "iteration N"); empty for other labels.
std::optional<long> step_number(const std::string& label);
// "ok", "oom", "failed", "detached", "unknown".
const char* outcome_name(Outcome outcome);

}  // namespace vramdoc::timeline
