#!/usr/bin/env python3
"""Ground truth for `vramdoc estimate` II: new families, quantised inference, the driver's number
and the caching allocator's trace. One NVIDIA GPU (or more), PyTorch + transformers + peft.

Method (the shared measure_pytorch.py's, with three changes, each for a reason):
- Every case runs in its own process, forked from a parent that imported torch, transformers and
  peft but never touched CUDA. The driver's per-process number (NVML) of a process that ran many
  cases includes every kernel image the earlier cases loaded (CUDA loads modules lazily): a fresh
  process per case gives the number a user's process shows, and the fork skips the imports.
- No cuBLAS warm-up: a fresh process allocates the cuBLAS/cuBLASLt workspaces inside the case, as a
  user's does, so peak_allocated is absolute (`warm_allocated` = 0 in the env line).
- The caching allocator's own trace (torch.cuda.memory._record_memory_history) of every case is
  written as traces/<case>.txt.gz in alloc_trace.py's format (`a SIZE ID STREAM`, `r ID`, `f ID`,
  `s/S/m/M SIZE STREAM`, `o SIZE`, `# phase NAME`; the traces of 2026-11-30 are its version 1,
  without streams and `r` lines).
Cases run concurrently (several processes per GPU): peaks and the per-process driver number are
per process, so concurrency does not change them; the parent checks free memory first.

Usage: python3 measure_estimator_families.py OUTDIR [filter-substring]
Writes OUTDIR/h16-measure.jsonl (env line, then one line per case, the format of
../shared/data/estimator/README.md plus the fields below), OUTDIR/models/<model>.json (the config
as transformers writes it, and every parameter's name, dtype and shape: a safetensors header's
content), OUTDIR/traces/, OUTDIR/logs/.
Extra case fields: `generate` (new tokens after a prefill of `seq`; 0 = one forward of the whole
prompt), `quant` (`fp8-dequant`: Linear weights in torch.float8_e4m3fn with a per-row scale,
dequantised to bf16 in each forward; `fp8-scaled-mm`: the same weights, activations quantised
per tensor and multiplied by torch._scaled_mm), `alloc_conf` (PYTORCH_CUDA_ALLOC_CONF),
`driver_after_init` (NVML right after the CUDA context exists), `driver_after_build`,
`phases` (per phase: allocation count, allocated and reserved at its end, its own peaks),
`stats` (torch.cuda.memory_stats() at the end), `experts_implementation`.
"""
import gc, json, os, signal, sys, time, traceback

import alloc_trace  # scripts/gpu/alloc_trace.py, beside this file

import torch
import transformers
from transformers import AutoConfig, AutoModelForCausalLM

BUDGET_S = float(os.environ.get("H16_BUDGET_S", "170"))   # stop starting cases after this
CASE_TIMEOUT_S = float(os.environ.get("H16_CASE_TIMEOUT_S", "45"))
SLOTS_PER_GPU = int(os.environ.get("H16_SLOTS_PER_GPU", "3"))
MIN_FREE = 48 * 2**30                                      # free GPU memory needed to start a case

