/*
 * output.c - tables of results written as aligned text, CSV or JSON
 * (see output.h).
 *
 * Cells remember what was stored in them (string, integer, double or
 * nothing); the column type decides how a value is shown:
 *
 *            text            CSV             JSON
 *   COL_STR  as is (left)    RFC 4180 field  string
 *   COL_INT  %lld  (right)   %lld            number
 *   COL_FLOAT %.2f (right)   shortest exact  shortest exact number
 *   COL_PCT  %.2f%% (right)  %.2f            %.2f number
 *   null     empty           empty           null
 *
 * "Shortest exact" is the shortest of %.15g/%.16g/%.17g that reads back as
 * the same double, with ".0" added when it would otherwise look like an
 * integer (so JSON readers keep it a float).  NaN and infinities count as
 * null.  A double stored in a COL_INT column is shown rounded ("%.0f"), an
 * integer in a float column is converted, a number in a COL_STR column is
 * shown as text, a string in a numeric column is shown as a string.
 *
 * Text output: one header line of column names, then one line per row;
 * columns are separated by two spaces, numeric columns (and their
 * headers) right-aligned, string columns left-aligned, the last column
 * is never padded on the right and lines carry no trailing spaces.
 * Text cells are written as text_write_string writes (lib/base/util.h):
 * controls, C1, line breaks, bidi overrides and invalid UTF-8 are each a
 * '?', so a row stays one line and a terminal obeys nothing in it; widths
 * count characters as written, not bytes.
 */
#include "config.h"
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "output.h"

enum cell_kind { CELL_NULL, CELL_STR, CELL_INT, CELL_DBL };

struct cell {
	enum cell_kind kind;
	union {
		char *s;
		int64_t i;
		double d;
	} u;
};

struct column {
	char *name;
	enum col_type type;
};

struct row {
	struct cell *cells;	/* n cells; cells past n are null */
	int n;
};

struct meta {
	char *key;
	char *value;
	int is_number;
};

struct table {
	struct column *cols;
	size_t ncols, cols_cap;
	struct row *rows;
	size_t nrows, rows_cap;
	struct meta *meta;
	size_t nmeta, meta_cap;
};

/* Big enough for "%.2f" of DBL_MAX (309 digits) and anything else here. */
#define NUMBUF 400

struct table *table_new(void)
{
	return xcalloc(1, sizeof(struct table));
}

static void cell_clear(struct cell *c)
{
	if (c->kind == CELL_STR)
		free(c->u.s);
	c->kind = CELL_NULL;
}

void table_free(struct table *t)
{
	size_t i;
	int j;

	if (!t)
		return;
	for (i = 0; i < t->ncols; i++)
		free(t->cols[i].name);
	free(t->cols);
	for (i = 0; i < t->nrows; i++) {
		for (j = 0; j < t->rows[i].n; j++)
			cell_clear(&t->rows[i].cells[j]);
		free(t->rows[i].cells);
	}
	free(t->rows);
	for (i = 0; i < t->nmeta; i++) {
		free(t->meta[i].key);
		free(t->meta[i].value);
	}
	free(t->meta);
	free(t);
}

int table_add_col(struct table *t, const char *name, enum col_type type)
{
	ARRAY_GROW(t->cols, t->cols_cap, t->ncols + 1);
	t->cols[t->ncols].name = xstrdup(name);
	t->cols[t->ncols].type = type;
	return (int)t->ncols++;
}

size_t table_add_row(struct table *t)
{
	struct row *r;

	ARRAY_GROW(t->rows, t->rows_cap, t->nrows + 1);
	r = &t->rows[t->nrows];
	r->n = (int)t->ncols;
	r->cells = xcalloc(t->ncols ? t->ncols : 1, sizeof(struct cell));
	return t->nrows++;
}

size_t table_rows(const struct table *t)
{
	return t->nrows;
}

/* The cell at (row, col), made to exist; NULL when out of range. */
static struct cell *cell_at(struct table *t, size_t row, int col)
{
	struct row *r;

	if (row >= t->nrows || col < 0 || (size_t)col >= t->ncols)
		return NULL;
	r = &t->rows[row];
	if (col >= r->n) {
		/* The column was added after the row. */
		r->cells = xrealloc(r->cells, t->ncols * sizeof(struct cell));
		memset(r->cells + r->n, 0, (t->ncols - r->n) * sizeof(struct cell));
		r->n = (int)t->ncols;
	}
	return &r->cells[col];
}

