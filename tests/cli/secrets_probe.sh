# No secret of the probed command, nor of the failing job's last output line, reaches probe's
# text, JSON and HTML reports or the trial timelines it keeps; the job's own output (trial-N.log)
# is kept private (docs/security.md).
source "$(dirname "$0")/../cli_lib.sh"
source "$(dirname "$0")/../secrets_lib.sh"
export VRAMDOC_NVML_LIBRARY=/nonexistent/libnvidia-ml.so.1
keep=$(mktemp -d)
trap 'rm -rf "$keep" "$out" "$err"' EXIT
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }

# A job that fails (not for memory) saying which URL and token it could not use: probe reports
# the job's last line. The command line itself carries the secrets too.
cmd="sh -c 'echo cannot download https://alice:$PW@hf.co/m?token=$HF; exit 3' --token=$HF --api-key $OPENAI # {batch}"
check "probe, text" 1 "$VRAMDOC" probe --cmd "$cmd" --max 2 --gpu-memory 80GiB --keep "$keep" --html "$keep/p.html"
contains "the failure is reported" $out "failed for a reason other than memory"
no_secrets "probe's text report" $out $err "$keep/p.html"
check "probe, JSON" 1 "$VRAMDOC" probe --cmd "$cmd" --max 2 --gpu-memory 80GiB --keep "$keep" --json
contains "with the job's line, redacted" $out "cannot download https://alice:\*\*\*@hf.co/m?token=\*\*\*"
no_secrets "probe's JSON report" $out $err
no_secrets "the trial timelines" "$keep"/trial-*.jsonl
contains "a trial timeline records the command, redacted" "$keep/trial-1.jsonl" "' --token=\*\*\* --api-key \*\*\* # 1"
[[ $(stat -c %a "$keep/trial-1.log") == 600 ]] || fail "trial-1.log is $(stat -c %a "$keep/trial-1.log"), wanted 600"
finish
