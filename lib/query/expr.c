/*
 * expr.c - metric expressions (see expr.h).  A recursive-descent parser
 * compiles the source to postfix code, which expr_eval() runs on a stack.
 */
#include "config.h"
#include <ctype.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "expr.h"

/* Nesting of parentheses and signs, each level a few stack frames of the
 * recursive descent: without a bound, --metric "((((..." (an argument
 * may be 128 KiB) overflowed the stack. */
#define MAX_DEPTH 256

enum op { OP_CONST, OP_VAR, OP_NEG, OP_ADD, OP_SUB, OP_MUL, OP_DIV };

struct insn {
	enum op op;
	double v;		/* OP_CONST */
	size_t name;		/* OP_VAR: index into names */
};

struct name_ref {
	char *name;
	int col;		/* 1-based */
	int var;		/* from expr_bind, -1 before */
};

struct expr {
	struct insn *code;
	size_t ncode, capcode;
	struct name_ref *names;
	size_t nnames, capnames;
	size_t depth;		/* stack needed by expr_eval */
};

enum tok { T_END, T_NUM, T_NAME, T_PLUS, T_MINUS, T_STAR, T_SLASH, T_LPAREN, T_RPAREN };

struct parser {
	const char *src, *p;
	struct expr *x;
	struct error *e;
	int failed;
	int depth;		/* of parse_unary calls, at most MAX_DEPTH */
	/* the current token */
	enum tok tok;
	const char *start;	/* where it starts in src */
	double num;
	char *name;		/* T_NAME, malloc'd */
};

static int col(const struct parser *ps, const char *at)
{
	return (int)(at - ps->src) + 1;
}

