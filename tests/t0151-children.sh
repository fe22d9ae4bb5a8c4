#!/bin/sh
# t0151-children: 'strobe report --children', --callers and --callees on
# a real -g session (issue 12).  calltree-fp runs main -> outer_a -> leaf
# for 60% of its work and main -> outer_b -> leaf for 40%; strobe records
# it with -g while perf record -g records the same run.  Checked: the
# --children CSV header; outer_a's and outer_b's total_percent (of the
# workload's samples, --pid) within 3 points of 60/40 and of what
# 'perf report --children' gives for the same run (as shares of main's); main's total near
# 100% and above its self; --callers leaf (CSV) gives the nodes
# leaf;outer_a and leaf;outer_b with ~60/40 of leaf's samples, and the
# text tree indents them under leaf; --callees main reaches leaf through
# both; the JSON tree parses and nests; a function that is nowhere is a
# one-line error naming it; a session without -g says so; report without
# --children is unchanged by these options' existence (its CSV header).
. "$(dirname "$0")/lib.sh"
need_root
command -v perf >/dev/null || skip "perf (linux-perf) is not installed"
start_daemon

# shares CSV PERF-TXT LABEL: outer_a/outer_b's total_percent in strobe's
# --children CSV within 3 points of 60/40 and of perf report --children's
# figures (as shares of main's: perf report --pid gives percent of all the
# samples, other processes included); main and leaf near 100%
shares() {
	python3 - "$1" "$2" "$3" <<'PY'
import csv, re, sys
rows = {r["symbol"]: r for r in csv.DictReader(open(sys.argv[1]))}
for f in ("main", "outer_a", "outer_b", "leaf"):
    assert f in rows, f"no row for {f}: {sorted(rows)[:20]}"
tot = {f: float(rows[f]["total_percent"]) for f in ("main", "outer_a", "outer_b", "leaf")}
perf = {}
for line in open(sys.argv[2]):
    m = re.match(r"\s*([\d.]+)%\s+([\d.]+)%\s+\[\.\]\s+(\S+)", line)
    if m and m.group(3) in ("outer_a", "outer_b", "main", "leaf"):
        perf.setdefault(m.group(3), float(m.group(1)))
print(f"{sys.argv[3]}: strobe total: {tot}; perf children: {perf}")
assert abs(tot["outer_a"] - 60) <= 3, tot
assert abs(tot["outer_b"] - 40) <= 3, tot
assert tot["main"] >= 95 and tot["leaf"] >= 95, tot
assert int(rows["main"]["total_samples"]) > int(rows["main"]["self_samples"])
assert int(rows["outer_a"]["total_samples"]) > 100, rows["outer_a"]
# two tools sampling the same run at different moments: their shares
# differ by sampling noise, sd = sqrt(2 p (1 - p) / n) for n samples each;
# within 3 points or 4 sd, whichever is wider
n = int(rows["main"]["total_samples"])
for f in ("outer_a", "outer_b"):
    assert f in perf and perf.get("main"), f"perf report has no {f} or main"
    ours, theirs = 100 * tot[f] / tot["main"], 100 * perf[f] / perf["main"]
    p = ours / 100
    tol = max(3, 4 * 100 * (2 * p * (1 - p) / n) ** 0.5)
    assert abs(ours - theirs) <= tol, \
        f"{f}: {ours:.2f}% of main against perf's {theirs:.2f}% ({n} samples: within {tol:.2f})"
PY
}


"$STROBE" record --sample-event cpu-clock -F 2000 --name kids -g \
	-- perf record -q "$(perf_bid)" -a -g -e cpu-clock -F 2000 -o "$tmp/kids.data" \
	-- sh -c 'echo $$ >"$1"; exec "$2" 3' sh "$tmp/pid" "$WL/calltree-fp" \
	>"$tmp/rec.out" 2>"$tmp/rec.err" || fail "record: $(cat "$tmp/rec.err")"
pid=$(cat "$tmp/pid")

"$STROBE" report --children --pid "$pid" --format csv >"$tmp/kids.csv" 2>"$tmp/err" ||
	fail "report --children: $(cat "$tmp/err")"
head -1 "$tmp/kids.csv" | grep -q '^binary,build_id,symbol,self_samples,total_samples,self_percent,total_percent' ||
	fail "header: $(head -1 "$tmp/kids.csv")"
perf report -i "$tmp/kids.data" --children --pid "$pid" --stdio -F overhead_children,overhead,sym \
	--percent-limit 0 -g none >"$tmp/perf.txt" 2>"$tmp/err" || fail "perf report: $(cat "$tmp/err")"

shares "$tmp/kids.csv" "$tmp/perf.txt" fp || fail "inclusive shares"
ok "--children: outer_a/outer_b inclusive shares as known and as perf report --children's"

"$STROBE" report --callers leaf --pid "$pid" --format csv >"$tmp/callers.csv" 2>"$tmp/err" ||
	fail "--callers: $(cat "$tmp/err")"
head -1 "$tmp/callers.csv" | grep -q '^depth,path,symbol,binary,build_id,samples,percent' ||
	fail "callers header: $(head -1 "$tmp/callers.csv")"
