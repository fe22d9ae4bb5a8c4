/*
 * test_markerparse.c - daemon/markerparse.c: a --marker file's USDT notes
 * read in a child without rights, and the checks strobed makes of what
 * that child answers.
 *
 * The child is the one marker_sites() forks; a pthread_atfork() handler
 * of this test (no hook in strobed's code) makes it crash, hang or answer
 * a forged reply before it runs the reader, as a reader taken over by a
 * crafted file could.  Each costs that call one line of error, returns
 * within the deadline and leaves no child behind.  The fixture is
 * tests/workloads/tlbwalk (probe tlbwalk:size, three arguments;
 * STROBE_BUILD, else found from this program's path).
 */
#include "config.h"
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include "markerparse.h"

static char prog[PATH_MAX], bad[64];

/* What the forked reader does before its own code (the atfork handler). */
static enum { CHILD_REAL, CHILD_CRASH, CHILD_HANG, CHILD_FORGE } child_mode;

/* markerparse.c's answer, as a reader would write it (struct mreply) */
struct forged_reply {
	int32_t status;
	uint32_t n;
	char key[HASHKEY_MAX];
	char err[sizeof(((struct error *)0)->msg)];
};

/* The reader's socket is one of its two socketpair ends (the other is the
 * parent's, whose queue nobody reads): send the forged answer on each. */
static void forge_answer(void)
{
	struct forged_reply r;
	struct usdt_site s;

	memset(&r, 0, sizeof(r));
	memset(&s, 0, sizeof(s));
	r.n = 1;
	snprintf(r.key, sizeof(r.key), "buildid:00");
	snprintf(s.provider, sizeof(s.provider), "tlbwalk");
	snprintf(s.name, sizeof(s.name), "size");
	s.offset = 1ULL << 40;		/* far past the file's end */
	for (int fd = 3; fd < 64; fd++) {
		struct stat st;

		if (fstat(fd, &st) < 0 || !S_ISSOCK(st.st_mode))
			continue;
		if (send(fd, &r, sizeof(r), MSG_NOSIGNAL) == (ssize_t)sizeof(r))
			send(fd, &s, sizeof(s), MSG_NOSIGNAL);
	}
}

static void in_child(void)
{
	switch (child_mode) {
	case CHILD_REAL:
		return;
	case CHILD_CRASH:
		signal(SIGSEGV, SIG_DFL);
		raise(SIGSEGV);
		break;
	case CHILD_HANG:
		for (;;)
			pause();
	case CHILD_FORGE:
		/* then stay, as a taken-over reader may: strobed's request
		 * still finds its end open, and strobed kills it */
		forge_answer();
		for (;;)
			pause();
	}
	_exit(0);
}

/* The parent's side of the fork: when set, it waits long enough for a
 * crashing reader to be gone before it sends the request (the race seen
 * in CI: the send fails instead of the read). */
static int parent_waits;

static void in_parent(void)
{
	if (parent_waits)
		usleep(300000);
}

static struct peer me(void)
{
	struct peer p;

	memset(&p, 0, sizeof(p));
	p.uid = getuid();	/* root: the reader becomes nobody */
	p.gid = getgid();
	return p;
}

static uint64_t ms_from_now(int ms)
{
	return clock_monotonic_ns() + (uint64_t)ms * 1000000ULL;
}

/* marker_sites() on path, as this process's user; its return value. */
static int read_sites(const char *path, const char *provider, const char *name, int ms,
		      struct usdt_site **s, size_t *n, char key[HASHKEY_MAX], struct error *e)
{
	struct peer p = me();
	int fd = open(path, O_RDONLY | O_CLOEXEC), r;

	assert_true(fd >= 0);
	r = marker_sites(&p, fd, path, provider, name, ms_from_now(ms), s, n, key, e);
	close(fd);
	return r;
}

static void assert_no_child_left(void)
{
	assert_int_equal(waitpid(-1, NULL, WNOHANG), -1);
	assert_int_equal(errno, ECHILD);
}

/* The reader drops from root to the requester (setgroups needs root):
 * strobed's case.  Run as another user, it cannot start. */
static void need_root(void)
{
	if (geteuid() != 0) {
		fprintf(stderr, "skipped: the reader drops from root, as in strobed\n");
		skip();
	}
}

