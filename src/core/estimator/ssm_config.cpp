// Mamba-style state-space decoders from their config (configuration_mamba.py, configuration_falcon_mamba.py,
// transformers 5.17) and their weights as MambaMixer / MambaBlock build them (modeling_mamba.py).
#include "core/estimator/ssm.hpp"

#include "core/estimator/config_fields.hpp"
#include "core/units.hpp"

namespace vramdoc::estimator {

namespace {
using u64 = std::uint64_t;
u64 mul(u64 a, u64 b) { return saturating_mul(a, b); }

// Mamba2Config (configuration_mamba2.py): num_heads 128, head_dim 64, n_groups 8, chunk_size 256 by default;
// Mamba2Mixer.__init__ (modeling_mamba2.py:374) sizes intermediate_size = int(expand x hidden_size) (the config has no
// intermediate_size field) and validate_architecture wants hidden_size x expand == num_heads x head_dim.
Result<bool> read_mamba2_fields(ModelConfig& m, const nlohmann::json& cfg, const std::string& source, double expand) {
  SsmParts& s = m.ssm;
  auto heads = fields::size(cfg, {"num_heads"}, source);
  auto head_dim = fields::size(cfg, {"head_dim"}, source);
  auto groups = fields::size(cfg, {"n_groups"}, source);
  auto chunk = fields::size(cfg, {"chunk_size"}, source);
  for (const auto* v : {&heads, &head_dim, &groups, &chunk}) {
    if (!*v) return make_error(v->error());
  }
  s.inner = static_cast<u64>(expand * static_cast<double>(m.hidden_size));
  s.heads = heads->value_or(128), s.head_dim = head_dim->value_or(64);
  s.groups = groups->value_or(8), s.chunk = chunk->value_or(256);
  if (s.heads == 0 || s.head_dim == 0 || s.groups == 0 || s.chunk == 0) {
    return make_error("fields 'num_heads', 'head_dim', 'n_groups' and 'chunk_size' in " + source + " must be positive");
  }
  if (mul(s.heads, s.head_dim) != s.inner) {
    return make_error("config " + source + ": hidden_size x expand (" + std::to_string(s.inner) +
                      ") must equal num_heads x head_dim (" + std::to_string(mul(s.heads, s.head_dim)) + ")");
  }
  if (s.heads % s.groups != 0) {
    return make_error("config " + source + ": num_heads must be a multiple of n_groups (repeat_interleave of B and C)");
  }
  m.intermediate_size = s.inner;
  return true;
}

}  // namespace

Result<u64> read_dt_rank(const nlohmann::json& cfg, const char* field, u64 hidden_size, const std::string& source) {
  const auto it = cfg.find(field);
  if (it == cfg.end() || !it->is_number_unsigned()) return (hidden_size + 15) / 16;  // "auto": math.ceil(hidden_size / 16)
  const u64 r = it->get<u64>();
  if (r == 0 || r > (u64{1} << 40)) return make_error("field '" + std::string(field) + "' in " + source + " must be a positive integer or \"auto\"");
  return r;
}

Result<bool> read_ssm_config(ModelConfig& m, const nlohmann::json& cfg, const std::string& source) {
  SsmParts& s = m.ssm;
  auto state = fields::size(cfg, {"state_size"}, source);
  auto conv = fields::size(cfg, {"conv_kernel"}, source);
  auto inter = fields::size(cfg, {"intermediate_size"}, source);
  for (const auto* v : {&state, &conv, &inter}) {
    if (!*v) return make_error(v->error());
  }
  s.state = state->value_or(16), s.conv_kernel = conv->value_or(4);  // MambaConfig defaults
  // MambaConfig: intermediate_size = int(expand * hidden_size), expand 2 by default
  double expand = 2;
  if (auto it = cfg.find("expand"); it != cfg.end() && it->is_number() && it->get<double>() > 0 && it->get<double>() <= 64) {
    expand = it->get<double>();
  }
  s.inner = inter->value_or(static_cast<u64>(expand * static_cast<double>(m.hidden_size)));
  auto rank = read_dt_rank(cfg, "time_step_rank", m.hidden_size, source);
  if (!rank) return make_error(rank.error());
  s.dt_rank = *rank;
  s.conv_bias = fields::flag(cfg, "use_conv_bias", true);
  s.proj_bias = fields::flag(cfg, "use_bias", false);
  s.residual_fp32 = fields::flag(cfg, "residual_in_fp32", true);
  s.bc_norm = m.model_type == "falcon_mamba";  // FalconMambaMixer: rms_forward(B), rms_forward(C), rms_forward(time_step)
  m.intermediate_size = s.inner;
  if (m.model_type == "mamba2") return read_mamba2_fields(m, cfg, source, expand);
  return true;
}

namespace {

// A per-layer Linear (and its bias) of the mixer, as both mixers' __init__ build them.
void add_linear(std::vector<WeightTensor>& w, const std::string& name, u64 in, u64 out, u64 layers, bool bias) {
  w.push_back({name, in, out, layers, true, false, true});
  if (bias) w.push_back({name + ".bias", 1, out, layers, false, false, false});
}

// Mamba2Mixer.__init__ (modeling_mamba2.py:392-422): conv1d (conv_dim, 1, conv_kernel) over conv_dim = inner + 2 x
// n_groups x state_size, in_proj (hidden -> inner + conv_dim + num_heads: gate, xBC, dt), dt_bias, A_log, D (num_heads
// each), norm (MambaRMSNormGated over inner), out_proj
void add_mamba2_mixer(const ModelConfig& m, std::vector<WeightTensor>& w) {
  const SsmParts& s = m.ssm;
  const u64 h = m.hidden_size, L = m.num_layers, d = s.inner;
  const u64 conv_dim = d + mul(2 * s.groups, s.state);
  add_linear(w, "in_proj", h, d + conv_dim + s.heads, L, s.proj_bias);
  w.push_back({"conv1d", 1, mul(conv_dim, s.conv_kernel), L, false, false, false});
  if (s.conv_bias) w.push_back({"conv1d.bias", 1, conv_dim, L, false, false, false});
  w.push_back({"dt_bias, A_log, D", 1, 3 * s.heads, L, false, false, false});
  w.push_back({"mixer.norm", 1, d, L, false, false, false});
  add_linear(w, "out_proj", d, h, L, s.proj_bias);
}

// MambaMixer.__init__ (modeling_mamba.py): conv1d (inner, 1, conv_kernel) with its bias, in_proj (hidden -> 2 x inner),
// x_proj (inner -> time_step_rank + 2 x state), dt_proj (time_step_rank -> inner, with bias), A_log (inner, state), D
// (inner), out_proj
void add_mamba_mixer(const ModelConfig& m, std::vector<WeightTensor>& w) {
  const SsmParts& s = m.ssm;
  const u64 h = m.hidden_size, L = m.num_layers, d = s.inner;
  w.push_back({"conv1d", 1, mul(d, s.conv_kernel), L, false, false, false});
  if (s.conv_bias) w.push_back({"conv1d.bias", 1, d, L, false, false, false});
  add_linear(w, "in_proj", h, 2 * d, L, s.proj_bias);
  add_linear(w, "x_proj", d, s.dt_rank + 2 * s.state, L, false);
  add_linear(w, "dt_proj", s.dt_rank, d, L, true);
  w.push_back({"A_log, D", 1, mul(d, s.state + 1), L, false, false, false});
  add_linear(w, "out_proj", d, h, L, s.proj_bias);
}

}  // namespace

// The embeddings, each layer's mixer (Mamba2's when the config has heads) and norm (MambaBlock / Mamba2Block.norm),
// the final norm_f and the head, tied or not.
void add_ssm_weights(const ModelConfig& m, std::vector<WeightTensor>& w) {
  const u64 h = m.hidden_size, L = m.num_layers;
  w.push_back({"embeddings", m.vocab_size, h, 1, false, false, false});
  if (m.ssm.heads != 0) add_mamba2_mixer(m, w);
  else add_mamba_mixer(m, w);
  w.push_back({"norm", 1, h, L, false, false, false});
  w.push_back({"norm_f", 1, h, 1, false, false, false});
  w.push_back({"lm_head", h, m.vocab_size, 1, true, m.tie_word_embeddings, false});
}

}  // namespace vramdoc::estimator
