"""vramdoc from Python: will it fit, is it a leak (docs/python.md).

The functions run the vramdoc binary installed with this package and return what its --json
prints, as dicts, so `vramdoc.estimate(...)` is exactly `vramdoc estimate --json ...`:

    import vramdoc
    report = vramdoc.estimate(config="meta-llama/Llama-3.1-8B", mode="lora", batch=4, seq=2048)
    print(report["process_bytes"])
    verdict = vramdoc.analyze("timeline.jsonl")["verdict"]
    verdict = vramdoc.analyze(torch.cuda.memory._snapshot())["verdict"]  # the snapshot as torch gives it

`vramdoc.estimate_step(step, setup=build)` captures a training step of your own code on the CPU
with CUDA faked, as `vramdoc estimate -- python train.py` does (docs/estimator.md).

Inside a job started by `vramdoc run`, `vramdoc.mark_step()` marks the end of a training step
(cheap enough to call every step; it does nothing outside `vramdoc run`).
"""
from vramdoc._api import (VramdocArgumentError, VramdocError, VramdocValueError, analyze, binary_path, estimate,
                          run_json, version)
from vramdoc._estimate_step import estimate_step
from vramdoc._marks import mark, mark_step

__all__ = ["VramdocArgumentError", "VramdocError", "VramdocValueError", "analyze", "binary_path", "estimate",
           "estimate_step", "mark", "mark_step", "run_json", "version"]
