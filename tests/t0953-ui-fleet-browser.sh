#!/bin/sh
# t0953-ui-fleet-browser: the page of 'strobe ui --source URL' in Debian's
# chromium (headless, tests/ui/fleet.js through playwright-core) over a
# fleet of two ClickHouse shards holding session 1 of two hosts (a
# 60:30:10 run on one, a 30:60:10 run on the other): both entries are in
# the session list; picking each shows that host's session (header, the
# URL's h= and s=), and a window brushed with real mouse events gives the
# hot-spot table of strobe report --source URL --host HOST of that window,
# cell by cell (so the two hosts' tables differ); a reload keeps the host.
. "$(dirname "$0")/lib.sh"
need_root
need_browser
. "$(dirname "$0")/clickhouse.sh"

ch_fleet
ch_shard_hosts
"$STROBE" record --db "$tmp/a.db" --sample-event cpu-clock -F 2000 -- \
	"$WL/split603010" 1 >/dev/null 2>"$tmp/rec.err" || fail "record a: $(cat "$tmp/rec.err")"
"$STROBE" record --db "$tmp/b.db" --sample-event cpu-clock -F 2000 -- \
	"$WL/split306010" 1 >/dev/null 2>"$tmp/rec.err" || fail "record b: $(cat "$tmp/rec.err")"
ch_push_as "$tmp/a.db" "$hA"
ch_push_as "$tmp/b.db" "$hB"
ok "session 1 of $hA (60:30:10) and of $hB (30:60:10) pushed"

ui_start --source "$url" --session 1 --no-open
uurl=$(sed -n 's|^strobe ui: \(http://127\.0\.0\.1:[0-9]*/?token=[0-9a-f]*[^ ]*\)$|\1|p' "$tmp/ui.out")
[ -n "$uurl" ] || fail "no URL line: $(cat "$tmp/ui.out" "$tmp/ui.err")"

STROBE="$STROBE" SOURCE="$url" HOSTS="$hA $hB" CHROMIUM="$chromium" HOME="$tmp" \
	timeout 300 node "$top/tests/ui/fleet.js" "$uurl" >"$tmp/fleet.out" 2>&1
rc=$?
cat "$tmp/fleet.out"
[ $rc = 0 ] || fail "the browser's checks (exit $rc): $(grep -m1 FAIL "$tmp/fleet.out")"
grep -q '^ok: no script error' "$tmp/fleet.out" || fail "fleet.js stopped early"
ok "strobe ui --source in chromium: each host's session 1 picked, shown and brushed as strobe report --source --host"
