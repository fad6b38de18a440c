# On a GPU machine: while a small PyTorch job holds memory and keeps GPU 0 busy, `vramdoc watch
# --once --json` agrees with nvidia-smi (GPU memory, utilisation, clocks, power, temperature) and
# per process (PID and used memory); the exporter serves the same numbers, under vramdoc's names
# and dcgm-exporter's (DCGM_FI_DEV_*: MiB, labels UUID / pci_bus_id / modelName as nvidia-smi
# names them). The job carries a
# made-up token on its command line: neither output may show it (docs/security.md).
set -u
nvidia-smi -L >/dev/null 2>&1 || { echo "no NVIDIA GPU (nvidia-smi -L failed): skipped"; exit 77; }
python3 -c "import torch; assert torch.cuda.is_available()" 2>/dev/null || { echo "python3 with CUDA torch not found: skipped"; exit 77; }
dir=$(mktemp -d)
# The job: ~3 GiB held, matmuls for up to 60 s, "ready" once the memory is allocated and busy.
secret=hf_5URYX45jqRO25g3uK5kbAAegiuE8LCAnmu
python3 - --token=$secret >"$dir/job.out" 2>&1 <<'PY' &
import sys, time, torch
hold = torch.empty(3 * 1024**3 // 4, dtype=torch.float32, device="cuda:0")
a = torch.randn(4096, 4096, device="cuda:0")
for _ in range(20): a = a @ a; a = a / a.norm()
torch.cuda.synchronize(); print("ready", flush=True)
end = time.time() + 60
while time.time() < end:
    for _ in range(20): a = a @ a; a = a / a.norm()
    torch.cuda.synchronize()
PY
job=$!
trap 'kill $job 2>/dev/null; wait $job 2>/dev/null; rm -rf "$dir"' EXIT
for _ in $(seq 300); do grep -q ready "$dir/job.out" && break; kill -0 $job 2>/dev/null || break; sleep 0.1; done
grep -q ready "$dir/job.out" || { echo "FAIL: the PyTorch job did not start"; cat "$dir/job.out"; exit 1; }
sleep 2  # utilisation is averaged over the last second or so: let it settle

query=memory.used,memory.total,utilization.gpu,clocks.sm,clocks.mem,power.draw,temperature.gpu
nvidia-smi --id=0 --query-gpu=$query --format=csv,noheader,nounits >"$dir/smi-before.csv"
nvidia-smi --id=0 --query-compute-apps=pid,used_memory --format=csv,noheader,nounits >"$dir/apps.csv"
"$VRAMDOC" watch --once --json --device 0 >"$dir/watch.json" || { echo "FAIL: vramdoc watch --once --json"; exit 1; }
nvidia-smi --id=0 --query-gpu=$query --format=csv,noheader,nounits >"$dir/smi-after.csv"
echo "nvidia-smi: $(cat "$dir/smi-before.csv") / $(cat "$dir/smi-after.csv"); apps: $(tr '\n' ' ' <"$dir/apps.csv")"

python3 - "$dir" "$job" <<'PY' || exit 1
import json, sys
d, job = sys.argv[1], int(sys.argv[2])
MiB = 1024 * 1024
def smi(name):
    return [[float(x) if x.strip() not in ("[N/A]", "N/A") else None for x in open(f"{d}/{name}").read().split(",")]]
before, after = smi("smi-before.csv")[0], smi("smi-after.csv")[0]
g = json.load(open(f"{d}/watch.json"))["gpus"][0]
mine = [g["memory"]["used_bytes"] / MiB, g["memory"]["total_bytes"] / MiB, g["sm_util_percent"], g["sm_clock_mhz"],
        g["mem_clock_mhz"], g["power_watts"], g["temperature_c"]]
names = ["memory.used MiB", "memory.total MiB", "utilization.gpu %", "clocks.sm MHz", "clocks.mem MHz", "power.draw W",
         "temperature.gpu C"]
# Tolerances: memory is exact to the MiB nvidia-smi rounds to (plus what the job may shift
# between the reads); the rest moves between the three reads, so it must lie within the
# range nvidia-smi saw before and after, widened by a margin.
margin = [16, 1, 15, 0.1, 0.02, 0.25, 3]
failures = []
for name, v, lo, hi, m in zip(names, mine, before, after, margin):
    if v is None or lo is None or hi is None:
        failures.append(f"{name}: vramdoc {v}, nvidia-smi {lo} / {hi} (unknown on one side)")
        continue
    lo, hi = min(lo, hi), max(lo, hi)
    slack = m * hi if isinstance(m, float) and m < 1 else m
    ok = lo - slack - 1 <= v <= hi + slack + 1
    print(f"{'ok  ' if ok else 'FAIL'} {name}: vramdoc {v:.1f}, nvidia-smi {lo:g}..{hi:g}")
    if not ok: failures.append(name)
procs = {p["pid"]: p for p in g["processes"]}
apps = [l.split(",") for l in open(f"{d}/apps.csv").read().strip().splitlines() if l.strip()]
for pid, used in ((int(a), None if "N/A" in b else float(b)) for a, b in apps):
    p = procs.get(pid)
    mine_mib = p["used_bytes"] / MiB if p and p["used_bytes"] is not None else None
    # Both unknown (nvidia-smi's [N/A]) agrees; otherwise equal to nvidia-smi's MiB rounding.
    ok = p is not None and (mine_mib == used or (None not in (mine_mib, used) and abs(mine_mib - used) <= 2))
    print(f"{'ok  ' if ok else 'FAIL'} process {pid}: vramdoc {mine_mib} MiB, nvidia-smi {used} MiB")
    if not ok: failures.append(f"process {pid}")
if job not in procs:
    failures.append(f"the PyTorch job {job} is not among vramdoc's processes {sorted(procs)}")
elif not procs[job]["command"] or "python" not in procs[job]["command"]:
    failures.append(f"the job's command line is {procs[job]['command']!r}")
elif "--token=***" not in procs[job]["command"] or "5URYX45jqRO2" in open(f"{d}/watch.json").read():
    failures.append(f"the job's token is not redacted: {procs[job]['command']!r}")
if failures:
    print("FAIL:", "; ".join(failures)); sys.exit(1)
PY

# The exporter on the real driver.
"$VRAMDOC" watch --serve 127.0.0.1:0 --device 0 --interval 200ms 2>"$dir/serve.err" &
server=$!
for _ in $(seq 50); do grep -q "serving http" "$dir/serve.err" && break; sleep 0.1; done
port=$(sed -n 's|.*serving http://127.0.0.1:\([0-9]*\)/metrics.*|\1|p' "$dir/serve.err")
sleep 0.5
curl -sS -f --max-time 5 "http://127.0.0.1:$port/metrics" >"$dir/metrics"; rc=$?
kill $server; wait $server
grep -q '^vramdoc_process_memory_used_bytes{gpu="0",uuid="GPU-[^"]*",pid="'$job'"} [1-9]' "$dir/metrics" ||
  { echo "FAIL: /metrics (curl exit $rc) lacks the job's memory"; head -40 "$dir/metrics"; exit 1; }
grep -q 'pid="'$job'",user="[^"]*",executable="python3",container=' "$dir/metrics" ||
  { echo "FAIL: /metrics lacks the job's executable"; grep vramdoc_process_info "$dir/metrics"; exit 1; }
grep -q "5URYX45jqRO2" "$dir/metrics" && { echo "FAIL: /metrics shows the job's token"; exit 1; }
nvidia-smi --id=0 --query-gpu=memory.used,memory.free,temperature.gpu,uuid,pci.bus_id,name \
  --format=csv,noheader,nounits >"$dir/smi-dcgm.csv"

# dcgm-exporter's names beside vramdoc's: the same labels and units as NVIDIA's exporter.
python3 - "$dir" <<'PY' || exit 1
import re, sys
d = sys.argv[1]
used, free, temp, uuid, bus, name = [x.strip() for x in open(f"{d}/smi-dcgm.csv").read().split(",")]
metrics = open(f"{d}/metrics").read()
def sample(metric):
    m = re.search(r"^" + metric + r"\{([^}]*)\} (\S+)$", metrics, re.M)
    return (dict(re.findall(r'(\w+)="([^"]*)"', m.group(1))), float(m.group(2))) if m else (None, None)
failures = []
if not re.search(r"^vramdoc_up 1$", metrics, re.M): failures.append("vramdoc_up is not 1")
labels, fb_used = sample("DCGM_FI_DEV_FB_USED")
if labels is None:
    print("FAIL: no DCGM_FI_DEV_FB_USED"); sys.exit(1)
# nvidia-smi's bus id has 8 hex digits of domain, NVML's too; the names and UUID must be equal.
want = {"gpu": "0", "UUID": uuid, "device": "nvidia0", "modelName": name}
for k, v in want.items():
    if labels.get(k) != v: failures.append(f"label {k}={labels.get(k)!r}, nvidia-smi {v!r}")
if labels.get("pci_bus_id", "").lower() != bus.lower(): failures.append(f"pci_bus_id {labels.get('pci_bus_id')} vs {bus}")
if "Hostname" not in labels: failures.append("no Hostname label")
for metric, smi, slack in (("DCGM_FI_DEV_FB_USED", float(used), 64), ("DCGM_FI_DEV_FB_FREE", float(free), 64),
                           ("DCGM_FI_DEV_GPU_TEMP", float(temp), 3)):
    v = sample(metric)[1]
    ok = v is not None and abs(v - smi) <= slack
    print(f"{'ok  ' if ok else 'FAIL'} {metric}: vramdoc {v}, nvidia-smi {smi:g}")
    if not ok: failures.append(metric)
for metric in ("DCGM_FI_DEV_GPU_UTIL", "DCGM_FI_DEV_MEM_COPY_UTIL", "DCGM_FI_DEV_POWER_USAGE", "DCGM_FI_DEV_SM_CLOCK",
               "DCGM_FI_DEV_MEM_CLOCK", "DCGM_FI_DEV_PCIE_TX_THROUGHPUT", "DCGM_FI_DEV_PCIE_RX_THROUGHPUT"):
    if sample(metric)[1] is None: failures.append(f"{metric} missing")
if failures:
    print("FAIL:", "; ".join(failures)); sys.exit(1)
PY
echo "all checks passed"
