// Mamba-style state-space decoders from their config (configuration_mamba.py, configuration_falcon_mamba.py,
// transformers 5.17) and their weights as MambaMixer / MambaBlock build them (modeling_mamba.py).
#include "core/estimator/ssm.hpp"

#include "core/estimator/config_fields.hpp"
#include "core/units.hpp"

namespace vramdoc::estimator {

namespace {
using u64 = std::uint64_t;
u64 mul(u64 a, u64 b) { return saturating_mul(a, b); }
}  // namespace

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
  // time_step_rank: "auto" (the default) is math.ceil(hidden_size / 16)
  s.dt_rank = (m.hidden_size + 15) / 16;
  if (auto it = cfg.find("time_step_rank"); it != cfg.end() && it->is_number_unsigned()) {
    const u64 r = it->get<u64>();
    if (r == 0 || r > (u64{1} << 40)) return make_error("field 'time_step_rank' in " + source + " must be a positive integer or \"auto\"");
    s.dt_rank = r;
  }
  s.conv_bias = fields::flag(cfg, "use_conv_bias", true);
  s.proj_bias = fields::flag(cfg, "use_bias", false);
  s.residual_fp32 = fields::flag(cfg, "residual_in_fp32", true);
  s.bc_norm = m.model_type == "falcon_mamba";  // FalconMambaMixer: rms_forward(B), rms_forward(C), rms_forward(time_step)
  m.intermediate_size = s.inner;
  return true;
}

void add_ssm_weights(const ModelConfig& m, std::vector<WeightTensor>& w) {
  const SsmParts& s = m.ssm;
  const u64 h = m.hidden_size, L = m.num_layers, d = s.inner;
  auto linear = [&](const std::string& name, u64 in, u64 out, bool bias) {
    w.push_back({name, in, out, L, true, false, true});
    if (bias) w.push_back({name + ".bias", 1, out, L, false, false, false});
  };
  w.push_back({"embeddings", m.vocab_size, h, 1, false, false, false});
  // MambaMixer.__init__: conv1d (inner, 1, conv_kernel) with its bias, in_proj (hidden -> 2 x inner), x_proj (inner ->
  // time_step_rank + 2 x state), dt_proj (time_step_rank -> inner, with bias), A_log (inner, state), D (inner), out_proj
  w.push_back({"conv1d", 1, mul(d, s.conv_kernel), L, false, false, false});
  if (s.conv_bias) w.push_back({"conv1d.bias", 1, d, L, false, false, false});
  linear("in_proj", h, 2 * d, s.proj_bias);
  linear("x_proj", d, s.dt_rank + 2 * s.state, false);
  linear("dt_proj", s.dt_rank, d, true);
  w.push_back({"A_log, D", 1, mul(d, s.state + 1), L, false, false, false});
  linear("out_proj", d, h, s.proj_bias);
  w.push_back({"norm", 1, h, L, false, false, false});  // MambaBlock.norm: MambaRMSNorm
  w.push_back({"norm_f", 1, h, 1, false, false, false});
  w.push_back({"lm_head", h, m.vocab_size, 1, true, m.tie_word_embeddings, false});
}

}  // namespace vramdoc::estimator
