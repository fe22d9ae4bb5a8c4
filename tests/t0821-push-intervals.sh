#!/bin/sh
# t0821-push-intervals: strobed --push --push-interval 1 cuts a running
# session into intervals (schema 3, doc/FLEET.md "Pushing from strobed")
# on two real ClickHouse shards (tests/clickhouse.sh).
# Session A: its samples reach the fleet interval by interval while it
# runs (the count grows before 'strobe stop'; 'strobe report --source'
# shows it as still running); the host's shard is killed while it runs and
# comes back; after stop the fleet equals SQLite exactly (sample count,
# the sum of periods, per-symbol counts, the fleet report's CSV byte for
# byte, the fleet plot's from samples_by_time and from the samples
# byte for byte, lost), the intervals follow each other, and 'strobe push' of it
# says 'already pushed' (the same plan, the same content hash).
# Session B: strobed is killed with SIGKILL while it runs and restarted:
# the new strobed marks it interrupted and pushes the rest, exactly once.
# Then, the host's shard down, strobed --push --max-size 1K keeps every
# session (one log line, counted in 'strobe status') until they are
# pushed; once the shard is back, the next plan removes them.
. "$(dirname "$0")/lib.sh"
need_root
command -v sqlite3 >/dev/null || skip "sqlite3 is not installed"
. "$(dirname "$0")/clickhouse.sh"

ch_fleet
pw=$tmp/ch.pw
(umask 077; echo "$CH_PASSWORD" >"$pw")
# strobe push and report read it from the file too (strobed refuses both)
unset STROBE_CLICKHOUSE_PASSWORD
export STROBE_CLICKHOUSE_PASSWORD_FILE="$pw"
ok "two clickhouse-server shards up, schema applied"
v=$(ch_q 1 "SELECT max(version) FROM strobe.schema_version")
[ "$v" = 3 ] || fail "schema version $v after applying schema/clickhouse/*.sql, want 3"

host=$(hostname)
# the host's rows live on shard $shard (the one killed); queries and
# strobed use the other one, which stays up
shard=$(( $(ch_q 1 "SELECT cityHash64('$host') % 2") + 1 ))
qs=$((3 - shard))
url=$(ch_url "$qs")
start_daemon --push "$url" --push-interval 1 --push-password-file "$pw"

where() { echo "host = '$host' AND session = $1"; }
fleet_count() { ch_q "$qs" "SELECT count() FROM strobe.samples WHERE $(where "$1")"; }
local_count() { sqlq "$STROBE_DB" "SELECT count(*) FROM samples WHERE session_id = $1"; }
state() { sqlq "$STROBE_DB" "SELECT state FROM sessions WHERE id = $1"; }

