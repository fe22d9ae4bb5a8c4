#!/bin/sh
# t0157-flamegraph-deep: the flame graph of a real -g session whose stacks
# are mostly shallow but sometimes 120 calls deep, each deep visit on its
# own random path of two functions (so that every deep frame holds about
# one sample, far under a pixel).  The folded export has the deep stacks
# (over 100 frames); the SVG draws only frames a pixel wide or more: its
# height is that of the frames drawn (the deepest at the top, right under
# the title lines, the root within the first screen, y < 800) and a line
# says how many frames were left out, over 100 here, and their share.
# Before: the image was as tall as the deepest stack (about 2,000 px), the
# frames far below its top.
. "$(dirname "$0")/lib.sh"
need_root
command -v gcc >/dev/null || skip "no C compiler (gcc) for the deep-stack program"
"$STROBE" record --help 2>&1 | grep -q -- "--call-graph" || skip "strobe record has no -g"

cat >"$tmp/deep.c" <<'C'
#include <stdlib.h>
#include <time.h>
static volatile unsigned long sink;
static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}
static void spin(double s)
{
	double end = now() + s;

	while (now() < end)
		for (int i = 0; i < 1000; i++)
			sink += i;
}
void left(int n);
void right(int n);
void left(int n) { if (n) { if (rand() & 1) left(n - 1); else right(n - 1); } else spin(0.0003); sink++; }
void right(int n) { if (n) { if (rand() & 1) left(n - 1); else right(n - 1); } else spin(0.0003); sink++; }
void wide(void) { spin(0.010); }
int main(void)
{
	double end = now() + 4.0;

	srand(1);
	while (now() < end) {
		wide();
		left(120);
	}
	return 0;
}
C
gcc -O0 -fno-omit-frame-pointer -fno-optimize-sibling-calls -o "$tmp/deep" "$tmp/deep.c" ||
	fail "gcc deep.c"

"$STROBE" record -g --sample-event cpu-clock -F 1000 --name deep \
	-- sh -c 'echo $$ >"$1"; exec "$2"' sh "$tmp/pid" "$tmp/deep" \
	>"$tmp/record.out" 2>"$tmp/record.err" || fail "record -g: $(cat "$tmp/record.err")"
pid=$(cat "$tmp/pid")

"$STROBE" export --format folded --pid "$pid" -o "$tmp/f.txt" 2>"$tmp/err" || fail "folded: $(cat "$tmp/err")"
python3 - "$tmp/f.txt" <<'PY' || fail "no deep stacks in the session: $(head -c 2000 "$tmp/f.txt")"
import sys
depths = [len(l.rsplit(" ", 1)[0].split(";")) for l in open(sys.argv[1])]
print("%d stacks, the deepest %d frames" % (len(depths), max(depths)))
assert max(depths) > 100 and sum(d > 100 for d in depths) >= 20, max(depths)
PY
ok "the session has deep stacks"

"$STROBE" flamegraph --pid "$pid" -o "$tmp/fg.svg" 2>"$tmp/err" || fail "flamegraph: $(cat "$tmp/err")"
python3 - "$tmp/fg.svg" <<'PY' || fail "the flame graph of deep thin stacks"
import re, sys, xml.etree.ElementTree as E
ns = "{http://www.w3.org/2000/svg}"
root = E.parse(sys.argv[1]).getroot()
assert len(root.findall(".//" + ns + "script")) == 1, "not one script"
height = float(root.get("height"))
ys, rooty = [], None
for g in root.iter(ns + "g"):
    r = g.find(ns + "rect")
    ys.append(float(r.get("y")))
    assert float(r.get("width")) >= 1, "a frame narrower than a pixel drawn"
    if g.find(ns + "title").text.startswith("all ("):
        rooty = float(r.get("y"))
note = root.find(".//" + ns + "text[@id='omitted']")
assert note is not None, "no line saying what was left out"
m = re.match(r"(\d+) frames narrower than 1 px left out \(([0-9.]+)% of samples", note.text)
assert m, note.text
print("height %d, %d frames drawn, the top one at y=%d, root at y=%d; %s"
      % (height, len(ys), min(ys), rooty, note.text))
assert int(m.group(1)) > 100 and 0 < float(m.group(2)) < 50, note.text
# the deepest frame drawn is right under the title lines (60 px, and the
# note's 16): no empty band above the frames
assert min(ys) == 76, min(ys)
# the root is the bottom level, above the details line (30 px), and on
# the first screen
assert rooty == height - 30 - 16, (rooty, height)
assert rooty < 800, rooty
PY
ok "the SVG as tall as its frames, the root at the first screen, what was left out said"