# name: (model_type, config fields). S and M sizes of each family; configs follow the published
# models' shapes, with fewer layers so that a case takes seconds.
MODELS = {
    "gemma2-s": ("gemma2", dict(hidden_size=768, intermediate_size=2048, num_hidden_layers=6, num_attention_heads=8,
                                num_key_value_heads=4, head_dim=128, vocab_size=256000, sliding_window=512,
                                max_position_embeddings=8192)),
    "gemma2-m": ("gemma2", dict(hidden_size=2304, intermediate_size=9216, num_hidden_layers=6, num_attention_heads=8,
                                num_key_value_heads=4, head_dim=256, vocab_size=256000, sliding_window=1024,
                                max_position_embeddings=8192)),
    "gemma3-s": ("gemma3_text", dict(hidden_size=640, intermediate_size=2048, num_hidden_layers=6, num_attention_heads=4,
                                     num_key_value_heads=1, head_dim=256, vocab_size=262144, sliding_window=512,
                                     max_position_embeddings=8192)),
    "gemma3-m": ("gemma3_text", dict(hidden_size=1152, intermediate_size=6912, num_hidden_layers=8, num_attention_heads=4,
                                     num_key_value_heads=1, head_dim=256, vocab_size=262144, sliding_window=512,
                                     max_position_embeddings=8192)),
    "llama3-s": ("llama", dict(hidden_size=1024, intermediate_size=4096, num_hidden_layers=8, num_attention_heads=16,
                               num_key_value_heads=4, head_dim=64, vocab_size=128256, tie_word_embeddings=True,
                               max_position_embeddings=131072,
                               rope_scaling=dict(rope_type="llama3", factor=32.0, low_freq_factor=1.0,
                                                 high_freq_factor=4.0, original_max_position_embeddings=8192))),
    "llama3-m": ("llama", dict(hidden_size=2048, intermediate_size=8192, num_hidden_layers=8, num_attention_heads=32,
                               num_key_value_heads=8, head_dim=64, vocab_size=128256, tie_word_embeddings=True,
                               max_position_embeddings=131072,
                               rope_scaling=dict(rope_type="llama3", factor=32.0, low_freq_factor=1.0,
                                                 high_freq_factor=4.0, original_max_position_embeddings=8192))),
    "qwen2moe-s": ("qwen2_moe", dict(hidden_size=512, intermediate_size=1024, moe_intermediate_size=256,
                                     shared_expert_intermediate_size=1024, num_experts=16, num_experts_per_tok=4,
                                     num_hidden_layers=4, num_attention_heads=8, num_key_value_heads=4,
                                     vocab_size=151936, max_position_embeddings=8192)),
    "qwen2moe-m": ("qwen2_moe", dict(hidden_size=1024, intermediate_size=2816, moe_intermediate_size=512,
                                     shared_expert_intermediate_size=2048, num_experts=32, num_experts_per_tok=4,
                                     num_hidden_layers=6, num_attention_heads=16, num_key_value_heads=16,
                                     vocab_size=151936, max_position_embeddings=8192)),
    "qwen3moe-s": ("qwen3_moe", dict(hidden_size=512, intermediate_size=1024, moe_intermediate_size=256, num_experts=32,
                                     num_experts_per_tok=4, num_hidden_layers=4, num_attention_heads=8,
                                     num_key_value_heads=4, head_dim=64, vocab_size=151936,
                                     max_position_embeddings=8192)),
    "qwen3moe-m": ("qwen3_moe", dict(hidden_size=1024, intermediate_size=3072, moe_intermediate_size=512, num_experts=64,
                                     num_experts_per_tok=8, num_hidden_layers=6, num_attention_heads=16,
                                     num_key_value_heads=4, head_dim=128, vocab_size=151936,
                                     max_position_embeddings=8192)),
    "mixtral-m": ("mixtral", dict(hidden_size=1024, intermediate_size=2048, num_hidden_layers=6, num_attention_heads=16,
                                  num_key_value_heads=8, num_local_experts=8, num_experts_per_tok=2, vocab_size=32000,
                                  max_position_embeddings=8192)),
    "dsv2-s": ("deepseek_v2", dict(hidden_size=512, intermediate_size=1024, moe_intermediate_size=256,
                                   num_hidden_layers=4, num_attention_heads=8, num_key_value_heads=8,
                                   n_shared_experts=1, n_routed_experts=16, num_experts_per_tok=4,
                                   first_k_dense_replace=1, kv_lora_rank=128, q_lora_rank=None, qk_nope_head_dim=64,
                                   qk_rope_head_dim=32, v_head_dim=64, vocab_size=32000, max_position_embeddings=8192)),
    "dsv2-m": ("deepseek_v2", dict(hidden_size=1024, intermediate_size=2816, moe_intermediate_size=512,
                                   num_hidden_layers=6, num_attention_heads=16, num_key_value_heads=16,
                                   n_shared_experts=2, n_routed_experts=32, num_experts_per_tok=6,
                                   first_k_dense_replace=1, kv_lora_rank=256, q_lora_rank=512, qk_nope_head_dim=128,
                                   qk_rope_head_dim=64, v_head_dim=128, vocab_size=102400,
                                   max_position_embeddings=8192)),
    "dsv3-s": ("deepseek_v3", dict(hidden_size=512, intermediate_size=1024, moe_intermediate_size=256,
                                   num_hidden_layers=4, num_attention_heads=8, num_key_value_heads=8,
                                   n_shared_experts=1, n_routed_experts=16, num_experts_per_tok=4, n_group=4,
                                   topk_group=2, first_k_dense_replace=1, kv_lora_rank=128, q_lora_rank=256,
                                   qk_nope_head_dim=64, qk_rope_head_dim=32, v_head_dim=64, vocab_size=32000,
                                   max_position_embeddings=8192)),
    "dsv3-m": ("deepseek_v3", dict(hidden_size=1024, intermediate_size=2816, moe_intermediate_size=512,
                                   num_hidden_layers=6, num_attention_heads=16, num_key_value_heads=16,
                                   n_shared_experts=1, n_routed_experts=32, num_experts_per_tok=8, n_group=8,
                                   topk_group=4, first_k_dense_replace=2, kv_lora_rank=256, q_lora_rank=512,
                                   qk_nope_head_dim=128, qk_rope_head_dim=64, v_head_dim=128, vocab_size=129280,
                                   max_position_embeddings=8192)),
    "olmo2-s": ("olmo2", dict(hidden_size=1024, intermediate_size=4096, num_hidden_layers=8, num_attention_heads=16,
                              num_key_value_heads=16, vocab_size=100352, max_position_embeddings=8192)),
    "olmo2-m": ("olmo2", dict(hidden_size=2048, intermediate_size=8192, num_hidden_layers=8, num_attention_heads=16,
                              num_key_value_heads=16, vocab_size=100352, max_position_embeddings=8192)),
    "phi2-s": ("phi", dict(hidden_size=1024, intermediate_size=4096, num_hidden_layers=8, num_attention_heads=16,
                           partial_rotary_factor=0.4, vocab_size=51200, resid_pdrop=0.1,
                           max_position_embeddings=8192)),
    "phi2-m": ("phi", dict(hidden_size=2560, intermediate_size=10240, num_hidden_layers=6, num_attention_heads=32,
                           partial_rotary_factor=0.4, vocab_size=51200, resid_pdrop=0.1,
                           max_position_embeddings=8192)),
    "phi3-m": ("phi3", dict(hidden_size=3072, intermediate_size=8192, num_hidden_layers=4, num_attention_heads=32,
                            num_key_value_heads=32, vocab_size=32064, max_position_embeddings=8192,
                            original_max_position_embeddings=8192)),
    "falcon-s": ("falcon", dict(hidden_size=1024, num_hidden_layers=8, num_attention_heads=16, multi_query=True,
                                parallel_attn=True, bias=False, new_decoder_architecture=False, vocab_size=65024,
                                max_position_embeddings=8192)),
    "falcon-m": ("falcon", dict(hidden_size=2048, num_hidden_layers=6, num_attention_heads=32, num_kv_heads=8,
                                new_decoder_architecture=True, parallel_attn=True, bias=False, vocab_size=65024,
                                max_position_embeddings=8192)),
    "pythia-s": ("gpt_neox", dict(hidden_size=768, intermediate_size=3072, num_hidden_layers=12, num_attention_heads=12,
                                  rotary_pct=0.25, vocab_size=50304, use_parallel_residual=True,
                                  max_position_embeddings=8192)),
    "pythia-m": ("gpt_neox", dict(hidden_size=2048, intermediate_size=8192, num_hidden_layers=8, num_attention_heads=8,
                                  rotary_pct=0.25, vocab_size=50304, use_parallel_residual=True,
                                  max_position_embeddings=8192)),
    "starcoder2-s": ("starcoder2", dict(hidden_size=1024, intermediate_size=4096, num_hidden_layers=8,
                                        num_attention_heads=16, num_key_value_heads=2, sliding_window=512,
                                        vocab_size=49152, max_position_embeddings=8192)),
    "starcoder2-m": ("starcoder2", dict(hidden_size=3072, intermediate_size=12288, num_hidden_layers=4,
                                        num_attention_heads=24, num_key_value_heads=2, sliding_window=4096,
                                        vocab_size=49152, max_position_embeddings=16384)),
    # families the estimator already had, measured again in fresh processes (driver's number)
    "llama-160m": ("llama", dict(hidden_size=768, num_hidden_layers=12, num_attention_heads=12, num_key_value_heads=12,
                                 intermediate_size=2048, vocab_size=32000, max_position_embeddings=4096)),
    "qwen2.5-0.5b": ("qwen2", dict(hidden_size=896, num_hidden_layers=24, num_attention_heads=14, num_key_value_heads=2,
                                   intermediate_size=4864, vocab_size=151936, tie_word_embeddings=True,
                                   max_position_embeddings=32768)),
    "gpt2-124m": ("gpt2", dict(n_embd=768, n_layer=12, n_head=12, vocab_size=50257, n_positions=2048)),
}

