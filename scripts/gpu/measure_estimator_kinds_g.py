#!/usr/bin/env python3
"""Ground truth for `vramdoc estimate`, issue 28 round 8: a fresh held-out set (families, kinds and
sizes never measured).

Method: measure_estimator_kinds.py's (imported from beside this file): a fresh forked process per
case, no warm-up, the allocator's trace of every case, NVML's per-process number, max-batch
scenarios on a card emulated with set_per_process_memory_fraction.

Held out, decided before measuring (2026-12-02 22:15, before round 8's branches were written; never
looked at while modelling; evaluated once after they merge). No model below was measured before; the
families marked "new" were never measured in any round:
- decoders, new: GPT-2 (Conv1D projections, learned positions), Phi (phi-2: parallel attention and MLP,
  partial rotary), Qwen3-MoE, DeepSeek-V3 (multi-head latent attention, shared + routed experts),
  OLMo-2 (norms after the sublayers, QK norm over the heads), Bamba (Mamba2 and attention layers),
  RecurrentGemma (RG-LRU recurrent blocks, local attention), DBRX, JetMoE (mixture of attention heads);
  new sizes of measured families: Llama-3.2-3B's widths (4 layers), Gemma-2-9B's widths (2 layers);
- encoders, new: CANINE (characters, downsampling), LUKE (entity embeddings), LiLT (layout stream),
  RoCBert (shape and pronunciation embeddings), XLM-RoBERTa-XL, FlauBERT, XLNet (two-stream relative
  attention); new sizes: BERT-large's widths, ModernBERT-large's widths;
- encoder-decoders and speech: T5Gemma (new: in place of XLM-ProphetNet, gone from transformers 5.17,
  changed after the first call failed to build it), BART-large's widths, Flan-T5's gated-GELU (T5 v1.1),
  Whisper-small's widths;
- vision: ResNet-34 (basic blocks), EfficientNet-B5's widths (456 px), Swin V2-B, ConvNeXt V2-L's widths,
  BEiT-L's widths, DINOv2-L's widths, ViT-L's widths, MobileNetV2 1.4, LeViT-128S.
`held_out` in each record (every case here is held out).

The first call (2026-12-02 22:20) built all but five: DBRX (its attn_config wants rope_theta), LUKE (positions
past 512 with the padding offset), XLNet (Parameters made on the CPU), LeViT (from_config on architectures=None),
XLM-ProphetNet (gone). Those five were fixed in the script, not looked at otherwise, and measured again in a second
call (filter 'dbrx|luke|xlnet|levit|t5gemma'). The output of both calls was lost with that session's machine
before anyone read it (never evaluated); the whole list was measured again, in one call, on 2026-12-03.

Usage: python3 measure_estimator_kinds_g.py OUTDIR [filter-substring] [--dry-run]
"""
import sys

import measure_estimator_kinds as k
import measure_estimator_kinds_e as e  # rounds 2-6's models in k.MODELS (imports _b, _c, _d)
import measure_estimator_kinds_f as f  # round 7's models

case = k.case

