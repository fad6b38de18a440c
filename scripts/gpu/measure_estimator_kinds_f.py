#!/usr/bin/env python3
"""Ground truth for `vramdoc estimate`, issue 28 round 7: a fresh held-out set (families, kinds and
sizes never measured) for the mechanisms of round 7 (state-space layers, stage-list vision models,
eager attention of un-ported encoders, decoupled widths).

Method: measure_estimator_kinds.py's (imported from beside this file): a fresh forked process per
case, no warm-up, the allocator's trace of every case, NVML's per-process number, max-batch
scenarios on a card emulated with set_per_process_memory_fraction.

Held out, decided before measuring (2026-12-02 16:50, while round 7's branches were being written and
before any of them merged; never looked at while modelling; evaluated once after they merge). No model
below was measured before; the families marked "new" were never measured in any round:
- decoders, new: FalconMamba and Mamba2 (state-space layers, transformers' torch paths), Jamba
  (attention, Mamba and MoE layers interleaved), GLM-4.5's glm4_moe (shared + routed experts, a dense
  first layer), Seed-OSS, Apertus (xIELU, QK norm), LFM2 (short convolutions and attention layers),
  HunYuan dense; new sizes of measured families: Mistral-Nemo's widths (2 layers), Qwen3-32B's widths
  (1 layer), Phi-4's widths (2 layers);
- encoders, new: SqueezeBERT (grouped 1x1 convolutions), Nystromformer (landmark attention), X-MOD
  (language adapters), LayoutLM (2-D position embeddings), I-BERT (quant_mode off), MarkupLM (XPath
  embeddings), XLM (emb_dim); new sizes: RoBERTa-large's widths (8 layers), DeBERTa-v3-large's (6 layers);
- encoder-decoders and speech: T5-large's widths (6 + 6), Pegasus-large's (6 + 6), Whisper-large-v3's
  widths (128 mel bins, 4 + 4);
- vision, new: SegFormer (MiT-b0: efficient attention with sequence reduction), PVT v1, SwiftFormer,
  MobileViT V2, ViT-MSN, I-JEPA, TextNet, HGNet-V2; new sizes: ConvNeXt-B's widths, Swin-B's widths,
  DeiT-B, EfficientNet-B1.
`held_out` in each record (every case here is held out; no diagnostic cases this round).

Usage: python3 measure_estimator_kinds_f.py OUTDIR [filter-substring] [--dry-run]
"""
import sys

import measure_estimator_kinds as k
import measure_estimator_kinds_e as e  # rounds 2-6's models in k.MODELS (imports _b, _c, _d)

case = k.case