static void assert_one_line(const struct error *e)
{
	assert_true(e->msg[0] != 0);
	assert_null(strchr(e->msg, '\n'));
}

/* The reader's sites are the ones the parser finds in-process. */
static void test_real(void **state)
{
	struct usdt_site *s = NULL, *want = NULL;
	size_t n = 0, nwant = 0;
	char key[HASHKEY_MAX];
	struct error e = { "" };
	int fd;

	(void)state;
	need_root();
	fd = open(prog, O_RDONLY | O_CLOEXEC);
	child_mode = CHILD_REAL;
	if (read_sites(prog, "tlbwalk", "size", 2000, &s, &n, key, &e) != 0)
		fail_msg("%s", e.msg);
	assert_true(n >= 1);
	assert_int_equal(usdt_find_fd(fd, prog, "tlbwalk", "size", &want, &nwant, &e), 0);
	assert_int_equal(n, nwant);
	for (size_t i = 0; i < n; i++) {
		assert_string_equal(s[i].path, prog);
		assert_int_equal(s[i].offset, want[i].offset);
		assert_int_equal(s[i].semaphore_offset, want[i].semaphore_offset);
		assert_string_equal(s[i].arg_spec, want[i].arg_spec);
		assert_int_equal(s[i].nargs, 3);
		assert_memory_equal(s[i].args, want[i].args, sizeof(s[i].args));
	}
	assert_true(!strncmp(key, "buildid:", 8) || !strncmp(key, "xxh3:", 5));
	free(s);
	free(want);
	close(fd);
	assert_no_child_left();
}

/* The parser's own refusals come back as one line: no such probe, a file
 * that is not ELF, one whose section headers are garbage. */
static void test_reader_errors(void **state)
{
	struct usdt_site *s = NULL;
	size_t n = 0;
	char key[HASHKEY_MAX];
	struct error e = { "" };
	unsigned char junk[4096];
	int fd;

	(void)state;
	need_root();
	child_mode = CHILD_REAL;
	assert_int_equal(read_sites(prog, "tlbwalk", "nosuch", 2000, &s, &n, key, &e), -1);
	assert_one_line(&e);
	assert_non_null(strstr(e.msg, "nosuch"));
	assert_null(s);

	memset(junk, 0xa5, sizeof(junk));
	fd = open(bad, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, junk, sizeof(junk)), sizeof(junk));
	close(fd);
	assert_int_equal(read_sites(bad, "tlbwalk", "size", 2000, &s, &n, key, &e), -1);
	assert_one_line(&e);

	/* tlbwalk's ELF header, then 0xa5 where its tables were */
	{
		int in = open(prog, O_RDONLY | O_CLOEXEC);
		unsigned char hdr[64];

		assert_int_equal(read(in, hdr, sizeof(hdr)), sizeof(hdr));
		close(in);
		fd = open(bad, O_WRONLY | O_CLOEXEC);
		assert_int_equal(write(fd, hdr, sizeof(hdr)), sizeof(hdr));
		close(fd);
	}
	assert_int_equal(read_sites(bad, "tlbwalk", "size", 2000, &s, &n, key, &e), -1);
	assert_one_line(&e);
	assert_no_child_left();
}

/* A reader that crashes costs the call one line, at once: whether it is
 * gone before strobed sends it the request or after. */
static void test_crash(void **state)
{
	(void)state;
	for (parent_waits = 0; parent_waits < 2; parent_waits++) {
		struct usdt_site *s = NULL;
		size_t n = 0;
		char key[HASHKEY_MAX];
		struct error e = { "" };
		uint64_t t0 = clock_monotonic_ns();

		child_mode = CHILD_CRASH;
		assert_int_equal(read_sites(prog, "tlbwalk", "size", 2000, &s, &n, key, &e), -1);
		child_mode = CHILD_REAL;
		assert_one_line(&e);
		assert_non_null(strstr(e.msg, "ended without an answer"));
		assert_true(clock_monotonic_ns() - t0 < 1000000000ULL);
		assert_null(s);
		assert_no_child_left();
	}
}

static int modes_reset(void **state)
{
	(void)state;
	parent_waits = 0;
	child_mode = CHILD_REAL;
	return 0;
}

