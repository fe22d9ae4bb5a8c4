/*
 * uiapi.c - the JSON API of 'strobe ui' (uiapi.h): parameters checked
 * and bounded here, every answer computed by lib/query's window calls,
 * the tables written by lib/query/output.c (the bytes of the commands'
 * --format json), the folded stacks by flame_write_folded().
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
#include "flame.h"
#include "flamemetric.h"
#include "flameindex.h"
#include "metrics.h"
#include "output.h"
#include "report.h"
#include "series.h"
#include "stacks.h"
#include "timeline.h"
#include "uiapi.h"
#include "uiapi_int.h"
#include "uijson.h"
#include "where.h"

#define MAX_BUCKETS	10000
#define MAX_LIMIT	100000
#define MAX_NAME	4096
#define DEF_BUCKETS	1000

#define TYPE_JSON	"application/json"
#define TYPE_TEXT	"text/plain; charset=utf-8"

/* A reply being written: a memory stream. */
struct out {
	FILE *f;
	char *buf;
	size_t len;
};

static FILE *out_open(struct out *o)
{
	o->buf = NULL;
	o->len = 0;
	o->f = open_memstream(&o->buf, &o->len);
	return o->f;
}

/* Close o into r as a 200 of type. */
static int out_done(struct out *o, struct uiapi_reply *r, const char *type)
{
	if (fclose(o->f) == EOF) {
		free(o->buf);
		r->status = 500;
		r->type = TYPE_TEXT;
		r->body = xstrdup("strobe ui: out of memory writing the answer\n");
		r->len = strlen(r->body);
		return 1;
	}
	r->status = 200;
	r->type = type;
	r->body = o->buf;
	r->len = o->len;
	return 1;
}

