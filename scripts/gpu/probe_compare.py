"""vramdoc probe beside Lightning's BatchSizeFinder and accelerate's find_executable_batch_size on
probe_jobs.py's jobs, each on an emulated smaller card, and every value found run again for 50
steps in a fresh process (issue 30; docs/probe.md, "Compared").

    python3 scripts/gpu/probe_compare.py VRAMDOC OUT [--deadline 330] [--slots 12] [--jobs bert,cnn,...]
                                         [--cards bert=10,cnn=6,...] [--device cuda|cpu]

The card: probe gets --gpu-memory CARD (it caps the job at CARD less the CUDA context it measures);
the finders and every 50-step check of their values run with the allocator capped at CARD less the
context measured once at the start (alone on the GPU), so every process holds at most CARD, as on a
real card of that size. probe's own value and the next one are checked as probe ran them: under
`vramdoc run` with VRAMDOC_GPU_MEMORY_BYTES=CARD and VRAMDOC_GPU_OUTSIDE_BYTES=probe's figure.
Up to --slots cases at once, in the order probes, checks, accelerate, Lightning binsearch, Lightning
power; each case has its own timeout, one case's failure never stops the others, and at --deadline
what still runs is killed and said. Writes OUT/summary.json (every case: command, seconds, exit,
result) and keeps probe's trial files (--keep) in OUT/probe-JOB/. --device cpu: a dry run of the
plumbing without a GPU (the jobs on the CPU, no cap).
"""
import argparse
import itertools
import json
import os
import queue
import re
import signal
import subprocess
import sys
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
JOBS = os.path.join(HERE, "probe_jobs.py")
ANCHORS = os.path.join(HERE, "probe_anchors.py")
CONFIGS = os.path.join(HERE, "probe_configs")
GIB = 1 << 30
# The emulated card per job (GiB): small enough that 12 cases share the H200 (12 x 10.6 GiB) and
# the whole run fits one device call; large enough that each limit is several values.
CARDS = {"bert": 10, "bert-dyn": 10, "cnn": 6, "llama": 10, "llama-seq": 10, "vit": 6, "gpt2m": 10,
         "t5": 16, "effnet": 6, "qwen-dyn": 16,  # round 6's held-out jobs: --jobs t5,effnet,qwen-dyn
         "swin": 6, "mistral-gc": 12}  # round 7's (2026-12-03): --jobs swin,mistral-gc
# probe starts from the estimator's curve where it has the model's config, else from its trials' fit.
ESTIMATOR = {
    "bert": ["--config", os.path.join(CONFIGS, "bert-large.json"), "--seq", "384"],
    "llama": ["--config", os.path.join(CONFIGS, "llama-0.3b.json"), "--seq", "1024"],
    "llama-seq": ["--config", os.path.join(CONFIGS, "llama-0.3b.json"), "--batch", "2"],
    "t5": ["--config", os.path.join(CONFIGS, "t5-base.json"), "--seq", "512", "--task", "seq2seq", "--target-seq", "128"],
    "qwen-dyn": ["--config", os.path.join(CONFIGS, "qwen2-0.5b.json"), "--seq", "512"],  # the longest batch's
    "mistral-gc": ["--config", os.path.join(CONFIGS, "mistral-gc.json"), "--seq", "2048", "--grad-checkpointing"],
}
FINDERS = ("accelerate", "lightning-binsearch", "lightning-power")
T0 = time.time()
lock = threading.Lock()
results = []
running = {}


def measure_context(device):
    """What the driver charges a process beyond PyTorch's allocator (the CUDA context), alone on the GPU."""
    if device != "cuda":
        return 0
    code = ("import subprocess, torch\n"
            "q = lambda: int(subprocess.check_output(['nvidia-smi', '--query-gpu=memory.used', '--format=csv,noheader,nounits', '-i', '0']).split()[0])\n"
            "before = q(); x = torch.ones(1, device='cuda'); torch.cuda.synchronize(); after = q()\n"
            "print(((after - before) << 20) - torch.cuda.memory_reserved())\n")
    try:
        return max(0, int(subprocess.check_output([sys.executable, "-c", code], timeout=60, stderr=subprocess.PIPE).split()[-1]))
    except subprocess.CalledProcessError as e:
        why = (e.stderr or b"").decode(errors="replace").strip().splitlines()[-1:] or ["exit %d" % e.returncode]
    except (subprocess.SubprocessError, ValueError, IndexError, OSError) as e:
        why = [str(e)]
    print("context not measured (%s): the finders get the whole card" % why[0], file=sys.stderr)
    return 0


