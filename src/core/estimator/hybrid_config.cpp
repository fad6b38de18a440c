// Hybrid decoders from their config fields (transformers 5.17): which layers mix tokens by attention and which by a
// short convolution (Lfm2Config.layer_types, configuration_lfm2.py) or a Mamba mixer (JambaConfig.layers_block_type,
// configuration_jamba.py:101-117), the mixers' sizes, and their weights as Lfm2ShortConv.__init__ and
// JambaMambaMixer.__init__ build them.
#include "core/estimator/hybrid.hpp"

#include <algorithm>
#include <cmath>

#include "core/estimator/config_fields.hpp"
#include "core/estimator/ssm.hpp"
#include "core/units.hpp"

namespace vramdoc::estimator {

namespace {

using u64 = std::uint64_t;
using nlohmann::json;
u64 mul(u64 a, u64 b) { return saturating_mul(a, b); }

// Lfm2MLP.__init__ (modeling_lfm2.py:119-133): with block_auto_adjust_ff_dim the MLP's width is int(2 x
// intermediate_size / 3), times block_ffn_dim_multiplier, rounded up to a multiple of block_multiple_of.
void adjust_ff_dim(ModelConfig& m, const json& cfg) {
  if (!fields::flag(cfg, "block_auto_adjust_ff_dim", false)) return;
  u64 inter = 2 * m.intermediate_size / 3;
  if (auto it = cfg.find("block_ffn_dim_multiplier"); it != cfg.end() && it->is_number() && it->get<double>() > 0) {
    inter = static_cast<u64>(it->get<double>() * static_cast<double>(inter));
    u64 multiple = 256;
    if (auto mo = cfg.find("block_multiple_of"); mo != cfg.end() && mo->is_number_unsigned() && mo->get<u64>() > 0) {
      multiple = mo->get<u64>();
    }
    inter = multiple * ((inter + multiple - 1) / multiple);
  }
  m.intermediate_size = std::max<u64>(inter, 1);
}

// LFM2: layer_types lists "conv" or "full_attention" per layer; conv_L_cache is the short convolution's width.
Result<bool> read_short_convs(ModelConfig& m, const json& cfg, const std::string& source) {
  const auto types = cfg.find("layer_types");
  if (types == cfg.end() || !types->is_array() || types->size() != m.num_layers || !cfg.contains("conv_L_cache")) {
    return false;
  }
  auto kernel = fields::size(cfg, {"conv_L_cache"}, source);
  if (!kernel) return make_error(kernel.error());
  std::vector<Mixer> mixers;
  for (const auto& t : *types) mixers.push_back(t.is_string() && t.get<std::string>() == "conv" ? Mixer::ShortConv : Mixer::Attention);
  m.layer_mixer = std::move(mixers);
  m.short_conv_kernel = kernel->value_or(3);  // Lfm2Config: conv_L_cache 3, conv_bias False
  m.short_conv_bias = fields::flag(cfg, "conv_bias", false);
  m.qk_norm = QkNorm::PerHead;  // Lfm2Attention: q_layernorm and k_layernorm over head_dim (modeling_lfm2.py:225-226)
  adjust_ff_dim(m, cfg);
  return true;
}

// A period and offset field pair (JambaConfig: offset < period).
Result<std::pair<u64, u64>> period_of(const json& cfg, const char* period, const char* offset, u64 p0, u64 o0,
                                      const std::string& source) {
  auto p = fields::size(cfg, {period}, source);
  auto o = fields::count(cfg, offset, source);
  if (!p) return make_error(p.error());
  if (!o) return make_error(o.error());
  const u64 pv = p->value_or(p0), ov = o->value_or(o0);
  if (ov >= pv) return make_error("field '" + std::string(offset) + "' in " + source + " must be below '" + period + "'");
  return std::pair<u64, u64>{pv, ov};
}

// Jamba: attention in the layers i % attn_layer_period == attn_layer_offset, JambaMambaMixer in the others; the experts
// in the layers i % expert_layer_period == expert_layer_offset (layers_num_experts), JambaMLP in the others.
Result<bool> read_mamba_layers(ModelConfig& m, const json& cfg, const std::string& source) {
  if (!cfg.contains("attn_layer_period") || !cfg.contains("mamba_d_state")) return false;
  auto attn = period_of(cfg, "attn_layer_period", "attn_layer_offset", 8, 4, source);
  auto experts = period_of(cfg, "expert_layer_period", "expert_layer_offset", 2, 1, source);
  if (!attn) return make_error(attn.error());
  if (!experts) return make_error(experts.error());
  auto state = fields::size(cfg, {"mamba_d_state"}, source);
  auto conv = fields::size(cfg, {"mamba_d_conv"}, source);
  auto expand = fields::size(cfg, {"mamba_expand"}, source);
  for (const auto* v : {&state, &conv, &expand}) {
    if (!*v) return make_error(v->error());
  }
  SsmParts& s = m.ssm;  // JambaConfig defaults: d_state 16, d_conv 4, expand 2, dt_rank "auto", conv bias, no proj bias
  s.state = state->value_or(16), s.conv_kernel = conv->value_or(4);
  s.inner = mul(expand->value_or(2), m.hidden_size);  // JambaMambaMixer: mamba_expand * hidden_size
  auto rank = read_dt_rank(cfg, "mamba_dt_rank", m.hidden_size, source);
  if (!rank) return make_error(rank.error());
  s.dt_rank = *rank;
  s.conv_bias = fields::flag(cfg, "mamba_conv_bias", true);
  s.proj_bias = fields::flag(cfg, "mamba_proj_bias", false);
  s.residual_fp32 = false, s.dt_bc_norms = true;
  m.layer_mixer.clear(), m.layer_moe.clear();
  u64 dense = 0;
  for (u64 i = 0; i < m.num_layers; ++i) {
    m.layer_mixer.push_back(i % attn->first == attn->second ? Mixer::Attention : Mixer::Mamba);
    const bool moe = m.num_experts > 1 && i % experts->first == experts->second;
    m.layer_moe.push_back(moe);
    dense += moe ? 0 : 1;
  }
  if (dense == m.num_layers) m.num_experts = 0, m.layer_moe.clear();  // num_experts 1: JambaMLP everywhere
  m.dense_layers = dense;
  m.rotary_dims = 0;  // JambaAttention: no positional encoding (the Mamba layers carry the order)
  return true;
}

// Mamba2 hybrids (BambaConfig, configuration_bamba.py:66-110): a Mamba2 mixer (BambaMixer, modeling_bamba.py:581-640)
// in each layer not listed in attn_layer_indices, or whose layer_types / layers_block_type entry is no attention;
// mamba_n_heads heads of mamba_d_head ("auto": mamba_expand x hidden_size / mamba_n_heads), mamba_n_groups groups,
// mamba_d_state, mamba_d_conv, mamba_chunk_size (BambaConfig defaults 128, "auto", 1, 256, 4, 256; expand 2).
Result<bool> read_mamba2_layers(ModelConfig& m, const json& cfg, const std::string& source) {
  if (!cfg.contains("mamba_n_heads") || !cfg.contains("mamba_d_state")) return false;
  std::vector<Mixer> mixers(m.num_layers, Mixer::Mamba);
  if (const auto idx = cfg.find("attn_layer_indices"); idx != cfg.end() && idx->is_array()) {
    for (const auto& i : *idx) {
      if (i.is_number_unsigned() && i.get<u64>() < m.num_layers) mixers[i.get<u64>()] = Mixer::Attention;
    }
  } else if (const bool parallel = !cfg.contains("layers_block_type") && !cfg.contains("layer_types") &&
                                    cfg.contains("ssm_out_multiplier") && cfg.contains("attention_out_multiplier");
             parallel) {
    // FalconH1DecoderLayer (modeling_falcon_h1.py, FalconH1DecoderLayer.forward): FalconH1Mixer and FalconH1Attention
    // in every layer on the same input_layernorm output, mamba * ssm_out_multiplier + attention * attention_out_multiplier
    mixers.assign(m.num_layers, Mixer::Parallel);
    m.scaled_embeddings = cfg.contains("embedding_multiplier");  // FalconH1Model: embed_tokens(ids) * embedding_multiplier
    m.scaled_logits = cfg.contains("lm_head_multiplier");        // FalconH1ForCausalLM: lm_head(h) * lm_head_multiplier
  } else {
    const auto types = cfg.contains("layers_block_type") ? cfg.find("layers_block_type") : cfg.find("layer_types");
    if (types == cfg.end() || !types->is_array() || types->size() != m.num_layers) return false;
    for (u64 i = 0; i < m.num_layers; ++i) {
      const auto& t = (*types)[i];
      if (t.is_string() && (t.get<std::string>() == "attention" || t.get<std::string>() == "full_attention")) mixers[i] = Mixer::Attention;
    }
  }
  auto heads = fields::size(cfg, {"mamba_n_heads"}, source);
  auto state = fields::size(cfg, {"mamba_d_state"}, source);
  auto conv = fields::size(cfg, {"mamba_d_conv"}, source);
  auto expand = fields::size(cfg, {"mamba_expand"}, source);
  auto groups = fields::size(cfg, {"mamba_n_groups"}, source);
  auto chunk = fields::size(cfg, {"mamba_chunk_size"}, source);
  for (const auto* v : {&heads, &state, &conv, &expand, &groups, &chunk}) {
    if (!*v) return make_error(v->error());
  }
  SsmParts& s = m.ssm;
  s.heads = heads->value_or(128), s.state = state->value_or(256), s.conv_kernel = conv->value_or(4);
  s.groups = groups->value_or(1), s.chunk = chunk->value_or(256);
  s.inner = mul(expand->value_or(2), m.hidden_size);  // BambaMixer: int(mamba_expand * hidden_size)
  auto d_ssm = fields::size(cfg, {"mamba_d_ssm"}, source);  // FalconH1Mixer: mamba_d_ssm when set, else as Bamba's
  if (!d_ssm) return make_error(d_ssm.error());
  if (*d_ssm) s.inner = **d_ssm;
  s.head_dim = s.heads > 0 ? s.inner / s.heads : 0;
  if (auto it = cfg.find("mamba_d_head"); it != cfg.end() && it->is_number_unsigned()) s.head_dim = it->get<u64>();
  if (s.heads == 0 || s.groups == 0 || s.chunk == 0 || s.heads % s.groups != 0 || mul(s.heads, s.head_dim) != s.inner) {
    return make_error("config " + source + ": mamba_n_heads x mamba_d_head must equal the mixer's width (mamba_d_ssm, " +
                      "or mamba_expand x hidden_size), mamba_n_heads a multiple of mamba_n_groups");
  }
  s.conv_bias = fields::flag(cfg, "mamba_conv_bias", true);
  s.proj_bias = fields::flag(cfg, "mamba_proj_bias", false);
  s.residual_fp32 = false;
  s.gated_norm = fields::flag(cfg, "mamba_rms_norm", true);  // FalconH1Mixer: the gated norm only with mamba_rms_norm
  s.mup_scaled = cfg.contains("ssm_multipliers");            // FalconH1Mixer.torch_forward: the mup_vector product
  m.layer_mixer = std::move(mixers);
  return true;
}

// RecurrentGemma (RecurrentGemmaConfig, configuration_recurrent_gemma.py): layers_block_type is block_types repeated to
// num_hidden_layers ("recurrent": RecurrentGemmaRecurrentBlock, "attention": RecurrentGemmaSdpaAttention); lru_width
// (None: hidden_size) wide recurrent blocks with a conv1d_width depthwise Conv1d; the attention keeps its own cache of
// attention_window_size positions; the logits soft-capped by logits_soft_cap. RecurrentGemmaMlp is intermediate_size // 2
// wide with biases, o_proj has a bias (modeling_recurrent_gemma.py), and RecurrentGemmaForCausalLM.forward sets
// output_hidden_states = True.
Result<bool> read_recurrent_blocks(ModelConfig& m, const json& cfg, const std::string& source) {
  if (m.family != Family::RecurrentGemma && !(cfg.contains("block_types") && cfg.contains("lru_width"))) return false;
  std::vector<Mixer> cycle;
  if (const auto types = cfg.find("block_types"); types != cfg.end() && types->is_array()) {
    for (const auto& t : *types) {
      if (!t.is_string() || (t.get<std::string>() != "recurrent" && t.get<std::string>() != "attention")) {
        return make_error("field 'block_types' in " + source + " must list \"recurrent\" or \"attention\"");
      }
      cycle.push_back(t.get<std::string>() == "recurrent" ? Mixer::Recurrent : Mixer::Attention);
    }
  } else if (cfg.contains("block_types") && !cfg["block_types"].is_null()) {
    return make_error("field 'block_types' in " + source + " must be a list");
  }
  if (cycle.empty()) cycle = {Mixer::Recurrent, Mixer::Recurrent, Mixer::Attention};  // RecurrentGemmaConfig's default
  auto width = fields::size(cfg, {"lru_width"}, source);
  auto conv = fields::size(cfg, {"conv1d_width"}, source);
  auto window = fields::size(cfg, {"attention_window_size"}, source);
  for (const auto* v : {&width, &conv, &window}) {
    if (!*v) return make_error(v->error());
  }
  m.ssm.inner = width->value_or(m.hidden_size), m.ssm.conv_kernel = conv->value_or(4);
  if (m.num_heads == 0 || m.ssm.inner % m.num_heads != 0) {
    return make_error("config " + source + ": lru_width must be a multiple of num_attention_heads (the RG-LRU's blocks)");
  }
  m.layer_mixer.clear();
  for (u64 i = 0; i < m.num_layers; ++i) m.layer_mixer.push_back(cycle[i % cycle.size()]);
  m.attention_cache_window = window->value_or(2048);
  const auto cap = cfg.find("logits_soft_cap");  // null: still capped at the class default (the forward always caps)
  m.final_logit_softcap = cap != cfg.end() && cap->is_number() ? fields::positive_number(cfg, "logits_soft_cap") : 30.0;
  m.intermediate_size = std::max<u64>(m.intermediate_size / 2, 1);
  m.mlp_bias = m.output_bias = true;
  m.all_hidden_states = true;
  return true;
}

void add(std::vector<WeightTensor>& w, WeightTensor t, LayerSet set) {
  t.layers = set;
  w.push_back(std::move(t));
}

// A Linear of the mixer's layers (and its bias).
void add_linear(std::vector<WeightTensor>& w, const std::string& name, u64 in, u64 out, u64 layers, bool bias, LayerSet set) {
  add(w, {name, in, out, layers, true, false, true}, set);
  if (bias) add(w, {name + ".bias", 1, out, layers, false, false, false}, set);
}

}  // namespace

Result<bool> read_hybrid_layers(ModelConfig& m, const json& cfg, const std::string& source) {
  auto recurrent = read_recurrent_blocks(m, cfg, source);
  if (!recurrent) return make_error(recurrent.error());
  if (*recurrent) return true;
  auto conv = read_short_convs(m, cfg, source);
  if (!conv) return make_error(conv.error());
  if (*conv) return true;
  auto mamba2 = read_mamba2_layers(m, cfg, source);
  if (!mamba2) return make_error(mamba2.error());
  if (*mamba2) return true;
  auto mamba = read_mamba_layers(m, cfg, source);
  if (!mamba) return make_error(mamba.error());
  return true;
}

u64 mixer_layers(const ModelConfig& m, Mixer mixer) {
  if (m.layer_mixer.empty()) return mixer == Mixer::Attention ? m.num_layers : 0;
  return static_cast<u64>(std::count_if(m.layer_mixer.begin(), m.layer_mixer.end(), [&](Mixer l) { return has_mixer(l, mixer); }));
}

bool has_mixer(Mixer layer, Mixer mixer) {
  return layer == mixer || (layer == Mixer::Parallel && (mixer == Mixer::Attention || mixer == Mixer::Mamba));
}

void add_mixer_weights(const ModelConfig& m, std::size_t attention_first, std::vector<WeightTensor>& w) {
  const u64 L = std::max<u64>(m.num_layers, 1), A = mixer_layers(m, Mixer::Attention), h = m.hidden_size;
  std::vector<WeightTensor> attention(w.begin() + static_cast<std::ptrdiff_t>(attention_first), w.end());
  w.resize(attention_first);
  for (WeightTensor& t : attention) {
    t.count = t.count / L * A;
    // RecurrentGemma's keys and values reach SDPA through its cache's no_grad update (_update_cache)
    t.cache_detached = m.attention_cache_window > 0 && (t.name.rfind("k_proj", 0) == 0 || t.name.rfind("v_proj", 0) == 0);
    if (t.count > 0) add(w, t, LayerSet::Attention);
  }
  // RecurrentGemmaRecurrentBlock.__init__: linear_y, linear_x (hidden -> lru_width), linear_out, the depthwise conv_1d
  // (lru_width, 1, conv1d_width) with its bias; RecurrentGemmaRglru: recurrent_param (lru_width), the input and
  // recurrent gates' block-diagonal weights (heads, lru_width / heads, lru_width / heads) and biases (heads, lru_width / heads)
  if (const u64 R = mixer_layers(m, Mixer::Recurrent); R > 0) {
    const u64 W = m.ssm.inner, block = W / std::max<u64>(m.num_heads, 1);
    add_linear(w, "linear_y", h, W, R, true, LayerSet::Recurrent);
    add_linear(w, "linear_x", h, W, R, true, LayerSet::Recurrent);
    add_linear(w, "linear_out", W, h, R, true, LayerSet::Recurrent);
    add(w, {"conv_1d", 1, mul(W, m.ssm.conv_kernel), R, false, false, false}, LayerSet::Recurrent);
    add(w, {"conv_1d.bias, recurrent_param", 1, 2 * W, R, false, false, false}, LayerSet::Recurrent);
    for (const char* gate : {"input_gate_weight", "recurrent_gate_weight"}) {  // baddbmm's batch2 (autocast copies it)
      add(w, {gate, block, W, R, true, false, false, false}, LayerSet::Recurrent);
    }
    add(w, {"input_gate_bias, recurrent_gate_bias", 1, 2 * W, R, false, false, false}, LayerSet::Recurrent);
  }
  // Lfm2ShortConv.__init__ (modeling_lfm2.py:325-347): conv (hidden, 1, conv_L_cache), in_proj hidden -> 3 x hidden,
  // out_proj; each with a bias when conv_bias
  if (const u64 C = mixer_layers(m, Mixer::ShortConv); C > 0) {
    const bool bias = m.short_conv_bias;
    add(w, {"conv", 1, mul(h, m.short_conv_kernel), C, false, false, false}, LayerSet::ShortConv);
    if (bias) add(w, {"conv.bias", 1, h, C, false, false, false}, LayerSet::ShortConv);
    add_linear(w, "in_proj", h, 3 * h, C, bias, LayerSet::ShortConv);
    add_linear(w, "out_proj", h, h, C, bias, LayerSet::ShortConv);
  }
  // JambaMambaMixer.__init__ (modeling_jamba.py:449-493): MambaMixer's tensors plus dt_layernorm (time_step_rank),
  // b_layernorm and c_layernorm (state_size)
  // BambaMixer.__init__ (modeling_bamba.py:612-639), as Mamba2Mixer's: in_proj hidden -> inner + conv_dim + heads,
  // conv1d over conv_dim = inner + 2 x groups x state, dt_bias / A_log / D (heads each), the gated norm, out_proj
  if (const u64 M = mixer_layers(m, Mixer::Mamba); M > 0 && m.ssm.heads != 0) {
    const SsmParts& s = m.ssm;
    const u64 d = s.inner, conv_dim = d + mul(2 * s.groups, s.state);
    add_linear(w, "in_proj", h, d + conv_dim + s.heads, M, s.proj_bias, LayerSet::Mamba);
    add(w, {"conv1d", 1, mul(conv_dim, s.conv_kernel), M, false, false, false}, LayerSet::Mamba);
    if (s.conv_bias) add(w, {"conv1d.bias", 1, conv_dim, M, false, false, false}, LayerSet::Mamba);
    add(w, {"dt_bias, A_log, D", 1, 3 * s.heads, M, false, false, false}, LayerSet::Mamba);
    if (s.gated_norm) add(w, {"mamba.norm", 1, d, M, false, false, false}, LayerSet::Mamba);
    add_linear(w, "out_proj", d, h, M, s.proj_bias, LayerSet::Mamba);
  } else if (M > 0) {
    const SsmParts& s = m.ssm;
    const u64 d = s.inner;
    add(w, {"conv1d", 1, mul(d, s.conv_kernel), M, false, false, false}, LayerSet::Mamba);
    if (s.conv_bias) add(w, {"conv1d.bias", 1, d, M, false, false, false}, LayerSet::Mamba);
    add_linear(w, "in_proj", h, 2 * d, M, s.proj_bias, LayerSet::Mamba);
    add_linear(w, "x_proj", d, s.dt_rank + 2 * s.state, M, false, LayerSet::Mamba);
    add_linear(w, "dt_proj", s.dt_rank, d, M, true, LayerSet::Mamba);
    add(w, {"A_log, D", 1, mul(d, s.state + 1), M, false, false, false}, LayerSet::Mamba);
    add_linear(w, "out_proj", d, h, M, s.proj_bias, LayerSet::Mamba);
    add(w, {"dt_layernorm, b_layernorm, c_layernorm", 1, s.dt_rank + 2 * s.state, M, false, false, false}, LayerSet::Mamba);
  }
}

}  // namespace vramdoc::estimator
