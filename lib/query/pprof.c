/*
 * pprof.c - the pprof export (pprof.h): a minimal protobuf encoder
 * (varints and length-delimited fields, all profile.proto needs), the
 * Profile message built from a stack_set, and gzip through zlib.
 */
#include "config.h"
#include <stdlib.h>
#include <string.h>
#include <zlib.h>
#include "flame.h"
#include "otable.h"
#include "pprof.h"

/* profile.proto field numbers */
enum {
	P_SAMPLE_TYPE = 1, P_SAMPLE = 2, P_MAPPING = 3, P_LOCATION = 4, P_FUNCTION = 5,
	P_STRING_TABLE = 6, P_TIME_NANOS = 9, P_DURATION_NANOS = 10, P_PERIOD_TYPE = 11,
	P_PERIOD = 12, P_COMMENT = 13, P_DEFAULT_SAMPLE_TYPE = 14,
	VT_TYPE = 1, VT_UNIT = 2,
	S_LOCATION_ID = 1, S_VALUE = 2, S_LABEL = 3,
	L_KEY = 1, L_STR = 2, L_NUM = 3,
	M_ID = 1, M_MEMORY_START = 2, M_MEMORY_LIMIT = 3, M_FILE_OFFSET = 4,
	M_FILENAME = 5, M_BUILD_ID = 6, M_HAS_FUNCTIONS = 7,
	LOC_ID = 1, LOC_MAPPING_ID = 2, LOC_ADDRESS = 3, LOC_LINE = 4,
	LINE_FUNCTION_ID = 1,
	F_ID = 1, F_NAME = 2, F_SYSTEM_NAME = 3,
};

static void pb_room(struct pb *b, size_t len)
{
	if (b->n + len > b->cap) {
		size_t cap = b->cap ? b->cap * 2 : 256;

		while (cap < b->n + len)
			cap *= 2;
		b->buf = xrealloc(b->buf, cap);
		b->cap = cap;
	}
}

void pb_varint(struct pb *b, uint64_t v)
{
	pb_room(b, 10);
	while (v >= 0x80) {
		b->buf[b->n++] = (unsigned char)(v | 0x80);
		v >>= 7;
	}
	b->buf[b->n++] = (unsigned char)v;
}

void pb_uint(struct pb *b, uint32_t field, uint64_t v)
{
	pb_varint(b, (uint64_t)field << 3 | 0);
	pb_varint(b, v);
}

void pb_bytes(struct pb *b, uint32_t field, const void *p, size_t len)
{
	pb_varint(b, (uint64_t)field << 3 | 2);
	pb_varint(b, len);
	pb_room(b, len);
	if (len)
		memcpy(b->buf + b->n, p, len);
	b->n += len;
}

/* Append sub as field of b, and empty sub for reuse. */
static void pb_sub(struct pb *b, uint32_t field, struct pb *sub)
{
	pb_bytes(b, field, sub->buf, sub->n);
	sub->n = 0;
}

void pb_free(struct pb *b)
{
	free(b->buf);
	b->buf = NULL;
	b->n = b->cap = 0;
}

/* ---- the string table ---- */

struct strtab {
	char **s;			/* in index order: idx's keys */
	size_t nr, cap;
	struct otable idx;		/* string -> index (struct strtab_ent) */
};

struct strtab_ent {
	char *key;
	uint64_t i;
};

static void strtab_init(struct strtab *t)
{
	memset(t, 0, sizeof(*t));
	otable_init_str(&t->idx, sizeof(struct strtab_ent), 256);
}

/* The index of s (valid UTF-8 made of it), added when new. */
static uint64_t str(struct strtab *t, const char *raw)
{
	size_t len = strlen(raw) + 1;
	char *s = xmalloc(len);
	struct strtab_ent *x;
	int added;

	flame_sanitize(raw, s, len);
	/* flame_sanitize turns ';' into ':': keep the original ones */
	for (size_t i = 0; raw[i] && i < len - 1; i++)
		if (raw[i] == ';' && s[i] == ':')
			s[i] = ';';
	x = otable_get_str(&t->idx, s, &added);
	free(s);
	if (added) {
		ARRAY_GROW(t->s, t->cap, t->nr + 1);
		t->s[t->nr] = x->key;
		x->i = t->nr++;
	}
	return x->i;
}

static void strtab_free(struct strtab *t)
{
	otable_free(&t->idx);		/* the strings of t->s */
	free(t->s);
}

static void value_type(struct pb *out, struct pb *sub, uint32_t field, uint64_t type,
		       uint64_t unit)
{
	pb_uint(sub, VT_TYPE, type);
	pb_uint(sub, VT_UNIT, unit);
	pb_sub(out, field, sub);
}