NEW_MODELS = {
    # decoders
    "gpt2-m6": ("gpt2", dict(n_embd=1024, n_layer=6, n_head=16, vocab_size=50257, n_positions=1024)),  # gpt2-medium
    "phi2-4": ("phi", dict(hidden_size=2560, intermediate_size=10240, num_hidden_layers=4, num_attention_heads=32,
                           num_key_value_heads=32, partial_rotary_factor=0.4, vocab_size=51200,
                           max_position_embeddings=2048)),                               # phi-2 widths, 4 layers
    "qwen3moe-s": ("qwen3_moe", dict(hidden_size=2048, intermediate_size=6144, moe_intermediate_size=768,
                                     num_hidden_layers=4, num_attention_heads=32, num_key_value_heads=4, head_dim=128,
                                     num_experts=32, num_experts_per_tok=8, vocab_size=151936,
                                     max_position_embeddings=8192)),                    # Qwen3-30B-A3B's widths
    "dsv3-s": ("deepseek_v3", dict(hidden_size=1024, intermediate_size=2816, moe_intermediate_size=256,
                                   num_hidden_layers=3, num_attention_heads=16, num_key_value_heads=16,
                                   q_lora_rank=384, kv_lora_rank=256, qk_rope_head_dim=32, qk_nope_head_dim=64,
                                   v_head_dim=64, n_routed_experts=16, n_shared_experts=1, num_experts_per_tok=4,
                                   n_group=1, topk_group=1, first_k_dense_replace=1, vocab_size=129280,
                                   max_position_embeddings=8192)),
    "olmo2-1b": ("olmo2", dict(hidden_size=2048, intermediate_size=8192, num_hidden_layers=4, num_attention_heads=16,
                               num_key_value_heads=16, vocab_size=100352, max_position_embeddings=4096)),
    "bamba-s": ("bamba", dict(hidden_size=1024, intermediate_size=2816, num_hidden_layers=4, num_attention_heads=16,
                              num_key_value_heads=4, attn_layer_indices=[1, 3], mamba_n_heads=32, mamba_d_head=64,
                              mamba_n_groups=1, mamba_d_state=128, mamba_d_conv=4, mamba_expand=2,
                              mamba_chunk_size=256, vocab_size=128000, max_position_embeddings=8192)),
    "rgemma-s": ("recurrent_gemma", dict(hidden_size=1024, intermediate_size=3072, num_hidden_layers=6,
                                         num_attention_heads=8, vocab_size=256000, attention_window_size=2048)),
    "dbrx-s": ("dbrx", dict(d_model=1024, n_heads=16, n_layers=4, max_seq_len=4096, vocab_size=100352,
                            attn_config=dict(kv_n_heads=4, clip_qkv=8, rope_theta=500000),
                            ffn_config=dict(ffn_hidden_size=1408, moe_num_experts=8, moe_top_k=2))),
    "jetmoe-s": ("jetmoe", dict(hidden_size=1024, num_hidden_layers=4, num_key_value_heads=8, kv_channels=64,
                                intermediate_size=2816, num_local_experts=8, num_experts_per_tok=2, vocab_size=32000,
                                max_position_embeddings=4096)),
    "llama32-3b4": ("llama", dict(hidden_size=3072, intermediate_size=8192, num_hidden_layers=4, num_attention_heads=24,
                                  num_key_value_heads=8, vocab_size=128256, tie_word_embeddings=True,
                                  max_position_embeddings=8192)),                       # Llama-3.2-3B widths
    "gemma2-9b2": ("gemma2", dict(hidden_size=3584, intermediate_size=14336, num_hidden_layers=2,
                                  num_attention_heads=16, num_key_value_heads=8, head_dim=256, vocab_size=256000,
                                  max_position_embeddings=8192)),                       # Gemma-2-9B widths
    # encoders
    "canine-s6": ("canine", dict(num_hidden_layers=6)),
    "luke-b": ("luke", dict(num_hidden_layers=6, max_position_embeddings=514, pad_token_id=1)),  # 512 + padding
    "lilt-b": ("lilt", dict(num_hidden_layers=6, vocab_size=50265, max_position_embeddings=514, pad_token_id=1)),
    "rocbert-b": ("roc_bert", dict(num_hidden_layers=6)),
    "xlmr-xl4": ("xlm-roberta-xl", dict(hidden_size=2560, intermediate_size=10240, num_hidden_layers=4,
                                        num_attention_heads=32, vocab_size=250880, max_position_embeddings=514,
                                        pad_token_id=1)),
    "flaubert-b": ("flaubert", dict(emb_dim=768, n_layers=6, n_heads=12, vocab_size=68729)),
    "xlnet-l6": ("xlnet", dict(d_model=1024, n_layer=6, n_head=16, d_inner=4096, vocab_size=32000)),
    "bert-l12": ("bert", dict(hidden_size=1024, num_hidden_layers=12, num_attention_heads=16,
                              intermediate_size=4096)),                                 # bert-large widths
    "modernbert-l8": ("modernbert", dict(hidden_size=1024, intermediate_size=2624, num_hidden_layers=8,
                                         num_attention_heads=16)),                      # ModernBERT-large widths
    # encoder-decoders and speech
    # T5Gemma (new; replaces XLM-ProphetNet, which transformers 5.17 no longer has: the first call's ValueError)
    "t5gemma-s": ("t5gemma", dict(encoder=dict(hidden_size=1024, intermediate_size=2816, num_hidden_layers=4,
                                               num_attention_heads=8, num_key_value_heads=4, head_dim=128,
                                               vocab_size=256000),
                                  decoder=dict(hidden_size=1024, intermediate_size=2816, num_hidden_layers=4,
                                               num_attention_heads=8, num_key_value_heads=4, head_dim=128,
                                               vocab_size=256000),
                                  vocab_size=256000, decoder_start_token_id=0)),
    "bart-l6": ("bart", dict(d_model=1024, encoder_layers=6, decoder_layers=6, encoder_attention_heads=16,
                             decoder_attention_heads=16, encoder_ffn_dim=4096, decoder_ffn_dim=4096,
                             vocab_size=50265)),                                        # bart-large widths
    "flant5-b6": ("t5", dict(d_model=768, d_ff=2048, d_kv=64, num_heads=12, num_layers=6, num_decoder_layers=6,
                             feed_forward_proj="gated-gelu", tie_word_embeddings=False, vocab_size=32128,
                             decoder_start_token_id=0)),                                # flan-t5-base widths
    "whisper-s4": ("whisper", dict(d_model=768, encoder_layers=4, decoder_layers=4, encoder_attention_heads=12,
                                   decoder_attention_heads=12, encoder_ffn_dim=3072, decoder_ffn_dim=3072,
                                   num_mel_bins=80, vocab_size=51865)),                 # whisper-small widths
    # vision
    "resnet-34": ("resnet", dict(depths=[3, 4, 6, 3], hidden_sizes=[64, 128, 256, 512], layer_type="basic",
                                 embedding_size=64, num_labels=1000)),
    "effnet-b5": ("efficientnet", dict(width_coefficient=1.6, depth_coefficient=2.2, image_size=456, dropout_rate=0.4,
                                       hidden_dim=2048, num_labels=1000)),
    "swinv2-b": ("swinv2", dict(image_size=256, embed_dim=128, depths=[2, 2, 18, 2], num_heads=[4, 8, 16, 32],
                                window_size=8, num_labels=1000)),
    "convnextv2-l": ("convnextv2", dict(depths=[3, 3, 27, 3], hidden_sizes=[192, 384, 768, 1536], num_labels=1000)),
    "beit-l6": ("beit", dict(hidden_size=1024, num_hidden_layers=6, num_attention_heads=16, intermediate_size=4096,
                             use_relative_position_bias=True, num_labels=1000)),
    "dinov2-l6": ("dinov2", dict(hidden_size=1024, num_hidden_layers=6, num_attention_heads=16, patch_size=14,
                                 image_size=224, num_labels=1000)),
    "vit-l8": ("vit", dict(hidden_size=1024, num_hidden_layers=8, num_attention_heads=16, intermediate_size=4096,
                           patch_size=16, image_size=224, num_labels=1000)),
    "mobilenetv2-14": ("mobilenet_v2", dict(depth_multiplier=1.4, image_size=224, num_labels=1000)),
    "levit-128s": ("levit", dict(hidden_sizes=[128, 256, 384], num_attention_heads=[4, 6, 8], depths=[2, 3, 4],
                                 key_dim=[16, 16, 16], num_labels=1000)),
}
HELD_OUT_MODELS = set(NEW_MODELS)
k.MODELS.update(NEW_MODELS)
# round 6's packing bound (e.need_bytes, per image for convolutional and hierarchical image models) for these too
e.IMAGE_KINDS.update({"swinv2", "convnextv2", "levit", "resnet", "efficientnet", "mobilenet_v2"})


