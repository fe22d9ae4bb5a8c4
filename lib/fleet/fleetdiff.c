/*
 * fleetdiff.c - 'strobe diff --source URL': two pushed sessions compared
 * by the local diff's code (fleetexport.h, doc/FLEET.md "Fleet diff").
 */
#include "config.h"
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include "fleetexport.h"
#include "chclient.h"
#include "fleetquery.h"

int fleetdiff_parse_side(const char *arg, const char *host, const char **h, size_t *hlen,
			 int64_t *id, struct error *e)
{
	const char *colon = strrchr(arg, ':'), *num = colon ? colon + 1 : arg;
	uint64_t v;

	if (parse_u64(num, &v) < 0 || v == 0 || v > INT64_MAX)
		return error_set(e, "bad session '%s': give ID (with --host) or HOST:ID, "
				 "a session id of that host", arg);
	if (colon) {
		if (colon == arg)
			return error_set(e, "bad session '%s': no host before ':': give "
					 "HOST:ID", arg);
		*h = arg;
		*hlen = (size_t)(colon - arg);
	} else {
		if (!host)
			return error_set(e, "session '%s' of which host? Give --host NAME, or "
					 "HOST:ID", arg);
		*h = host;
		*hlen = strlen(host);
	}
	*id = (int64_t)v;
	return 0;
}

/* The comparison of host[i]'s session id[i] through filt[i] (NULL: no
 * filter), i = A, B: as fleetdiff_build(), the sides checked by the
 * caller. */
static int sides_diff(struct chclient *c, const char *const hosts[2], const int64_t ids[2],
		      enum report_by by, const struct report_opts *const filt[2],
		      struct diff **out, struct error *e)
{
	struct source_summary *fs[2] = { NULL, NULL };
	struct table *t[2] = { NULL, NULL };
	struct db_session s[2];
	struct diff *d = NULL;
	int side, ret = -1;

	for (side = 0; side < 2; side++) {
		struct fleet_opts fo = { .host = hosts[side], .session = ids[side],
					 .by = by == REPORT_BY_BINARY ? FLEET_BY_BINARY :
					 FLEET_BY_SYMBOL, .filt = filt[side] };

		fs[side] = xcalloc(1, sizeof(*fs[side]));
		t[side] = fleetquery_report(c, &fo, fs[side], e);
		if (!t[side]) {
			/* a session not in the fleet is the user's mistake */
			if (!strncmp(e->msg, "no session ", 11)) {
				error_prefix(e, "%s", side ? "B" : "A");
				ret = -2;
			}
			goto out;
		}
		s[side] = fs[side]->sum.session;
		if (!strcmp(s[side].state, "running")) {
			error_set(e, "session %lld of host '%s' (%s) is still running: compare "
				  "it when it has stopped", (long long)ids[side], hosts[side],
				  side ? "B" : "A");
			ret = -2;
			goto out;
		}
	}
	d = diff_begin(s, by);
	if (strcmp(hosts[0], hosts[1]))
		for (side = 0; side < 2; side++)
			snprintf(d->host[side], sizeof(d->host[side]), "%s", hosts[side]);
	for (side = 0; side < 2; side++) {
		struct report_summary *sum = xmalloc(sizeof(*sum));

		*sum = fs[side]->sum;	/* d keeps it */
		if (diff_add_side(d, side, t[side], sum, e) < 0)
			goto out;
	}
	diff_end(d);
	*out = d;
	d = NULL;
	ret = 0;
out:
	diff_free(d);
	for (side = 0; side < 2; side++) {
		table_free(t[side]);
		if (fs[side]) {
			free(fs[side]->lost);
			free(fs[side]);
		}
	}
	return ret;
}

int fleetdiff_build(struct chclient *c, const char *ha, int64_t a, const char *hb, int64_t b,
		    enum report_by by, const struct report_opts *filt, struct diff **out,
		    struct error *e)
{
	const char *hosts[2] = { ha, hb };
	const int64_t ids[2] = { a, b };
	const struct report_opts *f[2] = { filt, filt };

	*out = NULL;
	if (by != REPORT_BY_BINARY && by != REPORT_BY_SYMBOL)
		return error_set(e, "pushed sessions are compared by binary or symbol");
	if (a == b && !strcmp(ha, hb)) {
		error_set(e, "A and B are both session %lld of host '%s': give two different "
			  "sessions", (long long)a, ha);
		return -2;
	}
	return sides_diff(c, hosts, ids, by, f, out, e);
}

int fleetdiff_build_windows(struct chclient *c, const char *ha, const char *hb,
			    const struct diff_window w[2], enum report_by by,
			    const struct report_opts *filt, struct diff **out, struct error *e)
{
	const char *hosts[2] = { ha, hb };
	const int64_t ids[2] = { w[0].session, w[1].session };
	struct report_opts ro[2];
	const struct report_opts *f[2] = { &ro[0], &ro[1] };
	int side, rc;

	*out = NULL;
	if (by != REPORT_BY_BINARY && by != REPORT_BY_SYMBOL)
		return error_set(e, "pushed sessions are compared by binary or symbol");
	if (!strcmp(ha, hb) && w[0].session == w[1].session && w[0].from_ns == w[1].from_ns &&
	    w[0].to_ns == w[1].to_ns) {
		error_set(e, "A and B are the same window of session %lld of host '%s': give "
			  "two different windows or sessions", (long long)w[0].session, ha);
		return -2;
	}
	for (side = 0; side < 2; side++) {
		if (filt)
			ro[side] = *filt;
		else
			ro[side] = (struct report_opts){ .pid = -1, .mode = REPORT_ALL };
		ro[side].has_from = ro[side].has_to = 0;
	}
	if (diff_windows_opts(ro, w, e) < 0)
		return -2;
	rc = sides_diff(c, hosts, ids, by, f, out, e);
	if (rc < 0)
		return rc;
	diff_set_windows(*out, w);
	return 0;
}
