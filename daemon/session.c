/*
 * session.c - a session's life in strobed (see session.h).
 */
#include "config.h"
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <sys/xattr.h>
#include <unistd.h>
#include "callgraph.h"
#include "cpufree.h"
#include "events.h"
#include "hashkey.h"
#include "ingest.h"
#include "ingestsink.h"
#include "log.h"
#include "markerparse.h"
#include "procscan.h"
#include "session.h"

/*
 * Threads: the backend's drain thread fills the spool; the session's
 * ingest thread (ingest_main) empties it into the database at its own
 * priority; strobed's main thread serves clients.  lock guards the
 * database connection, the ingest state and the backend's merge: the
 * ingest thread holds it for one pass at a time (DRAIN_BUDGET_NS), the
 * main thread through session_lock.  What 'strobe status' shows is a copy
 * the ingest thread publishes after each pass (pub, under pub_lock, held
 * only to copy), so that a status never waits for a pass.
 */
struct session {
	struct db *db;
	struct db_session row;
	struct backend *b;
	struct ingest *in;
	struct spool *spool;
	int notify_fd;		/* eventfd: the drain thread spooled records */
	uint64_t end_ns;	/* session_quiesce: when sampling ended; 0: on */
	uint64_t refused_seen;	/* session_spool_accepting */
	uint64_t last_status_ns, last_status_samples;

	pthread_t thread;
	int thread_on;
	pid_t thread_tid;	/* for its priority: set by the thread */
	int nice, hurry_nice;	/* its nice, and once a stop waits for it */
	int idle;		/* SCHED_IDLE until a stop waits for it */
	/* --ingest-defer (session_params): on, the lag limit (0: none), and
	 * the spool bytes from which ingest runs on busy CPUs anyway */
	int defer;
	uint64_t defer_max_ns, defer_bytes;
	int busy;		/* the ingest thread's: no CPU was idle at last look */
	uint64_t deferred_since;	/* atomic: ingest waits since (ns), 0: not */
	pthread_mutex_t lock;
	int waiting;		/* main threads waiting for lock (atomic) */
	int wake_fd;		/* eventfd: quit or hurry */
	int done_fd;		/* eventfd: the ingest thread has news */
	int hurry;		/* atomic: a stop waits for ingest */
	/* under lock */
	int quit, failed;
	/* under pub_lock */
	pthread_mutex_t pub_lock;
	int result;		/* the last pass: 0, SESSION_BLOCKED or -1 */
	struct error result_err;
	struct ingest_stats pub_ingest;
	struct spool_stats pub_spool;
	uint64_t pub_late, pub_late_max_ns;
	uint64_t pub_ns;	/* when it was copied */
	/* and the lost records per CPU, of the first nr_pub_cpus CPUs of the
	 * backend's */
	int nr_pub_cpus;
	uint64_t *pub_cpu_lost;
	struct pending_mark {	/* 'strobe mark': stored by the next pass */
		uint64_t time_ns;
		int64_t pid;
		char text[SESSION_MAX_MARK_TEXT + 1];
	} marks[SESSION_MAX_PENDING_MARKS];
	size_t nr_marks;
};

static void publish(struct session *s, int result, const struct error *e);
static void efd_post(int fd);
static int thread_start(struct session *s, struct error *e);

/* The session's spool, in DIR/<id> when p->spool_dir is set. */
static struct spool *spool_make(const struct session_params *p, int64_t id, struct error *e)
{
	struct spool *sp;
	struct stat st;
	char *dir;

