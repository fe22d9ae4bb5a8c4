#!/bin/sh
# fleet-report.sh - how long 'strobe report --source' takes over 10 and
# 100 million samples in two local ClickHouse shards (tests/clickhouse.sh),
# reading the per-location aggregate (schema 2's samples_by_loc, the
# default) and the raw samples (STROBE_FLEET_RAW=1, a benchmark knob); and
# 'strobe plot --source' (the timeline of all sessions, its default
# 500 ms buckets: samples_by_time, or the raw samples), the CSVs of the
# two paths compared.
#
# Usage: bench/fleet-report.sh [-r ROUNDS] [-m MILLIONS...]
#   -r  runs of each report, best and median printed (default 3)
#   -m  the sizes, in millions of samples, ascending (default "10 100")
#
# The samples are synthetic, made in ClickHouse (INSERT ... SELECT from
# system.numbers, into each shard's samples_local directly): 4 hosts (two
# a shard), sessions of 1.25 M samples each (8 CPUs at 1000 Hz for 156 s),
# 6 binaries, 3000 offsets a binary with a skewed (cubic) distribution,
# 3 pids a binary, the kernel's samples flagged kernel, one counting
# event.  The aggregate rows are then summed from them as 'strobe push'
# would (INSERT ... SELECT ... GROUP BY, per session), and sessions,
# binaries and symbols rows written.  Needs about 1.5 GB in /tmp at 100 M;
# the data directory is deleted at the end.  Measures, never passes or
# fails; the machine may be shared: run it when it is quiet.
set -u
bdir=$(cd "$(dirname "$0")" && pwd)
export STROBE_TOP=${STROBE_TOP:-$(cd "$bdir/.." && pwd)}
export STROBE_BUILD=${STROBE_BUILD:-$STROBE_TOP}
rounds=3 sizes="10 100"
while getopts r:m: o; do
	case $o in
	r) rounds=$OPTARG ;;
	m) sizes=$OPTARG ;;
	*) echo "usage: $0 [-r ROUNDS] [-m 'MILLIONS ...']" >&2; exit 2 ;;
	esac
done
. "$STROBE_TOP/tests/lib.sh"
. "$STROBE_TOP/tests/clickhouse.sh"
ch_fleet

per=1250000		# samples a session
hosts= n1=0 n2=0
for c in alpha bravo charlie delta echo foxtrot golf hotel india juliet; do
	s=$(ch_q 1 "SELECT cityHash64('$c') % 2 + 1")	# the shard of host c
	if [ "$s" = 1 ] && [ $n1 -lt 2 ]; then n1=$((n1 + 1)); hosts="$hosts 1:$c"; fi
	if [ "$s" = 2 ] && [ $n2 -lt 2 ]; then n2=$((n2 + 1)); hosts="$hosts 2:$c"; fi
done
[ "$(echo "$hosts" | wc -w)" = 4 ] || { echo "no two host names a shard: $hosts" >&2; exit 1; }
day=$(date -u +%Y-%m-%d)

