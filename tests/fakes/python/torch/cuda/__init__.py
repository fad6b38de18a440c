import os
import traceback
import weakref

from . import memory

_initialized = False
_queued = []
_live = {}
_peak = 0
_reserved = 0


class _Block:
    pass


def _lazy_call(fn):
    if _initialized:
        fn()
    else:
        _queued.append(fn)


def is_initialized():
    return _initialized


def memory_allocated():
    return sum(size for size, _ in _live.values())


def max_memory_allocated():
    return _peak


def memory_reserved():
    """The stand-in's cache: every block rounded up to 2 MiB, never given back before exit."""
    return _reserved


def memory_stats_as_nested_dict():
    return {"allocated_bytes": {"all": {"current": memory_allocated()}},
            "reserved_bytes": {"all": {"current": memory_reserved()}}}


def _allocate(nbytes):
    global _initialized, _peak, _reserved
    if not _initialized:
        _initialized = True
        for fn in _queued:
            fn()
    capacity = int(os.environ.get("FAKE_TORCH_CAPACITY", "0"))
    if capacity and memory_allocated() + nbytes > capacity:
        import torch

        for observer in torch._C._oom_observers:
            observer(0, nbytes, memory_allocated(), capacity - memory_allocated())
        raise torch.OutOfMemoryError("CUDA out of memory. Tried to allocate %d bytes." % nbytes)
    frames = []
    if memory._recording:
        frames = [{"filename": f.filename, "line": f.lineno, "name": f.name}
                  for f in reversed(traceback.extract_stack()[:-1])]
    block = _Block()
    key = id(block)
    _live[key] = (nbytes, frames)
    weakref.finalize(block, _live.pop, key, None).atexit = False  # alive at exit, as tensors are
    _peak = max(_peak, memory_allocated())
    _reserved = max(_reserved, (memory_allocated() + (2 << 20) - 1) // (2 << 20) * (2 << 20))
    return block
