// config.json -> the attention of an encoder that does not attend densely (seq x seq), and FSMT's source
// embeddings: which fields say so and the class defaults transformers (5.17) takes when a config.json leaves them out. By field, not by model_type,
// so relatives that share a mechanism (BigBird's encoder and BigBird-Pegasus', LongT5's) read the same.
#include <algorithm>

#include "core/estimator/config_fields.hpp"
#include "core/estimator/encoders.hpp"
#include "core/units.hpp"

namespace vramdoc::estimator {

namespace {

using nlohmann::json;

std::uint64_t size_or(const json& cfg, const char* name, std::uint64_t fallback) {
  auto v = fields::size(cfg, {name}, "");
  return v && *v ? **v : fallback;
}

bool string_is(const json& cfg, const char* name, std::string_view value) {
  const auto it = cfg.find(name);
  return it != cfg.end() && it->is_string() && it->get<std::string>() == value;
}

// Longformer's attention_window (LED's encoder, Longformer): an even size, or one per layer (the largest is
// taken); 0 when absent.
std::uint64_t attention_window(const json& cfg) {
  const auto it = cfg.find("attention_window");
  if (it == cfg.end()) return 0;
  std::uint64_t largest = 0;
  for (const auto& v : it->is_array() ? *it : json::array({*it})) {
    if (v.is_number_unsigned() && v.get<std::uint64_t>() < (1ULL << 24)) largest = std::max(largest, v.get<std::uint64_t>());
  }
  return largest;
}

}  // namespace

void read_attention_kind(ModelConfig& m, const json& cfg) {
  if (m.kind == ModelKind::Vision) return;
  // src_vocab_size with tgt_vocab_size (FSMT, modeling_fsmt.py FSMTModel: the encoder's embed_tokens of
  // src_vocab_size, the decoder's of tgt_vocab_size, output_projection untied unless tie_word_embeddings): the
  // encoder's own table (vocab_size is read from tgt_vocab_size, config_aliases.cpp)
  if (m.kind == ModelKind::EncoderDecoder && cfg.contains("src_vocab_size") && cfg.contains("tgt_vocab_size")) {
    m.enc.source_vocab = size_or(cfg, "src_vocab_size", 0);
    m.embed_norm = false;  // FSMTEncoder / FSMTDecoder: no layernorm_embedding (modeling_fsmt.py:323-345, 513-540)
  }
  m.enc.attention_window = attention_window(cfg);
  // block_size with num_global_tokens (Pegasus-X's encoder, modeling_pegasus_x.py PegasusXGlobalLocalAttention):
  // block-local attention with global tokens (BigBird's block_size goes with attention_type instead)
  if (m.kind == ModelKind::EncoderDecoder && cfg.contains("num_global_tokens")) {
    m.enc.local_block = size_or(cfg, "block_size", 512), m.enc.global_tokens = size_or(cfg, "num_global_tokens", 32);
    m.enc.stagger_blocks = fields::flag(cfg, "stagger_local_blocks", true);
    m.enc.positions_buffer = true;  // PegasusXSinusoidalPositionalEmbedding: computed per call, no table
  }
  // attention_type "block_sparse" (BigBird, modeling_big_bird.py BigBirdBlockSparseAttention; its class defaults):
  // an encoder's layers, or an encoder-decoder's encoder layers (BigBird-Pegasus: modeling_bigbird_pegasus.py
  // BigBirdPegasusEncoderAttention runs BigBirdPegasusBlockSparseAttention, the same function; its decoder attends
  // densely)
  if (string_is(cfg, "attention_type", "block_sparse")) {
    m.enc.sparse_block = size_or(cfg, "block_size", 64), m.enc.random_blocks = size_or(cfg, "num_random_blocks", 3);
  }
  // encoder_attention_type "local" / "transient-global" (LongT5, configuration_longt5.py; modeling_longt5.py
  // LongT5LocalAttention, LongT5TransientGlobalAttention): blocks of local_radius + 1 tokens (class default 127),
  // transient-global with an aggregate per global_block_size tokens (default 16). The config class's default
  // encoder_attention_type is "local".
  if (m.kind == ModelKind::EncoderDecoder && cfg.contains("local_radius")) {
    m.enc.local_block_len = saturating_add(size_or(cfg, "local_radius", 127), 1);
    if (string_is(cfg, "encoder_attention_type", "transient-global")) m.enc.global_block_size = size_or(cfg, "global_block_size", 16);
  }
}

}  // namespace vramdoc::estimator
