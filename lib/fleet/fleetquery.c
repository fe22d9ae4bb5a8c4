/*
 * fleetquery.c - the hot-spot report of pushed sessions, summed in
 * ClickHouse (fleetquery.h, doc/FLEET.md "Fleet reports").
 */
#include "config.h"
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include "fleetquery.h"
#include "sessevent.h"
#include "chclient.h"
#include "output.h"
#include "push.h"

#define FLEET_SESSIONS_MAX	FLEETQUERY_SESSIONS_MAX

void fleetquery_where(struct sbuf *b, const struct fleet_opts *o)
{
	if (!o->host && !o->session) {
		sbuf_addf(b, "1");
		return;
	}
	if (o->host) {
		sbuf_addf(b, "host = ");
		push_sql_quote(b, o->host);
	}
	if (o->session)
		sbuf_addf(b, "%ssession = %" PRId64, o->host ? " AND " : "", o->session);
}

void fleetquery_sql_filters(struct sbuf *b, const struct fleet_opts *o)
{
	const struct report_opts *f = o->filt;

	if (!f)
		return;
	if (f->pid >= 0)
		sbuf_addf(b, " AND pid = %" PRId64, f->pid);
	if (f->comm) {
		sbuf_addf(b, " AND comm = ");
		push_sql_quote(b, f->comm);
	}
	if (f->mode == REPORT_KERNEL)
		sbuf_addf(b, " AND bitAnd(flags, %u) != 0", STROBE_SAMPLE_KERNEL);
	else if (f->mode == REPORT_USER)
		sbuf_addf(b, " AND bitAnd(flags, %u) != 0", STROBE_SAMPLE_USER);
	if (f->binary) {
		/* as qfilter_binaries(): the path, its file name, the key, or
		 * every kernel for [kernel.kallsyms] */
		sbuf_addf(b, " AND (host, session, binary_id) GLOBAL IN (SELECT host, session, "
			  "binary_id FROM binaries WHERE ");
		fleetquery_where(b, o);
		sbuf_addf(b, " AND (path = ");
		push_sql_quote(b, f->binary);
		sbuf_addf(b, " OR replaceRegexpOne(path, '^.*/', '') = ");
		push_sql_quote(b, f->binary);
		sbuf_addf(b, " OR key = ");
		push_sql_quote(b, f->binary);
		if (!strcmp(f->binary, "[kernel.kallsyms]"))
			sbuf_addf(b, " OR substring(key, 1, 7) = 'kernel:'");
		sbuf_addf(b, "))");
	}
}

int fleetquery_raw_forced(void)
{
	const char *env = getenv("STROBE_FLEET_RAW");

	/* a benchmark and test knob (bench/fleet-report.sh) */
	return env && *env && strcmp(env, "0");
}

void fleetquery_from_samples(struct sbuf *b, const struct fleet_opts *o, const char **count)
{
	const struct report_opts *f = o->filt;
	int timed = f && (f->has_from || f->has_to);
	int raw = timed || fleetquery_raw_forced();

	*count = raw ? "count()" : "sum(n)";
	sbuf_addf(b, "FROM %s", raw ? "samples" : "samples_by_loc");
	if (timed) {
		/* the start of a stopped session (batch 0) or of a running
		 * one (its intervals) */
		sbuf_addf(b, " GLOBAL ANY INNER JOIN (SELECT host, session, start_ns AS s_start "
			  "FROM (SELECT host, session, start_ns FROM sessions WHERE batch = 0 AND ");
		fleetquery_where(b, o);
		sbuf_addf(b, " UNION ALL SELECT host, session, start_ns FROM intervals WHERE ");
		fleetquery_where(b, o);
		sbuf_addf(b, ")) USING (host, session)");
	}
	sbuf_addf(b, " WHERE ");
	fleetquery_where(b, o);
	fleetquery_sql_filters(b, o);
	if (!f)
		return;
	if (f->has_from)
		sbuf_addf(b, " AND time_ns >= s_start + %" PRId64, f->from_ns);
	if (f->has_to)
		sbuf_addf(b, " AND time_ns <= s_start + %" PRId64, f->to_ns);
}

/*
 * A session's row: batch 0 of sessions once it has stopped and was pushed;
 * while it runs (strobed --push, schema 3), its newest interval row, as
 * state 'running' with the samples pushed so far.
 */
