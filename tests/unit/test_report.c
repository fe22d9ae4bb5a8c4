/*
 * test_report.c - lib/query/report.c, hot-spot reports, on a database made
 * through lib/store/db.h (the real schema; no daemon).
 *
 * The fixture: session 1 counts instructions, cycles, cache-misses and
 * cache-references over 15 samples with known values in user code of the
 * built workloads (split603010, libhot.so; both in the binary cache), the
 * kernel (named from a kallsyms snapshot), a binary whose cached copy is
 * gone, [vdso] and no binary at all, on two CPUs with per-CPU tails.
 * Session 2 (the latest) has two samples, one of them stored in the
 * middle of session 1's rows.  Every sample goes into samples and into
 * the histogram sample_agg, as strobed does.
 *
 * An oracle in this file computes each expected report from the fixture
 * array alone: filter, name (from the function offsets read from the ELF
 * files, dbfix.h, and the snapshot text), group, sum, order (samples
 * descending, then binary, symbol, source), metrics.  Checked against it:
 * each --by mode; each filter (session, pid, comm, binary by path, name or
 * key, kernel, user, from, to) alone and combined; time bounds exactly at
 * a sample's time (inclusive) and one ns off; filters that match nothing;
 * --limit.  Also: the summary (samples, counter totals, unattributed
 * tails, unresolved, notes), derived metrics (ipc, per 1k instructions,
 * miss rate) with zero denominators left null, "[binary unavailable]"
 * with no name guessed, kernel names, and the report read from sample_agg
 * being the same as the one read from the raw samples.  On databases of
 * their own: the other metric families (cpu-cycles, branch-instructions,
 * X-load-misses / X-loads, no rate without the reference event), a binary
 * stripped of all symbols (a note, not unresolved), 300 unavailable
 * binaries with 1500 locations (growth of the tables, order, notes
 * capped at 8), a running or aborted session whose histogram lacks its
 * last samples (read from the raw rows), and a session that does not
 * exist.
 */
#include "config.h"
#include <math.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>
#include "dbfix.h"
#include "procset.h"
#include "report.h"

#define SPLIT_KEY "buildid:5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a"
#define HOT_KEY "buildid:6b6b6b6b6b6b6b6b6b6b6b6b6b6b6b6b6b6b6b6b"
#define GONE_KEY "buildid:dead0000dead0000dead0000dead0000dead0000"
#define KERNEL_KEY "kernel:feedfacefeedfacefeedfacefeedfacefeedface"
#define KSYMS_KEY "kallsyms:0123456789abcdef0123456789abcdef"
#define START_NS 1000000000000LL
#define NEV 4

static const char ksyms[] =
	"ffffffff81000000 T _stext\n"
	"ffffffff81001000 T do_syscall_64\n"
	"ffffffff81002000 t read_zero\n"
	"ffffffffc0001000 t ext4_fn [ext4]\n";

static const char *const evnames[NEV] = {
	"instructions", "cycles", "cache-misses", "cache-references",
};

enum bin { B_SPLIT, B_HOT, B_KERN, B_GONE, B_VDSO, B_NONE, NBIN };
enum base { O_ABS, O_W60, O_W30, O_W10, O_HOT };
enum comm { C_SPLIT = 1, C_WORKER, C_SWAPPER, NCOMM };

#define U STROBE_SAMPLE_USER
#define K STROBE_SAMPLE_KERNEL

/* One sample of the fixture and what it must be named. */
struct smp {
	int session;
	int64_t t_us;		/* since the session start */
	int cpu, pid;
	enum comm comm;
	enum bin bin;
	enum base base;
	uint64_t off;		/* added to base */
	uint32_t flags;
	uint64_t c[NEV];	/* instructions, cycles, cache-misses, cache-references */
	const char *sym;	/* expected symbol */
	const char *line;	/* expected source: "" none, "*" any file:line,
				 * else a marker whose line in split603010.c it is */
};

static const struct smp fixture[] = {
	{ 1,  100, 0, 100, C_SPLIT,   B_SPLIT, O_W60,  4, U, { 1000,  500, 10, 100 }, "work60", "DEFINE_WORK(work60)" },
	{ 1,  200, 0, 100, C_SPLIT,   B_SPLIT, O_W60,  8, U, { 2000, 1000, 20, 200 }, "work60", "DEFINE_WORK(work60)" },
	{ 1,  300, 1, 100, C_SPLIT,   B_SPLIT, O_W60,  4, U, { 1000,  500,  0, 100 }, "work60", "DEFINE_WORK(work60)" },
	{ 1,  400, 0, 100, C_SPLIT,   B_SPLIT, O_W30,  4, U, { 3000, 1000, 30,   0 }, "work30", "DEFINE_WORK(work30)" },
	{ 1,  500, 1, 101, C_WORKER,  B_SPLIT, O_W30, 12, U, { 1500,  500,  5,   0 }, "work30", "DEFINE_WORK(work30)" },
	/* session 2's first sample is stored here, between session 1's rows */
	{ 2,   50, 0, 500, C_SPLIT,   B_SPLIT, O_W10,  4, U, {    7,    0,  0,   0 }, "work10", "DEFINE_WORK(work10)" },
	{ 1,  600, 0, 100, C_SPLIT,   B_SPLIT, O_W10,  4, U, {    0,    0,  0,   0 }, "work10", "DEFINE_WORK(work10)" },
	{ 1,  700, 1, 200, C_WORKER,  B_HOT,   O_HOT,  8, U, { 4000, 2000, 40, 400 }, "hot_in_lib", "*" },
	{ 1,  800, 0, 200, C_WORKER,  B_HOT,   O_HOT,  8, U, { 4000, 2000, 40, 400 }, "hot_in_lib", "*" },
	{ 1,  900, 1,   0, C_SWAPPER, B_KERN,  O_ABS, 0xffffffff81001010ULL, K, { 100, 400, 1, 10 }, "do_syscall_64", "" },
	{ 1, 1000, 0, 200, C_WORKER,  B_KERN,  O_ABS, 0xffffffffc0001020ULL, K, { 200, 100, 2, 20 }, "ext4_fn [ext4]", "" },
	{ 1, 1100, 1, 100, C_SPLIT,   B_KERN,  O_ABS, 0xffffffff81001020ULL, K, { 100, 100, 0,  0 }, "do_syscall_64", "" },
	/* gone: the row's path holds split603010 and these are its work60
	 * and work30 offsets, but nothing may be named from it */
	{ 1, 1200, 0, 300, C_WORKER,  B_GONE,  O_W60,  4, U, {  700,  700,  7,  70 }, "[binary unavailable]", "" },
	{ 1, 1300, 1, 300, C_WORKER,  B_GONE,  O_W30,  4, U, {  300,  300,  3,  30 }, "[binary unavailable]", "" },
	{ 1, 1400, 0, 100, C_SPLIT,   B_VDSO,  O_ABS, 0xa10, U, {   50,   50,  0,   0 }, "[unknown]", "" },
	{ 1, 1500, 1, 400, C_SPLIT,   B_NONE,  O_ABS, 0, U, {   10,   20,  0,   0 }, "[unknown]", "" },
	{ 2,  900, 1, 500, C_SPLIT,   B_SPLIT, O_W60,  4, U, {    9,    0,  0,   0 }, "work60", "DEFINE_WORK(work60)" },
};
#define NFIX ARRAY_SIZE(fixture)

/* per-CPU tails of session 1 (counter increases after the last sample) */
static const uint64_t tails[2][NEV] = { { 5, 6, 7, 8 }, { 1, 2, 3, 4 } };

static const char *const comm_names[NCOMM] = { NULL, "split603010", "worker", "swapper" };

struct fx {
	struct fixdb f;
	struct db_session s1, s2;
	char split[PATH_MAX], hot[PATH_MAX], split_src[PATH_MAX];
	int64_t bin_id[NBIN];
	const char *bin_path[NBIN];	/* the binary column */
	const char *bin_key[NBIN];
	int64_t comm_id[NCOMM];
	uint64_t base[O_HOT + 1];
	char line[NFIX][64];		/* expected source suffix per sample */
};

static struct fx *X;

static uint64_t smp_off(const struct fx *x, const struct smp *s)
{
	return x->base[s->base] + s->off;
}

