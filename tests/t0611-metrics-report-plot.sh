#!/bin/sh
# t0611-metrics-report-plot: catalogue metrics (lib/query/metrics.def) in
# 'strobe report -M' and 'strobe plot --metric NAME' on a session of
# pagetouch --phases counting page-faults and context-switches.
# report -M page-faults-per-sec,context-switches-per-sec: the CSV is the
# report without -M plus two last columns, each row's count / the session's
# duration (and / the range's length with --from/--to); JSON has the same
# values and meta metric_seconds; text names the columns and says what
# seconds was.  plot --metric page-faults-per-sec is, bucket by bucket, the
# page-faults plot over the bucket's length, and its y axis has the unit.
# A session recorded with the aliases faults,cs computes the same metrics.
# Bad input (unknown metric, a metric whose events the session did not
# count, -M with --markers, an empty -M) gets one line and exit status 2.
. "$(dirname "$0")/lib.sh"
need_root

"$STROBE" record --sample-event cpu-clock -F 500 -e page-faults,context-switches --name pf \
	-- "$WL/pagetouch" 50000 --phases >"$tmp/record.out" 2>"$tmp/record.err" ||
	fail "record: $(cat "$tmp/record.err")"
sid=$("$STROBE" sessions --format csv | python3 -c 'import csv,sys; print(list(csv.DictReader(sys.stdin))[-1]["id"])')
dur=$("$STROBE" sessions --format csv | python3 -c 'import csv,sys; print(list(csv.DictReader(sys.stdin))[-1]["duration_s"])')
echo "session $sid: $dur s"

R() { "$STROBE" report --session "$sid" --limit 0 "$@" 2>>"$tmp/report.err"; }
R --format csv >"$tmp/plain.csv" || fail "report csv"
R --format csv -M page-faults-per-sec,context-switches-per-sec >"$tmp/m.csv" || fail "report -M csv"
R --format json -M page-faults-per-sec,CONTEXT-SWITCHES-PER-SEC >"$tmp/m.json" || fail "report -M json"
R -M page-faults-per-sec,context-switches-per-sec >"$tmp/m.txt" || fail "report -M text"
R --format csv -M page-faults-per-sec --from 0.2 --to 0.6 >"$tmp/range.csv" || fail "report -M --from --to"
R --format csv --by binary -M context-switches-per-sec >"$tmp/bin.csv" || fail "report -M --by binary"

python3 - "$tmp" "$dur" <<'PY' || fail "report -M values"
import csv, json, math, sys
d, dur = sys.argv[1], float(sys.argv[2])
plain = open(f"{d}/plain.csv").read().splitlines()
m = open(f"{d}/m.csv").read().splitlines()
# the existing columns are untouched: -M only appends
assert m[0] == plain[0] + ",page-faults-per-sec,context-switches-per-sec", m[0]
assert len(m) == len(plain) and len(m) > 5, (len(m), len(plain))
rows = list(csv.DictReader(m))
for line, r in zip(plain[1:], m[1:]):
    assert next(csv.reader([line])) == next(csv.reader([r]))[:-2], (line, r)
def near(a, b):
    return abs(a - b) <= 1e-9 * max(abs(b), 1)
n = 0
for r in rows:
    for ev, col in (("page-faults", "page-faults-per-sec"),
                    ("context-switches", "context-switches-per-sec")):
        want = int(r[ev]) / dur
        assert near(float(r[col]), want), (r, col, want)
        n += 1
tot = sum(int(r["page-faults"]) for r in rows)
assert tot >= 50000, f"{tot} page faults in the rows, pagetouch makes 50000"
js = json.load(open(f"{d}/m.json"))
assert near(js["meta"]["metric_seconds"], dur), js["meta"]
assert len(js["rows"]) == len(rows)
for j, r in zip(js["rows"], rows):
    assert near(j["page-faults-per-sec"], float(r["page-faults-per-sec"])), (j, r)
    assert near(j["context-switches-per-sec"], float(r["context-switches-per-sec"])), (j, r)
# --from 0.2 --to 0.6: seconds is the range's length
for r in csv.DictReader(open(f"{d}/range.csv")):
    assert near(float(r["page-faults-per-sec"]), int(r["page-faults"]) / 0.4), r
brows = list(csv.DictReader(open(f"{d}/bin.csv")))
assert list(brows[0].keys())[-1] == "context-switches-per-sec", brows[0].keys()
for r in brows:
    assert near(float(r["context-switches-per-sec"]), int(r["context-switches"]) / dur), r
print(f"{n} metric cells = count / {dur} s; JSON and --from/--to agree")
PY
head -n 8 "$tmp/m.txt"
grep -q "^# metrics: seconds = [0-9.]* s, the length of the session$" "$tmp/m.txt" ||
	fail "text header on seconds"
grep -q " page-faults-per-sec  *context-switches-per-sec$" "$tmp/m.txt" || fail "text columns"
ok "report -M: values are counts / the session's length, appended columns"

