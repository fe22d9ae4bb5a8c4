#!/bin/sh
# t0700-install: `make install` as a distribution runs it.  A copy of the
# tracked source files (git ls-files: the tree itself is configured in
# place, which rules out a VPATH build from it) is configured out of tree
# with --prefix=/usr --sysconfdir=/etc --localstatedir=/var, and only what
# is installed is built (install-exec install-data, not the workloads).
# Checked: `make install DESTDIR=D` puts exactly the contract's paths under
# D (each one, a man page for every command of strobe --help, and nothing
# else), with the right modes, and nothing on
# the live system (the same paths there unchanged, the post-install step
# skipped); the installed strobe and strobed print configure's version;
# the unit runs the installed strobed; sysusers.d and tmpfiles.d, applied
# to a scratch root, make group strobe and the directories with their
# modes; the post-install step (its programs replaced by stubs) runs
# systemd-sysusers and systemd-tmpfiles on the installed files, else
# groupadd and install -d, and never fails (nor runs for another prefix, as
# distcheck's); the configuration file's keys are
# exactly strobed's options that take a value (from its --help) and every
# commented default is a value strobed accepts: the installed strobe
# records with the file's defaults uncommented, starting the installed
# strobed (../sbin/strobed from its own directory), and reports the
# workload's hot function; a second install keeps a changed configuration
# file, and `make uninstall DESTDIR=D` removes every file but that one.
. "$(dirname "$0")/lib.sh"
need_root
command -v git >/dev/null || skip "git is not installed: the test copies the tracked files"
git -C "$top" rev-parse --git-dir >/dev/null 2>&1 || skip "$top is not a git checkout: the test copies its tracked files"
for p in autoreconf make tar; do
	command -v $p >/dev/null || skip "$p is not installed (./setup.sh installs it)"
done
src=$tmp/src build=$tmp/build dest=$tmp/dest
mkdir -p "$src" "$build" "$dest"
chmod 0755 "$tmp"	# the paths the installed files check their modes on
t0=$(date +%s)
(cd "$top" && git ls-files -z | tar --null --ignore-failed-read -T - -cf - 2>/dev/null) | tar -C "$src" -xf - ||
	fail "copying the tracked files"
(cd "$src" && autoreconf -fi) >"$tmp/autoreconf.log" 2>&1 || fail "autoreconf: $(tail -5 "$tmp/autoreconf.log")"
(cd "$build" && "$src/configure" --prefix=/usr --sysconfdir=/etc --localstatedir=/var) \
	>"$tmp/configure.log" 2>&1 || fail "configure: $(tail -5 "$tmp/configure.log")"
t1=$(date +%s)
unitdir=$(pkg-config --variable=systemdsystemunitdir systemd 2>/dev/null)
[ -n "$unitdir" ] || unitdir=/usr/lib/systemd/system
grep -qx "systemdsystemunitdir = $unitdir" "$build/Makefile" ||
	fail "configure chose another unit directory than $unitdir: $(grep '^systemdsystemunitdir' "$build/Makefile")"
ok "configure (VPATH, --prefix=/usr): units in $unitdir"

# the live system's copies of the paths, before
live_paths="/usr/bin/strobe /usr/sbin/strobed /usr/lib/strobe /usr/share/strobe /usr/share/doc/strobe
/etc/strobe $unitdir/strobed.service $unitdir/strobed.socket /usr/lib/sysusers.d/strobe.conf
/usr/lib/tmpfiles.d/strobe.conf /var/lib/strobe"
snapshot() {
	for p in $live_paths; do
		if [ -e "$p" ]; then find "$p" -exec stat -c '%n %s %Y %a %U:%G' {} + ; else echo "$p absent"; fi
	done
}
snapshot >"$tmp/live.before"

make -C "$build" -j2 install-exec install-data DESTDIR="$dest" >"$tmp/install.log" 2>&1 ||
	fail "make install: $(tail -15 "$tmp/install.log")"
