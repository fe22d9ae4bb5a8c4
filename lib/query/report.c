/*
 * report.c - hot-spot reports (see report.h).
 *
 * Three steps:
 *  1. gather: the samples of the session that pass the filters, summed
 *     per (binary, offset, mode) in a hash table.  Complete sessions
 *     ('done', and 'interrupted' ones, whose histogram strobed rebuilt) are
 *     read from the histogram sample_agg; a time range, or a session still
 *     'running' or 'aborted' (whose histogram may be incomplete), scans the
 *     session's rowid range of samples instead.
 *  2. name: each location through the resolver (lib/symbols/resolve.h: the
 *     binary's cached copy, the session's kallsyms snapshot for the
 *     kernel).  Naming never guesses: a binary with no usable cached copy,
 *     or whose row records a problem, shows as "[binary unavailable]" with
 *     a note, and an offset no symbol covers is "[unknown]".  Memory with
 *     no file ([vdso] of another ABI, [anon], [heap], [stack], [unknown])
 *     is shown under its key with symbol "[unknown]"; it is not counted as
 *     unresolved.  [anon] locations are kept apart by pid when the session
 *     has perf map symbols, and named from them (resolve.h).
 *  3. group by binary, symbol or line, sort, and lay out the table.
 *
 * The build_id column is the resolver's: the hex build-id of "buildid:"
 * and "kernel:" keys, the whole key for "xxh3:" keys, and nothing (null)
 * for memory with no file.  In --by binary the symbol column is null;
 * source exists only in --by line.  With --inline (inline_chain) the
 * resolver also names each location's inline chain, which becomes part of
 * the group key and the last column, inline.
 */
#include "config.h"
#ifndef _GNU_SOURCE
#define _GNU_SOURCE 1	/* strcasestr */
#endif
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include "cgset.h"
#include "procset.h"
#include "qfilter.h"
#include "progress.h"
#include "report.h"
#include "samplescan.h"
#include "metrics.h"
#include "resolve.h"

#define NR_NOTES ((int)(sizeof(((struct report_summary *)0)->notes) / \
			sizeof(((struct report_summary *)0)->notes[0])))

/* ---- growable string ---- */

static uint64_t str_hash(uint64_t h, const char *s)
{
	h ^= 0xcbf29ce484222325ULL;
	for (; s && *s; s++)
		h = (h ^ (unsigned char)*s) * 0x100000001b3ULL;
	return hash_mix64(h ^ 0xff);		/* 0xff: ends the string */
}

/* ---- step 1: (binary, offset, mode) rows ---- */

struct loc {
	int64_t binary_id;
	uint64_t offset;
	uint32_t mode;
	uint32_t pid;			/* 0, or the process of JIT code ([anon]
					 * named from its perf map: resolve.h) */
	int64_t proc;			/* 0, or with --pid P of a reused P: the
					 * start of its process (procset.h) */
	size_t bin;			/* index in bins, set in step 2 */
	uint64_t samples;
	uint64_t period;		/* sum of the samples' periods */
	uint64_t c[STROBE_MAX_COUNTERS];
};

struct locmap {
	struct loc *v;
	size_t n, cap;
	size_t *slot;			/* index + 1 into v; 0: empty */
	size_t mask;
};

static uint64_t loc_hash(int64_t b, uint64_t off, uint32_t mode, uint32_t pid, int64_t proc)
{
	return hash_mix64(off ^ hash_mix64((uint64_t)b ^ ((uint64_t)mode << 56) ^
					   ((uint64_t)pid << 24)) ^ (uint64_t)proc);
}

static void locmap_rehash(struct locmap *m)
{
	size_t nslots = m->slot ? (m->mask + 1) * 2 : 1024, i;

	free(m->slot);
	m->slot = xcalloc(nslots, sizeof(*m->slot));
	m->mask = nslots - 1;
	for (i = 0; i < m->n; i++) {
		const struct loc *l = &m->v[i];
		size_t h = loc_hash(l->binary_id, l->offset, l->mode, l->pid, l->proc) & m->mask;

		while (m->slot[h])
			h = (h + 1) & m->mask;
		m->slot[h] = i + 1;
	}
}

/* The row for the key, added (zeroed) if new. Valid until the next call. */
static struct loc *locmap_get(struct locmap *m, int64_t b, uint64_t off, uint32_t mode,
			      uint32_t pid, int64_t proc)
{
	size_t h;
	struct loc *l;

	if (!m->slot || (m->n + 1) * 2 > m->mask + 1)
		locmap_rehash(m);
	h = loc_hash(b, off, mode, pid, proc) & m->mask;
	while (m->slot[h]) {
		l = &m->v[m->slot[h] - 1];
		if (l->binary_id == b && l->offset == off && l->mode == mode && l->pid == pid &&
		    l->proc == proc)
			return l;
		h = (h + 1) & m->mask;
	}
	ARRAY_GROW(m->v, m->cap, m->n + 1);
	l = &m->v[m->n];
	memset(l, 0, sizeof(*l));
	l->binary_id = b;
	l->offset = off;
	l->mode = mode;
	l->pid = pid;
	l->proc = proc;
	m->slot[h] = ++m->n;
	return l;
}

static void locmap_free(struct locmap *m)
{
	free(m->v);
	free(m->slot);
}

/* ---- step 2: binaries (their strings are the resolver's) ---- */

struct bin {
	int64_t id;
	const char *display;		/* binary column */
	const char *key;
	const char *build_id;		/* build_id column, NULL: none */
	const char *problem;		/* non-NULL: cannot be symbolised */
	const char *note;		/* non-NULL: a warning about it */
	int no_symbols;			/* copy has no function symbols */
	const char *debug;		/* its separate debug file, or NULL */
	const char *debug_note;		/* refused debug files, or NULL */
	uint64_t samples;		/* filtered samples in this binary */
};

