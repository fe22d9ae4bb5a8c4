#!/bin/sh
# t0230-bad-db: databases strobe must not trust are refused in one line,
# exit 1, and left byte for byte as they were: another program's SQLite
# file ("not a strobe database", from report, sessions, strobed and record),
# a strobe database with a newer schema ("newer than this strobe"), random
# bytes and a real strobe database with its middle overwritten ("corrupt":
# strobed checks the whole file before writing to it; report says so as
# soon as it reads a damaged page; no crash, exit 1 and not a signal), a
# missing file, and a session number that does not exist.
. "$(dirname "$0")/lib.sh"
need_root
command -v sqlite3 >/dev/null || skip "sqlite3 is not installed"

# refused_by WHO ERE CMD...: CMD exits 1 with exactly one line on stderr,
# starting "WHO: " and matching ERE.
refused_by() {
	who=$1 re=$2
	shift 2
	"$@" >"$tmp/out" 2>"$tmp/err"
	rc=$?
	[ "$rc" = 1 ] || fail "'$*' exited $rc, not 1: $(cat "$tmp/err")"
	[ "$(wc -l <"$tmp/err")" = 1 ] || fail "'$*' did not print exactly one line on stderr: $(cat "$tmp/err")"
	grep -q "^$who: " "$tmp/err" || fail "'$*': stderr does not start with '$who: ': $(cat "$tmp/err")"
	grep -Eq -- "$re" "$tmp/err" || fail "'$*': stderr does not match /$re/: $(cat "$tmp/err")"
}

sum() { sha256sum <"$1"; }

# everything that opens a database refuses DB, which must not change
all_refuse() {
	db=$1 re=$2 s0=$(sum "$1")
	refused_by "strobe report" "$re" "$STROBE" report --db "$db"
	refused_by "strobe sessions" "$re" "$STROBE" sessions --db "$db"
	refused_by strobed "$re" "$STROBED" --foreground --db "$db" --socket "$tmp/bad.sock"
	refused_by "strobe record" "$re" "$STROBE" record --db "$db" --sample-event cpu-clock -- true
	[ "$(sum "$db")" = "$s0" ] || fail "$db changed"
	[ -s "$db-wal" ] && fail "$db got a non-empty WAL file"
	return 0
}

# (a) another program's database
sqlite3 "$tmp/other.db" "CREATE TABLE notes(id INTEGER PRIMARY KEY, text TEXT);
	INSERT INTO notes(text) VALUES('mine, not strobe''s');"
all_refuse "$tmp/other.db" "other.db is not a strobe database"
[ "$(sqlite3 "$tmp/other.db" 'SELECT text FROM notes')" = "mine, not strobe's" ] || fail "other.db lost its row"
ok "another program's database"

# a real strobe database to damage below
"$STROBE" record --db "$tmp/good.db" --sample-event cpu-clock -F 2000 -e page-faults -- \
	"$WL/split603010" 2 >/dev/null 2>"$tmp/rec.err" || fail "record: $(cat "$tmp/rec.err")"
"$STROBE" report --db "$tmp/good.db" --format csv >"$tmp/good.csv" 2>/dev/null || fail "report good.db"
[ -s "$tmp/good.db-wal" ] && fail "good.db still has data in its WAL after strobed exited"

# (b) a newer schema
cp "$tmp/good.db" "$tmp/new.db"
sqlite3 "$tmp/new.db" "PRAGMA user_version=99" || fail "set user_version"
all_refuse "$tmp/new.db" "new.db has schema version 99, newer than this strobe"
ok "a newer schema"

# (c) corrupt: random bytes, and a strobe database with its middle overwritten
head -c 262144 /dev/urandom >"$tmp/random.db"
all_refuse "$tmp/random.db" "random.db is corrupt"
cp "$tmp/good.db" "$tmp/mid.db"
# up to four b-tree leaf pages from the middle of the sample blocks (where the
# middle of the file is depends on the schema and the run): the raw
# samples cross them
psize=$(sqlq "$tmp/mid.db" "PRAGMA page_size")
leaves=$(sqlq "$tmp/mid.db" "SELECT pageno FROM dbstat WHERE name='sample_blocks' AND pagetype='leaf' ORDER BY pageno")
n=$(echo "$leaves" | grep -c .)
[ "$n" -ge 1 ] || fail "good.db has no leaf page of sample blocks"
first=1
[ "$n" -gt 4 ] && first=$((n / 2 - 1))
for pg in $(echo "$leaves" | sed -n "$first,$((first + 3))p"); do
	dd if=/dev/urandom of="$tmp/mid.db" bs="$psize" seek=$((pg - 1)) count=1 conv=notrunc 2>/dev/null
done
s0=$(sum "$tmp/mid.db")
# the damage is found by the quick check, or already when SQLite reads the
# schema (the random pages may hold part of it): refused either way
refused_by strobed "mid.db is corrupt.*(strobed will not write to it|move it away)" \
	"$STROBED" --foreground --db "$tmp/mid.db" --socket "$tmp/bad.sock"
refused_by "strobe record" "mid.db is corrupt" "$STROBE" record --db "$tmp/mid.db" --sample-event cpu-clock -- true
# report reads only what it needs; reading the raw samples crosses the damage
refused_by "strobe report" "mid.db is corrupt" "$STROBE" report --db "$tmp/mid.db" --from 0
"$STROBE" report --db "$tmp/mid.db" >/dev/null 2>"$tmp/err"
rc=$?
[ $rc -le 1 ] || fail "report on mid.db exited $rc: $(cat "$tmp/err")"
[ $rc = 0 ] || grep -q "corrupt" "$tmp/err" || fail "report on mid.db: $(cat "$tmp/err")"
[ "$(sum "$tmp/mid.db")" = "$s0" ] || fail "mid.db changed"
ok "corrupt databases"

# (d) a missing database, (e) a missing session
refused_by "strobe report" "/nonexistent/x.db.*No such file.*strobe record" \
	"$STROBE" report --db /nonexistent/x.db
refused_by "strobe sessions" "/nonexistent/x.db.*No such file" "$STROBE" sessions --db /nonexistent/x.db
[ -e /nonexistent ] && fail "report created /nonexistent"
refused_by "strobe report" "no session 999 in .*good.db.*strobe sessions" \
	"$STROBE" report --db "$tmp/good.db" --session 999
"$STROBE" report --db "$tmp/good.db" --format csv 2>/dev/null | cmp -s - "$tmp/good.csv" ||
	fail "the report of good.db changed"
ok "missing database and session"
