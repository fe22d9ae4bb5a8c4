#!/bin/sh
# t0620-diff: strobe diff of two sessions of the same 60/30/10 program and
# of a changed one.  The program runs from one path, $tmp/split: sessions
# A and B run split603010 there, session C split306010 (the same source
# and function names with a 30/60/10 split, so another build-id at the
# same path: rows must match by name).  All compared with --binary
# $tmp/split, so the shares are of the program's own samples.
#  - A vs B: every row's |delta_percent| under 3 points; of work60, work30
#    and work10 at most one outside noise (each is with probability 1 in 20
#    at two standard errors: two of three by chance is under 1 in 100).
#  - A vs C: work60 -30 and work30 +30 points (within 5), both outside
#    noise, each one row with samples in both sessions.
#  - each diff's rows are report's rows of each session (samples, percent,
#    event counts), delta_percent and delta_EV are B - A, within_noise is
#    the rule of diff.h recomputed here, rows sorted by |delta_percent|.
#  - the CSV header contract, JSON that parses with the same rows, text
#    with its header and footnote, --by binary (symbol empty, each binary
#    the sum of its symbols' rows), --by line (source last), --limit.
#  - bad input, one line on stderr and exit 2 each: a missing session, A
#    == B, a session still running, an unknown --by, --session, a session
#    id that is not a number, one session only.
. "$(dirname "$0")/lib.sh"
need_root

rec() {	# rec NAME PROGRAM SECONDS: a session of PROGRAM run as $tmp/split
	rm -f "$tmp/split"
	cp "$2" "$tmp/split" || fail "copy $2"
	"$STROBE" record --sample-event cpu-clock -F 1000 -e page-faults,context-switches \
		--name "$1" -- "$tmp/split" "$3" >"$tmp/rec.out" 2>"$tmp/rec.err" ||
		fail "record $1: $(cat "$tmp/rec.err")"
}
# A and B 8 s each: at 1000 Hz even on a loaded machine enough samples
# that 3 points are over 3 standard errors of a difference of 60% shares
rec a "$WL/split603010" 8
rec b "$WL/split603010" 8
rec c "$WL/split306010" 3
"$STROBE" sessions --format csv >"$tmp/sessions.csv" || fail "sessions"
A=$(csv_get "$tmp/sessions.csv" name a id)
B=$(csv_get "$tmp/sessions.csv" name b id)
C=$(csv_get "$tmp/sessions.csv" name c id)
[ -n "$A" ] && [ -n "$B" ] && [ -n "$C" ] || fail "sessions: $(cat "$tmp/sessions.csv")"

# A and C ran different builds at the same path
for s in "$A" "$C"; do
	"$STROBE" report --session "$s" --binary "$tmp/split" --format csv \
		>"$tmp/r$s.csv" 2>/dev/null || fail "report $s"
done
bc=$(csv_get "$tmp/r$C.csv" symbol work60 build_id)
ba=$(csv_get "$tmp/r$A.csv" symbol work60 build_id)
[ -n "$ba" ] && [ -n "$bc" ] && [ "$ba" != "$bc" ] ||
	fail "A and C should have work60 in two builds: '$ba', '$bc'"

# check FILE.csv FILE.json X Y: diff X Y's CSV and JSON against report and the rule
check() {
	for s in "$3" "$4"; do
		"$STROBE" report --session "$s" --binary "$tmp/split" --format csv \
			>"$tmp/rep$s.csv" 2>/dev/null || fail "report $s"
	done
	python3 - "$1" "$2" "$tmp/rep$3.csv" "$tmp/rep$4.csv" "$3" "$4" <<'PY'
import csv, json, math, sys
fcsv, fjson, ra, rb, ida, idb = sys.argv[1:7]
head = open(fcsv).readline().strip()
want = "binary,symbol,a_samples,b_samples,a_percent,b_percent,delta_percent,within_noise"
assert head.startswith(want), f"CSV header {head!r} does not start with {want!r}"
evs = ("page-faults", "context-switches")
tail = ",".join(f"{p}_{e}" for e in evs for p in ("a", "b", "delta"))
assert head == want + "," + tail, f"CSV header {head!r}: want the events {tail!r} last"
rows = list(csv.DictReader(open(fcsv)))
j = json.load(open(fjson))
assert len(j["rows"]) == len(rows), "JSON and CSV have different rows"
m = j["meta"]
assert str(m["a_session"]) == ida and str(m["b_session"]) == idb, f"meta {m}"
na, nb = m["a_samples"], m["b_samples"]
for r, jr in zip(rows, j["rows"]):
    assert r["symbol"] == jr["symbol"] and int(r["a_samples"]) == jr["a_samples"]
    assert int(r["within_noise"]) == jr["within_noise"]
# each side is report's rows of that session
for side, rep in (("a", ra), ("b", rb)):
    rr = list(csv.DictReader(open(rep)))
    assert sum(int(x["samples"]) for x in rr) == m[side + "_samples"], \
        f"{side}: report's samples {sum(int(x['samples']) for x in rr)}, diff's total {m[side + '_samples']}"
    got = {r["symbol"]: r for r in rows if int(r[side + "_samples"])}
    assert set(got) == {x["symbol"] for x in rr}, f"{side}: rows {set(got)}, report's {[x['symbol'] for x in rr]}"
    for x in rr:
        r = got[x["symbol"]]
        assert int(r[side + "_samples"]) == int(x["samples"]), (side, x)
        assert abs(float(r[side + "_percent"]) - float(x["percent"])) < 0.006, (side, x)
        for e in evs:
            assert int(r[f"{side}_{e}"]) == int(x[e]), (side, e, x)
prev = 1e9
for r in rows:
    pa, pb, d = float(r["a_percent"]), float(r["b_percent"]), float(r["delta_percent"])
    assert abs(d - (pb - pa)) < 0.011, f"delta of {r}"
    assert abs(d) <= prev + 1e-9, "rows not sorted by |delta_percent|"
    prev = abs(d)
    for e in evs:
        assert int(r["delta_" + e]) == int(r["b_" + e]) - int(r["a_" + e]), (e, r)
    # diff.h's rule, from the shares as the CSV rounds them (skip the
    # rows that rounding could move across the bound)
    p = (pa / 100 * na + pb / 100 * nb) / (na + nb)
    se = math.sqrt(p * (1 - p) * (1 / na + 1 / nb))
    if abs(abs(d / 100) - 2 * se) > 0.0002:
        assert int(r["within_noise"]) == (abs(d / 100) <= 2 * se), f"noise mark of {r} (se {se})"
PY
}

