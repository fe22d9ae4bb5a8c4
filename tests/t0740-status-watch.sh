#!/bin/sh
# t0740-status-watch: strobe status --watch against a private strobed.  A
# cpu-clock session at -F 1000 while bench/spin keeps every CPU busy;
# 'status --watch --interval 0.5 --count 4' (not a terminal) prints a
# header and 4 lines in which the per-CPU samples/s add up to the total
# (the same snapshot: exact but for rounding), the total is between 0.2
# and 1.2 x F x the CPUs kept busy, and the per-CPU lost add up to the
# lost; the columns keep their places, and ingest_wait_s, last, shows
# ingest waiting for an idle CPU on the busy CPUs (or, starved as a
# SCHED_IDLE thread before it could say so, a lag that only grows).  Once ingest has caught
# up, the database size it gives is what stat says of the file and its
# WAL, its lost total is strobe status's, and it shows no wait.
# With no session it says so each refresh; a bad --interval is one line
# and exit 2; SIGINT ends it with exit 0; strobed killed ends it with exit
# 1 and one line.  Through a pty (script -qec) it clears the screen and
# draws a line per CPU; into a file it never does.
. "$(dirname "$0")/lib.sh"
need_root
command -v script >/dev/null || skip "script (util-linux) is not installed"
F=1000

start_daemon
"$STROBE" start --sample-event cpu-clock -F $F >"$tmp/id" 2>"$tmp/start.err" ||
	fail "start: $(cat "$tmp/start.err")"
id=$(cat "$tmp/id")
ncpu=$(getconf _NPROCESSORS_ONLN)
spins_start
sleep 0.5
"$STROBE" status --watch --interval 0.5 --count 4 >"$tmp/watch" 2>"$tmp/watch.err"
rc=$?
spins_stop
cat "$tmp/watch"
[ $rc = 0 ] || fail "status --watch exited $rc: $(cat "$tmp/watch.err")"
[ -s "$tmp/watch.err" ] && fail "status --watch wrote on stderr: $(cat "$tmp/watch.err")"
grep -q "$(printf '\033')" "$tmp/watch" && fail "escape sequences in the output to a file"
python3 - "$tmp/watch" "$id" "$F" "$ncpu" <<'PY' || fail "the watch lines (above)"
import sys
lines = open(sys.argv[1]).read().splitlines()
sid, F, busy = sys.argv[2], float(sys.argv[3]), int(sys.argv[4])
assert len(lines) == 5, f"{len(lines)} lines, not a header and 4"
head = lines[0].split()
for col in ("time", "session", "elapsed_s", "samples/s", "lost", "lost_total", "lag_records",
            "lag_s", "spool_mem", "spool_disk", "db_bytes", "cpus", "cpu_samples/s", "cpu_lost",
            "ingest_wait_s"):
    assert col in head, f"no column {col} in the header {head}"
# new columns go last: the first 14 keep their places
assert head[:14] == ["time", "session", "elapsed_s", "samples/s", "lost", "lost_total",
                     "lag_records", "lag_s", "spool_mem", "spool_disk", "db_bytes", "cpus",
                     "cpu_samples/s", "cpu_lost"], f"the columns moved: {head}"
waits, lags = [], []
lo, hi = 0.2 * F * busy, 1.2 * F * busy
for l in lines[1:]:
    w = l.split()
    assert len(w) == len(head), f"{len(w)} columns, header has {len(head)}: {l}"
    r = dict(zip(head, w))
    assert r["session"] == sid, f"session {r['session']}, not {sid}"
    cpus = r["cpus"].split(",")
    assert len(cpus) == busy, f"{len(cpus)} CPUs listed, {busy} online"
    per = [float(x) for x in r["cpu_samples/s"].split(",")]
    lost = [int(x) for x in r["cpu_lost"].split(",")]
    assert len(per) == len(cpus) == len(lost), f"per-CPU lists of different lengths: {l}"
    total = float(r["samples/s"])
    # each figure rounded to 0.1: the sum within 0.05 per term
    tol = 0.05 * (len(per) + 1) + 1e-6
    assert abs(sum(per) - total) <= tol, f"per-CPU samples/s sum to {sum(per):.2f}, total {total}"
    assert sum(lost) == int(r["lost"]), f"per-CPU lost sum to {sum(lost)}, lost {r['lost']}"
    assert int(r["lost_total"]) >= int(r["lost"]) >= 0, l
    assert lo <= total <= hi, (f"{total} samples/s, not between 0.2 and 1.2 x {F:.0f} Hz x "
                               f"{busy} busy CPUs ({lo:.0f}..{hi:.0f})")
    assert int(r["db_bytes"]) > 0, f"db_bytes {r['db_bytes']}"
    wait = float(r["ingest_wait_s"])
    assert 0 <= wait <= float(r["elapsed_s"]) + 0.001, f"ingest_wait_s {wait}: {l}"
    waits.append(wait)
    lags.append(int(r["lag_records"]))
    print(f"ok: {total} samples/s = sum of {per}; lost {r['lost']} (total {r['lost_total']}); "
          f"ingest waits {wait} s")
