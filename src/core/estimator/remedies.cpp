#include "core/estimator/remedies.hpp"

#include <algorithm>

#include "core/estimator/cards.hpp"
#include "core/estimator/fit.hpp"
#include "core/units.hpp"

namespace vramdoc::estimator {

namespace {

// A remedy that saves less than this share of the job's estimate (and less than kNegligibleBytes)
// changes nothing a user would notice: it is not listed.
constexpr std::uint64_t kNegligiblePercent = 1;
constexpr std::uint64_t kNegligibleBytes = 64 * MiB;

bool trains(const Options& o) { return o.mode != Mode::Infer; }

// The largest divisor of `n` that is at most `limit` (1 when none larger is).
std::uint64_t largest_divisor_at_most(std::uint64_t n, std::uint64_t limit) {
  for (std::uint64_t d = std::min(n, limit); d > 1; --d)
    if (n % d == 0) return d;
  return 1;
}

// The candidates: each the job with one thing changed, in the order of what it costs the user.
std::vector<Remedy> candidates(const ModelConfig& model, const Options& job, const RemedyRequest& request) {
  std::vector<Remedy> out;
  auto add = [&](int cost, std::string name, std::string option, auto change) {
    Remedy r;
    r.name = std::move(name), r.option = std::move(option), r.cost = cost, r.options = job;
    change(r.options);
    out.push_back(std::move(r));
  };
  // 1. Keep the effective batch: a smaller micro-batch, as many accumulation steps (training), or a
  // smaller batch run in more passes (inference). Not the question with --max-batch.
  if (job.batch > 1 && !request.max_batch) {
    std::uint64_t limit = job.batch / 2;  // with a target: the largest batch that fits there
    if (request.usable_bytes)
      if (auto m = max_batch(model, job, *request.usable_bytes); m && m->value > 0) limit = std::min(limit, m->value);
    const std::uint64_t micro = largest_divisor_at_most(job.batch, limit);
    const std::uint64_t steps = job.batch / micro;
    std::string option = "--batch " + std::to_string(micro);
    option += trains(job) ? " with " + std::to_string(steps) + " gradient-accumulation steps" : " in " + std::to_string(steps) + " passes";
    add(1, trains(job) ? "smaller micro-batch, same effective batch" : "smaller batch", option,
        [&](Options& o) { o.batch = micro; });
    out.back().accumulation_steps = trains(job) ? steps : 1;
  }
  if (trains(job) && !job.grad_checkpointing)
    add(2, "gradient checkpointing", "--grad-checkpointing", [](Options& o) { o.grad_checkpointing = true; });
  if (job.mode == Mode::Train) add(3, "LoRA adapters", "--mode lora", [](Options& o) { o.mode = Mode::Lora; });
  if ((job.mode == Mode::Train || job.mode == Mode::Lora) && model.quant.method == QuantMethod::None)
    add(3, "QLoRA (4-bit base)", "--mode qlora", [](Options& o) { o.mode = Mode::Qlora; });
  if (job.mode == Mode::Train && (job.optimizer == Optimizer::AdamW || job.optimizer == Optimizer::Adam))
    add(4, "8-bit optimizer", "--optimizer adamw-8bit", [](Options& o) { o.optimizer = Optimizer::AdamW8bit; });
  if (job.precision == Precision::Fp32)
    add(4, trains(job) ? "bf16 mixed precision" : "bf16 weights", trains(job) ? "--precision amp-bf16" : "--precision bf16",
        [&](Options& o) { o.precision = trains(job) ? Precision::AmpBf16 : Precision::Bf16; });
  if (job.mode == Mode::Infer && job.quant == Quant::None && model.quant.method == QuantMethod::None) {
    add(5, "fp8 weights", "--quant fp8", [](Options& o) { o.quant = Quant::Fp8; });
    add(5, "int4 weights", "--quant int4", [](Options& o) { o.quant = Quant::Int4; });
  }
  if (job.mode == Mode::Infer && job.new_tokens > 0 && job.kv_bytes_per_element.value_or(2) > 1)
    add(5, "fp8 KV cache", "--kv-dtype fp8", [](Options& o) { o.kv_bytes_per_element = 1; });
  if (job.seq > 1) {
    const std::uint64_t seq = job.seq / 2;
    add(6, "shorter sequence", "--seq " + std::to_string(seq), [&](Options& o) { o.seq = seq; });
  }
  if (trains(job) && job.gpus == 1 && job.tensor_parallel == 1) {
    for (const std::uint64_t n : {2, 4, 8})
      add(7, "sharded over " + std::to_string(n) + " GPUs (ZeRO-3 / FSDP)", "--gpus " + std::to_string(n) + " --zero 3",
          [&](Options& o) { o.gpus = n, o.zero_stage = 3; });
  }
  return out;
}

// Fills the remedy's estimate and, with a target, its fit and the batch it allows.
Result<bool> evaluate(const ModelConfig& model, const Options& job, const Estimate& base, const RemedyRequest& request, Remedy& r) {
  auto e = estimate(model, r.options);
  if (!e) return false;  // the estimator cannot model this change for this model: it is not offered
  r.process_bytes = e->process_bytes;
  r.saving_bytes = static_cast<std::int64_t>(base.process_bytes) - static_cast<std::int64_t>(e->process_bytes);
  if (!request.usable_bytes) return true;
  const std::uint64_t usable = *request.usable_bytes;
  r.fits = fits(*e, usable);
  if (request.max_batch) {
    auto m = max_batch(model, r.options, usable);
    if (!m) return make_error(m.error());
    r.batch = m->value, r.batch_process_bytes = m->process_bytes;
  } else if (!*r.fits && trains(job) && r.options.batch > 1) {
    // Does it fit with a smaller micro-batch that keeps the effective batch?
    auto m = max_batch(model, r.options, usable);
    if (!m) return make_error(m.error());
    const std::uint64_t micro = largest_divisor_at_most(job.batch, m->value);
    if (m->value > 0 && micro < r.options.batch) {
      Options o = r.options;
      o.batch = micro;
      auto at = estimate(model, o);
      if (at && fits(*at, usable)) {
        r.batch = micro, r.batch_process_bytes = at->process_bytes;
        r.accumulation_steps = job.batch / micro;
      }
    }
  }
  return true;
}

bool worth_listing(const Remedy& r, const Estimate& base, const std::optional<std::uint64_t>& base_batch) {
  if (base_batch) return r.batch && *r.batch > *base_batch;  // --max-batch: it must allow a larger batch
  const std::uint64_t floor = std::max(kNegligibleBytes, base.process_bytes / 100 * kNegligiblePercent);
  return r.saving_bytes > 0 && static_cast<std::uint64_t>(r.saving_bytes) >= floor;
}

// Of the sharded remedies (2, 4, 8 GPUs) keep the fewest GPUs that fit; with no fit, or no target, the most.
void keep_one_sharding(std::vector<Remedy>& list) {
  auto sharded = [](const Remedy& r) { return r.options.zero_stage == 3 && r.options.gpus > 1; };
  const Remedy* keep = nullptr;
  for (const auto& r : list)
    if (sharded(r) && r.fits.value_or(false) && (!r.batch || *r.batch > 0)) { keep = &r; break; }
  if (!keep)
    for (const auto& r : list)
      if (sharded(r)) keep = &r;
  if (!keep) return;
  const Remedy chosen = *keep;
  std::erase_if(list, sharded);
  auto at = std::find_if(list.begin(), list.end(), [&](const Remedy& r) { return r.cost > chosen.cost; });
  list.insert(at, chosen);
}

// The smallest card of the table, bigger than the target, that fits the job as it is (with
// --max-batch: that fits batch 1).
Result<std::optional<Remedy>> bigger_card(const ModelConfig& model, const Options& job, const RemedyRequest& request) {
  const GpuCard* best = nullptr;
  Options one = job;
  if (request.max_batch) one.batch = 1;
  auto e = estimate(model, one);
  if (!e) return make_error(e.error());
  for (const auto& c : gpu_cards()) {
    if (c.usable_bytes <= *request.usable_bytes || !fits(*e, c.usable_bytes)) continue;
    if (!best || c.usable_bytes < best->usable_bytes || (c.usable_bytes == best->usable_bytes && c.vendor == Vendor::Nvidia)) best = &c;
  }
  if (!best) return std::optional<Remedy>{};
  Remedy r;
  r.name = "a bigger card", r.option = "--gpu '" + std::string(best->name) + "'", r.cost = 8, r.options = job;
  r.process_bytes = e->process_bytes;
  r.fits = true;
  r.card = best->name, r.card_bytes = best->usable_bytes;
  if (request.max_batch) {
    auto m = max_batch(model, job, best->usable_bytes);
    if (!m) return make_error(m.error());
    r.batch = m->value, r.batch_process_bytes = m->process_bytes;
  }
  return std::optional<Remedy>{r};
}

}  // namespace

Result<std::vector<Remedy>> remedies(const ModelConfig& model, const Options& job, const RemedyRequest& request) {
  auto base = estimate(model, job);
  if (!base) return make_error(base.error());
  std::optional<std::uint64_t> base_batch;
  if (request.usable_bytes) {
    if (request.max_batch) {
      auto m = max_batch(model, job, *request.usable_bytes);
      if (!m) return make_error(m.error());
      base_batch = m->value;
    } else if (fits(*base, *request.usable_bytes) && !request.even_if_fits) {
      return std::vector<Remedy>{};  // it fits: nothing to remedy
    }
  }
  std::vector<Remedy> out;
  for (auto& r : candidates(model, job, request)) {
    auto ok = evaluate(model, job, *base, request, r);
    if (!ok) return make_error(r.name + ": " + ok.error());
    if (*ok && worth_listing(r, *base, base_batch)) out.push_back(std::move(r));
  }
  keep_one_sharding(out);
  // A bigger card only for a job that does not fit this one (with --max-batch: not even batch 1).
  const bool base_fits = request.usable_bytes && (request.max_batch ? base_batch.value_or(0) > 0 : fits(*base, *request.usable_bytes));
  if (request.usable_bytes && !base_fits) {
    auto card = bigger_card(model, job, request);
    if (!card) return make_error(card.error());
    if (*card && (!base_batch || (*card)->batch.value_or(0) > *base_batch)) out.push_back(std::move(**card));
  }
  // Cheapest first; among equals, what fits before what does not, then the larger saving.
  std::stable_sort(out.begin(), out.end(), [](const Remedy& a, const Remedy& b) {
    const bool fa = a.fits.value_or(false) || a.batch.value_or(0) > 0, fb = b.fits.value_or(false) || b.batch.value_or(0) > 0;
    if (a.cost != b.cost) return a.cost < b.cost;
    if (fa != fb) return fa;
    return a.saving_bytes > b.saving_bytes;
  });
  return out;
}

std::string remedy_result(const Remedy& r, const RemedyRequest& request) {
  auto of = [&](std::uint64_t bytes) {
    const std::uint64_t usable = r.card.empty() ? request.usable_bytes.value_or(0) : r.card_bytes;
    return format_gib(bytes) + " of " + format_gib_unit(usable);
  };
  if (!request.usable_bytes)
    return format_gib_unit(r.process_bytes) + " (saves " + format_gib_unit(static_cast<std::uint64_t>(r.saving_bytes)) + ")";
  if (request.max_batch) {
    if (!r.batch || *r.batch == 0) return "none, not even batch 1";
    return "batch " + std::to_string(*r.batch) + " (" + of(r.batch_process_bytes) + ")";
  }
  if (r.fits.value_or(false)) return "fits, " + of(r.process_bytes);
  if (r.batch)
    return "batch " + std::to_string(*r.batch) + " with " + std::to_string(r.accumulation_steps) +
           " gradient-accumulation steps fits, " + of(r.batch_process_bytes);
  return "does not fit, " + of(r.process_bytes);
}

}  // namespace vramdoc::estimator
