#!/bin/sh
# Differential test of --semantics numpy against NumPy itself (SPEC 19):
# scripts/semantics-diff.py --system numpy (NumPy in NEP 50 mode), which
# generates CASES statements (operators over every dtype pair, weak Python
# scalars, 0-d tensors, edge values, reductions, indexing, matmul), runs
# them through one tcalc process and prints the failures grouped by
# category. Without NumPy it skips, saying so (it fails under CI=true).
# Usage: scripts/semantics-numpy.sh path/to/tcalc [CASES] [semantics-diff.py options, e.g. --verbose --seed N]
#        (CASES defaults to 2000)
set -u
label="semantics numpy vs numpy"
. "$(dirname "$0")/numpy-prelude.sh"
numpy_prelude "$@"
cases=${2:-2000}
[ $# -ge 2 ] && shift 2 || shift $#
"$py" "$(dirname "$0")/semantics-diff.py" --system numpy --tcalc "$bin" --cases "$cases" "$@"