/* ---- step 3: groups ---- */

struct group {
	size_t bin;
	int64_t proc;			/* as loc.proc */
	const char *binary;		/* bins[bin].display */
	char *symbol;			/* NULL in --by binary */
	char *source;			/* NULL unless --by line */
	char *inl;			/* NULL unless --inline: the inline chain */
	uint64_t hash;
	uint64_t samples;
	uint64_t weight;		/* samples, or their periods' sum (weighted) */
	uint64_t c[STROBE_MAX_COUNTERS];
};

struct groupmap {
	struct group *v;
	size_t n, cap;
	size_t *slot;
	size_t mask;
};

static void groupmap_rehash(struct groupmap *m)
{
	size_t nslots = m->slot ? (m->mask + 1) * 2 : 256, i;

	free(m->slot);
	m->slot = xcalloc(nslots, sizeof(*m->slot));
	m->mask = nslots - 1;
	for (i = 0; i < m->n; i++) {
		size_t h = m->v[i].hash & m->mask;

		while (m->slot[h])
			h = (h + 1) & m->mask;
		m->slot[h] = i + 1;
	}
}

static int opt_streq(const char *a, const char *b)
{
	if (!a || !b)
		return a == b;
	return !strcmp(a, b);
}

static struct group *groupmap_get(struct groupmap *m, size_t bin, int64_t proc,
				  const char *binary, const char *symbol, const char *source,
				  const char *inl)
{
	uint64_t hash = str_hash(str_hash(str_hash(hash_mix64(bin + 1) ^ hash_mix64((uint64_t)proc),
					  symbol), source), inl);
	size_t h;
	struct group *g;

	if (!m->slot || (m->n + 1) * 2 > m->mask + 1)
		groupmap_rehash(m);
	h = hash & m->mask;
	while (m->slot[h]) {
		g = &m->v[m->slot[h] - 1];
		if (g->hash == hash && g->bin == bin && g->proc == proc &&
		    opt_streq(g->symbol, symbol) && opt_streq(g->source, source) &&
		    opt_streq(g->inl, inl))
			return g;
		h = (h + 1) & m->mask;
	}
	ARRAY_GROW(m->v, m->cap, m->n + 1);
	g = &m->v[m->n];
	memset(g, 0, sizeof(*g));
	g->bin = bin;
	g->proc = proc;
	g->binary = binary;
	g->symbol = symbol ? xstrdup(symbol) : NULL;
	g->source = source ? xstrdup(source) : NULL;
	g->inl = inl ? xstrdup(inl) : NULL;
	g->hash = hash;
	m->slot[h] = ++m->n;
	return g;
}

static void groupmap_free(struct groupmap *m)
{
	for (size_t i = 0; i < m->n; i++) {
		free(m->v[i].symbol);
		free(m->v[i].source);
		free(m->v[i].inl);
	}
	free(m->v);
	free(m->slot);
}

/* ---- the state of one report_build() ---- */

struct report {
	struct db *db;
	const struct report_opts *o;
	struct report_summary *sum;
	int nev;
	struct resolver *res;
	struct locmap locs;
	struct bin *bins;
	size_t nbins, bins_cap;
	struct groupmap groups;
	int dropped_notes;
	int period_unknown;		/* a sample without its period was read */
	struct qfilter qf;		/* the filters (qfilter.h) */
};

static void note_add(struct report *r, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void note_add(struct report *r, const char *fmt, ...)
{
	struct report_summary *sum = r->sum;
	va_list ap;

	if (sum->nr_notes >= NR_NOTES) {
		r->dropped_notes++;
		return;
	}
	va_start(ap, fmt);
	vsnprintf(sum->notes[sum->nr_notes], sizeof(sum->notes[0]), fmt, ap);
	va_end(ap);
	text_sanitize(sum->notes[sum->nr_notes]);	/* paths, names: one line of text */
	sum->nr_notes++;
}

static int sql_fail(struct report *r, struct error *e, const char *what)
{
	return db_sql_error(r->db, e, what);
}

/* Perf maps and jitdumps of JIT code that were refused (jit_maps.problem,
 * schema 10): their processes' [anon] samples stay unnamed, and a note
 * says why (the first few; the text is strobed's own: path, uids, limits).
 * A jitdump's path ends in ".dump" (jitdump.h). */
static int jit_notes(struct report *r, struct error *e)
{
	sqlite3_stmt *st;
	int rc, n = 0;

	if (sqlite3_prepare_v2(db_sqlite(r->db), "SELECT pid,problem,path LIKE '%.dump' "
			       "FROM jit_maps WHERE "
			       "session_id=?1 AND problem IS NOT NULL AND (?2 < 0 OR pid=?2) "
			       "ORDER BY pid", -1, &st, NULL))
		return sql_fail(r, e, "reading jit_maps");
	sqlite3_bind_int64(st, 1, r->sum->session.id);
	sqlite3_bind_int64(st, 2, r->o->pid);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		if (n++ < 3)
			note_add(r, "pid %lld: JIT %s not used: %s",
				 (long long)sqlite3_column_int64(st, 0),
				 sqlite3_column_int(st, 2) ? "jitdump" : "perf map",
				 (const char *)sqlite3_column_text(st, 1));
	}
	sqlite3_finalize(st);
	if (rc != SQLITE_DONE)
		return sql_fail(r, e, "reading jit_maps");
	if (n > 3)
		note_add(r, "%d more JIT perf maps or jitdumps not used (jit_maps.problem)",
			 n - 3);

	/* jitdumps read with records dropped (perf maps' dropped lines are
	 * not noted, as before) */
	if (sqlite3_prepare_v2(db_sqlite(r->db), "SELECT pid,dropped,path FROM jit_maps WHERE "
			       "session_id=?1 AND problem IS NULL AND dropped > 0 AND "
			       "path LIKE '%.dump' AND (?2 < 0 OR pid=?2) ORDER BY pid", -1, &st,
			       NULL))
		return sql_fail(r, e, "reading jit_maps");
	sqlite3_bind_int64(st, 1, r->sum->session.id);
	sqlite3_bind_int64(st, 2, r->o->pid);
	n = 0;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		if (n++ < 3)
			note_add(r, "pid %lld: JIT jitdump %s: %lld records dropped (malformed, "
				 "truncated, an earlier process's or past the limits)",
				 (long long)sqlite3_column_int64(st, 0),
				 (const char *)sqlite3_column_text(st, 2),
				 (long long)sqlite3_column_int64(st, 1));
	}
	sqlite3_finalize(st);
	if (rc != SQLITE_DONE)
		return sql_fail(r, e, "reading jit_maps");
	if (n > 3)
		note_add(r, "%d more jitdumps with records dropped (jit_maps.dropped)", n - 3);
	return 0;
}

