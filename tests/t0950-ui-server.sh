#!/bin/sh
# t0950-ui-server: strobe ui's server on a real -g session of the
# calltree-fp workload run under a hostile name ('<img src=x
# onerror=alert(1)>'):
#  - the URL line, "strobe ui: http://127.0.0.1:PORT/?token=TOKEN";
#  - 403 and one line without the token, with a wrong one, with a foreign
#    Host header; 405 for POST; the token in the header or the cookie
#    it sets is accepted;
#  - /api/report of a window is strobe report --from --to --format json's
#    bytes, also for a window holding every sample (the histograms
#    answer it, the command scans the samples); /api/flame strobe export --format folded's; /api/diff of two
#    windows strobe diff ID@A-B ID@C-D --format json's; /api/series the
#    values of strobe plot's CSV for the same window and bucket;
#  - /api/lines of a symbol is strobe report --by line --binary B --symbol S
#    --from --to --format json's bytes, that symbol's rows only;
#  - on a second session counting page-faults, with a ring lost record and
#    a throttle record added: /api/series?metric=page-faults-per-sec is
#    strobe plot --metric's CSV; its "lost" is the lost samples' span and
#    "throttled" the throttle record's, apart;
#  - bad parameters get 400 or 404 and one line, and the server answers on;
#  - the hostile name reaches the JSON as a JSON string, no more;
#  - the page's files carry the CSP header; SIGTERM: exit 0.
. "$(dirname "$0")/lib.sh"
need_root
[ -x "$WL/calltree-fp" ] || skip "tests/workloads/calltree-fp is not built"
command -v curl >/dev/null || skip "curl not installed"

mkdir "$tmp/b"
# a session counting page-faults (for a metric), older than the -g one
"$STROBE" record --sample-event cpu-clock -F 500 -e page-faults --name uim \
	-- "$WL/pagetouch" 50000 --phases >/dev/null 2>"$tmp/record.err" ||
	fail "record -e page-faults: $(cat "$tmp/record.err")"
