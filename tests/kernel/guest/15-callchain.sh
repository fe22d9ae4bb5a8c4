# The driver's callchains (STROBE_CONFIG_CALLCHAIN) on a workload with a
# known call tree (tests/kernel/callchain.c), sampling on the event of
# READER_ARGS (cpu-clock on x86 TCG, the PMU's cycles on arm64).
# Under arm64 TCG the kernel lowers perf_event_max_sample_rate while the
# workload reads /dev/zero (with or without callchains: interrupt time is
# emulated time); the later steps get the rate they had.
rate=$(cat /proc/sys/kernel/perf_event_max_sample_rate)
/callchain ${READER_ARGS:-}
rc=$?
echo "# perf_event_max_sample_rate $(cat /proc/sys/kernel/perf_event_max_sample_rate), set back to $rate"
echo "$rate" >/proc/sys/kernel/perf_event_max_sample_rate
exit $rc
