#!/usr/bin/env python3
"""Ground truth for `vramdoc estimate`, issue 28 round 10: a fresh held-out set (families, kinds and
sizes never measured).

Method: measure_estimator_kinds.py's (imported from beside this file): a fresh forked process per
case, no warm-up, the allocator's trace of every case, NVML's per-process number, max-batch
scenarios on a card emulated with set_per_process_memory_fraction.

Held out, decided before measuring and before round 10's modelling (2026-12-03 15:00); never looked at
while modelling; evaluated once, after. Round 10's modelling works on round 1-9's misses only (every
earlier case is dev now) and reads no modelling file of a family below marked "new". Every model below was
checked against every earlier round's table (scripts/gpu/check_case_list.py: no reused name, no repeated
config) before this list was committed.
- decoders, new (each in transformers' causal-LM mapping): VaultGemma, DiffLlama (differential attention),
  Doge (dynamic mask attention), dots.llm1 (shared + routed experts), LFM2-MoE (short convolutions and
  attention with MoE), FlexOlmo, Zamba2 (Mamba2 layers and a shared attention block), Qwen3-Next (gated
  delta-net linear attention, MoE with a shared expert), MiniMax (lightning linear attention with MoE),
  Ministral (sliding-window layers), GPT-NeoX-Japanese, CTRL, BitNet (ReLU^2 MLP and sub-norms, unquantised),
  ModernBERT-decoder (local and global layers); new sizes of measured families: Llama-3.2-1B's widths
  (4 layers, with the fp32 SGD case), Qwen2.5-1.5B's widths (4 layers, with the amp_bf16 gradient
  checkpointing case), Phi-3-mini's widths (6 layers), Gemma-2-27B's widths (2 layers), Mixtral-8x7B's widths
  (1 layer), Qwen3-30B-A3B's widths (2 layers, 128 experts), GPT-2-XL's widths (6 layers), Falcon-7B's widths
  (2 layers: multi-query, parallel attention);
- encoders, new: YOSO (LSH attention by its expectation: use_fast_hash=False, no custom kernel), MRA (its
  attention has CUDA kernels of its own, huggingface/transformers#24513: the case may fail on a machine that
  cannot fetch or compile them, and is then reported as not run), TAPAS (seven token-type tables);
  new sizes: BERT-large's widths (8 layers), RoBERTa-large's widths (6 layers), DeBERTa-v3-large's widths
  (8 layers), multilingual DistilBERT's vocabulary, ModernBERT-large's widths (12 layers);
- encoder-decoders and speech: new sizes: Flan-T5-base's widths (4 + 4), distilBART-xsum-12-3's widths
  (12 + 3), Marian transformer-big widths (opus-mt-tc-big), NLLB-200-distilled-600M's widths (m2m_100,
  4 + 4, 256206 tokens), Whisper-small's widths (6 + 6, LoRA without a PEFT task as round 1's);
- vision: Donut's Swin encoder (new: donut-swin); new sizes: ViT-B/32 at 384 px, DeiT-tiny (inference),
  Swin-L's widths with depths [2, 2, 6, 2], ConvNeXt-S (inference), EfficientNet-B4 (380 px),
  MobileNetV2 0.75 at 160 px, BEiT-L's widths (8 layers), DINOv2-g's widths (4 layers, SwiGLU), RegNetY-4.0GF.
Where the first draft of this list named an earlier round's model exactly (ViT-B/32 at 224 px, RoBERTa-large 8
layers, DeBERTa-v3-large 6 layers, ModernBERT-large 8 layers, BART-base, Marian en-de, EfficientNet-B3,
MobileNetV2 1.0, Gemma-2-9B 2 layers, DINOv2-L 6 layers), the nearest size never measured replaced it (above).
`held_out` in each record (every case here is held out).

Correction (2026-12-03 15:07, after the first call, before anything was evaluated; only its two errors read): two
cases failed and were changed and measured again in a second call (filter 'phi3-mini6|yoso-b6'): Phi-3-mini's LoRA
(PEFT found no default target: NoMatchingPeftModuleError; the targets are now Phi-3's fused qkv_proj, as PEFT's
table names it and vramdoc's default is) and YOSO's training under autocast (its own "expected scalar type Float but
found BFloat16": now fp32 with AdamW).

Usage: python3 measure_estimator_kinds_i.py OUTDIR [filter-substring] [--dry-run]
"""
import sys

