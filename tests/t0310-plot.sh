#!/bin/sh
# t0310-plot: 'strobe plot' on a session of split603010 and pagetouch
# --phases counting page-faults and context-switches.  The CSV series add
# up to the database's sums and a metric is its formula applied per bucket;
# a PNG is a valid PNG (signature, chunk CRCs, IHDR of the asked size,
# IEND) ; an SVG parses as XML, has one plot per series (2 for
# page-faults,samples; one per CPU with --by cpu) and x tick labels that
# span the session; --wall labels are clock times; a PDF starts with %PDF;
# --term draws text on stdout; --by symbol (page faults) and --metric --by
# pid as CSV are, bucket by bucket, the sums of the samples (as exported,
# and from table samples) of their top 8 symbols / processes and of the
# rest; a marker row becomes a labelled line and a
# lost row a shaded interval.  Bad input (unknown event, unknown name in
# a metric, a range after the end, a missing session, --event with
# --metric, gnuplot missing or failing) gives one line on stderr, a
# non-zero exit and no output file.
. "$(dirname "$0")/lib.sh"
need_root
command -v gnuplot >/dev/null || skip "gnuplot is not installed (apt-get install gnuplot-nox)"

"$STROBE" record --sample-event cpu-clock -F 1000 -e page-faults,context-switches --name plots \
	-- sh -c "\"$WL/split603010\" 1 & \"$WL/pagetouch\" 50000 --phases; wait" \
	>"$tmp/record.out" 2>"$tmp/record.err" || fail "record: $(cat "$tmp/record.err")"
grep -q "samples, 0 lost" "$tmp/record.err" || fail "record summary: $(cat "$tmp/record.err")"
dur=$("$STROBE" sessions --format csv | python3 -c 'import csv,sys; print(list(csv.DictReader(sys.stdin))[-1]["duration_s"])')
# the kernel may have throttled sampling (a row in table lost): then every
# plot has one more key entry, for the shading
nlost=$(python3 -c "import sqlite3,sys; print(sqlite3.connect(sys.argv[1]).execute('SELECT count(*) FROM lost').fetchone()[0])" "$STROBE_DB")
x=0
[ "$nlost" -gt 0 ] && x=1
echo "session: $dur s, $nlost rows in table lost"

P() { "$STROBE" plot "$@"; }

# --- CSV: the series are the database's sums per bucket
P --event page-faults,samples,context-switches --bucket 20 -o "$tmp/e.csv" || fail "plot -o e.csv"
P --metric '1000 * page-faults / samples' --bucket 20 -o "$tmp/m.csv" || fail "plot --metric -o m.csv"
P --event cpu-clock --bucket 20 --data "$tmp/c.csv" || fail "plot --data"
python3 - "$STROBE_DB" "$tmp/e.csv" "$tmp/m.csv" "$tmp/c.csv" <<'PY' || fail "CSV series"
import csv, math, strobedb, sys
db = strobedb.connect(sys.argv[1])
sid, start, n = db.execute("SELECT id, start_ns, samples FROM sessions ORDER BY id DESC").fetchone()
pf, cs = db.execute("SELECT sum(c0), sum(c1) FROM samples WHERE session_id=?", (sid,)).fetchone()
e = list(csv.DictReader(open(sys.argv[2])))
m = list(csv.DictReader(open(sys.argv[3])))
c = list(csv.DictReader(open(sys.argv[4])))
assert list(e[0].keys()) == ["from_s", "to_s", "from_ns", "to_ns", "page-faults", "samples",
                             "context-switches"], list(e[0].keys())
tot = lambda rows, k: sum(float(r[k]) for r in rows if r[k] != "")
assert tot(e, "samples") == n, (tot(e, "samples"), n)
assert tot(e, "page-faults") == pf, (tot(e, "page-faults"), pf)
assert tot(e, "context-switches") == cs, (tot(e, "context-switches"), cs)
assert [r["cpu-clock"] for r in c] == [r["samples"] for r in e], "cpu-clock is not the sample count"
assert int(e[0]["from_ns"]) == start and float(e[0]["from_s"]) == 0
for a, b in zip(e, e[1:]):
    assert int(b["from_ns"]) - int(a["from_ns"]) == 20000000 and a["to_ns"] == b["from_ns"]
