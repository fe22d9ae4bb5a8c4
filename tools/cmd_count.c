/*
 * cmd_count.c - 'strobe count': count events for a command, a process, a
 * thread or the whole system, perf stat's way (lib/count does the
 * counting and the formats; this file parses options and prints).
 */
#include "config.h"
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <math.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include "cmd.h"
#include "counter.h"
#include "countfmt.h"
#include "countrun.h"
#include "countsave.h"
#include "metrics.h"

static const char count_usage[] =
	"usage: strobe count [-e EV,...] [-M METRIC,...] [-a | -p PID | -t TID] [-I MS]\n"
	"                    [-A | --per-core | --per-socket | --per-thread] [-r N]\n"
	"                    [-x SEP | -j] [-o FILE] [--save NAME] [-- CMD [ARGS...]]\n"
	"Count events while CMD runs (or in a process, a thread, or every CPU), like\n"
	"perf stat.  The counts go to stderr (or -o FILE), so CMD's output is untouched;\n"
	"the exit status is CMD's.\n"
	"\n"
	"  -e, --event EV,...      events to count ('strobe list'); repeatable; default:\n"
	"                          task-clock, context-switches, cpu-migrations,\n"
	"                          page-faults, and with a hardware PMU cycles,\n"
	"                          instructions, branches, branch-misses\n"
	"  -M, --metrics METRIC,...  also count the events these metrics need and\n"
	"                          show each metric in the metric column of its first\n"
	"                          event ('strobe list --metrics'); without -e, only\n"
	"                          the metrics' events are counted\n"
	"  -a, --all-cpus          count on every CPU (system wide), while CMD runs or\n"
	"                          until Ctrl-C; needs kernel.perf_event_paranoid <= 0,\n"
	"                          CAP_PERFMON or root\n"
	"  -p, --pid PID           count every thread of process PID (threads it starts\n"
	"                          count in their creator's line), while CMD runs or\n"
	"                          until PID exits or Ctrl-C\n"
	"  -t, --tid TID           count one thread (and threads it starts), while CMD\n"
	"                          runs or until it exits or Ctrl-C\n"
	"  -I, --interval-print MS print the counts every MS milliseconds (>= 10), each\n"
	"                          line starting with the interval's end in seconds\n"
	"  -A, --no-aggr           with -a: one line per CPU\n"
	"      --per-core          with -a: one line per core (S<socket>-D<die>-C<core>)\n"
	"      --per-socket        with -a: one line per socket\n"
	"      --per-thread        one line per thread (comm-TID): of -p PID, or of\n"
	"                          CMD (each thread's and child process's own count\n"
	"                          as it exits; not with -I or -r)\n"
	"  -r, --repeat N          run CMD N times; print the mean and its standard\n"
	"                          error (+- %%)\n"
	"  -x, --field-separator SEP  perf stat's CSV: [time,][id,[cpus,]]value,unit,\n"
	"                          event,[stddev%%,]run ns,%% running,metric,metric unit\n"
	"  -j, --json              one JSON object per count (perf stat -j's keys)\n"
	"  -o, --output FILE       write the counts to FILE instead of stderr\n"
	"      --save NAME         also store the counts (each -I interval, or the run\n"
	"                          as one) in strobed's database as a count session\n"
	"                          NAME: 'strobe sessions' lists it, 'strobe plot\n"
	"                          --session ID --event EV' plots it (at most 8\n"
	"                          events; not with -r)\n"
	"  -h, --help              show this help\n"
	"\n"
	"A count multiplexed with others is scaled to its enabled time and shows the\n"
	"percentage it ran; one that never ran shows <not counted>, one the kernel\n"
	"cannot count <not supported>.  An event of a non-core PMU (a sysfs cpumask:\n"
	"uncore, power/energy-pkg/) counts with -a only, opened on the CPUs its mask\n"
	"names (one per package), its value scaled and shown in its unit (Joules).\n";

static volatile sig_atomic_t stop_flag;

static void on_signal(int sig)
{
	(void)sig;
	stop_flag = 1;
}

struct count_ctx {
	FILE *out;
	struct countfmt fmt;
	struct counter_set *cs;
	const struct count_cpu_topo *topo;
	size_t ntopo;
	const struct metric *const *metrics;
	size_t nm;
	struct count_value *prev;
	double prev_t;
	struct countsave_rows *save;	/* --save: the rows kept */
};

