/*
 * countfmt.c - building the rows of one 'strobe count' reading, averaging
 * -r runs, and writing rows as perf stat's text, -x SEP or JSON (see
 * countfmt.h).
 */
#include "config.h"
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "countfmt.h"

static int is_sw(const struct event_desc *ev, uint64_t config)
{
	return ev->attr.type == PERF_TYPE_SOFTWARE && ev->attr.config == config;
}

static int is_hw(const struct event_desc *ev, uint64_t config)
{
	return ev->attr.type == PERF_TYPE_HARDWARE && ev->attr.config == config;
}

/* The rate perf stat shows for a software event: per second of task-clock. */
static void rate_metric(struct count_row *r, double per_sec)
{
	static const struct { double div; const char *unit; } scale[] = {
		{ 1e9, "G/sec" }, { 1e6, "M/sec" }, { 1e3, "K/sec" },
	};

	r->has_metric = 1;
	for (size_t i = 0; i < ARRAY_SIZE(scale); i++)
		if (per_sec >= scale[i].div) {
			r->metric = per_sec / scale[i].div;
			snprintf(r->metric_unit, sizeof(r->metric_unit), "%s", scale[i].unit);
			return;
		}
	r->metric = per_sec;
	snprintf(r->metric_unit, sizeof(r->metric_unit), "/sec");
}

/* Fill the default metric column of the rows [from, to) of one aggregate. */
static void shadow_metrics(const struct counter_set *cs, const size_t *evidx, struct count_row *rows,
			   size_t from, size_t to, double seconds)
{
	double clock_ns = -1, cycles = -1, branches = -1;

	for (size_t i = from; i < to; i++) {
		const struct event_desc *ev = &cs->ev[evidx[i]];

		if (rows[i].status != COUNT_OK)
			continue;
		if (count_event_is_clock(ev) && clock_ns < 0)
			clock_ns = rows[i].value * 1e6;
		else if (is_hw(ev, PERF_COUNT_HW_CPU_CYCLES))
			cycles = rows[i].value;
		else if (is_hw(ev, PERF_COUNT_HW_BRANCH_INSTRUCTIONS))
			branches = rows[i].value;
	}
	for (size_t i = from; i < to; i++) {
		const struct event_desc *ev = &cs->ev[evidx[i]];
		struct count_row *r = &rows[i];

		if (r->status != COUNT_OK)
			continue;
		if (count_event_is_clock(ev)) {
			if (seconds > 0) {
				r->has_metric = 1;
				r->metric = r->value * 1e6 / (seconds * 1e9);
				snprintf(r->metric_unit, sizeof(r->metric_unit), "CPUs utilized");
			}
		} else if (ev->attr.type == PERF_TYPE_SOFTWARE && !is_sw(ev, PERF_COUNT_SW_DUMMY)) {
			if (clock_ns > 0)
				rate_metric(r, r->value / (clock_ns / 1e9));
		} else if (is_hw(ev, PERF_COUNT_HW_CPU_CYCLES)) {
			if (clock_ns > 0) {
				r->has_metric = 1;
				r->metric = r->value / clock_ns;
				snprintf(r->metric_unit, sizeof(r->metric_unit), "GHz");
			}
		} else if (is_hw(ev, PERF_COUNT_HW_INSTRUCTIONS)) {
			if (cycles > 0) {
				r->has_metric = 1;
				r->metric = r->value / cycles;
				snprintf(r->metric_unit, sizeof(r->metric_unit), "insn per cycle");
			}
		} else if (is_hw(ev, PERF_COUNT_HW_BRANCH_MISSES)) {
			if (branches > 0) {
				r->has_metric = 1;
				r->metric = 100.0 * r->value / branches;
				snprintf(r->metric_unit, sizeof(r->metric_unit), "of all branches");
			}
		}
	}
}

/* metric_eval's view of one aggregate's rows: a catalogue name's count */
struct agg_view {
	const struct counter_set *cs;
	const struct count_row *rows;
	const size_t *evidx;
	size_t n;
};

