# vramdoc estimate -- python JOB: the capture on the CPU with Debian's PyTorch (python3-torch,
# python3-torchvision for /usr/bin/python3), each check against bytes derived by hand from the
# job's shapes. Skipped (77) where /usr/bin/python3 has no torch.
source "$(dirname "$0")/../cli_lib.sh"
py=/usr/bin/python3
if ! "$py" -c "import torch, torchvision" 2>/dev/null; then echo "SKIP: $py has no torch/torchvision (apt-get install python3-torch python3-torchvision)"; exit 77; fi
data=$SRC/tests/data/capture
trace=$(mktemp)
trap 'rm -f "$out" "$err" "$trace"' EXIT
line_of() { grep -n "$2" "$data/$1" | head -1 | cut -d: -f1; }
expect() {  # expect "description" python-assertions (the JSON in j, the trace's lines in t)
  "$py" - "$out" "$trace" "$2" <<'PY' || { echo "FAIL: $1"; cat "$out"; fails=$((fails + 1)); }
import json, sys
j = json.load(open(sys.argv[1]))
t = open(sys.argv[2]).read().splitlines()
phase = {p["name"]: p for p in j["phases"]}
r512 = lambda n: (n + 511) // 512 * 512
MiB = 1 << 20
live, sizes, live_at = 0, {}, {}  # the recorded trace: bytes alive (rounded to 512) after each phase
for line in t:
    f = line.split()
    if f and f[0] == "a":
        sizes[f[2]] = r512(int(f[1]))
        live += sizes[f[2]]
    elif f and f[0] == "f":
        live -= sizes.pop(f[1], 0)
    elif line.startswith("# phase "):
        live_at[line[8:]] = live
exec(sys.argv[3])
PY
}

check "MLP with AdamW" 0 "$VRAMDOC" estimate --json --save-trace "$trace" -- "$py" "$data/mlp_adamw.py" 32
expect "MLP: weights, gradients and AdamW's two states, by hand" '
W = r512(1024 * 256 * 4) + r512(1024 * 4) + r512(256 * 1024 * 4) + r512(256 * 4)
x = r512(32 * 256 * 4)
assert live_at["build"] == W + x, live_at
# step 0: the states arrive (2 W) beside weights and gradients; zero_grad frees the gradients
assert live_at["step0.optimizer"] == 4 * W + x + r512(4), live_at
assert live_at["step0.zero_grad"] == 3 * W + x, live_at  # the next step'"'"'s input already made
assert live_at["step1.optimizer"] == 4 * W + x + r512(4), live_at  # no new state in step 1
# the replay adds the cuBLAS workspaces: the forward thread'"'"'s and autograd'"'"'s, 32 MiB each (H200),
# and cuBLASLt'"'"'s 1 MiB for the forward thread, whose Linear layers are addmm with a bias
assert j["workspace_bytes_at_peak"] == 2 * 32 * MiB + MiB, j["workspace_bytes_at_peak"]
assert j["capture"]["steps"] == 3 and j["capture"]["end"] == "steps"
assert j["peak_allocated_bytes"] <= j["peak_reserved_bytes"] < j["process_bytes"]
'

check "ResNet-18 with SGD" 0 "$VRAMDOC" estimate --json --save-trace "$trace" -- "$py" "$data/resnet18_sgd.py"
expect "ResNet-18: parameters and buffers, momentum" '
import torchvision
m = torchvision.models.resnet18(num_classes=10)
P = sum(r512(p.numel() * p.element_size()) for p in m.parameters())
B = sum(r512(b.numel() * b.element_size()) for b in m.buffers())
inputs = r512(4 * 3 * 64 * 64 * 4) + r512(4 * 8)
assert live_at["build"] == P + B + inputs, (live_at, P, B)
assert live_at["step0.optimizer"] - live_at["step0.backward"] == P  # one momentum buffer per parameter
assert j["workspace_bytes_at_peak"] >= 32 * MiB and j["capture"]["libraries"]["cudnn"]
'