def run_case(name, argv, timeout, out_dir, env_extra=None):
    started = time.time()
    log = os.path.join(out_dir, name + ".log")
    env = dict(os.environ, PYTHONUNBUFFERED="1", OMP_NUM_THREADS="2", **(env_extra or {}))
    with open(log, "w") as f:
        p = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=f, env=env, start_new_session=True, text=True)
        with lock:
            running[name] = p
        try:
            out, _ = p.communicate(timeout=max(1, timeout))
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


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("vramdoc")
    ap.add_argument("out")
    ap.add_argument("--deadline", type=float, default=330)
    ap.add_argument("--slots", type=int, default=12)
    ap.add_argument("--jobs", default="bert,bert-dyn,cnn,llama,vit,gpt2m")
    ap.add_argument("--cards", default="", help="JOB=GIB,... overriding the cards above")
    ap.add_argument("--seq-probe", action="store_true", default=True)
    ap.add_argument("--no-seq-probe", dest="seq_probe", action="store_false")
    ap.add_argument("--probe-args", default="")
    ap.add_argument("--check-recommended", action="store_true", help="also run probe's recommended value for 50 steps")
    ap.add_argument("--no-anchors", action="store_true", help="vramdoc probe only (the finders' numbers from an earlier run)")
    ap.add_argument("--device", default="cuda", choices=["cuda", "cpu"])
    a = ap.parse_args()
    os.makedirs(a.out, exist_ok=True)
    jobs = a.jobs.split(",")
    cards = dict(CARDS, **{k: float(v) for k, v in (kv.split("=") for kv in a.cards.split(",") if kv)})
    context = measure_context(a.device)
    print("CUDA context: %d MiB" % (context >> 20), flush=True)
    tasks = queue.PriorityQueue()
    order = itertools.count()
    pending = [0]

    def left():
        return a.deadline - (time.time() - T0)

    def submit(priority, name, fn):
        with lock:
            pending[0] += 1
        tasks.put((priority, next(order), name, fn))

    def record(case):
        with lock:
            results.append(case)

    def card_bytes(key):
        return int(cards[key] * GIB)

    def job_argv(job, value, steps, extra=()):
        return [sys.executable, JOBS, job, "--batch", str(value), "--steps", str(steps), "--device", a.device, *extra]

    def fifty_steps(name, job, key, value, probe_outside=None):
        """The value in a fresh process for 50 steps, on the same card as the finder that found it."""
        if probe_outside is None:  # a finder's value: the allocator capped as the finder's was
            argv = job_argv(job, value, 50, ["--limit-bytes", str(card_bytes(key) - context)])
            env = None
        else:  # probe's value, as its trials ran: under vramdoc run with probe's cap
            argv = [a.vramdoc, "run", "--no-report", "--out", os.path.join(a.out, name + ".jsonl"), "--",
                    *job_argv(job, value, 50, ["--limit-gib", "0"])]
            env = {"VRAMDOC_GPU_MEMORY_BYTES": str(card_bytes(key)), "VRAMDOC_GPU_OUTSIDE_BYTES": str(probe_outside)}
        case, out = run_case(name, argv, min(150, left() - 3), a.out, env)
        log = open(os.path.join(a.out, name + ".log")).read()
        case.update(job=job, value=value, steps=len(re.findall(r"^step \d+", out, re.M)), oom="out of memory" in log.lower())
        case["held_50"] = case["exit"] == 0 and case["steps"] == 50
        return case

    def probe(job, seq_mode):
        key = job + ("-seq" if seq_mode else "")
        name = "probe-" + key
        cmd = "%s %s %s --limit-gib 0 --device %s --batch %s" % (sys.executable, JOBS, job, a.device, "2 --seq {seq}" if seq_mode else "{batch}")
        argv = [a.vramdoc, "probe", "--cmd", cmd, "--gpu-memory", "%gGiB" % cards[key], "--keep", os.path.join(a.out, name),
                "--json", "--max", "32768" if seq_mode else "4096", "--budget", "%ds" % int(max(10, left() - 60)), "--trial-time", "90s"]
        if key in ESTIMATOR:
            argv += ESTIMATOR[key] + ["--precision", "amp-bf16", "--optimizer", "adamw"]
        argv += a.probe_args.split()
        case, out = run_case(name, argv, left() - 20, a.out)
        try:
            case["result"] = json.loads(out)
        except ValueError:
            case["result"] = None
        case.update(job=job, key=key, card_gib=cards[key])
        record(case)
        r = case["result"] or {}
        if r.get("largest_ok") and not seq_mode:
            v, outside = r["largest_ok"], r.get("outside_allocator_bytes") or 0
            values = [v, v + 1]  # the answer and the next value, each in a fresh process for 50 steps
            if a.check_recommended and r.get("recommended") and r["recommended"] < v:
                values.append(r["recommended"])  # and the value probe recommends (it must never fail later)
            for value in values:
                check = "%s-check-%d" % (name, value)
                submit(1, check, lambda check=check, value=value: record(fifty_steps(check, job, key, value, outside)))

    def anchor(job, finder):
        name = "%s-%s" % (finder, job)
        argv = [sys.executable, ANCHORS, job, finder, "--limit-bytes", str(card_bytes(job) - context)]
        case, out = run_case(name, argv, min(170, left() - 3), a.out)
        try:
            case["result"] = json.loads(out.strip().splitlines()[-1])
        except (ValueError, IndexError):
            case["result"] = None
        case.update(job=job, finder=finder, card_gib=cards[job])
        record(case)
        if case["result"] and case["result"].get("value"):
            v = case["result"]["value"]
            check = "%s-check-%d" % (name, v)
            submit(1, check, lambda: record(fifty_steps(check, job, job, v)))

    def worker():
        while True:
            _, _, name, fn = tasks.get()
            try:
                if left() > 5:
                    fn()
                else:
                    record({"name": name, "exit": "not started: the deadline"})
            except Exception as e:  # one case's failure never stops the others
                record({"name": "error", "exit": repr(e)})
            finally:
                with lock:
                    pending[0] -= 1

    for job in jobs:
        submit(0, "probe-" + job, lambda job=job: probe(job, False))
    if "llama" in jobs and a.seq_probe:
        submit(0, "probe-llama-seq", lambda: probe("llama", True))
    for rank, finder in enumerate(() if a.no_anchors else FINDERS):
        for job in jobs:
            submit(2 + rank, "%s-%s" % (finder, job), lambda job=job, finder=finder: anchor(job, finder))
    for _ in range(a.slots):
        threading.Thread(target=worker, daemon=True).start()

    while left() > 0:
        with lock:
            if pending[0] == 0:
                break
        time.sleep(1)
    with lock:  # past the deadline: stop what still runs, say so
        for name, p in list(running.items()):
            try:
                os.killpg(p.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            results.append({"name": name, "exit": "killed at the deadline"})
        while not tasks.empty():
            results.append({"name": tasks.get()[2], "exit": "not started: the deadline"})
        not_started = sum(1 for c in results if c.get("exit") == "not started: the deadline")
    with open(os.path.join(a.out, "summary.json"), "w") as f:
        json.dump({"seconds": round(time.time() - T0, 1), "context_bytes": context, "cards_gib": cards,
                   "not_started": not_started, "cases": results}, f, indent=1)
    print("done in %.0f s, %d cases, %d not started" % (time.time() - T0, len(results), not_started))
    os._exit(0)


if __name__ == "__main__":
    main()
