// The view's frame: a title, one line per GPU with memory and utilisation bars, the selected GPU in
// detail, every GPU's processes in one list, and the prompt or the last outcome at the bottom.
#include "core/watch/screen.hpp"

#include <algorithm>
#include <array>
#include <cmath>

#include "core/table.hpp"
#include "core/terminal_safe.hpp"
#include "core/units.hpp"
#include "core/watch/format.hpp"

namespace vramdoc::watch {

void MemoryHistory::push(const Snapshot& snapshot) {
  for (const auto& gpu : snapshot.gpus) {
    auto& samples = by_gpu_[gpu.info.index];
    samples.push_back(gpu.sample ? used_fraction(gpu.sample->memory) : std::nullopt);
    while (samples.size() > capacity_) samples.pop_front();
  }
}

const std::deque<std::optional<double>>& MemoryHistory::of(unsigned index) const {
  static const std::deque<std::optional<double>> kEmpty;
  auto found = by_gpu_.find(index);
  return found == by_gpu_.end() ? kEmpty : found->second;
}

std::string sparkline(const std::deque<std::optional<double>>& samples, std::size_t width) {
  static constexpr std::array<const char*, 8> kBars = {"\u2581", "\u2582", "\u2583", "\u2584",
                                                       "\u2585", "\u2586", "\u2587", "\u2588"};
  std::size_t shown = std::min(width, samples.size());
  std::string out(width - shown, ' ');
  for (std::size_t i = samples.size() - shown; i < samples.size(); ++i) {
    if (!samples[i]) {
      out += ' ';
      continue;
    }
    double f = std::clamp(*samples[i], 0.0, 1.0);
    out += kBars[std::min<std::size_t>(7, static_cast<std::size_t>(std::lround(f * 7.0)))];
  }
  return out;
}

std::string meter(std::optional<double> fraction, std::size_t width) {
  if (width < 3) return std::string(width, ' ');
  std::size_t inner = width - 2;
  if (!fraction) {
    std::string na = inner >= 3 ? "n/a" : "";
    std::size_t left = (inner - na.size()) / 2;
    return "[" + std::string(left, ' ') + na + std::string(inner - left - na.size(), ' ') + "]";
  }
  auto filled = static_cast<std::size_t>(std::lround(std::clamp(*fraction, 0.0, 1.0) * static_cast<double>(inner)));
  return "[" + std::string(filled, '#') + std::string(inner - filled, '.') + "]";
}

std::string fit(const std::string& text, std::size_t cols) {
  std::string out;
  std::size_t width = 0;
  bool coloured = false, cut = false;
  for (std::size_t i = 0; i < text.size();) {
    if (text[i] == '\x1b' && i + 1 < text.size() && text[i + 1] == '[') {  // a colour code: no cell
      std::size_t end = i + 2;
      while (end < text.size() && !(text[end] >= 0x40 && text[end] <= 0x7e)) ++end;
      out += text.substr(i, end + 1 - i);
      coloured = true;
      i = end + 1;
      continue;
    }
    auto c = static_cast<unsigned char>(text[i]);
    std::size_t len = c < 0x80 ? 1 : (c >> 5) == 6 ? 2 : (c >> 4) == 14 ? 3 : (c >> 3) == 30 ? 4 : 1;
    std::string glyph = text.substr(i, len);
    std::size_t w = display_width(glyph);
    if (width + w > cols) {
      cut = true;
      break;
    }
    out += glyph;
    width += w;
    i += len;
  }
  if (cut && coloured) out += "\x1b[0m";
  return out + std::string(cols - width, ' ');
}

namespace {

// Memory fills up: green, yellow from 75 %, red from 90 % (as `watch --once` colours USED).
Tone memory_tone(double fraction) { return fraction >= 0.9 ? Tone::Bad : fraction >= 0.75 ? Tone::Warn : Tone::Good; }

// A meter whose filled part takes the tone's colour.
std::string bar(std::optional<double> fraction, std::size_t width, Tone tone, const Style& style) {
  std::string plain = meter(fraction, width);
  if (!fraction || !style.color || plain.size() < 2) return plain;
  const std::size_t filled = plain.find_first_not_of('#', 1) - 1;
  return "[" + style.paint(plain.substr(1, filled), tone) + plain.substr(1 + filled);
}

std::optional<double> percent_fraction(const std::optional<unsigned>& percent) {
  if (!percent) return std::nullopt;
  return *percent / 100.0;
}

std::string gpu_line(const GpuView& gpu, bool selected, std::size_t cols, const Style& style) {
  std::string head = std::string(selected ? "> " : "  ") + std::to_string(gpu.info.index) + " " +
                     fit(or_na(gpu.info.name), 18) + " ";
  if (!gpu.sample) return head + style.paint("not read: " + terminal_safe(gpu.error.value_or("unknown error")), Tone::Bad);
  const GpuSample& s = *gpu.sample;
  const std::string memory = " " + fmt_bytes(s.memory.used_bytes) + " / " + fmt_bytes(s.memory.total_bytes);
  std::string util = fmt_percent(s.sm_util_percent);
  util = std::string(util.size() < 4 ? 4 - util.size() : 0, ' ') + util;
  const std::string rest = "  MEM BUSY " + fmt_percent(s.mem_util_percent) + "  " + fmt_watts(s.power_watts) + "  " +
                           (s.temperature_c ? std::to_string(*s.temperature_c) + " C" : "n/a");
  const std::size_t text = display_width(head) + 4 + display_width(memory) + 8 + util.size() + display_width(rest);
  const std::size_t each = std::clamp<std::size_t>(cols > text ? (cols - text) / 2 : 0, 8, 32);
  const auto used = used_fraction(s.memory);
  return head + "MEM " + bar(used, each, used ? memory_tone(*used) : Tone::Good, style) + memory + "  UTIL " +
         bar(percent_fraction(s.sm_util_percent), each, Tone::Good, style) + " " + util + rest;
}

std::vector<std::string> detail_lines(const GpuView& gpu, const MemoryHistory& history, std::size_t cols,
                                      const Style& style) {
  std::vector<std::string> lines;
  lines.push_back("GPU " + std::to_string(gpu.info.index) + "  " + or_na(gpu.info.name) + "  " + or_na(gpu.info.uuid) +
                  "  bus " + or_na(gpu.info.pci_bus_id));
  if (!gpu.sample) {
    lines.push_back("  " + style.paint("not read: " + terminal_safe(gpu.error.value_or("unknown error")), Tone::Bad));
    return lines;
  }
  const GpuSample& s = *gpu.sample;
  lines.push_back("  memory   used " + fmt_bytes(s.memory.used_bytes) + " of " + fmt_bytes(s.memory.total_bytes) +
                  "  reserved " + fmt_bytes(s.memory.reserved_bytes) + "  free " + fmt_bytes(s.memory.free_bytes));
  std::size_t spark = cols > 12 ? cols - 12 : 0;
  lines.push_back("  history  " + sparkline(history.of(gpu.info.index), spark));
  std::optional<std::uint64_t> peak;
  if (gpu.info.pcie_bandwidth_bytes_per_s) peak = static_cast<std::uint64_t>(*gpu.info.pcie_bandwidth_bytes_per_s);
  lines.push_back("  busy     SM " + fmt_percent(s.sm_util_percent) + "  memory controller " +
                  fmt_percent(s.mem_util_percent) + "  PCIe tx " + fmt_rate(s.pcie_tx_bytes_per_s) + " rx " +
                  fmt_rate(s.pcie_rx_bytes_per_s) + " (peak " + fmt_rate(peak) + ")");
  auto mhz = [](const std::optional<unsigned>& v) { return v ? std::to_string(*v) + " MHz" : std::string("n/a"); };
  lines.push_back("  clocks   SM " + mhz(s.sm_clock_mhz) + "  memory " + mhz(s.mem_clock_mhz) + "  power " +
                  fmt_watts(s.power_watts) + " of " + fmt_watts(s.power_limit_watts) + "  throttle " +
                  fmt_throttle(s.throttle_reasons));
  for (const auto& h : gpu.hints) lines.push_back("  hint     " + style.paint(h.text, Tone::Warn));
  return lines;
}

// The process list's lines (header, rule, one per process) and the selected row's position.
std::vector<std::string> process_table(const std::vector<ProcessRow>& rows, const std::optional<std::size_t>& selected) {
  using A = TextTable::Align;
  TextTable table({"GPU", "PID", "USER", "GPU MEM", "SM", "CPU", "HOST MEM", "TIME", "CONTAINER", "COMMAND"},
                  {A::Right, A::Right, A::Left, A::Right, A::Right, A::Right, A::Right, A::Right, A::Left, A::Left});
  for (const auto& row : rows) {
    const ProcessView& p = row.process;
    table.add_row({std::to_string(row.gpu), std::to_string(p.gpu.pid), or_na(p.details.user),
                   fmt_bytes(p.gpu.used_bytes), fmt_percent(p.gpu.sm_util_percent), fmt_cpu(p.usage.cpu_percent),
                   fmt_bytes(p.usage.host_memory_bytes), fmt_duration(p.usage.running_seconds),
                   fmt_container(p.details), or_na(p.details.command)});
  }
  std::vector<std::string> lines;
  const std::string text = table.render();
  for (std::size_t start = 0, i = 0; start < text.size(); ++i) {
    const std::size_t end = text.find('\n', start);
    const bool marked = selected && i >= 2 && i - 2 == *selected;
    lines.push_back((marked ? "> " : "  ") + text.substr(start, end - start));
    start = end + 1;
  }
  return lines;
}

// The table's header and the rows that fit in `room` lines, keeping the selected row in view;
// a last line counts the rows left out.
std::vector<std::string> process_window(const std::vector<std::string>& table, std::optional<std::size_t> selected,
                                        std::size_t room, std::size_t cols, const Style& style) {
  const std::size_t count = table.size() - 2;
  std::vector<std::string> out(table.begin(), table.begin() + 2);
  const std::size_t shown = count + 2 <= room ? count : room > 3 ? room - 3 : 1;
  std::size_t first = 0;
  if (selected && *selected >= shown / 2) first = std::min(*selected - shown / 2, count - shown);
  for (std::size_t i = first; i < first + shown; ++i) {
    std::string line = table[i + 2];
    if (style.color && selected && i == *selected) line = "\x1b[7m" + fit(line, cols) + "\x1b[27m";
    out.push_back(std::move(line));
  }
  if (shown < count)
    out.push_back("  ... " + std::to_string(count - shown) + " more process(es): up / down to scroll");
  return out;
}

// The bottom line: the question being asked, else the last outcome; empty when neither.
std::string bottom_line(const ScreenState& state, const Style& style) {
  if (state.prompt) {
    const SignalRequest& p = *state.prompt;
    return style.paint("Send " + signal_name(p.signal) + " to PID " + std::to_string(p.process.pid) +
                           (p.command.empty() ? "" : " (" + terminal_safe(p.command) + ")") + " on GPU " +
                           std::to_string(p.process.gpu) + "? y: yes, any other key: no",
                       Tone::Warn);
  }
  const std::string status = terminal_safe(state.status);  // it may name the process's command
  if (status.find(" not sent: ") != std::string::npos) return style.paint(status, Tone::Bad);
  return status;
}

std::string title(const Snapshot& snapshot, std::size_t selected, const ScreenState& state, const std::string& clock) {
  const std::size_t count = snapshot.gpus.size();
  const std::string gpu = count ? "GPU " + std::to_string(snapshot.gpus[selected].info.index) + " (" +
                                      std::to_string(selected + 1) + " of " + std::to_string(count) + ")"
                                : "no GPU";
  return "vramdoc watch  " + clock + "  " + gpu + "  sort: " + sort_key_name(state.sort) +
         "   q quit  s sort  g/left/right GPU  up/down/j/k process  T/K/I signal";
}

}  // namespace

std::string render_screen(const Snapshot& snapshot, const MemoryHistory& history, const ScreenState& state,
                          std::size_t rows, std::size_t cols, const std::string& clock, const Style& style) {
  const std::size_t count = snapshot.gpus.size();
  const std::size_t selected = count ? std::min(state.selected, count - 1) : 0;
  std::vector<std::string> lines{title(snapshot, selected, state, clock)};
  if (count == 0) lines.push_back("No GPU to watch.");
  for (std::size_t i = 0; i < count; ++i) lines.push_back(gpu_line(snapshot.gpus[i], i == selected, cols, style));
  if (count) {
    lines.emplace_back();
    for (auto& l : detail_lines(snapshot.gpus[selected], history, cols, style)) lines.push_back(std::move(l));
    lines.emplace_back();
  }
  const std::string bottom = bottom_line(state, style);
  const std::size_t body = rows - std::min<std::size_t>(rows, bottom.empty() ? 0 : 1);
  const auto processes = process_rows(snapshot, state.sort);
  if (count && processes.empty()) {
    lines.push_back("No compute processes on the GPUs.");
  } else if (!processes.empty()) {
    std::optional<std::size_t> at;
    for (std::size_t i = 0; i < processes.size(); ++i)
      if (state.process && processes[i].gpu == state.process->gpu && processes[i].process.gpu.pid == state.process->pid)
        at = i;
    const auto table = process_table(processes, at);
    const std::size_t room = body > lines.size() ? body - lines.size() : 0;
    const auto shown = room >= 4 ? process_window(table, at, room, cols, style) : table;
    lines.insert(lines.end(), shown.begin(), shown.end());
  }
  if (lines.size() > body && body > 0) {
    std::size_t hidden = lines.size() - body + 1;
    lines.resize(body - 1);
    lines.push_back("... " + std::to_string(hidden) + " more line(s): enlarge the terminal");
  }
  lines.resize(body);
  if (!bottom.empty() && rows > 0) lines.push_back(bottom);
  std::string frame;
  for (std::size_t i = 0; i < rows; ++i) frame += (i ? "\n" : "") + fit(lines[i], cols);
  return frame;
}

}  // namespace vramdoc::watch
