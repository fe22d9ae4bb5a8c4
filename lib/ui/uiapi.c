/*
 * uiapi.c - the JSON API of 'strobe ui' (uiapi.h): its routes, and the
 * sessions, hot spots, source lines, diff and series, every answer
 * computed by lib/query's window calls and the tables written by
 * lib/query/output.c (the bytes of the commands' --format json).  The
 * parameters are uiargs.c's, the flame graph uiflame.c's, onsets and
 * phases uionsets.c's (uiapi_int.h).
 */
#include "config.h"
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "diff.h"
#include "expr.h"
#include "metrics.h"
#include "output.h"
#include "report.h"
#include "series.h"
#include "timeline.h"
#include "uiapi.h"
#include "uiapi_int.h"
#include "uijson.h"
#include "where.h"

#define MAX_BUCKETS	10000
#define MAX_LIMIT	100000
#define DEF_BUCKETS	1000

/* ---- sessions ---- */

/* A session's figures, "host" first for the fleet's (host non-empty). */
static void session_json(FILE *f, const char *host, const struct db_session *s)
{
	fputc('{', f);
	if (host[0]) {
		fputs("\"host\":", f);
		json_write_string(f, host);
		fputc(',', f);
	}
	fprintf(f, "\"id\":%" PRId64 ",\"name\":", s->id);
	json_write_string(f, s->name);
	fputs(",\"state\":", f);
	json_write_string(f, s->state);
	fprintf(f, ",\"start_wall_ns\":%" PRId64 ",\"duration_ns\":%" PRId64
		",\"samples\":%" PRId64 ",\"lost\":%" PRId64 ",\"throttled\":%" PRId64
		",\"sample_event\":", s->start_ns + s->wall_offset_ns, s->duration_ns,
		s->samples, s->lost, s->throttled);
	json_write_string(f, s->sample_event);
	fputs(",\"events\":[", f);
	for (int i = 0; i < s->nr_events; i++) {
		if (i)
			fputc(',', f);
		json_write_string(f, s->events[i].name);
	}
	fputc(']', f);
}

/* Every session of the source (source_sessions()): the local ones newest
 * first, the fleet's of --host (else of every host) by host and id. */
static int api_sessions(struct source *src, const struct uiapi_args *a, struct uiapi_reply *r)
{
	struct source_session *v = NULL;
	struct error e = { "" };
	struct uiapi_out o;
	size_t n = 0;

	(void)a;
	if (source_sessions(src, src->host, 0, &v, &n, &e) < 0) {
		uiapi_fail(r, source_is_fleet(src) ? 422 : 500, "%s", e.msg);
		return 1;
	}
	uiapi_out_open(&o);
	fputs("{\"sessions\":[", o.f);
	for (size_t i = 0; i < n; i++) {
		if (i)
			fputc(',', o.f);
		session_json(o.f, v[i].host, &v[i].s);
		fputc('}', o.f);
	}
	fputs("]}\n", o.f);
	uiapi_out_done(&o, r, TYPE_JSON);
	free(v);
	return 1;
}

/* ?KEY=ID (default def) of the fleet, of host ?HKEY= (else ?host=, else
 * --host): its row in *ss.  0, or 1 after uiapi_fail(). */
static int arg_fleet_session(struct source *src, const struct uiapi_args *a, const char *key,
			     const char *hkey, int64_t def, struct source_session *ss,
			     struct uiapi_reply *r)
{
	struct source_session *v = NULL;
	struct error e = { "" };
	const char *host;
	int64_t id;
	size_t n = 0;

	if (uiapi_arg_int(a, key, def, INT64_MAX, &id, r) || uiapi_arg_str(a, hkey, &host, r) ||
	    (!host && uiapi_arg_str(a, "host", &host, r)))
		return 1;
	if (!host)
		host = src->host;
	if (id <= 0)
		return uiapi_fail(r, 400, "missing %s: give a session id, as /api/sessions lists them",
			    key);
	if (source_sessions(src, host, id, &v, &n, &e) < 0)
		return uiapi_fail(r, strncmp(e.msg, "no session", 10) ? 422 : 404, "%s", e.msg);
	if (n > 1) {
		free(v);
		return uiapi_fail(r, 400, "session %" PRId64 " is of several hosts: give %s=HOST", id,
			    hkey);
	}
	*ss = v[0];
	free(v);
	return 0;
}

