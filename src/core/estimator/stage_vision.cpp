// Hierarchical (stage-list) vision transformers of model types the estimator does not know (PVT v2, CvT,
// SegFormer-like configs): their per-stage lists, under the names each configuration_*.py uses, written as
// the fields of the Swin-style stand-in (depths, embed_dim, num_heads, image_size, patch_size), so such a
// config is estimated (with the generic margin and a warning) rather than refused for a field it spells
// differently. docs/estimator.md, "Round 7: vision models from their configs".
#include "core/estimator/stage_vision.hpp"

#include <cmath>
#include <optional>

namespace vramdoc::estimator {

namespace {

using nlohmann::json;

bool positive(const json& v) { return v.is_number() && v.get<double>() >= 1 && v.get<double>() == std::floor(v.get<double>()); }

// The first of `names` that is a non-empty list of positive integers.
const json* stage_list(const json& cfg, std::initializer_list<const char*> names) {
  for (const char* n : names) {
    const auto it = cfg.find(n);
    if (it == cfg.end() || !it->is_array() || it->empty()) continue;
    bool ok = true;
    for (const json& v : *it) ok = ok && positive(v);
    if (ok) return &*it;
  }
  return nullptr;
}

}  // namespace

bool normalize_stage_vision(json& cfg) {
  // per-stage depths (PVT v2 / SegFormer `depths`, CvT `depth`), widths (`hidden_sizes`, CvT `embed_dim`,
  // `embed_dims`) and heads (`num_attention_heads`, CvT `num_heads`): configuration_pvt_v2.py, configuration_cvt.py,
  // configuration_segformer.py
  const json* depths = stage_list(cfg, {"depths", "depth"});
  const json* widths = stage_list(cfg, {"hidden_sizes", "embed_dim", "embed_dims"});
  const json* heads = stage_list(cfg, {"num_attention_heads", "num_heads"});
  const json* strides = stage_list(cfg, {"patch_stride", "strides", "patch_sizes"});
  if (depths == nullptr || widths == nullptr || heads == nullptr || strides == nullptr) return false;
  if (depths->size() != widths->size() || heads->size() != depths->size()) return false;
  const json d = *depths, w = *widths, h = *heads;
  const std::uint64_t stride = strides->front().get<std::uint64_t>();
  cfg["depths"] = d, cfg["num_heads"] = h, cfg["embed_dim"] = w.front();
  cfg.erase("hidden_sizes"), cfg.erase("num_attention_heads"), cfg.erase("depth");
  // the first patch embedding's stride is the first stage's downsampling (4 for PVT v2, CvT, SegFormer)
  if (!cfg.contains("patch_size") || !positive(cfg["patch_size"])) cfg["patch_size"] = stride;
  if (const auto it = cfg.find("image_size"); it == cfg.end() || it->is_null()) cfg["image_size"] = 224;  // the processors' default
  return true;
}

}  // namespace vramdoc::estimator
