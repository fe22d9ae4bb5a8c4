/*
 * sessionexport.c - the samples of a local session exported as CSV or a
 * Chrome trace: source.h's source_export() of a local source, the fleet's
 * being lib/fleet/fleetexport.c (which writes the same bytes for the same
 * samples through the same writers, exportcsv.h and chrometrace.h).
 *
 * Samples are read from the session's rowid range in time order: in rowid
 * order when strobed stored none of them after a later one
 * (sessions.late_samples 0), else sorted by time.  Each (binary, offset)
 * is named once through the resolver (lib/symbols/resolve.h), and for CSV its
 * escaped binary, symbol and build-id fields are kept (struct locmemo), as
 * are each comm's, so that a row costs no escaping.  The Chrome trace
 * takes the session's samples (with --samples each named through the
 * resolver), markers, lost records and process names read here.
 */
#include "config.h"
#ifndef _GNU_SOURCE
#define _GNU_SOURCE 1
#endif
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include "sessionexport.h"
#include "cgset.h"
#include "chrometrace.h"
#include "where.h"
#include "eventscan.h"
#include "exportcsv.h"
#include "procset.h"
#include "progress.h"
#include "resolve.h"
#include "samplescan.h"

/* ---- comm names by id ---- */

struct comms {
	int64_t *id;
	char **name;
	char **csv;			/* name as a CSV text field */
	size_t n;
};

static int comms_load(struct db *db, struct comms *c, struct error *e)
{
	sqlite3_stmt *st;
	size_t cap = 0, cap2 = 0, cap3 = 0;
	int rc;

	if (sqlite3_prepare_v2(db_sqlite(db), "SELECT id,name FROM comms ORDER BY id",
			       -1, &st, NULL))
		return db_sql_error(db, e, "reading comms");
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		const char *name = (const char *)sqlite3_column_text(st, 1);

		ARRAY_GROW(c->id, cap, c->n + 1);
		ARRAY_GROW(c->name, cap2, c->n + 1);
		ARRAY_GROW(c->csv, cap3, c->n + 1);
		c->id[c->n] = sqlite3_column_int64(st, 0);
		c->name[c->n] = xstrdup(name ? name : "");
		c->csv[c->n] = xmalloc(CSV_ESCAPE_MAX(strlen(c->name[c->n])) + 1);
		c->csv[c->n][csv_escape(c->csv[c->n], c->name[c->n], CSV_TEXT)] = 0;
		c->n++;
	}
	sqlite3_finalize(st);
	return rc == SQLITE_DONE ? 0 : db_sql_error(db, e, "reading comms");
}

/* The index of comms.id id, or -1 when unknown (0: the process had exited). */
static ssize_t comm_index(const struct comms *c, int64_t id)
{
	size_t lo = 0, hi = c->n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (c->id[mid] == id)
			return (ssize_t)mid;
		if (c->id[mid] < id)
			lo = mid + 1;
		else
			hi = mid;
	}
	return -1;
}

/* The name of comms.id id; "" when unknown (0: the process had exited). */
static const char *comm_name(const struct comms *c, int64_t id)
{
	ssize_t i = comm_index(c, id);

	return i < 0 ? "" : c->name[i];
}

/* The same as a CSV text field. */
static const char *comm_csv(const struct comms *c, int64_t id)
{
	ssize_t i = comm_index(c, id);

	return i < 0 ? "" : c->csv[i];
}

/* comms.id of name, 0 if none */
static int64_t comm_find(const struct comms *c, const char *name)
{
	for (size_t i = 0; i < c->n; i++)
		if (!strcmp(c->name[i], name))
			return c->id[i];
	return 0;
}

static void comms_free(struct comms *c)
{
	for (size_t i = 0; i < c->n; i++) {
		free(c->name[i]);
		free(c->csv[i]);
	}
	free(c->id);
	free(c->name);
	free(c->csv);
}

/* ---- the samples ---- */

struct exp {
	const struct source_export_opts *o;
	struct db *db;
	struct db_session s;
	int nev;
	struct comms comms;
	int64_t comm_id;		/* --comm, 0: none */
	struct resolver *res;
	struct sample_scan *sc;		/* the samples, */
	const struct sample_scan_row *row;	/* positioned on the first row */
	struct ob ob;
	struct chrometrace ct;		/* chrome-trace */
	uint64_t rows;
	int cg;				/* --cgroup or --cgroup-column: loaded */
	struct cgset cgs;
	struct procset all;		/* every process, to find a sample's */
};

