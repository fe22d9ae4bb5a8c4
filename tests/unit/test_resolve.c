/*
 * test_resolve.c - lib/symbols/resolve*.c, the resolver shared by report, plot and
 * export, on a database made through lib/store/db.h (no daemon).
 *
 * Covers: a user binary named from its cached copy (the built workloads
 * split603010, libhot.so, and stripped with only .dynsym) at offsets
 * whose function the test finds by reading the ELF itself (dbfix.h);
 * the source line; an offset no symbol covers ("[unknown]"); a binary
 * whose cached copy is gone, never copied, or whose row records a problem
 * or is not an ELF file ("[binary unavailable]" with the reason, no name
 * guessed even when the original path still holds the file); a copy with
 * no function symbols (no_symbols, "[unknown]"); the kernel named from the
 * session's kallsyms snapshot (modules as "name [module]"), and unavailable
 * when the snapshot is missing or unreadable; memory with no file ([vdso], [anon], no
 * binary row); the build_id of each key kind; memoisation (one name per
 * location, opened once, strings valid until resolver_free, many
 * locations); inline chains (resolver_set_inline) on the built workload
 * inlinesplit, remembered per location.
 */
#include "config.h"
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>
#include "dbfix.h"
#include "resolve.h"

#define SPLIT_KEY "buildid:5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a"
#define HOT_KEY "buildid:6b6b6b6b6b6b6b6b6b6b6b6b6b6b6b6b6b6b6b6b"
#define STRIP_KEY "xxh3:00112233445566778899aabbccddeeff"
#define GONE_KEY "buildid:dead0000dead0000dead0000dead0000dead0000"
#define NEVER_KEY "buildid:beef0000beef0000beef0000beef0000beef0000"
#define PROB_KEY "buildid:c0de0000c0de0000c0de0000c0de0000c0de0000"
#define KERNEL_KEY "kernel:feedfacefeedfacefeedfacefeedfacefeedface"
#define KSYMS_KEY "kallsyms:0123456789abcdef0123456789abcdef"
#define BADKS_KEY "kallsyms:badbadbadbadbadbadbadbadbadbadba"
#define JUNK_KEY "buildid:0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b"
#define BARE_KEY "buildid:0c0c0c0c0c0c0c0c0c0c0c0c0c0c0c0c0c0c0c0c"
#define INL_KEY "buildid:0d0d0d0d0d0d0d0d0d0d0d0d0d0d0d0d0d0d0d0d"

static const char ksyms[] =
	"ffffffff81000000 T _stext\n"
	"ffffffff81001000 T do_syscall_64\n"
	"ffffffff81002000 t read_zero\n"
	"ffffffffc0001000 t ext4_fn [ext4]\n";

struct fx {
	struct fixdb f;
	struct db_session s;
	char split[PATH_MAX], hot[PATH_MAX], strip[PATH_MAX], split_src[PATH_MAX];
	int64_t b_split, b_hot, b_strip, b_gone, b_never, b_prob, b_kernel, b_vdso, b_anon;
	int64_t b_junk, b_bare, b_inl;
	char inl[PATH_MAX];
	uint64_t o70, o70_size;
	uint64_t w60, w60_size, w30, w10, w10_size, hot_fn, strip_fn;
};

static void session_init(struct db_session *s, const char *kallsyms_key)
{
	memset(s, 0, sizeof(*s));
	snprintf(s->name, sizeof(s->name), "resolve");
	snprintf(s->state, sizeof(s->state), "done");
	snprintf(s->backend, sizeof(s->backend), "perf");
	s->nr_cpus = 2;
	snprintf(s->sample_event, sizeof(s->sample_event), "cpu-clock");
	s->sample_freq = 1000;
	s->start_ns = 1000000000000LL;
	snprintf(s->tsc_source, sizeof(s->tsc_source), "none");
	snprintf(s->kallsyms_key, sizeof(s->kallsyms_key), "%s", kallsyms_key);
}

