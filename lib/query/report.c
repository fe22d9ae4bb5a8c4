/*
 * report.c - hot-spot reports (see report.h): report_build() and the
 * lines of its table.
 *
 * Three steps:
 *  1. gather: the samples of the session that pass the filters, summed
 *     per (binary, offset, mode) (reportread.c: sample_agg, or the raw
 *     samples for a time range or a session not stored whole);
 *  2. name: each location through the resolver, never guessing
 *     (reportrank.c);
 *  3. group by binary, symbol or line, rank (reportrank.c), and lay out
 *     the table (here), with its derived and -M columns (reportderived.c).
 *
 * The build_id column is the resolver's: the hex build-id of "buildid:"
 * and "kernel:" keys, the whole key for "xxh3:" keys, and nothing (null)
 * for memory with no file.  In --by binary the symbol column is null;
 * source exists only in --by line.  With --inline (inline_chain) the
 * resolver also names each location's inline chain, which becomes part of
 * the group key and the last column, inline.  report_int.h lists the
 * files and what they share.
 */
#include "config.h"
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include "procset.h"
#include "resolve.h"
#include "report_int.h"
#include "where.h"

void report_note(struct report *r, const char *fmt, ...)
{
	struct report_summary *sum = r->sum;
	va_list ap;

	if (sum->nr_notes >= NR_NOTES) {
		r->dropped_notes++;
		return;
	}
	va_start(ap, fmt);
	vsnprintf(sum->notes[sum->nr_notes], sizeof(sum->notes[0]), fmt, ap);
	va_end(ap);
	text_sanitize(sum->notes[sum->nr_notes]);	/* paths, names: one line of text */
	sum->nr_notes++;
}

/* ---- the table ---- */

static const char *by_name(enum report_by by)
{
	switch (by) {
	case REPORT_BY_BINARY: return "binary";
	case REPORT_BY_SYMBOL: return "symbol";
	case REPORT_BY_LINE: return "line";
	case REPORT_BY_CGROUP: return "cgroup";
	}
	return "?";
}

static void meta_int(struct table *t, const char *key, int64_t v)
{
	char buf[32];

	snprintf(buf, sizeof(buf), "%lld", (long long)v);
	table_add_meta(t, key, buf, 1);
}

void report_filters_str(const struct report_opts *o, struct sbuf *out)
{
	struct sbuf f = { 0 };

	if (o->pid >= 0 && o->has_pid_at)
		sbuf_addf(&f, " pid=%lld@%.9gs", (long long)o->pid, o->pid_at_ns / 1e9);
	else if (o->pid >= 0)
		sbuf_addf(&f, " pid=%lld", (long long)o->pid);
	if (o->comm)
		sbuf_addf(&f, " comm=%s", o->comm);
	if (o->binary)
		sbuf_addf(&f, " binary=%s", o->binary);
	if (o->symbol)
		sbuf_addf(&f, " symbol=%s", o->symbol);
	if (o->mode != REPORT_ALL)
		sbuf_addf(&f, " mode=%s", o->mode == REPORT_KERNEL ? "kernel" : "user");
	if (o->cgroup)
		sbuf_addf(&f, " cgroup=%s", o->cgroup);
	if (o->has_from)
		sbuf_addf(&f, " from=%.9gs", o->from_ns / 1e9);
	if (o->has_to)
		sbuf_addf(&f, " to=%.9gs", o->to_ns / 1e9);
	if (o->where)
		sbuf_addf(&f, " where='%s'%s%s", o->where->text, o->where->invert ? " invert" : "",
			  o->where->per_sample ? " where_sample" : "");
	if (f.s)
		sbuf_addf(out, "%s", f.s + 1);
	free(f.s);
}

