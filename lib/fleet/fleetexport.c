/*
 * fleetexport.c - the CSV export of pushed sessions, streamed from
 * ClickHouse and written by the local export's code (fleetexport.h,
 * doc/FLEET.md "Fleet export").
 */
#include "config.h"
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include "fleetexport.h"
#include "chclient.h"
#include "chrometrace.h"
#include "exportcsv.h"
#include "procset.h"
#include "push.h"
#include "sessevent.h"

#define FLEETEXPORT_SESSIONS_MAX	4096

static void time_cond(struct sbuf *b, const struct fleetexport_opts *o, int64_t start)
{
	if (o->has_from)
		sbuf_addf(b, " AND time_ns >= %" PRId64, start + o->from_ns);
	if (o->has_to)
		sbuf_addf(b, " AND time_ns <= %" PRId64, start + o->to_ns);
}

/* Append the time range of o, of each of the n sessions' own start. */
static void range_where(struct sbuf *b, const struct fleetexport_opts *o,
			const struct fleetexport_session *ss, size_t n)
{
	if (!o->has_from && !o->has_to)
		return;
	/* the range is of each session's own start */
	if (n == 1) {
		time_cond(b, o, ss[0].start_ns);
		return;
	}
	sbuf_addf(b, " AND (0");
	for (size_t i = 0; i < n; i++) {
		sbuf_addf(b, " OR (host = ");
		push_sql_quote(b, ss[i].host);
		sbuf_addf(b, " AND session = %" PRId64, ss[i].id);
		time_cond(b, o, ss[i].start_ns);
		sbuf_addf(b, ")");
	}
	sbuf_addf(b, ")");
}

void fleetexport_where(struct sbuf *b, const struct fleetexport_opts *o,
		       const struct fleetexport_session *ss, size_t n)
{
	struct fleet_opts fo = { .host = o->host, .session = o->session };

	fleetquery_where(b, &fo);
	if (o->pid >= 0)
		sbuf_addf(b, " AND pid = %" PRId64, o->pid);
	if (o->comm) {
		sbuf_addf(b, " AND comm = ");
		push_sql_quote(b, o->comm);
	}
	range_where(b, o, ss, n);
}

#define SAMPLE_COLS "host, session, time_ns, tsc, cpu, pid, tid, comm, binary_id, binary_key, " \
	"offset, flags, c0, c1, c2, c3, c4, c5, c6, c7"

void fleetexport_sql(struct sbuf *b, const struct fleetexport_opts *o,
		     const struct fleetexport_session *ss, size_t n)
{
	struct fleet_opts fo = { .host = o->host, .session = o->session };

	/* the samples, named as the fleet report names them (symbols by
	 * key and offset, binaries' display names by host, session and
	 * id), sorted by time as the local export; equal times by CPU as
	 * strobed's merge stores them */
	sbuf_addf(b, "SELECT host, session, time_ns, tsc, cpu, pid, tid, comm, bname, "
		  "binary_key, symbol, offset, flags, c0, c1, c2, c3, c4, c5, c6, c7 FROM "
		  "(SELECT " SAMPLE_COLS ", symbol FROM (SELECT " SAMPLE_COLS " FROM samples "
		  "WHERE ");
	fleetexport_where(b, o, ss, n);
	sbuf_addf(b, ") ANY LEFT JOIN (SELECT binary_key, offset, any(symbol) AS symbol FROM "
		  "symbols WHERE binary_key GLOBAL IN (SELECT DISTINCT binary_key FROM samples "
		  "WHERE ");
	fleetexport_where(b, o, ss, n);
	sbuf_addf(b, ") GROUP BY binary_key, offset) USING (binary_key, offset)) ANY LEFT JOIN "
		  "(SELECT host, session, binary_id, any(name) AS bname FROM binaries WHERE ");
	fleetquery_where(b, &fo);
	sbuf_addf(b, " GROUP BY host, session, binary_id) USING (host, session, binary_id) "
		  "ORDER BY host, session, time_ns, cpu, tid FORMAT TabSeparated");
}

/* ---- running it ---- */

struct pname {
	int64_t pid;
	char *name;
};

