/*
 * source.c - a source (source.h): the local database's side of each query,
 * and the dispatch of a fleet source's to lib/fleet/fleetsource.c.
 */
#include "config.h"
#include <stdlib.h>
#include <string.h>
#include "source.h"
#include "fleetexport.h"
#include "fleetquery.h"
#include "fleetsource.h"
#include "sessionexport.h"

int source_check(const struct source_spec *spec, struct error *e)
{
	return spec->url ? fleetsource_check(spec->url, e) : 0;
}

int source_open(const struct source_spec *spec, struct source *src, struct error *e)
{
	memset(src, 0, sizeof(*src));
	if (spec->url)
		return fleetsource_open(spec, src, e);
	src->db = db_open(spec->db, DB_READ, e);
	if (!src->db)
		return -1;
	src->host = spec->host;
	src->session = spec->session;
	return 0;
}

void source_close(struct source *src)
{
	if (src->fleet)
		fleetsource_close(src);
	if (src->db)
		db_close(src->db);
	memset(src, 0, sizeof(*src));
}

void source_pick(struct source *src, const char *host, int64_t session)
{
	if (src->fleet)
		fleetsource_pick(src, host, session);
}

int source_session(struct source *src, int64_t id, struct db_session *s, struct error *e)
{
	if (!src->db)
		return error_set(e, "the fleet's sessions are read with its queries");
	return db_session_get(src->db, id, s, e);
}

/* ---- the sessions ---- */

int source_sessions(struct source *src, const char *host, int64_t id,
		    struct source_session **out, size_t *n, struct error *e)
{
	int64_t max = 0;

	*out = NULL;
	*n = 0;
	if (src->fleet)
		return fleetquery_sessions(src->fleet, &(struct fleet_opts){ .host = host,
					   .session = id }, out, n, e);
	if (id > 0) {
		*out = xcalloc(1, sizeof(**out));
		if (db_session_get(src->db, id, &(*out)->s, e) < 0) {
			free(*out);
			*out = NULL;
			return -1;
		}
		*n = 1;
		return 0;
	}
	if (db_session_max_id(src->db, &max, e) < 0)
		return -1;
	/* by id downwards; the ids of removed sessions are skipped */
	for (id = max; id > 0; id--) {
		struct source_session *x;

		*out = xrealloc(*out, (*n + 1) * sizeof(**out));
		x = &(*out)[*n];
		memset(x->host, 0, sizeof(x->host));
		if (db_session_get(src->db, id, &x->s, e) == 0)
			(*n)++;
	}
	e->msg[0] = 0;
	return 0;
}

/* ---- hot spots ---- */

void source_summary_free(struct source_summary *ss)
{
	free(ss->lost);
	ss->lost = NULL;
	ss->nlost = 0;
}

struct table *source_report(struct source *src, const struct report_opts *o, int by_host,
			    struct source_summary *ss, struct error *e)
{
	struct report_opts lo = *o;
	struct table *t;

	memset(ss, 0, sizeof(*ss));
	if (src->fleet)
		return fleetsource_report(src, o, by_host, ss, e);
	if (by_host) {
		error_set(e, "--by host is of fleet reports: give --source URL");
		return NULL;
	}
	lo.session = src->session;
	t = report_build(src->db, &lo, &ss->sum, e);
	if (!t)
		return NULL;
	ss->nr_sessions = 1;
	ss->nr_hosts = 1;
	source_lost_load(src, ss);
	return t;
}

