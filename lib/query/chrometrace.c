/*
 * chrometrace.c - the Chrome trace writer of 'strobe export --format
 * chrome-trace', shared by the local and the fleet export (chrometrace.h).
 */
#include "config.h"
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "chrometrace.h"
#include "report.h"

struct chrometrace_track {
	int64_t bucket;			/* being summed; INT64_MIN: none yet */
	int64_t last_end;		/* end (ns since start) of the last bucket shown */
	uint64_t *sum;			/* per event, of this bucket */
	uint64_t *shown;		/* per event, the value the track shows */
	int started;
};

/* ---- threads seen ---- */

/* An otable entry: a thread's (pid, tid) and its index in ct->th. */
struct thread_idx {
	int64_t pid, tid;
	size_t i;
};

static struct chrometrace_thread *thread_get(struct chrometrace *ct,
					     const struct chrometrace_session *s,
					     int64_t pid, uint32_t tid)
{
	const int64_t key[2] = { pid, tid };
	struct chrometrace_thread *th;
	int added;
	struct thread_idx *x = otable_get_sized(&ct->idx, key, sizeof(key), &added);

	if (!added)
		return &ct->th[x->i];
	ARRAY_GROW(ct->th, ct->cap, ct->nth + 1);
	th = &ct->th[ct->nth];
	memset(th, 0, sizeof(*th));
	th->s = s;
	th->pid = pid;
	th->tid = tid;
	x->i = ct->nth++;
	return th;
}

static int thread_cmp(const void *pa, const void *pb)
{
	const struct chrometrace_thread *a = pa, *b = pb;

	if (a->pid != b->pid)
		return a->pid < b->pid ? -1 : 1;
	return (a->tid > b->tid) - (a->tid < b->tid);
}

/* ---- events ---- */

/* A pid or tid as the trace shows it: a Linux pid is below PID_MAX_LIMIT
 * (the counters' pid); anything else (-1 read as unsigned, or a value
 * no kernel writes) is the "no task" pseudo-process. */
static int64_t trace_id(int64_t id)
{
	return id >= 0 && id < CHROMETRACE_COUNTERS_PID ? id : CHROMETRACE_NOTASK_PID;
}

/* ,"key":value: a JSON string, or a number */
static void kv_json(struct ob *ob, const char *key, const char *v)
{
	ob_printf(ob, ",\"%s\":", key);
	ob_json(ob, v);
}

static void kv_i64(struct ob *ob, const char *key, int64_t v)
{
	ob_printf(ob, ",\"%s\":", key);
	ob_i64(ob, v);
}

void chrometrace_begin(struct chrometrace *ct, struct ob *ob, int64_t bucket_ns, int samples)
{
	memset(ct, 0, sizeof(*ct));
	otable_init(&ct->idx, sizeof(struct thread_idx), 2 * sizeof(int64_t), 256);
	ct->ob = ob;
	ct->bucket_ns = bucket_ns;
	ct->samples = samples;
	ct->first = 1;
	ob_str(ob, "{\"traceEvents\":[");
}

/* Start a trace event: the separator and {"ph":"<ph>","ts":<us>,"pid":<pid>,"tid":<tid> */
static void ev_begin(struct chrometrace *ct, const struct chrometrace_session *s,
		     const char *ph, int64_t time_ns, int64_t pid, int64_t tid)
{
	struct ob *o = ct->ob;

	ob_str(o, ct->first ? "\n" : ",\n");
	ct->first = 0;
	ob_str(o, "{\"ph\":\"");
	ob_str(o, ph);
	ob_str(o, "\",\"ts\":");
	ob_us(o, time_ns - s->start_ns);
	ob_str(o, ",\"pid\":");
	ob_i64(o, pid);
	ob_str(o, ",\"tid\":");
	ob_i64(o, tid);
}

static void counter_point(struct chrometrace *ct, int cpu, int ev, int64_t rel_ns, uint64_t v)
{
	const struct chrometrace_session *s = ct->cur;
	struct ob *o = ct->ob;
	char name[160];

	ev_begin(ct, s, "C", s->start_ns + rel_ns, s->pid_base + CHROMETRACE_COUNTERS_PID, 0);
	ob_str(o, ",\"name\":");
	snprintf(name, sizeof(name), "%s cpu%d", s->events[ev], cpu);
	ob_json(o, name);
	ob_str(o, ",\"args\":{\"value\":");
	ob_u64(o, v);
	ob_str(o, "}}");
}

