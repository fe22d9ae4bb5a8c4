#!/bin/sh
# t0240-full-disk: a session that fills the disk ends cleanly. On a small
# tmpfs holding the database and its binary cache, a first small session is
# recorded; the tmpfs is then shrunk to leave ~1.5 MB free and a second
# session samples two busy CPUs at 10 kHz with page-faults counted, far more
# than fits. strobed must not crash: it stops the session itself, says "disk
# full" in its log, and 'strobe record' prints one line "strobe record: ...
# disk full ..." and exits 1; strobed still answers and exits cleanly; the
# database passes integrity_check, the cut-short session is stored as
# 'aborted' (not 'done'; or 'interrupted' when even that did not fit and
# strobed restarts after space is freed) and still reports, the first session's report has the same rows as
# before (whole rows, binary paths included), and once space is freed a
# new session records.
. "$(dirname "$0")/lib.sh"
need_root

mount_small
export STROBE_DB=$small/strobe.db

start_daemon
"$STROBE" record --sample-event cpu-clock -F 500 -- "$WL/split603010" 1 >/dev/null 2>"$tmp/rec1.err" ||
	fail "first record: $(cat "$tmp/rec1.err")"
"$STROBE" report --session 1 --format csv >"$tmp/r0.csv" 2>/dev/null || fail "report of session 1"
grep -q work60 "$tmp/r0.csv" || fail "session 1 lacks work60"

# leave ~1.5 MB: far less than the second session writes
used=$(df -k --output=used "$small" | tail -n 1)
mount -o remount,size=$((used + 1536))k "$small" || fail "cannot shrink the tmpfs to $((used + 1536)) KB"
df -k "$small"

# by period (100 us of cpu-clock: 10 kHz a CPU), so that a lowered
# kernel.perf_event_max_sample_rate does not refuse it
"$STROBE" record --sample-event cpu-clock -c 100000 -e page-faults -- \
	sh -c "'$WL/split603010' 6 & '$WL/split603010' 6; wait" >/dev/null 2>"$tmp/rec2.err"
rc=$?
cat "$tmp/rec2.err"
df -k "$small"
[ $rc = 1 ] || fail "record on a full disk exited $rc, not 1: $(cat "$tmp/rec2.err"); strobed's log: $(tail -n 8 "$tmp/strobed.log"); max sample rate, cpu time %: $(grep -h . /proc/sys/kernel/perf_event_max_sample_rate /proc/sys/kernel/perf_cpu_time_max_percent | tr '\n' ' ')"
[ "$(wc -l <"$tmp/rec2.err")" = 1 ] || fail "record did not print exactly one line: $(cat "$tmp/rec2.err")"
grep -q "^strobe record: .*disk full" "$tmp/rec2.err" || fail "record does not say disk full: $(cat "$tmp/rec2.err")"
grep -q "disk full" "$tmp/strobed.log" || fail "strobed's log does not say disk full: $(tail -n 5 "$tmp/strobed.log")"
kill -0 "$daemon_pid" 2>/dev/null || fail "strobed died: $(tail -n 5 "$tmp/strobed.log")"
"$STROBE" status >"$tmp/status" 2>&1 || fail "status after the full disk: $(cat "$tmp/status")"
grep -q "no session running" "$tmp/status" || fail "a session is still running: $(cat "$tmp/status")"
stop_daemon || fail "strobed exited with an error: $(tail -n 5 "$tmp/strobed.log")"

# what was stored is intact
[ "$(sqlite3 -readonly "$STROBE_DB" 'PRAGMA integrity_check' 2>&1)" = ok ] ||
	fail "integrity_check: $(sqlite3 -readonly "$STROBE_DB" 'PRAGMA integrity_check' 2>&1 | head -n 3)"
"$STROBE" report --session 1 --format csv >"$tmp/r1.csv" 2>"$tmp/rep.err" || fail "report of session 1: $(cat "$tmp/rep.err")"
# whole rows, binary paths included (binaries: one row per (content key,
# path) since bfad5ce, so no later session can change the path shown)
cmp -s "$tmp/r0.csv" "$tmp/r1.csv" ||
	fail "the report of session 1 changed: $(diff "$tmp/r0.csv" "$tmp/r1.csv" | head -n 5)"
"$STROBE" sessions --format csv >"$tmp/s.csv" 2>"$tmp/s.err" || fail "sessions: $(cat "$tmp/s.err")"
cat "$tmp/s.csv"
[ "$(wc -l <"$tmp/s.csv")" = 3 ] || fail "expected two sessions: $(cat "$tmp/s.csv")"
# session 2 is 'aborted', or still 'running' when even that did not fit
case $(csv_get "$tmp/s.csv" id 2 state) in
aborted|running) ;;
*) fail "the cut-short session 2 is not marked aborted: $(cat "$tmp/s.csv")" ;;
esac
"$STROBE" report --session 2 >/dev/null 2>"$tmp/rep2.err" || fail "report of the cut-short session 2: $(cat "$tmp/rep2.err")"
ok "a full disk stops the session with 'disk full'; the first session is intact"

# free space and try again: strobed starts, session 2 is 'aborted', a new one records
mount -o remount,size=1g "$small" || fail "cannot grow the tmpfs again"
start_daemon
"$STROBE" record --sample-event cpu-clock -F 200 -- true >/dev/null 2>"$tmp/rec3.err" ||
	fail "record after freeing space: $(cat "$tmp/rec3.err")"
stop_daemon || fail "strobed exited with an error: $(tail -n 5 "$tmp/strobed.log")"
"$STROBE" sessions --format csv >"$tmp/s.csv" 2>"$tmp/s.err" || fail "sessions: $(cat "$tmp/s.err")"
# aborted, or interrupted when even that did not fit (the next strobed found
# it running, and rebuilt its totals from its stored rows)
case $(csv_get "$tmp/s.csv" id 2 state) in
aborted|interrupted) ;;
*) fail "session 2 is not marked aborted or interrupted: $(cat "$tmp/s.csv")" ;;
esac
[ "$(csv_get "$tmp/s.csv" id 3 state)" = done ] || fail "session 3 is not done: $(cat "$tmp/s.csv")"
"$STROBE" report --session 1 --format csv 2>/dev/null | cmp -s - "$tmp/r0.csv" ||
	fail "the report of session 1 changed after recovery"
ok "after freeing space strobed records again and session 2 reads as aborted or interrupted"