static int fail(struct parser *ps, const char *at, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static int fail(struct parser *ps, const char *at, const char *fmt, ...)
{
	char msg[400];
	va_list ap;

	if (ps->failed)
		return -1;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	ps->failed = 1;
	return error_set(ps->e, "column %d: %s", col(ps, at), msg);
}

static int is_name_start(int c)
{
	return isalpha(c) || c == '_';
}

static int is_name_char(int c)
{
	return isalnum(c) || c == '_' || c == '.' || c == ':' || c == '-';
}

/* The current token as text, for messages. */
static void tok_text(const struct parser *ps, char *buf, size_t len)
{
	if (ps->tok == T_END) {
		snprintf(buf, len, "the end");
		return;
	}
	size_t n = (size_t)(ps->p - ps->start);

	if (n > 40)
		snprintf(buf, len, "'%.40s...'", ps->start);
	else
		snprintf(buf, len, "'%.*s'", (int)n, ps->start);
}

static int next(struct parser *ps)
{
	const char *p = ps->p;

	free(ps->name);
	ps->name = NULL;
	while (*p == ' ' || *p == '\t' || *p == '\n')
		p++;
	ps->start = p;
	if (!*p) {
		ps->tok = T_END;
		ps->p = p;
		return 0;
	}
	if (isdigit((unsigned char)*p) || (*p == '.' && isdigit((unsigned char)p[1]))) {
		const char *q = p;
		char buf[128];

		while (isdigit((unsigned char)*q))
			q++;
		if (*q == '.') {
			q++;
			while (isdigit((unsigned char)*q))
				q++;
		}
		if ((*q == 'e' || *q == 'E') &&
		    (isdigit((unsigned char)q[1]) ||
		     ((q[1] == '+' || q[1] == '-') && isdigit((unsigned char)q[2])))) {
			q += 2;
			while (isdigit((unsigned char)*q))
				q++;
		}
		if (is_name_char((unsigned char)*q) && *q != '-')
			return fail(ps, p, "bad number '%.*s': put an operator between a number "
				    "and a name, e.g. 1000*cache-misses", (int)(q - p + 1), p);
		if ((size_t)(q - p) >= sizeof(buf))
			return fail(ps, p, "number too long");
		memcpy(buf, p, (size_t)(q - p));
		buf[q - p] = 0;
		ps->num = strtod(buf, NULL);
		ps->tok = T_NUM;
		ps->p = q;
		return 0;
	}
	if (is_name_start((unsigned char)*p)) {
		const char *q = p;

		while (is_name_char((unsigned char)*q))
			q++;
		while (q[-1] == '-')	/* a trailing '-' is a minus */
			q--;
		ps->name = xmalloc((size_t)(q - p) + 1);
		memcpy(ps->name, p, (size_t)(q - p));
		ps->name[q - p] = 0;
		ps->tok = T_NAME;
		ps->p = q;
		return 0;
	}
	if (*p == '"') {
		const char *q = strchr(p + 1, '"');

		if (!q)
			return fail(ps, p, "unterminated quoted name: close it with '\"'");
		if (q == p + 1)
			return fail(ps, p, "empty quoted name");
		ps->name = xmalloc((size_t)(q - p));
		memcpy(ps->name, p + 1, (size_t)(q - p - 1));
		ps->name[q - p - 1] = 0;
		ps->tok = T_NAME;
		ps->p = q + 1;
		return 0;
	}
	ps->p = p + 1;
	switch (*p) {
	case '+': ps->tok = T_PLUS; return 0;
	case '-': ps->tok = T_MINUS; return 0;
	case '*': ps->tok = T_STAR; return 0;
	case '/': ps->tok = T_SLASH; return 0;
	case '(': ps->tok = T_LPAREN; return 0;
	case ')': ps->tok = T_RPAREN; return 0;
	}
	if (isprint((unsigned char)*p))
		return fail(ps, p, "unexpected character '%c': use numbers, event names, "
			    "+ - * / and parentheses (quote other names in \"...\")", *p);
	return fail(ps, p, "unexpected byte 0x%02x", (unsigned char)*p);
}

static void emit(struct parser *ps, enum op op, double v, size_t name)
{
	struct expr *x = ps->x;

	ARRAY_GROW(x->code, x->capcode, x->ncode + 1);
	x->code[x->ncode++] = (struct insn){ .op = op, .v = v, .name = name };
}

static int parse_expr(struct parser *ps);

static int parse_primary(struct parser *ps)
{
	char what[64];

	switch (ps->tok) {
	case T_NUM:
		emit(ps, OP_CONST, ps->num, 0);
		return next(ps);
	case T_NAME: {
		struct expr *x = ps->x;

		ARRAY_GROW(x->names, x->capnames, x->nnames + 1);
		x->names[x->nnames] = (struct name_ref){ .name = ps->name,
							 .col = col(ps, ps->start), .var = -1 };
		ps->name = NULL;
		emit(ps, OP_VAR, 0, x->nnames++);
		return next(ps);
	}
	case T_LPAREN: {
		const char *open = ps->start;

		if (next(ps) < 0 || parse_expr(ps) < 0)
			return -1;
		if (ps->tok != T_RPAREN) {
			tok_text(ps, what, sizeof(what));
			return fail(ps, ps->start, "expected ')' to close the '(' at column %d, "
				    "found %s", col(ps, open), what);
		}
		return next(ps);
	}
	default:
		tok_text(ps, what, sizeof(what));
		return fail(ps, ps->start, "expected a number, an event name or '(', found %s",
			    what);
	}
}

static int parse_unary(struct parser *ps);

static int parse_unary_1(struct parser *ps)
{
	if (ps->tok == T_MINUS || ps->tok == T_PLUS) {
		int neg = ps->tok == T_MINUS;

		if (next(ps) < 0 || parse_unary(ps) < 0)
			return -1;
		if (neg)
			emit(ps, OP_NEG, 0, 0);
		return 0;
	}
	return parse_primary(ps);
}

/* Every '(' and every sign recurses through here: at most MAX_DEPTH
 * levels of them (and one more call for the operand inside). */
static int parse_unary(struct parser *ps)
{
	int ret;

	if (ps->depth == MAX_DEPTH &&
	    (ps->tok == T_MINUS || ps->tok == T_PLUS || ps->tok == T_LPAREN))
		return fail(ps, ps->start, "nested too deeply (more than %d levels of "
			    "parentheses and signs)", MAX_DEPTH);
	ps->depth++;
	ret = parse_unary_1(ps);
	ps->depth--;
	return ret;
}

static int parse_term(struct parser *ps)
{
	if (parse_unary(ps) < 0)
		return -1;
	while (ps->tok == T_STAR || ps->tok == T_SLASH) {
		enum op op = ps->tok == T_STAR ? OP_MUL : OP_DIV;

		if (next(ps) < 0 || parse_unary(ps) < 0)
			return -1;
		emit(ps, op, 0, 0);
	}
	return 0;
}

static int parse_expr(struct parser *ps)
{
	if (parse_term(ps) < 0)
		return -1;
	while (ps->tok == T_PLUS || ps->tok == T_MINUS) {
		enum op op = ps->tok == T_PLUS ? OP_ADD : OP_SUB;

		if (next(ps) < 0 || parse_term(ps) < 0)
			return -1;
		emit(ps, op, 0, 0);
	}
	return 0;
}

struct expr *expr_parse(const char *src, struct error *e)
{
	struct parser ps = { .src = src, .p = src, .e = e };
	struct expr *x = xcalloc(1, sizeof(*x));
	size_t i, d = 0;

	ps.x = x;
	if (next(&ps) < 0)
		goto fail;
	if (ps.tok == T_END) {
		fail(&ps, ps.start, "empty expression: give e.g. 1000*cache-misses/instructions");
		goto fail;
	}
	if (parse_expr(&ps) < 0)
		goto fail;
	if (ps.tok != T_END) {
		char what[64];

		tok_text(&ps, what, sizeof(what));
		if (ps.tok == T_RPAREN)
			fail(&ps, ps.start, "unexpected ')' with no '(' before it");
		else if (ps.tok == T_NAME && ps.start[0] != '"' && ps.start > src &&
			 ps.start[-1] == '-')
			fail(&ps, ps.start, "expected an operator, found %s (a '-' right after "
			     "a name is part of it: put a space before a minus)", what);
		else
			fail(&ps, ps.start, "expected an operator (+ - * /) or the end, found %s",
			     what);
		goto fail;
	}
	free(ps.name);
	/* stack depth */
	for (i = 0; i < x->ncode; i++) {
		switch (x->code[i].op) {
		case OP_CONST: case OP_VAR:
			d++;
			x->depth = MAX(x->depth, d);
			break;
		case OP_NEG:
			break;
		default:
			d--;
		}
	}
	return x;
fail:
	free(ps.name);
	expr_free(x);
	return NULL;
}

void expr_free(struct expr *x)
{
	if (!x)
		return;
	for (size_t i = 0; i < x->nnames; i++)
		free(x->names[i].name);
	free(x->names);
	free(x->code);
	free(x);
}

size_t expr_nnames(const struct expr *x)
{
	return x->nnames;
}

const char *expr_name(const struct expr *x, size_t i)
{
	return i < x->nnames ? x->names[i].name : NULL;
}

int expr_name_column(const struct expr *x, size_t i)
{
	return i < x->nnames ? x->names[i].col : 0;
}

int expr_bind(struct expr *x, int (*lookup)(void *ctx, const char *name), void *ctx,
	      struct error *e)
{
	for (size_t i = 0; i < x->nnames; i++) {
		struct name_ref *n = &x->names[i];

		n->var = lookup(ctx, n->name);
		if (n->var < 0)
			return error_set(e, "unknown name '%s' at column %d%s", n->name, n->col,
					 strchr(n->name, '-') ?
					 " (a '-' inside a name is part of it: write a minus "
					 "with spaces, a - b)" : "");
	}
	return 0;
}

double expr_eval(const struct expr *x, const double *vars)
{
	double stack_small[32], *st = stack_small, r;
	size_t sp = 0;

	if (x->depth > ARRAY_SIZE(stack_small))
		st = xmalloc(x->depth * sizeof(*st));
	for (size_t i = 0; i < x->ncode; i++) {
		const struct insn *in = &x->code[i];
		double a, b;

		switch (in->op) {
		case OP_CONST:
			st[sp++] = in->v;
			continue;
		case OP_VAR:
			st[sp++] = x->names[in->name].var >= 0 ?
				   vars[x->names[in->name].var] : NAN;
			continue;
		case OP_NEG:
			st[sp - 1] = -st[sp - 1];
			continue;
		default:
			break;
		}
		b = st[--sp];
		a = st[sp - 1];
		switch (in->op) {
		case OP_ADD: r = a + b; break;
		case OP_SUB: r = a - b; break;
		case OP_MUL: r = a * b; break;
		case OP_DIV: r = b == 0 ? NAN : a / b; break;
		default: r = NAN;
		}
		st[sp - 1] = r;
	}
	r = sp == 1 ? st[0] : NAN;
	if (st != stack_small)
		free(st);
	return r;
}
