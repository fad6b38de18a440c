// A series' samples kept within a fixed size however long the recording (docs/streaming.md): up
// to the cap every sample is kept as read; beyond it the samples are put in equal time bins
// (the width doubling as the recording grows) and each bin keeps its lowest and its highest
// reading, in time order, with the series' first and last reading. Floors, peaks, rises to new
// highs and the last reading survive; what is left out is said in `Thinning`.
#pragma once
#include <cstddef>
#include <vector>

#include "core/timeline/timeline.hpp"

namespace vramdoc::timeline {

// The most samples one recording keeps, over all its series (the job's and each process's):
// 262,144 samples of 64 bytes, 16 MiB.
inline constexpr std::size_t kMaxKeptSamples = std::size_t{1} << 18;
// The fewest one series keeps, however many series share the budget.
inline constexpr std::size_t kMinKeptSamples = 256;

// What a series' cap per series is when `series` share kMaxKeptSamples.
std::size_t kept_samples_per_series(std::size_t series);

class SampleKeeper {
 public:
  explicit SampleKeeper(std::size_t cap = kMaxKeptSamples);
  // A sample later than (or as late as) every sample before it.
  void add(const Sample& s);
  // A lower cap (a new series shares the budget): thins at once when more are kept.
  void set_cap(std::size_t cap);
  // What is kept, in time order; moved out by take().
  const std::vector<Sample>& samples() const { return kept_; }
  std::vector<Sample> take() { return std::move(kept_); }
  // How it was thinned; empty while every sample read is kept.
  std::optional<Thinning> thinning() const;

 private:
  void thin();
  std::vector<Sample> kept_;
  std::size_t cap_;
  std::size_t read_ = 0;
  double bin_seconds_ = 0;  // 0 while nothing was left out
};

}  // namespace vramdoc::timeline
