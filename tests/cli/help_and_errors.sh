# The command table, --version, and the CLI's usage errors.
source "$(dirname "$0")/../cli_lib.sh"

check "--help exits 0" 0 "$VRAMDOC" --help
for c in info estimate bench watch run analyze probe; do contains "--help lists $c" $out "^  $c "; done
check "no arguments is a usage error" 2 "$VRAMDOC"
check "--version" 0 "$VRAMDOC" --version
contains "--version names the version" $out "^vramdoc [0-9]"
check "unknown command" 2 "$VRAMDOC" frobnicate
contains "unknown command is named" $err "unknown command 'frobnicate'"
finish
