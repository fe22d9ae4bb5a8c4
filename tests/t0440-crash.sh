#!/bin/sh
# t0440-crash: strobed killed with SIGKILL in the middle of a session.
# A session counting page-faults runs over the 60/30/10 workload; once a
# good share of the workload's samples is committed, strobed gets SIGKILL
# while the workload still runs.  What was committed stays readable (the
# raw rows, and a report of the session as it was).  The next strobed marks
# the session 'interrupted' before it answers (sqlite3, 'strobe sessions',
# the report's header and note), and its histogram (sample_agg), per-CPU
# statistics (session_cpus) and totals (sessions.samples, first/last
# sample, lost, end) equal independent SQL counts over the raw rows; the
# report from the histogram equals the report from the raw rows (--from 0)
# and gives the workload all its stored samples and page faults.
# A second strobed on the same database (another socket) is refused in one
# line naming the first one's pid, while the first runs, and leaves the
# database, its WAL and -shm byte for byte and mtime for mtime as they were.
. "$(dirname "$0")/lib.sh"
need_root
command -v sqlite3 >/dev/null || skip "sqlite3 is not installed"

q() { sqlq -readonly "$STROBE_DB" "$@"; }

# ingest commits as records come, busy CPUs or not (the default waits for
# an idle CPU, t0505): the kill must find committed rows and a spool
start_daemon --ingest-defer off
"$STROBE" start --sample-event cpu-clock -F 1000 -e page-faults --name crashy >"$tmp/id" \
	2>"$tmp/err" || fail "start: $(cat "$tmp/err")"
id=$(cat "$tmp/id")
"$WL/split603010" 30 &
wpid=$!
# the workload's samples as they are committed (every drain, 100 ms)
i=0
while [ "$(q "SELECT count(*) FROM samples WHERE session_id=$id AND pid=$wpid")" -lt 600 ]; do
	i=$((i + 1))
	[ $i -gt 400 ] && fail "the workload's samples did not reach the database in 20 s"
	sleep 0.05
done
kill -KILL "$daemon_pid"
wait "$daemon_pid" 2>/dev/null
daemon_pid=
kill -0 "$wpid" 2>/dev/null || fail "the workload ended before strobed was killed"
kill "$wpid"
wait "$wpid" 2>/dev/null

# what was committed stays readable, as the session it was
[ "$(q "SELECT state FROM sessions WHERE id=$id")" = running ] ||
	fail "session $id is $(q "SELECT state FROM sessions WHERE id=$id") after SIGKILL, not running"
raw=$(q "SELECT count(*) FROM samples WHERE session_id=$id")
[ "$raw" -gt 0 ] || fail "no sample of session $id was kept"
[ "$(q "SELECT count(*) FROM sample_agg WHERE session_id=$id")" = 0 ] ||
	fail "the killed session already has a histogram: nothing to rebuild"
"$STROBE" report --session "$id" --pid "$wpid" --format csv >"$tmp/before.csv" 2>"$tmp/err" ||
	fail "report of the killed session: $(cat "$tmp/err")"
ok "SIGKILL mid-session: $raw committed samples readable"

# the next strobed: interrupted at once, aggregates rebuilt from the rows
start_daemon
state=$(q "SELECT state FROM sessions WHERE id=$id")
[ "$state" = interrupted ] || fail "after the restart session $id is '$state', not 'interrupted'"
grep -q "session $id was interrupted" "$tmp/strobed.log" ||
	fail "strobed did not log the interrupted session: $(cat "$tmp/strobed.log")"
[ "$(q "SELECT count(*) FROM samples WHERE session_id=$id")" = "$raw" ] ||
	fail "the restart changed the stored samples"
"$STROBE" sessions --format csv >"$tmp/s.csv" || fail "sessions"
[ "$(csv_get "$tmp/s.csv" id "$id" state)" = interrupted ] ||
	fail "strobe sessions does not show it interrupted: $(cat "$tmp/s.csv")"