static int print_rows(struct count_ctx *c, double t, const struct count_value *vals,
		      double seconds, struct error *e)
{
	struct count_row *rows;
	size_t n;

	if (count_rows_build(c->cs, c->fmt.aggr, c->topo, c->ntopo, vals, seconds, c->metrics,
			     c->nm, &rows, &n, e) < 0)
		return -1;
	for (size_t i = 0; i < n; i++)
		countfmt_row(c->out, &c->fmt, t, &rows[i]);
	fflush(c->out);
	if (c->save)
		countsave_keep(c->save, c->fmt.aggr, t, rows, n);
	free(rows);
	return 0;
}

static int on_interval(void *ctx, double t, const struct count_value *cur, struct error *e)
{
	struct count_ctx *c = ctx;
	size_t nv = c->cs->nev * c->cs->nunits;
	struct count_value *d = xcalloc(nv + 1, sizeof(*d));
	int r;

	for (size_t i = 0; i < nv; i++)
		d[i] = count_value_sub(&cur[i], &c->prev[i]);
	r = print_rows(c, t, d, t - c->prev_t, e);
	memcpy(c->prev, cur, nv * sizeof(*cur));
	c->prev_t = t;
	free(d);
	return r;
}

static int parse_pid(const char *s, pid_t *pid)
{
	uint64_t v;

	if (parse_u64(s, &v) < 0 || v == 0 || v > INT_MAX)
		return -1;
	*pid = (pid_t)v;
	return 0;
}

static int read_topology(struct count_cpu_topo **topo, size_t *ntopo, struct error *e)
{
	int *cpus, max = 0;
	size_t n;

	if (count_online_cpus("", &cpus, &n, e) < 0)
		return -1;
	for (size_t i = 0; i < n; i++)
		max = MAX(max, cpus[i]);
	*ntopo = (size_t)max + 1;
	*topo = xcalloc(*ntopo, sizeof(**topo));
	for (size_t i = 0; i < n; i++)
		if (count_topo_read("", cpus[i], &(*topo)[cpus[i]], e) < 0) {
			free(cpus);
			return -1;
		}
	free(cpus);
	return 0;
}

static int exit_status(int status)
{
	if (WIFSIGNALED(status))
		return 128 + WTERMSIG(status);
	return WEXITSTATUS(status);
}

/*
 * -M: look each metric up, check this machine can compute it, and add the
 * events it needs that ev[] lacks.
 */
static int add_metrics(char *list, const struct metric **metrics, size_t *nm,
		       struct event_desc *ev, size_t *nev, struct error *e)
{
	char *save = NULL;

	for (char *name = strtok_r(list, ",", &save); name; name = strtok_r(NULL, ",", &save)) {
		const struct metric *m = metric_find(name);
		char names[METRIC_EVENTS_MAX][128];
		size_t ne;

		if (!m)
			return error_set(e, "unknown metric '%s': run 'strobe list --metrics'", name);
		if (metric_check(m, e) < 0)
			return error_prefix(e, "metric '%s'", m->name);
		if (*nm >= COUNT_EVENTS_MAX)
			return error_set(e, "too many metrics: at most %d", COUNT_EVENTS_MAX);
		metrics[(*nm)++] = m;
		if (metric_events(m, names, METRIC_EVENTS_MAX, &ne, e) < 0)
			return -1;
		for (size_t i = 0; i < ne; i++) {
			size_t j;

			for (j = 0; j < *nev; j++)
				if (metric_event_is(names[i], ev[j].name))
					break;
			if (j < *nev)
				continue;
			if (*nev >= COUNT_EVENTS_MAX)
				return error_set(e, "too many events: at most %d", COUNT_EVENTS_MAX);
			if (event_parse(names[i], &ev[*nev], e) < 0)
				return -1;
			(*nev)++;
		}
	}
	return 0;
}

enum { OPT_PER_THREAD = 256, OPT_PER_CORE, OPT_PER_SOCKET, OPT_SAVE };

/* The command's options, as given. */
struct count_opts {
	struct sbuf evlist, mlist;	/* -e, -M: the lists joined with ',' */
	struct count_target tgt;
	struct countfmt fmt;
	const char *outpath, *sep, *save_name;
	int json, naggr, ntarget, have_cmd;
	uint64_t interval_ms, repeat;
};

/* Option c (getopt_long's, its value in optarg) into co: -1 to go on, else
 * the exit status. */
