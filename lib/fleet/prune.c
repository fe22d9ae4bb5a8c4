/*
 * prune.c - 'strobe prune': drop the fleet's day partitions older than a
 * given age, whole sessions only, on every server of the cluster (prune.h).
 */
#include "config.h"
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "chclient.h"
#include "fleetquery.h"
#include "prune.h"
#include "push.h"

/* the sessions' rows first (see prune.h); symbols_local is shared by
 * binary key across sessions and hosts, and not partitioned */
const char *const prune_tables[] = {
	"sessions_local", "intervals_local", "samples_local", "samples_by_loc_local",
	"samples_by_time_local", "markers_local", "lost_local", "processes_local",
	"binaries_local",
};
const size_t prune_ntables = sizeof(prune_tables) / sizeof(prune_tables[0]);

int prune_parse_age(const char *s, int *days)
{
	size_t n = strlen(s);
	uint64_t v;
	int mult;
	char num[16];

	if (n < 2 || n - 1 >= sizeof(num))
		return -1;
	if (s[n - 1] == 'd')
		mult = 1;
	else if (s[n - 1] == 'w')
		mult = 7;
	else
		return -1;
	memcpy(num, s, n - 1);
	num[n - 1] = 0;
	if (strspn(num, "0123456789") != n - 1 || parse_u64(num, &v) < 0 || v == 0 ||
	    v > PRUNE_DAYS_MAX / mult)
		return -1;
	*days = (int)v * mult;
	return 0;
}

static int span_cmp(const void *a, const void *b)
{
	const struct prune_span *x = a, *y = b;
	int r = strcmp(x->host, y->host);

	if (r)
		return r;
	return x->session < y->session ? -1 : x->session > y->session;
}

size_t prune_spans_merge(struct prune_span *s, size_t n)
{
	size_t k = 0;

	if (!n)
		return 0;
	qsort(s, n, sizeof(*s), span_cmp);
	for (size_t i = 1; i < n; i++) {
		if (!span_cmp(&s[k], &s[i])) {
			if (s[i].first < s[k].first)
				s[k].first = s[i].first;
			if (s[i].last > s[k].last)
				s[k].last = s[i].last;
			free(s[i].host);
		} else {
			s[++k] = s[i];
		}
	}
	return k + 1;
}

static int last_desc(const void *a, const void *b)
{
	const struct prune_span *x = a, *y = b;

	return x->last > y->last ? -1 : x->last < y->last;
}

/*
 * By last day, newest first: B only moves down, to the first day of a
 * session with last >= B.  Once a session ends before B, so do all after
 * it, and B no longer moves.
 */
int64_t prune_boundary(struct prune_span *s, size_t n, int64_t cutoff, size_t *why)
{
	int64_t b = cutoff;

	*why = n;
	if (n)
		qsort(s, n, sizeof(*s), last_desc);
	for (size_t i = 0; i < n && s[i].last >= b; i++) {
		if (s[i].first < b) {
			b = s[i].first;
			*why = i;
		}
	}
	return b;
}

void prune_sql_spans(struct sbuf *b)
{
	sbuf_addf(b, "SELECT host, session, toUInt16(min(d0)), toUInt16(max(d1)) FROM (");
	for (size_t i = 0; i < prune_ntables; i++)
		sbuf_addf(b, "%sSELECT host, session, min(day) AS d0, max(day) AS d1 FROM %s "
			  "GROUP BY host, session", i ? " UNION ALL " : "", prune_tables[i]);
	sbuf_addf(b, ") GROUP BY host, session");
}

static void sql_tables(struct sbuf *b)
{
	for (size_t i = 0; i < prune_ntables; i++)
		sbuf_addf(b, "%s'%s'", i ? ", " : "", prune_tables[i]);
}

void prune_sql_partitions(struct sbuf *b)
{
	sbuf_addf(b, "SELECT table, partition_id, count(), sum(rows) FROM system.parts "
		  "WHERE database = currentDatabase() AND active AND table IN (");
	sql_tables(b);
	sbuf_addf(b, ") GROUP BY table, partition_id ORDER BY partition_id, table");
}

static int table_index(const char *t)
{
	for (size_t i = 0; i < prune_ntables; i++)
		if (!strcmp(t, prune_tables[i]))
			return (int)i;
	return -1;
}

