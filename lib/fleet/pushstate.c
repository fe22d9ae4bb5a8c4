/*
 * pushstate.c - what the ClickHouse server has: its schema version and
 * batch limit, and of a host's session its batches, content hash, batch
 * size and interval rows (pushstate.h, push.h, doc/FLEET.md).
 */
#include "config.h"
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "chclient.h"
#include "pushstate.h"

int push_check_schema(struct chclient *c, struct error *e)
{
	struct sbuf out = { 0 };
	long v;
	char *end;

	if (chclient_query(c, "SELECT max(version) FROM schema_version", &out, e) < 0) {
		if (strstr(e->msg, "(ClickHouse error 60)") || strstr(e->msg, "(ClickHouse error 81)"))
			return error_set(e, "no strobe schema in that database of ClickHouse: "
					 "apply schema/clickhouse/*.sql there first (doc/FLEET.md)");
		return -1;
	}
	v = strtol(out.s ? out.s : "", &end, 10);
	free(out.s);
	if (end == out.s || v != PUSH_SCHEMA_VERSION)
		return error_set(e, "the ClickHouse database has strobe schema version %ld, this "
				 "strobe writes version %d: upgrade the older of the two "
				 "(doc/FLEET.md)", v, PUSH_SCHEMA_VERSION);
	return 0;
}

int pushstate_batch_max(struct chclient *c, size_t *max, struct error *e)
{
	struct sbuf out = { 0 };
	unsigned long long v;

	if (chclient_query(c, "SELECT value FROM system.settings WHERE name = "
			   "'max_insert_block_size'", &out, e) < 0)
		return -1;
	if (!out.s || sscanf(out.s, "%llu", &v) != 1 || v == 0) {
		free(out.s);
		return error_set(e, "ClickHouse did not say its max_insert_block_size");
	}
	free(out.s);
	*max = v;
	return 0;
}

int push_parse_batches(const char *text, uint8_t *have, size_t n)
{
	const char *p = text ? text : "";

	while (*p) {
		uint64_t v = 0;
		const char *q = p;

		while (*q >= '0' && *q <= '9') {
			if (v > UINT32_MAX)
				return -1;
			v = v * 10 + (*q++ - '0');
		}
		if (q == p || (*q && *q != '\n') || v >= n)
			return -1;
		have[v] = 1;
		p = *q ? q + 1 : q;
	}
	return 0;
}

int pushstate_session(struct chclient *c, const char *host, int64_t session, char *hash,
		      size_t hsize, uint8_t *have, size_t n, int *extra, struct error *e)
{
	static const char *const tables[] = {
		"sessions", "processes", "markers", "lost", "samples", "binaries",
		"samples_by_loc", "samples_by_time",
	};
	struct sbuf where = { 0 }, q = { 0 }, out = { 0 };
	int ret = -1;

	sbuf_addf(&where, "host = ");
	push_sql_quote(&where, host);
	sbuf_addf(&where, " AND session = %" PRId64, session);
	/* any(), not LIMIT 1: a LIMIT met early cancels the shards' reads
	 * while their query is still being sent, which ClickHouse before
	 * 20.12 (Debian's 18.16) answers with error 101, "Unexpected packet
	 * Data received from client" (its pull request 17254); an aggregate
	 * reads to the end.  No row: one row of '' */
	sbuf_addf(&q, "SELECT any(content_hash) FROM sessions WHERE %s", where.s);
	if (chclient_query(c, q.s, &out, e) < 0)
		goto out;
	snprintf(hash, hsize, "%.*s", out.s ? (int)strcspn(out.s, "\n") : 0, out.s ? out.s : "");
	free(out.s);
	memset(&out, 0, sizeof(out));
	q.n = 0;
	for (size_t i = 0; i < sizeof(tables) / sizeof(*tables); i++)
		sbuf_addf(&q, "%sSELECT DISTINCT batch FROM %s WHERE %s", i ? " UNION ALL " : "",
			  tables[i], where.s);
	if (chclient_query(c, q.s, &out, e) < 0)
		goto out;
	*extra = push_parse_batches(out.s, have, n) < 0;
	ret = 0;
out:
	free(where.s);
	free(q.s);
	free(out.s);
	return ret;
}

int pushstate_batch_rows(struct chclient *c, const char *host, int64_t session, size_t *rows,
			 struct error *e)
{
	struct sbuf q = { 0 }, out = { 0 };
	unsigned long long v;
	int ret = 0;

	/* any(), not LIMIT 1, as in pushstate_session(); no row: 0 */
	sbuf_addf(&q, "SELECT any(batch_rows) FROM sessions WHERE host = ");
	push_sql_quote(&q, host);
	sbuf_addf(&q, " AND session = %" PRId64, session);
	if (chclient_query(c, q.s, &out, e) < 0)
		ret = -1;
	else if (out.s && sscanf(out.s, "%llu", &v) == 1 && v > 0 && v <= PUSH_BATCH_MAX)
		*rows = v;
	free(q.s);
	free(out.s);
	return ret;
}

int pushstate_intervals(struct chclient *c, const char *host, int64_t session,
			struct push_interval **iv, size_t *n, struct error *e)
{
	struct sbuf q = { 0 }, out = { 0 };
	int ret;

	sbuf_addf(&q, "SELECT DISTINCT interval_no, first_row, last_row, first_batch, batches, "
		  "batch_rows, samples, samples_total, content_hash FROM intervals WHERE host = ");
	push_sql_quote(&q, host);
	sbuf_addf(&q, " AND session = %" PRId64 " FORMAT TabSeparated", session);
	ret = chclient_query(c, q.s, &out, e);
	if (ret == 0 && push_parse_intervals(out.s, iv, n, e) < 0)
		ret = error_prefix(e, "session %" PRId64 " of host %.100s", session, host);
	free(q.s);
	free(out.s);
	return ret;
}
