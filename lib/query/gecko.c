/*
 * gecko.c - the Firefox Profiler export (gecko.h): the samples of
 * stacks_scan() sorted into threads, each thread's stacks interned into
 * its stack, frame and string tables, then written as JSON.
 */
#include "config.h"
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include "flame.h"
#include "gecko.h"
#include "otable.h"

/* A u64 -> u32 map over otable: *map_slot() is the value + 1, 0 until set. */
struct map_ent {
	uint64_t key;
	uint32_t val;
};

static void map_init(struct otable *m)
{
	otable_init(m, sizeof(struct map_ent), sizeof(uint64_t), 64);
}

/* Valid until the next map_slot() on m. */
static uint32_t *map_slot(struct otable *m, uint64_t key)
{
	int added;
	struct map_ent *x = otable_get_sized(m, &key, sizeof(key), &added);

	return &x->val;
}

struct thread {
	uint32_t tid, pid;
	const char *comm;
	struct otable frames;		/* loc -> frame index */
	uint32_t *frame_loc;		/* frame index -> loc */
	size_t nr_frames, cap_frames;
	struct otable stacks;		/* (prefix + 1) << 32 | frame -> stack */
	struct { int64_t prefix; uint32_t frame; } *stack;
	size_t nr_stack, cap_stack;
	struct otable entries;		/* set entry -> stack */
	struct { uint32_t stack; int64_t time_ns; } *sample;
	size_t nr_samples, cap_samples;
};

struct gecko {
	const struct stack_set *set;
	struct thread *t;
	size_t nr, cap;
	struct otable by_tid;
};

static uint32_t frame_of(struct thread *t, uint32_t loc)
{
	uint32_t *v = map_slot(&t->frames, loc);

	if (!*v) {
		ARRAY_GROW(t->frame_loc, t->cap_frames, t->nr_frames + 1);
		t->frame_loc[t->nr_frames] = loc;
		*v = (uint32_t)++t->nr_frames;
	}
	return *v - 1;
}

static uint32_t stack_of(struct thread *t, int64_t prefix, uint32_t frame)
{
	uint32_t *v = map_slot(&t->stacks, (uint64_t)(prefix + 1) << 32 | frame);

	if (!*v) {
		ARRAY_GROW(t->stack, t->cap_stack, t->nr_stack + 1);
		t->stack[t->nr_stack].prefix = prefix;
		t->stack[t->nr_stack].frame = frame;
		*v = (uint32_t)++t->nr_stack;
	}
	return *v - 1;
}

int gecko_add(void *ctx, int64_t time_ns, uint32_t cpu, uint32_t tid, size_t entry,
	      struct error *e)
{
	struct gecko *g = ctx;
	const struct stack_entry *s;
	struct thread *t;
	uint32_t *ti, *si;

	if (entry >= g->set->nr_stacks)
		return error_set(e, "stack entry %zu out of range", entry);
	s = &g->set->stacks[entry];
	ti = map_slot(&g->by_tid, (uint64_t)s->pid << 32 | tid);
	if (!*ti) {
		ARRAY_GROW(g->t, g->cap, g->nr + 1);
		t = &g->t[g->nr];
		memset(t, 0, sizeof(*t));
		t->tid = tid;
		t->pid = s->pid;
		t->comm = s->comm;
		map_init(&t->frames);
		map_init(&t->stacks);
		map_init(&t->entries);
		*ti = (uint32_t)++g->nr;
	}
	t = &g->t[*ti - 1];
	t->comm = s->comm;	/* the latest name, as a thread renames itself */
	si = map_slot(&t->entries, entry);
	if (!*si) {
		int64_t prefix = -1;

		for (uint32_t k = s->nr; k-- > 0; )
			prefix = stack_of(t, prefix, frame_of(t, s->locs[k]));
		*si = prefix < 0 ? UINT32_MAX : (uint32_t)prefix + 1;
	}
	ARRAY_GROW(t->sample, t->cap_samples, t->nr_samples + 1);
	t->sample[t->nr_samples].stack = *si;	/* stack + 1; UINT32_MAX: empty */
	t->sample[t->nr_samples++].time_ns = time_ns;
	(void)cpu;
	return 0;
}

static void json_str(FILE *f, const char *s)
{
	size_t len = strlen(s) + 1;
	char *buf = xmalloc(len);
	char *p;

	flame_sanitize(s, buf, len);
	/* keep ';': JSON does not mind it */
	for (p = buf; *p; p++)
		if (*p == ':' && s[p - buf] == ';')
			*p = ';';
	json_write_string(f, buf);
	free(buf);
}