static int parse_option(struct count_opts *co, int c, int argc, char **argv)
{
	char bad[64];

	switch (c) {
	case 'e':
		sbuf_addf(&co->evlist, "%s%s", co->evlist.n ? "," : "", optarg);
		break;
	case 'M':
		sbuf_addf(&co->mlist, "%s%s", co->mlist.n ? "," : "", optarg);
		break;
	case 'a':
		co->tgt.kind = COUNT_TARGET_SYSTEM;
		co->ntarget++;
		break;
	case 'p':
	case 't':
		if (parse_pid(optarg, &co->tgt.pid) < 0)
			return cmd_usage_error("count", "bad %s '%s': want a %s id",
					       c == 'p' ? "-p" : "-t", optarg,
					       c == 'p' ? "process" : "thread");
		co->tgt.kind = c == 'p' ? COUNT_TARGET_PID : COUNT_TARGET_TID;
		co->ntarget++;
		break;
	case 'I':
		if (parse_u64(optarg, &co->interval_ms) < 0 || co->interval_ms > 3600 * 1000ULL)
			return cmd_usage_error("count", "bad -I '%s': want milliseconds "
					       "(10 or more)", optarg);
		if (co->interval_ms < 10)
			return cmd_usage_error("count", "-I below 10 ms (%s): the reading "
					       "would cost more than it shows; use -I 10 or "
					       "more", optarg);
		break;
	case 'A':
	case OPT_PER_THREAD:
	case OPT_PER_CORE:
	case OPT_PER_SOCKET:
		co->fmt.aggr = c == 'A' ? COUNT_AGGR_CPU : c == OPT_PER_THREAD ?
			COUNT_AGGR_THREAD : c == OPT_PER_CORE ? COUNT_AGGR_CORE :
			COUNT_AGGR_SOCKET;
		co->naggr++;
		break;
	case 'r':
		if (parse_u64(optarg, &co->repeat) < 0 || co->repeat < 1 || co->repeat > 100000)
			return cmd_usage_error("count", "bad -r '%s': want a number of runs "
					       "(1 or more)", optarg);
		break;
	case 'x':
		if (!*optarg || strlen(optarg) > 8)
			return cmd_usage_error("count", "bad -x '%s': want a separator of "
					       "1 to 8 characters", optarg);
		co->sep = optarg;
		break;
	case 'j':
		co->json = 1;
		break;
	case 'o':
		co->outpath = optarg;
		break;
	case OPT_SAVE:
		if (!*optarg || strlen(optarg) > 127)
			return cmd_usage_error("count", "bad --save '%s': want a session name "
					       "of 1 to 127 bytes", optarg);
		co->save_name = optarg;
		break;
	case 'h':
		printf(count_usage);
		return 0;
	default:
		return cmd_usage_error("count", "unknown option '%s': run 'strobe count "
				       "--help'", cmd_bad_option(argc, argv, bad, sizeof(bad)));
	}
	return -1;
}

/* The options' combinations: -1 when they go together, else the exit
 * status. */
static int check_options(struct count_opts *co)
{
	enum count_aggr aggr = co->fmt.aggr;
	enum count_target_kind kind = co->tgt.kind;

	if (co->ntarget > 1)
		return cmd_usage_error("count", "-a, -p and -t are exclusive: pick one target");
	if (co->sep && co->json)
		return cmd_usage_error("count", "-x and --json are two output formats: pick one");
	if (co->naggr > 1)
		return cmd_usage_error("count", "-A, --per-core, --per-socket and --per-thread "
				       "are exclusive: pick one");
	if ((aggr == COUNT_AGGR_CPU || aggr == COUNT_AGGR_CORE ||
	     aggr == COUNT_AGGR_SOCKET) && kind != COUNT_TARGET_SYSTEM)
		return cmd_usage_error("count", "-A, --per-core and --per-socket need -a "
				       "(counting per CPU)");
	if (aggr == COUNT_AGGR_THREAD && kind == COUNT_TARGET_SYSTEM)
		return cmd_usage_error("count", "--per-thread goes with -p PID, -t TID or a "
				       "command, not -a");
	if (aggr == COUNT_AGGR_THREAD && kind == COUNT_TARGET_CMD &&
	    (co->interval_ms || co->repeat > 1))
		return cmd_usage_error("count", "--per-thread with a command does not go with -I "
				       "or -r: a thread's own count is known when it exits");
	co->tgt.per_thread = aggr == COUNT_AGGR_THREAD;
	if (kind == COUNT_TARGET_CMD && !co->have_cmd)
		return cmd_usage_error("count", "nothing to count: give a command (strobe count "
				       "[OPTIONS] -- CMD), -a, -p PID or -t TID");
	if (co->repeat > 1 && !co->have_cmd)
		return cmd_usage_error("count", "-r needs a command to repeat (-- CMD)");
	if (co->repeat > 1 && co->interval_ms)
		return cmd_usage_error("count", "-r and -I do not go together: pick one");
	return -1;
}

