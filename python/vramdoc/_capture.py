# vramdoc's capture: a PyTorch job run on the CPU with CUDA faked (docs/estimator.md, "Estimating a script").
#
# One module, shipped two ways: `vramdoc estimate -- python train.py` writes it as sitecustomize.py
# into a private folder first on the job's PYTHONPATH (VRAMDOC_CAPTURE_OUT names the trace file),
# and the pip package imports it for `vramdoc.capture()` / `vramdoc.estimate_step()`.
#
# Once torch is imported:
# - CUDA is faked as the target card: torch.cuda shows one device with its name, memory and compute
#   capability; nothing reaches a driver.
# - A tensor on "cuda", and a host tensor of 1 MiB or more, is a Fake: a wrapper that C++ sees as a
#   CPU tensor, holding a meta tensor (shape, strides, dtype, no data). A dispatch mode runs every
#   ATen op on the meta tensors: nothing is computed. A small tensor (<= 65536 elements) whose
#   inputs are known also carries its real value, so that `mask.all()` answers as in the real job.
# - A device storage is one allocation: its first tensor allocates it, its last one frees it (views,
#   detach and autograd's saved copies share it). The events go to the trace file in the format of
#   scripts/gpu/alloc_trace.py (`a SIZE ID STREAM [FRAMES]`, `f ID`), with `# phase NAME` after a
#   phase's last event (stepN.forward / .backward / .optimizer / .zero_grad), `k OP STREAM THREAD
#   INFO` after the outputs of an op whose kernel takes library workspaces (vramdoc's replay adds
#   them), `# note KIND WHERE: TEXT` (what could not be faked, what was assumed) and `# end REASON`.
# - torch.autocast("cuda") applies CUDA's autocast op lists and cast cache to these tensors.
# A failure inside the capture becomes a note or the job's own error; it never computes on a GPU.
import os
import sys

_ME = os.path.abspath(__file__)
HOST_FAKE_BYTES = 1 << 20
VALUE_NUMEL = 1 << 16
STATE = None  # the one Capture of this process


class Writer:
    """The trace file, one event a line; flushed at phases, every 4096 lines and at the end."""

    def __init__(self, path):
        self.f = open(path, "w", buffering=1 << 20)
        self.open = True
        self.next_id = 0
        self.lines = 0
        self.live = {}
        self.live_bytes = self.peak_bytes = 0
        self.f.write("# vramdoc allocator trace 2: a SIZE ID STREAM [FRAMES] | f ID | k OP STREAM THREAD INFO\n")

    def line(self, text, flush=False):
        if self.open:
            self.f.write(text)
            self.lines += 1
            if flush or self.lines % 4096 == 0:
                self.f.flush()

    def alloc(self, nbytes, stream, frames):
        i = self.next_id
        self.next_id += 1
        self.live[i] = (nbytes + 511) // 512 * 512
        self.live_bytes += self.live[i]
        self.peak_bytes = max(self.peak_bytes, self.live_bytes)
        self.line("a %d %d %d%s\n" % (nbytes, i, stream, (" " + frames) if frames else ""))
        return i

    def free(self, i):
        size = self.live.pop(i, None)
        if size is not None:
            self.live_bytes -= size
            self.line("f %d\n" % i)

    def comment(self, text):
        self.line("# %s\n" % " ".join(str(text).split()), flush=True)

    def close(self, reason):
        if self.open:
            self.comment("end " + reason)
            self.open = False
            self.f.close()


def settings_from_env(env=None):
    """The capture's settings from the environment vramdoc sets (each has a default)."""
    env = os.environ if env is None else env
    cc = (env.get("VRAMDOC_CAPTURE_GPU_CC") or "9.0").split(".")
    return dict(steps=int(env.get("VRAMDOC_CAPTURE_STEPS") or 3),
                name=env.get("VRAMDOC_CAPTURE_GPU_NAME") or "NVIDIA H200",
                total=int(env.get("VRAMDOC_CAPTURE_GPU_BYTES") or 150754820096),
                cc=(int(cc[0]), int(cc[1]) if len(cc) > 1 else 0),
                sms=int(env.get("VRAMDOC_CAPTURE_GPU_SMS") or 132),
                exit_when_done=True)


def start(path, settings):
    """Fakes CUDA in this process and records into `path`; the capture (one per process)."""
    global STATE
    if STATE is None:
        import torch
        try:  # torch._dynamo registers its rules for torch's own functions when imported: before ours
            import torch._dynamo  # noqa: F401
        except Exception:
            pass
        STATE = _build(torch, Writer(path), settings)
    return STATE


# CUDA's autocast policies (aten/src/ATen/autocast_mode.h, AT_FORALL_* and the CUDA block of
# autocast_mode.cpp, PyTorch 2.11; compared with its AutocastCUDA registrations on the H200): op name
# or name.overload.
AUTOCAST_LOWER = """_convolution.deprecated _convolution conv1d conv2d conv3d conv_tbc conv_transpose1d
    conv_transpose2d.input conv_transpose3d.input convolution prelu addmm addmv addr matmul einsum mm mv
    linalg_vecdot linear addbmm baddbmm bmm chain_matmul linalg_multi_dot _thnn_fused_lstm_cell
    _thnn_fused_gru_cell lstm_cell gru_cell rnn_tanh_cell rnn_relu_cell _scaled_dot_product_flash_attention
    scaled_dot_product_attention cudnn_convolution cudnn_convolution_transpose""".split()
AUTOCAST_FP32 = """acos asin cosh erfinv exp expm1 log log10 log2 log1p reciprocal rsqrt sinh tan pow.Tensor_Scalar
    pow.Tensor_Tensor pow.Scalar softplus layer_norm native_layer_norm group_norm frobenius_norm.dim nuclear_norm
    nuclear_norm.dim cosine_similarity poisson_nll_loss cosine_embedding_loss nll_loss nll_loss2d
    hinge_embedding_loss kl_div l1_loss smooth_l1_loss huber_loss mse_loss margin_ranking_loss
    multilabel_margin_loss soft_margin_loss triplet_margin_loss multi_margin_loss binary_cross_entropy_with_logits
    dist pdist cdist renorm logsumexp upsample_nearest1d _upsample_nearest_exact1d upsample_nearest2d
    _upsample_nearest_exact2d upsample_nearest3d _upsample_nearest_exact3d upsample_linear1d upsample_bilinear2d
    _upsample_bilinear2d_aa upsample_trilinear3d upsample_bicubic2d _upsample_bicubic2d_aa""".split()
AUTOCAST_FP32_OPT_DTYPE = """prod prod.dim_int prod.dim_Dimname softmax.int softmax.Dimname log_softmax.int
    log_softmax.Dimname cumprod cumprod.dimname cumsum cumsum.dimname linalg_vector_norm linalg_matrix_norm
    linalg_matrix_norm.str_ord sum sum.dim_IntList sum.dim_DimnameList""".split()
AUTOCAST_FP32_APPEND = {"norm.Scalar": "norm.ScalarOpt_dtype", "norm.ScalarOpt_dim": "norm.ScalarOpt_dim_dtype",
                        "norm.names_ScalarOpt_dim": "norm.names_ScalarOpt_dim_dtype"}
AUTOCAST_PROMOTE = "addcdiv addcmul atan2 bilinear cross dot vdot grid_sampler index_put tensordot scatter_add".split()

