#!/bin/sh
# t0480-buildid-collision: a build-id is whatever the file's builder wrote,
# so a user can give a file of their own the build-id of a binary someone
# else will run (libc's, or a colleague's program).  Mapped first, it used
# to become the cached copy for that build-id, and the victim's samples
# were then named from the attacker's file.
#
# Two attackers, run as user nobody outside group strobe and as a member of
# it, each map (tests/workloads/mapswap: one PROT_EXEC page, then exit) a
# copy of pagetouch carrying the build-id of a copy of split603010 that is
# run right after, in the same system-wide session.  Then:
#  - the victims' samples are named work60/work30/work10 from their own
#    contents, split 60/30/10 within 3 points, and no victim row carries a
#    symbol that only the attacker's file has;
#  - each victim's binary is keyed by its contents (build_id column
#    "xxh3:..."), and the report warns that its build-id is also that of a
#    different binary in the cache;
#  - the cache entry under the victim's build-id is still the attacker's
#    bytes (nothing was overwritten) and the victim's bytes are the entry
#    under its content key;
#  - strobed logs the collisions when the session stops.
. "$(dirname "$0")/lib.sh"
need_root
need_users
command -v nm >/dev/null || skip "nm (binutils) is not installed"

att=$tmp/att
mkdir "$att" && chown "$nuid:$ngid" "$att" || fail "attacker directory"
start_daemon
"$STROBE" start --sample-event cpu-clock -F 1000 --name collide >"$tmp/id" 2>"$tmp/err" ||
	fail "start: $(cat "$tmp/err")"

for who in nobody member; do
	bid=$(unique_copy "$WL/split603010" "$tmp/victim-$who") || fail "copying split603010"
	# the attacker's file: pagetouch with the victim's build-id (written by
	# root here through unique_copy, then given to nobody: whoever wrote
	# the bytes, the file is the attacker's)
	unique_copy "$WL/pagetouch" "$att/k-$who" "$bid" >/dev/null &&
		chown "$nuid:$ngid" "$att/k-$who" || fail "forging the build-id"
	if [ $who = nobody ]; then
		as_nobody "$WL/mapswap" "$att/k-$who" >/dev/null || fail "mapswap as nobody"
	else
		as_member "$WL/mapswap" "$att/k-$who" >/dev/null || fail "mapswap as member"
	fi
	"$tmp/victim-$who" 2 || fail "victim-$who"
	echo "$bid" >"$tmp/bid-$who"
done
"$STROBE" stop >"$tmp/stop" 2>&1 || fail "stop: $(cat "$tmp/stop")"

"$STROBE" report --by symbol --format csv >"$tmp/r.csv" 2>"$tmp/r.err" ||
	fail "report: $(cat "$tmp/r.err")"
for who in nobody member; do
	bid=$(cat "$tmp/bid-$who")
	v=$tmp/victim-$who
	nm --defined-only "$att/k-$who" | awk '{print $3}' | sort -u >"$tmp/asyms"
	nm --defined-only "$v" | awk '{print $3}' | sort -u >"$tmp/vsyms"
	comm -23 "$tmp/asyms" "$tmp/vsyms" >"$tmp/only-attacker"
	[ -s "$tmp/only-attacker" ] || fail "pagetouch has no symbols of its own"
	python3 - "$tmp/r.csv" "$v" "$bid" "$tmp/only-attacker" <<'PY' || fail "$who: the victim was named from the attacker's file"
import csv, sys
f, path, bid, only = sys.argv[1:5]
bad = set(open(only).read().split())
rows = [r for r in csv.DictReader(open(f)) if r["binary"] == path]
assert rows, f"no samples in {path}"
keys = {r["build_id"] for r in rows}
assert len(keys) == 1 and keys.pop().startswith("xxh3:"), \
    f"{path} is keyed {set(r['build_id'] for r in rows)}, not by its contents (build-id {bid})"
s = {r["symbol"]: int(r["samples"]) for r in rows}
wrong = set(s) & bad
assert not wrong, f"{path} named with the attacker's symbols {wrong}"
tot = sum(s.get(x, 0) for x in ("work60", "work30", "work10"))
assert tot >= 20 and tot >= 0.9 * sum(s.values()), f"only {tot} of {sum(s.values())} named work60/30/10: {s}"
# the split within 4 standard deviations of a binomial share, plus a point
for fn, want in (("work60", 60), ("work30", 30), ("work10", 10)):
    got = 100.0 * s.get(fn, 0) / tot
    tol = 400.0 * (want / 100 * (1 - want / 100) / tot) ** 0.5 + 1
    print(f"{path}: {fn} {got:.2f}% (want {want}+-{tol:.1f}, {tot} samples)")
    assert abs(got - want) <= tol, f"{fn} is {got:.2f}%, not {want}+-{tol:.1f}"
PY
	grep -q "note: $v (xxh3:[0-9a-f]*): warning: its build-id buildid:$bid is also that of a different binary" "$tmp/r.err" ||
		fail "$who: no warning for $v: $(cat "$tmp/r.err")"
	entry=$STROBE_DB.cache/buildid/$(echo "$bid" | cut -c1-2)/$(echo "$bid" | cut -c3-)
	cmp -s "$entry" "$att/k-$who" || fail "$who: the entry of build-id $bid is not the attacker's file any more"
	key=$(python3 -c '
import csv, sys
print({r["build_id"] for r in csv.DictReader(open(sys.argv[1])) if r["binary"] == sys.argv[2]}.pop())' "$tmp/r.csv" "$v")
	hex=${key#xxh3:}
	cmp -s "$STROBE_DB.cache/xxh3/$(echo "$hex" | cut -c1-2)/$(echo "$hex" | cut -c3-)" "$v" ||
		fail "$who: the victim's bytes are not cached under $key"
	ok "$who: victim named from its own contents, collision reported"
done
stop_daemon
grep -q "2 build-ids already cached with other contents" "$tmp/strobed.log" ||
	fail "strobed did not log the collisions: $(cat "$tmp/strobed.log")"
ok "strobed logged both collisions"
