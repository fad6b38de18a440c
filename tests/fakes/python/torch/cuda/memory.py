_recording = False


def _record_memory_history(enabled="all", context="all", stacks="all", max_entries=None):
    global _recording
    _recording = enabled is not None


def _snapshot():
    """PyTorch's layout: one segment per live block here, the block's frames list shared with its
    segment (one object, as PyTorch shares them; pickle writes a memo reference)."""
    from . import _live

    segments = [{"device": 0, "address": key, "total_size": n, "allocated_size": n, "active_size": n,
                 "requested_size": n, "stream": 0, "segment_type": "large", "segment_pool_id": (0, 0),
                 "is_expandable": False, "frames": fr,
                 "blocks": [{"address": key, "size": n, "requested_size": n, "state": "active_allocated", "frames": fr}]}
                for key, (n, fr) in _live.items()]
    return {"segments": segments, "device_traces": [[]], "allocator_settings": {}, "external_annotations": []}


def set_per_process_memory_fraction(fraction, device=None):
    """The allocator's cap: fraction x the device's memory (PyTorch's rule: 0 <= fraction <= 1)."""
    import torch.cuda as cuda

    if not 0 <= fraction <= 1:
        raise ValueError("Invalid fraction value: %s. Allowed range: 0~1" % fraction)
    cuda.init()
    cuda._fraction_capacity = int(fraction * cuda._TOTAL)
