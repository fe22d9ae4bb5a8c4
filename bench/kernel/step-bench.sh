# Guest step of bench/kernel/run.sh (installed as /steps/50-bench.sh; the
# functional steps of tests/kernel/guest/ are not installed).  Runs kbench,
# then, if the kernel has the function_graph tracer, times each sample's
# overflow path under ftrace for both backends.  Measures only: it fails
# only if kbench cannot run at all.
#
# Kernel command-line parameters (they arrive as environment):
#   KB_SECS KB_ROUNDS KB_PERIOD KB_EVENT KB_COUNTERS KB_PAGES KB_FTRACE=0|1

set -u
args="-s ${KB_SECS:-3} -r ${KB_ROUNDS:-5}${KB_VERBOSE:+ -v}"
[ -n "${KB_PERIOD:-}" ] && args="$args -p $KB_PERIOD"
[ -n "${KB_EVENT:-}" ] && args="$args --event $KB_EVENT"
[ -n "${KB_COUNTERS:-}" ] && args="$args -e $KB_COUNTERS"
[ -n "${KB_PAGES:-}" ] && args="$args -b $KB_PAGES"

# The kernel lowers perf_event_max_sample_rate when sample interrupts
# take long, as they do under TCG, and would then throttle the runs that
# follow: keep the limit where it is for the whole benchmark.
echo "# before: perf_event_max_sample_rate=$(cat /proc/sys/kernel/perf_event_max_sample_rate)" \
	"perf_cpu_time_max_percent=$(cat /proc/sys/kernel/perf_cpu_time_max_percent)" \
	"clocksource=$(cat /sys/devices/system/clocksource/clocksource0/current_clocksource)" \
	"(available: $(cat /sys/devices/system/clocksource/clocksource0/available_clocksource))"
echo 0 >/proc/sys/kernel/perf_cpu_time_max_percent
echo 100000 >/proc/sys/kernel/perf_event_max_sample_rate

echo "BENCH-BEGIN kbench $args"
/kbench $args >/tmp/kb.main 2>&1; rc=$?
cat /tmp/kb.main
[ $rc = 0 ] || { echo "FAIL kbench exit $rc"; exit 1; }
echo "BENCH-END"
# the ftrace runs do a third of the same work, uncalibrated
iters=$(sed -n 's/.* rounds of \([0-9]*\) iterations.*/\1/p' /tmp/kb.main)
fargs="-n $((iters / 3)) -r 1${KB_PERIOD:+ -p $KB_PERIOD}${KB_EVENT:+ --event $KB_EVENT}"
fargs="$fargs${KB_COUNTERS:+ -e $KB_COUNTERS}${KB_PAGES:+ -b $KB_PAGES}"

# The overflow path under function_graph: hrtimer_interrupt (the whole
# timer interrupt: the sampling hrtimer, the tick, any other expired timer),
# inside it __perf_event_overflow (throttle accounting, then the overflow
# handler), and inside that the handler itself, strobe_overflow or
# perf_event_output_forward (perf's own sample path).  The tracer's
# entry/exit hooks are included in every figure, for both.
T=/sys/kernel/tracing
fns="hrtimer_interrupt __perf_event_overflow strobe_overflow perf_event_output_forward"
if [ "${KB_FTRACE:-1}" = 1 ] && [ -w $T/current_tracer ] &&
	grep -qw function_graph $T/available_tracers; then
	for f in $fns; do
		grep -q "^$f\( \|$\)" $T/available_filter_functions ||
			{ echo "# ftrace: $f not traceable"; }
	done
	echo "$fns" >$T/set_ftrace_filter 2>/dev/null
	echo 16384 >$T/buffer_size_kb
	echo 1 >$T/options/funcgraph-tail 2>/dev/null
	echo 0 >$T/options/funcgraph-overhead 2>/dev/null
	echo function_graph >$T/current_tracer
	echo "BENCH-FTRACE-BEGIN"
	for m in driver perf driver perf; do
		echo >$T/trace
		echo 1 >$T/tracing_on
		/kbench $fargs -m $m >/tmp/kb.$m 2>&1 || { cat /tmp/kb.$m; echo "FAIL kbench -m $m"; }
		echo 0 >$T/tracing_on
		cp $T/trace /tmp/tr.$m
		[ -e /tmp/shown.$m ] ||
			grep -m 3 -E 'overflow|output_forward' /tmp/tr.$m | sed 's/^/# trace: /'
		touch /tmp/shown.$m
		for f in $fns; do
			# "N)   1.234 us  |  f();"  or  "N)   1.234 us  |  } /* f */";
			# a module's function is printed as "f [module]"
			grep -E "(  $f( \[[a-z_]+\])?\(\);|/\* $f( \[[a-z_]+\])? \*/)" /tmp/tr.$m |
				sed -nE 's/^ *[0-9]+\)[^0-9]*([0-9][0-9.]*) (us|ms) .*/\1 \2/p' |
				awk '{ print ($2 == "ms") ? $1 * 1000000 : $1 * 1000 }' | sort -n >/tmp/d
			n=$(wc -l </tmp/d)
			[ "$n" -gt 0 ] || continue
			awk -v m=$m -v f=$f -v n=$n '
				{ s += $1; v[NR] = $1 }
				END { printf "FTRACE %-6s %-26s calls %7d  mean %7.0f ns  median %7.0f ns  p90 %7.0f ns  p99 %7.0f ns\n",
					m, f, n, s / n, v[int((n + 1) / 2)], v[int(n * 0.9) > 0 ? int(n * 0.9) : 1],
					v[int(n * 0.99) > 0 ? int(n * 0.99) : 1] }' /tmp/d
		done
		echo "# ftrace $m: overrun $(cat $T/per_cpu/cpu*/stats | awk '/^overrun/ { s += $2 } END { print s + 0 }')" \
			"$(grep -E '^(round|[0-9])' /tmp/kb.$m | tail -1)"
	done
	echo "BENCH-FTRACE-END"
	echo nop >$T/current_tracer
	echo >$T/set_ftrace_filter
else
	echo "# ftrace: skipped (KB_FTRACE=0, or no function_graph tracer)"
fi
echo "# after: perf_event_max_sample_rate=$(cat /proc/sys/kernel/perf_event_max_sample_rate)"
echo "PASS bench"
