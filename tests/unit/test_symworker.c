/*
 * test_symworker.c - lib/symbols/symworker.c (symchild.c, symserve.c), the symbol worker strobed
 * names code in (strobed --push), and the resolver through it.
 *
 * Covers: (a) the same names through the worker as in this process, for
 * every file offset of the built workload split603010 and of stripped
 * (symtab_lookup against symworker_lookup), and through the resolver
 * (resolver_set_worker, resolver_prefetch) for those and a copy with no
 * symbols or not an ELF file; (b) the worker's rights, as it says them
 * (selftest) and as /proc/PID/status shows them: not root, no groups, no
 * capability, no new privileges (as root only: skipped otherwise);
 * (c) a worker killed while idle is replaced and nothing is lost, one
 * killed during a request costs that binary alone, and the next lookup
 * of another binary works in a new worker; no new worker after
 * max_restarts; (d) a stopped worker is killed after the timeout and the
 * lookup returns in bounded time; (e) under the seccomp filter the worker
 * cannot open /etc/passwd (EPERM; skipped, saying why, when libseccomp
 * was not built in); (f) names of up to SYMWORKER_NAME_MAX bytes come
 * whole (C++ names run to kilobytes), many to a batch, and a longer one
 * is cut there; (g) requests of the caller's own kind
 * (symworker_call, as uworker.h's unwinding): a large request echoed, a
 * descriptor asked by key from the worker and read there, and a worker
 * asking for descriptors without end killed (that request lost, the next
 * served by a new worker); (h) a stripped binary's debug file by
 * build-id: a candidate of another build-id refused, the binary's used,
 * both candidates' build-ids read in the worker (this process parses no
 * ELF file for them: hashkey_build_id_parses()).
 */
#include "config.h"
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "dbfix.h"
#include "hashkey.h"
#include "resolve.h"
#include "sandbox.h"
#include "symtab.h"
#include "symworker.h"

#define SPLIT_KEY "buildid:5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a"
#define STRIP_KEY "xxh3:00112233445566778899aabbccddeeff"
#define JUNK_KEY "buildid:0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b"
#define BARE_KEY "buildid:0c0c0c0c0c0c0c0c0c0c0c0c0c0c0c0c0c0c0c0c"

struct fx {
	struct fixdb f;
	char split[PATH_MAX], strip[PATH_MAX];
	uint64_t w60, w30, w10, size60;
	int64_t b_split, b_strip, b_junk, b_bare, b_missing;
	struct db_session s;
};

static int setup(void **state)
{
	struct fx *x = calloc(1, sizeof(*x));
	struct error e = { "" };
	char cmd[2 * PATH_MAX + 64], bare[PATH_MAX + 16];
	uint64_t sz;

	fix_path(x->split, sizeof(x->split), "split603010", 0);
	fix_path(x->strip, sizeof(x->strip), "stripped", 0);
	assert_int_equal(fix_elf_func(x->split, "work60", &x->w60, &x->size60), 0);
	assert_int_equal(fix_elf_func(x->split, "work30", &x->w30, &sz), 0);
	assert_int_equal(fix_elf_func(x->split, "work10", &x->w10, &sz), 0);
	assert_int_equal(fixdb_open(&x->f, "symworker"), 0);
	assert_int_equal(fixdb_cache_file(&x->f, SPLIT_KEY, x->split), 0);
	assert_int_equal(fixdb_cache_file(&x->f, STRIP_KEY, x->strip), 0);
	assert_int_equal(bincache_store_buf(&x->f.cache, JUNK_KEY, "not an ELF file\n", 16,
					    BINCACHE_SHARED, &e), 0);
	snprintf(bare, sizeof(bare), "%s/bare", x->f.dir);
	snprintf(cmd, sizeof(cmd), "strip --strip-all -o '%s' '%s'", bare, x->split);
	assert_int_equal(system(cmd), 0);
	assert_int_equal(fixdb_cache_file(&x->f, BARE_KEY, bare), 0);
	x->b_split = db_binary_intern(x->f.db, SPLIT_KEY, "/opt/fixture/split603010", 20000, 1,
				      NULL, &e);
	x->b_strip = db_binary_intern(x->f.db, STRIP_KEY, "/opt/fixture/stripped", 16000, 1, NULL,
				      &e);
	x->b_junk = db_binary_intern(x->f.db, JUNK_KEY, "/opt/fixture/junk", 16, 1, NULL, &e);
	x->b_bare = db_binary_intern(x->f.db, BARE_KEY, "/opt/fixture/bare", 16000, 1, NULL, &e);
	x->b_missing = db_binary_intern(x->f.db, "buildid:dead0000dead0000dead0000dead0000",
					"/opt/fixture/gone", 100, 1, NULL, &e);
	assert_true(x->b_split > 0 && x->b_strip > 0 && x->b_junk > 0 && x->b_bare > 0 &&
		    x->b_missing > 0);
	snprintf(x->s.name, sizeof(x->s.name), "symworker");
	snprintf(x->s.state, sizeof(x->s.state), "done");
	snprintf(x->s.backend, sizeof(x->s.backend), "perf");
	snprintf(x->s.sample_event, sizeof(x->s.sample_event), "cpu-clock");
	snprintf(x->s.tsc_source, sizeof(x->s.tsc_source), "none");
	x->s.nr_cpus = 1;
	x->s.start_ns = 1000000000000LL;
	assert_int_equal(db_session_insert(x->f.db, &x->s, &e), 0);
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

static off_t file_size(const char *path)
{
	struct stat sb;

	assert_int_equal(stat(path, &sb), 0);
	return sb.st_size;
}

static int open_ro(const char *path)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	assert_true(fd >= 0);
	return fd;
}

