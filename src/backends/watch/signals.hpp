// Sending a signal to a process the watch view shows, to that process only: a PID whose start
// time no longer matches the one shown is another process (the shown one ended, its number was
// reused), and gets nothing.
#pragma once
#include <cstdint>
#include <optional>
#include <string>

#include "core/watch/screen.hpp"

namespace vramdoc::backends {

// Sends `signal` to `pid` when its start time (clock ticks after boot, /proc/PID/stat) is
// `start_ticks` (unchecked when empty). The process is held by a pidfd while it is checked, so it
// cannot be replaced in between (kernels without pidfd: checked, then kill(2)). Returns nothing
// on success, else what went wrong in words, naming the errno (EPERM, ESRCH).
std::optional<std::string> send_signal(std::uint32_t pid, std::optional<std::uint64_t> start_ticks,
                                       watch::ProcessSignal signal, const std::string& proc_root = "/proc");

}  // namespace vramdoc::backends
