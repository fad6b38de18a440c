#include "cli/estimate_script.hpp"

#include <cstdio>
#include <fstream>
#include <optional>

#include "backends/capture_job.hpp"
#include "backends/nvml.hpp"
#include "cli/command.hpp"
#include "cli/model_input.hpp"
#include "cli/style.hpp"
#include "core/capture/report.hpp"
#include "core/capture/search.hpp"
#include "core/estimator/cards.hpp"
#include "core/input_file.hpp"
#include "core/units.hpp"
#include "vramdoc/capture_module_text.hpp"

namespace vramdoc::cli {
namespace {

constexpr const char* kName = "estimate";
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
  } else if (auto nvml = backends::Nvml::open(); nvml && (*nvml)->device_count() > 0) {
    auto memory = (*nvml)->memory(0);
    auto info = (*nvml)->static_info(0);
    if (memory && memory->total_bytes) {
      c.name = info && info->name ? *info->name : "local GPU 0";
      c.total_bytes = *memory->total_bytes, c.cc = capture::compute_capability(c.name), c.verdict = true;
    }
  }
  if (!o.gpu_memory.empty()) {
    auto bytes = parse_memory_size(o.gpu_memory);
    if (!bytes) return make_error("--gpu-memory: " + bytes.error());
    c.total_bytes = *bytes, c.verdict = true;
    if (o.gpu.empty()) c.name = format_bytes(*bytes) + " card";
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
  backends::CaptureJob job;
  job.argv = argv, job.module_text = kCaptureModuleText, job.steps = o.steps;
  job.timeout = std::chrono::seconds(o.timeout_s), job.show_output = o.show_output;
  job.gpu_name = c.name, job.gpu_bytes = c.total_bytes, job.cc_major = c.cc.major, job.cc_minor = c.cc.minor;
  auto out = backends::run_capture(job);
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
  if (!capture::shortfall(r).empty() && !out->output_tail.empty() && !o.json)
    std::fprintf(stderr, "vramdoc estimate: the job's last output:\n%s\n", out->output_tail.c_str());
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

int print_report(const ScriptOptions& o, capture::Report& r, const Card& c) {
  if (c.verdict) r.target_name = c.name, r.usable_bytes = c.total_bytes;
  if (o.json) print(json_document("vramdoc.estimate-script/1", capture::render_json(r)));
  else print(highlight(capture::render_text(r), style_for(stdout)));
  if (r.trials.empty() && !capture::shortfall(r).empty()) return kUsage;  // the job failed or timed out: a partial answer
  if (!c.verdict) return kOk;
  if (o.max_batch || o.max_seq) return r.max_batch ? kOk : kFailure;
  return capture::fits(r.process_bytes, c.total_bytes) ? kOk : kFailure;
}

int from_trace(const ScriptOptions& o, const Card& c) {
  auto text = read_input_file(o.from_trace, capture::kMaxTraceBytes);
  if (!text) return fail(kName, text.error());
  auto trace = capture::parse_trace(*text);
  if (!trace) return fail(kName, o.from_trace + ": " + trace.error());
  capture::Report r = capture::build_report(*trace, replay_options(o, c));
  r.command = {o.from_trace}, r.steps_asked = o.steps;
  return print_report(o, r, c);
}

}  // namespace

int estimate_script(const ScriptOptions& o) {
  auto card = choose_card(o);
  if (!card) return fail(kName, card.error());
  if (!o.from_trace.empty()) return from_trace(o, *card);
  const char* placeholder = o.max_seq ? "{seq}" : "{batch}";
  const std::string& given = o.max_seq ? o.seq : o.batch;
  const bool placed = capture::has_placeholder(o.command, placeholder);
  if ((o.max_batch || o.max_seq) && !placed)
    return fail(kName, std::string(o.max_seq ? "--max-seq" : "--max-batch") + " re-runs the command with other values: put " +
                           placeholder + " where the value goes, e.g. -- python train.py --batch-size " + placeholder);
  std::uint64_t start = 1;
  if (!given.empty()) {
    auto v = positive_integer(given, o.max_seq ? "--seq" : "--batch");
    if (!v) return fail(kName, v.error());
    start = *v;
  } else if (placed && !(o.max_batch || o.max_seq)) {
    return fail(kName, std::string("the command holds ") + placeholder + ": give its value with " + (o.max_seq ? "--seq N" : "--batch N") +
                           " (or search it with " + (o.max_seq ? "--max-seq" : "--max-batch") + ")");
  }
  if (!(o.max_batch || o.max_seq)) {
    auto r = capture_once(o, *card, placed ? capture::substitute(o.command, placeholder, start) : o.command);
    if (!r) return fail(kName, r.error());
    return print_report(o, *r, *card);
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
  auto answer = capture::search_max(start, kSearchLimit, run, trials);
  if (!last) return fail(kName, error);
  capture::Report& r = best ? *best : *last;
  r.max_batch = answer, r.trials = trials;
  return print_report(o, r, *card);
}

}  // namespace vramdoc::cli
