#!/usr/bin/env python3
"""Converts a recording of the h15b GPU request (2026-11-30, docs/results/step-hook-two-ranks-h200-2026-11-30/) into our timeline
format, version 2 (docs/timeline-format.md), as `vramdoc run` writes it:
  NAME.nvml.jsonl[.gz]  per-process, per-GPU NVML samples every 20 ms (nvml_sampler.py, pynvml),
                    with each process's command name and RANK / LOCAL_RANK from /proc
  NAME.marks        the marker lines vramdoc's step hook wrote in each rank (no times)
  TRUTH/truth.R.jsonl  each rank's own log of its steps (t_unix after each step)
The marks get the times of the ranks' own step logs (a few ms after the hook ran: after the
step's CUDA sync) and the hook's figures; unchanged ticks are left out as vramdoc's tick writer
does (heartbeat 1 s, each level's last tick kept).
Usage: nvml_to_timeline.py NAME.nvml.jsonl NAME.marks TRUTH_DIR OUT.jsonl COMMAND..."""
import glob, gzip, json, os, sys

nvml, marks_path, truth_dir, out_path, command = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4], sys.argv[5:]
rows = [json.loads(l) for l in (gzip.open(nvml, "rt") if nvml.endswith(".gz") else open(nvml))]
header = rows[0]["header"]
start = header["start_unix"]
info = {r["process"]["pid"]: r["process"] for r in rows if "process" in r}
ticks = [r for r in rows if "t_unix" in r]
gpus = header["gpus"]
capacity = {g["index"]: g["total"] for g in gpus}


def dump(v):
    return json.dumps(v, separators=(",", ":"), sort_keys=True) + "\n"


out = [dump({"vramdoc_timeline": 2, "name": os.path.basename(command[0]), "host": header["host"],
             "start_unix_s": round(start, 6), "device": gpus[0]["name"], "total": None,
             "gpus": [{"index": g["index"], "uuid": g["uuid"], "pci_bus_id": g["pci_bus_id"], "name": g["name"],
                       "total": g["total"]} for g in gpus],
             "columns": ["t", "process_used", "device_used", "series", "gpu_used"], "command": command,
             "interval_s": header["interval_s"], "heartbeat_s": 1.0})]
ids, timed = {}, []
written = held = None
used_gpus = set()


def row_line(r):
    return dump([r[0], r[1], r[2], r[3], r[4]])


for k in ticks:
    t = round(k["t_unix"] - start, 4)
    declared = []
    for pid, gpu, used in k["procs"]:
        if (pid, gpu) not in ids:
            ids[(pid, gpu)] = len(ids)
            p = info.get(pid, {})
            rank = p.get("RANK")
            local = p.get("LOCAL_RANK")
            declared.append(dump({"series": {"id": ids[(pid, gpu)], "pid": pid, "gpu": gpu,
                                             "rank": int(rank) if rank and rank.isdigit() else None,
                                             "local_rank": int(local) if local and local.isdigit() else None,
                                             "command": p.get("comm", "")}}))
    series = [0] * len(ids)
    for pid, gpu, used in k["procs"]:
        series[ids[(pid, gpu)]] += used
        used_gpus.add(gpu)
    on = [g for g, _ in k["gpus"] if not used_gpus or g in used_gpus]
    row = (t, sum(series), sum(u for g, u in k["gpus"] if g in on), series, [u for _, u in k["gpus"]])
    same = written is not None and row[1:] == written[1:]
    if not declared and same and t - written[0] < 1.0:
        held = row
        continue
    chunk = ""
    if held is not None and held[1:] != row[1:]:
        chunk += row_line(held)
    held = None
    chunk += "".join(declared) + row_line(row)
    timed.append((t, chunk))
    written = row
if held is not None:
    timed.append((held[0], row_line(held)))
times = {}
for f in glob.glob(os.path.join(truth_dir, "truth.*.jsonl")):
    for l in open(f):
        s = json.loads(l)
        times[(s["pid"], s["step"])] = round(s["t_unix"] - start, 4)
for line in open(marks_path):
    fields = line.split()
    kv = dict(f.split("=", 1) for f in fields[2:])
    pid, step = int(kv["pid"]), int(fields[1])
    t = times[(pid, step)]
    timed.append((t, dump({"t": t, "mark": "step %d" % step, "pid": pid, "allocated": int(kv["allocated"]),
                           "reserved": int(kv["reserved"])})))
timed.sort(key=lambda x: x[0])  # stable: a tick's series lines stay before its sample
end = timed[-1][0]
out += [c for _, c in timed]
out.append(dump({"end": {"t": end, "outcome": "ok", "exit_status": 0, "total": sum(capacity[g] for g in used_gpus)}}))
open(out_path, "w").write("".join(out))