static double agg_value(void *ctx, const char *name)
{
	const struct agg_view *v = ctx;

	for (size_t i = 0; i < v->n; i++)
		if (metric_event_is(name, v->cs->ev[v->evidx[i]].name) ||
		    metric_event_is(name, v->rows[i].event)) {
			if (v->rows[i].status != COUNT_OK)
				return NAN;
			/* a clock's row is in msec, the catalogue's in ns */
			return v->rows[i].clock ? v->rows[i].value * 1e6 : v->rows[i].value;
		}
	return NAN;
}

/* The -M metrics of one aggregate's rows sub[k]: into the row of each
 * metric's first event, or a metric-only row after it.  out gets the rows
 * (at most k + nm). */
static size_t add_metrics(const struct counter_set *cs, const size_t *subev, struct count_row *sub,
			  size_t k, double seconds, const struct metric *const *metrics, size_t nm,
			  struct count_row *out)
{
	struct agg_view v = { cs, sub, subev, k };
	int *taken = xcalloc(k + 1, sizeof(int));
	size_t n = 0;

	for (size_t i = 0; i < k; i++) {
		out[n++] = sub[i];
		for (size_t m = 0; m < nm; m++) {
			char names[METRIC_EVENTS_MAX][128];
			size_t ne = 0;
			struct count_row *r;

			if (metric_events(metrics[m], names, METRIC_EVENTS_MAX, &ne, NULL) < 0 || !ne ||
			    !(metric_event_is(names[0], cs->ev[subev[i]].name) ||
			      metric_event_is(names[0], sub[i].event)))
				continue;
			if (!taken[i]) {
				taken[i] = 1;
				r = &out[n - 1];
			} else {
				r = &out[n++];
				memset(r, 0, sizeof(*r));
				snprintf(r->id, sizeof(r->id), "%s", sub[i].id);
				r->nr = sub[i].nr;
				r->ev = -1;
				r->status = COUNT_OK;
				r->stddev_pct = -1;
			}
			r->has_metric = 1;
			r->metric = metric_eval(metrics[m], agg_value, &v, seconds);
			snprintf(r->metric_unit, sizeof(r->metric_unit), "%s %s", metrics[m]->unit,
				 metrics[m]->name);
		}
	}
	free(taken);
	return n;
}

/* Row r: event ev of cs over group gr. */
static void row_fill(struct count_row *r, const struct counter_set *cs,
		     const struct count_group *gr, size_t ev)
{
	snprintf(r->id, sizeof(r->id), "%s", gr->id);
	r->nr = gr->nr;
	snprintf(r->event, sizeof(r->event), "%s", cs->ev[ev].name);
	r->ev = (int)ev;
	r->status = cs->open_status[ev] == COUNT_NOT_SUPPORTED ? COUNT_NOT_SUPPORTED : gr->status;
	r->value = gr->scaled;
	if (count_event_is_clock(&cs->ev[ev])) {
		r->value /= 1e6;
		r->clock = 1;
		r->decimals = 2;
		snprintf(r->unit, sizeof(r->unit), "msec");
	} else if (cs->scale[ev] > 0 && cs->scale[ev] != 1) {
		r->value *= cs->scale[ev];
		r->decimals = 2;
	}
	if (!r->clock && cs->unit[ev][0]) {
		snprintf(r->unit, sizeof(r->unit), "%s", cs->unit[ev]);
		r->decimals = 2;
	}
	r->run_ns = gr->sum.run;
	r->pct = gr->sum.ena ? 100.0 * (double)gr->sum.run / (double)gr->sum.ena :
		 (r->status == COUNT_OK ? 100 : 0);
	r->stddev_pct = -1;
}

