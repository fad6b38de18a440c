# cmake --install --strip into a fresh prefix: bin/vramdoc (stripped) with the tracer beside it,
# a man page per command, bash and zsh completions, the docs; the installed binary runs and the
# bash completion completes commands and options.
source "$(dirname "$0")/../cli_lib.sh"
tmp=$(mktemp -d); trap 'rm -rf "$tmp" "$out" "$err"' EXIT
check "cmake --install --strip" 0 cmake --install "$BUILD" --prefix "$tmp/p" --strip
check "the installed binary" 0 "$tmp/p/bin/vramdoc" --version
if grep -q "CUPTI tracer: yes" "$out"; then
  [[ -f $tmp/p/bin/libvramdoc-tracer.so ]] || { echo "FAIL: the tracer is not beside the binary"; fails=$((fails + 1)); }
fi
size=$(stat -c %s "$tmp/p/bin/vramdoc")
((size < 30000000)) || { echo "FAIL: the installed binary is not stripped ($size bytes)"; fails=$((fails + 1)); }
for c in vramdoc vramdoc-estimate vramdoc-run vramdoc-analyze vramdoc-watch vramdoc-bench vramdoc-info vramdoc-probe; do
  [[ -s $tmp/p/share/man/man1/$c.1 ]] || { echo "FAIL: no man page $c.1"; fails=$((fails + 1)); }
done
contains "the estimate page documents --max-batch" "$tmp/p/share/man/man1/vramdoc-estimate.1" "max-batch"
contains "the page is roff" "$tmp/p/share/man/man1/vramdoc-estimate.1" '^\.TH VRAMDOC-ESTIMATE 1'
if command -v man >/dev/null; then
  check "man renders the page" 0 env MANWIDTH=100 man -l "$tmp/p/share/man/man1/vramdoc-run.1"
  contains "the rendered page names run's options" "$out" "step-regex"
fi
[[ -s $tmp/p/share/zsh/site-functions/_vramdoc ]] || { echo "FAIL: no zsh completion"; fails=$((fails + 1)); }
[[ -s $tmp/p/share/doc/vramdoc/README.md ]] || { echo "FAIL: no docs"; fails=$((fails + 1)); }
complete_words() {  # complete_words WORDS...: what bash completion offers for the last word
  bash -c 'source "$1"; shift; COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1)); _vramdoc; printf "%s\n" "${COMPREPLY[@]}"' _ \
    "$tmp/p/share/bash-completion/completions/vramdoc" "$@"
}
[[ $(complete_words vramdoc est) == estimate ]] || { echo "FAIL: 'vramdoc est<TAB>'"; fails=$((fails + 1)); }
complete_words vramdoc estimate --max- > "$tmp/opts"
contains "'vramdoc estimate --max-<TAB>'" "$tmp/opts" "^--max-batch$"
if command -v zsh >/dev/null; then check "zsh reads the completion" 0 zsh -n "$tmp/p/share/zsh/site-functions/_vramdoc"; fi
finish
