#!/bin/sh
# t0832-fleet-plot-agg: 'strobe plot --source' sums samples_by_time (the
# 100 ms aggregate that push sends) when that is exact, and the samples
# otherwise (doc/FLEET.md, "Fleet timelines").  One session of two
# processes (counting page-faults) is pushed as host A (shard 1) and as
# host B (shard 2) to two real ClickHouse servers (tests/clickhouse.sh).
# For each plot the aggregate serves (--bucket a multiple of 100 ms,
# --from on 100 ms, --to at or after the end; --by none, cpu, pid, binary,
# host; --pid, --binary; --metric; --wall) the CSV of A is byte for byte
# the local plot's and the STROBE_FLEET_RAW=1 plot's, and so are the plots
# of both hosts, aggregate and raw.  Then B's raw samples are tampered
# with (a third of them inserted twice, on its shard, samples_by_time
# left alone): B's plots of the same cases must still be the local
# plot's, and B's raw plots must not, which proves the aggregate was
# read; the plots it must not serve (--bucket 50, --from 0.45, --to 1.3,
# --comm, --by symbol) must be B's raw ones, which proves they were not.
. "$(dirname "$0")/lib.sh"
need_root
command -v sqlite3 >/dev/null || skip "sqlite3 is not installed"
. "$(dirname "$0")/clickhouse.sh"

ch_fleet
ch_shard_hosts
"$STROBE" record --db "$tmp/a.db" --sample-event cpu-clock -F 2000 -e page-faults -- \
	sh -c "\"$WL/split603010\" 2 & \"$WL/split306010\" 2; wait" >/dev/null 2>"$tmp/rec.err" ||
	fail "record: $(cat "$tmp/rec.err")"
ch_push_as "$tmp/a.db" "$hA" "$hB"
n=$(sqlq "$tmp/a.db" "SELECT count(*) FROM samples WHERE session_id = 1")
ok "pushed a session of $n samples as hosts $hA (shard 1) and $hB (shard 2)"

pid=$(sqlq "$tmp/a.db" "SELECT pid FROM samples WHERE session_id = 1 GROUP BY pid ORDER BY count(*) DESC LIMIT 1")
[ -n "$pid" ] || fail "no pid in a.db"

# the plots the aggregate serves, and those it must not (their words are
# split, never globbed: [kernel.kallsyms])
set -f
cat >"$tmp/agg.cases" <<EOF
--event samples --bucket 100
--event page-faults,samples --bucket 200
--metric page-faults/samples --bucket 100 --from 0.2
--event samples --bucket 300 --from 0.3 --to 60
--event samples --bucket 100 --by cpu
--event samples --bucket 100 --by pid --top 2
--event page-faults,samples --bucket 100 --by binary --top 3
--event samples --bucket 100 --pid $pid
--event samples --bucket 200 --binary [kernel.kallsyms] --by pid
--event samples --bucket 100 --wall
EOF
cat >"$tmp/raw.cases" <<EOF
--event samples --bucket 50
--event samples --bucket 100 --from 0.45
--event samples --bucket 100 --to 1.3
--event samples --bucket 100 --comm split306010
--event samples --bucket 100 --by symbol --top 3
EOF

# plot NAME HOST [raw] ARGS: the fleet plot's CSV of HOST's session 1
plot() {
	pn=$1 ph=$2
	shift 2
	raw=0
	[ "$1" = raw ] && { raw=1; shift; }
	STROBE_FLEET_RAW=$raw "$STROBE" plot --source "$url" --host "$ph" --session 1 "$@" \
		-o "$tmp/$pn.csv" 2>"$tmp/err" || fail "$*: fleet plot of $ph (raw $raw): $(cat "$tmp/err")"
}
same() {	# A B WHAT
	cmp "$tmp/$1.csv" "$tmp/$2.csv" ||
		fail "$3: the CSVs differ: $(diff "$tmp/$1.csv" "$tmp/$2.csv" | head -6)"
}
differ() {	# A B WHAT
	! cmp -s "$tmp/$1.csv" "$tmp/$2.csv" || fail "$3"
}
# each CASES PREFIX FUNCTION: FUNCTION NAME ARGS for each line of CASES,
# NAME the PREFIX and the line's number; $j the lines
each() {
	cases=$1 pre=$2 fn=$3
	j=0
	while read -r args; do
		j=$((j + 1))
		# shellcheck disable=SC2086
		$fn "$pre$j" $args
	done <"$cases"
}

