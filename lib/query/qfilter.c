/*
 * qfilter.c - the sample filters of a query (see qfilter.h).
 */
#include "binname.h"
#include "config.h"
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include "qfilter.h"
#include "where.h"

struct qinit {
	struct qfilter *f;
	struct db *db;
	qfilter_note_fn note;
	void *ctx;
};

static void qnote(struct qinit *q, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void qnote(struct qinit *q, const char *fmt, ...)
{
	char buf[512];
	va_list ap;

	if (!q->note)
		return;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	q->note(q->ctx, buf);
}

static int id_cmp(const void *pa, const void *pb)
{
	int64_t a = *(const int64_t *)pa, b = *(const int64_t *)pb;

	return (a > b) - (a < b);
}

int qfilter_binaries(struct db *db, const char *want, int64_t **ids, size_t *n,
		     struct error *e)
{
	size_t cap = 0;
	sqlite3_stmt *st;
	int rc;

	*ids = NULL;
	*n = 0;
	if (sqlite3_prepare_v2(db_sqlite(db), "SELECT id,key,path FROM binaries", -1, &st, NULL))
		return db_sql_error(db, e, "reading binaries");
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		const char *key = (const char *)sqlite3_column_text(st, 1);
		const char *path = (const char *)sqlite3_column_text(st, 2);

		key = key ? key : "";
		path = path ? path : "";
		if (strcmp(path, want) && strcmp(util_path_base(path), want) && strcmp(key, want) &&
		    (!binname_is_kernel(key) || strcmp(want, BINNAME_KERNEL)))
			continue;
		ARRAY_GROW(*ids, cap, *n + 1);
		(*ids)[(*n)++] = sqlite3_column_int64(st, 0);
	}
	sqlite3_finalize(st);
	if (rc != SQLITE_DONE) {
		free(*ids);
		*ids = NULL;
		*n = 0;
		return db_sql_error(db, e, "reading binaries");
	}
	if (*n)
		qsort(*ids, *n, sizeof(**ids), id_cmp);
	return 0;
}

/* The binaries --binary matches. */
static int binaries_load(struct qinit *q, struct error *e)
{
	struct qfilter *f = q->f;

	return qfilter_binaries(q->db, f->o->binary, &f->bins, &f->nbins, e);
}

int64_t qfilter_comm_id(struct db *db, const char *name, struct error *e)
{
	sqlite3_stmt *st;
	int64_t id = 0;
	int rc;

	if (sqlite3_prepare_v2(db_sqlite(db), "SELECT id FROM comms WHERE name=?1",
			       -1, &st, NULL))
		return db_sql_error(db, e, "reading comms");
	sqlite3_bind_text(st, 1, name, -1, SQLITE_STATIC);
	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW)
		id = sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	if (rc != SQLITE_ROW && rc != SQLITE_DONE)
		return db_sql_error(db, e, "reading comms");
	return id;
}

/*
 * --pid P: the processes that had pid P.  Several (the kernel reused it):
 * each gets rows of its own (split), or with P@T only the one that had it
 * at T (sel); a note lists them.
 */
static int pid_processes(struct qinit *q, struct error *e)
{
	struct qfilter *f = q->f;
	const struct report_opts *o = f->o;
	const struct db_session *s = f->s;
	char when[200] = "";
	size_t n = 0, nr;

	if (procset_load(q->db, s, o->pid, &f->procs, e) < 0)
		return -1;
	nr = f->procs.n;
	if (o->has_pid_at) {
		if (!nr)
			return error_set(e, "--pid %lld@%.9g: no process with pid %lld is "
					 "recorded in session %lld: give --pid %lld", (long long)o->pid,
					 o->pid_at_ns / 1e9, (long long)o->pid, (long long)s->id,
					 (long long)o->pid);
		f->sel = procset_at(&f->procs, o->pid,
				    s->start_ns + o->pid_at_ns + o->pid_at_slack_ns);
	}
	if (nr < 2)
		return 0;
	for (size_t i = 0; i < nr && n < sizeof(when); i++) {
		char l[64];

		if (i == 4) {
			snprintf(when + n, sizeof(when) - n, ", ...");
			break;
		}
		procset_label(&f->procs, o->pid, f->procs.v[i].start_ns, l, sizeof(l));
		n += snprintf(when + n, sizeof(when) - n, "%s%s", i ? ", " : "", l);
	}
	if (o->has_pid_at) {
		char l[64];

		procset_label(&f->procs, o->pid, f->sel, l, sizeof(l));
		qnote(q, "pid %lld was %zu processes in this session (%s): this report is "
		      "of %s only", (long long)o->pid, nr, when, l);
	} else {
		f->split = 1;
		qnote(q, "pid %lld was %zu processes in this session (%s, as PID@START "
		      "seconds): rows are per process (column process); --pid PID@START "
		      "selects one", (long long)o->pid, nr, when);
	}
	return 0;
}

