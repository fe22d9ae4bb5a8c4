/*
 * timeline.c - a session's samples per time bucket (see timeline.h): the
 * whole of timeline_build(), its ranges and names, and count sessions.
 *
 * Phases 1 and 2 read either the session's sums per fine time bucket,
 * CPU, process, comm and binary (sample_time, written by lib/ingest/ingest.c),
 * when they can answer exactly (see timeline.h), or else its raw sample
 * rows through its rowid range (the samples table has no index; see
 * doc/DESIGN.md).  Both are streamed, never held in memory, through one
 * row layout (struct trow, tlread.c): a raw row is a sum of one sample.
 *
 *  0. with --by symbol or a symbol filter: the distinct (binary, offset)
 *     locations of the filtered samples, each named by the resolver;
 *  1. with --by: the totals per key (CPU, pid, binary or symbol), from
 *     which each ranking keeps its top N keys as groups;
 *  2. the sums per bucket, for all filtered samples and per kept group
 *     (phases 0 to 2: tlgroup.c).
 *
 * Lost intervals come from table lost and one more pass over the session's
 * (cpu, time) pairs, unfiltered; markers from table markers (tlspans.c).
 * timeline_int.h lists the files and what they share.
 */
#include "config.h"
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "countstore.h"
#include "report.h"
#include "where.h"
#include "timeline_int.h"

/* ---- pure helpers ---- */

int64_t timeline_default_bucket(int64_t range_ns)
{
	static const int steps[] = { 1, 2, 5 };
	int64_t want = range_ns / 500, p = 1000000;	/* 1 ms */

	for (;;) {
		for (size_t i = 0; i < ARRAY_SIZE(steps); i++)
			if (steps[i] * p >= want)
				return steps[i] * p;
		if (p > INT64_MAX / 100)
			return p;
		p *= 10;
	}
}

size_t timeline_bucket_count(int64_t range_ns, int64_t bucket_ns)
{
	int64_t n;

	if (range_ns <= 0 || bucket_ns <= 0)
		return 1;
	n = range_ns / bucket_ns + (range_ns % bucket_ns != 0);
	return n < 1 ? 1 : (size_t)n;
}

int timeline_parse_by(const char *s, enum timeline_by *by)
{
	static const struct { const char *name; enum timeline_by by; } t[] = {
		{ "cpu", TL_BY_CPU }, { "pid", TL_BY_PID },
		{ "binary", TL_BY_BINARY }, { "symbol", TL_BY_SYMBOL },
		{ "cgroup", TL_BY_CGROUP },
	};

	for (size_t i = 0; i < ARRAY_SIZE(t); i++)
		if (!strcmp(s, t[i].name)) {
			*by = t[i].by;
			return 0;
		}
	return -1;
}

void timeline_opts_from_report(const struct report_opts *o, struct timeline_opts *to)
{
	to->session = o->session;
	to->pid = o->pid;
	to->has_pid_at = o->has_pid_at;
	to->pid_at_ns = o->pid_at_ns;
	to->pid_at_slack_ns = o->pid_at_slack_ns;
	to->comm = o->comm;
	to->binary = o->binary;
	to->cgroup = o->cgroup;
	to->has_from = o->has_from;
	to->has_to = o->has_to;
	to->from_ns = o->from_ns;
	to->to_ns = o->to_ns;
	to->no_demangle = o->no_demangle;
}

int timeline_parse_bucket(const char *s, int64_t *ns)
{
	char *end;
	double v;

	if (!((s[0] >= '0' && s[0] <= '9') || (s[0] == '.' && s[1] >= '0' && s[1] <= '9')))
		return -1;
	errno = 0;
	v = strtod(s, &end);
	if (errno || end == s || !isfinite(v))
		return -1;
	if (!*end) {
		if (v > 9e12)
			return -1;
		*ns = (int64_t)llround(v * 1e6);
	} else if (parse_duration_ns(s, ns) < 0) {
		return -1;
	}
	return *ns >= 1000 ? 0 : -1;	/* at least 1 us */
}

