/*
 * cmd_export.c - "strobe export": a session's raw samples as CSV, or the
 * session as a Chrome trace (Trace Event Format, JSON) for the Perfetto UI
 * and chrome://tracing.
 *
 * CSV: one row per sample in time order, header
 *   time_ns,tsc,cpu,pid,tid,comm,binary,symbol,<event>...,offset,mode,build_id
 * with one column per counting event, named as given with -e, holding the
 * counter increase attributed to the sample (samples.c<i>).  time_ns is
 * CLOCK_MONOTONIC as stored; offset is the file offset (kernel: the
 * address) in hex; mode is user, kernel, hypervisor or guest.  With
 * --process-start a last column process_start_ns: the start of the
 * sample's process (procset.h: its pid's started last by then), empty
 * when unknown, so that the processes of a reused pid are told apart.
 * With --cgroup-column a last column cgroup: the cgroup (v2 path) of the
 * sample's process (cgset.h; after process_start_ns when both are asked).
 * --cgroup PATH keeps the samples of the processes of that cgroup (or of
 * the subtree, PATH ending in '/'), in both formats.
 *
 * Chrome trace: {"traceEvents": [...], "displayTimeUnit": "ms",
 * "otherData": {...}}, ts in microseconds since the session start:
 *  - per counting event and CPU, a counter track "<event> cpu<N>" ("ph":
 *    "C", on the pseudo-process COUNTERS_PID "CPU counters") whose value
 *    is the event's increase in each bucket (default 1 ms) of that CPU's
 *    samples; it drops to 0 over buckets with no samples;
 *  - markers as instant events: 'strobe mark' global ("s": "g"), USDT
 *    probe hits on their thread ("s": "t") with the probe's arguments;
 *  - lost and throttle records as global instant events;
 *  - with --samples, each sample as an instant event on its thread named
 *    by its symbol (large: about 200 bytes a sample);
 *  - process_name / thread_name metadata for every pid and tid shown.
 * --pid/--comm select samples (and so the counters); markers and lost
 * records are session-wide and only --from/--to select them.
 *
 * Samples are read from the session's rowid range in time order: in rowid
 * order when strobed stored none of them after a later one
 * (sessions.late_samples 0), else sorted by time.  Each (binary, offset)
 * is named once through the resolver (lib/symbols/resolve.h), and for CSV its
 * escaped binary, symbol and build-id fields are kept (struct locmemo), as
 * are each comm's, so that a row costs no escaping.
 */
#include "config.h"
#ifndef _GNU_SOURCE
#define _GNU_SOURCE 1
#endif
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include "cmd.h"
#include "db.h"
#include "exportcsv.h"
#include "cgset.h"
#include "procset.h"
#include "report.h"
#include "resolve.h"
#include "samplescan.h"
#include "flame.h"
#include "gecko.h"
#include "pprof.h"
#include "progress.h"
#include "stacks.h"
#include "chclient.h"
#include "fleetexport.h"
#include "push.h"

static const char usage_text[] =
	"usage: strobe export [--db PATH] [--session ID]\n"
	"                     --format csv|chrome-trace|folded|pprof|gecko [--event EV]\n"
	"                     [-o FILE] [--pid PID] [--comm NAME] [--from T] [--to T]\n"
	"                     [--samples] [--bucket T] [--no-demangle] [--process-start]\n"
	"                     [--cgroup PATH] [--cgroup-column]\n"
	"       strobe export --source URL [--host NAME] [--session ID] --format csv\n"
	"                     [--host-column] [-o FILE] [--pid PID] [--comm NAME]\n"
	"                     [--from T] [--to T]\n"
	"\n"
	"Export a recorded session (default: the latest).  csv: one row per sample,\n"
	"in time order: time_ns,tsc,cpu,pid,tid,comm,binary,symbol, one column per\n"
	"counting event (the increase attributed to the sample), offset,mode,build_id;\n"
	"--process-start adds process_start_ns, the start of the sample's process\n"
	"(tells apart the processes of a pid the kernel reused; empty: unknown);\n"
	"--cgroup-column then adds cgroup, the cgroup v2 path of the sample's process\n"
	"(its latest sample's; [unknown] if not recorded).  --cgroup PATH keeps the\n"
	"samples of the processes of that cgroup, or with a trailing '/' of it and\n"
	"every cgroup below it.\n"
	"chrome-trace: JSON for the Perfetto UI or chrome://tracing: a counter track\n"
	"per event per CPU (increase per --bucket, default 1ms), markers, lost\n"
	"samples; --samples adds every sample as an instant event on its thread.\n"
	"The call stacks of a session recorded with -g:\n"
	"folded: one line per distinct stack, \"comm;outer;...;leaf COUNT\", root first,\n"
	"as FlameGraph's stackcollapse-perf.pl writes them (for flamegraph.pl,\n"
	"speedscope, ...); COUNT is samples, or with --event EV that event's increases;\n"
	"kernel functions end in _[k], code no symbol covers is [unknown] (BINARY).\n"
	"pprof: a gzip-compressed profile.proto for 'go tool pprof': sample types\n"
	"samples, the sampling event's periods when they varied, one per counting\n"
	"event; mappings per binary with its build id; labels pid and comm.\n"
	"gecko: the Firefox Profiler's JSON (profiler.firefox.com, Load a profile from\n"
	"file): a thread per tid, each sample at its own time.\n"
	"T is a time since the session start: 1.5, 1.5s, 250ms, 20us.  Output goes\n"
	"to stdout unless -o FILE (--output FILE).\n"
	"--source URL exports pushed sessions from the ClickHouse fleet at URL\n"
	"(http://HOST:8123/?database=strobe; credentials as for 'strobe push'), csv\n"
	"only: --host NAME keeps that host's sessions, --session ID session ID of\n"
	"each host (default: every session selected); one host's session is the\n"
	"local csv export of it.  Samples of several hosts get a first column host\n"
	"(or with --host-column), of several sessions then a column session.\n"
	"With --source only --host, --session, --host-column, -o, --pid, --comm,\n"
	"--from and --to apply (doc/FLEET.md, \"Fleet export\").\n";

