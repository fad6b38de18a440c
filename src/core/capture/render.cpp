// The capture report as text and as JSON (docs/estimator.md, "Estimating a script").
#include <nlohmann/json.hpp>
#include <sstream>

#include "core/capture/report.hpp"
#include "core/table.hpp"
#include "core/units.hpp"

namespace vramdoc::capture {
namespace {

constexpr std::size_t kHeldLines = 8;

std::string joined(const std::vector<std::string>& words) {
  std::string out;
  for (const auto& w : words) out += (out.empty() ? "" : " ") + w;
  return out;
}

std::string trial_text(const Trial& t) {
  std::string s = t.batch ? std::to_string(*t.batch) : std::string("as given");
  if (!t.ran_to_end) return s + " (" + (t.problem.empty() ? "did not finish" : t.problem) + ")";
  return s + (t.fits ? " fits" : " does not fit") + " (" + format_bytes(t.process_bytes) + ")";
}

}  // namespace

std::string render_text(const Report& r) {
  std::ostringstream out;
  out << "vramdoc estimate: " << joined(r.command) << "\n  captured on the CPU with PyTorch "
      << (r.torch_version.empty() ? "?" : r.torch_version) << ": " << r.steps << " of " << r.steps_asked
      << " optimizer steps, " << r.forwards << " forward passes of the top module\n";
  if (const std::string why = shortfall(r); !why.empty()) out << "  incomplete: " << why << "; the numbers are what it reached\n";
  out << "\n";
  TextTable totals({"", "bytes", "what"}, {TextTable::Align::Left, TextTable::Align::Right, TextTable::Align::Left});
  totals.add_row({"peak allocated", format_bytes(r.replay.peak_allocated_bytes), "torch.cuda.max_memory_allocated(), in " + r.replay.peak_phase});
  totals.add_row({"peak reserved", format_bytes(r.replay.peak_reserved_bytes), "torch.cuda.max_memory_reserved(): the caching allocator's segments"});
  totals.add_row({"process total", format_bytes(r.process_bytes),
                  "nvidia-smi: reserved + " + format_bytes(r.overhead_bytes, 0) + " CUDA context and libraries"});
  out << totals.render() << "\n";
  TextTable phases({"phase", "peak allocated", "peak reserved"}, {TextTable::Align::Left, TextTable::Align::Right, TextTable::Align::Right});
  for (const auto& p : r.replay.phases) phases.add_row({p.name, format_bytes(p.peak_allocated_bytes), format_bytes(p.peak_reserved_bytes)});
  out << phases.render() << "\nheld at the peak, by the line that allocated it:\n";
  for (std::size_t i = 0; i < r.replay.held_at_peak.size() && i < kHeldLines; ++i) {
    const auto& h = r.replay.held_at_peak[i];
    out << "  " << format_bytes(h.bytes) << " in " << h.blocks << (h.blocks == 1 ? " block  " : " blocks  ") << h.where << "\n";
  }
  if (!r.notes.empty()) {
    out << "\nwhat could not be faked (and what was assumed):\n";
    for (const auto& n : r.notes) out << "  " << n.where << ": " << n.text << "\n";
  }
  if (r.usable_bytes) {
    out << "\n" << r.target_name << " (" << format_bytes(*r.usable_bytes) << "): "
        << (fits(r.process_bytes, *r.usable_bytes) ? "fits" : "does not fit") << " (8 % safety margin kept)\n";
  }
  if (!r.trials.empty() && r.trials.front().batch) {
    out << "max batch: " << (r.max_batch ? std::to_string(*r.max_batch) : std::string("none of the captured values fits"))
        << "\n  captured:";
    for (const auto& t : r.trials) out << "  " << trial_text(t) << ";";
    out << "\n";
  }
  return out.str();
}

std::string render_json(const Report& r) {
  using json = nlohmann::ordered_json;
  json phases = json::array(), held = json::array(), notes = json::array(), trials = json::array();
  for (const auto& p : r.replay.phases)
    phases.push_back({{"name", p.name}, {"peak_allocated_bytes", p.peak_allocated_bytes},
                      {"peak_reserved_bytes", p.peak_reserved_bytes}, {"allocated_end_bytes", p.allocated_end_bytes}});
  for (std::size_t i = 0; i < r.replay.held_at_peak.size() && i < 4 * kHeldLines; ++i) {
    const auto& h = r.replay.held_at_peak[i];
    held.push_back({{"where", h.where}, {"bytes", h.bytes}, {"blocks", h.blocks}});
  }
  for (const auto& n : r.notes) notes.push_back({{"kind", n.kind}, {"where", n.where}, {"text", n.text}});
  for (const auto& t : r.trials)
    trials.push_back({{"batch", t.batch ? json(*t.batch) : json(nullptr)}, {"ran_to_end", t.ran_to_end},
                      {"problem", t.problem}, {"process_bytes", t.process_bytes}, {"fits", t.fits}});
  const auto& l = r.replay.libraries;
  json doc = {
      {"command", r.command},
      {"peak_allocated_bytes", r.replay.peak_allocated_bytes},
      {"peak_reserved_bytes", r.replay.peak_reserved_bytes},
      {"process_bytes", r.process_bytes},
      {"overhead_bytes", r.overhead_bytes},
      {"workspace_bytes_at_peak", r.replay.workspace_bytes_at_peak},
      {"peak_phase", r.replay.peak_phase},
      {"phases", phases},
      {"held_at_peak", held},
      {"notes", notes},
      {"capture", {{"torch", r.torch_version}, {"steps", r.steps}, {"steps_asked", r.steps_asked}, {"forwards", r.forwards},
                   {"end", r.end_reason}, {"incomplete", shortfall(r)}, {"timed_out", r.timed_out},
                   {"allocations", r.replay.allocations},
                   {"libraries", {{"cublas", l.cublas}, {"cudnn", l.cudnn}, {"trains", l.trains},
                                  {"fused_attention_16bit", l.fused_attention_16bit}, {"cublas_handles", l.cublas_handles}}}}},
  };
  if (r.usable_bytes)
    doc["fit"] = {{"target", r.target_name}, {"usable_bytes", *r.usable_bytes}, {"fits", fits(r.process_bytes, *r.usable_bytes)},
                  {"max_batch", r.max_batch ? json(*r.max_batch) : json(nullptr)}, {"trials", trials}};
  return doc.dump(2) + "\n";
}

}  // namespace vramdoc::capture
