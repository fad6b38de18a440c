#include "core/estimator/presets.hpp"

#include <array>
#include <string>

namespace vramdoc::estimator {

namespace {

// Field values copied from each model's published config.json (Hugging Face hub).
constexpr std::array<Preset, 17> kPresets = {{
    {"llama-2-7b", "Meta Llama 2 7B (the articles' 7B example)",
     R"({"model_type":"llama","hidden_size":4096,"num_hidden_layers":32,"num_attention_heads":32,"num_key_value_heads":32,"intermediate_size":11008,"vocab_size":32000,"tie_word_embeddings":false})"},
    {"llama-2-13b", "Meta Llama 2 13B",
     R"({"model_type":"llama","hidden_size":5120,"num_hidden_layers":40,"num_attention_heads":40,"num_key_value_heads":40,"intermediate_size":13824,"vocab_size":32000,"tie_word_embeddings":false})"},
    {"llama-3-8b", "Meta Llama 3 / 3.1 8B (GQA 32/8)",
     R"({"model_type":"llama","hidden_size":4096,"num_hidden_layers":32,"num_attention_heads":32,"num_key_value_heads":8,"intermediate_size":14336,"vocab_size":128256,"tie_word_embeddings":false})"},
    {"llama-3-70b", "Meta Llama 3 / 3.1 70B",
     R"({"model_type":"llama","hidden_size":8192,"num_hidden_layers":80,"num_attention_heads":64,"num_key_value_heads":8,"intermediate_size":28672,"vocab_size":128256,"tie_word_embeddings":false})"},
    {"llama-3.2-1b", "Meta Llama 3.2 1B (tied embeddings)",
     R"({"model_type":"llama","hidden_size":2048,"num_hidden_layers":16,"num_attention_heads":32,"num_key_value_heads":8,"head_dim":64,"intermediate_size":8192,"vocab_size":128256,"tie_word_embeddings":true})"},
    {"mistral-7b", "Mistral 7B v0.1 (sliding window 4096)",
     R"({"model_type":"mistral","hidden_size":4096,"num_hidden_layers":32,"num_attention_heads":32,"num_key_value_heads":8,"intermediate_size":14336,"vocab_size":32000,"sliding_window":4096,"tie_word_embeddings":false})"},
    {"mixtral-8x7b", "Mixtral 8x7B (8 experts, 2 per token)",
     R"({"model_type":"mixtral","hidden_size":4096,"num_hidden_layers":32,"num_attention_heads":32,"num_key_value_heads":8,"intermediate_size":14336,"vocab_size":32000,"num_local_experts":8,"num_experts_per_tok":2,"tie_word_embeddings":false})"},
    {"qwen2.5-0.5b", "Qwen2.5 0.5B",
     R"({"model_type":"qwen2","hidden_size":896,"num_hidden_layers":24,"num_attention_heads":14,"num_key_value_heads":2,"intermediate_size":4864,"vocab_size":151936,"tie_word_embeddings":true})"},
    {"qwen2.5-7b", "Qwen2.5 7B",
     R"({"model_type":"qwen2","hidden_size":3584,"num_hidden_layers":28,"num_attention_heads":28,"num_key_value_heads":4,"intermediate_size":18944,"vocab_size":152064,"tie_word_embeddings":false})"},
    {"qwen3-8b", "Qwen3 8B (q/k norms)",
     R"({"model_type":"qwen3","hidden_size":4096,"num_hidden_layers":36,"num_attention_heads":32,"num_key_value_heads":8,"head_dim":128,"intermediate_size":12288,"vocab_size":151936,"tie_word_embeddings":false})"},
    {"gemma-2b", "Google Gemma 2B (MQA, head_dim 256)",
     R"({"model_type":"gemma","hidden_size":2048,"num_hidden_layers":18,"num_attention_heads":8,"num_key_value_heads":1,"head_dim":256,"intermediate_size":16384,"vocab_size":256000})"},
    {"gemma-7b", "Google Gemma 7B (head_dim 256, 256k vocabulary)",
     R"({"model_type":"gemma","hidden_size":3072,"num_hidden_layers":28,"num_attention_heads":16,"num_key_value_heads":16,"head_dim":256,"intermediate_size":24576,"vocab_size":256000})"},
    {"phi-3-mini", "Microsoft Phi-3 mini 3.8B (fused qkv, gate_up)",
     R"({"model_type":"phi3","hidden_size":3072,"num_hidden_layers":32,"num_attention_heads":32,"num_key_value_heads":32,"intermediate_size":8192,"vocab_size":32064,"tie_word_embeddings":false})"},
    {"deepseek-v2-lite", "DeepSeek-V2-Lite 16B (MoE: 64 experts, 6 per token; latent attention)",
     R"({"model_type":"deepseek_v2","hidden_size":2048,"num_hidden_layers":27,"num_attention_heads":16,"num_key_value_heads":16,"intermediate_size":10944,"moe_intermediate_size":1408,"n_routed_experts":64,"n_shared_experts":2,"num_experts_per_tok":6,"first_k_dense_replace":1,"moe_layer_freq":1,"q_lora_rank":null,"kv_lora_rank":512,"qk_nope_head_dim":128,"qk_rope_head_dim":64,"v_head_dim":128,"n_group":1,"topk_group":1,"topk_method":"greedy","vocab_size":102400,"tie_word_embeddings":false})"},
    {"deepseek-v3", "DeepSeek-V3 / R1 671B (MoE: 256 experts, 8 per token; fp8 weights as published)",
     R"({"model_type":"deepseek_v3","hidden_size":7168,"num_hidden_layers":61,"num_attention_heads":128,"num_key_value_heads":128,"intermediate_size":18432,"moe_intermediate_size":2048,"n_routed_experts":256,"n_shared_experts":1,"num_experts_per_tok":8,"first_k_dense_replace":3,"moe_layer_freq":1,"q_lora_rank":1536,"kv_lora_rank":512,"qk_nope_head_dim":128,"qk_rope_head_dim":64,"v_head_dim":128,"n_group":8,"topk_group":4,"topk_method":"noaux_tc","routed_scaling_factor":2.5,"num_nextn_predict_layers":1,"vocab_size":129280,"tie_word_embeddings":false,"quantization_config":{"activation_scheme":"dynamic","fmt":"e4m3","quant_method":"fp8","weight_block_size":[128,128]}})"},
    {"gpt2", "OpenAI GPT-2 124M",
     R"({"model_type":"gpt2","n_embd":768,"n_layer":12,"n_head":12,"vocab_size":50257,"n_positions":1024})"},
    {"gpt2-xl", "OpenAI GPT-2 XL 1.5B",
     R"({"model_type":"gpt2","n_embd":1600,"n_layer":48,"n_head":25,"vocab_size":50257,"n_positions":1024})"},
}};

}  // namespace

std::span<const Preset> presets() { return kPresets; }

Result<ModelConfig> preset_config(std::string_view name) {
  std::string known;
  for (const auto& p : kPresets) {
    if (p.name == name) {
      auto cfg = parse_config_json(p.config_json, "preset " + std::string(p.name));
      if (cfg) cfg->name = std::string(p.name);
      return cfg;
    }
    known += (known.empty() ? "" : ", ") + std::string(p.name);
  }
  return make_error("unknown model '" + std::string(name) + "' (built in: " + known + ")");
}

}  // namespace vramdoc::estimator
