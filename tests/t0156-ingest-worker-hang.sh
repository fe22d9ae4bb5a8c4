#!/bin/sh
# t0156-ingest-worker-hang: a hung ingest worker (uparse.h) costs the file
# in flight, never the daemon.  During a session ingested live, a first
# binary of its own build-id starts strobed's child strobe-unwind (its
# build-id read there); that child is SIGSTOPped, then a second such
# binary runs: its build-id request times out, the worker is killed and
# replaced, the binary is keyed by its contents (xxh3:) with a name and
# samples as before, the session stops cleanly, and strobed's stop log
# counts the file the ingest worker did not parse, and the failure as a
# build-id's (the worker's budget is per kind: uworker.h).
. "$(dirname "$0")/lib.sh"
need_root

unique_copy "$WL/tlbwalk" "$tmp/a" >/dev/null || fail "copy a"
for n in 1 2 3; do
	unique_copy "$WL/tlbwalk" "$tmp/b$n" >/dev/null || fail "copy b$n"
done
start_daemon --ingest-defer off
"$STROBE" start --sample-event cpu-clock -F 500 --name hang >/dev/null 2>"$tmp/err" ||
	fail "start: $(cat "$tmp/err")"
# the tools this test runs while the session does, read once now: past
# them, the next new file is b (a file already seen is not parsed again)
pgrep -x no-such-process >/dev/null; head -c 0 </dev/null; sleep 0
sqlq "$STROBE_DB" "SELECT 1" >/dev/null
"$tmp/a" 4 6 >/dev/null || fail "a"
# until ingest has stored a (and so every file mapped before it)
i=0
until [ -n "$(sqlq "$STROBE_DB" "SELECT key FROM binaries WHERE path = '$tmp/a'")" ]; do
	i=$((i + 1))
	[ $i -gt 200 ] && fail "a not stored within 20 s"
	sleep 0.1
done
# worker: strobed's strobe-unwind child now, waiting for one (5 s)
worker() {
	i=0
	w=
	until [ -n "$w" ] || [ $i -gt 50 ]; do
		w=$(pgrep -P "$daemon_pid" -x strobe-unwind | head -1)
		i=$((i + 1))
		sleep 0.1
	done
}
# Stop the worker, then run a new binary: its build-id request hangs.
# Another file's request may reach the stopped worker first (ingest runs
# behind, system-wide): then the next binary goes to a new worker, and the
# round is tried again with another copy, at most 3 times.
for n in 1 2 3; do
	worker
	[ -n "$w" ] || fail "no strobe-unwind child of strobed after a new binary ran (build-id read in strobed?)"
	kill -STOP "$w"
	"$tmp/b$n" 4 6 >/dev/null || fail "b$n"
	sleep 5		# the request's 3 s timeout, under load
	kill -0 "$w" 2>/dev/null && fail "the hung worker $w was not killed"
	kb=
	i=0
	until [ -n "$kb" ] || [ $i -gt 250 ]; do
		kb=$(sqlq "$STROBE_DB" "SELECT key FROM binaries WHERE path = '$tmp/b$n'")
		i=$((i + 1))
		sleep 0.1
	done
	case "$kb" in xxh3:*) break ;; esac
	echo "  round $n: b$n keyed '$kb' (another file's request hung): again"
done
"$STROBE" stop >/dev/null 2>"$tmp/err" || fail "stop: $(cat "$tmp/err")"
kill -0 "$daemon_pid" || fail "strobed died"
ka=$(sqlq "$STROBE_DB" "SELECT key FROM binaries WHERE path = '$tmp/a'")
case "$ka" in buildid:*) ;; *) fail "a keyed '$ka', not by its build-id" ;; esac
case "$kb" in xxh3:*) ;; *) fail "b$n keyed '$kb': not by its contents after the worker hung, 3 times" ;; esac
ok "a keyed $ka; b$n, whose build-id request hung, $kb"
id=$(sqlq "$STROBE_DB" "SELECT max(id) FROM sessions")
grep -q "session $id: the ingest worker did not parse [1-9][0-9]* files" "$tmp/strobed.log" ||
	fail "strobed's log does not count the file: $(cat "$tmp/strobed.log")"
ok "strobed's stop log: $(grep -o 'the ingest worker did not parse [0-9]* files' "$tmp/strobed.log")"
grep -q "session $id: the ingest worker failed (crash, hang, bad answer) 0 times on unwinding, [1-9][0-9]* on build-ids, 0 on JIT files" "$tmp/strobed.log" ||
	fail "strobed's log does not count the failure as a build-id's: $(grep 'ingest worker' "$tmp/strobed.log")"
ok "per kind: $(grep -o 'the ingest worker failed (crash, hang, bad answer) .* on JIT files' "$tmp/strobed.log")"
