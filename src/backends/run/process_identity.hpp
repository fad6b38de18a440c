// Who each process of a recorded job is (for the timeline's series lines): its command name and
// its rank, from the launcher's variables in its environment (torchrun, Slurm, Open MPI, PMI).
#pragma once
#include <cstdint>
#include <string>
#include <string_view>

#include "core/timeline/timeline.hpp"

namespace vramdoc::backends {

// Reads /proc/PID/comm and /proc/PID/environ under `proc_root` (tests pass a fake tree); what
// cannot be read (another user's process, one that has exited) stays empty. `host` is copied in.
timeline::ProcessInfo read_process_identity(std::uint32_t pid, unsigned gpu, const std::string& host,
                                            const std::string& proc_root = "/proc");

// Sets `who.rank` and `who.local_rank` from an environ text (NUL-separated KEY=VALUE): the first
// of RANK, SLURM_PROCID, OMPI_COMM_WORLD_RANK, PMI_RANK that is a plain number; likewise
// LOCAL_RANK, SLURM_LOCALID, OMPI_COMM_WORLD_LOCAL_RANK, MPI_LOCALRANKID.
void read_ranks(std::string_view environ_text, timeline::ProcessInfo& who);

// This machine's name (empty when it cannot be read).
std::string host_name();

}  // namespace vramdoc::backends
