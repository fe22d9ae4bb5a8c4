#!/bin/sh
# t0720-deb: the Debian packages (debian/) from a copy of the tracked files:
#   - dpkg-buildpackage -b builds strobe and strobe-dkms, without building
#     the tests' workloads
#   - lintian: no E: or W: tag that is not overridden, and no override
#     left unused (each override in debian/*.lintian-overrides says why)
#   - apt-get install of both succeeds, also where the running kernel has
#     no headers (DKMS skips it); no strobed is started by the install
#   - the installed strobe: --version, and strobe record starts the
#     installed /usr/sbin/strobed and reports the workload's hot function
#   - DKMS: dkms status shows strobe; dkms build for the Debian kernel
#     whose headers are installed gives a strobe.ko with its vermagic
#   - apt-get purge leaves no file behind under /usr /etc /var/lib (and
#     removes /var/lib/strobe, /etc/strobe, /usr/src/strobe-*,
#     /var/lib/dkms/strobe), and keeps a pre-existing group strobe
# Root only; never runs where strobe or strobe-dkms is already installed
# (or left its files): the purge would take the user's install with it.
# A /var/lib/strobe not from a package is moved aside and put back.
. "${STROBE_TOP:-$(dirname "$0")/..}/tests/lib.sh"

[ "$(id -u)" = 0 ] || skip "needs root (installs and purges the packages)"
for t in dpkg-buildpackage dpkg-checkbuilddeps lintian dkms apt-get git modinfo; do
	command -v $t >/dev/null 2>&1 ||
		skip "$t is not installed (./setup.sh installs dpkg-dev, debhelper, lintian, dkms)"
done
[ -e "$top/.git" ] || skip "$top is not a git checkout: the packages are built from its tracked files (git ls-files)"
for p in strobe strobe-dkms; do
	st=$(dpkg-query -W -f='${db:Status-Status}' $p 2>/dev/null)
	case $st in ''|not-installed) ;;
	*) skip "package $p is $st on this machine: this test would replace and purge it" ;; esac
done
for f in /usr/bin/strobe /usr/sbin/strobed /etc/strobe /var/lib/dkms/strobe \
	/usr/src/strobe-* /lib/systemd/system/strobed.* /etc/systemd/system/strobed.*; do
	[ -e "$f" ] && skip "$f exists (not from a package): this test's purge would remove it"
done
[ -x "$WL/split603010" ] || skip "$WL/split603010 is not built (run make in $build)"

