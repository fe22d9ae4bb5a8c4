#!/bin/sh
# t0632-matrix: document 000's workload, tests/workloads/matrix.  Both
# orders print the same sum and take the same page faults, the matrix's
# pages (DIM * DIM * 4 / 4096) plus the process's own few, as perf stat
# counts them; sampled together in one session, the column-order sum
# (sum_cols) takes more samples than the row-order one (sum_rows) by far:
# the same additions, with a miss at nearly every access.  Bad arguments
# get the usage line and exit 2.
. "$(dirname "$0")/lib.sh"
M=$WL/matrix

for a in "" x "row 8" "row 2048 0" "col 99999"; do
	# shellcheck disable=SC2086
	"$M" $a >/dev/null 2>"$tmp/err"
	rc=$?
	[ $rc = 2 ] || fail "matrix $a: exit $rc, not 2"
	grep -q "^usage: matrix row|col" "$tmp/err" || fail "matrix $a: $(cat "$tmp/err")"
done
"$M" row 512 4 >"$tmp/row" || fail "matrix row"
"$M" col 512 4 >"$tmp/col" || fail "matrix col"
r=$(sed -n 's/.*sum \([0-9]*\),.*/\1/p' "$tmp/row")
c=$(sed -n 's/.*sum \([0-9]*\),.*/\1/p' "$tmp/col")
# sum of (i % 7) over 512 * 512 elements, 4 passes
want=$(python3 -c 'print(4 * sum(i % 7 for i in range(512 * 512)))')
[ "$r" = "$want" ] && [ "$c" = "$want" ] || fail "sums: row $r, col $c, want $want"
ok "usage errors; both orders give the known sum"

if command -v perf >/dev/null; then
	for o in row col; do
		perf stat -x, -e page-faults -- "$M" $o 1024 1 >/dev/null 2>"$tmp/$o.stat" ||
			fail "perf stat matrix $o: $(cat "$tmp/$o.stat")"
	done
	python3 - "$tmp/row.stat" "$tmp/col.stat" <<'PY' || fail "page faults"
import sys
pf = [int(next(l for l in open(f) if ",page-faults" in l).split(",")[0]) for f in sys.argv[1:]]
pages = 1024 * 1024 * 4 // 4096
for n in pf:
    assert pages <= n <= pages + 200, (pf, pages)
assert abs(pf[0] - pf[1]) <= 20, pf
print("page faults: row %d, col %d (matrix: %d pages)" % (pf[0], pf[1], pages))
PY
	ok "the same page faults in both orders (perf stat)"
else
	echo "perf not installed: page faults not compared"
fi

[ "$(id -u)" = 0 ] || skip "the sampling part needs root (system-wide profiling)"
"$STROBE" record --sample-event cpu-clock -F 1000 --name matrix \
	-- sh -c "\"$M\" row 2048 6; \"$M\" col 2048 6" >/dev/null 2>"$tmp/rec.err" ||
	fail "record: $(cat "$tmp/rec.err")"
"$STROBE" report --comm matrix --by symbol --format csv >"$tmp/rep.csv" 2>"$tmp/rep.err" ||
	fail "report: $(cat "$tmp/rep.err")"
python3 - "$tmp/rep.csv" <<'PY' || fail "samples: $(cat "$tmp/rep.csv")"
import csv, sys
s = {r["symbol"]: int(r["samples"]) for r in csv.DictReader(open(sys.argv[1]))}
rows, cols = s.get("sum_rows", 0), s.get("sum_cols", 0)
print("samples: sum_rows %d, sum_cols %d" % (rows, cols))
# the same additions; column order misses at nearly every access (7-16 x
# slower on the development VM): 2 x leaves room for any machine and load
assert cols >= 50 and cols > 2 * rows, (rows, cols)
PY
ok "column order takes more samples than row order"
