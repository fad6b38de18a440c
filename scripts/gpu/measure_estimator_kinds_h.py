#!/usr/bin/env python3
"""Ground truth for `vramdoc estimate`, issue 28 round 9: a fresh held-out set (families, kinds and
sizes never measured).

Method: measure_estimator_kinds.py's (imported from beside this file): a fresh forked process per
case, no warm-up, the allocator's trace of every case, NVML's per-process number, max-batch
scenarios on a card emulated with set_per_process_memory_fraction.

Held out, decided before measuring and before round 9's modelling (2026-12-03 10:45); never looked at
while modelling; evaluated once, after. Round 9's modelling works on round 1-8's misses only (every
earlier case is dev now) and reads no modelling file of a family below marked "new".
- decoders, new: OLMo-3 (sliding-window layers), Llama-4 text (MoE interleaved with dense layers, NoPE
  layers, chunked attention), ERNIE-4.5-MoE, HunYuan-MoE, DeepSeek-V2, GraniteMoeShared, GraniteMoeHybrid
  (Mamba2 and attention layers with MoE), Falcon-H1 (parallel Mamba2 and attention), OpenAI GPT (GPT-1);
  new sizes of measured families: Qwen2.5-14B's widths, Mistral-Nemo's widths, Llama-3.1-70B's widths
  (1 layer), Gemma-3-4B's widths, Qwen3-4B's widths;
- encoders, new: DeBERTa (v1), RoBERTa-PreLayerNorm, XLNet (lost in round 8), LayoutLMv3 (text only);
  new sizes: ELECTRA-large's widths, multilingual BERT's vocabulary, ALBERT-xxlarge's widths, ESM-2-650M's
  widths, XLM-RoBERTa-large's widths;
- encoder-decoders and speech: a bert2bert EncoderDecoderModel (new: nested configs of two encoders);
  new sizes: T5-large's widths, mBART-large's widths, Pegasus-large's widths, Whisper-large-v3's widths
  (128 mel bins);
- vision: LeViT-128S (new: lost in round 8), MetaCLIP-2's vision tower (new); new sizes: ViT-H/14's
  widths, DeiT-S, ConvNeXt-B, ResNet-101, Swin-B at 384 px, EfficientNet-B0 (inference), MobileViT-XS.
`held_out` in each record (every case here is held out).

Correction (2026-12-03 10:50, after measuring, before anything was evaluated or looked at): nine of the "new sizes"
repeat an earlier round's model exactly (the list was written from memory, not checked against k.MODELS; the names
gemma3-4b4 and mistral-nemo2 even reuse round 6's and 7's): qwen25-14b2 (round 6's qwen2.5-14b2), mistral-nemo2
(round 7), llama70b1 (round 6's llama3.1-70b1), gemma3-4b4 (round 6), qwen3-4b4 (qwen3-4b), electra-l8 (electra-l),
pegasus-l4 (pegasus-m), whisper-l2 (whisper-lv3), vit-h8 (vit-h14-8). Their twelve cases are dev repeats: REPEATS
below, written `held_out: false` with `repeat_of` when the records are slimmed, and reported apart from the held-out
set. Later (12:35, after the one evaluation; check_case_list.py) five more were found that reuse an earlier round's
name and config: convnext-b, effnet-b0, resnet-101, swin-b384, deit-s (six cases); they are repeats too, and the
evaluation's numbers were re-aggregated without them by the same estimator build (docs/estimator.md). Round 9's
held-out set is the rest: 14 decoder cases (9 families never measured) and 18 others (6 families or configurations
never measured, new sizes of T5, mBART, XLM-R, ALBERT, ESM-2, multilingual BERT, MobileViT).

The first call (2026-12-03 10:37) built and ran all but seven cases, changed here and measured again in a second call
(filter 'hunyuanmoe|deberta1|xlnet|layoutlmv3|levit|deit-s'), the first call's results not looked at otherwise:
HunYuan-MoE (head_dim None in the attention's scaling: head_dim=64 given), DeBERTa v1 and XLNet in bf16 (transformers'
own dtype errors, "expected scalar type Float but found BFloat16": their training cases run amp_bf16 on fp32 weights,
(DeBERTa v1 then failed again, "value cannot be converted to type c10::BFloat16" in its masked_fill: a third call measured
its training in fp32 with AdamW),
DeBERTa's inference fp32), LayoutLMv3 (positions past 512 with the padding offset: max_position_embeddings=514),
LeViT and DeiT (from_config iterates architectures=None and DeiT maps to two classes: measure_estimator_kinds.build
takes the first).

Usage: python3 measure_estimator_kinds_h.py OUTDIR [filter-substring] [--dry-run]
"""
import sys