	if (!p->spool_dir)
		return spool_open(NULL, &p->spool, e);
	/* the parent is root's own: never follow a link planted there */
	if (mkdir(p->spool_dir, 0700) < 0 && errno != EEXIST)
		return error_set(e, "cannot create the spool directory %s: %s", p->spool_dir,
				 strerror(errno)), NULL;
	if (lstat(p->spool_dir, &st) < 0 || !S_ISDIR(st.st_mode) || st.st_uid != geteuid() ||
	    (st.st_mode & 022))
		return error_set(e, "%s is not a directory of root's only: remove it",
				 p->spool_dir), NULL;
	dir = xasprintf("%s/%lld", p->spool_dir, (long long)id);
	/* a spool left under this id (a session removed, its id reused) is
	 * nobody's: strobed counted it at start-up */
	if (spool_remove(dir, e) < 0) {
		free(dir);
		return NULL;
	}
	sp = spool_open(dir, &p->spool, e);
	free(dir);
	return sp;
}

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
	/* refuse unsupported events before anything starts */
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
		if (used)
			*used += clock_monotonic_ns() - now, now = clock_monotonic_ns();
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
		if (used)
			*used += clock_monotonic_ns() - now, now = clock_monotonic_ns();
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

/* One session_probes row per probe site. */
static int store_probes(struct db *db, int64_t id, const struct session_params *p,
			struct error *e)
{
	for (int i = 0; i < p->nr_sites; i++) {
		const struct usdt_site *s = &p->sites[i];
		char *spec = xasprintf("%s:%s:%s", s->path, s->provider, s->name);
		struct db_probe row = {
			.spec = spec, .offset = s->offset, .nargs = s->nargs, .arg_spec = s->arg_spec,
			.semaphore = s->semaphore ? (int64_t)s->semaphore_offset : -1,
		};
		int r;

		/* the file the notes were read from and the uprobes are on, not
		 * s->path again: its key as the reader named it */
		for (int j = 0; j < p->nr_marker_fds; j++)
			if (p->marker_fds[j] == p->site_fds[i] && p->marker_keys[j][0])
				row.binary_key = p->marker_keys[j];
		r = db_probe_insert(db, id, &row, e);
		free(spec);
		if (r < 0)
			return -1;
	}
	return 0;
}

static void fill_row(struct db_session *r, const struct session_params *p, int nr_cpus)
{
	struct utsname u;

	memset(r, 0, sizeof(*r));
	snprintf(r->name, sizeof(r->name), "%s", p->name);
	snprintf(r->state, sizeof(r->state), "running");
	r->owner_uid = p->owner_uid;
	if (uname(&u) == 0) {
		snprintf(r->hostname, sizeof(r->hostname), "%s", u.nodename);
		snprintf(r->kernel_release, sizeof(r->kernel_release), "%s", u.release);
	}
	r->nr_cpus = nr_cpus;
	snprintf(r->sample_event, sizeof(r->sample_event), "%s", p->cfg.sampler.name);
	r->sample_freq = p->cfg.freq;
	r->sample_period = p->cfg.period;
	r->nr_events = p->cfg.nr_events;
	for (int i = 0; i < p->cfg.nr_events; i++) {
		const struct event_desc *ev = &p->cfg.events[i];

		snprintf(r->events[i].name, sizeof(r->events[i].name), "%s", ev->name);
		r->events[i].type = ev->attr.type;
		r->events[i].config = ev->attr.config;
		r->events[i].config1 = ev->attr.config1;
		r->events[i].config2 = ev->attr.config2;
	}
}