/* Every offset of path named alike here and in w (h open there). */
static void same_names(struct symworker *w, int h, const char *path)
{
	struct error e = { "" };
	struct symtab *st = symtab_open(path, &e);
	size_t n = (size_t)file_size(path), named = 0;
	uint64_t *off = malloc(n * sizeof(*off));
	char **names = calloc(n, sizeof(*names));

	assert_non_null(st);
	for (size_t i = 0; i < n; i++)
		off[i] = i;
	assert_int_equal(symworker_lookup(w, h, off, n, names, &e), 0);
	for (size_t i = 0; i < n; i++) {
		struct symtab_hit hit;
		int rc = symtab_lookup(st, i, 0, &hit);

		if (rc == 0 && hit.name) {
			assert_non_null(names[i]);
			assert_string_equal(names[i], hit.name);
			named++;
		} else {
			assert_null(names[i]);
		}
		free(names[i]);
	}
	assert_true(named > 100);
	symtab_close(st);
	free(names);
	free(off);
}

static struct symworker *worker(unsigned timeout_ms, unsigned restarts)
{
	struct symworker_opts o = { .timeout_ms = timeout_ms, .max_restarts = restarts };
	struct error e = { "" };
	struct symworker *w = symworker_new(&o, &e);

	if (!w)
		fail_msg("symworker_new: %s", e.msg);
	return w;
}

/* (a) the worker names what this process names */
static void test_same_names(void **state)
{
	struct fx *x = *state;
	struct symworker *w = worker(0, 0);
	struct symworker_bin info;
	struct error e = { "" };
	uint64_t off[3] = { x->w60 + 4, x->w30, x->w10 + 1 };
	char *names[3];
	int h;

	h = symworker_open(w, open_ro(x->split), x->split, &info, &e);
	assert_true(h >= 0);
	assert_true(info.nsyms > 3 && info.has_symtab);
	assert_int_equal(symworker_lookup(w, h, off, 3, names, &e), 0);
	assert_string_equal(names[0], "work60");
	assert_string_equal(names[1], "work30");
	assert_string_equal(names[2], "work10");
	for (int i = 0; i < 3; i++)
		free(names[i]);
	same_names(w, h, x->split);
	h = symworker_open(w, open_ro(x->strip), x->strip, &info, &e);
	assert_true(h >= 0);
	assert_false(info.has_symtab);
	same_names(w, h, x->strip);
	/* not an ELF file: refused, the worker lives on */
	assert_true(symworker_open(w, open_ro("/etc/hostname"), "/etc/hostname", &info, &e) < 0);
	assert_non_null(strstr(e.msg, "cannot read symbols"));
	same_names(w, h, x->strip);
	{
		struct symworker_stats st;

		symworker_stats(w, &st);
		assert_int_equal(st.started, 1);
		assert_int_equal(st.crashes + st.timeouts + st.failed, 0);
	}
	symworker_free(w);
}

