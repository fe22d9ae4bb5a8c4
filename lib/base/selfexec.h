/*
 * selfexec.h - starting a worker as a fresh image of the running program
 * rather than as a forked copy of it.
 *
 * A child forked from strobed holds a copy of everything strobed held at
 * the fork: the ClickHouse password, other users' names and paths in the
 * ingest tables, locks other threads held.  A worker that parses untrusted
 * bytes (symworker.h, uworker.h) is better started afresh: the forked
 * child executes the program's own file again, through a handle taken at
 * start-up (never a path, which could be replaced), with an empty
 * environment and only its socket open, and the program's main() hands
 * the command line to the worker's own entry point before doing anything
 * else.
 *
 * Both the handle and the entry points are the program's choice: a
 * program that never calls selfexec_init() (the tools, the unit tests)
 * forks its workers as before.
 */
#ifndef STROBE_SELFEXEC_H
#define STROBE_SELFEXEC_H

#include "util.h"

/* The first argument of a worker's command line: main() passes argv to
 * the worker's entry point when argv[1] is this. */
#define SELFEXEC_ARG	"--strobe-worker"

/* Open the running program's own file (/proc/self/exe) for later
 * selfexec_run(): 0, or -1 with e set (workers are then forked as
 * before).  Call once, early, from the main thread. */
int selfexec_init(struct error *e);

/* Whether selfexec_init() succeeded. */
int selfexec_enabled(void);

/*
 * In a child just forked: execute the program afresh as argv (argv[1]
 * SELFEXEC_ARG, NULL-terminated) with an empty environment, the socket
 * sock as descriptor 3 and every other descriptor closed.  Returns only
 * on failure (errno set); the caller then _exit()s.  Async-signal-safe
 * (no allocation): it may run in a child forked from a threaded process.
 */
int selfexec_run(int sock, char *const argv[]);

#endif
