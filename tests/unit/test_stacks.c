/*
 * test_stacks.c - lib/query/stacks.c (call stacks of a session, named) and
 * lib/query/calltree.c (report --children, --callers, --callees) on a
 * database made through lib/store/db.h (the real schema; no daemon).
 *
 * The fixture: one session recorded with -g counting page-faults and
 * instructions, with seven distinct stacks (schema 014: frames leaf
 * first, 16 bytes each) through the functions of the built workloads
 * split603010 (main, work60, work30, work10) and libhot.so (hot_in_lib)
 * and the kernel (do_syscall_64, named from a kallsyms snapshot): one of
 * them recursive (work10 three times), one incomplete, one with a kernel
 * frame 0; entries for two processes and comms in stack_agg, every sample
 * also in samples and sample_agg, as strobed stores them, and a few
 * samples with no stack.
 *
 * An oracle in this file computes each expected figure from the fixture
 * arrays alone, by function name: self (frame 0) and total (on the stack,
 * once per sample) samples and counter sums per function; the call tree
 * around a function as the set of its paths (callers: from its innermost
 * occurrence to the outermost frame; callees: from its outermost to frame
 * 0) with their sums.  Checked against it: every row of --children (by
 * symbol and by binary), its order, each filter (pid, comm, binary by
 * frame 0, kernel, user, time range), every node of both trees for each
 * function and their order, the text tree's indentation, the JSON's
 * nesting; the raw-sample path (a time range) giving what stack_agg
 * gives; stacks_scan's samples in time order; weights by period; errors:
 * a function that is nowhere, a session without stacks, a malformed
 * stack row.
 */
#include "config.h"
#include <math.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>
#include "dbfix.h"
#include "calltree.h"
#include "flameindex.h"
#include "stacks.h"

#define SPLIT_KEY "buildid:5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a"
#define HOT_KEY "buildid:6b6b6b6b6b6b6b6b6b6b6b6b6b6b6b6b6b6b6b6b"
#define KERNEL_KEY "kernel:feedfacefeedfacefeedfacefeedfacefeedface"
#define KSYMS_KEY "kallsyms:0123456789abcdef0123456789abcdef"
#define START_NS 1000000000000LL
#define NEV 2
#define PERIOD 1000

static const char ksyms[] =
	"ffffffff81000000 T _stext\n"
	"ffffffff81001000 T do_syscall_64\n"
	"ffffffff81002000 t read_zero\n";

static const char *const evnames[NEV] = { "page-faults", "instructions" };

enum fn { F_MAIN, F_W60, F_W30, F_W10, F_HOT, F_KSYS, NFN };
static const char *const fn_names[NFN] = {
	"main", "work60", "work30", "work10", "hot_in_lib", "do_syscall_64",
};
enum bin { B_SPLIT, B_HOT, B_KERN, NBIN };
static const enum bin fn_bin[NFN] = { B_SPLIT, B_SPLIT, B_SPLIT, B_SPLIT, B_HOT, B_KERN };
static const char *const bin_path[NBIN] = {
	"/opt/fixture/split603010", "/opt/fixture/libhot.so", "[kernel.kallsyms]",
};
static const char *const bin_key[NBIN] = { SPLIT_KEY, HOT_KEY, KERNEL_KEY };

struct frame {
	enum fn fn;
	unsigned add;		/* offset in the function */
};

#define MAXF 6
struct fstack {
	int nr;
	unsigned flags;		/* stacks.flags */
	struct frame f[MAXF];	/* leaf first */
};

/* stacks 1..7 */
static const struct fstack stk[] = {
	{ 0, 0, { { 0, 0 } } },
	{ 3, 4, { { F_W60, 4 }, { F_W30, 8 }, { F_MAIN, 4 } } },
	{ 3, 4, { { F_W60, 8 }, { F_W10, 8 }, { F_MAIN, 4 } } },
	{ 2, 4, { { F_W30, 4 }, { F_MAIN, 8 } } },
	{ 4, 4, { { F_W10, 4 }, { F_W10, 8 }, { F_W10, 8 }, { F_MAIN, 4 } } },
	{ 3, 6, { { F_KSYS, 0x10 }, { F_W30, 8 }, { F_MAIN, 4 } } },
	{ 2, 5, { { F_W60, 4 }, { F_W30, 8 } } },	/* incomplete */
	{ 3, 4, { { F_HOT, 8 }, { F_W10, 12 }, { F_MAIN, 4 } } },
};
#define NSTK ((int)ARRAY_SIZE(stk))

enum comm { C_A = 1, C_B, NCOMM };
static const char *const comm_names[NCOMM] = { NULL, "alpha", "beta" };

/* An entry: n samples of one stack in one process; sample i at
 * t_us + i us, with counter increases c each. stack 0: no stack (its
 * samples are in work60). */
struct fent {
	int stack, pid;
	enum comm comm;
	int n;
	uint64_t c[NEV];
	int64_t t_us;
};

static const struct fent ents[] = {
	{ 1, 100, C_A, 50, { 1, 100 }, 1000 },
	{ 2, 100, C_A, 20, { 2, 200 }, 2000 },
	{ 3, 100, C_A, 10, { 0, 300 }, 3000 },
	{ 4, 100, C_A, 8, { 3, 400 }, 4000 },
	{ 5, 100, C_A, 4, { 5, 500 }, 5000 },
	{ 7, 100, C_A, 3, { 1, 700 }, 6000 },
	{ 1, 200, C_B, 5, { 4, 110 }, 7000 },
	{ 6, 200, C_B, 2, { 2, 120 }, 8000 },
	{ 4, 200, C_B, 1, { 9, 130 }, 9000 },
	{ 0, 100, C_A, 6, { 1, 1 }, 9500 },
};
#define NENT ARRAY_SIZE(ents)

struct fx {
	struct fixdb f;
	struct db_session s;
	char split[PATH_MAX], hot[PATH_MAX];
	int64_t bin_id[NBIN], comm_id[NCOMM];
	uint64_t base[NFN];
};

