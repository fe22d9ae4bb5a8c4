#!/bin/sh
# run.sh - what one sample costs with strobe.ko against the perf_event
# backend, at the same rate, in the same x86_64 QEMU (TCG) guest: builds
# strobe.ko and bench/kernel/kbench.c, boots the guest of tests/kernel/ with
# only the benchmark step (step-bench.sh), prints kbench's table and the
# ftrace timings of the overflow path.  A benchmark, not a test: it fails
# only if the guest cannot run kbench.
#
#   bench/kernel/run.sh                         (as root; installs what it needs)
#   SKIP_APT=1 SECS=2 ROUNDS=9 PERIOD=100000 bench/kernel/run.sh
#
# Environment: SECS (seconds per workload run, default 2), ROUNDS (9),
# PERIOD (ns for cpu-clock, default 100000 = 10 kHz), EVENT (cpu-clock),
# COUNTERS (cpu-clock,page-faults), PAGES (ring pages per CPU, 128),
# FTRACE (1: also time the overflow path under function_graph), TSC (1:
# clocksource=tsc in the guest instead of the HPET), VERBOSE (1: kbench -v,
# each run's histogram of interruption costs),
# OUT (default bench/kernel/out/x86; the console goes to $OUT/console.log).
set -eu

HERE=$(cd "$(dirname "$0")" && pwd)
TOP=$(cd "$HERE/../.." && pwd)
KTEST=$TOP/tests/kernel
OUT=${OUT:-$HERE/out/x86}
TIMEOUT=${TIMEOUT:-900}
. "$KTEST/lib.sh"

host_kernel_amd64 bench/kernel

mkdir -p "$OUT"
ROOT=$OUT/root
# The guest's init runs /steps/NN-*.sh: install our step under such a name.
cp "$HERE/step-bench.sh" "$OUT/50-bench.sh"
guest_root "$ROOT" /bin/busybox "$OUT/50-bench.sh"
# Build a private copy of kernel/, so that a concurrent tests/kernel run
# building in kernel/ cannot race with this one.
rm -rf "$OUT/src"
mkdir -p "$OUT/src/kernel"
cp "$TOP/kernel/Makefile" "$TOP/kernel/Kbuild" "$TOP/kernel/strobe.c" "$OUT/src/kernel/"
cp -r "$TOP/kernel/uapi" "$OUT/src/kernel/"
TOP=$OUT/src kernel_build "/usr/src/linux-headers-$KVER" "$OUT/build.log"
cp "$OUT/src/kernel/strobe.ko" "$ROOT/strobe.ko"
gcc -static -O2 -Wall -Wextra -Werror -o "$ROOT/kbench" "$HERE/kbench.c" -lpthread
initrd_pack "$ROOT" "$OUT/initrd.gz"

params="KB_SECS=${SECS:-2} KB_ROUNDS=${ROUNDS:-9} KB_FTRACE=${FTRACE:-1}"
[ -n "${PERIOD:-}" ] && params="$params KB_PERIOD=$PERIOD"
[ -n "${EVENT:-}" ] && params="$params KB_EVENT=$EVENT"
[ -n "${COUNTERS:-}" ] && params="$params KB_COUNTERS=$COUNTERS"
[ -n "${PAGES:-}" ] && params="$params KB_PAGES=$PAGES"
[ -n "${VERBOSE:-}" ] && params="$params KB_VERBOSE=1"
# TSC=1: the guest's clocksource is the TSC (as on hardware) instead of the
# HPET it picks under TCG; every clock read in a sample then costs an rdtsc
# instead of an emulated HPET register read.
[ "${TSC:-0}" = 1 ] && params="$params tsc=reliable clocksource=tsc"

echo "bench/kernel: booting (TCG, -smp 2), $params"
# Other QEMU guests on the same host take CPU from this one's vCPUs and make
# every wall-time figure noisy: say how many there were.
echo "bench/kernel: host $(nproc) CPUs, load average $(cut -d' ' -f1-3 /proc/loadavg)," \
	"other QEMU processes: $(ps -eo comm | grep -c '^qemu-system')"
start=$(date +%s)
rc=0
timeout "$TIMEOUT" qemu-system-x86_64 -accel tcg -m 2G -smp 2 -nographic -no-reboot \
	-kernel "/boot/vmlinuz-$KVER" -initrd "$OUT/initrd.gz" \
	-append "console=ttyS0 quiet panic=-1 $params" </dev/null >"$OUT/console.log" 2>&1 || rc=$?
[ $rc = 0 ] || echo "bench/kernel: qemu exit $rc"
echo "bench/kernel: guest ran $(($(date +%s) - start)) s"

tr -d '\r' <"$OUT/console.log" | awk '
	/^BENCH-(FTRACE-)?BEGIN/ { on = 1 }
	on || /^(# |guest:|FAIL)/ || /took too long|WARNING|BUG|Oops/ { print }
	/^BENCH-(FTRACE-)?END/ { on = 0 }'
if tr -d '\r' <"$OUT/console.log" | grep -q '^STROBE-RESULT PASS'; then
	echo "bench/kernel: done (console: $OUT/console.log)"
else
	echo "bench/kernel: the guest did not finish cleanly (see $OUT/console.log)"
	exit 1
fi
