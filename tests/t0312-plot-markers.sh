#!/bin/sh
# t0312-plot-markers: 'strobe plot' of a session with 1,000 markers (added
# to a real session's database, as t0310 adds its one): 979 tlbwalk:size
# hits crowded into the last 15% of the session, 19 marks of two names
# (one of them hostile) within a millisecond, one lone tlbwalk:size hit and
# one lone hostile mark.  The gnuplot script (kept by a wrapper) has
# markers grouped: at most one label per 10 pixels of the image's width,
# never two labels closer than the minimum gap, the groups' counts adding
# up to 1,000 ("tlbwalk:size ×N", "19 markers", a lone marker's own
# label); 20 crowded ones too (the demo's tlbwalk sizes: "tlbwalk:size
# 22..29 ×8"); the real gnuplot draws it (the hostile names escaped: the SVG's
# text is the name); the subtitle says how the markers were grouped; on a
# terminal the labels sit on at most 4 rows without overlapping.
. "$(dirname "$0")/lib.sh"
need_root
command -v gnuplot >/dev/null || skip "gnuplot is not installed (apt-get install gnuplot-nox)"

"$STROBE" record --sample-event cpu-clock -F 1000 -e page-faults --name marks \
	-- sh -c "\"$WL/pagetouch\" 20000 --phases; sleep 0.3" \
	>"$tmp/record.out" 2>"$tmp/record.err" || fail "record: $(cat "$tmp/record.err")"
python3 - "$STROBE_DB" <<'PY' || fail "adding 1000 markers"
import sqlite3, sys
db = sqlite3.connect(sys.argv[1])
sid, start, dur = db.execute("SELECT id, start_ns, duration_ns FROM sessions ORDER BY id DESC").fetchone()
rows = []
for k in range(979):
    rows.append((start + dur * 80 // 100 + k * (dur * 15 // 100) // 979, "usdt", "tlbwalk:size",
                 "%d,7" % (22 + k % 20)))