/* Show the bucket t has summed: a drop to 0 after a gap, then the value
 * where it changed. */
static void track_flush(struct chrometrace *ct, struct chrometrace_track *t, int cpu)
{
	int64_t B = ct->bucket_ns, start = t->bucket * B;

	if (t->bucket == INT64_MIN)
		return;
	for (int i = 0; i < ct->cur->nev; i++) {
		if (t->started && t->last_end < start && t->shown[i]) {
			counter_point(ct, cpu, i, t->last_end, 0);
			t->shown[i] = 0;
		}
		if (!t->started || t->sum[i] != t->shown[i]) {
			counter_point(ct, cpu, i, start, t->sum[i]);
			t->shown[i] = t->sum[i];
		}
		t->sum[i] = 0;
	}
	t->started = 1;
	t->last_end = start + B;
}

static int64_t floor_div(int64_t a, int64_t b)
{
	int64_t q = a / b;

	return (a % b && (a < 0) != (b < 0)) ? q - 1 : q;
}

/* The last buckets of the current session's tracks, then back to 0 after
 * them; the tracks are then dropped. */
void chrometrace_samples_end(struct chrometrace *ct)
{
	for (size_t c = 0; c < ct->ntracks; c++) {
		struct chrometrace_track *t = &ct->tracks[c];

		track_flush(ct, t, (int)c);
		for (int i = 0; t->started && i < ct->cur->nev; i++)
			if (t->shown[i])
				counter_point(ct, (int)c, i, t->last_end, 0);
	}
	for (size_t c = 0; c < ct->ntracks; c++) {
		free(ct->tracks[c].sum);
		free(ct->tracks[c].shown);
	}
	free(ct->tracks);
	ct->tracks = NULL;
	ct->ntracks = 0;
}

void chrometrace_sample(struct chrometrace *ct, const struct chrometrace_session *s,
			const struct chrometrace_sample *smp)
{
	struct ob *o = ct->ob;
	int64_t pid = s->pid_base + trace_id(smp->pid);
	uint32_t tid = (uint32_t)trace_id(smp->tid);
	struct chrometrace_thread *th;
	int i;

	if (ct->cur != s) {
		if (ct->cur)
			chrometrace_samples_end(ct);
		ct->cur = s;
	}
	th = thread_get(ct, s, pid, tid);
	if (smp->comm && *smp->comm && (!th->comm || strcmp(th->comm, smp->comm))) {
		free(th->comm);
		th->comm = xstrdup(smp->comm);
	}
	if (ct->samples) {
		ev_begin(ct, s, "i", smp->time_ns, pid, tid);
		ob_str(o, ",\"s\":\"t\",\"cat\":\"sample\",\"name\":");
		ob_json(o, smp->symbol);
		ob_str(o, ",\"args\":{\"binary\":");
		ob_json(o, smp->binary);
		ob_str(o, ",\"cpu\":");
		ob_u64(o, smp->cpu);
		for (i = 0; i < s->nev; i++) {
			ob_chr(o, ',');
			ob_json(o, s->events[i]);
			ob_chr(o, ':');
			ob_u64(o, smp->c[i]);
		}
		ob_str(o, "}}");
	}
	if (s->nev && smp->cpu < 65536) {
		int64_t b = floor_div(smp->time_ns - s->start_ns, ct->bucket_ns);
		struct chrometrace_track *t;

		if (smp->cpu >= ct->ntracks) {
			size_t n = smp->cpu + 1;

			ct->tracks = xrealloc(ct->tracks, n * sizeof(*ct->tracks));
			for (; ct->ntracks < n; ct->ntracks++) {
				t = &ct->tracks[ct->ntracks];
				memset(t, 0, sizeof(*t));
				t->bucket = INT64_MIN;
				t->sum = xcalloc((size_t)s->nev, sizeof(uint64_t));
				t->shown = xcalloc((size_t)s->nev, sizeof(uint64_t));
			}
		}
		t = &ct->tracks[smp->cpu];
		if (t->bucket != b) {
			track_flush(ct, t, (int)smp->cpu);
			t->bucket = b;
		}
		for (i = 0; i < s->nev; i++)
			t->sum[i] += smp->c[i];
	}
	ct->rows++;
}

