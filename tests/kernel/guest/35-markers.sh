# USDT markers with both backends: tlbwalk 4 11 gives 8 usdt markers n=4..11
if [ ! -x /usr/sbin/strobed ]; then
	echo "SKIP markers: strobed and its libraries are packed into the x86_64 guest only"
	exit 0
fi
W=/usr/libexec/strobe
fails=0
for b in driver perf; do
	export STROBE_DB=/tmp/db/m$b.db STROBE_SOCKET=/tmp/m$b.sock
	strobed --foreground --backend $b 2>/tmp/m$b.log &
	spid=$!
	i=0
	while [ ! -S $STROBE_SOCKET ] && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
	strobe start --sample-event cpu-clock -F 1000 -e page-faults --marker $W/tlbwalk:tlbwalk:size >/tmp/m$b.start 2>&1 ||
		{ echo "FAIL $b-marker-start: $(cat /tmp/m$b.start /tmp/m$b.log)"; fails=1; kill $spid; continue; }
	strobe mark before
	sh -c "echo \$\$ >/tmp/m$b.pid; exec $W/tlbwalk 4 11 -P 50" >/dev/null
	strobe mark after
	strobe stop >/tmp/m$b.stop 2>&1
	kill $spid; wait $spid
	strobe report --markers >/tmp/m$b.txt 2>&1
	sed "s/^/# $b: /" /tmp/m$b.txt
	pid=$(cat /tmp/m$b.pid)
	got=$(sqlite3 $STROBE_DB "SELECT group_concat(substr(args, 1, instr(args, ',') - 1), ' ') FROM (SELECT args FROM markers WHERE kind='usdt' AND pid=$pid AND cpu IS NOT NULL ORDER BY time_ns)")
	order=$(sqlite3 $STROBE_DB "SELECT (SELECT time_ns FROM markers WHERE name='before') < min(time_ns) AND max(time_ns) < (SELECT time_ns FROM markers WHERE name='after') FROM markers WHERE kind='usdt'")
	[ "$got" = "4 5 6 7 8 9 10 11" ] && [ "$order" = 1 ] && echo "PASS $b-usdt-markers" ||
		{ echo "FAIL $b-usdt-markers: '$got' order $order"; fails=1; }
	backend=$(sqlite3 $STROBE_DB "SELECT backend FROM sessions")
	echo "# $b: session backend $backend"
done
[ $fails = 0 ]