assert len(m) == len(e)
gaps = 0
for a, b in zip(e, m):
    s, f = float(a["samples"]), float(a["page-faults"])
    v = b["1000 * page-faults / samples"]
    if s == 0:
        assert v == "", f"no samples but metric {v!r}"
        gaps += 1
    else:
        assert math.isclose(float(v), 1000 * f / s, rel_tol=1e-6), (v, f, s)
print(f"{len(e)} buckets, {n} samples, {pf} page faults, {cs} context switches, {gaps} gaps")
PY
ok "CSV"

# --- PNG of the asked size
P --event page-faults,samples --size 800x400 -o "$tmp/a.png" || fail "plot -o a.png"
python3 - "$tmp/a.png" <<'PY' || fail "PNG"
import struct, sys, zlib
d = open(sys.argv[1], "rb").read()
assert d[:8] == b"\x89PNG\r\n\x1a\n", "PNG signature"
p, chunks = 8, []
while p < len(d):
    n, = struct.unpack(">I", d[p:p + 4])
    typ, body = d[p + 4:p + 8], d[p + 8:p + 8 + n]
    crc, = struct.unpack(">I", d[p + 8 + n:p + 12 + n])
    assert zlib.crc32(typ + body) & 0xffffffff == crc, f"bad CRC in {typ}"
    chunks.append((typ, body))
    p += 12 + n
assert p == len(d), "trailing bytes"
assert chunks[0][0] == b"IHDR" and chunks[-1][0] == b"IEND", [c[0] for c in chunks]
w, h = struct.unpack(">II", chunks[0][1][:8])
assert (w, h) == (800, 400), (w, h)
assert any(c[0] == b"IDAT" for c in chunks)
print(f"PNG {w}x{h}, {len(chunks)} chunks")
PY
ok "PNG"

# svg_check FILE NSERIES TITLE...: XML with NSERIES plots (gnuplot's svg: one
# <g id="gnuplot_plot_N"> per plot, with its title in a legend <text>), among
# them one titled TITLE (or TITLE followed by more) for each TITLE; prints the
# x tick labels
svg_check() {
	python3 - "$@" <<'PY'
import re, sys, xml.etree.ElementTree as ET
f, n, titles = sys.argv[1], int(sys.argv[2]), sys.argv[3:]
root = ET.parse(f).getroot()
ns = "{http://www.w3.org/2000/svg}"
plots = [g for g in root.iter(ns + "g") if re.fullmatch(r"gnuplot_plot_\d+", g.get("id", ""))]
names = ["".join(t.itertext()).strip() for g in plots for t in g.iter(ns + "text")]
names = [x for x in names if x]
assert len(plots) == n, f"{len(plots)} plots, want {n}: {names}"
for t in titles:
    assert any(x == t or x.startswith(t + ",") for x in names), f"no series titled {t!r}: {names}"
# tick labels: <g transform="translate(x,y)" text-anchor="middle"><text>label</text></g>;
# the x axis's share one y
rows = {}
for g in root.iter(ns + "g"):
    m = re.match(r"translate\(([-\d.]+),([-\d.]+)\)$", g.get("transform", ""))
    t = g.find(ns + "text")
    if m and t is not None and g.get("text-anchor") == "middle":
        rows.setdefault(m.group(2), []).append("".join(t.itertext()).strip())
ticks = max(rows.values(), key=len)
print(" ".join(ticks))
PY
}

