// What each architecture is made of: its weight tensors and its kinds of decoder layer (what a
// layer's forward allocates and keeps for backward: forward_ops.hpp).
#pragma once
#include <cstdint>
#include <utility>
#include <string>
#include <string_view>
#include <array>
#include <vector>

#include "core/estimator/model_config.hpp"

namespace vramdoc::estimator {

// Which attention kernel the forward runs; decided from --attention, precision and GQA.
enum class AttentionPath {
  Fused,   // SDPA's flash / memory-efficient kernels: no seq x seq matrix is kept
  Math,    // SDPA's math fallback (fp32 with GQA): keeps the fp32 probabilities
  Eager,   // transformers' eager attention: keeps the probabilities it materialises
};

// Which layers hold a tensor: all, or in a MoE model only the dense ones (first_k_dense_replace,
// mlp_only_layers) or only the MoE ones; an encoder-decoder's encoder or decoder layers; the layers
// of one Swin stage (WeightTensor::stage).
// A hybrid decoder's (model_config.hpp Mixer): only the attention layers, the short-convolution or the Mamba layers.
enum class LayerSet : std::uint8_t { All, Dense, Moe, Encoder, Decoder, Stage, Attention, ShortConv, Mamba, Recurrent };

struct WeightTensor {
  std::string name;       // module name as PEFT matches it (e.g. "q_proj", "mlp.c_proj")
  std::uint64_t rows = 0;  // input features (1 for a bias or norm vector)
  std::uint64_t cols = 0;  // output features
  std::uint64_t count = 1;  // how many such tensors (layers x experts)
  bool matmul = false;      // a Linear weight: autocast keeps a 16-bit copy; LoRA can target it
  bool tied = false;        // shares storage with another tensor (tied lm_head): no own bytes
  bool quantizable = false;  // a decoder layer's Linear: what a quantised checkpoint stores in low bits
  bool lora_target = true;   // PEFT can wrap it (a 3-D experts tensor cannot)
  std::uint64_t stored_bytes = 0;  // > 0: quantised storage as the checkpoint holds it (not width x elements)
  LayerSet layers = LayerSet::All;  // with count: which layers (Dense / Moe: count is over those only)
  std::uint8_t stage = 0;           // LayerSet::Stage: which stage
  bool gradient = true;  // false: the forward of a text-only batch never reads it (LUKE's entity tables): no
                         // gradient, so no optimizer state (torch.optim skips a parameter whose .grad is None)
  bool cache_detached = false;  // RecurrentGemma's k_proj / v_proj: with the cache on (training without gradient
                                // checkpointing) the keys and values reach SDPA only through _update_cache, a no_grad
                                // copy: no gradient either
};

// Whether `t` gets a gradient in a run of `grad_checkpointing` (WeightTensor::gradient, cache_detached: the cache is on
// in training unless gradient checkpointing turns it off).
inline bool gets_gradient(const WeightTensor& t, bool grad_checkpointing) {
  return t.gradient && !(t.cache_detached && !grad_checkpointing);
}
// Every weight tensor of the model (layers included, via count).
std::vector<WeightTensor> describe_weights(const ModelConfig& model);
// Which kind of decoder layer: MoE or dense MLP, sliding-window or global attention.
struct LayerKind {
  bool moe = false;
  bool sliding = false;
  bool nope = false;   // no RoPE in this layer (SmolLM3's no_rope_layers)
  bool cross = false;  // a decoder layer of an encoder-decoder: self-attention, cross-attention, MLP
  std::uint8_t stage = 0;   // Swin: the stage the layer belongs to,
  bool shifted = false;     // whether its windows are shifted (every second block),
  bool stage_end = false;   // whether it is its stage's last block (patch merging follows)
  Mixer mixer = Mixer::Attention;  // a hybrid's token mixer in this layer
  bool routed = false;             // an encoder-decoder's layer whose feed-forward is NLLB-MoE's experts (NllbMoeSparseMLP)
};
// The layer kinds of the model with how many layers of each (sums to num_layers).
std::vector<std::pair<LayerKind, std::uint64_t>> layer_kinds(const ModelConfig& model);
// The names of the query, key and value projections as the family's modules have them (PEFT's names).
std::array<std::string_view, 3> projection_names(Family family);
// The attention's output projection as the family names it (o_proj, dense, out_proj).
std::string_view attention_output_name(Family family);
// The default LoRA target modules PEFT uses for this family.
std::vector<std::string> default_lora_targets(const ModelConfig& model);
// True when the Linear `name` is one of `targets` (exact or as PEFT's dotted suffix).
bool is_lora_target(const std::string& name, const std::vector<std::string>& targets);

}  // namespace vramdoc::estimator