LORA_TARGETS = {
    "phi": ["q_proj", "k_proj", "v_proj", "dense"], "phi3": ["qkv_proj", "o_proj"],
    "falcon": ["query_key_value", "dense"], "gpt_neox": ["query_key_value", "dense"], "gpt2": ["c_attn"],
    "deepseek_v2": ["q_proj", "q_a_proj", "q_b_proj", "kv_a_proj_with_mqa", "kv_b_proj", "o_proj"],
    "deepseek_v3": ["q_proj", "q_a_proj", "q_b_proj", "kv_a_proj_with_mqa", "kv_b_proj", "o_proj"],
}


def case(model, mode, precision, batch, seq, ck=False, opt="adamw", attention="sdpa", generate=0, quant=None,
         alloc_conf=None):
    return dict(model=model, mode=mode, precision=precision, batch=batch, seq=seq, grad_checkpointing=ck,
                optimizer=opt if mode != "infer" else None, attention=attention, generate=generate, quant=quant,
                alloc_conf=alloc_conf)


def family_attention(name):
    return "eager" if name.startswith("gemma2") else "sdpa"  # transformers recommends eager for gemma2


def build_cases():
    new = ["gemma2", "gemma3", "llama3", "qwen2moe", "qwen3moe", "dsv2", "dsv3", "olmo2", "phi2", "falcon", "pythia",
           "starcoder2"]
    p0, p1, p2 = [], [], []
    for fam in new:
        s, m = fam + "-s", fam + "-m"
        a = family_attention(s)
        p0 += [case(s, "train", "bf16", 4, 1024, attention=a), case(s, "train", "fp32", 2, 1024, opt="sgd", attention=a),
               case(s, "train", "amp_bf16", 4, 1024, ck=True, attention=a), case(s, "lora", "bf16", 4, 1024, attention=a),
               case(s, "infer", "bf16", 4, 1024, attention=a, generate=8),
               case(m, "train", "bf16", 2, 2048, attention=a), case(m, "infer", "bf16", 8, 2048, attention=a, generate=8)]
        p1 += [case(m, "train", "amp_bf16", 4, 2048, ck=True, attention=a), case(m, "lora", "bf16", 4, 1024, ck=True, attention=a),
               case(s, "infer", "bf16", 8, 1024, attention=a)]
    for m in ["llama3-m", "gemma2-m", "olmo2-m", "phi2-m", "starcoder2-m", "gemma3-m"]:
        p0.append(case(m, "infer", "bf16", 8, 2048, attention=family_attention(m), generate=8, quant="fp8-dequant"))
        p1.append(case(m, "infer", "bf16", 8, 2048, attention=family_attention(m), generate=8, quant="fp8-scaled-mm"))
    for m in ["mixtral-m", "phi3-m"]:
        p0 += [case(m, "train", "bf16", 2, 2048), case(m, "train", "amp_bf16", 4, 2048, ck=True),
               case(m, "infer", "bf16", 8, 2048, generate=8)]
        p1 += [case(m, "train", "fp32", 2, 1024, opt="sgd"), case(m, "lora", "bf16", 4, 1024)]
    p1 += [case("gemma2-s", "train", "bf16", 4, 1024, attention="sdpa"),
           case("llama-160m", "train", "bf16", 8, 1024), case("llama-160m", "train", "fp32", 4, 1024, opt="sgd"),
           case("qwen2.5-0.5b", "train", "amp_bf16", 8, 1024, ck=True), case("qwen2.5-0.5b", "train", "fp32", 4, 1024, opt="sgd"),
           case("gpt2-124m", "train", "amp_bf16", 8, 1024, ck=True), case("qwen2.5-0.5b", "infer", "bf16", 8, 4096, generate=8)]
    for c in [case("llama3-m", "train", "bf16", 2, 2048), case("qwen2.5-0.5b", "train", "amp_bf16", 8, 1024, ck=True),
              case("gemma3-m", "infer", "bf16", 8, 2048, generate=8), case("olmo2-s", "train", "fp32", 2, 1024, opt="sgd"),
              case("qwen3moe-s", "train", "bf16", 4, 1024)]:
        c["alloc_conf"] = "expandable_segments:True"
        p2.append(c)
    return p0 + p1 + p2


