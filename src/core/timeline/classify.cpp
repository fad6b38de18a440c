// The classifier: prepare the timeline, measure its features (features.cpp), decide from the
// table of rules (rules.cpp), then project and summarise.
#include "core/timeline/classify.hpp"

#include <algorithm>

#include "core/timeline/features.hpp"
#include "core/timeline/rules.hpp"
#include "core/timeline/series.hpp"
#include "core/units.hpp"

namespace vramdoc::timeline {

const char* verdict_name(Verdict v) {
  switch (v) {
    case Verdict::Leak: return "leak";
    case Verdict::Insufficient: return "insufficient";
    case Verdict::Fragmentation: return "fragmentation";
    case Verdict::Plateau: return "plateau";
    case Verdict::Stable: return "stable";
    case Verdict::Inconclusive: break;
  }
  return "inconclusive";
}

namespace {

// In a container NVML may list host PIDs that the recorder's /proc does not show: the job's own
// number then stays 0 while the device's moves.
bool job_never_listed(const Timeline& tl) {
  if (tl.samples.empty()) return false;
  bool moved = false;
  for (const auto& s : tl.samples) {
    if (s.process_used_bytes != 0 || !s.device_used_bytes) return false;
    moved |= *s.device_used_bytes != *tl.samples.front().device_used_bytes;
  }
  return moved;
}

// Fewer than three samples: no timeline to judge. An OOM message alone can still show
// fragmentation, and a trace alone can show a leak.
void judge_without_samples(const Timeline& tl, const std::optional<TraceEvidence>& trace, Diagnosis& d) {
  for (const auto& m : tl.messages)
    if ((d.evidence.oom = parse_oom_message(m))) break;
  if (!d.evidence.oom) d.evidence.oom = tl.oom;
  const auto& m = d.evidence.oom;
  d.evidence.samples = tl.samples.size();
  d.evidence.trace = trace;
  if (fragmented(m, m && m->capacity_bytes ? m->capacity_bytes : tl.total_bytes)) {
    d.verdict = Verdict::Fragmentation;
    d.rule = "fragmentation";
    d.reasons.push_back("the failed request is smaller than the memory reserved but unallocated (from the message alone)");
  } else if (trace && trace_shows_leak(*trace, m.has_value())) {
    d.verdict = Verdict::Leak;
    d.rule = "trace shows a leak";
    d.reasons.push_back("no GPU memory timeline, but the " + trace->source + " saw allocations never freed" +
                        (trace->top_site.empty() ? "" : ", at " + trace->top_site));
  } else {
    d.rule = "too few samples";
    d.to_settle = "too few samples (" + std::to_string(tl.samples.size()) + ") to tell a leak from a job too big: record with GPU memory sampling, over a few steps";
  }
}

void project_oom(Diagnosis& d) {
  auto& ev = d.evidence;
  if (ev.oom_seconds || !ev.capacity_bytes || !ev.growth_bytes_per_second || *ev.growth_bytes_per_second <= 0) return;
  const double left = static_cast<double>(*ev.capacity_bytes) - static_cast<double>(ev.peak_bytes);
  if (left <= 0) return;
  ev.projected_oom_seconds = ev.duration_seconds + left / *ev.growth_bytes_per_second;
  if (ev.growth_bytes_per_step && *ev.growth_bytes_per_step > 0 && ev.steps)
    ev.projected_oom_step = static_cast<double>(*ev.steps) + left / *ev.growth_bytes_per_step;
}

}  // namespace

Diagnosis classify(const Timeline& given, const std::optional<TraceEvidence>& trace, std::size_t grid_points) {
  Timeline regular;  // a version 2 recording leaves out unchanged ticks: the rules read every tick
  // (a thinned one keeps each bin's extremes instead, which a grid would lose)
  if (!given.thinned && has_left_out_ticks(given)) regular = given, regular.samples = regular_samples(given, grid_points);
  const Timeline& recorded = regular.samples.empty() ? given : regular;
  Timeline on_device;
  const bool use_device = job_never_listed(recorded);
  if (use_device) {  // judge the device's number instead, and say so
    on_device = recorded;
    for (auto& s : on_device.samples) s.process_used_bytes = *s.device_used_bytes;
  }
  const Timeline& tl = use_device ? on_device : recorded;
  Diagnosis d;
  if (use_device) d.reasons.push_back("the driver never charged memory to the job's processes (a PID namespace?): judged on the device's used memory");
  if (tl.samples.size() < 3) {
    judge_without_samples(tl, trace, d);
  } else {
    const Features f = measure(tl, trace, d);
    decide(f, d);
    if (d.verdict == Verdict::Leak) project_oom(d);
    if (const auto& a = d.evidence.accounting)  // the verdict says at which level the growth is
      d.reasons.push_back("at the last " + a->unit + " end PyTorch's tensors hold " + format_bytes(a->tensors.last_bytes) + ", its cache " +
                          format_bytes(a->cache.last_bytes) + " beyond them, the driver " + format_bytes(a->driver.last_bytes) +
                          " beyond the cache; " + (a->growing ? std::string(level_name(*a->growing)) + " grow" : std::string("no level grows")) +
                          " (" + std::to_string(a->units) + " " + a->unit + "s)");
  }
  if (given.outcome == Outcome::Detached)  // the end line says so: what came after is not here
    d.reasons.push_back("the recording stopped while the job went on (vramdoc run was sent SIGTERM; the end line says "
                        "\"detached\"): this is the job up to then, not how it ended");
  add_readings(given, d.picture);
  if (d.verdict != Verdict::Insufficient) d.evidence.need.reset();
  d.summary = summary_for(d);
  d.remedies = remedies_for(d);
  return d;
}

}  // namespace vramdoc::timeline
