# Sourced by the scripts that check tcalc against NumPy: numpy_prelude (with label set)
# sets bin (the tcalc given as $1, absolute), py ($PYTHON, default
# /usr/bin/python3) and tmp (a temporary directory); without NumPy it
# exits, skipping the check and saying so, or failing under CI=true.
numpy_prelude() {
  bin=$(cd "$(dirname "${1:-build/tcalc}")" && pwd)/$(basename "${1:-build/tcalc}")
  py=${PYTHON:-/usr/bin/python3}
  if ! "$py" -c 'import numpy' 2>/dev/null; then
    if [ "${CI:-}" = true ]; then   # CI must run it: a skip there would pass unseen
      echo "$label: FAIL: NumPy is missing for $py (scripts/install-deps.sh installs python3-numpy)"
      exit 1
    fi
    echo "$label: SKIPPED (no NumPy for $py; set PYTHON to a Python with numpy)"
    exit 0
  fi
  tmp=$(mktemp -d)
  trap 'rm -rf "$tmp"' EXIT
}
