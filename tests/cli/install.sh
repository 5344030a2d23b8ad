#!/bin/sh
# Checks a `make install` tree (run by make test, which installs into a
# temporary DESTDIR and uninstalls after): the installed binary runs from
# another directory, finds its CUDA plugin in PREFIX/lib/tcalc (or says the
# build has no CUDA engine), names its engines in --version; `man -l`
# renders the installed page; the bash completion completes options, engine
# names and function names; the zsh completion is a compdef file.
# Usage: tests/cli/install.sh DESTDIR PREFIX CUDA(0|1)
set -u
root=$1$2 cuda=$3
n=0 fail=0
ok() { n=$((n + 1)); }
bad() { n=$((n + 1)); fail=$((fail + 1)); echo "FAIL: install: $*"; }
check() { if [ "$2" = "$3" ]; then ok; else bad "$1: expected [$2], got [$3]"; fi; }

bin=$root/bin/tcalc
cd / || exit 1
check "installed binary runs from /" "2" "$("$bin" -e '1 + 1' 2>&1)"
check "--version engines" "engines: cpu$([ "$cuda" = 1 ] && echo ' cuda')" "$("$bin" --version | sed -n 2p)"
out=$("$bin" -j --engine cuda -e 1 2>&1)
if [ "$cuda" = 1 ]; then
  if [ -f "$root/lib/tcalc/libtcalc-cuda.so" ]; then ok; else bad "no plugin in $root/lib/tcalc"; fi
  # It finds the plugin: it runs, or says why the GPU cannot (never that the plugin is missing).
  case $out in
    *"cannot load its plugin"*) bad "--engine cuda does not find the installed plugin: $out" ;;
    '{"ok":true'*|*engine_unavailable*) ok ;;
    *) bad "--engine cuda: $out" ;;
  esac
else
  case $out in *engine_unavailable*"has no cuda engine"*) ok ;; *) bad "--engine cuda (CUDA=0 build): $out" ;; esac
fi
page=$(MANWIDTH=80 man -l "$root/share/man/man1/tcalc.1" 2>&1 | col -b)
case $page in *PIPELINES*from_json*) ok ;; *) bad "man -l of the installed page: $(echo "$page" | head -3)" ;; esac

comp() {   # comp WORD... : what the bash completion offers for the last word
  bash -c '. "$1"; shift; COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1)); _tcalc; echo "${COMPREPLY[*]}"' \
    sh "$root/share/bash-completion/completions/tcalc" tcalc "$@"
}
check "bash completion: --js" "--json" "$(comp --js)"
check "bash completion: --engine c" "cpu cuda" "$(comp --engine c)"
check "bash completion: -e from_j" "from_json" "$(comp -e from_j)"
check "bash completion: --a" "--arg" "$(comp --a)"
zsh=$root/share/zsh/site-functions/_tcalc
if [ "$(head -1 "$zsh")" = "#compdef tcalc" ] && grep -q 'load_json' "$zsh" && grep -q "'--json'" "$zsh"; then ok; else bad "zsh completion $zsh"; fi
if command -v zsh > /dev/null; then zsh -n "$zsh" && ok || bad "zsh -n $zsh"; fi
echo "install: $n checks, $fail failures"
[ "$fail" -eq 0 ]