/* A one-line text answer with status. */
static int fail(struct uiapi_reply *r, unsigned status, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static int vfail(struct uiapi_reply *r, unsigned status, const char *fmt, va_list ap)
{
	char line[600];

	vsnprintf(line, sizeof(line), fmt, ap);
	text_sanitize(line);		/* one line, no control characters */
	r->status = status;
	r->type = TYPE_TEXT;
	r->len = (size_t)asprintf(&r->body, "strobe ui: %s\n", line);
	return 1;
}

static int fail(struct uiapi_reply *r, unsigned status, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vfail(r, status, fmt, ap);
	va_end(ap);
	return 1;
}

/* The value of parameter key (the first), or NULL. */
static const char *arg(const struct uiapi_args *a, const char *key)
{
	for (size_t i = 0; i < a->n; i++)
		if (!strcmp(a->key[i], key))
			return a->val[i];
	return NULL;
}

/* A non-negative integer parameter (digits only) into *v, def when absent.
 * 0, or 1 after fail() (400). */
static int arg_int(const struct uiapi_args *a, const char *key, int64_t def, int64_t max,
		   int64_t *v, struct uiapi_reply *r)
{
	const char *s = arg(a, key);
	uint64_t u;

	if (!s) {
		*v = def;
		return 0;
	}
	if (strlen(s) > 20 || parse_u64(s, &u) < 0 || u > (uint64_t)max)
		return fail(r, 400, "bad %s: give an integer from 0 to %" PRId64, key, max);
	*v = (int64_t)u;
	return 0;
}

/* A required integer parameter. */
static int arg_need(const struct uiapi_args *a, const char *key, int64_t max, int64_t *v,
		    struct uiapi_reply *r)
{
	if (!arg(a, key))
		return fail(r, 400, "missing %s: give an integer from 0 to %" PRId64, key, max);
	return arg_int(a, key, 0, max, v, r);
}

/* A string parameter: bounded, NULL when absent.  0, or 1 after fail(). */
static int arg_str(const struct uiapi_args *a, const char *key, const char **v,
		   struct uiapi_reply *r)
{
	*v = arg(a, key);
	if (*v && (!**v || strlen(*v) > MAX_NAME))
		return fail(r, 400, "bad %s: give 1 to %d bytes", key, MAX_NAME);
	return 0;
}

/* t as the reply, JSON (strobe report --format json's bytes). */
static void reply_table(const struct table *t, struct uiapi_reply *r)
{
	struct out out;

	out_open(&out);
	table_write(t, OUTPUT_JSON, out.f);
	out_done(&out, r, TYPE_JSON);
}

/* ?session=ID of a local source: its row in s.  0, or 1 after fail(). */
static int arg_session(struct source *src, const struct uiapi_args *a, const char *key,
		       int64_t def, struct db_session *s, struct uiapi_reply *r)
{
	struct error e = { "" };
	int64_t id;

	if (arg_int(a, key, def, INT64_MAX, &id, r))
		return 1;
	if (id <= 0)
		return fail(r, 400, "missing %s: give a session id, as /api/sessions lists them",
			    key);
	if (db_session_get(src->db, id, s, &e) < 0)
		return fail(r, 404, "no session %" PRId64 ": give one /api/sessions lists", id);
	return 0;
}

/* ?from=&to= of session s (default its whole length). */
static int arg_window(const struct uiapi_args *a, const char *fk, const char *tk,
		      const struct db_session *s, int64_t *from, int64_t *to,
		      struct uiapi_reply *r)
{
	int64_t len = s->duration_ns > 0 ? s->duration_ns : 0;

	if (arg_int(a, fk, 0, INT64_MAX / 2, from, r) ||
	    arg_int(a, tk, len + 1, INT64_MAX / 2, to, r))
		return 1;
	if (*to <= *from)
		return fail(r, 400, "bad %s: give a time after %s (ns since the session start)",
			    tk, fk);
	return 0;
}

static int arg_by(const struct uiapi_args *a, enum report_by *by, struct uiapi_reply *r)
{
	const char *s = arg(a, "by");

	*by = REPORT_BY_SYMBOL;
	if (s && (report_parse_by(s, by) < 0 || *by == REPORT_BY_CGROUP))
		return fail(r, 400, "bad by: give symbol, binary or line");
	return 0;
}

/* ?where=EXPR OP X, with ?invert=1, ?where_sample=1, ?where_bucket=NS
 * (as the commands' --where, --invert, --where-sample, --where-bucket):
 * parsed into w, *on set when where= is given.  0, or 1 after fail()
 * (400: a bad value, or the others without where=; 422 with the fleet). */
static int arg_where(struct source *src, const struct uiapi_args *a, struct where *w, int *on,
		     struct uiapi_reply *r)
{
	struct error e = { "" };
	const char *c;
	int64_t inv, smp, bucket;

	*on = 0;
	memset(w, 0, sizeof(*w));
	if (arg_str(a, "where", &c, r) || arg_int(a, "invert", 0, 1, &inv, r) ||
	    arg_int(a, "where_sample", 0, 1, &smp, r) ||
	    arg_int(a, "where_bucket", 0, INT64_MAX / 2, &bucket, r))
		return 1;
	if (!c) {
		if (inv || smp || bucket)
			return fail(r, 400, "%s needs where: give where=EXPR OP NUMBER",
				    inv ? "invert" : smp ? "where_sample" : "where_bucket");
		return 0;
	}
	if (source_is_fleet(src))
		return fail(r, 422, "where of the fleet (--source) is not served: open a local "
			    "database with --db");
	if (where_parse(w, c, &e) < 0)
		return fail(r, 400, "%s", e.msg);
	if (bucket && (bucket < 1000 || smp)) {
		where_free(w);
		return fail(r, 400, "bad where_bucket: give ns, at least 1000, without "
			    "where_sample");
	}
	w->invert = (int)inv;
	w->per_sample = (int)smp;
	w->bucket_ns = bucket;
	*on = 1;
	return 0;
}

/* Select w for session s and o's filters before the query, so that a
 * condition the session cannot evaluate is a 400 (WHERE_BAD), anything
 * else a 422.  0, or 1 after fail(). */
static int where_ready(struct source *src, struct where *w, const struct db_session *s,
		       const struct report_opts *o, struct uiapi_reply *r)
{
	struct error e = { "" };
	int rc = where_select(w, src->db, s, o, &e);

	if (rc < 0)
		return fail(r, rc == WHERE_BAD ? 400 : 422, "%s", e.msg);
	return 0;
}

/* where_ready() of the window [from, to) of session s with o's filters. */
static int where_ready_window(struct source *src, struct where *w, const struct db_session *s,
			      const struct report_opts *o, int64_t from, int64_t to,
			      struct uiapi_reply *r)
{
	struct report_opts wo = *o;
	struct error e = { "" };

	wo.session = s->id;
	if (report_opts_window(&wo, from, to, &e) < 0)
		return fail(r, 400, "%s", e.msg);
	return where_ready(src, w, s, &wo, r);
}

static int local_only(struct source *src, const char *what, struct uiapi_reply *r)
{
	if (source_is_fleet(src))
		return fail(r, 422, "%s of the fleet (--source) is not served: the fleet keeps no "
			    "call stacks nor markers; open a local database with --db", what);
	return 0;
}

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
	struct out o;
	size_t n = 0;

	(void)a;
	if (source_sessions(src, src->host, 0, &v, &n, &e) < 0) {
		fail(r, source_is_fleet(src) ? 422 : 500, "%s", e.msg);
		return 1;
	}
	out_open(&o);
	fputs("{\"sessions\":[", o.f);
	for (size_t i = 0; i < n; i++) {
		if (i)
			fputc(',', o.f);
		session_json(o.f, v[i].host, &v[i].s);
		fputc('}', o.f);
	}
	fputs("]}\n", o.f);
	out_done(&o, r, TYPE_JSON);
	free(v);
	return 1;
}

