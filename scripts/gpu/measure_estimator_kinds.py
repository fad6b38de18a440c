#!/usr/bin/env python3
"""Ground truth for `vramdoc estimate` III (issue 28): every model kind from its config alone.
Decoder families never measured before (bloom, gpt-j, opt, cohere, granite, olmoe, smollm3, glm4,
nemotron), encoders (bert, roberta, distilbert, deberta-v2), encoder-decoders (t5, bart, whisper)
and vision transformers (vit, swin) with their task heads, fp32 + SGD at the sizes people run
(llama 3.2 1B, qwen3 0.6B, gemma2 2B), and the largest batch that really fits an emulated card.

Method: measure_estimator_families.py's (its helpers are imported from beside this file): every
case in its own process forked from a parent that imported torch, transformers and peft but never
touched CUDA, no warm-up, the caching allocator's trace of every case (alloc_trace.py's format),
the driver's per-process number (NVML). Changes, each for a reason:
- a case names its task (--task of vramdoc estimate) and its inputs (--image-size, --target-seq;
  a speech model takes 2 x max_source_positions mel frames, as Whisper requires);
- LoRA uses PEFT's own default target modules where PEFT has one (target_modules=None) and the
  task type the task implies (SEQ_CLS / TOKEN_CLS train the classification head beside the
  adapters: modules_to_save); the targets PEFT chose are recorded;
- the child writes the model's description (config as transformers writes it, every parameter's
  name, dtype and shape) before the run, so that the parent builds nothing;
- the parent schedules by each case's rough memory need (a formula from the config, only for
  packing the card) instead of a fixed free-memory threshold;
- max-batch scenarios: for a model, task and card, the largest batch that runs, found in rounds of
  trials run at once (Scenario), one fresh process per trial, the allocator capped with
  torch.cuda.set_per_process_memory_fraction at the card's memory less 768 MiB (the CUDA context
  and libraries of a fresh process: 678-760 MiB measured, docs/estimator.md) - an emulated card.

Held out (decided before measuring, never looked at while modelling; evaluated once at the end):
the families glm4, nemotron, roberta, bart, swin, and the '-l' size (near a size people run) of
every other family. HELD_OUT below; each record carries `held_out`.

Usage: python3 measure_estimator_kinds.py OUTDIR [filter-substring[|another]] [--dry-run]
  --dry-run: list the cases and scenarios with their scheduling need, run nothing.
Writes OUTDIR/kinds-measure.jsonl (env line, one line per case; max-batch trials have
kind=maxbatch-trial and scenario), OUTDIR/models/<model>.<task>.json, OUTDIR/traces/, OUTDIR/logs/.
"""
import json, os, signal, sys, time, traceback

import alloc_trace  # the trace format (write_trace below)
import measure_estimator_families as base

import torch
import transformers

BUDGET_S = float(os.environ.get("KINDS_BUDGET_S", "120"))        # stop starting cases after this
HARD_STOP_S = float(os.environ.get("KINDS_HARD_STOP_S", "170"))  # kill whatever still runs
CASE_TIMEOUT_S = float(os.environ.get("KINDS_CASE_TIMEOUT_S", "45"))
SLOTS = int(os.environ.get("KINDS_SLOTS", "13"))
CARD_NEED_GIB = float(os.environ.get("KINDS_CARD_GIB", "124"))   # the sum of running cases' needs
STAGGER_S = float(os.environ.get("KINDS_STAGGER_S", "0.3"))  # between two launches (CUDA contexts start staggered)
CONTEXT_RESERVE = 768 * 2**20  # an emulated card's share for the CUDA context and libraries

GPT_J = dict(activation_function="gelu_new", resid_pdrop=0.0, embd_pdrop=0.0, attn_pdrop=0.0)
GRANITE_MULT = dict(embedding_multiplier=12.0, logits_scaling=8.0, residual_multiplier=0.22,
                    attention_multiplier=0.015625)
LLAMA3_ROPE = dict(rope_type="llama3", factor=32.0, low_freq_factor=1.0, high_freq_factor=4.0,
                   original_max_position_embeddings=8192)

