// FSDP1's FlatParameter: which part of each original parameter a rank holds (flat_param.cpp).
#pragma once
#include <cstdint>
#include <vector>

#include "core/estimator/architecture.hpp"

namespace vramdoc::estimator::detail {

using u64 = std::uint64_t;

// The elements of each parameter of one decoder layer and of the root unit, in named_parameters
// order, on one tensor-parallel rank. The root's FlatParameter is `embed` then `head` (the final
// norm, an untied lm_head); model.parameters() has the embeddings first and the head last.
struct UnitParams {
  std::vector<u64> layer, embed, head;
};
UnitParams unit_params(const ModelConfig& m, u64 tensor_parallel);

// The bytes of each parameter's part (in `numels` order) that `rank` holds of a FlatParameter of
// `element_bytes`-wide elements sharded over `shards` ranks; 0 where the rank holds none of it.
std::vector<u64> flat_param_parts(const std::vector<u64>& numels, u64 element_bytes, u64 shards, u64 rank);

}  // namespace vramdoc::estimator::detail