# Ops whose CUDA kernels use library workspaces or temporaries the meta kernels do not show (softmax's
# backward: grad * output; _safe_softmax: its -inf mask): the replay adds them at the `k` line
# (core/capture/workspaces.cpp).
KERNEL_OPS = set("""mm addmm bmm baddbmm addmv mv addbmm addr dot _addmm_activation _scaled_mm _int_mm
    convolution convolution_backward cudnn_convolution cudnn_convolution_transpose
    _scaled_dot_product_flash_attention _scaled_dot_product_flash_attention_backward
    _scaled_dot_product_efficient_attention _scaled_dot_product_efficient_attention_backward
    _scaled_dot_product_cudnn_attention _scaled_dot_product_cudnn_attention_backward
    _efficient_attention_forward _efficient_attention_backward _flash_attention_forward _flash_attention_backward
    embedding_dense_backward native_batch_norm_backward cudnn_batch_norm cudnn_batch_norm_backward
    nll_loss_forward _softmax_backward_data _safe_softmax sum mean""".split())
CONV_OPS = {"convolution", "convolution_backward", "cudnn_convolution", "cudnn_convolution_transpose"}
REDUCE_OPS = {"sum", "mean"}  # a reduction over leading dimensions gathers its blocks' results in a buffer


def sdp_choice(cc, query, key, value, attn_mask=None, dropout_p=0.0, is_causal=False, scale=None, enable_gqa=False):
    """The SDPA kernel CUDA would pick (sdp_utils.cpp select_sdp_backend): 3 cuDNN, 1 flash, 2
    memory-efficient, 0 math. Measured on the H200 with PyTorch 2.11 and cuDNN 9.19 (docs/estimator.md):
    every 16-bit call takes cuDNN's kernel (check_prefer_cudnn_attention: sm90 / sm100), fp32 the
    memory-efficient one, fp32 with grouped heads the math one."""
    import torch

    flags = torch.backends.cuda
    sm = cc[0] * 10 + cc[1]
    half = query.dtype in (torch.float16, torch.bfloat16)
    d_q, d_v = query.shape[-1], value.shape[-1]
    dense = query.dim() == 4 and key.dim() == 4 and value.dim() == 4
    grouped = dense and query.shape[-3] != key.shape[-3]
    on = lambda name: getattr(flags, name, lambda: True)()  # noqa: E731
    cudnn_first = cc in ((9, 0), (10, 0)) and os.environ.get("TORCH_CUDNN_SDPA_PREFERRED", "1") != "0"
    # every fused kernel needs the last dimension at stride 1 (check_last_dim_stride_equals_1_dense, a
    # head dim of 1 aside): a UNet's q = x.reshape(...).transpose(-1, -2) takes the math kernel
    unit_stride = (all(t.stride(-1) == 1 for t in (query, key, value)) or query.shape[-1] == 1) and (
        attn_mask is None or attn_mask.stride(-1) == 1)
    if dense and not unit_stride:
        return 0
    # cuDNN's kernel has no gradient for the mask: T5's learned position bias goes to the next backend
    mask_grad = attn_mask is not None and attn_mask.requires_grad and torch.is_grad_enabled()
    if (cudnn_first and on("cudnn_sdp_enabled") and half and dense and not mask_grad and d_q <= 256 and d_q % 8 == 0
            and d_v % 8 == 0):
        return 3
    if (on("flash_sdp_enabled") and half and sm >= 80 and dense and attn_mask is None and d_q == d_v
            and d_q <= 256 and d_q % 8 == 0):
        return 1
    align = 8 if half else 4
    if (on("mem_efficient_sdp_enabled") and sm >= 50 and (query.dtype != torch.bfloat16 or sm >= 80) and dense
            and not (grouped and not half) and query.dtype in (torch.float16, torch.bfloat16, torch.float32)
            and d_q % align == 0 and d_v % align == 0):
        return 2
    return 0


def _frame_text(f):
    return "%s:%d:%s" % (os.path.basename(f.f_code.co_filename), f.f_lineno, f.f_code.co_name)


