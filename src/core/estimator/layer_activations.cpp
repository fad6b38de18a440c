// What one decoder layer's forward keeps alive for backward (per token), family by family. The
// rules (which op saves which operand) are PyTorch's derivatives.yaml; docs/estimator.md walks them.
#include <algorithm>
#include <iterator>

#include "core/estimator/architecture.hpp"
#include "core/units.hpp"

namespace vramdoc::estimator {

namespace {

using u64 = std::uint64_t;
u64 mul(u64 a, u64 b) { return saturating_mul(a, b); }

struct Dims {
  u64 h, q, kv, inter;
};

Dims dims_of(const ModelConfig& m) {
  return {m.hidden_size, mul(m.num_heads, m.head_dim), mul(m.num_kv_heads, m.head_dim), m.intermediate_size};
}

// A pre-sublayer norm and the Linear(s) reading its output. LayerNorm saves its input (skipped
// when that tensor is already saved: a second LayerNorm over the same residual); RMSNorm saves
// hidden.to(float32) and, for the weight's gradient, the normalised tensor (fp32 where the weight
// multiplies in fp32: Gemma, OLMo 2).
void add_norm(const ModelConfig& m, LayerActivations& a, const std::string& what, std::vector<std::string> readers,
              bool input_saved = false) {
  const u64 h = m.hidden_size;
  if (m.family == Family::Gpt2 || m.norm == NormKind::LayerNorm) {
    if (!input_saved) a.saved.push_back({what + " input", h, Dtype::Wide, false});
  } else {
    a.saved.push_back({what + " fp32 input", h, Dtype::Fp32, false});
    a.saved.push_back({what + " normalised", h, m.norm == NormKind::RmsFp32Weight ? Dtype::Fp32 : Dtype::Wide, true});
  }
  if (!readers.empty()) a.linear_inputs.push_back({what + " output", h, std::move(readers), true, false});
}

// Gemma 2/3 and OLMo 2 normalise a sublayer's output before the residual add.
void add_post_norm(const ModelConfig& m, LayerActivations& a, const std::string& what) {
  a.saved.push_back({what + " fp32 input", m.hidden_size, Dtype::Fp32, false});
  a.saved.push_back({what + " normalised", m.hidden_size, Dtype::Fp32, true});
}

std::vector<std::string> qkv_readers(const ModelConfig& m) {
  if (m.family == Family::Gpt2) return {"c_attn"};
  if (m.mla.kv_lora_rank > 0) return {m.mla.q_lora_rank > 0 ? "q_a_proj" : "q_proj", "kv_a_proj_with_mqa"};
  if (m.fused_qkv) return {m.family == Family::Phi3 ? "qkv_proj" : "query_key_value"};
  return {"q_proj", "k_proj", "v_proj"};
}

std::string output_proj(const ModelConfig& m) {
  if (m.family == Family::Gpt2) return "attn.c_proj";
  return m.family == Family::Phi || m.family == Family::Falcon || m.family == Family::GptNeox ? "dense" : "o_proj";
}

std::vector<std::string> mlp_readers(const ModelConfig& m, bool moe) {
  if (m.family == Family::Gpt2) return {"c_fc"};
  if (moe) {
    std::vector<std::string> r = {"gate"};
    if (m.shared_expert_intermediate > 0) {
      const std::string p = m.shared_expert_gate ? "shared_expert." : "shared_experts.";
      r.insert(r.end(), {p + "gate_proj", p + "up_proj"});
      if (m.shared_expert_gate) r.push_back("shared_expert_gate");
    }
    return r;
  }
  if (m.mlp == MlpKind::Gelu || m.mlp == MlpKind::NewGelu) {
    return {m.family == Family::Phi ? "fc1" : m.family == Family::Starcoder2 ? "c_fc" : "dense_h_to_4h"};
  }
  return m.family == Family::Phi3 ? std::vector<std::string>{"gate_up_proj"} : std::vector<std::string>{"gate_proj", "up_proj"};
}

// DeepSeek's multi-head latent attention: low-rank q (optional) and kv projections, each with an
// RMSNorm, then full per-head queries, keys and values (the values a view of kv_b_proj's output).
void add_latent_attention(const ModelConfig& m, LayerActivations& a) {
  const LatentAttention& l = m.mla;
  const u64 heads = m.num_heads, qk = mul(heads, l.qk_nope_head_dim + l.qk_rope_head_dim);
  if (l.q_lora_rank > 0) {
    a.saved.push_back({"q_a_layernorm fp32 input", l.q_lora_rank, Dtype::Fp32, false});
    a.saved.push_back({"q_a_layernorm normalised", l.q_lora_rank, Dtype::Wide, true});
    a.linear_inputs.push_back({"q_a_layernorm output", l.q_lora_rank, {"q_b_proj"}, true, false});
  }
  a.saved.push_back({"kv_a_layernorm fp32 input", l.kv_lora_rank, Dtype::Fp32, false});
  a.saved.push_back({"kv_a_layernorm normalised", l.kv_lora_rank, Dtype::Wide, true});
  a.linear_inputs.push_back({"kv_a_layernorm output", l.kv_lora_rank, {"kv_b_proj"}, true, false});
  if (m.family == Family::DeepseekV2) {  // complex RoPE: view_as_complex(x.float()) is saved by the product
    a.saved.push_back({"rotary parts in fp32 (complex RoPE)", mul(heads + 1, l.qk_rope_head_dim), Dtype::Fp32, false, 2});
  }
  a.saved.push_back({"query and key (nope + rope, every head)", 2 * qk, Dtype::Act, false, 2});
  a.saved.push_back({"kv_b_proj output (kept by the value view)", mul(heads, l.qk_nope_head_dim + l.v_head_dim), Dtype::Act, false});
  a.saved.push_back({"attention output", mul(heads, l.v_head_dim), Dtype::Act, false});
  a.linear_inputs.push_back({"attention output", mul(heads, l.v_head_dim), {"o_proj"}, false, true});
}

void add_qk_norm(const ModelConfig& m, LayerActivations& a) {
  const Dims d = dims_of(m);
  if (m.qk_norm == QkNorm::None) return;
  a.saved.push_back({"q_norm, k_norm fp32 inputs", d.q + d.kv, Dtype::Fp32, false, 2});
  a.saved.push_back({"q_norm, k_norm normalised", d.q + d.kv, m.norm == NormKind::RmsFp32Weight ? Dtype::Fp32 : Dtype::Act,
                     true, 2});
}

void add_eager(const ModelConfig& m, LayerActivations& a, u64 probs) {
  const Dims d = dims_of(m);
  const bool gpt2 = m.family == Family::Gpt2;
  if (!gpt2) a.saved.push_back({"query (rotated), repeated key and value", 3 * d.q, Dtype::Act, false, 3});
  if (gpt2) {  // GPT-2's own eager path: softmax in the activation dtype, then attention dropout
    a.saved.push_back({"attention probabilities", probs, Dtype::Wide, false});
    if (m.attention_dropout > 0) {
      a.saved.push_back({"attention dropout mask", probs, Dtype::Mask, false});
      a.saved.push_back({"attention probabilities after dropout", probs, Dtype::Act, false});
    } else {  // .type(value.dtype): under autocast a 16-bit copy the value matmul saves
      a.saved.push_back({"attention probabilities, 16-bit copy", probs, Dtype::AutocastCopy16, false});
    }
  } else {
    // Gemma 2 soft-capping: tanh(scores / cap) * cap; tanh saves its output.
    if (m.attn_logit_softcap > 0) a.saved.push_back({"soft-capped scores (tanh output)", probs, Dtype::Act, false});
    // softmax(dtype=float32) saves its fp32 output; .to(query.dtype) makes the 16-bit copy the value matmul saves
    a.saved.push_back({"attention probabilities (softmax in fp32)", probs, Dtype::Fp32, false});
    a.saved.push_back({"attention probabilities, 16-bit copy", probs, Dtype::Copy16, false});
  }
  a.linear_inputs.push_back({"attention output (contiguous)", d.q, {output_proj(m)}, false, false});
}

void add_attention(const ModelConfig& m, AttentionPath path, u64 seq, bool sliding, LayerActivations& a) {
  const Dims d = dims_of(m);
  const bool gpt2 = m.family == Family::Gpt2, fused_qkv = gpt2 || m.fused_qkv;
  const u64 probs = mul(m.num_heads, seq);  // one row of the seq x seq matrix per head
  add_qk_norm(m, a);
  if (fused_qkv) a.saved.push_back({"fused qkv output (kept by the value view)", d.q + 2 * d.kv, Dtype::Act, false});
  if (path == AttentionPath::Eager) return add_eager(m, a, probs);
  if (path == AttentionPath::Math) {
    // SDPA math fallback: scaled q, scaled and repeated k, repeated v, fp32 probabilities.
    a.saved.push_back({"scaled query, repeated key and value", 3 * d.q, Dtype::Act, false, 3});
    a.saved.push_back({"attention probabilities", probs, Dtype::Fp32, false});
  } else if (gpt2) {
    // Measured on gpt2 (calibration set): two more hidden-sized tensors than the fused qkv
    // buffer, consistent with contiguous copies of the query and key views for the kernel.
    a.saved.push_back({"query and key copies for the kernel", 2 * d.h, Dtype::Act, false, 2});
  } else if (m.kv_broadcast_to_heads) {  // keys and values copied to every head before RoPE and SDPA
    a.saved.push_back({"query and key after RoPE, value (every head)", 3 * d.q, Dtype::Act, false, 3});
  } else {
    a.saved.push_back({"query and key after RoPE", d.q + d.kv, Dtype::Act, false, 2});
    if (!fused_qkv) a.saved.push_back({"value", d.kv, Dtype::Act, false});
  }
  a.saved.push_back({"attention output", d.q, Dtype::Act, false});
  a.linear_inputs.push_back({"attention output", d.q, {output_proj(m)}, false, true});
  if (sliding && m.sliding_window > 0 && seq > m.sliding_window) {
    // Beyond the window the causal mask is explicit: SDPA turns the bool mask into an additive
    // one in the query dtype and the memory-efficient kernel keeps it for backward.
    a.saved.push_back({"sliding-window attention bias", seq, Dtype::Act, false});
  }
}

void add_routed_experts(const ModelConfig& m, LayerActivations& a) {
  const u64 k = m.experts_per_token, h = m.hidden_size, I = m.moe_intermediate_size;
  a.saved.push_back({"router probabilities (softmax in fp32)", m.num_experts, Dtype::Fp32, false});
  a.saved.push_back({"routed token copies (expert inputs)", mul(k, h), Dtype::Act, false});
  a.saved.push_back({"expert gate, activation, up", mul(3 * k, I), Dtype::Act, false, 3});
  a.linear_inputs.push_back({"expert products", mul(k, I), {"experts.down_proj"}, false, false});
  a.saved.push_back({"expert outputs (scaled by routing weight)", mul(k, h), Dtype::Act, false});
  if (m.shared_expert_intermediate > 0) {
    const u64 s = m.shared_expert_intermediate;
    a.saved.push_back({"shared expert gate, activation, up", 3 * s, Dtype::Act, false, 3});
    const std::string p = m.shared_expert_gate ? "shared_expert." : "shared_experts.";
    a.linear_inputs.push_back({"shared expert product", s, {p + "down_proj"}, false, false});
    if (m.shared_expert_gate) a.saved.push_back({"shared expert output (scaled by its sigmoid gate)", h, Dtype::Act, false});
  }
}

void add_mlp(const ModelConfig& m, LayerActivations& a, bool moe) {
  const Dims d = dims_of(m);
  if (moe) return add_routed_experts(m, a);
  if (m.family == Family::Gpt2 || m.mlp == MlpKind::NewGelu) {
    // NewGELU in Python: 0.5*x*(1+tanh(c*(x+0.044715*x^3))) saves x (pow, fp32 under autocast),
    // tanh's output, (1 + tanh) and 0.5*x; its output feeds the second Linear.
    a.saved.push_back({"gelu: x, tanh, 1+tanh", 3 * d.inter, Dtype::Wide, false, 3});
    a.saved.push_back({"gelu: 0.5*x", d.inter, Dtype::Act, false});
    a.linear_inputs.push_back({"gelu output", d.inter, {m.family == Family::Gpt2 ? "mlp.c_proj" : "fc2"}, true, false});
    return;
  }
  if (m.mlp == MlpKind::Gelu) {  // the C++ gelu saves its input; the second Linear its output
    a.saved.push_back({"mlp first Linear output (gelu input)", d.inter, Dtype::Act, false});
    a.linear_inputs.push_back({"gelu output", d.inter, {m.family == Family::Starcoder2 ? "c_proj" : "dense_4h_to_h"}, false, false});
    return;
  }
  // Gated MLP: act(gate) saves gate, the product saves act(gate) and up; down_proj its input.
  a.saved.push_back({"mlp gate, activation, up", 3 * d.inter, Dtype::Act, false, 3});
  a.linear_inputs.push_back({"mlp product", d.inter, {"down_proj"}, false, false});
}

// Tensor parallelism (ColwiseParallel q/k/v, gate/up; RowwiseParallel o, down) divides what the
// attention and MLP functions above add per head or per channel, from `saved` / `inputs` on; the
// hidden-sized tensors among them (routing copies, scaled outputs, the explicit mask) stay whole.
void mark_tp_split(LayerActivations& a, std::size_t saved, std::size_t inputs) {
  static const char* const whole[] = {"sliding-window attention bias", "router probabilities (softmax in fp32)",
                                      "routed token copies (expert inputs)", "expert outputs (scaled by routing weight)",
                                      "shared expert output (scaled by its sigmoid gate)"};
  for (std::size_t i = saved; i < a.saved.size(); ++i) {
    a.saved[i].tp_split = std::none_of(std::begin(whole), std::end(whole), [&](const char* w) { return a.saved[i].what == w; });
  }
  for (std::size_t i = inputs; i < a.linear_inputs.size(); ++i) a.linear_inputs[i].tp_split = true;
}

}  // namespace

LayerActivations describe_layer(const ModelConfig& model, AttentionPath path, std::uint64_t seq, LayerKind kind) {
  LayerActivations a;
  const bool gpt2 = model.family == Family::Gpt2;
  std::vector<std::string> attn_in = qkv_readers(model), mlp_in = mlp_readers(model, kind.moe);
  if (model.post_norms_only) {  // OLMo 2: the projections read the residual stream itself
    a.linear_inputs.push_back({"layer input (residual)", model.hidden_size, attn_in, true, false});
  } else if (model.parallel_residual && model.shared_norm) {
    attn_in.insert(attn_in.end(), mlp_in.begin(), mlp_in.end());
    add_norm(model, a, "input_layernorm", attn_in);
  } else {
    add_norm(model, a, gpt2 ? "ln_1" : "input_layernorm", attn_in);
  }
  const std::size_t attention_saved = a.saved.size(), attention_inputs = a.linear_inputs.size();
  if (model.mla.kv_lora_rank > 0) {
    add_latent_attention(model, a);
  } else {
    add_attention(model, path, seq, kind.sliding, a);
  }
  mark_tp_split(a, attention_saved, attention_inputs);
  if (model.sandwich_norms || model.post_norms_only) add_post_norm(model, a, "post_attention_layernorm");
  if (model.post_norms_only) {
    a.linear_inputs.push_back({"residual after attention", model.hidden_size, mlp_in, true, false});
  } else if (!(model.parallel_residual && model.shared_norm)) {
    // a second LayerNorm over the same residual (GPT-NeoX, Falcon 40B) saves no second input
    add_norm(model, a, gpt2 ? "ln_2" : model.sandwich_norms ? "pre_feedforward_layernorm" : "post_attention_layernorm",
             mlp_in, model.parallel_residual && model.norm == NormKind::LayerNorm);
  }
  const std::size_t mlp_saved = a.saved.size(), mlp_inputs = a.linear_inputs.size();
  add_mlp(model, a, kind.moe);
  mark_tp_split(a, mlp_saved, mlp_inputs);
  if (model.sandwich_norms || model.post_norms_only) add_post_norm(model, a, "post_feedforward_layernorm");
  if (model.residual_dropout > 0) a.saved.push_back({"residual dropout masks", 2 * model.hidden_size, Dtype::Mask, false, 2});
  return a;
}

LayerActivations describe_head(const ModelConfig& model) {
  LayerActivations a;
  if (model.family == Family::Gpt2 && model.residual_dropout > 0) {
    a.saved.push_back({"embedding dropout mask", model.hidden_size, Dtype::Mask, false});
  }
  add_norm(model, a, model.family == Family::Gpt2 ? "ln_f" : "final norm", {"lm_head"});
  return a;
}

}  // namespace vramdoc::estimator
