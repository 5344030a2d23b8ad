#!/bin/sh
# Plots outside the golden files (SPEC 17): the PNG, SVG and PDF files
# save_plot and file= write (read back with Python's zlib and struct, an XML
# parser and the PDF's own MediaBox; pdftoppm and rsvg-convert too where they
# are installed), what a failed write leaves (nothing), and the REPL on a
# real terminal through tmux: a plot sized to the window, in colour, and
# without colour under NO_COLOR.
# Usage: tests/plot/run.sh path/to/tcalc
set -u
bin=$(cd "$(dirname "${1:-build/tcalc}")" && pwd)/$(basename "${1:-build/tcalc}")
tmp=$(mktemp -d)
# a tmux server per session: a new session on a server whose last one was
# just killed can meet it exiting
nsock=0
T() { tmux -L "tcalc-plot-$$-$nsock" -f /dev/null "$@"; }
cleanup() {
  k=0
  while [ $k -le $nsock ]; do tmux -L "tcalc-plot-$$-$k" kill-server > /dev/null 2>&1; k=$((k + 1)); done
  rm -rf "$tmp"
}
trap cleanup EXIT
n=0 fail=0
ok() { n=$((n + 1)); }
bad() { n=$((n + 1)); fail=$((fail + 1)); echo "FAIL: $*"; }
check() { if eval "$1"; then ok; else bad "$2"; fi; }
export LC_ALL=C.UTF-8
cd "$tmp" || exit 1

# ---- files ----
"$bin" -e 'y = sin(linspace(0, 20, 100000))' \
  -e 'save_plot("line.png", plot(y, title="sine", xlabel="x", ylabel="y"))' \
  -e 'save_plot("big.png", plot(y), size=[1000, 400], dpi=192)' \
  -e 'save_plot("hist.svg", hist(randn(10000, seed=1), bins=30), size=[640, 480])' \
  -e 'save_plot("heat.pdf", heatmap(reshape(arange(10000), [100, 100])))' \
  -e 'scatter(randn(100, seed=2), randn(100, seed=3), file="points.png")' \
  -e 'save_plot("spy.svg", spy(eye(50)))' \
  -e 'save_plot("BAR.PNG", bar([3, -1, 4]))' > out.txt 2>&1
check '[ $? -eq 0 ] && [ ! -s out.txt ]' "save_plot and file= print nothing and succeed: $(head -3 out.txt)"
/usr/bin/python3 - > py.txt 2>&1 <<'EOF'
import re, struct, sys, zlib
import xml.etree.ElementTree as ET
def png(path):
    b = open(path, 'rb').read()
    assert b[:8] == b'\x89PNG\r\n\x1a\n', path + ': no PNG signature'
    n, kind = struct.unpack('>I4s', b[8:16])
    assert kind == b'IHDR' and n == 13, path + ': no IHDR'
    w, h = struct.unpack('>II', b[16:24])
    idat = b''
    i = 8
    while i < len(b):   # every chunk's CRC, and the image data inflates
        n, kind = struct.unpack('>I4s', b[i:i + 8])
        data = b[i + 8:i + 8 + n]
        crc, = struct.unpack('>I', b[i + 8 + n:i + 12 + n])
        assert zlib.crc32(kind + data) == crc, path + ': bad CRC'
        if kind == b'IDAT': idat += data
        i += 12 + n
    raw = zlib.decompress(idat)
    bpp = {2: 3, 6: 4}[b[25]]
    assert len(raw) == h * (1 + w * bpp), path + ': image data of the wrong size'
    rows = [raw[r * (1 + w * bpp) + 1:(r + 1) * (1 + w * bpp)] for r in range(h)]
    assert len(set(rows)) > 2, path + ': blank image'
    return w, h
def svg(path):
    r = ET.parse(path).getroot()
    return float(r.get('width').rstrip('pt')), float(r.get('height').rstrip('pt'))
def pdf(path):
    b = open(path, 'rb').read()
    assert b.startswith(b'%PDF-') and b.rstrip().endswith(b'%%EOF'), path + ': not a whole PDF'
    m = re.search(rb'/MediaBox \[\s*0 0 ([0-9.]+) ([0-9.]+)\s*\]', b)
    return float(m.group(1)), float(m.group(2))
