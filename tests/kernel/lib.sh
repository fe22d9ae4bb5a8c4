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

# guest_strobe ROOT [BUILD SYSROOT]: strobed, strobe, sqlite3 with strobe's
# samples extension (/usr/lib/strobe/strobe_samples.so), the workloads and
# every shared library they load.  BUILD is the build tree (default
# STROBE_BUILD, else the source tree), chrt and sqlite3 the host's, the
# libraries found by ldd (the x86_64 guest).  With SYSROOT the programs
# were cross-built against it (arm64_sysroot), sqlite3, chrt and perf come
# from it, and guest_libs finds their libraries.
guest_strobe()
{
	_b=${2:-${STROBE_BUILD:-$TOP}} _sys=${3:-}
	for _f in "$_b/daemon/strobed" "$_b/tools/strobe" "$_b/tests/workloads/split603010" \
		  "$_b/tests/workloads/pagetouch" "$_b/tests/workloads/tlbwalk" \
		  "$_b/lib/strobe_samples.so"; do
		[ -x "$_f" ] || { echo "guest_strobe: $_f is not built: run ./configure && make first" >&2; return 1; }
	done
	mkdir -p "$1/usr/sbin" "$1/usr/bin" "$1/usr/libexec/strobe" "$1/usr/lib/strobe"
	cp "$_b/lib/strobe_samples.so" "$1/usr/lib/strobe/"
	cp "$_b/daemon/strobed" "$1/usr/sbin/"
	cp "$_b/tools/strobe" "$1/usr/bin/"
	cp "$_b/tests/workloads/split603010" "$_b/tests/workloads/pagetouch" "$_b/tests/workloads/tlbwalk" "$1/usr/libexec/strobe/"
	if [ -n "$_sys" ]; then
		cp "$_sys/usr/bin/sqlite3" "$_sys/usr/bin/perf" "$_sys/usr/bin/chrt" "$1/usr/bin/"
		guest_libs "$1" "$_sys" "$1/usr/sbin/strobed" "$1/usr/bin/strobe" "$1/usr/bin/sqlite3" \
			"$1/usr/bin/perf" "$1/usr/bin/chrt" "$1/usr/lib/strobe/strobe_samples.so" "$1"/usr/libexec/strobe/*
		return
	fi
	cp "$(command -v sqlite3)" "$(command -v chrt)" "$1/usr/bin/"
	for _lib in $(ldd "$1/usr/sbin/strobed" "$1/usr/bin/strobe" "$1/usr/bin/sqlite3" "$1/usr/bin/chrt" \
			"$1"/usr/libexec/strobe/* 2>/dev/null | grep -o '/[^ :]*' | grep -v "^$1/" | sort -u); do
		mkdir -p "$1$(dirname "$_lib")"
		cp -L "$_lib" "$1$_lib"
	done
}

# guest_libs ROOT SYSROOT FILE...: the program interpreter and every library
# the FILEs need (DT_NEEDED, transitively), from SYSROOT's multiarch library
# directories into the same paths under ROOT.  ldd cannot answer for
# another architecture's programs; readelf of the cross binutils can.
guest_libs()
{
	_root=$1 _sys=$2
	shift 2
	_re=aarch64-linux-gnu-readelf
	_todo=$(for _f in "$@"; do $_re -d "$_f" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p'; done | sort -u)
	_done=" "
	for _f in "$@"; do
		_i=$($_re -l "$_f" | sed -n 's/.*\[Requesting program interpreter: \(.*\)\]/\1/p')
		[ -z "$_i" ] || [ -e "$_root$_i" ] && continue
		mkdir -p "$_root$(dirname "$_i")"
		cp -L "$_sys$_i" "$_root$_i"
	done
	while [ -n "$_todo" ]; do
		_next=
		for _n in $_todo; do
			case $_done in *" $_n "*) continue ;; esac
			_done="$_done$_n "
			_p=
			for _d in /lib/aarch64-linux-gnu /usr/lib/aarch64-linux-gnu; do
				[ -e "$_sys$_d/$_n" ] && { _p=$_d/$_n; break; }
			done
			[ -n "$_p" ] || { echo "guest_libs: $_n not in $_sys" >&2; return 1; }
			mkdir -p "$_root$(dirname "$_p")"
			cp -L "$_sys$_p" "$_root$_p"
			_next="$_next $($_re -d "$_root$_p" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p')"
		done
		_todo=$(echo $_next | tr ' ' '\n' | sort -u)
	done
}

# The arm64 packages of arm64_sysroot: what configure.ac checks for, the
# guest's sqlite3 and chrt, and perf for side-by-side checks.
ARM64_PACKAGES="libsqlite3-dev binutils-dev libpfm4-dev libxxhash-dev liblzma-dev libdw-dev
	libelf-dev libdebuginfod-dev libcurl4-openssl-dev zlib1g-dev libmicrohttpd-dev
	libseccomp-dev libcmocka-dev systemtap-sdt-dev libc6-dev sqlite3 linux-perf util-linux"

# arm64_sysroot DIR: ARM64_PACKAGES for arm64 with everything they depend
# on, unpacked (dpkg -x, nothing installed on the host) into DIR, once: the
# .deb names in DIR/.complete say which versions it holds.  Programs and
# scripts the build never runs (perl, python3, dpkg...) are left out.
# Absolute symbolic links are made relative, so that they resolve inside
# DIR.  Needs apt with the arm64 architecture added (run-arm64.sh).
arm64_sysroot()
{
	_dir=$1
	_pk=$(apt-cache depends --recurse --no-recommends --no-suggests --no-conflicts --no-breaks \
		--no-replaces --no-enhances $(for _p in $ARM64_PACKAGES; do echo "$_p:arm64"; done) 2>/dev/null |
		grep -E '^[a-z0-9][^ ]*:arm64$' |
		grep -vE '^(dpkg|tar|install-info|perl|python3|python3-minimal|python3\.[0-9]+|python3\.[0-9]+-minimal|libpython3-stdlib|libpython3\.[0-9]+-stdlib|binutils|binutils-aarch64-linux-gnu|libc-dev-bin|rpcsvc-proto):' |
		sort -u)
	[ -n "$_pk" ] || { echo "arm64_sysroot: apt knows no arm64 packages (dpkg --add-architecture arm64; apt-get update)" >&2; return 1; }
	_want=$(apt-get download --print-uris $_pk 2>/dev/null | awk '{ print $2 }' | sort)
	[ -n "$_want" ] || { echo "arm64_sysroot: apt-get download --print-uris failed" >&2; return 1; }
	if [ -f "$_dir/.complete" ] && [ "$(cat "$_dir/.complete")" = "$_want" ]; then
		return 0
	fi
	echo "arm64_sysroot: fetching $(echo "$_want" | wc -l) arm64 packages into $_dir"
	rm -rf "$_dir" "$_dir.debs"
	mkdir -p "$_dir" "$_dir.debs"
	(cd "$_dir.debs" && apt-get download -q -o APT::Sandbox::User=root $_pk >/dev/null) ||
		{ echo "arm64_sysroot: apt-get download failed" >&2; return 1; }
	for _d in "$_dir.debs"/*.deb; do
		dpkg -x "$_d" "$_dir" || return 1
	done
	rm -rf "$_dir.debs"
	find "$_dir" -type l -lname '/*' | while read -r _l; do
		ln -sfn "$(realpath -m --relative-to="$(dirname "$_l")" "$_dir$(readlink "$_l")")" "$_l"
	done
	echo "$_want" >"$_dir/.complete"
}

# arm64_userspace SRC SYSROOT BUILD: strobe's user space cross-built for
# arm64 in BUILD, from a copy of the source tree SRC (automake refuses a
# second build of a tree configured in place), against SYSROOT.  The log
# is BUILD.log; a warning fails it, as in kernel_build.
arm64_userspace()
{
	_src=$1 _sys=$2 _b=$3
	rm -rf "$_b"
	mkdir -p "$_b"
	(cd "$_src" && tar -c --exclude=./.git --exclude=./tests/kernel/out --exclude=./node_modules .) |
		tar -x -C "$_b" || return 1
	(
		cd "$_b" &&
		{ [ ! -f Makefile ] || make distclean >/dev/null 2>&1 || true; } &&
		PKG_CONFIG=pkg-config PKG_CONFIG_SYSROOT_DIR=$_sys \
		PKG_CONFIG_LIBDIR=$_sys/usr/lib/aarch64-linux-gnu/pkgconfig:$_sys/usr/share/pkgconfig \
			./configure -q --host=aarch64-linux-gnu CC="aarch64-linux-gnu-gcc --sysroot=$_sys" &&
		make -j"$(nproc)" all
	) >"$_b.log" 2>&1 || { tail -n 30 "$_b.log" >&2; echo "arm64_userspace: the cross build failed (see $_b.log)" >&2; return 1; }
	if grep -q 'warning:' "$_b.log"; then
		grep -A3 'warning:' "$_b.log" >&2
		echo "arm64_userspace: the cross build has warnings (see $_b.log)" >&2
		return 1
	fi
	[ "$(od -An -tx1 -j18 -N2 "$_b/daemon/strobed" | tr -d ' ')" = b700 ] ||
		{ echo "arm64_userspace: $_b/daemon/strobed is not an arm64 program" >&2; return 1; }
}