# --- SVG: two events, two plots; ticks from 0 to about the session's length
svg_check_ticks() {
	python3 - "$1" "$dur" <<'PY'
import sys
ticks = [float(x) for x in open(sys.argv[1]).read().split()]
dur = float(sys.argv[2])
print(f"x ticks {ticks[0]} .. {ticks[-1]} for {dur} s")
assert ticks == sorted(ticks) and len(ticks) >= 3
assert ticks[0] == 0, "x axis does not start at 0"
assert 0.75 * dur <= ticks[-1] <= 1.02 * dur, "x ticks do not span the session"
PY
}
P --event page-faults,samples -o "$tmp/a.svg" || fail "plot -o a.svg"
svg_check "$tmp/a.svg" $((2 + x)) page-faults samples >"$tmp/ticks" || fail "SVG of page-faults,samples"
svg_check_ticks "$tmp/ticks" || fail "SVG x ticks: $(cat "$tmp/ticks")"
ok "SVG: 2 series, x ticks $(cat "$tmp/ticks")"

# --- --by cpu: one series per CPU (top 8, the rest as other)
ncpu=$(python3 -c "import strobedb,sys; print(strobedb.connect(sys.argv[1]).execute('SELECT count(DISTINCT cpu) FROM samples WHERE session_id=(SELECT max(id) FROM sessions)').fetchone()[0])" "$STROBE_DB")
want=$ncpu
[ "$ncpu" -gt 8 ] && want=9
P --event samples --by cpu -o "$tmp/cpu.svg" || fail "plot --by cpu"
svg_check "$tmp/cpu.svg" $((want + x)) "CPU 0" >/dev/null || fail "SVG --by cpu ($ncpu CPUs)"
P --event samples --by cpu --top 1 -o "$tmp/cpu1.csv" || fail "plot --by cpu --top 1"
if [ "$ncpu" -gt 1 ]; then
	head -n 1 "$tmp/cpu1.csv" | grep -q ",other ($((ncpu - 1)) more CPUs)$" ||
		fail "--top 1 header: $(head -n 1 "$tmp/cpu1.csv")"
fi
ok "--by cpu: $ncpu series"

# --- --by pid: pagetouch has the most page faults
P --event page-faults --by pid -o "$tmp/pid.csv" || fail "plot --by pid"
head -n 1 "$tmp/pid.csv" | grep -q '^from_s,to_s,from_ns,to_ns,pid [0-9]* (pagetouch),' ||
	fail "--by pid: pagetouch is not the first series: $(head -n 1 "$tmp/pid.csv")"
P --event page-faults --by symbol -o "$tmp/sym.csv" || fail "plot --by symbol"
P --metric '1000*page-faults/samples' --by pid -o "$tmp/mpid.csv" || fail "plot --metric --by pid -o csv"
"$STROBE" export --format csv -o "$tmp/x.csv" || fail "export"
python3 - "$STROBE_DB" "$tmp/sym.csv" "$tmp/mpid.csv" "$tmp/x.csv" <<'PY' || fail "--by symbol and --metric --by pid values"
import bisect, csv, math, os, re, strobedb, sys
db = strobedb.connect(sys.argv[1])
sid, n = db.execute("SELECT id, samples FROM sessions ORDER BY id DESC").fetchone()
ev = [r[0] for r in db.execute("SELECT name FROM session_events WHERE session_id=? ORDER BY idx", (sid,))]
pfc = "c%d" % ev.index("page-faults")
def buckets(rows):
    return [int(r["from_ns"]) for r in rows], [int(r["to_ns"]) for r in rows]
def bucket_of(starts, ends, t):
    i = bisect.bisect_right(starts, t) - 1
    return i if i >= 0 and t < ends[i] else None
# --by symbol: page faults per bucket per "SYMBOL (binary file name)", from
# the samples as exported (one row per row of table samples)
sym = list(csv.DictReader(open(sys.argv[2])))
x = list(csv.DictReader(open(sys.argv[4])))
assert len(x) == n, f"export has {len(x)} samples, the session {n}"
starts, ends = buckets(sym)
want, tot = {}, {}
for r in x:
    b = bucket_of(starts, ends, int(r["time_ns"]))
    assert b is not None, f"sample at {r['time_ns']} outside the plot's buckets"
    k = f"{r['symbol'] or '[unknown]'} ({os.path.basename(r['binary'])})"
    v = int(r["page-faults"] or 0)
    want[(k, b)] = want.get((k, b), 0) + v
    tot[k] = tot.get(k, 0) + v