# name: (model_type, config fields). S and M sizes of each family with fewer layers (a case takes
# seconds); L: the published widths of a model people run (fewer layers where it is large).
MODELS = {
    # decoders never measured
    "bloom-s": ("bloom", dict(hidden_size=512, n_layer=4, n_head=8, vocab_size=250880)),
    "bloom-m": ("bloom", dict(hidden_size=1024, n_layer=6, n_head=16, vocab_size=250880)),
    "bloom-l": ("bloom", dict(hidden_size=1024, n_layer=24, n_head=16, vocab_size=250880)),  # bloom-560m
    "gptj-s": ("gptj", dict(n_embd=1024, n_layer=6, n_head=16, rotary_dim=64, vocab_size=50400, n_positions=2048, **GPT_J)),
    "gptj-m": ("gptj", dict(n_embd=2048, n_layer=6, n_head=16, rotary_dim=64, vocab_size=50400, n_positions=2048, **GPT_J)),
    "gptj-l": ("gptj", dict(n_embd=4096, n_layer=4, n_head=16, rotary_dim=64, vocab_size=50400, n_positions=2048, **GPT_J)),
    "opt-s": ("opt", dict(hidden_size=768, num_hidden_layers=12, num_attention_heads=12, ffn_dim=3072, vocab_size=50272,
                          max_position_embeddings=2048)),                                       # opt-125m
    "opt-m": ("opt", dict(hidden_size=1024, num_hidden_layers=8, num_attention_heads=16, ffn_dim=4096, vocab_size=50272,
                          max_position_embeddings=2048, do_layer_norm_before=False, word_embed_proj_dim=512)),  # 350m-style
    "opt-l": ("opt", dict(hidden_size=2048, num_hidden_layers=24, num_attention_heads=32, ffn_dim=8192, vocab_size=50272,
                          max_position_embeddings=2048)),                                       # opt-1.3b
    "cohere-s": ("cohere", dict(hidden_size=1024, intermediate_size=2816, num_hidden_layers=4, num_attention_heads=16,
                                num_key_value_heads=4, vocab_size=256000, max_position_embeddings=8192)),
    "cohere-m": ("cohere", dict(hidden_size=2048, intermediate_size=5632, num_hidden_layers=4, num_attention_heads=16,
                                num_key_value_heads=8, vocab_size=256000, max_position_embeddings=8192, use_qk_norm=True)),
    "cohere-l": ("cohere", dict(hidden_size=4096, intermediate_size=14336, num_hidden_layers=2, num_attention_heads=32,
                                num_key_value_heads=8, vocab_size=256000, max_position_embeddings=8192)),  # aya-23-8b widths
    "granite-s": ("granite", dict(hidden_size=1024, intermediate_size=4096, num_hidden_layers=6, num_attention_heads=16,
                                  num_key_value_heads=4, vocab_size=49155, tie_word_embeddings=True,
                                  max_position_embeddings=8192, **GRANITE_MULT)),
    "granite-m": ("granite", dict(hidden_size=2048, intermediate_size=8192, num_hidden_layers=6, num_attention_heads=32,
                                  num_key_value_heads=8, vocab_size=49155, tie_word_embeddings=True,
                                  max_position_embeddings=8192, **GRANITE_MULT)),
    "granite-l": ("granite", dict(hidden_size=2048, intermediate_size=8192, num_hidden_layers=16, num_attention_heads=32,
                                  num_key_value_heads=8, vocab_size=49155, tie_word_embeddings=True,
                                  max_position_embeddings=8192, **GRANITE_MULT)),   # granite-3 2b widths
    "olmoe-s": ("olmoe", dict(hidden_size=512, intermediate_size=256, num_hidden_layers=4, num_attention_heads=8,
                              num_experts=16, num_experts_per_tok=4, vocab_size=50304, max_position_embeddings=4096)),
    "olmoe-m": ("olmoe", dict(hidden_size=1024, intermediate_size=512, num_hidden_layers=4, num_attention_heads=16,
                              num_experts=32, num_experts_per_tok=8, vocab_size=50304, max_position_embeddings=4096)),
    "olmoe-l": ("olmoe", dict(hidden_size=2048, intermediate_size=1024, num_hidden_layers=4, num_attention_heads=16,
                              num_experts=64, num_experts_per_tok=8, vocab_size=50304, max_position_embeddings=4096)),
    "smollm3-s": ("smollm3", dict(hidden_size=768, intermediate_size=2048, num_hidden_layers=8, num_attention_heads=12,
                                  num_key_value_heads=4, vocab_size=128256, max_position_embeddings=8192)),
    "smollm3-m": ("smollm3", dict(hidden_size=1536, intermediate_size=4096, num_hidden_layers=8, num_attention_heads=16,
                                  num_key_value_heads=4, vocab_size=128256, max_position_embeddings=8192)),
    "smollm3-l": ("smollm3", dict(hidden_size=2048, intermediate_size=11008, num_hidden_layers=8, num_attention_heads=16,
                                  num_key_value_heads=4, vocab_size=128256, max_position_embeddings=8192)),  # 3b widths
    "glm4-s": ("glm4", dict(hidden_size=1024, intermediate_size=2816, num_hidden_layers=6, num_attention_heads=16,
                            num_key_value_heads=2, head_dim=64, vocab_size=151552, max_position_embeddings=8192)),
    "glm4-m": ("glm4", dict(hidden_size=2048, intermediate_size=6144, num_hidden_layers=6, num_attention_heads=16,
                            num_key_value_heads=2, head_dim=128, vocab_size=151552, max_position_embeddings=8192)),
    "glm4-l": ("glm4", dict(hidden_size=4096, intermediate_size=13696, num_hidden_layers=2, num_attention_heads=32,
                            num_key_value_heads=2, head_dim=128, vocab_size=151552, max_position_embeddings=8192)),
    "nemotron-s": ("nemotron", dict(hidden_size=1024, intermediate_size=4096, num_hidden_layers=6, num_attention_heads=16,
                                    num_key_value_heads=8, head_dim=64, vocab_size=256000, max_position_embeddings=4096)),
    "nemotron-m": ("nemotron", dict(hidden_size=2048, intermediate_size=8192, num_hidden_layers=6, num_attention_heads=16,
                                    num_key_value_heads=8, head_dim=128, vocab_size=256000, max_position_embeddings=4096)),
    "nemotron-l": ("nemotron", dict(hidden_size=3072, intermediate_size=9216, num_hidden_layers=4, num_attention_heads=24,
                                    num_key_value_heads=8, head_dim=128, vocab_size=256000,
                                    max_position_embeddings=4096)),                      # minitron-4b widths
    # fp32 + SGD at the sizes people run (the issue's -7 to -13 %)
    "llama3.2-1b": ("llama", dict(hidden_size=2048, intermediate_size=8192, num_hidden_layers=16, num_attention_heads=32,
                                  num_key_value_heads=8, head_dim=64, vocab_size=128256, tie_word_embeddings=True,
                                  max_position_embeddings=131072, rope_scaling=LLAMA3_ROPE)),
    "qwen3-0.6b": ("qwen3", dict(hidden_size=1024, intermediate_size=3072, num_hidden_layers=28, num_attention_heads=16,
                                 num_key_value_heads=8, head_dim=128, vocab_size=151936, tie_word_embeddings=True,
                                 max_position_embeddings=40960)),
    "gemma2-2b": ("gemma2", dict(hidden_size=2304, intermediate_size=9216, num_hidden_layers=26, num_attention_heads=8,
                                 num_key_value_heads=4, head_dim=256, vocab_size=256000, sliding_window=4096,
                                 max_position_embeddings=8192)),
    # encoders
    "bert-s": ("bert", dict()),                                                                 # bert-base
    "bert-l": ("bert", dict(hidden_size=1024, num_hidden_layers=24, num_attention_heads=16, intermediate_size=4096)),
    "roberta-s": ("roberta", dict(vocab_size=50265, max_position_embeddings=514, type_vocab_size=1, pad_token_id=1)),
    "roberta-l": ("roberta", dict(vocab_size=50265, max_position_embeddings=514, type_vocab_size=1, pad_token_id=1,
                                  hidden_size=1024, num_hidden_layers=24, num_attention_heads=16, intermediate_size=4096)),
    "distilbert-s": ("distilbert", dict()),                                                     # distilbert-base
    "deberta-s": ("deberta-v2", dict(vocab_size=128100, hidden_size=768, num_hidden_layers=6, num_attention_heads=12,
                                     intermediate_size=3072, relative_attention=True, position_buckets=256,
                                     pos_att_type=["p2c", "c2p"], max_relative_positions=-1, share_att_key=True,
                                     norm_rel_ebd="layer_norm", position_biased_input=False, type_vocab_size=0,
                                     max_position_embeddings=512)),                            # deberta-v3-small
    "deberta-l": ("deberta-v2", dict(vocab_size=128100, hidden_size=768, num_hidden_layers=12, num_attention_heads=12,
                                     intermediate_size=3072, relative_attention=True, position_buckets=256,
                                     pos_att_type=["p2c", "c2p"], max_relative_positions=-1, share_att_key=True,
                                     norm_rel_ebd="layer_norm", position_biased_input=False, type_vocab_size=0,
                                     max_position_embeddings=512)),                            # deberta-v3-base
    # encoder-decoders
    # T5Config's defaults have no decoder_start_token_id (training and generate() fail without it: run of 2026-12-01)
    "t5-s": ("t5", dict(decoder_start_token_id=0)),                                             # t5-small
    "t5-m": ("t5", dict(d_model=768, d_ff=2048, d_kv=64, num_layers=12, num_heads=12, feed_forward_proj="gated-gelu",
                        tie_word_embeddings=False, vocab_size=32128, decoder_start_token_id=0)),  # flan-t5-base
    "bart-s": ("bart", dict(d_model=768, encoder_layers=6, decoder_layers=6, encoder_attention_heads=12,
                            decoder_attention_heads=12, encoder_ffn_dim=3072, decoder_ffn_dim=3072)),   # bart-base
    "bart-m": ("bart", dict()),                                                                 # bart-large defaults
    "whisper-s": ("whisper", dict(d_model=384, encoder_layers=4, decoder_layers=4, encoder_attention_heads=6,
                                  decoder_attention_heads=6, encoder_ffn_dim=1536, decoder_ffn_dim=1536)),  # tiny
    "whisper-m": ("whisper", dict(d_model=768, encoder_layers=12, decoder_layers=12, encoder_attention_heads=12,
                                  decoder_attention_heads=12, encoder_ffn_dim=3072, decoder_ffn_dim=3072)),  # small
    # vision
    "vit-s": ("vit", dict(num_labels=1000)),                                                    # vit-base-patch16
    "vit-l": ("vit", dict(num_labels=1000, hidden_size=1024, num_hidden_layers=24, num_attention_heads=16,
                          intermediate_size=4096)),                                             # vit-large
    "vit-s384": ("vit", dict(num_labels=1000, image_size=384)),                                  # vit-base-patch16-384
    "swin-s": ("swin", dict(num_labels=1000)),                                                  # swin-tiny
    "swin-m": ("swin", dict(num_labels=1000, embed_dim=128, depths=[2, 2, 18, 2], num_heads=[4, 8, 16, 32])),  # base
}

