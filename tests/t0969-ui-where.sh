#!/bin/sh
# t0969-ui-where: the metric condition of strobe ui's page (the where bar,
# issue 33) in a real browser (Debian's chromium headless, driven by
# tests/ui/where.js with real mouse and keyboard events), on a session of
# tests/workloads/phases (CPU duty 30, 90, 50, 100 %) with page-faults and
# context-switches counted: a window dragged on the timeline, a condition
# typed with a 40 ms bucket; the hot-spot table is then strobe report
# --where of that window cell by cell, the note its kept-buckets note,
# the flame graph's reply strobe export --format folded --where's bytes,
# the timeline's shade holds every sample strobe export --where keeps and
# no span without one; "invert" gives report --invert's table; "where vs
# rest" shows strobe diff ID --where's table (with and without --invert);
# a reload restores the condition and the view; a bad condition is one
# line of text and the page keeps working; a condition holding
# <img src=x onerror=alert(1)> stays text and runs nothing.
# Screenshots go to $SHOTS (ui-where.png) when it is set.
. "$(dirname "$0")/lib.sh"
need_root
[ -x "$WL/phases" ] || skip "tests/workloads/phases is not built"
need_browser

"$STROBE" record --sample-event cpu-clock -F 2000 -e page-faults,context-switches \
	--call-graph fp --name where -- "$WL/phases" 30:1 90:1 50:1 100:1 \
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

STROBE="$STROBE" STROBE_SESSION="$sid" START_NS="$start" CHROMIUM="$chromium" \
	SHOTS="${SHOTS:-}" HOME="$tmp" \
	timeout 400 node "$top/tests/ui/where.js" "$url" >"$tmp/drive.out" 2>&1
rc=$?
cat "$tmp/drive.out"
[ $rc = 0 ] || fail "the browser's checks (exit $rc): $(grep -m1 FAIL "$tmp/drive.out")"
grep -q '^ok: no dialog' "$tmp/drive.out" || fail "where.js stopped early"
ok "strobe ui's where bar: the window's views are strobe report, export and diff --where's"