const char *timeline_by_name(enum timeline_by by)
{
	switch (by) {
	case TL_BY_NONE: return "none";
	case TL_BY_CPU: return "cpu";
	case TL_BY_PID: return "pid";
	case TL_BY_BINARY: return "binary";
	case TL_BY_SYMBOL: return "symbol";
	case TL_BY_CGROUP: return "cgroup";
	case TL_BY_HOST: return "host";
	}
	return "?";
}

const struct timeline_rank *timeline_rank_of(const struct timeline *t, int value)
{
	for (int i = 0; i < t->nranks; i++)
		if (t->ranks[i].value == value)
			return &t->ranks[i];
	return NULL;
}

/* ---- the whole ---- */

/* What timeline_build gathered on the way, once it is done or failed. */
static void build_free(struct build *b)
{
	db_set_progress(b->db, NULL);
	procset_free(&b->procs);
	procset_free(&b->all);
	cgset_free(&b->cgs);
	free(b->bins);
	free(b->filt.s);
	otable_free(&b->locs);
	otable_free(&b->symidx);	/* the names of b->sym */
	otable_free(&b->keys);
	free(b->sym);
	free(b->locsym);
	tl_ent_free_buckets(b);
	free(b->ent);
}

/* A count session's values, summed per bucket: each interval's count in
 * the bucket of the interval's end. */
struct count_fill {
	struct timeline *t;
	int64_t start_ns;
	uint64_t n;
};

static void count_value(void *ctx, int64_t t_ns, int idx, double value)
{
	struct count_fill *f = ctx;
	struct timeline *t = f->t;
	int64_t at = f->start_ns + t_ns;
	size_t b;

	if (at <= t->from_ns || at > t->to_ns || idx < 0 || 1 + idx >= t->nv)
		return;
	b = (size_t)((at - 1 - t->from_ns) / t->bucket_ns);
	if (b >= t->nbuckets)
		return;
	t->all.v[b * (size_t)t->nv + 1 + (size_t)idx] += value;
	t->all.total[1 + idx] += (uint64_t)(value + 0.5);
	f->n++;
}

/*
 * A count session ('strobe count --save', backend 'count'): no samples,
 * only its events' counts per interval (countstore.h); no split and no
 * filter, which need samples.
 */
static int count_timeline(struct db *db, const struct timeline_opts *o, struct timeline *t,
			  struct error *e)
{
	const struct db_session *s = &t->session;
	int64_t end = s->end_ns > s->start_ns ? s->end_ns : s->start_ns + 1;
	struct count_fill f = { t, s->start_ns, 0 };

	if (o->by != TL_BY_NONE || o->pid >= 0 || o->comm || o->binary || o->symbol || o->cgroup)
		return error_set(e, "session %lld is a count session ('strobe count --save'): it "
				 "has counts, not samples, so no --by and no process, binary, "
				 "symbol or cgroup filter", (long long)s->id);
	t->from_ns = s->start_ns + (o->has_from ? o->from_ns : 0);
	t->to_ns = o->has_to ? MIN(s->start_ns + o->to_ns, end) : end;
	if (t->to_ns <= t->from_ns)
		return error_set(e, "empty time range in count session %lld (%.3f s long)",
				 (long long)s->id, (end - s->start_ns) / 1e9);
	t->bucket_ns = o->bucket_ns > 0 ? o->bucket_ns :
		       timeline_default_bucket(t->to_ns - t->from_ns);
	t->nbuckets = timeline_bucket_count(t->to_ns - t->from_ns, t->bucket_ns);
	if (t->nbuckets > TL_MAX_BUCKETS)
		return error_set(e, "too many buckets (%zu, at most %d): give a bigger --bucket",
				 t->nbuckets, TL_MAX_BUCKETS);
	t->all.v = xcalloc(t->nbuckets * (size_t)t->nv, sizeof(double));
	snprintf(t->all.name, sizeof(t->all.name), "all");
	if (countstore_each(db, s->id, count_value, &f, e) < 0)
		return -1;
	if (!f.n)
		return error_set(e, "count session %lld has no counts in this range",
				 (long long)s->id);
	snprintf(t->note, sizeof(t->note), "count session: each interval's count is in the "
		 "bucket of its end");
	return 0;
}

