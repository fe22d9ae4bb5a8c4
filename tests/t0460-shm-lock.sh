#!/bin/sh
# t0460-shm-lock: a member of group strobe can read the database's files,
# and so can take fcntl read locks on them.  Held on byte 120 of DB-shm
# (SQLite's WAL write lock), such a lock used to stall strobed's writer
# past SQLite's 5 s busy timeout and abort the session ("database is
# locked").  Now, with the attacker a member (nobody + group strobe,
# running /usr/bin/python3):
#  (1) a POSIX read lock on byte 120 held for 8 s during a session over
#      the 60/30/10 workload: the session goes on; 'strobe status' answers
#      at once and names the holder's pid; strobed logs the holder once
#      and, after, for how long; nothing is lost: the workload's samples
#      cover the lock's 8 s as densely as the rest of the run, and the
#      session ends 'done' with 0 lost;
#  (2) an open file description lock (F_OFD_SETLKW) on byte 120 for 3 s,
#      with 16 KiB rings and a spool of 16 KiB without disk (strobed
#      restarted so; the default spool would hold it all, t0500): what
#      fits neither is counted as lost, shown by 'strobe stop' and stored
#      (sessions.lost = the lost rows), and strobed still names the
#      holder's pid;
#  (3) the lock held across 'strobe stop', with the same rings and spool, the
#      stop asked for 2 s into the lock, once the spool is full and the
#      rings overflow: the stop waits ('strobe status' says stopping) and
#      completes once the lock goes; the session is done, and what
#      overflowed is counted lost (the kernel reports it only in a record
#      written once the ring has room: a stop that disabled the events
#      while the spool was full would never see it);
#  (4) read locks on bytes 121-127 (checkpoint and read marks) pin the WAL:
#      strobed says so in its log, naming the pid, once it passes --max-wal;
#  (5) strobed killed mid-session and restarted while the lock is held: it
#      says which pid it waits for (SQLite must rebuild the WAL index, for
#      which it takes the write lock), starts once the lock goes, and marks
#      the session interrupted.
. "$(dirname "$0")/lib.sh"
need_root
need_users
[ -x /usr/bin/python3 ] || skip "/usr/bin/python3 is not installed"
command -v sqlite3 >/dev/null || skip "sqlite3 is not installed"

q() { sqlq -readonly "$STROBE_DB" "$@"; }

# lock_shm KIND START LEN SECONDS: as a member, lock bytes of DB-shm (read
# lock; KIND posix or ofd), hold, release.  Runs in the background; once it
# holds the lock, the attacker's pid is in $apid.
lock_shm() {
	: >"$tmp/apid"
	as_member /usr/bin/python3 - "$STROBE_DB-shm" "$@" >"$tmp/apid" <<'PY' &
import fcntl, os, struct, sys, time
shm, kind, (start, length, secs) = sys.argv[1], sys.argv[2], map(float, sys.argv[3:6])
fd = os.open(shm, os.O_RDONLY)
if kind == "ofd":
    F_OFD_SETLKW = 38	# waits while strobed's transaction holds the byte
    fcntl.fcntl(fd, F_OFD_SETLKW, struct.pack("hhqqi", fcntl.F_RDLCK, os.SEEK_SET, int(start), int(length), 0))
else:
    fcntl.lockf(fd, fcntl.LOCK_SH, int(length), int(start), os.SEEK_SET)
print(os.getpid(), flush=True)
time.sleep(secs)
PY
	lock_job=$!
	i=0
	while [ ! -s "$tmp/apid" ]; do
		i=$((i + 1))
		[ $i -gt 200 ] && fail "the member could not lock $STROBE_DB-shm"
		sleep 0.05
	done
	apid=$(cat "$tmp/apid")
}

# ingest writes whenever records wait, busy CPUs or not: one that waits
# for an idle CPU (--ingest-defer busy, t0505) meets the lock only when it
# next writes, and then names the holder as here
start_daemon --max-wal 1M --ingest-defer off
[ "$(stat -c %a "$STROBE_DB-shm")" = 640 ] || fail "DB-shm is mode $(stat -c %a "$STROBE_DB-shm")"

# (1) the WAL write lock for 8 s, mid-session
"$STROBE" start --sample-event cpu-clock -F 1000 -e page-faults >"$tmp/id" 2>"$tmp/err" ||
	fail "start: $(cat "$tmp/err")"