# exact ID [whole]: the fleet holds session ID as SQLite does, once (whole:
# pushed after it stopped, no interval)
exact() {
	n=$(local_count "$1")
	i=0
	while [ "$(fleet_count "$1")" != "$n" ] ||
	      [ -z "$(ch_q "$qs" "SELECT 1 FROM strobe.sessions WHERE $(where "$1") AND batch = 0")" ]; do
		i=$((i + 1))
		# (the push thread's backoff after the outage: 60 s at most)
		[ $i -gt 400 ] && { tail -n 20 "$tmp/strobed.log"; "$STROBE" status; fail "session $1: $(fleet_count "$1") samples in the fleet after 80 s, want $n (or no session row)"; }
		sleep 0.2
	done
	sleep 1.5	# a few more rounds of the push thread: nothing more may come
	[ "$(fleet_count "$1")" = "$n" ] || fail "session $1: $(fleet_count "$1") samples in the fleet, want $n"
	lp=$(sqlq "$STROBE_DB" "SELECT sum(period) FROM samples WHERE session_id = $1")
	fp=$(ch_q "$qs" "SELECT sum(period) FROM strobe.samples WHERE $(where "$1")")
	[ "$lp" = "$fp" ] || fail "session $1: sum of periods $lp here, $fp in the fleet"
	ll=$(sqlq "$STROBE_DB" "SELECT coalesce(sum(count), 0) FROM lost WHERE session_id = $1")
	fl=$(ch_q "$qs" "SELECT sum(count) FROM strobe.lost WHERE $(where "$1")")
	[ "$ll" = "$fl" ] || fail "session $1: $ll lost here, $fl in the fleet"
	# no sample twice: (time, cpu, tid) is unique in a session here
	u=$(ch_q "$qs" "SELECT uniqExact(time_ns, cpu, tid) FROM strobe.samples WHERE $(where "$1")")
	lu=$(sqlq "$STROBE_DB" "SELECT count(*) FROM (SELECT DISTINCT time_ns, cpu, tid FROM samples WHERE session_id = $1)")
	[ "$u" = "$lu" ] || fail "session $1: $u distinct samples in the fleet, $lu here"
	ns=$(ch_q "$qs" "SELECT count() FROM strobe.sessions WHERE $(where "$1")")
	[ "$ns" = 1 ] || fail "session $1: $ns session rows in the fleet"
	# the intervals follow each other and end where the last part starts
	ch_q "$qs" "SELECT interval_no, first_row, last_row, first_batch, batches FROM strobe.intervals
		WHERE $(where "$1") ORDER BY interval_no" >"$tmp/iv"
	nb=$(ch_q "$qs" "SELECT batches FROM strobe.sessions WHERE $(where "$1")")
	python3 - "$tmp/iv" "$nb" "${2:-}" <<'PY' || fail "session $1: the intervals do not follow each other: $(cat "$tmp/iv")"
import sys
rows = [list(map(int, l.split("\t"))) for l in open(sys.argv[1]).read().splitlines()]
if sys.argv[3] == "whole":	# it never ran with the server up
    assert not rows, "intervals"
    sys.exit(0)
assert rows, "no interval"
for i, (k, lo, hi, fb, nb) in enumerate(rows):
    assert k == i + 1 and lo <= hi and nb >= 1
    if i:
        assert lo == rows[i - 1][2] + 1 and fb == rows[i - 1][3] + rows[i - 1][4]
    else:
        assert fb == 1
assert rows[-1][3] + rows[-1][4] <= int(sys.argv[2])
PY
	nbs=$(ch_q "$qs" "SELECT count() FROM (SELECT DISTINCT batch FROM strobe.samples WHERE $(where "$1")
		UNION ALL SELECT DISTINCT batch FROM strobe.binaries WHERE $(where "$1")
		UNION ALL SELECT DISTINCT batch FROM strobe.processes WHERE $(where "$1")
		UNION ALL SELECT DISTINCT batch FROM strobe.markers WHERE $(where "$1")
		UNION ALL SELECT DISTINCT batch FROM strobe.lost WHERE $(where "$1")
		UNION ALL SELECT DISTINCT batch FROM strobe.sessions WHERE $(where "$1"))")
	[ "$nbs" -le "$nb" ] || fail "session $1: $nbs batches in the fleet, the plan has $nb"
	# the fleet report is the local one, byte for byte
	"$STROBE" report --session "$1" --format csv --limit 0 >"$tmp/local.csv" 2>"$tmp/r.err" ||
		fail "report $1: $(cat "$tmp/r.err")"
	"$STROBE" report --source "$url" --host "$host" --session "$1" --format csv --limit 0 \
		>"$tmp/fleet.csv" 2>"$tmp/r.err" || fail "report --source $1: $(cat "$tmp/r.err")"
	cmp -s "$tmp/local.csv" "$tmp/fleet.csv" ||
		{ diff "$tmp/local.csv" "$tmp/fleet.csv" | head -20; fail "session $1: the fleet report differs from the local one"; }
	# the fleet plot too, summed from the intervals' samples_by_time
	# batches (--bucket 100) and from the samples (STROBE_FLEET_RAW=1)
	"$STROBE" plot --session "$1" --event samples --bucket 100 --by cpu -o "$tmp/lp.csv" \
		2>"$tmp/r.err" || fail "plot $1: $(cat "$tmp/r.err")"
	for raw in 0 1; do
		STROBE_FLEET_RAW=$raw "$STROBE" plot --source "$url" --host "$host" --session "$1" \
			--event samples --bucket 100 --by cpu -o "$tmp/fp$raw.csv" 2>"$tmp/r.err" ||
			fail "plot --source $1 (raw $raw): $(cat "$tmp/r.err")"
		cmp -s "$tmp/lp.csv" "$tmp/fp$raw.csv" ||
			{ diff "$tmp/lp.csv" "$tmp/fp$raw.csv" | head -20; fail "session $1: the fleet plot (STROBE_FLEET_RAW=$raw) differs from the local one"; }
	done
	# a manual push follows the same plan: nothing to send
	"$STROBE" push --to "$url" --session "$1" >"$tmp/push.out" 2>"$tmp/push.err" ||
		fail "strobe push --session $1: $(cat "$tmp/push.err")"
	grep -q "session $1 of host .*: already pushed" "$tmp/push.out" ||
		fail "strobe push --session $1 did not find it pushed: $(cat "$tmp/push.out")"
	ok "session $1 in the fleet exactly: $n samples, sum of periods $lp, $ll lost, $(wc -l <"$tmp/iv") intervals + the last part ($nb batches), report and plot (aggregate and raw) CSV identical, strobe push: already pushed"
}