/* (a) through the resolver: the same answers with and without a worker */
static void test_resolver(void **state)
{
	struct fx *x = *state;
	struct error e = { "" };
	struct symworker *w = worker(0, 0);
	struct resolver *here = resolver_new(x->f.db, &x->s, &e);
	struct resolver *there = resolver_new(x->f.db, &x->s, &e);
	int64_t bins[] = { x->b_split, x->b_strip, x->b_bare, x->b_junk, x->b_missing };
	size_t n = (size_t)file_size(x->split);
	uint64_t *off = malloc(n * sizeof(*off));

	resolver_set_worker(there, w);
	{
		/* the binary alone, first thing a new resolver is asked (push) */
		struct resolved a;

		resolver_binary(there, x->b_split, &a);
		assert_string_equal(a.binary, "/opt/fixture/split603010");
		assert_null(a.problem);
		assert_null(a.symbol);
	}
	for (size_t i = 0; i < n; i++)
		off[i] = i;
	for (size_t b = 0; b < sizeof(bins) / sizeof(*bins); b++) {
		/* half named one by one, all then prefetched */
		for (size_t i = 0; i < n; i += 2) {
			struct resolved a, c;

			resolver_lookup(here, bins[b], off[i], 0, &a);
			resolver_lookup(there, bins[b], off[i], 0, &c);
			assert_string_equal(a.symbol, c.symbol);
			assert_string_equal(a.binary, c.binary);
			assert_int_equal(!a.problem, !c.problem);
			assert_int_equal(a.no_symbols, c.no_symbols);
		}
		resolver_prefetch(there, bins[b], off, n);
		for (size_t i = 0; i < n; i++) {
			struct resolved a, c;

			resolver_lookup(here, bins[b], off[i], 0, &a);
			resolver_lookup(there, bins[b], off[i], 0, &c);
			assert_string_equal(a.symbol, c.symbol);
		}
	}
	{
		struct resolved a;

		resolver_lookup(there, x->b_split, x->w60 + 4, 1, &a);
		assert_string_equal(a.symbol, "work60");
		assert_string_equal(a.source, "");	/* lines are not read there */
		resolver_binary(there, x->b_junk, &a);
		assert_non_null(a.problem);
		assert_null(a.symbol);
	}
	resolver_free(here);
	resolver_free(there);
	symworker_free(w);
	free(off);
}

/*
 * (h) a stripped binary's debug file found by build-id in worker mode:
 * two roots, the first with a candidate of another build-id (this test
 * program), the second with the binary's own (objcopy --only-keep-debug).
 * Through the worker the first is refused and the second used, the names
 * those of the in-process resolver; and this process parsed no ELF file
 * for it (hashkey_build_id_parses() unchanged: the candidates' build-ids
 * were read in the worker, the cached binary's key never recomputed),
 * where the in-process resolver parses both candidates.
 */
