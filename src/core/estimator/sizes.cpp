// Widths, parameter sizes (with quantised storage) and each layer's tensors in bytes per token.
#include <algorithm>

#include "core/estimator/estimate_parts.hpp"
#include "core/estimator/parallel.hpp"
#include "core/units.hpp"

namespace vramdoc::estimator::detail {

namespace {

u64 mul(u64 a, u64 b) { return saturating_mul(a, b); }
u64 add(u64 a, u64 b) { return saturating_add(a, b); }
u64 ceil_div(u64 a, u64 b) { return b == 0 ? 0 : a / b + (a % b != 0); }

bool is_embedding(const std::string& name) {
  return name == "wte" || name == "wpe" || name == "embed_tokens" || name == "embed_positions" ||
         name.rfind("embed_tokens:", 0) == 0;
}

}  // namespace

bool trains(const Options& o) { return o.mode != Mode::Infer; }
bool adapters(const Options& o) { return o.mode == Mode::Lora || o.mode == Mode::Qlora; }

Widths widths_of(const Options& o) {
  if (o.mode == Mode::Qlora) return {2, 4, 4, false, true};  // bf16 compute, fp32 residual stream and norms
  if (fsdp_mixed_precision(o)) return {2, 2, 2, false, false};  // FSDP casts the gathered weights: no autocast
  switch (o.precision) {
    case Precision::Fp32: return {4, 4, 4, false, false};
    case Precision::AmpBf16:
    case Precision::AmpFp16: return {2, 4, 4, true, false};
    case Precision::Bf16:
    case Precision::Fp16: return {2, 2, 2, false, false};
  }
  return {4, 4, 4, false, false};
}

Quantization effective_quant(const ModelConfig& m, const Options& o) {
  Quantization q;
  if (o.mode == Mode::Qlora || o.quant == Quant::Int4) {
    q.method = QuantMethod::Bnb4bit, q.bits = 4, q.group_size = 64, q.double_quant = o.mode == Mode::Qlora;
  } else if (o.quant == Quant::Int8) {
    q.method = QuantMethod::Bnb8bit, q.bits = 8, q.group_size = 0;
  } else if (o.quant == Quant::Fp8) {
    q.method = QuantMethod::Fp8, q.bits = 8, q.group_size = 0;  // per-row scales (measured case)
  } else {
    q = m.quant;
  }
  return q;
}

// Storage per quantised Linear: bitsandbytes (functional.py quantize_4bit: blocksize 64, absmax
// fp32 per block, or with compress_statistics an 8-bit absmax per block plus fp32 per 256 blocks;
// Int8Params: int8 weight + fp32 SCB per output row), GPTQ/AWQ (packed int32 qweight, per-group
// fp16 scales and packed zeros, GPTQ's int32 g_idx), FP8 (one byte, fp32 scale per 128x128 block
// or per row), compressed-tensors (packed bits, 16-bit scale per group or per row).
u64 quantized_bytes(const Quantization& q, u64 in, u64 out) {
  const u64 n = mul(in, out);
  switch (q.method) {
    case QuantMethod::None: return 0;
    case QuantMethod::Bnb4bit: {
      const u64 blocks = ceil_div(n, 64);
      return add(ceil_div(n, 2), q.double_quant ? add(blocks, mul(4, ceil_div(blocks, 256))) : mul(4, blocks));
    }
    case QuantMethod::Bnb8bit: return add(n, mul(4, out));
    case QuantMethod::Fp8:
      return add(n, q.group_size > 0 ? mul(4, mul(ceil_div(out, 128), ceil_div(in, 128))) : mul(4, out));
    case QuantMethod::Gptq:
    case QuantMethod::Awq: {
      const u64 groups = ceil_div(in, std::max<u64>(q.group_size, 1));
      const u64 packed = ceil_div(mul(n, q.bits), 8), zeros = ceil_div(mul(mul(groups, out), q.bits), 8);
      return add(add(packed, mul(mul(groups, out), 2)), add(zeros, q.method == QuantMethod::Gptq ? mul(4, in) : 0));
    }
    case QuantMethod::CompressedTensors: {
      const u64 scales = q.group_size > 0 ? ceil_div(n, q.group_size) : out;
      return add(ceil_div(mul(n, q.bits), 8), mul(2, scales));
    }
  }
  return n;
}

Sizes count_params(const ModelConfig& m, const Options& o, const std::vector<std::string>& targets, const Widths& w) {
  Sizes s;
  const Quantization q = effective_quant(m, o);
  const u64 float_width = o.mode == Mode::Qlora ? 4 : w.weight;  // QLoRA keeps the unquantised weights in fp32
  for (const auto& t : describe_weights(m)) {
    const u64 each = mul(t.rows, t.cols), n = mul(each, t.count);
    const bool quantized = t.stored_bytes > 0 || (q.method != QuantMethod::None && t.quantizable);
    count_local(m, o, t, s);
    if (t.matmul && !quantized) s.matmul_params = add(s.matmul_params, n);
    if (t.name == "lm_head") s.lm_head_params = each;
    if (t.tied) continue;
    s.params = add(s.params, n);
    if (is_embedding(t.name)) s.embed_params = add(s.embed_params, n);
    if (!gets_gradient(t, o.grad_checkpointing)) {
      s.gradless_params = add(s.gradless_params, n);
    } else {  // the optimizer's tensors: those with a gradient
      s.biggest_tensor = std::max(s.biggest_tensor, each);
      s.factored_state = add(s.factored_state, t.rows > 1 ? mul(t.rows + t.cols, t.count) : n);
    }
    if (adapters(o) && t.matmul && t.lora_target && is_lora_target(t.name, targets)) {
      s.adapter_params = add(s.adapter_params, mul(o.lora_rank, mul(t.rows + t.cols, t.count)));
    }
    if (quantized) {
      s.quant_params = add(s.quant_params, n);
      const u64 stored = t.stored_bytes > 0 ? t.stored_bytes : mul(quantized_bytes(q, t.rows, t.cols), t.count);
      s.quant_bytes = add(s.quant_bytes, stored);
      s.dequant_elements = std::max(s.dequant_elements, each);
    } else {
      s.weight_bytes = add(s.weight_bytes, mul(n, float_width));
    }
  }
  if (q.method != QuantMethod::None && m.family != Family::FromHeaders && !m.header_tensors.empty()) {
    // a quantised checkpoint's own storage: its packed tensors and their scales / zero points
    u64 stored = 0;
    for (const auto& h : m.header_tensors) {
      const bool meta = h.name.find("scale") != std::string::npos || h.name.find("absmax") != std::string::npos ||
                        h.name.find("zeros") != std::string::npos || h.name.find("g_idx") != std::string::npos;
      if (!h.floating || meta) stored = add(stored, h.bytes);
    }
    if (stored > 0) s.quant_bytes = stored;
  }
  s.weight_bytes = add(s.weight_bytes, s.quant_bytes);
  return s;
}

AttentionPath attention_path(const ModelConfig& m, const Options& o, LayerKind kind) {
  if (o.attention == Attention::Eager || m.alibi || m.fp32_attention || m.family == Family::Mpt || m.attention_sinks) {
    return AttentionPath::Eager;  // BLOOM, GPT-J, MPT, GPT-OSS: their own
  }
  // Falcon 7B passes its one key/value head to SDPA as a broadcast, which only the math kernel takes.
  if (m.family == Family::Falcon && m.num_kv_heads == 1 && m.num_heads > 1) return AttentionPath::Math;
  // SDPA in fp32 with grouped KV heads runs the math kernel (the fused ones take no GQA in fp32),
  // except where a sliding window makes the mask explicit: the memory-efficient kernel takes it.
  const bool masked = kind.sliding && m.sliding_window > 0 && o.seq > m.sliding_window;
  if (o.precision == Precision::Fp32 && m.num_kv_heads < m.num_heads && o.mode != Mode::Qlora && !masked) {
    return AttentionPath::Math;
  }
  return AttentionPath::Fused;
}

}  // namespace vramdoc::estimator::detail

namespace vramdoc::estimator {

std::uint64_t quantized_linear_bytes(const Quantization& q, std::uint64_t in, std::uint64_t out) {
  return detail::quantized_bytes(q, in, out);
}

}  // namespace vramdoc::estimator