import measure_estimator_kinds as k
import measure_estimator_kinds_e as e  # rounds 2-6's models in k.MODELS (imports _b, _c, _d)
import measure_estimator_kinds_f as f  # round 7's models
import measure_estimator_kinds_g as g  # round 8's models

case = k.case

BERT_L = dict(model_type="bert", hidden_size=768, num_hidden_layers=4, num_attention_heads=12, intermediate_size=3072,
              vocab_size=30522)

NEW_MODELS = {
    # decoders
    "olmo3-s": ("olmo3", dict(hidden_size=2048, intermediate_size=8192, num_hidden_layers=4, num_attention_heads=16,
                              num_key_value_heads=16, sliding_window=1024, vocab_size=100278,
                              max_position_embeddings=8192)),
    "llama4-s": ("llama4_text", dict(hidden_size=2048, intermediate_size=2048, intermediate_size_mlp=8192,
                                     num_hidden_layers=4, num_attention_heads=16, num_key_value_heads=4, head_dim=128,
                                     num_local_experts=8, num_experts_per_tok=1, interleave_moe_layer_step=2,
                                     attention_chunk_size=1024, vocab_size=202048, max_position_embeddings=8192)),
    "ernie45moe-s": ("ernie4_5_moe", dict(hidden_size=1024, intermediate_size=3072, moe_intermediate_size=512,
                                          num_hidden_layers=4, num_attention_heads=16, num_key_value_heads=4,
                                          moe_num_experts=16, moe_k=4, moe_num_shared_experts=2,
                                          moe_layer_start_index=1, vocab_size=103424, max_position_embeddings=8192)),
    "hunyuanmoe-s": ("hunyuan_v1_moe", dict(hidden_size=1024, intermediate_size=2816, num_hidden_layers=4,
                                            num_attention_heads=16, num_key_value_heads=4, head_dim=64, num_experts=8, moe_topk=2,
                                            vocab_size=120818, max_position_embeddings=8192)),
    "dsv2-s": ("deepseek_v2", dict(hidden_size=1024, intermediate_size=2816, moe_intermediate_size=384,
                                   num_hidden_layers=3, num_attention_heads=16, num_key_value_heads=16,
                                   q_lora_rank=None, kv_lora_rank=256, qk_rope_head_dim=32, qk_nope_head_dim=64,
                                   v_head_dim=64, n_routed_experts=16, n_shared_experts=2, num_experts_per_tok=4,
                                   first_k_dense_replace=1, vocab_size=102400, max_position_embeddings=8192)),
    "granitemoeshared-s": ("granitemoeshared", dict(hidden_size=1024, intermediate_size=512, shared_intermediate_size=1024,
                                                    num_hidden_layers=4, num_attention_heads=16, num_key_value_heads=8,
                                                    num_local_experts=16, num_experts_per_tok=4, vocab_size=49155,
                                                    max_position_embeddings=4096)),
    "granitehybrid-s": ("granitemoehybrid", dict(hidden_size=1024, intermediate_size=512, shared_intermediate_size=2048,
                                                 num_hidden_layers=4, num_attention_heads=16, num_key_value_heads=4,
                                                 layer_types=["mamba", "attention", "mamba", "attention"],
                                                 mamba_n_heads=32, mamba_d_head=64, mamba_n_groups=1,
                                                 mamba_d_state=128, mamba_d_conv=4, mamba_expand=2,
                                                 mamba_chunk_size=256, num_local_experts=8, num_experts_per_tok=2,
                                                 vocab_size=100352, max_position_embeddings=8192)),
    "falconh1-s": ("falcon_h1", dict(hidden_size=1024, intermediate_size=2816, num_hidden_layers=4,
                                     num_attention_heads=8, num_key_value_heads=2, head_dim=64, mamba_d_ssm=1536,
                                     mamba_n_heads=24, mamba_d_head=64, mamba_n_groups=1, mamba_d_state=128,
                                     mamba_d_conv=4, mamba_expand=2, mamba_chunk_size=128, vocab_size=65537,
                                     max_position_embeddings=8192)),
    "openai-gpt": ("openai-gpt", dict()),                                                  # GPT-1 as released
    "qwen25-14b2": ("qwen2", dict(hidden_size=5120, intermediate_size=13824, num_hidden_layers=2,
                                  num_attention_heads=40, num_key_value_heads=8, vocab_size=152064,
                                  max_position_embeddings=8192)),
    "mistral-nemo2": ("mistral", dict(hidden_size=5120, intermediate_size=14336, num_hidden_layers=2,
                                      num_attention_heads=32, num_key_value_heads=8, head_dim=128, vocab_size=131072,
                                      max_position_embeddings=8192)),
    "llama70b1": ("llama", dict(hidden_size=8192, intermediate_size=28672, num_hidden_layers=1, num_attention_heads=64,
                                num_key_value_heads=8, vocab_size=128256, max_position_embeddings=8192)),
    "gemma3-4b4": ("gemma3_text", dict(hidden_size=2560, intermediate_size=10240, num_hidden_layers=4,
                                       num_attention_heads=8, num_key_value_heads=4, head_dim=256, vocab_size=262208,
                                       sliding_window=1024, max_position_embeddings=8192)),
    "qwen3-4b4": ("qwen3", dict(hidden_size=2560, intermediate_size=9728, num_hidden_layers=4, num_attention_heads=32,
                                num_key_value_heads=8, head_dim=128, vocab_size=151936, tie_word_embeddings=True,
                                max_position_embeddings=8192)),
    # encoders
    "deberta1-b": ("deberta", dict(num_hidden_layers=6, vocab_size=50265)),
    "robertapln-b": ("roberta-prelayernorm", dict(num_hidden_layers=6, vocab_size=50265, max_position_embeddings=514,
                                                  pad_token_id=1)),
    "xlnet-b6": ("xlnet", dict(d_model=768, n_layer=6, n_head=12, d_inner=3072, vocab_size=32000)),
    "layoutlmv3-b": ("layoutlmv3", dict(num_hidden_layers=6, visual_embed=False, max_position_embeddings=514)),
    "electra-l8": ("electra", dict(embedding_size=1024, hidden_size=1024, num_hidden_layers=8, num_attention_heads=16,
                                   intermediate_size=4096)),
    "mbert-b": ("bert", dict(num_hidden_layers=6, vocab_size=119547)),
    "albert-xxl": ("albert", dict(embedding_size=128, hidden_size=4096, num_hidden_layers=12, num_attention_heads=64,
                                  intermediate_size=16384)),
    "esm2-650m6": ("esm", dict(hidden_size=1280, num_hidden_layers=6, num_attention_heads=20, intermediate_size=5120,
                               vocab_size=33, position_embedding_type="rotary", max_position_embeddings=1026,
                               pad_token_id=1, mask_token_id=32, emb_layer_norm_before=False,
                               token_dropout=True)),
    "xlmr-l6": ("xlm-roberta", dict(hidden_size=1024, num_hidden_layers=6, num_attention_heads=16,
                                    intermediate_size=4096, vocab_size=250002, max_position_embeddings=514,
                                    pad_token_id=1)),
    # encoder-decoders and speech
    "bert2bert": ("encoder-decoder", dict(encoder=dict(BERT_L),
                                          decoder=dict(BERT_L, is_decoder=True, add_cross_attention=True),
                                          decoder_start_token_id=101, pad_token_id=0, vocab_size=30522)),
    "t5-l4": ("t5", dict(d_model=1024, d_ff=4096, d_kv=64, num_heads=16, num_layers=4, num_decoder_layers=4,
                         vocab_size=32128, decoder_start_token_id=0)),
    "mbart-l4": ("mbart", dict(d_model=1024, encoder_layers=4, decoder_layers=4, encoder_attention_heads=16,
                               decoder_attention_heads=16, encoder_ffn_dim=4096, decoder_ffn_dim=4096,
                               vocab_size=250027, scale_embedding=True)),
    "pegasus-l4": ("pegasus", dict(d_model=1024, encoder_layers=4, decoder_layers=4, encoder_attention_heads=16,
                                   decoder_attention_heads=16, encoder_ffn_dim=4096, decoder_ffn_dim=4096,
                                   vocab_size=96103)),
    "whisper-l2": ("whisper", dict(d_model=1280, encoder_layers=2, decoder_layers=2, encoder_attention_heads=20,
                                   decoder_attention_heads=20, encoder_ffn_dim=5120, decoder_ffn_dim=5120,
                                   num_mel_bins=128, vocab_size=51866)),
    # vision
    "levit-128s": g.NEW_MODELS["levit-128s"],
    "metaclip2-b": ("metaclip_2", dict(vision_config=dict(hidden_size=768, intermediate_size=3072, num_hidden_layers=6,
                                                          num_attention_heads=12, patch_size=16, image_size=224),
                                       num_labels=1000)),
    "vit-h8": ("vit", dict(hidden_size=1280, num_hidden_layers=8, num_attention_heads=16, intermediate_size=5120,
                           patch_size=14, image_size=224, num_labels=1000)),
    "deit-s": ("deit", dict(hidden_size=384, num_hidden_layers=12, num_attention_heads=6, intermediate_size=1536,
                            patch_size=16, image_size=224, num_labels=1000)),
    "convnext-b": ("convnext", dict(depths=[3, 3, 27, 3], hidden_sizes=[128, 256, 512, 1024], num_labels=1000)),
    "resnet-101": ("resnet", dict(depths=[3, 4, 23, 3], hidden_sizes=[256, 512, 1024, 2048], layer_type="bottleneck",
                                  embedding_size=64, num_labels=1000)),
    "swin-b384": ("swin", dict(image_size=384, embed_dim=128, depths=[2, 2, 18, 2], num_heads=[4, 8, 16, 32],
                               window_size=12, num_labels=1000)),
    "effnet-b0": ("efficientnet", dict(width_coefficient=1.0, depth_coefficient=1.0, image_size=224,
                                       dropout_rate=0.2, hidden_dim=1280, num_labels=1000)),
    "mobilevit-xs": ("mobilevit", dict(image_size=256, hidden_sizes=[96, 120, 144],
                                       neck_hidden_sizes=[16, 32, 48, 64, 80, 96, 384], num_labels=1000)),
}
REPEATS = {"qwen25-14b2": "qwen2.5-14b2", "mistral-nemo2": "mistral-nemo2", "llama70b1": "llama3.1-70b1",
           "gemma3-4b4": "gemma3-4b4", "qwen3-4b4": "qwen3-4b", "electra-l8": "electra-l", "pegasus-l4": "pegasus-m",
           "whisper-l2": "whisper-lv3", "vit-h8": "vit-h14-8",
           # found later the same day by scripts/gpu/check_case_list.py (their names equal the earlier rounds', so
           # the first check, made after this table had replaced theirs, compared each with itself)
           "convnext-b": "convnext-b (round 7)", "effnet-b0": "effnet-b0 (round 4)", "resnet-101": "resnet-101 (round 6)",
           "swin-b384": "swin-b384 (round 2)", "deit-s": "deit-s (round 2: the same widths by the config's defaults)"}