/* A reader that hangs is killed at the deadline and reaped. */
static void test_hang(void **state)
{
	struct usdt_site *s = NULL;
	size_t n = 0;
	char key[HASHKEY_MAX];
	struct error e = { "" };
	uint64_t t0 = clock_monotonic_ns(), took;

	(void)state;
	child_mode = CHILD_HANG;
	assert_int_equal(read_sites(prog, "tlbwalk", "size", 300, &s, &n, key, &e), -1);
	child_mode = CHILD_REAL;
	took = clock_monotonic_ns() - t0;
	assert_one_line(&e);
	assert_non_null(strstr(e.msg, "took too long"));
	assert_true(took >= 250000000ULL && took < 1500000000ULL);
	assert_null(s);
	assert_no_child_left();
}

/* A forged answer through the socket: a site past the file's end. */
static void test_forged(void **state)
{
	struct usdt_site *s = NULL;
	size_t n = 0;
	char key[HASHKEY_MAX];
	struct error e = { "" };

	(void)state;
	child_mode = CHILD_FORGE;
	assert_int_equal(read_sites(prog, "tlbwalk", "size", 2000, &s, &n, key, &e), -1);
	child_mode = CHILD_REAL;
	assert_one_line(&e);
	assert_non_null(strstr(e.msg, "past the file's end"));
	assert_null(s);
	assert_int_equal(key[0], 0);
	assert_no_child_left();
}

/* marker_check_answer on one good site of tlbwalk, changed one way. */
static int check_one(void (*change)(struct usdt_site *, char *), char *msg, size_t len)
{
	struct usdt_site *s = NULL;
	size_t n = 0;
	char key[HASHKEY_MAX] = "buildid:0123abcd";
	struct error e = { "" };
	struct stat st;
	int fd = open(prog, O_RDONLY | O_CLOEXEC), r;

	assert_true(fd >= 0 && fstat(fd, &st) == 0);
	assert_int_equal(usdt_find_fd(fd, prog, "tlbwalk", "size", &s, &n, &e), 0);
	close(fd);
	/* what the reader would not know: strobed fills them in */
	snprintf(s[0].path, sizeof(s[0].path), "/elsewhere");
	memset(s[0].args, 0x5a, sizeof(s[0].args));
	if (change)
		change(&s[0], key);
	r = marker_check_answer(prog, "tlbwalk", "size", (uint64_t)st.st_size, s, 1, key, &e);
	if (r == 0) {
		struct usdt_arg want[USDT_MAX_ARGS];
		int nargs;

		assert_string_equal(s[0].path, prog);
		memset(want, 0, sizeof(want));
		assert_int_equal(usdt_parse_args(s[0].machine, s[0].arg_spec, want, USDT_MAX_ARGS,
						 &nargs, &e), 0);
		assert_memory_equal(s[0].args, want, sizeof(want));
	}
	snprintf(msg, len, "%s", e.msg);
	free(s);
	return r;
}

static void ch_provider(struct usdt_site *s, char *k)
{
	snprintf(s->provider, USDT_MAX_NAME, "libc");
}

static void ch_name_open(struct usdt_site *s, char *k)
{
	memset(s->name, 'a', USDT_MAX_NAME);
}

static void ch_offset(struct usdt_site *s, char *k)
{
	s->offset = 1ULL << 40;
}

static void ch_offset_neg(struct usdt_site *s, char *k)
{
	s->offset = UINT64_MAX;
}

static void ch_sem(struct usdt_site *s, char *k)
{
	s->semaphore = 1, s->semaphore_offset = 1ULL << 40;
}

static void ch_spec_open(struct usdt_site *s, char *k)
{
	memset(s->arg_spec, '1', USDT_MAX_ARGSPEC);
}

static void ch_spec_bad(struct usdt_site *s, char *k)
{
	snprintf(s->arg_spec, USDT_MAX_ARGSPEC, "8@sym(%%rip)");
}

static void ch_spec_ctl(struct usdt_site *s, char *k)
{
	snprintf(s->arg_spec, USDT_MAX_ARGSPEC, "8@%%rax\033[2J");
}

static void ch_nargs(struct usdt_site *s, char *k)
{
	s->nargs = USDT_MAX_ARGS + 5;
}

