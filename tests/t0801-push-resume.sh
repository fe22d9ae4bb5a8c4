#!/bin/sh
# t0801-push-resume: a push cut by a shard killed with SIGKILL resumes
# without loss or duplicates.  A real session is pushed in batches of 5
# rows (STROBE_PUSH_BATCH_ROWS, so that it takes about a thousand INSERTs)
# to the Distributed tables of instance 1; once some of its samples are on
# shard 2 (the host's shard), shard 2 is killed -9.  The push must fail
# with one line on stderr and exit 1.  Shard 2 is restarted and the
# push run again with the default batch size: it resumes with the batch
# plan the session was begun with, and the fleet then holds exactly the
# local samples (count, counter sums, time sum), every batch once with at
# most 5 rows, and a third push sends nothing.
. "$(dirname "$0")/lib.sh"
need_root
command -v sqlite3 >/dev/null || skip "sqlite3 is not installed"
. "$(dirname "$0")/clickhouse.sh"

ch_fleet
h=
for c in alpha bravo charlie delta echo foxtrot golf hotel; do
	[ "$(ch_q 1 "SELECT cityHash64('$c') % 2")" = 1 ] && { h=$c; break; }
done
[ -n "$h" ] || fail "no host name for shard 2"

"$STROBE" record --db "$tmp/a.db" --sample-event cpu-clock -F 2000 -e page-faults -- \
	"$WL/split603010" 1 >/dev/null 2>"$tmp/rec.err" || fail "record: $(cat "$tmp/rec.err")"
n=$(sqlq "$tmp/a.db" "SELECT count(*) FROM samples WHERE session_id = 1")
[ "$n" -gt 1000 ] || fail "only $n samples recorded"
ok "a session of $n samples, host $h (shard 2)"

STROBE_PUSH_BATCH_ROWS=5 "$STROBE" push --db "$tmp/a.db" --to "$url" --host "$h" \
	>"$tmp/push1.out" 2>"$tmp/push1.err" &
pid=$!
port2=$(ch_http_port 2)
i=0
while :; do
	c=$(curl -s -m 2 -u "default:$CH_PASSWORD" --data-binary \
		"SELECT count() FROM strobe.samples_local" "http://127.0.0.1:$port2/")
	[ -n "$c" ] && [ "$c" -gt 0 ] 2>/dev/null && break
	kill -0 "$pid" 2>/dev/null || fail "the push ended before it sent samples: $(cat "$tmp/push1.out" "$tmp/push1.err")"
	i=$((i + 1))
	[ $i -gt 600 ] && fail "no samples on shard 2 after 30 s"
	sleep 0.05
done
ch_kill 2
wait "$pid"
rc=$?
[ "$rc" = 1 ] || fail "the push cut by the kill exited $rc, not 1: $(cat "$tmp/push1.err")"
[ "$(wc -l <"$tmp/push1.err")" = 1 ] || fail "not one line on stderr: $(cat "$tmp/push1.err")"
grep -q "^strobe push: session 1, batch [0-9]* of [0-9]*: " "$tmp/push1.err" ||
	fail "the error does not name the batch: $(cat "$tmp/push1.err")"
ok "killed shard 2 at $c samples: push failed in one line: $(cat "$tmp/push1.err")"

ch_start 2
# the restarted shard's own Distributed tables work (they name database
# strobe; with currentDatabase() a restarted 18.16 looks in default)
ch_q 2 "SELECT count() FROM strobe.samples" >/dev/null
ok "the restarted shard answers through its Distributed tables"
got=$(ch_q 1 "SELECT count() FROM strobe.samples WHERE host = '$h'")
[ "$got" -lt "$n" ] || fail "all $n samples were there before the resume: the kill came too late"
"$STROBE" push --db "$tmp/a.db" --to "$url" --host "$h" >"$tmp/push2.out" 2>"$tmp/push2.err" ||
	fail "the resumed push failed: $(cat "$tmp/push2.err")"