# model -> the earlier round's identical model
HELD_OUT_MODELS = set(NEW_MODELS)
k.MODELS.update(NEW_MODELS)
e.IMAGE_KINDS.update({"levit", "resnet", "efficientnet", "mobilevit", "convnext", "swin"})

_need_bytes = k.need_bytes
EXPERTS = ("num_local_experts", "n_routed_experts", "moe_num_experts", "num_experts")


def need_bytes(c):
    """The packing bound with the experts counted under any of their names (the base reads num_experts)."""
    kw = k.MODELS[c["model"]][1]
    n = next((kw[x] for x in EXPERTS if kw.get(x)), 1)
    return _need_bytes(c) * (1 + n // 4 if n > 1 and c.get("kind") != "maxbatch-trial" else 1)


k.need_bytes = need_bytes


def held_out(model):
    """Round 9's held-out set: the models above (every earlier round's cases are dev now)."""
    return model in HELD_OUT_MODELS


k.held_out = held_out
e.held_out = held_out
f.held_out = held_out
g.held_out = held_out


def build_cases():
    cases = []
    # decoders
    cases += [case("olmo3-s", "causal-lm", "train", "bf16", 4, 2048),
              case("olmo3-s", "causal-lm", "infer", "bf16", 8, 2040, generate=8),
              case("llama4-s", "causal-lm", "train", "bf16", 2, 2048),
              case("llama4-s", "causal-lm", "infer", "bf16", 8, 2040, generate=8),
              case("ernie45moe-s", "causal-lm", "train", "bf16", 4, 1024),
              case("ernie45moe-s", "causal-lm", "infer", "bf16", 8, 2040, generate=8),
              case("hunyuanmoe-s", "causal-lm", "train", "bf16", 4, 1024),
              case("dsv2-s", "causal-lm", "train", "bf16", 4, 1024),
              case("dsv2-s", "causal-lm", "lora", "bf16", 4, 2048),
              case("granitemoeshared-s", "causal-lm", "train", "bf16", 4, 1024),
              case("granitehybrid-s", "causal-lm", "train", "bf16", 4, 512),
              case("falconh1-s", "causal-lm", "train", "bf16", 4, 512),
              case("openai-gpt", "causal-lm", "train", "bf16", 8, 512),
              case("openai-gpt", "causal-lm", "infer", "bf16", 16, 500, generate=8),
              case("qwen25-14b2", "causal-lm", "train", "bf16", 2, 2048),
              case("qwen25-14b2", "causal-lm", "lora", "bf16", 4, 2048),
              case("mistral-nemo2", "causal-lm", "train", "amp_bf16", 2, 2048, ck=True),
              case("mistral-nemo2", "causal-lm", "infer", "bf16", 8, 2040, generate=8),
              case("llama70b1", "causal-lm", "lora", "bf16", 2, 2048),
              case("gemma3-4b4", "causal-lm", "train", "bf16", 2, 2048),
              case("qwen3-4b4", "causal-lm", "train", "fp32", 2, 1024, opt="sgd")]
    # encoders
    cases += [case("deberta1-b", "seq-cls", "train", "fp32", 16, 512),
              case("deberta1-b", "mlm", "infer", "fp32", 32, 512),
              case("robertapln-b", "seq-cls", "train", "bf16", 16, 512),
              case("xlnet-b6", "seq-cls", "train", "amp_bf16", 8, 512),
              case("layoutlmv3-b", "token-cls", "train", "bf16", 16, 512),
              case("electra-l8", "token-cls", "train", "amp_bf16", 16, 512),
              case("mbert-b", "seq-cls", "train", "bf16", 32, 256),
              case("mbert-b", "mlm", "train", "bf16", 16, 512),
              case("albert-xxl", "seq-cls", "train", "bf16", 8, 512),
              case("esm2-650m6", "mlm", "train", "bf16", 8, 1024),
              case("xlmr-l6", "token-cls", "train", "bf16", 16, 512),
              case("xlmr-l6", "seq-cls", "infer", "bf16", 64, 512)]
    # encoder-decoders and speech
    cases += [case("bert2bert", "seq2seq", "train", "bf16", 8, 512, target=128),
              case("t5-l4", "seq2seq", "train", "bf16", 8, 512, target=128),
              case("t5-l4", "seq2seq", "infer", "bf16", 16, 512, generate=8),
              case("mbart-l4", "seq2seq", "train", "bf16", 8, 512, target=128),
              case("pegasus-l4", "seq2seq", "train", "amp_bf16", 8, 512, target=128),
              case("whisper-l2", "speech-seq2seq", "train", "bf16", 8, 1, target=128),
              case("whisper-l2", "speech-seq2seq", "infer", "bf16", 16, 1, target=128)]
    # vision
    cases += [case("levit-128s", "image-cls", "train", "bf16", 128, 1, image=224),
              case("metaclip2-b", "image-cls", "train", "bf16", 64, 1, image=224),
              case("vit-h8", "image-cls", "train", "amp_bf16", 32, 1, image=224),
              case("deit-s", "image-cls", "train", "bf16", 128, 1, image=224),
              case("convnext-b", "image-cls", "train", "bf16", 32, 1, image=224),
              case("resnet-101", "image-cls", "train", "bf16", 64, 1, image=224),
              case("resnet-101", "image-cls", "infer", "bf16", 128, 1, image=224),
              case("swin-b384", "image-cls", "train", "bf16", 16, 1, image=384),
              case("effnet-b0", "image-cls", "infer", "bf16", 256, 1, image=224),
              case("mobilevit-xs", "image-cls", "train", "bf16", 64, 1, image=256)]
    return cases


# (model, task, mode, precision, seq, card MiB as nvidia-smi reports it, extra case fields): all held out
SCENARIOS = [
    ("llama4-s", "causal-lm", "train", "bf16", 1024, 24564, {}),                     # RTX 4090
    ("olmo3-s", "causal-lm", "infer", "bf16", 2040, 12288, dict(generate=8)),        # RTX 3060
    ("deberta1-b", "seq-cls", "train", "fp32", 512, 16384, {}),
    ("t5-l4", "seq2seq", "train", "bf16", 512, 24564, dict(target_seq=128)),
    ("resnet-101", "image-cls", "train", "bf16", 1, 12288, dict(image_size=224)),
]

if __name__ == "__main__":
    sys.exit(k.main(build_cases(), SCENARIOS))
