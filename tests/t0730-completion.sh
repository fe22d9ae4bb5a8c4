#!/bin/sh
# t0730-completion: the bash completion dist/bash-completion/strobe, from
# the source tree, with the build tree's strobe and strobed first in PATH,
# driven in 'bash --norc' as bash drives it (COMP_WORDS, COMP_CWORD,
# COMP_LINE, COMP_POINT set; COMPREPLY read), with bash-completion loaded
# and then without it.  Every expected set is computed here from what
# strobe prints (--help, list, sessions), not written down: the commands
# starting with "re", report's --b* options and --by values, event names
# (page-faults; the last element of a comma list; a tracepoint after its
# ':'), metric names, the ids of two sessions recorded here (--session,
# 'strobe rm', 'strobe diff', and another database's with --db), commands
# after 'record --', strobed's options and --backend values.
. "$(dirname "$0")/lib.sh"
need_root
bc=/usr/share/bash-completion/bash_completion
[ -r "$bc" ] || skip "bash-completion is not installed ($bc)"
command -v bash >/dev/null || skip "no bash"
script=$top/dist/bash-completion/strobe
[ -r "$script" ] || fail "no $script"

# two sessions in $STROBE_DB, one in another database
for n in 1 2; do
	"$STROBE" record --db "$STROBE_DB" --sample-event cpu-clock -F 1000 --name "c$n" -- \
		"$WL/split603010" 0.1 >/dev/null 2>"$tmp/rec.err" || fail "record $n: $(cat "$tmp/rec.err")"
done
"$STROBE" record --db "$tmp/other.db" --sample-event cpu-clock -F 1000 --name other -- \
	"$WL/split603010" 0.1 >/dev/null 2>"$tmp/rec.err" || fail "record other: $(cat "$tmp/rec.err")"
ids() {
	python3 -c 'import csv, sys; print(" ".join(r["id"] for r in csv.DictReader(sys.stdin)))'
}
ids=$("$STROBE" sessions --db "$STROBE_DB" --format csv | ids)
other=$("$STROBE" sessions --db "$tmp/other.db" --format csv | ids)
echo "sessions in $STROBE_DB: $ids; in other.db: $other"
[ "$(echo $ids | wc -w)" = 2 ] || fail "expected 2 sessions in $STROBE_DB, got '$ids'"
[ "$(echo $other | wc -w)" = 1 ] || fail "expected 1 session in other.db, got '$other'"

cat >"$tmp/drive.bash" <<'EOF'
# drive.bash MODE: MODE full (bash-completion loaded) or bare (without)
mode=$1
[ "$mode" = full ] && . /usr/share/bash-completion/bash_completion
. "$SCRIPT" || { echo "FAIL: sourcing $SCRIPT"; exit 1; }
failed=0

# comp WORD...: complete the last WORD as bash would (COMP_WORDS split at
# COMP_WORDBREAKS as bash splits them: give "sched" ":" "sched_sw")
comp() {
	COMP_WORDS=("$@")
	COMP_CWORD=$((${#COMP_WORDS[@]} - 1))
	COMP_LINE=$1
	local w p=$1
	for w in "${@:2}"; do
		case $w$p in
		:* | =* | *: | *=) COMP_LINE+=$w ;;
		*) COMP_LINE+=" $w" ;;
		esac
		p=$w
	done
	COMP_POINT=${#COMP_LINE}
	COMPREPLY=()
	local f
	f=$(complete -p "$1" 2>/dev/null | sed -n 's/.*-F \([^ ]*\) .*/\1/p')
	[ -n "$f" ] || { echo "FAIL [$mode]: no completion for $1"; failed=1; return; }
	"$f" "$1" "${COMP_WORDS[COMP_CWORD]}" "${COMP_WORDS[COMP_CWORD - 1]}" 2>/dev/null
	got=$(printf '%s\n' "${COMPREPLY[@]}" | sed '/^$/d' | sort -u | tr '\n' ' ')
}
norm() { printf '%s\n' $1 | sed '/^$/d' | sort -u | tr '\n' ' '; }

# same WHAT EXPECTED WORD...: the replies are exactly EXPECTED
same() {
	local what=$1 want
	want=$(norm "$2")
	shift 2
	comp "$@"
	if [ -z "$want" ]; then
		echo "FAIL [$mode] $what: nothing expected (the test's own computation failed)"
		failed=1
	elif [ "$got" != "$want" ]; then
		echo "FAIL [$mode] $what: '$*<TAB>': expected: $want; got: $got"
		failed=1
	else
		echo "ok [$mode] $what: $got"
	fi
}

# has WHAT WORD NEEDED...: the replies include WORD (and all start as PREFIX)
has() {
	local what=$1 need=$2 prefix=$3
	shift 3
	comp "$@"
	case " $got" in
	*" $need "*) ;;
	*) echo "FAIL [$mode] $what: '$*<TAB>': expected $need among the replies; got: $got"
	   failed=1; return ;;
	esac
	for w in $got; do
		case $w in
		"$prefix"*) ;;
		*) echo "FAIL [$mode] $what: '$*<TAB>': reply '$w' does not start with '$prefix'; got: $got"
		   failed=1; return ;;
		esac
	done
	echo "ok [$mode] $what: $(echo $got | wc -w) replies, $need among them"
}

