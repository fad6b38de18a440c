// config.json quantization_config -> Quantization. Field names and defaults from transformers'
// quantization configs (utils/quantization_config.py): GPTQConfig, AwqConfig, BitsAndBytesConfig,
// FineGrainedFP8Config ("fp8"), FbgemmFp8Config, CompressedTensorsConfig.
#include <nlohmann/json.hpp>

#include "core/estimator/config_fields.hpp"
#include "core/estimator/families.hpp"

namespace vramdoc::estimator {

namespace {

using nlohmann::json;

// compressed-tensors: the first config group's weight scheme (num_bits, type, group_size).
void read_compressed_tensors(Quantization& q, const json& qc) {
  q.method = QuantMethod::CompressedTensors, q.bits = 8;
  auto groups = qc.find("config_groups");
  if (groups == qc.end() || !groups->is_object() || groups->empty()) return;
  const json& first = groups->begin().value();
  auto weights = first.find("weights");
  if (weights == first.end() || !weights->is_object()) return;
  if (auto bits = weights->find("num_bits"); bits != weights->end() && bits->is_number_unsigned()) {
    const std::uint64_t b = bits->get<std::uint64_t>();
    if (b >= 2 && b <= 16) q.bits = b;
  }
  if (auto g = weights->find("group_size"); g != weights->end() && g->is_number_unsigned() && g->get<std::uint64_t>() > 0) {
    q.group_size = g->get<std::uint64_t>();
  } else {
    q.group_size = 0;  // per channel or per tensor
  }
}

}  // namespace

Result<bool> read_quantization(ModelConfig& m, const json& cfg, const std::string& source) {
  auto it = cfg.find("quantization_config");
  if (it == cfg.end() || it->is_null()) return true;
  if (!it->is_object()) return make_error("field 'quantization_config' in " + source + " is not an object");
  const json& qc = *it;
  Quantization& q = m.quant;
  if (auto qm = qc.find("quant_method"); qm != qc.end() && qm->is_string()) q.name = qm->get<std::string>();  // else unnamed (value() threw on a number)
  auto bits = fields::size(qc, {"bits", "w_bit"}, source);
  auto group = fields::size(qc, {"group_size", "q_group_size"}, source);
  if (!bits) return make_error(bits.error());
  if (!group) return make_error(group.error());
  if (q.name == "gptq" || q.name == "awq") {
    q.method = q.name == "gptq" ? QuantMethod::Gptq : QuantMethod::Awq;
    q.bits = bits->value_or(4), q.group_size = group->value_or(128);
    if (q.bits > 8) return make_error("field 'bits' in " + source + " must be at most 8 for " + q.name);
  } else if (q.name == "bitsandbytes") {
    if (fields::flag(qc, "load_in_4bit", false)) {
      q.method = QuantMethod::Bnb4bit, q.bits = 4, q.group_size = 64;  // bnb's 4-bit blocksize
      q.double_quant = fields::flag(qc, "bnb_4bit_use_double_quant", false);
    } else if (fields::flag(qc, "load_in_8bit", false)) {
      q.method = QuantMethod::Bnb8bit, q.bits = 8, q.group_size = 0;
    }
  } else if (q.name == "fp8" || q.name == "fbgemm_fp8") {
    q.method = QuantMethod::Fp8, q.bits = 8;
    q.group_size = q.name == "fp8" ? 128 * 128 : 0;  // FineGrainedFP8: 128 x 128 blocks; fbgemm: per channel
  } else if (q.name == "compressed-tensors" || q.name == "compressed_tensors") {
    read_compressed_tensors(q, qc);
  } else {
    m.warnings.push_back("quantization_config quant_method '" + q.name + "' in " + source +
                         " is not modelled: weights counted at the run's precision");
  }
  return true;
}

}  // namespace vramdoc::estimator