/* metric_covered()'s question: did session ctx count the event name? */
static int session_has(void *ctx, const char *name)
{
	const struct db_session *s = ctx;

	for (int i = 0; i < s->nr_events; i++)
		if (metric_event_is(name, s->events[i].name))
			return 1;
	return 0;
}

static int api_session(struct source *src, const struct uiapi_args *a, struct uiapi_reply *r)
{
	struct source_session *ss = xcalloc(1, sizeof(*ss));
	struct db_session *s = &ss->s;
	struct timeline_opts to = { .pid = -1 };
	struct timeline *t = NULL;
	const struct metric *all;
	struct error e = { "" };
	size_t nm = 0;
	struct uiapi_out o;
	int n = 0;

	if (source_is_fleet(src) ?
	    arg_fleet_session(src, a, "session", "host", src->session, ss, r) :
	    uiapi_arg_session(src, a, "session", 0, s, r))
		goto out;
	to.session = s->id;
	/* its markers (the fleet keeps none): none when it fails */
	if (!source_is_fleet(src))
		t = timeline_events(src->db, &to, &e);
	uiapi_out_open(&o);
	session_json(o.f, ss->host, s);
	fprintf(o.f, ",\"nr_cpus\":%" PRId64 ",\"start_ns\":%" PRId64 ",\"has_stacks\":%s,"
		"\"metrics\":[", s->nr_cpus, s->start_ns, s->call_graph[0] ? "true" : "false");
	all = metrics_all(&nm);
	for (size_t i = 0; i < nm; i++) {
		struct error me = { "" };

		if (metric_covered(&all[i], session_has, s, "the session", &me) < 0)
			continue;
		if (n++)
			fputc(',', o.f);
		json_write_string(o.f, all[i].name);
	}
	fprintf(o.f, "],\"markers\":%zu}\n", t ? t->nmarkers : 0);
	uiapi_out_done(&o, r, TYPE_JSON);
out:
	if (t)
		timeline_free(t);
	free(ss);
	return 1;
}

/* ---- hot spots, comparison ---- */

/* ?metric=M (repeatable) into o's -M metrics. */
static int arg_metrics(const struct uiapi_args *a, struct report_opts *o,
		       struct uiapi_reply *r)
{
	for (size_t i = 0; i < a->n; i++) {
		const struct metric *m;
		int dup = 0;

		if (strcmp(a->key[i], "metric"))
			continue;
		if (!(m = metric_find(a->val[i])))
			return uiapi_fail(r, 400, "bad metric: give a metric's name, as 'strobe list "
				    "--metrics' lists them");
		for (int j = 0; j < o->nr_metrics; j++)
			dup |= o->metrics[j] == m;
		if (dup)
			continue;
		if (o->nr_metrics == REPORT_METRICS_MAX)
			return uiapi_fail(r, 400, "too many metric: at most %d", REPORT_METRICS_MAX);
		o->metrics[o->nr_metrics++] = m;
	}
	return 0;
}

/* The fleet's report (source_report()) of src's selection, --host and
 * ?session= (else --session), over [from, to) when given: strobe report
 * --source URL --host H --session ID --from --to --format json's bytes. */
static int fleet_report(struct source *src, const struct uiapi_args *a, struct report_opts *o,
			struct uiapi_reply *r)
{
	struct source_summary *ss = xcalloc(1, sizeof(*ss));
	int64_t keep = src->session, id, from, to;
	struct error e = { "" };
	struct table *t = NULL;