static int is_clock(const char *ev)
{
	return !strcmp(ev, "cpu-clock") || !strcmp(ev, "task-clock");
}

/* The mappings (one per binary, in order of first use by a location) and
 * the locations of set.  The strings they name go into st in this order:
 * it is the string table's. */
static void encode_locations(const struct stack_set *set, struct strtab *st, struct pb *sub,
			     struct pb *sub2, struct pb *out)
{
	struct map { int64_t binary_id; uint64_t lo, hi; uint32_t sym; } *maps = NULL;
	size_t nr_maps = 0, cap_maps = 0;
	uint32_t *loc_map = xcalloc(set->nr_locs ? set->nr_locs : 1, sizeof(*loc_map));

	for (size_t i = 0; i < set->nr_locs; i++) {
		const struct stack_loc *l = &set->locs[i];
		size_t m;

		for (m = 0; m < nr_maps && maps[m].binary_id != l->binary_id; m++)
			;
		if (m == nr_maps) {
			ARRAY_GROW(maps, cap_maps, nr_maps + 1);
			maps[m].binary_id = l->binary_id;
			maps[m].lo = maps[m].hi = l->offset;
			maps[m].sym = l->sym;
			nr_maps++;
		}
		if (l->offset < maps[m].lo)
			maps[m].lo = l->offset;
		if (l->offset > maps[m].hi)
			maps[m].hi = l->offset;
		loc_map[i] = (uint32_t)m;
	}
	for (size_t m = 0; m < nr_maps; m++) {
		const struct stack_sym *sy = maps[m].sym < set->nr_syms ? &set->syms[maps[m].sym] : NULL;

		pb_uint(sub, M_ID, m + 1);
		pb_uint(sub, M_MEMORY_START, maps[m].lo);
		pb_uint(sub, M_MEMORY_LIMIT, maps[m].hi == UINT64_MAX ? UINT64_MAX : maps[m].hi + 1);
		pb_uint(sub, M_FILE_OFFSET, maps[m].lo);
		pb_uint(sub, M_FILENAME, str(st, sy && sy->binary ? sy->binary : "[unknown]"));
		if (sy && sy->build_id && *sy->build_id)
			pb_uint(sub, M_BUILD_ID, str(st, sy->build_id));
		pb_uint(sub, M_HAS_FUNCTIONS, 1);
		pb_sub(out, P_MAPPING, sub);
	}
	for (size_t i = 0; i < set->nr_locs; i++) {
		pb_uint(sub, LOC_ID, i + 1);
		pb_uint(sub, LOC_MAPPING_ID, loc_map[i] + 1);
		pb_uint(sub, LOC_ADDRESS, set->locs[i].offset);
		if (set->locs[i].sym < set->nr_syms) {
			pb_uint(sub2, LINE_FUNCTION_ID, (uint64_t)set->locs[i].sym + 1);
			pb_sub(sub, LOC_LINE, sub2);
		}
		pb_sub(out, P_LOCATION, sub);
	}
	free(maps);
	free(loc_map);
}

/* The functions of set: a location of each sym gives its name. */
static void encode_functions(const struct stack_set *set, struct strtab *st, struct pb *sub,
			     struct pb *out)
{
	uint32_t *sym_loc = xcalloc(set->nr_syms ? set->nr_syms : 1, sizeof(*sym_loc));
	char name[1024];

	for (size_t i = 0; i < set->nr_locs; i++)
		if (set->locs[i].sym < set->nr_syms && !sym_loc[set->locs[i].sym])
			sym_loc[set->locs[i].sym] = (uint32_t)i + 1;
	for (size_t i = 0; i < set->nr_syms; i++) {
		uint64_t n;

		if (sym_loc[i])
			flame_frame_name(set, sym_loc[i] - 1, 0, name, sizeof(name));
		else
			snprintf(name, sizeof(name), "%s", set->syms[i].symbol ?
				 set->syms[i].symbol : "[unknown]");
		n = str(st, name);
		pb_uint(sub, F_ID, i + 1);
		pb_uint(sub, F_NAME, n);
		pb_uint(sub, F_SYSTEM_NAME, n);
		pb_sub(out, P_FUNCTION, sub);
	}
	free(sym_loc);
}