for k in range(19):
    rows.append((start + dur * 30 // 100 + k * 1000, "mark", "phase" if k % 2 else "it's <&> \"x\"", None))
rows.append((start + dur * 55 // 100, "usdt", "tlbwalk:size", "99,1"))
rows.append((start + dur * 65 // 100, "mark", "lone ' <b>\"y\"", None))
db.executemany("INSERT INTO markers (session_id, time_ns, cpu, pid, tid, kind, name, args) "
               "VALUES (%d, ?, NULL, 1, 1, ?, ?, ?)" % sid, rows)
db.commit()
PY

# a gnuplot that keeps the script, then runs the real one
cat >"$tmp/gp" <<GP
#!/bin/sh
cp "\$1" "$tmp/saved.gp"
exec gnuplot "\$1"
GP
chmod +x "$tmp/gp"
export STROBE_GNUPLOT="$tmp/gp"

# check SCRIPT WIDTH TERM: the marker labels of the saved script
check() {
	python3 - "$@" <<'PY'
import re, sys
script, width, term = sys.argv[1], int(sys.argv[2]), sys.argv[3] == "term"
text = open(script, encoding="utf-8").read()
x0, x1 = map(float, re.search(r"^set xrange \[([0-9.e+-]+):([0-9.e+-]+)\]", text, re.M).groups())
# gnuplot_write_string: '...', a quote in it as '."'".'
unquote = lambda s: s.replace("'.\"'\".'", "'")
labels, arrows = [], 0
for l in text.splitlines():
    m = re.match(r"set label '(.*)' at ([0-9.e+-]+), graph ([0-9.]+)", l)
    if m:
        labels.append((unquote(m.group(1)), float(m.group(2)), float(m.group(3))))
    arrows += l.startswith("set arrow from ")
total, lone, mixed = 0, 0, 0
want = int(sys.argv[4]) if len(sys.argv) > 4 else 1000
for t, x, y in labels:
    m = re.fullmatch(r"(.*?) (\d+)\.\.(\d+) \u00d7(\d+)", t)
    n = re.fullmatch(r"(\d+) markers", t)
    if m:
        # the first argument of the group's first and last
        assert m.group(1) == "tlbwalk:size" and 22 <= int(m.group(2)) <= 41 and \
            22 <= int(m.group(3)) <= 41, t
        total += int(m.group(4))
    elif n:
        mixed += 1
        total += int(n.group(1))
    else:
        assert t in ("tlbwalk:size 99", "lone ' <b>\"y\""), t
        lone += 1
        total += 1
print("%d labels, %d lines, %d markers in the labels" % (len(labels), arrows, total))
assert 1 <= len(labels) <= width // 10 and len(labels) < want, \
    "%d labels for %d columns" % (len(labels), width)
assert arrows <= width // 10 and arrows >= len(labels), arrows
if not term:
    assert total == want, (total, want)
    assert want != 1000 or (lone == 2 and mixed == 1), (lone, mixed)
    # at least 10 pixels between the lines of two labels
    xs = sorted(x for _, x, _ in labels)
    gap = min(b - a for a, b in zip(xs, xs[1:]))
    assert gap >= (x1 - x0) * 10 / width, (gap, (x1 - x0) * 10 / width)
    assert re.search(r"; %d markers as \d+ lines" % want + r" \(those within [0-9.e+-]+ m?s as one\)", text), \
        "no subtitle on the markers"
else:
    # no two labels of a row overlap: columns from x over the plot's width
    # (at most the terminal's)
    rows = {}
    for t, x, y in labels:
        rows.setdefault(y, []).append(((x - x0) / (x1 - x0) * (width - 14), len(t)))
    assert len(rows) <= 4, rows.keys()
    for r in rows.values():
        r.sort()
        for (a, la), (b, lb) in zip(r, r[1:]):
            assert b >= a + la, (a, la, b)
PY
}

"$STROBE" plot --event page-faults -o "$tmp/p.png" 2>"$tmp/err" || fail "plot png: $(cat "$tmp/err")"
check "$tmp/saved.gp" 1000 png || fail "PNG's markers"
ok "1000 markers: grouped labels at least 10 px apart, counts add up"

"$STROBE" plot --event page-faults --size 2400x500 -o "$tmp/p.svg" 2>"$tmp/err" ||
	fail "plot svg: $(cat "$tmp/err")"
check "$tmp/saved.gp" 2400 svg || fail "SVG's markers"
python3 - "$tmp/p.svg" <<'PY' || fail "the SVG's marker labels"
import re, sys, xml.etree.ElementTree as ET
texts = ["".join(t.itertext()) for t in ET.parse(sys.argv[1]).getroot().iter("{http://www.w3.org/2000/svg}text")]
assert "lone ' <b>\"y\"" in texts, [t for t in texts if "lone" in t]
assert "19 markers" in texts, texts
assert any(re.fullmatch(r"tlbwalk:size \d+\.\.\d+ \u00d7\d+", t) for t in texts), texts
PY
ok "an SVG twice as wide: grouped labels, the hostile name drawn as text"

"$STROBE" plot --event page-faults --term >"$tmp/term" 2>"$tmp/err" || fail "plot --term: $(cat "$tmp/err")"
check "$tmp/saved.gp" 120 term || fail "terminal's markers"
grep -Eq "tlbwalk:size [0-9]+\.\.[0-9]+ ×" "$tmp/term" || fail "--term: no group label: $(cat "$tmp/term")"
ok "terminal: labels on at most 4 rows, none overlapping"

# the demo's case: 20 tlbwalk sizes within 2 % of the range, at its end
cp "$STROBE_DB" "$tmp/d.db"
python3 - "$tmp/d.db" <<'PY' || fail "20 markers"
import sqlite3, sys
db = sqlite3.connect(sys.argv[1])
sid, start, dur = db.execute("SELECT id, start_ns, duration_ns FROM sessions ORDER BY id DESC").fetchone()
db.execute("DELETE FROM markers")
db.executemany("INSERT INTO markers (session_id, time_ns, cpu, pid, tid, kind, name, args) "
               "VALUES (?, ?, NULL, 1, 1, 'usdt', 'tlbwalk:size', ?)",
               [(sid, start + dur * 97 // 100 + k * (dur // 50) // 20, "%d,5" % (22 + k)) for k in range(20)])
db.commit()
PY
"$STROBE" plot --db "$tmp/d.db" --event page-faults -o "$tmp/d.png" 2>"$tmp/err" || fail "plot png: $(cat "$tmp/err")"
check "$tmp/saved.gp" 1000 png 20 || fail "20 crowded markers"
ok "20 crowded markers (the demo's): grouped, labelled with their sizes"