# fill SHARD HOST SESSION: one session of $per samples, its aggregates,
# its session and binaries rows
fill() {
	sh_=$1 h=$2 s=$3
	start=$((s * 1000000000000))
	# u: uniform in [0, 1) from the row number; the offset index is
	# skewed to the low ones (u^3), the binary too (1 and 2 most)
	ch_q "$sh_" "INSERT INTO strobe.samples_local SELECT '$h', $s, 1, toDate('$day'),
		$start + number * 125000, number, number % 8,
		100 + b * 10 + (cityHash64(number, 2) % 3) AS pid, pid, concat('comm', toString(b)),
		b, concat('buildid:', hex(cityHash64(b))), 4096 + 16 * toUInt64(3000 * pow(u, 3)),
		b = 1, 1000000, cityHash64(number, 3) % 4, 0, 0, 0, 0, 0, 0, 0
		FROM (SELECT number, (cityHash64(number) % 1000000) / 1000000 AS u,
			1 + toUInt64(6 * pow((cityHash64(number, 1) % 1000000) / 1000000, 2)) AS b
			FROM system.numbers LIMIT $per)"
	ch_q "$sh_" "INSERT INTO strobe.samples_by_loc_local SELECT host, session, 2, day,
		binary_id, binary_key, offset, pid, comm, flags, count(), sum(period),
		sum(c0), sum(c1), sum(c2), sum(c3), sum(c4), sum(c5), sum(c6), sum(c7)
		FROM strobe.samples_local WHERE host = '$h' AND session = $s
		GROUP BY host, session, day, binary_id, binary_key, offset, pid, comm, flags"
	ch_q "$sh_" "INSERT INTO strobe.samples_by_time_local SELECT host, session, 3, day,
		intDiv(time_ns - $start, 100000000) * 100000000 AS bucket, cpu, pid, binary_id, count(),
		sum(period), sum(c0), sum(c1), sum(c2), sum(c3), sum(c4), sum(c5), sum(c6), sum(c7)
		FROM strobe.samples_local WHERE host = '$h' AND session = $s
		GROUP BY host, session, day, bucket, cpu, pid, binary_id"
	ch_q "$sh_" "INSERT INTO strobe.sessions_local (host, session, batch, day, content_hash,
		batches, batch_rows, name, state, backend, kernel_release, nr_cpus, sample_event,
		sample_freq, sample_period, start_ns, end_ns, wall_offset_ns, samples, lost,
		throttled, events) VALUES ('$h', $s, 0, '$day', 'bench', 4, 65536, 'bench',
		'stopped', 'perf', 'bench', 8, 'cpu-clock', 1000, 0, $start,
		$((start + per * 125000)), 0, $per, 0, 0, ['page-faults'])"
	ch_q "$sh_" "INSERT INTO strobe.binaries_local SELECT '$h', $s, 4, toDate('$day'),
		number + 1, concat('buildid:', hex(cityHash64(number + 1))),
		concat('/usr/lib/bench/bin', toString(number + 1)),
		if(number = 0, '[kernel.kallsyms]', concat('/usr/lib/bench/bin',
		toString(number + 1))), '' FROM system.numbers LIMIT 6"
}

# the symbols of every binary: a function per 8 offsets (on shard 1's
# Distributed table, which shards them by key)
ch_q 1 "INSERT INTO strobe.symbols SELECT concat('buildid:', hex(cityHash64(b))),
	4096 + 16 * i, concat('fn_', toString(b), '_', toString(intDiv(i, 8)))
	FROM (SELECT intDiv(number, 3001) + 1 AS b, number % 3001 AS i
	FROM system.numbers LIMIT 18006)"

timeit() {	# LABEL RAW OUT ARGS...: times $rounds runs of strobe ARGS with
		# STROBE_FLEET_RAW=RAW, stdout to OUT; prints best and median
	label=$1 raw=$2 out=$3
	shift 3
	: >"$tmp/times"
	r=0
	while [ $r -lt "$rounds" ]; do
		t0=$(date +%s.%N)
		if ! STROBE_FLEET_RAW=$raw "$STROBE" "$@" >"$out" 2>"$tmp/run.err"; then
			# e.g. a query silent for 60 s: the client's stall limit
			echo "  $label: failed after $(echo "$t0 $(date +%s.%N)" |
				awk '{ printf "%.1f", $2 - $1 }') s: $(cat "$tmp/run.err")"
			return
		fi
		t1=$(date +%s.%N)
		echo "$t0 $t1" | awk '{ printf "%.3f\n", $2 - $1 }' >>"$tmp/times"
		r=$((r + 1))
	done
	sort -n "$tmp/times" | awk -v l="$label" '{ t[NR] = $1 }
		END { printf "  %-28s best %7.2f s  median %7.2f s\n", l, t[1], t[int((NR + 1) / 2)] }'
}