void fleetquery_sql_sessions(struct sbuf *b, const struct fleet_opts *o)
{
	sbuf_addf(b, "SELECT host, session, name, state, backend, sample_event, sample_freq, "
		  "sample_period, nr_cpus, start_ns, end_ns, samples, lost, throttled, "
		  "wall_offset_ns FROM (SELECT 0 AS src, toUInt32(0) AS k, host, session, name, state, backend, "
		  "sample_event, sample_freq, sample_period, nr_cpus, start_ns, end_ns, samples, "
		  "lost, throttled, wall_offset_ns FROM sessions WHERE batch = 0 AND ");
	fleetquery_where(b, o);
	sbuf_addf(b, " UNION ALL SELECT 1 AS src, interval_no AS k, host, session, name, "
		  "'running' AS state, backend, sample_event, sample_freq, sample_period, "
		  "nr_cpus, start_ns, toInt64(0) AS end_ns, toInt64(samples_total) AS samples, "
		  "toInt64(0) AS lost, toInt64(0) AS throttled, wall_offset_ns FROM intervals "
		  "WHERE ");
	fleetquery_where(b, o);
	sbuf_addf(b, ") ORDER BY host, session, src, k DESC LIMIT 1 BY host, session "
		  "LIMIT %d FORMAT TabSeparated", FLEET_SESSIONS_MAX + 1);
}

void fleetquery_sql_events(struct sbuf *b, const struct fleet_opts *o)
{
	sbuf_addf(b, "SELECT host, session, num, ev FROM (SELECT 0 AS src, toUInt32(0) AS k, "
		  "host, session, events FROM sessions WHERE batch = 0 AND ");
	fleetquery_where(b, o);
	sbuf_addf(b, " UNION ALL SELECT 1 AS src, interval_no AS k, host, session, events FROM "
		  "intervals WHERE ");
	fleetquery_where(b, o);
	sbuf_addf(b, " ORDER BY host, session, src, k DESC LIMIT 1 BY host, session) "
		  "ARRAY JOIN events AS ev, arrayEnumerate(events) AS num "
		  "ORDER BY host, session, num FORMAT TabSeparated");
}

/* Whether the percent is of the periods (report_summary.weighted): when
 * the mean period of the locations differs.  Counted in ClickHouse, as
 * distinct reduced fractions, so that the locations need not come here. */
void fleetquery_sql_weighted(struct sbuf *b, const struct fleet_opts *o)
{
	const char *count;
	struct sbuf from = { 0 };

	fleetquery_from_samples(&from, o, &count);
	sbuf_addf(b, "SELECT uniqExact(intDiv(p, g), intDiv(n, g)) FROM (SELECT p, n, "
		  "gcd(p, n) AS g FROM (SELECT toUInt64(sum(period)) AS p, toUInt64(%s) "
		  "AS n %s", count, from.s);
	free(from.s);
	sbuf_addf(b, " GROUP BY host, session, binary_id, offset, bitAnd(flags, 15)) "
		  "WHERE n > 0) FORMAT TabSeparated");
}

void fleetquery_sql_lost(struct sbuf *b, const struct fleet_opts *o)
{
	sbuf_addf(b, "SELECT kind, cpu, sum(count) AS n FROM lost WHERE ");
	fleetquery_where(b, o);
	sbuf_addf(b, " GROUP BY kind, cpu HAVING n > 0 ORDER BY kind, cpu FORMAT TabSeparated");
}

