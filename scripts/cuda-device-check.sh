#!/bin/sh
# The one script a session with a GPU runs to check the CUDA engine on real
# hardware. The GPU machine (the `device` tool) is bare: no Debian packages,
# no make, no compiler for our C, so everything it runs is prebuilt here.
#
# 1. Here, on the build machine:
#        scripts/cuda-device-check.sh --prepare        (or: make carry)
#    builds CUDA=1 into build/cuda and fills build/carry/ with
#    bin/{tcalc,cuda-check} (stripped), bin/libtcalc-cuda.so (the CUDA
#    engine's plugin, which both load from their own folder) and lib/ (the
#    shared libraries `ldd bin/tcalc` lists beyond glibc). cuBLAS is not
#    carried (600 MB): the plugin loads the device's own libcublas.so.13
#    (the loader's path, then /usr/local/cuda/lib64; TCALC_CUBLAS names
#    another); nor is cuSOLVER (libcusolver.so.12, TCALC_CUSOLVER), which
#    the float linear algebra rows need. build/ is git-ignored, so build/carry must be named in the
#    device tool's `carry`.
# 2. Through the device tool, from the repository root:
#        run(command="scripts/cuda-device-check.sh", carry=["build/carry"],
#            timeout_s=360)
#    It prints the GPU, checks that tcalc sees it (`--engine cuda`,
#    `--engine auto`), runs the whole parity suite over every row the CPU
#    claims (TCALC_CUDA_UNVERIFIED=1), every golden script through tcalc on
#    both engines (differences in golden-cuda.txt) and the device
#    benchmark, and copies the logs to $OUT (parity.txt, bench.txt).
#    Give the machine back after.
# 3. Paste the "rows for backend/cuda/verified.def" block of parity.txt into
#    backend/cuda/verified.def (rows that PASSed on the GPU only), note the
#    run there, rebuild, and commit.
#
# Budget (15 device minutes a session, machine start included): the parity
# suite should take a minute or two on an idle 16-core host and is cut at 4
# minutes; the benchmark about half a minute (it fills 1 GiB tensors from the
# host), cut at 90 s. That leaves room for one rerun.
set -u
cd "$(dirname "$0")/.." || exit 2

if [ "${1:-}" = "--prepare" ]; then
  set -e
  b=build/cuda
  make -j2 CUDA=1 BUILD=$b $b/tcalc $b/cuda-check
  rm -rf build/carry
  mkdir -p build/carry/bin build/carry/lib
  for p in tcalc cuda-check libtcalc-cuda.so; do
    cp $b/$p build/carry/bin/
    strip --strip-debug build/carry/bin/$p
  done
  # shared libraries beyond glibc (libedit, libcjson and theirs)
  ldd $b/tcalc | awk '/=> \// {print $3}' | while read -r lib; do
    case $(basename "$lib") in
      libc.so*|libm.so*|libdl.so*|librt.so*|libpthread.so*|ld-linux*) ;;
      *) cp -L "$lib" build/carry/lib/ ;;
    esac
  done
  du -sh build/carry
  echo "carry build/carry; run scripts/cuda-device-check.sh through the device tool"
  exit 0
fi

bin=build/carry/bin
if [ ! -x $bin/cuda-check ] || [ ! -f $bin/libtcalc-cuda.so ]; then
  echo "cuda-device-check: $bin is missing: run scripts/cuda-device-check.sh --prepare here and carry build/carry" >&2
  exit 2
fi
export LD_LIBRARY_PATH="$PWD/build/carry/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
out=${OUT:-build/carry/out}
mkdir -p "$out"
limit() { if command -v timeout >/dev/null 2>&1; then timeout "$@"; else shift; "$@"; fi; }
status=0

echo "== device"
nvidia-smi --query-gpu=name,memory.total,driver_version,clocks.max.memory --format=csv 2>/dev/null || echo "(no nvidia-smi)"

# find_lib VAR SONAME: the plugin looks for SONAME on the loader's path,
# then in /usr/local/cuda/lib64 (VAR, e.g. TCALC_CUBLAS, names another).
# The device image may hold a library only inside a Python wheel
# (nvidia-cublas, ...): find it there rather than lose its rows.
find_lib() {
  eval "cur=\${$1:-}"
  if [ -z "$cur" ] && ! ls "/usr/local/cuda/lib64/$2" >/dev/null 2>&1 &&
     ! { command -v ldconfig >/dev/null 2>&1 && ldconfig -p | grep -qF "$2"; }; then
    found=$(find /opt /usr/local /usr/lib -name "$2*" -type f 2>/dev/null | head -1)
    if [ -n "$found" ]; then
      export "$1=$found"
      export LD_LIBRARY_PATH="$LD_LIBRARY_PATH:$(dirname "$found")"
    fi
  fi
  ls /usr/local/cuda/lib64/"$2"* 2>/dev/null || echo "(no $2 in /usr/local/cuda/lib64)"
  eval "echo \"$1=\${$1:-(unset: loader path, then /usr/local/cuda/lib64)}\""
}

echo "== cuBLAS (the f32/f64 matrix products)"
find_lib TCALC_CUBLAS libcublas.so.13
echo "== cuSOLVER (the f32/f64 linear algebra: solve, inv, det, cholesky, eigvalsh, svdvals, pinv, ...)"
find_lib TCALC_CUSOLVER libcusolver.so.12

echo "== tcalc sees the device"
$bin/tcalc --engine cuda -e ':engine' || status=1
$bin/tcalc --engine auto -e ':engine' || status=1
$bin/tcalc --caps | sed -n '/^cuda engine/,$p' | head -3

echo "== parity suite (every CPU row, verified or not)"
start=$(date +%s)
TCALC_CUDA_UNVERIFIED=1 limit 240 $bin/cuda-check parity > "$out/parity.txt" 2>&1
rc=$?
grep -v '^PASS' "$out/parity.txt" | head -80
echo "parity: exit $rc, $(grep -c '^PASS' "$out/parity.txt") rows passed, $(( $(date +%s) - start )) s (full list in parity.txt)"
[ $rc -eq 0 ] || status=1

echo "== golden scripts end to end: --engine cuda against --engine cpu"
# Each tests/golden script through the carried tcalc on both engines (JSON
# mode, -k), compared after the engine's own name is made the same; what
# differs goes to golden-cuda.txt.
g=tests/golden tmp=$(mktemp -d) ndiff=0 ng=0
for tc in $g/*.tc; do
  name=$(basename "$tc" .tc)
  ng=$((ng + 1))
  for e in cpu cuda; do
    (cd $g && NO_COLOR=1 limit 60 "$OLDPWD/$bin/tcalc" --engine $e --json -k < "$name.tc" 2>&1; echo "# exit $?") |
      sed 's/"engine":"cuda"/"engine":"cpu"/g; s/ on cuda/ on cpu/g; s/^cuda$/cpu/' > "$tmp/$e.out"
  done
  rm -f $g/tmp-*
  if ! cmp -s "$tmp/cpu.out" "$tmp/cuda.out"; then
    ndiff=$((ndiff + 1))
    { echo "== $name"; diff "$tmp/cpu.out" "$tmp/cuda.out" | head -40; } >> "$out/golden-cuda.txt"
  fi
done
rm -rf "$tmp"
echo "golden: $ng scripts, $ndiff differ between the engines (see golden-cuda.txt)"
[ -f "$out/golden-cuda.txt" ] && head -60 "$out/golden-cuda.txt"

echo "== benchmark"
limit 90 $bin/cuda-check bench 2>&1 | tee "$out/bench.txt"
exit $status
