// The view's process list at any width: every column it shows whole, the least needed ones left
// out when the line is short, COMMAND given the rest (issue 32: at 80 columns the commands had 11
// characters while an empty CONTAINER column kept its width).
#include <algorithm>
#include <array>

#include "core/table.hpp"
#include "core/watch/format.hpp"
#include "core/watch/screen.hpp"

namespace vramdoc::watch {

namespace {

enum Column { Gpu, Pid, User, GpuMem, Sm, Cpu, HostMem, Time, Container, Command, kColumns };

constexpr std::array<const char*, kColumns> kHeaders = {"GPU", "PID", "USER", "GPU MEM", "SM", "CPU", "HOST MEM", "TIME", "CONTAINER", "COMMAND"};
// Left out first to last when the line is too short; PID, GPU MEM and COMMAND always stay.
constexpr std::array<Column, 7> kDropOrder = {Container, HostMem, Time, Sm, Cpu, User, Gpu};
// COMMAND keeps at least this many cells before another column is left out.
constexpr std::size_t kMinCommand = 24;

std::array<std::string, kColumns> cells(const ProcessRow& row) {
  const ProcessView& p = row.process;
  return {std::to_string(row.gpu), std::to_string(p.gpu.pid), or_na(p.details.user), fmt_bytes(p.gpu.used_bytes),
          fmt_percent(p.gpu.sm_util_percent), fmt_cpu(p.usage.cpu_percent), fmt_bytes(p.usage.host_memory_bytes),
          fmt_duration(p.usage.running_seconds), fmt_container(p.details), or_na(p.details.command)};
}

}  // namespace

std::vector<std::string> process_table(const std::vector<ProcessRow>& rows, const std::optional<std::size_t>& selected,
                                       std::size_t cols) {
  std::vector<std::array<std::string, kColumns>> table;
  for (const auto& row : rows) table.push_back(cells(row));
  std::array<std::size_t, kColumns> width{};
  for (int c = 0; c < kColumns; ++c) {
    width[c] = display_width(kHeaders[c]);
    for (const auto& r : table) width[c] = std::max(width[c], display_width(r[c]));
  }
  std::array<bool, kColumns> shown;
  shown.fill(true);
  // An empty CONTAINER column (no process in a container, or none known) takes no width.
  shown[Container] = std::any_of(table.begin(), table.end(), [](const auto& r) { return r[Container] != "-" && r[Container] != "n/a"; });
  auto used = [&] {
    std::size_t w = 2;  // the selection mark
    for (int c = 0; c < Command; ++c)
      if (shown[c]) w += width[c] + 2;
    return w;
  };
  for (Column drop : kDropOrder) {
    if (used() + std::min(width[Command], kMinCommand) <= cols) break;
    shown[drop] = false;
  }
  const std::size_t command = cols > used() ? cols - used() : 0;
  auto line = [&](const std::array<std::string, kColumns>& r, bool marked) {
    std::string out = marked ? "> " : "  ";
    for (int c = 0; c < Command; ++c) {
      if (!shown[c]) continue;
      const std::string pad(width[c] - display_width(r[c]), ' ');
      const bool left = c == User || c == Container;
      out += (left ? r[c] + pad : pad + r[c]) + "  ";
    }
    return out + fit(r[Command], command);
  };
  std::array<std::string, kColumns> header;
  for (int c = 0; c < kColumns; ++c) header[c] = kHeaders[c];
  std::vector<std::string> lines{line(header, false), "  " + std::string(cols > 2 ? cols - 2 : 0, '-')};
  for (std::size_t i = 0; i < table.size(); ++i) lines.push_back(line(table[i], selected && *selected == i));
  return lines;
}

}  // namespace vramdoc::watch