static void qf_note(void *ctx, const char *msg)
{
	note_add(ctx, "%s", msg);
}

static int gather(struct report *r, struct error *e)
{
	const struct report_opts *o = r->o;
	const struct db_session *s = &r->sum->session;
	int raw = o->has_from || o->has_to || !db_session_complete(s);
	struct qfilter *qf = &r->qf;
	struct sbuf sql = { 0 };
	sqlite3_stmt *st;
	int i, rc, base;

	if (raw) {
		/* No index on samples: the rowid range is what makes this cheap.
		 * A running or aborted session may not have its last_sample
		 * (or even first_sample) written yet. */
		sbuf_addf(&sql, "SELECT binary_id,offset,flags,1,period");
		for (i = 0; i < r->nev; i++)
			sbuf_addf(&sql, ",c%d", i);
		sbuf_addf(&sql, ",pid,time_ns FROM samples WHERE ");
		if (s->first_sample > 0 && s->last_sample >= s->first_sample &&
		    db_session_complete(s))
			sbuf_addf(&sql, "rowid BETWEEN ?2 AND ?3 AND ");
		else if (s->first_sample > 0)
			sbuf_addf(&sql, "rowid >= ?2 AND ");
		else if (db_session_complete(s))
			goto out;	/* a finished session with no samples */
		sbuf_addf(&sql, "session_id=?1");
		if (o->has_from)
			sbuf_addf(&sql, " AND time_ns >= ?4");
		if (o->has_to)
			sbuf_addf(&sql, " AND time_ns <= ?5");
	} else {
		sbuf_addf(&sql, "SELECT binary_id,offset,flags,samples,period");
		for (i = 0; i < r->nev; i++)
			sbuf_addf(&sql, ",c%d", i);
		sbuf_addf(&sql, ",pid,start_ns FROM sample_agg WHERE session_id=?1");
	}
	if (qfilter_init(qf, r->db, o, s, raw, o->by == REPORT_BY_CGROUP ? QFILTER_CGROUPS : 0,
			 qf_note, r, e) < 0)
		goto fail;
	if (qf->none)
		goto out;
	qfilter_sql(qf, &sql, QFILTER_SQL_ALL);

	if (sqlite3_prepare_v2(db_sqlite(r->db), sql.s, -1, &st, NULL)) {
		sql_fail(r, e, raw ? "reading samples" : "reading the session histogram");
		goto fail;
	}
	sqlite3_bind_int64(st, 1, s->id);
	sqlite3_bind_int64(st, 2, s->first_sample);
	sqlite3_bind_int64(st, 3, s->last_sample);
	sqlite3_bind_int64(st, 4, s->start_ns + o->from_ns);
	sqlite3_bind_int64(st, 5, s->start_ns + o->to_ns);
	base = 5;
	if (raw && o->progress) {
		progress_phase(o->progress, sample_scan_session_total(r->db, s, o->has_from,
				o->from_ns, o->has_to, o->to_ns), "samples");
		db_set_progress(r->db, o->progress);
	}
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		uint64_t n = (uint64_t)sqlite3_column_int64(st, 3);
		int64_t bin = sqlite3_column_int64(st, 0), proc;
		int64_t pid = sqlite3_column_int64(st, base + r->nev);
		size_t cg;
		struct loc *l;

		if (!qfilter_row(qf, pid, sqlite3_column_int64(st, base + r->nev + 1), &proc, &cg))
			continue;
		l = locmap_get(&r->locs, bin, (uint64_t)sqlite3_column_int64(st, 1),
			       (uint32_t)sqlite3_column_int64(st, 2) & STROBE_SAMPLE_MODE_MASK,
			       resolver_by_pid(r->res, bin) ? (uint32_t)pid : 0,
			       o->by == REPORT_BY_CGROUP ? (int64_t)cg + 1 : qf->split ? proc : 0);

		l->samples += n;
		r->sum->samples += n;
		if (sqlite3_column_type(st, 4) == SQLITE_NULL)
			r->period_unknown = 1;
		else
			l->period += (uint64_t)sqlite3_column_int64(st, 4);
		for (i = 0; i < r->nev; i++) {
			uint64_t v = (uint64_t)sqlite3_column_int64(st, base + i);

			l->c[i] += v;
			r->sum->total[i] += v;
		}
	}
	sqlite3_finalize(st);
	db_set_progress(r->db, NULL);
	if (rc != SQLITE_DONE) {
		sql_fail(r, e, raw ? "reading samples" : "reading the session histogram");
		goto fail;
	}
