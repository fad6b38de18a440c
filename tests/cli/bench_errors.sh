# vramdoc bench's usage errors, and its answer where CUDA or a GPU is missing (exit 2, a clear message).
source "$(dirname "$0")/../cli_lib.sh"

check "bench --help" 0 "$VRAMDOC" bench --help
contains "--help names --only" $out "--only"
contains "--help names --quick" $out "--quick"
check "unknown suite is a usage error" 2 "$VRAMDOC" bench --only device,l3
contains "unknown suite is named" $err "unknown suite 'l3'"
check "memory share out of range" 2 "$VRAMDOC" bench --memory-share 1.5
if ! nvidia-smi -L >/dev/null 2>&1; then
  # No GPU here: built without CUDA, or with CUDA and no device. Either way exit 2 and say why.
  check "bench without a GPU" 2 "$VRAMDOC" bench --quick
  if ! grep -q "built without CUDA" $err; then
    contains "no-GPU message" $err "vramdoc bench: .*\(no CUDA GPU\|CUDA runtime cannot start\|cannot use a GPU: .*is the NVIDIA driver installed\)"
  fi
fi
finish
