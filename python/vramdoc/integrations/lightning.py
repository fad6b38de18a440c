"""A Lightning `Callback` for vramdoc (needs `lightning`, or the older `pytorch_lightning`).

    from vramdoc.integrations.lightning import VramdocCallback
    trainer = lightning.Trainer(..., callbacks=[VramdocCallback()])

Under `vramdoc run` it marks the end of every optimizer step (trainer.global_step once it has
advanced: steps 1, 2, ..., once per step also with gradient accumulation) and the validation phases ("eval begin" / "eval end"); at an out-of-memory error
(Lightning's on_exception) it prints vramdoc's verdict and remedies.
"""
from __future__ import annotations

from typing import Optional

try:
    from lightning.pytorch.callbacks import Callback
except ImportError:  # the package before its 2.0 rename
    from pytorch_lightning.callbacks import Callback

from vramdoc._marks import claim_steps, mark, mark_step
from vramdoc.integrations._oom import OomAdvisor


class VramdocCallback(Callback):
    """Marks steps and validation phases; diagnoses an out-of-memory error (see the module)."""

    def __init__(self, advisor: Optional[OomAdvisor] = None):
        super().__init__()
        self.advisor = advisor or OomAdvisor()
        claim_steps()
        self._last_step = 0

    def on_train_start(self, trainer, pl_module):
        # A resumed run starts at its checkpoint's step: only steps taken from here on are marked.
        self._last_step = trainer.global_step

    def on_train_batch_end(self, trainer, pl_module, outputs, batch, batch_idx):
        # trainer.global_step counts the optimizer steps taken; with gradient accumulation several
        # batches make one step: mark each step once, when it has been taken (as the HF callback does).
        step = trainer.global_step
        if step > self._last_step:
            self._last_step = step
            mark_step(step)
            self.advisor.record_step(step)

    def on_validation_start(self, trainer, pl_module):
        mark("eval begin")

    def on_validation_end(self, trainer, pl_module):
        mark("eval end")

    def on_exception(self, trainer, pl_module, exception):
        self.advisor.report(exception)
