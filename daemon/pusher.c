/*
 * pusher.c - strobed --push: the thread that pushes stopped sessions to
 * ClickHouse while strobed runs (pusher.h, doc/FLEET.md).
 */
#include "config.h"
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sqlite3.h>
#include "pusher.h"
#include "push.h"
#include "db.h"
#include "log.h"
#include "util.h"

#define BACKOFF_FIRST_S	1
#define BACKOFF_MAX_S	60
#define STOP_WAIT_S	20	/* at exit, for the last push */

struct pusher {
	pthread_t thread;
	pthread_mutex_t lock;
	pthread_cond_t cond;
	int quit, kicked;
	char *db_path, *url_text, *host;
	struct chclient_url url;
	struct chclient_cred cred;
	unsigned interval_s;
	int64_t since_wall_ns;
	int64_t down_since_ns;
	struct db *db;
	int asked;			/* server_max known */
	int64_t server_max;
	/* the oldest session seen running and not pushed whole since: the
	 * stopped sessions looked at start there, whatever stopped after it */
	int64_t floor;
	int64_t next_id;		/* the id after the newest session when the
					 * last attempt began */
	struct pusher_state st;		/* under lock */
};

/* Step st to its end: the first column of each row into *ids (malloc'ed;
 * ids NULL: only counted); their number.  Finalizes st. */
static size_t ids_of(sqlite3_stmt *st, int64_t **ids)
{
	size_t n = 0, cap = 0;

	if (ids)
		*ids = NULL;
	while (sqlite3_step(st) == SQLITE_ROW) {
		if (ids) {
			ARRAY_GROW(*ids, cap, n + 1);
			(*ids)[n] = sqlite3_column_int64(st, 0);
		}
		n++;
	}
	sqlite3_finalize(st);
	return n;
}

/*
 * The sessions to push: stopped ones with an id above after that started
 * since strobed did or, when the server had this host's sessions up to
 * p->server_max when first asked, any from that one on (what a strobed
 * before this one could not push, or pushed in part).  Their ids into
 * *ids (NULL: only count); returns their number.
 */
static size_t scope(struct pusher *p, int64_t after, int64_t **ids)
{
	sqlite3_stmt *st;

	if (ids)
		*ids = NULL;
	if (sqlite3_prepare_v2(db_sqlite(p->db), "SELECT id FROM sessions WHERE state != "
			       "'running' AND state != 'deleting' AND id > ? AND "
			       "(start_ns + wall_offset_ns >= ? OR (? AND id >= ?)) ORDER BY id",
			       -1, &st, NULL) != SQLITE_OK)
		return 0;
	sqlite3_bind_int64(st, 1, after);
	sqlite3_bind_int64(st, 2, p->since_wall_ns);
	sqlite3_bind_int(st, 3, p->server_max > 0);
	sqlite3_bind_int64(st, 4, p->server_max);
	return ids_of(st, ids);
}

/* p->server_max: the newest session of this host on the server (0: none) */
static int ask_server_max(struct pusher *p, struct chclient *c, struct error *e)
{
	struct sbuf q = { 0 }, out = { 0 };
	int r;

	/* a session pushed in intervals has no row in sessions yet */
	sbuf_addf(&q, "SELECT max(s) FROM (SELECT max(session) AS s FROM sessions WHERE host = ");
	push_sql_quote(&q, p->host);
	sbuf_addf(&q, " UNION ALL SELECT max(session) AS s FROM intervals WHERE host = ");
	push_sql_quote(&q, p->host);
	sbuf_addf(&q, ")");
	r = chclient_query(c, q.s, &out, e);
	if (r == 0) {
		p->server_max = out.s ? strtoll(out.s, NULL, 10) : 0;
		p->asked = 1;
	}
	free(q.s);
	free(out.s);
	return r;
}

static int64_t max_id(struct pusher *p)
{
	sqlite3_stmt *st;
	int64_t v = INT64_MAX - 1;	/* unknown: hold everything */

	if (sqlite3_prepare_v2(db_sqlite(p->db), "SELECT coalesce(max(id), 0) FROM sessions", -1,
			       &st, NULL) != SQLITE_OK)
		return v;
	if (sqlite3_step(st) == SQLITE_ROW)
		v = sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	return v;
}