struct xsession {
	char *host;
	struct db_session s;		/* hostname: the host; its own events */
	int ev[STROBE_MAX_COUNTERS];	/* its c0.. as indexes of xp.u's events */
	struct procset ps;		/* --process-start: its processes */
	struct pname *pn;		/* chrome-trace: its processes' latest */
	size_t npn, pncap;		/* names, by pid */
	char *label;			/* chrome-trace of several: "host#session" */
	const char *evnames[STROBE_MAX_COUNTERS];
};

struct xp {
	struct chclient *c;
	const struct fleetexport_opts *o;
	struct xsession *ss;
	size_t nss;
	struct db_session u;		/* the union of the sessions' events */
	struct fleetexport_stats *st;
	struct ob ob;
	int host_col, session_col;
	struct xsession *cur;		/* of the last row */
	char *esc;			/* the escaped text fields of a row */
	size_t esc_cap;
	struct chrometrace ct;		/* chrome-trace: */
	struct chrometrace_session *css;	/* of each of ss */
	struct error *e;
};

static int64_t num(const char *s)
{
	return strtoll(s, NULL, 10);
}

static int session_row(void *ctx, char **f, struct error *e)
{
	struct xp *x = ctx;
	struct xsession *s;

	if (x->nss >= FLEETEXPORT_SESSIONS_MAX)
		return error_set(e, "more than %d sessions to export: give --host or "
				 "--session", FLEETEXPORT_SESSIONS_MAX);
	x->ss = xrealloc(x->ss, (x->nss + 1) * sizeof(*x->ss));
	s = &x->ss[x->nss++];
	memset(s, 0, sizeof(*s));
	s->host = xstrdup(f[0]);
	fleetquery_session_parse(f, &s->s);
	snprintf(s->s.hostname, sizeof(s->s.hostname), "%s", f[0]);
	/* as strobed stores it: none while running */
	s->s.duration_ns = s->s.end_ns > s->s.start_ns ? s->s.end_ns - s->s.start_ns : 0;
	for (int i = 0; i < STROBE_MAX_COUNTERS; i++)
		s->ev[i] = -1;
	return 0;
}

static struct xsession *find_session(struct xp *x, const char *host, int64_t id)
{
	if (x->cur && x->cur->s.id == id && !strcmp(x->cur->host, host))
		return x->cur;
	for (size_t i = 0; i < x->nss; i++)
		if (x->ss[i].s.id == id && !strcmp(x->ss[i].host, host))
			return x->cur = &x->ss[i];
	return NULL;
}

/* The union of the sessions' events by name, in the order they first
 * appear: one session's are its own, in its order. */
static int event_row(void *ctx, char **f, struct error *e)
{
	struct xp *x = ctx;
	struct xsession *s = find_session(x, f[0], num(f[1]));
	int64_t k = num(f[2]) - 1;
	int i;

	(void)e;
	if (!s || k < 0 || k >= STROBE_MAX_COUNTERS)
		return 0;
	i = session_event_union(&x->u, f[3]);
	if (i < 0)		/* more events than columns: the rest left out */
		return 0;
	s->ev[k] = i;
	session_event_set(&s->s, k, f[3]);
	return 0;
}

/* host, session, pid, start (0: unknown), in that order: procset.h */
static int process_row(void *ctx, char **f, struct error *e)
{
	struct xsession *s = find_session(ctx, f[0], num(f[1]));

	(void)e;
	if (s)
		procset_add(&s->ps, num(f[2]), num(f[3]));
	return 0;
}

/* host, session, pid, latest name; by pid */
static int pname_row(void *ctx, char **f, struct error *e)
{
	struct xsession *s = find_session(ctx, f[0], num(f[1]));

	(void)e;
	if (!s)
		return 0;
	ARRAY_GROW(s->pn, s->pncap, s->npn + 1);
	s->pn[s->npn].pid = num(f[2]);
	s->pn[s->npn++].name = xstrdup(f[3]);
	return 0;
}

static int kernel_row(void *ctx, char **f, struct error *e)
{
	struct xsession *s = find_session(ctx, f[0], num(f[1]));

	(void)e;
	if (s)
		snprintf(s->s.kernel_release, sizeof(s->s.kernel_release), "%s", f[2]);
	return 0;
}

