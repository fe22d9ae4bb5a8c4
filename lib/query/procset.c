/*
 * procset.c - process identity in queries (see procset.h): a session's
 * processes that shared a pid, sorted by (pid, start), bisected.
 */
#include "config.h"
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "procset.h"

int procset_load(struct db *db, const struct db_session *s, int64_t pid, struct procset *ps,
		 struct error *e)
{
	sqlite3_stmt *st;
	int rc;

	memset(ps, 0, sizeof(*ps));
	ps->session_start_ns = s->start_ns;
	ps->decimals = 3;
	if (sqlite3_prepare_v2(db_sqlite(db), pid >= 0 ?
			       "SELECT pid,coalesce(start_ns,0) FROM processes WHERE "
			       "session_id=?1 AND pid=?2 ORDER BY 1,2" : pid == PROCSET_ALL ?
			       "SELECT pid,coalesce(start_ns,0) FROM processes WHERE "
			       "session_id=?1 ORDER BY 1,2" :
			       "SELECT pid,coalesce(start_ns,0) FROM processes WHERE session_id=?1 "
			       "AND pid IN (SELECT pid FROM processes WHERE session_id=?1 "
			       "GROUP BY pid HAVING count(*)>1) ORDER BY 1,2", -1, &st, NULL))
		return db_sql_error(db, e, "reading processes");
	sqlite3_bind_int64(st, 1, s->id);
	sqlite3_bind_int64(st, 2, pid);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		procset_add(ps, sqlite3_column_int64(st, 0), sqlite3_column_int64(st, 1));
	}
	sqlite3_finalize(st);
	if (rc != SQLITE_DONE) {
		procset_free(ps);
		return db_sql_error(db, e, "reading processes");
	}
	/* enough decimals that no two of a pid's labels print alike */
	for (size_t i = 1; i < ps->n; i++) {
		const struct procset_ent *a = &ps->v[i - 1], *b = &ps->v[i];

		while (a->pid == b->pid && ps->decimals < 9) {
			char x[40], y[40];

			snprintf(x, sizeof(x), "%.*f", ps->decimals,
				 (a->start_ns - s->start_ns) / 1e9);
			snprintf(y, sizeof(y), "%.*f", ps->decimals,
				 (b->start_ns - s->start_ns) / 1e9);
			if (strcmp(x, y))
				break;
			ps->decimals += 3;
		}
	}
	return 0;
}

void procset_add(struct procset *ps, int64_t pid, int64_t start_ns)
{
	ARRAY_GROW(ps->v, ps->cap, ps->n + 1);
	ps->v[ps->n].pid = pid;
	ps->v[ps->n].start_ns = start_ns;
	ps->n++;
}

void procset_free(struct procset *ps)
{
	free(ps->v);
	ps->v = NULL;
	ps->n = ps->cap = 0;
}

/* Index of pid's first entry, and their number in *n. */
static size_t first_of(const struct procset *ps, int64_t pid, size_t *n)
{
	size_t lo = 0, hi = ps->n, i;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;

		if (ps->v[mid].pid < pid)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (i = lo; i < ps->n && ps->v[i].pid == pid; i++)
		;
	*n = i - lo;
	return lo;
}

size_t procset_count(const struct procset *ps, int64_t pid)
{
	size_t n;

	first_of(ps, pid, &n);
	return n;
}

int64_t procset_at(const struct procset *ps, int64_t pid, int64_t time_ns)
{
	size_t n, i = first_of(ps, pid, &n), k;

	if (!n)
		return 0;
	for (k = n; k > 1 && ps->v[i + k - 1].start_ns > time_ns; k--)
		;
	return ps->v[i + k - 1].start_ns;
}

int procset_has(const struct procset *ps, int64_t pid, int64_t start_ns)
{
	size_t n, i = first_of(ps, pid, &n);

	for (size_t k = 0; k < n; k++)
		if (ps->v[i + k].start_ns == start_ns)
			return 1;
	return 0;
}

void procset_label(const struct procset *ps, int64_t pid, int64_t start_ns, char *buf,
		   size_t len)
{
	if (!procset_has(ps, pid, start_ns))
		snprintf(buf, len, "%lld@?", (long long)pid);
	else
		snprintf(buf, len, "%lld@%.*f", (long long)pid, ps->decimals,
			 (start_ns - ps->session_start_ns) / 1e9);
}

int procset_parse_pid(const char *s, int64_t *pid, int64_t *at_ns, int64_t *slack_ns)
{
	const char *at = strchr(s, '@'), *p;
	unsigned long long v;
	char *end;

	*at_ns = -1;
	*slack_ns = 0;
	if (!*s || *s < '0' || *s > '9')
		return -1;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno || v > UINT32_MAX || end != (at ? at : s + strlen(s)))
		return -1;
	*pid = (int64_t)v;
	if (at) {
		/* seconds: digits, an optional fraction of up to 9 digits */
		int64_t sec = 0, frac = 0, unit = 1000000000;
		int nd = 0;

		p = at + 1;
		if (*p < '0' || *p > '9')
			return -1;
		for (; *p >= '0' && *p <= '9'; p++) {
			if (sec > 1000000000)
				return -1;
			sec = sec * 10 + (*p - '0');
		}
		if (*p == '.') {
			for (p++; *p >= '0' && *p <= '9'; p++) {
				if (++nd > 9)
					return -1;
				unit /= 10;
				frac += (*p - '0') * unit;
			}
		}
		if (*p == 's')
			p++;
		if (*p)
			return -1;
		*at_ns = sec * 1000000000 + frac;
		*slack_ns = unit / 2;	/* half a unit of the last decimal given */
	}
	return 0;
}