msid=$("$STROBE" sessions --format csv | awk -F, 'NR > 1 { id = $1 } END { print id }')
# a ring lost record of 17 samples at a quarter, a throttle record at three
# quarters, on CPU 0 (as t0310 adds them)
python3 - "$STROBE_DB" "$msid" <<'PY' || fail "adding lost rows"
import sqlite3, sys
db = sqlite3.connect(sys.argv[1])
sid = int(sys.argv[2])
start, dur = db.execute("SELECT start_ns, duration_ns FROM sessions WHERE id = ?", (sid,)).fetchone()
db.execute("INSERT INTO lost (session_id, cpu, time_ns, count, kind) VALUES (?, 0, ?, 17, 'ring')",
           (sid, start + dur // 4))
db.execute("INSERT INTO lost (session_id, cpu, time_ns, count, kind) VALUES (?, 0, ?, 0, 'throttle')",
           (sid, start + dur * 3 // 4))
db.commit()
PY
hostile='<img src=x onerror=alert(1)>'
cp "$WL/calltree-fp" "$tmp/b/$hostile"
"$STROBE" record -g --sample-event cpu-clock -F 1000 --name ui -- "$tmp/b/$hostile" 2 \
	>/dev/null 2>"$tmp/record.err" || fail "record -g: $(cat "$tmp/record.err")"
sid=$("$STROBE" sessions --format csv | awk -F, 'NR > 1 { id = $1 } END { print id }')
[ -n "$sid" ] || fail "no session id: $("$STROBE" sessions)"

ui_start --no-open
url=$(sed -n 's|^strobe ui: \(http://127\.0\.0\.1:[0-9]*/?token=[0-9a-f]\{32\}\)$|\1|p' "$tmp/ui.out")
[ -n "$url" ] || { kill $uipid; fail "no URL line: $(cat "$tmp/ui.out" "$tmp/ui.err")"; }
base=${url%%/\?token=*}
token=${url##*token=}
ok "URL line $url"

# get PATH [CURL ARGS]: the body in $tmp/body, the status printed
get() {
	p=$1
	shift
	curl -s -o "$tmp/body" -D "$tmp/head" -w '%{http_code}' "$@" "$base$p"
}
# one_line STATUS WANT: the answer has that status and a one-line body
one_line() {
	[ "$1" = "$2" ] || fail "status $1, not $2: $(cat "$tmp/body")"
	[ "$(wc -l <"$tmp/body")" = 1 ] || fail "not one line: $(cat "$tmp/body")"
	grep -q '^strobe ui: ' "$tmp/body" || fail "no 'strobe ui:' line: $(cat "$tmp/body")"
}

# --- who may ask
one_line "$(get /api/sessions)" 403
grep -q "a token is needed" "$tmp/body" || fail "no token message: $(cat "$tmp/body")"
one_line "$(get "/api/sessions?token=0123456789abcdef0123456789abcdef")" 403
one_line "$(get "/api/sessions?token=${token}x")" 403
one_line "$(get "/api/sessions?token=$token" -H 'Host: evil.example')" 403
one_line "$(get "/api/sessions?token=$token" -X POST -d x=1)" 405
[ "$(get /api/sessions -H "X-Strobe-Token: $token")" = 200 ] || fail "the header's token refused"
[ "$(get "/?token=$token")" = 200 ] || fail "/ refused: $(cat "$tmp/body")"
grep -qi '^Set-Cookie: strobe_token='"$token"'; HttpOnly; SameSite=Strict; Path=/' "$tmp/head" ||
	fail "no cookie: $(cat "$tmp/head")"
[ "$(get /api/sessions -H "Cookie: strobe_token=$token")" = 200 ] || fail "the cookie refused"
ok "403 without the token, with a wrong one or a foreign Host; 405 for POST"

# --- the page's files
for f in / /app.js /index.html; do
	[ "$(get "$f?token=$token")" = 200 ] || fail "$f: $(cat "$tmp/body")"
	grep -qi "^Content-Security-Policy: default-src 'self'; img-src 'self' data:; style-src 'self' 'unsafe-inline'" "$tmp/head" ||
		fail "$f: no CSP: $(cat "$tmp/head")"
	grep -qi '^X-Content-Type-Options: nosniff' "$tmp/head" || fail "$f: no nosniff"
done
cmp -s "$tmp/body" "$top/ui/index.html" || fail "index.html is not ui/index.html"
one_line "$(get "/nope?token=$token")" 404
ok "page files with the CSP header"

# --- the session and two windows of it
[ "$(get "/api/session?token=$token&session=$sid")" = 200 ] || fail "session: $(cat "$tmp/body")"
dur=$(python3 -c 'import json, sys; j = json.load(open(sys.argv[1])); assert j["has_stacks"] is True; print(j["duration_ns"])' "$tmp/body") ||
	fail "session JSON: $(cat "$tmp/body")"
[ "$dur" -gt 500000000 ] || fail "session of $dur ns"
a0=0 a1=$((dur / 2)) b0=$((dur / 2)) b1=$dur

# --- report: strobe report's bytes (its --to is included: one ns before)
for by in symbol binary; do
	[ "$(get "/api/report?token=$token&session=$sid&from=$a0&to=$a1&by=$by&limit=20")" = 200 ] ||
		fail "report: $(cat "$tmp/body")"
	"$STROBE" report --session "$sid" --from "${a0}ns" --to "$((a1 - 1))ns" --by $by --limit 20 \
		--format json >"$tmp/r.json" 2>"$tmp/err" || fail "strobe report: $(cat "$tmp/err")"
	cmp "$tmp/body" "$tmp/r.json" || fail "/api/report --by $by differs from strobe report"
done
ok "/api/report = strobe report --format json"

# the hostile name: a JSON string in the report, the same text once parsed
python3 - "$tmp/body" "$hostile" <<'PY' || fail "hostile name in the report"
import json, sys
raw = open(sys.argv[1]).read()
j = json.loads(raw)
names = [r["binary"] for r in j["rows"]]
assert any(n.endswith(sys.argv[2]) for n in names), names
# the name as json.dumps writes it: JSON's escapes, no markup added
assert '/' + json.dumps(sys.argv[2])[1:-1] + '"' in raw, raw[:300]
PY
grep -qi '^Content-Type: application/json' "$tmp/head" && grep -qi '^X-Content-Type-Options: nosniff' "$tmp/head" ||
	fail "report not served as JSON with nosniff: $(cat "$tmp/head")"
ok "a hostile binary name is a JSON string"

# a window that holds every sample is answered from the histograms
# (report_window_whole); strobe report --from --to scans the samples: the
# same bytes, for the -g session and the one counting page-faults
for ws in "$sid" "$msid"; do
	[ "$(get "/api/session?token=$token&session=$ws")" = 200 ] || fail "session $ws: $(cat "$tmp/body")"
	w1=$(python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["duration_ns"] + 10**9)' "$tmp/body")
	[ "$(get "/api/report?token=$token&session=$ws&from=0&to=$w1&by=symbol&limit=0")" = 200 ] ||
		fail "whole-session report of $ws: $(cat "$tmp/body")"
	"$STROBE" report --session "$ws" --from 0ns --to "$((w1 - 1))ns" --by symbol --limit 0 \
		--format json >"$tmp/r.json" 2>"$tmp/err" || fail "strobe report: $(cat "$tmp/err")"
	cmp "$tmp/body" "$tmp/r.json" || fail "/api/report of all of session $ws differs from strobe report's scan"
done
ok "/api/report of a window holding every sample (the histograms) = strobe report's scan"

# --- flame: strobe export --format folded's bytes, for window after window
# (the first makes the session's flame index, the others are weighed on it:
# flameindex.h), the whole session's too
for w in "$b0 $b1" "$a0 $a1" "$((dur / 3)) $((dur / 3 + dur / 10))" "0 $((dur + 1000000000))"; do
	set -- $w
	[ "$(get "/api/flame?token=$token&session=$sid&from=$1&to=$2")" = 200 ] || fail "flame: $(cat "$tmp/body")"
	"$STROBE" export --format folded --session "$sid" --from "${1}ns" --to "$(($2 - 1))ns" \
		>"$tmp/f.txt" 2>"$tmp/err" || fail "export folded: $(cat "$tmp/err")"
	[ -s "$tmp/f.txt" ] || fail "no folded stacks in [$1, $2)"
	cmp "$tmp/body" "$tmp/f.txt" || fail "/api/flame of [$1, $2) differs from strobe export --format folded"
done
ok "/api/flame = strobe export --format folded, for 4 windows"

# --- diff of two windows: strobe diff ID@A-B ID@C-D's bytes
[ "$(get "/api/diff?token=$token&session=$sid&a_from=$a0&a_to=$a1&b_from=$b0&b_to=$b1&by=symbol")" = 200 ] ||
	fail "diff: $(cat "$tmp/body")"
"$STROBE" diff --format json "$sid@${a0}ns-${a1}ns" "$sid@${b0}ns-${b1}ns" >"$tmp/d.json" 2>"$tmp/err" ||
	fail "strobe diff of windows: $(cat "$tmp/err")"
cmp "$tmp/body" "$tmp/d.json" || fail "/api/diff differs from strobe diff"
python3 -c 'import json, sys; m = json.load(open(sys.argv[1]))["meta"]; assert "a_window" in m and "b_window" in m, m' "$tmp/d.json" ||
	fail "diff's meta has no windows"
ok "/api/diff = strobe diff ID@A-B ID@C-D --format json"

# --- series: plot's CSV values for the same window and bucket
[ "$(get "/api/series?token=$token&session=$sid&event=samples&from=$a0&to=$b1&buckets=50")" = 200 ] ||
	fail "series: $(cat "$tmp/body")"
bucket=$(python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["bucket_ns"])' "$tmp/body")
"$STROBE" plot --session "$sid" --event samples --from "${a0}ns" --to "${b1}ns" --bucket "${bucket}ns" \
	-o "$tmp/p.csv" >/dev/null 2>"$tmp/err" || fail "plot: $(cat "$tmp/err")"
python3 - "$tmp/body" "$tmp/p.csv" <<'PY' || fail "/api/series differs from plot's CSV"
import csv, json, sys
j = json.load(open(sys.argv[1]))
rows = list(csv.reader(open(sys.argv[2])))
head, rows = rows[0], rows[1:]
assert len(j["times"]) == len(rows) and 0 < len(rows) <= 50, (len(j["times"]), len(rows))
assert len(j["series"]) == len(head) - 4, (head, [s["title"] for s in j["series"]])
for k, s in enumerate(j["series"]):
    assert s["title"] == head[4 + k], (s["title"], head)
    for b, r in enumerate(rows):
        v = s["values"][b]
        assert (r[4 + k] == "" and v is None) or float(r[4 + k]) == v, (b, r, v)
for b, r in enumerate(rows):
    assert int(r[2]) - int(rows[0][2]) == j["times"][b] - j["times"][0], (b, r)
PY
ok "/api/series = strobe plot's CSV"

# --- lines of a symbol: strobe report --by line --binary --symbol's bytes
sym=$("$STROBE" report --session "$sid" --by symbol --binary "$hostile" --limit 1 --format json |
	python3 -c 'import json, sys; print(json.load(sys.stdin)["rows"][0]["symbol"])') ||
	fail "no top symbol of the workload"
q=$(python3 -c 'import sys, urllib.parse as u; print(u.urlencode({"binary": sys.argv[1], "symbol": sys.argv[2]}))' "$hostile" "$sym")
[ "$(get "/api/lines?token=$token&session=$sid&from=$a0&to=$b1&$q")" = 200 ] ||
	fail "lines: $(cat "$tmp/body")"
"$STROBE" report --session "$sid" --by line --binary "$hostile" --symbol "$sym" --from "${a0}ns" \
	--to "$((b1 - 1))ns" --format json >"$tmp/l.json" 2>"$tmp/err" || fail "report --symbol: $(cat "$tmp/err")"
cmp "$tmp/body" "$tmp/l.json" || fail "/api/lines differs from strobe report --by line --symbol"
# --symbol keeps that symbol's rows of the same report, nothing else
R() { "$STROBE" report --session "$sid" --by line --from "${a0}ns" --to "$((b1 - 1))ns" --limit 0 \
	--format json "$@"; }
R >"$tmp/lall.json" 2>"$tmp/err" || fail "report --by line: $(cat "$tmp/err")"
R --symbol "$sym" >"$tmp/lsym.json" 2>"$tmp/err" || fail "report --symbol: $(cat "$tmp/err")"
python3 - "$tmp/body" "$tmp/lsym.json" "$tmp/lall.json" "$sym" <<'PY' || fail "report --symbol has other symbols' rows"
import json, sys
api, mine, every = (json.load(open(f))["rows"] for f in sys.argv[1:4])
sym = sys.argv[4]
assert api and all(r["symbol"] == sym for r in api), api[:5]
assert any(r["symbol"] != sym for r in every), "no other symbol to leave out"
assert mine == [r for r in every if r["symbol"] == sym], (len(mine), mine[:5])
PY
one_line "$(get "/api/lines?token=$token&session=$sid&binary=x")" 400
"$STROBE" report --session "$sid" --by binary --symbol "$sym" >/dev/null 2>"$tmp/err"; rc=$?
[ $rc = 2 ] && [ "$(wc -l <"$tmp/err")" = 1 ] || fail "report --by binary --symbol: $rc $(cat "$tmp/err")"
ok "/api/lines = strobe report --by line --binary --symbol --format json"

# --- a metric: plot --metric's CSV; lost and throttled spans apart
mdur=$(python3 -c 'import sqlite3, sys; print(sqlite3.connect(sys.argv[1]).execute("SELECT duration_ns FROM sessions WHERE id = ?", (int(sys.argv[2]),)).fetchone()[0])' "$STROBE_DB" "$msid")
[ "$(get "/api/series?token=$token&session=$msid&metric=page-faults-per-sec&from=0&to=$mdur&buckets=20")" = 200 ] ||
	fail "series of a metric: $(cat "$tmp/body")"
bucket=$(python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["bucket_ns"])' "$tmp/body")
"$STROBE" plot --session "$msid" --metric page-faults-per-sec --from 0ns --to "${mdur}ns" \
	--bucket "${bucket}ns" -o "$tmp/pm.csv" >/dev/null 2>"$tmp/err" || fail "plot --metric: $(cat "$tmp/err")"
python3 - "$tmp/body" "$tmp/pm.csv" "$mdur" <<'PY' || fail "/api/series?metric= differs from plot --metric's CSV"
import csv, json, sys
j = json.load(open(sys.argv[1]))
rows = list(csv.reader(open(sys.argv[2])))
head, rows = rows[0], rows[1:]
assert len(j["times"]) == len(rows) and 0 < len(rows) <= 20, (len(j["times"]), len(rows))
assert [s["title"] for s in j["series"]] == head[4:], (head, [s["title"] for s in j["series"]])
nz = 0
for k, s in enumerate(j["series"]):
    for b, r in enumerate(rows):
        v = s["values"][b]
        if r[4 + k] == "":
            assert v is None, (b, r, v)
            continue
        # the CSV's digits, the JSON's (%.10g) at least as many
        assert float(r[4 + k]) == float("%.*g" % (len(r[4 + k].replace("-", "").replace(".", "").lstrip("0")) or 1, v)), (b, r, v)
        nz += v != 0
assert nz, "no page faults counted"
# the lost samples' span (17 at a quarter), the throttle record's apart
dur = int(sys.argv[3])
lost, thr = j["lost"], j["throttled"]
assert sum(l["count"] for l in lost) == 17 and len(lost) == 1, lost
assert lost[0]["from_ns"] <= dur // 4 <= lost[0]["to_ns"], (lost, dur)
assert len(thr) == 1 and thr[0]["count"] == 1, thr
assert thr[0]["from_ns"] <= dur * 3 // 4 <= thr[0]["to_ns"], (thr, dur)
PY
ok "/api/series?metric= = strobe plot --metric's CSV; lost and throttled apart"

# --- bad parameters: one line, 400 or 404, and the server answers on
one_line "$(get "/api/report?token=$token&session=$sid&from=abc")" 400
grep -q "from" "$tmp/body" || fail "from= not named: $(cat "$tmp/body")"
one_line "$(get "/api/series?token=$token&session=$sid&buckets=0")" 400
one_line "$(get "/api/series?token=$token&session=$sid&buckets=10001")" 400
one_line "$(get "/api/report?token=$token&session=$sid&by=nope")" 400
one_line "$(get "/api/report?token=$token&session=999999")" 404
one_line "$(get "/api/report?token=$token&session=$sid&from=5&to=5")" 400
one_line "$(get "/api/report?token=$token&session=$sid&limit=100001")" 400
one_line "$(get "/api/diff?token=$token&session=$sid&a_from=0")" 400
one_line "$(get "/api/flame?token=$token&session=$sid&event=nope")" 400
one_line "$(get "/api/nope?token=$token")" 404
long=$(python3 -c 'print("x" * 4097)')
many=$(python3 -c 'print("&".join("event=samples" for _ in range(70)))')
for q in "from=-1" "to=99999999999999999999999" "from=$dur&to=$((dur + 1000))" "event=%00" \
	"event=$long" "$many" "metric=nope" "metric=1/" "by=host" "top=0" "buckets=1&from=0&to=1" \
	"session=0" "session=-3" "session=1e3"; do
	for api in series report flame diff session lines; do
		st=$(get "/api/$api?token=$token&$q&session=$sid")
		case $st in
		200) ;;
		400 | 404 | 422) one_line "$st" "$st" ;;
		*) fail "/api/$api?$q: status $st: $(cat "$tmp/body")" ;;
		esac
	done
done
for p in "/..%2f..%2fetc%2fpasswd" "/vendor/../index.html" "/%00" "//etc/passwd"; do
	st=$(get "$p?token=$token" --path-as-is)
	case $st in
	200) cmp -s "$tmp/body" "$top/ui/index.html" || fail "$p: $(head -c 200 "$tmp/body")" ;;
	404) one_line "$st" 404 ;;
	*) fail "$p: status $st" ;;
	esac