static void test_debug_by_build_id(void **state)
{
	struct fx *x = *state;
	struct error e = { "" };
	char cmd[8 * PATH_MAX], key[HASHKEY_MAX + 2 * BUILD_ID_MAX], hex[2 * BUILD_ID_MAX + 1];
	char roots[2 * PATH_MAX];
	char bin[PATH_MAX + 16], bad[PATH_MAX + 200], good[PATH_MAX + 200];
	uint8_t id[BUILD_ID_MAX];
	struct symworker *w = worker(0, 0);
	struct resolver *here, *there;
	struct resolved a, c;
	unsigned long p0, p1, p2;
	size_t n;
	int64_t b;
	int fd, len;

	fd = open_ro(x->split);
	len = hashkey_build_id_fd(fd, id, sizeof(id), &e);
	close(fd);
	if (len <= 0)
		fail_msg("split603010 has no build-id");
	for (int i = 0; i < len; i++)
		snprintf(hex + 2 * i, 3, "%02x", id[i]);
	snprintf(key, sizeof(key), "buildid:%s", hex);
	snprintf(bin, sizeof(bin), "%s/split-stripped", x->f.dir);
	snprintf(bad, sizeof(bad), "%s/r1/.build-id/%.2s/%s.debug", x->f.dir, hex, hex + 2);
	snprintf(good, sizeof(good), "%s/r2/.build-id/%.2s/%s.debug", x->f.dir, hex, hex + 2);
	snprintf(cmd, sizeof(cmd),
		 "mkdir -p \"$(dirname '%s')\" \"$(dirname '%s')\" && cp /proc/%d/exe '%s' && "
		 "objcopy --only-keep-debug '%s' '%s' && strip --strip-all -o '%s' '%s'",
		 bad, good, (int)getpid(), bad, x->split, good, bin, x->split);
	assert_int_equal(system(cmd), 0);
	assert_int_equal(fixdb_cache_file(&x->f, key, bin), 0);
	b = db_binary_intern(x->f.db, key, "/opt/fixture/split-stripped", 20000, 1, NULL, &e);
	assert_true(b > 0);
	snprintf(roots, sizeof(roots), "%s/r1:%s/r2", x->f.dir, x->f.dir);
	setenv("STROBE_DEBUG_DIRS", roots, 1);
	here = resolver_new(x->f.db, &x->s, &e);
	there = resolver_new(x->f.db, &x->s, &e);
	unsetenv("STROBE_DEBUG_DIRS");
	resolver_set_worker(there, w);

	p0 = hashkey_build_id_parses();
	resolver_lookup(there, b, x->w60 + 4, 0, &c);
	p1 = hashkey_build_id_parses();
	resolver_lookup(here, b, x->w60 + 4, 0, &a);
	p2 = hashkey_build_id_parses();
	printf("ELF parses for a build-id in this process: %lu in worker mode, %lu in process\n",
	       p1 - p0, p2 - p1);
	assert_int_equal(p1 - p0, 0);
	assert_true(p2 - p1 >= 2);	/* both candidates, here */
	assert_string_equal(c.symbol, "work60");
	assert_string_equal(a.symbol, "work60");
	assert_non_null(c.debug);
	assert_string_equal(c.debug, good);
	assert_string_equal(a.debug, good);
	assert_non_null(c.debug_note);
	assert_non_null(strstr(c.debug_note, bad));
	assert_non_null(strstr(c.debug_note, "its build-id is not the binary's"));
	assert_non_null(a.debug_note);
	assert_string_equal(a.debug_note, c.debug_note);
	/* every offset named alike */
	n = (size_t)file_size(bin);
	for (size_t i = 0; i < n; i += 3) {
		resolver_lookup(here, b, i, 0, &a);
		resolver_lookup(there, b, i, 0, &c);
		assert_string_equal(a.symbol, c.symbol);
	}
	assert_int_equal(hashkey_build_id_parses(), p2);
	/* symworker_build_id itself: the bytes hashkey_build_id_fd reads,
	 * none for a file that is not ELF, and a worker that hangs on it
	 * costs that call only (-1, killed; the next one in a new worker) */
	{
		struct symworker *h = worker(300, 0);
		struct symworker_stats ws;
		uint8_t got[BUILD_ID_MAX];

		fd = open_ro(x->split);
		assert_int_equal(symworker_build_id(h, fd, got, sizeof(got), &e), len);
		assert_memory_equal(got, id, (size_t)len);
		kill(symworker_pid(h), SIGSTOP);
		assert_int_equal(symworker_build_id(h, fd, got, sizeof(got), &e), -1);
		assert_non_null(strstr(e.msg, "did not answer"));
		assert_int_equal(symworker_build_id(h, fd, got, sizeof(got), &e), len);
		close(fd);
		fd = open_ro("/etc/hostname");
		assert_int_equal(symworker_build_id(h, fd, got, sizeof(got), &e), 0);
		close(fd);
		symworker_stats(h, &ws);
		assert_int_equal(ws.timeouts, 1);
		assert_int_equal(ws.failed, 0);		/* no binary blamed */
		symworker_free(h);
	}
	resolver_free(here);
	resolver_free(there);
	symworker_free(w);
}

/* The "Name:" line of /proc/PID/status, its value; "" when missing. */
static void status_field(pid_t pid, const char *name, char *out, size_t len)
{
	char path[64], line[512];
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	f = fopen(path, "r");
	*out = 0;
	while (f && fgets(line, sizeof(line), f))
		if (!strncmp(line, name, strlen(name)) && line[strlen(name)] == ':') {
			char *v = line + strlen(name) + 1;

			v += strspn(v, " \t");
			v[strcspn(v, "\n")] = 0;
			snprintf(out, len, "%s", v);
		}
	if (f)
		fclose(f);
}

