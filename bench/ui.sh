#!/bin/sh
# ui.sh - 'strobe ui' on a 10-million-sample session with call stacks
# (issue 32's "fast on big sessions"): the JSON API's server time per
# request, the command line's time for the same answer, and the first
# paint in Debian's chromium.
#
# Usage (from anywhere):
#     bench/ui.sh BUILD [SAMPLES [RUNS]]   (default 10000000 5)
#
# BUILD is a build tree (with bench/ingestbench and tools/strobe).  Its
# ingestbench makes a database of SAMPLES samples, each with a 16-frame
# user callchain (-g CHAINS, default 64, so up to 4096 x 64 distinct
# stacks), kept in BENCH_DIR as ui.db and reused by a later run with the
# same SAMPLES and CHAINS.  Then 'strobe ui --db ui.db --no-open' serves it,
# and each request below is made RUNS times with curl, the median of
# curl's %{time_total} printed (loopback, so this is the server's time):
#     /api/sessions, /api/session
#     /api/series of the whole session at 1200 buckets, by=none, cpu, binary
#     /api/report (by symbol, limit 100, as the page asks), /api/flame and
#     /api/diff (A the window, B the same length at the session's end; for
#     100 % the two halves) for windows of 1 %, 10 % and 100 % of the
#     session, centred
# each beside the median wall time of the command that computes the same
# (plot -o x.csv for a series; report --from --to --format json; export
# --format folded --from --to; diff ID@A ID@B --format json) and the ratio
# command / API.  The series' point counts are checked against the bucket
# count (never more points than the 1200 pixels asked for).  Then, when
# node and tests/ui/node_modules (npm ci --prefix tests/ui) are there,
# tests/ui/paint.js loads the page PAINT_RUNS (default 3) times in headless
# chromium and prints its first paint (timeline canvas drawn and hot-spot
# table filled, navigation-relative performance.now()).
#
# Prints one line per measurement:
#     report 10%          | api 0.081 s | cli 0.120 s | cli/api 1.48
#
# Environment: BENCH_DIR (default /tmp/strobe-ui), CHAINS (default 64),
# PAINT_RUNS, CHROMIUM (for paint.js).
# Nothing is asserted: the targets and the figures are in doc/PERFORMANCE.md.
set -eu
build=${1:?usage: ui.sh BUILD [SAMPLES [RUNS]]}
n=${2:-10000000}
runs=${3:-5}
chains=${CHAINS:-64}
dir=${BENCH_DIR:-/tmp/strobe-ui}
top=$(cd "$(dirname "$0")/.." && pwd)
strobe=$build/tools/strobe
db=$dir/ui.db
mkdir -p "$dir"
command -v curl >/dev/null || { echo "ui.sh: curl is needed: apt-get install curl" >&2; exit 1; }

if [ ! -e "$db" ] || [ "$(cat "$dir/ui.n" 2>/dev/null)" != "$n -g $chains fp" ]; then
	rm -rf "$db" "$db-wal" "$db-shm" "$db.cache"
	"$build/bench/ingestbench" -n "$n" -g "$chains" -k "$db" >"$dir/ui.ingest" 2>&1
	echo "$n -g $chains fp" >"$dir/ui.n"
	echo "database: $(grep -E 'samples:|samples_per_s|db_bytes|stacks' "$dir/ui.ingest" | tr '\n' ' ')"
fi

: >"$dir/ui.out"
"$strobe" ui --db "$db" --no-open >"$dir/ui.out" 2>"$dir/ui.err" &
uipid=$!
trap 'kill $uipid 2>/dev/null || :' EXIT INT TERM
i=0
while ! grep -q '^strobe ui: http' "$dir/ui.out" && [ $i -lt 300 ]; do
	kill -0 $uipid 2>/dev/null || { echo "ui.sh: strobe ui exited: $(cat "$dir/ui.err")" >&2; exit 1; }
	sleep 0.1
	i=$((i + 1))
done
url=$(sed -n 's/^strobe ui: \(http[^ ]*\)$/\1/p' "$dir/ui.out")
[ -n "$url" ] || { echo "ui.sh: no URL from strobe ui: $(cat "$dir/ui.err")" >&2; exit 1; }
base=${url%%/\?token=*}
token=$(echo "$url" | sed 's/.*token=\([0-9a-f]*\).*/\1/')

