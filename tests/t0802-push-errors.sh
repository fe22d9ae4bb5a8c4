#!/bin/sh
# t0802-push-errors: 'strobe push' refuses bad input in one line on stderr
# and exit 1 (2 for usage errors), and changes nothing on the servers: an
# unreachable server, a wrong password (never echoed, nor the right one),
# a database with no strobe schema, one with another schema version, a
# session already pushed with other content, a password file others may
# read, credentials in the URL, and a bad URL, session or option.
. "$(dirname "$0")/lib.sh"
need_root
. "$(dirname "$0")/clickhouse.sh"

ch_fleet

"$STROBE" record --db "$tmp/a.db" --sample-event cpu-clock -F 999 -- "$WL/split603010" 1 \
	>/dev/null 2>"$tmp/rec.err" || fail "record a: $(cat "$tmp/rec.err")"
"$STROBE" record --db "$tmp/b.db" --sample-event cpu-clock -F 999 -- "$WL/split603010" 1 \
	>/dev/null 2>"$tmp/rec.err" || fail "record b: $(cat "$tmp/rec.err")"
"$STROBE" push --db "$tmp/a.db" --to "$url" --host hostx >/dev/null 2>"$tmp/err" ||
	fail "the first push failed: $(cat "$tmp/err")"

# a copy of a.db given 40 lost rows, pushed as hostm in batches of 4 rows
# (10 batches more than a.db makes): a.db pushed as hostm is refused below
for f in "$tmp"/a.db*; do
	cp -a "$f" "$tmp/m.db${f#"$tmp/a.db"}" || fail "copy $f"
done
python3 - "$tmp/m.db" <<'PY' || fail "adding lost rows"
import sqlite3, sys
db = sqlite3.connect(sys.argv[1])
start, = db.execute("SELECT start_ns FROM sessions WHERE id = 1").fetchone()
for i in range(40):
    db.execute("INSERT INTO lost (session_id, cpu, time_ns, count, kind) VALUES (1, 0, ?, 1, 'ring')",
               (start + 1000 * i,))
db.commit()
PY
STROBE_PUSH_BATCH_ROWS=4 "$STROBE" push --db "$tmp/m.db" --to "$url" --host hostm >/dev/null 2>"$tmp/err" ||
	fail "push m: $(cat "$tmp/err")"

state() {
	for n in 1 2; do ch_parts $n "database, table" "database LIKE 'strobe%'"; done
}
state >"$tmp/state0"

# an unreachable server: a port nothing listens on
port=$(ch_free_port)
refused 1 push "cannot reach ClickHouse at http://127.0.0.1:$port/: .*check the URL" \
	"$STROBE" push --db "$tmp/b.db" --to "http://127.0.0.1:$port/?database=strobe" --host hosty
ok "unreachable: $(cat "$tmp/err")"

# a wrong password: said so, and neither password shown
STROBE_CLICKHOUSE_PASSWORD=wrong-Secret-42 refused 1 push \
	"refused user 'default': .*(Wrong password|[Pp]assword).*STROBE_CLICKHOUSE_PASSWORD" \
	"$STROBE" push --db "$tmp/b.db" --to "$url" --host hosty
grep -q "wrong-Secret-42" "$tmp/err" && fail "the wrong password is in the message"
grep -qF "$CH_PASSWORD" "$tmp/err" && fail "the password is in the message"
ok "wrong password: $(cat "$tmp/err")"

# the password from a file: one others may read is refused, a private one works
printf 'wrong-Secret-42\n' >"$tmp/pw"
chmod 644 "$tmp/pw"
STROBE_CLICKHOUSE_PASSWORD_FILE=$tmp/pw refused 1 push "may be read by others.*chmod 600" \
	env -u STROBE_CLICKHOUSE_PASSWORD "$STROBE" push --db "$tmp/b.db" --to "$url" --host hosty
printf '%s\n' "$CH_PASSWORD" >"$tmp/pw"
chmod 600 "$tmp/pw"
STROBE_CLICKHOUSE_PASSWORD_FILE=$tmp/pw env -u STROBE_CLICKHOUSE_PASSWORD \
	"$STROBE" push --db "$tmp/a.db" --to "$url" --host hostx >"$tmp/out" 2>"$tmp/err" ||
	fail "push with a private password file: $(cat "$tmp/err")"
