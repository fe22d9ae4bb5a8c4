#!/bin/sh
# t0430-slow-clients: clients that send their request slowly, or never, do
# not hold strobed.  While a session runs, clients of a group member each
# send a request one byte every 0.5 s (so no single read ever times out),
# and more of them connect than one user may have pending at once.  Each
# slow client gets "no complete line received" within its 2 s allowance;
# those over the per-user limit get "busy" at once; meanwhile root's and
# another member's 'strobe status' answer within 1 s every time, and the
# session is drained: no sample is lost and it stops cleanly.  Before
# strobed read clients without blocking, each such client held the daemon
# for as long as it kept trickling.
. "$(dirname "$0")/lib.sh"
need_root
need_users daemon

start_daemon
"$STROBE" start --sample-event cpu-clock -F 1000 >"$tmp/id" 2>"$tmp/err" || fail "start: $(cat "$tmp/err")"

# 6 trickling clients of one member (the limit per user is 4), for 8 s
as_member /usr/bin/python3 - "$STROBE_SOCKET" >"$tmp/trickle" 2>&1 <<'PY' &
import socket, sys, threading, time
def trickle(i, out):
    s = socket.socket(socket.AF_UNIX)
    s.connect(sys.argv[1])
    s.setblocking(False)
    t0, got = time.time(), b""
    for b in b"status name=slow" * 2:
        try:
            s.send(bytes([b]))
        except OSError:
            break
        time.sleep(0.5)
        try:
            got += s.recv(4096)
        except BlockingIOError:
            pass
        if got.endswith(b"\n") or time.time() - t0 > 8:
            break
    s.setblocking(True)
    s.settimeout(3)
    try:
        while not got.endswith(b"\n"):
            c = s.recv(4096)
            if not c:
                break
            got += c
    except OSError:
        pass
    out[i] = (time.time() - t0, got.decode(errors="replace").strip())
out = {}
ts = [threading.Thread(target=trickle, args=(i, out)) for i in range(6)]
for t in ts:
    t.start()
    time.sleep(0.05)
for t in ts:
    t.join()
for i in sorted(out):
    print("%d %.1f %s" % (i, out[i][0], out[i][1]))
PY
tpid=$!
sleep 0.5
slow=0
for i in 1 2 3 4 5 6 7 8 9 10; do
	for who in root member; do
		start=$(date +%s%N)
		if [ $who = root ]; then
			"$STROBE" status >"$tmp/st" 2>&1 || fail "status as root: $(cat "$tmp/st")"
		else
			as_other "$STROBE" status >"$tmp/st" 2>&1 || fail "status as another member: $(cat "$tmp/st")"
		fi
		ms=$(( ($(date +%s%N) - start) / 1000000 ))
		grep -q "session $(cat "$tmp/id")" "$tmp/st" || fail "status as $who: $(cat "$tmp/st")"
		[ $ms -le 1000 ] || { slow=$((slow + 1)); echo "status as $who took $ms ms"; }
	done
	sleep 0.4
done
wait $tpid
cat "$tmp/trickle"
[ $slow = 0 ] || fail "$slow status requests took over 1 s while clients trickled"
n_to=$(grep -c "no%20complete%20line%20received" "$tmp/trickle")
n_busy=$(grep -c "strobed%20is%20busy" "$tmp/trickle")
[ "$n_to" = 4 ] && [ "$n_busy" = 2 ] ||
	fail "want 4 timed-out and 2 busy slow clients, got $n_to and $n_busy: $(cat "$tmp/trickle")"
awk '/no%20complete%20line/ && $2 > 4 { bad = 1 } END { exit bad }' "$tmp/trickle" ||
	fail "a slow client was held past its 2 s allowance: $(cat "$tmp/trickle")"
"$STROBE" stop >"$tmp/stop" 2>&1 || fail "stop: $(cat "$tmp/stop")"
grep -q " 0 lost" "$tmp/stop" || fail "samples were lost while clients trickled: $(cat "$tmp/stop")"
stop_daemon || fail "strobed did not exit cleanly: $(tail -n 5 "$tmp/strobed.log")"
ok "slow clients time out on their own; status answers within 1 s; nothing lost"