# A vs B: the same program
"$STROBE" diff "$A" "$B" --binary "$tmp/split" --format csv >"$tmp/ab.csv" 2>"$tmp/ab.err" ||
	fail "diff A B: $(cat "$tmp/ab.err")"
"$STROBE" diff "$A" "$B" --binary "$tmp/split" --format json >"$tmp/ab.json" 2>/dev/null ||
	fail "diff A B json"
cat "$tmp/ab.csv"
check "$tmp/ab.csv" "$tmp/ab.json" "$A" "$B" || fail "diff A B against report and the rule"
python3 - "$tmp/ab.csv" <<'PY' || fail "the same program twice"
import csv, sys
rows = {r["symbol"]: r for r in csv.DictReader(open(sys.argv[1]))}
for r in rows.values():
    assert abs(float(r["delta_percent"])) < 3, f"{r['symbol']}: delta {r['delta_percent']}"
three = [rows[f] for f in ("work60", "work30", "work10")]
for r in three:
    assert int(r["a_samples"]) > 100 and int(r["b_samples"]) > 100, f"too few samples: {r}"
out = [r["symbol"] for r in three if r["within_noise"] != "1"]
assert len(out) <= 1, f"{out} outside noise in two sessions of one program"
PY

# A vs C: the changed program
"$STROBE" diff "$A" "$C" --binary "$tmp/split" --format csv >"$tmp/ac.csv" 2>"$tmp/ac.err" ||
	fail "diff A C: $(cat "$tmp/ac.err")"
"$STROBE" diff "$A" "$C" --binary "$tmp/split" --format json >"$tmp/ac.json" 2>/dev/null ||
	fail "diff A C json"
cat "$tmp/ac.csv"
check "$tmp/ac.csv" "$tmp/ac.json" "$A" "$C" || fail "diff A C against report and the rule"
python3 - "$tmp/ac.csv" <<'PY' || fail "the changed program"
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
by = {}
for r in rows:
    by.setdefault(r["symbol"], []).append(r)
for f, want in (("work60", -30), ("work30", 30)):
    assert len(by.get(f, [])) == 1, f"{f}: {len(by.get(f, []))} rows, want one matched by name"
    r = by[f][0]
    assert int(r["a_samples"]) > 0 and int(r["b_samples"]) > 0, f"{f} not matched: {r}"
    d = float(r["delta_percent"])
    assert abs(d - want) <= 5, f"{f}: delta {d}, want {want} +- 5"
    assert r["within_noise"] == "0", f"{f}: a {d} point change marked within noise"
assert rows[0]["symbol"] in ("work60", "work30"), f"first row {rows[0]['symbol']}"
assert abs(float(by["work10"][0]["delta_percent"])) < 3, f"work10 {by['work10'][0]}"
PY

# text: the sessions, the table with its noise column, the footnote
"$STROBE" diff "$A" "$C" --binary "$tmp/split" >"$tmp/ac.txt" || fail "diff text"
cat "$tmp/ac.txt"
grep -q "^# A: session $A \"a\"" "$tmp/ac.txt" || fail "text: no header for A"
grep -q "^# B: session $C \"c\"" "$tmp/ac.txt" || fail "text: no header for B"
grep -Eq '^binary +symbol +a_samples +b_samples +a_percent +b_percent +delta_percent +noise' \
	"$tmp/ac.txt" || fail "text: column names"