cmds=$(strobe --help | sed -n '/^commands:/,/^$/s/^  \([a-z][a-z-]*\) .*/\1/p')
same "commands starting with re" "$(printf '%s\n' $cmds | grep '^re')" strobe re
same "all commands" "$cmds" strobe ""
same "report's --b options" "$(strobe report --help | grep -oE -- '--b[a-z-]*' | sort -u)" \
	strobe report --b
same "report --by values" \
	"$(strobe report --help | grep -oE -- '--by [a-z]+(\|[a-z]+)+' | sed 's/^--by //' | tr '|' '\n')" \
	strobe report --by ""
same "report --by= values" \
	"$(strobe report --help | grep -oE -- '--by [a-z]+(\|[a-z]+)+' | sed 's/^--by //' | tr '|' '\n')" \
	strobe report --by = ""
same "export --format values" \
	"$(strobe export --help | grep -oE -- '--format [a-z-]+(\|[a-z-]+)+' | sed 's/^--format //' | tr '|' '\n')" \
	strobe export --format ""
has "events after -e" page-faults page- strobe start -e page-
same "last element of an event list" "page-faults,context-switches" \
	strobe start -e page-faults,cont
has "events after --sample-event" cpu-clock cpu- strobe record --sample-event cpu-
if [ "$mode" = full ] && strobe list -v 2>/dev/null | grep -q '^  sched:sched_switch '; then
	# a tracepoint: bash splits the word at ':', the replies are what follows
	same "tracepoint after its ':'" sched_switch strobe start -e sched : sched_switc
fi
metric=$(strobe list --metrics --format csv | sed -n '2s/,.*//p')
has "metrics after -M" "$metric" "$metric" strobe count -M "$metric"
same "sessions after --session (STROBE_DB)" "$IDS" strobe report --session ""
same "sessions after --session with --db" "$OTHER" strobe report --db "$OTHER_DB" --session ""
same "sessions for strobe rm" "$IDS" strobe rm ""
same "sessions for strobe diff" "$IDS" strobe diff ""
same "files after --db" "$(ls -d "$OTHER_DB"*)" strobe sessions --db "$OTHER_DB"
has "commands after record --" ls ls strobe record -- ls
same "strobed --backend values" \
	"$(strobed --help | grep -oE -- '--backend [a-z]+(\|[a-z]+)+' | sed 's/^--backend //' | tr '|' '\n')" \
	strobed --backend ""
same "strobed's --s options" "$(strobed --help | grep -oE -- '--s[a-z-]*' | sort -u)" strobed --s
exit $failed
EOF

PATH=$build/tools:$build/daemon:$PATH
export PATH SCRIPT="$script" IDS="$ids" OTHER="$other" OTHER_DB="$tmp/other.db"
rc=0
for mode in full bare; do
	env -u BASH_COMPLETION_VERSINFO bash --norc "$tmp/drive.bash" $mode || rc=1
done
[ $rc = 0 ] || fail "completion (see the lines above)"
ok "bash completion"
