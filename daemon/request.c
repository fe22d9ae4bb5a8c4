/*
 * request.c - strobed's request protocol (proto.h): one request line of a
 * client answered with one reply line.  start, stop, mark, status, rm,
 * count-begin/-data/-end, ping and shutdown, each checked against who
 * asks (SO_PEERCRED): root, or a member of group strobe, who may stop or
 * mark only the sessions it started.  A stop waiting for the database or
 * for ingest keeps its connection open, answered by stop.c.
 */
#include "config.h"
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <unistd.h>
#include "countsave.h"
#include "countstore.h"
#include "log.h"
#include "peer.h"
#include "pusher.h"
#include "strobed.h"

void reply(int fd, struct proto_msg *m)
{
	char *line = proto_format(m);
	size_t len = strlen(line), off = 0;

	while (off < len) {
		ssize_t w = write(fd, line + off, len - off);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			break;
		off += w;
	}
	free(line);
	proto_free(m);
}

/* key=N,N,...: n numbers (unsigned, or CPU numbers when cpus is set). */
static void add_list(struct proto_msg *m, const char *key, const uint64_t *v,
		     const int *cpus, int n)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	if (!f)
		return;
	for (int i = 0; i < n; i++)
		fprintf(f, i ? ",%llu" : "%llu",
			cpus ? (unsigned long long)cpus[i] : (unsigned long long)v[i]);
	if (fclose(f) == 0)
		proto_add(m, key, buf);
	free(buf);
}

/* The database's size on disk as its file and WAL (st_size; a file that is
 * not there counts 0), for status: its caller may not be able to stat it. */
static void add_db_size(struct proto_msg *m, const char *path)
{
	char *wal = xasprintf("%s-wal", path);
	struct stat st;
	uint64_t db = 0, w = 0;

	if (stat(path, &st) == 0)
		db = (uint64_t)st.st_size;
	if (stat(wal, &st) == 0)
		w = (uint64_t)st.st_size;
	free(wal);
	proto_addf(m, "db_bytes", "%llu", (unsigned long long)(db + w));
	proto_addf(m, "db_wal_bytes", "%llu", (unsigned long long)w);
}

void reply_error(int fd, const char *fmt, ...)
{
	struct proto_msg m;
	va_list ap;
	char msg[1024];

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	proto_init(&m, "error");
	proto_add(&m, "msg", msg);
	reply(fd, &m);
}

/*
 * The ring buffers are pinned kernel memory, per CPU, and perf does not apply
 * kernel.perf_event_mlock_kb to root, which strobed is.  So strobed applies
 * a limit itself to everyone but root: per CPU, the larger of that sysctl
 * and MEMBER_RING_BYTES (the default ring, 512 pages, fits under it).
 */
#define MEMBER_RING_BYTES (8ULL << 20)

static int ring_over_limit(const struct ucred *cr, const struct backend_config *cfg,
			   struct error *e)
{
	char *s = file_read_all("/proc/sys/kernel/perf_event_mlock_kb", NULL);
	uint64_t limit = MEMBER_RING_BYTES, kb = 0, want;
	long pg = sysconf(_SC_PAGESIZE);

	if (s && parse_u64(strtok(s, "\n"), &kb) == 0 && kb * 1024 > limit)
		limit = kb * 1024;
	free(s);
	if (cr->uid == 0 || !cfg->buffer_pages || pg <= 0)
		return 0;
	want = (uint64_t)cfg->buffer_pages * (uint64_t)pg;
	if (want <= limit)
		return 0;
	return error_set(e, "a ring of %u pages per CPU (%llu KiB) is above the %llu KiB "
			 "that users other than root may pin (the larger of "
			 "kernel.perf_event_mlock_kb and %llu KiB): lower -m",
			 cfg->buffer_pages, (unsigned long long)(want >> 10),
			 (unsigned long long)(limit >> 10),
			 (unsigned long long)(MEMBER_RING_BYTES >> 10));
}

/* --keep-stacks is root's: a raw copy holds the registers and stack bytes
 * of whatever process was sampled, anyone's (rawstk.h). */
