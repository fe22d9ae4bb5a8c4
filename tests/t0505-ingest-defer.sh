#!/bin/sh
# t0505-ingest-defer: strobed --ingest-defer against a private strobed, a
# cpu-clock session at -F 1000 while bench/spin keeps every CPU busy.
# 1. busy (the default): strobe status says ingest waits for an idle CPU,
#    for ever longer, and meanwhile nothing is stored while the lag grows
#    (any pass would have reset the wait); once the CPUs are free again
#    ingest catches up before any stop, and the stop stores every sample
#    taken, none lost.
# 2. --ingest-defer 1: on the same busy CPUs ingest stores while the
#    session runs, and never waits much longer than a second.
# 3. --ingest-defer off: ingest stores while the session runs and never
#    waits for an idle CPU.
# 4. bad values: one line, exit 2.
. "$(dirname "$0")/lib.sh"
need_root
F=1000
start() {
	"$STROBE" start --sample-event cpu-clock -F $F >"$tmp/id" 2>"$tmp/start.err" ||
		fail "start: $(cat "$tmp/start.err")"
}
# stop_check: strobe stop stores every sample the rings gave, none lost
stop_check() {
	id=$(cat "$tmp/id")
	"$STROBE" stop >"$tmp/stop" 2>&1 || fail "stop: $(cat "$tmp/stop")"
	n=$(sqlq "$STROBE_DB" "SELECT count(*) FROM samples WHERE session_id = $id")
	t=$(sqlq "$STROBE_DB" "SELECT samples FROM sessions WHERE id = $id")
	l=$(sqlq "$STROBE_DB" "SELECT lost FROM sessions WHERE id = $id")
	[ "$n" = "$t" ] && [ "$n" -gt 0 ] || fail "session $id: $n sample rows, $t counted: $(cat "$tmp/stop")"
	[ "$l" = 0 ] || fail "session $id: $l lost: $(cat "$tmp/stop")"
}

# --- 1. busy: ingest waits while no CPU is idle
start_daemon
start
spins_start
wait_ingest_waits s1
sleep 1.5
status_save s2
w1=$(status_waited s1) w2=$(status_waited s2) n1=$(status_stored s1) n2=$(status_stored s2)
set -- $(status_behind s1); b1=$1
set -- $(status_behind s2); b2=$1 lag2=$2
[ -n "$w2" ] || fail "ingest no longer waits with every CPU busy: $(cat "$tmp/s2")"
# the wait restarts with every pass: grown by the time between, none came
python3 -c "import sys; sys.exit(not float('$w2') - float('$w1') >= 1.3)" ||
	fail "the wait went from $w1 s to $w2 s in 1.5 s: ingest ran meanwhile"
[ "$n1" = "$n2" ] || fail "stored $n1, then $n2 samples while ingest waited"
[ "$b2" -gt "$b1" ] || fail "$b1, then $b2 records behind while ingest waited"
ok "every CPU busy: ingest waits ($w1 s, then $w2 s), $n1 samples stored throughout, $b1 then $b2 records behind"
spins_stop
i=0
while status_save s3; ! grep -q '^ingest: 0 records behind' "$tmp/s3"; do
	i=$((i + 1))
	[ $i -gt 300 ] && fail "ingest did not catch up in 30 s on idle CPUs: $(cat "$tmp/s3")"
	sleep 0.1
done
[ -z "$(status_waited s3)" ] || fail "still waiting once caught up: $(cat "$tmp/s3")"
[ "$(status_stored s3)" -gt "$n2" ] || fail "caught up, yet $(status_stored s3) samples stored (was $n2)"
ok "CPUs free again: ingest caught up while the session runs ($(status_stored s3) samples stored)"
stop_check
ok "stop: $n samples stored, the count taken, 0 lost"
stop_daemon

# --- 2. --ingest-defer 1: waits of at most about a second
start_daemon --ingest-defer 1
start
spins_start
sleep 1
status_save b1
# 3 s of looks: a wait longer than 2.5 s (a second, and the time a nice-19
# thread on busy CPUs takes to look again) would be the limit not kept;
# how far behind ingest is depends on how fast it runs there, not on it
: >"$tmp/waits"
k=0
while [ $k -lt 30 ]; do
	status_save bw
	status_waited bw >>"$tmp/waits"	# one process per look: the CPUs are busy
	k=$((k + 1))
	sleep 0.1
done
maxw=$(awk '$1 + 0 > m { m = $1 + 0 } END { print m + 0 }' "$tmp/waits")
status_save b2
spins_stop
set -- $(status_behind b2); lag=$2
[ "$(status_stored b2)" -gt "$(status_stored b1)" ] ||
	fail "--ingest-defer 1: $(status_stored b1), then $(status_stored b2) samples stored on busy CPUs"
awk -v w="$maxw" 'BEGIN { exit !(w < 2.5) }' ||
	fail "--ingest-defer 1: ingest waited $maxw s for an idle CPU"
ok "--ingest-defer 1 on busy CPUs: $(status_stored b1), then $(status_stored b2) samples stored, waits of at most $maxw s, $lag s behind at the end"
stop_check
stop_daemon

# --- 3. off: ingest runs whenever records wait
start_daemon --ingest-defer off
start
spins_start
sleep 1
status_save o1
# at nice 19 on busy CPUs a pass may take a while: up to 20 s
i=0
while status_save o2; [ "$(status_stored o2)" -le "$(status_stored o1)" ]; do
	[ -z "$(status_waited o2)" ] || fail "--ingest-defer off, yet waiting: $(cat "$tmp/o2")"
	i=$((i + 1))
	[ $i -gt 200 ] && fail "--ingest-defer off: $(status_stored o1), then $(status_stored o2) samples stored on busy CPUs in 20 s"
	sleep 0.1
done
spins_stop
[ -z "$(status_waited o1)$(status_waited o2)" ] || fail "--ingest-defer off, yet waiting: $(cat "$tmp/o2")"
ok "--ingest-defer off on busy CPUs: $(status_stored o1), then $(status_stored o2) samples stored, no wait"
stop_check
stop_daemon

# --- 4. bad values
for v in 0 86401 soon -1 1.5 ""; do
	"$STROBED" --foreground --db "$tmp/bad.db" --socket "$tmp/bad.sock" --ingest-defer "$v" \
		>"$tmp/out" 2>"$tmp/err" </dev/null
	rc=$?
	[ "$rc" = 2 ] || fail "--ingest-defer '$v' exited $rc, not 2: $(cat "$tmp/err")"
	[ "$(wc -l <"$tmp/err")" = 1 ] && grep -q "^strobed: bad --ingest-defer '$v': give busy" "$tmp/err" ||
		fail "--ingest-defer '$v': $(cat "$tmp/err")"
done
ok "bad --ingest-defer values: one line each, exit 2 ($(cat "$tmp/err"))"
