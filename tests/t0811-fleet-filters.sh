#!/bin/sh
# t0811-fleet-filters: the filters of 'strobe report --source' (--pid,
# --comm, --binary, --kernel, --user, --from, --to) select the same
# samples as the local report's.  One session (counting page-faults) is
# pushed to two real ClickHouse shards (tests/clickhouse.sh); for each
# filter and some combinations, the fleet's CSV and JSON (meta included)
# are byte for byte the local report's of the same session, and the text
# too but for the lines push does not carry (t0810).  The per-location
# filters read samples_by_loc (schema 2), the time range the samples:
# both checked, as is a filter that selects nothing and the options
# still refused with --source.
. "$(dirname "$0")/lib.sh"
need_root
command -v sqlite3 >/dev/null || skip "sqlite3 is not installed"
. "$(dirname "$0")/clickhouse.sh"

ch_fleet
"$STROBE" record --db "$tmp/a.db" --sample-event cpu-clock -F 2000 -e page-faults -- \
	"$WL/split603010" 1 >/dev/null 2>"$tmp/rec.err" || fail "record: $(cat "$tmp/rec.err")"
"$STROBE" push --db "$tmp/a.db" --to "$url" --host fhost >/dev/null 2>"$tmp/push.err" ||
	fail "push: $(cat "$tmp/push.err")"
n=$(sqlq "$tmp/a.db" "SELECT count(*) FROM samples WHERE session_id = 1")
ok "pushed a session of $n samples as host fhost"

# the busiest pid and comm, a binary, and the session's middle
pid=$(sqlq "$tmp/a.db" "SELECT pid FROM samples WHERE session_id = 1 GROUP BY pid ORDER BY count(*) DESC LIMIT 1")
comm=$(sqlq "$tmp/a.db" "SELECT c.name FROM samples s JOIN comms c ON c.id = s.comm_id WHERE s.session_id = 1 GROUP BY c.name ORDER BY count(*) DESC LIMIT 1")
half=$(sqlq "$tmp/a.db" "SELECT (end_ns - start_ns) / 2000000 FROM sessions WHERE id = 1")
[ -n "$pid" ] && [ -n "$comm" ] && [ -n "$half" ] || fail "no pid, comm or duration in a.db"

localonly() {
	grep -v -e '^# note: ' -e '^# WARNING: [0-9]* records reached strobed more than' \
		-e '^# WARNING: the maps of [0-9]* process' -e '^# page-faults: ' "$1"
}
k=0
check() {	# ARGS...: local and fleet reports with these filters agree
	k=$((k + 1))
	for f in csv json text; do
		"$STROBE" report --db "$tmp/a.db" --session 1 --format $f --limit 0 "$@" \
			>"$tmp/$k.$f.l" 2>"$tmp/err" || fail "$*: local: $(cat "$tmp/err")"
		"$STROBE" report --source "$url" --host fhost --session 1 --format $f --limit 0 "$@" \
			>"$tmp/$k.$f.f" 2>"$tmp/err" || fail "$*: fleet: $(cat "$tmp/err")"
	done
	cmp "$tmp/$k.csv.l" "$tmp/$k.csv.f" || fail "$*: csv differs: $(diff "$tmp/$k.csv.l" "$tmp/$k.csv.f" | head -8)"
	cmp "$tmp/$k.json.l" "$tmp/$k.json.f" || fail "$*: json differs: $(diff "$tmp/$k.json.l" "$tmp/$k.json.f" | head -8)"
	localonly "$tmp/$k.text.l" >"$tmp/l"
	localonly "$tmp/$k.text.f" >"$tmp/f"
	cmp "$tmp/l" "$tmp/f" || fail "$*: text differs: $(diff "$tmp/l" "$tmp/f" | head -8)"
	ok "$*: csv, json and text as the local report ($(($(wc -l <"$tmp/$k.csv.f") - 1)) rows, $(grep '^# filter' "$tmp/$k.text.f"))"
}
check --pid "$pid"
check --comm "$comm"
check --binary split603010
check --binary '[kernel.kallsyms]'
check --kernel
check --user
check --user --comm "$comm" --pid "$pid"
check --from "${half}ms"
check --to "${half}ms" --user
check --from 0 --to "${half}ms" --by binary
# the filter makes a difference: some rows, fewer than the whole session
grep -q "^# filter: pid $pid: [0-9]* samples" "$tmp/1.text.f" || fail "no filter line: $(head -4 "$tmp/1.text.f")"
m=$(sed -n 's/^# filter: time from [0-9.]* s: \([0-9]*\) samples.*/\1/p' "$tmp/8.text.f")
[ -n "$m" ] && [ "$m" -gt 0 ] && [ "$m" -lt "$n" ] || fail "--from half: $m samples of $n"
ok "--from the middle: $m of $n samples"
# which table: a pid nobody had reads no aggregate row, and the aggregate is what is read
"$STROBE" report --source "$url" --host fhost --pid 999999999 --format csv >"$tmp/none.csv" 2>"$tmp/err" ||
	fail "--pid 999999999: $(cat "$tmp/err")"