/* (b) not root, no groups, no capabilities */
static void test_no_rights(void **state)
{
	struct symworker *w;
	struct symworker_self me;
	struct error e = { "" };
	char v[256];
	unsigned u[4];
	pid_t pid;

	(void)state;
	if (geteuid() != 0) {
		print_message("the worker changes ids only when started as root\n");
		skip();
	}
	w = worker(0, 0);
	assert_int_equal(symworker_selftest(w, &me, &e), 0);
	assert_true(me.uid != 0 && me.euid != 0 && me.gid != 0 && me.egid != 0);
	assert_int_equal(me.ngroups, 0);
	assert_true(me.cap_eff == 0 && me.cap_prm == 0 && me.cap_inh == 0);
	pid = symworker_pid(w);
	assert_true(pid > 0);
	status_field(pid, "Uid", v, sizeof(v));
	assert_int_equal(sscanf(v, "%u %u %u %u", &u[0], &u[1], &u[2], &u[3]), 4);
	assert_true(u[0] && u[1] && u[2] && u[3]);
	status_field(pid, "Gid", v, sizeof(v));
	assert_int_equal(sscanf(v, "%u %u %u %u", &u[0], &u[1], &u[2], &u[3]), 4);
	assert_true(u[0] && u[1] && u[2] && u[3]);
	status_field(pid, "Groups", v, sizeof(v));
	assert_string_equal(v, "");
	status_field(pid, "CapEff", v, sizeof(v));
	assert_string_equal(v, "0000000000000000");
	status_field(pid, "CapPrm", v, sizeof(v));
	assert_string_equal(v, "0000000000000000");
	status_field(pid, "CapBnd", v, sizeof(v));
	assert_string_equal(v, "0000000000000000");
	status_field(pid, "CapAmb", v, sizeof(v));
	assert_string_equal(v, "0000000000000000");
	status_field(pid, "NoNewPrivs", v, sizeof(v));
	assert_string_equal(v, "1");
	symworker_free(w);
}

/* Wait until pid has died (a zombie nobody reaped yet). */
static void wait_dead(pid_t pid)
{
	char v[64];

	for (int i = 0; i < 500; i++) {
		status_field(pid, "State", v, sizeof(v));
		if (v[0] == 'Z' || !v[0])
			return;
		usleep(10000);
	}
	fail_msg("worker %d did not die", (int)pid);
}

static int64_t ms_now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (int64_t)t.tv_sec * 1000 + t.tv_nsec / 1000000;
}

static void assert_names_work60(struct symworker *w, int h, uint64_t off)
{
	struct error e = { "" };
	char *name;

	if (symworker_lookup(w, h, &off, 1, &name, &e) < 0)
		fail_msg("lookup: %s", e.msg);
	assert_string_equal(name, "work60");
	free(name);
}

/* (c) a crash costs one binary's names; the next lookup works */
static void test_crash(void **state)
{
	struct fx *x = *state;
	struct symworker *w = worker(5000, 3);
	struct symworker_bin info;
	struct symworker_stats st;
	struct error e = { "" };
	uint64_t off = x->w60;
	pid_t pid, helper;
	char *name;
	int h1, h2;

	h1 = symworker_open(w, open_ro(x->split), "first", &info, &e);
	h2 = symworker_open(w, open_ro(x->split), "second", &info, &e);
	assert_true(h1 >= 0 && h2 >= 0);
	/* killed while idle: nobody is blamed, both reopened in a new one */
	pid = symworker_pid(w);
	kill(pid, SIGSEGV);
	wait_dead(pid);
	assert_names_work60(w, h1, off);
	assert_true(symworker_pid(w) != pid);
	symworker_stats(w, &st);
	assert_int_equal(st.started, 2);
	assert_int_equal(st.crashes, 1);
	assert_int_equal(st.failed, 0);
	/* killed during a request on h1: h1 fails, h2 goes on */
	pid = symworker_pid(w);
	assert_int_equal(kill(pid, SIGSTOP), 0);
	helper = fork();
	assert_true(helper >= 0);
	if (helper == 0) {
		usleep(300000);
		kill(pid, SIGSEGV);
		kill(pid, SIGCONT);
		_exit(0);
	}
	assert_int_equal(symworker_lookup(w, h1, &off, 1, &name, &e), -1);
	assert_null(name);
	assert_non_null(strstr(e.msg, "first"));
	assert_non_null(strstr(e.msg, "crashed"));
	waitpid(helper, NULL, 0);
	assert_names_work60(w, h2, off);
	assert_int_equal(symworker_lookup(w, h1, &off, 1, &name, &e), -1);	/* at once */
	symworker_stats(w, &st);
	assert_int_equal(st.started, 3);
	assert_int_equal(st.crashes, 2);
	assert_int_equal(st.failed, 1);
	assert_string_equal(st.failed_names, "first");
	/* a fourth start is allowed (3 restarts), a fifth not */
	pid = symworker_pid(w);
	kill(pid, SIGKILL);
	wait_dead(pid);
	assert_names_work60(w, h2, off);
	pid = symworker_pid(w);
	kill(pid, SIGKILL);
	wait_dead(pid);
	assert_int_equal(symworker_lookup(w, h2, &off, 1, &name, &e), -1);
	assert_non_null(strstr(e.msg, "no symbol worker"));
	symworker_free(w);
}

