#!/usr/bin/env python3
"""Makes a large PyTorch memory snapshot from a real one, for the speed benchmark of
`vramdoc analyze snap.pickle` (docs/snapshots.md, "Speed and memory").

    python3 replicate_snapshot.py REAL.pickle OUT.pickle TARGET_BYTES

The trace entries of REAL's busiest device are copied, byte for byte as PyTorch's pickler wrote
them, until OUT has about TARGET_BYTES; each copy's time_us values are shifted past the previous
copy's, so the trace stays in time order. Only whole batches of 1000 entries are copied (the
entries after the last full batch are left out), so OUT has the layout Python's pickler writes
for a list of that many entries. FRAME opcodes are dropped (optional in protocol 4). Everything
else (segments, settings, annotations) is REAL's, so the analysis of OUT is a speed test, not a
diagnosis: the trace no longer adds up to the dumped segments.
"""
import pickletools
import sys


def without_frames(data):
    """The pickle without its FRAME opcodes (9 bytes each)."""
    out, at = bytearray(), 0
    for op, arg, pos in pickletools.genops(data):
        if op.name == "FRAME":
            out += data[at:pos]
            at = pos + 9
    out += data[at:]
    return bytes(out)


def find_region(data):
    """(start, end, cut, time positions): the byte range of the longest run of full batches (1000
    entries) after the "device_traces" key, the end of the shorter batch after it (left out), and
    the offsets in the range of the LONG1 time_us values."""
    memo, time_slot, prev = 0, None, [None, None]
    depth, after_traces = 0, False
    times, batches, open_batches = [], [], {}
    for op, arg, pos in pickletools.genops(data):
        name = op.name
        if name == "LONG1" and ((prev[1] and prev[1][0] in ("BINGET", "LONG_BINGET") and prev[1][1] == time_slot) or
                                (prev[1] and prev[1][0] == "MEMOIZE" and prev[0] == ("SHORT_BINUNICODE", "time_us"))):
            times.append(pos)
        elif name == "MEMOIZE":
            if time_slot is None and prev[1] == ("SHORT_BINUNICODE", "time_us"):
                time_slot = memo
            memo += 1
        elif name == "SHORT_BINUNICODE" and arg == "device_traces":
            after_traces = True
        elif name == "MARK":
            depth += 1
            if after_traces:
                open_batches[depth] = [pos, None, 0]
        elif name in ("APPENDS", "SETITEMS"):
            b = open_batches.pop(depth, None)
            if b and name == "APPENDS" and b[2] > 0:
                b[1] = pos + 1
                batches.append(b)
            depth -= 1
        elif name == "EMPTY_DICT" and depth in open_batches:
            open_batches[depth][2] += 1
        prev = [prev[1], (name, arg)]
    run, best = [], []
    for b in batches:
        if b[2] == 1000 and run and run[-1][1] == b[0]:
            run.append(b)
        else:
            run = [b] if b[2] == 1000 else []
        if len(run) > len(best):
            best = list(run)
    if not best:
        raise SystemExit("no full batch of 1000 trace entries in the snapshot")
    start, end = best[0][0], best[-1][1]
    rest = [b for b in batches if b[0] == end]  # the list's last, shorter batch: left out
    return start, end, rest[0][1] if rest else end, [t - start for t in times if start <= t < end]


def main():
    src, dst, target = sys.argv[1], sys.argv[2], int(float(sys.argv[3]))
    data = without_frames(open(src, "rb").read())
    start, end, cut, times = find_region(data)
    head, region, tail = data[:start], data[start:end], data[cut:]
    value = lambda b, t: int.from_bytes(b[t + 2:t + 9], "little", signed=True)
    shift = value(region, times[-1]) - value(region, times[0]) + 1000
    copies = max(1, (target - len(head) - len(tail)) // len(region))
    with open(dst, "wb") as f:
        f.write(head)
        for k in range(copies):
            block = bytearray(region)
            for t in times if k else ():
                assert block[t + 1] == 7, "time_us is not a 7-byte LONG1"
                block[t + 2:t + 9] = (value(block, t) + k * shift).to_bytes(7, "little", signed=True)
            f.write(block)
        f.write(tail)
    print("%s: %d copies of %d bytes (%d time values each), %d bytes" % (
        dst, copies, len(region), len(times), len(head) + copies * len(region) + len(tail)))


if __name__ == "__main__":
    main()
