/*
 * uiapi_int.h - what the files of the explorer's API share (uiapi.c the
 * routes, sessions, hot spots, diff and series; uiargs.c the parameters
 * and replies; uiflame.c the flame graph; uionsets.c onsets and phases):
 * the parameter checks, each bounded, every failure a one-line answer,
 * and the handlers the routes call.  Not for the server (uiapi.h is).
 */
#ifndef STROBE_UIAPI_INT_H
#define STROBE_UIAPI_INT_H

#include <stdint.h>
#include <stdio.h>
#include "output.h"
#include "report.h"
#include "series.h"
#include "uiapi.h"
#include "where.h"

#define UIAPI_MAX_NAME	4096	/* bytes of a string parameter */
#define TYPE_JSON	"application/json"
#define TYPE_TEXT	"text/plain; charset=utf-8"

/* ---- replies (uiargs.c) ---- */

/* A reply being written: a memory stream. */
struct uiapi_out {
	FILE *f;
	char *buf;
	size_t len;
};

FILE *uiapi_out_open(struct uiapi_out *o);
/* Close o into r as a 200 of type (a 500 when out of memory); 1. */
int uiapi_out_done(struct uiapi_out *o, struct uiapi_reply *r, const char *type);
/* A one-line text answer "strobe ui: ..." with status; returns 1. */
int uiapi_fail(struct uiapi_reply *r, unsigned status, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* t as the reply: JSON, the commands' --format json bytes. */
void uiapi_reply_table(const struct table *t, struct uiapi_reply *r);

/* ---- parameters (uiargs.c): each 0, or 1 after uiapi_fail() ---- */

/* The value of parameter key (the first), or NULL. */
const char *uiapi_arg(const struct uiapi_args *a, const char *key);
/* A non-negative integer (digits only) into *v, def when absent (400). */
int uiapi_arg_int(const struct uiapi_args *a, const char *key, int64_t def, int64_t max,
		  int64_t *v, struct uiapi_reply *r);
/* A required one. */
int uiapi_arg_need(const struct uiapi_args *a, const char *key, int64_t max, int64_t *v,
		   struct uiapi_reply *r);
/* A string: 1 to UIAPI_MAX_NAME bytes, NULL when absent. */
int uiapi_arg_str(const struct uiapi_args *a, const char *key, const char **v,
		  struct uiapi_reply *r);
/* ?KEY=ID (def when absent) of a local source: its row in s (400, 404). */
int uiapi_arg_session(struct source *src, const struct uiapi_args *a, const char *key,
		      int64_t def, struct db_session *s, struct uiapi_reply *r);
/* ?FK=&TK= of session s, ns since its start (default its whole length). */
int uiapi_arg_window(const struct uiapi_args *a, const char *fk, const char *tk,
		     const struct db_session *s, int64_t *from, int64_t *to,
		     struct uiapi_reply *r);
/* ?by=symbol|binary|line (default symbol). */
int uiapi_arg_by(const struct uiapi_args *a, enum report_by *by, struct uiapi_reply *r);
/* ?where=EXPR OP X, with ?invert=1, ?where_sample=1, ?where_bucket=NS
 * (as the commands' --where, --invert, --where-sample, --where-bucket):
 * parsed into w, *on set when where= is given (400: a bad value, or the
 * others without where=; 422 with the fleet). */
int uiapi_arg_where(struct source *src, const struct uiapi_args *a, struct where *w, int *on,
		    struct uiapi_reply *r);
/* Select w for session s and o's filters before the query, so that a
 * condition the session cannot evaluate is a 400 (WHERE_BAD), anything
 * else a 422. */
int uiapi_where_ready(struct source *src, struct where *w, const struct db_session *s,
		      const struct report_opts *o, struct uiapi_reply *r);
/* uiapi_where_ready() of the window [from, to) of session s. */
int uiapi_where_ready_window(struct source *src, struct where *w, const struct db_session *s,
			     const struct report_opts *o, int64_t from, int64_t to,
			     struct uiapi_reply *r);
/* A 422 for what the fleet does not serve (what: "a flame graph"). */
int uiapi_local_only(struct source *src, const char *what, struct uiapi_reply *r);

/* ?event= (repeatable, default samples; ev holds 16) or ?metric= into
 * req, a metric parsed into *x (its catalogue text in *text): the
 * caller's to free (uiapi.c). */
int uiapi_series_what(const struct uiapi_args *a, struct series_req *req, const char **ev,
		      struct expr **x, char **text, struct uiapi_reply *r);

/* ---- the handlers the routes call, beyond uiapi.c's ---- */

/* /api/flame (uiflame.c). */
int uiapi_flame(struct source *src, const struct uiapi_args *a, struct uiapi_reply *r);
/* /api/onsets and /api/phases (uionsets.c). */
int uiapi_onsets(struct source *src, const struct uiapi_args *a, struct uiapi_reply *r);
int uiapi_phases(struct source *src, const struct uiapi_args *a, struct uiapi_reply *r);

#endif