enum {
	OPT_DB = 256, OPT_SESSION, OPT_FORMAT, OPT_PID, OPT_COMM, OPT_FROM, OPT_TO,
	OPT_SAMPLES, OPT_BUCKET, OPT_NO_DEMANGLE, OPT_PROCESS_START, OPT_CGROUP,
	OPT_CGROUP_COLUMN, OPT_EVENT, OPT_SOURCE, OPT_HOST, OPT_HOST_COLUMN,
};

static const struct option long_opts[] = {
	{ "db",		required_argument, NULL, OPT_DB },
	{ "session",	required_argument, NULL, OPT_SESSION },
	{ "format",	required_argument, NULL, OPT_FORMAT },
	{ "output",	required_argument, NULL, 'o' },
	{ "pid",	required_argument, NULL, OPT_PID },
	{ "comm",	required_argument, NULL, OPT_COMM },
	{ "from",	required_argument, NULL, OPT_FROM },
	{ "to",		required_argument, NULL, OPT_TO },
	{ "samples",	no_argument,	   NULL, OPT_SAMPLES },
	{ "no-demangle", no_argument,	   NULL, OPT_NO_DEMANGLE },
	{ "process-start", no_argument,	   NULL, OPT_PROCESS_START },
	{ "cgroup",	required_argument, NULL, OPT_CGROUP },
	{ "cgroup-column", no_argument,	   NULL, OPT_CGROUP_COLUMN },
	{ "bucket",	required_argument, NULL, OPT_BUCKET },
	{ "event",	required_argument, NULL, OPT_EVENT },
	{ "source",	required_argument, NULL, OPT_SOURCE },
	{ "host",	required_argument, NULL, OPT_HOST },
	{ "host-column", no_argument,	   NULL, OPT_HOST_COLUMN },
	{ "help",	no_argument,	   NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

/* The pseudo-process that holds the counter tracks and the session-wide
 * instant events: PID_MAX_LIMIT (1 << 22), which no Linux pid reaches. */
#define COUNTERS_PID 4194304

enum fmt { FMT_NONE, FMT_CSV, FMT_CHROME, FMT_FOLDED, FMT_PPROF, FMT_GECKO };

struct opts {
	const char *dbpath, *out, *comm;
	const char *event;		/* folded: --event */
	int64_t session, pid;		/* pid -1: any */
	enum fmt fmt;
	int has_from, has_to, samples, no_demangle;
	int process_start;		/* csv: a last column process_start_ns */
	int cgroup_column;		/* csv: a last column cgroup */
	const char *cgroup;		/* NULL, or --cgroup's path (cgset.h) */
	int64_t from_ns, to_ns, bucket_ns;
	const char *source, *host;	/* --source URL, --host NAME */
	int host_column;
};

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

/* ---- threads seen (chrome trace metadata) ---- */

struct thread {
	uint32_t pid, tid;
	int64_t comm_id;		/* latest seen, 0: none */
};

struct threads {
	struct thread *v;
	size_t n, cap;
	size_t *slot;
	size_t mask;
};

static uint64_t mix64(uint64_t x)
{
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdULL;
	x ^= x >> 33;
	x *= 0xc4ceb9fe1a85ec53ULL;
	x ^= x >> 33;
	return x;
}

static void threads_rehash(struct threads *t)
{
	size_t nslots = t->slot ? (t->mask + 1) * 2 : 256, i;

	free(t->slot);
	t->slot = xcalloc(nslots, sizeof(*t->slot));
	t->mask = nslots - 1;
	for (i = 0; i < t->n; i++) {
		size_t h = mix64((uint64_t)t->v[i].pid << 32 | t->v[i].tid) & t->mask;

		while (t->slot[h])
			h = (h + 1) & t->mask;
		t->slot[h] = i + 1;
	}
}

static struct thread *thread_get(struct threads *t, uint32_t pid, uint32_t tid)
{
	size_t h;
	struct thread *th;

	if (!t->slot || (t->n + 1) * 2 > t->mask + 1)
		threads_rehash(t);
	h = mix64((uint64_t)pid << 32 | tid) & t->mask;
	while (t->slot[h]) {
		th = &t->v[t->slot[h] - 1];
		if (th->pid == pid && th->tid == tid)
			return th;
		h = (h + 1) & t->mask;
	}
	ARRAY_GROW(t->v, t->cap, t->n + 1);
	th = &t->v[t->n];
	memset(th, 0, sizeof(*th));
	th->pid = pid;
	th->tid = tid;
	t->slot[h] = ++t->n;
	return th;
}

static int thread_cmp(const void *pa, const void *pb)
{
	const struct thread *a = pa, *b = pb;

	if (a->pid != b->pid)
		return a->pid < b->pid ? -1 : 1;
	return (a->tid > b->tid) - (a->tid < b->tid);
}

/* ---- the export ---- */

struct exp {
	const struct opts *o;
	struct db *db;
	struct db_session s;
	int nev;
	struct comms comms;
	int64_t comm_id;		/* --comm, 0: none */
	struct resolver *res;
	struct sample_scan *sc;		/* the samples, */
	const struct sample_scan_row *row;	/* positioned on the first row */
	struct ob ob;
	int first;			/* no trace event written yet */
	struct threads threads;
	uint64_t rows;
	int cg;				/* --cgroup or --cgroup-column: loaded */
	struct cgset cgs;
	struct procset all;		/* every process, to find a sample's */
	struct progress prog;		/* of the reading, on stderr */
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

static void time_range_text(const struct opts *o, char *buf, size_t len)
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
	const struct opts *o = x->o;
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
	if (x->prog.on) {
		progress_phase(&x->prog, sample_scan_total(x->db, &f), "samples");
		db_set_progress(x->db, &x->prog);
	}
	x->sc = sample_scan_open(x->db, &f, e);
	if (!x->sc)
		return -1;
	rc = sample_scan_next(x->sc, &x->row, e);
	if (rc != 0)
		return rc;

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
	return mix64((uint64_t)bin * 0x9e3779b97f4a7c15ULL ^ mix64(off) ^ pid);
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
		char *p;

		exportcsv_row(o, &r);
		ob_room(o, 24 + 2);
		p = o->buf + o->n;
		if (x->o->process_start) {
			/* the process of its pid started last by then */
			int64_t st0 = procset_at(&ps, (int64_t)col_u64(st, COL_PID),
						 (int64_t)col_u64(st, COL_TIME));

			*p++ = ',';
			if (st0 > 0)
				p = put_u64(p, (uint64_t)st0);
		}
		if (x->o->cgroup_column) {
			o->n = (size_t)(p - o->buf);
			ob_chr(o, ',');
			ob_csv(o, sample_cgroup(x, st), CSV_TEXT);
			ob_room(o, 1);
			p = o->buf + o->n;
		}
		*p++ = '\n';
		o->n = (size_t)(p - o->buf);
		x->rows++;
	}
	locmemo_free(&memo);
	free(tmp.text);
	procset_free(&ps);
	return rc < 0 ? -1 : 0;
}

/* ---- Chrome trace ---- */

/* Start a trace event: the separator and {"ph":"<ph>","ts":<us>,"pid":<pid>,"tid":<tid> */
static void ev_begin(struct exp *x, const char *ph, int64_t time_ns, int64_t pid, int64_t tid)
{
	struct ob *o = &x->ob;

	ob_str(o, x->first ? "\n" : ",\n");
	x->first = 0;
	ob_str(o, "{\"ph\":\"");
	ob_str(o, ph);
	ob_str(o, "\",\"ts\":");
	ob_us(o, time_ns - x->s.start_ns);
	ob_str(o, ",\"pid\":");
	ob_i64(o, pid);
	ob_str(o, ",\"tid\":");
	ob_i64(o, tid);
}

struct track {
	int64_t bucket;			/* being summed; INT64_MIN: none yet */
	int64_t last_end;		/* end (ns since start) of the last bucket shown */
	uint64_t *sum;			/* per event, of this bucket */
	uint64_t *shown;		/* per event, the value the track shows */
	int started;
};

static void counter_point(struct exp *x, int cpu, int ev, int64_t rel_ns, uint64_t v)
{
	struct ob *o = &x->ob;

	ev_begin(x, "C", x->s.start_ns + rel_ns, COUNTERS_PID, 0);
	ob_str(o, ",\"name\":");
	{
		char name[160];

		snprintf(name, sizeof(name), "%s cpu%d", x->s.events[ev].name, cpu);
		ob_json(o, name);
	}
	ob_str(o, ",\"args\":{\"value\":");
	ob_u64(o, v);
	ob_str(o, "}}");
}

/* Show the bucket t has summed: a drop to 0 after a gap, then the value
 * where it changed. */
static void track_flush(struct exp *x, struct track *t, int cpu)
{
	int64_t B = x->o->bucket_ns, start = t->bucket * B;

	if (t->bucket == INT64_MIN)
		return;
	for (int i = 0; i < x->nev; i++) {
		if (t->started && t->last_end < start && t->shown[i]) {
			counter_point(x, cpu, i, t->last_end, 0);
			t->shown[i] = 0;
		}
		if (!t->started || t->sum[i] != t->shown[i]) {
			counter_point(x, cpu, i, start, t->sum[i]);
			t->shown[i] = t->sum[i];
		}
		t->sum[i] = 0;
	}
	t->started = 1;
	t->last_end = start + B;
}

static int64_t floor_div(int64_t a, int64_t b)
{
	int64_t q = a / b;

	return (a % b && (a < 0) != (b < 0)) ? q - 1 : q;
}

/* The samples: counter tracks, and with --samples one event each. */
static int chrome_samples(struct exp *x, struct error *e)
{
	struct ob *o = &x->ob;
	const struct sample_scan_row *st = x->row;
	struct track *tracks = NULL;
	size_t ntracks = 0;
	int rc = 1, i;

	for (; rc == 1 && !o->err; rc = sample_scan_next(x->sc, &st, e)) {
		int64_t t_ns = (int64_t)col_u64(st, COL_TIME);
		uint64_t cpu = col_u64(st, COL_CPU);
		uint32_t pid = (uint32_t)col_u64(st, COL_PID);
		uint32_t tid = (uint32_t)col_u64(st, COL_TID);
		int64_t comm = (int64_t)col_u64(st, COL_COMM);
		struct thread *th;

		if (!cgroup_pass(x, st))
			continue;
		th = thread_get(&x->threads, pid, tid);
		if (comm)
			th->comm_id = comm;
		if (x->o->samples) {
			struct resolved rv;

			resolver_lookup_pid(x->res, (int64_t)col_u64(st, COL_BIN),
					    col_u64(st, COL_OFF), pid, 0, &rv);
			ev_begin(x, "i", t_ns, pid, tid);
			ob_str(o, ",\"s\":\"t\",\"cat\":\"sample\",\"name\":");
			ob_json(o, rv.symbol);
			ob_str(o, ",\"args\":{\"binary\":");
			ob_json(o, rv.binary);
			ob_str(o, ",\"cpu\":");
			ob_u64(o, cpu);
			for (i = 0; i < x->nev; i++) {
				ob_chr(o, ',');
				ob_json(o, x->s.events[i].name);
				ob_chr(o, ':');
				ob_u64(o, col_u64(st, COL_C0 + i));
			}
			ob_str(o, "}}");
		}
		if (x->nev && cpu < 65536) {
			int64_t b = floor_div(t_ns - x->s.start_ns, x->o->bucket_ns);
			struct track *t;

			if (cpu >= ntracks) {
				size_t n = cpu + 1;

				tracks = xrealloc(tracks, n * sizeof(*tracks));
				for (; ntracks < n; ntracks++) {
					memset(&tracks[ntracks], 0, sizeof(*tracks));
					tracks[ntracks].bucket = INT64_MIN;
					tracks[ntracks].sum = xcalloc(x->nev, sizeof(uint64_t));
					tracks[ntracks].shown = xcalloc(x->nev, sizeof(uint64_t));
				}
			}
			t = &tracks[cpu];
			if (t->bucket != b) {
				track_flush(x, t, (int)cpu);
				t->bucket = b;
			}
			for (i = 0; i < x->nev; i++)
				t->sum[i] += col_u64(st, COL_C0 + i);
		}
		x->rows++;
	}
	if (rc < 0)
		goto fail;
	/* the last buckets, then back to 0 after them */
	for (size_t c = 0; c < ntracks; c++) {
		struct track *t = &tracks[c];

		track_flush(x, t, (int)c);
		for (i = 0; t->started && i < x->nev; i++)
			if (t->shown[i])
				counter_point(x, (int)c, i, t->last_end, 0);
	}
	for (size_t c = 0; c < ntracks; c++) {
		free(tracks[c].sum);
		free(tracks[c].shown);
	}
	free(tracks);
	return 0;
fail:
	for (size_t c = 0; c < ntracks; c++) {
		free(tracks[c].sum);
		free(tracks[c].shown);
	}
	free(tracks);
	return -1;
}

/* Bind the time range (?2, ?3) of a markers or lost query. */
static void bind_range(struct exp *x, sqlite3_stmt *st)
{
	sqlite3_bind_int64(st, 1, x->s.id);
	sqlite3_bind_int64(st, 2, x->o->has_from ? x->s.start_ns + x->o->from_ns : INT64_MIN);
	sqlite3_bind_int64(st, 3, x->o->has_to ? x->s.start_ns + x->o->to_ns : INT64_MAX);
}

static int chrome_markers(struct exp *x, struct error *e)
{
	struct ob *o = &x->ob;
	sqlite3_stmt *st;
	int rc;

	if (sqlite3_prepare_v2(db_sqlite(x->db), "SELECT time_ns,cpu,pid,tid,kind,name,args "
			       "FROM markers WHERE session_id=?1 AND time_ns BETWEEN ?2 AND ?3 "
			       "ORDER BY time_ns,rowid", -1, &st, NULL))
		return db_sql_error(x->db, e, "reading markers");
	bind_range(x, st);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW && !o->err) {
		const char *kind = (const char *)sqlite3_column_text(st, 4);
		const char *name = (const char *)sqlite3_column_text(st, 5);
		const char *args = (const char *)sqlite3_column_text(st, 6);
		int has_pid = sqlite3_column_type(st, 2) != SQLITE_NULL;
		int has_tid = sqlite3_column_type(st, 3) != SQLITE_NULL;
		int has_cpu = sqlite3_column_type(st, 1) != SQLITE_NULL;
		int64_t pid = has_pid ? sqlite3_column_int64(st, 2) : COUNTERS_PID;
		int64_t tid = has_tid ? sqlite3_column_int64(st, 3) : has_pid ? pid : 0;
		int global = !kind || strcmp(kind, "usdt") || !has_pid;

		kind = kind ? kind : "";
		ev_begin(x, "i", sqlite3_column_int64(st, 0), pid, tid);
		ob_str(o, global ? ",\"s\":\"g\"" : ",\"s\":\"t\"");
		ob_str(o, ",\"cat\":\"marker\",\"name\":");
		ob_json(o, name);
		ob_str(o, ",\"args\":{\"kind\":");
		ob_json(o, kind);
		if (args) {
			ob_str(o, ",\"args\":");
			ob_json(o, args);
		}
		if (has_cpu) {
			ob_str(o, ",\"cpu\":");
			ob_i64(o, sqlite3_column_int64(st, 1));
		}
		if (has_pid) {
			ob_str(o, ",\"pid\":");
			ob_i64(o, pid);
		}
		ob_str(o, "}}");
		if (has_pid && pid >= 0 && pid <= UINT32_MAX && tid >= 0 && tid <= UINT32_MAX)
			thread_get(&x->threads, (uint32_t)pid, (uint32_t)tid);
	}
	sqlite3_finalize(st);
	if (rc != SQLITE_ROW && rc != SQLITE_DONE)
		return db_sql_error(x->db, e, "reading markers");
	return 0;
}

