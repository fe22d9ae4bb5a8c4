#!/bin/sh
# t0841-fleet-export-formats: 'strobe export --source' with --process-start
# and --format chrome-trace, against two real ClickHouse servers
# (tests/clickhouse.sh).  A session of host H (a.db, pushed under its own
# hostname, which the Chrome trace's otherData names) and one of host B
# (b.db) are pushed, each with markers (a 'strobe mark', a USDT hit with
# arguments, one without) and lost and throttle records added to SQLite
# before the push.  Then:
#  - csv --process-start of H's session is byte for byte the local export,
#    also with --pid, --comm and --from/--to;
#  - chrome-trace of it (with and without --samples, --bucket, --pid,
#    --comm, --from/--to, -o) is byte for byte the local export;
#  - both hosts' session 1 in one trace: each session's events (its pids
#    offset by 8388608 per session, its process names "host#session: ")
#    are its local trace's, otherData lists both;
#  - bad combinations fail with one line.
. "$(dirname "$0")/lib.sh"
need_root
command -v sqlite3 >/dev/null || skip "sqlite3 is not installed"
. "$(dirname "$0")/clickhouse.sh"

ch_fleet
ok "two clickhouse-server shards up, schema applied"
ch_shard_hosts

"$STROBE" record --db "$tmp/a.db" --sample-event cpu-clock -F 2000 -e page-faults -- \
	"$WL/split603010" 1 >/dev/null 2>"$tmp/rec.err" || fail "record a: $(cat "$tmp/rec.err")"
"$STROBE" record --db "$tmp/b.db" --sample-event cpu-clock -F 1500 -e page-faults -- \
	"$WL/split306010" 1 >/dev/null 2>"$tmp/rec.err" || fail "record b: $(cat "$tmp/rec.err")"
# markers and lost records, as strobed stores them (doc/SCHEMA.md)
# the pid of the workload (the recording is system-wide)
wpid() {
	sqlq "$1" "SELECT p.pid FROM processes p JOIN comms c ON c.id = p.comm_id
		WHERE p.session_id = 1 AND c.name LIKE 'split%' ORDER BY p.start_ns DESC LIMIT 1"
}
for db in a b; do
	pid=$(wpid "$tmp/$db.db")
	[ -n "$pid" ] || fail "$db.db: no split process"
	sqlq "$tmp/$db.db" "INSERT INTO markers (session_id, time_ns, cpu, pid, tid, kind, name, args)
		SELECT 1, start_ns + 100000000, NULL, 4242, 4242, 'mark', 'phase \"one\"', NULL FROM sessions WHERE id = 1;
		INSERT INTO markers (session_id, time_ns, cpu, pid, tid, kind, name, args)
		SELECT 1, start_ns + 300000000, 1, $pid, $pid, 'usdt', 'app:step', '7,-1,?' FROM sessions WHERE id = 1;
		INSERT INTO markers (session_id, time_ns, cpu, pid, tid, kind, name, args)
		SELECT 1, start_ns + 700000000, 0, $pid, $pid, 'usdt', 'app:done', NULL FROM sessions WHERE id = 1;
		INSERT INTO lost (session_id, cpu, time_ns, count, kind)
		SELECT 1, 0, start_ns + 250000000, 17, 'ring' FROM sessions WHERE id = 1;
		INSERT INTO lost (session_id, cpu, time_ns, count, kind)
		SELECT 1, 1, start_ns + 650000000, 1, 'throttle' FROM sessions WHERE id = 1;" ||
		fail "adding markers to $db.db"
done
hH=$(sqlq "$tmp/a.db" "SELECT hostname FROM sessions WHERE id = 1")
[ -n "$hH" ] && [ "$hH" != "$hB" ] || fail "hostname '$hH'"
"$STROBE" push --db "$tmp/a.db" --to "$url" --host "$hH" >/dev/null 2>"$tmp/push.err" ||
	fail "push a: $(cat "$tmp/push.err")"
"$STROBE" push --db "$tmp/b.db" --to "$url" --host "$hB" >/dev/null 2>"$tmp/push.err" ||
	fail "push b: $(cat "$tmp/push.err")"
