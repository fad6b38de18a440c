// Has a trial's memory settled? A trial fits only when the memory it holds at the end of each step
// has stopped changing: the allocator's reserved bytes (the step hook's figure) and the driver's
// number, both flat over the last K steps. Short trials judged at step 4 missed the cache still
// growing (issue 30: batch 28 "fitted" in 4 steps and ran out of memory at step 17).
#pragma once
#include <cstdint>
#include <optional>
#include <string>

#include "core/timeline/timeline.hpp"

namespace vramdoc::probe {

// The settling rule (docs/probe.md, "Settling": why these numbers).
struct SettleRule {
  int flat_steps = 5;                       // K: step-end readings flat across this many steps
  double tolerance_share = 0.002;           // flat: max - min within this share of the level ...
  std::uint64_t tolerance_floor_bytes = 8ULL << 20;  // ... or this many bytes, whichever is larger
};

struct Settling {
  int steps = 0;                       // steps marked (the most any process of the trial marked)
  bool measured = false;               // the driver gave readings during the trial
  bool has_reserved = false;           // the step hook gave the allocator's reserved bytes
  std::optional<int> settled_at;       // the first step (1-based) whose end had the level every later step kept, once K steps followed it
  // The driver's number less the allocator's reserved bytes at the step ends (the median; the
  // largest over processes): the CUDA context and what the allocator does not control. Empty
  // without the step hook's reserved bytes.
  std::optional<std::uint64_t> outside_allocator_bytes;
  // The largest allocator peak any process's step marks reported (`peak=`); empty without the field.
  std::optional<std::uint64_t> allocated_peak_bytes;
  std::optional<int> flat_from;        // that step however few steps followed it (the latest over the processes): a job that ended by itself
  std::string why;                     // one line for the report
};

// Judges `trial` with `rule`: each process that marked steps on its own readings (its step
// hook's reserved bytes and the driver's number at each step end); settled when every such
// process has K flat steps at the end, after the step where the last change happened.
Settling settling(const timeline::Timeline& trial, const SettleRule& rule = {});

}  // namespace vramdoc::probe
