/*
 * push.c - sessions from SQLite to ClickHouse in idempotent batches
 * (push.h, doc/FLEET.md): which sessions go, each one's plan of parts,
 * the pass that counts and hashes its batches and the pass that sends
 * those the server lacks.  The rows are made in pushgen.c, reagg.c and
 * pushsym.c; what the server has is asked in pushstate.c.
 */
#include "config.h"
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <xxhash.h>
#include "chclient.h"
#include "db.h"
#include "progress.h"
#include "pushgen.h"
#include "pushstate.h"
#include "resolve.h"
#include "samplescan.h"
#include "symworker.h"

/*
 * A part of the plan: the batches first.. of an interval (its samples with
 * rowids lo..hi, then its binaries) or of the last part (processes,
 * markers, lost records, the samples lo..hi, binaries: the whole session
 * when it was not pushed in intervals).
 */
struct part {
	int64_t lo, hi;
	uint32_t first, end;		/* batches first..end-1 (end: after pass 1) */
	int final;
	const struct push_interval *there;	/* its row on the server, if any */
	uint64_t samples;		/* pass 1: its sample rows */
	char hash[33];			/* pass 1: XXH3-128 of its sample batches */
};

/* every batch of part pt, in order, to g->emit */
static int gen_part(struct gen *g, struct part *pt, struct error *e)
{
	return pushgen_part(g, pt->final, pt->lo, pt->hi, pt->first, &pt->end, e);
}

static int emit_hash(struct gen *g, uint32_t batch, const char *table, const char *cols,
		     const struct sbuf *rows, struct error *e)
{
	if (g->hash) {
		XXH3_128bits_update(g->hash, table, strlen(table) + 1);
		XXH3_128bits_update(g->hash, rows->s, rows->n);
	}
	/* a part's own hash is of its samples only: the binaries' rows say
	 * what the host knows of them at the time (problem, cached), which
	 * may change while the session runs */
	if (!strcmp(table, "samples"))
		XXH3_128bits_update(g->phash, rows->s, rows->n);
	return 0;
}

static int emit_nop(struct gen *g, uint32_t batch, const char *table, const char *cols,
		    const struct sbuf *rows, struct error *e)
{
	return 0;
}

static int emit_send(struct gen *g, uint32_t batch, const char *table, const char *cols,
		     const struct sbuf *rows, struct error *e)
{
	struct sbuf q = { 0 };
	int ret;

	if (batch >= g->nbatches)
		return error_set(e, "session %" PRId64 " changed while it was pushed (batch %u of "
				 "%u): push it again", g->s->id, batch, g->nbatches);
	if (g->have[batch])
		return 0;
	sbuf_addf(&q, "INSERT INTO %s (%s) FORMAT TabSeparated", table, cols);
	ret = chclient_insert(g->c, q.s, PUSH_INSERT_SETTINGS, rows->s, rows->n, e);
	free(q.s);
	if (ret < 0)
		return error_prefix(e, "session %" PRId64 ", batch %u of %u", g->s->id, batch,
				    g->nbatches);
	g->sent++;
	for (size_t i = 0; i < rows->n; i++)
		g->rows_sent += rows->s[i] == '\n';
	return 0;
}

static void hash_hex(XXH3_state_t *h, char out[33])
{
	XXH128_hash_t d = XXH3_128bits_digest(h);

	snprintf(out, 33, "%016llx%016llx", (unsigned long long)d.high64,
		 (unsigned long long)d.low64);
}

/* pass 1 of part pt: its batches, samples and hash; checked against its
 * server row if it has one */
static int part_pass1(struct gen *g, struct part *pt, struct error *e)
{
	g->phash = XXH3_createState();
	XXH3_128bits_reset(g->phash);
	g->emit = emit_hash;
	if (gen_part(g, pt, e) < 0) {
		XXH3_freeState(g->phash);
		g->phash = NULL;
		return -1;
	}
	hash_hex(g->phash, pt->hash);
	XXH3_freeState(g->phash);
	g->phash = NULL;
	pt->samples = g->part_samples;
	if (pt->there && (pt->there->first_batch + pt->there->batches != pt->end ||
			  pt->there->samples != pt->samples || strcmp(pt->there->hash, pt->hash)))
		return error_set(e, "interval %u of session %" PRId64 " of host %.100s is in "
				 "ClickHouse with other content (%u batches, %" PRIu64 " samples, "
				 "hash %s; here %u, %" PRIu64 ", %s): drop the session there "
				 "first", pt->there->k, g->s->id, g->host, pt->there->batches,
				 pt->there->samples, pt->there->hash, pt->end - pt->first,
				 pt->samples, pt->hash);
	return 0;
}

