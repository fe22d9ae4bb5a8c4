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
	"cannot count <not supported>.\n";

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

int cmd_count(int argc, char **argv)
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
	struct sbuf evlist = { 0 }, mlist = { 0 };
	const struct metric *metrics[COUNT_EVENTS_MAX];
	size_t nm = 0;
	struct event_desc *ev = NULL;
	struct count_target tgt = { .kind = COUNT_TARGET_CMD };
	struct countfmt fmt = { .mode = COUNTFMT_TEXT, .aggr = COUNT_AGGR_GLOBAL, .runs = 1 };
	struct count_cpu_topo *topo = NULL;
	struct count_runs runs;
	struct sigaction sa;
	const char *outpath = NULL, *sep = NULL, *save_name = NULL;
	struct countsave_rows saved = { 0 };
	char what[512], bad[64];
	size_t nev = 0, ntopo = 0;
	int c, json = 0, naggr = 0, ntarget = 0, ret = 1, status = 0, have_cmd, save_failed = 0;
	long long saved_id = 0;
	uint64_t interval_ms = 0, repeat = 1;
	double el_mean = 0, el_m2 = 0, user = 0, sys = 0;
	FILE *out = stderr;
	struct error e;

	optind = 0;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "+e:M:ap:t:I:Ar:x:jo:h", opts, NULL)) != -1) {
		switch (c) {
		case 'e':
			sbuf_addf(&evlist, "%s%s", evlist.n ? "," : "", optarg);
			break;
		case 'M':
			sbuf_addf(&mlist, "%s%s", mlist.n ? "," : "", optarg);
			break;
		case 'a':
			tgt.kind = COUNT_TARGET_SYSTEM;
			ntarget++;
			break;
		case 'p':
		case 't':
			if (parse_pid(optarg, &tgt.pid) < 0)
				return cmd_usage_error("count", "bad %s '%s': want a %s id",
						       c == 'p' ? "-p" : "-t", optarg,
						       c == 'p' ? "process" : "thread");
			tgt.kind = c == 'p' ? COUNT_TARGET_PID : COUNT_TARGET_TID;
			ntarget++;
			break;
		case 'I':
			if (parse_u64(optarg, &interval_ms) < 0 || interval_ms > 3600 * 1000ULL)
				return cmd_usage_error("count", "bad -I '%s': want milliseconds "
						       "(10 or more)", optarg);
			if (interval_ms < 10)
				return cmd_usage_error("count", "-I below 10 ms (%s): the reading "
						       "would cost more than it shows; use -I 10 or "
						       "more", optarg);
			break;
		case 'A':
			fmt.aggr = COUNT_AGGR_CPU;
			naggr++;
			break;
		case OPT_PER_THREAD:
			fmt.aggr = COUNT_AGGR_THREAD;
			naggr++;
			break;
		case OPT_PER_CORE:
			fmt.aggr = COUNT_AGGR_CORE;
			naggr++;
			break;
		case OPT_PER_SOCKET:
			fmt.aggr = COUNT_AGGR_SOCKET;
			naggr++;
			break;
		case 'r':
			if (parse_u64(optarg, &repeat) < 0 || repeat < 1 || repeat > 100000)
				return cmd_usage_error("count", "bad -r '%s': want a number of runs "
						       "(1 or more)", optarg);
			break;
		case 'x':
			if (!*optarg || strlen(optarg) > 8)
				return cmd_usage_error("count", "bad -x '%s': want a separator of "
						       "1 to 8 characters", optarg);
			sep = optarg;
			break;
		case 'j':
			json = 1;
			break;
		case 'o':
			outpath = optarg;
			break;
		case OPT_SAVE:
			if (!*optarg || strlen(optarg) > 127)
				return cmd_usage_error("count", "bad --save '%s': want a session name "
						       "of 1 to 127 bytes", optarg);
			save_name = optarg;
			break;
		case 'h':
			printf(count_usage);
			return 0;
		default:
			free(evlist.s);
			return cmd_usage_error("count", "unknown option '%s': run 'strobe count "
					       "--help'", cmd_bad_option(argc, argv, bad, sizeof(bad)));
		}
	}
	have_cmd = optind < argc;
	if (ntarget > 1)
		goto usage_free;
	if (sep && json) {
		free(evlist.s);
		return cmd_usage_error("count", "-x and --json are two output formats: pick one");
	}
	if (naggr > 1) {
		free(evlist.s);
		return cmd_usage_error("count", "-A, --per-core, --per-socket and --per-thread "
				       "are exclusive: pick one");
	}
	if ((fmt.aggr == COUNT_AGGR_CPU || fmt.aggr == COUNT_AGGR_CORE ||
	     fmt.aggr == COUNT_AGGR_SOCKET) && tgt.kind != COUNT_TARGET_SYSTEM) {
		free(evlist.s);
		return cmd_usage_error("count", "-A, --per-core and --per-socket need -a "
				       "(counting per CPU)");
	}
	if (fmt.aggr == COUNT_AGGR_THREAD && tgt.kind == COUNT_TARGET_SYSTEM) {
		free(evlist.s);
		return cmd_usage_error("count", "--per-thread goes with -p PID, -t TID or a "
				       "command, not -a");
	}
	if (fmt.aggr == COUNT_AGGR_THREAD && tgt.kind == COUNT_TARGET_CMD &&
	    (interval_ms || repeat > 1)) {
		free(evlist.s);
		return cmd_usage_error("count", "--per-thread with a command does not go with -I "
				       "or -r: a thread's own count is known when it exits");
	}
	tgt.per_thread = fmt.aggr == COUNT_AGGR_THREAD;
	if (tgt.kind == COUNT_TARGET_CMD && !have_cmd) {
		free(evlist.s);
		return cmd_usage_error("count", "nothing to count: give a command (strobe count "
				       "[OPTIONS] -- CMD), -a, -p PID or -t TID");
	}
	if (repeat > 1 && !have_cmd) {
		free(evlist.s);
		return cmd_usage_error("count", "-r needs a command to repeat (-- CMD)");
	}
	if (repeat > 1 && interval_ms) {
		free(evlist.s);
		return cmd_usage_error("count", "-r and -I do not go together: pick one");
	}
	ev = xcalloc(COUNT_EVENTS_MAX, sizeof(*ev));
	if ((evlist.n || !mlist.n) &&
	    event_parse_list(evlist.n ? evlist.s : count_default_events(
				     tgt.kind == COUNT_TARGET_SYSTEM, event_have_hw_pmu()),
			     ev, COUNT_EVENTS_MAX, &nev, &e) < 0) {
		free(evlist.s);
		free(mlist.s);
		free(ev);
		return cmd_usage_error("count", "%s", e.msg);
	}
	free(evlist.s);
	evlist.s = NULL;
	if (mlist.n && add_metrics(mlist.s, metrics, &nm, ev, &nev, &e) < 0) {
		free(mlist.s);
		free(ev);
		return cmd_usage_error("count", "%s", e.msg);
	}
	free(mlist.s);
	if (save_name && (repeat > 1 || nev > STROBE_MAX_COUNTERS)) {
		free(ev);
		return cmd_usage_error("count", repeat > 1 ? "--save does not go with -r: save one "
				       "run" : "--save keeps at most %d events: count fewer",
				       STROBE_MAX_COUNTERS);
	}
	if (fmt.aggr == COUNT_AGGR_CORE || fmt.aggr == COUNT_AGGR_SOCKET) {
		if (read_topology(&topo, &ntopo, &e) < 0) {
			fprintf(stderr, "strobe count: %s\n", e.msg);
			free(ev);
			return 1;
		}
	}
	if (sep) {
		fmt.mode = COUNTFMT_CSV;
		fmt.sep = sep;
	} else if (json) {
		fmt.mode = COUNTFMT_JSON;
	}
	fmt.interval = interval_ms > 0;
	fmt.runs = (int)repeat;
	if (outpath && !(out = fopen(outpath, "w"))) {
		fprintf(stderr, "strobe count: cannot write %s: %s\n", outpath, strerror(errno));
		free(ev);
		free(topo);
		return 1;
	}
	switch (tgt.kind) {
	case COUNT_TARGET_SYSTEM:
		snprintf(what, sizeof(what), "'system wide'");
		break;
	case COUNT_TARGET_PID:
		snprintf(what, sizeof(what), "process id '%d'", (int)tgt.pid);
		break;
	case COUNT_TARGET_TID:
		snprintf(what, sizeof(what), "thread id '%d'", (int)tgt.pid);
		break;
	case COUNT_TARGET_CMD: {
		size_t len = 0;

		len += (size_t)snprintf(what, sizeof(what), "'");
		for (int i = optind; i < argc && len < sizeof(what) - 2; i++)
			len += (size_t)snprintf(what + len, sizeof(what) - len, "%s%s",
						i > optind ? " " : "", argv[i]);
		if (len < sizeof(what) - 1)
			snprintf(what + len, sizeof(what) - len, "'");
		break;
	}
	}

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;	/* no SA_RESTART: the wait wakes up */
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	count_runs_init(&runs);
	if (fmt.interval)
		countfmt_header(out, &fmt, what);
	for (uint64_t run = 0; run < repeat; run++) {
		struct counter_set cs;
		struct count_cmd cmd = { .pid = -1, .go_fd = -1, .err_fd = -1 };
		struct count_run_opts ro = { 0 };
		struct count_run_result res;
		struct count_ctx ctx = { 0 };
		struct count_target t = tgt;
		struct count_row *rows;
		size_t nrows;
		double d;
		int r;
		struct counter_set *view = NULL;

		if (have_cmd && count_cmd_prepare(&cmd, argv + optind, &e) < 0)
			goto fail;
		if (tgt.kind == COUNT_TARGET_CMD)
			t.pid = cmd.pid;
		r = counter_open(&cs, ev, nev, &t, &e);
		if (r < 0) {
			count_cmd_abort(&cmd);
			fprintf(stderr, "strobe count: %s\n", e.msg);
			ret = r == -2 ? 2 : 1;	/* -2: no such process */
			goto out;
		}
		ctx.out = out;
		ctx.fmt = fmt;
		ctx.cs = &cs;
		ctx.topo = topo;
		ctx.ntopo = ntopo;
		ctx.metrics = metrics;
		ctx.nm = nm;
		ctx.save = save_name ? &saved : NULL;
		ctx.prev = xcalloc(nev * cs.nunits + 1, sizeof(*ctx.prev));
		ro.cs = &cs;
		ro.cmd = have_cmd ? &cmd : NULL;
		ro.watch_pid = have_cmd ? 0 : tgt.pid;
		ro.interval_ns = (int64_t)interval_ms * 1000000;
		ro.stop = &stop_flag;
		ro.on_interval = on_interval;
		ro.ctx = &ctx;
		if (count_run(&ro, &res, &e) < 0) {
			counter_close(&cs);
			free(ctx.prev);
			fprintf(stderr, "strobe count: %s\n", e.msg);
			ret = strstr(e.msg, "cannot run") ? 127 : 1;
			goto out;
		}
		status = res.status;
		user = res.user;
		sys = res.sys;
		d = res.elapsed - el_mean;
		el_mean += d / (double)(run + 1);
		el_m2 += d * (res.elapsed - el_mean);
		if (cs.per_thread) {
			/* the command's threads, from their exit records */
			struct count_unit *tu;
			size_t ntu;
			struct count_value *tv;
			uint64_t lost;

			if (counter_threads(&cs, res.total, &tu, &ntu, &tv, &lost, &e) < 0) {
				free(res.total);
				counter_close(&cs);
				free(ctx.prev);
				goto fail;
			}
			if (lost)
				fprintf(stderr, "strobe count: %llu thread exit records were lost "
					"(too many threads): their counts are in the first "
					"thread's line\n", (unsigned long long)lost);
			/* a view of the set with the threads as its units */
			view = xmalloc(sizeof(*view));
			*view = cs;
			view->units = tu;
			view->nunits = ntu;
			free(res.total);
			res.total = tv;
		}
		if (!fmt.interval) {
			if (count_rows_build(view ? view : &cs, fmt.aggr, topo, ntopo, res.total,
					     res.elapsed, metrics, nm, &rows, &nrows, &e) < 0 ||
			    count_runs_add(&runs, rows, nrows, &e) < 0) {
				free(rows);
				free(res.total);
				if (view) {
					free(view->units);
					free(view);
				}
				counter_close(&cs);
				free(ctx.prev);
				goto fail;
			}
			if (save_name)
				countsave_keep(&saved, fmt.aggr, res.elapsed, rows, nrows);
			free(rows);
		}
		if (save_name) {
			int64_t sid = 0;

			if (countsave_send(cmd_default_socket(), save_name, view ? view : &cs,
					   &saved, res.start_ns, res.elapsed, &sid, &e) < 0)
				save_failed = 1;
			else
				saved_id = sid;
		}
		free(res.total);
		free(ctx.prev);
		if (view) {
			free(view->units);
			free(view);
		}
		counter_close(&cs);
		if (stop_flag)
			break;
	}
	if (!fmt.interval) {
		size_t n;
		struct count_row *mean = count_runs_mean(&runs, &n);

		countfmt_header(out, &fmt, what);
		for (size_t i = 0; i < n; i++)
			countfmt_row(out, &fmt, 0, &mean[i]);
		free(mean);
		countfmt_footer(out, &fmt, el_mean,
				runs.n > 1 ? sqrt(el_m2 / (double)(runs.n - 1) / (double)runs.n) : 0,
				have_cmd && tgt.kind == COUNT_TARGET_CMD, user, sys);
	}
	ret = have_cmd ? exit_status(status) : 0;
	if (save_failed) {
		fprintf(stderr, "strobe count: %s\n", e.msg);
		ret = 1;
	} else if (save_name) {
		fprintf(stderr, "strobe count: saved as count session %lld ('strobe plot --session "
			"%lld --event EVENT')\n", (long long)saved_id, (long long)saved_id);
	}
	goto out;
usage_free:
	free(evlist.s);
	return cmd_usage_error("count", "-a, -p and -t are exclusive: pick one target");
fail:
	fprintf(stderr, "strobe count: %s\n", e.msg);
	ret = 1;
out:
	count_runs_free(&runs);
	free(saved.v);
	if (out != stderr && fclose(out) != 0 && ret == 0) {
		fprintf(stderr, "strobe count: writing %s: %s\n", outpath, strerror(errno));
		ret = 1;
	}
	free(ev);
	free(topo);
	return ret;
}
