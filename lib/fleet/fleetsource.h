/*
 * fleetsource.h - the fleet behind lib/query/source.h: a source opened on
 * a ClickHouse URL, and each query of source.h run there (fleetquery,
 * fleetplot, fleetexport), so that a command reads pushed sessions as it
 * reads a local database.  source.c calls these for a fleet source; the
 * commands call only source.h, and 'strobe prune' (many servers, no
 * source) fleetsource_clients().
 *
 * Opening a client is done here once: the URL parsed (chclient.h refuses
 * credentials in it), the credentials read from the environment, the
 * password wiped from memory after chclient_new() took it.
 */
#ifndef STROBE_FLEETSOURCE_H
#define STROBE_FLEETSOURCE_H

#include <stddef.h>
#include "source.h"

struct chclient;

/* Open spec->url (source_open() for a fleet spec): SOURCE_BAD_SPEC for a
 * URL chclient_url_parse() refuses, -1 for the credentials, the client or
 * the schema (push_check_schema()); 0 with src->fleet. */
int fleetsource_open(const struct source_spec *spec, struct source *src, struct error *e);
void fleetsource_close(struct source *src);
/* source_pick() of a fleet source. */
void fleetsource_pick(struct source *src, const char *host, int64_t session);
/* source_check() of a fleet URL: 0, or SOURCE_BAD_SPEC with e set. */
int fleetsource_check(const char *url, struct error *e);

/* A client for each of urls[0..n) (URLs already checked with
 * chclient_url_parse()), the credentials read once; their schemas not
 * checked.  0 with out[0..n) set, or -1 with e set and none left open. */
int fleetsource_clients(const char *const *urls, size_t n, struct chclient **out,
			struct error *e);

/* The queries of source.h, on src->fleet. */
struct table *fleetsource_report(struct source *src, const struct report_opts *o, int by_host,
				 struct source_summary *ss, struct error *e);
int fleetsource_series(struct source *src, struct series_source *ss, int *nsessions,
		       int *nhosts, struct error *e);
int fleetsource_diff(struct source *src, const struct source_side *a,
		     const struct source_side *b, const struct report_opts *o, int filtered,
		     struct diff **out, struct error *e);
int fleetsource_export(struct source *src, const struct source_export_opts *o,
		       struct source_export_stats *st, struct error *e);

#endif