[ "$(wc -l <"$tmp/none.csv")" = 1 ] || fail "--pid 999999999 has rows: $(cat "$tmp/none.csv")"
# push's per-100-ms sums, to compare with 002's upgrade below
byt="SELECT bucket_ns, cpu, pid, binary_id, sum(n), sum(c0) FROM strobe.samples_by_time WHERE host = 'fhost' GROUP BY bucket_ns, cpu, pid, binary_id ORDER BY bucket_ns, cpu, pid, binary_id"
ch_q 1 "$byt" >"$tmp/byt.push"
[ -s "$tmp/byt.push" ] || fail "no samples_by_time rows of fhost"
for i in 1 2; do
	for tb in samples_by_loc_local samples_by_time_local; do
		for p in $(ch_q $i "SELECT DISTINCT partition FROM system.parts WHERE database = 'strobe' AND table = '$tb' AND active"); do
			ch_q $i "ALTER TABLE strobe.$tb DROP PARTITION $p"
		done
	done
done
"$STROBE" report --source "$url" --host fhost --comm "$comm" --format csv >"$tmp/agg.csv" 2>"$tmp/err" ||
	fail "after dropping the aggregate: $(cat "$tmp/err")"
[ "$(wc -l <"$tmp/agg.csv")" = 1 ] || fail "--comm reads rows without the aggregate: it does not read samples_by_loc"
"$STROBE" report --source "$url" --host fhost --from 0 --format csv >"$tmp/raw.csv" 2>"$tmp/err" ||
	fail "--from 0 without the aggregate: $(cat "$tmp/err")"
[ "$(wc -l <"$tmp/raw.csv")" -gt 1 ] || fail "--from 0 reads no rows: it does not read the samples"
ok "--comm reads samples_by_loc, --from the samples"

# upgrading a fleet of schema 1: 002 sums the samples of sessions that
# have no aggregate rows (here fhost's, dropped above), once however often
# it is applied; the reports then read what push would have sent
ch_schema 1
ch_schema 2
ch_schema 1
ch_schema 2
"$STROBE" report --source "$url" --host fhost --session 1 --format csv --limit 0 --comm "$comm" \
	>"$tmp/up.csv" 2>"$tmp/err" || fail "after the upgrade: $(cat "$tmp/err")"
cmp "$tmp/2.csv.f" "$tmp/up.csv" || fail "--comm after 002 summed the samples: $(diff "$tmp/2.csv.f" "$tmp/up.csv" | head -5)"
for t in samples_by_loc samples_by_time; do
	a=$(ch_q 1 "SELECT sum(n) FROM strobe.$t WHERE host = 'fhost'")
	[ "$a" = "$n" ] || fail "$t holds $a samples of fhost after 002 applied twice, not $n"
done
ch_q 1 "$byt" >"$tmp/byt.up"
cmp "$tmp/byt.push" "$tmp/byt.up" ||
	fail "002's samples_by_time differs from push's (buckets since the session's start): $(diff "$tmp/byt.push" "$tmp/byt.up" | head -4)"
ok "002 applied twice on a fleet without aggregates: sums the samples once, the reports read the same"

refused 2 report "--cgroup is not" "$STROBE" report --source "$url" --cgroup /x/
refused 2 report "--no-demangle is not" "$STROBE" report --source "$url" --no-demangle
refused 2 report "--pid PID@START is not" "$STROBE" report --source "$url" --pid "$pid@0.1s"
ok "--cgroup, --no-demangle and --pid PID@START refused with --source"
exit 0
