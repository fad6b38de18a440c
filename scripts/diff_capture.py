#!/usr/bin/env python3
"""A capture's trace against the real run's allocator trace of the same job, event by event
(docs/estimator.md, "Estimating a script"): where the capture allocates what the GPU did not, or
misses what it did.
  python3 scripts/diff_capture.py REAL.txt[.gz] CAPTURE.trace [--phase NAME] [--min-bytes N] [--temps]
Per phase (the phases both traces have): allocation counts, bytes allocated, bytes alive at the
phase's end and the phase's peak of live bytes, real against capture. Then the blocks only one side
has (the allocation sequences of each phase aligned by their 512-rounded sizes, difflib), each with
its frames and the capture's `k` line nearest before it: a block only the real run has that is freed
before the next allocation is a kernel's workspace (`--temps` lists those as `op info -> bytes`, the
data a workspace model is fitted to). Sizes are requests rounded to 512 bytes, as the allocator
counts them; workspaces the replay adds (cuBLAS) are not in the capture's trace and show as real-only."""
import difflib
import gzip
import sys


def r512(n):
    return max(512, (n + 511) // 512 * 512) if n > 0 else 0


class Block:
    __slots__ = ("size", "at", "freed", "where", "kernel", "next_kernel", "temp")

    def __init__(self, size, at, where, kernel):
        self.size, self.at, self.freed, self.where, self.kernel, self.temp = size, at, None, where, kernel, False
        self.next_kernel = ""  # the capture's first `k` line after this block: the op it is inside of


def read(path):
    """Phases of a trace: [(name, [Block])], each phase's blocks in allocation order."""
    opener = gzip.open if path.endswith(".gz") else open
    phases, blocks, live, event, kernel, last = [], [], {}, 0, "", None
    with opener(path, "rt") as f:
        for line in f:
            w = line.split()
            if not w:
                continue
            if w[0] == "a":
                b = Block(r512(int(w[1])), event, w[4] if len(w) > 4 else "", kernel)
                if w[2] in live:
                    live.pop(w[2]).freed = event
                live[w[2]] = b
                blocks.append(b)
                last = b
                event += 1
            elif w[0] == "f":
                b = live.pop(w[1], None)
                if b is not None:
                    b.freed = event
                    b.temp = b is last
                event += 1
            elif w[0] == "k":
                kernel = " ".join(w[1:2] + w[4:])
                if last is not None and not last.next_kernel:
                    last.next_kernel = kernel
            elif line.startswith("# phase "):
                phases.append((line[8:].strip(), blocks))
                blocks = []
    if blocks:
        phases.append(("after the last phase", blocks))
    return phases


def stats(blocks, carried):
    """(allocations, bytes allocated, live at the end, peak) of a phase entered with `carried` live."""
    events = sorted([(b.at, b.size) for b in blocks] +
                    [(b.freed, -b.size) for b in carried + blocks if b.freed is not None and
                     b.freed >= (blocks[0].at if blocks else 0) and b.freed <= (blocks[-1].at if blocks else -1)])
    live = sum(b.size for b in carried)
    peak = live
    for _, d in events:
        live += d
        peak = max(peak, live)
    return len(blocks), sum(b.size for b in blocks), peak


def unmatched(rb, cb, window=12):
    """The blocks of a phase only one side has: the sizes aligned (difflib), then a real-only and a
    capture-only block of one size within `window` allocations of each other taken as one block
    allocated in another order."""
    sm = difflib.SequenceMatcher(None, [b.size for b in rb], [b.size for b in cb], autojunk=False)
    real_only, cap_only = [], []
    for tag, i1, i2, j1, j2 in sm.get_opcodes():
        if tag == "equal":
            continue
        context = next((b.next_kernel for b in cb[max(j1 - 1, 0):] if b.next_kernel), "")
        real_only += [(i, rb[i], context, j1) for i in range(i1, i2)]
        cap_only += [(j, cb[j]) for j in range(j1, j2)]
    left = []
    for i, b, context, j_at in real_only:
        twin = next((k for k, (j, c) in enumerate(cap_only) if c.size == b.size and abs(j - j_at) <= window), None)
        if twin is None:
            left.append((i, b, context))
        else:
            cap_only.pop(twin)
    return left, cap_only


def main():
    args = sys.argv[1:]
    opt = lambda name, default: args[args.index(name) + 1] if name in args else default  # noqa: E731
    only = opt("--phase", None)
    min_bytes = int(opt("--min-bytes", str(1 << 20)))
    real, cap = read(args[0]), read(args[1])
    cap_by = dict(cap)
    gib = lambda n: n / 2**30  # noqa: E731
    print("%-18s %9s %9s %12s %12s %12s %12s" % ("phase", "n real", "n capt", "alloc real", "alloc capt",
                                                  "peak real", "peak capt"))
    real_live, cap_live = [], []
    temps = []
    for name, rb in real:
        cb = cap_by.get(name)
        if cb is None:
            continue
        nr, br, pr = stats(rb, real_live)
        nc, bc, pc = stats(cb, cap_live)
        print("%-18s %9d %9d %11.3fG %11.3fG %11.3fG %11.3fG" % (name, nr, nc, gib(br), gib(bc), gib(pr), gib(pc)))
        end_r = max([b.at for b in rb], default=-1)
        end_c = max([b.at for b in cb], default=-1)
        real_live = [b for b in real_live + rb if b.freed is None or b.freed > end_r]
        cap_live = [b for b in cap_live + cb if b.freed is None or b.freed > end_c]
        if only is not None and name != only:
            continue
        real_only, cap_only = unmatched(rb, cb)
        for i, b, context in real_only:
            if b.temp:
                temps.append((context, b.size))
            if b.size >= min_bytes and "--temps" not in args:
                print("  real only %12d %s%s  after capture's [%s]" % (b.size, "temp " if b.temp else "", b.where, context))
        for j, b in cap_only:
            if b.size >= min_bytes and "--temps" not in args:
                print("  capt only %12d %s%s  [%s]" % (b.size, "temp " if b.temp else "", b.where, b.next_kernel or b.kernel))
    if "--temps" in args:
        for context, size in temps:
            print("%s -> %d" % (context, size))


if __name__ == "__main__":
    main()