void fleetquery_sql_report(struct sbuf *b, const struct fleet_opts *o)
{
	int sym = o->by == FLEET_BY_SYMBOL;
	const char *count;
	struct sbuf from = { 0 };

	fleetquery_from_samples(&from, o, &count);
	sbuf_addf(b, "SELECT host, session, bname, binary_key, symbol, problem, sum(n), "
		  "sum(p), sum(s0), sum(s1), sum(s2), sum(s3), sum(s4), sum(s5), sum(s6), "
		  "sum(s7) FROM (SELECT host, session, binary_id, binary_key, n, p, s0, s1, "
		  "s2, s3, s4, s5, s6, s7, %s FROM (SELECT host, session, binary_id, "
		  "binary_key, offset, %s AS n, sum(period) AS p, sum(c0) AS s0, "
		  "sum(c1) AS s1, sum(c2) AS s2, sum(c3) AS s3, sum(c4) AS s4, sum(c5) AS s5, "
		  "sum(c6) AS s6, sum(c7) AS s7 %s", sym ? "symbol" : "'' AS symbol", count,
		  from.s);
	sbuf_addf(b, " GROUP BY host, session, binary_id, binary_key, offset)");
	if (sym) {
		sbuf_addf(b, " ANY LEFT JOIN (SELECT binary_key, offset, any(symbol) AS symbol "
			  "FROM symbols WHERE binary_key GLOBAL IN (SELECT DISTINCT binary_key %s"
			  ") GROUP BY binary_key, offset) USING (binary_key, offset)", from.s);
	}
	sbuf_addf(b, ") ANY LEFT JOIN (SELECT host, session, binary_id, argMax(name, batch) AS bname, "
		  "argMax(problem, batch) AS problem FROM binaries WHERE ");
	fleetquery_where(b, o);
	sbuf_addf(b, " GROUP BY host, session, binary_id) USING (host, session, binary_id) "
		  "GROUP BY host, session, bname, binary_key, symbol, problem "
		  "FORMAT TabSeparated");
	free(from.s);
}

int fleetquery_tsv_split(char *line, char **fields, int max)
{
	int n = 0;
	char *r = line, *w = line;

	if (max <= 0)
		return 0;
	fields[n++] = w;
	for (; *r; r++) {
		if (*r == '\t') {
			*w++ = 0;
			if (n == max)
				return n;
			fields[n++] = w;
		} else if (*r == '\\' && r[1]) {
			r++;
			switch (*r) {
			case 't': *w++ = '\t'; break;
			case 'n': *w++ = '\n'; break;
			case 'r': *w++ = '\r'; break;
			case 'b': *w++ = '\b'; break;
			case 'f': *w++ = '\f'; break;
			case '0': *w++ = '\0'; break;
			default: *w++ = *r; break;
			}
		} else {
			*w++ = *r;
		}
	}
	*w = 0;
	return n;
}

/* ---- running the queries ---- */

struct fsession {
	char *host;
	struct db_session s;
	int ev[STROBE_MAX_COUNTERS];	/* its c0.. as indexes of fq.u's events */
};

struct fgroup {
	char *host, *binary, *key, *symbol;
	size_t next;			/* the next of its hash chain, + 1 */
	uint64_t samples, weight;
	uint64_t c[STROBE_MAX_COUNTERS];
};

struct fq {
	struct chclient *c;
	const struct fleet_opts *o;
	struct source_summary *fs;
	struct fsession *ss;
	size_t nss;
	struct db_session u;		/* the union of the sessions' events */
	struct fgroup *g;
	size_t ng, galloc;
	size_t *heads;			/* hash chains of g: index + 1, 0: end */
	size_t nheads;
};

/* hash_string() of s, then a byte that ends it (0xff; NULL: 0xfe), so
 * that ("ab", "c") and ("a", "bc"), NULL and "" hash apart. */
static uint64_t hash_str(uint64_t h, const char *s)
{
	return (hash_string(h, s) ^ (s ? 0xff : 0xfe)) * HASH_STRING_PRIME;
}

static uint64_t group_hash(const char *host, const char *binary, const char *key,
			   const char *symbol)
{
	return hash_str(hash_str(hash_str(hash_str(HASH_STRING_INIT, host), binary), key),
			symbol);
}

/* Grow the chains with the groups: at most two groups a chain on average. */
static void rehash(struct fq *q)
{
	free(q->heads);
	q->nheads = q->nheads ? 2 * q->nheads : 1024;
	q->heads = xcalloc(q->nheads, sizeof(*q->heads));
	for (size_t i = 0; i < q->ng; i++) {
		struct fgroup *g = &q->g[i];
		size_t b = group_hash(g->host, g->binary, g->key, g->symbol) % q->nheads;

		g->next = q->heads[b];
		q->heads[b] = i + 1;
	}
}

