#!/usr/bin/env python3
"""Writes a small .vdt trace (docs/trace-format.md) from the format's description alone, so the
report test also checks that the document and the reader agree. Version 1 by default; with
--module PATH --build-id HEX, version 2 with that module path and build-id.
usage: make_trace.py OUT.vdt [--truncate N] [--module PATH --build-id HEX]"""
import struct
import sys

args = sys.argv[2:]
opt = {args[i]: args[i + 1] for i in range(0, len(args) - 1, 2)}
VERSION = 2 if "--build-id" in opt else 1

MODULE, FRAME, EVENT = 1, 2, 3
ALLOC, FREE, FAILED = 1, 2, 3
DEVICE, ASYNC, VMM = 1, 4, 5
MiB = 1 << 20


def record(kind, payload):
    return struct.pack("<HH", kind, len(payload)) + payload


def module(bias, start, end, path, build_id=b""):
    fixed = struct.pack("<QQQ", bias, start, end)
    if VERSION >= 2:
        fixed += struct.pack("<B", len(build_id)) + build_id
    return record(MODULE, fixed + path.encode())


def frame(node, parent, ip):
    return record(FRAME, struct.pack("<IIQ", node, parent, ip))


def event(t_ns, op, kind, address, size, stack, stream=0, device=0, api=245):
    return record(EVENT, struct.pack("<QQQQIIBBH", t_ns, address, size, stream, stack, device, op, kind, api))


out = b"VDTRACE\0" + struct.pack("<IIQ", VERSION, 77, 1_700_000_000_000_000_000)
out += module(0x400000, 0x401000, 0x480000, opt.get("--module", "/nonexistent/train"),
              bytes.fromhex(opt.get("--build-id", "")))
out += frame(1, 0, 0x401100) + frame(2, 1, 0x402200) + frame(3, 1, 0x403300) + frame(4, 2, 0x404400)
out += event(1_000_000, ALLOC, DEVICE, 0xA0000000, 64 * MiB, 2)      # weights: freed at the end
out += event(2_000_000, ALLOC, DEVICE, 0xB0000000, 1 * MiB, 4)       # leak, twice
out += event(3_000_000, ALLOC, DEVICE, 0xB0100000, 1 * MiB, 4)
out += event(4_000_000, ALLOC, ASYNC, 0xC0000000, 512 * MiB, 3, stream=0x55)  # the peak
out += event(5_000_000, FREE, ASYNC, 0xC0000000, 0, 0, stream=0x55)
out += event(6_000_000, FAILED, DEVICE, 0, 80 << 30, 3)
out += event(7_000_000, ALLOC, VMM, 0x1234, 2 * MiB, 2)              # a leaked VMM handle
out += event(8_000_000, FREE, DEVICE, 0xA0000000, 0, 0)
out += event(9_000_000, FREE, DEVICE, 0xDEAD0000, 0, 0)              # allocated before tracing
if "--truncate" in opt:
    out = out[: len(out) - int(opt["--truncate"])]
open(sys.argv[1], "wb").write(out)