NEW_MODELS = {
    # decoders
    "falcon-mamba-s": ("falcon_mamba", dict(hidden_size=1024, num_hidden_layers=8, vocab_size=65024, state_size=16,
                                            expand=2, conv_kernel=4)),                  # falcon-mamba-7b's shape, small
    "mamba2-s": ("mamba2", dict(hidden_size=768, num_heads=24, head_dim=64, expand=2, state_size=128, n_groups=1,
                                num_hidden_layers=8, vocab_size=50288, chunk_size=256)),  # mamba2-130m, 8 layers
    "jamba-s": ("jamba", dict(hidden_size=1024, intermediate_size=2816, num_hidden_layers=4, num_attention_heads=16,
                              num_key_value_heads=4, num_experts=4, num_experts_per_tok=2, expert_layer_period=2,
                              expert_layer_offset=1, attn_layer_period=2, attn_layer_offset=1, mamba_d_state=16,
                              mamba_d_conv=4, mamba_expand=2, vocab_size=65536, use_mamba_kernels=False)),
    "glm45-moe-s": ("glm4_moe", dict(hidden_size=1024, intermediate_size=2816, moe_intermediate_size=512,
                                     num_hidden_layers=3, num_attention_heads=16, num_key_value_heads=4, head_dim=64,
                                     n_routed_experts=16, n_shared_experts=1, num_experts_per_tok=4, n_group=1,
                                     topk_group=1, first_k_dense_replace=1, vocab_size=151552,
                                     max_position_embeddings=8192)),
    "seed-oss-s": ("seed_oss", dict(hidden_size=2048, intermediate_size=5632, num_hidden_layers=4, num_attention_heads=16,
                                    num_key_value_heads=4, head_dim=128, vocab_size=155136,
                                    max_position_embeddings=8192)),
    "apertus-s": ("apertus", dict(hidden_size=2048, intermediate_size=8192, num_hidden_layers=4, num_attention_heads=16,
                                  num_key_value_heads=8, vocab_size=131072, max_position_embeddings=8192)),
    "lfm2-s": ("lfm2", dict(hidden_size=1024, intermediate_size=6656, num_hidden_layers=8, num_attention_heads=16,
                            num_key_value_heads=8, vocab_size=65536, max_position_embeddings=8192,
                            layer_types=["conv", "conv", "full_attention", "conv", "conv", "full_attention", "conv",
                                         "full_attention"])),                           # LFM2-350M's shape, 8 layers
    "hunyuan-s": ("hunyuan_v1_dense", dict(hidden_size=2048, intermediate_size=6144, num_hidden_layers=4,
                                           num_attention_heads=16, num_key_value_heads=4, head_dim=128,
                                           vocab_size=120818, max_position_embeddings=8192)),
    "mistral-nemo2": ("mistral", dict(hidden_size=5120, intermediate_size=14336, num_hidden_layers=2,
                                      num_attention_heads=32, num_key_value_heads=8, head_dim=128, vocab_size=131072,
                                      max_position_embeddings=8192)),                   # Mistral-Nemo widths, 2 layers
    "qwen3-32b1": ("qwen3", dict(hidden_size=5120, intermediate_size=25600, num_hidden_layers=1, num_attention_heads=64,
                                 num_key_value_heads=8, head_dim=128, vocab_size=151936,
                                 max_position_embeddings=8192)),                        # Qwen3-32B widths, 1 layer
    "phi4-2": ("phi3", dict(hidden_size=5120, intermediate_size=17920, num_hidden_layers=2, num_attention_heads=40,
                            num_key_value_heads=10, vocab_size=100352, max_position_embeddings=8192,
                            pad_token_id=100349)),                                      # Phi-4 widths, 2 layers
    # encoders
    "squeezebert": ("squeezebert", dict(num_hidden_layers=6)),                          # squeezebert-uncased, 6 layers
    "nystromformer": ("nystromformer", dict(num_hidden_layers=6, max_position_embeddings=1024)),
    "xmod-b": ("xmod", dict(num_hidden_layers=6, vocab_size=250002, max_position_embeddings=514, pad_token_id=1,
                            languages=["en_XX", "de_DE"], default_language="en_XX")),  # xmod-base, 6 layers
    "layoutlm-b": ("layoutlm", dict(num_hidden_layers=8)),
    "ibert-b": ("ibert", dict(num_hidden_layers=8, vocab_size=50265, max_position_embeddings=514, pad_token_id=1,
                              quant_mode=False)),
    "markuplm-b": ("markuplm", dict(num_hidden_layers=8, vocab_size=50267, max_position_embeddings=514,
                                    pad_token_id=1)),
    "xlm-1024": ("xlm", dict(emb_dim=1024, n_layers=6, n_heads=8, vocab_size=30145, max_position_embeddings=512)),
    "roberta-l8": ("roberta", dict(hidden_size=1024, num_hidden_layers=8, num_attention_heads=16, intermediate_size=4096,
                                   vocab_size=50265, max_position_embeddings=514, pad_token_id=1)),
    "debv3-l6": ("deberta-v2", dict(hidden_size=1024, num_hidden_layers=6, num_attention_heads=16,
                                    intermediate_size=4096, vocab_size=128100, relative_attention=True,
                                    position_buckets=256, norm_rel_ebd="layer_norm", share_att_key=True,
                                    pos_att_type=["p2c", "c2p"], position_biased_input=False,
                                    max_relative_positions=-1)),                        # deberta-v3-large widths
    # encoder-decoders and speech
    "t5-l6": ("t5", dict(d_model=1024, d_ff=4096, d_kv=64, num_heads=16, num_layers=6, num_decoder_layers=6,
                         vocab_size=32128, decoder_start_token_id=0)),
    "pegasus-l6": ("pegasus", dict(d_model=1024, encoder_layers=6, decoder_layers=6, encoder_attention_heads=16,
                                   decoder_attention_heads=16, encoder_ffn_dim=4096, decoder_ffn_dim=4096,
                                   vocab_size=96103, decoder_start_token_id=0)),
    "whisper-l3w": ("whisper", dict(d_model=1280, encoder_layers=4, decoder_layers=4, encoder_attention_heads=20,
                                    decoder_attention_heads=20, encoder_ffn_dim=5120, decoder_ffn_dim=5120,
                                    num_mel_bins=128, vocab_size=51866)),               # whisper-large-v3 widths
    # vision
    "segformer-b0": ("segformer", dict(num_labels=1000)),                               # mit-b0
    "pvt-t": ("pvt", dict(num_labels=1000)),                                            # pvt-tiny
    "swiftformer-xs": ("swiftformer", dict(num_labels=1000)),
    "mobilevitv2": ("mobilevitv2", dict(image_size=256, num_labels=1000)),
    "vit-msn-s": ("vit_msn", dict(hidden_size=384, num_hidden_layers=12, num_attention_heads=6, intermediate_size=1536,
                                  num_labels=1000)),
    "ijepa-s": ("ijepa", dict(hidden_size=384, num_hidden_layers=12, num_attention_heads=6, intermediate_size=1536,
                              patch_size=16, image_size=224, num_labels=1000)),
    "textnet-b": ("textnet", dict(num_labels=1000)),
    "hgnetv2": ("hgnet_v2", dict(num_labels=1000)),
    "convnext-b": ("convnext", dict(depths=[3, 3, 27, 3], hidden_sizes=[128, 256, 512, 1024], num_labels=1000)),
    "swin-b": ("swin", dict(embed_dim=128, depths=[2, 2, 18, 2], num_heads=[4, 8, 16, 32], window_size=7,
                            num_labels=1000)),
    "deit-b": ("deit", dict(num_labels=1000)),
    "effnet-b1": ("efficientnet", dict(width_coefficient=1.0, depth_coefficient=1.1, image_size=240, dropout_rate=0.2,
                                       hidden_dim=1280, num_labels=1000)),
}
HELD_OUT_MODELS = set(NEW_MODELS)
k.MODELS.update(NEW_MODELS)
# round 6's packing bound (e.need_bytes, per image for convolutional and hierarchical image models) for these too
e.IMAGE_KINDS.update({"segformer", "pvt", "swiftformer", "mobilevitv2", "textnet", "hgnet_v2", "convnext"})