static int chrome_lost(struct exp *x, struct error *e)
{
	struct ob *o = &x->ob;
	sqlite3_stmt *st;
	int rc;

	if (sqlite3_prepare_v2(db_sqlite(x->db), "SELECT time_ns,cpu,count,kind FROM lost "
			       "WHERE session_id=?1 AND time_ns BETWEEN ?2 AND ?3 "
			       "ORDER BY time_ns,rowid", -1, &st, NULL))
		return db_sql_error(x->db, e, "reading lost records");
	bind_range(x, st);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW && !o->err) {
		const char *kind = (const char *)sqlite3_column_text(st, 3);
		int64_t cpu = sqlite3_column_int64(st, 1), count = sqlite3_column_int64(st, 2);
		char name[160];

		kind = kind ? kind : "";
		if (!strcmp(kind, "throttle"))
			snprintf(name, sizeof(name), "throttled on cpu%lld", (long long)cpu);
		else
			snprintf(name, sizeof(name), "lost %lld samples (%s) on cpu%lld",
				 (long long)count, report_lost_kind(kind),
				 (long long)cpu);
		ev_begin(x, "i", sqlite3_column_int64(st, 0), COUNTERS_PID, 0);
		ob_str(o, ",\"s\":\"g\",\"cat\":\"lost\",\"name\":");
		ob_json(o, name);
		ob_str(o, ",\"args\":{\"cpu\":");
		ob_i64(o, cpu);
		ob_str(o, ",\"count\":");
		ob_i64(o, count);
		ob_str(o, ",\"kind\":");
		ob_json(o, kind);
		ob_str(o, "}}");
	}
	sqlite3_finalize(st);
	if (rc != SQLITE_ROW && rc != SQLITE_DONE)
		return db_sql_error(x->db, e, "reading lost records");
	return 0;
}

