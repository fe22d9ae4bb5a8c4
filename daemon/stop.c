/*
 * stop.c - stopping strobed's running session, and exiting: the stop
 * state machine.  A stop (a client's 'stop', a session that failed, or an
 * exit) is stored at once when it can; otherwise it is pending
 * (d->stop_pending) and stop_retry, from each tick and wake-up, moves it
 * on: ingest catches up with the spool, sampling ends QUIESCE_DELAY_NS
 * after the stop once the spool refuses nothing, and the session is
 * stored once the spool is empty and no other process holds the
 * database's lock.  The client that asked waits on d->stop_fd for the
 * reply.  Exiting stores the session first, for up to QUIT_WAIT_MS while
 * the database stays locked, then leaves it to the next strobed.
 */
#include "config.h"
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include "ingest.h"
#include "log.h"
#include "pusher.h"
#include "strobed.h"
#include "uworker.h"

/* exiting while the database stays locked: how long to try to store the
 * running session before leaving it to the next strobed */
#define QUIT_WAIT_MS	10000
#define QUIESCE_DELAY_NS (50 * 1000 * 1000ULL)

/* A line of session st's figures: "session ID: " and fmt's. */
static void stop_note(const struct session_status *st, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static void stop_note(const struct session_status *st, const char *fmt, ...)
{
	char msg[2048];		/* as long as a line of the log */
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	daemon_log("session %lld: %s", (long long)st->id, msg);
}

/* The figures of session st, stored (e NULL) or stopped with error e. */
static void stop_log(const struct session_status *st, const struct error *e)
{
	const struct ingest_stats *in = &st->ingest;

	if (e)
		daemon_log("session %lld stopped with an error: %s", (long long)st->id, e->msg);
	else
		daemon_log("session %lld stopped: %" PRIu64 " samples, %" PRIu64 " lost, %" PRIu64
			   " out of time order (up to %" PRIu64 " ns late)", (long long)st->id,
			   st->samples, st->lost, st->late, st->late_max_ns);
	if (in->binaries_over || in->comms_over || in->collisions)
		stop_note(st, "%" PRIu64 " mappings past the limit of binaries, %" PRIu64 " names "
			  "past the limit of names, %" PRIu64 " build-ids already cached with other "
			  "contents (keyed by contents instead); %" PRIu64 " MB of binaries read",
			  in->binaries_over, in->comms_over, in->collisions, in->bytes_read >> 20);
	if (in->read_refused)
		stop_note(st, "%" PRIu64 " binaries not read for the budget of %llu MiB of "
			  "binaries a session reads (%s)", in->read_refused,
			  (unsigned long long)(INGEST_READ_MAX >> 20), in->read_refusals);
	if (in->share_refused)
		stop_note(st, "%" PRIu64 " names, binaries, cgroups or stacks refused past a "
			  "user's share (a quarter of each table, root's unlimited): %s",
			  in->share_refused, in->share_refusals);
	if (in->cgroups_over || in->cgroup_unknown || in->cgroup_moved || in->jit_roots_over)
		stop_note(st, "%" PRIu64 " cgroups past the limit (not stored), %" PRIu64 " processes "
			  "whose cgroup could not be read, %" PRIu64 " processes that changed "
			  "cgroup, %" PRIu64 " JIT processes of other mount namespaces past the limit "
			  "of held /tmp handles", in->cgroups_over, in->cgroup_unknown,
			  in->cgroup_moved, in->jit_roots_over);
	if (st->held.over)
		stop_note(st, "%" PRIu64 " executable mappings left without a held file past the "
			  "limits of files and records held from drain to ingest (their binaries "
			  "read when ingest reached them, if still there); %" PRIu64 " files held "
			  "at most", st->held.over, st->held.files_peak);
	if (in->stacks || in->stacks_over || in->unwind_failures)
		stop_note(st, "%" PRIu64 " distinct call stacks, %" PRIu64 " past the limit (their "
			  "%" PRIu64 " samples stored without a stack), %" PRIu64 " samples whose "
			  "user stack unwinding stopped early (unwind_errors says where)",
			  in->stacks, in->stacks_over, in->samples_no_stack, in->unwind_failures);
	if (in->unwinder_crashes || in->unwinder_hangs)
		stop_note(st, "the unwind worker crashed %" PRIu64 " times and hung %" PRIu64
			  " (killed); %" PRIu64 " workers started (at most %d new): the samples in "
			  "flight were counted as 'unwinder failed'", in->unwinder_crashes,
			  in->unwinder_hangs, in->unwinder_started,
			  UWORKER_KINDS * (UWORKER_RESTARTS + 1));
	if (in->parse_failed)
		stop_note(st, "the ingest worker did not parse %" PRIu64 " files (crash, hang or an "
			  "answer that did not make sense): those binaries were keyed by their "
			  "contents, those JIT files stored without symbols", in->parse_failed);
	if (in->worker_failed[0] || in->worker_failed[1] || in->worker_failed[2])
		stop_note(st, "the ingest worker failed (crash, hang, bad answer) %" PRIu64 " times "
			  "on unwinding, %" PRIu64 " on build-ids, %" PRIu64 " on JIT files; a kind "
			  "is not asked again after %d: %" PRIu64 ", %" PRIu64 ", %" PRIu64
			  " requests refused", in->worker_failed[0], in->worker_failed[1],
			  in->worker_failed[2], UWORKER_RESTARTS + 1, in->worker_refused[0],
			  in->worker_refused[1], in->worker_refused[2]);
	if (in->switch_reads)
		stop_note(st, "--attribution exact: %" PRIu64 " counter reads at context switches, "
			  "%" PRIu64 " threads' last runs stored after their last sample, %" PRIu64
			  " records after context switches the kernel counted but wrote no read "
			  "for (their increases unattributed, as after a loss)", in->switch_reads,
			  in->exact_tails, in->switch_missed);
	if (st->have_handler) {
		stop_note(st, "driver overflow handler %" PRIu64 " ns per sample on average, %" PRIu64
			  " ns at most, over %" PRIu64 " samples", st->handler_avg_ns,
			  st->handler_max_ns, st->handler_samples);
		stop_note(st, "driver STATS %" PRIu64 " samples written, %" PRIu64 " dropped",
			  st->handler_samples - st->handler_dropped, st->handler_dropped);
	}
}

/* The reply to the 'stop' that stored session st-> */
static void stop_reply(struct proto_msg *m, const struct session_status *st)
{
	proto_init(m, "ok");
	proto_addf(m, "session", "%lld", (long long)st->id);
	proto_addf(m, "samples", "%llu", (unsigned long long)st->samples);
	proto_addf(m, "lost", "%llu", (unsigned long long)st->lost);
	proto_addf(m, "throttled", "%llu", (unsigned long long)st->throttled);
	proto_addf(m, "unscheduled_ns", "%llu", (unsigned long long)st->ingest.unscheduled_ns);
	proto_addf(m, "late", "%llu", (unsigned long long)st->late);
	proto_addf(m, "late_max_ns", "%llu", (unsigned long long)st->late_max_ns);
	proto_addf(m, "uncertain", "%llu", (unsigned long long)st->ingest.uncertain);
	proto_addf(m, "duration_ns", "%llu", (unsigned long long)st->elapsed_ns);
}

/*
 * Stop the running session: 0 when it is stored (m, when given, is the
 * reply), SESSION_BLOCKED when it cannot be yet (ingest is behind the
 * spool, or another process holds the database's lock) and the session
 * goes on: a stop is then pending, and stop_retry moves it on.
 */
int stop_session(struct daemon *d, struct proto_msg *m)
{
	struct session_status st;
	struct error e;
	int ret;

	/* ingest catches up first (stop_retry), the events off after a tick */
	if (!d->stop_pending && session_behind(d->session)) {
		d->stop_pending = 1;
		d->stop_drained = 0;
		d->quiesce_ns = clock_monotonic_ns() + QUIESCE_DELAY_NS;
		session_spool_accepting(d->session);
		return SESSION_BLOCKED;
	}
	ret = session_stop(d->session, &st, &e);
	if (ret == SESSION_BLOCKED) {
		d->stop_pending = 1;
		d->stop_drained = 0;
		lockdiag_blocked(d);
		return SESSION_BLOCKED;
	}
	if (ret == 0 && d->stop_err.msg[0]) {
		/* ingest failed while the stop waited (a full disk, say): what
		 * it had not stored is not in the session, which is aborted
		 * (session_fail), and the stop says why, not "ok" */
		e = d->stop_err;
		ret = -1;
	}
	d->stop_err.msg[0] = 0;
	lockdiag_unblocked(d);
	d->session = NULL;
	pusher_kick(d->pusher);
	d->watching = 0;
	d->stop_pending = 0;
	d->stop_drained = 0;
	d->quiesce_ns = 0;
	stop_log(&st, ret < 0 ? &e : NULL);
	/* what waited for the end of the session (retention, the cache):
	 * the next tick */
	d->next_plan_ns = 0;
	if (!m)
		return 0;
	if (ret < 0) {
		proto_init(m, "error");
		proto_add(m, "msg", d->ended[0] ? d->ended : e.msg);
		d->ended[0] = 0;	/* told */
		return 0;
	}
	stop_reply(m, &st);
	return 0;
}

/* Exit: store the running session first; while the database stays locked
 * by another process, keep trying (from the timer) for QUIT_WAIT_MS. */
void stop_quit(struct daemon *d)
{
	if (!d->session || stop_session(d, NULL) == 0) {
		d->quit = 1;
		return;
	}
	if (!d->quit_deadline) {
		d->quit_deadline = clock_monotonic_ns() + QUIT_WAIT_MS * 1000000ULL;
		daemon_log("exiting: session %lld waits for the database (locked by %s) for up to "
		       "%d s", (long long)session_status_id(d->session), d->holder,
		       QUIT_WAIT_MS / 1000);
	}
}

/*
 * A stop (or an exit) waiting for the database or for ingest to catch up
 * with the spool: try again.  Sampling ends QUIESCE_DELAY_NS after the
 * stop was asked for, once the spool refused nothing for that long: the
 * drain thread empties the rings meanwhile, whatever ingest does, and a
 * ring that overflowed is reported (PERF_RECORD_LOST) only in the next
 * record the kernel writes to it with room, which a stopped event never
 * writes (while the spool is full, the events stay on).  Then ingest catches up with
 * the spool, the events off: not sampling strobed's own catching up, as
 * it did with them on (at 50 kHz a minute of extra samples, of strobed
 * itself, each one costing it more time).  The stop is stored once the
 * spool is empty and the database's lock free.
 */
void stop_retry(struct daemon *d)
{
	struct proto_msg m;

	if (d->quiesce_ns && clock_monotonic_ns() >= d->quiesce_ns) {
		if (session_spool_accepting(d->session)) {
			session_quiesce(d->session);
			d->quiesce_ns = 0;
		} else {
			/* full: the rings may hold a loss not reported yet */
			d->quiesce_ns = clock_monotonic_ns() + QUIESCE_DELAY_NS;
		}
	}

	if (!d->stop_drained) {
		struct error e;
		int r;

		session_hurry(d->session);
		r = session_poll(d->session, &e);

		if (r == 0) {
			lockdiag_unblocked(d);
			d->stop_drained = !session_behind(d->session);
			return;
		}
		if (r < 0) {
			daemon_log("stopping the session: %s", e.msg);
			d->stop_err = e;	/* the stop's answer (stop_session) */
			session_fail(d->session);
			d->stop_drained = 1;	/* stop it as it is */
		} else {
			lockdiag_blocked(d);
		}
	}
	if (d->stop_drained && stop_session(d, d->stop_fd >= 0 ? &m : NULL) == 0) {
		if (d->stop_fd >= 0) {
			reply(d->stop_fd, &m);
			close(d->stop_fd);
			d->stop_fd = -1;
		}
		if (d->quit_deadline)
			d->quit = 1;
		return;
	}
	if (!d->quit_deadline || clock_monotonic_ns() < d->quit_deadline)
		return;
	daemon_log("exiting with session %lld not stored to its end: the database stayed locked "
	       "by %s; its committed batches stay, and the next strobed marks it interrupted",
	       (long long)session_status_id(d->session), d->holder);
	if (d->stop_fd >= 0) {
		reply_error(d->stop_fd, "strobed is exiting and could not store session %lld: the "
			    "database stayed locked by %s; the next strobed marks it interrupted",
			    (long long)session_status_id(d->session), d->holder);
		close(d->stop_fd);
		d->stop_fd = -1;
	}
	strobed_watch(d, 0);
	session_abandon(d->session);
	d->session = NULL;
	d->stop_pending = 0;
	d->quit = 1;
}

/* The session failed with e (session_poll: a full disk, say): stop it as
 * it is, and tell why to the next 'stop' and to a stop that comes while
 * it catches up. */
void stop_failed(struct daemon *d, const struct error *e)
{
	daemon_log("stopping the session: %s", e->msg);
	/* the next 'stop' tells the client why its session ended early */
	snprintf(d->ended, sizeof(d->ended), "session %lld was stopped early by "
		 "strobed: %s", (long long)session_status_id(d->session), e->msg);
	d->stop_err = *e;	/* also a stop that comes while it catches up */
	session_fail(d->session);
	strobed_watch(d, 0);
	stop_session(d, NULL);
}
