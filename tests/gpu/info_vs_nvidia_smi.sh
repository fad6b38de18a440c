# On a GPU machine: `vramdoc info --json` agrees with nvidia-smi on every GPU (memory total and
# used, max clocks, PCIe generation and width, driver version, name, UUID, PCI bus id), and the
# CUDA driver's on-chip facts were matched to each NVML device. Exit 77 (skipped) without a GPU.
set -u
if ! command -v nvidia-smi >/dev/null 2>&1 || ! nvidia-smi -L >/dev/null 2>&1; then
  echo "skipped: nvidia-smi -L finds no NVIDIA GPU"
  exit 77
fi
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
fields=memory.total,memory.used,clocks.max.memory,clocks.max.sm,pcie.link.gen.current,pcie.link.gen.max,pcie.link.width.current,pcie.link.width.max,driver_version,name,uuid,pci.bus_id
nvidia-smi --query-gpu=$fields --format=csv,noheader,nounits >"$dir/smi.csv" || { echo "FAIL: nvidia-smi query"; exit 1; }
"$VRAMDOC" info --json >"$dir/info.json" || { echo "FAIL: vramdoc info --json exited $?"; exit 1; }
"$VRAMDOC" info >"$dir/info.txt" || { echo "FAIL: vramdoc info exited $?"; exit 1; }
cat "$dir/info.txt"
python3 - "$dir/smi.csv" "$dir/info.json" <<'PY'
import csv, json, sys
MiB = 1024 * 1024
rows = [[c.strip() for c in r] for r in csv.reader(open(sys.argv[1])) if r]
info = json.load(open(sys.argv[2]))
gpus = info["gpus"]
failures = []
def check(gpu, what, ours, theirs, ok):
    print(f"GPU {gpu}  {what:<22} vramdoc={ours!s:<28} nvidia-smi={theirs!s:<28} {'ok' if ok else 'MISMATCH'}")
    if not ok: failures.append(f"GPU {gpu} {what}")
def pci(text):
    d, b, rest = text.lower().split(":"); dev, fn = rest.split(".")
    return (int(d, 16), int(b, 16), int(dev, 16), int(fn, 16))
if len(gpus) != len(rows):
    failures.append(f"vramdoc sees {len(gpus)} GPUs, nvidia-smi {len(rows)}")
for i, (row, g) in enumerate(zip(rows, gpus)):
    total, used, mclk, sclk, gen, genmax, width, widthmax, driver, name, uuid, busid = row
    m, dm, link = g["memory"], g["device_memory"], g["host_link"]
    check(i, "memory.total MiB", m["total_bytes"] // MiB, int(total), abs(m["total_bytes"] // MiB - int(total)) <= 1)
    # nvidia-smi's used is NVML v2's (reserved apart); older ones add reserved: accept either, 64 MiB apart at most.
    ours = [m["used_bytes"] // MiB]
    if m["reserved_bytes"] is not None: ours.append((m["used_bytes"] + m["reserved_bytes"]) // MiB)
    check(i, "memory.used MiB", ours, int(used), any(abs(o - int(used)) <= 64 for o in ours))
    check(i, "clocks.max.memory MHz", dm["max_mem_clock_mhz"], mclk, str(dm["max_mem_clock_mhz"]) == mclk)
    check(i, "clocks.max.sm MHz", g["max_sm_clock_mhz"], sclk, str(g["max_sm_clock_mhz"]) == sclk)
    check(i, "pcie.link.gen.current", link["pcie_gen_current"], gen, str(link["pcie_gen_current"]) == gen)
    check(i, "pcie.link.gen.max", link["pcie_gen_max"], genmax, str(link["pcie_gen_max"]) == genmax)
    check(i, "pcie.link.width.current", link["pcie_width_current"], width, str(link["pcie_width_current"]) == width)
    check(i, "pcie.link.width.max", link["pcie_width_max"], widthmax, str(link["pcie_width_max"]) == widthmax)
    check(i, "driver_version", info["driver"]["driver_version"], driver, info["driver"]["driver_version"] == driver)
    check(i, "name", g["name"], name, g["name"] == name)
    check(i, "uuid", g["uuid"], uuid, g["uuid"] == uuid)
    check(i, "pci.bus_id", g["pci_bus_id"], busid, g["pci_bus_id"] is not None and pci(g["pci_bus_id"]) == pci(busid))
    # The CUDA driver's facts reached this GPU (matched by PCI bus id) and the derived ones exist.
    for key in ("l2_bytes", "shared_per_sm_bytes", "registers_per_sm", "max_threads_per_sm"):
        check(i, key, g["on_chip"][key], "(CUDA driver)", g["on_chip"][key] is not None and g["on_chip"][key] > 0)
    check(i, "sm_count", g["sm_count"], "(CUDA driver)", g["sm_count"] is not None and g["sm_count"] > 0)
    bw = dm["theoretical_bandwidth_bytes_per_s"]
    check(i, "theoretical bandwidth", bw, "2 x clock x width / 8",
          bw is not None and abs(bw - 2 * int(mclk) * 1e6 * dm["bus_width_bits"] / 8) < 1e6)
if info["problems"]:
    print("problems reported:", info["problems"])
if failures:
    print("FAIL:", ", ".join(failures)); sys.exit(1)
print("all checks passed")
PY