# 1. untouched: the local plot, A's (aggregate or not) and A's raw one
untouched() {	# NAME ARGS
	name=$1
	shift
	"$STROBE" plot --db "$tmp/a.db" --session 1 "$@" -o "$tmp/$name.l.csv" 2>"$tmp/err" ||
		fail "$*: local plot: $(cat "$tmp/err")"
	[ "$(wc -l <"$tmp/$name.l.csv")" -gt 5 ] || fail "$*: a plot of no buckets"
	plot "$name.a" "$hA" "$@"
	plot "$name.r" "$hA" raw "$@"
	same "$name.l" "$name.a" "$hA $*"
	same "$name.l" "$name.r" "$hA $* (STROBE_FLEET_RAW=1)"
	case $* in *--by*)
		[ "$(head -1 "$tmp/$name.l.csv" | tr ',' '\n' | wc -l)" -gt 5 ] ||
			fail "$*: fewer than 2 series: $(head -1 "$tmp/$name.l.csv")";;
	esac
}
each "$tmp/agg.cases" g untouched
ok "$hA: $j plots the aggregate serves, each the local plot's CSV and the raw plot's"
each "$tmp/raw.cases" f untouched
ok "$hA: $j plots the aggregate must not serve, as locally and raw"

# both hosts (several sessions: time since each start), aggregate and raw
m=0
# --by pid --top 4: the two workload processes of both hosts.  With --top 3
# the third place went to one host's copy of whichever process the plot
# ranked second, and the two take about the same samples (each had a CPU
# for 2 s): $pid, the first by count(*), was now and then second there.
for args in "--bucket 100" "--bucket 100 --by host" "--bucket 200 --by pid --top 4" \
	    "--bucket 100 --by binary --top 3" "--bucket 100 --by cpu --from 0.1 --to 60"; do
	m=$((m + 1))
	# shellcheck disable=SC2086
	STROBE_FLEET_RAW=0 "$STROBE" plot --source "$url" --session 1 --event samples $args \
		-o "$tmp/all$m.a.csv" 2>"$tmp/err" || fail "both hosts $args: $(cat "$tmp/err")"
	# shellcheck disable=SC2086
	STROBE_FLEET_RAW=1 "$STROBE" plot --source "$url" --session 1 --event samples $args \
		-o "$tmp/all$m.r.csv" 2>"$tmp/err" || fail "both hosts $args, raw: $(cat "$tmp/err")"
	same "all$m.a" "all$m.r" "both hosts $args"
	[ "$(wc -l <"$tmp/all$m.a.csv")" -gt 5 ] || fail "both hosts $args: a plot of no buckets"
done
grep -q "$hA#1: pid $pid (" "$tmp/all3.a.csv" ||
	fail "both hosts --by pid: no '$hA#1: pid $pid (COMM)' series: $(head -1 "$tmp/all3.a.csv")"
ok "both hosts: $m plots the aggregate serves, each the raw plot's (--by host, pid with comms, binary, cpu)"

# 2. B's raw samples tampered with: a third inserted twice (on its shard;
# samples_by_time, the session row and the comms stay as pushed)
before=$(ch_q 2 "SELECT count() FROM strobe.samples_local WHERE host = '$hB'")
[ "$before" = "$n" ] || fail "$hB: $before samples on shard 2, want $n"
ch_q 2 "INSERT INTO strobe.samples_local SELECT * FROM strobe.samples_local WHERE host = '$hB' AND time_ns % 3 = 0"
after=$(ch_q 2 "SELECT count() FROM strobe.samples_local WHERE host = '$hB'")
[ "$after" -gt "$n" ] || fail "$hB: the tampering added no sample ($after)"
ok "$hB: $((after - n)) of its $n raw samples inserted again"

# served: B's plot is the local one (the aggregate), its raw one is not
served() {	# NAME ARGS
	name=$1
	shift
	plot "$name.b" "$hB" "$@"
	plot "$name.br" "$hB" raw "$@"
	same "$name.l" "$name.b" "$hB (raw samples tampered with) $*: the aggregate was not read"
	differ "$name.l" "$name.br" "$hB $*: the raw plot does not see the tampered samples"
}
each "$tmp/agg.cases" g served
ok "$hB: the $j plots the aggregate serves read it (as locally), the raw ones read the tampered samples"

# not served: B's plot is its raw one, not the local one
unserved() {	# NAME ARGS
	name=$1
	shift
	plot "$name.b" "$hB" "$@"
	plot "$name.br" "$hB" raw "$@"
	same "$name.b" "$name.br" "$hB $*: a fallback that did not read the samples"
	differ "$name.l" "$name.b" "$hB $*: the fallback does not see the tampered samples"
}
each "$tmp/raw.cases" f unserved
ok "$hB: the $j plots the aggregate must not serve read the (tampered) samples"
exit 0
