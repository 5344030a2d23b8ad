#!/bin/sh
# Differential test of --semantics torch against PyTorch itself (SPEC 19):
# scripts/semantics-diff.py --system torch, the same cases as
# semantics-numpy.sh computed by PyTorch in a child process (restarted if
# it dies; MIN // -1, where PyTorch's CPU kernels die of SIGFPE, expects
# tcalc's undefined_behavior). PyTorch is a test oracle only. Without it
# this skips, saying so (it fails under CI=true: scripts/install-deps.sh
# installs python3-torch).
# Usage: scripts/semantics-torch.sh path/to/tcalc [CASES] [semantics-diff.py options, e.g. --verbose --seed N]
#        (CASES defaults to 2000)
set -u
label="semantics torch vs torch"
bin=$(cd "$(dirname "${1:-build/tcalc}")" && pwd)/$(basename "${1:-build/tcalc}")
py=${PYTHON:-/usr/bin/python3}
if ! "$py" -c 'import torch' 2>/dev/null; then
  if [ "${CI:-}" = true ]; then   # CI must run it: a skip there would pass unseen
    echo "$label: FAIL: PyTorch is missing for $py (scripts/install-deps.sh installs python3-torch)"
    exit 1
  fi
  echo "$label: SKIPPED (no PyTorch for $py; set PYTHON to a Python with torch)"
  exit 0
fi
cases=${2:-2000}
[ $# -ge 2 ] && shift 2 || shift $#
exec "$py" "$(dirname "$0")/semantics-diff.py" --system torch --tcalc "$bin" --cases "$cases" "$@"
