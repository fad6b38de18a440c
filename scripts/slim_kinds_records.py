#!/usr/bin/env python3
"""Turns a round of issue 28's raw GPU output (measure_estimator_kinds*.py: kinds-measure.jsonl and
models/*.json) into the tests' data, tests/data/estimator/NAME.jsonl and NAME.models/, slimmed as
tests/data/README.md says: per-phase, memory_stats, step, trace and config fields left out of the
records, the max-batch trials' own records left out (each scenario's summary keeps their outcomes),
error messages cut to 120 characters, compact JSON; model files without their tensor and buffer
lists, a label map of more than 100 classes replaced by its count (num_labels).

Usage: scripts/slim_kinds_records.py OUT_NAME RAW_DIR [RAW_DIR...]
  (a later RAW_DIR's records are appended with their case ids and scenario numbers prefixed by
  'rN-', N its position: a re-run's ids start at 000 again)"""
import json
import os
import sys

DROPPED = {"alloc_conf", "config", "driver_after_build", "experts_implementation", "memory_fraction", "phases", "quant",
           "reserved_end", "stats", "steps", "tb", "trace", "trace_frames", "wall", "weights_allocated"}


def slim_record(r, prefix):
    r = {k: v for k, v in r.items() if k not in DROPPED}
    if isinstance(r.get("message"), str):
        r["message"] = r["message"][:120]
    if prefix and "case_id" in r:
        r["case_id"] = prefix + r["case_id"]
    if prefix and "scenario" in r:
        r["scenario"] = f"{prefix}{r['scenario']}"
    return r


def slim_model(m):
    m = {k: v for k, v in m.items() if k not in ("tensors", "buffers")}
    cfg = m.get("config", {})
    for key in ("id2label", "label2id"):
        if isinstance(cfg.get(key), dict) and len(cfg[key]) > 100:
            cfg["num_labels"] = len(cfg.pop(key))
    return m


def main(argv):
    if len(argv) < 3:
        print(__doc__)
        return 2
    name, raws = argv[1], argv[2:]
    here = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "data", "estimator")
    models_out = os.path.join(here, name + ".models")
    os.makedirs(models_out, exist_ok=True)
    lines, env_written = [], False
    for n, raw in enumerate(raws):
        prefix = f"r{n}-" if n else ""
        for line in open(os.path.join(raw, "kinds-measure.jsonl")):
            r = json.loads(line)
            if r.get("kind") == "maxbatch-trial" or (r.get("kind") == "env" and env_written):
                continue
            env_written |= r.get("kind") == "env"
            lines.append(json.dumps(slim_record(r, prefix), separators=(",", ":")))
        for f in sorted(os.listdir(os.path.join(raw, "models"))):
            m = slim_model(json.load(open(os.path.join(raw, "models", f))))
            with open(os.path.join(models_out, f), "w") as out:
                json.dump(m, out, separators=(",", ":"))
    with open(os.path.join(here, name + ".jsonl"), "w") as out:
        out.write("\n".join(lines) + "\n")
    print(f"{len(lines)} records -> tests/data/estimator/{name}.jsonl, models -> {name}.models/")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