	if (uiapi_arg_int(a, "session", src->session, INT64_MAX, &id, r) ||
	    uiapi_arg_int(a, "from", 0, INT64_MAX / 2, &from, r) ||
	    uiapi_arg_int(a, "to", INT64_MAX / 2, INT64_MAX / 2, &to, r))
		goto out;
	if ((uiapi_arg(a, "from") || uiapi_arg(a, "to")) && report_opts_window(o, from, to, &e) < 0) {
		uiapi_fail(r, 400, "%s", e.msg);
		goto out;
	}
	if (o->nr_metrics && (!src->host || !id)) {
		uiapi_fail(r, 400, "metric of the fleet is of one session's table: give --host to "
		     "strobe ui and session=ID");
		goto out;
	}
	src->session = id;		/* the fleet's selection: src's */
	t = source_report(src, o, 0, ss, &e);
	src->session = keep;
	if (!t) {
		uiapi_fail(r, 422, "%s", e.msg);
		goto out;
	}
	if (o->nr_metrics && report_metrics_check(&ss->sum.session, o, &e) < 0) {
		uiapi_fail(r, 400, "%s", e.msg);
		goto out;
	}
	uiapi_reply_table(t, r);
out:
	table_free(t);
	source_summary_free(ss);
	free(ss);
	return 1;
}

/* The reply of api_report and api_lines once their arguments are parsed:
 * report_window() of session S over [from, to) with o's filters, at most
 * limit rows, as JSON (400 for a metric S lacks, 422 for report's error). */
static void report_reply(struct source *src, struct report_opts *o,
			 const struct db_session *s, int64_t from, int64_t to,
			 int64_t limit, struct uiapi_reply *r)
{
	struct report_summary *sum = xcalloc(1, sizeof(*sum));
	struct error e = { "" };
	struct table *t = NULL;

	o->session = s->id;
	o->limit = (size_t)limit;
	if (o->nr_metrics && report_metrics_check(s, o, &e) < 0) {
		uiapi_fail(r, 400, "%s", e.msg);
		goto out;
	}
	if (!(t = report_window(src->db, o, from, to, sum, &e))) {
		uiapi_fail(r, 422, "%s", e.msg);
		goto out;
	}
	uiapi_reply_table(t, r);
out:
	table_free(t);
	free(sum);
}

/* strobe report --format json of [from, to): report_window(). */
static int api_report(struct source *src, const struct uiapi_args *a, struct uiapi_reply *r)
{
	struct report_opts o = { .by = REPORT_BY_SYMBOL, .pid = -1, .mode = REPORT_ALL };
	struct db_session *s = xmalloc(sizeof(*s));
	struct where w;
	int64_t from, to, limit;
	int on = 0;

	if (uiapi_arg_where(src, a, &w, &on, r))
		goto out;
	if (source_is_fleet(src)) {
		if (!uiapi_arg_by(a, &o.by, r) && !uiapi_arg_int(a, "limit", 0, MAX_LIMIT, &limit, r) &&
		    !arg_metrics(a, &o, r)) {
			o.limit = (size_t)limit;
			if (o.by == REPORT_BY_LINE)
				uiapi_fail(r, 400, "bad by: the fleet has no source lines: give symbol or "
				     "binary");
			else
				fleet_report(src, a, &o, r);
		}
		goto out;
	}
	if (uiapi_arg_session(src, a, "session", 0, s, r) ||
	    uiapi_arg_window(a, "from", "to", s, &from, &to, r) || uiapi_arg_by(a, &o.by, r) ||
	    uiapi_arg_int(a, "limit", 0, MAX_LIMIT, &limit, r) || arg_metrics(a, &o, r))
		goto out;
	if (on) {
		o.where = &w;
		if (uiapi_where_ready_window(src, &w, s, &o, from, to, r))
			goto out;
	}
	report_reply(src, &o, s, from, to, limit, r);
out:
	if (on)
		where_free(&w);
	free(s);
	return 1;
}

/* strobe report --by line --binary B --symbol S --from --to --format json:
 * the source lines of one symbol of one binary over [from, to), through
 * report's own filters (report_window()). */
static int api_lines(struct source *src, const struct uiapi_args *a, struct uiapi_reply *r)
{
	struct report_opts o = { .by = REPORT_BY_LINE, .pid = -1, .mode = REPORT_ALL };
	struct db_session *s = xmalloc(sizeof(*s));
	int64_t from, to, limit;

	if (source_is_fleet(src)) {
		uiapi_fail(r, 422, "source lines of the fleet (--source) are not served: the fleet "
		     "keeps no source lines; open a local database with --db");
		goto out;
	}
	if (uiapi_arg_session(src, a, "session", 0, s, r) ||
	    uiapi_arg_window(a, "from", "to", s, &from, &to, r) ||
	    uiapi_arg_str(a, "binary", &o.binary, r) || uiapi_arg_str(a, "symbol", &o.symbol, r) ||
	    uiapi_arg_int(a, "limit", 0, MAX_LIMIT, &limit, r) || arg_metrics(a, &o, r))
		goto out;
	if (!o.binary || !o.symbol) {
		uiapi_fail(r, 400, "missing %s: give the %s's name as /api/report's rows show it",
		     o.binary ? "symbol" : "binary", o.binary ? "symbol" : "binary");
		goto out;
	}
	report_reply(src, &o, s, from, to, limit, r);
out:
	free(s);
	return 1;
}

