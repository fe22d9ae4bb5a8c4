#!/bin/sh
# demo.sh - the main job: a real system-wide session over the bundled
# workloads, then the hot-spot reports.  Run by 'make demo' (as root).
set -e
top=${STROBE_TOP:-$(cd "$(dirname "$0")/.." && pwd)}
build=${STROBE_BUILD:-$top}
strobe=$build/tools/strobe
wl=$build/tests/workloads
export STROBED=$build/daemon/strobed
db=${STROBE_DB:-/var/lib/strobe/strobe.db}

if [ "$(id -u)" != 0 ]; then
	echo "demo: run as root: system-wide profiling needs it" >&2
	exit 1
fi
echo "== strobe record: a system-wide session while the bundled workloads run"
echo "   (split603010: work60/work30/work10 do 60/30/10 of the CPU work;"
echo "    pagetouch: exactly 200000 first-touch page faults)"
"$strobe" record --db "$db" --name demo -e page-faults,context-switches -- \
	sh -c "'$wl/split603010' 3 & '$wl/pagetouch' 200000; wait"
echo
echo "== strobe report --by binary"
"$strobe" report --db "$db" --by binary --limit 8
echo
echo "== strobe report --by symbol (the hot spots)"
"$strobe" report --db "$db" --by symbol --limit 12
echo
echo "== strobe sessions"
"$strobe" sessions --db "$db"
echo
echo "database: $db (STROBE_DB or --db choose another)"
