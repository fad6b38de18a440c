// The estimator's internal pieces shared by its files: widths per precision, parameter sizes
// (quantised storage included), each layer's saved tensors, the phases, and the allocation
// sequence replayed through the allocator model. Not part of the public interface.
#pragma once
#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "core/estimator/allocator.hpp"
#include "core/estimator/architecture.hpp"
#include "core/estimator/estimate.hpp"

namespace vramdoc::estimator::detail {

using u64 = std::uint64_t;

struct Widths {
  u64 act, wide, weight;
  bool amp;
  bool fp32_adapter_inputs;  // QLoRA: the Linears' inputs are already fp32 (fp32 norms and embeddings)
};

// Widths of a run: precision, and QLoRA's fp32 norms / embeddings (prepare_model_for_kbit_training).
Widths widths_of(const Options& o);

// The quantisation a run uses: --mode qlora (nf4, double quantisation), --quant, or the checkpoint's.
Quantization effective_quant(const ModelConfig& m, const Options& o);
// Bytes a quantised Linear of `in` x `out` takes (packed weight plus scales / zero points / absmax).
u64 quantized_bytes(const Quantization& q, u64 in, u64 out);

struct Sizes {
  u64 params = 0, matmul_params = 0, adapter_params = 0, embed_params = 0, lm_head_params = 0, biggest_tensor = 0;
  u64 factored_state = 0;   // Adafactor: rows + cols per matrix, the whole vector otherwise
  u64 quant_params = 0;     // parameters stored quantised
  u64 gradless_params = 0;  // parameters the forward never reads (WeightTensor::gradient false)
  u64 quant_bytes = 0;      // their bytes as stored
  u64 dequant_elements = 0;  // the largest quantised Linear (dequantised in compute dtype per forward)
  u64 weight_bytes = 0;     // every weight as loaded (adapters excluded)
  // What one tensor-parallel rank holds (attention and MLP Linears divided by --tp; the same as
  // params without it), split into one decoder layer (an FSDP unit) and the rest (the root unit).
  u64 local_params = 0, local_matmul = 0, layer_params = 0, root_params = 0, persistent_params = 0;
};
Sizes count_params(const ModelConfig& m, const Options& o, const std::vector<std::string>& targets, const Widths& w);
// Adds `t` to the tensor-parallel rank's sizes (parallel.cpp): local_params, layer_params, ...
void count_local(const ModelConfig& m, const Options& o, const WeightTensor& t, Sizes& s);

// The attention kernel a layer runs (SDPA's math fallback in fp32 with grouped heads unless an explicit
// sliding-window mask sends it to the memory-efficient kernel; Falcon's single KV head broadcast).
AttentionPath attention_path(const ModelConfig& m, const Options& o, LayerKind kind = {});
bool trains(const Options& o);  // train, lora or qlora
bool adapters(const Options& o);  // lora or qlora

// Everything the phases and the allocation sequence share.
struct Run {
  const ModelConfig& m;
  const Options& o;
  Widths w;
  Sizes s;
  std::vector<std::string> targets;
};

std::vector<Phase> training_phases(const Run& r, bool checkpointing);
std::vector<Phase> inference_phases(const Run& r);
// The model's weights in bytes per tensor as the allocator sees them (stacked experts one tensor per
// layer, quantised storage as stored): one decoder layer's share, the embeddings', the head's; and
// the autocast 16-bit copies of a layer's Linears and of lm_head (under amp).
struct LayerWeights {
  std::vector<u64> tensors;
  std::vector<bool> via_cast;       // per tensor: a Linear weight autocast copies (its gradient comes 16-bit first)
  std::vector<u64> casts;           // the autocast copies of its Linears (under amp)
  std::vector<u64> unlinked_casts;  // those no Linear call makes (router, experts): training makes them at the layer's start
};
// A hybrid's layer of `kind` among WeightTensors::mixers (and TrainPlan's): its mixer, then dense or MoE.
inline std::size_t mixer_slot(LayerKind kind) { return static_cast<std::size_t>(kind.mixer) * 2 + (kind.moe ? 1 : 0); }
struct WeightTensors {
  LayerWeights dense, moe;  // a dense decoder layer's, a MoE layer's (the same unless a MoE model has dense layers)
  LayerWeights cross;       // an encoder-decoder's decoder layer (dense: its encoder layer)
  std::vector<LayerWeights> stages;  // Swin: a layer of each stage
  std::vector<LayerWeights> mixers;  // a hybrid: a layer of each mixer (model_config.hpp Mixer) x {dense, MoE}
  std::vector<u64> head, embed;
  u64 lm_head_cast = 0;
  std::size_t lm_head_at = SIZE_MAX;  // lm_head's weight in `head` (SIZE_MAX: tied, or none)
  LayerWeights& layer(LayerKind kind) {
    if (!mixers.empty()) return mixers[mixer_slot(kind)];
    return kind.cross ? cross : !stages.empty() ? stages[std::min<std::size_t>(kind.stage, stages.size() - 1)] : kind.moe ? moe : dense;
  }
  const LayerWeights& layer(LayerKind kind) const { return const_cast<WeightTensors*>(this)->layer(kind); }
};
// The run's weight tensors at `element_width` bytes each; with `gradients`, only those that get one (WeightTensor::gradient).
WeightTensors weight_tensors(const Run& r, u64 element_width, bool gradients = false);
// How many of the model's layers hold a tensor of `set` (all, the dense ones, the MoE ones, an
// encoder-decoder's encoder or decoder, Swin's stage `stage`).
u64 layers_in(const ModelConfig& m, LayerSet set, std::uint8_t stage = 0);
// A decoder layer's tensor (its count a positive multiple of the layers of its set): how many
// layers hold it; 0 for the embeddings, the final norm, lm_head.
u64 holding_layers(const ModelConfig& m, const WeightTensor& t);
// lm_head, its bias and the final norm: the tensors built after the layers (the rest outside
// the layers, the embeddings, before them).
bool head_tensor(const WeightTensor& t);

// What autograd keeps in training, from the forward recorded op by op (step_sequence.cpp):
// every layer's saved activations, the largest layer's (what a checkpointed layer recomputes),
// the head's (final norm, lm_head's input). Autocast weight copies are not included.
struct SavedBytes {
  u64 all_layers = 0, largest_layer = 0, head = 0;
  u64 mask = 0;  // a mask every layer's SDPA saves (Falcon's ALiBi mask), alive through the backward
};
SavedBytes saved_bytes(const Run& r);

// The step's allocations and frees, tensor by tensor, as PyTorch makes them: weights, then three
// training steps (or the prefill and the decoding steps). Replayed through CachingAllocator.
// `setup_events` (when given): how many of them build the model (the weights, the tied head's transient).
std::vector<AllocEvent> step_events(const Run& r, std::size_t* setup_events = nullptr);

// Training on several GPUs (DDP, FSDP, tensor parallel; not ZeRO, LoRA, offload): one rank's step
// replayed per CUDA stream (rank_sequence.cpp).
bool replays_rank(const Options& o);
ReplayResult replay_rank(const Run& r);


}  // namespace vramdoc::estimator::detail
