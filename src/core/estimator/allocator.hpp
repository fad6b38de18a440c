// A model of PyTorch's CUDA caching allocator (c10/cuda/CUDACachingAllocator.cpp, PyTorch 2.11):
// replaying a sequence of tensor allocations and frees through it gives the reserved memory
// (the segments it cudaMalloc'd) that a plain sum of live bytes cannot. One stream, no capacity
// limit (the frees-and-retries near an out-of-memory error are not modelled). docs/estimator.md,
// "Caching allocator", lists every rule with its source line.
#pragma once
#include <cstdint>
#include <limits>
#include <set>
#include <tuple>
#include <vector>

namespace vramdoc::estimator {

struct AllocatorSettings {
  bool expandable_segments = false;  // PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True
  std::uint64_t max_split_size = std::numeric_limits<std::uint64_t>::max();  // max_split_size_mb
};

// Bytes a request occupies: at least 512, rounded up to 512 (round_size, no power-2 divisions).
std::uint64_t block_bytes(std::uint64_t request);
// Bytes of the segment a request that finds no cached block creates (get_allocation_size): a
// 2 MiB small-pool segment up to 1 MiB, a 20 MiB one below 10 MiB, else rounded up to 2 MiB.
std::uint64_t segment_bytes(std::uint64_t request);

class CachingAllocator {
 public:
  using Handle = std::uint64_t;
  explicit CachingAllocator(AllocatorSettings settings = {});

  // Allocates `bytes` (best-fit reuse of a cached block, else a new segment); never fails.
  Handle allocate(std::uint64_t bytes);
  // Frees a live allocation: its block returns to the cache, merged with free neighbours.
  // Unknown or already freed handles are ignored.
  void release(Handle handle);
  // torch.cuda.empty_cache(): every segment with no block in use is returned (release_cached_blocks);
  // expandable segments keep their mapping (not modelled).
  void empty_cache();

  std::uint64_t allocated_bytes() const { return allocated_; }  // memory_allocated(): block sizes
  std::uint64_t reserved_bytes() const { return reserved_; }    // memory_reserved(): segments
  std::uint64_t peak_allocated_bytes() const { return peak_allocated_; }
  std::uint64_t peak_reserved_bytes() const { return peak_reserved_; }
  std::size_t segment_count() const { return segments_.size(); }

 private:
  struct Block {
    std::uint64_t offset = 0, size = 0;
    std::size_t segment = 0;
    bool allocated = false;
    std::int64_t prev = -1, next = -1;  // neighbours in the same segment
  };
  struct Segment {
    bool small = false;
    bool expandable = false;
    std::uint64_t mapped = 0;  // bytes backed by memory (the whole segment unless expandable)
    std::int64_t last = -1;    // the block at the segment's mapped end
  };
  // Free blocks ordered as BlockComparatorSize orders them: by size, then by address. A later
  // segment has a lower address: cudaMalloc hands out addresses downwards (inferred from the H200
  // traces: with this order the model replays 127 of their 136 non-fp8 traces to the byte, with the
  // opposite order 97), so among equal sizes the block of the latest segment comes first.
  using Key = std::tuple<std::uint64_t, std::size_t, std::uint64_t, std::size_t>;  // size, ~segment, offset, block

  std::set<Key>& pool(bool small) { return small ? small_free_ : large_free_; }
  Key key_of(std::size_t b) const { return {blocks_[b].size, ~blocks_[b].segment, blocks_[b].offset, b}; }
  std::int64_t find_free(std::uint64_t size, bool small);
  std::size_t new_segment(std::uint64_t size, bool small);
  std::size_t grow_expandable(std::uint64_t size, bool small);
  std::size_t new_block(const Block& b);
  void take_split(std::size_t b, std::uint64_t size, bool small);
  void merge_into(std::size_t b, std::int64_t other, bool small);
  void add_reserved(std::uint64_t bytes);

  AllocatorSettings settings_;
  std::vector<Block> blocks_;
  std::vector<std::size_t> spare_;  // indices of dead Block records
  std::vector<Segment> segments_;
  std::set<Key> small_free_, large_free_;
  std::int64_t expandable_small_ = -1, expandable_large_ = -1;
  std::uint64_t allocated_ = 0, reserved_ = 0, peak_allocated_ = 0, peak_reserved_ = 0;
};

// One step of an allocation sequence: allocate `bytes` as tensor `id`, or free tensor `id`.
struct AllocEvent {
  bool alloc = true;
  std::uint64_t bytes = 0;  // for alloc
  std::uint64_t id = 0;
};

struct ReplayResult {
  std::uint64_t peak_allocated_bytes = 0;
  std::uint64_t peak_reserved_bytes = 0;
  std::size_t segments = 0;
};

// Replays `events` (ids are the caller's; a free of an id never allocated is ignored). The peak
// allocated counts from event `peak_from` on (the run after the model is built, as
// torch.cuda.reset_peak_memory_stats() after building it counts: the build's transients come before);
// the peak reserved counts them all (the blocks they leave stay cached).
ReplayResult replay(const std::vector<AllocEvent>& events, AllocatorSettings settings = {}, std::size_t peak_from = 0);

}  // namespace vramdoc::estimator
