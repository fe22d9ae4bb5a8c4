/*
 * fleetplotsql.c - the SQL of the fleet's timelines (fleetplot.h's pure
 * parts): which rows a plot reads, their sums per bucket and per key, the
 * sessions' ends, the comms of pids, the markers.  fleetplot.c runs them.
 */
#include "config.h"
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include "fleetplot.h"
#include "fleetquery.h"
#include "push.h"

static void where(struct sbuf *b, const char *host, int64_t session)
{
	struct fleet_opts o = { .host = host, .session = session };

	fleetquery_where(b, &o);
}

void fleetplot_sql_start(struct sbuf *b, char *const *host, const int64_t *id,
			 const int64_t *start, size_t n)
{
	if (n == 1) {
		sbuf_addf(b, "%" PRId64, start[0]);
		return;
	}
	/* "host/session" is unique: the session is after the last '/' */
	sbuf_addf(b, "transform(concat(host, '/', toString(session)), [");
	for (size_t i = 0; i < n; i++) {
		struct sbuf k = { 0 };

		sbuf_addf(&k, "%s/%" PRId64, host[i], id[i]);
		sbuf_addf(b, "%s", i ? ", " : "");
		push_sql_quote(b, k.s);
		free(k.s);
	}
	sbuf_addf(b, "], [");
	for (size_t i = 0; i < n; i++)
		sbuf_addf(b, "%stoInt64(%" PRId64 ")", i ? ", " : "", start[i]);
	sbuf_addf(b, "], toInt64(0))");
}

int fleetplot_aggregable(const struct fleetplot_range *r, enum timeline_by by,
			 int64_t end_rel)
{
	if (by != TL_BY_NONE && by != TL_BY_CPU && by != TL_BY_PID && by != TL_BY_BINARY &&
	    by != TL_BY_HOST)
		return 0;	/* symbols need the offsets */
	if (r->filt && r->filt->comm)
		return 0;	/* no comm column */
	if (r->bucket_ns <= 0 || r->bucket_ns % PUSH_BUCKET_NS || r->from_rel % PUSH_BUCKET_NS)
		return 0;
	/* samples at to_rel count: the 100 ms row holding it must end there */
	return r->to_rel >= end_rel || (r->to_rel + 1) % PUSH_BUCKET_NS == 0;
}

void fleetplot_sql_last(struct sbuf *b, const char *host, int64_t session, char *const *hosts,
			const int64_t *ids, const int64_t *from, size_t n)
{
	sbuf_addf(b, "SELECT host, session, max(time_ns) FROM samples WHERE ");
	where(b, host, session);
	for (size_t i = 0; i < n; i++) {
		sbuf_addf(b, "%s(host = ", i ? " OR " : " AND (");
		push_sql_quote(b, hosts[i]);
		sbuf_addf(b, " AND session = %" PRId64, ids[i]);
		if (from[i] != INT64_MIN)
			sbuf_addf(b, " AND time_ns >= %" PRId64, from[i]);
		sbuf_addf(b, ")%s", i + 1 == n ? ")" : "");
	}
	sbuf_addf(b, " GROUP BY host, session FORMAT TabSeparated");
}

void fleetplot_sql_where(struct sbuf *b, const struct fleetplot_range *r)
{
	struct fleet_opts o = { .host = r->host, .session = r->session, .filt = r->filt };

	fleetquery_where(b, &o);
	if (r->agg)
		sbuf_addf(b, " AND bucket_ns >= %" PRId64 " AND bucket_ns <= %" PRId64,
			  r->from_rel, r->to_rel);
	else
		sbuf_addf(b, " AND time_ns - %s >= %" PRId64 " AND time_ns - %s <= %" PRId64,
			  r->start, r->from_rel, r->start, r->to_rel);
	fleetquery_sql_filters(b, &o);
}

/* The sums of the samples (raw: one each; samples_by_time: n of them). */
#define SUMC	"sum(c0) AS s0, sum(c1) AS s1, sum(c2) AS s2, sum(c3) AS s3, " \
		"sum(c4) AS s4, sum(c5) AS s5, sum(c6) AS s6, sum(c7) AS s7"
