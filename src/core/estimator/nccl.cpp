// NCCL's footprint: a per-process part (NCCL's and the collectives' kernels, the proxy's device
// structures) and, per communicator, fixed structures plus one NCCL_BUFFSIZE buffer per channel
// and connection (ring and tree peers, send and receive). Read off NCCL-only processes.
#include "core/estimator/nccl.hpp"

#include "core/estimator/calibration.hpp"
#include "core/units.hpp"

namespace vramdoc::estimator {

std::uint64_t nccl_device_bytes(std::uint64_t peers, std::uint64_t single, std::uint64_t buffsize) {
  if (peers == 0 && single == 0) return 0;
  const std::uint64_t per_comm = saturating_add(kNcclCommunicatorBytes, saturating_mul(kNcclBuffersPerCommunicator, buffsize));
  return saturating_add(saturating_add(kNcclProcessBytes, saturating_mul(peers, per_comm)),
                        saturating_mul(single, kNcclCommunicatorBytes));
}

}  // namespace vramdoc::estimator