static void meta_event(struct exp *x, const char *what, int64_t pid, int64_t tid,
		       const char *name)
{
	struct ob *o = &x->ob;

	ev_begin(x, "M", x->s.start_ns, pid, tid);
	ob_str(o, ",\"name\":\"");
	ob_str(o, what);
	ob_str(o, "\",\"args\":{\"name\":");
	ob_json(o, name);
	ob_str(o, "}}");
}

/*
 * process_name and thread_name of every thread shown.  A process is
 * named after its row in processes (its latest name in the session),
 * else after its main thread, else after any of its threads.
 */
static int chrome_names(struct exp *x, struct error *e)
{
	struct threads *ts = &x->threads;
	sqlite3_stmt *st;
	size_t i, j;
	int rc;

	if (ts->n)
		qsort(ts->v, ts->n, sizeof(*ts->v), thread_cmp);
	if (sqlite3_prepare_v2(db_sqlite(x->db), "SELECT comm_id FROM processes WHERE "
			       "session_id=?1 AND pid=?2 AND comm_id IS NOT NULL "
			       "ORDER BY start_ns DESC LIMIT 1", -1, &st, NULL))
		return db_sql_error(x->db, e, "reading processes");
	meta_event(x, "process_name", COUNTERS_PID, 0, "CPU counters");
	for (i = 0; i < ts->n; i = j) {
		uint32_t pid = ts->v[i].pid;
		int64_t pcomm = 0;

		for (j = i; j < ts->n && ts->v[j].pid == pid; j++)
			if (!pcomm || ts->v[j].tid == pid)
				pcomm = ts->v[j].comm_id ? ts->v[j].comm_id : pcomm;
		sqlite3_reset(st);
		sqlite3_bind_int64(st, 1, x->s.id);
		sqlite3_bind_int64(st, 2, pid);
		rc = sqlite3_step(st);
		if (rc == SQLITE_ROW && sqlite3_column_int64(st, 0))
			pcomm = sqlite3_column_int64(st, 0);
		else if (rc != SQLITE_ROW && rc != SQLITE_DONE) {
			sqlite3_finalize(st);
			return db_sql_error(x->db, e, "reading processes");
		}
		if (pcomm)
			meta_event(x, "process_name", pid, pid, comm_name(&x->comms, pcomm));
		for (size_t k = i; k < j; k++)
			if (ts->v[k].comm_id)
				meta_event(x, "thread_name", pid, ts->v[k].tid,
					   comm_name(&x->comms, ts->v[k].comm_id));
	}
	sqlite3_finalize(st);
	return 0;
}

