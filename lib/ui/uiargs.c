/*
 * uiargs.c - the explorer API's parameters and replies (uiapi_int.h):
 * every parameter checked and bounded, every failure one line of text
 * with its status, never a crash.
 */
#include "config.h"
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "uiapi_int.h"

FILE *uiapi_out_open(struct uiapi_out *o)
{
	o->buf = NULL;
	o->len = 0;
	o->f = open_memstream(&o->buf, &o->len);
	return o->f;
}

/* Close o into r as a 200 of type. */
int uiapi_out_done(struct uiapi_out *o, struct uiapi_reply *r, const char *type)
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
static int uiapi_vfail(struct uiapi_reply *r, unsigned status, const char *fmt, va_list ap)
{
	char line[600];

	vsnprintf(line, sizeof(line), fmt, ap);
	text_sanitize(line);		/* one line, no control characters */
	r->status = status;
	r->type = TYPE_TEXT;
	r->len = (size_t)asprintf(&r->body, "strobe ui: %s\n", line);
	return 1;
}

int uiapi_fail(struct uiapi_reply *r, unsigned status, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	uiapi_vfail(r, status, fmt, ap);
	va_end(ap);
	return 1;
}

/* The value of parameter key (the first), or NULL. */
const char *uiapi_arg(const struct uiapi_args *a, const char *key)
{
	for (size_t i = 0; i < a->n; i++)
		if (!strcmp(a->key[i], key))
			return a->val[i];
	return NULL;
}

/* A non-negative integer parameter (digits only) into *v, def when absent.
 * 0, or 1 after uiapi_fail() (400). */
int uiapi_arg_int(const struct uiapi_args *a, const char *key, int64_t def, int64_t max,
		   int64_t *v, struct uiapi_reply *r)
{
	const char *s = uiapi_arg(a, key);
	uint64_t u;

	if (!s) {
		*v = def;
		return 0;
	}
	if (strlen(s) > 20 || parse_u64(s, &u) < 0 || u > (uint64_t)max)
		return uiapi_fail(r, 400, "bad %s: give an integer from 0 to %" PRId64, key, max);
	*v = (int64_t)u;
	return 0;
}

/* A required integer parameter. */
int uiapi_arg_need(const struct uiapi_args *a, const char *key, int64_t max, int64_t *v,
		    struct uiapi_reply *r)
{
	if (!uiapi_arg(a, key))
		return uiapi_fail(r, 400, "missing %s: give an integer from 0 to %" PRId64, key, max);
	return uiapi_arg_int(a, key, 0, max, v, r);
}

/* A string parameter: bounded, NULL when absent.  0, or 1 after uiapi_fail(). */
int uiapi_arg_str(const struct uiapi_args *a, const char *key, const char **v,
		   struct uiapi_reply *r)
{
	*v = uiapi_arg(a, key);
	if (*v && (!**v || strlen(*v) > UIAPI_MAX_NAME))
		return uiapi_fail(r, 400, "bad %s: give 1 to %d bytes", key, UIAPI_MAX_NAME);
	return 0;
}

/* t as the reply, JSON (strobe report --format json's bytes). */
void uiapi_reply_table(const struct table *t, struct uiapi_reply *r)
{
	struct uiapi_out out;

	uiapi_out_open(&out);
	table_write(t, OUTPUT_JSON, out.f);
	uiapi_out_done(&out, r, TYPE_JSON);
}

/* ?session=ID of a local source: its row in s.  0, or 1 after uiapi_fail(). */
int uiapi_arg_session(struct source *src, const struct uiapi_args *a, const char *key,
		       int64_t def, struct db_session *s, struct uiapi_reply *r)
{
	struct error e = { "" };
	int64_t id;

	if (uiapi_arg_int(a, key, def, INT64_MAX, &id, r))
		return 1;
	if (id <= 0)
		return uiapi_fail(r, 400, "missing %s: give a session id, as /api/sessions lists them",
			    key);
	if (db_session_get(src->db, id, s, &e) < 0)
		return uiapi_fail(r, 404, "no session %" PRId64 ": give one /api/sessions lists", id);
	return 0;
}