/* pass 2 of part pt: its symbols, then the batches the server lacks (an
 * interval all there of a stopped session: the symbols its push left out) */
static int part_send(struct gen *g, struct part *pt, const uint8_t *have, struct error *e)
{
	uint32_t i;

	for (i = pt->first; i < pt->end && have[i]; i++)
		;
	if (i == pt->end && (g->running || !pt->there))
		return 0;
	g->emit = emit_nop;
	if (gen_part(g, pt, e) < 0 || pushsym_send(g, e) < 0)
		return -1;
	if (i == pt->end)
		return 0;
	g->have = have;
	g->emit = emit_send;
	progress_phase(g->progress, pt->samples, "samples pushed");
	return gen_part(g, pt, e);
}

/* the row of interval k (pt, new; samples_before: the samples of the ones
 * before) of the running session */
static int send_interval(struct gen *g, uint32_t k, uint64_t samples_before,
			 const struct part *pt, struct error *e)
{
	struct push_interval iv = {
		.k = k, .first_row = pt->lo, .last_row = pt->hi, .first_batch = pt->first,
		.batches = pt->end - pt->first, .batch_rows = g->batch_rows,
		.samples = pt->samples, .samples_total = samples_before + pt->samples,
	};
	struct sbuf r = { 0 };
	int ret;

	memcpy(iv.hash, pt->hash, sizeof(iv.hash));
	pushgen_interval_row(g, &iv, &r);
	ret = chclient_insert(g->c, "INSERT INTO intervals (" PUSH_INTERVAL_COLS ") FORMAT "
			      "TabSeparated", PUSH_INSERT_SETTINGS, r.s, r.n, e);
	free(r.s);
	return ret < 0 ? error_prefix(e, "session %" PRId64 ", interval %u", g->s->id, k) : 0;
}

/*
 * The plan of session g->s: a part per interval the server has (iv[0..n)),
 * then, stopped, the last part (what follows them), or, running, the new
 * interval *niv of what was committed since the last, up to rowid cut
 * (*cutting: there is one).  *parts malloc'ed.
 */
static int plan_parts(struct gen *g, const struct push_interval *iv, size_t n, int64_t cut,
		      struct part **parts, size_t *nparts, struct push_interval *niv,
		      int *cutting, struct error *e)
{
	struct part *p = xcalloc(n + 1, sizeof(*p));
	uint32_t next_batch;
	int64_t lo, hi, next_row;
	size_t np = 0;

	*parts = p;
	*nparts = 0;
	*cutting = 0;
	sample_scan_range(g->s, &lo, &hi);
	for (size_t i = 0; i < n; i++) {
		p[np].lo = iv[i].first_row;
		p[np].hi = iv[i].last_row;
		p[np].first = iv[i].first_batch;
		p[np].end = iv[i].first_batch + iv[i].batches;
		p[np++].there = &iv[i];
	}
	push_plan_next(iv, n, lo, &next_row, &next_batch);
	if (g->running) {
		/* the comms of the samples up to the cut are committed */
		if (pushgen_comms(g, e) < 0)
			return -1;
		*cutting = push_plan_cut(iv, n, lo, cut, niv);
		if (*cutting) {
			p[np].lo = niv->first_row;
			p[np].hi = niv->last_row;
			p[np++].first = niv->first_batch;
		}
	} else {
		p[np].lo = next_row;
		p[np].hi = hi;
		p[np].first = next_batch;
		p[np++].final = 1;
	}
	*nparts = np;
	return 0;
}

/* what the server has of session g->s (content hash there, batches into
 * have[0..g->nbatches)) against what this push makes (hash, stopped):
 * -1 with e set when they do not go together */
static int check_there(struct gen *g, const char *hash, uint8_t *have, struct error *e)
{
	char there[80];
	int extra = 0;

	if (pushstate_session(g->c, g->host, g->s->id, there, sizeof(there), have, g->nbatches,
			      &extra, e) < 0)
		return -1;
	if (g->running && *there)
		return error_set(e, "session %" PRId64 " of host %.100s is in ClickHouse as "
				 "stopped, but runs here: push it under another --host, or drop "
				 "it there first", g->s->id, g->host);
	if (!g->running && *there && strcmp(there, hash))
		return error_set(e, "session %" PRId64 " of host %.100s is already in ClickHouse "
				 "with other content (hash %.40s, here %s): push it under another "
				 "--host, or drop it there first", g->s->id, g->host, there, hash);
	if (extra)
		return error_set(e, "ClickHouse holds batches of session %" PRId64 " of host "
				 "%.100s that this push does not make (the session changed since "
				 "it was pushed?)", g->s->id, g->host);
	return 0;
}

/* pass 2: the session's row (stopped, when the server lacks it), then
 * part by part the interval's row (the plan of its batches), its symbols
 * and its missing batches */
