#!/bin/sh
# t0154-unwind-worker: strobed (root) does not unwind --call-graph dwarf
# stacks itself (issue 30): a child of strobed named strobe-unwind does,
# and it runs as the workers' user, _strobe or else nobody (every uid and gid), with no capability (CapEff,
# CapPrm, CapBnd 0), NoNewPrivs 1, a seccomp filter (Seccomp 2, where
# built) and no supplementary group.  A worker that hangs (SIGSTOP) is
# killed after its timeout, one that crashes (SIGSEGV) is reaped, and each
# is replaced: the session goes on and stops cleanly, the samples of
# the workload's last 3 s (after the crash) still get complete stacks of calltree-nofp (leaf <- outer_a|
# outer_b <- main), and unwind_errors counts the samples lost as
# 'unwinder failed', a few at most (the batches in flight, of at most 64
# samples each; none when the requests in flight were a new binary's
# build-id or a JIT file, which the same worker parses: then the log
# counts the files not parsed), and strobed's log
# says at the stop how often the worker crashed and hung.  The worker is
# strobed executed afresh (selfexec.h), not a forked copy: its memory holds
# nothing of strobed's, not a secret in strobed's environment (a forked
# copy would hold it, as it would the ClickHouse password).
. "$(dirname "$0")/lib.sh"
need_root

wuid=$(worker_uid)
secret="t0154-secret-$$-$(od -An -N8 -tx8 /dev/urandom | tr -d ' ')"
STROBE_T0154_SECRET=$secret
export STROBE_T0154_SECRET
# unwinding while the workload runs, at strobed's own priority: at nice 19
# a busy machine (another process spinning on the other CPU) starves
# ingest, and with it the requests that show a worker hung, for longer
# than this test waits
start_daemon --ingest-defer off --ingest-nice 0
# only strobed has it: the workloads' stacks (env strings at their top) go
# to the worker, and so would any process's that had it
unset STROBE_T0154_SECRET
echo "$secret" >"$tmp/secret"
"$STROBE" start --call-graph dwarf --sample-event cpu-clock -F 1000 --name uw >/dev/null \
	2>"$tmp/start.err" || fail "start: $(cat "$tmp/start.err")"
sh -c 'echo $$ >"$1"; exec "$2" 20' sh "$tmp/pid" "$WL/calltree-nofp" &
wl=$!

# worker [NOT]: the pid of strobed's child strobe-unwind (not NOT), 10 s at most
worker() {
	i=0
	while :; do
		for p in $(pgrep -P "$daemon_pid" -x strobe-unwind); do
			[ "$p" != "${1:-}" ] && { echo "$p"; return 0; }
		done
		i=$((i + 1))
		[ $i -gt 100 ] && return 1
		sleep 0.1
	done
}

w1=$(worker) || fail "no strobe-unwind child of strobed during a dwarf session (unwinding in strobed?)"
st=/proc/$w1/status
field() { sed -n "s/^$1:[[:space:]]*//p" "$st" | tr -s ' \t' ' '; }
[ "$(field Uid)" = "$wuid $wuid $wuid $wuid" ] || fail "worker Uid: $(field Uid)"
[ "$(field Gid | cut -d' ' -f1-4)" != "0 0 0 0" ] || fail "worker Gid: $(field Gid)"
[ -z "$(field Groups)" ] || fail "worker Groups: $(field Groups)"
for c in CapEff CapPrm CapInh CapBnd CapAmb; do
	[ "$(field $c)" = 0000000000000000 ] || fail "worker $c: $(field $c)"
done
[ "$(field NoNewPrivs)" = 1 ] || fail "worker NoNewPrivs: $(field NoNewPrivs)"
if grep -q "define HAVE_SECCOMP 1" "$build/config.h"; then
	[ "$(field Seccomp)" = 2 ] || fail "worker Seccomp: $(field Seccomp)"
fi
ok "dwarf unwinding runs in strobe-unwind (pid $w1): uid $wuid, no capabilities, seccomp $(field Seccomp)"
grep -q STROBE_T0154_SECRET "/proc/$daemon_pid/environ" || fail "strobed does not have the secret in its environment"
[ ! -s "/proc/$w1/environ" ] || fail "the worker has an environment: $(tr '\0' ' ' <"/proc/$w1/environ" | cut -c1-200)"
python3 - "$w1" "$tmp/secret" <<'PY' || fail "the worker holds strobed's memory (a forked copy, not executed afresh)"
import re, sys
pid = sys.argv[1]
secret = open(sys.argv[2], "rb").read().strip()
found = []
with open(f"/proc/{pid}/maps") as maps, open(f"/proc/{pid}/mem", "rb", 0) as mem:
    for line in maps:
        lo, hi = (int(x, 16) for x in line.split()[0].split("-"))
        if "r" not in line.split()[1] or hi - lo > 1 << 30:
            continue
        try:
            mem.seek(lo)
            if secret in mem.read(hi - lo):
                found.append(line.strip())
        except OSError:
            pass
