"""What to say at an out-of-memory error: vramdoc's own diagnosis of the job's memory so far.

Under `vramdoc run` the job's timeline file is known ($VRAMDOC_TIMELINE): `vramdoc analyze` reads
it as it stands. Outside, the advisor diagnoses the step-end readings it kept itself (PyTorch's
allocated / reserved bytes at each step, and the device's used memory): written as a timeline in
the shared timeline JSON format (docs/timeline-format.md), where `process_used` is PyTorch's
reserved bytes, the closest figure PyTorch has to the driver's (it leaves out the CUDA context).
"""
from __future__ import annotations

import json
import os
import sys
import tempfile
import time
from typing import Any, Dict, List, Optional, TextIO

from vramdoc._api import VramdocError, analyze

_MAX_READINGS = 20000  # a long job keeps every step's reading up to this, then every other one


def is_out_of_memory(error: BaseException) -> bool:
    """True for PyTorch's CUDA out-of-memory error (torch.OutOfMemoryError or its message)."""
    torch = sys.modules.get("torch")
    kind = getattr(torch, "OutOfMemoryError", None) if torch is not None else None
    if kind is not None and isinstance(error, kind):
        return True
    return isinstance(error, RuntimeError) and "out of memory" in str(error).lower()


def _last_time(lines: List[bytes]) -> float:
    """The time of the last complete record of a version 1 or 2 recording (0 when none)."""
    for line in reversed(lines):
        try:
            record = json.loads(line)
        except ValueError:
            continue
        if isinstance(record, list) and record and isinstance(record[0], (int, float)):
            return float(record[0])
        if isinstance(record, dict) and isinstance(record.get("t"), (int, float)):
            return float(record["t"])
    return 0.0


def _ending_in_oom(recorded: bytes, message: str) -> bytes:
    """`vramdoc run`'s recording as it stands (a line still being written dropped), then the OOM
    message and an end record saying the job ran out of memory (docs/timeline-format.md)."""
    lines = recorded.split(b"\n")[:-1]  # the part after the last newline is incomplete
    t = _last_time(lines)
    tail = [json.dumps({"t": t, "oom_message": message[:2000]}),
            json.dumps({"end": {"t": t, "outcome": "oom", "exit_status": 1}})]
    return b"\n".join(lines + [x.encode("utf-8") for x in tail]) + b"\n"


class OomAdvisor:
    """Keeps the step-end readings of a job and, at an out-of-memory error, prints the verdict."""

    def __init__(self, stream: Optional[TextIO] = None):
        self.start = time.monotonic()
        self.readings: List[List[Any]] = []
        self.marks: List[List[Any]] = []
        self.total: Optional[int] = None
        self.stream = stream
        self.reported = False

    def record_step(self, step: Optional[int]) -> None:
        """Keeps PyTorch's bytes at the end of `step` (host-side counters: no synchronisation);
        step None: a reading without a mark (the moment of the error)."""
        torch = sys.modules.get("torch")
        try:
            if torch is None or not torch.cuda.is_initialized():
                return
            allocated, reserved = torch.cuda.memory_allocated(), torch.cuda.memory_reserved()
            if self.total is None:
                self.total = torch.cuda.get_device_properties(torch.cuda.current_device()).total_memory
        except Exception:
            return
        t = round(time.monotonic() - self.start, 4)
        self.readings.append([t, reserved, allocated, reserved])
        if step is not None:
            self.marks.append([t, f"step {step}", allocated, reserved])
        if len(self.readings) > _MAX_READINGS:
            self.readings, self.marks = self.readings[::2], self.marks[::2]

    def timeline_document(self, error: BaseException) -> Dict[str, Any]:
        """The readings as a timeline in the shared timeline JSON format, ending in the OOM."""
        doc: Dict[str, Any] = {"name": "vramdoc-callback", "outcome": "oom", "message": str(error)[:2000],
                               "columns": ["t", "process_used", "torch_allocated", "torch_reserved"],
                               "samples": self.readings, "marks": self.marks}
        if self.total:
            doc["total"] = self.total
        return doc

    def diagnose(self, error: BaseException) -> Optional[Dict[str, Any]]:
        """vramdoc's diagnosis (analyze --json) of the job's memory so far; None when it cannot."""
        timeline = os.environ.get("VRAMDOC_TIMELINE", "")
        try:
            with tempfile.TemporaryDirectory(prefix="vramdoc-oom-") as tmp:
                path = os.path.join(tmp, "timeline.json")
                if timeline and os.path.isfile(timeline):
                    # run's recording so far has no end yet: a copy that ends in this error, as run would write it
                    with open(timeline, "rb") as f:
                        recorded = f.read()
                    with open(path, "wb") as f:
                        f.write(_ending_in_oom(recorded, str(error)))
                elif not self.marks:  # no step ended before the error: nothing to compare with
                    return None
                else:
                    with open(path, "w", encoding="utf-8") as f:
                        json.dump(self.timeline_document(error), f)
                return analyze(path)
        except (VramdocError, OSError):
            return None

    def report(self, error: BaseException) -> Optional[Dict[str, Any]]:
        """At an out-of-memory error (once per process): prints the verdict and the remedies."""
        if self.reported or not is_out_of_memory(error):
            return None
        self.reported = True
        self.record_step(None)  # what was held when the request failed
        diagnosis = self.diagnose(error)
        stream = self.stream or sys.stderr
        if diagnosis is None:
            stream.write("vramdoc: out of memory; no memory readings to diagnose (run the job under "
                         "`vramdoc run -- ...` for a timeline)\n")
            return None
        lines = [f"vramdoc: out of memory. verdict: {diagnosis.get('verdict', '?')}: {diagnosis.get('summary', '')}"]
        lines += [f"  - {r}" for r in diagnosis.get("remedies", [])]
        stream.write("\n".join(lines) + "\n")
        stream.flush()
        return diagnosis
