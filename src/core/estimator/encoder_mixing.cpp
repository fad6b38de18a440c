// config.json -> text encoders whose layers mix tokens by something other than dense attention, read by the
// fields their configuration classes (transformers 5.17) define, so a relative sharing a mechanism reads the same:
// FNet's Fourier transform (configuration_fnet.py: use_tpu_fourier_optimizations), Funnel's pooled blocks
// (configuration_funnel.py: block_sizes, block_repeats, num_decoder_layers, pool_q_only, separate_cls, truncate_seq),
// LayoutLM's and MarkupLM's extra embeddings, Nystromformer's landmarks, XLM's heads and attention, CANINE's
// characters and molecules.
#include "core/estimator/config_fields.hpp"
#include "core/estimator/encoders.hpp"

namespace vramdoc::estimator {

namespace {

using nlohmann::json;

std::vector<std::uint64_t> sizes_of(const json& cfg, const char* name) {
  std::vector<std::uint64_t> out;
  if (const auto it = cfg.find(name); it != cfg.end() && it->is_array()) {
    for (const auto& v : *it) out.push_back(v.is_number_unsigned() && v.get<std::uint64_t>() < (1ULL << 16) ? v.get<std::uint64_t>() : 1);
  }
  return out;
}

std::uint64_t size_or(const json& cfg, const char* name, std::uint64_t fallback) {
  auto v = fields::size(cfg, {name}, "");
  return v && *v ? **v : fallback;
}

// FunnelConfig: block_sizes (default [4, 4, 4]) of layers, each applied block_repeats times (default 1 each);
// num_hidden_layers is their sum (a property; config.json has none, so the aliases took num_decoder_layers).
// FunnelEncoder pools the sequence by 2 before each block after the first; FunnelDecoder's num_decoder_layers
// (default 2) run on the upsampled full sequence (FunnelModel: every task but sequence classification and multiple
// choice, which run FunnelBaseModel). FunnelEmbeddings: word embeddings, LayerNorm, dropout (no positions, no token
// types); FunnelForMaskedLM's lm_head reads the last hidden state directly (no transform).
void read_funnel(ModelConfig& m, const json& cfg) {
  std::vector<std::uint64_t> blocks = sizes_of(cfg, "block_sizes"), repeats = sizes_of(cfg, "block_repeats");
  if (blocks.empty()) blocks = {4, 4, 4};
  repeats.resize(blocks.size(), 1);
  std::uint64_t layers = 0;
  for (std::size_t i = 0; i < blocks.size(); ++i) blocks[i] *= std::max<std::uint64_t>(repeats[i], 1), layers += blocks[i];
  m.enc.pooled_blocks = blocks, m.num_layers = layers;
  m.enc.upsampling_layers = size_or(cfg, "num_decoder_layers", 2);
  m.enc.pool_q_only = fields::flag(cfg, "pool_q_only", true);
  m.enc.separate_cls = fields::flag(cfg, "separate_cls", true);
  m.enc.truncate_seq = fields::flag(cfg, "truncate_seq", true);
  m.enc.type_vocab = 0, m.enc.position_table = false, m.enc.mlm_transform = false;
  m.residual_dropout = fields::fraction(cfg, "hidden_dropout", 0.1);
  m.attention_dropout = fields::fraction(cfg, "attention_dropout", 0.1);
}

}  // namespace

void read_token_mixing(ModelConfig& m, const nlohmann::json& cfg) {
  if (m.kind != ModelKind::Encoder) return;
  // FNetConfig (use_tpu_fourier_optimizations, class default false): FNetBasicFourierTransform mixes the tokens by
  // torch.fft.fftn(hidden, dim=(1, 2)).real in place of attention (no query / key / value / output projections,
  // FNetBasicOutput's LayerNorm only); FNetEmbeddings adds a Linear projection after its LayerNorm; FNetForMaskedLM
  // builds FNetModel with its pooler (modeling_fnet.py FNetEmbeddings, FNetBasicFourierTransform, FNetModel)
  if (cfg.contains("use_tpu_fourier_optimizations")) {
    m.enc.fourier_mixing = m.enc.embeddings_projection = m.enc.pooler_always = true;
  }
  if (cfg.contains("block_sizes") && cfg.contains("d_head")) read_funnel(m, cfg);  // FunnelConfig's own fields
  // LayoutLMConfig's max_2d_position_embeddings (LayoutLMEmbeddings: x / y / h / w tables, six lookups added to the
  // word, position and token type embeddings); MarkupLMConfig's max_depth, xpath_unit_hidden_size,
  // max_xpath_tag_unit_embeddings, max_xpath_subs_unit_embeddings (XPathEmbeddings)
  m.enc.layout_positions = size_or(cfg, "max_2d_position_embeddings", 0);
  if (cfg.contains("max_depth") && cfg.contains("xpath_unit_hidden_size")) {
    m.enc.xpath_depth = size_or(cfg, "max_depth", 50), m.enc.xpath_unit = size_or(cfg, "xpath_unit_hidden_size", 32);
    m.enc.xpath_tags = size_or(cfg, "max_xpath_tag_unit_embeddings", 256);
    m.enc.xpath_subs = size_or(cfg, "max_xpath_subs_unit_embeddings", 1024);
  }
  // NystromformerConfig's num_landmarks, segment_means_seq_len, conv_kernel_size (NystromformerSelfAttention)
  if (cfg.contains("num_landmarks") && cfg.contains("segment_means_seq_len")) {
    m.enc.landmarks = size_or(cfg, "num_landmarks", 64), m.enc.segment_means = size_or(cfg, "segment_means_seq_len", 64);
    m.enc.landmark_conv = size_or(cfg, "conv_kernel_size", 0);
    m.max_positions += 2;  // NystromformerEmbeddings: max_position_embeddings + 2 rows (position ids start at 2)
  }
  // XLMConfig's n_langs and use_lang_emb (modeling_xlm.py XLMModel): word and position embeddings, lang_embeddings only
  // with use_lang_emb and n_langs > 1 (no token types), post-norm layers; MultiHeadAttention writes out
  // eager_attention_forward's ops (softmax(scores.float()).type_as(scores), dropout); the sequence classifier is
  // SequenceSummary's proj straight to the labels (no pooler), XLMPredLayer's proj (tied, with bias) reads the last
  // hidden state directly (no transform); every layer's k and v go through the cache XLMModel.forward makes
  if (cfg.contains("n_langs") && cfg.contains("use_lang_emb")) {
    const std::uint64_t langs = size_or(cfg, "n_langs", 1);
    m.enc.type_vocab = fields::flag(cfg, "use_lang_emb", true) && langs > 1 ? langs : 0;
    m.enc.pooler = false, m.enc.mlm_transform = false, m.enc.interface_eager = true;
    m.enc.always_cached = true;  // XLMModel.forward: cache = EncoderDecoderCache(...) when none is given
    if (!fields::flag(cfg, "gelu_activation", true)) m.mlp = MlpKind::Relu;
  }
  // LukeConfig's entity_vocab_size, entity_emb_size, use_entity_aware_attention (modeling_luke.py
  // LukeEntityEmbeddings, LukeSelfAttention): the entity tables and queries are built, but a batch of text alone
  // (no entity_ids) never runs them (LukeModel.forward: `if entity_ids is not None`; the attention's
  // `entity_hidden_states is None` path is BERT's)
  if (cfg.contains("entity_vocab_size") && cfg.contains("entity_emb_size")) {
    m.enc.entity_vocab = size_or(cfg, "entity_vocab_size", 500000), m.enc.entity_embed = size_or(cfg, "entity_emb_size", 256);
    m.enc.entity_aware = fields::flag(cfg, "use_entity_aware_attention", true);
  }
  // RoCBertConfig's shape_embed_dim, pronunciation_embed_dim, enable_shape, enable_pronunciation, concat_input
  // (modeling_roc_bert.py RoCBertEmbeddings): both tables are built whatever the flags; with concat_input the enabled
  // lookups (their ids default to zeros) are concatenated to the word embeddings and map_inputs_layer maps the
  // concatenation back to the hidden size before the token types and positions are added
  if (cfg.contains("shape_embed_dim") && cfg.contains("pronunciation_embed_dim")) {
    m.enc.shape_embed = size_or(cfg, "shape_embed_dim", 512), m.enc.shape_vocab = size_or(cfg, "shape_vocab_size", 24858);
    m.enc.pronunciation_embed = size_or(cfg, "pronunciation_embed_dim", 768);
    m.enc.pronunciation_vocab = size_or(cfg, "pronunciation_vocab_size", 910);
    if (fields::flag(cfg, "concat_input", true)) {
      m.enc.shape_used = fields::flag(cfg, "enable_shape", true);
      m.enc.pronunciation_used = fields::flag(cfg, "enable_pronunciation", true);
      m.enc.concat_width = m.hidden_size + (m.enc.shape_used ? m.enc.shape_embed : 0) +
                           (m.enc.pronunciation_used ? m.enc.pronunciation_embed : 0);
    }
  }
  // LayoutLMv3Config's coordinate_size / shape_size (LayoutLMv3TextEmbeddings: x, y, h, w tables that narrow, six
  // lookups concatenated and added once), has_relative_attention_bias / rel_pos_bins and has_spatial_attention_bias /
  // rel_2d_pos_bins (LayoutLMv3Encoder: rel_pos_bias, rel_pos_x_bias, rel_pos_y_bias, Linears without bias whose
  // weights are gathered by the buckets into batch x heads x seq x seq biases, held through the layers), and
  // LayoutLMv3SelfAttention's own eager attention (q / sqrt(d), the biases / sqrt(d) added in place, the mask added,
  // cogview_attention: scores / 32 (saved by amax), minus the max, times 32, softmax). LayoutLMv3Model has no pooler.
  const bool v3 = cfg.contains("coordinate_size") && cfg.contains("shape_size") && m.enc.layout_positions > 0;
  if (v3) {
    m.enc.layout_coordinate = size_or(cfg, "coordinate_size", 128), m.enc.layout_shape = size_or(cfg, "shape_size", 128);
    m.enc.rel_1d_bins = fields::flag(cfg, "has_relative_attention_bias", true) ? size_or(cfg, "rel_pos_bins", 32) : 0;
    m.enc.rel_2d_bins = fields::flag(cfg, "has_spatial_attention_bias", true) ? size_or(cfg, "rel_2d_pos_bins", 64) : 0;
    m.enc.cogview_attention = true;
  }
  // CanineConfig's num_hash_functions, num_hash_buckets, downsampling_rate, upsampling_kernel_size,
  // local_transformer_stride (modeling_canine.py CanineModel): the characters' embeddings are num_hash_functions
  // lookups concatenated (CanineEmbeddings._embed_hash_buckets), char_position_embeddings has num_hash_buckets rows;
  // one initial character layer (local attention over chunks), the deep encoder's num_hidden_layers over the
  // downsampled molecules, ConvProjection and one final character layer (added per task in estimate.cpp, as
  // Funnel's decoder: for sequence classification its output is never read, estimated as a forward-only tail)
  if (cfg.contains("num_hash_functions") && cfg.contains("downsampling_rate")) {
    m.enc.hash_functions = size_or(cfg, "num_hash_functions", 8);
    m.enc.downsampling_rate = size_or(cfg, "downsampling_rate", 4);
    m.enc.upsampling_kernel = size_or(cfg, "upsampling_kernel_size", 4);
    m.enc.local_stride = size_or(cfg, "local_transformer_stride", 128);
    m.max_positions = size_or(cfg, "num_hash_buckets", 16384);
    m.enc.deep_layers = m.num_layers, m.num_layers += 1, m.enc.upsampling_layers = 1;
    m.enc.pooler_always = true;  // CanineModel builds and runs CaninePooler for every head (add_pooling_layer)
  }
  // IBertConfig's quant_mode and force_dequant (modeling_ibert.py, quant_modules.py): every LayerNorm is IntLayerNorm,
  // whose float path (quant_mode false, the default) is written out op by op (estimated for quant_mode true too)
  if (cfg.contains("quant_mode") && cfg.contains("force_dequant")) m.enc.int_layer_norm = true;
  // LayoutLMModel builds its pooler for every head (add_pooling_layer's default; MarkupLM's token classifier passes false)
  if (m.enc.layout_positions > 0 && !v3) m.enc.pooler_always = true;
}

}  // namespace vramdoc::estimator
