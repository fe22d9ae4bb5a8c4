#!/bin/sh
# t0152-flamegraph: flame graphs and the stack exports of a real -g session
# of the known-tree workload calltree-fp (main -> outer_a -> leaf for 60%
# of the work, main -> outer_b -> leaf for 40%, built with frame pointers):
#  - strobe flamegraph: well-formed XML (python3's parser), one script,
#    outer_a and outer_b boxes whose widths split 60:40 within 3 points (or
#    3 standard deviations of the proportion, when few samples), a title
#    per box with its samples;
#  - export --format folded: lines "comm;...;leaf COUNT" whose counts sum to
#    the process's samples in strobe report, outer_a's lines 60% of them;
#  - export --format pprof: go tool pprof -top reads it (golang-go), its
#    top function is leaf, its total the same samples;
#  - export --format gecko: JSON whose threads' samples add up to the same,
#    every stack index valid, times in order;
#  - --diff against a second -g session, of a copy named <a&b>'";c: a
#    differential graph, the hostile comm drawn literally (";" as ":");
#  - bad input: an unknown --event lists the session's events in one line,
#    a session without -g says "record with -g".
. "$(dirname "$0")/lib.sh"
need_root
[ -x "$WL/calltree-fp" ] || skip "tests/workloads/calltree-fp is not built (call stack capture not merged)"
"$STROBE" record --help 2>&1 | grep -q -- "--call-graph" || skip "strobe record has no -g"

"$STROBE" record -g --sample-event cpu-clock -F 1000 -e page-faults --name tree \
	-- sh -c 'echo $$ >"$1"; exec "$2" 3' sh "$tmp/pid" "$WL/calltree-fp" \
	>"$tmp/record.out" 2>"$tmp/record.err" || fail "record -g: $(cat "$tmp/record.err")"
pid=$(cat "$tmp/pid")
sid=$("$STROBE" sessions --format csv | awk -F, 'NR > 1 { id = $1 } END { print id }')
[ -n "$sid" ] || fail "no session id: $("$STROBE" sessions)"

# the process's samples, as report counts them
"$STROBE" report --pid "$pid" --format csv >"$tmp/r.csv" || fail "report"
total=$(python3 -c 'import csv, sys; print(sum(int(r["samples"]) for r in csv.DictReader(open(sys.argv[1]))))' "$tmp/r.csv")
[ "$total" -gt 100 ] || fail "only $total samples of pid $pid"

# --- the flame graph
"$STROBE" flamegraph --pid "$pid" -o "$tmp/fg.svg" 2>"$tmp/err" || fail "flamegraph: $(cat "$tmp/err")"
grep -q "wrote $tmp/fg.svg" "$tmp/err" || fail "flamegraph's note: $(cat "$tmp/err")"
python3 - "$tmp/fg.svg" "$total" <<'PY' || fail "flame graph SVG"
import re, sys, xml.etree.ElementTree as E
ns = "{http://www.w3.org/2000/svg}"
root = E.parse(sys.argv[1]).getroot()
assert len(root.findall(".//" + ns + "script")) == 1, "not one script"
w = {}
for g in root.iter(ns + "g"):
    t = g.find(ns + "title").text
    name = t[:t.rindex(" (")]
    n = int(re.search(r" \((\d+) samples", t).group(1))
    r = g.find(ns + "rect")
    w.setdefault(name, [0, 0.0])
    w[name][0] += n
    w[name][1] += float(r.get("width"))
assert "all" in w and w["all"][0] == int(sys.argv[2]), (w.get("all"), sys.argv[2])
for f in ("outer_a", "outer_b", "leaf", "main"):
    assert f in w, f + " missing: " + " ".join(sorted(w))
share = w["outer_a"][1] / (w["outer_a"][1] + w["outer_b"][1])
nshare = w["outer_a"][0] / (w["outer_a"][0] + w["outer_b"][0])
# within 3 points, or 3 standard deviations of a sampled proportion when
# fewer samples leave that much noise (a loaded machine)
n = w["outer_a"][0] + w["outer_b"][0]
tol = max(0.03, 3 * (0.24 / n) ** 0.5)
print("outer_a share: widths %.3f, samples %.3f of %d (tolerance %.3f)" % (share, nshare, n, tol))
assert abs(share - 0.6) < tol and abs(nshare - 0.6) < tol, (share, nshare)
PY
ok "flame graph: outer_a/outer_b 60:40"

# --- folded
"$STROBE" export --format folded --pid "$pid" -o "$tmp/f.txt" 2>"$tmp/err" || fail "folded: $(cat "$tmp/err")"
python3 - "$tmp/f.txt" "$total" <<'PY' || fail "folded"
import sys
tot = a = b = 0
for l in open(sys.argv[1]):
    stack, n = l.rstrip("\n").rsplit(" ", 1)
    n = int(n)
    assert n > 0 and stack, l
    fr = stack.split(";")
    # the root frame is the comm: strobe's, then sh's until the exec
    # ([unknown] where a sample came before its process's comm record)
    assert fr[0] and len(fr) > 1, l
    assert fr[0] in ("calltree-fp", "[unknown]") or "outer_a" not in fr, l
    tot += n
    a += n if "outer_a" in fr else 0
    b += n if "outer_b" in fr else 0
