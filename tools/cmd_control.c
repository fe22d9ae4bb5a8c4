/*
 * cmd_control.c - strobe start, stop and status: requests to strobed.
 * The start options are shared with 'strobe record' (control_parse_start).
 */
#include "config.h"
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "callgraph.h"
#include "cmd.h"
#include "control.h"
#include "events.h"
#include "proto.h"
#include "strobe.h"
#include "usdt.h"

/* --marker PATH:PROVIDER:NAME: checked for form here, with PATH made
 * absolute (strobed runs elsewhere); strobed finds the probe, as root. */
static int add_marker(struct start_opts *o, const char *arg, const char *cmd)
{
	char path[PATH_MAX], abs[PATH_MAX], prov[USDT_MAX_NAME], name[USDT_MAX_NAME];
	char cwd[PATH_MAX];
	struct error e;

	if (usdt_parse_spec(arg, path, sizeof(path), prov, name, &e) < 0) {
		fprintf(stderr, "strobe %s: %s\n", cmd, e.msg);
		return -1;
	}
	if (o->nr_markers >= START_MAX_MARKERS) {
		fprintf(stderr, "strobe %s: too many markers: at most %d --marker probes\n",
			cmd, START_MAX_MARKERS);
		return -1;
	}
	if (realpath(path, abs)) {
		o->markers[o->nr_markers++] = xasprintf("%s:%s:%s", abs, prov, name);
	} else if (path[0] == '/' || !getcwd(cwd, sizeof(cwd))) {
		o->markers[o->nr_markers++] = xstrdup(arg);	/* strobed says what is wrong */
	} else {
		o->markers[o->nr_markers++] = xasprintf("%s/%s:%s:%s", cwd, path, prov, name);
	}
	return 0;
}

void start_opts_init(struct start_opts *o)
{
	memset(o, 0, sizeof(*o));
	o->socket = cmd_default_socket();
}

int start_opts_parse(struct start_opts *o, int c, const char *arg, const char *cmd)
{
	struct event_desc evs[STROBE_MAX_COUNTERS], one;
	struct error e;
	size_t n;
	uint64_t v;

	switch (c) {
	case 'S':
		o->socket = arg;
		return 1;
	/* Names are checked here when we can read what they need (tracepoint
	 * ids are root-only); strobed checks them all again, as root. */
	case 'e':
		o->events = arg;
		if (event_parse_list(arg, evs, STROBE_MAX_COUNTERS, &n, &e) < 0 &&
		    (geteuid() == 0 || strstr(e.msg, "unknown event") || strstr(e.msg, "too many")))
			goto bad_event;
		return 1;
	case 'E':
		o->sample_event = arg;
		if (event_parse(arg, &one, &e) < 0 &&
		    (geteuid() == 0 || strstr(e.msg, "unknown event")))
			goto bad_event;
		return 1;
	case 'F':
		if (parse_u64(arg, &v) < 0 || !v) {
			fprintf(stderr, "strobe %s: bad frequency '%s': give a positive rate in Hz\n",
				cmd, arg);
			return -1;
		}
		o->freq = arg;
		return 1;
	case 'c':
		if (parse_u64(arg, &v) < 0 || !v) {
			fprintf(stderr, "strobe %s: bad period '%s': give a positive count of events\n",
				cmd, arg);
			return -1;
		}
		o->period = arg;
		return 1;
	case 'n':
		o->name = arg;
		return 1;
	case 'm':
		o->buffer_pages = arg;
		return 1;
	case 'M':
		return add_marker(o, arg, cmd) < 0 ? -1 : 1;
	case 'g':
		o->call_graph = "fp";
		return 1;
	case 'G': {
		struct callgraph cg;

		if (!*arg)
			error_set(&e, "empty mode (fp or dwarf[,BYTES])");
		if (!*arg || callgraph_parse(arg, &cg, &e) < 0) {
			fprintf(stderr, "strobe %s: --call-graph: %s\n", cmd, e.msg);
			return -1;
		}
		o->call_graph = arg;
		return 1;
	}
	case 'K':
		o->keep_stacks = 1;
		return 1;
	case 'X':
		if (strcmp(arg, "exact") && strcmp(arg, "sample")) {
			fprintf(stderr, "strobe %s: bad --attribution '%s': exact or sample\n",
				cmd, arg);
			return -1;
		}
		o->attribution = arg;
		return 1;
	}
	return 0;
bad_event:
	fprintf(stderr, "strobe %s: %s\n", cmd, e.msg);
	return -1;
}