static void header(struct xp *x)
{
	const char *names[STROBE_MAX_COUNTERS];

	for (int i = 0; i < x->u.nr_events; i++)
		names[i] = x->u.events[i].name;
	if (x->host_col)
		ob_str(&x->ob, "host,");
	if (x->session_col)
		ob_str(&x->ob, "session,");
	exportcsv_header(&x->ob, names, x->u.nr_events);
	if (x->o->process_start)
		ob_str(&x->ob, ",process_start_ns");
	ob_chr(&x->ob, '\n');
}

/* s escaped as a CSV text field at x->esc + *at; its length */
static size_t esc(struct xp *x, size_t *at, const char *s)
{
	size_t need = *at + CSV_ESCAPE_MAX(strlen(s)) + 2, n;

	if (need > x->esc_cap) {
		x->esc_cap = 2 * need;
		x->esc = xrealloc(x->esc, x->esc_cap);
	}
	n = csv_escape(x->esc + *at, s, CSV_TEXT);
	*at += n;
	return n;
}

/* Split a streamed line into nf fields: 0, or -1 with e set when it is
 * not a row (an error the server met after the first rows comes as text). */
static int split_line(char *line, char **f, int nf, const char *what, struct error *e)
{
	char msg[400];

	if (fleetquery_tsv_split(line, f, nf + 1) == nf)
		return 0;
	chclient_error_line(200, line, strlen(line), msg, sizeof(msg));
	return error_set(e, "the fleet server failed while sending the %s: %s", what, msg);
}

static int sample_line(void *arg, char *line, struct error *e)
{
	struct xp *x = arg;
	char *f[FLEETEXPORT_FIELDS + 1];
	int64_t c[STROBE_MAX_COUNTERS];
	struct exportcsv_row r = { 0 };
	struct xsession *s;
	const char *bid;
	size_t at = 0, o_comm, o_loc, o_bid;
	uint32_t cnull = 0;

	if (split_line(line, f, FLEETEXPORT_FIELDS, "samples", e) < 0)
		return -1;
	if (!(s = find_session(x, f[0], num(f[1]))))
		return 0;	/* pushed while this ran */
	if (!x->st->rows++)
		header(x);
	if (x->host_col) {
		ob_csv(&x->ob, f[0], CSV_TEXT);
		ob_chr(&x->ob, ',');
	}
	if (x->session_col) {
		ob_i64(&x->ob, s->s.id);
		ob_chr(&x->ob, ',');
	}
	if (!strcmp(f[9], "[anon]"))
		x->st->anon++;
	o_comm = at;
	r.lcomm = esc(x, &at, f[7]);
	o_loc = at;
	esc(x, &at, f[8]);
	x->esc[at++] = ',';
	esc(x, &at, f[10]);
	r.lloc = at - o_loc;
	o_bid = at;
	bid = fleetquery_build_id(f[9]);
	r.lbuild_id = esc(x, &at, bid ? bid : "");
	r.comm = x->esc + o_comm;
	r.loc = x->esc + o_loc;
	r.build_id = x->esc + o_bid;
	r.time_ns = (uint64_t)num(f[2]);
	r.tsc = (uint64_t)num(f[3]);
	r.cpu = (uint64_t)num(f[4]);
	r.pid = (uint64_t)num(f[5]);
	r.tid = (uint64_t)num(f[6]);
	r.offset = strtoull(f[11], NULL, 10);
	r.flags = (uint32_t)num(f[12]);
	/* each event's column from the session's c<k>; empty when the
	 * session did not count it */
	for (int i = 0; i < x->u.nr_events; i++) {
		c[i] = 0;
		cnull |= 1u << i;
	}
	for (int k = 0; k < s->s.nr_events; k++)
		if (s->ev[k] >= 0) {
			c[s->ev[k]] = num(f[13 + k]);
			cnull &= ~(1u << s->ev[k]);
		}
	r.nev = x->u.nr_events;
	r.c = c;
	r.c_null = cnull;
	exportcsv_row(&x->ob, &r);
	if (x->o->process_start)
		exportcsv_process_start(&x->ob, procset_at(&s->ps, (int64_t)r.pid,
							   (int64_t)r.time_ns));
	ob_chr(&x->ob, '\n');
	if (x->ob.err)
		return error_set(e, "writing the export: %s", strerror(x->ob.err));
	return 0;
}