static void write_thread(FILE *f, const struct stack_set *set, const struct thread *t)
{
	char name[1024], bin[256];

	fputs("{\"name\":", f);
	json_str(f, t->comm ? t->comm : "[unknown]");
	fprintf(f, ",\"processType\":\"default\",\"registerTime\":0,\"unregisterTime\":null,"
		"\"pid\":%" PRIu32 ",\"tid\":%" PRIu32 ",\n", t->pid, t->tid);
	fputs("\"markers\":{\"schema\":{\"name\":0,\"startTime\":1,\"endTime\":2,\"phase\":3,"
	      "\"category\":4,\"data\":5},\"data\":[]},\n", f);
	fputs("\"samples\":{\"schema\":{\"stack\":0,\"time\":1,\"responsiveness\":2},\"data\":[", f);
	for (size_t i = 0; i < t->nr_samples; i++) {
		uint32_t st = t->sample[i].stack;

		if (st == UINT32_MAX)
			fprintf(f, "%s[null,", i ? "," : "");
		else
			fprintf(f, "%s[%" PRIu32 ",", i ? "," : "", st - 1);
		fprintf(f, "%.6f,0]", t->sample[i].time_ns / 1e6);
		if (i % 8 == 7)
			fputc('\n', f);
	}
	fputs("]},\n\"stackTable\":{\"schema\":{\"prefix\":0,\"frame\":1},\"data\":[", f);
	for (size_t i = 0; i < t->nr_stack; i++) {
		if (t->stack[i].prefix < 0)
			fprintf(f, "%s[null,%" PRIu32 "]", i ? "," : "", t->stack[i].frame);
		else
			fprintf(f, "%s[%" PRId64 ",%" PRIu32 "]", i ? "," : "", t->stack[i].prefix,
				t->stack[i].frame);
	}
	fputs("]},\n\"frameTable\":{\"schema\":{\"location\":0,\"relevantForJS\":1,"
	      "\"innerWindowID\":2,\"implementation\":3,\"optimizations\":4,\"line\":5,"
	      "\"column\":6,\"category\":7,\"subcategory\":8},\"data\":[", f);
	for (size_t i = 0; i < t->nr_frames; i++) {
		uint32_t loc = t->frame_loc[i];
		int kernel = loc < set->nr_locs && set->locs[loc].sym < set->nr_syms &&
			     set->syms[set->locs[loc].sym].kernel;

		/* the frame's string is stringTable[i] */
		fprintf(f, "%s[%zu,false,0,null,null,null,null,%d,null]", i ? "," : "", i,
			kernel);
	}
	fputs("]},\n\"stringTable\":[", f);
	for (size_t i = 0; i < t->nr_frames; i++) {
		uint32_t loc = t->frame_loc[i];
		const char *b = "?";
		char *p;

		if (loc < set->nr_locs && set->locs[loc].sym < set->nr_syms &&
		    set->syms[set->locs[loc].sym].binary) {
			b = set->syms[set->locs[loc].sym].binary;
			if (strrchr(b, '/') && strrchr(b, '/')[1])
				b = strrchr(b, '/') + 1;
		}
		snprintf(bin, sizeof(bin), "%s", b);
		for (p = bin; *p; p++)
			if (*p == '(' || *p == ')')
				*p = '_';
		flame_frame_name(set, loc, 0, name, sizeof(name));
		if (!strncmp(name, "[unknown] (", 11))
			snprintf(name, sizeof(name), "[unknown]");
		fputs(i ? "," : "", f);
		{
			char *loc_s = xasprintf("%s (in %s)", name, bin);

			json_str(f, loc_s);
			free(loc_s);
		}
		if (i % 8 == 7)
			fputc('\n', f);
	}
	fputs("]}", f);
}

struct gecko *gecko_new(const struct stack_set *set)
{
	struct gecko *g = xcalloc(1, sizeof(*g));

	g->set = set;
	map_init(&g->by_tid);
	return g;
}

int gecko_finish(struct gecko *g, FILE *f, struct error *e)
{
	const struct stack_set *set = g->set;
	const struct db_session *s = &set->session;
	double interval = 1;

	if (s->sample_freq > 0)
		interval = 1000.0 / s->sample_freq;
	else if (s->sample_period > 0 && !strcmp(s->sample_event, "cpu-clock"))
		interval = s->sample_period / 1e6;
	fputs("{\"meta\":{\"version\":24,\"presymbolicated\":true,\"processType\":0,"
	      "\"stackwalk\":1,\"debug\":0,\"gcpoison\":0,\"asyncstack\":0,", f);
	fprintf(f, "\"interval\":%.6f,\"startTime\":%.3f,\"shutdownTime\":null,", interval,
		(s->start_ns + s->wall_offset_ns) / 1e6);
	fprintf(f, "\"product\":\"strobe session %lld\",", (long long)s->id);
	fputs("\"categories\":[{\"name\":\"User\",\"color\":\"yellow\",\"subcategories\":"
	      "[\"Other\"]},{\"name\":\"Kernel\",\"color\":\"orange\",\"subcategories\":"
	      "[\"Other\"]}],\"markerSchema\":[]},\n\"libs\":[],\"processes\":[],"
	      "\"pausedRanges\":[],\n\"threads\":[\n", f);
	for (size_t i = 0; i < g->nr; i++) {
		if (i)
			fputs(",\n", f);
		write_thread(f, set, &g->t[i]);
	}
	fputs("\n]}\n", f);
	if (ferror(f))
		return error_set(e, "writing the profile failed");
	return 0;
}

void gecko_free(struct gecko *g)
{
	if (!g)
		return;
	for (size_t i = 0; i < g->nr; i++) {
		otable_free(&g->t[i].frames);
		otable_free(&g->t[i].stacks);
		otable_free(&g->t[i].entries);
		free(g->t[i].frame_loc);
		free(g->t[i].stack);
		free(g->t[i].sample);
	}
	free(g->t);
	otable_free(&g->by_tid);
	free(g);
}

int gecko_write(struct db *db, const struct stack_set *set, const struct report_opts *o,
		FILE *f, struct error *e)
{
	struct gecko *g = gecko_new(set);
	int ret = stacks_scan(db, set, o, gecko_add, g, e);

	if (ret >= 0)
		ret = gecko_finish(g, f, e);
	gecko_free(g);
	return ret < 0 ? -1 : 0;
}