int start_opts_check(const struct start_opts *o, const char *cmd)
{
	if (o->keep_stacks && !(o->call_graph && !strncmp(o->call_graph, "dwarf", 5))) {
		fprintf(stderr, "strobe %s: --keep-stacks needs --call-graph dwarf: only dwarf "
			"samples carry a stack copy\n", cmd);
		return -1;
	}
	if (o->attribution && !strcmp(o->attribution, "exact") && !o->events) {
		fprintf(stderr, "strobe %s: --attribution exact needs counting events (-e): "
			"it splits their increases at context switches\n", cmd);
		return -1;
	}
	if (o->freq && o->period) {
		fprintf(stderr, "strobe %s: -F and -c exclude each other: sample by frequency "
			"or by period\n", cmd);
		return -1;
	}
	return 0;
}

int control_start(const struct start_opts *o, long long *id, struct error *e)
{
	struct proto_msg req, resp;
	const char *s;
	int ret;

	proto_init(&req, "start");
	if (o->events)
		proto_add(&req, "events", o->events);
	if (o->sample_event)
		proto_add(&req, "sample_event", o->sample_event);
	if (o->freq)
		proto_add(&req, "freq", o->freq);
	if (o->period)
		proto_add(&req, "period", o->period);
	if (o->name)
		proto_add(&req, "name", o->name);
	if (o->buffer_pages)
		proto_add(&req, "buffer_pages", o->buffer_pages);
	if (o->call_graph)
		proto_add(&req, "call_graph", o->call_graph);
	if (o->keep_stacks)
		proto_add(&req, "keep_stacks", "1");
	if (o->attribution)
		proto_add(&req, "attribution", o->attribution);
	for (int i = 0; i < o->nr_markers; i++) {
		char key[16];

		snprintf(key, sizeof(key), "marker%d", i);
		proto_add(&req, key, o->markers[i]);
	}
	ret = proto_call(o->socket, &req, &resp, e);
	proto_free(&req);
	if (ret == 0) {
		s = proto_get(&resp, "session");
		*id = s ? atoll(s) : 0;
	}
	proto_free(&resp);
	return ret;
}

int control_simple(const char *socket, const char *verb, struct proto_msg *resp,
		   struct error *e)
{
	struct proto_msg req;
	int ret;

	proto_init(&req, verb);
	ret = proto_call(socket, &req, resp, e);
	proto_free(&req);
	return ret;
}

/*
 * While a stop waits for strobed to store what it spooled: a child that
 * asks for the status every half second and shows, on stderr when it is
 * a terminal, how many records are left.  The child ends with the stop.
 */
static pid_t stop_progress_start(const char *socket)
{
	pid_t pid;

	if (!isatty(2))
		return -1;
	pid = fork();
	if (pid != 0)
		return pid;
	for (int shown = 0;; ) {
		struct proto_msg st;
		const char *left, *lag;

		usleep(500 * 1000);
		if (control_simple(socket, "status", &st, NULL) < 0)
			_exit(0);
		left = proto_get(&st, "lag_records");
		lag = proto_get(&st, "lag_ns");
		if (left && strcmp(left, "0")) {
			fprintf(stderr, "\rstrobe stop: storing the spooled records: %s left "
				"(%.1f s behind)   ", left, lag ? atof(lag) / 1e9 : 0.0);
			shown = 1;
		} else if (shown) {
			fprintf(stderr, "\r%60s\r", "");
			shown = 0;
		}
		proto_free(&st);
	}
}

static void stop_progress_end(pid_t pid)
{
	if (pid <= 0)
		return;
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	fprintf(stderr, "\r%70s\r", "");
}

int control_stop(const char *socket, struct proto_msg *resp, struct error *e)
{
	pid_t pid = stop_progress_start(socket);
	int ret = control_simple(socket, "stop", resp, e);

	stop_progress_end(pid);
	return ret;
}

