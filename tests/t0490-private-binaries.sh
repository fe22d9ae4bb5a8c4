#!/bin/sh
# t0490-private-binaries: the binary cache gives no one a byte of a file
# they could not read themselves.  In one system-wide session (started by a
# member of group strobe) run, each a copy of split603010 with a build-id of
# its own:
#   public   mode 0755 in a directory everyone can search;
#   home     mode 0755 in user daemon's 0700 directory (run by daemon);
#   xonly    mode 0711, execute-only (run by nobody);
#   deleted  unlinking its own file first thing (split603010 --unlink-self),
#            so that strobed (draining every ~100 ms) finds it deleted:
#            no one can read it any more but through the mapping.
# All four run and exit while ingest is stalled: another process holds
# the database's write lock (as in t0141; ingest stores nothing, the drain
# thread keeps spooling), released only once they are gone (at most 60 s:
# a bound, not a timing the test relies on).  So ingest reaches their
# mappings after their /proc/PID/map_files went with them, as it does on a
# machine under heavy load: strobed must hold each binary's file from the
# moment it drains the mapping's record (deleted cannot be read otherwise).
# Then:
#  - public's cache entry is group-readable (0640); the entries of home,
#    xonly and deleted are root's only (0600), and nobody (a member) cannot
#    read them;
#  - root's report names all four work60/30/10;
#  - the member's report names public, and shows home, xonly and deleted as
#    "[binary unavailable]" with a note saying the copy is root's only;
#  - user daemon (also a member), who can read its own home, gets home named
#    (from the original file, read with daemon's rights) but not xonly;
#  - once home is replaced by another build of it, daemon's report no
#    longer uses it;
#  - the kallsyms snapshot is group-readable only with kptr_restrict 0:
#    with 1 (set for a moment, then restored) the next session makes it
#    root's, and a member's report says kernel symbols are root's only.
. "$(dirname "$0")/lib.sh"
need_root
need_users daemon

mkdir -p "$tmp/pub" "$tmp/dhome" && chmod 0755 "$tmp/pub" || fail "directories"
chown "$duid:$dgid" "$tmp/dhome" && chmod 0700 "$tmp/dhome" || fail "daemon's home"
unique_copy "$WL/split603010" "$tmp/pub/public" >/dev/null || fail "copy"
unique_copy "$WL/split603010" "$tmp/dhome/home" >/dev/null || fail "copy"
chown "$duid:$dgid" "$tmp/dhome/home" || fail "chown home"
unique_copy "$WL/split603010" "$tmp/pub/xonly" >/dev/null && chmod 0711 "$tmp/pub/xonly" || fail "copy"
unique_copy "$WL/split603010" "$tmp/pub/deleted" >/dev/null || fail "copy"
as_nobody test -r "$tmp/pub/xonly" && fail "nobody can read xonly"
as_nobody test -r "$tmp/dhome/home" && fail "nobody can read daemon's home"

start_daemon
as_member "$STROBE" start --sample-event cpu-clock -F 1000 --name private >"$tmp/id" 2>"$tmp/err" ||
	fail "start as a member: $(cat "$tmp/err")"
db_lock_hold 60
"$tmp/pub/public" 1 || fail "public"
as_other "$tmp/dhome/home" 1 || fail "home"
as_nobody "$tmp/pub/xonly" 1 || fail "xonly"
"$tmp/pub/deleted" --unlink-self 1 || fail "deleted"
[ -e "$tmp/pub/deleted" ] && fail "deleted did not unlink itself"
[ -e "$tmp/unlocked" ] && fail "the lock was released (after 60 s) before the four exited: the test tests nothing"
# ingest has not seen them (WAL: a reader does not wait for the writer)
n=$(sqlite3 -readonly "$STROBE_DB" "SELECT count(*) FROM binaries WHERE path LIKE '$tmp/%'") ||
	fail "reading binaries during the stall"
