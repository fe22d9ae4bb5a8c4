/*
 * fuzz_countsave - strobed's parser of 'strobe count --save' values
 * (countsave_decode, lib/count/countsave.c), the input of any strobe
 * group member.  Asserts beyond "no crash": a failed parse leaves a
 * message and nothing allocated; every entry of a successful one is in
 * range (time >= 0, a value >= 0 and finite or NaN, percent 0 to 100, a
 * unit without control characters), and encoding it gives a text that
 * decodes to the same entries.
 */
#include <assert.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "countsave.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *s = malloc(size + 1);
	struct count_saved *v, *w;
	struct error e = { "" };
	struct sbuf b = { 0 };
	size_t n, m;

	memcpy(s, data, size);
	s[size] = 0;
	if (countsave_decode(s, &v, &n, 1000, &e) < 0) {
		assert(e.msg[0] && !v && !n);
		free(s);
		return 0;
	}
	for (size_t i = 0; i < n; i++) {
		assert(v[i].t_ns >= 0 && v[i].idx >= 0);
		assert(isnan(v[i].value) || (isfinite(v[i].value) && v[i].value >= 0));
		assert(v[i].pct >= 0 && v[i].pct <= 100);
		for (const char *p = v[i].unit; *p; p++)
			assert((unsigned char)*p >= 0x20 && *p != 0x7f);
	}
	/* units with ',' or ';' cannot come out of a parse */
	assert(countsave_encode(v, n, 0, SIZE_MAX, &b) == n);
	if (n) {
		assert(countsave_decode(b.s, &w, &m, 1000, &e) == 0 && m == n);
		for (size_t i = 0; i < n; i++) {
			assert(w[i].t_ns == v[i].t_ns && w[i].idx == v[i].idx);
			assert(!strcmp(w[i].unit, v[i].unit));
			assert(isnan(w[i].value) == isnan(v[i].value));
			assert(isnan(v[i].value) || w[i].value == v[i].value);
			assert(fabs(w[i].pct - v[i].pct) < 1e-4);
		}
		free(w);
	}
	free(b.s);
	free(v);
	free(s);
	return 0;
}
