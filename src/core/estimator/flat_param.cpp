// FullyShardedDataParallel (FSDP1) with use_orig_params=True: each wrapped unit's parameters are
// flattened into one FlatParameter in named_parameters order, each starting at a 16-byte boundary
// (torch/distributed/fsdp/_flat_param.py: _init_flat_param_and_metadata with align_addresses, the
// `_get_aligned_numel` padding), and the whole is cut into as many equal chunks as the shard group
// has ranks (`_get_shard`: flatten().chunk(world_size), the last padded). The optimizer sees the
// original parameters as views of the rank's chunk: one state tensor per parameter part the rank
// holds, of that part's size, none where it holds nothing. Ranks differ: rank 0 of a llama layer
// holds the attention and gate projections, rank 1 of two the rest of the MLP and the norms.
#include "core/estimator/flat_param.hpp"

#include <algorithm>

#include "core/estimator/estimate_parts.hpp"
#include "core/units.hpp"

namespace vramdoc::estimator::detail {

namespace {

u64 mul(u64 a, u64 b) { return saturating_mul(a, b); }

constexpr u64 kAlignmentBytes = 16;

// A lumped vector of several equal norms (or q/k norms) in the weight table, as its tensors.
void push_split(std::vector<u64>& out, u64 numel, u64 each) {
  if (each == 0 || numel % each != 0) return out.push_back(numel);
  for (u64 i = 0; i < numel / each; ++i) out.push_back(each);
}

}  // namespace

UnitParams unit_params(const ModelConfig& m, u64 tensor_parallel) {
  UnitParams u;
  const u64 L = std::max<u64>(m.num_layers, 1), tp = std::max<u64>(tensor_parallel, 1);
  std::vector<u64> layer_norms;
  for (const auto& t : describe_weights(m)) {
    if (t.tied) continue;
    const u64 n = mul(t.rows, t.cols) / (t.quantizable ? tp : 1);
    const u64 Ls = holding_layers(m, t);  // DeepSeek: the dense or the MoE ones
    if (Ls > 0) {
      if (t.name == "layer norms") {  // after the MLP in named_parameters order, one tensor each
        push_split(layer_norms, n, m.hidden_size);
      } else if (t.name == "q_norm, k_norm") {
        push_split(u.layer, n, n / 2);
      } else {
        // stacked experts: one 3-D tensor per layer; a tensor of only the dense or only the MoE
        // layers spread over every layer, as the rank plan's weights are (rank_plan.cpp)
        u.layer.push_back(mul(mul(n, t.count / Ls), Ls) / L);
      }
    } else if (t.name == "norm" || t.name == "ln_f") {
      push_split(u.head, mul(n, t.count), m.hidden_size);
    } else if (t.name.rfind("lm_head", 0) == 0) {
      u.head.push_back(mul(n, t.count));
    } else {
      u.embed.push_back(mul(n, t.count));
    }
  }
  u.layer.insert(u.layer.end(), layer_norms.begin(), layer_norms.end());
  return u;
}

std::vector<u64> flat_param_parts(const std::vector<u64>& numels, u64 element_bytes, u64 shards, u64 rank) {
  const u64 align = std::max<u64>(kAlignmentBytes / std::max<u64>(element_bytes, 1), 1);
  std::vector<std::pair<u64, u64>> spans;  // [begin, end) of each parameter in the flat tensor
  u64 total = 0;
  for (u64 n : numels) {
    total = saturating_add(total, (align - total % align) % align);
    spans.push_back({total, saturating_add(total, n)});
    total = saturating_add(total, n);
  }
  const u64 s = std::max<u64>(shards, 1), chunk = total / s + (total % s != 0);
  const u64 lo = mul(chunk, rank % s), hi = saturating_add(lo, chunk);
  std::vector<u64> parts;
  for (auto [b, e] : spans) {
    const u64 from = std::max(b, lo), to = std::min(e, hi);
    parts.push_back(to > from ? mul(to - from, element_bytes) : 0);
  }
  return parts;
}

}  // namespace vramdoc::estimator::detail