# the top 8 series, then "other (N more ...)" only when there are more than 8
# (a key whose series is all zero need not be drawn at all)
# (keys: what the series stand for; key_of: a series title to its key)
def split_other(cols, what, keys, key_of=lambda t: t):
    m = re.fullmatch(r"other \((\d+) more %s\)" % what, cols[-1])
    named = cols[:-1] if m else cols
    if m:
        assert len(named) == 8, f"{len(named)} named series before {cols[-1]}"
    else:
        drawn = {key_of(t) for t in named}
        assert set(keys) <= drawn, f"no series and no 'other' for {set(keys) - drawn}: {cols}"
    return named, (cols[-1] if m else None)
cols = list(sym[0].keys())[4:]
named, other = split_other(cols, "symbols", [k for k, v in tot.items() if v])
for k in named:
    assert k in tot, f"series {k!r} is no symbol of the samples"
rest = sorted((v for k, v in tot.items() if k not in named), reverse=True)
assert not rest or min(tot[k] for k in named) >= rest[0], \
    f"a symbol with {rest[0]} page faults is not among the top 8"
bad = 0
for b, row in enumerate(sym):
    for k in named:
        bad += float(row[k]) != want.get((k, b), 0)
    if other:
        o = sum(v for (k, bb), v in want.items() if bb == b and k not in named)
        bad += float(row[other]) != o
assert bad == 0, f"{bad} values of --by symbol differ from the samples"
print(f"--by symbol: {len(sym)} buckets x {len(cols)} series = the samples' page faults "
      f"({sum(tot.values())}) of {len(tot)} symbols")
# --metric '1000*page-faults/samples' --by pid: per bucket and pid from table samples
mp = list(csv.DictReader(open(sys.argv[3])))
starts, ends = buckets(mp)
first, last = db.execute("SELECT first_sample, last_sample FROM sessions WHERE id=?", (sid,)).fetchone()
acc = {}
comm = dict(db.execute("SELECT id, name FROM comms"))
pcomm = {}
for t, pid, c, cid in db.execute(f"SELECT time_ns, pid, {pfc}, comm_id FROM samples WHERE session_id=?", (sid,)):
    b = bucket_of(starts, ends, t)
    a = acc.setdefault((pid, b), [0, 0])
    a[0] += c or 0
    a[1] += 1
    pcomm.setdefault(pid, set()).add(comm.get(cid, "")[:15] if cid is not None else None)
cols = list(mp[0].keys())[4:]
named, other = split_other(cols, "processes", list(pcomm),
                           lambda t: int(re.match(r"pid (\d+) ", t).group(1)))
pids = []
for k in named:
    m = re.fullmatch(r"pid (\d+) \((.*)\)", k)
    assert m, k
    pids.append(int(m.group(1)))
    assert m.group(2)[:15] in pcomm.get(int(m.group(1)), set()), f"{k}: comms of the pid's samples are {pcomm.get(int(m.group(1)))}"
def metric(f, s):
    return "" if s == 0 else 1000 * f / s
bad = gaps = 0
for b, row in enumerate(mp):
    for k, pid in zip(named, pids):
        w = metric(*acc.get((pid, b), (0, 0)))
        g = row[k]
        gaps += g == ""
        bad += (g == "") != (w == "") or (g != "" and not math.isclose(float(g), w, rel_tol=1e-6))
    if not other:
        continue
    o = [0, 0]
    for (pid, bb), (f, s) in acc.items():
        if bb == b and pid not in pids:
            o[0] += f
            o[1] += s
    w, g = metric(*o), row[other]
    bad += (g == "") != (w == "") or (g != "" and not math.isclose(float(g), w, rel_tol=1e-6))
