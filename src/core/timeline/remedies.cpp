// What to do, by verdict: the remedies the articles give (shared/seeds), and the one-line summary.
#include <algorithm>
#include <cmath>
#include <cstdio>

#include "core/timeline/classify.hpp"
#include "core/units.hpp"

namespace vramdoc::timeline {

namespace {

std::string bytes(double b) { return format_bytes(static_cast<std::uint64_t>(std::max(0.0, b))); }

// A shrink factor below this says nothing a user can act on.
constexpr double kWorthSaying = 1.05;

std::string factor(double f) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f", f);
  return buf;
}

// "leak: memory grows step after step, about 8 MiB per step; ..." (or at a fixed interval, or as
// the tracer saw it).
std::string leak_summary(const Diagnosis& d) {
  const auto& ev = d.evidence;
  std::string s = "leak: memory grows step after step";
  if (d.rule == "regular rises" && ev.spacing && ev.spacing->period)
    s = "leak: memory grows in regular rises, one every " + factor(*ev.spacing->period) + (ev.steps ? " steps" : " s");
  if (d.rule == "trace shows a leak" && ev.trace)
    s = "leak: the " + ev.trace->source + " saw " + bytes(double(std::max(ev.trace->alive_at_exit_bytes, ev.trace->growing_bytes))) +
        (ev.trace->alive_at_exit_count ? " never freed" : " kept until the peak");
  if (d.rule == "outside PyTorch's allocator") s = "leak outside PyTorch's allocator: the driver's bytes beyond PyTorch's reserved grow step after step";
  if (d.rule == "evaluation accumulates" && ev.evaluation)
    s = "leak: the evaluation accumulates, from " + bytes(double(ev.evaluation->start_bytes)) + " to " + bytes(double(ev.evaluation->peak_bytes)) +
        " within it, while training's steps keep nothing";
  else if (ev.growth_bytes_per_step) s += ", about " + bytes(*ev.growth_bytes_per_step) + " per step";
  else if (ev.growth_bytes_per_second) s += ", about " + bytes(*ev.growth_bytes_per_second) + " per second";
  if (ev.oom_seconds) s += "; it ran out at " + std::to_string(*ev.oom_seconds).substr(0, 6) + " s";
  else if (ev.projected_oom_seconds) s += "; at this rate it runs out at about " + std::to_string(std::lround(*ev.projected_oom_seconds)) + " s";
  return s + ". Fix the code.";
}

// "insufficient: it needs at least 140.2 GiB on a 139.8 GiB card; ..." and what gets it under.
std::string insufficient_summary(const Diagnosis& d) {
  const auto& ev = d.evidence;
  std::string s = "insufficient: the job is too big for this card, not leaking";
  const bool card_bound = ev.need && ev.need->at_least && ev.capacity_bytes && double(ev.need->bytes) <= 1.02 * double(*ev.capacity_bytes);
  // Under set_per_process_memory_fraction the capacity is the limit the message gives, not the card.
  const bool limited = ev.oom && ev.oom->allowed_bytes && ev.capacity_bytes && *ev.capacity_bytes == *ev.oom->allowed_bytes;
  const std::string card = limited ? " allowed to the process (set_per_process_memory_fraction)" : " card";
  if (limited) s = "insufficient: the job is too big for its memory limit, not leaking";
  if (card_bound) {  // it failed before its step was done: only "more than the card" is known
    s += "; it needs more than the " + bytes(double(*ev.capacity_bytes)) + (limited ? card : " card offers") + ": it failed before its step was done";
    if (ev.oom && ev.oom->in_use_bytes && ev.oom->requested_bytes)
      s += ", holding " + bytes(double(*ev.oom->in_use_bytes)) + " and asking " + bytes(double(*ev.oom->requested_bytes)) + " more";
    if (!d.quantified) s += " (--config estimates the whole step)";
  } else if (ev.need) {
    s += "; it needs " + std::string(ev.need->at_least ? "at least " : "about ") + bytes(double(ev.need->bytes));
    if (ev.capacity_bytes) s += (limited ? " with " : " on a ") + bytes(double(*ev.capacity_bytes)) + card;
    s += " (" + ev.need->basis + ")";
    if (limited && ev.missing_bytes) s += "; its last request lacked " + bytes(double(*ev.missing_bytes));
  } else if (ev.missing_bytes) {
    s += "; its last request lacked " + bytes(double(*ev.missing_bytes));
  }
  if (d.quantified && !d.quantified->fitting_remedy.empty()) s += ". Under the card: " + d.quantified->fitting_remedy;
  else if (d.quantified && d.quantified->max_batch && *d.quantified->max_batch > 0)
    s += ". Under the card: a batch of " + std::to_string(*d.quantified->max_batch) + " (with gradient accumulation)";
  else if (ev.need && ev.need->shrink && *ev.need->shrink >= kWorthSaying && !card_bound)
    s += ". To fit, what a step adds (" + bytes(double(ev.need->bytes - *ev.need->fixed_bytes)) + ") must shrink " +
         (ev.need->at_least ? "at least " : "") + factor(*ev.need->shrink) + "x: a batch " + factor(*ev.need->shrink) +
         "x smaller with as many gradient-accumulation steps, gradient checkpointing, or both (--config names the one that fits)";
  else if (ev.need && ev.need->fixed_bytes && ev.capacity_bytes && 1.08 * double(*ev.need->fixed_bytes) >= double(*ev.capacity_bytes))
    s += ". What it holds before its steps (" + bytes(double(*ev.need->fixed_bytes)) + ") already fills the card: LoRA / QLoRA, an 8-bit optimizer, sharding or a bigger card";
  return s + ". Shrink the job or use a bigger card.";
}

}  // namespace