grep -q "^# delta_percent: .*~: within sampling noise" "$tmp/ac.txt" || fail "text: no footnote"
grep -E ' work60 ' "$tmp/ac.txt" | grep -q '~' && fail "text: work60 marked ~"

# --limit, --by binary (symbol empty), --by line (source last, matched)
"$STROBE" diff "$A" "$C" --binary "$tmp/split" --format csv --limit 2 >"$tmp/l.csv" 2>/dev/null ||
	fail "diff --limit"
[ "$(wc -l <"$tmp/l.csv")" = 3 ] || fail "--limit 2: $(cat "$tmp/l.csv")"
"$STROBE" diff "$A" "$C" --comm split --by binary --format csv >"$tmp/bin.csv" 2>/dev/null ||
	fail "diff --by binary"
"$STROBE" diff "$A" "$C" --comm split --format csv >"$tmp/sym.csv" 2>/dev/null ||
	fail "diff --comm split"
# each binary's row is the sum of its symbols' rows under the same filter
# (how much of split's time the kernel takes depends on the machine's load:
# no fixed bound on the binary's share)
python3 - "$tmp/bin.csv" "$tmp/sym.csv" "$tmp/split" <<'PY' || fail "--by binary: $(cat "$tmp/bin.csv")"
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
syms = list(csv.DictReader(open(sys.argv[2])))
assert all(r["symbol"] == "" for r in rows), "symbol not empty"
assert len({r["binary"] for r in rows}) == len(rows), "a binary on two rows"
r = [r for r in rows if r["binary"] == sys.argv[3]]
assert len(r) == 1 and int(r[0]["a_samples"]) > 1000 and int(r[0]["b_samples"]) > 1000, r
num = [c for c in rows[0] if c.startswith(("a_", "b_", "delta_")) and not c.endswith("percent")]
assert "a_page-faults" in num and "delta_context-switches" in num, num
for side in "ab":
    total = sum(int(x[f"{side}_samples"]) for x in rows)
    assert total == sum(int(x[f"{side}_samples"]) for x in syms), f"{side}: {total} samples by binary"
    for x in rows:
        pct = 100.0 * int(x[f"{side}_samples"]) / total
        assert abs(pct - float(x[f"{side}_percent"])) <= 0.006, (side, pct, x)
for x in rows:
    mine = [y for y in syms if y["binary"] == x["binary"]]
    assert mine, f"{x['binary']}: no symbol rows"
    for c in num:
        assert int(x[c]) == sum(int(y[c]) for y in mine), f"{x['binary']} {c}: {x[c]}"
    d = float(x["b_percent"]) - float(x["a_percent"])
    assert abs(d - float(x["delta_percent"])) <= 0.011, x
print(f"ok: {len(rows)} binaries, each the sum of its {len(syms)} symbol rows")
PY
"$STROBE" diff "$A" "$B" --binary "$tmp/split" --by line --format csv >"$tmp/line.csv" 2>/dev/null ||
	fail "diff --by line"
head -n 1 "$tmp/line.csv" | grep -q '^binary,symbol,a_samples,b_samples,a_percent,b_percent,delta_percent,within_noise,.*,source$' ||
	fail "--by line header: $(head -n 1 "$tmp/line.csv")"
python3 - "$tmp/line.csv" <<'PY' || fail "--by line: $(cat "$tmp/line.csv")"
import csv, sys
rows = [r for r in csv.DictReader(open(sys.argv[1])) if r["symbol"] == "work60"]
both = [r for r in rows if int(r["a_samples"]) and int(r["b_samples"])]
assert both and all(":" in r["source"] for r in both), rows
assert len({(r["symbol"], r["source"]) for r in rows}) == len(rows), "a line in two rows"
PY

# bad input: one line, exit 2
refused 2 diff "no session 999" "$STROBE" diff "$A" 999
refused 2 diff "both session $A" "$STROBE" diff "$A" "$A"
refused 2 diff "bad --by 'cgroup'" "$STROBE" diff "$A" "$B" --by cgroup
refused 2 diff "bad --by 'nope'" "$STROBE" diff "$A" "$B" --by nope
refused 2 diff "--session does not apply" "$STROBE" diff "$A" "$B" --session 1
refused 2 diff "bad session A 'x'" "$STROBE" diff x "$B"
refused 2 diff "missing session" "$STROBE" diff "$A"
refused 2 diff "too many" "$STROBE" diff "$A" "$B" "$C"
refused 2 diff "bad --format" "$STROBE" diff "$A" "$B" --format xml

start_daemon
"$STROBE" start --sample-event cpu-clock -F 100 >"$tmp/id" 2>"$tmp/start.err" ||
	fail "start: $(cat "$tmp/start.err")"
R=$(cat "$tmp/id")
refused 2 diff "session $R \(B\) is still running" "$STROBE" diff "$A" "$R"
"$STROBE" stop >/dev/null 2>&1 || fail "stop"
"$STROBE" diff "$A" "$R" --format csv >/dev/null 2>&1 || fail "diff of the stopped session"

ok "diff: same program within 3 points, the changed split found (-30/+30), contracts"