def held_out(model):
    """Round 7's held-out set: the models above (every earlier round's cases are dev now)."""
    return model in HELD_OUT_MODELS


k.held_out = held_out
e.held_out = held_out


def build_cases():
    cases = []
    # decoders
    cases += [case("falcon-mamba-s", "causal-lm", "train", "bf16", 8, 512),
              case("falcon-mamba-s", "causal-lm", "infer", "bf16", 8, 512, generate=8),
              case("mamba2-s", "causal-lm", "train", "bf16", 8, 512),
              case("mamba2-s", "causal-lm", "infer", "bf16", 8, 512, generate=8),
              case("jamba-s", "causal-lm", "train", "bf16", 4, 512),
              case("glm45-moe-s", "causal-lm", "train", "bf16", 4, 1024),
              case("glm45-moe-s", "causal-lm", "infer", "bf16", 8, 2040, generate=8),
              case("seed-oss-s", "causal-lm", "train", "bf16", 2, 1024),
              case("seed-oss-s", "causal-lm", "lora", "bf16", 4, 1024),
              case("seed-oss-s", "causal-lm", "infer", "bf16", 8, 2040, generate=8),
              case("apertus-s", "causal-lm", "train", "bf16", 2, 1024),
              case("apertus-s", "causal-lm", "infer", "bf16", 8, 2040, generate=8),
              case("lfm2-s", "causal-lm", "train", "bf16", 4, 1024),
              case("lfm2-s", "causal-lm", "infer", "bf16", 8, 2040, generate=8),
              case("hunyuan-s", "causal-lm", "train", "bf16", 2, 1024),
              case("hunyuan-s", "causal-lm", "infer", "bf16", 8, 2040, generate=8),
              case("mistral-nemo2", "causal-lm", "lora", "bf16", 2, 2048),
              case("mistral-nemo2", "causal-lm", "infer", "bf16", 4, 2040, generate=8),
              case("qwen3-32b1", "causal-lm", "train", "bf16", 2, 1024),
              case("phi4-2", "causal-lm", "train", "bf16", 2, 1024),
              case("phi4-2", "causal-lm", "train", "amp_bf16", 2, 2048, ck=True)]
    # encoders
    cases += [case("squeezebert", "seq-cls", "train", "bf16", 16, 512),
              case("squeezebert", "mlm", "infer", "bf16", 32, 512),
              case("nystromformer", "seq-cls", "train", "bf16", 16, 1024),
              case("xmod-b", "seq-cls", "train", "bf16", 16, 512),
              case("xmod-b", "mlm", "infer", "bf16", 16, 512),
              case("layoutlm-b", "token-cls", "train", "bf16", 16, 512),
              case("ibert-b", "seq-cls", "train", "bf16", 16, 512),
              case("markuplm-b", "token-cls", "train", "bf16", 16, 512),
              case("xlm-1024", "seq-cls", "train", "bf16", 16, 512),
              case("xlm-1024", "mlm", "infer", "bf16", 16, 512),
              case("roberta-l8", "seq-cls", "train", "amp_bf16", 16, 512),
              case("roberta-l8", "mlm", "infer", "bf16", 32, 512),
              case("debv3-l6", "seq-cls", "train", "bf16", 8, 512),
              case("debv3-l6", "token-cls", "infer", "bf16", 16, 512)]
    # encoder-decoders and speech
    cases += [case("t5-l6", "seq2seq", "train", "bf16", 8, 512, target=128),
              case("t5-l6", "seq2seq", "infer", "bf16", 16, 512, target=128),
              case("pegasus-l6", "seq2seq", "train", "bf16", 8, 512, target=128),
              case("pegasus-l6", "seq2seq", "infer", "bf16", 8, 512, generate=8),
              case("whisper-l3w", "speech-seq2seq", "train", "bf16", 4, 1, target=128),
              case("whisper-l3w", "speech-seq2seq", "infer", "bf16", 8, 1, target=128)]
    # vision
    cases += [case("segformer-b0", "image-cls", "train", "bf16", 64, 1, image=224),
              case("segformer-b0", "image-cls", "infer", "bf16", 128, 1, image=224),
              case("pvt-t", "image-cls", "train", "bf16", 64, 1, image=224),
              case("swiftformer-xs", "image-cls", "train", "bf16", 64, 1, image=224),
              case("mobilevitv2", "image-cls", "train", "bf16", 32, 1, image=256),
              case("vit-msn-s", "image-cls", "train", "bf16", 64, 1, image=224),
              case("ijepa-s", "image-cls", "train", "amp_bf16", 64, 1, image=224),
              case("textnet-b", "image-cls", "train", "bf16", 32, 1, image=224),
              case("hgnetv2", "image-cls", "train", "bf16", 64, 1, image=224),
              case("convnext-b", "image-cls", "train", "amp_bf16", 32, 1, image=224),
              case("convnext-b", "image-cls", "infer", "bf16", 128, 1, image=224),
              case("swin-b", "image-cls", "train", "bf16", 32, 1, image=224),
              case("deit-b", "image-cls", "train", "bf16", 64, 1, image=224),
              case("deit-b", "image-cls", "infer", "bf16", 128, 1, image=224),
              case("effnet-b1", "image-cls", "train", "bf16", 32, 1, image=240)]
    return cases


# (model, task, mode, precision, seq, card MiB as nvidia-smi reports it, extra case fields): all held out
SCENARIOS = [
    ("falcon-mamba-s", "causal-lm", "train", "bf16", 512, 16384, {}),
    ("xmod-b", "seq-cls", "train", "bf16", 512, 12288, {}),                             # RTX 3060
    ("segformer-b0", "image-cls", "train", "amp_bf16", 1, 8192, dict(image_size=224)),
    ("seed-oss-s", "causal-lm", "infer", "bf16", 2040, 24564, dict(generate=8)),     # RTX 4090
    ("t5-l6", "seq2seq", "train", "bf16", 512, 16384, dict(target_seq=128)),
]

if __name__ == "__main__":
    sys.exit(k.main(build_cases(), SCENARIOS))
