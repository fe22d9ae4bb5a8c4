#!/bin/sh
# t0155-ingest-worker: strobed (root) does not parse what a profiled
# process controls when it identifies a mapped binary or copies a JIT
# file: the ingest worker (uworker.h, uparse.h; the unwinder's, a child of
# strobed as the workers' user without capabilities, strobed's file
# executed afresh) does.  strace -f on strobed
# during a session of a binary of its own build-id and of jitmap:
#  - the reads of the binary's program headers (pread64 at e_phoff, the
#    build-id lookup) are made only by processes that executed strobed
#    afresh and whose last setresuid took the workers' uid, never by
#    strobed's threads (strobed still reads the
#    file whole to hash and cache it: hashing is not parsing);
#  - jitmap's perf map reaches the worker as a sealed memfd (strobe-jit)
#    that such a process maps, and its symbol is stored as before.
# Before: strobed's ingest thread read the headers and notes and parsed
# the perf map as root.
. "$(dirname "$0")/lib.sh"
need_root
command -v strace >/dev/null || skip "strace is not installed (setup.sh installs it)"
nobody=$(worker_uid)	# the workers' user

unique_copy "$WL/tlbwalk" "$tmp/prog" >/dev/null || fail "a copy of tlbwalk with its own build-id"
start_daemon
strace_daemon pread64,setresuid,mmap,accept4,accept,execveat

"$STROBE" record --sample-event cpu-clock -F 200 --name iw \
	-- sh -c '"$1" 4 6 >/dev/null; "$2/jitmap" 1 & echo $! >"$3/pid"; wait $!' \
	sh "$tmp/prog" "$WL" "$tmp" >"$tmp/record.out" 2>"$tmp/record.err" ||
	fail "record: $(cat "$tmp/record.err")"
strace_stop
pid=$(cat "$tmp/pid")
rm -f "/tmp/perf-$pid.map"
n=$(sqlq "$STROBE_DB" "SELECT symbols || ' ' || ifnull(problem, '-') FROM jit_maps WHERE pid=$pid")
[ "$n" = "1 -" ] || fail "jit_maps row for $pid: '$n'"
n=$(sqlq "$STROBE_DB" "SELECT count(*) FROM binaries WHERE path = '$tmp/prog' AND key LIKE 'buildid:%'")
[ "$n" -ge 1 ] || fail "$tmp/prog not keyed by its build-id: $(sqlq "$STROBE_DB" "SELECT key, path FROM binaries")"
ok "the binary keyed by its build-id, jitmap's symbol stored"

python3 - "$tmp/strace.log" "$daemon_pid" "$nobody" "$tmp/prog" <<'PY' ||
import re, struct, sys
import stracelog
log, strobed, nuid, prog = sys.argv[1:5]
d = open(prog, "rb").read(64)
phoff, = struct.unpack_from("<Q", d, 0x20)
L = stracelog.Log(log)
ph, jit = set(), set()
for pid, call, rest in L.calls:
    if call == "pread64" and "<" + prog + ">" in rest:
        off = re.search(r", (\d+), (\d+)\) += ", rest)
        if off and int(off.group(2)) == phoff:
            ph.add(pid)
    elif call == "mmap" and "memfd:strobe-jit" in rest:
        jit.add(pid)
for what, pids in (("a read of the program headers of " + prog, ph),
                   ("a mapping of the perf map's memfd", jit)):
    print("  " + L.check(what, pids, {strobed}, nuid))
PY
	{ cp "$tmp/strace.log" /tmp/t0155.strace; fail "who parsed the binary and the perf map (above)"; }
ok "build-id notes and the perf map parsed by the ingest worker as uid $nobody, never by strobed"
