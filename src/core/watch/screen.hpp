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
enum class Action { Quit, CycleSort, Reverse, Help, Filter, NextGpu, PrevGpu, PickGpu, ProcessUp, ProcessDown, Signal, Yes, Other };
struct KeyAction {
  Action action;
  unsigned gpu_position = 0;                       // for PickGpu: the digit pressed
  ProcessSignal signal = ProcessSignal::Terminate;  // for Signal
  char byte = 0;                                   // the key's byte when it was one byte (0: an escape sequence)
};

// Decodes terminal input: q quit, s sort, r reverse the sort, h / ? help, / filter, g / right next
// GPU, left previous GPU, 0-9 a GPU by position, up / k and down / j the process selection,
// T SIGTERM, K SIGKILL, I SIGINT, y yes. Other bytes (and unknown escape sequences, a lone Esc)
// are Other: they answer "no" to a prompt. While a filter is typed, every byte is text (apply).
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
  bool reverse = false;                  // r: the sort order reversed
  bool help = false;                     // h / ?: the help screen instead of the view (any key closes it)
  std::string filter;                    // /: only processes whose PID, user or command contain it (any case)
  bool typing_filter = false;            // between / and Enter (Esc clears the filter)
  bool quit = false;
};

// The processes the view lists, in the order shown: sorted by state.sort (reversed with r),
// only those matching state.filter.
std::vector<ProcessRow> shown_processes(const Snapshot& snapshot, const ScreenState& state);

// Applies one key to the state for the processes and GPUs of `snapshot`. The GPU selection
// wraps; the process selection moves in the order shown and stops at the ends.
ScreenState apply(ScreenState state, const KeyAction& key, const Snapshot& snapshot);

// The status line after the CLI sent `request`: sent, or why not (`error`).
std::string signal_outcome(const SignalRequest& request, const std::optional<std::string>& error);

// Per GPU index: the memory-used fraction and the SM utilisation (0..1); per process on a GPU: its
// memory as a fraction of that GPU's; the newest last, at most `capacity` each.
class MemoryHistory {
 public:
  using Samples = std::deque<std::optional<double>>;
  explicit MemoryHistory(std::size_t capacity = 512) : capacity_(capacity) {}
  // Appends each GPU's used fraction and utilisation, and each listed process's memory share
  // (unknown when the sample failed or lacks the numbers; a process gone since: unknown).
  void push(const Snapshot& snapshot);
  // The samples of GPU `index`, oldest first (empty if never seen).
  const Samples& of(unsigned index) const;
  const Samples& util_of(unsigned index) const;
  // The memory of process `pid` on GPU `gpu` (empty if never listed).
  const Samples& process_of(unsigned gpu, std::uint32_t pid) const;

 private:
  void append(Samples& samples, std::optional<double> value) const;
  std::size_t capacity_;
  std::map<unsigned, Samples> by_gpu_, util_by_gpu_;
  std::map<std::pair<unsigned, std::uint32_t>, Samples> by_process_;
};

// The last `width` samples as a bar per sample (U+2581..U+2588), unknown as a space, padded on
// the left with spaces to `width` cells.
std::string sparkline(const std::deque<std::optional<double>>& samples, std::size_t width);

// The last `width` samples as a plot `height` rows high, one column per sample (block elements
// U+2581..U+2588 on top of full blocks), 0 at the bottom, 1 at the top; unknown and missing
// samples are empty columns. Each line is exactly `width` cells.
std::vector<std::string> plot(const std::deque<std::optional<double>>& samples, std::size_t width, std::size_t height);

// A meter "[#####.....]" of `width` cells (brackets included) for a fraction 0..1; "[ n/a ]"
// centred when unknown.
std::string meter(std::optional<double> fraction, std::size_t width);

// `text` cut or padded with spaces to exactly `cols` display cells. Colour codes (ESC [ ... m)
// take no cell; a line cut after one ends with a reset.
std::string fit(const std::string& text, std::size_t cols);

// The process list for `cols` columns: the header, a rule, a line per row (the selected one marked
// "> "). Columns that do not fit are left out by priority (an empty CONTAINER column always; then
// HOST MEM, TIME, SM, CPU, USER, GPU); COMMAND takes the rest of the line.
std::vector<std::string> process_table(const std::vector<ProcessRow>& rows, const std::optional<std::size_t>& selected,
                                       std::size_t cols);

// The help screen: every key and what it does, `rows` x `cols` like a frame.
std::string render_help(std::size_t rows, std::size_t cols);

// One frame: `rows` lines joined by "\n" (no trailing newline), each exactly `cols` cells.
// `clock` is the time shown in the title line. With `style.color`, bars, errors, hints and the
// selected process are coloured; without, the frame is plain text (the golden files). With
// state.help, the help screen.
std::string render_screen(const Snapshot& snapshot, const MemoryHistory& history, const ScreenState& state,
                          std::size_t rows, std::size_t cols, const std::string& clock = "",
                          const Style& style = {});

}  // namespace vramdoc::watch
