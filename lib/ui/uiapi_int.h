/*
 * uiapi_int.h - what uiapi.c shares with the other files of the API
 * (uionsets.c): its parameter checks and replies, and the handlers they
 * add to its routes.  Not for the server (uiapi.h is).
 */
#ifndef STROBE_UIAPI_INT_H
#define STROBE_UIAPI_INT_H

#include <stdint.h>
#include "output.h"
#include "series.h"
#include "uiapi.h"

/* A one-line text answer "strobe ui: ..." with status; returns 1. */
int uiapi_fail(struct uiapi_reply *r, unsigned status, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* The value of parameter key (the first), or NULL. */
const char *uiapi_arg(const struct uiapi_args *a, const char *key);
/* A non-negative integer parameter (def when absent): 0, or 1 after a 400. */
int uiapi_arg_int(const struct uiapi_args *a, const char *key, int64_t def, int64_t max,
		  int64_t *v, struct uiapi_reply *r);
/* ?session=ID of a local source: its row.  0, or 1 after a 400 or 404. */
int uiapi_arg_session(struct source *src, const struct uiapi_args *a, struct db_session *s,
		      struct uiapi_reply *r);
/* ?event= (repeatable, default samples; ev holds 16) or ?metric= into
 * req, a metric parsed into *x (its catalogue text in *text): the
 * caller's to free.  0, or 1 after a 400. */
int uiapi_series_what(const struct uiapi_args *a, struct series_req *req, const char **ev,
		      struct expr **x, char **text, struct uiapi_reply *r);
/* t as the reply: JSON, the commands' --format json bytes. */
void uiapi_reply_table(const struct table *t, struct uiapi_reply *r);

/* /api/onsets and /api/phases (uionsets.c). */
int uiapi_onsets(struct source *src, const struct uiapi_args *a, struct uiapi_reply *r);
int uiapi_phases(struct source *src, const struct uiapi_args *a, struct uiapi_reply *r);

#endif