static const struct cell *cell_get(const struct table *t, size_t row, size_t col)
{
	static const struct cell null_cell = { .kind = CELL_NULL };
	const struct row *r = &t->rows[row];

	return (int)col < r->n ? &r->cells[col] : &null_cell;
}

int table_col(const struct table *t, const char *name)
{
	for (size_t i = 0; i < t->ncols; i++)
		if (!strcmp(t->cols[i].name, name))
			return (int)i;
	return -1;
}

/* The cell at (row, col) for reading; NULL when out of range. */
static const struct cell *cell_read(const struct table *t, size_t row, int col)
{
	if (row >= t->nrows || col < 0 || (size_t)col >= t->ncols)
		return NULL;
	return cell_get(t, row, (size_t)col);
}

int table_get_str(const struct table *t, size_t row, int col, const char **s)
{
	const struct cell *c = cell_read(t, row, col);

	if (!c || c->kind != CELL_STR)
		return -1;
	*s = c->u.s;
	return 0;
}

int table_get_int(const struct table *t, size_t row, int col, int64_t *v)
{
	const struct cell *c = cell_read(t, row, col);

	if (!c || c->kind != CELL_INT)
		return -1;
	*v = c->u.i;
	return 0;
}

int table_get_float(const struct table *t, size_t row, int col, double *v)
{
	const struct cell *c = cell_read(t, row, col);

	if (!c || (c->kind != CELL_DBL && c->kind != CELL_INT))
		return -1;
	*v = c->kind == CELL_DBL ? c->u.d : (double)c->u.i;
	return 0;
}

void table_set_str(struct table *t, size_t row, int col, const char *s)
{
	struct cell *c = cell_at(t, row, col);

	if (!c)
		return;
	cell_clear(c);
	if (s) {
		c->kind = CELL_STR;
		c->u.s = xstrdup(s);
	}
}

void table_set_int(struct table *t, size_t row, int col, int64_t v)
{
	struct cell *c = cell_at(t, row, col);

	if (!c)
		return;
	cell_clear(c);
	c->kind = CELL_INT;
	c->u.i = v;
}

void table_set_float(struct table *t, size_t row, int col, double v)
{
	struct cell *c = cell_at(t, row, col);

	if (!c)
		return;
	cell_clear(c);
	c->kind = CELL_DBL;
	c->u.d = v;
}

int table_add_seconds_col(struct table *t, const char *name, enum output_format fmt)
{
	return table_add_col(t, name, fmt == OUTPUT_TEXT ? COL_STR : COL_FLOAT);
}

void table_set_seconds(struct table *t, size_t row, int col, double s, int decimals,
		       enum output_format fmt)
{
	char buf[64];

	if (fmt != OUTPUT_TEXT) {
		table_set_float(t, row, col, s);
		return;
	}
	snprintf(buf, sizeof(buf), "%.*f", decimals, s);
	table_set_str(t, row, col, buf);
}

void table_add_meta(struct table *t, const char *key, const char *value,
		    int value_is_number)
{
	size_t i;

	key = key ? key : "";
	value = value ? value : "";
	for (i = 0; i < t->nmeta; i++)
		if (!strcmp(t->meta[i].key, key))
			break;
	if (i == t->nmeta) {
		ARRAY_GROW(t->meta, t->meta_cap, t->nmeta + 1);
		t->meta[i].key = xstrdup(key);
		t->nmeta++;
	} else {
		free(t->meta[i].value);
	}
	t->meta[i].value = xstrdup(value);
	t->meta[i].is_number = value_is_number;
}

int output_parse_format(const char *s, enum output_format *fmt)
{
	if (!s)
		return -1;
	if (!strcmp(s, "text"))
		*fmt = OUTPUT_TEXT;
	else if (!strcmp(s, "csv"))
		*fmt = OUTPUT_CSV;
	else if (!strcmp(s, "json"))
		*fmt = OUTPUT_JSON;
	else
		return -1;
	return 0;
}

/* ---- number formatting ---- */

/* Shortest %.Ng (N = 15..17) that reads back exactly; ".0" added when it
 * looks like an integer.  v must be finite. */
