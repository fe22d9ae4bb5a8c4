#!/bin/sh
# t0965-where: metric conditions (--where, --invert, --where-sample; issue
# 33) against a brute force over 'strobe export --format csv': a recorded
# session of tests/workloads/phases (CPU duty 30, 90, 50, 100 %) with
# page-faults and context-switches counted; the samples of one process
# over a window cut into buckets here, the condition evaluated per bucket
# from the exported samples' own counts, and the kept samples summed per
# symbol: report --where gives exactly those sums, --invert exactly the
# rest (and the two together the whole report), the note's counts of
# buckets and samples are the brute force's; per sample (--where-sample)
# the same against each sample's own counter increases; the folded export
# and the flame graph with --where hold report's samples; diff --where
# compares the rest (base) with the kept, its totals those of the two
# reports; plot --where --data draws the kept samples only; bad conditions
# get one line each.
. "$(dirname "$0")/lib.sh"
need_root
[ -x "$WL/phases" ] || skip "tests/workloads/phases is not built"

"$STROBE" record --sample-event cpu-clock -F 2000 -e page-faults,context-switches \
	--call-graph fp --name where -- sh -c "\"$WL/phases\" 30:1 90:1 50:1 100:1 \
>\"$tmp/truth\" & echo \$! >\"$tmp/pid\"; wait" 2>"$tmp/record.err" ||
	fail "record: $(cat "$tmp/record.err")"
pid=$(cat "$tmp/pid")
start=$(python3 - "$STROBE_DB" <<'PY'
import strobedb, sys
db = strobedb.connect(sys.argv[1])
print(db.execute("SELECT start_ns FROM sessions ORDER BY id DESC LIMIT 1").fetchone()[0])
PY
) || fail "reading the session's start"
# the workload's window, ns since the session start
from=$(($(sed -n 's/^phase 0 duty .* start_ns //p' "$tmp/truth") - start))
to=$(($(sed -n 's/^end_ns //p' "$tmp/truth") - start))
sel="--pid $pid --from ${from}ns --to ${to}ns"

# shellcheck disable=SC2086
"$STROBE" export --format csv $sel >"$tmp/all.csv" 2>"$tmp/all.err" ||
	fail "export: $(cat "$tmp/all.err")"

# report NAME ARGS...: report's CSV of the window into $tmp/NAME.csv, its
# notes into $tmp/NAME.err
report() {
	n=$1
	shift
	# shellcheck disable=SC2086
	"$STROBE" report --format csv --limit 0 $sel "$@" >"$tmp/$n.csv" 2>"$tmp/$n.err" ||
		fail "report $*: $(cat "$tmp/$n.err")"
}

