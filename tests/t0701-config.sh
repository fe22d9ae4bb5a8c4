#!/bin/sh
# t0701-config: strobed's configuration file (dist/strobed.conf's format).
# strobed started with --config FILE setting db, socket and backend=perf
# listens where the file says and writes that database; the strobe CLI,
# with STROBE_CONFIG naming the same file and no STROBE_DB/STROBE_SOCKET,
# finds that strobed and that database (status, record, sessions, report).
# strobed's options override the file, and STROBE_SOCKET the CLI's value
# from it.  A key takes effect (backend = driver without /dev/strobe is
# refused as --backend driver is).  Refused, each with exit 2 and exactly
# one stderr line naming FILE:LINE (or the file): an unknown key, a bad
# value (the option's own message), a missing --config file, a missing
# STROBE_CONFIG file, a line without '=', a duplicate key, an overlong line,
# a file others may write; the CLI refuses a malformed file the same way.
. "$(dirname "$0")/lib.sh"
need_root
unset STROBE_DB STROBE_SOCKET
conf=$tmp/strobed.conf
db=$tmp/conf.db
sock=$tmp/conf.sock
cat >"$conf" <<EOF2
# test configuration
db = $db

   socket=$sock
backend = perf
ingest-nice = 10
EOF2
chmod 0644 "$conf"

# refused_d RC ERE CMD...: CMD exits RC with exactly one stderr line,
# "PROG: ..." matching ERE
refused_d() {
	want=$1 re=$2
	shift 2
	"$@" >"$tmp/out" 2>"$tmp/err" </dev/null
	rc=$?
	[ "$rc" = "$want" ] || fail "'$*' exited $rc, not $want: $(cat "$tmp/err")"
	[ "$(wc -l <"$tmp/err")" = 1 ] || fail "'$*' did not print exactly one stderr line: $(cat "$tmp/err")"
	grep -Eq -- "$re" "$tmp/err" || fail "'$*': stderr does not match /$re/: $(cat "$tmp/err")"
	ok "$(cat "$tmp/err")"
}

"$STROBED" --foreground --config "$conf" 2>"$tmp/strobed.log" &
daemon_pid=$!
wait_socket "$sock" "$tmp/strobed.log"
grep -q "listening on $sock, database $db, backend perf" "$tmp/strobed.log" ||
	fail "strobed's start line does not name the file's socket, database and backend: $(cat "$tmp/strobed.log")"
ok "strobed --config: socket, db and backend from the file"

export STROBE_CONFIG="$conf"
"$STROBE" status >"$tmp/status" 2>&1 || fail "strobe status with STROBE_CONFIG: $(cat "$tmp/status")"
grep -q "database $db" "$tmp/status" || fail "status names another database: $(cat "$tmp/status")"
ok "strobe status finds strobed through STROBE_CONFIG's socket"
"$STROBE" record --sample-event cpu-clock -F 1000 --name fromconf -- "$WL/split603010" 1 \
	>/dev/null 2>"$tmp/rec.err" || fail "record: $(cat "$tmp/rec.err")"
grep -q "session 1 started by uid 0" "$tmp/strobed.log" ||
	fail "record did not use the strobed on the file's socket: $(cat "$tmp/strobed.log")"
"$STROBE" sessions >"$tmp/sessions" 2>&1 || fail "sessions: $(cat "$tmp/sessions")"
grep -q fromconf "$tmp/sessions" || fail "the session is not in the file's database: $(cat "$tmp/sessions")"
"$STROBE" report --session 1 --format csv >"$tmp/r.csv" 2>"$tmp/r.err" || fail "report: $(cat "$tmp/r.err")"
grep -q "^$WL/split603010,[^,]*,work60," "$tmp/r.csv" || fail "report of the file's database lacks work60: $(head "$tmp/r.csv")"
ok "record, sessions and report use the file's socket and database"

# the environment and options override the file, for the CLI
STROBE_SOCKET=$tmp/elsewhere.sock "$STROBE" status >"$tmp/status" 2>&1 &&
	fail "STROBE_SOCKET did not override the file's socket: $(cat "$tmp/status")"
grep -q "elsewhere.sock" "$tmp/status" || fail "status did not try STROBE_SOCKET: $(cat "$tmp/status")"
"$STROBE" status --socket "$tmp/other.sock" >"$tmp/status" 2>&1 &&
	fail "--socket did not override the file's socket"
grep -q "other.sock" "$tmp/status" || fail "status did not try --socket: $(cat "$tmp/status")"
"$STROBE" sessions --db "$tmp/none.db" >"$tmp/s2" 2>&1
grep -q fromconf "$tmp/s2" && fail "--db did not override the file's db"
ok "STROBE_SOCKET and --socket override the file's socket, --db its db"
kill "$daemon_pid"; wait "$daemon_pid"; daemon_pid=