[ "$n" = 0 ] || fail "ingest saw $n of the four binaries before the lock was released: the test tests nothing"
echo "# all four exited with ingest stalled (no binaries row of theirs yet)"
db_lock_release
as_member "$STROBE" stop >"$tmp/stop" 2>&1 || fail "stop: $(cat "$tmp/stop")"
stop_daemon || fail "strobed did not exit cleanly"

"$STROBE" report --format csv >"$tmp/root.csv" 2>"$tmp/root.err" || fail "report as root: $(cat "$tmp/root.err")"
as_member "$STROBE" report --format csv >"$tmp/member.csv" 2>"$tmp/member.err" ||
	fail "report as a member: $(cat "$tmp/member.err")"
as_other "$STROBE" report --format csv >"$tmp/daemon.csv" 2>"$tmp/daemon.err" ||
	fail "report as daemon: $(cat "$tmp/daemon.err")"

# named FILE CSV: FILE's rows name work60/30/10, split within 5 points;
# unavailable FILE CSV: all of FILE's rows are [binary unavailable]
check() {
	python3 - "$@" <<'PY'
import csv, sys
what, path, f = sys.argv[1:4]
rows = [r for r in csv.DictReader(open(f)) if r["binary"] in (path, path + " (deleted)")]
assert rows, f"no samples in {path} ({f})"
s = {r["symbol"]: int(r["samples"]) for r in rows}
tot = sum(s.values())
if what == "named":
    w = sum(s.get(x, 0) for x in ("work60", "work30", "work10"))
    assert w >= 20 and w >= 0.9 * tot, f"{path} in {f}: only {w} of {tot} named: {s}"
    # within 4 standard deviations of a binomial share, plus a point
    for fn, want in (("work60", 60), ("work30", 30), ("work10", 10)):
        tol = 400.0 * (want / 100 * (1 - want / 100) / w) ** 0.5 + 1
        got = 100.0 * s.get(fn, 0) / w
        assert abs(got - want) <= tol, f"{path} in {f}: {fn} {got:.1f}%, not {want}+-{tol:.1f}"
else:
    assert set(s) == {"[binary unavailable]"}, f"{path} named in {f}: {s}"
print(f"{f.rsplit('/', 1)[1]}: {path.rsplit('/', 1)[1]} {what} ({tot} samples)")
PY
}
for b in pub/public dhome/home pub/xonly pub/deleted; do
	check named "$tmp/$b" "$tmp/root.csv" || fail "root's report: $b"
done
check named "$tmp/pub/public" "$tmp/member.csv" || fail "member's report: public"
for b in dhome/home pub/xonly pub/deleted; do
	check unavailable "$tmp/$b" "$tmp/member.csv" || fail "member's report: $b"
	grep -q "note: $tmp/$b.*cached copy is root's only" "$tmp/member.err" ||
		fail "no note on $b for the member: $(cat "$tmp/member.err")"
done
check named "$tmp/dhome/home" "$tmp/daemon.csv" || fail "daemon's report: its own home"
check unavailable "$tmp/pub/xonly" "$tmp/daemon.csv" || fail "daemon's report: xonly"
ok "reports name only what the reader could read"

# the entries themselves
key_of() {
	python3 -c '
import csv, sys
ks = {r["build_id"] for r in csv.DictReader(open(sys.argv[1])) if r["binary"] in (sys.argv[2], sys.argv[2] + " (deleted)")}
assert len(ks) == 1, ks
k = ks.pop()
p, h = k.split(":", 1) if ":" in k else ("buildid", k)
print(f"{p}/{h[:2]}/{h[2:]}")' "$tmp/root.csv" "$1"
}
for b in pub/public dhome/home pub/xonly pub/deleted; do
	e=$STROBE_DB.cache/$(key_of "$tmp/$b") || fail "key of $b"
	[ -f "$e" ] || fail "no cache entry for $b"
	m=$(stat -c %a "$e")
	case $b in
	pub/public) [ "$m" = 640 ] || fail "public's entry is mode $m, not 640"
		as_member cat "$e" >/dev/null || fail "a member cannot read public's entry" ;;
	*) [ "$m" = 600 ] || fail "$b's entry is mode $m, not 600"
		as_member cat "$e" >/dev/null 2>&1 && fail "a member can read $b's entry" ;;
	esac
	echo "$b: entry mode $m"