static void fmt_exact(char *buf, size_t size, double v)
{
	int prec;

	for (prec = 15; prec <= 17; prec++) {
		snprintf(buf, size, "%.*g", prec, v);
		if (strtod(buf, NULL) == v)
			break;
	}
	if (!strpbrk(buf, ".e"))
		strncat(buf, ".0", size - strlen(buf) - 1);
}

/* Is s a JSON number (RFC 8259 grammar)? */
static int is_json_number(const char *s)
{
	if (*s == '-')
		s++;
	if (*s == '0')
		s++;
	else if (*s >= '1' && *s <= '9')
		while (*s >= '0' && *s <= '9')
			s++;
	else
		return 0;
	if (*s == '.') {
		s++;
		if (!(*s >= '0' && *s <= '9'))
			return 0;
		while (*s >= '0' && *s <= '9')
			s++;
	}
	if (*s == 'e' || *s == 'E') {
		s++;
		if (*s == '+' || *s == '-')
			s++;
		if (!(*s >= '0' && *s <= '9'))
			return 0;
		while (*s >= '0' && *s <= '9')
			s++;
	}
	return *s == 0;
}

/*
 * The cell as text for fmt (TEXT or CSV; JSON also uses it for numbers).
 * Returns the cell's own string, buf, or "" for null.  *is_str tells
 * whether the value is a string cell (JSON quotes those).
 */
static const char *cell_repr(const struct cell *c, enum col_type type,
			     enum output_format fmt, char *buf, size_t size,
			     int *is_str)
{
	*is_str = 0;
	switch (c->kind) {
	case CELL_NULL:
		return "";
	case CELL_STR:
		*is_str = 1;
		return c->u.s;
	case CELL_INT:
		switch (type) {
		case COL_STR:
		case COL_INT:
			snprintf(buf, size, "%" PRId64, c->u.i);
			return buf;
		case COL_FLOAT:
		case COL_PCT: {
			struct cell d = { .kind = CELL_DBL, .u.d = (double)c->u.i };

			return cell_repr(&d, type, fmt, buf, size, is_str);
		}
		}
		break;
	case CELL_DBL:
		if (!isfinite(c->u.d))
			return "";
		switch (type) {
		case COL_INT:
			snprintf(buf, size, "%.0f", c->u.d);
			return buf;
		case COL_FLOAT:
			if (fmt == OUTPUT_TEXT)
				snprintf(buf, size, "%.2f", c->u.d);
			else
				fmt_exact(buf, size, c->u.d);
			return buf;
		case COL_PCT:
			snprintf(buf, size, fmt == OUTPUT_TEXT ? "%.2f%%" : "%.2f", c->u.d);
			return buf;
		case COL_STR:
			fmt_exact(buf, size, c->u.d);
			return buf;
		}
		break;
	}
	return "";
}

/* ---- text ---- */

/* Display width: characters as lw_str writes them (each '?' one). */
static size_t text_width(const char *s)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t w = 0, len;
	int ok;

	for (; *p; w++) {
		len = text_char(p, &ok);
		p += len;
	}
	return w;
}

/* Writes a line with spaces held back until something else follows, so
 * lines never end in spaces. */
struct linew {
	FILE *f;
	size_t spaces;
};

static void lw_spaces(struct linew *lw, size_t n)
{
	lw->spaces += n;
}

/* s as text_write_string shows it: what a terminal would obey is '?' */
static void lw_str(struct linew *lw, const char *s)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t len;
	int ok;

	while (*p) {
		if (*p == ' ') {
			lw->spaces++;
			p++;
			continue;
		}
		for (; lw->spaces; lw->spaces--)
			fputc(' ', lw->f);
		len = text_char(p, &ok);
		if (ok)
			fwrite(p, 1, len, lw->f);
		else
			fputc('?', lw->f);
		p += len;
	}
}

static void lw_end(struct linew *lw)
{
	lw->spaces = 0;
	fputc('\n', lw->f);
}

static void text_cell(struct linew *lw, const char *s, size_t width,
		      int right, int last)
{
	size_t w = text_width(s);
	size_t pad = width > w ? width - w : 0;

	if (right)
		lw_spaces(lw, pad);
	lw_str(lw, s);
	if (!right && !last)
		lw_spaces(lw, pad);
}

