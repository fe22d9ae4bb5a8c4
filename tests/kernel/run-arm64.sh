#!/bin/sh
# run-arm64.sh - the arm64 twin of run-x86.sh: cross-build strobe.ko against
# Debian's arm64 kernel headers, boot Debian's arm64 kernel under
# qemu-system-aarch64 -M virt -cpu max (TCG), where QEMU emulates a PMUv3,
# and run the guest steps (tests/kernel/guest/) with the main session
# sampling on the hardware cycles event: the PMU overflow interrupt path of
# the driver really runs.  instructions is counted too, which QEMU does only
# with -icount.  strobe's user space is cross-built for arm64 against
# Debian's arm64 libraries (lib.sh: arm64_sysroot, arm64_userspace) and
# packed in with Debian's arm64 perf, so that the strobed steps run too,
# 50-strobed-hw.sh on the PMU's hardware events.  Exit 0 only if the guest
# says PASS.
#
#   tests/kernel/run-arm64.sh            (as root; installs what it needs)
#   SKIP_APT=1 tests/kernel/run-arm64.sh (offline: needs the cache below)
#
# Environment: OUT (default tests/kernel/out/arm64; the serial console goes to
# $OUT/console.log), CACHE (unpacked arm64 Debian packages, default
# tests/kernel/out/arm64/cache, kept across runs), KABI (e.g. 6.1.0-56;
# default: the newest ABI of the installed amd64 headers that has arm64
# packages, else the newest available), NFAULTS, READER_ARGS (options of
# tests/kernel/reader.c), QEMU_CPU (default max,pauth-impdef=on), TIMEOUT,
# KFLAVOUR (Debian's kernel flavour, default arm64; arm64-16k boots a 16 KiB
# page kernel, which needs KABI, e.g. KABI=6.12.117+deb12 KFLAVOUR=arm64-16k),
# KSRC (the module's source directory, default kernel/), STEPS (guest steps
# to run, e.g. "guest/10-reader.sh"; default all of tests/kernel/guest/).
set -eu

HERE=$(cd "$(dirname "$0")" && pwd)
TOP=$(cd "$HERE/../.." && pwd)
OUT=${OUT:-$HERE/out/arm64}
CACHE=${CACHE:-$HERE/out/arm64/cache}
NFAULTS=${NFAULTS:-16384}
TIMEOUT=${TIMEOUT:-1200}
# Sample on cycles in period mode: QEMU's cycle counter runs at 1 GHz of
# virtual time (-icount shift=0: 1 ns per instruction), so 2M cycles is 500
# samples/s per CPU.  Not --freq: perf starts a frequency-mode hardware event
# at period 1, the interrupt storm makes the kernel lower
# perf_event_max_sample_rate to ~2000/s, and the rate never settles under TCG.
KFLAVOUR=${KFLAVOUR:-arm64}
READER_ARGS=${READER_ARGS:---sample cycles --period 2000000 --count page-faults,instructions --irq arm-pmu}
# pauth-impdef: pointer authentication with QEMU's cheap hash instead of
# QARMA, which is slow to emulate and Debian's kernel signs every return.
QEMU_CPU=${QEMU_CPU:-max,pauth-impdef=on}
. "$HERE/lib.sh"

say() { echo "run-arm64: $*"; }
die() { echo "run-arm64: $*" >&2; exit 2; }
apt_get() { DEBIAN_FRONTEND=noninteractive apt-get -q -o DPkg::Lock::Timeout=600 "$@"; }
# candidate version of an arm64 package, empty if apt does not know it
candidate() { apt-cache policy "$1" 2>/dev/null | sed -n 's/^ *Candidate: *//p' | grep -v '(none)' || true; }

# ABIs (6.1.0-56) of the installed amd64 kernel headers, newest first
installed_abis() {
	ls -d /usr/src/linux-headers-*-amd64 2>/dev/null |
		sed 's|.*/linux-headers-||; s|-amd64$||' | sort -rV
}

if [ -z "${SKIP_APT:-}" ]; then
	if ! dpkg --print-foreign-architectures | grep -qx arm64; then
		dpkg --add-architecture arm64
		apt_get update >/dev/null
	elif [ -z "$(candidate busybox-static:arm64)" ]; then
		apt_get update >/dev/null
	fi
	apt_get install -y qemu-system-arm gcc-aarch64-linux-gnu binutils-aarch64-linux-gnu \
		libc6-dev-arm64-cross pkg-config cpio gzip make >/dev/null