static void other_data(struct exp *x)
{
	const struct db_session *s = &x->s;
	const struct opts *o = x->o;
	struct ob *ob = &x->ob;
	int64_t wall = s->start_ns + s->wall_offset_ns;
	char buf[256];
	struct tm tm;
	time_t t = (time_t)(wall / 1000000000);

	ob_str(ob, "\"otherData\":{\"generator\":\"strobe " PACKAGE_VERSION "\",\"session\":");
	ob_i64(ob, s->id);
	ob_str(ob, ",\"session_name\":");
	ob_json(ob, s->name);
	ob_str(ob, ",\"hostname\":");
	ob_json(ob, s->hostname);
	ob_str(ob, ",\"kernel_release\":");
	ob_json(ob, s->kernel_release);
	ob_str(ob, ",\"backend\":");
	ob_json(ob, s->backend);
	ob_str(ob, ",\"nr_cpus\":");
	ob_i64(ob, s->nr_cpus);
	ob_str(ob, ",\"sample_event\":");
	ob_json(ob, s->sample_event);
	if (s->sample_freq) {
		ob_str(ob, ",\"sample_freq\":");
		ob_i64(ob, s->sample_freq);
	}
	if (s->sample_period) {
		ob_str(ob, ",\"sample_period\":");
		ob_i64(ob, s->sample_period);
	}
	ob_str(ob, ",\"events\":[");
	for (int i = 0; i < s->nr_events; i++) {
		if (i)
			ob_chr(ob, ',');
		ob_json(ob, s->events[i].name);
	}
	ob_str(ob, "],\"ts_origin\":\"the session start: CLOCK_MONOTONIC start_monotonic_ns\"");
	ob_str(ob, ",\"start_monotonic_ns\":");
	ob_i64(ob, s->start_ns);
	ob_str(ob, ",\"wall_offset_ns\":");
	ob_i64(ob, s->wall_offset_ns);
	buf[0] = 0;
	if (wall > 0 && gmtime_r(&t, &tm)) {
		size_t n = strftime(buf, sizeof(buf), "%Y-%m-%dT%H:%M:%S", &tm);

		snprintf(buf + n, sizeof(buf) - n, ".%09lldZ", (long long)(wall % 1000000000));
	}
	ob_str(ob, ",\"start_utc\":");
	ob_json(ob, buf);
	if (s->duration_ns > 0) {
		ob_str(ob, ",\"duration_ns\":");
		ob_i64(ob, s->duration_ns);
	}
	ob_str(ob, ",\"counter_bucket_us\":");
	ob_us(ob, o->bucket_ns);
	ob_str(ob, ",\"counters_pid\":");
	ob_i64(ob, COUNTERS_PID);
	ob_str(ob, ",\"samples\":");
	ob_u64(ob, x->rows);
	ob_str(ob, ",\"filters\":");
	{
		size_t n = 0;

		buf[0] = 0;
		if (o->pid >= 0)
			n += snprintf(buf + n, sizeof(buf) - n, " pid=%lld", (long long)o->pid);
		if (o->comm && n < sizeof(buf))
			n += snprintf(buf + n, sizeof(buf) - n, " comm=%s", o->comm);
		if (o->has_from && n < sizeof(buf))
			n += snprintf(buf + n, sizeof(buf) - n, " from=%.9gs", o->from_ns / 1e9);
		if (o->has_to && n < sizeof(buf))
			snprintf(buf + n, sizeof(buf) - n, " to=%.9gs", o->to_ns / 1e9);
		ob_json(ob, buf[0] ? buf + 1 : "");
	}
	ob_chr(ob, '}');
}