void control_print_stop(FILE *f, const struct proto_msg *resp)
{
	const char *d = proto_get(resp, "duration_ns");
	const char *t = proto_get(resp, "throttled");
	const char *u = proto_get(resp, "unscheduled_ns");
	const char *l = proto_get(resp, "late");
	const char *lm = proto_get(resp, "late_max_ns");
	const char *un = proto_get(resp, "uncertain");

	fprintf(f, "session %s: %s samples, %s lost, %.3f s",
		proto_get(resp, "session") ? proto_get(resp, "session") : "?",
		proto_get(resp, "samples") ? proto_get(resp, "samples") : "0",
		proto_get(resp, "lost") ? proto_get(resp, "lost") : "0",
		d ? atof(d) / 1e9 : 0.0);
	if (t && strcmp(t, "0"))
		fprintf(f, ", throttled %s times by the kernel", t);
	if (u && strcmp(u, "0"))
		fprintf(f, ", sampling group not counting for %.3f s (see strobe report)",
			atof(u) / 1e9);
	if (l && strcmp(l, "0"))
		fprintf(f, ", %s records out of time order (up to %.3f ms late, see strobe "
			"report)", l, lm ? atof(lm) / 1e6 : 0.0);
	if (un && strcmp(un, "0"))
		fprintf(f, ", %s processes with maps that may be wrong (see strobe report)", un);
	fputc('\n', f);
}