/*
 * The rows of group gi (those of rows[0..n) with gidx gi, of events
 * evidx) with their metric columns, and the metrics' own rows, into out;
 * their number.  -A (cpu_major): the rows of rows[] get their metric
 * columns in place too, and metric-only rows are marked nr -1.
 */
static size_t group_metrics(const struct counter_set *cs, struct count_row *rows, size_t n,
			    const size_t *evidx, const size_t *gidx, size_t gi, int cpu_major,
			    double seconds, const struct metric *const *metrics, size_t nm,
			    struct count_row *out)
{
	struct count_row *sub = xcalloc(cs->nev + 1, sizeof(*sub));
	size_t *subev = xcalloc(cs->nev + 1, sizeof(*subev)), k = 0, km;

	for (size_t i = 0; i < n; i++)
		if (gidx[i] == gi) {
			sub[k] = rows[i];
			subev[k++] = evidx[i];
		}
	shadow_metrics(cs, subev, sub, 0, k, seconds);
	km = add_metrics(cs, subev, sub, k, seconds, metrics, nm, out);
	if (cpu_major) {
		/* event-major: put each back in its place */
		k = 0;
		for (size_t i = 0; i < n; i++)
			if (gidx[i] == gi)
				rows[i] = sub[k++];
		for (size_t i = 0; i < km; i++)
			if (!out[i].event[0])
				out[i].nr = -1;	/* placed below */
	}
	free(sub);
	free(subev);
	return km;
}

/*
 * -A: the rows event by event over the CPUs (rows[0..*n)), each with its
 * metric columns from final[0..nf), and the metric-only rows after all
 * (rare: two -M metrics on one first event with -A).  Frees final;
 * returns rows, grown.
 */
static struct count_row *cpu_major_rows(struct count_row *rows, size_t *n,
					struct count_row *final, size_t nf)
{
	size_t m = 0;

	for (size_t i = 0; i < *n; i++)
		for (size_t j = 0; j < nf; j++)
			if (final[j].event[0] && !strcmp(final[j].event, rows[i].event) &&
			    !strcmp(final[j].id, rows[i].id)) {
				rows[i] = final[j];
				break;
			}
	for (size_t j = 0; j < nf; j++)
		if (!final[j].event[0])
			m++;
	if (m) {
		rows = xrealloc(rows, (*n + m + 1) * sizeof(*rows));
		for (size_t j = 0; j < nf; j++)
			if (!final[j].event[0]) {
				final[j].nr = 1;
				rows[(*n)++] = final[j];
			}
	}
	free(final);
	return rows;
}

/* Whether event ev of cs counts on unit u (not COUNT_FD_NOT_HERE: only a
 * system-wide set's descriptors are its units'; a --per-thread view's
 * units are threads). */
static int unit_here(const struct counter_set *cs, size_t ev, size_t u)
{
	return cs->kind != COUNT_TARGET_SYSTEM || !cs->fd ||
	       cs->fd[ev * cs->nunits + u] != COUNT_FD_NOT_HERE;
}

/*
 * Event ev's groups into g (at most cs->nunits), over the units it counts
 * on (all of them when it counts on none: a row that says why); their
 * number, or -1.
 */
static int event_groups(const struct counter_set *cs, enum count_aggr aggr,
			const struct count_cpu_topo *topo, size_t ntopo,
			const struct count_value *vals, size_t ev, struct count_group *g,
			struct error *e)
{
	struct count_unit *u = xcalloc(cs->nunits + 1, sizeof(*u));
	struct count_value *v = xcalloc(cs->nunits + 1, sizeof(*v));
	size_t k = 0;
	int r;

	for (size_t i = 0; i < cs->nunits; i++)
		if (unit_here(cs, ev, i)) {
			u[k] = cs->units[i];
			v[k++] = vals[ev * cs->nunits + i];
		}
	if (k)
		r = count_aggregate(aggr, u, k, topo, ntopo, v, g, e);
	else
		r = count_aggregate(aggr, cs->units, cs->nunits, topo, ntopo,
				    &vals[ev * cs->nunits], g, e);
	free(u);
	free(v);
	return r;
}

