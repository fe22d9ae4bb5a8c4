#!/bin/sh
# t0100-report: a system-wide session over the 60/30/10 workload, reported by
# symbol with the shares within 3 points of the known split, in text, CSV and
# JSON; perf record on the same workload agrees within 4 points (both carry
# sampling noise of about 1 point at 3000 samples).
. "$(dirname "$0")/lib.sh"
need_root

# the session is system-wide: the workload's own pid selects its samples
"$STROBE" record --sample-event cpu-clock -F 1000 -e page-faults,context-switches \
	--name split -- sh -c 'echo $$ >"$1"; exec "$2" 3' sh "$tmp/pid" "$WL/split603010" \
	2>"$tmp/record.err" || fail "record: $(cat "$tmp/record.err")"
pid=$(cat "$tmp/pid")
grep -q "samples, 0 lost" "$tmp/record.err" || fail "record summary: $(cat "$tmp/record.err")"

"$STROBE" report --pid "$pid" --format csv >"$tmp/r.csv" || fail "report csv"
head -n 1 "$tmp/r.csv" | grep -q '^binary,build_id,symbol,samples,percent,page-faults,context-switches' ||
	fail "CSV header: $(head -n 1 "$tmp/r.csv")"

python3 - "$tmp/r.csv" <<'PY' || fail "60/30/10 split"
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
s = {r["symbol"]: int(r["samples"]) for r in rows if r["binary"].endswith("/split603010")}
tot = sum(s.get(f, 0) for f in ("work60", "work30", "work10"))
allw = sum(int(r["samples"]) for r in rows)
assert tot > 1000, f"too few samples in the three functions: {tot}"
assert tot >= 0.9 * allw, f"only {tot} of {allw} samples in work60/30/10"
for f, want in (("work60", 60), ("work30", 30), ("work10", 10)):
    got = 100.0 * s.get(f, 0) / tot
    print(f"{f}: {got:.2f}% (want {want})")
    assert abs(got - want) <= 3, f"{f} is {got:.2f}%, not {want}±3"
PY

# text and JSON carry the same numbers
"$STROBE" report --pid "$pid" --limit 3 >"$tmp/r.txt" || fail "report text"
grep -q "work60" "$tmp/r.txt" || fail "text report lacks work60"
"$STROBE" report --pid "$pid" --format json >"$tmp/r.json" || fail "report json"
python3 - "$tmp/r.json" "$tmp/r.csv" <<'PY' || fail "JSON and CSV disagree"
import csv, json, sys
j = json.load(open(sys.argv[1]))
c = list(csv.DictReader(open(sys.argv[2])))
assert len(j["rows"]) == len(c)
for a, b in zip(j["rows"], c):
    assert a["symbol"] == b["symbol"] and a["samples"] == int(b["samples"])
PY

# perf record on the same workload gives the same split within 3 points
if command -v perf >/dev/null; then
	perf record -q --buildid-mmap -e cpu-clock -F 1000 -o "$tmp/perf.data" -- "$WL/split603010" 3 2>/dev/null
	perf report -q -i "$tmp/perf.data" --stdio --sort sym 2>/dev/null >"$tmp/perf.txt"
	python3 - "$tmp/perf.txt" "$tmp/r.csv" <<'PY' || fail "perf disagrees"
import csv, re, sys
perf = {}
for line in open(sys.argv[1]):
    m = re.match(r"\s*([\d.]+)%\s+\[\.\]\s+(\S+)", line)
    if m: perf[m.group(2)] = float(m.group(1))
rows = list(csv.DictReader(open(sys.argv[2])))
s = {r["symbol"]: int(r["samples"]) for r in rows}
tot = sum(s.get(f, 0) for f in ("work60", "work30", "work10"))
ptot = sum(perf.get(f, 0) for f in ("work60", "work30", "work10"))
for f in ("work60", "work30", "work10"):
    a, b = 100.0 * s[f] / tot, 100.0 * perf[f] / ptot
    print(f"{f}: strobe {a:.2f}% perf {b:.2f}%")
    assert abs(a - b) <= 4, "strobe and perf differ by more than 4 points"
PY
fi
ok "60/30/10 within 3 points"
