// The view's frame: a title, one line per GPU with memory and utilisation bars, the selected GPU in
// detail with its history plotted, every GPU's processes in one list (screen_table.cpp), and the
// prompt, the filter being typed or the last outcome at the bottom; or the help screen.
#include "core/watch/screen.hpp"

#include <algorithm>
#include <array>
#include <cmath>

#include "core/table.hpp"
#include "core/terminal_safe.hpp"
#include "core/units.hpp"
#include "core/watch/format.hpp"

namespace vramdoc::watch {

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

// "40.00/140.00 GiB": both in one unit when they share it.
std::string used_of_total(const GpuMemory& m) {
  const std::string used = fmt_bytes(m.used_bytes), total = fmt_bytes(m.total_bytes);
  const auto unit = [](const std::string& t) { return t.substr(t.rfind(' ') + 1); };
  if (used.find(' ') != std::string::npos && total.find(' ') != std::string::npos && unit(used) == unit(total))
    return used.substr(0, used.rfind(' ')) + "/" + total;
  return used + "/" + total;
}

// One GPU in a line. Wide: the bars and every figure with its label; short (80 columns): the same
// figures in fewer words, the bars as wide as the rest leaves (left out below 5 cells).
std::string gpu_line(const GpuView& gpu, bool selected, std::size_t cols, const Style& style) {
  const std::string mark = std::string(selected ? "> " : "  ") + std::to_string(gpu.info.index) + " ";
  std::string head = mark + fit(or_na(gpu.info.name), 18) + " ";
  if (!gpu.sample) return head + style.paint("not read: " + terminal_safe(gpu.error.value_or("unknown error")), Tone::Bad);
  const GpuSample& s = *gpu.sample;
  std::string util = fmt_percent(s.sm_util_percent);
  util = std::string(util.size() < 4 ? 4 - util.size() : 0, ' ') + util;
  const std::string temperature = s.temperature_c ? std::to_string(*s.temperature_c) + " C" : "n/a";
  const auto used = used_fraction(s.memory);
  std::string memory = " " + fmt_bytes(s.memory.used_bytes) + " / " + fmt_bytes(s.memory.total_bytes);
  std::string rest = "  MEM BUSY " + fmt_percent(s.mem_util_percent) + "  " + fmt_watts(s.power_watts) + "  " + temperature;
  std::string util_label = "  UTIL ";
  std::size_t text = display_width(head) + 4 + display_width(memory) + 8 + util.size() + display_width(rest);
  if (cols < text + 20) {  // short: bars under 10 cells each
    head = mark + fit(or_na(gpu.info.name), 12) + " ";
    memory = " " + used_of_total(s.memory);
    rest = "  BW " + fmt_percent(s.mem_util_percent) + "  " + fmt_watts(s.power_watts) + "  " + temperature;
    util_label = "  SM ";
    text = display_width(head) + 4 + display_width(memory) + 5 + 1 + util.size() + display_width(rest);
  }
  const std::size_t each = std::min<std::size_t>(cols > text ? (cols - text) / 2 : 0, 32);
  if (each < 5)  // no room for bars: the figures alone
    return head + "MEM" + memory + util_label + util.substr(util.find_first_not_of(' ')) + rest;
  return head + "MEM " + bar(used, each, used ? memory_tone(*used) : Tone::Good, style) + memory + util_label +
         bar(percent_fraction(s.sm_util_percent), each, Tone::Good, style) + " " + util + rest;
}

// `segments` after `prefix`, joined by `gap`, wrapped onto lines indented like the prefix when the
// next one would pass `cols`.
std::vector<std::string> wrapped(const std::string& prefix, const std::vector<std::string>& segments, std::size_t cols,
                                 const std::string& gap = "  ") {
  std::vector<std::string> lines{prefix};
  const std::string indent(display_width(prefix), ' ');
  bool first = true;
  for (const auto& seg : segments) {
    std::string& line = lines.back();
    if (!first && display_width(line) + gap.size() + display_width(seg) > cols) lines.push_back(indent + seg);
    else line += (first ? "" : gap) + seg;
    first = false;
  }
  return lines;
}

std::vector<std::string> words(const std::string& text) {
  std::vector<std::string> out;
  for (std::size_t pos = 0; pos < text.size();) {
    const std::size_t end = std::min(text.find(' ', pos), text.size());
    if (end > pos) out.push_back(text.substr(pos, end - pos));
    pos = end + 1;
  }
  return out;
}

std::vector<std::string> detail_lines(const GpuView& gpu, std::size_t cols, const Style& style) {
  std::vector<std::string> lines = wrapped("", {"GPU " + std::to_string(gpu.info.index), or_na(gpu.info.name), or_na(gpu.info.uuid),
                                                "bus " + or_na(gpu.info.pci_bus_id)}, cols);
  if (!gpu.sample) {
    lines.push_back("  " + style.paint("not read: " + terminal_safe(gpu.error.value_or("unknown error")), Tone::Bad));
    return lines;
  }
  const GpuSample& s = *gpu.sample;
  auto add = [&](const std::string& prefix, const std::vector<std::string>& segments) {
    for (auto& l : wrapped(prefix, segments, cols)) lines.push_back(std::move(l));
  };
  add("  memory   ", {"used " + fmt_bytes(s.memory.used_bytes) + " of " + fmt_bytes(s.memory.total_bytes),
                      "reserved " + fmt_bytes(s.memory.reserved_bytes), "free " + fmt_bytes(s.memory.free_bytes)});
  std::optional<std::uint64_t> peak;
  if (gpu.info.pcie_bandwidth_bytes_per_s) peak = static_cast<std::uint64_t>(*gpu.info.pcie_bandwidth_bytes_per_s);
  add("  busy     ", {"SM " + fmt_percent(s.sm_util_percent), "memory controller " + fmt_percent(s.mem_util_percent),
                      "PCIe tx " + fmt_rate(s.pcie_tx_bytes_per_s) + " rx " + fmt_rate(s.pcie_rx_bytes_per_s) + " (peak " + fmt_rate(peak) + ")"});
  auto mhz = [](const std::optional<unsigned>& v) { return v ? std::to_string(*v) + " MHz" : std::string("n/a"); };
  add("  clocks   ", {"SM " + mhz(s.sm_clock_mhz), "memory " + mhz(s.mem_clock_mhz),
                      "power " + fmt_watts(s.power_watts) + " of " + fmt_watts(s.power_limit_watts), "throttle " + fmt_throttle(s.throttle_reasons)});
  for (const auto& h : gpu.hints)
    for (auto& l : wrapped("  hint     ", words(h.text), cols, " ")) {
      const std::size_t at = 11;  // the hint's text, painted after its label
      lines.push_back(l.substr(0, at) + style.paint(l.substr(at), Tone::Warn));
    }
  return lines;
}

// A plot's panel: a title and its samples.
struct Panel {
  std::string title;
  const MemoryHistory::Samples* samples;
};

// The history of the selected GPU (memory, SM utilisation) and of the selected process (its memory),
// side by side, `height` rows of plot under a title line; 100 % at the top.
std::vector<std::string> plots(const GpuView& gpu, const MemoryHistory& history, const std::optional<ProcessRow>& process,
                               std::size_t height, std::size_t cols) {
  std::vector<Panel> panels;
  const unsigned index = gpu.info.index;
  auto latest = [](const MemoryHistory::Samples& s) {
    return s.empty() || !s.back() ? std::string("n/a") : std::to_string(std::lround(*s.back() * 100)) + "%";
  };
  panels.push_back({"GPU " + std::to_string(index) + " memory " + latest(history.of(index)), &history.of(index)});
  panels.push_back({"GPU " + std::to_string(index) + " SM " + latest(history.util_of(index)), &history.util_of(index)});
  if (process) {
    const auto& own = history.process_of(process->gpu, process->process.gpu.pid);
    if (!own.empty())
      panels.push_back({"PID " + std::to_string(process->process.gpu.pid) + " memory " + latest(own), &own});
  }
  constexpr std::size_t kLabel = 5;  // "100% "
  auto width_of = [&](std::size_t n) { return cols > 2 + 3 * (n - 1) ? (cols - 2 - 3 * (n - 1)) / n : 0; };
  while (panels.size() > 1 && width_of(panels.size()) < kLabel + 12) panels.pop_back();
  const std::size_t w = width_of(panels.size());
  if (w < kLabel + 4) return {};
  std::vector<std::string> lines(height + 1, "  ");
  for (std::size_t p = 0; p < panels.size(); ++p) {
    const std::string gap = p ? "   " : "";
    lines[0] += gap + fit(std::string(kLabel, ' ') + panels[p].title, w);
    const auto rows = plot(*panels[p].samples, w - kLabel, height);
    for (std::size_t r = 0; r < height; ++r) {
      const char* label = r == 0 ? "100% " : r + 1 == height ? "  0% " : "     ";
      lines[r + 1] += gap + label + rows[r];
    }
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

// The bottom line: the question being asked, the filter being typed, else the last outcome; empty
// when none.
std::string bottom_line(const ScreenState& state, const Style& style) {
  if (state.prompt) {
    const SignalRequest& p = *state.prompt;
    return style.paint("Send " + signal_name(p.signal) + " to PID " + std::to_string(p.process.pid) +
                           (p.command.empty() ? "" : " (" + terminal_safe(p.command) + ")") + " on GPU " +
                           std::to_string(p.process.gpu) + "? y: yes, any other key: no",
                       Tone::Warn);
  }
  if (state.typing_filter) return "filter: " + terminal_safe(state.filter) + "_   Enter keeps it, Esc clears it";
  const std::string status = terminal_safe(state.status);  // it may name the process's command
  if (status.find(" not sent: ") != std::string::npos) return style.paint(status, Tone::Bad);
  return status;
}

// The title; on a narrow terminal the clock goes first, then the GPU's place in the list, then
// "q quit" (the help names it), so that the sort, the filter and "h help" stay readable.
std::string title(const Snapshot& snapshot, std::size_t selected, const ScreenState& state, const std::string& clock,
                  std::size_t cols) {
  const std::size_t count = snapshot.gpus.size();
  const std::string gpu = count ? "GPU " + std::to_string(snapshot.gpus[selected].info.index) : "no GPU";
  const std::string place = count ? " (" + std::to_string(selected + 1) + " of " + std::to_string(count) + ")" : "";
  std::string rest = "  sort: " + sort_key_name(state.sort) + (state.reverse ? " (reversed)" : "");
  if (!state.filter.empty() && !state.typing_filter) rest += "  filter: " + terminal_safe(state.filter);
  rest += "   h help";
  for (const auto& t : {"vramdoc watch  " + clock + "  " + gpu + place + rest + "  q quit", "vramdoc watch  " + gpu + place + rest + "  q quit",
                        "vramdoc watch  " + gpu + rest + "  q quit"})
    if (display_width(t) <= cols) return t;
  return "vramdoc watch  " + gpu + rest;
}

// The lines between the details and the bottom: the plots, when `room` leaves them 2 rows or
// more beside the process list's header and first rows (else a one-line sparkline), then the list.
void add_history_and_processes(std::vector<std::string>& lines, const Snapshot& snapshot, const MemoryHistory& history,
                               const ScreenState& state, std::size_t selected, std::size_t body, std::size_t cols,
                               const Style& style) {
  const auto processes = shown_processes(snapshot, state);
  std::optional<std::size_t> at;
  for (std::size_t i = 0; i < processes.size(); ++i)
    if (state.process && processes[i].gpu == state.process->gpu && processes[i].process.gpu.pid == state.process->pid) at = i;
  const std::size_t list_needs = processes.empty() ? 1 : 2 + std::min<std::size_t>(processes.size(), 3) + (processes.size() > 3);
  const std::size_t left = body > lines.size() + list_needs ? body - lines.size() - list_needs : 0;
  const GpuView& gpu = snapshot.gpus[selected];
  constexpr std::size_t kMaxPlotRows = 10;
  const std::size_t height = left >= 4 ? std::min(left - 2, kMaxPlotRows) : 0;  // 2: the title line and a blank
  std::optional<ProcessRow> process;
  if (at) process = processes[*at];
  auto drawn = height >= 2 ? plots(gpu, history, process, height, cols) : std::vector<std::string>{};
  if (!drawn.empty()) {
    lines.insert(lines.end(), drawn.begin(), drawn.end());
    lines.emplace_back();
  } else if (left >= 2) {
    lines.push_back("  history  " + sparkline(history.of(gpu.info.index), cols > 12 ? cols - 12 : 0));
    lines.emplace_back();
  }
  if (processes.empty()) {
    lines.push_back(state.filter.empty() ? "No compute processes on the GPUs."
                                         : "No process matches the filter '" + terminal_safe(state.filter) + "' (/ then Esc clears it).");
    return;
  }
  const auto table = process_table(processes, at, cols);
  const std::size_t room = body > lines.size() ? body - lines.size() : 0;
  const auto shown = room >= 4 ? process_window(table, at, room, cols, style) : table;
  lines.insert(lines.end(), shown.begin(), shown.end());
}

}  // namespace

std::string render_help(std::size_t rows, std::size_t cols) {
  const std::vector<std::pair<std::string, std::string>> keys = {
      {"q", "quit"},
      {"h  ?", "this help (any key closes it)"},
      {"s", "sort the processes by the next key: memory, gpu, pid, cpu, time, util"},
      {"r", "reverse the sort order"},
      {"/", "filter the processes: text found in the PID, the user or the command, in any case; Enter keeps it, "
            "Esc clears it, Backspace takes a character back"},
      {"g  right", "the next GPU"},
      {"left", "the previous GPU"},
      {"0-9", "a GPU by its position"},
      {"up  k", "the previous process"},
      {"down  j", "the next process"},
      {"T  K  I", "send SIGTERM, SIGKILL or SIGINT to the selected process (y confirms, any other key does not)"},
  };
  std::vector<std::string> lines{"vramdoc watch: keys", ""};
  for (const auto& [key, what] : keys)
    for (auto& l : wrapped("  " + fit(key, 10) + "  ", words(what), cols, " ")) lines.push_back(std::move(l));
  lines.emplace_back();
  for (auto& l : wrapped("", words("The plots: the selected GPU's memory used and SM utilisation, and the selected process's "
                                   "memory as a share of its GPU, one column per sample (--interval), the newest on the right. "
                                   "Colour: --color auto, always or never (NO_COLOR is honoured)."), cols, " "))
    lines.push_back(std::move(l));
  lines.resize(rows);
  std::string frame;
  for (std::size_t i = 0; i < rows; ++i) frame += (i ? "\n" : "") + fit(lines[i], cols);
  return frame;
}

std::string render_screen(const Snapshot& snapshot, const MemoryHistory& history, const ScreenState& state,
                          std::size_t rows, std::size_t cols, const std::string& clock, const Style& style) {
  if (state.help) return render_help(rows, cols);
  const std::size_t count = snapshot.gpus.size();
  const std::size_t selected = count ? std::min(state.selected, count - 1) : 0;
  std::vector<std::string> lines{title(snapshot, selected, state, clock, cols)};
  if (count == 0) lines.push_back("No GPU to watch.");
  for (std::size_t i = 0; i < count; ++i) lines.push_back(gpu_line(snapshot.gpus[i], i == selected, cols, style));
  const std::string bottom = bottom_line(state, style);
  const std::size_t body = rows - std::min<std::size_t>(rows, bottom.empty() ? 0 : 1);
  if (count) {
    lines.emplace_back();
    for (auto& l : detail_lines(snapshot.gpus[selected], cols, style)) lines.push_back(std::move(l));
    lines.emplace_back();
    add_history_and_processes(lines, snapshot, history, state, selected, body, cols, style);
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