/* strobe diff --where C [--from A --to B] ID --format json: the window of
 * session ?session= where C fails (A) against where it holds (B):
 * diff_build_where().  1 (the reply made). */
static int where_diff(struct source *src, const struct uiapi_args *a, struct report_opts *o,
		      struct uiapi_reply *r)
{
	struct db_session *s = xmalloc(sizeof(*s));
	struct error e = { "" };
	struct diff *d = NULL;
	struct table *t = NULL;
	int64_t from, to, limit;
	int rc;

	if (uiapi_arg_session(src, a, "session", 0, s, r) ||
	    uiapi_arg_window(a, "from", "to", s, &from, &to, r) || uiapi_arg_by(a, &o->by, r) ||
	    uiapi_arg_int(a, "limit", 0, MAX_LIMIT, &limit, r))
		goto out;
	o->session = s->id;
	if (report_opts_window(o, from, to, &e) < 0) {
		uiapi_fail(r, 400, "%s", e.msg);
		goto out;
	}
	if (uiapi_where_ready(src, o->where, s, o, r))
		goto out;
	rc = diff_build_where(src->db, o->by, o, &d, &e);
	if (rc < 0) {
		uiapi_fail(r, rc == -2 ? 400 : 422, "%s", e.msg);
		goto out;
	}
	t = diff_table(d, o, OUTPUT_JSON, (size_t)limit);
	uiapi_reply_table(t, r);
out:
	table_free(t);
	diff_free(d);
	free(s);
	return 1;
}


/* strobe diff ID@A-B ID@C-D --format json (the fleet's: strobe diff
 * --source URL HOST:ID@A-B HOST:ID@C-D): source_diff_windows(); with
 * ?where= each window's samples the condition keeps, or without a_from
 * where_diff(). */
static int api_diff(struct source *src, const struct uiapi_args *a, struct uiapi_reply *r)
{
	struct report_opts o = { .by = REPORT_BY_SYMBOL, .pid = -1, .mode = REPORT_ALL };
	struct source_session *s = xcalloc(2, sizeof(*s));
	struct source_side side[2] = { { NULL, 0 }, { NULL, 0 } };
	int fleet = source_is_fleet(src);
	struct diff_window w[2];
	struct error e = { "" };
	struct diff *d = NULL;
	struct table *t = NULL;
	struct where wh;
	int64_t limit, def = 0;
	int rc, on = 0;

	if (uiapi_arg_where(src, a, &wh, &on, r))
		goto out;
	if (on) {
		o.where = &wh;
		if (!uiapi_arg(a, "a_from")) {
			where_diff(src, a, &o, r);
			goto out;
		}
	}
	if (uiapi_arg_int(a, "session", fleet ? src->session : 0, INT64_MAX, &def, r))
		goto out;
	if (fleet ? arg_fleet_session(src, a, "a_session", "a_host", def, &s[0], r) ||
		    arg_fleet_session(src, a, "b_session", "b_host", def, &s[1], r) :
		    uiapi_arg_session(src, a, "a_session", def, &s[0].s, r) ||
		    uiapi_arg_session(src, a, "b_session", def, &s[1].s, r))
		goto out;
	if (uiapi_arg_need(a, "a_from", INT64_MAX / 2, &w[0].from_ns, r) ||
	    uiapi_arg_need(a, "a_to", INT64_MAX / 2, &w[0].to_ns, r) ||
	    uiapi_arg_need(a, "b_from", INT64_MAX / 2, &w[1].from_ns, r) ||
	    uiapi_arg_need(a, "b_to", INT64_MAX / 2, &w[1].to_ns, r) ||
	    uiapi_arg_by(a, &o.by, r) || uiapi_arg_int(a, "limit", 0, MAX_LIMIT, &limit, r))
		goto out;
	if (fleet && o.by == REPORT_BY_LINE) {
		uiapi_fail(r, 400, "bad by: the fleet has no source lines: give symbol or binary");
		goto out;
	}
	for (int i = 0; i < 2; i++) {
		w[i].session = s[i].s.id;
		side[i].host = s[i].host;
		side[i].id = s[i].s.id;
	}
	if (on && uiapi_where_ready_window(src, &wh, &s[0].s, &o, w[0].from_ns, w[0].to_ns, r))
		goto out;
	rc = source_diff_windows(src, &side[0], &side[1], w, &o, 0, &d, &e);
	if (rc < 0) {
		uiapi_fail(r, rc == -2 ? 400 : 422, "%s", e.msg);
		goto out;
	}
	t = diff_table(d, &o, OUTPUT_JSON, (size_t)limit);
	uiapi_reply_table(t, r);
out:
	table_free(t);
	diff_free(d);
	if (on)
		where_free(&wh);
	free(s);
	return 1;
}