def _build(torch, writer, settings):  # noqa: C901 (one closure over torch, by design)
    import threading
    import weakref
    from torch.utils._pytree import tree_flatten, tree_unflatten
    from torch.utils._python_dispatch import TorchDispatchMode

    aten = torch.ops.aten
    META, CPU, CUDA = torch.device("meta"), torch.device("cpu"), torch.device("cuda", 0)
    no_subclass = getattr(torch._C, "DisableTorchFunctionSubclass", torch._C.DisableTorchFunction)
    torch_dir = os.path.dirname(os.path.abspath(torch.__file__)) + os.sep
    main_file = os.path.abspath(sys.argv[0]) if sys.argv and sys.argv[0] else ""

    def storage_key(t):
        try:
            return t.untyped_storage()._cdata
        except AttributeError:
            return t.storage()._storage._cdata

    def storage_bytes(t):
        try:
            return t.untyped_storage().nbytes()
        except AttributeError:
            return t.storage().nbytes()

    class Rec:
        """One storage: a device allocation (cuda) or host memory (not recorded)."""
        __slots__ = ("id", "cuda", "valued", "__weakref__")

        def __init__(self, nbytes, cuda):
            self.cuda, self.valued = cuda, True
            self.id = cap.writer.alloc(nbytes, cap.stream, cap.frames(nbytes)) if cuda and nbytes > 0 else -1

        def __del__(self):
            if self.id >= 0 and cap.writer.open:
                cap.writer.free(self.id)

        def __deepcopy__(self, memo):
            return self

    class FakeStorage:
        """What untyped_storage() gives for a Fake: its size and a stable address, no data."""

        def __init__(self, t):
            self._t = t

        def nbytes(self):
            return storage_bytes(self._t._vd_elem)

        def size(self):
            return self.nbytes()

        def data_ptr(self):
            return rec_address(self._t._vd_rec)

        @property
        def device(self):
            return self._t._vd_dev

    def rec_address(rec):
        return ((rec.id + 1) << 28) if rec.id >= 0 else (id(rec) << 4)

    class Fake(torch.Tensor):
        """A tensor with no data: its meta twin (_vd_elem), its storage's record, the device it shows."""

        @staticmethod
        def __new__(cls, elem, rec, dev, val=None):
            r = torch.Tensor._make_wrapper_subclass(
                cls, elem.size(), strides=elem.stride(), storage_offset=elem.storage_offset(), dtype=elem.dtype,
                layout=elem.layout, device=CPU, requires_grad=False)
            r._vd_elem, r._vd_rec, r._vd_dev, r._vd_val = elem, rec, dev, val
            return r

        @classmethod
        def __torch_function__(cls, func, types, args=(), kwargs=None):
            handler = TF.get(func)
            if handler is not None:
                return handler(*args, **(kwargs or {}))
            with no_subclass():
                return func(*args, **(kwargs or {}))

        @classmethod
        def __torch_dispatch__(cls, func, types, args=(), kwargs=None):
            return cap.dispatch(func, args, kwargs or {})

        def __repr__(self, **kwargs):
            return "tensor(<no data: vramdoc estimate>, size=%s, dtype=%s, device='%s')" % (
                tuple(self.shape), str(self.dtype).replace("torch.", ""), self._vd_dev)

    def value_of(t):
        if isinstance(t, Fake):
            return t._vd_val if (t._vd_val is not None and t._vd_rec.valued) else None
        return t

    # ------------------------------------------------------------------ torch-function handlers
    TF = {}

    def moved(t, device, dtype=None, copy=False):
        """t on `device` and in `dtype`: t itself when nothing changes, else a copy."""
        device = t._vd_dev if device is None else torch.device(device)
        device = CUDA if device.type == "cuda" else device
        if device == t._vd_dev and (dtype is None or dtype == t.dtype) and not copy:
            return t
        cap.move_to.append(device)
        try:
            return aten._to_copy.default(t, dtype=dtype or t.dtype)
        finally:
            cap.move_to.pop()

    original_to, original_cuda = torch.Tensor.to, torch.Tensor.cuda

    def to(t, *args, **kwargs):
        # Tensor.to / .cuda as Python functions: a real tensor's move to CUDA fails in C++ before the
        # dispatcher (a device guard) on a build without CUDA; a Fake's C++ device is the CPU.
        if args and isinstance(args[0], torch.Tensor):
            device, dtype = args[0].device, args[0].dtype
        else:
            device, dtype, _, _ = torch._C._nn._parse_to(*args, **kwargs)
        if isinstance(t, Fake):
            return moved(t, device, dtype, kwargs.get("copy", False))
        if device is not None and torch.device(device).type == "cuda":
            return aten._to_copy.default(t, dtype=dtype or t.dtype, device=CUDA)
        return original_to(t, *args, **kwargs)

    def cuda(t, device=None, non_blocking=False, **kwargs):
        return moved(t, CUDA) if isinstance(t, Fake) else aten._to_copy.default(t, device=CUDA)

    torch.Tensor.to, torch.Tensor.cuda = to, cuda

    def from_data(original):
        # torch.tensor(data, device="cuda") makes the tensor on the CPU, then copies it behind a CUDA
        # device guard, which needs a GPU: make it on the CPU and move it as .to() does.
        def make(data, *args, device=None, **kwargs):
            if device is None or torch.device(device).type != "cuda":
                return original(data, *args, device=device, **kwargs)
            requires_grad = kwargs.pop("requires_grad", False)
            t = data.to(dtype=kwargs.get("dtype") or data.dtype) if isinstance(data, torch.Tensor) else original(data, *args, **kwargs)
            t = to(t, CUDA)
            return t.requires_grad_() if requires_grad else t
        make.__name__ = make.__qualname__ = original.__name__
        return make

    for name in ("tensor", "as_tensor", "asarray"):
        if hasattr(torch, name):
            setattr(torch, name, from_data(getattr(torch, name)))
    compatible = torch._has_compatible_shallow_copy_type

    def shallow_copy_compatible(input, from_):
        # nn.Module._apply swaps a parameter's data when this says yes: a real tensor cannot take a
        # Fake's (it would keep no record of its storage), so the module gets a new Parameter.
        return isinstance(input, Fake) == isinstance(from_, Fake) and compatible(input, from_)

    torch._has_compatible_shallow_copy_type = shallow_copy_compatible

    def deepcopy(t, memo):
        if id(t) in memo:
            return memo[id(t)]
        with torch.no_grad():
            new = aten.clone.default(t)
        new.requires_grad_(t.requires_grad)
        if getattr(t, "_is_param", False):
            new._is_param = True
        memo[id(t)] = new
        return new

    def set_data(t, new):
        if isinstance(new, Fake):
            t._vd_elem, t._vd_rec, t._vd_dev, t._vd_val = new._vd_elem, new._vd_rec, new._vd_dev, new._vd_val
        with no_subclass():
            torch.Tensor.data.__set__(t, new)

    def reader(kind):
        def handler(t, *args, **kwargs):
            v = value_of(t)
            if v is None:
                cap.note("value", "%s() of a tensor without data (size %s): assumed zeros" % (kind.strip("_"), list(t.shape)))
                v = torch.zeros(t.shape, dtype=t.dtype)
            return getattr(v, kind)(*args, **kwargs)
        return handler

    T = torch.Tensor
    TF.update({
        T.device.__get__: lambda t: t._vd_dev,
        T.is_cuda.__get__: lambda t: t._vd_dev.type == "cuda",
        T.is_meta.__get__: lambda t: False,
        T.get_device: lambda t: 0 if t._vd_dev.type == "cuda" else -1,
        T.cpu: lambda t, *a, **k: moved(t, CPU),
        T.pin_memory: lambda t, *a, **k: t,
        T.is_pinned: lambda t, *a, **k: False,
        T.share_memory_: lambda t: t,
        T.record_stream: lambda t, s: None,
        T.data_ptr: lambda t: rec_address(t._vd_rec) + t.storage_offset() * t.element_size(),
        T.untyped_storage if hasattr(T, "untyped_storage") else T.storage: lambda t: FakeStorage(t),
        T.__deepcopy__: deepcopy,
        T.data.__set__: set_data,
    })
    if hasattr(T, "is_cpu"):
        TF[T.is_cpu.__get__] = lambda t: t._vd_dev.type == "cpu"

    def backward(t, gradient=None, retain_graph=None, create_graph=False, inputs=None):
        # Tensor.backward without turning the subclass's torch function off: Python code autograd
        # runs (a checkpointed layer's recomputation) must see the devices and kernels the forward saw.
        return torch.autograd.backward(t, gradient, retain_graph, create_graph, inputs=inputs)

    TF[T.backward] = backward
    for name in ("item", "tolist", "numpy", "__bool__", "__int__", "__float__", "__index__", "__complex__"):
        if hasattr(T, name):
            TF[getattr(T, name)] = reader(name)
    TF[T.__array__] = lambda t, *a, **k: reader("numpy")(t).__array__(*a, **k)

    # ------------------------------------------------------------------ the ops
    ops_info = {}

    def info(func):
        """Per op: (pure factory, mutated argument indices, library kernel name or None)."""
        got = ops_info.get(func)
        if got is None:
            schema = func._schema
            args = schema.arguments
            tensor_in = any("Tensor" in str(a.type) for a in args)
            has_device = any(a.name == "device" for a in args)
            mutated = tuple(i for i, a in enumerate(args) if a.alias_info is not None and a.alias_info.is_write)
            name = schema.name.split("::")[-1]
            tensor_at = tuple(i for i, a in enumerate(args) if str(a.type) == "Tensor" and not a.kwarg_only)
            got = (has_device and not tensor_in, mutated, name if name in KERNEL_OPS else None, has_device, tensor_at)
            ops_info[func] = got
        return got

    def meta_kwargs(kwargs):
        fixed = dict(kwargs)
        for key, value in (("device", META), ("pin_memory", False), ("generator", None)):
            if key in fixed:
                fixed[key] = value
        return fixed

    SDP_CHOICE = getattr(getattr(aten, "_fused_sdp_choice", None), "default", None)

    def meta_twin(t):
        return torch.empty_strided(t.size(), t.stride(), dtype=t.dtype, device=META)

    class Mode(TorchDispatchMode):
        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            return cap.dispatch(func, args, kwargs or {})

    class Capture:
        def __init__(self):
            self.writer, self.settings = writer, settings
            self.stream, self.thread = 0, 0
            self.move_to = []
            self.records = weakref.WeakValueDictionary()
            self.notes = set()
            self.phase, self.step, self.forwards, self.inferences, self.depth = "build", 0, 0, 0, 0
            self.backward_seen, self.optimizers, self.first_optimizer = False, {}, None
            self.autocast = []  # (enabled, dtype, cache) of each open torch.autocast("cuda")
            self.cast_cache = {}
            self.lock = threading.RLock()
            self.done = False

        # -- where
        def frames(self, nbytes):
            if nbytes < (1 << 20):
                return ""
            out, f, have_main = [], sys._getframe(2), False
            while f is not None:
                path = f.f_code.co_filename
                if not path.startswith(torch_dir) and path != _ME:
                    if len(out) < 3:
                        out.append(_frame_text(f))
                        have_main = have_main or os.path.abspath(path) == main_file
                    elif not have_main and os.path.abspath(path) == main_file:
                        out.append(_frame_text(f))
                        break
                f = f.f_back
            return "<".join(out).replace(" ", "_")

        def where(self):
            f = sys._getframe(2)
            while f is not None and (f.f_code.co_filename.startswith(torch_dir) or f.f_code.co_filename == _ME):
                f = f.f_back
            return "%s:%d" % (f.f_code.co_filename, f.f_lineno) if f is not None else "?"

        def note(self, kind, text):
            here = self.where()
            if (kind, here) not in self.notes and len(self.notes) < 200:
                self.notes.add((kind, here))
                self.writer.comment("note %s %s: %s" % (kind, here.replace(" ", "_"), text))

        # -- phases and steps
        def mark(self, kind):
            name = "step%d.%s" % (self.step, kind)
            if name != self.phase:
                self.writer.comment("phase " + self.phase)
                self.phase = name

        def finish(self, reason):
            if not self.done:
                self.done = True
                self.writer.comment("steps %d forwards %d" % (self.step, self.forwards))
                self.writer.close(reason)

        def maybe_stop(self):
            k = self.settings["steps"]
            trained = self.optimizers and all(n >= k for n in self.optimizers.values())
            # inference: K top-level forwards under no_grad (or 4 K, at least 12, with grad on and never a
            # backward: a GAN's step with a gradient penalty makes four before its first backward)
            inferred = not self.backward_seen and not self.optimizers and (
                self.inferences >= k or self.forwards >= max(4 * k, 12))
            if (trained or inferred) and self.settings.get("exit_when_done"):
                self.writer.comment("phase " + self.phase)
                self.finish("steps")
                sys.stdout.flush()
                sys.stderr.flush()
                os._exit(0)

        # -- the dispatcher
        def dispatch(self, func, args, kwargs):
            factory, mutated, kernel, has_device, tensor_at = info(func)
            if any(i < len(args) and isinstance(args[i], (int, float, bool)) for i in tensor_at):
                # PyTorch 1.13 hands a dispatch mode a wrapped number (x / 8.0) as the Python number
                args = tuple(torch.tensor(x) if i in tensor_at and isinstance(x, (int, float, bool)) else x
                             for i, x in enumerate(args))
            flat, spec = tree_flatten((args, kwargs))
            fakes = [x for x in flat if isinstance(x, Fake)]
            device = kwargs.get("device") if has_device else None
            device = torch.device(device) if isinstance(device, str) else device
            if not fakes and not (device is not None and device.type == "cuda"):
                if func is aten._local_scalar_dense.default or not factory or (device is not None and device.type == "meta"):
                    return func(*args, **kwargs)
                shape = func(*args, **meta_kwargs(kwargs))
                if not isinstance(shape, torch.Tensor) or storage_bytes(shape) < HOST_FAKE_BYTES:
                    return func(*args, **kwargs)
                dev = CPU
            elif self.move_to and func is aten._to_copy.default:
                dev = self.move_to[-1]
            elif device is not None and device.type == "cuda":
                dev = CUDA
            else:
                dev = CUDA if any(f._vd_dev.type == "cuda" for f in fakes) else CPU
            if func is aten._local_scalar_dense.default:
                return reader("item")(fakes[0])
            if func is SDP_CHOICE:
                return sdp_choice(self.settings["cc"], *args, **kwargs)
            return self.fake_op(func, flat, spec, fakes, dev, mutated, kernel)

        def fake_op(self, func, flat, spec, fakes, dev, mutated, kernel):
            foreign, elems = set(), {}
            mflat = []
            for x in flat:
                if isinstance(x, Fake):
                    elems[id(x._vd_elem)] = x
                    mflat.append(x._vd_elem)
                elif isinstance(x, torch.Tensor) and x.device.type != "meta":
                    m = meta_twin(x)
                    foreign.add(storage_key(m))
                    mflat.append(m)
                else:
                    mflat.append(x)
            margs, mkwargs = tree_unflatten(mflat, spec)
            mkwargs = meta_kwargs(mkwargs)
            try:
                out = func(*margs, **mkwargs)
            except Exception as e:  # no meta kernel or a data-dependent shape
                out = self.fallback(func, flat, spec, margs, mkwargs, e)
            vals = self.values(func, flat, spec, out, dev)
            oflat, ospec = tree_flatten(out)
            vflat = tree_flatten(vals)[0] if vals is not None else [None] * len(oflat)
            result = []
            for o, v in zip(oflat, vflat):
                if not isinstance(o, torch.Tensor):
                    result.append(o)
                    continue
                same = elems.get(id(o))
                if same is not None:
                    if v is None and mutated:
                        same._vd_rec.valued = False
                    result.append(same)
                    continue
                key = storage_key(o)
                rec = self.records.get(key)
                if rec is None:
                    rec = Rec(storage_bytes(o), dev.type == "cuda" and key not in foreign)
                    self.records[key] = rec
                elif v is None and mutated:
                    rec.valued = False
                result.append(Fake(o, rec, CUDA if rec.cuda else CPU, v))
            if kernel is not None and dev.type == "cuda":
                self.kernel(kernel, flat, spec)
            return tree_unflatten(result, ospec)

        def kernel(self, name, flat, spec):
            """The `k` line: DTYPE:SHAPES (a channels-last tensor's shape ends in @cl); the other arguments
            of a convolution or an attention kernel follow after ';' in schema order (a convolution's
            stride, padding, dilation, transposed, output_padding, groups[, output_mask]; attention's
            dropout, causal, ...): lists as AxB, booleans as 1 / 0, None as -."""
            def shape(x):
                text = "x".join(str(s) for s in x.shape) or "1"
                if x.dim() == 4 and not x.is_contiguous() and x.is_contiguous(memory_format=torch.channels_last):
                    text += "@cl"
                return text

            def word(v):
                if isinstance(v, (list, tuple)):
                    return "x".join(word(x) for x in v) or "-"
                if isinstance(v, float):
                    return "%g" % v
                return "-" if v is None else str(int(v)) if isinstance(v, (bool, int)) else "?"

            shapes = ",".join(shape(x) for x in flat if isinstance(x, torch.Tensor))
            dtype = next((str(x.dtype).replace("torch.", "") for x in flat if isinstance(x, torch.Tensor)), "-")
            params = ""
            if name in CONV_OPS or "attention" in name:
                args = tree_unflatten(flat, spec)[0]
                params = ";" + ",".join(word(a) for a in args if not isinstance(a, torch.Tensor))
            elif name in REDUCE_OPS:  # the reduced dimensions, counted from 0
                args = tree_unflatten(flat, spec)[0]
                dims = args[1] if len(args) > 1 and not isinstance(args[1], bool) else None
                dims = [dims] if isinstance(dims, int) else dims if isinstance(dims, (list, tuple)) else None
                rank = args[0].dim() if isinstance(args[0], torch.Tensor) else 0
                params = ";" + (word([d % rank if rank else d for d in dims]) if dims else "-")
            self.writer.line("k %s %d %d %s:%s%s\n" % (name, self.stream, self.thread, dtype, shapes or "-", params))

        def values(self, func, flat, spec, out, dev):
            """The op run for real on the inputs' values, when all are known and the outputs small."""
            oflat = [o for o in tree_flatten(out)[0] if isinstance(o, torch.Tensor)]
            if not oflat or any(o.numel() > VALUE_NUMEL for o in oflat):
                return None
            vflat = []
            for x in flat:
                if isinstance(x, torch.Tensor):
                    v = value_of(x)
                    if v is None:
                        return None
                    vflat.append(v)
                elif isinstance(x, torch.device):
                    vflat.append(CPU)
                elif isinstance(x, torch.Generator) and x.device.type != "cpu":
                    vflat.append(None)
                else:
                    vflat.append(x)
            vargs, vkwargs = tree_unflatten(vflat, spec)
            if "pin_memory" in vkwargs:
                vkwargs["pin_memory"] = False
            try:
                return func(*vargs, **vkwargs)
            except Exception:
                return None

        def fallback(self, func, flat, spec, margs, mkwargs, error):
            """Outputs of an op the meta device cannot run: from the values, a shape rule, or a CPU run."""
            vals = self.values_any(func, flat, spec)
            if vals is not None:
                return tree_unflatten([meta_twin(v) if isinstance(v, torch.Tensor) else v for v in tree_flatten(vals)[0]],
                                      tree_flatten(vals)[1])
            name = func._schema.name.split("::")[-1]
            rule = SHAPE_RULES.get(name)
            if rule is None and name.startswith("_foreach_"):
                rule = foreach_rule
            if rule is None and all(r.alias_info is not None for r in func._schema.returns) and info(func)[1]:
                rule = in_place_rule
            if rule is not None:
                return rule(self, func, margs, mkwargs)
            ns = func._schema.name.split("::")[0]
            if ns not in ("aten", "prims"):
                raise RuntimeError("vramdoc estimate cannot run the custom operator %s (a CUDA extension or a kernel "
                                   "of its own) without data: it needs a meta kernel (torch.library.register_fake)"
                                   % func._schema.name) from None
            return self.cpu_run(func, margs, mkwargs, error)

        def values_any(self, func, flat, spec):
            for x in flat:
                if isinstance(x, torch.Tensor) and value_of(x) is None:
                    return None
            vflat = [value_of(x) if isinstance(x, torch.Tensor) else (CPU if isinstance(x, torch.device) else x) for x in flat]
            vargs, vkwargs = tree_unflatten(vflat, spec)
            try:
                return func(*vargs, **vkwargs)
            except Exception:
                return None

        def cpu_run(self, func, margs, mkwargs, error):
            flat, spec = tree_flatten((margs, mkwargs))
            size = sum(x.numel() * x.element_size() for x in flat if isinstance(x, torch.Tensor))
            if size > (256 << 20):
                raise RuntimeError("vramdoc estimate: %s has no shape function and its inputs are too large to run "
                                   "on the CPU (%s)" % (func._schema.name, error)) from None
            real = [torch.empty_strided(x.shape, x.stride(), dtype=x.dtype).zero_() if isinstance(x, torch.Tensor)
                    and x.device.type == "meta" else (CPU if isinstance(x, torch.device) else x) for x in flat]
            rargs, rkwargs = tree_unflatten(real, spec)
            out = func(*rargs, **rkwargs)
            oflat, ospec = tree_flatten(out)
            ins = {id(r): m for r, m in zip(real, flat) if isinstance(r, torch.Tensor)}
            return tree_unflatten([ins.get(id(o)) if id(o) in ins else (meta_twin(o) if isinstance(o, torch.Tensor) else o)
                                   for o in oflat], ospec)

    cap = Capture()

    # ------------------------------------------------------------------ ops without meta kernels
    def worst_case(kind):
        def rule(c, func, margs, mkwargs):
            x = margs[0]
            c.note("shape", "%s needs the data (a data-dependent shape): assumed every element selected" % kind)
            n = x.numel()
            if kind == "nonzero":
                return torch.empty((n, x.dim()), dtype=torch.long, device=META)
            if kind in ("unique", "_unique2", "unique_dim", "unique_consecutive"):
                return (torch.empty(n, dtype=x.dtype, device=META), torch.empty(x.shape, dtype=torch.long, device=META),
                        torch.empty(n, dtype=torch.long, device=META))[: len(func._schema.returns)]
            return torch.empty(n, dtype=x.dtype, device=META)
        return rule

    def conv_backward(c, func, margs, mkwargs):
        grad, x, w, mask = margs[0], margs[1], margs[2], margs[-1]
        bias = torch.empty(list(margs[3] or [grad.shape[1]]), dtype=grad.dtype, device=META)
        return (torch.empty_like(x) if mask[0] else None, torch.empty_like(w) if mask[1] else None,
                bias if mask[2] else None)

    def same_as_inputs(*which):
        def rule(c, func, margs, mkwargs):
            outs = tuple(torch.empty_like(margs[i]) for i in which)
            return outs if len(outs) > 1 else outs[0]
        return rule

    def in_place_rule(c, func, margs, mkwargs):
        # an in-place op (the fused optimizers, GradScaler's checks): its results are its inputs
        returns = func._schema.returns
        if not returns:
            return None
        by_set = {}
        for i, a in enumerate(func._schema.arguments):
            if a.alias_info is not None:
                by_set[tuple(sorted(a.alias_info.before_set))] = margs[i] if i < len(margs) else mkwargs.get(a.name)
        outs = [by_set.get(tuple(sorted(r.alias_info.before_set))) for r in returns]
        return outs[0] if len(outs) == 1 else tuple(outs)

    def foreach_rule(c, func, margs, mkwargs):
        # an out-of-place foreach op: one new tensor per tensor of its first list (1.13 has no meta)
        first = next(a for a in margs if isinstance(a, (list, tuple)))
        if func._schema.name.endswith("_"):
            return None
        return [torch.empty_like(t) for t in first]

    def batch_norm(c, func, margs, mkwargs):
        # PyTorch 1.13 has no meta kernel for it: the output, and the saved mean and inverse std
        x, training = margs[0], margs[5]
        stats = torch.empty(x.shape[1] if training else 0, dtype=torch.float32, device=META)
        return torch.empty_like(x), stats, torch.empty_like(stats)

    SHAPE_RULES = {
        "native_batch_norm": batch_norm,
        "nonzero": worst_case("nonzero"), "masked_select": worst_case("masked_select"),
        "unique": worst_case("unique"), "_unique2": worst_case("_unique2"), "unique_dim": worst_case("unique_dim"),
        "unique_consecutive": worst_case("unique_consecutive"),
        "convolution_backward": conv_backward,
        "_scaled_dot_product_cudnn_attention_backward": same_as_inputs(1, 2, 3),
        "_scaled_dot_product_flash_attention_backward": same_as_inputs(1, 2, 3),
        "max_pool2d_with_indices_backward": same_as_inputs(1),
        "avg_pool2d_backward": same_as_inputs(1),
        "adaptive_avg_pool2d_backward": same_as_inputs(1), "_adaptive_avg_pool2d_backward": same_as_inputs(1),
    }

    for install in (lambda: _install_torch_patches(torch, cap, Fake, CUDA, settings),
                    lambda: _install_autocast(torch, cap, Fake), lambda: _install_cuda_kernels(torch, cap, Fake),
                    lambda: _install_phases(torch, cap)):
        try:
            install()
        except Exception as e:  # the rest of the capture still works; the report says what is missing
            cap.writer.comment("note capture %s: part of the capture could not be installed (%s: %s)" % (
                _ME, type(e).__name__, e))
    mode = Mode()
    mode.__enter__()
    cap.mode = mode
    return cap