int count_rows_build(const struct counter_set *cs, enum count_aggr aggr,
		     const struct count_cpu_topo *topo, size_t ntopo,
		     const struct count_value *vals, double seconds,
		     const struct metric *const *metrics, size_t nm,
		     struct count_row **rowsp, size_t *nrowsp, struct error *e)
{
	size_t nu = cs->nunits ? cs->nunits : 1, ng = 0, n = 0;
	struct count_group *g = xcalloc(cs->nev * nu + 1, sizeof(*g));
	struct count_group *all = xcalloc(nu + 1, sizeof(*all));
	const struct count_group **evg;	/* [ev * ng + gi]: its group, or NULL */
	struct count_row *rows, *final;
	size_t *evidx, *gidx, nf = 0;
	struct count_unit none = { .cpu = -1, .tid = -1 };
	struct count_value *zero = xcalloc(nu + 1, sizeof(*zero));
	int cpu_major = aggr == COUNT_AGGR_CPU, r;

	*rowsp = NULL;
	*nrowsp = 0;
	/* the aggregates of every unit, in order: each event's are among them */
	if (cs->nunits)
		r = count_aggregate(aggr, cs->units, cs->nunits, topo, ntopo, zero, all, e);
	else
		r = count_aggregate(COUNT_AGGR_GLOBAL, &none, 1, NULL, 0, zero, all, e);
	free(zero);
	if (r < 0) {
		free(g);
		free(all);
		return -1;
	}
	ng = (size_t)r;
	evg = xcalloc(cs->nev * ng + 1, sizeof(*evg));
	for (size_t i = 0; i < cs->nev; i++) {
		struct count_value z = { 0, 0, 0 };

		if (cs->nunits)
			r = event_groups(cs, aggr, topo, ntopo, vals, i, &g[i * nu], e);
		else
			r = count_aggregate(COUNT_AGGR_GLOBAL, &none, 1, NULL, 0, &z, &g[i * nu], e);
		if (r < 0) {
			free(g);
			free(all);
			free(evg);
			return -1;
		}
		for (size_t gi = 0; gi < ng; gi++)
			for (int k = 0; k < r; k++)
				if (!strcmp(all[gi].id, g[i * nu + (size_t)k].id))
					evg[i * ng + gi] = &g[i * nu + (size_t)k];
	}
	rows = xcalloc(cs->nev * ng + 1, sizeof(*rows));
	final = xcalloc((cs->nev + nm) * ng + 1, sizeof(*final));
	evidx = xcalloc(cs->nev * ng + 1, sizeof(*evidx));
	gidx = xcalloc(cs->nev * ng + 1, sizeof(*gidx));
	for (size_t a = 0; a < (cpu_major ? cs->nev : ng); a++)
		for (size_t b = 0; b < (cpu_major ? ng : cs->nev); b++) {
			size_t ev = cpu_major ? a : b, gi = cpu_major ? b : a;

			if (!evg[ev * ng + gi])
				continue;	/* none of its units counts this event */
			row_fill(&rows[n], cs, evg[ev * ng + gi], ev);
			evidx[n] = ev;
			gidx[n] = gi;
			n++;
		}
	/* the metric column, aggregate by aggregate */
	for (size_t gi = 0; gi < ng; gi++)
		nf += group_metrics(cs, rows, n, evidx, gidx, gi, cpu_major, seconds, metrics, nm,
				    &final[nf]);
	if (cpu_major) {
		rows = cpu_major_rows(rows, &n, final, nf);
	} else {
		free(rows);
		rows = final;
		n = nf;
	}
	free(g);
	free(all);
	free(evg);
	free(evidx);
	free(gidx);
	*rowsp = rows;
	*nrowsp = n;
	return 0;
}

double count_stddev_pct(double mean, double m2, size_t n)
{
	if (n < 2 || mean == 0)
		return 0;
	return 100.0 * sqrt(m2 / (double)(n - 1) / (double)n) / fabs(mean);
}