static int keep_stacks_refused(const struct ucred *cr, const struct backend_config *cfg,
			       struct error *e)
{
	if (!cfg->keep_stacks || cr->uid == 0)
		return 0;
	return error_set(e, "permission denied: --keep-stacks is root's: raw stack copies hold "
			 "other users' stack bytes and registers (secrets); record as root, "
			 "or without --keep-stacks");
}

/* May this peer stop or mark the running session?  Root, or whoever
 * started it: members of group strobe do not control each other's. */
static int peer_owns(const struct daemon *d, const struct ucred *cr, int fd)
{
	uint32_t owner = session_owner_uid(d->session);

	if (cr->uid == 0 || cr->uid == owner)
		return 1;
	reply_error(fd, "permission denied: session %lld belongs to uid %u; only it and "
		    "root may stop or mark it", (long long)session_status_id(d->session),
		    (unsigned)owner);
	return 0;
}

static void handle_start(struct daemon *d, int fd, const struct proto_msg *req,
			 const struct ucred *cr)
{
	const char *markers[SESSION_MAX_MARKERS + 1];
	struct session_params p;
	struct proto_msg m;
	struct error e;
	struct peer who;
	int nm = 0, r;

	if (d->session && d->stop_pending) {
		reply_error(fd, "session %lld is still being stopped: strobed waits for the "
			    "database, locked by %s; try again when 'strobe status' shows no "
			    "session running", (long long)session_status_id(d->session),
			    d->holder[0] ? d->holder : "another process");
		return;
	}
	if (d->session) {
		reply_error(fd, "session %lld is already running: stop it first with 'strobe stop'",
			    (long long)session_status_id(d->session));
		return;
	}
	memset(&p, 0, sizeof(p));
	snprintf(p.name, sizeof(p.name), "%s", proto_get(req, "name") ? proto_get(req, "name") : "");
	p.owner_uid = cr->uid;
	if (session_parse_request(&p, proto_get(req, "events"), proto_get(req, "sample_event"),
				  proto_get(req, "freq"), proto_get(req, "period"),
				  proto_get(req, "buffer_pages"), &e) < 0) {
		reply_error(fd, "%s", e.msg);
		return;
	}
	if (session_parse_call_graph(&p, proto_get(req, "call_graph"),
				     proto_get(req, "keep_stacks"), &e) < 0 ||
	    session_parse_attribution(&p, proto_get(req, "attribution"), d->backend, &e) < 0) {
		reply_error(fd, "%s", e.msg);
		return;
	}
	/* marker0, marker1, ...: the USDT probes to record */
	for (; nm <= SESSION_MAX_MARKERS; nm++) {
		char key[16];

		snprintf(key, sizeof(key), "marker%d", nm);
		if (!(markers[nm] = proto_get(req, key)))
			break;
	}
	/* the marker files are opened with the requester's rights */
	peer_init(&who, fd, cr->uid, cr->gid);
	r = session_parse_markers(&p, markers, nm, &who, &e);
	peer_free(&who);
	if (r < 0) {
		session_params_free(&p);
		reply_error(fd, "%s", e.msg);
		return;
	}
	if (ring_over_limit(cr, &p.cfg, &e) || keep_stacks_refused(cr, &p.cfg, &e)) {
		session_params_free(&p);
		reply_error(fd, "%s", e.msg);
		return;
	}
	p.cfg.kind = d->backend;
	p.cfg.drain_nice = d->base_nice;
	p.cfg.drain_rt = 1;
	p.ingest_nice = MIN(19, d->base_nice + d->ingest_nice);
	p.ingest_idle = d->ingest_idle;
	p.ingest_defer = d->ingest_defer;
	p.ingest_defer_max_ns = d->ingest_defer_max_ns;
	/* a running session is pushed every push_interval s: unless told
	 * otherwise, ingest falls no further behind than that */
	if (d->push_url && !d->ingest_defer_set)
		p.ingest_defer_max_ns = (uint64_t)d->push_interval * 1000000000ULL;
	p.base_nice = d->base_nice;
	p.spool = d->spool;
	p.spool_dir = d->spool_dir;
	d->ended[0] = 0;
	d->stop_err.msg[0] = 0;
	d->session = session_start(d->db, &d->cache, &p, &e);
	session_params_free(&p);
	if (!d->session) {
		lockdiag_reply(d, fd, &e);
		return;
	}
	d->watching = 0;
	if (strobed_watch(d, 1) < 0)
		daemon_log("epoll: %s (draining on the timer only)", strerror(errno));
	daemon_log("session %lld started by uid %u", (long long)session_status_id(d->session),
	       (unsigned)cr->uid);
	proto_init(&m, "ok");
	proto_addf(&m, "session", "%lld", (long long)session_status_id(d->session));
	reply(fd, &m);
}