/* (d) a worker that hangs is killed after the timeout */
static void test_hang(void **state)
{
	struct fx *x = *state;
	struct symworker *w = worker(1000, 0);
	struct symworker_bin info;
	struct symworker_stats st;
	struct error e = { "" };
	uint64_t off = x->w60;
	int64_t t0, took;
	pid_t pid;
	char *name;
	int h1, h2;

	h1 = symworker_open(w, open_ro(x->split), "hung-on", &info, &e);
	h2 = symworker_open(w, open_ro(x->split), "other", &info, &e);
	assert_true(h1 >= 0 && h2 >= 0);
	pid = symworker_pid(w);
	assert_int_equal(kill(pid, SIGSTOP), 0);
	t0 = ms_now();
	assert_int_equal(symworker_lookup(w, h1, &off, 1, &name, &e), -1);
	took = ms_now() - t0;
	assert_true(took >= 900 && took < 5000);
	assert_non_null(strstr(e.msg, "hung"));
	assert_int_equal(kill(pid, 0), -1);	/* killed and reaped */
	assert_int_equal(errno, ESRCH);
	symworker_stats(w, &st);
	assert_int_equal(st.timeouts, 1);
	assert_int_equal(st.failed, 1);
	assert_names_work60(w, h2, off);
	symworker_free(w);
}

/* (e) the seccomp filter: no path can be opened */
static void test_seccomp(void **state)
{
	struct symworker *w;
	struct symworker_self me;
	struct error e = { "" };
	char v[64];

	(void)state;
	if (!sandbox_seccomp_built()) {
		print_message("libseccomp was not built in (configure found no libseccomp-dev): "
			      "the worker has no seccomp filter\n");
		skip();
	}
	w = worker(0, 0);
	assert_int_equal(symworker_selftest(w, &me, &e), 0);
	assert_int_equal(me.seccomp, 1);
	assert_int_equal(me.open_errno, EPERM);
	status_field(symworker_pid(w), "Seccomp", v, sizeof(v));
	assert_string_equal(v, "2");
	symworker_free(w);
}

/* (f) long names: 40 functions with names of 20,000 to 59,000 bytes (a
 * few to a reply) and one of 70,000 (cut at SYMWORKER_NAME_MAX) */
#define LONG_FUNCS 41
static size_t long_len(int i)
{
	return i == LONG_FUNCS - 1 ? 70000 : 20000 + (size_t)i * 1000;
}

static char *long_name(int i)
{
	size_t n = long_len(i);
	char *s = malloc(n + 1);

	for (size_t k = 0; k < n; k++)
		s[k] = (char)('a' + (i + k) % 26);
	s[0] = 'L';
	s[n] = 0;
	return s;
}