#define RESUM	"sum(sn), sum(s0), sum(s1), sum(s2), sum(s3), sum(s4), sum(s5), sum(s6), sum(s7)"
#define COLS	"sn, s0, s1, s2, s3, s4, s5, s6, s7"

static const char *sums(const struct fleetplot_range *r)
{
	return r->agg ? "sum(n) AS sn, " SUMC : "count() AS sn, " SUMC;
}

static const char *table(const struct fleetplot_range *r)
{
	return r->agg ? "samples_by_time" : "samples";
}

static void bucket_expr(struct sbuf *b, const struct fleetplot_range *r)
{
	if (r->agg)
		sbuf_addf(b, "intDiv(bucket_ns - %" PRId64 ", %" PRId64 ") AS b", r->from_rel,
			  r->bucket_ns);
	else
		sbuf_addf(b, "intDiv(time_ns - %s - %" PRId64 ", %" PRId64 ") AS b", r->start,
			  r->from_rel, r->bucket_ns);
}

void fleetplot_sql_join_names(struct sbuf *b, const struct fleetplot_range *r,
			      const char *keys, const char *sub, const char *cols)
{
	sbuf_addf(b, "(SELECT %s, binary_id, symbol FROM (%s) ANY LEFT JOIN (SELECT binary_key, "
		  "offset, any(symbol) AS symbol FROM symbols WHERE ", cols, sub);
	if (keys)
		sbuf_addf(b, "binary_key IN (%s)", keys);
	else {
		sbuf_addf(b, "binary_key GLOBAL IN (SELECT DISTINCT binary_key FROM samples WHERE ");
		where(b, r->host, r->session);
		sbuf_addf(b, ")");
	}
	sbuf_addf(b, " GROUP BY binary_key, offset) USING (binary_key, offset)) ANY LEFT JOIN "
		  "(SELECT host, session, binary_id, any(name) AS bname FROM binaries WHERE ");
	where(b, r->host, r->session);
	sbuf_addf(b, " GROUP BY host, session, binary_id) USING (host, session, binary_id)");
}

void fleetplot_sql_buckets(struct sbuf *b, const struct fleetplot_range *r,
			   enum timeline_by by, const char *in)
{
	struct sbuf sub = { 0 };

	if (by == TL_BY_SYMBOL) {
		sbuf_addf(&sub, "SELECT host, session, ");
		bucket_expr(&sub, r);
		sbuf_addf(&sub, ", binary_id, binary_key, offset, %s FROM samples WHERE ", sums(r));
		fleetplot_sql_where(&sub, r);
		if (in && *in)
			sbuf_addf(&sub, " AND binary_key IN (%s)", in);
		sbuf_addf(&sub, " GROUP BY host, session, b, binary_id, binary_key, offset");
		sbuf_addf(b, "SELECT host, session, b, symbol, bname, " RESUM " FROM ");
		fleetplot_sql_join_names(b, r, in && *in ? in : NULL, sub.s, "host, session, b, " COLS);
		sbuf_addf(b, " GROUP BY host, session, b, symbol, bname FORMAT TabSeparated");
		free(sub.s);
		return;
	}
	sbuf_addf(b, "SELECT host, session, ");
	bucket_expr(b, r);
	sbuf_addf(b, ", %s, '', %s FROM %s WHERE ",
		  by == TL_BY_CPU ? "toString(cpu) AS k" : by == TL_BY_PID ? "toString(pid) AS k" :
		  by == TL_BY_BINARY ? "toString(binary_id) AS k" : "'' AS k", sums(r), table(r));
	fleetplot_sql_where(b, r);
	if (in && *in && (by == TL_BY_CPU || by == TL_BY_PID || by == TL_BY_BINARY))
		sbuf_addf(b, " AND %s IN (%s)", by == TL_BY_CPU ? "cpu" : by == TL_BY_PID ? "pid" :
			  "binary_id", in);
	sbuf_addf(b, " GROUP BY host, session, b, k FORMAT TabSeparated");
}

void fleetplot_sql_totals(struct sbuf *b, const struct fleetplot_range *r,
			  enum timeline_by by)
{
	struct sbuf sub = { 0 };