void report_add_meta(struct table *t, const struct report_opts *o,
		     const struct report_summary *sum)
{
	const struct db_session *s = &sum->session;
	struct sbuf f = { 0 }, ev = { 0 };
	char buf[64];
	int64_t dur = s->duration_ns > 0 ? s->duration_ns :
		      s->end_ns > s->start_ns ? s->end_ns - s->start_ns : -1;
	int i;

	meta_int(t, "session", s->id);
	table_add_meta(t, "name", s->name, 0);
	table_add_meta(t, "state", s->state, 0);
	table_add_meta(t, "backend", s->backend, 0);
	table_add_meta(t, "sample_event", s->sample_event, 0);
	if (s->sample_freq)
		meta_int(t, "sample_freq", s->sample_freq);
	if (s->sample_period)
		meta_int(t, "sample_period", s->sample_period);
	for (i = 0; i < s->nr_events; i++)
		sbuf_addf(&ev, "%s%s", i ? "," : "", s->events[i].name);
	table_add_meta(t, "events", ev.s ? ev.s : "", 0);
	meta_int(t, "session_samples", s->samples);
	meta_int(t, "samples", (int64_t)sum->samples);
	table_add_meta(t, "percent_of", sum->weighted ? "period" : "samples", 0);
	if (sum->weighted)
		meta_int(t, "period", (int64_t)sum->weight);
	meta_int(t, "lost", s->lost);
	meta_int(t, "unresolved", (int64_t)sum->unresolved);
	if (dur >= 0) {		/* left out while a session runs */
		snprintf(buf, sizeof(buf), "%.3f", dur / 1e9);
		table_add_meta(t, "duration_s", buf, 1);
	}
	if (o->nr_metrics) {	/* -M: what "seconds" was */
		snprintf(buf, sizeof(buf), "%.9f", report_metric_seconds(s, o));
		table_add_meta(t, "metric_seconds", strcmp(buf, "nan") ? buf : "null", 1);
	}
	table_add_meta(t, "by", by_name(o->by), 0);
	if (o->inline_chain)
		table_add_meta(t, "inline", "chains", 0);

	report_filters_str(o, &f);
	table_add_meta(t, "filters", f.s ? f.s : "", 0);
	if (o->where && o->where->ready) {	/* what the condition kept */
		char wn[1200];

		where_note(o->where, wn, sizeof(wn));
		table_add_meta(t, "where", wn, 0);
	}
	if (o->limit)
		meta_int(t, "limit", (int64_t)o->limit);
	free(f.s);
	free(ev.s);
}

static struct table *table_make(struct report *r)
{
	const struct db_session *s = &r->sum->session;
	struct report_derived mt[3 * STROBE_MAX_COUNTERS + 1];
	int nmt = report_derived_list(s, mt, ARRAY_SIZE(mt));
	struct table *t = table_new();
	int c_proc = -1, c_bin, c_bid, c_sym, c_src = -1, c_samples, c_pct, c_ev0 = 0, c_mt0 = 0;
	int c_inl = -1, by_cg = r->o->by == REPORT_BY_CGROUP;
	struct report_mcols *mc;
	size_t i, nrows = 0;
	int k;

	if (r->qf.split && !by_cg)
		c_proc = table_add_col(t, "process", COL_STR);
	c_bin = table_add_col(t, by_cg ? "cgroup" : "binary", COL_STR);
	c_bid = by_cg ? -1 : table_add_col(t, "build_id", COL_STR);
	c_sym = by_cg ? -1 : table_add_col(t, "symbol", COL_STR);
	if (r->o->by == REPORT_BY_LINE)
		c_src = table_add_col(t, "source", COL_STR);
	c_samples = table_add_col(t, "samples", COL_INT);
	c_pct = table_add_col(t, "percent", COL_PCT);
	for (k = 0; k < r->nev; k++) {
		int c = table_add_col(t, s->events[k].name, COL_INT);

		if (!k)
			c_ev0 = c;
	}
	for (k = 0; k < nmt; k++) {
		int c = table_add_col(t, mt[k].name, mt[k].type);

		if (!k)
			c_mt0 = c;
	}
	if (r->o->inline_chain)	/* last: the other columns keep their places */
		c_inl = table_add_col(t, "inline", COL_STR);
	mc = report_mcols_add(t, r->o, s);	/* -M: after all the others */
	report_add_meta(t, r->o, r->sum);

