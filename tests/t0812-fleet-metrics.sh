#!/bin/sh
# t0812-fleet-metrics: 'strobe report --source URL -M NAME,...', the
# catalogue metric columns of one pushed session.  A session of pagetouch
# counting page-faults and context-switches is pushed as two hosts to two
# real ClickHouse shards (tests/clickhouse.sh); with --host and --session,
# the fleet's CSV and JSON with -M (also --from/--to, where seconds is the
# range's length, and --by binary) are byte for byte the local report's,
# the text too but for the lines push does not carry (t0810), and each
# metric cell is the row's count over the session's length.  -M of
# several sessions (no --host or no --session, --by host) and a metric
# whose events the session did not count get one line and exit 2.
. "$(dirname "$0")/lib.sh"
need_root
command -v sqlite3 >/dev/null || skip "sqlite3 is not installed"
. "$(dirname "$0")/clickhouse.sh"

ch_fleet
ch_shard_hosts
"$STROBE" record --db "$tmp/a.db" --sample-event cpu-clock -F 1000 -e page-faults,context-switches \
	-- "$WL/pagetouch" 50000 --phases >/dev/null 2>"$tmp/rec.err" ||
	fail "record: $(cat "$tmp/rec.err")"
ch_push_as "$tmp/a.db" "$hA" "$hB"
dur=$(sqlq "$tmp/a.db" "SELECT (end_ns - start_ns) / 1e9 FROM sessions WHERE id = 1")
ok "pushed a session of $dur s as hosts $hA and $hB"

localonly() {
	grep -v -e '^# note: ' -e '^# WARNING: [0-9]* records reached strobed more than' \
		-e '^# WARNING: the maps of [0-9]* process' -e '^# page-faults: ' \
		-e '^# context-switches: ' "$1"
}
M=page-faults-per-sec,context-switches-per-sec
k=0
check() {	# ARGS...: local and fleet reports with these options agree
	k=$((k + 1))
	for f in csv json text; do
		"$STROBE" report --db "$tmp/a.db" --session 1 --format $f --limit 0 "$@" \
			>"$tmp/$k.$f.l" 2>"$tmp/err" || fail "$*: local: $(cat "$tmp/err")"
		"$STROBE" report --source "$url" --host "$hB" --session 1 --format $f --limit 0 "$@" \
			>"$tmp/$k.$f.f" 2>"$tmp/err" || fail "$*: fleet: $(cat "$tmp/err")"
	done
	cmp "$tmp/$k.csv.l" "$tmp/$k.csv.f" || fail "$*: csv differs: $(diff "$tmp/$k.csv.l" "$tmp/$k.csv.f" | head -8)"
	cmp "$tmp/$k.json.l" "$tmp/$k.json.f" || fail "$*: json differs: $(diff "$tmp/$k.json.l" "$tmp/$k.json.f" | head -8)"
	localonly "$tmp/$k.text.l" >"$tmp/l"
	localonly "$tmp/$k.text.f" >"$tmp/f"
	cmp "$tmp/l" "$tmp/f" || fail "$*: text differs: $(diff "$tmp/l" "$tmp/f" | head -8)"
	ok "$*: csv, json and text as the local report ($(($(wc -l <"$tmp/$k.csv.f") - 1)) rows)"
}
check -M "$M"
check -M "$M" --from 0.2 --to 0.6
check -M context-switches-per-sec --by binary
check -M "$M" --user

# the values themselves: count / seconds, in the fleet's own output
python3 - "$tmp" "$dur" <<'PY' || fail "fleet -M values"
import csv, json, sys
d, dur = sys.argv[1], float(sys.argv[2])
def near(a, b):
    return abs(a - b) <= 1e-6 * max(abs(b), 1)
n = 0
for k, secs in ((1, dur), (2, 0.4), (3, dur)):
    rows = list(csv.DictReader(open(f"{d}/{k}.csv.f")))
    assert rows, k
    for r in rows:
        for ev in ("page-faults", "context-switches"):
            col = ev + "-per-sec"
            if col in r:
                assert near(float(r[col]), int(r[ev]) / secs), (k, r, col, secs)
                n += 1
assert sum(int(r["page-faults"]) for r in csv.DictReader(open(f"{d}/1.csv.f"))) >= 50000
js = json.load(open(f"{d}/1.json.f"))
assert near(js["meta"]["metric_seconds"], dur), js["meta"]
js = json.load(open(f"{d}/2.json.f"))
assert near(js["meta"]["metric_seconds"], 0.4), js["meta"]
print(f"{n} metric cells of the fleet = count / seconds")
PY
grep -q "^# metrics: seconds = [0-9.]* s, the length of the session$" "$tmp/1.text.f" ||
	fail "fleet text: no line on seconds: $(head -5 "$tmp/1.text.f")"
ok "the fleet's metric cells are the counts over the session's (or the range's) length"

refused 2 report "give --host H and --session ID" "$STROBE" report --source "$url" --session 1 -M "$M"
refused 2 report "give --host H and --session ID" "$STROBE" report --source "$url" --host "$hA" -M "$M"
refused 2 report "not --by host" "$STROBE" report --source "$url" --host "$hA" --session 1 --by host -M "$M"
"$STROBE" report --db "$tmp/a.db" --session 1 -M IPC >/dev/null 2>"$tmp/lerr" && fail "local -M IPC accepted"
refused 2 report "instructions|cycles" "$STROBE" report --source "$url" --host "$hA" --session 1 -M IPC
[ "$(cat "$tmp/err")" = "$(cat "$tmp/lerr")" ] || fail "-M IPC: fleet says '$(cat "$tmp/err")', local '$(cat "$tmp/lerr")'"
refused 2 report "unknown metric" "$STROBE" report --source "$url" --host "$hA" --session 1 -M nosuch
ok "-M of several sessions, with --by host, of events not counted, unknown: refused"
exit 0