/* The cgroup of the sample's process (cgset.h). */
static const char *sample_cgroup(const struct exp *x, const struct sample_scan_row *st)
{
	int64_t pid = (int64_t)st->r->v[SB_PID];

	return x->cgs.names[cgset_lookup(&x->cgs, pid,
					 procset_at(&x->all, pid, (int64_t)st->r->v[SB_TIME_NS]))];
}

/* 0: the sample is not of --cgroup's processes. */
static int cgroup_pass(const struct exp *x, const struct sample_scan_row *st)
{
	return !x->o->cgroup || cgset_match(x->o->cgroup, sample_cgroup(x, st));
}

#define COL_TIME SB_TIME_NS
#define COL_TSC SB_TSC
#define COL_CPU SB_CPU
#define COL_PID SB_PID
#define COL_TID SB_TID
#define COL_COMM SB_COMM_ID
#define COL_BIN SB_BINARY_ID
#define COL_OFF SB_OFFSET
#define COL_FLAGS SB_FLAGS
#define COL_C0 SB_C0

static void time_range_text(const struct source_export_opts *o, char *buf, size_t len)
{
	if (o->has_from && o->has_to)
		snprintf(buf, len, " between %.9gs and %.9gs", o->from_ns / 1e9, o->to_ns / 1e9);
	else if (o->has_from)
		snprintf(buf, len, " from %.9gs on", o->from_ns / 1e9);
	else if (o->has_to)
		snprintf(buf, len, " up to %.9gs", o->to_ns / 1e9);
	else
		buf[0] = 0;
}

/* Open the session's samples and read the first: 1 when there is one, 0
 * when nothing passes the filters (e says so), -1 on error. */
static int samples_open(struct exp *x, struct error *e)
{
	const struct source_export_opts *o = x->o;
	const struct db_session *s = &x->s;
	struct sample_scan_filter f = {
		.session_id = s->id,
		.has_time = o->has_from || o->has_to,
		.time_lo = o->has_from ? s->start_ns + o->from_ns : INT64_MIN,
		.time_hi = o->has_to ? s->start_ns + o->to_ns : INT64_MAX,
		.has_pid = o->pid >= 0, .pid = o->pid,
		.has_comm = o->comm != NULL, .comm_id = x->comm_id,
		/* strobed counts the samples it stored after a later one
		 * (late_samples, schema 5): with none, the rowid order is the
		 * time order and nothing needs sorting */
		.by_time = !(db_session_complete(s) && s->late_samples == 0),
	};
	char range[128], who[200];
	int rc;

	sample_scan_range(s, &f.row_lo, &f.row_hi);
	if (o->where) {
		if (!o->where->ready || o->where->session != s->id)
			return error_set(e, "--where was not selected for session %lld",
					 (long long)s->id);
		where_scan(o->where, &f);
	}
	if (o->progress && o->progress->on) {
		progress_phase(o->progress, sample_scan_total(x->db, &f), "samples");
		db_set_progress(x->db, o->progress);
	}
	x->sc = sample_scan_open(x->db, &f, e);
	if (!x->sc)
		return -1;
	rc = sample_scan_next(x->sc, &x->row, e);
	if (rc != 0)
		return rc;

	if (o->where) {
		char said[640];

		where_said(o->where, said, sizeof(said));
		error_set(e, "nothing to export: no samples of session %lld pass %s",
			  (long long)s->id, said);
		return 0;
	}
	time_range_text(o, range, sizeof(range));
	who[0] = 0;
	if (o->pid >= 0 && o->comm)
		snprintf(who, sizeof(who), " of pid %lld named '%s'", (long long)o->pid, o->comm);
	else if (o->pid >= 0)
		snprintf(who, sizeof(who), " of pid %lld", (long long)o->pid);
	else if (o->comm)
		snprintf(who, sizeof(who), " of processes named '%s'", o->comm);
	if (range[0]) {
		int64_t dur = s->duration_ns > 0 ? s->duration_ns :
			      s->end_ns > s->start_ns ? s->end_ns - s->start_ns : -1;
		char lasted[64] = "";

		if (dur >= 0)
			snprintf(lasted, sizeof(lasted), " (it lasted %.3fs)", dur / 1e9);
		error_set(e, "nothing to export: no samples%s in session %lld%s%s: "
			  "widen --from/--to", who, (long long)s->id, range, lasted);
	} else if (who[0]) {
		error_set(e, "nothing to export: no samples%s in session %lld: check "
			  "--pid and --comm", who, (long long)s->id);
	} else {
		error_set(e, "nothing to export: session %lld has no samples", (long long)s->id);
	}
	return 0;
}

