/*
 * dbgfetch.h - separate debug files fetched from debuginfod servers, as
 * elfutils fetches them: through libdebuginfod, by the binary's build-id,
 * into the library's own cache (DEBUGINFOD_CACHE_PATH, default
 * ~/.cache/debuginfod_client), from the servers of DEBUGINFOD_URLS.
 *
 * Only the report tools use it (the resolver, resolve.h), with the
 * reader's rights and environment; strobed never does (it is not even
 * linked with libdebuginfod).  Nothing is asked unless the user set
 * DEBUGINFOD_URLS to something non-blank, and only binaries with a
 * build-id are asked for.  A fetched file is used only when it carries
 * the binary's build-id (debuginfo_check_build_id), as a local one.
 *
 * Bounds: the library's timeout (DEBUGINFOD_TIMEOUT, seconds to connect
 * and per 100 KB received; DBGFETCH_DEFAULT_TIMEOUT when unset, where
 * libdebuginfod would wait 90 s), each download within
 * DBGFETCH_DEFAULT_MAXTIME seconds (DEBUGINFOD_MAXTIME, where unset; the
 * library has no total bound of its own), downloads of at most
 * DEBUGINFO_FILE_MAX (DEBUGINFOD_MAXSIZE, where unset), each build-id asked of the servers at
 * most once per dbgfetch, and after one query fails for any reason but "not found" (the
 * server is down, slow or broken) nothing more is asked: those binaries
 * are counted as not asked.  dbgfetch_summary says all of it in one line.
 *
 * Use one dbgfetch from one thread at a time.
 */
#ifndef STROBE_DBGFETCH_H
#define STROBE_DBGFETCH_H

#include "debuginfo.h"

#define DBGFETCH_DEFAULT_TIMEOUT "5"
#define DBGFETCH_DEFAULT_MAXTIME "120"	/* seconds for one file */
#define DBGFETCH_SERVERS_MAX 120	/* bytes of dbgfetch_servers() */

struct dbgfetch_counts {
	unsigned found;		/* fetched (or in the cache) and verified */
	unsigned missing;	/* no server has it (404) */
	unsigned failed;	/* the query failed otherwise */
	int fail_errno;		/* the first such failure's errno */
	unsigned skipped;	/* not asked: a query had failed before */
	unsigned refused;	/* fetched but not usable (not the binary's build-id) */
};

/* Pure helpers (unit-tested). */

/* Does DEBUGINFOD_URLS (urls, may be NULL) name any server: is it set
 * and not blank? */
int dbgfetch_enabled(const char *urls);

/* The servers of urls for messages: each space-separated URL without its
 * user:password@ and its ?query or #fragment (credentials and tokens stay
 * out of reports), bytes that are not printable ASCII as '?', at most
 * DBGFETCH_SERVERS_MAX bytes ("..." at the end when cut).  Caller frees. */
char *dbgfetch_servers(const char *urls);

/* The one-line summary of c for the servers (dbgfetch_servers), e.g.
 * "debuginfod: 2 binaries not found, 1 could not be fetched (Connection
 * refused), 3 not asked after that failure (server http://h:8002)";
 * NULL when nothing failed (found files are noted per binary).  Caller
 * frees. */
char *dbgfetch_summary_text(const struct dbgfetch_counts *c, const char *servers);

/* The client. */

struct dbgfetch;

/* A fetcher for the servers of urls (the caller's DEBUGINFOD_URLS; the
 * library reads that variable itself), or NULL when !dbgfetch_enabled.
 * Sets DEBUGINFOD_TIMEOUT=DBGFETCH_DEFAULT_TIMEOUT,
 * DEBUGINFOD_MAXTIME=DBGFETCH_DEFAULT_MAXTIME and
 * DEBUGINFOD_MAXSIZE=DEBUGINFO_FILE_MAX (no larger file would be used) in
 * this process's environment where unset or empty: libdebuginfod has no
 * other way to take them.  No connection is made before dbgfetch_find. */
struct dbgfetch *dbgfetch_new(const char *urls);
void dbgfetch_free(struct dbgfetch *f);

/*
 * The debug file of build-id hex (lowercase hex, 4 to 128 digits): 1 with
 * out->fd (open, verified) and out->path ("debuginfod: CACHE-PATH"), or 0
 * (out->refused may say why a fetched file was not used).  Release out
 * with debuginfo_found_free.  Blocks for at most the timeout above; a
 * build-id that gave nothing before, or any after a failed query, returns
 * 0 at once (one found before is asked again: the library's cache answers).
 */
int dbgfetch_find(struct dbgfetch *f, const char *hex, struct debuginfo_found *out);

/* What happened so far. */
const struct dbgfetch_counts *dbgfetch_counts(const struct dbgfetch *f);

/* dbgfetch_summary_text of what happened so far (caller frees), or NULL. */
char *dbgfetch_summary(const struct dbgfetch *f);

#endif
