#!/bin/sh
# t0156-ingest-worker-hang: a hung ingest worker (uparse.h) costs the file
# in flight, never the daemon.  During a session ingested live, a first
# binary of its own build-id starts strobed's child strobe-unwind (its
# build-id read there); that child is SIGSTOPped, then a second such
# binary runs: its build-id request times out, the worker is killed and
# replaced, the binary is keyed by its contents (xxh3:) with a name and
# samples as before, the session stops cleanly, and strobed's stop log
# counts the file the ingest worker did not parse.
. "$(dirname "$0")/lib.sh"
need_root

unique_copy "$WL/tlbwalk" "$tmp/a" >/dev/null || fail "copy a"
unique_copy "$WL/tlbwalk" "$tmp/b" >/dev/null || fail "copy b"
start_daemon --ingest-defer off
"$STROBE" start --sample-event cpu-clock -F 500 --name hang >/dev/null 2>"$tmp/err" ||
	fail "start: $(cat "$tmp/err")"
"$tmp/a" 4 6 >/dev/null || fail "a"
i=0
w=
until [ -n "$w" ] || [ $i -gt 100 ]; do
	w=$(pgrep -P "$daemon_pid" -x strobe-unwind | head -1)
	i=$((i + 1))
	sleep 0.1
done
[ -n "$w" ] || fail "no strobe-unwind child of strobed after a new binary ran (build-id read in strobed?)"
kill -STOP "$w"
"$tmp/b" 4 6 >/dev/null || fail "b"
sleep 5		# the request's 3 s timeout, under load
"$STROBE" stop >/dev/null 2>"$tmp/err" || fail "stop: $(cat "$tmp/err")"
kill -0 "$daemon_pid" || fail "strobed died"
kill -0 "$w" 2>/dev/null && fail "the hung worker $w was not killed"
ka=$(sqlq "$STROBE_DB" "SELECT key FROM binaries WHERE path = '$tmp/a'")
kb=$(sqlq "$STROBE_DB" "SELECT key FROM binaries WHERE path = '$tmp/b'")
case "$ka" in buildid:*) ;; *) fail "a keyed '$ka', not by its build-id" ;; esac
case "$kb" in xxh3:*) ;; *) fail "b keyed '$kb': not by its contents after the worker hung" ;; esac
ok "a keyed $ka; b, whose build-id request hung, $kb"
id=$(sqlq "$STROBE_DB" "SELECT max(id) FROM sessions")
grep -q "session $id: the ingest worker did not parse [1-9][0-9]* files" "$tmp/strobed.log" ||
	fail "strobed's log does not count the file: $(cat "$tmp/strobed.log")"
ok "strobed's stop log: $(grep -o 'the ingest worker did not parse [0-9]* files' "$tmp/strobed.log")"
