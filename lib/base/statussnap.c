/*
 * statussnap.c - strobed's status reply as numbers, and the rates
 * between two replies (see statussnap.h).
 */
#include "config.h"
#include <stdlib.h>
#include <string.h>
#include "statussnap.h"

void status_snap_free(struct status_snap *s)
{
	free(s->cpu);
	free(s->cpu_samples);
	free(s->cpu_lost);
	free(s->db);
	free(s->note);
	memset(s, 0, sizeof(*s));
}

static uint64_t get_u64(const struct proto_msg *m, const char *key)
{
	const char *v = proto_get(m, key);

	return v ? strtoull(v, NULL, 10) : 0;
}

/* A list "N,N,..." of at most max numbers into v; the count. */
static int parse_list(const char *s, uint64_t *v, int max)
{
	int n = 0;

	while (s && *s && n < max) {
		char *end;

		v[n++] = strtoull(s, &end, 10);
		if (*end != ',')
			break;
		s = end + 1;
	}
	return n;
}

/* The per-CPU lists cpus=, cpu_samples=, cpu_lost= of m into s. */
static void snap_cpus(struct status_snap *s, const struct proto_msg *m)
{
	const char *v;
	uint64_t *tmp;
	int max = 1, n;

	for (v = proto_get(m, "cpus"); v && *v; v++)
		max += *v == ',';
	s->cpu = xcalloc(max, sizeof(*s->cpu));
	s->cpu_samples = xcalloc(max, sizeof(*s->cpu_samples));
	s->cpu_lost = xcalloc(max, sizeof(*s->cpu_lost));
	tmp = xcalloc(max, sizeof(*tmp));
	n = parse_list(proto_get(m, "cpus"), tmp, max);
	for (int i = 0; i < n; i++)
		s->cpu[i] = (long)tmp[i];
	free(tmp);
	/* a strobed that sends no per-CPU counts: none shown */
	if (parse_list(proto_get(m, "cpu_samples"), s->cpu_samples, max) != n ||
	    parse_list(proto_get(m, "cpu_lost"), s->cpu_lost, max) != n)
		n = 0;
	s->nr = n;
}

void status_snap_take(struct status_snap *s, const struct proto_msg *m)
{
	const char *v;

	memset(s, 0, sizeof(*s));
	v = proto_get(m, "running");
	s->running = v && !strcmp(v, "1");
	s->db = xstrdup(proto_get(m, "db") ? proto_get(m, "db") : "?");
	s->have_db_bytes = proto_get(m, "db_bytes") != NULL;
	s->db_bytes = get_u64(m, "db_bytes");
	s->db_wal_bytes = get_u64(m, "db_wal_bytes");
	if (proto_get(m, "stopping"))
		s->note = xstrdup("stopping: the stop waits until the session can be stored");
	else if (proto_get(m, "blocked_ms"))
		s->note = xasprintf("database locked for %.1f s by %s",
				    get_u64(m, "blocked_ms") / 1e3,
				    proto_get(m, "lock_holder") ? proto_get(m, "lock_holder") : "?");
	else if (proto_get(m, "removing"))
		s->note = xstrdup("removing sessions: their rows are being deleted");
	if (!s->running)
		return;
	s->session = atoll(proto_get(m, "session") ? proto_get(m, "session") : "0");
	s->elapsed = get_u64(m, "elapsed_ns") / 1e9;
	s->stored = get_u64(m, "samples");
	/* a strobed without taken= (older): what it stored */
	s->samples = proto_get(m, "taken") ? get_u64(m, "taken") : s->stored;
	s->lost = get_u64(m, "lost");
	s->lag_records = get_u64(m, "lag_records");
	s->lag_ns = get_u64(m, "lag_ns");
	s->deferred_ns = get_u64(m, "ingest_deferred_ns");
	s->spool_mem = get_u64(m, "spool_mem");
	s->spool_disk = get_u64(m, "spool_disk");
	s->spool_mem_max = get_u64(m, "spool_mem_max");
	s->spool_disk_max = get_u64(m, "spool_disk_max");
	s->nr_cpus = (int)get_u64(m, "nr_cpus");
	snap_cpus(s, m);
}

void status_rates_get(struct status_rates *r, const struct status_snap *prev,
		      const struct status_snap *cur)
{
	int same = prev->running && prev->session == cur->session &&
		   cur->elapsed > prev->elapsed;

	r->dt = same ? cur->elapsed - prev->elapsed : cur->elapsed;
	r->samples = r->dt > 0 ? ((double)cur->samples - (same ? (double)prev->samples : 0)) / r->dt
			       : 0;
	r->lost = (int64_t)(cur->lost - (same ? prev->lost : 0));
	r->cpu_samples = xcalloc(cur->nr + 1, sizeof(*r->cpu_samples));
	r->cpu_lost = xcalloc(cur->nr + 1, sizeof(*r->cpu_lost));
	for (int i = 0; i < cur->nr; i++) {
		uint64_t ps = 0, pl = 0;

		for (int j = 0; same && j < prev->nr; j++)
			if (prev->cpu[j] == cur->cpu[i]) {
				ps = prev->cpu_samples[j];
				pl = prev->cpu_lost[j];
				break;
			}
		r->cpu_samples[i] = r->dt > 0 ? ((double)cur->cpu_samples[i] - (double)ps) / r->dt
					      : 0;
		r->cpu_lost[i] = (int64_t)(cur->cpu_lost[i] - pl);
	}
}

void status_rates_free(struct status_rates *r)
{
	free(r->cpu_samples);
	free(r->cpu_lost);
}