/* a binary of the other architecture than strobe's (of none on others) */
static void ch_machine(struct usdt_site *s, char *k)
{
	s->machine = s->machine == EM_AARCH64 ? EM_X86_64 : EM_AARCH64;
}

static void ch_key_form(struct usdt_site *s, char *k)
{
	snprintf(k, HASHKEY_MAX, "buildid:XYZ");
}

static void ch_key_kind(struct usdt_site *s, char *k)
{
	snprintf(k, HASHKEY_MAX, "/etc/shadow");
}

static void ch_key_open(struct usdt_site *s, char *k)
{
	memset(k, 'a', HASHKEY_MAX);
}

static void ch_key_none(struct usdt_site *s, char *k)
{
	k[0] = 0;
}

static void test_check_answer(void **state)
{
	static const struct {
		void (*change)(struct usdt_site *, char *);
		const char *says;	/* NULL: accepted */
	} cases[] = {
		{ NULL, NULL },
		{ ch_key_none, NULL },
		{ ch_provider, "another name" },
		{ ch_name_open, "another name" },
		{ ch_offset, "past the file's end" },
		{ ch_offset_neg, "past the file's end" },
		{ ch_sem, "past the file's end" },
		{ ch_spec_open, "without its end" },
		{ ch_spec_bad, "argument 1" },
		{ ch_spec_ctl, "argument 1" },
		{ ch_nargs, "arguments said" },
		{ ch_machine, "this strobe runs on" },
		{ ch_key_form, "key is malformed" },
		{ ch_key_kind, "key is malformed" },
		{ ch_key_open, "key is malformed" },
	};
	struct usdt_site one;
	char nokey[HASHKEY_MAX] = "";
	struct error e = { "" };
	char msg[sizeof(e.msg)];

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		int r = check_one(cases[i].change, msg, sizeof(msg));

		if (!cases[i].says) {
			if (r != 0)
				fail_msg("case %zu refused: %s", i, msg);
			continue;
		}
		if (r != -1 || !strstr(msg, cases[i].says))
			fail_msg("case %zu: %d '%s', not a refusal saying '%s'", i, r, msg,
				 cases[i].says);
		assert_null(strchr(msg, '\n'));
	}
	/* counts: none, and more than a probe may have */
	memset(&one, 0, sizeof(one));
	assert_int_equal(marker_check_answer(prog, "tlbwalk", "size", 1 << 20, &one, 0, nokey, &e), -1);
	assert_non_null(strstr(e.msg, "answered 0 sites"));
	assert_int_equal(marker_check_answer(prog, "tlbwalk", "size", 1 << 20, &one,
					     USDT_MAX_SITES + 1, nokey, &e), -1);
	assert_non_null(strstr(e.msg, "sites"));
}

static int find_fixture(void)
{
	const char *build = getenv("STROBE_BUILD");
	char self[PATH_MAX], top[PATH_MAX + 8], p[PATH_MAX + 40];
	ssize_t n;

	if (!build) {
		/* BUILD/tests/unit/test_markerparse */
		n = readlink("/proc/self/exe", self, sizeof(self) - 1);
		if (n < 0)
			return -1;
		self[n] = 0;
		snprintf(top, sizeof(top), "%s/../..", dirname(self));
		build = top;
	}
	snprintf(p, sizeof(p), "%s/tests/workloads/tlbwalk", build);
	return realpath(p, prog) ? 0 : -1;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_real),
		cmocka_unit_test(test_reader_errors),
		cmocka_unit_test_teardown(test_crash, modes_reset),
		cmocka_unit_test(test_hang),
		cmocka_unit_test(test_forged),
		cmocka_unit_test(test_check_answer),
	};
	int r, fd;

	if (find_fixture() < 0) {
		fprintf(stderr, "test_markerparse: tests/workloads/tlbwalk not found: build it "
			"(make) or set STROBE_BUILD\n");
		return 1;
	}
	snprintf(bad, sizeof(bad), "/tmp/test_markerparse.XXXXXX");
	fd = mkstemp(bad);
	if (fd < 0)
		return 1;
	fchmod(fd, 0644);
	close(fd);
	pthread_atfork(NULL, in_parent, in_child);
	r = cmocka_run_group_tests(tests, NULL, NULL);
	unlink(bad);
	return r;
}
