#!/bin/sh
# t0803-push-hostile: a hostile fleet server (a python3 peer, no ClickHouse)
# cannot make 'strobe push' or 'strobed --push' hold unbounded memory or
# wait without end (issue 30).  Four answers, chosen by the URL's path:
#   /endless/  a 200 that streams without end, as fast as it can
#   /2gb/      a 200 of 2 GB without Content-Length, as fast as it can
#   /stall/    a 200's headers, then nothing
#   /trickle/  a 200 of 10 bytes every 0.1 s, without end
# 'strobe push' must fail in one line naming the server and the limit (64
# MiB per answer, STROBE_CLICKHOUSE_STALL=2, STROBE_CLICKHOUSE_TIMEOUT=5),
# its peak RSS under 200 MiB; strobed --push must log that line and
# keep its VmHWM under 200 MiB over several attempts, and still answer.
# Before: 'strobe push' against /endless/ grew past 1 GiB in 5 s.
. "$(dirname "$0")/lib.sh"
need_root
command -v python3 >/dev/null || skip "python3 is not installed"

HWM_MAX_KB=$((200 * 1024))

python3 - "$tmp/port" "$tmp/sent" >"$tmp/peer.log" 2>&1 <<'PY' &
import os, socket, sys, threading, time
lsock = socket.socket()
lsock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
lsock.bind(("127.0.0.1", 0))
lsock.listen(64)
chunk = (b"x" * 99 + b"\n") * 655
head = b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nConnection: close\r\n\r\n"

def serve(c):
    sent = 0
    path = b"?"
    try:
        buf = b""
        while b"\r\n\r\n" not in buf:
            d = c.recv(65536)
            if not d:
                return
            buf += d
        hdr, body = buf.split(b"\r\n\r\n", 1)
        path = hdr.split(b" ")[1].split(b"?")[0]
        cl = 0
        for line in hdr.split(b"\r\n"):
            if line.lower().startswith(b"content-length:"):
                cl = int(line.split(b":")[1])
        while len(body) < cl:
            d = c.recv(65536)
            if not d:
                return
            body += d
        c.sendall(head)
        if path == b"/endless/":
            while True:
                c.sendall(chunk)
                sent += len(chunk)
        elif path == b"/2gb/":
            while sent < 2 << 30:
                c.sendall(chunk)
                sent += len(chunk)
        elif path == b"/stall/":
            while c.recv(4096):
                pass
        elif path == b"/trickle/":
            while True:
                c.sendall(b"123456789\n")
                sent += 10
                time.sleep(0.1)
    except OSError:
        pass
    finally:
        c.close()
        with open(sys.argv[2], "a") as f:
            f.write("%s %d\n" % (path.decode(errors="replace"), sent))

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

# hwm_watch PID SECONDS: until PID exits or SECONDS pass, its VmHWM (kB)
# into $hwm; past HWM_MAX_KB the process is killed and the test fails
hwm_watch() {
	hwm=0
	n=$(($2 * 10))
	while [ "$n" -gt 0 ] && [ -r "/proc/$1/status" ]; do
		h=$(sed -n 's/^VmHWM:[^0-9]*\([0-9]*\) kB/\1/p' "/proc/$1/status" 2>/dev/null)
		[ -n "$h" ] && hwm=$h
		if [ "$hwm" -gt "$HWM_MAX_KB" ]; then
			kill -9 "$1"
			fail "pid $1 holds $((hwm / 1024)) MiB (VmHWM), over $((HWM_MAX_KB / 1024)) MiB: killed"
		fi
		n=$((n - 1))
		sleep 0.1
	done
}

"$STROBE" record --db "$tmp/a.db" --sample-event cpu-clock -F 99 -- "$WL/split603010" 1 \
	>/dev/null 2>"$tmp/rec.err" || fail "record: $(cat "$tmp/rec.err")"

