#!/bin/sh
# Printing, byte for byte: cases.tc through text mode (several options)
# and JSON, hold.tc through JSON, and the files csv.tc saves, each output
# compared by SHA-256 and length with expected.txt, which the printers of
# 5b95464 (before output went through one fixed buffer) wrote; the 11
# outputs with f64 values made by 10.0 ** k re-recorded when f64 pow became
# tcalc's own (SLEEF's 10.0 ** -5 was 1 ulp off; the bytes otherwise the
# same).
#   tests/print/run.sh path/to/tcalc           compare
#   tests/print/run.sh path/to/tcalc --record  rewrite expected.txt
# PRINT_KEEP=DIR keeps the outputs in DIR (to diff two builds' outputs).
set -u
bin=$(cd "$(dirname "${1:-build/tcalc}")" && pwd)/$(basename "${1:-build/tcalc}")
dir=$(cd "$(dirname "$0")" && pwd)
top=$(mktemp -d)
tmp=$top/out
mkdir "$tmp"
trap 'rm -rf "$top"' EXIT

# name, options, script: one output per line of this list
outputs() {
  cat <<'LIST'
text-full --full cases.tc
text-width37 --full --width 37 cases.tc
text-width0 --full --width 0 cases.tc
text-width1 --full --width 1 cases.tc
text-precision3 --full --precision 3 --width 150 cases.tc
text-precision17 --full --precision 17 cases.tc
text-summary - cases.tc
json --json cases.tc
json-hold --json hold.tc
LIST
}

outputs | while read -r name rest; do
  script=${rest##* } opts=${rest% *}
  [ "$opts" = - ] && opts=
  # shellcheck disable=SC2086
  (cd "$tmp" && NO_COLOR=1 "$bin" -k $opts < "$dir/$script" > "$tmp/$name" 2>&1; echo "# exit $?" >> "$tmp/$name")
done
(cd "$tmp" && NO_COLOR=1 "$bin" < "$dir/csv.tc" > csv.log 2>&1; echo "# exit $?" >> csv.log)
for f in "$tmp"/*.csv; do mv "$f" "$tmp/csv-$(basename "$f" .csv)"; done

[ -n "${PRINT_KEEP:-}" ] && mkdir -p "$PRINT_KEEP" && cp "$tmp"/* "$PRINT_KEEP"
(cd "$tmp" && for f in $(ls | sort); do printf '%s %s %s\n' "$f" "$(sha256sum < "$f" | cut -c1-64)" "$(wc -c < "$f")"; done) > "$top/sums"
if [ "${2:-}" = --record ]; then cp "$top/sums" "$dir/expected.txt"; echo "print: recorded $(wc -l < "$top/sums") outputs"; exit 0; fi
fail=0
while read -r name sum len; do
  got=$(grep "^$name " "$top/sums")
  if [ "$got" != "$name $sum $len" ]; then
    echo "FAIL print $name: ${got:-missing} (want $sum $len)"
    fail=$((fail + 1))
  fi
done < "$dir/expected.txt"
[ "$(wc -l < "$top/sums")" -eq "$(wc -l < "$dir/expected.txt")" ] || { echo "FAIL print: outputs differ in number"; fail=$((fail + 1)); }
echo "print: $(wc -l < "$dir/expected.txt") outputs, $fail failures"
[ "$fail" -eq 0 ]