static void session_init(struct db_session *s, const char *name, int nev)
{
	memset(s, 0, sizeof(*s));
	snprintf(s->name, sizeof(s->name), "%s", name);
	snprintf(s->state, sizeof(s->state), "running");
	snprintf(s->backend, sizeof(s->backend), "perf");
	s->nr_cpus = 2;
	snprintf(s->sample_event, sizeof(s->sample_event), "cpu-clock");
	s->sample_freq = 1000;
	s->start_ns = START_NS;
	snprintf(s->tsc_source, sizeof(s->tsc_source), "none");
	snprintf(s->kallsyms_key, sizeof(s->kallsyms_key), KSYMS_KEY);
	s->nr_events = nev;
	for (int i = 0; i < nev; i++) {
		snprintf(s->events[i].name, sizeof(s->events[i].name), "%s", evnames[i]);
		s->events[i].type = 0;
		s->events[i].config = i;
	}
}

static int setup(void **state)
{
	struct fx *x = calloc(1, sizeof(*x));
	struct error e = { "" };
	struct db *db;
	uint64_t sz;
	size_t i;
	int c;

	fix_path(x->split, sizeof(x->split), "split603010", 0);
	fix_path(x->hot, sizeof(x->hot), "libhot.so", 0);
	fix_path(x->split_src, sizeof(x->split_src), "split603010.c", 1);
	assert_int_equal(fix_elf_func(x->split, "work60", &x->base[O_W60], &sz), 0);
	assert_int_equal(fix_elf_func(x->split, "work30", &x->base[O_W30], &sz), 0);
	assert_int_equal(fix_elf_func(x->split, "work10", &x->base[O_W10], &sz), 0);
	assert_true(sz > 12);
	assert_int_equal(fix_elf_func(x->hot, "hot_in_lib", &x->base[O_HOT], &sz), 0);
	assert_true(sz > 8);
	for (i = 0; i < NFIX; i++) {
		const char *l = fixture[i].line;

		if (!*l || !strcmp(l, "*"))
			snprintf(x->line[i], sizeof(x->line[i]), "%s", l);
		else
			snprintf(x->line[i], sizeof(x->line[i]), "split603010.c:%u",
				 fix_line_of(x->split_src, l));
		assert_true(strcmp(x->line[i], "split603010.c:0") != 0);
	}

	assert_int_equal(fixdb_open(&x->f, "report"), 0);
	db = x->f.db;
	assert_int_equal(fixdb_cache_file(&x->f, SPLIT_KEY, x->split), 0);
	assert_int_equal(fixdb_cache_file(&x->f, HOT_KEY, x->hot), 0);
	assert_int_equal(bincache_store_buf(&x->f.cache, KSYMS_KEY, ksyms, strlen(ksyms), BINCACHE_SHARED, &e), 0);

	x->bin_path[B_SPLIT] = "/opt/fixture/split603010";
	x->bin_key[B_SPLIT] = SPLIT_KEY;
	x->bin_path[B_HOT] = "/opt/fixture/libhot.so";
	x->bin_key[B_HOT] = HOT_KEY;
	x->bin_path[B_KERN] = "[kernel.kallsyms]";
	x->bin_key[B_KERN] = KERNEL_KEY;
	x->bin_path[B_GONE] = x->split;
	x->bin_key[B_GONE] = GONE_KEY;
	x->bin_path[B_VDSO] = "[vdso]";
	x->bin_key[B_VDSO] = "[vdso]";
	x->bin_path[B_NONE] = "[unknown]";
	x->bin_key[B_NONE] = "[unknown]";
	for (i = 0; i < B_NONE; i++) {
		x->bin_id[i] = db_binary_intern(db, x->bin_key[i],
						i == B_KERN ? "[kernel.kallsyms]" : x->bin_path[i],
						i == B_SPLIT || i == B_GONE ? 20000 : -1,
						i == B_SPLIT || i == B_HOT || i == B_GONE, NULL, &e);
		assert_true(x->bin_id[i] > 0);
	}
	x->bin_id[B_NONE] = 0;
	for (c = 1; c < NCOMM; c++)
		assert_true((x->comm_id[c] = db_comm_intern(db, comm_names[c], &e)) > 0);

	session_init(&x->s1, "one", NEV);
	x->s1.kernel_binary_id = x->bin_id[B_KERN];
	assert_int_equal(db_session_insert(db, &x->s1, &e), 0);
	session_init(&x->s2, "two", 1);
	x->s2.start_ns = START_NS;
	assert_int_equal(db_session_insert(db, &x->s2, &e), 0);
	assert_true(x->s2.id > x->s1.id);

	assert_int_equal(db_begin(db, &e), 0);
	for (i = 0; i < NFIX; i++) {
		const struct smp *f = &fixture[i];
		struct db_session *s = f->session == 1 ? &x->s1 : &x->s2;
		struct db_sample smp = {
			.session_id = s->id,
			.time_ns = START_NS + f->t_us * 1000,
			.cpu = f->cpu, .pid = f->pid, .tid = f->pid,
			.comm_id = x->comm_id[f->comm],
			.binary_id = x->bin_id[f->bin],
			.offset = smp_off(x, f),
			.flags = f->flags,
			.nr = s->nr_events,
		};
		struct db_agg agg = {
			.binary_id = smp.binary_id, .offset = smp.offset, .pid = smp.pid,
			.comm_id = smp.comm_id, .flags = f->flags & STROBE_SAMPLE_MODE_MASK,
			.samples = 1,
		};
		int64_t rowid;

		memcpy(smp.c, f->c, sizeof(f->c));
		memcpy(agg.c, f->c, sizeof(f->c));
		rowid = db_sample_insert(db, &smp, &e);
		assert_true(rowid > 0);
		assert_int_equal(db_agg_add(db, s->id, s->nr_events, &agg, &e), 0);
		if (!s->first_sample)
			s->first_sample = rowid;
		s->last_sample = rowid;
		s->samples++;
	}
	for (c = 0; c < 2; c++) {
		struct db_cpu_stats cs = { .cpu = (uint32_t)c, .samples = 1 };

		memcpy(cs.tail, tails[c], sizeof(cs.tail));
		assert_int_equal(db_cpu_stats_put(db, x->s1.id, NEV, &cs, &e), 0);
	}
	x->s1.end_ns = x->s2.end_ns = START_NS + 2000000;
	x->s1.duration_ns = x->s2.duration_ns = 2000000;
	snprintf(x->s1.state, sizeof(x->s1.state), "done");
	snprintf(x->s2.state, sizeof(x->s2.state), "done");
	assert_int_equal(db_session_update(db, &x->s1, &e), 0);
	assert_int_equal(db_session_update(db, &x->s2, &e), 0);
	assert_int_equal(db_commit(db, &e), 0);
	/* a sample with no mapping has no binary: NULL in samples (0 in the
	 * histogram, whose key columns are NOT NULL) */
	assert_int_equal(sqlite3_exec(db_sqlite(db), "UPDATE samples SET binary_id=NULL, "
				      "offset=NULL WHERE binary_id=0", NULL, NULL, NULL), 0);
	X = x;
	*state = x;
	return 0;
}

static int teardown(void **state)
{
	struct fx *x = *state;

	fixdb_close(&x->f);
	free(x);
	return 0;
}

static void set_state(const char *st, int64_t session)
{
	char sql[128];

	snprintf(sql, sizeof(sql), "UPDATE sessions SET state='%s' WHERE id=%lld", st,
		 (long long)session);
	assert_int_equal(sqlite3_exec(db_sqlite(X->f.db), sql, NULL, NULL, NULL), 0);
}

/* ---- the oracle ---- */

struct egroup {
	const char *binary, *symbol, *source;	/* symbol NULL in --by binary, source
						 * NULL unless --by line */
	uint64_t samples, c[NEV];
};

static const char *path_base(const char *p)
{
	const char *s = strrchr(p, '/');

	return s ? s + 1 : p;
}