#define RM_MAX_SESSIONS 1024

/* 'rm sessions=1,2,3': mark them for removal (retention_remove checks
 * each); the timer deletes their rows. */
static void handle_rm(struct daemon *d, int fd, const struct proto_msg *req,
		      const struct ucred *cr)
{
	const char *list = proto_get(req, "sessions");
	int64_t ids[RM_MAX_SESSIONS];
	size_t n = 0;
	struct proto_msg m;
	struct error e;
	struct sbuf done = { 0 };
	const char *p = list;
	int r;

	if (!list || !*list) {
		reply_error(fd, "malformed request: rm needs sessions=ID[,ID...]");
		return;
	}
	while (*p) {
		char *end;
		long long v;

		if (*p < '0' || *p > '9') {
			reply_error(fd, "malformed request: bad session list '%s': give session "
				    "numbers separated by commas", list);
			return;
		}
		v = strtoll(p, &end, 10);
		if (v <= 0 || (*end && *end != ',')) {
			reply_error(fd, "malformed request: bad session list '%s': give session "
				    "numbers separated by commas", list);
			return;
		}
		if (n == RM_MAX_SESSIONS) {
			reply_error(fd, "too many sessions at once: at most %d", RM_MAX_SESSIONS);
			return;
		}
		ids[n++] = v;
		p = *end ? end + 1 : end;
	}
	if (d->session)
		session_lock(d->session);
	r = retention_remove(d->db, ids, n, cr->uid,
			     d->session ? session_status_id(d->session) : 0, &e);
	if (r < 0)
		lockdiag_reply(d, fd, &e);
	if (d->session)
		session_unlock(d->session);
	if (r < 0)
		return;
	for (size_t i = 0; i < n; i++)
		sbuf_addf(&done, "%s%lld", i ? "," : "", (long long)ids[i]);
	daemon_log("uid %u removes session%s %s", (unsigned)cr->uid, n > 1 ? "s" : "", done.s);
	d->reaping = 1;
	proto_init(&m, "ok");
	proto_add(&m, "removed", done.s);
	free(done.s);
	reply(fd, &m);
}

/* A session id, a start or an end time from a request: -1 when bad. */
static int request_i64(const struct proto_msg *req, const char *key, int64_t *v)
{
	const char *s = proto_get(req, key);
	uint64_t u;

	if (!s || s[0] < '0' || s[0] > '9' || parse_u64(s, &u) < 0 || u > INT64_MAX)
		return -1;
	*v = (int64_t)u;
	return 0;
}

/*
 * strobe count --save (proto.h): count-begin makes a count session of the
 * caller's, count-data adds values to it, count-end ends it.  Everything
 * is checked (countsave_decode, countstore_add): the client is any member
 * of the strobe group.  count-begin: the new session's id is the reply.
 */
