#!/bin/sh
# push.sh - 'strobe push' throughput into two local ClickHouse shards, and
# the bytes a sample takes in ClickHouse, in SQLite and in perf.data
# (issue 15).
#
# Usage: bench/push.sh [-d SECONDS] [-F HZ] [-r RUNS] [-b "ROWS ..."] [-k DIR]
#   -d  seconds of workload (default 60)
#   -F  sampling rate per CPU, both recorders (default 10000)
#   -r  timed pushes per batch size (default 3)
#   -b  STROBE_PUSH_BATCH_ROWS values (default "16384 65536 max", max:
#       the server's max_insert_block_size)
#   -k  keep strobe.db and perf.data in DIR; when DIR holds both already,
#       reuse them instead of recording (to compare two builds' pushes)
#
# 1. Records one real session: NCPU x tests/workloads/split603010 SECONDS
#    and a loop of 'pagetouch 2000' (short processes, page faults, context
#    switches) under
#        strobe record --sample-event cpu-clock -F HZ \
#            -e page-faults,context-switches,cpu-migrations,minor-faults
#    (a private strobed), the workload itself run under
#        perf record -a -F HZ --buildid-mmap \
#            -e '{cpu-clock,page-faults,context-switches,cpu-migrations,minor-faults}:S'
#    so both take the same samples (a cpu-clock sample carrying the four
#    counts) of the same workload at the same time (strobe's session also
#    covers perf's start and end).
# 2. Starts two ClickHouse shards (tests/clickhouse.sh) and pushes the
#    session RUNS times per batch size, the sizes alternated and every
#    table emptied (TRUNCATE on both shards) before each push: wall and
#    user+sys CPU of strobe push (/usr/bin/time), CPU of the two servers
#    (/proc/PID/stat), samples/s.  Prints each run and the medians.
# 3. Bytes: pushes once more (default batch size), OPTIMIZE TABLE ... FINAL
#    on both shards, and sums system.parts (active parts) per table:
#    compressed and uncompressed bytes; the samples_local columns'
#    compressed bytes (system.columns); the SQLite database (after a WAL
#    checkpoint; per table and index from dbstat); perf.data's size and
#    its sample count (perf report --stats).
# Runs as root (system-wide sampling).  Measures, never passes or fails.
set -u
bdir=$(cd "$(dirname "$0")" && pwd)
export STROBE_TOP=${STROBE_TOP:-$(cd "$bdir/.." && pwd)}
export STROBE_BUILD=${STROBE_BUILD:-$STROBE_TOP}
secs=60 hz=10000 runs=3 sizes="16384 65536 max" keep=
usage() { sed -n '7,14s/^# \{0,1\}//p' "$0" >&2; exit 2; }
while getopts d:F:r:b:k: o; do
	case $o in
	d) secs=$OPTARG ;;
	F) hz=$OPTARG ;;
	r) runs=$OPTARG ;;
	b) sizes=$OPTARG ;;
	k) keep=$OPTARG ;;
	*) usage ;;
	esac
done
. "$STROBE_TOP/tests/lib.sh"
need_root
command -v perf >/dev/null || { echo "push.sh: perf is not installed (apt-get install linux-perf)" >&2; exit 1; }
[ -x /usr/bin/time ] || { echo "push.sh: /usr/bin/time is not installed (apt-get install time)" >&2; exit 1; }
for f in "$STROBE" "$WL/split603010" "$WL/pagetouch"; do
	[ -x "$f" ] || { echo "push.sh: $f missing: build first (make)" >&2; exit 1; }
done
. "$STROBE_TOP/tests/clickhouse.sh"
trap 'ch_cleanup' EXIT
db=$tmp/strobe.db
events=page-faults,context-switches,cpu-migrations,minor-faults
maxrate=/proc/sys/kernel/perf_event_max_sample_rate

echo "# strobe push bench, $(date -u '+%F %T') UTC, $(uname -r), $(nproc) CPUs," \
	"$(grep -m1 'model name' /proc/cpuinfo | sed 's/.*: //'), load $(cut -d' ' -f1-3 /proc/loadavg)"

# 1. the session, and perf.data of the same samples
cat >"$tmp/wl.sh" <<EOF
#!/bin/sh
i=0
while [ \$i -lt $(nproc) ]; do "$WL/split603010" $secs & i=\$((i + 1)); done
end=\$((\$(date +%s) + $secs))
while [ \$(date +%s) -lt \$end ]; do "$WL/pagetouch" 2000 >/dev/null; sleep 0.02; done
wait
EOF
if [ -n "$keep" ] && [ -f "$keep/strobe.db" ] && [ -f "$keep/perf.data" ]; then
	echo "# reusing $keep/strobe.db and $keep/perf.data"
	cp -r "$keep/strobe.db" "$keep/strobe.db.cache" "$keep/perf.data" "$keep/rec.err" "$tmp/" ||
		exit 1
	line=$(grep 'strobe record: session' "$tmp/rec.err" | tail -1)