static int passes(const struct fx *x, const struct report_opts *o, int64_t session,
		  const struct smp *f)
{
	int64_t t = f->t_us * 1000;

	if ((f->session == 1 ? x->s1.id : x->s2.id) != session)
		return 0;
	if (o->pid >= 0 && f->pid != o->pid)
		return 0;
	if (o->comm && strcmp(comm_names[f->comm], o->comm))
		return 0;
	if (o->binary) {
		const char *p = x->bin_path[f->bin], *k = x->bin_key[f->bin];

		if (f->bin == B_NONE)
			return 0;
		if (strcmp(p, o->binary) && strcmp(path_base(p), o->binary) &&
		    strcmp(k, o->binary))
			return 0;
	}
	if (o->mode == REPORT_KERNEL && !(f->flags & K))
		return 0;
	if (o->mode == REPORT_USER && !(f->flags & U))
		return 0;
	if (o->has_from && t < o->from_ns)
		return 0;
	if (o->has_to && t > o->to_ns)
		return 0;
	return 1;
}

static int optcmp(const char *a, const char *b)
{
	return strcmp(a ? a : "", b ? b : "");
}

static int egroup_cmp(const void *pa, const void *pb)
{
	const struct egroup *a = pa, *b = pb;
	int c;

	if (a->samples != b->samples)
		return a->samples > b->samples ? -1 : 1;
	if ((c = strcmp(a->binary, b->binary)))
		return c;
	if ((c = optcmp(a->symbol, b->symbol)))
		return c;
	return optcmp(a->source, b->source);
}

/* The expected groups, in order; returns how many. total: the sums. */
static size_t oracle(const struct fx *x, const struct report_opts *o, int64_t session,
		     struct egroup *g, uint64_t *nsamples, uint64_t *total)
{
	size_t n = 0, i, j;
	int k;

	*nsamples = 0;
	memset(total, 0, NEV * sizeof(*total));
	for (i = 0; i < NFIX; i++) {
		const struct smp *f = &fixture[i];
		const char *bin = x->bin_path[f->bin];
		const char *sym = o->by == REPORT_BY_BINARY ? NULL : f->sym;
		const char *src = o->by == REPORT_BY_LINE ? x->line[i] : NULL;

		if (!passes(x, o, session, f))
			continue;
		for (j = 0; j < n; j++)
			if (!strcmp(g[j].binary, bin) && !optcmp(g[j].symbol, sym) &&
			    !optcmp(g[j].source, src) && (g[j].symbol || !sym) &&
			    (g[j].source || !src))
				break;
		if (j == n) {
			memset(&g[n], 0, sizeof(g[n]));
			g[n].binary = bin;
			g[n].symbol = sym;
			g[n].source = src;
			n++;
		}
		g[j].samples++;
		(*nsamples)++;
		for (k = 0; k < NEV; k++) {
			g[j].c[k] += f->c[k];
			total[k] += f->c[k];
		}
	}
	qsort(g, n, sizeof(*g), egroup_cmp);
	return n;
}

/* ---- checking a table ---- */

static const char *cell_str(const struct table *t, size_t row, const char *col)
{
	const char *s = NULL;
	int c = table_col(t, col);

	assert_true(c >= 0);
	return table_get_str(t, row, c, &s) == 0 ? s : NULL;
}

static int64_t cell_int(const struct table *t, size_t row, const char *col)
{
	int64_t v = -1;
	int c = table_col(t, col);

	assert_true(c >= 0);
	assert_int_equal(table_get_int(t, row, c, &v), 0);
	return v;
}

/* 0 and the value when set, -1 when null. */
static int cell_float(const struct table *t, size_t row, const char *col, double *v)
{
	int c = table_col(t, col);

	assert_true(c >= 0);
	return table_get_float(t, row, c, v);
}

static void expect_float(const struct table *t, size_t row, const char *col, uint64_t num,
			 uint64_t den, double scale)
{
	double v = NAN;
	int set = cell_float(t, row, col, &v) == 0;

	if (!den) {
		if (set)
			fail_msg("row %zu %s: %g for a zero denominator, want null", row, col, v);
		return;
	}
	if (!set)
		fail_msg("row %zu %s: null, want %g", row, col, scale * num / den);
	assert_true(isfinite(v));
	if (fabs(v - scale * (double)num / den) > 1e-9 * (1 + fabs(v)))
		fail_msg("row %zu %s: %.17g, want %.17g", row, col, v, scale * (double)num / den);
}

static void source_matches(const char *got, const char *want, size_t row)
{
	size_t n, m;

	assert_non_null(got);
	if (!strcmp(want, "*")) {
		if (!*got || !strchr(got, ':'))
			fail_msg("row %zu: source '%s', want some file:line", row, got);
		return;
	}
	n = strlen(got);
	m = strlen(want);
	if (!*want ? *got != 0 : n < m || strcmp(got + n - m, want) ||
	    (n > m && got[n - m - 1] != '/'))
		fail_msg("row %zu: source '%s', want '%s'", row, got, want);
}

/* Build the report for o and compare every row and the summary with the
 * oracle. Returns the table (free it) for more checks. */
static struct table *check_report(const struct report_opts *o, struct report_summary *sum)
{
	struct fx *x = X;
	struct egroup g[NFIX];
	uint64_t ns, total[NEV];
	int64_t session = o->session ? o->session : x->s2.id;
	const struct db_session *s = session == x->s1.id ? &x->s1 : &x->s2;
	struct error e = { "" };
	struct table *t = report_build(x->f.db, o, sum, &e);
	size_t n = oracle(x, o, session, g, &ns, total), i, rows;
	int k, nev = s->nr_events;

	if (!t)
		fail_msg("report_build: %s", e.msg);
	rows = o->limit && o->limit < n ? o->limit : n;
	if (table_rows(t) != rows) {
		for (i = 0; i < table_rows(t); i++)
			print_message("got %s | %s | %lld\n", cell_str(t, i, "binary"),
				      cell_str(t, i, "symbol"), (long long)cell_int(t, i, "samples"));
		fail_msg("%zu rows, want %zu", table_rows(t), rows);
	}
	assert_int_equal(sum->session.id, session);
	assert_int_equal(sum->samples, ns);
	for (k = 0; k < nev; k++)
		assert_int_equal(sum->total[k], total[k]);
	assert_true(table_col(t, "binary") >= 0 && table_col(t, "build_id") >= 0 &&
		    table_col(t, "symbol") >= 0 && table_col(t, "percent") >= 0);
	assert_int_equal(table_col(t, "source") >= 0, o->by == REPORT_BY_LINE);
	for (i = 0; i < rows; i++) {
		const char *sym = cell_str(t, i, "symbol");
		double pct;

		if (strcmp(cell_str(t, i, "binary"), g[i].binary) || optcmp(sym, g[i].symbol) ||
		    (g[i].symbol && !sym) || (!g[i].symbol && sym))
			fail_msg("row %zu: %s %s, want %s %s", i, cell_str(t, i, "binary"),
				 sym ? sym : "(null)", g[i].binary,
				 g[i].symbol ? g[i].symbol : "(null)");
		if (o->by == REPORT_BY_LINE)
			source_matches(cell_str(t, i, "source"), g[i].source, i);
		assert_int_equal(cell_int(t, i, "samples"), g[i].samples);
		assert_int_equal(cell_float(t, i, "percent", &pct), 0);
		assert_true(fabs(pct - 100.0 * g[i].samples / ns) < 1e-9);
		for (k = 0; k < nev; k++)
			assert_int_equal(cell_int(t, i, evnames[k]), g[i].c[k]);
		if (nev == NEV) {
			expect_float(t, i, "ipc", g[i].c[0], g[i].c[1], 1);
			expect_float(t, i, "cache-misses_per_1k_instructions", g[i].c[2],
				     g[i].c[0], 1000);
			expect_float(t, i, "cache-miss_rate", g[i].c[2], g[i].c[3], 100);
		}
	}
	return t;
}

static struct report_opts opts(enum report_by by)
{
	struct report_opts o = { .session = X->s1.id, .by = by, .pid = -1 };

	return o;
}

static void run(const struct report_opts *o)
{
	struct report_summary sum;

	table_free(check_report(o, &sum));
}

static const enum report_by all_by[] = { REPORT_BY_BINARY, REPORT_BY_SYMBOL, REPORT_BY_LINE };

/* ---- tests ---- */