static int send_parts(struct gen *g, const char *hash, struct part *parts, size_t nparts,
		      const struct push_interval *niv, const uint8_t *have,
		      struct push_stats *st, struct error *e)
{
	if (!g->running && !have[0]) {
		struct sbuf row = { 0 };
		int ret;

		pushgen_session_row(g, hash, &row);
		ret = chclient_insert(g->c, "INSERT INTO sessions (" PUSH_SESSION_COLS ") FORMAT "
				      "TabSeparated", PUSH_INSERT_SETTINGS, row.s, row.n, e);
		free(row.s);
		if (ret < 0)
			return error_prefix(e, "session %" PRId64, g->s->id);
		g->sent++;
		g->rows_sent++;
	}
	for (size_t i = 0; i < nparts; i++) {
		struct part *pt = &parts[i];

		if (g->running && pt->there) {
			uint32_t b = pt->first;

			while (b < pt->end && have[b])
				b++;
			if (b == pt->end)
				continue;
			/* an interval cut by a strobed killed before it was
			 * sent: the same rows, checked */
			if (part_pass1(g, pt, e) < 0)
				return -1;
		}
		if (g->running && !pt->there) {
			if (send_interval(g, niv->k, niv->samples_total, pt, e) < 0)
				return -1;
			st->intervals_sent++;
		}
		if (part_send(g, pt, have, e) < 0)
			return -1;
	}
	return 0;
}

/*
 * Push session g->s: whole when it has stopped (after the intervals the
 * server has of it, if any), or, running (o->intervals), its intervals
 * the server lacks batches of and a new one of what was committed since
 * the last.
 */
static int push_session(struct gen *g, struct push_stats *st, const struct push_opts *o,
			struct error *e)
{
	char hash[33] = "", line[300];
	struct sbuf row = { 0 };
	uint8_t *have = NULL;
	struct push_interval *iv = NULL, niv = { 0 };
	struct part *parts = NULL;
	size_t niv_there = 0, nparts = 0;
	uint32_t missing = 0;
	int64_t cut = INT64_MIN;
	int ret = -1, running = !db_session_complete(g->s), cutting = 0;

	g->running = running;
	/*
	 * A running session: the cut (its last committed sample) first, its
	 * row after.  strobed writes the row in each commit of samples, so
	 * the row read now is at least as new as the cut, and its start_ns
	 * is the one the cut's samples are bucketed from (samples_by_time).
	 * The row read before the cut may be the one stored before capture
	 * began, whose start_ns the first commit moves to capture's start.
	 */
	if (running && (pushgen_committed(g, &cut, e) < 0 ||
			db_session_get(g->db, g->s->id, g->s, e) < 0))
		return -1;
	g->res = resolver_new(g->db, g->s, e);
	if (!g->res)
		return -1;
	if (g->worker)
		resolver_set_worker(g->res, g->worker);
	g->start_day = push_day(g->s->start_ns + g->s->wall_offset_ns);
	/* a session begun with other batches is resumed with its plan */
	g->batch_rows = g->default_rows;
	if (pushstate_batch_rows(g->c, g->host, g->s->id, &g->batch_rows, e) < 0 ||
	    pushstate_intervals(g->c, g->host, g->s->id, &iv, &niv_there, e) < 0)
		goto out;
	if (niv_there)
		g->batch_rows = iv[0].batch_rows;
	if (plan_parts(g, iv, niv_there, cut, &parts, &nparts, &niv, &cutting, e) < 0)
		goto out;
	/* pass 1: count and hash (of a running session, only its new
	 * interval: those there are checked when they lack batches) */
	progress_phase(g->progress, g->s->samples, "samples read");
	if (!running) {
		g->hash = XXH3_createState();
		XXH3_128bits_reset(g->hash);
	}
	for (size_t i = 0; i < nparts; i++)
		if ((!running || !parts[i].there) && part_pass1(g, &parts[i], e) < 0)
			goto out;
	g->nbatches = nparts ? parts[nparts - 1].end : 1;
	if (g->nbatches == 0)
		g->nbatches = 1;
	if (!running) {
		pushgen_session_row(g, "", &row);
		XXH3_128bits_update(g->hash, row.s, row.n);
		hash_hex(g->hash, hash);
	}
	/* what is there */
	have = xcalloc(g->nbatches, 1);
	if (check_there(g, hash, have, e) < 0)
		goto out;
	for (uint32_t i = 1; i < g->nbatches; i++)
		missing += !have[i];
	if (!running)
		missing += !have[0];
	st->sessions++;
	st->batches += g->nbatches;
	if (!missing) {
		if (running)
			snprintf(line, sizeof(line), "session %" PRId64 " of host %.100s: running, "
				 "nothing new (%zu intervals)", g->s->id, g->host, niv_there);
		else
			snprintf(line, sizeof(line), "session %" PRId64 " of host %.100s: already "
				 "pushed (%u batches)", g->s->id, g->host, g->nbatches);
		ret = 0;
		goto note;
	}
	if (send_parts(g, hash, parts, nparts, &niv, have, st, e) < 0)
		goto out;
	st->sessions_sent++;
	if (running)
		snprintf(line, sizeof(line), "session %" PRId64 " of host %.100s: running, %s"
			 "sent %u of %u batches", g->s->id, g->host, cutting ? "a new interval, " :
			 "", missing, g->nbatches - 1);
	else
		snprintf(line, sizeof(line), "session %" PRId64 " of host %.100s: sent %u of %u "
			 "batches", g->s->id, g->host, missing, g->nbatches);
	ret = 0;
note:
	if (o->note)
		o->note(o->note_arg, line);
out:
	st->batches_sent += g->sent;
	st->rows_sent += g->rows_sent;
	g->sent = g->rows_sent = 0;
	g->have = NULL;
	free(have);
	free(row.s);
	free(parts);
	free(iv);
	if (g->hash)
		XXH3_freeState(g->hash);
	g->hash = NULL;
	resolver_free(g->res);
	g->res = NULL;
	return ret;
}