scores=$(line_of encoder_plain.py SCORES_LINE)
check "plain encoder" 0 "$VRAMDOC" estimate --json --save-trace "$trace" -- "$py" "$data/encoder_plain.py"
expect "encoder: the B x H x S x S scores at their line" "
size = 2 * 4 * 256 * 256 * 4
hits = [l for l in t if l.startswith('a %d ' % size) and 'encoder_plain.py:$scores:' in l]
assert len(hits) >= 2 * 2 * 3, len(hits)  # matmul and division, 2 layers, 3 steps
"

expect "encoder: softmax's CUDA backward is marked for its grad * output temporary" "
assert sum(1 for l in t if l.startswith('k _softmax_backward_data 0 1 float32:2x4x256x256,')) >= 2 * 3, [l for l in t if 'softmax' in l][:3]
"

# Regression: BERT-MLM under autocast was 13.5 % low on the H200 (2026-12-01): cross_entropy_loss is in
# CPU autocast's lists, not in CUDA's; the capture ran it with autocast off, so nll_loss took the bf16
# log_softmax instead of CUDA's fp32 copy of it.
loss_line=$(line_of autocast_loss.py LOSS_LINE)
check "cross-entropy under autocast" 0 "$VRAMDOC" estimate --json --steps 2 --save-trace "$trace" -- "$py" "$data/autocast_loss.py"
expect "the loss: bf16 logits, bf16 log_softmax, its fp32 copy; nll_loss in fp32; the bias gradient's reduction" "
N, V = 8192, 30000
at = [int(l.split()[1]) for l in t if l.startswith('a ') and 'autocast_loss.py:$loss_line:' in l]
assert at.count(N * V * 2) == 2 * 2 and at.count(N * V * 4) == 2, at  # per step: logits, log_softmax; the fp32 copy
ks = [l for l in t if l.startswith('k nll_loss_forward')]
assert ks and all(' float32:%dx%d,' % (N, V) in l for l in ks), ks
assert 'k sum 0 1 bfloat16:%dx%d;0' % (N, V) in t, [l for l in t if l.startswith('k sum')]
"

drop=$(line_of dropout.py DROPOUT_LINE)
check "dropout" 0 "$VRAMDOC" estimate --json --save-trace "$trace" -- "$py" "$data/dropout.py"
expect "dropout takes CUDA's fused kernel: a bool mask beside the output, no fp32 noise tensor" "
at = [int(l.split()[1]) for l in t if l.startswith('a ') and 'dropout.py:$drop:' in l]
steps = j['capture']['steps']
assert at.count(1024 * 1024) == steps and at.count(4 * 1024 * 1024) == 2 * steps, at  # w * 2, the output; the mask
"

item=$(line_of item.py ITEM_LINE); bool=$(line_of item.py BOOL_LINE)
check "values read back" 0 "$VRAMDOC" estimate --json -- "$py" "$data/item.py"
expect "each read names its line and what was assumed" "
where = {n['where'].split('/')[-1]: n for n in j['notes']}
assert 'item.py:$item' in where and 'assumed zeros' in where['item.py:$item']['text'], j['notes']
assert 'item.py:$bool' in where, j['notes']
"

check "ResNet-18's convolutions with their arguments" 0 "$VRAMDOC" estimate --json --steps 1 --save-trace "$trace" -- "$py" "$data/resnet18_sgd.py"
expect "the stem's k line names stride, padding, dilation, transposed, output padding, groups" '
assert "k convolution 0 0 float32:4x3x64x64,64x3x7x7;-,2x2,3x3,1x1,0,0x0,1" in t, [l for l in t if l.startswith("k conv")][:2]
assert any(l.startswith("k convolution_backward 0 1 ") and l.endswith(",1,1x1x0") for l in t)
assert j["capture"]["libraries"]["cudnn"]
'

# Regression: a WGAN-GP step makes four forwards before its first backward; with --steps 1 the
# capture took it for inference (4 K forwards with grad on) and stopped before any step.
check "a gradient penalty (a double backward) is training" 0 "$VRAMDOC" estimate --json --steps 1 -- "$py" "$data/gradient_penalty.py"
expect "one optimizer step captured" '
assert j["capture"]["steps"] == 1 and j["capture"]["end"] == "steps", j["capture"]
'