static void test_by_modes(void **state)
{
	struct report_summary sum;
	struct report_opts o;
	struct table *t;
	int64_t v;

	(void)state;
	for (size_t b = 0; b < ARRAY_SIZE(all_by); b++)
		run((o = opts(all_by[b]), &o));

	/* hand-checked anchors of the oracle's answer */
	o = opts(REPORT_BY_SYMBOL);
	t = check_report(&o, &sum);
	assert_string_equal(cell_str(t, 0, "symbol"), "work60");
	assert_int_equal(cell_int(t, 0, "samples"), 3);
	assert_int_equal(cell_int(t, 0, "instructions"), 4000);
	assert_int_equal(cell_int(t, 0, "cache-references"), 400);
	assert_string_equal(cell_str(t, 0, "build_id"), SPLIT_KEY + 8);
	/* the four groups of 2 samples come next; the groups of 1 last, in
	 * the order of their binary names ('/' before '['), then symbols */
	assert_int_equal(cell_int(t, 4, "samples"), 2);
	assert_string_equal(cell_str(t, 5, "symbol"), "work10");
	assert_int_equal(cell_int(t, 5, "samples"), 1);
	assert_string_equal(cell_str(t, 6, "binary"), "[kernel.kallsyms]");
	assert_string_equal(cell_str(t, 6, "symbol"), "ext4_fn [ext4]");
	assert_string_equal(cell_str(t, 6, "build_id"), KERNEL_KEY + 7);
	assert_string_equal(cell_str(t, 7, "binary"), "[unknown]");
	assert_string_equal(cell_str(t, 7, "symbol"), "[unknown]");
	assert_null(cell_str(t, 7, "build_id"));
	assert_string_equal(cell_str(t, 8, "binary"), "[vdso]");
	assert_string_equal(cell_str(t, 8, "symbol"), "[unknown]");
	assert_int_equal(table_rows(t), 9);
	table_free(t);

	o = opts(REPORT_BY_BINARY);
	t = check_report(&o, &sum);
	assert_string_equal(cell_str(t, 0, "binary"), "/opt/fixture/split603010");
	assert_int_equal(cell_int(t, 0, "samples"), 6);
	assert_null(cell_str(t, 0, "symbol"));
	assert_int_equal(table_get_int(t, 0, table_col(t, "cycles"), &v), 0);
	assert_int_equal(v, 500 + 1000 + 500 + 1000 + 500 + 0);
	table_free(t);
}

static void test_summary(void **state)
{
	struct report_summary sum;
	struct report_opts o = opts(REPORT_BY_SYMBOL);
	struct table *t;
	int k, found = 0;

	(void)state;
	t = check_report(&o, &sum);
	assert_int_equal(sum.samples, 15);
	assert_int_equal(sum.total[0], 1000 + 2000 + 1000 + 3000 + 1500 + 0 + 4000 + 4000 +
			 100 + 200 + 100 + 700 + 300 + 50 + 10);
	for (k = 0; k < NEV; k++)
		assert_int_equal(sum.unattributed[k], tails[0][k] + tails[1][k]);
	/* the two samples of the gone binary, and only them */
	assert_int_equal(sum.unresolved, 2);
	for (k = 0; k < sum.nr_notes; k++)
		if (strstr(sum.notes[k], "cached copy missing") && strstr(sum.notes[k], GONE_KEY))
			found = 1;
	assert_true(found);
	table_free(t);
}

static void test_filters_alone(void **state)
{
	static const int64_t pids[] = { 100, 101, 200, 0, 300, 400 };
	static const char *const bins[] = {
		"/opt/fixture/libhot.so", "libhot.so", "split603010", "[kernel.kallsyms]",
		GONE_KEY, "[vdso]", KERNEL_KEY,
	};
	struct report_summary sum;
	struct report_opts o;
	struct table *t;
	size_t i, b;

	(void)state;
	for (b = 0; b < ARRAY_SIZE(all_by); b++) {
		for (i = 0; i < ARRAY_SIZE(pids); i++) {
			o = opts(all_by[b]);
			o.pid = pids[i];
			run(&o);
		}
		for (i = 1; i < NCOMM; i++) {
			o = opts(all_by[b]);
			o.comm = comm_names[i];
			run(&o);
		}
		for (i = 0; i < ARRAY_SIZE(bins); i++) {
			o = opts(all_by[b]);
			o.binary = bins[i];
			run(&o);
		}
		o = opts(all_by[b]);
		o.mode = REPORT_KERNEL;
		run(&o);
		o.mode = REPORT_USER;
		run(&o);
		o = opts(all_by[b]);
		o.has_from = 1;
		o.from_ns = 700000;
		run(&o);
		o = opts(all_by[b]);
		o.has_to = 1;
		o.to_ns = 700000;
		run(&o);
	}

	/* anchors */
	o = opts(REPORT_BY_SYMBOL);
	o.mode = REPORT_KERNEL;
	t = check_report(&o, &sum);
	assert_int_equal(table_rows(t), 2);
	assert_string_equal(cell_str(t, 0, "symbol"), "do_syscall_64");
	assert_string_equal(cell_str(t, 1, "symbol"), "ext4_fn [ext4]");
	assert_int_equal(sum.samples, 3);
	table_free(t);

	o = opts(REPORT_BY_SYMBOL);
	o.comm = "worker";
	t = check_report(&o, &sum);
	assert_int_equal(sum.samples, 6);
	table_free(t);

	/* split603010 by name also matches the gone binary's path */
	o = opts(REPORT_BY_BINARY);
	o.binary = "split603010";
	t = check_report(&o, &sum);
	assert_int_equal(table_rows(t), 2);
	assert_int_equal(sum.samples, 8);
	table_free(t);
}

static void test_time_bounds(void **state)
{
	struct report_summary sum;
	struct report_opts o;
	struct error e = { "" };
	struct table *t;
	size_t b;

	(void)state;
	for (b = 0; b < ARRAY_SIZE(all_by); b++) {
		/* exactly at the 500 us sample, and one ns either side */
		for (int64_t d = -1; d <= 1; d++) {
			o = opts(all_by[b]);
			o.has_from = 1;
			o.from_ns = 500000 + d;
			run(&o);
			o = opts(all_by[b]);
			o.has_to = 1;
			o.to_ns = 500000 + d;
			run(&o);
			o = opts(all_by[b]);
			o.has_from = o.has_to = 1;
			o.from_ns = 500000 + d;
			o.to_ns = 1200000 + d;
			run(&o);
		}
	}

	/* both ends inclusive: from = to = a sample's time is that sample */
	o = opts(REPORT_BY_SYMBOL);
	o.has_from = o.has_to = 1;
	o.from_ns = o.to_ns = 500000;
	t = check_report(&o, &sum);
	assert_int_equal(sum.samples, 1);
	assert_string_equal(cell_str(t, 0, "symbol"), "work30");
	assert_int_equal(cell_int(t, 0, "instructions"), 1500);
	table_free(t);

	o.from_ns = 500001;
	o.to_ns = 599999;
	t = check_report(&o, &sum);
	assert_int_equal(sum.samples, 0);
	assert_int_equal(table_rows(t), 0);
	table_free(t);

	o = opts(REPORT_BY_SYMBOL);
	o.has_from = 1;
	o.from_ns = 1500000;	/* the last sample */
	t = check_report(&o, &sum);
	assert_int_equal(sum.samples, 1);
	table_free(t);
	o.from_ns = 1500001;
	t = check_report(&o, &sum);
	assert_int_equal(sum.samples, 0);
	table_free(t);

	/* from after to: an error, no table */
	o = opts(REPORT_BY_SYMBOL);
	o.has_from = o.has_to = 1;
	o.from_ns = 600000;
	o.to_ns = 599999;
	assert_null(report_build(X->f.db, &o, &sum, &e));
	assert_true(e.msg[0] != 0);
}