/* ---- series ---- */

/* ?event= (repeatable) or ?metric= into req (the metric parsed into *x). */
int uiapi_series_what(const struct uiapi_args *a, struct series_req *req, const char **ev,
		       struct expr **x, char **text, struct uiapi_reply *r)
{
	const char *m;
	struct error e = { "" };

	for (size_t i = 0; i < a->n; i++) {
		if (strcmp(a->key[i], "event"))
			continue;
		if (!*a->val[i] || strlen(a->val[i]) > UIAPI_MAX_NAME)
			return uiapi_fail(r, 400, "bad event: give an event's name of 1 to %d bytes",
				    UIAPI_MAX_NAME);
		if (req->nevents == 16)
			return uiapi_fail(r, 400, "too many event: at most 16");
		ev[req->nevents++] = a->val[i];
	}
	if (uiapi_arg_str(a, "metric", &m, r))
		return 1;
	if (m && req->nevents)
		return uiapi_fail(r, 400, "event and metric exclude each other: give one");
	if (!m) {
		if (!req->nevents)
			ev[req->nevents++] = "samples";
		req->events = ev;
		return 0;
	}
	if ((req->catalog = metric_find(m))) {
		*text = metric_expr_scaled(req->catalog);
		*x = expr_parse(*text, &e);
		req->metric_src = req->catalog->name;
	} else {
		*x = expr_parse(m, &e);
		req->metric_src = m;
	}
	if (!*x)
		return uiapi_fail(r, 400, "bad metric: %s", e.msg);
	req->metric = *x;
	return 0;
}

