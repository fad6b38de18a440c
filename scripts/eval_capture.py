#!/usr/bin/env python3
"""The capture's accuracy: `vramdoc estimate --from-trace` on each case's captured trace against the
same job measured on the GPU (scripts/gpu/measure_capture.py's OUTDIR), per kind and per split.
  python3 scripts/eval_capture.py OUTDIR [--binary build/vramdoc] [--real DIR]... [--rows] [--held-out] [--worst]
Without --held-out the held-out and fresh held-out cases are left out of everything (tune on dev only;
look once, at the end). A case's real run is OUTDIR/real/ID.json, else DIR/real/ID.json or DIR/ID.json of
the first --real DIR that has it (an earlier round's real runs beside this round's captures).
--worst adds, per kind and split, the cases and the worst |error| of peak allocated / process total.
Errors are (estimate - measured) / measured; the bar (issue 27): peak allocated median |error| <= 1 %,
p95 <= 3 %; the driver's process total median <= 2 %, p95 <= 6 %."""
import json
import os
import subprocess
import sys

KINDS = [("deit", "ViT/Swin"), ("resnet", "CNN"), ("vgg", "CNN"), ("convnext", "CNN"), ("efficientnet", "CNN"), ("densenet", "CNN"),
         ("mobilenet", "CNN"), ("regnet", "CNN"), ("vit_", "ViT/Swin"), ("swin", "ViT/Swin"), ("bert", "BERT"),
         ("roberta", "BERT"), ("t5", "encoder-decoder"), ("bart", "encoder-decoder"), ("whisper", "encoder-decoder"),
         ("gan.py", "GAN"), ("unet.py", "UNet"), ("-lora", "LLM + LoRA"), ("--model llama ", "LLM"),
         ("encoder.py", "encoder (plain)")]


SPLITS = ("dev", "held-out", "fresh", "fresh2")


def kind_of(case):
    text = case["job"] + " " + case["args"] + " "
    return next((k for pattern, k in KINDS if pattern in text), "other")


def percentile(values, q):
    v = sorted(values)
    if not v:
        return float("nan")
    i = (len(v) - 1) * q
    lo = int(i)
    return v[lo] + (v[min(lo + 1, len(v) - 1)] - v[lo]) * (i - lo)


def main():
    out = sys.argv[1]
    binary = sys.argv[sys.argv.index("--binary") + 1] if "--binary" in sys.argv else "build/vramdoc"
    real_dirs = [os.path.join(out, "real")] + [d for i, a in enumerate(sys.argv[:-1]) if a == "--real"
                                                for d in (os.path.join(sys.argv[i + 1], "real"), sys.argv[i + 1])]
    cases = json.load(open(os.path.join(out, "cases.json")))
    rows = []
    for c in cases:
        if c["split"] != "dev" and "--held-out" not in sys.argv:
            continue
        real_path = next((p for p in (os.path.join(d, c["id"] + ".json") for d in real_dirs) if os.path.exists(p)), None)
        trace = os.path.join(out, "capture", c["id"] + ".trace")
        if real_path is None or not os.path.exists(trace):
            continue
        real = json.load(open(real_path))
        if real.get("error") or not real.get("driver_process_used"):
            continue
        res = subprocess.run([binary, "estimate", "--from-trace", trace, "--json", "--gpu", "H200"],
                             capture_output=True, text=True)
        try:
            est = json.loads(res.stdout)
        except json.JSONDecodeError:
            print(c["id"], "no estimate:", res.stderr.strip()[:200])
            continue
        if est["capture"]["incomplete"]:
            print(c["id"], "capture incomplete:", est["capture"]["incomplete"][:200])
            continue
        err = lambda e, m: 100.0 * (e - m) / m  # noqa: E731
        rows.append(dict(id=c["id"], split=c["split"], kind=kind_of(c), args=c["args"],
                         alloc=(est["peak_allocated_bytes"], real["peak_allocated"]),
                         reserved=(est["peak_reserved_bytes"], real["peak_reserved"]),
                         process=(est["process_bytes"], real["driver_process_used"]),
                         e_alloc=err(est["peak_allocated_bytes"], real["peak_allocated"]),
                         e_reserved=err(est["peak_reserved_bytes"], real["peak_reserved"]),
                         e_process=err(est["process_bytes"], real["driver_process_used"])))
    gib = lambda b: b / 2**30  # noqa: E731
    if "--rows" in sys.argv:
        print("| case | split | kind | job | allocated GiB est / real | error | reserved | error | process | error |")
        print("|---|---|---|---|---|---|---|---|---|---|")
        for r in rows:
            print("| %s | %s | %s | `%s` | %.2f / %.2f | %+.1f %% | %.2f / %.2f | %+.1f %% | %.2f / %.2f | %+.1f %% |" % (
                r["id"], r["split"], r["kind"], r["args"], gib(r["alloc"][0]), gib(r["alloc"][1]), r["e_alloc"],
                gib(r["reserved"][0]), gib(r["reserved"][1]), r["e_reserved"], gib(r["process"][0]), gib(r["process"][1]),
                r["e_process"]))
        print()
    print("| set | cases | allocated median / p95 |error| % | reserved median / p95 % | process median / p95 % |")
    print("|---|---|---|---|---|")
    groups = [("all", rows)] + [(split, [r for r in rows if r["split"] == split]) for split in SPLITS]
    groups += [(k, [r for r in rows if r["kind"] == k]) for k in sorted({r["kind"] for r in rows})]
    for name, g in groups:
        if not g:
            continue
        stat = lambda key: "%.2f / %.2f" % (percentile([abs(r[key]) for r in g], 0.5), percentile([abs(r[key]) for r in g], 0.95))  # noqa: E731
        print("| %s | %d | %s | %s | %s |" % (name, len(g), stat("e_alloc"), stat("e_reserved"), stat("e_process")))
    if "--worst" in sys.argv:
        splits = [s for s in SPLITS if any(r["split"] == s for r in rows)]
        print()
        print("| kind | " + " | ".join(splits) + " |")
        print("|---|" + "---|" * len(splits))
        for k in sorted({r["kind"] for r in rows}):
            cells = []
            for s in splits:
                g = [r for r in rows if r["kind"] == k and r["split"] == s]
                cells.append("%d: %.1f / %.1f" % (len(g), max(abs(r["e_alloc"]) for r in g), max(abs(r["e_process"]) for r in g))
                             if g else "-")
            print("| %s | %s |" % (k, " | ".join(cells)))


if __name__ == "__main__":
    main()
