#!/bin/sh
# t0302-socket-commands: the command line of the commands whose one option
# is strobed's socket ('strobe mark', 'strobe rm', tools/socketopt.c),
# without a strobed: --help prints the usage on stdout (exit 0); an
# unknown option, --socket without its value and no operand are each one
# line (exit 2), and so are those of status, start, stop and report (a
# long option named as typed); no strobed on the socket is one line
# (exit 1), rm's saying what to do, mark's proto's "cannot reach strobed".
. "$(dirname "$0")/lib.sh"

for c in mark rm; do
	"$STROBE" $c --help >"$tmp/out" 2>"$tmp/err" || fail "$c --help exited $?"
	grep -q "^usage: strobe $c \[--socket PATH\]" "$tmp/out" || fail "$c --help: $(cat "$tmp/out")"
	[ -s "$tmp/err" ] && fail "$c --help wrote on stderr: $(cat "$tmp/err")"
	refused 2 $c "^strobe $c: unknown option '--bogus': see 'strobe $c --help'\$" \
		"$STROBE" $c --bogus 1
	refused 2 $c "^strobe $c: unknown option '-x': see 'strobe $c --help'\$" "$STROBE" $c -x 1
	refused 2 $c "^strobe $c: option --socket needs a value: see 'strobe $c --help'\$" \
		"$STROBE" $c --socket
done
refused 2 mark "^strobe mark: no text given: strobe mark TEXT\$" "$STROBE" mark --socket "$tmp/s"
refused 2 rm "^strobe rm: no session given" "$STROBE" rm --socket "$tmp/s"
ok "--help, unknown options, --socket without a value, no operand"
# every command: a long option without its value is named as given
for c in status start stop; do
	refused 2 $c "^strobe $c: option --socket needs a value: see 'strobe $c --help'\$" \
		"$STROBE" $c --socket
done
for c in start stop; do
	refused 2 $c "^strobe $c: unknown option '--bogus': see 'strobe $c --help'\$" \
		"$STROBE" $c --bogus
done
refused 2 report "^strobe report: option --db needs a value: see 'strobe report --help'\$" \
	"$STROBE" report --db
ok "status, start, stop, report: --socket, --db without a value named as given; start, stop: unknown options in one line"

refused 1 rm "^strobe rm: no strobed answers on $tmp/nosock: start it on the database \(strobed --db PATH\); sessions are removed by strobed, which owns it\$" \
	"$STROBE" rm --socket "$tmp/nosock" 3
refused 1 mark "^strobe mark: cannot reach strobed at $tmp/nosock " \
	"$STROBE" mark --socket "$tmp/nosock" hello
# the operands stop the options: '--socket' after one is text
refused 1 mark "^strobe mark: cannot reach strobed at $tmp/nosock " \
	"$STROBE" mark --socket "$tmp/nosock" hello --socket
ok "no strobed on the socket: one line, rm's saying what to do"
