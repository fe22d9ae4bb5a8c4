#!/bin/sh
# children.sh - inclusive reports of a large -g session (issue 12): how
# long 'strobe report --children', '--callers' and '--callees' take on a
# session of SAMPLES samples with call stacks, whose cost should be that
# of its distinct stacks (stack_agg), not of its samples.
#
# Usage (from a build tree):
#     bench/children.sh [SAMPLES [CHAINS [RUNS]]]   (default 10000000 64 3)
#
# bench/ingestbench -g CHAINS makes the session (through ingest, as strobed
# does: up to 4096 x CHAINS distinct 16-frame stacks, in its own
# executable), kept in BENCH_DIR (default /tmp/strobe-children) as
# SAMPLES-CHAINS.db and reused by a later run.  Then RUNS times each
# command below, wall-clock seconds and user+system CPU:
#     report --children
#     report --children --by binary
#     report --callers <the hottest function>
#     report --callees main
#     report --children --from 0 --to 10    (the raw samples: for comparison)
# Nothing is asserted: this is a measurement, not a test.
set -eu
n=${1:-10000000}
chains=${2:-64}
runs=${3:-3}
dir=${BENCH_DIR:-/tmp/strobe-children}
build=$(cd "$(dirname "$0")/.." && pwd)
strobe=$build/tools/strobe
mkdir -p "$dir"
db=$dir/$n-$chains.db
if [ ! -f "$db" ]; then
	echo "making $db ($n samples, -g $chains)"
	"$build/bench/ingestbench" -n "$n" -g "$chains" -k "$db"
	# ingestbench leaves sessions.call_graph unset; its samples have stacks
	python3 -c 'import sqlite3, sys; c = sqlite3.connect(sys.argv[1]); c.execute("UPDATE sessions SET call_graph=\"fp\""); c.commit()' "$db"
fi
"$strobe" sessions --db "$db" | tail -1
hot=$("$strobe" report --db "$db" --children --format csv --limit 3 2>/dev/null |
	awk -F, 'NR > 1 && $3 != "main" && $3 != "[unknown]" { print $3; exit }')
timeit() {
	label=$1
	shift
	/usr/bin/time -f "%e %U %S" -o "$dir/time" "$strobe" report --db "$db" "$@" \
		>/dev/null 2>"$dir/err" || { echo "$label: failed: $(cat "$dir/err")"; return; }
	awk -v l="$label" '{ printf "%s | %.2f s (%.2f cpu)\n", l, $1, $2 + $3 }' "$dir/time"
}
i=0
while [ $i -lt "$runs" ]; do
	timeit "report --children" --children
	timeit "report --children --by binary" --children --by binary
	timeit "report --callers $hot" --callers "$hot"
	timeit "report --callees main" --callees main
	timeit "report --children --from 0 --to 10 (raw samples)" --children --from 0 --to 10
	i=$((i + 1))
done
