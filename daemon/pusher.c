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
	struct pusher_state st;		/* under lock */
};

/* One number from SQLite about the sessions in scope after id. */
static int64_t scope_count(struct pusher *p, const char *what, int64_t after)
{
	sqlite3_stmt *st;
	int64_t v = 0;
	char *sql = xasprintf("SELECT %s FROM sessions WHERE state != 'running' AND state != "
			      "'deleting' AND start_ns + wall_offset_ns >= ? AND id > ?", what);

	if (sqlite3_prepare_v2(db_sqlite(p->db), sql, -1, &st, NULL) == SQLITE_OK) {
		sqlite3_bind_int64(st, 1, p->since_wall_ns);
		sqlite3_bind_int64(st, 2, after);
		if (sqlite3_step(st) == SQLITE_ROW)
			v = sqlite3_column_int64(st, 0);
		sqlite3_finalize(st);
	}
	free(sql);
	return v;
}

/* Push every stopped session in scope: 0, or -1 with e set. */
static int attempt(struct pusher *p, struct error *e)
{
	struct push_opts o = { .host = p->host, .has_since = 1,
			       .since_wall_ns = p->since_wall_ns };
	struct push_stats st;
	struct chclient *c;
	int64_t maxid, last;
	int r;

	if (!p->db && !(p->db = db_open(p->db_path, DB_READ, e)))
		return -1;
	pthread_mutex_lock(&p->lock);
	last = p->st.last_session;
	pthread_mutex_unlock(&p->lock);
	maxid = scope_count(p, "coalesce(max(id), 0)", 0);
	if (maxid <= last)
		return 0;	/* nothing new: no request at all */
	c = chclient_new(&p->url, &p->cred, e);
	if (!c)
		return -1;
	r = push_run(p->db, c, &o, &st, e);
	chclient_free(c);
	pthread_mutex_lock(&p->lock);
	p->st.attempts++;
	if (r == 0) {
		p->st.last_session = maxid;
		p->st.last_ok_wall_ns = (int64_t)clock_realtime_ns();
	}
	pthread_mutex_unlock(&p->lock);
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
		if (p->db)
			p->st.pending = scope_count(p, "count(*)", p->st.last_session);
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
