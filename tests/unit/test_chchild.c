/*
 * test_chchild.c - the fleet child (chchild.h) against a fake ClickHouse
 * on 127.0.0.1 (a thread of this test answering each request with canned
 * bytes): a normal answer comes through (to a host name too, resolved in
 * the child that may not start threads), an insert goes out and is counted
 * in the parent; an answer with a control byte, ESC or NUL is refused with
 * one line; a child SIGKILLed mid-request costs that request only, one
 * SIGSTOPped is killed at the deadline, and after CHCHILD_RESTARTS new
 * children the requests fail with one line; as root the child runs as
 * the workers' user (_strobe, else nobody) with no capability and
 * NoNewPrivs (/proc/PID/status).
 *
 * A child the server took over may send root anything: a pthread_atfork()
 * handler of this test (no hook in chchild.c) makes the forked child
 * answer the start-up and then forge the answer to the first request
 * (control bytes in a 200 answer, a frame over the limit, a wrong kind,
 * an unprintable error line, inconsistent status and error, a frame cut
 * short); each is refused by root in one line, the child killed and
 * reaped, and the next request served by a new child.
 */
#define _GNU_SOURCE 1	/* strcasestr */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <pthread.h>
#include <poll.h>
#include <pwd.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include "chchild.h"
#include "sandbox.h"
#include "chclient.h"

static struct peer {
	int lfd, port;
	pthread_t thread;
	volatile int quit;
	enum { ANSWER, KILL_CHILD } mode;
	const char *body;	/* the answer's bytes */
	size_t body_len;
	struct chchild *k;	/* KILL_CHILD: its child SIGKILLed when the request came */
	int requests;
	int gzip_seen;		/* a request had Content-Encoding: gzip */
} P;

static int write_all(int fd, const void *p, size_t n)
{
	while (n) {
		ssize_t w = send(fd, p, n, MSG_NOSIGNAL);

		if (w <= 0)
			return -1;
		p = (const char *)p + w;
		n -= (size_t)w;
	}
	return 0;
}

/* Each connection: read the request to its body's end, then answer it
 * (or kill the child that sent it) and close. */
static void *peer_run(void *arg)
{
	(void)arg;
	while (!P.quit) {
		static char req[1 << 20];
		char hdr[256];
		size_t got = 0;
		int fd = accept(P.lfd, NULL, NULL);

		if (fd < 0 || P.quit) {
			if (fd >= 0)
				close(fd);
			continue;
		}
		for (;;) {
			ssize_t r = read(fd, req + got, sizeof(req) - 1 - got);
			char *end, *cl;

			if (r <= 0)
				break;
			got += (size_t)r;
			req[got] = 0;
			end = strstr(req, "\r\n\r\n");
			cl = strcasestr(req, "Content-Length:");
			if (end && (!cl || got >= (size_t)(end + 4 - req) +
				    strtoul(cl + 15, NULL, 10)))
				break;
		}
		P.requests++;
		if (strcasestr(req, "Content-Encoding: gzip"))
			P.gzip_seen = 1;
		if (P.mode == KILL_CHILD) {
			kill(chchild_pid(P.k), SIGKILL);
			close(fd);
			continue;
		}
		snprintf(hdr, sizeof(hdr), "HTTP/1.1 200 OK\r\nContent-Length: %zu\r\n"
			 "Connection: close\r\n\r\n", P.body_len);
		if (write_all(fd, hdr, strlen(hdr)) == 0)
			write_all(fd, P.body, P.body_len);
		close(fd);
	}
	return NULL;
}

static int setup(void **state)
{
	struct sockaddr_in a = { .sin_family = AF_INET };
	socklen_t alen = sizeof(a);

	(void)state;
	memset(&P, 0, sizeof(P));
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	P.lfd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	assert_true(P.lfd >= 0);
	assert_int_equal(bind(P.lfd, (struct sockaddr *)&a, sizeof(a)), 0);
	assert_int_equal(listen(P.lfd, 8), 0);
	assert_int_equal(getsockname(P.lfd, (struct sockaddr *)&a, &alen), 0);
	P.port = ntohs(a.sin_port);
	P.body = "1\t2\n";
	P.body_len = 4;
	assert_int_equal(pthread_create(&P.thread, NULL, peer_run, NULL), 0);
	return 0;
}

