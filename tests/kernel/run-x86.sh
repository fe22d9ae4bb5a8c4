#!/bin/sh
# run-x86.sh - boot Debian's 6.1 kernel under QEMU (TCG), load strobe.ko,
# run tests/kernel/reader, check dmesg.  Exit 0 only if the guest says PASS.
#
#   tests/kernel/run-x86.sh            (as root; installs what it needs)
#   SKIP_APT=1 tests/kernel/run-x86.sh
#
# Output: the guest's serial console goes to $OUT/console.log.
set -eu

HERE=$(cd "$(dirname "$0")" && pwd)
TOP=$(cd "$HERE/../.." && pwd)
OUT=${OUT:-$HERE/out}
NFAULTS=${NFAULTS:-16384}
TIMEOUT=${TIMEOUT:-900}

if [ -z "${SKIP_APT:-}" ]; then
	DEBIAN_FRONTEND=noninteractive apt-get install -y -q \
		linux-image-amd64 linux-headers-amd64 qemu-system-x86 \
		busybox-static cpio gcc make >/dev/null
fi

# Newest Debian kernel that has both an image and headers.
KVER=
for v in $(ls /boot/vmlinuz-*-amd64 2>/dev/null | sed 's|.*/vmlinuz-||' | sort -V); do
	[ -d "/usr/src/linux-headers-$v" ] && KVER=$v
done
[ -n "$KVER" ] || { echo "run-x86: no /boot/vmlinuz-*-amd64 with matching headers" >&2; exit 2; }
KDIR=/usr/src/linux-headers-$KVER
echo "run-x86: kernel $KVER"

mkdir -p "$OUT"
rm -rf "$OUT/root"
mkdir -p "$OUT/root/bin" "$OUT/root/proc" "$OUT/root/sys" "$OUT/root/dev" "$OUT/root/tmp"

# module: must build without a single warning
make -C "$TOP/kernel" KDIR="$KDIR" clean >/dev/null
make -C "$TOP/kernel" KDIR="$KDIR" >"$OUT/build.log" 2>&1 || { cat "$OUT/build.log"; exit 1; }
if grep -i 'warning' "$OUT/build.log" | grep -vq 'Skipping BTF'; then
	echo "run-x86: strobe.ko builds with warnings:" >&2
	cat "$OUT/build.log" >&2
	exit 1
fi
gcc -static -O2 -Wall -Wextra -Werror -o "$OUT/root/reader" "$HERE/reader.c" -lpthread

cp "$TOP/kernel/strobe.ko" "$OUT/root/strobe.ko"
cp /bin/busybox "$OUT/root/bin/busybox"
ln -s busybox "$OUT/root/bin/sh"
cat >"$OUT/root/init" <<EOF
#!/bin/sh
/bin/busybox --install -s /bin
export PATH=/bin
mount -t proc proc /proc
mount -t sysfs sys /sys
mount -t devtmpfs dev /dev
echo 8 >/proc/sys/kernel/printk
res=PASS
echo "guest: \$(uname -r), \$(nproc) CPUs"
if insmod /strobe.ko; then
	ls -l /dev/strobe
	mode=\$(stat -c %a /dev/strobe)
	[ "\$mode" = 600 ] || { echo "FAIL dev-mode: \$mode"; res=FAIL; }
	/reader $NFAULTS || res=FAIL
	rmmod strobe || { echo "FAIL rmmod"; res=FAIL; }
else
	echo "FAIL insmod"
	res=FAIL
fi
if dmesg | grep -E 'WARNING:|BUG:|Oops|general protection|Call Trace|UBSAN|KASAN|refcount_t|list_add corruption|scheduling while atomic'; then
	echo "FAIL dmesg"
	res=FAIL
fi
echo "STROBE-RESULT \$res"
poweroff -f
EOF
chmod +x "$OUT/root/init"
(cd "$OUT/root" && find . | cpio -o -H newc --quiet | gzip -1) >"$OUT/initrd.gz"

echo "run-x86: booting (TCG, ~30 s)"
rc=0
timeout "$TIMEOUT" qemu-system-x86_64 -accel tcg -m 1G -smp 2 -nographic -no-reboot \
	-kernel "/boot/vmlinuz-$KVER" -initrd "$OUT/initrd.gz" \
	-append "console=ttyS0 quiet panic=-1" </dev/null >"$OUT/console.log" 2>&1 || rc=$?
tr -d '\r' <"$OUT/console.log" | grep -E '^(PASS|FAIL|#|RESULT|STROBE-RESULT|guest:)|WARNING|BUG|Oops' || true
if grep -q '^STROBE-RESULT PASS' "$OUT/console.log" 2>/dev/null || tr -d '\r' <"$OUT/console.log" | grep -q '^STROBE-RESULT PASS'; then
	echo "run-x86: PASS"
	exit 0
fi
echo "run-x86: FAIL (qemu exit $rc; see $OUT/console.log)"
exit 1
