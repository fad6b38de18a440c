# vramdoc's Python hook for `vramdoc run`: the step hook (on by default, docs/run-analyze.md) and
# --trace-python (docs/trace.md, "Python lines").
#
# vramdoc writes this file into a folder of its own and puts that folder first on the job's
# PYTHONPATH, so every Python process of the job loads it at start-up. With VRAMDOC_STEP_HOOK=1,
# once torch is imported, a global optimizer step post-hook appends, after each step of the first
# optimizer that steps in a process that has initialised CUDA, one line to $VRAMDOC_MARK_FILE:
#   step N allocated=BYTES reserved=BYTES peak=BYTES pid=PID [rank=R]
# (torch.cuda.memory_allocated() / memory_reserved() and memory_stats()'s allocated_bytes.all.peak:
# host-side counters, no CUDA sync; the peak is never reset here: the job may read it).
# With VRAMDOC_PYTHON_TRACE_DIR (--trace-python) it also:
#   1. runs the sitecustomize module it shadows, if the environment has one;
#   2. waits for `import torch` (a finder on sys.meta_path; nothing else is imported early);
#   3. once CUDA is initialised in the process (torch.cuda._lazy_call: a process that never uses
#      CUDA is left alone), asks PyTorch's caching allocator to keep the Python stack of every
#      live block (torch.cuda.memory._record_memory_history(enabled="state", stacks="python"));
#   4. at exit, groups the live blocks by stack and writes VRAMDOC_PYTHON_TRACE_DIR/python.PID.json
#      (format in docs/trace-format.md), which vramdoc reads after the job; at the process's first
#      out-of-memory error (an allocator OOM observer, called before PyTorch raises) it pickles
#      PyTorch's own snapshot of that moment, with the failed request added under "vramdoc_oom",
#      to python.PID.oom.pickle (read like any snapshot: docs/snapshots.md).
# With VRAMDOC_GPU_MEMORY_BYTES (vramdoc probe --gpu-memory SIZE) it holds the job to a card of
# SIZE: once CUDA is initialised, the allocator of the current device is capped with
# torch.cuda.set_per_process_memory_fraction((SIZE - outside) / total), where outside is what the
# driver charges the process beyond the allocator (the CUDA context), measured in the process at
# initialisation and after every optimizer step (it grows as kernels load; the cap follows it);
# VRAMDOC_GPU_OUTSIDE_BYTES (probe's per-process estimate) bounds that where other processes share
# the device; a fraction the job sets itself applies when it is smaller.
# It never raises into the job: every step is guarded, and a failure is written into the JSON
# ("error") or, before a folder is known, ignored.
import atexit
import os
import sys

_VRAMDOC_DIR = os.environ.get("VRAMDOC_PYTHON_TRACE_DIR", "")
_VRAMDOC_STEP_HOOK = os.environ.get("VRAMDOC_STEP_HOOK", "") == "1" and os.environ.get("VRAMDOC_MARK_FILE", "")
_VRAMDOC_GPU_MEMORY = os.environ.get("VRAMDOC_GPU_MEMORY_BYTES", "")
_VRAMDOC_MAX_FRAMES = 24
_VRAMDOC_MAX_GROUPS = 200


def _vramdoc_run_shadowed_sitecustomize():
    import importlib.machinery
    import importlib.util

    # Other copies of this hook further down the path (vramdoc run inside vramdoc run) are skipped:
    # only the first one, with the innermost run's settings, hooks this process.
    skip = {os.path.dirname(os.path.abspath(__file__))}
    while True:
        path = [p for p in sys.path if os.path.abspath(p or os.curdir) not in skip]
        spec = importlib.machinery.PathFinder.find_spec("sitecustomize", path)
        if spec is None or spec.loader is None or not spec.origin:
            return
        try:
            with open(spec.origin) as f:
                ours = f.readline().startswith("# vramdoc's Python hook")
        except OSError:
            ours = False
        if not ours:
            break
        skip.add(os.path.dirname(os.path.abspath(spec.origin)))
    module = importlib.util.module_from_spec(spec)
    sys.modules["_vramdoc_shadowed_sitecustomize"] = module
    try:
        spec.loader.exec_module(module)
    except Exception as e:  # what Python itself does with a failing sitecustomize
        sys.stderr.write("Error in sitecustomize; set PYTHONVERBOSE for traceback:\n%s: %s\n" % (type(e).__name__, e))