/* Column c (SB_*) of a sample row, and whether it is NULL. */
static uint64_t col_u64(const struct sample_scan_row *row, int c)
{
	return (uint64_t)row->r->v[c];
}

static int col_null(const struct sample_scan_row *row, int c)
{
	return (row->r->null >> c) & 1;
}

/* ---- CSV ---- */

/*
 * The CSV fields of each (binary, offset), escaped once: "binary,symbol"
 * and "build_id".  At most LOCMEMO_MAX locations are kept (a few hundred
 * bytes each); past that, rows are formatted one by one.
 */
#define LOCMEMO_MAX (1u << 20)

struct locfmt {
	int64_t bin;
	uint64_t off;
	uint32_t pid;			/* 0 unless named per process */
	char *text;			/* "binary,symbol" then NUL, then build_id */
	uint32_t mid, tail;		/* lengths of the two */
};

struct locmemo {
	struct locfmt *slots;		/* text NULL: empty */
	size_t cap, n;
};

static uint64_t loc_hash(int64_t bin, uint64_t off, uint32_t pid)
{
	return hash_mix64((uint64_t)bin * 0x9e3779b97f4a7c15ULL ^ hash_mix64(off) ^ pid);
}

static struct locfmt *locmemo_slot(struct locmemo *m, int64_t bin, uint64_t off,
				   uint32_t pid)
{
	size_t i = loc_hash(bin, off, pid) & (m->cap - 1);

	while (m->slots[i].text && (m->slots[i].bin != bin || m->slots[i].off != off ||
				    m->slots[i].pid != pid))
		i = (i + 1) & (m->cap - 1);
	return &m->slots[i];
}

/* The fields of (bin, off) of process pid (kept only for JIT code, named
 * per process: resolve.h), named through the resolver the first time. */
static const struct locfmt *locmemo_get(struct locmemo *m, struct resolver *r, int64_t bin,
					uint64_t off, uint32_t pid, struct locfmt *tmp)
{
	struct locfmt *f;
	struct resolved rv;
	const char *b, *sym, *bid;
	size_t lb, ls, li;

	if (!resolver_by_pid(r, bin))
		pid = 0;
	if (m->cap) {
		f = locmemo_slot(m, bin, off, pid);
		if (f->text)
			return f;
	}
	if (m->n < LOCMEMO_MAX && 2 * (m->n + 1) > m->cap) {
		struct locmemo big = { .cap = m->cap ? 2 * m->cap : 4096, .n = m->n };

		big.slots = xcalloc(big.cap, sizeof(*big.slots));
		for (size_t i = 0; i < m->cap; i++)
			if (m->slots[i].text)
				*locmemo_slot(&big, m->slots[i].bin, m->slots[i].off,
					      m->slots[i].pid) = m->slots[i];
		free(m->slots);
		*m = big;
	}
	resolver_lookup_pid(r, bin, off, pid, 0, &rv);
	b = rv.binary ? rv.binary : "";
	sym = rv.symbol ? rv.symbol : "";
	bid = rv.build_id ? rv.build_id : "";
	lb = strlen(b);
	ls = strlen(sym);
	li = strlen(bid);
	if (m->n < LOCMEMO_MAX) {
		f = locmemo_slot(m, bin, off, pid);
	} else {
		f = tmp;
		free(tmp->text);
	}
	f->bin = bin;
	f->off = off;
	f->pid = pid;
	f->text = xmalloc(CSV_ESCAPE_MAX(lb) + 1 + CSV_ESCAPE_MAX(ls) + 1 + CSV_ESCAPE_MAX(li) + 1);
	f->mid = (uint32_t)csv_escape(f->text, b, CSV_TEXT);
	f->text[f->mid++] = ',';
	f->mid += (uint32_t)csv_escape(f->text + f->mid, sym, CSV_TEXT);
	f->text[f->mid] = 0;
	f->tail = (uint32_t)csv_escape(f->text + f->mid + 1, bid, CSV_TEXT);
	if (f != tmp)
		m->n++;
	return f;
}

