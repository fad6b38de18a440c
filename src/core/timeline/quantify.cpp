// The remedies of a diagnosis quantified with the estimator: each remedy is the job's Options
// with one thing changed, estimated and compared with the card's capacity.
#include "core/timeline/quantify.hpp"

#include <algorithm>
#include <cmath>

#include "core/estimator/fit.hpp"
#include "core/estimator/remedies.hpp"
#include "core/timeline/classify.hpp"
#include "core/units.hpp"

namespace vramdoc::timeline {

namespace {

namespace est = vramdoc::estimator;

std::string describe(const est::Options& o) {
  std::string s = std::string(est::to_string(o.mode)) + ", " + std::string(est::to_string(o.precision));
  if (o.mode != est::Mode::Infer) s += ", " + std::string(est::to_string(o.optimizer));
  s += ", batch " + std::to_string(o.batch) + " x seq " + std::to_string(o.seq);
  if (o.grad_checkpointing) s += ", gradient checkpointing";
  if (o.attention != est::Attention::Sdpa) s += ", attention " + std::string(est::to_string(o.attention));
  return s;
}

std::optional<bool> fits_in(const est::Estimate& e, const std::optional<std::uint64_t>& capacity) {
  if (!capacity) return std::nullopt;
  return est::fits(e, *capacity);
}

// The cheapest remedy that fits (the list is ranked by what a remedy costs the user), "" when none does.
std::string cheapest_fit(const std::vector<QuantifiedRemedy>& remedies) {
  for (const auto& r : remedies)
    if (r.fits.value_or(false)) return r.name + " (" + r.change + ": estimated " + format_bytes(r.process_bytes) + ")";
  return "";
}

// A remedy of the estimator's list as a row: at the micro-batch it fits with, when it fits only there.
QuantifiedRemedy row(const est::Remedy& r, std::uint64_t base_bytes) {
  QuantifiedRemedy q{r.name, r.option, r.process_bytes, r.saving_bytes, r.fits};
  if (!r.card.empty()) q.change += " (" + format_gib_unit(r.card_bytes) + ")";
  if (!r.fits.value_or(true) && r.batch) {
    q.change += ", batch " + std::to_string(*r.batch) + " with " + std::to_string(r.accumulation_steps) + " gradient-accumulation steps";
    q.process_bytes = r.batch_process_bytes;
    q.saving_bytes = static_cast<std::int64_t>(base_bytes) - static_cast<std::int64_t>(r.batch_process_bytes);
    q.fits = true;
  }
  return q;
}

}  // namespace

void apply_quantified(Diagnosis& d) {
  if (!d.quantified || d.verdict != Verdict::Insufficient) return;
  const auto& q = *d.quantified;
  auto& need = d.evidence.need;
  if (!need) need = Need{};
  if (q.estimated_bytes > need->bytes) {
    need->bytes = q.estimated_bytes;
    need->at_least = false;
    need->basis = "the estimator's peak for " + q.job + "; measured before the failure: " + format_bytes(d.evidence.peak_bytes);
    set_shrink(*need, q.capacity_bytes);
  }
  d.summary = summary_for(d);
  // The articles' list of remedies gives way to the ones estimated for this job (issue 32).
  if (!q.remedies.empty())
    d.remedies = {"Every remedy under \"quantified with the estimator\" was estimated for this job on this card, cheapest first; " +
                  (q.fitting_remedy.empty() ? std::string("none fits alone: combine them, or use a bigger card")
                                            : "the cheapest that fits: " + q.fitting_remedy) + "."};
}

std::optional<std::uint64_t> capacity_for(const Timeline& tl, const Diagnosis& d, std::string& source) {
  if (tl.total_bytes) return source = "timeline", tl.total_bytes;
  if (d.evidence.capacity_bytes) return source = "recorded capacity", d.evidence.capacity_bytes;
  if (d.evidence.oom && d.evidence.oom->capacity_bytes) return source = "out-of-memory message", d.evidence.oom->capacity_bytes;
  if (tl.device) {
    std::string name = *tl.device;
    if (name.starts_with("NVIDIA ")) name = name.substr(7);
    if (auto card = est::find_gpu(name)) return source = "card table: " + std::string(card->name), card->usable_bytes;
  }
  source = "unknown";
  return std::nullopt;
}

Result<Quantified> quantify(const Timeline& tl, const Diagnosis& d, const est::ModelConfig& model, const est::Options& job) {
  Quantified q;
  q.model = model.name;
  q.job = describe(job);
  if (d.evidence.samples > 0) q.measured_bytes = d.evidence.peak_bytes;
  q.capacity_bytes = capacity_for(tl, d, q.capacity_source);
  auto base = est::estimate(model, job);
  if (!base) return make_error(base.error());
  q.estimated_bytes = base->process_bytes;
  q.fits = fits_in(*base, q.capacity_bytes);
  if (d.verdict != Verdict::Leak) {
    est::RemedyRequest request{q.capacity_bytes, false, true};
    auto list = est::remedies(model, job, request);
    if (!list) return make_error(list.error());
    for (const auto& r : *list) q.remedies.push_back(row(r, base->process_bytes));
  }
  if (d.verdict == Verdict::Insufficient && q.capacity_bytes) {
    auto best = est::max_batch(model, job, *q.capacity_bytes);
    if (!best) return make_error(best.error());
    q.max_batch = best->value;
    if (best->value > 0) q.max_batch_process_bytes = best->process_bytes;
  }
  q.fitting_remedy = cheapest_fit(q.remedies);
  const auto& growth = d.evidence.growth_bytes_per_step;
  if (d.verdict == Verdict::Leak && q.capacity_bytes && growth && *growth > 0) {
    const double room = double(*q.capacity_bytes) - double(q.estimated_bytes);
    q.leak_steps_left = std::max(0.0, std::floor(room / *growth));
  }
  return q;
}

}  // namespace vramdoc::timeline