done
[ "$(get "/api/sessions?token=$token")" = 200 ] || fail "no answer after bad parameters"
python3 -c 'import json, sys; j = json.load(open(sys.argv[1])); assert j["sessions"][0]["id"] == int(sys.argv[2]), j' "$tmp/body" "$sid" ||
	fail "sessions: $(cat "$tmp/body")"
ok "bad parameters: 400/404 and one line; the server answers on"

# --- SIGTERM: exit 0
kill -TERM $uipid
wait $uipid
rc=$?
[ $rc = 0 ] || fail "strobe ui exited $rc after SIGTERM: $(cat "$tmp/ui.err")"
ok "SIGTERM: exit 0"

# --- usage errors: exit 2, one line
"$STROBE" ui --listen nope >/dev/null 2>"$tmp/err"; rc=$?
[ $rc = 2 ] && [ "$(wc -l <"$tmp/err")" = 1 ] || fail "bad --listen: $rc $(cat "$tmp/err")"
"$STROBE" diff "$sid@1s" "$sid@0-1s" >/dev/null 2>"$tmp/err"; rc=$?
[ $rc = 2 ] && [ "$(wc -l <"$tmp/err")" = 1 ] || fail "bad window: $rc $(cat "$tmp/err")"
ok "usage errors exit 2"