struct session *session_start(struct db *db, struct bincache *cache,
			      const struct session_params *p, struct error *e)
{
	struct session *s = xcalloc(1, sizeof(*s));
	const struct tsc_conv *tc;
	uint64_t mono, real;
	struct sink sink;

	s->db = db;
	pthread_mutex_init(&s->lock, NULL);
	pthread_mutex_init(&s->pub_lock, NULL);
	s->nice = p->ingest_nice;
	s->hurry_nice = p->base_nice;
	s->idle = p->ingest_idle;
	s->defer = p->ingest_defer;
	s->defer_max_ns = p->ingest_defer_max_ns;
	s->defer_bytes = (p->spool.mem_max + (p->spool_dir ? p->spool.disk_max : 0)) / 2;
	s->notify_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	s->wake_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	s->done_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (s->notify_fd < 0 || s->wake_fd < 0 || s->done_fd < 0) {
		error_set(e, "eventfd: %s", strerror(errno));
		goto fail;
	}
	s->b = backend_open(&p->cfg, e);
	if (!s->b)
		goto fail;
	fill_row(&s->row, p, backend_nr_cpus(s->b));
	s->nr_pub_cpus = MIN(backend_nr_cpus(s->b), SESSION_STATUS_MAX_CPUS);
	s->pub_cpu_lost = xcalloc(s->nr_pub_cpus, sizeof(*s->pub_cpu_lost));
	snprintf(s->row.backend, sizeof(s->row.backend), "%s", backend_name(s->b));
	snprintf(s->row.attribution, sizeof(s->row.attribution), "%s",
		 p->cfg.exact ? "exact" : "");
	tc = backend_tsc(s->b);
	s->row.tsc_mult = tc->mult;
	s->row.tsc_shift = tc->shift;
	s->row.tsc_ref = tc->ref_tsc;
	s->row.tsc_ref_ns = tc->ref_ns;
	snprintf(s->row.tsc_source, sizeof(s->row.tsc_source), "%s", tc->source);
	mono = clock_monotonic_ns();
	real = clock_realtime_ns();
	s->row.start_ns = mono;
	s->row.wall_offset_ns = (int64_t)(real - mono);
	if (db_session_insert(db, &s->row, e) < 0)
		goto fail;
	if (store_probes(db, s->row.id, p, e) < 0)
		goto fail_row;
	s->in = ingest_new(db, cache, &s->row, e);
	if (!s->in)
		goto fail_row;
	if (ingest_kernel(s->in, e) < 0)
		goto fail_row;
	{
		struct callgraph cg = { p->cfg.call_graph, p->cfg.stack_bytes };
		char spelled[32];

		callgraph_format(&cg, spelled, sizeof(spelled));
		if (ingest_call_graph(s->in, spelled, p->cfg.keep_stacks, e) < 0)
			goto fail_row;
	}
	s->spool = spool_make(p, s->row.id, e);
	if (!s->spool)
		goto fail_row;
	s->row.start_ns = clock_monotonic_ns();
	/* the backend delivers to ingest through a sink: capture never calls it */
	ingestsink_init(&sink, s->in);
	if (backend_enable(s->b, e) < 0 ||
	    backend_start(s->b, s->spool, s->notify_fd, &sink, e) < 0)
		goto fail_row;
	/* after enabling: cgroups made from now on come as PERF_RECORD_CGROUP */
	if (ingest_cgroups_start(s->in, backend_has_cgroups(s->b), NULL, e) < 0)
		goto fail_row;
	if (procscan_all(s->in, s->row.start_ns, e) < 0 || ingest_commit(s->in, e) < 0)
		goto fail_row;
	s->last_status_ns = s->row.start_ns;
	publish(s, 0, NULL);
	if (thread_start(s, e) < 0)
		goto fail_row;
	return s;
fail_row:
	{
		struct error ignore;

		backend_disable(s->b);
		ingest_free(s->in);
		s->in = NULL;
		snprintf(s->row.state, sizeof(s->row.state), "aborted");
		db_session_update(db, &s->row, &ignore);
	}
fail:
	ingest_free(s->in);
	backend_close(s->b);
	spool_close(s->spool);
	if (s->notify_fd >= 0)
		close(s->notify_fd);
	if (s->wake_fd >= 0)
		close(s->wake_fd);
	if (s->done_fd >= 0)
		close(s->done_fd);
	pthread_mutex_destroy(&s->lock);
	pthread_mutex_destroy(&s->pub_lock);
	free(s->pub_cpu_lost);
	free(s);
	return NULL;
}

/* The session's parts, once nothing runs (backend_disable done, the
 * ingest thread parked); with
 * keep_spool, the spool's files stay for the next strobed to count. */