static int write_text(const struct table *t, FILE *f)
{
	size_t *width, r, c;
	char buf[NUMBUF];
	struct linew lw = { f, 0 };
	int is_str;

	if (!t->ncols)
		return 0;
	width = xcalloc(t->ncols, sizeof(*width));
	for (c = 0; c < t->ncols; c++) {
		width[c] = text_width(t->cols[c].name);
		for (r = 0; r < t->nrows; r++) {
			const char *s = cell_repr(cell_get(t, r, c), t->cols[c].type,
						  OUTPUT_TEXT, buf, sizeof(buf), &is_str);
			width[c] = MAX(width[c], text_width(s));
		}
	}
	for (c = 0; c < t->ncols; c++) {
		if (c)
			lw_spaces(&lw, 2);
		text_cell(&lw, t->cols[c].name, width[c], t->cols[c].type != COL_STR,
			  c + 1 == t->ncols);
	}
	lw_end(&lw);
	for (r = 0; r < t->nrows; r++) {
		for (c = 0; c < t->ncols; c++) {
			const char *s = cell_repr(cell_get(t, r, c), t->cols[c].type,
						  OUTPUT_TEXT, buf, sizeof(buf), &is_str);

			if (c)
				lw_spaces(&lw, 2);
			text_cell(&lw, s, width[c], t->cols[c].type != COL_STR,
				  c + 1 == t->ncols);
		}
		lw_end(&lw);
	}
	free(width);
	return 0;
}

/* ---- CSV ---- */

static int write_csv(const struct table *t, FILE *f)
{
	char buf[NUMBUF];
	size_t r, c;
	int is_str;

	if (!t->ncols)
		return 0;
	for (c = 0; c < t->ncols; c++) {
		if (c)
			fputc(',', f);
		csv_write_field(f, t->cols[c].name, CSV_TEXT);
	}
	fputc('\n', f);
	for (r = 0; r < t->nrows; r++) {
		for (c = 0; c < t->ncols; c++) {
			const char *s = cell_repr(cell_get(t, r, c), t->cols[c].type,
						  OUTPUT_CSV, buf, sizeof(buf), &is_str);

			if (c)
				fputc(',', f);
			/* the formula guard for string cells only: numbers
			 * (a pid of -1) stay numbers */
			csv_write_field(f, s, is_str ? CSV_TEXT : 0);
		}
		fputc('\n', f);
	}
	return 0;
}

/* ---- JSON ---- */

static void json_cell(FILE *f, const struct cell *cell, const struct column *col)
{
	char buf[NUMBUF];
	const char *s;
	int is_str;

	s = cell_repr(cell, col->type, OUTPUT_JSON, buf, sizeof(buf), &is_str);
	if (is_str || (col->type == COL_STR && cell->kind != CELL_NULL && *s))
		json_write_string(f, s);
	else if (!*s)
		fputs("null", f);	/* null cell or non-finite double */
	else
		fputs(s, f);
}

static int write_json(const struct table *t, FILE *f)
{
	size_t i, r, c;

	fputs("{\"meta\":{", f);
	for (i = 0; i < t->nmeta; i++) {
		if (i)
			fputc(',', f);
		json_write_string(f, t->meta[i].key);
		fputc(':', f);
		if (t->meta[i].is_number && is_json_number(t->meta[i].value))
			fputs(t->meta[i].value, f);
		else
			json_write_string(f, t->meta[i].value);
	}
	fputs("},\n\"rows\":[\n", f);
	for (r = 0; r < t->nrows; r++) {
		fputc('{', f);
		for (c = 0; c < t->ncols; c++) {
			if (c)
				fputc(',', f);
			json_write_string(f, t->cols[c].name);
			fputc(':', f);
			json_cell(f, cell_get(t, r, c), &t->cols[c]);
		}
		fputs(r + 1 < t->nrows ? "},\n" : "}\n", f);
	}
	fputs("]}\n", f);
	return 0;
}

int table_write(const struct table *t, enum output_format fmt, FILE *f)
{
	switch (fmt) {
	case OUTPUT_TEXT:
		write_text(t, f);
		break;
	case OUTPUT_CSV:
		write_csv(t, f);
		break;
	case OUTPUT_JSON:
		write_json(t, f);
		break;
	default:
		return -1;
	}
	if (fflush(f) != 0 || ferror(f))
		return -1;
	return 0;
}