/* What the cgroups of this session are worth (cgset.h, schema 13). */
static void cgroup_notes(struct qinit *q)
{
	const struct cgset *cs = &q->f->cgs;
	long long id = (long long)q->f->s->id;

	if (!cs->source[0])
		qnote(q, "no cgroups were recorded in session %lld (recorded before cgroups "
		      "were): every process is %s", id, CGSET_UNKNOWN);
	else if (!strcmp(cs->source, "none"))
		qnote(q, "no cgroups were recorded in session %lld: no cgroup v2 "
		      "hierarchy was mounted", id);
	else if (!strcmp(cs->source, "proc"))
		qnote(q, "cgroups read from /proc/PID/cgroup at each process's first sample "
		      "(the driver backend, or a kernel without PERF_SAMPLE_CGROUP, Linux "
		      "5.7): a process that moved later counts in its first cgroup");
	if (cs->moved)
		qnote(q, "%lld processes changed cgroup during the session: all their samples "
		      "count in their latest cgroup", (long long)cs->moved);
}

int qfilter_init(struct qfilter *f, struct db *db, const struct report_opts *o,
		 const struct db_session *s, int raw, unsigned flags, qfilter_note_fn note,
		 void *note_ctx, struct error *e)
{
	struct qinit q = { .f = f, .db = db, .note = note, .ctx = note_ctx };

	memset(f, 0, sizeof(*f));
	f->o = o;
	f->s = s;
	f->raw = raw;
	if (o->pid >= 0 && pid_processes(&q, e) < 0)
		return -1;
	if (o->comm) {
		f->comm_id = qfilter_comm_id(q.db, o->comm, e);
		if (f->comm_id < 0)
			return -1;
		if (!f->comm_id) {
			qnote(&q, "no process named '%s' was ever seen in this database", o->comm);
			f->none = 1;
			return 0;
		}
	}
	if (o->binary) {
		if (binaries_load(&q, e) < 0)
			return -1;
		if (!f->nbins) {
			qnote(&q, "no binary in the database has path or name '%s'", o->binary);
			f->none = 1;
			return 0;
		}
	}
	if (o->cgroup || (flags & QFILTER_CGROUPS)) {
		if (cgset_load(db, s->id, &f->cgs, e) < 0)
			return -1;
		f->cg = 1;
		cgroup_notes(&q);
	}
	if (raw && (f->cg || (flags & QFILTER_PROCS)) &&
	    procset_load(db, s, PROCSET_ALL, &f->all, e) < 0)
		return -1;
	if (o->where && where_select(o->where, db, s, o, e) < 0)
		return -1;
	return 0;
}

void qfilter_free(struct qfilter *f)
{
	free(f->bins);
	procset_free(&f->procs);
	procset_free(&f->all);
	if (f->cg)
		cgset_free(&f->cgs);
	memset(f, 0, sizeof(*f));
}