int fleetquery_rows(struct chclient *c, struct sbuf *sql, int nf, void *ctx,
		    int (*row)(void *ctx, char **f, struct error *e), struct error *e)
{
	struct sbuf out = { 0 };
	char **f = xcalloc((size_t)nf, sizeof(*f));
	char *p, *nl;
	int ret = chclient_query(c, sql->s, &out, e);

	for (p = out.s; !ret && p && *p; p = nl + 1) {
		nl = strchr(p, '\n');
		if (!nl)
			nl = p + strlen(p) - 1;
		else
			*nl = 0;
		if (fleetquery_tsv_split(p, f, nf) != nf)
			ret = error_set(e, "the fleet server's answer is malformed: a row without "
					"%d fields", nf);
		else
			ret = row(ctx, f, e);
	}
	free(f);
	free(out.s);
	free(sql->s);
	memset(sql, 0, sizeof(*sql));
	return ret < 0 ? -1 : ret;
}

static int64_t num(const char *s)
{
	return strtoll(s, NULL, 10);
}

int fleetquery_no_session(struct error *e, const char *host, int64_t session)
{
	if (host && session)
		return error_set(e, "no session %" PRId64 " of host '%s' in the fleet: "
				 "'strobe push' it first", session, host);
	if (host)
		return error_set(e, "no session of host '%s' in the fleet: check the name "
				 "(--host of 'strobe push', default the machine's name)", host);
	if (session)
		return error_set(e, "no session %" PRId64 " of any host in the fleet", session);
	return error_set(e, "no session in the fleet: 'strobe push' some first");
}

void fleetquery_session_parse(char **f, struct db_session *s)
{
	memset(s, 0, sizeof(*s));
	s->id = num(f[1]);
	snprintf(s->name, sizeof(s->name), "%s", f[2]);
	snprintf(s->state, sizeof(s->state), "%s", f[3]);
	snprintf(s->backend, sizeof(s->backend), "%s", f[4]);
	snprintf(s->sample_event, sizeof(s->sample_event), "%s", f[5]);
	s->sample_freq = num(f[6]);
	s->sample_period = num(f[7]);
	s->nr_cpus = num(f[8]);
	s->start_ns = num(f[9]);
	s->end_ns = num(f[10]);
	s->samples = num(f[11]);
	s->lost = num(f[12]);
	s->throttled = num(f[13]);
	s->wall_offset_ns = num(f[14]);
	s->late_records = -1;
}

static int session_row(void *ctx, char **f, struct error *e)
{
	struct fq *q = ctx;
	struct fsession *x;

	if (q->nss >= FLEET_SESSIONS_MAX) {
		error_set(e, "more than %d sessions in the fleet report: give --host or "
			  "--session", FLEET_SESSIONS_MAX);
		return -1;
	}
	q->ss = xrealloc(q->ss, (q->nss + 1) * sizeof(*q->ss));
	x = &q->ss[q->nss++];
	memset(x, 0, sizeof(*x));
	x->host = xstrdup(f[0]);
	fleetquery_session_parse(f, &x->s);
	for (int i = 0; i < STROBE_MAX_COUNTERS; i++)
		x->ev[i] = -1;
	return 0;
}

static struct fsession *find_session(struct fq *q, const char *host, int64_t id)
{
	for (size_t i = 0; i < q->nss; i++)
		if (q->ss[i].s.id == id && !strcmp(q->ss[i].host, host))
			return &q->ss[i];
	return NULL;
}

/* The union of the sessions' events, in the order they first appear. */
static int event_row(void *ctx, char **f, struct error *e)
{
	struct fq *q = ctx;
	struct fsession *x = find_session(q, f[0], num(f[1]));
	int64_t k = num(f[2]) - 1;
	int i;

	(void)e;
	if (!x || k < 0 || k >= STROBE_MAX_COUNTERS)
		return 0;
	session_event_set(&x->s, k, f[3]);
	i = session_event_union(&q->u, f[3]);
	if (i >= 0)		/* more events than columns: the rest left out */
		x->ev[k] = i;
	return 0;
}

static int weighted_row(void *ctx, char **f, struct error *e)
{
	struct fq *q = ctx;
	(void)e;
	q->fs->sum.weighted = num(f[0]) > 1;
	return 0;
}

static int lost_row(void *ctx, char **f, struct error *e)
{
	struct fq *q = ctx;
	struct source_summary *fs = q->fs;
	struct source_lost *l;

	(void)e;
	fs->lost = xrealloc(fs->lost, (fs->nlost + 1) * sizeof(*fs->lost));
	l = &fs->lost[fs->nlost++];
	snprintf(l->kind, sizeof(l->kind), "%s", f[0]);
	l->cpu = (int)num(f[1]);
	l->count = num(f[2]);
	return 0;
}

