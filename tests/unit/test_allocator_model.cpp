// The caching-allocator model against the rules of c10/cuda/CUDACachingAllocator.cpp, and its
// invariants on random sequences.
#include <gtest/gtest.h>

#include <random>

#include "core/estimator/allocator.hpp"
#include "core/units.hpp"

using namespace vramdoc::estimator;
using vramdoc::MiB;

TEST(AllocatorModel, RoundsRequestsTo512Bytes) {
  EXPECT_EQ(block_bytes(1), 512U);
  EXPECT_EQ(block_bytes(512), 512U);
  EXPECT_EQ(block_bytes(513), 1024U);
  EXPECT_EQ(segment_bytes(512), 2 * MiB);
  EXPECT_EQ(segment_bytes(1 * MiB), 2 * MiB);
  EXPECT_EQ(segment_bytes(1 * MiB + 1), 20 * MiB);
  EXPECT_EQ(segment_bytes(10 * MiB - 512), 20 * MiB);
  EXPECT_EQ(segment_bytes(10 * MiB), 10 * MiB);
  EXPECT_EQ(segment_bytes(10 * MiB + 1), 12 * MiB);
}

TEST(AllocatorModel, SmallRequestsShareOneTwoMiBSegment) {
  CachingAllocator a;
  for (int i = 0; i < 4; ++i) a.allocate(500 * 1024);
  EXPECT_EQ(a.reserved_bytes(), 2 * MiB);  // four 500 KiB blocks split one 2 MiB segment
  a.allocate(500 * 1024);
  EXPECT_EQ(a.reserved_bytes(), 4 * MiB);
  EXPECT_EQ(a.allocated_bytes(), 5 * 500 * 1024U);
}

TEST(AllocatorModel, MidSizedRequestsSplitTwentyMiBSegments) {
  CachingAllocator a;
  a.allocate(4 * MiB);
  a.allocate(4 * MiB);
  EXPECT_EQ(a.reserved_bytes(), 20 * MiB);
  EXPECT_EQ(a.segment_count(), 1U);
}

TEST(AllocatorModel, LargeBlocksKeepARemainderOfOneMiBOrLess) {
  CachingAllocator a;
  auto h = a.allocate(30 * MiB);
  a.release(h);
  a.allocate(29 * MiB);  // 1 MiB remains: not > kSmallSize, so not split
  EXPECT_EQ(a.allocated_bytes(), 30 * MiB);
  EXPECT_EQ(a.reserved_bytes(), 30 * MiB);
  CachingAllocator b;
  h = b.allocate(30 * MiB);
  b.release(h);
  b.allocate(28 * MiB);  // 2 MiB remain: split, the block is 28 MiB
  EXPECT_EQ(b.allocated_bytes(), 28 * MiB);
  b.allocate(2 * MiB);  // reuses the 2 MiB remainder
  EXPECT_EQ(b.reserved_bytes(), 30 * MiB);
}

TEST(AllocatorModel, BestFitPicksTheSmallestCachedBlock) {
  CachingAllocator a;
  auto big = a.allocate(100 * MiB), mid = a.allocate(40 * MiB);
  a.allocate(12 * MiB);  // keeps the segments apart
  a.release(big), a.release(mid);
  a.allocate(30 * MiB);  // fits both; takes the 40 MiB block
  a.allocate(90 * MiB);  // still fits the 100 MiB block: no new segment
  EXPECT_EQ(a.reserved_bytes(), 152 * MiB);
}

TEST(AllocatorModel, FreedNeighboursMergeBackIntoOneBlock) {
  CachingAllocator a;
  auto h = a.allocate(64 * MiB);
  a.release(h);
  auto x = a.allocate(16 * MiB), y = a.allocate(16 * MiB), z = a.allocate(16 * MiB);
  a.release(x), a.release(z), a.release(y);
  a.allocate(64 * MiB);  // the three pieces and the rest merged into the whole segment again
  EXPECT_EQ(a.reserved_bytes(), 64 * MiB);
}

TEST(AllocatorModel, AGrowingTensorCannotReuseItsPredecessorsSegment) {
  CachingAllocator a;
  auto h = a.allocate(100 * MiB);
  a.release(h);
  a.allocate(101 * MiB);  // the KV-cache pattern: each step one token longer
  EXPECT_EQ(a.reserved_bytes(), 202 * MiB);
  CachingAllocator e({true});
  h = e.allocate(100 * MiB);
  e.release(h);
  e.allocate(101 * MiB);  // expandable: the free end block grows by one 20 MiB page
  EXPECT_EQ(e.reserved_bytes(), 120 * MiB);
}

TEST(AllocatorModel, MaxSplitSizeKeepsOversizeBlocksWhole) {
  AllocatorSettings s;
  s.max_split_size = 64 * MiB;
  CachingAllocator a(s);
  auto h = a.allocate(100 * MiB);
  a.release(h);
  a.allocate(30 * MiB);  // below max_split_size: may not take the oversize block
  EXPECT_EQ(a.reserved_bytes(), 130 * MiB);
  CachingAllocator b(s);
  h = b.allocate(100 * MiB);
  b.release(h);
  b.allocate(90 * MiB);  // oversize request within 20 MiB: reuses it whole
  EXPECT_EQ(b.reserved_bytes(), 100 * MiB);
  EXPECT_EQ(b.allocated_bytes(), 100 * MiB);
}

TEST(AllocatorModel, ReplayMatchesDirectUse) {
  const std::vector<AllocEvent> events = {{true, 30 * MiB, 1}, {true, 4 * MiB, 2}, {false, 0, 1}, {true, 20 * MiB, 3},
                                          {false, 0, 7}, {false, 0, 2}, {true, 10 * MiB, 4}};
  const ReplayResult r = replay(events);
  EXPECT_EQ(r.peak_allocated_bytes, 34 * MiB);
  EXPECT_EQ(r.peak_reserved_bytes, 50 * MiB);  // the 30 MiB segment and one 20 MiB segment
}

// Invariants on random sequences: reserved >= allocated, reserved in whole 2 MiB units, and
// freeing everything leaves allocated at zero.
TEST(AllocatorModel, RandomSequencesKeepTheInvariants) {
  for (bool expandable : {false, true}) {
    std::mt19937_64 rng(expandable ? 7 : 11);
    CachingAllocator a({expandable});
    std::vector<CachingAllocator::Handle> live;
    for (int i = 0; i < 20000; ++i) {
      if (live.empty() || rng() % 3 != 0) {
        const std::uint64_t shift = rng() % 28;
        live.push_back(a.allocate((rng() % (1ULL << shift)) + 1));
      } else {
        const std::size_t k = rng() % live.size();
        a.release(live[k]);
        live[k] = live.back();
        live.pop_back();
      }
      ASSERT_GE(a.reserved_bytes(), a.allocated_bytes());
      ASSERT_EQ(a.reserved_bytes() % (2 * MiB), 0U);
    }
    for (auto h : live) a.release(h);
    EXPECT_EQ(a.allocated_bytes(), 0U);
    EXPECT_GE(a.peak_reserved_bytes(), a.peak_allocated_bytes());
  }
}
