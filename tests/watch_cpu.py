"""Runs a command and reports its CPU time (user + system, from wait4) as a share of one core.

Usage: watch_cpu.py --max-percent P [--min-samples N --log FILE] -- COMMAND...
Exit 1 when the share exceeds P, or when FILE holds fewer than N distinct sample times.
"""
import argparse
import os
import sys
import time

parser = argparse.ArgumentParser()
parser.add_argument("--max-percent", type=float, required=True)
parser.add_argument("--min-samples", type=int, default=0)
parser.add_argument("--log")
parser.add_argument("command", nargs="+")
args = parser.parse_args()

start = time.monotonic()
pid = os.posix_spawnp(args.command[0], args.command, os.environ)
_, status, usage = os.wait4(pid, 0)
wall = time.monotonic() - start
cpu = usage.ru_utime + usage.ru_stime
percent = 100.0 * cpu / wall
samples = 0
if args.log:
    with open(args.log) as f:
        samples = len({line.split(",", 1)[0] for line in f if line[:1].isdigit()})
print(f"wall {wall:.2f} s, CPU user {usage.ru_utime * 1e3:.1f} ms + system {usage.ru_stime * 1e3:.1f} ms"
      f" = {percent:.2f} % of one core, {samples} samples, exit {os.waitstatus_to_exitcode(status)}")
if os.waitstatus_to_exitcode(status) != 0 or percent > args.max_percent or samples < args.min_samples:
    sys.exit(1)
