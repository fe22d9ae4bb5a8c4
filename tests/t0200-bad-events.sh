#!/bin/sh
# t0200-bad-events: every bad event or rate is refused before anything
# starts, with exactly one line "strobe CMD: ..." on stderr that names the
# problem and says what to do, and a non-zero exit: 2 for what the CLI itself
# can tell is wrong (unknown names, more than 8 events, -F 0/abc, -F with -c),
# 1 for what only strobed can tell (an event the kernel refuses on this
# machine, -F above kernel.perf_event_max_sample_rate). No session row is
# added and the session recorded first reports the same afterwards, through
# both 'strobe record' (private strobed) and 'strobe start' (running strobed).
# 'strobe list' works and lists the software events.
. "$(dirname "$0")/lib.sh"
need_root


nsessions() {
	"$STROBE" sessions --format csv >"$tmp/s.csv" || fail "sessions: $(cat "$tmp/s.csv")"
	echo $(($(wc -l <"$tmp/s.csv") - 1))
}

# what is stored must not change
unchanged() {
	[ "$(nsessions)" = 1 ] || fail "after $1: a session row was added: $(cat "$tmp/s.csv")"
	"$STROBE" report --session 1 --format csv >"$tmp/r.csv" 2>/dev/null || fail "report after $1"
	cmp -s "$tmp/r.csv" "$tmp/r0.csv" || fail "after $1: the report of session 1 changed"
}

# strobe list: exit 0 with the software events
"$STROBE" list >"$tmp/list" 2>"$tmp/list.err" || fail "strobe list: $(cat "$tmp/list.err")"
grep -q '^  cpu-clock ' "$tmp/list" || fail "strobe list lacks cpu-clock"
grep -q '^  page-faults ' "$tmp/list" || fail "strobe list lacks page-faults"

# the session that must survive everything below
"$STROBE" record --sample-event cpu-clock -F 500 -e page-faults -- "$WL/split603010" 1 \
	2>"$tmp/rec.err" >/dev/null || fail "good record: $(cat "$tmp/rec.err")"
"$STROBE" report --session 1 --format csv >"$tmp/r0.csv" 2>/dev/null || fail "report of session 1"
[ "$(nsessions)" = 1 ] || fail "expected one session: $(cat "$tmp/s.csv")"

# the kernel lowers its limit by itself when sampling costs too much: read it late
maxrate() { cat /proc/sys/kernel/perf_event_max_sample_rate; }
nine=page-faults,context-switches,cpu-migrations,minor-faults,major-faults,alignment-faults,emulation-faults,task-clock,cpu-clock

# 1. through 'strobe record' and its private strobed
R="$STROBE record --sample-event cpu-clock"
refused 2 record "unknown event 'no-such-event'.*strobe list" $R -e no-such-event -- true
refused 2 record "unknown event 'bogus:thing'.*strobe list" $R -e cycles,bogus:thing -- true
refused 2 record "unknown event 'nonsense'.*strobe list" "$STROBE" record --sample-event nonsense -- true
refused 2 record "too many events.*at most 8" $R -e $nine -- true
refused 2 record "bad frequency '0'" $R -F 0 -- true
refused 2 record "bad frequency 'abc'" $R -F abc -- true
refused 2 record "bad period '0'" $R -c 0 -- true
refused 2 record "-F and -c exclude each other" $R -F 1000 -c 100 -- true
# valid names the kernel refuses: a software event the kernel does not have
refused 1 record "event 'software/config=999/' is not supported on this machine.*strobe list" \
	$R -e software/config=999/ -- true
refused 1 record "event 'software/config=999/' is not supported on this machine.*strobe list" \
	"$STROBE" record --sample-event software/config=999/ -- true
lim=$(maxrate)
refused 1 record "$((lim + 1)) Hz is above the kernel's limit of [0-9]+ Hz.*perf_event_max_sample_rate" \
	$R -F $((lim + 1)) -- true
unchanged "the refused records"

# generic hardware names this machine does not list (none, without a PMU)
unlisted=
for ev in stalled-cycles-backend stalled-cycles-frontend bus-cycles ref-cycles cycles; do
	grep -q "^  $ev[ ]" "$tmp/list" || unlisted="$unlisted $ev"
done
for ev in $unlisted; do
	refused 1 record "event '$ev' is not supported on this machine.*strobe list" $R -e "$ev" -- true
done
unchanged "the unlisted hardware events"

# 2. through 'strobe start' and a running strobed (which probes as root)
start_daemon
S="$STROBE start --sample-event cpu-clock"
refused 2 start "unknown event 'bogus:thing'.*strobe list" $S -e cycles,bogus:thing
refused 2 start "unknown event 'nonsense'.*strobe list" "$STROBE" start --sample-event nonsense
refused 2 start "too many events.*at most 8" $S -e $nine
refused 2 start "-F and -c exclude each other" $S -F 1000 -c 100
refused 1 start "event 'software/config=999/' is not supported on this machine.*strobe list" \
	$S -e page-faults,software/config=999/
for ev in $unlisted; do
	refused 1 start "event '$ev' is not supported on this machine.*strobe list" $S -e "$ev"
done
lim=$(maxrate)
refused 1 start "$((lim + 1)) Hz is above the kernel's limit of [0-9]+ Hz.*perf_event_max_sample_rate" \
	$S -F $((lim + 1))
"$STROBE" status >"$tmp/status" || fail "status after the refused starts"
grep -q "no session running" "$tmp/status" || fail "a refused start left a session running: $(cat "$tmp/status")"
unchanged "the refused starts"

# 8 events are not too many
$S -F 100 -e "${nine%,cpu-clock}" >"$tmp/id" 2>"$tmp/start.err" ||
	fail "8 events refused: $(cat "$tmp/start.err")"
"$STROBE" stop >/dev/null 2>"$tmp/stop.err" || fail "stop: $(cat "$tmp/stop.err")"
[ "$(nsessions)" = 2 ] || fail "the 8-event session was not stored"
stop_daemon || fail "strobed did not exit cleanly: $(cat "$tmp/strobed.log")"
ok "bad events and rates refused in one line; stored data unchanged"
