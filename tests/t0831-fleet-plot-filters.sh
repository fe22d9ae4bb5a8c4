#!/bin/sh
# t0831-fleet-plot-filters: the filters of 'strobe plot --source' (--pid
# PID, --comm, --binary) select the same samples as the local plot's.  One
# session of two processes (split603010 and split306010 under sh, counting
# page-faults) is pushed to two real ClickHouse shards (tests/clickhouse.sh);
# for each filter, alone and with --by pid, binary or symbol, --metric and
# --from/--to, the fleet plot's CSV (-o x.csv) is byte for byte the local
# plot's ('strobe plot --db'), and the local plot with the filter differs
# from the one without it (so a filter the fleet ignored fails).  A filter
# that selects nothing fails with one line, and --pid PID@START, --symbol
# and --cgroup are still refused (exit 2).
. "$(dirname "$0")/lib.sh"
need_root
command -v sqlite3 >/dev/null || skip "sqlite3 is not installed"
. "$(dirname "$0")/clickhouse.sh"

ch_fleet
"$STROBE" record --db "$tmp/a.db" --sample-event cpu-clock -F 2000 -e page-faults -- \
	sh -c "\"$WL/split603010\" 1 & \"$WL/split306010\" 1; wait" >/dev/null 2>"$tmp/rec.err" ||
	fail "record: $(cat "$tmp/rec.err")"
"$STROBE" push --db "$tmp/a.db" --to "$url" --host fhost >/dev/null 2>"$tmp/push.err" ||
	fail "push: $(cat "$tmp/push.err")"
n=$(sqlq "$tmp/a.db" "SELECT count(*) FROM samples WHERE session_id = 1")
ok "pushed a session of $n samples as host fhost"

# the busiest pid (one of the two workloads)
pid=$(sqlq "$tmp/a.db" "SELECT pid FROM samples WHERE session_id = 1 GROUP BY pid ORDER BY count(*) DESC LIMIT 1")
[ -n "$pid" ] || fail "no pid in a.db"

k=0
check() {	# ARGS...: local and fleet plots with these filters agree
	k=$((k + 1))
	"$STROBE" plot --db "$tmp/a.db" --session 1 "$@" -o "$tmp/$k.l.csv" 2>"$tmp/err" ||
		fail "$*: local plot: $(cat "$tmp/err")"
	"$STROBE" plot --source "$url" --host fhost --session 1 "$@" -o "$tmp/$k.f.csv" \
		2>"$tmp/err" || fail "$*: fleet plot: $(cat "$tmp/err")"
	[ "$(wc -l <"$tmp/$k.l.csv")" -gt 5 ] || fail "$*: a plot of no buckets"
	cmp "$tmp/$k.l.csv" "$tmp/$k.f.csv" ||
		fail "$*: the CSVs differ: $(diff "$tmp/$k.l.csv" "$tmp/$k.f.csv" | head -6)"
}
# filtered FILTER -- ARGS: as the local plot with FILTER, which differs
# from the local plot of ARGS alone
filtered() {
	filt=
	while [ "$1" != -- ]; do filt="$filt $1"; shift; done
	shift
	"$STROBE" plot --db "$tmp/a.db" --session 1 "$@" -o "$tmp/u.csv" 2>"$tmp/err" ||
		fail "$*: local plot: $(cat "$tmp/err")"
	# shellcheck disable=SC2086
	check $filt "$@"
	! cmp -s "$tmp/u.csv" "$tmp/$k.l.csv" || fail "$filt $*: the filter changes nothing here"
	ok "$filt $*: the fleet's CSV as the local one ($(($(wc -l <"$tmp/$k.f.csv") - 1)) buckets), not the unfiltered one"
}
filtered --pid "$pid" -- --event samples
filtered --comm split306010 -- --event page-faults,samples
filtered --binary split603010 -- --event samples
filtered --binary '[kernel.kallsyms]' -- --event samples
filtered --pid "$pid" -- --event samples --by binary
filtered --binary '[kernel.kallsyms]' -- --event samples --by pid
filtered --comm split603010 -- --event samples --by symbol --top 3
filtered --binary split306010 -- --metric page-faults/samples --bucket 50 --from 0.2 --to 0.9
filtered --comm split603010 --binary split603010 -- --event samples --by binary
# --by pid over the filter: more than one series
[ "$(head -1 "$tmp/6.l.csv" | tr ',' '\n' | wc -l)" -gt 5 ] ||
	fail "--by pid of the kernel: fewer than 2 series: $(head -1 "$tmp/6.l.csv")"

# nothing passes: one line, as locally
refused 1 plot "no samples between .* with these filters \(pid 999999999\)" "$STROBE" plot \
	--source "$url" --host fhost --pid 999999999 --event samples -o "$tmp/x.csv"
refused 1 plot "with these filters \(comm nosuch\)" "$STROBE" plot --source "$url" --comm nosuch \
	--event samples -o "$tmp/x.csv"
for o in "--pid $pid@0.1" "--symbol main" "--cgroup /"; do
	# shellcheck disable=SC2086
	refused 2 plot "${o%% *}.* is not supported with --source" "$STROBE" plot --source "$url" $o \
		--event samples -o "$tmp/x.csv"
done
[ ! -e "$tmp/x.csv" ] || fail "a refused plot wrote its CSV"
ok "a filter of no samples: exit 1; --pid PID@START, --symbol, --cgroup: exit 2; one line each"
exit 0