static int export_chrome(struct exp *x, struct error *e)
{
	struct ob *o = &x->ob;

	x->first = 1;
	ob_str(o, "{\"traceEvents\":[");
	if (chrome_samples(x, e) < 0 || chrome_markers(x, e) < 0 ||
	    chrome_lost(x, e) < 0 || chrome_names(x, e) < 0)
		return -1;
	ob_str(o, "\n],\n\"displayTimeUnit\":\"ms\",\n");
	other_data(x);
	ob_str(o, "}\n");
	return 0;
}

/* ---- the command ---- */

static int parse_time(const char *opt, const char *arg, int64_t *ns)
{
	if (parse_duration_ns(arg, ns) < 0 || *ns < 0)
		return cmd_usage_error("export", "bad %s '%s': give a time since the session "
				       "start like 1.5, 1.5s or 250ms", opt, arg);
	return 0;
}

static int parse_args(int argc, char **argv, struct opts *o)
{
	char optbuf[256];
	uint64_t v;
	int c;

	opterr = 0;
	optind = 0;
	while ((c = getopt_long(argc, argv, ":ho:", long_opts, NULL)) != -1) {
		switch (c) {
		case OPT_DB:
			o->dbpath = optarg;
			break;
		case OPT_SESSION:
			if (parse_u64(optarg, &v) < 0 || v == 0 || v > INT64_MAX)
				return cmd_usage_error("export", "bad --session '%s': give a session "
						       "id ('strobe sessions' lists them)", optarg);
			o->session = (int64_t)v;
			break;
		case OPT_FORMAT:
			if (!strcmp(optarg, "csv"))
				o->fmt = FMT_CSV;
			else if (!strcmp(optarg, "chrome-trace") || !strcmp(optarg, "chrome"))
				o->fmt = FMT_CHROME;
			else if (!strcmp(optarg, "folded"))
				o->fmt = FMT_FOLDED;
			else if (!strcmp(optarg, "pprof"))
				o->fmt = FMT_PPROF;
			else if (!strcmp(optarg, "gecko"))
				o->fmt = FMT_GECKO;
			else
				return cmd_usage_error("export", "bad --format '%s': use csv, "
						       "chrome-trace, folded, pprof or gecko", optarg);
			break;
		case 'o':
			if (!*optarg)
				return cmd_usage_error("export", "bad -o '': give a file name");
			o->out = optarg;
			break;
		case OPT_PID:
			if (parse_u64(optarg, &v) < 0 || v > UINT32_MAX)
				return cmd_usage_error("export", "bad --pid '%s': give a process id",
						       optarg);
			o->pid = (int64_t)v;
			break;
		case OPT_COMM:
			o->comm = optarg;
			break;
		case OPT_FROM:
			if (parse_time("--from", optarg, &o->from_ns))
				return 2;
			o->has_from = 1;
			break;
		case OPT_TO:
			if (parse_time("--to", optarg, &o->to_ns))
				return 2;
			o->has_to = 1;
			break;
		case OPT_EVENT:
			if (!*optarg)
				return cmd_usage_error("export", "bad --event '': give a counting "
						       "event of the session, as given with -e");
			o->event = optarg;
			break;
		case OPT_SAMPLES:
			o->samples = 1;
			break;
		case OPT_NO_DEMANGLE:
			o->no_demangle = 1;
			break;
		case OPT_PROCESS_START:
			o->process_start = 1;
			break;
		case OPT_CGROUP_COLUMN:
			o->cgroup_column = 1;
			break;
		case OPT_CGROUP:
			if (cgset_check_filter(optarg) < 0)
				return cmd_usage_error("export", "bad --cgroup '%s': give a cgroup path "
						       "from the cgroup root, like /system.slice/"
						       "x.service, or a subtree like /system.slice/",
						       optarg);
			o->cgroup = optarg;
			break;
		case OPT_SOURCE:
			o->source = optarg;
			break;
		case OPT_HOST:
			if (!*optarg)
				return cmd_usage_error("export", "bad --host '': give a host name "
						       "as pushed");
			o->host = optarg;
			break;
		case OPT_HOST_COLUMN:
			o->host_column = 1;
			break;
		case OPT_BUCKET:
			if (parse_duration_ns(optarg, &o->bucket_ns) < 0 || o->bucket_ns < 1000)
				return cmd_usage_error("export", "bad --bucket '%s': give a time of at "
						       "least 1us like 1ms or 100us", optarg);
			break;
		case 'h':
			fputs(usage_text, stdout);
			return -1;
		case ':':
			return cmd_usage_error("export", "option %s needs a value: see 'strobe "
					       "export --help'",
					       cmd_bad_option(argc, argv, optbuf, sizeof(optbuf)));
		default:
			return cmd_usage_error("export", "unknown option '%s': see 'strobe export "
					       "--help'",
					       cmd_bad_option(argc, argv, optbuf, sizeof(optbuf)));
		}
	}
	if (optind < argc)
		return cmd_usage_error("export", "unexpected argument '%s': see 'strobe export "
				       "--help'", argv[optind]);
	if (o->fmt == FMT_NONE)
		return cmd_usage_error("export", "give --format csv, chrome-trace, folded, pprof "
				       "or gecko");
	if (!o->source && (o->host || o->host_column))
		return cmd_usage_error("export", "%s is of fleet exports: give --source URL",
				       o->host ? "--host" : "--host-column");
	if (o->source) {
		const char *no = o->dbpath ? "--db (--source reads the fleet, --db a local "
			"database: give one of them)" : o->fmt != FMT_CSV ? "--format other "
			"than csv" : o->samples ? "--samples" : o->bucket_ns ? "--bucket" :
			o->no_demangle ? "--no-demangle (the fleet has the names as pushed)" :
			o->process_start ? "--process-start" : o->cgroup ? "--cgroup (no cgroups "
			"are pushed)" : o->cgroup_column ? "--cgroup-column (no cgroups are "
			"pushed)" : o->event ? "--event" : NULL;

		if (no)
			return cmd_usage_error("export", "%s is not supported with --source: "
					       "see doc/FLEET.md, \"Fleet export\"", no);
	}
	if (o->event && o->fmt != FMT_FOLDED)
		return cmd_usage_error("export", "--event applies to --format folded only");
	if (o->fmt >= FMT_FOLDED && (o->samples || o->bucket_ns))
		return cmd_usage_error("export", "%s applies to --format chrome-trace only",
				       o->samples ? "--samples" : "--bucket");
	if (o->fmt != FMT_CSV && o->process_start)
		return cmd_usage_error("export", "--process-start applies to --format csv only");
	if (o->fmt != FMT_CSV && o->cgroup_column)
		return cmd_usage_error("export", "--cgroup-column applies to --format csv only");
	if (o->fmt == FMT_CSV && (o->samples || o->bucket_ns))
		return cmd_usage_error("export", "%s applies to --format chrome-trace only",
				       o->samples ? "--samples" : "--bucket");
	if (!o->bucket_ns)
		o->bucket_ns = 1000000;
	return 0;
}