/* The events to count (-e, else the defaults, unless -M alone) and -M's
 * metrics with the events they need: -1 to go on, else the exit status. */
static int choose_events(struct count_opts *co, struct event_desc *ev, size_t *nev,
			 const struct metric **metrics, size_t *nm)
{
	struct error e;

	if ((co->evlist.n || !co->mlist.n) &&
	    event_parse_list(co->evlist.n ? co->evlist.s : count_default_events(
				     co->tgt.kind == COUNT_TARGET_SYSTEM, event_have_hw_pmu()),
			     ev, COUNT_EVENTS_MAX, nev, &e) < 0)
		return cmd_usage_error("count", "%s", e.msg);
	if (co->mlist.n && add_metrics(co->mlist.s, metrics, nm, ev, nev, &e) < 0)
		return cmd_usage_error("count", "%s", e.msg);
	if (co->save_name && (co->repeat > 1 || *nev > STROBE_MAX_COUNTERS))
		return cmd_usage_error("count", co->repeat > 1 ? "--save does not go with -r: "
				       "save one run" : "--save keeps at most %d events: count "
				       "fewer", STROBE_MAX_COUNTERS);
	return -1;
}

/* What is counted, as the header names it: quoted, CMD's words cut to fit. */
static void describe_target(const struct count_target *tgt, char **cmdv, int ncmd,
			    char *what, size_t len)
{
	size_t n = 0;

	switch (tgt->kind) {
	case COUNT_TARGET_SYSTEM:
		snprintf(what, len, "'system wide'");
		break;
	case COUNT_TARGET_PID:
		snprintf(what, len, "process id '%d'", (int)tgt->pid);
		break;
	case COUNT_TARGET_TID:
		snprintf(what, len, "thread id '%d'", (int)tgt->pid);
		break;
	case COUNT_TARGET_CMD:
		n += (size_t)snprintf(what, len, "'");
		for (int i = 0; i < ncmd && n < len - 2; i++)
			n += (size_t)snprintf(what + n, len - n, "%s%s", i > 0 ? " " : "", cmdv[i]);
		if (n < len - 1)
			snprintf(what + n, len - n, "'");
		break;
	}
}

/* A count's runs (-r), and what they add up to. */
struct count_job {
	const struct count_opts *co;
	char **cmdv;			/* CMD, when there is one */
	const struct event_desc *ev;
	size_t nev;
	const struct metric *const *metrics;
	size_t nm;
	const struct count_cpu_topo *topo;
	size_t ntopo;
	FILE *out;
	struct count_runs runs;		/* without -I: each run's rows */
	struct countsave_rows saved;	/* --save: the rows kept */
	double el_mean, el_m2;		/* the runs' elapsed times (Welford) */
	double user, sys;		/* the last run's CPU time */
	int status;			/* the last run's wait status */
	int save_failed;
	long long saved_id;
};

/*
 * A per-thread count of a command: *view, a copy of cs whose units are
 * the command's threads (from their exit records), res->total their
 * counts.
 */
static int thread_view(const struct counter_set *cs, struct count_run_result *res,
		       struct counter_set **view, struct error *e)
{
	struct count_unit *tu;
	size_t ntu;
	struct count_value *tv;
	uint64_t lost;

	if (counter_threads(cs, res->total, &tu, &ntu, &tv, &lost, e) < 0)
		return -1;
	if (lost)
		fprintf(stderr, "strobe count: %llu thread exit records were lost "
			"(too many threads): their counts are in the first "
			"thread's line\n", (unsigned long long)lost);
	*view = xmalloc(sizeof(**view));
	**view = *cs;
	(*view)->units = tu;
	(*view)->nunits = ntu;
	free(res->total);
	res->total = tv;
	return 0;
}

/* Without -I: the rows of a run's total, kept for the mean (and --save). */
static int keep_rows(struct count_job *j, const struct counter_set *cs,
		     const struct count_run_result *res, struct error *e)
{
	enum count_aggr aggr = j->co->fmt.aggr;
	struct count_row *rows = NULL;
	size_t nrows;

	if (count_rows_build(cs, aggr, j->topo, j->ntopo, res->total, res->elapsed,
			     j->metrics, j->nm, &rows, &nrows, e) < 0 ||
	    count_runs_add(&j->runs, rows, nrows, e) < 0) {
		free(rows);
		return -1;
	}
	if (j->co->save_name)
		countsave_keep(&j->saved, aggr, res->elapsed, rows, nrows);
	free(rows);
	return 0;
}