# --- plot --metric NAME: the page-faults plot over each bucket's length
P() { "$STROBE" plot --session "$sid" "$@"; }
P --metric page-faults-per-sec --bucket 50 --data "$tmp/pm.csv" || fail "plot --metric page-faults-per-sec"
P --metric PAGE-FAULTS-PER-SEC --bucket 50 --data "$tmp/pm2.csv" || fail "plot --metric, upper case"
P --event page-faults --bucket 50 --data "$tmp/pe.csv" || fail "plot --event page-faults"
cmp -s "$tmp/pm.csv" "$tmp/pm2.csv" || fail "metric names are not case-insensitive in plot"
python3 - "$tmp/pm.csv" "$tmp/pe.csv" <<'PY' || fail "plot --metric values"
import csv, sys
m = list(csv.DictReader(open(sys.argv[1])))
e = list(csv.DictReader(open(sys.argv[2])))
assert list(m[0].keys())[-1] == "page-faults-per-sec", m[0].keys()
assert len(m) == len(e) and len(m) > 5
nz = 0
for a, b in zip(m, e):
    assert a["from_ns"] == b["from_ns"] and a["to_ns"] == b["to_ns"]
    secs = (int(b["to_ns"]) - int(b["from_ns"])) / 1e9
    want = float(b["page-faults"]) / secs
    assert abs(float(a["page-faults-per-sec"]) - want) <= 1e-8 * max(want, 1), (a, b)
    nz += want > 0
assert nz > 3, "too few buckets with page faults"
print(f"{len(m)} buckets: page-faults-per-sec = page-faults / bucket length")
PY
if command -v gnuplot >/dev/null; then
	P --metric page-faults-per-sec -o "$tmp/pm.svg" 2>>"$tmp/plot.err" || fail "plot --metric -o svg"
	grep -q "page-faults-per-sec (/s)" "$tmp/pm.svg" || fail "the y axis does not show the unit"
	grep -q "page-faults-per-sec = page-faults / seconds" "$tmp/pm.svg" || fail "plot title"
else
	echo "SKIP-PART: gnuplot is not installed: the SVG's axis label is not checked"
fi
ok "plot --metric NAME"

# --- aliases: -e faults,cs counts the same events
"$STROBE" record --sample-event cpu-clock -F 500 -e faults,cs --name alias \
	-- "$WL/pagetouch" 20000 >"$tmp/record.out" 2>"$tmp/record.err" ||
	fail "record faults,cs: $(cat "$tmp/record.err")"
sid2=$("$STROBE" sessions --format csv | python3 -c 'import csv,sys; print(list(csv.DictReader(sys.stdin))[-1]["id"])')
dur2=$("$STROBE" sessions --format csv | python3 -c 'import csv,sys; print(list(csv.DictReader(sys.stdin))[-1]["duration_s"])')
"$STROBE" report --session "$sid2" --format csv --limit 0 -M page-faults-per-sec,context-switches-per-sec \
	>"$tmp/a.csv" 2>>"$tmp/report.err" || fail "report -M on a session of faults,cs"
python3 - "$tmp/a.csv" "$dur2" <<'PY' || fail "report -M with aliases"
import csv, sys
dur = float(sys.argv[2])
rows = list(csv.DictReader(open(sys.argv[1])))
assert rows
for r in rows:
    assert abs(float(r["page-faults-per-sec"]) - int(r["faults"]) / dur) <= 1e-9 * max(int(r["faults"]) / dur, 1), r
    assert abs(float(r["context-switches-per-sec"]) - int(r["cs"]) / dur) <= 1e-9 * max(int(r["cs"]) / dur, 1), r
PY
"$STROBE" plot --session "$sid2" --metric page-faults-per-sec --data "$tmp/a2.csv" ||
	fail "plot --metric on a session of faults,cs"
ok "aliases faults and cs"

# --- bad input: one line, exit 2
refused 2 report "unknown metric 'nope' in -M: 'strobe list --metrics' lists them" \
	"$STROBE" report --session "$sid" -M page-faults-per-sec,nope
refused 2 report "^strobe report: metric IPC needs 'instructions' and 'cycles', which session $sid did not count: record with -e instructions,cycles$" \
	"$STROBE" report --session "$sid" -M ipc
refused 2 report "metric dTLB-MPKI needs 'dTLB-load-misses' and 'instructions', which session $sid did not count" \
	"$STROBE" report --session "$sid" --format csv -M page-faults-per-sec,dTLB-MPKI
[ -s "$tmp/out" ] && fail "report -M with a metric it cannot compute wrote a report"
refused 2 report "-M adds metric columns to the hot-spot table" \
	"$STROBE" report --session "$sid" --markers -M page-faults-per-sec
refused 2 report "empty -M" "$STROBE" report --session "$sid" -M ,
refused 2 report "option -M needs a value" "$STROBE" report -M
refused 2 plot "^strobe plot: metric IPC needs 'instructions' and 'cycles', which session $sid did not count: record with -e instructions,cycles$" \
	"$STROBE" plot --session "$sid" --metric IPC -o "$tmp/bad.csv"
[ -e "$tmp/bad.csv" ] && fail "plot of a metric it cannot compute wrote a file"
refused 2 plot "metric TopDown-retiring needs 'cpu/topdown-retiring/' and 'cpu/slots/'" \
	"$STROBE" plot --session "$sid" --metric topdown-retiring --data "$tmp/bad.csv"
# a name neither a metric nor an event: the expression's message, as before
refused 1 plot "unknown name 'nope' at column 1.*strobe list --metrics" \
	"$STROBE" plot --session "$sid" --metric nope -o "$tmp/bad.csv"
ok "bad input"