# ---------------------------------------------------------------- measuring one case (in a child)

def driver_used():
    """Bytes NVML charges this process, summed over devices; None when NVML cannot tell."""
    try:
        import pynvml
        pynvml.nvmlInit()
        total, seen = 0, False
        for i in range(pynvml.nvmlDeviceGetCount()):
            h = pynvml.nvmlDeviceGetHandleByIndex(i)
            for p in pynvml.nvmlDeviceGetComputeRunningProcesses(h):
                if p.pid == os.getpid() and p.usedGpuMemory is not None:
                    total += p.usedGpuMemory
                    seen = True
        return total if seen else None
    except Exception:
        return None


class Marks:
    """Phase boundaries: allocation counts (to cut the trace), allocated/reserved, the phase's own peaks."""

    def __init__(self):
        self.phases = []
        self.base_allocs = self._count()
        torch.cuda.reset_peak_memory_stats()

    @staticmethod
    def _count():
        return torch.cuda.memory_stats().get("allocation.all.allocated", 0)

    def mark(self, name):
        torch.cuda.synchronize()
        self.phases.append(dict(name=name, allocs=self._count() - self.base_allocs,
                                allocated=torch.cuda.memory_allocated(), reserved=torch.cuda.memory_reserved(),
                                peak_allocated=torch.cuda.max_memory_allocated(),
                                peak_reserved=torch.cuda.max_memory_reserved()))
        torch.cuda.reset_peak_memory_stats()