static void session_free(struct session *s, int keep_spool)
{
	ingest_free(s->in);
	backend_close(s->b);
	if (keep_spool)
		spool_leave(s->spool);
	else
		spool_close(s->spool);
	close(s->notify_fd);
	close(s->wake_fd);
	close(s->done_fd);
	pthread_mutex_destroy(&s->lock);
	pthread_mutex_destroy(&s->pub_lock);
	free(s->pub_cpu_lost);
	free(s);
}

int session_mark(struct session *s, const char *text, uint64_t time_ns, int64_t pid,
		 struct error *e)
{
	uint64_t now = clock_monotonic_ns();
	struct pending_mark *pm;
	size_t len = strlen(text);
	int full;

	if (strspn(text, " ") == len)
		return error_set(e, "empty marker text: give the text to mark");
	if (len > SESSION_MAX_MARK_TEXT)
		return error_set(e, "marker text of %zu bytes is too long: at most %d", len,
				 SESSION_MAX_MARK_TEXT);
	for (const char *c = text; *c; c++)
		if ((unsigned char)*c < 0x20 || *c == 0x7f)
			return error_set(e, "marker text contains a control character: give "
					 "printable text on one line");
	pthread_mutex_lock(&s->pub_lock);
	full = s->nr_marks == SESSION_MAX_PENDING_MARKS;
	if (!full) {
		pm = &s->marks[s->nr_marks++];
		pm->time_ns = time_ns >= s->row.start_ns && time_ns <= now ? time_ns : now;
		pm->pid = pid;
		memcpy(pm->text, text, len + 1);
	}
	pthread_mutex_unlock(&s->pub_lock);
	if (full)
		return error_set(e, "%d markers already wait for the database: try again when "
				 "'strobe status' shows ingest caught up", SESSION_MAX_PENDING_MARKS);
	efd_post(s->wake_fd);
	return 0;
}

/* Store the markers 'strobe mark' queued, with s->lock held and a batch
 * open. */
static int marks_store(struct session *s, struct error *e)
{
	struct pending_mark marks[SESSION_MAX_PENDING_MARKS];
	size_t n;

	pthread_mutex_lock(&s->pub_lock);
	n = s->nr_marks;
	memcpy(marks, s->marks, n * sizeof(marks[0]));
	s->nr_marks = 0;
	pthread_mutex_unlock(&s->pub_lock);
	for (size_t i = 0; i < n; i++) {
		struct db_marker m = { .cpu = -1, .pid = marks[i].pid, .tid = marks[i].pid,
				       .kind = "mark", .name = marks[i].text,
				       .time_ns = marks[i].time_ns };

		if (ingest_marker(s->in, &m, e) < 0)
			return -1;
	}
	return 0;
}

/* Ingest stored what was taken from the spool: a crash no longer loses it. */
static int commit(struct session *s, struct error *e)
{
	if (ingest_commit(s->in, e) < 0)
		return -1;
	spool_committed(s->spool);
	return 0;
}

/* One pass of ingest over the spool, with s->lock held. */
static int ingest_pass(struct session *s, struct error *e)
{
	/* the write lock first: without it nothing leaves the spool */
	if (ingest_begin(s->in, e) < 0)
		return db_busy(s->db) ? SESSION_BLOCKED : -1;
	if (marks_store(s, e) < 0 || backend_drain(s->b, 0, e) < 0)
		return -1;
	return commit(s, e);
}

/* Copy what a status shows, with s->lock held (by the ingest thread, or
 * by the main thread once the ingest thread is parked). */
