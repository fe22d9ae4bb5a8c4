#!/bin/sh
# run-x86.sh - boot Debian's amd64 kernel under QEMU (TCG), load strobe.ko,
# run the guest steps (tests/kernel/guest/), check dmesg.  Exit 0 only if
# the guest says PASS.
#
#   tests/kernel/run-x86.sh            (as root; installs what it needs)
#   SKIP_APT=1 tests/kernel/run-x86.sh
#
# The guest's serial console goes to $OUT/console.log.
set -eu

HERE=$(cd "$(dirname "$0")" && pwd)
TOP=$(cd "$HERE/../.." && pwd)
OUT=${OUT:-$HERE/out/x86}
NFAULTS=${NFAULTS:-16384}
TIMEOUT=${TIMEOUT:-900}
. "$HERE/lib.sh"

host_kernel_amd64 run-x86

mkdir -p "$OUT"
ROOT=$OUT/root
# STEPS="guest/30-strobed.sh ...": run only those guest steps
guest_root "$ROOT" /bin/busybox $(for s in ${STEPS:-}; do echo "$HERE/$s"; done)
kernel_build "/usr/src/linux-headers-$KVER" "$OUT/build.log"
cp "$TOP/kernel/strobe.ko" "$ROOT/strobe.ko"
guest_programs gcc "$ROOT"
guest_strobe "$ROOT"
initrd_pack "$ROOT" "$OUT/initrd.gz"

# One host thread runs both vCPUs (thread=single): with a thread per vCPU
# (QEMU 7.2's default), a guest that patches its own code while the other
# vCPU runs it (static keys: perf_event_create_kernel_counter() flips
# perf_sched_events) could leave that vCPU stuck at the int3 of the patch
# site, and the patching CPU's IPI unanswered (a soft lockup in
# smp_call_function_single() under perf_event_enable(), seen once in
# some tens of runs of the stress step).  Round-robin vCPUs cannot race so.
echo "run-x86: booting (TCG, one thread, ~30 s)"
rc=0
timeout "$TIMEOUT" qemu-system-x86_64 -accel tcg,thread=single -m 2G -smp 2 -nographic -no-reboot \
	-kernel "/boot/vmlinuz-$KVER" -initrd "$OUT/initrd.gz" \
	-append "console=ttyS0 quiet panic=-1 NFAULTS=$NFAULTS" </dev/null >"$OUT/console.log" 2>&1 || rc=$?
[ $rc = 0 ] || echo "run-x86: qemu exit $rc"
console_verdict "$OUT/console.log" run-x86
