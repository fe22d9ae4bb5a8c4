# strobed itself in the guest, once with the driver (--backend driver) and
# once with perf_event_open (--backend perf), on the same workloads: the
# samples land in the same tables with the same columns filled, and the
# reports agree (split603010's 60/30/10 split; pagetouch's page faults).
if [ ! -x /usr/sbin/strobed ]; then
	echo "SKIP strobed-backends: strobed and its libraries are packed into the x86_64 guest only"
	exit 0
fi
W=/usr/libexec/strobe
NPAGES=50000
fails=0
fail() { echo "FAIL $1: $2"; fails=$((fails + 1)); }
pass() { echo "PASS $1"; }

# share BACKEND SYMBOL: percent of the split workload's samples in SYMBOL
share() {
	awk -F, -v s="$2" 'NR > 1 && $3 == s { print $5 }' /tmp/$1.split.csv
}

run_backend() {
	b=$1
	export STROBE_DB=/tmp/$b.db STROBE_SOCKET=/tmp/$b.sock
	strobed --foreground --backend $b 2>/tmp/$b.log &
	spid=$!
	i=0
	while [ ! -S $STROBE_SOCKET ] && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
	if ! strobe start --sample-event cpu-clock -F 1000 -e page-faults,context-switches \
		--name $b >/tmp/$b.start 2>&1; then
		fail "$b-start" "$(cat /tmp/$b.start /tmp/$b.log)"
		kill $spid
		return 1
	fi
	sh -c "echo \$\$ >/tmp/$b.split.pid; exec $W/split603010 3"
	sh -c "echo \$\$ >/tmp/$b.touch.pid; exec chrt -f 10 $W/pagetouch $NPAGES"
	sleep 0.3
	strobe stop >/tmp/$b.stop 2>&1 || fail "$b-stop" "$(cat /tmp/$b.stop)"
	kill $spid
	wait $spid
	echo "# $b: $(cat /tmp/$b.stop)"
	grep -E 'session .*(stopped|handler)' /tmp/$b.log | sed "s/^/# $b: /"
	strobe report --pid "$(cat /tmp/$b.split.pid)" --by symbol --format csv >/tmp/$b.split.csv ||
		fail "$b-report" "strobe report failed"
	strobe report --pid "$(cat /tmp/$b.touch.pid)" --by symbol --format csv >/tmp/$b.touch.csv ||
		fail "$b-report" "strobe report failed"
	strobe sessions --format csv >/tmp/$b.sessions.csv
	return 0
}