/* Open the counters and count while the target runs (or until Ctrl-C),
 * printing -I's intervals.  Returns 0, or the exit status with e set. */
static int count_once(struct count_job *j, uint64_t run, struct error *e)
{
	const struct count_opts *co = j->co;
	struct counter_set cs, *view = NULL;
	struct count_cmd cmd = { .pid = -1, .go_fd = -1, .err_fd = -1 };
	struct count_run_opts ro = { 0 };
	struct count_run_result res;
	struct count_ctx ctx = { 0 };
	struct count_target t = co->tgt;
	double d;
	int r, ret = 1;

	if (co->have_cmd && count_cmd_prepare(&cmd, j->cmdv, e) < 0)
		return 1;
	if (co->tgt.kind == COUNT_TARGET_CMD)
		t.pid = cmd.pid;
	r = counter_open(&cs, j->ev, j->nev, &t, e);
	if (r < 0) {
		count_cmd_abort(&cmd);
		return r == -2 ? 2 : 1;	/* -2: no such process */
	}
	ctx.out = j->out;
	ctx.fmt = co->fmt;
	ctx.cs = &cs;
	ctx.topo = j->topo;
	ctx.ntopo = j->ntopo;
	ctx.metrics = j->metrics;
	ctx.nm = j->nm;
	ctx.save = co->save_name ? &j->saved : NULL;
	ctx.prev = xcalloc(j->nev * cs.nunits + 1, sizeof(*ctx.prev));
	ro.cs = &cs;
	ro.cmd = co->have_cmd ? &cmd : NULL;
	ro.watch_pid = co->have_cmd ? 0 : co->tgt.pid;
	ro.interval_ns = (int64_t)co->interval_ms * 1000000;
	ro.stop = &stop_flag;
	ro.on_interval = on_interval;
	ro.ctx = &ctx;
	if (count_run(&ro, &res, e) < 0) {
		counter_close(&cs);
		free(ctx.prev);
		return strstr(e->msg, "cannot run") ? 127 : 1;
	}
	j->status = res.status;
	j->user = res.user;
	j->sys = res.sys;
	d = res.elapsed - j->el_mean;
	j->el_mean += d / (double)(run + 1);
	j->el_m2 += d * (res.elapsed - j->el_mean);
	if (cs.per_thread && thread_view(&cs, &res, &view, e) < 0)
		goto out;
	if (!co->fmt.interval && keep_rows(j, view ? view : &cs, &res, e) < 0)
		goto out;
	if (co->save_name) {
		int64_t sid = 0;

		if (countsave_send(cmd_default_socket(), co->save_name, view ? view : &cs,
				   &j->saved, res.start_ns, res.elapsed, &sid, e) < 0)
			j->save_failed = 1;
		else
			j->saved_id = sid;
	}
	ret = 0;
out:
	free(res.total);
	free(ctx.prev);
	if (view) {
		free(view->units);
		free(view);
	}
	counter_close(&cs);
	return ret;
}

/* Without -I: the header, the runs' mean rows and the footer. */
static void print_counts(struct count_job *j, const char *what)
{
	const struct count_opts *co = j->co;
	size_t n;
	struct count_row *mean = count_runs_mean(&j->runs, &n);

	countfmt_header(j->out, &co->fmt, what);
	for (size_t i = 0; i < n; i++)
		countfmt_row(j->out, &co->fmt, 0, &mean[i]);
	free(mean);
	countfmt_footer(j->out, &co->fmt, j->el_mean,
			j->runs.n > 1 ? sqrt(j->el_m2 / (double)(j->runs.n - 1) /
					     (double)j->runs.n) : 0,
			co->have_cmd && co->tgt.kind == COUNT_TARGET_CMD, j->user, j->sys);
}

