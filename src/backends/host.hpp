// The host side of the hierarchy: CPU model, RAM, read from procfs (Linux).
#pragma once
#include <string>

#include "core/gpu.hpp"

namespace vramdoc::backends {

// The host facts live in core (renderers read them); this name stays for the backends' callers.
using HostInfo = vramdoc::HostInfo;

// Reads the host facts; fields it cannot read stay empty. `proc_root` is for tests.
HostInfo read_host_info(const std::string& proc_root = "/proc");

// The node's name as dcgm-exporter labels it (Hostname): $NODE_NAME when set (the Downward API
// variable of a Kubernetes DaemonSet), else gethostname(); empty when neither is known.
std::string node_name();

}  // namespace vramdoc::backends