static void test_filters_combined(void **state)
{
	struct report_summary sum;
	struct report_opts o;
	struct table *t;
	size_t b;

	(void)state;
	for (b = 0; b < ARRAY_SIZE(all_by); b++) {
		o = opts(all_by[b]);
		o.pid = 100;
		o.mode = REPORT_USER;
		run(&o);
		o.mode = REPORT_KERNEL;
		run(&o);
		o = opts(all_by[b]);
		o.comm = "worker";
		o.binary = "libhot.so";
		run(&o);
		o.binary = "[kernel.kallsyms]";
		run(&o);
		o = opts(all_by[b]);
		o.pid = 100;
		o.comm = "split603010";
		o.binary = "/opt/fixture/split603010";
		o.has_from = o.has_to = 1;
		o.from_ns = 200000;
		o.to_ns = 600000;
		run(&o);
		o.mode = REPORT_USER;
		run(&o);
		o = opts(all_by[b]);
		o.comm = "worker";
		o.mode = REPORT_KERNEL;
		o.has_to = 1;
		o.to_ns = 1000000;
		run(&o);
	}

	o = opts(REPORT_BY_SYMBOL);
	o.pid = 100;
	o.comm = "split603010";
	o.binary = "/opt/fixture/split603010";
	o.has_from = o.has_to = 1;
	o.from_ns = 200000;
	o.to_ns = 600000;
	t = check_report(&o, &sum);
	assert_int_equal(sum.samples, 4);	/* 200, 300 (work60), 400 (work30), 600 (work10) */
	assert_int_equal(table_rows(t), 3);
	table_free(t);
}

static void test_no_match(void **state)
{
	struct report_summary sum;
	struct report_opts o;
	struct table *t;

	(void)state;
	o = opts(REPORT_BY_SYMBOL);
	o.pid = 12345;
	t = check_report(&o, &sum);
	assert_int_equal(table_rows(t), 0);
	assert_int_equal(sum.samples, 0);
	assert_int_equal(sum.total[0], 0);
	table_free(t);

	o = opts(REPORT_BY_SYMBOL);
	o.comm = "nosuchcomm";
	t = check_report(&o, &sum);
	assert_int_equal(table_rows(t), 0);
	assert_true(sum.nr_notes >= 1);
	table_free(t);

	o = opts(REPORT_BY_LINE);
	o.binary = "/no/such/binary";
	t = check_report(&o, &sum);
	assert_int_equal(table_rows(t), 0);
	assert_true(sum.nr_notes >= 1);
	table_free(t);

	/* a comm and a binary that exist, but never together */
	o = opts(REPORT_BY_BINARY);
	o.comm = "swapper";
	o.binary = "libhot.so";
	t = check_report(&o, &sum);
	assert_int_equal(table_rows(t), 0);
	table_free(t);

	/* after the last sample */
	o = opts(REPORT_BY_SYMBOL);
	o.has_from = 1;
	o.from_ns = 5000000;
	t = check_report(&o, &sum);
	assert_int_equal(table_rows(t), 0);
	assert_int_equal(sum.samples, 0);
	table_free(t);
}

static void test_metrics(void **state)
{
	struct report_summary sum;
	struct report_opts o = opts(REPORT_BY_SYMBOL);
	struct table *t = check_report(&o, &sum);
	size_t i, r60 = SIZE_MAX, r30 = SIZE_MAX, r10 = SIZE_MAX;
	double v;

	(void)state;
	for (i = 0; i < table_rows(t); i++) {
		const char *s = cell_str(t, i, "symbol");

		if (!strcmp(s, "work60"))
			r60 = i;
		else if (!strcmp(s, "work30"))
			r30 = i;
		else if (!strcmp(s, "work10"))
			r10 = i;
	}
	assert_true(r60 != SIZE_MAX && r30 != SIZE_MAX && r10 != SIZE_MAX);
	/* work60: 4000 instructions, 2000 cycles, 30 misses, 400 references */
	assert_int_equal(cell_float(t, r60, "ipc", &v), 0);
	assert_true(fabs(v - 2.0) < 1e-12);
	assert_int_equal(cell_float(t, r60, "cache-misses_per_1k_instructions", &v), 0);
	assert_true(fabs(v - 7.5) < 1e-12);
	assert_int_equal(cell_float(t, r60, "cache-miss_rate", &v), 0);
	assert_true(fabs(v - 7.5) < 1e-12);
	/* work30: no cache references: no miss rate, the rest is there */
	assert_int_equal(cell_float(t, r30, "ipc", &v), 0);
	assert_true(fabs(v - 3.0) < 1e-12);
	assert_int_equal(cell_float(t, r30, "cache-miss_rate", &v), -1);
	/* work10: all zero: every metric null */
	assert_int_equal(cell_float(t, r10, "ipc", &v), -1);
	assert_int_equal(cell_float(t, r10, "cache-misses_per_1k_instructions", &v), -1);
	assert_int_equal(cell_float(t, r10, "cache-miss_rate", &v), -1);
	/* no inf or nan anywhere */
	for (i = 0; i < table_rows(t); i++) {
		static const char *const m[] = { "ipc", "cache-misses_per_1k_instructions",
						 "cache-miss_rate", "percent" };

		for (size_t k = 0; k < ARRAY_SIZE(m); k++)
			if (cell_float(t, i, m[k], &v) == 0)
				assert_true(isfinite(v));
	}
	/* session 2 counts instructions only: no metric columns */
	table_free(t);
	o.session = X->s2.id;
	t = check_report(&o, &sum);
	assert_int_equal(table_col(t, "ipc"), -1);
	assert_int_equal(table_col(t, "cache-miss_rate"), -1);
	table_free(t);
}

static void test_session_select(void **state)
{
	struct report_summary sum;
	struct report_opts o = opts(REPORT_BY_SYMBOL);
	struct table *t;

	(void)state;
	o.session = 0;	/* the latest: session 2 */
	t = check_report(&o, &sum);
	assert_int_equal(sum.session.id, X->s2.id);
	assert_int_equal(sum.samples, 2);
	/* one sample each: work10 before work60 by name */
	assert_string_equal(cell_str(t, 0, "symbol"), "work10");
	assert_int_equal(cell_int(t, 0, "instructions"), 7);
	table_free(t);
	/* both paths: the raw rows of session 2 span session 1's */
	o.has_from = 1;
	o.from_ns = 0;
	run(&o);
	o.session = X->s1.id;
	run(&o);
}

static void test_limit(void **state)
{
	struct report_summary sum;
	struct report_opts o = opts(REPORT_BY_SYMBOL);
	struct table *t;
	double pct;

	(void)state;
	o.limit = 3;
	t = check_report(&o, &sum);
	assert_int_equal(table_rows(t), 3);
	assert_int_equal(sum.samples, 15);	/* percentages stay of all samples */
	assert_int_equal(cell_float(t, 0, "percent", &pct), 0);
	assert_true(fabs(pct - 20.0) < 1e-9);
	table_free(t);
}

/* Every cell of a and b equal. */
static void tables_equal(const struct table *a, const struct table *b)
{
	static const char *const cols[] = {
		"binary", "build_id", "symbol", "source", "samples", "percent",
		"instructions", "cycles", "cache-misses", "cache-references", "ipc",
		"cache-misses_per_1k_instructions", "cache-miss_rate",
	};

	assert_int_equal(table_rows(a), table_rows(b));
	for (size_t i = 0; i < table_rows(a); i++) {
		for (size_t k = 0; k < ARRAY_SIZE(cols); k++) {
			int ca = table_col(a, cols[k]), cb = table_col(b, cols[k]);
			const char *sa = NULL, *sb = NULL;
			double da = 0, db = 0;
			int ra, rb;

			assert_int_equal(ca, cb);
			if (ca < 0)
				continue;
			ra = table_get_str(a, i, ca, &sa);
			rb = table_get_str(b, i, cb, &sb);
			assert_int_equal(ra, rb);
			if (!ra) {
				assert_string_equal(sa, sb);
				continue;
			}
			ra = table_get_float(a, i, ca, &da);
			rb = table_get_float(b, i, cb, &db);
			assert_int_equal(ra, rb);
			if (!ra && da != db)
				fail_msg("row %zu %s: %.17g vs %.17g", i, cols[k], da, db);
		}
	}
}

