#!/bin/sh
# post-install.sh - `make install`'s last step, run as root on the live
# system (never for a DESTDIR install): group strobe, the workers' user
# _strobe and strobed's
# directories, as systemd-sysusers and systemd-tmpfiles would at boot.
# Arguments: the installed sysusers.d and tmpfiles.d files.  Never fails:
# it says what is left to do instead.
sysusers=$1 tmpfiles=$2
todo=
if command -v systemd-sysusers >/dev/null 2>&1; then
	echo " systemd-sysusers $sysusers"
	systemd-sysusers "$sysusers" || todo="$todo; systemd-sysusers $sysusers"
else
	if ! getent group strobe >/dev/null 2>&1; then
		echo " groupadd --system strobe"
		groupadd --system strobe || todo="$todo; groupadd --system strobe"
	fi
	if ! getent passwd _strobe >/dev/null 2>&1; then
		u="useradd --system --user-group --no-create-home --home-dir / --shell /usr/sbin/nologin _strobe"
		echo " $u"
		$u || todo="$todo; $u"
	fi
fi
if command -v systemd-tmpfiles >/dev/null 2>&1; then
	echo " systemd-tmpfiles --create $tmpfiles"
	systemd-tmpfiles --create "$tmpfiles" || todo="$todo; systemd-tmpfiles --create $tmpfiles"
else
	echo " install -d -m 0750 -o root -g strobe /var/lib/strobe"
	install -d -m 0750 -o root -g strobe /var/lib/strobe ||
		todo="$todo; install -d -m 0750 -o root -g strobe /var/lib/strobe"
fi
if [ -n "$todo" ]; then
	echo "post-install: not done; as root, run:${todo#;}" >&2
fi
exit 0
