/*
 * uionsets.c - /api/onsets and /api/phases of 'strobe ui' (uiapi.h): the
 * change points of a session's series and the phases they cut it into,
 * by the calls of 'strobe onsets' and 'strobe phases' (series_compute(),
 * seriesonsets_table(), phases_table()), with their options as
 * parameters, so that each reply is the command's --format json, byte
 * for byte:
 *
 *   session=ID                 the session (as /api/sessions lists them)
 *   event=EV (repeatable) | metric=NAME|EXPR   what is segmented (default
 *                              samples), as --event, --metric
 *   from=NS, to=NS             --from, --to in ns since the session start
 *                              (absent: the whole session, as without them)
 *   bucket=NS                  --bucket (absent: onsets' default)
 *   min_shift=X                --min-shift (a decimal, 0 to 1e6)
 *   onsets: by=none|cpu|pid|binary|symbol|cgroup, top=N   the split, as
 *                              --by, --top (each group segmented on its own)
 *   phases: by=symbol|binary|line, top=N   the hot spots, as --by, --top
 *
 * The local database's only (the fleet keeps no hot spots per window to
 * cut into phases: 422).
 */
#include "config.h"
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include "expr.h"
#include "phases.h"
#include "seriesonsets.h"
#include "uiapi_int.h"

/* What both take: the series request and the onsets' options. */
struct uionsets_req {
	struct db_session session;
	struct series_source ss;
	struct series_req req;
	struct onsets_opts oo;
	const char *ev[16];
	struct expr *x;
	char *text;
};

/* ?from= and ?to= (each only when given) into o. */
static int uionsets_window(const struct uiapi_args *a, const struct db_session *s,
			   struct timeline_opts *o, struct uiapi_reply *r)
{
	int64_t from, to;

	if (uiapi_arg_int(a, "from", 0, INT64_MAX / 2, &from, r) ||
	    uiapi_arg_int(a, "to", INT64_MAX / 2, INT64_MAX / 2, &to, r))
		return 1;
	if (to <= from)
		return uiapi_fail(r, 400, "bad to: give a time after from (ns since the "
				  "session start)");
	o->has_from = uiapi_arg(a, "from") != NULL;
	o->has_to = uiapi_arg(a, "to") != NULL;
	o->from_ns = from;
	o->to_ns = to;
	if (o->has_from && s->duration_ns > 0 && from >= s->duration_ns)
		return uiapi_fail(r, 400, "bad from: session %" PRId64 " is %" PRId64 " ns long",
				  s->id, s->duration_ns);
	return 0;
}

/* ?min_shift=X into o. */
static int uionsets_min_shift(const struct uiapi_args *a, struct onsets_opts *o,
			      struct uiapi_reply *r)
{
	const char *v = uiapi_arg(a, "min_shift");
	char *end;

	if (!v)
		return 0;
	errno = 0;
	o->min_shift = strtod(v, &end);
	if (!*v || errno || *end || !(o->min_shift >= 0) || o->min_shift > 1e6)
		return uiapi_fail(r, 400, "bad min_shift: give a relative shift like 0.1, "
				  "0 or more");
	return 0;
}

/* The parameters both take (by and top are the caller's) into q, then
 * the series into *s: 0, or 1 after a reply. */
static int uionsets_series(struct source *src, const struct uiapi_args *a,
			   struct uionsets_req *q, struct series **s, struct uiapi_reply *r)
{
	struct error e = { "" };
	int64_t bucket;
	int rc;

