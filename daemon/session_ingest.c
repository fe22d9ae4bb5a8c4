/*
 * session_ingest.c - a session's ingest thread in strobed (session.h,
 * session_int.h): a pass over the spool into the database whenever the
 * drain thread spooled records, at the thread's own priority, or a wait
 * while no CPU is idle (--ingest-defer); the 'strobe mark's it stores; the
 * lock the main thread takes between two passes; and the copy of what a
 * status shows, published after each pass.
 */
#include "config.h"
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/eventfd.h>
#include <sys/syscall.h>
#include <unistd.h>
#include "cpufree.h"
#include "ingest.h"
#include "log.h"
#include "session_int.h"

/* Post an eventfd (glibc's eventfd_write); it only fails when full, and
 * then the news is there. */
static void efd_post(int fd)
{
	(void)eventfd_write(fd, 1);
}

/* Reset an eventfd (non-blocking: EAGAIN when nothing was posted). */
static void efd_clear(int fd)
{
	eventfd_t v;

	(void)eventfd_read(fd, &v);
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

int session_marks_store(struct session *s, struct error *e)
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
	if (session_marks_store(s, e) < 0 || backend_drain(s->b, 0, e) < 0)
		return -1;
	return commit(s, e);
}

void session_publish(struct session *s, int result, const struct error *e)
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
		session_publish(s, r, &e);
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
		session_publish(s, r, &pe);
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

int session_thread_start(struct session *s, struct error *e)
{
	s->quit = 0;
	errno = pthread_create(&s->thread, NULL, ingest_main, s);
	if (errno)
		return error_set(e, "cannot start the ingest thread: %s", strerror(errno));
	s->thread_on = 1;
	return 0;
}

void session_thread_stop(struct session *s)
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

