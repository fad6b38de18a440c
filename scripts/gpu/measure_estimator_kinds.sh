#!/bin/bash
# The measurements of issue 28 on the GPU machine: bash measure_estimator_kinds.sh OUT [SCRIPT]
# (SCRIPT: measure_estimator_kinds.py, the first round; measure_estimator_kinds_b.py, the second; _c.py, the third; _d to _i, rounds 4 to 10;
# the sources below are the dev families' only: round 10's new families stay out of them, held out from modelling)
cd "$(dirname "$0")"
OUT=$1
SCRIPT=${2:-measure_estimator_kinds.py}
W=/tmp/kinds
PYTHONUNBUFFERED=1 KINDS_BUDGET_S=${KINDS_BUDGET_S:-110} KINDS_HARD_STOP_S=${KINDS_HARD_STOP_S:-155} \
  timeout ${KINDS_TIMEOUT_S:-200} python3 "$SCRIPT" "$W" ${KINDS_FILTER:-} > "$OUT/run.log" 2>&1
echo "exit $?" >> "$OUT/run.log"
nvidia-smi > "$OUT/nvidia-smi.txt" 2>&1
tar czf "$OUT/traces.tar.gz" -C "$W" traces
if [ "$(stat -c %s "$OUT/traces.tar.gz")" -gt 15728640 ]; then  # the run tool returns files of up to 16 MiB
  split -b 15m "$OUT/traces.tar.gz" "$OUT/traces.tar.gz.part-" && rm "$OUT/traces.tar.gz"
fi
tar czf "$OUT/records.tar.gz" -C "$W" kinds-measure.jsonl models logs
python3 - "$OUT" <<'PY'
import os, sys, tarfile, torch, transformers, peft
open(os.path.join(sys.argv[1], "versions.txt"), "w").write(
    f"torch {torch.__version__} transformers {transformers.__version__} peft {peft.__version__}\n")
t, p = os.path.dirname(transformers.__file__), os.path.dirname(peft.__file__)
fams = ["bloom", "gptj", "opt", "cohere", "granite", "olmoe", "smollm3", "glm4", "nemotron", "bert", "roberta",
        "distilbert", "deberta_v2", "t5", "bart", "whisper", "vit", "swin", "llama", "qwen3", "gemma2",
        "electra", "xlm_roberta", "mpnet", "mt5", "mbart", "pegasus", "marian", "deit", "phi3", "stablelm", "persimmon",
        "mistral", "falcon", "gpt_neox", "starcoder2", "qwen2_moe", "gemma", "qwen2", "gpt_neo", "gpt_bigcode", "olmo",
        "granitemoe", "albert", "modernbert", "deberta", "umt5", "m2m_100", "blenderbot", "led", "dinov2", "beit",
        "mpt", "codegen", "xglm", "biogpt", "phimoe", "mixtral", "xlm_roberta", "big_bird", "longformer", "roformer",
        "mobilebert", "esm", "plbart", "switch_transformers", "pegasus_x", "swinv2", "levit", "data2vec", "siglip",
        "resnet", "convnext", "regnet", "efficientnet", "mobilenet_v2",
        # round 6
        "cohere2", "helium", "glm", "arcee", "ernie4_5", "exaone4", "gpt_oss", "mamba", "gemma3", "megatron_bert",
        "rembert", "funnel", "convbert", "fnet", "ernie", "camembert", "longt5", "bigbird_pegasus", "fsmt",
        "blenderbot_small", "mvp", "nllb_moe", "prophetnet", "convnextv2", "dinov2_with_registers", "mobilenet_v1",
        "bit", "clip", "pvt_v2", "poolformer", "focalnet", "mobilevit", "cvt", "hiera",
        # round 7
        "falcon_mamba", "mamba2", "jamba", "glm4_moe", "seed_oss", "apertus", "lfm2", "hunyuan_v1_dense", "squeezebert",
        "nystromformer", "xmod", "layoutlm", "ibert", "markuplm", "xlm", "segformer", "pvt", "swiftformer", "mobilevitv2",
        "vit_msn", "ijepa", "textnet", "hgnet_v2",
        # round 8
        "gpt2", "phi", "qwen3_moe", "deepseek_v3", "olmo2", "bamba", "recurrent_gemma", "dbrx", "jetmoe", "canine",
        "luke", "lilt", "roc_bert", "xlm_roberta_xl", "flaubert", "xlnet", "xlm_prophetnet",
        # round 9 (dev since its evaluation)
        "olmo3", "llama4", "ernie4_5_moe", "hunyuan_v1_moe", "deepseek_v2", "granitemoeshared", "granitemoehybrid",
        "falcon_h1", "openai", "roberta_prelayernorm", "layoutlmv3", "metaclip_2", "encoder_decoder"]
with tarfile.open(os.path.join(sys.argv[1], "sources.tar.gz"), "w:gz") as tar:
    for f in fams:
        d = os.path.join(t, "models", f)
        for n in sorted(os.listdir(d)) if os.path.isdir(d) else []:
            if n.startswith(("modeling_", "configuration_")) and n.endswith(".py"):
                tar.add(os.path.join(d, n), arcname=f"transformers/models/{f}/{n}")
    for n in ["masking_utils.py", "activations.py", "pytorch_utils.py", "cache_utils.py", "modeling_layers.py",
              "integrations/sdpa_attention.py", "integrations/moe.py", "loss/loss_utils.py", "modeling_rope_utils.py"]:
        if os.path.exists(os.path.join(t, n)):
            tar.add(os.path.join(t, n), arcname=f"transformers/{n}")
    for n in ["tuners/lora/layer.py", "tuners/lora/model.py", "utils/constants.py", "utils/other.py", "peft_model.py"]:
        if os.path.exists(os.path.join(p, n)):
            tar.add(os.path.join(p, n), arcname=f"peft/{n}")
PY
ls -la "$OUT"
grep -c ': alloc' "$OUT/run.log"; grep -v ': alloc' "$OUT/run.log" | tail -25