void pprof_encode(const struct stack_set *set, struct pb *out)
{
	const struct db_session *s = &set->session;
	struct strtab st;
	struct pb sub = { 0 }, sub2 = { 0 };
	uint64_t samples_idx, count_idx;
	char name[1024];

	strtab_init(&st);
	str(&st, "");			/* string_table[0] must be "" */
	samples_idx = str(&st, "samples");
	count_idx = str(&st, "count");

	value_type(out, &sub, P_SAMPLE_TYPE, samples_idx, count_idx);
	if (set->weighted)
		value_type(out, &sub, P_SAMPLE_TYPE, str(&st, s->sample_event),
			   str(&st, is_clock(s->sample_event) ? "nanoseconds" : "count"));
	for (int i = 0; i < set->nr_events && i < STROBE_MAX_COUNTERS; i++)
		value_type(out, &sub, P_SAMPLE_TYPE, str(&st, set->events[i]), count_idx);

	for (size_t i = 0; i < set->nr_stacks; i++) {
		const struct stack_entry *e = &set->stacks[i];

		for (uint32_t k = 0; k < e->nr; k++)
			if (e->locs[k] < set->nr_locs)
				pb_varint(&sub2, (uint64_t)e->locs[k] + 1);
		pb_bytes(&sub, S_LOCATION_ID, sub2.buf, sub2.n);	/* packed */
		sub2.n = 0;
		pb_varint(&sub2, e->samples);
		if (set->weighted)
			pb_varint(&sub2, e->weight);
		for (int k = 0; k < set->nr_events && k < STROBE_MAX_COUNTERS; k++)
			pb_varint(&sub2, e->c[k]);
		pb_bytes(&sub, S_VALUE, sub2.buf, sub2.n);
		sub2.n = 0;
		pb_uint(&sub2, L_KEY, str(&st, "pid"));
		pb_uint(&sub2, L_NUM, e->pid);
		pb_sub(&sub, S_LABEL, &sub2);
		pb_uint(&sub2, L_KEY, str(&st, "comm"));
		pb_uint(&sub2, L_STR, str(&st, e->comm ? e->comm : "[unknown]"));
		pb_sub(&sub, S_LABEL, &sub2);
		pb_sub(out, P_SAMPLE, &sub);
	}

	encode_locations(set, &st, &sub, &sub2, out);
	encode_functions(set, &st, &sub, out);

	pb_uint(out, P_TIME_NANOS, (uint64_t)(s->start_ns + s->wall_offset_ns));
	if (s->duration_ns > 0)
		pb_uint(out, P_DURATION_NANOS, (uint64_t)s->duration_ns);
	else if (s->end_ns > s->start_ns)
		pb_uint(out, P_DURATION_NANOS, (uint64_t)(s->end_ns - s->start_ns));
	value_type(out, &sub, P_PERIOD_TYPE, str(&st, s->sample_event[0] ? s->sample_event : "samples"),
		   str(&st, is_clock(s->sample_event) ? "nanoseconds" : "count"));
	if (s->sample_period > 0)
		pb_uint(out, P_PERIOD, (uint64_t)s->sample_period);
	snprintf(name, sizeof(name), "strobe session %lld", (long long)s->id);
	pb_uint(out, P_COMMENT, str(&st, name));
	pb_uint(out, P_DEFAULT_SAMPLE_TYPE, samples_idx);
	/* the string table last: every index above is in it by now */
	for (size_t i = 0; i < st.nr; i++)
		pb_bytes(out, P_STRING_TABLE, st.s[i], strlen(st.s[i]));

	strtab_free(&st);
	pb_free(&sub);
	pb_free(&sub2);
}

int pprof_write(const struct stack_set *set, FILE *f, struct error *e)
{
	struct pb raw = { 0 };
	z_stream z;
	unsigned char out[1 << 16];
	int rc, ret = 0;

	pprof_encode(set, &raw);
	if (raw.n > UINT32_MAX) {
		pb_free(&raw);
		return error_set(e, "the profile is too large for one gzip pass (%zu bytes)", raw.n);
	}
	memset(&z, 0, sizeof(z));
	if (deflateInit2(&z, Z_DEFAULT_COMPRESSION, Z_DEFLATED, 15 + 16, 8,
			 Z_DEFAULT_STRATEGY) != Z_OK) {
		pb_free(&raw);
		return error_set(e, "zlib: cannot start compressing");
	}
	z.next_in = raw.buf;
	z.avail_in = (uInt)raw.n;	/* profiles stay far below 4 GB */
	do {
		z.next_out = out;
		z.avail_out = sizeof(out);
		rc = deflate(&z, Z_FINISH);
		if (rc == Z_STREAM_ERROR) {
			ret = error_set(e, "zlib: compressing failed");
			break;
		}
		if (fwrite(out, 1, sizeof(out) - z.avail_out, f) != sizeof(out) - z.avail_out) {
			ret = error_set(e, "writing the profile failed");
			break;
		}
	} while (rc != Z_STREAM_END);
	deflateEnd(&z);
	pb_free(&raw);
	return ret;
}