static void count_begin(struct daemon *d, int fd, const struct proto_msg *req,
			const struct ucred *cr)
{
	struct db_session s;
	struct utsname u;
	const char *name = proto_get(req, "name");
	int64_t wall = 0;
	struct proto_msg m;
	struct error e;
	int r;

	memset(&s, 0, sizeof(s));
	if (request_i64(req, "start_ns", &s.start_ns) < 0 ||
	    request_i64(req, "wall_offset_ns", &wall) < 0) {
		reply_error(fd, "malformed request: count-begin needs start_ns= and "
			    "wall_offset_ns=");
		return;
	}
	s.wall_offset_ns = wall;
	if (name) {
		if (strlen(name) >= sizeof(s.name)) {
			reply_error(fd, "session name too long: at most %zu bytes",
				    sizeof(s.name) - 1);
			return;
		}
		for (const char *p = name; *p; p++)
			if ((unsigned char)*p < 0x20 || *p == 0x7f) {
				reply_error(fd, "session name with a control character");
				return;
			}
		snprintf(s.name, sizeof(s.name), "%s", name);
	}
	for (int i = 0; i < STROBE_MAX_COUNTERS; i++) {
		char key[16];
		const char *ev;
		struct db_event *de = &s.events[i];

		snprintf(key, sizeof(key), "ev%d", i);
		if (!(ev = proto_get(req, key)))
			break;
		if (countsave_event_decode(ev, de->name, sizeof(de->name), &de->type,
					   &de->config, &de->config1, &de->config2, &e) < 0) {
			reply_error(fd, "%s", e.msg);
			return;
		}
		s.nr_events = i + 1;
	}
	if (!s.nr_events) {
		reply_error(fd, "malformed request: count-begin needs ev0= (at most %d events)",
			    STROBE_MAX_COUNTERS);
		return;
	}
	s.owner_uid = cr->uid;
	if (uname(&u) == 0) {
		snprintf(s.hostname, sizeof(s.hostname), "%s", u.nodename);
		snprintf(s.kernel_release, sizeof(s.kernel_release), "%s", u.release);
	}
	s.nr_cpus = sysconf(_SC_NPROCESSORS_ONLN);
	if (d->session)
		session_lock(d->session);
	r = countstore_begin(d->db, &s, &e);
	if (d->session)
		session_unlock(d->session);
	if (r < 0) {
		lockdiag_reply(d, fd, &e);
		return;
	}
	daemon_log("uid %u saves count session %lld", (unsigned)cr->uid, (long long)s.id);
	proto_init(&m, "ok");
	proto_addf(&m, "session", "%lld", (long long)s.id);
	reply(fd, &m);
}

/* count-begin, count-data, count-end: the session's id is the reply. */
static void handle_count(struct daemon *d, int fd, const struct proto_msg *req,
			 const struct ucred *cr)
{
	struct proto_msg m;
	struct error e;
	int64_t id = 0;
	int r;

	if (!strcmp(req->verb, "count-begin")) {
		count_begin(d, fd, req, cr);
		return;
	}
	if (request_i64(req, "session", &id) < 0 || id <= 0) {
		reply_error(fd, "malformed request: %s needs session=ID", req->verb);
		return;
	}
	if (!strcmp(req->verb, "count-data")) {
		struct count_saved *v;
		size_t n;
		const char *vals = proto_get(req, "values");

		if (!vals || countsave_decode(vals, &v, &n, COUNTSAVE_MAX_BYTES / 10, &e) < 0) {
			reply_error(fd, "%s", vals ? e.msg : "malformed request: count-data needs values=");
			return;
		}
		if (d->session)
			session_lock(d->session);
		r = countstore_add(d->db, id, cr->uid, v, n, &e);
		if (d->session)
			session_unlock(d->session);
		free(v);
	} else {
		int64_t end;

		if (request_i64(req, "end_ns", &end) < 0) {
			reply_error(fd, "malformed request: count-end needs end_ns=");
			return;
		}
		if (d->session)
			session_lock(d->session);
		r = countstore_end(d->db, id, cr->uid, end, &e);
		if (d->session)
			session_unlock(d->session);
	}
	if (r < 0) {
		lockdiag_reply(d, fd, &e);
		return;
	}
	proto_init(&m, "ok");
	proto_addf(&m, "session", "%lld", (long long)id);
	reply(fd, &m);
}

/* 'stop': 1 when the reply waits (a stop pending: stop.c answers on fd). */
static int handle_stop(struct daemon *d, int fd, const struct ucred *cr)
{
	struct proto_msg m;

	if (!d->session && d->ended[0]) {
		reply_error(fd, "%s", d->ended);
		d->ended[0] = 0;
	} else if (!d->session) {
		reply_error(fd, "no session is running");
	} else if (d->stop_fd >= 0) {
		if (d->blocked_since)
			reply_error(fd, "session %lld is already being stopped: strobed waits "
				    "for the database, locked by %s",
				    (long long)session_status_id(d->session),
				    d->holder[0] ? d->holder : "another process");
		else
			reply_error(fd, "session %lld is already being stopped: strobed is "
				    "storing the records it spooled ('strobe status' shows "
				    "how many)", (long long)session_status_id(d->session));
	} else if (peer_owns(d, cr, fd)) {
		if (stop_session(d, &m) == SESSION_BLOCKED) {
			if (d->blocked_since)
				daemon_log("session %lld: the stop waits for the database; "
					   "the session records on until it can be stored",
					   (long long)session_status_id(d->session));
			d->stop_fd = fd;
			return 1;
		}
		reply(fd, &m);
	}
	return 0;
}