static int teardown(void **state)
{
	struct sockaddr_in a = { .sin_family = AF_INET };
	int fd = socket(AF_INET, SOCK_STREAM, 0);

	(void)state;
	P.quit = 1;
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	a.sin_port = htons((uint16_t)P.port);
	connect(fd, (struct sockaddr *)&a, sizeof(a));	/* wakes accept() */
	close(fd);
	pthread_join(P.thread, NULL);
	close(P.lfd);
	return 0;
}

static void server(struct chclient_url *u, struct chclient_cred *cred, unsigned timeout_s)
{
	char url[128];
	struct error e = { "" };

	snprintf(url, sizeof(url), "http://127.0.0.1:%d/?database=strobe", P.port);
	assert_int_equal(chclient_url_parse(url, u, &e), 0);
	memset(cred, 0, sizeof(*cred));
	strcpy(cred->user, "default");
	cred->limits.timeout_s = timeout_s;
}

static struct chchild *child(unsigned timeout_s)
{
	struct chclient_url u;
	struct chclient_cred cred;
	struct error e = { "" };
	struct chchild *k;

	server(&u, &cred, timeout_s);
	k = chchild_new(&u, &cred, &e);
	if (!k)
		fail_msg("chchild_new: %s", e.msg);
	assert_true(chchild_pid(k) > 0);
	return k;
}

static void one_line(const struct error *e)
{
	assert_true(e->msg[0]);
	assert_null(strchr(e->msg, '\n'));
}

static void test_normal(void **state)
{
	struct chchild *k = child(0);
	struct sbuf out = { 0 };
	struct error e = { "" };

	(void)state;
	if (chchild_query(k, "SELECT 1, 2", &out, &e) < 0)
		fail_msg("%s", e.msg);
	assert_string_equal(out.s, "1\t2\n");
	assert_int_equal(P.requests, 1);
	free(out.s);
	chchild_free(k);
}

/* through chclient: the insert's bytes counted in the parent */
/* This machine's name when it resolves to 127.0.0.1 only (as in
 * /etc/hosts here); else "localhost", which libcurl resolves itself. */
static const char *local_name(void)
{
	static char name[256];
	struct addrinfo hints = { .ai_family = AF_INET, .ai_socktype = SOCK_STREAM };
	struct addrinfo *res = NULL;
	int ok = 0;

	if (gethostname(name, sizeof(name) - 1) == 0 && getaddrinfo(name, NULL, &hints, &res) == 0) {
		ok = 1;
		for (struct addrinfo *a = res; a; a = a->ai_next)
			if (((struct sockaddr_in *)a->ai_addr)->sin_addr.s_addr !=
			    htonl(INADDR_LOOPBACK))
				ok = 0;
		freeaddrinfo(res);
	}
	if (ok)
		return name;
	printf("# test_host_name: this machine's name is not 127.0.0.1: localhost instead "
	       "(which libcurl resolves without a thread: the test shows less)\n");
	return "localhost";
}

/* a host name, resolved in the child: its RLIMIT_NPROC 0 leaves libcurl
 * no resolver thread (chclient_pin_host) */
static void test_host_name(void **state)
{
	struct chclient_url u;
	struct chclient_cred cred;
	struct error e = { "" };
	struct sbuf out = { 0 };
	struct chchild *k;
	char url[400];

	(void)state;
	server(&u, &cred, 0);
	snprintf(url, sizeof(url), "http://%s:%d/?database=strobe", local_name(), P.port);
	assert_int_equal(chclient_url_parse(url, &u, &e), 0);
	k = chchild_new(&u, &cred, &e);
	if (!k)
		fail_msg("chchild_new: %s", e.msg);
	if (chchild_query(k, "SELECT 1, 2", &out, &e) < 0)
		fail_msg("%s", e.msg);
	assert_string_equal(out.s, "1\t2\n");
	free(out.s);
	chchild_free(k);
}