/* ?KEY=ID (default def) of the fleet, of host ?HKEY= (else ?host=, else
 * --host): its row in *ss.  0, or 1 after fail(). */
static int arg_fleet_session(struct source *src, const struct uiapi_args *a, const char *key,
			     const char *hkey, int64_t def, struct source_session *ss,
			     struct uiapi_reply *r)
{
	struct source_session *v = NULL;
	struct error e = { "" };
	const char *host;
	int64_t id;
	size_t n = 0;

	if (arg_int(a, key, def, INT64_MAX, &id, r) || arg_str(a, hkey, &host, r) ||
	    (!host && arg_str(a, "host", &host, r)))
		return 1;
	if (!host)
		host = src->host;
	if (id <= 0)
		return fail(r, 400, "missing %s: give a session id, as /api/sessions lists them",
			    key);
	if (source_sessions(src, host, id, &v, &n, &e) < 0)
		return fail(r, strncmp(e.msg, "no session", 10) ? 422 : 404, "%s", e.msg);
	if (n > 1) {
		free(v);
		return fail(r, 400, "session %" PRId64 " is of several hosts: give %s=HOST", id,
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
	struct out o;
	int n = 0;

	if (source_is_fleet(src) ?
	    arg_fleet_session(src, a, "session", "host", src->session, ss, r) :
	    arg_session(src, a, "session", 0, s, r))
		goto out;
	to.session = s->id;
	/* its markers (the fleet keeps none): none when it fails */
	if (!source_is_fleet(src))
		t = timeline_events(src->db, &to, &e);
	out_open(&o);
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
	out_done(&o, r, TYPE_JSON);
out:
	if (t)
		timeline_free(t);
	free(ss);
	return 1;
}

/* ---- hot spots, flame graph, comparison ---- */

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
			return fail(r, 400, "bad metric: give a metric's name, as 'strobe list "
				    "--metrics' lists them");
		for (int j = 0; j < o->nr_metrics; j++)
			dup |= o->metrics[j] == m;
		if (dup)
			continue;
		if (o->nr_metrics == REPORT_METRICS_MAX)
			return fail(r, 400, "too many metric: at most %d", REPORT_METRICS_MAX);
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

	if (arg_int(a, "session", src->session, INT64_MAX, &id, r) ||
	    arg_int(a, "from", 0, INT64_MAX / 2, &from, r) ||
	    arg_int(a, "to", INT64_MAX / 2, INT64_MAX / 2, &to, r))
		goto out;
	if ((arg(a, "from") || arg(a, "to")) && report_opts_window(o, from, to, &e) < 0) {
		fail(r, 400, "%s", e.msg);
		goto out;
	}
	if (o->nr_metrics && (!src->host || !id)) {
		fail(r, 400, "metric of the fleet is of one session's table: give --host to "
		     "strobe ui and session=ID");
		goto out;
	}
	src->session = id;		/* the fleet's selection: src's */
	t = source_report(src, o, 0, ss, &e);
	src->session = keep;
	if (!t) {
		fail(r, 422, "%s", e.msg);
		goto out;
	}
	if (o->nr_metrics && report_metrics_check(&ss->sum.session, o, &e) < 0) {
		fail(r, 400, "%s", e.msg);
		goto out;
	}
	reply_table(t, r);
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
		fail(r, 400, "%s", e.msg);
		goto out;
	}
	if (!(t = report_window(src->db, o, from, to, sum, &e))) {
		fail(r, 422, "%s", e.msg);
		goto out;
	}
	reply_table(t, r);
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

