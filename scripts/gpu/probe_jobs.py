"""Training jobs for measuring `vramdoc probe` against a card limited to --limit-gib (issue 30).

    python3 probe_jobs.py JOB --batch B [--seq S] [--steps N] [--limit-gib 16]

JOB: bert      BERT-large-shaped encoder (transformers' BertForSequenceClassification from a config:
               24 layers, hidden 1024), sequence 384, AdamW, bf16 autocast
     bert-dyn  the same with random sequence lengths: each batch padded to its longest sample,
               lengths uniform in 64..seq (seeded: every run draws the same batches)
     cnn       torchvision ResNet-50 at 224 x 224, AdamW, bf16 autocast
     llama     a Llama-shaped decoder (transformers' LlamaForCausalLM from a config: 16 layers,
               hidden 1024, vocabulary 32000, ~0.3 B parameters), sequence 1024, AdamW, bf16 autocast
The card is limited with torch.cuda.set_per_process_memory_fraction(limit / total). AdamW makes its
state at the first step (lazily), so memory rises after step 0. Prints "step N" after each step;
a CUDA out-of-memory error ends the job with PyTorch's message and exit status 1.
Built from configs: no downloads. Also imported by probe_anchors.py (the same jobs).
"""
import argparse
import random
import sys

import torch

GIB = 1 << 30


def limit_card(limit_gib):
    total = torch.cuda.get_device_properties(0).total_memory
    torch.cuda.set_per_process_memory_fraction(min(1.0, limit_gib * GIB / total))


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
    elif job == "cnn":
        import torchvision

        model = torchvision.models.resnet50(num_classes=1000)

        def batch(b, step):
            g = torch.Generator().manual_seed(step)
            return {"x": torch.randn(b, 3, 224, 224, generator=g), "labels": torch.randint(0, 1000, (b,), generator=g)}
    else:
        raise SystemExit("unknown job %r: bert, bert-dyn, cnn, llama" % job)
    return model, batch


def loss_of(job, model, inputs):
    if job == "cnn":
        return torch.nn.functional.cross_entropy(model(inputs["x"]), inputs["labels"])
    return model(**inputs).loss


def to_cuda(inputs):
    return {k: v.cuda(non_blocking=True) for k, v in inputs.items()}


def main():
    p = argparse.ArgumentParser()
    p.add_argument("job")
    p.add_argument("--batch", type=int, required=True)
    p.add_argument("--seq", type=int, default=None)
    p.add_argument("--steps", type=int, default=1000)
    p.add_argument("--limit-gib", type=float, default=16)
    a = p.parse_args()
    seq = a.seq or (1024 if a.job == "llama" else 384)
    limit_card(a.limit_gib)
    model, batch = build(a.job, seq)
    model = model.cuda().train()
    opt = torch.optim.AdamW(model.parameters(), lr=1e-5)
    for step in range(a.steps):
        inputs = to_cuda(batch(a.batch, step))
        with torch.autocast("cuda", dtype=torch.bfloat16):
            loss = loss_of(a.job, model, inputs)
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
        print("step %d loss %.4f" % (step, loss.item()), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
