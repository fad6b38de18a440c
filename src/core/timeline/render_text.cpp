#include <cmath>
#include <cstdio>
#include <nlohmann/json.hpp>

#include "core/table.hpp"
#include "core/terminal_safe.hpp"
#include "core/timeline/quantify.hpp"
#include "core/timeline/render.hpp"
#include "core/timeline/render_job.hpp"
#include "core/text.hpp"
#include "core/units.hpp"

namespace vramdoc::timeline {

namespace {

std::string bytes(double b) { return (b < 0 ? "-" : "") + format_bytes(static_cast<std::uint64_t>(std::fabs(b))); }

using Rows = std::vector<std::pair<std::string, std::string>>;

// The rises' spacing, flushes, a preallocated pool, the trace: what the verdict's pattern rests on.
void pattern_rows(const Evidence& ev, Rows& rows) {
  auto row = [&rows](std::string k, std::string v) { rows.emplace_back(std::move(k), std::move(v)); };
  if (ev.spacing && ev.spacing->rises >= 2) {
    const auto& sp = *ev.spacing;
    row("rise spacing", std::to_string(sp.rises) + " new highs" + (sp.period ? ", every " + fixed(*sp.period, 2) + (ev.steps ? " steps" : " s") +
        " (spread " + fixed(100 * sp.spread, 0) + "%)" : "") + "; random shapes: " + fixed(sp.expected_records, 1) +
        " records expected, chance " + fixed(std::min(sp.records_p, sp.span_p), 4) + (sp.regular ? ": regular" : ""));
  }
  if (ev.cache_flushes) row("cache given back", std::to_string(ev.cache_flushes) + " time(s)");
  if (ev.preallocation)
    row("preallocated pool", (ev.preallocation->framework.empty() ? std::string("a pool") : ev.preallocation->framework) + ", " +
        bytes(double(ev.preallocation->pool_bytes)) + " (" + fixed(100 * ev.preallocation->fraction, 0) + "% of the card) at " +
        fixed(ev.preallocation->at_seconds, 2) + " s");
  if (ev.trace)
    row("trace", std::to_string(ev.trace->alive_at_exit_count) + " alive at exit (" + bytes(double(ev.trace->alive_at_exit_bytes)) + "), " +
        std::to_string(ev.trace->growing_count) + " growing until the peak (" + bytes(double(ev.trace->growing_bytes)) + ")" +
        (ev.trace->segments_only ? ", PyTorch cache segments" : ""));
}

// Insufficient: what the whole job needs.
void need_rows(const Evidence& ev, Rows& rows) {
  auto row = [&rows](std::string k, std::string v) { rows.emplace_back(std::move(k), std::move(v)); };
  if (!ev.need) return;
  row("needed", (ev.need->at_least ? "at least " : "about ") + bytes(double(ev.need->bytes)) + " (" + ev.need->basis + ")");
  if (ev.need->fixed_bytes) row("  before its steps", bytes(double(*ev.need->fixed_bytes)));
  if (ev.need->shrink) row("  what a step adds", (ev.need->at_least ? "must shrink at least " : "must shrink ") + fixed(*ev.need->shrink, 2) + "x to fit");
}

}  // namespace

std::vector<std::pair<std::string, std::string>> evidence_rows(const Diagnosis& d) {
  const auto& ev = d.evidence;
  std::vector<std::pair<std::string, std::string>> rows;
  auto row = [&rows](std::string k, std::string v) { rows.emplace_back(std::move(k), std::move(v)); };
  row("samples", std::to_string(ev.samples) + " over " + fixed(ev.duration_seconds, 2) + " s");
  if (ev.samples < 3) {  // nothing measured: only what an OOM message says
    if (ev.oom) {
      auto opt = [](const std::optional<std::uint64_t>& v) { return v ? bytes(double(*v)) : std::string("n/a"); };
      row("out of memory", ev.oom->framework + " message");
      row("  requested", opt(ev.oom->requested_bytes));
      row("  free / capacity", opt(ev.oom->free_bytes) + " / " + opt(ev.oom->capacity_bytes));
      row("  reserved, unallocated", opt(ev.oom->reserved_unallocated_bytes));
    }
    return rows;
  }
  row("steps", ev.steps ? std::to_string(*ev.steps) + " (marks)" : ev.step_seconds ? "period " + fixed(*ev.step_seconds, 3) + " s (found in the signal)" : "n/a (no marks, no period found)");
  row("warm-up", fixed(ev.warmup_seconds, 2) + " s" + (ev.warmup_steps ? " / " + std::to_string(*ev.warmup_steps) + " steps" : "") + (ev.settled ? "" : " (never levelled off; first tenth taken)"));
  row("trend measured on", ev.trend_series.empty() ? "n/a" : ev.trend_series);
  const std::string method = ev.growth_method.empty() ? "" : " (" + ev.growth_method + ")";
  row("growth per step", ev.growth_bytes_per_step ? bytes(*ev.growth_bytes_per_step) + method : "n/a");
  row("growth per second", ev.growth_bytes_per_second ? bytes(*ev.growth_bytes_per_second) + method : "n/a");
  row("Mann-Kendall z", ev.mann_kendall_z ? fixed(*ev.mann_kendall_z, 2) + " over " + std::to_string(ev.trend_points) + " points (> 3.09: growing, p < 0.001)" : "n/a");
  row("rises after warm-up", std::to_string(ev.late_rises) + ", " + bytes(ev.late_rise_bytes) + " (working set " + bytes(ev.working_set_bytes) + ")");
  pattern_rows(ev, rows);
  std::string peak = bytes(double(ev.peak_bytes)) + " at " + fixed(ev.peak_seconds, 2) + " s";
  if (ev.capacity_bytes) peak += " of " + bytes(double(*ev.capacity_bytes)) + " (" + fixed(100 * ev.peak_fraction.value_or(0), 1) + "%)";
  else peak += " (capacity unknown)";
  row("peak (driver)", peak);
  row("first / last", bytes(double(ev.first_bytes)) + " / " + bytes(double(ev.last_bytes)));
  if (const auto& a = ev.accounting) {  // one accounting for every verdict (accounting.hpp)
    row("at the last " + a->unit + " end", "tensors " + bytes(double(a->tensors.last_bytes)) + ", cache beyond them " + bytes(double(a->cache.last_bytes)) +
                                          ", driver beyond the cache " + bytes(double(a->driver.last_bytes)));
    const LevelFigures* g = !a->growing ? nullptr : *a->growing == Level::Tensors ? &a->tensors : *a->growing == Level::Cache ? &a->cache : &a->driver;
    row("level that grows", g ? std::string(level_name(*a->growing)) + ", " + bytes(g->growth_bytes_per_unit) + " per " + a->unit + " (z = " + fixed(g->mk_z, 2) + ")"
                              : "none (over " + std::to_string(a->units) + " " + a->unit + "s)");
  }
  if (const auto& e = ev.evaluation)
    row("evaluation", "from " + fixed(e->start_seconds, 2) + " s: " + bytes(double(e->start_bytes)) + " -> " + bytes(double(e->peak_bytes)) +
                          (e->forward_calls ? ", " + std::to_string(e->forward_calls) + " batches marked" : "") + (e->ended_in_oom ? ", ran out of memory" : ""));
  if (!ev.allocator.empty()) {
    std::string settings;
    for (const auto& a : ev.allocator) settings += (settings.empty() ? "" : "; ") + a;
    row("allocator", settings);
  }
  if (ev.oom_seconds) row("out of memory", "at " + fixed(*ev.oom_seconds, 2) + " s" + (ev.oom ? " (" + ev.oom->framework + " message)" : ""));
  if (ev.oom) {
    const auto& m = *ev.oom;
    auto opt = [](const std::optional<std::uint64_t>& v) { return v ? bytes(double(*v)) : std::string("n/a"); };
    row("  requested", opt(m.requested_bytes));
    row("  free / capacity", opt(m.free_bytes) + " / " + opt(m.capacity_bytes));
    if (m.allowed_bytes) row("  allowed (fraction)", opt(m.allowed_bytes));
    row("  reserved, unallocated", opt(m.reserved_unallocated_bytes));
  }
  if (ev.missing_bytes) row("last request lacked", bytes(double(*ev.missing_bytes)));
  need_rows(ev, rows);
  if (ev.projected_oom_seconds)
    row("projected OOM", "at about " + fixed(*ev.projected_oom_seconds, 0) + " s" + (ev.projected_oom_step ? ", step " + fixed(*ev.projected_oom_step, 0) : ""));
  if (!d.rule.empty()) row("decided by", "rule '" + d.rule + "' (docs/run-analyze.md)");
  return rows;
}

namespace {

// "leak: memory grows ..." with the verdict word in its tone: problems red, healthy green, undecided yellow.
std::string painted_summary(const std::string& summary, const Style& style) {
  const auto colon = summary.find(':');
  if (colon == std::string::npos) return summary;
  const std::string word = summary.substr(0, colon);
  const Tone tone = word == "stable" || word == "plateau" ? Tone::Good : word == "inconclusive" ? Tone::Warn : Tone::Bad;
  return style.paint(word, tone) + summary.substr(colon);
}

}  // namespace

std::string render_text(const Timeline& tl, const Diagnosis& d, const JobVerdicts* processes, const Style& style) {
  // The timeline's fields came from a file anyone may have written: safe for a terminal.
  std::string out = "diagnosis of " + terminal_safe(tl.name) + "\n\n  verdict: " + painted_summary(terminal_safe(d.summary), style) + "\n\n";
  if (processes) out += render_processes_text(*processes) + "\n";
  TextTable t({"evidence", "value"}, {TextTable::Align::Left, TextTable::Align::Left});
  for (auto& [k, v] : evidence_rows(d)) t.add_row({k, terminal_safe(v)});
  out += t.render("  ") + "\n";
  if (!d.reasons.empty()) {
    out += "  why:\n";
    for (const auto& r : d.reasons) out += "    - " + terminal_safe(r) + "\n";
  }
  out += "\n  what to do:\n";
  for (const auto& r : d.remedies) out += "    - " + terminal_safe(r) + "\n";
  if (d.quantified) out += "\n" + render_quantified_text(*d.quantified);
  return out;
}

nlohmann::json diagnosis_json(const Timeline& tl, const Diagnosis& d) {
  using nlohmann::json;
  const auto& ev = d.evidence;
  auto opt = [](const auto& v) { return v ? json(*v) : json(nullptr); };
  // Byte figures are integers in every JSON document (docs/cli.md): rates and sums round.
  auto whole = [](double b) { return json(static_cast<std::int64_t>(std::llround(b))); };
  auto opt_whole = [&](const std::optional<double>& v) { return v ? whole(*v) : json(nullptr); };
  json e = {{"samples", ev.samples}, {"duration_s", ev.duration_seconds}, {"steps", opt(ev.steps)},
            {"step_s", opt(ev.step_seconds)}, {"step_source", ev.step_source}, {"warmup_s", ev.warmup_seconds},
            {"warmup_steps", opt(ev.warmup_steps)}, {"settled", ev.settled}, {"trend_series", ev.trend_series},
            {"growth_bytes_per_step", opt_whole(ev.growth_bytes_per_step)}, {"growth_bytes_per_s", opt_whole(ev.growth_bytes_per_second)}, {"growth_method", ev.growth_method},
            {"mann_kendall_z", opt(ev.mann_kendall_z)}, {"trend_points", ev.trend_points}, {"late_rises", ev.late_rises},
            {"late_rise_bytes", whole(ev.late_rise_bytes)}, {"large_late_rises", ev.large_late_rises}, {"working_set_bytes", whole(ev.working_set_bytes)}, {"cache_flushes", ev.cache_flushes},
            {"first_bytes", ev.first_bytes}, {"peak_bytes", ev.peak_bytes}, {"peak_s", ev.peak_seconds}, {"last_bytes", ev.last_bytes},
            {"capacity_bytes", opt(ev.capacity_bytes)}, {"peak_fraction", opt(ev.peak_fraction)}, {"oom_s", opt(ev.oom_seconds)},
            {"projected_oom_s", opt(ev.projected_oom_seconds)}, {"projected_oom_step", opt(ev.projected_oom_step)},
            {"missing_bytes", opt(ev.missing_bytes)}};
  if (ev.oom) {
    const auto& m = *ev.oom;
    e["oom_message"] = {{"framework", m.framework}, {"requested_bytes", opt(m.requested_bytes)}, {"capacity_bytes", opt(m.capacity_bytes)},
                        {"free_bytes", opt(m.free_bytes)}, {"in_use_bytes", opt(m.in_use_bytes)}, {"allocated_bytes", opt(m.allocated_bytes)},
                        {"reserved_unallocated_bytes", opt(m.reserved_unallocated_bytes)}, {"text", m.text}};
  } else {
    e["oom_message"] = nullptr;
  }
  e["spacing"] = ev.spacing ? json{{"rises", ev.spacing->rises}, {"expected_records", ev.spacing->expected_records},
                                    {"records_p", ev.spacing->records_p}, {"span_p", ev.spacing->span_p}, {"period", opt(ev.spacing->period)},
                                    {"spread", ev.spacing->spread}, {"regular", ev.spacing->regular}}
                             : json(nullptr);
  e["preallocation"] = ev.preallocation ? json{{"framework", ev.preallocation->framework}, {"fraction", ev.preallocation->fraction},
                                               {"at_s", ev.preallocation->at_seconds}, {"pool_bytes", ev.preallocation->pool_bytes}}
                                        : json(nullptr);
  e["need"] = ev.need ? json{{"bytes", ev.need->bytes}, {"at_least", ev.need->at_least}, {"basis", ev.need->basis},
                             {"fixed_bytes", opt(ev.need->fixed_bytes)}, {"shrink", opt(ev.need->shrink)}}
                      : json(nullptr);
  e["trace_evidence"] = ev.trace ? json{{"source", ev.trace->source}, {"segments_only", ev.trace->segments_only},
                               {"alive_at_exit_bytes", ev.trace->alive_at_exit_bytes}, {"alive_at_exit_count", ev.trace->alive_at_exit_count},
                               {"growing_bytes", ev.trace->growing_bytes}, {"growing_count", ev.trace->growing_count}, {"top_site", ev.trace->top_site}}
                        : json(nullptr);
  auto level_json = [](const LevelFigures& f) {
    return json{{"first_bytes", f.first_bytes}, {"last_bytes", f.last_bytes}, {"growth_bytes_per_unit", std::llround(f.growth_bytes_per_unit)},
                {"mann_kendall_z", f.mk_z}, {"grows", f.grows}};
  };
  if (const auto& a = ev.accounting)
    e["accounting"] = {{"unit", a->unit}, {"units", a->units}, {"tensors", level_json(a->tensors)}, {"cache", level_json(a->cache)},
                       {"driver", level_json(a->driver)}, {"growing", a->growing ? json(level_name(*a->growing)) : json(nullptr)}};
  if (const auto& g = ev.evaluation)
    e["evaluation"] = {{"start_s", g->start_seconds}, {"end_s", g->end_seconds}, {"start_bytes", g->start_bytes}, {"peak_bytes", g->peak_bytes},
                       {"forward_calls", g->forward_calls}, {"tensors_growth_bytes_per_call", opt(g->tensors_growth_bytes_per_call)},
                       {"ended_in_oom", g->ended_in_oom}};
  if (!ev.allocator.empty()) e["allocator"] = ev.allocator;
  if (ev.oom && ev.oom->allowed_bytes) e["oom_message"]["allowed_bytes"] = *ev.oom->allowed_bytes;
  json out = {{"name", tl.name}, {"verdict", verdict_name(d.verdict)}, {"rule", d.rule}, {"summary", d.summary}, {"reasons", d.reasons},
              {"to_settle", d.to_settle.empty() ? json(nullptr) : json(d.to_settle)}, {"evidence", e}, {"remedies", d.remedies},
              {"outcome", outcome_name(tl.outcome)}, {"exit_status", opt(tl.exit_status)}};
  if (d.quantified) out["quantified"] = quantified_json(*d.quantified), out["remedies_quantified"] = remedies_quantified_json(*d.quantified);
  return out;
}

}  // namespace vramdoc::timeline
