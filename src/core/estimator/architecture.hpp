// What each architecture is made of: its weight tensors, and what one decoder layer's forward
// pass keeps alive for backward (per token), as autograd saves it in PyTorch + transformers.
#pragma once
#include <cstdint>
#include <utility>
#include <string>
#include <vector>

#include "core/estimator/model_config.hpp"

namespace vramdoc::estimator {

// The bytes of one element depend on the precision; each saved tensor names its rule.
enum class Dtype {
  Act,   // the matmul output dtype: fp32 in fp32, 16-bit under autocast or in a 16-bit model
  Wide,  // fp32 in fp32 and under autocast (residual stream, fp32-listed ops), else 16-bit
  Fp32,  // always fp32 (RMSNorm's upcast copy, softmax(dtype=float32) output)
  Mask,  // one byte (dropout masks)
  Copy16,  // a 16-bit copy of an fp32 tensor: 2 bytes, none in an fp32 model (the cast is a no-op)
  AutocastCopy16,  // a 16-bit copy of an autocast-fp32 (Wide) tensor: 2 bytes under autocast only
};

// Which attention kernel the forward runs; decided from --attention, precision and GQA.
enum class AttentionPath {
  Fused,   // SDPA's flash / memory-efficient kernels: no seq x seq matrix is kept
  Math,    // SDPA's math fallback (fp32 with GQA): keeps the fp32 probabilities
  Eager,   // transformers' eager attention: keeps the probabilities it materialises
};

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
};

struct SavedTensor {
  std::string what;
  std::uint64_t elements_per_token = 0;
  Dtype dtype = Dtype::Act;
  bool weight_grad_only = false;  // needed only for a norm weight's gradient: gone when frozen
  std::uint64_t tensors = 1;      // how many equal tensors the item stands for (the allocator sees each)
  bool tp_split = false;          // per head or per MLP channel: tensor parallelism divides it
};

// A Linear's input: saved for the weight gradient when the Linear trains. Under autocast each
// consumer casts an fp32 source to 16 bit separately; PEFT's LoRA casts it to fp32 per adapter.
struct LinearInput {
  std::string what;
  std::uint64_t elements_per_token = 0;
  std::vector<std::string> consumers;  // module names (match WeightTensor::name)
  bool wide_source = false;             // the source has Dtype::Wide (a norm output)
  bool already_saved = false;           // the source is in `saved` (e.g. SDPA's output)
  bool tp_split = false;                // a row-parallel Linear's input (o_proj, down_proj): divided by --tp
};

struct LayerActivations {
  std::vector<SavedTensor> saved;
  std::vector<LinearInput> linear_inputs;
};

// Every weight tensor of the model (layers included, via count).
std::vector<WeightTensor> describe_weights(const ModelConfig& model);
// Which kind of decoder layer: MoE or dense MLP, sliding-window or global attention.
struct LayerKind {
  bool moe = false;
  bool sliding = false;
};
// The layer kinds of the model with how many layers of each (sums to num_layers).
std::vector<std::pair<LayerKind, std::uint64_t>> layer_kinds(const ModelConfig& model);
// What one decoder layer keeps alive for backward, per token, for a sequence of `seq` tokens.
LayerActivations describe_layer(const ModelConfig& model, AttentionPath path, std::uint64_t seq, LayerKind kind);
// What the model keeps outside its layers: embeddings' dropout, the final norm, lm_head's input.
LayerActivations describe_head(const ModelConfig& model);
// The default LoRA target modules PEFT uses for this family.
std::vector<std::string> default_lora_targets(const ModelConfig& model);
// True when the Linear `name` is one of `targets` (exact or as PEFT's dotted suffix).
bool is_lora_target(const std::string& name, const std::vector<std::string>& targets);

}  // namespace vramdoc::estimator
