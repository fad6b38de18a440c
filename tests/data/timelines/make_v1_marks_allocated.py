"""Writes issue32_v1_marks_allocated.jsonl: a version-1 timeline whose driver number is flat
(the allocator's cache took 4 GiB in warm-up) while its step marks carry allocated= figures that
rise 64 MiB a step: a leak hidden inside the cache (issue 32, item 3)."""
import json

G = 1 << 30
lines = [json.dumps({"columns": ["t", "process_used", "device_used"], "device": "NVIDIA H200", "interval_s": 0.1,
                     "name": "python3", "total": 150754820096, "vramdoc_timeline": 1})]
for i in range(200):
    t = i * 0.1
    used = 4 * G if i > 5 else int(i / 5 * 4 * G)
    lines.append(json.dumps([round(t, 3), used, used + 600 << 20]))
    if i >= 10 and i % 5 == 0:
        step = (i - 10) // 5
        alloc = 1 * G + step * 64 * (1 << 20)
        lines.append(json.dumps({"mark": f"step {step} allocated={alloc} reserved={4 * G - (1 << 29)}", "t": round(t + 0.01, 3)}))
lines.append(json.dumps({"end": {"exit_status": 0, "outcome": "ok", "t": 20.0}}))
open("issue32_v1_marks_allocated.jsonl", "w").write("\n".join(lines) + "\n")
