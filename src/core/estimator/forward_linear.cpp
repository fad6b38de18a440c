// A forward op by op (see forward_ops.hpp): Linears (autocast's weight copies, PEFT's adapters)
// and the norms, each allocation in the order transformers 5.17 and PyTorch 2.11 make it
// (checked against docs/results/estimator-families-h200-2026-11-30/raw.tar.xz (traces/)), and what autograd saves of each.
#include <algorithm>

#include "core/estimator/forward_ops.hpp"

namespace vramdoc::estimator::detail {

namespace {

u64 mul(u64 a, u64 b) { return saturating_mul(a, b); }

bool gemma_norm(Family f) { return f == Family::Gemma || f == Family::Gemma2 || f == Family::Gemma3; }

// PEFT's LoRA branch (peft/tuners/lora/layer.py Linear.forward): the input cast to the adapters'
// fp32 (saved by lora_A; under autocast lora_A's matmul casts it to 16 bit instead), A's output
// (saved by B), B's output, times scaling, added to the base output (promoting to fp32) and cast
// back to the base output's dtype.
u64 lora_branch(Forward& f, u64 x, u64 in, u64 out, bool input_wide, u64 base) {
  const u64 aw = f.amp ? 2 : 4, rank = f.r.o.lora_rank;
  const bool fp32_input = f.r.w.fp32_adapter_inputs || (input_wide && f.wide == 4) || f.act == 4;
  const u64 xa = f.amp ? (input_wide ? f.s.alloc(f.bytes(in, 2)) : x) : fp32_input ? x : f.s.alloc(f.bytes(in, 4));
  f.keep(xa);
  const u64 a = f.s.alloc(f.bytes(rank, aw));
  f.keep(a);
  const u64 b = f.s.alloc(f.bytes(out, aw)), scaled = f.s.alloc(f.bytes(out, aw));
  f.drop(b);
  const u64 sum_width = std::max(f.act, aw), sum = f.s.alloc(f.bytes(out, sum_width));
  f.drop(scaled), f.drop(base);
  if (xa != x) f.drop(xa);
  if (sum_width == f.act) return sum;
  const u64 cast = f.s.alloc(f.bytes(out, f.act));
  f.drop(sum);
  return cast;
}

}  // namespace

u64 linear(Forward& f, u64 x, u64 in_elements, u64 out_elements, bool input_wide, const std::string& name) {
  const u64 weight_cast = f.quantized ? 0 : f.weight_cast(mul(mul(in_elements, out_elements), 2));
  const u64 cast = f.amp && input_wide ? f.s.alloc(f.bytes(in_elements, 2)) : 0;
  const u64 dequant = f.quantized ? f.s.alloc(mul(mul(in_elements, out_elements), f.act), Use::Dequant) : 0;
  u64 out = f.s.alloc(f.bytes(out_elements, f.act));
  if (f.pending_workspace != 0) f.s.alloc(f.pending_workspace, Use::Workspace), f.pending_workspace = 0;
  f.drop(dequant);
  if (f.r.m.family == Family::Falcon && f.r.m.mlp_bias) {  // FalconLinear: `input @ weight.T`, then `+ bias` (a
    const u64 biased = f.s.alloc(f.bytes(out_elements, f.amp ? 4 : f.act));  // tensor of its own; fp32 under autocast)
    f.s.free(out);
    out = biased;
  }
  if (f.weights_train()) f.keep(cast != 0 ? cast : x);  // the input, for the weight's gradient
  f.drop(cast);
  f.release_cast(weight_cast);
  if (f.train && adapters(f.r.o) && is_lora_target(name, f.r.targets)) out = lora_branch(f, x, in_elements, out_elements, input_wide, out);
  return out;
}

// LayerNorm: one output (fp32 under autocast), its input saved. RMSNorm: hidden.to(float32) (saved
// by pow and the product), pow(2) (its mean is small), hidden * rsqrt(...), then the weight: Llama
// casts back and multiplies in the weight's dtype; Gemma multiplies (1 + weight) in fp32 and casts;
// OLMo 2 multiplies in fp32 and casts. The weight's multiplication saves the normalised tensor
// when the weight trains.
u64 norm(Forward& f, u64 x, u64 elements, u64 in_width) {
  const ModelConfig& m = f.r.m;
  if (m.norm == NormKind::LayerNormFp32 || m.norm == NormKind::LayerNorm1P || m.enc.deberta_layer_norm ||
      m.enc.int_layer_norm) {
    return family_norm(f, x, elements, in_width);
  }
  if (m.norm == NormKind::T5) return t5_norm(f, x, elements, in_width);
  if (m.norm == NormKind::LayerNorm || gpt2_style(m.family)) {
    f.keep(x);
    return f.s.alloc(f.bytes(elements, f.amp ? 4 : in_width));
  }
  const u64 up = in_width == 4 ? x : f.s.alloc(f.bytes(elements, 4));
  f.keep(up);
  const u64 pow = f.s.alloc(f.bytes(elements, 4));
  f.drop(pow);
  const u64 y = f.s.alloc(f.bytes(elements, 4));
  if (up != x) f.drop(up);
  const bool weight_grad = f.weights_train();
  if (m.norm == NormKind::Rms) {
    const u64 cast = in_width == 4 ? y : f.s.alloc(f.bytes(elements, in_width));
    const u64 out = f.s.alloc(f.bytes(elements, std::max(f.r.w.weight, in_width)));
    if (weight_grad) f.keep(cast);
    f.drop(cast), f.drop(y);
    return out;
  }
  if (weight_grad) f.keep(y);
  const u64 weighted = f.s.alloc(f.bytes(elements, 4));
  if (gemma_norm(m.family)) f.drop(y);
  const u64 cast = in_width == 4 ? 0 : f.s.alloc(f.bytes(elements, in_width));
  if (cast != 0) f.drop(weighted);
  f.drop(y);
  return cast != 0 ? cast : weighted;
}

}  // namespace vramdoc::estimator::detail