def _install_torch_patches(torch, cap, Fake, CUDA, s):
    """torch.cuda as the target card, and what cannot run without a GPU or data."""
    cuda = torch.cuda
    name, total, (major, minor) = s["name"], s["total"], s["cc"]

    class Props:
        def __init__(self):
            self.name, self.total_memory, self.major, self.minor = name, total, major, minor
            self.multi_processor_count, self.is_integrated, self.is_multi_gpu_board = s["sms"], False, False
            self.gcnArchName, self.uuid, self.L2_cache_size = "", "vramdoc-capture", 50 << 20
            self.max_threads_per_multi_processor, self.warp_size, self.regs_per_multiprocessor = 2048, 32, 65536

        def __repr__(self):
            return "_CudaDeviceProperties(name='%s', major=%d, minor=%d, total_memory=%dMB, multi_processor_count=%d)" % (
                self.name, self.major, self.minor, self.total_memory >> 20, self.multi_processor_count)

    streams = []

    class Stream:
        def __new__(cls, device=None, priority=0, **kwargs):
            self = object.__new__(cls)
            self.stream_id, self.device, self.priority = len(streams), CUDA, priority
            streams.append(self)
            return self

        def wait_stream(self, other): pass
        def wait_event(self, event): pass
        def synchronize(self): pass
        def query(self): return True
        def record_event(self, event=None): return event or Event()
        def __eq__(self, other): return isinstance(other, Stream) and other.stream_id == self.stream_id
        def __hash__(self): return hash(("vramdoc-stream", self.stream_id))
        @property
        def cuda_stream(self): return self.stream_id + 1

    class Event:
        def __init__(self, *args, **kwargs): pass
        def record(self, stream=None): pass
        def wait(self, stream=None): pass
        def query(self): return True
        def synchronize(self): pass
        def elapsed_time(self, other): return 0.0

    default_stream = Stream()

    class StreamContext:
        def __init__(self, stream):
            self.s = stream

        def __enter__(self):
            self.prev = cap.stream
            if self.s is not None:
                cap.stream = self.s.stream_id

        def __exit__(self, *exc):
            cap.stream = self.prev

    peak = [0]

    def allocated(device=None):
        return cap.writer.live_bytes

    def max_allocated(device=None):
        peak[0] = max(peak[0], cap.writer.peak_bytes)
        return peak[0]

    def reset_peak(device=None):
        cap.writer.peak_bytes = cap.writer.live_bytes
        peak[0] = 0

    def empty_cache():
        cap.writer.comment("empty_cache")

    def noop(name):
        # one function per name: torch._dynamo's trace rules reject one object with two rules
        def nothing(*args, **kwargs):
            return None
        nothing.__name__ = nothing.__qualname__ = name
        return nothing

    def rng_state(device="cuda"):
        return torch.zeros(16, dtype=torch.uint8)

    def stats(device=None):
        return {"allocated_bytes.all.current": allocated(), "allocated_bytes.all.peak": max_allocated(),
                "reserved_bytes.all.current": allocated(), "reserved_bytes.all.peak": max_allocated()}

    patches = dict(
        is_available=lambda: True, device_count=lambda: 1, current_device=lambda: 0, set_device=noop("set_device"),
        get_device_name=lambda device=None: name, get_device_capability=lambda device=None: (major, minor),
        get_device_properties=lambda device=None: Props(), is_initialized=lambda: True, init=noop("init"),
        _lazy_init=noop("init"), synchronize=noop("synchronize"), empty_cache=empty_cache, ipc_collect=noop("ipc_collect"),
        manual_seed=noop("manual_seed"), manual_seed_all=noop("manual_seed_all"), seed=noop("seed"), seed_all=noop("seed_all"), initial_seed=lambda: 0,
        get_rng_state=rng_state, set_rng_state=noop("set_rng_state"), get_rng_state_all=lambda: [rng_state()],
        set_rng_state_all=noop("set_rng_state_all"), is_bf16_supported=lambda *a, **k: major >= 8,
        memory_allocated=allocated, max_memory_allocated=max_allocated, memory_reserved=allocated,
        max_memory_reserved=max_allocated, reset_peak_memory_stats=reset_peak, reset_max_memory_allocated=reset_peak,
        reset_accumulated_memory_stats=noop("reset_accumulated_memory_stats"), memory_stats=stats, set_per_process_memory_fraction=noop("set_per_process_memory_fraction"),
        mem_get_info=lambda device=None: (max(0, total - allocated()), total),
        memory_summary=lambda *a, **k: "vramdoc estimate: no real GPU in this process",
        Stream=Stream, Event=Event, current_stream=lambda device=None: streams[cap.stream],
        default_stream=lambda device=None: default_stream, stream=StreamContext, utilization=lambda *a: 0,
        get_arch_list=lambda: ["sm_%d%d" % (major, minor)], get_gencode_flags=lambda: "",
        _is_compiled=lambda: True, is_current_stream_capturing=lambda: False)
    for key, value in patches.items():
        setattr(cuda, key, value)
    cuda._initialized = True
    cuda.device = type("device", (), {"__init__": lambda self, d: None, "__enter__": lambda self: None,
                                      "__exit__": lambda self, *e: None})
    if hasattr(cuda, "memory"):
        for key in ("memory_allocated", "max_memory_allocated", "memory_reserved", "max_memory_reserved",
                    "reset_peak_memory_stats", "empty_cache", "memory_stats", "mem_get_info"):
            setattr(cuda.memory, key, patches[key])
        cuda.memory._record_memory_history = noop("_record_memory_history")
    if hasattr(cuda, "nvtx"):
        for key in ("range_push", "range_pop", "mark"):
            setattr(cuda.nvtx, key, noop(key))
        cuda.nvtx.range = lambda *a, **k: __import__("contextlib").nullcontext()
    torch._C._cuda_getDeviceCount = lambda: 1
    accelerator = getattr(torch, "accelerator", None)
    if accelerator is not None:  # PyTorch 2.6+: asks the C++ hooks, which see no GPU
        accelerator.is_available = lambda: True
        accelerator.device_count = lambda: 1
        accelerator.current_accelerator = lambda *a, **k: torch.device("cuda")
        accelerator.current_device_index = accelerator.current_device_idx = lambda: 0
        accelerator.set_device_index = accelerator.set_device_idx = noop("set_device_index")
        accelerator.synchronize = noop("accelerator_synchronize")
    if torch.version.cuda is None:
        torch.version.cuda = "13.0"
    cudnn = torch.backends.cudnn
    cudnn.is_available = lambda: True
    cudnn.version = lambda: 91000
    if hasattr(torch.backends, "cuda") and hasattr(torch.backends.cuda, "is_built"):
        torch.backends.cuda.is_built = lambda: True
    T = torch.Tensor
    T.pin_memory = lambda self, *a, **k: self
    T.is_pinned = lambda self, *a, **k: False

    def no_save(obj, f, *args, **kwargs):
        cap.note("save", "torch.save skipped (tensors without data)")

    torch.save = no_save

    def compile_eager(model=None, *args, **kwargs):
        cap.note("compile", "torch.compile: captured eagerly (compiled kernels can hold less)")
        return model if model is not None else (lambda m: m)

    torch.compile = compile_eager
    import torch.utils.data as data

    original_init = data.DataLoader.__init__

    def loader_init(self, *args, **kwargs):
        if kwargs.get("num_workers"):
            cap.note("dataloader", "DataLoader workers run in the main process (num_workers=0)")
        kwargs["num_workers"] = 0
        kwargs.pop("prefetch_factor", None)
        kwargs["persistent_workers"] = False
        kwargs["pin_memory"] = False
        original_init(self, *args, **kwargs)

    data.DataLoader.__init__ = loader_init
    try:
        import torch.distributed as dist

        original_pg = dist.init_process_group

        def init_process_group(backend=None, *args, **kwargs):
            if backend is None or "nccl" in str(backend):
                raise RuntimeError("vramdoc estimate captures one process: NCCL (torch.distributed with several GPUs) "
                                   "cannot be faked; estimate one rank with `vramdoc estimate --config ... --gpus N`")
            return original_pg(backend, *args, **kwargs)

        dist.init_process_group = init_process_group
    except Exception:
        pass
    def no_extensions(ext):
        def no_extension(*args, **kwargs):
            raise RuntimeError("vramdoc estimate cannot build or load a CUDA extension (torch.utils.cpp_extension) "
                               "without a GPU: its kernels' memory is not captured")

        ext.load = ext.load_inline = no_extension

    after_import("torch.utils.cpp_extension", no_extensions)  # importing it costs seconds (hipify's patterns)
    try:
        import torch.optim.optimizer as opt

        if hasattr(opt, "_foreach_supported_types"):  # the foreach default as on CUDA (PyTorch 2.x)
            opt._foreach_supported_types.append(Fake)
    except Exception:
        pass


