/*
 * session_params.c - a start request of strobed into struct session_params
 * (session.h): the sampling and counting events, their rate, the ring
 * size, --call-graph and --keep-stacks, --attribution, and the --marker
 * probes, each file opened with the requester's rights and checked.
 */
#include "config.h"
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <unistd.h>
#include "callgraph.h"
#include "eventpmu.h"
#include "events.h"
#include "markerparse.h"
#include "session.h"

static int max_sample_rate(void)
{
	char *s = file_read_all("/proc/sys/kernel/perf_event_max_sample_rate", NULL);
	int v = s ? atoi(s) : 0;

	free(s);
	return v;
}

int session_parse_request(struct session_params *p, const char *events,
			  const char *sampler, const char *freq, const char *period,
			  const char *pages, struct error *e)
{
	struct backend_config *cfg = &p->cfg;
	size_t n = 0;
	uint64_t v;

	memset(cfg, 0, sizeof(*cfg));
	if (event_parse(sampler && *sampler ? sampler : event_default_sampler(),
			&cfg->sampler, e) < 0)
		return -1;
	if (events && *events) {
		if (event_parse_list(events, cfg->events, STROBE_MAX_COUNTERS, &n, e) < 0)
			return -1;
	}
	cfg->nr_events = n;
	if (period && *period) {
		if (parse_u64(period, &v) < 0 || !v)
			return error_set(e, "bad sample period '%s': give a positive count of events", period);
		cfg->period = v;
	} else {
		int max = max_sample_rate();

		cfg->freq = 1000;
		if (freq && *freq) {
			if (parse_u64(freq, &v) < 0 || !v)
				return error_set(e, "bad sample frequency '%s': give a positive rate in Hz", freq);
			cfg->freq = v;
		}
		if (max > 0 && cfg->freq > (uint64_t)max)
			return error_set(e, "sample frequency %llu Hz is above the kernel's limit of "
					 "%d Hz (kernel.perf_event_max_sample_rate): lower -F",
					 (unsigned long long)cfg->freq, max);
	}
	if (pages && *pages) {
		if (parse_u64(pages, &v) < 0 || !v || (v & (v - 1)) || v > (1u << 20))
			return error_set(e, "bad buffer size '%s': give a power of two of pages", pages);
		cfg->buffer_pages = v;
	}
	/* refuse events that cannot join the group on every CPU (a non-core
	 * PMU's: uncore, power/RAPL), each saying how to record it instead,
	 * then unsupported events, before anything starts */
	if (event_pmu_session_check("", &cfg->sampler, 1, e) < 0)
		return -1;
	for (size_t i = 0; i < n; i++)
		if (event_pmu_session_check("", &cfg->events[i], 0, e) < 0)
			return -1;
	if (event_probe(&cfg->sampler, e) < 0)
		return -1;
	for (size_t i = 0; i < n; i++)
		if (event_probe(&cfg->events[i], e) < 0)
			return -1;
	return 0;
}

int session_parse_call_graph(struct session_params *p, const char *call_graph,
			     const char *keep_stacks, struct error *e)
{
	struct callgraph cg;

	if (callgraph_parse(call_graph, &cg, e) < 0)
		return error_prefix(e, "--call-graph");
	p->cfg.call_graph = cg.mode;
	p->cfg.stack_bytes = cg.stack_bytes;
	p->cfg.keep_stacks = 0;
	if (keep_stacks && *keep_stacks && strcmp(keep_stacks, "0")) {
		if (strcmp(keep_stacks, "1"))
			return error_set(e, "bad keep_stacks '%.32s': 0 or 1", keep_stacks);
		if (cg.mode != CALLGRAPH_DWARF)
			return error_set(e, "--keep-stacks needs --call-graph dwarf: only dwarf "
					 "samples carry a stack copy");
		p->cfg.keep_stacks = 1;
	}
	return 0;
}

int session_parse_attribution(struct session_params *p, const char *attribution,
			      enum backend_kind kind, struct error *e)
{
	p->cfg.exact = 0;
	if (!attribution || !*attribution || !strcmp(attribution, "sample"))
		return 0;
	if (strcmp(attribution, "exact"))
		return error_set(e, "bad --attribution '%.32s': exact or sample", attribution);
	if (kind == BACKEND_DRIVER)
		return error_set(e, "--attribution exact needs the perf backend: the driver "
				 "does not read its counters at context switches (start strobed "
				 "with --backend perf)");
	if (!p->cfg.nr_events)
		return error_set(e, "--attribution exact needs counting events (-e): it splits "
				 "their increases at context switches");
	p->cfg.exact = 1;
	return 0;
}

/*
 * May uid, not root, place probes in the file open as fd?  Not in a setuid
 * or setgid program, nor one with file capabilities: it runs with
 * privileges its callers lack, and each hit would record the registers and
 * stack of that privileged process.  And only in a file of uid's own: a
 * probe fires in every process that runs the file, whoever runs it, so a
 * probe in a shared library (libc) would hand the member the arguments of
 * every other user's calls.
 */
static int marker_file_allowed(int fd, const char *path, uid_t uid, struct error *e)
{
	struct stat st;

	if (fstat(fd, &st) < 0)
		return error_set(e, "cannot read %s: %s", path, strerror(errno));
	if (st.st_mode & (S_ISUID | S_ISGID))
		return error_set(e, "%s is set-user-ID or set-group-ID: only root may place "
				 "probes in it", path);
	if (fgetxattr(fd, "security.capability", NULL, 0) >= 0)
		return error_set(e, "%s has file capabilities: only root may place probes in it",
				 path);
	if (errno != ENODATA && errno != ENOTSUP)
		return error_set(e, "cannot read the capabilities of %s: %s", path,
				 strerror(errno));
	if (st.st_uid != uid)
		return error_set(e, "%s belongs to uid %u: only its owner and root may place "
				 "probes in it (they fire in every process that runs it)", path,
				 (unsigned)st.st_uid);
	return 0;
}

