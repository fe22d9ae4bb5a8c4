/*
 * session.c - a session's life in strobed (see session.h; its files:
 * session_int.h): the start (its row, the backend, the spool, ingest, the
 * snapshot of the kernel and the processes), the status, and the end
 * (stop, or abandon when the database stays locked).
 */
#include "config.h"
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <unistd.h>
#include "callgraph.h"
#include "ingest.h"
#include "ingestsink.h"
#include "log.h"
#include "procscan.h"
#include "session_int.h"

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

/* The session's row as it starts, with backend b open. */
static void fill_row(struct db_session *r, const struct session_params *p, struct backend *b)
{
	const struct tsc_conv *tc = backend_tsc(b);
	struct utsname u;

	memset(r, 0, sizeof(*r));
	snprintf(r->name, sizeof(r->name), "%s", p->name);
	snprintf(r->state, sizeof(r->state), "running");
	r->owner_uid = p->owner_uid;
	if (uname(&u) == 0) {
		snprintf(r->hostname, sizeof(r->hostname), "%s", u.nodename);
		snprintf(r->kernel_release, sizeof(r->kernel_release), "%s", u.release);
	}
	r->nr_cpus = backend_nr_cpus(b);
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
	snprintf(r->backend, sizeof(r->backend), "%s", backend_name(b));
	snprintf(r->attribution, sizeof(r->attribution), "%s", p->cfg.exact ? "exact" : "");
	r->tsc_mult = tc->mult;
	r->tsc_shift = tc->shift;
	r->tsc_ref = tc->ref_tsc;
	r->tsc_ref_ns = tc->ref_ns;
	snprintf(r->tsc_source, sizeof(r->tsc_source), "%s", tc->source);
}

/* The session's parts, once nothing runs (backend_disable done, the
 * ingest thread parked), or those a failed start made; with keep_spool,
 * the spool's files stay for the next strobed to count. */
static void session_free(struct session *s, int keep_spool)
{
	ingest_free(s->in);
	backend_close(s->b);
	if (keep_spool)
		spool_leave(s->spool);
	else
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
}

struct session *session_start(struct db *db, struct bincache *cache,
			      const struct session_params *p, struct error *e)
{
	struct session *s = xcalloc(1, sizeof(*s));
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
	fill_row(&s->row, p, s->b);
	s->nr_pub_cpus = MIN(backend_nr_cpus(s->b), SESSION_STATUS_MAX_CPUS);
	s->pub_cpu_lost = xcalloc(s->nr_pub_cpus, sizeof(*s->pub_cpu_lost));
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
	session_publish(s, 0, NULL);
	if (session_thread_start(s, e) < 0)
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
	session_free(s, 0);
	return NULL;
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
	session_thread_stop(s);
	if (ingest_begin(s->in, e) < 0 && db_busy(s->db)) {
		struct error ignore;

		if (session_thread_start(s, &ignore) < 0)
			daemon_log("%s: ingest goes on in the main thread", ignore.msg);
		return SESSION_BLOCKED;
	}
	quiesce(s);
	end = s->end_ns;
	if (session_marks_store(s, e) < 0 || backend_drain(s->b, 1, e) < 0 ||
	    backend_read_final(s->b, e) < 0 ||
	    ingest_finish(s->in, end, e) < 0)
		ret = -1;
	if (st) {
		session_publish(s, ret, NULL);
		session_get_status(s, st);
		st->elapsed_ns = end - s->row.start_ns;
		/* session_get_status zeroed the handler's figures */
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
	session_thread_stop(s);
	backend_disable(s->b);
	/* rolls back whatever batch is open; the spool's files stay: the
	 * session is interrupted, and the next strobed counts what it lost */
	session_free(s, 1);
}
