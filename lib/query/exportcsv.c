/*
 * exportcsv.c - the output code of 'strobe export' (exportcsv.h).
 */
#include "config.h"
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include "strobe.h"
#include "exportcsv.h"

void ob_flush(struct ob *o)
{
	if (o->n && !o->err && fwrite(o->buf, 1, o->n, o->f) != o->n)
		o->err = errno ? errno : EIO;
	o->n = 0;
}

void ob_u64(struct ob *o, uint64_t v)
{
	ob_room(o, 24);
	o->n = (size_t)(put_u64(o->buf + o->n, v) - o->buf);
}

void ob_i64(struct ob *o, int64_t v)
{
	if (v < 0) {
		ob_chr(o, '-');
		ob_u64(o, -(uint64_t)v);
	} else {
		ob_u64(o, (uint64_t)v);
	}
}


void ob_us(struct ob *o, int64_t ns)
{
	uint64_t a;
	char frac[4];

	if (ns < 0)
		ob_chr(o, '-');
	a = ns < 0 ? -(uint64_t)ns : (uint64_t)ns;
	ob_u64(o, a / 1000);
	frac[0] = '.';
	frac[1] = '0' + a % 1000 / 100;
	frac[2] = '0' + a % 100 / 10;
	frac[3] = '0' + a % 10;
	ob_mem(o, frac, 4);
}

void ob_printf(struct ob *o, const char *fmt, ...)
{
	va_list ap;
	int len;

	va_start(ap, fmt);
	len = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	ob_room(o, len + 1);
	va_start(ap, fmt);
	vsnprintf(o->buf + o->n, len + 1, fmt, ap);
	va_end(ap);
	o->n += len;
}

/* One CSV field, escaped by csv_escape() (lib/base/util.c); flags CSV_TEXT for
 * text columns (names, paths), which get the spreadsheet formula guard. */
void ob_csv(struct ob *o, const char *s, int flags)
{
	s = s ? s : "";
	ob_room(o, CSV_ESCAPE_MAX(strlen(s)));
	o->n += csv_escape(o->buf + o->n, s, flags);
}

/* Length of the valid UTF-8 sequence at p (1-4), or 0 if it is not one. */
static int utf8_len(const unsigned char *p)
{
	if (p[0] < 0x80)
		return 1;
	if (p[0] >= 0xc2 && p[0] <= 0xdf)
		return (p[1] & 0xc0) == 0x80 ? 2 : 0;
	if (p[0] >= 0xe0 && p[0] <= 0xef) {
		if ((p[1] & 0xc0) != 0x80 || (p[2] & 0xc0) != 0x80)
			return 0;
		if ((p[0] == 0xe0 && p[1] < 0xa0) || (p[0] == 0xed && p[1] > 0x9f))
			return 0;	/* overlong, surrogate */
		return 3;
	}
	if (p[0] >= 0xf0 && p[0] <= 0xf4) {
		if ((p[1] & 0xc0) != 0x80 || (p[2] & 0xc0) != 0x80 || (p[3] & 0xc0) != 0x80)
			return 0;
		if ((p[0] == 0xf0 && p[1] < 0x90) || (p[0] == 0xf4 && p[1] > 0x8f))
			return 0;
		return 4;
	}
	return 0;
}

/* A JSON string literal; bytes that are not UTF-8 become U+FFFD, so the
 * output is always valid JSON whatever a comm or path holds. */
void ob_json(struct ob *o, const char *s)
{
	const unsigned char *p = (const unsigned char *)(s ? s : "");

	ob_chr(o, '"');
	while (*p) {
		int n;

		switch (*p) {
		case '"': ob_str(o, "\\\""); p++; continue;
		case '\\': ob_str(o, "\\\\"); p++; continue;
		case '\n': ob_str(o, "\\n"); p++; continue;
		case '\r': ob_str(o, "\\r"); p++; continue;
		case '\t': ob_str(o, "\\t"); p++; continue;
		}
		if (*p < 0x20) {
			ob_printf(o, "\\u%04x", *p);
			p++;
			continue;
		}
		n = utf8_len(p);
		if (!n) {
			ob_str(o, "\\ufffd");
			p++;
			continue;
		}
		ob_mem(o, (const char *)p, n);
		p += n;
	}
	ob_chr(o, '"');
}

const char *exportcsv_mode(uint32_t flags)
{
	switch (flags & STROBE_SAMPLE_MODE_MASK) {
	case STROBE_SAMPLE_USER: return "user";
	case STROBE_SAMPLE_KERNEL: return "kernel";
	case STROBE_SAMPLE_HV: return "hypervisor";
	case STROBE_SAMPLE_GUEST: return "guest";
	}
	return "";
}

void exportcsv_header(struct ob *o, const char *const *events, int nev)
{
	ob_str(o, "time_ns,tsc,cpu,pid,tid,comm,binary,symbol");
	for (int i = 0; i < nev; i++) {
		ob_chr(o, ',');
		ob_csv(o, events[i], CSV_TEXT);
	}
	ob_str(o, ",offset,mode,build_id");
}

void exportcsv_row(struct ob *o, const struct exportcsv_row *r)
{
	const char *mode = exportcsv_mode(r->flags);
	size_t lm = strlen(mode);
	char *p;

	/* numbers at most 20 digits, 0x and 16 hex digits, the separators */
	ob_room(o, 24 * (7 + (size_t)r->nev) + r->lcomm + r->lloc + r->lbuild_id + lm + 8);
	p = o->buf + o->n;
	p = put_u64(p, r->time_ns);
	*p++ = ',';
	if (!r->tsc_null)
		p = put_u64(p, r->tsc);
	*p++ = ',';
	p = put_u64(p, r->cpu);
	*p++ = ',';
	p = put_u64(p, r->pid);
	*p++ = ',';
	p = put_u64(p, r->tid);
	*p++ = ',';
	memcpy(p, r->comm, r->lcomm);
	p += r->lcomm;
	*p++ = ',';
	memcpy(p, r->loc, r->lloc);
	p += r->lloc;
	for (int i = 0; i < r->nev; i++) {
		*p++ = ',';
		if (!((r->c_null >> i) & 1))
			p = put_u64(p, (uint64_t)r->c[i]);
	}
	*p++ = ',';
	if (!r->offset_null)
		p = put_hex(p, r->offset);
	*p++ = ',';
	memcpy(p, mode, lm);
	p += lm;
	*p++ = ',';
	memcpy(p, r->build_id, r->lbuild_id);
	p += r->lbuild_id;
	o->n = (size_t)(p - o->buf);
}

void exportcsv_process_start(struct ob *o, int64_t start_ns)
{
	ob_chr(o, ',');
	if (start_ns > 0)
		ob_u64(o, (uint64_t)start_ns);
}