/*
 * The time --marker lookups of one uid took (the requester's child opens
 * the path, up to PEER_OPEN_TIMEOUT_MS, while the event loop waits): a
 * member whose paths hang (a FUSE or dead NFS mount of theirs) could hold
 * every other client 2 s per start, again and again.  Each uid but root
 * has MARKER_LOOKUP_BUDGET_MS a minute; past it, its markers are refused
 * until the minute is over.  Main thread only.
 */
#define MARKER_LOOKUP_BUDGET_MS	4000
#define MARKER_LOOKUP_SLOTS	16
static struct {
	uid_t uid;
	uint64_t minute, used_ns;
} marker_time[MARKER_LOOKUP_SLOTS];

static uint64_t *marker_time_of(uid_t uid, uint64_t now)
{
	uint64_t minute = now / (60 * 1000000000ULL);
	int i, slot = 0;

	for (i = 0; i < MARKER_LOOKUP_SLOTS; i++) {
		if (marker_time[i].uid == uid && marker_time[i].minute)
			break;
		if (marker_time[i].minute < marker_time[slot].minute)
			slot = i;
	}
	if (i == MARKER_LOOKUP_SLOTS) {
		i = slot;
		marker_time[i].uid = uid;
		marker_time[i].minute = 0;
	}
	if (marker_time[i].minute != minute) {
		marker_time[i].minute = minute;
		marker_time[i].used_ns = 0;
	}
	return &marker_time[i].used_ns;
}

/* Charge to *used (marker_time_of's; NULL: root, not counted) the time
 * since *now, and restart the count. */
static void marker_time_charge(uint64_t *used, uint64_t *now)
{
	if (!used)
		return;
	*used += clock_monotonic_ns() - *now;
	*now = clock_monotonic_ns();
}

int session_parse_markers(struct session_params *p, const char *const *specs, int n,
			  const struct peer *who, struct error *e)
{
	uint64_t now = clock_monotonic_ns(), *used = NULL;
	uint64_t deadline = now + PEER_OPEN_TIMEOUT_MS * 1000000ULL;
	size_t cap = 0, fcap = 0;

	if (n > 0 && who->uid != 0) {
		used = marker_time_of(who->uid, now);
		if (*used >= MARKER_LOOKUP_BUDGET_MS * 1000000ULL)
			return error_set(e, "--marker: the lookups of uid %u's paths took %.1f s in "
					 "this minute, the most a uid may (their file system is "
					 "slow or hung): try again in a minute, with paths on a "
					 "local file system", (unsigned)who->uid, *used / 1e9);
	}

	if (n > SESSION_MAX_MARKERS)
		return error_set(e, "too many markers: at most %d --marker probes",
				 SESSION_MAX_MARKERS);
	for (int i = 0; i < n; i++) {
		char path[PATH_MAX], prov[USDT_MAX_NAME], name[USDT_MAX_NAME];
		struct usdt_site *s;
		size_t ns;
		int fd;

		if (usdt_parse_spec(specs[i], path, sizeof(path), prov, name, e) < 0)
			return -1;
		if (path[0] != '/')
			return error_set(e, "marker '%s': the path must be absolute", specs[i]);
		for (int j = 0; j < i; j++)
			if (!strcmp(specs[i], specs[j]))
				return error_set(e, "marker '%s' is given twice: give each probe once",
						 specs[i]);
		fd = peer_open_file(who, path, deadline, e);
		marker_time_charge(used, &now);
		if (fd < 0)
			return error_prefix(e, "marker '%s'", specs[i]);
		p->marker_fds[p->nr_marker_fds++] = fd;
		if (who->uid != 0 && marker_file_allowed(fd, path, who->uid, e) < 0)
			return error_prefix(e, "marker '%s'", specs[i]);
		/* the notes are the requester's bytes: read in a child with
		 * their rights (markerparse.h) */
		if (marker_sites(who, fd, path, prov, name, deadline, &s, &ns,
				 p->marker_keys[p->nr_marker_fds - 1], e) < 0)
			return error_prefix(e, "marker '%s'", specs[i]);
		marker_time_charge(used, &now);
		if (p->nr_sites + ns > SESSION_MAX_SITES) {
			free(s);
			return error_set(e, "marker '%s': the probes have more than %d sites in all: "
					 "give fewer markers", specs[i], SESSION_MAX_SITES);
		}
		ARRAY_GROW(p->sites, cap, p->nr_sites + ns);
		ARRAY_GROW(p->site_fds, fcap, p->nr_sites + ns);
		memcpy(p->sites + p->nr_sites, s, ns * sizeof(*s));
		for (size_t j = 0; j < ns; j++)
			p->site_fds[p->nr_sites + j] = fd;
		p->nr_sites += ns;
		free(s);
	}
	p->cfg.sites = p->sites;
	p->cfg.site_fds = p->site_fds;
	p->cfg.nr_sites = p->nr_sites;
	return 0;
}

void session_params_free(struct session_params *p)
{
	for (int i = 0; i < p->nr_marker_fds; i++)
		close(p->marker_fds[i]);
	p->nr_marker_fds = 0;
	free(p->sites);
	free(p->site_fds);
	p->sites = NULL;
	p->site_fds = NULL;
	p->nr_sites = 0;
	p->cfg.sites = NULL;
	p->cfg.site_fds = NULL;
	p->cfg.nr_sites = 0;
}