HELD_OUT_FAMILIES = {"glm4", "nemotron", "roberta", "bart", "swin"}


def held_out(model):
    return MODELS[model][0] in HELD_OUT_FAMILIES or model.endswith("-l")


# PEFT has no default target modules for these (TRANSFORMERS_MODELS_TO_LORA_TARGET_MODULES_MAPPING):
# the attention's query and value, as its defaults choose for the other families.
LORA_TARGETS = {"cohere": ["q_proj", "v_proj"], "granite": ["q_proj", "v_proj"], "olmoe": ["q_proj", "v_proj"],
                "smollm3": ["q_proj", "v_proj"], "glm4": ["q_proj", "v_proj"], "nemotron": ["q_proj", "v_proj"],
                "distilbert": ["q_lin", "v_lin"], "whisper": ["q_proj", "v_proj"],
                # transformers 5 renamed ViT's and Swin's query/value (PEFT found none: 2026-12-01)
                "vit": ["q_proj", "v_proj"], "swin": ["q_proj", "v_proj"]}

AUTO_CLASS = {"causal-lm": "AutoModelForCausalLM", "seq-cls": "AutoModelForSequenceClassification",
              "token-cls": "AutoModelForTokenClassification", "mlm": "AutoModelForMaskedLM",
              "seq2seq": "AutoModelForSeq2SeqLM", "image-cls": "AutoModelForImageClassification",
              "speech-seq2seq": "AutoModelForSpeechSeq2Seq"}
# Either name of the attention's query and value (transformers 5 renamed several families' query/value to q_proj/v_proj).
QUERY_VALUE = r".*\.(query|value|q_proj|v_proj|q|v)$"
PEFT_TASK = {"causal-lm": "CAUSAL_LM", "seq-cls": "SEQ_CLS", "token-cls": "TOKEN_CLS", "seq2seq": "SEQ_2_SEQ_LM"}
TOKEN_LABELS = 9  # token classification: CoNLL's nine tags