int prune_partition_day(const char *id, int64_t *day)
{
	static const int mdays[] = { 31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31 };
	int y, m, d;

	if (strlen(id) != 8 || strspn(id, "0123456789") != 8)
		return -1;
	y = (id[0] - '0') * 1000 + (id[1] - '0') * 100 + (id[2] - '0') * 10 + (id[3] - '0');
	m = (id[4] - '0') * 10 + (id[5] - '0');
	d = (id[6] - '0') * 10 + (id[7] - '0');
	if (y < 1970 || m < 1 || m > 12 || d < 1 || d > mdays[m - 1] ||
	    (m == 2 && d == 29 && (y % 4 || (y % 100 == 0 && y % 400))))
		return -1;
	*day = push_day_of_date(y, m, d);
	return 0;
}

int prune_sql_drop(struct sbuf *b, const char *table, const char *id)
{
	int64_t day;

	if (table_index(table) < 0 || prune_partition_day(id, &day) < 0)
		return -1;
	sbuf_addf(b, "ALTER TABLE %s DROP PARTITION ID '%s'", table, id);
	return 0;
}

/* -- talking to the servers -- */

struct cluster_row {
	int shard, replica, local;
};

struct cluster {
	struct cluster_row *r;
	size_t n;
};

static int cluster_row(void *ctx, char **f, struct error *e)
{
	struct cluster *cl = ctx;
	char *end;
	long s = strtol(f[0], &end, 10), r;

	if (*end || s < 1 || s > 100000)
		return error_set(e, "system.clusters has a malformed shard number");
	r = strtol(f[1], &end, 10);
	if (*end || r < 1 || r > 100000 || cl->n >= PRUNE_SERVERS_MAX)
		return error_set(e, "system.clusters has a malformed replica number, or more "
				 "than %d servers in %s", PRUNE_SERVERS_MAX, PRUNE_CLUSTER);
	cl->r = xrealloc(cl->r, (cl->n + 1) * sizeof(*cl->r));
	cl->r[cl->n].shard = (int)s;
	cl->r[cl->n].replica = (int)r;
	cl->r[cl->n++].local = !strcmp(f[2], "1");
	return 0;
}

static int cluster_read(struct chclient *c, struct cluster *cl, struct error *e)
{
	struct sbuf q = { 0 };

	sbuf_addf(&q, "SELECT shard_num, replica_num, is_local FROM system.clusters WHERE "
		  "cluster = '%s' ORDER BY shard_num, replica_num", PRUNE_CLUSTER);
	return fleetquery_rows(c, &q, 3, cl, cluster_row, e);
}

/*
 * Each server's place in strobe_fleet (its row with is_local), and the
 * servers given must be every row of the cluster, each once: a shard left
 * out would keep its old days, and its sessions could still reach past
 * the boundary computed without them.
 */
static int check_cluster(struct prune_server *sv, size_t nsv, struct error *e)
{
	struct cluster first = { 0 };
	int ret = -1;

	for (size_t i = 0; i < nsv; i++) {
		struct cluster cl = { 0 };
		size_t local = 0, at = 0;

		if (cluster_read(sv[i].c, &cl, e) < 0) {
			free(cl.r);
			error_prefix(e, "%s", sv[i].name);
			goto out;
		}
		for (size_t k = 0; k < cl.n; k++)
			if (cl.r[k].local)
				local++, at = k;
		if (!cl.n || local != 1) {
			free(cl.r);
			error_set(e, "%s: %s in its cluster %s: every server of the fleet must "
				  "declare it, itself included (doc/FLEET.md)", sv[i].name,
				  !cl.n ? "no such cluster" : local ? "more than one entry for itself"
				  : "not one of the servers", PRUNE_CLUSTER);
			goto out;
		}
		sv[i].shard = cl.r[at].shard;
		sv[i].replica = cl.r[at].replica;
		if (!i) {
			first = cl;
			continue;
		}
		free(cl.r);
		for (size_t k = 0; k < i; k++)
			if (sv[k].shard == sv[i].shard && sv[k].replica == sv[i].replica) {
				error_set(e, "%s and %s are the same server of %s (shard %d, "
					  "replica %d): give each server once", sv[k].name,
					  sv[i].name, PRUNE_CLUSTER, sv[i].shard, sv[i].replica);
				goto out;
			}
	}
	for (size_t k = 0; k < first.n; k++) {
		size_t i;

		for (i = 0; i < nsv; i++)
			if (sv[i].shard == first.r[k].shard && sv[i].replica == first.r[k].replica)
				break;
		if (i == nsv) {
			error_set(e, "shard %d%s of %s (%zu servers) was not given: give every "
				  "server's URL with --source, each once", first.r[k].shard,
				  first.r[k].replica > 1 ? " (a replica)" : "", PRUNE_CLUSTER,
				  first.n);
			goto out;
		}
	}
	if (first.n != nsv) {
		error_set(e, "the servers disagree on the cluster %s: %s lists %zu servers, %zu "
			  "were given", PRUNE_CLUSTER, sv[0].name, first.n, nsv);
		goto out;
	}
	ret = 0;
out:
	free(first.r);
	return ret;
}