def _vramdoc_write(record, suffix=""):
    """Writes the record to python.PID<suffix>.json atomically (a .part file renamed); never raises."""
    try:
        import json

        record.setdefault("format", "vramdoc-python-stacks")
        record.setdefault("version", 1)
        record.setdefault("pid", os.getpid())
        final = os.path.join(_VRAMDOC_DIR, "python.%d%s.json" % (os.getpid(), suffix))
        temporary = final + ".part"
        with open(temporary, "w") as f:
            json.dump(record, f)
        os.replace(temporary, final)
    except BaseException:
        pass


def _vramdoc_write_oom_snapshot(torch, oom):
    """Pickles torch.cuda.memory._snapshot() with `oom` under "vramdoc_oom" to python.PID.oom.pickle
    atomically (plain dicts, lists and numbers only); a failure goes into python.PID.oom.json."""
    try:
        import pickle

        snapshot = torch.cuda.memory._snapshot()
        snapshot["vramdoc_oom"] = dict(oom, torch=str(torch.__version__), pid=os.getpid())
        final = os.path.join(_VRAMDOC_DIR, "python.%d.oom.pickle" % os.getpid())
        temporary = final + ".part"
        with open(temporary, "wb") as f:
            pickle.dump(snapshot, f, protocol=4)
        os.replace(temporary, final)
    except BaseException as e:
        _vramdoc_write({"when": "oom", "error": "%s: %s" % (type(e).__name__, e)}, ".oom")


def _vramdoc_library_roots(torch):
    import site
    import sysconfig

    roots = set()
    for key in ("stdlib", "platstdlib", "purelib", "platlib"):
        p = sysconfig.get_paths().get(key)
        if p:
            roots.add(os.path.realpath(p))
    try:
        roots.update(os.path.realpath(p) for p in site.getsitepackages())
        roots.add(os.path.realpath(site.getusersitepackages()))
    except Exception:
        pass
    roots.add(os.path.realpath(os.path.dirname(torch.__file__)))
    return tuple(r.rstrip(os.sep) + os.sep for r in roots)


def _vramdoc_snapshot(torch):
    """Groups the live blocks by device and stack and writes them to python.PID.json (at exit)."""
    try:
        if not torch.cuda.is_initialized():
            return
        snapshot = torch.cuda.memory._snapshot()
        roots = _vramdoc_library_roots(torch)
        groups = {}
        for segment in snapshot.get("segments", []):
            device = int(segment.get("device", 0))
            for block in segment.get("blocks", []):
                if block.get("state") != "active_allocated":
                    continue
                frames = tuple((str(f.get("filename", "")), int(f.get("line", 0)), str(f.get("name", "")))
                               for f in (block.get("frames") or [])[:_VRAMDOC_MAX_FRAMES])
                group = groups.setdefault((device, frames), [0, 0])
                group[0] += int(block.get("size", 0))
                group[1] += 1

        def library(filename):
            if filename.startswith("<"):
                return True
            return os.path.realpath(filename).startswith(roots)

        ordered = sorted(groups.items(), key=lambda item: -item[1][0])
        record = {
            "when": "exit",
            "torch": str(torch.__version__),
            "allocated_bytes": int(torch.cuda.memory_allocated()),
            "peak_allocated_bytes": int(torch.cuda.max_memory_allocated()),
            "groups": [{"device": device, "bytes": size, "count": count,
                        "frames": [{"file": f, "line": line, "function": name, "library": library(f)}
                                   for f, line, name in frames]}
                       for (device, frames), (size, count) in ordered[:_VRAMDOC_MAX_GROUPS]],
            "groups_left_out": max(0, len(ordered) - _VRAMDOC_MAX_GROUPS),
        }
        _vramdoc_write(record)
    except BaseException as e:
        _vramdoc_write({"when": "exit", "error": "%s: %s" % (type(e).__name__, e)})


def _vramdoc_rank():
    """The process's rank from the launcher's environment (torchrun, Slurm, Open MPI), or None."""
    for key in ("RANK", "SLURM_PROCID", "OMPI_COMM_WORLD_RANK", "PMI_RANK"):
        value = os.environ.get(key, "")
        if value.isdigit():
            return value
    return None