static void test_client_wiring(void **state)
{
	struct chclient_url u;
	struct chclient_cred cred;
	struct error e = { "" };
	struct sbuf out = { 0 };
	struct chclient *c;

	(void)state;
	server(&u, &cred, 0);
	c = chclient_new_child(&u, &cred, &e);
	if (!c)
		fail_msg("chclient_new_child: %s", e.msg);
	P.body = "";
	P.body_len = 0;
	if (chclient_insert(c, "INSERT INTO t (a) FORMAT TabSeparated", "x=1", "1\n2\n", 4,
			    &e) < 0)
		fail_msg("%s", e.msg);
	assert_true(P.gzip_seen);
	assert_true(chclient_bytes_sent(c) > 0);
	P.body = "42\n";
	P.body_len = 3;
	assert_int_equal(chclient_query(c, "SELECT 42", &out, &e), 0);
	assert_string_equal(out.s, "42\n");
	free(out.s);
	assert_int_equal(chclient_query_lines(c, "SELECT 1", NULL, NULL, &e), -1);
	one_line(&e);
	chclient_free(c);
}

static void test_control_bytes(void **state)
{
	static const struct { const char *b; size_t n; } bad[] = {
		{ "1\t2\x01\n", 5 }, { "12\x1b[31m\n", 8 }, { "1\0002\n", 4 }, { "\x7f", 1 },
		{ "caf\xc3\xa9\n", 6 }, { "1\r\n", 3 },
	};
	struct chchild *k = child(0);
	pid_t pid = chchild_pid(k);

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(*bad); i++) {
		struct sbuf out = { 0 };
		struct error e = { "" };

		P.body = bad[i].b;
		P.body_len = bad[i].n;
		assert_int_equal(chchild_query(k, "SELECT x", &out, &e), -1);
		one_line(&e);
		if (!strstr(e.msg, "not printable ASCII") || !strstr(e.msg, "refused"))
			fail_msg("case %zu: %s", i, e.msg);
		assert_true(!out.s || !out.n);
		free(out.s);
		/* a refusal is the child's own: it lives on */
		assert_int_equal(chchild_pid(k), pid);
	}
	chchild_free(k);
}

static void test_killed_mid_request(void **state)
{
	struct chchild *k = child(0);
	struct sbuf out = { 0 };
	struct error e = { "" };
	pid_t first = chchild_pid(k);

	(void)state;
	P.mode = KILL_CHILD;
	P.k = k;
	assert_int_equal(chchild_query(k, "SELECT 1", &out, &e), -1);
	one_line(&e);
	if (!strstr(e.msg, "died"))
		fail_msg("%s", e.msg);
	assert_int_equal(chchild_pid(k), 0);
	assert_int_equal(kill(first, 0), -1);	/* reaped */
	P.mode = ANSWER;
	if (chchild_query(k, "SELECT 1, 2", &out, &e) < 0)
		fail_msg("%s", e.msg);
	assert_string_equal(out.s, "1\t2\n");
	assert_true(chchild_pid(k) > 0 && chchild_pid(k) != first);
	assert_int_equal(chchild_started(k), 2);
	free(out.s);
	chchild_free(k);
}

static double now_s(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec + t.tv_nsec / 1e9;
}

static void test_stopped_killed_at_deadline(void **state)
{
	struct chchild *k = child(1);
	struct sbuf out = { 0 };
	struct error e = { "" };
	pid_t pid = chchild_pid(k);
	double t0, dt;

	(void)state;
	assert_int_equal(kill(pid, SIGSTOP), 0);
	t0 = now_s();
	assert_int_equal(chchild_query(k, "SELECT 1", &out, &e), -1);
	dt = now_s() - t0;
	one_line(&e);
	if (!strstr(e.msg, "did not answer within"))
		fail_msg("%s", e.msg);
	if (dt < 1 + CHCHILD_MARGIN_MS / 1000.0 - 0.2 || dt > 1 + CHCHILD_MARGIN_MS / 1000.0 + 3)
		fail_msg("killed after %.1f s", dt);
	assert_int_equal(kill(pid, 0), -1);
	if (chchild_query(k, "SELECT 1, 2", &out, &e) < 0)
		fail_msg("%s", e.msg);
	free(out.s);
	chchild_free(k);
}

static void test_restart_budget(void **state)
{
	struct chchild *k = child(0);
	struct sbuf out = { 0 };
	struct error e = { "" };

	(void)state;
	P.mode = KILL_CHILD;
	P.k = k;
	for (int i = 0; i <= CHCHILD_RESTARTS; i++) {
		assert_int_equal(chchild_query(k, "SELECT 1", &out, &e), -1);
		one_line(&e);
	}
	assert_int_equal(chchild_started(k), CHCHILD_RESTARTS + 1);
	P.mode = ANSWER;
	assert_int_equal(chchild_query(k, "SELECT 1", &out, &e), -1);
	one_line(&e);
	if (!strstr(e.msg, "no fleet child"))
		fail_msg("%s", e.msg);
	free(out.s);
	chchild_free(k);
}

