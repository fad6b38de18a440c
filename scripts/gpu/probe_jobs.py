"""Training jobs for measuring `vramdoc probe` against a card limited to --limit-gib (issue 30).

    python3 probe_jobs.py JOB --batch B [--seq S] [--steps N] [--limit-gib 16]

JOB: bert      BERT-large-shaped encoder (transformers' BertForSequenceClassification from a config:
               24 layers, hidden 1024), sequence 384, AdamW, bf16 autocast
     bert-dyn  the same with random sequence lengths: each batch padded to its longest sample,
               lengths uniform in 64..seq (seeded: every run draws the same batches)
     cnn       torchvision ResNet-50 at 224 x 224, AdamW, bf16 autocast
     llama     a Llama-shaped decoder (transformers' LlamaForCausalLM from a config: 16 layers,
               hidden 1024, vocabulary 32000, ~0.3 B parameters), sequence 1024, AdamW, bf16 autocast
     vit       torchvision ViT-B/16 at 224 x 224 (86 M parameters, 197 tokens), AdamW, bf16 autocast
               (held out in round 3: a vision transformer, not measured before)
     gpt2m     a GPT-2-medium-shaped decoder (transformers' GPT2LMHeadModel from a config: 24 layers,
               hidden 1024, vocabulary 50257, ~0.35 B parameters, tied head), sequence 512, AdamW,
               bf16 autocast (held out in round 3)
     t5        a T5-base-shaped encoder-decoder (transformers' T5ForConditionalGeneration from a config:
               12 + 12 layers, d_model 768, vocabulary 32128), source 512 and target 128 tokens, AdamW,
               bf16 autocast (held out in round 6: an encoder-decoder, not measured by probe before)
     effnet    torchvision EfficientNet-B0 at 224 x 224 (depthwise convolutions, SiLU, squeeze-excite),
               AdamW, bf16 autocast (held out in round 6)
     qwen-dyn  a Qwen2-shaped decoder (transformers' Qwen2ForCausalLM from a config: 12 layers, hidden
               1024, 16 heads, 4 key/value heads, vocabulary 151936) on batches of random lengths
               (uniform in 128..seq per step, seeded; seq 512): dynamic shapes in a decoder (held out
               in round 6)
     swin      torchvision Swin-T at 224 x 224 (shifted-window attention over four stages, 28 M parameters),
               AdamW, bf16 autocast (held out in round 7, 2026-12-03)
     mistral-gc a Mistral-shaped decoder (transformers' MistralForCausalLM from a config: 8 layers, hidden
               1536, 12 heads, 4 key/value heads, vocabulary 32000, sliding window 1024) with gradient
               checkpointing, sequence 2048, AdamW, bf16 autocast (held out in round 7)
The card is limited with torch.cuda.set_per_process_memory_fraction(limit / total): --limit-gib, or
--limit-bytes (the allocator's bytes exactly), or none with --limit-gib 0 (vramdoc probe
--gpu-memory caps the job itself). --device cpu: a dry run without a GPU (no limit). AdamW makes its
state at the first step (lazily), so memory rises after step 0. Prints "step N" after each step;
a CUDA out-of-memory error ends the job with PyTorch's message and exit status 1.
Built from configs: no downloads. Also imported by probe_anchors.py (the same jobs).
"""
import argparse
import random
import sys

import torch

GIB = 1 << 30
JOBS = ("bert", "bert-dyn", "cnn", "llama", "vit", "gpt2m", "t5", "effnet", "qwen-dyn", "swin", "mistral-gc")
# The sequence each job runs unless --seq says otherwise.
DEFAULT_SEQ = {"llama": 1024, "gpt2m": 512, "t5": 512, "qwen-dyn": 512, "mistral-gc": 2048}


def limit_card(limit_gib=0.0, limit_bytes=0, device="cuda"):
    """Caps the allocator at limit_bytes, else limit_gib GiB; nothing when both are 0 or on the CPU."""
    limit = limit_bytes or int(limit_gib * GIB)
    if device != "cuda" or limit <= 0:
        return
    total = torch.cuda.get_device_properties(0).total_memory
    torch.cuda.set_per_process_memory_fraction(min(1.0, limit / total))