static int same(const char *a, const char *b)
{
	return (!a && !b) || (a && b && !strcmp(a, b));
}

static int report_row(void *ctx, char **f, struct error *e)
{
	struct fq *q = ctx;
	struct fsession *x = find_session(q, f[0], num(f[1]));
	const char *binary = f[2][0] ? f[2] : f[3][0] ? f[3] : "[unknown]";
	const char *host = NULL, *key = NULL, *symbol = NULL;
	uint64_t n = (uint64_t)num(f[6]), p = (uint64_t)num(f[7]);
	struct fgroup *g = NULL;
	size_t i, b;

	(void)e;
	if (!x)		/* pushed while this ran: not in the summary */
		return 0;
	if (q->o->by == FLEET_BY_HOST) {
		host = f[0];
		binary = NULL;
	} else {
		key = f[3];
		if (q->o->by == FLEET_BY_SYMBOL)
			symbol = f[4];
	}
	if (q->ng >= 2 * q->nheads)
		rehash(q);
	b = group_hash(host, binary, key, symbol) % q->nheads;
	for (i = q->heads[b]; i; i = g->next) {
		g = &q->g[i - 1];
		if (same(g->host, host) && same(g->binary, binary) && same(g->key, key) &&
		    same(g->symbol, symbol))
			break;
	}
	if (!i) {
		if (q->ng == q->galloc) {
			q->galloc = q->galloc ? 2 * q->galloc : 256;
			q->g = xrealloc(q->g, q->galloc * sizeof(*q->g));
		}
		g = &q->g[q->ng++];
		memset(g, 0, sizeof(*g));
		g->host = host ? xstrdup(host) : NULL;
		g->binary = binary ? xstrdup(binary) : NULL;
		g->key = key ? xstrdup(key) : NULL;
		g->symbol = symbol ? xstrdup(symbol) : NULL;
		g->next = q->heads[b];
		q->heads[b] = q->ng;
	}
	g->samples += n;
	g->weight += q->fs->sum.weighted ? p : n;
	q->fs->sum.samples += n;
	q->fs->sum.weight += q->fs->sum.weighted ? p : n;
	if (f[5][0])
		q->fs->sum.unresolved += n;
	for (int k = 0; k < STROBE_MAX_COUNTERS; k++) {
		uint64_t v = (uint64_t)num(f[8 + k]);

		if (x->ev[k] < 0)
			continue;
		g->c[x->ev[k]] += v;
		q->fs->sum.total[x->ev[k]] += v;
	}
	return 0;
}

/* The local report's order (report_rank_cmp), then ties broken by name:
 * host, binary, symbol, binary key. */
static int fgroup_cmp(const void *pa, const void *pb)
{
	const struct fgroup *a = pa, *b = pb;
	int c;

	if ((c = report_rank_cmp(a->weight, a->samples, b->weight, b->samples)))
		return c;
	if ((c = strcmp(a->host ? a->host : "", b->host ? b->host : "")))
		return c;
	if ((c = strcmp(a->binary ? a->binary : "", b->binary ? b->binary : "")))
		return c;
	if ((c = strcmp(a->symbol ? a->symbol : "", b->symbol ? b->symbol : "")))
		return c;
	return strcmp(a->key ? a->key : "", b->key ? b->key : "");
}

/* The build_id column as the resolver has it (report.c): the hex build-id
 * of buildid: and kernel: keys, the key of others, none for no file. */
static const char *build_id(const char *key)
{
	if (!strncmp(key, "kernel:", 7))
		return key + 7;
	if (!key[0] || key[0] == '[')
		return NULL;
	if (!strncmp(key, "buildid:", 8))
		return key + 8;
	return key;
}

static struct table *layout(struct fq *q)
{
	struct report_derived mt[3 * STROBE_MAX_COUNTERS + 1];
	int nmt, c_mt0 = 0;
	struct table *t = table_new();
	struct report_mcols *mc;
	struct report_opts ro = { .by = q->o->by == FLEET_BY_BINARY ? REPORT_BY_BINARY :
				  REPORT_BY_SYMBOL, .pid = -1, .limit = q->o->limit };

