/*
 * countsave.c - the text of 'strobe count --save's requests, and its
 * strict parsing (see countsave.h).
 */
#include "config.h"
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "countsave.h"
#include "proto.h"

size_t countsave_encode(const struct count_saved *v, size_t n, size_t from, size_t max_bytes,
			struct sbuf *out)
{
	size_t i;

	for (i = from; i < n; i++) {
		char unit[COUNTSTORE_UNIT_MAX], entry[256], val[64];
		int len;

		snprintf(unit, sizeof(unit), "%s", v[i].unit);
		for (char *p = unit; *p; p++)
			if ((unsigned char)*p < 0x20 || *p == 0x7f || *p == ',' || *p == ';')
				*p = '?';
		if (isnan(v[i].value))
			snprintf(val, sizeof(val), "-");
		else
			snprintf(val, sizeof(val), "%.17g", v[i].value);
		len = snprintf(entry, sizeof(entry), "%s%lld,%d,%s,%s,%.4f", out->n ? ";" : "",
			       (long long)v[i].t_ns, v[i].idx, unit, val, v[i].pct);
		if (out->n + (size_t)len > max_bytes)
			break;
		sbuf_addf(out, "%s", entry);
	}
	return i;
}

static int parse_i64(const char *s, const char *end, int64_t *v)
{
	char buf[32], *e;
	long long l;

	if (end - s <= 0 || end - s >= (long)sizeof(buf))
		return -1;
	memcpy(buf, s, (size_t)(end - s));
	buf[end - s] = 0;
	if (buf[0] != '-' && (buf[0] < '0' || buf[0] > '9'))
		return -1;
	errno = 0;
	l = strtoll(buf, &e, 10);
	if (errno || *e)
		return -1;
	*v = l;
	return 0;
}

static int parse_double(const char *s, const char *end, double *v)
{
	char buf[64], *e;

	if (end - s <= 0 || end - s >= (long)sizeof(buf))
		return -1;
	memcpy(buf, s, (size_t)(end - s));
	buf[end - s] = 0;
	if (!strcmp(buf, "-")) {
		*v = NAN;
		return 0;
	}
	if ((buf[0] < '0' || buf[0] > '9') && buf[0] != '.')
		return -1;	/* no sign, "nan", "inf" or hex */
	errno = 0;
	*v = strtod(buf, &e);
	if (errno || *e || !isfinite(*v))
		return -1;
	return 0;
}

int countsave_decode(const char *s, struct count_saved **out, size_t *n, size_t max,
		     struct error *e)
{
	size_t cap = 0;
	const char *p = s;

	*out = NULL;
	*n = 0;
	while (*p) {
		const char *f[5], *end = strchr(p, ';');
		struct count_saved c;
		int64_t t, idx;
		size_t k = 0;

		if (!end)
			end = p + strlen(p);
		f[k++] = p;
		for (const char *q = p; q < end && k < 5; q++)
			if (*q == ',')
				f[k++] = q + 1;
		if (k != 5 || memchr(f[4], ',', (size_t)(end - f[4])))
			goto bad;
		if (*n == max) {
			free(*out);
			*out = NULL;
			return error_set(e, "too many counts in one request: at most %zu", max);
		}
		memset(&c, 0, sizeof(c));
		if (parse_i64(f[0], f[1] - 1, &t) < 0 || t < 0 ||
		    parse_i64(f[1], f[2] - 1, &idx) < 0 || idx < 0 || idx > 1000 ||
		    f[3] - 1 - f[2] >= COUNTSTORE_UNIT_MAX ||
		    parse_double(f[3], f[4] - 1, &c.value) < 0 ||
		    parse_double(f[4], end, &c.pct) < 0 || isnan(c.pct) || c.pct > 100)
			goto bad;
		c.t_ns = t;
		c.idx = (int)idx;
		memcpy(c.unit, f[2], (size_t)(f[3] - 1 - f[2]));
		for (const char *q = c.unit; *q; q++)
			if ((unsigned char)*q < 0x20 || *q == 0x7f)
				goto bad;
		ARRAY_GROW(*out, cap, *n + 1);
		(*out)[(*n)++] = c;
		if (*end && !end[1])
			goto bad;	/* a ';' with no entry after it */
		p = *end ? end + 1 : end;
	}
	return 0;
bad:
	free(*out);
	*out = NULL;
	*n = 0;
	return error_set(e, "malformed counts: entry %zu is not T_NS,IDX,UNIT,VALUE,PCT", *n + 1);
}

void countsave_event_encode(const struct event_desc *ev, struct sbuf *out)
{
	sbuf_addf(out, "%u:%llu:%llu:%llu:%s", (unsigned)ev->attr.type,
		  (unsigned long long)ev->attr.config, (unsigned long long)ev->attr.config1,
		  (unsigned long long)ev->attr.config2, ev->name);
}

