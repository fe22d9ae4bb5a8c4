#!/bin/sh
# t0830-fleet-plot: 'strobe plot --source' against two real ClickHouse
# servers, the two shards of cluster strobe_fleet (tests/clickhouse.sh).
# Two sessions recorded with 'strobe record --db' (one counting
# page-faults, one counting nothing) are pushed as two hosts on different
# shards.  Then, for each host's session, the fleet plot's CSV (-o x.csv)
# is byte for byte the local plot's ('strobe plot --db') for --event,
# --metric (an expression and a catalogue name), --by cpu, pid, binary and
# symbol, --top, --bucket, --from/--to and --wall; the fleet plot of both
# hosts is the two local plots summed bucket by bucket (time since each
# session's start); --by host gives each host's local series; --data and
# a PNG are written; and bad inputs (unknown host or session, options a
# fleet plot does not take) fail with one line.
. "$(dirname "$0")/lib.sh"
need_root
. "$(dirname "$0")/clickhouse.sh"

ch_fleet
ok "two clickhouse-server shards up, schema applied"

ch_shard_hosts

"$STROBE" record --db "$tmp/a.db" --sample-event cpu-clock -F 2000 -e page-faults -- \
	"$WL/split603010" 1 >/dev/null 2>"$tmp/rec.err" || fail "record a: $(cat "$tmp/rec.err")"
"$STROBE" record --db "$tmp/b.db" --sample-event cpu-clock -F 1500 -- \
	"$WL/split306010" 1 >/dev/null 2>"$tmp/rec.err" || fail "record b: $(cat "$tmp/rec.err")"
