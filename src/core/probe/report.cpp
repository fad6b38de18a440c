#include "core/probe/report.hpp"

#include <algorithm>
#include <cstdio>

#include "core/json_document.hpp"
#include "core/table.hpp"
#include "core/terminal_safe.hpp"
#include "core/units.hpp"

namespace vramdoc::probe {

namespace {

std::string num(std::uint64_t v) { return std::to_string(v); }

std::string fmt(const char* f, double a) {
  char buf[64];
  std::snprintf(buf, sizeof buf, f, a);
  return buf;
}

// The trials of `value` (the confirmation last).
std::vector<const Trial*> trials_of(const std::vector<Trial>& trials, std::uint64_t value) {
  std::vector<const Trial*> out;
  for (const auto& t : trials)
    if (t.value == value) out.push_back(&t);
  return out;
}

// How long a value that ran ran: "ran 50 steps, settled at step 9", or for a job that ended by
// itself "ran 3 steps to the job's end, flat from step 2" (settled: no later step can change it).
std::string how_long_ran(const std::vector<Trial>& trials, std::uint64_t value) {
  const Trial* longest = nullptr;
  std::optional<int> settled;
  for (const Trial* t : trials_of(trials, value)) {
    if (t->outcome != Outcome::Ok) continue;
    if (!longest || t->steps > longest->steps) longest = t;
    if (t->settled_at && !settled) settled = t->settled_at;
  }
  if (!longest || longest->steps == 0) return "no steps marked";
  const std::string ran = "ran " + std::to_string(longest->steps) + " steps";
  if (longest->ran_to_end)
    return ran + " to the job's end" + (longest->settled_at ? ", flat from step " + std::to_string(*longest->settled_at) : "");
  return ran + ", " + (settled ? "settled at step " + std::to_string(*settled) : std::string("memory not settled"));
}

// When the first trial of `value` that ran out of memory did: "at step 17".
std::string when_out_of_memory(const std::vector<Trial>& trials, std::uint64_t value) {
  for (const Trial* t : trials_of(trials, value))
    if (t->outcome == Outcome::Oom) return "at step " + std::to_string(t->steps + 1) + (t->confirmation ? " of its confirmation run" : "");
  return "";
}

}  // namespace

ProbeReport conclude(const Search& search, std::string parameter, std::optional<std::uint64_t> capacity_bytes,
                     double margin_fraction, bool budget_exhausted) {
  ProbeReport r;
  r.parameter = std::move(parameter);
  r.reason = search.reason();
  r.trials = search.trials();
  r.largest_ok = search.largest_ok();
  r.smallest_oom = search.smallest_oom();
  r.fit = fit_peaks(r.trials);
  r.capacity_bytes = capacity_bytes;
  r.budget_exhausted = budget_exhausted;
  r.confirm_steps = search.limits().confirm_steps;
  r.confirmed = search.confirmed();
  for (const auto& t : r.trials)
    if (t.outside_allocator_bytes) r.outside_allocator_bytes = std::max(r.outside_allocator_bytes.value_or(0), *t.outside_allocator_bytes);
  if (r.reason == StopReason::TrialsSpent && r.largest_ok) {
    const std::uint64_t last = r.smallest_oom ? *r.smallest_oom - 1 : search.limits().max;
    if (last > *r.largest_ok) r.untried = std::make_pair(*r.largest_ok + 1, last);
  }
  // An answer is reported once confirmed (or when no confirmation was asked for); a search the
  // budget stopped recommends from what ran.
  const bool answered = r.reason == StopReason::Bracketed || r.reason == StopReason::ReachedMax || r.reason == StopReason::TrialsSpent;
  if ((answered && (r.confirmed || r.confirm_steps == 0)) || (budget_exhausted && r.largest_ok && r.reason != StopReason::Unmeasured)) {
    r.recommendation = recommend(r.trials, capacity_bytes, margin_fraction, r.largest_ok);
  } else {
    r.recommendation.margin_fraction = margin_fraction;
    r.recommendation.basis = "nothing is recommended: " + std::string(stop_reason_name(r.reason));
  }
  return r;
}

std::string late_rise_note(const ProbeReport& r) {
  if (!r.confirmed) return "";
  const Trial* first = nullptr;
  const Trial* confirmation = nullptr;
  for (const Trial* t : trials_of(r.trials, *r.confirmed)) {
    if (t->outcome != Outcome::Ok || !t->peak_bytes) continue;
    if (t->confirmation) confirmation = t;
    else if (!first) first = t;
  }
  if (!first || !confirmation) return "";
  const std::uint64_t tolerance = r.capacity_bytes ? *r.capacity_bytes / 100 : 64ULL << 20;
  const bool later = confirmation->settled_at.value_or(confirmation->steps) > first->settled_at.value_or(first->steps);
  if (*confirmation->peak_bytes <= *first->peak_bytes + tolerance || !later) return "";
  return "the memory of " + r.parameter + " " + num(*r.confirmed) + " rose after its trial settled (" + format_bytes(*first->peak_bytes) +
         " in " + std::to_string(first->steps) + " steps, " + format_bytes(*confirmation->peak_bytes) + " in " +
         std::to_string(confirmation->steps) + (confirmation->settled_at ? ", settled at step " + std::to_string(*confirmation->settled_at) : "") +
         "): the job's shapes vary from step to step, so a larger batch later can raise the peak again - use the recommended " +
         r.parameter;
}

std::string verdict_code(const ProbeReport& r) {
  const bool unconfirmed = r.confirm_steps > 0 && !r.confirmed;
  switch (r.reason) {
    case StopReason::FailsAtStart: return "too_big";
    case StopReason::Leaks: return "leak";
    case StopReason::OtherFailure: return "other_failure";
    case StopReason::Bracketed: return unconfirmed ? "incomplete" : "fits_up_to";
    case StopReason::ReachedMax: return unconfirmed ? "incomplete" : "fits_up_to_max";
    case StopReason::Unmeasured: return "unmeasured";
    case StopReason::TrialsSpent: return unconfirmed ? "incomplete" : r.untried ? "fits_at_least" : "fits_up_to";
    case StopReason::Running: return "incomplete";
  }
  return "incomplete";
}

std::string verdict_line(const ProbeReport& r) {
  const std::string& p = r.parameter;
  switch (r.reason) {
    case StopReason::FailsAtStart:
      return "too big even at " + p + " " + num(r.trials.front().value) +
             ": the job does not fit (insufficient memory, 显存不足) - shrink it (gradient checkpointing, "
             "mixed precision, LoRA, a shorter sequence) or use a bigger card";
    case StopReason::Leaks:
      return "leaks: memory grew step after step at " + p + " " + num(r.trials.back().value) + " (" +
             r.trials.back().growth + "; 显存泄漏) - every " + p + " will fail eventually; fix the code before sizing the " + p;
    case StopReason::OtherFailure:
      return "failed for a reason other than memory at " + p + " " + num(r.trials.back().value) +
             " (exit " + (r.trials.back().exit_code ? std::to_string(*r.trials.back().exit_code) : "?") +
             "): fix the command first";
    case StopReason::Unmeasured:
      return "ran at " + p + " " + num(r.trials.back().value) +
             ", but the driver gave no memory readings: whether it fits (its memory settled, its peak) cannot be "
             "measured, so nothing is recommended - run probe where NVML (libnvidia-ml.so.1) can see the job's GPU";
    case StopReason::Bracketed:
    case StopReason::TrialsSpent:
    case StopReason::ReachedMax: {
      if (r.confirm_steps > 0 && !r.confirmed)
        return "incomplete: " + p + " " + num(*r.largest_ok) + " ran (" + how_long_ran(r.trials, *r.largest_ok) +
               ") but its confirmation run did not finish";
      std::string line = "fits up to " + std::string(r.reason == StopReason::ReachedMax ? "the --max " : "") + p + " " +
                         num(*r.largest_ok) + " (" + how_long_ran(r.trials, *r.largest_ok) + ")";
      if (r.reason == StopReason::ReachedMax) return line + "; no out-of-memory found";
      if (r.untried)  // the cap ended the search with the bracket open: the answer is a lower bound
        line += "; " + num(r.untried->first) + (r.untried->second > r.untried->first ? "-" + num(r.untried->second) : "") +
                " untried (the " + num(r.trials.size()) + " trials spent)";
      if (!r.smallest_oom) return line + "; none ran out of memory";
      return line + "; " + p + " " + num(*r.smallest_oom) + " ran out of memory " + when_out_of_memory(r.trials, *r.smallest_oom);
    }
    case StopReason::Running:
      return r.largest_ok ? "incomplete (time budget spent): " + p + " " + num(*r.largest_ok) + " ran"
                          : "incomplete: no trial finished";
  }
  return "";
}

std::string progress_line(const std::string& parameter, const Trial& t) {
  std::string peak = t.peak_bytes ? format_bytes(*t.peak_bytes) : "n/a";
  std::string line = parameter + " " + num(t.value) + (t.confirmation ? " (confirmation)" : "") + ": " +
                     outcome_name(t.outcome) + ", peak " + peak +
                     (t.allocated_peak_bytes ? " (allocated " + format_bytes(*t.allocated_peak_bytes) + ")" : "") + ", " +
                     std::to_string(t.steps) + " steps" +
                     (t.ran_to_end ? ", ran to the job's end" : "") +
                     (t.settled_at ? ", settled at step " + std::to_string(*t.settled_at) : t.outcome == Outcome::Ok ? ", not settled" : "") +
                     ", " + fmt("%.1f s", t.seconds);
  if (t.memory_grew) line += ", memory grew across steps (" + t.growth + ")";
  if (t.outcome != Outcome::Ok && !t.detail.empty()) line += " - " + terminal_safe(t.detail.substr(0, 160));  // the job's words
  return line;
}

std::string render_text(const ProbeReport& r, const Style& style) {
  std::vector<Trial> sorted = r.trials;
  std::stable_sort(sorted.begin(), sorted.end(), [](const Trial& a, const Trial& b) { return a.value < b.value; });
  // The allocator's peak gets a column only when a trial's step hook reported it (`peak=`): older
  // hooks and jobs that are not PyTorch keep the table they had. "alloc GiB", not "allocated GiB":
  // with the longer header a row of a four-digit confirmation took 84 columns (docs/probe.md).
  const bool allocated = std::any_of(sorted.begin(), sorted.end(), [](const Trial& t) { return t.allocated_peak_bytes.has_value(); });
  std::vector<std::string> head{r.parameter, "outcome", "steps", "settled at", "peak GiB"};
  if (allocated) head.push_back("alloc GiB");
  head.insert(head.end(), {"grew", "seconds"});
  TextTable table(head);
  for (const auto& t : sorted) {
    std::vector<std::string> row{num(t.value) + (t.confirmation ? " (confirm)" : ""), outcome_name(t.outcome), std::to_string(t.steps),
                                 t.settled_at ? std::to_string(*t.settled_at) + (t.ran_to_end ? " (end)" : "") : "-",
                                 t.peak_bytes ? format_gib(*t.peak_bytes) : "n/a"};
    if (allocated) row.push_back(t.allocated_peak_bytes ? format_gib(*t.allocated_peak_bytes) : "n/a");
    row.insert(row.end(), {t.memory_grew ? "yes" : "no", fmt("%.1f", t.seconds)});
    table.add_row(row);
  }
  const bool fits = verdict_code(r).rfind("fits", 0) == 0 && !r.budget_exhausted && !r.untried;  // an open bracket: yellow
  const bool fails = r.reason == StopReason::FailsAtStart || r.reason == StopReason::Leaks || r.reason == StopReason::OtherFailure ||
                     r.reason == StopReason::Unmeasured;
  const Tone tone = fits ? Tone::Good : fails ? Tone::Bad : Tone::Warn;
  std::string out = "vramdoc probe: " + style.paint(verdict_line(r), tone) + "\n\n" + table.render("  ") + "\n";
  if (r.fit) {
    out += "  fitted peak(" + r.parameter + ") = " + format_bytes(static_cast<std::uint64_t>(std::max(0.0, r.fit->fixed_bytes))) +
           " fixed (weights, optimizer state, context) + " +
           format_bytes(static_cast<std::uint64_t>(std::max(0.0, r.fit->per_item_bytes))) + " per " + r.parameter;
    if (r.fit->quadratic_bytes)
      out += " + " + format_bytes(static_cast<std::uint64_t>(*r.fit->quadratic_bytes)) + " x " + r.parameter +
             "^2 (not linear: e.g. attention's s^2)";
    out += fmt(", R^2 %.3f", r.fit->r_squared) + "\n";
  }
  if (r.capacity_bytes)
    out += "  card memory: " + format_bytes(*r.capacity_bytes) +
           (r.outside_allocator_bytes ? " (" + format_bytes(*r.outside_allocator_bytes) + " of a trial's memory outside the allocator: the CUDA context)" : "") +
           "\n";
  if (r.recommendation.value) {
    out += "  recommended " + r.parameter + ": " + num(*r.recommendation.value) + " (" + r.recommendation.basis + ")\n";
  } else {
    out += "  " + r.recommendation.basis + "\n";
  }
  if (const std::string note = late_rise_note(r); !note.empty()) out += "  " + style.paint("note: " + note, Tone::Warn) + "\n";
  return out;
}

nlohmann::json to_json(const ProbeReport& r) {
  nlohmann::json j;
  j["parameter"] = r.parameter;
  j["verdict"] = verdict_code(r);
  j["summary"] = verdict_line(r);
  j["stop_reason"] = stop_reason_name(r.reason);
  j["budget_exhausted"] = r.budget_exhausted;
  auto opt = [](const std::optional<std::uint64_t>& v) { return v ? nlohmann::json(*v) : nlohmann::json(nullptr); };
  j["largest_ok"] = opt(r.largest_ok);
  j["smallest_oom"] = opt(r.smallest_oom);
  j["capacity_bytes"] = opt(r.capacity_bytes);
  j["recommended"] = opt(r.recommendation.value);
  j["margin_fraction"] = r.recommendation.margin_fraction;
  j["recommendation_basis"] = r.recommendation.basis;
  const std::string note = late_rise_note(r);
  j["late_rise"] = note.empty() ? nlohmann::json(nullptr) : nlohmann::json(note);
  j["confirm_steps"] = r.confirm_steps;
  j["confirmed"] = opt(r.confirmed);
  j["outside_allocator_bytes"] = opt(r.outside_allocator_bytes);
  j["untried"] = r.untried ? nlohmann::json{{"first", r.untried->first}, {"last", r.untried->second}} : nlohmann::json(nullptr);
  if (r.fit) {
    j["fit"] = {{"fixed_bytes", r.fit->fixed_bytes}, {"per_item_bytes", r.fit->per_item_bytes},
                {"r_squared", r.fit->r_squared}, {"points", r.fit->points}, {"linear", r.fit->linear()},
                {"quadratic_bytes", r.fit->quadratic_bytes ? nlohmann::json(*r.fit->quadratic_bytes) : nlohmann::json(nullptr)}};
  } else {
    j["fit"] = nullptr;
  }
  j["trials"] = nlohmann::json::array();
  for (const auto& t : r.trials) {
    j["trials"].push_back({{"value", t.value}, {"outcome", outcome_name(t.outcome)}, {"peak_bytes", opt(t.peak_bytes)},
                           {"memory_grew", t.memory_grew}, {"growth", t.growth},
                           {"exit_code", t.exit_code ? nlohmann::json(*t.exit_code) : nlohmann::json(nullptr)},
                           {"detail", t.detail}, {"seconds", t.seconds}, {"steps", t.steps},
                           {"settled_at", t.settled_at ? nlohmann::json(*t.settled_at) : nlohmann::json(nullptr)},
                           {"outside_allocator_bytes", opt(t.outside_allocator_bytes)},
                           {"allocated_peak_bytes", opt(t.allocated_peak_bytes)}, {"ran_to_end", t.ran_to_end},
                           {"measured", t.measured}, {"confirmation", t.confirmation}});
  }
  return j;
}

std::string render_json(const ProbeReport& report) { return json_document("vramdoc.probe/1", to_json(report)); }

}  // namespace vramdoc::probe
