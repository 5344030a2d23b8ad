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
. "$(dirname "$0")/numpy-prelude.sh"
oracle_prelude torch python3-torch "$@"
cases=${2:-2000}
[ $# -ge 2 ] && shift 2 || shift $#
exec "$py" "$(dirname "$0")/semantics-diff.py" --system torch --tcalc "$bin" --cases "$cases" "$@"
