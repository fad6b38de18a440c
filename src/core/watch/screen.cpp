#include "core/watch/screen.hpp"

#include <algorithm>
#include <array>
#include <cmath>

#include "core/table.hpp"
#include "core/units.hpp"
#include "core/watch/format.hpp"

namespace vramdoc::watch {

std::vector<KeyAction> parse_keys(std::string_view bytes) {
  std::vector<KeyAction> keys;
  for (std::size_t i = 0; i < bytes.size(); ++i) {
    char c = bytes[i];
    if (c == '\x1b' && i + 2 < bytes.size() && (bytes[i + 1] == '[' || bytes[i + 1] == 'O')) {
      char code = bytes[i + 2];
      if (code == 'C' || code == 'B') keys.push_back({Action::NextGpu});
      if (code == 'D' || code == 'A') keys.push_back({Action::PrevGpu});
      i += 2;
      continue;
    }
    if (c == 'q' || c == 'Q' || c == '\x03') keys.push_back({Action::Quit});
    else if (c == 's' || c == 'S') keys.push_back({Action::CycleSort});
    else if (c == 'g' || c == 'G') keys.push_back({Action::NextGpu});
    else if (c >= '0' && c <= '9') keys.push_back({Action::PickGpu, static_cast<unsigned>(c - '0')});
  }
  return keys;
}

ScreenState apply(ScreenState state, const KeyAction& key, std::size_t gpu_count) {
  switch (key.action) {
    case Action::Quit: state.quit = true; break;
    case Action::CycleSort: state.sort = next_sort_key(state.sort); break;
    case Action::NextGpu:
      if (gpu_count) state.selected = (state.selected + 1) % gpu_count;
      break;
    case Action::PrevGpu:
      if (gpu_count) state.selected = (state.selected + gpu_count - 1) % gpu_count;
      break;
    case Action::PickGpu:
      if (key.gpu_position < gpu_count) state.selected = key.gpu_position;
      break;
  }
  if (gpu_count && state.selected >= gpu_count) state.selected = gpu_count - 1;
  return state;
}

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
  for (std::size_t i = 0; i < text.size();) {
    auto c = static_cast<unsigned char>(text[i]);
    std::size_t len = c < 0x80 ? 1 : (c >> 5) == 6 ? 2 : (c >> 4) == 14 ? 3 : (c >> 3) == 30 ? 4 : 1;
    std::string glyph = text.substr(i, len);
    std::size_t w = display_width(glyph);
    if (width + w > cols) break;
    out += glyph;
    width += w;
    i += len;
  }
  return out + std::string(cols - width, ' ');
}

namespace {

std::string gpu_summary_line(const GpuView& gpu, bool selected, std::size_t cols) {
  std::string head = std::string(selected ? "> " : "  ") + std::to_string(gpu.info.index) + " " +
                     fit(or_na(gpu.info.name), 22) + " ";
  if (!gpu.sample) return head + "not read: " + gpu.error.value_or("unknown error");
  const GpuSample& s = *gpu.sample;
  std::string numbers = " " + fmt_bytes(s.memory.used_bytes) + " / " + fmt_bytes(s.memory.total_bytes) + "  SM " +
                        fmt_percent(s.sm_util_percent) + "  MEM " + fmt_percent(s.mem_util_percent) + "  " +
                        fmt_watts(s.power_watts) + "  " +
                        (s.temperature_c ? std::to_string(*s.temperature_c) + " C" : "n/a");
  std::size_t used = display_width(head) + display_width(numbers);
  std::size_t bar = cols > used + 12 ? std::min<std::size_t>(32, cols - used) : 12;
  return head + meter(used_fraction(s.memory), bar) + numbers;
}

std::vector<std::string> detail_lines(const GpuView& gpu, const MemoryHistory& history, std::size_t cols) {
  std::vector<std::string> lines;
  lines.push_back("GPU " + std::to_string(gpu.info.index) + "  " + or_na(gpu.info.name) + "  " + or_na(gpu.info.uuid) +
                  "  bus " + or_na(gpu.info.pci_bus_id));
  if (!gpu.sample) {
    lines.push_back("  not read: " + gpu.error.value_or("unknown error"));
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
  for (const auto& h : gpu.hints) lines.push_back("  hint     " + h.text);
  return lines;
}

}  // namespace

std::string render_screen(const Snapshot& snapshot, const MemoryHistory& history, const ScreenState& state,
                          std::size_t rows, std::size_t cols, const std::string& clock) {
  std::vector<std::string> lines;
  std::size_t count = snapshot.gpus.size();
  std::size_t selected = count ? std::min(state.selected, count - 1) : 0;
  lines.push_back("vramdoc watch  " + clock + "  GPU " + (count ? std::to_string(selected + 1) : "0") + " of " +
                  std::to_string(count) + "  sort: " + sort_key_name(state.sort) +
                  "   q quit  s sort  g/arrows/0-9 pick GPU");
  if (count == 0) lines.push_back("No GPU to watch.");
  for (std::size_t i = 0; i < count; ++i) lines.push_back(gpu_summary_line(snapshot.gpus[i], i == selected, cols));
  if (count) {
    const GpuView& gpu = snapshot.gpus[selected];
    lines.emplace_back();
    for (auto& l : detail_lines(gpu, history, cols)) lines.push_back(std::move(l));
    lines.emplace_back();
    auto processes = gpu.processes;
    sort_processes(processes, state.sort);
    if (processes.empty()) {
      lines.push_back(gpu.sample ? "No compute processes on this GPU." : "");
    } else {
      using A = TextTable::Align;
      TextTable table({"PID", "USER", "GPU MEM", "SM", "MEM BUSY", "CONTAINER", "COMMAND"},
                      {A::Right, A::Left, A::Right, A::Right, A::Right, A::Left, A::Left});
      for (const auto& p : processes) {
        table.add_row({std::to_string(p.gpu.pid), or_na(p.details.user), fmt_bytes(p.gpu.used_bytes),
                       fmt_percent(p.gpu.sm_util_percent), fmt_percent(p.gpu.mem_util_percent),
                       fmt_container(p.details), or_na(p.details.command)});
      }
      std::string text = table.render();
      std::size_t start = 0;
      while (start < text.size()) {
        std::size_t end = text.find('\n', start);
        lines.push_back(text.substr(start, end - start));
        start = end + 1;
      }
    }
  }
  if (lines.size() > rows && rows > 0) {
    std::size_t hidden = lines.size() - rows + 1;
    lines.resize(rows - 1);
    lines.push_back("... " + std::to_string(hidden) + " more line(s): enlarge the terminal");
  }
  while (lines.size() < rows) lines.emplace_back();
  std::string frame;
  for (std::size_t i = 0; i < rows; ++i) frame += (i ? "\n" : "") + fit(lines[i], cols);
  return frame;
}

}  // namespace vramdoc::watch