def _install_autocast(torch, cap, Fake):
    """torch.autocast("cuda") on Fakes: CUDA's op lists through Python kernels at AutocastCPU (these
    tensors are CPU tensors to the dispatcher), CPU's own lists switched off, and the cast cache."""
    import weakref
    from torch.library import Library

    aten = torch.ops.aten
    lib = Library("aten", "IMPL")
    cap.autocast_library = lib

    def resolve(qualified):
        name, _, overload = qualified.partition(".")
        packet = getattr(aten, name, None)
        return getattr(packet, overload or "default", None) if packet is not None else None

    def eligible(t):
        return (isinstance(t, Fake) and t._vd_dev.type == "cuda" and t.is_floating_point()
                and t.dtype != torch.float64)

    def cached_cast(dtype, t):
        if isinstance(t, (list, tuple)):
            return type(t)(cached_cast(dtype, x) for x in t)
        if not eligible(t) or t.dtype == dtype:
            return t
        top = cap.autocast[-1]
        if (dtype == top[1] and t.dtype == torch.float32 and t.requires_grad and t.is_leaf and not t._is_view()
                and top[2]):
            hit = cap.cast_cache.get(id(t))
            if hit is not None and hit[0]() is t:
                return hit[1]
            casted = t.to(dtype)
            cap.cast_cache[id(t)] = (weakref.ref(t), casted)
            return casted
        return t.to(dtype)

    def cpu_autocast(flag=None):
        """CPU autocast's state (PyTorch 2.4+ takes the device; 1.13 has the _cpu_ functions)."""
        try:
            return torch.is_autocast_enabled("cpu") if flag is None else torch.set_autocast_enabled("cpu", flag)
        except TypeError:
            return torch.is_autocast_cpu_enabled() if flag is None else torch.set_autocast_cpu_enabled(flag)

    class Off:
        def __enter__(self):
            cpu_autocast(False)

        def __exit__(self, *exc):
            cpu_autocast(True)

    def kernel(op, policy):
        schema_args = op._schema.arguments
        dtype_at = next((i for i, a in enumerate(schema_args) if a.name == "dtype"), None)
        if policy == "pass" and torch._C._dispatch_has_kernel_for_dispatch_key(op.name(), "CompositeImplicitAutograd"):
            # An op of CPU's lists that CUDA's lack falls through on CUDA: a composite runs its
            # decomposition with autocast still on, so that its parts take CUDA's policies
            # (cross_entropy_loss: log_softmax keeps its explicit 16-bit dtype, nll_loss casts to fp32).
            return op.decompose

        def run(*args, **kwargs):
            with Off():
                if not cap.autocast or not cap.autocast[-1][0]:
                    return op(*args, **kwargs)
                low = cap.autocast[-1][1]
                if policy == "lower":
                    args, kwargs = cached_cast(low, list(args)), {k: cached_cast(low, v) for k, v in kwargs.items()}
                elif policy == "fp32":
                    args = cached_cast(torch.float32, list(args))
                    kwargs = {k: cached_cast(torch.float32, v) for k, v in kwargs.items()}
                elif policy == "opt_dtype" and args and eligible(args[0]):
                    args = list(args)
                    if dtype_at is not None and dtype_at < len(args):
                        args[dtype_at] = torch.float32 if args[dtype_at] is None else args[dtype_at]
                    elif kwargs.get("dtype") is None:
                        kwargs["dtype"] = torch.float32
                elif policy == "promote":
                    flat = [x for a in args for x in (a if isinstance(a, (list, tuple)) else [a])]
                    to = torch.float32 if any(eligible(x) and x.dtype == torch.float32 for x in flat) else low
                    args = cached_cast(to, list(args))
                elif policy.startswith("append:") and args and eligible(args[0]):
                    return resolve(policy[7:])(*args, dtype=torch.float32, **kwargs)
                return op(*args, **kwargs)
        return run

    def banned(*args, **kwargs):
        if cap.autocast and cap.autocast[-1][0] and args and eligible(args[0]):
            raise RuntimeError("torch.nn.functional.binary_cross_entropy and torch.nn.BCELoss are unsafe to autocast.")
        with Off():
            return aten.binary_cross_entropy.default(*args, **kwargs)

    policies = {}
    for q in torch._C._dispatch_get_registrations_for_dispatch_key("AutocastCPU"):
        policies[q.split("::")[-1]] = "pass"
    for names, policy in ((AUTOCAST_LOWER, "lower"), (AUTOCAST_FP32, "fp32"), (AUTOCAST_FP32_OPT_DTYPE, "opt_dtype"),
                          (AUTOCAST_PROMOTE, "promote")):
        for q in names:
            policies[q] = policy
    for q, target in AUTOCAST_FP32_APPEND.items():
        policies[q] = "append:" + target
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # "Overriding a previously registered kernel" for CPU's own lists
        for q, policy in policies.items():
            op = resolve(q)
            if op is None:
                continue
            try:
                lib.impl(q, banned if q == "binary_cross_entropy" else kernel(op, policy), "AutocastCPU")
            except Exception:
                pass
        if resolve("binary_cross_entropy") is not None and "binary_cross_entropy" not in policies:
            lib.impl("binary_cross_entropy", banned, "AutocastCPU")

    autocast = torch.amp.autocast_mode.autocast
    enter, leave = autocast.__enter__, autocast.__exit__

    def autocast_enter(self):
        result = enter(self)
        if getattr(self, "device", None) == "cuda":
            self._vd_prev = cpu_autocast()
            cap.autocast.append((bool(self._enabled), self.fast_dtype, bool(getattr(self, "_cache_enabled", True))))
            cpu_autocast(bool(self._enabled))
        return result

    def autocast_exit(self, *exc):
        if getattr(self, "device", None) == "cuda" and hasattr(self, "_vd_prev"):
            cap.autocast.pop()
            cpu_autocast(self._vd_prev)
            if not cap.autocast:
                cap.cast_cache.clear()
        return leave(self, *exc)

    autocast.__enter__, autocast.__exit__ = autocast_enter, autocast_exit
    clear = torch.clear_autocast_cache

    def clear_cache():
        cap.cast_cache.clear()
        clear()

    torch.clear_autocast_cache = clear_cache