else
	echo "# recording: $(nproc) x split603010 $secs + pagetouch loop, cpu-clock -F $hz + $events;" \
		"perf_event_max_sample_rate $(cat $maxrate)"
	"$STROBE" record --db "$db" --sample-event cpu-clock -F "$hz" -e "$events" \
		--name push-bench -- perf record -q -a -F "$hz" "$(perf_bid)" -o "$tmp/perf.data" \
		-e "{cpu-clock,$events}:S" -- sh "$tmp/wl.sh" >"$tmp/rec.out" 2>"$tmp/rec.err"
	rc=$?
	line=$(grep 'strobe record: session' "$tmp/rec.err" | tail -1)
	if [ $rc != 0 ] || [ -z "$line" ]; then
		echo "push.sh: recording failed (status $rc):" >&2
		cat "$tmp/rec.err" >&2
		exit 1
	fi
	sqlite3 "$db" 'PRAGMA wal_checkpoint(TRUNCATE)' >/dev/null
	if [ -n "$keep" ]; then
		mkdir -p "$keep" && rm -rf "$keep/strobe.db.cache" &&
			cp -r "$db" "$db.cache" "$tmp/perf.data" "$tmp/rec.err" "$keep/" || exit 1
	fi
fi
echo "# $line (perf_event_max_sample_rate now $(cat $maxrate))"
sid=$(echo "$line" | sed -n 's/.*session \([0-9]*\).*/\1/p')
samples=$(sqlite3 "$db" "SELECT samples FROM sessions WHERE id = $sid")

# 2. pushes
ch_fleet
q_all() { ch_q 1 "$1"; ch_q 2 "$1"; }
# every table of the schema files applied (e.g. schema 2's aggregates and
# 3's intervals), as the servers list them
tables=$(ch_q 1 "SELECT replaceRegexpOne(name, '_local$', '') FROM system.tables
	WHERE database = 'strobe' AND match(name, '_local$') ORDER BY name" | tr '\n' ' ')
[ -n "$tables" ] || { echo "push.sh: no strobe tables on the shards" >&2; exit 1; }
empty() { for t in $tables; do q_all "TRUNCATE TABLE strobe.${t}_local"; done; }
max=$(ch_q 1 "SELECT value FROM system.settings WHERE name = 'max_insert_block_size'")
sizes=$(echo "$sizes" | sed "s/max/$max/g")
srv_cpu() {	# clock ticks of both servers
	awk '{ s += $14 + $15 } END { print s }' "/proc/$(cat "$tmp/ch1/pid")/stat" \
		"/proc/$(cat "$tmp/ch2/pid")/stat"
}
tck=$(getconf CLK_TCK)
push() {	# ROWS: one timed push of the session into empty tables
	empty
	c0=$(srv_cpu)
	STROBE_PUSH_BATCH_ROWS=$1 /usr/bin/time -f "%e %U %S" -o "$tmp/push.time" \
		"$STROBE" push --to "$url" --db "$db" --host bench --session "$sid" \
		>"$tmp/push.out" 2>"$tmp/push.err" ||
		{ echo "push.sh: strobe push failed: $(cat "$tmp/push.err")" >&2; : >"$tmp/failed"; exit 1; }
	c1=$(srv_cpu)
	n=$(ch_q 1 "SELECT count() FROM strobe.samples WHERE host = 'bench'")
	[ "$n" = "$samples" ] || { echo "push.sh: $n samples in ClickHouse, not $samples" >&2; : >"$tmp/failed"; exit 1; }
}
echo "# pushing session $sid ($samples samples) to two shards, STROBE_PUSH_BATCH_ROWS in: $sizes"
echo "# batch_rows run wall_s push_cpu_s servers_cpu_s samples_per_s"
r=1
while [ $r -le "$runs" ]; do
	for b in $sizes; do
		push "$b"
		awk -v b="$b" -v r="$r" -v n="$samples" -v c0="$c0" -v c1="$c1" -v t="$tck" \
			'{ printf "%s %d %.2f %.2f %.2f %.0f\n", b, r, $1, $2 + $3, (c1 - c0) / t, n / $1 }' \
			"$tmp/push.time"
	done
	sizes="$(echo $sizes | cut -d' ' -f2-) $(echo $sizes | cut -d' ' -f1)"
	r=$((r + 1))
done | tee "$tmp/runs"
[ -e "$tmp/failed" ] && exit 1
awk '
function median(a, n,   i, j, t) {
	for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++) if (a[j] < a[i]) { t = a[i]; a[i] = a[j]; a[j] = t }
	return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
}
{ k = $1; n[k]++; w[k, n[k]] = $3; c[k, n[k]] = $4; s[k, n[k]] = $5; if (!(k in seen)) { seen[k] = 1; order[++m] = k } }
END {
	for (i = 1; i <= m; i++) {
		k = order[i]
		for (j = 1; j <= n[k]; j++) { a[j] = w[k, j]; b[j] = c[k, j]; d[j] = s[k, j] }
		printf "STROBE_PUSH_BATCH_ROWS=%s: median of %d: wall %.2f s, strobe push CPU %.2f s, servers CPU %.2f s, %.0f samples/s\n",
			k, n[k], median(a, n[k]), median(b, n[k]), median(d, n[k]), '"$samples"' / median(a, n[k])
	}
}' "$tmp/runs"

