/*
 * pusher.h - strobed --push: a thread that pushes the sessions strobed
 * records to ClickHouse (lib/fleet/push.h, doc/FLEET.md "Continuous
 * pushing") every --push-interval seconds, from its own read-only
 * connection to the database, so that the network never delays capture,
 * drain or ingest.  A server that is down is retried with backoff; what is
 * in SQLite stays there and the next successful push catches up.
 */
#ifndef STROBE_PUSHER_H
#define STROBE_PUSHER_H

#include <stdint.h>
#include "chclient.h"

#define PUSH_INTERVAL_DEFAULT	60	/* seconds */
#define PUSH_INTERVAL_MAX	86400

struct pusher;
struct proto_msg;

/* Start the thread: db_path opened read-only by it, url and cred copied
 * (the password is wiped from cred), host the fleet's host column,
 * since_wall_ns the CLOCK_REALTIME from which sessions are pushed.  NULL,
 * with e set, when the thread cannot start. */
struct pusher *pusher_start(const char *db_path, const char *url_text,
			    const struct chclient_url *url, struct chclient_cred *cred,
			    const char *host, unsigned interval_s, int64_t since_wall_ns,
			    struct error *e);
/* A session stopped: push soon (at the next interval boundary at most). */
void pusher_kick(struct pusher *p);
/* Push what is left (one attempt, bounded), stop the thread, free p. */
void pusher_stop(struct pusher *p);

struct pusher_state {
	int64_t last_session;		/* the newest session on the server (0: none yet) */
	int64_t last_ok_wall_ns;	/* when the last push succeeded (0: never) */
	uint64_t pending;		/* stopped sessions not on the server yet */
	uint64_t attempts, failures;
	/* retention must keep the finished sessions with ids from this on:
	 * not known to be pushed whole (1 until a push has succeeded) */
	int64_t hold_from;
	int down;			/* the last attempt failed */
	char error[512];		/* its error ("" when none) */
};
void pusher_state(struct pusher *p, struct pusher_state *s);

#endif
