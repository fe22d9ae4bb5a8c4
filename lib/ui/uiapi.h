/*
 * uiapi.h - the JSON API of 'strobe ui' (issue 32): each request's
 * parameters checked and bounded, answered from lib/query's window calls
 * (report_window, stacks_window + flame_write_folded, diff_build_windows,
 * series_compute), with the same bytes the commands print.  No HTTP here
 * (uiserver.c is the transport), no SQL, no printing.
 *
 *   /api/sessions   every session, newest first
 *   /api/session    one session: its figures, metrics, markers
 *   /api/series     events over time (strobe plot's CSV values)
 *   /api/report     strobe report --format json of a window
 *   /api/lines      strobe report --by line --binary B --symbol S --format
 *                   json of a window: the source lines of one symbol
 *   /api/flame      strobe export --format folded of a window (text), from
 *                   the last session's flame index (flameindex.h), kept
 *                   between requests while that session is unchanged
 *   /api/diff       strobe diff --format json of two windows
 *   /api/onsets     strobe onsets --format json (uionsets.c)
 *   /api/phases     strobe phases --format json (uionsets.c)
 *
 * Times are ns since the session's start; a window is [from, to).
 * With the fleet (--source) report and series go through source.h
 * (source_report, source_series) over the source's --host and session,
 * sessions, session and diff too (source_sessions, source_diff_windows:
 * ?host=, ?a_host=, ?b_host= name a session's host, default --host);
 * flame and lines are the local database's (422).  /api/series's
 * "lost" are the spans of lost samples, "throttled" those of the
 * kernel's throttle records (timeline.h).
 */
#ifndef STROBE_UIAPI_H
#define STROBE_UIAPI_H

#include <stddef.h>
#include "source.h"

/* A request's query parameters, in order, repeats kept. */
#define UIAPI_MAX_ARGS	64
struct uiapi_args {
	size_t n;
	const char *key[UIAPI_MAX_ARGS];
	const char *val[UIAPI_MAX_ARGS];
	int overflow;			/* more than UIAPI_MAX_ARGS were given */
};

/* An answer: status, its type, a malloc'ed body of len bytes. */
struct uiapi_reply {
	unsigned status;		/* 200, 400, 404, 422, 500 */
	const char *type;		/* "application/json", "text/plain; ..." */
	char *body;
	size_t len;
};

/*
 * Answer path (under /api/) with args over src: 1 with r set (any status:
 * a bad parameter is a 400 whose body is one line naming it), or 0 when
 * path is no API path (the caller's 404).  The caller serialises calls:
 * src is not thread-safe.
 */
int uiapi_handle(struct source *src, const char *path, const struct uiapi_args *args,
		 struct uiapi_reply *r);

/* Free what uiapi_handle() keeps between calls (a session's flame index,
 * flameindex.h), when the server stops. */
void uiapi_release(void);

#endif