/* folded, pprof, gecko: the call stacks (stacks.h) of the session. */
/* A progress meter on stderr, when it is a terminal (progress.h), unless
 * the export itself goes to that terminal. */
static void progress_start(struct progress *p, const struct opts *o)
{
	progress_init(p, "strobe export", STDERR_FILENO, 0, "samples");
	if (!o->out && isatty(STDOUT_FILENO))
		p->on = 0;
}

static int export_stacks(const struct opts *o)
{
	struct report_opts ro = {
		.session = o->session, .by = REPORT_BY_SYMBOL, .pid = o->pid, .comm = o->comm,
		.cgroup = o->cgroup, .mode = REPORT_ALL, .has_from = o->has_from,
		.has_to = o->has_to, .from_ns = o->from_ns, .to_ns = o->to_ns,
		.no_demangle = o->no_demangle,
	};
	struct error err = { "" };
	struct stack_set *set = NULL;
	struct flame_tree *t = NULL;
	struct progress prog = { 0 };
	struct db *db;
	FILE *f = NULL;
	int ret = 1, created = 0, rc = -1;

	db = db_open(o->dbpath ? o->dbpath : cmd_default_db(), DB_READ, &err);
	if (!db)
		goto out;
	progress_start(&prog, o);
	ro.progress = &prog;
	if (!(set = stacks_load(db, &ro, &err)))
		goto out;
	if (!set->call_graph[0]) {
		error_set(&err, "session %lld has no call stacks: record with -g",
			  (long long)set->session.id);
		goto out;
	}
	if (o->fmt == FMT_FOLDED) {
		int what = FLAME_SAMPLES;

		if (o->event && (what = flame_event_index(set, o->event, &err)) < 0)
			goto out;
		if (!(t = flame_tree_build(set, what, &err)))
			goto out;
	}
	if (o->out) {
		struct stat sb;

		created = stat(o->out, &sb) < 0 || S_ISREG(sb.st_mode);
		if (!(f = fopen(o->out, "w"))) {
			error_set(&err, "cannot write %s: %s", o->out, strerror(errno));
			created = 0;
			goto out;
		}
	} else {
		f = stdout;
	}
	if (o->fmt == FMT_FOLDED)
		rc = flame_write_folded(t, f, &err);
	else if (o->fmt == FMT_PPROF)
		rc = pprof_write(set, f, &err);
	else
		rc = gecko_write(db, set, &ro, f, &err);
	progress_done(&prog);
	if (rc < 0)
		goto out;
	if (fflush(f) == EOF || ferror(f)) {
		error_set(&err, "writing %s: %s", o->out ? o->out : "the export",
			  strerror(errno ? errno : EIO));
		goto out;
	}
	if (f != stdout) {
		rc = fclose(f);
		f = NULL;
		if (rc == EOF) {
			error_set(&err, "writing %s: %s", o->out, strerror(errno));
			goto out;
		}
	}
	for (int i = 0; i < set->nr_notes && i < (int)ARRAY_SIZE(set->notes); i++)
		fprintf(stderr, "strobe export: note: %s\n", set->notes[i]);
	if (set->no_stack)
		fprintf(stderr, "strobe export: note: %llu samples that pass the filters have "
			"no stack and are not exported\n", (unsigned long long)set->no_stack);
	ret = 0;
out:
	progress_done(&prog);
	if (ret) {
		fprintf(stderr, "strobe export: %s\n", err.msg);
		if (f && f != stdout)
			fclose(f);
		if (created)
			unlink(o->out);
	}
	flame_tree_free(t);
	if (set)
		stacks_free(set);
	if (db)
		db_close(db);
	return ret;
}