src=$tmp/src
progress() { echo "--- $(date +%T) $*"; }
installed=
# A database a strobed run from a build tree left in /var/lib/strobe (the
# default --db; make demo records there) would go with the purge: it is
# moved aside for the test, unless a process has it open, and put back.
saved=
if [ -e /var/lib/strobe ]; then
	for fd in /proc/[0-9]*/fd/*; do
		case $(readlink "$fd" 2>/dev/null) in /var/lib/strobe/*)
			p=${fd#/proc/}; p=${p%%/*}
			skip "/var/lib/strobe is in use (pid $p: $(cat /proc/$p/comm 2>/dev/null)): this test's purge would remove it" ;;
		esac
	done
	saved=/var/lib/strobe.t0720-$$
	mv /var/lib/strobe "$saved" || fail "cannot move /var/lib/strobe aside"
	echo "/var/lib/strobe (not a package's) moved to $saved for the test; put back at its end"
fi
# Whatever fails, the packages this test installed are purged again, and
# the moved database put back.
deb_cleanup() {
	[ -n "$installed" ] && apt-get purge -y -q strobe strobe-dkms >"$tmp/cleanup-purge.log" 2>&1
	if [ -n "$saved" ]; then
		rm -rf /var/lib/strobe
		mv "$saved" /var/lib/strobe || echo "t0720: could not put $saved back as /var/lib/strobe" >&2
	fi
	cleanup
}
trap deb_cleanup EXIT
export DEBIAN_FRONTEND=noninteractive
APT="apt-get -q -o DPkg::Lock::Timeout=300"

# --- build, from the tracked files only, outside the source tree ---
progress "copying the tracked files of $top"
mkdir "$src"
git -C "$top" ls-files -z | (cd "$top" && tar --null -T - -cf -) | tar -C "$src" -xf - ||
	fail "copying the tracked files"
(cd "$src" && dpkg-checkbuilddeps) >"$tmp/bdeps" 2>&1 ||
	fail "build dependencies missing (./setup.sh installs them): $(cat "$tmp/bdeps")"
version=$(dpkg-parsechangelog -l "$src/debian/changelog" -S Version)
upstream=${version%-*}
progress "dpkg-buildpackage -b of strobe $version (a minute or so)"
(cd "$src" && DEB_BUILD_OPTIONS="nocheck parallel=2" nice -n 19 dpkg-buildpackage -us -uc -b -j2) \
	>"$tmp/build.log" 2>&1 || { tail -n 40 "$tmp/build.log"; fail "dpkg-buildpackage failed"; }
deb=$tmp/strobe_${version}_$(dpkg --print-architecture).deb
dkmsdeb=$tmp/strobe-dkms_${version}_all.deb
[ -f "$deb" ] && [ -f "$dkmsdeb" ] || { ls "$tmp"; fail "no $deb or $dkmsdeb"; }
ok "built $(basename "$deb") and $(basename "$dkmsdeb")"
# Only what is installed is built: not the workloads, benchmarks or unit tests.
built=$(cd "$src" && ls tests/workloads/split603010 bench/spin tests/unit/test_record 2>/dev/null)
[ -z "$built" ] || fail "the package build built test programs: $built"
ok "the build did not build the tests' workloads"
# group strobe (here it exists already) and /var/lib/strobe come from the
# package's own sysusers.d and tmpfiles.d files, applied by its postinst
dpkg-deb -I "$deb" postinst >"$tmp/postinst" 2>&1 || fail "no postinst in $(basename "$deb")"
grep -q 'systemd-sysusers.* strobe\.conf' "$tmp/postinst" ||
	fail "the postinst does not apply sysusers.d/strobe.conf (group strobe)"
grep -q 'systemd-tmpfiles .*strobe\.conf' "$tmp/postinst" ||
	fail "the postinst does not apply tmpfiles.d/strobe.conf (/var/lib/strobe)"
ok "the postinst applies sysusers.d/strobe.conf and tmpfiles.d/strobe.conf"

# --- lintian ---
progress "lintian"
lintian -I --show-overrides --fail-on none "$tmp"/strobe_"${version}"_*.changes >"$tmp/lintian.log" 2>&1 ||
	{ cat "$tmp/lintian.log"; fail "lintian did not run"; }
grep -E '^[OIP]: ' "$tmp/lintian.log" | sed 's/^/    /'
bad=$(grep -E '^[EW]: |^I: .*unused-override' "$tmp/lintian.log")
[ -z "$bad" ] || fail "lintian (fix, or override in debian/*.lintian-overrides with a comment why):
$bad"
ok "lintian: no E: or W: tag outside the overrides, no unused override"

# --- install ---
# Paths under /usr /etc /var/lib (/lib is /usr/lib), without the package
# manager's own state, the directories other programs write meanwhile, and
# the module signing key dkms makes at its first build of any module (it
# is dkms's, kept for every module, not strobe-dkms's).
snapshot() {
	find /usr /etc /var/lib -xdev \( -path /var/lib/apt -o -path /var/lib/dpkg \
		-o -path /usr/local -o -path /var/lib/systemd/timers -o -path /var/lib/ucf/cache \
		-o -path /var/lib/dkms/mok.key -o -path /var/lib/dkms/mok.pub \) -prune \
		-o -print 2>/dev/null | LC_ALL=C sort
}
snapshot >"$tmp/before"
group_before=$(getent group strobe)
progress "apt-get install ./$(basename "$deb") ./$(basename "$dkmsdeb") (DKMS builds the module)"
installed=1
$APT install -y --no-install-recommends "$deb" "$dkmsdeb" >"$tmp/install.log" 2>&1 ||
	{ tail -n 40 "$tmp/install.log"; fail "apt-get install failed"; }
for p in strobe strobe-dkms; do
	st=$(dpkg-query -W -f='${db:Status-Abbrev}' $p)
	[ "$st" = "ii " ] || fail "$p is '$st' after the install, not ii (postinst failed?)"
done
ok "both packages installed (ii)"
kver_run=$(uname -r)
if [ ! -e "/lib/modules/$kver_run/build" ]; then
	grep -iE "$kver_run|headers" "$tmp/install.log" | sed 's/^/    /'
	ok "the running kernel $kver_run has no headers, and strobe-dkms installed all the same"
fi

dpkg -L strobe >"$tmp/files"
for f in /usr/bin/strobe /usr/sbin/strobed /usr/lib/strobe/strobe_samples.so \
	/usr/lib/sysusers.d/strobe.conf /usr/lib/tmpfiles.d/strobe.conf; do
	grep -qx "$f" "$tmp/files" || fail "dpkg -L strobe has no $f"
done
ok "dpkg -L strobe: strobe, strobed, strobe_samples.so, sysusers.d and tmpfiles.d/strobe.conf"
# What the source tree has to install is in the package too.
want=
[ -f "$src/dist/strobed.conf" ] && want="$want /etc/strobe/strobed.conf"
[ -f "$src/dist/systemd/strobed.socket" ] &&
	want="$want /lib/systemd/system/strobed.socket /lib/systemd/system/strobed.service"
[ -f "$src/dist/bash-completion/strobe" ] && want="$want /usr/share/bash-completion/completions/strobe"
for scd in "$src"/doc/man/*.scd; do
	[ -f "$scd" ] || continue
	page=$(basename "$scd" .scd)
	want="$want /usr/share/man/man${page##*.}/$page.gz"
done
for f in $want; do
	grep -qx "$f" "$tmp/files" || fail "dpkg -L strobe has no $f (the source tree has it)"
done
[ -n "$want" ] && ok "dpkg -L strobe also has:$want"
if [ -f "$src/dist/strobed.conf" ]; then
	dpkg-query -W -f='${Conffiles}\n' strobe | grep -q '^ /etc/strobe/strobed.conf ' ||
		fail "/etc/strobe/strobed.conf is not a conffile: $(dpkg-query -W -f='${Conffiles}' strobe)"
	ok "/etc/strobe/strobed.conf is a conffile"
fi
if [ -f "$src/dist/systemd/strobed.socket" ]; then
	# deb-systemd-helper enables it also where systemd is not running
	ls /etc/systemd/system/*.wants/strobed.socket >/dev/null 2>&1 ||
		fail "strobed.socket is not enabled (no /etc/systemd/system/*.wants/strobed.socket)"
	ls /etc/systemd/system/*.wants/strobed.service >/dev/null 2>&1 &&
		fail "strobed.service is enabled: only the socket should be"
	ok "strobed.socket enabled, strobed.service not (socket activation)"
fi
getent group strobe >/dev/null || fail "no group strobe after the install"
[ "$(stat -c '%a %U %G' /var/lib/strobe 2>&1)" = "750 root strobe" ] ||
	fail "/var/lib/strobe is '$(stat -c '%a %U %G' /var/lib/strobe 2>&1)', not 750 root strobe"
ok "group strobe; /var/lib/strobe 750 root:strobe"
for p in $(pgrep -x strobed); do
	[ "$(readlink "/proc/$p/exe")" = /usr/sbin/strobed ] &&
		fail "the install started /usr/sbin/strobed (pid $p): socket activation only"
done
ok "no strobed started by the install"

# --- the installed strobe ---
v=$(/usr/bin/strobe --version) || fail "strobe --version failed"
[ "$v" = "strobe $upstream" ] || fail "strobe --version printed '$v', not 'strobe $upstream'"
ok "/usr/bin/strobe --version: $v"
progress "strobe record with the installed strobe"
# STROBED (lib.sh) would point it at the build tree's strobed
env -u STROBED -u STROBE_DB -u STROBE_SOCKET /usr/bin/strobe record --db "$tmp/x.db" -F 999 \
	-- "$WL/split603010" 3 >"$tmp/record.out" 2>"$tmp/record.err" &
rpid=$!
daemon=
i=0
while [ -z "$daemon" ] && [ $i -lt 100 ] && kill -0 $rpid 2>/dev/null; do
	for p in $(pgrep -P $rpid); do
		[ "$(readlink "/proc/$p/exe")" = /usr/sbin/strobed ] && daemon=$p
	done
	i=$((i + 1))
	sleep 0.05
done
wait $rpid || fail "strobe record failed: $(cat "$tmp/record.err")"
[ -n "$daemon" ] || fail "strobe record did not start /usr/sbin/strobed (no child with that exe)"
ok "strobe record started the installed /usr/sbin/strobed (pid $daemon)"
env -u STROBED -u STROBE_DB -u STROBE_SOCKET /usr/bin/strobe report --db "$tmp/x.db" \
	--binary split603010 --format csv >"$tmp/r.csv" || fail "strobe report failed"
top_sym=$(python3 -c 'import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
print(max(rows, key=lambda r: int(r["samples"]))["symbol"] if rows else "")' "$tmp/r.csv")
[ "$top_sym" = work60 ] || { cat "$tmp/r.csv"; fail "the hottest symbol is '$top_sym', not work60"; }
ok "strobe report: work60 is split603010's hottest function"

# --- DKMS ---
dkms status -m strobe -v "$upstream" >"$tmp/dkms-status" 2>&1
grep -q "^strobe/$upstream" "$tmp/dkms-status" || fail "dkms status: $(cat "$tmp/dkms-status")"
ok "dkms status: $(head -n 1 "$tmp/dkms-status")"
kver=
for b in /lib/modules/*/build; do
	[ -e "$b" ] && kver=$(basename "$(dirname "$b")")
