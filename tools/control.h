/*
 * control.h - talking to strobed from the CLI: the options that start a
 * session (shared by 'strobe start' and 'strobe record') and the requests.
 */
#ifndef STROBE_CONTROL_H
#define STROBE_CONTROL_H

#include <stdio.h>
#include "proto.h"

#define START_MAX_MARKERS 16	/* strobed's SESSION_MAX_MARKERS */

struct start_opts {
	const char *socket;
	const char *events;		/* -e list, as given */
	const char *sample_event;
	const char *freq, *period;
	const char *name;
	const char *buffer_pages;
	char *markers[START_MAX_MARKERS];	/* --marker, PATH made absolute */
	int nr_markers;
	const char *call_graph;		/* -g (fp), --call-graph MODE, checked */
	int keep_stacks;		/* --keep-stacks (dwarf only) */
	const char *attribution;	/* --attribution exact|sample, checked */
};

#define START_SHORT_OPTIONS "e:F:c:m:g"
#define START_LONG_OPTIONS \
	{ "socket", required_argument, NULL, 'S' }, \
	{ "event", required_argument, NULL, 'e' }, \
	{ "sample-event", required_argument, NULL, 'E' }, \
	{ "freq", required_argument, NULL, 'F' }, \
	{ "period", required_argument, NULL, 'c' }, \
	{ "name", required_argument, NULL, 'n' }, \
	{ "buffer-pages", required_argument, NULL, 'm' }, \
	{ "marker", required_argument, NULL, 'M' }, \
	{ "call-graph", required_argument, NULL, 'G' }, \
	{ "keep-stacks", no_argument, NULL, 'K' }, \
	{ "attribution", required_argument, NULL, 'X' }
#define START_USAGE "[--socket PATH] [-e EV[,EV...]] [--sample-event EV] " \
	"[-F HZ | -c PERIOD] [--name NAME] [-m|--buffer-pages PAGES] " \
	"[--marker PATH:PROVIDER:NAME]... [-g | --call-graph fp|dwarf[,BYTES]] " \
	"[--keep-stacks] [--attribution exact|sample]"
/* what the start options do, for --help */
#define START_HELP \
	"  -e, --event EV[,EV...]\n" \
	"                       count these events, read at every sample\n" \
	"  --sample-event EV    sample on EV (default cycles, cpu-clock without a PMU)\n" \
	"  -F, --freq HZ | -c, --period PERIOD\n" \
	"                       sample HZ times a second, or every PERIOD events\n" \
	"  --name NAME          name the session\n" \
	"  -m, --buffer-pages N per-CPU ring of N pages (a power of two)\n" \
	"  --marker PATH:PROVIDER:NAME  record the hits of a USDT probe\n" \
	"  -g                   record call stacks by frame pointers (--call-graph fp)\n" \
	"  --call-graph fp|dwarf[,BYTES]\n" \
	"                       record call stacks: fp, the kernel walks frame\n" \
	"                       pointers (kernel and user); dwarf, samples carry the\n" \
	"                       user registers and BYTES of user stack (default\n" \
	"                       8192, a multiple of 8), unwound by strobed with the\n" \
	"                       binaries' CFI (perf backend only)\n" \
	"  --keep-stacks        with dwarf, keep the raw stack copies after unwinding\n" \
	"                       (root only: they hold other users' stack bytes)\n" \
	"  --attribution exact|sample\n" \
	"                       how the -e counts are split among threads: sample\n" \
	"                       (default) gives a CPU's increases to its next sample;\n" \
	"                       exact also reads them at every context switch, so\n" \
	"                       each thread gets exactly its own (perf backend only;\n" \
	"                       costs a read per switch: doc/PERFORMANCE.md)\n" \
	"  --socket PATH        strobed's socket\n"

void start_opts_init(struct start_opts *o);
/* Handle option c; 1 if it was a start option, 0 if not, -1 if bad (printed). */
int start_opts_parse(struct start_opts *o, int c, const char *arg, const char *cmd);
int start_opts_check(const struct start_opts *o, const char *cmd);

int control_start(const struct start_opts *o, long long *id, struct error *e);
/* 'stop', showing on a terminal how many spooled records are left to
 * store while strobed finishes the session. */
int control_stop(const char *socket, struct proto_msg *resp, struct error *e);
int control_simple(const char *socket, const char *verb, struct proto_msg *resp,
		   struct error *e);
void control_print_stop(FILE *f, const struct proto_msg *resp);

#endif