	if (q->o->filt) {		/* the filters, for the meta */
		const struct report_opts *f = q->o->filt;

		ro.pid = f->pid;
		ro.comm = f->comm;
		ro.binary = f->binary;
		ro.mode = f->mode;
		ro.has_from = f->has_from;
		ro.from_ns = f->from_ns;
		ro.has_to = f->has_to;
		ro.to_ns = f->to_ns;
		ro.nr_metrics = f->nr_metrics;	/* -M: one session's */
		memcpy(ro.metrics, f->metrics, sizeof(ro.metrics));
	}
	int c_bin, c_bid = -1, c_sym = -1, c_samples, c_pct, c_ev0 = 0;
	size_t i, nshow = q->ng;

	c_bin = table_add_col(t, q->o->by == FLEET_BY_HOST ? "host" : "binary", COL_STR);
	if (q->o->by != FLEET_BY_HOST) {
		c_bid = table_add_col(t, "build_id", COL_STR);
		c_sym = table_add_col(t, "symbol", COL_STR);
	}
	c_samples = table_add_col(t, "samples", COL_INT);
	c_pct = table_add_col(t, "percent", COL_PCT);
	for (int k = 0; k < q->u.nr_events; k++) {
		int c = table_add_col(t, q->u.events[k].name, COL_INT);

		if (!k)
			c_ev0 = c;
	}
	/* the local report's derived columns, of the events by name */
	nmt = report_derived_list(&q->u, mt, (int)ARRAY_SIZE(mt));
	for (int k = 0; k < nmt; k++) {
		int c = table_add_col(t, mt[k].name, mt[k].type);

		if (!k)
			c_mt0 = c;
	}
	/* -M, of one session (fleetquery_report): its events are q->u's */
	mc = report_mcols_add(t, &ro, &q->fs->sum.session);
	report_add_meta(t, &ro, &q->fs->sum);
	if (q->ng)
		qsort(q->g, q->ng, sizeof(*q->g), fgroup_cmp);
	if (q->o->limit && q->o->limit < nshow)
		nshow = q->o->limit;
	for (i = 0; i < nshow; i++) {
		const struct fgroup *g = &q->g[i];
		size_t row = table_add_row(t);

		table_set_str(t, row, c_bin, g->host ? g->host : g->binary);
		if (c_bid >= 0 && build_id(g->key))
			table_set_str(t, row, c_bid, build_id(g->key));
		if (c_sym >= 0 && g->symbol)
			table_set_str(t, row, c_sym, g->symbol);
		table_set_int(t, row, c_samples, (int64_t)g->samples);
		table_set_float(t, row, c_pct, q->fs->sum.weight ?
				100.0 * g->weight / q->fs->sum.weight : 0);
		for (int k = 0; k < q->u.nr_events; k++)
			table_set_int(t, row, c_ev0 + k, (int64_t)g->c[k]);
		for (int k = 0; k < nmt; k++) {
			uint64_t den = g->c[mt[k].den];

			if (den)	/* zero denominator: null */
				table_set_float(t, row, c_mt0 + k,
						mt[k].scale * (double)g->c[mt[k].num] / den);
		}
		report_mcols_set(t, row, mc, g->c);
	}
	free(mc);
	return t;
}

struct table *fleetquery_report(struct chclient *c, const struct fleet_opts *o,
				struct source_summary *fs, struct error *e)
{
	struct fq q = { .c = c, .o = o, .fs = fs };
	struct sbuf sql = { 0 };
	struct table *t = NULL;
	size_t i;

	memset(fs, 0, sizeof(*fs));
	fleetquery_sql_sessions(&sql, o);
	if (fleetquery_rows(q.c, &sql, FLEETQUERY_SESSION_FIELDS, &q, session_row, e) < 0)
		goto out;
	if (!q.nss) {
		fleetquery_no_session(e, o->host, o->session);
		goto out;
	}
	fleetquery_sql_events(&sql, o);
	if (fleetquery_rows(q.c, &sql, 4, &q, event_row, e) < 0)
		goto out;
	fleetquery_sql_weighted(&sql, o);
	if (fleetquery_rows(q.c, &sql, 1, &q, weighted_row, e) < 0)
		goto out;
	fleetquery_sql_report(&sql, o);
	if (fleetquery_rows(q.c, &sql, 16, &q, report_row, e) < 0)
		goto out;
	fleetquery_sql_lost(&sql, o);
	if (fleetquery_rows(q.c, &sql, 3, &q, lost_row, e) < 0)
		goto out;

