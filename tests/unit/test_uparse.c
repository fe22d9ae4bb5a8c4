/*
 * test_uparse.c - lib/ingest/uparse.c: the checks strobed makes of the
 * ingest worker's answers (a build-id; JIT symbols in chunks), each bad
 * answer refused with the map left as it was; then the round trips
 * through a real worker: a build-id as hashkey_build_id_fd() reads it in
 * process, a perf map of 3,000 lines (several chunks) as jitmap_parse()
 * parses it, a refused jitdump header; a SIGSTOPped worker costs the
 * request in flight only (-2, the next one served by a new worker), and
 * hashkey_file_by() keys such a binary by its contents.
 */
#include "config.h"
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "uparse.h"
#include "uworker.h"

/* --- hand-made answers --- */

static size_t rep_bid(unsigned char *b, int32_t rc, size_t nbytes)
{
	struct uparse_rep r;

	memset(&r, 0, sizeof(r));
	r.rc = rc;
	memcpy(b, &r, sizeof(r));
	for (size_t i = 0; i < nbytes; i++)
		b[sizeof(r) + i] = (unsigned char)(0xa0 + i);
	return sizeof(r) + nbytes;
}

static void test_build_id_checks(void **st)
{
	unsigned char b[512];
	uint8_t id[BUILD_ID_MAX];
	size_t n;

	(void)st;
	n = rep_bid(b, 20, 20);
	assert_int_equal(uparse_check_build_id(b, n, sizeof(id), id), 20);
	assert_int_equal(id[0], 0xa0);
	assert_int_equal(id[19], 0xa0 + 19);
	n = rep_bid(b, 0, 0);
	assert_int_equal(uparse_check_build_id(b, n, sizeof(id), id), 0);
	n = rep_bid(b, 20, 21);			/* a byte too many */
	assert_int_equal(uparse_check_build_id(b, n, sizeof(id), id), -1);
	n = rep_bid(b, 20, 19);			/* a byte short */
	assert_int_equal(uparse_check_build_id(b, n, sizeof(id), id), -1);
	n = rep_bid(b, 65, 65);			/* longer than any build-id */
	assert_int_equal(uparse_check_build_id(b, n, sizeof(id), id), -1);
	n = rep_bid(b, 20, 20);			/* more than the caller holds */
	assert_int_equal(uparse_check_build_id(b, n, 8, id), -1);
	n = rep_bid(b, -7, 0);
	assert_int_equal(uparse_check_build_id(b, n, sizeof(id), id), -1);
	assert_int_equal(uparse_check_build_id(b, sizeof(struct uparse_rep) - 1, sizeof(id), id), -1);
}

struct jrep {
	unsigned char b[8192];
	size_t n;
	struct uparse_rep r;
};

static void jrep_start(struct jrep *j, uint64_t total)
{
	memset(j, 0, sizeof(*j));
	j->r.total = total;
	j->n = sizeof(j->r);
}

static void jrep_sym(struct jrep *j, uint64_t start, uint64_t size, const char *name, size_t nl)
{
	struct uparse_sym s = { .start = start, .size = size, .load_ns = 7, .name_len = (uint32_t)nl };

	memcpy(j->b + j->n, &s, sizeof(s));
	memcpy(j->b + j->n + sizeof(s), name, nl);
	j->n += sizeof(s) + nl;
	j->r.nr++;
}

static size_t jrep_end(struct jrep *j)
{
	memcpy(j->b, &j->r, sizeof(j->r));
	return j->n;
}

/* The answer with one change is refused and m keeps its one symbol. */
static void refused(struct jrep *j, uint64_t from, uint64_t total, struct jitmap *m)
{
	size_t before = m->nr;

	assert_int_equal(uparse_check_jit(j->b, jrep_end(j), from, total, m), -1);
	assert_int_equal(m->nr, before);
}

