# Sourced by the scripts that check tcalc against NumPy (or another Python
# library used as an oracle). oracle_prelude MODULE PACKAGE TCALC (with
# label set) sets bin (TCALC, absolute) and py ($PYTHON, default
# /usr/bin/python3); without MODULE importable it exits, skipping the check
# and saying so, or failing under CI=true. numpy_prelude TCALC is
# oracle_prelude for NumPy, and also sets tmp (a temporary directory).
oracle_prelude() {
  module=$1 pkg=$2
  shift 2
  bin=$(cd "$(dirname "${1:-build/tcalc}")" && pwd)/$(basename "${1:-build/tcalc}")
  py=${PYTHON:-/usr/bin/python3}
  if ! "$py" -c "import $module" 2>/dev/null; then
    if [ "${CI:-}" = true ]; then   # CI must run it: a skip there would pass unseen
      echo "$label: FAIL: $module is missing for $py (scripts/install-deps.sh installs $pkg)"
      exit 1
    fi
    echo "$label: SKIPPED (no $module for $py; set PYTHON to a Python with $module)"
    exit 0
  fi
}

numpy_prelude() {
  oracle_prelude numpy python3-numpy "$@"
  tmp=$(mktemp -d)
  trap 'rm -rf "$tmp"' EXIT
}
