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
#include "exportcsv.h"
#include "push.h"

#define FLEETEXPORT_SESSIONS_MAX	4096

static void time_cond(struct sbuf *b, const struct fleetexport_opts *o, int64_t start)
{
	if (o->has_from)
		sbuf_addf(b, " AND time_ns >= %" PRId64, start + o->from_ns);
	if (o->has_to)
		sbuf_addf(b, " AND time_ns <= %" PRId64, start + o->to_ns);
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

struct xsession {
	char *host;
	int64_t id, start_ns;
	int nev;
	int ev[STROBE_MAX_COUNTERS];	/* its c0.. as indexes of x.events */
};

struct xp {
	struct chclient *c;
	const struct fleetexport_opts *o;
	struct xsession *ss;
	size_t nss;
	char events[STROBE_MAX_COUNTERS][128];
	int nev;
	struct fleetexport_stats *st;
	struct ob ob;
	int host_col, session_col;
	struct xsession *cur;		/* of the last row */
	char *esc;			/* the escaped text fields of a row */
	size_t esc_cap;
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
	s->id = num(f[1]);
	s->start_ns = num(f[9]);
	for (int i = 0; i < STROBE_MAX_COUNTERS; i++)
		s->ev[i] = -1;
	return 0;
}

static struct xsession *find_session(struct xp *x, const char *host, int64_t id)
{
	if (x->cur && x->cur->id == id && !strcmp(x->cur->host, host))
		return x->cur;
	for (size_t i = 0; i < x->nss; i++)
		if (x->ss[i].id == id && !strcmp(x->ss[i].host, host))
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
	for (i = 0; i < x->nev && strcmp(x->events[i], f[3]); i++)
		;
	if (i == x->nev) {
		if (x->nev == STROBE_MAX_COUNTERS)
			return 0;
		snprintf(x->events[x->nev++], sizeof(x->events[0]), "%s", f[3]);
	}
	s->ev[k] = i;
	if (s->nev <= k)
		s->nev = (int)k + 1;
	return 0;
}

static void header(struct xp *x)
{
	const char *names[STROBE_MAX_COUNTERS];

	for (int i = 0; i < x->nev; i++)
		names[i] = x->events[i];
	if (x->host_col)
		ob_str(&x->ob, "host,");
	if (x->session_col)
		ob_str(&x->ob, "session,");
	exportcsv_header(&x->ob, names, x->nev);
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
	int n = fleetquery_tsv_split(line, f, FLEETEXPORT_FIELDS + 1);

	if (n != FLEETEXPORT_FIELDS) {
		char msg[400];

		/* an error met after the first rows comes as text */
		chclient_error_line(200, line, strlen(line), msg, sizeof(msg));
		return error_set(e, "the fleet server failed while sending the samples: %s", msg);
	}
	if (!(s = find_session(x, f[0], num(f[1]))))
		return 0;	/* pushed while this ran */
	if (!x->st->rows++)
		header(x);
	if (x->host_col) {
		ob_csv(&x->ob, f[0], CSV_TEXT);
		ob_chr(&x->ob, ',');
	}
	if (x->session_col) {
		ob_i64(&x->ob, s->id);
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
	for (int i = 0; i < x->nev; i++) {
		c[i] = 0;
		cnull |= 1u << i;
	}
	for (int k = 0; k < s->nev; k++)
		if (s->ev[k] >= 0) {
			c[s->ev[k]] = num(f[13 + k]);
			cnull &= ~(1u << s->ev[k]);
		}
	r.nev = x->nev;
	r.c = c;
	r.c_null = cnull;
	exportcsv_row(&x->ob, &r);
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

int fleetexport_csv(struct chclient *c, const struct fleetexport_opts *o, FILE *f,
		    struct fleetexport_stats *st, struct error *e)
{
	struct fleet_opts fo = { .host = o->host, .session = o->session };
	struct xp x = { .c = c, .o = o, .st = st, .e = e };
	struct fleetexport_session *ss = NULL;
	struct sbuf sql = { 0 };
	int ret = -1;

	memset(st, 0, sizeof(*st));
	fleetquery_sql_sessions(&sql, &fo);
	if (fleetquery_rows(x.c, &sql, FLEETQUERY_SESSION_FIELDS, &x, session_row, e) < 0)
		goto out;
	if (!x.nss) {
		if (o->host && o->session)
			error_set(e, "no session %" PRId64 " of host '%s' in the fleet: "
				  "'strobe push' it first", o->session, o->host);
		else if (o->host)
			error_set(e, "no session of host '%s' in the fleet: check the name "
				  "(--host of 'strobe push', default the machine's name)", o->host);
		else if (o->session)
			error_set(e, "no session %" PRId64 " of any host in the fleet", o->session);
		else
			error_set(e, "no session in the fleet: 'strobe push' some first");
		goto out;
	}
	fleetquery_sql_events(&sql, &fo);
	if (fleetquery_rows(x.c, &sql, 4, &x, event_row, e) < 0)
		goto out;
	st->nr_sessions = (int)x.nss;
	for (size_t i = 0; i < x.nss; i++)
		st->nr_hosts += !i || strcmp(x.ss[i].host, x.ss[i - 1].host);
	x.host_col = st->nr_hosts > 1 || o->host_column;
	x.session_col = x.nss > 1;

	ss = xcalloc(x.nss, sizeof(*ss));
	for (size_t i = 0; i < x.nss; i++) {
		ss[i].host = x.ss[i].host;
		ss[i].id = x.ss[i].id;
		ss[i].start_ns = x.ss[i].start_ns;
	}
	fleetexport_sql(&sql, o, ss, x.nss);
	x.ob.f = f;
	x.ob.cap = 1 << 16;
	x.ob.buf = xmalloc(x.ob.cap);
	x.cur = NULL;
	if (chclient_query_lines(c, sql.s, sample_line, &x, e) < 0)
		goto out;
	ob_flush(&x.ob);
	if (x.ob.err) {
		error_set(e, "writing the export: %s", strerror(x.ob.err));
		goto out;
	}
	if (!st->rows) {
		nothing(o, e);
		goto out;
	}
	ret = 0;
out:
	for (size_t i = 0; i < x.nss; i++)
		free(x.ss[i].host);
	free(x.ss);
	free(ss);
	free(sql.s);
	free(x.ob.buf);
	free(x.esc);
	return ret;
}