	if (arg_where(src, a, &w, &on, r))
		goto out;
	if (source_is_fleet(src)) {
		if (!arg_by(a, &o.by, r) && !arg_int(a, "limit", 0, MAX_LIMIT, &limit, r) &&
		    !arg_metrics(a, &o, r)) {
			o.limit = (size_t)limit;
			if (o.by == REPORT_BY_LINE)
				fail(r, 400, "bad by: the fleet has no source lines: give symbol or "
				     "binary");
			else
				fleet_report(src, a, &o, r);
		}
		goto out;
	}
	if (arg_session(src, a, "session", 0, s, r) ||
	    arg_window(a, "from", "to", s, &from, &to, r) || arg_by(a, &o.by, r) ||
	    arg_int(a, "limit", 0, MAX_LIMIT, &limit, r) || arg_metrics(a, &o, r))
		goto out;
	if (on) {
		o.where = &w;
		if (where_ready_window(src, &w, s, &o, from, to, r))
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
		fail(r, 422, "source lines of the fleet (--source) are not served: the fleet "
		     "keeps no source lines; open a local database with --db");
		goto out;
	}
	if (arg_session(src, a, "session", 0, s, r) ||
	    arg_window(a, "from", "to", s, &from, &to, r) ||
	    arg_str(a, "binary", &o.binary, r) || arg_str(a, "symbol", &o.symbol, r) ||
	    arg_int(a, "limit", 0, MAX_LIMIT, &limit, r) || arg_metrics(a, &o, r))
		goto out;
	if (!o.binary || !o.symbol) {
		fail(r, 400, "missing %s: give the %s's name as /api/report's rows show it",
		     o.binary ? "symbol" : "binary", o.binary ? "symbol" : "binary");
		goto out;
	}
	report_reply(src, &o, s, from, to, limit, r);
out:
	free(s);
	return 1;
}

/* The flame index of the last session asked (flameindex.h): a window of
 * it costs the scan of its samples, its stacks read and named once.
 * uiapi_handle()'s calls are serialised (uiapi.h), and so its uses. */
static struct flame_index *flame_cache;

/* The folded text of tree t (or of flame_cache's last window) into r. */
static void flame_reply(const struct flame_tree *t, struct uiapi_reply *r)
{
	struct error e = { "" };
	struct out out;

	out_open(&out);
	if ((t ? flame_write_folded(t, out.f, &e) :
		 flame_index_write_folded(flame_cache, out.f, &e)) < 0) {
		fclose(out.f);
		free(out.buf);
		fail(r, 500, "%s", e.msg);
		return;
	}
	out_done(&out, r, TYPE_TEXT);
}

/* /api/flame from the session's flame index: 1 when answered (r set), 0
 * when the index cannot answer (the request is made from scratch). */
static int flame_indexed(struct source *src, const struct report_opts *o,
			 const struct db_session *s, int64_t from, int64_t to, const char *event,
			 struct uiapi_reply *r)
{
	const struct flame_tree *t;
	const struct stack_set *set;
	struct error e = { "" };
	int what = FLAME_SAMPLES, rc;

