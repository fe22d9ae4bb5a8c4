#!/bin/sh
# t0160-deleted: a binary deleted after its session is still symbolised from
# strobe's cache (work60/30/10 with the 60/30/10 split within 4 standard deviations); and
# when both the file and its cached copy are gone, the report never guesses:
# its samples show as "[binary unavailable]" (no function names) and a note
# names the binary as not available, while other binaries stay named.  A
# binary deleted while it runs is copied from the mapping itself and named.
# So is a binary that unlinks its own file first thing at start (before
# strobed, which drains every ~100 ms, ingests its first mapping: only
# /proc/PID/map_files can still read it), and one whose path is replaced
# by another file (another copy of split603010, build id of its own) first
# thing at start: the report names work60/30/10 with the original's build
# id, never the replacement's.
# Each copy of split603010 gets a build-id of its own, so that no other
# process on the machine shares its cache entry or its binaries row.
. "$(dirname "$0")/lib.sh"
need_root


# split_ok CSV NAME BUILDID MIN: rows of binary .../NAME carry BUILDID and
# work60/30/10 (>= MIN samples) split 60/30/10 within 4 standard deviations
split_ok() {
	python3 - "$@" <<'PY'
import csv, os, sys
f, name, bid, least = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
rows = [r for r in csv.DictReader(open(f)) if r["binary"] == os.environ["STROBE_TEST_TMP"] + "/" + name]
ids = {r["build_id"] for r in rows}
assert ids == {bid}, f"build ids of {name}: {ids}, want {bid}"
s = {r["symbol"]: int(r["samples"]) for r in rows}
tot = sum(s.get(f, 0) for f in ("work60", "work30", "work10"))
assert tot >= least, f"only {tot} samples in work60/30/10 (rows: {s})"
assert tot >= 0.9 * sum(s.values()), f"only {tot} of {sum(s.values())} samples named work60/30/10"
# within 4 standard deviations of a binomial share of tot samples, plus a
# point (on a busy machine the victim gets fewer samples, and a fixed 3
# points is then too tight)
for fn, want in (("work60", 60), ("work30", 30), ("work10", 10)):
    got = 100.0 * s.get(fn, 0) / tot
    tol = 400.0 * (want / 100 * (1 - want / 100) / tot) ** 0.5 + 1
    print(f"{name}: {fn} {got:.2f}% (want {want}±{tol:.1f}, {tot} samples)")
    assert abs(got - want) <= tol, f"{fn} is {got:.2f}%, not {want}±{tol:.1f}"
PY
}

bid1=$(unique_copy "$WL/split603010" "$tmp/victim") || fail "copying split603010"
"$STROBE" record --sample-event cpu-clock -F 1000 --name victim \
	-- "$tmp/victim" 3 2>"$tmp/record.err" || fail "record: $(cat "$tmp/record.err")"
grep -q "samples, 0 lost" "$tmp/record.err" || fail "record summary: $(cat "$tmp/record.err")"
s1=$(grep -o 'session [0-9]*' "$tmp/record.err" | cut -d' ' -f2)
rm "$tmp/victim"
[ -e "$tmp/victim" ] && fail "victim not deleted"

"$STROBE" report --comm victim --format csv >"$tmp/r.csv" 2>"$tmp/r.err" || fail "report"
grep -q "not available" "$tmp/r.err" && fail "cached copy not used: $(cat "$tmp/r.err")"
split_ok "$tmp/r.csv" victim "$bid1" 1000 || fail "60/30/10 split of a deleted binary"
ok "deleted binary still named (build id $bid1)"

# Now the cached copy goes too.  The cache entry of key "buildid:HEX" (the
# CSV's build_id column shows HEX) or "xxh3:HEX" (the CSV shows the whole
# key) is the file $STROBE_DB.cache/PREFIX/HE/X... (lib/symbols/bincache.c).
bid2=$(unique_copy "$WL/split603010" "$tmp/victim2") || fail "copying split603010"
"$STROBE" record --sample-event cpu-clock -F 1000 --name victim2 \
	-- "$tmp/victim2" 1 2>"$tmp/record2.err" || fail "record: $(cat "$tmp/record2.err")"