static void publish(struct session *s, int result, const struct error *e)
{
	struct ingest_stats is;
	struct spool_stats sp;
	uint64_t late, late_max;

	ingest_get_stats(s->in, &is);
	spool_get_stats(s->spool, &sp);
	backend_merge_stats(s->b, &late, &late_max);
	pthread_mutex_lock(&s->pub_lock);
	for (int i = 0; i < s->nr_pub_cpus; i++)
		s->pub_cpu_lost[i] = ingest_cpu_lost(s->in, backend_cpu(s->b, i));
	s->pub_ingest = is;
	s->pub_spool = sp;
	s->pub_late = late;
	s->pub_late_max_ns = late_max;
	s->pub_ns = clock_monotonic_ns();
	if (result != s->result || result < 0) {
		s->result = result;
		if (e)
			s->result_err = *e;
	}
	pthread_mutex_unlock(&s->pub_lock);
}

/* Post an eventfd; it only fails when full, and then the news is there. */
static void efd_post(int fd)
{
	uint64_t one = 1;
	ssize_t n = write(fd, &one, sizeof(one));

	(void)n;
}

/* Reset an eventfd; EAGAIN: nothing was posted. */
static void efd_clear(int fd)
{
	uint64_t v;
	ssize_t n = read(fd, &v, sizeof(v));

	(void)n;
}

/* How often the ingest thread looks whether any CPU was idle, and how
 * much idle time (in CPUs) counts as "some CPU was idle". */
#define DEFER_LOOK_NS	(100 * 1000000ULL)
#define DEFER_FREE_MIN	0.25
/* The spool's memory while ingest waits: the rest goes to its disk
 * (spool_mem_cap), the cheaper place for records written once and read
 * after the workload. */
#define DEFER_MEM	(8ULL << 20)

/*
 * Whether the ingest thread waits now instead of a pass (--ingest-defer):
 * while no CPU was idle over the last DEFER_LOOK_NS (its own CPU time
 * counted as idle: it would give it back), unless a stop waits for it, the
 * spool holds s->defer_bytes, or the oldest record waits longer than
 * s->defer_max_ns.  On a saturated machine even a nice-19 thread takes its
 * share from the workload, and where each sample costs the CPU tens of
 * microseconds that share is charged again in sampling interrupts: perf
 * record defers its decoding to perf report in the same way.  The drain
 * thread never waits: the spool takes the records meanwhile.
 */
static int defer_now(struct session *s, struct cpufree *cf, int *cf_ok)
{
	uint64_t now = clock_monotonic_ns();
	struct spool_stats sp;
	double free;
	int r;

	if (!s->defer || !*cf_ok || __atomic_load_n(&s->hurry, __ATOMIC_ACQUIRE))
		goto run;
	spool_get_stats(s->spool, &sp);	/* the consumer's: this thread's */
	if (sp.refused || sp.disk_errors) {
		/* out of room (a full disk, say): the records are better in
		 * the database, and its errors are the session's to know */
		s->defer = 0;
		daemon_log("ingest thread: the spool %s: ingest no longer waits for idle "
			   "CPUs in this session", sp.disk_errors ? "could not write to its disk" :
			   "was full");
		goto run;
	}
	if (sp.mem_bytes + sp.disk_bytes >= s->defer_bytes)
		goto run;
	if (s->defer_max_ns && sp.oldest_ns && now > sp.oldest_ns &&
	    now - sp.oldest_ns >= s->defer_max_ns)
		goto run;
	r = cpufree_read(cf, DEFER_LOOK_NS, &free);
	if (r < 0) {
		*cf_ok = 0;	/* /proc/stat unreadable: ingest as without */
		daemon_log("ingest thread: cannot read /proc/stat: ingest no longer waits "
			   "for idle CPUs");
		goto run;
	}
	if (r == 0)
		s->busy = free < DEFER_FREE_MIN;
	if (!s->busy)
		goto run;
	if (!__atomic_load_n(&s->deferred_since, __ATOMIC_RELAXED)) {
		__atomic_store_n(&s->deferred_since, now, __ATOMIC_RELAXED);
		spool_mem_cap(s->spool, DEFER_MEM);
	}
	return 1;
run:
	if (__atomic_load_n(&s->deferred_since, __ATOMIC_RELAXED)) {
		__atomic_store_n(&s->deferred_since, 0, __ATOMIC_RELAXED);
		spool_mem_cap(s->spool, 0);
	}
	return 0;
}

