#!/bin/sh
# t0951-ui-fleet: strobe ui --source (the ClickHouse fleet): /api/report of
# a window is strobe report --source --host --session --from --to --format
# json's bytes; /api/series the values of strobe plot --source's CSV;
# /api/sessions lists the pushed sessions with their host, /api/session
# one of them; /api/diff of two windows is strobe diff --source URL
# --host H 1@A-B 1@C-D --format json's bytes (and that, with its windows,
# is the local diff of the same windows but the hosts); the local-only
# paths (flame, lines) answer 422 with one line.
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

ui_start --source "$url" --host "$hA" --session 1 --no-open
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

# --- the sessions: the pushed one, with its host
[ "$(get "/api/sessions?token=$token")" = 200 ] || fail "sessions: $(cat "$tmp/body")"
python3 - "$tmp/body" "$hA" "$dur" <<'PY' || fail "/api/sessions of the fleet: $(cat "$tmp/body")"
import json, sys
s = json.load(open(sys.argv[1]))["sessions"]
assert [(x["host"], x["id"]) for x in s] == [(sys.argv[2], 1)], s
assert s[0]["samples"] > 0 and s[0]["state"] == "done", s
assert s[0]["events"] == ["page-faults"], s
assert abs(s[0]["duration_ns"] - int(sys.argv[3])) < 50000000, (s, sys.argv[3])
PY
[ "$(get "/api/session?token=$token&session=1")" = 200 ] || fail "session: $(cat "$tmp/body")"
python3 -c 'import json, sys; j = json.load(open(sys.argv[1])); assert j["host"] == sys.argv[2] and j["id"] == 1 and j["has_stacks"] is False and "page-faults-per-sec" in j["metrics"], j' "$tmp/body" "$hA" ||
	fail "/api/session of the fleet: $(cat "$tmp/body")"
[ "$(get "/api/session?token=$token&session=7")" = 404 ] && [ "$(wc -l <"$tmp/body")" = 1 ] ||
	fail "/api/session of no session: $(cat "$tmp/body")"
ok "/api/sessions and /api/session of the fleet, with the host"

# --- the diff of two windows: strobe diff --source's bytes
[ "$(get "/api/diff?token=$token&session=1&a_from=0&a_to=$a0&b_from=$a0&b_to=$a1&by=symbol")" = 200 ] ||
	fail "diff: $(cat "$tmp/body")"
"$STROBE" diff --source "$url" --host "$hA" --format json "1@0ns-${a0}ns" "1@${a0}ns-${a1}ns" \
	>"$tmp/d.json" 2>"$tmp/err" || fail "diff --source of windows: $(cat "$tmp/err")"
cmp "$tmp/body" "$tmp/d.json" || fail "/api/diff of the fleet differs from strobe diff --source"
"$STROBE" diff --db "$tmp/a.db" --format json "1@0ns-${a0}ns" "1@${a0}ns-${a1}ns" \
	>"$tmp/dl.json" 2>"$tmp/err" || fail "local diff of windows: $(cat "$tmp/err")"
python3 - "$tmp/d.json" "$tmp/dl.json" <<'PY' || fail "the fleet's diff of windows differs from the local one"
import json, sys
f, l = (json.load(open(p)) for p in sys.argv[1:3])
assert f["meta"]["a_window"] == l["meta"]["a_window"] and f["meta"]["b_window"] == l["meta"]["b_window"], (f["meta"], l["meta"])
key = lambda r: (r["binary"], r["symbol"])
assert f["rows"] and sorted(f["rows"], key=key) == sorted(l["rows"], key=key), (f["rows"][:3], l["rows"][:3])
PY
"$STROBE" diff --source "$url" --host "$hA" "1@0ns-${a0}ns" "1@0ns-${a0}ns" >/dev/null 2>"$tmp/err"; rc=$?
[ $rc = 2 ] && [ "$(wc -l <"$tmp/err")" = 1 ] || fail "the same window twice: $rc $(cat "$tmp/err")"
st=$(get "/api/diff?token=$token&session=1&a_from=0&a_to=1&b_from=0&b_to=1")
[ "$st" = 400 ] && [ "$(wc -l <"$tmp/body")" = 1 ] || fail "/api/diff of one window: $st $(cat "$tmp/body")"
ok "/api/diff = strobe diff --source ID@A-B ID@C-D --format json (= the local diff)"

for p in flame lines; do
	st=$(get "/api/$p?token=$token&session=1&binary=x&symbol=y")
	[ "$st" = 422 ] && [ "$(wc -l <"$tmp/body")" = 1 ] || fail "/api/$p: $st $(cat "$tmp/body")"
done
ok "flame, lines of the fleet: 422 and one line"
kill -TERM $uipid
wait $uipid || fail "strobe ui exited $? after SIGTERM"