# strobed's options override the file (here with it named by STROBE_CONFIG)
"$STROBED" --foreground --db "$tmp/opt.db" --socket "$tmp/opt.sock" 2>"$tmp/strobed2.log" &
daemon_pid=$!
i=0
while ! grep -q "listening on" "$tmp/strobed2.log"; do
	i=$((i + 1))
	[ $i -gt 200 ] && fail "strobed did not start: $(cat "$tmp/strobed2.log")"
	kill -0 "$daemon_pid" 2>/dev/null || fail "strobed died: $(cat "$tmp/strobed2.log")"
	sleep 0.05
done
grep -q "listening on $tmp/opt.sock, database $tmp/opt.db, backend perf" "$tmp/strobed2.log" ||
	fail "options did not override the file (or STROBE_CONFIG was not read): $(cat "$tmp/strobed2.log")"
[ -S "$sock" ] && fail "strobed also listens on the file's socket"
kill "$daemon_pid"; wait "$daemon_pid"; daemon_pid=
ok "strobed's --db and --socket override STROBE_CONFIG's file, its backend is the file's"
unset STROBE_CONFIG

# a key takes effect as its option does
if [ ! -e /dev/strobe ]; then
	printf 'db = %s\nsocket = %s\nbackend = driver\n' "$db" "$sock" >"$tmp/drv.conf"
	refused_d 1 '^strobed: --backend driver needs /dev/strobe' "$STROBED" --foreground --config "$tmp/drv.conf"
fi

bad() {	# bad NAME LINE TEXT...: a file of these lines
	name=$1
	shift
	printf '%s\n' "$@" >"$tmp/$name.conf"
	chmod 0644 "$tmp/$name.conf"
}
bad key 'db = /tmp/x.db' '' 'sokcet = /tmp/x.sock'
refused_d 2 "^strobed: $tmp/key.conf:3: unknown key 'sokcet': the keys are db, socket," \
	"$STROBED" --config "$tmp/key.conf"
bad value '# keep a month' 'keep = month'
"$STROBED" --keep month 2>"$tmp/opt.err"
refused_d 2 "^strobed: $tmp/value.conf:2: $(cat "$tmp/opt.err" | sed 's/^strobed: //; s/[][\.*^$]/\\&/g')\$" \
	"$STROBED" --config "$tmp/value.conf"
bad value2 'ingest-nice = 25'
refused_d 2 "^strobed: $tmp/value2.conf:1: bad --ingest-nice '25': give a number from 0" \
	"$STROBED" --config "$tmp/value2.conf"
refused_d 2 "^strobed: $tmp/missing.conf: cannot read: No such file or directory" \
	"$STROBED" --config "$tmp/missing.conf"
refused_d 2 "^strobed: $tmp/missing.conf: cannot read: No such file or directory" \
	env STROBE_CONFIG="$tmp/missing.conf" "$STROBED"
bad noeq 'db /tmp/x.db'
refused_d 2 "^strobed: $tmp/noeq.conf:1: expected '=' after 'db'" "$STROBED" --config "$tmp/noeq.conf"
bad dup 'db = /tmp/a.db' 'socket = /tmp/a.sock' 'db = /tmp/b.db'
refused_d 2 "^strobed: $tmp/dup.conf:3: 'db' is set twice \(first on line 1\)" \
	"$STROBED" --config "$tmp/dup.conf"
python3 -c "import sys; print('# ok'); print('db = /tmp/' + 'a' * 5000)" >"$tmp/long.conf"
refused_d 2 "^strobed: $tmp/long.conf:2: line too long \(the limit is 4095 characters\)" \
	"$STROBED" --config "$tmp/long.conf"
cp "$conf" "$tmp/open.conf"
chmod 0666 "$tmp/open.conf"
refused_d 2 "^strobed: $tmp/open.conf: owned by uid 0 with mode 0666: others could change" \
	"$STROBED" --config "$tmp/open.conf"
# a bad value in the file is refused even when an option would override it
refused_d 2 "^strobed: $tmp/value.conf:2: bad --keep 'month'" "$STROBED" --keep 3 --config "$tmp/value.conf"

# the CLI: a malformed file ends the command (its defaults would be wrong);
# keys other than db and socket are strobed's to check
refused_d 2 "^strobe: $tmp/noeq.conf:1: expected '=' after 'db'.*STROBE_CONFIG" \
	env STROBE_CONFIG="$tmp/noeq.conf" "$STROBE" status
refused_d 2 "^strobe: $tmp/missing.conf: cannot read" env STROBE_CONFIG="$tmp/missing.conf" "$STROBE" sessions
STROBE_CONFIG=$tmp/value.conf STROBE_SOCKET=$tmp/none.sock "$STROBE" status >"$tmp/out" 2>&1
grep -q "none.sock" "$tmp/out" || fail "the CLI refused a file whose only problem is strobed's: $(cat "$tmp/out")"
# an option needs no file
STROBE_CONFIG=$tmp/noeq.conf "$STROBE" sessions --db "$db" >"$tmp/out" 2>&1 ||
	fail "sessions --db read the configuration file: $(cat "$tmp/out")"
ok "the CLI reads the file only for the defaults it needs"
echo "PASS"
