#!/usr/bin/env python3
"""Ground truth for `vramdoc estimate`, issue 28 round 2: a fresh held-out set, the cases the first
round (measure_estimator_kinds.py, 2026-12-01) lost, and some of its cases again with Python frames in
the allocator traces (to read the op order off them).

Method: measure_estimator_kinds.py's (imported from beside this file): a fresh forked process per
case, no warm-up, the allocator's trace of every case (here with KINDS_TRACE_FRAMES Python frames per
block of 1 MiB and more), NVML's per-process number, max-batch scenarios on a card emulated with
set_per_process_memory_fraction.

Held out, decided before measuring (never looked at while modelling; evaluated once at the end): every
family the estimator reads but nobody measured - ELECTRA, XLM-RoBERTa and MPNet (read as BERT /
RoBERTa), mT5 (as T5), mBART, Pegasus and Marian (as BART), DeiT (as ViT), StableLM and Persimmon
(unknown: the generic decoder) - and new sizes of measured families: Whisper base, Swin base at 384
pixels (window 12), ViT-B/32, Phi-3 mini's widths, BLOOM 1b1's widths. `held_out` in each record.
Dev (the first round's families, now seen): the lost cases (T5 training and generate, OPT and GPT-J
generate, ViT / Swin LoRA, T5's max-batch) and the `diagnostic` re-runs.

Usage: python3 measure_estimator_kinds_b.py OUTDIR [filter-substring] [--dry-run]
"""
import sys

import measure_estimator_kinds as k

case = k.case

NEW_MODELS = {
    # encoders (held out)
    "electra-s": ("electra", dict()),                                                       # electra-small discriminator
    "electra-b": ("electra", dict(embedding_size=768, hidden_size=768, num_attention_heads=12,
                                  intermediate_size=3072)),                                 # electra-base
    "xlmr-b": ("xlm-roberta", dict(vocab_size=250002, max_position_embeddings=514, type_vocab_size=1,
                                   pad_token_id=1, layer_norm_eps=1e-5)),                   # xlm-roberta-base
    "mpnet-b": ("mpnet", dict()),                                                           # mpnet-base
    # encoder-decoders (held out)
    "mt5-s": ("mt5", dict(decoder_start_token_id=0)),                                       # mt5-small
    "mbart-m": ("mbart", dict(vocab_size=250027, d_model=1024, encoder_layers=6, decoder_layers=6,
                              encoder_attention_heads=16, decoder_attention_heads=16, encoder_ffn_dim=4096,
                              decoder_ffn_dim=4096, decoder_start_token_id=2)),             # mbart-large widths, 6 + 6 layers
    "pegasus-m": ("pegasus", dict(vocab_size=96103, d_model=1024, encoder_layers=4, decoder_layers=4,
                                  encoder_attention_heads=16, decoder_attention_heads=16, encoder_ffn_dim=4096,
                                  decoder_ffn_dim=4096, decoder_start_token_id=0)),         # pegasus-large widths, 4 + 4
    "marian-s": ("marian", dict(vocab_size=58101, decoder_vocab_size=58101, d_model=512, encoder_layers=6,
                                decoder_layers=6, encoder_attention_heads=8, decoder_attention_heads=8,
                                encoder_ffn_dim=2048, decoder_ffn_dim=2048, pad_token_id=58100,
                                decoder_start_token_id=58100)),                            # opus-mt en-de
    "whisper-b": ("whisper", dict(d_model=512, encoder_layers=6, decoder_layers=6, encoder_attention_heads=8,
                                  decoder_attention_heads=8, encoder_ffn_dim=2048, decoder_ffn_dim=2048)),  # base
    # vision (held out)
    "deit-s": ("deit", dict(hidden_size=384, num_attention_heads=6, intermediate_size=1536, num_labels=1000)),
    "vit-b32": ("vit", dict(patch_size=32, num_labels=1000)),                               # vit-base-patch32
    "swin-b384": ("swin", dict(num_labels=1000, image_size=384, window_size=12, embed_dim=128, depths=[2, 2, 18, 2],
                               num_heads=[4, 8, 16, 32])),                                  # swin-base-patch4-window12-384
    # decoders (held out)
    "phi3-mini": ("phi3", dict(hidden_size=3072, intermediate_size=8192, num_hidden_layers=4, num_attention_heads=32,
                               num_key_value_heads=32, vocab_size=32064, max_position_embeddings=4096,
                               pad_token_id=32000)),                                        # phi-3-mini widths, 4 layers
    "bloom-1b1": ("bloom", dict(hidden_size=1536, n_layer=8, n_head=16, vocab_size=250880)),  # bloom-1b1 widths, 8 layers
    "stablelm-2": ("stablelm", dict(hidden_size=2048, intermediate_size=5632, num_hidden_layers=8, num_attention_heads=32,
                                    num_key_value_heads=32, vocab_size=100352, use_qkv_bias=True,
                                    max_position_embeddings=4096)),                         # stablelm-2-1.6b widths, 8 layers
    "persimmon-s": ("persimmon", dict(hidden_size=4096, intermediate_size=16384, num_hidden_layers=2,
                                      num_attention_heads=64, vocab_size=262144,
                                      max_position_embeddings=16384)),                      # persimmon-8b widths, 2 layers
}
HELD_OUT_MODELS = set(NEW_MODELS)
k.MODELS.update(NEW_MODELS)
# The query and value as PEFT does not know them for these (LoRA falls back to QUERY_VALUE anyway).
k.LORA_TARGETS.update({"stablelm": ["q_proj", "v_proj"], "persimmon": ["query_key_value"]})