static void test_histogram_equals_raw(void **state)
{
	struct report_opts base[6];
	size_t b, i;

	(void)state;
	for (i = 0; i < ARRAY_SIZE(base); i++)
		base[i] = opts(REPORT_BY_SYMBOL);
	base[1].pid = 100;
	base[2].comm = "worker";
	base[3].binary = "split603010";
	base[4].mode = REPORT_KERNEL;
	base[5].mode = REPORT_USER;
	base[5].pid = 200;
	for (b = 0; b < ARRAY_SIZE(all_by); b++) {
		for (i = 0; i < ARRAY_SIZE(base); i++) {
			struct report_opts o = base[i], r = base[i];
			struct report_summary sh, sr, sa;
			struct table *th, *tr, *ta;

			o.by = r.by = all_by[b];
			th = check_report(&o, &sh);		/* done: sample_agg */
			r.has_from = 1;				/* from 0: raw rows */
			r.from_ns = 0;
			tr = check_report(&r, &sr);
			/* running or aborted: the histogram may be incomplete, so the
			 * raw rows, with a note saying so */
			set_state(i % 2 ? "running" : "aborted", X->s1.id);
			ta = check_report(&o, &sa);
			set_state("done", X->s1.id);
			assert_true(sa.nr_notes >= 1);
			assert_non_null(strstr(sa.notes[0], i % 2 ? "still running" : "aborted"));
			tables_equal(th, tr);
			tables_equal(th, ta);
			assert_int_equal(sh.samples, sr.samples);
			assert_int_equal(sh.unresolved, sr.unresolved);
			assert_memory_equal(sh.total, sr.total, sizeof(sh.total));
			assert_memory_equal(sh.total, sa.total, sizeof(sh.total));
			table_free(th);
			table_free(tr);
			table_free(ta);
		}
	}
}

/* ---- tests on a database of their own ---- */

/* The database of the running test; its teardown removes it even when
 * the test failed. */
static struct fixdb mini;

static int mini_teardown(void **state)
{
	(void)state;
	if (mini.db)
		fixdb_close(&mini);
	return 0;
}

/* A done session on a new database with the given events and one sample
 * per entry of c (all in binary bin at offset off + i, user mode); its id. */
static int64_t mini_session(struct fixdb *f, const char *const *ev, int nev, int64_t bin,
			 uint64_t off, const uint64_t (*c)[STROBE_MAX_COUNTERS], int n)
{
	struct db_session s;
	struct error e = { "" };
	int i;

	session_init(&s, "mini", 0);
	s.nr_events = nev;
	for (i = 0; i < nev; i++)
		snprintf(s.events[i].name, sizeof(s.events[i].name), "%s", ev[i]);
	assert_int_equal(db_session_insert(f->db, &s, &e), 0);
	assert_int_equal(db_begin(f->db, &e), 0);
	for (i = 0; i < n; i++) {
		struct db_sample smp = {
			.session_id = s.id, .time_ns = START_NS + i, .pid = 1, .tid = 1,
			.binary_id = bin, .offset = off + i, .flags = U, .nr = nev,
		};
		struct db_agg agg = {
			.binary_id = bin, .offset = off + i, .pid = 1, .flags = U, .samples = 1,
		};
		int64_t rowid;

		memcpy(smp.c, c[i], sizeof(smp.c));
		memcpy(agg.c, c[i], sizeof(agg.c));
		assert_true((rowid = db_sample_insert(f->db, &smp, &e)) > 0);
		assert_int_equal(db_agg_add(f->db, s.id, nev, &agg, &e), 0);
		if (!s.first_sample)
			s.first_sample = rowid;
		s.last_sample = rowid;
		s.samples++;
	}
	snprintf(s.state, sizeof(s.state), "done");
	assert_int_equal(db_session_update(f->db, &s, &e), 0);
	assert_int_equal(db_commit(f->db, &e), 0);
	return s.id;
}

/* The other metric families: cpu-cycles for cycles, branch-instructions
 * for branches, X-load-misses / X-loads, and no rate without the
 * reference event. */
static void test_metric_families(void **state)
{
	static const char *const ev[] = {
		"instructions", "cpu-cycles", "branch-misses", "branch-instructions",
		"L1-dcache-load-misses", "L1-dcache-loads", "dTLB-load-misses",
	};
	static const uint64_t c[2][STROBE_MAX_COUNTERS] = {
		{ 8000, 4000, 16, 800, 40, 2000, 4 },
		{ 0, 0, 3, 0, 5, 0, 0 },		/* every denominator zero */
	};
	struct fixdb *fp = &mini;
	struct report_opts o = { .by = REPORT_BY_BINARY, .pid = -1 };
	struct report_summary sum;
	struct error e = { "" };
	struct table *t;
	double v;
	int64_t bin, sid;

	(void)state;
	assert_int_equal(fixdb_open(fp, "metrics"), 0);
	assert_true((bin = db_binary_intern(fp->db, "[anon]", "[anon]", -1, 0, NULL, &e)) > 0);
	sid = mini_session(fp, ev, ARRAY_SIZE(ev), bin, 0x1000, c, 1);
	/* a second binary for the all-zero row (histogram only: a done
	 * session's report reads nothing else) */
	assert_true((bin = db_binary_intern(fp->db, "[heap]", "[heap]", -1, 0, NULL, &e)) > 0);
	{
		struct db_agg agg = { .binary_id = bin, .offset = 1, .pid = 1, .flags = U,
				      .samples = 1 };

		memcpy(agg.c, c[1], sizeof(agg.c));
		assert_int_equal(db_agg_add(fp->db, sid, ARRAY_SIZE(ev), &agg, &e), 0);
	}
	t = report_build(fp->db, &o, &sum, &e);
	if (!t)
		fail_msg("%s", e.msg);
	assert_int_equal(table_rows(t), 2);
	assert_string_equal(cell_str(t, 0, "binary"), "[anon]");
	assert_int_equal(cell_float(t, 0, "ipc", &v), 0);
	assert_true(fabs(v - 2.0) < 1e-12);
	assert_int_equal(cell_float(t, 0, "branch-misses_per_1k_instructions", &v), 0);
	assert_true(fabs(v - 2.0) < 1e-12);
	assert_int_equal(cell_float(t, 0, "L1-dcache-load-misses_per_1k_instructions", &v), 0);
	assert_true(fabs(v - 5.0) < 1e-12);
	assert_int_equal(cell_float(t, 0, "dTLB-load-misses_per_1k_instructions", &v), 0);
	assert_true(fabs(v - 0.5) < 1e-12);
	assert_int_equal(cell_float(t, 0, "branch-miss_rate", &v), 0);
	assert_true(fabs(v - 2.0) < 1e-12);
	assert_int_equal(cell_float(t, 0, "L1-dcache-load-miss_rate", &v), 0);
	assert_true(fabs(v - 2.0) < 1e-12);
	assert_int_equal(table_col(t, "dTLB-load-miss_rate"), -1);
	/* the zero row: counts shown, every metric null */
	assert_string_equal(cell_str(t, 1, "binary"), "[heap]");
	assert_int_equal(cell_int(t, 1, "branch-misses"), 3);
	assert_int_equal(cell_float(t, 1, "ipc", &v), -1);
	assert_int_equal(cell_float(t, 1, "branch-misses_per_1k_instructions", &v), -1);
	assert_int_equal(cell_float(t, 1, "branch-miss_rate", &v), -1);
	assert_int_equal(cell_float(t, 1, "L1-dcache-load-miss_rate", &v), -1);
	table_free(t);
	fixdb_close(fp);
}

/* A binary whose cached copy has no symbols at all: its samples show as
 * [unknown] with a note saying why, and are not "unresolved". */
