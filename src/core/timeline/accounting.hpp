// One accounting for every verdict (docs/run-analyze.md, "Where the memory is"): at each unit end
// of a process (an optimizer step; a forward call of the top module when nothing steps), what
// PyTorch's tensors hold (allocated), what its cache holds beyond them (reserved - allocated) and
// what the driver charges beyond the cache (the process's NVML bytes - reserved: the CUDA context,
// CUDA extensions and CuPy, cuBLAS / NCCL workspaces, raw cudaMalloc); which level grows.
// Plain arithmetic on the timeline; the rules (rules.cpp) and the report read it.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/timeline/timeline.hpp"

namespace vramdoc::timeline {

enum class Level { Tensors, Cache, Driver };
// "PyTorch's tensors", "PyTorch's cache beyond its tensors", "the driver beyond PyTorch's cache".
const char* level_name(Level level);

// One level over the units after warm-up (the first fifth of the units, at least 2, left out).
struct LevelFigures {
  std::uint64_t first_bytes = 0, last_bytes = 0;  // at the first unit after warm-up and at the last
  double growth_bytes_per_unit = 0;               // Theil-Sen
  double mk_z = 0;                                // Mann-Kendall
  bool grows = false;  // z > 3.09, and the growth over the units is at least 32 MiB and a twentieth of the level
                       // (the driver beyond the cache: 64 MiB and a tenth, accounting.cpp says why)
};

struct Accounting {
  std::string unit;  // "step" or "forward call"
  std::size_t units = 0;
  LevelFigures tensors, cache, driver;
  std::optional<Level> growing;  // the level that grows: tensors first, then the driver's, then the cache
};

// A "forward N" mark: the step hook's end of a forward call of the top module.
bool is_forward_mark(const Mark& m);
// The unit marks of `tl`, in time order: its "step N" marks, else (a job that never steps: a
// serving loop, an evaluation script) its "forward N" marks.
std::vector<const Mark*> unit_marks(const Timeline& tl);
// The step hook (or a callback) marked this process: a mark carries its pid. A process the hook
// saw whose units are unmarked never completed one.
bool hook_marked(const Timeline& tl);

// The accounting at the unit marks that carry allocated and reserved bytes (at least 6 of them,
// with the driver's reading of the process at or before each); empty otherwise.
std::optional<Accounting> account(const Timeline& tl);

// An evaluation phase ("phase eval" to "phase train" from the step hook, "eval begin" to "eval end"
// from the Trainer and Lightning callbacks) in which memory accumulates: the tensors at its forward
// calls grow (the step hook marks them), or, without those, the driver's number rises again and
// again within it (at least 4 separate rises, by a quarter of its level at the start).
struct EvaluationGrowth {
  double start_seconds = 0, end_seconds = 0;
  std::uint64_t start_bytes = 0, peak_bytes = 0;  // the driver's, at the start and the peak within
  std::size_t forward_calls = 0;                  // marked inside it
  std::optional<double> tensors_growth_bytes_per_call;
  bool ended_in_oom = false;
};
std::optional<EvaluationGrowth> evaluation_accumulates(const Timeline& tl, std::optional<double> oom_seconds);

// The allocator's settings in effect, for the report: PYTORCH_CUDA_ALLOC_CONF / PYTORCH_ALLOC_CONF
// (the header's environment, or the step hook's "allocator" marks) and the per-process memory
// fraction ("allocator fraction=F limit_bytes=B"); "expandable segments" said when on.
std::vector<std::string> allocator_in_effect(const Timeline& tl);
// The per-process fraction's limit in bytes, from the hook's "allocator fraction" mark.
std::optional<std::uint64_t> fraction_limit_bytes(const Timeline& tl);

}  // namespace vramdoc::timeline