# brute NAME MODE BUCKET_MS COND...: the brute force against the reports
# $tmp/NAME.csv (the condition), $tmp/NAME-inv.csv (--invert) and
# $tmp/whole.csv; MODE bucket or sample; COND a Python expression of
# samples, seconds and the events (page_faults, context_switches)
brute() {
	python3 - "$tmp" "$1" "$2" "$3" "$start" "$from" "$to" "$4" <<'PY'
import csv, math, re, sys
tmp, name, mode, bms, start, frm, to, cond = sys.argv[1:9]
lo, hi = int(start) + int(frm), int(start) + int(to)
w = int(float(bms) * 1e6) if mode == "bucket" else 0
rows = list(csv.DictReader(open(f"{tmp}/all.csv")))
def ev(vals):
    try:
        return bool(eval(cond, {}, vals))
    except ZeroDivisionError:
        return None
def key(binary, symbol):
    return (binary, symbol)
kept, inv, undef = {}, {}, 0
if mode == "bucket":
    nb = (hi - lo + w - 1) // w
    sums = [dict(samples=0, page_faults=0, context_switches=0) for _ in range(nb)]
    where = []
    for r in rows:
        t = int(r["time_ns"])
        assert lo <= t <= hi, f"exported sample at {t} outside the window"
        b = min((t - lo) // w, nb - 1)	# the last bucket holds the end itself
        where.append(b)
        s = sums[b]
        s["samples"] += 1
        s["page_faults"] += int(r["page-faults"])
        s["context_switches"] += int(r["context-switches"])
    verdict = []
    for b in range(nb):
        s = dict(sums[b])
        s["seconds"] = (min(lo + (b + 1) * w, hi) - (lo + b * w)) / 1e9
        verdict.append(ev(s))
    nkept = sum(1 for v in verdict if v is True)
    ninv = sum(1 for v in verdict if v is False)
    nundef = sum(1 for v in verdict if v is None)
    skept = sum(sums[b]["samples"] for b in range(nb) if verdict[b] is True)
    sinv = sum(sums[b]["samples"] for b in range(nb) if verdict[b] is False)
    per = [verdict[b] for b in where]
else:
    per = [ev(dict(samples=1, page_faults=int(r["page-faults"]),
                   context_switches=int(r["context-switches"]))) for r in rows]
with open(f"{tmp}/{name}.kept", "w") as f:
    for r, v in zip(rows, per):
        if v:
            print(r["time_ns"], file=f)
for r, v in zip(rows, per):
    if v is None:
        undef += 1
        continue
    d = kept if v else inv
    k = key(r["binary"], r["symbol"])
    d[k] = d.get(k, 0) + 1
def got(path):
    out = {}
    for r in csv.DictReader(open(path)):
        k = key(r["binary"], r["symbol"])
        out[k] = out.get(k, 0) + int(r["samples"])
    return out
gk, gi, whole = got(f"{tmp}/{name}.csv"), got(f"{tmp}/{name}-inv.csv"), got(f"{tmp}/whole.csv")
print(f"{name}: brute force kept {sum(kept.values())} samples in {len(kept)} symbols, "
      f"the rest {sum(inv.values())}, undefined {undef}; report {sum(gk.values())} and "
      f"{sum(gi.values())}")
assert kept and inv, "the condition splits nothing: the test would prove nothing"
assert gk == kept, f"--where: {sorted(set(gk.items()) ^ set(kept.items()))[:10]}"
assert gi == inv, f"--invert: {sorted(set(gi.items()) ^ set(inv.items()))[:10]}"
if undef == 0:
    both = {k: gk.get(k, 0) + gi.get(k, 0) for k in set(gk) | set(gi)}
    assert both == whole, "kept + inverted is not the whole report"
# the notes count what the brute force counts
nk = open(f"{tmp}/{name}.err").read()
ni = open(f"{tmp}/{name}-inv.err").read()
if mode == "bucket":
    m = re.search(r"\): (\d+) of (\d+) buckets kept, (\d+) undefined .* with (\d+) of (\d+) samples", nk)
    assert m, f"no --where note: {nk}"
    assert tuple(map(int, m.groups())) == (nkept, nb, nundef, skept, len(rows)), \
        (m.groups(), (nkept, nb, nundef, skept, len(rows)))
    m = re.search(r"\): (\d+) of (\d+) buckets kept, (\d+) undefined .* with (\d+) of", ni)
    assert m and tuple(map(int, m.groups())) == (ninv, nb, nundef, sinv), (m and m.groups())
else:
    m = re.search(r": (\d+) of (\d+) samples kept \((\d+) undefined", nk)
    assert m and tuple(map(int, m.groups())) == (sum(kept.values()), len(rows), undef), \
        (m and m.groups())
PY
}

report whole
[ -s "$tmp/whole.csv" ] || fail "no report of the window"

# per bucket: a rate over 40 ms buckets (samples per second: "seconds" is
# the bucket's length, the last one cut at --to), and a counting event's
# sum over 25 ms buckets
C1='samples / seconds > 1250'
report r1 --where "$C1" --where-bucket 40
report r1-inv --where "$C1" --where-bucket 40 --invert
brute r1 bucket 40 'samples / seconds > 1250' || fail "--where '$C1' against the brute force"
ok "--where '$C1': the kept buckets' samples per symbol, --invert the rest, exactly"

C2='1000 * context-switches / samples >= 400'
report r2 --where "$C2" --where-bucket 25
report r2-inv --where "$C2" --where-bucket 25 --invert
brute r2 bucket 25 '1000 * context_switches / samples >= 400' ||
	fail "--where '$C2' against the brute force"
ok "--where '$C2' (empty buckets undefined, kept by neither side)"

# per sample: each sample's own counter increases
C3='2 * context-switches - page-faults > 0'
report r3 --where "$C3" --where-sample
report r3-inv --where "$C3" --where-sample --invert
brute r3 sample 0 '2 * context_switches - page_faults > 0' ||
	fail "--where '$C3' --where-sample against the brute force"
ok "--where '$C3' --where-sample: each sample's own increases"

# the call stacks with the same condition: the folded export's samples,
# with those without a stack (a note says how many), are report's
kept=$(awk -F, 'NR > 1 { n += $4 } END { print n + 0 }' "$tmp/r1.csv")
# shellcheck disable=SC2086
"$STROBE" export --format folded $sel --where "$C1" --where-bucket 40 >"$tmp/f.txt" \
	2>"$tmp/f.err" || fail "export folded --where: $(cat "$tmp/f.err")"
folded=$(awk '{ n += $NF } END { print n + 0 }' "$tmp/f.txt")
nostack=$(sed -n 's/.*note: \([0-9]*\) samples that pass the filters have no stack.*/\1/p' \
	"$tmp/f.err")
[ $((folded + ${nostack:-0})) = "$kept" ] ||
	fail "export folded --where: $folded samples (+ ${nostack:-0} without a stack), report $kept"
grep -q "note: --where '$C1' (buckets of 40 ms)" "$tmp/f.err" ||
	fail "export folded --where: no note: $(cat "$tmp/f.err")"
# shellcheck disable=SC2086
"$STROBE" flamegraph $sel --samples --where "$C1" --where-bucket 40 -o "$tmp/f.svg" \
	2>"$tmp/fg.err" || fail "flamegraph --where: $(cat "$tmp/fg.err")"
grep -q "cpu-clock: $((folded)) samples; .*--where &apos;samples / seconds &gt; 1250&apos;" \
	"$tmp/f.svg" || fail "flamegraph --where: its subtitle: $(grep -o 'cpu-clock: [^<]*' "$tmp/f.svg")"
# the CSV export with the condition: the brute force's kept samples
# shellcheck disable=SC2086
"$STROBE" export --format csv $sel --where "$C1" --where-bucket 40 >"$tmp/e.csv" \
	2>"$tmp/e.err" || fail "export csv --where: $(cat "$tmp/e.err")"
tail -n +2 "$tmp/e.csv" | cut -d, -f1 | cmp -s - "$tmp/r1.kept" ||
	fail "export csv --where: its samples are not the brute force's ($(($(wc -l \
<"$tmp/e.csv") - 1)) rows, $(wc -l <"$tmp/r1.kept") kept)"
ok "export folded and csv, flamegraph: report's samples with --where"

# diff SESSION --where C: A the rest, B the kept; their rows per symbol
# are the two reports' (checked above against the brute force)
# shellcheck disable=SC2086
"$STROBE" diff $sel --where "$C1" --where-bucket 40 --format csv >"$tmp/d.csv" 2>"$tmp/d.err" ||
	fail "diff --where: $(cat "$tmp/d.err")"
python3 - "$tmp" <<'PY' || fail "diff --where: its sides are not the two reports"
import csv, sys
tmp = sys.argv[1]
def sums(path):
    out = {}
    for r in csv.DictReader(open(path)):
        k = (r["binary"], r["symbol"])
        out[k] = out.get(k, 0) + int(r["samples"])
    return out
kept, rest = sums(f"{tmp}/r1.csv"), sums(f"{tmp}/r1-inv.csv")
a, b = {}, {}
for r in csv.DictReader(open(f"{tmp}/d.csv")):
    k = (r["binary"], r["symbol"])
    if int(r["a_samples"]):
        a[k] = int(r["a_samples"])
    if int(r["b_samples"]):
        b[k] = int(r["b_samples"])
assert a == rest, f"A: {sorted(set(a.items()) ^ set(rest.items()))[:6]}"
assert b == kept, f"B: {sorted(set(b.items()) ^ set(kept.items()))[:6]}"
PY
grep -q "note: A (session [0-9]*): --where '$C1' --invert (buckets of 40 ms)" "$tmp/d.err" ||
	fail "diff --where: no note of A's condition: $(cat "$tmp/d.err")"
ok "diff --where: the rest (A) against the kept (B), each the report's"

# plot --where: the series of the kept samples only, on the same buckets
# as the condition's: a bucket's samples are all of it (when its rate is
# over 1250/s, as the condition says) or none
# shellcheck disable=SC2086
"$STROBE" plot $sel --event samples --bucket 40 --data "$tmp/p.csv" >/dev/null 2>"$tmp/p.err" ||
	fail "plot: $(cat "$tmp/p.err")"
# shellcheck disable=SC2086
"$STROBE" plot $sel --event samples --bucket 40 --where "$C1" --where-bucket 40 \
	--data "$tmp/pw.csv" >/dev/null 2>"$tmp/pw.err" || fail "plot --where: $(cat "$tmp/pw.err")"
python3 - "$tmp" "$kept" <<'PY' || fail "plot --where: not the kept buckets' samples"
import csv, sys
tmp, kept = sys.argv[1], int(sys.argv[2])
whole = list(csv.DictReader(open(f"{tmp}/p.csv")))
where = list(csv.DictReader(open(f"{tmp}/pw.csv")))
assert len(whole) == len(where)
n = 0
for a, b in zip(whole, where):
    assert a["from_ns"] == b["from_ns"]
    v, w = float(a["samples"]), float(b["samples"])
    secs = (int(a["to_ns"]) - int(a["from_ns"])) / 1e9
    assert w == (v if v / secs > 1250 else 0), (a, b)
    n += w
assert n == kept, (n, kept)
PY
grep -q "note: --where '$C1' (buckets of 40 ms)" "$tmp/pw.err" ||
	fail "plot --where: no note: $(cat "$tmp/pw.err")"
ok "plot --where: the kept buckets' samples, the others 0"

# strobe ui's API: where=, invert=, where_bucket= (ns) give the commands'
# bytes (the window [from, to): the commands' --to one ns before)
if command -v curl >/dev/null; then
	sid=$("$STROBE" sessions --format csv | awk -F, 'NR > 1 { id = $1 } END { print id }')
	ui_start --no-open
	url=$(sed -n 's|^strobe ui: \(http://127\.0\.0\.1:[0-9]*/?token=[0-9a-f]\{32\}\)$|\1|p' \
		"$tmp/ui.out")
	[ -n "$url" ] || fail "strobe ui: no URL line: $(cat "$tmp/ui.out" "$tmp/ui.err")"
	base=${url%%/\?token=*}
	token=${url##*token=}
	get() {
		p=$1
		shift
		curl -s -G -o "$tmp/body" -w '%{http_code}' "$@" "$base$p"
	}
	q="token=$token&session=$sid&from=$from&to=$to"
	cli="--session $sid --from ${from}ns --to $((to - 1))ns --format json"
	[ "$(get "/api/report?$q&where_bucket=40000000&invert=1" --data-urlencode "where=$C1")" = 200 ] ||
		fail "/api/report?where: $(cat "$tmp/body")"
	# shellcheck disable=SC2086
	"$STROBE" report $cli --where "$C1" --where-bucket 40 --invert >"$tmp/r.json" 2>/dev/null ||
		fail "report --format json --where"
	cmp -s "$tmp/body" "$tmp/r.json" || fail "/api/report?where differs from strobe report --where"
	[ "$(get "/api/diff?$q&where_bucket=40000000" --data-urlencode "where=$C1")" = 200 ] ||
		fail "/api/diff?where: $(cat "$tmp/body")"
	# shellcheck disable=SC2086
	"$STROBE" diff ${cli#--session $sid} --where "$C1" --where-bucket 40 "$sid" \
		>"$tmp/d.json" 2>"$tmp/d.err" || fail "diff --format json --where: $(cat "$tmp/d.err")"
	cmp -s "$tmp/body" "$tmp/d.json" || fail "/api/diff?where differs from strobe diff ID --where"
	[ "$(get "/api/flame?$q&where_sample=1" --data-urlencode "where=$C3")" = 200 ] ||
		fail "/api/flame?where: $(cat "$tmp/body")"
	"$STROBE" export --format folded --session "$sid" --from "${from}ns" --to "$((to - 1))ns" \
		--where "$C3" --where-sample >"$tmp/f2.txt" 2>/dev/null || fail "export folded --where"
	cmp -s "$tmp/body" "$tmp/f2.txt" || fail "/api/flame?where differs from strobe export --where"
	[ "$(get "/api/series?$q&buckets=10" --data-urlencode "where=$C1")" = 200 ] ||
		fail "/api/series?where: $(cat "$tmp/body")"
	# bad_api QUERY [PARAM]: /api/report with &QUERY and PARAM url-encoded is a 400, one line
	bad_api() {
		st=$(get "/api/report?$q$1" ${2:+--data-urlencode "$2"})
		[ "$st" = 400 ] || fail "/api/report?$1 $2: status $st: $(cat "$tmp/body")"
		[ "$(wc -l <"$tmp/body")" = 1 ] || fail "/api/report?$1 $2: $(cat "$tmp/body")"
	}
	bad_api "" "where=samples"
	bad_api "" "where=nosuch > 1"
	bad_api "&invert=1"
	bad_api "&where_bucket=5" "where=samples > 1"
	ok "strobe ui's API: report, diff, flame with where= as the commands; bad ones a 400"
else
	echo "curl not installed: strobe ui's API not checked"
fi

# bad conditions: one line each, naming the problem
bad() {
	want=$1
	shift
	# shellcheck disable=SC2086
	"$STROBE" report $sel "$@" >"$tmp/bad.out" 2>"$tmp/bad.err" && fail "report $* succeeded"
	[ "$(wc -l <"$tmp/bad.err")" = 1 ] || fail "report $*: not one line: $(cat "$tmp/bad.err")"
	grep -q -- "$want" "$tmp/bad.err" || fail "report $*: $(cat "$tmp/bad.err")"
}
bad "bad --where 'samples': no comparison" --where samples
bad "'many' after > is not a number" --where 'samples > many'
bad "one comparison" --where 'samples > 1 > 2'
bad "one comparison" --where 'samples == 1'
bad "nothing before >" --where '> 1'
bad "unknown name 'nosuch' at column 1: session .* has page-faults, context-switches" \
	--where 'nosuch > 1'
bad "'seconds' has no value per sample" --where 'samples / seconds > 1' --where-sample
bad "needs --where" --invert
bad "needs --where" --where-sample
bad "bad --where-bucket 'x'" --where 'samples > 1' --where-bucket x
bad "give one of them" --where 'samples > 1' --where-sample --where-bucket 10
bad "metric IPC needs" --where 'IPC > 1'
ok "bad conditions refused with one line"
