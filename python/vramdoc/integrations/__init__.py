"""Training-loop integrations: a Hugging Face TrainerCallback and a Lightning Callback that mark
steps and evaluation phases for `vramdoc run`, and at an out-of-memory error say which verdict
and remedies apply (docs/python.md).

    from vramdoc.integrations.huggingface import VramdocCallback   # needs transformers
    from vramdoc.integrations.lightning import VramdocCallback     # needs lightning
"""
from vramdoc.integrations._oom import OomAdvisor, is_out_of_memory

__all__ = ["OomAdvisor", "is_out_of_memory"]