def case(model, task, mode, precision, batch, seq=512, ck=False, opt="adamw", generate=0, target=0, image=0,
         attention=None):
    return dict(model=model, task=task, mode=mode, precision=precision, batch=batch, seq=seq, grad_checkpointing=ck,
                optimizer=opt if mode != "infer" else None, generate=generate, target_seq=target, image_size=image,
                attention=attention, quant=None, alloc_conf=None, held_out=held_out(model))


def decoder_cases(fam):
    s, m, l = fam + "-s", fam + "-m", fam + "-l"
    return [case(s, "causal-lm", "train", "bf16", 4, 1024), case(s, "causal-lm", "train", "fp32", 2, 1024, opt="sgd"),
            case(s, "causal-lm", "lora", "bf16", 4, 1024), case(s, "causal-lm", "infer", "bf16", 4, 1024, generate=8),
            case(m, "causal-lm", "train", "bf16", 2, 2048), case(m, "causal-lm", "train", "amp_bf16", 2, 2048, ck=True),
            # 2040 + 8 tokens: OPT's and GPT-J's learned / sinusoidal positions stop at 2048
            case(m, "causal-lm", "lora", "bf16", 4, 1024, ck=True), case(m, "causal-lm", "infer", "bf16", 8, 2040, generate=8),
            case(l, "causal-lm", "train", "bf16", 2, 1024), case(l, "causal-lm", "infer", "bf16", 8, 2040, generate=8)]


def build_cases():
    cases = []
    for fam in ["bloom", "gptj", "opt", "cohere", "granite", "olmoe", "smollm3", "glm4", "nemotron"]:
        cases += decoder_cases(fam)
    for m in ["llama3.2-1b", "qwen3-0.6b"]:
        cases += [case(m, "causal-lm", "train", "fp32", 2, 1024, opt="sgd"), case(m, "causal-lm", "train", "fp32", 1, 2048, opt="sgd")]
    cases += [case("gemma2-2b", "causal-lm", "train", "fp32", 2, 1024, opt="sgd", attention="eager"),
              case("gemma2-2b", "causal-lm", "train", "fp32", 1, 2048, opt="sgd", attention="eager")]
    for fam, tasks in [("bert", ["seq-cls", "token-cls", "mlm"]), ("roberta", ["seq-cls", "mlm"]),
                       ("distilbert", ["seq-cls", "token-cls", "mlm"]), ("deberta", ["seq-cls", "mlm"])]:
        s, l = fam + "-s", fam + "-l"
        for t in tasks:
            cases += [case(s, t, "train", "bf16", 16, 512)] + ([] if t == "token-cls" else [case(s, t, "lora", "bf16", 16, 512)])
        cases += [case(s, "seq-cls", "train", "fp32", 8, 512, opt="sgd"), case(s, "seq-cls", "train", "amp_bf16", 16, 512, ck=True),
                  case(s, "seq-cls", "infer", "bf16", 32, 512), case(s, "mlm", "infer", "bf16", 16, 512)]
        if l in MODELS:
            cases += [case(l, "seq-cls", "train", "amp_bf16", 16, 512), case(l, "mlm", "train", "bf16", 8, 512),
                      case(l, "seq-cls", "infer", "bf16", 32, 512)]
    for fam in ["t5", "bart"]:
        for size in ["-s", "-m"]:
            m = fam + size
            cases += [case(m, "seq2seq", "train", "bf16", 8, 512, target=128),
                      case(m, "seq2seq", "train", "fp32", 4, 512, opt="sgd", target=128),
                      case(m, "seq2seq", "train", "amp_bf16", 8, 512, ck=True, target=128),
                      case(m, "seq2seq", "lora", "bf16", 8, 512, target=128),
                      case(m, "seq2seq", "infer", "bf16", 16, 512, target=128),
                      case(m, "seq2seq", "infer", "bf16", 8, 512, generate=8)]
    for m in ["whisper-s", "whisper-m"]:
        cases += [case(m, "speech-seq2seq", "train", "bf16", 8, 1, target=128),
                  case(m, "speech-seq2seq", "train", "fp32", 4, 1, opt="sgd", target=128),
                  case(m, "speech-seq2seq", "train", "amp_bf16", 8, 1, ck=True, target=128),
                  case(m, "speech-seq2seq", "lora", "bf16", 8, 1, target=128),
                  case(m, "speech-seq2seq", "infer", "bf16", 16, 1, target=128)]
    for fam in ["vit", "swin"]:
        for m in [fam + "-s", fam + ("-l" if fam == "vit" else "-m")]:
            cases += [case(m, "image-cls", "train", "bf16", 32, 1, image=224),
                      case(m, "image-cls", "train", "fp32", 16, 1, opt="sgd", image=224),
                      case(m, "image-cls", "train", "amp_bf16", 32, 1, ck=True, image=224),
                      case(m, "image-cls", "lora", "bf16", 32, 1, image=224),
                      case(m, "image-cls", "infer", "bf16", 64, 1, image=224)]
        cases.append(case(fam + ("-s384" if fam == "vit" else "-s"), "image-cls", "train", "bf16", 16, 1, image=384))
    return cases


# The largest batch that runs on an emulated card: (model, task, mode, precision, seq, card MiB as
# nvidia-smi reports it, extra case fields). vramdoc's --max-batch for the same is checked against it.
SCENARIOS = [
    ("cohere-m", "causal-lm", "infer", "bf16", 2048, 24564, dict(generate=8)),          # RTX 4090
    ("opt-l", "causal-lm", "train", "bf16", 1024, 24564, {}),
    ("gptj-m", "causal-lm", "lora", "bf16", 1024, 16384, {}),
    ("bloom-m", "causal-lm", "infer", "bf16", 2048, 12288, {}),                          # RTX 3060
    ("bert-s", "seq-cls", "train", "amp_bf16", 512, 15360, {}),                           # T4
    ("t5-m", "seq2seq", "train", "bf16", 512, 24564, dict(target_seq=128)),
    ("whisper-m", "speech-seq2seq", "train", "bf16", 1, 24564, dict(target_seq=128)),
    ("vit-s", "image-cls", "train", "amp_bf16", 1, 12288, dict(image_size=224)),
    ("granite-m", "causal-lm", "train", "bf16", 2048, 24564, {}),
]


