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

/* The figures of session st, stored (e NULL) or stopped with error e. */
static void stop_log(const struct session_status *st, const struct error *e)
{
	if (e)
		daemon_log("session %lld stopped with an error: %s", (long long)st->id, e->msg);
	else
		daemon_log("session %lld stopped: %llu samples, %llu lost, %llu out of time order "
		       "(up to %llu ns late)", (long long)st->id,
		       (unsigned long long)st->samples, (unsigned long long)st->lost,
		       (unsigned long long)st->late, (unsigned long long)st->late_max_ns);
	if (st->ingest.binaries_over || st->ingest.comms_over || st->ingest.collisions)
		daemon_log("session %lld: %llu mappings past the limit of binaries, %llu names past "
		       "the limit of names, %llu build-ids already cached with other contents "
		       "(keyed by contents instead); %llu MB of binaries read", (long long)st->id,
		       (unsigned long long)st->ingest.binaries_over,
		       (unsigned long long)st->ingest.comms_over,
		       (unsigned long long)st->ingest.collisions,
		       (unsigned long long)(st->ingest.bytes_read >> 20));
	if (st->ingest.read_refused)
		daemon_log("session %lld: %llu binaries not read for the budget of %llu MiB of "
			   "binaries a session reads (%s)", (long long)st->id,
			   (unsigned long long)st->ingest.read_refused,
			   (unsigned long long)(INGEST_READ_MAX >> 20), st->ingest.read_refusals);
	if (st->ingest.share_refused)
		daemon_log("session %lld: %llu names, binaries, cgroups or stacks refused past a "
			   "user's share (a quarter of each table, root's unlimited): %s",
			   (long long)st->id, (unsigned long long)st->ingest.share_refused,
			   st->ingest.share_refusals);
	if (st->ingest.cgroups_over || st->ingest.cgroup_unknown || st->ingest.cgroup_moved ||
	    st->ingest.jit_roots_over)
		daemon_log("session %lld: %llu cgroups past the limit (not stored), %llu processes "
		       "whose cgroup could not be read, %llu processes that changed cgroup, %llu "
		       "JIT processes of other mount namespaces past the limit of held /tmp "
		       "handles", (long long)st->id, (unsigned long long)st->ingest.cgroups_over,
		       (unsigned long long)st->ingest.cgroup_unknown,
		       (unsigned long long)st->ingest.cgroup_moved,
		       (unsigned long long)st->ingest.jit_roots_over);
	if (st->held.over)
		daemon_log("session %lld: %llu executable mappings left without a held file past "
		       "the limits of files and records held from drain to ingest (their "
		       "binaries read when ingest reached them, if still there); %llu files "
		       "held at most", (long long)st->id, (unsigned long long)st->held.over,
		       (unsigned long long)st->held.files_peak);
	if (st->ingest.stacks || st->ingest.stacks_over || st->ingest.unwind_failures)
		daemon_log("session %lld: %llu distinct call stacks, %llu past the limit (their "
		       "%llu samples stored without a stack), %llu samples whose user stack "
		       "unwinding stopped early (unwind_errors says where)", (long long)st->id,
		       (unsigned long long)st->ingest.stacks,
		       (unsigned long long)st->ingest.stacks_over,
		       (unsigned long long)st->ingest.samples_no_stack,
		       (unsigned long long)st->ingest.unwind_failures);
	if (st->ingest.unwinder_crashes || st->ingest.unwinder_hangs)
		daemon_log("session %lld: the unwind worker crashed %llu times and hung %llu "
			   "(killed); %llu workers started (at most %d new): the samples in flight "
			   "were counted as 'unwinder failed'", (long long)st->id,
			   (unsigned long long)st->ingest.unwinder_crashes,
			   (unsigned long long)st->ingest.unwinder_hangs,
			   (unsigned long long)st->ingest.unwinder_started,
			   UWORKER_KINDS * (UWORKER_RESTARTS + 1));
	if (st->ingest.parse_failed)
		daemon_log("session %lld: the ingest worker did not parse %llu files (crash, hang "
			   "or an answer that did not make sense): those binaries were keyed by "
			   "their contents, those JIT files stored without symbols",
			   (long long)st->id, (unsigned long long)st->ingest.parse_failed);
	if (st->ingest.worker_failed[0] || st->ingest.worker_failed[1] || st->ingest.worker_failed[2])
		daemon_log("session %lld: the ingest worker failed (crash, hang, bad answer) %llu "
			   "times on unwinding, %llu on build-ids, %llu on JIT files; a kind is "
			   "not asked again after %d: %llu, %llu, %llu requests refused",
			   (long long)st->id, (unsigned long long)st->ingest.worker_failed[0],
			   (unsigned long long)st->ingest.worker_failed[1],
			   (unsigned long long)st->ingest.worker_failed[2], UWORKER_RESTARTS + 1,
			   (unsigned long long)st->ingest.worker_refused[0],
			   (unsigned long long)st->ingest.worker_refused[1],
			   (unsigned long long)st->ingest.worker_refused[2]);
	if (st->ingest.switch_reads)
		daemon_log("session %lld: --attribution exact: %llu counter reads at context "
		       "switches, %llu threads' last runs stored after their last sample, "
		       "%llu records after context switches the kernel counted but wrote no "
		       "read for (their increases unattributed, as after a loss)",
		       (long long)st->id, (unsigned long long)st->ingest.switch_reads,
		       (unsigned long long)st->ingest.exact_tails,
		       (unsigned long long)st->ingest.switch_missed);
	if (st->have_handler) {
		daemon_log("session %lld: driver overflow handler %llu ns per sample on average, "
		       "%llu ns at most, over %llu samples", (long long)st->id,
		       (unsigned long long)st->handler_avg_ns, (unsigned long long)st->handler_max_ns,
		       (unsigned long long)st->handler_samples);
		daemon_log("session %lld: driver STATS %llu samples written, %llu dropped",
		       (long long)st->id, (unsigned long long)(st->handler_samples - st->handler_dropped),
		       (unsigned long long)st->handler_dropped);
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