fi
command -v qemu-system-aarch64 >/dev/null || die "qemu-system-aarch64 missing (qemu-system-arm)"
command -v aarch64-linux-gnu-gcc >/dev/null || die "aarch64-linux-gnu-gcc missing (gcc-aarch64-linux-gnu)"

# --- which kernel ------------------------------------------------------------
KABI=${KABI:-}
if [ -z "$KABI" ] && [ "$KFLAVOUR" != arm64 ]; then
	die "KFLAVOUR=$KFLAVOUR needs KABI (apt-cache search linux-headers | grep $KFLAVOUR)"
fi
if [ -z "$KABI" ] && [ -z "${SKIP_APT:-}" ]; then
	for a in $(installed_abis); do
		if [ -n "$(candidate "linux-headers-$a-arm64:arm64")" ]; then
			KABI=$a
			break
		fi
	done
	if [ -z "$KABI" ]; then
		KABI=$(apt-cache search --names-only '^linux-headers-[0-9.]+-[0-9]+-arm64$' |
			sed 's/^linux-headers-\([^ ]*\)-arm64 .*/\1/' | sort -V | tail -n 1)
	fi
fi
if [ -z "$KABI" ]; then	# offline: what the cache has, the installed ABI first
	for a in $(installed_abis) $(ls "$CACHE" 2>/dev/null | sort -rV); do
		if [ -f "$CACHE/$a/.complete" ]; then
			KABI=$a
			break
		fi
	done
fi
[ -n "$KABI" ] || die "no arm64 kernel: no apt candidate and nothing in $CACHE"
K=$CACHE/$KABI
[ "$KFLAVOUR" = arm64 ] || K=$CACHE/$KABI-$KFLAVOUR
HDRS=$K/usr/src/linux-headers-$KABI-$KFLAVOUR

# --- fetch and unpack the arm64 packages into $K, once ------------------------
if [ -z "${SKIP_APT:-}" ]; then
	want=$(candidate "linux-headers-$KABI-$KFLAVOUR:arm64")
	[ -n "$want" ] || die "apt has no linux-headers-$KABI-$KFLAVOUR:arm64"
	if [ ! -f "$K/.complete" ] || [ "$(cat "$K/.complete")" != "$want" ]; then
		say "fetching Debian arm64 kernel $KABI-$KFLAVOUR ($want)"
		image=linux-image-$KABI-$KFLAVOUR-unsigned
		[ -n "$(candidate "$image:arm64")" ] || image=linux-image-$KABI-$KFLAVOUR
		# kbuild's host programs (fixdep, modpost) come from the host's
		# linux-kbuild-X.Y, as the arm64 headers package expects
		kbuild=linux-kbuild-$(echo "$KABI" | cut -d. -f1,2)
		[ -n "$(candidate "$kbuild")" ] || kbuild=linux-kbuild-$KABI	# 6.12: per ABI
		apt_get install -y "$kbuild" >/dev/null
		rm -rf "$K" "$CACHE/debs"
		mkdir -p "$K" "$CACHE/debs"
		pkgs="$image:arm64=$want linux-headers-$KABI-$KFLAVOUR:arm64=$want busybox-static:arm64"
		common=linux-headers-$KABI-common
		if [ "$(dpkg-query -W -f '${Status} ${Version}' "$common" 2>/dev/null)" != \
			"install ok installed $want" ]; then
			pkgs="$pkgs $common=$want"
		fi
		(cd "$CACHE/debs" && apt-get download -q -o APT::Sandbox::User=root $pkgs >/dev/null) ||
			die "apt-get download $pkgs failed"
		for d in "$CACHE"/debs/*.deb; do
			case $d in
			*/linux-image-*)	# only boot/: the modules are not needed
				mkdir -p "$K/boot"
				dpkg-deb --fsys-tarfile "$d" | tar -x -C "$K" --wildcards './boot/*' ;;
			*/busybox-static_*)
				dpkg -x "$d" "$K/busybox" ;;
			*)
				dpkg -x "$d" "$K" ;;
			esac
		done
		rm -rf "$CACHE/debs"
		echo "$want" >"$K/.complete"
	fi
fi
[ -f "$K/.complete" ] || die "$K is not complete; run without SKIP_APT once"
say "kernel $KABI-$KFLAVOUR ($(cat "$K/.complete")), cache $K"