void count_runs_init(struct count_runs *r)
{
	memset(r, 0, sizeof(*r));
}

int count_runs_add(struct count_runs *r, const struct count_row *rows, size_t n, struct error *e)
{
	if (!r->n) {
		r->nrows = n;
		r->first = xcalloc(n + 1, sizeof(*r->first));
		memcpy(r->first, rows, n * sizeof(*rows));
		r->sum = xcalloc(n + 1, sizeof(double));
		r->m2 = xcalloc(n + 1, sizeof(double));
		r->mean = xcalloc(n + 1, sizeof(double));
		r->msum = xcalloc(n + 1, sizeof(double));
		r->run_sum = xcalloc(n + 1, sizeof(double));
		r->pct_sum = xcalloc(n + 1, sizeof(double));
		r->counted = xcalloc(n + 1, sizeof(int));
		r->has_metric = xcalloc(n + 1, sizeof(int));
	} else if (n != r->nrows) {
		return error_set(e, "run %zu counted %zu lines, the first %zu", r->n + 1, n, r->nrows);
	}
	for (size_t i = 0; i < n; i++) {
		double d;

		if (strcmp(rows[i].event, r->first[i].event) || strcmp(rows[i].id, r->first[i].id))
			return error_set(e, "run %zu counted '%s' where the first counted '%s'",
					 r->n + 1, rows[i].event, r->first[i].event);
		/* Welford's running mean and sum of squared differences */
		d = rows[i].value - r->mean[i];
		r->mean[i] += d / (double)(r->n + 1);
		r->m2[i] += d * (rows[i].value - r->mean[i]);
		r->sum[i] += rows[i].value;
		r->run_sum[i] += (double)rows[i].run_ns;
		r->pct_sum[i] += rows[i].pct;
		if (rows[i].status == COUNT_OK)
			r->counted[i]++;
		if (rows[i].has_metric) {
			r->has_metric[i]++;
			r->msum[i] += rows[i].metric;
		}
	}
	r->n++;
	return 0;
}

struct count_row *count_runs_mean(const struct count_runs *r, size_t *n)
{
	struct count_row *out = xcalloc(r->nrows + 1, sizeof(*out));

	for (size_t i = 0; i < r->nrows; i++) {
		out[i] = r->first[i];
		if (!r->n)
			continue;
		out[i].value = r->mean[i];
		out[i].run_ns = (uint64_t)(r->run_sum[i] / (double)r->n + 0.5);
		out[i].pct = r->pct_sum[i] / (double)r->n;
		if (out[i].status != COUNT_NOT_SUPPORTED)
			out[i].status = r->counted[i] ? COUNT_OK : COUNT_NOT_COUNTED;
		out[i].stddev_pct = count_stddev_pct(r->mean[i], r->m2[i], r->n);
		out[i].has_metric = r->has_metric[i] == (int)r->n;
		if (out[i].has_metric)
			out[i].metric = r->msum[i] / (double)r->n;
	}
	*n = r->nrows;
	return out;
}

void count_runs_free(struct count_runs *r)
{
	free(r->first);
	free(r->sum);
	free(r->m2);
	free(r->mean);
	free(r->msum);
	free(r->run_sum);
	free(r->pct_sum);
	free(r->counted);
	free(r->has_metric);
	memset(r, 0, sizeof(*r));
}

/* The count as text: "<not counted>", "3.25" (a clock, msec), "1050". */
static void value_str(const struct count_row *r, char *buf, size_t len)
{
	if (r->status == COUNT_NOT_COUNTED)
		snprintf(buf, len, "<not counted>");
	else if (r->status == COUNT_NOT_SUPPORTED)
		snprintf(buf, len, "<not supported>");
	else if (r->decimals)
		snprintf(buf, len, "%.*f", r->decimals, r->value);
	else
		snprintf(buf, len, "%.0f", r->value);
}

