_recording = False


def _record_memory_history(enabled="all", context="all", stacks="all", max_entries=None):
    global _recording
    _recording = enabled is not None


def _snapshot():
    from . import _live

    blocks = [{"size": n, "requested_size": n, "address": 0, "state": "active_allocated", "frames": fr}
              for n, fr in _live.values()]
    return {"segments": [{"device": 0, "blocks": blocks}]}