def _install_cuda_kernels(torch, cap, Fake):
    """ATen ops whose composite picks its kernel by the tensors' C++ device, CPU for these tensors:
    dropout and scaled_dot_product_attention get CUDA's choice instead, at the AutogradCPU key (so
    that every caller takes it, a checkpoint's recomputation and nn.MultiheadAttention included)."""
    from torch.library import Library

    aten = torch.ops.aten
    lib = Library("aten", "IMPL")
    cap.kernel_library = lib
    on_cuda = lambda t: isinstance(t, Fake) and t._vd_dev.type == "cuda"  # noqa: E731

    def dropout(input, p, train):
        # CUDA: the fused kernel, a bool mask and the output (ATen Dropout.cpp is_fused_kernel_acceptable)
        if on_cuda(input) and train and 0 < p < 1 and input.numel() > 0:
            return aten.native_dropout.default(input, p, True)[0]
        if p == 0 or not train or input.numel() == 0:
            return input
        if p == 1:
            return input * torch.zeros_like(input)
        return input * torch.empty_like(input).bernoulli_(1 - p).div_(1 - p)

    lib.impl("dropout", dropout, "AutogradCPU")
    if not hasattr(aten, "scaled_dot_product_attention"):
        return
    math = aten._scaled_dot_product_attention_math.default

    def sdpa(query, key, value, attn_mask=None, dropout_p=0.0, is_causal=False, scale=None, enable_gqa=False):
        # attention.cpp scaled_dot_product_attention with CUDA's backend choice (sdp_choice)
        if not (on_cuda(query) and on_cuda(key) and on_cuda(value)):
            return math(query, key, value, attn_mask, dropout_p, is_causal, None, scale=scale, enable_gqa=enable_gqa)[0]
        choice = sdp_choice(cap.settings["cc"], query, key, value, attn_mask, dropout_p, is_causal, scale, enable_gqa)
        if attn_mask is not None and attn_mask.dtype == torch.bool:  # convert_boolean_attn_mask
            zero = torch.zeros((), dtype=query.dtype, device=attn_mask.device)
            attn_mask = torch.where(attn_mask.logical_not(), float("-inf"), zero)
        lse = torch.is_grad_enabled() and (query.requires_grad or key.requires_grad or value.requires_grad)
        if choice == 3:
            return aten._scaled_dot_product_cudnn_attention.default(
                query, key, value, attn_mask, lse, dropout_p, is_causal, False, scale=scale)[0]
        if choice == 1:
            return aten._scaled_dot_product_flash_attention.default(query, key, value, dropout_p, is_causal, False, scale=scale)[0]
        if choice == 2:
            if attn_mask is not None:  # preprocess_mask: a 16-aligned copy of the bias, expanded
                pad = (-attn_mask.shape[-1]) % 16
                if pad or attn_mask.stride(-2) % 16:
                    attn_mask = torch.nn.functional.pad(attn_mask, (0, pad))[..., : attn_mask.shape[-1]]
                attn_mask = attn_mask.expand(query.shape[0], query.shape[1], query.shape[2], key.shape[2])
            return aten._scaled_dot_product_efficient_attention.default(
                query, key, value, attn_mask, lse, dropout_p, is_causal, scale=scale)[0]
        return math(query, key, value, attn_mask, dropout_p, is_causal, None, scale=scale, enable_gqa=enable_gqa)[0]

    lib.impl("scaled_dot_product_attention", sdpa, "AutogradCPU")