# a marker a third into session a, a strobe mark's (no cpu)
python3 - "$tmp/a.db" <<'PY' || fail "adding a marker"
import sqlite3, sys
db = sqlite3.connect(sys.argv[1])
sid, start, end = db.execute("SELECT id, start_ns, end_ns FROM sessions WHERE id = 1").fetchone()
db.execute("INSERT INTO markers (session_id, time_ns, cpu, pid, tid, kind, name) "
           "VALUES (?, ?, NULL, 1, 1, 'mark', 'third <&> \"way\"')", (sid, start + (end - start) // 3))
db.commit()
PY
"$STROBE" push --db "$tmp/a.db" --to "$url" --host "$hA" >/dev/null 2>"$tmp/push.err" ||
	fail "push a: $(cat "$tmp/push.err")"
"$STROBE" push --db "$tmp/b.db" --to "$url" --host "$hB" >/dev/null 2>"$tmp/push.err" ||
	fail "push b: $(cat "$tmp/push.err")"
ok "pushed session 1 of $hA (a.db, counting page-faults) and of $hB (b.db)"

# same NAME DB HOST ARGS: the local plot's CSV of DB and the fleet's of HOST
same() {
	name=$1 db=$2 h=$3
	shift 3
	"$STROBE" plot --db "$db" --session 1 "$@" -o "$tmp/$name.local.csv" 2>"$tmp/err" ||
		fail "$name: local plot: $(cat "$tmp/err")"
	"$STROBE" plot --source "$url" --host "$h" --session 1 "$@" -o "$tmp/$name.fleet.csv" \
		2>"$tmp/err" || fail "$name: fleet plot: $(cat "$tmp/err")"
	[ "$(wc -l <"$tmp/$name.local.csv")" -gt 5 ] || fail "$name: a plot of no buckets"
	cmp "$tmp/$name.local.csv" "$tmp/$name.fleet.csv" ||
		fail "$h $*: the CSVs differ: $(diff "$tmp/$name.local.csv" "$tmp/$name.fleet.csv" | head -6)"
}
i=0
for x in "a $hA" "b $hB"; do
	set -- $x
	db=$tmp/$1.db h=$2
	while read -r args; do
		i=$((i + 1))
		# shellcheck disable=SC2086
		same "p$i" "$db" "$h" $args
		# a split must be a split: more than one series
		case $args in *--by*)
			[ "$(head -1 "$tmp/p$i.local.csv" | tr ',' '\n' | wc -l)" -gt 5 ] ||
				fail "$h $args: fewer than 2 series: $(head -1 "$tmp/p$i.local.csv")";;
		esac
	done <<EOF
--event samples
--event samples --bucket 20 --from 0.1 --to 0.8
--metric samples/seconds
--event samples --by cpu
--event samples --by pid --top 4
--event samples --by binary
--event samples --by symbol
--event samples --by symbol --top 3 --bucket 50 --from 0.25
--event samples --wall --bucket 100
EOF
	ok "$h: the CSV of --event, --metric, --by cpu|pid|binary|symbol, --top, --bucket, --from/--to, --wall as the local plot's ($i plots so far)"
done
while read -r args; do
	i=$((i + 1))
	# shellcheck disable=SC2086
	same "p$i" "$tmp/a.db" "$hA" $args
done <<EOF
--event page-faults,samples
--metric 1000*page-faults/samples
--metric page-faults-per-sec
--event page-faults,samples --by symbol --top 5
--metric page-faults/samples --by binary --top 3
EOF
head -1 "$tmp/p$i.fleet.csv" | grep -q ',other (' || fail "--top 3 of binaries: no other series"
ok "$hA: page-faults (an event of c0), metrics over it, split by symbol and binary, as the local plot's"

# both hosts: the local plots summed bucket by bucket, and --by host
for x in a b; do
	"$STROBE" plot --db "$tmp/$x.db" --session 1 --event samples --bucket 20 -o "$tmp/$x.csv" \
		2>"$tmp/err" || fail "local plot $x: $(cat "$tmp/err")"
done
"$STROBE" plot --source "$url" --event samples --bucket 20 -o "$tmp/all.csv" 2>"$tmp/err" ||
	fail "fleet plot of both: $(cat "$tmp/err")"
"$STROBE" plot --source "$url" --session 1 --event samples --bucket 20 --by host \
	-o "$tmp/hosts.csv" --data "$tmp/hosts-data.csv" 2>"$tmp/err" ||
	fail "--by host: $(cat "$tmp/err")"
cmp "$tmp/hosts.csv" "$tmp/hosts-data.csv" || fail "--data is not the CSV of -o"
python3 - "$tmp/a.csv" "$tmp/b.csv" "$tmp/all.csv" "$tmp/hosts.csv" "$hA" "$hB" <<'PY' || fail "the fleet plot of both hosts is not the sum of the local plots (above)"
import csv, sys
def load(p):
    return {r["from_s"]: r for r in csv.DictReader(open(p, newline=""))}
a, b, f, h = (load(p) for p in sys.argv[1:5])
hA, hB = sys.argv[5:7]
bad = 0
for k in sorted(set(a) | set(b), key=float):
    want = int(a.get(k, {}).get("samples", 0) or 0) + int(b.get(k, {}).get("samples", 0) or 0)
    got = int(f[k]["samples"]) if k in f else -1
    if want != got:
        bad += 1
        print(f"  bucket {k}: local {want}, fleet {got}")
    for host, loc in ((hA, a), (hB, b)):
        lv = int(loc[k]["samples"]) if k in loc else 0
        hv = int(h[k][host]) if k in h else -1
        if lv != hv:
            bad += 1
            print(f"  --by host, {host}, bucket {k}: local {lv}, fleet {hv}")
if len(f) != max(len(a), len(b)):
    bad += 1
    print(f"  {len(f)} buckets, not {max(len(a), len(b))}")
print(f"  {len(f)} buckets, {sum(int(r['samples']) for r in f.values())} samples")
sys.exit(1 if bad or not f else 0)
PY
head -1 "$tmp/hosts.csv" | grep -qx "from_s,to_s,from_ns,to_ns,$hA,$hB\|from_s,to_s,from_ns,to_ns,$hB,$hA" ||
	fail "--by host columns: $(head -1 "$tmp/hosts.csv")"
ok "both hosts: the sum of the local plots per bucket since each start; --by host: each host's own series; --data"

# both hosts --by binary: binaries merged by name, each the sum of the
# local series of that name (all binaries are series: --top 64)
for x in a b; do
	"$STROBE" plot --db "$tmp/$x.db" --session 1 --event samples --bucket 20 --by binary \
		--top 64 -o "$tmp/$x-bin.csv" 2>"$tmp/err" || fail "local --by binary $x: $(cat "$tmp/err")"
done
"$STROBE" plot --source "$url" --event samples --bucket 20 --by binary --top 64 \
	-o "$tmp/all-bin.csv" 2>"$tmp/err" || fail "fleet --by binary of both: $(cat "$tmp/err")"
python3 - "$tmp/a-bin.csv" "$tmp/b-bin.csv" "$tmp/all-bin.csv" <<'PY' || fail "the fleet's --by binary of both hosts is not the sum of the local series (above)"
import collections, csv, sys
def load(p):
    rows = list(csv.reader(open(p, newline="")))
    head, d = rows[0], collections.defaultdict(int)
    for r in rows[1:]:
        for name, v in zip(head[4:], r[4:]):
            d[(r[0], name)] += int(v or 0)
    return head, d
(ha, a), (hb, b), (hf, f) = (load(p) for p in sys.argv[1:4])
if any(h.startswith("other (") for h in ha + hb + hf):
    print("  more than 64 binaries: not compared")
    sys.exit(0)
want = collections.defaultdict(int)
for d in (a, b):
    for k, v in d.items():
        want[k] += v
bad = [k for k in set(want) | set(f) if want[k] != f[k]]
for k in sorted(bad)[:8]:
    print(f"  {k}: local sum {want[k]}, fleet {f[k]}")
print(f"  {len(hf) - 4} binaries ({len(set(ha[4:]) & set(hb[4:]))} in both), {sum(f.values())} samples")
sys.exit(1 if bad or not f else 0)
PY
ok "both hosts --by binary: each binary's series the sum of the local ones of that name"

if command -v gnuplot >/dev/null; then
	"$STROBE" plot --source "$url" --event samples --by host -o "$tmp/all.png" 2>"$tmp/err" ||
		fail "fleet PNG: $(cat "$tmp/err")"
	[ "$(head -c 4 "$tmp/all.png" | od -An -c | tr -d ' ')" = "211PNG" ] || fail "no PNG written"
	ok "a PNG of both hosts by host"
fi

# the marker: on the terminal as locally (byte for byte when the local
# plot has no lost or unscheduled spans to shade, which are not drawn
# from the fleet), and in the plot of both hosts
if command -v gnuplot >/dev/null; then
	"$STROBE" plot --db "$tmp/a.db" --session 1 --event samples --term >"$tmp/a.term" 2>"$tmp/err" ||
		fail "local --term: $(cat "$tmp/err")"
	"$STROBE" plot --source "$url" --host "$hA" --session 1 --event samples --term >"$tmp/f.term" \
		2>"$tmp/err" || fail "fleet --term: $(cat "$tmp/err")"
	"$STROBE" plot --source "$url" --event samples --term >"$tmp/all.term" 2>"$tmp/err" ||
		fail "fleet --term of both: $(cat "$tmp/err")"
	grep -q 'third <&> "way"' "$tmp/f.term" || fail "fleet --term: no marker label: $(head -12 "$tmp/f.term")"
	grep -q 'third <&> "way"' "$tmp/all.term" || fail "fleet --term of both hosts: no marker label"
	grep -q 'seconds since the start of each session' "$tmp/all.term" || fail "fleet --term of both: x label"
	spans=$(python3 -c 'import sqlite3, sys; db = sqlite3.connect(sys.argv[1]); print(sum(db.execute("SELECT count(*) FROM " + t + " WHERE session_id = 1").fetchone()[0] for t in ("lost", "unscheduled")))' "$tmp/a.db")
	if [ "$spans" = 0 ]; then
		cmp "$tmp/a.term" "$tmp/f.term" || fail "--term differs: $(diff "$tmp/a.term" "$tmp/f.term" | head -8)"
		ok "a marker: --term of the fleet byte for byte the local one's; in the plot of both hosts"
	else
		ok "a marker: in the fleet's --term of one and of both hosts (local --term not compared: $spans lost or unscheduled spans)"
	fi
else
	echo "(gnuplot is not installed: the markers on --term are not checked)"
fi

# bad inputs: one line each
refused 1 plot "no session of host 'nosuch'" "$STROBE" plot --source "$url" --host nosuch --event samples -o "$tmp/x.csv"
refused 1 plot "no session 99 of host '$hA'" "$STROBE" plot --source "$url" --host "$hA" --session 99 --event samples -o "$tmp/x.csv"
refused 1 plot "no session 99 of any host" "$STROBE" plot --source "$url" --session 99 --event samples -o "$tmp/x.csv"
refused 1 plot "unknown event 'nosuch'" "$STROBE" plot --source "$url" --host "$hA" --event nosuch -o "$tmp/x.csv"
for o in "--pid 1@0.5" "--symbol main" "--cgroup /" "--by cgroup" "--expect" "--no-demangle"; do
	# shellcheck disable=SC2086
	refused 2 plot "${o%% *}.* is not supported with --source" "$STROBE" plot --source "$url" $o --event samples -o "$tmp/x.csv"
done
refused 2 plot "--wall needs one session" "$STROBE" plot --source "$url" --wall --event samples -o "$tmp/x.csv"
refused 2 plot "give one of them" "$STROBE" plot --source "$url" --db "$tmp/a.db" --event samples -o "$tmp/x.csv"
refused 2 plot "--host is of fleet plots" "$STROBE" plot --db "$tmp/a.db" --host "$hA" --event samples -o "$tmp/x.csv"
refused 2 plot "--by host is of fleet plots" "$STROBE" plot --db "$tmp/a.db" --by host --event samples -o "$tmp/x.csv"
[ ! -e "$tmp/x.csv" ] || fail "a refused plot wrote its CSV"
ok "unknown host, session or event: exit 1; --pid PID@START, --symbol, --cgroup, --by cgroup, --expect, --wall of several sessions: exit 2; one line each"
exit 0