python3 - "$tmp/callers.csv" <<'PY' || fail "--callers leaf"
import csv, sys
rows = {r["path"]: r for r in csv.DictReader(open(sys.argv[1]))}
root = int(rows["leaf"]["samples"])
a, b = int(rows["leaf;outer_a"]["samples"]), int(rows["leaf;outer_b"]["samples"])
print(f"callers of leaf: {root} samples, outer_a {100*a/root:.1f}%, outer_b {100*b/root:.1f}%")
assert abs(100 * a / root - 60) <= 3 and abs(100 * b / root - 40) <= 3
assert int(rows["leaf;outer_a;main"]["samples"]) >= 0.95 * a
for r in rows.values():
    assert int(r["depth"]) == r["path"].count(";")
PY
"$STROBE" report --callers leaf --pid "$pid" >"$tmp/callers.txt" 2>"$tmp/err" ||
	fail "--callers text: $(cat "$tmp/err")"
grep -q '^ *[0-9.]*% .* leaf  \[calltree-fp\]$' "$tmp/callers.txt" || fail "text root: $(cat "$tmp/callers.txt")"
grep -q '|-- outer_a$' "$tmp/callers.txt" || fail "text outer_a: $(cat "$tmp/callers.txt")"
# outer_b is drawn last unless a rarer caller sorts after it (a sample at
# leaf's first instruction, before its frame is pushed, names main)
grep -Eq '[|`]-- outer_b$' "$tmp/callers.txt" || fail "text outer_b: $(cat "$tmp/callers.txt")"
ok "--callers leaf: outer_a/outer_b at 60/40 of leaf, as CSV and as an indented tree"

"$STROBE" report --callees main --pid "$pid" --format json >"$tmp/callees.json" 2>"$tmp/err" ||
	fail "--callees: $(cat "$tmp/err")"
python3 - "$tmp/callees.json" <<'PY' || fail "--callees main JSON"
import json, sys
d = json.load(open(sys.argv[1]))
assert d["meta"]["tree"] == "callees" and d["meta"]["symbol"] == "main"
root = [r for r in d["roots"] if r["symbol"] == "main"][0]
kids = {c["symbol"]: c for c in root["children"]}
for f in ("outer_a", "outer_b"):
    leaf = [c for c in kids[f]["children"] if c["symbol"] == "leaf"]
    assert leaf and leaf[0]["samples"] <= kids[f]["samples"] <= root["samples"]
    assert sum(c["samples"] for c in kids[f]["children"]) <= kids[f]["samples"]
PY
ok "--callees main: a nested JSON tree through outer_a and outer_b to leaf"

"$STROBE" report --callers no_such_function >"$tmp/out" 2>"$tmp/err" && fail "no_such_function accepted"
[ "$(wc -l <"$tmp/err")" = 1 ] || fail "not one line: $(cat "$tmp/err")"
grep -q "no function named 'no_such_function'.*strobe report --by symbol" "$tmp/err" ||
	fail "$(cat "$tmp/err")"
"$STROBE" record --sample-event cpu-clock --name flat -- "$WL/calltree-fp" 1 >/dev/null 2>&1 ||
	fail "record without -g"
"$STROBE" report --children >"$tmp/out" 2>"$tmp/err" && fail "--children of a session without stacks"
grep -q "recorded without call stacks" "$tmp/err" || fail "$(cat "$tmp/err")"
"$STROBE" report --format csv | head -1 | grep -qx 'binary,build_id,symbol,samples,percent' ||
	fail "plain report header changed"
"$STROBE" report --children --by line >/dev/null 2>"$tmp/err" && fail "--children --by line"
grep -q "give --by symbol or --by binary" "$tmp/err" || fail "$(cat "$tmp/err")"
ok "errors: an unknown function, a session without -g, --children --by line"

# The same tree without frame pointers (calltree-nofp), unwound by CFI:
# strobe --call-graph dwarf and perf record --call-graph dwarf over the
# same run; --children within 3 points of 60/40 and of perf's.
"$STROBE" record --sample-event cpu-clock -F 2000 --name dwarfkids --call-graph dwarf \
	-- perf record -q "$(perf_bid)" --call-graph dwarf -e cpu-clock -F 2000 -o "$tmp/dw.data" \
	-- sh -c 'echo $$ >"$1"; exec "$2" 3' sh "$tmp/pid2" "$WL/calltree-nofp" \
	>"$tmp/rec2.out" 2>"$tmp/rec2.err" || fail "record dwarf: $(cat "$tmp/rec2.err")"
pid2=$(cat "$tmp/pid2")
"$STROBE" report --children --pid "$pid2" --format csv >"$tmp/dw.csv" 2>"$tmp/err" ||
	fail "report --children (dwarf): $(cat "$tmp/err")"
perf report -i "$tmp/dw.data" --children --pid "$pid2" --stdio -F overhead_children,overhead,sym \
	--percent-limit 0 -g none >"$tmp/dwperf.txt" 2>"$tmp/err" || fail "perf report (dwarf): $(cat "$tmp/err")"
shares "$tmp/dw.csv" "$tmp/dwperf.txt" dwarf || fail "inclusive shares with --call-graph dwarf"
ok "--children with --call-graph dwarf: outer_a/outer_b as known and as perf's dwarf unwinding"