static void test_jit_checks(void **st)
{
	struct jitmap m = { 0 };
	struct jrep j;
	char big[JITMAP_NAME_MAX + 1];

	(void)st;
	/* a good first chunk of 1 of 3, then a good second of 2 */
	jrep_start(&j, 3);
	jrep_sym(&j, 0x1000, 0x10, "alpha", 5);
	assert_int_equal(uparse_check_jit(j.b, jrep_end(&j), 0, (uint64_t)-1, &m), 0);
	assert_int_equal(m.nr, 1);
	assert_string_equal(m.syms[0].name, "alpha");
	assert_int_equal(m.syms[0].load_ns, 7);

	jrep_start(&j, 3);			/* total changed between chunks */
	jrep_sym(&j, 0x2000, 0x10, "b", 1);
	j.r.total = 4;
	refused(&j, 1, 3, &m);
	jrep_start(&j, 3);			/* a NUL inside a name */
	jrep_sym(&j, 0x2000, 0x10, "b\0c", 3);
	refused(&j, 1, 3, &m);
	jrep_start(&j, 3);			/* a control byte */
	jrep_sym(&j, 0x2000, 0x10, "b\nc", 3);
	refused(&j, 1, 3, &m);
	jrep_start(&j, 3);			/* a name too long */
	memset(big, 'x', sizeof(big));
	jrep_sym(&j, 0x2000, 0x10, big, sizeof(big));
	refused(&j, 1, 3, &m);
	jrep_start(&j, 3);			/* a size too large */
	jrep_sym(&j, 0x2000, JITMAP_SIZE_MAX + 1, "b", 1);
	refused(&j, 1, 3, &m);
	jrep_start(&j, 3);			/* a range that wraps */
	jrep_sym(&j, UINT64_MAX - 4, 0x10, "b", 1);
	refused(&j, 1, 3, &m);
	jrep_start(&j, 3);			/* more than are left */
	jrep_sym(&j, 0x2000, 1, "b", 1);
	jrep_sym(&j, 0x3000, 1, "c", 1);
	jrep_sym(&j, 0x4000, 1, "d", 1);
	refused(&j, 1, 3, &m);
	jrep_start(&j, 3);			/* none while some are left */
	refused(&j, 1, 3, &m);
	jrep_start(&j, 3);			/* a name cut by the answer's end */
	jrep_sym(&j, 0x2000, 1, "bcd", 3);
	j.n -= 1;
	refused(&j, 1, 3, &m);
	jrep_start(&j, 3);			/* bytes after the last symbol */
	jrep_sym(&j, 0x2000, 1, "b", 1);
	j.n += 3;
	refused(&j, 1, 3, &m);
	jrep_start(&j, 3);			/* not where strobed is */
	jrep_sym(&j, 0x2000, 1, "b", 1);
	refused(&j, 2, 3, &m);
	jrep_start(&j, 3);			/* a message without its NUL */
	jrep_sym(&j, 0x2000, 1, "b", 1);
	memset(j.r.msg, 'm', sizeof(j.r.msg));
	refused(&j, 1, 3, &m);
	jrep_start(&j, 3);			/* a refusal with symbols */
	jrep_sym(&j, 0x2000, 1, "b", 1);
	j.r.rc = -1;
	refused(&j, 1, 3, &m);

	jrep_start(&j, 3);
	jrep_sym(&j, 0x2000, 1, "b", 1);
	jrep_sym(&j, 0x3000, 2, "", 0);
	j.r.dropped = 5;
	assert_int_equal(uparse_check_jit(j.b, jrep_end(&j), 1, 3, &m), 0);
	assert_int_equal(m.nr, 3);
	assert_string_equal(m.syms[2].name, "");
	assert_int_equal(m.dropped, 5);
	jitmap_free(&m);

	memset(&m, 0, sizeof(m));		/* more symbols than any file holds */
	jrep_start(&j, JITMAP_SYMS_MAX + 1);
	jrep_sym(&j, 0x2000, 1, "b", 1);
	refused(&j, 0, (uint64_t)-1, &m);
	jitmap_free(&m);
}

/* --- through a real worker --- */

static int no_binary(void *ctx, int64_t id)
{
	(void)ctx;
	(void)id;
	return -1;
}

