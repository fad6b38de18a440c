#!/usr/bin/env python3
"""Compares the tracer's leaks with compute-sanitizer --leak-check full's, by call site.

usage: trace_compare_leaks.py REPORT.json [SANITIZER.txt | --expect SITE=COUNTxBYTES ...]
A call site is the innermost function named leak_site_* / freed_allocations / main in a stack.
Exit 0 when both sides list the same sites with the same counts and bytes.
"""
import collections
import json
import re
import sys

SITE = re.compile(r"\b(leak_site_\w+|freed_allocations|main)\b")


def site_of(frames):
    for frame in frames:
        m = SITE.search(frame)
        if m:
            return m.group(1)
    return "?"


def tracer_leaks(path):
    report = json.load(open(path))
    sites = collections.Counter()
    counts = collections.Counter()
    for process in report["processes"]:
        for group in process["leaks"]:
            frames = [f["function"] for f in group["stack"][group["call_site_frame"]:]]
            site = site_of(frames)
            sites[site] += group["bytes"]
            counts[site] += group["count"]
    return {s: (counts[s], sites[s]) for s in sites}


def sanitizer_leaks(path):
    leaks = []  # (bytes, [frames])
    for line in open(path, errors="replace"):
        m = re.search(r"Leaked ([\d,]+) bytes", line)
        if m:
            leaks.append((int(m.group(1).replace(",", "")), []))
        elif "Host Frame" in line and leaks:
            # "Host Frame: f() in file.cu:12 [0x..] in module" or "Host Frame:f() [0x..] in module":
            # keep the function only (a path may contain "main").
            text = line.split("Host Frame", 1)[1].lstrip(": ")
            leaks[-1][1].append(re.split(r" in | \[0x", text, maxsplit=1)[0])
    sites = collections.Counter()
    counts = collections.Counter()
    for size, frames in leaks:
        site = site_of(frames)
        sites[site] += size
        counts[site] += 1
    return {s: (counts[s], sites[s]) for s in sites}


def expected(args):
    out = {}
    for a in args:
        site, spec = a.split("=")
        count, size = spec.split("x")
        out[site] = (int(count), int(count) * int(size))
    return out


def main():
    ours = tracer_leaks(sys.argv[1])
    theirs = expected(sys.argv[3:]) if sys.argv[2] == "--expect" else sanitizer_leaks(sys.argv[2])
    print("tracer:  ", dict(sorted(ours.items())))
    print("expected:" if sys.argv[2] == "--expect" else "sanitizer:", dict(sorted(theirs.items())))
    if ours != theirs:
        print("MISMATCH")
        return 1
    print("match: %d call sites" % len(ours))
    return 0 if ours else 1


if __name__ == "__main__":
    sys.exit(main())
