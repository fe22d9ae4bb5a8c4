#!/bin/sh
# t0804-push-child: strobed --push talks to the fleet server from a child
# without rights (lib/fleet/chchild.c, issue 30), never from its own
# threads.  Against a fake server (a python3 peer, no ClickHouse):
#   /stall/  a 200's headers, then nothing (STROBE_CLICKHOUSE_STALL=3)
#   /esc/    a 200 whose answer holds an ESC sequence
# strace on strobed shows every connect() to the server made by a process
# that is no thread of strobed, that executed strobed afresh (execveat:
# none of strobed's memory, selfexec.h) and whose last setresuid took the
# workers' uid (_strobe, else nobody); /proc shows that process
# (strobe-fleet, strobed's child) as that user with
# no capability and NoNewPrivs while it waits on the server.  The /esc/
# answer is refused in one line of strobed's log, strobed still answering.
# Before: strobed's push thread connected as root and parsed the answer.
. "$(dirname "$0")/lib.sh"
need_root
command -v python3 >/dev/null || skip "python3 is not installed"
command -v strace >/dev/null || skip "strace is not installed (setup.sh installs it)"
nuid=$(worker_uid)	# the workers' user

python3 - "$tmp/port" >"$tmp/peer.log" 2>&1 <<'PY' &
import os, socket, sys, threading
lsock = socket.socket()
lsock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
lsock.bind(("127.0.0.1", 0))
lsock.listen(64)

def serve(c):
    try:
        buf = b""
        while b"\r\n\r\n" not in buf:
            d = c.recv(65536)
            if not d:
                return
            buf += d
        path = buf.split(b" ")[1].split(b"?")[0]
        if path == b"/esc/":
            body = b"1\x1b[31m\n"
            c.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\nConnection: close\r\n\r\n"
                      % len(body) + body)
        else:
            c.sendall(b"HTTP/1.1 200 OK\r\nConnection: close\r\n\r\n")
            while c.recv(4096):
                pass
    except OSError:
        pass
    finally:
        c.close()

open(sys.argv[1] + ".tmp", "w").write(str(lsock.getsockname()[1]))
os.rename(sys.argv[1] + ".tmp", sys.argv[1])
while True:
    c, _ = lsock.accept()
    threading.Thread(target=serve, args=(c,), daemon=True).start()
PY
peer_pid=$!
i=0
while ! [ -s "$tmp/port" ]; do
	i=$((i + 1))
	[ $i -gt 100 ] && fail "the fake server did not start: $(cat "$tmp/peer.log")"
	sleep 0.05
done
port=$(cat "$tmp/port")
trap 'kill $peer_pid 2>/dev/null; cleanup' EXIT INT TERM

export STROBE_CLICKHOUSE_STALL=3
start_daemon --push "http://127.0.0.1:$port/stall/?database=strobe" --push-interval 1
strace -f -p "$daemon_pid" -qq -e trace=connect,setresuid,accept4,accept,execveat -o "$tmp/strace.log" \
	2>"$tmp/strace.err" &
spid=$!
i=0
until grep -q accept "$tmp/strace.log" 2>/dev/null || [ $i -gt 100 ]; do
	"$STROBE" status >/dev/null 2>&1
	i=$((i + 1))
	sleep 0.05
done
grep -q . "$tmp/strace.log" || fail "strace did not attach: $(cat "$tmp/strace.err")"

# the next attempt (after a backoff of at most 4 s) waits 3 s on /stall/:
# its child seen in /proc, its connect() in strace's log
seen=
i=0 n=0
while [ $i -lt 200 ]; do
	for st in /proc/[0-9]*/status; do
		[ "$(sed -n 's/^PPid:[[:space:]]*//p' "$st" 2>/dev/null)" = "$daemon_pid" ] || continue
		[ "$(sed -n 's/^Name:[[:space:]]*//p' "$st" 2>/dev/null)" = strobe-fleet ] || continue
		cp "$st" "$tmp/child.status" 2>/dev/null || continue
		grep -q '^Uid:' "$tmp/child.status" && seen=$st
	done
	# the connect seen, and the child (or, with none, 2 s more)
	grep -q "sin_port=htons($port)" "$tmp/strace.log" && n=$((n + 1)) &&
		{ [ -n "$seen" ] || [ "$n" -gt 20 ]; } && break
	i=$((i + 1))
	sleep 0.1
done
ls "/proc/$daemon_pid/task" >"$tmp/tasks"
sleep 0.5
kill "$spid" 2>/dev/null
wait "$spid" 2>/dev/null
python3 - "$tmp/strace.log" "$tmp/tasks" "$nuid" "$port" <<'PY' ||
import re, sys
import stracelog
log, tasks, nuid, port = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4]
threads = set(open(tasks).read().split())
L = stracelog.Log(log)
connects = [pid for pid, call, rest in L.calls
            if call == "connect" and "sin_port=htons(%s)" % port in rest]
print("  " + L.check(f"a connect() to port {port}", connects, threads, nuid) +
      f"; strobed's threads {sorted(threads)} made none")
PY
	{ cp "$tmp/strace.log" /tmp/t0804.strace; fail "who connected to the server (above)"; }
ok "no thread of strobed connected to the server: its fleet child did, executed afresh, as uid $nuid"
[ -n "$seen" ] || fail "no strobe-fleet child of strobed in 20 s: $(cat "$tmp/strobed.log")"
want=$(printf 'Uid:\t%s\t%s\t%s\t%s' "$nuid" "$nuid" "$nuid" "$nuid")
grep -qx "$want" "$tmp/child.status" || fail "the fleet child: $(grep ^Uid: "$tmp/child.status"), not the workers' $nuid"
for f in CapEff CapPrm CapBnd; do
	grep -qx "$f:[[:space:]]*0000000000000000" "$tmp/child.status" ||
		fail "the fleet child's $(grep "^$f:" "$tmp/child.status")"
done
grep -qx "NoNewPrivs:[[:space:]]*1" "$tmp/child.status" || fail "the fleet child: no NoNewPrivs"
ok "strobed's fleet child (pid $(echo "$seen" | cut -d/ -f3)) runs as uid $nuid, no capability, NoNewPrivs"

stop_daemon || fail "strobed exited $rc: $(cat "$tmp/strobed.log")"

start_daemon --push "http://127.0.0.1:$port/esc/?database=strobe" --push-interval 1
i=0
until grep -q "push to .* failed: " "$tmp/strobed.log"; do
	i=$((i + 1))
	[ $i -gt 100 ] && fail "no failed push in strobed's log after 10 s: $(cat "$tmp/strobed.log")"
	sleep 0.1
done
line=$(grep "push to .* failed: " "$tmp/strobed.log" | head -n 1)
echo "$line" | grep -q "ClickHouse at http://127.0.0.1:$port/esc/: the ClickHouse server's answer holds a byte that is not printable ASCII (0x1b at offset 1): refused" ||
	fail "strobed's log: $line"
"$STROBE" status >"$tmp/status" 2>&1 || fail "status after the refused answer: $(cat "$tmp/status")"
stop_daemon || fail "strobed exited $rc: $(cat "$tmp/strobed.log")"
ok "an answer with ESC refused in one line: $(echo "$line" | grep -o 'failed: .*' | cut -c1-160)"
exit 0