class FP8Linear(torch.nn.Module):
    """A Linear whose weight is torch.float8_e4m3fn with a per-row fp32 scale (no bitsandbytes)."""

    def __init__(self, linear, scaled_mm):
        super().__init__()
        w = linear.weight.data
        scale = (w.abs().amax(dim=1, keepdim=True).float() / 448.0).clamp(min=1e-12)
        self.register_buffer("weight", (w.float() / scale).to(torch.float8_e4m3fn))
        self.register_buffer("scale", scale)
        self.bias = linear.bias
        self.scaled_mm = scaled_mm
        self.in_features, self.out_features = linear.in_features, linear.out_features

    def forward(self, x):
        if not self.scaled_mm:  # dequantise the whole weight to the activation dtype, then matmul
            w = self.weight.to(x.dtype)
            w.mul_(self.scale.to(x.dtype))
            return torch.nn.functional.linear(x, w, self.bias)
        x2 = x.reshape(-1, self.in_features)
        sx = (x2.abs().amax().float() / 448.0).clamp(min=1e-12)
        xq = (x2 / sx.to(x2.dtype)).to(torch.float8_e4m3fn)
        sw = self.scale.amax().reshape(())  # tensor-wise weight scale for _scaled_mm
        y = torch._scaled_mm(xq, self.weight.t(), scale_a=sx.reshape(()), scale_b=sw, out_dtype=x.dtype)
        if self.bias is not None:
            y = y + self.bias
        return y.reshape(*x.shape[:-1], self.out_features)


def quantise_fp8(model, scaled_mm):
    """Replaces every nn.Linear but lm_head (dimensions multiples of 16) by FP8Linear; returns how many."""
    n = 0
    for name, module in list(model.named_modules()):
        for child_name, child in list(module.named_children()):
            full = f"{name}.{child_name}" if name else child_name
            if (isinstance(child, torch.nn.Linear) and not full.endswith("lm_head") and child.in_features % 16 == 0
                    and child.out_features % 16 == 0):
                setattr(module, child_name, FP8Linear(child, scaled_mm))
                n += 1
    return n


def build(c):
    kind, kw = MODELS[c["model"]]
    cfg = AutoConfig.for_model(kind, **kw)
    dtype = torch.bfloat16 if c["precision"] == "bf16" else torch.float32
    with torch.device("cuda"):
        model = AutoModelForCausalLM.from_config(cfg, dtype=dtype, attn_implementation=c["attention"])
    if c.get("quant"):
        n = quantise_fp8(model, c["quant"] == "fp8-scaled-mm")
        # A checkpoint loads its fp8 weights directly: move to the host and back so that the
        # conversion's temporaries leave no cached segments behind.
        model.to("cpu")
        gc.collect()
        torch.cuda.empty_cache()
        model.to("cuda")
        return cfg, model, n
    return cfg, model, 0


