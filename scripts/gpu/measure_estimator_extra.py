#!/usr/bin/env python3
"""More ground truth for `vramdoc estimate`: 27 cases on architectures and modes the calibration
set lacks (mistral, qwen3, gemma, phi3, mixtral; LoRA on llama/gemma/phi3/mistral; inference on
llama/gpt2/...; eager attention under amp-bf16; fp32 with grouped KV heads; other batch/seq).

It reuses the shared measurement script unchanged (same warm-up, same method), only replacing its
MODELS and CASES, and also writes each model's full config.json (as transformers writes it) to
OUT.jsonl.configs/<model>.json, where scripts/eval_estimator.py finds them.

Usage (on the GPU machine, about 2 minutes on one H200):
  python3 scripts/gpu/measure_estimator_extra.py ../shared/data/estimator/measure_pytorch.py OUT.jsonl [filter]
  python3 scripts/eval_estimator.py OUT.jsonl
"""
import importlib.util, os, sys


def load_measurer(path):
    spec = importlib.util.spec_from_file_location("measure_pytorch", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


MODELS = {  # small configs: minutes of GPU time, the same code paths as the big models
    "mistral-s": ("mistral", dict(hidden_size=1024, num_hidden_layers=8, num_attention_heads=16, num_key_value_heads=4,
                                  intermediate_size=2816, vocab_size=32000, max_position_embeddings=8192)),
    "mistral-sw512": ("mistral", dict(hidden_size=1024, num_hidden_layers=8, num_attention_heads=16, num_key_value_heads=4,
                                      intermediate_size=2816, vocab_size=32000, sliding_window=512,
                                      max_position_embeddings=8192)),
    "qwen3-s": ("qwen3", dict(hidden_size=1024, num_hidden_layers=8, num_attention_heads=16, num_key_value_heads=8,
                              head_dim=128, intermediate_size=3072, vocab_size=151936, tie_word_embeddings=True,
                              max_position_embeddings=8192)),
    "gemma-s": ("gemma", dict(hidden_size=1024, num_hidden_layers=8, num_attention_heads=8, num_key_value_heads=1,
                              head_dim=256, intermediate_size=4096, vocab_size=256000, max_position_embeddings=8192)),
    "phi3-s": ("phi3", dict(hidden_size=1024, num_hidden_layers=8, num_attention_heads=16, num_key_value_heads=16,
                            intermediate_size=2816, vocab_size=32064, max_position_embeddings=8192,
                            original_max_position_embeddings=8192)),
    "mixtral-s": ("mixtral", dict(hidden_size=512, num_hidden_layers=4, num_attention_heads=8, num_key_value_heads=4,
                                  intermediate_size=1024, vocab_size=32000, num_local_experts=8, num_experts_per_tok=2,
                                  max_position_embeddings=8192)),
    "llama-160m": ("llama", dict(hidden_size=768, num_hidden_layers=12, num_attention_heads=12, num_key_value_heads=12,
                                 intermediate_size=2048, vocab_size=32000, max_position_embeddings=4096)),
    "gpt2-124m": ("gpt2", dict(n_embd=768, n_layer=12, n_head=12, vocab_size=50257, n_positions=2048)),
}

# (model, mode, precision, batch, seq, checkpointing, optimizer, attention)
CASES = [
    ("mistral-s", "train", "bf16", 4, 1024, False, "adamw", "sdpa"),
    ("mistral-s", "train", "amp_bf16", 2, 2048, True, "adamw", "sdpa"),
    ("mistral-s", "lora", "bf16", 4, 1024, False, "adamw", "sdpa"),
    ("mistral-sw512", "infer", "bf16", 4, 2048, False, None, "sdpa"),
    ("qwen3-s", "train", "bf16", 4, 1024, False, "adamw", "sdpa"),
    ("qwen3-s", "train", "amp_bf16", 4, 1024, False, "adamw", "sdpa"),
    ("qwen3-s", "train", "fp32", 2, 512, False, "adamw", "sdpa"),
    ("qwen3-s", "infer", "bf16", 8, 1024, False, None, "sdpa"),
    ("gemma-s", "train", "bf16", 4, 1024, False, "adamw", "sdpa"),
    ("gemma-s", "train", "amp_bf16", 2, 1024, False, "adamw", "eager"),
    ("gemma-s", "lora", "bf16", 4, 1024, False, "adamw", "sdpa"),
    ("gemma-s", "infer", "bf16", 4, 1024, False, None, "sdpa"),
    ("phi3-s", "train", "bf16", 4, 1024, False, "adamw", "sdpa"),
    ("phi3-s", "train", "amp_bf16", 4, 1024, True, "adamw", "sdpa"),
    ("phi3-s", "lora", "bf16", 4, 1024, False, "adamw", "sdpa"),
    ("phi3-s", "infer", "bf16", 4, 2048, False, None, "sdpa"),
    ("mixtral-s", "train", "bf16", 4, 1024, False, "adamw", "sdpa"),
    ("mixtral-s", "train", "amp_bf16", 2, 1024, False, "adamw", "sdpa"),
    ("mixtral-s", "infer", "bf16", 4, 1024, False, None, "sdpa"),
    ("llama-160m", "lora", "bf16", 8, 1024, False, "adamw", "sdpa"),
    ("llama-160m", "lora", "fp32", 4, 512, True, "adamw", "sdpa"),
    ("llama-160m", "train", "amp_bf16", 4, 1024, False, "adamw", "eager"),
    ("llama-160m", "infer", "bf16", 16, 2048, False, None, "sdpa"),
    ("llama-160m", "infer", "fp32", 4, 1024, False, None, "sdpa"),
    ("gpt2-124m", "infer", "bf16", 8, 1024, False, None, "sdpa"),
    ("gpt2-124m", "train", "amp_bf16", 4, 1024, False, "adamw", "eager"),
    ("gpt2-124m", "train", "bf16", 16, 512, False, "sgd", "sdpa"),
]


def main():
    if len(sys.argv) < 3:
        print(__doc__)
        return 2
    measurer, out = sys.argv[1], sys.argv[2]
    filt = sys.argv[3] if len(sys.argv) > 3 else ""
    mp = load_measurer(measurer)
    mp.MODELS, mp.CASES = MODELS, CASES
    from transformers import AutoConfig
    configs = out + ".configs"
    os.makedirs(configs, exist_ok=True)
    for name, (kind, kw) in MODELS.items():
        AutoConfig.for_model(kind, **kw).to_json_file(os.path.join(configs, name + ".json"), use_diff=False)
    sys.argv = [measurer, out] + ([filt] if filt else [])
    mp.main()
    return 0


if __name__ == "__main__":
    sys.exit(main())