# the median of the numbers on stdin
median() {
	sort -g | awk '{ v[NR] = $1 } END { printf "%.3f", NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}

# api PATH?QUERY: the median of RUNS requests' time_total; the body of the
# last in $dir/body (a status other than 200 stops the benchmark)
api() {
	r=0
	: >"$dir/times"
	while [ "$r" -lt "$runs" ]; do
		out=$(curl -s -o "$dir/body" -H "X-Strobe-Token: $token" \
			-w '%{http_code} %{time_total}' "$base/api/$1")
		[ "${out%% *}" = 200 ] || { echo "ui.sh: /api/$1: ${out%% *} $(cat "$dir/body")" >&2; exit 1; }
		echo "${out#* }" >>"$dir/times"
		r=$((r + 1))
	done
	median <"$dir/times"
}

# cli ARGS...: the median of RUNS runs' wall seconds of strobe ARGS
cli() {
	r=0
	: >"$dir/times"
	while [ "$r" -lt "$runs" ]; do
		/usr/bin/time -f "%e" -o "$dir/time" "$strobe" "$@" >"$dir/cli.out" 2>"$dir/err" ||
			{ echo "ui.sh: strobe $*: $(cat "$dir/err")" >&2; exit 1; }
		cat "$dir/time" >>"$dir/times"
		r=$((r + 1))
	done
	median <"$dir/times"
}

row() {
	awk -v w="$1" -v a="$2" -v c="$3" 'BEGIN {
		printf "%-19s | api %s s", w, a
		if (c != "") printf " | cli %s s | cli/api %.2f", c, (a > 0 ? c / a : 0)
		printf "\n" }'
}

t=$(api "sessions")
row "sessions" "$t" ""
sid=$(sed -n 's/.*"id":\([0-9]*\).*/\1/p' "$dir/body" | head -1)
t=$(api "session?session=$sid")
row "session" "$t" ""
dur=$(sed -n 's/.*"duration_ns":\([0-9]*\).*/\1/p' "$dir/body" | head -1)
[ -n "$sid" ] && [ -n "$dur" ] || { echo "ui.sh: no session in $db" >&2; exit 1; }
echo "session $sid: $dur ns, $(sed -n 's/.*"samples":\([0-9]*\).*/\1/p' "$dir/body" | head -1) samples"

for by in none cpu binary; do
	# by=none: no by parameter (the page's 'none'; plot without --by)
	q=; o=
	[ "$by" = none ] || { q="&by=$by"; o="--by $by"; }
	t=$(api "series?session=$sid&event=samples&buckets=1200$q")
	pts=$(sed 's/.*"times":\[\([^]]*\)\].*/\1/' "$dir/body" | tr ',' '\n' | wc -l)
	lines=$(grep -o '"values":\[' "$dir/body" | wc -l)
	c=$(cli plot --db "$db" --session "$sid" --event samples $o -o "$dir/x.csv")
	row "series by=$by" "$t" "$c"
	echo "  $pts points per line (1200 asked), $lines lines"
done

for pct in 1 10 100; do
	w=$((dur / 100 * pct))
	[ "$pct" = 100 ] && w=$dur
	from=$(((dur - w) / 2))
	to=$((from + w))
	bfrom=$((dur - w))
	t=$(api "report?session=$sid&from=$from&to=$to&by=symbol&limit=100")
	c=$(cli report --db "$db" --session "$sid" --from "${from}ns" --to "$((to - 1))ns" \
		--by symbol --limit 100 --format json)
	row "report $pct%" "$t" "$c"
	t=$(api "flame?session=$sid&from=$from&to=$to")
	c=$(cli export --db "$db" --session "$sid" --format folded --from "${from}ns" \
		--to "$((to - 1))ns" -o "$dir/x.folded")
	row "flame $pct%" "$t" "$c"
	# diff: A the window, B as long at the session's end; of the whole
	# session (A and B may not be the same): its two halves
	a0=$from a1=$to b0=$bfrom b1=$dur what="diff $pct%"
	[ "$pct" = 100 ] && a0=0 a1=$((dur / 2)) b0=$((dur / 2)) b1=$dur what="diff 50%|50%"
	t=$(api "diff?session=$sid&a_from=$a0&a_to=$a1&b_from=$b0&b_to=$b1&by=symbol&limit=100")
	c=$(cli diff --db "$db" --by symbol --limit 100 --format json \
		"$sid@${a0}ns-${a1}ns" "$sid@${b0}ns-${b1}ns")
	row "$what" "$t" "$c"
done

if command -v node >/dev/null && [ -d "$top/tests/ui/node_modules/playwright-core" ]; then
	node "$top/tests/ui/paint.js" "$url&session=$sid" "${PAINT_RUNS:-3}"
else
	echo "first paint: skipped (needs node and 'npm ci --prefix tests/ui')"
fi
