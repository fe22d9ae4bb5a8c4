/*
 * output.h - tables of results written as aligned text, CSV or JSON.
 *
 * A table has typed columns and rows of cells; reports and listings build
 * one and write it in the format the user asked for.  Text is aligned
 * (numbers right, text left, long text cut only in the last column never),
 * CSV follows RFC 4180 with a header row, JSON is
 *   {"meta": {...}, "rows": [{"col": value, ...}, ...]}
 * with numbers as JSON numbers and missing cells as null.
 */
#ifndef STROBE_OUTPUT_H
#define STROBE_OUTPUT_H

#include <stdio.h>
#include <stdint.h>
#include "util.h"

enum output_format { OUTPUT_TEXT, OUTPUT_CSV, OUTPUT_JSON };

enum col_type {
	COL_STR,
	COL_INT,	/* int64 */
	COL_FLOAT,	/* double, text shows 2 decimals */
	COL_PCT,	/* double percent, text shows "12.34%", CSV/JSON 12.34 */
};

struct table;

struct table *table_new(void);
void table_free(struct table *t);

/* Add a column; returns its index. */
int table_add_col(struct table *t, const char *name, enum col_type type);
/* Add a row of empty (null) cells; returns its index. */
size_t table_add_row(struct table *t);
void table_set_str(struct table *t, size_t row, int col, const char *s);
void table_set_int(struct table *t, size_t row, int col, int64_t v);
void table_set_float(struct table *t, size_t row, int col, double v);

size_t table_rows(const struct table *t);

/* A time in seconds, as tables of moments show it (report --markers,
 * onsets, phases): text writes it with a fixed number of decimals (COL_
 * FLOAT's 2 are too few for a moment), CSV and JSON the number.
 * table_add_seconds_col() adds the column for fmt; table_set_seconds()
 * sets its cell, with decimals for text. */
int table_add_seconds_col(struct table *t, const char *name, enum output_format fmt);
void table_set_seconds(struct table *t, size_t row, int col, double s, int decimals,
		       enum output_format fmt);

/* Reading a table back (tests, and callers that post-process a report).
 * table_col: the index of the column named name, or -1.  The getters
 * return 0 and the value when the cell holds one of that kind (a float
 * getter also takes an integer), -1 when it is null, of another kind or
 * out of range; table_get_str's string belongs to the table. */
int table_col(const struct table *t, const char *name);
int table_get_str(const struct table *t, size_t row, int col, const char **s);
int table_get_int(const struct table *t, size_t row, int col, int64_t *v);
int table_get_float(const struct table *t, size_t row, int col, double *v);

/* Meta data (JSON "meta" object; text and CSV ignore it). value_is_number
 * writes it as a JSON number. */
void table_add_meta(struct table *t, const char *key, const char *value,
		    int value_is_number);

/* Parse "text", "csv" or "json". -1 on anything else. */
int output_parse_format(const char *s, enum output_format *fmt);

int table_write(const struct table *t, enum output_format fmt, FILE *f);

#endif