static void test_stripped_note(void **state)
{
	static const uint64_t c[3][STROBE_MAX_COUNTERS] = { { 1 }, { 2 }, { 3 } };
	static const char *const ev[] = { "instructions" };
	struct fixdb *fp = &mini;
	struct report_opts o = { .by = REPORT_BY_SYMBOL, .pid = -1 };
	struct report_summary sum;
	struct error e = { "" };
	char bare[PATH_MAX + 16], cmd[2 * PATH_MAX + 64];
	struct table *t;
	int64_t bin;
	int i, found = 0;

	(void)state;
	assert_int_equal(fixdb_open(fp, "bare"), 0);
	snprintf(bare, sizeof(bare), "%s/bare", fp->dir);
	snprintf(cmd, sizeof(cmd), "strip --strip-all -o '%s' '%s'", bare, X->split);
	assert_int_equal(system(cmd), 0);
	assert_int_equal(fixdb_cache_file(fp, "buildid:0c0c", bare), 0);
	assert_true((bin = db_binary_intern(fp->db, "buildid:0c0c", "/opt/bare", 1, 1, NULL,
					    &e)) > 0);
	mini_session(fp, ev, 1, bin, X->base[O_W60], c, 3);
	t = report_build(fp->db, &o, &sum, &e);
	if (!t)
		fail_msg("%s", e.msg);
	assert_int_equal(table_rows(t), 1);
	assert_string_equal(cell_str(t, 0, "symbol"), "[unknown]");
	assert_int_equal(cell_int(t, 0, "samples"), 3);
	assert_int_equal(cell_int(t, 0, "instructions"), 6);
	assert_int_equal(sum.unresolved, 0);
	for (i = 0; i < sum.nr_notes; i++)
		if (strstr(sum.notes[i], "/opt/bare") && strstr(sum.notes[i], "no function symbols"))
			found = 1;
	assert_true(found);
	table_free(t);
	fixdb_close(fp);
}

/* JIT files (schema 10, 11): a refused jitdump and a jitdump read with
 * records dropped each get a note naming the pid; a perf map with dropped
 * lines does not (as before); --pid keeps only that process's. */
static void test_jit_notes(void **state)
{
	static const uint64_t c[1][STROBE_MAX_COUNTERS] = { { 1 } };
	static const char *const ev[] = { "instructions" };
	struct fixdb *fp = &mini;
	struct report_opts o = { .by = REPORT_BY_SYMBOL, .pid = -1 };
	struct report_summary sum;
	struct error e = { "" };
	struct table *t;
	int64_t bin, sid;
	int i, refused = 0, dropped = 0, map = 0;

	(void)state;
	assert_int_equal(fixdb_open(fp, "jitnotes"), 0);
	assert_true((bin = db_binary_intern(fp->db, "[anon]", "[anon]", 0, 0, NULL, &e)) > 0);
	sid = mini_session(fp, ev, 1, bin, 0x1000, c, 1);
	assert_int_equal(db_begin(fp->db, &e), 0);
	assert_int_equal(db_jit_map_put(fp->db, sid, 71, 0, "/home/u/jit-71.dump", 0, 0,
					"/home/u/jit-71.dump: not a jitdump (magic 0x464c457f), "
					"refused", &e), 0);
	assert_int_equal(db_jit_map_put(fp->db, sid, 72, 0, "/tmp/jit-72.dump", 5, 3, NULL, &e), 0);
	assert_int_equal(db_jit_map_put(fp->db, sid, 73, 0, "/tmp/perf-73.map", 5, 4, NULL, &e), 0);
	assert_int_equal(db_commit(fp->db, &e), 0);
	t = report_build(fp->db, &o, &sum, &e);
	if (!t)
		fail_msg("%s", e.msg);
	for (i = 0; i < sum.nr_notes; i++) {
		if (strstr(sum.notes[i], "pid 71: JIT jitdump not used: ") &&
		    strstr(sum.notes[i], "not a jitdump"))
			refused++;
		if (strstr(sum.notes[i], "pid 72: JIT jitdump /tmp/jit-72.dump: 3 records dropped"))
			dropped++;
		if (strstr(sum.notes[i], "pid 73"))
			map++;
	}
	assert_int_equal(refused, 1);
	assert_int_equal(dropped, 1);
	assert_int_equal(map, 0);
	table_free(t);
	o.pid = 71;
	t = report_build(fp->db, &o, &sum, &e);
	if (!t)
		fail_msg("%s", e.msg);
	for (i = 0; i < sum.nr_notes; i++)
		assert_null(strstr(sum.notes[i], "pid 72"));
	table_free(t);
	fixdb_close(fp);
}

/* Many binaries and locations (the hash tables of report.c grow several
 * times): 300 binaries never copied to the cache, binary i with 5
 * offsets and 1 + (37 i mod 11) samples spread over them.  Each must be
 * one row with its own sums, in order; every sample is unresolved; the
 * notes stop at 8, the last one counting the rest. */
static void test_many(void **state)
{
	enum { NB = 300, NOFF = 5 };
	struct db_session s;
	struct report_opts o = { .by = REPORT_BY_SYMBOL, .pid = -1 };
	struct report_summary sum;
	struct error e = { "" };
	struct table *t;
	uint64_t total = 0, prev = UINT64_MAX;
	char key[64], path[64], prev_path[64] = "";
	int i, k;

	(void)state;
	assert_int_equal(fixdb_open(&mini, "many"), 0);
	session_init(&s, "many", 1);
	assert_int_equal(db_session_insert(mini.db, &s, &e), 0);
	assert_int_equal(db_begin(mini.db, &e), 0);
	for (i = 0; i < NB; i++) {
		uint64_t n = 1 + (37 * i) % 11;
		int64_t bin;

		snprintf(key, sizeof(key), "buildid:%04x", i);
		snprintf(path, sizeof(path), "/opt/many/b%03d", i);
		assert_true((bin = db_binary_intern(mini.db, key, path, 1, 0, NULL, &e)) > 0);
		for (k = 0; k < NOFF; k++) {
			/* n samples over the 5 offsets; instructions = 10 i + 1 each */
			struct db_agg a = { .binary_id = bin, .offset = 0x1000 + 16 * k, .pid = 7,
					    .flags = U, .samples = n / NOFF + (k < (int)(n % NOFF)) };

			if (!a.samples)
				continue;
			a.c[0] = a.samples * (10 * i + 1);
			assert_int_equal(db_agg_add(mini.db, s.id, 1, &a, &e), 0);
		}
		total += n;
	}
	snprintf(s.state, sizeof(s.state), "done");
	s.samples = total;
	assert_int_equal(db_session_update(mini.db, &s, &e), 0);
	assert_int_equal(db_commit(mini.db, &e), 0);

	t = report_build(mini.db, &o, &sum, &e);
	if (!t)
		fail_msg("%s", e.msg);
	assert_int_equal(table_rows(t), NB);
	assert_int_equal(sum.samples, total);
	assert_int_equal(sum.unresolved, total);
	for (size_t r = 0; r < table_rows(t); r++) {
		const char *p = cell_str(t, r, "binary");
		uint64_t n = (uint64_t)cell_int(t, r, "samples");

		assert_int_equal(sscanf(p, "/opt/many/b%d", &i), 1);
		assert_int_equal(n, 1 + (37 * i) % 11);
		assert_int_equal(cell_int(t, r, "instructions"), n * (10 * i + 1));
		assert_string_equal(cell_str(t, r, "symbol"), "[binary unavailable]");
		/* samples descending, then binary name */
		assert_true(n < prev || (n == prev && strcmp(prev_path, p) < 0));
		prev = n;
		snprintf(prev_path, sizeof(prev_path), "%s", p);
	}
	assert_int_equal(sum.nr_notes, 8);
	assert_non_null(strstr(sum.notes[7], "293 more notes left out"));
	table_free(t);
	fixdb_close(&mini);
}

/* A session that is still running, or was aborted, may have samples whose
 * histogram rows were never written: its report counts the raw rows. */
static void test_incomplete_histogram(void **state)
{
	static const uint64_t c[3][STROBE_MAX_COUNTERS] = { { 1 }, { 2 }, { 4 } };
	static const char *const ev[] = { "instructions" };
	static const char *const states[] = { "running", "aborted" };
	struct report_opts o = { .by = REPORT_BY_BINARY, .pid = -1 };
	struct report_summary sum;
	struct error e = { "" };
	struct table *t;
	int64_t bin;
	size_t i;

	(void)state;
	assert_int_equal(fixdb_open(&mini, "partial"), 0);
	assert_true((bin = db_binary_intern(mini.db, "[anon]", "[anon]", -1, 0, NULL, &e)) > 0);
	mini_session(&mini, ev, 1, bin, 0x100, c, 3);
	/* the last sample's histogram row is not written yet */
	assert_int_equal(sqlite3_exec(db_sqlite(mini.db), "DELETE FROM sample_agg WHERE "
				      "offset=0x102", NULL, NULL, NULL), 0);
	for (i = 0; i < ARRAY_SIZE(states); i++) {
		char sql[96];

		snprintf(sql, sizeof(sql), "UPDATE sessions SET state='%s'", states[i]);
		assert_int_equal(sqlite3_exec(db_sqlite(mini.db), sql, NULL, NULL, NULL), 0);
		t = report_build(mini.db, &o, &sum, &e);
		if (!t)
			fail_msg("%s", e.msg);
		assert_int_equal(sum.samples, 3);
		assert_int_equal(cell_int(t, 0, "instructions"), 7);
		table_free(t);
	}
	fixdb_close(&mini);
}

