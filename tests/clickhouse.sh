# clickhouse.sh - local ClickHouse servers for the fleet tests (t08xx),
# sourced after tests/lib.sh.  Debian's clickhouse-server (18.16) runs as
# whoever starts it (it does not refuse root), each instance with its own
# config file, data directory, logs and free ports under $tmp, listening
# on 127.0.0.1 only, user default with password $CH_PASSWORD, and a
# cluster strobe_fleet of two shards: instances 1 and 2 (start both for
# the Distributed tables to answer).  Skips when the package is missing.
#
#   ch_start N	start (or restart, same ports and data) instance N and
#		wait until it answers SELECT 1 over HTTP (30 s at most)
#   ch_stop N	stop it (SIGTERM, then SIGKILL after 20 s)
#   ch_kill N	kill -9 it at once
#   ch_url N [DB]	http://127.0.0.1:PORT/?database=DB (default strobe)
#   ch_q N SQL	run SQL on instance N (clickhouse-client over TCP);
#		prints TSV; fails the test on error
#   ch_schema N	create database strobe and apply schema/clickhouse/*.sql
command -v clickhouse-server >/dev/null ||
	skip "clickhouse-server is not installed (apt-get install clickhouse-server clickhouse-client, or ./setup.sh)"
command -v clickhouse-client >/dev/null ||
	skip "clickhouse-client is not installed (apt-get install clickhouse-client, or ./setup.sh)"
command -v curl >/dev/null || skip "curl is not installed"

CH_PASSWORD=strobe-test-pw
ch_pids=

# ch_free_port: a TCP port on 127.0.0.1 nothing listens on now (lib.sh)
ch_free_port() { free_port; }

ch_setup() {
	d=$tmp/ch$1
	[ -f "$d/ports" ] && return 0
	mkdir -p "$d/data" "$d/tmp" "$d/user_files" "$d/format_schemas"
	echo "$(ch_free_port) $(ch_free_port)" >"$d/ports"
	: >"$d/pid"
}

ch_http_port() { cut -d' ' -f1 "$tmp/ch$1/ports"; }
ch_tcp_port() { cut -d' ' -f2 "$tmp/ch$1/ports"; }

# the config of instance N (written when both shards' ports are known)
ch_config() {
	d=$tmp/ch$1
	cat >"$d/config.xml" <<EOF
<?xml version="1.0"?>
<yandex>
	<logger>
		<level>information</level>
		<log>$d/server.log</log>
		<errorlog>$d/server.err.log</errorlog>
		<console>0</console>
	</logger>
	<http_port>$(ch_http_port "$1")</http_port>
	<tcp_port>$(ch_tcp_port "$1")</tcp_port>
	<listen_host>127.0.0.1</listen_host>
	<path>$d/data/</path>
	<tmp_path>$d/tmp/</tmp_path>
	<user_files_path>$d/user_files/</user_files_path>
	<format_schema_path>$d/format_schemas/</format_schema_path>
	<mark_cache_size>67108864</mark_cache_size>
	<users_config>$d/users.xml</users_config>
	<default_profile>default</default_profile>
	<default_database>default</default_database>
	<remote_servers>
		<strobe_fleet>
			<shard><replica><host>127.0.0.1</host><port>$(ch_tcp_port 1)</port>
				<user>default</user><password>$CH_PASSWORD</password></replica></shard>
			<shard><replica><host>127.0.0.1</host><port>$(ch_tcp_port 2)</port>
				<user>default</user><password>$CH_PASSWORD</password></replica></shard>
		</strobe_fleet>
	</remote_servers>
</yandex>
EOF
	cat >"$d/users.xml" <<EOF
<?xml version="1.0"?>
<yandex>
	<profiles><default></default></profiles>
	<users>
		<default>
			<password>$CH_PASSWORD</password>
			<networks><ip>127.0.0.1</ip></networks>
			<profile>default</profile>
			<quota>default</quota>
		</default>
	</users>
	<quotas><default></default></quotas>
</yandex>
EOF
}