# --- session A: intervals while it runs, a shard down meanwhile
"$STROBE" start --sample-event cpu-clock -F 99 --name ivA >"$tmp/idA" 2>"$tmp/start.err" ||
	fail "start: $(cat "$tmp/start.err")"
a=$(cat "$tmp/idA")
"$WL/split603010" 14 &
wl=$!
# wait_grow ID N: until the fleet has more than N samples of ID (20 s)
wait_grow() {
	i=0
	while [ "$(fleet_count "$1")" -le "$2" ]; do
		i=$((i + 1))
		[ $i -gt 100 ] && { tail -n 20 "$tmp/strobed.log"; fail "session $1: no more than $2 samples in the fleet after 20 s while it runs"; }
		sleep 0.2
	done
	fleet_count "$1"
}
c1=$(wait_grow "$a" 0)
[ "$(state "$a")" = running ] || fail "session $a is $(state "$a") already"
c2=$(wait_grow "$a" "$c1")
[ "$(state "$a")" = running ] || fail "session $a is $(state "$a") already"
k=$(ch_q "$qs" "SELECT count() FROM strobe.intervals WHERE $(where "$a")")
[ "$k" -ge 2 ] || fail "session $a: $k intervals in the fleet while running"
[ -z "$(ch_q "$qs" "SELECT 1 FROM strobe.sessions WHERE $(where "$a")")" ] ||
	fail "session $a has a stopped session row while it runs"
ok "session $a reaches the fleet while it runs: $c1, then $c2 samples, $k intervals"
"$STROBE" report --source "$url" --host "$host" --session "$a" --format text --limit 5 \
	>"$tmp/run.txt" 2>"$tmp/r.err" || fail "report --source of a running session: $(cat "$tmp/r.err")"
grep -q "session $a is still running" "$tmp/run.txt" ||
	fail "the fleet report of running session $a does not say it is running: $(cat "$tmp/run.txt")"
grep -q "split603010" "$tmp/run.txt" || fail "the fleet report of running session $a names no workload symbol: $(cat "$tmp/run.txt")"
ok "strobe report --source of running session $a: $(grep 'still running' "$tmp/run.txt" | head -1)"
# the fleet timeline of the running session: its samples pushed so far
n0=$(fleet_count "$a")
"$STROBE" plot --source "$url" --host "$host" --session "$a" --event samples -o "$tmp/run.csv" \
	2>"$tmp/p.err" || fail "plot --source of a running session: $(cat "$tmp/p.err")"
n1=$(fleet_count "$a")
np=$(python3 -c 'import csv,sys; r=list(csv.DictReader(open(sys.argv[1]))); k=[c for c in r[0] if c not in ("from_s","to_s","from_ns","to_ns","wall")][-1]; print(int(sum(float(x[k] or 0) for x in r)))' "$tmp/run.csv") ||
	fail "plot --source of a running session: no CSV: $(head -3 "$tmp/run.csv")"
[ "$np" -ge "$n0" ] && [ "$np" -le "$n1" ] ||
	fail "plot --source of running session $a sums $np samples, the fleet had $n0..$n1"
ok "strobe plot --source of running session $a: $np samples, as pushed so far"
# from the intervals' samples_by_time batches (--bucket 100): at most what
# the samples held after (an interval's aggregate batches follow its samples)
"$STROBE" plot --source "$url" --host "$host" --session "$a" --event samples --bucket 100 \
	-o "$tmp/runagg.csv" 2>"$tmp/p.err" || fail "plot --source --bucket 100 of a running session: $(cat "$tmp/p.err")"
n2=$(fleet_count "$a")
na=$(python3 -c 'import csv,sys; print(sum(int(x["samples"] or 0) for x in csv.DictReader(open(sys.argv[1]))))' "$tmp/runagg.csv") ||
	fail "plot --source --bucket 100 of a running session: no CSV: $(head -3 "$tmp/runagg.csv")"
[ "$na" -gt 0 ] && [ "$na" -le "$n2" ] ||
	fail "plot --source --bucket 100 of running session $a sums $na samples, the fleet had $n2"
ok "strobe plot --source --bucket 100 of running session $a (samples_by_time): $na samples"