assert tot == int(sys.argv[2]), (tot, sys.argv[2])
assert abs(a / (a + b) - 0.6) < max(0.03, 3 * (0.24 / (a + b)) ** 0.5), (a, b)
PY
ok "folded: counts sum to the report's $total samples"
"$STROBE" export --format folded --pid "$pid" --event page-faults >"$tmp/fe.txt" ||
	fail "folded --event page-faults"

# --- pprof, read by go tool pprof
"$STROBE" export --format pprof --pid "$pid" -o "$tmp/p.pb.gz" || fail "pprof"
if command -v go >/dev/null; then
	go tool pprof -top "$tmp/p.pb.gz" >"$tmp/top.txt" 2>&1 || fail "go tool pprof: $(cat "$tmp/top.txt")"
	grep -q "of $total total" "$tmp/top.txt" || grep -q "Total samples = $total" "$tmp/top.txt" ||
		fail "pprof total is not $total: $(cat "$tmp/top.txt")"
	awk '/flat%/ { getline; print $NF; exit }' "$tmp/top.txt" | grep -qx leaf ||
		fail "pprof's top function is not leaf: $(cat "$tmp/top.txt")"
	ok "pprof: go tool pprof -top: leaf first, $total samples"
else
	echo "SKIP: go tool pprof (golang-go) is not installed: the pprof file is not read back"
fi

# --- gecko
"$STROBE" export --format gecko --pid "$pid" -o "$tmp/g.json" || fail "gecko"
python3 - "$tmp/g.json" "$total" <<'PY' || fail "gecko JSON"
import json, sys
p = json.load(open(sys.argv[1]))
assert p["meta"]["version"] == 24
n = 0
seen = set()
for t in p["threads"]:
    st, fr, strs = t["stackTable"], t["frameTable"], t["stringTable"]
    last = -1
    for s, time, _ in t["samples"]["data"]:
        assert time >= last, "samples out of time order"
        last = time
        n += 1
        while s is not None:
            pre, f = st["data"][s]
            seen.add(strs[fr["data"][f][0]].split(" (in ")[0])
            s = pre
assert n == int(sys.argv[2]), (n, sys.argv[2])
assert {"outer_a", "outer_b", "leaf", "main"} <= seen, seen
PY
ok "gecko: $total samples in time order"

# --- a second -g session, of a copy with a hostile name (its comm is the
# root frame): a differential graph against the first, and the name drawn
# literally, ';' as ':'
mkdir "$tmp/b"
hostile="<a&b>'\";c"
cp "$WL/calltree-fp" "$tmp/b/$hostile"
"$STROBE" record -g --sample-event cpu-clock -F 1000 --name tree2 -- "$tmp/b/$hostile" 1 \
	>/dev/null 2>"$tmp/record2.err" || fail "second record: $(cat "$tmp/record2.err")"
sid2=$("$STROBE" sessions --format csv | awk -F, 'NR > 1 { id = $1 } END { print id }')
"$STROBE" flamegraph --session "$sid2" --diff "$sid" -o "$tmp/d.svg" 2>"$tmp/err" ||
	fail "flamegraph --diff: $(cat "$tmp/err")"
python3 - "$tmp/d.svg" "$sid2" "$sid" <<'PY' || fail "diff SVG"
import sys, xml.etree.ElementTree as E
ns = "{http://www.w3.org/2000/svg}"
r = E.parse(sys.argv[1]).getroot()
assert len(r.findall(".//" + ns + "script")) == 1
title = r.find(".//" + ns + "text[@id='title']").text
assert title.startswith("Differential flame graph: session %s against session %s" % (sys.argv[2], sys.argv[3])), title
names = [g.find(ns + "title").text for g in r.iter(ns + "g")]
assert any(n.startswith("<a&b>'\":c (") for n in names), names[:5]
assert any("outer_a (" in n and "in session " + sys.argv[3] in n for n in names), names[:5]
PY
ok "differential flame graph; a hostile comm drawn literally"

# --- bad input
"$STROBE" flamegraph --session "$sid" --event nope -o "$tmp/x.svg" 2>"$tmp/err" && fail "--event nope accepted"
[ "$(wc -l <"$tmp/err")" = 1 ] && grep -q "its events are page-faults" "$tmp/err" ||
	fail "--event nope: $(cat "$tmp/err")"
[ -e "$tmp/x.svg" ] && fail "a failed flamegraph left $tmp/x.svg"
"$STROBE" record --sample-event cpu-clock -F 1000 --name flat -- true >/dev/null 2>&1 || fail "record without -g"
"$STROBE" flamegraph -o "$tmp/x.svg" 2>"$tmp/err" && fail "a session without stacks drawn"
grep -q "record with -g" "$tmp/err" || fail "no stacks: $(cat "$tmp/err")"
"$STROBE" export --format folded 2>"$tmp/err" && fail "folded of a session without stacks"
grep -q "record with -g" "$tmp/err" || fail "folded, no stacks: $(cat "$tmp/err")"
"$STROBE" flamegraph --session "$sid" --diff "$sid" -o "$tmp/x.svg" 2>"$tmp/err" && fail "--diff itself"
"$STROBE" flamegraph --diff x 2>/dev/null; [ $? = 2 ] || fail "--diff x is not a usage error"
ok "bad input refused in one line"
