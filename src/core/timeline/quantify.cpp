// The remedies of a diagnosis quantified with the estimator: each remedy is the job's Options
// with one thing changed, estimated and compared with the card's capacity.
#include "core/timeline/quantify.hpp"

#include <algorithm>
#include <cmath>

#include "core/estimator/fit.hpp"
#include "core/timeline/classify.hpp"
#include "core/units.hpp"

namespace vramdoc::timeline {

namespace {

namespace est = vramdoc::estimator;

struct Variant {
  std::string name, change;
  est::Options options;
};

std::string describe(const est::Options& o) {
  std::string s = std::string(est::to_string(o.mode)) + ", " + std::string(est::to_string(o.precision));
  if (o.mode != est::Mode::Infer) s += ", " + std::string(est::to_string(o.optimizer));
  s += ", batch " + std::to_string(o.batch) + " x seq " + std::to_string(o.seq);
  if (o.grad_checkpointing) s += ", gradient checkpointing";
  if (o.attention != est::Attention::Sdpa) s += ", attention " + std::string(est::to_string(o.attention));
  return s;
}

// The remedies the estimator can model that change something for this job.
std::vector<Variant> variants(const est::Options& job) {
  std::vector<Variant> out;
  const bool trains = job.mode != est::Mode::Infer;
  if (trains && !job.grad_checkpointing) {
    Variant v{"gradient checkpointing", "recompute activations in backward", job};
    v.options.grad_checkpointing = true;
    out.push_back(v);
  }
  if (job.batch > 1) {
    Variant v{"halve the batch", "batch " + std::to_string(job.batch) + " -> " + std::to_string(job.batch / 2), job};
    if (trains) v.change += ", 2 gradient-accumulation steps";
    v.options.batch = job.batch / 2;
    out.push_back(v);
  }
  if (job.precision == est::Precision::Fp32) {
    Variant v{"bf16 mixed precision", "fp32 -> amp-bf16", job};
    v.options.precision = est::Precision::AmpBf16;
    out.push_back(v);
  }
  if (job.mode == est::Mode::Train) {
    Variant v{"LoRA instead of full training", "train adapters of rank " + std::to_string(job.lora_rank) + " only", job};
    v.options.mode = est::Mode::Lora;
    out.push_back(v);
  }
  if (job.mode == est::Mode::Train && (job.optimizer == est::Optimizer::AdamW || job.optimizer == est::Optimizer::Adam)) {
    Variant v{"8-bit optimizer", std::string(est::to_string(job.optimizer)) + " -> adamw-8bit", job};
    v.options.optimizer = est::Optimizer::AdamW8bit;
    out.push_back(v);
  }
  if (job.seq > 1) {
    Variant v{"halve the sequence", "seq " + std::to_string(job.seq) + " -> " + std::to_string(job.seq / 2), job};
    v.options.seq = job.seq / 2;
    out.push_back(v);
  }
  return out;
}

std::optional<bool> fits_in(const est::Estimate& e, const std::optional<std::uint64_t>& capacity) {
  if (!capacity) return std::nullopt;
  return est::fits(e, *capacity);
}

// The remedy that fits while changing the least: the fitting row with the largest estimated peak.
std::string mildest_fit(const std::vector<QuantifiedRemedy>& remedies) {
  const QuantifiedRemedy* best = nullptr;
  for (const auto& r : remedies)
    if (r.fits.value_or(false) && (!best || r.process_bytes > best->process_bytes)) best = &r;
  if (!best) return "";
  return best->name + " (" + best->change + ": estimated " + format_bytes(best->process_bytes) + ")";
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
    for (const auto& v : variants(job)) {
      auto e = est::estimate(model, v.options);
      if (!e) return make_error(v.name + ": " + e.error());
      q.remedies.push_back({v.name, v.change, e->process_bytes,
                            static_cast<std::int64_t>(base->process_bytes) - static_cast<std::int64_t>(e->process_bytes),
                            fits_in(*e, q.capacity_bytes)});
    }
  }
  if (d.verdict == Verdict::Insufficient && q.capacity_bytes) {
    auto best = est::max_batch(model, job, *q.capacity_bytes);
    if (!best) return make_error(best.error());
    q.max_batch = best->value;
    if (best->value > 0) q.max_batch_process_bytes = best->process_bytes;
    // The batch that fits as a remedy row, alone and with checkpointing (what a user would try next).
    for (const bool checkpoint : {false, true}) {
      if (checkpoint && (job.mode == est::Mode::Infer || job.grad_checkpointing)) continue;
      est::Options o = job;
      o.grad_checkpointing = o.grad_checkpointing || checkpoint;
      auto r = checkpoint ? est::max_batch(model, o, *q.capacity_bytes) : best;
      if (!r) return make_error(r.error());
      if (r->value == 0 || r->value >= job.batch) continue;
      std::string change = "batch " + std::to_string(job.batch) + " -> " + std::to_string(r->value);
      if (job.mode != est::Mode::Infer) change += ", " + std::to_string((job.batch + r->value - 1) / r->value) + " gradient-accumulation steps";
      q.remedies.push_back({checkpoint ? "checkpointing + largest batch" : "largest batch that fits", change, r->process_bytes,
                            static_cast<std::int64_t>(base->process_bytes) - static_cast<std::int64_t>(r->process_bytes), true});
    }
  }
  q.fitting_remedy = mildest_fit(q.remedies);
  const auto& growth = d.evidence.growth_bytes_per_step;
  if (d.verdict == Verdict::Leak && q.capacity_bytes && growth && *growth > 0) {
    const double room = double(*q.capacity_bytes) - double(q.estimated_bytes);
    q.leak_steps_left = std::max(0.0, std::floor(room / *growth));
  }
  return q;
}

}  // namespace vramdoc::timeline
