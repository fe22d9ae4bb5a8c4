/*
 * fuzz_expr - the metric expression parser and evaluator (lib/query/expr.c).
 * The input is the expression text; names bind by a hash of their text
 * (one name in eight is "unknown", so expr_bind's error path runs too).
 * Asserts beyond "no crash": a failed parse says "column N: ..." with N
 * within the text (+1 for the end); names and their columns lie within
 * the text; evaluation with finite, zero, infinite and NaN variables
 * never traps, and with every variable NaN the result is NaN (NaN
 * propagates through every operation) when the expression has a name.
 */
#include <assert.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "expr.h"

#define NV 8

static int lookup(void *ctx, const char *name)
{
	uint32_t h = 2166136261u;
	for (const char *p = name; *p; p++)
		h = (h ^ (unsigned char)*p) * 16777619u;
	return (h >> 3) % 8 == 7 ? -1 : (int)(h % NV);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *src = malloc(size + 1);
	struct error e = { "" };
	struct expr *x;

	memcpy(src, data, size);
	src[size] = 0;
	size_t len = strlen(src);
	x = expr_parse(src, &e);
	if (!x) {
		int col = -1;
		assert(strncmp(e.msg, "column ", 7) == 0);
		col = atoi(e.msg + 7);
		assert(col >= 1 && (size_t)col <= len + 1);
		free(src);
		return 0;
	}
	for (size_t i = 0; i < expr_nnames(x); i++) {
		const char *n = expr_name(x, i);
		int col = expr_name_column(x, i);
		assert(n && col >= 1 && (size_t)col <= len);
		assert(strlen(n) <= len);
	}
	if (expr_bind(x, lookup, NULL, &e) == 0) {
		static const double sets[][NV] = {
			{ 1, 2, 3, 4, 5, 6, 7, 8 },
			{ 0, 0, 0, 0, 0, 0, 0, 0 },
			{ INFINITY, -INFINITY, 0, -0.0, 1e308, -1e308, 5e-324, 1 },
			{ NAN, NAN, NAN, NAN, NAN, NAN, NAN, NAN },
		};
		for (int s = 0; s < 4; s++) {
			double v = expr_eval(x, sets[s]);
			if (s == 3 && expr_nnames(x) > 0)
				assert(isnan(v));
			(void)v;
		}
	} else {
		assert(strstr(e.msg, "unknown name"));
	}
	expr_free(x);
	free(src);
	return 0;
}
