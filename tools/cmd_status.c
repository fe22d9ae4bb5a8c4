/*
 * cmd_status.c - strobe status: the running session as strobed reports
 * it, once or (--watch) again every interval, with the rates over the
 * interval (lib/base/statussnap.c).
 */
#include "config.h"
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "cmd.h"
#include "control.h"
#include "proto.h"
#include "statussnap.h"

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
static void watch_draw(const struct status_snap *cur, const struct status_rates *r,
		       double interval)
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
static void watch_line(const struct status_snap *cur, const struct status_rates *r)
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

/*
 * strobe status --watch: a status every interval, with the rates over the
 * interval computed from two snapshots (the counts strobed's ingest has
 * stored, and strobed's clock, elapsed_ns, as of the same reply).
 */
static int status_watch(const char *socket, double interval, long count)
{
	struct sigaction sa = { .sa_handler = watch_signal };
	struct status_snap prev = { 0 }, cur;
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
		struct status_rates r;

		if (control_simple(socket, "status", &resp, &e) < 0) {
			if (watch_quit)
				break;
			fprintf(stderr, "strobe status: %s\n", e.msg);
			status_snap_free(&prev);
			return 1;
		}
		status_snap_take(&cur, &resp);
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
			status_rates_get(&r, &prev, &cur);
			if (tty)
				watch_draw(&cur, &r, interval);
			else
				watch_line(&cur, &r);
			status_rates_free(&r);
			shown++;
		}
		fflush(stdout);
		status_snap_free(&prev);
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
	status_snap_free(&prev);
	return 0;
}

/* The status once (no --watch): a first line, then the lines added
 * since, each when the reply has what it shows. */
static void status_print(const struct proto_msg *resp)
{
	const char *running = proto_get(resp, "running");

	if (running && !strcmp(running, "1")) {
		const char *el = proto_get(resp, "elapsed_ns");

		printf("session %s running for %.1f s: %s samples, %s samples/s, %s lost, "
		       "database %s\n",
		       proto_get(resp, "session"), el ? atof(el) / 1e9 : 0.0,
		       proto_get(resp, "samples"), proto_get(resp, "rate"),
		       proto_get(resp, "lost"), TEXT_SAFE(proto_get(resp, "db")));
	} else {
		printf("no session running (strobed on database %s)\n",
		       proto_get(resp, "db") ? TEXT_SAFE(proto_get(resp, "db")) : "?");
	}
	/* lines added after the first, which scripts may parse */
	if (running && !strcmp(running, "1") && proto_get(resp, "lag_records")) {
		const char *g = proto_get(resp, "spool_refused");
		const char *d = proto_get(resp, "ingest_deferred_ns");
		char mem[32], memx[32], disk[32], diskx[32];

		size_text(mem, sizeof(mem), proto_get(resp, "spool_mem"));
		size_text(memx, sizeof(memx), proto_get(resp, "spool_mem_max"));
		size_text(disk, sizeof(disk), proto_get(resp, "spool_disk"));
		size_text(diskx, sizeof(diskx), proto_get(resp, "spool_disk_max"));
		printf("ingest: %s records behind (%.2f s); spool: %s of %s in memory, %s of %s "
		       "on disk", proto_get(resp, "lag_records"),
		       atof(proto_get(resp, "lag_ns") ? proto_get(resp, "lag_ns") : "0") / 1e9,
		       mem, memx, disk, diskx);
		if (d && strcmp(d, "0"))
			printf("; ingest waits for an idle CPU since %.1f s (strobed --ingest-defer; "
			       "the stop catches up)", atof(d) / 1e9);
		if (g && strcmp(g, "0"))
			printf("; full %s times (the records stayed in the rings, where the "
			       "kernel counts what no longer fits as lost)", g);
		putchar('\n');
	}
	if (proto_get(resp, "held_over") && strcmp(proto_get(resp, "held_over"), "0"))
		printf("binaries: %s executable mappings were drained past the limit of files "
		       "held for ingest (%s held now): a binary deleted before ingest reached it "
		       "may be unavailable\n", proto_get(resp, "held_over"),
		       proto_get(resp, "held_files") ? proto_get(resp, "held_files") : "?");
	if (proto_get(resp, "stopping"))
		printf("stopping: the stop waits until the session can be stored\n");
	if (proto_get(resp, "blocked_ms"))
		printf("database locked for %.1f s by %s: records wait in the spool, and what "
		       "does not fit there is counted as lost\n",
		       atof(proto_get(resp, "blocked_ms")) / 1e3,
		       proto_get(resp, "lock_holder") ? TEXT_SAFE(proto_get(resp, "lock_holder")) : "?");
	if (proto_get(resp, "removing"))
		printf("removing sessions: their rows are being deleted\n");
	if (proto_get(resp, "push_to")) {
		const char *last = proto_get(resp, "push_last_session");
		const char *err = proto_get(resp, "push_error");

		printf("push to %s: last pushed session %s, %s pending",
		       TEXT_SAFE(proto_get(resp, "push_to")), last && strcmp(last, "0") ? last : "none",
		       proto_get(resp, "push_pending") ? proto_get(resp, "push_pending") : "?");
		if (proto_get(resp, "push_held"))
			printf(", %s kept from retention until pushed", proto_get(resp, "push_held"));
		if (err)
			printf("; failing: %s", TEXT_SAFE(err));
		putchar('\n');
	}
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
	const char *socket = cmd_default_socket();
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
	status_print(&resp);
	proto_free(&resp);
	return 0;
}