out:
	free(sql.s);
	return 0;
fail:
	free(sql.s);
	return -1;
}

int report_unattributed(struct db *db, const struct db_session *s, uint64_t *out,
			struct error *e)
{
	int nev = MIN(s->nr_events, STROBE_MAX_COUNTERS);
	sqlite3_stmt *st;
	int rc, i;

	/* after the CPU's last sample, and over lost intervals (schema 7) */
	if (sqlite3_prepare_v2(db_sqlite(db), "SELECT "
			       "tail_c0+coalesce(lost_c0,0),tail_c1+coalesce(lost_c1,0),"
			       "tail_c2+coalesce(lost_c2,0),tail_c3+coalesce(lost_c3,0),"
			       "tail_c4+coalesce(lost_c4,0),tail_c5+coalesce(lost_c5,0),"
			       "tail_c6+coalesce(lost_c6,0),tail_c7+coalesce(lost_c7,0) "
			       "FROM session_cpus WHERE session_id=?1", -1, &st, NULL))
		return db_sql_error(db, e, "reading session_cpus");
	sqlite3_bind_int64(st, 1, s->id);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW)
		for (i = 0; i < nev; i++)
			out[i] += (uint64_t)sqlite3_column_int64(st, i);
	sqlite3_finalize(st);
	return rc == SQLITE_DONE ? 0 : db_sql_error(db, e, "reading session_cpus");
}

static int loc_cmp(const void *pa, const void *pb)
{
	const struct loc *a = pa, *b = pb;

	if (a->binary_id != b->binary_id)
		return a->binary_id < b->binary_id ? -1 : 1;
	if (a->offset != b->offset)
		return a->offset < b->offset ? -1 : 1;
	if (a->pid != b->pid)
		return a->pid < b->pid ? -1 : 1;
	if (a->proc != b->proc)
		return a->proc < b->proc ? -1 : 1;
	return (a->mode > b->mode) - (a->mode < b->mode);
}

static int bin_by_samples(const void *pa, const void *pb)
{
	const struct bin *a = *(const struct bin *const *)pa;
	const struct bin *b = *(const struct bin *const *)pb;

	if (a->samples != b->samples)
		return a->samples > b->samples ? -1 : 1;
	return strcmp(a->display, b->display);
}

/*
 * Weigh each sample by its period, as perf report does, when the periods
 * differ (frequency mode on an event whose rate changes): a sample then
 * stands for as many events as its period says.  With a constant period
 * (or one unknown for some sample, as in sessions recorded before schema
 * 8) every location's mean period is the same and the weights would be
 * the sample counts: those are used, so that the figures stay exact.
 */
static void weigh(struct report *r)
{
	const struct locmap *m = &r->locs;
	struct report_summary *sum = r->sum;
	size_t i;

	sum->weighted = 0;
	sum->weight = sum->samples;
	if (r->period_unknown || !m->n)
		return;
	for (i = 1; i < m->n; i++) {
		const struct loc *a = &m->v[0], *l = &m->v[i];

		/* l->period / l->samples != a->period / a->samples, overflow-free */
		if ((unsigned __int128)l->period * a->samples !=
		    (unsigned __int128)a->period * l->samples)
			break;
	}
	if (i == m->n)
		return;
	sum->weighted = 1;
	sum->weight = 0;
	for (i = 0; i < m->n; i++)
		sum->weight += m->v[i].period;
}

/* Steps 2 and 3: name every location and add it to its group. */
static void name_and_group(struct report *r)
{
	struct locmap *m = &r->locs;
	enum report_by by = r->o->by;
	struct bin **problems;
	size_t i, np = 0;

	weigh(r);
	if (m->n)
		qsort(m->v, m->n, sizeof(*m->v), loc_cmp);
	progress_phase(r->o->progress, m->n, "locations named");
	for (i = 0; i < m->n; i++) {
		struct loc *l = &m->v[i];
		struct resolved rv;
		struct bin *b;
		struct group *g;
		int k;

		progress_update(r->o->progress, i);

		resolver_lookup_pid(r->res, l->binary_id, l->offset, l->pid, by == REPORT_BY_LINE,
				    &rv);
		if (!r->nbins || r->bins[r->nbins - 1].id != l->binary_id) {
			ARRAY_GROW(r->bins, r->bins_cap, r->nbins + 1);
			b = &r->bins[r->nbins++];
			memset(b, 0, sizeof(*b));
			b->id = l->binary_id;
			b->display = rv.binary;
			b->key = rv.key;
			b->build_id = rv.build_id;
			b->problem = rv.problem;
			b->note = rv.note;
			b->no_symbols = rv.no_symbols;
			b->debug = rv.debug;
			b->debug_note = rv.debug_note;
		}
		l->bin = r->nbins - 1;
		b = &r->bins[l->bin];
		b->samples += l->samples;
		if (by == REPORT_BY_CGROUP)	/* proc: its cgroup + 1 */
			g = groupmap_get(&r->groups, 0, l->proc, r->qf.cgs.names[l->proc - 1],
					 NULL, NULL, NULL);
		else
		g = groupmap_get(&r->groups, l->bin, l->proc, b->display,
				 by == REPORT_BY_BINARY ? NULL : rv.symbol,
				 by == REPORT_BY_LINE ? rv.source : NULL,
				 r->o->inline_chain ? rv.inlined : NULL);
		g->samples += l->samples;
		g->weight += r->sum->weighted ? l->period : l->samples;
		for (k = 0; k < r->nev; k++)
			g->c[k] += l->c[k];
	}

	/* Notes for binaries that could not be named, biggest first. */
	problems = xcalloc(r->nbins, sizeof(*problems));
	for (i = 0; i < r->nbins; i++)
		if (r->bins[i].problem || r->bins[i].no_symbols || r->bins[i].note ||
		    r->bins[i].debug || r->bins[i].debug_note)
			problems[np++] = &r->bins[i];
	if (np)
		qsort(problems, np, sizeof(*problems), bin_by_samples);
	for (i = 0; i < np; i++) {
		struct bin *b = problems[i];

		if (b->note)
			note_add(r, "%s (%s): warning: %s", b->display, b->key, b->note);
		if (b->problem) {
			r->sum->unresolved += b->samples;
			note_add(r, "%s (%s): not available: %s; its %" PRIu64
				 " samples are not symbolised", b->display, b->key,
				 b->problem, b->samples);
		} else if (b->no_symbols) {
			note_add(r, "%s (%s): has no function symbols (stripped); its %"
				 PRIu64 " samples show as [unknown]", b->display, b->key,
				 b->samples);
		}
	}
	/* What debuginfod could not give, in one line (only when asked). */
	if (resolver_debuginfod_summary(r->res))
		note_add(r, "%s", resolver_debuginfod_summary(r->res));
	/* Then where debug files were refused and where symbols came from:
	 * after the problems, so that those are never the notes left out. */
	for (i = 0; i < np; i++)
		if (problems[i]->debug_note)
			note_add(r, "%s: debug file %s", problems[i]->display,
				 problems[i]->debug_note);
	for (i = 0; i < np; i++)
		if (problems[i]->debug)
			note_add(r, "%s: symbols from %s", problems[i]->display, problems[i]->debug);
	free(problems);
}