void chrometrace_marker(struct chrometrace *ct, const struct chrometrace_session *s,
			const struct chrometrace_marker *m)
{
	struct ob *o = ct->ob;
	const char *kind = m->kind ? m->kind : "";
	int64_t pid = m->has_pid ? trace_id(m->pid) : CHROMETRACE_COUNTERS_PID;
	int64_t tid = m->has_tid ? trace_id(m->tid) : m->has_pid ? pid : 0;
	int global = strcmp(kind, "usdt") || !m->has_pid;

	ev_begin(ct, s, "i", m->time_ns, s->pid_base + pid, tid);
	ob_str(o, global ? ",\"s\":\"g\"" : ",\"s\":\"t\"");
	ob_str(o, ",\"cat\":\"marker\",\"name\":");
	ob_json(o, m->name);
	ob_str(o, ",\"args\":{\"kind\":");
	ob_json(o, kind);
	if (m->args)
		kv_json(o, "args", m->args);
	if (m->has_cpu)
		kv_i64(o, "cpu", m->cpu);
	if (m->has_pid)
		kv_i64(o, "pid", m->pid);	/* as recorded */
	ob_str(o, "}}");
	if (m->has_pid)
		thread_get(ct, s, s->pid_base + pid, (uint32_t)tid);
}

void chrometrace_lost(struct chrometrace *ct, const struct chrometrace_session *s,
		      int64_t time_ns, int64_t cpu, int64_t count, const char *kind)
{
	struct ob *o = ct->ob;
	char name[160];

	kind = kind ? kind : "";
	if (!strcmp(kind, "throttle"))
		snprintf(name, sizeof(name), "throttled on cpu%lld", (long long)cpu);
	else
		snprintf(name, sizeof(name), "lost %lld samples (%s) on cpu%lld",
			 (long long)count, report_lost_kind(kind), (long long)cpu);
	ev_begin(ct, s, "i", time_ns, s->pid_base + CHROMETRACE_COUNTERS_PID, 0);
	ob_str(o, ",\"s\":\"g\",\"cat\":\"lost\",\"name\":");
	ob_json(o, name);
	ob_str(o, ",\"args\":{\"cpu\":");
	ob_i64(o, cpu);
	kv_i64(o, "count", count);
	kv_json(o, "kind", kind);
	ob_str(o, "}}");
}

/* ---- metadata ---- */

static void meta_event(struct chrometrace *ct, const struct chrometrace_session *s,
		       const char *what, int64_t pid, int64_t tid, const char *name)
{
	struct ob *o = ct->ob;

	ev_begin(ct, s, "M", s->start_ns, pid, tid);
	ob_str(o, ",\"name\":\"");
	ob_str(o, what);
	ob_str(o, "\",\"args\":{\"name\":");
	if (s->label) {
		/* a process of one of several sessions: "LABEL: name" */
		char buf[512];

		snprintf(buf, sizeof(buf), "%s: %s", s->label, name ? name : "");
		ob_json(o, strcmp(what, "process_name") ? name : buf);
	} else {
		ob_json(o, name);
	}
	ob_str(o, "}}");
}

int chrometrace_names(struct chrometrace *ct, const struct chrometrace_session *ss, size_t n,
		      int (*proc_name)(void *ctx, const struct chrometrace_session *s,
				       uint32_t pid, const char **name, struct error *e),
		      void *ctx, struct error *e)
{
	struct chrometrace_thread *ts = ct->th;
	size_t i, j;

	if (ct->nth)
		qsort(ts, ct->nth, sizeof(*ts), thread_cmp);
	otable_free(&ct->idx);		/* no thread_get() after the sort */
	for (i = 0; i < n; i++)
		meta_event(ct, &ss[i], "process_name", ss[i].pid_base + CHROMETRACE_COUNTERS_PID,
			   0, "CPU counters");
	for (i = 0; i < ct->nth; i = j) {
		const struct chrometrace_session *s = ts[i].s;
		int64_t pid = ts[i].pid;
		uint32_t raw = (uint32_t)(pid - s->pid_base);
		const char *pcomm = NULL, *name = NULL;

		for (j = i; j < ct->nth && ts[j].pid == pid; j++)
			if (!pcomm || ts[j].tid == raw)
				pcomm = ts[j].comm ? ts[j].comm : pcomm;
		if (raw == CHROMETRACE_NOTASK_PID)
			name = "no task";
		else if (proc_name(ctx, s, raw, &name, e) < 0)
			return -1;
		if (name)
			pcomm = name;
		if (pcomm)
			meta_event(ct, s, "process_name", pid, raw, pcomm);
		for (size_t k = i; k < j; k++)
			if (ts[k].comm)
				meta_event(ct, s, "thread_name", pid, ts[k].tid, ts[k].comm);
	}
	return 0;
}