static void test_long_names(void **state)
{
	struct fx *x = *state;
	char src[PATH_MAX], so[PATH_MAX], cmd[3 * PATH_MAX];
	uint64_t off[LONG_FUNCS], sz;
	char *names[LONG_FUNCS];
	struct symworker *w;
	struct symworker_bin info;
	struct error e = { "" };
	FILE *f;
	int h;

	snprintf(src, sizeof(src), "%s/long.c", x->f.dir);
	snprintf(so, sizeof(so), "%s/long.so", x->f.dir);
	f = fopen(src, "w");
	assert_non_null(f);
	for (int i = 0; i < LONG_FUNCS; i++) {
		char *n = long_name(i);

		fprintf(f, "int f%d(int a) __asm__(\"%s\");\nint f%d(int a) { return a * %d; }\n",
			i, n, i, i + 3);
		free(n);
	}
	assert_int_equal(fclose(f), 0);
	snprintf(cmd, sizeof(cmd), "cc -O1 -shared -fPIC -o '%s' '%s'", so, src);
	assert_int_equal(system(cmd), 0);
	for (int i = 0; i < LONG_FUNCS; i++) {
		char *n = long_name(i);

		assert_int_equal(fix_elf_func(so, n, &off[i], &sz), 0);
		free(n);
	}
	w = worker(0, 0);
	h = symworker_open(w, open_ro(so), so, &info, &e);
	assert_true(h >= 0);
	assert_int_equal(symworker_lookup(w, h, off, LONG_FUNCS, names, &e), 0);
	for (int i = 0; i < LONG_FUNCS; i++) {
		char *n = long_name(i);

		assert_non_null(names[i]);
		if (i == LONG_FUNCS - 1)	/* the others come whole */
			n[SYMWORKER_NAME_MAX] = 0;
		assert_int_equal(strlen(names[i]), strlen(n));
		assert_string_equal(names[i], n);
		free(n);
		free(names[i]);
	}
	{
		struct symworker_stats st;

		symworker_stats(w, &st);
		assert_int_equal(st.crashes + st.timeouts + st.failed, 0);
	}
	symworker_free(w);
}

/* (g): cmd 0 echoes the request; 1 reads 4 bytes of the descriptor of
 * key; 2 asks for descriptors without end */
struct ext_req {
	uint32_t cmd, pad;
	uint64_t key;
	unsigned char fill[100000];
};

static size_t ext_serve(void **state, const void *req, size_t len, void *out, size_t cap)
{
	struct ext_req q;
	int fd;

	(void)state;
	if (len < 16 || len > sizeof(q) || cap < len)
		return 0;
	memcpy(&q, req, len);
	if (q.cmd == 0) {
		memcpy(out, req, len);
		return len;
	}
	if (q.cmd == 2)
		for (;;)
			if ((fd = symworker_ext_fd(q.key)) >= 0)
				close(fd);
	fd = symworker_ext_fd(q.key);
	if (fd < 0 || pread(fd, out, 4, 0) != 4)
		return 0;
	close(fd);
	return 4;
}

static const struct symworker_ext ext = { .serve = ext_serve };
static int ext_keys;

static int ext_fd(void *ctx, uint64_t key)
{
	ext_keys++;
	assert_int_equal(key, 0x1234);
	return open((const char *)ctx, O_RDONLY | O_CLOEXEC);
}

static void test_ext(void **state)
{
	struct symworker_opts o = { .ext = &ext, .timeout_ms = 5000, .comm = "strobe-test" };
	static struct ext_req q, back;
	struct symworker_stats st;
	struct symworker *w;
	struct error e;
	char path[4096];
	ssize_t n;

	(void)state;
	w = symworker_new(&o, &e);
	assert_non_null(w);
	memset(&q, 0x5a, sizeof(q));
	q.cmd = 0;
	n = symworker_call(w, &q, sizeof(q), &back, sizeof(back), ext_fd, NULL, &e);
	assert_int_equal(n, sizeof(q));
	assert_memory_equal(&q, &back, sizeof(q));

	fix_path(path, sizeof(path), "split603010", 0);
	q.cmd = 1;
	q.key = 0x1234;
	n = symworker_call(w, &q, 16, &back, sizeof(back), ext_fd, path, &e);
	assert_int_equal(n, 4);
	assert_memory_equal(&back, "\177ELF", 4);
	assert_int_equal(ext_keys, 1);

	q.cmd = 2;
	n = symworker_call(w, &q, 16, &back, sizeof(back), ext_fd, path, &e);
	assert_int_equal(n, -1);
	assert_int_equal(ext_keys, 1 + SYMWORKER_EXT_FDS);
	symworker_stats(w, &st);
	assert_int_equal(st.crashes, 1);

	q.cmd = 0;
	n = symworker_call(w, &q, sizeof(q), &back, sizeof(back), ext_fd, NULL, &e);
	assert_int_equal(n, sizeof(q));
	symworker_stats(w, &st);
	assert_int_equal(st.started, 2);
	symworker_free(w);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_same_names),
		cmocka_unit_test(test_resolver),
		cmocka_unit_test(test_debug_by_build_id),
		cmocka_unit_test(test_no_rights),
		cmocka_unit_test(test_crash),
		cmocka_unit_test(test_hang),
		cmocka_unit_test(test_seccomp),
		cmocka_unit_test(test_long_names),
		cmocka_unit_test(test_ext),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