def held_out(model):
    """Round 8's held-out set: the models above (every earlier round's cases are dev now)."""
    return model in HELD_OUT_MODELS


k.held_out = held_out
e.held_out = held_out
f.held_out = held_out


def build_cases():
    cases = []
    # decoders
    cases += [case("gpt2-m6", "causal-lm", "train", "bf16", 8, 1024),
              case("gpt2-m6", "causal-lm", "infer", "bf16", 16, 1000, generate=8),
              case("phi2-4", "causal-lm", "train", "bf16", 4, 1024),
              case("phi2-4", "causal-lm", "lora", "bf16", 4, 2040),
              case("qwen3moe-s", "causal-lm", "train", "bf16", 4, 1024),
              case("qwen3moe-s", "causal-lm", "infer", "bf16", 8, 2040, generate=8),
              case("dsv3-s", "causal-lm", "train", "bf16", 4, 1024),
              case("dsv3-s", "causal-lm", "infer", "bf16", 8, 2040, generate=8),
              case("olmo2-1b", "causal-lm", "train", "bf16", 4, 1024),
              case("olmo2-1b", "causal-lm", "train", "amp_bf16", 2, 2048, ck=True),
              case("bamba-s", "causal-lm", "train", "bf16", 4, 512),
              case("rgemma-s", "causal-lm", "train", "bf16", 4, 1024),
              case("rgemma-s", "causal-lm", "infer", "bf16", 8, 1024, generate=8),
              case("dbrx-s", "causal-lm", "train", "bf16", 4, 1024),
              case("jetmoe-s", "causal-lm", "train", "bf16", 4, 1024),
              case("llama32-3b4", "causal-lm", "train", "bf16", 2, 2048),
              case("llama32-3b4", "causal-lm", "lora", "bf16", 4, 2048),
              case("llama32-3b4", "causal-lm", "infer", "bf16", 8, 2040, generate=8),
              case("gemma2-9b2", "causal-lm", "train", "bf16", 2, 2048),
              case("gemma2-9b2", "causal-lm", "infer", "bf16", 8, 2040, generate=8)]
    # encoders
    cases += [case("canine-s6", "seq-cls", "train", "bf16", 16, 1024),
              case("luke-b", "seq-cls", "train", "bf16", 16, 512),
              case("lilt-b", "token-cls", "train", "bf16", 16, 512),
              case("rocbert-b", "seq-cls", "train", "bf16", 16, 512),
              case("xlmr-xl4", "seq-cls", "train", "bf16", 8, 512),
              case("xlmr-xl4", "mlm", "infer", "bf16", 16, 512),
              case("flaubert-b", "seq-cls", "train", "bf16", 16, 512),
              case("xlnet-l6", "seq-cls", "train", "bf16", 8, 512),
              case("bert-l12", "token-cls", "train", "amp_bf16", 16, 512),
              case("bert-l12", "mlm", "infer", "bf16", 32, 512),
              case("modernbert-l8", "seq-cls", "train", "bf16", 16, 1024)]
    # encoder-decoders and speech
    cases += [case("t5gemma-s", "seq2seq", "train", "bf16", 4, 512, target=128),
              case("bart-l6", "seq2seq", "train", "bf16", 8, 512, target=128),
              case("bart-l6", "seq2seq", "infer", "bf16", 16, 512, generate=8),
              case("flant5-b6", "seq2seq", "train", "bf16", 8, 512, target=128),
              case("flant5-b6", "seq2seq", "train", "amp_bf16", 8, 512, target=128),
              case("whisper-s4", "speech-seq2seq", "train", "bf16", 8, 1, target=128)]
    # vision
    cases += [case("resnet-34", "image-cls", "train", "bf16", 128, 1, image=224),
              case("resnet-34", "image-cls", "infer", "bf16", 256, 1, image=224),
              case("effnet-b5", "image-cls", "train", "bf16", 8, 1, image=456),
              case("swinv2-b", "image-cls", "train", "bf16", 32, 1, image=256),
              case("convnextv2-l", "image-cls", "train", "amp_bf16", 16, 1, image=224),
              case("beit-l6", "image-cls", "train", "bf16", 32, 1, image=224),
              case("dinov2-l6", "image-cls", "train", "bf16", 32, 1, image=224),
              case("vit-l8", "image-cls", "train", "amp_bf16", 64, 1, image=224),
              case("vit-l8", "image-cls", "infer", "bf16", 256, 1, image=224),
              case("mobilenetv2-14", "image-cls", "train", "bf16", 64, 1, image=224),
              case("levit-128s", "image-cls", "train", "bf16", 128, 1, image=224)]
    return cases


# (model, task, mode, precision, seq, card MiB as nvidia-smi reports it, extra case fields): all held out
SCENARIOS = [
    ("gpt2-m6", "causal-lm", "train", "bf16", 1024, 12288, {}),                      # RTX 3060
    ("qwen3moe-s", "causal-lm", "infer", "bf16", 2040, 24564, dict(generate=8)),     # RTX 4090
    ("bert-l12", "token-cls", "train", "amp_bf16", 512, 16384, {}),
    ("vit-l8", "image-cls", "train", "amp_bf16", 1, 16384, dict(image_size=224)),
    ("bart-l6", "seq2seq", "train", "bf16", 512, 16384, dict(target_seq=128)),
]

if __name__ == "__main__":
    sys.exit(k.main(build_cases(), SCENARIOS))