def held_out(model):
    """Round 2's held-out set: the models above (the first round's held-out families are seen now)."""
    return model in HELD_OUT_MODELS


k.held_out = held_out  # case() and the scenarios read it


def diagnostic(c):
    c["diagnostic"] = True  # a first-round case again, for its trace's Python frames
    return c


def build_cases():
    cases = []
    # dev: what the first round lost (T5's config without decoder_start_token_id, generate beyond
    # n_positions, ViT's / Swin's transformers-5 LoRA names)
    for m in ["t5-s", "t5-m"]:
        cases += [case(m, "seq2seq", "train", "bf16", 8, 512, target=128),
                  case(m, "seq2seq", "train", "fp32", 4, 512, opt="sgd", target=128),
                  case(m, "seq2seq", "train", "amp_bf16", 8, 512, ck=True, target=128),
                  case(m, "seq2seq", "lora", "bf16", 8, 512, target=128),
                  case(m, "seq2seq", "infer", "bf16", 8, 512, generate=8)]
    cases += [case("opt-m", "causal-lm", "infer", "bf16", 8, 2040, generate=8),
              case("gptj-m", "causal-lm", "infer", "bf16", 8, 2040, generate=8)]
    cases += [case(m, "image-cls", "lora", "bf16", 32, 1, image=224) for m in ["vit-s", "vit-l", "swin-s", "swin-m"]]
    # dev: first-round cases again with frames (the misses' families and one of each kind)
    cases += [diagnostic(c) for c in [
        case("t5-s", "seq2seq", "infer", "bf16", 16, 512, target=128),
        case("bart-s", "seq2seq", "infer", "bf16", 16, 512, target=128),
        case("whisper-s", "speech-seq2seq", "infer", "bf16", 16, 1, target=128),
        case("whisper-s", "speech-seq2seq", "train", "bf16", 8, 1, target=128),
        case("whisper-s", "speech-seq2seq", "train", "amp_bf16", 8, 1, ck=True, target=128),
        case("deberta-s", "seq-cls", "train", "fp32", 8, 512, opt="sgd"),
        case("deberta-s", "seq-cls", "infer", "bf16", 32, 512),
        case("swin-s", "image-cls", "infer", "bf16", 64, 1, image=224),
        case("swin-s", "image-cls", "train", "bf16", 32, 1, image=224),
        case("swin-s", "image-cls", "train", "amp_bf16", 32, 1, ck=True, image=224),
        case("bloom-m", "causal-lm", "infer", "bf16", 8, 2040, generate=8),
        case("cohere-s", "causal-lm", "train", "bf16", 4, 1024),
        case("granite-s", "causal-lm", "train", "bf16", 4, 1024),
        case("bert-s", "seq-cls", "train", "bf16", 16, 512),
        case("bert-s", "seq-cls", "infer", "bf16", 32, 512),
        case("bart-s", "seq2seq", "train", "fp32", 4, 512, opt="sgd", target=128),
        case("deberta-s", "seq-cls", "train", "amp_bf16", 16, 512, ck=True)]]
    # held out: encoders
    cases += [case("electra-s", "seq-cls", "train", "bf16", 16, 512), case("electra-s", "seq-cls", "infer", "bf16", 32, 512),
              case("electra-s", "token-cls", "train", "bf16", 16, 512),
              case("electra-b", "mlm", "train", "bf16", 16, 512),
              case("electra-b", "seq-cls", "train", "amp_bf16", 16, 512, ck=True),
              case("xlmr-b", "seq-cls", "train", "amp_bf16", 16, 512), case("xlmr-b", "mlm", "train", "bf16", 8, 512),
              case("xlmr-b", "mlm", "infer", "bf16", 16, 512), case("xlmr-b", "seq-cls", "lora", "bf16", 16, 512),
              case("mpnet-b", "seq-cls", "train", "bf16", 16, 512), case("mpnet-b", "seq-cls", "infer", "bf16", 32, 512),
              case("mpnet-b", "mlm", "train", "bf16", 8, 512)]
    # held out: encoder-decoders and speech
    cases += [case("mt5-s", "seq2seq", "train", "bf16", 8, 512, target=128),
              case("mt5-s", "seq2seq", "lora", "bf16", 8, 512, target=128),
              case("mt5-s", "seq2seq", "infer", "bf16", 16, 512, target=128),
              case("mt5-s", "seq2seq", "infer", "bf16", 8, 512, generate=8),
              case("mbart-m", "seq2seq", "train", "bf16", 4, 512, target=128),
              case("mbart-m", "seq2seq", "infer", "bf16", 8, 512, target=128),
              case("mbart-m", "seq2seq", "infer", "bf16", 8, 512, generate=8),
              case("pegasus-m", "seq2seq", "train", "bf16", 8, 512, target=128),
              case("pegasus-m", "seq2seq", "infer", "bf16", 16, 512, target=128),
              case("marian-s", "seq2seq", "train", "bf16", 16, 512, target=128),
              case("marian-s", "seq2seq", "train", "fp32", 8, 512, opt="sgd", target=128),
              case("marian-s", "seq2seq", "infer", "bf16", 16, 512, target=128),
              case("marian-s", "seq2seq", "infer", "bf16", 16, 512, generate=8),
              case("whisper-b", "speech-seq2seq", "train", "bf16", 8, 1, target=128),
              case("whisper-b", "speech-seq2seq", "train", "amp_bf16", 8, 1, ck=True, target=128),
              case("whisper-b", "speech-seq2seq", "lora", "bf16", 8, 1, target=128),
              case("whisper-b", "speech-seq2seq", "infer", "bf16", 16, 1, target=128)]
    # held out: vision
    cases += [case("deit-s", "image-cls", "train", "bf16", 64, 1, image=224),
              case("deit-s", "image-cls", "train", "amp_bf16", 64, 1, ck=True, image=224),
              case("deit-s", "image-cls", "lora", "bf16", 64, 1, image=224),
              case("deit-s", "image-cls", "infer", "bf16", 128, 1, image=224),
              case("vit-b32", "image-cls", "train", "bf16", 64, 1, image=224),
              case("vit-b32", "image-cls", "infer", "bf16", 128, 1, image=224),
              case("swin-b384", "image-cls", "train", "bf16", 8, 1, image=384),
              case("swin-b384", "image-cls", "infer", "bf16", 16, 1, image=384)]
    # held out: decoders
    cases += [case("phi3-mini", "causal-lm", "train", "bf16", 2, 2048), case("phi3-mini", "causal-lm", "lora", "bf16", 4, 1024),
              case("phi3-mini", "causal-lm", "infer", "bf16", 8, 2040, generate=8),
              case("bloom-1b1", "causal-lm", "train", "bf16", 4, 1024),
              case("bloom-1b1", "causal-lm", "infer", "bf16", 8, 2040, generate=8),
              case("stablelm-2", "causal-lm", "train", "bf16", 4, 1024), case("stablelm-2", "causal-lm", "lora", "bf16", 4, 1024),
              case("stablelm-2", "causal-lm", "infer", "bf16", 8, 2040, generate=8),
              case("persimmon-s", "causal-lm", "train", "bf16", 2, 1024),
              case("persimmon-s", "causal-lm", "infer", "bf16", 4, 2040, generate=8)]
    return cases


# (model, task, mode, precision, seq, card MiB as nvidia-smi reports it, extra case fields)
SCENARIOS = [
    ("t5-m", "seq2seq", "train", "bf16", 512, 12288, dict(target_seq=128)),                # dev (lost in round 1)
    ("xlmr-b", "mlm", "train", "bf16", 512, 12288, {}),
    ("phi3-mini", "causal-lm", "infer", "bf16", 2048, 16384, dict(generate=8)),
    ("deit-s", "image-cls", "train", "amp_bf16", 1, 8192, dict(image_size=224)),
]

if __name__ == "__main__":
    sys.exit(k.main(build_cases(), SCENARIOS))