void source_lost_load(struct source *src, struct source_summary *ss)
{
	/* by kind and CPU; sessions older than the lost table: by CPU */
	static const char *const sql[] = {
		"SELECT kind,cpu,sum(count) FROM lost WHERE session_id=?1 "
		"GROUP BY kind,cpu HAVING sum(count)>0 ORDER BY kind,cpu",
		"SELECT '',cpu,lost FROM session_cpus WHERE session_id=?1 AND lost>0 "
		"ORDER BY cpu",
	};

	if (!src->db || ss->sum.session.lost <= 0 || ss->lost)
		return;
	for (size_t q = 0; q < ARRAY_SIZE(sql) && !ss->nlost; q++) {
		sqlite3_stmt *st;

		if (sqlite3_prepare_v2(db_sqlite(src->db), sql[q], -1, &st, NULL))
			return;
		sqlite3_bind_int64(st, 1, ss->sum.session.id);
		while (sqlite3_step(st) == SQLITE_ROW) {
			const char *k = (const char *)sqlite3_column_text(st, 0);
			struct source_lost *l;

			ss->lost = xrealloc(ss->lost, (ss->nlost + 1) * sizeof(*ss->lost));
			l = &ss->lost[ss->nlost++];
			snprintf(l->kind, sizeof(l->kind), "%s", k ? k : "");
			l->cpu = sqlite3_column_int(st, 1);
			l->count = sqlite3_column_int64(st, 2);
		}
		sqlite3_finalize(st);
	}
}

int64_t source_uncertain(struct source *src, int64_t session, char *buf, size_t len)
{
	struct sbuf b = { 0 };
	sqlite3_stmt *st;
	int64_t nr = 0;

	buf[0] = 0;
	if (!src->db || sqlite3_prepare_v2(db_sqlite(src->db),
					   "SELECT p.pid, coalesce(c.name, '') FROM processes p "
					   "LEFT JOIN comms c ON c.id = p.comm_id "
					   "WHERE p.session_id = ?1 AND p.uncertain_ns IS NOT NULL "
					   "ORDER BY p.uncertain_ns, p.pid", -1, &st, NULL))
		return 0;	/* the fleet, or a session of an older schema: none marked */
	sqlite3_bind_int64(st, 1, session);
	while (sqlite3_step(st) == SQLITE_ROW) {
		char name[32];
		const unsigned char *c = sqlite3_column_text(st, 1);

		if (nr++ >= 5) {
			if (nr == 7)
				sbuf_addf(&b, ", ...");
			continue;
		}
		/* a name is the process's own choice: text only */
		text_escape(name, sizeof(name), (const char *)c);
		sbuf_addf(&b, "%spid %lld%s%s%s", nr > 1 ? ", " : "",
			  (long long)sqlite3_column_int64(st, 0), name[0] ? " (" : "", name,
			  name[0] ? ")" : "");
	}
	sqlite3_finalize(st);
	if (len)
		snprintf(buf, len, "%s", b.s ? b.s : "");
	free(b.s);
	return nr;
}

int source_unscheduled(struct source *src, int64_t session, struct report_unsched *u,
		       struct error *e)
{
	if (!src->db) {
		memset(u, 0, sizeof(*u));
		return 0;
	}
	return report_unscheduled(src->db, session, u, e);
}

/* ---- series, comparison, samples ---- */

int source_series(struct source *src, struct series_source *ss, int *nsessions, int *nhosts,
		  struct error *e)
{
	if (src->fleet)
		return fleetsource_series(src, ss, nsessions, nhosts, e);
	if (series_source_db(ss, src->db, src->session, e) < 0)
		return -1;
	*nsessions = 1;
	*nhosts = 1;
	return 0;
}

int source_diff(struct source *src, const struct source_side *a, const struct source_side *b,
		const struct report_opts *o, int filtered, struct diff **out, struct error *e)
{
	if (src->fleet)
		return fleetsource_diff(src, a, b, o, filtered, out, e);
	return diff_build(src->db, a->id, b->id, o->by, o, out, e);
}

int source_diff_windows(struct source *src, const struct source_side *a,
			const struct source_side *b, const struct diff_window w[2],
			const struct report_opts *o, int filtered, struct diff **out,
			struct error *e)
{
	if (!src->fleet)
		return diff_build_windows(src->db, w, o->by, o, out, e);
	*out = NULL;
	if (!a->host || !b->host) {
		error_set(e, "a window of the fleet is of a host's session: give its host");
		return -2;
	}
	return fleetdiff_build_windows(src->fleet, a->host, b->host, w, o->by,
				       filtered ? o : NULL, out, e);
}

int source_export(struct source *src, const struct source_export_opts *o,
		  struct source_export_stats *st, struct error *e)
{
	memset(st, 0, sizeof(*st));
	if (src->fleet)
		return fleetsource_export(src, o, st, e);
	return sessionexport_run(src->db, src->session, o, st, e);
}