/* The running sessions, whose next interval is due: their ids into *ids
 * (malloc'ed); their number. */
static size_t running(struct pusher *p, int64_t **ids)
{
	sqlite3_stmt *st;

	*ids = NULL;
	if (sqlite3_prepare_v2(db_sqlite(p->db), "SELECT id FROM sessions WHERE state = "
			       "'running' ORDER BY id", -1, &st, NULL) != SQLITE_OK)
		return 0;
	return ids_of(st, ids);
}

/* One line for what the symbol worker's failures cost in a push. */
static void log_worker(const struct push_stats *st)
{
	if (!st->worker_crashes && !st->worker_timeouts)
		return;
	daemon_log("push: the symbol worker crashed %u times and was killed after hanging %u "
		   "times (%u started); %u binaries got no names: %s", st->worker_crashes,
		   st->worker_timeouts, st->worker_started, st->worker_failed,
		   st->worker_failed ? st->worker_failed_names : "none");
}

/* Push the n sessions of ids (in intervals while they run) with o. */
static int push_some(struct pusher *p, struct chclient *c, struct push_opts *o,
		     const int64_t *ids, size_t n, struct error *e)
{
	struct push_stats st;
	int r;

	o->sessions = ids;
	o->nsessions = n;
	o->intervals = 1;
	r = push_run(p->db, c, o, &st, e);
	log_worker(&st);
	return r;
}

/* Push every stopped session in scope, then the next interval of each
 * running one: 0, or -1 with e set.  Binaries are parsed in a symbol
 * worker without privileges (symworker.h), never in strobed; the server
 * is talked to by a fleet child without privileges (chchild.h), whose
 * answers are checked printable text before they are parsed here. */
static int attempt(struct pusher *p, struct error *e)
{
	struct push_opts o = { .host = p->host, .parse_in_worker = 1 };
	struct chclient *c;
	int64_t last, *ids = NULL, *rids = NULL;
	size_t n = 0, nr;
	int r;

	if (!p->db && !(p->db = db_open(p->db_path, DB_READ, e)))
		return -1;
	pthread_mutex_lock(&p->lock);
	last = p->st.last_session;
	pthread_mutex_unlock(&p->lock);
	p->next_id = max_id(p) + 1;
	nr = running(p, &rids);
	if (nr && rids[0] < p->floor)
		p->floor = rids[0];
	if (p->floor - 1 < last)
		last = p->floor - 1;
	if (p->asked && !nr && !scope(p, last, NULL))
		return 0;	/* nothing new: no request at all */
	c = chclient_new_child(&p->url, &p->cred, e);
	if (!c) {
		free(rids);
		return -1;
	}
	r = p->asked ? 0 : ask_server_max(p, c, e);
	if (r == 0)
		n = scope(p, last, &ids);
	if (r == 0 && n)
		r = push_some(p, c, &o, ids, n, e);
	/* a running session that stopped since it was listed is pushed whole */
	if (r == 0 && nr)
		r = push_some(p, c, &o, rids, nr, e);
	chclient_free(c);
	pthread_mutex_lock(&p->lock);
	p->st.attempts++;
	if (r == 0) {
		if (n && ids[n - 1] > p->st.last_session)
			p->st.last_session = ids[n - 1];
		p->floor = nr ? rids[0] : INT64_MAX;
		p->st.last_ok_wall_ns = (int64_t)clock_realtime_ns();
	}
	pthread_mutex_unlock(&p->lock);
	free(ids);
	free(rids);
	return r;
}

