#include "core/estimator/model_source.hpp"

#include <filesystem>

#include "core/estimator/hf_cache.hpp"
#include "core/estimator/presets.hpp"
#include "core/estimator/safetensors.hpp"
#include "core/input_file.hpp"
#include "core/units.hpp"

namespace vramdoc::estimator {

namespace {

namespace est = vramdoc::estimator;
namespace fs = std::filesystem;

// Every tensor of every *.safetensors header in `dir` (headers only, never the weights).
Result<std::vector<est::TensorInfo>> checkpoint_tensors(const fs::path& dir) {
  std::vector<est::TensorInfo> all;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(dir, ec)) {
    if (entry.path().extension() != ".safetensors") continue;
    const std::string source = entry.path().string();
    auto head = read_file_head(source, 8);
    if (!head) return make_error(head.error());
    auto length = est::safetensors_header_length(*head, source);
    if (!length) return make_error(length.error());
    auto header = read_file_head(source, 8 + *length);
    if (!header) return make_error(header.error());
    std::error_code size_error;  // the data after the header bounds every tensor's offsets
    const std::uint64_t size = fs::file_size(entry.path(), size_error);
    auto tensors = est::parse_safetensors_header(*header, source, size_error ? std::nullopt : std::optional(size - std::min(size, 8 + *length)));
    if (!tensors) return make_error(tensors.error());
    all.insert(all.end(), tensors->begin(), tensors->end());
  }
  return all;
}

// The checkpoint's tensors on the model: sizes for an unknown family, stored bytes of quantised
// weights for every family, and a warning when config.json and the headers disagree.
void attach_checkpoint(est::ModelConfig& model, const std::vector<est::TensorInfo>& tensors) {
  std::uint64_t params = 0;
  bool quantized = false;
  for (const auto& t : tensors) {
    std::uint64_t n = 1;
    for (auto d : t.shape) n = saturating_mul(n, d);
    params = saturating_add(params, n);
    const bool floating = t.dtype == "F32" || t.dtype == "F16" || t.dtype == "BF16" || t.dtype == "F64";
    quantized = quantized || !floating;
    model.header_tensors.push_back({t.name, t.shape, t.bytes, floating});
  }
  est::attach_header_tensors(model);
  if (model.family == est::Family::FromHeaders || quantized || model.quant.method != est::QuantMethod::None) return;
  auto e = est::estimate(model, est::Options{});
  if (e && (e->n_params > params * 101 / 100 || e->n_params < params * 99 / 100)) {
    model.warnings.push_back("config.json implies " + std::to_string(e->n_params) + " parameters but the " +
                             "safetensors headers hold " + std::to_string(params));
  }
}

}  // namespace

Result<ModelConfig> load_model(const std::string& config, const std::string& model_name) {
  // "org/name" (with --model, or with --config when no such file exists): the local HF cache.
  const std::string& id = !model_name.empty() ? model_name : config;
  std::error_code ec;
  if (looks_like_model_id(id) && (!model_name.empty() || !fs::exists(config, ec))) {
    auto dir = find_cached_model(id);
    if (!dir) return make_error(dir.error());
    return load_model(*dir, "");
  }
  if (!model_name.empty()) return est::preset_config(model_name);
  fs::path path = config;  // a symlink loop or a missing file: read_input_file below names it
  const bool dir = config != "-" && fs::is_directory(path, ec);
  const std::string file = dir ? (path / "config.json").string() : config;
  auto text = read_input_file(file, kMaxConfigBytes);
  if (!text) return make_error("model config: " + text.error());
  auto model = est::parse_config_json(*text, input_name(file));
  if (!model || !dir) return model;
  auto tensors = checkpoint_tensors(path);
  if (!tensors) return make_error(tensors.error());
  if (!tensors->empty()) attach_checkpoint(*model, *tensors);
  return model;
}

}  // namespace vramdoc::estimator
