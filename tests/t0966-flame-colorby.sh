#!/bin/sh
# t0966-flame-colorby: 'strobe flamegraph --color-by' on a real -g session
# of tests/workloads/faultmix (burst_pages: 20000 page faults back to back,
# then trickle_pages: 2000 faults, each followed by 300 us of spinning),
# sampled on cpu-clock and counting page-faults:
#  - every frame's value in the SVG titles ("EXPR = V" on their second
#    line) is the expression computed here from strobe export --format
#    folded's samples and --event page-faults' increases summed over the
#    stacks through the frame (the frame's path read from the layout), and
#    the root's is the process's page faults per sample from export
#    --format csv;
#  - the colours rise with the values (every channel of the scale falls:
#    no frame of a smaller value is darker than one of a larger), and
#    burst_pages (hundreds of faults per sample) is drawn darker than
#    trickle_pages (a few);
#  - the legend: the expression (double quotes in it escaped for XML, read
#    back intact), the min and max of the drawn frames' values, the
#    scale's ends between them; a catalogue metric (page-faults-per-sec)
#    by name, its "seconds" the session's length (so the root's value
#    times the duration is the faults);
#  - an expression undefined everywhere (a zero divisor): every frame grey,
#    its title "undefined", the legend counting them all;
#  - bad input gets one line and no file: a name the session lacks (the
#    line names it and lists the session's events), a metric of events it
#    did not count (IPC), a syntax error, --color-by with --diff;
#  - strobe ui's /api/flame?color_by= gives the same value per frame path as
#    the SVG's titles, and without color_by still export --format folded's
#    bytes.
. "$(dirname "$0")/lib.sh"
need_root
[ -x "$WL/faultmix" ] || skip "tests/workloads/faultmix is not built"
"$STROBE" flamegraph --help 2>&1 | grep -q -- "--color-by" || fail "flamegraph --help has no --color-by"

"$STROBE" record --call-graph fp --sample-event cpu-clock -F 1000 -e page-faults --name fm \
	-- sh -c 'echo $$ >"$1"; exec "$2" 20000 2000 300' sh "$tmp/pid" "$WL/faultmix" \
	>"$tmp/record.out" 2>"$tmp/record.err" || fail "record: $(cat "$tmp/record.err")"
pid=$(cat "$tmp/pid")
sid=$("$STROBE" sessions --format csv | awk -F, 'NR > 1 { id = $1 } END { print id }')
[ -n "$sid" ] || fail "no session id: $("$STROBE" sessions)"

EXPR='1000 * "page-faults" / samples'
"$STROBE" flamegraph --pid "$pid" --samples --color-by "$EXPR" -o "$tmp/fg.svg" 2>"$tmp/err" ||
	fail "flamegraph --color-by: $(cat "$tmp/err")"
"$STROBE" export --format folded --pid "$pid" -o "$tmp/s.txt" 2>"$tmp/err" || fail "folded: $(cat "$tmp/err")"
"$STROBE" export --format folded --pid "$pid" --event page-faults -o "$tmp/p.txt" 2>"$tmp/err" ||
	fail "folded --event: $(cat "$tmp/err")"
"$STROBE" export --format csv --pid "$pid" -o "$tmp/x.csv" 2>"$tmp/err" || fail "csv: $(cat "$tmp/err")"

# the frames of an SVG as JSON lines: path (root first), value, fill, width
cat >"$tmp/frames.py" <<'PY'
import json, re, sys, xml.etree.ElementTree as E
ns = "{http://www.w3.org/2000/svg}"
root = E.parse(sys.argv[1]).getroot()
fr = []
for g in root.iter(ns + "g"):
    if g.get("class") != "f":
        continue
    t = g.find(ns + "title").text
    first, _, second = t.partition("\n")
    r = g.find(ns + "rect")
    fr.append({"name": first[:first.rindex(" (")], "line2": second, "fill": r.get("fill"),
               "x": float(r.get("x")), "w": float(r.get("width")), "y": float(r.get("y"))})
# a frame's parent: the frame one row below whose span holds its middle
# (x and width are written to 0.1 px); only the lowest, "all", has none
for f in fr:
    mid = f["x"] + f["w"] / 2
    below = [p for p in fr if abs(p["y"] - f["y"] - 16) < 0.01 and
             p["x"] <= mid <= p["x"] + p["w"]]
    assert len(below) == (f["name"] != "all"), (f["name"], len(below))
    f["parent"] = below[0] if below else None
