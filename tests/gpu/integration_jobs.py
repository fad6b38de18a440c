"""Real training loops with vramdoc's integrations, for tests/gpu/python_integrations.sh:
`hf` trains a tiny GPT-2 with transformers' Trainer (evaluation every 5 steps), `lightning` a small
network with Lightning (two batches per optimizer step, validation every 4 steps), each with
vramdoc's callback; `hf-oom` asks for far more memory than the card has after a few steps."""
import sys

import torch
from torch.utils.data import Dataset


class Tokens(Dataset):
    def __init__(self, n, seq=64, vocab=512):
        g = torch.Generator().manual_seed(0)
        self.ids = torch.randint(0, vocab, (n, seq), generator=g)

    def __len__(self):
        return len(self.ids)

    def __getitem__(self, i):
        return {"input_ids": self.ids[i], "labels": self.ids[i]}


def huggingface(oom=False):
    from transformers import GPT2Config, GPT2LMHeadModel, Trainer, TrainerCallback, TrainingArguments

    from vramdoc.integrations.huggingface import VramdocCallback

    class Explode(TrainerCallback):  # a step that needs more than the card: PyTorch's OOM error
        def on_step_end(self, args, state, control, **kwargs):
            if state.global_step == 6:
                torch.empty(int(4e12), dtype=torch.uint8, device="cuda")

    model = GPT2LMHeadModel(GPT2Config(n_layer=2, n_embd=128, n_head=4, vocab_size=512, n_positions=64))
    args = TrainingArguments(output_dir="/tmp/vramdoc-hf-job", per_device_train_batch_size=8, max_steps=12,
                             eval_strategy="steps", eval_steps=5, per_device_eval_batch_size=8, report_to=[],
                             save_strategy="no", logging_strategy="no", disable_tqdm=True, use_cpu=False)
    callbacks = [VramdocCallback()] + ([Explode()] if oom else [])
    Trainer(model=model, args=args, train_dataset=Tokens(256), eval_dataset=Tokens(16), callbacks=callbacks).train()


def lightning_loop():
    try:
        import lightning as L
    except ImportError:
        import pytorch_lightning as L
    from torch.utils.data import DataLoader, TensorDataset

    from vramdoc.integrations.lightning import VramdocCallback

    class Net(L.LightningModule):
        def __init__(self):
            super().__init__()
            self.net = torch.nn.Sequential(torch.nn.Linear(256, 1024), torch.nn.ReLU(), torch.nn.Linear(1024, 1))

        def training_step(self, batch, _):
            x, y = batch
            return torch.nn.functional.mse_loss(self.net(x), y)

        def validation_step(self, batch, _):
            x, y = batch
            self.log("val", torch.nn.functional.mse_loss(self.net(x), y))

        def configure_optimizers(self):
            return torch.optim.AdamW(self.parameters(), lr=1e-3)

    data = TensorDataset(torch.randn(512, 256), torch.randn(512, 1))
    trainer = L.Trainer(accelerator="gpu", devices=1, max_steps=10, accumulate_grad_batches=2, val_check_interval=8,
                        limit_val_batches=2, enable_checkpointing=False, logger=False, enable_progress_bar=False,
                        enable_model_summary=False, num_sanity_val_steps=0, callbacks=[VramdocCallback()])
    trainer.fit(Net(), DataLoader(data, batch_size=16), DataLoader(data, batch_size=16))


if __name__ == "__main__":
    {"hf": huggingface, "hf-oom": lambda: huggingface(oom=True), "lightning": lightning_loop}[sys.argv[1]]()