if found:
    sys.exit("strobed's secret found in the worker's memory: " + "; ".join(found[:3]))
PY
ok "the worker holds none of strobed's memory (no environment, the secret absent)"

kill -STOP "$w1"
w2=$(worker "$w1") || fail "no new worker after the hung one"
kill -0 "$w1" 2>/dev/null && fail "the hung worker $w1 was not killed"
sleep 1
kill -SEGV "$w2"
t_kill=$(python3 -c 'import time; print(time.clock_gettime_ns(time.CLOCK_MONOTONIC))')
w3=$(worker "$w2") || fail "no new worker after the crashed one: $(kill -0 $daemon_pid && echo strobed alive; pgrep -a -P $daemon_pid; "$STROBE" status; cat "$tmp/strobed.log")"
ok "hung worker $w1 killed, crashed $w2 replaced by $w3"
wait $wl || fail "calltree-nofp failed"
"$STROBE" stop >"$tmp/stop.out" 2>"$tmp/stop.err" || fail "stop: $(cat "$tmp/stop.err")"
kill -0 "$daemon_pid" || fail "strobed died"
id=$(sqlq "$STROBE_DB" "SELECT max(id) FROM sessions")

python3 - "$STROBE_DB" "$id" "$(cat "$tmp/pid")" "$t_kill" "$tmp/failed" <<'PY' || fail "stacks after the crash"
import struct, sys
import strobedb
db = strobedb.connect(sys.argv[1])
sid, pid, t_kill = int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
q = lambda sql, *a: db.execute(sql, a).fetchall()
prog = {r[0] for r in q("SELECT id FROM binaries WHERE path LIKE '%/workloads/calltree-nofp'")}
assert prog, "calltree-nofp not stored"
stacks = {}
for i, nr, flags, frames in q("SELECT id, nr, flags, frames FROM stacks WHERE session_id=?", sid):
    stacks[i] = (flags, [struct.unpack_from("<qq", frames, 16 * k) for k in range(nr)])
good = total = 0
# the workload's last 3 s: taken after the crash (ingest cannot be ahead)
last = q("SELECT max(time_ns) FROM samples WHERE session_id=? AND pid=?", sid, pid)[0][0]
assert last and last - 3000000000 > t_kill, f"the workload ended {(t_kill - (last or 0)) / 1e9:.1f} s before the crash"
for (stack_id, n) in q("SELECT stack_id, count(*) FROM samples WHERE session_id=? AND pid=? "
                       "AND time_ns > ? GROUP BY stack_id", sid, pid, last - 3000000000):
    total += n
    if stack_id is None:
        continue
    flags, frames = stacks[stack_id]
    if not flags & 1 and sum(1 for f in frames if f[0] in prog) >= 3:
        good += n
assert total >= 1000, f"only {total} samples of calltree-nofp in its last 3 s"
assert good >= 0.9 * total, f"{good} of {total} samples after the crash with a complete stack"
failed = q("SELECT coalesce(sum(count), 0) FROM unwind_errors WHERE session_id=? AND "
           "reason='unwinder failed'", sid)[0][0]
# the batches in flight when the worker hung and when it crashed: each
# at most UWORKER_BATCH (64) samples (lib/ingest/uworker.h); 0 when the
# requests in flight were a new binary's build-id or a JIT file (the same
# worker parses them: checked below, in strobed's log)
assert 0 <= failed <= 2 * 64, f"unwind_errors: {failed} 'unwinder failed' (the batches in flight: 0 to 128)"
open(sys.argv[5], "w").write(str(failed))
print(f"{good} of {total} samples after the crash with complete stacks; "
      f"{failed} 'unwinder failed'")
PY
grep -q "session $id: the unwind worker crashed [1-9][0-9]* times and hung [1-9][0-9]* (killed)" \
	"$tmp/strobed.log" || fail "strobed's log does not say the unwind worker failed: $(cat "$tmp/strobed.log")"
[ "$(cat "$tmp/failed")" -ge 1 ] ||
	grep -q "session $id: the ingest worker did not parse [1-9]" "$tmp/strobed.log" ||
	fail "the hung and the crashed worker cost no sample and no file: $(cat "$tmp/strobed.log")"
ok "the session went on: later stacks complete, the samples or files lost counted"