static void handle_mark(struct daemon *d, int fd, const struct proto_msg *req,
			const struct ucred *cr)
{
	const char *text = proto_get(req, "text"), *t = proto_get(req, "time_ns");
	uint64_t time_ns = 0;
	struct proto_msg m;
	struct error e;

	if (t && parse_u64(t, &time_ns) < 0)
		time_ns = 0;
	if (!d->session) {
		reply_error(fd, "no session running: start one with 'strobe start'");
	} else if (!peer_owns(d, cr, fd)) {
		;
	} else if (session_mark(d->session, text ? text : "", time_ns, cr->pid, &e) < 0) {
		reply_error(fd, "%s", e.msg);
	} else {
		proto_init(&m, "ok");
		proto_addf(&m, "session", "%lld", (long long)session_status_id(d->session));
		reply(fd, &m);
	}
}

/* status, the running session's part */
static void status_session(struct daemon *d, struct proto_msg *m)
{
	struct session_status st;

	session_get_status(d->session, &st);
	proto_add(m, "running", "1");
	proto_addf(m, "session", "%lld", (long long)st.id);
	proto_addf(m, "samples", "%llu", (unsigned long long)st.samples);
	proto_addf(m, "lost", "%llu", (unsigned long long)st.lost);
	proto_addf(m, "throttled", "%llu", (unsigned long long)st.throttled);
	proto_addf(m, "elapsed_ns", "%llu", (unsigned long long)st.elapsed_ns);
	proto_addf(m, "rate", "%.1f", st.rate);
	proto_addf(m, "lag_records", "%llu", (unsigned long long)st.lag_records);
	proto_addf(m, "lag_ns", "%llu", (unsigned long long)st.lag_ns);
	/* ingest waits for an idle CPU (--ingest-defer), for so long */
	proto_addf(m, "ingest_deferred_ns", "%llu",
		   (unsigned long long)(st.deferred_since_ns ?
		   clock_monotonic_ns() - st.deferred_since_ns : 0));
	proto_addf(m, "spool_mem", "%llu", (unsigned long long)st.spool.mem_bytes);
	proto_addf(m, "spool_disk", "%llu", (unsigned long long)st.spool.disk_bytes);
	proto_addf(m, "spool_mem_max", "%llu", (unsigned long long)d->spool.mem_max);
	proto_addf(m, "spool_disk_max", "%llu", (unsigned long long)d->spool.disk_max);
	proto_addf(m, "spool_refused", "%llu", (unsigned long long)st.spool.refused);
	/* binaries held open from drain to ingest (binhold.h) */
	proto_addf(m, "held_files", "%llu", (unsigned long long)st.held.files_now);
	proto_addf(m, "held_over", "%llu", (unsigned long long)st.held.over);
	/* samples taken from the rings (stored or not), and per
	 * CPU, in the order of cpus= (the first
	 * SESSION_STATUS_MAX_CPUS of nr_cpus=), those and the
	 * lost records */
	proto_addf(m, "taken", "%llu", (unsigned long long)st.taken);
	proto_addf(m, "nr_cpus", "%d", st.nr_cpus);
	add_list(m, "cpus", NULL, st.cpu, st.nr_cpu_counts);
	add_list(m, "cpu_samples", st.cpu_samples, NULL, st.nr_cpu_counts);
	add_list(m, "cpu_lost", st.cpu_lost, NULL, st.nr_cpu_counts);
	if (d->stop_pending)
		proto_add(m, "stopping", "1");
}

/* status, --push's part */
static void status_push(struct daemon *d, struct proto_msg *m)
{
	struct pusher_state ps;

	pusher_state(d->pusher, &ps);
	proto_add(m, "push_to", d->push_url);
	proto_addf(m, "push_interval", "%u", d->push_interval);
	proto_addf(m, "push_last_session", "%lld", (long long)ps.last_session);
	proto_addf(m, "push_last_ok_wall_ns", "%lld", (long long)ps.last_ok_wall_ns);
	proto_addf(m, "push_pending", "%llu", (unsigned long long)ps.pending);
	proto_addf(m, "push_failures", "%llu", (unsigned long long)ps.failures);
	if (d->push_held)
		proto_addf(m, "push_held", "%zu", d->push_held);
	if (ps.down)
		proto_add(m, "push_error", ps.error);
}