/* The ingest thread: a pass whenever the drain thread spooled records
 * (notify_fd), or every 100 ms while the database is locked elsewhere or
 * ingest waits for idle CPUs (defer_now).  It yields the lock to a main
 * thread that waits for it (waiting), and posts done_fd when the outcome
 * changes, and after each pass once a stop waits for it (hurry). */
static void *ingest_main(void *arg)
{
	struct session *s = arg;
	struct pollfd pfd[2] = { { .fd = s->notify_fd, .events = POLLIN },
				 { .fd = s->wake_fd, .events = POLLIN } };
	struct error ce = { 0 };
	struct cpufree cf = { .fd = -1 };
	int last = 0, deferred = 0;
	int cf_ok = s->defer && cpufree_open(&cf, &ce) == 0;

	if (s->defer && !cf_ok)
		daemon_log("ingest thread: %s: ingest does not wait for idle CPUs", ce.msg);

	__atomic_store_n(&s->thread_tid, (pid_t)syscall(SYS_gettid), __ATOMIC_RELEASE);
	/* per thread on Linux: only this one yields to the workload (unless
	 * a stop already hurries it) */
	if (!__atomic_load_n(&s->hurry, __ATOMIC_ACQUIRE)) {
		if (s->idle) {
			struct sched_param sp = { 0 };

			if (pthread_setschedparam(pthread_self(), SCHED_IDLE, &sp))
				daemon_log("ingest thread: cannot take SCHED_IDLE; it runs at "
					   "nice %d", s->nice);
		}
		if (s->nice != getpriority(PRIO_PROCESS, 0))
			setpriority(PRIO_PROCESS, s->thread_tid, s->nice);
	}
	for (;;) {
		struct error e = { 0 };
		int r;

		if (poll(pfd, 2, last == SESSION_BLOCKED || deferred ? 100 : -1) < 0 &&
		    errno != EINTR)
			poll(NULL, 0, 100);
		/* reset first: what the drain thread posts from now on is news
		 * for the next pass */
		efd_clear(s->notify_fd);
		efd_clear(s->wake_fd);
		/* a main thread waiting in session_lock goes first */
		while (__atomic_load_n(&s->waiting, __ATOMIC_ACQUIRE))
			poll(NULL, 0, 1);
		pthread_mutex_lock(&s->lock);
		if (s->quit) {
			pthread_mutex_unlock(&s->lock);
			cpufree_close(&cf);	/* also once a read failed (cf_ok 0) */
			return NULL;
		}
		if (s->failed) {
			pthread_mutex_unlock(&s->lock);
			continue;	/* the main thread stops the session */
		}
		deferred = defer_now(s, &cf, &cf_ok);
		if (deferred) {
			pthread_mutex_unlock(&s->lock);
			continue;
		}
		r = ingest_pass(s, &e);
		if (r < 0)
			s->failed = 1;
		publish(s, r, &e);
		if (r != last || r < 0 || __atomic_load_n(&s->hurry, __ATOMIC_ACQUIRE))
			efd_post(s->done_fd);
		last = r;
		pthread_mutex_unlock(&s->lock);
	}
}

void session_lock(struct session *s)
{
	__atomic_add_fetch(&s->waiting, 1, __ATOMIC_ACQ_REL);
	pthread_mutex_lock(&s->lock);
	__atomic_sub_fetch(&s->waiting, 1, __ATOMIC_ACQ_REL);
}

int session_trylock(struct session *s)
{
	return pthread_mutex_trylock(&s->lock) == 0 ? 0 : -1;
}

void session_unlock(struct session *s)
{
	pthread_mutex_unlock(&s->lock);
}