# the report's main query alone, in clickhouse-client (no client stall
# limit): the sums per location of the aggregate, and of the samples
core() {	# LABEL TABLE COUNT
	t0=$(date +%s.%N)
	ch_q 1 "SELECT host, session, binary_id, binary_key, offset, $3, sum(period), sum(c0),
		sum(c1), sum(c2), sum(c3), sum(c4), sum(c5), sum(c6), sum(c7) FROM strobe.$2
		GROUP BY host, session, binary_id, binary_key, offset FORMAT Null"
	echo "$t0 $(date +%s.%N)" | awk -v l="$1" '{ printf "  %-28s %7.2f s\n", l, $2 - $1 }'
}

next=1
for m in $sizes; do
	want=$((m * 1000000 / per / 4))		# sessions a host
	t0=$(date +%s)
	while [ $next -le "$want" ]; do
		for hs in $hosts; do
			fill "${hs%%:*}" "${hs#*:}" $next
		done
		next=$((next + 1))
	done
	t1=$(date +%s)
	n=$(ch_q 1 "SELECT count() FROM strobe.samples")
	a=$(ch_q 1 "SELECT count() FROM strobe.samples_by_loc")
	b=$(ch_q 1 "SELECT count() FROM strobe.samples_by_time")
	sz=$(du -sm "$tmp/ch1/data" "$tmp/ch2/data" | awk '{ s += $1 } END { print s }')
	echo "$n samples ($((want * 4)) sessions of 4 hosts, filled in $((t1 - t0)) s), $a rows in samples_by_loc, $b in samples_by_time, ${sz} MB on disk"
	for i in 1 2; do
		ch_q $i "SELECT table, sum(rows), sum(data_compressed_bytes) FROM system.parts
			WHERE database = 'strobe' AND active GROUP BY table ORDER BY table"
	done | awk '{ r[$1] += $2; b[$1] += $3 } END { for (t in r) if (r[t] > 1000)
		printf "  %-22s %11d rows %8.1f MB compressed %6.1f bytes a row\n", t, r[t], b[t] / 1e6, b[t] / r[t] }' | sort
	core "main query, aggregate" samples_by_loc "sum(n)"
	core "main query, raw samples" samples "count()"
	for by in symbol binary host; do
		timeit "--by $by, aggregate" "" "$tmp/rep.out" report --source "$url" --by "$by"
		timeit "--by $by, raw samples" 1 "$tmp/rep1.out" report --source "$url" --by "$by"
		[ -s "$tmp/rep1.out" ] && ! cmp -s "$tmp/rep.out" "$tmp/rep1.out" &&
			echo "  the two paths' reports differ: $(diff "$tmp/rep.out" "$tmp/rep1.out" | head -4)"
		[ "$by" = symbol ] && head -n 12 "$tmp/rep.out" | sed 's/^/    /'
		rm -f "$tmp/rep.out" "$tmp/rep1.out"
	done
	for by in "" "--by pid" "--by binary"; do
		# shellcheck disable=SC2086
		timeit "plot ${by:-(all)}, aggregate" 0 /dev/null plot --source "$url" \
			--event samples $by -o "$tmp/plot0.csv"
		# shellcheck disable=SC2086
		timeit "plot ${by:-(all)}, raw samples" 1 /dev/null plot --source "$url" \
			--event samples $by -o "$tmp/plot1.csv"
		[ -s "$tmp/plot1.csv" ] && ! cmp -s "$tmp/plot0.csv" "$tmp/plot1.csv" &&
			echo "  the two paths' plots differ: $(diff "$tmp/plot0.csv" "$tmp/plot1.csv" | head -4)"
		[ "$by" = "--by pid" ] && head -n 1 "$tmp/plot0.csv" | sed 's/^/    /'
		rm -f "$tmp/plot0.csv" "$tmp/plot1.csv"
	done
done
exit 0
