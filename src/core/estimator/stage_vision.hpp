// Hierarchical (stage-list) vision transformer configs of unknown model types (PVT v2, CvT, SegFormer-like)
// read as the Swin-style stand-in's fields (stage_vision.cpp).
#pragma once
#include <nlohmann/json.hpp>

namespace vramdoc::estimator {

// When `cfg` holds per-stage depths, widths, heads and patch strides under any of their names, writes them as
// depths, embed_dim (the first stage's width), num_heads, patch_size (the first stride) and image_size (224 when
// absent) and returns true; leaves any other config as it is.
bool normalize_stage_vision(nlohmann::json& cfg);

}  // namespace vramdoc::estimator
