/*
 * eventlist.c - the events this machine supports, grouped by kind: what
 * 'strobe list' shows (event_list, see events.h).  An event is listed
 * when this process can open it on itself (event_probe_self), so the
 * listing works without root.
 */
#include "config.h"
#include <dirent.h>
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "events.h"	/* <linux/perf_event.h> before libpfm4's copy of it */
#include "events_int.h"
#include <perfmon/pfmlib_perf_event.h>

/* One line of the listing: the name, padded, then [kind]. */
static void __attribute__((format(printf, 3, 4)))
list_line(FILE *f, const char *kind, const char *fmt, ...)
{
	char name[600];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(name, sizeof(name), fmt, ap);
	va_end(ap);
	fprintf(f, "  %-48s [%s]\n", name, kind);
}

static void list_generic(FILE *f, uint32_t type, const char *title,
			 const char *kind)
{
	struct perf_event_attr attr = { .type = type };
	size_t i, n = 0;

	fprintf(f, "%s:\n", title);
	for (i = 0; i < event_nr_generics; i++) {
		const struct event_generic *g = &event_generics[i];

		attr.config = g->config;
		if (g->type != type || !event_probe_self(&attr))
			continue;
		if (g->alias)
			list_line(f, kind, "%s OR %s", g->name, g->alias);
		else
			list_line(f, kind, "%s", g->name);
		n++;
	}
	if (!n)
		fputs("  (none on this machine)\n", f);
	fputc('\n', f);
}

static void list_cache(FILE *f)
{
	struct perf_event_attr attr = { .type = PERF_TYPE_HW_CACHE };
	size_t i, j, n = 0;

	fputs("Hardware cache events:\n", f);
	for (i = 0; i < event_nr_cache_names; i++) {
		for (j = 0; j < event_nr_cache_ops; j++) {
			attr.config = event_cache_config(i, &event_cache_ops[j]);
			if (!event_probe_self(&attr))
				continue;
			list_line(f, "Hardware cache event", "%s-%s", event_cache_names[i],
				  event_cache_ops[j].suffix);
			n++;
		}
	}
	if (!n)
		fputs("  (none on this machine)\n", f);
	fputc('\n', f);
}

static int not_dot(const struct dirent *d)
{
	return d->d_name[0] != '.';
}

static void free_dirents(struct dirent **ents, int n)
{
	while (n > 0)
		free(ents[--n]);
	free(ents);
}

/* Tracepoints of one subsystem dir/sys (those with a readable id). */
static size_t list_subsystem(FILE *f, const char *dir, const char *sys,
			     int verbose)
{
	struct dirent **evs;
	char *path = xasprintf("%s/%s", dir, sys);
	int nev = scandir(path, &evs, not_dot, alphasort), i;
	size_t n = 0;

	free(path);
	for (i = 0; i < nev; i++) {
		path = xasprintf("%s/%s/%s/id", dir, sys, evs[i]->d_name);
		if (!access(path, R_OK)) {
			n++;
			if (verbose)
				list_line(f, "Tracepoint event", "%s:%s", sys,
					  evs[i]->d_name);
		}
		free(path);
	}
	if (nev >= 0)
		free_dirents(evs, nev);
	return n;
}

static void list_tracepoints(FILE *f, int verbose)
{
	struct dirent **subs = NULL;
	const char *dir = NULL, *errdir = NULL;
	size_t i, n, nsys = 0, ntp = 0;
	int nsub = -1, err = 0, j;

	fputs("Tracepoints:\n", f);
	for (i = 0; i < event_nr_tracefs_dirs && nsub < 0; i++) {
		dir = event_tracefs_dirs[i];
		nsub = scandir(dir, &subs, not_dot, alphasort);
		if (nsub < 0 && errno != ENOENT && !errdir) {
			errdir = dir;
			err = errno;
		}
	}
	if (nsub < 0) {
		if (!errdir)
			fputs("  tracefs is not mounted (mount -t tracefs nodev "
			      "/sys/kernel/tracing)\n\n", f);
		else
			fprintf(f, "  cannot read %s: %s%s\n\n", errdir, strerror(err),
				err == EACCES ? " (run as root)" : "");
		return;
	}
	for (j = 0; j < nsub; j++) {
		n = list_subsystem(f, dir, subs[j]->d_name, verbose);
		ntp += n;
		nsys += n > 0;
	}
	free_dirents(subs, nsub);
	if (!verbose)
		fprintf(f, "  %zu tracepoints in %zu subsystems (strobe list -v lists them all)\n",
			ntp, nsys);
	fputc('\n', f);
}