	if (flame_cache && !flame_index_current(flame_cache, s)) {
		flame_index_free(flame_cache);
		flame_cache = NULL;
	}
	if (!flame_cache) {
		if (!db_session_complete(s))
			return 0;	/* still growing: read as it is now */
		if (!(flame_cache = flame_index_make(src->db, o, &e)))
			return 0;	/* the scratch path says why */
	}
	set = flame_index_set(flame_cache);
	if (!set->call_graph[0])
		return 0;
	if (event && (what = flame_event_index(set, event, &e)) < 0) {
		fail(r, 400, "bad event: %s", e.msg);
		return 1;
	}
	rc = flame_index_window(flame_cache, src->db, from, to, what, &t, &e);
	if (rc > 0)
		return 0;
	if (rc < 0) {
		fail(r, 422, "%s", e.msg);
		return 1;
	}
	flame_reply(NULL, r);
	return 1;
}

/* color_by=: the metric's JSON (flamemetric.h) of set's tree into r, the
 * metric's "seconds" o's window [from, to). */
static void flame_metric_reply(struct flame_metric *m, const struct stack_set *set,
			       struct report_opts *o, int64_t from, int64_t to, int what,
			       struct uiapi_reply *r)
{
	struct flame_tree *t = NULL;
	struct error e = { "" };
	struct out out;

	/* "seconds": the window, cut at the session's end (as the command's) */
	o->has_from = o->has_to = 1;
	o->from_ns = from;
	o->to_ns = to;
	if (flame_metric_bind(m, &set->session, report_metric_seconds(&set->session, o),
			      "color_by", &e) < 0) {
		fail(r, 400, "%s", e.msg);
		return;
	}
	if (!(t = flame_tree_build_sums(set, what, &e))) {
		fail(r, 422, "%s", e.msg);
		return;
	}
	flame_metric_values(m, t);
	flame_metric_scale(m, t, 1, 1);
	out_open(&out);
	if (flame_metric_write_json(m, t, out.f, &e) < 0) {
		fclose(out.f);
		free(out.buf);
		fail(r, 500, "%s", e.msg);
	} else {
		out_done(&out, r, TYPE_JSON);
	}
	flame_tree_free(t);
}

/* strobe export --format folded of [from, to): stacks_window() and the
 * folded writer of flame.h, or the same tree from the session's flame
 * index; with color_by=METRIC|EXPR (from stacks_window(): the index keeps
 * no sums) the JSON of flamemetric.h, that folded text and each frame's
 * value and colour. */
static int api_flame(struct source *src, const struct uiapi_args *a, struct uiapi_reply *r)
{
	struct flame_metric m = { 0 };
	const char *cb;
	struct report_opts o = { .by = REPORT_BY_SYMBOL, .pid = -1, .mode = REPORT_ALL };
	struct db_session *s = xmalloc(sizeof(*s));
	struct stack_set *set = NULL;
	struct flame_tree *t = NULL;
	struct error e = { "" };
	const char *event;
	int64_t from, to;
	int what = FLAME_SAMPLES, on = 0;
	struct where w;

	if (local_only(src, "a flame graph", r) || arg_where(src, a, &w, &on, r) ||
	    arg_session(src, a, "session", 0, s, r) ||
	    arg_window(a, "from", "to", s, &from, &to, r) || arg_str(a, "event", &event, r) ||
	    arg_str(a, "color_by", &cb, r))
		goto out;
	if (cb && flame_metric_parse(&m, cb, "color_by", &e) < 0) {
		fail(r, 400, "%s", e.msg);
		goto out;
	}
	o.session = s->id;
	if (on) {
		/* the index holds no condition (nor sums for color_by): such
		 * a window is read from scratch */
		o.where = &w;
		if (where_ready_window(src, &w, s, &o, from, to, r))
			goto out;
	} else if (!cb && flame_indexed(src, &o, s, from, to, event, r)) {
		goto out;
	}
	if (!(set = stacks_window(src->db, &o, from, to, &e))) {
		fail(r, 422, "%s", e.msg);
		goto out;
	}
	if (!set->call_graph[0]) {
		fail(r, 422, "session %lld has no call stacks: record with -g",
		     (long long)set->session.id);
		goto out;
	}
	if (event && (what = flame_event_index(set, event, &e)) < 0) {
		fail(r, 400, "bad event: %s", e.msg);
		goto out;
	}
	if (cb) {
		flame_metric_reply(&m, set, &o, from, to, what, r);
		goto out;
	}
	if (!(t = flame_tree_build(set, what, &e))) {
		fail(r, 422, "%s", e.msg);
		goto out;
	}
	flame_reply(t, r);
out:
	flame_metric_free(&m);
	flame_tree_free(t);
	if (set)
		stacks_free(set);
	if (on)
		where_free(&w);
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

	if (arg_session(src, a, "session", 0, s, r) ||
	    arg_window(a, "from", "to", s, &from, &to, r) || arg_by(a, &o->by, r) ||
	    arg_int(a, "limit", 0, MAX_LIMIT, &limit, r))
		goto out;
	o->session = s->id;
	if (report_opts_window(o, from, to, &e) < 0) {
		fail(r, 400, "%s", e.msg);
		goto out;
	}
	if (where_ready(src, o->where, s, o, r))
		goto out;
	rc = diff_build_where(src->db, o->by, o, &d, &e);
	if (rc < 0) {
		fail(r, rc == -2 ? 400 : 422, "%s", e.msg);
		goto out;
	}
	t = diff_table(d, o, OUTPUT_JSON, (size_t)limit);
	reply_table(t, r);
out:
	table_free(t);
	diff_free(d);
	free(s);
	return 1;
}