t2=$(date +%s)
ok "built and installed in $((t2 - t1)) s (copy, autoreconf, configure: $((t1 - t0)) s)"
grep -q "DESTDIR install: group strobe and /var/lib/strobe are left to the package" "$tmp/install.log" ||
	fail "the post-install step did not say it left a DESTDIR install alone: $(tail -5 "$tmp/install.log")"
snapshot >"$tmp/live.after"
cmp -s "$tmp/live.before" "$tmp/live.after" ||
	fail "the DESTDIR install changed the live system: $(diff "$tmp/live.before" "$tmp/live.after")"
ok "the live system's paths are as they were"

# exactly the contract's files
{
	echo "/usr/bin/strobe 755"
	echo "/usr/sbin/strobed 755"
	echo "/usr/lib/strobe/strobe_samples.so 644"
	for f in "$src"/schema/[0-9]*.sql; do echo "/usr/share/strobe/schema/${f##*/} 644"; done
	for f in "$src"/schema/clickhouse/[0-9]*.sql; do
		echo "/usr/share/strobe/schema/clickhouse/${f##*/} 644"
	done
	echo "/usr/share/doc/strobe/README.md 644"
	for f in "$src"/doc/*.md; do echo "/usr/share/doc/strobe/${f##*/} 644"; done
	for f in "$src"/doc/img/*.png; do echo "/usr/share/doc/strobe/img/${f##*/} 644"; done
	echo "/etc/strobe/strobed.conf 644"
	echo "$unitdir/strobed.service 644"
	echo "$unitdir/strobed.socket 644"
	echo "/usr/lib/sysusers.d/strobe.conf 644"
	echo "/usr/lib/tmpfiles.d/strobe.conf 644"
	# a man page per command of strobe --help, strobed(8), strobed.conf(5)
	echo "/usr/share/man/man1/strobe.1 644"
	"$dest/usr/bin/strobe" --help | sed -n 's/^  \([a-z][a-z]*\) .*/\1/p' |
		while read -r c; do echo "/usr/share/man/man1/strobe-$c.1 644"; done
	echo "/usr/share/man/man5/strobed.conf.5 644"
	echo "/usr/share/man/man8/strobed.8 644"
	echo "/usr/share/bash-completion/completions/strobe 644"
	echo "/usr/share/bash-completion/completions/strobed 644"
} | sort >"$tmp/want"
(cd "$dest" && find . ! -type d -printf '/%P %m\n') | sort >"$tmp/got"
cmp -s "$tmp/want" "$tmp/got" ||
	fail "installed files (path mode) differ from the contract's: $(diff "$tmp/want" "$tmp/got")"
ok "installed: $(wc -l <"$tmp/got") files of the contract with their modes (man pages: $(grep -c /man/ "$tmp/got"))"
for f in /usr/bin/strobe /usr/sbin/strobed; do
	[ "$(stat -c %U:%G "$dest$f")" = root:root ] || fail "$f is not root's: $(stat -c %U:%G "$dest$f")"
done
[ "$(stat -c %a "$dest/etc/strobe")" = 755 ] || fail "/etc/strobe mode $(stat -c %a "$dest/etc/strobe")"

version=$(sed -n 's/^#define PACKAGE_VERSION "\(.*\)"$/\1/p' "$build/config.h")
[ -n "$version" ] || fail "no PACKAGE_VERSION in config.h"
[ "$("$dest/usr/bin/strobe" --version)" = "strobe $version" ] ||
	fail "strobe --version: $("$dest/usr/bin/strobe" --version 2>&1), not strobe $version"
[ "$("$dest/usr/sbin/strobed" --version)" = "strobed $version" ] ||
	fail "strobed --version: $("$dest/usr/sbin/strobed" --version 2>&1), not strobed $version"
ok "the installed strobe and strobed print version $version"
grep -qx "ExecStart=/usr/sbin/strobed --foreground" "$dest$unitdir/strobed.service" ||
	fail "the unit does not run the installed strobed: $(grep ExecStart "$dest$unitdir/strobed.service")"