grep -q "^session 1 of host $h: sent " "$tmp/push2.out" || fail "resume said: $(cat "$tmp/push2.out")"
ok "resumed from $got samples: $(head -n 1 "$tmp/push2.out")"

l=$(sqlq "$tmp/a.db" "SELECT count(*), sum(c0), sum(time_ns), sum(tid) FROM samples WHERE session_id = 1" | tr '|' ' ')
f=$(ch_q 1 "SELECT count(), sum(c0), sum(time_ns), sum(tid) FROM strobe.samples WHERE host = '$h' AND session = 1" | tr '\t' ' ')
[ "$l" = "$f" ] || fail "SQLite has (count, faults, time sum, tid sum) $l, the fleet $f"
big=$(ch_q 1 "SELECT count() FROM (SELECT batch, count() AS c FROM strobe.samples WHERE host = '$h' GROUP BY batch HAVING c > 5)")
[ "$big" = 0 ] || fail "$big batches hold more than 5 rows: duplicates"
np=$(sqlite3 "$tmp/a.db" "SELECT count(*) FROM processes WHERE session_id = 1")
fp=$(ch_q 1 "SELECT count() FROM strobe.processes WHERE host = '$h'")
[ "$np" = "$fp" ] || fail "$np processes in SQLite, $fp in the fleet"
s=$(ch_q 1 "SELECT count() FROM strobe.sessions WHERE host = '$h'")
[ "$s" = 1 ] || fail "$s session rows for host $h"
nb=$(ch_q 1 "SELECT batches FROM strobe.sessions WHERE host = '$h'")
have=$(ch_q 1 "SELECT count() FROM (SELECT batch FROM strobe.sessions WHERE host = '$h' UNION ALL
	SELECT DISTINCT batch FROM strobe.processes WHERE host = '$h' UNION ALL
	SELECT DISTINCT batch FROM strobe.markers WHERE host = '$h' UNION ALL
	SELECT DISTINCT batch FROM strobe.lost WHERE host = '$h' UNION ALL
	SELECT DISTINCT batch FROM strobe.samples WHERE host = '$h' UNION ALL
	SELECT DISTINCT batch FROM strobe.binaries WHERE host = '$h' UNION ALL
	SELECT DISTINCT batch FROM strobe.samples_by_loc WHERE host = '$h' UNION ALL
	SELECT DISTINCT batch FROM strobe.samples_by_time WHERE host = '$h')")
[ "$have" = "$nb" ] || fail "$have distinct batches in the fleet, the session has $nb"
ok "no loss, no duplicates: $f (count, faults, time sum, tid sum), $nb batches once each"

# the aggregates (schema 2) were pushed as batches of the same plan: their
# sums are the samples' exactly, per location and per 100 ms
for t in samples_by_loc samples_by_time; do
	a=$(ch_q 1 "SELECT sum(n), sum(c0), sum(period) FROM strobe.$t WHERE host = '$h' AND session = 1" | tr '\t' ' ')
	r=$(ch_q 1 "SELECT count(), sum(c0), sum(period) FROM strobe.samples WHERE host = '$h' AND session = 1" | tr '\t' ' ')
	[ "$a" = "$r" ] || fail "$t sums (n, faults, period) $a, the samples $r"
done
sqlq "$tmp/a.db" "SELECT pid, ifnull(binary_id, 0), ifnull(offset, 0), count(*), sum(c0), sum(period) FROM samples WHERE session_id = 1 GROUP BY 1, 2, 3" |
	tr '|' ' ' | sort >"$tmp/loc.l"
ch_q 1 "SELECT pid, binary_id, toInt64(offset) AS o, sum(n), sum(c0), sum(period) FROM strobe.samples_by_loc WHERE host = '$h' AND session = 1 GROUP BY pid, binary_id, o" |
	tr '\t' ' ' | sort >"$tmp/loc.f"