for f in fr:
    p, path = f, []
    while p:
        path.insert(0, p["name"])
        p = p["parent"]
    f["path"] = path[1:]          # without "all"
out = [{"path": f["path"], "line2": f["line2"], "fill": f["fill"], "w": f["w"]} for f in fr]
legend = {}
for t in root.iter(ns + "text"):
    if (t.get("id") or "").startswith("legend"):
        legend[t.get("id")] = t.text
print(json.dumps({"frames": out, "legend": legend}))
PY
python3 "$tmp/frames.py" "$tmp/fg.svg" >"$tmp/fg.json" || fail "reading the SVG"

python3 - "$tmp/fg.json" "$tmp/s.txt" "$tmp/p.txt" "$tmp/x.csv" "$EXPR" <<'PY' || fail "the frames' values"
import csv, json, re, sys
d = json.load(open(sys.argv[1]))
expr = sys.argv[5]
def sums(path):
    s = {}
    for l in open(path):
        stack, n = l.rstrip("\n").rsplit(" ", 1)
        fr = stack.split(";")
        for k in range(len(fr) + 1):
            key = tuple(fr[:k])
            s[key] = s.get(key, 0) + int(n)
    return s
samples, faults = sums(sys.argv[2]), sums(sys.argv[3])
checked = 0
vals = []
for f in d["frames"]:
    key = tuple(f["path"])
    m = re.fullmatch(r"(.*) = (\S+)", f["line2"])
    assert m and m.group(1) == expr, ("title line", f["line2"])
    n, p = samples.get(key, 0), faults.get(key, 0)
    assert n > 0, ("a frame no folded stack passes through", key)
    want = 1000.0 * p / n
    got = float(m.group(2))
    assert abs(got - want) <= 1e-5 * max(1.0, abs(want)), (key, got, want)
    vals.append((got, f))
    checked += 1
assert checked > 10, checked
# the root against the samples of export --format csv (every sample has a stack)
rows = list(csv.DictReader(open(sys.argv[4])))
root = [v for v, f in vals if f["path"] == []][0]
want = 1000.0 * sum(int(r["page-faults"] or 0) for r in rows) / len(rows)
assert abs(root - want) <= 1e-5 * want, ("root against csv", root, want, len(rows))
print("%d frames' values = the folded sums; root %.6g = csv's %d samples" % (checked, root, len(rows)))
PY
ok "every frame's value = $EXPR over the folded stacks through it"

python3 - "$tmp/fg.json" "$EXPR" <<'PY' || fail "the colours and the legend"
import json, re, sys
d = json.load(open(sys.argv[1]))
def rgb(s):
    return tuple(int(x) for x in re.fullmatch(r"rgb\((\d+),(\d+),(\d+)\)", s).groups())
fr = [(float(f["line2"].rsplit(" = ", 1)[1]), rgb(f["fill"]), f) for f in d["frames"]]
# the scale: every channel falls as the value rises
bad = [(a[0], a[1], b[0], b[1]) for a in fr for b in fr
       if a[0] < b[0] and any(x < y for x, y in zip(a[1], b[1]))]
assert not bad, ("a smaller value drawn darker", bad[:3])
def frame(name):
    c = [x for x in fr if x[2]["path"] and x[2]["path"][-1] == name]
    assert c, name + " not drawn"
    return max(c, key=lambda x: x[2]["w"])
b, t = frame("burst_pages"), frame("trickle_pages")
assert b[0] > 10 * t[0], ("burst_pages faults per sample not far above trickle_pages'", b[0], t[0])
assert sum(b[1]) < sum(t[1]), ("burst_pages not darker", b, t)
lg = d["legend"]
title = lg.get("legend-title") or ""
assert sys.argv[2] in title, ("legend title", title)
m = re.search(r"min (\S+), max (\S+);", title)
assert m, title
vs = [x[0] for x in fr]
assert float(m.group(1)) == float("%.6g" % min(vs)) and float(m.group(2)) == float("%.6g" % max(vs)), (m.groups(), min(vs), max(vs))
lo = float(lg["legend-lo"].split()[-1]); hi = float(lg["legend-hi"].split()[-1])
assert min(vs) <= lo < hi <= max(vs), (lo, hi, min(vs), max(vs))
assert re.fullmatch(r"undefined \(0/0\): 0 of %d frames" % len(fr), lg["legend-undef"]), lg["legend-undef"]
print("burst_pages %.6g %s, trickle_pages %.6g %s; legend min %s max %s, scale %s to %s" %
      (b[0], b[1], t[0], t[1], m.group(1), m.group(2), lo, hi))