static struct fx *X;

static uint64_t frame_off(const struct frame *f)
{
	return X->base[f->fn] + f->add;
}

static void put_le64(unsigned char *p, uint64_t v)
{
	for (int i = 0; i < 8; i++)
		p[i] = (unsigned char)(v >> (8 * i));
}

static void exec_ok(struct db *db, const char *sql)
{
	char *err = NULL;

	if (sqlite3_exec(db_sqlite(db), sql, NULL, NULL, &err) != SQLITE_OK)
		fail_msg("%s: %s", sql, err ? err : "?");
}

static void stack_insert(struct db *db, int64_t session, int64_t id, const unsigned char *blob,
			 int bytes, int nr, unsigned flags)
{
	sqlite3_stmt *st;

	assert_int_equal(sqlite3_prepare_v2(db_sqlite(db), "INSERT INTO stacks(session_id,id,hash,"
					    "nr,flags,frames) VALUES (?1,?2,?3,?4,?5,?6)", -1,
					    &st, NULL), 0);
	sqlite3_bind_int64(st, 1, session);
	sqlite3_bind_int64(st, 2, id);
	sqlite3_bind_int64(st, 3, id * 7919);
	sqlite3_bind_int64(st, 4, nr);
	sqlite3_bind_int64(st, 5, flags);
	sqlite3_bind_blob(st, 6, blob, bytes, SQLITE_TRANSIENT);
	assert_int_equal(sqlite3_step(st), SQLITE_DONE);
	sqlite3_finalize(st);
}