def _install_phases(torch, cap):
    """Phases from the top module's forward, autograd's backward and the optimizers' steps."""
    from torch.nn.modules import module as nn_module

    def pre(module, inputs):
        if cap.thread == 1:  # a checkpointed layer recomputed inside the backward: still the backward
            return
        if cap.depth == 0:
            cap.mark("forward")
        cap.depth += 1

    def post(module, inputs, output):
        if cap.thread == 1:
            return
        cap.depth = max(0, cap.depth - 1)
        if cap.depth == 0:
            cap.forwards += 1
            cap.inferences += 0 if torch.is_grad_enabled() else 1
            cap.maybe_stop()

    nn_module.register_module_forward_pre_hook(pre)
    nn_module.register_module_forward_hook(post)

    def backward_wrapper(original):
        def run(*args, **kwargs):
            cap.depth = 0
            cap.backward_seen = True
            cap.mark("backward")
            outer = cap.thread
            cap.thread = 1
            try:
                return original(*args, **kwargs)
            finally:
                cap.thread = outer
        run.__wrapped__ = original
        return run

    torch.autograd.backward = backward_wrapper(torch.autograd.backward)
    torch.autograd.grad = backward_wrapper(torch.autograd.grad)

    def step_pre(optimizer):
        cap.depth = 0
        if cap.first_optimizer is None:
            cap.first_optimizer = id(optimizer)
        cap.optimizers.setdefault(id(optimizer), 0)
        cap.mark("optimizer")

    def step_post(optimizer):
        cap.optimizers[id(optimizer)] = cap.optimizers.get(id(optimizer), 0) + 1
        if id(optimizer) == cap.first_optimizer:
            cap.mark("zero_grad")
            cap.step += 1
        cap.maybe_stop()

    import torch.optim.optimizer as optim
    if hasattr(optim, "register_optimizer_step_pre_hook"):
        optim.register_optimizer_step_pre_hook(lambda o, a, k: step_pre(o))
        optim.register_optimizer_step_post_hook(lambda o, a, k: step_post(o))
    else:
        import types

        original_init = torch.optim.Optimizer.__init__

        def init(self, *args, **kwargs):
            original_init(self, *args, **kwargs)
            step = self.step

            def hooked(this, *a, **k):
                step_pre(this)
                try:
                    return step(*a, **k)
                finally:
                    step_post(this)

            self.step = types.MethodType(hooked, self)

        torch.optim.Optimizer.__init__ = init


