/*
 * probe_expect.c - the saved probe's expectations on a plot (probe_expect.h).
 */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "probe_expect.h"

static const char *size_text(uint64_t b, char *buf, size_t len)
{
	if (b >= (1u << 20) && b % (1u << 20) == 0)
		snprintf(buf, len, "%" PRIu64 " MiB", b >> 20);
	else if (b >= 1024 && b % 1024 == 0)
		snprintf(buf, len, "%" PRIu64 " KiB", b >> 10);
	else
		snprintf(buf, len, "%" PRIu64 " B", b);
	return buf;
}

void probe_expect_summary(const struct probe_result *r, char *buf, size_t len)
{
	size_t n = (size_t)snprintf(buf, len, "probe:");
	char sz[32];

	for (size_t i = 0; i < r->nrows && n < len; i++) {
		const struct probe_row *row = &r->rows[i];

		if (!strcmp(row->kind, "dTLB")) {
			if (row->pages)
				n += (size_t)snprintf(buf + n, len - n, "%s dTLB reach %" PRIu64
						      " pages", i ? "," : "", row->pages);
			if (row->l2_pages && n < len)
				n += (size_t)snprintf(buf + n, len - n, "%s L2 TLB %" PRIu64
						      " pages", i || row->pages ? "," : "",
						      row->l2_pages);
			continue;
		}
		if (!row->size_bytes)
			continue;
		n += (size_t)snprintf(buf + n, len - n, "%s %s %s", i ? "," : "", row->kind,
				      size_text(row->size_bytes, sz, sizeof(sz)));
		if (n < len && !isnan(row->latency_ns))
			n += (size_t)snprintf(buf + n, len - n, " %.2f ns", row->latency_ns);
	}
}

/* the marker's first argument, or -1 */
static long long arg0(const char *args)
{
	char *end;
	long long v;

	if (!args || !*args)
		return -1;
	v = strtoll(args, &end, 10);
	return end != args && (*end == ',' || !*end) && v >= 0 ? v : -1;
}

static int name_ends(const char *name, const char *suffix)
{
	size_t n = strlen(name), s = strlen(suffix);

	return n > s && !strcmp(name + n - s, suffix);
}

/* the onset of reach in the markers named *suffix */
static int onset(const struct probe_marker *m, size_t nm, const char *suffix,
		 uint64_t reach, int64_t *at)
{
	int have = 0;

	for (size_t i = 0; i < nm; i++) {
		long long v;

		if (!name_ends(m[i].name, suffix) || (v = arg0(m[i].args)) < 0)
			continue;
		if ((uint64_t)v <= reach) {
			*at = m[i].time_ns;
			have = 1;
		} else {
			return have;
		}
	}
	return 0;	/* never past the reach */
}

size_t probe_expect_onsets(const struct probe_result *r, const struct probe_marker *m,
			   size_t nm, struct probe_expect_line *out, size_t max)
{
	size_t n = 0;
	char sz[32];

	for (size_t i = 0; i < r->nrows && n < max; i++) {
		const struct probe_row *row = &r->rows[i];
		int64_t at;

		if (!strcmp(row->kind, "dTLB")) {
			if (row->pages && onset(m, nm, ":size", row->pages, &at)) {
				out[n].time_ns = at;
				snprintf(out[n++].label, sizeof(out->label), "dTLB reach %" PRIu64
					 " pages", row->pages);
			}
			if (row->l2_pages && n < max &&
			    onset(m, nm, ":size", row->l2_pages, &at)) {
				out[n].time_ns = at;
				snprintf(out[n++].label, sizeof(out->label), "L2 TLB reach %" PRIu64
					 " pages", row->l2_pages);
			}
		} else if (row->size_bytes && onset(m, nm, ":bytes", row->size_bytes, &at)) {
			out[n].time_ns = at;
			snprintf(out[n++].label, sizeof(out->label), "%s size %s", row->kind,
				 size_text(row->size_bytes, sz, sizeof(sz)));
		}
	}
	return n;
}
