// Each family's traits and fields, with transformers' (5.x) class defaults for the fields a
// config.json may leave out. The traits decide the tensors in architecture.cpp.
#include "core/estimator/families.hpp"

#include <algorithm>
#include <array>
#include <vector>

#include "core/estimator/config_fields.hpp"
#include "core/estimator/hybrid.hpp"
#include "core/estimator/ssm.hpp"
#include "core/units.hpp"

namespace vramdoc::estimator {

namespace {

using nlohmann::json;

struct FamilyName {
  std::string_view model_type;
  Family family;
};
constexpr std::array<FamilyName, 61> kFamilies = {{
    {"llama", Family::Llama},         {"mistral", Family::Mistral},       {"qwen2", Family::Qwen2},
    {"qwen3", Family::Qwen3},         {"gemma", Family::Gemma},           {"phi3", Family::Phi3},
    {"gpt2", Family::Gpt2},           {"mixtral", Family::Mixtral},       {"gemma2", Family::Gemma2},
    {"gemma3_text", Family::Gemma3},  {"qwen2_moe", Family::Qwen2Moe},    {"qwen3_moe", Family::Qwen3Moe},
    {"deepseek_v2", Family::DeepseekV2}, {"deepseek_v3", Family::DeepseekV3}, {"olmo2", Family::Olmo2},
    {"olmo3", Family::Olmo2},  // Olmo3DecoderLayer(Olmo2DecoderLayer): OLMo 2's layer, windowed by layer_types
    {"phi", Family::Phi},             {"falcon", Family::Falcon},         {"gpt_neox", Family::GptNeox},
    {"starcoder2", Family::Starcoder2}, {"bloom", Family::Bloom},           {"gptj", Family::Gptj},
    {"opt", Family::Opt},             {"cohere", Family::Cohere},         {"granite", Family::Granite},
    {"olmoe", Family::Olmoe},         {"smollm3", Family::Smollm3},       {"glm4", Family::Glm4},
    {"nemotron", Family::Nemotron},   {"gpt_bigcode", Family::GptBigcode}, {"granitemoe", Family::GraniteMoe},
    {"granitemoeshared", Family::GraniteMoe},  // GraniteMoeSharedDecoderLayer: GraniteMoe's + shared_mlp
    {"codegen", Family::Codegen},     {"mpt", Family::Mpt},               {"phimoe", Family::Phimoe},
    {"biogpt", Family::Biogpt},       {"xglm", Family::Xglm},           {"bert", Family::Bert},             {"roberta", Family::Roberta},
    {"recurrent_gemma", Family::RecurrentGemma}, {"jetmoe", Family::JetMoe},
    {"distilbert", Family::DistilBert}, {"deberta-v2", Family::DebertaV2}, {"vit", Family::Vit},
    {"swin", Family::Swin},           {"t5", Family::T5},                 {"bart", Family::Bart},
    {"whisper", Family::Whisper},     {"mamba", Family::Mamba},           {"falcon_mamba", Family::Mamba},
    {"mamba2", Family::Mamba},
    {"gpt_oss", Family::GptOss},      {"ernie4_5", Family::Ernie45},      {"glm", Family::Glm},
    {"vaultgemma", Family::Gemma2},  // VaultGemmaDecoderLayer(Gemma2DecoderLayer) without the post norms
    {"gpt_neox_japanese", Family::GptNeox},  // GPT-NeoX's layout: sequential blocks, no biases (set_traits)
    {"llama4_text", Family::Llama4},  {"hunyuan_v1_moe", Family::HunyuanMoe}, {"openai-gpt", Family::OpenaiGpt},
    {"", Family::Generic},            {"(safetensors headers)", Family::FromHeaders},
}};

using Size = std::optional<std::uint64_t>;

// Reads optional sizes into `out` in order (the first present name of each); the first error wins.
// Vectors, not nested initializer_lists: an inner list's storage would dangle inside the outer one.
Result<bool> read_sizes(const json& cfg, const std::string& source,
                        const std::vector<std::pair<Size*, std::vector<const char*>>>& wanted) {
  for (const auto& [out, names] : wanted) {
    *out = Size();
    for (const char* name : names) {
      auto v = fields::size(cfg, {name}, source);
      if (!v) return make_error(v.error());
      if (*v) {
        *out = *v;
        break;
      }
    }
  }
  return true;
}

// Layers whose layer_types entry is "sliding_attention" (Gemma 2/3, Qwen); all when absent. Their
// order goes to `pattern` when the list names every layer.
std::uint64_t count_sliding(const json& cfg, std::uint64_t layers, std::vector<bool>& pattern) {
  auto it = cfg.find("layer_types");
  if (it == cfg.end() || !it->is_array()) return layers;
  std::vector<bool> sliding;
  for (const auto& t : *it) sliding.push_back(t.is_string() && t.get<std::string>() == "sliding_attention");
  if (sliding.size() == layers) pattern = sliding;
  return static_cast<std::uint64_t>(std::count(sliding.begin(), sliding.end(), true));
}

// The decoder families of issue 28, each as its modeling_*.py (transformers 5.17) builds it.
void set_decoder_traits(ModelConfig& m, const json& cfg) {
  switch (m.family) {
    case Family::Bloom:  // BloomBlock: LayerNorms, fused query_key_value, ALiBi in baddbmm, BloomGelu
      m.norm = NormKind::LayerNorm, m.mlp = MlpKind::BloomGelu, m.fused_qkv = true, m.embed_norm = m.alibi = true;
      m.attention_bias = m.output_bias = m.mlp_bias = true;
      break;
    case Family::Gptj:  // GPTJBlock: ln_1 for attention and MLP side by side; _attn in fp32; lm_head with bias
    case Family::Codegen:  // CodeGenBlock: the same, q / k / v from one qkv_proj (modeling_codegen.py:82, 180-187)
      m.norm = NormKind::LayerNorm, m.mlp = MlpKind::NewGelu, m.parallel_residual = m.shared_norm = true;
      m.mlp_bias = m.lm_head_bias = m.fp32_attention = true;
      m.fused_qkv = m.family == Family::Codegen;
      break;
    case Family::Opt:  // OPTDecoderLayer: learned positions (offset 2), q * scaling, fc1 -> relu -> fc2
      m.norm = NormKind::LayerNorm, m.mlp = MlpKind::Relu, m.position_offset = 2, m.scaled_query = true;
      m.attention_bias = m.output_bias = m.mlp_bias = fields::flag(cfg, "enable_bias", true);
      m.post_norm = !fields::flag(cfg, "do_layer_norm_before", true);
      break;
    case Family::Cohere:  // CohereDecoderLayer: one CohereLayerNorm, attention and MLP side by side
      m.norm = NormKind::LayerNormFp32, m.parallel_residual = m.shared_norm = true;
      m.rope_fp32 = m.scaled_logits = true;
      if (fields::flag(cfg, "use_qk_norm", false)) m.qk_norm = QkNorm::PerHead;
      break;
    case Family::Granite:
    case Family::GraniteMoe:  // + Mixtral's routed experts (modeling_granitemoe.py:124-200, 368, 456)
      m.scaled_embeddings = m.scaled_residual = m.scaled_logits = true;
      break;
    case Family::Olmoe: m.qk_norm = QkNorm::Full; break;  // q_norm over the whole q, k_norm over k
    case Family::Llama4:  // Llama4TextAttention: apply_rotary_emb on q.float() / k.float() (complex), then
      // Llama4TextL2Norm (no weight) on q and k in the RoPE layers only, the NoPE layers' query times fp32
      // per-position scales with attn_temperature_tuning (modeling_llama4.py; Llama4TextConfig: use_qk_norm True)
      m.rope_fp32 = true;
      if (fields::flag(cfg, "use_qk_norm", true)) m.qk_norm = QkNorm::PerHead;
      m.nope_temperature = fields::flag(cfg, "attn_temperature_tuning", true);
      break;
    case Family::OpenaiGpt:  // OpenAIGPTModel's Block (modeling_openai.py): n = ln_1(x + attn(x)), ln_2(n + mlp(n)); no
      // final norm; ACT_FNS' "gelu" is gelu_new; Attention._attn its own eager scores (no SDPA)
      m.post_norm = true, m.mlp = MlpKind::NewGelu;
      break;
    case Family::HunyuanMoe: m.qk_norm = QkNorm::PerHead; break;  // HunYuanMoEV1Attention: query_layernorm and
      // key_layernorm over head_dim, always built (modular_hunyuan_v1_moe.py)
    case Family::Glm4: m.sandwich_norms = m.fused_gate_up = true; break;  // post_self_attn / post_mlp norms
    case Family::Glm: m.fused_gate_up = true; break;  // GlmMLP: gate_up_proj, chunk, up * act(gate) (modeling_glm.py)
    case Family::Nemotron: m.norm = NormKind::LayerNorm1P, m.mlp = MlpKind::Relu2; break;
    case Family::Ernie45:  // apply_rotary_pos_emb "in fp32": (q.float() * cos) + (rotate_half(q).float() * sin), cast
      // back; each upcast a temporary of its own (modeling_ernie4_5.py; the layout is Llama's)
      m.rope_fp32 = m.enc.rope_upcast_inline = true;
      break;
    case Family::GptOss:  // GptOssAttention's sinks (eager_attention_forward), GptOssRMSNorm: (weight * h).to(dtype)
      // in fp32; GptOssTopKRouter and GptOssExperts with biases (modeling_gpt_oss.py)
      m.attention_sinks = m.expert_biases = true, m.norm = NormKind::RmsFp32Weight;
      break;
    case Family::Biogpt:  // BioGptDecoderLayer: OPT's pre-norm layer with fc1 -> gelu -> fc2, biases; scaled embeddings
      m.norm = NormKind::LayerNorm, m.mlp = MlpKind::Gelu, m.position_offset = 2;
      m.attention_bias = m.output_bias = m.mlp_bias = true;
      m.scaled_embeddings = fields::flag(cfg, "scale_embedding", true);
      break;
    case Family::Xglm:  // XGLMDecoderLayer: BioGPT's pre-norm layer (q * scaling, biases, fc1 -> act -> fc2), sinusoidal
      // positions (a buffer of max_position_embeddings + 2 rows, no parameter), its own eager attention (modeling_xglm.py)
      m.norm = NormKind::LayerNorm, m.scaled_query = true;
      m.mlp = MlpKind::Gelu;  // XGLMConfig activation_function: gelu
      m.attention_bias = m.output_bias = m.mlp_bias = true;
      m.scaled_embeddings = fields::flag(cfg, "scale_embedding", true);
      break;
    case Family::RecurrentGemma:  // RecurrentGemmaRMSNorm: Gemma's (x * (1 + w.float())) in fp32; the embeddings times
      // the normalizer buffer (modeling_recurrent_gemma.py RecurrentGemmaRMSNorm, RecurrentGemmaModel.forward); the
      // temporal blocks and the MLP's sizes: hybrid_config.cpp read_recurrent_blocks
      m.norm = NormKind::RmsFp32Weight, m.scaled_embeddings = true;
      break;
    case Family::Phimoe:  // Mixtral's layer with LayerNorms (weight and bias), biases as the config says (modeling_phimoe.py)
      m.norm = NormKind::LayerNorm, m.lm_head_bias = fields::flag(cfg, "lm_head_bias", false);
      m.attention_bias = m.output_bias = fields::flag(cfg, "attention_bias", false);
      break;
    case Family::Mpt:  // MptBlock: LayerNorms without bias, Wqkv, its own ALiBi attention, up -> gelu -> down, no biases
      m.norm = NormKind::LayerNorm, m.mlp = MlpKind::Gelu, m.fused_qkv = true;
      break;
    case Family::GptBigcode: {  // GPT-2's layout; multi_query: one key/value head in c_attn (modeling_gpt_bigcode.py:128, 158)
      m.norm = NormKind::LayerNorm;
      const auto act = cfg.find("activation_function");  // gelu_pytorch_tanh by default: the C++ kernel
      m.mlp = act != cfg.end() && act->is_string() && act->get<std::string>() == "gelu_new" ? MlpKind::NewGelu : MlpKind::Gelu;
      m.num_kv_heads = fields::flag(cfg, "multi_query", true) ? 1 : m.num_heads;  // (num_key_value_heads is not read)
      break;
    }
    default: break;
  }
}

// SmolLM3's no_rope_layers (1: RoPE, 0: none), or every no_rope_layer_interval-th layer without.
std::vector<bool> nope_layers(const json& cfg, std::uint64_t layers) {
  std::vector<bool> nope;
  if (auto it = cfg.find("no_rope_layers"); it != cfg.end() && it->is_array() && it->size() == layers) {
    for (const auto& v : *it) nope.push_back(v.is_number() && v.get<double>() == 0);
    return nope;
  }
  std::uint64_t interval = 4;
  if (auto it = cfg.find("no_rope_layer_interval"); it != cfg.end() && it->is_number_unsigned() && it->get<std::uint64_t>() > 0) {
    interval = it->get<std::uint64_t>();
  }
  for (std::uint64_t i = 0; i < layers; ++i) nope.push_back((i + 1) % interval == 0);
  return nope;
}

void set_traits(ModelConfig& m, const json& cfg) {
  switch (m.family) {
    case Family::Gemma2:
    case Family::Gemma3:
      // (modular_vaultgemma.py: VaultGemmaDecoderLayer deletes post_attention_layernorm and post_feedforward_layernorm)
      m.norm = NormKind::RmsFp32Weight, m.sandwich_norms = m.model_type != "vaultgemma";
      m.qk_norm = m.family == Family::Gemma3 ? QkNorm::PerHead : QkNorm::None;
      break;
    case Family::Gemma: m.norm = NormKind::RmsFp32Weight; break;
    case Family::Qwen3:
    case Family::Qwen3Moe: m.qk_norm = QkNorm::PerHead; break;
    case Family::Olmo2: m.norm = NormKind::RmsFp32Weight, m.post_norms_only = true, m.qk_norm = QkNorm::Full; break;
    case Family::Phi3: m.fused_qkv = true; break;
    case Family::Phi:
      m.norm = NormKind::LayerNorm, m.mlp = MlpKind::NewGelu, m.parallel_residual = m.shared_norm = true;
      m.attention_bias = m.output_bias = m.mlp_bias = m.lm_head_bias = true;
      break;
    case Family::Falcon: {
      m.norm = NormKind::LayerNorm, m.mlp = MlpKind::Gelu, m.fused_qkv = true;
      m.attention_bias = m.output_bias = m.mlp_bias = fields::flag(cfg, "bias", false);
      const bool new_arch = fields::flag(cfg, "new_decoder_architecture", false);
      m.parallel_residual = new_arch || fields::flag(cfg, "parallel_attn", true);
      auto lns = cfg.find("num_ln_in_parallel_attn");
      const bool two_lns = new_arch && !(lns != cfg.end() && lns->is_number() && lns->get<double>() == 1);
      m.shared_norm = m.parallel_residual && !two_lns;
      m.kv_broadcast_to_heads = new_arch;  // _split_heads: torch.broadcast_to(key, query.shape).flatten(2, 3)
      m.alibi_mask = fields::flag(cfg, "alibi", false);  // FalconModel.forward: masked_fill(alibi / sqrt(head_dim), ...)
      break;
    }
    case Family::GptNeox:
      m.norm = NormKind::LayerNorm, m.mlp = MlpKind::Gelu, m.fused_qkv = true;
      m.attention_bias = m.output_bias = m.mlp_bias = true;
      m.parallel_residual = fields::flag(cfg, "use_parallel_residual", true);
      if (m.model_type == "gpt_neox_japanese") {  // modeling_gpt_neox_japanese.py: query_key_value, dense, dense_h_to_4h
        // and dense_4h_to_h without bias (the last layer's dense_bias, hidden_size, is left out), attention then MLP on
        // post_attention_layernorm(attn_output), each added to the stream
        m.attention_bias = m.output_bias = m.mlp_bias = false, m.parallel_residual = false;
      }
      break;
    case Family::Starcoder2:
      m.norm = NormKind::LayerNorm, m.mlp = MlpKind::Gelu;
      m.attention_bias = m.output_bias = m.mlp_bias = fields::flag(cfg, "use_bias", true);
      break;
    default: set_decoder_traits(m, cfg); break;
  }
  // A decoder transformers has no reader for here: hidden_act relu2 is ACT2FN's ReLUSquaredActivation, which every
  // transformers decoder using it runs ungated, up_proj -> relu^2 -> down_proj (modeling_arcee.py ArceeMLP,
  // modeling_nemotron.py NemotronMLP, modeling_nemotron_h.py NemotronHMLP): no gate_proj.
  if (m.family == Family::Generic) {
    const auto act = cfg.find("hidden_act");
    // BitNet (modular_bitnet.py): BitNetMLP is GemmaMLP, gated, with ReLU^2, and normalises its product
    // (ffn_sub_norm) before down_proj; BitNetAttention its output (attn_sub_norm) before o_proj
    m.sub_norms = m.model_type == "bitnet";
    if (act != cfg.end() && act->is_string() && act->get<std::string>() == "relu2" && !m.sub_norms) m.mlp = MlpKind::Relu2;
    // hidden_act xielu: ACT2CLS's XIELUActivation, used by ApertusMLP only (up_proj -> xIELU -> down_proj, the
    // activation's alpha_p and alpha_n per layer), whose attention normalises q and k per head (ApertusAttention
    // q_norm / k_norm, modeling_apertus.py:43-56, 233-251)
    if (act != cfg.end() && act->is_string() && act->get<std::string>() == "xielu") m.mlp = MlpKind::Xielu, m.qk_norm = QkNorm::PerHead;
    // StableLmConfig's use_qkv_bias and use_parallel_residual: StableLmDecoderLayer's nn.LayerNorm norms (with
    // biases), q / k / v with a bias and o_proj without, one input_layernorm for attention and MLP side by side with
    // use_parallel_residual, StableLmLayerNormPerHead on q and k with qk_layernorm (modeling_stablelm.py)
    if (cfg.contains("use_qkv_bias") && cfg.contains("use_parallel_residual")) {
      m.norm = NormKind::LayerNorm;
      m.attention_bias = fields::flag(cfg, "use_qkv_bias", false), m.output_bias = m.mlp_bias = false;
      m.parallel_residual = m.shared_norm = fields::flag(cfg, "use_parallel_residual", false);
      if (fields::flag(cfg, "qk_layernorm", false)) m.qk_norm = QkNorm::PerHead;
    }
  }
}

// Ernie4_5_MoeDecoderLayer.__init__ (modeling_ernie4_5_moe.py): the experts in the layers moe_layer_start_index <= i
// <= moe_layer_end_index with (i + 1) % moe_layer_interval == 0, Ernie4_5_MoeMLP in the others; each MoE layer's
// moe_statics.e_score_correction_bias, a (1, experts) fp32 Parameter without gradient (Ernie4_5_MoeConfig defaults:
// start 1, end num_hidden_layers - 1, interval 1).
Result<bool> read_moe_layer_range(ModelConfig& m, const json& cfg, const std::string& source) {
  if (!cfg.contains("moe_layer_start_index") || m.num_experts == 0) return true;
  auto start = fields::count(cfg, "moe_layer_start_index", source);
  auto end = fields::count(cfg, "moe_layer_end_index", source);
  auto interval = fields::size(cfg, {"moe_layer_interval"}, source);
  if (!start) return make_error(start.error());
  if (!end) return make_error(end.error());
  if (!interval) return make_error(interval.error());
  const std::uint64_t first = start->value_or(1), last = end->value_or(m.num_layers > 0 ? m.num_layers - 1 : 0);
  const std::uint64_t every = std::max<std::uint64_t>(interval->value_or(1), 1);
  m.layer_moe.clear();
  std::uint64_t dense = 0;
  for (std::uint64_t i = 0; i < m.num_layers; ++i) {
    m.layer_moe.push_back((i + 1) % every == 0 && i >= first && i <= last);
    dense += m.layer_moe.back() ? 0 : 1;
  }
  m.dense_layers = dense;
  m.expert_score_bias = true;
  if (dense == m.num_layers) m.num_experts = 0, m.layer_moe.clear(), m.expert_score_bias = false;
  return true;
}

// Llama4TextConfig and Llama4TextDecoderLayer (modeling_llama4.py): the routed experts' width and the shared expert's are
// intermediate_size, the dense layers' Llama4TextMLP intermediate_size_mlp (default 16384); the MoE layers are
// moe_layers (else every interleave_moe_layer_step-th, from step - 1); no_rope_layers (0: NoPE) as SmolLM3's.
Result<bool> read_llama4_layers(ModelConfig& m, const json& cfg, const std::string& source) {
  Size mlp, step;
  if (auto ok = read_sizes(cfg, source, {{&mlp, {"intermediate_size_mlp"}}, {&step, {"interleave_moe_layer_step"}}}); !ok) {
    return make_error(ok.error());
  }
  m.layer_nope = nope_layers(cfg, m.num_layers);
  m.moe_intermediate_size = m.shared_expert_intermediate = m.intermediate_size;
  m.intermediate_size = mlp.value_or(16384);
  m.dense_experts = true;
  m.layer_moe.assign(m.num_layers, false);
  if (auto it = cfg.find("moe_layers"); it != cfg.end() && it->is_array()) {
    for (const auto& v : *it) {
      if (!v.is_number_unsigned() || v.get<std::uint64_t>() >= m.num_layers) {
        return make_error("field 'moe_layers' in " + source + " must list layer indices below num_hidden_layers");
      }
      m.layer_moe[v.get<std::uint64_t>()] = true;
    }
  } else {
    const std::uint64_t every = step.value_or(1);
    for (std::uint64_t i = every - 1; i < m.num_layers; i += every) m.layer_moe[i] = true;
  }
  const auto moe = static_cast<std::uint64_t>(std::count(m.layer_moe.begin(), m.layer_moe.end(), true));
  m.dense_layers = m.num_layers - moe;
  if (moe == 0) m.num_experts = 0, m.layer_moe.clear(), m.dense_experts = false, m.shared_expert_intermediate = 0;
  return true;
}

// Routed experts, their width, shared experts and the layers that stay dense.
Result<bool> read_experts(ModelConfig& m, const json& cfg, const std::string& source) {
  Size experts, per_token, moe_inter, shared_inter, shared_n, shared_mlp, first_dense, step;
  // (Ernie4_5_MoeConfig: moe_num_experts, moe_k, moe_num_shared_experts)
  if (auto ok = read_sizes(cfg, source, {{&experts, {"num_local_experts", "num_experts", "n_routed_experts", "moe_num_experts"}},
                                         {&per_token, {"num_experts_per_tok", "moe_k"}},
                                         {&moe_inter, {"moe_intermediate_size"}},
                                         {&shared_inter, {"shared_expert_intermediate_size"}},
                                         {&shared_n, {"n_shared_experts", "moe_num_shared_experts"}},
                                         {&shared_mlp, {"shared_intermediate_size"}},
                                         {&step, {"decoder_sparse_step"}}});
      !ok) {
    return make_error(ok.error());
  }
  auto first = fields::count(cfg, "first_k_dense_replace", source);
  if (!first) return make_error(first.error());
  // DogeConfig (and any config with the flag): is_moe false keeps the dense MLP whatever num_experts says (Doge's
  // default num_experts is 16384: read as experts, its estimate was 500 times too large)
  if (!fields::flag(cfg, "is_moe", true)) return true;
  first_dense = *first;
  if (m.family != Family::Mixtral && m.family != Family::Phimoe && m.family != Family::Llama4 && !experts) return true;
  // PhimoeConfig and Llama4TextConfig: 16 local experts; Llama 4 routes each token to 1
  m.num_experts = experts.value_or(m.family == Family::Phimoe || m.family == Family::Llama4 ? 16 : 8);
  m.experts_per_token = per_token.value_or(m.family == Family::Llama4 ? 1 : 2);
  if (m.family == Family::HunyuanMoe) {  // HunYuanMoEV1Config moe_topk: an int, or one per layer (the largest read)
    if (auto it = cfg.find("moe_topk"); it != cfg.end()) {
      std::uint64_t top = 0;
      for (const auto& v : it->is_array() ? *it : json::array({*it})) {
        if (!v.is_number_unsigned() || v.get<std::uint64_t>() == 0) return make_error("field 'moe_topk' in " + source + " must be a positive integer or a list of them");
        top = std::max(top, v.get<std::uint64_t>());
      }
      if (top > 0) m.experts_per_token = top;
    }
    m.shared_expert_intermediate = m.intermediate_size;  // HunYuanMoEV1Moe: shared_mlp = HunYuanMoEV1MLP(config), always
  }
  if (m.experts_per_token > m.num_experts) {
    const char* name = cfg.contains("num_experts_per_tok") || (!cfg.contains("moe_k") && !cfg.contains("moe_topk")) ? "num_experts_per_tok"
                       : cfg.contains("moe_k") ? "moe_k" : "moe_topk";
    return make_error("field '" + std::string(name) + "' in " + source + " exceeds the number of experts");
  }
  m.moe_intermediate_size = moe_inter.value_or(m.intermediate_size);
  if (m.family == Family::Qwen2Moe && shared_inter) m.shared_expert_intermediate = *shared_inter, m.shared_expert_gate = true;
  if (shared_n) m.shared_expert_intermediate = *shared_n * m.moe_intermediate_size;
  // GraniteMoeSharedMLP (modeling_granitemoeshared.py): input_linear hidden -> 2 x shared_intermediate_size, chunked
  // into gate and up, output_linear back, added to the routed experts' output (0: no shared_mlp)
  if (shared_mlp) m.shared_expert_intermediate = *shared_mlp;
  std::uint64_t dense = first_dense.value_or(0);
  if (auto it = cfg.find("mlp_only_layers"); it != cfg.end() && it->is_array()) dense += it->size();
  if (step && *step > 1) dense += m.num_layers - m.num_layers / *step;
  m.dense_layers = std::min(dense, m.num_layers);
  return read_moe_layer_range(m, cfg, source);
}

// DBRX's nested blocks (DbrxConfig's attn_config / ffn_config, configuration_dbrx.py; modular_dbrx.py): a decoder
// whose ffn_config has moe_num_experts routes every layer's feed-forward to that many experts of ffn_hidden_size
// (DbrxExpertGLU's w1, v1, w2: Mixtral's gate_up / down sizes), moe_top_k per token; attn_config's kv_n_heads, its
// clip_qkv (the fused Wqkv's output clamped: a tensor of its own); nn.LayerNorm(d_model, bias=False) norms.
Result<bool> read_nested_moe(ModelConfig& m, const json& cfg, const std::string& source) {
  const auto ffn = cfg.find("ffn_config");
  if (ffn == cfg.end() || !ffn->is_object() || !ffn->contains("moe_num_experts")) return true;
  Size experts, top_k, width, kv_heads;
  if (auto ok = read_sizes(*ffn, source, {{&experts, {"moe_num_experts"}}, {&top_k, {"moe_top_k"}},
                                          {&width, {"ffn_hidden_size"}}});
      !ok) {
    return make_error(ok.error());
  }
  m.num_experts = experts.value_or(4), m.experts_per_token = top_k.value_or(1);  // DbrxFFNConfig defaults
  m.moe_intermediate_size = width.value_or(3584), m.dense_layers = 0;
  if (m.experts_per_token > m.num_experts) return make_error("field 'moe_top_k' in " + source + " exceeds moe_num_experts");
  if (const auto attn = cfg.find("attn_config"); attn != cfg.end() && attn->is_object()) {
    if (auto ok = read_sizes(*attn, source, {{&kv_heads, {"kv_n_heads"}}}); !ok) return make_error(ok.error());
    if (kv_heads) {
      if (*kv_heads > m.num_heads || m.num_heads % *kv_heads != 0) {
        return make_error("field 'kv_n_heads' in " + source + " must divide n_heads");
      }
      m.num_kv_heads = *kv_heads;
    }
    m.clip_qkv = fields::positive_number(*attn, "clip_qkv");
  }
  m.fused_qkv = true, m.norm = NormKind::LayerNorm, m.enc.norm_bias = false;
  return true;
}

Result<bool> read_latent_attention(ModelConfig& m, const json& cfg, const std::string& source) {
  Size q_lora, kv_lora, nope, rope, v;
  if (auto ok = read_sizes(cfg, source, {{&q_lora, {"q_lora_rank"}}, {&kv_lora, {"kv_lora_rank"}},
                                         {&nope, {"qk_nope_head_dim"}}, {&rope, {"qk_rope_head_dim"}},
                                         {&v, {"v_head_dim"}}});
      !ok) {
    return make_error(ok.error());
  }
  if (!kv_lora || !nope || !rope || !v) {
    return make_error(source + ": a " + m.model_type + " config needs kv_lora_rank, qk_nope_head_dim, qk_rope_head_dim and v_head_dim");
  }
  m.mla = {q_lora.value_or(0), *kv_lora, *nope, *rope, *v};
  m.head_dim = *nope + *rope;
  m.num_kv_heads = m.num_heads;  // the decompressed keys and values have every head
  return true;
}

// The elements of each head RoPE rotates: qk_rope_head_dim (DeepSeek), head_dim x
// partial_rotary_factor (Phi: 0.5 by default) or rotary_pct (GPT-NeoX: 0.25); GPT-2 and Falcon
// with ALiBi have none.
std::uint64_t rotary_dims(const ModelConfig& m, const json& cfg) {
  if (gpt2_style(m.family) || m.family == Family::Bloom || m.family == Family::Opt || m.family == Family::Mpt ||
      m.family == Family::Biogpt || m.family == Family::Xglm ||
      (m.family == Family::Falcon && fields::flag(cfg, "alibi", false))) {
    return 0;
  }
  if (m.mla.kv_lora_rank > 0) return m.mla.qk_rope_head_dim;
  if (gptj_style(m.family)) {  // rotary_dim (null: the whole head)
    auto it = cfg.find("rotary_dim");
    return it != cfg.end() && it->is_number_unsigned() && it->get<std::uint64_t>() > 0
               ? std::min<std::uint64_t>(it->get<std::uint64_t>(), m.head_dim) : m.head_dim;
  }
  const bool neox = m.family == Family::GptNeox && m.model_type != "gpt_neox_japanese";  // (its config: rotary_pct 1.0)
  const char* name = neox ? "rotary_pct" : "partial_rotary_factor";
  double fraction = neox ? 0.25
                    : m.family == Family::Phi || m.family == Family::Glm4 || m.family == Family::Glm ||
                              m.family == Family::Nemotron || m.family == Family::RecurrentGemma ? 0.5 : 1.0;
  // (GlmConfig's and RecurrentGemmaConfig's partial_rotary_factor: 0.5)
  if (auto it = cfg.find(name); it != cfg.end() && it->is_number() && it->get<double>() > 0 && it->get<double>() <= 1) {
    fraction = it->get<double>();
  }
  return std::max<std::uint64_t>(static_cast<std::uint64_t>(static_cast<double>(m.head_dim) * fraction), 2);
}

}  // namespace

Family family_of(std::string_view model_type) {
  for (const auto& f : kFamilies) {
    if (f.model_type == model_type && f.family != Family::FromHeaders) return f.family;
  }
  return Family::Generic;
}

std::string_view family_name(Family family) {
  if (family == Family::Cnn) return "cnn";  // convolutional classifiers (cnn.hpp)
  for (const auto& f : kFamilies) {
    if (f.family == family) return f.model_type.empty() ? std::string_view("generic decoder") : f.model_type;
  }
  return "generic decoder";
}

std::uint64_t family_uncertainty_percent(const ModelConfig& m) {
  if (m.stand_in) return 30;  // an unknown model_type with an encoder: read as BERT, BART or ViT
  switch (m.family) {  // docs/estimator.md, "Families of issue 28": the measured process error beyond the 8 % margin
    case Family::Generic: return 30;
    case Family::FromHeaders: return 20;
    case Family::Swin:
    case Family::T5:
    case Family::Bart:
    case Family::Whisper:
    case Family::DebertaV2: return 15;  // coarse: encoder-decoders' and Swin's layers in one shape, DeBERTa's relative attention
    case Family::GptOss: return 15;     // allocated within 0.1 %; process -14 % in inference (reserved: its 2 GiB score blocks)
    case Family::Mamba: return 5;       // Mamba measured within 2.2 %; FalconMamba modelled from the code only; Mamba2
                                        // within 1 % on two cases of one size and chunk count (docs/estimator.md, "Mamba2")
    case Family::Glm4:
    case Family::Nemotron:
    case Family::GptBigcode:
    case Family::GraniteMoe:
    case Family::Codegen:
    case Family::Mpt:
    case Family::Phimoe:
    case Family::Biogpt:
    case Family::Xglm:
    case Family::RecurrentGemma:
    case Family::JetMoe:
    case Family::Llama4:
    case Family::HunyuanMoe:
    case Family::OpenaiGpt:
    case Family::Roberta: return 5;     // held out: modelled from the code only
    default: return 0;
  }
}

void attach_header_tensors(ModelConfig& m) {
  if (m.family != Family::Generic || m.header_tensors.empty()) return;
  m.family = Family::FromHeaders;
  for (auto& w : m.warnings) {
    if (w.rfind("unknown model_type", 0) == 0) {
      w = "unknown model_type '" + m.model_type + "': weights sized tensor by tensor from the safetensors headers; "
          "activations estimated for a llama-style layer of the config's widths";
    }
  }
}

Result<bool> apply_family(ModelConfig& m, const json& cfg, const std::string& source) {
  if (m.family == Family::Mamba) {  // no attention, no MLP: MambaMixer's selective scan (ssm_config.cpp, forward_ssm.cpp)
    // MambaConfig: tied by default; Mamba2Config: tie_word_embeddings = False (configuration_mamba2.py)
    m.tie_word_embeddings = fields::flag(cfg, "tie_word_embeddings", m.model_type != "mamba2");
    m.generate_with_cache = fields::flag(cfg, "use_cache", true);
    m.rotary_dims = 0;
    return read_ssm_config(m, cfg, source);
  }
  set_traits(m, cfg);
  const bool gpt2 = gpt2_style(m.family);
  Size inter, positions;
  if (auto ok = read_sizes(cfg, source, {{&inter, {"intermediate_size", "n_inner", "ffn_dim", "ffn_hidden_size"}},
                                         {&positions, {"n_positions", "max_position_embeddings"}}});
      !ok) {
    return make_error(ok.error());
  }
  auto window_field = fields::count(cfg, "sliding_window", source);  // 0 or null: no window
  if (!window_field) return make_error(window_field.error());
  const std::uint64_t window = window_field->value_or(0);
  if (m.model_type == "gpt_neox_japanese" && !inter) {  // GPTNeoXJapaneseMLP: int(hidden x intermediate_multiple_size)
    const auto it = cfg.find("intermediate_multiple_size");
    const double k = it != cfg.end() && it->is_number() && it->get<double>() > 0 && it->get<double>() < 1e3 ? it->get<double>() : 4.0;
    inter = static_cast<std::uint64_t>(static_cast<double>(m.hidden_size) * k);
  }
  if (m.family == Family::Mpt) {
    m.intermediate_size = 4 * m.hidden_size;  // MptMLP: 4 * hidden_size whatever expansion_ratio says (modeling_mpt.py)
  } else if (inter) {
    m.intermediate_size = *inter;
  } else if (gpt2 || m.family == Family::Falcon || m.family == Family::Generic || m.family == Family::Bloom ||
             gptj_style(m.family)) {
    m.intermediate_size = 4 * m.hidden_size;  // GPT2Config n_inner / FalconConfig ffn_hidden_size: None means 4 x hidden
  } else {
    return make_error("missing field 'intermediate_size' in " + source);
  }
  if (m.family == Family::Biogpt) m.max_positions = positions.value_or(1024);  // BioGptConfig max_position_embeddings
  if (gpt2 || m.family == Family::Opt) {
    if (!positions) return make_error("missing field '" + std::string(gpt2 ? "n_positions" : "max_position_embeddings") + "' in " + source);
    m.max_positions = *positions;
  }
  if (m.family == Family::Gptj) m.max_positions = positions.value_or(2048);  // GPTJConfig n_positions: embed_positions' rows
  if (m.family == Family::Opt) {
    Size proj;
    if (auto ok = read_sizes(cfg, source, {{&proj, {"word_embed_proj_dim"}}}); !ok) return make_error(ok.error());
    if (proj && *proj != m.hidden_size) m.embed_proj_dim = *proj;
    m.residual_dropout = fields::fraction(cfg, "dropout", 0.1);
  }
  if (m.family == Family::Smollm3) m.layer_nope = nope_layers(cfg, m.num_layers);
  if (m.family == Family::Xglm) m.residual_dropout = fields::fraction(cfg, "dropout", 0.1);  // XGLMConfig dropout
  if (m.family == Family::Biogpt) {  // hidden_dropout_prob after attention and fc2; the probabilities' through SDPA
    m.residual_dropout = fields::fraction(cfg, "hidden_dropout_prob", 0.1);
  }
  const bool windowed = m.family == Family::Mistral || m.family == Family::Starcoder2 || m.family == Family::Gemma2 ||
                        m.family == Family::Phimoe || m.family == Family::GptOss || m.family == Family::Olmo2 ||
                        m.family == Family::Gemma3 || fields::flag(cfg, "use_sliding_window", false);
  if (windowed && window > 0) m.sliding_window = window, m.sliding_layers = count_sliding(cfg, m.num_layers, m.layer_sliding);
  if (m.family == Family::DeepseekV2 || m.family == Family::DeepseekV3) {
    if (auto ok = read_latent_attention(m, cfg, source); !ok) return make_error(ok.error());
  }
  if (auto ok = read_experts(m, cfg, source); !ok) return make_error(ok.error());
  if (auto ok = read_nested_moe(m, cfg, source); !ok) return make_error(ok.error());
  if (m.family == Family::Llama4) {
    if (auto ok = read_llama4_layers(m, cfg, source); !ok) return make_error(ok.error());
  }
  if (m.family == Family::JetMoe) {  // JetMoeConfig: num_attention_heads = num_key_value_heads x num_experts_per_tok,
    // head_dim = kv_channels (its attribute_map); JetMoeAttention's JetMoeMoA has num_local_experts query / output
    // projection experts, JetMoeMoA and JetMoeMoE a bias on their output (modeling_jetmoe.py)
    if (m.num_experts == 0) m.num_experts = 8, m.experts_per_token = 2, m.moe_intermediate_size = m.intermediate_size;
    m.attention_experts = m.num_experts, m.expert_output_bias = true;
    m.num_heads = saturating_mul(m.num_kv_heads, m.experts_per_token);
  }
  if (m.family == Family::Falcon && fields::flag(cfg, "multi_query", true) &&
      !fields::flag(cfg, "new_decoder_architecture", false)) {
    m.num_kv_heads = 1;  // Falcon 7B: one key/value head
  }
  if (m.family == Family::Gemma2) {
    m.attn_logit_softcap = fields::positive_number(cfg, "attn_logit_softcapping");
    m.final_logit_softcap = fields::positive_number(cfg, "final_logit_softcapping");
  } else if (m.family == Family::Gemma3) {
    m.final_logit_softcap = fields::positive_number(cfg, "final_logit_softcapping");
    m.attn_logit_softcap = fields::positive_number(cfg, "attn_logit_softcapping");
  }
  const bool tied_default = gpt2 || m.family == Family::Gemma || m.family == Family::Gemma2 ||
                            m.family == Family::Gemma3 || m.family == Family::Falcon || m.family == Family::Starcoder2 ||
                            m.family == Family::Bloom || m.family == Family::Opt || m.family == Family::Cohere ||
                            m.family == Family::Smollm3 || m.family == Family::Mpt || m.family == Family::Biogpt ||
                            m.family == Family::Xglm || m.family == Family::RecurrentGemma || m.family == Family::JetMoe;
  m.tie_word_embeddings = fields::flag(cfg, "tie_word_embeddings", tied_default);
  m.generate_with_cache = fields::flag(cfg, "use_cache", m.family != Family::Mpt);  // MptConfig: use_cache = False
  // OpenAIGPTLMHeadModel has no past_key_values at all: each generated token reruns the whole sequence
  if (m.family == Family::OpenaiGpt) m.generate_with_cache = false;
  if (m.family == Family::Qwen2 || m.family == Family::Qwen2Moe || gpt2) {
    m.attention_bias = fields::flag(cfg, "qkv_bias", true);
  } else if (m.norm != NormKind::LayerNorm) {
    m.attention_bias = fields::flag(cfg, "attention_bias", m.family == Family::Glm4 || m.family == Family::Glm);
    m.output_bias = m.attention_bias && m.family != Family::Qwen3 && m.family != Family::Qwen3Moe &&
                    m.family != Family::Olmo2 && m.family != Family::Glm4 && m.family != Family::Glm ? m.attention_bias : false;
    m.mlp_bias = fields::flag(cfg, "mlp_bias", false);
  }
  m.attention_dropout = fields::fraction(cfg, gpt2 ? "attn_pdrop" : "attention_dropout", gpt2 || m.family == Family::Xglm ? 0.1 : 0.0);
  if (m.family != Family::Opt && m.family != Family::Biogpt && m.family != Family::Xglm) m.residual_dropout = fields::fraction(cfg, "resid_pdrop", gpt2 ? 0.1 : 0.0);
  m.rotary_dims = rotary_dims(m, cfg);
  return read_hybrid_layers(m, cfg, source);  // LFM2's short convolutions, Jamba's Mamba layers (hybrid_config.cpp)
}

}  // namespace vramdoc::estimator
