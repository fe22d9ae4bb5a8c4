#!/bin/sh
# t0710-man: the manual pages (doc/man/*.scd, built by make with scdoc into
# doc/man/*.1, *.5, *.8) against the programs' --help:
#   - a page strobe-CMD.1 for every command 'strobe --help' lists, and
#     strobe.1 names each: a term in its COMMANDS section and strobe-CMD(1)
#   - each page's OPTIONS section holds every option token (--long, -x) of
#     its program's --help, and no token that --help lacks (-h and --help,
#     which every command takes, excepted when the command accepts them)
#   - each page renders without a warning (groff -ww; man --warnings)
#   - strobed.conf.5 names a key for every strobed option that takes a value
# A mismatch is one line "PAGE: TOKEN is ..."; any fails the test.
. "${STROBE_TOP:-$(dirname "$0")/..}/tests/lib.sh"

mandir=$build/doc/man
command -v groff >/dev/null || skip "groff not installed (apt-get install groff-base)"
command -v perl >/dev/null || skip "perl not installed"
[ -f "$mandir/strobe.1" ] || fail "$mandir/strobe.1 not built: run make"

bad=0
mismatch() { echo "$*"; bad=1; }

# The option tokens of a text on stdin, one per line, sorted: --long and
# -x as options are written (after a space, '(', '[', '|', ',', '/' or a
# quote); not '--' alone, '-1', 'a-b' or 'S<s>-D<d>'.
opts() {
	perl -ne 'while (/(?<![^\s(\[|,\/"\x27`])(--[A-Za-z][A-Za-z0-9]*(?:-[A-Za-z0-9]+)*|-[A-Za-z](?![A-Za-z0-9_]))/g) { print "$1\n" }' |
		sort -u
}

# The page as plain text, one paragraph line as long as it is (no
# hyphenation, no line breaks inside a token).
render() {
	groff -t -man -Tascii -P -cbou -rLL=2000n -rHY=0 "$1" 2>/dev/null
}

# The lines of section $2 of the rendered page $1
section() {
	render "$1" | awk -v s="$2" '/^[A-Z][A-Z0-9 ]*$/ { on = ($0 == s); next } on'
}

# check PAGE CMD...: PAGE's OPTIONS against the --help of CMD...
check() {
	page=$1
	shift
	name=$(basename "$page")
	"$@" --help >"$tmp/help" 2>&1 || { mismatch "$name: '$* --help' failed"; return; }
	section "$page" OPTIONS >"$tmp/sec"
	[ -s "$tmp/sec" ] || { mismatch "$name: no OPTIONS section"; return; }
	opts <"$tmp/help" >"$tmp/h.opts"
	opts <"$tmp/sec" >"$tmp/m.opts"
	[ -s "$tmp/h.opts" ] || { mismatch "$name: no option found in '$* --help'"; return; }
	for o in $(comm -23 "$tmp/h.opts" "$tmp/m.opts"); do
		mismatch "$name: $o is in --help but not documented"
	done
	for o in $(comm -13 "$tmp/h.opts" "$tmp/m.opts"); do
		case $o in
		--help) continue ;;
		-h) "$@" -h >/dev/null 2>&1 && continue ;;
		esac
		mismatch "$name: $o is documented but not in --help"
	done
	echo "checked $name: $(wc -l <"$tmp/h.opts") options of '$* --help'"
}

# --- a page per command, strobe.1 lists each ---
cmds=$("$STROBE" --help | awk '/^commands:/ { on = 1; next } on && NF == 0 { exit } on { print $1 }')
[ -n "$cmds" ] || fail "no commands in 'strobe --help'"
section "$mandir/strobe.1" COMMANDS >"$tmp/cmds"
render "$mandir/strobe.1" >"$tmp/strobe.txt"
for c in $cmds; do
	[ -f "$mandir/strobe-$c.1" ] || mismatch "strobe-$c.1: no page for 'strobe $c'"
	awk -v c="$c" '$1 == c && NF == 1 { f = 1 } END { exit !f }' "$tmp/cmds" ||
		mismatch "strobe.1: command $c is not in COMMANDS"
	grep -q "strobe-$c(1)" "$tmp/strobe.txt" || mismatch "strobe.1: strobe-$c(1) is not named"
done
ok "$(echo $cmds | wc -w) commands: $(echo $cmds)"

# --- each page's options against its --help ---
check "$mandir/strobe.1" "$STROBE"
for c in $cmds; do
	[ -f "$mandir/strobe-$c.1" ] && check "$mandir/strobe-$c.1" "$STROBE" "$c"
done
if [ -f "$mandir/strobed.8" ]; then
	check "$mandir/strobed.8" "$STROBED"
else
	mismatch "strobed.8: no page"
fi

# --- strobed.conf.5: a key for each option of strobed that takes a value ---
if [ -f "$mandir/strobed.conf.5" ]; then
	section "$mandir/strobed.conf.5" KEYS >"$tmp/keys"
	"$STROBED" --help | perl -ne 'while (/\[--([a-z][a-z-]*) [A-Za-z|]+\]/g) { print "$1\n" }' |
		sort -u >"$tmp/valued"
	[ -s "$tmp/valued" ] || mismatch "strobed.conf.5: no option with a value in 'strobed --help'"
	for k in $(cat "$tmp/valued"); do
		[ "$k" = config ] && continue
		awk -v k="$k" '$1 == k { f = 1 } END { exit !f }' "$tmp/keys" ||
			mismatch "strobed.conf.5: key $k (strobed --$k) is not in KEYS"
	done
	ok "strobed.conf.5 keys: $(echo $(cat "$tmp/valued"))"
else
	mismatch "strobed.conf.5: no page"
fi

# --- every page renders without a warning ---
n=0
for page in "$mandir"/*.[158]; do
	name=$(basename "$page")
	w=$(groff -t -ww -z -man -Tutf8 "$page" 2>&1)
	[ -z "$w" ] || mismatch "$name: groff warns: $w"
	w=$(LC_ALL=C.UTF-8 MANWIDTH=80 man --warnings -l "$page" 2>&1 >/dev/null)
	[ -z "$w" ] || mismatch "$name: man warns: $w"
	n=$((n + 1))
done
ok "$n pages render without warnings"

[ $bad = 0 ] || fail "the manual pages do not match the programs' --help"
ok "every page matches its --help"
