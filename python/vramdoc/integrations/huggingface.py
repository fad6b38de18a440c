"""A Hugging Face `transformers.TrainerCallback` for vramdoc (needs transformers).

    from vramdoc.integrations.huggingface import VramdocCallback
    trainer = Trainer(..., callbacks=[VramdocCallback()])

Under `vramdoc run` it marks the end of every optimizer step (state.global_step) and the
evaluation phases ("eval begin" / "eval end") in the job's timeline; at an out-of-memory error
that ends training it prints vramdoc's verdict and remedies. Outside `vramdoc run` the marks cost
nothing and the verdict comes from the step-end readings the callback kept.
"""
from __future__ import annotations

import sys
from typing import Any, Optional

from transformers import TrainerCallback

from vramdoc._marks import claim_steps, mark, mark_step
from vramdoc.integrations._oom import OomAdvisor


class VramdocCallback(TrainerCallback):
    """Marks steps and evaluation phases; diagnoses an out-of-memory error (see the module)."""

    def __init__(self, advisor: Optional[OomAdvisor] = None):
        self.advisor = advisor or OomAdvisor()
        claim_steps()
        self._in_eval = False
        self._previous_hook: Any = None

    def _excepthook(self, kind, error, traceback):  # Trainer has no exception callback: the hook sees the OOM
        self.advisor.report(error)
        (self._previous_hook or sys.__excepthook__)(kind, error, traceback)

    def on_train_begin(self, args, state, control, **kwargs):
        if self._previous_hook is None:
            self._previous_hook = sys.excepthook
            sys.excepthook = self._excepthook

    def on_train_end(self, args, state, control, **kwargs):
        if self._previous_hook is not None and sys.excepthook == self._excepthook:
            sys.excepthook = self._previous_hook
        self._previous_hook = None

    def on_step_end(self, args, state, control, **kwargs):
        if self._in_eval:
            mark("eval end")
            self._in_eval = False
        mark_step(state.global_step)
        self.advisor.record_step(state.global_step)

    def on_prediction_step(self, args, state, control, **kwargs):
        if not self._in_eval:
            self._in_eval = True
            mark("eval begin")

    def on_evaluate(self, args, state, control, **kwargs):
        if self._in_eval:
            self._in_eval = False
        mark("eval end")
