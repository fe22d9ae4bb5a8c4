# strobed --backend driver on what the driver refuses or must survive:
# - a counting event whose PMU the overflow handler cannot read (task-clock,
#   another PMU) fails 'strobe start' with one line naming the event and
#   saying to use --backend perf;
# - CPU 1 going offline and coming back in the middle of a session: strobed
#   logs both transitions with their times, keeps running, stores samples
#   of CPU 1 from after its return, and none inside the gap.
if [ ! -x /usr/sbin/strobed ]; then
	echo "SKIP strobed-driver-limits: strobed and its libraries are packed into the x86_64 guest only"
	exit 0
fi
W=/usr/libexec/strobe
# the samples table is a virtual table over sample_blocks (schema 6)
sqlite3() { command sqlite3 -cmd ".load /usr/lib/strobe/strobe_samples" "$@"; }
fails=0
fail() { echo "FAIL $1: $2"; fails=$((fails + 1)); }
pass() { echo "PASS $1"; }

export STROBE_DB=/tmp/db/limits.db STROBE_SOCKET=/tmp/limits.sock
strobed --foreground --backend driver 2>/tmp/limits.log &
spid=$!
i=0
while [ ! -S $STROBE_SOCKET ] && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done

# refused counting events: one line, the event named, what to do
for ev in task-clock msr/tsc/; do
	if [ "$ev" = msr/tsc/ ] && [ ! -e /sys/bus/event_source/devices/msr ]; then
		echo "SKIP strobed-refuses-other-pmu: no msr PMU"
		continue
	fi
	name=strobed-refuses-task-clock
	[ "$ev" = msr/tsc/ ] && name=strobed-refuses-other-pmu
	if strobe start --sample-event cpu-clock -F 1000 -e page-faults,$ev >/tmp/limits.start 2>&1; then
		fail $name "strobe start -e page-faults,$ev succeeded: $(cat /tmp/limits.start)"
		strobe stop >/dev/null 2>&1
	elif grep -q "'$ev'.*--backend perf" /tmp/limits.start && [ "$(wc -l </tmp/limits.start)" = 1 ]; then
		pass $name
	else
		fail $name "$(cat /tmp/limits.start)"
	fi
	echo "# strobe start -e page-faults,$ev: $(cat /tmp/limits.start)"
done

# hotplug mid-session
if [ "$(nproc)" -lt 2 ] || [ ! -w /sys/devices/system/cpu/cpu1/online ]; then
	echo "SKIP strobed-hotplug: no CPU 1 that can go offline"
elif ! strobe start --sample-event cpu-clock -F 1000 -e page-faults --name hotplug >/tmp/limits.start 2>&1; then
	fail strobed-hotplug-start "$(cat /tmp/limits.start /tmp/limits.log)"
else
	sleep 0.5
	echo 0 >/sys/devices/system/cpu/cpu1/online
	sleep 0.5
	echo 1 >/sys/devices/system/cpu/cpu1/online
	taskset -c 1 $W/split603010 1 >/dev/null 2>&1 || $W/split603010 1 >/dev/null
	sleep 0.3
	if strobe stop >/tmp/limits.stop 2>&1 && kill -0 $spid 2>/dev/null; then
		pass strobed-hotplug-survives
	else
		fail strobed-hotplug-survives "$(cat /tmp/limits.stop /tmp/limits.log)"
	fi
	echo "# $(cat /tmp/limits.stop)"
	grep -E 'CPU 1 ' /tmp/limits.log | sed 's/^/# log: /'
	off=$(sed -n 's/.*CPU 1 went offline (CLOCK_MONOTONIC \([0-9]*\) ns).*/\1/p' /tmp/limits.log | head -n 1)
	on=$(sed -n 's/.*CPU 1 is back online (CLOCK_MONOTONIC \([0-9]*\) ns).*/\1/p' /tmp/limits.log | head -n 1)
	if [ -n "$off" ] && [ -n "$on" ] && [ "$on" -ge "$off" ] &&
		grep -q 'CPU 1 went offline 1 times and came back 1 times' /tmp/limits.log; then
		pass strobed-hotplug-logged
	else
		fail strobed-hotplug-logged "no or bad hotplug lines in strobed's log: $(cat /tmp/limits.log)"
	fi
	if [ -z "$off" ] || [ -z "$on" ]; then
		fail strobed-hotplug-samples-resume "no hotplug times in strobed's log"
	else
		gap=$(sqlite3 $STROBE_DB "SELECT count(*) FROM samples WHERE cpu = 1 AND time_ns > $off AND time_ns < $on")
		after=$(sqlite3 $STROBE_DB "SELECT count(*) FROM samples WHERE cpu = 1 AND time_ns > $on")
		before=$(sqlite3 $STROBE_DB "SELECT count(*) FROM samples WHERE cpu = 1 AND time_ns < $off")
		echo "# cpu 1 samples stored: $before before, $gap in the gap, $after after"
		[ "$gap" = 0 ] && [ "$before" -gt 20 ] && [ "$after" -gt 20 ] && pass strobed-hotplug-samples-resume ||
			fail strobed-hotplug-samples-resume "cpu 1: $before samples before, $gap in the gap, $after after (want > 20, 0, > 20)"
	fi
fi
echo 1 >/sys/devices/system/cpu/cpu1/online 2>/dev/null
kill $spid 2>/dev/null
wait $spid 2>/dev/null
[ $fails = 0 ]