# 3. bytes
push 65536
echo "# bytes per sample ($samples samples in strobe, session $sid)"
parts() {	# WHEN
	for i in 1 2; do
		ch_q "$i" "SELECT table, count(), sum(rows), sum(data_compressed_bytes),
			sum(data_uncompressed_bytes), sum(bytes_on_disk) FROM system.parts
			WHERE database = 'strobe' AND active AND table LIKE '%_local' GROUP BY table"
	done | awk -v n="$samples" -v when="$1" '
	{ p[$1] += $2; r[$1] += $3; c[$1] += $4; u[$1] += $5; d[$1] += $6 }
	END {
		for (t in p) {
			printf "clickhouse %s %s: %d parts, %d rows, %d compressed (%.2f B/sample), %d uncompressed (%.2f B/sample), %d on disk\n",
				when, t, p[t], r[t], c[t], c[t] / n, u[t], u[t] / n, d[t]
			tc += c[t]; tu += u[t]; td += d[t]
			if (t != "samples_local") { oc += c[t]; ou += u[t] }
		}
		printf "clickhouse %s all tables: %d compressed (%.2f B/sample), %d uncompressed (%.2f B/sample), %d on disk (%.2f B/sample); tables but samples: %d compressed (%.2f B/sample)\n",
			when, tc, tc / n, tu, tu / n, td, td / n, oc, oc / n
	}' | sort
}
parts "as pushed"
for t in $tables; do q_all "OPTIMIZE TABLE strobe.${t}_local FINAL"; done
parts "merged"
for i in 1 2; do
	ch_q "$i" "SELECT name, data_compressed_bytes, data_uncompressed_bytes FROM system.columns
		WHERE database = 'strobe' AND table = 'samples_local'"
done | awk -v n="$samples" '{ c[$1] += $2; u[$1] += $3; if (!($1 in s)) { s[$1] = 1; o[++m] = $1 } }
	END { printf "clickhouse merged samples_local per column (B/sample compressed/uncompressed):"
	      for (i = 1; i <= m; i++) printf " %s %.2f/%.2f", o[i], c[o[i]] / n, u[o[i]] / n
	      printf "\n" }'

dbb=$(stat -c %s "$db")
echo "sqlite database: $dbb bytes, $(awk -v b="$dbb" -v n="$samples" 'BEGIN { printf "%.2f", b / n }') B/sample"
if sqlite3 "$db" "SELECT count(*) FROM dbstat" >/dev/null 2>&1; then
	sqlite3 -separator ' ' "$db" "SELECT name, sum(pgsize) FROM dbstat GROUP BY name ORDER BY 2 DESC" |
		awk -v n="$samples" '{ printf "sqlite %s: %d bytes (%.2f B/sample)\n", $1, $2, $2 / n }' | head -20
else
	echo "sqlite: no dbstat in this sqlite3"
fi
pb=$(stat -c %s "$tmp/perf.data")
perf report -i "$tmp/perf.data" --stats 2>/dev/null >"$tmp/perf.stats"
ps=$(sed -n 's/^ *SAMPLE events: *\([0-9]*\).*/\1/p' "$tmp/perf.stats" | head -1)
echo "perf.data: $pb bytes, $ps samples (perf report --stats), $(awk -v b="$pb" -v n="$ps" 'BEGIN { printf "%.2f", b / n }') B/sample"
grep -E 'events:' "$tmp/perf.stats" | sed 's/^ */# perf /' | head -12
