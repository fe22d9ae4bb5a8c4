/*
 * metrics.c - the metric catalogue (metrics.def) and what its users need of
 * it: lookup by name, the events a metric uses, whether this machine or a
 * session has them, and its value from counts.
 */
#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include "events.h"
#include "expr.h"
#include "metrics.h"
#include "output.h"

static const struct metric catalogue[] = {
#define METRIC(name, expr, scale, unit, group, desc) \
	{ name, expr, scale, unit, group, desc },
#include "metrics.def"
#undef METRIC
};

const struct metric *metrics_all(size_t *n)
{
	*n = ARRAY_SIZE(catalogue);
	return catalogue;
}

const struct metric *metric_find(const char *name)
{
	for (size_t i = 0; i < ARRAY_SIZE(catalogue); i++)
		if (!strcasecmp(catalogue[i].name, name))
			return &catalogue[i];
	return NULL;
}

static struct expr *metric_parse(const struct metric *m, struct error *e)
{
	struct expr *x = expr_parse(m->expr, e);

	if (!x)
		error_prefix(e, "metric %s: expression '%s'", m->name, m->expr);
	return x;
}

int metric_events(const struct metric *m, char names[][128], size_t max, size_t *n,
		  struct error *e)
{
	struct expr *x = metric_parse(m, e);
	size_t i, j;

	*n = 0;
	if (!x)
		return -1;
	for (i = 0; i < expr_nnames(x); i++) {
		const char *name = expr_name(x, i);

		if (!strcmp(name, "seconds"))
			continue;
		for (j = 0; j < *n && strcmp(names[j], name); j++)
			;
		if (j < *n)
			continue;
		if (*n == max || strlen(name) >= 128) {
			expr_free(x);
			return error_set(e, "metric %s: more than %zu events or a name too long",
					 m->name, max);
		}
		strcpy(names[(*n)++], name);
	}
	expr_free(x);
	return 0;
}

int metric_uses_seconds(const struct metric *m)
{
	struct expr *x = expr_parse(m->expr, NULL);
	int ret = 0;

	for (size_t i = 0; x && i < expr_nnames(x); i++)
		ret |= !strcmp(expr_name(x, i), "seconds");
	expr_free(x);
	return ret;
}

/* Why a "pmu/event/" name does not parse here: its PMU or its event is
 * missing from sysfs. */
static int pmu_missing(const struct metric *m, const char *name, struct error *e)
{
	char pmu[128], path[320];
	const char *slash = strchr(name, '/');
	DIR *d;

	snprintf(pmu, sizeof(pmu), "%.*s", (int)(slash - name), name);
	snprintf(path, sizeof(path), "/sys/bus/event_source/devices/%s", pmu);
	d = opendir(path);
	if (d)
		closedir(d);
	return error_set(e, "needs '%s', which this machine lacks: %s%s", name,
			 d ? "its PMU has no such event" : "no such PMU in sysfs",
			 !strcmp(m->group, "topdown") ?
			 " (TopDown level 1 needs Intel perf metrics: Ice Lake or later)" : "");
}

/* Whether name is a PMU's slots event ("cpu/slots/"), which must lead the
 * group of Intel's TopDown events. */
static int is_slots(const char *name)
{
	const char *slash = strchr(name, '/');

	return slash && !strcmp(slash, "/slots/");
}

int metric_check(const struct metric *m, struct error *e)
{
	char names[METRIC_EVENTS_MAX][128];
	struct event_desc evs[METRIC_EVENTS_MAX];
	struct error pe;
	size_t i, n, bad = 0;

	if (metric_events(m, names, METRIC_EVENTS_MAX, &n, e))
		return -1;
	for (i = 0; i < n; i++) {
		uint32_t type;

		if (event_parse(names[i], &evs[i], &pe)) {
			if (strchr(names[i], '/'))
				return pmu_missing(m, names[i], e);
			return error_set(e, "needs '%s', which this machine lacks: %s",
					 names[i], pe.msg);
		}
		type = evs[i].attr.type;
		if ((type == PERF_TYPE_HARDWARE || type == PERF_TYPE_HW_CACHE ||
		     type == PERF_TYPE_RAW) && !event_have_hw_pmu())
			return error_set(e, "needs '%s', which this machine lacks: "
					 "no hardware PMU", names[i]);
	}
	/* The events open as one group, as a count of the metric opens them:
	 * slots leads (TopDown events count only in its group). */
	for (i = 1; i < n; i++) {
		if (is_slots(evs[i].name)) {
			struct event_desc t = evs[0];

			evs[0] = evs[i];
			evs[i] = t;
			break;
		}
	}
	if (event_probe_group(evs, n, &bad, &pe))
		return error_set(e, "needs '%s', which this machine cannot count: %s",
				 evs[bad].name, pe.msg);
	return 0;
}