static void locmemo_free(struct locmemo *m)
{
	for (size_t i = 0; i < m->cap; i++)
		free(m->slots[i].text);
	free(m->slots);
	memset(m, 0, sizeof(*m));
}

static int export_csv(struct exp *x, struct error *e)
{
	struct ob *o = &x->ob;
	const struct sample_scan_row *st = x->row;
	struct locmemo memo = { 0 };
	struct locfmt tmp = { 0 };
	struct procset ps = { 0 };
	int rc = 1, i;

	if (x->o->process_start && procset_load(x->db, &x->s, PROCSET_ALL, &ps, e) < 0)
		return -1;
	{
		const char *names[STROBE_MAX_COUNTERS];

		for (i = 0; i < x->nev; i++)
			names[i] = x->s.events[i].name;
		exportcsv_header(o, names, x->nev);
	}
	if (x->o->process_start)
		ob_str(o, ",process_start_ns");
	if (x->o->cgroup_column)
		ob_str(o, ",cgroup");
	ob_chr(o, '\n');
	for (; rc == 1 && !o->err; rc = sample_scan_next(x->sc, &st, e)) {
		if (!cgroup_pass(x, st))
			continue;
		uint64_t off = col_u64(st, COL_OFF);
		const struct locfmt *loc = locmemo_get(&memo, x->res,
						       (int64_t)col_u64(st, COL_BIN), off,
						       (uint32_t)col_u64(st, COL_PID), &tmp);
		const char *comm = comm_csv(&x->comms, (int64_t)col_u64(st, COL_COMM));
		struct exportcsv_row r = {
			.time_ns = col_u64(st, COL_TIME), .tsc = col_u64(st, COL_TSC),
			.tsc_null = col_null(st, COL_TSC), .cpu = col_u64(st, COL_CPU),
			.pid = col_u64(st, COL_PID), .tid = col_u64(st, COL_TID),
			.offset = off, .offset_null = col_null(st, COL_OFF),
			.comm = comm, .lcomm = strlen(comm), .loc = loc->text, .lloc = loc->mid,
			.build_id = loc->text + loc->mid + 1, .lbuild_id = loc->tail,
			.flags = (uint32_t)col_u64(st, COL_FLAGS), .nev = x->nev,
			.c = st->r->v + COL_C0, .c_null = st->r->null >> COL_C0,
		};
		exportcsv_row(o, &r);
		if (x->o->process_start)	/* the process of its pid started last by then */
			exportcsv_process_start(o, procset_at(&ps, (int64_t)col_u64(st, COL_PID),
							      (int64_t)col_u64(st, COL_TIME)));
		if (x->o->cgroup_column) {
			ob_chr(o, ',');
			ob_csv(o, sample_cgroup(x, st), CSV_TEXT);
		}
		ob_chr(o, '\n');
		x->rows++;
	}
	locmemo_free(&memo);
	free(tmp.text);
	procset_free(&ps);
	return rc < 0 ? -1 : 0;
}

/* ---- Chrome trace (chrometrace.h) ---- */

/* The samples: counter tracks, and with --samples one event each. */
static int chrome_samples(struct exp *x, const struct chrometrace_session *cs,
			  struct error *e)
{
	const struct sample_scan_row *st = x->row;
	int rc = 1;

	for (; rc == 1 && !x->ob.err; rc = sample_scan_next(x->sc, &st, e)) {
		uint32_t pid = (uint32_t)col_u64(st, COL_PID);
		int64_t comm = (int64_t)col_u64(st, COL_COMM);
		struct chrometrace_sample smp = {
			.time_ns = (int64_t)col_u64(st, COL_TIME), .cpu = col_u64(st, COL_CPU),
			.pid = pid, .tid = (uint32_t)col_u64(st, COL_TID),
			.comm = comm ? comm_name(&x->comms, comm) : NULL,
			.c = (const uint64_t *)(st->r->v + COL_C0),
		};
		struct resolved rv;

		if (!cgroup_pass(x, st))
			continue;
		if (x->o->samples) {
			resolver_lookup_pid(x->res, (int64_t)col_u64(st, COL_BIN),
					    col_u64(st, COL_OFF), pid, 0, &rv);
			smp.symbol = rv.symbol;
			smp.binary = rv.binary;
		}
		chrometrace_sample(&x->ct, cs, &smp);
		x->rows++;
	}
	if (rc < 0)
		return -1;
	chrometrace_samples_end(&x->ct);
	return 0;
}

