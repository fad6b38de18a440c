// The quick start's answer (`vramdoc estimate` with no arguments): will a 7B model fit, for a
// full fine-tune, LoRA and inference, on a 12, a 24 and an 80 GB card. One table readable at 100
// columns, with what it assumed and what each column and row means written under it.
#pragma once
#include <string>

#include "core/result.hpp"
#include "core/style.hpp"

namespace vramdoc::estimator {

// The whole text for the built-in preset `model` (the cards and settings are fixed); with colour,
// "fits" green and "OOM" red.
Result<std::string> render_quick_start(const std::string& model, const Style& style = {});

}  // namespace vramdoc::estimator
