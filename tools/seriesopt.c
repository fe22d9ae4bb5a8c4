/*
 * seriesopt.c - the series options of plot, onsets and phases (see
 * seriesopt.h): one case per option, each bad value one line naming it.
 */
#include "config.h"
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "cmd.h"
#include "expr.h"
#include "seriesopt.h"

/* --event A,B: the names, blanks before each left out. */
static int parse_events(struct seriesopt *so, const char *arg)
{
	char *copy = xstrdup(arg), *save = NULL, *tok;

	for (tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		while (*tok == ' ')
			tok++;
		if (!*tok)
			continue;
		if (so->nevents == SERIESOPT_MAX_EVENTS) {
			free(copy);
			return -1;
		}
		so->events[so->nevents++] = xstrdup(tok);
	}
	free(copy);
	return so->nevents ? 0 : -1;
}

static int parse_min_shift(struct seriesopt *so, const char *name, const char *arg)
{
	char *end;

	errno = 0;
	so->min_shift = strtod(arg, &end);
	if (errno || end == arg || *end || !(so->min_shift >= 0) || so->min_shift > 1e6)
		return cmd_usage_error(so->cmd, "bad --%s '%s': give a relative shift like "
				       "0.1 (10%%), 0 or more", name, arg);
	so->min_shift_given = 1;
	return 1;
}

int seriesopt_parse(struct seriesopt *so, int c, const char *arg, struct series_req *r,
		    struct timeline_opts *o)
{
	struct error err = { "" };
	uint64_t v;

	switch (c) {
	case SOPT_EVENT:
		if (so->nevents)
			return cmd_usage_error(so->cmd, "--event given twice: list the events "
					       "once, separated by commas");
		if (parse_events(so, arg) < 0)
			return cmd_usage_error(so->cmd, "bad --event '%s': give event names "
					       "separated by commas (at most %d)", arg,
					       SERIESOPT_MAX_EVENTS);
		return 1;
	case SOPT_METRIC:
		if (r->metric)
			return cmd_usage_error(so->cmd, "--metric given twice: give one metric");
		if (series_metric_parse(r, arg, &so->metric_text, &err) < 0)
			return cmd_usage_error(so->cmd, "%s", err.msg);
		return 1;
	case SOPT_BY:
		if (so->by_host && !strcmp(arg, "host")) {
			o->by = TL_BY_HOST;
			return 1;
		}
		if (timeline_parse_by(arg, &o->by) < 0)
			return cmd_usage_error(so->cmd, "bad --by '%s': use cpu, pid, binary, "
					       "symbol%s", arg, so->by_host ?
					       ", cgroup or (with --source) host" : " or cgroup");
		return 1;
	case SOPT_TOP:
		if (parse_u64(arg, &v) < 0 || v < 1 || v > 64)
			return cmd_usage_error(so->cmd, "bad --top '%s': give a number of series "
					       "from 1 to 64", arg);
		o->top = (int)v;
		return 1;
	case SOPT_BUCKET:
		if (timeline_parse_bucket(arg, &o->bucket_ns) < 0)
			return cmd_usage_error(so->cmd, "bad --bucket '%s': give a bucket length "
					       "in ms like 10 or 0.5, or with a unit like "
					       "500us or 1s (at least 1us)", arg);
		return 1;
	case SOPT_MIN_SHIFT:
		return parse_min_shift(so, "min-shift", arg);
	case SOPT_ONSETS_MIN_SHIFT:
		return parse_min_shift(so, "onsets-min-shift", arg);
	}
	return 0;
}

void seriesopt_req(struct seriesopt *so, struct series_req *r)
{
	r->events = (const char *const *)so->events;
	r->nevents = so->nevents;
}

void seriesopt_free(struct seriesopt *so, struct series_req *r)
{
	for (int i = 0; i < so->nevents; i++)
		free(so->events[i]);
	so->nevents = 0;
	free(so->metric_text);
	so->metric_text = NULL;
	expr_free(r->metric);
	r->metric = NULL;
}
