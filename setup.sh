#!/bin/sh
# setup.sh - install everything strobe needs to build, run and test on Debian 12
# (scdoc, groff-base, man-db: the man pages and t0710; systemd, libcap2-bin
# and git: t0700-t0702, the install and the units; bash-completion: t0730;
# libseccomp-dev: the seccomp filter of strobed's symbol worker (optional
# to build, see configure --without-seccomp); libcurl4-openssl-dev: strobe
# push; libmicrohttpd-dev: strobe ui's server; chromium (and npm's
# playwright-core, pinned by tests/ui/package-lock.json): t0952, the page
# in a real browser; clickhouse-server, clickhouse-client: the fleet tests
# t08xx (tests/clickhouse.sh);
# the dpkg-dev ... fakeroot line builds, checks and installs the Debian
# packages of debian/: doc/PACKAGING.md, tests/t0720-deb.sh; the last two
# lines are for make check-kernel's QEMU guests; tests/kernel/run-arm64.sh
# fetches Debian's arm64 kernel and the arm64 libraries it cross-builds
# strobe against itself, from the arm64 architecture added here).
# Run as root. Safe to run again.
set -e
if [ "$(id -u)" != 0 ]; then
	echo "setup.sh: run as root (it installs Debian packages)" >&2
	exit 1
fi
PKGS="build-essential autoconf automake libtool pkg-config
	binutils-dev libsqlite3-dev sqlite3 libpfm4-dev libxxhash-dev liblzma-dev xz-utils libc6-dbg
	libseccomp-dev
	libdebuginfod-dev debuginfod curl libdw-dev libelf-dev
	libcmocka-dev zlib1g-dev gnuplot-nox linux-perf python3 procps util-linux
	systemtap-sdt-dev scdoc groff-base man-db
	systemd libcap2-bin git
	bash-completion python3-fusepy fuse3 strace
	libcurl4-openssl-dev libmicrohttpd-dev clickhouse-server clickhouse-client
	golang-go nodejs chromium
	dpkg-dev debhelper dh-dkms dkms lintian fakeroot
	linux-image-amd64 linux-headers-amd64 qemu-system-x86 qemu-system-arm
	busybox-static cpio gcc-aarch64-linux-gnu binutils-aarch64-linux-gnu libc6-dev-arm64-cross"
missing=
# the arm64 guest's packages (unpacked by run-arm64.sh, never installed)
if ! dpkg --print-foreign-architectures | grep -qx arm64; then
	dpkg --add-architecture arm64
	missing=" "	# apt-get update below
fi
for p in $PKGS; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing="$missing $p"
done
if [ -n "$missing" ]; then
	export DEBIAN_FRONTEND=noninteractive
	apt-get update -qq
	apt-get install -y -qq $missing
fi
getent group strobe >/dev/null || groupadd --system strobe
# strobed's workers run as a user of their own (dist/sysusers.d/strobe.conf)
getent passwd _strobe >/dev/null ||
	useradd --system --user-group --no-create-home --home-dir / --shell /usr/sbin/nologin _strobe
# the browser test's driver (t0952): playwright-core, pinned by
# tests/ui/package-lock.json; npm comes with nodejs from some sources, as a
# package of its own from Debian's
command -v npm >/dev/null || DEBIAN_FRONTEND=noninteractive apt-get install -y -qq npm
npm ci --prefix "$(dirname "$0")/tests/ui" --no-audit --no-fund --loglevel=error ||
	echo "setup.sh: npm ci in tests/ui failed: t0952 (the page in a browser) will be skipped" >&2