c3=$(fleet_count "$a")
ch_kill "$shard"
sleep 2.5
ch_start "$shard"
c4=$(wait_grow "$a" "$c3")
[ "$(state "$a")" = running ] || fail "session $a is $(state "$a") already"
ok "the host's shard killed while session $a runs and back: $c3, then $c4 samples in the fleet"
wait "$wl" || fail "split603010"
"$STROBE" stop >/dev/null 2>"$tmp/stop.err" || fail "stop: $(cat "$tmp/stop.err")"
exact "$a"
grep -q "push to .* failed: " "$tmp/strobed.log" || fail "no outage line in the log"

# --- session B: strobed killed with SIGKILL while it runs
"$STROBE" start --sample-event cpu-clock -F 99 --name ivB >"$tmp/idB" 2>"$tmp/start.err" ||
	fail "start B: $(cat "$tmp/start.err")"
b=$(cat "$tmp/idB")
"$WL/split603010" 6 &
wl=$!
c1=$(wait_grow "$b" 0)
c2=$(wait_grow "$b" "$c1")
kill -9 "$daemon_pid"
wait "$daemon_pid" 2>/dev/null
ok "strobed killed (SIGKILL) while session $b runs, $c2 samples of it in the fleet"
wait "$wl"
cp "$tmp/strobed.log" "$tmp/strobed1.log"
start_daemon --push "$url" --push-interval 1 --push-password-file "$pw"
[ "$(state "$b")" = interrupted ] || fail "session $b is $(state "$b") after the restart, want interrupted"
exact "$b"

# --- retention (--max-size) keeps what --push has not pushed yet
stop_daemon || fail "strobed exited $?"
ch_kill "$shard"
start_daemon --push "$url" --push-interval 1 --push-password-file "$pw" --max-size 1K
"$STROBE" start --sample-event cpu-clock -F 99 --name ivC >"$tmp/idC" 2>"$tmp/start.err" ||
	fail "start C: $(cat "$tmp/start.err")"
c=$(cat "$tmp/idC")
"$WL/split603010" 1 || fail "split603010"
"$STROBE" stop >/dev/null 2>"$tmp/stop.err" || fail "stop C: $(cat "$tmp/stop.err")"
i=0
until grep -q "retention: keeping .* that --push has not pushed" "$tmp/strobed.log"; do
	i=$((i + 1))
	[ $i -gt 100 ] && fail "no retention hold line in the log: $(cat "$tmp/strobed.log")"
	sleep 0.2
done
"$STROBE" status >"$tmp/st" || fail "status"
grep -q "^push to .*kept from retention until pushed" "$tmp/st" || fail "status does not count the sessions kept: $(cat "$tmp/st")"
sleep 1
for id in "$a" "$b" "$c"; do
	[ "$(state "$id")" = done ] || [ "$(state "$id")" = interrupted ] ||
		fail "session $id is '$(state "$id")' while the server is down, under --max-size 1K"
done
[ "$(grep -c "retention: keeping" "$tmp/strobed.log")" = 1 ] || fail "the hold is logged more than once: $(grep 'retention: keeping' "$tmp/strobed.log")"
ok "server down, --max-size 1K: sessions $a, $b, $c kept: $(grep 'retention: keeping' "$tmp/strobed.log" | cut -d' ' -f4-)"
ok "status: $(grep '^push to' "$tmp/st")"
ch_start "$shard"
exact "$c" whole
# the next plan (at the end of a session) removes what is pushed now
"$STROBE" start --sample-event cpu-clock -F 99 --name ivD >"$tmp/idD" 2>"$tmp/start.err" ||
	fail "start D: $(cat "$tmp/start.err")"
d=$(cat "$tmp/idD")
sleep 2
"$STROBE" stop >/dev/null 2>"$tmp/stop.err" || fail "stop D: $(cat "$tmp/stop.err")"
i=0
until [ "$(sqlq "$STROBE_DB" "SELECT count(*) FROM sessions WHERE id IN ($a, $b, $c)")" = 0 ]; do
	i=$((i + 1))
	[ $i -gt 150 ] && fail "--max-size 1K did not remove the pushed sessions $a, $b, $c: $(sqlq "$STROBE_DB" "SELECT id, state FROM sessions") $(tail -n 5 "$tmp/strobed.log")"
	sleep 0.2
done
[ "$(sqlq "$STROBE_DB" "SELECT count(*) FROM sessions WHERE id = $d")" = 1 ] || fail "session $d is gone"
ok "once pushed, --max-size 1K removed sessions $a, $b, $c (session $d stays)"
stop_daemon || fail "strobed exited $?"
exit 0
