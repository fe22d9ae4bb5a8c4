/*
 * control.c - talking to strobed from the CLI (see control.h): the
 * options that start a session, shared by 'strobe start' and 'strobe
 * record', and the start, stop and other requests.
 */
#include "config.h"
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
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
