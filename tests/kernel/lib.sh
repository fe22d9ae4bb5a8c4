# lib.sh - shared by run-x86.sh, run-arm64.sh and bench/kernel: build
# strobe.ko, lay out the guest's root (busybox, module, static test programs,
# guest/ steps), pack it, and read the verdict off the serial console.
# Callers set TOP (source tree) and HERE or KTEST (this directory).
#
# The guest runs guest/init as /init: it loads strobe.ko, runs every
# /steps/NN-*.sh in order (each prints PASS/FAIL/SKIP lines and exits non-zero
# on failure), unloads the module, checks dmesg and prints
# "STROBE-RESULT PASS" or "STROBE-RESULT FAIL".

# host_kernel_amd64 NAME: install the amd64 guest's packages (unless
# SKIP_APT is set) and set KVER to the newest Debian kernel that has both an
# image in /boot and headers in /usr/src.
host_kernel_amd64()
{
	if [ -z "${SKIP_APT:-}" ]; then
		DEBIAN_FRONTEND=noninteractive apt-get install -y -q \
			linux-image-amd64 linux-headers-amd64 qemu-system-x86 \
			busybox-static cpio gcc make >/dev/null
	fi
	KVER=
	for _v in $(ls /boot/vmlinuz-*-amd64 2>/dev/null | sed 's|.*/vmlinuz-||' | sort -V); do
		[ -d "/usr/src/linux-headers-$_v" ] && KVER=$_v
	done
	[ -n "$KVER" ] || { echo "$1: no /boot/vmlinuz-*-amd64 with matching headers" >&2; return 2; }
	echo "$1: kernel $KVER"
}

# kernel_build KDIR LOG [make variables...]: build strobe.ko; no warnings allowed.
kernel_build()
{
	_kdir=$1 _log=$2
	shift 2
	make -C "$TOP/kernel" KDIR="$_kdir" "$@" clean >/dev/null 2>&1 || true
	if ! make -C "$TOP/kernel" KDIR="$_kdir" "$@" >"$_log" 2>&1; then
		cat "$_log" >&2
		return 1
	fi
	if grep -i 'warning' "$_log" | grep -vq 'Skipping BTF'; then
		echo "strobe.ko builds with warnings:" >&2
		cat "$_log" >&2
		return 1
	fi
}

# guest_root ROOT BUSYBOX [STEP...]: the skeleton, /init and the guest
# steps (default: every tests/kernel/guest/NN-*.sh).
guest_root()
{
	rm -rf "$1"
	mkdir -p "$1/bin" "$1/sbin" "$1/proc" "$1/sys" "$1/dev" "$1/tmp" "$1/steps" "$1/etc"
	cp "$2" "$1/bin/busybox"
	ln -s busybox "$1/bin/sh"
	cp "${KTEST:-$HERE}/guest/init" "$1/init"
	chmod +x "$1/init"
	_root=$1
	shift 2
	if [ $# -gt 0 ]; then
		cp "$@" "$_root/steps/"
	else
		cp "${KTEST:-$HERE}"/guest/[0-9][0-9]-*.sh "$_root/steps/"
	fi
	set -- "$_root"
	echo 'root:x:0:0:root:/:/bin/sh' >"$1/etc/passwd"
	echo 'nobody:x:65534:65534:nobody:/:/bin/sh' >>"$1/etc/passwd"
	echo 'root:x:0:' >"$1/etc/group"
	echo 'nogroup:x:65534:' >>"$1/etc/group"
}

# guest_programs CC ROOT: every tests/kernel/*.c, static, into ROOT/, with
# frame pointers (callchain.c follows them from the driver's user callchains).
guest_programs()
{
	for _c in "${KTEST:-$HERE}"/*.c; do
		$1 -static -O2 -g -Wall -Wextra -Werror -fno-omit-frame-pointer \
			-mno-omit-leaf-frame-pointer -o "$2/$(basename "$_c" .c)" "$_c" -lpthread ||
			return 1
	done
}

# initrd_pack ROOT FILE
initrd_pack()
{
	(cd "$1" && find . | cpio -o -H newc --quiet | gzip -1) >"$2"
}

# console_verdict LOG NAME: print the interesting lines, then "NAME: PASS"
# or "NAME: FAIL (see LOG)", then the guest's checks counted from its
# PASS/FAIL/SKIP lines, "NAME: N passed, N failed, N skipped" (a guest that
# said FAIL overall counts at least one failure); 0 if the guest passed.
console_verdict()
{
	tr -d '\r' <"$1" | grep -E '^(PASS|FAIL|SKIP|#|RESULT|STROBE-RESULT|guest:|step )|WARNING|BUG|Oops' || true
	# (awk, not grep -c: callers run under set -e, and grep -c of nothing fails)
	_p=$(tr -d '\r' <"$1" | awk '/^PASS /{ n++ } END { print n + 0 }')
	_f=$(tr -d '\r' <"$1" | awk '/^FAIL /{ n++ } END { print n + 0 }')
	_s=$(tr -d '\r' <"$1" | awk '/^SKIP /{ n++ } END { print n + 0 }')
	if tr -d '\r' <"$1" | grep -q '^STROBE-RESULT PASS' && [ "$_f" = 0 ]; then
		echo "$2: PASS"
		echo "$2: $_p passed, $_f failed, $_s skipped"
		return 0
	fi
	echo "$2: FAIL (see $1)"
	[ "$_f" = 0 ] && _f=1
	echo "$2: $_p passed, $_f failed, $_s skipped"
	return 1
}

# guest_strobe ROOT: strobed, strobe, sqlite3 with strobe's samples extension
# (/usr/lib/strobe/strobe_samples.so), chrt, the workloads and every shared
# library they load (host architecture only: the x86_64 guest).  STROBE_BUILD
# is the build tree (default: the source tree).
guest_strobe()
{
	_b=${STROBE_BUILD:-$TOP}
	for _f in "$_b/daemon/strobed" "$_b/tools/strobe" "$_b/tests/workloads/split603010" \
		  "$_b/tests/workloads/pagetouch" "$_b/tests/workloads/tlbwalk" \
		  "$_b/lib/strobe_samples.so"; do
		[ -x "$_f" ] || { echo "guest_strobe: $_f is not built: run ./configure && make first" >&2; return 1; }
	done
	mkdir -p "$1/usr/sbin" "$1/usr/bin" "$1/usr/libexec/strobe" "$1/usr/lib/strobe"
	cp "$_b/lib/strobe_samples.so" "$1/usr/lib/strobe/"
	cp "$_b/daemon/strobed" "$1/usr/sbin/"
	cp "$_b/tools/strobe" "$1/usr/bin/"
	cp "$(command -v sqlite3)" "$(command -v chrt)" "$1/usr/bin/"
	cp "$_b/tests/workloads/split603010" "$_b/tests/workloads/pagetouch" "$_b/tests/workloads/tlbwalk" "$1/usr/libexec/strobe/"
	for _lib in $(ldd "$1/usr/sbin/strobed" "$1/usr/bin/strobe" "$1/usr/bin/sqlite3" "$1/usr/bin/chrt" \
			"$1"/usr/libexec/strobe/* 2>/dev/null | grep -o '/[^ :]*' | grep -v "^$1/" | sort -u); do
		mkdir -p "$1$(dirname "$_lib")"
		cp -L "$_lib" "$1$_lib"
	done
}