[ -s "$tmp/loc.l" ] || fail "no locations in SQLite"
cmp -s "$tmp/loc.l" "$tmp/loc.f" || fail "samples_by_loc per (pid, binary, offset) differs from SQLite: $(diff "$tmp/loc.l" "$tmp/loc.f" | head -5)"
# buckets of 100 ms since the session's start, rounded down
l=$(sqlq "$tmp/a.db" "SELECT count(*) FROM (SELECT 1 FROM samples, sessions s WHERE session_id = 1 AND s.id = 1 GROUP BY (time_ns - s.start_ns) / 100000000 - ((time_ns - s.start_ns) % 100000000 < 0), cpu, pid, ifnull(binary_id, 0))")
f=$(ch_q 1 "SELECT count() FROM (SELECT 1 FROM strobe.samples_by_time WHERE host = '$h' AND session = 1 GROUP BY bucket_ns, cpu, pid, binary_id)")
[ "$l" = "$f" ] || fail "SQLite has $l (100 ms, cpu, pid, binary) groups, samples_by_time $f"
ok "aggregates exact after the resume: sum(n) = count() per location ($(echo "$f") time buckets)"

"$STROBE" push --db "$tmp/a.db" --to "$url" --host "$h" >"$tmp/push3.out" 2>"$tmp/push3.err" ||
	fail "third push: $(cat "$tmp/push3.err")"
grep -q "^session 1 of host $h: already pushed" "$tmp/push3.out" || fail "third push said: $(cat "$tmp/push3.out")"
ok "a third push sends nothing"

# the same cut among the aggregate batches: the session pushed as another
# host of shard 2, shard 2 killed once its first samples_by_loc rows are
# there; the resumed push completes them exactly
h2=
for c in india juliet kilo lima mike november oscar papa; do
	[ "$(ch_q 1 "SELECT cityHash64('$c') % 2")" = 1 ] && { h2=$c; break; }
done
[ -n "$h2" ] || fail "no second host name for shard 2"
STROBE_PUSH_BATCH_ROWS=5 "$STROBE" push --db "$tmp/a.db" --to "$url" --host "$h2" \
	>"$tmp/push4.out" 2>"$tmp/push4.err" &
pid=$!
i=0
while :; do
	c=$(curl -s -m 2 -u "default:$CH_PASSWORD" --data-binary \
		"SELECT count() FROM strobe.samples_by_loc_local WHERE host = '$h2'" "http://127.0.0.1:$port2/")
	[ -n "$c" ] && [ "$c" -gt 0 ] 2>/dev/null && break
	kill -0 "$pid" 2>/dev/null || fail "the push of $h2 ended before it sent aggregates: $(cat "$tmp/push4.out" "$tmp/push4.err")"
	i=$((i + 1))
	[ $i -gt 3000 ] && fail "no aggregate rows on shard 2 after 150 s"
	sleep 0.05
done
ch_kill 2
wait "$pid"
rc=$?
[ "$rc" = 1 ] || fail "the push of $h2 cut by the kill exited $rc, not 1: $(cat "$tmp/push4.err")"
ch_start 2
got=$(ch_q 1 "SELECT count() FROM strobe.samples_by_loc WHERE host = '$h2'")
all=$(ch_q 1 "SELECT count() FROM strobe.samples_by_loc WHERE host = '$h'")
[ "$got" -lt "$all" ] || fail "all $all aggregate rows were there before the resume: the kill came too late"
"$STROBE" push --db "$tmp/a.db" --to "$url" --host "$h2" >"$tmp/push5.out" 2>"$tmp/push5.err" ||
	fail "the resumed push of $h2 failed: $(cat "$tmp/push5.err")"
for t in samples_by_loc samples_by_time; do
	a=$(ch_q 1 "SELECT sum(n), sum(c0), sum(period), count() FROM strobe.$t WHERE host = '$h2'" | tr '\t' ' ')
	b=$(ch_q 1 "SELECT sum(n), sum(c0), sum(period), count() FROM strobe.$t WHERE host = '$h'" | tr '\t' ' ')
	[ "$a" = "$b" ] || fail "$t of $h2 (cut among its batches) has (n, faults, period, rows) $a, of $h $b"
done
ok "cut at $got of $all samples_by_loc rows and resumed: both aggregates as the uncut push's"
exit 0
