"""Per-process, per-GPU NVML samples every --interval s until the file --stop exists (h15b's
fallback recorder): JSON lines {"t_unix", "gpus": [[index, used]], "procs": [[pid, gpu, used]]},
a header with each GPU's uuid, PCI bus id, name and total, and a line per new pid with its
command name and rank variables (/proc/PID/environ)."""
import json, os, sys, time

import pynvml

out, stop, interval = sys.argv[1], sys.argv[2], float(sys.argv[3]) if len(sys.argv) > 3 else 0.02
pynvml.nvmlInit()
n = pynvml.nvmlDeviceGetCount()
handles = [pynvml.nvmlDeviceGetHandleByIndex(i) for i in range(n)]


def text(v):
    return v.decode() if isinstance(v, bytes) else str(v)


seen = set()
with open(out, "w") as f:
    gpus = []
    for i, h in enumerate(handles):
        gpus.append({"index": i, "uuid": text(pynvml.nvmlDeviceGetUUID(h)), "pci_bus_id": text(pynvml.nvmlDeviceGetPciInfo(h).busId),
                     "name": text(pynvml.nvmlDeviceGetName(h)), "total": pynvml.nvmlDeviceGetMemoryInfo(h).total})
    f.write(json.dumps({"header": {"host": os.uname().nodename, "start_unix": time.time(), "interval_s": interval, "gpus": gpus}}) + "\n")
    while not os.path.exists(stop):
        t = time.time()
        procs, used = [], []
        for i, h in enumerate(handles):
            used.append([i, pynvml.nvmlDeviceGetMemoryInfo(h).used])
            for p in pynvml.nvmlDeviceGetComputeRunningProcesses(h):
                procs.append([p.pid, i, p.usedGpuMemory])
                if p.pid not in seen:
                    seen.add(p.pid)
                    info = {"pid": p.pid}
                    try:
                        info["comm"] = open("/proc/%d/comm" % p.pid).read().strip()
                        env = dict(kv.split("=", 1) for kv in open("/proc/%d/environ" % p.pid).read().split("\0") if "=" in kv)
                        info.update({k: env[k] for k in ("RANK", "LOCAL_RANK", "WORLD_SIZE", "CUDA_VISIBLE_DEVICES") if k in env})
                    except OSError as e:
                        info["error"] = str(e)
                    f.write(json.dumps({"process": info}) + "\n")
        f.write(json.dumps({"t_unix": round(t, 4), "gpus": used, "procs": procs}) + "\n")
        f.flush()
        time.sleep(max(0.0, interval - (time.time() - t)))