/*
 * Periods that differ weigh the samples, as perf report's Overhead: binary
 * a has 10 samples of period 100, binary b 30 of period 10, so a's share
 * is 1000 / 1300 and a comes first; the histogram and the raw rows (a time
 * range) agree.  With one period for all samples, or a sample without
 * one, percent stays the share of samples.
 */
static void test_period_weights(void **state)
{
	static const struct { uint64_t pa, pb; int weighted; double pct_a; } cases[] = {
		{ 100, 10, 1, 100.0 * 1000 / 1300 },
		{ 50, 50, 0, 25.0 },
		{ 100, 0, 0, 25.0 },	/* b's periods unknown */
	};
	struct error e = { "" };

	(void)state;
	for (size_t k = 0; k < ARRAY_SIZE(cases); k++) {
		struct report_opts o = { .by = REPORT_BY_BINARY, .pid = -1 };
		struct report_summary sum;
		struct db_session s;
		struct table *t;
		int64_t bin[2];
		char name[32];

		snprintf(name, sizeof(name), "period%zu", k);
		assert_int_equal(fixdb_open(&mini, name), 0);
		assert_true((bin[0] = db_binary_intern(mini.db, "buildid:aa", "/opt/a", 1, 0,
						       NULL, &e)) > 0);
		assert_true((bin[1] = db_binary_intern(mini.db, "buildid:bb", "/opt/b", 1, 0,
						       NULL, &e)) > 0);
		session_init(&s, name, 0);
		assert_int_equal(db_session_insert(mini.db, &s, &e), 0);
		assert_int_equal(db_begin(mini.db, &e), 0);
		for (int i = 0; i < 40; i++) {
			int b = i >= 10;
			struct db_sample smp = {
				.session_id = s.id, .time_ns = START_NS + 1000 * (uint64_t)i,
				.pid = 7, .tid = 7, .binary_id = bin[b], .offset = 0x10,
				.flags = U, .period = b ? cases[k].pb : cases[k].pa,
			};
			struct db_agg a = { .binary_id = bin[b], .offset = 0x10, .pid = 7,
					    .flags = U, .samples = 1, .period = smp.period,
					    .period_unknown = !smp.period };
			int64_t rowid = db_sample_insert(mini.db, &smp, &e);

			assert_true(rowid > 0);
			assert_int_equal(db_agg_add(mini.db, s.id, 0, &a, &e), 0);
			if (!s.first_sample)
				s.first_sample = rowid;
			s.last_sample = rowid;
			s.samples++;
		}
		snprintf(s.state, sizeof(s.state), "done");
		s.end_ns = START_NS + 1000000;
		assert_int_equal(db_session_update(mini.db, &s, &e), 0);
		assert_int_equal(db_commit(mini.db, &e), 0);
		for (int raw = 0; raw < 2; raw++) {
			o.has_from = raw;
			t = report_build(mini.db, &o, &sum, &e);
			if (!t)
				fail_msg("%s", e.msg);
			assert_int_equal(sum.samples, 40);
			assert_int_equal(sum.weighted, cases[k].weighted);
			assert_int_equal(table_rows(t), 2);
			/* by weight: a first when weighted, b (30 samples) otherwise */
			assert_string_equal(cell_str(t, 0, "binary"),
					    cases[k].weighted ? "/opt/a" : "/opt/b");
			for (size_t r = 0; r < 2; r++) {
				int is_a = !strcmp(cell_str(t, r, "binary"), "/opt/a");
				double want = is_a ? cases[k].pct_a : 100.0 - cases[k].pct_a, pct;

				assert_int_equal(cell_int(t, r, "samples"), is_a ? 10 : 30);
				assert_int_equal(cell_float(t, r, "percent", &pct), 0);
				assert_true(fabs(pct - want) < 1e-9);
			}
			table_free(t);
		}
		fixdb_close(&mini);
	}
}

static void test_bad_session(void **state)
{
	struct report_opts o = { .session = 999, .by = REPORT_BY_SYMBOL, .pid = -1 };
	struct report_summary sum;
	struct error e = { "" };

	(void)state;
	assert_null(report_build(X->f.db, &o, &sum, &e));
	assert_non_null(strstr(e.msg, "999"));
}

/* --pid PID[@START], and a pid's processes: which one a time falls in,
 * their labels (more decimals when two would print alike). */
static void test_procset(void **state)
{
	struct procset_ent v[] = { { 7, 1000 }, { 42, 2000000000 }, { 42, 3250000000 },
				   { 42, 3250400000 } };
	struct procset ps = { .v = v, .n = 4, .session_start_ns = 1000000000, .decimals = 6 };
	int64_t pid, at, slack;
	char l[64];

	assert_int_equal(procset_parse_pid("1234", &pid, &at, &slack), 0);
	assert_true(pid == 1234 && at == -1 && slack == 0);
	assert_int_equal(procset_parse_pid("1234@2.250", &pid, &at, &slack), 0);
	assert_true(pid == 1234 && at == 2250000000 && slack == 500000);
	assert_int_equal(procset_parse_pid("9@3s", &pid, &at, &slack), 0);
	assert_true(pid == 9 && at == 3000000000 && slack == 500000000);
	assert_int_equal(procset_parse_pid("4294967295@0.000000001", &pid, &at, &slack), 0);
	assert_true(pid == 4294967295LL && at == 1 && slack == 0);
	static const char *const bad[] = { "", "x", "-1", "12x", "4294967296", "1@", "1@x",
					   "1@1.2.3", "1@-1", "1@1.0000000001", "@1", "1@1s2" };
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		if (procset_parse_pid(bad[i], &pid, &at, &slack) == 0)
			fail_msg("--pid '%s' accepted", bad[i]);

	assert_int_equal(procset_count(&ps, 42), 3);
	assert_int_equal(procset_count(&ps, 7), 1);
	assert_int_equal(procset_count(&ps, 8), 0);
	/* the last started by then, or the first */
	assert_true(procset_at(&ps, 42, 0) == 2000000000);
	assert_true(procset_at(&ps, 42, 3249999999) == 2000000000);
	assert_true(procset_at(&ps, 42, 3250000000) == 3250000000);
	assert_true(procset_at(&ps, 42, 9000000000) == 3250400000);
	assert_true(procset_at(&ps, 8, 9000000000) == 0);
	assert_true(procset_has(&ps, 42, 3250000000) && !procset_has(&ps, 42, 0));
	procset_label(&ps, 42, 3250400000, l, sizeof(l));
	assert_string_equal(l, "42@2.250400");
	procset_label(&ps, 42, 0, l, sizeof(l));
	assert_string_equal(l, "42@?");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_by_modes),
		cmocka_unit_test(test_summary),
		cmocka_unit_test(test_filters_alone),
		cmocka_unit_test(test_time_bounds),
		cmocka_unit_test(test_filters_combined),
		cmocka_unit_test(test_no_match),
		cmocka_unit_test(test_metrics),
		cmocka_unit_test(test_session_select),
		cmocka_unit_test(test_limit),
		cmocka_unit_test(test_histogram_equals_raw),
		cmocka_unit_test(test_procset),
		cmocka_unit_test_teardown(test_metric_families, mini_teardown),
		cmocka_unit_test_teardown(test_stripped_note, mini_teardown),
		cmocka_unit_test_teardown(test_jit_notes, mini_teardown),
		cmocka_unit_test_teardown(test_many, mini_teardown),
		cmocka_unit_test_teardown(test_incomplete_histogram, mini_teardown),
		cmocka_unit_test_teardown(test_period_weights, mini_teardown),
		cmocka_unit_test(test_bad_session),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