for b in driver perf; do
	run_backend $b || continue
	db=/tmp/$b.db
	# the driver's own count (STATS: samples + dropped) is what strobed stored
	if [ $b = driver ]; then
		st=$(sed -n 's/.*session 1: \([0-9]*\) samples, \([0-9]*\) lost.*/\1 \2/p' /tmp/$b.stop)
		hs=$(sed -n 's/.*driver overflow handler.* over \([0-9]*\) samples.*/\1/p' /tmp/$b.log)
		[ -n "$st" ] && [ -n "$hs" ] && [ $(( ${st% *} + ${st#* } )) = "$hs" ] &&
			pass "driver-stats-match-rows" ||
			{ fail "driver-stats-match-rows" "stop says '$st' (samples lost), driver STATS $hs"; cat /tmp/$b.log; }
	fi
	# the session says which backend produced it
	be=$(awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) if ($i == "backend") c = i } NR == 2 { print $c }' /tmp/$b.sessions.csv)
	[ "$be" = $b ] && pass "$b-session-backend" ||
		fail "$b-session-backend" "$(cat /tmp/$b.sessions.csv)"
	# samples on every CPU, each CPU's times and TSCs in order
	ncpu=$(nproc)
	got=$(sqlite3 $db "SELECT count(DISTINCT cpu) FROM samples")
	[ "$got" = "$ncpu" ] && pass "$b-samples-every-cpu" || fail "$b-samples-every-cpu" "$got of $ncpu CPUs"
	bad=$(sqlite3 $db "SELECT count(*) FROM (SELECT cpu, time_ns, tsc,
		lag(time_ns) OVER (PARTITION BY cpu ORDER BY rowid) AS pt,
		lag(tsc) OVER (PARTITION BY cpu ORDER BY rowid) AS ptsc FROM samples)
		WHERE time_ns < pt OR tsc < ptsc OR tsc = 0")
	[ "$bad" = 0 ] && pass "$b-time-tsc-monotonic" || fail "$b-time-tsc-monotonic" "$bad samples out of order or without TSC"
	# the driver reads the TSC at the sample; perf derives it from the time
	nx=$(sqlite3 $db "SELECT count(*) FROM samples WHERE flags & 256 = 0")
	ne=$(sqlite3 $db "SELECT count(*) FROM samples WHERE flags & 256 != 0")
	if [ $b = driver ]; then
		[ "$nx" = 0 ] && [ "$ne" -gt 0 ] && pass "driver-tsc-exact" || fail "driver-tsc-exact" "$nx samples without STROBE_SAMPLE_TSC_EXACT"
	else
		[ "$ne" = 0 ] && pass "perf-tsc-derived" || fail "perf-tsc-derived" "$ne samples claim an exact TSC"
	fi
	# the split workload: 60/30/10 within 6 points
	n=$(awk -F, 'NR > 1 { n += $4 } END { print n + 0 }' /tmp/$b.split.csv)
	ok=1
	for f in work60:60 work30:30 work10:10; do
		p=$(share $b ${f%:*})
		awk -v p="${p:-0}" -v w=${f#*:} 'BEGIN { exit !(p - w <= 6 && w - p <= 6) }' || ok=0
		echo "# $b: ${f%:*} ${p:-0}% (want ${f#*:}) of $n samples"
	done
	[ $ok = 1 ] && [ "$n" -ge 300 ] && pass "$b-split-603010" || fail "$b-split-603010" "see the shares above"
	# user PCs resolved to the workload's symbols
	sym=$(awk -F, 'NR > 1 && $3 ~ /^work(60|30|10)$/ { n += $4 } END { print n + 0 }' /tmp/$b.split.csv)
	awk -v s=$sym -v n=$n 'BEGIN { exit !(n > 0 && s >= 0.9 * n) }' && pass "$b-user-symbols" ||
		fail "$b-user-symbols" "$sym of $n samples on work60/30/10"
	# page faults counted by the session's counters: NPAGES within 2%
	pf=$(awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) if ($i == "page-faults") c = i }
		NR > 1 { n += $c } END { print n + 0 }' /tmp/$b.touch.csv)
	echo "# $b: pagetouch $NPAGES pages: $pf page-faults"
	awk -v g=$pf -v w=$NPAGES 'BEGIN { d = g - w; if (d < 0) d = -d; exit !(d <= 0.02 * w) }' &&
		pass "$b-page-faults" || fail "$b-page-faults" "$pf counted, want $NPAGES within 2%"
	# no sample was dropped silently: lost rows agree with the stop summary
	sqlite3 $db "SELECT 'lost rows: ' || count(*) || ', lost samples: ' || coalesce(sum(count), 0) FROM lost" | sed "s/^/# $b: /"
done

# the two backends fill the same columns
for b in driver perf; do
	sqlite3 /tmp/$b.db "SELECT count(*) > 0, max(binary_id) IS NOT NULL, max(comm_id) IS NOT NULL,
		count(c0) = count(*), count(c1) = count(*), count(c2) = 0, min(pid) = 0 FROM samples" >/tmp/$b.cols 2>&1
done
echo "# columns driver: $(cat /tmp/driver.cols) perf: $(cat /tmp/perf.cols)"
cmp -s /tmp/driver.cols /tmp/perf.cols && pass "backends-same-columns" ||
	fail "backends-same-columns" "driver $(cat /tmp/driver.cols), perf $(cat /tmp/perf.cols)"
# and agree on the split within 8 points
ok=1
for s in work60 work30 work10; do
	awk -v a="$(share driver $s)" -v b="$(share perf $s)" 'BEGIN { d = a - b; if (d < 0) d = -d; exit !(a != "" && d <= 8) }' || ok=0
done
[ $ok = 1 ] && pass "backends-same-split" || fail "backends-same-split" "driver and perf shares differ by more than 8 points"
[ $fails = 0 ]
