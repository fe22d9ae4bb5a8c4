/*
 * filteropt.c - the session and sample filter options of every command
 * that filters (filteropt.h): parsed once, with report's messages.
 */
#include "config.h"
#include <stdio.h>
#include <stdlib.h>
#include <stdint.h>
#include "cmd.h"
#include "cgset.h"
#include "filteropt.h"
#include "procset.h"
#include "util.h"
#include "where.h"

int filteropt_parse(const struct filteropt *f, int c, const char *arg, const char *spelled,
		    struct report_opts *o)
{
	const char *cmd = f->cmd;
	uint64_t v;

	switch (c) {
	case FOPT_SESSION:
		if (parse_u64(arg, &v) < 0 || v == 0 || v > INT64_MAX)
			return cmd_usage_error(cmd, "bad --session '%s': give a session id "
					       "('strobe sessions' lists them)", arg);
		o->session = (int64_t)v;
		return 1;
	case FOPT_PID: {
		int64_t at;

		if (!f->pid_at) {	/* a process id only */
			if (parse_u64(arg, &v) < 0 || v > UINT32_MAX)
				return cmd_usage_error(cmd, "bad --pid '%s': give a process id",
						       arg);
			o->pid = (int64_t)v;
			return 1;
		}
		if (procset_parse_pid(arg, &o->pid, &at, &o->pid_at_slack_ns) < 0)
			return cmd_usage_error(cmd, "bad --pid '%s': give a process id, "
					       "or PID@START as %s (seconds since the "
					       "session start)", arg, f->pid_at);
		o->has_pid_at = at >= 0;
		o->pid_at_ns = at;
		return 1;
	}
	case FOPT_COMM:
		o->comm = arg;
		return 1;
	case FOPT_CGROUP:
		if (cgset_check_filter(arg) < 0)
			return cmd_usage_error(cmd, "bad --cgroup '%s': give a cgroup path "
					       "from the cgroup root, like /system.slice/x.service, "
					       "or a subtree like /system.slice/", arg);
		o->cgroup = arg;
		return 1;
	case FOPT_BINARY:
		if (!*arg)
			return cmd_usage_error(cmd, "bad --binary '%s': give a path or file name",
					       arg);
		o->binary = arg;
		return 1;
	case FOPT_SYMBOL:
		if (!*arg)
			return cmd_usage_error(cmd, "bad --symbol '': give a symbol's name as "
					       "the report's symbol column shows it");
		o->symbol = arg;
		return 1;
	case FOPT_KERNEL:
	case FOPT_USER:
		if (o->mode != REPORT_ALL &&
		    o->mode != (c == FOPT_KERNEL ? REPORT_KERNEL : REPORT_USER))
			return cmd_usage_error(cmd, "%s: --kernel and --user exclude each "
					       "other: give one of them", spelled);
		o->mode = c == FOPT_KERNEL ? REPORT_KERNEL : REPORT_USER;
		return 1;
	case FOPT_FROM:
	case FOPT_TO: {
		int64_t ns;

		if (parse_duration_ns(arg, &ns) < 0 || ns < 0)
			return cmd_usage_error(cmd, "bad %s '%s': give a time since the "
					       "session start like 1.5, 1.5s or 250ms",
					       c == FOPT_FROM ? "--from" : "--to", arg);
		if (c == FOPT_FROM) {
			o->has_from = 1;
			o->from_ns = ns;
		} else {
			o->has_to = 1;
			o->to_ns = ns;
		}
		return 1;
	}
	case FOPT_NO_DEMANGLE:
		o->no_demangle = 1;
		return 1;
	case FOPT_WHERE:
	case FOPT_WHERE_SAMPLE:
	case FOPT_INVERT:
	case FOPT_WHERE_BUCKET: {
		struct error e = { "" };

		if (!o->where)
			o->where = xcalloc(1, sizeof(*o->where));
		if (c == FOPT_WHERE_SAMPLE)
			o->where->per_sample = 1;
		else if (c == FOPT_INVERT)
			o->where->invert = 1;
		else if (c == FOPT_WHERE_BUCKET && where_parse_bucket(o->where, arg, &e) < 0)
			return cmd_usage_error(cmd, "%s", e.msg);
		else if (c == FOPT_WHERE) {
			if (o->where->x)
				return cmd_usage_error(cmd, "--where given twice: give one condition "
						       "(combine metrics in its expression)");
			if (where_parse(o->where, arg, &e) < 0)
				return cmd_usage_error(cmd, "%s", e.msg);
		}
		return 1;
	}
	}
	return 0;
}

void filteropt_free(struct report_opts *o)
{
	if (!o->where)
		return;
	where_free(o->where);
	free(o->where);
	o->where = NULL;
}

int filteropt_check_where(const char *cmd, const struct report_opts *o)
{
	const struct where *w = o->where;

	if (w && !w->x)
		return cmd_usage_error(cmd, "%s needs --where: give --where 'EXPR > NUMBER' "
				       "(or >=, <, <=)", w->invert ? "--invert" : w->per_sample ?
				       "--where-sample" : "--where-bucket");
	if (w && w->per_sample && w->bucket_ns)
		return cmd_usage_error(cmd, "--where-bucket is of buckets and --where-sample of "
				       "samples: give one of them");
	return 0;
}

int filteropt_check(const char *cmd, const struct report_opts *o)
{
	if (filteropt_check_where(cmd, o))
		return 2;
	if (o->has_from && o->has_to && o->from_ns > o->to_ns) {
		char buf[128];

		snprintf(buf, sizeof(buf), "--from %.9gs is after --to %.9gs: give "
			 "--from <= --to", o->from_ns / 1e9, o->to_ns / 1e9);
		return cmd_usage_error(cmd, "%s", buf);
	}
	return 0;
}

int filteropt_check_nonempty(const char *cmd, const struct report_opts *o)
{
	if (o->has_from && o->has_to && o->from_ns >= o->to_ns) {
		cmd_usage_error(cmd, "empty time range: --from %.9gs is not before --to %.9gs",
				o->from_ns / 1e9, o->to_ns / 1e9);
		return 1;
	}
	return 0;
}

void filteropt_timeline(const struct report_opts *o, struct timeline_opts *to)
{
	timeline_opts_from_report(o, to);
}