grep -q "already pushed" "$tmp/out" || fail "push with a password file said: $(cat "$tmp/out")"
ok "password file: refused when others may read it, used when private"

# a database with no strobe schema, and one with another version
ch_q 1 "CREATE DATABASE strobe_empty"
refused 1 push "no strobe schema in that database.*schema/clickhouse" \
	"$STROBE" push --db "$tmp/b.db" --to "$(ch_url 1 strobe_empty)" --host hosty
ok "no schema: $(cat "$tmp/err")"
ch_q 1 "CREATE DATABASE strobe_v2"
ch_q 1 "CREATE TABLE strobe_v2.schema_version (version UInt32, applied DateTime DEFAULT now()) ENGINE = MergeTree ORDER BY version"
ch_q 1 "INSERT INTO strobe_v2.schema_version (version) VALUES (1), (99)"
refused 1 push "schema version 99, this strobe writes version [0-9]" \
	"$STROBE" push --db "$tmp/b.db" --to "$(ch_url 1 strobe_v2)" --host hosty
ok "another schema version: $(cat "$tmp/err")"
state >"$tmp/state_v"
ch_q 1 "DROP DATABASE strobe_v2"
ch_q 1 "DROP DATABASE strobe_empty"

# the same (host, session) with other content
refused 1 push "session 1 of host hostx is already in ClickHouse with other content" \
	"$STROBE" push --db "$tmp/b.db" --to "$url" --host hostx
ok "other content: $(cat "$tmp/err")"
# and when the session there has more batches than this push makes (m.db,
# pushed at the start): still "other content"
refused 1 push "session 1 of host hostm is already in ClickHouse with other content" \
	"$STROBE" push --db "$tmp/a.db" --to "$url" --host hostm
ok "other content, fewer batches here: $(cat "$tmp/err")"

# a running session: refused when named, left out otherwise
start_daemon
"$STROBE" start --sample-event cpu-clock -F 99 >"$tmp/id" 2>"$tmp/start.err" ||
	fail "start: $(cat "$tmp/start.err")"
id=$(grep -o '[0-9][0-9]*' "$tmp/id" | head -n 1)
refused 1 push "session $id is running: push it once it has stopped" \
	"$STROBE" push --db "$STROBE_DB" --to "$url" --host hostz --session "$id"
"$STROBE" push --db "$STROBE_DB" --to "$url" --host hostz >"$tmp/out" 2>"$tmp/err" ||
	fail "push of a database whose only session runs: $(cat "$tmp/err")"
grep -q "^pushed 0 of 0 sessions" "$tmp/out" || fail "push of a running session's database said: $(cat "$tmp/out")"
"$STROBE" stop >/dev/null 2>&1 || fail "stop"
stop_daemon
ok "a running session: refused when named, left out otherwise"

# usage errors (exit 2)
refused 2 push "no credentials in the URL" \
	"$STROBE" push --db "$tmp/b.db" --to "http://default:pw@127.0.0.1:1/?database=strobe"
refused 2 push "bad URL" "$STROBE" push --db "$tmp/b.db" --to "ftp://127.0.0.1/"
refused 2 push "unknown parameter 'user=x'" "$STROBE" push --db "$tmp/b.db" --to "$url&user=x"
refused 2 push "bad session 'x'" "$STROBE" push --db "$tmp/b.db" --to "$url" --session x
refused 2 push "no --to URL" "$STROBE" push --db "$tmp/b.db"
refused 2 push "unknown option '--password'" "$STROBE" push --db "$tmp/b.db" --to "$url" --password x
refused 2 push "bad --since" "$STROBE" push --db "$tmp/b.db" --to "$url" --since yesterday
refused 1 push "no session 7|session 7" "$STROBE" push --db "$tmp/b.db" --to "$url" --session 7
ok "usage errors: exit 2, one line each"

state >"$tmp/state1"
cmp -s "$tmp/state0" "$tmp/state1" || fail "the refused pushes changed the servers: $(diff "$tmp/state0" "$tmp/state1")"
ok "nothing changed on the servers"
exit 0
