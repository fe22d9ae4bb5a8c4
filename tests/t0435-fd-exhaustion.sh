#!/bin/sh
# t0435-fd-exhaustion: strobed out of file descriptors does not spin (issue
# 30).  strobed raises its soft RLIMIT_NOFILE to the hard one (checked in
# /proc/PID/limits).  Then it runs under a hard limit a few fds above what
# it uses idle (prlimit), and 60 clients connect and say nothing for 3 s:
# its accepts meet EMFILE with connections still waiting.  Its CPU time
# over 2 s must stay under 20% of one CPU (a spin on a listening socket that
# stays readable takes about 100% on any host), the log says so once, and
# once the clients have gone 'strobe status' answers.
. "$(dirname "$0")/lib.sh"
need_root
command -v prlimit >/dev/null || skip "prlimit (util-linux) is not installed"
command -v python3 >/dev/null || skip "python3 is not installed"

# the soft limit raised: started with soft 256, hard 4096
prlimit --nofile=256:4096 "$STROBED" --foreground --db "$STROBE_DB" --socket "$STROBE_SOCKET" \
	2>"$tmp/strobed.log" &
daemon_pid=$!
wait_socket "$STROBE_SOCKET" "$tmp/strobed.log"
"$STROBE" status >/dev/null 2>&1 || fail "status: $(cat "$tmp/strobed.log")"
soft=$(awk '/^Max open files/ { print $4 }' "/proc/$daemon_pid/limits")
[ "$soft" = 4096 ] || fail "strobed's soft RLIMIT_NOFILE is $soft, not raised to the hard 4096"
nfd=$(ls "/proc/$daemon_pid/fd" | wc -l)
stop_daemon || fail "strobed exited $rc: $(cat "$tmp/strobed.log")"
ok "soft RLIMIT_NOFILE raised from 256 to $soft; $nfd fds open when idle"

# a hard limit of 6 fds more than that: 16 client slots cannot all be had
lim=$((nfd + 6))
prlimit --nofile=$lim:$lim "$STROBED" --foreground --db "$STROBE_DB" --socket "$STROBE_SOCKET" \
	2>"$tmp/strobed.log" &
daemon_pid=$!
wait_socket "$STROBE_SOCKET" "$tmp/strobed.log"
"$STROBE" status >/dev/null 2>&1 || fail "status under $lim fds: $(cat "$tmp/strobed.log")"

cpu() { awk '{ print $14 + $15 }' "/proc/$daemon_pid/stat"; }
python3 - "$STROBE_SOCKET" >"$tmp/clients" 2>&1 <<'PY' &
import socket, sys, time
held = []
for i in range(60):
    s = socket.socket(socket.AF_UNIX)
    s.connect(sys.argv[1])
    held.append(s)
time.sleep(3)
for s in held:
    s.close()
print("held", len(held))
PY
cpid=$!
sleep 0.5
c0=$(cpu)
t0=$(date +%s.%N)
sleep 2
c1=$(cpu)
t1=$(date +%s.%N)
wait $cpid || fail "the clients: $(cat "$tmp/clients")"
hz=$(getconf CLK_TCK)
share=$(awk -v a="$c0" -v b="$c1" -v t0="$t0" -v t1="$t1" -v hz="$hz" \
	'BEGIN { printf "%.1f", 100 * (b - a) / hz / (t1 - t0) }')
awk -v s="$share" 'BEGIN { exit !(s < 20) }' ||
	fail "strobed used $share% of a CPU while out of fds (a spin)"
grep -q "out of file descriptors" "$tmp/strobed.log" ||
	fail "no EMFILE met (limit $lim): $(cat "$tmp/strobed.log")"
[ "$(grep -c "out of file descriptors (" "$tmp/strobed.log")" = 1 ] ||
	fail "the shortage logged more than once: $(cat "$tmp/strobed.log")"
ok "60 clients against $lim fds: strobed used $share% of a CPU over 2 s; $(grep -o 'out of file descriptors ([^)]*)' "$tmp/strobed.log")"

i=0
until "$STROBE" status >"$tmp/status" 2>&1; do
	i=$((i + 1))
	[ $i -gt 50 ] && fail "no status 5 s after the clients left: $(cat "$tmp/status")"
	sleep 0.1
done
stop_daemon || fail "strobed exited $rc: $(cat "$tmp/strobed.log")"
ok "status answers once the clients are gone; $(grep -o 'file descriptors available again.*' "$tmp/strobed.log" | head -n 1)"
exit 0
