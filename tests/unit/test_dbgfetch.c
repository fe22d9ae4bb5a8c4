/*
 * test_dbgfetch.c - debuginfod: when it is enabled (DEBUGINFOD_URLS set
 * and not blank), the servers as shown in messages (no credentials, no
 * query strings, bounded), the one-line summary, the default timeout,
 * and dbgfetch_find against a file:// "server" the test lays out (a
 * verified file, a file with another build-id refused, one not there)
 * and a closed local port (one failure, then nothing more asked); a
 * server that trickles a large file fast enough for DEBUGINFOD_TIMEOUT is
 * ended by DEBUGINFOD_MAXTIME.
 */
#include "config.h"
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <pthread.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include "dbgfetch.h"
#include "hashkey.h"

static void test_enabled(void **state)
{
	(void)state;
	assert_false(dbgfetch_enabled(NULL));
	assert_false(dbgfetch_enabled(""));
	assert_false(dbgfetch_enabled(" \t\n "));
	assert_true(dbgfetch_enabled("http://h"));
	assert_true(dbgfetch_enabled("  https://a.b/  "));
	assert_null(dbgfetch_new(NULL));
	assert_null(dbgfetch_new("   "));
}

static void servers_is(const char *urls, const char *want)
{
	char *got = dbgfetch_servers(urls);

	assert_string_equal(got, want);
	free(got);
}

static void test_servers(void **state)
{
	char long_urls[1000], *got;
	size_t i;

	(void)state;
	servers_is("http://127.0.0.1:8002", "http://127.0.0.1:8002");
	servers_is("  https://a.example/ \t http://b:1/x  ", "https://a.example/ http://b:1/x");
	/* credentials and tokens never reach a report */
	servers_is("https://user:secret@h.example/path", "https://h.example/path");
	servers_is("https://h.example/p?token=secret#frag", "https://h.example/p");
	servers_is("https://u@h/a@b", "https://h/a@b");	/* '@' after the host is a path */
	servers_is("file:///srv/debug", "file:///srv/debug");
	servers_is("h:80", "h:80");
	servers_is("http://h/\x01\x7f\xc3\xa9", "http://h/????");
	servers_is("", "");
	/* bounded, cut with "..." */
	for (i = 0; i + 12 < sizeof(long_urls); i += 12)
		memcpy(long_urls + i, "http://abcd ", 12);
	long_urls[i] = 0;
	got = dbgfetch_servers(long_urls);
	assert_int_equal(strlen(got), DBGFETCH_SERVERS_MAX);
	assert_string_equal(got + DBGFETCH_SERVERS_MAX - 3, "...");
	assert_memory_equal(got, "http://abcd http://abcd", 23);
	free(got);
}

static void test_summary(void **state)
{
	struct dbgfetch_counts c = { 0 };
	char *s;

	(void)state;
	assert_null(dbgfetch_summary_text(&c, "http://h"));
	c.found = 3;
	assert_null(dbgfetch_summary_text(&c, "http://h"));	/* noted per binary */
	c.missing = 1;
	s = dbgfetch_summary_text(&c, "http://h");
	assert_string_equal(s, "debuginfod: 1 binary's debug file not found (server http://h)");
	free(s);
	c.missing = 2;
	c.failed = 1;
	c.fail_errno = ECONNREFUSED;
	c.skipped = 4;
	c.refused = 1;
	s = dbgfetch_summary_text(&c, "http://a http://b");
	assert_non_null(s);
	assert_non_null(strstr(s, "2 binaries' debug files not found"));
	assert_non_null(strstr(s, "1 could not be fetched ("));
	assert_non_null(strstr(s, strerror(ECONNREFUSED)));
	assert_non_null(strstr(s, "4 not asked after that failure"));
	assert_non_null(strstr(s, "1 fetched but refused"));
	assert_non_null(strstr(s, "(servers http://a http://b)"));
	assert_null(strchr(s, '\n'));
	free(s);
	c = (struct dbgfetch_counts){ .failed = 1, .fail_errno = ETIME };
	s = dbgfetch_summary_text(&c, "http://h");
	assert_non_null(strstr(s, "timed out: DEBUGINFOD_TIMEOUT"));
	free(s);
}

static void test_default_timeout(void **state)
{
	struct dbgfetch *f;

	(void)state;
	unsetenv("DEBUGINFOD_TIMEOUT");
	unsetenv("DEBUGINFOD_MAXSIZE");
	unsetenv("DEBUGINFOD_MAXTIME");
	f = dbgfetch_new("http://127.0.0.1:1");
	assert_non_null(f);
	assert_string_equal(getenv("DEBUGINFOD_TIMEOUT"), DBGFETCH_DEFAULT_TIMEOUT);
	assert_string_equal(getenv("DEBUGINFOD_MAXTIME"), DBGFETCH_DEFAULT_MAXTIME);
	assert_int_equal(atoll(getenv("DEBUGINFOD_MAXSIZE")), DEBUGINFO_FILE_MAX);
	dbgfetch_free(f);
	setenv("DEBUGINFOD_TIMEOUT", "17", 1);
	setenv("DEBUGINFOD_MAXSIZE", "1000", 1);
	f = dbgfetch_new("http://127.0.0.1:1");
	assert_string_equal(getenv("DEBUGINFOD_TIMEOUT"), "17");	/* the user's stay */
	assert_string_equal(getenv("DEBUGINFOD_MAXSIZE"), "1000");
	dbgfetch_free(f);
	unsetenv("DEBUGINFOD_MAXSIZE");
}