def run_train(c, cfg, model, rec, marks):
    if c["mode"] == "lora":
        from peft import LoraConfig, get_peft_model
        targets = LORA_TARGETS.get(MODELS[c["model"]][0], ["q_proj", "k_proj", "v_proj", "o_proj"])
        model = get_peft_model(model, LoraConfig(r=16, lora_alpha=32, target_modules=targets, lora_dropout=0.0))
        rec["lora"] = dict(r=16, targets=targets)
    if c["grad_checkpointing"]:
        model.gradient_checkpointing_enable(gradient_checkpointing_kwargs={"use_reentrant": False})
        if c["mode"] == "lora":
            model.enable_input_require_grads()
    model.train()
    params = [p for p in model.parameters() if p.requires_grad]
    rec["n_trainable"] = sum(p.numel() for p in params)
    opt = torch.optim.AdamW(params, lr=1e-5) if c["optimizer"] == "adamw" else torch.optim.SGD(params, lr=1e-5)
    ids = torch.randint(0, cfg.vocab_size, (c["batch"], c["seq"]), device="cuda")
    marks.mark("inputs")
    steps = []
    for step in range(3):
        t0 = time.time()
        if c["precision"] == "amp_bf16":
            with torch.autocast("cuda", dtype=torch.bfloat16):
                loss = model(input_ids=ids, labels=ids).loss
        else:
            loss = model(input_ids=ids, labels=ids).loss
        marks.mark(f"step{step}.forward")
        loss.backward()
        marks.mark(f"step{step}.backward")
        opt.step()
        marks.mark(f"step{step}.optimizer")
        opt.zero_grad(set_to_none=True)
        marks.mark(f"step{step}.zero_grad")
        ph = marks.phases[-4:]
        steps.append(dict(peak_allocated=max(p["peak_allocated"] for p in ph),
                          peak_reserved=max(p["peak_reserved"] for p in ph),
                          after_allocated=torch.cuda.memory_allocated(), seconds=time.time() - t0,
                          loss=float(loss)))
        del loss
    return steps


def run_infer(c, cfg, model, rec, marks):
    model.eval()
    ids = torch.randint(0, cfg.vocab_size, (c["batch"], c["seq"]), device="cuda")
    marks.mark("inputs")
    t0 = time.time()
    with torch.no_grad():
        if c["generate"]:
            model.generation_config.eos_token_id = None
            out = model.generate(input_ids=ids, attention_mask=torch.ones_like(ids), max_new_tokens=c["generate"],
                                 min_new_tokens=c["generate"], do_sample=False, pad_token_id=0)
            rec["generated"] = int(out.shape[1] - c["seq"])
        else:
            out = model(input_ids=ids, use_cache=True)
    marks.mark("inference")
    ph = marks.phases[-1]
    step = dict(peak_allocated=ph["peak_allocated"], peak_reserved=ph["peak_reserved"],
                after_allocated=torch.cuda.memory_allocated(), seconds=time.time() - t0)
    del out
    return [step]


def write_trace(path, marks):
    snap = torch.cuda.memory._snapshot()
    traces = snap.get("device_traces", [[]])
    events = traces[torch.cuda.current_device()] if traces else []
    cuts = {}
    for p in marks.phases:
        cuts.setdefault(p["allocs"], []).append(p["name"])
    alloc_trace.write(path, events, cuts)
    return dict(events=len(events), segments_at_end=len(snap.get("segments", [])))


def measure(c, out_dir, tag):
    if c.get("alloc_conf"):
        try:
            torch.cuda.memory._set_allocator_settings(c["alloc_conf"])
        except Exception as e:
            print("allocator settings:", e, flush=True)
    torch.cuda.init()
    torch.cuda.mem_get_info()  # creates the context
    rec = dict(c, arch=MODELS[c["model"]][0], config=MODELS[c["model"]][1], driver_after_init=driver_used())
    torch.cuda.memory._record_memory_history(enabled="all", context=None, stacks="python", max_entries=400_000)
    marks = Marks()
    cfg, model, n_fp8 = build(c)
    rec["fp8_linears"] = n_fp8
    rec["experts_implementation"] = getattr(model.config, "_experts_implementation", None)
    rec["attn_implementation"] = getattr(model.config, "_attn_implementation", None)
    rec["n_params"] = sum(p.numel() for p in model.parameters()) + sum(
        b.numel() for n, b in model.named_buffers() if n.endswith(".weight") or n.endswith(".scale"))
    rec["weights_allocated"] = torch.cuda.memory_allocated()
    rec["driver_after_build"] = driver_used()
    marks.mark("build")
    steps = (run_infer if c["mode"] == "infer" else run_train)(c, cfg, model, rec, marks)
    rec["steps"] = steps
    rec["peak_allocated"] = max(s["peak_allocated"] for s in steps)
    # the build's own peak is left out: an fp8 case's conversion temporaries were released before the run
    rec["peak_reserved"] = max(p["peak_reserved"] for p in marks.phases if p["name"] != "build")
    rec["reserved_end"] = torch.cuda.memory_reserved()
    rec["driver_process_used"] = driver_used()
    rec["phases"] = marks.phases
    stats = torch.cuda.memory_stats()
    rec["stats"] = {k: v for k, v in stats.items() if not k.startswith(("active.", "inactive_split.", "allocation.",
                                                                       "segment.")) or k.endswith(".all.peak")}
    try:
        rec["trace"] = write_trace(os.path.join(out_dir, "traces", tag + ".txt.gz"), marks)
    except Exception as e:
        rec["trace"] = dict(error=f"{type(e).__name__}: {e}")
    return rec