int session_poll(struct session *s, struct error *e)
{
	int r;

	efd_clear(s->done_fd);
	if (!s->thread_on && !s->end_ns) {
		/* no thread (it could not be started again): a pass here */
		struct error pe = { 0 };

		pthread_mutex_lock(&s->lock);
		r = ingest_pass(s, &pe);
		publish(s, r, &pe);
		pthread_mutex_unlock(&s->lock);
	}
	pthread_mutex_lock(&s->pub_lock);
	r = s->result;
	if (r < 0)
		*e = s->result_err;
	pthread_mutex_unlock(&s->pub_lock);
	return r;
}

void session_hurry(struct session *s)
{
	pid_t tid = __atomic_load_n(&s->thread_tid, __ATOMIC_ACQUIRE);

	if (__atomic_exchange_n(&s->hurry, 1, __ATOMIC_ACQ_REL))
		return;
	if (tid && s->idle) {
		struct sched_param sp = { 0 };

		pthread_setschedparam(s->thread, SCHED_OTHER, &sp);
	}
	if (tid && s->hurry_nice != s->nice)
		setpriority(PRIO_PROCESS, tid, s->hurry_nice);
	efd_post(s->wake_fd);
}

static int thread_start(struct session *s, struct error *e)
{
	s->quit = 0;
	errno = pthread_create(&s->thread, NULL, ingest_main, s);
	if (errno)
		return error_set(e, "cannot start the ingest thread: %s", strerror(errno));
	s->thread_on = 1;
	return 0;
}

/* Park the ingest thread: with s->lock not held. */
static void thread_stop(struct session *s)
{
	if (!s->thread_on)
		return;
	session_lock(s);	/* waiting: the thread yields between passes */
	s->quit = 1;
	session_unlock(s);
	efd_post(s->wake_fd);
	pthread_join(s->thread, NULL);
	s->thread_on = 0;
}

uint32_t session_owner_uid(const struct session *s)
{
	return (uint32_t)s->row.owner_uid;
}

int64_t session_status_id(const struct session *s)
{
	return s->row.id;
}

int session_behind(struct session *s)
{
	struct spool_stats st;

	spool_get_counts(s->spool, &st);
	return st.records_in > st.records_out;
}

size_t session_fds(struct session *s, const int **fds)
{
	*fds = &s->done_fd;
	return 1;
}

void session_get_status(struct session *s, struct session_status *st)
{
	struct ingest_stats is;
	struct spool_stats live;
	uint64_t now = clock_monotonic_ns(), pub_ns;

	pthread_mutex_lock(&s->pub_lock);
	is = s->pub_ingest;
	pub_ns = s->pub_ns;
	st->spool = s->pub_spool;
	st->late = s->pub_late;
	st->late_max_ns = s->pub_late_max_ns;
	st->nr_cpu_counts = s->nr_pub_cpus;
	for (int i = 0; i < s->nr_pub_cpus; i++)
		st->cpu_lost[i] = s->pub_cpu_lost[i];
	pthread_mutex_unlock(&s->pub_lock);
	st->nr_cpus = backend_nr_cpus(s->b);
	st->taken = 0;
	for (int i = 0; i < st->nr_cpus; i++) {
		uint64_t n = backend_cpu_samples(s->b, i);

		if (i < st->nr_cpu_counts) {
			st->cpu[i] = backend_cpu(s->b, i);
			st->cpu_samples[i] = n;
		}
		st->taken += n;
	}
	/* the counters and bytes as they are now, the oldest chunk's time as
	 * of the last pass: when the spool was empty then, what waits came
	 * after it, and its age is at most the time since */
	spool_get_counts(s->spool, &live);
	if (!st->spool.oldest_ns && live.records_in > st->spool.records_in)
		st->spool.oldest_ns = pub_ns;
	live.mem_peak = st->spool.mem_peak;
	live.disk_peak = st->spool.disk_peak;
	live.oldest_ns = st->spool.oldest_ns;
	st->spool = live;
	backend_held_stats(s->b, &st->held);
	st->lag_records = st->spool.records_in - st->spool.records_out;
	st->lag_ns = st->lag_records && st->spool.oldest_ns && now > st->spool.oldest_ns ?
		     now - st->spool.oldest_ns : 0;
	st->deferred_since_ns = __atomic_load_n(&s->deferred_since, __ATOMIC_RELAXED);
	st->id = s->row.id;
	st->samples = is.samples;
	st->lost = is.lost;
	st->throttled = is.throttled;
	st->ingest = is;
	st->elapsed_ns = now - s->row.start_ns;
	st->have_handler = 0;
	st->handler_samples = st->handler_dropped = st->handler_avg_ns = st->handler_max_ns = 0;
	st->rate = now > s->last_status_ns ?
		   (double)(is.samples - s->last_status_samples) * 1e9 / (now - s->last_status_ns) : 0;
	s->last_status_ns = now;
	s->last_status_samples = is.samples;
}