/* ?from=&to= of session s (default its whole length). */
int uiapi_arg_window(const struct uiapi_args *a, const char *fk, const char *tk,
		      const struct db_session *s, int64_t *from, int64_t *to,
		      struct uiapi_reply *r)
{
	int64_t len = s->duration_ns > 0 ? s->duration_ns : 0;

	if (uiapi_arg_int(a, fk, 0, INT64_MAX / 2, from, r) ||
	    uiapi_arg_int(a, tk, len + 1, INT64_MAX / 2, to, r))
		return 1;
	if (*to <= *from)
		return uiapi_fail(r, 400, "bad %s: give a time after %s (ns since the session start)",
			    tk, fk);
	return 0;
}

int uiapi_arg_by(const struct uiapi_args *a, enum report_by *by, struct uiapi_reply *r)
{
	const char *s = uiapi_arg(a, "by");

	*by = REPORT_BY_SYMBOL;
	if (s && (report_parse_by(s, by) < 0 || *by == REPORT_BY_CGROUP))
		return uiapi_fail(r, 400, "bad by: give symbol, binary or line");
	return 0;
}

/* ?where=EXPR OP X, with ?invert=1, ?where_sample=1, ?where_bucket=NS
 * (as the commands' --where, --invert, --where-sample, --where-bucket):
 * parsed into w, *on set when where= is given.  0, or 1 after uiapi_fail()
 * (400: a bad value, or the others without where=; 422 with the fleet). */
int uiapi_arg_where(struct source *src, const struct uiapi_args *a, struct where *w, int *on,
		     struct uiapi_reply *r)
{
	struct error e = { "" };
	const char *c;
	int64_t inv, smp, bucket;

	*on = 0;
	memset(w, 0, sizeof(*w));
	if (uiapi_arg_str(a, "where", &c, r) || uiapi_arg_int(a, "invert", 0, 1, &inv, r) ||
	    uiapi_arg_int(a, "where_sample", 0, 1, &smp, r) ||
	    uiapi_arg_int(a, "where_bucket", 0, INT64_MAX / 2, &bucket, r))
		return 1;
	if (!c) {
		if (inv || smp || bucket)
			return uiapi_fail(r, 400, "%s needs where: give where=EXPR OP NUMBER",
				    inv ? "invert" : smp ? "where_sample" : "where_bucket");
		return 0;
	}
	if (source_is_fleet(src))
		return uiapi_fail(r, 422, "where of the fleet (--source) is not served: open a local "
			    "database with --db");
	if (where_parse(w, c, &e) < 0)
		return uiapi_fail(r, 400, "%s", e.msg);
	if (bucket && (bucket < 1000 || smp)) {
		where_free(w);
		return uiapi_fail(r, 400, "bad where_bucket: give ns, at least 1000, without "
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
 * else a 422.  0, or 1 after uiapi_fail(). */
int uiapi_where_ready(struct source *src, struct where *w, const struct db_session *s,
		       const struct report_opts *o, struct uiapi_reply *r)
{
	struct error e = { "" };
	int rc = where_select(w, src->db, s, o, &e);

	if (rc < 0)
		return uiapi_fail(r, rc == WHERE_BAD ? 400 : 422, "%s", e.msg);
	return 0;
}

/* uiapi_where_ready() of the window [from, to) of session s with o's filters. */
int uiapi_where_ready_window(struct source *src, struct where *w, const struct db_session *s,
			      const struct report_opts *o, int64_t from, int64_t to,
			      struct uiapi_reply *r)
{
	struct report_opts wo = *o;
	struct error e = { "" };

	wo.session = s->id;
	if (report_opts_window(&wo, from, to, &e) < 0)
		return uiapi_fail(r, 400, "%s", e.msg);
	return uiapi_where_ready(src, w, s, &wo, r);
}

int uiapi_local_only(struct source *src, const char *what, struct uiapi_reply *r)
{
	if (source_is_fleet(src))
		return uiapi_fail(r, 422, "%s of the fleet (--source) is not served: the fleet keeps no "
			    "call stacks nor markers; open a local database with --db", what);
	return 0;
}