[ -n "$(csv_get "$tmp/s.csv" id "$id" duration_s)" ] || fail "no duration: $(cat "$tmp/s.csv")"
"$STROBE" report --session "$id" >"$tmp/r.txt" 2>&1 || fail "report: $(cat "$tmp/r.txt")"
grep -q "^# session $id \"crashy\" (interrupted)" "$tmp/r.txt" || fail "report header: $(head -n 3 "$tmp/r.txt")"
grep -q "^# note: session $id was interrupted" "$tmp/r.txt" || fail "report note: $(head -n 5 "$tmp/r.txt")"

# every aggregate against an independent count over the raw rows (the
# losses include kind 'spool': samples strobed held in its spool, never
# stored, which a loaded machine leaves when ingest lags at the kill)
same() {	# WHAT SQL1 SQL2: both give the same rows
	q "$2" >"$tmp/a" && q "$3" >"$tmp/b" || fail "$1: sqlite3 failed"
	[ -s "$tmp/a" ] || fail "$1: no rows"
	cmp -s "$tmp/a" "$tmp/b" || fail "$1 differ: $(diff "$tmp/a" "$tmp/b" | head -n 6)"
}
same "histogram" \
	"SELECT binary_id,offset,pid,comm_id,flags&15,count(*),sum(c0) FROM samples
	 WHERE session_id=$id GROUP BY 1,2,3,4,5 ORDER BY 1,2,3,4,5" \
	"SELECT binary_id,offset,pid,comm_id,flags,samples,c0 FROM sample_agg
	 WHERE session_id=$id ORDER BY 1,2,3,4,5"
[ "$(q "SELECT count(*) FROM sample_agg WHERE session_id=$id AND c1 IS NOT NULL")" = 0 ] ||
	fail "counter columns beyond the session's one event are not NULL"
same "per-CPU samples and lost" \
	"SELECT c.cpu, (SELECT count(*) FROM samples s WHERE s.session_id=$id AND s.cpu=c.cpu),
	 (SELECT coalesce(sum(count),0) FROM lost l WHERE l.session_id=$id AND l.cpu=c.cpu
	  AND kind IN ('ring','samples','spool'))
	 FROM (SELECT DISTINCT cpu FROM session_cpus WHERE session_id=$id) c ORDER BY 1" \
	"SELECT cpu,samples,lost FROM session_cpus WHERE session_id=$id ORDER BY cpu"
[ "$(q "SELECT count(*) FROM session_cpus WHERE session_id=$id")" -ge \
  "$(q "SELECT nr_cpus FROM sessions WHERE id=$id")" ] || fail "not every CPU has a session_cpus row"
same "session totals" \
	"SELECT count(*),min(rowid),max(rowid),
	 (SELECT coalesce(sum(count),0) FROM lost WHERE session_id=$id AND kind IN ('ring','samples','spool')),
	 (SELECT count(*) FROM lost WHERE session_id=$id AND kind='throttle')
	 FROM samples WHERE session_id=$id" \
	"SELECT samples,first_sample,last_sample,lost,throttled FROM sessions WHERE id=$id"
[ "$(q "SELECT end_ns - start_ns = duration_ns AND end_ns >= (SELECT max(time_ns) FROM samples
	WHERE session_id=$id) FROM sessions WHERE id=$id")" = 1 ] || fail "end_ns/duration_ns"

# the report from the histogram = the report from the raw rows = the rows
"$STROBE" report --session "$id" --pid "$wpid" --format csv >"$tmp/agg.csv" || fail "report"
"$STROBE" report --session "$id" --pid "$wpid" --from 0 --format csv >"$tmp/raw.csv" ||
	fail "report --from 0"
cmp -s "$tmp/agg.csv" "$tmp/raw.csv" ||
	fail "histogram and raw reports differ: $(diff "$tmp/agg.csv" "$tmp/raw.csv" | head -n 6)"
cmp -s "$tmp/agg.csv" "$tmp/before.csv" ||
	fail "the report changed with the restart: $(diff "$tmp/before.csv" "$tmp/agg.csv" | head -n 6)"