static void put_file(const char *path, const void *buf, size_t len)
{
	FILE *fp = fopen(path, "w");

	assert_non_null(fp);
	assert_int_equal(fwrite(buf, 1, len, fp), len);
	assert_int_equal(fclose(fp), 0);
}

static void copy_file(const char *from, const char *to)
{
	static char buf[1 << 16];
	FILE *in = fopen(from, "r"), *out = fopen(to, "w");
	size_t n;

	assert_non_null(in);
	assert_non_null(out);
	while ((n = fread(buf, 1, sizeof(buf), in)) > 0)
		assert_int_equal(fwrite(buf, 1, n, out), n);
	fclose(in);
	assert_int_equal(fclose(out), 0);
}

static void test_find(void **state)
{
	char dir[] = "/tmp/test_dbgfetch.XXXXXX", path[700], urls[1600], hex[129], cache[600];
	const char *other = "0123456789abcdef0123456789abcdef01234567";
	const char *absent = "fedcba9876543210fedcba9876543210fedcba98";
	const struct dbgfetch_counts *c;
	struct debuginfo_found out;
	struct error err = { "" };
	struct dbgfetch *f;
	uint8_t id[64];
	char *sum;
	int fd, n, i;

	(void)state;
	/* this test program's own build-id: the file to fetch */
	fd = open("/proc/self/exe", O_RDONLY);
	assert_true(fd >= 0);
	n = hashkey_build_id_fd(fd, id, sizeof(id), &err);
	close(fd);
	if (n <= 0)
		skip();
	for (i = 0; i < n; i++)
		snprintf(hex + 2 * i, 3, "%02x", id[i]);

	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/srv/buildid/%s", dir, hex);
	assert_int_equal(system((snprintf(urls, sizeof(urls), "mkdir -p '%s' '%s/srv/buildid/%s'",
					  path, dir, other), urls)), 0);
	strcat(path, "/debuginfo");
	copy_file("/proc/self/exe", path);
	snprintf(path, sizeof(path), "%s/srv/buildid/%s/debuginfo", dir, other);
	put_file(path, "garbage, not ELF\n", 17);
	snprintf(cache, sizeof(cache), "%s/cache", dir);
	setenv("DEBUGINFOD_CACHE_PATH", cache, 1);
	snprintf(urls, sizeof(urls), "file://%s/srv", dir);
	setenv("DEBUGINFOD_URLS", urls, 1);
	setenv("DEBUGINFOD_TIMEOUT", "5", 1);

	f = dbgfetch_new(urls);
	assert_non_null(f);
	c = dbgfetch_counts(f);
	/* the binary's own: verified, named after the cache */
	if (dbgfetch_find(f, hex, &out) != 1) {
		/* a libdebuginfod without file:// support: only the rest */
		print_message("file:// not served by this libdebuginfod: %d missing %d failed\n",
			      c->missing, c->failed);
		debuginfo_found_free(&out);
		dbgfetch_free(f);
		assert_int_equal(system((snprintf(path, sizeof(path), "rm -rf '%s'", dir), path)), 0);
		skip();
	}
	assert_true(out.fd >= 0);
	snprintf(path, sizeof(path), "debuginfod: %s/", cache);
	assert_memory_equal(out.path, path, strlen(path));
	assert_int_equal(c->found, 1);
	debuginfo_found_free(&out);
	/* asked again (another row with that build-id): from the cache */
	assert_int_equal(dbgfetch_find(f, hex, &out), 1);
	assert_int_equal(c->found, 2);
	debuginfo_found_free(&out);
	/* garbage under another build-id: refused, with why */
	assert_int_equal(dbgfetch_find(f, other, &out), 0);
	assert_int_equal(out.fd, -1);
	assert_non_null(out.refused);
	assert_non_null(strstr(out.refused, "refused: its build-id is not the binary's"));
	assert_int_equal(c->refused, 1);
	debuginfo_found_free(&out);
	/* not there: not found; asked again: nothing more counted */
	assert_int_equal(dbgfetch_find(f, absent, &out), 0);
	assert_int_equal(c->missing, 1);
	assert_int_equal(dbgfetch_find(f, absent, &out), 0);
	assert_int_equal(c->missing, 1);
	/* not a build-id: never asked */
	assert_int_equal(dbgfetch_find(f, "../../etc", &out), 0);
	assert_int_equal(dbgfetch_find(f, NULL, &out), 0);
	assert_int_equal(c->missing + c->failed + c->skipped, 1);
	sum = dbgfetch_summary(f);
	assert_non_null(strstr(sum, "1 binary's debug file not found"));
	assert_non_null(strstr(sum, "1 fetched but refused"));
	free(sum);
	dbgfetch_free(f);

	/* a closed port: one failure, then nothing more is asked (a new
	 * cache: the library remembers misses, and would not ask at all) */
	snprintf(cache, sizeof(cache), "%s/cache2", dir);
	setenv("DEBUGINFOD_CACHE_PATH", cache, 1);
	setenv("DEBUGINFOD_URLS", "http://127.0.0.1:1", 1);
	f = dbgfetch_new("http://127.0.0.1:1");
	c = dbgfetch_counts(f);
	assert_int_equal(dbgfetch_find(f, absent, &out), 0);
	assert_int_equal(c->failed, 1);
	assert_int_equal(dbgfetch_find(f, other, &out), 0);
	assert_int_equal(c->failed, 1);
	assert_int_equal(c->skipped, 1);
	sum = dbgfetch_summary(f);
	assert_non_null(strstr(sum, "1 could not be fetched"));
	assert_non_null(strstr(sum, "1 not asked after that failure"));
	assert_non_null(strstr(sum, "(server http://127.0.0.1:1)"));
	free(sum);
	dbgfetch_free(f);
	unsetenv("DEBUGINFOD_URLS");
	assert_int_equal(system((snprintf(path, sizeof(path), "rm -rf '%s'", dir), path)), 0);
}

