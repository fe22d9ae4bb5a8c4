/*
 * reportderived.c - a report's computed columns (report.h): the derived
 * metrics of the session's counting events (ipc, <ev>_per_1k_instructions,
 * <miss>_rate: report_derived_list()) and the -M catalogue metrics
 * (metrics.h), whose events are found by name or alias (sessevent.h) and
 * whose "seconds" is the report's range (report_metric_seconds()).
 */
#include "config.h"
#ifndef _GNU_SOURCE
#define _GNU_SOURCE 1	/* strcasestr */
#endif
#include <math.h>
#include <stdlib.h>
#include "where.h"
#include <string.h>
#include <strings.h>
#include "metrics.h"
#include "report.h"
#include "sessevent.h"

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
		j = session_event_find(s, "cache-references");
		snprintf(mt->name, sizeof(mt->name), "cache-miss_rate");
	} else if (!strcasecmp(name, "branch-misses")) {
		j = session_event_find(s, "branches");
		if (j < 0)
			j = session_event_find(s, "branch-instructions");
		snprintf(mt->name, sizeof(mt->name), "branch-miss_rate");
	} else {
		for (k = 0; k < ARRAY_SIZE(fam); k++) {
			if (!has_suffix(name, fam[k].miss, &plen))
				continue;
			snprintf(ref, sizeof(ref), "%.*s%s", (int)plen, name, fam[k].ref);
			j = session_event_find(s, ref);
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
	int instr = session_event_find(s, "instructions");
	int cyc = session_event_find(s, "cycles");
	int n = 0, i;

	if (cyc < 0)
		cyc = session_event_find(s, "cpu-cycles");
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

static int catalog_has(void *ctx, const char *name)
{
	return session_event_metric(ctx, name) >= 0;
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

	if (o->where && o->where->ready && !o->where->per_sample)
		return o->where->kept_ns > 0 ? o->where->kept_ns / 1e9 : NAN;	/* its buckets' */
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
		rc->idx[i] = session_event_metric(s, rc->names[i]);
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
