// The caching allocator's block rules, each from c10/cuda/CUDACachingAllocator.cpp (PyTorch 2.11):
// round_size, get_allocation_size, get_free_block (best fit by size, then address),
// should_split, free_block / try_merge_blocks, and the expandable segments' page mapping.
#include "core/estimator/allocator.hpp"

#include <algorithm>
#include <unordered_map>

#include "core/units.hpp"

namespace vramdoc::estimator {

namespace {

constexpr std::uint64_t kMinBlock = 512;           // kMinBlockSize
constexpr std::uint64_t kSmallSize = 1 * MiB;      // largest small-pool request
constexpr std::uint64_t kSmallBuffer = 2 * MiB;    // small-pool segment (and expandable page)
constexpr std::uint64_t kMinLargeAlloc = 10 * MiB;  // below this a large request gets kLargeBuffer
constexpr std::uint64_t kLargeBuffer = 20 * MiB;   // and the expandable large pool's page
constexpr std::uint64_t kRoundLarge = 2 * MiB;

std::uint64_t round_up(std::uint64_t value, std::uint64_t unit) {
  return saturating_mul(saturating_add(value, unit - 1) / unit, unit);
}

}  // namespace

std::uint64_t block_bytes(std::uint64_t request) { return request < kMinBlock ? kMinBlock : round_up(request, kMinBlock); }

std::uint64_t segment_bytes(std::uint64_t request) {
  const std::uint64_t size = block_bytes(request);
  if (size <= kSmallSize) return kSmallBuffer;
  if (size < kMinLargeAlloc) return kLargeBuffer;
  return round_up(size, kRoundLarge);
}

CachingAllocator::CachingAllocator(AllocatorSettings settings) : settings_(settings) {}

std::size_t CachingAllocator::new_block(const Block& b) {
  if (!spare_.empty()) {
    const std::size_t i = spare_.back();
    spare_.pop_back();
    blocks_[i] = b;
    return i;
  }
  blocks_.push_back(b);
  return blocks_.size() - 1;
}

void CachingAllocator::add_reserved(std::uint64_t bytes) {
  reserved_ = saturating_add(reserved_, bytes);
  if (reserved_ > peak_reserved_) peak_reserved_ = reserved_;
}

// get_free_block: the smallest cached block of at least `size` (ties: lower address). A block of
// max_split_size or more serves only requests that are themselves that large and within 20 MiB
// of it. In an expandable segment the free block at the mapped end counts as unbounded, so any
// other block that fits is preferred.
std::int64_t CachingAllocator::find_free(std::uint64_t size, bool small) {
  auto& free = pool(small);
  std::int64_t tail = -1;
  for (auto it = free.lower_bound(Key{size, 0, 0, 0}); it != free.end(); ++it) {
    const std::size_t b = std::get<3>(*it);
    const Segment& s = segments_[blocks_[b].segment];
    if (s.expandable && s.last == static_cast<std::int64_t>(b)) {
      if (tail < 0) tail = static_cast<std::int64_t>(b);
      continue;
    }
    const std::uint64_t have = blocks_[b].size, max_split = settings_.max_split_size;
    if (size < max_split && have >= max_split) return -1;
    if (size >= max_split && have >= saturating_add(size, kLargeBuffer)) return -1;
    free.erase(it);
    return static_cast<std::int64_t>(b);
  }
  if (tail >= 0) free.erase(key_of(static_cast<std::size_t>(tail)));
  return tail;
}

std::size_t CachingAllocator::new_segment(std::uint64_t size, bool small) {
  segments_.push_back({small, false, size, -1});
  const std::size_t b = new_block({0, size, segments_.size() - 1, false, -1, -1});
  segments_.back().last = static_cast<std::int64_t>(b);
  add_reserved(size);
  return b;
}

// try_allocate_expandable_block: one segment per pool, grown at its end in pages (2 MiB small,
// 20 MiB large), starting from the free block at the end when there is one.
std::size_t CachingAllocator::grow_expandable(std::uint64_t size, bool small) {
  std::int64_t& seg = small ? expandable_small_ : expandable_large_;
  if (seg < 0) {
    segments_.push_back({small, true, 0, -1});
    seg = static_cast<std::int64_t>(segments_.size() - 1);
  }
  const std::size_t s = static_cast<std::size_t>(seg);
  std::int64_t last = segments_[s].last;
  std::size_t b;
  if (last >= 0 && !blocks_[static_cast<std::size_t>(last)].allocated) {
    b = static_cast<std::size_t>(last);
    pool(small).erase(key_of(b));
  } else {
    b = new_block({segments_[s].mapped, 0, s, false, last, -1});
    if (last >= 0) blocks_[static_cast<std::size_t>(last)].next = static_cast<std::int64_t>(b);
    segments_[s].last = static_cast<std::int64_t>(b);
  }
  const std::uint64_t grow = round_up(size - blocks_[b].size, small ? kSmallBuffer : kLargeBuffer);
  blocks_[b].size += grow;
  segments_[s].mapped += grow;
  add_reserved(grow);
  return b;
}

// should_split: small-pool and expandable blocks split whenever 512 bytes remain; other large
// blocks only when more than 1 MiB remains and the request is below max_split_size.
void CachingAllocator::take_split(std::size_t b, std::uint64_t size, bool small) {
  const std::size_t s = blocks_[b].segment;
  const std::uint64_t remaining = blocks_[b].size - size;
  const bool split = small || segments_[s].expandable ? remaining >= kMinBlock
                                                      : size < settings_.max_split_size && remaining > kSmallSize;
  if (split) {
    const Block rest{blocks_[b].offset + size, remaining, s, false, static_cast<std::int64_t>(b), blocks_[b].next};
    const std::size_t r = new_block(rest);
    if (rest.next >= 0) blocks_[static_cast<std::size_t>(rest.next)].prev = static_cast<std::int64_t>(r);
    blocks_[b].next = static_cast<std::int64_t>(r);
    blocks_[b].size = size;
    if (segments_[s].last == static_cast<std::int64_t>(b)) segments_[s].last = static_cast<std::int64_t>(r);
    pool(small).insert(key_of(r));
  }
  blocks_[b].allocated = true;
}

CachingAllocator::Handle CachingAllocator::allocate(std::uint64_t bytes) {
  const std::uint64_t size = block_bytes(bytes);
  const bool small = size <= kSmallSize;
  std::int64_t found = find_free(size, small);
  std::size_t b;
  if (found >= 0) {
    b = static_cast<std::size_t>(found);
  } else if (settings_.expandable_segments) {
    b = grow_expandable(size, small);
  } else {
    b = new_segment(segment_bytes(size), small);
  }
  take_split(b, size, small);
  allocated_ = saturating_add(allocated_, blocks_[b].size);  // the whole block, unsplit remainder too
  if (allocated_ > peak_allocated_) peak_allocated_ = allocated_;
  return b;
}

// try_merge_blocks: `other` (a free neighbour) is absorbed into `b`.
void CachingAllocator::merge_into(std::size_t b, std::int64_t other, bool small) {
  if (other < 0 || blocks_[static_cast<std::size_t>(other)].allocated) return;
  const std::size_t o = static_cast<std::size_t>(other);
  pool(small).erase(key_of(o));
  Block& blk = blocks_[b];
  if (blk.prev == other) {
    blk.offset = blocks_[o].offset;
    blk.prev = blocks_[o].prev;
    if (blk.prev >= 0) blocks_[static_cast<std::size_t>(blk.prev)].next = static_cast<std::int64_t>(b);
  } else {
    blk.next = blocks_[o].next;
    if (blk.next >= 0) blocks_[static_cast<std::size_t>(blk.next)].prev = static_cast<std::int64_t>(b);
  }
  blk.size += blocks_[o].size;
  Segment& s = segments_[blk.segment];
  if (s.last == other) s.last = static_cast<std::int64_t>(b);
  blocks_[o] = Block{};
  spare_.push_back(o);
}

void CachingAllocator::empty_cache() {
  for (bool small : {true, false}) {
    auto& free = pool(small);
    for (auto it = free.begin(); it != free.end();) {
      const std::size_t b = std::get<3>(*it);
      Segment& s = segments_[blocks_[b].segment];
      if (s.expandable || blocks_[b].prev >= 0 || blocks_[b].next >= 0) {
        ++it;
        continue;
      }
      reserved_ -= s.mapped;
      s.mapped = 0, s.last = -1;
      spare_.push_back(b);
      it = free.erase(it);
    }
  }
}

void CachingAllocator::release(Handle handle) {
  if (handle >= blocks_.size() || !blocks_[handle].allocated) return;
  const std::size_t b = static_cast<std::size_t>(handle);
  const bool small = segments_[blocks_[b].segment].small;
  allocated_ -= blocks_[b].size;
  blocks_[b].allocated = false;
  merge_into(b, blocks_[b].prev, small);
  merge_into(b, blocks_[b].next, small);
  pool(small).insert(key_of(b));
}

ReplayResult replay(const std::vector<AllocEvent>& events, AllocatorSettings settings, std::size_t peak_from) {
  CachingAllocator a(settings);
  std::unordered_map<std::uint64_t, CachingAllocator::Handle> live;
  std::uint64_t peak_after = 0;  // allocated from event peak_from on
  for (std::size_t i = 0; i < events.size(); ++i) {
    const AllocEvent& e = events[i];
    if (i == peak_from) peak_after = a.allocated_bytes();
    if (e.alloc) {
      if (auto it = live.find(e.id); it != live.end()) a.release(it->second);  // a reused id frees the old tensor
      live[e.id] = a.allocate(e.bytes);
    } else if (auto it = live.find(e.id); it != live.end()) {
      a.release(it->second);
      live.erase(it);
    }
    if (i >= peak_from) peak_after = std::max(peak_after, a.allocated_bytes());
  }
  return {peak_from == 0 ? a.peak_allocated_bytes() : peak_after, a.peak_reserved_bytes(), a.segment_count()};
}

}  // namespace vramdoc::estimator