def _vramdoc_step_hook(torch):
    """Registers the global optimizer step post-hook that writes one marker line per step, and the
    marks of jobs without optimizer steps (forward calls of the top module), of phases (the top
    module's eval() / train() switches) and of the allocator's settings (docs/run-analyze.md)."""
    state = {"fd": -1, "first": None, "step": 0, "forward": 0, "tag": "", "off": False, "stepped": False,
             "settings": False, "modes": {}, "sizes": {}, "largest": 0, "in_train": False, "depth": 0,
             "top": None, "same": 0, "handles": []}

    def manual():
        marks = sys.modules.get("vramdoc._marks")  # the job marks its steps itself (vramdoc.mark_step, a callback)
        return marks is not None and getattr(marks, "manual_steps", False)

    def announce():
        """Once CUDA is initialised: `allocator [PYTORCH_CUDA_ALLOC_CONF=...] pid=P`, the settings in
        effect, which also says the hook watches this process (an OOM before any unit end is then
        inside the first one)."""
        if state["fd"] < 0:
            state["fd"] = os.open(_VRAMDOC_STEP_HOOK, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
            rank = _vramdoc_rank()
            state["tag"] = " pid=%d" % os.getpid() + (" rank=%s" % rank if rank is not None else "")
        if not state["settings"]:
            state["settings"] = True
            settings = ["%s=%s" % (key, "".join(os.environ[key].split())[:120])
                        for key in ("PYTORCH_CUDA_ALLOC_CONF", "PYTORCH_ALLOC_CONF") if os.environ.get(key)]
            os.write(state["fd"], ("allocator %s%s\n" % (" ".join(settings) or "default", state["tag"])).encode())

    def emit(label):
        """Appends `label allocated=A reserved=R peak=P pid=P [rank=K]` with one write (lines of
        several processes stay whole). peak: the allocator's largest allocated bytes since the
        process started or the job's own reset_peak_memory_stats(); never reset here."""
        announce()
        # memory_allocated() and memory_reserved() each flatten and sort all the allocator's
        # statistics; the nested dict holds the same two counters for one call.
        stats = torch.cuda.memory_stats_as_nested_dict()
        allocated = stats["allocated_bytes"]["all"]
        line = "%s allocated=%d reserved=%d peak=%d%s\n" % (label, allocated["current"], stats["reserved_bytes"]["all"]["current"],
                                                            allocated["peak"], state["tag"])
        os.write(state["fd"], line.encode())

    def after_step(optimizer, args, kwargs):
        if state["off"] or manual():
            return
        try:
            first = state["first"] and state["first"]()
            if first is None:  # the first optimizer of the process, or a new one after it was dropped
                if not torch.cuda.is_initialized():
                    return  # a process without CUDA (CPU training, a worker): nothing to mark
                import weakref

                state["first"] = weakref.ref(optimizer)
                if not state["stepped"]:
                    # Optimizer steps are the unit now: forward calls are marked only in evaluation
                    # (the top module in eval mode), where the phase's growth is told from them.
                    state["stepped"] = True
                    for handle in state["handles"]:
                        handle.remove()
                    top = state["top"] and state["top"]()
                    state["handles"] = [top.register_forward_hook(mark_evaluation)] if top is not None else []
            elif first is not optimizer:
                return  # a second optimizer (a GAN's): the first one's steps are the steps
            emit("step %d" % state["step"])
            state["step"] += 1
        except Exception:  # never into the job (a KeyboardInterrupt still reaches it), and never again
            state["off"] = True

    def parameter_count(module):
        key = id(module)
        if key not in state["sizes"]:
            state["sizes"][key] = sum(p.numel() for p in module.parameters())
        return state["sizes"][key]

    # Without optimizer steps (a serving loop, an evaluation script) the unit is a forward call of
    # the top module: the largest module called from outside any other module's forward.
    def before_forward(module, args):
        state["depth"] += 1

    def after_forward(module, args, output):
        state["depth"] = max(0, state["depth"] - 1)
        if state["off"] or state["stepped"] or state["depth"] or manual() or not torch.cuda.is_initialized():
            return
        try:
            size = parameter_count(module)
            if size == 0 or size < state["largest"]:
                return
            state["largest"] = size
            mark_forward()
            # The same top module 8 times: hook it alone; the global hooks (run for every
            # module's call) go.
            top = state["top"] and state["top"]()
            if top is not module:
                import weakref

                state["top"], state["same"] = weakref.ref(module), 0
            state["same"] += 1
            if state["same"] >= 8:
                for handle in state["handles"]:
                    handle.remove()
                state["handles"] = [module.register_forward_hook(lambda m, a, o: mark_forward())]
        except Exception:
            state["off"] = True

    def mark_evaluation(module, args, output):
        if not module.training:
            state["stepped"] = False
            try:
                mark_forward()
            finally:
                state["stepped"] = True

    def mark_forward():
        if state["off"] or state["stepped"] or manual():
            return
        try:
            emit("forward %d" % state["forward"])
            state["forward"] += 1
        except Exception:
            state["off"] = True

    # Phases: an eval() / train() switch of a top module (train() calls itself on each child: only
    # the outermost call counts), marked when its mode changes; the Trainer calls train() every step.
    # (a torch without nn.Module, as the tests' stand-in is, gets no phase marks: never an error in the job)
    original_train = getattr(getattr(getattr(torch, "nn", None), "Module", None), "train", None)

    def train(module, mode=True):
        outer = not state["in_train"]
        state["in_train"] = True
        try:
            result = original_train(module, mode)
        finally:
            if outer:
                state["in_train"] = False
        if outer and not state["off"] and torch.cuda.is_initialized():
            try:
                size = parameter_count(module)
                changed = state["modes"].get(id(module)) != bool(mode)
                state["modes"][id(module)] = bool(mode)
                if changed and size > 0 and 2 * size >= state["largest"] and not manual():
                    state["largest"] = max(state["largest"], size)
                    emit("phase %s" % ("train" if mode else "eval"))
            except Exception:
                state["off"] = True
        return result

    # The per-process memory fraction (the allocator's limit, below the card's capacity).
    def wrap_fraction(original):
        def set_per_process_memory_fraction(fraction, device=None):
            result = original(fraction, device)
            try:
                index = torch.cuda.current_device() if device is None else torch.cuda._utils._get_device_index(device)
                total = torch.cuda.get_device_properties(index).total_memory
                emit("allocator fraction=%g limit_bytes=%d device=%d" % (float(fraction), int(float(fraction) * total), index))
            except Exception:
                pass
            return result
        return set_per_process_memory_fraction

    def announce_safely():
        try:
            if not state["off"]:
                announce()
        except Exception:
            state["off"] = True

    try:
        torch.cuda._lazy_call(announce_safely)
    except BaseException:
        pass
    try:
        import torch.optim.optimizer as optimizer_module

        optimizer_module.register_optimizer_step_post_hook(after_step)
    except BaseException:
        pass  # a torch without global step hooks (before 2.0): no step marks
    try:
        import torch.nn.modules.module as module_module

        state["handles"].append(module_module.register_module_forward_pre_hook(before_forward))
        try:
            state["handles"].append(module_module.register_module_forward_hook(after_forward, always_call=True))
        except TypeError:
            state["handles"].append(module_module.register_module_forward_hook(after_forward))
        if original_train is not None:
            torch.nn.Module.train = train
    except BaseException:
        pass
    try:  # on its own: a torch without nn.Module (the tests' stand-in) still has its fraction marked
        fraction = torch.cuda.memory.set_per_process_memory_fraction
        wrapped = wrap_fraction(fraction)
        torch.cuda.memory.set_per_process_memory_fraction = wrapped
        if getattr(torch.cuda, "set_per_process_memory_fraction", None) is fraction:
            torch.cuda.set_per_process_memory_fraction = wrapped
    except BaseException:
        pass


def _vramdoc_gpu_memory_cap(torch):
    """Caps the allocator of the current device so that the process's memory stays within
    VRAMDOC_GPU_MEMORY_BYTES (see the top of this file); the job's own smaller fraction wins.

    What lies outside the allocator is measured in this process, at one instant: the device's used
    memory less the allocator's reserved bytes (the CUDA context, lazily loaded kernels, libraries'
    own buffers), at CUDA's initialisation and again after every optimizer step, when it only grows:
    a real card of SIZE leaves the allocator less as the context grows. When the cap drops below
    what the allocator holds, its cache is emptied once, so that growth meets the cap (PyTorch
    checks the fraction only when it asks the driver for more). VRAMDOC_GPU_OUTSIDE_BYTES (probe's
    per-process estimate from earlier trials' samples) bounds the measurement, and stands in where
    the device holds more than this process can (more than a quarter of SIZE outside the allocator)."""
    size = int(_VRAMDOC_GPU_MEMORY)
    outside_given = os.environ.get("VRAMDOC_GPU_OUTSIDE_BYTES", "")
    state = {"fraction": None, "outside": None, "job": None}
    job_fraction = torch.cuda.memory.set_per_process_memory_fraction  # the step hook's wrapper, when it is on

    given = int(outside_given) if outside_given.isdigit() else None

    def outside_now(index):
        """Bytes this process holds outside the allocator now, or None when others share the device.
        The device's used memory counts other processes too: probe's per-process estimate (NVML's
        number for this job's earlier trials), when given, bounds it (H200 2026-12-02: a trial beside
        another job's 2.41 GiB was capped at 13.04 of 16 GiB)."""
        free, total = torch.cuda.mem_get_info(index)
        outside = (total - free) - torch.cuda.memory_reserved(index)
        if given is not None and outside > given:
            outside = given
        return (outside if 0 <= outside <= size // 4 else None), total

    def cap(index, outside, total):
        fraction = float(size - outside) / float(total)
        if not 0 < fraction < 1:
            return False
        state["fraction"], state["outside"] = fraction, outside
        job_fraction(min(fraction, state["job"]) if state["job"] is not None else fraction)
        return True

    def apply():
        try:
            index = torch.cuda.current_device()
            outside, total = outside_now(index)
            if outside is None:
                outside = given if given is not None else 0
            cap(index, outside, total)
        except BaseException:
            pass

    def after_step(optimizer, args, kwargs):
        try:
            if state["fraction"] is None or not torch.cuda.is_initialized():
                return
            index = torch.cuda.current_device()
            outside, total = outside_now(index)
            if outside is None or outside <= state["outside"] + (16 << 20):
                return
            if cap(index, outside, total) and torch.cuda.memory_reserved(index) > state["fraction"] * total:
                torch.cuda.empty_cache()
        except BaseException:
            pass

    def set_per_process_memory_fraction(fraction, device=None):
        try:
            torch.cuda.init()  # our cap first (apply() runs at initialisation), then the job's when smaller
            state["job"] = float(fraction)
            if state["fraction"] is not None:
                fraction = min(float(fraction), state["fraction"])
        except BaseException:
            pass
        return job_fraction(fraction, device)

    torch.cuda._lazy_call(apply)
    torch.cuda.memory.set_per_process_memory_fraction = set_per_process_memory_fraction
    if getattr(torch.cuda, "set_per_process_memory_fraction", None) is job_fraction:
        torch.cuda.set_per_process_memory_fraction = set_per_process_memory_fraction
    try:
        import torch.optim.optimizer as optimizer_module

        optimizer_module.register_optimizer_step_post_hook(after_step)
    except BaseException:
        pass  # no global step hooks (an old torch): the cap stays the one set at initialisation


def _vramdoc_start(torch):
    if _VRAMDOC_STEP_HOOK:
        try:
            _vramdoc_step_hook(torch)
        except BaseException:
            pass  # the hook never takes the job down: without it, the job runs unmarked
    if _VRAMDOC_GPU_MEMORY.isdigit():
        try:
            _vramdoc_gpu_memory_cap(torch)
        except BaseException:
            pass  # without the cap the job has the whole card: probe's trials say so by their peaks
    if not _VRAMDOC_DIR:
        return
    oom_seen, failed = [], []

    def on_oom(device, requested, device_allocated, device_free):
        # Called by PyTorch's allocator before it raises OutOfMemoryError: what holds the memory
        # now is what made the request fail. The first one of the process is kept.
        try:
            if oom_seen:
                return
            oom_seen.append(True)
            _vramdoc_write_oom_snapshot(torch, {"device": int(device), "requested_bytes": int(requested),
                                                "device_allocated_bytes": int(device_allocated),
                                                "device_free_bytes": int(device_free)})
        except BaseException:
            pass

    def start():
        try:
            torch.cuda.memory._record_memory_history(enabled="state", context="alloc", stacks="python")
        except BaseException as e:
            failed.append(True)
            _vramdoc_write({"error": "torch.cuda.memory._record_memory_history: %s: %s" % (type(e).__name__, e)})
            return
        try:
            torch._C._cuda_attach_out_of_memory_observer(on_oom)
        except BaseException:
            pass  # an older torch: the exit record alone

    try:
        torch.cuda._lazy_call(start)
        atexit.register(lambda: failed or _vramdoc_snapshot(torch))
    except BaseException as e:
        _vramdoc_write({"error": "cannot hook torch %s: %s: %s" % (getattr(torch, "__version__", "?"), type(e).__name__, e)})


class _VramdocTorchFinder:
    """Finds `torch` with the normal path finder and runs _vramdoc_start once it has loaded."""

    def __init__(self):
        self.done = False

    def find_spec(self, name, path=None, target=None):
        if name != "torch" or self.done:
            return None
        self.done = True
        import importlib.machinery

        spec = importlib.machinery.PathFinder.find_spec(name, path)
        if spec is None or spec.loader is None or not hasattr(spec.loader, "exec_module"):
            return None
        load = spec.loader.exec_module

        def exec_module(module):
            load(module)
            _vramdoc_start(module)

        spec.loader.exec_module = exec_module
        return spec


try:
    _vramdoc_run_shadowed_sitecustomize()
except BaseException:
    pass
if (_VRAMDOC_DIR or _VRAMDOC_STEP_HOOK or _VRAMDOC_GPU_MEMORY) and "torch" not in sys.modules:
    sys.meta_path.insert(0, _VramdocTorchFinder())