ch_start() {
	ch_setup 1
	ch_setup 2
	ch_setup "$1"
	ch_config "$1"
	d=$tmp/ch$1
	nice -n 19 clickhouse-server --config-file="$d/config.xml" >"$d/stdout.log" 2>&1 &
	echo $! >"$d/pid"
	ch_pids="$ch_pids $1"
	i=0
	until [ "$(curl -s -m 2 -u "default:$CH_PASSWORD" --data-binary 'SELECT 1' \
		"http://127.0.0.1:$(ch_http_port "$1")/" 2>/dev/null)" = 1 ]; do
		i=$((i + 1))
		if ! kill -0 "$(cat "$d/pid")" 2>/dev/null; then
			tail -n 20 "$d/stdout.log" "$d/server.err.log" 2>/dev/null
			fail "clickhouse-server $1 died while starting"
		fi
		[ $i -gt 300 ] && { tail -n 20 "$d/server.err.log"; fail "clickhouse-server $1 did not answer SELECT 1 on port $(ch_http_port "$1") within 30 s"; }
		sleep 0.1
	done
}

ch_stop() {
	p=$(cat "$tmp/ch$1/pid" 2>/dev/null)
	[ -n "$p" ] || return 0
	kill "$p" 2>/dev/null
	i=0
	while kill -0 "$p" 2>/dev/null; do
		i=$((i + 1))
		if [ $i -gt 200 ]; then
			echo "clickhouse-server $1 did not stop within 20 s: killed"
			kill -9 "$p" 2>/dev/null
		fi
		sleep 0.1
	done
	wait "$p" 2>/dev/null
	: >"$tmp/ch$1/pid"
}

ch_kill() {
	p=$(cat "$tmp/ch$1/pid" 2>/dev/null)
	[ -n "$p" ] || fail "ch_kill $1: not running"
	kill -9 "$p"
	wait "$p" 2>/dev/null
	: >"$tmp/ch$1/pid"
}

ch_url() { echo "http://127.0.0.1:$(ch_http_port "$1")/?database=${2:-strobe}"; }

ch_q() {
	clickhouse-client --host 127.0.0.1 --port "$(ch_tcp_port "$1")" --user default \
		--password "$CH_PASSWORD" --query "$2" 2>"$tmp/ch_q.err" ||
		fail "query on clickhouse $1 failed: $2: $(head -c 600 "$tmp/ch_q.err")"
}

# ch_parts N COLUMNS WHERE: server N's active parts grouped by COLUMNS (of
# system.parts) where WHERE: COLUMNS, rows, and the highest block number.
# Each insert takes a new block number and a background merge keeps it, so
# this changes with what was written or dropped, never with a merge (a
# count of parts does, whenever ClickHouse merges).
ch_parts() {
	ch_q "$1" "SELECT $2, sum(rows), max(max_block_number) FROM system.parts
		WHERE active AND ($3) GROUP BY $2 ORDER BY $2"
}

ch_schema() {
	ch_q "$1" "CREATE DATABASE IF NOT EXISTS strobe"
	for f in "$top"/schema/clickhouse/[0-9]*.sql; do
		clickhouse-client --host 127.0.0.1 --port "$(ch_tcp_port "$1")" --user default \
			--password "$CH_PASSWORD" --database strobe --multiquery <"$f" \
			2>"$tmp/ch_q.err" || fail "applying $f on clickhouse $1: $(head -c 600 "$tmp/ch_q.err")"
	done
}

# ch_fleet: the two shards of cluster strobe_fleet, each with the schema;
# strobe push's password exported, $url the first one's
ch_fleet() {
	ch_start 1
	ch_start 2
	ch_schema 1
	ch_schema 2
	export STROBE_CLICKHOUSE_PASSWORD=$CH_PASSWORD
	url=$(ch_url 1)
}

# ch_shard_hosts: hA and hB, two host names that the Distributed tables'
# sharding key (cityHash64(host) % 2) sends to shard 1 and shard 2
ch_shard_hosts() {
	hA= hB=
	for h in alpha bravo charlie delta echo foxtrot golf hotel; do
		s=$(ch_q 1 "SELECT cityHash64('$h') % 2")
		if [ "$s" = 0 ] && [ -z "$hA" ]; then hA=$h; fi
		if [ "$s" = 1 ] && [ -z "$hB" ]; then hB=$h; fi
	done
	[ -n "$hA" ] && [ -n "$hB" ] || fail "no host names for both shards"
}

# ch_push_as DB HOST...: push DB's sessions as each HOST (strobe push --host)
ch_push_as() {
	db_=$1
	shift
	for h_ in "$@"; do
		"$STROBE" push --db "$db_" --to "$url" --host "$h_" >/dev/null 2>"$tmp/push.err" ||
			fail "push $db_ as $h_: $(cat "$tmp/push.err")"
	done
}

ch_cleanup() {
	for n in $ch_pids; do
		p=$(cat "$tmp/ch$n/pid" 2>/dev/null)
		[ -n "$p" ] && kill -9 "$p" 2>/dev/null && wait "$p" 2>/dev/null
	done
	cleanup
}
trap ch_cleanup EXIT
