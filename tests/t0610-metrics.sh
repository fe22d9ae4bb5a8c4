#!/bin/sh
# t0610-metrics: 'strobe list --metrics' shows the metric catalogue in text,
# CSV and JSON, the same rows in each; every metric's expression names only
# events and 'seconds'; computable is what perf stat finds on this machine:
# the per-second metrics of software events are, and without a hardware PMU
# (perf stat: cycles <not supported>) every metric over hardware events is
# not, saying "needs 'EVENT', which this machine lacks: no hardware PMU"
# with EVENT one of its events; nobody (no root) sees the same.  Bad
# options: one line, exit status 2.
. "$(dirname "$0")/lib.sh"

"$STROBE" list --metrics >"$tmp/m.txt" 2>"$tmp/err" || fail "list --metrics: $(cat "$tmp/err")"
"$STROBE" list --metrics --format csv >"$tmp/m.csv" 2>"$tmp/err" ||
	fail "list --metrics --format csv: $(cat "$tmp/err")"
"$STROBE" list --metrics --format json >"$tmp/m.json" 2>"$tmp/err" ||
	fail "list --metrics --format json: $(cat "$tmp/err")"
[ -s "$tmp/err" ] && fail "list --metrics wrote to stderr: $(cat "$tmp/err")"

hw=yes
perf stat -x, -e cycles true 2>&1 | grep -q '<not supported>' && hw=no
command -v perf >/dev/null || hw=unknown
echo "hardware PMU (perf stat): $hw"

python3 - "$tmp/m.txt" "$tmp/m.csv" "$tmp/m.json" "$hw" <<'PY' || fail "list --metrics"
import csv, json, re, sys
txt, csvf, jsonf, hw = sys.argv[1:5]
rows = list(csv.DictReader(open(csvf)))
want = ["name", "group", "unit", "computable", "expression", "description", "why_not"]
assert list(rows[0].keys()) == want, rows[0].keys()
js = json.load(open(jsonf))["rows"]
assert js == rows, "JSON rows differ from CSV rows"
lines = open(txt).read().splitlines()
assert lines[0].split() == want, lines[0]
assert len(lines) == len(rows) + 1, (len(lines), len(rows))
for line, r in zip(lines[1:], rows):
    f = re.split(r"\s{2,}", line.strip())
    assert f[:4] == [r["name"], r["group"], r["unit"], r["computable"]], (f[:4], r)
names = [r["name"].lower() for r in rows]
assert len(set(names)) == len(names), "duplicate metric names"
need = {"ipc", "cpi", "branch-miss-rate", "l1d-mpki", "l1d-miss-rate", "llc-mpki",
        "llc-miss-rate", "dtlb-mpki", "dtlb-miss-rate", "itlb-mpki", "cache-miss-rate",
        "page-faults-per-sec", "context-switches-per-sec", "topdown-retiring",
        "topdown-bad-speculation", "topdown-frontend-bound", "topdown-backend-bound"}
assert need <= set(names), need - set(names)
hwev = {"cycles", "instructions", "branches", "branch-misses", "cache-misses",
        "cache-references", "L1-dcache-loads", "L1-dcache-load-misses",
        "L1-icache-load-misses", "LLC-loads", "LLC-load-misses", "dTLB-loads",
        "dTLB-load-misses", "iTLB-load-misses"}
swev = {"page-faults", "context-switches", "cpu-migrations", "task-clock"}
for r in rows:
    # names: quoted, or event-name characters; numbers are the scale
    evs = re.findall(r'"([^"]*)"|([A-Za-z_][A-Za-z0-9_.:-]*[A-Za-z0-9_.:]|[A-Za-z_])',
                     re.sub(r'\b\d+(\.\d+)?(e[-+]?\d+)?\b', ' ', r["expression"]))
    evs = {a or b for a, b in evs} - {"seconds"}
    assert evs, r
    assert r["computable"] in ("yes", "no"), r
    assert (r["computable"] == "yes") == (r["why_not"] == ""), r
    if r["computable"] == "no":
        m = re.fullmatch(r"needs '([^']+)', which this machine (lacks|cannot count): .+",
                         r["why_not"])
        assert m and m.group(1) in evs, r
    if evs <= swev:
        assert r["computable"] == "yes", r
    elif evs <= hwev and hw == "no":
        assert r["computable"] == "no", r
        assert r["why_not"].endswith("which this machine lacks: no hardware PMU"), r
    elif r["group"] == "topdown" and hw == "no":
        assert r["computable"] == "no", r
print(len(rows), "metrics,", sum(r["computable"] == "yes" for r in rows), "computable")
PY
ok "list --metrics: text, CSV and JSON agree; computable matches perf stat"
[ "$hw" = no ] || echo "SKIP-PART: this machine has a hardware PMU: the no-PMU messages are not checked"

# page-faults-per-sec is computable here: perf stat counts page-faults
perf stat -x, -e page-faults true 2>&1 | grep -q ',page-faults,' ||
	fail "perf stat cannot count page-faults here"
grep -q '^page-faults-per-sec .* yes ' "$tmp/m.txt" || fail "page-faults-per-sec not computable"
grep -q '^context-switches-per-sec .* yes ' "$tmp/m.txt" || fail "context-switches-per-sec not computable"

# without root: what the machine has, not what the user may count system-wide
if [ "$(id -u)" = 0 ] && command -v setpriv >/dev/null && id nobody >/dev/null 2>&1 &&
   setpriv --reuid=nobody --regid="$(id -g nobody)" --clear-groups "$STROBE" list --metrics \
	--format csv >"$tmp/nobody.csv" 2>"$tmp/nobody.err"; then
	cut -d, -f1,4 "$tmp/m.csv" >"$tmp/root.ok"
	cut -d, -f1,4 "$tmp/nobody.csv" >"$tmp/nobody.ok"
	cmp -s "$tmp/root.ok" "$tmp/nobody.ok" ||
		fail "computable differs for nobody: $(diff "$tmp/root.ok" "$tmp/nobody.ok")"
	ok "as nobody: the same metrics are computable"
else
	echo "SKIP-PART: cannot run strobe as nobody here (not root, no setpriv, or the build is not readable): $(cat "$tmp/nobody.err" 2>/dev/null)"
fi

# bad input: one line on stderr, exit 2, nothing on stdout
bad() {
	"$STROBE" list "$@" >"$tmp/out" 2>"$tmp/err"
	rc=$?
	[ $rc -eq 2 ] || fail "list $*: exit $rc, want 2"
	[ "$(wc -l <"$tmp/err")" -eq 1 ] || fail "list $*: not one line: $(cat "$tmp/err")"
	[ -s "$tmp/out" ] && fail "list $*: wrote to stdout"
	echo "list $*: $(cat "$tmp/err")"
}
bad --metrics --format xml
grep -q "unknown --format 'xml'" "$tmp/err" || fail "--format xml message"
bad --format csv
grep -q "\-\-format applies to --metrics" "$tmp/err" || fail "--format without --metrics message"
bad --metrics -v
bad --metrics extra
grep -q "unexpected argument 'extra'" "$tmp/err" || fail "extra argument message"
bad --metrics --format
grep -q "option --format needs a value" "$tmp/err" || fail "--format without a value message"
bad --bogus
grep -q "unknown option '--bogus'" "$tmp/err" || fail "unknown option message"
ok "bad options"
