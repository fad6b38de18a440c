// Models with an encoder (BERT-style encoders, encoder-decoders, vision transformers): reading their
// config.json (encoder_config.cpp, each family's traits in encoder_traits.cpp) and their weight tensors
// with the task's head (encoder_weights.cpp).
#pragma once
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "core/estimator/architecture.hpp"
#include "core/estimator/model_config.hpp"
#include "core/result.hpp"

namespace vramdoc::estimator {

// True for the model types read by read_encoder_config (and any config with is_encoder_decoder).
bool has_encoder(std::string_view model_type, const nlohmann::json& cfg);
// Sets m's kind, family, widths and traits from an encoder's, encoder-decoder's or vision model's
// config.json. An unknown model type with an encoder is read as BERT or BART (with a warning).
Result<bool> read_encoder_config(ModelConfig& m, const nlohmann::json& cfg, const std::string& source);
// A generic decoder (an unknown model_type) asked for an encoder's task (seq-cls, token-cls, mlm; e.g.
// ModernBERT): the same widths read as a BERT-style encoder, flagged stand_in (the generic margin).
ModelConfig generic_encoder_of(const ModelConfig& decoder);
// A wrapper's vision_config (SigLIP, CLIP: a text and a vision tower) read as a vision model, with the
// wrapper's labels; null when the config has none with image_size and patch_size.
Result<std::shared_ptr<const ModelConfig>> read_vision_tower(const nlohmann::json& cfg, const std::string& source);
// A model with no vision tower asked for --task image-cls: a ViT stand-in of its widths (stand_in).
ModelConfig generic_vision_of(const ModelConfig& decoder);
// The encoder's attention when it is not dense (encoder_attention.cpp): Longformer's sliding chunks, Pegasus-X's
// global-local blocks, BigBird's block-sparse attention, LongT5's local and transient-global blocks.
void read_attention_kind(ModelConfig& m, const nlohmann::json& cfg);
// Token mixing other than attention, by its config fields (encoder_mixing.cpp): FNet's Fourier transform.
void read_token_mixing(ModelConfig& m, const nlohmann::json& cfg);
// The MLM head's width: RemBERT's output_embedding_size, else the embeddings' (ELECTRA's embedding_size), else
// hidden_size.
std::uint64_t mlm_width(const ModelConfig& m);
// Every weight tensor of an encoder, encoder-decoder or vision model with the head of m.task.
// Encoder-decoders' and Swin's layers differ from one another: their tensors are not per layer.
void add_encoder_weights(const ModelConfig& m, std::vector<WeightTensor>& w);
// Tokens one sequence has in the encoder: the text's `seq`, a vision model's patches (+ the class
// token for ViT), Whisper's max_source_positions.
std::uint64_t encoder_tokens(const ModelConfig& m, std::uint64_t seq, std::uint64_t image_size);

}  // namespace vramdoc::estimator