static void handle_status(struct daemon *d, int fd)
{
	struct proto_msg m;

	proto_init(&m, "ok");
	if (d->session)
		status_session(d, &m);
	else
		proto_add(&m, "running", "0");
	if (d->blocked_since) {
		proto_addf(&m, "blocked_ms", "%llu",
			   (unsigned long long)((clock_monotonic_ns() - d->blocked_since) / 1000000));
		proto_add(&m, "lock_holder", d->holder);
	}
	if (d->reaping)
		proto_add(&m, "removing", "1");
	if (d->pusher)
		status_push(d, &m);
	proto_add(&m, "db", db_path(d->db));
	add_db_size(&m, db_path(d->db));
	reply(fd, &m);
}

/* req from a peer with credentials cr on fd: answered, or 1 when the
 * reply is deferred (handle_stop). */
static int dispatch(struct daemon *d, int fd, const struct proto_msg *req,
		    const struct ucred *cr)
{
	struct proto_msg m;

	if (!strcmp(req->verb, "ping")) {
		proto_init(&m, "ok");
		proto_add(&m, "version", PACKAGE_VERSION);
		proto_add(&m, "db", db_path(d->db));
		reply(fd, &m);
	} else if (!strcmp(req->verb, "start")) {
		handle_start(d, fd, req, cr);
	} else if (!strcmp(req->verb, "stop")) {
		return handle_stop(d, fd, cr);
	} else if (!strcmp(req->verb, "mark")) {
		handle_mark(d, fd, req, cr);
	} else if (!strcmp(req->verb, "rm")) {
		handle_rm(d, fd, req, cr);
	} else if (!strcmp(req->verb, "count-begin") || !strcmp(req->verb, "count-data") ||
		   !strcmp(req->verb, "count-end")) {
		handle_count(d, fd, req, cr);
	} else if (!strcmp(req->verb, "status")) {
		handle_status(d, fd);
	} else if (!strcmp(req->verb, "shutdown") && cr->uid != 0) {
		reply_error(fd, "permission denied: only root may shut strobed down");
	} else if (!strcmp(req->verb, "shutdown")) {
		proto_init(&m, "ok");
		reply(fd, &m);
		stop_quit(d);
	} else {
		reply_error(fd, "malformed request: unknown request '%s' (expected start, stop, "
			    "status, mark, rm, ping or shutdown)", req->verb);
	}
	return 0;
}

/* The complete request line c->buf[0..n) (its newline included, or the
 * reason it is not complete) of client c: answered, then the client is
 * done.  Returns 1 when the reply is deferred and the caller must keep
 * the connection open (a stop waiting for the database). */
int request_handle(struct daemon *d, struct client *c, const char *why)
{
	char *buf = c->buf, *nl;
	const struct ucred cr = c->cr;
	int fd = c->fd, keep;
	struct proto_msg req;
	struct error e;
	size_t n = c->n;

	buf[n < sizeof(c->buf) ? n : sizeof(c->buf) - 1] = 0;
	if (!memchr(buf, '\n', n)) {
		reply_error(fd, "malformed request: no complete line received (%s)", why);
		return 0;
	}
	/* memchr, not strchr: a NUL byte before the newline must not crash us */
	nl = memchr(buf, '\n', n);
	*nl = 0;
	if (strlen(buf) != (size_t)(nl - buf)) {
		reply_error(fd, "malformed request: it contains a NUL byte");
		return 0;
	}
	if (proto_parse(buf, &req, &e) < 0) {
		if (daemon_log_ratelimit((unsigned)cr.uid, "malformed requests"))
			daemon_log("uid %u: %s", (unsigned)cr.uid, e.msg);
		reply_error(fd, "%s", e.msg);
		return 0;
	}
	keep = dispatch(d, fd, &req, &cr);
	proto_free(&req);
	return keep;
}
