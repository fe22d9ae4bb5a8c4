#!/bin/sh
# t0481-buildid-bindmount: a build-id and a path together still name no
# file.  In a private mount namespace (unshare -Urm, which any user may
# make), nobody bind-mounts a copy of pagetouch forged with the build-id of
# a root program over that program's path and maps it there first,
# keeping it mapped; root then runs the real program at the same path.  Mapping records carry a build-id (Linux >= 5.12) instead of a
# device and inode, and ingest used to remember "build-id + path" for the
# session, so root's samples went to the attacker's file for the rest of
# the session.  Now: root's samples are named work60/work30/work10 from its
# own bytes, none with a symbol only the attacker's file has.
. "$(dirname "$0")/lib.sh"
need_root
need_users
command -v nm >/dev/null || skip "nm (binutils) is not installed"
command -v unshare >/dev/null || skip "unshare (util-linux) is not installed"
as_nobody unshare -Urm true 2>/dev/null ||
	skip "an unprivileged user cannot make a user and mount namespace here (unshare -Urm)"

chmod 755 "$tmp"
att=$tmp/att
mkdir "$att" && chown "$nuid:$ngid" "$att" || fail "attacker directory"
bid=$(unique_copy "$WL/split603010" "$tmp/victim") || fail "copying split603010"
chmod 755 "$tmp/victim"
unique_copy "$WL/pagetouch" "$att/k" "$bid" >/dev/null && chown "$nuid:$ngid" "$att/k" ||
	fail "forging the build-id"

start_daemon
"$STROBE" start --sample-event cpu-clock -F 1000 --name bindmount >"$tmp/id" 2>"$tmp/err" ||
	fail "start: $(cat "$tmp/err")"
# the attacker's process keeps its mapping while root's program runs (a
# process that exits leaves only the path, which strobed opens in its own
# namespace: the real file)
as_nobody unshare -Urm sh -c 'mount --bind "$1" "$2" && echo mounted >"$3" &&
	exec /usr/bin/python3 -c "
import mmap, sys, time
f = open(sys.argv[1], \"rb\")
m = mmap.mmap(f.fileno(), 0, prot=mmap.PROT_READ | mmap.PROT_EXEC)
time.sleep(4)
" "$2"' sh "$att/k" "$tmp/victim" "$att/ready" >"$tmp/att.out" 2>&1 &
apid=$!
i=0
until [ -s "$att/ready" ]; do
	i=$((i + 1))
	[ $i -gt 100 ] && fail "the attacker's bind mount: $(cat "$tmp/att.out")"
	sleep 0.05
done
sleep 0.3
"$tmp/victim" 2 || fail "victim"
wait "$apid"
"$STROBE" stop >"$tmp/stop" 2>&1 || fail "stop: $(cat "$tmp/stop")"

"$STROBE" report --by symbol --format csv >"$tmp/r.csv" 2>"$tmp/r.err" ||
	fail "report: $(cat "$tmp/r.err")"
nm --defined-only "$att/k" | awk '{print $3}' | sort -u >"$tmp/asyms"
nm --defined-only "$tmp/victim" | awk '{print $3}' | sort -u >"$tmp/vsyms"
comm -23 "$tmp/asyms" "$tmp/vsyms" >"$tmp/only-attacker"
[ -s "$tmp/only-attacker" ] || fail "pagetouch has no symbols of its own"
python3 - "$tmp/r.csv" "$tmp/victim" "$tmp/only-attacker" <<'PY' || fail "root's samples were named from the attacker's bind-mounted file"
import csv, sys
f, path, only = sys.argv[1:4]
bad = set(open(only).read().split())
rows = [r for r in csv.DictReader(open(f)) if r["binary"] == path]
assert rows, f"no samples in {path}"
s = {}
for r in rows:
    s[r["symbol"]] = s.get(r["symbol"], 0) + int(r["samples"])
wrong = set(s) & bad
assert not wrong, f"{path} named with the attacker's symbols {wrong}: {s}"
tot = sum(s.get(x, 0) for x in ("work60", "work30", "work10"))
print(f"{path}: {tot} of {sum(s.values())} samples named work60/30/10; keys {sorted({r['build_id'] for r in rows})}")
assert tot >= 20 and tot >= 0.9 * sum(s.values()), f"only {tot} of {sum(s.values())} named work60/30/10: {s}"
PY
ok "a forged build-id bind-mounted over a root program's path in a private namespace: root's samples named from its own bytes"