void qfilter_sql(const struct qfilter *f, struct sbuf *sql, unsigned what)
{
	const struct report_opts *o = f->o;

	if ((what & QFILTER_SQL_PID) && o->pid >= 0)
		sbuf_addf(sql, " AND pid=%lld", (long long)o->pid);
	if ((what & QFILTER_SQL_COMM) && o->comm)
		sbuf_addf(sql, " AND comm_id=%lld", (long long)f->comm_id);
	if ((what & QFILTER_SQL_MODE) && o->mode == REPORT_KERNEL)
		sbuf_addf(sql, " AND (flags & %u) != 0", STROBE_SAMPLE_KERNEL);
	else if ((what & QFILTER_SQL_MODE) && o->mode == REPORT_USER)
		sbuf_addf(sql, " AND (flags & %u) != 0", STROBE_SAMPLE_USER);
	if ((what & QFILTER_SQL_BINARY) && o->binary) {
		for (size_t i = 0; i < f->nbins; i++)
			sbuf_addf(sql, "%s%lld", i ? "," : " AND binary_id IN (",
				  (long long)f->bins[i]);
		sbuf_addf(sql, "%s", f->nbins ? ")" : " AND 0");
	}
}

int qfilter_scan(const struct qfilter *f, uint32_t cols, struct sample_scan_filter *sf)
{
	const struct report_opts *o = f->o;
	const struct db_session *s = f->s;

	memset(sf, 0, sizeof(*sf));
	sf->session_id = s->id;
	sample_scan_range(s, &sf->row_lo, &sf->row_hi);
	if (sf->row_lo > sf->row_hi || (o->binary && !f->nbins))
		return 0;
	sf->has_time = o->has_from || o->has_to;
	sf->time_lo = o->has_from ? s->start_ns + o->from_ns : INT64_MIN;
	sf->time_hi = o->has_to ? s->start_ns + o->to_ns : INT64_MAX;
	sf->has_pid = o->pid >= 0;
	sf->pid = o->pid;
	sf->has_comm = o->comm != NULL;
	sf->comm_id = f->comm_id;
	if (o->binary) {
		sf->binaries = f->bins;
		sf->nbinaries = f->nbins;
	}
	sf->cols = cols | (o->mode == REPORT_KERNEL || o->mode == REPORT_USER ?
			   1u << SB_FLAGS : 0);
	if (o->where)
		where_scan(o->where, sf);
	return 1;
}

int qfilter_mode(const struct qfilter *f, const struct sampleblk_row *r)
{
	uint32_t bit = f->o->mode == REPORT_KERNEL ? STROBE_SAMPLE_KERNEL :
		       f->o->mode == REPORT_USER ? STROBE_SAMPLE_USER : 0;

	if (!bit)
		return 1;
	return !(r->null & (1u << SB_FLAGS)) && ((uint64_t)r->v[SB_FLAGS] & bit);
}

int64_t qfilter_start(const struct qfilter *f, int64_t pid, int64_t x)
{
	return f->raw ? procset_at(&f->all, pid, x) : x;
}

int qfilter_row(const struct qfilter *f, int64_t pid, int64_t x, int64_t *proc, size_t *cg)
{
	const struct report_opts *o = f->o;

	*proc = 0;
	*cg = 0;
	if (f->cg) {
		/* the row's process's cgroup: by its start, or by time */
		*cg = cgset_lookup(&f->cgs, pid, f->raw ? procset_at(&f->all, pid, x) : x);
		if (o->cgroup && !cgset_match(o->cgroup, f->cgs.names[*cg]))
			return 0;
	}
	if (o->pid >= 0 && f->procs.n > 1) {
		/* the row's process: the histogram's key, or by time */
		int64_t p = x;

		if (f->raw)
			p = procset_at(&f->procs, o->pid, p);
		else if (p && f->procs.n && !procset_has(&f->procs, o->pid, p))
			p = 0;	/* not a process of the session's */
		if (o->has_pid_at && p != f->sel)
			return 0;
		*proc = p;
	}
	return 1;
}

int qfilter_binary(const struct qfilter *f, int64_t binary_id)
{
	if (!f->o->binary)
		return 1;
	return f->nbins && bsearch(&binary_id, f->bins, f->nbins, sizeof(*f->bins), id_cmp);
}