# The headers include the common tree by absolute path; point them at ours
# if we unpacked one, and give them the host's kbuild at the relative path
# their scripts/ and tools/ symlinks expect.
if [ -d "$K/usr/src/linux-headers-$KABI-common" ]; then
	sed -i "s|^include /usr/src/linux-headers-$KABI-common/|include $K/usr/src/linux-headers-$KABI-common/|" \
		"$HDRS/Makefile"
fi
kb=$(readlink "$HDRS/scripts")			# ../../lib/linux-kbuild-6.1/scripts
kb=${kb%/scripts}; kb=${kb#../../}		# lib/linux-kbuild-6.1
[ -d "/usr/$kb/scripts" ] || die "/usr/$kb missing: install $(basename "$kb")"
mkdir -p "$(dirname "$K/usr/$kb")"
ln -sfn "/usr/$kb" "$K/usr/$kb"

# The kernel: Debian's vmlinuz is a raw Image (EFI stub) or a gzip'd one.
VMLINUZ=$K/boot/vmlinuz-$KABI-$KFLAVOUR
[ -f "$VMLINUZ" ] || die "no $VMLINUZ"
IMAGE=$VMLINUZ
if [ "$(od -An -tx1 -N2 "$VMLINUZ" | tr -d ' ')" = 1f8b ]; then
	IMAGE=$K/Image
	[ -f "$IMAGE" ] || gzip -dc "$VMLINUZ" >"$IMAGE"
fi

# --- build -------------------------------------------------------------------
mkdir -p "$OUT"
# Build in a copy of kernel/ (kernel_build cleans it first): the x86 runs
# build in the tree itself, and an arm64 strobe.ko must not land there.
rm -rf "$OUT/src"
mkdir -p "$OUT/src"
cp -r "${KSRC:-$TOP/kernel}" "$OUT/src/kernel"
find "$OUT/src/kernel" \( -name '*.o' -o -name '*.ko' -o -name '*.mod*' -o -name '.*.cmd' \
	-o -name Module.symvers -o -name modules.order \) -exec rm -f {} +
(TOP=$OUT/src kernel_build "$HDRS" "$OUT/build.log" ARCH=arm64 CROSS_COMPILE=aarch64-linux-gnu-)
# e_machine 183 (0xb7): EM_AARCH64
[ "$(od -An -tx1 -j18 -N2 "$OUT/src/kernel/strobe.ko" | tr -d ' ')" = b700 ] ||
	die "strobe.ko is not an arm64 module"

ROOT=$OUT/root
# STEPS="guest/10-reader.sh ...": run only those guest steps
guest_root "$ROOT" "$K/busybox/bin/busybox" $(for s in ${STEPS:-}; do echo "$HERE/$s"; done)
cp "$OUT/src/kernel/strobe.ko" "$ROOT/strobe.ko"
guest_programs aarch64-linux-gnu-gcc "$ROOT"

# --- strobe's user space for arm64 --------------------------------------------
# strobed, strobe and the workloads cross-built from this tree against
# Debian's arm64 libraries, with Debian's arm64 perf and sqlite3 beside them
# (the steps from 30- on; lib.sh: arm64_sysroot, arm64_userspace).
SYSROOT=$CACHE/sysroot
[ -n "${SKIP_APT:-}" ] || arm64_sysroot "$SYSROOT" || die "no arm64 sysroot"
[ -f "$SYSROOT/.complete" ] || die "$SYSROOT is not complete; run without SKIP_APT once"
say "cross-building strobe for arm64"
arm64_userspace "$TOP" "$SYSROOT" "$OUT/user" || die "cross build failed"
guest_strobe "$ROOT" "$OUT/user" "$SYSROOT" || die "packing strobe into the guest failed"
initrd_pack "$ROOT" "$OUT/initrd.gz"

# --- boot --------------------------------------------------------------------
say "booting (TCG, -icount shift=0)"
t0=$(date +%s)
rc=0
timeout "$TIMEOUT" qemu-system-aarch64 -M virt -cpu "$QEMU_CPU" -accel tcg -icount shift=0 \
	-smp 2 -m 2G -nographic -no-reboot \
	-kernel "$IMAGE" -initrd "$OUT/initrd.gz" \
	-append "console=ttyAMA0 quiet panic=-1 NFAULTS=$NFAULTS READER_ARGS=\"$READER_ARGS\"" \
	</dev/null >"$OUT/console.log" 2>&1 || rc=$?
[ $rc = 0 ] || say "qemu exit $rc"
say "guest ran $(($(date +%s) - t0)) s"
console_verdict "$OUT/console.log" run-arm64