/* Count (co->repeat times) and print. Returns the exit status. */
static int count_all(struct count_job *j, const char *what)
{
	const struct count_opts *co = j->co;
	struct sigaction sa;
	struct error e;
	int ret;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;	/* no SA_RESTART: the wait wakes up */
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	if (co->fmt.interval)
		countfmt_header(j->out, &co->fmt, what);
	for (uint64_t run = 0; run < co->repeat; run++) {
		if ((ret = count_once(j, run, &e))) {
			fprintf(stderr, "strobe count: %s\n", e.msg);
			return ret;
		}
		if (stop_flag)
			break;
	}
	if (!co->fmt.interval)
		print_counts(j, what);
	ret = co->have_cmd ? exit_status(j->status) : 0;
	if (j->save_failed) {
		fprintf(stderr, "strobe count: %s\n", e.msg);
		ret = 1;
	} else if (co->save_name) {
		fprintf(stderr, "strobe count: saved as count session %lld ('strobe plot --session "
			"%lld --event EVENT')\n", j->saved_id, j->saved_id);
	}
	return ret;
}

/* -1 to go on, else the exit status. */
static int parse_args(struct count_opts *co, int argc, char **argv)
{
	static const struct option opts[] = {
		{ "event", required_argument, NULL, 'e' },
		{ "metrics", required_argument, NULL, 'M' },
		{ "all-cpus", no_argument, NULL, 'a' },
		{ "pid", required_argument, NULL, 'p' },
		{ "tid", required_argument, NULL, 't' },
		{ "interval-print", required_argument, NULL, 'I' },
		{ "no-aggr", no_argument, NULL, 'A' },
		{ "per-thread", no_argument, NULL, OPT_PER_THREAD },
		{ "per-core", no_argument, NULL, OPT_PER_CORE },
		{ "per-socket", no_argument, NULL, OPT_PER_SOCKET },
		{ "repeat", required_argument, NULL, 'r' },
		{ "field-separator", required_argument, NULL, 'x' },
		{ "json", no_argument, NULL, 'j' },
		{ "output", required_argument, NULL, 'o' },
		{ "save", required_argument, NULL, OPT_SAVE },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int c, r;

	optind = 0;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "+e:M:ap:t:I:Ar:x:jo:h", opts, NULL)) != -1)
		if ((r = parse_option(co, c, argc, argv)) >= 0)
			return r;
	co->have_cmd = optind < argc;
	if ((r = check_options(co)) >= 0)
		return r;
	if (co->sep) {
		co->fmt.mode = COUNTFMT_CSV;
		co->fmt.sep = co->sep;
	} else if (co->json) {
		co->fmt.mode = COUNTFMT_JSON;
	}
	co->fmt.interval = co->interval_ms > 0;
	co->fmt.runs = (int)co->repeat;
	return -1;
}

int cmd_count(int argc, char **argv)
{
	struct count_opts co = {
		.tgt = { .kind = COUNT_TARGET_CMD },
		.fmt = { .mode = COUNTFMT_TEXT, .aggr = COUNT_AGGR_GLOBAL, .runs = 1 },
		.repeat = 1,
	};
	const struct metric *metrics[COUNT_EVENTS_MAX];
	struct event_desc *ev = NULL;
	struct count_cpu_topo *topo = NULL;
	struct count_job j = { .co = &co, .out = stderr };
	char what[512];
	size_t nev = 0, nm = 0, ntopo = 0;
	int ret;
	struct error e;

	if ((ret = parse_args(&co, argc, argv)) >= 0)
		goto done;
	ev = xcalloc(COUNT_EVENTS_MAX, sizeof(*ev));
	if ((ret = choose_events(&co, ev, &nev, metrics, &nm)) >= 0)
		goto done;
	ret = 1;
	if ((co.fmt.aggr == COUNT_AGGR_CORE || co.fmt.aggr == COUNT_AGGR_SOCKET) &&
	    read_topology(&topo, &ntopo, &e) < 0) {
		fprintf(stderr, "strobe count: %s\n", e.msg);
		goto done;
	}
	if (co.outpath && !(j.out = fopen(co.outpath, "w"))) {
		fprintf(stderr, "strobe count: cannot write %s: %s\n", co.outpath,
			strerror(errno));
		goto done;
	}
	describe_target(&co.tgt, argv + optind, argc - optind, what, sizeof(what));
	j.cmdv = argv + optind;
	j.ev = ev;
	j.nev = nev;
	j.metrics = metrics;
	j.nm = nm;
	j.topo = topo;
	j.ntopo = ntopo;
	count_runs_init(&j.runs);
	ret = count_all(&j, what);
	count_runs_free(&j.runs);
	free(j.saved.v);
	if (j.out != stderr && fclose(j.out) != 0 && ret == 0) {
		fprintf(stderr, "strobe count: writing %s: %s\n", co.outpath, strerror(errno));
		ret = 1;
	}
done:
	free(co.evlist.s);
	free(co.mlist.s);
	free(ev);
	free(topo);
	return ret;
}