static int api_series(struct source *src, const struct uiapi_args *a, struct uiapi_reply *r)
{
	struct series_req req = { 0 };
	struct series_source ss;
	struct series *s = NULL;
	struct error e = { "" };
	struct expr *x = NULL;
	char *text = NULL;
	const char *ev[16], *by;
	int64_t from, to, buckets, top, fine;
	int nsess, nhost, rc, on = 0;
	struct where w;
	struct uiapi_out out;

	if (uiapi_arg_where(src, a, &w, &on, r))
		goto out;
	if (source_series(src, &ss, &nsess, &nhost, &e) < 0) {
		uiapi_fail(r, 404, "%s", e.msg);
		goto out;
	}
	if (!source_is_fleet(src) && uiapi_arg_session(src, a, "session", 0, &ss.session, r))
		goto out;
	if (!source_is_fleet(src) && series_source_db(&ss, src->db, ss.session.id, &e) < 0) {
		uiapi_fail(r, 404, "%s", e.msg);
		goto out;
	}
	req.opts.pid = -1;
	req.opts.session = ss.session.id;
	by = uiapi_arg(a, "by");
	if (by && (timeline_parse_by(by, &req.opts.by) < 0 ||
		   (req.opts.by == TL_BY_HOST && !source_is_fleet(src))))
		goto bad_by;
	if (uiapi_arg_window(a, "from", "to", &ss.session, &from, &to, r) ||
	    uiapi_arg_int(a, "buckets", DEF_BUCKETS, MAX_BUCKETS, &buckets, r) ||
	    uiapi_arg_int(a, "top", TL_TOP_DEFAULT, 64, &top, r) ||
	    uiapi_series_what(a, &req, ev, &x, &text, r))
		goto out;
	if (buckets < 1 || top < 1) {
		uiapi_fail(r, 400, "bad %s: give at least 1", buckets < 1 ? "buckets" : "top");
		goto out;
	}
	if (to > ss.session.duration_ns && ss.session.duration_ns > 0)
		to = ss.session.duration_ns;
	/* the range in at most `buckets` buckets, each whole fine buckets of
	 * the session's sample_time (as plot --bucket takes them) */
	fine = ss.session.time_bucket_ns > 0 ? ss.session.time_bucket_ns : 1000000;
	req.opts.bucket_ns = (to - from + buckets - 1) / buckets;
	req.opts.bucket_ns = (req.opts.bucket_ns + fine - 1) / fine * fine;
	req.opts.has_from = req.opts.has_to = 1;
	req.opts.from_ns = from;
	req.opts.to_ns = to;
	req.opts.top = (int)top;
	if (on) {	/* the condition over the same range */
		struct report_opts ro = { .pid = -1, .mode = REPORT_ALL, .session = ss.session.id,
					  .has_from = 1, .has_to = 1, .from_ns = from, .to_ns = to };

		if (uiapi_where_ready(src, &w, &ss.session, &ro, r))
			goto out;
		req.opts.where = &w;
	}
	rc = series_compute(&ss, &req, &s, &e);
	if (rc < 0) {
		uiapi_fail(r, rc == -1 ? 422 : 400, "%s", e.msg);
		goto out;
	}
	uiapi_out_open(&out);
	uijson_series(out.f, s);
	uiapi_out_done(&out, r, TYPE_JSON);
	goto out;
bad_by:
	uiapi_fail(r, 400, "bad by: give none, cpu, pid, binary, symbol, cgroup%s",
	     source_is_fleet(src) ? " or host" : "");
out:
	if (s)
		series_free(s);
	if (on)
		where_free(&w);
	expr_free(x);
	free(text);
	return 1;
}

/*
 * The fleet's selection for one request: ?host= and ?session= (the page
 * sends both once a host's session is picked: ids repeat across hosts)
 * in place of strobe ui's --host and --session, so that the series, the
 * report and the diff are all of the session the page shows; the spec's
 * again after it (source_pick()).  The server runs one request at a time
 * on src (uiserver.c's lock).  0 with *host and *session the spec's, or
 * 1 after uiapi_fail().
 */
static int fleet_pick(struct source *src, const struct uiapi_args *a, const char **host,
		      int64_t *session, struct uiapi_reply *r)
{
	const char *h;
	int64_t id;

	*host = src->host;
	*session = src->session;
	if (uiapi_arg_str(a, "host", &h, r) || uiapi_arg_int(a, "session", src->session, INT64_MAX, &id, r))
		return 1;
	if (h)
		source_pick(src, h, id);
	return 0;
}

int uiapi_handle(struct source *src, const char *path, const struct uiapi_args *args,
		 struct uiapi_reply *r)
{
	static const struct {
		const char *path;
		int (*fn)(struct source *, const struct uiapi_args *, struct uiapi_reply *);
	} routes[] = {
		{ "sessions", api_sessions },
		{ "session", api_session },
		{ "series", api_series },
		{ "report", api_report },
		{ "lines", api_lines },
		{ "flame", uiapi_flame },
		{ "diff", api_diff },
		{ "onsets", uiapi_onsets },
		{ "phases", uiapi_phases },
	};

	const char *host;
	int64_t session;
	int found;

	for (size_t i = 0; i < ARRAY_SIZE(routes); i++) {
		if (strcmp(path, routes[i].path))
			continue;
		/* the list is of every session (of --host): no pick */
		if (!source_is_fleet(src) || i == 0)
			return routes[i].fn(src, args, r);
		if (fleet_pick(src, args, &host, &session, r))
			return 1;
		found = routes[i].fn(src, args, r);
		source_pick(src, host, session);
		return found;
	}
	return 0;
}