grep -q '@[a-z]*@' "$dest$unitdir/strobed.service" && fail "unsubstituted @var@ in the unit"
"$dest/usr/sbin/strobed" --help | grep -q "default: env STROBE_CONFIG," ||
	fail "strobed --help does not describe --config"
"$dest/usr/sbin/strobed" --help | grep -q "/etc/strobe/strobed.conf" ||
	fail "the installed strobed's default configuration file is not /etc/strobe/strobed.conf: $("$dest/usr/sbin/strobed" --help | grep -A2 -- --config)"
ok "the unit runs /usr/sbin/strobed; strobed reads /etc/strobe/strobed.conf"

# the installed sysusers.d and tmpfiles.d files, applied to a scratch root
if command -v systemd-sysusers >/dev/null && command -v systemd-tmpfiles >/dev/null; then
	sr=$tmp/sysroot
	mkdir -p "$sr/etc" "$sr/usr/lib/sysusers.d" "$sr/usr/lib/tmpfiles.d"
	cp "$dest/usr/lib/sysusers.d/strobe.conf" "$sr/usr/lib/sysusers.d/"
	cp "$dest/usr/lib/tmpfiles.d/strobe.conf" "$sr/usr/lib/tmpfiles.d/"
	systemd-sysusers --root="$sr" >"$tmp/sysusers.log" 2>&1 || fail "systemd-sysusers: $(cat "$tmp/sysusers.log")"
	sgid=$(sed -n 's/^strobe:x:\([0-9]*\):$/\1/p' "$sr/etc/group")
	[ -n "$sgid" ] || fail "sysusers.d made no group strobe: $(cat "$sr/etc/group")"
	[ "$sgid" -lt 1000 ] || fail "group strobe is not a system group: gid $sgid"
	# the workers' user (sandbox_user): a system user of its own group
	wu=$(grep '^_strobe:' "$sr/etc/passwd") || fail "sysusers.d made no user _strobe: $(cat "$sr/etc/passwd")"
	wuid=$(echo "$wu" | cut -d: -f3) wgid=$(echo "$wu" | cut -d: -f4)
	[ "$wuid" -gt 0 ] && [ "$wuid" -lt 1000 ] && [ "$wgid" -gt 0 ] && [ "$wgid" != "$sgid" ] ||
		fail "user _strobe: uid $wuid gid $wgid (group strobe $sgid): not a system user of its own group"
	systemd-tmpfiles --root="$sr" --create >"$tmp/tmpfiles.log" 2>&1 ||
		fail "systemd-tmpfiles: $(cat "$tmp/tmpfiles.log")"
	[ "$(stat -c '%a %u:%g' "$sr/var/lib/strobe")" = "750 0:$sgid" ] ||
		fail "/var/lib/strobe from tmpfiles.d: $(stat -c '%a %u:%g' "$sr/var/lib/strobe"), not 750 0:$sgid"
	[ "$(stat -c '%a %u:%g' "$sr/run/strobe")" = "755 0:0" ] ||
		fail "/run/strobe from tmpfiles.d: $(stat -c '%a %u:%g' "$sr/run/strobe")"
	ok "sysusers.d makes system group strobe ($sgid) and the workers' user _strobe ($wuid:$wgid); tmpfiles.d /var/lib/strobe 0750 root:strobe, /run/strobe 0755"
else
	echo "not checked: systemd-sysusers or systemd-tmpfiles is not installed (package systemd)"
fi

# the post-install step of a real install (root, no DESTDIR), with every
# program it may run replaced by one that only says how it was called
stubs=$tmp/stubs
mkdir "$stubs"
for p in systemd-sysusers systemd-tmpfiles groupadd useradd install getent; do
	printf '#!/bin/sh\necho "%s $*" >>"%s"\n%s\n' "$p" "$tmp/calls" \
		"$([ $p = getent ] && echo 'exit 2' || echo 'exit 0')" >"$stubs/$p"
	chmod +x "$stubs/$p"