/* With s->lock held. */
static void quiesce(struct session *s)
{
	if (s->end_ns)
		return;
	backend_disable(s->b);
	s->end_ns = clock_monotonic_ns();
}

void session_quiesce(struct session *s)
{
	session_lock(s);
	quiesce(s);
	session_unlock(s);
}

int session_spool_accepting(struct session *s)
{
	struct spool_stats st;
	int same;

	spool_get_counts(s->spool, &st);
	same = st.refused == s->refused_seen;
	s->refused_seen = st.refused;
	return same;
}

void session_fail(struct session *s)
{
	session_lock(s);
	snprintf(s->row.state, sizeof(s->row.state), "aborted");
	session_unlock(s);
}

int session_stop(struct session *s, struct session_status *st, struct error *e)
{
	uint64_t end;
	int ret = 0;

	/* Hold the write lock from before the events stop until the session
	 * is stored: if another process holds it now, the session goes on
	 * (its records, and the kernel's counts of what did not fit in the
	 * rings, keep coming) and the caller asks again later. */
	session_hurry(s);
	thread_stop(s);
	if (ingest_begin(s->in, e) < 0 && db_busy(s->db)) {
		struct error ignore;

		if (thread_start(s, &ignore) < 0)
			daemon_log("%s: ingest goes on in the main thread", ignore.msg);
		return SESSION_BLOCKED;
	}
	quiesce(s);
	end = s->end_ns;
	if (marks_store(s, e) < 0 || backend_drain(s->b, 1, e) < 0 ||
	    backend_read_final(s->b, e) < 0 ||
	    ingest_finish(s->in, end, e) < 0)
		ret = -1;
	if (st) {
		publish(s, ret, NULL);
		session_get_status(s, st);
		st->elapsed_ns = end - s->row.start_ns;
		st->handler_samples = st->handler_dropped = st->handler_avg_ns = st->handler_max_ns = 0;
		st->have_handler = ret == 0 &&
			backend_handler_stats(s->b, &st->handler_samples, &st->handler_dropped,
					      &st->handler_avg_ns,
					      &st->handler_max_ns) == 0;
	}
	if (ret < 0) {
		struct error ue;

		snprintf(s->row.state, sizeof(s->row.state), "aborted");
		s->row.end_ns = end;
		s->row.duration_ns = end - s->row.start_ns;
		if (db_session_update(s->db, &s->row, &ue) < 0)
			daemon_log("session %lld: its end (aborted) could not be stored either: "
				   "%s; it reads as running until strobed starts again and marks "
				   "it interrupted", (long long)s->row.id, ue.msg);
	}
	session_free(s, 0);
	return ret;
}

void session_abandon(struct session *s)
{
	thread_stop(s);
	backend_disable(s->b);
	/* rolls back whatever batch is open; the spool's files stay: the
	 * session is interrupted, and the next strobed counts what it lost */
	session_free(s, 1);
}