import measure_estimator_kinds as k
import measure_estimator_kinds_e as e  # rounds 2-6's models in k.MODELS (imports _b, _c, _d)
import measure_estimator_kinds_f as f  # round 7's models
import measure_estimator_kinds_g as g  # round 8's models
import measure_estimator_kinds_h as h  # round 9's models; its need_bytes (experts under any name) is k.need_bytes

case = k.case

DEBERTA_V3 = dict(vocab_size=128100, relative_attention=True, position_buckets=256, norm_rel_ebd="layer_norm",
                  share_att_key=True, pos_att_type=["p2c", "c2p"], position_biased_input=False,
                  max_relative_positions=-1)

NEW_MODELS = {
    # decoders, families never measured
    "vaultgemma-s": ("vaultgemma", dict(hidden_size=1152, intermediate_size=6912, num_hidden_layers=4,
                                        num_attention_heads=4, num_key_value_heads=4, head_dim=256,
                                        query_pre_attn_scalar=256, sliding_window=1024, vocab_size=256000,
                                        max_position_embeddings=8192)),
    "diffllama-s": ("diffllama", dict(hidden_size=1024, intermediate_size=4096, num_hidden_layers=4,
                                      num_attention_heads=16, num_key_value_heads=8, vocab_size=32000,
                                      max_position_embeddings=4096)),
    "doge-s": ("doge", dict(hidden_size=1024, intermediate_size=2048, num_hidden_layers=4, num_attention_heads=8,
                            num_key_value_heads=4, keep_window_size=1024, is_moe=False, vocab_size=32768,
                            max_position_embeddings=4096)),
    "dots1-s": ("dots1", dict(hidden_size=1024, intermediate_size=2816, moe_intermediate_size=384,
                              num_hidden_layers=4, num_attention_heads=16, num_key_value_heads=16,
                              n_routed_experts=16, n_shared_experts=2, num_experts_per_tok=4,
                              first_k_dense_replace=1, vocab_size=152064, max_position_embeddings=8192)),
    "lfm2moe-s": ("lfm2_moe", dict(hidden_size=1024, intermediate_size=4096, moe_intermediate_size=512,
                                   num_hidden_layers=6, num_attention_heads=16, num_key_value_heads=8,
                                   num_dense_layers=2, num_experts=16, num_experts_per_tok=4,
                                   layer_types=["conv", "conv", "full_attention", "conv", "conv", "full_attention"],
                                   vocab_size=65536, max_position_embeddings=8192)),
    "flexolmo-s": ("flex_olmo", dict(hidden_size=1024, intermediate_size=2816, num_hidden_layers=4,
                                     num_attention_heads=16, num_key_value_heads=16, num_experts=8,
                                     num_experts_per_tok=2, vocab_size=100352, max_position_embeddings=4096)),
    "zamba2-s": ("zamba2", dict(hidden_size=1024, intermediate_size=4096, num_hidden_layers=4,
                                layers_block_type=["mamba", "hybrid", "mamba", "hybrid"], num_attention_heads=16,
                                n_mamba_heads=32, mamba_d_state=64, mamba_d_conv=4, mamba_expand=2,
                                mamba_ngroups=1, chunk_size=256, num_mem_blocks=1, vocab_size=32000,
                                max_position_embeddings=4096)),
    "qwen3next-s": ("qwen3_next", dict(hidden_size=1024, intermediate_size=2816, moe_intermediate_size=512,
                                       shared_expert_intermediate_size=512, num_hidden_layers=4,
                                       num_attention_heads=8, num_key_value_heads=2, head_dim=128,
                                       linear_num_key_heads=8, linear_num_value_heads=16, linear_key_head_dim=64,
                                       linear_value_head_dim=64, num_experts=16, num_experts_per_tok=4,
                                       vocab_size=151936, max_position_embeddings=8192)),
    "minimax-s": ("minimax", dict(hidden_size=1024, intermediate_size=2048, num_hidden_layers=4,
                                  num_attention_heads=16, num_key_value_heads=8, head_dim=64, num_local_experts=8,
                                  num_experts_per_tok=2, block_size=256, vocab_size=200064,
                                  max_position_embeddings=8192)),
    "ministral-s": ("ministral", dict(hidden_size=2048, intermediate_size=6144, num_hidden_layers=4,
                                      num_attention_heads=16, num_key_value_heads=8, head_dim=128,
                                      sliding_window=1024,
                                      layer_types=["sliding_attention", "full_attention"] * 2,
                                      vocab_size=131072, max_position_embeddings=8192)),
    "gptneoxjp-s": ("gpt_neox_japanese", dict(hidden_size=2048, num_hidden_layers=4, num_attention_heads=16,
                                              intermediate_multiple_size=4, vocab_size=32000,
                                              max_position_embeddings=2048)),
    "ctrl-s": ("ctrl", dict(n_embd=1280, dff=8192, n_layer=4, n_head=16, vocab_size=246534, n_positions=1024)),
    "bitnet-s": ("bitnet", dict(hidden_size=2048, intermediate_size=5632, num_hidden_layers=4,
                                num_attention_heads=16, num_key_value_heads=4, vocab_size=128256,
                                max_position_embeddings=4096)),
    "modernbert-dec-s": ("modernbert-decoder", dict(hidden_size=1024, intermediate_size=2624, num_hidden_layers=6,
                                                    num_attention_heads=16, local_attention=128, vocab_size=50368,
                                                    max_position_embeddings=8192)),
    # decoders, new sizes of measured families
    "llama32-1b4": ("llama", dict(hidden_size=2048, intermediate_size=8192, num_hidden_layers=4,
                                  num_attention_heads=32, num_key_value_heads=8, head_dim=64, vocab_size=128256,
                                  tie_word_embeddings=True, max_position_embeddings=8192)),
    "qwen25-1.5b4": ("qwen2", dict(hidden_size=1536, intermediate_size=8960, num_hidden_layers=4,
                                   num_attention_heads=12, num_key_value_heads=2, vocab_size=151936,
                                   tie_word_embeddings=True, max_position_embeddings=32768)),
    "phi3-mini6": ("phi3", dict(hidden_size=3072, intermediate_size=8192, num_hidden_layers=6, num_attention_heads=32,
                                num_key_value_heads=32, vocab_size=32064, max_position_embeddings=4096,
                                pad_token_id=32000)),
    "gemma2-27b2": ("gemma2", dict(hidden_size=4608, intermediate_size=36864, num_hidden_layers=2,
                                   num_attention_heads=32, num_key_value_heads=16, head_dim=128,
                                   query_pre_attn_scalar=144, sliding_window=4096, vocab_size=256000,
                                   max_position_embeddings=8192)),
    "mixtral-8x7b1": ("mixtral", dict(hidden_size=4096, intermediate_size=14336, num_hidden_layers=1,
                                      num_attention_heads=32, num_key_value_heads=8, num_local_experts=8,
                                      num_experts_per_tok=2, vocab_size=32000, max_position_embeddings=8192)),
    "qwen3-30b-a3b2": ("qwen3_moe", dict(hidden_size=2048, intermediate_size=6144, moe_intermediate_size=768,
                                         num_hidden_layers=2, num_attention_heads=32, num_key_value_heads=4,
                                         head_dim=128, num_experts=128, num_experts_per_tok=8, vocab_size=151936,
                                         max_position_embeddings=8192)),
    "gpt2-xl6": ("gpt2", dict(n_embd=1600, n_layer=6, n_head=25, vocab_size=50257, n_positions=1024)),
    "falcon-7b2": ("falcon", dict(hidden_size=4544, num_hidden_layers=2, num_attention_heads=71, multi_query=True,
                                  parallel_attn=True, bias=False, new_decoder_architecture=False, alibi=False,
                                  vocab_size=65024, max_position_embeddings=2048)),
    # encoders
    "yoso-b6": ("yoso", dict(hidden_size=768, num_hidden_layers=6, num_attention_heads=12, intermediate_size=3072,
                             vocab_size=50265, max_position_embeddings=4096, use_expectation=True,
                             use_fast_hash=False)),
    "mra-b6": ("mra", dict(hidden_size=768, num_hidden_layers=6, num_attention_heads=12, intermediate_size=3072,
                           vocab_size=50265, max_position_embeddings=514, block_per_row=4, approx_mode="full")),
    "tapas-b6": ("tapas", dict(hidden_size=768, num_hidden_layers=6, num_attention_heads=12, intermediate_size=3072,
                               vocab_size=30522, max_position_embeddings=1024)),
    "bert-l8": ("bert", dict(hidden_size=1024, num_hidden_layers=8, num_attention_heads=16, intermediate_size=4096)),
    "roberta-l6": ("roberta", dict(hidden_size=1024, num_hidden_layers=6, num_attention_heads=16,
                                   intermediate_size=4096, vocab_size=50265, max_position_embeddings=514,
                                   type_vocab_size=1, pad_token_id=1)),
    "debv3-l8": ("deberta-v2", dict(DEBERTA_V3, hidden_size=1024, num_hidden_layers=8, num_attention_heads=16,
                                    intermediate_size=4096)),
    "mdistilbert": ("distilbert", dict(vocab_size=119547)),          # distilbert-base-multilingual-cased
    "modernbert-l12": ("modernbert", dict(hidden_size=1024, intermediate_size=2624, num_hidden_layers=12,
                                          num_attention_heads=16)),
    # encoder-decoders and speech
    "flant5-b4": ("t5", dict(d_model=768, d_ff=2048, d_kv=64, num_heads=12, num_layers=4, num_decoder_layers=4,
                             feed_forward_proj="gated-gelu", tie_word_embeddings=False, vocab_size=32128,
                             decoder_start_token_id=0)),
    "distilbart-12-3": ("bart", dict(d_model=1024, encoder_layers=12, decoder_layers=3, encoder_attention_heads=16,
                                     decoder_attention_heads=16, encoder_ffn_dim=4096, decoder_ffn_dim=4096,
                                     vocab_size=50264)),
    "marian-big": ("marian", dict(vocab_size=58101, decoder_vocab_size=58101, d_model=1024, encoder_layers=6,
                                  decoder_layers=6, encoder_attention_heads=16, decoder_attention_heads=16,
                                  encoder_ffn_dim=4096, decoder_ffn_dim=4096, pad_token_id=58100,
                                  decoder_start_token_id=58100)),
    "nllb-600m4": ("m2m_100", dict(vocab_size=256206, d_model=1024, encoder_layers=4, decoder_layers=4,
                                   encoder_attention_heads=16, decoder_attention_heads=16, encoder_ffn_dim=4096,
                                   decoder_ffn_dim=4096, scale_embedding=True, decoder_start_token_id=2)),
    "whisper-s6": ("whisper", dict(d_model=768, encoder_layers=6, decoder_layers=6, encoder_attention_heads=12,
                                   decoder_attention_heads=12, encoder_ffn_dim=3072, decoder_ffn_dim=3072,
                                   num_mel_bins=80, vocab_size=51865)),
    # vision
    "donut-swin-s": ("donut-swin", dict(image_size=224, embed_dim=128, depths=[2, 2, 6, 2], num_heads=[4, 8, 16, 32],
                                        window_size=7, num_labels=1000)),
    "vit-b32-384": ("vit", dict(patch_size=32, image_size=384, num_labels=1000)),
    "deit-t": ("deit", dict(hidden_size=192, num_hidden_layers=12, num_attention_heads=3, intermediate_size=768,
                            patch_size=16, image_size=224, num_labels=1000)),
    "swin-l2262": ("swin", dict(embed_dim=192, depths=[2, 2, 6, 2], num_heads=[6, 12, 24, 48], window_size=7,
                                num_labels=1000)),
    "convnext-s": ("convnext", dict(depths=[3, 3, 27, 3], hidden_sizes=[96, 192, 384, 768], num_labels=1000)),
    "effnet-b4": ("efficientnet", dict(width_coefficient=1.4, depth_coefficient=1.8, image_size=380, dropout_rate=0.4,
                                       hidden_dim=1792, num_labels=1000)),
    "mobilenetv2-075": ("mobilenet_v2", dict(depth_multiplier=0.75, image_size=160, num_labels=1001)),
    "beit-l8": ("beit", dict(hidden_size=1024, num_hidden_layers=8, num_attention_heads=16, intermediate_size=4096,
                             use_relative_position_bias=True, num_labels=1000)),
    "dinov2-g4": ("dinov2", dict(hidden_size=1536, num_hidden_layers=4, num_attention_heads=24, mlp_ratio=4,
                                 use_swiglu_ffn=True, patch_size=14, image_size=224, num_labels=1000)),
    "regnety-4": ("regnet", dict(depths=[2, 6, 12, 2], hidden_sizes=[128, 192, 512, 1088], groups_width=64,
                                 layer_type="y", num_labels=1000)),
}
HELD_OUT_MODELS = set(NEW_MODELS)
k.MODELS.update(NEW_MODELS)
k.LORA_TARGETS["phi3"] = ["qkv_proj"]  # (the first call: PEFT found no default target in 5.17's Phi-3)
# hierarchical and convolutional image models: round 6's packing bound per image (e.need_bytes)
e.IMAGE_KINDS.update({"donut-swin", "swin", "convnext", "efficientnet", "mobilenet_v2", "regnet"})
# The packing bound: round 9's (h.need_bytes: the experts under any of their names, over e.need_bytes), except
# where they are named num_experts: measure_estimator_kinds's formula counts those itself (round 9's factor on top
# made qwen3-30b-a3b2's bound 1268 GiB, a case that would have run alone), so they are counted once.
assert k.need_bytes is h.need_bytes


