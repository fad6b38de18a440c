// `vramdoc info`'s facts: this host (procfs), each GPU from NVML completed with the CUDA
// driver's on-chip facts (matched by PCI bus id), and what could not be read.
#pragma once
#include <optional>

#include "core/info/report.hpp"
#include "core/result.hpp"

namespace vramdoc::backends {

// The report of every GPU, or of GPU `device` alone (numbered as nvidia-smi numbers them). A
// missing driver is a problem of the report; asking for a device that cannot be read is an error.
Result<info::InfoReport> read_info_report(std::optional<unsigned> device);

}  // namespace vramdoc::backends
