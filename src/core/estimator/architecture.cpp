// Each family's weight tensors, as transformers (5.x) builds the model: names as PEFT matches
// them, shapes from the config. What a layer saves for backward: forward_layer.cpp and the ops of
// forward_ops.hpp.
#include "core/estimator/architecture.hpp"

#include <algorithm>

#include "core/estimator/encoders.hpp"
#include "core/estimator/hybrid.hpp"
#include "core/estimator/ssm.hpp"
#include "core/units.hpp"

namespace vramdoc::estimator {

namespace {

using u64 = std::uint64_t;
u64 mul(u64 a, u64 b) { return saturating_mul(a, b); }

// A Linear of every layer in `count` layers, with its bias when `bias`.
void linear(std::vector<WeightTensor>& w, const std::string& name, u64 in, u64 out, u64 count, bool bias) {
  if (count == 0) return;
  w.push_back({name, in, out, count, true, false, true});
  if (bias) w.push_back({name + ".bias", 1, out, count, false, false, false});
}

void add_gpt2_weights(const ModelConfig& m, std::vector<WeightTensor>& w) {
  const u64 h = m.hidden_size, L = m.num_layers, I = m.intermediate_size;
  w.push_back({"wte", m.vocab_size, h, 1, false, false, false});
  w.push_back({"wpe", m.max_positions, h, 1, false, false, false});
  auto layer_norm = [&](const std::string& name) {
    w.push_back({name, 1, h, L, false, false, false});
    w.push_back({name + ".bias", 1, h, L, false, false, false});
  };
  layer_norm("ln_1");  // each layer's parameters in model.parameters() order
  linear(w, "c_attn", h, h + 2 * mul(m.num_kv_heads, m.head_dim), L, true);  // GPT-BigCode's multi-query: one K/V head
  linear(w, "attn.c_proj", h, h, L, true);
  layer_norm("ln_2");
  linear(w, "c_fc", h, I, L, true);
  linear(w, "mlp.c_proj", I, h, L, true);
  if (!m.post_norm) w.push_back({"ln_f", 1, 2 * h, 1, false, false, false});  // (OpenAI GPT has none)
  w.push_back({"lm_head", h, m.vocab_size, 1, true, m.tie_word_embeddings, false});
}

void add_attention_weights(const ModelConfig& m, std::vector<WeightTensor>& w) {
  const u64 h = m.hidden_size, L = m.num_layers, q = mul(m.num_heads, m.head_dim), kv = mul(m.num_kv_heads, m.head_dim);
  if (m.mla.kv_lora_rank > 0) {
    const LatentAttention& a = m.mla;
    const u64 qk = mul(m.num_heads, a.qk_nope_head_dim + a.qk_rope_head_dim);
    if (a.q_lora_rank > 0) {
      linear(w, "q_a_proj", h, a.q_lora_rank, L, false);
      w.push_back({"q_a_layernorm", 1, a.q_lora_rank, L, false, false, false});
      linear(w, "q_b_proj", a.q_lora_rank, qk, L, false);
    } else {
      linear(w, "q_proj", h, qk, L, false);
    }
    linear(w, "kv_a_proj_with_mqa", h, a.kv_lora_rank + a.qk_rope_head_dim, L, false);
    w.push_back({"kv_a_layernorm", 1, a.kv_lora_rank, L, false, false, false});
    linear(w, "kv_b_proj", a.kv_lora_rank, mul(m.num_heads, a.qk_nope_head_dim + a.v_head_dim), L, false);
    linear(w, "o_proj", mul(m.num_heads, a.v_head_dim), h, L, false);
    return;
  }
  if (m.attention_experts > 0) {  // JetMoeAttention: JetMoeMoA (its router, the experts' 3-D input_linear (query) and
    // output_linear weights, its bias), then kv_proj (modeling_jetmoe.py JetMoeMoA.__init__, JetMoeAttention.__init__)
    const u64 E = m.attention_experts, LE = mul(L, E);
    w.push_back({"experts.router", h, E, L, true, false, false, false});
    w.push_back({"experts.input_linear", h, kv, LE, true, false, true, false});
    w.push_back({"experts.output_linear", kv, h, LE, true, false, true, false});
    w.push_back({"experts.bias", 1, h, L, false, false, false});
    linear(w, "kv_proj", h, 2 * kv, L, false);
    return;
  }
  if (m.fused_qkv) {
    const char* fused = m.family == Family::Phi3 || m.family == Family::Codegen ? "qkv_proj" : m.family == Family::Mpt ? "Wqkv" : "query_key_value";
    linear(w, fused, h, q + 2 * kv, L, m.attention_bias);
  } else {
    linear(w, "q_proj", h, q, L, m.attention_bias);
    linear(w, "k_proj", h, kv, L, m.attention_bias);
    linear(w, "v_proj", h, kv, L, m.attention_bias);
  }
  linear(w, std::string(attention_output_name(m.family)), q, h, L, m.output_bias);
  if (m.qk_norm == QkNorm::PerHead && m.family == Family::Cohere) {  // CohereLayerNorm((heads, head_dim))
    w.push_back({"q_norm, k_norm", 1, q + kv, L, false, false, false});
  } else if (m.qk_norm == QkNorm::PerHead && m.family != Family::Llama4) {  // (Llama4TextL2Norm has no weight)
    w.push_back({"q_norm, k_norm", 1, 2 * m.head_dim, L, false, false, false});
  }
  if (m.qk_norm == QkNorm::Full) w.push_back({"q_norm, k_norm", 1, q + kv, L, false, false, false});
  if (m.attention_sinks) w.push_back({"sinks", 1, m.num_heads, L, false, false, false});  // GptOssAttention.sinks
}

// The first and second Linear of a plain (non-gated) MLP, as each family names them.
std::pair<const char*, const char*> plain_mlp_names(Family f) {
  if (f == Family::Phi || f == Family::Opt || f == Family::Biogpt || f == Family::Xglm) return {"fc1", "fc2"};
  if (f == Family::Starcoder2) return {"c_fc", "c_proj"};
  if (gptj_style(f)) return {"fc_in", "fc_out"};
  if (f == Family::Nemotron || f == Family::Mpt || f == Family::Generic) return {"up_proj", "down_proj"};  // Arcee
  return {"dense_h_to_4h", "dense_4h_to_h"};
}

void add_mlp_weights(const ModelConfig& m, u64 layers, u64 inter, const std::string& prefix, std::vector<WeightTensor>& w) {
  const u64 h = m.hidden_size;
  if (m.mlp != MlpKind::Gated) {
    auto [first, second] = plain_mlp_names(m.family);
    linear(w, first, h, inter, layers, m.mlp_bias);
    linear(w, second, inter, h, layers, m.mlp_bias);
  } else if (m.family == Family::Phi3 || m.fused_gate_up) {
    linear(w, prefix + "gate_up_proj", h, 2 * inter, layers, m.mlp_bias);
    linear(w, prefix + "down_proj", inter, h, layers, m.mlp_bias);
  } else {
    linear(w, prefix + "gate_proj", h, inter, layers, m.mlp_bias);
    linear(w, prefix + "up_proj", h, inter, layers, m.mlp_bias);
    linear(w, prefix + "down_proj", inter, h, layers, m.mlp_bias);
  }
}

// Routed experts as transformers 5 stores them (3-D gate_up_proj / down_proj per layer), the
// router and the shared expert.
void add_moe_weights(const ModelConfig& m, u64 layers, std::vector<WeightTensor>& w) {
  if (layers == 0) return;
  const u64 h = m.hidden_size, E = m.num_experts, I = m.moe_intermediate_size, LE = mul(layers, E);
  w.push_back({"gate", h, E, layers, true, false, false, false});
  if (m.expert_biases) w.push_back({"router.bias", 1, E, layers, false, false, false});  // GptOssTopKRouter.bias
  if (m.expert_score_bias) {  // Ernie4_5_MoeStatics: requires_grad=False, so no gradient and no optimizer state
    WeightTensor bias{"moe_statics.e_score_correction_bias", 1, E, layers, false, false, false, false};
    bias.gradient = false;
    w.push_back(bias);
  }
  w.push_back({"experts.gate_up_proj", h, 2 * I, LE, true, false, true, false});
  if (m.expert_biases) w.push_back({"experts.gate_up_proj_bias", 1, 2 * I, LE, false, false, false});
  w.push_back({"experts.down_proj", I, h, LE, true, false, true, false});
  if (m.expert_biases) w.push_back({"experts.down_proj_bias", 1, h, LE, false, false, false});
  if (m.expert_output_bias) w.push_back({"mlp.bias", 1, h, layers, false, false, false});  // JetMoeMoE.bias
  if (m.shared_expert_intermediate > 0) {
    const bool qwen = m.shared_expert_gate;
    add_mlp_weights(m, layers, m.shared_expert_intermediate, qwen ? "shared_expert." : "shared_experts.", w);
    if (qwen) w.push_back({"shared_expert_gate", h, 1, layers, true, false, false, false});
  }
}

u64 norms_per_layer(const ModelConfig& m) {
  if (m.sandwich_norms) return 4;
  if (m.post_norms_only) return 2;
  return m.parallel_residual && m.shared_norm ? 1 : 2;
}

// The embeddings and what is built with them (OPT's positions and projections, BLOOM's norm).
void add_embedding_weights(const ModelConfig& m, std::vector<WeightTensor>& w) {
  const u64 h = m.hidden_size, e = m.embed_proj_dim > 0 ? m.embed_proj_dim : h;
  w.push_back({"embed_tokens", m.vocab_size, e, 1, false, false, false});
  if (m.position_offset > 0) w.push_back({"embed_positions", m.max_positions + m.position_offset, h, 1, false, false, false});
  if (m.embed_proj_dim > 0) {  // OPTDecoder: project_out (hidden -> word_embed_proj_dim), project_in
    w.push_back({"project_out", h, e, 1, true, false, false});
    w.push_back({"project_in", e, h, 1, true, false, false});
  }
  if (m.embed_norm) w.push_back({"word_embeddings_layernorm", 1, 2 * h, 1, false, false, false});
}

void add_decoder_weights(const ModelConfig& m, std::vector<WeightTensor>& w) {
  const u64 h = m.hidden_size, L = m.num_layers;
  // (MPT's LayerNorms have no bias: norm_1.bias = None)
  const u64 norm_width = (m.norm == NormKind::LayerNorm || m.norm == NormKind::LayerNorm1P) && m.family != Family::Mpt &&
                         m.enc.norm_bias ? 2 : 1;  // (DBRX: LayerNorm(bias=False))
  add_embedding_weights(m, w);
  const std::size_t attention_first = w.size();
  add_attention_weights(m, w);
  if (!m.layer_mixer.empty()) add_mixer_weights(m, attention_first, w);  // a hybrid's mixers (hybrid_config.cpp)
  w.push_back({"layer norms", 1, mul(norms_per_layer(m) * norm_width, h), L, false, false, false});
  const u64 dense_layers = m.num_experts > 0 ? m.dense_layers : L;
  std::size_t first = w.size();
  add_mlp_weights(m, dense_layers, m.intermediate_size, "", w);
  if (m.mlp == MlpKind::Xielu) w.push_back({"act_fn.alpha_p, alpha_n", 1, 2, dense_layers, false, false, false});
  // BitNet (modular_bitnet.py): attn_sub_norm (hidden) before o_proj, ffn_sub_norm (intermediate) before down_proj
  if (m.sub_norms) w.push_back({"attn_sub_norm, ffn_sub_norm", 1, h + m.intermediate_size, L, false, false, false});
  for (std::size_t i = first; m.num_experts > 0 && i < w.size(); ++i) w[i].layers = LayerSet::Dense;
  first = w.size();
  if (m.num_experts > 0) add_moe_weights(m, L - dense_layers, w);
  for (std::size_t i = first; i < w.size(); ++i) w[i].layers = LayerSet::Moe;
  if (!m.post_norm) w.push_back({"norm", 1, norm_width * h, 1, false, false, false});  // OPT-350m has none
  w.push_back({"lm_head", m.embed_proj_dim > 0 ? m.embed_proj_dim : h, m.vocab_size, 1, true, m.tie_word_embeddings, false});
  if (m.lm_head_bias) w.push_back({"lm_head.bias", 1, m.vocab_size, 1, false, false, false});
}

// A checkpoint of an unknown family, tensor by tensor from its safetensors headers: 2-D tensors
// in the layers are Linears, 3-D ones stacked experts, the rest norms and biases.
void add_header_weights(const ModelConfig& m, std::vector<WeightTensor>& w) {
  for (const auto& t : m.header_tensors) {
    u64 rows = 1, cols = 1;
    for (std::size_t i = 0; i + 1 < t.shape.size(); ++i) rows = mul(rows, t.shape[i]);
    if (!t.shape.empty()) cols = t.shape.back();
    const bool in_layer = t.name.find(".layers.") != std::string::npos || t.name.find(".h.") != std::string::npos ||
                          t.name.find(".blocks.") != std::string::npos;
    const bool head = t.name.find("lm_head") != std::string::npos || t.name.find("embed_out") != std::string::npos;
    const bool matrix = t.shape.size() >= 2 && (in_layer || head);
    // nn.Linear stores (out, in): rows here are the output features for a 2-D tensor
    WeightTensor wt{t.name, t.shape.size() == 2 ? cols : rows, t.shape.size() == 2 ? rows : cols, 1, matrix, false,
                    matrix && in_layer, t.shape.size() == 2};
    if (!t.floating) wt.stored_bytes = t.bytes;
    if (t.name.find("embed") != std::string::npos && !head) wt.name = "embed_tokens:" + t.name;
    if (head) wt.name = "lm_head";
    w.push_back(wt);
  }
  if (m.tie_word_embeddings) w.push_back({"lm_head", m.hidden_size, m.vocab_size, 1, true, true, false});
}

}  // namespace

std::array<std::string_view, 3> projection_names(Family f) {
  switch (f) {
    case Family::Bert:
    case Family::Roberta: return {"query", "key", "value"};
    case Family::DistilBert: return {"q_lin", "k_lin", "v_lin"};
    case Family::DebertaV2: return {"query_proj", "key_proj", "value_proj"};
    case Family::T5: return {"q", "k", "v"};
    default: return {"q_proj", "k_proj", "v_proj"};
  }
}

std::string_view attention_output_name(Family f) {
  if (f == Family::Bert || f == Family::Roberta || f == Family::DebertaV2) return "attention.output.dense";
  if (f == Family::DistilBert) return "out_lin";
  if (f == Family::T5) return "o";
  if (f == Family::Bart || f == Family::Whisper) return "out_proj";
  if (f == Family::Phi || f == Family::Falcon || f == Family::GptNeox || f == Family::Bloom) return "dense";
  if (gptj_style(f) || f == Family::Opt || f == Family::Biogpt || f == Family::Xglm) return "out_proj";
  return "o_proj";
}

std::vector<WeightTensor> describe_weights(const ModelConfig& model) {
  std::vector<WeightTensor> w;
  if (model.kind != ModelKind::Decoder) {
    add_encoder_weights(model, w);
  } else if (gpt2_style(model.family)) {
    add_gpt2_weights(model, w);
  } else if (model.family == Family::Mamba) {
    add_ssm_weights(model, w);  // ssm_config.cpp
  } else if (model.family == Family::FromHeaders) {
    add_header_weights(model, w);
  } else {
    add_decoder_weights(model, w);
  }
  return w;
}

std::vector<std::pair<LayerKind, std::uint64_t>> layer_kinds(const ModelConfig& m) {
  if (!m.layer_mixer.empty()) {  // a hybrid: each (mixer, experts) pair its layers list (hybrid_config.cpp)
    std::vector<std::pair<LayerKind, u64>> kinds;
    for (std::size_t i = 0; i < m.layer_mixer.size(); ++i) {
      LayerKind k{};
      k.moe = i < m.layer_moe.size() ? m.layer_moe[i] : m.num_experts > 0 && i >= m.dense_layers;
      k.mixer = m.layer_mixer[i];
      auto same = std::find_if(kinds.begin(), kinds.end(), [&](const auto& e) { return e.first.moe == k.moe && e.first.mixer == k.mixer; });
      if (same != kinds.end()) ++same->second;
      else kinds.push_back({k, 1});
    }
    return kinds;
  }
  const u64 L = m.num_layers, moe = m.num_experts > 0 ? L - m.dense_layers : 0;
  const u64 sliding = m.sliding_window > 0 ? std::min(m.sliding_layers, L) : 0;
  // Sliding and MoE layers are spread independently; counts per kind are what the estimate needs.
  const u64 moe_sliding = L == 0 ? 0 : moe * sliding / L;
  std::vector<std::pair<LayerKind, u64>> kinds;
  for (auto [k, n] : {std::pair{LayerKind{true, true}, moe_sliding}, std::pair{LayerKind{true, false}, moe - moe_sliding},
                      std::pair{LayerKind{false, true}, sliding - moe_sliding},
                      std::pair{LayerKind{false, false}, L - moe - sliding + moe_sliding}}) {
    if (n > 0) kinds.push_back({k, n});
  }
  return kinds;
}

std::vector<std::string> default_lora_targets(const ModelConfig& model) {
  switch (model.family) {  // peft/utils/constants.py TRANSFORMERS_MODELS_TO_LORA_TARGET_MODULES_MAPPING (PEFT 0.21)
    case Family::Gpt2:
    case Family::OpenaiGpt:  // (PEFT has no entry for openai-gpt: its fused c_attn, as GPT-2's)
    case Family::GptBigcode: return {"c_attn"};
    case Family::Phi3:
    case Family::Codegen: return {"qkv_proj"};
    case Family::Mpt: return {"Wqkv"};
    case Family::Phi: return {"q_proj", "v_proj", "fc1", "fc2"};
    case Family::Falcon:
    case Family::Bloom:
    case Family::GptNeox: return {"query_key_value"};
    case Family::Bert:
    case Family::Roberta: return {"query", "value"};
    case Family::DistilBert: return {"q_lin", "v_lin"};
    case Family::DebertaV2: return {"query_proj", "value_proj"};
    case Family::T5: return {"q", "v"};
    case Family::DeepseekV2:
    case Family::DeepseekV3: return {model.mla.q_lora_rank > 0 ? "q_b_proj" : "q_proj", "kv_b_proj"};
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