/* The session's markers or lost records in the export's time range. */
static void export_events(struct exp *x, struct event_filter *f)
{
	event_filter_all(f, x->s.id);
	if (x->o->has_from)
		f->time_lo = x->s.start_ns + x->o->from_ns;
	if (x->o->has_to)
		f->time_hi = x->s.start_ns + x->o->to_ns;
}

static int chrome_markers(struct exp *x, const struct chrometrace_session *cs,
			  struct error *e)
{
	struct event_filter f;
	struct marker_scan *sc;
	struct db_marker m;
	int rc = 0;

	export_events(x, &f);
	sc = marker_scan_open(x->db, &f, e);
	if (!sc)
		return -1;
	while (!x->ob.err && (rc = marker_scan_next(sc, &m, e)) == 1) {
		struct chrometrace_marker cm = {
			.time_ns = (int64_t)m.time_ns,
			.has_cpu = m.cpu >= 0, .has_pid = m.pid >= 0, .has_tid = m.tid >= 0,
			.cpu = m.cpu, .pid = m.pid, .tid = m.tid,
			.kind = m.kind, .name = m.name, .args = m.args,
		};

		chrometrace_marker(&x->ct, cs, &cm);
	}
	marker_scan_close(sc);
	return x->ob.err || rc >= 0 ? 0 : -1;
}

static int chrome_lost(struct exp *x, const struct chrometrace_session *cs, struct error *e)
{
	struct event_filter f;
	struct lost_scan *sc;
	struct db_lost l;
	int rc = 0;

	export_events(x, &f);
	sc = lost_scan_open(x->db, &f, e);
	if (!sc)
		return -1;
	while (!x->ob.err && (rc = lost_scan_next(sc, &l, e)) == 1)
		chrometrace_lost(&x->ct, cs, l.time_ns, l.cpu, (int64_t)l.count, l.kind);
	lost_scan_close(sc);
	return x->ob.err || rc >= 0 ? 0 : -1;
}

/* A process's name: its row in processes (its latest name in the session). */
struct chrome_procs {
	struct exp *x;
	sqlite3_stmt *st;
};

static int chrome_proc_name(void *ctx, const struct chrometrace_session *s, uint32_t pid,
			    const char **name, struct error *e)
{
	struct chrome_procs *p = ctx;
	int rc;

	(void)s;
	*name = NULL;
	sqlite3_reset(p->st);
	sqlite3_bind_int64(p->st, 1, p->x->s.id);
	sqlite3_bind_int64(p->st, 2, pid);
	rc = sqlite3_step(p->st);
	if (rc == SQLITE_ROW && sqlite3_column_int64(p->st, 0))
		*name = comm_name(&p->x->comms, sqlite3_column_int64(p->st, 0));
	else if (rc != SQLITE_ROW && rc != SQLITE_DONE)
		return db_sql_error(p->x->db, e, "reading processes");
	return 0;
}

static int chrome_names(struct exp *x, const struct chrometrace_session *cs, struct error *e)
{
	struct chrome_procs p = { .x = x };
	int rc;

	if (sqlite3_prepare_v2(db_sqlite(x->db), "SELECT comm_id FROM processes WHERE "
			       "session_id=?1 AND pid=?2 AND comm_id IS NOT NULL "
			       "ORDER BY start_ns DESC LIMIT 1", -1, &p.st, NULL))
		return db_sql_error(x->db, e, "reading processes");
	rc = chrometrace_names(&x->ct, cs, 1, chrome_proc_name, &p, e);
	sqlite3_finalize(p.st);
	return rc;
}