/* The aggregate's id as perf prints it in text and CSV. */
static void id_str(enum count_aggr aggr, const struct count_row *r, char *buf, size_t len)
{
	if (aggr == COUNT_AGGR_CPU)
		snprintf(buf, len, "CPU%s", r->id);
	else
		snprintf(buf, len, "%s", r->id);
}

static void write_csv(FILE *f, const struct countfmt *fmt, double t, const struct count_row *r)
{
	char v[64], id[COUNT_ID_MAX + 8];
	const char *s = fmt->sep;

	if (fmt->interval)
		fprintf(f, "%16.9f%s", t, s);
	if (fmt->aggr != COUNT_AGGR_GLOBAL) {
		id_str(fmt->aggr, r, id, sizeof(id));
		fprintf(f, "%s%s", id, s);
		if (fmt->aggr == COUNT_AGGR_CORE || fmt->aggr == COUNT_AGGR_SOCKET)
			fprintf(f, "%d%s", r->nr, s);
	}
	if (!r->event[0]) {	/* a metric-only line: the count fields empty */
		fprintf(f, "%s%s%s%s%s", s, s, s, s, fmt->runs > 1 ? s : "");
	} else {
		value_str(r, v, sizeof(v));
		fprintf(f, "%s%s%s%s%s%s", v, s, r->unit, s, r->event, s);
		if (fmt->runs > 1)
			fprintf(f, "%.2f%%%s", r->stddev_pct < 0 ? 0 : r->stddev_pct, s);
		fprintf(f, "%llu%s%.2f%s", (unsigned long long)r->run_ns, s, r->pct, s);
	}
	if (r->has_metric && isfinite(r->metric))
		fprintf(f, "%.3f%s%s\n", r->metric, s, r->metric_unit);
	else
		fprintf(f, "%s\n", s);
}

static void write_json(FILE *f, const struct countfmt *fmt, double t, const struct count_row *r)
{
	static const char *const key[] = {
		[COUNT_AGGR_CPU] = "cpu", [COUNT_AGGR_CORE] = "core",
		[COUNT_AGGR_SOCKET] = "socket", [COUNT_AGGR_THREAD] = "thread",
	};
	char v[64];

	fputc('{', f);
	if (fmt->interval)
		fprintf(f, "\"interval\" : %.9f, ", t);
	if (fmt->aggr != COUNT_AGGR_GLOBAL) {
		fprintf(f, "\"%s\" : ", key[fmt->aggr]);
		json_write_string(f, r->id);
		fputs(", ", f);
		if (fmt->aggr == COUNT_AGGR_CORE || fmt->aggr == COUNT_AGGR_SOCKET)
			fprintf(f, "\"aggregate-number\" : %d, ", r->nr);
	}
	if (r->event[0]) {	/* not a metric-only line */
		if (r->status == COUNT_OK)
			snprintf(v, sizeof(v), "%f", r->value);
		else
			value_str(r, v, sizeof(v));
		fprintf(f, "\"counter-value\" : \"%s\", \"unit\" : ", v);
		json_write_string(f, r->unit);
		fputs(", \"event\" : ", f);
		json_write_string(f, r->event);
		if (fmt->runs > 1)
			fprintf(f, ", \"variance\" : %.2f", r->stddev_pct < 0 ? 0 : r->stddev_pct);
		fprintf(f, ", \"event-runtime\" : %llu, \"pcnt-running\" : %.2f, ",
			(unsigned long long)r->run_ns, r->pct);
	}
	if (r->has_metric && isfinite(r->metric)) {
		fprintf(f, "\"metric-value\" : %f, \"metric-unit\" : ", r->metric);
		json_write_string(f, r->metric_unit);
	} else {
		fputs("\"metric-value\" : 0.000000, \"metric-unit\" : \"\"", f);
	}
	fputs("}\n", f);
}