int metric_event_is(const char *catalogue_name, const char *recorded_name)
{
	struct event_desc a, b;

	if (!strcasecmp(catalogue_name, recorded_name))
		return 1;
	if (event_parse(catalogue_name, &a, NULL) || event_parse(recorded_name, &b, NULL))
		return 0;
	return a.attr.type == b.attr.type && a.attr.config == b.attr.config &&
	       a.attr.config1 == b.attr.config1 && a.attr.config2 == b.attr.config2;
}

int metric_covered(const struct metric *m, int (*have)(void *ctx, const char *name),
		   void *ctx, const char *what, struct error *e)
{
	char names[METRIC_EVENTS_MAX][128], need[512] = "", all[512] = "";
	size_t i, n, nmiss = 0, last = 0;

	if (metric_events(m, names, METRIC_EVENTS_MAX, &n, e))
		return -1;
	for (i = 0; i < n; i++)
		if (!have(ctx, names[i]))
			nmiss++, last = i;
	if (!nmiss)
		return 0;
	for (i = 0; i < n; i++) {
		size_t len = strlen(need);

		/* (a list too long for the line is cut: it is a message) */
		if (snprintf(all + strlen(all), sizeof(all) - strlen(all), "%s%s",
			     i ? "," : "", names[i]) < 0)
			break;
		if (have(ctx, names[i]))
			continue;
		if (snprintf(need + len, sizeof(need) - len, "%s'%s'",
			     !len ? "" : i == last ? " and " : ", ", names[i]) < 0)
			break;
	}
	return error_set(e, "metric %s needs %s, which %s did not count: record with -e %s",
			 m->name, need, what, all);
}

struct eval_ctx {
	struct expr *x;
	double (*value)(void *ctx, const char *name);
	void *ctx;
	double seconds;
	double vars[2 * METRIC_EVENTS_MAX + 2];
	size_t nvars;
};

static int eval_lookup(void *ctx, const char *name)
{
	struct eval_ctx *c = ctx;

	if (c->nvars == ARRAY_SIZE(c->vars))
		return -1;
	c->vars[c->nvars] = !strcmp(name, "seconds") ? c->seconds : c->value(c->ctx, name);
	return (int)c->nvars++;
}

double metric_eval(const struct metric *m, double (*value)(void *ctx, const char *name),
		   void *ctx, double seconds)
{
	struct eval_ctx c = { .value = value, .ctx = ctx, .seconds = seconds };
	double v = NAN;

	c.x = expr_parse(m->expr, NULL);
	if (c.x && !expr_bind(c.x, eval_lookup, &c, NULL))
		v = expr_eval(c.x, c.vars) * m->scale;
	expr_free(c.x);
	return v;
}

char *metric_expr_scaled(const struct metric *m)
{
	if (m->scale == 1)
		return xstrdup(m->expr);
	return xasprintf("%.15g * (%s)", m->scale, m->expr);
}

struct table *metrics_table(void)
{
	struct table *t = table_new();
	int c_name = table_add_col(t, "name", COL_STR);
	int c_group = table_add_col(t, "group", COL_STR);
	int c_unit = table_add_col(t, "unit", COL_STR);
	int c_ok = table_add_col(t, "computable", COL_STR);
	int c_expr = table_add_col(t, "expression", COL_STR);
	int c_desc = table_add_col(t, "description", COL_STR);
	int c_why = table_add_col(t, "why_not", COL_STR);

	for (size_t i = 0; i < ARRAY_SIZE(catalogue); i++) {
		const struct metric *m = &catalogue[i];
		size_t row = table_add_row(t);
		struct error e = { "" };
		int ok = !metric_check(m, &e);
		char *expr = metric_expr_scaled(m);

		table_set_str(t, row, c_name, m->name);
		table_set_str(t, row, c_group, m->group);
		table_set_str(t, row, c_unit, m->unit);
		table_set_str(t, row, c_ok, ok ? "yes" : "no");
		table_set_str(t, row, c_expr, expr);
		table_set_str(t, row, c_desc, m->desc);
		table_set_str(t, row, c_why, ok ? "" : e.msg);
		free(expr);
	}
	return t;
}