/* ---- otherData ---- */

static void session_fields(struct ob *ob, const struct db_session *s)
{
	int64_t wall = s->start_ns + s->wall_offset_ns;
	time_t t = (time_t)(wall / 1000000000);
	char buf[64];
	struct tm tm;

	ob_str(ob, "\"session\":");
	ob_i64(ob, s->id);
	kv_json(ob, "session_name", s->name);
	kv_json(ob, "hostname", s->hostname);
	kv_json(ob, "kernel_release", s->kernel_release);
	kv_json(ob, "backend", s->backend);
	kv_i64(ob, "nr_cpus", s->nr_cpus);
	kv_json(ob, "sample_event", s->sample_event);
	if (s->sample_freq)
		kv_i64(ob, "sample_freq", s->sample_freq);
	if (s->sample_period)
		kv_i64(ob, "sample_period", s->sample_period);
	ob_str(ob, ",\"events\":[");
	for (int i = 0; i < s->nr_events; i++) {
		if (i)
			ob_chr(ob, ',');
		ob_json(ob, s->events[i].name);
	}
	ob_str(ob, "],\"ts_origin\":\"the session start: CLOCK_MONOTONIC start_monotonic_ns\"");
	kv_i64(ob, "start_monotonic_ns", s->start_ns);
	kv_i64(ob, "wall_offset_ns", s->wall_offset_ns);
	buf[0] = 0;
	if (wall > 0 && gmtime_r(&t, &tm)) {
		size_t n = strftime(buf, sizeof(buf), "%Y-%m-%dT%H:%M:%S", &tm);

		snprintf(buf + n, sizeof(buf) - n, ".%09lldZ", (long long)(wall % 1000000000));
	}
	kv_json(ob, "start_utc", buf);
	if (s->duration_ns > 0)
		kv_i64(ob, "duration_ns", s->duration_ns);
}

void chrometrace_end(struct chrometrace *ct, const struct chrometrace_info *in)
{
	struct ob *ob = ct->ob;

	ob_str(ob, "\n],\n\"displayTimeUnit\":\"ms\",\n");
	ob_str(ob, "\"otherData\":{\"generator\":\"strobe " PACKAGE_VERSION "\",");
	if (in->n == 1) {
		session_fields(ob, in->s[0]);
	} else {
		ob_str(ob, "\"sessions\":[");
		for (size_t i = 0; i < in->n; i++) {
			ob_str(ob, i ? ",{" : "{");
			session_fields(ob, in->s[i]);
			kv_i64(ob, "pid_base", (int64_t)i * CHROMETRACE_PID_SPAN);
			ob_chr(ob, '}');
		}
		ob_chr(ob, ']');
	}
	ob_str(ob, ",\"counter_bucket_us\":");
	ob_us(ob, ct->bucket_ns);
	kv_i64(ob, "counters_pid", CHROMETRACE_COUNTERS_PID);
	ob_str(ob, ",\"samples\":");
	ob_u64(ob, ct->rows);
	kv_json(ob, "filters", in->filters[0] ? in->filters + 1 : "");
	ob_chr(ob, '}');
	ob_str(ob, "}\n");
}

void chrometrace_filters(char *buf, size_t len, int64_t pid, const char *comm, int has_from,
			 int64_t from_ns, int has_to, int64_t to_ns)
{
	size_t n = 0;

	buf[0] = 0;
	if (pid >= 0)
		n += snprintf(buf + n, len - n, " pid=%lld", (long long)pid);
	if (comm && n < len)
		n += snprintf(buf + n, len - n, " comm=%s", comm);
	if (has_from && n < len)
		n += snprintf(buf + n, len - n, " from=%.9gs", from_ns / 1e9);
	if (has_to && n < len)
		snprintf(buf + n, len - n, " to=%.9gs", to_ns / 1e9);
}

void chrometrace_free(struct chrometrace *ct)
{
	for (size_t i = 0; i < ct->nth; i++)
		free(ct->th[i].comm);
	free(ct->th);
	otable_free(&ct->idx);
	for (size_t c = 0; c < ct->ntracks; c++) {
		free(ct->tracks[c].sum);
		free(ct->tracks[c].shown);
	}
	free(ct->tracks);
	memset(ct, 0, sizeof(*ct));
}