static void nothing(const struct fleetexport_opts *o, struct error *e)
{
	char who[300] = "";

	if (o->pid >= 0 && o->comm)
		snprintf(who, sizeof(who), " of pid %" PRId64 " named '%s'", o->pid, o->comm);
	else if (o->pid >= 0)
		snprintf(who, sizeof(who), " of pid %" PRId64, o->pid);
	else if (o->comm)
		snprintf(who, sizeof(who), " of processes named '%s'", o->comm);
	if (o->has_from || o->has_to)
		error_set(e, "nothing to export: no samples%s in the time range of the selected "
			  "sessions: widen --from/--to", who);
	else if (who[0])
		error_set(e, "nothing to export: no samples%s in the selected sessions: check "
			  "--pid and --comm", who);
	else
		error_set(e, "nothing to export: the selected sessions have no samples");
}

/* The selected sessions and their events into x; the sessions for the
 * samples' query into *ssp. */
static int xp_open(struct xp *x, struct fleetexport_session **ssp, struct error *e)
{
	const struct fleetexport_opts *o = x->o;
	struct fleet_opts fo = { .host = o->host, .session = o->session };
	struct fleetexport_session *ss;
	struct sbuf sql = { 0 };

	fleetquery_sql_sessions(&sql, &fo);
	if (fleetquery_rows(x->c, &sql, FLEETQUERY_SESSION_FIELDS, x, session_row, e) < 0)
		return -1;
	if (!x->nss)
		return fleetquery_no_session(e, o->host, o->session);
	fleetquery_sql_events(&sql, &fo);
	if (fleetquery_rows(x->c, &sql, 4, x, event_row, e) < 0)
		return -1;
	x->st->nr_sessions = (int)x->nss;
	for (size_t i = 0; i < x->nss; i++)
		x->st->nr_hosts += !i || strcmp(x->ss[i].host, x->ss[i - 1].host);
	if (o->process_start) {
		sbuf_addf(&sql, "SELECT host, session, pid, if(start_ns < 0, 0, start_ns) AS st "
			  "FROM processes WHERE ");
		fleetquery_where(&sql, &fo);
		sbuf_addf(&sql, " ORDER BY host, session, pid, st FORMAT TabSeparated");
		if (fleetquery_rows(x->c, &sql, 4, x, process_row, e) < 0)
			return -1;
	}
	*ssp = ss = xcalloc(x->nss, sizeof(*ss));
	for (size_t i = 0; i < x->nss; i++) {
		ss[i].host = x->ss[i].host;
		ss[i].id = x->ss[i].s.id;
		ss[i].start_ns = x->ss[i].s.start_ns;
	}
	x->ob.cap = 1 << 16;
	x->ob.buf = xmalloc(x->ob.cap);
	x->cur = NULL;
	return 0;
}

static void xp_free(struct xp *x)
{
	for (size_t i = 0; i < x->nss; i++) {
		free(x->ss[i].host);
		free(x->ss[i].label);
		procset_free(&x->ss[i].ps);
		for (size_t k = 0; k < x->ss[i].npn; k++)
			free(x->ss[i].pn[k].name);
		free(x->ss[i].pn);
	}
	free(x->ss);
	free(x->css);
	free(x->ob.buf);
	free(x->esc);
	chrometrace_free(&x->ct);
}

/* The end of a streamed export: flushed, and something written. */
static int xp_done(struct xp *x, struct error *e)
{
	if (!x->st->rows) {
		nothing(x->o, e);
		return -1;
	}
	ob_flush(&x->ob);
	if (x->ob.err)
		return error_set(e, "writing the export: %s", strerror(x->ob.err));
	return 0;
}

int fleetexport_csv(struct chclient *c, const struct fleetexport_opts *o, FILE *f,
		    struct fleetexport_stats *st, struct error *e)
{
	struct xp x = { .c = c, .o = o, .st = st, .e = e, .ob.f = f };
	struct fleetexport_session *ss = NULL;
	struct sbuf sql = { 0 };
	int ret = -1;

	memset(st, 0, sizeof(*st));
	if (xp_open(&x, &ss, e) < 0)
		goto out;
	x.host_col = st->nr_hosts > 1 || o->host_column;
	x.session_col = x.nss > 1;
	fleetexport_sql(&sql, o, ss, x.nss);
	if (chclient_query_lines(c, sql.s, sample_line, &x, e) < 0)
		goto out;
	ret = xp_done(&x, e);
out:
	free(ss);
	free(sql.s);
	xp_free(&x);
	return ret;
}