int report_rank_cmp(uint64_t weight_a, uint64_t samples_a, uint64_t weight_b,
		    uint64_t samples_b)
{
	if (weight_a != weight_b)
		return weight_a > weight_b ? -1 : 1;
	if (samples_a != samples_b)
		return samples_a > samples_b ? -1 : 1;
	return 0;
}

static int group_cmp(const void *pa, const void *pb)
{
	const struct group *a = pa, *b = pb;
	int c;

	if ((c = report_rank_cmp(a->weight, a->samples, b->weight, b->samples)))
		return c;
	if ((c = strcmp(a->binary, b->binary)))
		return c;
	if ((c = strcmp(a->symbol ? a->symbol : "", b->symbol ? b->symbol : "")))
		return c;
	if ((c = strcmp(a->source ? a->source : "", b->source ? b->source : "")))
		return c;
	if ((c = strcmp(a->inl ? a->inl : "", b->inl ? b->inl : "")))
		return c;
	if (a->bin != b->bin)
		return (a->bin > b->bin) - (a->bin < b->bin);
	return (a->proc > b->proc) - (a->proc < b->proc);
}

/* ---- derived metrics ---- */

static int event_find(const struct db_session *s, const char *name)
{
	for (int i = 0; i < s->nr_events; i++)
		if (!strcasecmp(s->events[i].name, name))
			return i;
	return -1;
}

static int has_suffix(const char *s, const char *suffix, size_t *prefix_len)
{
	size_t n = strlen(s), m = strlen(suffix);

	if (n <= m || strcasecmp(s + n - m, suffix))
		return 0;
	*prefix_len = n - m;
	return 1;
}

/* Miss rate for event i if its reference event exists: X-load-misses /
 * X-loads and the like. */
static int miss_rate(const struct db_session *s, int i, struct report_derived *mt)
{
	static const struct { const char *miss, *ref, *rate; } fam[] = {
		{ "-load-misses", "-loads", "-load-miss_rate" },
		{ "-store-misses", "-stores", "-store-miss_rate" },
		{ "-prefetch-misses", "-prefetches", "-prefetch-miss_rate" },
	};
	const char *name = s->events[i].name;
	char ref[300];
	size_t k, plen;
	int j = -1;

	if (!strcasecmp(name, "cache-misses")) {
		j = event_find(s, "cache-references");
		snprintf(mt->name, sizeof(mt->name), "cache-miss_rate");
	} else if (!strcasecmp(name, "branch-misses")) {
		j = event_find(s, "branches");
		if (j < 0)
			j = event_find(s, "branch-instructions");
		snprintf(mt->name, sizeof(mt->name), "branch-miss_rate");
	} else {
		for (k = 0; k < ARRAY_SIZE(fam); k++) {
			if (!has_suffix(name, fam[k].miss, &plen))
				continue;
			snprintf(ref, sizeof(ref), "%.*s%s", (int)plen, name, fam[k].ref);
			j = event_find(s, ref);
			snprintf(mt->name, sizeof(mt->name), "%.*s%s", (int)plen, name,
				 fam[k].rate);
			break;
		}
	}
	if (j < 0)
		return 0;
	mt->type = COL_PCT;
	mt->num = i;
	mt->den = j;
	mt->scale = 100;
	return 1;
}

int report_derived_list(const struct db_session *s, struct report_derived *mt, int max)
{
	int instr = event_find(s, "instructions"), cyc = event_find(s, "cycles");
	int n = 0, i;

	if (cyc < 0)
		cyc = event_find(s, "cpu-cycles");
	if (instr >= 0 && cyc >= 0 && n < max) {
		snprintf(mt[n].name, sizeof(mt[n].name), "ipc");
		mt[n].type = COL_FLOAT;
		mt[n].num = instr;
		mt[n].den = cyc;
		mt[n].scale = 1;
		n++;
	}
	for (i = 0; instr >= 0 && i < s->nr_events && n < max; i++) {
		if (!strcasestr(s->events[i].name, "miss"))
			continue;
		snprintf(mt[n].name, sizeof(mt[n].name), "%s_per_1k_instructions",
			 s->events[i].name);
		mt[n].type = COL_FLOAT;
		mt[n].num = i;
		mt[n].den = instr;
		mt[n].scale = 1000;
		n++;
	}
	for (i = 0; i < s->nr_events && n < max; i++)
		if (miss_rate(s, i, &mt[n]))
			n++;
	return n;
}

