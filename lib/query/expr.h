/*
 * expr.h - the arithmetic of 'strobe plot --metric': expressions over
 * event names, evaluated once per time bucket.
 *
 * Syntax:
 *   expr    := term (('+' | '-') term)*
 *   term    := unary (('*' | '/') unary)*
 *   unary   := ('-' | '+') unary | primary
 *   primary := NUMBER | NAME | '"' any characters but '"' '"' | '(' expr ')'
 *   NUMBER  := digits ['.' digits] [('e' | 'E') ['+' | '-'] digits]  (or '.' digits ...)
 *   NAME    := [A-Za-z_][A-Za-z0-9_.:-]*, greedy, not ending in '-'
 * Parentheses and signs nest at most 256 deep (a syntax error beyond).
 *
 * Event names contain '-' (dTLB-load-misses, page-faults), so a '-' that
 * follows a name character belongs to the name: write a binary minus with a
 * space before it ("instructions - cycles"; "a-b" is the one name a-b).
 * Names with other characters (msr/tsc/) are written in double quotes.
 * Names are matched by the caller (expr_bind), e.g. case-insensitively.
 *
 * Evaluation follows IEEE arithmetic except that a division by zero, and
 * any operation on NaN, gives NaN: a gap in a plot, not an infinity.
 */
#ifndef STROBE_EXPR_H
#define STROBE_EXPR_H

#include <stddef.h>
#include "util.h"

struct expr;

/*
 * Parse src.  On a syntax error returns NULL with e saying where, as
 * "column N: ..." (columns count bytes from 1).
 */
struct expr *expr_parse(const char *src, struct error *e);
void expr_free(struct expr *x);

/* The names the expression refers to, each occurrence, in source order. */
size_t expr_nnames(const struct expr *x);
const char *expr_name(const struct expr *x, size_t i);
int expr_name_column(const struct expr *x, size_t i);

/*
 * Give every name a variable index: lookup(ctx, name) returns it (>= 0) or
 * -1 for a name that does not exist, which fails with
 * "unknown name 'NAME' at column N" in e (and a hint about spaces around
 * '-' when the name contains one).  Returns 0 or -1.
 */
int expr_bind(struct expr *x, int (*lookup)(void *ctx, const char *name), void *ctx,
	      struct error *e);

/* The value with variable i = vars[i] (indices from expr_bind). */
double expr_eval(const struct expr *x, const double *vars);

#endif
