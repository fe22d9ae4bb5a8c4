/*
 * prune.h - 'strobe prune': retention for the fleet's ClickHouse tables
 * (doc/FLEET.md, "Retention").  ClickHouse 18.16 has no TTL, so old data
 * goes by ALTER TABLE ... DROP PARTITION on every server's *_local tables
 * (partitioned by toYYYYMMDD(day), UTC), whole sessions only.
 *
 * Rows are partitioned by their own day, so a session over midnight spans
 * partitions.  The cutoff day C is today (UTC) minus the age given; every
 * session with a row on C or later is kept whole, and so is every session
 * that any drop boundary would cut: the boundary B starts at C and moves
 * down to the first day of each session spanning it (first < B <= last)
 * until none does.  Partitions strictly before B are dropped, on every
 * shard (and replica) of the cluster strobe_fleet: the Distributed tables
 * cannot drop partitions and 18.16's ON CLUSTER needs ZooKeeper, so the
 * caller gives one client per server and prune_run() checks with
 * system.clusters that they are the whole cluster, each once.
 */
#ifndef STROBE_PRUNE_H
#define STROBE_PRUNE_H

#include <stddef.h>
#include <stdint.h>
#include "util.h"

struct chclient;

#define PRUNE_CLUSTER		"strobe_fleet"
#define PRUNE_DAYS_MAX		36500
#define PRUNE_SERVERS_MAX	256

/* the partitioned tables of schema version 3 (push.h's), in the order
 * they are dropped within a day: the sessions' rows first, so that an
 * interrupted prune leaves no session listed without its data */
extern const char *const prune_tables[];
extern const size_t prune_ntables;

struct prune_server {
	struct chclient *c;
	const char *name;	/* for messages: the URL */
	int shard, replica;	/* set by prune_run() from system.clusters */
};

struct prune_opts {
	int days;		/* keep sessions with a row in the last days */
	int64_t today;		/* UTC day number of now (push_day()) */
	int dry_run;
	/* called with each line for the user (no newline) */
	void (*note)(void *arg, const char *line);
	void *note_arg;
};

struct prune_stats {
	int64_t cutoff, boundary;		/* UTC day numbers */
	uint64_t sessions, partitions, parts, rows;	/* dropped (or would be) */
};

/* Check the servers (schema, cluster coverage), compute the boundary and
 * drop (or, dry run, list) the partitions before it.  0, or -1 with e set
 * (partitions dropped before a failure stay dropped: run it again). */
int prune_run(struct prune_server *sv, size_t nsv, const struct prune_opts *o,
	      struct prune_stats *st, struct error *e);

/* -- the pure parts, for the unit tests -- */

/* "30d" or "4w": 1 to PRUNE_DAYS_MAX days.  0, or -1. */
int prune_parse_age(const char *s, int *days);

/* A session's days: the UTC day numbers of its first and last rows over
 * every table (host malloc'ed). */
struct prune_span {
	char *host;
	int64_t session;
	int64_t first, last;
};

/* Sort s by (host, session) and merge the spans of one session (from
 * several tables or servers) into one; the new count. */
size_t prune_spans_merge(struct prune_span *s, size_t n);

/* The drop boundary for cutoff (reorders s): the largest day B <= cutoff
 * such that no session has first < B <= last.  *why: the index (in the
 * reordered s) of the session that set B, or n when B is the cutoff. */
int64_t prune_boundary(struct prune_span *s, size_t n, int64_t cutoff, size_t *why);

/* The query of a server's session spans: host, session, first and last
 * day (as day numbers) over every table of prune_tables. */
void prune_sql_spans(struct sbuf *b);
/* The query of a server's partitions of prune_tables: table,
 * partition_id, parts, rows. */
void prune_sql_partitions(struct sbuf *b);
/* "ALTER TABLE t DROP PARTITION ID 'id'": -1 (nothing appended) unless t
 * is one of prune_tables and id is a toYYYYMMDD partition (8 digits). */
int prune_sql_drop(struct sbuf *b, const char *table, const char *id);

/* A partition id "YYYYMMDD" as a UTC day number: 0, or -1 when it is not
 * one. */
int prune_partition_day(const char *id, int64_t *day);

#endif