/* ---- catalogue metrics (-M) ---- */

/* The session's event a catalogue event name is (by name or alias), or -1. */
static int catalog_event(const struct db_session *s, const char *name)
{
	int i = event_find(s, name);

	for (int k = 0; i < 0 && k < s->nr_events; k++)
		if (metric_event_is(name, s->events[k].name))
			i = k;
	return i < STROBE_MAX_COUNTERS ? i : -1;
}

static int catalog_has(void *ctx, const char *name)
{
	return catalog_event(ctx, name) >= 0;
}

int report_metrics_check(const struct db_session *s, const struct report_opts *o,
			 struct error *e)
{
	char what[64];

	snprintf(what, sizeof(what), "session %lld", (long long)s->id);
	for (int i = 0; i < o->nr_metrics; i++)
		if (metric_covered(o->metrics[i], catalog_has, (void *)s, what, e) < 0)
			return -1;
	return 0;
}

double report_metric_seconds(const struct db_session *s, const struct report_opts *o)
{
	int64_t dur = s->duration_ns > 0 ? s->duration_ns :
		      s->end_ns > s->start_ns ? s->end_ns - s->start_ns : -1;
	int64_t from = o->has_from ? MAX(o->from_ns, 0) : 0;
	int64_t to = o->has_to ? (dur >= 0 ? MIN(o->to_ns, dur) : o->to_ns) : dur;

	return to > from ? (to - from) / 1e9 : NAN;
}

/* A metric's events as the session's counter indices, found once per
 * report (matching an alias parses event names), and a row's counts. */
struct row_counts {
	char names[METRIC_EVENTS_MAX][128];
	int idx[METRIC_EVENTS_MAX];
	size_t n;
	const uint64_t *c;
};

static void row_counts_init(struct row_counts *rc, const struct metric *m,
			    const struct db_session *s)
{
	if (metric_events(m, rc->names, METRIC_EVENTS_MAX, &rc->n, NULL))
		rc->n = 0;
	for (size_t i = 0; i < rc->n; i++)
		rc->idx[i] = catalog_event(s, rc->names[i]);
}

static double row_value(void *ctx, const char *name)
{
	const struct row_counts *rc = ctx;

	for (size_t i = 0; i < rc->n; i++)
		if (!strcmp(rc->names[i], name))
			return rc->idx[i] >= 0 ? (double)rc->c[rc->idx[i]] : NAN;
	return NAN;
}

struct report_mcols {
	const struct report_opts *o;
	double seconds;
	int c0;
	struct row_counts rc[REPORT_METRICS_MAX];
};

struct report_mcols *report_mcols_add(struct table *t, const struct report_opts *o,
				      const struct db_session *s)
{
	struct report_mcols *mc = xcalloc(1, sizeof(*mc));

	mc->o = o;
	mc->seconds = report_metric_seconds(s, o);
	for (int k = 0; k < o->nr_metrics; k++) {
		int c = table_add_col(t, o->metrics[k]->name,
				      !strcmp(o->metrics[k]->unit, "%") ? COL_PCT : COL_FLOAT);

		if (!k)
			mc->c0 = c;
		row_counts_init(&mc->rc[k], o->metrics[k], s);
	}
	return mc;
}

void report_mcols_set(struct table *t, size_t row, struct report_mcols *mc, const uint64_t *c)
{
	for (int k = 0; k < mc->o->nr_metrics; k++) {
		double v;

		mc->rc[k].c = c;
		v = metric_eval(mc->o->metrics[k], row_value, &mc->rc[k], mc->seconds);
		if (!isnan(v))	/* a zero denominator: null */
			table_set_float(t, row, mc->c0 + k, v);
	}
}

/* ---- the table ---- */

static const char *by_name(enum report_by by)
{
	switch (by) {
	case REPORT_BY_BINARY: return "binary";
	case REPORT_BY_SYMBOL: return "symbol";
	case REPORT_BY_LINE: return "line";
	case REPORT_BY_CGROUP: return "cgroup";
	}
	return "?";
}

static void meta_int(struct table *t, const char *key, int64_t v)
{
	char buf[32];

	snprintf(buf, sizeof(buf), "%lld", (long long)v);
	table_add_meta(t, key, buf, 1);
}

void report_filters_str(const struct report_opts *o, struct sbuf *out)
{
	struct sbuf f = { 0 };

	if (o->pid >= 0 && o->has_pid_at)
		sbuf_addf(&f, " pid=%lld@%.9gs", (long long)o->pid, o->pid_at_ns / 1e9);
	else if (o->pid >= 0)
		sbuf_addf(&f, " pid=%lld", (long long)o->pid);
	if (o->comm)
		sbuf_addf(&f, " comm=%s", o->comm);
	if (o->binary)
		sbuf_addf(&f, " binary=%s", o->binary);
	if (o->mode != REPORT_ALL)
		sbuf_addf(&f, " mode=%s", o->mode == REPORT_KERNEL ? "kernel" : "user");
	if (o->cgroup)
		sbuf_addf(&f, " cgroup=%s", o->cgroup);
	if (o->has_from)
		sbuf_addf(&f, " from=%.9gs", o->from_ns / 1e9);
	if (o->has_to)
		sbuf_addf(&f, " to=%.9gs", o->to_ns / 1e9);
	if (f.s)
		sbuf_addf(out, "%s", f.s + 1);
	free(f.s);
}