want = [('line.png', png, (800, 500)), ('big.png', png, (2000, 800)), ('points.png', png, (800, 500)),
        ('BAR.PNG', png, (800, 500)), ('hist.svg', svg, (640, 480)), ('spy.svg', svg, (800, 500)),
        ('heat.pdf', pdf, (800, 500))]
bad = 0
for path, fn, size in want:
    try:
        got = fn(path)
        if tuple(got) != size:
            print('FAIL: %s is %s, not %s' % (path, got, size)); bad += 1
    except Exception as e:
        print('FAIL: %s: %r' % (path, e)); bad += 1
print('files checked: %d, failures: %d' % (len(want), bad))
sys.exit(bad != 0)
EOF
check '[ $? -eq 0 ]' "the files: $(cat py.txt)"
if command -v pdftoppm > /dev/null; then
  check 'pdftoppm -png -r 72 heat.pdf heat > /dev/null 2>&1 && [ -s heat-1.png ]' "pdftoppm cannot read heat.pdf"
fi
if command -v rsvg-convert > /dev/null; then
  check 'rsvg-convert -o hist-svg.png hist.svg 2> /dev/null && [ -s hist-svg.png ]' "rsvg-convert cannot read hist.svg"
fi

# a write that fails leaves nothing: no file, no temporary file; an old file stays as it was
echo old > keep.png
"$bin" -k -e 'save_plot("no-dir/a.png", plot([1, 2]))' -e 'save_plot("a.bmp", plot([1, 2]))' \
  -e 'save_plot("keep.png", [1, 2])' -e 'plot([1], file="a.jpeg")' > err.txt 2>&1
check '[ $? -ne 0 ] && [ "$(grep -c "^error\[io_error\]" err.txt)" -eq 1 ] && [ "$(grep -c "^error\[bad_argument\]" err.txt)" -eq 3 ]' \
  "failed writes: $(cat err.txt)"
check '[ ! -e a.bmp ] && [ ! -e a.jpeg ] && [ "$(cat keep.png)" = old ] && [ -z "$(ls -a | grep tcalc-save)" ]' \
  "a failed write left something: $(ls -a)"
check 'grep -q "save_plot writes .png, .svg or .pdf" err.txt' "the unknown extension's message lists the kinds"

# ---- the REPL on a terminal ----
if ! command -v tmux > /dev/null; then
  bad "tmux is not installed (scripts/install-deps.sh installs it)"
else
  screen() { T capture-pane -p -t t 2> /dev/null; }
  wait_for() {
    i=0
    until screen | grep -qF -- "$1"; do i=$((i + 1)); [ $i -gt 300 ] && return 1; sleep 0.1; done
  }
  for cols in 100 60; do
    nsock=$((nsock + 1))
    T new-session -d -s t -x $cols -y 40 "env LC_ALL=C.UTF-8 TERM=xterm-256color HOME=$tmp $bin -q"
    wait_for 'tcalc>' || bad "no prompt at $cols columns"
    T send-keys -t t 'plot(sin(linspace(0, 6.3, 500)), title="window")' Enter
    wait_for '└' || bad "no plot at $cols columns"
    sleep 0.2
    screen > plot$cols.txt
    T capture-pane -p -e -t t > colour$cols.txt
    # the axis line and the plot rows reach the window's last column, not beyond
    w=$(grep '└' plot$cols.txt | python3 -c 'import sys; print(max(len(l.rstrip("\n")) for l in sys.stdin))')
    check "[ '$w' -eq $cols ]" "at $cols columns the axis line is $w wide"
    check "grep -q '⠀' plot$cols.txt && grep -q 'window' plot$cols.txt" "no braille or title at $cols columns"
    check "grep -q \"\$(printf '\\033')\\[3[0-9]m\" colour$cols.txt" "no ANSI colour in the plot at $cols columns"
  done
  nsock=$((nsock + 1))
  T new-session -d -s t -x 80 -y 30 "env LC_ALL=C.UTF-8 NO_COLOR=1 HOME=$tmp $bin -q"
  wait_for 'tcalc>' || bad "no prompt (NO_COLOR)"
  T send-keys -t t 'plot([1, 3, 2])' Enter
  wait_for '└' || bad "no plot (NO_COLOR)"
  sleep 0.2
  T capture-pane -p -e -t t > nocolour.txt
  check "! grep -q \"\$(printf '\\033')\\[3[0-9]m\" nocolour.txt" "NO_COLOR still coloured the plot"
fi
echo "plots: $n checks, $fail failures"
[ "$fail" -eq 0 ]
