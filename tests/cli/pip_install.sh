# `pip install --no-build-isolation --no-index .` in a fresh virtual environment, offline: the
# `vramdoc` command and `import vramdoc` work, estimate() equals the CLI's JSON. The build backend
# takes this build's binary (VRAMDOC_PREBUILT_DIR) instead of compiling again; the compiling path
# is the same code after that step (docs/python.md). Skipped (77) where venv is unavailable.
source "$(dirname "$0")/../cli_lib.sh"
py=""
for candidate in python3 /usr/bin/python3; do
  if command -v "$candidate" >/dev/null && "$candidate" -c "import venv, ensurepip" 2>/dev/null; then py=$candidate; break; fi
done
if [[ -z $py ]]; then echo "SKIP: no python3 with venv and ensurepip (apt-get install python3-venv)"; exit 77; fi
tmp=$(mktemp -d); trap 'rm -rf "$tmp" "$out" "$err"' EXIT
check "a fresh virtual environment" 0 "$py" -m venv "$tmp/venv"
export PIP_NO_INDEX=1 PIP_DISABLE_PIP_VERSION_CHECK=1 PIP_FIND_LINKS= PIP_NO_CACHE_DIR=1 PYTHONDONTWRITEBYTECODE=1
unset VRAMDOC_BINARY PYTHONPATH
check "pip install --no-build-isolation --no-index ." 0 env VRAMDOC_PREBUILT_DIR="$(dirname "$VRAMDOC")" \
  "$tmp/venv/bin/python" -m pip install -q --no-build-isolation --no-index "$SRC"
check "the vramdoc command" 0 "$tmp/venv/bin/vramdoc" --version
contains "the version line" "$out" "^vramdoc "
cfg=$SRC/tests/data/estimator/configs/llama-160m.json
check "import vramdoc; estimate() equals the CLI JSON" 0 "$tmp/venv/bin/python" - "$cfg" "$SRC" <<'PY'
import json, os, subprocess, sys
import vramdoc
cfg, src = sys.argv[1], sys.argv[2]
assert "site-packages" in vramdoc.__file__, vramdoc.__file__
api = vramdoc.estimate(config=cfg, mode="lora", batch=4, seq=512)
command = os.path.join(os.path.dirname(sys.executable), "vramdoc")  # the venv's, not activated
cli = json.loads(subprocess.run([command, "estimate", "--json", "--config", cfg, "--mode", "lora",
                                 "--batch", "4", "--seq", "512"], stdout=subprocess.PIPE, text=True).stdout)
assert api == cli, (api, cli)
assert vramdoc.analyze(src + "/tests/data/timelines/leak_tensor.json")["verdict"] == "leak"
PY
check "a wheel with the binary inside" 0 env VRAMDOC_PREBUILT_DIR="$(dirname "$VRAMDOC")" \
  "$tmp/venv/bin/python" -m pip wheel -q --no-build-isolation --no-index --no-deps -w "$tmp/dist" "$SRC"
check "the wheel lists the binary" 0 "$tmp/venv/bin/python" -c "
import sys, zipfile, glob
names = zipfile.ZipFile(glob.glob(sys.argv[1] + '/vramdoc-*.whl')[0]).namelist()
assert 'vramdoc/_bin/vramdoc' in names and any(n.endswith('.dist-info/RECORD') for n in names), names" "$tmp/dist"
finish
