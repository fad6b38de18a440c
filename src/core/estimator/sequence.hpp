// An allocation sequence under construction: tensor by tensor, as PyTorch makes and frees them,
// each tagged with what it is (weight, KV cache, activation, ...) and the stage of the step it
// belongs to, so that the live bytes at each stage's peak can be told apart (the phase terms).
#pragma once
#include <array>
#include <cstdint>
#include <unordered_map>
#include <utility>
#include <vector>

#include "core/estimator/allocator.hpp"
#include "core/units.hpp"

namespace vramdoc::estimator::detail {

// What a tensor is, for the breakdown of a peak.
enum class Use : std::uint8_t { Weight, Cast, Cache, Workspace, Dequant, Activation, Gradient, State, Logits, kCount };
// Which part of the step an allocation happens in: inference (Layers, Head, Decoding) or a training
// step (Forward, Loss: the loss and the head's backward, Backward: the layers' and the embeddings',
// Optimizer).
enum class Stage : std::uint8_t { Setup, Layers, Head, Decoding, Forward, Loss, Backward, Optimizer, kCount };

constexpr std::size_t kUses = static_cast<std::size_t>(Use::kCount);
constexpr std::size_t kStages = static_cast<std::size_t>(Stage::kCount);

// The live bytes, split by use, at the moment a stage's live total peaked.
struct StagePeak {
  std::uint64_t total = 0;
  std::array<std::uint64_t, kUses> by_use{};
  std::uint64_t of(Use u) const { return by_use[static_cast<std::size_t>(u)]; }
};

// Where a forward's tensors go: a recorded sequence, or one rank's allocators (rank_sequence.cpp).
class Tape {
 public:
  virtual ~Tape() = default;
  // Allocates `bytes` (nothing for 0, id 0); returns the tensor's id.
  virtual std::uint64_t alloc(std::uint64_t bytes, Use use = Use::Activation) = 0;
  // Frees tensor `id` (0 and unknown ids are ignored).
  virtual void free(std::uint64_t id) = 0;
  void free(std::vector<std::uint64_t>& ids) {
    for (std::uint64_t id : ids) free(id);
    ids.clear();
  }
  // Bytes of live tensor `id` (0 when it is not live).
  virtual std::uint64_t bytes_of(std::uint64_t id) const = 0;
};

class Sequence : public Tape {
 public:
  using Tape::free;
  std::uint64_t alloc(std::uint64_t bytes, Use use = Use::Activation) override {
    if (bytes == 0) return 0;
    events_.push_back({true, bytes, next_});
    live_[next_] = {bytes, use};
    live_by_use_[static_cast<std::size_t>(use)] += bytes;
    live_total_ = saturating_add(live_total_, bytes);
    StagePeak& p = peaks_[static_cast<std::size_t>(stage_)];
    if (live_total_ > p.total) p = {live_total_, live_by_use_};
    return next_++;
  }
  void free(std::uint64_t id) override {
    const auto it = live_.find(id);
    if (it == live_.end()) return;
    events_.push_back({false, 0, id});
    live_by_use_[static_cast<std::size_t>(it->second.second)] -= it->second.first;
    live_total_ -= it->second.first;
    live_.erase(it);
  }
  // Bytes of live tensor `id` (0 when it is not live, or not of `use` when one is given).
  std::uint64_t bytes_of(std::uint64_t id) const override {
    const auto it = live_.find(id);
    return it == live_.end() ? 0 : it->second.first;
  }
  std::uint64_t bytes_of(std::uint64_t id, Use use) const {
    const auto it = live_.find(id);
    return it == live_.end() || it->second.second != use ? 0 : it->second.first;
  }
  // Later allocations belong to stage `s`.
  void stage(Stage s) {
    if (stage_ == Stage::Setup && s != Stage::Setup) setup_events_ = events_.size();
    stage_ = s;
  }
  // The events of the setup (the weights, the tied head's transient) before the first other stage.
  std::size_t setup_events() const { return stage_ == Stage::Setup ? events_.size() : setup_events_; }
  // The live bytes at each stage's peak (block rounding aside: the allocator's view is the replay's).
  const StagePeak& peak(Stage s) const { return peaks_[static_cast<std::size_t>(s)]; }
  std::vector<AllocEvent> take() { return std::move(events_); }

 private:
  std::vector<AllocEvent> events_;
  std::unordered_map<std::uint64_t, std::pair<std::uint64_t, Use>> live_;
  std::array<std::uint64_t, kUses> live_by_use_{};
  std::array<StagePeak, kStages> peaks_{};
  std::uint64_t live_total_ = 0, next_ = 1;
  std::size_t setup_events_ = 0;
  Stage stage_ = Stage::Setup;
};

}  // namespace vramdoc::estimator::detail
