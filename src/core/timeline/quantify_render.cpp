// The quantified remedies as text, JSON and an HTML fragment. Unknown fits are "n/a" / null.
#include <cstdlib>

#include "core/table.hpp"
#include "core/terminal_safe.hpp"
#include "core/text.hpp"
#include "core/timeline/quantify.hpp"
#include "core/units.hpp"

namespace vramdoc::timeline {

namespace {

using nlohmann::json;

std::string gib(std::uint64_t bytes) { return format_gib_unit(bytes); }

std::string signed_gib(std::int64_t bytes) {
  return (bytes < 0 ? "-" : "") + format_gib(static_cast<std::uint64_t>(std::llabs(bytes)));
}

std::string yes_no(const std::optional<bool>& v) { return v ? (*v ? "yes" : "no") : "n/a"; }

json opt(const auto& v) { return v ? json(*v) : json(nullptr); }

// "estimated X GiB, measured Y GiB on a Z GiB card (timeline): does not fit".
std::string comparison(const Quantified& q) {
  std::string s = "estimated " + gib(q.estimated_bytes) + ", measured " + (q.measured_bytes ? gib(*q.measured_bytes) + " (peak)" : "n/a (nothing sampled)");
  if (q.capacity_bytes) s += ", card " + gib(*q.capacity_bytes) + " (" + q.capacity_source + ")";
  else s += ", card capacity unknown";
  if (q.fits) s += *q.fits ? ": fits" : ": does not fit";
  return s;
}

std::vector<std::string> notes(const Quantified& q) {
  std::vector<std::string> out;
  if (q.max_batch) {
    out.push_back(*q.max_batch == 0 ? "no batch fits, not even 1: change the model or the settings above"
                                    : "largest batch that fits: " + std::to_string(*q.max_batch) + " (estimated " +
                                          gib(q.max_batch_process_bytes.value_or(0)) + ")");
  }
  if (q.leak_steps_left) {
    out.push_back("the leak leaves about " + fixed(*q.leak_steps_left, 0) + " steps from the estimated peak to the capacity");
  }
  return out;
}

}  // namespace

std::string render_quantified_text(const Quantified& q) {
  std::string out = "    quantified with the estimator (" + terminal_safe(q.model) + "; " + terminal_safe(q.job) + "):\n";
  out += "    " + comparison(q) + "\n";
  if (!q.remedies.empty()) {
    TextTable t({"remedy", "change", "process GiB", "saves GiB", "fits"},
                {TextTable::Align::Left, TextTable::Align::Left, TextTable::Align::Right, TextTable::Align::Right,
                 TextTable::Align::Left});
    for (const auto& r : q.remedies)
      t.add_row({r.name, r.change, format_gib(r.process_bytes), signed_gib(r.saving_bytes), yes_no(r.fits)});
    out += t.render("    ");
  }
  for (const auto& n : notes(q)) out += "    " + n + "\n";
  return out;
}

json quantified_json(const Quantified& q) {
  return {{"model", q.model}, {"job", q.job}, {"estimated_bytes", q.estimated_bytes}, {"measured_bytes", opt(q.measured_bytes)},
          {"capacity_bytes", opt(q.capacity_bytes)}, {"capacity_source", q.capacity_source}, {"fits", opt(q.fits)},
          {"max_batch", opt(q.max_batch)}, {"max_batch_process_bytes", opt(q.max_batch_process_bytes)},
          {"leak_steps_left", opt(q.leak_steps_left)}};
}

json remedies_quantified_json(const Quantified& q) {
  json out = json::array();
  for (const auto& r : q.remedies)
    out.push_back({{"name", r.name}, {"change", r.change}, {"process_bytes", r.process_bytes},
                   {"saving_bytes", r.saving_bytes}, {"fits", opt(r.fits)}});
  return out;
}

std::string render_quantified_html(const Quantified& q) {
  std::string h = "<h2>Quantified with the estimator</h2><p id='quantified'>" + xml_escape(q.model + "; " + q.job) +
                  "<br>" + xml_escape(comparison(q)) + "</p>\n";
  if (!q.remedies.empty()) {
    h += "<table id='remedies-quantified'><tr><td><b>remedy</b></td><td><b>change</b></td><td><b>process GiB</b></td>"
         "<td><b>saves GiB</b></td><td><b>fits</b></td></tr>";
    for (const auto& r : q.remedies)
      h += "<tr><td>" + xml_escape(r.name) + "</td><td>" + xml_escape(r.change) + "</td><td>" + format_gib(r.process_bytes) +
           "</td><td>" + signed_gib(r.saving_bytes) + "</td><td>" + yes_no(r.fits) + "</td></tr>";
    h += "</table>\n";
  }
  for (const auto& n : notes(q)) h += "<p>" + xml_escape(n) + "</p>\n";
  return h;
}

}  // namespace vramdoc::timeline