/* A debuginfod server announcing 100 MB and sending 32 KB every 0.25 s
 * (fast enough for DEBUGINFOD_TIMEOUT's 100 KB per 5 s), to every request,
 * for 20 s at most. */
static int trickle_lfd;

static void *trickle_run(void *arg)
{
	static char chunk[32768];
	static const char hdr[] = "HTTP/1.1 200 OK\r\nContent-Length: 100000000\r\n"
				  "Connection: close\r\n\r\n";
	time_t end = time(NULL) + 20;
	int fd;

	(void)arg;
	memset(chunk, 0x7f, sizeof(chunk));
	while (time(NULL) < end && (fd = accept(trickle_lfd, NULL, NULL)) >= 0) {
		char req[4096];

		if (read(fd, req, sizeof(req)) > 0 &&
		    send(fd, hdr, sizeof(hdr) - 1, MSG_NOSIGNAL) > 0)
			while (time(NULL) < end &&
			       send(fd, chunk, sizeof(chunk), MSG_NOSIGNAL) == sizeof(chunk))
				usleep(250000);
		close(fd);
	}
	return NULL;
}

static void test_maxtime(void **state)
{
	struct sockaddr_in a = { .sin_family = AF_INET };
	socklen_t alen = sizeof(a);
	char dir[] = "/tmp/test_dbgfetch_mt.XXXXXX", url[64], path[600];
	struct debuginfo_found out;
	struct timespec t0, t1;
	struct dbgfetch *f;
	pthread_t th;
	double s;

	(void)state;
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	trickle_lfd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	assert_true(trickle_lfd >= 0);
	assert_int_equal(bind(trickle_lfd, (struct sockaddr *)&a, sizeof(a)), 0);
	assert_int_equal(listen(trickle_lfd, 8), 0);
	assert_int_equal(getsockname(trickle_lfd, (struct sockaddr *)&a, &alen), 0);
	assert_int_equal(pthread_create(&th, NULL, trickle_run, NULL), 0);
	assert_non_null(mkdtemp(dir));
	setenv("DEBUGINFOD_CACHE_PATH", dir, 1);
	snprintf(url, sizeof(url), "http://127.0.0.1:%d", ntohs(a.sin_port));
	setenv("DEBUGINFOD_URLS", url, 1);
	setenv("DEBUGINFOD_TIMEOUT", "5", 1);
	setenv("DEBUGINFOD_MAXTIME", "2", 1);
	f = dbgfetch_new(url);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	assert_int_equal(dbgfetch_find(f, "0123456789abcdef0123456789abcdef01234567", &out), 0);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	s = (double)(t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) / 1e9;
	print_message("%.2f s, %u failed\n", s, dbgfetch_counts(f)->failed);
	assert_int_equal(dbgfetch_counts(f)->failed, 1);
	assert_true(s < 10);
	dbgfetch_free(f);
	shutdown(trickle_lfd, SHUT_RDWR);
	close(trickle_lfd);
	pthread_join(th, NULL);
	unsetenv("DEBUGINFOD_URLS");
	unsetenv("DEBUGINFOD_MAXTIME");
	assert_int_equal(system((snprintf(path, sizeof(path), "rm -rf '%s'", dir), path)), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_enabled),
		cmocka_unit_test(test_servers),
		cmocka_unit_test(test_summary),
		cmocka_unit_test(test_default_timeout),
		cmocka_unit_test(test_find),
		cmocka_unit_test(test_maxtime),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