	switch (by) {
	case TL_BY_SYMBOL:
		sbuf_addf(&sub, "SELECT host, session, binary_id, binary_key, offset, %s "
			  "FROM samples WHERE ", sums(r));
		fleetplot_sql_where(&sub, r);
		sbuf_addf(&sub, " GROUP BY host, session, binary_id, binary_key, offset");
		sbuf_addf(b, "SELECT host, session, toString(binary_id), toString(offset), symbol, "
			  "bname, " COLS " FROM ");
		fleetplot_sql_join_names(b, r, NULL, sub.s, "host, session, offset, " COLS);
		sbuf_addf(b, " ORDER BY host, session, binary_id, offset FORMAT TabSeparated");
		free(sub.s);
		return;
	case TL_BY_BINARY:
		sbuf_addf(b, "SELECT host, session, toString(binary_id), bkey, bpath, '', " COLS
			  " FROM (SELECT host, session, binary_id, %s FROM %s WHERE ", sums(r),
			  table(r));
		fleetplot_sql_where(b, r);
		sbuf_addf(b, " GROUP BY host, session, binary_id) ANY LEFT JOIN (SELECT host, "
			  "session, binary_id, any(key) AS bkey, any(path) AS bpath FROM binaries "
			  "WHERE ");
		where(b, r->host, r->session);
		sbuf_addf(b, " GROUP BY host, session, binary_id) USING (host, session, binary_id) "
			  "ORDER BY host, session, binary_id FORMAT TabSeparated");
		return;
	default:
		break;
	}
	sbuf_addf(b, "SELECT host, session, %s, '', %s FROM %s WHERE ",
		  by == TL_BY_CPU ? "toString(cpu) AS k, '', ''" :
		  by == TL_BY_PID && r->agg ? "toString(pid) AS k, '', toString(max(bucket_ns))" :
		  by == TL_BY_PID ? "toString(pid) AS k, argMaxIf(comm, time_ns, comm != ''), ''" :
		  "'' AS k, '', ''", sums(r), table(r));
	fleetplot_sql_where(b, r);
	sbuf_addf(b, " GROUP BY host, session, k ORDER BY host, session, k FORMAT TabSeparated");
}

void fleetplot_sql_comms(struct sbuf *b, const struct fleetplot_range *r,
			 const struct fleetplot_pid *p, size_t n, int last)
{
	struct fleet_opts o = { .host = r->host, .session = r->session, .filt = r->filt };

	sbuf_addf(b, "SELECT host, session, toString(pid), argMaxIf(comm, time_ns, comm != '') "
		  "FROM samples WHERE ");
	fleetquery_where(b, &o);
	fleetquery_sql_filters(b, &o);
	sbuf_addf(b, " AND (");
	for (size_t i = 0; i < n; i++) {
		int64_t lo = p[i].start + r->from_rel, hi = p[i].start + r->to_rel;

		if (last) {
			lo = p[i].start + p[i].last;
			hi = p[i].start + MIN(p[i].last + PUSH_BUCKET_NS - 1, r->to_rel);
		}
		sbuf_addf(b, "%s(host = ", i ? " OR " : "");
		push_sql_quote(b, p[i].host);
		sbuf_addf(b, " AND session = %" PRId64 " AND pid = %" PRId64 " AND time_ns >= %"
			  PRId64 " AND time_ns <= %" PRId64 ")", p[i].session, p[i].pid, lo, hi);
	}
	sbuf_addf(b, "%s) GROUP BY host, session, pid FORMAT TabSeparated", n ? "" : "0");
}

void fleetplot_sql_markers(struct sbuf *b, const struct fleetplot_range *r, int64_t base)
{
	sbuf_addf(b, "SELECT time_ns - %s + %" PRId64 " AS t, kind, name, args FROM markers "
		  "WHERE ", r->start, base);
	where(b, r->host, r->session);
	sbuf_addf(b, " AND time_ns - %s >= %" PRId64 " AND time_ns - %s <= %" PRId64
		  " ORDER BY t, host, session LIMIT %d FORMAT TabSeparated", r->start,
		  r->from_rel, r->start, r->to_rel, FLEETPLOT_MAX_MARKERS + 1);
}
