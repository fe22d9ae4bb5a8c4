#!/bin/sh
# t0601-count-save: 'strobe count --save NAME' stores the counts as a count
# session in strobed's database.  -I 50 over pagetouch N --phases: the
# session is listed by 'strobe sessions' (backend count, its events), its
# count_values rows are the intervals strobe count printed (same sum), and
# 'strobe plot --session ID --event page-faults' gives buckets summing to
# them; a run without -I is one interval.  strobed refuses malformed
# count requests (bad values, unknown event index, bad event, another
# count session's end), each with one error line, and stores nothing of
# them; 'strobe rm' removes the values.  Without strobed, --save is one
# line and exit 1; with -r, a usage error.
. "$(dirname "$0")/lib.sh"
need_root

N=20000

# --save without strobed: one line, exit 1 (the counts are still printed)
"$STROBE" count -x, -e page-faults --save nodaemon -o "$tmp/nd.csv" -- true 2>"$tmp/nd.err"
rc=$?
[ $rc = 1 ] && [ "$(wc -l <"$tmp/nd.err")" = 1 ] && grep -q -- "--save: strobed on" "$tmp/nd.err" ||
	{ cat "$tmp/nd.err"; fail "--save without strobed: rc $rc"; }
grep -q ',page-faults,' "$tmp/nd.csv" || fail "--save without strobed printed no counts"
"$STROBE" count -r 2 --save x -- true 2>"$tmp/r.err"
[ $? = 2 ] && grep -q -- "--save does not go with -r" "$tmp/r.err" || fail "--save -r: $(cat "$tmp/r.err")"
ok "--save without strobed, and with -r: refused"

start_daemon

"$STROBE" count -x, -I 50 -e page-faults,task-clock --save faults -o "$tmp/i.csv" \
	-- "$WL/pagetouch" $N --phases >/dev/null 2>"$tmp/save.err" || { cat "$tmp/save.err"; fail "count --save failed"; }
id=$(sed -n 's/.*saved as count session \([0-9]*\).*/\1/p' "$tmp/save.err")
[ -n "$id" ] || { cat "$tmp/save.err"; fail "no 'saved as count session' line"; }
"$STROBE" sessions --format csv >"$tmp/s.csv" || fail "sessions"
python3 - "$tmp/s.csv" "$id" <<'PY' || fail "sessions does not list count session $id"
import csv, sys
rows = {r["id"]: r for r in csv.DictReader(open(sys.argv[1]))}
r = rows[sys.argv[2]]
assert r["name"] == "faults" and r["backend"] == "count", r
assert "page-faults" in r["events"] and "task-clock" in r["events"], r
PY
printed=$(awk -F, '$4 == "page-faults" { s += $2 } END { print s }' "$tmp/i.csv")
stored=$(sqlq "$STROBE_DB" "SELECT sum(value) FROM count_values WHERE session_id=$id AND event_idx=0")
nint=$(sqlq "$STROBE_DB" "SELECT count(*) FROM count_values WHERE session_id=$id AND event_idx=0")
lines=$(awk -F, '$4 == "page-faults"' "$tmp/i.csv" | wc -l)
[ "${stored%.0}" = "$printed" ] && [ "$nint" = "$lines" ] ||
	fail "stored $stored in $nint intervals, printed $printed in $lines"
[ "$printed" -ge $N ] || fail "page-faults $printed < $N"
"$STROBE" plot --session "$id" --event page-faults --bucket 100 -o "$tmp/p.csv" 2>"$tmp/p.err" ||
	{ cat "$tmp/p.err"; fail "plot of count session $id"; }
plotted=$(python3 -c 'import csv,sys; print(int(sum(float(r["page-faults"]) for r in csv.DictReader(open(sys.argv[1])))))' "$tmp/p.csv")
[ "$plotted" = "$printed" ] || fail "plot sums to $plotted, strobe count printed $printed"
"$STROBE" plot --session "$id" --event page-faults --by pid -o "$tmp/x.csv" 2>"$tmp/by.err"
[ $? != 0 ] && grep -q "count session" "$tmp/by.err" || fail "plot --by pid of a count session: $(cat "$tmp/by.err")"
ok "count session $id: $lines intervals, $printed page faults printed = stored = plotted"

# a run without -I: one interval
"$STROBE" count -e page-faults --save once -- "$WL/pagetouch" 1000 2>"$tmp/once.err" || fail "--save once"
id2=$(sed -n 's/.*saved as count session \([0-9]*\).*/\1/p' "$tmp/once.err")
n2=$(sqlq "$STROBE_DB" "SELECT count(*) FROM count_values WHERE session_id=$id2")
[ "$n2" = 1 ] || fail "a run without -I stored $n2 values, want 1"
ok "without -I: one interval"

# malformed requests: refused, nothing stored
req() { strobed_req "$1"; }
before=$(sqlq "$STROBE_DB" "SELECT count(*) FROM count_values")
for r in "count-data session=$id2 values=1,0,,-5,100" \
	 "count-data session=$id2 values=1,7,,5,100" \
	 "count-data session=$id2 values=garbage" \
	 "count-data session=$id2 values=1,0,,5,100" \
	 "count-data session=999 values=1,0,,5,100" \
	 "count-begin start_ns=1 wall_offset_ns=0 ev0=x:1:2:3:y" \
	 "count-begin start_ns=1 wall_offset_ns=0" \
	 "count-end session=$id2 end_ns=5"; do
	out=$(req "$r")
	case $out in
	error*) ;;
	*) fail "strobed accepted '$r': $out" ;;
	esac
done
after=$(sqlq "$STROBE_DB" "SELECT count(*) FROM count_values")
[ "$before" = "$after" ] || fail "refused requests stored values ($before -> $after)"
ok "malformed count requests refused, nothing stored"

"$STROBE" rm "$id" >/dev/null || fail "rm $id"
i=0
while [ "$(sqlq "$STROBE_DB" "SELECT count(*) FROM count_values WHERE session_id=$id")" != 0 ]; do
	i=$((i + 1))
	[ $i -gt 200 ] && fail "rm left count session $id's values"
	sleep 0.05
done
ok "rm removes a count session's values"
exit 0
