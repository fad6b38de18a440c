// Built-in models (`--model NAME`, `--list-models`): the config.json fields of popular models.
#pragma once
#include <span>
#include <string_view>

#include "core/estimator/model_config.hpp"

namespace vramdoc::estimator {

struct Preset {
  std::string_view name;         // e.g. "llama-3-8b"
  std::string_view description;  // one line for --list-models
  std::string_view config_json;  // the fields of its Hugging Face config.json that size it
};

// Every preset, in the order --list-models shows them.
std::span<const Preset> presets();
// The named preset parsed as a ModelConfig; the error lists the known names.
Result<ModelConfig> preset_config(std::string_view name);

}  // namespace vramdoc::estimator
