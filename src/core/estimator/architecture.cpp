// Each family in a few lines: its tensors, and the tensors autograd keeps per layer. The rules
// (which op saves which operand) are PyTorch's derivatives.yaml; docs/estimator.md walks them.
#include "core/estimator/architecture.hpp"

#include "core/units.hpp"

namespace vramdoc::estimator {

namespace {

std::uint64_t mul(std::uint64_t a, std::uint64_t b) { return saturating_mul(a, b); }

struct Dims {
  std::uint64_t h, q, kv, inter, layers, vocab;
};

Dims dims_of(const ModelConfig& m) {
  return {m.hidden_size, mul(m.num_heads, m.head_dim), mul(m.num_kv_heads, m.head_dim), m.intermediate_size,
          m.num_layers, m.vocab_size};
}

void add_gpt2_weights(const ModelConfig& m, std::vector<WeightTensor>& w) {
  const Dims d = dims_of(m);
  const std::uint64_t L = d.layers;
  w.push_back({"wte", d.vocab, d.h, 1, false, false});
  w.push_back({"wpe", m.max_positions, d.h, 1, false, false});
  w.push_back({"ln_1, ln_2", 1, 4 * d.h, L, false, false});  // weight + bias each
  w.push_back({"c_attn", d.h, 3 * d.h, L, true, false});
  w.push_back({"attn.c_proj", d.h, d.h, L, true, false});
  w.push_back({"c_fc", d.h, d.inter, L, true, false});
  w.push_back({"mlp.c_proj", d.inter, d.h, L, true, false});
  w.push_back({"biases", 1, 3 * d.h + d.h + d.inter + d.h, L, false, false});
  w.push_back({"ln_f", 1, 2 * d.h, 1, false, false});
  w.push_back({"lm_head", d.h, d.vocab, 1, true, true});
}

void add_decoder_weights(const ModelConfig& m, std::vector<WeightTensor>& w) {
  const Dims d = dims_of(m);
  const std::uint64_t L = d.layers;
  w.push_back({"embed_tokens", d.vocab, d.h, 1, false, false});
  if (m.family == Family::Phi3) {
    w.push_back({"qkv_proj", d.h, d.q + 2 * d.kv, L, true, false});
  } else {
    w.push_back({"q_proj", d.h, d.q, L, true, false});
    w.push_back({"k_proj", d.h, d.kv, L, true, false});
    w.push_back({"v_proj", d.h, d.kv, L, true, false});
  }
  if (m.attention_bias) w.push_back({"q/k/v biases", 1, d.q + 2 * d.kv, L, false, false});
  w.push_back({"o_proj", d.q, d.h, L, true, false});
  if (m.family == Family::Qwen3) w.push_back({"q_norm, k_norm", 1, 2 * m.head_dim, L, false, false});
  w.push_back({"input_layernorm, post_attention_layernorm", 1, 2 * d.h, L, false, false});
  if (m.num_experts > 0) {
    const std::uint64_t LE = mul(L, m.num_experts);
    w.push_back({"gate", d.h, m.num_experts, L, true, false});
    w.push_back({"w1", d.h, d.inter, LE, true, false});
    w.push_back({"w3", d.h, d.inter, LE, true, false});
    w.push_back({"w2", d.inter, d.h, LE, true, false});
  } else if (m.family == Family::Phi3) {
    w.push_back({"gate_up_proj", d.h, 2 * d.inter, L, true, false});
    w.push_back({"down_proj", d.inter, d.h, L, true, false});
  } else {
    w.push_back({"gate_proj", d.h, d.inter, L, true, false});
    w.push_back({"up_proj", d.h, d.inter, L, true, false});
    w.push_back({"down_proj", d.inter, d.h, L, true, false});
  }
  w.push_back({"norm", 1, d.h, 1, false, false});
  w.push_back({"lm_head", d.h, d.vocab, 1, true, m.tie_word_embeddings});
}

// The pre-attention / pre-MLP norm and the Linear(s) reading its output.
void add_norm(const ModelConfig& m, LayerActivations& a, const std::string& what, std::vector<std::string> readers) {
  const std::uint64_t h = m.hidden_size;
  if (m.family == Family::Gpt2) {
    a.saved.push_back({what + " input", h, Dtype::Wide, false});  // native_layer_norm saves its input
  } else {
    // RMSNorm: hidden.to(float32) is saved by pow / rsqrt-mul; `weight * normalised` saves the
    // normalised tensor (fp32 in Gemma, which multiplies by (1 + weight.float())).
    a.saved.push_back({what + " fp32 input", h, Dtype::Fp32, false});
    a.saved.push_back({what + " normalised", h, m.family == Family::Gemma ? Dtype::Fp32 : Dtype::Wide, true});
  }
  a.linear_inputs.push_back({what + " output", h, std::move(readers), true, false});
}

void add_attention(const ModelConfig& m, AttentionPath path, std::uint64_t seq, LayerActivations& a) {
  const Dims d = dims_of(m);
  const bool gpt2 = m.family == Family::Gpt2;
  const bool fused_qkv = gpt2 || m.family == Family::Phi3;
  const std::uint64_t probs = mul(m.num_heads, seq);  // one row of the seq x seq matrix per head
  if (m.family == Family::Qwen3) {  // q_norm / k_norm: RMSNorm over head_dim before RoPE
    a.saved.push_back({"q_norm, k_norm fp32 inputs", d.q + d.kv, Dtype::Fp32, false, true});
    a.saved.push_back({"q_norm, k_norm normalised", d.q + d.kv, Dtype::Act, true, true});
  }
  if (fused_qkv) a.saved.push_back({"fused qkv output (kept by the value view)", d.q + 2 * d.kv, Dtype::Act, false, true});
  if (path == AttentionPath::Eager) {
    // eager: q @ repeat_kv(k)^T, softmax, @ repeat_kv(v); then transpose(1, 2).contiguous().
    if (!gpt2) a.saved.push_back({"query (rotated), repeated key and value", 3 * d.q, Dtype::Act, false, true});
    if (gpt2) {  // GPT-2's own eager path: softmax in the activation dtype, then attention dropout
      a.saved.push_back({"attention probabilities", probs, Dtype::Wide, false, true});
      if (m.attention_dropout > 0) {
        a.saved.push_back({"attention dropout mask", probs, Dtype::Mask, false, true});
        a.saved.push_back({"attention probabilities after dropout", probs, Dtype::Act, false, true});
      } else {  // .type(value.dtype): under autocast a 16-bit copy the value matmul saves
        a.saved.push_back({"attention probabilities, 16-bit copy", probs, Dtype::AutocastCopy16, false, true});
      }
    } else {
      // softmax(dtype=float32) saves its fp32 output; .to(query.dtype) (or autocast) makes the
      // 16-bit copy that the value matmul saves.
      a.saved.push_back({"attention probabilities (softmax in fp32)", probs, Dtype::Fp32, false, true});
      a.saved.push_back({"attention probabilities, 16-bit copy", probs, Dtype::Copy16, false, true});
    }
    a.linear_inputs.push_back({"attention output (contiguous)", d.q, {gpt2 ? "attn.c_proj" : "o_proj"}, false, false, true});
  } else {
    if (path == AttentionPath::Math) {
      // SDPA math fallback: scaled q, scaled and repeated k, repeated v, fp32 probabilities.
      a.saved.push_back({"scaled query, repeated key and value", 3 * d.q, Dtype::Act, false, true});
      a.saved.push_back({"attention probabilities", probs, Dtype::Fp32, false, true});
    } else if (gpt2) {
      // Measured on gpt2 (calibration set): two more hidden-sized tensors than the fused qkv
      // buffer, consistent with contiguous copies of the query and key views for the kernel.
      a.saved.push_back({"query and key copies for the kernel", 2 * d.h, Dtype::Act, false, true});
    } else {
      a.saved.push_back({"query and key after RoPE", d.q + d.kv, Dtype::Act, false, true});
      if (!fused_qkv) a.saved.push_back({"value", d.kv, Dtype::Act, false, true});
    }
    a.saved.push_back({"attention output", d.q, Dtype::Act, false, true});
    a.linear_inputs.push_back({"attention output", d.q, {gpt2 ? "attn.c_proj" : "o_proj"}, false, true, true});
    if (m.sliding_window > 0 && seq > m.sliding_window) {
      // Beyond the window the causal mask is explicit: SDPA turns the bool mask into an additive
      // one in the query dtype and the memory-efficient kernel keeps it for backward.
      a.saved.push_back({"sliding-window attention bias", seq, Dtype::Act, false});
    }
  }
  if (gpt2 && m.residual_dropout > 0) a.saved.push_back({"residual dropout masks", 2 * d.h, Dtype::Mask, false});
}

void add_mlp(const ModelConfig& m, LayerActivations& a) {
  const Dims d = dims_of(m);
  if (m.family == Family::Gpt2) {
    // NewGELU in Python: 0.5*x*(1+tanh(c*(x+0.044715*x^3))) saves x (pow, fp32 under autocast),
    // tanh's output, (1 + tanh) and 0.5*x; its output feeds c_proj.
    a.saved.push_back({"gelu: x, tanh, 1+tanh", 3 * d.inter, Dtype::Wide, false, true});
    a.saved.push_back({"gelu: 0.5*x", d.inter, Dtype::Act, false, true});
    a.linear_inputs.push_back({"gelu output", d.inter, {"mlp.c_proj"}, true, false, true});
    return;
  }
  if (m.num_experts > 0) {
    const std::uint64_t k = m.experts_per_token;
    a.saved.push_back({"router probabilities (softmax in fp32)", m.num_experts, Dtype::Fp32, false});
    a.saved.push_back({"routed token copies (expert inputs)", mul(k, d.h), Dtype::Act, false});
    a.saved.push_back({"expert gate, activation, up", mul(3 * k, d.inter), Dtype::Act, false, true});
    a.linear_inputs.push_back({"expert products", mul(k, d.inter), {"w2"}, false, false, true});
    a.saved.push_back({"expert outputs (scaled by routing weight)", mul(k, d.h), Dtype::Act, false});
    return;
  }
  // Gated MLP: act(gate) saves gate, the product saves act(gate) and up; down_proj its input.
  a.saved.push_back({"mlp gate, activation, up", 3 * d.inter, Dtype::Act, false, true});
  a.linear_inputs.push_back({"mlp product", d.inter, {"down_proj"}, false, false, true});
}

}  // namespace

std::vector<WeightTensor> describe_weights(const ModelConfig& model) {
  std::vector<WeightTensor> w;
  if (model.family == Family::Gpt2) {
    add_gpt2_weights(model, w);
  } else {
    add_decoder_weights(model, w);
  }
  return w;
}

LayerActivations describe_layer(const ModelConfig& model, AttentionPath path, std::uint64_t seq) {
  LayerActivations a;
  const bool gpt2 = model.family == Family::Gpt2;
  std::vector<std::string> qkv = gpt2 ? std::vector<std::string>{"c_attn"}
                                 : model.family == Family::Phi3 ? std::vector<std::string>{"qkv_proj"}
                                                                : std::vector<std::string>{"q_proj", "k_proj", "v_proj"};
  std::vector<std::string> mlp_in = gpt2 ? std::vector<std::string>{"c_fc"}
                                    : model.num_experts > 0 ? std::vector<std::string>{"gate"}
                                    : model.family == Family::Phi3 ? std::vector<std::string>{"gate_up_proj"}
                                                                   : std::vector<std::string>{"gate_proj", "up_proj"};
  add_norm(model, a, gpt2 ? "ln_1" : "input_layernorm", std::move(qkv));
  add_attention(model, path, seq, a);
  add_norm(model, a, gpt2 ? "ln_2" : "post_attention_layernorm", std::move(mlp_in));
  add_mlp(model, a);
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

std::vector<std::string> default_lora_targets(const ModelConfig& model) {
  switch (model.family) {
    case Family::Gpt2: return {"c_attn"};
    case Family::Phi3: return {"qkv_proj"};
    default: return {"q_proj", "v_proj"};
  }
}

bool is_lora_target(const std::string& name, const std::vector<std::string>& targets) {
  for (const auto& t : targets) {
    if (name == t) return true;
    if (name.size() > t.size() && name.compare(name.size() - t.size(), t.size(), t) == 0 &&
        name[name.size() - t.size() - 1] == '.') {
      return true;
    }
  }
  return false;
}

}  // namespace vramdoc::estimator