static void write_text(FILE *f, const struct countfmt *fmt, double t, const struct count_row *r)
{
	char v[64], id[COUNT_ID_MAX + 8];
	int has_metric = r->has_metric && isfinite(r->metric);
	struct sbuf b = { 0 };

	if (fmt->interval)
		sbuf_addf(&b, "%16.9f ", t);
	id_str(fmt->aggr, r, id, sizeof(id));
	switch (fmt->aggr) {
	case COUNT_AGGR_GLOBAL:
		break;
	case COUNT_AGGR_CPU:
		sbuf_addf(&b, "%-8s", id);
		break;
	case COUNT_AGGR_CORE:
	case COUNT_AGGR_SOCKET:
		sbuf_addf(&b, "%-12s %4d ", id, r->nr);
		break;
	case COUNT_AGGR_THREAD:
		sbuf_addf(&b, "%24s ", id);
		break;
	}
	if (r->event[0])
		value_str(r, v, sizeof(v));
	else
		v[0] = 0;
	sbuf_addf(&b, "%18s %-4s %-32s", v, r->unit, r->event);
	if (has_metric)
		sbuf_addf(&b, " # %8.3f %-24s", r->metric, r->metric_unit);
	else if (fmt->runs > 1)
		sbuf_addf(&b, "%36s", "");
	if (fmt->runs > 1 && r->status == COUNT_OK && r->event[0])
		sbuf_addf(&b, "  ( +- %5.2f%% )", r->stddev_pct < 0 ? 0 : r->stddev_pct);
	if (r->status == COUNT_OK && r->event[0] && r->pct < 99.995)
		sbuf_addf(&b, "  (%.2f%%)", r->pct);
	while (b.n && b.s[b.n - 1] == ' ')	/* no trailing blanks */
		b.s[--b.n] = 0;
	fprintf(f, "%s\n", b.s);
	free(b.s);
}

void countfmt_row(FILE *f, const struct countfmt *fmt, double t, const struct count_row *r)
{
	switch (fmt->mode) {
	case COUNTFMT_CSV:
		write_csv(f, fmt, t, r);
		break;
	case COUNTFMT_JSON:
		write_json(f, fmt, t, r);
		break;
	case COUNTFMT_TEXT:
		write_text(f, fmt, t, r);
		break;
	}
}

void countfmt_header(FILE *f, const struct countfmt *fmt, const char *what)
{
	static const char *const col[] = {
		[COUNT_AGGR_GLOBAL] = "", [COUNT_AGGR_CPU] = "CPU     ",
		[COUNT_AGGR_CORE] = "core         cpus ", [COUNT_AGGR_SOCKET] = "socket       cpus ",
		[COUNT_AGGR_THREAD] = "                  thread ",
	};

	if (fmt->mode != COUNTFMT_TEXT)
		return;
	if (fmt->interval) {
		fprintf(f, "#           time %s            counts unit events\n", col[fmt->aggr]);
		return;
	}
	fprintf(f, "\n Performance counter stats for %s", what);
	if (fmt->runs > 1)
		fprintf(f, " (%d runs)", fmt->runs);
	fprintf(f, ":\n\n");
}

void countfmt_footer(FILE *f, const struct countfmt *fmt, double elapsed, double elapsed_stddev,
		     int have_cmd, double user, double sys)
{
	if (fmt->mode != COUNTFMT_TEXT || fmt->interval)
		return;
	if (fmt->runs > 1)
		fprintf(f, "\n %17.9f +- %.9f seconds time elapsed  ( +- %5.2f%% )\n\n", elapsed,
			elapsed_stddev, elapsed > 0 ? 100.0 * elapsed_stddev / elapsed : 0);
	else
		fprintf(f, "\n %17.9f seconds time elapsed\n\n", elapsed);
	if (have_cmd && fmt->runs <= 1)
		fprintf(f, " %17.9f seconds user\n %17.9f seconds sys\n\n", user, sys);
}
