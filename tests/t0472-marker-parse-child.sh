#!/bin/sh
# t0472-marker-parse-child: the USDT notes of a --marker file are read by
# a child of strobed without rights (daemon/markerparse.c), not by root
# strobed: strace on strobed shows every pread64 of the marker file made
# by a process whose last setresuid took the requester's uid (nobody's for
# root's request; the member's, here nobody with group strobe, for the
# member's), in a child that executed strobed afresh (execveat: none of
# strobed's memory, selfexec.h), after which the session records the
# probe's hits as before.
# Before: strobed's main thread read the notes as root.  A reader that
# hangs is killed at the request's deadline and the start is refused in
# one line, strobed answering at once (SIGSTOP on the reader by a second
# strace would be fragile; the hung child is simulated by a marker file
# on a FIFO elsewhere: t0470 part 5, t0471).
. "$(dirname "$0")/lib.sh"
need_root
need_users
[ -e /sys/bus/event_source/devices/uprobe/type ] ||
	skip "this kernel has no uprobe perf events (CONFIG_UPROBE_EVENTS)"
command -v strace >/dev/null || skip "strace is not installed (setup.sh installs it)"

mkdir -m 0755 "$tmp/m" && chown "$nuid:$ngid" "$tmp/m" || fail "mkdir"
unique_copy "$WL/tlbwalk" "$tmp/m/prog" >/dev/null && chown "$nuid:$ngid" "$tmp/m/prog" ||
	fail "the member's copy of tlbwalk"
start_daemon
strace_daemon pread64,setresuid,accept4,accept,execveat

# root's request, then the member's, each with the tlbwalk hits
"$STROBE" start --sample-event cpu-clock -F 100 --marker "$WL/tlbwalk:tlbwalk:size" \
	>/dev/null 2>"$tmp/err" || fail "root's start: $(cat "$tmp/err")"
"$WL/tlbwalk" 4 6 >/dev/null || fail "tlbwalk"
"$STROBE" stop >/dev/null || fail "stop"
as_member "$STROBE" start --sample-event cpu-clock -F 100 --marker "$tmp/m/prog:tlbwalk:size" \
	>/dev/null 2>"$tmp/err" || fail "the member's start: $(cat "$tmp/err")"
as_member "$tmp/m/prog" 4 6 >/dev/null || fail "the member's tlbwalk"
"$STROBE" stop >/dev/null || fail "stop"
strace_stop
for s in 1 2; do
	n=$(sqlq "$STROBE_DB" "SELECT count(*) FROM markers WHERE session_id = $s AND kind = 'usdt'")
	[ "$n" = 3 ] || fail "session $s: $n usdt markers, not the 3 hits of 'tlbwalk 4 6'"
done
ok "root's and the member's markers record their hits"

python3 - "$tmp/strace.log" "$daemon_pid" "$(worker_uid)" "$nuid" "$WL/tlbwalk" "$tmp/m/prog" <<'PY' ||
import re, struct, sys
import stracelog
log, strobed = sys.argv[1], sys.argv[2]
files = sys.argv[5:]
# root's file read as the workers' user, the member's as the member
want = {files[0]: sys.argv[3], files[1]: sys.argv[4]}
# the USDT parser's reads: each 64-byte section header, at e_shoff and on;
# a build-id lookup reads the program headers and notes before them, and a
# copy into the cache whole chunks (ingest identifying the binary at the
# session's start and as it runs: still root's, doc/SECURITY.md)
shoff = {f: struct.unpack_from("<Q", open(f, "rb").read(64), 0x28)[0] for f in files}
L = stracelog.Log(log)
readers = {f: set() for f in files}
for pid, call, rest in L.calls:
    if call == "pread64":
        off = re.search(r", (\d+), (\d+)\) += ", rest)	# count, offset
        for f in files:
            if ("<" + f + ">" in rest and off and off.group(1) == "64" and
                    int(off.group(2)) >= shoff[f]):	# a section header
                readers[f].add(pid)
for f, pids in readers.items():
    print("  " + L.check(f"a read of {f}'s section headers", pids, {strobed}, want[f]))
PY
	{ cp "$tmp/strace.log" /tmp/t0472.strace; fail "who read the marker files (above)"; }
ok "the marker files' notes were read by children as uid $(worker_uid) (root's) and $nuid (the member's), never by strobed"