ok "pushed session 1 of $hH (a.db, its hostname) and of $hB (b.db)"

# same NAME FORMAT ARGS: the local export of a.db and the fleet's of host H
same() {
	name=$1 fmt=$2
	shift 2
	"$STROBE" export --db "$tmp/a.db" --session 1 --format "$fmt" "$@" >"$tmp/$name.local" \
		2>"$tmp/err" || fail "$name: local export: $(cat "$tmp/err")"
	"$STROBE" export --source "$url" --host "$hH" --session 1 --format "$fmt" "$@" \
		>"$tmp/$name.fleet" 2>"$tmp/err" || fail "$name: fleet export: $(cat "$tmp/err")"
	[ "$(wc -l <"$tmp/$name.local")" -gt 10 ] || fail "$name: an export of few lines"
	cmp "$tmp/$name.local" "$tmp/$name.fleet" ||
		fail "$name: differs: $(diff "$tmp/$name.local" "$tmp/$name.fleet" | head -6)"
}
pid=$(wpid "$tmp/a.db")
same ps csv --process-start
head -1 "$tmp/ps.fleet" | grep -q ',build_id,process_start_ns$' || fail "header: $(head -1 "$tmp/ps.fleet")"
start=$(sqlq "$tmp/a.db" "SELECT start_ns FROM processes WHERE session_id = 1 AND pid = $pid
	ORDER BY start_ns DESC LIMIT 1")
[ -n "$start" ] && grep -q "^[0-9]*,[0-9]*,[0-9]*,$pid,[0-9]*,split603010,.*,$start\$" "$tmp/ps.fleet" ||
	fail "no row of pid $pid with its start $start"
same ps-pid csv --process-start --pid "$pid"
same ps-comm csv --process-start --comm split603010
same ps-time csv --process-start --from 200ms --to 0.6s
ok "csv --process-start as the local export, also with --pid, --comm, --from/--to"

same ct chrome-trace
same ct-samples chrome-trace --samples
same ct-bucket chrome-trace --bucket 10ms
same ct-pid chrome-trace --pid "$pid" --samples
same ct-comm chrome-trace --comm split603010
same ct-time chrome-trace --from 200ms --to 0.6s --samples
cmp -s "$tmp/ct.local" "$tmp/ct-time.local" && fail "--from/--to changed nothing"
"$STROBE" export --source "$url" --host "$hH" --session 1 --format chrome-trace -o "$tmp/ct.out" \
	2>"$tmp/err" || fail "-o: $(cat "$tmp/err")"
cmp "$tmp/ct.local" "$tmp/ct.out" || fail "-o FILE differs from the local export"
# the rows added above, and any the kernel wrote (throttling under load)
nlost=$(sqlq "$tmp/a.db" "SELECT count(*) FROM lost WHERE session_id = 1")
python3 - "$tmp/ct.fleet" "$hH" "$nlost" <<'PY' || fail "chrome-trace: its content (above)"
import collections, json, sys
d = json.load(open(sys.argv[1]))
ev = d["traceEvents"]
mk = [e for e in ev if e.get("cat") == "marker"]
assert [e["name"] for e in mk] == ['phase "one"', "app:step", "app:done"], mk
assert mk[0]["s"] == "g" and mk[1]["s"] == "t" and mk[1]["args"]["args"] == "7,-1,?", mk
assert "args" not in mk[2]["args"] and mk[2]["args"]["cpu"] == 0, mk[2]
assert "cpu" not in mk[0]["args"], mk[0]
lost = [e["name"] for e in ev if e.get("cat") == "lost"]
mine = ["lost 17 samples (ring buffer full) on cpu0", "throttled on cpu1"]
assert not (collections.Counter(mine) - collections.Counter(lost)) and len(lost) == int(sys.argv[3]), lost
assert any(e["ph"] == "C" for e in ev), "no counter points"
assert any(e["ph"] == "M" and e["name"] == "process_name" and e["args"]["name"] == "split603010" for e in ev)
assert d["otherData"]["hostname"] == sys.argv[2], d["otherData"]
PY
ok "chrome-trace as the local export (markers, lost, names), with --samples, --bucket, --pid, --comm, --from/--to, -o"

# several hosts: each session its own group of processes
"$STROBE" export --db "$tmp/b.db" --session 1 --format chrome-trace --samples >"$tmp/b.local" \
	2>"$tmp/err" || fail "local b: $(cat "$tmp/err")"
"$STROBE" export --db "$tmp/a.db" --session 1 --format chrome-trace --samples >"$tmp/a.local" \
	2>"$tmp/err" || fail "local a: $(cat "$tmp/err")"
"$STROBE" export --source "$url" --session 1 --format chrome-trace --samples >"$tmp/all.json" \
	2>"$tmp/err" || fail "--session 1 of both hosts: $(cat "$tmp/err")"
python3 - "$tmp/all.json" "$tmp/a.local" "$tmp/b.local" "$hH" "$hB" <<'PY' || fail "several hosts (above)"
import json, sys
d = json.load(open(sys.argv[1]))
SPAN = 8388608
hosts = sorted([(sys.argv[4], sys.argv[2]), (sys.argv[5], sys.argv[3])])
sess = d["otherData"]["sessions"]
assert [s["hostname"] for s in sess] == [h for h, _ in hosts], sess
for i, (h, path) in enumerate(hosts):
    local = json.load(open(path))
    base = i * SPAN
    assert sess[i]["pid_base"] == base
    mine = [dict(e) for e in d["traceEvents"] if base <= e["pid"] < base + SPAN]
    for e in mine:
        e["pid"] -= base
        if e["ph"] == "M" and e["name"] == "process_name":
            pre = f"{h}#1: "
            assert e["args"]["name"].startswith(pre), e
            e["args"] = {"name": e["args"]["name"][len(pre):]}
    if mine != local["traceEvents"]:
        # what differs, for the log: events of one side the other lacks
        a = [json.dumps(e, sort_keys=True) for e in mine]
        b = [json.dumps(e, sort_keys=True) for e in local["traceEvents"]]
        print("  fleet only:", sorted(set(a) - set(b))[:5], file=sys.stderr)
        print("  local only:", sorted(set(b) - set(a))[:5], file=sys.stderr)
    assert mine == local["traceEvents"], (h, len(mine), len(local["traceEvents"]))
    o = dict(local["otherData"])
    for k in ("generator", "counter_bucket_us", "counters_pid", "samples", "filters"):
        o.pop(k)
    s = dict(sess[i])
    s.pop("pid_base")
    o.pop("hostname"), s.pop("hostname")
    assert s == o, (s, o)
    print(f"  {h}: {len(mine)} events as its local trace")
assert d["otherData"]["samples"] == sum(json.load(open(p))["otherData"]["samples"] for _, p in hosts)
PY
ok "several hosts: each session's events (pids offset, names prefixed) its local trace's"

# bad combinations: one line each
refused 2 export "--format other than csv and chrome-trace is not supported" \
	"$STROBE" export --source "$url" --format folded
refused 2 export "--host-column applies to --format csv only" \
	"$STROBE" export --source "$url" --format chrome-trace --host-column
refused 2 export "--process-start applies to --format csv only" \
	"$STROBE" export --source "$url" --format chrome-trace --process-start
refused 2 export "--samples applies to --format chrome-trace only" \
	"$STROBE" export --source "$url" --format csv --samples
refused 2 export "--cgroup-column .*is not supported" \
	"$STROBE" export --source "$url" --format csv --process-start --cgroup-column
refused 2 export "--no-demangle .*is not supported" \
	"$STROBE" export --source "$url" --format chrome-trace --no-demangle
refused 1 export "nothing to export: no samples of pid 1 " \
	"$STROBE" export --source "$url" --format chrome-trace --pid 1
refused 1 export "no session 9 of host" \
	"$STROBE" export --source "$url" --host "$hH" --session 9 --format chrome-trace
ok "bad combinations refused with one line each"
exit 0