/* the sessions to push: o's, or every stopped one (started since) */
static int list_sessions(struct db *db, const struct push_opts *o, int64_t **ids, size_t *n,
			 struct error *e)
{
	if (!o->nsessions)
		return pushgen_stopped(db, o->has_since, o->since_wall_ns, ids, n, e);
	*ids = xmalloc(o->nsessions * sizeof(**ids));
	memcpy(*ids, o->sessions, o->nsessions * sizeof(**ids));
	*n = o->nsessions;
	return 0;
}

int push_run(struct db *db, struct chclient *c, const struct push_opts *o,
	     struct push_stats *st, struct error *e)
{
	struct gen g;
	struct db_session s;
	int64_t *ids = NULL;
	size_t n = 0, k = 0, server_max = PUSH_BATCH_MAX;
	int ret = -1;

	memset(st, 0, sizeof(*st));
	memset(&g, 0, sizeof(g));
	g.db = db;
	g.c = c;
	g.host = o->host;
	g.progress = o->progress;
	g.default_rows = o->batch_rows ? o->batch_rows : PUSH_BATCH_ROWS;
	if (push_check_schema(c, e) < 0 || pushstate_batch_max(c, &server_max, e) < 0)
		return -1;
	if (g.default_rows > server_max)
		g.default_rows = server_max;
	if (g.default_rows > PUSH_BATCH_MAX)
		g.default_rows = PUSH_BATCH_MAX;
	otable_init(&g.locs, sizeof(struct loc), 16, 1024);
	reagg_init(&g.agg);
	if (list_sessions(db, o, &ids, &n, e) < 0)
		goto out;
	/* every session given must be there and stopped before anything
	 * goes; of all sessions, those not stored whole yet are left out */
	for (size_t i = 0; i < n; i++) {
		if (db_session_get(db, ids[i], &s, e) < 0)
			goto out;
		if (db_session_complete(&s) || (o->intervals && !strcmp(s.state, "running")))
			ids[k++] = ids[i];
		else if (o->nsessions && !o->intervals) {
			error_set(e, "session %" PRId64 " is %s: push it once it has stopped (and "
				  "strobed has finished writing it)", ids[i], s.state);
			goto out;
		}
	}
	n = k;
	if (n && o->parse_in_worker && !(g.worker = symworker_new(NULL, e))) {
		error_prefix(e, "naming code");
		goto out;
	}
	if (pushgen_comms(&g, e) < 0)
		goto out;
	for (size_t i = 0; i < n; i++) {
		if (db_session_get(db, ids[i], &s, e) < 0)
			goto out;
		g.s = &s;
		if (push_session(&g, st, o, e) < 0)
			goto out;
	}
	ret = 0;
out:
	if (g.worker) {
		struct symworker_stats ws;

		symworker_stats(g.worker, &ws);
		st->worker_started = ws.started;
		st->worker_crashes = ws.crashes;
		st->worker_timeouts = ws.timeouts;
		st->worker_failed = ws.failed;
		snprintf(st->worker_failed_names, sizeof(st->worker_failed_names), "%s",
			 ws.failed_names);
		symworker_free(g.worker);
	}
	otable_free(&g.locs);
	reagg_free(&g.agg);
	for (size_t i = 0; i < g.ncomms; i++)
		free(g.comms[i]);
	free(g.comms);
	free(ids);
	return ret;
}