static void *run(void *arg)
{
	struct pusher *p = arg;
	unsigned backoff = BACKOFF_FIRST_S;
	struct error e;
	int quit = 0;

	while (!quit) {
		struct timespec until;
		int r;

		clock_gettime(CLOCK_REALTIME, &until);
		until.tv_sec += p->st.down ? backoff : p->interval_s;
		pthread_mutex_lock(&p->lock);
		while (!p->quit && !p->kicked)
			if (pthread_cond_timedwait(&p->cond, &p->lock, &until) == ETIMEDOUT)
				break;
		quit = p->quit;
		p->kicked = 0;
		pthread_mutex_unlock(&p->lock);
		r = attempt(p, &e);
		pthread_mutex_lock(&p->lock);
		if (r < 0) {
			p->st.failures++;
			snprintf(p->st.error, sizeof(p->st.error), "%s", e.msg);
			if (!p->st.down) {
				p->down_since_ns = (int64_t)clock_realtime_ns();
				daemon_log("push to %s failed: %s; retrying with backoff (at most "
					   "every %d s), the sessions stay in the database meanwhile",
					   p->url_text, e.msg, BACKOFF_MAX_S);
			}
			p->st.down = 1;
			backoff = backoff * 2 > BACKOFF_MAX_S ? BACKOFF_MAX_S : backoff * 2;
		} else {
			if (p->st.down)
				daemon_log("push to %s works again after %.1f s: caught up to session "
					   "%" PRId64, p->url_text,
					   ((int64_t)clock_realtime_ns() - p->down_since_ns) / 1e9,
					   p->st.last_session);
			p->st.down = 0;
			p->st.error[0] = 0;
			backoff = BACKOFF_FIRST_S;
		}
		if (p->db) {
			int64_t *ids = NULL, after = p->floor - 1 < p->st.last_session ?
				p->floor - 1 : p->st.last_session;

			p->st.pending = scope(p, after, &ids);
			/* what retention keeps: the pending ones, the running
			 * ones, and those that began after this attempt */
			if (r == 0) {
				int64_t h = p->next_id;

				if (p->floor < h)
					h = p->floor;
				if (p->st.pending && ids[0] < h)
					h = ids[0];
				p->st.hold_from = h;
			}
			free(ids);
		}
		pthread_mutex_unlock(&p->lock);
	}
	return NULL;
}

struct pusher *pusher_start(const char *db_path, const char *url_text,
			    const struct chclient_url *url, struct chclient_cred *cred,
			    const char *host, unsigned interval_s, int64_t since_wall_ns,
			    struct error *e)
{
	struct pusher *p = xcalloc(1, sizeof(*p));
	sigset_t all, old;
	int r;

	p->db_path = xstrdup(db_path);
	p->url_text = xstrdup(url_text);
	p->host = xstrdup(host);
	p->url = *url;
	p->cred = *cred;
	memset(cred->password, 0, sizeof(cred->password));
	p->interval_s = interval_s;
	p->since_wall_ns = since_wall_ns;
	p->floor = INT64_MAX;
	p->st.hold_from = 1;
	pthread_mutex_init(&p->lock, NULL);
	pthread_cond_init(&p->cond, NULL);
	/* strobed takes its signals by signalfd: none for this thread */
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, &old);
	r = pthread_create(&p->thread, NULL, run, p);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (r) {
		error_set(e, "cannot start the push thread: %s", strerror(r));
		free(p->db_path);
		free(p->url_text);
		free(p->host);
		free(p);
		return NULL;
	}
	return p;
}

void pusher_kick(struct pusher *p)
{
	if (!p)
		return;
	pthread_mutex_lock(&p->lock);
	p->kicked = 1;
	pthread_cond_signal(&p->cond);
	pthread_mutex_unlock(&p->lock);
}

void pusher_stop(struct pusher *p)
{
	struct timespec until;
	int r;

	if (!p)
		return;
	pthread_mutex_lock(&p->lock);
	p->quit = 1;
	pthread_cond_signal(&p->cond);
	pthread_mutex_unlock(&p->lock);
	clock_gettime(CLOCK_REALTIME, &until);
	until.tv_sec += STOP_WAIT_S;
	r = pthread_timedjoin_np(p->thread, NULL, &until);
	if (r) {
		/* a server that accepts and never answers: strobed exits anyway,
		 * the session stays in the database for the next push */
		daemon_log("push to %s: the last push did not end within %d s: left unfinished "
			   "(strobe push, or the next strobed --push, sends the rest)",
			   p->url_text, STOP_WAIT_S);
		return;
	}
	if (p->db)
		db_close(p->db);
	memset(p->cred.password, 0, sizeof(p->cred.password));
	free(p->db_path);
	free(p->url_text);
	free(p->host);
	pthread_mutex_destroy(&p->lock);
	pthread_cond_destroy(&p->cond);
	free(p);
}

void pusher_state(struct pusher *p, struct pusher_state *s)
{
	pthread_mutex_lock(&p->lock);
	*s = p->st;
	pthread_mutex_unlock(&p->lock);
}