void timeline_filters_text(const struct timeline_opts *o, int pid_at, struct sbuf *b)
{
	size_t n0 = b->n;

	if (o->pid >= 0)
		sbuf_addf(b, "pid %lld", (long long)o->pid);
	if (o->pid >= 0 && pid_at && o->has_pid_at)
		sbuf_addf(b, " at %.9g s", o->pid_at_ns / 1e9);
	if (o->comm)
		sbuf_addf(b, "%scomm %s", b->n > n0 ? ", " : "", o->comm);
	if (o->binary)
		sbuf_addf(b, "%sbinary %s", b->n > n0 ? ", " : "", o->binary);
	if (o->symbol)
		sbuf_addf(b, "%ssymbol %s", b->n > n0 ? ", " : "", o->symbol);
	if (o->cgroup)
		sbuf_addf(b, "%scgroup %s", b->n > n0 ? ", " : "", o->cgroup);
}

int timeline_no_samples(const struct timeline *t, const struct timeline_opts *o,
			int64_t start_ns, const char *what, struct error *e)
{
	struct sbuf f = { 0 };

	timeline_filters_text(o, 0, &f);
	error_set(e, "no samples between %.9g s and %.9g s of %s%s%s%s",
		  (t->from_ns - start_ns) / 1e9, (t->to_ns - start_ns) / 1e9, what,
		  f.n ? " with these filters (" : "", f.n ? f.s : "", f.n ? ")" : "");
	free(f.s);
	return -1;
}

int timeline_range(struct timeline *t, const struct timeline_opts *o, int64_t start_ns,
		   int64_t end, const char *what, struct error *e)
{
	t->from_ns = start_ns + (o->has_from ? o->from_ns : 0);
	t->to_ns = o->has_to ? MIN(start_ns + o->to_ns, end) : end;
	if (t->from_ns >= end)
		return error_set(e, "empty time range: %s%.9g s is at or after the end of %s "
				 "(%.3f s long)", o->has_from ? "--from " : "",
				 (t->from_ns - start_ns) / 1e9, what, (end - start_ns) / 1e9);
	if (t->to_ns <= t->from_ns)
		return error_set(e, "empty time range: from %.9g s to %.9g s: give --to after "
				 "--from", (t->from_ns - start_ns) / 1e9,
				 (t->to_ns - start_ns) / 1e9);
	t->bucket_ns = o->bucket_ns > 0 ? o->bucket_ns :
		       timeline_default_bucket(t->to_ns - t->from_ns);
	t->nbuckets = timeline_bucket_count(t->to_ns - t->from_ns, t->bucket_ns);
	if (t->nbuckets > TL_MAX_BUCKETS)
		return error_set(e, "buckets of %.9g ms over %.9g s make %zu buckets, more "
				 "than %d: give a bigger --bucket", t->bucket_ns / 1e6,
				 (t->to_ns - t->from_ns) / 1e9, t->nbuckets, TL_MAX_BUCKETS);
	t->all.v = xcalloc(t->nbuckets * (size_t)t->nv, sizeof(double));
	snprintf(t->all.name, sizeof(t->all.name), "all");
	return 0;
}

struct timeline *timeline_build(struct db *db, const struct timeline_opts *o,
				struct error *e)
{
	struct timeline *t = xcalloc(1, sizeof(*t));
	struct build b = { .db = db, .o = o, .t = t, .e = e };
	int64_t end = 0;
	char what[64];
	const struct db_session *s = &t->session;