def need_bytes(c):
    """Round 9's packing bound, with the experts counted once."""
    kw = k.MODELS[c["model"]][1]
    if c.get("kind") != "maxbatch-trial" and (kw.get("num_experts") or 1) > 1:
        return h._need_bytes(c)
    return h.need_bytes(c)


k.need_bytes = need_bytes


def held_out(model):
    """Round 10's held-out set: the models above (every earlier round's cases are dev now)."""
    return model in HELD_OUT_MODELS


k.held_out = held_out
e.held_out = held_out
f.held_out = held_out
g.held_out = held_out
h.held_out = held_out


def build_cases():
    cases = []
    # decoders, families never measured
    cases += [case("vaultgemma-s", "causal-lm", "train", "bf16", 2, 2048),
              case("vaultgemma-s", "causal-lm", "infer", "bf16", 8, 2040, generate=8),
              case("diffllama-s", "causal-lm", "train", "bf16", 4, 2048),
              case("diffllama-s", "causal-lm", "lora", "bf16", 4, 2048),
              case("doge-s", "causal-lm", "train", "bf16", 4, 2048),
              case("doge-s", "causal-lm", "infer", "bf16", 8, 2040, generate=8),
              case("dots1-s", "causal-lm", "train", "bf16", 4, 1024),
              case("dots1-s", "causal-lm", "infer", "bf16", 8, 2040, generate=8),
              case("lfm2moe-s", "causal-lm", "train", "bf16", 4, 1024),
              case("flexolmo-s", "causal-lm", "train", "bf16", 4, 1024),
              case("flexolmo-s", "causal-lm", "infer", "bf16", 8, 2040, generate=8),
              case("zamba2-s", "causal-lm", "train", "bf16", 4, 512),
              case("qwen3next-s", "causal-lm", "train", "bf16", 4, 1024),
              case("minimax-s", "causal-lm", "train", "bf16", 4, 1024),
              case("minimax-s", "causal-lm", "infer", "bf16", 8, 2048, generate=8),
              case("ministral-s", "causal-lm", "train", "bf16", 4, 2048),
              case("ministral-s", "causal-lm", "lora", "bf16", 4, 2048),
              case("gptneoxjp-s", "causal-lm", "train", "bf16", 4, 1024),
              case("gptneoxjp-s", "causal-lm", "infer", "bf16", 8, 2040, generate=8),
              case("ctrl-s", "causal-lm", "train", "bf16", 4, 1024),
              case("bitnet-s", "causal-lm", "train", "bf16", 4, 1024),
              case("bitnet-s", "causal-lm", "infer", "bf16", 8, 2040, generate=8),
              case("modernbert-dec-s", "causal-lm", "train", "bf16", 4, 2048)]
    # decoders, new sizes of measured families
    cases += [case("llama32-1b4", "causal-lm", "train", "bf16", 4, 2048),
              case("llama32-1b4", "causal-lm", "train", "fp32", 2, 1024, opt="sgd"),
              case("qwen25-1.5b4", "causal-lm", "infer", "bf16", 8, 2040, generate=8),
              case("qwen25-1.5b4", "causal-lm", "train", "amp_bf16", 4, 2048, ck=True),
              case("phi3-mini6", "causal-lm", "lora", "bf16", 4, 2048),
              case("gemma2-27b2", "causal-lm", "train", "bf16", 2, 1024),
              case("mixtral-8x7b1", "causal-lm", "infer", "bf16", 8, 2048),
              case("qwen3-30b-a3b2", "causal-lm", "train", "bf16", 4, 1024),
              case("gpt2-xl6", "causal-lm", "train", "bf16", 8, 1024),
              case("falcon-7b2", "causal-lm", "infer", "bf16", 8, 2040, generate=8)]
    # encoders
    cases += [case("yoso-b6", "seq-cls", "train", "fp32", 8, 1024),
              case("yoso-b6", "mlm", "infer", "fp32", 16, 1024),
              case("mra-b6", "seq-cls", "train", "fp32", 8, 512),
              case("tapas-b6", "seq-cls", "train", "bf16", 16, 512),
              case("bert-l8", "mlm", "train", "bf16", 16, 512),
              case("roberta-l6", "token-cls", "train", "bf16", 16, 512),
              case("debv3-l8", "seq-cls", "train", "bf16", 8, 512),
              case("mdistilbert", "seq-cls", "infer", "bf16", 64, 512),
              case("modernbert-l12", "mlm", "train", "bf16", 8, 1024)]
    # encoder-decoders and speech
    cases += [case("flant5-b4", "seq2seq", "train", "bf16", 8, 512, target=128),
              case("distilbart-12-3", "seq2seq", "infer", "bf16", 16, 512, generate=8),
              case("marian-big", "seq2seq", "train", "bf16", 8, 512, target=128),
              case("nllb-600m4", "seq2seq", "train", "bf16", 8, 512, target=128),
              case("whisper-s6", "speech-seq2seq", "lora", "bf16", 8, 1, target=128)]
    # vision
    cases += [case("donut-swin-s", "image-cls", "train", "bf16", 32, 1, image=224),
              case("donut-swin-s", "image-cls", "infer", "bf16", 128, 1, image=224),
              case("vit-b32-384", "image-cls", "train", "bf16", 64, 1, image=384),
              case("deit-t", "image-cls", "infer", "bf16", 256, 1, image=224),
              case("swin-l2262", "image-cls", "train", "bf16", 32, 1, image=224),
              case("convnext-s", "image-cls", "infer", "bf16", 128, 1, image=224),
              case("effnet-b4", "image-cls", "train", "bf16", 16, 1, image=380),
              case("mobilenetv2-075", "image-cls", "train", "bf16", 128, 1, image=160),
              case("beit-l8", "image-cls", "train", "bf16", 32, 1, image=224),
              case("dinov2-g4", "image-cls", "train", "bf16", 32, 1, image=224),
              case("regnety-4", "image-cls", "train", "bf16", 64, 1, image=224)]
    return cases


# (model, task, mode, precision, seq, card MiB as nvidia-smi reports it, extra case fields): all held out
SCENARIOS = [
    ("diffllama-s", "causal-lm", "train", "bf16", 1024, 24564, {}),                  # RTX 4090
    ("bitnet-s", "causal-lm", "infer", "bf16", 2040, 12288, dict(generate=8)),       # RTX 3060
    ("tapas-b6", "seq-cls", "train", "bf16", 512, 16384, {}),
    ("nllb-600m4", "seq2seq", "train", "bf16", 512, 24564, dict(target_seq=128)),
    ("convnext-s", "image-cls", "train", "bf16", 1, 12288, dict(image_size=224)),
]

if __name__ == "__main__":
    sys.exit(k.main(build_cases(), SCENARIOS))
