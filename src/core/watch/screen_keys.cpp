// The view's input side: key bytes to actions, actions to state (selection, sort and its order,
// the filter, help, the signal prompt). The frame is drawn in screen.cpp.
#include <algorithm>
#include <cctype>

#include "core/watch/screen.hpp"

namespace vramdoc::watch {

std::string signal_name(ProcessSignal signal) {
  switch (signal) {
    case ProcessSignal::Terminate: return "SIGTERM";
    case ProcessSignal::Kill: return "SIGKILL";
    case ProcessSignal::Interrupt: return "SIGINT";
  }
  return "SIGTERM";
}

namespace {

// The action of one plain byte.
KeyAction byte_action(char c) {
  switch (c) {
    case 'q': case 'Q': case '\x03': return {Action::Quit};
    case 's': case 'S': return {Action::CycleSort};
    case 'r': case 'R': return {Action::Reverse};
    case 'h': case 'H': case '?': return {Action::Help};
    case '/': return {Action::Filter};
    case 'g': case 'G': return {Action::NextGpu};
    case 'j': return {Action::ProcessDown};
    case 'k': return {Action::ProcessUp};
    case 'T': return {Action::Signal, 0, ProcessSignal::Terminate};
    case 'K': return {Action::Signal, 0, ProcessSignal::Kill};
    case 'I': return {Action::Signal, 0, ProcessSignal::Interrupt};
    case 'y': case 'Y': return {Action::Yes};
    default: break;
  }
  if (c >= '0' && c <= '9') return {Action::PickGpu, static_cast<unsigned>(c - '0')};
  return {Action::Other};
}

// Whether `needle` (already lower case) is in `text`, ignoring case.
bool contains_folded(const std::string& text, const std::string& needle) {
  std::string folded = text;
  for (char& c : folded) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return folded.find(needle) != std::string::npos;
}

// One byte typed after /: Enter keeps the filter, Esc clears it, Backspace takes a character back.
ScreenState type_filter(ScreenState state, char byte) {
  constexpr std::size_t kMaxFilter = 64;
  if (byte == '\r' || byte == '\n') {
    state.typing_filter = false;
  } else if (byte == '\x1b') {
    state.typing_filter = false;
    state.filter.clear();
  } else if (byte == '\x7f' || byte == '\b') {
    while (!state.filter.empty() && (static_cast<unsigned char>(state.filter.back()) & 0xC0) == 0x80) state.filter.pop_back();
    if (!state.filter.empty()) state.filter.pop_back();
  } else if (static_cast<unsigned char>(byte) >= 0x20 && state.filter.size() < kMaxFilter) {
    state.filter += byte;
  }
  return state;
}

// The position of `key` in `rows`, if listed.
std::optional<std::size_t> position_of(const std::vector<ProcessRow>& rows, const std::optional<ProcessKey>& key) {
  if (!key) return std::nullopt;
  for (std::size_t i = 0; i < rows.size(); ++i)
    if (rows[i].gpu == key->gpu && rows[i].process.gpu.pid == key->pid) return i;
  return std::nullopt;
}

ScreenState move_selection(ScreenState state, bool down, const Snapshot& snapshot) {
  const auto rows = shown_processes(snapshot, state);
  if (rows.empty()) return state;
  auto at = position_of(rows, state.process);
  std::size_t next = down ? 0 : rows.size() - 1;  // nothing selected yet: the first (or last) row
  if (at) next = down ? std::min(*at + 1, rows.size() - 1) : (*at == 0 ? 0 : *at - 1);
  state.process = ProcessKey{rows[next].gpu, rows[next].process.gpu.pid};
  return state;
}

ScreenState ask_signal(ScreenState state, ProcessSignal signal, const Snapshot& snapshot) {
  const auto rows = shown_processes(snapshot, state);
  const auto at = position_of(rows, state.process);
  if (!at) {
    state.status = "select a process first (up / down or j / k), then T, K or I";
    return state;
  }
  const ProcessView& p = rows[*at].process;
  state.prompt = SignalRequest{*state.process, signal, p.usage.start_ticks, p.details.command.value_or("")};
  return state;
}

}  // namespace

std::vector<ProcessRow> shown_processes(const Snapshot& snapshot, const ScreenState& state) {
  auto rows = process_rows(snapshot, state.sort);
  if (state.reverse) std::reverse(rows.begin(), rows.end());
  if (state.filter.empty()) return rows;
  std::string needle = state.filter;
  for (char& c : needle) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  std::erase_if(rows, [&](const ProcessRow& r) {
    const ProcessView& p = r.process;
    return !contains_folded(std::to_string(p.gpu.pid), needle) && !contains_folded(p.details.user.value_or(""), needle) &&
           !contains_folded(p.details.command.value_or(""), needle);
  });
  return rows;
}

std::vector<KeyAction> parse_keys(std::string_view bytes) {
  std::vector<KeyAction> keys;
  for (std::size_t i = 0; i < bytes.size(); ++i) {
    if (bytes[i] == '\x1b' && i + 2 < bytes.size() && (bytes[i + 1] == '[' || bytes[i + 1] == 'O')) {
      const char code = bytes[i + 2];
      if (code == 'C') keys.push_back({Action::NextGpu});
      else if (code == 'D') keys.push_back({Action::PrevGpu});
      else if (code == 'A') keys.push_back({Action::ProcessUp});
      else if (code == 'B') keys.push_back({Action::ProcessDown});
      else keys.push_back({Action::Other});
      i += 2;
      continue;
    }
    KeyAction key = byte_action(bytes[i]);
    key.byte = bytes[i];
    keys.push_back(key);
  }
  return keys;
}

ScreenState apply(ScreenState state, const KeyAction& key, const Snapshot& snapshot) {
  state.status.clear();
  if (state.help) {  // any key closes the help screen
    state.help = false;
    return state;
  }
  if (state.typing_filter && key.byte) return type_filter(state, key.byte);
  if (state.prompt) {  // y sends; any other key, q included, only cancels
    if (key.action == Action::Yes) state.request = state.prompt;
    else state.status = "cancelled: no signal sent";
    state.prompt.reset();
    return state;
  }
  const std::size_t gpu_count = snapshot.gpus.size();
  switch (key.action) {
    case Action::Quit: state.quit = true; break;
    case Action::CycleSort: state.sort = next_sort_key(state.sort); break;
    case Action::Reverse: state.reverse = !state.reverse; break;
    case Action::Help: state.help = true; break;
    case Action::Filter: state.typing_filter = true; break;
    case Action::NextGpu:
      if (gpu_count) state.selected = (state.selected + 1) % gpu_count;
      break;
    case Action::PrevGpu:
      if (gpu_count) state.selected = (state.selected + gpu_count - 1) % gpu_count;
      break;
    case Action::PickGpu:
      if (key.gpu_position < gpu_count) state.selected = key.gpu_position;
      break;
    case Action::ProcessUp: return move_selection(state, false, snapshot);
    case Action::ProcessDown: return move_selection(state, true, snapshot);
    case Action::Signal: return ask_signal(state, key.signal, snapshot);
    case Action::Yes: case Action::Other: break;
  }
  if (gpu_count && state.selected >= gpu_count) state.selected = gpu_count - 1;
  return state;
}

std::string signal_outcome(const SignalRequest& request, const std::optional<std::string>& error) {
  if (error) return signal_name(request.signal) + " not sent: " + *error;
  return signal_name(request.signal) + " sent to PID " + std::to_string(request.process.pid) +
         (request.command.empty() ? "" : " (" + request.command + ")");
}

}  // namespace vramdoc::watch
