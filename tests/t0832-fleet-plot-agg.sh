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
# read; the plots it must not serve (--bucket 50, --from 0.25, --to 0.8,
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
for h in "$hA" "$hB"; do
	"$STROBE" push --db "$tmp/a.db" --to "$url" --host "$h" >/dev/null 2>"$tmp/push.err" ||
		fail "push $h: $(cat "$tmp/push.err")"
done
n=$(sqlq "$tmp/a.db" "SELECT count(*) FROM samples WHERE session_id = 1")
ok "pushed a session of $n samples as hosts $hA (shard 1) and $hB (shard 2)"

pid=$(sqlq "$tmp/a.db" "SELECT pid FROM samples WHERE session_id = 1 GROUP BY pid ORDER BY count(*) DESC LIMIT 1")
[ -n "$pid" ] || fail "no pid in a.db"

# the plots the aggregate serves, and those it must not
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

k=0
# plot NAME HOST [RAW] ARGS: the fleet plot's CSV of HOST's session 1
plot() {
	name=$1 h=$2
	shift 2
	raw=0
	[ "$1" = raw ] && { raw=1; shift; }
	STROBE_FLEET_RAW=$raw "$STROBE" plot --source "$url" --host "$h" --session 1 "$@" \
		-o "$tmp/$name.csv" 2>"$tmp/err" || fail "$*: fleet plot of $h (raw $raw): $(cat "$tmp/err")"
}
local_plot() {
	name=$1
	shift
	"$STROBE" plot --db "$tmp/a.db" --session 1 "$@" -o "$tmp/$name.csv" 2>"$tmp/err" ||
		fail "$*: local plot: $(cat "$tmp/err")"
	[ "$(wc -l <"$tmp/$name.csv")" -gt 5 ] || fail "$*: a plot of no buckets"
}
same() {	# A B WHAT
	cmp "$tmp/$1.csv" "$tmp/$2.csv" ||
		fail "$3: the CSVs differ: $(diff "$tmp/$1.csv" "$tmp/$2.csv" | head -6)"
}

# 1. untouched: local, aggregate and raw agree
while read -r args; do
	k=$((k + 1))
	# shellcheck disable=SC2086
	local_plot "$k.l" $args
	# shellcheck disable=SC2086
	plot "$k.a" "$hA" $args
	# shellcheck disable=SC2086
	plot "$k.r" "$hA" raw $args
	same "$k.l" "$k.a" "$hA $args (aggregate)"
	same "$k.l" "$k.r" "$hA $args (STROBE_FLEET_RAW=1)"
	case $args in *--by*)
		[ "$(head -1 "$tmp/$k.l.csv" | tr ',' '\n' | wc -l)" -gt 5 ] ||
			fail "$args: fewer than 2 series: $(head -1 "$tmp/$k.l.csv")";;
	esac
done <"$tmp/agg.cases"
ok "$hA: $k plots the aggregate serves, each the local plot's CSV and the raw plot's"

# both hosts (several sessions: time since each start), aggregate and raw
m=0
for args in "--bucket 100" "--bucket 100 --by host" "--bucket 200 --by pid --top 3" \
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

# the fallbacks, untouched: as locally
j=0
while read -r args; do
	j=$((j + 1))
	# shellcheck disable=SC2086
	local_plot "f$j.l" $args
	# shellcheck disable=SC2086
	plot "f$j.a" "$hA" $args
	same "f$j.l" "f$j.a" "$hA $args (fallback)"
done <"$tmp/raw.cases"
ok "$hA: $j plots the aggregate must not serve, as locally"

# 2. B's raw samples tampered with: a third inserted twice (on its shard;
# samples_by_time, the session row and the comms stay as pushed)
before=$(ch_q 2 "SELECT count() FROM strobe.samples_local WHERE host = '$hB'")
[ "$before" = "$n" ] || fail "$hB: $before samples on shard 2, want $n"
ch_q 2 "INSERT INTO strobe.samples_local SELECT * FROM strobe.samples_local WHERE host = '$hB' AND time_ns % 3 = 0"
after=$(ch_q 2 "SELECT count() FROM strobe.samples_local WHERE host = '$hB'")
[ "$after" -gt "$n" ] || fail "$hB: the tampering added no sample ($after)"
ok "$hB: $((after - n)) of its $n raw samples inserted again"

k=0
while read -r args; do
	k=$((k + 1))
	# shellcheck disable=SC2086
	plot "$k.b" "$hB" $args
	# shellcheck disable=SC2086
	plot "$k.br" "$hB" raw $args
	same "$k.l" "$k.b" "$hB (raw samples tampered with) $args: the aggregate was not read"
	! cmp -s "$tmp/$k.l.csv" "$tmp/$k.br.csv" ||
		fail "$hB $args: the raw plot does not see the tampered samples"
done <"$tmp/agg.cases"
ok "$hB: the $k plots the aggregate serves read it (as locally), the raw ones read the tampered samples"

j=0
while read -r args; do
	j=$((j + 1))
	# shellcheck disable=SC2086
	plot "f$j.b" "$hB" $args
	# shellcheck disable=SC2086
	plot "f$j.br" "$hB" raw $args
	same "f$j.b" "f$j.br" "$hB $args: a fallback that did not read the samples"
	! cmp -s "$tmp/f$j.l.csv" "$tmp/f$j.b.csv" ||
		fail "$hB $args: the fallback does not see the tampered samples"
done <"$tmp/raw.cases"
ok "$hB: the $j plots the aggregate must not serve read the (tampered) samples"
exit 0
