# Made-up credentials for the redaction tests (sourced; the same as tests/unit/secrets.hpp, none
# ever valid) and a check that none of them, nor a 12-character piece of one, is in a file.
HF=hf_5URYX45jqRO25g3uK5kbAAegiuE8LCAnmu
OPENAI=sk-proj-O6RvvBfOHZ1FzfnKpcmgfmqSWstSqkNh5brTo21oKpdaZPNt
GH=ghp_riSPvMUC6j7OrJ1Bkkz7T3hSiXLBwoh6MdHm
AWS=QbjnlQGkMfdyCbudrNq1JnXmBEzCmMqXrk5/awyN
WANDB=c396b943081cb9ce32f602a058930166c2b9e14d
PW=correct-Horse-7-battery
RANDOM32=DQV2pFiw25u5O5JjOVSURRI6WhVrPcHm
SECRETS=("$HF" "$OPENAI" "$GH" "$AWS" "$WANDB" "$PW" "$RANDOM32")
# The argument list of a job that holds every secret the way command lines do.
SECRET_ARGS=(--token="$HF" --api-key "$OPENAI" "https://alice:$PW@github.com/org/repo.git"
             "Authorization: Bearer $GH" AWS_SECRET_ACCESS_KEY="$AWS" WANDB_API_KEY="$WANDB" "$RANDOM32")

# no_secrets "what" FILE...: fails the test when any file holds a secret or a piece of one.
no_secrets() {
  local what=$1 file secret; shift
  for file in "$@"; do
    [[ -e $file ]] || { echo "FAIL: $what: $file was not written"; fails=$((fails + 1)); continue; }
    for secret in "${SECRETS[@]}"; do
      if grep -qF -- "${secret:3:12}" "$file"; then
        echo "FAIL: $what: a secret (${secret:0:6}...) is in $file:"; grep -F -- "${secret:3:12}" "$file" | head -3
        fails=$((fails + 1))
      fi
    done
  done
}