# push MODE SECONDS RE: strobe push to /MODE/ fails within SECONDS with one
# line matching RE, its peak RSS (getrusage's, as /usr/bin/time says: the
# VmHWM it had when it exited) bounded; under a 1.5 GiB ulimit -v, so that
# a client without bounds fails without taking the machine's memory
push() {
	t0=$(date +%s.%N)
	(ulimit -v 1572864
	 STROBE_CLICKHOUSE_STALL=2 STROBE_CLICKHOUSE_TIMEOUT=5 exec timeout -s KILL 60 \
		/usr/bin/time -f %M -o "$tmp/maxrss" "$STROBE" push --db "$tmp/a.db" \
		--to "http://127.0.0.1:$port/$1/?database=strobe" --host hostile) \
		>"$tmp/out" 2>"$tmp/err"
	rc=$?
	t=$(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { printf "%.2f", b - a }')
	hwm=$(tail -n 1 "$tmp/maxrss")
	[ "$rc" = 1 ] || fail "push to /$1/ exited $rc, not 1: $(cat "$tmp/err")"
	[ "$(wc -l <"$tmp/err")" = 1 ] || fail "push to /$1/: not one line: $(cat "$tmp/err")"
	grep -q "ClickHouse at http://127.0.0.1:$port/$1/: $3" "$tmp/err" ||
		fail "push to /$1/ said: $(cat "$tmp/err")"
	awk -v t="$t" -v m="$2" 'BEGIN { exit !(t < m) }' || fail "push to /$1/ took $t s, not under $2"
	[ "$hwm" -lt "$HWM_MAX_KB" ] || fail "push to /$1/ held $((hwm / 1024)) MiB"
	ok "push to /$1/: $t s, max RSS $((hwm / 1024)) MiB: $(cat "$tmp/err")"
}
push endless 20 "the answer is longer than 64 MiB, the limit (STROBE_CLICKHOUSE_MAX_ANSWER_MB): connection closed"
push 2gb 20 "the answer is longer than 64 MiB"
push stall 4.5 "nothing received for 2 s, the limit (STROBE_CLICKHOUSE_STALL): connection closed"
push trickle 10 "no whole answer within 5 s, the limit (STROBE_CLICKHOUSE_TIMEOUT): connection closed"
# the server saw the connection closed: no more than the cap (and what the
# socket buffers held) was sent before it
sent=$(sed -n 's|^/endless/ ||p' "$tmp/sent" | head -n 1)
[ "$sent" -lt $((256 << 20)) ] || fail "the endless server sent $sent bytes before the client closed"
ok "the endless server sent $((sent >> 20)) MiB before the connection closed"

export STROBE_CLICKHOUSE_STALL=2
# strobed --push: its pusher asks the server at once, then with backoff
# (1, 2, 4 s): three answers without end in 8 s
start_daemon --push "http://127.0.0.1:$port/endless/?database=strobe" \
	--push-interval 1
hwm_watch "$daemon_pid" 8
grep -q "push to http://127.0.0.1:$port/endless/?database=strobe failed: ClickHouse at http://127.0.0.1:$port/endless/: the answer is longer than 64 MiB" \
	"$tmp/strobed.log" || fail "strobed's log: $(cat "$tmp/strobed.log")"
tries=$(grep -c '^/endless/' "$tmp/sent")
[ "$tries" -ge 3 ] || fail "strobed asked the endless server $((tries - 1)) times in 8 s, not at least 2"
"$STROBE" status >"$tmp/status" 2>&1 || fail "status after the endless answers: $(cat "$tmp/status")"
stop_daemon || fail "strobed exited $rc: $(cat "$tmp/strobed.log")"
ok "strobed --push to /endless/: $((tries - 1)) attempts, VmHWM $((hwm / 1024)) MiB, still answers"

start_daemon --push "http://127.0.0.1:$port/stall/?database=strobe" \
	--push-interval 1
i=0
until grep -q "failed: ClickHouse at http://127.0.0.1:$port/stall/: nothing received for 2 s" "$tmp/strobed.log"; do
	i=$((i + 1))
	[ $i -gt 100 ] && fail "no stall in strobed's log after 10 s: $(cat "$tmp/strobed.log")"
	sleep 0.1
done
"$STROBE" status >"$tmp/status" 2>&1 || fail "status after a stalled answer: $(cat "$tmp/status")"
stop_daemon || fail "strobed exited $rc: $(cat "$tmp/strobed.log")"
ok "strobed --push to /stall/: $(grep -o 'failed: .*' "$tmp/strobed.log" | head -n 1 | cut -c1-160)"
exit 0