def after_import(name, patch):
    """patch(module) once `name` is imported (now, if it already is): an import hook for modules that
    are slow to import and that few jobs use."""
    import importlib.abc
    import importlib.machinery

    if name in sys.modules:
        patch(sys.modules[name])
        return

    class Watcher(importlib.abc.MetaPathFinder):
        def find_spec(self, fullname, path, target=None):
            if fullname != name:
                return None
            sys.meta_path.remove(self)
            spec = importlib.machinery.PathFinder.find_spec(fullname, path)
            if spec is None or spec.loader is None:
                return spec
            loader_exec = spec.loader.exec_module

            def exec_module(module):
                loader_exec(module)
                patch(module)

            spec.loader.exec_module = exec_module
            return spec

    sys.meta_path.insert(0, Watcher())


def _bootstrap():
    """As sitecustomize: run the shadowed one, then start the capture when torch is imported."""
    _run_shadowed_sitecustomize()
    out = os.environ.get("VRAMDOC_CAPTURE_OUT", "")
    if not out:
        return
    after_import("torch", lambda torch: _start_in_job(out))


def _start_in_job(out):
    import atexit
    import signal

    cap = start(out, settings_from_env())
    cap.writer.comment("capture torch %s python %s pid %d" % (
        sys.modules["torch"].__version__, sys.version.split()[0], os.getpid()))
    original_hook = sys.excepthook

    def excepthook(kind, value, tb):
        where = "?"
        while tb is not None:
            if not tb.tb_frame.f_code.co_filename.startswith(os.path.dirname(_ME)):
                where = "%s:%d" % (tb.tb_frame.f_code.co_filename, tb.tb_lineno)
            tb_next = tb.tb_next
            if tb_next is None:
                break
            tb = tb_next
        cap.writer.comment("error %s %s: %s" % (where.replace(" ", "_"), kind.__name__, value))
        cap.writer.comment("phase " + cap.phase)
        cap.finish("error")
        original_hook(kind, value, tb)

    sys.excepthook = excepthook

    def on_signal(signum, frame):
        cap.writer.comment("phase " + cap.phase)
        cap.finish("signal")
        os._exit(128 + signum)

    signal.signal(signal.SIGTERM, on_signal)

    def at_exit():
        cap.writer.comment("phase " + cap.phase)
        cap.finish("exit")

    atexit.register(at_exit)


def _run_shadowed_sitecustomize():
    """Runs the sitecustomize module this file shadows, if the environment has one."""
    if __name__ != "sitecustomize":
        return
    import importlib.machinery
    import importlib.util

    here = os.path.dirname(_ME)
    path = [p for p in sys.path if os.path.abspath(p or os.curdir) != here]
    spec = importlib.machinery.PathFinder.find_spec("sitecustomize", path)
    if spec is None or spec.loader is None:
        return
    module = importlib.util.module_from_spec(spec)
    sys.modules["_vramdoc_shadowed_sitecustomize"] = module
    try:
        spec.loader.exec_module(module)
    except Exception as e:  # what Python itself does with a failing sitecustomize
        sys.stderr.write("Error in sitecustomize; set PYTHONVERBOSE for traceback:\n%s: %s\n" % (type(e).__name__, e))


if __name__ == "sitecustomize":
    _bootstrap()
