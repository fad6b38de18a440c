// Model ids ("org/name") resolved from the local Hugging Face cache, without network:
// $HF_HUB_CACHE, else $HF_HOME/hub, else $XDG_CACHE_HOME/huggingface/hub, else
// ~/.cache/huggingface/hub; in it models--org--name/snapshots/REVISION/ (config.json and the
// safetensors files, links into blobs/). The revision is refs/main's when present, else the
// newest snapshot holding a config.json.
#pragma once
#include <string>

#include "core/result.hpp"

namespace vramdoc::estimator {

// True for text shaped like a Hugging Face model id: "org/name", letters, digits, '-', '_', '.'.
bool looks_like_model_id(const std::string& text);

// The snapshot directory of `id` in the local cache; the error says where it looked and how to
// fetch the model (huggingface-cli download), e.g. when the cache has no such model.
Result<std::string> find_cached_model(const std::string& id);

}  // namespace vramdoc::estimator