	if (source_is_fleet(src))
		return uiapi_fail(r, 422, "onsets and phases of the fleet (--source) are not "
				  "served: open a local database with --db");
	if (uiapi_arg_session(src, a, "session", 0, &q->session, r) ||
	    uiapi_series_what(a, &q->req, q->ev, &q->x, &q->text, r) ||
	    uionsets_window(a, &q->session, &q->req.opts, r) ||
	    uiapi_arg_int(a, "bucket", 0, INT64_MAX / 2, &bucket, r) ||
	    uionsets_min_shift(a, &q->oo, r))
		return 1;
	if (uiapi_arg(a, "bucket") && bucket < 1000)
		return uiapi_fail(r, 400, "bad bucket: give a length in ns of at least 1000");
	if (series_source_db(&q->ss, src->db, q->session.id, &e) < 0)
		return uiapi_fail(r, 404, "%s", e.msg);
	q->req.opts.session = q->session.id;
	q->req.opts.bucket_ns = bucket ? bucket :
				seriesonsets_session_bucket(&q->ss.session, &q->req.opts);
	rc = series_compute_said(&q->ss, &q->req, s, &e);
	if (rc)
		return uiapi_fail(r, rc == -1 ? 422 : 400, "%s", e.msg);
	return 0;
}

static void uionsets_free(struct uionsets_req *q, struct series *s)
{
	if (s)
		series_free(s);
	expr_free(q->x);
	free(q->text);
	free(q);
}

/* strobe onsets --format json. */
int uiapi_onsets(struct source *src, const struct uiapi_args *a, struct uiapi_reply *r)
{
	struct uionsets_req *q = xcalloc(1, sizeof(*q));
	struct series *s = NULL;
	struct error e = { "" };
	struct table *t = NULL;
	const char *by = uiapi_arg(a, "by");
	int64_t top;

	q->req.opts.pid = -1;
	if (by && timeline_parse_by(by, &q->req.opts.by) < 0) {
		uiapi_fail(r, 400, "bad by: give none, cpu, pid, binary, symbol or cgroup");
		goto out;
	}
	if (uiapi_arg_int(a, "top", TL_TOP_DEFAULT, 64, &top, r))
		goto out;
	if (top < 1) {
		uiapi_fail(r, 400, "bad top: give at least 1");
		goto out;
	}
	q->req.opts.top = (int)top;
	if (uionsets_series(src, a, q, &s, r))
		goto out;
	if (!(t = seriesonsets_table(s, q->req.metric != NULL, &q->oo, OUTPUT_JSON, &e)))
		uiapi_fail(r, 422, "%s", e.msg);
	else
		uiapi_reply_table(t, r);
out:
	table_free(t);
	uionsets_free(q, s);
	return 1;
}

/* strobe phases --format json. */
int uiapi_phases(struct source *src, const struct uiapi_args *a, struct uiapi_reply *r)
{
	struct uionsets_req *q = xcalloc(1, sizeof(*q));
	struct report_opts ro = { .by = REPORT_BY_SYMBOL, .pid = -1, .mode = REPORT_ALL };
	struct phases_opts po = { .ro = &ro };
	struct series *s = NULL;
	struct error e = { "" };
	struct table *t = NULL;
	const char *by = uiapi_arg(a, "by");
	int64_t top;

	q->req.opts.pid = -1;
	q->req.opts.top = TL_TOP_DEFAULT;
	if (by && (report_parse_by(by, &ro.by) < 0 || ro.by == REPORT_BY_CGROUP)) {
		uiapi_fail(r, 400, "bad by: give symbol, binary or line");
		goto out;
	}
	if (uiapi_arg_int(a, "top", 3, 64, &top, r))
		goto out;
	if (top < 1) {
		uiapi_fail(r, 400, "bad top: give at least 1");
		goto out;
	}
	if (uionsets_series(src, a, q, &s, r))
		goto out;
	ro.session = q->session.id;
	po.metric = q->req.metric != NULL;
	po.onsets = q->oo;
	po.top = (int)top;
	if (!(t = phases_table(src->db, s, &po, OUTPUT_JSON, &e)))
		uiapi_fail(r, 422, "%s", e.msg);
	else
		uiapi_reply_table(t, r);
out:
	table_free(t);
	uionsets_free(q, s);
	return 1;
}