static int setup(void **state)
{
	struct fx *x = calloc(1, sizeof(*x));
	struct error e = { "" };
	struct db_session *s = &x->s;
	struct db *db;
	uint64_t sz;
	size_t i;
	int k, j;

	X = x;
	fix_path(x->split, sizeof(x->split), "split603010", 0);
	fix_path(x->hot, sizeof(x->hot), "libhot.so", 0);
	assert_int_equal(fix_elf_func(x->split, "main", &x->base[F_MAIN], &sz), 0);
	assert_true(sz > 12);
	assert_int_equal(fix_elf_func(x->split, "work60", &x->base[F_W60], &sz), 0);
	assert_int_equal(fix_elf_func(x->split, "work30", &x->base[F_W30], &sz), 0);
	assert_int_equal(fix_elf_func(x->split, "work10", &x->base[F_W10], &sz), 0);
	assert_true(sz > 12);
	assert_int_equal(fix_elf_func(x->hot, "hot_in_lib", &x->base[F_HOT], &sz), 0);
	assert_true(sz > 8);
	x->base[F_KSYS] = 0xffffffff81001000ULL;

	assert_int_equal(fixdb_open(&x->f, "stacks"), 0);
	db = x->f.db;
	assert_int_equal(fixdb_cache_file(&x->f, SPLIT_KEY, x->split), 0);
	assert_int_equal(fixdb_cache_file(&x->f, HOT_KEY, x->hot), 0);
	assert_int_equal(bincache_store_buf(&x->f.cache, KSYMS_KEY, ksyms, strlen(ksyms),
					    BINCACHE_SHARED, &e), 0);
	for (i = 0; i < NBIN; i++) {
		x->bin_id[i] = db_binary_intern(db, bin_key[i], bin_path[i], i == B_SPLIT ? 20000 : -1,
						i != B_KERN, NULL, &e);
		assert_true(x->bin_id[i] > 0);
	}
	for (k = 1; k < NCOMM; k++)
		assert_true((x->comm_id[k] = db_comm_intern(db, comm_names[k], &e)) > 0);

	snprintf(s->name, sizeof(s->name), "stacks");
	snprintf(s->state, sizeof(s->state), "running");
	snprintf(s->backend, sizeof(s->backend), "perf");
	s->nr_cpus = 2;
	snprintf(s->sample_event, sizeof(s->sample_event), "cpu-clock");
	s->sample_freq = 1000;
	s->start_ns = START_NS;
	snprintf(s->tsc_source, sizeof(s->tsc_source), "none");
	snprintf(s->kallsyms_key, sizeof(s->kallsyms_key), KSYMS_KEY);
	s->kernel_binary_id = x->bin_id[B_KERN];
	s->nr_events = NEV;
	for (k = 0; k < NEV; k++)
		snprintf(s->events[k].name, sizeof(s->events[k].name), "%s", evnames[k]);
	assert_int_equal(db_session_insert(db, s, &e), 0);

	assert_int_equal(db_begin(db, &e), 0);
	for (j = 1; j < NSTK; j++) {
		unsigned char blob[16 * MAXF];

		for (k = 0; k < stk[j].nr; k++) {
			put_le64(blob + 16 * k, (uint64_t)x->bin_id[fn_bin[stk[j].f[k].fn]]);
			put_le64(blob + 16 * k + 8, frame_off(&stk[j].f[k]));
		}
		stack_insert(db, s->id, j, blob, 16 * stk[j].nr, stk[j].nr, stk[j].flags);
	}
	for (i = 0; i < NENT; i++) {
		const struct fent *f = &ents[i];
		const struct frame *f0 = f->stack ? &stk[f->stack].f[0] : &stk[1].f[0];
		uint32_t mode = fn_bin[f0->fn] == B_KERN ? STROBE_SAMPLE_KERNEL : STROBE_SAMPLE_USER;

		for (j = 0; j < f->n; j++) {
			struct db_sample smp = {
				.session_id = s->id, .time_ns = START_NS + (f->t_us + j) * 1000,
				.cpu = j & 1, .pid = f->pid, .tid = f->pid + j % 3,
				.comm_id = x->comm_id[f->comm],
				.binary_id = x->bin_id[fn_bin[f0->fn]], .offset = frame_off(f0),
				.flags = mode, .nr = NEV, .period = PERIOD,
				.stack_id = f->stack,
			};
			struct db_agg agg = {
				.binary_id = smp.binary_id, .offset = smp.offset, .pid = smp.pid,
				.comm_id = smp.comm_id, .flags = mode, .samples = 1, .period = PERIOD,
			};
			int64_t rowid;

			memcpy(smp.c, f->c, sizeof(f->c));
			memcpy(agg.c, f->c, sizeof(f->c));
			rowid = db_sample_insert(db, &smp, &e);
			assert_true(rowid > 0);
			assert_int_equal(db_agg_add(db, s->id, NEV, &agg, &e), 0);
			if (!s->first_sample)
				s->first_sample = rowid;
			s->last_sample = rowid;
			s->samples++;
		}
		if (f->stack) {
			char sql[256];

			snprintf(sql, sizeof(sql), "INSERT INTO stack_agg(session_id,stack_id,pid,"
				 "comm_id,start_ns,samples,period,c0,c1) VALUES (%lld,%d,%d,%lld,0,"
				 "%d,%d,%llu,%llu)", (long long)s->id, f->stack, f->pid,
				 (long long)x->comm_id[f->comm], f->n, f->n * PERIOD,
				 (unsigned long long)(f->c[0] * f->n),
				 (unsigned long long)(f->c[1] * f->n));
			exec_ok(db, sql);
		}
	}
	s->end_ns = START_NS + 20000000;
	s->duration_ns = 20000000;
	snprintf(s->state, sizeof(s->state), "done");
	snprintf(s->call_graph, sizeof(s->call_graph), "fp");
	assert_int_equal(db_session_update(db, s, &e), 0);
	assert_int_equal(db_commit(db, &e), 0);
	exec_ok(db, "UPDATE sessions SET call_graph='fp'");
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

/* ---- the oracle ---- */

static const char *path_base(const char *p)
{
	const char *s = strrchr(p, '/');

	return s ? s + 1 : p;
}

/* Does sample j of entry f pass o's filters? */
static int passes(const struct report_opts *o, const struct fent *f, int j)
{
	int64_t t = (f->t_us + j) * 1000;
	const struct frame *f0 = f->stack ? &stk[f->stack].f[0] : &stk[1].f[0];
	enum bin b = fn_bin[f0->fn];

	if (o->pid >= 0 && f->pid != o->pid)
		return 0;
	if (o->comm && strcmp(comm_names[f->comm], o->comm))
		return 0;
	if (o->binary && strcmp(bin_path[b], o->binary) &&
	    strcmp(path_base(bin_path[b]), o->binary))
		return 0;
	if (o->mode == REPORT_KERNEL && b != B_KERN)
		return 0;
	if (o->mode == REPORT_USER && b == B_KERN)
		return 0;
	if (o->has_from && t < o->from_ns)
		return 0;
	if (o->has_to && t > o->to_ns)
		return 0;
	return 1;
}

struct efn {
	uint64_t self, total, cself[NEV], ctotal[NEV];
};

/* Per function (or binary: by_binary), the expected figures; returns the
 * samples with a stack that pass, *no_stack those without. */
static uint64_t oracle_children(const struct report_opts *o, int by_binary, struct efn *out,
				uint64_t *no_stack)
{
	uint64_t n = 0;

	memset(out, 0, NFN * sizeof(*out));
	*no_stack = 0;
	for (size_t i = 0; i < NENT; i++) {
		const struct fent *f = &ents[i];

		for (int j = 0; j < f->n; j++) {
			int seen[NFN] = { 0 };

			if (!passes(o, f, j))
				continue;
			if (!f->stack) {
				(*no_stack)++;
				continue;
			}
			n++;
			for (int k = 0; k < stk[f->stack].nr; k++) {
				enum fn fn = stk[f->stack].f[k].fn;
				int g = by_binary ? (int)fn_bin[fn] : (int)fn;

				if (!k) {
					out[g].self++;
					for (int c = 0; c < NEV; c++)
						out[g].cself[c] += f->c[c];
				}
				if (seen[g]++)
					continue;
				out[g].total++;
				for (int c = 0; c < NEV; c++)
					out[g].ctotal[c] += f->c[c];
			}
		}
	}
	return n;
}

#define MAXP 64
struct epath {
	char path[256];
	uint64_t samples, c[NEV];
};

/* The expected nodes of the tree around fn: paths as ';'-joined names. */
static size_t oracle_tree(const struct report_opts *o, enum fn target, enum calltree_dir dir,
			  struct epath *p)
{
	size_t np = 0;

	for (size_t i = 0; i < NENT; i++) {
		const struct fent *f = &ents[i];
		const struct fstack *s = &stk[f->stack];
		int at = -1, k;
		char path[256] = "";

		if (!f->stack)
			continue;
		for (k = 0; k < s->nr; k++)
			if (s->f[k].fn == target && (at < 0 || dir == CALLTREE_CALLEES))
				at = k;
		if (at < 0)
			continue;
		for (k = at; k >= 0 && k < s->nr; k += dir == CALLTREE_CALLERS ? 1 : -1) {
			size_t q;

			snprintf(path + strlen(path), sizeof(path) - strlen(path), "%s%s",
				 k == at ? "" : ";", fn_names[s->f[k].fn]);
			for (q = 0; q < np && strcmp(p[q].path, path); q++)
				;
			if (q == np) {
				assert_true(np < MAXP);
				memset(&p[np], 0, sizeof(p[np]));
				snprintf(p[np].path, sizeof(p[np].path), "%s", path);
				np++;
			}
			for (int j = 0; j < f->n; j++) {
				if (!passes(o, f, j))
					continue;
				p[q].samples++;
				for (int c = 0; c < NEV; c++)
					p[q].c[c] += f->c[c];
			}
		}
	}
	/* paths no sample passed are no nodes */
	size_t m = 0;

	for (size_t q = 0; q < np; q++)
		if (p[q].samples)
			p[m++] = p[q];
	return m;
}

/* ---- checking ---- */

static const char *cell_str(const struct table *t, size_t row, const char *col)
{
	const char *s = NULL;
	int c = table_col(t, col);

	if (c < 0)
		fail_msg("no column %s", col);
	return table_get_str(t, row, c, &s) == 0 ? s : NULL;
}

static int64_t cell_int(const struct table *t, size_t row, const char *col)
{
	int64_t v = -1;
	int c = table_col(t, col);

	if (c < 0)
		fail_msg("no column %s", col);
	assert_int_equal(table_get_int(t, row, c, &v), 0);
	return v;
}

static double cell_pct(const struct table *t, size_t row, const char *col)
{
	double v = NAN;
	int c = table_col(t, col);

	if (c < 0)
		fail_msg("no column %s", col);
	assert_int_equal(table_get_float(t, row, c, &v), 0);
	return v;
}

static struct report_opts opts(void)
{
	struct report_opts o = { .by = REPORT_BY_SYMBOL, .pid = -1 };

	return o;
}

static struct stack_set *load(const struct report_opts *o)
{
	struct error e = { "" };
	struct stack_set *set = stacks_load(X->f.db, o, &e);

	if (!set)
		fail_msg("stacks_load: %s", e.msg);
	return set;
}

/* --children for o against the oracle: every row, its order. */
static void check_children(const struct report_opts *o)
{
	int by_binary = o->by == REPORT_BY_BINARY;
	struct stack_set *set = load(o);
	struct report_summary sum;
	struct efn want[NFN];
	uint64_t no_stack, n = oracle_children(o, by_binary, want, &no_stack);
	struct error e = { "" };
	struct table *t;
	size_t rows = 0, i;
	int g;

	assert_int_equal(set->samples, n);
	assert_int_equal(set->no_stack, no_stack);
	assert_int_equal(calltree_summary(X->f.db, set, &sum, &e), 0);
	t = calltree_children(X->f.db, set, o, &sum, &e);
	if (!t)
		fail_msg("calltree_children: %s", e.msg);
	for (g = 0; g < NFN; g++)
		rows += want[g].total > 0;
	if (o->limit && o->limit < rows)
		rows = o->limit;
	assert_int_equal(table_rows(t), rows);
	for (i = 0; i < rows; i++) {
		const char *bin = cell_str(t, i, "binary"), *sym = cell_str(t, i, "symbol");

		for (g = 0; g < NFN; g++)
			if (by_binary ? g < NBIN && !strcmp(bin, bin_path[g]) :
			    sym && !strcmp(sym, fn_names[g]))
				break;
		if (g == NFN)
			fail_msg("row %zu: unexpected %s %s", i, bin, sym ? sym : "(null)");
		if (by_binary)
			assert_null(sym);
		else
			assert_string_equal(bin, bin_path[fn_bin[g]]);
		assert_int_equal(cell_int(t, i, "self_samples"), want[g].self);
		assert_int_equal(cell_int(t, i, "total_samples"), want[g].total);
		assert_true(fabs(cell_pct(t, i, "self_percent") - 100.0 * want[g].self / n) < 1e-9);
		assert_true(fabs(cell_pct(t, i, "total_percent") - 100.0 * want[g].total / n) < 1e-9);
		for (int c = 0; c < NEV; c++) {
			char name[80];

			snprintf(name, sizeof(name), "%s_self", evnames[c]);
			assert_int_equal(cell_int(t, i, name), want[g].cself[c]);
			snprintf(name, sizeof(name), "%s_total", evnames[c]);
			assert_int_equal(cell_int(t, i, name), want[g].ctotal[c]);
		}
		if (i) {	/* by total, then self */
			int64_t pt = cell_int(t, i - 1, "total_samples");

			assert_true(pt > (int64_t)want[g].total ||
				    (pt == (int64_t)want[g].total &&
				     cell_int(t, i - 1, "self_samples") >= (int64_t)want[g].self));
		}
	}
	table_free(t);
	stacks_free(set);
}

/* The tree around fn for o against the oracle (through the CSV table). */
static void check_tree(const struct report_opts *o, enum fn fn, enum calltree_dir dir)
{
	struct stack_set *set = load(o);
	struct epath want[MAXP];
	size_t np = oracle_tree(o, fn, dir, want), i, q;
	struct error e = { "" };
	struct calltree *t;
	struct table *tb;

	t = calltree_build(set, fn_names[fn], dir, &e);
	if (!np) {
		assert_null(t);
		assert_non_null(strstr(e.msg, fn_names[fn]));
		stacks_free(set);
		return;
	}
	if (!t)
		fail_msg("calltree_build %s: %s", fn_names[fn], e.msg);
	assert_int_equal(t->n, np);
	tb = calltree_table(t, OUTPUT_CSV);
	assert_int_equal(table_rows(tb), np);
	for (i = 0; i < np; i++) {
		const char *path = cell_str(tb, i, "path");
		const char *last = strrchr(path, ';');
		int64_t depth = 0;

		for (q = 0; q < np && strcmp(want[q].path, path); q++)
			;
		if (q == np)
			fail_msg("%s of %s: unexpected node %s", dir == CALLTREE_CALLERS ?
				 "callers" : "callees", fn_names[fn], path);
		for (const char *c = path; *c; c++)
			depth += *c == ';';
		assert_int_equal(cell_int(tb, i, "depth"), depth);
		assert_int_equal(t->v[i].depth, depth);
		assert_string_equal(cell_str(tb, i, "symbol"), last ? last + 1 : path);
		assert_int_equal(cell_int(tb, i, "samples"), want[q].samples);
		assert_true(fabs(cell_pct(tb, i, "percent") -
				 100.0 * want[q].samples / set->samples) < 1e-9);
		for (int c = 0; c < NEV; c++)
			assert_int_equal(cell_int(tb, i, evnames[c]), want[q].c[c]);
		if (depth) {
			/* depth first: the parent is the nearest row above one
			 * level up, and its path is this one's less the last */
			size_t p = t->v[i].parent;

			assert_true(p < i);
			assert_int_equal(t->v[p].depth, depth - 1);
			assert_int_equal(strncmp(cell_str(tb, p, "path"), path,
						 (size_t)(last - path)), 0);
			assert_int_equal(strlen(cell_str(tb, p, "path")), (size_t)(last - path));
			for (size_t k = p + 1; k < i; k++)
				assert_true(t->v[k].depth >= (uint32_t)depth);
		}
		/* siblings by samples (weights are samples here) */
		for (size_t k = i; k-- > 0;) {
			if (t->v[k].depth < t->v[i].depth)
				break;
			if (t->v[k].depth == t->v[i].depth) {
				assert_true(t->v[k].samples >= t->v[i].samples);
				assert_false(t->v[k].last);
				break;
			}
		}
	}
	table_free(tb);
	calltree_free(t);
	stacks_free(set);
}

/* ---- tests ---- */

static void test_load(void **state)
{
	struct report_opts o = opts();
	struct stack_set *set;
	uint64_t samples = 0, incomplete = 0;
	size_t i;

	(void)state;
	set = load(&o);
	assert_string_equal(set->call_graph, "fp");
	assert_int_equal(set->nr_events, NEV);
	assert_string_equal(set->events[0], "page-faults");
	assert_int_equal(set->nr_stacks, NENT - 1);
	assert_int_equal(set->nr_syms, NFN);
	assert_false(set->weighted);
	/* every entry's frames named as the fixture says, leaf first */
	for (i = 0; i < set->nr_stacks; i++) {
		const struct stack_entry *se = &set->stacks[i];
		const struct fstack *s = &stk[se->stack_id];
		size_t k;

		for (k = 0; k < NENT; k++)
			if (ents[k].stack == se->stack_id && ents[k].pid == (int)se->pid)
				break;
		assert_true(k < NENT);
		assert_int_equal(se->samples, ents[k].n);
		assert_int_equal(se->weight, ents[k].n);
		assert_int_equal(se->c[1], ents[k].c[1] * ents[k].n);
		assert_string_equal(se->comm, comm_names[ents[k].comm]);
		assert_int_equal(se->nr, s->nr);
		assert_int_equal(se->flags, s->flags);
		for (k = 0; k < se->nr; k++) {
			const struct stack_loc *l = &set->locs[se->locs[k]];
			const struct stack_sym *y = &set->syms[l->sym];

			assert_int_equal(l->binary_id, X->bin_id[fn_bin[s->f[k].fn]]);
			assert_int_equal(l->offset, frame_off(&s->f[k]));
			assert_string_equal(y->symbol, fn_names[s->f[k].fn]);
			assert_string_equal(y->binary, bin_path[fn_bin[s->f[k].fn]]);
			assert_int_equal(y->kernel, fn_bin[s->f[k].fn] == B_KERN);
		}
		samples += se->samples;
		if (se->flags & STACK_INCOMPLETE)
			incomplete += se->samples;
	}
	assert_int_equal(set->samples, samples);
	assert_int_equal(set->incomplete, 2);
	assert_int_equal(incomplete, 2);
	assert_int_equal(set->no_stack, 6);
	stacks_free(set);
}

static void test_children(void **state)
{
	struct report_opts o = opts();
	struct stack_set *set;
	struct report_summary sum;
	struct error e = { "" };
	struct table *t;

	(void)state;
	check_children(&o);
	o.by = REPORT_BY_BINARY;
	check_children(&o);
	o = opts();
	o.limit = 2;
	check_children(&o);

	/* hand-checked anchors: main is on every stack but the incomplete
	 * one; work10 recurses (stack 4: three frames, 9 samples) */
	o = opts();
	set = load(&o);
	assert_int_equal(calltree_summary(X->f.db, set, &sum, &e), 0);
	t = calltree_children(X->f.db, set, &o, &sum, &e);
	assert_non_null(t);
	assert_string_equal(cell_str(t, 0, "symbol"), "main");
	assert_int_equal(cell_int(t, 0, "total_samples"), 103 - 2);
	assert_int_equal(cell_int(t, 0, "self_samples"), 0);
	assert_string_equal(cell_str(t, 0, "build_id"), SPLIT_KEY + 8);
	for (size_t i = 0; i < table_rows(t); i++)
		if (!strcmp(cell_str(t, i, "symbol"), "work10")) {
			assert_int_equal(cell_int(t, i, "total_samples"), 20 + 9 + 3);
			assert_int_equal(cell_int(t, i, "self_samples"), 9);
			assert_int_equal(cell_int(t, i, "page-faults_total"),
					 20 * 2 + 8 * 3 + 9 + 3 * 1);
		}
	assert_int_equal(sum.samples, 103);
	assert_int_equal(sum.total[0], 50 + 40 + 0 + 24 + 20 + 3 + 20 + 4 + 9);
	table_free(t);
	assert_null(calltree_children(X->f.db, set, &(struct report_opts){ .by = REPORT_BY_LINE,
				       .pid = -1 }, &sum, &e));
	assert_non_null(strstr(e.msg, "--by symbol"));
	stacks_free(set);
}

static void test_filters(void **state)
{
	struct report_opts o;

	(void)state;
	o = opts(); o.pid = 200; check_children(&o);
	o = opts(); o.pid = 100; check_children(&o);
	o = opts(); o.comm = "beta"; check_children(&o);
	o = opts(); o.binary = "libhot.so"; check_children(&o);
	o = opts(); o.binary = "/opt/fixture/split603010"; check_children(&o);
	o = opts(); o.binary = "[kernel.kallsyms]"; check_children(&o);
	o = opts(); o.mode = REPORT_KERNEL; check_children(&o);
	o = opts(); o.mode = REPORT_USER; check_children(&o);
	o = opts(); o.mode = REPORT_USER; o.pid = 200; o.comm = "beta"; check_children(&o);
	o = opts(); o.comm = "nobody"; check_children(&o);
	o = opts(); o.pid = 4242; check_children(&o);
}

static const enum fn tree_fns[] = { F_MAIN, F_W60, F_W30, F_W10, F_HOT, F_KSYS };

static void test_trees(void **state)
{
	struct report_opts o = opts();

	(void)state;
	for (size_t i = 0; i < ARRAY_SIZE(tree_fns); i++) {
		check_tree(&o, tree_fns[i], CALLTREE_CALLERS);
		check_tree(&o, tree_fns[i], CALLTREE_CALLEES);
	}
	o.pid = 200;
	check_tree(&o, F_W60, CALLTREE_CALLERS);
	check_tree(&o, F_MAIN, CALLTREE_CALLEES);
	check_tree(&o, F_HOT, CALLTREE_CALLERS);	/* none in pid 200 */
}

static void test_tree_anchors(void **state)
{
	struct report_opts o = opts();
	struct stack_set *set = load(&o);
	struct error e = { "" };
	struct calltree *t;

	(void)state;
	/* callers of work60: work30 (stacks 1 and 6: 57) then work10 (20);
	 * under work30, main (55: stack 6 is incomplete) */
	t = calltree_build(set, "work60", CALLTREE_CALLERS, &e);
	assert_non_null(t);
	assert_int_equal(t->n, 5);
	assert_string_equal(set->syms[t->v[0].sym].symbol, "work60");
	assert_int_equal(t->v[0].samples, 77);
	assert_string_equal(set->syms[t->v[1].sym].symbol, "work30");
	assert_int_equal(t->v[1].samples, 57);
	assert_false(t->v[1].last);
	assert_string_equal(set->syms[t->v[2].sym].symbol, "main");
	assert_int_equal(t->v[2].samples, 55);
	assert_string_equal(set->syms[t->v[3].sym].symbol, "work10");
	assert_int_equal(t->v[3].samples, 20);
	assert_true(t->v[3].last);
	calltree_free(t);

	/* callers of work10 from its innermost frame: the recursion shows */
	t = calltree_build(set, "work10", CALLTREE_CALLERS, &e);
	assert_non_null(t);
	assert_int_equal(t->v[0].samples, 32);
	assert_string_equal(set->syms[t->v[1].sym].symbol, "main");
	assert_int_equal(t->v[1].samples, 23);
	assert_string_equal(set->syms[t->v[2].sym].symbol, "work10");
	assert_int_equal(t->v[2].samples, 9);
	calltree_free(t);

	/* nowhere: an error naming it and the report that lists functions */
	assert_null(calltree_build(set, "no_such_fn", CALLTREE_CALLEES, &e));
	assert_non_null(strstr(e.msg, "'no_such_fn'"));
	assert_non_null(strstr(e.msg, "strobe report --by symbol"));
	stacks_free(set);
}

/* Text: indentation by depth with |-- and `--; JSON: nesting. */
static void test_tree_output(void **state)
{
	struct report_opts o = opts();
	struct stack_set *set = load(&o);
	struct error e = { "" };
	struct calltree *t = calltree_build(set, "main", CALLTREE_CALLEES, &e);
	struct table *tb;
	char *buf = NULL, *line, *save = NULL;
	size_t len = 0, row = 0;
	FILE *f;
	int depth = 0, maxdepth = 0, opens = 0;

	(void)state;
	assert_non_null(t);
	tb = calltree_table(t, OUTPUT_TEXT);
	f = open_memstream(&buf, &len);
	assert_int_equal(table_write(tb, OUTPUT_TEXT, f), 0);
	fclose(f);
	line = strtok_r(buf, "\n", &save);
	assert_non_null(strstr(line, "callees of main"));
	while ((line = strtok_r(NULL, "\n", &save))) {
		const struct calltree_node *x = &t->v[row];
		const char *name = set->syms[x->sym].symbol;
		char *at = strstr(line, name);
		const char *conn = x->last ? "`-- " : "|-- ";

		assert_true(row < t->n);
		assert_non_null(at);
		if (x->depth) {
			/* the connector right before the name, 4 columns a level */
			assert_int_equal(strncmp(at - 4, conn, 4), 0);
		}
		row++;
	}
	assert_int_equal(row, t->n);
	free(buf);
	table_free(tb);

	buf = NULL;
	f = open_memstream(&buf, &len);
	assert_int_equal(calltree_write_json(t, f), 0);
	fclose(f);
	/* brackets balance, one object per node, nested as deep as the tree */
	for (char *c = buf; *c; c++) {
		if (*c == '"') {
			for (c++; *c && *c != '"'; c++)
				if (*c == '\\')
					c++;
			continue;
		}
		depth += *c == '[' || *c == '{';
		depth -= *c == ']' || *c == '}';
		assert_true(depth >= 0);
		maxdepth = MAX(maxdepth, depth);
	}
	assert_int_equal(depth, 0);
	for (char *c = buf; (c = strstr(c, "\"children\":[")); c++)
		opens++;
	assert_int_equal(opens, t->n);
	{
		uint32_t md = 0;

		for (size_t i = 0; i < t->n; i++)
			md = MAX(md, t->v[i].depth);
		/* { "roots":[ then {..."children":[ per level */
		assert_int_equal(maxdepth, 2 + 2 * (int)(md + 1));
	}
	free(buf);
	calltree_free(t);
	stacks_free(set);
}

/* A time range reads the raw samples: the same figures as the oracle's,
 * and the whole range the same as stack_agg. */
static void test_raw(void **state)
{
	struct report_opts o = opts();
	struct stack_set *a, *b;

	(void)state;
	o.has_from = 1;
	o.from_ns = 0;
	check_children(&o);
	a = load(&o);
	b = load(&(struct report_opts){ .by = REPORT_BY_SYMBOL, .pid = -1 });
	assert_int_equal(a->samples, b->samples);
	assert_int_equal(a->no_stack, b->no_stack);
	assert_int_equal(a->nr_stacks, b->nr_stacks);
	stacks_free(a);
	stacks_free(b);
	o.from_ns = 2005000;
	o.has_to = 1;
	o.to_ns = 7002000;
	check_children(&o);
	check_tree(&o, F_W60, CALLTREE_CALLERS);
	check_tree(&o, F_MAIN, CALLTREE_CALLEES);
	o.pid = 200;
	check_children(&o);
	o = opts();
	o.has_to = 1;
	o.to_ns = 5001000;
	o.mode = REPORT_KERNEL;
	check_children(&o);
}

struct scan_ctx {
	const struct stack_set *set;
	size_t n;
	int64_t last;
};

static int scan_fn(void *ctx, int64_t t, uint32_t cpu, uint32_t tid, size_t entry,
		   struct error *e)
{
	struct scan_ctx *c = ctx;
	const struct stack_entry *se = &c->set->stacks[entry];
	size_t k;

	(void)e;
	assert_true(t >= c->last);
	c->last = t;
	/* the fixture's entry whose time span holds t */
	for (k = 0; k < NENT; k++)
		if (t >= ents[k].t_us * 1000 && t < (ents[k].t_us + ents[k].n) * 1000)
			break;
	assert_true(k < NENT);
	assert_int_equal(se->stack_id, ents[k].stack);
	assert_int_equal(se->pid, ents[k].pid);
	assert_int_equal(cpu, ((t / 1000 - ents[k].t_us) & 1));
	assert_int_equal(tid, ents[k].pid + (t / 1000 - ents[k].t_us) % 3);
	c->n++;
	return 0;
}

static void test_scan(void **state)
{
	struct report_opts o = opts();
	struct stack_set *set;
	struct scan_ctx c = { 0 };
	struct error e = { "" };

	(void)state;
	set = load(&o);
	c.set = set;
	assert_int_equal(stacks_scan(X->f.db, set, &o, scan_fn, &c, &e), 0);
	assert_int_equal(c.n, set->samples);
	stacks_free(set);
	o.pid = 200;
	set = load(&o);
	memset(&c, 0, sizeof(c));
	c.set = set;
	assert_int_equal(stacks_scan(X->f.db, set, &o, scan_fn, &c, &e), 0);
	assert_int_equal(c.n, 8);
	stacks_free(set);
}

/* Periods that differ: percentages of periods. */
static void test_weighted(void **state)
{
	struct report_opts o = opts();
	struct stack_set *set;
	struct report_summary sum;
	struct error e = { "" };
	struct table *t;
	uint64_t w = 0;

	(void)state;
	exec_ok(X->f.db, "UPDATE stack_agg SET period=period*4 WHERE stack_id=3");
	set = load(&o);
	assert_true(set->weighted);
	for (size_t i = 0; i < set->nr_stacks; i++)
		w += set->stacks[i].weight;
	assert_int_equal(set->weight, w);
	assert_int_equal(w, (103 + 3 * 10) * PERIOD);
	assert_int_equal(calltree_summary(X->f.db, set, &sum, &e), 0);
	t = calltree_children(X->f.db, set, &o, &sum, &e);
	for (size_t i = 0; i < table_rows(t); i++)
		if (!strcmp(cell_str(t, i, "symbol"), "work30"))
			assert_true(fabs(cell_pct(t, i, "total_percent") -
					 100.0 * (57 + 40 + 4) * PERIOD / w) < 1e-9);
	table_free(t);
	stacks_free(set);
	exec_ok(X->f.db, "UPDATE stack_agg SET period=period/4 WHERE stack_id=3");
}

static void test_errors(void **state)
{
	struct report_opts o = opts();
	struct error e = { "" };
	unsigned char blob[24] = { 0 };

	(void)state;
	exec_ok(X->f.db, "UPDATE sessions SET call_graph=NULL");
	assert_null(stacks_load(X->f.db, &o, &e));
	assert_non_null(strstr(e.msg, "without call stacks"));
	assert_non_null(strstr(e.msg, "-g"));
	exec_ok(X->f.db, "UPDATE sessions SET call_graph='fp'");

	/* a stack whose blob does not hold its frames */
	exec_ok(X->f.db, "SAVEPOINT bad");
	exec_ok(X->f.db, "DELETE FROM stacks WHERE id=3");
	stack_insert(X->f.db, X->s.id, 3, blob, sizeof(blob), 2, 4);
	assert_null(stacks_load(X->f.db, &o, &e));
	assert_non_null(strstr(e.msg, "malformed"));
	exec_ok(X->f.db, "ROLLBACK TO bad");
	exec_ok(X->f.db, "RELEASE bad");

	o.session = 999;
	assert_null(stacks_load(X->f.db, &o, &e));
}

/* A stack that several processes take turns on, in a time range (the
 * raw samples): one entry per (stack, process), however the turns go;
 * each with its own samples.  A session of its own, made last: the
 * tests above read the latest session. */
static void test_alternate(void **state)
{
	struct db *db = X->f.db;
	struct db_session s2 = X->s;
	struct report_opts o = opts();
	struct stack_set *set;
	struct error e = { "" };
	unsigned char blob[16];
	uint64_t per_pid[2] = { 0, 0 };
	size_t i;

	(void)state;
	s2.id = 0;
	s2.first_sample = s2.last_sample = 0;
	s2.samples = 0;
	snprintf(s2.state, sizeof(s2.state), "running");
	assert_int_equal(db_session_insert(db, &s2, &e), 0);
	assert_int_equal(db_begin(db, &e), 0);
	put_le64(blob, (uint64_t)X->bin_id[fn_bin[stk[1].f[0].fn]]);
	put_le64(blob + 8, frame_off(&stk[1].f[0]));
	stack_insert(db, s2.id, 1, blob, 16, 1, 0);
	/* pid 100, 200, 100, 200, 100, 100, 200: 4 and 3 samples */
	for (i = 0; i < 7; i++) {
		int pid = (i == 1 || i == 3 || i == 6) ? 200 : 100;
		struct db_sample smp = {
			.session_id = s2.id, .time_ns = START_NS + (int64_t)(i + 1) * 1000,
			.pid = pid, .tid = pid, .comm_id = X->comm_id[C_A],
			.binary_id = X->bin_id[fn_bin[stk[1].f[0].fn]],
			.offset = frame_off(&stk[1].f[0]), .flags = STROBE_SAMPLE_USER,
			.nr = NEV, .period = PERIOD, .stack_id = 1,
		};
		int64_t rowid = db_sample_insert(db, &smp, &e);

		assert_true(rowid > 0);
		if (!s2.first_sample)
			s2.first_sample = rowid;
		s2.last_sample = rowid;
		s2.samples++;
	}
	snprintf(s2.state, sizeof(s2.state), "done");
	assert_int_equal(db_session_update(db, &s2, &e), 0);
	assert_int_equal(db_commit(db, &e), 0);
	exec_ok(db, "UPDATE sessions SET call_graph='fp'");

	o.session = s2.id;
	o.has_from = 1;
	o.from_ns = 1500;	/* not the whole session: the raw samples */
	set = load(&o);
	assert_int_equal(set->samples, 6);
	assert_int_equal(set->nr_stacks, 2);
	for (i = 0; i < set->nr_stacks; i++) {
		assert_int_equal(set->stacks[i].stack_id, 1);
		per_pid[set->stacks[i].pid == 200] += set->stacks[i].samples;
	}
	assert_int_equal(per_pid[0], 3);
	assert_int_equal(per_pid[1], 3);
	stacks_free(set);
}


/* The folded text of t (flame_write_folded), or of ix's last window. */
static char *folded_of(const struct flame_tree *t, const struct flame_index *ix)
{
	struct error e = { "" };
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	assert_non_null(f);
	if ((t ? flame_write_folded(t, f, &e) : flame_index_write_folded(ix, f, &e)) < 0)
		fail_msg("folded: %s", e.msg);
	fclose(f);
	return buf;
}

/*
 * A flame index (flameindex.h) gives every window the bytes that window's
 * set made from scratch gives: for windows of one sample, of some and of
 * all, by samples and by each event, with the filters, through stacks 1
 * and 4 that two processes share.  A set of other filters is not its
 * whole (stacks_window_sums() says so), nor a session with more samples.
 */
static void test_flame_index(void **state)
{
	static const int64_t win[][2] = {
		{ 0, 20000000 }, { 0, 5000000 }, { 1500000, 7003000 }, { 7000000, 7001000 },
		{ 9000000, 20000000 }, { 4000000, 9002000 },
	};
	struct report_opts fo[5];
	struct error e = { "" };
	size_t i, w;

	(void)state;
	for (i = 0; i < ARRAY_SIZE(fo); i++) {
		fo[i] = opts();
		fo[i].session = X->s.id;	/* test_alternate adds one */
	}
	fo[1].pid = 200;
	fo[2].comm = "beta";
	fo[3].mode = REPORT_USER;
	fo[4].mode = REPORT_KERNEL;
	for (i = 0; i < ARRAY_SIZE(fo); i++) {
		struct flame_index *ix = flame_index_make(X->f.db, &fo[i], &e);
		const struct flame_tree *it;

		if (!ix)
			fail_msg("flame_index_make: %s", e.msg);
		assert_true(flame_index_current(ix, &X->s));
		assert_int_equal(flame_index_window(ix, X->f.db, 0, 20000000, FLAME_WEIGHT, &it,
						    &e), 1);
		for (w = 0; w < ARRAY_SIZE(win); w++) {
			for (int what = FLAME_SAMPLES; what < NEV; what++) {
				struct stack_set *set;
				struct flame_tree *t;
				char *want, *got;

				if (what == FLAME_WEIGHT)
					continue;
				set = stacks_window(X->f.db, &fo[i], win[w][0], win[w][1], &e);
				if (!set)
					fail_msg("stacks_window: %s", e.msg);
				t = flame_tree_build(set, what, &e);
				assert_non_null(t);
				want = folded_of(t, NULL);
				if (flame_index_window(ix, X->f.db, win[w][0], win[w][1], what, &it,
						       &e))
					fail_msg("flame_index_window: %s", e.msg);
				assert_non_null(it);
				got = folded_of(NULL, ix);
				if (strcmp(want, got))
					fail_msg("filters %zu, window %zu, what %d:\n%s\nagainst\n%s", i,
						 w, what, got, want);
				/* and the tree's own values, as the SVG draws them */
				assert_int_equal(it->nodes[0].value, t->nodes[0].value);
				free(want);
				free(got);
				flame_tree_free(t);
				stacks_free(set);
			}
		}
		flame_index_free(ix);
	}
	/* the whole of pid 200 is no whole for all processes */
	{
		struct stack_set *whole = load(&fo[1]);
		uint64_t *sums = calloc(whole->nr_stacks + 1, sizeof(*sums));
		struct report_opts all = fo[0];
		struct flame_index *ix = flame_index_make(X->f.db, &all, &e);
		struct db_session grown = X->s;

		assert_int_equal(stacks_window_sums(X->f.db, whole, &all, 0, 5000000, -1, sums, &e),
				 1);
		assert_int_equal(stacks_window_sums(X->f.db, whole, &fo[1], 0, 20000000, NEV, sums,
						    &e), -1);
		grown.samples++;
		assert_false(flame_index_current(ix, &grown));
		grown = X->s;
		grown.id++;
		assert_false(flame_index_current(ix, &grown));
		flame_index_free(ix);
		free(sums);
		stacks_free(whole);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_load),
		cmocka_unit_test(test_children),
		cmocka_unit_test(test_filters),
		cmocka_unit_test(test_trees),
		cmocka_unit_test(test_tree_anchors),
		cmocka_unit_test(test_tree_output),
		cmocka_unit_test(test_raw),
		cmocka_unit_test(test_scan),
		cmocka_unit_test(test_weighted),
		cmocka_unit_test(test_errors),
		cmocka_unit_test(test_alternate),
		cmocka_unit_test(test_flame_index),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
