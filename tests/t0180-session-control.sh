#!/bin/sh
# t0180-session-control: sessions driven through a running strobed: strobe
# start prints the new session's id, strobe status shows it running with
# samples, a second start is refused (exit 1, with a message saying why),
# strobe stop prints samples/lost/duration, and strobe sessions lists it as
# done with those numbers; the 200000 page faults of pagetouch counted in it
# add up (within 2%; counts read at each context switch too, so that other
# processes' faults on its CPU, under load, are not charged to it).  Then a session still running when strobed gets
# SIGTERM is ended and stored as done with its samples, and strobed exits 0.
. "$(dirname "$0")/lib.sh"
need_root

start_daemon
"$STROBE" status >"$tmp/st0" || fail "status"
grep -q "no session running" "$tmp/st0" || fail "status before start: $(cat "$tmp/st0")"

"$STROBE" start --sample-event cpu-clock -F 1000 -e page-faults --attribution exact --name ctl \
	>"$tmp/id" 2>"$tmp/start.err" ||
	fail "start: $(cat "$tmp/start.err")"
id=$(cat "$tmp/id")
case $id in ''|*[!0-9]*) fail "start printed '$id', not a session id" ;; esac

sleep 0.3
"$WL/split603010" 0.3 || fail "split603010"
"$STROBE" status >"$tmp/st1" || fail "status"
cat "$tmp/st1"
python3 - "$tmp/st1" "$id" <<'PY' || fail "status while running: $(cat "$tmp/st1")"
import re, sys
s = open(sys.argv[1]).read()
m = re.match(r"session (\d+) running for ([\d.]+) s: (\d+) samples", s)
assert m, "no 'session N running for T s: N samples'"
assert m.group(1) == sys.argv[2], f"status names session {m.group(1)}, not {sys.argv[2]}"
assert int(m.group(3)) > 0, "no samples yet"
PY

# a second session at the same time is refused, and says why
"$STROBE" start --sample-event cpu-clock >"$tmp/id2" 2>"$tmp/start2.err"
rc=$?
[ $rc -eq 1 ] || fail "second start: exit $rc, want 1 (out: $(cat "$tmp/id2"))"
cat "$tmp/start2.err"
grep -qi "already running" "$tmp/start2.err" || fail "second start message: $(cat "$tmp/start2.err")"
[ -s "$tmp/id2" ] && fail "second start printed an id: $(cat "$tmp/id2")"

# real-time priority: no other process may take pagetouch's CPU (counters
# are per CPU, see t0110)
rt=
command -v chrt >/dev/null && chrt -f 10 true 2>/dev/null && rt="chrt -f 10"
$rt "$WL/pagetouch" 200000 || fail "pagetouch"
"$STROBE" stop >"$tmp/stop" 2>"$tmp/stop.err" || fail "stop: $(cat "$tmp/stop.err")"
cat "$tmp/stop"
"$STROBE" stop >/dev/null 2>&1 && fail "stop without a running session succeeded"
"$STROBE" status >"$tmp/st2" || fail "status"
grep -q "no session running" "$tmp/st2" || fail "status after stop: $(cat "$tmp/st2")"

"$STROBE" sessions --format csv >"$tmp/sessions.csv" || fail "sessions"
python3 - "$tmp/stop" "$tmp/sessions.csv" "$id" <<'PY' || fail "stop output vs sessions: $(cat "$tmp/stop")"
import csv, re, sys
stop = open(sys.argv[1]).read()
m = re.match(r"session (\d+): (\d+) samples, (\d+) lost, ([\d.]+) s", stop)
assert m, "stop does not print 'session N: N samples, N lost, T s'"
sid, samples, lost, dur = m.group(1), int(m.group(2)), int(m.group(3)), float(m.group(4))
assert sid == sys.argv[3], f"stop ended session {sid}, not {sys.argv[3]}"
assert samples > 300, f"only {samples} samples"
assert dur >= 0.6, f"duration {dur} s, but the session ran at least 0.6 s"
rows = [r for r in csv.DictReader(open(sys.argv[2])) if r["id"] == sid]
assert len(rows) == 1, "session not listed once"
r = rows[0]
print(f"session {sid}: {samples} samples, {lost} lost, {dur} s; listed as {r['state']}")
assert r["name"] == "ctl" and r["state"] == "done", r
assert int(r["samples"]) == samples and int(r["lost"]) == lost, r
assert abs(float(r["duration_s"]) - dur) < 0.01, r
assert r["sample_event"] == "cpu-clock" and r["events"] == "page-faults", r
PY

# the session's data is there: pagetouch's 200000 faults and split603010
"$STROBE" report --session "$id" --comm pagetouch --format csv >"$tmp/pt.csv" || fail "report pagetouch"
pf=$(python3 -c 'import csv,sys; print(sum(int(r["page-faults"]) for r in csv.DictReader(open(sys.argv[1]))))' "$tmp/pt.csv")
echo "pagetouch: $pf page faults"
near "$pf" 200000 2 || fail "pagetouch: $pf page faults attributed, not 200000 within 2%"
"$STROBE" report --session "$id" --comm split603010 --limit 1 --format csv >"$tmp/sp.csv" || fail "report"
grep -q ',work60,' "$tmp/sp.csv" || fail "split603010 top is not work60: $(cat "$tmp/sp.csv")"
ok "start/status/stop/sessions"

# SIGTERM to strobed with a session running: stored as done, exit 0
"$STROBE" start --sample-event cpu-clock -F 1000 --name term >"$tmp/id3" || fail "start again"
id3=$(cat "$tmp/id3")
[ "$id3" -gt "$id" ] 2>/dev/null || fail "second session id '$id3' after '$id'"
"$WL/split603010" 0.5 || fail "split603010"
stop_daemon
rc=$?
[ $rc -eq 0 ] || { cat "$tmp/strobed.log"; fail "strobed exited $rc on SIGTERM"; }
"$STROBE" sessions --format csv >"$tmp/sessions2.csv" || fail "sessions"
python3 - "$tmp/sessions2.csv" "$id3" <<'PY' || fail "session ended by SIGTERM: $(cat "$tmp/sessions2.csv")"
import csv, sys
r = [r for r in csv.DictReader(open(sys.argv[1])) if r["id"] == sys.argv[2]]
assert len(r) == 1, "not listed"
r = r[0]
print(f"session {r['id']} after SIGTERM: {r['state']}, {r['samples']} samples, {r['duration_s']} s")
assert r["state"] == "done", f"state {r['state']}"
assert int(r["samples"]) > 300, f"samples {r['samples']}"
assert r["duration_s"] and float(r["duration_s"]) >= 0.5, f"duration {r['duration_s']}"
PY
"$STROBE" report --session "$id3" --comm split603010 --limit 1 --format csv >"$tmp/sp3.csv" 2>"$tmp/sp3.err" ||
	fail "report of the SIGTERM session"
grep -q ',work60,' "$tmp/sp3.csv" || fail "SIGTERM session top is not work60: $(cat "$tmp/sp3.csv")"
grep -q "aborted\|still running" "$tmp/sp3.err" && fail "report says: $(cat "$tmp/sp3.err")"
ok "SIGTERM ends the session cleanly"
