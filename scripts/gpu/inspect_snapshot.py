#!/usr/bin/env python3
"""What a PyTorch memory snapshot pickle holds, as JSON (docs/snapshots.md): the pickle protocol,
the opcodes used, which kinds of object memo references (BINGET / LONG_BINGET) point back at,
the keys of each record, the trace actions. Uses Python's own unpickler (trusted files only).

    python3 inspect_snapshot.py SNAP.pickle [SNAP.pickle ...] > summary.json
"""
import collections
import json
import pickle
import pickletools
import sys


class CountingUnpickler(pickle._Unpickler):
    """Python's pure unpickler, counting the type of every memo reference's target."""

    def __init__(self, f):
        super().__init__(f)
        self.get_targets = collections.Counter()
        self.dispatch = dict(pickle._Unpickler.dispatch)
        self.dispatch[pickle.BINGET[0]] = CountingUnpickler.binget
        self.dispatch[pickle.LONG_BINGET[0]] = CountingUnpickler.long_binget

    def _get(self, i):
        value = self.memo[i]
        self.get_targets[type(value).__name__] += 1
        self.append(value)

    def binget(self):
        self._get(self.read(1)[0])

    def long_binget(self):
        self._get(int.from_bytes(self.read(4), "little"))


def describe(path):
    with open(path, "rb") as f:
        data = f.read()
    ops = collections.Counter()
    protocol = None
    max_string = 0
    for op, arg, pos in pickletools.genops(data):
        ops[op.name] += 1
        if op.name == "PROTO":
            protocol = arg
        if isinstance(arg, (str, bytes)):
            max_string = max(max_string, len(arg))
    import io
    u = CountingUnpickler(io.BytesIO(data))
    snap = u.load()
    out = {"file": path, "bytes": len(data), "protocol": protocol, "opcodes": dict(ops.most_common()),
           "memo_get_targets": dict(u.get_targets), "longest_string": max_string}
    out["top_keys"] = list(snap.keys()) if isinstance(snap, dict) else type(snap).__name__
    segments = snap.get("segments", [])
    out["segments"] = len(segments)
    out["segment_keys"] = sorted({k for s in segments for k in s})
    blocks = [b for s in segments for b in s.get("blocks", [])]
    out["blocks"] = len(blocks)
    out["block_keys"] = sorted({k for b in blocks for k in b})
    out["block_states"] = dict(collections.Counter(b.get("state") for b in blocks))
    traces = snap.get("device_traces", [])
    out["device_traces"] = [len(t) for t in traces]
    entries = [e for t in traces for e in t]
    out["entry_keys"] = sorted({k for e in entries for k in e})
    out["actions"] = dict(collections.Counter(e.get("action") for e in entries))
    frames = [f for e in entries for f in e.get("frames", [])] + [f for b in blocks for f in b.get("frames", [])]
    out["frame_keys"] = sorted({k for f in frames for k in f})
    out["max_stack_depth"] = max([len(e.get("frames", [])) for e in entries] + [len(b.get("frames", [])) for b in blocks] + [0])
    out["unique_frames"] = len({id(f) for f in frames})
    out["unique_frame_lists"] = len({id(e.get("frames")) for e in entries if e.get("frames")})
    out["allocator_settings"] = snap.get("allocator_settings")
    out["external_annotations"] = len(snap.get("external_annotations", []))
    out["other_keys"] = {k: type(v).__name__ for k, v in snap.items()
                         if k not in ("segments", "device_traces", "allocator_settings", "external_annotations")}
    out["example_entry"] = {k: v for k, v in entries[0].items() if k != "frames"} if entries else None
    out["example_segment"] = {k: v for k, v in segments[0].items() if k != "blocks" and k != "frames"} if segments else None
    return out


if __name__ == "__main__":
    results = []
    for p in sys.argv[1:]:
        try:
            results.append(describe(p))
        except Exception as e:
            results.append({"file": p, "error": "%s: %s" % (type(e).__name__, e)})
    json.dump(results, sys.stdout, indent=1, default=str)
