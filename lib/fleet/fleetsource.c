/*
 * fleetsource.c - a source (lib/query/source.h) on the ClickHouse fleet:
 * opening the client once for every command, and source.h's queries given
 * to fleetquery (hot spots), fleetplot (series), fleetdiff and fleetexport
 * with the source's host and session (fleetsource.h).
 */
#include "config.h"
#include <errno.h>
#include <string.h>
#include "fleetsource.h"
#include "chclient.h"
#include "fleetexport.h"
#include "fleetplot.h"
#include "fleetquery.h"
#include "push.h"

int fleetsource_check(const char *url, struct error *e)
{
	struct chclient_url u;

	return chclient_url_parse(url, &u, e) < 0 ? SOURCE_BAD_SPEC : 0;
}

int fleetsource_clients(const char *const *urls, size_t n, struct chclient **out,
			struct error *e)
{
	struct chclient_url url;
	struct chclient_cred cred;
	size_t i;

	if (chclient_credentials(&cred, e) < 0) {
		memset(cred.password, 0, sizeof(cred.password));
		return -1;
	}
	for (i = 0; i < n; i++) {
		out[i] = NULL;
		if (chclient_url_parse(urls[i], &url, e) < 0)
			break;
		if (!(out[i] = chclient_new(&url, &cred, e)))
			break;
	}
	memset(cred.password, 0, sizeof(cred.password));
	if (i == n)
		return 0;
	while (i-- > 0) {
		chclient_free(out[i]);
		out[i] = NULL;
	}
	return -1;
}

int fleetsource_open(const struct source_spec *spec, struct source *src, struct error *e)
{
	memset(src, 0, sizeof(*src));
	if (fleetsource_check(spec->url, e) < 0)
		return SOURCE_BAD_SPEC;
	if (fleetsource_clients(&spec->url, 1, &src->fleet, e) < 0)
		return -1;
	if (push_check_schema(src->fleet, e) < 0) {
		chclient_free(src->fleet);
		src->fleet = NULL;
		return -1;
	}
	src->host = spec->host;
	src->session = spec->session;
	return 0;
}

void fleetsource_pick(struct source *src, const char *host, int64_t session)
{
	int same = session == src->session &&
		   (host && src->host ? !strcmp(host, src->host) : host == src->host);

	if (same)
		return;
	fleetplot_free(src->fp);	/* the old selection's sessions */
	src->fp = NULL;
	src->host = host;
	src->session = session;
}

void fleetsource_close(struct source *src)
{
	fleetplot_free(src->fp);
	src->fp = NULL;
	chclient_free(src->fleet);
	src->fleet = NULL;
}

struct table *fleetsource_report(struct source *src, const struct report_opts *o, int by_host,
				 struct source_summary *ss, struct error *e)
{
	struct fleet_opts fo = {
		.host = src->host, .session = src->session,
		.by = by_host ? FLEET_BY_HOST : o->by == REPORT_BY_BINARY ? FLEET_BY_BINARY :
		      FLEET_BY_SYMBOL,
		.limit = o->limit, .filt = o,
	};

	return fleetquery_report(src->fleet, &fo, ss, e);
}

/* The fleet's sessions as a series source (series.h): their timeline. */
static struct timeline *fleet_timeline(const struct series_source *src,
				       const struct timeline_opts *o, struct error *e)
{
	return fleetplot_timeline(src->ctx, o, e);
}

int fleetsource_series(struct source *src, struct series_source *ss, int *nsessions,
		       int *nhosts, struct error *e)
{
	if (!src->fp && !(src->fp = fleetplot_open(src->fleet, src->host, src->session, e)))
		return -1;
	memset(ss, 0, sizeof(*ss));
	ss->session = *fleetplot_session(src->fp);
	ss->timeline = fleet_timeline;
	ss->ctx = src->fp;
	*nsessions = fleetplot_nsessions(src->fp);
	*nhosts = fleetplot_nhosts(src->fp);
	return 0;
}

int fleetsource_diff(struct source *src, const struct source_side *a,
		     const struct source_side *b, const struct report_opts *o, int filtered,
		     struct diff **out, struct error *e)
{
	return fleetdiff_build(src->fleet, a->host, a->id, b->host, b->id, o->by,
			       filtered ? o : NULL, out, e);
}

int fleetsource_export(struct source *src, const struct source_export_opts *o,
		       struct source_export_stats *st, struct error *e)
{
	struct fleetexport_opts fo = {
		.host = src->host, .session = src->session, .pid = o->pid, .comm = o->comm,
		.has_from = o->has_from, .has_to = o->has_to, .from_ns = o->from_ns,
		.to_ns = o->to_ns, .host_column = o->host_column,
		.process_start = o->process_start, .samples = o->samples, .bucket_ns = o->bucket_ns,
	};
	struct fleetexport_stats fst = { 0 };
	FILE *f = o->open(o->ctx, e);

	if (!f)
		return -1;
	if ((o->fmt == SOURCE_EXPORT_CSV ? fleetexport_csv : fleetexport_chrome)(src->fleet, &fo,
										  f, &fst, e) < 0)
		return -1;
	if (fflush(f) == EOF || ferror(f))
		return error_set(e, "writing %s: %s", o->out ? o->out : "the export",
				 strerror(errno ? errno : EIO));
	st->rows = fst.rows;
	st->anon = fst.anon;
	return 0;
}