PY
grep -q '&quot;page-faults&quot;' "$tmp/fg.svg" || fail "the expression's quotes are not escaped in the SVG"
ok "colours rise with the value (burst_pages darker than trickle_pages); legend with min, max, scale"

# a catalogue metric by name: seconds is the session's length
"$STROBE" flamegraph --pid "$pid" --color-by page-faults-per-sec -o "$tmp/ps.svg" 2>"$tmp/err" ||
	fail "flamegraph --color-by page-faults-per-sec: $(cat "$tmp/err")"
dur=$("$STROBE" sessions --format json | python3 -c 'import json, sys
s = [x for x in json.load(sys.stdin)["rows"] if str(x["id"]) == sys.argv[1]][0]
print(s["duration_s"])' "$sid") || fail "the session's duration: $("$STROBE" sessions --format json | head -c 300)"
python3 "$tmp/frames.py" "$tmp/ps.svg" >"$tmp/ps.json" || fail "reading the SVG"
python3 - "$tmp/ps.json" "$tmp/p.txt" "$dur" <<'PY' || fail "page-faults-per-sec"
import json, sys
d = json.load(open(sys.argv[1]))
tot = sum(int(l.rsplit(" ", 1)[1]) for l in open(sys.argv[2]))
root = [f for f in d["frames"] if f["path"] == []][0]
name, v = root["line2"].rsplit(" = ", 1)
assert name == "page-faults-per-sec", name
want = tot / float(sys.argv[3])
assert abs(float(v) - want) <= 1e-5 * want, (v, want)
assert "page-faults-per-sec = page-faults / seconds (/s)" in d["legend"]["legend-title"], d["legend"]
print("root %s/s = %d faults / %s s" % (v, tot, sys.argv[3]))
PY
ok "--color-by page-faults-per-sec: the metrics file's expression, seconds the session's"

# undefined everywhere
"$STROBE" flamegraph --pid "$pid" --color-by 'page-faults / (samples - samples)' -o "$tmp/u.svg" \
	2>"$tmp/err" || fail "flamegraph, undefined metric: $(cat "$tmp/err")"
python3 "$tmp/frames.py" "$tmp/u.svg" >"$tmp/u.json" || fail "reading the SVG"
python3 - "$tmp/u.json" <<'PY' || fail "undefined frames"
import json, sys
d = json.load(open(sys.argv[1]))
n = len(d["frames"])
assert n > 10
assert all(f["line2"].endswith(" = undefined") for f in d["frames"]), [f["line2"] for f in d["frames"]][:3]
fills = set(f["fill"] for f in d["frames"])
assert len(fills) == 1, fills
r, g, b = (int(x) for x in fills.pop()[4:-1].split(","))
assert r == g == b, ("not grey", r, g, b)
assert d["legend"]["legend-undef"] == "undefined (0/0): %d of %d frames" % (n, n), d["legend"]
PY
ok "a zero divisor: every frame grey, 'undefined', counted in the legend"

# bad input: one line, exit status, no file
bad() { # STATUS WANT ARGS...: flamegraph ARGS fails with STATUS, one line matching WANT
	st=$1 want=$2
	shift 2
	rm -f "$tmp/bad.svg"
	"$STROBE" flamegraph --pid "$pid" -o "$tmp/bad.svg" "$@" >"$tmp/out" 2>"$tmp/err"
	rc=$?
	[ $rc = "$st" ] || fail "flamegraph $*: exit $rc, not $st: $(cat "$tmp/err")"
	[ "$(wc -l <"$tmp/err")" = 1 ] || fail "flamegraph $*: not one line: $(cat "$tmp/err")"
	grep -q -- "$want" "$tmp/err" || fail "flamegraph $*: '$(cat "$tmp/err")' does not say '$want'"
	[ ! -e "$tmp/bad.svg" ] || fail "flamegraph $*: left a file"
}
bad 1 "unknown name 'bogus'.*has page-faults, samples (cpu-clock)" --color-by 'bogus / samples'
bad 1 "IPC needs 'instructions' and 'cycles'.*has page-faults" --color-by IPC
bad 2 "bad --color-by 'page-faults / (': column" --color-by 'page-faults / ('
bad 2 "bad --color-by ''" --color-by ''
bad 2 "--color-by and --diff exclude each other" --color-by IPC --diff "$sid"
ok "bad --color-by: one line each (unknown name with the session's events, IPC uncounted, syntax, --diff)"

# strobe ui: the same values per path; the default reply unchanged
if command -v curl >/dev/null && "$STROBE" ui --help >/dev/null 2>&1; then
	ui_start --no-open
	url=$(sed -n 's|^strobe ui: \(http://127\.0\.0\.1:[0-9]*/?token=[0-9a-f]\{32\}\)$|\1|p' "$tmp/ui.out")
	[ -n "$url" ] || fail "no URL line: $(cat "$tmp/ui.out" "$tmp/ui.err")"
	base=${url%%/\?token=*}
	token=${url##*token=}
	q=$(python3 -c 'import sys, urllib.parse; print(urllib.parse.quote(sys.argv[1]))' "$EXPR")
	code=$(curl -s -o "$tmp/api.json" -w '%{http_code}' "$base/api/flame?token=$token&session=$sid&color_by=$q")
	[ "$code" = 200 ] || fail "/api/flame?color_by: $code $(cat "$tmp/api.json")"
	"$STROBE" export --format folded --session "$sid" -o "$tmp/all.txt" || fail "folded"
	# as wide as every frame is drawn (its scale then over all, as the API's)
	"$STROBE" flamegraph --session "$sid" --samples --width 100000 --color-by "$EXPR" \
		-o "$tmp/all.svg" 2>/dev/null ||
		fail "flamegraph of the session"
	python3 "$tmp/frames.py" "$tmp/all.svg" >"$tmp/all.json" || fail "reading the SVG"
	python3 - "$tmp/api.json" "$tmp/all.json" "$tmp/all.txt" <<'PY' || fail "/api/flame?color_by against the SVG"
import json, sys
r = json.load(open(sys.argv[1]))
svg = json.load(open(sys.argv[2]))
assert r["folded"] == open(sys.argv[3]).read(), "the reply's folded text is not export --format folded's"
path = []
byp = {}
for i, (p, name, v, c) in enumerate(r["nodes"]):
    path.append((path[p] + [name]) if p >= 0 else [])
    byp[tuple(path[i])] = (v, c)
# the SVG's scale is over the frames it draws, the API's over all: the
# same frames when the SVG draws all (below 100000 samples at 100000 px)
lg = svg["legend"]
total = sum(int(l.rsplit(" ", 1)[1]) for l in open(sys.argv[3]))
same = total < 99000
if same:
    assert "%.6g" % r["lo"] == lg["legend-lo"].split()[-1], (r["lo"], lg)
    assert "%.6g" % r["hi"] == lg["legend-hi"].split()[-1], (r["hi"], lg)
    assert len(svg["frames"]) == len(r["nodes"]), (len(svg["frames"]), len(r["nodes"]))
n = 0
for f in svg["frames"]:
    v, c = byp[tuple(f["path"])]
    want = f["line2"].rsplit(" = ", 1)[1]
    got = "undefined" if v is None else "%.6g" % v
    assert got == want, (f["path"], got, want)
    assert not same or c == f["fill"], (f["path"], c, f["fill"])
    n += 1
assert n > 10
assert r["min"] <= r["lo"] < r["hi"] <= r["max"], r
print("%d frames: the API's value%s = the SVG's" % (n, " and colour" if same else
      " (colours not compared: %d samples, the SVG leaves frames out)" % total))
PY
	code=$(curl -s -o "$tmp/api.txt" -w '%{http_code}' "$base/api/flame?token=$token&session=$sid")
	[ "$code" = 200 ] && cmp -s "$tmp/api.txt" "$tmp/all.txt" ||
		fail "/api/flame without color_by is no longer export --format folded's"
	code=$(curl -s -o "$tmp/api.err" -w '%{http_code}' "$base/api/flame?token=$token&session=$sid&color_by=bogus")
	[ "$code" = 400 ] && grep -q "unknown name 'bogus'" "$tmp/api.err" ||
		fail "/api/flame?color_by=bogus: $code $(cat "$tmp/api.err")"
	ok "/api/flame?color_by= = the SVG's values and colours; without it, folded as before"
else
	echo "skip: strobe ui or curl missing: the API's check not run"
fi