def child(c, out_dir, tag, visible):
    signal.alarm(int(CASE_TIMEOUT_S) + 15)  # never outlive the parent's patience
    os.environ["CUDA_VISIBLE_DEVICES"] = visible
    if c.get("alloc_conf"):
        os.environ["PYTORCH_CUDA_ALLOC_CONF"] = os.environ["PYTORCH_ALLOC_CONF"] = c["alloc_conf"]
    log = os.open(os.path.join(out_dir, "logs", tag + ".log"), os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    os.dup2(log, 1)
    os.dup2(log, 2)
    t0 = time.time()
    try:
        rec = measure(c, out_dir, tag)
    except torch.OutOfMemoryError as e:
        rec = dict(c, error="oom", message=str(e)[:400])
    except Exception as e:
        rec = dict(c, error=type(e).__name__, message=str(e)[:400], tb=traceback.format_exc()[-1500:])
    rec["wall"] = time.time() - t0
    rec["case_id"] = tag
    with open(os.path.join(out_dir, "cases", tag + ".json"), "w") as f:
        json.dump(rec, f)
    sys.stdout.flush()
    os._exit(0)


# ---------------------------------------------------------------- the parent (never touches CUDA)

def describe_models(out_dir, wanted):
    """Config as transformers writes it, and the parameters' names/dtypes/shapes (meta device)."""
    present = {}
    for name, (kind, kw) in MODELS.items():
        if name not in wanted:
            continue
        try:
            cfg = AutoConfig.for_model(kind, **kw)
            with torch.device("meta"):
                model = AutoModelForCausalLM.from_config(cfg, dtype=torch.bfloat16)
            tensors = {n: ["BF16", list(p.shape)] for n, p in model.named_parameters()}
            info = dict(model=name, model_type=kind, config=json.loads(cfg.to_json_string(use_diff=False)),
                        n_params=sum(p.numel() for p in model.parameters()), tensors=tensors,
                        model_class=type(model).__name__)
            with open(os.path.join(out_dir, "models", name + ".json"), "w") as f:
                json.dump(info, f)
            present[name] = True
            print(f"model {name}: {type(model).__name__}, {info['n_params'] / 1e6:.1f} M parameters", flush=True)
            del model
        except Exception as e:
            present[name] = False
            print(f"model {name} ({kind}) SKIPPED: {type(e).__name__}: {str(e)[:200]}", flush=True)
    return present


def nvidia_smi(query):
    """One column of nvidia-smi --query-gpu per GPU (the parent keeps NVML out of its address space:
    the children fork from it and open NVML themselves)."""
    import subprocess
    out = subprocess.run(["nvidia-smi", f"--query-gpu={query}", "--format=csv,noheader,nounits"],
                         capture_output=True, text=True, timeout=20).stdout
    return [line.strip() for line in out.splitlines() if line.strip()]


def gpu_slots():
    visible = os.environ.get("CUDA_VISIBLE_DEVICES")
    if visible:
        return [v.strip() for v in visible.split(",") if v.strip()]
    return [str(i) for i in range(len(nvidia_smi("index")))]


def free_bytes(gpu):
    try:
        rows = dict(r.split(", ") for r in nvidia_smi("index,memory.free"))
        uuids = dict(r.split(", ") for r in nvidia_smi("uuid,memory.free"))
        mib = rows.get(gpu) or uuids.get(gpu)
        return int(mib) * 2**20 if mib else None
    except Exception:
        return None


def env_line():
    env = dict(kind="env", torch=torch.__version__, transformers=transformers.__version__, cuda=torch.version.cuda,
               warm_allocated=0, method="fresh process per case (fork), no warm-up",
               cuda_module_loading=os.environ.get("CUDA_MODULE_LOADING"))
    try:
        import peft
        env["peft"] = peft.__version__
    except Exception as e:
        env["peft"] = f"missing: {e}"
    try:
        import pynvml
        pynvml.nvmlInit()
        v = pynvml.nvmlSystemGetDriverVersion()
        env["driver"] = v.decode() if isinstance(v, bytes) else v
        h = pynvml.nvmlDeviceGetHandleByIndex(0)
        n = pynvml.nvmlDeviceGetName(h)
        env["device"] = n.decode() if isinstance(n, bytes) else n
        env["total"] = pynvml.nvmlDeviceGetMemoryInfo(h).total
    except Exception as e:
        env["nvml"] = str(e)
    return env


def main():
    if len(sys.argv) < 2:
        print(__doc__)
        return 2
    out_dir, filt = sys.argv[1], (sys.argv[2] if len(sys.argv) > 2 else "")
    for d in ["models", "traces", "logs", "cases"]:
        os.makedirs(os.path.join(out_dir, d), exist_ok=True)
    start = time.time()
    cases = [c for c in build_cases() if filt in c["model"]]
    present = describe_models(out_dir, {c["model"] for c in cases})
    cases = [c for c in cases if present.get(c["model"])]
    # pre-import peft in the parent so that children skip it
    try:
        import peft  # noqa: F401
    except Exception:
        pass
    gpus = gpu_slots()
    print(f"{len(cases)} cases on GPUs {gpus}, {SLOTS_PER_GPU} at a time per GPU, budget {BUDGET_S:.0f} s", flush=True)
    running = {}  # pid -> (tag, gpu, started)
    queue = list(enumerate(cases))
    skipped = []
    while queue or running:
        for pid, (tag, gpu, t0) in list(running.items()):
            done, _ = os.waitpid(pid, os.WNOHANG)
            if done:
                del running[pid]
                path = os.path.join(out_dir, "cases", tag + ".json")
                status = "no result"
                if os.path.exists(path):
                    r = json.load(open(path))
                    status = r.get("error") or f"alloc {r['peak_allocated'] / 2**30:.2f} GiB reserved {r['peak_reserved'] / 2**30:.2f} driver {(r.get('driver_process_used') or 0) / 2**30:.2f}"
                print(f"[{time.time() - start:6.1f}s] {tag} gpu{gpu}: {status} ({time.time() - t0:.1f}s)", flush=True)
            elif time.time() - t0 > CASE_TIMEOUT_S:
                os.kill(pid, signal.SIGKILL)
                os.waitpid(pid, 0)
                del running[pid]
                print(f"[{time.time() - start:6.1f}s] {tag}: killed after {CASE_TIMEOUT_S:.0f}s", flush=True)
        if queue and time.time() - start > BUDGET_S:
            skipped = [f"{i:03d}-{c['model']}-{c['mode']}" for i, c in queue]
            queue = []
        for gpu in gpus:
            while queue and sum(1 for v in running.values() if v[1] == gpu) < SLOTS_PER_GPU:
                free = free_bytes(gpu)
                if free is not None and free < MIN_FREE:
                    break
                i, c = queue.pop(0)
                tag = f"{i:03d}-{c['model']}-{c['mode']}-{c['precision']}" + (f"-{c['quant']}" if c.get("quant") else "")
                pid = os.fork()
                if pid == 0:
                    child(c, out_dir, tag, gpu)
                running[pid] = (tag, gpu, time.time())
                time.sleep(0.5)  # let the child's context appear before the next free-memory check
        time.sleep(0.2)
    with open(os.path.join(out_dir, "h16-measure.jsonl"), "w") as f:
        f.write(json.dumps(env_line()) + "\n")
        for name in sorted(os.listdir(os.path.join(out_dir, "cases"))):
            f.write(open(os.path.join(out_dir, "cases", name)).read().strip() + "\n")
    for s in skipped:
        print("not run (budget):", s)
    print(f"done in {time.time() - start:.0f}s", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