static int export_chrome(struct exp *x, struct error *e)
{
	const struct source_export_opts *o = x->o;
	const char *names[STROBE_MAX_COUNTERS];
	struct chrometrace_session cs = {
		.start_ns = x->s.start_ns, .nev = x->nev, .events = names,
	};
	const struct db_session *sp = &x->s;
	char filters[256];
	struct chrometrace_info in = { .filters = filters, .n = 1, .s = &sp };

	for (int i = 0; i < x->nev; i++)
		names[i] = x->s.events[i].name;
	chrometrace_begin(&x->ct, &x->ob, o->bucket_ns, o->samples);
	if (chrome_samples(x, &cs, e) < 0 || chrome_markers(x, &cs, e) < 0 ||
	    chrome_lost(x, &cs, e) < 0 || chrome_names(x, &cs, e) < 0)
		return -1;
	chrometrace_filters(filters, sizeof(filters), o->pid, o->comm, o->has_from, o->from_ns,
			    o->has_to, o->to_ns);
	chrometrace_end(&x->ct, &in);
	return 0;
}

/* ---- the export ---- */

/* The session's cgroups, for --cgroup and --cgroup-column; the notes on
 * what they are worth. */
static int cgroups_load(struct exp *x, struct error *e)
{
	const struct source_export_opts *o = x->o;
	char msg[256];

	if (cgset_load(x->db, x->s.id, &x->cgs, e) < 0 ||
	    procset_load(x->db, &x->s, PROCSET_ALL, &x->all, e) < 0)
		return -1;
	x->cg = 1;
	if (!o->note)
		return 0;
	if (!x->cgs.source[0] || !strcmp(x->cgs.source, "none")) {
		snprintf(msg, sizeof(msg), "no cgroups were recorded in session %lld: every "
			 "process is %s", (long long)x->s.id, CGSET_UNKNOWN);
		o->note(o->ctx, msg);
	}
	if (x->cgs.moved) {
		snprintf(msg, sizeof(msg), "%lld processes changed cgroup during the session: "
			 "all their samples count in their latest cgroup", (long long)x->cgs.moved);
		o->note(o->ctx, msg);
	}
	return 0;
}

int sessionexport_run(struct db *db, int64_t session, const struct source_export_opts *o,
		      struct source_export_stats *st, struct error *e)
{
	struct exp x = { .o = o, .db = db };
	int rc, ret = -1;

	if (db_session_get(db, session, &x.s, e) < 0)
		goto out;
	x.nev = MIN(x.s.nr_events, STROBE_MAX_COUNTERS);
	if (comms_load(db, &x.comms, e) < 0)
		goto out;
	if (o->comm && !(x.comm_id = comm_find(&x.comms, o->comm))) {
		error_set(e, "nothing to export: no process named '%s' was ever seen in %s",
			  o->comm, db_path(db));
		goto out;
	}
	if (!(x.res = resolver_new(db, &x.s, e)))
		goto out;
	resolver_set_demangle(x.res, !o->no_demangle);
	if ((o->cgroup || o->cgroup_column) && cgroups_load(&x, e) < 0)
		goto out;
	rc = samples_open(&x, e);
	if (rc <= 0)
		goto out;

	/* something to export: only now the output (a failure before leaves
	 * no file) */
	if (!(x.ob.f = o->open(o->ctx, e)))
		goto out;
	x.ob.cap = 1 << 16;
	x.ob.buf = xmalloc(x.ob.cap);
	rc = o->fmt == SOURCE_EXPORT_CSV ? export_csv(&x, e) : export_chrome(&x, e);
	progress_done(o->progress);
	db_set_progress(db, NULL);
	ob_flush(&x.ob);
	if (!x.ob.err && fflush(x.ob.f) == EOF)
		x.ob.err = errno;
	if (!x.ob.err && ferror(x.ob.f))
		x.ob.err = EIO;
	if (rc < 0)
		goto out;
	if (x.ob.err) {
		error_set(e, "writing %s: %s", o->out ? o->out : "the export",
			  strerror(x.ob.err));
		goto out;
	}
	st->rows = x.rows;
	if (resolver_debuginfod_summary(x.res))
		st->note = xstrdup(resolver_debuginfod_summary(x.res));
	ret = 0;
out:
	db_set_progress(db, NULL);
	free(x.ob.buf);
	chrometrace_free(&x.ct);
	sample_scan_close(x.sc);
	resolver_free(x.res);
	comms_free(&x.comms);
	cgset_free(&x.cgs);
	procset_free(&x.all);
	return ret;
}