# Regression: a checkpointed block's recomputation inside the backward was marked as a forward phase.
check "checkpointing" 0 "$VRAMDOC" estimate --json --steps 2 --save-trace "$trace" -- "$py" "$data/checkpointed.py"
expect "no forward phase inside a backward" '
names = [l[8:] for l in t if l.startswith("# phase ")]
assert names[:5] == ["build", "step0.forward", "step0.backward", "step0.optimizer", "step0.zero_grad"], names
'

# Regression: T5's learned position bias requires grad; the capture chose cuDNN's attention, which has
# no gradient for a mask ("not differentiable with respect to argument attn_bias", H200, 2026-12-01).
"$py" - "$SRC/python/vramdoc/_capture.py" <<'PY' || { echo "FAIL: SDPA's choice with a mask that requires grad"; fails=$((fails + 1)); }
import importlib.util, sys, torch
spec = importlib.util.spec_from_file_location("capture_module", sys.argv[1])
m = importlib.util.module_from_spec(spec)
spec.loader.exec_module(m)
q = torch.empty(2, 8, 128, 64, dtype=torch.bfloat16)
bias = torch.zeros(1, 8, 128, 128, dtype=torch.bfloat16, requires_grad=True)
assert m.sdp_choice((9, 0), q, q, q) == 3
assert m.sdp_choice((9, 0), q, q, q, bias) == 2, m.sdp_choice((9, 0), q, q, q, bias)
with torch.no_grad():
    assert m.sdp_choice((9, 0), q, q, q, bias) == 3
# Regression: a UNet's heads are transposed views (the last dimension's stride is not 1): the H200 runs
# them on the math kernel (check_last_dim_stride_equals_1_dense), the capture chose cuDNN's (-4.5 %).
t = torch.empty(2, 8, 64, 128, dtype=torch.bfloat16).transpose(-1, -2)
assert m.sdp_choice((9, 0), t, t, t) == 0, m.sdp_choice((9, 0), t, t, t)
assert m.sdp_choice((9, 0), t.contiguous(), t.contiguous(), t.contiguous()) == 3
PY

crash=$(line_of crash.py CRASH_LINE)
check "a job that crashes (exit 2, the report of what it reached)" 2 "$VRAMDOC" estimate --json -- "$py" "$data/crash.py"
expect "crash: the error and its line, the first step counted" "
assert 'the data ran out' in j['capture']['incomplete'] and 'crash.py:$crash' in j['capture']['incomplete'], j['capture']
assert j['peak_allocated_bytes'] >= 4 * MiB
"

start=$SECONDS
check "a job that never steps, stopped by --capture-timeout" 2 "$VRAMDOC" estimate --json --capture-timeout 25 -- "$py" "$data/forever.py"
expect "timeout: said, and what it reached reported" "
assert '--capture-timeout' in j['capture']['incomplete'] and j['capture']['timed_out'], j['capture']
"
[[ $((SECONDS - start)) -lt 60 ]] || { echo "FAIL: the timeout took $((SECONDS - start)) s"; fails=$((fails + 1)); }

check "no torch in the job" 2 "$VRAMDOC" estimate -- "$py" -c "print(1)"
contains "says nothing was captured" "$err" "never imported torch"
check "--max-batch needs {batch}" 2 "$VRAMDOC" estimate --gpu-memory 1GiB --max-batch -- "$py" "$data/mlp_adamw.py"
contains "says where {batch} goes" "$err" "{batch}"
check "{batch} needs a value" 2 "$VRAMDOC" estimate -- "$py" "$data/mlp_adamw.py" "{batch}"
contains "asks for --batch" "$err" "--batch N"
check "nothing after --" 2 "$VRAMDOC" estimate --
check "no such command" 2 "$VRAMDOC" estimate -- /nonexistent/python train.py
contains "names the command" "$err" "/nonexistent/python"
finish
