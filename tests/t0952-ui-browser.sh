#!/bin/sh
# t0952-ui-browser: the page of strobe ui in a real browser, Debian's
# chromium headless, driven by tests/ui/drive.js (playwright-core, installed
# by setup.sh into tests/ui/node_modules) over a real -g session of the
# calltree-fp workload, once as itself and once under the hostile name
# '<img src=x onerror=alert(1)>':
#  - the timeline's canvas is drawn (pixels that are not blank);
#  - a drag with real mouse events over the plot selects window A, kept in
#    the URL; the hot-spot table's rows are then strobe report --from A
#    --to B --format json's rows, cell by cell;
#  - a shift-drag sets window B (A unchanged) and the diff table appears;
#  - a reload of the URL gives the same windows and the same rows;
#  - the hostile name shows as text, the page has no img element, no
#    dialog opens and no script error happens;
#  - a request without the token gets 403 (from the page, cookie omitted,
#    and from outside);
#  - a drag asks for nothing before the mouse-up and for one table after;
#    the series never has more points than the plot has pixels;
#  - the legend tells lost and (hatched) throttled spans apart;
#  - clicking a symbol adds its series on a right-hand axis and opens its
#    source lines (= strobe report --by line --binary --symbol), or, from a
#    server without /api/lines, a one-line message ("skip: ..." printed).
# Screenshots of the views go to $SHOTS (doc/img/ui-*.png) when it is set.
. "$(dirname "$0")/lib.sh"
need_root
[ -x "$WL/calltree-fp" ] || skip "tests/workloads/calltree-fp is not built"
need_browser

mkdir "$tmp/b"
hostile='<img src=x onerror=alert(1)>'
cp "$WL/calltree-fp" "$tmp/b/$hostile"
"$STROBE" record -g --sample-event cpu-clock -F 1000 -e page-faults --name ui \
	-- sh -c '"$1" 2 & "$2" 2; wait' sh "$WL/calltree-fp" "$tmp/b/$hostile" \
	>/dev/null 2>"$tmp/record.err" || fail "record -g: $(cat "$tmp/record.err")"
sid=$("$STROBE" sessions --format csv | awk -F, 'NR > 1 { id = $1 } END { print id }')
[ -n "$sid" ] || fail "no session id: $("$STROBE" sessions)"

ui_start --no-open --session "$sid"
url=$(sed -n 's|^strobe ui: \(http://127\.0\.0\.1:[0-9]*/?token=[0-9a-f]*[^ ]*\)$|\1|p' "$tmp/ui.out")
[ -n "$url" ] || fail "no URL line: $(cat "$tmp/ui.out" "$tmp/ui.err")"

STROBE="$STROBE" STROBE_SESSION="$sid" HOSTILE="$hostile" CHROMIUM="$chromium" \
	SHOTS="${SHOTS:-}" HOME="$tmp" \
	timeout 300 node "$top/tests/ui/drive.js" "$url" >"$tmp/drive.out" 2>&1
rc=$?
cat "$tmp/drive.out"
[ $rc = 0 ] || fail "the browser's checks (exit $rc): $(grep -m1 FAIL "$tmp/drive.out")"
grep -q '^ok: no token: 403' "$tmp/drive.out" || fail "drive.js stopped early"
grep -q '^ok: second round' "$tmp/drive.out" || fail "drive.js stopped before the second round's checks"
ok "strobe ui in chromium: timeline, brushed table = strobe report, diff, reload, hostile name, token"
