#include "backends/capture/script.hpp"

#include <fstream>
#include <optional>

#include "backends/capture/job.hpp"
#include "backends/nvml.hpp"
#include "core/capture/report.hpp"
#include "core/capture/search.hpp"
#include "core/estimator/cards.hpp"
#include "core/input_file.hpp"
#include "core/units.hpp"
#include "vramdoc/capture_module_text.hpp"

namespace vramdoc::backends {
namespace {

constexpr std::uint64_t kSearchLimit = std::uint64_t{1} << 20;

// The card the capture fakes and the report fits on.
struct Card {
  std::string name = "NVIDIA H200";  // what torch.cuda.get_device_name() shows
  std::uint64_t total_bytes = 150754820096;
  capture::ComputeCapability cc{9, 0, true};
  bool verdict = false;              // a card was chosen: say whether it fits
};

Result<Card> choose_card(const ScriptOptions& o) {
  Card c;
  if (!o.gpu.empty()) {
    auto card = estimator::find_gpu(o.gpu);
    if (!card) return make_error("unknown --gpu '" + o.gpu + "' (see estimate --list-gpus, or give --gpu-memory)");
    c.name = std::string(card->smi_name.empty() ? card->name : card->smi_name), c.total_bytes = card->usable_bytes;
    c.cc = capture::compute_capability(card->name), c.verdict = true;
  } else if (auto local = device_capacity(0)) {
    c.name = local->name ? *local->name : "local GPU 0";
    c.total_bytes = local->total_bytes, c.cc = capture::compute_capability(c.name), c.verdict = true;
  }
  if (o.gpu_memory_bytes) {
    c.total_bytes = *o.gpu_memory_bytes, c.verdict = true;
    if (o.gpu.empty()) c.name = format_bytes(*o.gpu_memory_bytes) + " card";
  }
  if ((o.max_batch || o.max_seq) && !c.verdict) return make_error("--max-batch / --max-seq need --gpu or --gpu-memory (no local GPU was found)");
  return c;
}

capture::ReplayOptions replay_options(const ScriptOptions& o, const Card& c) {
  capture::ReplayOptions r;
  r.target.cc_major = c.cc.major, r.target.cc_minor = c.cc.minor;
  r.allocator.expandable_segments = o.expandable_segments;
  return r;
}

// One capture of `argv`: its report (the error: the job could not start, or no trace came back).
Result<capture::Report> capture_once(const ScriptOptions& o, const Card& c, const std::vector<std::string>& argv) {
  CaptureJob job;
  job.argv = argv, job.module_text = kCaptureModuleText, job.steps = o.steps;
  job.timeout = std::chrono::seconds(o.timeout_s), job.show_output = o.show_output;
  job.gpu_name = c.name, job.gpu_bytes = c.total_bytes, job.cc_major = c.cc.major, job.cc_minor = c.cc.minor;
  auto out = run_capture(job);
  if (!out) return make_error(out.error());
  if (out->trace_text.empty() && out->timed_out)
    return make_error("the job ran past --capture-timeout (" + std::to_string(o.timeout_s) + " s) before it imported torch");
  if (out->trace_text.empty())
    return make_error("the job never imported torch, so nothing was captured (exit status " + std::to_string(out->exit_status) +
                      ")" + (out->output_tail.empty() ? "" : "; its last output:\n" + out->output_tail));
  if (!o.save_trace.empty()) {
    std::ofstream f(o.save_trace, std::ios::trunc);
    if (!(f << out->trace_text) || !f.flush()) return make_error("cannot write the trace to " + o.save_trace);
  }
  auto trace = capture::parse_trace(out->trace_text);
  if (!trace) return make_error("the capture's trace: " + trace.error());
  capture::Report r = capture::build_report(*trace, replay_options(o, c));
  r.command = argv, r.timed_out = out->timed_out, r.exit_status = out->exit_status, r.steps_asked = o.steps;
  if (!capture::shortfall(r).empty() && !out->output_tail.empty() && !o.json && o.note)
    o.note("the job's last output:\n" + out->output_tail);
  return r;
}

capture::Trial trial_of(const capture::Report& r, const Card& c) {
  capture::Trial t;
  t.problem = capture::shortfall(r);
  t.ran_to_end = t.problem.empty();
  t.process_bytes = r.process_bytes;
  t.fits = capture::fits(r.process_bytes, c.total_bytes);
  return t;
}

// The report on the card, and what it answers.
ScriptAnswer answer(const ScriptOptions& o, capture::Report r, const Card& c) {
  if (c.verdict) r.target_name = c.name, r.usable_bytes = c.total_bytes;
  ScriptVerdict v = ScriptVerdict::NoCard;
  if (r.trials.empty() && !capture::shortfall(r).empty()) v = ScriptVerdict::Partial;  // the job failed or timed out
  else if (!c.verdict) v = ScriptVerdict::NoCard;
  else if (o.max_batch || o.max_seq) v = r.max_batch ? ScriptVerdict::Fits : ScriptVerdict::DoesNotFit;
  else v = capture::fits(r.process_bytes, c.total_bytes) ? ScriptVerdict::Fits : ScriptVerdict::DoesNotFit;
  return {std::move(r), v};
}

Result<ScriptAnswer> from_trace(const ScriptOptions& o, const Card& c) {
  auto text = read_input_file(o.from_trace, capture::kMaxTraceBytes);
  if (!text) return make_error(text.error());
  auto trace = capture::parse_trace(*text);
  if (!trace) return make_error(o.from_trace + ": " + trace.error());
  capture::Report r = capture::build_report(*trace, replay_options(o, c));
  r.command = {o.from_trace}, r.steps_asked = o.steps;
  return answer(o, std::move(r), c);
}

}  // namespace

Result<ScriptAnswer> estimate_script(const ScriptOptions& o) {
  auto card = choose_card(o);
  if (!card) return make_error(card.error());
  if (!o.from_trace.empty()) return from_trace(o, *card);
  const char* placeholder = o.max_seq ? "{seq}" : "{batch}";
  const bool placed = capture::has_placeholder(o.command, placeholder);
  if ((o.max_batch || o.max_seq) && !placed)
    return make_error(std::string(o.max_seq ? "--max-seq" : "--max-batch") + " re-runs the command with other values: put " +
                      placeholder + " where the value goes, e.g. -- python train.py --batch-size " + placeholder);
  if (!o.value && placed && !(o.max_batch || o.max_seq)) {
    return make_error(std::string("the command holds ") + placeholder + ": give its value with " + (o.max_seq ? "--seq N" : "--batch N") +
                      " (or search it with " + (o.max_seq ? "--max-seq" : "--max-batch") + ")");
  }
  const std::uint64_t start = o.value.value_or(1);
  if (!(o.max_batch || o.max_seq)) {
    auto r = capture_once(o, *card, placed ? capture::substitute(o.command, placeholder, start) : o.command);
    if (!r) return make_error(r.error());
    return answer(o, std::move(*r), *card);
  }
  std::optional<capture::Report> best, last;
  std::string error;
  std::vector<capture::Trial> trials;
  auto run = [&](std::uint64_t value) {
    auto r = capture_once(o, *card, capture::substitute(o.command, placeholder, value));
    if (!r) {
      error = r.error();
      return capture::Trial{std::nullopt, false, r.error()};
    }
    capture::Trial t = trial_of(*r, *card);
    if (t.ran_to_end && t.fits && (!best || !best->max_batch || value > *best->max_batch)) best = *r, best->max_batch = value;
    last = *r;
    return t;
  };
  auto found = capture::search_max(start, kSearchLimit, run, trials);
  if (!last) return make_error(error);
  capture::Report& r = best ? *best : *last;
  r.max_batch = found, r.trials = trials;
  return answer(o, std::move(r), *card);
}

}  // namespace vramdoc::backends