done
PATH=$stubs:$PATH make -C "$build" install-data-hook DESTDIR= >"$tmp/hook.log" 2>&1 ||
	fail "the post-install step failed: $(cat "$tmp/hook.log")"
printf '%s\n' "systemd-sysusers /usr/lib/sysusers.d/strobe.conf" \
	"systemd-tmpfiles --create /usr/lib/tmpfiles.d/strobe.conf" >"$tmp/calls.want"
cmp -s "$tmp/calls" "$tmp/calls.want" || fail "the post-install step with systemd ran: $(cat "$tmp/calls")"
rm "$tmp/calls"
PATH=$stubs:$PATH make -C "$build" install-data-hook DESTDIR= prefix="$tmp/pfx" >"$tmp/hook.log" 2>&1 ||
	fail "the post-install step failed: $(cat "$tmp/hook.log")"
[ -e "$tmp/calls" ] && fail "the post-install step ran for prefix $tmp/pfx: $(cat "$tmp/calls")"
grep -q "prefix $tmp/pfx is not /usr or /usr/local" "$tmp/hook.log" ||
	fail "the post-install step did not say why it did nothing: $(cat "$tmp/hook.log")"
rm "$stubs/systemd-sysusers" "$stubs/systemd-tmpfiles"
PATH=$stubs /bin/sh "$src/dist/post-install.sh" /usr/lib/sysusers.d/strobe.conf \
	/usr/lib/tmpfiles.d/strobe.conf >"$tmp/hook.log" 2>&1 || fail "post-install.sh failed: $(cat "$tmp/hook.log")"
printf '%s\n' "getent group strobe" "groupadd --system strobe" "getent passwd _strobe" \
	"useradd --system --user-group --no-create-home --home-dir / --shell /usr/sbin/nologin _strobe" \
	"install -d -m 0750 -o root -g strobe /var/lib/strobe" >"$tmp/calls.want"
cmp -s "$tmp/calls" "$tmp/calls.want" || fail "the post-install step without systemd ran: $(cat "$tmp/calls")"
printf '#!/bin/sh\nexit 1\n' >"$stubs/groupadd"
PATH=$stubs /bin/sh "$src/dist/post-install.sh" /usr/lib/sysusers.d/strobe.conf \
	/usr/lib/tmpfiles.d/strobe.conf >"$tmp/hook.log" 2>&1 || fail "post-install.sh failed when groupadd did"
grep -q "post-install: not done; as root, run: groupadd --system strobe" "$tmp/hook.log" ||
	fail "post-install.sh did not say what is left to do: $(cat "$tmp/hook.log")"
ok "post-install step: systemd-sysusers and systemd-tmpfiles, else groupadd and install -d; never failing"

# the file's keys: strobed's options with a value, but --config
"$dest/usr/sbin/strobed" --help | sed -n 's/^  \(-., \)\{0,1\}--\([a-z-]*\) [^ ].*/\2/p' |
	grep -v '^config$' | sort >"$tmp/opts"
grep -q '^db$' "$tmp/opts" && grep -q '^ingest-nice$' "$tmp/opts" ||
	fail "could not read strobed's options from --help: $(cat "$tmp/opts")"
sed -n 's/^#\([a-z-]*\) = .*/\1/p' "$dest/etc/strobe/strobed.conf" | sort >"$tmp/keys"
cmp -s "$tmp/opts" "$tmp/keys" ||
	fail "strobed.conf's keys differ from strobed's options: $(diff "$tmp/opts" "$tmp/keys")"
grep -v '^#' "$dest/etc/strobe/strobed.conf" | grep -q . &&
	fail "strobed.conf sets a key: $(grep -v '^#' "$dest/etc/strobe/strobed.conf" | grep .)"
ok "strobed.conf: every one of strobed's $(wc -l <"$tmp/keys") options with a value, commented out"