done
ok "cache entries: shared only when everyone could read the file"

# the original replaced (another build-id): daemon's report no longer uses it
unique_copy "$tmp/dhome/home" "$tmp/dhome/new" >/dev/null && chown "$duid:$dgid" "$tmp/dhome/new" &&
	mv "$tmp/dhome/new" "$tmp/dhome/home" || fail "replacing home"
as_other "$STROBE" report --format csv >"$tmp/daemon2.csv" 2>"$tmp/daemon2.err" || fail "report as daemon"
check unavailable "$tmp/dhome/home" "$tmp/daemon2.csv" || fail "daemon's report used a changed file"
grep -q "the file there now is another" "$tmp/daemon2.err" || fail "no note on the changed file: $(cat "$tmp/daemon2.err")"
ok "a replaced original is not used"

# kallsyms snapshot
kr=$(cat /proc/sys/kernel/kptr_restrict)
ks=$(sqlite3 -readonly "$STROBE_DB" "SELECT kallsyms_key FROM sessions ORDER BY id DESC LIMIT 1")
[ -n "$ks" ] || fail "no kallsyms snapshot"
h=${ks#kallsyms:}
m=$(stat -c %a "$STROBE_DB.cache/kallsyms/$(echo "$h" | cut -c1-2)/$(echo "$h" | cut -c3-)") || fail "kallsyms entry"
if [ "$kr" = 0 ]; then want=640; else want=600; fi
[ "$m" = "$want" ] || fail "kallsyms snapshot mode $m with kptr_restrict $kr, want $want"
ok "kallsyms snapshot mode $m with kptr_restrict $kr"

# kptr_restrict 1: the snapshot becomes root's
[ -w /proc/sys/kernel/kptr_restrict ] && echo "$kr" >/proc/sys/kernel/kptr_restrict 2>/dev/null ||
	{ echo "kptr_restrict cannot be changed here: only $kr was checked"; exit 0; }
trap 'echo "$kr" >/proc/sys/kernel/kptr_restrict; cleanup' EXIT
echo 1 >/proc/sys/kernel/kptr_restrict || fail "setting kptr_restrict"
start_daemon
"$STROBE" start --sample-event cpu-clock -F 1000 --name restricted >/dev/null || fail "start"
"$WL/kernwork" 1 >/dev/null 2>&1 || fail "kernwork"
"$STROBE" stop >/dev/null || fail "stop"
echo "$kr" >/proc/sys/kernel/kptr_restrict
stop_daemon || fail "strobed did not exit cleanly"
ks=$(sqlite3 -readonly "$STROBE_DB" "SELECT kallsyms_key FROM sessions ORDER BY id DESC LIMIT 1")
h=${ks#kallsyms:}
m=$(stat -c %a "$STROBE_DB.cache/kallsyms/$(echo "$h" | cut -c1-2)/$(echo "$h" | cut -c3-)") || fail "kallsyms entry"
[ "$m" = 600 ] || fail "kallsyms snapshot mode $m with kptr_restrict 1, want 600"
"$STROBE" report --kernel --format csv >"$tmp/kr.csv" 2>"$tmp/kr.err" || fail "root's kernel report"
grep -q "root's only" "$tmp/kr.err" && fail "root's kernel report: $(cat "$tmp/kr.err")"
as_member "$STROBE" report --kernel --format csv >"$tmp/k.csv" 2>"$tmp/k.err" || fail "member's kernel report: $(cat "$tmp/k.err")"
grep -q "kernel symbols are root's only" "$tmp/k.err" || fail "no note on kernel symbols: $(cat "$tmp/k.err")"
ok "kallsyms snapshot root's with kptr_restrict 1; members told so"
