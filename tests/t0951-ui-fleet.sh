#!/bin/sh
# t0951-ui-fleet: strobe ui --source (the ClickHouse fleet): /api/report of
# a window is strobe report --source --host --session --from --to --format
# json's bytes; /api/series the values of strobe plot --source's CSV; the
# local-only paths (flame, diff, sessions) answer 422 with one line.
. "$(dirname "$0")/lib.sh"
need_root
command -v curl >/dev/null || skip "curl not installed"
. "$(dirname "$0")/clickhouse.sh"

ch_fleet
ch_shard_hosts
"$STROBE" record --db "$tmp/a.db" --sample-event cpu-clock -F 2000 -e page-faults -- \
	"$WL/split603010" 1 >/dev/null 2>"$tmp/rec.err" || fail "record: $(cat "$tmp/rec.err")"
"$STROBE" push --db "$tmp/a.db" --to "$url" --host "$hA" >/dev/null 2>"$tmp/push.err" ||
	fail "push: $(cat "$tmp/push.err")"

"$STROBE" ui --source "$url" --host "$hA" --session 1 --no-open >"$tmp/ui.out" 2>"$tmp/ui.err" &
uipid=$!
# a failed check leaves no server behind
trap 'kill "$uipid" 2>/dev/null; ch_cleanup' EXIT
i=0
while ! grep -q '^strobe ui: ' "$tmp/ui.out" && [ $i -lt 100 ]; do
	kill -0 $uipid 2>/dev/null || fail "strobe ui exited: $(cat "$tmp/ui.err")"
	sleep 0.1
	i=$((i + 1))
done
uurl=$(sed -n 's|^strobe ui: \(http://127\.0\.0\.1:[0-9]*/?token=[0-9a-f]\{32\}&session=1\)$|\1|p' "$tmp/ui.out")
[ -n "$uurl" ] || { kill $uipid; fail "no URL line: $(cat "$tmp/ui.out" "$tmp/ui.err")"; }
base=${uurl%%/\?token=*}
token=${uurl##*token=}
token=${token%%&*}
get() {
	p=$1
	shift
	curl -s -o "$tmp/body" -w '%{http_code}' "$@" "$base$p"
}

dur=$("$STROBE" sessions --db "$tmp/a.db" --format csv | python3 -c 'import csv, sys; r = list(csv.DictReader(sys.stdin))[-1]; print(int(float(r["duration_s"]) * 1e9))')
[ "$dur" -gt 100000000 ] || fail "session of $dur ns"
a0=$((dur / 4)) a1=$((dur * 3 / 4))

[ "$(get "/api/report?token=$token&session=1&from=$a0&to=$a1&by=symbol&limit=10")" = 200 ] ||
	fail "report: $(cat "$tmp/body")"
"$STROBE" report --source "$url" --host "$hA" --session 1 --from "${a0}ns" --to "$((a1 - 1))ns" \
	--by symbol --limit 10 --format json >"$tmp/r.json" 2>"$tmp/err" || fail "report --source: $(cat "$tmp/err")"
cmp "$tmp/body" "$tmp/r.json" || fail "/api/report of the fleet differs from strobe report --source"
ok "/api/report = strobe report --source --format json"

[ "$(get "/api/series?token=$token&event=samples&from=0&to=$dur&buckets=20")" = 200 ] ||
	fail "series: $(cat "$tmp/body")"
bucket=$(python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["bucket_ns"])' "$tmp/body")
"$STROBE" plot --source "$url" --host "$hA" --session 1 --event samples --from 0ns --to "${dur}ns" \
	--bucket "${bucket}ns" -o "$tmp/p.csv" >/dev/null 2>"$tmp/err" || fail "plot --source: $(cat "$tmp/err")"
python3 - "$tmp/body" "$tmp/p.csv" <<'PY' || fail "/api/series of the fleet differs from plot's CSV"
import csv, json, sys
j = json.load(open(sys.argv[1]))
rows = list(csv.reader(open(sys.argv[2])))[1:]
assert len(j["times"]) == len(rows) and 0 < len(rows) <= 20, (len(j["times"]), len(rows))
for b, r in enumerate(rows):
    v = j["series"][0]["values"][b]
    assert (r[4] == "" and v is None) or float(r[4]) == v, (b, r, v)
PY
ok "/api/series = strobe plot --source's CSV"

for p in flame diff sessions; do
	st=$(get "/api/$p?token=$token&session=1&a_from=0&a_to=1&b_from=1&b_to=2")
	[ "$st" = 422 ] && [ "$(wc -l <"$tmp/body")" = 1 ] || fail "/api/$p: $st $(cat "$tmp/body")"
done
ok "flame, diff, sessions of the fleet: 422 and one line"
kill -TERM $uipid
wait $uipid || fail "strobe ui exited $? after SIGTERM"