id=$(cat "$tmp/id")
"$WL/split603010" 14 &
wpid=$!
sleep 2
t0=$(date +%s.%N)
lock_shm posix 120 1 8
sleep 3
s0=$(date +%s%N)
"$STROBE" status >"$tmp/st" 2>&1 || fail "status while locked: $(cat "$tmp/st")"
s1=$(date +%s%N)
grep -q "^session $id running" "$tmp/st" || fail "the session is not running under the lock: $(cat "$tmp/st")"
grep -q "^database locked for .* by pid $apid (python3, uid $nuid)" "$tmp/st" ||
	fail "status does not name the holder $apid: $(cat "$tmp/st")"
wait "$lock_job"
t1=$(date +%s.%N)
wait "$wpid"
"$STROBE" stop >"$tmp/stop" 2>&1 || fail "stop after the lock: $(cat "$tmp/stop")"
grep -q "^session $id: [0-9]* samples, 0 lost" "$tmp/stop" || fail "stop: $(cat "$tmp/stop")"
[ "$(q "SELECT state FROM sessions WHERE id=$id")" = done ] || fail "session $id is not done"
[ "$(grep -c "the database is locked by pid $apid" "$tmp/strobed.log")" = 1 ] ||
	fail "strobed did not log the holder once: $(cat "$tmp/strobed.log")"
grep -q "writable again after [0-9.]* s (it was locked by pid $apid" "$tmp/strobed.log" ||
	fail "strobed did not log how long: $(cat "$tmp/strobed.log")"
# samples per second of the workload inside the lock's window and outside
q "SELECT time_ns FROM samples WHERE session_id=$id AND pid=$wpid" >"$tmp/times"
python3 - "$(q "SELECT wall_offset_ns FROM sessions WHERE id=$id")" "$t0" "$t1" "$tmp/times" <<'PY' ||
import sys
off, t0, t1 = int(sys.argv[1]), float(sys.argv[2]), float(sys.argv[3])
ts = [(int(t) + off) / 1e9 for t in open(sys.argv[4])]
lo, hi = t0 + 0.5, t1 - 0.5               # well inside the lock
inside = sum(lo <= t <= hi for t in ts) / (hi - lo)
span = max(ts) - min(ts)
outside = (len(ts) - sum(t0 <= t <= t1 for t in ts)) / max(span - (t1 - t0), 1e-9)
print(f"workload samples/s: {inside:.0f} during the lock, {outside:.0f} outside")
assert inside >= 0.5 * outside, "samples are missing while the database was locked"
PY
	fail "the lock cost samples"
[ $(( (s1 - s0) / 1000000 )) -lt 1000 ] || fail "status took $(( (s1 - s0) / 1000000 )) ms under the lock"
ok "8 s on the WAL write lock: session $id done, nothing lost, holder $apid named"

# (2) an OFD lock, small rings, small spool: what overflows is counted lost, and shown
stop_daemon
start_daemon --max-wal 1M --spool-mem 16K --spool-disk 0
"$STROBE" start --sample-event cpu-clock -F 1000 -m 4 >"$tmp/id" 2>"$tmp/err" ||
	fail "start: $(cat "$tmp/err")"
id=$(cat "$tmp/id")
"$WL/split603010" 7 &
wpid=$!
sleep 1
lock_shm ofd 120 1 3
wait "$lock_job"
# the rings' LOST records come once ingest (at nice 19, behind whatever
# else runs) has made room in the spool: status shows them from then on,
# while the session runs (a CPU hog delayed that past 1 s in a CI run)
i=0
while :; do
	sleep 0.5
	"$STROBE" status >"$tmp/st" 2>&1 || fail "status: $(cat "$tmp/st")"
	i=$((i + 1))
	sed -n "s/^session $id running .* \([1-9][0-9]*\) lost, database .*/\1/p" "$tmp/st" |
		grep -q . && break
	[ $i -ge 20 ] && break
done
wait "$wpid"
"$STROBE" stop >"$tmp/stop" 2>&1 || fail "stop: $(cat "$tmp/stop")"
lost=$(sed -n "s/^session $id: [0-9]* samples, \([0-9]*\) lost.*/\1/p" "$tmp/stop")
[ -n "$lost" ] && [ "$lost" -gt 0 ] || fail "3 s locked with 16 KiB rings lost nothing: $(cat "$tmp/stop")"
[ "$(q "SELECT lost FROM sessions WHERE id=$id")" = "$lost" ] &&
[ "$(q "SELECT sum(count) FROM lost WHERE session_id=$id")" = "$lost" ] ||
	fail "the stored losses differ from stop's $lost"