void uiapi_release(void)
{
	flame_index_free(flame_cache);
	flame_cache = NULL;
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

	if (arg_where(src, a, &wh, &on, r))
		goto out;
	if (on) {
		o.where = &wh;
		if (!arg(a, "a_from")) {
			where_diff(src, a, &o, r);
			goto out;
		}
	}
	if (arg_int(a, "session", fleet ? src->session : 0, INT64_MAX, &def, r))
		goto out;
	if (fleet ? arg_fleet_session(src, a, "a_session", "a_host", def, &s[0], r) ||
		    arg_fleet_session(src, a, "b_session", "b_host", def, &s[1], r) :
		    arg_session(src, a, "a_session", def, &s[0].s, r) ||
		    arg_session(src, a, "b_session", def, &s[1].s, r))
		goto out;
	if (arg_need(a, "a_from", INT64_MAX / 2, &w[0].from_ns, r) ||
	    arg_need(a, "a_to", INT64_MAX / 2, &w[0].to_ns, r) ||
	    arg_need(a, "b_from", INT64_MAX / 2, &w[1].from_ns, r) ||
	    arg_need(a, "b_to", INT64_MAX / 2, &w[1].to_ns, r) ||
	    arg_by(a, &o.by, r) || arg_int(a, "limit", 0, MAX_LIMIT, &limit, r))
		goto out;
	if (fleet && o.by == REPORT_BY_LINE) {
		fail(r, 400, "bad by: the fleet has no source lines: give symbol or binary");
		goto out;
	}
	for (int i = 0; i < 2; i++) {
		w[i].session = s[i].s.id;
		side[i].host = s[i].host;
		side[i].id = s[i].s.id;
	}
	if (on && where_ready_window(src, &wh, &s[0].s, &o, w[0].from_ns, w[0].to_ns, r))
		goto out;
	rc = source_diff_windows(src, &side[0], &side[1], w, &o, 0, &d, &e);
	if (rc < 0) {
		fail(r, rc == -2 ? 400 : 422, "%s", e.msg);
		goto out;
	}
	t = diff_table(d, &o, OUTPUT_JSON, (size_t)limit);
	reply_table(t, r);
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
static int series_what(const struct uiapi_args *a, struct series_req *req, const char **ev,
		       struct expr **x, char **text, struct uiapi_reply *r)
{
	const char *m;
	struct error e = { "" };

	for (size_t i = 0; i < a->n; i++) {
		if (strcmp(a->key[i], "event"))
			continue;
		if (!*a->val[i] || strlen(a->val[i]) > MAX_NAME)
			return fail(r, 400, "bad event: give an event's name of 1 to %d bytes",
				    MAX_NAME);
		if (req->nevents == 16)
			return fail(r, 400, "too many event: at most 16");
		ev[req->nevents++] = a->val[i];
	}
	if (arg_str(a, "metric", &m, r))
		return 1;
	if (m && req->nevents)
		return fail(r, 400, "event and metric exclude each other: give one");
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
		return fail(r, 400, "bad metric: %s", e.msg);
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
	struct out out;

	if (arg_where(src, a, &w, &on, r))
		goto out;
	if (source_series(src, &ss, &nsess, &nhost, &e) < 0) {
		fail(r, 404, "%s", e.msg);
		goto out;
	}
	if (!source_is_fleet(src) && arg_session(src, a, "session", 0, &ss.session, r))
		goto out;
	if (!source_is_fleet(src) && series_source_db(&ss, src->db, ss.session.id, &e) < 0) {
		fail(r, 404, "%s", e.msg);
		goto out;
	}
	req.opts.pid = -1;
	req.opts.session = ss.session.id;
	by = arg(a, "by");
	if (by && (timeline_parse_by(by, &req.opts.by) < 0 ||
		   (req.opts.by == TL_BY_HOST && !source_is_fleet(src))))
		goto bad_by;
	if (arg_window(a, "from", "to", &ss.session, &from, &to, r) ||
	    arg_int(a, "buckets", DEF_BUCKETS, MAX_BUCKETS, &buckets, r) ||
	    arg_int(a, "top", TL_TOP_DEFAULT, 64, &top, r) ||
	    series_what(a, &req, ev, &x, &text, r))
		goto out;
	if (buckets < 1 || top < 1) {
		fail(r, 400, "bad %s: give at least 1", buckets < 1 ? "buckets" : "top");
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

		if (where_ready(src, &w, &ss.session, &ro, r))
			goto out;
		req.opts.where = &w;
	}
	rc = series_compute(&ss, &req, &s, &e);
	if (rc < 0) {
		fail(r, rc == -1 ? 422 : 400, "%s", e.msg);
		goto out;
	}
	out_open(&out);
	uijson_series(out.f, s);
	out_done(&out, r, TYPE_JSON);
	goto out;
bad_by:
	fail(r, 400, "bad by: give none, cpu, pid, binary, symbol, cgroup%s",
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

/* ---- the helpers of uionsets.c (uiapi_int.h) ---- */

int uiapi_fail(struct uiapi_reply *r, unsigned status, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vfail(r, status, fmt, ap);
	va_end(ap);
	return 1;
}

const char *uiapi_arg(const struct uiapi_args *a, const char *key)
{
	return arg(a, key);
}

int uiapi_arg_int(const struct uiapi_args *a, const char *key, int64_t def, int64_t max,
		  int64_t *v, struct uiapi_reply *r)
{
	return arg_int(a, key, def, max, v, r);
}

int uiapi_arg_session(struct source *src, const struct uiapi_args *a, struct db_session *s,
		      struct uiapi_reply *r)
{
	return arg_session(src, a, "session", 0, s, r);
}

int uiapi_series_what(const struct uiapi_args *a, struct series_req *req, const char **ev,
		      struct expr **x, char **text, struct uiapi_reply *r)
{
	return series_what(a, req, ev, x, text, r);
}

void uiapi_reply_table(const struct table *t, struct uiapi_reply *r)
{
	reply_table(t, r);
}

/*
 * The fleet's selection for one request: ?host= and ?session= (the page
 * sends both once a host's session is picked: ids repeat across hosts)
 * in place of strobe ui's --host and --session, so that the series, the
 * report and the diff are all of the session the page shows; the spec's
 * again after it (source_pick()).  The server runs one request at a time
 * on src (uiserver.c's lock).  0 with *host and *session the spec's, or
 * 1 after fail().
 */
static int fleet_pick(struct source *src, const struct uiapi_args *a, const char **host,
		      int64_t *session, struct uiapi_reply *r)
{
	const char *h;
	int64_t id;

	*host = src->host;
	*session = src->session;
	if (arg_str(a, "host", &h, r) || arg_int(a, "session", src->session, INT64_MAX, &id, r))
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
		{ "flame", api_flame },
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