/* ---- Chrome trace (chrometrace.h) ---- */

static struct chrometrace_session *chrome_session(struct xp *x, const char *host, int64_t id)
{
	struct xsession *s = find_session(x, host, id);

	return s ? &x->css[s - x->ss] : NULL;
}

static int chrome_sample_line(void *arg, char *line, struct error *e)
{
	struct xp *x = arg;
	char *f[FLEETEXPORT_FIELDS + 1];
	uint64_t c[STROBE_MAX_COUNTERS];
	struct chrometrace_session *cs;
	struct chrometrace_sample smp;

	if (split_line(line, f, FLEETEXPORT_FIELDS, "samples", e) < 0)
		return -1;
	if (!(cs = chrome_session(x, f[0], num(f[1]))))
		return 0;	/* pushed while this ran */
	if (!x->st->rows++)
		chrometrace_begin(&x->ct, &x->ob, x->o->bucket_ns, x->o->samples);
	if (!strcmp(f[9], "[anon]"))
		x->st->anon++;
	for (int k = 0; k < cs->nev; k++)
		c[k] = (uint64_t)num(f[13 + k]);
	smp = (struct chrometrace_sample){
		.time_ns = num(f[2]), .cpu = (uint64_t)num(f[4]), .pid = (uint32_t)num(f[5]),
		.tid = (uint32_t)num(f[6]), .comm = f[7], .binary = f[8], .symbol = f[10],
		.c = c,
	};
	chrometrace_sample(&x->ct, cs, &smp);
	if (x->ob.err)
		return error_set(e, "writing the export: %s", strerror(x->ob.err));
	return 0;
}

/* host, session, time_ns, cpu, pid, tid, kind, name, args: as pushed, a
 * NULL cpu is -1, a NULL pid or tid 0, NULL args '' (push.c) */
static int chrome_marker_line(void *arg, char *line, struct error *e)
{
	struct xp *x = arg;
	char *f[10];
	struct chrometrace_session *cs;
	struct chrometrace_marker m;

	if (split_line(line, f, 9, "markers", e) < 0)
		return -1;
	if (!(cs = chrome_session(x, f[0], num(f[1]))))
		return 0;
	m = (struct chrometrace_marker){
		.time_ns = num(f[2]), .cpu = num(f[3]), .pid = num(f[4]), .tid = num(f[5]),
		.kind = f[6], .name = f[7], .args = *f[8] ? f[8] : NULL,
	};
	m.has_cpu = m.cpu >= 0;
	m.has_pid = m.pid != 0;
	m.has_tid = m.tid != 0;
	chrometrace_marker(&x->ct, cs, &m);
	return 0;
}

static int chrome_lost_line(void *arg, char *line, struct error *e)
{
	struct xp *x = arg;
	char *f[7];
	struct chrometrace_session *cs;

	if (split_line(line, f, 6, "lost records", e) < 0)
		return -1;
	if ((cs = chrome_session(x, f[0], num(f[1]))))
		chrometrace_lost(&x->ct, cs, num(f[2]), num(f[3]), num(f[4]), f[5]);
	return 0;
}

static int chrome_proc_name(void *ctx, const struct chrometrace_session *cs, uint32_t pid,
			    const char **name, struct error *e)
{
	struct xp *x = ctx;
	const struct xsession *s = &x->ss[cs - x->css];
	size_t lo = 0, hi = s->npn;

	(void)e;
	*name = NULL;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (s->pn[mid].pid == pid) {
			*name = s->pn[mid].name;
			break;
		}
		if (s->pn[mid].pid < pid)
			lo = mid + 1;
		else
			hi = mid;
	}
	return 0;
}

/* The markers' or lost records' query: o's sessions and time range. */
static void chrome_sql(struct sbuf *b, const char *cols, const char *table,
		       const struct fleetexport_opts *o, const struct fleetexport_session *ss,
		       size_t n)
{
	struct fleet_opts fo = { .host = o->host, .session = o->session };

	sbuf_addf(b, "SELECT host, session, %s FROM %s WHERE ", cols, table);
	fleetquery_where(b, &fo);
	range_where(b, o, ss, n);
	sbuf_addf(b, " ORDER BY host, session, time_ns%s FORMAT TabSeparated",
		  strcmp(table, "lost") ? "" : ", cpu");
}