	fs->nr_sessions = (int)q.nss;
	fs->nr_hosts = 0;
	for (i = 0; i < q.nss; i++)
		fs->nr_hosts += !i || strcmp(q.ss[i].host, q.ss[i - 1].host);
	if (o->filt && o->filt->nr_metrics && (q.nss != 1 || q.u.nr_events != q.ss[0].s.nr_events)) {
		error_set(e, "-M with --source is of one session: give --host and --session");
		goto out;
	}
	if (q.nss == 1) {
		fs->sum.session = q.ss[0].s;
		if (report_state_note(&fs->sum.session, fs->sum.notes[fs->sum.nr_notes],
				      sizeof(fs->sum.notes[0])))
			fs->sum.nr_notes++;
	} else {
		struct db_session *s = &fs->sum.session;

		for (i = 0; i < q.nss; i++) {
			s->samples += q.ss[i].s.samples;
			s->lost += q.ss[i].s.lost;
			s->throttled += q.ss[i].s.throttled;
		}
		s->late_records = -1;
		s->nr_events = q.u.nr_events;
		memcpy(s->events, q.u.events, sizeof(s->events));
	}
	if (!fs->sum.weighted)
		fs->sum.weight = fs->sum.samples;
	t = layout(&q);
out:
	if (!t) {
		free(fs->lost);
		fs->lost = NULL;
		fs->nlost = 0;
	}
	for (i = 0; i < q.nss; i++)
		free(q.ss[i].host);
	free(q.ss);
	for (i = 0; i < q.ng; i++) {
		free(q.g[i].host);
		free(q.g[i].binary);
		free(q.g[i].key);
		free(q.g[i].symbol);
	}
	free(q.g);
	free(q.heads);
	free(sql.s);
	return t;
}

const char *fleetquery_build_id(const char *key)
{
	return build_id(key);
}

/* ---- the sessions' list (source_sessions()) ---- */

struct slist {
	struct source_session *v;
	size_t n;
	size_t at;			/* slist_find()'s place */
};

/* The session of host and id: the events' rows come in the sessions'
 * order (both ORDER BY host, session), so the search goes forward. */
static struct source_session *slist_find(struct slist *l, const char *host, int64_t id)
{
	for (; l->at < l->n; l->at++)
		if (l->v[l->at].s.id == id && !strcmp(l->v[l->at].host, host))
			return &l->v[l->at];
	l->at = 0;	/* not in the order after all: from the start next time */
	return NULL;
}

static int slist_session_row(void *ctx, char **f, struct error *e)
{
	struct slist *l = ctx;
	struct source_session *x;

	if (l->n >= FLEET_SESSIONS_MAX)
		return error_set(e, "more than %d sessions in the fleet: give --host or "
				 "--session", FLEET_SESSIONS_MAX);
	l->v = xrealloc(l->v, (l->n + 1) * sizeof(*l->v));
	x = &l->v[l->n++];
	fleetquery_session_parse(f, &x->s);
	snprintf(x->host, sizeof(x->host), "%s", f[0]);
	x->s.duration_ns = x->s.end_ns > x->s.start_ns ? x->s.end_ns - x->s.start_ns : 0;
	return 0;
}

static int slist_event_row(void *ctx, char **f, struct error *e)
{
	struct source_session *x = slist_find(ctx, f[0], num(f[1]));

	(void)e;
	if (x)
		session_event_set(&x->s, num(f[2]) - 1, f[3]);
	return 0;
}

int fleetquery_sessions(struct chclient *c, const struct fleet_opts *o,
			struct source_session **out, size_t *n, struct error *e)
{
	struct slist l = { NULL, 0, 0 };
	struct sbuf sql = { 0 };

	*out = NULL;
	*n = 0;
	fleetquery_sql_sessions(&sql, o);
	if (fleetquery_rows(c, &sql, FLEETQUERY_SESSION_FIELDS, &l, slist_session_row, e) < 0)
		goto fail;
	if (!l.n) {
		fleetquery_no_session(e, o->host, o->session);
		goto fail;
	}
	fleetquery_sql_events(&sql, o);
	if (fleetquery_rows(c, &sql, 4, &l, slist_event_row, e) < 0)
		goto fail;
	*out = l.v;
	*n = l.n;
	return 0;
fail:
	free(sql.s);
	free(l.v);
	return -1;
}