std::string summary_for(const Diagnosis& d) {
  const auto& ev = d.evidence;
  switch (d.verdict) {
    case Verdict::Leak: return leak_summary(d);
    case Verdict::Insufficient: return insufficient_summary(d);
    case Verdict::Fragmentation:
      return "fragmentation: enough memory was reserved but not in one piece; the allocator's cache is fragmented.";
    case Verdict::Plateau:
      if (ev.spacing && ev.spacing->regular)
        return "plateau: the allocator's cache grew in regular rises, but nothing is kept from step to step; not a leak.";
      return "plateau: the allocator's cache grew for larger shapes and levels off; not a leak.";
    case Verdict::Stable:
      // Only the driver's number was measured: a leak inside the allocator's cache cannot show (issue 32).
      if (ev.trend_series.starts_with("the driver's"))
        return "stable: the driver's number rises during warm-up, then stays flat; no leak beyond the allocator's cache "
               "(what the framework allocated was not measured: a smaller leak would not show).";
      return "stable: memory rises during warm-up, then stays flat; no leak.";
    case Verdict::Inconclusive: break;
  }
  return "inconclusive: " + (d.to_settle.empty() ? std::string("not enough to judge") : d.to_settle) + ".";
}

std::vector<std::string> remedies_for(const Diagnosis& d) {
  switch (d.verdict) {
    case Verdict::Leak:
      if (d.rule == "trace shows a leak" && d.evidence.trace && !d.evidence.trace->segments_only)
        return {"Free what the call sites above allocate (cudaFree, cuMemFree, cudaFreeAsync) once it is no longer needed, on every path "
                "(errors included); compute-sanitizer --leak-check full lists the same allocations.",
                "Own device buffers with an RAII wrapper (a unique_ptr with a cudaFree deleter) so that none outlives its owner."};
      if (d.rule == "outside PyTorch's allocator")
        return {"Free what the CUDA extension or library allocates outside PyTorch (cudaFree, cupy's memory pool free_all_blocks(), the custom op's "
                "workspace) once it is no longer needed; run with --trace to see its call site.",
                "Let the extension allocate through PyTorch (torch.empty on the device, or c10::cuda::CUDACachingAllocator) so its memory shows "
                "in torch.cuda.memory_allocated() and is reused."};
      if (d.rule == "evaluation accumulates")
        return {"Hugging Face Trainer: set eval_accumulation_steps (e.g. 8) so predictions are moved to the CPU every few batches, or "
                "prediction_loss_only=True when the metrics need no logits; preprocess_logits_for_metrics can keep only the argmax.",
                "In your own evaluation loop keep .detach().cpu() copies (or metrics updated per batch), not the outputs on the GPU, and run it "
                "under torch.no_grad()."};
      if (d.rule == "regular rises")
        return {"Something is kept at a fixed interval: run evaluation under torch.no_grad() (or torch.inference_mode()) and keep .item() or "
                ".detach().cpu() copies of its outputs, not the outputs (each one holds its whole graph).",
                "Look for what runs every few steps (evaluation, logging, checkpointing) and appends to a list, dict or cache."};
      return {"Keep numbers, not tensors, across steps: total_loss += loss.item() (not loss); store .detach().cpu() copies of anything you log or collect.",
              "A missing optimizer.zero_grad() is not the cause: gradients add into the same .grad tensors, so memory stays flat "
              "(the updates are wrong instead). Look for loss.backward(retain_graph=True) or a graph kept alive from step to step.",
              "Run evaluation under torch.no_grad() (or torch.inference_mode()) so no graph is kept.",
              "Look for lists, dicts or caches that grow every step (history of logits, outputs kept for metrics), and for CUDA extensions that never free.",
              "In multi-process jobs check that finished workers' memory is released."};
    case Verdict::Insufficient:
      return {"Lower the batch size (keep the effective batch with gradient accumulation) or the sequence length.",
              "Gradient checkpointing: recompute activations in backward instead of storing them.",
              "Mixed precision (bf16/fp16) and an 8-bit or lighter optimizer.",
              "Train adapters only (LoRA / QLoRA) instead of every weight.",
              "Shard the model or its optimizer state over several GPUs, or use a card with more memory."};
    case Verdict::Fragmentation:
      return {"Set PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True so segments can grow instead of splitting.",
              "Keep tensor shapes constant (pad to a few fixed lengths) so freed blocks fit the next request.",
              "Allocate the largest buffers first; avoid interleaving long-lived small tensors with big short-lived ones.",
              "As a last resort, torch.cuda.empty_cache() between phases (it costs speed)."};
    case Verdict::Plateau:
      if (d.evidence.spacing && d.evidence.spacing->regular)
        return {"Nothing is kept from step to step. The cache grows for a phase that comes back at a fixed interval (evaluation, checkpointing, logging): "
                "run evaluation under torch.no_grad() or with a smaller batch to lower the peak.",
                "If the plateau is too close to the card's capacity, set PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True."};
      return {"Nothing leaks. To lower the peak, bucket or pad inputs to a few fixed shapes so the cache stops growing with each new longest input.",
              "If the plateau is too close to the card's capacity, set PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True."};
    case Verdict::Stable:
      return {"Nothing to fix. For headroom: mixed precision, gradient checkpointing or a smaller batch lower the plateau."};
    case Verdict::Inconclusive: break;
  }
  if (d.evidence.preallocation)
    return {"See through the preallocated pool: " + preallocation_see_through(*d.evidence.preallocation) + "."};
  return {"Record longer (several steps after the first), and mark steps: --step-regex, or write \"step N\" lines to $VRAMDOC_MARK_FILE."};
}

void explain_unsampled(Diagnosis& d, const std::string& why) {
  if (d.verdict != Verdict::Inconclusive) return;
  std::string reason = why.substr(0, std::min(why.find(" ("), why.find(": ")));  // the start line said the rest
  if (reason.ends_with("not found")) reason += ": no NVIDIA driver";
  d.to_settle = "no GPU memory was sampled (" + reason + "), so vramdoc cannot tell a leak from a job too big";
  d.summary = summary_for(d);
  d.remedies = {"Run the job where the NVIDIA driver is installed (nvidia-smi lists the GPUs), then vramdoc run again."};
}

}  // namespace vramdoc::timeline