	otable_init(&b.locs, sizeof(struct tl_idx), TL_IDX_KEY, 64);
	otable_init_str(&b.symidx, sizeof(struct tl_name), 64);
	otable_init(&b.keys, sizeof(struct tl_idx), TL_IDX_KEY, 64);
	if (db_session_get(db, o->session, &t->session, e) < 0)
		goto fail;
	t->nv = 1 + s->nr_events;
	if (!strcmp(s->backend, "count")) {
		if (o->where) {
			error_set(e, "--where keeps samples: session %lld is a count, with "
				  "none", (long long)s->id);
			goto fail;
		}
		if (count_timeline(db, o, t, e) < 0)
			goto fail;
		return t;
	}
	if (s->first_sample <= 0) {
		error_set(e, "session %lld has no samples", (long long)s->id);
		goto fail;
	}
	t->key_noun = o->by == TL_BY_CPU ? "CPUs" : o->by == TL_BY_PID ? "processes" :
		      o->by == TL_BY_BINARY ? "binaries" : o->by == TL_BY_CGROUP ? "cgroups" :
		      "symbols";
	if (tl_session_end(&b, &end) < 0)
		goto fail;
	snprintf(what, sizeof(what), "session %lld", (long long)s->id);
	if (timeline_range(t, o, s->start_ns, end, what, e) < 0)
		goto fail;
	if (tl_make_where(&b) < 0)
		goto fail;
	if (o->where) {
		if (!o->where->ready || o->where->session != s->id) {
			error_set(e, "the --where condition was not selected for session %lld",
				  (long long)s->id);
			goto fail;
		}
		where_scan(o->where, &b.raw);
	}
	/* pid reuse: the processes of --pid's pid, or for --by pid of every
	 * pid that was several */
	if (o->pid >= 0 || o->by == TL_BY_PID) {
		if (procset_load(db, s, o->pid, &b.procs, e) < 0)
			goto fail;
		if (o->pid >= 0 && o->has_pid_at) {
			if (!b.procs.n) {
				error_set(e, "--pid %lld@%.9g: no process with pid %lld is recorded "
					  "in session %lld: give --pid %lld", (long long)o->pid,
					  o->pid_at_ns / 1e9, (long long)o->pid, (long long)s->id,
					  (long long)o->pid);
				goto fail;
			}
			b.sel = procset_at(&b.procs, o->pid,
					   s->start_ns + o->pid_at_ns + o->pid_at_slack_ns);
		}
	}
	if (o->cgroup || o->by == TL_BY_CGROUP) {
		if (cgset_load(db, s->id, &b.cgs, e) < 0 ||
		    procset_load(db, s, PROCSET_ALL, &b.all, e) < 0)
			goto fail;
		b.cg = 1;
		tl_cgroup_note(t, &b.cgs);
	}
	b.need_locs = o->by == TL_BY_SYMBOL || o->symbol;
	b.summed = tl_time_sums_usable(&b);
	if (b.summed < 0)
		goto fail;
	t->summed = b.summed;
	if (o->progress && tl_progress_plan(&b) < 0)
		goto fail;
	if (b.need_locs && tl_name_locations(&b) < 0)
		goto fail;
	if (o->by != TL_BY_NONE) {
		if (tl_key_totals(&b) < 0)
			goto fail;
		timeline_rank_keys(b.t, b.o, b.ent, b.nent, sizeof(*b.ent), tl_key_name, &b);
	}
	if (tl_fill(&b) < 0)
		goto fail;
	if (!t->samples) {
		char what[48];

		snprintf(what, sizeof(what), "session %lld", (long long)s->id);
		timeline_no_samples(t, o, s->start_ns, what, e);
		goto fail;
	}
	if (tl_lost_spans(db, t, e) < 0 || tl_unsched_spans(db, t, e) < 0 ||
	    tl_markers(db, t, e) < 0)
		goto fail;
	build_free(&b);
	return t;
fail:
	build_free(&b);
	timeline_free(t);
	return NULL;
}

void timeline_free(struct timeline *t)
{
	if (!t)
		return;
	free(t->all.v);
	for (size_t i = 0; i < t->ngroups; i++)
		free(t->groups[i].v);
	free(t->groups);
	free(t->lost);
	free(t->unsched);
	free(t->markers);
	free(t);
}
