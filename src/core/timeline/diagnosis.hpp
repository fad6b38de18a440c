// The verdict on a timeline and the evidence behind it. Unknown figures stay empty, never 0.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/timeline/accounting.hpp"
#include "core/timeline/need.hpp"
#include "core/timeline/oom_message.hpp"
#include "core/timeline/picture.hpp"
#include "core/timeline/preallocation.hpp"
#include "core/timeline/spacing.hpp"
#include "core/timeline/timeline.hpp"
#include "core/timeline/trace_evidence.hpp"

namespace vramdoc::timeline {

enum class Verdict { Leak, Insufficient, Fragmentation, Plateau, Stable, Inconclusive };
// "leak", "insufficient", "fragmentation", "plateau", "stable", "inconclusive".
const char* verdict_name(Verdict v);

struct Evidence {
  std::size_t samples = 0;
  double duration_seconds = 0;
  double holding_seconds = 0;               // from the first to the last reading while the job held memory
  std::string trend_series;                 // which series the trend was measured on
  std::optional<std::size_t> steps;         // step marks seen
  std::optional<double> step_seconds;       // mean step time: marks, or a period found in the signal
  std::string step_source;                  // "marks", "period found in the signal", "none"
  double warmup_seconds = 0;                // from the start of the recording
  std::optional<std::size_t> warmup_steps;
  bool settled = false;                     // whether the signal levelled off after warm-up
  std::optional<double> growth_bytes_per_step;    // Theil-Sen, after warm-up
  std::optional<double> growth_bytes_per_second;
  std::string growth_method;                // "Theil-Sen", or "late rises over the time after warm-up"
  std::optional<double> mann_kendall_z;           // > 3.09: increasing at p < 0.001
  std::size_t trend_points = 0;
  std::size_t late_rises = 0;               // the driver's number went up after warm-up, this often
  double late_rise_bytes = 0;
  std::size_t large_late_rises = 0;         // of those, how many were a third of the working set or more
  double working_set_bytes = 0;             // the rise during warm-up
  std::size_t cache_flushes = 0;            // the driver's number fell and grew again
  // The driver's per-process number: first and last while the job held memory, and the peak.
  std::uint64_t first_bytes = 0, peak_bytes = 0, last_bytes = 0;
  double peak_seconds = 0;
  std::optional<std::uint64_t> capacity_bytes;
  std::optional<double> peak_fraction;      // peak / capacity
  std::optional<double> oom_seconds;        // when it ran out
  std::optional<OomMessage> oom;
  std::optional<double> projected_oom_seconds;  // leak: when it would run out, from the start
  std::optional<double> projected_oom_step;
  std::optional<std::uint64_t> missing_bytes;   // insufficient: requested - free (one allocation's shortfall)
  std::optional<Need> need;                     // insufficient: what the whole job needs (need.hpp)
  std::optional<RiseSpacing> spacing;           // the late rises against the records of random shapes
  std::optional<Preallocation> preallocation;   // a framework's pool taken at start hides the job
  std::optional<TraceEvidence> trace;           // what the allocation tracer saw, when given
  std::optional<Accounting> accounting;         // tensors / cache / driver at the unit ends, and which grows
  std::optional<EvaluationGrowth> evaluation;   // an evaluation phase in which memory accumulates
  std::vector<std::string> allocator;           // the allocator's settings in effect (accounting.hpp)
};

// A straight line over the time axis, for the chart: the fitted trend after warm-up.
struct TrendLine {
  double t0 = 0, t1 = 0, y0 = 0, y1 = 0;
};

// One remedy the estimator can model, applied to the job given with --config / --model.
struct QuantifiedRemedy {
  std::string name;                 // e.g. "gradient checkpointing"
  std::string change;               // what changes, e.g. "batch 1024 -> 512, 2 accumulation steps"
  std::uint64_t process_bytes = 0;  // the estimated process peak with the remedy
  std::int64_t saving_bytes = 0;    // the job's estimate minus process_bytes (negative: costs memory)
  std::optional<bool> fits;         // process_bytes plus the estimator's margin within the capacity
};

// The diagnosis quantified with the estimator: the job as described, each remedy, the fit.
struct Quantified {
  std::string model;                // the preset name, or the config file
  std::string job;                  // e.g. "train, bf16, adamw, batch 1024 x seq 4096"
  std::uint64_t estimated_bytes = 0;  // the job's estimated process peak
  std::optional<std::uint64_t> measured_bytes;  // the timeline's peak (driver, per process); none sampled: empty
  std::optional<std::uint64_t> capacity_bytes;  // the timeline's total, else the card table's
  std::string capacity_source;      // "timeline", "out-of-memory message", "card table: H200"
  std::optional<bool> fits;         // the job as described, with the estimator's margin
  std::vector<QuantifiedRemedy> remedies;  // empty for leak: the remedy there is fixing the code
  // insufficient: the mildest remedy that fits (the fitting row closest to the card), "" when none does
  std::string fitting_remedy;
  std::optional<std::uint64_t> max_batch;  // insufficient: the largest batch that fits (0: none)
  std::optional<std::uint64_t> max_batch_process_bytes;
  std::optional<double> leak_steps_left;   // leak: steps from the estimated peak to the capacity
};

struct Diagnosis {
  Verdict verdict = Verdict::Inconclusive;
  std::string summary;               // one sentence
  std::vector<std::string> reasons;  // how the verdict was reached, one line each
  std::vector<std::string> remedies; // from the articles, matched to the verdict
  std::string to_settle;             // inconclusive: what would settle it
  std::string rule;                  // the rule of the table that decided (rules.hpp), e.g. "regular rises"
  Evidence evidence;
  std::optional<TrendLine> trend;
  std::vector<double> step_ends;     // seconds, for the chart
  Picture picture;                   // what the chart draws (bounded; picture.hpp)
  std::optional<Quantified> quantified;  // with a model config: set by quantify()
};

}  // namespace vramdoc::timeline