struct spans {
	struct prune_span *s;
	size_t n;
};

static int span_row(void *ctx, char **f, struct error *e)
{
	struct spans *sp = ctx;
	char *end0, *end1, *end2;
	long long id = strtoll(f[1], &end0, 10);
	long d0 = strtol(f[2], &end1, 10), d1 = strtol(f[3], &end2, 10);

	if (*end0 || *end1 || *end2 || end1 == f[2] || end2 == f[3] || d0 > d1)
		return error_set(e, "the fleet server's session days are malformed");
	sp->s = xrealloc(sp->s, (sp->n + 1) * sizeof(*sp->s));
	sp->s[sp->n].host = xstrdup(f[0]);
	sp->s[sp->n].session = id;
	sp->s[sp->n].first = d0;
	sp->s[sp->n++].last = d1;
	return 0;
}

struct part {
	int table;
	int64_t day;
	char id[9];
	uint64_t parts, rows;
};

struct parts {
	struct part *p;
	size_t n;
	int64_t before;		/* keep those of this day and later */
};

static int part_row(void *ctx, char **f, struct error *e)
{
	struct parts *ps = ctx;
	struct part p = { 0 };

	p.table = table_index(f[0]);
	if (p.table < 0)
		return error_set(e, "the fleet server listed parts of another table");
	if (prune_partition_day(f[1], &p.day) < 0)
		return error_set(e, "%s has a partition that is not a day (toYYYYMMDD): not "
				 "the schema of strobe", f[0]);
	if (p.day >= ps->before)
		return 0;
	memcpy(p.id, f[1], 9);
	p.parts = strtoull(f[2], NULL, 10);
	p.rows = strtoull(f[3], NULL, 10);
	ps->p = xrealloc(ps->p, (ps->n + 1) * sizeof(*ps->p));
	ps->p[ps->n++] = p;
	return 0;
}

/* by day, and within a day in the order of prune_tables */
static int part_cmp(const void *a, const void *b)
{
	const struct part *x = a, *y = b;

	if (x->day != y->day)
		return x->day < y->day ? -1 : 1;
	return x->table - y->table;
}

