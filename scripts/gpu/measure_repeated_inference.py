#!/usr/bin/env python3
"""How a CNN's inference peak changes from the first batch to later ones (issue 28, 2026-12-03): a fresh process per
model builds it from a record set's model file (tests/data/estimator/SET.models/MODEL.image-cls.json), runs FORWARDS
no_grad forwards of the same batch, and prints peak allocated / reserved after each (torch.cuda.reset_peak_memory_stats
between them), then NVML's process number.

Usage: python3 measure_repeated_inference.py SET MODEL BATCH IMAGE [FORWARDS=3]"""
import json
import os
import subprocess
import sys

import torch
import transformers


def main(argv):
    data, model_name, batch, image = argv[1], argv[2], int(argv[3]), int(argv[4])
    forwards = int(argv[5]) if len(argv) > 5 else 3
    here = os.path.dirname(os.path.abspath(__file__))
    path = os.path.join(here, "..", "..", "tests", "data", "estimator", f"{data}.models", f"{model_name}.image-cls.json")
    info = json.load(open(path))
    cfg = transformers.AutoConfig.for_model(info["model_type"], **{k: v for k, v in info["config"].items() if k != "model_type"})
    with torch.device("cuda"):
        model = transformers.AutoModelForImageClassification.from_config(cfg, dtype=torch.bfloat16)
    model.eval()
    x = torch.randn(batch, 3, image, image, device="cuda", dtype=torch.bfloat16)
    rows = []
    for i in range(forwards):
        torch.cuda.reset_peak_memory_stats()
        with torch.no_grad():
            out = model(pixel_values=x)
        torch.cuda.synchronize()
        rows.append(dict(forward=i + 1, peak_allocated=torch.cuda.max_memory_allocated(),
                         peak_reserved=torch.cuda.max_memory_reserved(), allocated_after=torch.cuda.memory_allocated()))
    del out
    smi = subprocess.run(["nvidia-smi", "--query-compute-apps=pid,used_memory", "--format=csv,noheader,nounits"],
                         capture_output=True, text=True).stdout
    used = [int(l.split(",")[1]) for l in smi.splitlines() if l.split(",")[0].strip() == str(os.getpid())]
    print(json.dumps(dict(model=model_name, batch=batch, image=image, forwards=rows, nvml_mib=used[0] if used else None)))


if __name__ == "__main__":
    sys.exit(main(sys.argv))