/* the value of a "Name:\t..." line of /proc/pid/status */
static int status_line(pid_t pid, const char *name, char *val, size_t size)
{
	char path[64], line[256];
	size_t n = strlen(name);
	FILE *f;
	int found = 0;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	f = fopen(path, "r");
	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, name, n) && line[n] == ':') {
			snprintf(val, size, "%s", line + n + 1 + strspn(line + n + 1, " \t"));
			val[strcspn(val, "\n")] = 0;
			found = 1;
			break;
		}
	fclose(f);
	return found;
}

static void test_rights(void **state)
{
	struct chchild *k;
	struct sbuf out = { 0 };
	struct error e = { "" };
	struct passwd *pw;
	char v[128], want[128];
	pid_t pid;

	(void)state;
	if (geteuid() != 0) {
		printf("# SKIP test_rights: not root, the child keeps this user's ids\n");
		skip();
	}
	k = child(0);
	if (chchild_query(k, "SELECT 1, 2", &out, &e) < 0)
		fail_msg("%s", e.msg);
	free(out.s);
	pid = chchild_pid(k);
	/* the workers' user (sandbox_user): _strobe when it exists, else nobody */
	pw = getpwnam(SANDBOX_USER);
	if (!pw)
		pw = getpwnam("nobody");
	snprintf(want, sizeof(want), "%u\t%u\t%u\t%u", pw ? pw->pw_uid : 65534,
		 pw ? pw->pw_uid : 65534, pw ? pw->pw_uid : 65534, pw ? pw->pw_uid : 65534);
	assert_true(status_line(pid, "Uid", v, sizeof(v)));
	assert_string_equal(v, want);
	assert_true(status_line(pid, "Groups", v, sizeof(v)));
	assert_string_equal(v, "");
	assert_true(status_line(pid, "CapEff", v, sizeof(v)));
	assert_string_equal(v, "0000000000000000");
	assert_true(status_line(pid, "CapPrm", v, sizeof(v)));
	assert_string_equal(v, "0000000000000000");
	assert_true(status_line(pid, "CapBnd", v, sizeof(v)));
	assert_string_equal(v, "0000000000000000");
	assert_true(status_line(pid, "NoNewPrivs", v, sizeof(v)));
	assert_string_equal(v, "1");
	chchild_free(k);
}

/* chchild.c's frames, as a child would write them */
struct forged_frame {
	uint32_t kind, zero;
	uint64_t len;
};
struct forged_ans {
	int32_t status;
	uint32_t err_len;
};
#define F_ANSWER	4

static volatile int forge = -1;	/* the case the next forked child forges */

static int f_read(int fd, size_t len)
{
	char buf[4096];

	while (len) {
		ssize_t n = read(fd, buf, len < sizeof(buf) ? len : sizeof(buf));

		if (n <= 0)
			return -1;
		len -= (size_t)n;
	}
	return 0;
}

/* one frame in, its payload dropped */
static int f_skip(int fd)
{
	struct forged_frame f;

	return read(fd, &f, sizeof(f)) == (ssize_t)sizeof(f) ? f_read(fd, f.len) : -1;
}

static void f_send(int fd, uint32_t kind, uint64_t len, int32_t status, uint32_t err_len,
		   const char *bytes, size_t n)
{
	struct forged_frame f = { kind, 0, len };
	struct forged_ans a = { status, err_len };

	write_all(fd, &f, sizeof(f));
	write_all(fd, &a, sizeof(a));
	write_all(fd, bytes, n);
}

/* The forked child, before chchild_serve: its end of the socketpair is
 * the AF_UNIX socket the HELLO arrives on. */
