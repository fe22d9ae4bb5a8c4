#!/bin/sh
# t0968-ui-onsets: the onsets and phases of strobe ui in a real browser
# (Debian's chromium headless, driven by tests/ui/phases.js), on a session
# of tests/workloads/phases (CPU duty 30, 90, 50, 100 %): with the URL's
# on=1 the page asks /api/onsets and /api/phases for the series it shows,
# and their replies are strobe onsets' and strobe phases' --format json
# byte for byte; every onset is drawn on the timeline; the strip under it
# has a band per phase at its window; hovering a band tells its phase and
# levels; clicking it makes window A that phase (the hot-spot table then
# strobe report --from --to of it, cell by cell), shift-clicking makes A
# the phase before and B it, with their diff; a reload keeps the strip,
# unticking "onsets" removes it and the lines.  Outside the browser: the
# API's bad parameters are one line, 400; the fleet's are 422.
# Screenshots go to $SHOTS (ui-onsets.png) when it is set.
. "$(dirname "$0")/lib.sh"
need_root
[ -x "$WL/phases" ] || skip "tests/workloads/phases is not built"
need_browser

# User-mode samples only (cpu-clock:u): an idle CPU is sampled in the
# kernel, so with them every CPU gives the same samples per second and the
# series is flat whatever the workload does.  The workload on a CPU of its
# own (idlest_cpu), ahead of anything else there (nice -20).
cpu=$(idlest_cpu) || fail "no idle CPU found in /proc/stat"
"$STROBE" record --sample-event cpu-clock:u -F 2000 -e page-faults --name phases -- \
	taskset -c "$cpu" nice -n -20 "$WL/phases" 30:1.5 90:1.5 50:1.5 100:1.5 \
	>"$tmp/truth" 2>"$tmp/record.err" || fail "record: $(cat "$tmp/record.err")"
sid=$("$STROBE" sessions --format csv | awk -F, 'NR > 1 { id = $1 } END { print id }')
[ -n "$sid" ] || fail "no session id: $("$STROBE" sessions)"
start=$(python3 - "$STROBE_DB" "$sid" <<'PY'
import strobedb, sys
db = strobedb.connect(sys.argv[1])
print(db.execute("SELECT start_ns FROM sessions WHERE id = ?", (int(sys.argv[2]),)).fetchone()[0])
PY
) || fail "reading the session's start"

ui_start --no-open
url=$(sed -n 's|^strobe ui: \(http://127\.0\.0\.1:[0-9]*/?token=[0-9a-f]*[^ ]*\)$|\1|p' "$tmp/ui.out")
[ -n "$url" ] || fail "no URL line: $(cat "$tmp/ui.out" "$tmp/ui.err")"
base=${url%%/\?token=*}
token=${url##*token=}

# bad parameters: 400 and one line naming them
get() { curl -s -o "$tmp/body" -w '%{http_code}' -H "X-Strobe-Token: $token" "$base/api/$1"; }
for q in "onsets?session=$sid&min_shift=x:min_shift" "onsets?session=$sid&by=nope:by" \
	"onsets?session=$sid&bucket=5:bucket" "phases?session=$sid&by=cgroup:by" \
	"phases?session=$sid&top=0:top" "onsets?session=$sid&from=5&to=4:to" \
	"onsets?session=$sid&event=no-such-event:no-such-event"; do
	path=${q%:*} word=${q##*:}
	code=$(get "$path")
	[ "$code" = 400 ] || fail "/api/$path: HTTP $code, not 400: $(cat "$tmp/body")"
	[ "$(wc -l <"$tmp/body")" = 1 ] && grep -q "^strobe ui: .*$word" "$tmp/body" ||
		fail "/api/$path: not one line naming $word: $(cat "$tmp/body")"
done
ok "/api/onsets and /api/phases: bad parameters refused, 400, in one line"

STROBE="$STROBE" STROBE_SESSION="$sid" START_NS="$start" CHROMIUM="$chromium" \
	SHOTS="${SHOTS:-}" HOME="$tmp" \
	timeout 300 node "$top/tests/ui/phases.js" "$url" >"$tmp/drive.out" 2>&1
rc=$?
cat "$tmp/drive.out"
[ $rc = 0 ] || fail "the browser's checks (exit $rc): $(grep -m1 FAIL "$tmp/drive.out")"
grep -q '^ok: no dialog' "$tmp/drive.out" || fail "phases.js stopped early"
ok "strobe ui: onsets = strobe onsets, the phase strip = strobe phases, a phase's click = its report"
