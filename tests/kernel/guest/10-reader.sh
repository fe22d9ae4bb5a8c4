# Functional checks of the driver through its ABI (tests/kernel/reader.c).
# READER_ARGS (kernel command line) selects the events, e.g. on arm64
# "--sample cycles --period 2000000 --count page-faults,instructions --irq arm-pmu".
echo "# perf_event_max_sample_rate $(cat /proc/sys/kernel/perf_event_max_sample_rate)"
dmesg | grep -iE 'pmu|perf' | sed 's/^/# dmesg: /'
grep -iE 'pmu|PMI' /proc/interrupts | sed 's/^/# interrupts before: /'
/reader ${READER_ARGS:-} ${NFAULTS:-16384}
rc=$?
grep -iE 'pmu|PMI' /proc/interrupts | sed 's/^/# interrupts after: /'
echo "# perf_event_max_sample_rate $(cat /proc/sys/kernel/perf_event_max_sample_rate)"
exit $rc
