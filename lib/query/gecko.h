/*
 * gecko.h - a stack_set's samples over time in the Firefox Profiler's
 * "Gecko profile" format (JSON, meta.version 24, as the profiler's own
 * perf-script importer produces; the profiler upgrades and processes it
 * on load; profiler.firefox.com, "Load a profile from file").
 *
 * One thread per tid seen (name: its comm; pid, tid), each with
 *   samples:    {schema: {stack, time, responsiveness}, data: [[stack,
 *               time_ms, 0], ...]}, time in ms since meta.startTime (the
 *               session start, ms since the epoch), each sample's own time
 *               from stacks_scan();
 *   stackTable: {schema: {prefix, frame}, data: [[prefix|null, frame]]},
 *               the call tree root first (prefix null at the outermost);
 *   frameTable: {schema: {location, relevantForJS, innerWindowID,
 *               implementation, optimizations, line, column, category,
 *               subcategory}}, location a stringTable index;
 *   stringTable: the frame strings "FUNCTION (in BINARY)", which the
 *               profiler splits into its funcTable and resource (library)
 *               table when processing (there is no funcTable in this
 *               format); FUNCTION as flame.h names it, BINARY the base
 *               name with '(' and ')' as '_'.
 * meta.categories: User (0) and Kernel (1); meta.presymbolicated: true.
 */
#ifndef STROBE_GECKO_H
#define STROBE_GECKO_H

#include <stdio.h>
#include "db.h"
#include "report.h"
#include "stacks.h"
#include "util.h"

/* The export in steps: gecko_add() takes each sample (a stacks_sample_fn,
 * samples in time order), gecko_finish() writes the JSON. */
struct gecko;
struct gecko *gecko_new(const struct stack_set *set);
int gecko_add(void *g, int64_t time_ns, uint32_t cpu, uint32_t tid, size_t entry,
	      struct error *e);
int gecko_finish(struct gecko *g, FILE *f, struct error *e);
void gecko_free(struct gecko *g);

/* All of it: stacks_scan() of set's session with o's filters into f. */
int gecko_write(struct db *db, const struct stack_set *set, const struct report_opts *o,
		FILE *f, struct error *e);

#endif
