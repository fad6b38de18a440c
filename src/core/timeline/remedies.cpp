// What to do, by verdict: the remedies the articles give (shared/seeds), and the one-line summary.
#include <cmath>

#include "core/timeline/classify.hpp"
#include "core/units.hpp"

namespace vramdoc::timeline {

namespace {

std::string bytes(double b) { return format_bytes(static_cast<std::uint64_t>(std::max(0.0, b))); }

}  // namespace

std::string summary_for(const Diagnosis& d) {
  const auto& ev = d.evidence;
  switch (d.verdict) {
    case Verdict::Leak: {
      std::string s = "leak: memory grows step after step";
      if (ev.growth_bytes_per_step) s += ", about " + bytes(*ev.growth_bytes_per_step) + " per step";
      else if (ev.growth_bytes_per_second) s += ", about " + bytes(*ev.growth_bytes_per_second) + " per second";
      if (ev.oom_seconds) s += "; it ran out at " + std::to_string(*ev.oom_seconds).substr(0, 6) + " s";
      else if (ev.projected_oom_seconds) s += "; at this rate it runs out at about " + std::to_string(std::lround(*ev.projected_oom_seconds)) + " s";
      return s + ". Fix the code.";
    }
    case Verdict::Insufficient: {
      std::string s = "insufficient: the job is too big for this card, not leaking";
      if (ev.missing_bytes) s += "; at least " + bytes(double(*ev.missing_bytes)) + " more was needed";
      return s + ". Shrink the job or use a bigger card.";
    }
    case Verdict::Fragmentation:
      return "fragmentation: enough memory was reserved but not in one piece; the allocator's cache is fragmented.";
    case Verdict::Plateau:
      return "plateau: the allocator's cache grew for larger shapes and levels off; not a leak.";
    case Verdict::Stable:
      return "stable: memory rises during warm-up, then stays flat; no leak.";
    case Verdict::Inconclusive: break;
  }
  return "inconclusive: " + (d.to_settle.empty() ? std::string("not enough to judge") : d.to_settle) + ".";
}

std::vector<std::string> remedies_for(const Diagnosis& d) {
  switch (d.verdict) {
    case Verdict::Leak:
      return {"Keep numbers, not tensors, across steps: total_loss += loss.item() (not loss); store .detach().cpu() copies of anything you log or collect.",
              "Call optimizer.zero_grad() every step, before backward(), so gradients do not accumulate.",
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
      return {"Nothing leaks. To lower the peak, bucket or pad inputs to a few fixed shapes so the cache stops growing with each new longest input.",
              "If the plateau is too close to the card's capacity, set PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True."};
    case Verdict::Stable:
      return {"Nothing to fix. For headroom: mixed precision, gradient checkpointing or a smaller batch lower the plateau."};
    case Verdict::Inconclusive: break;
  }
  return {"Record longer (several steps after the first), and mark steps: --step-regex, or write \"step N\" lines to $VRAMDOC_MARK_FILE."};
}

}  // namespace vramdoc::timeline
