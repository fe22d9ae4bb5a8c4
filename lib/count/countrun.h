/*
 * countrun.h - one 'strobe count' run: the command forked and held before
 * its exec while its counters are opened, then the wait for its end (or
 * the counted process's, or a signal) with a reading every -I interval.
 */
#ifndef STROBE_COUNTRUN_H
#define STROBE_COUNTRUN_H

#include <signal.h>
#include <stdint.h>
#include <sys/resource.h>
#include <sys/types.h>
#include "counter.h"

/* A forked command, stopped before its exec until count_cmd_start. */
struct count_cmd {
	pid_t pid;
	const char *name;	/* argv[0], for messages */
	int go_fd;	/* closing it lets the child exec */
	int err_fd;	/* the child writes its exec errno here (close-on-exec) */
};

/* Fork argv: the child waits for count_cmd_start, then execvp's. */
int count_cmd_prepare(struct count_cmd *c, char **argv, struct error *e);
/* Let it exec; fails (with the reason) when the exec failed. */
int count_cmd_start(struct count_cmd *c, struct error *e);
/* Kill and reap a prepared command that is not going to run. */
void count_cmd_abort(struct count_cmd *c);

struct count_run_opts {
	struct counter_set *cs;
	struct count_cmd *cmd;		/* NULL: no command */
	pid_t watch_pid;		/* -p/-t without a command: end when it is gone; 0: none */
	int64_t interval_ns;		/* -I, 0: none */
	volatile sig_atomic_t *stop;	/* set by the caller's SIGINT handler */
	/* called at each interval's end with the cumulative readings
	 * (cs->nev * cs->nunits) and the seconds since the start */
	int (*on_interval)(void *ctx, double t, const struct count_value *cur, struct error *e);
	void *ctx;
};

struct count_run_result {
	int status;			/* the command's wait status */
	double elapsed;			/* seconds, counting's start to its end */
	double user, sys;		/* the command's CPU time */
	double end_t;			/* the time of the last interval's end */
	uint64_t start_ns;		/* CLOCK_MONOTONIC when counting started */
	struct count_value *total;	/* malloc'd, cs->nev * cs->nunits */
};

/*
 * Count until the command exits, the watched process is gone or *stop is
 * set: enables the counters (a command's enable themselves at its exec),
 * starts the command, calls on_interval every interval (and once more for
 * the last, partial one when counting ends), and reads the totals.
 */
int count_run(const struct count_run_opts *o, struct count_run_result *res, struct error *e);

#endif
