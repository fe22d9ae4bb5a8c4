/*
 * exportcsv.h - the output code of 'strobe export': a buffered writer
 * (struct ob) with fast number, CSV and JSON fields, and the CSV header
 * and sample rows, shared by the export of a local session
 * (tools/cmd_export.c) and of pushed sessions (lib/fleet/fleetexport.c),
 * so that both write the same bytes for the same sample.
 *
 * A CSV row is
 *   time_ns,tsc,cpu,pid,tid,comm,binary,symbol,<event>...,offset,mode,build_id
 * (exportcsv_row() writes it without the newline; the local export may
 * add process_start_ns and cgroup after it).
 */
#ifndef STROBE_EXPORTCSV_H
#define STROBE_EXPORTCSV_H

#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include "util.h"

struct ob {
	FILE *f;
	char *buf;
	size_t n, cap;
	int err;			/* errno of the first failed write */
};

void ob_flush(struct ob *o);

static inline void ob_room(struct ob *o, size_t len)
{
	if (o->n + len > o->cap) {
		ob_flush(o);
		if (len > o->cap) {
			o->cap = len;
			o->buf = xrealloc(o->buf, o->cap);
		}
	}
}

static inline void ob_mem(struct ob *o, const char *s, size_t len)
{
	ob_room(o, len);
	memcpy(o->buf + o->n, s, len);
	o->n += len;
}

static inline void ob_str(struct ob *o, const char *s)
{
	ob_mem(o, s, strlen(s));
}

static inline void ob_chr(struct ob *o, char c)
{
	ob_room(o, 1);
	o->buf[o->n++] = c;
}

/* Write v in decimal at p; the end. */
static inline char *put_u64(char *p, uint64_t v)
{
	static const char pairs[] =
		"00010203040506070809101112131415161718192021222324252627282930313233343536373839"
		"40414243444546474849505152535455565758596061626364656667686970717273747576777879"
		"8081828384858687888990919293949596979899";
	char tmp[24];
	int i = sizeof(tmp);

	while (v >= 100) {
		unsigned d = (unsigned)(v % 100) * 2;

		v /= 100;
		tmp[--i] = pairs[d + 1];
		tmp[--i] = pairs[d];
	}
	if (v >= 10) {
		tmp[--i] = pairs[v * 2 + 1];
		tmp[--i] = pairs[v * 2];
	} else {
		tmp[--i] = (char)('0' + v);
	}
	memcpy(p, tmp + i, sizeof(tmp) - i);
	return p + (sizeof(tmp) - i);
}

/* Write v as 0x<hex> at p; the end. */
static inline char *put_hex(char *p, uint64_t v)
{
	static const char hex[] = "0123456789abcdef";
	char tmp[20];
	int i = sizeof(tmp);

	do {
		tmp[--i] = hex[v & 15];
		v >>= 4;
	} while (v);
	tmp[--i] = 'x';
	tmp[--i] = '0';
	memcpy(p, tmp + i, sizeof(tmp) - i);
	return p + (sizeof(tmp) - i);
}

void ob_u64(struct ob *o, uint64_t v);
void ob_i64(struct ob *o, int64_t v);
/* Microseconds from ns: "-12.345" exactly, no float rounding. */
void ob_us(struct ob *o, int64_t ns);
void ob_printf(struct ob *o, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* One CSV field, escaped by csv_escape() (lib/base/util.c); flags CSV_TEXT
 * for text columns (names, paths), which get the spreadsheet formula guard. */
void ob_csv(struct ob *o, const char *s, int flags);
/* A JSON string literal; bytes that are not UTF-8 become U+FFFD. */
void ob_json(struct ob *o, const char *s);

/* The mode column of a sample's flags: user, kernel, hypervisor, guest. */
const char *exportcsv_mode(uint32_t flags);

/* The header line up to build_id (no newline): the events' names as
 * CSV text fields. */
void exportcsv_header(struct ob *o, const char *const *events, int nev);

/* One sample, its text fields already CSV-escaped. */
struct exportcsv_row {
	uint64_t time_ns, tsc, cpu, pid, tid, offset;
	int tsc_null, offset_null;
	const char *comm;		/* escaped */
	size_t lcomm;
	const char *loc;		/* "binary,symbol", both escaped */
	size_t lloc;
	const char *build_id;		/* escaped */
	size_t lbuild_id;
	uint32_t flags;
	int nev;
	const int64_t *c;		/* c[0..nev): the events' increases */
	uint32_t c_null;		/* bit i: c[i] is NULL (empty) */
};

/* Append the row (no newline). */
void exportcsv_row(struct ob *o, const struct exportcsv_row *r);
/* Append the process_start_ns column of --process-start: ",START", or ","
 * when unknown (start_ns 0: procset_at() found none). */
void exportcsv_process_start(struct ob *o, int64_t start_ns);

#endif