static void test_worker(void **st)
{
	struct unwind_ops ops = { .open_binary = no_binary };
	uint8_t a[BUILD_ID_MAX], b[BUILD_ID_MAX];
	struct jitmap m, ref;
	struct jitdump_info info;
	struct uworker *u;
	struct error e;
	char *buf;
	size_t len = 0;
	int fd, na, nb;

	(void)st;
	u = uworker_new(&ops, &e);
	assert_non_null(u);

	fd = open("/proc/self/exe", O_RDONLY | O_CLOEXEC);
	assert_true(fd >= 0);
	na = hashkey_build_id_fd(fd, a, sizeof(a), &e);
	nb = uparse_build_id(u, fd, b, sizeof(b), &e);
	assert_int_equal(na, nb);
	assert_memory_equal(a, b, (size_t)MAX(na, 0));
	close(fd);

	buf = xmalloc(3000 * 80);
	for (int i = 0; i < 3000; i++)
		len += (size_t)sprintf(buf + len, "%x %x js:fn_%d_%0*d\n", 0x10000 + 0x100 * i,
				       0x80, i, 40, i);
	len += (size_t)sprintf(buf + len, "zz bad line\n");
	jitmap_parse(buf, len, &ref);
	assert_int_equal(uparse_jit(u, UPARSE_JITMAP, buf, len, 1, 0, &m, NULL, &e), 0);
	assert_int_equal(m.nr, ref.nr);
	assert_int_equal(m.nr, 3000);
	assert_int_equal(m.dropped, ref.dropped);
	for (size_t i = 0; i < m.nr; i++) {
		assert_int_equal(m.syms[i].start, ref.syms[i].start);
		assert_int_equal(m.syms[i].size, ref.syms[i].size);
		assert_string_equal(m.syms[i].name, ref.syms[i].name);
	}
	jitmap_free(&m);
	jitmap_free(&ref);

	/* not a jitdump: refused as jitdump_parse() refuses it */
	assert_int_equal(uparse_jit(u, UPARSE_JITDUMP, buf, len, 1, 0, &m, &info, &e), -1);
	assert_int_equal(m.nr, 0);
	assert_non_null(strstr(e.msg, "jitdump"));
	jitmap_free(&m);
	free(buf);
	uworker_free(u);
}

static int no_id(void *ctx, int fd, uint8_t *id, size_t cap, struct error *e)
{
	(void)ctx, (void)fd, (void)id, (void)cap;
	error_set(e, "the worker hung");
	return -2;
}

/* A hung worker costs the file in flight (-2: the binary then keyed by
 * its contents), the next request has a new worker. */
static void test_worker_hang(void **st)
{
	struct unwind_ops ops = { .open_binary = no_binary };
	uint8_t a[BUILD_ID_MAX], b[BUILD_ID_MAX];
	char key[HASHKEY_MAX];
	struct symworker_stats ws;
	struct jitmap m;
	struct uworker *u;
	struct error e;
	pid_t w;
	int fd, na;

	(void)st;
	u = uworker_new(&ops, &e);
	assert_non_null(u);
	fd = open("/proc/self/exe", O_RDONLY | O_CLOEXEC);
	assert_true(fd >= 0);
	na = hashkey_build_id_fd(fd, a, sizeof(a), &e);
	assert_int_equal(uparse_build_id(u, fd, b, sizeof(b), &e), na);
	w = uworker_pid(u);
	assert_true(w > 0);
	kill(w, SIGSTOP);
	assert_int_equal(uparse_build_id(u, fd, b, sizeof(b), &e), -2);
	assert_int_equal(uparse_jit(u, UPARSE_JITMAP, "1000 10 f\n", 10, 1, 0, &m, NULL, &e), 0);
	assert_int_equal(m.nr, 1);
	jitmap_free(&m);
	assert_int_equal(uparse_build_id(u, fd, b, sizeof(b), &e), na);
	assert_true(uworker_pid(u) != w);
	uworker_stats(u, &ws);
	assert_int_equal(ws.timeouts, 1);
	assert_int_equal(ws.started, 2);

	/* what hashkey_file_by() makes of it: the contents' key */
	assert_int_equal(hashkey_file_by(NULL, fd, key, no_id, NULL, &e), 0);
	assert_memory_equal(key, "xxh3:", 5);
	close(fd);
	uworker_free(u);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_build_id_checks),
		cmocka_unit_test(test_jit_checks),
		cmocka_unit_test(test_worker),
		cmocka_unit_test(test_worker_hang),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