int fleetexport_chrome(struct chclient *c, const struct fleetexport_opts *o, FILE *f,
		       struct fleetexport_stats *st, struct error *e)
{
	struct fleet_opts fo = { .host = o->host, .session = o->session };
	struct xp x = { .c = c, .o = o, .st = st, .e = e, .ob.f = f };
	struct fleetexport_session *ss = NULL;
	const struct db_session **sp = NULL;
	struct sbuf sql = { 0 };
	char filters[256];
	int ret = -1;

	memset(st, 0, sizeof(*st));
	if (xp_open(&x, &ss, e) < 0)
		goto out;
	sbuf_addf(&sql, "SELECT host, session, kernel_release FROM (SELECT 0 AS src, "
		  "toUInt32(0) AS k, host, session, kernel_release FROM sessions WHERE batch = 0 "
		  "AND ");
	fleetquery_where(&sql, &fo);
	sbuf_addf(&sql, " UNION ALL SELECT 1 AS src, interval_no AS k, host, session, "
		  "kernel_release FROM intervals WHERE ");
	fleetquery_where(&sql, &fo);
	sbuf_addf(&sql, ") ORDER BY host, session, src, k DESC LIMIT 1 BY host, session "
		  "FORMAT TabSeparated");
	if (fleetquery_rows(c, &sql, 3, &x, kernel_row, e) < 0)
		goto out;
	/* each process's latest name, as the local export's chrome_names() */
	sbuf_addf(&sql, "SELECT host, session, pid, comm FROM processes WHERE ");
	fleetquery_where(&sql, &fo);
	sbuf_addf(&sql, " AND comm != '' ORDER BY host, session, pid, start_ns DESC LIMIT 1 BY "
		  "host, session, pid FORMAT TabSeparated");
	if (fleetquery_rows(c, &sql, 4, &x, pname_row, e) < 0)
		goto out;

	x.css = xcalloc(x.nss, sizeof(*x.css));
	sp = xcalloc(x.nss, sizeof(*sp));
	for (size_t i = 0; i < x.nss; i++) {
		struct xsession *s = &x.ss[i];

		for (int k = 0; k < s->s.nr_events; k++)
			s->evnames[k] = s->s.events[k].name;
		x.css[i] = (struct chrometrace_session){
			.start_ns = s->s.start_ns, .nev = s->s.nr_events, .events = s->evnames,
		};
		if (x.nss > 1) {
			struct sbuf l = { 0 };

			sbuf_addf(&l, "%s#%" PRId64, s->host, s->s.id);
			s->label = l.s;
			x.css[i].label = s->label;
			x.css[i].pid_base = (int64_t)i * CHROMETRACE_PID_SPAN;
		}
		sp[i] = &s->s;
	}

	fleetexport_sql(&sql, o, ss, x.nss);
	if (chclient_query_lines(c, sql.s, chrome_sample_line, &x, e) < 0)
		goto out;
	if (!st->rows) {
		nothing(o, e);
		goto out;
	}
	chrometrace_samples_end(&x.ct);
	free(sql.s);
	memset(&sql, 0, sizeof(sql));
	chrome_sql(&sql, "time_ns, cpu, pid, tid, kind, name, args", "markers", o, ss, x.nss);
	if (chclient_query_lines(c, sql.s, chrome_marker_line, &x, e) < 0)
		goto out;
	free(sql.s);
	memset(&sql, 0, sizeof(sql));
	chrome_sql(&sql, "time_ns, cpu, count, kind", "lost", o, ss, x.nss);
	if (chclient_query_lines(c, sql.s, chrome_lost_line, &x, e) < 0)
		goto out;
	if (chrometrace_names(&x.ct, x.css, x.nss, chrome_proc_name, &x, e) < 0)
		goto out;
	chrometrace_filters(filters, sizeof(filters), o->pid, o->comm, o->has_from, o->from_ns,
			    o->has_to, o->to_ns);
	chrometrace_end(&x.ct, &(struct chrometrace_info){
		.filters = filters, .n = x.nss, .s = sp,
	});
	ret = xp_done(&x, e);
out:
	free(ss);
	free(sp);
	free(sql.s);
	xp_free(&x);
	return ret;
}
