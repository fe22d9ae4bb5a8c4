#!/bin/sh
# t0265-uncertain: processes whose maps may be wrong, records out of time
# order (issue 11).  On the hand-made database of t0260
# (tests/data/export-fixture.sql): a session with lost records and
# processes.uncertain_ns set (schema 9) makes 'strobe report' warn, naming
# those processes (their names printable only), in the header and on
# stderr for CSV; without such rows, no warning, and the report's CSV is
# unchanged by the marks.  sessions.late_records makes it warn with the
# count and the largest lateness; a session without lost records but with
# late ones names its uncertain processes too.  report --pid of a pid that
# two processes had notes it, with their PID@START labels (t0145 checks
# that their rows are kept apart).
. "$(dirname "$0")/lib.sh"
command -v sqlite3 >/dev/null || skip "sqlite3 is not installed"

fx=$tmp/fx.db
nschema=$(ls "$top"/schema/[0-9][0-9][0-9]-*.sql | wc -l)
{
	cat "$top"/schema/[0-9][0-9][0-9]-*.sql
	echo "PRAGMA application_id=1398035023; PRAGMA user_version=$nschema;"
	sed -e "s/@W60@/0x100/g" -e "s/@W30@/0x200/g" -e "s/@W10@/0x300/g" \
		"$top/tests/data/export-fixture.sql"
} | sqlq -bail "$fx" || fail "building the fixture database"
R() { "$STROBE" report --db "$fx" --session 1 --by binary "$@"; }

R >"$tmp/before.txt" 2>"$tmp/err" || fail "report: $(cat "$tmp/err")"
grep -q "WARNING: 3 samples lost" "$tmp/before.txt" || fail "no lost warning: $(cat "$tmp/before.txt")"
grep -q "may be wrong" "$tmp/before.txt" && fail "uncertain warning without marks"
R --format csv >"$tmp/before.csv" 2>/dev/null || fail "report csv"
ok "no marks, no warning"

sqlite3 "$fx" "UPDATE processes SET uncertain_ns = 1000001000000 WHERE pid = 200;
	UPDATE processes SET uncertain_ns = 1000007000000 WHERE pid = 300;
	UPDATE comms SET name = 'bad' || char(27) || '[31m' WHERE id = 5;" ||
	fail "marking processes"
R >"$tmp/after.txt" 2>"$tmp/err" || fail "report: $(cat "$tmp/err")"
grep "may be wrong" "$tmp/after.txt" >"$tmp/w" || fail "no warning: $(cat "$tmp/after.txt")"
grep -q "^# WARNING: the maps of 2 processes (pid 200 (we,ird \"name\"), pid 300 (bad?\[31m)) may be wrong" \
	"$tmp/w" || fail "warning: $(cat "$tmp/w")"
R --format csv >"$tmp/after.csv" 2>"$tmp/err" || fail "report csv"
grep -q "strobe report: WARNING: .*maps of 2 processes" "$tmp/err" || fail "csv stderr: $(cat "$tmp/err")"
cmp -s "$tmp/before.csv" "$tmp/after.csv" || fail "the CSV changed"
ok "marked processes named in the warning, CSV unchanged"

grep -q "out of time order" "$tmp/after.txt" && fail "late warning without late records"
sqlite3 "$fx" "UPDATE sessions SET late_records = 4, late_max_ns = 7500000, lost = 0 WHERE id = 1;
	DELETE FROM lost; UPDATE session_cpus SET lost = 0;" || fail "late records"
R >"$tmp/late.txt" 2>"$tmp/err" || fail "report: $(cat "$tmp/err")"
grep -q "^# WARNING: 4 records reached strobed more than the merge horizon late (up to 7.500 ms)" \
	"$tmp/late.txt" || fail "late warning: $(cat "$tmp/late.txt")"
grep -q "^# WARNING: the maps of 2 processes" "$tmp/late.txt" || fail "uncertain with late: $(cat "$tmp/late.txt")"
grep -q "samples lost" "$tmp/late.txt" && fail "lost warning without lost"
ok "late records counted in the warnings"

# --- a pid used by two processes: --pid says so, and shows them apart
R --pid 100 >"$tmp/pid.txt" 2>&1 || fail "report --pid"
grep -q "was 2 processes" "$tmp/pid.txt" && fail "note with one process"
sqlite3 "$fx" "INSERT INTO processes (session_id, pid, ppid, comm_id, start_ns, exit_ns)
	VALUES (1, 100, NULL, 1, 1000008500000, NULL);" || fail "second process"
R --pid 100 >"$tmp/pid.txt" 2>&1 || fail "report --pid"
grep -q "^# note: pid 100 was 2 processes in this session (100@0.000, 100@0.009, as PID@START seconds): rows are per process" \
	"$tmp/pid.txt" || fail "pid reuse note: $(cat "$tmp/pid.txt")"
R --pid 200 >"$tmp/pid.txt" 2>&1 || fail "report --pid 200"
grep -q "processes in this session" "$tmp/pid.txt" && fail "note for pid 200"
ok "--pid of a reused pid says so"
