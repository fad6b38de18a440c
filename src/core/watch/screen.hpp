// The full-screen view as pure functions: key bytes -> actions -> state, and state + snapshot
// -> a frame of exactly rows x cols cells. The CLI only moves bytes to and from the terminal and
// carries out a confirmed signal (backends/watch/signals.hpp).
#pragma once
#include <cstddef>
#include <cstdint>
#include <deque>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/style.hpp"
#include "core/watch/model.hpp"

namespace vramdoc::watch {

// The signals the view can send to a process.
enum class ProcessSignal { Terminate, Kill, Interrupt };
// "SIGTERM", "SIGKILL", "SIGINT".
std::string signal_name(ProcessSignal signal);

// What the user asked for with a key.
enum class Action { Quit, CycleSort, NextGpu, PrevGpu, PickGpu, ProcessUp, ProcessDown, Signal, Yes, Other };
struct KeyAction {
  Action action;
  unsigned gpu_position = 0;                       // for PickGpu: the digit pressed
  ProcessSignal signal = ProcessSignal::Terminate;  // for Signal
};

// Decodes terminal input: q quit, s sort, g / right next GPU, left previous GPU, 0-9 a GPU by
// position, up / k and down / j the process selection, T SIGTERM, K SIGKILL, I SIGINT, y yes.
// Other bytes (and unknown escape sequences, a lone Esc) are Other: they answer "no" to a prompt.
std::vector<KeyAction> parse_keys(std::string_view bytes);

// A process of the list: its GPU and PID.
struct ProcessKey {
  unsigned gpu = 0;
  std::uint32_t pid = 0;
  bool operator==(const ProcessKey&) const = default;
};

// A signal asked for (waiting for y) or confirmed (for the CLI to send): to which process, and
// the start time seen, so that a reused PID is not signalled.
struct SignalRequest {
  ProcessKey process;
  ProcessSignal signal = ProcessSignal::Terminate;
  std::optional<std::uint64_t> start_ticks;
  std::string command;  // as shown (redacted where it was read)
};

// What the view remembers between frames.
struct ScreenState {
  std::size_t selected = 0;  // position in Snapshot::gpus: the GPU shown in detail
  SortKey sort = SortKey::Memory;
  std::optional<ProcessKey> process;     // the selected row of the process list, followed across sorts
  std::optional<SignalRequest> prompt;   // asked, waiting for y (any other key cancels)
  std::optional<SignalRequest> request;  // confirmed: the CLI sends it, then clears it and sets status
  std::string status;                    // the last outcome, on the bottom line until the next key
  bool quit = false;
};

// Applies one key to the state for the processes and GPUs of `snapshot`. The GPU selection
// wraps; the process selection moves in the order shown and stops at the ends.
ScreenState apply(ScreenState state, const KeyAction& key, const Snapshot& snapshot);

// The status line after the CLI sent `request`: sent, or why not (`error`).
std::string signal_outcome(const SignalRequest& request, const std::optional<std::string>& error);

// Memory-used fractions per GPU index, the newest last, at most `capacity` each.
class MemoryHistory {
 public:
  explicit MemoryHistory(std::size_t capacity = 512) : capacity_(capacity) {}
  // Appends each GPU's used fraction (unknown when the sample failed or lacks the numbers).
  void push(const Snapshot& snapshot);
  // The samples of GPU `index`, oldest first (empty if never seen).
  const std::deque<std::optional<double>>& of(unsigned index) const;

 private:
  std::size_t capacity_;
  std::map<unsigned, std::deque<std::optional<double>>> by_gpu_;
};

// The last `width` samples as a bar per sample (U+2581..U+2588), unknown as a space, padded on
// the left with spaces to `width` cells.
std::string sparkline(const std::deque<std::optional<double>>& samples, std::size_t width);

// A meter "[#####.....]" of `width` cells (brackets included) for a fraction 0..1; "[ n/a ]"
// centred when unknown.
std::string meter(std::optional<double> fraction, std::size_t width);

// `text` cut or padded with spaces to exactly `cols` display cells. Colour codes (ESC [ ... m)
// take no cell; a line cut after one ends with a reset.
std::string fit(const std::string& text, std::size_t cols);

// One frame: `rows` lines joined by "\n" (no trailing newline), each exactly `cols` cells.
// `clock` is the time shown in the title line. With `style.color`, bars, errors, hints and the
// selected process are coloured; without, the frame is plain text (the golden files).
std::string render_screen(const Snapshot& snapshot, const MemoryHistory& history, const ScreenState& state,
                          std::size_t rows, std::size_t cols, const std::string& clock = "",
                          const Style& style = {});

}  // namespace vramdoc::watch
