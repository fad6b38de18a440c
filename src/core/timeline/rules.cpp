#include "core/timeline/rules.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "core/units.hpp"

namespace vramdoc::timeline {

namespace {

// Fewer level changes than this before an OOM: the job never completed a steady step.
constexpr std::size_t kFewRises = 10;
// At most this many working-set-sized rises after warm-up are read as new largest input shapes:
// random lengths set a new record about ln(n) times (5 in 150 steps, 7 in 1000); a leak that keeps
// a step's activations rises every step. Only when the rises are not regular (spacing.hpp).
constexpr std::size_t kFewShapeRecords = 8;
constexpr std::size_t kMinTrendPoints = 8;

std::string mib(double bytes) { return format_bytes(static_cast<std::uint64_t>(std::max(0.0, bytes))); }
std::string num(double v, int decimals) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.*f", decimals, v);
  return buf;
}
void why(Diagnosis& d, std::string text) { d.reasons.push_back(std::move(text)); }
void settle(Diagnosis& d, std::string text) { d.to_settle = std::move(text); }

// "every 5.0 steps" / "every 0.52 s": the rises' median spacing.
std::string spacing_text(const Features& f, const RiseSpacing& s) {
  if (!s.period) return "";
  return f.driver.series.x_is_steps ? "every " + num(*s.period, 1) + " steps" : "every " + num(*s.period, 2) + " s";
}

bool regular(const Diagnosis& d) { return d.evidence.spacing && d.evidence.spacing->regular; }
bool even(const Diagnosis& d) { return d.evidence.spacing && d.evidence.spacing->even; }

void trace_leak(const Features& f, Diagnosis& d) {
  const auto& t = *d.evidence.trace;
  d.verdict = Verdict::Leak;
  const std::string at = t.top_site.empty() ? "" : ", at " + t.top_site;
  if (t.alive_at_exit_count > 0 && !f.oom)
    why(d, "the " + t.source + " saw " + std::to_string(t.alive_at_exit_count) + " allocations (" + mib(double(t.alive_at_exit_bytes)) +
               ") never freed before the program exited" + at);
  else
    why(d, "the " + t.source + " saw " + std::to_string(t.growing_count) + " allocations (" + mib(double(t.growing_bytes)) +
               ") made until the peak and still held there" + at);
}

void retained_grows(const Features& f, Diagnosis& d) {
  d.verdict = Verdict::Leak;
  why(d, "the bytes still allocated at the end of each " + f.unit + " grow after warm-up (Mann-Kendall z = " + num(f.retained.trend.mk_z, 2) + ")");
}

// Issue 29, a CUDA extension keeping 16 MiB a step by raw cudaMalloc: PyTorch's allocated and
// reserved stay flat, the driver's number minus reserved grows.
void outside_allocator(const Features& f, Diagnosis& d) {
  const auto& a = *d.evidence.accounting;
  d.verdict = Verdict::Leak;
  d.evidence.growth_bytes_per_step = a.driver.growth_bytes_per_unit;
  if (d.evidence.step_seconds && *d.evidence.step_seconds > 0)
    d.evidence.growth_bytes_per_second = a.driver.growth_bytes_per_unit / *d.evidence.step_seconds;
  d.evidence.growth_method = "Theil-Sen, on the driver's bytes beyond PyTorch's reserved";
  why(d, "the driver charges the process " + mib(a.driver.growth_bytes_per_unit) + " more per " + f.unit + " beyond what PyTorch reserved (" +
             mib(double(a.driver.first_bytes)) + " -> " + mib(double(a.driver.last_bytes)) + ", Mann-Kendall z = " + num(a.driver.mk_z, 2) +
             "), while its tensors (" + mib(double(a.tensors.last_bytes)) + ") and its cache stay flat: memory taken outside PyTorch's allocator "
             "(a CUDA extension or custom op, CuPy, raw cudaMalloc, a library's workspaces) and never freed");
  if (d.evidence.trace && !d.evidence.trace->top_site.empty())
    why(d, "the allocation tracer's top growing call site: " + d.evidence.trace->top_site);
}

// Issue 29, OOM inside the first step under set_per_process_memory_fraction: memory that rises in
// a step that never completed is that step's working set, not a leak.
void first_unit_oom(const Features& f, Diagnosis& d) {
  d.verdict = Verdict::Insufficient;
  const auto& m = d.evidence.oom;
  const std::string limit = m && m->allowed_bytes ? "the " + mib(double(*m->allowed_bytes)) + " allowed to the process (set_per_process_memory_fraction)"
                            : d.evidence.capacity_bytes ? "the card's " + mib(double(*d.evidence.capacity_bytes)) : "the card";
  why(d, "it ran out of memory before the end of its first " + f.unit + " (the step hook marked none): what rose until then is that " +
             f.unit + "'s working set, which needs more than " + limit);
  if (d.evidence.missing_bytes) why(d, "the failed request lacked " + mib(double(*d.evidence.missing_bytes)));
}

// Issue 29, the Hugging Face Trainer keeping every evaluation batch's logits on the GPU.
void evaluation_grows(const Features&, Diagnosis& d) {
  const auto& e = *d.evidence.evaluation;
  d.verdict = Verdict::Leak;
  std::string text = "training's step-end bytes stay flat, but within the evaluation from " + num(e.start_seconds, 1) + " s memory grew from " +
                     mib(double(e.start_bytes)) + " to " + mib(double(e.peak_bytes));
  if (e.tensors_growth_bytes_per_call) text += " (its tensors by " + mib(*e.tensors_growth_bytes_per_call) + " per evaluation batch, over " + std::to_string(e.forward_calls) + " batches)";
  why(d, text + (e.ended_in_oom ? " until it ran out of memory" : "") + ": the evaluation accumulates what each batch returns (logits, predictions) on the GPU");
  if (d.evidence.trace && !d.evidence.trace->top_site.empty()) why(d, "the allocation tracer's top growing call site: " + d.evidence.trace->top_site);
}

void retained_flat(const Features& f, Diagnosis& d) {
  d.verdict = f.oom ? Verdict::Insufficient : f.driver.trend.points && f.late_growth ? Verdict::Plateau : Verdict::Stable;
  why(d, "the bytes still allocated at the end of each " + f.unit + " do not grow: nothing is kept from " + f.unit + " to " + f.unit);
  if (f.oom) why(d, "yet it ran out of memory: a step itself needs more than the card has");
  else if (d.verdict == Verdict::Plateau && regular(d))
    why(d, "the driver's number rose at a regular spacing (" + spacing_text(f, *d.evidence.spacing) +
               "): a phase that comes back (an evaluation, a checkpoint) needs more than a training step, and the cache grew for it; it is reused, not leaked");
  else if (d.verdict == Verdict::Plateau)
    why(d, "the driver's number grew after warm-up: the allocator's cache, for larger shapes; it is reused, not leaked");
  if (d.evidence.preallocation) why(d, "the framework preallocated its pool, so the driver's number shows the pool: the step-end bytes decided");
}

void preallocated(const Features&, Diagnosis& d) {
  const auto& p = *d.evidence.preallocation;
  why(d, preallocation_hides(p));
  settle(d, (p.framework.empty() ? "a pool preallocated at start hides the job" : p.framework + " preallocated " +
             std::to_string(std::lround(100 * p.fraction)) + " % of the card at start, which hides the job") + ": " + preallocation_see_through(p));
}

void oom_after_flushes(const Features& f, Diagnosis& d) {
  d.verdict = Verdict::Insufficient;
  why(d, "the driver's number fell " + std::to_string(f.driver.levels.flushes) + " time(s) and grew again before the OOM: the allocator gave its cache "
         "back, so the memory was reclaimable, not leaked; each step needed more");
}

void oom_before_settling(const Features& f, Diagnosis& d) {
  d.verdict = Verdict::Insufficient;
  why(d, "it ran out of memory before the memory ever levelled off (" + std::to_string(f.driver.levels.rises.size()) +
         " rises): the first steps already need more than the card has");
}

void short_run(const Features&, Diagnosis& d) {
  settle(d, "the job held GPU memory for only " + num(d.evidence.holding_seconds, 2) + " s, with no steps marked: too short to tell memory kept "
            "from memory in use; record a run of several steps (with --step-regex or $VRAMDOC_MARK_FILE), or add --trace to see allocations "
            "never freed");
}

void regular_rises(const Features& f, Diagnosis& d) {
  const auto& s = *d.evidence.spacing;
  d.verdict = Verdict::Leak;
  if (!d.evidence.growth_bytes_per_second || *d.evidence.growth_bytes_per_second <= 0) use_staircase_rate(f.driver, d);
  why(d, "after warm-up the driver's number rose " + std::to_string(s.rises) + " times to new highs, " + spacing_text(f, s) +
             " (spread " + num(100 * s.spread, 0) + " %), by " + mib(d.evidence.late_rise_bytes) + " in all: random input shapes would set about " +
             num(s.expected_records, 1) + " such records, ever more rarely (chance " + num(std::min(s.records_p, s.span_p), 6) +
             "); something is kept at a fixed interval (an evaluation without torch.no_grad() whose outputs are kept?)");
}

void sustained(const Features& f, Diagnosis& d) {
  d.verdict = Verdict::Leak;
  if (f.driver.sustained) {
    why(d, "the driver's number keeps growing after warm-up (Mann-Kendall z = " + num(f.driver.trend.mk_z, 2) + ")");
    return;
  }
  use_staircase_rate(f.driver, d);
  why(d, "after levelling off, the driver's number rose again " + std::to_string(d.evidence.late_rises) + " time(s), by " + mib(d.evidence.late_rise_bytes) +
         ", in pieces smaller than a step's working set: the allocator's cache ran out under something kept from step to step");
}

void decelerating(const Features&, Diagnosis& d) {
  d.verdict = Verdict::Plateau;
  why(d, "the driver's number grew after warm-up but ever more slowly (the second half of the run added less than a quarter of the first): "
         "the allocator's cache filling up for new, larger shapes, not a leak");
}

void few_shape_records(const Features&, Diagnosis& d) {
  d.verdict = Verdict::Plateau;
  why(d, "the driver's number rose " + std::to_string(d.evidence.large_late_rises) + " time(s) after warm-up by steps as large as a step's working set, "
         "irregularly and too few for a leak that keeps something every step: new, larger input shapes filling the allocator's cache");
}

void late_growth(const Features&, Diagnosis& d) {
  d.verdict = Verdict::Plateau;
  why(d, "after levelling off, the driver's number rose " + std::to_string(d.evidence.late_rises) +
         " time(s) by steps as large as the working set: new, larger input shapes filling the allocator's cache");
}

void stable(const Features& f, Diagnosis& d) {
  d.verdict = Verdict::Stable;
  why(d, "after warm-up the driver's number stays level (" + mib(double(d.evidence.last_bytes)) + ")");
  if (!f.have_retained) why(d, "from outside only growth beyond the allocator's cache shows: a leak smaller than that stays hidden until it exhausts the cache");
}

using Applies = bool (*)(const Features&, const Diagnosis&);
using Conclude = void (*)(const Features&, Diagnosis&);
struct Rule {
  const char* name;
  Applies applies;
  Conclude conclude;
};

// In order; the first that applies decides. Each reads only the measured features.
const Rule kRules[] = {
    {"fragmentation", [](const Features& f, const Diagnosis&) { return f.fragmented; },
     [](const Features&, Diagnosis& d) {
       const auto& m = *d.evidence.oom;
       d.verdict = Verdict::Fragmentation;
       why(d, "the failed request (" + mib(double(*m.requested_bytes)) + ") is smaller than the memory reserved but unallocated (" +
                  mib(double(*m.reserved_unallocated_bytes)) + "): the memory was there, split into pieces too small");
     }},
    {"OOM in the first step", [](const Features& f, const Diagnosis&) { return f.first_unit_oom; }, first_unit_oom},
    {"evaluation accumulates", [](const Features& f, const Diagnosis&) { return f.evaluation_accumulates; }, evaluation_grows},
    {"trace shows a leak", [](const Features& f, const Diagnosis&) { return f.trace_leak; }, trace_leak},
    {"step-end bytes grow", [](const Features& f, const Diagnosis&) { return f.have_retained && f.retained.sustained; }, retained_grows},
    {"outside PyTorch's allocator", [](const Features& f, const Diagnosis&) { return f.outside_allocator_grows; }, outside_allocator},
    {"step-end bytes flat", [](const Features& f, const Diagnosis&) { return f.have_retained; }, retained_flat},
    {"preallocated pool", [](const Features&, const Diagnosis& d) { return d.evidence.preallocation.has_value(); }, preallocated},
    {"OOM after cache flushes", [](const Features& f, const Diagnosis&) { return f.oom && f.driver.levels.flushes > 0; }, oom_after_flushes},
    {"OOM before levelling off",
     [](const Features& f, const Diagnosis&) { return f.oom && f.driver.levels.rises.size() < kFewRises && !f.driver.levels.settled_at; },
     oom_before_settling},
    {"too short", [](const Features& f, const Diagnosis&) { return !f.oom && f.short_run; }, short_run},
    {"too little after warm-up", [](const Features& f, const Diagnosis&) { return !f.oom && f.driver.trend.points < kMinTrendPoints; },
     [](const Features&, Diagnosis& d) { settle(d, "record longer: too little of the run after warm-up to see a trend"); }},
    {"cache given back", [](const Features& f, const Diagnosis&) { return !f.oom && f.driver.levels.flushes > 0; },
     [](const Features& f, Diagnosis& d) {
       settle(d, "the driver's number grows but the allocator gave memory back " + std::to_string(f.driver.levels.flushes) +
                     " time(s), so it is not all kept: mark steps (--step-regex or $VRAMDOC_MARK_FILE) or record the framework's allocated bytes");
     }},
    {"regular rises", [](const Features& f, const Diagnosis& d) { return !f.oom && regular(d) && f.late_growth; }, regular_rises},
    {"framework pool grows", [](const Features& f, const Diagnosis&) { return !f.oom && f.framework_pool && (f.late_growth || f.decelerating); },
     [](const Features&, Diagnosis& d) {
       why(d, "the driver's number grew after warm-up, but JAX/XLA and TensorFlow allocate from their own pool, which grows in regions of "
              "doubling size: the rises say how the pool grew, not what the job keeps");
       settle(d, "record again with XLA_PYTHON_CLIENT_ALLOCATOR=platform (JAX: every buffer allocated and freed exactly), or log the "
                 "framework's bytes in use at each step (jax.devices()[0].memory_stats()['bytes_in_use'], "
                 "tf.config.experimental.get_memory_info('GPU:0')['current'])");
     }},
    {"growth slows down", [](const Features& f, const Diagnosis& d) { return !f.oom && f.decelerating && !even(d); }, decelerating},
    {"few new-shape rises",
     [](const Features& f, const Diagnosis& d) {
       const auto& ev = d.evidence;
       return !f.oom && !even(d) && ev.late_rises > 0 && ev.large_late_rises * 2 > ev.late_rises && ev.large_late_rises <= kFewShapeRecords;
     },
     few_shape_records},
    {"sustained growth",
     [](const Features& f, const Diagnosis&) { return f.driver.sustained || (f.small_rises_leak && f.driver.levels.settled_at); }, sustained},
    {"OOM without growth", [](const Features& f, const Diagnosis&) { return f.oom; },
     [](const Features&, Diagnosis& d) { d.verdict = Verdict::Insufficient, why(d, "it ran out of memory without growing from step to step"); }},
    {"never levelled off", [](const Features& f, const Diagnosis&) { return !f.driver.levels.settled_at; },
     [](const Features&, Diagnosis& d) { settle(d, "the memory never levelled off and did not grow steadily either: record longer, or mark steps"); }},
    {"evenly spaced rises",
     [](const Features& f, const Diagnosis& d) { return !f.oom && f.late_growth && even(d); },
     [](const Features& f, Diagnosis& d) {
       settle(d, "after warm-up the driver's number rose " + std::to_string(d.evidence.spacing->rises) + " times at an even spacing (" +
                     spacing_text(f, *d.evidence.spacing) + "), too few to tell something kept at a fixed interval from new input shapes: "
                     "record longer, or mark steps with the allocated bytes");
     }},
    {"late growth", [](const Features& f, const Diagnosis&) { return f.late_growth; }, late_growth},
    {"no steady state yet",
     [](const Features& f, const Diagnosis&) {
       return f.driver.trend.points < kMinTrendPoints || (!f.driver.series.x_is_steps && f.driver.trend.span < 1.0);
     },
     [](const Features&, Diagnosis& d) { settle(d, "record longer: the recording ends before a steady state could be seen"); }},
    {"stable", [](const Features&, const Diagnosis&) { return true; }, stable},
};

// Growth the trace saw (PyTorch's segments made until the peak) cannot stand beside "nothing leaks".
void agree_with_trace(const Features& f, Diagnosis& d) {
  if (!f.trace_growth || (d.verdict != Verdict::Plateau && d.verdict != Verdict::Stable)) return;
  const auto& t = *d.evidence.trace;
  d.verdict = Verdict::Inconclusive;
  d.rule += ", then the trace";
  why(d, "but the " + t.source + " saw " + std::to_string(t.growing_count) + " cache segments (" + mib(double(t.growing_bytes)) +
             ") made until the peak" + (t.top_site.empty() ? "" : " at " + t.top_site) + ": the cache grew with the run, which a leak would do too");
  settle(d, "the driver's number and PyTorch's cache segments cannot tell a leak from a growing cache: run again with "
            "PYTORCH_NO_CUDA_MEMORY_CACHING=1 under --trace (each tensor traced) or with --trace-python, or mark steps with the allocated bytes");
}

}  // namespace

void decide(const Features& f, Diagnosis& d) {
  for (const auto& rule : kRules) {
    if (!rule.applies(f, d)) continue;
    d.verdict = Verdict::Inconclusive;
    d.rule = rule.name;
    rule.conclude(f, d);
    break;
  }
  agree_with_trace(f, d);
}

}  // namespace vramdoc::timeline