	report_rank_groups(r);
	for (i = 0; i < r->groups.n && (!r->o->limit || nrows < r->o->limit); i++) {
		const struct group *g = &r->groups.v[i];
		const struct bin *b = &r->bins[g->bin];
		size_t row;

		/* --symbol: that symbol's rows only, of the same ranking */
		if (r->o->symbol && (!g->symbol || strcmp(g->symbol, r->o->symbol)))
			continue;
		row = table_add_row(t);
		nrows++;
		if (c_proc >= 0) {
			char l[64];

			procset_label(&r->qf.procs, r->o->pid, g->proc, l, sizeof(l));
			table_set_str(t, row, c_proc, l);
		}
		table_set_str(t, row, c_bin, g->binary);
		if (c_bid >= 0)
			table_set_str(t, row, c_bid, b->build_id);
		if (c_sym >= 0)
			table_set_str(t, row, c_sym, g->symbol);
		if (c_src >= 0)
			table_set_str(t, row, c_src, g->source ? g->source : "");
		table_set_int(t, row, c_samples, (int64_t)g->samples);
		table_set_float(t, row, c_pct, r->sum->weight ?
				100.0 * g->weight / r->sum->weight : 0);
		for (k = 0; k < r->nev; k++)
			table_set_int(t, row, c_ev0 + k, (int64_t)g->c[k]);
		for (k = 0; k < nmt; k++) {
			uint64_t den = g->c[mt[k].den];

			if (den)	/* zero denominator: null */
				table_set_float(t, row, c_mt0 + k,
						mt[k].scale * (double)g->c[mt[k].num] / den);
		}
		if (c_inl >= 0)
			table_set_str(t, row, c_inl, g->inl ? g->inl : "");
		report_mcols_set(t, row, mc, g->c);
	}
	free(mc);
	return t;
}

int report_state_note(const struct db_session *s, char *buf, size_t len)
{
	if (!strcmp(s->state, "running"))
		snprintf(buf, len, "session %lld is still running: this report covers the "
			 "samples stored so far", (long long)s->id);
	else if (!strcmp(s->state, "aborted"))
		snprintf(buf, len, "session %lld was aborted (strobed stopped without ending "
			 "it): samples after the last stored batch are missing", (long long)s->id);
	else if (!strcmp(s->state, "interrupted"))
		snprintf(buf, len, "session %lld was interrupted (the strobed recording it ended "
			 "without storing its end: it was killed, or could not write): it ends "
			 "with its last stored batch, and its totals were rebuilt from the "
			 "stored samples", (long long)s->id);
	else
		return 0;
	return 1;
}

struct table *report_build(struct db *db, const struct report_opts *o,
			   struct report_summary *sum, struct error *e)
{
	struct report r = { .db = db, .o = o, .sum = sum };
	struct table *t = NULL;
	char state_note[sizeof(sum->notes[0])];

	report_locmap_init(&r.locs);
	report_groupmap_init(&r.groups);
	memset(sum, 0, sizeof(*sum));
	if (o->has_from && o->has_to && o->from_ns > o->to_ns) {
		error_set(e, "empty time range: --from is after --to");
		return NULL;
	}
	if (o->inline_chain && (o->by == REPORT_BY_BINARY || o->by == REPORT_BY_CGROUP)) {
		error_set(e, "inline chains are of symbols and lines: use --inline with "
			  "--by symbol or --by line");
		return NULL;
	}
	if (db_session_get(db, o->session, &sum->session, e) < 0 ||
	    report_metrics_check(&sum->session, o, e) < 0)
		return NULL;
	r.nev = MIN(sum->session.nr_events, STROBE_MAX_COUNTERS);
	if ((r.res = resolver_new(db, &sum->session, e))) {
		resolver_set_demangle(r.res, !o->no_demangle);
		resolver_set_inline(r.res, o->inline_chain);
	}
	if (!r.res)
		return NULL;

	if (report_state_note(&sum->session, state_note, sizeof(state_note)))
		report_note(&r, "%s", state_note);

	if (report_gather(&r, e) < 0)
		goto out;
	if (o->where && o->where->ready) {
		char wn[sizeof(sum->notes[0])];

		where_note(o->where, wn, sizeof(wn));
		report_note(&r, "%s", wn);
	}
	if (report_unattributed(db, &sum->session, sum->unattributed, e) < 0 ||
	    report_jit_notes(&r, e) < 0)
		goto out;
	report_name_and_group(&r);
	t = table_make(&r);
	if (r.dropped_notes) {
		snprintf(sum->notes[NR_NOTES - 1], sizeof(sum->notes[0]),
			 "%d more notes left out", r.dropped_notes + 1);
	}
out:
	free(r.bins);
	report_groupmap_free(&r.groups);
	report_locmap_free(&r.locs);
	qfilter_free(&r.qf);
	resolver_free(r.res);
	return t;
}

int report_opts_window(struct report_opts *o, int64_t from_ns, int64_t to_ns,
		       struct error *e)
{
	if (from_ns < 0 || to_ns <= from_ns)
		return error_set(e, "empty window: from %.9g s to %.9g s: give a window that "
				 "ends after it starts, at or after 0 s", from_ns / 1e9,
				 to_ns / 1e9);
	o->has_from = o->has_to = o->window = 1;
	o->from_ns = from_ns;
	o->to_ns = to_ns - 1;	/* the filters' --to is inclusive; times are whole ns */
	return 0;
}