assert bad == 0, f"{bad} values of --metric --by pid differ from table samples"
print(f"--metric --by pid: {len(mp)} buckets x {len(cols)} series = 1000*page-faults/samples of "
      f"table samples ({gaps} gaps)")
PY
# the plot of one symbol sums to the report's row of it, and to less than
# the session (a count of the report, not a fixed number: under load
# split603010 gets what the CPUs leave it)
P --event samples --symbol work60 -o "$tmp/w60.csv" || fail "plot --symbol work60"
P --event samples -o "$tmp/all.csv" || fail "plot --event samples"
"$STROBE" report --by symbol --format csv >"$tmp/w60-report.csv" ||
	fail "report --by symbol"
python3 - "$tmp/w60.csv" "$tmp/w60-report.csv" "$tmp/all.csv" <<'PY' || fail "--symbol work60"
import csv, sys
n = sum(int(r["samples"]) for r in csv.DictReader(open(sys.argv[1])))
want = sum(int(r["samples"]) for r in csv.DictReader(open(sys.argv[2])) if r["symbol"] == "work60")
total = sum(int(r["samples"]) for r in csv.DictReader(open(sys.argv[3])))
assert want > 0, "the report has no sample in work60"
assert n == want, f"plot --symbol work60 sums to {n} samples, the report's work60 row has {want}"
assert n < total, f"plot --symbol work60 sums to {n} of the session's {total}: not filtered"
PY
ok "--by pid, --by symbol, --symbol"

# --- the sums per fine time bucket (sample_time) give what the raw rows give
tb=$(python3 -c "import sqlite3,sys; print(sqlite3.connect(sys.argv[1]).execute('SELECT time_bucket_ns FROM sessions ORDER BY id DESC').fetchone()[0])" "$STROBE_DB")
[ "$tb" = 10000000 ] || fail "sessions.time_bucket_ns is '$tb', not 10000000"
n=0
for v in "--event page-faults,samples,context-switches --bucket 10" \
	 "--event page-faults --by pid --bucket 20" "--metric 1000*page-faults/samples --by pid --bucket 50" \
	 "--event samples,context-switches --by cpu --bucket 10" "--event samples --by binary --top 2 --bucket 20" \
	 "--event samples --from 0.1 --to 0.3 --bucket 10" "--event page-faults --comm pagetouch --bucket 10" \
	 "--event samples --binary pagetouch --bucket 30" "--event samples"; do
	n=$((n + 1))
	# shellcheck disable=SC2086
	P $v -o "$tmp/sum$n.csv" || fail "plot $v"
	# shellcheck disable=SC2086
	P $v --raw-scan -o "$tmp/raw$n.csv" || fail "plot $v --raw-scan"
	cmp -s "$tmp/sum$n.csv" "$tmp/raw$n.csv" || fail "plot $v: sums and raw scan differ: $(diff "$tmp/sum$n.csv" "$tmp/raw$n.csv" | head -5)"
done
ok "time sums equal the raw scan ($n plots)"

# --- metric, PDF, --wall, --term
P --metric 'page-faults / samples' -o "$tmp/m.svg" || fail "plot --metric -o m.svg"
svg_check "$tmp/m.svg" $((1 + x)) "page-faults / samples" >/dev/null || fail "SVG of a metric"
P --metric '1000*page-faults/samples' --by pid -o "$tmp/mp.png" || fail "plot --metric --by pid"
P --event context-switches -o "$tmp/a.pdf" || fail "plot -o a.pdf"
head -c 5 "$tmp/a.pdf" | grep -q '^%PDF-' || fail "PDF does not start with %PDF-"
P --event samples --wall -o "$tmp/w.svg" || fail "plot --wall"
svg_check "$tmp/w.svg" $((1 + x)) samples >"$tmp/wticks" || fail "SVG --wall"
grep -Eq '^([0-9][0-9]:[0-9][0-9]:[0-9][0-9](\.[0-9]+)? ?)+$' "$tmp/wticks" ||
	fail "--wall ticks are not clock times: $(cat "$tmp/wticks")"