void report_add_meta(struct table *t, const struct report_opts *o,
		     const struct report_summary *sum)
{
	const struct db_session *s = &sum->session;
	struct sbuf f = { 0 }, ev = { 0 };
	char buf[64];
	int64_t dur = s->duration_ns > 0 ? s->duration_ns :
		      s->end_ns > s->start_ns ? s->end_ns - s->start_ns : -1;
	int i;

	meta_int(t, "session", s->id);
	table_add_meta(t, "name", s->name, 0);
	table_add_meta(t, "state", s->state, 0);
	table_add_meta(t, "backend", s->backend, 0);
	table_add_meta(t, "sample_event", s->sample_event, 0);
	if (s->sample_freq)
		meta_int(t, "sample_freq", s->sample_freq);
	if (s->sample_period)
		meta_int(t, "sample_period", s->sample_period);
	for (i = 0; i < s->nr_events; i++)
		sbuf_addf(&ev, "%s%s", i ? "," : "", s->events[i].name);
	table_add_meta(t, "events", ev.s ? ev.s : "", 0);
	meta_int(t, "session_samples", s->samples);
	meta_int(t, "samples", (int64_t)sum->samples);
	table_add_meta(t, "percent_of", sum->weighted ? "period" : "samples", 0);
	if (sum->weighted)
		meta_int(t, "period", (int64_t)sum->weight);
	meta_int(t, "lost", s->lost);
	meta_int(t, "unresolved", (int64_t)sum->unresolved);
	if (dur >= 0) {		/* left out while a session runs */
		snprintf(buf, sizeof(buf), "%.3f", dur / 1e9);
		table_add_meta(t, "duration_s", buf, 1);
	}
	if (o->nr_metrics) {	/* -M: what "seconds" was */
		snprintf(buf, sizeof(buf), "%.9f", report_metric_seconds(s, o));
		table_add_meta(t, "metric_seconds", strcmp(buf, "nan") ? buf : "null", 1);
	}
	table_add_meta(t, "by", by_name(o->by), 0);
	if (o->inline_chain)
		table_add_meta(t, "inline", "chains", 0);

	report_filters_str(o, &f);
	table_add_meta(t, "filters", f.s ? f.s : "", 0);
	if (o->limit)
		meta_int(t, "limit", (int64_t)o->limit);
	free(f.s);
	free(ev.s);
}

static struct table *table_make(struct report *r)
{
	const struct db_session *s = &r->sum->session;
	struct report_derived mt[3 * STROBE_MAX_COUNTERS + 1];
	int nmt = report_derived_list(s, mt, ARRAY_SIZE(mt));
	struct table *t = table_new();
	int c_proc = -1, c_bin, c_bid, c_sym, c_src = -1, c_samples, c_pct, c_ev0 = 0, c_mt0 = 0;
	int c_inl = -1, by_cg = r->o->by == REPORT_BY_CGROUP;
	struct report_mcols *mc;
	size_t i, nshow = r->groups.n;
	int k;

	if (r->qf.split && !by_cg)
		c_proc = table_add_col(t, "process", COL_STR);
	c_bin = table_add_col(t, by_cg ? "cgroup" : "binary", COL_STR);
	c_bid = by_cg ? -1 : table_add_col(t, "build_id", COL_STR);
	c_sym = by_cg ? -1 : table_add_col(t, "symbol", COL_STR);
	if (r->o->by == REPORT_BY_LINE)
		c_src = table_add_col(t, "source", COL_STR);
	c_samples = table_add_col(t, "samples", COL_INT);
	c_pct = table_add_col(t, "percent", COL_PCT);
	for (k = 0; k < r->nev; k++) {
		int c = table_add_col(t, s->events[k].name, COL_INT);

		if (!k)
			c_ev0 = c;
	}
	for (k = 0; k < nmt; k++) {
		int c = table_add_col(t, mt[k].name, mt[k].type);

		if (!k)
			c_mt0 = c;
	}
	if (r->o->inline_chain)	/* last: the other columns keep their places */
		c_inl = table_add_col(t, "inline", COL_STR);
	mc = report_mcols_add(t, r->o, s);	/* -M: after all the others */
	report_add_meta(t, r->o, r->sum);

	if (r->groups.n)
		qsort(r->groups.v, r->groups.n, sizeof(*r->groups.v), group_cmp);
	if (r->o->limit && r->o->limit < nshow)
		nshow = r->o->limit;
	for (i = 0; i < nshow; i++) {
		const struct group *g = &r->groups.v[i];
		const struct bin *b = &r->bins[g->bin];
		size_t row = table_add_row(t);

		if (c_proc >= 0) {
			char l[64];

			procset_label(&r->qf.procs, r->o->pid, g->proc, l, sizeof(l));
			table_set_str(t, row, c_proc, l);
		}
		table_set_str(t, row, c_bin, g->binary);
		if (c_bid >= 0)
			table_set_str(t, row, c_bid, b->build_id);
		if (c_sym >= 0)
			table_set_str(t, row, c_sym, g->symbol);
		if (c_src >= 0)
			table_set_str(t, row, c_src, g->source ? g->source : "");
		table_set_int(t, row, c_samples, (int64_t)g->samples);
		table_set_float(t, row, c_pct, r->sum->weight ?
				100.0 * g->weight / r->sum->weight : 0);
		for (k = 0; k < r->nev; k++)
			table_set_int(t, row, c_ev0 + k, (int64_t)g->c[k]);
		for (k = 0; k < nmt; k++) {
			uint64_t den = g->c[mt[k].den];

			if (den)	/* zero denominator: null */
				table_set_float(t, row, c_mt0 + k,
						mt[k].scale * (double)g->c[mt[k].num] / den);
		}
		if (c_inl >= 0)
			table_set_str(t, row, c_inl, g->inl ? g->inl : "");
		report_mcols_set(t, row, mc, g->c);
	}
	free(mc);
	return t;
}

