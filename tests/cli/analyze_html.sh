# The HTML report renders in a real browser with no network: headless Chromium screenshots a leak
# and a stable report, and the picture must show the verdict's colour, the timeline line, the
# warm-up band and (for the leak) the fitted trend. Skipped where Chromium is not installed.
source "$(dirname "$0")/../cli_lib.sh"
browser=$(command -v chromium || command -v chromium-browser || true)
if [[ -z $browser ]]; then echo "chromium not installed (scripts/deps.sh --test installs it): skipped"; exit 77; fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp" "$out" "$err"' EXIT

shot() {  # shot HTML PNG
  timeout 120 "$browser" --headless --no-sandbox --disable-gpu --disable-background-networking \
    --disable-component-update --disable-sync --no-first-run --user-data-dir="$tmp/profile" \
    --window-size=960,640 --screenshot="$2" "file://$1" >/dev/null 2>&1
  [[ -s $2 ]] || { echo "FAIL: no screenshot of $1"; fails=$((fails + 1)); }
}
# count_colours PNG R,G,B...: for each colour, the pixels within 12 of it (a small PNG decoder,
# no libraries; each image is decoded once).
count_colours() {
  python3 - "$@" <<'PY'
import struct, sys, zlib
data = open(sys.argv[1], "rb").read()
wants = [[int(v) for v in c.split(",")] for c in sys.argv[2:]]
pos, idat, width = 8, b"", 0
while pos < len(data):
    n, kind = struct.unpack(">I4s", data[pos:pos + 8])
    body = data[pos + 8:pos + 8 + n]
    if kind == b"IHDR":
        width, height, depth, ctype = struct.unpack(">IIBB", body[:10])
        channels = {2: 3, 6: 4}[ctype]
    elif kind == b"IDAT":
        idat += body
    pos += 12 + n
raw, stride, prev, i = zlib.decompress(idat), width * channels, None, 0
counts = {tuple(w): 0 for w in wants}
pixels = {}
for y in range(height):
    f, line = raw[i], bytearray(raw[i + 1:i + 1 + stride]); i += 1 + stride
    for x in range(stride):
        a = line[x - channels] if x >= channels else 0
        b = prev[x] if prev else 0
        c = prev[x - channels] if prev and x >= channels else 0
        if f == 1: line[x] = (line[x] + a) & 255
        elif f == 2: line[x] = (line[x] + b) & 255
        elif f == 3: line[x] = (line[x] + (a + b) // 2) & 255
        elif f == 4:
            p = a + b - c; pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
            line[x] = (line[x] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
    prev = line
    for x in range(0, stride, channels):
        px = (line[x], line[x + 1], line[x + 2])
        pixels[px] = pixels.get(px, 0) + 1
for px, n in pixels.items():
    for w in counts:
        if all(abs(px[k] - w[k]) <= 12 for k in range(3)): counts[w] += n
print(" ".join(str(counts[tuple(w)]) for w in wants))
PY
}
at_least() {  # at_least WHAT COUNT MIN
  [[ $2 -ge $3 ]] || { echo "FAIL: $1: $2 pixels, wanted at least $3"; fails=$((fails + 1)); }
}

check "leak report" 1 "$VRAMDOC" analyze "$SRC/tests/data/timelines/leak_tensor.json" --html "$tmp/leak.html"
check "stable report" 0 "$VRAMDOC" analyze "$SRC/tests/data/timelines/stable.json" --html "$tmp/stable.html"
if grep -qiE "(src|href)=.?https?:|<script|url\(" "$tmp/leak.html"; then echo "FAIL: the report must not need the network or scripts"; fails=$((fails + 1)); fi
shot "$tmp/leak.html" "$tmp/leak.png"
shot "$tmp/stable.html" "$tmp/stable.png"
read -r red blue band trend <<<"$(count_colours "$tmp/leak.png" 192,57,43 31,95,191 255,243,196 224,112,0)"
at_least "red verdict banner (leak)" "$red" 20000
at_least "timeline line" "$blue" 300
at_least "warm-up band" "$band" 3000
at_least "fitted trend" "$trend" 100
read -r green red <<<"$(count_colours "$tmp/stable.png" 46,139,87 192,57,43)"
at_least "green verdict banner (stable)" "$green" 20000
[[ $red -lt 100 ]] || { echo "FAIL: the stable report shows $red red pixels"; fails=$((fails + 1)); }
finish