/* sysfs event files that describe another event rather than being one. */
static int pmu_event_is_meta(const char *name)
{
	const char *dot = strrchr(name, '.');

	return dot && (!strcmp(dot, ".scale") || !strcmp(dot, ".unit") ||
		       !strcmp(dot, ".per-pkg") || !strcmp(dot, ".snapshot"));
}

static void list_pmus(FILE *f)
{
	struct dirent **pmus, **evs;
	char *path;
	int npmu, nev, i, j;
	size_t n = 0;

	fputs("PMU events (sysfs):\n", f);
	npmu = scandir(EVENT_PMU_DIR, &pmus, not_dot, alphasort);
	if (npmu < 0) {
		fprintf(f, "  cannot read " EVENT_PMU_DIR ": %s\n\n", strerror(errno));
		return;
	}
	for (i = 0; i < npmu; i++) {
		path = xasprintf(EVENT_PMU_DIR "/%s/events", pmus[i]->d_name);
		nev = scandir(path, &evs, not_dot, alphasort);
		free(path);
		for (j = 0; j < nev; j++) {
			if (pmu_event_is_meta(evs[j]->d_name))
				continue;
			list_line(f, "Kernel PMU event", "%s/%s/", pmus[i]->d_name,
				  evs[j]->d_name);
			n++;
		}
		if (nev >= 0)
			free_dirents(evs, nev);
	}
	free_dirents(pmus, npmu);
	if (!n)
		fputs("  (none on this machine)\n", f);
	fputc('\n', f);
}

static void list_pfm(FILE *f, int verbose)
{
	pfm_pmu_t pmu;
	int ret = event_pfm_ready(), idx, n = 0;

	fputs("PMU events (libpfm4):\n", f);
	if (ret != PFM_SUCCESS) {
		fprintf(f, "  libpfm4 cannot initialise: %s\n", pfm_strerror(ret));
		return;
	}
	pfm_for_all_pmus(pmu) {
		pfm_pmu_info_t pinfo = { .size = sizeof(pinfo) };

		if (pfm_get_pmu_info(pmu, &pinfo) != PFM_SUCCESS || !pinfo.is_present)
			continue;
		n++;
		if (!verbose) {
			fprintf(f, "  %s (%s): %d event%s\n", pinfo.name, pinfo.desc,
				pinfo.nevents, pinfo.nevents == 1 ? "" : "s");
			continue;
		}
		for (idx = pinfo.first_event; idx != -1; idx = pfm_get_event_next(idx)) {
			pfm_event_info_t einfo = { .size = sizeof(einfo) };

			if (pfm_get_event_info(idx, PFM_OS_NONE, &einfo) != PFM_SUCCESS)
				continue;
			list_line(f, "libpfm4 event", "%s::%s", pinfo.name, einfo.name);
		}
	}
	if (!n)
		fputs("  no PMU detected by libpfm4\n", f);
	else if (!verbose)
		fputs("  (strobe list -v lists them all)\n", f);
}

int event_list(FILE *f, int verbose, struct error *e)
{
	list_generic(f, PERF_TYPE_HARDWARE, "Hardware events", "Hardware event");
	list_generic(f, PERF_TYPE_SOFTWARE, "Software events", "Software event");
	list_cache(f);
	list_tracepoints(f, verbose);
	list_pmus(f);
	list_pfm(f, verbose);
	if (fflush(f) || ferror(f))
		return error_set(e, "cannot write the list: %s", strerror(errno));
	return 0;
}