static int setup(void **state)
{
	struct fx *x = calloc(1, sizeof(*x));
	struct error e = { "" };
	struct db *db;

	fix_path(x->split, sizeof(x->split), "split603010", 0);
	fix_path(x->hot, sizeof(x->hot), "libhot.so", 0);
	fix_path(x->strip, sizeof(x->strip), "stripped", 0);
	fix_path(x->split_src, sizeof(x->split_src), "split603010.c", 1);
	fix_path(x->inl, sizeof(x->inl), "inlinesplit", 0);
	assert_int_equal(fix_elf_func(x->inl, "outer70", &x->o70, &x->o70_size), 0);
	/* the oracle: function offsets read from the ELF files themselves */
	assert_int_equal(fix_elf_func(x->split, "work60", &x->w60, &x->w60_size), 0);
	assert_int_equal(fix_elf_func(x->split, "work10", &x->w10, &x->w10_size), 0);
	{
		uint64_t sz;

		assert_int_equal(fix_elf_func(x->split, "work30", &x->w30, &sz), 0);
		assert_int_equal(fix_elf_func(x->hot, "hot_in_lib", &x->hot_fn, &sz), 0);
		assert_int_equal(fix_elf_func(x->strip, "stripped_hot", &x->strip_fn, &sz), 0);
	}
	assert_true(x->w60_size > 8 && x->w10_size > 8);

	assert_int_equal(fixdb_open(&x->f, "resolve"), 0);
	db = x->f.db;
	assert_int_equal(fixdb_cache_file(&x->f, SPLIT_KEY, x->split), 0);
	assert_int_equal(fixdb_cache_file(&x->f, HOT_KEY, x->hot), 0);
	assert_int_equal(fixdb_cache_file(&x->f, STRIP_KEY, x->strip), 0);
	assert_int_equal(fixdb_cache_file(&x->f, INL_KEY, x->inl), 0);
	assert_int_equal(bincache_store_buf(&x->f.cache, KSYMS_KEY, ksyms, strlen(ksyms), BINCACHE_SHARED, &e), 0);
	assert_int_equal(bincache_store_buf(&x->f.cache, BADKS_KEY, "garbage\n", 8, BINCACHE_SHARED, &e), 0);
	/* a cached copy that is not an ELF file */
	assert_int_equal(bincache_store_buf(&x->f.cache, JUNK_KEY, "not an ELF file\n", 16, BINCACHE_SHARED, &e), 0);
	/* split603010 with no symbol table at all: .dynsym holds imports only */
	{
		char cmd[2 * PATH_MAX + 64], bare[PATH_MAX + 16];

		snprintf(bare, sizeof(bare), "%s/bare", x->f.dir);
		snprintf(cmd, sizeof(cmd), "strip --strip-all -o '%s' '%s'", bare, x->split);
		assert_int_equal(system(cmd), 0);
		assert_int_equal(fixdb_cache_file(&x->f, BARE_KEY, bare), 0);
	}

	x->b_split = db_binary_intern(db, SPLIT_KEY, "/opt/fixture/split603010", 20000, 1, NULL, &e);
	x->b_hot = db_binary_intern(db, HOT_KEY, "/opt/fixture/libhot.so", 16000, 1, NULL, &e);
	x->b_strip = db_binary_intern(db, STRIP_KEY, "/opt/fixture/stripped", 16000, 1, NULL, &e);
	/* gone from the cache, though the original path still holds a file
	 * with the very same contents as split603010: no guessing from it */
	x->b_gone = db_binary_intern(db, GONE_KEY, x->split, 20000, 1, NULL, &e);
	x->b_never = db_binary_intern(db, NEVER_KEY, "/opt/fixture/never", 100, 0, NULL, &e);
	x->b_prob = db_binary_intern(db, PROB_KEY, "/opt/fixture/deleted", 100, 0,
				     "deleted before it could be read", &e);
	x->b_kernel = db_binary_intern(db, KERNEL_KEY, "[kernel.kallsyms]", -1, 0, NULL, &e);
	x->b_vdso = db_binary_intern(db, "[vdso]", "[vdso]", -1, 0, NULL, &e);
	x->b_anon = db_binary_intern(db, "[anon]", "[anon]", -1, 0, NULL, &e);
	x->b_junk = db_binary_intern(db, JUNK_KEY, "/opt/fixture/junk", 16, 1, NULL, &e);
	x->b_bare = db_binary_intern(db, BARE_KEY, "/opt/fixture/bare", 16000, 1, NULL, &e);
	x->b_inl = db_binary_intern(db, INL_KEY, "/opt/fixture/inlinesplit", 16000, 1, NULL, &e);
	assert_true(x->b_junk > 0 && x->b_bare > 0 && x->b_inl > 0);
	assert_true(x->b_split > 0 && x->b_hot > 0 && x->b_strip > 0 && x->b_gone > 0 &&
		    x->b_never > 0 && x->b_prob > 0 && x->b_kernel > 0 && x->b_vdso > 0 &&
		    x->b_anon > 0);

	session_init(&x->s, KSYMS_KEY);
	x->s.kernel_binary_id = x->b_kernel;
	assert_int_equal(db_session_insert(db, &x->s, &e), 0);
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

static struct resolver *new_resolver(struct fx *x, const struct db_session *s)
{
	struct error e = { "" };
	struct resolver *r = resolver_new(x->f.db, s, &e);

	assert_non_null(r);
	return r;
}

static void test_user_symbols(void **state)
{
	struct fx *x = *state;
	struct resolver *r = new_resolver(x, &x->s);
	struct resolved rv;

	resolver_lookup(r, x->b_split, x->w60 + 4, 0, &rv);
	assert_string_equal(rv.binary, "/opt/fixture/split603010");
	assert_string_equal(rv.key, SPLIT_KEY);
	assert_string_equal(rv.build_id, SPLIT_KEY + 8);
	assert_string_equal(rv.symbol, "work60");
	assert_null(rv.source);
	assert_null(rv.problem);
	assert_int_equal(rv.no_symbols, 0);

	/* first and last byte of a function */
	resolver_lookup(r, x->b_split, x->w30, 0, &rv);
	assert_string_equal(rv.symbol, "work30");
	resolver_lookup(r, x->b_split, x->w10 + x->w10_size - 1, 0, &rv);
	assert_string_equal(rv.symbol, "work10");
	resolver_lookup(r, x->b_split, x->w60 + x->w60_size - 1, 0, &rv);
	assert_string_equal(rv.symbol, "work60");

	/* the ELF header: no function */
	resolver_lookup(r, x->b_split, 0, 0, &rv);
	assert_string_equal(rv.symbol, "[unknown]");
	assert_null(rv.problem);

	/* a shared library */
	resolver_lookup(r, x->b_hot, x->hot_fn + 8, 0, &rv);
	assert_string_equal(rv.binary, "/opt/fixture/libhot.so");
	assert_string_equal(rv.symbol, "hot_in_lib");
	assert_string_equal(rv.build_id, HOT_KEY + 8);

	/* stripped: .dynsym only; an xxh3 key is its own build_id */
	resolver_lookup(r, x->b_strip, x->strip_fn + 2, 0, &rv);
	assert_string_equal(rv.symbol, "stripped_hot");
	assert_string_equal(rv.build_id, STRIP_KEY);
	assert_int_equal(rv.no_symbols, 0);
	resolver_free(r);
}

static void test_source_lines(void **state)
{
	struct fx *x = *state;
	struct resolver *r = new_resolver(x, &x->s);
	unsigned l60 = fix_line_of(x->split_src, "DEFINE_WORK(work60)");
	unsigned l10 = fix_line_of(x->split_src, "DEFINE_WORK(work10)");
	char want[64];
	struct resolved rv;
	size_t n;

	assert_true(l60 > 0 && l10 > l60);

	/* named without the line first, then asked for it: the memo must
	 * add the line, not answer "" or NULL */
	resolver_lookup(r, x->b_split, x->w60 + 4, 0, &rv);
	assert_null(rv.source);
	resolver_lookup(r, x->b_split, x->w60 + 4, 1, &rv);
	assert_non_null(rv.source);
	assert_string_equal(rv.symbol, "work60");
	snprintf(want, sizeof(want), "split603010.c:%u", l60);
	n = strlen(rv.source);
	assert_true(n >= strlen(want));
	assert_string_equal(rv.source + n - strlen(want), want);

	/* asked for the line at the first lookup */
	resolver_lookup(r, x->b_split, x->w10 + 4, 1, &rv);
	assert_string_equal(rv.symbol, "work10");
	snprintf(want, sizeof(want), "split603010.c:%u", l10);
	n = strlen(rv.source);
	assert_true(n >= strlen(want));
	assert_string_equal(rv.source + n - strlen(want), want);

	/* no line info: stripped; the kernel; memory with no file */
	resolver_lookup(r, x->b_strip, x->strip_fn + 2, 1, &rv);
	assert_string_equal(rv.source, "");
	resolver_lookup(r, x->b_kernel, 0xffffffff81001010ULL, 1, &rv);
	assert_string_equal(rv.source, "");
	resolver_lookup(r, x->b_vdso, 0xa10, 1, &rv);
	assert_string_equal(rv.source, "");
	resolver_lookup(r, x->b_gone, x->w60 + 4, 1, &rv);
	assert_string_equal(rv.source, "");
	resolver_free(r);
}

static void test_unavailable(void **state)
{
	struct fx *x = *state;
	struct resolver *r = new_resolver(x, &x->s);
	struct resolved rv;

	/* cached copy gone: the file at the row's path is not used */
	resolver_lookup(r, x->b_gone, x->w60 + 4, 1, &rv);
	assert_string_equal(rv.binary, x->split);
	assert_string_equal(rv.symbol, "[binary unavailable]");
	assert_string_equal(rv.problem, "cached copy missing");
	assert_string_equal(rv.build_id, GONE_KEY + 8);
	resolver_lookup(r, x->b_gone, 0, 0, &rv);
	assert_string_equal(rv.symbol, "[binary unavailable]");

	resolver_lookup(r, x->b_never, 0x1000, 0, &rv);
	assert_string_equal(rv.symbol, "[binary unavailable]");
	assert_string_equal(rv.problem, "never copied to the binary cache");

	resolver_lookup(r, x->b_prob, 0x1000, 0, &rv);
	assert_string_equal(rv.symbol, "[binary unavailable]");
	assert_string_equal(rv.problem, "deleted before it could be read");

	/* the cached copy is unreadable */
	resolver_lookup(r, x->b_junk, 0x10, 1, &rv);
	assert_string_equal(rv.symbol, "[binary unavailable]");
	assert_string_equal(rv.source, "");
	assert_non_null(rv.problem);
	assert_true(!strncmp(rv.problem, "cached copy unreadable", 22));

	/* readable but with no function symbols: not a problem, no name */
	resolver_lookup(r, x->b_bare, x->w60 + 4, 0, &rv);
	assert_string_equal(rv.symbol, "[unknown]");
	assert_null(rv.problem);
	assert_int_equal(rv.no_symbols, 1);
	resolver_free(r);
}

static void test_kernel(void **state)
{
	struct fx *x = *state;
	struct resolver *r = new_resolver(x, &x->s);
	struct resolved rv;

	resolver_lookup(r, x->b_kernel, 0xffffffff81001010ULL, 0, &rv);
	assert_string_equal(rv.binary, "[kernel.kallsyms]");
	assert_string_equal(rv.key, KERNEL_KEY);
	assert_string_equal(rv.build_id, KERNEL_KEY + 7);
	assert_string_equal(rv.symbol, "do_syscall_64");
	assert_null(rv.problem);
	resolver_lookup(r, x->b_kernel, 0xffffffff81000000ULL, 0, &rv);
	assert_string_equal(rv.symbol, "_stext");
	resolver_lookup(r, x->b_kernel, 0xffffffff81001fffULL, 0, &rv);
	assert_string_equal(rv.symbol, "do_syscall_64");
	resolver_lookup(r, x->b_kernel, 0xffffffff81002000ULL, 0, &rv);
	assert_string_equal(rv.symbol, "read_zero");
	resolver_lookup(r, x->b_kernel, 0xffffffffc0001020ULL, 0, &rv);
	assert_string_equal(rv.symbol, "ext4_fn [ext4]");
	/* below the first symbol */
	resolver_lookup(r, x->b_kernel, 0xffffffff80000000ULL, 0, &rv);
	assert_string_equal(rv.symbol, "[unknown]");
	assert_null(rv.problem);
	resolver_free(r);
}

static void test_kernel_no_snapshot(void **state)
{
	struct fx *x = *state;
	struct db_session s;
	struct resolver *r;
	struct resolved rv;

	/* the session has no snapshot */
	session_init(&s, "");
	r = new_resolver(x, &s);
	resolver_lookup(r, x->b_kernel, 0xffffffff81001010ULL, 0, &rv);
	assert_string_equal(rv.binary, "[kernel.kallsyms]");
	assert_string_equal(rv.symbol, "[binary unavailable]");
	assert_non_null(rv.problem);
	assert_non_null(strstr(rv.problem, "no kallsyms snapshot"));
	/* user binaries do not need it */
	resolver_lookup(r, x->b_split, x->w30 + 1, 0, &rv);
	assert_string_equal(rv.symbol, "work30");
	resolver_free(r);

	/* its snapshot is gone from the cache */
	session_init(&s, "kallsyms:ffffffffffffffffffffffffffffffff");
	r = new_resolver(x, &s);
	resolver_lookup(r, x->b_kernel, 0xffffffff81001010ULL, 0, &rv);
	assert_string_equal(rv.symbol, "[binary unavailable]");
	assert_non_null(strstr(rv.problem, "missing"));
	resolver_free(r);

	/* its snapshot is not a kallsyms file */
	session_init(&s, BADKS_KEY);
	r = new_resolver(x, &s);
	resolver_lookup(r, x->b_kernel, 0xffffffff81001010ULL, 0, &rv);
	assert_string_equal(rv.symbol, "[binary unavailable]");
	assert_non_null(strstr(rv.problem, "unreadable"));
	resolver_free(r);

	/* no session at all */
	r = new_resolver(x, NULL);
	resolver_lookup(r, x->b_kernel, 0xffffffff81001010ULL, 0, &rv);
	assert_string_equal(rv.symbol, "[binary unavailable]");
	resolver_free(r);
}

static void test_nofile(void **state)
{
	struct fx *x = *state;
	struct resolver *r = new_resolver(x, &x->s);
	struct resolved rv;

	resolver_lookup(r, x->b_vdso, 0xa10, 0, &rv);
	assert_string_equal(rv.binary, "[vdso]");
	assert_string_equal(rv.key, "[vdso]");
	assert_null(rv.build_id);
	assert_string_equal(rv.symbol, "[unknown]");
	assert_null(rv.problem);

	resolver_lookup(r, x->b_anon, 0x7f0000001000ULL, 0, &rv);
	assert_string_equal(rv.binary, "[anon]");
	assert_null(rv.build_id);
	assert_string_equal(rv.symbol, "[unknown]");
	assert_null(rv.problem);

	/* no binary row: id 0 (NULL in samples) and an id with no row */
	resolver_lookup(r, 0, 0, 0, &rv);
	assert_string_equal(rv.binary, "[unknown]");
	assert_string_equal(rv.key, "[unknown]");
	assert_string_equal(rv.symbol, "[unknown]");
	assert_null(rv.build_id);
	assert_null(rv.problem);
	resolver_lookup(r, 9999, 0x1234, 0, &rv);
	assert_string_equal(rv.binary, "[unknown]");
	assert_string_equal(rv.symbol, "[unknown]");
	assert_null(rv.problem);
	resolver_free(r);
}

/* JIT code: [anon] named per (pid, address) from perf map symbols. */
static void test_jit(void **state)
{
	struct fx *x = *state;
	struct jitmap_sym a[] = {
		{ 0x1000, 0x100, (char *)"outer", 0 }, { 0x1040, 0x10, (char *)"inner", 0 },
	};
	struct jitmap_sym b[] = { { 0x1000, 0x100, (char *)"reused", 0 } };
	struct jitmap m = { a, 2, 0 }, mb = { b, 1, 0 };
	struct db_session other;
	struct resolver *r;
	struct resolved rv;
	struct error e;

	/* a session with no perf map symbols: nothing per pid */
	r = new_resolver(x, &x->s);
	assert_int_equal(resolver_by_pid(r, x->b_anon), 0);
	resolver_lookup_pid(r, x->b_anon, 0x1000, 100, 0, &rv);
	assert_string_equal(rv.symbol, "[unknown]");
	resolver_free(r);

	assert_int_equal(db_jit_symbols_put(x->f.db, x->s.id, 100, 5, &m, &e), 0);
	/* pid 200 was two processes with a map: not named */
	assert_int_equal(db_jit_symbols_put(x->f.db, x->s.id, 200, 5, &mb, &e), 0);
	assert_int_equal(db_jit_symbols_put(x->f.db, x->s.id, 200, 9, &mb, &e), 0);
	r = new_resolver(x, &x->s);
	assert_int_equal(resolver_by_pid(r, x->b_anon), 1);
	assert_int_equal(resolver_by_pid(r, x->b_vdso), 0);
	assert_int_equal(resolver_by_pid(r, x->b_split), 0);
	resolver_lookup_pid(r, x->b_anon, 0x1000, 100, 0, &rv);
	assert_string_equal(rv.binary, "[anon]");
	assert_string_equal(rv.symbol, "outer");
	resolver_lookup_pid(r, x->b_anon, 0x1045, 100, 1, &rv);
	assert_string_equal(rv.symbol, "inner");	/* the later line wins */
	assert_string_equal(rv.source, "");
	resolver_lookup_pid(r, x->b_anon, 0x10ff, 100, 0, &rv);
	assert_string_equal(rv.symbol, "outer");
	resolver_lookup_pid(r, x->b_anon, 0x1100, 100, 0, &rv);
	assert_string_equal(rv.symbol, "[unknown]");
	resolver_lookup_pid(r, x->b_anon, 0xfff, 100, 0, &rv);
	assert_string_equal(rv.symbol, "[unknown]");
	resolver_lookup_pid(r, x->b_anon, 0x1000, 101, 0, &rv);
	assert_string_equal(rv.symbol, "[unknown]");
	resolver_lookup_pid(r, x->b_anon, 0x1000, 200, 0, &rv);
	assert_string_equal(rv.symbol, "[unknown]");
	resolver_lookup_pid(r, x->b_anon, 0x1000, 0, 0, &rv);
	assert_string_equal(rv.symbol, "[unknown]");
	/* the same address of a binary with a file is not per pid */
	resolver_lookup_pid(r, x->b_vdso, 0x1000, 100, 0, &rv);
	assert_string_equal(rv.symbol, "[unknown]");
	resolver_free(r);

	/* another session's symbols are not this one's */
	other = x->s;
	other.id = x->s.id + 1000;
	r = new_resolver(x, &other);
	assert_int_equal(resolver_by_pid(r, x->b_anon), 0);
	resolver_free(r);
	assert_int_equal(sqlite3_exec(db_sqlite(x->f.db), "DELETE FROM jit_symbols", NULL, NULL,
				      NULL), 0);
}

static void test_memo(void **state)
{
	struct fx *x = *state;
	struct resolver *r = new_resolver(x, &x->s);
	struct resolved a, b, k, g;
	char *cached = bincache_path(&x->f.cache, SPLIT_KEY);
	char *hidden = NULL;
	uint64_t i;

	resolver_lookup(r, x->b_split, x->w60 + 4, 1, &a);
	resolver_lookup(r, x->b_kernel, 0xffffffffc0001020ULL, 0, &k);
	resolver_lookup(r, x->b_gone, 4, 0, &g);
	/* the binary was opened once: its cached copy is not read again */
	assert_non_null(cached);
	hidden = xasprintf("%s.hidden", cached);
	assert_int_equal(rename(cached, hidden), 0);

	resolver_lookup(r, x->b_split, x->w60 + 4, 1, &b);
	assert_ptr_equal(a.symbol, b.symbol);		/* remembered, not named again */
	assert_ptr_equal(a.source, b.source);
	assert_ptr_equal(a.binary, b.binary);
	resolver_lookup(r, x->b_split, x->w10 + 1, 0, &b);	/* new offset, same binary */
	assert_string_equal(b.symbol, "work10");

	/* thousands of locations in several binaries (the tables grow):
	 * every answer right, and the first answers' strings still valid */
	for (i = 0; i < 3000; i++) {
		uint64_t off = x->w30 + i % 40;
		struct resolved c;

		resolver_lookup(r, x->b_split, off + (i / 40) * 0x100000, 0, &c);
		assert_string_equal(c.symbol, i < 40 ? "work30" : "[unknown]");
		resolver_lookup(r, x->b_kernel, 0xffffffff81001000ULL + i, 0, &c);
		assert_string_equal(c.symbol, "do_syscall_64");
		resolver_lookup(r, 100000 + (int64_t)i, i, 0, &c);	/* no rows */
		assert_string_equal(c.binary, "[unknown]");
	}
	assert_string_equal(a.symbol, "work60");
	assert_string_equal(a.binary, "/opt/fixture/split603010");
	assert_non_null(strstr(a.source, "split603010.c:"));
	assert_string_equal(k.symbol, "ext4_fn [ext4]");
	assert_string_equal(g.symbol, "[binary unavailable]");
	assert_string_equal(g.problem, "cached copy missing");
	resolver_lookup(r, x->b_split, x->w60 + 4, 1, &b);
	assert_ptr_equal(a.symbol, b.symbol);
	assert_ptr_equal(a.source, b.source);

	assert_int_equal(rename(hidden, cached), 0);
	/* a new resolver sees the cache as it is now */
	resolver_free(r);
	free(hidden);
	free(cached);
}

/* Inline chains (resolver_set_inline): inlinesplit's hot_mix is inlined
 * into outer70 (symtab_inline itself is checked against addr2line in
 * test_inline); named once per location, "" where nothing is inlined. */
static void test_inline(void **state)
{
	struct fx *x = *state;
	struct resolver *r = new_resolver(x, &x->s), *plain = new_resolver(x, &x->s);
	char *cached = bincache_path(&x->f.cache, INL_KEY);
	struct resolved rv, again;
	uint64_t off, hot = 0, own = 0;
	char *hidden;

	resolver_set_inline(r, 1);
	for (off = x->o70; off < x->o70 + x->o70_size; off++) {
		resolver_lookup(r, x->b_inl, off, 0, &rv);
		assert_string_equal(rv.symbol, "outer70");	/* the symbol is the outer one */
		assert_non_null(rv.inlined);
		if (!strcmp(rv.inlined, "outer70 -> hot_mix"))
			hot = hot ? hot : off;
		else if (!strcmp(rv.inlined, ""))
			own = own ? own : off;
		else
			fail_msg("offset %#llx: chain '%s'", (unsigned long long)off, rv.inlined);
	}
	assert_true(hot && own);	/* both kinds of code are in outer70 */

	/* without resolver_set_inline: no chain */
	resolver_lookup(plain, x->b_inl, hot, 1, &rv);
	assert_null(rv.inlined);
	assert_string_equal(rv.symbol, "outer70");
	resolver_free(plain);

	/* remembered per location: the same string, even with the copy gone */
	resolver_lookup(r, x->b_inl, hot, 0, &rv);
	hidden = xasprintf("%s.hidden", cached);
	assert_int_equal(rename(cached, hidden), 0);
	resolver_lookup(r, x->b_inl, hot, 1, &again);
	assert_ptr_equal(rv.inlined, again.inlined);
	assert_string_equal(again.inlined, "outer70 -> hot_mix");
	assert_int_equal(rename(hidden, cached), 0);

	/* nothing to say: no DWARF, the kernel, no file, unavailable */
	resolver_lookup(r, x->b_strip, x->strip_fn + 2, 0, &rv);
	assert_string_equal(rv.inlined, "");
	resolver_lookup(r, x->b_kernel, 0xffffffff81001010ULL, 0, &rv);
	assert_string_equal(rv.inlined, "");
	resolver_lookup(r, x->b_vdso, 0xa10, 0, &rv);
	assert_string_equal(rv.inlined, "");
	resolver_lookup(r, x->b_gone, x->w60 + 4, 0, &rv);
	assert_string_equal(rv.inlined, "");
	resolver_free(r);
	free(hidden);
	free(cached);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_user_symbols),
		cmocka_unit_test(test_source_lines),
		cmocka_unit_test(test_unavailable),
		cmocka_unit_test(test_kernel),
		cmocka_unit_test(test_kernel_no_snapshot),
		cmocka_unit_test(test_nofile),
		cmocka_unit_test(test_jit),
		cmocka_unit_test(test_memo),
		cmocka_unit_test(test_inline),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