/* --source: the samples of pushed sessions (fleetexport.h). */
static int export_fleet(const struct opts *o)
{
	struct fleetexport_opts fo = {
		.host = o->host, .session = o->session, .pid = o->pid, .comm = o->comm,
		.has_from = o->has_from, .has_to = o->has_to, .from_ns = o->from_ns,
		.to_ns = o->to_ns, .host_column = o->host_column,
	};
	struct fleetexport_stats st;
	struct chclient_url url;
	struct chclient_cred cred;
	struct chclient *c = NULL;
	struct error e = { "" };
	FILE *f = NULL;
	int ret = 1, created = 0;

	if (chclient_url_parse(o->source, &url, &e) < 0)
		return cmd_usage_error("export", "bad --source: %s", e.msg);
	if (chclient_credentials(&cred, &e) < 0)
		goto out;
	c = chclient_new(&url, &cred, &e);
	memset(cred.password, 0, sizeof(cred.password));
	if (!c || push_check_schema(c, &e) < 0)
		goto out;
	if (o->out) {
		struct stat sb;

		created = stat(o->out, &sb) < 0 || S_ISREG(sb.st_mode);
		if (!(f = fopen(o->out, "w"))) {
			error_set(&e, "cannot write %s: %s", o->out, strerror(errno));
			created = 0;
			goto out;
		}
	} else {
		f = stdout;
	}
	if (fleetexport_csv(c, &fo, f, &st, &e) < 0)
		goto out;
	if (fflush(f) == EOF || ferror(f)) {
		error_set(&e, "writing %s: %s", o->out ? o->out : "the export",
			  strerror(errno ? errno : EIO));
		goto out;
	}
	if (f != stdout) {
		int rc = fclose(f);

		f = NULL;
		if (rc == EOF) {
			error_set(&e, "writing %s: %s", o->out, strerror(errno));
			goto out;
		}
	}
	if (st.anon)
		fprintf(stderr, "strobe export: note: %llu samples in JIT code ([anon]) have "
			"the symbol their host gave without the process: perf maps and "
			"jitdumps are not pushed\n", (unsigned long long)st.anon);
	ret = 0;
out:
	if (ret) {
		fprintf(stderr, "strobe export: %s\n", e.msg);
		if (f && f != stdout)
			fclose(f);
		if (created)
			unlink(o->out);
	}
	chclient_free(c);
	return ret;
}

int cmd_export(int argc, char **argv)
{
	struct opts o = { .pid = -1 };
	struct exp x = { .o = &o };
	struct error err = { "" };
	int rc, ret = 1, created = 0;

	rc = parse_args(argc, argv, &o);
	if (rc)
		return rc < 0 ? 0 : rc;
	if (o.has_from && o.has_to && o.from_ns >= o.to_ns) {
		fprintf(stderr, "strobe export: empty time range: --from %.9gs is not before "
			"--to %.9gs\n", o.from_ns / 1e9, o.to_ns / 1e9);
		return 1;
	}
	if (o.source)
		return export_fleet(&o);
	if (o.fmt >= FMT_FOLDED)
		return export_stacks(&o);

	x.db = db_open(o.dbpath ? o.dbpath : cmd_default_db(), DB_READ, &err);
	if (!x.db)
		goto out;
	if (db_session_get(x.db, o.session, &x.s, &err) < 0)
		goto out;
	x.nev = MIN(x.s.nr_events, STROBE_MAX_COUNTERS);
	if (comms_load(x.db, &x.comms, &err) < 0)
		goto out;
	if (o.comm && !(x.comm_id = comm_find(&x.comms, o.comm))) {
		error_set(&err, "nothing to export: no process named '%s' was ever seen in %s",
			  o.comm, db_path(x.db));
		goto out;
	}
	if (!(x.res = resolver_new(x.db, &x.s, &err)))
		goto out;
	resolver_set_demangle(x.res, !o.no_demangle);
	if (o.cgroup || o.cgroup_column) {
		if (cgset_load(x.db, x.s.id, &x.cgs, &err) < 0 ||
		    procset_load(x.db, &x.s, PROCSET_ALL, &x.all, &err) < 0)
			goto out;
		x.cg = 1;
		if (!x.cgs.source[0] || !strcmp(x.cgs.source, "none"))
			fprintf(stderr, "strobe export: note: no cgroups were recorded in session "
				"%lld: every process is %s\n", (long long)x.s.id, CGSET_UNKNOWN);
		if (x.cgs.moved)
			fprintf(stderr, "strobe export: note: %lld processes changed cgroup during "
				"the session: all their samples count in their latest cgroup\n",
				(long long)x.cgs.moved);
	}
	progress_start(&x.prog, &o);
	rc = samples_open(&x, &err);
	if (rc <= 0)
		goto out;

	if (o.out) {
		struct stat sb;

		created = stat(o.out, &sb) < 0 || S_ISREG(sb.st_mode);
		x.ob.f = fopen(o.out, "w");
		if (!x.ob.f) {
			error_set(&err, "cannot write %s: %s", o.out, strerror(errno));
			created = 0;
			goto out;
		}
	} else {
		x.ob.f = stdout;
	}
	x.ob.cap = 1 << 16;
	x.ob.buf = xmalloc(x.ob.cap);

	rc = o.fmt == FMT_CSV ? export_csv(&x, &err) : export_chrome(&x, &err);
	progress_done(&x.prog);
	db_set_progress(x.db, NULL);
	ob_flush(&x.ob);
	if (!x.ob.err && fflush(x.ob.f) == EOF)
		x.ob.err = errno;
	if (!x.ob.err && ferror(x.ob.f))
		x.ob.err = EIO;
	if (x.ob.f != stdout && fclose(x.ob.f) == EOF && !x.ob.err)
		x.ob.err = errno;
	x.ob.f = NULL;
	if (rc < 0)
		goto out;
	if (x.ob.err) {
		error_set(&err, "writing %s: %s", o.out ? o.out : "the export",
			  strerror(x.ob.err));
		goto out;
	}
	ret = 0;
	if (resolver_debuginfod_summary(x.res))
		fprintf(stderr, "strobe export: note: %s\n", resolver_debuginfod_summary(x.res));
out:
	progress_done(&x.prog);
	if (ret) {
		fprintf(stderr, "strobe export: %s\n", err.msg);
		if (created && x.ob.buf)	/* no half-written file left behind */
			unlink(o.out);
	}
	if (x.ob.f && x.ob.f != stdout)
		fclose(x.ob.f);
	free(x.ob.buf);
	free(x.threads.v);
	free(x.threads.slot);
	sample_scan_close(x.sc);
	resolver_free(x.res);
	comms_free(&x.comms);
	cgset_free(&x.cgs);
	procset_free(&x.all);
	if (x.db)
		db_close(x.db);
	return ret;
}