done
if [ -z "$kver" ]; then
	echo "no kernel with headers (/lib/modules/*/build): the module build is not checked"
else
	progress "dkms build -m strobe -v $upstream -k $kver"
	nice -n 19 dkms build --force -m strobe -v "$upstream" -k "$kver" >"$tmp/dkms-build.log" 2>&1 ||
		{ cat "$tmp/dkms-build.log"; cat /var/lib/dkms/strobe/"$upstream"/build/make.log 2>/dev/null
		  fail "dkms build for $kver failed"; }
	ko=$(find "/var/lib/dkms/strobe/$upstream/$kver" -name 'strobe.ko*' | head -n 1)
	[ -n "$ko" ] || fail "dkms build made no strobe.ko under /var/lib/dkms/strobe/$upstream/$kver"
	name=$(modinfo -F name "$ko")
	vermagic=$(modinfo -F vermagic "$ko")
	[ "$name" = strobe ] || fail "$ko: modinfo name '$name', not strobe"
	case "$vermagic" in "$kver "*) ;; *) fail "$ko: vermagic '$vermagic', not $kver" ;; esac
	ok "dkms built $ko: name $name, vermagic $vermagic"
fi

# --- purge ---
progress "apt-get purge"
$APT purge -y strobe strobe-dkms >"$tmp/purge.log" 2>&1 || { cat "$tmp/purge.log"; fail "apt-get purge failed"; }
installed=
snapshot >"$tmp/after"
comm -3 "$tmp/before" "$tmp/after" >"$tmp/diff"
# comm -3: only before (removed by install+purge) in column 1, only after (left) in 2
[ -s "$tmp/diff" ] && { sed 's/^\t/    left: /; t; s/^/    gone: /' "$tmp/diff"; fail "install and purge changed these paths"; }
for f in /usr/src/strobe-"$upstream" /var/lib/dkms/strobe /etc/strobe /var/lib/strobe /run/strobe; do
	[ -e "$f" ] && fail "$f is left after the purge"
done
ok "purge: the same files under /usr /etc /var/lib as before the install"
if [ -n "$group_before" ]; then
	[ "$(getent group strobe)" = "$group_before" ] || fail "the group strobe changed: '$group_before' -> '$(getent group strobe)'"
	ok "the pre-existing group strobe is kept"
else
	getent group strobe >/dev/null || fail "the purge removed the group strobe (Debian keeps system groups)"
	ok "the group strobe the package created is kept after the purge (Debian convention)"
fi
exit 0