def build(job, seq):
    """The model and a function batch(batch_size, step) -> (inputs dict or tensor, labels)."""
    torch.manual_seed(0)
    if job in ("bert", "bert-dyn"):
        from transformers import BertConfig, BertForSequenceClassification

        config = BertConfig(hidden_size=1024, num_hidden_layers=24, num_attention_heads=16, intermediate_size=4096,
                            max_position_embeddings=512, num_labels=2)
        model = BertForSequenceClassification(config)

        def batch(b, step):
            rng = random.Random(step)
            length = rng.randint(64, seq) if job == "bert-dyn" else seq
            g = torch.Generator().manual_seed(step)
            ids = torch.randint(0, config.vocab_size, (b, length), generator=g)
            mask = torch.ones(b, length, dtype=torch.long)
            if job == "bert-dyn":  # each sample its own length, the batch padded to the longest
                for i in range(b):
                    mask[i, rng.randint(16, length):] = 0
            labels = torch.randint(0, 2, (b,), generator=g)
            return {"input_ids": ids, "attention_mask": mask, "labels": labels}
    elif job == "llama":
        from transformers import LlamaConfig, LlamaForCausalLM

        config = LlamaConfig(hidden_size=1024, intermediate_size=2816, num_hidden_layers=16, num_attention_heads=16,
                             num_key_value_heads=16, vocab_size=32000, max_position_embeddings=4096)
        model = LlamaForCausalLM(config)

        def batch(b, step):
            g = torch.Generator().manual_seed(step)
            ids = torch.randint(0, config.vocab_size, (b, seq), generator=g)
            return {"input_ids": ids, "labels": ids}
    elif job == "gpt2m":
        from transformers import GPT2Config, GPT2LMHeadModel

        config = GPT2Config(n_embd=1024, n_layer=24, n_head=16, n_positions=1024, vocab_size=50257)
        model = GPT2LMHeadModel(config)

        def batch(b, step):
            g = torch.Generator().manual_seed(step)
            ids = torch.randint(0, config.vocab_size, (b, seq), generator=g)
            return {"input_ids": ids, "labels": ids}
    elif job == "t5":
        from transformers import T5Config, T5ForConditionalGeneration

        config = T5Config(d_model=768, d_ff=3072, d_kv=64, num_heads=12, num_layers=12, num_decoder_layers=12,
                          vocab_size=32128, decoder_start_token_id=0)
        model = T5ForConditionalGeneration(config)

        def batch(b, step):
            g = torch.Generator().manual_seed(step)
            ids = torch.randint(0, config.vocab_size, (b, seq), generator=g)
            return {"input_ids": ids, "labels": torch.randint(0, config.vocab_size, (b, 128), generator=g)}
    elif job == "qwen-dyn":
        from transformers import Qwen2Config, Qwen2ForCausalLM

        config = Qwen2Config(hidden_size=1024, intermediate_size=2816, num_hidden_layers=12, num_attention_heads=16,
                             num_key_value_heads=4, vocab_size=151936, max_position_embeddings=4096)
        model = Qwen2ForCausalLM(config)

        def batch(b, step):
            length = random.Random(step).randint(128, seq)  # each step its own length (seeded)
            g = torch.Generator().manual_seed(step)
            ids = torch.randint(0, config.vocab_size, (b, length), generator=g)
            return {"input_ids": ids, "labels": ids}
    elif job == "mistral-gc":
        from transformers import MistralConfig, MistralForCausalLM

        config = MistralConfig(hidden_size=1536, intermediate_size=4096, num_hidden_layers=8, num_attention_heads=12,
                               num_key_value_heads=4, vocab_size=32000, max_position_embeddings=4096, sliding_window=1024)
        model = MistralForCausalLM(config)
        model.gradient_checkpointing_enable()

        def batch(b, step):
            g = torch.Generator().manual_seed(step)
            ids = torch.randint(0, config.vocab_size, (b, seq), generator=g)
            return {"input_ids": ids, "labels": ids}
    elif job == "swin":
        import torchvision

        model = torchvision.models.swin_t(num_classes=1000)

        def batch(b, step):
            g = torch.Generator().manual_seed(step)
            return {"x": torch.randn(b, 3, 224, 224, generator=g), "labels": torch.randint(0, 1000, (b,), generator=g)}
    elif job == "effnet":
        import torchvision

        model = torchvision.models.efficientnet_b0(num_classes=1000)

        def batch(b, step):
            g = torch.Generator().manual_seed(step)
            return {"x": torch.randn(b, 3, 224, 224, generator=g), "labels": torch.randint(0, 1000, (b,), generator=g)}
    elif job == "vit":
        import torchvision

        model = torchvision.models.vit_b_16(num_classes=1000)

        def batch(b, step):
            g = torch.Generator().manual_seed(step)
            return {"x": torch.randn(b, 3, 224, 224, generator=g), "labels": torch.randint(0, 1000, (b,), generator=g)}
    elif job == "cnn":
        import torchvision

        model = torchvision.models.resnet50(num_classes=1000)

        def batch(b, step):
            g = torch.Generator().manual_seed(step)
            return {"x": torch.randn(b, 3, 224, 224, generator=g), "labels": torch.randint(0, 1000, (b,), generator=g)}
    else:
        raise SystemExit("unknown job %r: %s" % (job, ", ".join(JOBS)))
    return model, batch


def loss_of(job, model, inputs):
    if job in ("cnn", "vit", "effnet", "swin"):
        return torch.nn.functional.cross_entropy(model(inputs["x"]), inputs["labels"])
    return model(**inputs).loss


def to_device(inputs, device="cuda"):
    return {k: v.to(device, non_blocking=True) for k, v in inputs.items()}


def autocast(device):
    return torch.autocast(device, dtype=torch.bfloat16)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("job")
    p.add_argument("--batch", type=int, required=True)
    p.add_argument("--seq", type=int, default=None)
    p.add_argument("--steps", type=int, default=1000)
    p.add_argument("--limit-gib", type=float, default=16)
    p.add_argument("--limit-bytes", type=int, default=0)
    p.add_argument("--device", default="cuda", choices=["cuda", "cpu"])
    a = p.parse_args()
    seq = a.seq or DEFAULT_SEQ.get(a.job, 384)
    limit_card(a.limit_gib, a.limit_bytes, a.device)
    model, batch = build(a.job, seq)
    model = model.to(a.device).train()
    opt = torch.optim.AdamW(model.parameters(), lr=1e-5)
    for step in range(a.steps):
        inputs = to_device(batch(a.batch, step), a.device)
        with autocast(a.device):
            loss = loss_of(a.job, model, inputs)
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
        print("step %d loss %.4f" % (step, loss.item()), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