int report_state_note(const struct db_session *s, char *buf, size_t len)
{
	if (!strcmp(s->state, "running"))
		snprintf(buf, len, "session %lld is still running: this report covers the "
			 "samples stored so far", (long long)s->id);
	else if (!strcmp(s->state, "aborted"))
		snprintf(buf, len, "session %lld was aborted (strobed stopped without ending "
			 "it): samples after the last stored batch are missing", (long long)s->id);
	else if (!strcmp(s->state, "interrupted"))
		snprintf(buf, len, "session %lld was interrupted (the strobed recording it ended "
			 "without storing its end: it was killed, or could not write): it ends "
			 "with its last stored batch, and its totals were rebuilt from the "
			 "stored samples", (long long)s->id);
	else
		return 0;
	return 1;
}

struct table *report_build(struct db *db, const struct report_opts *o,
			   struct report_summary *sum, struct error *e)
{
	struct report r = { .db = db, .o = o, .sum = sum };
	struct table *t = NULL;
	char state_note[sizeof(sum->notes[0])];

	memset(sum, 0, sizeof(*sum));
	if (o->has_from && o->has_to && o->from_ns > o->to_ns) {
		error_set(e, "empty time range: --from is after --to");
		return NULL;
	}
	if (o->inline_chain && (o->by == REPORT_BY_BINARY || o->by == REPORT_BY_CGROUP)) {
		error_set(e, "inline chains are of symbols and lines: use --inline with "
			  "--by symbol or --by line");
		return NULL;
	}
	if (db_session_get(db, o->session, &sum->session, e) < 0 ||
	    report_metrics_check(&sum->session, o, e) < 0)
		return NULL;
	r.nev = MIN(sum->session.nr_events, STROBE_MAX_COUNTERS);
	if ((r.res = resolver_new(db, &sum->session, e))) {
		resolver_set_demangle(r.res, !o->no_demangle);
		resolver_set_inline(r.res, o->inline_chain);
	}
	if (!r.res)
		return NULL;

	if (report_state_note(&sum->session, state_note, sizeof(state_note)))
		note_add(&r, "%s", state_note);

	if (gather(&r, e) < 0 || report_unattributed(db, &sum->session, sum->unattributed, e) < 0 || jit_notes(&r, e) < 0)
		goto out;
	name_and_group(&r);
	t = table_make(&r);
	if (r.dropped_notes) {
		snprintf(sum->notes[NR_NOTES - 1], sizeof(sum->notes[0]),
			 "%d more notes left out", r.dropped_notes + 1);
	}
out:
	free(r.bins);
	groupmap_free(&r.groups);
	locmap_free(&r.locs);
	qfilter_free(&r.qf);
	resolver_free(r.res);
	return t;
}

int report_unscheduled(struct db *db, int64_t session, struct report_unsched *u,
		       struct error *e)
{
	sqlite3_stmt *st;
	int rc;

	memset(u, 0, sizeof(*u));
	if (sqlite3_prepare_v2(db_sqlite(db), "SELECT kind='unschedulable',cpu,"
			       "sum(enabled_ns-running_ns),count(*),min(start_ns) FROM unscheduled "
			       "WHERE session_id=?1 GROUP BY 1,2 ORDER BY 1,2", -1, &st, NULL))
		return db_sql_error(db, e, "reading when sampling groups did not count");
	sqlite3_bind_int64(st, 1, session);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		int k = sqlite3_column_int(st, 0) ? 1 : 0;
		size_t n = strlen(u->cpus[k]);

		u->ns[k] += (uint64_t)sqlite3_column_int64(st, 2);
		u->intervals[k] += (uint64_t)sqlite3_column_int64(st, 3);
		if (!u->nr_cpus[k]++ || sqlite3_column_int64(st, 4) < u->first_ns[k])
			u->first_ns[k] = sqlite3_column_int64(st, 4);
		if (n + 16 < sizeof(u->cpus[k]))
			snprintf(u->cpus[k] + n, sizeof(u->cpus[k]) - n, "%s%d", n ? ", " : "",
				 sqlite3_column_int(st, 1));
		else if (!strstr(u->cpus[k], "..."))
			snprintf(u->cpus[k] + n, sizeof(u->cpus[k]) - n, ", ...");
	}
	sqlite3_finalize(st);
	if (rc != SQLITE_DONE)
		return db_sql_error(db, e, "reading when sampling groups did not count");
	return 0;
}

const char *report_lost_kind(const char *kind)
{
	if (!strcmp(kind, "ring"))
		return "ring buffer full";
	if (!strcmp(kind, "samples"))
		return "dropped by the kernel";
	if (!strcmp(kind, "throttle"))
		return "throttled";
	if (!strcmp(kind, "spool"))
		return "not stored: strobed died with them spooled";
	return kind;
}

int report_parse_by(const char *s, enum report_by *by)
{
	if (!s)
		return -1;
	if (!strcmp(s, "binary"))
		*by = REPORT_BY_BINARY;
	else if (!strcmp(s, "symbol"))
		*by = REPORT_BY_SYMBOL;
	else if (!strcmp(s, "line"))
		*by = REPORT_BY_LINE;
	else if (!strcmp(s, "cgroup"))
		*by = REPORT_BY_CGROUP;
	else
		return -1;
	return 0;
}