# every CPU spins and strobed runs with the default --ingest-defer busy:
# ingest waits, or, a SCHED_IDLE thread, the scheduler never gave it the
# moment to say so (no record ingested: the lag only grows; a run of the
# suite saw that for all 2.6 s)
assert max(waits) > 0 or all(b > a for a, b in zip(lags, lags[1:])), \
    f"ingest_wait_s stayed 0 on busy CPUs while ingest went on: {waits}, lag {lags}"
PY
ok "4 lines: per-CPU samples/s sum to the total, plausible for $ncpu busy CPUs at $F Hz; ingest waited"

# ingest caught up: the size strobed gives is stat's, the lost status's
i=0
while ! "$STROBE" status | grep -q '^ingest: 0 records behind'; do
	i=$((i + 1))
	[ $i -gt 300 ] && fail "ingest did not catch up in 30 s: $("$STROBE" status)"
	sleep 0.1
done
"$STROBE" status --watch -i 0.2 -n 1 >"$tmp/w1" || fail "status --watch -n 1"
size=$(($(stat -c %s "$STROBE_DB") + $( [ -e "$STROBE_DB-wal" ] && stat -c %s "$STROBE_DB-wal" || echo 0)))
"$STROBE" status >"$tmp/st" || fail "status"
cat "$tmp/w1" "$tmp/st"
python3 - "$tmp/w1" "$tmp/st" "$size" <<'PY' || fail "database size or lost (above)"
import re, sys
lines = open(sys.argv[1]).read().splitlines()
r = dict(zip(lines[0].split(), lines[1].split()))
st = open(sys.argv[2]).read()
size = int(sys.argv[3])
m = re.match(r"session \d+ running for [\d.]+ s: \d+ samples, [\d.]+ samples/s, (\d+) lost", st)
assert m, "strobe status's first line"
assert int(r["lost_total"]) == int(m.group(1)), f"lost_total {r['lost_total']}, status {m.group(1)}"
assert float(r["ingest_wait_s"]) == 0, f"ingest_wait_s {r['ingest_wait_s']} after it caught up"
db = int(r["db_bytes"])
assert abs(db - size) <= max(64 * 1024, size // 20), f"db_bytes {db}, stat says {size}"
print(f"ok: db_bytes {db}, stat {size}; lost {r['lost_total']} as status says")
PY
ok "database size and lost total"

# through a pty: the screen cleared, a line per CPU
script -qec "$STROBE status --watch --interval 0.2 --count 2" /dev/null >"$tmp/tty" 2>&1 ||
	fail "status --watch in a pty: $(cat "$tmp/tty")"
grep -q "$(printf '\033\\[2J')" "$tmp/tty" || fail "no clear-screen sequence on a terminal: $(cat -v "$tmp/tty")"
percpu=$(tr -d '\r' <"$tmp/tty" | awk '/CPU +samples\/s/ { n = 0; on = 1; next } on && /^ +[0-9]+ +[0-9.-]+ / { n++ } END { print n }')
[ "$percpu" = "$ncpu" ] || fail "the last screen has $percpu CPU lines, not $ncpu: $(cat -v "$tmp/tty")"
ok "a terminal gets the screen redrawn, with $percpu CPU lines"

"$STROBE" stop >/dev/null || fail "stop"
"$STROBE" status --watch --interval 0.2 --count 2 >"$tmp/none" 2>&1 || fail "status --watch without a session"
cat "$tmp/none"
[ "$(grep -c 'no session running' "$tmp/none")" = 2 ] || fail "not 2 lines 'no session running'"
ok "no session: said at each refresh"

for bad in 0.05 0 -1 abc 1s nan; do
	refused 2 status "interval" "$STROBE" status --watch --interval "$bad"
done
refused 2 status "count" "$STROBE" status --watch --count 0
ok "bad --interval and --count: one line, exit 2"

# SIGINT: exit 0
"$STROBE" status --watch --interval 0.2 >"$tmp/int" 2>&1 &
w=$!
sleep 0.7
kill -INT $w
wait $w
rc=$?
[ $rc = 0 ] || fail "SIGINT: exit $rc, not 0: $(cat "$tmp/int")"
[ "$(grep -c 'no session running' "$tmp/int")" -ge 1 ] || fail "SIGINT: nothing shown before: $(cat "$tmp/int")"
ok "SIGINT ends it with exit 0"

# strobed killed: exit 1, one line
"$STROBE" status --watch --interval 0.2 >"$tmp/gone" 2>"$tmp/gone.err" &
w=$!
sleep 0.5
kill -KILL "$daemon_pid"
wait "$daemon_pid" 2>/dev/null
daemon_pid=
i=0
while kill -0 $w 2>/dev/null; do
	i=$((i + 1))
	[ $i -gt 50 ] && { kill $w; fail "status --watch still running 5 s after strobed died"; }
	sleep 0.1
done
wait $w
rc=$?
cat "$tmp/gone.err"
[ $rc = 1 ] || fail "strobed gone: exit $rc, not 1"
[ "$(wc -l <"$tmp/gone.err")" = 1 ] || fail "strobed gone: not one line on stderr: $(cat "$tmp/gone.err")"
grep -q '^strobe status: .*strobed' "$tmp/gone.err" || fail "strobed gone: $(cat "$tmp/gone.err")"
ok "strobed gone: one line, exit 1"