class Scenario:
    """The largest batch that runs, searched in rounds of WIDTH trials at once (each its own process):
    1, 4, 16, then x4 steps until one fails (or 4096), then WIDTH points spread over the interval
    between the largest that ran and the smallest that failed, until they are one apart. A trial that
    fails with anything but an out-of-memory error ends the scenario (`broken`)."""

    WIDTH = int(os.environ.get("KINDS_SCENARIO_WIDTH", "3"))
    LIMIT = 4096

    def __init__(self, index, spec):
        self.index = index
        self.model, self.task, self.mode, self.precision, self.seq, self.card_mib, self.extra = spec
        self.ok, self.fail = 0, None
        self.results = {}
        self.pending = set()  # batches of running trials
        self.queue = []       # the current round's batches not started yet
        self.broken = None

    def _plan(self):
        if self.broken:
            return []
        if self.fail is None:
            start = [1, 4, 16] if not self.results else [self.ok * 4 ** i for i in range(1, self.WIDTH + 1)]
            return [b for b in start[:self.WIDTH] if b <= self.LIMIT and b not in self.results]
        gap = self.fail - self.ok
        return sorted({self.ok + max(1, gap * i // (self.WIDTH + 1)) for i in range(1, self.WIDTH + 1)} - {self.fail}) if gap > 1 else []

    def has_next(self):
        """True when a trial can start now (the next round is planned once the last one finished)."""
        if not self.queue and not self.pending:
            self.queue = self._plan()
        return bool(self.queue)

    def next_batch(self):
        return self.queue.pop(0) if self.has_next() else None

    def done(self, late):
        return not self.pending and (late or not self.has_next())

    def record(self, batch, ok):
        self.results[batch] = ok
        if ok:
            self.ok = max(self.ok, batch)
        else:
            self.fail = batch if self.fail is None else min(self.fail, batch)

    def case(self, batch):
        c = case(self.model, self.task, self.mode, self.precision, batch, self.seq)
        c.update(self.extra)
        c.update(kind="maxbatch-trial", scenario=self.index, card_mib=self.card_mib)
        return c

    def summary(self):
        return dict(kind="maxbatch", scenario=self.index, model=self.model, task=self.task, mode=self.mode,
                    precision=self.precision, seq=self.seq, card_mib=self.card_mib, largest_batch=self.ok,
                    first_failing=self.fail, broken=self.broken, trials={str(k): v for k, v in sorted(self.results.items())},
                    held_out=held_out(self.model), **self.extra)


# ---------------------------------------------------------------- one case (in a child)

def build(c):
    kind, kw = MODELS[c["model"]]
    task = c["task"]
    fields = dict(kw)
    if task == "token-cls":
        fields["num_labels"] = TOKEN_LABELS
    cfg = transformers.AutoConfig.for_model(kind, **fields)
    dtype = torch.bfloat16 if c["precision"] == "bf16" else torch.float32
    auto = getattr(transformers, AUTO_CLASS[task])
    extra = {"attn_implementation": c["attention"]} if c.get("attention") else {}
    with torch.device("cuda"):
        try:
            model = auto.from_config(cfg, dtype=dtype, **extra)
        except TypeError as e:  # LeViT's config has architectures=None, which from_config iterates (5.17)
            if "not iterable" not in str(e):
                raise
            cls = auto._model_mapping[type(cfg)]
            cls = cls[0] if isinstance(cls, tuple) else cls  # DeiT maps to two classes (the first: ...ForImageClassification)
            model = cls._from_config(cfg, dtype=dtype, **extra)
    if any(p.device.type != "cuda" for p in model.parameters()):
        model.to("cuda")  # XLNet makes its relative-attention Parameters with torch.FloatTensor (on the CPU)
    return cfg, model, dtype


def describe(c, cfg, model, out_dir):
    """The model's description, written once per model and task (O_EXCL: the first case wins)."""
    path = os.path.join(out_dir, "models", f"{c['model']}.{c['task']}.json")
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
    except FileExistsError:
        return
    info = dict(model=c["model"], task=c["task"], model_type=MODELS[c["model"]][0],
                config=json.loads(cfg.to_json_string(use_diff=False)), model_class=type(model).__name__,
                n_params=sum(p.numel() for p in model.parameters()),
                tensors={n: [str(p.dtype).replace("torch.", ""), list(p.shape)] for n, p in model.named_parameters()},
                buffers={n: [str(b.dtype).replace("torch.", ""), list(b.shape)] for n, b in model.named_buffers()})
    with os.fdopen(fd, "w") as f:
        json.dump(info, f)


def inputs(c, cfg, dtype, train):
    """The task's inputs (and labels in training) on the GPU."""
    b, s, task = c["batch"], c["seq"], c["task"]
    vocab = getattr(cfg, "vocab_size", 32000)
    x = {}
    if task == "image-cls":
        x["pixel_values"] = torch.randn(b, getattr(cfg, "num_channels", 3), c["image_size"], c["image_size"],
                                        device="cuda", dtype=dtype)
    elif task == "speech-seq2seq":
        x["input_features"] = torch.randn(b, cfg.num_mel_bins, 2 * cfg.max_source_positions, device="cuda", dtype=dtype)
    else:
        x["input_ids"] = torch.randint(0, vocab, (b, s), device="cuda")
    if task in ("seq2seq", "speech-seq2seq"):
        target = torch.randint(0, vocab, (b, c["target_seq"]), device="cuda")
        if train:
            x["labels"] = target
        else:
            x["decoder_input_ids"] = target
    elif train and task in ("seq-cls", "image-cls"):
        x["labels"] = torch.randint(0, cfg.num_labels, (b,), device="cuda")
    elif train and task == "token-cls":
        x["labels"] = torch.randint(0, TOKEN_LABELS, (b, s), device="cuda")
    elif train:
        x["labels"] = x["input_ids"]
    return x


def wrap_lora(c, model, rec):
    """PEFT's default target modules where PEFT has them (LORA_TARGETS otherwise); where neither
    matches a module (a family PEFT does not know, or transformers 5's renamed attention), the
    attention's query and value by either name. The targets recorded are the Linears PEFT wrapped."""
    from peft import LoraConfig, get_peft_model
    kind = MODELS[c["model"]][0]
    kw = dict(r=16, lora_alpha=32, lora_dropout=0.0, target_modules=LORA_TARGETS.get(kind))
    if c["task"] in PEFT_TASK:
        kw["task_type"] = PEFT_TASK[c["task"]]
    if c["task"] == "image-cls":
        kw["modules_to_save"] = ["classifier"]
    fallback = False
    try:
        model = get_peft_model(model, LoraConfig(**kw))
    except ValueError:  # "Please specify target_modules" / "Target modules ... not found"
        kw["target_modules"], fallback = QUERY_VALUE, True
        model = get_peft_model(model, LoraConfig(**kw))
    pc = model.peft_config["default"]
    wrapped = sorted({n.rsplit(".", 1)[-1] for n, mod in model.named_modules() if hasattr(mod, "lora_A")})
    rec["lora"] = dict(r=16, targets=wrapped, peft_default=kw["target_modules"] is None, fallback=fallback,
                       task_type=str(kw.get("task_type")), modules_to_save=sorted(pc.modules_to_save or []))
    return model


def run_train(c, cfg, model, dtype, rec, marks):
    if c["mode"] == "lora":
        model = wrap_lora(c, model, rec)
    if c["grad_checkpointing"]:
        model.gradient_checkpointing_enable(gradient_checkpointing_kwargs={"use_reentrant": False})
        if c["mode"] == "lora":
            model.enable_input_require_grads()
    model.train()
    params = [p for p in model.parameters() if p.requires_grad]
    rec["n_trainable"] = sum(p.numel() for p in params)
    opt = torch.optim.AdamW(params, lr=1e-5) if c["optimizer"] == "adamw" else torch.optim.SGD(params, lr=1e-5)
    x = inputs(c, cfg, dtype, True)
    marks.mark("inputs")
    steps = []
    for step in range(3):
        t0 = time.time()
        if c["precision"] == "amp_bf16":
            with torch.autocast("cuda", dtype=torch.bfloat16):
                loss = model(**x).loss
        else:
            loss = model(**x).loss
        marks.mark(f"step{step}.forward")
        loss.backward()
        marks.mark(f"step{step}.backward")
        opt.step()
        marks.mark(f"step{step}.optimizer")
        opt.zero_grad(set_to_none=True)
        marks.mark(f"step{step}.zero_grad")
        ph = marks.phases[-4:]
        steps.append(dict(peak_allocated=max(p["peak_allocated"] for p in ph),
                          peak_reserved=max(p["peak_reserved"] for p in ph),
                          after_allocated=torch.cuda.memory_allocated(), seconds=time.time() - t0, loss=float(loss)))
        del loss
    return steps


def run_infer(c, cfg, model, dtype, rec, marks):
    model.eval()
    x = inputs(c, cfg, dtype, False)
    marks.mark("inputs")
    t0 = time.time()
    with torch.no_grad():
        if c["generate"]:
            x.pop("decoder_input_ids", None)  # generate() starts the decoder itself
            model.generation_config.eos_token_id = None
            if "input_ids" in x:
                x["attention_mask"] = torch.ones_like(x["input_ids"])
            out = model.generate(**x, max_new_tokens=c["generate"], min_new_tokens=c["generate"], do_sample=False,
                                 pad_token_id=0)
            rec["generated"] = int(out.shape[1] - (c["seq"] if c["task"] == "causal-lm" else 1))
        else:
            out = model(**x, use_cache=True) if c["task"] in ("causal-lm", "seq2seq", "speech-seq2seq") else model(**x)
    marks.mark("inference")
    ph = marks.phases[-1]
    step = dict(peak_allocated=ph["peak_allocated"], peak_reserved=ph["peak_reserved"],
                after_allocated=torch.cuda.memory_allocated(), seconds=time.time() - t0)
    del out
    return [step]


def measure(c, out_dir, tag):
    trial = c.get("kind") == "maxbatch-trial"
    torch.cuda.init()
    free, total = torch.cuda.mem_get_info()  # creates the context
    rec = dict(c, arch=MODELS[c["model"]][0], config=MODELS[c["model"]][1], driver_after_init=base.driver_used())
    if trial:
        rec["memory_fraction"] = (c["card_mib"] * 2**20 - CONTEXT_RESERVE) / total
        torch.cuda.set_per_process_memory_fraction(rec["memory_fraction"])
    else:
        # context=None records no stack at all (round 2's traces had no frames): "alloc" keeps each allocation's
        torch.cuda.memory._record_memory_history(enabled="all", context="alloc" if frames_of(c) else None,
                                                 stacks="python", max_entries=400_000)
    marks = base.Marks()
    cfg, model, dtype = build(c)
    if not trial:
        describe(c, cfg, model, out_dir)
    rec["attn_implementation"] = getattr(model.config, "_attn_implementation", None)
    rec["experts_implementation"] = getattr(model.config, "_experts_implementation", None)
    rec["n_params"] = sum(p.numel() for p in model.parameters())
    rec["weights_allocated"] = torch.cuda.memory_allocated()
    rec["driver_after_build"] = base.driver_used()
    marks.mark("build")
    steps = (run_infer if c["mode"] == "infer" else run_train)(c, cfg, model, dtype, rec, marks)
    rec["steps"] = steps
    rec["peak_allocated"] = max(s["peak_allocated"] for s in steps)
    rec["peak_reserved"] = max(p["peak_reserved"] for p in marks.phases)
    rec["reserved_end"] = torch.cuda.memory_reserved()
    rec["driver_process_used"] = base.driver_used()
    rec["phases"] = marks.phases
    stats = torch.cuda.memory_stats()
    rec["stats"] = {k: v for k, v in stats.items() if not k.startswith(("active.", "inactive_split.", "allocation.",
                                                                       "segment.")) or k.endswith(".all.peak")}
    if not trial:
        try:
            rec["trace"] = write_trace(os.path.join(out_dir, "traces", tag + ".txt.gz"), marks, frames_of(c))
        except Exception as e:
            rec["trace"] = dict(error=f"{type(e).__name__}: {e}")
    return rec


TRACE_FRAMES = int(os.environ.get("KINDS_TRACE_FRAMES", "0"))  # Python frames per block of 1 MiB and more


def frames_of(c):
    """Python frames per large block in the case's trace: the case's `trace_frames`, else KINDS_TRACE_FRAMES."""
    return int(c.get("trace_frames", TRACE_FRAMES))


def write_trace(path, marks, frames):
    """The caching allocator's history as alloc_trace.py's text (with `frames` Python frames per large block)."""
    snap = torch.cuda.memory._snapshot()
    traces = snap.get("device_traces", [[]])
    events = traces[torch.cuda.current_device()] if traces else []
    cuts = {}
    for p in marks.phases:
        cuts.setdefault(p["allocs"], []).append(p["name"])
    alloc_trace.write(path, events, cuts, frames=frames)
    return dict(events=len(events), segments_at_end=len(snap.get("segments", [])), frames=frames)


def child(c, out_dir, tag, visible):
    signal.alarm(int(CASE_TIMEOUT_S) + 15)
    os.environ["CUDA_VISIBLE_DEVICES"] = visible
    log = os.open(os.path.join(out_dir, "logs", tag + ".log"), os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    os.dup2(log, 1)
    os.dup2(log, 2)
    t0 = time.time()
    try:
        rec = measure(c, out_dir, tag)
    except torch.OutOfMemoryError as e:
        rec = dict(c, error="oom", message=str(e)[:400])
    except Exception as e:
        rec = dict(c, error=type(e).__name__, message=str(e)[:400], tb=traceback.format_exc()[-1500:])
    rec["wall"] = time.time() - t0
    rec["case_id"] = tag
    with open(os.path.join(out_dir, "cases", tag + ".json"), "w") as f:
        json.dump(rec, f)
    sys.stdout.flush()
    os._exit(0)


# ---------------------------------------------------------------- the parent (never touches CUDA)

def width_and_layers(kw):
    h = kw.get("hidden_size") or kw.get("n_embd") or kw.get("d_model") or kw.get("embed_dim") or 768
    layers = (kw.get("num_hidden_layers") or kw.get("n_layer") or kw.get("num_layers") or
              kw.get("encoder_layers", 6) + kw.get("decoder_layers", 6))
    if isinstance(kw.get("depths"), list):
        layers, h = sum(kw["depths"]), h * 4
    return h, layers


def need_bytes(c):
    """A rough upper bound of a case's peak (for packing the card only): weights, gradients and
    state per parameter, activations per token and layer, the logits' fp32 tensors."""
    if c.get("kind") == "maxbatch-trial":
        return c["card_mib"] * 2**20 + 3 * 2**28  # the fraction capped at the card, and the context
    kw = MODELS[c["model"]][1]
    h, layers = width_and_layers(kw)
    inter = kw.get("intermediate_size") or kw.get("ffn_dim") or kw.get("d_ff") or 4 * h
    vocab = kw.get("vocab_size", 50000)
    experts = kw.get("num_experts", 1)
    params = layers * (4 * h * h + 3 * h * (kw.get("moe_intermediate_size") or inter) * experts) + 2 * vocab * h
    per_param = {"train": 24 if c["precision"] == "amp_bf16" else 12, "lora": 4, "infer": 4}[c["mode"]]
    if c["precision"] == "fp32":
        per_param = 12 if c["mode"] == "train" else 8
    tokens = c["batch"] * max(c["seq"], c.get("target_seq") or 0, (c.get("image_size") or 0) ** 2 // 256, 1500 if c["task"] == "speech-seq2seq" else 0)
    act = 0 if c["mode"] == "infer" else tokens * h * layers * (120 if c["precision"] == "fp32" else 60)
    act += tokens * (inter * 4 + 8 * h)
    kind = MODELS[c["model"]][0]
    if kind in ("bloom", "gptj", "deberta-v2", "t5", "gemma2"):  # eager attention: score matrices per layer
        heads = kw.get("num_attention_heads") or kw.get("n_head") or 16
        act += c["batch"] * heads * c["seq"] * c["seq"] * 4 * (layers if c["mode"] != "infer" else 2)
    logit_tokens = c["batch"] * (c["seq"] if c["task"] in ("causal-lm", "mlm") else c.get("target_seq") or 0)
    logits = logit_tokens * vocab * (16 if c["mode"] != "infer" else 6)
    return int(1.2 * (params * per_param + act + logits)) + 2**30


def preimport(models):
    """Imports peft and every model class the cases build, in the parent (no CUDA): the children
    fork with them loaded."""
    try:
        import peft  # noqa: F401
        from peft import LoraConfig, get_peft_model  # noqa: F401
    except Exception as e:
        print("peft:", e, flush=True)
    for kind in sorted({MODELS[m][0] for m in models}):
        try:
            cfg = transformers.AutoConfig.for_model(kind)
        except Exception as e:
            print(f"config {kind}: {type(e).__name__}: {e}", flush=True)
            continue
        for name in AUTO_CLASS.values():
            try:
                getattr(transformers, name)._model_mapping[type(cfg)]
            except Exception:
                pass


def tag_of(i, c):
    t = f"{i:03d}-{c['model']}-{c['task']}-{c['mode']}-{c['precision']}"
    return t + (f"-b{c['batch']}" if c.get("kind") == "maxbatch-trial" else "")


def main(all_cases=None, all_scenarios=None):
    """Runs `all_cases` (build_cases()) and the max-batch `all_scenarios` (SCENARIOS): see the usage above."""
    all_cases = build_cases() if all_cases is None else all_cases
    all_scenarios = SCENARIOS if all_scenarios is None else all_scenarios
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    dry = "--dry-run" in sys.argv
    if not args:
        print(__doc__)
        return 2
    out_dir, filt = args[0], (args[1] if len(args) > 1 else "")
    filts = filt.split("|")  # a|b: the cases of either
    cases = [c for c in all_cases if any(f in c["model"] for f in filts)]
    scenarios = [Scenario(i, s) for i, s in enumerate(all_scenarios) if any(f in s[0] for f in filts)]
    if dry:
        for i, c in enumerate(cases):
            print(f"{tag_of(i, c):60} need {need_bytes(c) / 2**30:6.1f} GiB{'  held out' if c['held_out'] else ''}")
        for s in scenarios:
            print(f"scenario {s.index}: {s.model} {s.task} {s.mode} {s.precision} seq {s.seq} on {s.card_mib} MiB")
        print(f"{len(cases)} cases, {len(scenarios)} max-batch scenarios")
        return 0
    for d in ["models", "traces", "logs", "cases"]:
        os.makedirs(os.path.join(out_dir, d), exist_ok=True)
    preimport({c["model"] for c in cases} | {s.model for s in scenarios})
    gpu = base.gpu_slots()[0]
    start = time.time()
    print(f"{len(cases)} cases and {len(scenarios)} scenarios on GPU {gpu}, {SLOTS} at a time, budget {BUDGET_S:.0f} s",
          flush=True)
    queue = [(i, c) for i, c in enumerate(cases)]
    queue.sort(key=lambda ic: -need_bytes(ic[1]))  # the largest first: they pack worst
    running = {}  # pid -> (tag, need, started, scenario or None, batch)
    trial_no = len(cases)
    skipped = []

    def launch(tag, c, scenario, batch):
        pid = os.fork()
        if pid == 0:
            child(c, out_dir, tag, gpu)
        running[pid] = (tag, need_bytes(c), time.time(), scenario, batch)

    while True:
        for pid, (tag, need, t0, sc, batch) in list(running.items()):
            done, _ = os.waitpid(pid, os.WNOHANG)
            late = time.time() - t0 > CASE_TIMEOUT_S or time.time() - start > HARD_STOP_S
            if not done and late:
                os.kill(pid, signal.SIGKILL)
                os.waitpid(pid, 0)
            if not done and not late:
                continue
            del running[pid]
            path = os.path.join(out_dir, "cases", tag + ".json")
            r = json.load(open(path)) if os.path.exists(path) else None
            status = "killed" if r is None else r.get("error") or (
                f"alloc {r['peak_allocated'] / 2**30:.2f} GiB reserved {r['peak_reserved'] / 2**30:.2f} "
                f"driver {(r.get('driver_process_used') or 0) / 2**30:.2f}")
            print(f"[{time.time() - start:6.1f}s] {tag}: {status} ({time.time() - t0:.1f}s)", flush=True)
            if sc is not None:
                ok = r is not None and "error" not in r
                if r is None or r.get("error") in (None, "oom"):
                    sc.record(batch, ok)
                else:
                    sc.broken = f"batch {batch}: {r.get('error')}: {r.get('message', '')[:200]}"
                sc.pending.discard(batch)
        late = time.time() - start > BUDGET_S
        if late:
            skipped += [tag_of(i, c) for i, c in queue]
            queue = []
        used = sum(v[1] for v in running.values())
        launched = True
        while launched and len(running) < SLOTS:
            launched = False
            for sc in scenarios:  # a scenario's trials first: each round waits for the one before
                if not late and len(running) < SLOTS:
                    b = sc.next_batch()
                    if b is not None:
                        c = sc.case(b)
                        if used + need_bytes(c) <= CARD_NEED_GIB * 2**30:
                            tag = tag_of(trial_no, c)
                            trial_no += 1
                            sc.pending.add(b)
                            launch(tag, c, sc, b)
                            used += need_bytes(c)
                            launched = True
                        else:
                            sc.queue.insert(0, b)
            for k, (i, c) in enumerate(queue):
                n = need_bytes(c)
                if used + n <= CARD_NEED_GIB * 2**30 or not running:
                    queue.pop(k)
                    launch(tag_of(i, c), c, None, 0)
                    used += n
                    launched = True
                    break
            if launched:
                time.sleep(STAGGER_S)
        if not running and not queue and all(s.done(late) for s in scenarios):
            break
        time.sleep(0.2)
    with open(os.path.join(out_dir, "kinds-measure.jsonl"), "w") as f:
        f.write(json.dumps(base.env_line()) + "\n")
        for name in sorted(os.listdir(os.path.join(out_dir, "cases"))):
            f.write(open(os.path.join(out_dir, "cases", name)).read().strip() + "\n")
        for s in scenarios:
            f.write(json.dumps(s.summary()) + "\n")
    for s in skipped:
        print("not run (budget):", s)
    print(f"done in {time.time() - start:.0f}s", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