"$STROBE" report --comm victim2 --format csv >"$tmp/before.csv" || fail "report"
key=$(python3 -c '
import csv, os, sys
ids = {r["build_id"] for r in csv.DictReader(open(sys.argv[1])) if r["binary"] == os.environ["STROBE_TEST_TMP"] + "/victim2"}
assert len(ids) == 1, ids
print(ids.pop())' "$tmp/before.csv") || fail "no single build id for victim2: $(cat "$tmp/before.csv")"
[ "$key" = "$bid2" ] || fail "CSV build id $key, readelf says $bid2"
case $key in
*:*) prefix=${key%%:*} hex=${key#*:} ;;
*) prefix=buildid hex=$key ;;
esac
entry=$STROBE_DB.cache/$prefix/$(echo "$hex" | cut -c1-2)/$(echo "$hex" | cut -c3-)
[ -f "$entry" ] || fail "no cache entry $entry: $(find "$STROBE_DB.cache" -type f | head)"
rm "$tmp/victim2" "$entry" || fail "rm"

"$STROBE" report --comm victim2 --format csv >"$tmp/r2.csv" 2>"$tmp/r2.err" ||
	fail "report without the binary: $(cat "$tmp/r2.err")"
cat "$tmp/r2.err"
python3 - "$tmp/r2.csv" <<'PY' || fail "an unavailable binary was named"
import csv, os, sys
rows = list(csv.DictReader(open(sys.argv[1])))
tot = sum(int(r["samples"]) for r in rows)
mine = [r for r in rows if r["binary"] == os.environ["STROBE_TEST_TMP"] + "/victim2"]
una = sum(int(r["samples"]) for r in mine if r["symbol"] == "[binary unavailable]")
bad = {r["symbol"] for r in mine if r["symbol"] != "[binary unavailable]"}
print(f"victim2: {tot} samples, {una} [binary unavailable]")
assert not bad, f"symbols named without the binary: {bad}"
assert una >= 200 and una >= 0.9 * tot, f"only {una} of {tot} samples unavailable"
assert not any(r["symbol"] in ("work60", "work30", "work10") for r in rows)
PY
grep -q "note: .*victim2.*$bid2.*not available" "$tmp/r2.err" ||
	fail "no note naming victim2 as unavailable: $(cat "$tmp/r2.err")"
"$STROBE" report --comm victim2 >"$tmp/r2.txt" || fail "text report"
grep -q "^# note: .*victim2.*not available" "$tmp/r2.txt" || fail "text report lacks the note"
grep -q "work60" "$tmp/r2.txt" && fail "text report names work60"
# the first session's binary (another cache entry) is still named
"$STROBE" report --session "$s1" --comm victim --format csv >"$tmp/r1b.csv" 2>"$tmp/r1b.err" ||
	fail "report of session $s1"
grep -q "not available" "$tmp/r1b.err" && fail "session $s1 lost its binary: $(cat "$tmp/r1b.err")"
split_ok "$tmp/r1b.csv" victim "$bid1" 1000 >/dev/null || fail "session $s1 no longer named"
ok "missing binary shown as [binary unavailable] with a note"

# Deleted while it runs: strobed copies the mapped file itself, so it is named.
bid3=$(unique_copy "$WL/split603010" "$tmp/victim3") || fail "copying split603010"
"$STROBE" record --sample-event cpu-clock -F 1000 --name victim3 \
	-- sh -c "\"$tmp/victim3\" 2 & sleep 0.5; rm \"$tmp/victim3\"; wait" \
	2>"$tmp/record3.err" || fail "record: $(cat "$tmp/record3.err")"