slost=$(sed -n "s/^session $id running .* \([0-9]*\) lost, database .*/\1/p" "$tmp/st")
[ -n "$slost" ] && [ "$slost" -gt 0 ] || fail "status does not show the losses: $(cat "$tmp/st")"
grep -q "locked by pid $apid (python3, uid $nuid), with a file description read lock" \
	"$tmp/strobed.log" || fail "the OFD lock's holder is not named: $(tail -n 5 "$tmp/strobed.log")"
ok "an OFD lock with small rings: $lost records counted lost and shown"

# (3) a stop under the lock waits, then completes, losses counted
"$STROBE" start --sample-event cpu-clock -F 1000 -m 4 >"$tmp/id" 2>"$tmp/err" ||
	fail "start: $(cat "$tmp/err")"
id=$(cat "$tmp/id")
lock_shm posix 120 1 4
sleep 2
"$STROBE" stop >"$tmp/stop" 2>&1 &
stop_job=$!
sleep 0.5
kill -0 "$stop_job" 2>/dev/null || fail "stop returned while the database was locked: $(cat "$tmp/stop")"
"$STROBE" status >"$tmp/st" 2>&1 || fail "status: $(cat "$tmp/st")"
grep -q "^stopping" "$tmp/st" || fail "status does not say stopping: $(cat "$tmp/st")"
wait "$lock_job"
wait "$stop_job" || fail "stop failed: $(cat "$tmp/stop")"
lost=$(sed -n "s/^session $id: [0-9]* samples, \([0-9]*\) lost.*/\1/p" "$tmp/stop")
[ -n "$lost" ] && [ "$lost" -gt 0 ] || fail "the stop under the lock lost nothing: $(cat "$tmp/stop")"
[ "$(q "SELECT lost FROM sessions WHERE id=$id")" = "$lost" ] || fail "stored losses differ from $lost"
[ "$(q "SELECT state FROM sessions WHERE id=$id")" = done ] || fail "session $id is not done"
ok "a stop under the lock waits for it, stores the session and counts $lost lost"

# (4) a pinned WAL is reported
"$STROBE" start --sample-event cpu-clock -F 1000 -e page-faults >"$tmp/id" 2>"$tmp/err" ||
	fail "start: $(cat "$tmp/err")"
id=$(cat "$tmp/id")
"$WL/split603010" 20 &
wpid=$!
lock_shm posix 121 7 60
i=0
# a first message may come before the lock shows (the WAL was over the
# limit already, on a busy machine): strobed logs again once it can name it
while ! grep -q "cannot be checkpointed: pid $apid (python3, uid $nuid)" "$tmp/strobed.log"; do
	i=$((i + 1))
	[ $i -gt 300 ] && fail "no word naming $apid of the pinned WAL ($(stat -c %s "$STROBE_DB-wal") bytes): $(grep "max-wal" "$tmp/strobed.log")"
	sleep 0.1
done
kill "$apid" "$wpid" 2>/dev/null
wait "$lock_job" "$wpid" 2>/dev/null
"$STROBE" stop >"$tmp/stop" 2>&1 || fail "stop: $(cat "$tmp/stop")"
[ "$(q "SELECT state FROM sessions WHERE id=$id")" = done ] || fail "session $id is not done"
ok "a pinned WAL is logged with the holder's pid"

# (5) a restart after SIGKILL under the lock waits for it, naming it
"$STROBE" start --sample-event cpu-clock -F 500 >"$tmp/id" 2>"$tmp/err" || fail "start: $(cat "$tmp/err")"
id=$(cat "$tmp/id")
sleep 0.5
kill -KILL "$daemon_pid"
wait "$daemon_pid" 2>/dev/null
daemon_pid=
lock_shm posix 120 1 4
start_daemon
grep -q "waiting for the database: it is locked by pid $apid (python3, uid $nuid)" "$tmp/strobed.log" ||
	fail "the restart does not name the holder: $(cat "$tmp/strobed.log")"
kill -0 "$lock_job" 2>/dev/null && fail "strobed answered while the lock was held"
[ "$(q "SELECT state FROM sessions WHERE id=$id")" = interrupted ] ||
	fail "session $id is $(q "SELECT state FROM sessions WHERE id=$id") after the restart"
grep -q "session $id was interrupted" "$tmp/strobed.log" || fail "no log of the marking"
ok "a restart under the lock waits for it, naming the holder, then marks the session"
