"""A stand-in for PyTorch, for tests only (tests/cli/run_trace_python.sh): the few names
vramdoc's hook uses (--trace-python, the step hook, the --gpu-memory cap), with PyTorch's behaviour: CUDA initialises lazily on the first
allocation and runs the calls queued by torch.cuda._lazy_call; while _record_memory_history is
on, each allocation keeps its Python stack (innermost first); _snapshot() lists live blocks; past
$FAKE_TORCH_CAPACITY bytes an allocation calls the OOM observers, then raises OutOfMemoryError."""
__version__ = "0.0+fake"


class OutOfMemoryError(RuntimeError):
    pass


from . import _C, cuda, optim  # noqa: E402


def empty_cuda(nbytes):
    """Allocates `nbytes` of fake device memory and returns the handle that keeps it alive."""
    return cuda._allocate(nbytes)
