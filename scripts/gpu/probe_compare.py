"""vramdoc probe beside Lightning's BatchSizeFinder and accelerate's find_executable_batch_size on
probe_jobs.py's jobs, each on a card limited to 16 GiB, and every value found run again for 50
steps in a fresh process (issue 30; docs/probe.md, "Compared").

    python3 scripts/gpu/probe_compare.py VRAMDOC OUT [--deadline 330] [--slots 8] [--jobs bert,cnn,...]

Runs up to --slots cases at once (each process holds at most 16 GiB plus its CUDA context, so 8
fit on the H200's 140 GiB), probes first; each case has its own timeout and one case's failure
never stops the others. Writes OUT/summary.json (every case: command, seconds, exit, result) and
keeps probe's trial files (--keep) in OUT/probe-JOB/.
"""
import argparse
import json
import os
import re
import signal
import subprocess
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor

HERE = os.path.dirname(os.path.abspath(__file__))
JOBS = os.path.join(HERE, "probe_jobs.py")
ANCHORS = os.path.join(HERE, "probe_anchors.py")
CONFIGS = os.path.join(HERE, "probe_configs")
# probe starts from the estimator's curve where it has the model's config, else from its trials' fit.
ESTIMATOR = {
    "bert": ["--config", os.path.join(CONFIGS, "bert-large.json"), "--seq", "384"],
    "llama": ["--config", os.path.join(CONFIGS, "llama-0.3b.json"), "--seq", "1024"],
    "llama-seq": ["--config", os.path.join(CONFIGS, "llama-0.3b.json"), "--batch", "4"],
}
T0 = time.time()
lock = threading.Lock()
results = []
running = {}


def run_case(name, argv, timeout, out_dir):
    started = time.time()
    log = os.path.join(out_dir, name + ".log")
    env = dict(os.environ, PYTHONUNBUFFERED="1", OMP_NUM_THREADS="2")
    with open(log, "w") as f:
        p = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=f, env=env, start_new_session=True, text=True)
        with lock:
            running[name] = p
        try:
            out, _ = p.communicate(timeout=timeout)
            rc = p.returncode
        except subprocess.TimeoutExpired:
            os.killpg(p.pid, signal.SIGKILL)
            out, _ = p.communicate()
            rc = "timeout"
        f.write("\n--- stdout ---\n" + out)
    with lock:
        running.pop(name, None)
    case = {"name": name, "argv": argv, "seconds": round(time.time() - started, 1), "exit": rc,
            "started_at": round(started - T0, 1)}
    return case, out


def steps_done(out):
    return len(re.findall(r"^step \d+", out, re.M))


def fifty_steps(name, job, value, out_dir, extra=()):
    case, out = run_case(name, [sys.executable, JOBS, job, "--batch", str(value), "--steps", "50", *extra], 150, out_dir)
    log = open(os.path.join(out_dir, name + ".log")).read()
    case["steps"] = steps_done(out)
    case["oom"] = "out of memory" in log.lower()
    case["held_50"] = case["exit"] == 0 and case["steps"] == 50
    return case


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("vramdoc")
    ap.add_argument("out")
    ap.add_argument("--deadline", type=float, default=330)
    ap.add_argument("--slots", type=int, default=8)
    ap.add_argument("--jobs", default="bert,bert-dyn,cnn,llama")
    ap.add_argument("--probe-args", default="")
    a = ap.parse_args()
    os.makedirs(a.out, exist_ok=True)
    jobs = a.jobs.split(",")
    pool = ThreadPoolExecutor(a.slots)
    futures = []

    def submit(fn, *args):
        with lock:
            futures.append(pool.submit(fn, *args))

    def record(case):
        with lock:
            results.append(case)

    def probe(job, seq_mode):
        name = "probe-" + job + ("-seq" if seq_mode else "")
        keep = os.path.join(a.out, name)
        cmd = "python3 %s %s --batch %s" % (JOBS, job, "4 --seq {seq}" if seq_mode else "{batch}")
        argv = [a.vramdoc, "probe", "--cmd", cmd, "--gpu-memory", "16GiB", "--keep", keep, "--json",
                "--max", "32768" if seq_mode else "4096", "--budget", "%ds" % int(a.deadline - 40), "--trial-time", "90s"]
        if name[len("probe-"):] in ESTIMATOR:
            argv += ESTIMATOR[name[len("probe-"):]] + ["--precision", "amp-bf16", "--optimizer", "adamw"]
        argv += a.probe_args.split()
        case, out = run_case(name, argv, a.deadline - 20, a.out)
        try:
            case["result"] = json.loads(out)
        except ValueError:
            case["result"] = None
        record(case)
        r = case["result"] or {}
        if r.get("largest_ok") and not seq_mode and time.time() - T0 < a.deadline - 60:
            v = r["largest_ok"]  # the answer and the next value, each in a fresh process for 50 steps
            submit(lambda: record(fifty_steps(name + "-check-%d" % v, job, v, a.out)))
            submit(lambda: record(fifty_steps(name + "-check-%d" % (v + 1), job, v + 1, a.out)))

    def anchor(job, finder):
        name = "%s-%s" % (finder, job)
        case, out = run_case(name, [sys.executable, ANCHORS, job, finder], 170, a.out)
        try:
            case["result"] = json.loads(out.strip().splitlines()[-1])
        except (ValueError, IndexError):
            case["result"] = None
        record(case)
        if case["result"] and case["result"].get("value") and time.time() - T0 < a.deadline - 60:
            v = case["result"]["value"]
            submit(lambda: record(fifty_steps(name + "-check-%d" % v, job, v, a.out)))

    for job in jobs:
        submit(probe, job, False)
    if "llama" in jobs:
        submit(probe, "llama", True)
    for finder in ("lightning-binsearch", "accelerate", "lightning-power"):
        for job in jobs:
            submit(anchor, job, finder)

    while time.time() - T0 < a.deadline:
        with lock:
            pending = [f for f in futures if not f.done()]
        if not pending:
            break
        time.sleep(1)
    with lock:  # past the deadline: stop what still runs, say so
        for name, p in list(running.items()):
            try:
                os.killpg(p.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            results.append({"name": name, "exit": "killed at the deadline"})
    pool.shutdown(wait=False, cancel_futures=True)
    with open(os.path.join(a.out, "summary.json"), "w") as f:
        json.dump({"seconds": round(time.time() - T0, 1), "cases": results}, f, indent=1)
    print("done in %.0f s, %d cases" % (time.time() - T0, len(results)))
    os._exit(0)


if __name__ == "__main__":
    main()