static const struct option start_long[] = {
	START_LONG_OPTIONS,
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

int cmd_start(int argc, char **argv)
{
	struct start_opts o;
	struct error e;
	long long id;
	int c, r;

	start_opts_init(&o);
	while ((c = getopt_long(argc, argv, "+" START_SHORT_OPTIONS "h", start_long, NULL)) != -1) {
		if (c == 'h') {
			printf("usage: strobe start " START_USAGE "\n"
			       "Start a system-wide session in strobed; print its id.\n"
			       START_HELP);
			return 0;
		}
		r = start_opts_parse(&o, c, optarg, "start");
		if (r < 0)
			return 2;
		if (r == 0) {
			fprintf(stderr, "usage: strobe start " START_USAGE "\n");
			return 2;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "strobe start: unexpected argument '%s'\n", argv[optind]);
		return 2;
	}
	if (start_opts_check(&o, "start") < 0)
		return 2;
	if (control_start(&o, &id, &e) < 0) {
		fprintf(stderr, "strobe start: %s\n", e.msg);
		return 1;
	}
	printf("%lld\n", id);
	return 0;
}

static int socket_only(int argc, char **argv, const char **socket)
{
	static const struct option lo[] = {
		{ "socket", required_argument, NULL, 'S' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int c;

	*socket = cmd_default_socket();
	while ((c = getopt_long(argc, argv, "h", lo, NULL)) != -1) {
		if (c == 'S') {
			*socket = optarg;
		} else if (c == 'h') {
			printf("usage: strobe %s [--socket PATH]\n", argv[0]);
			return 1;
		} else {
			fprintf(stderr, "usage: strobe %s [--socket PATH]\n", argv[0]);
			return 2;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "strobe %s: unexpected argument '%s'\n", argv[0], argv[optind]);
		return 2;
	}
	return 0;
}

int cmd_stop(int argc, char **argv)
{
	struct proto_msg resp;
	const char *socket;
	struct error e;
	int r = socket_only(argc, argv, &socket);

	if (r)
		return r == 1 ? 0 : r;
	if (control_stop(socket, &resp, &e) < 0) {
		fprintf(stderr, "strobe stop: %s\n", e.msg);
		return 1;
	}
	control_print_stop(stdout, &resp);
	proto_free(&resp);
	return 0;
}

/* A byte count given as text, as "512 B", "64.0 KiB", "1.5 GiB". */
static void size_text(char *buf, size_t len, const char *bytes)
{
	static const char *const unit[] = { "B", "KiB", "MiB", "GiB", "TiB" };
	double v = bytes ? atof(bytes) : 0;
	int u = 0;

	while (v >= 1024 && u < 4) {
		v /= 1024;
		u++;
	}
	snprintf(buf, len, u ? "%.1f %s" : "%.0f %s", v, unit[u]);
}

/*
 * strobe status --watch: a status every interval, with the rates over the
 * interval computed from two snapshots (the counts strobed's ingest has
 * stored, and strobed's clock, elapsed_ns, as of the same reply).
 */
struct snap {
	int running;
	long long session;
	double elapsed;			/* s since the session's start */
	uint64_t samples, stored, lost;	/* samples: taken from the rings */
	uint64_t lag_records, lag_ns, spool_mem, spool_disk, spool_mem_max, spool_disk_max;
	uint64_t deferred_ns;		/* ingest waits for an idle CPU, so long */
	uint64_t db_bytes, db_wal_bytes;
	int have_db_bytes;
	int nr_cpus;			/* the session's; of them nr listed */
	int nr;
	long *cpu;
	uint64_t *cpu_samples, *cpu_lost;
	char *db;
	char *note;			/* stopping, blocked, removing: or NULL */
};

static void snap_free(struct snap *s)
{
	free(s->cpu);
	free(s->cpu_samples);
	free(s->cpu_lost);
	free(s->db);
	free(s->note);
	memset(s, 0, sizeof(*s));
}

static uint64_t get_u64(const struct proto_msg *m, const char *key)
{
	const char *v = proto_get(m, key);

	return v ? strtoull(v, NULL, 10) : 0;
}

/* A list "N,N,..." of at most max numbers into v; the count. */
static int parse_list(const char *s, uint64_t *v, int max)
{
	int n = 0;

	while (s && *s && n < max) {
		char *end;

		v[n++] = strtoull(s, &end, 10);
		if (*end != ',')
			break;
		s = end + 1;
	}
	return n;
}

static void snap_take(struct snap *s, const struct proto_msg *m)
{
	const char *v;
	int max = 1;

	memset(s, 0, sizeof(*s));
	v = proto_get(m, "running");
	s->running = v && !strcmp(v, "1");
	s->db = xstrdup(proto_get(m, "db") ? proto_get(m, "db") : "?");
	s->have_db_bytes = proto_get(m, "db_bytes") != NULL;
	s->db_bytes = get_u64(m, "db_bytes");
	s->db_wal_bytes = get_u64(m, "db_wal_bytes");
	if (proto_get(m, "stopping"))
		s->note = xstrdup("stopping: the stop waits until the session can be stored");
	else if (proto_get(m, "blocked_ms"))
		s->note = xasprintf("database locked for %.1f s by %s",
				    get_u64(m, "blocked_ms") / 1e3,
				    proto_get(m, "lock_holder") ? proto_get(m, "lock_holder") : "?");
	else if (proto_get(m, "removing"))
		s->note = xstrdup("removing sessions: their rows are being deleted");
	if (!s->running)
		return;
	s->session = atoll(proto_get(m, "session") ? proto_get(m, "session") : "0");
	s->elapsed = get_u64(m, "elapsed_ns") / 1e9;
	s->stored = get_u64(m, "samples");
	/* a strobed without taken= (older): what it stored */
	s->samples = proto_get(m, "taken") ? get_u64(m, "taken") : s->stored;
	s->lost = get_u64(m, "lost");
	s->lag_records = get_u64(m, "lag_records");
	s->lag_ns = get_u64(m, "lag_ns");
	s->deferred_ns = get_u64(m, "ingest_deferred_ns");
	s->spool_mem = get_u64(m, "spool_mem");
	s->spool_disk = get_u64(m, "spool_disk");
	s->spool_mem_max = get_u64(m, "spool_mem_max");
	s->spool_disk_max = get_u64(m, "spool_disk_max");
	s->nr_cpus = (int)get_u64(m, "nr_cpus");
	for (v = proto_get(m, "cpus"); v && *v; v++)
		max += *v == ',';
	s->cpu = xcalloc(max, sizeof(*s->cpu));
	s->cpu_samples = xcalloc(max, sizeof(*s->cpu_samples));
	s->cpu_lost = xcalloc(max, sizeof(*s->cpu_lost));
	{
		uint64_t *tmp = xcalloc(max, sizeof(*tmp));
		int n = parse_list(proto_get(m, "cpus"), tmp, max);

		for (int i = 0; i < n; i++)
			s->cpu[i] = (long)tmp[i];
		free(tmp);
		/* a strobed that sends no per-CPU counts: none shown */
		if (parse_list(proto_get(m, "cpu_samples"), s->cpu_samples, max) != n ||
		    parse_list(proto_get(m, "cpu_lost"), s->cpu_lost, max) != n)
			n = 0;
		s->nr = n;
	}
}

/* The rates of cur over the interval since prev: since the session's
 * start when prev is not the same session. */
struct rates {
	double dt;			/* s */
	double samples;			/* per s */
	int64_t lost;			/* in the interval */
	double *cpu_samples;		/* per CPU of cur, per s */
	int64_t *cpu_lost;
};

static void rates_get(struct rates *r, const struct snap *prev, const struct snap *cur)
{
	int same = prev->running && prev->session == cur->session &&
		   cur->elapsed > prev->elapsed;

	r->dt = same ? cur->elapsed - prev->elapsed : cur->elapsed;
	r->samples = r->dt > 0 ? ((double)cur->samples - (same ? (double)prev->samples : 0)) / r->dt
			       : 0;
	r->lost = (int64_t)(cur->lost - (same ? prev->lost : 0));
	r->cpu_samples = xcalloc(cur->nr + 1, sizeof(*r->cpu_samples));
	r->cpu_lost = xcalloc(cur->nr + 1, sizeof(*r->cpu_lost));
	for (int i = 0; i < cur->nr; i++) {
		uint64_t ps = 0, pl = 0;

		for (int j = 0; same && j < prev->nr; j++)
			if (prev->cpu[j] == cur->cpu[i]) {
				ps = prev->cpu_samples[j];
				pl = prev->cpu_lost[j];
				break;
			}
		r->cpu_samples[i] = r->dt > 0 ? ((double)cur->cpu_samples[i] - (double)ps) / r->dt
					      : 0;
		r->cpu_lost[i] = (int64_t)(cur->cpu_lost[i] - pl);
	}
}

static void rates_free(struct rates *r)
{
	free(r->cpu_samples);
	free(r->cpu_lost);
}

static void bytes_text(char *buf, size_t len, uint64_t bytes)
{
	char n[32];

	snprintf(n, sizeof(n), "%llu", (unsigned long long)bytes);
	size_text(buf, len, n);
}

static volatile sig_atomic_t watch_quit;

static void watch_signal(int sig)
{
	(void)sig;
	watch_quit = 1;
}

/* Local wall-clock time as 2026-01-31T12:34:56.789. */
static void wall_text(char *buf, size_t len)
{
	struct timespec ts;
	struct tm tm;
	char s[32];

	clock_gettime(CLOCK_REALTIME, &ts);
	localtime_r(&ts.tv_sec, &tm);
	strftime(s, sizeof(s), "%Y-%m-%dT%H:%M:%S", &tm);
	snprintf(buf, len, "%s.%03d", s, (int)(ts.tv_nsec / 1000000));
}

/* The terminal form: the whole screen again, as watch(1) draws it. */
static void watch_draw(const struct snap *cur, const struct rates *r, double interval)
{
	char when[64], a[32], b[32], c[32], d[32];

	wall_text(when, sizeof(when));
	printf("\033[H\033[2J");
	printf("strobe status --watch: every %g s (Ctrl-C ends)    %s\n\n", interval, when);
	if (!cur->running) {
		printf("no session running (strobed on database %s)\n", TEXT_SAFE(cur->db));
	} else {
		printf("session %lld running for %.1f s\n", cur->session, cur->elapsed);
		printf("samples: %.1f/s over the last %.1f s, %llu in all (%llu stored)\n",
		       r->samples, r->dt, (unsigned long long)cur->samples,
		       (unsigned long long)cur->stored);
		printf("lost: %lld over the last %.1f s, %llu in all\n", (long long)r->lost, r->dt,
		       (unsigned long long)cur->lost);
		printf("ingest: %llu records behind (%.2f s)",
		       (unsigned long long)cur->lag_records, cur->lag_ns / 1e9);
		if (cur->deferred_ns)
			printf(", waiting %.1f s for an idle CPU (strobed --ingest-defer)",
			       cur->deferred_ns / 1e9);
		putchar('\n');
		bytes_text(a, sizeof(a), cur->spool_mem);
		bytes_text(b, sizeof(b), cur->spool_mem_max);
		bytes_text(c, sizeof(c), cur->spool_disk);
		bytes_text(d, sizeof(d), cur->spool_disk_max);
		printf("spool: %s of %s in memory, %s of %s on disk\n", a, b, c, d);
	}
	if (cur->have_db_bytes) {
		bytes_text(a, sizeof(a), cur->db_bytes);
		bytes_text(b, sizeof(b), cur->db_wal_bytes);
		printf("database: %s on disk (of it %s WAL): %s\n", a, b, TEXT_SAFE(cur->db));
	}
	if (cur->note)
		printf("%s\n", TEXT_SAFE(cur->note));
	if (cur->running && cur->nr) {
		printf("\n%5s %12s %12s %12s\n", "CPU", "samples/s", "lost", "lost in all");
		for (int i = 0; i < cur->nr; i++)
			printf("%5ld %12.1f %12lld %12llu\n", cur->cpu[i], r->cpu_samples[i],
			       (long long)r->cpu_lost[i], (unsigned long long)cur->cpu_lost[i]);
		if (cur->nr_cpus > cur->nr)
			printf("(%d more CPUs: strobed lists the first %d)\n",
			       cur->nr_cpus - cur->nr, cur->nr);
	}
}

#define WATCH_HEADER "time session elapsed_s samples/s lost lost_total lag_records lag_s " \
	"spool_mem spool_disk db_bytes cpus cpu_samples/s cpu_lost ingest_wait_s"

/* The log form: one line per refresh, the columns of WATCH_HEADER; the
 * per-CPU columns are lists, one number per CPU of cpus.  New columns go
 * last: scripts read these by position too. */
static void watch_line(const struct snap *cur, const struct rates *r)
{
	char when[64];

	wall_text(when, sizeof(when));
	if (!cur->running) {
		printf("%s no session running (strobed on database %s)\n", when, TEXT_SAFE(cur->db));
		return;
	}
	printf("%s %lld %.3f %.1f %lld %llu %llu %.3f %llu %llu %llu ", when, cur->session,
	       cur->elapsed, r->samples, (long long)r->lost, (unsigned long long)cur->lost,
	       (unsigned long long)cur->lag_records, cur->lag_ns / 1e9,
	       (unsigned long long)cur->spool_mem, (unsigned long long)cur->spool_disk,
	       (unsigned long long)cur->db_bytes);
	for (int i = 0; i < cur->nr; i++)
		printf(i ? ",%ld" : "%ld", cur->cpu[i]);
	printf(cur->nr ? " " : "- ");
	for (int i = 0; i < cur->nr; i++)
		printf(i ? ",%.1f" : "%.1f", r->cpu_samples[i]);
	printf(cur->nr ? " " : "- ");
	for (int i = 0; i < cur->nr; i++)
		printf(i ? ",%lld" : "%lld", (long long)r->cpu_lost[i]);
	printf(cur->nr ? " %.3f\n" : "- %.3f\n", cur->deferred_ns / 1e9);
}

static int status_watch(const char *socket, double interval, long count)
{
	struct sigaction sa = { .sa_handler = watch_signal };
	struct snap prev = { 0 }, cur;
	struct proto_msg resp;
	struct timespec next;
	struct error e;
	int tty = isatty(1);
	long shown = 0;

	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);	/* no SA_RESTART: the sleep ends */
	sigaction(SIGTERM, &sa, NULL);
	clock_gettime(CLOCK_MONOTONIC, &next);
	for (int first = 1; !watch_quit; first = 0) {
		struct rates r;

		if (control_simple(socket, "status", &resp, &e) < 0) {
			if (watch_quit)
				break;
			fprintf(stderr, "strobe status: %s\n", e.msg);
			snap_free(&prev);
			return 1;
		}
		snap_take(&cur, &resp);
		proto_free(&resp);
		if (first) {
			if (tty) {
				printf("\033[H\033[2J");
				printf("strobe status --watch: every %g s (Ctrl-C ends): the first "
				       "figures in %g s\n", interval, interval);
			} else {
				printf("%s\n", WATCH_HEADER);
			}
		} else {
			rates_get(&r, &prev, &cur);
			if (tty)
				watch_draw(&cur, &r, interval);
			else
				watch_line(&cur, &r);
			rates_free(&r);
			shown++;
		}
		fflush(stdout);
		snap_free(&prev);
		prev = cur;
		if (count && shown >= count)
			break;
		next.tv_sec += (time_t)interval;
		next.tv_nsec += (long)((interval - (time_t)interval) * 1e9 + 0.5);
		while (next.tv_nsec >= 1000000000L) {
			next.tv_nsec -= 1000000000L;
			next.tv_sec++;
		}
		while (!watch_quit && clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &next, NULL))
			;
	}
	snap_free(&prev);
	return 0;
}

static const char status_usage[] =
	"usage: strobe status [--socket PATH] [--watch [-i|--interval SECONDS] [-n|--count N]]\n"
	"Show the running session: its id, how long it has run, its samples and\n"
	"lost records, how far ingest is behind, the spool, the database.\n"
	"\n"
	"  --socket PATH          strobed's socket\n"
	"  -w, --watch            show it again every interval until Ctrl-C: the\n"
	"                         samples/s and lost records over the last interval\n"
	"                         (from two snapshots) and in all, the ingest lag\n"
	"                         (records, seconds), the spool in memory and on\n"
	"                         disk, the database's size on disk (file and WAL),\n"
	"                         and per CPU its samples/s and lost records.  On a\n"
	"                         terminal the screen is redrawn in place; otherwise\n"
	"                         a header line, then one line per refresh: time\n"
	"                         (local, ISO 8601), session, elapsed_s, samples/s,\n"
	"                         lost (in the interval), lost_total, lag_records,\n"
	"                         lag_s, spool_mem, spool_disk, db_bytes (bytes),\n"
	"                         then per CPU, as lists N,N,...: cpus (their\n"
	"                         numbers), cpu_samples/s, cpu_lost (in the interval)\n"
	"  -i, --interval SECONDS with --watch: seconds between refreshes, 0.1 or\n"
	"                         more, decimals allowed (default 1)\n"
	"  -n, --count N          with --watch: stop after N refreshes\n"
	"  -h, --help             show this help\n"
	"With --watch, strobed going away ends it with exit 1; with no session\n"
	"running it says so at each refresh and goes on watching.\n";

int cmd_status(int argc, char **argv)
{
	static const struct option lo[] = {
		{ "socket", required_argument, NULL, 'S' },
		{ "watch", no_argument, NULL, 'w' },
		{ "interval", required_argument, NULL, 'i' },
		{ "count", required_argument, NULL, 'n' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct proto_msg resp;
	const char *socket = cmd_default_socket(), *running;
	const char *interval_arg = NULL, *count_arg = NULL;
	double interval = 1.0;
	long count = 0;
	char optbuf[64];
	struct error e;
	int watch = 0, c;

	optind = 0;	/* glibc: restart scanning for this subcommand */
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":wi:n:h", lo, NULL)) != -1) {
		switch (c) {
		case 'S':
			socket = optarg;
			break;
		case 'w':
			watch = 1;
			break;
		case 'i': {
			char *end;

			interval_arg = optarg;
			errno = 0;
			interval = strtod(optarg, &end);
			if (errno || end == optarg || *end || !(interval >= 0.1) ||
			    interval > 86400)
				return cmd_usage_error("status", "bad --interval '%s': give seconds "
						       "from 0.1 to 86400, e.g. 0.5", optarg);
			break;
		}
		case 'n': {
			uint64_t v;

			count_arg = optarg;
			if (parse_u64(optarg, &v) < 0 || !v || v > LONG_MAX)
				return cmd_usage_error("status", "bad --count '%s': give a "
						       "positive number of refreshes", optarg);
			count = (long)v;
			break;
		}
		case 'h':
			fputs(status_usage, stdout);
			return 0;
		case ':':
			return cmd_usage_error("status", "option %s needs a value: see "
					       "'strobe status --help'",
					       cmd_bad_option(argc, argv, optbuf, sizeof(optbuf)));
		default:
			return cmd_usage_error("status", "unknown option '%s': see "
					       "'strobe status --help'",
					       cmd_bad_option(argc, argv, optbuf, sizeof(optbuf)));
		}
	}
	if (optind < argc)
		return cmd_usage_error("status", "unexpected argument '%s': see "
				       "'strobe status --help'", argv[optind]);
	if (!watch && (interval_arg || count_arg))
		return cmd_usage_error("status", "%s applies to --watch only: add --watch",
				       interval_arg ? "--interval" : "--count");
	if (watch)
		return status_watch(socket, interval, count);
	if (control_simple(socket, "status", &resp, &e) < 0) {
		fprintf(stderr, "strobe status: %s\n", e.msg);
		return 1;
	}
	running = proto_get(&resp, "running");
	if (running && !strcmp(running, "1")) {
		const char *el = proto_get(&resp, "elapsed_ns");

		printf("session %s running for %.1f s: %s samples, %s samples/s, %s lost, "
		       "database %s\n",
		       proto_get(&resp, "session"), el ? atof(el) / 1e9 : 0.0,
		       proto_get(&resp, "samples"), proto_get(&resp, "rate"),
		       proto_get(&resp, "lost"), TEXT_SAFE(proto_get(&resp, "db")));
	} else {
		printf("no session running (strobed on database %s)\n",
		       proto_get(&resp, "db") ? TEXT_SAFE(proto_get(&resp, "db")) : "?");
	}
	/* lines added after the first, which scripts may parse */
	if (running && !strcmp(running, "1") && proto_get(&resp, "lag_records")) {
		const char *g = proto_get(&resp, "spool_refused");
		const char *d = proto_get(&resp, "ingest_deferred_ns");
		char mem[32], memx[32], disk[32], diskx[32];

		size_text(mem, sizeof(mem), proto_get(&resp, "spool_mem"));
		size_text(memx, sizeof(memx), proto_get(&resp, "spool_mem_max"));
		size_text(disk, sizeof(disk), proto_get(&resp, "spool_disk"));
		size_text(diskx, sizeof(diskx), proto_get(&resp, "spool_disk_max"));
		printf("ingest: %s records behind (%.2f s); spool: %s of %s in memory, %s of %s "
		       "on disk", proto_get(&resp, "lag_records"),
		       atof(proto_get(&resp, "lag_ns") ? proto_get(&resp, "lag_ns") : "0") / 1e9,
		       mem, memx, disk, diskx);
		if (d && strcmp(d, "0"))
			printf("; ingest waits for an idle CPU since %.1f s (strobed --ingest-defer; "
			       "the stop catches up)", atof(d) / 1e9);
		if (g && strcmp(g, "0"))
			printf("; full %s times (the records stayed in the rings, where the "
			       "kernel counts what no longer fits as lost)", g);
		putchar('\n');
	}
	if (proto_get(&resp, "held_over") && strcmp(proto_get(&resp, "held_over"), "0"))
		printf("binaries: %s executable mappings were drained past the limit of files "
		       "held for ingest (%s held now): a binary deleted before ingest reached it "
		       "may be unavailable\n", proto_get(&resp, "held_over"),
		       proto_get(&resp, "held_files") ? proto_get(&resp, "held_files") : "?");
	if (proto_get(&resp, "stopping"))
		printf("stopping: the stop waits until the session can be stored\n");
	if (proto_get(&resp, "blocked_ms"))
		printf("database locked for %.1f s by %s: records wait in the spool, and what "
		       "does not fit there is counted as lost\n",
		       atof(proto_get(&resp, "blocked_ms")) / 1e3,
		       proto_get(&resp, "lock_holder") ? TEXT_SAFE(proto_get(&resp, "lock_holder")) : "?");
	if (proto_get(&resp, "removing"))
		printf("removing sessions: their rows are being deleted\n");
	if (proto_get(&resp, "push_to")) {
		const char *last = proto_get(&resp, "push_last_session");
		const char *err = proto_get(&resp, "push_error");

		printf("push to %s: last pushed session %s, %s pending",
		       TEXT_SAFE(proto_get(&resp, "push_to")), last && strcmp(last, "0") ? last : "none",
		       proto_get(&resp, "push_pending") ? proto_get(&resp, "push_pending") : "?");
		if (proto_get(&resp, "push_held"))
			printf(", %s kept from retention until pushed", proto_get(&resp, "push_held"));
		if (err)
			printf("; failing: %s", TEXT_SAFE(err));
		putchar('\n');
	}
	proto_free(&resp);
	return 0;
}