[ -e "$tmp/victim3" ] && fail "victim3 not deleted"
"$STROBE" report --comm victim3 --format csv >"$tmp/r3.csv" 2>"$tmp/r3.err" || fail "report"
grep -q "not available" "$tmp/r3.err" && fail "binary deleted while running: $(cat "$tmp/r3.err")"
python3 - "$tmp/r3.csv" "$bid3" <<'PY' || fail "binary deleted while running not named"
import csv, os, sys
rows = [r for r in csv.DictReader(open(sys.argv[1])) if r["binary"] == os.environ["STROBE_TEST_TMP"] + "/victim3"]
assert {r["build_id"] for r in rows} == {sys.argv[2]}, "build id of victim3"
s = {r["symbol"]: int(r["samples"]) for r in rows}
w = [s.get(f, 0) for f in ("work60", "work30", "work10")]
print(f"victim3: {sum(s.values())} samples, work60/30/10 = {w}")
assert sum(w) >= 500, f"only {sum(w)} samples in work60/30/10 (rows: {s})"
assert sum(w) >= 0.9 * sum(s.values()), f"only {sum(w)} of {sum(s.values())} named work60/30/10"
assert w[0] > w[1] > w[2] > 0, f"work60 > work30 > work10 does not hold: {w}"
PY
ok "binary deleted while running named from its mapping"

# rec_self NAME ARGS...: record $tmp/NAME ARGS (its pid in $tmp/NAME.pid),
# report that pid as $tmp/NAME.csv
rec_self() {
	name=$1
	shift
	"$STROBE" record --sample-event cpu-clock -F 1000 --name "$name" \
		-- sh -c "echo \$\$ >\"$tmp/$name.pid\"; exec \"$tmp/$name\" $*" \
		2>"$tmp/$name.err" || fail "record $name: $(cat "$tmp/$name.err")"
	grep -q "samples, 0 lost" "$tmp/$name.err" || fail "record summary: $(cat "$tmp/$name.err")"
	"$STROBE" report --pid "$(cat "$tmp/$name.pid")" --limit 0 --format csv \
		>"$tmp/$name.csv" 2>"$tmp/$name.rerr" || fail "report $name: $(cat "$tmp/$name.rerr")"
	grep -q "not available" "$tmp/$name.rerr" && fail "$name not available: $(cat "$tmp/$name.rerr")"
	return 0
}

# Deleted by itself before strobed could have read the path
bid4=$(unique_copy "$WL/split603010" "$tmp/victim4") || fail "copying split603010"
rec_self victim4 --unlink-self 2
[ -e "$tmp/victim4" ] && fail "victim4 did not delete itself"
split_ok "$tmp/victim4.csv" victim4 "$bid4" 500 || fail "binary deleted before its first sample not named"
ok "binary deleted before strobed saw it named from its mapping (build id $bid4)"

# Replaced at its path by another file before strobed could have read it
bid5=$(unique_copy "$WL/split603010" "$tmp/victim5") || fail "copying split603010"
bid6=$(unique_copy "$WL/split603010" "$tmp/other") || fail "copying split603010"
rec_self victim5 --replace-self "$tmp/other" 2
[ -e "$tmp/other" ] && fail "victim5 did not replace itself"
python3 -c 'import sys; sys.exit(bytes.fromhex(sys.argv[2]) not in open(sys.argv[1], "rb").read())' \
	"$tmp/victim5" "$bid6" ||
	fail "the file at victim5's path is not the replacement"
grep -q "$bid6" "$tmp/victim5.csv" && fail "the replacement's build id $bid6 is in the report: $(cat "$tmp/victim5.csv")"
split_ok "$tmp/victim5.csv" victim5 "$bid5" 500 || fail "binary replaced before its first sample not named as the original"
ok "binary replaced at its path before strobed saw it named as the original (build id $bid5, not $bid6)"
