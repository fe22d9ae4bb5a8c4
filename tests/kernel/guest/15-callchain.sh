# The driver's callchains (STROBE_CONFIG_CALLCHAIN) on a workload with a
# known call tree (tests/kernel/callchain.c), sampling on the event of
# READER_ARGS (cpu-clock on x86 TCG, the PMU's cycles on arm64).
/callchain ${READER_ARGS:-}