python3 - "$tmp/agg.csv" "$(q "SELECT count(*) FROM samples WHERE session_id=$id AND pid=$wpid")" \
	"$(q "SELECT coalesce(sum(c0),0) FROM samples WHERE session_id=$id AND pid=$wpid")" <<'PY' ||
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
n, pf = sum(int(r["samples"]) for r in rows), sum(int(r["page-faults"]) for r in rows)
assert (n, pf) == (int(sys.argv[2]), int(sys.argv[3])), f"report {n} samples {pf} faults, rows {sys.argv[2:]}"
w = {r["symbol"]: int(r["samples"]) for r in rows}
assert w.get("work60", 0) > w.get("work30", 0) > w.get("work10", 0) > 0, f"60/30/10 order: {w}"
PY
	fail "the workload's report does not add up to its rows"
ok "restart: session $id interrupted, its aggregates equal the raw rows"

# a second strobed on the same database is refused before it touches it
st() { for f in "$STROBE_DB" "$STROBE_DB-wal" "$STROBE_DB-shm"; do
	printf '%s %s\n' "$(stat -c '%s %Y.%y' "$f")" "$(sha256sum <"$f")"; done; }
st >"$tmp/st0"
"$STROBED" --foreground --db "$STROBE_DB" --socket "$tmp/second.sock" >"$tmp/out2" 2>"$tmp/err2"
rc=$?
[ $rc = 1 ] || fail "the second strobed exited $rc, not 1: $(cat "$tmp/err2")"
[ "$(wc -l <"$tmp/err2")" = 1 ] || fail "the second strobed did not print one line: $(cat "$tmp/err2")"
grep -q "^strobed: database $STROBE_DB is in use by strobed pid $daemon_pid .*stop that strobed" \
	"$tmp/err2" || fail "the refusal does not name pid $daemon_pid: $(cat "$tmp/err2")"
"$STROBED" --db "$STROBE_DB" --socket "$tmp/second.sock" 2>"$tmp/err3"
[ $? = 1 ] && grep -q "in use by strobed pid $daemon_pid" "$tmp/err3" ||
	fail "the second strobed (background) was not refused: $(cat "$tmp/err3")"
[ -e "$tmp/second.sock" ] && fail "the refused strobed created its socket"
[ -e "$STROBE_DB.log" ] && fail "the refused strobed opened a log"
st >"$tmp/st1"
cmp -s "$tmp/st0" "$tmp/st1" || fail "the refused strobed changed the database: $(diff "$tmp/st0" "$tmp/st1")"
"$STROBE" status >"$tmp/status" 2>&1 || fail "the first strobed stopped answering: $(cat "$tmp/status")"
ok "a second strobed on the database is refused and changes nothing"

# the database goes on: a new session after the interrupted one is done
"$STROBE" record --sample-event cpu-clock -F 200 -- true >/dev/null 2>"$tmp/err" ||
	fail "record after the restart: $(cat "$tmp/err")"
"$STROBE" sessions --format csv >"$tmp/s.csv" || fail "sessions"
[ "$(csv_get "$tmp/s.csv" id $((id + 1)) state)" = done ] || fail "the next session: $(cat "$tmp/s.csv")"
[ "$(csv_get "$tmp/s.csv" id "$id" state)" = interrupted ] || fail "session $id changed: $(cat "$tmp/s.csv")"
stop_daemon || fail "strobed did not exit cleanly: $(tail -n 3 "$tmp/strobed.log")"

# SIGKILL of an idle strobed: nothing to mark, nothing changes
start_daemon
kill -KILL "$daemon_pid"
wait "$daemon_pid" 2>/dev/null
daemon_pid=
start_daemon
grep -q "was interrupted" "$tmp/strobed.log" && fail "an idle restart marked a session: $(cat "$tmp/strobed.log")"
"$STROBE" sessions --format csv >"$tmp/s2.csv" || fail "sessions"
cmp -s "$tmp/s.csv" "$tmp/s2.csv" || fail "an idle SIGKILL changed the sessions: $(diff "$tmp/s.csv" "$tmp/s2.csv")"
ok "SIGKILL of an idle strobed changes nothing"