# the commented defaults are good values: recorded with them (db and socket
# in $tmp), by the installed strobe starting the installed strobed
sed -e 's/^#\([a-z-]* = \)/\1/' -e "s|^db = .*|db = $tmp/inst.db|" \
	-e "s|^socket = .*|socket = $tmp/inst.sock|" "$dest/etc/strobe/strobed.conf" >"$tmp/defaults.conf"
chmod 0644 "$tmp/defaults.conf"
unset STROBED STROBE_DB STROBE_SOCKET
export STROBE_CONFIG=$tmp/defaults.conf
PATH=/usr/bin:/bin "$dest/usr/bin/strobe" record --sample-event cpu-clock -F 1000 -- "$WL/split603010" 2 \
	>/dev/null 2>"$tmp/rec.err" &
rec=$!
seen=
for i in $(seq 100); do
	# one find over /proc, not a readlink per process: under load a shell
	# loop over every pid took longer than strobed lived
	seen=$(find /proc -mindepth 2 -maxdepth 2 -name exe -lname "$dest/usr/sbin/strobed" \
		2>/dev/null | head -n 1)
	[ -n "$seen" ] && break
	kill -0 $rec 2>/dev/null || break
	sleep 0.05
done
wait $rec || fail "record with the installed strobe: $(cat "$tmp/rec.err")"
[ -n "$seen" ] || fail "strobe record did not run the installed strobed ($dest/usr/sbin/strobed)"
"$dest/usr/bin/strobe" report --format csv >"$tmp/r.csv" 2>"$tmp/r.err" || fail "report: $(cat "$tmp/r.err")"
grep -q "^$WL/split603010,[^,]*,work60," "$tmp/r.csv" || fail "the report of $tmp/inst.db lacks $WL/split603010 work60: $(head -5 "$tmp/r.csv")"
unset STROBE_CONFIG
ok "the installed strobe started the installed strobed (pid $seen) with every default uncommented; the report names work60"

# a changed configuration file survives install and uninstall
echo "keep = 7" >>"$dest/etc/strobe/strobed.conf"
cp "$dest/etc/strobe/strobed.conf" "$tmp/changed.conf"
make -C "$build" install-data DESTDIR="$dest" >"$tmp/install2.log" 2>&1 || fail "second make install"
cmp -s "$tmp/changed.conf" "$dest/etc/strobe/strobed.conf" || fail "make install replaced the changed strobed.conf"
grep -q "keeping $dest/etc/strobe/strobed.conf: it exists" "$tmp/install2.log" ||
	fail "make install did not say it kept strobed.conf"
make -C "$build" uninstall DESTDIR="$dest" >"$tmp/uninstall.log" 2>&1 ||
	fail "make uninstall: $(tail -10 "$tmp/uninstall.log")"
left=$(cd "$dest" && find . ! -type d -printf '/%P\n')
[ "$left" = /etc/strobe/strobed.conf ] || fail "make uninstall left: $left"
grep -q "keeping $dest/etc/strobe/strobed.conf: it was changed" "$tmp/uninstall.log" ||
	fail "make uninstall did not say it kept the changed strobed.conf"
ok "a changed strobed.conf is kept by install and uninstall"
rm "$dest/etc/strobe/strobed.conf"
make -C "$build" install-data DESTDIR="$dest" >/dev/null 2>&1 || fail "third make install"
make -C "$build" uninstall DESTDIR="$dest" >/dev/null 2>&1 || fail "second make uninstall"
left=$(cd "$dest" && find . ! -type d -printf '/%P\n')
[ -z "$left" ] || fail "make uninstall left: $left"
ok "make uninstall removes every file"
snapshot >"$tmp/live.after"
cmp -s "$tmp/live.before" "$tmp/live.after" ||
	fail "the DESTDIR install or uninstall changed the live system: $(diff "$tmp/live.before" "$tmp/live.after")"
echo PASS
