import os
import traceback
import weakref

from . import memory
from .memory import set_per_process_memory_fraction  # noqa: F401  (torch.cuda's name for it)

_initialized = False
_queued = []
_live = {}
_peak = 0
_reserved = 0


class _Block:
    pass


_TOTAL = int(os.environ.get("FAKE_TORCH_TOTAL", str(80 << 30)))  # the device's memory
_CONTEXT = int(os.environ.get("FAKE_TORCH_CONTEXT", "0"))  # what the driver charges beyond the allocator
_OTHERS = int(os.environ.get("FAKE_TORCH_OTHERS", "0"))  # what other processes hold on the device
_fraction_capacity = 0  # set_per_process_memory_fraction's cap, bytes (0: none)


def init():
    if not _initialized:
        _initialize()


def _initialize():
    global _initialized
    _initialized = True
    for fn in _queued:
        fn()


def current_device():
    return 0


def mem_get_info(device=None):
    """(free, total) of the device: the context, the cache and other processes' memory are in use."""
    init()
    return _TOTAL - _CONTEXT - _OTHERS - _reserved, _TOTAL


class _Properties:
    total_memory = _TOTAL


def get_device_properties(device=None):
    return _Properties()


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


def memory_reserved(device=None):
    """The stand-in's cache: every block rounded up to 2 MiB, given back only by empty_cache()."""
    return _reserved


def empty_cache():
    """Gives the cache back: what stays reserved is what is allocated (rounded up to 2 MiB)."""
    global _reserved
    _reserved = (memory_allocated() + (2 << 20) - 1) // (2 << 20) * (2 << 20)


def memory_stats_as_nested_dict():
    return {"allocated_bytes": {"all": {"current": memory_allocated(), "peak": max_memory_allocated()}},
            "reserved_bytes": {"all": {"current": memory_reserved()}}}


def _allocate(nbytes):
    global _peak, _reserved
    init()
    capacity = int(os.environ.get("FAKE_TORCH_CAPACITY", "0"))
    if _fraction_capacity:
        capacity = min(capacity, _fraction_capacity) if capacity else _fraction_capacity
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
