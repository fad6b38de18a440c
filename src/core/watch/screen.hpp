// The full-screen view as pure functions: key bytes -> actions -> state, and state + snapshot
// -> a frame of exactly rows x cols cells. The CLI only moves bytes to and from the terminal.
#pragma once
#include <cstddef>
#include <deque>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/watch/model.hpp"

namespace vramdoc::watch {

// What the user asked for with a key.
enum class Action { Quit, CycleSort, NextGpu, PrevGpu, PickGpu };
struct KeyAction {
  Action action;
  unsigned gpu_position = 0;  // for PickGpu: the digit pressed
};

// Decodes terminal input: q / Ctrl-C quit, s sort, g / right / down next GPU, left / up previous
// GPU, 0-9 pick a GPU by position. Other bytes and unknown escape sequences are ignored.
std::vector<KeyAction> parse_keys(std::string_view bytes);

// What the view remembers between frames.
struct ScreenState {
  std::size_t selected = 0;  // position in Snapshot::gpus
  SortKey sort = SortKey::Memory;
  bool quit = false;
};

// Applies one action; the selection wraps and stays within `gpu_count`.
ScreenState apply(ScreenState state, const KeyAction& key, std::size_t gpu_count);

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

// `text` cut or padded with spaces to exactly `cols` display cells.
std::string fit(const std::string& text, std::size_t cols);

// One frame: `rows` lines joined by "\n" (no trailing newline), each exactly `cols` cells.
// `clock` is the time shown in the title line.
std::string render_screen(const Snapshot& snapshot, const MemoryHistory& history, const ScreenState& state,
                          std::size_t rows, std::size_t cols, const std::string& clock = "");

}  // namespace vramdoc::watch