int countsave_event_decode(const char *s, char *name, size_t len, uint32_t *type,
			   uint64_t *config, uint64_t *config1, uint64_t *config2, struct error *e)
{
	uint64_t v[4];
	const char *p = s;

	for (int i = 0; i < 4; i++) {
		const char *c = strchr(p, ':');
		char buf[24];

		if (!c || c == p || c - p >= (long)sizeof(buf))
			return error_set(e, "malformed event: want TYPE:CONFIG:CONFIG1:CONFIG2:NAME");
		memcpy(buf, p, (size_t)(c - p));
		buf[c - p] = 0;
		if (buf[0] < '0' || buf[0] > '9' || parse_u64(buf, &v[i]) < 0)
			return error_set(e, "malformed event: want TYPE:CONFIG:CONFIG1:CONFIG2:NAME");
		p = c + 1;
	}
	if (v[0] > UINT32_MAX || !*p || strlen(p) >= len || strlen(p) >= EVENT_NAME_MAX)
		return error_set(e, "malformed event: bad type or name");
	for (const char *q = p; *q; q++)
		if ((unsigned char)*q < 0x20 || *q == 0x7f)
			return error_set(e, "malformed event: a control character in its name");
	*type = (uint32_t)v[0];
	*config = v[1];
	*config1 = v[2];
	*config2 = v[3];
	snprintf(name, len, "%s", p);
	return 0;
}

void countsave_keep(struct countsave_rows *sv, enum count_aggr aggr, double t,
		    const struct count_row *rows, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		const struct count_row *r = &rows[i];
		struct count_saved *c;

		if (r->ev < 0 || r->status == COUNT_NOT_SUPPORTED)
			continue;
		ARRAY_GROW(sv->v, sv->cap, sv->n + 1);
		c = &sv->v[sv->n++];
		memset(c, 0, sizeof(*c));
		c->t_ns = (int64_t)(t * 1e9 + 0.5);
		c->idx = r->ev;
		snprintf(c->unit, sizeof(c->unit), "%s%s", aggr == COUNT_AGGR_CPU ? "CPU" : "",
			 r->id);
		/* the count in the event's own unit: a clock's in ns, a PMU
		 * event's scaled to its unit (Joules) */
		c->value = r->status != COUNT_OK ? NAN : r->clock ? r->value * 1e6 : r->value;
		c->pct = r->pct < 0 ? 0 : r->pct > 100 ? 100 : r->pct;
	}
}

int countsave_send(const char *sock, const char *name, const struct counter_set *cs,
		   const struct countsave_rows *sv, uint64_t start_ns, double elapsed, int64_t *id,
		   struct error *e)
{
	struct proto_msg req, resp;
	const char *sid;
	size_t i = 0;

	proto_init(&req, "count-begin");
	proto_add(&req, "name", name);
	proto_addf(&req, "start_ns", "%llu", (unsigned long long)start_ns);
	proto_addf(&req, "wall_offset_ns", "%lld",
		   (long long)(clock_realtime_ns() - clock_monotonic_ns()));
	for (size_t k = 0; k < cs->nev; k++) {
		struct sbuf b = { 0 };
		char key[32];

		snprintf(key, sizeof(key), "ev%zu", k);
		countsave_event_encode(&cs->ev[k], &b);
		proto_add(&req, key, b.s);
		free(b.s);
	}
	if (proto_call(sock, &req, &resp, e) < 0) {
		proto_free(&req);
		return error_prefix(e, "--save: strobed on %s", sock);
	}
	proto_free(&req);
	sid = proto_get(&resp, "session");
	*id = sid ? strtoll(sid, NULL, 10) : 0;
	proto_free(&resp);
	if (*id <= 0)
		return error_set(e, "--save: strobed gave no session id");
	do {
		struct sbuf b = { 0 };

		i = countsave_encode(sv->v, sv->n, i, COUNTSAVE_MAX_BYTES, &b);
		if (!b.s)
			break;
		proto_init(&req, "count-data");
		proto_addf(&req, "session", "%lld", (long long)*id);
		proto_add(&req, "values", b.s);
		free(b.s);
		if (proto_call(sock, &req, &resp, e) < 0) {
			proto_free(&req);
			return error_prefix(e, "--save: storing the counts of session %lld",
					    (long long)*id);
		}
		proto_free(&req);
		proto_free(&resp);
	} while (i < sv->n);
	proto_init(&req, "count-end");
	proto_addf(&req, "session", "%lld", (long long)*id);
	proto_addf(&req, "end_ns", "%llu", (unsigned long long)(start_ns + (uint64_t)(elapsed * 1e9)));
	if (proto_call(sock, &req, &resp, e) < 0) {
		proto_free(&req);
		return error_prefix(e, "--save: ending session %lld", (long long)*id);
	}
	proto_free(&req);
	proto_free(&resp);
	return 0;
}