static void in_child(void)
{
	int fd, sock = -1;

	if (forge < 0)
		return;
	/* gone by itself should a failed case leave it, and off the test's
	 * output (a pipe to whoever reads it) */
	alarm(20);
	fd = open("/dev/null", O_WRONLY);
	dup2(fd, 1);
	dup2(fd, 2);
	close(fd);
	for (fd = 3; fd < 64 && sock < 0; fd++) {
		struct pollfd p = { fd, POLLIN, 0 };
		struct stat st;
		int dom = 0;
		socklen_t len = sizeof(dom);

		if (fstat(fd, &st) < 0 || !S_ISSOCK(st.st_mode) ||
		    getsockopt(fd, SOL_SOCKET, SO_DOMAIN, &dom, &len) < 0 || dom != AF_UNIX)
			continue;
		if (poll(&p, 1, 2000) == 1)
			sock = fd;
	}
	if (sock < 0 || f_skip(sock) < 0)
		_exit(1);
	f_send(sock, F_ANSWER, sizeof(struct forged_ans), 0, 0, "", 0);	/* ready */
	if (f_skip(sock) < 0)
		_exit(1);
	switch (forge) {
	case 0:		/* a 200 answer with ESC and NUL */
		f_send(sock, F_ANSWER, 8 + 6, 0, 0, "1\x1b[m\0\n", 6);
		break;
	case 1:		/* over the answer limit and the error line */
		f_send(sock, F_ANSWER, 8 + CHCHILD_ERR_MAX + CHCLIENT_ANSWER_MAX + 1, 0, 0, "", 0);
		break;
	case 2:		/* not an answer */
		f_send(sock, F_ANSWER + 1, 8, 0, 0, "", 0);
		break;
	case 3:		/* an error line with ESC */
		f_send(sock, F_ANSWER, 8 + 4, -1, 4, "a\x1b[m", 4);
		break;
	case 4:		/* success with an error line */
		f_send(sock, F_ANSWER, 8 + 4, 0, 4, "oops", 4);
		break;
	case 5:		/* a status that is neither */
		f_send(sock, F_ANSWER, 8, 7, 0, "", 0);
		break;
	case 6:		/* cut short */
		f_send(sock, F_ANSWER, 8 + 100, 0, 0, "12", 2);
		_exit(0);
	}
	pause();
	_exit(0);
}

static void test_forged(void **state)
{
	static const char *const want[] = {
		"the fleet child sent an answer that is not printable text: killed",
		"the fleet child sent a frame larger than allowed: killed",
		"the fleet child sent a malformed frame: killed",
		"the fleet child sent an error line that is not printable: killed",
		"the fleet child sent a malformed answer: killed",
		"the fleet child sent a malformed answer: killed",
		"the fleet child died during the request",
	};
	struct chchild *k;

	(void)state;
	for (size_t i = 0; i < sizeof(want) / sizeof(*want); i++) {
		struct sbuf out = { 0 };
		struct error e = { "" };
		pid_t pid;

		forge = (int)i;
		k = child(0);
		pid = chchild_pid(k);
		assert_int_equal(chchild_query(k, "SELECT 1", &out, &e), -1);
		one_line(&e);
		if (strcmp(e.msg, want[i]))
			fail_msg("case %zu: %s", i, e.msg);
		assert_true(!out.s || !out.n);
		assert_int_equal(chchild_pid(k), 0);
		assert_int_equal(kill(pid, 0), -1);	/* killed and reaped */
		forge = -1;
		if (chchild_query(k, "SELECT 1, 2", &out, &e) < 0)
			fail_msg("case %zu, the next request: %s", i, e.msg);
		assert_string_equal(out.s, "1\t2\n");
		free(out.s);
		chchild_free(k);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_normal, setup, teardown),
		cmocka_unit_test_setup_teardown(test_host_name, setup, teardown),
		cmocka_unit_test_setup_teardown(test_client_wiring, setup, teardown),
		cmocka_unit_test_setup_teardown(test_control_bytes, setup, teardown),
		cmocka_unit_test_setup_teardown(test_killed_mid_request, setup, teardown),
		cmocka_unit_test_setup_teardown(test_stopped_killed_at_deadline, setup, teardown),
		cmocka_unit_test_setup_teardown(test_restart_budget, setup, teardown),
		cmocka_unit_test_setup_teardown(test_rights, setup, teardown),
		cmocka_unit_test_setup_teardown(test_forged, setup, teardown),
	};

	signal(SIGPIPE, SIG_IGN);
	pthread_atfork(NULL, NULL, in_child);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