int report_window_whole(struct db *db, const struct db_session *s, const struct report_opts *o)
{
	/* the earliest sample is in the first fine bucket, the latest in the
	 * last: two lookups on sample_time's key (session_id, bucket, ...) */
	static const char sql[] =
		"SELECT (SELECT min(min_ns) FROM sample_time WHERE session_id=?1 AND "
		"bucket=(SELECT min(bucket) FROM sample_time WHERE session_id=?1)),"
		"(SELECT max(max_ns) FROM sample_time WHERE session_id=?1 AND "
		"bucket=(SELECT max(bucket) FROM sample_time WHERE session_id=?1))";
	sqlite3_stmt *st;
	int whole = 0;

	if (!o->window || o->where || !db_session_complete(s) || s->time_bucket_ns <= 0)
		return 0;
	if (sqlite3_prepare_v2(db_sqlite(db), sql, -1, &st, NULL))
		return 0;
	sqlite3_bind_int64(st, 1, s->id);
	if (sqlite3_step(st) == SQLITE_ROW && sqlite3_column_type(st, 0) != SQLITE_NULL &&
	    sqlite3_column_type(st, 1) != SQLITE_NULL)
		whole = (!o->has_from || s->start_ns + o->from_ns <= sqlite3_column_int64(st, 0)) &&
			(!o->has_to || sqlite3_column_int64(st, 1) <= s->start_ns + o->to_ns);
	sqlite3_finalize(st);
	return whole;
}

struct table *report_window(struct db *db, const struct report_opts *o, int64_t from_ns,
			    int64_t to_ns, struct report_summary *sum, struct error *e)
{
	struct report_opts w = *o;

	if (report_opts_window(&w, from_ns, to_ns, e) < 0) {
		memset(sum, 0, sizeof(*sum));
		return NULL;
	}
	return report_build(db, &w, sum, e);
}

int report_unscheduled(struct db *db, int64_t session, struct report_unsched *u,
		       struct error *e)
{
	sqlite3_stmt *st;
	int rc;

	memset(u, 0, sizeof(*u));
	if (sqlite3_prepare_v2(db_sqlite(db), "SELECT kind='unschedulable',cpu,"
			       "sum(enabled_ns-running_ns),count(*),min(start_ns) FROM unscheduled "
			       "WHERE session_id=?1 GROUP BY 1,2 ORDER BY 1,2", -1, &st, NULL))
		return db_sql_error(db, e, "reading when sampling groups did not count");
	sqlite3_bind_int64(st, 1, session);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		int k = sqlite3_column_int(st, 0) ? 1 : 0;
		size_t n = strlen(u->cpus[k]);

		u->ns[k] += (uint64_t)sqlite3_column_int64(st, 2);
		u->intervals[k] += (uint64_t)sqlite3_column_int64(st, 3);
		if (!u->nr_cpus[k]++ || sqlite3_column_int64(st, 4) < u->first_ns[k])
			u->first_ns[k] = sqlite3_column_int64(st, 4);
		if (n + 16 < sizeof(u->cpus[k]))
			snprintf(u->cpus[k] + n, sizeof(u->cpus[k]) - n, "%s%d", n ? ", " : "",
				 sqlite3_column_int(st, 1));
		else if (!strstr(u->cpus[k], "..."))
			snprintf(u->cpus[k] + n, sizeof(u->cpus[k]) - n, ", ...");
	}
	sqlite3_finalize(st);
	if (rc != SQLITE_DONE)
		return db_sql_error(db, e, "reading when sampling groups did not count");
	return 0;
}

const char *report_lost_kind(const char *kind)
{
	if (!strcmp(kind, "ring"))
		return "ring buffer full";
	if (!strcmp(kind, "samples"))
		return "dropped by the kernel";
	if (!strcmp(kind, "throttle"))
		return "throttled";
	if (!strcmp(kind, "spool"))
		return "not stored: strobed died with them spooled";
	return kind;
}

int report_parse_by(const char *s, enum report_by *by)
{
	if (!s)
		return -1;
	if (!strcmp(s, "binary"))
		*by = REPORT_BY_BINARY;
	else if (!strcmp(s, "symbol"))
		*by = REPORT_BY_SYMBOL;
	else if (!strcmp(s, "line"))
		*by = REPORT_BY_LINE;
	else if (!strcmp(s, "cgroup"))
		*by = REPORT_BY_CGROUP;
	else
		return -1;
	return 0;
}
