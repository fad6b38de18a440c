#!/usr/bin/env python3
"""Synthetic PyTorch memory snapshots with known answers, for the unit tests of
`vramdoc analyze snap.pickle` (tests/unit/test_snapshot_*.cpp). A small model of the caching
allocator (segments of 2 MiB or the rounded request, best-fit blocks split and merged) records
the trace PyTorch records and dumps what torch.cuda.memory._snapshot() returns, with PyTorch's
sharing: every frame dict is one object wherever it appears, and an allocation's frames list is
one object shared by its block and its trace entries (pickle writes memo references to them).

    python3 make_synthetic.py   # writes synthetic_*.pickle here (plain pickle.dump, protocol 4)
"""
import os
import pickle

MIB = 1 << 20
GIB = 1 << 30
FRAMES = {}


def frame(filename, line, name):
    return FRAMES.setdefault((filename, line, name), {"filename": filename, "line": line, "name": name})


LIB = "/usr/lib/python3/dist-packages/torch/nn/modules/module.py"
STACKS = {
    "keep": [frame("train.py", 21, "keep"), frame("train.py", 40, "main"), frame("train.py", 52, "<module>")],
    "temp": [frame(LIB, 1553, "_call_impl"), frame("model.py", 8, "forward"), frame("train.py", 35, "main"),
             frame("train.py", 52, "<module>")],
    "weights": [frame("model.py", 3, "__init__"), frame("train.py", 30, "main"), frame("train.py", 52, "<module>")],
    "piece": [frame("frag.py", 11, "cut"), frame("frag.py", 20, "<module>")],
    "big": [frame("frag.py", 15, "ask"), frame("frag.py", 21, "<module>")],
}


class Allocator:
    def __init__(self, device):
        self.device, self.t, self.segments, self.trace, self.next_address = device, 1_700_000_000_000_000, [], [], 0x7F0000000000

    def tick(self, us=1000):
        self.t += us

    def event(self, action, addr, size, frames):
        e = {"action": action, "addr": addr, "size": size, "stream": 0, "time_us": self.t}
        if frames is not None:
            e["frames"] = frames
        self.trace.append(e)

    def alloc(self, size, stack):
        size = (size + 511) // 512 * 512
        frames = list(STACKS[stack])  # one list per allocation, shared by its block and entries
        fits = [(b["size"], s, i) for s in self.segments for i, b in enumerate(s["blocks"]) if not b["allocated"] and b["size"] >= size]
        if fits:
            _, seg, i = min(fits, key=lambda f: f[0])
        else:
            total = max(2 * MIB, (size + 2 * MIB - 1) // (2 * MIB) * (2 * MIB))
            seg = {"address": self.next_address, "size": total, "blocks": [{"offset": 0, "size": total, "allocated": False}]}
            self.next_address += total + 64 * MIB
            self.segments.append(seg)
            self.event("segment_alloc", seg["address"], total, frames)
            i = 0
        b = seg["blocks"][i]
        if b["size"] > size:
            seg["blocks"].insert(i + 1, {"offset": b["offset"] + size, "size": b["size"] - size, "allocated": False})
        b.update(size=size, allocated=True, frames=frames)
        addr = seg["address"] + b["offset"]
        self.event("alloc", addr, size, frames)
        return addr

    def free(self, addr):
        for seg in self.segments:
            for i, b in enumerate(seg["blocks"]):
                if b["allocated"] and seg["address"] + b["offset"] == addr:
                    self.event("free_requested", addr, b["size"], b["frames"])
                    self.event("free_completed", addr, b["size"], b["frames"])
                    b["allocated"] = False
                    b.pop("frames")
                    blocks = seg["blocks"]
                    j = 0
                    while j + 1 < len(blocks):  # merge neighbouring free blocks
                        if not blocks[j]["allocated"] and not blocks[j + 1]["allocated"]:
                            blocks[j]["size"] += blocks.pop(j + 1)["size"]
                        else:
                            j += 1
                    return
        raise KeyError(addr)

    def oom(self, size, device_free):
        self.trace.append({"action": "oom", "device_free": device_free, "size": size, "stream": 0, "time_us": self.t, "frames": list(STACKS["big"])})

    def segments_dict(self):
        out = []
        empty = []
        for seg in self.segments:
            blocks = [{"address": seg["address"] + b["offset"], "size": b["size"], "requested_size": b["size"] if b["allocated"] else 0,
                       "state": "active_allocated" if b["allocated"] else "inactive", "frames": b.get("frames", empty)}
                      for b in seg["blocks"]]
            allocated = sum(b["size"] for b in blocks if b["state"] == "active_allocated")
            out.append({"device": self.device, "address": seg["address"], "total_size": seg["size"], "allocated_size": allocated,
                        "active_size": allocated, "requested_size": allocated, "stream": 0,
                        "segment_type": "large" if seg["size"] > 2 * MIB else "small", "segment_pool_id": (0, 0),
                        "is_expandable": False, "frames": empty, "blocks": blocks})
        return out


def snapshot(allocator, devices):
    traces = [[] for _ in range(devices)]
    traces[allocator.device] = allocator.trace
    return {"segments": allocator.segments_dict(), "device_traces": traces,
            "allocator_settings": {"PYTORCH_CUDA_ALLOC_CONF": "", "max_split_size": -1, "roundup_power2_divisions": {"1": 0, "2": 0}},
            "external_annotations": [], "some_future_key": {"ignored": [1, 2, 3]}}


def leak():
    """200 steps of 50 ms on device 1 (device 0 idle): 2 MiB of weights, temporaries, and one
    256 KiB tensor kept per step at train.py:21."""
    a = Allocator(1)
    a.alloc(2 * MIB, "weights")
    for _ in range(200):
        temps = [a.alloc(512 * 1024, "temp") for _ in range(3)]
        a.tick(2000)
        for t in temps:
            a.free(t)
        a.alloc(256 * 1024, "keep")
        a.tick(48000)
    return snapshot(a, 2)


def stable():
    """The same loop keeping nothing."""
    a = Allocator(0)
    a.alloc(2 * MIB, "weights")
    for _ in range(200):
        temps = [a.alloc(512 * 1024, "temp") for _ in range(3)]
        a.tick(2000)
        for t in temps:
            a.free(t)
        a.tick(48000)
    return snapshot(a, 1)


def fragmented():
    """A 64 GiB segment cut into 24 and 8 GiB pieces, the 24 GiB ones freed: 48 GiB free in
    holes of 24 GiB, then a 32 GiB request that fails (the device has 10 GiB free)."""
    a = Allocator(0)
    whole = a.alloc(64 * GIB, "piece")
    a.tick()
    a.free(whole)
    pieces = []
    for i in range(4):
        pieces.append(a.alloc((24 if i % 2 == 0 else 8) * GIB, "piece"))
        a.tick()
    for i in (0, 2):
        a.free(pieces[i])
        a.tick()
    a.oom(32 * GIB, 10 * GIB)
    return snapshot(a, 1)


if __name__ == "__main__":
    here = os.path.dirname(os.path.abspath(__file__))
    for name, make in (("leak", leak), ("stable", stable), ("fragmented", fragmented)):
        with open(os.path.join(here, "synthetic_%s.pickle" % name), "wb") as f:
            pickle.dump(make(), f, protocol=4)