static void note(const struct prune_opts *o, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static void note(const struct prune_opts *o, const char *fmt, ...)
{
	char line[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	if (o->note)
		o->note(o->note_arg, line);
}

/* a host name from the server, for one line: unprintable bytes as '?' */
static const char *printable(const char *s, char *buf, size_t len)
{
	size_t i;

	for (i = 0; s[i] && i + 1 < len; i++)
		buf[i] = s[i] >= 0x20 && s[i] < 0x7f ? s[i] : '?';
	buf[i] = 0;
	return buf;
}

static int drop_server(struct prune_server *sv, const struct prune_opts *o, int64_t before,
		       struct prune_stats *st, struct error *e)
{
	struct parts ps = { .before = before };
	struct sbuf q = { 0 };
	const char *verb = o->dry_run ? "would drop" : "dropped";
	int ret = -1;

	prune_sql_partitions(&q);
	if (fleetquery_rows(sv->c, &q, 4, &ps, part_row, e) < 0) {
		error_prefix(e, "%s", sv->name);
		goto out;
	}
	qsort(ps.p, ps.n, sizeof(*ps.p), part_cmp);
	for (size_t i = 0; i < ps.n; i++) {
		struct part *p = &ps.p[i];

		if (!o->dry_run) {
			struct sbuf out = { 0 };

			if (prune_sql_drop(&q, prune_tables[p->table], p->id) < 0) {
				error_set(e, "bad partition %s of %s", p->id, prune_tables[p->table]);
				goto out;
			}
			if (chclient_query(sv->c, q.s, &out, e) < 0) {
				size_t l;

				error_prefix(e, "%s: dropping partition %s of %s", sv->name, p->id,
					     prune_tables[p->table]);
				l = strlen(e->msg);
				snprintf(e->msg + l, sizeof(e->msg) - l, " (what was dropped "
					 "before stays dropped: run prune again)");
				free(out.s);
				goto out;
			}
			free(out.s);
			free(q.s);
			memset(&q, 0, sizeof(q));
		}
		note(o, "shard %d%s (%s): %s %s partition %s: %" PRIu64 " parts, %" PRIu64 " rows",
		     sv->shard, sv->replica > 1 ? " replica" : "", sv->name, verb,
		     prune_tables[p->table], p->id, p->parts, p->rows);
		st->partitions++;
		st->parts += p->parts;
		st->rows += p->rows;
	}
	ret = 0;
out:
	free(q.s);
	free(ps.p);
	return ret;
}

int prune_run(struct prune_server *sv, size_t nsv, const struct prune_opts *o,
	      struct prune_stats *st, struct error *e)
{
	struct spans sp = { 0 };
	size_t why, n;
	char c_day[11], b_day[11], today[11], d0[11], d1[11], h[128];
	int ret = -1;

	memset(st, 0, sizeof(*st));
	if (!nsv || nsv > PRUNE_SERVERS_MAX)
		return error_set(e, "give 1 to %d servers", PRUNE_SERVERS_MAX);
	for (size_t i = 0; i < nsv; i++)
		if (push_check_schema(sv[i].c, e) < 0)
			return error_prefix(e, "%s", sv[i].name);
	if (check_cluster(sv, nsv, e) < 0)
		return -1;
	/* every server's sessions before any drop: a session's rows may be
	 * on several servers (a host that moved shard) */
	for (size_t i = 0; i < nsv; i++) {
		struct sbuf q = { 0 };

		prune_sql_spans(&q);
		if (fleetquery_rows(sv[i].c, &q, 4, &sp, span_row, e) < 0) {
			error_prefix(e, "%s", sv[i].name);
			goto out;
		}
	}
	n = prune_spans_merge(sp.s, sp.n);
	sp.n = n;
	st->cutoff = o->today - o->days;
	st->boundary = prune_boundary(sp.s, n, st->cutoff, &why);
	push_day_str(st->cutoff, c_day);
	push_day_str(st->boundary, b_day);
	push_day_str(o->today, today);
	if (why < n) {
		push_day_str(sp.s[why].first, d0);
		push_day_str(sp.s[why].last, d1);
		note(o, "cutoff %s (%d days before %s, UTC); session %" PRId64 " of host %s "
		     "spans %s to %s and is kept whole: %s the days before %s",
		     c_day, o->days, today, sp.s[why].session, printable(sp.s[why].host, h,
		     sizeof(h)), d0, d1, o->dry_run ? "would drop" : "dropping", b_day);
	} else {
		note(o, "cutoff %s (%d days before %s, UTC): %s the days before %s", c_day,
		     o->days, today, o->dry_run ? "would drop" : "dropping", b_day);
	}
	qsort(sp.s, n, sizeof(*sp.s), span_cmp);
	for (size_t i = 0; i < n; i++) {
		if (sp.s[i].last >= st->boundary)
			continue;
		push_day_str(sp.s[i].first, d0);
		push_day_str(sp.s[i].last, d1);
		note(o, "session %" PRId64 " of host %s (%s to %s): %s", sp.s[i].session,
		     printable(sp.s[i].host, h, sizeof(h)), d0, d1,
		     o->dry_run ? "would be dropped" : "dropping");
		st->sessions++;
	}
	for (size_t i = 0; i < nsv; i++)
		if (drop_server(&sv[i], o, st->boundary, st, e) < 0)
			goto out;
	ret = 0;
out:
	for (size_t i = 0; i < sp.n; i++)
		free(sp.s[i].host);
	free(sp.s);
	return ret;
}
