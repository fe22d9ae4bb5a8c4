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
 * Chrome trace: written by lib/query/chrometrace.c (the format is told
 * there) from the session's samples (with --samples each named through
 * the resolver), markers, lost records and process names read here; the
 * fleet export feeds the same writer.  Counters per --bucket (default 1 ms).
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
#include "eventscan.h"
#include "chrometrace.h"
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
	"       strobe export --source URL [--host NAME] [--session ID]\n"
	"                     --format csv|chrome-trace [--host-column] [-o FILE]\n"
	"                     [--pid PID] [--comm NAME] [--from T] [--to T]\n"
	"                     [--process-start] [--samples] [--bucket T]\n"
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
	"or chrome-trace: --host NAME keeps that host's sessions, --session ID session\n"
	"ID of each host (default: every session selected); one host's session is the\n"
	"local export of it.  csv: samples of several hosts get a first column host\n"
	"(or with --host-column), of several sessions then a column session.\n"
	"chrome-trace: several sessions are each a group of processes (\"host#session:\"\n"
	"names, pids offset by 8388608 a session).  With --source only --host,\n"
	"--session, --host-column, -o, --pid, --comm, --from, --to, --process-start,\n"
	"--samples and --bucket apply (doc/FLEET.md, \"Fleet export\").\n";

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
	struct chrometrace ct;		/* chrome-trace */
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
	const struct opts *o = x->o;
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
			"database: give one of them)" : o->fmt >= FMT_FOLDED ? "--format other "
			"than csv and chrome-trace" : o->no_demangle ? "--no-demangle (the fleet "
			"has the names as pushed)" : o->cgroup ? "--cgroup (no cgroups "
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
	if (o->fmt != FMT_CSV && o->host_column)
		return cmd_usage_error("export", "--host-column applies to --format csv only");
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
		fprintf(stderr, "strobe export: note: %s\n", TEXT_SAFE(set->notes[i]));
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
		.process_start = o->process_start, .samples = o->samples, .bucket_ns = o->bucket_ns,
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
	if ((o->fmt == FMT_CSV ? fleetexport_csv : fleetexport_chrome)(c, &fo, f, &st, &e) < 0)
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
	chrometrace_free(&x.ct);
	sample_scan_close(x.sc);
	resolver_free(x.res);
	comms_free(&x.comms);
	cgset_free(&x.cgs);
	procset_free(&x.all);
	if (x.db)
		db_close(x.db);
	return ret;
}
