#!/bin/sh
# t0446-start-scan: the processes already running when a session starts
# are read (their /proc/PID/maps, and the binaries they map hashed and
# copied) by the session's ingest thread, not by strobed's event loop: a
# user whose processes map large files can make that take long, and
# strobed must answer everyone meanwhile.  Six processes of nobody each
# map a 128 MiB file of their own executable before the session starts:
# 'strobe start' answers before those binaries are stored (their rows come
# with the scan's commit, which takes reading 768 MiB; the old start
# stored them before it answered), 'strobe status' answers right after,
# and after the stop all six are stored, named by their paths, with the
# session's start as their mapping time.
. "$(dirname "$0")/lib.sh"
need_root
need_users
command -v sqlite3 >/dev/null || skip "sqlite3 is not installed"

mkdir -m 0755 "$tmp/big" || fail "mkdir"
chown "$nuid:$ngid" "$tmp/big"
chmod 755 "$tmp"
pids=
for i in 1 2 3 4 5 6; do
	as_nobody sh -c "head -c 134217728 /dev/urandom >$tmp/big/f$i" || fail "f$i"
	setpriv --reuid="$nuid" --regid="$ngid" --clear-groups /usr/bin/python3 -c '
import mmap, sys, time
f = open(sys.argv[1], "rb")
m = mmap.mmap(f.fileno(), 0, prot=mmap.PROT_READ | mmap.PROT_EXEC)
open(sys.argv[2], "w").write("mapped")
time.sleep(60)
' "$tmp/big/f$i" "$tmp/big/ok$i" &
	pids="$pids $!"
done
cleanup_maps() { for p in $pids; do kill "$p" 2>/dev/null; done; }
i=0
while [ "$(ls "$tmp/big"/ok* 2>/dev/null | wc -l)" -lt 6 ]; do
	i=$((i + 1))
	[ $i -gt 100 ] && { cleanup_maps; fail "the six mappings were not made"; }
	sleep 0.1
done

stored() {
	sqlite3 "$STROBE_DB" "SELECT count(*) FROM binaries WHERE path LIKE '$tmp/big/f%'" 2>/dev/null ||
		echo "?"
}
start_daemon
"$STROBE" start --sample-event cpu-clock -F 99 --name scan >"$tmp/id" 2>"$tmp/start.err" ||
	{ cleanup_maps; fail "start: $(cat "$tmp/start.err")"; }
at_start=$(stored)
timeout 2 "$STROBE" status >"$tmp/status" 2>&1 || { cleanup_maps; fail "status did not answer within 2 s: $(cat "$tmp/status")"; }
at_status=$(stored)
echo "binaries of the six stored when start answered: $at_start; after a status: $at_status"
[ "$at_start" = 0 ] || { cleanup_maps; fail "start answered after the scan had stored $at_start of the six (the event loop read them)"; }
sleep 1
timeout 60 "$STROBE" stop >"$tmp/stop" 2>&1 || { cleanup_maps; fail "stop: $(cat "$tmp/stop")"; }
cleanup_maps
n=$(stored)
[ "$n" = 6 ] || fail "after the stop $n of the six mapped files are stored, not 6"
ok "start answers before the running processes' binaries are read; status answers meanwhile; all six stored by the stop"