P --event page-faults --term >"$tmp/term" 2>"$tmp/term.err" || fail "plot --term: $(cat "$tmp/term.err")"
[ -s "$tmp/term.err" ] && fail "plot --term wrote to stderr: $(cat "$tmp/term.err")"
[ "$(wc -l <"$tmp/term")" -ge 20 ] || fail "--term: $(wc -l <"$tmp/term") lines"
grep -q 'strobe session [0-9]* "plots": page-faults' "$tmp/term" || fail "--term: no title"
grep -q 'seconds since the start of session' "$tmp/term" || fail "--term: no x label"
grep -q '\*\*\*' "$tmp/term" || fail "--term: no curve"
ok "--metric, PDF, --wall, --term"

# --- a marker and a lost interval (on a copy of the database)
cp "$STROBE_DB" "$tmp/m.db"
python3 - "$tmp/m.db" <<'PY' || fail "adding a marker and a lost row"
import sqlite3, sys
db = sqlite3.connect(sys.argv[1])
sid, start, dur = db.execute("SELECT id, start_ns, duration_ns FROM sessions ORDER BY id DESC").fetchone()
db.execute("INSERT INTO markers (session_id, time_ns, cpu, pid, tid, kind, name) "
           "VALUES (?, ?, NULL, 1, 1, 'mark', 'halfway <&> \"there\"')", (sid, start + dur // 2))
db.execute("INSERT INTO lost (session_id, cpu, time_ns, count, kind) VALUES (?, 0, ?, 17, 'ring')",
           (sid, start + dur // 4))
db.execute("INSERT INTO lost (session_id, cpu, time_ns, count, kind) VALUES (?, 0, ?, 0, 'throttle')",
           (sid, start + dur * 3 // 4))
db.commit()
PY
svg_shades() {
	grep -c "fill = 'rgb(244, 199, 195)'" "$1"
}
if [ "$nlost" = 0 ]; then
	[ "$(svg_shades "$tmp/a.svg")" = 0 ] || fail "shading without lost samples"
fi
P --db "$tmp/m.db" --event page-faults,samples -o "$tmp/ml.svg" || fail "plot with a marker"
svg_check "$tmp/ml.svg" 3 page-faults samples "samples lost (17)" >/dev/null || fail "SVG with lost samples"
[ "$(svg_shades "$tmp/ml.svg")" -ge 3 ] || fail "no shaded intervals (and their key) in the SVG"
grep -Eq '<text>samples lost \(17\), sampling throttled \([0-9]+x\)</text>' "$tmp/ml.svg" ||
	fail "the key does not say how many samples were lost and that sampling was throttled"
python3 - "$tmp/ml.svg" <<'PY' || fail "marker label"
import sys, xml.etree.ElementTree as ET
texts = ["".join(t.itertext()) for t in ET.parse(sys.argv[1]).getroot().iter("{http://www.w3.org/2000/svg}text")]
assert 'halfway <&> "there"' in texts, texts
PY
P --db "$tmp/m.db" --event page-faults --term >"$tmp/mterm" || fail "--term with a marker"
grep -q 'halfway' "$tmp/mterm" || fail "--term: no marker label"
ok "marker and lost interval"

# --- where the sampling group did not count (schema 8; a software group is
# never multiplexed, so the session has none: add two rows to a copy)
[ "$(sqlq -readonly "$STROBE_DB" "SELECT count(*) FROM unscheduled")" = 0 ] ||
	fail "a software sampling group was recorded as not counting"
cp "$STROBE_DB" "$tmp/u.db"
sqlq "$tmp/u.db" "INSERT INTO unscheduled SELECT id, 1, start_ns + duration_ns / 4,
	start_ns + duration_ns / 2, duration_ns / 4, duration_ns / 8, 'multiplexed'
	FROM sessions ORDER BY id DESC LIMIT 1;
	INSERT INTO unscheduled SELECT id, 0, start_ns + duration_ns / 2, start_ns + duration_ns,
	duration_ns / 2, 0, 'unschedulable' FROM sessions ORDER BY id DESC LIMIT 1" ||
	fail "adding unscheduled rows"
P --db "$tmp/u.db" --event samples -o "$tmp/u.svg" || fail "plot with unscheduled intervals"
svg_check "$tmp/u.svg" $((nlost > 0 ? 3 : 2)) samples >/dev/null || fail "SVG with unscheduled intervals"
grep -Eq '<text>sampling group not counting \([0-9.]+ s\)</text>' "$tmp/u.svg" ||
	fail "the plot's key does not say the sampling group was not counting"
"$STROBE" report --db "$tmp/u.db" >"$tmp/u.txt" 2>&1 || fail "report with unscheduled intervals"
grep -q "^# WARNING: the sampling group did not count for [0-9.]* s on CPU 1 (the kernel multiplexed it with other events, 1 times)" "$tmp/u.txt" ||
	fail "report: no multiplexing warning: $(grep WARNING "$tmp/u.txt")"
grep -q "^# WARNING: the sampling group could not be scheduled on CPU 0 from [0-9.]* s on" "$tmp/u.txt" ||
	fail "report: no unschedulable warning: $(grep WARNING "$tmp/u.txt")"
ok "unscheduled intervals: shaded with a key, warned in the report"

# --- bad input: one line, non-zero exit, no file
# bad RC ERE ARGS...: plot -o $tmp/bad.png ARGS is refused so
bad() {
	want=$1 re=$2
	shift 2
	refused "$want" plot "$re" "$STROBE" plot -o "$tmp/bad.png" "$@"
	[ -e "$tmp/bad.png" ] && fail "'plot $*' left $tmp/bad.png"
	echo "refused: $(cat "$tmp/err")"
}
bad 1 "unknown event 'nope' in --event: session [0-9]+ has page-faults, context-switches, samples \(cpu-clock\)" \
	--event page-faults,nope
bad 1 "unknown name 'misses' at column 6.*page-faults" --metric '1000*misses/samples'
bad 1 "unknown name 'page-faults-samples' at column 1 .*spaces" --metric 'page-faults-samples'
bad 2 "bad --metric.*column 14: expected a number" --metric 'page-faults /'
bad 1 "empty time range: --from 100 s is at or after the end of session" \
	--event samples --from 100 --to 101
bad 1 "no session 99 in" --session 99 --event samples
bad 2 "--event and --metric exclude each other" --event samples --metric samples
bad 2 "nothing to plot" --bucket 10
bad 2 "bad --bucket 'x'" --event samples --bucket x
bad 2 "bad --bucket '0'" --event samples --bucket 0
bad 1 "no samples between .* with these filters \(pid 1\)" --event samples --pid 1
bad 1 "no process named 'no-such-comm'" --event samples --comm no-such-comm
refused 2 plot "bad -o '.*/x.gif': the file name must end in .png, .svg, .pdf or .csv" "$STROBE" plot --event samples -o "$tmp/x.gif"
[ -e "$tmp/x.gif" ] && fail "-o x.gif created a file"
export STROBE_GNUPLOT="$tmp/no-gnuplot"
bad 1 "gnuplot not found" --event samples
printf '#!/bin/sh\necho "\\"plot.gp\\" line 3: unknown terminal type" >&2\nexit 1\n' >"$tmp/badgp"
chmod +x "$tmp/badgp"
export STROBE_GNUPLOT="$tmp/badgp"
bad 1 "gnuplot failed \(exit 1\): line 3: unknown terminal type" --event samples
unset STROBE_GNUPLOT
ls /tmp/strobe-plot.* >/dev/null 2>&1 && echo "note: /tmp/strobe-plot.* exist (another plot running?)"
ok "bad input"
